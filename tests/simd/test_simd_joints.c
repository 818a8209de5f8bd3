/* SIMD lanes of the joints (simd/joint_avx2.c) and of the bodies' substep and corrections
 * (simd/bodies_avx2.c): a net of balls and boxes on ball joints, stepped once with
 * PBD_SIMD_SCALAR and once with PBD_SIMD_AVX2 under FP traps, must hold the same bodies, joint
 * states and joint statistics, bit for bit, after every step. The net is past the direct solve's
 * bound, so its joints are projected one by one, and it mixes what the lanes take with what they
 * leave to the scalar code in the same colours: boxes (unequal moments), soft joints, joints with
 * a swing bound or a twist limit, corners held by the world and by a kinematic body, a joint that
 * breaks, damped bodies, an island put to sleep, a net far from the origin and spun up (large
 * turns within a substep), under Gauss-Seidel and Jacobi, XPBD and PBD, on one and two threads.
 * Skipped where the build or the CPU has no AVX2. */
#include <stdio.h>
#include <string.h>

#include "core/cpu.h"
#include "test_physics.h"
#include "model/world.h"

enum { NX = 24, NZ = 23, STEPS = 40 };

typedef struct joint_case {
	const char* name;
	pbd_solver solver;
	pbd_formulation formulation;
	int threads;
	double offset; /* added to every coordinate */
	double spin;   /* rad/s given to every body at the start */
} joint_case;

static const joint_case cases[] = {
    {"Gauss-Seidel XPBD", PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_XPBD, 1, 0, 0},
    {"Gauss-Seidel XPBD, 2 threads, spun", PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_XPBD, 2, 0, 6},
    {"Gauss-Seidel PBD, at 1e4", PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_PBD, 1, 1e4, 2},
    {"Jacobi XPBD", PBD_SOLVER_JACOBI, PBD_FORMULATION_XPBD, 1, 0, 3},
    {"Jacobi PBD, 2 threads, at -1e4", PBD_SOLVER_JACOBI, PBD_FORMULATION_PBD, 2, -1e4, 0},
};

static pbd_body_id body(pbd_world* w, pbd_body_type type, bool box, bool damped, double x, double y, double z) {
	pbd_collider_def d = pbd_collider_def_default();
	d.type = box ? PBD_SHAPE_BOX : PBD_SHAPE_SPHERE;
	if (box)
		d.shape.box.half_extents = pbd_v3(0.12f, 0.05f, 0.08f);
	else
		d.shape.sphere.radius = 0.1f;
	const pbd_collider_id probe = pbd_collider_create(w, &d);
	pbd_body_def bd = pbd_body_def_default();
	bd.type = type;
	if (damped) {
		bd.linear_damping = 0.3f;
		bd.angular_damping = 0.2f;
	}
	if (type == PBD_BODY_DYNAMIC)
		assert_int_equal(pbd_collider_mass_properties(w, probe, box ? 3000 : 1000, &bd.mass), PBD_OK);
	assert_int_equal(pbd_collider_destroy(w, probe), PBD_OK);
	bd.pose = (pbd_pose){pbd_v3((pbd_real)x, (pbd_real)y, (pbd_real)z), pbd_quat_identity()};
	const pbd_body_id id = pbd_body_create(w, &bd);
	assert_true(pbd_body_is_valid(w, id));
	return id;
}

static void joint(pbd_world* w, const pbd_joint_def* d) {
	assert_int_equal(pbd_world_add_joints(w, 1, d, NULL), PBD_OK);
}

/* The net: ball i,k joined to its neighbours in x and z, every 7th body a box, every 5th damped
 * (the lanes' damping factors not all 1); a few joints soft, bounded in swing or limited in twist,
 * a few weak enough to break under the net's weight; two corners held by the world, a third by a
 * kinematic body moving sideways; and a short chain apart, put to sleep. */
static pbd_world* net(const joint_case* jc, pbd_simd simd, pbd_body_id* ids) {
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, -9.81f, 0);
	def.substeps = 4;
	def.iterations = 2;
	def.damping = 0.999f;
	def.solver = jc->solver;
	def.formulation = jc->formulation;
	def.threads = (uint32_t)jc->threads;
	def.simd = simd;
	def.log = test_log_fail;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	/* blocks small enough that every stage of this net splits among the threads (test_threads.c),
	 * alike in every world: the statistics' sums are grouped by them */
	w->exec.block_constraints = 64;
	w->exec.block_particles = PBD_BLOCK_PARTICLES_MIN;
	w->exec.min_blocks = 2;
	const double o = jc->offset;
	uint32_t made = 0;
	for (int i = 0; i < NX; ++i)
		for (int k = 0; k < NZ; ++k) {
			const int n = i * NZ + k;
			ids[n] = body(w, PBD_BODY_DYNAMIC, n % 7 == 3, n % 5 == 1, o + 0.4 * i, o + 2, o + 0.4 * k);
			for (int dir = 0; dir < 2; ++dir) {
				if ((dir ? k : i) == 0) continue;
				pbd_joint_def d = pbd_joint_def_default();
				d.body_a = ids[dir ? n - 1 : n - NZ];
				d.body_b = ids[n];
				d.frame_a.position = dir ? pbd_v3(0, 0, 0.2f) : pbd_v3(0.2f, 0, 0);
				d.frame_b.position = dir ? pbd_v3(0, 0, -0.2f) : pbd_v3(-0.2f, 0, 0);
				if (made % 11 == 5) d.compliance = 1e-5f;
				if (made % 13 == 7) d.swing = 0.3f;
				if (made % 17 == 9) {
					d.limit = true;
					d.lower = -0.2f;
					d.upper = 0.2f;
				}
				if (made % 250 == 40) d.break_force = 20;
				joint(w, &d);
				made++;
			}
		}
	for (int c = 0; c < 2; ++c) {
		pbd_joint_def d = pbd_joint_def_default();
		d.body_b = ids[c ? (NX - 1) * NZ : 0];
		d.frame_a.position = pbd_v3((pbd_real)(o + (c ? 0.4 * (NX - 1) : 0)), (pbd_real)(o + 2), (pbd_real)o);
		joint(w, &d);
	}
	const pbd_body_id hand = body(w, PBD_BODY_KINEMATIC, false, false, o + 0.4 * (NX - 1), o + 2, o + 0.4 * (NZ - 1));
	assert_int_equal(pbd_body_set_velocity(w, hand, pbd_v3(-0.3f, 0.2f, 0), pbd_v3(0, 0.5f, 0)), PBD_OK);
	pbd_joint_def held = pbd_joint_def_default();
	held.body_a = hand;
	held.body_b = ids[NX * NZ - 1];
	joint(w, &held);
	if (jc->spin != 0)
		for (int n = 0; n < NX * NZ; ++n)
			assert_int_equal(pbd_body_set_velocity(w, ids[n], pbd_v3(0, 0, 0),
			                                       pbd_v3((pbd_real)jc->spin, (pbd_real)(-0.5 * jc->spin),
			                                              (pbd_real)(0.25 * jc->spin * (n % 3)))),
			                 PBD_OK);
	pbd_body_id chain[10];
	for (int c = 0; c < 10; ++c) {
		chain[c] = body(w, PBD_BODY_DYNAMIC, false, false, o - 3, o + 1, o + 0.4 * c);
		if (c == 0) continue;
		pbd_joint_def d = pbd_joint_def_default();
		d.body_a = chain[c - 1];
		d.body_b = chain[c];
		d.frame_a.position = pbd_v3(0, 0, 0.2f);
		d.frame_b.position = pbd_v3(0, 0, -0.2f);
		joint(w, &d);
	}
	assert_int_equal(pbd_body_set_asleep(w, chain[0], true), PBD_OK);
	return w;
}

/* World k against world 0 after `step`: bodies, joint states, the joints' statistics and the
 * step's break events, bit for bit. Gives the largest sag of the net below its start. */
static double compare(const joint_case* jc, pbd_world* const w[3], pbd_body_id ids[3][NX * NZ], int k, int step) {
	uint32_t n0 = 0, n1 = 0;
	const pbd_pose* p0 = pbd_world_body_poses(w[0], &n0);
	const pbd_pose* p1 = pbd_world_body_poses(w[k], &n1);
	assert_int_equal(n0, n1);
	if (memcmp(p0, p1, n0 * sizeof *p0) != 0)
		fail_msg("%s, world %d: the poses differ after step %d", jc->name, k, step);
	double sag = 0;
	for (int n = 0; n < NX * NZ; ++n) {
		pbd_body_state a, b;
		assert_int_equal(pbd_body_get_state(w[0], ids[0][n], &a), PBD_OK);
		assert_int_equal(pbd_body_get_state(w[k], ids[k][n], &b), PBD_OK);
		if (memcmp(&a.velocity, &b.velocity, sizeof a.velocity) ||
		    memcmp(&a.angular_velocity, &b.angular_velocity, sizeof a.angular_velocity))
			fail_msg("%s, world %d: body %d moves differently after step %d", jc->name, k, n, step);
		sag = fmax(sag, jc->offset + 2 - (double)a.pose.position.y);
	}
	/* the diagnostics' joint distances, taken 8 at a time in lanes */
	pbd_stats s0, s1;
	pbd_world_get_stats(w[0], &s0);
	pbd_world_get_stats(w[k], &s1);
	const pbd_family_stats *f0 = &s0.family[PBD_FAMILY_JOINT], *f1 = &s1.family[PBD_FAMILY_JOINT];
	if (memcmp(&f0->max_violation, &f1->max_violation, sizeof(double)) ||
	    memcmp(&f0->elastic_energy, &f1->elastic_energy, sizeof(double)))
		fail_msg("%s, world %d: the joints' statistics differ after step %d", jc->name, k, step);
	for (uint32_t j = 0; j < pbd_world_joint_count(w[0]); ++j) {
		pbd_joint_state a, b;
		assert_int_equal(pbd_world_get_joint_state(w[0], j, &a), PBD_OK);
		assert_int_equal(pbd_world_get_joint_state(w[k], j, &b), PBD_OK);
		if (memcmp(&a, &b, sizeof a) != 0)
			fail_msg("%s, world %d: joint %u differs after step %d", jc->name, k, j, step);
	}
	pbd_joint_event e0[16], e1[16];
	const uint32_t m0 = pbd_world_get_joint_events(w[0], e0, 16), m1 = pbd_world_get_joint_events(w[k], e1, 16);
	assert_int_equal(m0, m1);
	assert_true(m0 <= 16);
	if (memcmp(e0, e1, m0 * sizeof *e0) != 0)
		fail_msg("%s, world %d: the break events differ at step %d", jc->name, k, step);
	return sag;
}

static void test_lanes_match_scalar(void** state) {
	(void)state;
	if (!pbd_cpu_avx2()) {
		printf("skipped: %s\n", pbd_simd_built() ? "this CPU has no AVX2 and FMA" : "this build has no AVX2 kernels");
		skip();
	}
	static pbd_body_id ids[3][NX * NZ];
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
		const joint_case* jc = &cases[c];
		/* scalar; lanes; lanes on the other number of threads */
		joint_case other = *jc;
		other.threads = 3 - jc->threads;
		pbd_world* const w[3] = {net(jc, PBD_SIMD_SCALAR, ids[0]), net(jc, PBD_SIMD_AVX2, ids[1]),
		                         net(&other, PBD_SIMD_AVX2, ids[2])};
		uint32_t broken = 0, events = 0;
		double sag = 0;
		for (int s = 0; s < STEPS; ++s) {
			for (int k = 0; k < 3; ++k) assert_int_equal(pbd_world_step(w[k]), PBD_OK);
			for (int k = 1; k < 3; ++k) sag = fmax(sag, compare(jc, w, ids, k, s + 1));
			events += pbd_world_get_joint_events(w[0], NULL, 0);
		}
		for (uint32_t j = 0; j < pbd_world_joint_count(w[0]); ++j) {
			pbd_joint_state a;
			assert_int_equal(pbd_world_get_joint_state(w[0], j, &a), PBD_OK);
			broken += a.broken;
		}
		printf("  %s: %d steps alike on %d and %d threads, %u joints broken (%u events), sagged %.3f m\n", jc->name,
		       STEPS, jc->threads, other.threads, broken, events, sag);
		/* the net hangs and falls (a blow-up would have failed the traps or the sag), and weak
		 * joints gave way, in more than one block of joints */
		assert_true(sag > 0.05 && sag < 10);
		assert_true(broken >= 2);
		assert_int_equal(events, broken);
		for (int k = 0; k < 3; ++k) pbd_world_destroy(w[k]);
	}
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lanes_match_scalar),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
