/* Inputs at their limits. Kinematic motion is bounded where it enters (a collider's velocities,
 * however given, the targets of pinned particles and attachments): past PBD_MAX_KINEMATIC_SPEED
 * and PBD_MAX_KINEMATIC_ANGULAR_SPEED a call is refused with PBD_ERR_OUT_OF_RANGE and a message
 * naming the field and the value, and changes nothing; within them a collider turns by the exact
 * angle however fast, its rotation staying a unit quaternion. Geometry without a direction
 * (coincident particles held apart by a distance, a pinned particle's hard attachment) steps
 * under every method without a division by zero (the FP traps are on) and without a NaN. */
#include <float.h>
#include <stdio.h>
#include <string.h>

#include "methods/integrate.h"
#include "test_physics.h"
#include "model/world.h"

static double quat_norm(pbd_quat q) {
	return sqrt((double)q.x * q.x + (double)q.y * q.y + (double)q.z * q.z + (double)q.w * q.w);
}

/* |q - p| up to the sign (q and -q are the same rotation). */
static double quat_dist(pbd_quat q, pbd_quat p) {
	const double s = (double)q.x * p.x + (double)q.y * p.y + (double)q.z * p.z + (double)q.w * p.w < 0 ? -1 : 1;
	const double d[4] = {q.x - s * p.x, q.y - s * p.y, q.z - s * p.z, q.w - s * p.w};
	return sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + d[3] * d[3]);
}

static pbd_collider_def kinematic_ball(void) {
	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_SPHERE;
	cd.shape.sphere.radius = (pbd_real)0.5;
	cd.kind = PBD_ACTOR_KINEMATIC;
	return cd;
}

/* The call fails with PBD_ERR_OUT_OF_RANGE, and its message names `field` and holds `value`. */
#define EXPECT_OUT_OF_RANGE(msg, call, field, value)                                                                   \
	do {                                                                                                               \
		(msg)[0] = 0;                                                                                                  \
		const pbd_status st_ = (call);                                                                                 \
		if (st_ != PBD_ERR_OUT_OF_RANGE) fail_msg("%s: got '%s'", #call, pbd_status_string(st_));                      \
		if (!strstr((msg), (field)) || !strstr((msg), (value))) fail_msg("%s: message '%s'", #call, (msg));            \
	} while (0)

static void test_kinematic_velocities_bounded(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = test_world_keep(msg);

	/* The def: an angular velocity of FLT_MAX (whose rotation once overflowed to a zero and then
	 * NaN quaternion), a linear one of 1.7e15 m/s. */
	pbd_collider_def cd = kinematic_ball();
	cd.angular_velocity = pbd_v3(FLT_MAX, 0, 0);
	assert_int_equal(pbd_collider_create(w, &cd).index1, 0);
	if (!strstr(msg, "angular_velocity") || !strstr(msg, "rad/s")) fail_msg("create: '%s'", msg);
	cd = kinematic_ball();
	cd.velocity = pbd_v3(0, (pbd_real)-1.7e15, 0);
	assert_int_equal(pbd_collider_create(w, &cd).index1, 0);
	if (!strstr(msg, "velocity (0, -1.7") || !strstr(msg, "m/s")) fail_msg("create: '%s'", msg);
	assert_int_equal(pbd_world_collider_count(w), 0);

	/* At the bounds: accepted. */
	const pbd_real vmax = (pbd_real)PBD_MAX_KINEMATIC_SPEED, wmax = (pbd_real)PBD_MAX_KINEMATIC_ANGULAR_SPEED;
	cd = kinematic_ball();
	cd.velocity = pbd_v3(vmax, -vmax, 0);
	cd.angular_velocity = pbd_v3(-wmax, 0, wmax);
	const pbd_collider_id id = pbd_collider_create(w, &cd);
	assert_true(pbd_collider_is_valid(w, id));

	/* pbd_collider_set_velocity: refused, and the collider keeps its velocities. */
	EXPECT_OUT_OF_RANGE(msg, pbd_collider_set_velocity(w, id, pbd_v3(0, 0, 2 * vmax), pbd_v3(0, 0, 0)), "velocity",
	                    "200000");
	EXPECT_OUT_OF_RANGE(msg, pbd_collider_set_velocity(w, id, pbd_v3(0, 0, 0), pbd_v3(FLT_MAX, 0, 0)),
	                    "angular_velocity", "3.40282");
	pbd_collider_def got;
	assert_int_equal(pbd_collider_get_def(w, id, &got), PBD_OK);
	assert_true(got.velocity.x == vmax && got.velocity.y == -vmax && got.angular_velocity.z == wmax);

	/* pbd_collider_move_to: a keyframe 1e6 m away in 1/60 s, or a quarter turn in 1e-9 s. */
	pbd_pose far = got.pose;
	far.position.x += (pbd_real)1e6;
	EXPECT_OUT_OF_RANGE(msg, pbd_collider_move_to(w, id, far), "velocity (", "m/s: each component");
	assert_int_equal(pbd_world_set_dt(w, (pbd_real)1e-9), PBD_OK);
	pbd_pose turned = got.pose;
	turned.rotation = (pbd_quat){0, (pbd_real)sqrt(0.5), 0, (pbd_real)sqrt(0.5)};
	EXPECT_OUT_OF_RANGE(msg, pbd_collider_move_to(w, id, turned), "angular_velocity", "rad/s");
	assert_int_equal(pbd_collider_get_def(w, id, &got), PBD_OK);
	assert_true(got.velocity.x == vmax && got.angular_velocity.z == wmax);
	assert_int_equal(pbd_world_set_dt(w, (pbd_real)(1.0 / 60)), PBD_OK);

	/* A pinned particle's target and an attachment's point move as fast at most. */
	const pbd_vec3 x[2] = {{5, 0, 0}, {6, 0, 0}};
	const pbd_real inv[2] = {0, 1};
	assert_int_equal(pbd_world_add_particles(w, 2, x, NULL, inv, NULL), PBD_OK);
	EXPECT_OUT_OF_RANGE(msg, pbd_particle_set_target(w, 0, pbd_v3(5, (pbd_real)1e30, 0)), "target", "m/s");
	EXPECT_OUT_OF_RANGE(msg, pbd_particle_set_target(w, 0, pbd_v3(FLT_MAX, 0, 0)), "target", "m/s");
	assert_int_equal(pbd_particle_set_target(w, 0, pbd_v3(5, 1, 0)), PBD_OK); /* 60 m/s */
	pbd_attachment_def ad = pbd_attachment_def_default();
	ad.particle = 1;
	ad.target = x[1];
	assert_int_equal(pbd_world_add_attachments(w, 1, &ad, NULL), PBD_OK);
	EXPECT_OUT_OF_RANGE(msg, pbd_world_set_attachment_target(w, 0, pbd_v3(-FLT_MAX, 0, 0)), "target", "m/s");
	assert_int_equal(pbd_world_get_attachment(w, 0, &ad), PBD_OK);
	assert_true(ad.target.x == 6);
	assert_int_equal(pbd_world_set_attachment_target(w, 0, pbd_v3(6, 1, 0)), PBD_OK);
	for (int s = 0; s < 10; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_true(tp_all_finite(w));
	pbd_world_destroy(w);
}

/* A collider spinning at the bounds, under the longest step: its rotation stays a unit quaternion
 * and every state finite, with particles around it. */
static void test_kinematic_at_the_bounds(void** state) {
	(void)state;
	for (int long_step = 0; long_step < 2; ++long_step) {
		pbd_world_def def = pbd_world_def_default();
		def.dt = long_step ? (pbd_real)PBD_MAX_DT : (pbd_real)(1.0 / 60);
		def.gravity = pbd_v3(0, 0, 0);
		pbd_world* w = test_world(&def);
		pbd_collider_def cd = kinematic_ball();
		const pbd_real wmax = (pbd_real)PBD_MAX_KINEMATIC_ANGULAR_SPEED;
		cd.angular_velocity = pbd_v3(wmax, -wmax, wmax);
		const pbd_collider_id id = pbd_collider_create(w, &cd);
		assert_true(pbd_collider_is_valid(w, id));
		const pbd_vec3 x[2] = {{0, 2, 0}, {0, -2, 0}};
		const pbd_real inv[2] = {1, 1};
		assert_int_equal(pbd_world_add_particles(w, 2, x, NULL, inv, NULL), PBD_OK);
		for (int s = 0; s < 50; ++s) {
			assert_int_equal(pbd_world_step(w), PBD_OK);
			pbd_collider_def got;
			assert_int_equal(pbd_collider_get_def(w, id, &got), PBD_OK);
			assert_true(pbd_quat_is_finite(got.pose.rotation));
			assert_near(quat_norm(got.pose.rotation), 1, 1e-6);
		}
		assert_true(tp_all_finite(w));
		pbd_world_destroy(w);
	}
}

/* The substeps turn a collider by the exact angle |w| h: half a turn at pi rad/s in 60 steps of
 * 1/60 s ends at the half turn to rounding, and pbd_collider_move_to's quarter turn arrives in one
 * step of 4 substeps. (The first-order update q + h/2 (w, 0) q fell short by theta^3 / 12 per
 * substep: 3e-4 and 5e-3 here.) */
static void test_kinematic_rotation_is_exact(void** state) {
	(void)state;
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, 0, 0);
	pbd_world* w = test_world(&def);
	pbd_collider_def cd = kinematic_ball();
	cd.angular_velocity = pbd_v3(0, (pbd_real)3.14159265358979323846, 0);
	const pbd_collider_id id = pbd_collider_create(w, &cd);
	for (int s = 0; s < 60; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	pbd_collider_def got;
	assert_int_equal(pbd_collider_get_def(w, id, &got), PBD_OK);
	const double half_turn = quat_dist(got.pose.rotation, (pbd_quat){0, 1, 0, 0});
	printf("  pi rad/s for 1 s: %.2g from the half turn\n", half_turn);
	assert_true(half_turn < TEST_TOL(1e-12, 1e-5));

	assert_int_equal(pbd_world_set_substeps(w, 4), PBD_OK);
	const double s2 = sqrt(0.5);
	pbd_pose target = got.pose;
	const pbd_quat quarter = {(pbd_real)0.5, (pbd_real)0.5, 0, (pbd_real)s2}; /* about (1, 1, 0) */
	target.rotation = pbd_quat_mul(quarter, got.pose.rotation);
	assert_int_equal(pbd_collider_move_to(w, id, target), PBD_OK);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_int_equal(pbd_collider_get_def(w, id, &got), PBD_OK);
	const double arrival = quat_dist(got.pose.rotation, target.rotation);
	printf("  a quarter turn by move_to in 4 substeps: %.2g from the keyframe\n", arrival);
	assert_true(arrival < TEST_TOL(1e-12, 1e-5));
	pbd_world_destroy(w);
}

/* Two coincident particles held apart by a distance (rest 0.5 m, or the measured 0), hard or a
 * spring, one pinned or both free; and a pinned particle's hard attachment. Every method steps
 * them without a division by zero and without a NaN. */
static void test_coincident_particles(void** state) {
	(void)state;
	for (int m = 0; m < PBD_METHOD_COUNT; ++m) {
		for (int variant = 0; variant < 8; ++variant) {
			pbd_world_def def = pbd_world_def_default();
			def.method = (pbd_method)m;
			def.substeps = 2;
			pbd_world* w = test_world(&def);
			const pbd_vec3 x[3] = {{0, 1, 0}, {0, 1, 0}, {1, 1, 0}};
			const pbd_real inv[3] = {variant & 1 ? 0 : 1, 1, 0};
			assert_int_equal(pbd_world_add_particles(w, 3, x, NULL, inv, NULL), PBD_OK);
			pbd_distance_def dd = pbd_distance_def_default();
			dd.a = 0;
			dd.b = 1;
			dd.rest = variant & 2 ? (pbd_real)0.5 : -1;
			if (variant & 4) dd.compliance_stretch = dd.compliance_compress = (pbd_real)1e-3;
			assert_int_equal(pbd_world_add_distances(w, 1, &dd, NULL), PBD_OK);
			pbd_attachment_def ad = pbd_attachment_def_default();
			ad.particle = 2;
			ad.target = x[2];
			ad.rest = (pbd_real)0.1;
			assert_int_equal(pbd_world_add_attachments(w, 1, &ad, NULL), PBD_OK);
			for (int s = 0; s < 20; ++s) {
				const pbd_status st = pbd_world_step(w);
				if (st != PBD_OK)
					fail_msg("%s, variant %d, step %d: %s", pbd_method_name((pbd_method)m), variant, s,
					         pbd_world_last_error(w));
			}
			assert_true(tp_all_finite(w));
			assert_int_equal(pbd_world_get_warning(w, PBD_WARN_NONFINITE).count, 0);
			pbd_world_destroy(w);
		}
	}
}

/* Vertex block descent with a hard link (rest 0.5 m) whose ends coincide while its multiplier
 * pulls (lam > 0, as a stretched link has it when its ends are brought together, by a teleport or
 * a crossing): the link has no direction to pull along and the vertex's Newton step must not
 * divide by its zero length. */
static void test_vbd_pulling_link_with_coincident_ends(void** state) {
	(void)state;
	pbd_world_def def = pbd_world_def_default();
	def.method = PBD_METHOD_VBD;
	def.gravity = pbd_v3(0, 0, 0); /* nothing moves the ends apart before the sweep */
	pbd_world* w = test_world(&def);
	const pbd_vec3 x[2] = {{0, 1, 0}, {0, 0, 0}};
	const pbd_real inv[2] = {0, 1};
	assert_int_equal(pbd_world_add_particles(w, 2, x, NULL, inv, NULL), PBD_OK);
	pbd_distance_def dd = pbd_distance_def_default();
	dd.a = 0;
	dd.b = 1;
	dd.rest = (pbd_real)0.5;
	assert_int_equal(pbd_world_add_distances(w, 1, &dd, NULL), PBD_OK);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_int_equal(w->integ->rows.n, 1);
	assert_true(w->integ->lam[0] > 0); /* stretched: it pulls */
	const pbd_vec3 zero = {0, 0, 0};
	assert_int_equal(pbd_world_set_positions(w, 1, 1, &x[0]), PBD_OK);
	assert_int_equal(pbd_world_set_velocities(w, 1, 1, &zero), PBD_OK);
	w->integ->lam[0] = (pbd_real)1e6; /* far more than its penalty pushes with at a zero length */
	for (int s = 0; s < 10; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_true(tp_all_finite(w));
	assert_int_equal(pbd_world_get_warning(w, PBD_WARN_NONFINITE).count, 0);
	pbd_world_destroy(w);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kinematic_velocities_bounded),          cmocka_unit_test(test_kinematic_at_the_bounds),
	    cmocka_unit_test(test_kinematic_rotation_is_exact),           cmocka_unit_test(test_coincident_particles),
	    cmocka_unit_test(test_vbd_pulling_link_with_coincident_ends),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
