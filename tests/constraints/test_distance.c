/* One distance constraint, projected once: it must land exactly on its rest length, move its
 * ends in inverse-mass proportion along the line between them, respect the stretch/compress
 * split, and the PBD iteration correction k' = 1 - (1 - k)^(1/n) must make n iterations remove
 * exactly the fraction k of the error. Gravity is off and velocities are zero, so the predicted
 * positions are the initial ones and only the constraint moves anything. */
#include <stdio.h>
#include <string.h>

#include "test_physics.h"

typedef struct two {
	pbd_world* w;
	pbd_vec3 a0, b0; /* positions before the step */
} two;

static two make_two(pbd_solver solver, pbd_formulation f, int iterations, pbd_vec3 a, pbd_vec3 b, pbd_real wa,
                    pbd_real wb, pbd_distance_def dd) {
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, 0, 0);
	def.iterations = iterations;
	def.solver = solver;
	def.formulation = f;
	def.dt = (pbd_real)0.01;
	two t;
	t.w = test_world(&def);
	t.a0 = a;
	t.b0 = b;
	const pbd_vec3 pos[2] = {a, b};
	const pbd_real inv[2] = {wa, wb};
	assert_int_equal(pbd_world_add_particles(t.w, 2, pos, NULL, inv, NULL), PBD_OK);
	dd.a = 0;
	dd.b = 1;
	assert_int_equal(pbd_world_add_distances(t.w, 1, &dd, NULL), PBD_OK);
	return t;
}

#ifdef PBD_DOUBLE
#define PR(x) (x)
#else
#define PR(x) (x##f)
#endif

/* Checks one projected pair: length equals rest, displacements opposite along the initial
 * line, |da| : |db| = wa : wb, and the ends moved toward each other iff the link was long. */
static void check_projection(const two* t, double rest, double wa, double wb) {
	const pbd_vec3* x = pbd_world_positions(t->w);
	const double tol = TEST_TOL(1e-12, 2e-6);
	assert_near(tp_dist(x[0], x[1]), rest, tol * rest);

	const tp_dvec3 da = tp_dsub(tp_d(x[0]), tp_d(t->a0));
	const tp_dvec3 db = tp_dsub(tp_d(x[1]), tp_d(t->b0));
	const tp_dvec3 line = tp_dsub(tp_d(t->b0), tp_d(t->a0)); /* from a to b */
	const double len0 = tp_dlen(line);
	const tp_dvec3 u = {line.x / len0, line.y / len0, line.z / len0};
	const double err0 = len0 - rest;

	/* Exact PBD answer: a moves wa/(wa+wb) * err0 toward b, b moves wb/(wa+wb) * err0 toward a. */
	const double sa = wa / (wa + wb) * err0, sb = -wb / (wa + wb) * err0;
	const double ta = da.x * u.x + da.y * u.y + da.z * u.z; /* signed displacement along u */
	const double tb = db.x * u.x + db.y * u.y + db.z * u.z;
	assert_near(ta, sa, tol * (fabs(err0) + len0));
	assert_near(tb, sb, tol * (fabs(err0) + len0));
	/* No motion off the line. */
	assert_near(tp_dlen(da), fabs(ta), tol * (fabs(err0) + len0));
	assert_near(tp_dlen(db), fabs(tb), tol * (fabs(err0) + len0));
	/* Opposite directions in inverse-mass proportion: wb * da = -wa * db. */
	if (wa > 0 && wb > 0) assert_near(wb * ta + wa * tb, 0.0, tol * (fabs(err0) + len0) * (wa + wb));
	/* Stretched links shorten (a moves toward b), compressed links lengthen. */
	if (wa > 0) assert_true(err0 > 0 ? ta > 0 : ta < 0);
	if (wb > 0) assert_true(err0 > 0 ? tb < 0 : tb > 0);
}

/* The worked example of the brief: inverse masses 1 and 3, along x, length 2, rest 1:
 * a moves +0.25, b moves -0.75; both exactly representable, so exact to the last bit. */
static void test_axis_example_exact(void** state) {
	(void)state;
	pbd_distance_def dd = pbd_distance_def_default();
	dd.rest = 1;
	two t = make_two(PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_PBD, 1, pbd_v3(0, 0, 0), pbd_v3(2, 0, 0), 1, 3, dd);
	assert_int_equal(pbd_world_step(t.w), PBD_OK);
	const pbd_vec3* x = pbd_world_positions(t.w);
	assert_true(x[0].x == PR(0.25) && x[0].y == 0 && x[0].z == 0);
	assert_true(x[1].x == PR(1.25) && x[1].y == 0 && x[1].z == 0);
	/* The velocity is the displacement over dt (0.25/0.01 and -0.75/0.01). */
	const pbd_vec3* v = pbd_world_velocities(t.w);
	assert_near(v[0].x, 25.0, TEST_TOL(1e-9, 1e-3));
	assert_near(v[1].x, -75.0, TEST_TOL(1e-9, 1e-3));
	pbd_world_destroy(t.w);
}

/* Oblique line, stretched and compressed, both solvers (a single constraint has degree 1 at
 * both ends, so averaged Jacobi must equal Gauss-Seidel), PBD stiffness 1 and XPBD compliance
 * 0 (which is the same projection). */
static void test_single_projection(void** state) {
	(void)state;
	const pbd_vec3 a = pbd_v3(PR(0.3), PR(-0.2), PR(0.5));
	const pbd_vec3 dir = pbd_v3(PR(1.0) / 3, PR(2.0) / 3, PR(-2.0) / 3);
	const double lens[2] = {2.5, 0.4}; /* stretched, compressed against rest 1.1 */
	const pbd_solver solvers[2] = {PBD_SOLVER_GAUSS_SEIDEL, PBD_SOLVER_JACOBI};
	const pbd_formulation forms[2] = {PBD_FORMULATION_PBD, PBD_FORMULATION_XPBD};
	const pbd_real masses[3][2] = {{1, 3}, {PR(0.5), PR(0.5)}, {0, 2}};
	for (int l = 0; l < 2; ++l)
		for (int s = 0; s < 2; ++s)
			for (int f = 0; f < 2; ++f)
				for (int m = 0; m < 3; ++m) {
					pbd_distance_def dd = pbd_distance_def_default();
					dd.rest = PR(1.1);
					const pbd_vec3 b = pbd_v3_add(a, pbd_v3_scale(dir, (pbd_real)lens[l]));
					two t = make_two(solvers[s], forms[f], 1, a, b, masses[m][0], masses[m][1], dd);
					assert_int_equal(pbd_world_step(t.w), PBD_OK);
					check_projection(&t, (double)dd.rest, (double)masses[m][0], (double)masses[m][1]);
					pbd_world_destroy(t.w);
				}
}

/* stiffness_compress 0 is a rope link: a compressed link is left alone (bitwise), a stretched
 * one is still pulled to its rest length. Both solvers. */
static void test_compress_stiffness_zero(void** state) {
	(void)state;
	const pbd_solver solvers[2] = {PBD_SOLVER_GAUSS_SEIDEL, PBD_SOLVER_JACOBI};
	for (int s = 0; s < 2; ++s) {
		pbd_distance_def dd = pbd_distance_def_default();
		dd.rest = 2;
		dd.stiffness_compress = 0;
		two t = make_two(solvers[s], PBD_FORMULATION_PBD, 4, pbd_v3(0, 1, 0), pbd_v3(PR(0.5), 1, PR(0.5)), 1, 1, dd);
		assert_int_equal(pbd_world_step(t.w), PBD_OK);
		const pbd_vec3* x = pbd_world_positions(t.w);
		assert_memory_equal(&x[0], &t.a0, sizeof x[0]);
		assert_memory_equal(&x[1], &t.b0, sizeof x[1]);
		pbd_world_destroy(t.w);

		dd.rest = PR(0.5);
		t = make_two(solvers[s], PBD_FORMULATION_PBD, 1, pbd_v3(0, 1, 0), pbd_v3(PR(1.5), 1, 0), 1, 1, dd);
		assert_int_equal(pbd_world_step(t.w), PBD_OK);
		check_projection(&t, 0.5, 1, 1);
		pbd_world_destroy(t.w);
	}
}

/* Likewise a zero stretch stiffness leaves a stretched link alone while still pushing a
 * compressed one apart. */
static void test_stretch_stiffness_zero(void** state) {
	(void)state;
	pbd_distance_def dd = pbd_distance_def_default();
	dd.rest = 1;
	dd.stiffness_stretch = 0;
	two t = make_two(PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_PBD, 3, pbd_v3(0, 0, 0), pbd_v3(0, 0, 3), 1, 1, dd);
	assert_int_equal(pbd_world_step(t.w), PBD_OK);
	assert_memory_equal(&pbd_world_positions(t.w)[1], &t.b0, sizeof t.b0);
	pbd_world_destroy(t.w);
	t = make_two(PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_PBD, 1, pbd_v3(0, 0, 0), pbd_v3(0, 0, PR(0.25)), 1, 1, dd);
	assert_int_equal(pbd_world_step(t.w), PBD_OK);
	check_projection(&t, 1, 1, 1);
	pbd_world_destroy(t.w);
}

/* Müller et al. 2007, 3.3: with k' = 1 - (1 - k)^(1/n) the error left after n iterations on a
 * single constraint with one pinned end is (1 - k) times the initial error, for every n. Each
 * iteration removes exactly the fraction k' (the free end moves along a fixed line), so the
 * expected value is exact and any other correction (k itself, k/n, ...) fails. */
static void test_iteration_corrected_stiffness(void** state) {
	(void)state;
	const pbd_real ks[3] = {PR(0.3), PR(0.75), PR(0.05)};
	const int ns[5] = {1, 2, 5, 10, 40};
	const double e0s[2] = {0.8, -0.6}; /* stretched and compressed */
	const pbd_solver solvers[2] = {PBD_SOLVER_GAUSS_SEIDEL, PBD_SOLVER_JACOBI};
	for (int s = 0; s < 2; ++s)
		for (int ki = 0; ki < 3; ++ki)
			for (int ni = 0; ni < 5; ++ni)
				for (int ei = 0; ei < 2; ++ei) {
					pbd_distance_def dd = pbd_distance_def_default();
					dd.rest = PR(1.5);
					dd.stiffness_stretch = ks[ki];
					dd.stiffness_compress = ks[ki];
					const pbd_vec3 b =
					    pbd_v3(PR(0.6) * (pbd_real)(1.5 + e0s[ei]), PR(0.8) * (pbd_real)(1.5 + e0s[ei]), 0);
					two t = make_two(solvers[s], PBD_FORMULATION_PBD, ns[ni], pbd_v3(0, 0, 0), b, 0, PR(0.7), dd);
					const double e0 = tp_len(b) - 1.5;
					assert_int_equal(pbd_world_step(t.w), PBD_OK);
					const double e = tp_len(pbd_world_positions(t.w)[1]) - 1.5;
					const double want = (1.0 - (double)ks[ki]) * e0;
					assert_near(e, want, TEST_TOL(1e-10, 3e-6));
					/* A control: the uncorrected stiffness would leave (1-k)^n e0, far from want. */
					if (ns[ni] > 1) assert_true(fabs(pow(1.0 - (double)ks[ki], ns[ni]) * e0 - want) > 1e-3);
					/* The pinned end did not move at all. */
					const pbd_vec3 x0 = pbd_world_positions(t.w)[0];
					assert_true(x0.x == 0 && x0.y == 0 && x0.z == 0);
					pbd_world_destroy(t.w);
				}
}

/* Changing the iteration count between steps must recompute k' (the library caches it). */
static void test_iteration_change_refreshes_stiffness(void** state) {
	(void)state;
	pbd_distance_def dd = pbd_distance_def_default();
	dd.rest = 1;
	dd.stiffness_stretch = PR(0.5);
	dd.stiffness_compress = PR(0.5);
	two t = make_two(PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_PBD, 1, pbd_v3(0, 0, 0), pbd_v3(2, 0, 0), 0, 1, dd);
	assert_int_equal(pbd_world_step(t.w), PBD_OK); /* error 1 -> 0.5 */
	assert_near(pbd_world_positions(t.w)[1].x, 1.5, TEST_TOL(1e-12, 1e-6));
	/* Stop the particle, then step with 7 iterations: error 0.5 -> 0.25. */
	const pbd_vec3 zero = pbd_v3(0, 0, 0);
	assert_int_equal(pbd_world_set_velocities(t.w, 1, 1, &zero), PBD_OK);
	assert_int_equal(pbd_world_set_iterations(t.w, 7), PBD_OK);
	assert_int_equal(pbd_world_step(t.w), PBD_OK);
	assert_near(pbd_world_positions(t.w)[1].x, 1.25, TEST_TOL(1e-12, 2e-6));
	pbd_world_destroy(t.w);
}

/* Rest < 0 in the def means "the current distance": the constraint then holds it there. */
static void test_rest_from_current_distance(void** state) {
	(void)state;
	pbd_distance_def dd = pbd_distance_def_default(); /* rest -1 */
	two t = make_two(PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_PBD, 1, pbd_v3(1, 2, 3), pbd_v3(4, 6, 3), 1, 1, dd);
	pbd_distance_def got;
	assert_int_equal(pbd_world_get_distance(t.w, 0, &got), PBD_OK);
	assert_near(got.rest, 5.0, TEST_TOL(1e-12, 1e-6));
	assert_int_equal(pbd_world_step(t.w), PBD_OK);
	assert_near(tp_dist(pbd_world_positions(t.w)[0], pbd_world_positions(t.w)[1]), 5.0, TEST_TOL(1e-12, 1e-6));
	pbd_world_destroy(t.w);
}

/* Changing the material of a live constraint takes effect at the next step: stiffness 1 closes a
 * stretched link exactly, then stiffness 0 leaves a stretched link alone; bad ranges and values
 * are refused. */
static void test_set_material(void** state) {
	(void)state;
	two t = make_two(PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_PBD, 1, pbd_v3(0, 0, 0), pbd_v3(2, 0, 0), 1, 1,
	                 pbd_distance_def_default());
	pbd_distance_def d;
	assert_int_equal(pbd_world_get_distance(t.w, 0, &d), PBD_OK);
	assert_true(d.stiffness_stretch == 1);
	pbd_edge_material m = {true, 0, 0, 0, 0};
	assert_int_equal(pbd_world_set_distance_material(t.w, 0, 1, &m), PBD_OK);
	assert_int_equal(pbd_world_get_distance(t.w, 0, &d), PBD_OK);
	assert_true(d.stiffness_stretch == 0 && d.stiffness_compress == 0);
	const pbd_vec3 before = pbd_world_positions(t.w)[1];
	assert_int_equal(pbd_world_step(t.w), PBD_OK);
	assert_memory_equal(&pbd_world_positions(t.w)[1], &before, sizeof before);
	m.stiffness_stretch = 1;
	assert_int_equal(pbd_world_set_distance_material(t.w, 0, 1, &m), PBD_OK);
	assert_int_equal(pbd_world_step(t.w), PBD_OK);
	assert_near(tp_dist(pbd_world_positions(t.w)[0], pbd_world_positions(t.w)[1]), d.rest, TEST_TOL(1e-12, 2e-6));
	pbd_world_destroy(t.w);

	/* Refusals go through the log: a world that keeps its message instead of failing the test. */
	char last[256] = "";
	pbd_world_def def = pbd_world_def_default();
	def.log = test_log_keep;
	def.log_user = last;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	const pbd_vec3 pos[2] = {{0, 0, 0}, {1, 0, 0}};
	const pbd_real inv[2] = {1, 1};
	assert_int_equal(pbd_world_add_particles(w, 2, pos, NULL, inv, NULL), PBD_OK);
	pbd_distance_def dd = pbd_distance_def_default();
	dd.a = 0;
	dd.b = 1;
	assert_int_equal(pbd_world_add_distances(w, 1, &dd, NULL), PBD_OK);
	assert_int_equal(pbd_world_set_distance_material(w, 0, 2, &m), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(last, "pbd_world_set_distance_material"));
	m.stiffness_stretch = (pbd_real)1.5;
	assert_int_equal(pbd_world_set_distance_material(w, 0, 1, &m), PBD_ERR_OUT_OF_RANGE);
	m.stiffness_stretch = 1;
	m.compliance_compress = -1;
	assert_int_equal(pbd_world_set_distance_material(w, 0, 1, &m), PBD_ERR_OUT_OF_RANGE);
	assert_int_equal(pbd_world_set_distance_material(w, 0, 1, NULL), PBD_ERR_INVALID_ARGUMENT);
	pbd_world_destroy(w);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_axis_example_exact),
	    cmocka_unit_test(test_single_projection),
	    cmocka_unit_test(test_compress_stiffness_zero),
	    cmocka_unit_test(test_stretch_stiffness_zero),
	    cmocka_unit_test(test_iteration_corrected_stiffness),
	    cmocka_unit_test(test_iteration_change_refreshes_stiffness),
	    cmocka_unit_test(test_rest_from_current_distance),
	    cmocka_unit_test(test_set_material),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
