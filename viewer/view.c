/* `pbd view`: opens a GLFW window with an OpenGL 3.3 core context, loads the scene, and runs it
 * at its own dt with a fixed-step accumulator while pbd_render draws it and the panel reports.
 *
 * The simulation never depends on the drawing: steps happen at the scene's dt whatever the frame
 * rate (at most VIEW_STEPS_PER_DRAW per drawn frame; past that the viewer drops time, so a slow
 * frame makes the motion slower, never a spiral of ever more steps), and the renderer only reads
 * the world. Scripted runs (--frames) take one step per drawn frame without waiting for vsync or
 * the clock, so a test gets the same steps as `pbd run` on any machine. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <epoxy/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include "view.h"
#include "viewer.h"

#define MESSAGE_SECONDS 3.0
#define MESSAGE_FRAMES  90

static double now_seconds(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void view_message(viewer* v, const char* fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->message, sizeof v->message, fmt, ap);
	va_end(ap);
	if (v->scripted) {
		v->message_until = (double)v->frames_total + MESSAGE_FRAMES;
		if (!v->opt.quiet) printf("view: %s\n", v->message);
	} else {
		v->message_until = glfwGetTime() + MESSAGE_SECONDS;
	}
}

static void expire_message(viewer* v) {
	const double now = v->scripted ? (double)v->frames_total : glfwGetTime();
	if (v->message[0] && now >= v->message_until) v->message[0] = '\0';
}

/* The library's run-time reports (a particle restored after going non-finite, a refused
 * setting): on stderr, and in the panel. */
static void on_library_log(const char* message, void* user) {
	viewer* v = user;
	if (!v->opt.quiet) fprintf(stderr, "pbd: library: %s\n", message);
	if (v->window) view_message(v, "library: %s", message);
}

/* As `pbd run`: an existing file, else a built-in scene, else whatever looks like a path is
 * opened to get the system's message. */
static bool load(const char* arg, const pbd_scene_options* so, pbd_scene* s, pbd_scene_error* err) {
	struct stat st;
	if (stat(arg, &st) == 0 && !S_ISDIR(st.st_mode)) return pbd_scene_load_file(arg, so, s, err);
	if (pbd_scene_builtin_find(arg)) return pbd_scene_load_builtin(arg, so, s, err);
	const size_t n = strlen(arg);
	if (strchr(arg, '/') || (n >= 5 && strcmp(arg + n - 5, ".json") == 0) || stat(arg, &st) == 0)
		return pbd_scene_load_file(arg, so, s, err);
	pbd_scene_error_set(err, "%s: neither a scene file nor a built-in scene (see 'pbd list')", arg);
	return false;
}

bool view_load_scene(viewer* v, pbd_scene_error* err) {
	const char* arg = v->opt.scene_arg ? v->opt.scene_arg : VIEW_DEFAULT_SCENE;
	const pbd_scene_options so = {.log = on_library_log, .log_user = v};
	pbd_scene fresh = {0};
	if (!load(arg, &so, &fresh, err)) return false;
	/* Camera, colors and what to draw as `pbd run --render` has them; the size is the window's
	 * once there is one. */
	const bool first = v->sc.world == NULL;
	scene_view sv;
	if (!scene_view_make(&fresh, first ? v->opt.width : v->window_w, first ? v->opt.height : v->window_h, &sv, err)) {
		pbd_scene_free(&fresh);
		return false;
	}

	/* The old world goes, with whatever was grabbed in it. */
	v->grab.active = false;
	v->camera_mode = VIEW_CAMERA_NONE;
	scene_view_free(&v->sv);
	pbd_scene_free(&v->sc);
	v->sc = fresh;
	v->sv = sv; /* its draw list points into the world and arrays just moved here, not into `fresh` */
	v->home = pbd_render_orbit_from_camera(&sv.camera);
	if (first) {
		v->style = sv.style;
		v->orbit = v->home;
	} else {
		/* A reload keeps the camera and the overlays as the user left them, and takes the rest of
		 * the style (colors) from the file as it is now. */
		const pbd_render_style old = v->style;
		v->style = sv.style;
		v->style.show_particles = old.show_particles;
		v->style.show_constraints = old.show_constraints;
		v->style.show_contacts = old.show_contacts;
		v->style.show_joints = old.show_joints;
		v->style.show_pinned = old.show_pinned;
		v->style.show_colliders = old.show_colliders;
	}
	v->accumulator = 0;
	v->needs_update = true;
	/* A new world starts with the flag off; the panel keeps what it shows. */
	if (v->show_profile) pbd_world_set_profile(v->sc.world, true);
	memset(&v->profile_window, 0, sizeof v->profile_window);
	if (!view_controls_init(v)) {
		pbd_scene_error_set(err, "%s: out of memory", arg);
		return false;
	}
	return true;
}

void view_step(viewer* v) {
	view_grab_before_step(v);
	const double t0 = now_seconds();
	const pbd_status st = pbd_scene_step(&v->sc);
	const double t = now_seconds() - t0;
	if (st != PBD_OK) view_message(v, "step: %s", pbd_world_last_error(v->sc.world));
	v->step_seconds_total += t;
	v->steps_total++;
	v->steps_in_frame++;
	/* Smoothed over about 30 steps: steady enough to read, quick to follow a change. */
	v->step_ms = v->steps_total == 1 ? 1e3 * t : v->step_ms + (1e3 * t - v->step_ms) / 30.0;
	v->needs_update = true;
	if (v->show_profile) {
		pbd_stats stats;
		pbd_world_get_stats(v->sc.world, &stats);
		profile_sum_add(&v->profile_window, &stats.profile);
		/* Windows of 30 steps, as the step time is smoothed over. */
		if (v->profile_window.steps >= 30) {
			v->profile_shown = v->profile_window;
			memset(&v->profile_window, 0, sizeof v->profile_window);
		}
	}
}

static void reload(viewer* v) {
	v->reload_requested = false;
	pbd_scene_error err;
	if (!view_load_scene(v, &err)) {
		/* The world stays as it was (a scene file being edited may be half-written). */
		fprintf(stderr, "pbd: %s\n", err.message);
		view_message(v, "reload failed: %s", err.message);
		return;
	}
	view_message(v, "reloaded %s", v->sc.name);
}

static void draw(viewer* v) {
	glfwGetFramebufferSize(v->window, &v->fb_w, &v->fb_h);
	glfwGetWindowSize(v->window, &v->window_w, &v->window_h);
	if (v->fb_w < 1 || v->fb_h < 1) return; /* minimised */
	expire_message(v);
	const double t0 = now_seconds();
	if (v->needs_update) {
		if (!pbd_renderer_update(v->renderer, &v->sv.draw))
			view_message(v, "render: %s", pbd_renderer_last_error(v->renderer));
		v->needs_update = false;
	}
	glBindFramebuffer(GL_FRAMEBUFFER, 0);
	glViewport(0, 0, v->fb_w, v->fb_h);
	const pbd_render_camera cam = view_camera(v);
	if (!pbd_renderer_draw(v->renderer, &cam, &v->style, v->fb_w, v->fb_h))
		view_message(v, "render: %s", pbd_renderer_last_error(v->renderer));
	view_hud_draw(v->hud, v);
	/* Scripted runs wait for the GPU, so the drawing time they report is the real cost (there is
	 * no vsync wait in it); live ones leave that to the swap. */
	if (v->scripted) glFinish();
	v->draw_seconds_total += now_seconds() - t0;
	v->frames_total++;
}

/* The steps owed to the simulation for `elapsed` real seconds. */
static int steps_due(viewer* v, double elapsed) {
	if (v->paused) {
		const int n = v->step_requests;
		v->step_requests = 0;
		return n;
	}
	const double dt = (double)pbd_world_get_def(v->sc.world).dt;
	const double speed = v->time_scale / (v->slow_motion ? VIEW_SLOW_FACTOR : 1.0);
	/* A stall (a dragged window, a breakpoint) is not caught up on. */
	v->accumulator += fmin(elapsed, 0.25) * speed;
	double n = floor(v->accumulator / dt);
	v->behind = n > VIEW_STEPS_PER_DRAW;
	if (v->behind) {
		v->accumulator = 0;
		return VIEW_STEPS_PER_DRAW;
	}
	v->accumulator -= n * dt;
	return (int)n;
}

static void run_live(viewer* v) {
	double last = glfwGetTime();
	while (!v->quit && !glfwWindowShouldClose(v->window)) {
		glfwPollEvents();
		if (v->reload_requested) reload(v);
		const double now = glfwGetTime();
		const double elapsed = now - last;
		last = now;
		v->frame_ms = v->frames_total == 0 ? 1e3 * elapsed : v->frame_ms + (1e3 * elapsed - v->frame_ms) / 20.0;
		const int n = steps_due(v, elapsed);
		v->steps_in_frame = 0;
		for (int i = 0; i < n; ++i) view_step(v);
		draw(v);
		glfwSwapBuffers(v->window);
	}
}

static void run_scripted(viewer* v) {
	const long frames = v->opt.frames;
	double last = glfwGetTime();
	for (long f = 1; !v->quit; ++f) {
		/* Keeps the window system's connection serviced; the callbacks ignore real input. */
		glfwPollEvents();
		view_script_apply(v, f);
		if (v->reload_requested) reload(v);
		v->steps_in_frame = 0;
		if (f <= frames && !v->quit) {
			if (!v->paused)
				view_step(v);
			else if (v->step_requests > 0) {
				v->step_requests--;
				view_step(v);
			}
		}
		const bool done = f >= frames;
		/* Events after the last step (a release at N + 1) come before the last frame is drawn. */
		if (done && f == frames && !v->quit) view_script_apply(v, frames + 1);
		const double now = glfwGetTime();
		v->frame_ms = 1e3 * (now - last);
		last = now;
		draw(v);
		glfwSwapBuffers(v->window);
		if (done) break;
	}
}

static bool screenshot(viewer* v, const char* path) {
	/* Drawn again and read before any swap: the back buffer is the one with defined contents. */
	draw(v);
	const size_t size = (size_t)v->fb_w * (size_t)v->fb_h * 3;
	uint8_t* rgb = malloc(size ? size : 1);
	pbd_error err = {{0}};
	bool ok = rgb != NULL;
	if (!ok) snprintf(err.message, sizeof err.message, "out of memory");
	if (ok) {
		glReadBuffer(GL_BACK);
		ok = pbd_render_read_pixels(v->fb_w, v->fb_h, rgb, &err) &&
		     pbd_render_write_png(path, v->fb_w, v->fb_h, rgb, &err);
	}
	free(rgb);
	if (!ok)
		fprintf(stderr, "pbd: %s: %s\n", path, err.message);
	else if (!v->opt.quiet)
		printf("wrote %s (%dx%d)\n", path, v->fb_w, v->fb_h);
	return ok;
}

static void summary(const viewer* v) {
	pbd_stats st;
	pbd_world_get_stats(v->sc.world, &st);
	printf("%s: %llu frames drawn, %llu steps, %.3g s simulated\n", v->sc.name, (unsigned long long)v->frames_total,
	       (unsigned long long)v->steps_total, st.time);
	const double ms_step = v->steps_total ? 1e3 * v->step_seconds_total / (double)v->steps_total : 0;
	const double ms_frame = v->frames_total ? 1e3 * v->draw_seconds_total / (double)v->frames_total : 0;
	printf("  simulation %.3f s (%.4f ms/step), drawing %.3f s (%.3f ms/frame, %s)\n", v->step_seconds_total, ms_step,
	       v->draw_seconds_total, ms_frame, (const char*)glGetString(GL_RENDERER));
	printf("  final max strain %.4f, mean strain %.4f, contacts %u\n", st.max_strain, st.mean_strain, st.contacts);
	const pbd_world_def def = pbd_world_get_def(v->sc.world);
	printf("  settings at the end: %s, %s, %d iteration%s, %d substep%s, stiffness x%g\n", view_solver_name(def.solver),
	       view_formulation_name(def.formulation), def.iterations, def.iterations == 1 ? "" : "s", def.substeps,
	       def.substeps == 1 ? "" : "s", ldexp(1.0, v->controls.stiffness_level));
}

/* GLFW's last error, for messages. */
static const char* glfw_error(void) {
	const char* description = NULL;
	glfwGetError(&description);
	return description ? description : "unknown error";
}

static bool open_window(viewer* v) {
	if (!glfwInit()) {
		fprintf(stderr, "pbd: view: cannot open a window: %s\n", glfw_error());
		return false;
	}
	glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
	glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
	glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
	glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
	glfwWindowHint(GLFW_SAMPLES, 4);
	glfwWindowHint(GLFW_VISIBLE, v->opt.hidden ? GLFW_FALSE : GLFW_TRUE);
	/* Scripted runs draw at exactly the size asked for (the screenshot's). */
	glfwWindowHint(GLFW_RESIZABLE, v->scripted ? GLFW_FALSE : GLFW_TRUE);
	char title[128];
	snprintf(title, sizeof title, "pbd view: %s", v->sc.name);
	v->window = glfwCreateWindow(v->sv.width, v->sv.height, title, NULL, NULL);
	if (!v->window) {
		fprintf(stderr, "pbd: view: cannot open a window: no OpenGL 3.3 core context: %s\n", glfw_error());
		glfwTerminate();
		return false;
	}
	glfwMakeContextCurrent(v->window);
	view_keep_gl_driver(); /* loaded by now, with the context */
	/* Live: one frame per display refresh. Scripted: as fast as it goes. */
	glfwSwapInterval(v->scripted ? 0 : 1);
	view_input_install(v);
	glfwGetFramebufferSize(v->window, &v->fb_w, &v->fb_h);
	glfwGetWindowSize(v->window, &v->window_w, &v->window_h);
	return true;
}

static void close_window(viewer* v) {
	if (!v->window) return;
	view_hud_destroy(v->hud);
	pbd_renderer_destroy(v->renderer); /* while its context is current */
	v->hud = NULL;
	v->renderer = NULL;
	glfwDestroyWindow(v->window);
	v->window = NULL;
	glfwTerminate();
}

static int run(viewer* v) {
	pbd_scene_error serr;
	/* The scene first: a bad scene is reported at once, and without needing a display. */
	if (!view_load_scene(v, &serr)) {
		fprintf(stderr, "pbd: %s\n", serr.message);
		return VIEW_FAILED;
	}
	char why[256];
	if (!view_script_check(v, why, sizeof why)) {
		fprintf(stderr, "pbd: %s\n", why);
		return VIEW_USAGE;
	}
	if (!open_window(v)) return VIEW_FAILED;
	pbd_error err = {{0}};
	if (!pbd_renderer_create(&v->renderer, &err) || !view_hud_create(&v->hud, &err)) {
		fprintf(stderr, "pbd: view: %s\n", err.message);
		close_window(v);
		return VIEW_FAILED;
	}
	if (v->scripted)
		run_scripted(v);
	else
		run_live(v);

	int rc = v->failed ? VIEW_FAILED : VIEW_OK;
	if (v->opt.screenshot && !v->failed && !screenshot(v, v->opt.screenshot)) rc = VIEW_FAILED;
	if (!v->opt.quiet) {
		summary(v);
		const pbd_vec3* x = pbd_world_positions(v->sc.world);
		for (int k = 0; k < v->opt.tracked_count; ++k) {
			const uint32_t i = v->opt.tracked[k];
			printf("particle %u: %.4f %.4f %.4f\n", i, (double)x[i].x, (double)x[i].y, (double)x[i].z);
		}
	}
	close_window(v);
	return rc;
}

int pbd_view_main(int argc, char** argv) {
	viewer* v = calloc(1, sizeof *v);
	if (!v) {
		fprintf(stderr, "pbd: out of memory\n");
		return VIEW_FAILED;
	}
	bool help = false;
	int rc = view_parse_options(argc, argv, &v->opt, &help);
	if (rc == VIEW_OK && !help) {
		v->scripted = v->opt.frames >= 0;
		v->paused = v->opt.paused;
		v->time_scale = 1.0;
		rc = run(v);
	}
	if (fflush(stdout) != 0 && rc == VIEW_OK) rc = VIEW_FAILED;
	view_controls_free(&v->controls);
	scene_view_free(&v->sv);
	pbd_scene_free(&v->sc);
	free(v);
	return rc;
}
