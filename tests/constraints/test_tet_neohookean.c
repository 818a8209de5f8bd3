/* Tetrahedral stable Neo-Hookean constraints: each projection moves the particles exactly as the
 * gradients (central differences of |F| and det F computed here independently) predict, under PBD
 * (each constraint alone) and XPBD (both, in the solver's order, with the compliances 1 / (mu V0)
 * and 1 / (lambda' V0) and gamma = 1 + mu / lambda'); momentum is conserved; a hard projection
 * leaves a second-order violation; the energy is the stable Neo-Hookean energy and its derivative
 * sum C grad / alpha; inverted, flat, and collapsed tetrahedra give no NaN and the inverted one
 * recovers; worlds repeat bit for bit and survive snapshots; a soft cube dropped on the ground
 * comes to rest within 1 % of its volume (float). */
#include <stdio.h>
#include <string.h>

#include "test_tet.h"
#include "model/world.h"

typedef struct nh_ctx {
	double X[4][3]; /* rest shape */
	int which;      /* 0: |F|_F, 1: det F */
} nh_ctx;

static double fn_nh(double x[4][3], const void* p) {
	const nh_ctx* c = (const nh_ctx*)p;
	double norm, J;
	tt_invariants((double(*)[3])c->X, x, &norm, &J);
	return c->which ? J : norm;
}

static void lame(double E, double nu, double* mu, double* lh) {
	*mu = E / (2 * (1 + nu));
	*lh = E / (2 * (1 + nu) * (1 - 2 * nu));
}

/* One tetrahedron at rest shape X (rounded to the scalar), moved to x (rounded too). */
static pbd_world* one_tet(pbd_solver s, pbd_formulation f, double X[4][3], double x[4][3], const double iw[4],
                          pbd_tet_neohookean_def d) {
	pbd_world* w = tt_world(s, f, 1, 1);
	const uint32_t first = tt_add(w, X, iw);
	for (int i = 0; i < 4; ++i) d.p[i] = first + (uint32_t)i;
	assert_int_equal(pbd_world_add_tet_neohookeans(w, 1, &d, NULL), PBD_OK);
	pbd_vec3 p[4];
	for (int i = 0; i < 4; ++i) {
		p[i] = pbd_v3((pbd_real)x[i][0], (pbd_real)x[i][1], (pbd_real)x[i][2]);
		for (int k = 0; k < 3; ++k) x[i][k] = (double)(&p[i].x)[k];
	}
	assert_int_equal(pbd_world_set_positions(w, first, 4, p), PBD_OK);
	return w;
}

/* A deformed copy of X: a random linear map near a rotation plus noise; every fourth inverted. */
static void deform(uint64_t* seed, double X[4][3], double x[4][3], int trial) {
	for (int i = 0; i < 4; ++i)
		for (int k = 0; k < 3; ++k)
			x[i][k] = X[i][k] * (1 + tp_rand_range(seed, -0.2, 0.2)) + tp_rand_range(seed, -0.1, 0.1);
	if (trial % 4 == 3)
		for (int k = 0; k < 3; ++k) x[3][k] = 2 * (x[0][k] + x[1][k] + x[2][k]) / 3 - x[3][k];
}

/* x += w_i g_i dl for the step of one constraint with value C, gradient g, and s: PBD stiffness k
 * (alpha < 0) or XPBD compliance alpha (lambda 0 at the start). */
static void predict(double x[4][3], const double iw[4], double C, double g[4][3], double k, double alpha, double h) {
	double wsum = 0;
	for (int i = 0; i < 4; ++i) wsum += iw[i] * (g[i][0] * g[i][0] + g[i][1] * g[i][1] + g[i][2] * g[i][2]);
	const double dl = alpha < 0 ? -k * C / wsum : -C / (wsum + alpha / (h * h));
	for (int i = 0; i < 4; ++i)
		for (int c = 0; c < 3; ++c) x[i][c] += iw[i] * g[i][c] * dl;
}

static void expect_positions(const pbd_world* w, double want[4][3], double moved) {
	double y[4][3];
	tt_get(w, 0, y);
	for (int i = 0; i < 4; ++i)
		for (int c = 0; c < 3; ++c)
			assert_near(y[i][c], want[i][c], TEST_TOL(1e-7, 3e-4) * moved + TEST_TOL(1e-12, 2e-6));
}

static double max_move(double a[4][3], double b[4][3]) {
	double m = 0;
	for (int i = 0; i < 4; ++i)
		for (int c = 0; c < 3; ++c) m = fmax(m, fabs(a[i][c] - b[i][c]));
	return m;
}

/* PBD: each constraint alone (the other's stiffness 0): the move is -k C w_i g_i / sum w |g|^2
 * with C_D = |F| - sqrt(3), C_H = det F - 1 and their gradients by central differences. */
static void test_pbd_projection_matches_gradient(void** state) {
	(void)state;
	uint64_t seed = 21;
	const pbd_solver solvers[2] = {PBD_SOLVER_GAUSS_SEIDEL, PBD_SOLVER_JACOBI};
	for (int trial = 0; trial < 32; ++trial) {
		nh_ctx ctx;
		tt_random_tet(&seed, ctx.X);
		double x[4][3];
		deform(&seed, ctx.X, x, trial);
		double iw[4] = {1, 0.5, 2, 0.25};
		if (trial % 5 == 4) iw[2] = 0;
		ctx.which = trial % 2;
		const double k = 0.6;
		pbd_tet_neohookean_def d = pbd_tet_neohookean_def_default();
		d.stiffness_deviatoric = ctx.which ? 0 : (pbd_real)k;
		d.stiffness_hydrostatic = ctx.which ? (pbd_real)k : 0;
		pbd_world* w = one_tet(solvers[(trial / 2) % 2], PBD_FORMULATION_PBD, ctx.X, x, iw, d);
		double g[4][3], want[4][3];
		tt_fd_gradient(fn_nh, &ctx, x, 1e-6, g);
		const double C = fn_nh(x, &ctx) - (ctx.which ? 1 : sqrt(3.0));
		memcpy(want, x, sizeof want);
		/* Jacobi halves each of the element's two corrections (it counts as two constraints) */
		const bool jacobi = (trial / 2) % 2;
		predict(want, iw, C, g, jacobi ? k / 2 : k, -1, 0);
		assert_int_equal(pbd_world_step(w), PBD_OK);
		expect_positions(w, want, max_move(want, x));
		pbd_world_destroy(w);
	}
}

/* XPBD: both constraints in one coupled step with the material's compliances and targets
 * |F| = 0 and det F = gamma: the 2x2 system [S + diag(aD, aH)] dl = -C (lambda 0 at the start),
 * S_XY = sum w_i gX_i . gY_i, a = alpha / h^2. One tetrahedron has degree 1, so Jacobi's factor is
 * 1 and it moves the same. */
static void test_xpbd_projection_matches_gradient(void** state) {
	(void)state;
	uint64_t seed = 8;
	const double E = 1e5, nu = 0.3, h = 0.01;
	double mu, lh;
	lame((double)(pbd_real)E, (double)(pbd_real)nu, &mu, &lh);
	const double gamma = 1 + mu / lh;
	for (int trial = 0; trial < 16; ++trial) {
		nh_ctx ctx;
		tt_random_tet(&seed, ctx.X);
		double x[4][3];
		deform(&seed, ctx.X, x, trial);
		const double iw[4] = {1, 0.5, 2, 0.25};
		const bool jacobi = trial % 2;
		pbd_tet_neohookean_def d = pbd_tet_neohookean_def_default();
		d.youngs_modulus = (pbd_real)E;
		d.poisson_ratio = (pbd_real)nu;
		pbd_world* w =
		    one_tet(jacobi ? PBD_SOLVER_JACOBI : PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_XPBD, ctx.X, x, iw, d);
		const double V0 = tt_volume(ctx.X);
		double gd[4][3], gh[4][3], want[4][3];
		ctx.which = 0;
		tt_fd_gradient(fn_nh, &ctx, x, 1e-6, gd);
		const double cd = fn_nh(x, &ctx);
		ctx.which = 1;
		tt_fd_gradient(fn_nh, &ctx, x, 1e-6, gh);
		const double ch = fn_nh(x, &ctx) - gamma;
		double sdd = 0, shh = 0, sdh = 0;
		for (int i = 0; i < 4; ++i)
			for (int c = 0; c < 3; ++c) {
				sdd += iw[i] * gd[i][c] * gd[i][c];
				shh += iw[i] * gh[i][c] * gh[i][c];
				sdh += iw[i] * gd[i][c] * gh[i][c];
			}
		const double ad = 1 / (mu * V0 * h * h), ah = 1 / (lh * V0 * h * h);
		const double a00 = sdd + ad, a11 = shh + ah, det = a00 * a11 - sdh * sdh;
		const double dld = (-cd * a11 + sdh * ch) / det, dlh = (-a00 * ch + sdh * cd) / det;
		for (int i = 0; i < 4; ++i)
			for (int c = 0; c < 3; ++c) want[i][c] = x[i][c] + iw[i] * (gd[i][c] * dld + gh[i][c] * dlh);
		assert_int_equal(pbd_world_step(w), PBD_OK);
		expect_positions(w, want, max_move(want, x));
		assert_near(w->fam[PBD_FAMILY_TET_NEOHOOKEAN].lambda[0], dld, TEST_TOL(1e-6, 1e-3) * fabs(dld));
		assert_near(w->fam[PBD_FAMILY_TET_NEOHOOKEAN].lambda[1], dlh, TEST_TOL(1e-6, 1e-3) * fabs(dlh));
		pbd_world_destroy(w);
	}
}

/* Sum m dx = 0 and sum m x x dx = 0 for a step of one constraint and for the coupled pair
 * (both from the same positions), with unequal masses. */
static void test_momentum(void** state) {
	(void)state;
	uint64_t seed = 4;
	const double iw[4] = {1, 0.3, 3, 0.7};
	for (int s = 0; s < 2; ++s)
		for (int mode = 0; mode < 3; ++mode) { /* deviatoric alone, hydrostatic alone (PBD), both (XPBD) */
			nh_ctx ctx;
			tt_random_tet(&seed, ctx.X);
			double x[4][3];
			deform(&seed, ctx.X, x, 0);
			pbd_tet_neohookean_def d = pbd_tet_neohookean_def_default();
			d.youngs_modulus = (pbd_real)1e5;
			d.stiffness_deviatoric = mode == 1 ? 0 : 1;
			d.stiffness_hydrostatic = mode == 0 ? 0 : 1;
			pbd_world* w =
			    one_tet((pbd_solver)s, mode == 2 ? PBD_FORMULATION_XPBD : PBD_FORMULATION_PBD, ctx.X, x, iw, d);
			assert_int_equal(pbd_world_step(w), PBD_OK);
			double y[4][3];
			tt_get(w, 0, y);
			double p[3] = {0, 0, 0}, l[3] = {0, 0, 0}, move = 0;
			for (int i = 0; i < 4; ++i) {
				const double m = 1 / iw[i];
				const double dd[3] = {y[i][0] - x[i][0], y[i][1] - x[i][1], y[i][2] - x[i][2]};
				for (int c = 0; c < 3; ++c) {
					p[c] += m * dd[c];
					move = fmax(move, fabs(dd[c]));
				}
				l[0] += m * (x[i][1] * dd[2] - x[i][2] * dd[1]);
				l[1] += m * (x[i][2] * dd[0] - x[i][0] * dd[2]);
				l[2] += m * (x[i][0] * dd[1] - x[i][1] * dd[0]);
			}
			assert_true(move > 1e-3);
			/* positions carry rounding of about 1e-7 (float) of coordinates near 1 */
			const double tol = TEST_TOL(1e-12, 4e-7) * (1 + 0.3 + 3 + 0.7) / 0.3 * 3;
			for (int c = 0; c < 3; ++c) {
				assert_near(p[c], 0, tol);
				assert_near(l[c], 0, 2 * tol);
			}
			pbd_world_destroy(w);
		}
}

/* PBD k = 1, one constraint alone, slightly violated: one projection leaves a second-order
 * violation. XPBD: after the coupled step each constraint satisfies C = -alpha~ lambda to second
 * order in the move. */
static void test_linearisation(void** state) {
	(void)state;
	uint64_t seed = 6;
	const double iw[4] = {1, 2, 0.5, 1};
	for (int trial = 0; trial < 8; ++trial) {
		nh_ctx ctx;
		tt_random_tet(&seed, ctx.X);
		double x[4][3];
		for (int i = 0; i < 4; ++i)
			for (int k = 0; k < 3; ++k) x[i][k] = ctx.X[i][k] * 1.01 + tp_rand_range(&seed, -0.005, 0.005);
		ctx.which = trial % 2;
		pbd_tet_neohookean_def d = pbd_tet_neohookean_def_default();
		d.stiffness_deviatoric = ctx.which ? 0 : 1;
		d.stiffness_hydrostatic = ctx.which ? 1 : 0;
		double X[4][3];
		memcpy(X, ctx.X, sizeof X);
		pbd_world* w = one_tet(PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_PBD, X, x, iw, d);
		memcpy(ctx.X, X, sizeof X); /* as rounded */
		const double target = ctx.which ? 1 : sqrt(3.0);
		const double c0 = fn_nh(x, &ctx) - target;
		assert_int_equal(pbd_world_step(w), PBD_OK);
		double y[4][3];
		tt_get(w, 0, y);
		const double c1 = fn_nh(y, &ctx) - target;
		assert_true(fabs(c0) > 1e-3);
		assert_true(fabs(c1) < 10 * c0 * c0 + TEST_TOL(1e-12, 1e-5));
		pbd_world_destroy(w);

		const double E = 1e5, nu = 0.4, h = 0.01;
		double mu, lh;
		lame((double)(pbd_real)E, (double)(pbd_real)nu, &mu, &lh);
		d.youngs_modulus = (pbd_real)E;
		d.poisson_ratio = (pbd_real)nu;
		w = one_tet(PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_XPBD, X, x, iw, d);
		assert_int_equal(pbd_world_step(w), PBD_OK);
		tt_get(w, 0, y);
		const double V0 = tt_volume(ctx.X), targets[2] = {0, 1 + mu / lh};
		const double at[2] = {1 / (mu * V0 * h * h), 1 / (lh * V0 * h * h)};
		for (int j = 0; j < 2; ++j) {
			ctx.which = j;
			const double before = fn_nh(x, &ctx) - targets[j], after = fn_nh(y, &ctx) - targets[j];
			const double lambda = (double)w->fam[PBD_FAMILY_TET_NEOHOOKEAN].lambda[j];
			assert_near(after, -at[j] * lambda, 0.05 * fabs(after - before) + TEST_TOL(1e-9, 1e-5));
		}
		pbd_world_destroy(w);
	}
}

/* XPBD energy: V0 (mu / 2 (I_C - 3) + lambda' / 2 ((J - gamma)^2 - (1 - gamma)^2)), zero at rest,
 * equal to C_D^2 / (2 alpha_D) + C_H^2 / (2 alpha_H) less the same at rest; its central
 * difference in a coordinate is C_D dC_D/dx / alpha_D + C_H dC_H/dx / alpha_H. */
static void test_energy(void** state) {
	(void)state;
	nh_ctx ctx;
	double X[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
	memcpy(ctx.X, X, sizeof X);
	double x[4][3] = {{0.1, 0, 0}, {1.2, 0.1, 0}, {0, 0.9, 0.1}, {0.1, 0.2, 1.1}};
	const double iw[4] = {1, 1, 1, 1};
	const double E = 2e3, nu = 0.375; /* both exact in float */
	double mu, lh;
	lame(E, nu, &mu, &lh);
	const double gamma = 1 + mu / lh, V0 = 1.0 / 6;
	const double ad = 1 / (mu * V0), ah = 1 / (lh * V0);
	pbd_tet_neohookean_def d = pbd_tet_neohookean_def_default();
	d.youngs_modulus = (pbd_real)E;
	d.poisson_ratio = (pbd_real)nu;
	pbd_world* w = one_tet(PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_XPBD, X, X, iw, d);
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	assert_near(st.family[PBD_FAMILY_TET_NEOHOOKEAN].elastic_energy, 0, 1e-9);
	assert_near(st.family[PBD_FAMILY_TET_NEOHOOKEAN].max_strain, 0, 1e-12);
	pbd_vec3 p[4];
	for (int i = 0; i < 4; ++i) {
		p[i] = pbd_v3((pbd_real)x[i][0], (pbd_real)x[i][1], (pbd_real)x[i][2]);
		for (int k = 0; k < 3; ++k) x[i][k] = (double)(&p[i].x)[k];
	}
	assert_int_equal(pbd_world_set_positions(w, 0, 4, p), PBD_OK);
	pbd_world_get_stats(w, &st);
	double norm, J;
	tt_invariants(X, x, &norm, &J);
	const double rest = 3 / (2 * ad) + (1 - gamma) * (1 - gamma) / (2 * ah);
	const double want = norm * norm / (2 * ad) + (J - gamma) * (J - gamma) / (2 * ah) - rest;
	assert_near(st.family[PBD_FAMILY_TET_NEOHOOKEAN].elastic_energy, want, TEST_TOL(1e-9, 1e-6) * fabs(want));
	assert_near(want,
	            V0 * (mu / 2 * (norm * norm - 3) + lh / 2 * ((J - gamma) * (J - gamma) - (1 - gamma) * (1 - gamma))),
	            1e-9 * fabs(want));
	assert_near(st.family[PBD_FAMILY_TET_NEOHOOKEAN].max_violation, fmax(fabs(norm - sqrt(3.0)), fabs(J - 1)), 1e-9);
	assert_near(st.family[PBD_FAMILY_TET_NEOHOOKEAN].max_strain, fmax(fabs(norm / sqrt(3.0) - 1), fabs(J - 1)), 1e-9);
	double gd[4][3], gh[4][3];
	ctx.which = 0;
	tt_fd_gradient(fn_nh, &ctx, x, 1e-6, gd);
	ctx.which = 1;
	tt_fd_gradient(fn_nh, &ctx, x, 1e-6, gh);
	const double hh = TEST_TOL(1e-6, 1.0 / 1024);
	for (int i = 0; i < 4; ++i)
		for (int c = 0; c < 3; ++c) {
			double e[2];
			for (int sgn = 0; sgn < 2; ++sgn) {
				pbd_vec3 q = p[i];
				(&q.x)[c] = (pbd_real)(x[i][c] + (sgn ? -hh : hh));
				assert_int_equal(pbd_world_set_positions(w, (uint32_t)i, 1, &q), PBD_OK);
				pbd_world_get_stats(w, &st);
				e[sgn] = st.family[PBD_FAMILY_TET_NEOHOOKEAN].elastic_energy;
			}
			assert_int_equal(pbd_world_set_positions(w, (uint32_t)i, 1, &p[i]), PBD_OK);
			const double force = norm * gd[i][c] / ad + (J - gamma) * gh[i][c] / ah;
			assert_near((e[0] - e[1]) / (2 * hh), force, TEST_TOL(1e-6, 2e-3) * (fabs(force) + mu * V0));
		}
	/* PBD: stiffnesses 0 and 1 are ideal (no energy), 0.5 has none defined. */
	assert_int_equal(pbd_world_set_formulation(w, PBD_FORMULATION_PBD), PBD_OK);
	pbd_world_get_stats(w, &st);
	assert_true(st.family[PBD_FAMILY_TET_NEOHOOKEAN].energy_defined);
	assert_true(st.family[PBD_FAMILY_TET_NEOHOOKEAN].elastic_energy == 0);
	assert_int_equal(pbd_world_set_tet_neohookean_material(w, 0, 1, (pbd_real)E, (pbd_real)nu, 1, (pbd_real)0.5),
	                 PBD_OK);
	pbd_world_get_stats(w, &st);
	assert_false(st.family[PBD_FAMILY_TET_NEOHOOKEAN].energy_defined);
	assert_true(isnan(st.elastic_energy));
	pbd_world_destroy(w);
}

/* Inverted (x3 pushed through the opposite face) and flat tetrahedra return to positive volume,
 * to a rotation of the rest shape (|F| = sqrt(3), det F = 1; Jacobi converges slower);
 * a tetrahedron collapsed to a line or a point gives no NaN, and one collapsed to a point stays:
 * neither gradient has a direction there. FP traps are on. */
static void test_degenerate(void** state) {
	(void)state;
	double X[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
	const double iw[4] = {1, 1, 1, 1};
	const pbd_vec3 zero[4] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
	for (int s = 0; s < 2; ++s)
		for (int f = 0; f < 2; ++f)
			for (int shape = 0; shape < 4; ++shape) {
				double x[4][3];
				memcpy(x, X, sizeof x);
				if (shape == 0) x[3][0] = 0.2, x[3][1] = 0.2, x[3][2] = -0.5; /* inverted */
				if (shape == 1) x[3][0] = 0.3, x[3][1] = 0.3, x[3][2] = 0;    /* flat */
				if (shape == 2)                                               /* a line */
					for (int i = 0; i < 4; ++i) x[i][0] = 0.25 * i, x[i][1] = x[i][2] = 0;
				if (shape == 3) /* a point */
					for (int i = 0; i < 4; ++i) x[i][0] = 1, x[i][1] = 2, x[i][2] = 3;
				pbd_tet_neohookean_def d = pbd_tet_neohookean_def_default();
				d.youngs_modulus = (pbd_real)1e4;
				pbd_world* w = one_tet((pbd_solver)s, (pbd_formulation)f, X, x, iw, d);
				assert_int_equal(pbd_world_set_iterations(w, 20), PBD_OK);
				for (int k = 0; k < 100; ++k) {
					assert_int_equal(pbd_world_step(w), PBD_OK);
					assert_int_equal(pbd_world_set_velocities(w, 0, 4, zero), PBD_OK);
				}
				assert_true(tp_all_finite(w));
				double y[4][3], norm, J;
				tt_get(w, 0, y);
				tt_invariants(X, y, &norm, &J);
				if (shape <= 1) {
					assert_near(J, 1, s == 0 ? TEST_TOL(1e-6, 1e-4) : 2e-3);
					assert_near(norm, sqrt(3.0), s == 0 ? 1e-3 : 1e-2);
				} else if (shape == 3) {
					const pbd_vec3 at = pbd_v3(1, 2, 3);
					for (int i = 0; i < 4; ++i) assert_memory_equal(&pbd_world_positions(w)[i], &at, sizeof at);
				}
				pbd_world_destroy(w);
			}
}

/* A tetrahedral box of Neo-Hookean elements, perturbed, damped: under PBD (both stiffnesses 1)
 * and XPBD every element returns to a rotation of its rest shape; two identical runs give the
 * same bits; a snapshot round trip continues bit-identically. */
static pbd_world* box_world(pbd_solver s, pbd_formulation f) {
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, 0, 0);
	def.solver = s;
	def.formulation = f;
	def.iterations = 10;
	def.substeps = 4;
	def.damping = (pbd_real)0.9; /* PBD's corrections become velocity: let the box come to rest */
	pbd_world* w = test_world(&def);
	pbd_tet_box_def bd = pbd_tet_box_def_default();
	bd.nx = 3;
	bd.ny = 2;
	bd.nz = 2;
	bd.size = pbd_v3((pbd_real)0.6, (pbd_real)0.4, (pbd_real)0.4);
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(pbd_mesh_tet_box(&bd, &m, &err), PBD_OK);
	pbd_soft_def body = pbd_soft_def_default();
	body.mesh = &m;
	body.mass_mode = PBD_MASS_DENSITY;
	body.mass = 1000;
	for (int k = 0; k < PBD_EDGE_KIND_COUNT; ++k) body.material[k].enabled = false;
	pbd_soft_info b;
	assert_int_equal(test_soft_create(w, &body, &b), PBD_OK);
	pbd_tet_neohookean_def* d = malloc(m.tet_count * sizeof *d);
	for (uint32_t t = 0; t < m.tet_count; ++t) {
		d[t] = pbd_tet_neohookean_def_default();
		d[t].youngs_modulus = (pbd_real)1e5;
		for (int i = 0; i < 4; ++i) d[t].p[i] = b.first_particle + m.tets[4 * t + (uint32_t)i];
	}
	assert_int_equal(pbd_world_add_tet_neohookeans(w, m.tet_count, d, NULL), PBD_OK);
	free(d);
	pbd_mesh_free(&m);
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
			assert_true(st.family[PBD_FAMILY_TET_NEOHOOKEAN].max_strain > 0.05);
			for (int k = 0; k < 100; ++k) {
				assert_int_equal(pbd_world_step(a), PBD_OK);
				assert_int_equal(pbd_world_step(b), PBD_OK);
			}
			assert_true(pbd_world_hash(a) == pbd_world_hash(b));
			assert_true(tp_all_finite(a));
			pbd_world_get_stats(a, &st);
			/* back to the rest shape (XPBD: no load, so its equilibrium is the rest shape too); Jacobi
			 * converges slower */
			assert_true(st.family[PBD_FAMILY_TET_NEOHOOKEAN].max_strain < (s == 0 ? 1e-4 : 1e-3));
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
			assert_int_equal(pbd_world_tet_neohookean_count(c), pbd_world_tet_neohookean_count(a));
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

/* A soft rubber cube, 0.4 m, 4^3 cells of five tetrahedra, E = 1 MPa, nu = 0.45, 1000 kg/m^3,
 * dropped from 0.1 m onto a ground plane: after 2 s it lies at rest (kinetic energy tiny) and its
 * total volume is within 1 % of the rest volume. Float in the float build, as a user runs it. */
static void test_soft_cube_on_ground(void** state) {
	(void)state;
	pbd_world_def def = pbd_world_def_default();
	def.formulation = PBD_FORMULATION_XPBD;
	def.substeps = 10;
	def.iterations = 4;
	def.damping = (pbd_real)0.99;
	pbd_world* w = test_world(&def);
	pbd_collider_def cd = pbd_collider_def_default();
	cd.shape.plane.normal = pbd_v3(0, 1, 0);
	cd.shape.plane.offset = 0;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
	pbd_tet_box_def bd = pbd_tet_box_def_default();
	bd.nx = bd.ny = bd.nz = 4;
	bd.size = pbd_v3((pbd_real)0.4, (pbd_real)0.4, (pbd_real)0.4);
	bd.origin = pbd_v3((pbd_real)-0.2, (pbd_real)0.1, (pbd_real)-0.2);
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(pbd_mesh_tet_box(&bd, &m, &err), PBD_OK);
	pbd_soft_def body = pbd_soft_def_default();
	body.mesh = &m;
	body.mass_mode = PBD_MASS_DENSITY;
	body.mass = 1000;
	for (int k = 0; k < PBD_EDGE_KIND_COUNT; ++k) body.material[k].enabled = false;
	pbd_soft_info b;
	assert_int_equal(test_soft_create(w, &body, &b), PBD_OK);
	pbd_tet_neohookean_def* d = malloc(m.tet_count * sizeof *d);
	for (uint32_t t = 0; t < m.tet_count; ++t) {
		d[t] = pbd_tet_neohookean_def_default();
		for (int i = 0; i < 4; ++i) d[t].p[i] = b.first_particle + m.tets[4 * t + (uint32_t)i];
	}
	assert_int_equal(pbd_world_add_tet_neohookeans(w, m.tet_count, d, NULL), PBD_OK);
	free(d);
	const double v0 = tt_total_volume(w, &m, b.first_particle);
	assert_near(v0, 0.064, 1e-6);
	double lowest = 1;
	for (int k = 0; k < 120; ++k) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_vec3* x = pbd_world_positions(w);
		for (uint32_t i = 0; i < b.particle_count; ++i) lowest = fmin(lowest, (double)x[i].y);
	}
	assert_true(tp_all_finite(w));
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	const double v = tt_total_volume(w, &m, b.first_particle);
	const tp_dvec3 c = tp_center_of_mass(w);
	printf("soft cube: volume %.6f of %.6f (error %.4f %%), centre height %.4f m, kinetic %.3g J, lowest %.4f\n", v, v0,
	       100 * (v - v0) / v0, c.y, st.kinetic_energy, lowest);
	assert_true(fabs(v - v0) < 0.01 * v0);
	assert_true(lowest < 1e-3);            /* it did land */
	assert_true(c.y > 0.17 && c.y < 0.21); /* and rests on the ground, not in it */
	assert_true(st.kinetic_energy < 1e-3 * 64 * 9.81 * 0.2);
	pbd_mesh_free(&m);
	pbd_world_destroy(w);
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
	pbd_tet_neohookean_def d[2] = {pbd_tet_neohookean_def_default(), pbd_tet_neohookean_def_default()};
	const uint32_t good[4] = {0, 1, 2, 3};
	memcpy(d[0].p, good, sizeof good);
	memcpy(d[1].p, good, sizeof good);
	d[1].p[2] = 6;
	assert_int_equal(pbd_world_add_tet_neohookeans(w, 2, d, NULL), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(last, "pbd_world_add_tet_neohookeans: constraint 1: particle index p[2] = 6"));
	d[1].p[2] = 0;
	assert_int_equal(pbd_world_add_tet_neohookeans(w, 2, d, NULL), PBD_ERR_INVALID_ARGUMENT);
	d[1].p[2] = 2;
	d[1].youngs_modulus = 0;
	assert_int_equal(pbd_world_add_tet_neohookeans(w, 2, d, NULL), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(last, "constraint 1: youngs_modulus"));
	d[1].youngs_modulus = (pbd_real)1e6;
	d[1].poisson_ratio = (pbd_real)0.5;
	assert_int_equal(pbd_world_add_tet_neohookeans(w, 2, d, NULL), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(last, "constraint 1: poisson_ratio"));
	d[1].poisson_ratio = -1;
	assert_int_equal(pbd_world_add_tet_neohookeans(w, 2, d, NULL), PBD_ERR_OUT_OF_RANGE);
	d[1].poisson_ratio = 0; /* lambda = 0 is fine: the hydrostatic term uses lambda + mu */
	d[1].stiffness_hydrostatic = -1;
	assert_int_equal(pbd_world_add_tet_neohookeans(w, 2, d, NULL), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(last, "constraint 1: stiffness_hydrostatic"));
	d[1].stiffness_hydrostatic = 1;
	d[1].stiffness_deviatoric = 2;
	assert_int_equal(pbd_world_add_tet_neohookeans(w, 2, d, NULL), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(last, "constraint 1: stiffness_deviatoric"));
	d[1].stiffness_deviatoric = 1;
	d[1].youngs_modulus = (pbd_real)TEST_TOL(1e-310, 1e-39); /* 1 / (mu V0) overflows */
	assert_int_equal(pbd_world_add_tet_neohookeans(w, 2, d, NULL), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(last, "constraint 1: youngs_modulus"));
	d[1].youngs_modulus = (pbd_real)1e6;
	const uint32_t flat[4] = {0, 1, 4, 5};
	memcpy(d[1].p, flat, sizeof flat);
	assert_int_equal(pbd_world_add_tet_neohookeans(w, 2, d, NULL), PBD_ERR_DEGENERATE);
	assert_non_null(strstr(last, "constraint 1: rest tetrahedron (0, 1, 4, 5) is degenerate"));
	const uint32_t inverted[4] = {1, 0, 2, 3};
	memcpy(d[1].p, inverted, sizeof inverted);
	assert_int_equal(pbd_world_add_tet_neohookeans(w, 2, d, NULL), PBD_ERR_DEGENERATE);
	assert_non_null(strstr(last, "constraint 1: rest tetrahedron (1, 0, 2, 3) is inverted"));
	assert_int_equal(pbd_world_tet_neohookean_count(w), 0);
	memcpy(d[1].p, good, sizeof good);
	d[1].poisson_ratio = (pbd_real)0.3;
	uint32_t first = 99;
	assert_int_equal(pbd_world_add_tet_neohookeans(w, 2, d, &first), PBD_OK);
	assert_int_equal(first, 0);
	assert_int_equal(pbd_world_tet_neohookean_count(w), 2);
	pbd_tet_neohookean_def got;
	assert_int_equal(pbd_world_get_tet_neohookean(w, 1, &got), PBD_OK);
	assert_true(got.poisson_ratio == (pbd_real)0.3 && got.youngs_modulus == (pbd_real)1e6 && got.p[3] == 3);
	assert_int_equal(pbd_world_get_tet_neohookean(w, 2, &got), PBD_ERR_OUT_OF_RANGE);
	assert_int_equal(pbd_world_set_tet_neohookean_material(w, 1, 2, 1, 0, 1, 1), PBD_ERR_OUT_OF_RANGE);
	assert_int_equal(pbd_world_set_tet_neohookean_material(w, 0, 2, (pbd_real)TEST_TOL(1e-310, 1e-39), 0, 1, 1),
	                 PBD_ERR_OUT_OF_RANGE);
	assert_int_equal(pbd_world_set_tet_neohookean_material(w, 0, 2, (pbd_real)5e4, (pbd_real)0.49, (pbd_real)0.5, 1),
	                 PBD_OK);
	assert_int_equal(pbd_world_get_tet_neohookean(w, 0, &got), PBD_OK);
	assert_true(got.youngs_modulus == (pbd_real)5e4 && got.poisson_ratio == (pbd_real)0.49 &&
	            got.stiffness_deviatoric == (pbd_real)0.5);
	assert_string_equal(pbd_family_name(PBD_FAMILY_TET_NEOHOOKEAN), "tet_neohookean");
	pbd_world_destroy(w);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pbd_projection_matches_gradient),
	    cmocka_unit_test(test_xpbd_projection_matches_gradient),
	    cmocka_unit_test(test_momentum),
	    cmocka_unit_test(test_linearisation),
	    cmocka_unit_test(test_energy),
	    cmocka_unit_test(test_degenerate),
	    cmocka_unit_test(test_world_converges_and_repeats),
	    cmocka_unit_test(test_soft_cube_on_ground),
	    cmocka_unit_test(test_api),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
