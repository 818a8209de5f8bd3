/* Rigid bodies in free motion: a body falls as the discrete free fall of its centre; an
 * asymmetric body spinning freely keeps its angular momentum and energy over 10 s at 60 Hz; spin
 * about the intermediate axis flips (the Dzhanibekov effect) while spin about the major and minor
 * axes stays; a body 10 km from the origin moves as one at the origin; an impulse at a point
 * changes the velocities as J / m and I^-1 (r x J); kinematic bodies move by their velocities;
 * bad defs and calls are refused with the field named. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_physics.h"

static pbd_world* world(char* msg, int substeps) {
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, 0, 0);
	def.substeps = substeps;
	def.log = test_log_keep;
	def.log_user = msg;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	return w;
}

/* A solid box of half extents (a, b, c) at density 1000 as a dynamic body's matter. */
static pbd_mass_properties box_matter(double a, double b, double c) {
	const double m = 1000 * 8 * a * b * c;
	pbd_mass_properties p = {
	    m, {0, 0, 0}, {m * (b * b + c * c) / 3, m * (a * a + c * c) / 3, m * (a * a + b * b) / 3, 0, 0, 0}};
	return p;
}

static pbd_body_id dynamic_box(pbd_world* w, double a, double b, double c, pbd_vec3 at, pbd_vec3 omega) {
	pbd_body_def d = pbd_body_def_default();
	d.type = PBD_BODY_DYNAMIC;
	d.mass = box_matter(a, b, c);
	d.pose.position = at;
	d.angular_velocity = omega;
	const pbd_body_id id = pbd_body_create(w, &d);
	if (!pbd_body_is_valid(w, id)) fail_msg("pbd_body_create: %s", pbd_world_last_error(w));
	return id;
}

static pbd_body_state state_of(pbd_world* w, pbd_body_id id) {
	pbd_body_state s;
	assert_int_equal(pbd_body_get_state(w, id, &s), PBD_OK);
	return s;
}

static double norm3(const double v[3]) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

/* v += g h, x += v h each substep: after n substeps x = x0 + v0 t + g h^2 n (n + 1) / 2. */
static void test_free_fall(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = world(msg, 4);
	assert_int_equal(pbd_world_set_gravity(w, pbd_v3(0, (pbd_real)-9.81, 0)), PBD_OK);
	pbd_body_def d = pbd_body_def_default();
	d.type = PBD_BODY_DYNAMIC;
	d.mass = box_matter(0.1, 0.1, 0.1);
	d.pose.position = pbd_v3(1, 20, -3);
	d.velocity = pbd_v3(2, 5, 0);
	const pbd_body_id id = pbd_body_create(w, &d);
	assert_true(pbd_body_is_valid(w, id));
	const int steps = 60;
	for (int s = 0; s < steps; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_body_state st = state_of(w, id);
	const double h = (double)pbd_world_get_def(w).dt / 4, n = 4.0 * steps, t = h * n;
	const double y = 20 + 5 * t + (double)(pbd_real)-9.81 * h * h * n * (n + 1) / 2;
	printf("free fall: y %.9g, expected %.9g; x %.9g, expected %.9g\n", (double)st.center.y, y, (double)st.center.x,
	       1 + 2 * t);
	assert_true(fabs((double)st.center.y - y) < TEST_TOL(1e-9, 2e-5));
	assert_true(fabs((double)st.center.x - (1 + 2 * t)) < TEST_TOL(1e-9, 2e-5));
	assert_int_equal(st.type, PBD_BODY_DYNAMIC);
	assert_true(fabs(st.mass / d.mass.mass - 1) < TEST_TOL(1e-15, 1e-7));
	pbd_world_destroy(w);
}

/* Torque-free spin of a box of sides 1 x 2 x 3: over 10 s at 60 Hz, one substep, the world
 * angular momentum keeps its vector within 0.1 % and the energy within 1 %. */
static void test_torque_free_invariants(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = world(msg, 1);
	const pbd_body_id id =
	    dynamic_box(w, 0.5, 1, 1.5, pbd_v3(0, 0, 0), pbd_v3((pbd_real)2.0, (pbd_real)0.4, (pbd_real)1.1));
	const pbd_body_state s0 = state_of(w, id);
	const double L0 = norm3(s0.angular_momentum);
	double worst_l = 0, worst_e = 0;
	for (int s = 0; s < 600; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_body_state st = state_of(w, id);
		const double d[3] = {st.angular_momentum[0] - s0.angular_momentum[0],
		                     st.angular_momentum[1] - s0.angular_momentum[1],
		                     st.angular_momentum[2] - s0.angular_momentum[2]};
		worst_l = fmax(worst_l, norm3(d) / L0);
		worst_e = fmax(worst_e, fabs(st.kinetic_energy - s0.kinetic_energy) / s0.kinetic_energy);
	}
	printf("torque-free box, 600 steps of 1/60 s: worst |L - L0| / |L0| %.3g, worst energy error %.3g\n", worst_l,
	       worst_e);
	assert_true(worst_l < 1e-3);
	assert_true(worst_e < 1e-2);
	pbd_world_destroy(w);
}

/* The angular velocity in the principal (box) axes: the body's frame is the box's. */
static void body_axes_omega(pbd_world* w, pbd_body_id id, double out[3]) {
	const pbd_body_state s = state_of(w, id);
	const pbd_quat c = pbd_quat_conj(s.pose.rotation);
	const pbd_vec3 o = pbd_quat_rotate(c, s.angular_velocity);
	out[0] = (double)o.x;
	out[1] = (double)o.y;
	out[2] = (double)o.z;
}

/* The box of sides 1 x 2 x 3 turns hardest about x (its short side: I_x = m (b^2 + c^2) / 3 is
 * the largest), easiest about z, and y is the intermediate axis. Spin about y with a small
 * perturbation reverses within seconds; spin about x or z stays. */
static void test_dzhanibekov(void** state) {
	(void)state;
	char msg[256] = "";
	const double eps = 0.01, spin = 3;
	for (int axis = 0; axis < 3; ++axis) {
		pbd_world* w = world(msg, 4);
		double o[3] = {eps, eps, eps};
		o[axis] = spin;
		const pbd_body_id id =
		    dynamic_box(w, 0.5, 1, 1.5, pbd_v3(0, 0, 0), pbd_v3((pbd_real)o[0], (pbd_real)o[1], (pbd_real)o[2]));
		double least = spin;
		for (int s = 0; s < 600; ++s) {
			assert_int_equal(pbd_world_step(w), PBD_OK);
			double ob[3];
			body_axes_omega(w, id, ob);
			least = fmin(least, ob[axis]);
		}
		printf("spin %.1f rad/s about axis %d: least component along it over 10 s %.4g\n", spin, axis, least);
		if (axis == 1)
			assert_true(least < -0.9 * spin); /* flipped */
		else
			assert_true(least > 0.99 * spin); /* stable */
		pbd_world_destroy(w);
	}
}

/* 10 km from the origin a spinning, moving body follows the same path relative to its start as
 * the same body at the origin, to well under a millimetre after 5 s. */
static void test_far_from_origin(void** state) {
	(void)state;
	char msg[256] = "";
	const pbd_vec3 far = pbd_v3(10000, -10000, 10000);
	pbd_world* w = world(msg, 4);
	assert_int_equal(pbd_world_set_gravity(w, pbd_v3(0, (pbd_real)-9.81, 0)), PBD_OK);
	const pbd_vec3 omega = pbd_v3((pbd_real)0.3, 2, (pbd_real)-0.7);
	const pbd_body_id near_id = dynamic_box(w, 0.5, 1, 1.5, pbd_v3(0, 0, 0), omega);
	const pbd_body_id far_id = dynamic_box(w, 0.5, 1, 1.5, far, omega);
	assert_int_equal(pbd_body_set_velocity(w, near_id, pbd_v3(1, 3, 0), omega), PBD_OK);
	assert_int_equal(pbd_body_set_velocity(w, far_id, pbd_v3(1, 3, 0), omega), PBD_OK);
	for (int s = 0; s < 300; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_body_state a = state_of(w, near_id), b = state_of(w, far_id);
	const double dx = ((double)b.center.x - (double)far.x) - (double)a.center.x;
	const double dy = ((double)b.center.y - (double)far.y) - (double)a.center.y;
	const double dz = ((double)b.center.z - (double)far.z) - (double)a.center.z;
	/* The remainders are the body's own: the API rounds the centre to pbd_real, whose ulp at 10 km
	 * is 1 mm in float; the state behind it is compared through the momentum and the rotation. */
	const double ulp = TEST_TOL(1e-11, 1e-3);
	printf("far from the origin: centre difference (%.3g, %.3g, %.3g) m\n", dx, dy, dz);
	assert_true(fabs(dx) <= ulp && fabs(dy) <= ulp && fabs(dz) <= ulp);
	for (int k = 0; k < 3; ++k)
		assert_true(fabs(a.angular_momentum[k] - b.angular_momentum[k]) <= 1e-9 * norm3(a.angular_momentum));
	assert_true(fabs((double)a.pose.rotation.w - (double)b.pose.rotation.w) < 1e-12);
	pbd_world_destroy(w);
}

/* An impulse J at the corner r of a box: dv = J / m, dw = I^-1 (r x J) with the box's diagonal I. */
static void test_impulse(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = world(msg, 1);
	const pbd_body_id id = dynamic_box(w, 0.5, 1, 1.5, pbd_v3(2, 0, 0), pbd_v3(0, 0, 0));
	const pbd_mass_properties m = box_matter(0.5, 1, 1.5);
	const pbd_vec3 J = pbd_v3(0, 0, 10), at = pbd_v3((pbd_real)2.5, 1, 0);
	assert_int_equal(pbd_body_apply_impulse(w, id, J, at), PBD_OK);
	const pbd_body_state s = state_of(w, id);
	const double r[3] = {0.5, 1, 0}, j[3] = {0, 0, 10};
	const double t[3] = {r[1] * j[2] - r[2] * j[1], r[2] * j[0] - r[0] * j[2], r[0] * j[1] - r[1] * j[0]};
	assert_true(fabs((double)s.velocity.z - 10 / m.mass) < 1e-6 * 10 / m.mass);
	const double ew[3] = {t[0] / m.inertia[0], t[1] / m.inertia[1], t[2] / m.inertia[2]};
	const double got[3] = {(double)s.angular_velocity.x, (double)s.angular_velocity.y, (double)s.angular_velocity.z};
	for (int k = 0; k < 3; ++k) assert_true(fabs(got[k] - ew[k]) < 1e-5 * norm3(ew));
	/* A force at the centre for one step: dv = F h / m per substep, no spin. */
	assert_int_equal(pbd_body_apply_force(w, id, pbd_v3(m.mass, 0, 0), s.center), PBD_OK);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_body_state s1 = state_of(w, id);
	assert_true(fabs((double)s1.velocity.x - (double)pbd_world_get_def(w).dt) < 1e-6);
	/* Cleared by the step. */
	assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_true(fabs((double)state_of(w, id).velocity.x - (double)s1.velocity.x) < 1e-9);
	pbd_world_destroy(w);
}

static void test_kinematic(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = world(msg, 3);
	pbd_body_def d = pbd_body_def_default();
	d.type = PBD_BODY_KINEMATIC;
	d.velocity = pbd_v3(0, 0, 2);
	d.angular_velocity = pbd_v3(0, (pbd_real)(3.14159265358979323846 / 2), 0); /* a quarter turn per second */
	const pbd_body_id id = pbd_body_create(w, &d);
	assert_true(pbd_body_is_valid(w, id));
	for (int s = 0; s < 60; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_body_state s = state_of(w, id);
	const pbd_vec3 x = pbd_quat_rotate(s.pose.rotation, pbd_v3(1, 0, 0));
	assert_true(fabs((double)s.pose.position.z - 2) < 1e-5);
	assert_true(fabs((double)x.x) < 1e-5 && fabs((double)x.z + 1) < 1e-5); /* x turned to -z */
	assert_true(s.kinetic_energy == 0);
	/* A keyframe: the next step lands the frame on it, turned the short way (three quarters of a
	 * turn ahead is a quarter back). */
	pbd_pose key;
	key.position = pbd_v3(1, 2, 3);
	key.rotation =
	    pbd_quat_mul(pbd_quat_axis_angle(pbd_v3(0, 1, 0), (pbd_real)(3 * 3.14159265358979323846 / 2)), s.pose.rotation);
	assert_int_equal(pbd_body_move_to(w, id, key), PBD_OK);
	assert_true(state_of(w, id).angular_velocity.y < 0);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_body_state k = state_of(w, id);
	const pbd_quat dq = pbd_quat_mul(k.pose.rotation, pbd_quat_conj(key.rotation));
	printf("move_to: %.2e m from the key, turned %.2e rad off\n", tp_dist(k.pose.position, key.position),
	       2 * asin(fmin(1.0, sqrt((double)(dq.x * dq.x + dq.y * dq.y + dq.z * dq.z)))));
	assert_true(tp_dist(k.pose.position, key.position) < 1e-5);
	assert_true(fabs((double)dq.x) + fabs((double)dq.y) + fabs((double)dq.z) < 1e-5);
	/* only kinematic bodies follow keys; a jump past the speed limit is refused */
	key.position.x = (pbd_real)1e9;
	assert_int_equal(pbd_body_move_to(w, id, key), PBD_ERR_OUT_OF_RANGE);
	pbd_body_def dd = pbd_body_def_default();
	const pbd_body_id fixed = pbd_body_create(w, &dd);
	assert_int_equal(pbd_body_move_to(w, fixed, key), PBD_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "not kinematic"));
	pbd_world_destroy(w);
}

static void test_refusals(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = world(msg, 1);
	pbd_body_def d = pbd_body_def_default();
	d.type = PBD_BODY_DYNAMIC;
	assert_false(pbd_body_is_valid(w, pbd_body_create(w, &d))); /* no mass */
	assert_non_null(strstr(msg, "mass.mass"));
	d.mass = box_matter(1, 1, 1);
	d.mass.inertia[0] = 10 * d.mass.inertia[1]; /* no solid has it */
	assert_false(pbd_body_is_valid(w, pbd_body_create(w, &d)));
	assert_non_null(strstr(msg, "principal moments"));
	d.mass = box_matter(1, 1, 1);
	d.pose.position.x = (pbd_real)NAN;
	assert_false(pbd_body_is_valid(w, pbd_body_create(w, &d)));
	assert_non_null(strstr(msg, "pose.position"));
	d.pose.position.x = 0;
	d.linear_damping = -1;
	assert_false(pbd_body_is_valid(w, pbd_body_create(w, &d)));
	assert_non_null(strstr(msg, "damping"));
	pbd_body_def st = pbd_body_def_default();
	st.velocity = pbd_v3(1, 0, 0);
	assert_false(pbd_body_is_valid(w, pbd_body_create(w, &st)));
	assert_non_null(strstr(msg, "static"));
	assert_false(pbd_body_is_valid(w, pbd_body_create(w, NULL)));

	const pbd_body_id id = dynamic_box(w, 1, 1, 1, pbd_v3(0, 0, 0), pbd_v3(0, 0, 0));
	assert_int_equal(pbd_world_body_count(w), 1);
	assert_int_equal(pbd_body_apply_force(w, id, pbd_v3((pbd_real)INFINITY, 0, 0), pbd_v3(0, 0, 0)),
	                 PBD_ERR_NOT_FINITE);
	assert_int_equal(pbd_body_set_velocity(w, id, pbd_v3(1e6, 0, 0), pbd_v3(0, 0, 0)), PBD_ERR_OUT_OF_RANGE);
	/* New matter is checked as at creation, and only a dynamic body has any; moments past what
	 * float holds are refused, not stored as infinity. */
	pbd_mass_properties big = box_matter(1, 1, 1);
	for (int k = 0; k < 3; ++k) big.inertia[k] = 6.5e47;
	assert_int_equal(pbd_body_set_mass(w, id, &big), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "pbd_body_set_mass: mass.inertia has a principal moment"));
	d.mass = big;
	d.linear_damping = 0;
	assert_false(pbd_body_is_valid(w, pbd_body_create(w, &d)));
	assert_non_null(strstr(msg, "pbd_body_create: mass.inertia has a principal moment"));
	assert_int_equal(pbd_body_set_mass(w, id, NULL), PBD_ERR_INVALID_ARGUMENT);
	pbd_body_def still = pbd_body_def_default();
	const pbd_body_id ground = pbd_body_create(w, &still);
	const pbd_mass_properties unit = box_matter(1, 1, 1);
	assert_int_equal(pbd_body_set_mass(w, ground, &unit), PBD_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "not dynamic"));
	assert_int_equal(pbd_body_destroy(w, ground), PBD_OK);
	/* The force-based methods refuse a world with a dynamic body, with the reason. */
	assert_int_equal(pbd_world_set_method(w, PBD_METHOD_IMPLICIT_EULER), PBD_OK);
	assert_int_equal(pbd_world_step(w), PBD_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "rigid bodies"));
	assert_int_equal(pbd_world_set_method(w, PBD_METHOD_POSITION_BASED), PBD_OK);
	assert_int_equal(pbd_body_destroy(w, id), PBD_OK);
	assert_false(pbd_body_is_valid(w, id));
	assert_int_equal(pbd_body_destroy(w, id), PBD_ERR_INVALID_ARGUMENT);
	assert_int_equal(pbd_world_body_count(w), 0);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	pbd_world_destroy(w);
}

/* pbd_world_body_poses is a view: it shows each slot's frame after every step, as the state
 * does, without being fetched again; pbd_world_body_at walks the live slots, a destroyed one
 * giving the null id. A new mass keeps the frame where it is and moves the centre inside it. */
static void test_poses_view(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = world(msg, 4);
	assert_int_equal(pbd_world_set_gravity(w, pbd_v3(0, (pbd_real)-9.81, 0)), PBD_OK);
	const pbd_body_id a = dynamic_box(w, 0.2, 0.4, 0.6, pbd_v3(1, 2, 3), pbd_v3(0, 1, 0));
	const pbd_body_id b = dynamic_box(w, 0.5, 0.5, 0.5, pbd_v3(-1, 0, 0), pbd_v3(2, 0, 0));
	uint32_t slots = 0;
	const pbd_pose* poses = pbd_world_body_poses(w, &slots);
	assert_int_equal(slots, 2);
	for (int s = 0; s < 10; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_body_id ids[2] = {a, b};
	for (uint32_t k = 0; k < 2; ++k) {
		const pbd_body_state st = state_of(w, ids[k]);
		assert_memory_equal(&poses[k], &st.pose, sizeof st.pose);
		const pbd_body_id at = pbd_world_body_at(w, k);
		assert_true(at.index1 == ids[k].index1 && at.generation == ids[k].generation);
	}
	assert_int_equal(pbd_body_destroy(w, a), PBD_OK);
	assert_int_equal(pbd_world_body_at(w, 0).index1, 0);
	assert_int_equal(pbd_world_body_at(w, 2).index1, 0);
	/* the matter moved off the frame's origin: the frame stays, the centre follows the matter */
	const pbd_pose before = state_of(w, b).pose;
	pbd_mass_properties off = box_matter(0.5, 0.5, 0.5);
	off.center[0] = 0.1;
	assert_int_equal(pbd_body_set_mass(w, b, &off), PBD_OK);
	const pbd_body_state after = state_of(w, b);
	assert_memory_equal(&poses[1], &after.pose, sizeof after.pose);
	assert_true(tp_dist(after.pose.position, before.position) < 1e-6);
	assert_true(tp_dist(after.center, pbd_pose_apply(before, pbd_v3((pbd_real)0.1, 0, 0))) < 1e-6);
	pbd_world_destroy(w);
}

/* A world of bodies saved mid-motion resumes bit for bit: every body's state after 30 more steps
 * is the same in the original and the loaded world; a destroyed body's id stays stale there; a
 * forged body (its inverse mass out of range) is refused with its number. */
static void test_snapshot_resume(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = world(msg, 4);
	assert_int_equal(pbd_world_set_gravity(w, pbd_v3(0, (pbd_real)-9.81, 0)), PBD_OK);
	const pbd_body_id gone = dynamic_box(w, 0.2, 0.2, 0.2, pbd_v3(5, 0, 0), pbd_v3(0, 0, 0));
	const pbd_body_id spin = dynamic_box(w, 0.5, 1, 1.5, pbd_v3(1000, 20, -3), pbd_v3(2, (pbd_real)0.3, 1));
	pbd_body_def kd = pbd_body_def_default();
	kd.type = PBD_BODY_KINEMATIC;
	kd.velocity = pbd_v3(1, 0, 0);
	kd.angular_velocity = pbd_v3(0, 0, 3);
	const pbd_body_id kin = pbd_body_create(w, &kd);
	assert_true(pbd_body_is_valid(w, kin));
	assert_int_equal(pbd_body_destroy(w, gone), PBD_OK);
	for (int s = 0; s < 30; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_int_equal(pbd_body_apply_torque(w, spin, pbd_v3(0, 50, 0)), PBD_OK);
	size_t size = 0;
	assert_int_equal(pbd_world_save_memory(w, NULL, 0, &size), PBD_OK);
	unsigned char* buf = test_malloc(size);
	assert_int_equal(pbd_world_save_memory(w, buf, size, &size), PBD_OK);
	pbd_world* back = NULL;
	pbd_error err;
	if (pbd_world_load_memory(buf, size, NULL, &back, &err) != PBD_OK) fail_msg("load: %s", err.message);
	assert_int_equal(pbd_world_body_count(back), 2);
	assert_false(pbd_body_is_valid(back, gone));
	for (int s = 0; s < 30; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		assert_int_equal(pbd_world_step(back), PBD_OK);
	}
	const pbd_body_id ids[2] = {spin, kin};
	for (int k = 0; k < 2; ++k) {
		const pbd_body_state a = state_of(w, ids[k]), b = state_of(back, ids[k]);
		assert_memory_equal(&a, &b, sizeof a);
	}
	/* The inverse mass of the spinning body (slot 2 of 3, in the section before the count of
	 * shapes on bodies, the three bodies' sleep, the count of touching pairs, the kept contacts'
	 * block and the 8-byte hash)
	 * forged to a negative value, the hash resealed: refused, naming the body. */
	const size_t record = 4 * sizeof(uint32_t) + 8 * sizeof(pbd_vec3) + 2 * sizeof(pbd_quat) + 4 * sizeof(pbd_real);
	const size_t sleep = 2 * sizeof(pbd_real) + 3 * (2 * sizeof(uint32_t) + sizeof(pbd_real));
	const size_t at = size - 8 - TEST_SNAPSHOT_KEPT_NONE - 4 - sleep - 4 - 3 * record + record + 4 * sizeof(uint32_t) +
	                  3 * sizeof(pbd_vec3) + sizeof(pbd_quat) + sizeof(pbd_vec3);
	const pbd_real forged = -1;
	memcpy(buf + at, &forged, sizeof forged);
	test_snapshot_reseal(buf, size);
	pbd_world* bad = NULL;
	assert_int_equal(pbd_world_load_memory(buf, size, NULL, &bad, &err), PBD_ERR_PARSE);
	assert_null(bad);
	assert_non_null(strstr(err.message, "rigid body 2: inverse mass"));
	pbd_world_destroy(back);
	pbd_world_destroy(w);
	test_free(buf);
}

int main(void) {
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_free_fall),       cmocka_unit_test(test_torque_free_invariants),
	    cmocka_unit_test(test_dzhanibekov),     cmocka_unit_test(test_far_from_origin),
	    cmocka_unit_test(test_impulse),         cmocka_unit_test(test_kinematic),
	    cmocka_unit_test(test_refusals),        cmocka_unit_test(test_poses_view),
	    cmocka_unit_test(test_snapshot_resume),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
