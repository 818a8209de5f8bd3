/* Grabbing a particle with the mouse, as the browser demos of PBD cloth do: the press picks the
 * particle under the cursor and pins it; while the button is held, every step moves it to the
 * point under the cursor on a plane through the grabbed point facing the camera; the release
 * unpins it (it gets its mass back and keeps the velocity of the motion, so it can be thrown).
 * A particle the scene pinned can be moved the same way and stays pinned where it is let go.
 *
 * A dynamic body is grabbed at the point of its shape under the cursor, which stays fixed in the
 * body. A body cannot be pinned: every step pulls that point towards the target by a critically
 * damped spring, a force applied at the point (pbd_body_apply_force), so the body also turns
 * about it. The spring is scaled by the body's mass, so that every body follows the cursor the
 * same way (VIEW_BODY_GRAB_HZ, at most VIEW_BODY_GRAB_MAX_PHASE radians per step); it does not
 * hold the body's weight, which hangs it g / omega^2 below the cursor (12 cm at 60 steps a second).
 * The spring lets the body trail the cursor, slower than it while the cursor speeds up, so on
 * release the body is thrown: the point held gets the drag's velocity (the target's, averaged
 * over the last VIEW_THROW_SECONDS), as a particle let go keeps the velocity of its motion. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "pbd/math.h"
#include "viewer.h"

#define TWO_PI 6.283185307179586

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

/* The particle picked (see view_pick) with its depth along the ray (o, d). */
static bool pick_particle(const viewer* v, double x, double y, const float o[3], const float d[3], uint32_t* index,
                          float* depth_out) {
	const pbd_world* w = v->sc.world;
	const uint32_t n = pbd_world_particle_count(w);
	if (n == 0) return false;
	const pbd_vec3* pos = pbd_world_positions(w);
	const pbd_render_camera cam = view_camera(v);

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
	if (found) {
		*depth_out = best_depth;
		return true;
	}

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
		*depth_out = hit_t;
		return true;
	}
	return false;
}

/* ---- bodies ---- */

static double dot3d(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* Where the ray o + t d (d unit) enters the ball (c, r); false on a miss, behind the origin, or
 * with the origin inside. */
static bool ray_ball(const double o[3], const double d[3], const double c[3], double r, double* t) {
	const double oc[3] = {o[0] - c[0], o[1] - c[1], o[2] - c[2]};
	const double b = dot3d(oc, d), cc = dot3d(oc, oc) - r * r;
	const double disc = b * b - cc;
	if (cc <= 0 || disc < 0) return false;
	*t = -b - sqrt(disc);
	return *t > 0;
}

/* The box [-h, h] by slabs. */
static bool ray_box(const double o[3], const double d[3], const double h[3], double* t) {
	double lo = -DBL_MAX, hi = DBL_MAX;
	for (int k = 0; k < 3; ++k) {
		if (fabs(d[k]) < 1e-12) { /* parallel to the slab: no division that could overflow */
			if (o[k] < -h[k] || o[k] > h[k]) return false;
			continue;
		}
		double t1 = (-h[k] - o[k]) / d[k], t2 = (h[k] - o[k]) / d[k];
		if (t1 > t2) {
			const double s = t1;
			t1 = t2;
			t2 = s;
		}
		lo = fmax(lo, t1);
		hi = fmin(hi, t2);
	}
	if (hi < lo || !(lo > 0)) return false;
	*t = lo;
	return true;
}

/* The capsule around the segment (0, -hh, 0)-(0, hh, 0): its side, else its end balls. */
static bool ray_capsule(const double o[3], const double d[3], double hh, double r, double* t) {
	const double y = fmax(-hh, fmin(hh, o[1]));
	const double off[3] = {o[0], o[1] - y, o[2]};
	if (dot3d(off, off) <= r * r) return false; /* the eye is inside */
	bool hit = false;
	const double a = d[0] * d[0] + d[2] * d[2];
	if (a > 1e-24) {
		const double b = o[0] * d[0] + o[2] * d[2], c = o[0] * o[0] + o[2] * o[2] - r * r;
		const double disc = b * b - a * c;
		if (disc >= 0) {
			const double ts = (-b - sqrt(disc)) / a;
			if (ts > 0 && fabs(o[1] + ts * d[1]) <= hh) {
				*t = ts;
				hit = true;
			}
		}
	}
	for (int end = -1; end <= 1; end += 2) {
		const double c[3] = {0, end * hh, 0};
		double tb = 0;
		if (ray_ball(o, d, c, r, &tb) && (!hit || tb < *t)) {
			*t = tb;
			hit = true;
		}
	}
	return hit;
}

/* The nearest of the shape's own triangles (convex hulls, meshes, height fields), read from the
 * library in the shape's frame: a press is rare enough to read them each time. */
static bool ray_triangles(const pbd_world* w, pbd_collider_id id, const double o[3], const double d[3], double* t) {
	uint32_t nv = 0, nt = 0;
	if (pbd_collider_get_triangles(w, id, NULL, 0, NULL, 0, &nv, &nt) != PBD_OK || nv == 0 || nt == 0) return false;
	pbd_vec3* vert = malloc((size_t)nv * sizeof *vert);
	uint32_t* tri = malloc(3 * (size_t)nt * sizeof *tri);
	uint32_t nv2 = 0, nt2 = 0;
	bool hit = false;
	if (vert && tri && pbd_collider_get_triangles(w, id, vert, nv, tri, nt, &nv2, &nt2) == PBD_OK && nv2 == nv &&
	    nt2 == nt) {
		const float of[3] = {(float)o[0], (float)o[1], (float)o[2]};
		const float df[3] = {(float)d[0], (float)d[1], (float)d[2]};
		for (uint32_t k = 0; k < nt; ++k) {
			const uint32_t* c = tri + 3 * (size_t)k;
			if (c[0] >= nv || c[1] >= nv || c[2] >= nv) continue;
			float a[3], b[3], e[3], th = 0;
			vec_of(vert[c[0]], a);
			vec_of(vert[c[1]], b);
			vec_of(vert[c[2]], e);
			if (ray_triangle(of, df, a, b, e, &th) && (!hit || (double)th < *t)) {
				*t = (double)th;
				hit = true;
			}
		}
	}
	free(vert);
	free(tri);
	return hit;
}

/* Where the ray (o, d) enters collider `id`: in its frame (a rigid motion keeps the distance t). */
static bool ray_shape(const pbd_world* w, pbd_collider_id id, const float o[3], const float d[3], double* t) {
	pbd_collider_def def;
	pbd_pose pose;
	if (pbd_collider_get_def(w, id, &def) != PBD_OK || def.trigger || pbd_collider_get_pose(w, id, &pose) != PBD_OK)
		return false;
	const pbd_quat inv = pbd_quat_conj(pose.rotation);
	const pbd_vec3 lo =
	    pbd_quat_rotate(inv, pbd_v3_sub(pbd_v3((pbd_real)o[0], (pbd_real)o[1], (pbd_real)o[2]), pose.position));
	const pbd_vec3 ld = pbd_quat_rotate(inv, pbd_v3((pbd_real)d[0], (pbd_real)d[1], (pbd_real)d[2]));
	double lod[3] = {(double)lo.x, (double)lo.y, (double)lo.z}, ldd[3] = {(double)ld.x, (double)ld.y, (double)ld.z};
	const double len = sqrt(dot3d(ldd, ldd));
	if (!(len > 0)) return false;
	for (int k = 0; k < 3; ++k) ldd[k] /= len;
	switch (def.type) {
	case PBD_SHAPE_SPHERE: {
		const double c[3] = {(double)def.shape.sphere.center.x, (double)def.shape.sphere.center.y,
		                     (double)def.shape.sphere.center.z};
		return ray_ball(lod, ldd, c, (double)def.shape.sphere.radius, t);
	}
	case PBD_SHAPE_CAPSULE:
		return ray_capsule(lod, ldd, (double)def.shape.capsule.half_height, (double)def.shape.capsule.radius, t);
	case PBD_SHAPE_BOX: {
		const double h[3] = {(double)def.shape.box.half_extents.x, (double)def.shape.box.half_extents.y,
		                     (double)def.shape.box.half_extents.z};
		return ray_box(lod, ldd, h, t);
	}
	case PBD_SHAPE_CONVEX:
	case PBD_SHAPE_MESH:
	case PBD_SHAPE_HEIGHTFIELD:
		return ray_triangles(w, id, lod, ldd, t);
	case PBD_SHAPE_PLANE:
	case PBD_SHAPE_COUNT:
		break;
	}
	return false; /* a plane has no point to hold: it is everywhere */
}

/* The nearest entry of the ray (o, d) into a shape of one of the scene's dynamic bodies. */
static bool pick_body(const viewer* v, const float o[3], const float d[3], uint32_t* index, float* depth) {
	const pbd_scene* sc = &v->sc;
	bool found = false;
	double best = DBL_MAX;
	for (uint32_t b = 0; b < sc->body_count; ++b) {
		const pbd_scene_body* sb = &sc->bodies[b];
		pbd_body_state st;
		/* Validity first: a stale id is no error to log, only a body to skip. */
		if (!pbd_body_is_valid(sc->world, sb->id) || pbd_body_get_state(sc->world, sb->id, &st) != PBD_OK ||
		    st.type != PBD_BODY_DYNAMIC)
			continue;
		for (uint32_t k = 0; k < sb->shape_count && sb->first_collider + k < sc->collider_count; ++k) {
			double t = 0;
			if (ray_shape(sc->world, sc->colliders[sb->first_collider + k], o, d, &t) && t < best) {
				best = t;
				*index = b;
				found = true;
			}
		}
	}
	if (found) *depth = (float)best;
	return found;
}

bool view_pick(const viewer* v, double x, double y, view_pick_hit* hit) {
	if (v->window_w < 1 || v->window_h < 1) return false;
	const pbd_render_camera cam = view_camera(v);
	float o[3], d[3];
	pbd_render_camera_ray(&cam, v->window_w, v->window_h, (float)x, (float)y, o, d);
	uint32_t particle = 0, body = 0;
	float particle_depth = FLT_MAX, body_depth = FLT_MAX;
	const bool on_particle = pick_particle(v, x, y, o, d, &particle, &particle_depth);
	const bool on_body = pick_body(v, o, d, &body, &body_depth);
	if (!on_particle && !on_body) return false;
	if (on_body && (!on_particle || body_depth < particle_depth)) {
		hit->kind = VIEW_GRAB_BODY;
		hit->index = body;
		hit->depth = body_depth;
		for (int k = 0; k < 3; ++k) hit->point[k] = o[k] + body_depth * d[k];
	} else {
		hit->kind = VIEW_GRAB_PARTICLE;
		hit->index = particle;
		hit->depth = particle_depth;
		vec_of(pbd_world_positions(v->sc.world)[particle], hit->point);
	}
	return true;
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
	view_pick_hit hit;
	if (!view_pick(v, x, y, &hit)) return false;
	pbd_world* w = v->sc.world;
	view_grab* g = &v->grab;
	const uint32_t i = hit.index;
	if (hit.kind == VIEW_GRAB_PARTICLE) {
		g->was_pinned = pbd_particle_is_pinned(w, i);
		if (!g->was_pinned && pbd_particle_pin(w, i) != PBD_OK) {
			view_message(v, "cannot grab particle %u: %s", i, pbd_world_last_error(w));
			return false;
		}
	} else {
		const pbd_scene_body* sb = &v->sc.bodies[i];
		pbd_body_state st;
		if (pbd_body_get_state(w, sb->id, &st) != PBD_OK) {
			view_message(v, "cannot grab body %s: %s", sb->name, pbd_world_last_error(w));
			return false;
		}
		g->mass = st.mass; /* positive: only a dynamic body is picked */
		g->was_pinned = false;
		g->body = sb->id;
		g->local = pbd_pose_apply_inverse(
		    st.pose, pbd_v3((pbd_real)hit.point[0], (pbd_real)hit.point[1], (pbd_real)hit.point[2]));
	}
	const pbd_vec3 p = hit.kind == VIEW_GRAB_PARTICLE
	                       ? pbd_world_positions(w)[i]
	                       : pbd_v3((pbd_real)hit.point[0], (pbd_real)hit.point[1], (pbd_real)hit.point[2]);
	const pbd_render_camera cam = view_camera(v);
	float n[3] = {cam.target[0] - cam.eye[0], cam.target[1] - cam.eye[1], cam.target[2] - cam.eye[2]};
	const float len = sqrtf(dot3(n, n));
	for (int k = 0; k < 3; ++k) n[k] = len > 0 ? n[k] / len : (k == 2 ? 1.0f : 0.0f);
	g->active = true;
	g->kind = hit.kind;
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
	g->last_target = p;
	g->drag_velocity = pbd_v3(0, 0, 0);
	g->steps_held = 0;
	g->press_x = x;
	g->press_y = y;
	v->needs_update = true; /* the pinned marker */
	return true;
}

/* The spring's pull on the point held, at the point, for the coming step. */
static void pull_body(viewer* v) {
	pbd_world* w = v->sc.world;
	view_grab* g = &v->grab;
	pbd_body_state st;
	if (!pbd_body_is_valid(w, g->body) || pbd_body_get_state(w, g->body, &st) != PBD_OK) {
		g->active = false; /* the body is gone */
		return;
	}
	const pbd_vec3 p = pbd_pose_apply(st.pose, g->local);
	const pbd_vec3 r = pbd_v3_sub(p, st.center);
	const pbd_vec3 vp = pbd_v3_add(st.velocity, pbd_v3_cross(st.angular_velocity, r));
	const double dt = (double)pbd_world_get_def(w).dt;
	double omega = TWO_PI * VIEW_BODY_GRAB_HZ;
	if (dt > 0 && omega * dt > VIEW_BODY_GRAB_MAX_PHASE) omega = VIEW_BODY_GRAB_MAX_PHASE / dt;
	/* Critically damped: x'' = omega^2 (target - x) - 2 omega x' for the point, times the mass. */
	const double k = g->mass * omega * omega, c = 2.0 * g->mass * omega;
	const pbd_vec3 f = pbd_v3((pbd_real)(k * (double)(g->target.x - p.x) - c * (double)vp.x),
	                          (pbd_real)(k * (double)(g->target.y - p.y) - c * (double)vp.y),
	                          (pbd_real)(k * (double)(g->target.z - p.z) - c * (double)vp.z));
	if (pbd_body_apply_force(w, g->body, f, p) != PBD_OK) view_message(v, "drag: %s", pbd_world_last_error(w));
}

void view_grab_move(viewer* v, double x, double y) {
	if (!v->grab.active) return;
	float under[3];
	if (!plane_point_under(v, x, y, under)) return;
	v->grab.target = (pbd_vec3){(pbd_real)(under[0] + v->grab.offset[0]), (pbd_real)(under[1] + v->grab.offset[1]),
	                            (pbd_real)(under[2] + v->grab.offset[2])};
}

/* The target's velocity over the coming step, averaged (exponentially) over VIEW_THROW_SECONDS. */
static void track_drag(viewer* v) {
	view_grab* g = &v->grab;
	const double dt = (double)pbd_world_get_def(v->sc.world).dt;
	if (!(dt > 0)) return;
	const double a = fmin(1.0, dt / VIEW_THROW_SECONDS);
	const pbd_vec3 now = pbd_v3_scale(pbd_v3_sub(g->target, g->last_target), (pbd_real)(1.0 / dt));
	g->drag_velocity = pbd_v3_add(g->drag_velocity, pbd_v3_scale(pbd_v3_sub(now, g->drag_velocity), (pbd_real)a));
	g->last_target = g->target;
	g->steps_held++;
}

void view_grab_before_step(viewer* v) {
	if (!v->grab.active) return;
	if (v->grab.kind == VIEW_GRAB_BODY) {
		track_drag(v);
		pull_body(v);
		return;
	}
	/* Set again every step: a target is consumed by the step that reaches it. */
	if (pbd_particle_set_target(v->sc.world, v->grab.index, v->grab.target) != PBD_OK)
		view_message(v, "drag: %s", pbd_world_last_error(v->sc.world));
}

/* The body let go: the point held moves on with the drag's velocity, the body's spin kept. A
 * press let go before any step changed nothing, and still changes nothing. */
static void throw_body(viewer* v) {
	pbd_world* w = v->sc.world;
	const view_grab* g = &v->grab;
	pbd_body_state st;
	if (g->steps_held == 0 || !pbd_body_is_valid(w, g->body) || pbd_body_get_state(w, g->body, &st) != PBD_OK) return;
	const pbd_vec3 r = pbd_v3_sub(pbd_pose_apply(st.pose, g->local), st.center);
	const pbd_vec3 velocity = pbd_v3_sub(g->drag_velocity, pbd_v3_cross(st.angular_velocity, r));
	if (pbd_body_set_velocity(w, g->body, velocity, st.angular_velocity) != PBD_OK)
		view_message(v, "throw: %s", pbd_world_last_error(w));
}

void view_grab_end(viewer* v) {
	if (!v->grab.active) return;
	if (v->grab.kind == VIEW_GRAB_PARTICLE && !v->grab.was_pinned &&
	    pbd_particle_unpin(v->sc.world, v->grab.index) != PBD_OK)
		view_message(v, "cannot let go of particle %u: %s", v->grab.index, pbd_world_last_error(v->sc.world));
	if (v->grab.kind == VIEW_GRAB_BODY) throw_body(v);
	v->grab.active = false;
	v->needs_update = true;
}

bool view_grab_point(const viewer* v, float out[3]) {
	const view_grab* g = &v->grab;
	if (!g->active) return false;
	if (g->kind == VIEW_GRAB_PARTICLE) {
		if (g->index >= pbd_world_particle_count(v->sc.world)) return false;
		vec_of(pbd_world_positions(v->sc.world)[g->index], out);
		return true;
	}
	pbd_body_state st;
	/* Asked every frame: a body gone is no error to report. */
	if (!pbd_body_is_valid(v->sc.world, g->body) || pbd_body_get_state(v->sc.world, g->body, &st) != PBD_OK)
		return false;
	vec_of(pbd_pose_apply(st.pose, g->local), out);
	return true;
}
