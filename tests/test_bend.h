/* Header-only helpers of the bending tests: reference hinge measurements in double written
 * independently of the library (normals and acos for the angle, cotangents for Bergou's
 * weights), hinges of known angle, and small worlds of hinges, strips and sheets for both
 * bending families. */
#ifndef PBD_TEST_BEND_H
#define PBD_TEST_BEND_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_physics.h"

typedef enum tb_family { TB_DIHEDRAL = 0, TB_ISOMETRIC = 1 } tb_family;

static inline tp_dvec3 tb_v(double x, double y, double z) {
	tp_dvec3 r = {x, y, z};
	return r;
}
static inline tp_dvec3 tb_add(tp_dvec3 a, tp_dvec3 b) { return tb_v(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline tp_dvec3 tb_scale(tp_dvec3 a, double s) { return tb_v(a.x * s, a.y * s, a.z * s); }
static inline double tb_dot(tp_dvec3 a, tp_dvec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline tp_dvec3 tb_cross(tp_dvec3 a, tp_dvec3 b) {
	return tb_v(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline pbd_vec3 tb_r(tp_dvec3 a) { return pbd_v3((pbd_real)a.x, (pbd_real)a.y, (pbd_real)a.z); }

/* The dihedral angle of hinge (x0, x1, x2) / (x1, x0, x3) the textbook way: the angle between
 * the unit normals by acos, signed by which way the second normal turns about the edge. */
static inline double tb_angle(const tp_dvec3 x[4]) {
	const tp_dvec3 e = tp_dsub(x[1], x[0]);
	const tp_dvec3 n1 = tb_cross(e, tp_dsub(x[2], x[0]));
	const tp_dvec3 n2 = tb_cross(tp_dsub(x[3], x[0]), e);
	double c = tb_dot(n1, n2) / (tp_dlen(n1) * tp_dlen(n2));
	c = c > 1 ? 1 : c < -1 ? -1 : c;
	const double a = acos(c);
	return tb_dot(tb_cross(n2, n1), e) < 0 ? -a : a;
}

/* A hinge of edge length L along x from the origin, wing x2 at (u2, h2, 0) and wing x3 at
 * distance h3 from the edge, foot at u3, turned by phi about the edge: its angle is phi. */
static inline void tb_hinge(double L, double u2, double h2, double u3, double h3, double phi, tp_dvec3 x[4]) {
	x[0] = tb_v(0, 0, 0);
	x[1] = tb_v(L, 0, 0);
	x[2] = tb_v(u2, h2, 0);
	x[3] = tb_v(u3, -h3 * cos(phi), h3 * sin(phi));
}

/* A rotation (unit quaternion from seed) and translation applied to a hinge. */
static inline void tb_move(tp_dvec3 x[4], uint64_t seed, double shift) {
	double q[4];
	double n = 0;
	for (int i = 0; i < 4; ++i) {
		q[i] = tp_rand_range(&seed, -1, 1);
		n += q[i] * q[i];
	}
	n = sqrt(n);
	for (int i = 0; i < 4; ++i) q[i] /= n;
	const double w = q[0], a = q[1], b = q[2], c = q[3];
	const double R[3][3] = {{1 - 2 * (b * b + c * c), 2 * (a * b - w * c), 2 * (a * c + w * b)},
	                        {2 * (a * b + w * c), 1 - 2 * (a * a + c * c), 2 * (b * c - w * a)},
	                        {2 * (a * c - w * b), 2 * (b * c + w * a), 1 - 2 * (a * a + b * b)}};
	const tp_dvec3 t = tb_v(tp_rand_range(&seed, -shift, shift), tp_rand_range(&seed, -shift, shift),
	                        tp_rand_range(&seed, -shift, shift));
	for (int i = 0; i < 4; ++i) {
		const tp_dvec3 p = x[i];
		x[i] = tb_v(R[0][0] * p.x + R[0][1] * p.y + R[0][2] * p.z + t.x,
		            R[1][0] * p.x + R[1][1] * p.y + R[1][2] * p.z + t.y,
		            R[2][0] * p.x + R[2][1] * p.y + R[2][2] * p.z + t.z);
	}
}

static inline double tb_cot(tp_dvec3 a, tp_dvec3 b) { return tb_dot(a, b) / tp_dlen(tb_cross(a, b)); }

/* Bergou's weights from the cotangents of the four corner angles at the edge, times
 * sqrt(3 / (A2 + A3)); and kappa = |e| sqrt(3 / (A2 + A3)). */
static inline void tb_iso_weights(const tp_dvec3 x[4], double K[4], double* kappa) {
	const tp_dvec3 e = tp_dsub(x[1], x[0]);
	const tp_dvec3 me = tb_scale(e, -1);
	const double c02 = tb_cot(e, tp_dsub(x[2], x[0])), c03 = tb_cot(e, tp_dsub(x[3], x[0]));
	const double c12 = tb_cot(me, tp_dsub(x[2], x[1])), c13 = tb_cot(me, tp_dsub(x[3], x[1]));
	const double A = 0.5 * tp_dlen(tb_cross(e, tp_dsub(x[2], x[0]))) + 0.5 * tp_dlen(tb_cross(e, tp_dsub(x[3], x[0])));
	const double s = sqrt(3 / A);
	K[0] = s * (c12 + c13);
	K[1] = s * (c02 + c03);
	K[2] = -s * (c02 + c12);
	K[3] = -s * (c03 + c13);
	if (kappa) *kappa = tp_dlen(e) * s;
}

/* |sum_i K_i x_i| - r0. */
static inline double tb_iso_C(const double K[4], const tp_dvec3 x[4], double r0) {
	tp_dvec3 s = tb_v(0, 0, 0);
	for (int i = 0; i < 4; ++i) s = tb_add(s, tb_scale(tp_dsub(x[i], x[0]), K[i]));
	return tp_dlen(s) - r0;
}

/* A world of `n` particles at x (double, rounded to the scalar) with inverse masses iw, no gravity. */
static inline pbd_world* tb_world(pbd_formulation form, pbd_solver solver, int iterations, uint32_t n,
                                  const tp_dvec3* x, const pbd_real* iw) {
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, 0, 0);
	def.formulation = form;
	def.solver = solver;
	def.iterations = iterations;
	def.dt = (pbd_real)0.01;
	pbd_world* w = test_world(&def);
	pbd_vec3* p = (pbd_vec3*)malloc(n * sizeof *p);
	for (uint32_t i = 0; i < n; ++i) p[i] = tb_r(x[i]);
	assert_int_equal(pbd_world_add_particles(w, n, p, NULL, iw, NULL), PBD_OK);
	free(p);
	return w;
}

/* Adds one bend of the family per hinge (4 world indices each). */
static inline void tb_add_bends(pbd_world* w, tb_family fam, uint32_t n, const uint32_t* h4, bool measure,
                                pbd_real rest, pbd_real stiffness, pbd_real compliance) {
	if (fam == TB_DIHEDRAL) {
		pbd_bend_dihedral_def* d = (pbd_bend_dihedral_def*)malloc(n * sizeof *d);
		for (uint32_t k = 0; k < n; ++k) {
			d[k] = pbd_bend_dihedral_def_default();
			memcpy(d[k].p, h4 + 4 * (size_t)k, sizeof d[k].p);
			d[k].measure_rest = measure;
			d[k].rest = rest;
			d[k].stiffness = stiffness;
			d[k].compliance = compliance;
		}
		assert_int_equal(pbd_world_add_bend_dihedrals(w, n, d, NULL), PBD_OK);
		free(d);
	} else {
		pbd_bend_isometric_def* d = (pbd_bend_isometric_def*)malloc(n * sizeof *d);
		for (uint32_t k = 0; k < n; ++k) {
			d[k] = pbd_bend_isometric_def_default();
			memcpy(d[k].p, h4 + 4 * (size_t)k, sizeof d[k].p);
			d[k].measure_rest = measure;
			d[k].rest = rest;
			d[k].stiffness = stiffness;
			d[k].compliance = compliance;
		}
		assert_int_equal(pbd_world_add_bend_isometrics(w, n, d, NULL), PBD_OK);
		free(d);
	}
}

static inline pbd_family_type tb_type(tb_family fam) {
	return fam == TB_DIHEDRAL ? PBD_FAMILY_BEND_DIHEDRAL : PBD_FAMILY_BEND_ISOMETRIC;
}

/* The hinges of a mesh, in world indices (offset added); *n receives their count. free() it. */
static inline uint32_t* tb_hinges(const pbd_mesh* m, uint32_t offset, uint32_t* n) {
	pbd_error err;
	assert_int_equal(pbd_mesh_hinges(m, NULL, 0, n, NULL, &err), PBD_OK);
	uint32_t* h = (uint32_t*)malloc((*n ? *n : 1) * 4 * sizeof *h);
	assert_int_equal(pbd_mesh_hinges(m, h, *n, n, NULL, &err), PBD_OK);
	for (uint32_t k = 0; k < 4 * *n; ++k) h[k] += offset;
	return h;
}

/* A body from a grid mesh (edges: structural and the triangulation diagonal, no bend edges),
 * with its hinges bent by the family; returns the body. */
static inline pbd_soft_info tb_grid_body(pbd_world* w, const pbd_grid_def* gd, tb_family fam, pbd_real stiffness,
                                         pbd_real compliance, const uint32_t* pinned, uint32_t pinned_count) {
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(pbd_mesh_grid(gd, &m, &err), PBD_OK);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.pinned = pinned;
	bd.pinned_count = pinned_count;
	pbd_soft_info body;
	assert_int_equal(test_soft_create(w, &bd, &body), PBD_OK);
	uint32_t n;
	uint32_t* h = tb_hinges(&m, body.first_particle, &n);
	tb_add_bends(w, fam, n, h, true, 0, stiffness, compliance);
	free(h);
	pbd_mesh_free(&m);
	return body;
}

/* ---- checks shared by both families ------------------------------------------------------- */

/* The reference C of a one-hinge world's constraint 0 from its current positions, with the
 * reference gradients by central differences when grad is not NULL. `rest` is the dihedral rest
 * angle, or for the isometric family the rest length r0 of s; K the reference weights. */
typedef struct tb_ref {
	tb_family fam;
	double rest;
	double K[4];
} tb_ref;

static inline double tb_ref_C(const tb_ref* r, const tp_dvec3 x[4]) {
	if (r->fam == TB_ISOMETRIC) return tb_iso_C(r->K, x, r->rest);
	double c = tb_angle(x) - r->rest;
	if (c > TP_PI) c -= 2 * TP_PI;
	if (c < -TP_PI) c += 2 * TP_PI;
	return c;
}

static inline void tb_ref_grad(const tb_ref* r, const tp_dvec3 x[4], tp_dvec3 g[4]) {
	const double h = 1e-6;
	for (int i = 0; i < 4; ++i) {
		double* gi = &g[i].x;
		for (int a = 0; a < 3; ++a) {
			tp_dvec3 xp[4], xm[4];
			memcpy(xp, x, sizeof xp);
			memcpy(xm, x, sizeof xm);
			(&xp[i].x)[a] += h;
			(&xm[i].x)[a] -= h;
			gi[a] = (tb_ref_C(r, xp) - tb_ref_C(r, xm)) / (2 * h);
		}
	}
}

static inline void tb_read(const pbd_world* w, uint32_t first, uint32_t n, tp_dvec3* out) {
	const pbd_vec3* x = pbd_world_positions(w);
	for (uint32_t i = 0; i < n; ++i) out[i] = tp_d(x[first + i]);
}

/* A random hinge of moderate shape and angle, away from the origin. */
static inline void tb_random_hinge(uint64_t* seed, tp_dvec3 x[4]) {
	const double L = tp_rand_range(seed, 0.5, 1.5);
	const double angle = tp_rand_range(seed, 0.5, 2.5) * (tp_rand(seed) < 0.5 ? -1 : 1);
	tb_hinge(L, tp_rand_range(seed, -0.3, 1.3) * L, tp_rand_range(seed, 0.4, 1.2), tp_rand_range(seed, -0.3, 1.3) * L,
	         tp_rand_range(seed, 0.4, 1.2), angle, x);
	tb_move(x, (uint64_t)(tp_rand(seed) * 1e9), 3);
}

/* A one-hinge world with the constraint added at the hinge's current shape and its reference.
 * The dihedral rest is the current angle minus `offset`; the isometric rest angle is chosen so
 * that C = offset (r0 = |s| - offset, offset < |s|). */
static inline pbd_world* tb_one(tb_family fam, pbd_formulation form, pbd_solver solver, int iterations,
                                const tp_dvec3 x0[4], const pbd_real iw[4], double offset, pbd_real stiffness,
                                pbd_real compliance, tb_ref* ref) {
	pbd_world* w = tb_world(form, solver, iterations, 4, x0, iw);
	tp_dvec3 x[4];
	tb_read(w, 0, 4, x); /* as rounded to the scalar */
	const uint32_t h[4] = {0, 1, 2, 3};
	ref->fam = fam;
	if (fam == TB_DIHEDRAL) {
		double rest = tb_angle(x) - offset;
		if (rest > TP_PI) rest -= 2 * TP_PI;
		if (rest < -TP_PI) rest += 2 * TP_PI;
		tb_add_bends(w, fam, 1, h, false, (pbd_real)rest, stiffness, compliance);
		pbd_bend_dihedral_def d;
		assert_int_equal(pbd_world_get_bend_dihedral(w, 0, &d), PBD_OK);
		ref->rest = (double)d.rest;
	} else {
		double kappa;
		tb_iso_weights(x, ref->K, &kappa);
		const double s = tb_iso_C(ref->K, x, 0);
		assert_true(offset < s);
		const double angle = 2 * asin(0.5 * (s - offset) / kappa);
		tb_add_bends(w, fam, 1, h, false, (pbd_real)angle, stiffness, compliance);
		/* r0 as the library stores it comes from the rounded angle: recompute it so */
		ref->rest = 2 * sin(0.5 * (double)(pbd_real)angle) * kappa;
	}
	return w;
}

/* One projection moving one free particle i (the others pinned) by -C grad_i / |grad_i|^2: the
 * move, measured, gives the library's gradient of particle i in direction and length, which
 * must be the reference's (central differences of C in double). PBD k = 1 and XPBD alpha = 0. */
static inline void tb_check_projection_gradient(tb_family fam) {
	uint64_t seed = 11;
	double worst = 0;
	for (int trial = 0; trial < 20; ++trial) {
		tp_dvec3 x[4];
		tb_random_hinge(&seed, x);
		for (int form = 0; form < 2; ++form)
			for (int i = 0; i < 4; ++i) {
				pbd_real iw[4] = {0, 0, 0, 0};
				iw[i] = (pbd_real)0.7;
				tb_ref ref;
				pbd_world* w = tb_one(fam, (pbd_formulation)form, PBD_SOLVER_GAUSS_SEIDEL, 1, x, iw, 0.02, 1, 0, &ref);
				tp_dvec3 before[4], after[4], g[4];
				tb_read(w, 0, 4, before);
				const double C = tb_ref_C(&ref, before);
				tb_ref_grad(&ref, before, g);
				assert_int_equal(pbd_world_step(w), PBD_OK);
				tb_read(w, 0, 4, after);
				const double g2 = tb_dot(g[i], g[i]);
				const tp_dvec3 want = tb_scale(g[i], -C / g2);
				const tp_dvec3 got = tp_dsub(after[i], before[i]);
				const double err = tp_dlen(tp_dsub(got, want)) / tp_dlen(want);
				if (err > worst) worst = err;
				for (int j = 0; j < 4; ++j)
					if (j != i) assert_memory_equal(&after[j], &before[j], sizeof after[j]);
				pbd_world_destroy(w);
			}
	}
	assert_true(worst < TEST_TOL(1e-6, 2e-3));
}

/* One PBD projection (k = 1) of a free hinge with unequal masses: the violation left is second
 * order in the one before (the dihedral's linearisation) or none (the isometric C is linear along
 * its gradient). One XPBD projection leaves C alpha~ / (W + alpha~) with W = sum w |grad|^2.
 * Returns the dihedral's |C1| / C0^2 for the record. */
static inline double tb_check_linearisation(tb_family fam) {
	const pbd_real iw[4] = {(pbd_real)0.5, 2, (pbd_real)1.3, (pbd_real)0.8};
	uint64_t seed = 5;
	double worst_quad = 0;
	for (int trial = 0; trial < 10; ++trial) {
		tp_dvec3 x[4];
		tb_random_hinge(&seed, x);
		double c1[2];
		const double c0s[2] = {0.1, 0.05};
		for (int c = 0; c < 2; ++c) {
			tb_ref ref;
			pbd_world* w = tb_one(fam, PBD_FORMULATION_PBD, PBD_SOLVER_GAUSS_SEIDEL, 1, x, iw, c0s[c], 1, 0, &ref);
			tp_dvec3 y[4];
			tb_read(w, 0, 4, y);
			const double C0 = tb_ref_C(&ref, y);
			assert_near(C0, c0s[c], TEST_TOL(1e-9, 1e-5));
			assert_int_equal(pbd_world_step(w), PBD_OK);
			tb_read(w, 0, 4, y);
			c1[c] = fabs(tb_ref_C(&ref, y));
			pbd_world_destroy(w);
			if (fam == TB_ISOMETRIC) assert_true(c1[c] < TEST_TOL(1e-12, 2e-6));
			if (fam == TB_DIHEDRAL && c1[c] / (C0 * C0) > worst_quad) worst_quad = c1[c] / (C0 * C0);
		}
		/* Quadratic: halving C0 divides what is left by about four (float noise aside). */
		if (fam == TB_DIHEDRAL) assert_true(c1[1] < c1[0] / 2.5 || c1[1] < TEST_TOL(1e-12, 1e-5));

		/* XPBD: the predicted fraction, with alpha~ = W so that half of C is left. */
		tb_ref ref;
		pbd_world* probe = tb_one(fam, PBD_FORMULATION_XPBD, PBD_SOLVER_GAUSS_SEIDEL, 1, x, iw, 0.02, 1, 0, &ref);
		tp_dvec3 y[4], g[4];
		tb_read(probe, 0, 4, y);
		tb_ref_grad(&ref, y, g);
		double W = 0;
		for (int i = 0; i < 4; ++i) W += (double)iw[i] * tb_dot(g[i], g[i]);
		pbd_world_destroy(probe);
		const double h = 0.01, alpha = W * h * h;
		pbd_world* w =
		    tb_one(fam, PBD_FORMULATION_XPBD, PBD_SOLVER_GAUSS_SEIDEL, 1, x, iw, 0.02, 1, (pbd_real)alpha, &ref);
		tb_read(w, 0, 4, y);
		const double C0 = tb_ref_C(&ref, y);
		assert_int_equal(pbd_world_step(w), PBD_OK);
		tb_read(w, 0, 4, y);
		const double ratio = tb_ref_C(&ref, y) / C0;
		assert_near(ratio, 0.5, fam == TB_DIHEDRAL ? 0.03 : TEST_TOL(1e-8, 2e-3));
		pbd_world_destroy(w);
	}
	if (fam == TB_DIHEDRAL) assert_true(worst_quad < 5);
	return worst_quad;
}

/* A free hinge with unequal masses, one projection (one iteration), both solvers and
 * formulations: sum m dx = 0 and sum m x x dx = 0, relative to sum m |x| |dx|. */
static inline void tb_check_momentum(tb_family fam) {
	const pbd_real iw[4] = {(pbd_real)0.5, 2, (pbd_real)1.3, (pbd_real)0.8};
	uint64_t seed = 21;
	for (int trial = 0; trial < 10; ++trial) {
		tp_dvec3 x[4];
		tb_random_hinge(&seed, x);
		for (int solver = 0; solver < 2; ++solver)
			for (int form = 0; form < 2; ++form) {
				tb_ref ref;
				pbd_world* w =
				    tb_one(fam, (pbd_formulation)form, (pbd_solver)solver, 1, x, iw, 0.3, 1, (pbd_real)1e-6, &ref);
				tp_dvec3 a[4], b[4];
				tb_read(w, 0, 4, a);
				assert_int_equal(pbd_world_step(w), PBD_OK);
				tb_read(w, 0, 4, b);
				tp_dvec3 P = tb_v(0, 0, 0), L = tb_v(0, 0, 0);
				double scale = 0;
				for (int i = 0; i < 4; ++i) {
					const double m = 1 / (double)iw[i];
					const tp_dvec3 d = tp_dsub(b[i], a[i]);
					P = tb_add(P, tb_scale(d, m));
					L = tb_add(L, tb_scale(tb_cross(a[i], d), m));
					scale += m * tp_dlen(d) * (1 + tp_dlen(a[i]));
				}
				assert_true(scale > 1e-6);
				/* float: the moves are read back as differences of positions about 3 m out */
				assert_true(tp_dlen(P) <= TEST_TOL(1e-12, 1e-5) * scale);
				assert_true(tp_dlen(L) <= TEST_TOL(1e-12, 1e-5) * scale);
				pbd_world_destroy(w);
			}
	}
}

/* XPBD energy C^2 / (2 alpha) as the statistics report it (in double), and its derivative by
 * central differences of the reported energy equals C grad / alpha with the library's gradient
 * `grad` (given by the family's test). */
typedef void (*tb_grad_fn)(const pbd_world* w, tp_dvec3 g[4]);

static inline void tb_check_energy(tb_family fam, tb_grad_fn library_grad) {
	const pbd_real iw[4] = {1, 1, 1, 1};
	const double alpha = 0.01;
	uint64_t seed = 33;
	for (int trial = 0; trial < 5; ++trial) {
		tp_dvec3 x[4];
		tb_random_hinge(&seed, x);
		tb_ref ref;
		pbd_world* w =
		    tb_one(fam, PBD_FORMULATION_XPBD, PBD_SOLVER_GAUSS_SEIDEL, 1, x, iw, 0.3, 1, (pbd_real)alpha, &ref);
		tp_dvec3 y[4], g[4];
		tb_read(w, 0, 4, y);
		const double C = tb_ref_C(&ref, y);
		pbd_stats st;
		pbd_world_get_stats(w, &st);
		const pbd_family_stats* fs = &st.family[tb_type(fam)];
		assert_int_equal(fs->count, 1);
		assert_true(fs->energy_defined);
		assert_near(fs->elastic_energy, C * C / (2 * alpha), TEST_TOL(1e-9, 1e-4) * C * C / alpha);
		assert_near(fs->max_violation, fabs(C), TEST_TOL(1e-9, 1e-5));
		library_grad(w, g);
		for (int i = 0; i < 4; ++i)
			for (int a = 0; a < 3; ++a) {
				const pbd_real h = (pbd_real)1e-3;
				pbd_vec3 p = pbd_world_positions(w)[i], lo = p, hi = p;
				(&lo.x)[a] -= h;
				(&hi.x)[a] += h;
				assert_int_equal(pbd_world_set_positions(w, (uint32_t)i, 1, &hi), PBD_OK);
				pbd_world_get_stats(w, &st);
				const double e_hi = st.family[tb_type(fam)].elastic_energy;
				assert_int_equal(pbd_world_set_positions(w, (uint32_t)i, 1, &lo), PBD_OK);
				pbd_world_get_stats(w, &st);
				const double e_lo = st.family[tb_type(fam)].elastic_energy;
				assert_int_equal(pbd_world_set_positions(w, (uint32_t)i, 1, &p), PBD_OK);
				const double fd = (e_hi - e_lo) / ((double)(&hi.x)[a] - (double)(&lo.x)[a]);
				const double want = C * (&g[i].x)[a] / alpha;
				assert_near(fd, want, 2e-3 * (fabs(C) * tp_dlen(g[i]) / alpha) + 1e-6);
			}
		/* PBD stiffness 1: ideal, no energy; 0.5: undefined. */
		assert_int_equal(pbd_world_set_formulation(w, PBD_FORMULATION_PBD), PBD_OK);
		pbd_world_get_stats(w, &st);
		assert_true(st.family[tb_type(fam)].energy_defined && st.family[tb_type(fam)].elastic_energy == 0);
		if (fam == TB_DIHEDRAL)
			assert_int_equal(pbd_world_set_bend_dihedral_material(w, 0, 1, (pbd_real)0.5, 0), PBD_OK);
		else
			assert_int_equal(pbd_world_set_bend_isometric_material(w, 0, 1, (pbd_real)0.5, 0), PBD_OK);
		pbd_world_get_stats(w, &st);
		assert_false(st.family[tb_type(fam)].energy_defined);
		pbd_world_destroy(w);
	}
}

/* A 4 x 4 sheet folded by a right angle along its middle grid line: hinges flat at rest,
 * distances at rest; the fold is undone by the bends alone. */
static inline pbd_world* tb_folded_sheet(tb_family fam, pbd_solver solver, pbd_formulation form, int iterations) {
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, 0, 0);
	def.solver = solver;
	def.formulation = form;
	def.iterations = iterations;
	def.dt = (pbd_real)0.01;
	def.damping = (pbd_real)0.9;
	pbd_world* w = test_world(&def);
	pbd_grid_def gd = pbd_grid_def_default();
	gd.nx = 5;
	gd.ny = 5;
	gd.size_u = 1;
	gd.size_v = 1;
	gd.diagonals = 1;
	gd.bend = false;
	tb_grid_body(w, &gd, fam, 1, 0, NULL, 0);
	/* Fold x > 0.5 up about the line x = 0.5 (in the xz plane of the grid). */
	const uint32_t n = pbd_world_particle_count(w);
	pbd_vec3* p = (pbd_vec3*)malloc(n * sizeof *p);
	assert_int_equal(pbd_world_get_positions(w, 0, n, p), PBD_OK);
	for (uint32_t i = 0; i < n; ++i)
		if (p[i].x > (pbd_real)0.5) {
			p[i].y = p[i].x - (pbd_real)0.5;
			p[i].x = (pbd_real)0.5;
		}
	assert_int_equal(pbd_world_set_positions(w, 0, n, p), PBD_OK);
	free(p);
	return w;
}

/* Every solver and formulation: the folded sheet stays finite and its hard bends and distances
 * converge; two identical runs give the same bits, and a snapshot taken midway resumes
 * bit-identically. */
static inline void tb_check_scene(tb_family fam) {
	for (int solver = 0; solver < 2; ++solver)
		for (int form = 0; form < 2; ++form) {
			const int iterations = solver == PBD_SOLVER_JACOBI ? 30 : 10;
			pbd_world* a = tb_folded_sheet(fam, (pbd_solver)solver, (pbd_formulation)form, iterations);
			pbd_world* b = tb_folded_sheet(fam, (pbd_solver)solver, (pbd_formulation)form, iterations);
			pbd_stats st;
			pbd_world_get_stats(a, &st);
			const double start = st.family[tb_type(fam)].max_violation;
			assert_true(start > 0.1);
			for (int s = 0; s < 20; ++s) {
				assert_int_equal(pbd_world_step(a), PBD_OK);
				assert_int_equal(pbd_world_step(b), PBD_OK);
			}
			assert_true(pbd_world_hash(a) == pbd_world_hash(b));
			size_t size = 0;
			assert_int_equal(pbd_world_save_memory(a, NULL, 0, &size), PBD_OK);
			void* mem = malloc(size);
			assert_int_equal(pbd_world_save_memory(a, mem, size, &size), PBD_OK);
			pbd_world* c = NULL;
			pbd_error err;
			assert_int_equal(pbd_world_load_memory(mem, size, NULL, &c, &err), PBD_OK);
			free(mem);
			assert_int_equal(pbd_world_bend_dihedral_count(c), pbd_world_bend_dihedral_count(a));
			assert_int_equal(pbd_world_bend_isometric_count(c), pbd_world_bend_isometric_count(a));
			for (int s = 0; s < 400; ++s) {
				assert_int_equal(pbd_world_step(a), PBD_OK);
				if (s < 20) assert_int_equal(pbd_world_step(c), PBD_OK);
				if (s == 19) assert_true(pbd_world_hash(a) == pbd_world_hash(c));
			}
			assert_true(tp_all_finite(a));
			pbd_world_get_stats(a, &st);
			assert_true(st.family[tb_type(fam)].max_violation < 1e-3);
			assert_true(st.family[PBD_FAMILY_DISTANCE].max_violation < 1e-3);
			assert_int_equal(pbd_world_get_warning(a, PBD_WARN_NONFINITE).count, 0);
			pbd_world_destroy(a);
			pbd_world_destroy(b);
			pbd_world_destroy(c);
		}
}

/* A sheet in a vertical plane, its top row pinned, gravity in the plane, the particles pushed
 * about in the plane (rest lengths kept from the unpushed grid): nothing may leave the plane,
 * where every hinge is flat (angle 0, s in the plane). Exactly in the plane z = 0; to rounding in
 * a tilted plane. Every solver and formulation, soft and hard bends. */
static inline void tb_check_flat_sheet(tb_family fam) {
	for (int tilt = 0; tilt < 2; ++tilt)
		for (int solver = 0; solver < 2; ++solver)
			for (int form = 0; form < 2; ++form) {
				pbd_world_def def = pbd_world_def_default();
				def.solver = (pbd_solver)solver;
				def.formulation = (pbd_formulation)form;
				def.iterations = 10;
				const double nrm = 1 / sqrt(3.0);
				const tp_dvec3 normal = tilt ? tb_v(nrm, nrm, nrm) : tb_v(0, 0, 1);
				const tp_dvec3 u = tilt ? tb_v(1 / sqrt(2.0), -1 / sqrt(2.0), 0) : tb_v(1, 0, 0);
				const tp_dvec3 v = tb_cross(normal, u);
				def.gravity = tb_r(tb_scale(v, -9.81)); /* in the plane */
				pbd_world* w = test_world(&def);
				pbd_grid_def gd = pbd_grid_def_default();
				gd.nx = 8;
				gd.ny = 8;
				gd.size_u = 1;
				gd.size_v = 1;
				gd.axis_u = tb_r(u);
				gd.axis_v = tb_r(v);
				gd.diagonals = 1;
				pbd_mesh m;
				pbd_error err;
				assert_int_equal(pbd_mesh_grid(&gd, &m, &err), PBD_OK);
				pbd_real* rest = (pbd_real*)malloc(m.edge_count * sizeof *rest);
				for (uint32_t e = 0; e < m.edge_count; ++e)
					rest[e] = pbd_v3_length(pbd_v3_sub(m.positions[m.edges[2 * e]], m.positions[m.edges[2 * e + 1]]));
				m.edge_rest = rest;
				uint64_t seed = 3;
				for (uint32_t i = 0; i < m.vertex_count; ++i) {
					const double du = tp_rand_range(&seed, -0.01, 0.01), dv = tp_rand_range(&seed, -0.01, 0.01);
					m.positions[i] = pbd_v3_add(m.positions[i], tb_r(tb_add(tb_scale(u, du), tb_scale(v, dv))));
				}
				uint32_t pins[8];
				for (uint32_t i = 0; i < 8; ++i) pins[i] = 56 + i; /* the row j = 7 */
				pbd_soft_def bd = pbd_soft_def_default();
				bd.mesh = &m;
				bd.pinned = pins;
				bd.pinned_count = 8;
				pbd_soft_info body;
				assert_int_equal(test_soft_create(w, &bd, &body), PBD_OK);
				uint32_t nh;
				uint32_t* h = tb_hinges(&m, body.first_particle, &nh);
				/* Flat rest given (the pushed sheet is flat too); half the hinges soft. */
				tb_add_bends(w, fam, nh / 2, h, false, 0, 1, 0);
				tb_add_bends(w, fam, nh - nh / 2, h + 4 * (size_t)(nh / 2), false, 0, (pbd_real)0.3, (pbd_real)1e-2);
				free(h);
				pbd_mesh_free(&m);
				for (int s = 0; s < 100; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
				const pbd_vec3* x = pbd_world_positions(w);
				double off = 0, moved = 0;
				for (uint32_t i = 0; i < pbd_world_particle_count(w); ++i) {
					const double d = fabs(tb_dot(tp_d(x[i]), normal));
					off = d > off ? d : off;
					moved += tp_dlen(tp_d(pbd_world_velocities(w)[i]));
				}
				assert_true(moved > 0); /* it does swing */
				if (tilt)
					assert_true(off < TEST_TOL(1e-12, 2e-6));
				else
					assert_true(off == 0);
				pbd_world_destroy(w);
			}
}

/* One hinge with its five edges held by hard distances, folded from `start` away from its rest
 * angle: it returns to it, under PBD stiffness and XPBD compliance, and never leaves the way back
 * by more than a small overshoot. The isometric family knows the bend's size only, so its error is
 * ||theta| - |rest||. Returns the worst final error (rad). */
static inline double tb_check_unfold(tb_family fam, double start, double rest) {
	double worst = 0;
	for (int form = 0; form < 2; ++form) {
		tp_dvec3 x[4];
		tb_hinge(1, 0.4, 0.9, 0.6, 0.8, start, x);
		const pbd_real iw[4] = {1, 1, 1, 1};
		pbd_world* w = tb_world((pbd_formulation)form, PBD_SOLVER_GAUSS_SEIDEL, 10, 4, x, iw);
		assert_int_equal(pbd_world_set_damping(w, (pbd_real)0.97), PBD_OK);
		const uint32_t pairs[5][2] = {{0, 1}, {0, 2}, {1, 2}, {0, 3}, {1, 3}};
		pbd_distance_def dd[5];
		for (int k = 0; k < 5; ++k) {
			dd[k] = pbd_distance_def_default();
			dd[k].a = pairs[k][0];
			dd[k].b = pairs[k][1];
		}
		assert_int_equal(pbd_world_add_distances(w, 5, dd, NULL), PBD_OK);
		const uint32_t h[4] = {0, 1, 2, 3};
		tb_add_bends(w, fam, 1, h, false, (pbd_real)rest, form ? 1 : (pbd_real)0.2, form ? (pbd_real)1e-3 : 0);
		const double e0 = fam == TB_ISOMETRIC ? fabs(fabs(start) - fabs(rest)) : fabs(start - rest);
		double err = e0;
		for (int s = 0; s < 300; ++s) {
			assert_int_equal(pbd_world_step(w), PBD_OK);
			tp_dvec3 y[4];
			tb_read(w, 0, 4, y);
			const double a = tb_angle(y);
			err = fam == TB_ISOMETRIC ? fabs(fabs(a) - fabs(rest)) : fabs(a - rest);
			assert_true(err < e0 + 0.05);
		}
		assert_true(tp_all_finite(w));
		worst = err > worst ? err : worst;
		pbd_world_destroy(w);
	}
	assert_true(worst < 0.01);
	return worst;
}

/* A strip 1 m x 0.1 m of 11 x 2 particles (0.01 kg each), clamped by its first two columns,
 * sagging under gravity against XPBD bending of compliance `alpha`, with hard distances: the
 * settled tip height (m, below the clamp) for the given iterations and substeps. */
static inline double tb_cantilever_sag(tb_family fam, pbd_formulation form, pbd_real stiffness, pbd_real alpha,
                                       int iterations, int substeps) {
	pbd_world_def def = pbd_world_def_default();
	def.formulation = form;
	def.iterations = iterations;
	def.substeps = substeps;
	def.damping = (pbd_real)0.9;
	pbd_world* w = test_world(&def);
	pbd_grid_def gd = pbd_grid_def_default();
	gd.nx = 11;
	gd.ny = 2;
	gd.size_u = 1;
	gd.size_v = (pbd_real)0.1;
	gd.axis_u = pbd_v3(1, 0, 0);
	gd.axis_v = pbd_v3(0, 0, 1);
	gd.diagonals = 1;
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(pbd_mesh_grid(&gd, &m, &err), PBD_OK);
	const uint32_t pins[4] = {0, 1, 11, 12};
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.mass = (pbd_real)0.01;
	bd.pinned = pins;
	bd.pinned_count = 4;
	pbd_soft_info body;
	assert_int_equal(test_soft_create(w, &bd, &body), PBD_OK);
	uint32_t nh;
	uint32_t* h = tb_hinges(&m, body.first_particle, &nh);
	tb_add_bends(w, fam, nh, h, true, 0, stiffness, alpha);
	free(h);
	pbd_mesh_free(&m);
	for (int s = 0; s < 300; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_vec3* x = pbd_world_positions(w);
	const double sag = -0.5 * ((double)x[10].y + (double)x[21].y);
	pbd_world_destroy(w);
	return sag;
}

#endif
