/* Automatic framing: where a scene is and where it can get to, and the camera that shows it.
 *
 * A run's camera is set once, from the initial state, but cloth falls. So the framing looks at
 * the scene's "reach": the particles where they are, each free particle again where it could
 * hang (moved along gravity by its distance to the nearest pinned particle, both from where it
 * is and from below that pin, or down to the plane collider that stops it), and, for a body held at one point (a rope,
 * a pendulum), the mirror image of the particles across that point, where the swing takes them. Bounded colliders
 * (spheres, capsules, boxes, and convex hulls, meshes and heightfields by the balls around their world boxes) count
 * whole, as the balls that hold them where they start; planes are unbounded and count only as floors. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "pbd/math.h"
#include "render_internal.h"

#define DEG2RAD 0.017453292519943295

/* Caps that keep the framing linear in the world's size: pins searched for the nearest one,
 * and free particles whose hanging and swinging places are added. Fewer pins can only make
 * the nearest one farther (the framing widens, never cuts); fewer particles sample the same
 * shape more coarsely. */
#define MAX_PINS  64
#define MAX_MOVED 65536

static float dot3(const float a[3], const float b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static float norm3(float v[3]) {
	const float len = sqrtf(dot3(v, v));
	if (len > 0) {
		v[0] /= len;
		v[1] /= len;
		v[2] /= len;
	}
	return len;
}

static void of_vec(pbd_vec3 v, float out[3]) {
	out[0] = (float)v.x;
	out[1] = (float)v.y;
	out[2] = (float)v.z;
}

/* ---- bounds ------------------------------------------------------------------------------- */

void render_bounds_clear(pbd_render_bounds* b) {
	for (int k = 0; k < 3; ++k) {
		b->min[k] = FLT_MAX;
		b->max[k] = -FLT_MAX;
	}
}

bool render_bounds_is_empty(const pbd_render_bounds* b) {
	return !(b->min[0] <= b->max[0] && b->min[1] <= b->max[1] && b->min[2] <= b->max[2]);
}

void render_bounds_add(pbd_render_bounds* b, const float p[3]) {
	if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])) return;
	for (int k = 0; k < 3; ++k) {
		if (p[k] < b->min[k]) b->min[k] = p[k];
		if (p[k] > b->max[k]) b->max[k] = p[k];
	}
}

static void add_sphere_box(pbd_render_bounds* b, const float s[4]) {
	const float lo[3] = {s[0] - s[3], s[1] - s[3], s[2] - s[3]}, hi[3] = {s[0] + s[3], s[1] + s[3], s[2] + s[3]};
	render_bounds_add(b, lo);
	render_bounds_add(b, hi);
}

pbd_plane render_collider_world_plane(const pbd_collider_def* d) {
	pbd_plane p = d->shape.plane;
	p.normal = pbd_quat_rotate(d->pose.rotation, d->shape.plane.normal);
	p.offset = d->shape.plane.offset + pbd_v3_dot(p.normal, d->pose.position);
	return p;
}

bool render_collider_ball(const pbd_world* w, pbd_collider_id id, const pbd_collider_def* d, float center[3],
                          float* radius) {
	pbd_vec3 c = pbd_v3(0, 0, 0);
	switch (d->type) {
	case PBD_SHAPE_SPHERE:
		c = d->shape.sphere.center;
		*radius = (float)d->shape.sphere.radius;
		break;
	case PBD_SHAPE_CAPSULE:
		*radius = (float)(d->shape.capsule.half_height + d->shape.capsule.radius);
		break;
	case PBD_SHAPE_BOX:
		*radius = (float)pbd_v3_length(d->shape.box.half_extents);
		break;
	case PBD_SHAPE_CONVEX: /* the ball around the library's world box */
	case PBD_SHAPE_MESH:
	case PBD_SHAPE_HEIGHTFIELD: {
		pbd_vec3 lo, hi;
		if (!pbd_collider_get_bounds(w, id, &lo, &hi)) return false;
		/* In double: the box's corners are finite, their sums and squares need not be in float. */
		const double l[3] = {(double)lo.x, (double)lo.y, (double)lo.z},
		             h[3] = {(double)hi.x, (double)hi.y, (double)hi.z};
		double d2 = 0;
		for (int k = 0; k < 3; ++k) {
			center[k] = (float)(0.5 * (l[k] + h[k]));
			d2 += (h[k] - l[k]) * (h[k] - l[k]);
		}
		*radius = (float)(0.5 * sqrt(d2));
		return isfinite(*radius) && isfinite(center[0]) && isfinite(center[1]) && isfinite(center[2]);
	}
	case PBD_SHAPE_PLANE:
	case PBD_SHAPE_COUNT:
		return false;
	}
	of_vec(pbd_pose_apply(d->pose, c), center);
	return true;
}

/* The live bounded colliders as the balls that hold them, (x, y, z, radius); *n of them. NULL
 * when there are none. A ball is loose around a box, but the framing only needs to hold it. */
static float* collect_spheres(const pbd_render_scene* sc, size_t* n) {
	*n = 0;
	if (!sc->collider_count || !sc->colliders) return NULL;
	float* out = malloc((size_t)sc->collider_count * 4 * sizeof *out);
	if (!out) return NULL;
	for (uint32_t i = 0; i < sc->collider_count; ++i) {
		pbd_collider_def d;
		if (pbd_collider_get_def(sc->world, sc->colliders[i], &d) != PBD_OK ||
		    pbd_collider_get_pose(sc->world, sc->colliders[i], &d.pose) != PBD_OK ||
		    !render_collider_ball(sc->world, sc->colliders[i], &d, out + 4 * *n, out + 4 * *n + 3))
			continue;
		++*n;
	}
	return out;
}

void pbd_render_scene_bounds(const pbd_render_scene* scene, pbd_render_bounds* out) {
	render_bounds_clear(out);
	if (!scene || !scene->world) return;
	const uint32_t n = pbd_world_particle_count(scene->world);
	const pbd_vec3* x = pbd_world_positions(scene->world);
	for (uint32_t i = 0; i < n; ++i) {
		float p[3];
		of_vec(x[i], p);
		render_bounds_add(out, p);
	}
	size_t ns;
	float* spheres = collect_spheres(scene, &ns);
	for (size_t k = 0; k < ns; ++k) add_sphere_box(out, spheres + 4 * k);
	free(spheres);
}

/* ---- reach -------------------------------------------------------------------------------- */

typedef struct reach {
	float* points; /* 3 floats each */
	size_t count, cap;
	float* spheres; /* 4 floats each */
	size_t sphere_count;
} reach;

static bool push(reach* r, const float p[3]) {
	if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])) return true;
	if (r->count == r->cap) {
		const size_t cap = r->cap ? 2 * r->cap : 1024;
		float* grown = realloc(r->points, cap * 3 * sizeof *grown);
		if (!grown) return false;
		r->points = grown;
		r->cap = cap;
	}
	r->points[3 * r->count] = p[0];
	r->points[3 * r->count + 1] = p[1];
	r->points[3 * r->count + 2] = p[2];
	++r->count;
	return true;
}

static void reach_free(reach* r) {
	free(r->points);
	free(r->spheres);
	*r = (reach){0};
}

/* How far along unit gravity g a point at p may fall before a plane collider stops it (its
 * own limit when no plane does). */
static float fall_limit(const pbd_render_scene* sc, const float p[3], const float g[3], float limit) {
	for (uint32_t i = 0; i < sc->collider_count; ++i) {
		pbd_collider_def d;
		/* A trigger stops nothing. */
		if (pbd_collider_get_def(sc->world, sc->colliders[i], &d) != PBD_OK || d.type != PBD_SHAPE_PLANE || d.trigger ||
		    pbd_collider_get_pose(sc->world, sc->colliders[i], &d.pose) != PBD_OK)
			continue;
		const pbd_plane plane = render_collider_world_plane(&d);
		float n[3];
		of_vec(plane.normal, n);
		const float toward = -dot3(n, g); /* > 0: falling goes into the plane */
		if (!(toward > 1e-6f)) continue;
		const float above = dot3(n, p) - (float)plane.offset;
		const float t = above > 0 ? above / toward : 0.0f;
		if (t < limit) limit = t;
	}
	return limit;
}

static bool collect_reach(const pbd_render_scene* sc, reach* r) {
	*r = (reach){0};
	r->spheres = collect_spheres(sc, &r->sphere_count);
	const pbd_world* w = sc->world;
	const uint32_t n = pbd_world_particle_count(w);
	const pbd_vec3* x = pbd_world_positions(w);
	const pbd_real* iw = pbd_world_inv_masses(w);
	for (uint32_t i = 0; i < n; ++i) {
		float p[3];
		of_vec(x[i], p);
		if (!push(r, p)) return false;
	}
	float g[3];
	of_vec(pbd_world_get_def(w).gravity, g);
	if (n == 0 || norm3(g) <= 0) return true;

	/* The pinned particles, thinned to MAX_PINS, and their centroid and spread. */
	uint32_t pinned = 0;
	for (uint32_t i = 0; i < n; ++i) pinned += iw[i] == 0 ? 1u : 0u;
	if (pinned == n) return true;
	const uint32_t pin_stride = pinned > MAX_PINS ? (pinned + MAX_PINS - 1) / MAX_PINS : 1;
	float pins[MAX_PINS][3];
	uint32_t np = 0, seen = 0;
	double centroid[3] = {0, 0, 0};
	for (uint32_t i = 0; i < n && np < MAX_PINS; ++i) {
		if (iw[i] != 0 || seen++ % pin_stride != 0) continue;
		of_vec(x[i], pins[np]);
		for (int k = 0; k < 3; ++k) centroid[k] += (double)pins[np][k];
		++np;
	}
	float c[3] = {0, 0, 0};
	float spread = 0;
	for (int k = 0; k < 3; ++k) c[k] = np ? (float)(centroid[k] / np) : 0.0f;
	for (uint32_t k = 0; k < np; ++k) {
		const float d[3] = {pins[k][0] - c[0], pins[k][1] - c[1], pins[k][2] - c[2]};
		const float len = sqrtf(dot3(d, d));
		if (len > spread) spread = len;
	}

	const uint32_t free_count = n - pinned;
	const uint32_t stride = free_count > MAX_MOVED ? (free_count + MAX_MOVED - 1) / MAX_MOVED : 1;
	float longest = 0;
	seen = 0;
	for (uint32_t i = 0; i < n; ++i) {
		if (iw[i] == 0 || seen++ % stride != 0) continue;
		float p[3];
		of_vec(x[i], p);
		/* Hanging: as far below as the nearest pin is away, somewhere between below where it
		 * is and below that pin (where it ends when nothing is in the way). Unpinned: down to
		 * a floor. */
		float hang = INFINITY;
		uint32_t nearest = 0;
		for (uint32_t k = 0; k < np; ++k) {
			const float d[3] = {p[0] - pins[k][0], p[1] - pins[k][1], p[2] - pins[k][2]};
			const float len = sqrtf(dot3(d, d));
			if (len < hang) {
				hang = len;
				nearest = k;
			}
		}
		if (np > 0 && hang > longest) longest = hang;
		const float t = fall_limit(sc, p, g, hang);
		if (isfinite(t)) {
			const float q[3] = {p[0] + g[0] * t, p[1] + g[1] * t, p[2] + g[2] * t};
			if (!push(r, q)) return false;
		}
		if (np > 0) {
			const float* pin = pins[nearest];
			const float tp = fall_limit(sc, pin, g, hang);
			const float q[3] = {pin[0] + g[0] * tp, pin[1] + g[1] * tp, pin[2] + g[2] * tp};
			if (!push(r, q)) return false;
		}
	}
	/* Held at one point (the pins within a tenth of the body's reach of each other): it swings
	 * like a pendulum, to the other side of that point as far as it starts on this side. */
	if (np > 0 && longest > 0 && spread <= 0.1f * longest) {
		seen = 0;
		for (uint32_t i = 0; i < n; ++i) {
			if (iw[i] == 0 || seen++ % stride != 0) continue;
			float d[3];
			of_vec(x[i], d);
			for (int k = 0; k < 3; ++k) d[k] -= c[k];
			const float along = dot3(d, g);
			/* Mirror the part across gravity, keep the part along it. */
			const float q[3] = {c[0] - d[0] + 2 * along * g[0], c[1] - d[1] + 2 * along * g[1],
			                    c[2] - d[2] + 2 * along * g[2]};
			if (!push(r, q)) return false;
		}
	}
	return true;
}

void pbd_render_framing_bounds(const pbd_render_scene* scene, pbd_render_bounds* out) {
	render_bounds_clear(out);
	if (!scene || !scene->world) return;
	reach r;
	if (!collect_reach(scene, &r)) {
		/* Out of memory: the current bounds are still a framing. */
		reach_free(&r);
		pbd_render_scene_bounds(scene, out);
		return;
	}
	for (size_t i = 0; i < r.count; ++i) render_bounds_add(out, r.points + 3 * i);
	for (size_t k = 0; k < r.sphere_count; ++k) add_sphere_box(out, r.spheres + 4 * k);
	reach_free(&r);
}

/* ---- fitting a camera --------------------------------------------------------------------- */

/* The orbit with the given direction and field of view that holds every point and sphere in
 * the image, 5% of it kept free on each side. A point at view-space (x, y) and depth z towards
 * the eye, relative to the target, is in when |x| <= (d - z) tan_h and |y| <= (d - z) tan_v;
 * the distance d is the smallest that satisfies all. The target then moves to centre the
 * image's content, and d is found again, a few times. */
static pbd_render_orbit fit(const float* pts, size_t n, const float* spheres, size_t ns, float aspect, float fov_y,
                            float yaw, float pitch) {
	pbd_render_orbit o;
	o.yaw = yaw;
	o.pitch = pitch;
	o.fov_y = fov_y;
	o.distance = 1.0f;
	pbd_render_bounds b;
	render_bounds_clear(&b);
	for (size_t i = 0; i < n; ++i) render_bounds_add(&b, pts + 3 * i);
	for (size_t k = 0; k < ns; ++k) add_sphere_box(&b, spheres + 4 * k);
	if (render_bounds_is_empty(&b)) {
		for (int k = 0; k < 3; ++k) {
			b.min[k] = -1.0f;
			b.max[k] = 1.0f;
		}
	}
	float size = 0;
	for (int k = 0; k < 3; ++k) {
		o.target[k] = 0.5f * (b.min[k] + b.max[k]);
		size = fmaxf(size, b.max[k] - b.min[k]);
	}
	/* A single point still gets a view of some size. */
	const float least = size > 0 ? 0.0f : 1.0f;

	const pbd_render_camera unit = pbd_render_camera_from_orbit(&o);
	float s[3], u[3], f[3];
	render_camera_basis(&unit, s, u, f);
	const float tan_v = 0.9f * tanf((float)((double)fov_y * 0.5 * DEG2RAD));
	const float tan_h = tan_v * (aspect > 0 ? aspect : 1.0f);
	float d = 1.0f;
	for (int pass = 0; pass < 4; ++pass) {
		/* Every point, then each sphere's extremes along the camera axes (its silhouette, to
		 * first order). */
		float need = least;
		float lo_x = INFINITY, hi_x = -INFINITY, lo_y = INFINITY, hi_y = -INFINITY;
		for (int round = 0; round < 2; ++round) {
			for (size_t i = 0; i < n + 6 * ns; ++i) {
				float p[3];
				if (i < n) {
					p[0] = pts[3 * i];
					p[1] = pts[3 * i + 1];
					p[2] = pts[3 * i + 2];
				} else {
					const float* sp = spheres + 4 * ((i - n) / 6);
					const int axis = (int)((i - n) % 6);
					const float* dir = axis < 2 ? s : (axis < 4 ? u : f);
					const float sign = (axis & 1) ? -1.0f : 1.0f;
					for (int k = 0; k < 3; ++k) p[k] = sp[k] + sign * sp[3] * dir[k];
				}
				const float rel[3] = {p[0] - o.target[0], p[1] - o.target[1], p[2] - o.target[2]};
				const float x = dot3(s, rel), y = dot3(u, rel), z = -dot3(f, rel);
				if (round == 0) {
					need = fmaxf(need, fmaxf(z + fabsf(x) / tan_h, z + fabsf(y) / tan_v));
				} else {
					const float depth = d - z;
					lo_x = fminf(lo_x, x / (depth * tan_h));
					hi_x = fmaxf(hi_x, x / (depth * tan_h));
					lo_y = fminf(lo_y, y / (depth * tan_v));
					hi_y = fmaxf(hi_y, y / (depth * tan_v));
				}
			}
			if (round == 0) d = need > 0 ? need : 1.0f;
		}
		if (pass == 3 || !(hi_x >= lo_x)) break;
		/* Move the target by the off-centre part of the content, at the target's depth. */
		const float mx = 0.5f * (lo_x + hi_x) * tan_h * d, my = 0.5f * (lo_y + hi_y) * tan_v * d;
		for (int k = 0; k < 3; ++k) o.target[k] += mx * s[k] + my * u[k];
	}
	o.distance = d;
	return o;
}

pbd_render_orbit pbd_render_orbit_frame(const pbd_render_bounds* b, float aspect, float fov_y, float yaw, float pitch) {
	float corners[24];
	size_t n = 0;
	if (!render_bounds_is_empty(b)) {
		for (int c = 0; c < 8; ++c, ++n) {
			corners[3 * n] = (c & 1) ? b->max[0] : b->min[0];
			corners[3 * n + 1] = (c & 2) ? b->max[1] : b->min[1];
			corners[3 * n + 2] = (c & 4) ? b->max[2] : b->min[2];
		}
	}
	return fit(corners, n, NULL, 0, aspect, fov_y, yaw, pitch);
}

pbd_render_orbit pbd_render_orbit_frame_scene(const pbd_render_scene* scene, float aspect, float fov_y, float yaw,
                                              float pitch) {
	reach r;
	if (!scene || !scene->world || !collect_reach(scene, &r)) {
		if (scene && scene->world) reach_free(&r);
		pbd_render_bounds b;
		pbd_render_scene_bounds(scene, &b);
		return pbd_render_orbit_frame(&b, aspect, fov_y, yaw, pitch);
	}
	const pbd_render_orbit o = fit(r.points, r.count, r.spheres, r.sphere_count, aspect, fov_y, yaw, pitch);
	reach_free(&r);
	return o;
}

pbd_render_camera pbd_render_camera_frame(const pbd_render_scene* scene, float aspect) {
	const pbd_render_orbit o = pbd_render_orbit_frame_scene(scene, aspect, PBD_RENDER_DEFAULT_FOV,
	                                                        PBD_RENDER_DEFAULT_YAW, PBD_RENDER_DEFAULT_PITCH);
	return pbd_render_camera_from_orbit(&o);
}

/* ---- plane quads -------------------------------------------------------------------------- */

/* 1, 2 or 5 times a power of ten, the nearest at or below x. */
static float round_size(float x) {
	if (!(x > 0) || !isfinite(x)) return 1.0f;
	const float p = powf(10.0f, floorf(log10f(x)));
	const float m = x / p;
	return (m >= 5.0f ? 5.0f : (m >= 2.0f ? 2.0f : 1.0f)) * p;
}

void render_plane_quad_make(const pbd_plane* plane, const pbd_render_bounds* bounds, render_plane_quad* out) {
	float n[3];
	of_vec(plane->normal, n);
	if (norm3(n) <= 0) n[1] = 1.0f;
	float c[3] = {0, 0, 0};
	float radius = 1.0f;
	if (!render_bounds_is_empty(bounds)) {
		const float diag[3] = {bounds->max[0] - bounds->min[0], bounds->max[1] - bounds->min[1],
		                       bounds->max[2] - bounds->min[2]};
		radius = fmaxf(0.5f * sqrtf(dot3(diag, diag)), 0.5f);
		for (int k = 0; k < 3; ++k) c[k] = 0.5f * (bounds->min[k] + bounds->max[k]);
	}
	/* The centre of the scene dropped onto the plane. */
	const float h = dot3(n, c) - (float)plane->offset;
	for (int k = 0; k < 3; ++k) {
		out->center[k] = c[k] - h * n[k];
		out->n[k] = n[k];
	}
	/* Any axis not along n gives the in-plane frame; the one least aligned is the best
	 * conditioned. */
	const float ax = fabsf(n[0]), ay = fabsf(n[1]), az = fabsf(n[2]);
	const float a[3] = {ax <= ay && ax <= az ? 1.0f : 0.0f, ay < ax && ay <= az ? 1.0f : 0.0f,
	                    az < ax && az < ay ? 1.0f : 0.0f};
	out->u[0] = n[1] * a[2] - n[2] * a[1];
	out->u[1] = n[2] * a[0] - n[0] * a[2];
	out->u[2] = n[0] * a[1] - n[1] * a[0];
	norm3(out->u);
	out->v[0] = out->u[1] * n[2] - out->u[2] * n[1];
	out->v[1] = out->u[2] * n[0] - out->u[0] * n[2];
	out->v[2] = out->u[0] * n[1] - out->u[1] * n[0];
	out->half = 4.0f * radius;
	out->tile = round_size(radius / 3.0f);
}
