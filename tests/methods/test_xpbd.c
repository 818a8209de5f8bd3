/* XPBD (Macklin et al. 2016): compliance 0 is the hard constraint, and a compliance alpha is a
 * real spring of stiffness 1/alpha whose behaviour does not depend on the iteration count. The
 * spring test measures the period of a mass on a spring against 2 pi sqrt(m alpha). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_physics.h"

/* A hanging cloth perturbed away from its rest shape, then one step: the violation left by
 * XPBD with compliance 0 goes to ~0 as the iterations grow. */
static double cloth_violation(pbd_solver solver, int iterations) {
	pbd_world_def def = pbd_world_def_default();
	def.formulation = PBD_FORMULATION_XPBD;
	def.solver = solver;
	def.iterations = iterations;
	pbd_world* w = test_world(&def);
	pbd_mesh m;
	/* Quads without diagonals: a flat triangulated sheet is a degenerate point of its own
	 * constraint set (out-of-plane motion changes lengths only to second order) where every
	 * projection method, PBD included, converges very slowly; that is not what this measures. */
	tp_grid(&m, 8, 8, 1, pbd_v3(0, 0, 0), 0, false);
	tp_perturb_keeping_rest(&m, 5, 0.03);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	const uint32_t pins[1] = {0};
	bd.pinned = pins;
	bd.pinned_count = 1;
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	const double v = tp_max_violation(w);
	pbd_world_destroy(w);
	return v;
}

static void test_zero_compliance_is_hard(void** state) {
	(void)state;
	const double gs[3] = {cloth_violation(PBD_SOLVER_GAUSS_SEIDEL, 1), cloth_violation(PBD_SOLVER_GAUSS_SEIDEL, 20),
	                      cloth_violation(PBD_SOLVER_GAUSS_SEIDEL, 500)};
	const double ja[3] = {cloth_violation(PBD_SOLVER_JACOBI, 1), cloth_violation(PBD_SOLVER_JACOBI, 20),
	                      cloth_violation(PBD_SOLVER_JACOBI, 3000)};
	printf("  XPBD alpha 0 violation, GS 1/20/500 iterations: %.3g %.3g %.3g\n", gs[0], gs[1], gs[2]);
	printf("  XPBD alpha 0 violation, Jacobi 1/20/3000 iterations: %.3g %.3g %.3g\n", ja[0], ja[1], ja[2]);
	assert_true(gs[1] < gs[0] && gs[2] < gs[1]);
	assert_true(ja[1] < ja[0] && ja[2] < ja[1]);
	/* Converged to float precision of 0.14 m edges (observed 6e-8 and 3e-7). */
	assert_true(gs[2] < TEST_TOL(1e-9, 1e-6));
	assert_true(ja[2] < TEST_TOL(1e-9, 1e-6));
}

/* With compliance 0 and Gauss-Seidel, XPBD and PBD (stiffness 1) are the same projection, so
 * the two trajectories of a falling chain agree to rounding. */
static void test_zero_compliance_matches_pbd(void** state) {
	(void)state;
	pbd_world* w[2];
	for (int f = 0; f < 2; ++f) {
		pbd_world_def def = pbd_world_def_default();
		def.formulation = f ? PBD_FORMULATION_XPBD : PBD_FORMULATION_PBD;
		def.iterations = 4;
		w[f] = test_world(&def);
		pbd_rope_def rd = pbd_rope_def_default();
		rd.segments = 8;
		pbd_mesh m;
		pbd_error err;
		assert_int_equal(pbd_mesh_rope(&rd, &m, &err), PBD_OK);
		pbd_soft_def bd = pbd_soft_def_default();
		bd.mesh = &m;
		const uint32_t pin = 0;
		bd.pinned = &pin;
		bd.pinned_count = 1;
		assert_int_equal(pbd_soft_create(w[f], &bd, NULL), PBD_OK);
		pbd_mesh_free(&m);
	}
	for (int step = 0; step < 60; ++step) {
		assert_int_equal(pbd_world_step(w[0]), PBD_OK);
		assert_int_equal(pbd_world_step(w[1]), PBD_OK);
	}
	for (uint32_t i = 0; i < pbd_world_particle_count(w[0]); ++i)
		assert_near(tp_dist(pbd_world_positions(w[0])[i], pbd_world_positions(w[1])[i]), 0, TEST_TOL(1e-9, 1e-4));
	pbd_world_destroy(w[0]);
	pbd_world_destroy(w[1]);
}

/* ---- mass on a spring ------------------------------------------------------------------ */

/* Mass m on a spring of compliance alpha (stiffness k = 1/alpha) to a pinned particle, no
 * gravity, released from a displacement along the spring. Returns the measured period from
 * the zero crossings of the displacement; *amp_ratio gets (last |peak|) / (first amplitude). */
static double spring_period(pbd_solver solver, int iterations, int substeps, double steps_per_period, double m,
                            double alpha, double* amp_ratio) {
	const double L = 1.0, A = 0.1;
	const double T = 2 * TP_PI * sqrt(m * alpha);
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, 0, 0);
	def.formulation = PBD_FORMULATION_XPBD;
	def.solver = solver;
	def.iterations = iterations;
	def.substeps = substeps;
	def.dt = (pbd_real)(T / steps_per_period);
	pbd_world* w = test_world(&def);
	/* Oblique spring so every coordinate takes part. */
	const tp_dvec3 u = {2.0 / 7, 3.0 / 7, 6.0 / 7};
	const pbd_vec3 x[2] = {{0, 0, 0},
	                       {(pbd_real)((L + A) * u.x), (pbd_real)((L + A) * u.y), (pbd_real)((L + A) * u.z)}};
	const pbd_real inv[2] = {0, (pbd_real)(1.0 / m)};
	assert_int_equal(pbd_world_add_particles(w, 2, x, NULL, inv, NULL), PBD_OK);
	pbd_distance_def dd = pbd_distance_def_default();
	dd.a = 0;
	dd.b = 1;
	dd.rest = (pbd_real)L;
	dd.compliance_stretch = (pbd_real)alpha;
	dd.compliance_compress = (pbd_real)alpha;
	assert_int_equal(pbd_world_add_distances(w, 1, &dd, NULL), PBD_OK);

	/* The stored elastic energy of the initial state is C^2 / (2 alpha), C the stretch. */
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	const double c0 = tp_len(x[1]) - L;
	assert_near(st.elastic_energy, c0 * c0 / (2 * alpha), TEST_TOL(1e-9, 1e-4) * c0 * c0 / (2 * alpha));

	const int steps = (int)(6.5 * steps_per_period);
	double prev = c0, t_prev = 0, first = -1, last = -1, peak = 0;
	int crossings = 0;
	for (int s = 1; s <= steps; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const double u_now = tp_len(pbd_world_positions(w)[1]) - L;
		const double t_now = s * (double)def.dt;
		if ((prev > 0) != (u_now > 0)) {
			const double tc = t_prev + (t_now - t_prev) * prev / (prev - u_now); /* linear interpolation */
			if (crossings == 0) first = tc;
			last = tc;
			crossings++;
		}
		if (s > steps - steps_per_period && fabs(u_now) > peak) peak = fabs(u_now);
		prev = u_now;
		t_prev = t_now;
	}
	/* The motion stays on the line of the spring (no sideways drift). */
	const pbd_vec3 xe = pbd_world_positions(w)[1];
	const double r = tp_len(xe);
	/* Only float rounding turns it (observed 1e-4..1e-3 after 6 periods): the corrections are
	 * radial, so nothing restores a sideways velocity once rounding has made one. */
	assert_near((double)xe.x / r, u.x, TEST_TOL(1e-9, 5e-3));
	assert_near((double)xe.y / r, u.y, TEST_TOL(1e-9, 5e-3));
	pbd_world_destroy(w);
	assert_true(crossings >= 10);
	*amp_ratio = peak / c0;
	return 2 * (last - first) / (crossings - 1);
}

static void test_spring_period(void** state) {
	(void)state;
	const double m = 0.5, alpha = 0.01;
	const double T = 2 * TP_PI * sqrt(m * alpha);
	const pbd_solver solvers[2] = {PBD_SOLVER_GAUSS_SEIDEL, PBD_SOLVER_JACOBI};
	const int its[3] = {1, 5, 20};
	/* (substeps, steps per period): h = T/200 with 1 substep, T/200 and T/400 split in substeps. */
	const int sub[3] = {1, 4, 10};
	const double spp[3] = {200, 50, 40};
	double worst = 0;
	for (int s = 0; s < 2; ++s)
		for (int i = 0; i < 3; ++i)
			for (int k = 0; k < 3; ++k) {
				double amp;
				const double P = spring_period(solvers[s], its[i], sub[k], spp[k], m, alpha, &amp);
				const double err = fabs(P - T) / T;
				if (err > worst) worst = err;
				printf("  spring %s it %2d substeps %2d h = T/%3.0f: period %.5f s (analytic %.5f), error %.3f %%, "
				       "amplitude after 6 periods %.2f\n",
				       s ? "Jacobi" : "GS    ", its[i], sub[k], spp[k] * sub[k], P, T, 100 * err, amp);
				assert_true(err < 0.02);
				/* XPBD is implicit: it may lose amplitude but never gain it. */
				assert_true(amp <= 1.0 + 1e-6);
				assert_true(amp > 0.3);
			}
	printf("  worst spring period error %.3f %%\n", 100 * worst);
}

/* Control: a stiffer spring (alpha / 4) has half the period; the measurement sees it. */
static void test_spring_period_scales_with_compliance(void** state) {
	(void)state;
	double amp;
	const double p1 = spring_period(PBD_SOLVER_GAUSS_SEIDEL, 3, 2, 100, 0.5, 0.01, &amp);
	const double p4 = spring_period(PBD_SOLVER_GAUSS_SEIDEL, 3, 2, 100, 0.5, 0.0025, &amp);
	assert_near(p4 / p1, 0.5, 0.01);
	const double pm = spring_period(PBD_SOLVER_GAUSS_SEIDEL, 3, 2, 100, 2.0, 0.01, &amp);
	assert_near(pm / p1, 2.0, 0.04);
}

/* Compliance is per direction: a link soft in compression and hard in stretch pulls back a
 * stretch fully in one step and lets a compression through partly. */
static void test_stretch_compress_compliance(void** state) {
	(void)state;
	for (int stretched = 0; stretched < 2; ++stretched) {
		pbd_world_def def = pbd_world_def_default();
		def.gravity = pbd_v3(0, 0, 0);
		def.formulation = PBD_FORMULATION_XPBD;
		def.iterations = 1;
		def.dt = (pbd_real)0.01;
		pbd_world* w = test_world(&def);
		const pbd_vec3 x[2] = {{0, 0, 0}, {stretched ? (pbd_real)1.5 : (pbd_real)0.5, 0, 0}};
		const pbd_real inv[2] = {0, 1};
		assert_int_equal(pbd_world_add_particles(w, 2, x, NULL, inv, NULL), PBD_OK);
		pbd_distance_def dd = pbd_distance_def_default();
		dd.a = 0;
		dd.b = 1;
		dd.rest = 1;
		dd.compliance_stretch = 0;
		dd.compliance_compress = (pbd_real)1e-4; /* alpha / h^2 = 1 = w: half the error is removed */
		assert_int_equal(pbd_world_add_distances(w, 1, &dd, NULL), PBD_OK);
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const double want = stretched ? 1.0 : 0.75;
		assert_near(pbd_world_positions(w)[1].x, want, TEST_TOL(1e-9, 1e-5));
		pbd_world_destroy(w);
	}
}

/* A vertical strip of 10 links (1 m) pinned at the top, 0.1 kg per particle and a 1 kg load at
 * the bottom, left to settle under damping. Returns the total stretch in m. XPBD: compliance
 * alpha per link; PBD: stiffness k per link. */
static double strip_stretch(pbd_formulation f, int iterations, int substeps, pbd_real soft) {
	pbd_world_def def = pbd_world_def_default();
	def.formulation = f;
	def.iterations = iterations;
	def.substeps = substeps;
	def.damping = (pbd_real)0.9;
	pbd_world* w = test_world(&def);
	enum { N = 11 };
	pbd_vec3 x[N];
	pbd_real iw[N];
	for (int i = 0; i < N; ++i) {
		x[i] = pbd_v3(0, (pbd_real)(-0.1 * i), 0);
		iw[i] = i == 0 ? 0 : i == N - 1 ? 1 : 10;
	}
	assert_int_equal(pbd_world_add_particles(w, N, x, NULL, iw, NULL), PBD_OK);
	pbd_distance_def dd[N - 1];
	for (int i = 0; i < N - 1; ++i) {
		dd[i] = pbd_distance_def_default();
		dd[i].a = (uint32_t)i;
		dd[i].b = (uint32_t)i + 1;
		if (f == PBD_FORMULATION_XPBD) {
			dd[i].compliance_stretch = soft;
			dd[i].compliance_compress = soft;
		} else {
			dd[i].stiffness_stretch = soft;
			dd[i].stiffness_compress = soft;
		}
	}
	assert_int_equal(pbd_world_add_distances(w, N - 1, dd, NULL), PBD_OK);
	/* 200 steps (3.3 s) settle the damped strip: its stretch is within 1e-5 of that after 600. */
	for (int s = 0; s < 200; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const double stretch = -(double)pbd_world_positions(w)[N - 1].y - 1.0;
	pbd_world_destroy(w);
	return stretch;
}

/* XPBD's promise (Macklin et al. 2016): the equilibrium of a compliant constraint does not
 * depend on the iteration count. The strip's analytic stretch is alpha g sum_i (load below link
 * i) = alpha g (10 * 1 + 0.1 * (9 + 8 + ... + 0)) = alpha g 14.5. A PBD stiffness is not a
 * material: with the iteration correction k' = 1 - (1 - k)^(1/n) its equilibrium no longer
 * moves with the iteration count, but it still scales with the time step. One projection with
 * k removes the fraction k of the violation per substep whatever h, so the spring it acts as has
 * k_eff ~ k m / h^2: four times fewer substeps stretch the strip 16 times more. */
static void test_stiffness_independent_of_iterations(void** state) {
	(void)state;
	const pbd_real alpha = (pbd_real)1e-4;
	const double analytic = 1e-4 * 9.81 * 14.5;
	const int its[3] = {5, 20, 100};
	double xp[3], pb[3], pb_sub[3];
	for (int k = 0; k < 3; ++k) {
		xp[k] = strip_stretch(PBD_FORMULATION_XPBD, its[k], 20, alpha);
		pb[k] = strip_stretch(PBD_FORMULATION_PBD, its[k], 20, (pbd_real)0.5);
		pb_sub[k] = strip_stretch(PBD_FORMULATION_PBD, its[k], 5, (pbd_real)0.5);
		printf("  strip, %3d iterations: XPBD stretch %.4f mm (analytic %.4f mm); PBD k 0.5: %.4f mm at 20 "
		       "substeps, %.4f mm at 5\n",
		       its[k], 1e3 * xp[k], 1e3 * analytic, 1e3 * pb[k], 1e3 * pb_sub[k]);
		assert_near(xp[k], analytic, 0.05 * analytic);
	}
	/* PBD: the same stiffness is a different material at other iteration counts or substeps. */
	const double spread = fmax(fmax(pb[0], pb[1]), pb[2]) / fmin(fmin(pb[0], pb[1]), pb[2]);
	const double sub_ratio = pb_sub[1] / pb[1];
	printf("  PBD stretch varies by x%.2f over the iterations, x%.2f from 20 to 5 substeps\n", spread, sub_ratio);
	assert_true(spread < 1.05);
	assert_near(sub_ratio, 16, 1.6);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_zero_compliance_is_hard),
	    cmocka_unit_test(test_zero_compliance_matches_pbd),
	    cmocka_unit_test(test_spring_period),
	    cmocka_unit_test(test_spring_period_scales_with_compliance),
	    cmocka_unit_test(test_stretch_compress_compliance),
	    cmocka_unit_test(test_stiffness_independent_of_iterations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
