/* The soft step for body contacts (PBD_BODY_SOLVER_SOFT_STEP, src/collision/rigid_soft.c),
 * against closed forms: a ball dropped on a floor bounces to e² of its height; a cube sliding on
 * the floor stops after v² / (2 μ g); a cube on a slope stays below tan θ = μ and slides with
 * a = g (sin θ − μ cos θ) above it; two balls meeting in free space keep their linear momentum; a
 * ball at 50 m/s stops before a 1 cm plate. A soft contact is a spring: a column of cubes sinks
 * under its own weight by about g / (2 π f)² per unit of load over mass, so doubling the contact's
 * frequency quarters the sag; twenty cubes stacked and a pyramid of 55 stand; the impulses the
 * contacts carry from step to step travel in snapshots, so that a resumed world goes on bit for
 * bit, and the result is the same on any number of threads; a stack falls asleep and wakes when a
 * ball lands on it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/world.h"
#include "test_bodies.h"

static const double G = 9.81;

static pbd_world* soft_world(char* msg, int substeps, double hertz, int threads) {
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, (pbd_real)-G, 0);
	def.substeps = substeps;
	def.iterations = 1;
	def.body_solver = PBD_BODY_SOLVER_SOFT_STEP;
	def.contact_hertz = (pbd_real)hertz;
	def.sleep_time = 0;
	def.threads = threads;
	def.log = test_log_keep;
	def.log_user = msg;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	return w;
}

/* A ball of restitution e dropped from h0 rises to e² h0 after its first bounce. */
static void test_ball_bounces(void** state) {
	(void)state;
	char msg[256] = "";
	const double r = 0.1, h0 = 1, e = 0.8;
	pbd_world* w = soft_world(msg, 4, 0, 1);
	double lowest;
	const double apex = ball_apex(w, r, h0, e, &lowest);
	printf("  soft step, ball of restitution %.1f dropped from %.2f m: rises to %.4f m (e² h = %.4f), lowest %.2g m\n",
	       e, h0, apex, e * e * h0, lowest);
	assert_true(fabs(apex - e * e * h0) < 0.02 * e * e * h0);
	assert_true(lowest > -2e-3);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* A cube sliding at v0 on a floor stops after v0² / (2 mu g). */
static void test_box_slides_to_a_stop(void** state) {
	(void)state;
	char msg[256] = "";
	const double half = 0.1, mu = 0.4, v0 = 2, expect = v0 * v0 / (2 * mu * G);
	pbd_world* w = soft_world(msg, 4, 0, 1);
	floor_with(w, pbd_v3(0, 1, 0), mu, 0);
	const pbd_body_id b = body_with(w, material(box_shape(half), mu, 0), at(0, half, 0), pbd_v3((pbd_real)v0, 0, 0));
	for (int s = 0; s < 120; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_body_state st = state_of(w, b);
	const double travelled = (double)st.pose.position.x;
	printf("  soft step, cube sliding at %.1f m/s, mu %.1f: stops after %.4f m (v²/(2 mu g) = %.4f), speed %.2g m/s\n",
	       v0, mu, travelled, expect, (double)pbd_v3_length(st.velocity));
	assert_true(fabs(travelled - expect) < 0.02 * expect);
	assert_true((double)pbd_v3_length(st.velocity) < 1e-3);
	assert_true(fabs((double)st.pose.position.y - half) < 1e-3);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* The cube of slope_speeds at 4 substeps. */
static void slope(double theta, double mu, double* v1, double* v2) {
	char msg[256] = "";
	pbd_world* w = soft_world(msg, 4, 0, 1);
	slope_speeds(w, theta, mu, v1, v2);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

static void test_box_on_slope(void** state) {
	(void)state;
	const double mu = 0.5, gentle = 0.4, steep = 0.7; /* tan 0.4 = 0.42 < mu < tan 0.7 = 0.84 */
	double v1, v2;
	slope(gentle, mu, &v1, &v2);
	printf("  soft step, cube on a %.0f° slope, mu %.1f: %.2g m/s after 0.5 s, %.2g m/s after 1.5 s\n",
	       gentle * 180 / TP_PI, mu, v1, v2);
	assert_true(fabs(v2) < 1e-3);
	slope(steep, mu, &v1, &v2);
	const double a = (v2 - v1) / 1.0, expect = G * (sin(steep) - mu * cos(steep));
	printf("  soft step, cube on a %.0f° slope, mu %.1f: slides at %.4f m/s² (g (sin - mu cos) = %.4f)\n",
	       steep * 180 / TP_PI, mu, a, expect);
	assert_true(fabs(a - expect) < 0.02 * expect);
}

/* Two balls meeting off-centre in free space: each impulse acts on both at one point, so the
 * pair's linear momentum stays as it was, to rounding. */
static void test_balls_keep_momentum(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = soft_world(msg, 4, 0, 1);
	pbd_world_set_gravity(w, pbd_v3(0, 0, 0));
	const pbd_collider_def ball = material(ball_shape(0.2), 0.3, 1);
	const pbd_body_id a = body_with(w, ball, at(-1, 0, 0), pbd_v3(3, 0, 0));
	const pbd_body_id b = body_with(w, ball, at(1, 0.15, 0.1), pbd_v3(-1, 0, 0));
	const double m = (double)state_of(w, a).mass;
	const double p0 = m * (3 - 1);
	double touched = 0;
	for (int s = 0; s < 60; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		touched = fmax(touched, fabs((double)state_of(w, b).velocity.y));
	}
	const pbd_vec3 va = state_of(w, a).velocity, vb = state_of(w, b).velocity;
	const double px = m * ((double)va.x + (double)vb.x), py = m * ((double)va.y + (double)vb.y),
	             pz = m * ((double)va.z + (double)vb.z);
	printf("  soft step, two balls meeting off-centre: momentum (%.6g, %.3g, %.3g) kg m/s of (%.6g, 0, 0)\n", px, py,
	       pz, p0);
	assert_true(touched > 0.1); /* they met */
	assert_true(fabs(px - p0) < 1e-4 * fabs(p0));
	assert_true(fabs(py) < 1e-4 * fabs(p0) && fabs(pz) < 1e-4 * fabs(p0));
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* A ball of 5 cm at 50 m/s at a fixed plate 1 cm thick stops before it. */
static void test_fast_ball_stops_at_a_plate(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = soft_world(msg, 4, 0, 1);
	pbd_world_set_gravity(w, pbd_v3(0, 0, 0));
	pbd_collider_def plate = box3_shape(0.005, 1, 1);
	plate.pose = at(1, 0, 0);
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &plate)));
	const pbd_body_id b = body_with(w, ball_shape(0.05), at(0, 0, 0), pbd_v3(50, 0, 0));
	double furthest = 0;
	for (int s = 0; s < 30; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		furthest = fmax(furthest, (double)state_of(w, b).pose.position.x);
	}
	printf("  soft step, ball at 50 m/s at a 1 cm plate: its centre reached x = %.4f m (the plate's face at "
	       "%.3f)\n",
	       furthest, 0.995);
	assert_true(furthest < 0.995 - 0.05 + 2e-3);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* A column of `count` cubes of 0.5 m at rest on a floor for 2 s: how far the top one sank. */
static double column_sag(int count, int substeps, double hertz) {
	char msg[256] = "";
	pbd_world* w = soft_world(msg, substeps, hertz, 1);
	floor_with(w, pbd_v3(0, 1, 0), 0.5, 0);
	const double half = 0.25;
	pbd_body_id top = {0, 0};
	for (int k = 0; k < count; ++k)
		top = body_with(w, material(box_shape(half), 0.5, 0), at(0, (2 * k + 1) * half, 0), pbd_v3(0, 0, 0));
	for (int s = 0; s < 120; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const double sag = (2 * count - 1) * half - (double)state_of(w, top).pose.position.y;
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
	return sag;
}

/* A soft contact holds its load as a spring of frequency f would, so the column's sag scales as
 * 1 / f²: doubling the frequency quarters it. Its size: the interface under k cubes carries k m g
 * on springs of m (2 pi f)² (2 pi f each, 2 f against the floor), about g / (2 pi f)² k in all. */
static void test_sag_is_a_springs(void** state) {
	(void)state;
	const int count = 5;
	const double soft = column_sag(count, 8, 30), stiff = column_sag(count, 8, 60);
	const double omega = 2 * TP_PI * 30, rough = G / (omega * omega) * count * (count - 1) / 2;
	printf("  soft step, a column of %d cubes: sinks %.3g mm at 30 Hz, %.3g mm at 60 Hz (ratio %.2f, 4 expected); "
	       "g / omega² k summed %.3g mm\n",
	       count, 1e3 * soft, 1e3 * stiff, soft / stiff, 1e3 * rough);
	assert_true(soft > 0 && stiff > 0);
	assert_true(fabs(soft / stiff - 4) < 0.8);
	assert_true(soft > 0.25 * rough && soft < 4 * rough);
}

/* Cubes of 0.5 m in `layers` rows (a pyramid, each on two, or a column) at 8 substeps for
 * `steps`: the largest horizontal distance the top one moved from its start. */
static double top_drift(int layers, bool pyramid, int steps) {
	char msg[256] = "";
	pbd_world* w = soft_world(msg, 8, 0, 1);
	floor_with(w, pbd_v3(0, 1, 0), 0.5, 0);
	pbd_vec3 start;
	const pbd_body_id top = cube_tower(w, layers, pyramid, &start);
	double most = 0;
	for (int s = 0; s < steps; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_vec3 x = state_of(w, top).pose.position;
		assert_true(pbd_v3_is_finite(x));
		const double dx = (double)x.x - (double)start.x, dz = (double)x.z - (double)start.z;
		most = fmax(most, sqrt(dx * dx + dz * dz));
	}
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
	return most;
}

/* Twenty cubes stacked flush and a pyramid of 10 rows stand at 8 substeps: the top one moves less
 * than 1 cm sideways in 10 s (2 s in the short run). */
static void test_stacks_stand(void** state) {
	(void)state;
	const int steps = test_short() ? 120 : 600;
	const double stack = top_drift(20, false, steps), pyramid = top_drift(10, true, steps);
	printf("  soft step, 8 substeps: the top of twenty stacked cubes moved %.3g m, of a pyramid of 10 rows %.3g m, "
	       "in %.0f s\n",
	       stack, pyramid, steps / 60.0);
	assert_true(stack < 0.01);
	assert_true(pyramid < 0.01);
}

/* A heap of boxes and balls falling into a corner on `threads` threads: the world's hash after
 * `steps`, or after `steps` more from a snapshot taken at `steps` when `resume`. */
static pbd_world* heap_world(char* msg, int threads) {
	pbd_world* w = soft_world(msg, 4, 0, threads);
	heap_into_corner(w);
	return w;
}

/* The impulses each contact carries into the next step are part of the state: a world saved and
 * loaded goes on as the one that was not, bit for bit; and the result is the same on 1, 2 and 3
 * threads. */
static void test_resumes_and_threads_bit_identical(void** state) {
	(void)state;
	char msg[256] = "";
	uint64_t hashes[3];
	for (int t = 1; t <= 3; ++t) {
		uint64_t resumed;
		step_save_resume(heap_world(msg, t), t, msg, 60, &hashes[t - 1], &resumed);
		printf("  soft step, a heap of 24 bodies on %d thread%s: hash %016llx, resumed from a snapshot %016llx\n", t,
		       t > 1 ? "s" : "", (unsigned long long)hashes[t - 1], (unsigned long long)resumed);
		assert_true(resumed == hashes[t - 1]);
	}
	assert_true(hashes[1] == hashes[0] && hashes[2] == hashes[0]);
	assert_string_equal(msg, "");
}

/* A pyramid of 30 rows (465 cubes), whose colours hold hundreds of contacts each and so run on
 * the threads in blocks, ends in the same bits on 1, 2 and 3 threads. */
static void test_threads_share_colours(void** state) {
	(void)state;
	char msg[256] = "";
	uint64_t hash[3];
	uint32_t widest = 0;
	for (int t = 1; t <= 3; ++t) {
		pbd_world* w = soft_world(msg, 8, 0, t);
		floor_with(w, pbd_v3(0, 1, 0), 0.5, 0);
		const int rows = 30;
		for (int row = 0; row < rows; ++row)
			for (int k = 0; k < rows - row; ++k)
				body_with(w, material(box_shape(0.25), 0.5, 0),
				          at((k - (rows - row - 1) / 2.0) * 0.505, 0.25 + 0.5 * row, 0), pbd_v3(0, 0, 0));
		for (int s = 0; s < 10; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
		for (int c = 0; c < 64; ++c)
			widest =
			    widest > w->rsoft_first[c + 1] - w->rsoft_first[c] ? widest : w->rsoft_first[c + 1] - w->rsoft_first[c];
		hash[t - 1] = pbd_world_hash(w);
		pbd_world_destroy(w);
	}
	printf("  soft step, a pyramid of 30 rows: the widest colour %u contacts; hashes %016llx %016llx %016llx\n", widest,
	       (unsigned long long)hash[0], (unsigned long long)hash[1], (unsigned long long)hash[2]);
	assert_true(widest > 3 * 64); /* at least PBD_EXEC_MIN_BLOCKS (4) blocks of PBD_SOFT_BLOCK (64): shared */
	assert_true(hash[1] == hash[0] && hash[2] == hash[0]);
	assert_string_equal(msg, "");
}

/* A column of three cubes under the soft step falls asleep (its springs settle); a ball dropped on
 * it wakes the column as one island when it lands, and the column keeps standing. */
static void test_stack_sleeps_and_wakes(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = NULL;
	pbd_world_def def = pbd_world_def_default(); /* sleeping on (soft_world's is off) */
	def.gravity = pbd_v3(0, (pbd_real)-G, 0);
	def.substeps = 8;
	def.iterations = 1;
	def.body_solver = PBD_BODY_SOLVER_SOFT_STEP;
	def.log = test_log_keep;
	def.log_user = msg;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	floor_with(w, pbd_v3(0, 1, 0), 0.5, 0);
	pbd_body_id box[3];
	for (int k = 0; k < 3; ++k)
		box[k] = body_with(w, material(box_shape(0.1), 0.5, 0), at(0, 0.1 + 0.2 * k, 0), pbd_v3(0, 0, 0));
	int slept = -1;
	for (int s = 1; s <= 300 && slept < 0; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		if (state_of(w, box[2]).asleep) slept = s;
	}
	assert_true(slept > 0);
	for (int k = 0; k < 3; ++k) assert_true(state_of(w, box[k]).asleep);
	body_with(w, material(ball_shape(0.05), 0.5, 0), at(0, 1, 0), pbd_v3(0, 0, 0));
	int woke = -1;
	for (int s = 1; s <= 60 && woke < 0; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		if (!state_of(w, box[0]).asleep) woke = s;
	}
	const double lands = sqrt(2 * (1 - 0.05 - 0.6) / G) * 60;
	for (int s = 0; s < 120; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const double top = (double)state_of(w, box[2]).pose.position.y;
	printf("  soft step, three cubes sleep at step %d; a ball dropped from 1 m wakes them at step %d (it lands "
	       "after %.1f steps); the top cube then at %.4f m\n",
	       slept, woke, lands, top);
	assert_true(woke > 0 && fabs(woke - lands) < 3);
	assert_true(fabs(top - 0.5) < 2e-3);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ball_bounces),
	    cmocka_unit_test(test_box_slides_to_a_stop),
	    cmocka_unit_test(test_box_on_slope),
	    cmocka_unit_test(test_balls_keep_momentum),
	    cmocka_unit_test(test_fast_ball_stops_at_a_plate),
	    cmocka_unit_test(test_sag_is_a_springs),
	    cmocka_unit_test(test_stacks_stand),
	    cmocka_unit_test(test_resumes_and_threads_bit_identical),
	    cmocka_unit_test(test_stack_sleeps_and_wakes),
	    cmocka_unit_test(test_threads_share_colours),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
