/* Sleeping (src/world/sleep.c): a box dropped on the floor comes to rest and falls asleep, and
 * stays exactly where it fell asleep; a stack sleeps as one island, costs no contact while asleep,
 * and wakes as one when a ball lands on it or an impulse hits one of its boxes; a pendulum on a
 * hinge sleeps and its motor wakes it; a moving kinematic paddle wakes what it reaches; sleep_time
 * 0 keeps everything awake; the result is the same on one and two threads and after a snapshot
 * taken while asleep. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_physics.h"

static const double g = 9.81;

static pbd_world* sleepy_world(char* msg, int threads, double sleep_time) {
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, (pbd_real)-g, 0);
	def.substeps = 10;
	def.iterations = 2;
	def.threads = threads;
	def.sleep_time = (pbd_real)sleep_time;
	def.log = test_log_keep;
	def.log_user = msg;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	pbd_collider_def floor = pbd_collider_def_default();
	floor.static_friction = floor.kinetic_friction = (pbd_real)0.6;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &floor)));
	return w;
}

static pbd_body_id shape_body(pbd_world* w, pbd_collider_def shape, pbd_vec3 at) {
	shape.static_friction = shape.kinetic_friction = (pbd_real)0.6;
	const pbd_collider_id probe = pbd_collider_create(w, &shape);
	assert_true(pbd_collider_is_valid(w, probe));
	pbd_body_def bd = pbd_body_def_default();
	bd.type = PBD_BODY_DYNAMIC;
	assert_int_equal(pbd_collider_mass_properties(w, probe, 500, &bd.mass), PBD_OK);
	assert_int_equal(pbd_collider_destroy(w, probe), PBD_OK);
	bd.pose.position = at;
	const pbd_body_id b = pbd_body_create(w, &bd);
	assert_true(pbd_body_is_valid(w, b));
	shape.body = b;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &shape)));
	return b;
}

static pbd_body_id cube(pbd_world* w, double half, pbd_vec3 at) {
	pbd_collider_def d = pbd_collider_def_default();
	d.type = PBD_SHAPE_BOX;
	d.shape.box.half_extents = pbd_v3((pbd_real)half, (pbd_real)half, (pbd_real)half);
	return shape_body(w, d, at);
}

static pbd_body_id ball(pbd_world* w, double r, pbd_vec3 at) {
	pbd_collider_def d = pbd_collider_def_default();
	d.type = PBD_SHAPE_SPHERE;
	d.shape.sphere.center = pbd_v3(0, 0, 0);
	d.shape.sphere.radius = (pbd_real)r;
	return shape_body(w, d, at);
}

static pbd_body_state state_of(pbd_world* w, pbd_body_id id) {
	pbd_body_state s;
	assert_int_equal(pbd_body_get_state(w, id, &s), PBD_OK);
	return s;
}

/* Steps until the body falls asleep; returns the step, or -1. */
static int until_asleep(pbd_world* w, pbd_body_id id, int steps) {
	for (int s = 1; s <= steps; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		if (state_of(w, id).asleep) return s;
	}
	return -1;
}

/* A cube dropped 10 cm falls asleep once it has been still for sleep_time, and then does not
 * move by a bit; with sleep_time 0 it never sleeps. */
static void test_resting_box_sleeps(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = sleepy_world(msg, 1, 0.5);
	const pbd_body_id b = cube(w, 0.1, pbd_v3(0, (pbd_real)0.2, 0));
	const int fell = until_asleep(w, b, 240);
	const pbd_body_state at = state_of(w, b);
	for (int s = 0; s < 60; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_body_state later = state_of(w, b);
	printf("  a cube dropped 10 cm falls asleep at step %d (y = %.5f m); 1 s later it is where it slept: %d\n", fell,
	       (double)at.center.y, memcmp(&at.pose, &later.pose, sizeof at.pose) == 0);
	assert_true(fell > 30 && fell < 150);
	assert_true(fabs((double)at.center.y - 0.1) < 2e-3);
	assert_memory_equal(&at.pose, &later.pose, sizeof at.pose);
	assert_true(later.asleep);
	assert_true(tp_len(later.velocity) == 0);
	assert_int_equal(pbd_world_get_body_contacts(w, NULL, 0), 0);
	pbd_world_destroy(w);

	w = sleepy_world(msg, 1, 0);
	const pbd_body_id awake = cube(w, 0.1, pbd_v3(0, (pbd_real)0.2, 0));
	assert_int_equal(until_asleep(w, awake, 240), -1);
	assert_true(pbd_world_get_body_contacts(w, NULL, 0) > 0);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* Three cubes stacked fall asleep in the same step; a ball dropped on the top one wakes all three
 * (they are one island), and an impulse on the bottom one after they slept again wakes them too. */
static void test_stack_sleeps_and_wakes_as_one(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = sleepy_world(msg, 1, 0.5);
	pbd_body_id box[3];
	for (int k = 0; k < 3; ++k) box[k] = cube(w, 0.1, pbd_v3(0, (pbd_real)(0.1 + 0.2 * k), 0));
	const int slept = until_asleep(w, box[2], 300);
	assert_true(slept > 0);
	for (int k = 0; k < 3; ++k) assert_true(state_of(w, box[k]).asleep);
	const pbd_body_id b = ball(w, 0.05, pbd_v3(0, 1, 0));
	int woke = -1;
	for (int s = 1; s <= 60 && woke < 0; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		if (!state_of(w, box[0]).asleep) woke = s;
	}
	bool all = true;
	for (int k = 0; k < 3; ++k) all = all && !state_of(w, box[k]).asleep;
	const double fall_time = sqrt(2 * (1 - 0.05 - 0.6) / g);
	printf("  three cubes sleep at step %d; a ball dropped from 1 m wakes the stack at step %d (it lands after "
	       "%.1f steps)\n",
	       slept, woke, fall_time * 60);
	assert_true(woke > 0 && fabs(woke - fall_time * 60) < 3);
	assert_true(all);
	/* the ball rests on the stack; all four sleep, then a push on the bottom cube wakes them */
	assert_true(until_asleep(w, b, 300) > 0);
	for (int k = 0; k < 3; ++k) assert_true(state_of(w, box[k]).asleep);
	assert_int_equal(pbd_body_apply_impulse(w, box[0], pbd_v3(1, 0, 0), state_of(w, box[0]).center), PBD_OK);
	for (int k = 0; k < 3; ++k) assert_false(state_of(w, box[k]).asleep);
	assert_false(state_of(w, b).asleep);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* A rod hanging still on a hinge falls asleep; setting its motor wakes it and it turns. */
static void test_joint_motor_wakes(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = sleepy_world(msg, 1, 0.5);
	pbd_collider_def rod = pbd_collider_def_default();
	rod.type = PBD_SHAPE_BOX;
	rod.shape.box.half_extents = pbd_v3((pbd_real)0.02, (pbd_real)0.25, (pbd_real)0.02);
	const pbd_body_id b = shape_body(w, rod, pbd_v3(0, (pbd_real)1.75, 0));
	pbd_joint_def d = pbd_joint_def_default();
	d.type = PBD_JOINT_HINGE;
	d.body_b = b;
	const pbd_quat xz = pbd_quat_axis_angle(pbd_v3(0, 1, 0), (pbd_real)(-TP_PI / 2));
	d.frame_a = (pbd_pose){pbd_v3(0, 2, 0), xz};
	d.frame_b = (pbd_pose){pbd_v3(0, (pbd_real)0.25, 0), xz};
	assert_int_equal(pbd_world_add_joints(w, 1, &d, NULL), PBD_OK);
	assert_true(until_asleep(w, b, 120) > 0);
	assert_int_equal(pbd_world_set_joint_motor(w, 0, PBD_MOTOR_VELOCITY, 2, 50, 0), PBD_OK);
	assert_false(state_of(w, b).asleep);
	for (int s = 0; s < 30; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_body_state st = state_of(w, b);
	assert_false(st.asleep);
	assert_true(fabs((double)st.angular_velocity.z - 2) < 0.05);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* A kinematic paddle sweeping along the floor wakes the sleeping cube it reaches and pushes it. */
static void test_kinematic_wakes(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = sleepy_world(msg, 1, 0.5);
	const pbd_body_id b = cube(w, 0.1, pbd_v3(0, (pbd_real)0.1, 0));
	assert_true(until_asleep(w, b, 240) > 0);
	pbd_body_def kd = pbd_body_def_default();
	kd.type = PBD_BODY_KINEMATIC;
	kd.pose.position = pbd_v3(-1, (pbd_real)0.1, 0);
	kd.velocity = pbd_v3(1, 0, 0);
	const pbd_body_id paddle = pbd_body_create(w, &kd);
	pbd_collider_def pd = pbd_collider_def_default();
	pd.type = PBD_SHAPE_BOX;
	pd.shape.box.half_extents = pbd_v3((pbd_real)0.05, (pbd_real)0.1, (pbd_real)0.3);
	pd.body = paddle;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &pd)));
	for (int s = 0; s < 60; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_body_state st = state_of(w, b);
	printf("  a paddle at 1 m/s reaches a sleeping cube after 0.85 s: after 1 s the cube is at x = %.3f m, asleep %d\n",
	       (double)st.center.x, st.asleep);
	assert_false(st.asleep);
	assert_true((double)st.center.x > 0.1);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* A heap of cubes and balls with sleeping on: the same bits on one and two threads, and a world
 * saved while part of it sleeps resumes in the same bits. */
static void test_threads_and_snapshot(void** state) {
	(void)state;
	char msg[256] = "";
	uint64_t hash[2];
	for (int t = 0; t < 2; ++t) {
		pbd_world* w = sleepy_world(msg, t + 1, 0.3);
		for (int k = 0; k < 12; ++k) {
			const pbd_vec3 at =
			    pbd_v3((pbd_real)(0.07 * (k % 3)), (pbd_real)(0.15 + 0.25 * k), (pbd_real)(0.05 * (k % 2)));
			if (k % 2)
				ball(w, 0.08, at);
			else
				cube(w, 0.08, at);
		}
		for (int s = 0; s < 150; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
		if (t == 0) {
			static unsigned char buf[1 << 16];
			size_t size = 0;
			assert_int_equal(pbd_world_save_memory(w, buf, sizeof buf, &size), PBD_OK);
			pbd_world_def def = pbd_world_get_def(w);
			pbd_world* v = NULL;
			pbd_error err;
			assert_int_equal(pbd_world_load_memory(buf, size, &def, &v, &err), PBD_OK);
			for (int s = 0; s < 90; ++s) {
				assert_int_equal(pbd_world_step(w), PBD_OK);
				assert_int_equal(pbd_world_step(v), PBD_OK);
			}
			assert_true(pbd_world_hash(w) == pbd_world_hash(v));
			pbd_world_destroy(v);
			hash[t] = pbd_world_hash(w);
		} else {
			for (int s = 0; s < 90; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
			hash[t] = pbd_world_hash(w);
		}
		uint32_t asleep = 0;
		for (uint32_t k = 0; k < pbd_world_body_count(w); ++k) asleep += state_of(w, pbd_world_body_at(w, k)).asleep;
		if (t == 0) printf("  a heap of 12 after 4 s: %u asleep\n", asleep);
		assert_string_equal(msg, "");
		pbd_world_destroy(w);
	}
	assert_true(hash[0] == hash[1]);
}

/* Particles do not sleep, so what they touch or hold stays awake: a cube with a grain resting on
 * it, and a cube holding a pendulum of one particle on an attachment, never fall asleep, while
 * the same cube alone does; a grain dropped onto a sleeping cube wakes it as it lands. */
static void test_particles_keep_bodies_awake(void** state) {
	(void)state;
	char msg[256] = "";
	const int steps = 240; /* 4 s: a cube alone sleeps within 2.5 s (test_resting_box_sleeps) */
	for (int kind = 0; kind < 3; ++kind) {
		pbd_world* w = sleepy_world(msg, 1, 0.5);
		const pbd_body_id b = cube(w, 0.1, pbd_v3(0, (pbd_real)0.2, 0));
		uint32_t first = 0;
		if (kind == 1) {
			/* a 10 g grain 1 cm over the cube's top face, which falls with it */
			const pbd_vec3 at = pbd_v3(0, (pbd_real)0.31, 0);
			const pbd_real mass = (pbd_real)0.01;
			assert_int_equal(pbd_world_add_particles_mass(w, 1, &at, NULL, &mass, &first), PBD_OK);
		} else if (kind == 2) {
			/* a 10 g bob 0.3 m from the cube's side on an attachment of that length, swinging */
			const pbd_vec3 at = pbd_v3((pbd_real)0.4, (pbd_real)0.2, 0);
			const pbd_real mass = (pbd_real)0.01;
			assert_int_equal(pbd_world_add_particles_mass(w, 1, &at, NULL, &mass, &first), PBD_OK);
			pbd_attachment_def ad = pbd_attachment_def_default();
			ad.particle = first;
			ad.body = b;
			ad.target = pbd_v3((pbd_real)0.1, 0, 0);
			ad.rest = (pbd_real)0.3;
			assert_int_equal(pbd_world_add_attachments(w, 1, &ad, NULL), PBD_OK);
		}
		const int fell = until_asleep(w, b, steps);
		const pbd_body_state end = state_of(w, b);
		printf("  a cube %s: %s\n",
		       kind == 0   ? "alone"
		       : kind == 1 ? "with a grain on it"
		                   : "holding a swinging bob",
		       fell < 0 ? "awake after 4 s" : "asleep");
		assert_true(kind == 0 ? fell > 0 : fell < 0);
		assert_true(kind == 0 || !end.asleep);
		if (kind == 1) {
			/* the grain rests on the cube: it did not fall through nor slide off */
			pbd_vec3 x;
			assert_int_equal(pbd_world_get_positions(w, first, 1, &x), PBD_OK);
			assert_true(fabs((double)x.y - 0.2) < 0.01 && fabs((double)x.x) < 0.01);
		}
		if (kind == 0) {
			/* now a grain dropped from 10 cm above the sleeping cube wakes it when it lands */
			const pbd_vec3 at = pbd_v3(0, (pbd_real)0.3, 0);
			const pbd_real mass = (pbd_real)0.01;
			assert_int_equal(pbd_world_add_particles_mass(w, 1, &at, NULL, &mass, &first), PBD_OK);
			int woke = -1;
			for (int s = 1; s <= 60 && woke < 0; ++s) {
				assert_int_equal(pbd_world_step(w), PBD_OK);
				if (!state_of(w, b).asleep) woke = s;
			}
			/* it falls 10 cm in sqrt(2 * 0.1 / g) = 0.143 s, step 9 of 1/60 s */
			printf("  a grain dropped 10 cm onto the sleeping cube wakes it at step %d\n", woke);
			assert_true(woke >= 7 && woke <= 11);
		}
		assert_string_equal(msg, "");
		pbd_world_destroy(w);
	}
}

static void test_refusals(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world_def def = pbd_world_def_default();
	def.log = test_log_keep;
	def.log_user = msg;
	def.sleep_time = -1;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "sleep_time"));
	def.sleep_time = (pbd_real)0.5;
	def.sleep_speed = NAN;
	assert_int_equal(pbd_world_create(&def, &w), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "sleep_speed"));
	msg[0] = 0;
	w = sleepy_world(msg, 1, 0.5);
	pbd_body_def sd = pbd_body_def_default();
	const pbd_body_id fixed = pbd_body_create(w, &sd);
	assert_int_equal(pbd_body_set_asleep(w, fixed, true), PBD_ERR_INVALID_ARGUMENT);
	const pbd_body_id b = cube(w, 0.1, pbd_v3(0, 1, 0));
	assert_int_equal(pbd_body_set_asleep(w, b, true), PBD_OK);
	assert_true(state_of(w, b).asleep);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_true(fabs((double)state_of(w, b).center.y - 1) < 1e-6); /* asleep in the air, as asked */
	assert_int_equal(pbd_body_set_asleep(w, b, false), PBD_OK);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_true((double)state_of(w, b).center.y < 1);
	pbd_world_destroy(w);
}

int main(void) {
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_resting_box_sleeps),          cmocka_unit_test(test_stack_sleeps_and_wakes_as_one),
	    cmocka_unit_test(test_joint_motor_wakes),           cmocka_unit_test(test_kinematic_wakes),
	    cmocka_unit_test(test_threads_and_snapshot),        cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_particles_keep_bodies_awake),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
