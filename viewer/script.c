/* Scripted input for test runs (--drag, --drag-body, --mouse, --key): replayed through the same
 * handlers as the window's callbacks, so a scripted drag picks, pins (or pulls), moves and lets go
 * of the particle or body exactly as a mouse drag does. */
#include <stdio.h>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include "viewer.h"

bool view_script_check(const viewer* v, char* why, size_t why_size) {
	const uint32_t n = pbd_world_particle_count(v->sc.world);
	for (int k = 0; k < v->opt.drag_count; ++k) {
		const view_drag_script* d = &v->opt.drags[k];
		if (d->body) {
			if (d->index >= v->sc.body_count) {
				snprintf(why, why_size, "--drag-body: body %u does not exist (%s has %u)", d->index, v->sc.name,
				         v->sc.body_count);
				return false;
			}
			pbd_body_state st;
			if (pbd_body_get_state(v->sc.world, v->sc.bodies[d->index].id, &st) != PBD_OK ||
			    st.type != PBD_BODY_DYNAMIC) {
				snprintf(why, why_size, "--drag-body: body %u (%s) is not dynamic: only a dynamic body can be grabbed",
				         d->index, v->sc.bodies[d->index].name);
				return false;
			}
			continue;
		}
		if (d->index >= n) {
			snprintf(why, why_size, "--drag: particle %u does not exist (%s has %u)", v->opt.drags[k].index, v->sc.name,
			         n);
			return false;
		}
	}
	for (int k = 0; k < v->opt.tracked_count; ++k) {
		if (v->opt.tracked[k] >= n) {
			snprintf(why, why_size, "--track: particle %u does not exist (%s has %u)", v->opt.tracked[k], v->sc.name,
			         n);
			return false;
		}
	}
	return true;
}

static void script_fail(viewer* v, const char* what) {
	fprintf(stderr, "pbd: %s\n", what);
	v->failed = true;
	v->quit = true;
}

/* Where world point p is drawn, in window coordinates. */
static bool window_point(const viewer* v, const float p[3], double* x, double* y) {
	const pbd_render_camera cam = view_camera(v);
	float px = 0, py = 0;
	if (!pbd_render_camera_project(&cam, v->window_w, v->window_h, p, &px, &py)) return false;
	*x = (double)px;
	*y = (double)py;
	return true;
}

static const char* kind_name(bool body) { return body ? "body" : "particle"; }

/* Whether the grab is the one drag d made. */
static bool holds(const viewer* v, const view_drag_script* d) {
	return v->grab.active && v->grab.index == d->index && (v->grab.kind == VIEW_GRAB_BODY) == d->body;
}

static void drag_press(viewer* v, const view_drag_script* d) {
	float p[3];
	if (d->body) {
		pbd_body_state st;
		if (pbd_body_get_state(v->sc.world, v->sc.bodies[d->index].id, &st) != PBD_OK) {
			script_fail(v, "--drag-body: the body is gone");
			return;
		}
		p[0] = (float)st.center.x;
		p[1] = (float)st.center.y;
		p[2] = (float)st.center.z;
	} else {
		const pbd_vec3 x = pbd_world_positions(v->sc.world)[d->index];
		p[0] = (float)x.x;
		p[1] = (float)x.y;
		p[2] = (float)x.z;
	}
	const char* kind = kind_name(d->body);
	double px = 0, py = 0;
	char why[200];
	if (!window_point(v, p, &px, &py) || px < 0 || py < 0 || px >= v->window_w || py >= v->window_h) {
		snprintf(why, sizeof why, "--drag: %s %u is not in view at frame %ld", kind, d->index, d->from);
		script_fail(v, why);
		return;
	}
	view_input_cursor(v, px, py);
	view_input_button(v, GLFW_MOUSE_BUTTON_LEFT, GLFW_PRESS, 0);
	/* The press went through the picking code: it must have found this particle or body. */
	if (!holds(v, d)) {
		if (v->grab.active)
			snprintf(why, sizeof why, "--drag: the press at (%.1f, %.1f) grabbed %s %u, not %s %u", px, py,
			         kind_name(v->grab.kind == VIEW_GRAB_BODY), v->grab.index, kind, d->index);
		else
			snprintf(why, sizeof why, "--drag: the press at (%.1f, %.1f) grabbed nothing (%s %u is hidden?)", px, py,
			         kind, d->index);
		script_fail(v, why);
		return;
	}
	if (!v->opt.quiet)
		printf("drag: %s %u grabbed at window point (%.1f, %.1f) before step %ld\n", kind, d->index, px, py, d->from);
}

static void drag_move(viewer* v, const view_drag_script* d, long frame) {
	if (!holds(v, d)) return;
	double tx = 0, ty = 0;
	if (!window_point(v, d->point, &tx, &ty)) {
		script_fail(v, "--drag: the target point is behind the camera");
		return;
	}
	const double t = (double)(frame - d->from + 1) / (double)(d->to - d->from + 1);
	view_input_cursor(v, v->grab.press_x + t * (tx - v->grab.press_x), v->grab.press_y + t * (ty - v->grab.press_y));
}

static void drag_release(viewer* v, const view_drag_script* d) {
	if (!holds(v, d)) return;
	/* A particle's position as the library has it (a double build prints its digits). */
	double x[3] = {0, 0, 0};
	if (d->body) {
		float f[3] = {0, 0, 0};
		view_grab_point(v, f);
		for (int k = 0; k < 3; ++k) x[k] = (double)f[k];
	} else {
		const pbd_vec3 p = pbd_world_positions(v->sc.world)[d->index];
		x[0] = (double)p.x;
		x[1] = (double)p.y;
		x[2] = (double)p.z;
	}
	const pbd_vec3 t = v->grab.target;
	if (!v->opt.quiet)
		printf("drag: %s %u let go after step %ld at %.4f %.4f %.4f (drag target %.4f %.4f %.4f)\n", kind_name(d->body),
		       d->index, d->to, x[0], x[1], x[2], (double)t.x, (double)t.y, (double)t.z);
	view_input_button(v, GLFW_MOUSE_BUTTON_LEFT, GLFW_RELEASE, 0);
}

void view_script_apply(viewer* v, long frame) {
	/* Drags that ended let go first, so a drag may start in the frame after another ends. */
	for (int k = 0; k < v->opt.drag_count && !v->quit; ++k)
		if (frame == v->opt.drags[k].to + 1) drag_release(v, &v->opt.drags[k]);
	for (int k = 0; k < v->opt.event_count && !v->quit; ++k) {
		const view_event* e = &v->opt.events[k];
		if (e->frame != frame) continue;
		switch (e->type) {
		case VIEW_EVENT_PRESS:
		case VIEW_EVENT_RELEASE:
			view_input_cursor(v, e->x, e->y);
			view_input_button(v, GLFW_MOUSE_BUTTON_LEFT, e->type == VIEW_EVENT_PRESS ? GLFW_PRESS : GLFW_RELEASE, 0);
			break;
		case VIEW_EVENT_MOVE:
			view_input_cursor(v, e->x, e->y);
			break;
		case VIEW_EVENT_KEY:
			view_input_key(v, e->key, GLFW_PRESS, e->mods);
			view_input_key(v, e->key, GLFW_RELEASE, e->mods);
			break;
		}
	}
	for (int k = 0; k < v->opt.drag_count && !v->quit; ++k) {
		const view_drag_script* d = &v->opt.drags[k];
		if (frame == d->from) drag_press(v, d);
		if (frame >= d->from && frame <= d->to && !v->quit) drag_move(v, d, frame);
	}
}
