/* Header-only helpers of the rigid-body tests: shapes with a material, a floor, a dynamic body of a
 * given density carrying a shape, poses and states. */
#ifndef PBD_TEST_BODIES_H
#define PBD_TEST_BODIES_H

#include "test_physics.h"

static inline pbd_collider_def material(pbd_collider_def d, double mu, double e) {
	d.static_friction = (pbd_real)mu;
	d.kinetic_friction = (pbd_real)mu;
	d.restitution = (pbd_real)e;
	return d;
}

static inline pbd_collider_def ball_shape(double radius) {
	pbd_collider_def d = pbd_collider_def_default();
	d.type = PBD_SHAPE_SPHERE;
	d.shape.sphere.center = pbd_v3(0, 0, 0);
	d.shape.sphere.radius = (pbd_real)radius;
	return d;
}

static inline pbd_collider_def box3_shape(double hx, double hy, double hz) {
	pbd_collider_def d = pbd_collider_def_default();
	d.type = PBD_SHAPE_BOX;
	d.shape.box.half_extents = pbd_v3((pbd_real)hx, (pbd_real)hy, (pbd_real)hz);
	return d;
}

static inline pbd_collider_def box_shape(double half) { return box3_shape(half, half, half); }

/* A floor through the origin with the given unit normal. */
static inline void floor_with(pbd_world* w, pbd_vec3 normal, double mu, double e) {
	pbd_collider_def d = material(pbd_collider_def_default(), mu, e);
	d.shape.plane.normal = normal;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &d)));
}

/* A dynamic body of the given density carrying `shape`, at `pose`, moving at v. */
static inline pbd_body_id body_of(pbd_world* w, pbd_collider_def shape, double density, pbd_pose pose, pbd_vec3 v) {
	const pbd_collider_id probe = pbd_collider_create(w, &shape);
	assert_true(pbd_collider_is_valid(w, probe));
	pbd_body_def bd = pbd_body_def_default();
	bd.type = PBD_BODY_DYNAMIC;
	assert_int_equal(pbd_collider_mass_properties(w, probe, (pbd_real)density, &bd.mass), PBD_OK);
	assert_int_equal(pbd_collider_destroy(w, probe), PBD_OK);
	bd.pose = pose;
	bd.velocity = v;
	const pbd_body_id b = pbd_body_create(w, &bd);
	if (!pbd_body_is_valid(w, b)) fail_msg("pbd_body_create: %s", pbd_world_last_error(w));
	shape.body = b;
	if (!pbd_collider_is_valid(w, pbd_collider_create(w, &shape)))
		fail_msg("pbd_collider_create: %s", pbd_world_last_error(w));
	return b;
}

/* A dynamic body of density 1000 carrying `shape`, at `pose`, moving at v. */
static inline pbd_body_id body_with(pbd_world* w, pbd_collider_def shape, pbd_pose pose, pbd_vec3 v) {
	return body_of(w, shape, 1000, pose, v);
}

static inline pbd_pose at(double x, double y, double z) {
	pbd_pose p = {pbd_v3((pbd_real)x, (pbd_real)y, (pbd_real)z), pbd_quat_identity()};
	return p;
}

static inline pbd_body_state state_of(pbd_world* w, pbd_body_id id) {
	pbd_body_state s;
	assert_int_equal(pbd_body_get_state(w, id, &s), PBD_OK);
	return s;
}

/* A ball of radius r and restitution e dropped from rest with its lowest point h0 above the floor
 * through the origin (normal +y, frictionless, restitution 0: a pair bounces with the larger):
 * the height of its lowest point at the top of its first bounce (0: it never rose), and the
 * lowest it went in *lowest. */
static inline double ball_apex(pbd_world* w, double r, double h0, double e, double* lowest) {
	floor_with(w, pbd_v3(0, 1, 0), 0, 0);
	const pbd_body_id b = body_with(w, material(ball_shape(r), 0, e), at(0, r + h0, 0), pbd_v3(0, 0, 0));
	double apex = 0;
	*lowest = 1e9;
	bool bounced = false;
	for (int s = 0; s < 180; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_body_state st = state_of(w, b);
		const double y = (double)st.pose.position.y - r;
		*lowest = fmin(*lowest, y);
		if ((double)st.velocity.y > 0) bounced = true;
		if (bounced) {
			if ((double)st.velocity.y < 0 && apex > 0) break;
			apex = fmax(apex, y);
		}
	}
	return apex;
}

/* A cube of 0.1 m half size resting on a slope of angle theta through the origin, friction mu on
 * both shapes (the pair's is their geometric mean, mu again): its speed down the slope after
 * 30 steps and after 90. */
static inline void slope_speeds(pbd_world* w, double theta, double mu, double* v1, double* v2) {
	const double half = 0.1;
	floor_with(w, pbd_v3((pbd_real)-sin(theta), (pbd_real)cos(theta), 0), mu, 0);
	pbd_pose p = at(-half * sin(theta), half * cos(theta), 0);
	p.rotation = pbd_quat_axis_angle(pbd_v3(0, 0, 1), (pbd_real)theta);
	const pbd_body_id b = body_with(w, material(box_shape(half), mu, 0), p, pbd_v3(0, 0, 0));
	const pbd_vec3 down = pbd_v3((pbd_real)-cos(theta), (pbd_real)-sin(theta), 0);
	for (int s = 1; s <= 90; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const double along = (double)pbd_v3_dot(state_of(w, b).velocity, down);
		if (s == 30) *v1 = along;
		if (s == 90) *v2 = along;
	}
}

/* Cubes of 0.5 m, friction 0.5, in `layers` rows on w's floor (a pyramid, each on two, or a
 * column): the top one, with where it starts in *start. */
static inline pbd_body_id cube_tower(pbd_world* w, int layers, bool pyramid, pbd_vec3* start) {
	const double half = 0.25;
	pbd_body_id top = {0, 0};
	for (int row = 0; row < layers; ++row) {
		const int count = pyramid ? layers - row : 1;
		for (int k = 0; k < count; ++k) {
			*start = pbd_v3((pbd_real)((k - (count - 1) / 2.0) * 2 * half), (pbd_real)((2 * row + 1) * half), 0);
			top = body_with(w, material(box_shape(half), 0.5, 0), (pbd_pose){*start, pbd_quat_identity()},
			                pbd_v3(0, 0, 0));
		}
	}
	return top;
}

/* Twenty-four boxes and balls thrown into the corner of a floor and a wall. */
static inline void heap_into_corner(pbd_world* w) {
	floor_with(w, pbd_v3(0, 1, 0), 0.5, 0);
	floor_with(w, pbd_v3(1, 0, 0), 0.5, 0);
	for (int k = 0; k < 24; ++k) {
		const double x = 0.3 + 0.35 * (k % 4), y = 0.3 + 0.4 * (k / 4), z = 0.1 * (k % 3);
		const pbd_collider_def shape =
		    material(k % 2 ? ball_shape(0.15) : box3_shape(0.15, 0.1, 0.12), 0.5, k % 3 == 0 ? 0.3 : 0);
		pbd_pose p = at(x, y, z);
		p.rotation = pbd_quat_axis_angle(pbd_v3(0.3f, 1, 0.2f), (pbd_real)(0.4 * k));
		body_with(w, shape, p, pbd_v3(-0.5f, 0, 0));
	}
}

/* w after `steps` steps saved and loaded on `threads` threads (logging into msg), then both
 * stepped `steps` more: *hash is w's world hash, *resumed the loaded one's. Destroys w. */
static inline void step_save_resume(pbd_world* w, int threads, char* msg, int steps, uint64_t* hash,
                                    uint64_t* resumed) {
	for (int s = 0; s < steps; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	size_t size = 0;
	assert_int_equal(pbd_world_save_memory(w, NULL, 0, &size), PBD_OK);
	void* buf = malloc(size);
	assert_non_null(buf);
	assert_int_equal(pbd_world_save_memory(w, buf, size, &size), PBD_OK);
	pbd_world_def hooks = pbd_world_def_default();
	hooks.threads = threads;
	hooks.log = test_log_keep;
	hooks.log_user = msg;
	pbd_world* r = NULL;
	pbd_error err;
	assert_int_equal(pbd_world_load_memory(buf, size, &hooks, &r, &err), PBD_OK);
	free(buf);
	for (int s = 0; s < steps; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		assert_int_equal(pbd_world_step(r), PBD_OK);
	}
	*hash = pbd_world_hash(w);
	*resumed = pbd_world_hash(r);
	pbd_world_destroy(w);
	pbd_world_destroy(r);
}

#endif
