/* Keyboard and mouse: GLFW's callbacks, the key bindings, and the orbit camera they move. The
 * callbacks only find the viewer (the window's user pointer) and call the handlers below, which
 * scripted runs call directly with their own events. */
#include <math.h>
#include <string.h>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include "viewer.h"

#define ORBIT_DEGREES_PER_PIXEL 0.3f
#define ZOOM_PER_WHEEL_STEP     0.9f
#define TIME_SCALE_MIN          (1.0 / 64.0)
#define TIME_SCALE_MAX          8.0

pbd_render_camera view_camera(const viewer* v) { return pbd_render_camera_from_orbit(&v->orbit); }

void view_frame_scene(viewer* v) { v->orbit = v->home; }

static void toggle(viewer* v, bool* flag, const char* name) {
	*flag = !*flag;
	view_message(v, "%s %s", name, *flag ? "on" : "off");
}

/* Keys that repeat while held: the ones that step a number. */
static bool repeats(int key) {
	switch (key) {
	case GLFW_KEY_UP:
	case GLFW_KEY_DOWN:
	case GLFW_KEY_LEFT_BRACKET:
	case GLFW_KEY_RIGHT_BRACKET:
	case GLFW_KEY_COMMA:
	case GLFW_KEY_PERIOD:
	case GLFW_KEY_N:
	case GLFW_KEY_RIGHT:
		return true;
	default:
		return false;
	}
}

static void set_time_scale(viewer* v, double scale) {
	if (scale < TIME_SCALE_MIN) scale = TIME_SCALE_MIN;
	if (scale > TIME_SCALE_MAX) scale = TIME_SCALE_MAX;
	v->time_scale = scale;
	v->accumulator = 0;
	view_message(v, "time scale x%g", scale);
}

void view_input_key(viewer* v, int key, int action, int mods) {
	if (action == GLFW_RELEASE || (action == GLFW_REPEAT && !repeats(key))) return;
	if (view_controls_key(v, key, mods)) return;
	switch (key) {
	case GLFW_KEY_ESCAPE:
	case GLFW_KEY_Q:
		v->quit = true;
		break;
	case GLFW_KEY_SPACE:
		v->paused = !v->paused;
		v->accumulator = 0; /* the time spent paused is not owed to the simulation */
		break;
	case GLFW_KEY_N:
	case GLFW_KEY_RIGHT:
		v->paused = true;
		v->step_requests++;
		break;
	case GLFW_KEY_R:
		v->reload_requested = true;
		break;
	case GLFW_KEY_S:
		v->slow_motion = !v->slow_motion;
		v->accumulator = 0;
		view_message(v, "slow motion %s", v->slow_motion ? "on (x1/8)" : "off");
		break;
	case GLFW_KEY_EQUAL:
	case GLFW_KEY_KP_ADD:
		set_time_scale(v, v->time_scale * 2.0);
		break;
	case GLFW_KEY_MINUS:
	case GLFW_KEY_KP_SUBTRACT:
		set_time_scale(v, v->time_scale * 0.5);
		break;
	case GLFW_KEY_P:
		toggle(v, &v->style.show_particles, "particles");
		break;
	case GLFW_KEY_C:
		toggle(v, &v->style.show_constraints, "constraints (by strain)");
		break;
	case GLFW_KEY_K:
		toggle(v, &v->style.show_contacts, "contacts");
		break;
	case GLFW_KEY_J:
		toggle(v, &v->style.show_joints, "joints");
		break;
	case GLFW_KEY_I:
		toggle(v, &v->style.show_pinned, "pinned particles");
		break;
	case GLFW_KEY_O:
		toggle(v, &v->style.show_colliders, "colliders");
		break;
	case GLFW_KEY_F:
		view_frame_scene(v);
		break;
	case GLFW_KEY_H:
	case GLFW_KEY_SLASH: /* '?' on a US layout */
		v->show_help = !v->show_help;
		if (v->show_help) v->hide_panel = false;
		break;
	case GLFW_KEY_TAB:
		v->hide_panel = !v->hide_panel;
		break;
	case GLFW_KEY_T:
		toggle(v, &v->show_profile, "profile");
		pbd_world_set_profile(v->sc.world, v->show_profile);
		memset(&v->profile_window, 0, sizeof v->profile_window);
		memset(&v->profile_shown, 0, sizeof v->profile_shown);
		break;
	default:
		break;
	}
}

void view_input_button(viewer* v, int button, int action, int mods) {
	if (action == GLFW_PRESS) {
		if (v->camera_mode != VIEW_CAMERA_NONE || v->grab.active) return; /* a second button joins in: ignore */
		const bool shift = (mods & GLFW_MOD_SHIFT) != 0;
		if (button == GLFW_MOUSE_BUTTON_LEFT && !shift) {
			if (view_grab_begin(v, v->cursor_x, v->cursor_y)) return;
			v->camera_mode = VIEW_CAMERA_ORBIT; /* empty space under the cursor */
		} else if (button == GLFW_MOUSE_BUTTON_LEFT || button == GLFW_MOUSE_BUTTON_RIGHT ||
		           button == GLFW_MOUSE_BUTTON_MIDDLE) {
			v->camera_mode = VIEW_CAMERA_PAN;
		}
		v->camera_last_x = v->cursor_x;
		v->camera_last_y = v->cursor_y;
	} else if (action == GLFW_RELEASE) {
		if (button == GLFW_MOUSE_BUTTON_LEFT && v->grab.active) view_grab_end(v);
		v->camera_mode = VIEW_CAMERA_NONE;
	}
}

/* Moves the orbit's target in the image plane so that the scene follows the cursor. */
static void pan(viewer* v, double dx, double dy) {
	const pbd_render_camera c = view_camera(v);
	float f[3], s[3], u[3];
	for (int k = 0; k < 3; ++k) f[k] = c.target[k] - c.eye[k];
	const float fl = sqrtf(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
	for (int k = 0; k < 3; ++k) f[k] /= fl;
	s[0] = f[1] * c.up[2] - f[2] * c.up[1];
	s[1] = f[2] * c.up[0] - f[0] * c.up[2];
	s[2] = f[0] * c.up[1] - f[1] * c.up[0];
	const float sl = sqrtf(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
	for (int k = 0; k < 3; ++k) s[k] /= sl;
	u[0] = s[1] * f[2] - s[2] * f[1];
	u[1] = s[2] * f[0] - s[0] * f[2];
	u[2] = s[0] * f[1] - s[1] * f[0];
	/* World units per window pixel at the target's depth. */
	const float per_pixel = 2.0f * v->orbit.distance * tanf(v->orbit.fov_y * 0.5f * 0.017453292f) /
	                        (float)(v->window_h > 0 ? v->window_h : 1);
	for (int k = 0; k < 3; ++k) v->orbit.target[k] += per_pixel * ((float)-dx * s[k] + (float)dy * u[k]);
}

void view_input_cursor(viewer* v, double x, double y) {
	const double dx = x - v->camera_last_x, dy = y - v->camera_last_y;
	v->cursor_x = x;
	v->cursor_y = y;
	if (v->grab.active) {
		view_grab_move(v, x, y);
		return;
	}
	if (v->camera_mode == VIEW_CAMERA_ORBIT) {
		v->orbit.yaw -= (float)dx * ORBIT_DEGREES_PER_PIXEL;
		v->orbit.pitch += (float)dy * ORBIT_DEGREES_PER_PIXEL;
		if (v->orbit.pitch > 89.0f) v->orbit.pitch = 89.0f;
		if (v->orbit.pitch < -89.0f) v->orbit.pitch = -89.0f;
		v->orbit.yaw = fmodf(v->orbit.yaw, 360.0f);
	} else if (v->camera_mode == VIEW_CAMERA_PAN) {
		pan(v, dx, dy);
	}
	v->camera_last_x = x;
	v->camera_last_y = y;
}

void view_input_scroll(viewer* v, double dy) {
	float d = v->orbit.distance * powf(ZOOM_PER_WHEEL_STEP, (float)dy);
	if (d < 1e-3f) d = 1e-3f;
	if (d > 1e6f) d = 1e6f;
	v->orbit.distance = d;
}

/* ---- GLFW callbacks: real input, ignored in scripted runs (a stray pointer under Xvfb must not
 * change a test's result) ---- */

static viewer* viewer_of(GLFWwindow* window) { return glfwGetWindowUserPointer(window); }

static void on_key(GLFWwindow* window, int key, int scancode, int action, int mods) {
	(void)scancode;
	viewer* v = viewer_of(window);
	if (!v->scripted) view_input_key(v, key, action, mods);
}

static void on_button(GLFWwindow* window, int button, int action, int mods) {
	viewer* v = viewer_of(window);
	if (!v->scripted) view_input_button(v, button, action, mods);
}

static void on_cursor(GLFWwindow* window, double x, double y) {
	viewer* v = viewer_of(window);
	if (!v->scripted) view_input_cursor(v, x, y);
}

static void on_scroll(GLFWwindow* window, double dx, double dy) {
	(void)dx;
	viewer* v = viewer_of(window);
	if (!v->scripted) view_input_scroll(v, dy);
}

void view_input_install(viewer* v) {
	glfwSetWindowUserPointer(v->window, v);
	glfwSetKeyCallback(v->window, on_key);
	glfwSetMouseButtonCallback(v->window, on_button);
	glfwSetCursorPosCallback(v->window, on_cursor);
	glfwSetScrollCallback(v->window, on_scroll);
}
