/* `pbd run --render` with pbd_render: an offscreen GL context, the renderer, and PNG files or
 * an ffmpeg process. Drawing and encoding are timed apart from each other and from the
 * simulation, which the caller times around pbd_world_step alone. */
#define _POSIX_C_SOURCE 200809L
#include "cli_render.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_clock.h"
#include "output.h"
#include "pbd/render.h"
#include "scene_render.h"

#define RENDER_SAMPLES 4 /* multisampling: smooth cloth edges and thin lines */

struct cli_render {
	cli_render_options o;
	char dir[4096]; /* CLI_RENDER_FRAMES */
	scene_view view;
	pbd_render_offscreen* off;
	pbd_renderer* renderer;
	pbd_render_video* video;
	uint8_t* rgb;
	int stride; /* every stride-th frame is rendered */
	cli_render_report report;
};

/* The option a message names: the caller's, or `pbd run`'s. */
static const char* option_name(const cli_render_options* o) { return o->option ? o->option : "--render"; }

/* frame_<digits>.png: the only names a rendering run deletes in its folder. */
static bool is_png_frame(const char* name) {
	if (strncmp(name, "frame_", 6) != 0) return false;
	const char* p = name + 6;
	const char* digits = p;
	while (*p >= '0' && *p <= '9') ++p;
	return p != digits && strcmp(p, ".png") == 0;
}

static bool clear_png_frames(const char* dir, pbd_scene_error* err) {
	DIR* d = opendir(dir);
	if (!d) {
		pbd_scene_error_set(err, "%s: cannot read folder: %s", dir, strerror(errno));
		return false;
	}
	bool ok = true;
	for (struct dirent* e; ok && (e = readdir(d)) != NULL;) {
		if (!is_png_frame(e->d_name)) continue;
		char path[4400];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		struct stat st;
		if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && unlink(path) != 0) {
			pbd_scene_error_set(err, "%s: cannot delete: %s", path, strerror(errno));
			ok = false;
		}
	}
	closedir(d);
	return ok;
}

/* Rendering every k-th frame for a frame rate below the simulation's, so the video still
 * plays in real time: k = round(1 / (dt * fps)), at least 1. */
static int stride_for(double dt, double fps) {
	if (!(fps > 0) || !(dt > 0)) return 1;
	const double k = floor(1.0 / (dt * fps) + 0.5);
	return k < 1 ? 1 : (k > 1e6 ? 1000000 : (int)k);
}

void cli_render_abort(cli_render* r) {
	if (!r) return;
	if (r->video) {
		pbd_error ignored;
		pbd_render_video_close(r->video, &ignored);
	}
	pbd_renderer_destroy(r->renderer); /* before the context goes */
	pbd_render_offscreen_destroy(r->off);
	scene_view_free(&r->view);
	free(r->rgb);
	free(r);
}

bool cli_render_open(const cli_render_options* o, const pbd_scene* s, cli_render** out, pbd_scene_error* err) {
	*out = NULL;
	const double t0 = cli_now_seconds();
	cli_render* r = calloc(1, sizeof *r);
	if (!r) {
		pbd_scene_error_set(err, "%s: out of memory", option_name(o));
		return false;
	}
	r->o = *o;
	if (!scene_view_make(s, o->width, o->height, &r->view, err)) {
		free(r);
		return false;
	}
	if (o->has_overlays) scene_view_set_overlays(&r->view.style, o->overlays);
	const int w = r->view.width, h = r->view.height;
	r->report.width = w;
	r->report.height = h;

	const double dt = (double)pbd_world_get_def(s->world).dt;
	double fps = o->fps;
	if (o->kind == CLI_RENDER_MP4 || o->kind == CLI_RENDER_GIF) {
		/* Real time, at most 60 frames a second for MP4 and 50 for GIF (whose delays are in
		 * hundredths of a second, and which browsers slow down below 2 of them). */
		const double cap = o->kind == CLI_RENDER_GIF ? 50.0 : 60.0;
		if (!(fps > 0)) fps = 1.0 / dt < cap ? 1.0 / dt : cap;
	}
	r->stride = o->kind == CLI_RENDER_STILL ? 1 : stride_for(dt, fps);
	r->report.fps = 1.0 / (dt * r->stride);

	pbd_error e;
	bool ok = (r->rgb = malloc((size_t)w * (size_t)h * 3)) != NULL;
	if (!ok) pbd_scene_error_set(err, "%s: out of memory for a %dx%d image", option_name(o), w, h);
	if (ok && o->kind == CLI_RENDER_FRAMES) {
		snprintf(r->dir, sizeof r->dir, "%s", o->path);
		for (size_t n = strlen(r->dir); n > 1 && r->dir[n - 1] == '/'; --n) r->dir[n - 1] = '\0';
		ok = out_make_dir(r->dir, err) && clear_png_frames(r->dir, err);
	}
	if (ok && !pbd_render_offscreen_create(w, h, RENDER_SAMPLES, &r->off, &e)) {
		pbd_scene_error_set(err, "%s: no OpenGL context: %s", option_name(o), e.message);
		ok = false;
	}
	if (ok) snprintf(r->report.device, sizeof r->report.device, "%s", pbd_render_offscreen_device(r->off));
	if (ok && !pbd_renderer_create(&r->renderer, &e)) {
		pbd_scene_error_set(err, "%s: %s", option_name(o), e.message);
		ok = false;
	}
	/* A first read of the initial state, whatever frame is drawn first: the automatic ball and
	 * tube sizes and the plane quads follow the state the renderer first sees. */
	if (ok && !pbd_renderer_update(r->renderer, &r->view.draw)) {
		pbd_scene_error_set(err, "%s: %s", option_name(o), pbd_renderer_last_error(r->renderer));
		ok = false;
	}
	if (ok && (o->kind == CLI_RENDER_MP4 || o->kind == CLI_RENDER_GIF)) {
		const pbd_render_video_format f = o->kind == CLI_RENDER_GIF ? PBD_RENDER_VIDEO_GIF : PBD_RENDER_VIDEO_MP4;
		if (!pbd_render_video_open(o->path, f, w, h, r->report.fps, &r->video, &e)) {
			pbd_scene_error_set(err, "%s: %s", option_name(o), e.message);
			ok = false;
		} else {
			snprintf(r->report.codec, sizeof r->report.codec, "%s", pbd_render_video_codec(r->video));
		}
	}
	if (!ok) {
		cli_render_abort(r);
		return false;
	}
	r->report.setup = cli_now_seconds() - t0;
	*out = r;
	return true;
}

bool cli_render_available(void) { return true; }

bool cli_render_frame(cli_render* r, int frame, int frames, pbd_scene_error* err) {
	if (r->o.kind == CLI_RENDER_STILL ? frame != frames : frame % r->stride != 0) return true;
	const double t0 = cli_now_seconds();
	pbd_error e;
	pbd_render_offscreen_bind(r->off);
	if (!pbd_renderer_update(r->renderer, &r->view.draw) ||
	    !pbd_renderer_draw(r->renderer, &r->view.camera, &r->view.style, r->view.width, r->view.height)) {
		pbd_scene_error_set(err, "%s: frame %d: %s", option_name(&r->o), frame, pbd_renderer_last_error(r->renderer));
		return false;
	}
	if (!pbd_render_offscreen_read(r->off, r->rgb, &e)) {
		pbd_scene_error_set(err, "%s: frame %d: %s", option_name(&r->o), frame, e.message);
		return false;
	}
	const double t1 = cli_now_seconds();
	r->report.render += t1 - t0;
	bool ok;
	if (r->video) {
		ok = pbd_render_video_write(r->video, r->rgb, &e);
	} else {
		char path[4400];
		if (r->o.kind == CLI_RENDER_FRAMES)
			snprintf(path, sizeof path, "%s/frame_%05d.png", r->dir, frame);
		else
			snprintf(path, sizeof path, "%s", r->o.path);
		ok = pbd_render_write_png(path, r->view.width, r->view.height, r->rgb, &e);
	}
	if (!ok) {
		pbd_scene_error_set(err, "%s: %s", option_name(&r->o), e.message);
		return false;
	}
	r->report.encode += cli_now_seconds() - t1;
	r->report.frames++;
	return true;
}

bool cli_render_close(cli_render* r, cli_render_report* report, pbd_scene_error* err) {
	if (!r) return true;
	bool ok = true;
	if (r->video) {
		const double t0 = cli_now_seconds();
		pbd_error e;
		ok = pbd_render_video_close(r->video, &e);
		r->video = NULL;
		r->report.encode += cli_now_seconds() - t0;
		if (!ok) pbd_scene_error_set(err, "%s: %s", option_name(&r->o), e.message);
	}
	if (report) *report = r->report;
	cli_render_abort(r);
	return ok;
}
