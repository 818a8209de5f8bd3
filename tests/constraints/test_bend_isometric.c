/* Isometric bending (Bergou et al. 2006): the weights against an independent cotangent
 * computation and Bergou's identity |s| = 2 sin(theta/2) kappa, the gradient against central
 * differences, the exact projection, momentum, energy, degenerate hinges, validation, the energy
 * of a bent sheet against the discrete-shells energy, and the physical claims shared with the
 * dihedral family. */
#include <stdio.h>

#include "constraints/bend.h"
#include "test_bend.h"

/* The library's weights for a world's hinge 0..3 (double, from positions relative to x0). */
static void library_weights(const tp_dvec3 x[4], double K[4], double* kappa) {
	double e[3], a2[3], a3[3];
	const tp_dvec3 v[3] = {tp_dsub(x[1], x[0]), tp_dsub(x[2], x[0]), tp_dsub(x[3], x[0])};
	double* out[3] = {e, a2, a3};
	for (int j = 0; j < 3; ++j) {
		out[j][0] = v[j].x;
		out[j][1] = v[j].y;
		out[j][2] = v[j].z;
	}
	assert_true(pbd_hinge_isometric_weights(e, a2, a3, K, kappa));
}

/* grad_i C = K_i s / |s| with the weights the world measured when the constraint was added (the
 * tests add at the current shape, so the weights are those of the current positions, rounded to
 * the scalar as the library stores them). */
static void library_grad(const pbd_world* w, tp_dvec3 g[4]) {
	tp_dvec3 x[4];
	tb_read(w, 0, 4, x);
	double K[4], kappa;
	library_weights(x, K, &kappa);
	tp_dvec3 s = tb_v(0, 0, 0);
	for (int i = 1; i < 4; ++i) s = tb_add(s, tb_scale(tp_dsub(x[i], x[0]), (double)(pbd_real)K[i]));
	const tp_dvec3 dir = tb_scale(s, 1 / tp_dlen(s));
	for (int i = 0; i < 4; ++i) g[i] = tb_scale(dir, (double)(pbd_real)K[i]);
}

/* The weights equal the test's own cotangent formula and sum to zero; s vanishes on any flat
 * hinge; and folding a flat hinge by theta about its edge (an isometry) gives
 * |s| = 2 sin(theta / 2) kappa exactly, for every shape and angle up to pi. */
static void test_weights_and_bergou_identity(void** state) {
	(void)state;
	uint64_t seed = 8;
	for (int trial = 0; trial < 100; ++trial) {
		const double L = tp_rand_range(&seed, 0.5, 1.5);
		const double u2 = tp_rand_range(&seed, -0.5, 1.5) * L, h2 = tp_rand_range(&seed, 0.2, 1.2);
		const double u3 = tp_rand_range(&seed, -0.5, 1.5) * L, h3 = tp_rand_range(&seed, 0.2, 1.2);
		const uint64_t pose = (uint64_t)(tp_rand(&seed) * 1e9);
		tp_dvec3 flat[4];
		tb_hinge(L, u2, h2, u3, h3, 0, flat);
		tb_move(flat, pose, 2);
		double K[4], Kref[4], kappa, kref;
		library_weights(flat, K, &kappa);
		tb_iso_weights(flat, Kref, &kref);
		double norm = 0;
		for (int i = 0; i < 4; ++i) norm += fabs(Kref[i]);
		for (int i = 0; i < 4; ++i) assert_near(K[i], Kref[i], 1e-12 * norm);
		assert_near(K[0] + K[1] + K[2] + K[3], 0, 1e-14 * norm);
		assert_near(kappa, kref, 1e-12 * kref);
		assert_near(tb_iso_C(K, flat, 0), 0, 1e-12 * norm);
		const double angles[] = {0.001, 0.1, 1.0, 2.5, TP_PI};
		for (int a = 0; a < 5; ++a) {
			tp_dvec3 x[4];
			tb_hinge(L, u2, h2, u3, h3, angles[a], x);
			tb_move(x, pose, 2);
			assert_near(tb_iso_C(K, x, 0), 2 * sin(angles[a] / 2) * kappa, 1e-11 * kappa);
		}
	}
}

/* C = |s| - r0 against central differences of the reference C, at random bent hinges. */
static void test_gradient_matches_differences(void** state) {
	(void)state;
	uint64_t seed = 2;
	double worst = 0;
	for (int trial = 0; trial < 100; ++trial) {
		tp_dvec3 x[4];
		tb_random_hinge(&seed, x);
		const pbd_real iw[4] = {1, 1, 1, 1};
		tb_ref ref;
		pbd_world* w = tb_one(TB_ISOMETRIC, PBD_FORMULATION_PBD, PBD_SOLVER_GAUSS_SEIDEL, 1, x, iw, 0.1, 1, 0, &ref);
		tp_dvec3 y[4], g[4], fd[4];
		tb_read(w, 0, 4, y);
		library_grad(w, g);
		tb_ref_grad(&ref, y, fd);
		for (int i = 0; i < 4; ++i) {
			const double err = tp_dlen(tp_dsub(g[i], fd[i])) / tp_dlen(fd[i]);
			if (err > worst) worst = err;
		}
		pbd_world_destroy(w);
	}
	printf("isometric gradient vs central differences: worst relative error %.2e\n", worst);
	assert_true(worst < TEST_TOL(1e-7, 1e-5));
}

static void test_projection_gradient(void** state) {
	(void)state;
	tb_check_projection_gradient(TB_ISOMETRIC);
}

static void test_linearisation(void** state) {
	(void)state;
	(void)tb_check_linearisation(TB_ISOMETRIC);
}

static void test_momentum(void** state) {
	(void)state;
	tb_check_momentum(TB_ISOMETRIC);
}

static void test_energy(void** state) {
	(void)state;
	tb_check_energy(TB_ISOMETRIC, library_grad);
}

/* Steps a one-hinge world, hard and soft, every solver and formulation; states stay finite, and
 * with `still` nothing moves. The bend is added at `x_add` and stepped from `x_run`. */
static void step_hinge(const tp_dvec3 x_add[4], const tp_dvec3 x_run[4], bool measure, double rest, bool still) {
	for (int solver = 0; solver < 2; ++solver)
		for (int form = 0; form < 2; ++form)
			for (int soft = 0; soft < 2; ++soft) {
				const pbd_real iw[4] = {1, 2, (pbd_real)0.5, 1};
				pbd_world* w = tb_world((pbd_formulation)form, (pbd_solver)solver, 5, 4, x_add, iw);
				const uint32_t h[4] = {0, 1, 2, 3};
				tb_add_bends(w, TB_ISOMETRIC, 1, h, measure, (pbd_real)rest, soft ? (pbd_real)0.5 : 1,
				             soft ? (pbd_real)0.1 : 0);
				pbd_vec3 p[4];
				for (int i = 0; i < 4; ++i) p[i] = tb_r(x_run[i]);
				assert_int_equal(pbd_world_set_positions(w, 0, 4, p), PBD_OK);
				tp_dvec3 a[4], b[4];
				tb_read(w, 0, 4, a);
				for (int s = 0; s < 10; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
				assert_true(tp_all_finite(w));
				tb_read(w, 0, 4, b);
				if (still) assert_memory_equal(a, b, sizeof a);
				pbd_stats st;
				pbd_world_get_stats(w, &st);
				assert_true(isfinite(st.family[PBD_FAMILY_BEND_ISOMETRIC].max_violation));
				pbd_world_destroy(w);
			}
}

/* A rest shape with a zero-area triangle or a collapsed edge has no weights: refused. At run time
 * the constraint is linear and has no degenerate shape of its own: a flat hinge (s = 0, C = 0 for
 * a flat rest), folded shut, its points all coincident, stays finite; a flat-rest hinge that is
 * flat does not move; a curved-rest hinge that is exactly flat is skipped (no direction back). */
static void test_degenerate(void** state) {
	(void)state;
	const pbd_real iw[4] = {1, 1, 1, 1};
	const uint32_t h[4] = {0, 1, 2, 3};
	tp_dvec3 bad[4][4];
	tb_hinge(1, 0.5, 1, 0.5, 1, 0.5, bad[0]);
	bad[0][2] = tb_v(0.3, 0, 0);
	tb_hinge(1, 0.5, 1, 0.5, 1, 0.5, bad[1]);
	bad[1][1] = bad[1][0];
	for (int i = 0; i < 4; ++i) bad[2][i] = tb_v(0.1, 0.2, 0.3);
	/* A hinge 10 nm long and 1e-5 of that thick: weights near 1e16 / m, whose squares times the
	 * largest inverse mass would overflow a float. */
	tb_hinge(1e-8, 0.5e-8, 1e-13, 0.5e-8, 1e-8, 0.5, bad[3]);
#ifdef PBD_DOUBLE
	const int nbad = 3;
#else
	const int nbad = 4;
#endif
	for (int b = 0; b < nbad; ++b)
		for (int measure = 0; measure < 2; ++measure) {
			char last[256] = "";
			pbd_world_def def = pbd_world_def_default();
			def.log = test_log_keep;
			def.log_user = last;
			pbd_world* w = NULL;
			assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
			pbd_vec3 p[4];
			for (int i = 0; i < 4; ++i) p[i] = tb_r(bad[b][i]);
			assert_int_equal(pbd_world_add_particles(w, 4, p, NULL, iw, NULL), PBD_OK);
			pbd_bend_isometric_def d = pbd_bend_isometric_def_default();
			memcpy(d.p, h, sizeof d.p);
			d.measure_rest = measure != 0;
			assert_int_equal(pbd_world_add_bend_isometrics(w, 1, &d, NULL), PBD_ERR_DEGENERATE);
			assert_non_null(strstr(last, "pbd_world_add_bend_isometrics: constraint 0"));
			assert_int_equal(pbd_world_bend_isometric_count(w), 0);
			pbd_world_destroy(w);
		}
	tp_dvec3 flat[4], folded[4], shut[4], point[4];
	tb_hinge(1, 0.5, 1, 0.5, 1, 0, flat);
	tb_hinge(1, 0.5, 1, 0.5, 1, 1.0, folded);
	tb_hinge(1, 0.5, 1, 0.5, 1, TP_PI, shut);
	for (int i = 0; i < 4; ++i) point[i] = tb_v(0.1, 0.2, 0.3);
	step_hinge(flat, flat, true, 0, true);     /* flat rest, flat: nothing to do */
	step_hinge(folded, flat, true, 0, true);   /* curved rest, exactly flat: skipped */
	step_hinge(flat, folded, true, 0, false);  /* unfolds */
	step_hinge(flat, shut, true, 0, false);    /* folded shut */
	step_hinge(flat, point, true, 0, false);   /* all coincident: s = 0, skipped */
	step_hinge(folded, point, true, 0, false); /* likewise with a curved rest */
}

/* The rest bend: measured, or given as an angle (sign ignored), read back as an angle. */
static void test_rest_angle(void** state) {
	(void)state;
	const pbd_real iw[4] = {1, 1, 1, 1};
	const uint32_t h[4] = {0, 1, 2, 3};
	const double angles[] = {0, 0.3, -1.2, 2.5, TP_PI};
	for (int a = 0; a < 5; ++a) {
		tp_dvec3 x[4];
		tb_hinge(1.1, 0.2, 0.7, 0.8, 0.9, angles[a], x);
		pbd_world* w = tb_world(PBD_FORMULATION_PBD, PBD_SOLVER_GAUSS_SEIDEL, 1, 4, x, iw);
		tb_add_bends(w, TB_ISOMETRIC, 1, h, true, 0, 1, 0);
		tb_add_bends(w, TB_ISOMETRIC, 1, h, false, (pbd_real)angles[a], 1, 0);
		for (uint32_t k = 0; k < 2; ++k) {
			pbd_bend_isometric_def d;
			assert_int_equal(pbd_world_get_bend_isometric(w, k, &d), PBD_OK);
			assert_false(d.measure_rest);
			/* asin loses half the digits near pi, where sin(theta/2) is flat */
			assert_near(d.rest, fabs(angles[a]), a == 4 ? TEST_TOL(1e-7, 1e-3) : TEST_TOL(1e-9, 1e-5));
		}
		pbd_stats st;
		pbd_world_get_stats(w, &st);
		assert_true(st.family[PBD_FAMILY_BEND_ISOMETRIC].max_violation < TEST_TOL(1e-12, 1e-5));
		pbd_world_destroy(w);
	}
}

/* Refusals name the function, the constraint and the field; nothing is added. */
static void test_validation(void** state) {
	(void)state;
	char last[256] = "";
	pbd_world_def def = pbd_world_def_default();
	def.log = test_log_keep;
	def.log_user = last;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	tp_dvec3 x[4];
	tb_hinge(1, 0.5, 1, 0.5, 1, 0.4, x);
	pbd_vec3 p[4];
	for (int i = 0; i < 4; ++i) p[i] = tb_r(x[i]);
	const pbd_real iw[4] = {1, 1, 1, 1};
	assert_int_equal(pbd_world_add_particles(w, 4, p, NULL, iw, NULL), PBD_OK);
	pbd_bend_isometric_def d[2] = {pbd_bend_isometric_def_default(), pbd_bend_isometric_def_default()};
	for (int k = 0; k < 2; ++k)
		for (int i = 0; i < 4; ++i) d[k].p[i] = (uint32_t)i;
	assert_int_equal(pbd_world_add_bend_isometrics(w, 0, d, NULL), PBD_ERR_INVALID_ARGUMENT);
	assert_int_equal(pbd_world_add_bend_isometrics(w, 1, NULL, NULL), PBD_ERR_INVALID_ARGUMENT);
	d[1].p[0] = 7;
	assert_int_equal(pbd_world_add_bend_isometrics(w, 2, d, NULL), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(last, "pbd_world_add_bend_isometrics: constraint 1: particle index p[0] = 7"));
	d[1].p[0] = 2;
	assert_int_equal(pbd_world_add_bend_isometrics(w, 2, d, NULL), PBD_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(last, "constraint 1: p[0] and p[2]"));
	d[1].p[0] = 0;
	d[1].stiffness = -1;
	assert_int_equal(pbd_world_add_bend_isometrics(w, 2, d, NULL), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(last, "constraint 1: stiffness"));
	d[1].stiffness = 1;
	d[1].compliance = -1;
	assert_int_equal(pbd_world_add_bend_isometrics(w, 2, d, NULL), PBD_ERR_OUT_OF_RANGE);
	d[1].compliance = 0;
	d[1].measure_rest = false;
	d[1].rest = -4;
	assert_int_equal(pbd_world_add_bend_isometrics(w, 2, d, NULL), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(last, "constraint 1: rest"));
	d[1].rest = (pbd_real)INFINITY;
	assert_int_equal(pbd_world_add_bend_isometrics(w, 2, d, NULL), PBD_ERR_NOT_FINITE);
	assert_int_equal(pbd_world_bend_isometric_count(w), 0);
	d[1].rest = 0;
	assert_int_equal(pbd_world_add_bend_isometrics(w, 2, d, NULL), PBD_OK);
	assert_int_equal(pbd_world_bend_isometric_count(w), 2);
	assert_int_equal(pbd_world_set_bend_isometric_material(w, 0, 1, (pbd_real)0.5, 3), PBD_OK);
	pbd_bend_isometric_def got;
	assert_int_equal(pbd_world_get_bend_isometric(w, 0, &got), PBD_OK);
	assert_true(got.stiffness == (pbd_real)0.5 && got.compliance == 3);
	assert_int_equal(pbd_world_get_bend_isometric(w, 1, &got), PBD_OK);
	assert_true(got.stiffness == 1 && got.compliance == 0 && got.rest == 0);
	assert_int_equal(pbd_world_set_bend_isometric_material(w, 2, 1, 1, 0), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(last, "pbd_world_set_bend_isometric_material"));
	assert_int_equal(pbd_world_set_bend_isometric_material(w, 0, 1, 1, (pbd_real)NAN), PBD_ERR_NOT_FINITE);
	assert_string_equal(pbd_family_name(PBD_FAMILY_BEND_ISOMETRIC), "bend_isometric");
	pbd_world_destroy(w);
}

/* Bergou's claim: for a flat sheet bent isometrically the quadratic energy is the discrete-shells
 * energy sum_e 3 |e|^2 theta_e^2 / A_e (Grinspun et al. 2003) up to O(theta^2): exactly, it has
 * 4 sin^2(theta/2) in place of theta^2, a relative difference of theta^2 / 12. A grid rolled onto
 * a prism of many sides (its columns stay flat strips, so every edge keeps its length: an exact
 * isometry, of angle theta at every column edge) at three radii: the XPBD energy reported against
 * the discrete-shells sum over the same hinges with their reference angles. In float too. */
static void test_cylinder_energy_matches_discrete_shells(void** state) {
	(void)state;
	const double radii[3] = {1, 0.5, 0.25};
	double rel[3], order[3];
	for (int r = 0; r < 3; ++r) {
		pbd_world_def def = pbd_world_def_default();
		def.formulation = PBD_FORMULATION_XPBD;
		pbd_world* w = test_world(&def);
		pbd_grid_def gd = pbd_grid_def_default();
		gd.nx = 13;
		gd.ny = 7;
		gd.size_u = 1;
		gd.size_v = (pbd_real)0.5;
		gd.diagonals = 1;
		const double alpha = 0.5, du = 1.0 / 12;
		tb_grid_body(w, &gd, TB_ISOMETRIC, 1, (pbd_real)alpha, NULL, 0);
		/* Column i turns by i theta about the z axis, theta = du / R; the prism's circumradius makes
		 * each side du long. */
		const double theta = du / radii[r], Rp = du / (2 * sin(theta / 2));
		const uint32_t n = pbd_world_particle_count(w);
		pbd_vec3* p = (pbd_vec3*)malloc(n * sizeof *p);
		assert_int_equal(pbd_world_get_positions(w, 0, n, p), PBD_OK);
		for (uint32_t i = 0; i < n; ++i) {
			const double phi = (double)(i % 13) * theta;
			p[i].x = (pbd_real)(Rp * sin(phi));
			p[i].y = (pbd_real)(Rp * (1 - cos(phi)));
		}
		assert_int_equal(pbd_world_set_positions(w, 0, n, p), PBD_OK);
		/* The discrete-shells sum over the same hinges: angles on the rolled sheet, edge lengths and
		 * areas on the flat one. */
		double shells = 0;
		pbd_mesh m;
		pbd_error err;
		assert_int_equal(pbd_mesh_grid(&gd, &m, &err), PBD_OK);
		uint32_t nh, bent = 0;
		uint32_t* h = tb_hinges(&m, 0, &nh);
		for (uint32_t k = 0; k < nh; ++k) {
			tp_dvec3 x[4], flat[4];
			for (int i = 0; i < 4; ++i) {
				x[i] = tp_d(p[h[4 * k + (uint32_t)i]]);
				flat[i] = tp_d(m.positions[h[4 * k + (uint32_t)i]]);
			}
			const double t = tb_angle(x);
			const tp_dvec3 e = tp_dsub(flat[1], flat[0]);
			const double A = 0.5 * tp_dlen(tb_cross(e, tp_dsub(flat[2], flat[0]))) +
			                 0.5 * tp_dlen(tb_cross(e, tp_dsub(flat[3], flat[0])));
			shells += 3 * tb_dot(e, e) * t * t / A;
			if (fabs(t) > 1e-3) {
				assert_near(fabs(t), theta, 1e-5);
				bent++;
			}
		}
		assert_int_equal(bent, 11 * 6); /* the column edges inside the sheet */
		free(h);
		pbd_mesh_free(&m);
		free(p);
		pbd_stats st;
		pbd_world_get_stats(w, &st);
		const double E = st.family[PBD_FAMILY_BEND_ISOMETRIC].elastic_energy;
		const double want = shells / (2 * alpha); /* E = C^2 / (2 alpha), C^2 ~ 3 |e|^2 theta^2 / A */
		rel[r] = (want - E) / want;
		const double sinc = sin(theta / 2) / (theta / 2);
		order[r] = 1 - sinc * sinc; /* = theta^2 / 12 - theta^4 / 360 + ... */
		printf("isometric energy on a prism of radius %.2f: %.6g J, discrete shells %.6g J, relative difference "
		       "%.3e, 1 - sinc^2(theta/2) = %.3e (theta %.3f rad)\n",
		       radii[r], E, want, rel[r], order[r], theta);
		assert_near(rel[r], order[r], TEST_TOL(1e-9, 5e-5));
		pbd_world_destroy(w);
	}
	/* Second order: halving the radius doubles the angles and about quadruples the difference. */
	assert_near(rel[1] / rel[0], 4, 0.2);
	assert_near(rel[2] / rel[1], 4, 0.2);
}

static void test_scene(void** state) {
	(void)state;
	tb_check_scene(TB_ISOMETRIC);
}

static void test_flat_sheet_stays_flat(void** state) {
	(void)state;
	tb_check_flat_sheet(TB_ISOMETRIC);
}

/* Folded to a right angle with a flat rest (Bergou's case), and a curved rest of 1 rad reached
 * from 2 rad and from 0.3 rad. */
static void test_unfolds_to_rest(void** state) {
	(void)state;
	const double starts[3] = {TP_PI / 2, 2.0, 0.3}, rests[3] = {0, 1, 1};
	for (int k = 0; k < 3; ++k) {
		const double e = tb_check_unfold(TB_ISOMETRIC, starts[k], rests[k]);
		printf("isometric: from %.2f to rest %.2f rad: final error %.2e rad\n", starts[k], rests[k], e);
	}
}

/* As for the dihedral family: the XPBD sag does not depend on the iteration count. */
static void test_cantilever_iteration_independent(void** state) {
	(void)state;
	const pbd_real alpha = (pbd_real)0.2;
	double sag[3], few[3];
	const int its[3] = {2, 8, 32};
	for (int i = 0; i < 3; ++i) {
		sag[i] = tb_cantilever_sag(TB_ISOMETRIC, PBD_FORMULATION_XPBD, 1, alpha, its[i], 50);
		few[i] = tb_cantilever_sag(TB_ISOMETRIC, PBD_FORMULATION_XPBD, 1, alpha, its[i], 5);
	}
	const double soft = tb_cantilever_sag(TB_ISOMETRIC, PBD_FORMULATION_XPBD, 1, 2 * alpha, 8, 50);
	printf("isometric cantilever sag (m), XPBD alpha %.3g, 2/8/32 iterations: %.4f %.4f %.4f with 50 substeps, "
	       "%.4f %.4f %.4f with 5; alpha x2: %.4f\n",
	       (double)alpha, sag[0], sag[1], sag[2], few[0], few[1], few[2], soft);
	assert_true(sag[1] > 0.05 && sag[1] < 0.5);
	assert_near(sag[0], sag[1], 0.02 * sag[1]);
	assert_near(sag[2], sag[1], 0.02 * sag[1]);
	assert_true(soft > 1.3 * sag[1]); /* and it does follow the compliance */
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_weights_and_bergou_identity),
	    cmocka_unit_test(test_gradient_matches_differences),
	    cmocka_unit_test(test_projection_gradient),
	    cmocka_unit_test(test_linearisation),
	    cmocka_unit_test(test_momentum),
	    cmocka_unit_test(test_energy),
	    cmocka_unit_test(test_degenerate),
	    cmocka_unit_test(test_rest_angle),
	    cmocka_unit_test(test_validation),
	    cmocka_unit_test(test_cylinder_energy_matches_discrete_shells),
	    cmocka_unit_test(test_scene),
	    cmocka_unit_test(test_flat_sheet_stays_flat),
	    cmocka_unit_test(test_unfolds_to_rest),
	    cmocka_unit_test(test_cantilever_iteration_independent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
