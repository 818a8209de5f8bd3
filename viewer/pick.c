/* Grabbing a particle with the mouse, as the browser demos of PBD cloth do: the press picks the
 * particle under the cursor and pins it; while the button is held, every step moves it to the
 * point under the cursor on a plane through the grabbed point facing the camera; the release
 * unpins it (it gets its mass back and keeps the velocity of the motion, so it can be thrown).
 * A particle the scene pinned can be moved the same way and stays pinned where it is let go. */
#include <float.h>
#include <math.h>

#include "viewer.h"

static float dot3(const float a[3], const float b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void vec_of(pbd_vec3 v, float out[3]) {
	out[0] = (float)v.x;
	out[1] = (float)v.y;
	out[2] = (float)v.z;
}

/* Möller-Trumbore: the ray parameter of the hit with triangle (a, b, c), either side; false on
 * a miss or a hit behind the origin. */
static bool ray_triangle(const float o[3], const float d[3], const float a[3], const float b[3], const float c[3],
                         float* t_out) {
	float e1[3], e2[3], s[3], p[3], q[3];
	for (int k = 0; k < 3; ++k) {
		e1[k] = b[k] - a[k];
		e2[k] = c[k] - a[k];
		s[k] = o[k] - a[k];
	}
	p[0] = d[1] * e2[2] - d[2] * e2[1];
	p[1] = d[2] * e2[0] - d[0] * e2[2];
	p[2] = d[0] * e2[1] - d[1] * e2[0];
	const float det = dot3(e1, p);
	if (fabsf(det) < 1e-12f) return false;
	const float inv = 1.0f / det;
	const float u = dot3(s, p) * inv;
	if (u < 0.0f || u > 1.0f) return false;
	q[0] = s[1] * e1[2] - s[2] * e1[1];
	q[1] = s[2] * e1[0] - s[0] * e1[2];
	q[2] = s[0] * e1[1] - s[1] * e1[0];
	const float w = dot3(d, q) * inv;
	if (w < 0.0f || u + w > 1.0f) return false;
	const float t = dot3(e2, q) * inv;
	if (!(t > 0.0f)) return false;
	*t_out = t;
	return true;
}

static float dist2(const float a[3], const float b[3]) {
	const float x = a[0] - b[0], y = a[1] - b[1], z = a[2] - b[2];
	return x * x + y * y + z * z;
}

bool view_pick(const viewer* v, double x, double y, uint32_t* index) {
	const pbd_world* w = v->sc.world;
	const uint32_t n = pbd_world_particle_count(w);
	if (n == 0 || v->window_w < 1 || v->window_h < 1) return false;
	const pbd_vec3* pos = pbd_world_positions(w);
	const pbd_render_camera cam = view_camera(v);
	float o[3], d[3];
	pbd_render_camera_ray(&cam, v->window_w, v->window_h, (float)x, (float)y, o, d);

	/* The front-most surface under the cursor: particles further than one of its edges behind it
	 * are on a layer the user cannot see there (the far side of a fold, of a sphere's drape). */
	const uint32_t tn = pbd_world_triangle_count(w);
	const uint32_t* tri = pbd_world_triangles(w);
	float hit_t = FLT_MAX, depth_limit = FLT_MAX;
	uint32_t hit_tri = 0;
	for (uint32_t t = 0; t < tn; ++t) {
		float a[3], b[3], c[3], th = 0;
		vec_of(pos[tri[3 * t]], a);
		vec_of(pos[tri[3 * t + 1]], b);
		vec_of(pos[tri[3 * t + 2]], c);
		if (ray_triangle(o, d, a, b, c, &th) && th < hit_t) {
			hit_t = th;
			hit_tri = t;
			const float longest = fmaxf(dist2(a, b), fmaxf(dist2(b, c), dist2(c, a)));
			depth_limit = th + sqrtf(longest);
		}
	}

	/* The particle drawn nearest the cursor within the radius, in front of that limit; among
	 * equally near ones (a stack seen edge-on) the front-most. */
	const float r2 = VIEW_PICK_RADIUS * VIEW_PICK_RADIUS;
	float best_d2 = FLT_MAX, best_depth = FLT_MAX;
	bool found = false;
	for (uint32_t i = 0; i < n; ++i) {
		float p[3], px = 0, py = 0;
		vec_of(pos[i], p);
		if (!pbd_render_camera_project(&cam, v->window_w, v->window_h, p, &px, &py)) continue;
		const float dx = px - (float)x, dy = py - (float)y;
		const float d2 = dx * dx + dy * dy;
		if (!(d2 <= r2)) continue;
		const float rel[3] = {p[0] - o[0], p[1] - o[1], p[2] - o[2]};
		const float depth = dot3(rel, d);
		if (depth > depth_limit) continue;
		const bool nearer = d2 < best_d2 - 1.0f;
		const bool as_near = d2 <= best_d2 + 1.0f;
		if (!found || nearer || (as_near && depth < best_depth)) {
			best_d2 = d2;
			best_depth = depth;
			*index = i;
			found = true;
		}
	}
	if (found) return true;

	/* Zoomed in on a large triangle: no vertex near the cursor, but the cloth is under it. */
	if (hit_t < FLT_MAX) {
		const float h[3] = {o[0] + hit_t * d[0], o[1] + hit_t * d[1], o[2] + hit_t * d[2]};
		float best = FLT_MAX;
		for (int k = 0; k < 3; ++k) {
			float p[3];
			const uint32_t i = tri[3 * hit_tri + (uint32_t)k];
			vec_of(pos[i], p);
			const float dd = dist2(p, h);
			if (dd < best) {
				best = dd;
				*index = i;
			}
		}
		return true;
	}
	return false;
}

/* Where the ray through window point (x, y) meets the drag plane. */
static bool plane_point_under(const viewer* v, double x, double y, float out[3]) {
	const pbd_render_camera cam = view_camera(v);
	float o[3], d[3];
	pbd_render_camera_ray(&cam, v->window_w, v->window_h, (float)x, (float)y, o, d);
	const float denom = dot3(d, v->grab.plane_normal);
	if (fabsf(denom) < 1e-6f) return false; /* ray along the plane: keep the last target */
	const float rel[3] = {v->grab.plane_point[0] - o[0], v->grab.plane_point[1] - o[1], v->grab.plane_point[2] - o[2]};
	const float t = dot3(rel, v->grab.plane_normal) / denom;
	if (!(t > 0.0f)) return false;
	for (int k = 0; k < 3; ++k) out[k] = o[k] + t * d[k];
	return true;
}

bool view_grab_begin(viewer* v, double x, double y) {
	uint32_t i = 0;
	if (!view_pick(v, x, y, &i)) return false;
	pbd_world* w = v->sc.world;
	view_grab* g = &v->grab;
	g->was_pinned = pbd_particle_is_pinned(w, i);
	if (!g->was_pinned && pbd_particle_pin(w, i) != PBD_OK) {
		view_message(v, "cannot grab particle %u: %s", i, pbd_world_last_error(w));
		return false;
	}
	const pbd_vec3 p = pbd_world_positions(w)[i];
	const pbd_render_camera cam = view_camera(v);
	float n[3] = {cam.target[0] - cam.eye[0], cam.target[1] - cam.eye[1], cam.target[2] - cam.eye[2]};
	const float len = sqrtf(dot3(n, n));
	for (int k = 0; k < 3; ++k) n[k] = len > 0 ? n[k] / len : (k == 2 ? 1.0f : 0.0f);
	g->active = true;
	g->index = i;
	vec_of(p, g->plane_point);
	for (int k = 0; k < 3; ++k) g->plane_normal[k] = n[k];
	/* The particle keeps its offset from the cursor, so it does not jump by the pick radius. */
	float under[3];
	if (plane_point_under(v, x, y, under))
		for (int k = 0; k < 3; ++k) g->offset[k] = g->plane_point[k] - under[k];
	else
		g->offset[0] = g->offset[1] = g->offset[2] = 0.0f;
	g->target = p;
	g->press_x = x;
	g->press_y = y;
	v->needs_update = true; /* the pinned marker */
	return true;
}

void view_grab_move(viewer* v, double x, double y) {
	if (!v->grab.active) return;
	float under[3];
	if (!plane_point_under(v, x, y, under)) return;
	v->grab.target = (pbd_vec3){(pbd_real)(under[0] + v->grab.offset[0]), (pbd_real)(under[1] + v->grab.offset[1]),
	                            (pbd_real)(under[2] + v->grab.offset[2])};
}

void view_grab_before_step(viewer* v) {
	if (!v->grab.active) return;
	/* Set again every step: a target is consumed by the step that reaches it. */
	if (pbd_particle_set_target(v->sc.world, v->grab.index, v->grab.target) != PBD_OK)
		view_message(v, "drag: %s", pbd_world_last_error(v->sc.world));
}

void view_grab_end(viewer* v) {
	if (!v->grab.active) return;
	if (!v->grab.was_pinned && pbd_particle_unpin(v->sc.world, v->grab.index) != PBD_OK)
		view_message(v, "cannot let go of particle %u: %s", v->grab.index, pbd_world_last_error(v->sc.world));
	v->grab.active = false;
	v->needs_update = true;
}
