/* Augmented vertex block descent for body contacts (PBD_BODY_SOLVER_AVBD,
 * src/collision/rigid_avbd.c) at 4 substeps of 4 sweeps, against closed forms: a ball dropped on a
 * floor bounces to e² of its height; a cube sliding on the floor stops after v² / (2 μ g); a cube on
 * a slope stays below tan θ = μ and slides with a = g (sin θ − μ cos θ) above it; two balls meeting
 * in free space keep their linear momentum as the sweeps converge; a ball at 50 m/s does not pass
 * a 1 cm plate. A cube a
 * thousand times heavier than the one it rests on stays on it; twenty cubes stacked and a pyramid
 * of 55 stand; the multipliers the contacts carry travel in snapshots, so that a resumed world goes
 * on bit for bit, and the result is the same on any number of threads, also where a colour's
 * bodies are split between them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/world.h"
#include "test_bodies.h"

static const double G = 9.81;

static pbd_world* avbd_world(char* msg, int substeps, int iterations, int threads) {
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, (pbd_real)-G, 0);
	def.substeps = substeps;
	def.iterations = iterations;
	def.body_solver = PBD_BODY_SOLVER_AVBD;
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
	pbd_world* w = avbd_world(msg, 4, 4, 1);
	double lowest;
	const double apex = ball_apex(w, r, h0, e, &lowest);
	printf("  avbd, ball of restitution %.1f dropped from %.2f m: rises to %.4f m (e² h = %.4f), lowest %.2g m\n", e,
	       h0, apex, e * e * h0, lowest);
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
	pbd_world* w = avbd_world(msg, 4, 4, 1);
	floor_with(w, pbd_v3(0, 1, 0), mu, 0);
	const pbd_body_id b = body_with(w, material(box_shape(half), mu, 0), at(0, half, 0), pbd_v3((pbd_real)v0, 0, 0));
	for (int s = 0; s < 120; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_body_state st = state_of(w, b);
	const double travelled = (double)st.pose.position.x;
	printf("  avbd, cube sliding at %.1f m/s, mu %.1f: stops after %.4f m (v²/(2 mu g) = %.4f), speed %.2g m/s\n", v0,
	       mu, travelled, expect, (double)pbd_v3_length(st.velocity));
	assert_true(fabs(travelled - expect) < 0.02 * expect);
	assert_true((double)pbd_v3_length(st.velocity) < 1e-3);
	assert_true(fabs((double)st.pose.position.y - half) < 1e-3);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

static void slope(double theta, double mu, double* v1, double* v2) {
	char msg[256] = "";
	pbd_world* w = avbd_world(msg, 4, 4, 1);
	slope_speeds(w, theta, mu, v1, v2);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

static void test_box_on_slope(void** state) {
	(void)state;
	const double mu = 0.5, gentle = 0.4, steep = 0.7; /* tan 0.4 = 0.42 < mu < tan 0.7 = 0.84 */
	double v1, v2;
	slope(gentle, mu, &v1, &v2);
	printf("  avbd, cube on a %.0f° slope, mu %.1f: %.2g m/s after 0.5 s, %.2g m/s after 1.5 s\n", gentle * 180 / TP_PI,
	       mu, v1, v2);
	assert_true(fabs(v2) < 1e-3);
	slope(steep, mu, &v1, &v2);
	const double a = (v2 - v1) / 1.0, expect = G * (sin(steep) - mu * cos(steep));
	printf("  avbd, cube on a %.0f° slope, mu %.1f: slides at %.4f m/s² (g (sin - mu cos) = %.4f)\n",
	       steep * 180 / TP_PI, mu, a, expect);
	assert_true(fabs(a - expect) < 0.02 * expect);
}

/* Two balls meeting off-centre in free space: their momentum after `iterations` sweeps per
 * substep, relative error of the total. */
static double momentum_error(int iterations) {
	char msg[256] = "";
	pbd_world* w = avbd_world(msg, 4, iterations, 1);
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
	printf("  avbd, 4 x %d, two balls meeting off-centre: momentum (%.6g, %.3g, %.3g) kg m/s of (%.6g, 0, 0)\n",
	       iterations, px, py, pz, p0);
	assert_true(touched > 0.1); /* they met */
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
	return sqrt((px - p0) * (px - p0) + py * py + pz * pz) / p0;
}

/* Each body steps alone against the other's last position, so a collision gives the two bodies
 * equal and opposite impulses only as the sweeps converge: the momentum the meeting loses or gains
 * shrinks with more sweeps. */
static void test_balls_momentum_converges(void** state) {
	(void)state;
	const double few = momentum_error(4), many = momentum_error(32);
	printf("  avbd: momentum error %.3g at 4 sweeps, %.3g at 32\n", few, many);
	assert_true(many < 0.01 * few && many < 1e-3);
}

/* A ball of 5 cm at 50 m/s at a fixed plate 1 cm thick: how far its centre got. */
static double plate_reach(int iterations) {
	char msg[256] = "";
	pbd_world* w = avbd_world(msg, 4, iterations, 1);
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
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
	return furthest;
}

/* The ball does not pass through: the contact found ahead of it holds it. Stopping 50 m/s within
 * one substep takes the rows' multipliers more sweeps than a resting load does, so at 4 sweeps it
 * ends inside the plate, short of its far face; at 16 it stops at the near face. */
static void test_fast_ball_stops_at_a_plate(void** state) {
	(void)state;
	const double few = plate_reach(4), many = plate_reach(16), face = 0.995, r = 0.05;
	printf("  avbd, ball at 50 m/s at a 1 cm plate: its front reached x = %.4f m at 4 sweeps, %.4f at 16 (the plate "
	       "from %.3f to %.3f)\n",
	       few + r, many + r, face, face + 0.01);
	assert_true(few + r < face + 0.01);
	assert_true(many + r < face + 2e-3);
}

/* A cube of 0.2 m and density 1000 kg/m³ on one of density 1: the lower one holds 1000 times its
 * weight. Its rows, the floor's too, start at the heavy cube's inertia, so it is not squeezed
 * out: for 5 s both stay within 2 mm of where they were put (0.74 mm; with the floor's rows at the
 * light cube's inertia it sank 7.3 mm in float, and in double it was thrown out). */
static void test_heavy_on_light(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = avbd_world(msg, 4, 4, 1);
	floor_with(w, pbd_v3(0, 1, 0), 0.5, 0);
	const pbd_body_id light = body_of(w, material(box_shape(0.1), 0.5, 0), 1, at(0, 0.1, 0), pbd_v3(0, 0, 0));
	const pbd_body_id heavy = body_of(w, material(box_shape(0.1), 0.5, 0), 1000, at(0, 0.3, 0), pbd_v3(0, 0, 0));
	double worst = 0;
	for (int s = 0; s < 300; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_vec3 a = state_of(w, light).pose.position, b = state_of(w, heavy).pose.position;
		worst = fmax(worst, fmax(pbd_v3_length(pbd_v3_sub(a, pbd_v3(0, 0.1f, 0))),
		                         pbd_v3_length(pbd_v3_sub(b, pbd_v3(0, 0.3f, 0)))));
	}
	printf("  avbd, a cube on one 1000 times lighter: the two moved at most %.3g mm in 5 s\n", 1e3 * worst);
	assert_true(worst < 2e-3);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* Cubes of 0.5 m in `layers` rows (a pyramid, each on two, or a column) for `steps`: the largest
 * distance the top one moved from its start. */
static double top_drift(int layers, bool pyramid, int steps) {
	char msg[256] = "";
	pbd_world* w = avbd_world(msg, 4, 4, 1);
	floor_with(w, pbd_v3(0, 1, 0), 0.5, 0);
	pbd_vec3 start;
	const pbd_body_id top = cube_tower(w, layers, pyramid, &start);
	double most = 0;
	for (int s = 0; s < steps; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_vec3 x = state_of(w, top).pose.position;
		assert_true(pbd_v3_is_finite(x));
		most = fmax(most, (double)pbd_v3_length(pbd_v3_sub(x, start)));
	}
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
	return most;
}

/* Twenty cubes stacked flush and a pyramid of 10 rows stand: the top one moves less than 1.5 cm
 * and 1 cm in 10 s (2 s in the short run), its sinking included. The column breathes: its top sinks
 * about 1 cm over 4 s and rises again, as the multipliers carried from step to step catch up with
 * its weight. */
static void test_stacks_stand(void** state) {
	(void)state;
	const int steps = test_short() ? 120 : 600;
	const double stack = top_drift(20, false, steps), pyramid = top_drift(10, true, steps);
	printf("  avbd, 4 x 4: the top of twenty stacked cubes moved %.3g m, of a pyramid of 10 rows %.3g m, in %.0f s\n",
	       stack, pyramid, steps / 60.0);
	assert_true(stack < 0.015);
	assert_true(pyramid < 0.01);
}

static pbd_world* heap_world(char* msg, int threads) {
	pbd_world* w = avbd_world(msg, 4, 4, threads);
	heap_into_corner(w);
	return w;
}

/* The multipliers each contact carries into the next step are part of the state: a world saved
 * and loaded goes on as the one that was not, bit for bit; and the result is the same on 1, 2 and
 * 3 threads. */
static void test_resumes_and_threads_bit_identical(void** state) {
	(void)state;
	char msg[256] = "";
	uint64_t hashes[3];
	for (int t = 1; t <= 3; ++t) {
		uint64_t resumed;
		step_save_resume(heap_world(msg, t), t, msg, 60, &hashes[t - 1], &resumed);
		printf("  avbd, a heap of 24 bodies on %d thread%s: hash %016llx, resumed from a snapshot %016llx\n", t,
		       t > 1 ? "s" : "", (unsigned long long)hashes[t - 1], (unsigned long long)resumed);
		assert_true(resumed == hashes[t - 1]);
	}
	assert_true(hashes[1] == hashes[0] && hashes[2] == hashes[0]);
	assert_string_equal(msg, "");
}

/* A pyramid of 30 rows (465 cubes), whose colours hold enough bodies to be split between the
 * threads, ends in the same bits on 1, 2 and 3 threads. */
static void test_threads_share_colours(void** state) {
	(void)state;
	char msg[256] = "";
	uint64_t hash[3];
	uint32_t widest = 0;
	for (int t = 1; t <= 3; ++t) {
		pbd_world* w = avbd_world(msg, 4, 4, t);
		floor_with(w, pbd_v3(0, 1, 0), 0.5, 0);
		const int rows = 30;
		for (int row = 0; row < rows; ++row)
			for (int k = 0; k < rows - row; ++k)
				body_with(w, material(box_shape(0.25), 0.5, 0),
				          at((k - (rows - row - 1) / 2.0) * 0.505, 0.25 + 0.5 * row, 0), pbd_v3(0, 0, 0));
		for (int s = 0; s < 10; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
		for (int c = 0; c < 64; ++c) {
			const uint32_t size = w->ravbd_colour_first[c + 1] - w->ravbd_colour_first[c];
			widest = widest > size ? widest : size;
		}
		hash[t - 1] = pbd_world_hash(w);
		pbd_world_destroy(w);
	}
	printf("  avbd, a pyramid of 30 rows: the widest colour %u bodies; hashes %016llx %016llx %016llx\n", widest,
	       (unsigned long long)hash[0], (unsigned long long)hash[1], (unsigned long long)hash[2]);
	assert_true(widest >= 4 * 16); /* at least PBD_EXEC_MIN_BLOCKS (4) blocks of AVBD_BLOCK (16): shared */
	assert_true(hash[1] == hash[0] && hash[2] == hash[0]);
	assert_string_equal(msg, "");
}

/* The body solvers' names, as scene files and Python spell them, and the names of the particles'
 * solvers and formulations the same helper gives. */
static void test_names(void** state) {
	(void)state;
	pbd_body_solver b;
	for (int k = 0; k < 3; ++k) {
		assert_true(pbd_body_solver_from_name(pbd_body_solver_name((pbd_body_solver)k), &b));
		assert_int_equal((int)b, k);
	}
	assert_string_equal(pbd_body_solver_name(PBD_BODY_SOLVER_AVBD), "avbd");
	assert_string_equal(pbd_body_solver_name((pbd_body_solver)3), "unknown");
	assert_false(pbd_body_solver_from_name("impulse", &b));
	assert_false(pbd_body_solver_from_name(NULL, &b));
	pbd_solver s;
	pbd_formulation f;
	assert_true(pbd_solver_from_name("jacobi", &s) && s == PBD_SOLVER_JACOBI);
	assert_true(pbd_formulation_from_name("xpbd", NULL));
	assert_false(pbd_formulation_from_name("pdb", &f));
	assert_string_equal(pbd_solver_name((pbd_solver)-1), "unknown");
	assert_string_equal(pbd_formulation_name(PBD_FORMULATION_PBD), "pbd");
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ball_bounces),
	    cmocka_unit_test(test_box_slides_to_a_stop),
	    cmocka_unit_test(test_box_on_slope),
	    cmocka_unit_test(test_balls_momentum_converges),
	    cmocka_unit_test(test_fast_ball_stops_at_a_plate),
	    cmocka_unit_test(test_heavy_on_light),
	    cmocka_unit_test(test_stacks_stand),
	    cmocka_unit_test(test_resumes_and_threads_bit_identical),
	    cmocka_unit_test(test_threads_share_colours),
	    cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
