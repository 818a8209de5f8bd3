/* Tetrahedral volume constraints C = V - V0: one projection moves the particles exactly as the
 * gradient (central differences of V) predicts under PBD and XPBD and conserves momentum; one
 * hard projection leaves a violation of second order; the energy is C^2 / (2 alpha) and its
 * derivative C grad / alpha; inverted, flat and collapsed tetrahedra give no NaN (FP traps on) and
 * the inverted one recovers its volume; worlds of tetrahedra converge, repeat bit for bit and
 * survive snapshots; the API refuses bad input with messages naming the constraint. */
#include <stdio.h>
#include <string.h>

#include "test_tet.h"
#include "model/world.h"

static double fn_volume(double x[4][3], const void* ctx) {
	(void)ctx;
	return tt_volume(x);
}

/* One tetrahedron with inverse masses iw, its constraint with rest volume `rest` (or measured). */
static pbd_world* one_tet(pbd_solver s, pbd_formulation f, double x[4][3], const double iw[4], double rest,
                          pbd_real stiffness, pbd_real compliance) {
	pbd_world* w = tt_world(s, f, 1, 1);
	const uint32_t first = tt_add(w, x, iw);
	pbd_tet_volume_def d = pbd_tet_volume_def_default();
	for (int i = 0; i < 4; ++i) d.p[i] = first + (uint32_t)i;
	d.rest_volume = (pbd_real)rest;
	d.stiffness = stiffness;
	d.compliance = compliance;
	assert_int_equal(pbd_world_add_tet_volumes(w, 1, &d, NULL), PBD_OK);
	return w;
}

/* The displacement of one projection equals w_i grad_i dlambda with the gradient from central
 * differences: dlambda = -k C / sum w |grad|^2 (PBD), -C / (sum w |grad|^2 + alpha / h^2) (XPBD).
 * Random shapes (some inverted), unequal masses, a pinned particle, both solvers. */
static void test_projection_matches_gradient(void** state) {
	(void)state;
	uint64_t seed = 11;
	const pbd_solver solvers[2] = {PBD_SOLVER_GAUSS_SEIDEL, PBD_SOLVER_JACOBI};
	for (int trial = 0; trial < 40; ++trial) {
		double x[4][3];
		tt_random_tet(&seed, x);
		if (trial % 4 == 3) { /* inverted: x3 through the opposite face */
			for (int k = 0; k < 3; ++k) x[3][k] = 2 * (x[0][k] + x[1][k] + x[2][k]) / 3 - x[3][k];
		}
		double iw[4] = {1, 0.5, 2, 0.25};
		if (trial % 5 == 4) iw[1] = 0;
		const pbd_formulation form = trial % 2 ? PBD_FORMULATION_XPBD : PBD_FORMULATION_PBD;
		const double k = 0.7, alpha = 0.002;
		const double rest = 0.13;
		pbd_world* w = one_tet(solvers[(trial / 2) % 2], form, x, iw, rest, (pbd_real)k, (pbd_real)alpha);
		double g[4][3];
		tt_fd_gradient(fn_volume, NULL, x, 1e-6, g);
		const double C = tt_volume(x) - (double)(pbd_real)rest;
		double wsum = 0;
		for (int i = 0; i < 4; ++i) wsum += iw[i] * (g[i][0] * g[i][0] + g[i][1] * g[i][1] + g[i][2] * g[i][2]);
		const double h = 0.01;
		const double dl = form == PBD_FORMULATION_PBD ? -k * C / wsum : -C / (wsum + alpha / (h * h));
		assert_int_equal(pbd_world_step(w), PBD_OK);
		double y[4][3];
		tt_get(w, 0, y);
		double scale = 0;
		for (int i = 0; i < 4; ++i)
			for (int c = 0; c < 3; ++c) scale = fmax(scale, fabs(iw[i] * g[i][c] * dl));
		for (int i = 0; i < 4; ++i)
			for (int c = 0; c < 3; ++c)
				assert_near(y[i][c] - x[i][c], iw[i] * g[i][c] * dl,
				            TEST_TOL(1e-7, 2e-4) * scale + TEST_TOL(1e-12, 1e-6));
		pbd_world_destroy(w);
	}
}

/* Sum m dx = 0 and sum m x x dx = 0 after a projection, for unequal masses. */
static void test_momentum(void** state) {
	(void)state;
	uint64_t seed = 5;
	const pbd_solver solvers[2] = {PBD_SOLVER_GAUSS_SEIDEL, PBD_SOLVER_JACOBI};
	for (int s = 0; s < 2; ++s)
		for (int f = 0; f < 2; ++f) {
			double x[4][3];
			tt_random_tet(&seed, x);
			const double iw[4] = {1, 0.3, 3, 0.7};
			pbd_world* w = one_tet(solvers[s], (pbd_formulation)f, x, iw, 0.05, 1, (pbd_real)1e-6);
			assert_int_equal(pbd_world_step(w), PBD_OK);
			double y[4][3];
			tt_get(w, 0, y);
			double p[3] = {0, 0, 0}, l[3] = {0, 0, 0}, scale = 0;
			for (int i = 0; i < 4; ++i) {
				const double m = 1 / iw[i];
				const double d[3] = {y[i][0] - x[i][0], y[i][1] - x[i][1], y[i][2] - x[i][2]};
				for (int c = 0; c < 3; ++c) {
					p[c] += m * d[c];
					scale = fmax(scale, fabs(m * d[c]));
				}
				l[0] += m * (x[i][1] * d[2] - x[i][2] * d[1]);
				l[1] += m * (x[i][2] * d[0] - x[i][0] * d[2]);
				l[2] += m * (x[i][0] * d[1] - x[i][1] * d[0]);
			}
			assert_true(scale > 1e-3);
			for (int c = 0; c < 3; ++c) {
				assert_near(p[c], 0, TEST_TOL(1e-12, 1e-5) * scale);
				assert_near(l[c], 0, TEST_TOL(1e-12, 1e-5) * scale * 3);
			}
			pbd_world_destroy(w);
		}
}

/* PBD with k = 1: one projection of a slightly violated constraint leaves a violation of second
 * order. XPBD: C after one projection is -alpha~ lambda to second order (Macklin et al. 2016). */
static void test_linearisation(void** state) {
	(void)state;
	uint64_t seed = 3;
	for (int trial = 0; trial < 10; ++trial) {
		double x[4][3];
		tt_random_tet(&seed, x);
		const double iw[4] = {1, 2, 0.5, 1};
		const double v0 = tt_volume(x);
		const double eps = 1e-2;
		pbd_world* w = one_tet(PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_PBD, x, iw, v0 * (1 + eps), 1, 0);
		assert_int_equal(pbd_world_step(w), PBD_OK);
		double y[4][3];
		tt_get(w, 0, y);
		pbd_tet_volume_def d;
		assert_int_equal(pbd_world_get_tet_volume(w, 0, &d), PBD_OK);
		const double c0 = v0 - (double)d.rest_volume;
		double c1 = tt_volume(y) - (double)d.rest_volume;
		assert_true(fabs(c1) < fabs(c0) * fabs(c0) / v0 + TEST_TOL(1e-12, 2e-6) * v0);
		assert_true(fabs(c1) < 1e-2 * fabs(c0) + TEST_TOL(1e-12, 2e-6) * v0);
		pbd_world_destroy(w);

		const double alpha = 1e-4, h = 0.01;
		w = one_tet(PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_XPBD, x, iw, v0 * (1 + eps), 1, (pbd_real)alpha);
		assert_int_equal(pbd_world_step(w), PBD_OK);
		tt_get(w, 0, y);
		const double lambda = w->fam[PBD_FAMILY_TET_VOLUME].lambda[0];
		c1 = tt_volume(y) - (double)d.rest_volume;
		assert_near(c1, -alpha / (h * h) * lambda, c0 * c0 / v0 + TEST_TOL(1e-12, 2e-6) * v0);
		assert_true(fabs(c1) < fabs(c0)); /* and it did move toward the rest volume */
		pbd_world_destroy(w);
	}
}

/* XPBD: the energy is C^2 / (2 alpha), and its central difference in a particle's coordinate is
 * C dC/dx / alpha. */
static void test_energy(void** state) {
	(void)state;
	double x[4][3] = {{0.1, 0.2, 0}, {1.2, 0, 0.1}, {0.3, 1.1, 0}, {0.2, 0.3, 0.9}};
	const double iw[4] = {1, 1, 1, 1};
	const double alpha = 0.01, rest = 0.1;
	pbd_world* w = one_tet(PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_XPBD, x, iw, rest, 1, (pbd_real)alpha);
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	const double C = tt_volume(x) - (double)(pbd_real)rest;
	assert_true(st.energy_defined && st.family[PBD_FAMILY_TET_VOLUME].energy_defined);
	assert_near(st.family[PBD_FAMILY_TET_VOLUME].elastic_energy, C * C / (2 * (double)(pbd_real)alpha),
	            1e-9 * C * C / alpha);
	assert_near(st.family[PBD_FAMILY_TET_VOLUME].max_violation, fabs(C), 1e-9);
	assert_near(st.family[PBD_FAMILY_TET_VOLUME].max_strain, fabs(C) / (double)(pbd_real)rest, 1e-8);
	double g[4][3];
	tt_fd_gradient(fn_volume, NULL, x, 1e-6, g);
	const double hh = TEST_TOL(1e-6, 1.0 / 512); /* a power of two: x +- hh is exact in float */
	for (int i = 0; i < 4; ++i)
		for (int c = 0; c < 3; ++c) {
			double e[2];
			for (int sgn = 0; sgn < 2; ++sgn) {
				double y[4][3];
				memcpy(y, x, sizeof y);
				y[i][c] += sgn ? -hh : hh;
				const pbd_vec3 p = pbd_v3((pbd_real)y[i][0], (pbd_real)y[i][1], (pbd_real)y[i][2]);
				assert_int_equal(pbd_world_set_positions(w, (uint32_t)i, 1, &p), PBD_OK);
				pbd_world_get_stats(w, &st);
				e[sgn] = st.family[PBD_FAMILY_TET_VOLUME].elastic_energy;
			}
			const pbd_vec3 p = pbd_v3((pbd_real)x[i][0], (pbd_real)x[i][1], (pbd_real)x[i][2]);
			assert_int_equal(pbd_world_set_positions(w, (uint32_t)i, 1, &p), PBD_OK);
			const double want = C * g[i][c] / (double)(pbd_real)alpha;
			assert_near((e[0] - e[1]) / (2 * hh), want, TEST_TOL(1e-6, 1e-4) * (fabs(want) + 1));
		}
	/* PBD: stiffness 1 is ideal (no energy), 0.5 has none defined. */
	assert_int_equal(pbd_world_set_formulation(w, PBD_FORMULATION_PBD), PBD_OK);
	pbd_world_get_stats(w, &st);
	assert_true(st.family[PBD_FAMILY_TET_VOLUME].energy_defined);
	assert_true(st.family[PBD_FAMILY_TET_VOLUME].elastic_energy == 0);
	assert_int_equal(pbd_world_set_tet_volume_material(w, 0, 1, (pbd_real)0.5, 0), PBD_OK);
	pbd_world_get_stats(w, &st);
	assert_false(st.family[PBD_FAMILY_TET_VOLUME].energy_defined);
	assert_true(isnan(st.elastic_energy));
	pbd_world_destroy(w);
}

/* An inverted tetrahedron (x3 pushed through the opposite face) recovers its positive rest
 * volume in one step under every solver and formulation, and a flat one (all four in a plane)
 * likewise; the correction becomes velocity, which the volume alone does not stop (the shape
 * shears freely), so the later steps start at rest. One collapsed to a line or a point gives no
 * NaN (the traps are on) and is left where it is: there is no direction to push it along. */
static void test_degenerate(void** state) {
	(void)state;
	const double rest[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
	const double iw[4] = {1, 1, 1, 1};
	const pbd_vec3 zero[4] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
	for (int s = 0; s < 2; ++s)
		for (int f = 0; f < 2; ++f)
			for (int shape = 0; shape < 4; ++shape) {
				pbd_world* w = tt_world((pbd_solver)s, (pbd_formulation)f, 20, 1);
				double x[4][3];
				memcpy(x, rest, sizeof x);
				const uint32_t first = tt_add(w, x, iw);
				pbd_tet_volume_def d = pbd_tet_volume_def_default();
				for (int i = 0; i < 4; ++i) d.p[i] = first + (uint32_t)i;
				assert_int_equal(pbd_world_add_tet_volumes(w, 1, &d, NULL), PBD_OK);
				pbd_vec3 p[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
				if (shape == 0) p[3] = pbd_v3((pbd_real)0.2, (pbd_real)0.2, (pbd_real)-0.5); /* inverted */
				if (shape == 1) p[3] = pbd_v3((pbd_real)0.3, (pbd_real)0.3, 0);              /* flat */
				if (shape == 2)                                                              /* a line */
					for (int i = 0; i < 4; ++i) p[i] = pbd_v3((pbd_real)(0.25 * i), 0, 0);
				if (shape == 3) /* a point */
					for (int i = 0; i < 4; ++i) p[i] = pbd_v3(1, 2, 3);
				assert_int_equal(pbd_world_set_positions(w, 0, 4, p), PBD_OK);
				double y[4][3];
				for (int k = 0; k < 30; ++k) {
					assert_int_equal(pbd_world_step(w), PBD_OK);
					if (k == 0 && shape <= 1) {
						tt_get(w, 0, y);
						assert_near(tt_volume(y), 1.0 / 6, TEST_TOL(1e-9, 1e-5));
					}
					assert_int_equal(pbd_world_set_velocities(w, 0, 4, zero), PBD_OK);
				}
				assert_true(tp_all_finite(w));
				tt_get(w, 0, y);
				if (shape <= 1) {
					assert_near(tt_volume(y), 1.0 / 6, TEST_TOL(1e-9, 1e-5));
				} else {
					const pbd_vec3* q = pbd_world_positions(w);
					assert_memory_equal(q, p, sizeof p);
				}
				pbd_world_destroy(w);
			}
}

/* A tetrahedral box with hard volume constraints and its edges as soft distances, perturbed:
 * every solver and formulation converges to the rest volumes; two identical runs give the same
 * bits; a snapshot round trip continues bit-identically. */
static pbd_world* box_world(pbd_solver s, pbd_formulation f) {
	pbd_mesh mesh;
	pbd_mesh* m = &mesh;
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, 0, 0);
	def.solver = s;
	def.formulation = f;
	def.iterations = 10;
	def.substeps = 2;
	pbd_world* w = test_world(&def);
	pbd_tet_box_def bd = pbd_tet_box_def_default();
	bd.nx = 3;
	bd.ny = 2;
	bd.nz = 2;
	bd.size = pbd_v3((pbd_real)0.6, (pbd_real)0.4, (pbd_real)0.4);
	pbd_error err;
	assert_int_equal(pbd_mesh_tet_box(&bd, m, &err), PBD_OK);
	pbd_soft_def body = pbd_soft_def_default();
	body.mesh = m;
	body.mass_mode = PBD_MASS_DENSITY;
	body.mass = 1000;
	for (int k = 0; k < PBD_EDGE_KIND_COUNT; ++k) {
		body.material[k].stiffness_stretch = body.material[k].stiffness_compress = (pbd_real)0.1;
		body.material[k].compliance_stretch = body.material[k].compliance_compress = (pbd_real)1e-3;
	}
	pbd_soft_info b;
	assert_int_equal(test_soft_create(w, &body, &b), PBD_OK);
	pbd_tet_volume_def* d = malloc(m->tet_count * sizeof *d);
	for (uint32_t t = 0; t < m->tet_count; ++t) {
		d[t] = pbd_tet_volume_def_default();
		for (int i = 0; i < 4; ++i) d[t].p[i] = b.first_particle + m->tets[4 * t + (uint32_t)i];
	}
	assert_int_equal(pbd_world_add_tet_volumes(w, m->tet_count, d, NULL), PBD_OK);
	free(d);
	pbd_mesh_free(m);
	uint64_t seed = 17;
	for (uint32_t i = 0; i < b.particle_count; ++i) {
		pbd_vec3 p = pbd_world_positions(w)[i];
		p = pbd_v3_add(p,
		               pbd_v3((pbd_real)tp_rand_range(&seed, -0.03, 0.03), (pbd_real)tp_rand_range(&seed, -0.03, 0.03),
		                      (pbd_real)tp_rand_range(&seed, -0.03, 0.03)));
		assert_int_equal(pbd_world_set_positions(w, i, 1, &p), PBD_OK);
	}
	return w;
}

static void test_world_converges_and_repeats(void** state) {
	(void)state;
	for (int s = 0; s < 2; ++s)
		for (int f = 0; f < 2; ++f) {
			pbd_world* a = box_world((pbd_solver)s, (pbd_formulation)f);
			pbd_world* b = box_world((pbd_solver)s, (pbd_formulation)f);
			pbd_stats st;
			pbd_world_get_stats(a, &st);
			const double before = st.family[PBD_FAMILY_TET_VOLUME].max_strain;
			assert_true(before > 0.05);
			for (int k = 0; k < 100; ++k) {
				assert_int_equal(pbd_world_step(a), PBD_OK);
				assert_int_equal(pbd_world_step(b), PBD_OK);
			}
			assert_true(pbd_world_hash(a) == pbd_world_hash(b));
			assert_true(tp_all_finite(a));
			pbd_world_get_stats(a, &st);
			/* Jacobi scales each correction by 1 / (the particle's constraint count), about 20 here, and
			 * converges slower than Gauss-Seidel. XPBD settles its hard volumes a little less tightly than
			 * PBD: measured 6.4e-5 (gcc) and 2.5e-4 (clang, other rounding of the same steps) after 100
			 * steps, against 9e-6 and 3e-6 for PBD. */
			printf("  tet box %s %s: max volume strain %.3g after 100 steps\n", s ? "Jacobi" : "GS", f ? "XPBD" : "PBD",
			       st.family[PBD_FAMILY_TET_VOLUME].max_strain);
			assert_true(st.family[PBD_FAMILY_TET_VOLUME].max_strain < (s == 0 ? (f ? 1e-3 : 1e-4) : 1e-2));
			size_t size = 0;
			assert_int_equal(pbd_world_save_memory(a, NULL, 0, &size), PBD_OK);
			void* mem = malloc(size);
			assert_int_equal(pbd_world_save_memory(a, mem, size, &size), PBD_OK);
			pbd_world_def hooks = pbd_world_def_default();
			hooks.log = test_log_fail;
			pbd_world* c = NULL;
			pbd_error err;
			assert_int_equal(pbd_world_load_memory(mem, size, &hooks, &c, &err), PBD_OK);
			free(mem);
			assert_int_equal(pbd_world_tet_volume_count(c), pbd_world_tet_volume_count(a));
			for (int k = 0; k < 20; ++k) {
				assert_int_equal(pbd_world_step(a), PBD_OK);
				assert_int_equal(pbd_world_step(c), PBD_OK);
			}
			assert_true(pbd_world_hash(a) == pbd_world_hash(c));
			pbd_world_destroy(a);
			pbd_world_destroy(b);
			pbd_world_destroy(c);
		}
}

/* Refusals: one line naming the function, the constraint and the field; nothing is added. */
static void test_api(void** state) {
	(void)state;
	char last[256] = "";
	pbd_world_def def = pbd_world_def_default();
	def.log = test_log_keep;
	def.log_user = last;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	const pbd_vec3 pos[6] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}, {(pbd_real)0.5, (pbd_real)0.5, 0}};
	const pbd_real ones[6] = {1, 1, 1, 1, 1, 1};
	assert_int_equal(pbd_world_add_particles(w, 6, pos, NULL, ones, NULL), PBD_OK);
	pbd_tet_volume_def d[2] = {pbd_tet_volume_def_default(), pbd_tet_volume_def_default()};
	const uint32_t good[4] = {0, 1, 2, 3};
	memcpy(d[0].p, good, sizeof good);
	memcpy(d[1].p, good, sizeof good);
	d[1].p[3] = 9;
	assert_int_equal(pbd_world_add_tet_volumes(w, 2, d, NULL), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(last, "pbd_world_add_tet_volumes: constraint 1: particle index p[3] = 9"));
	assert_int_equal(pbd_world_tet_volume_count(w), 0);
	d[1].p[3] = 1;
	assert_int_equal(pbd_world_add_tet_volumes(w, 2, d, NULL), PBD_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(last, "constraint 1: particle 1 appears twice"));
	memcpy(d[1].p, good, sizeof good);
	d[1].stiffness = 2;
	assert_int_equal(pbd_world_add_tet_volumes(w, 2, d, NULL), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(last, "constraint 1: stiffness"));
	d[1].stiffness = 1;
	d[1].compliance = -1;
	assert_int_equal(pbd_world_add_tet_volumes(w, 2, d, NULL), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(last, "constraint 1: compliance"));
	d[1].compliance = 0;
	d[1].rest_volume = (pbd_real)NAN;
	test_disable_fp_traps();
	assert_int_equal(pbd_world_add_tet_volumes(w, 2, d, NULL), PBD_ERR_NOT_FINITE);
	test_enable_fp_traps();
	d[1].rest_volume = 0;
	assert_int_equal(pbd_world_add_tet_volumes(w, 2, d, NULL), PBD_ERR_DEGENERATE);
	d[1].rest_volume = -1;
	const uint32_t flat[4] = {0, 1, 4, 5}; /* four points in the plane z = 0 */
	memcpy(d[1].p, flat, sizeof flat);
	assert_int_equal(pbd_world_add_tet_volumes(w, 2, d, NULL), PBD_ERR_DEGENERATE);
	assert_non_null(strstr(last, "constraint 1: tetrahedron (0, 1, 4, 5) is degenerate"));
	const uint32_t inverted[4] = {0, 2, 1, 3};
	memcpy(d[1].p, inverted, sizeof inverted);
	assert_int_equal(pbd_world_add_tet_volumes(w, 2, d, NULL), PBD_ERR_DEGENERATE);
	assert_non_null(strstr(last, "constraint 1: tetrahedron (0, 2, 1, 3) is inverted"));
	assert_int_equal(pbd_world_tet_volume_count(w), 0);
	/* An explicit rest volume needs no shape now: the particles may be placed later. */
	d[1].rest_volume = 2;
	uint32_t first = 99;
	assert_int_equal(pbd_world_add_tet_volumes(w, 2, d, &first), PBD_OK);
	assert_int_equal(first, 0);
	pbd_tet_volume_def got;
	assert_int_equal(pbd_world_get_tet_volume(w, 0, &got), PBD_OK);
	assert_near(got.rest_volume, 1.0 / 6, TEST_TOL(1e-15, 1e-7));
	assert_int_equal(pbd_world_get_tet_volume(w, 1, &got), PBD_OK);
	assert_true(got.rest_volume == 2 && got.p[1] == 2);
	assert_int_equal(pbd_world_get_tet_volume(w, 2, &got), PBD_ERR_OUT_OF_RANGE);
	assert_int_equal(pbd_world_set_tet_volume_material(w, 1, 2, 1, 0), PBD_ERR_OUT_OF_RANGE);
	assert_int_equal(pbd_world_set_tet_volume_material(w, 0, 2, (pbd_real)0.5, (pbd_real)1e-3), PBD_OK);
	assert_int_equal(pbd_world_get_tet_volume(w, 1, &got), PBD_OK);
	assert_true(got.stiffness == (pbd_real)0.5 && got.compliance == (pbd_real)1e-3);
	assert_int_equal(pbd_world_add_tet_volumes(w, 0, d, NULL), PBD_ERR_INVALID_ARGUMENT);
	assert_int_equal(pbd_world_add_tet_volumes(w, 1, NULL, NULL), PBD_ERR_INVALID_ARGUMENT);
	assert_string_equal(pbd_family_name(PBD_FAMILY_TET_VOLUME), "tet_volume");
	pbd_world_destroy(w);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_projection_matches_gradient),
	    cmocka_unit_test(test_momentum),
	    cmocka_unit_test(test_linearisation),
	    cmocka_unit_test(test_energy),
	    cmocka_unit_test(test_degenerate),
	    cmocka_unit_test(test_world_converges_and_repeats),
	    cmocka_unit_test(test_api),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
