/* Helpers of the tetrahedral tests: single-tetrahedron worlds, the constraints computed
 * independently in double, central differences, and tet-mesh bodies. */
#ifndef PBD_TEST_TET_H
#define PBD_TEST_TET_H

#include "test_physics.h"

/* A world without gravity, so that only the constraints move anything. */
static inline pbd_world* tt_world(pbd_solver solver, pbd_formulation f, int iterations, int substeps) {
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, 0, 0);
	def.solver = solver;
	def.formulation = f;
	def.iterations = iterations;
	def.substeps = substeps;
	def.dt = (pbd_real)0.01;
	return test_world(&def);
}

/* Signed volume (x1 - x0) x (x2 - x0) . (x3 - x0) / 6 in double. */
static inline double tt_volume(double x[4][3]) {
	double e[3][3];
	for (int i = 0; i < 3; ++i)
		for (int k = 0; k < 3; ++k) e[i][k] = x[i + 1][k] - x[0][k];
	return (e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) + e[0][1] * (e[1][2] * e[2][0] - e[1][0] * e[2][2]) +
	        e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0])) /
	       6.0;
}

static inline double tt_det3(double m[3][3]) {
	return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
	       m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

/* F = Ds Dm^-1 of the current shape x against the rest shape X, in double (Cramer's rule). */
static inline void tt_deformation(double X[4][3], double x[4][3], double F[3][3]) {
	double Dm[3][3], Ds[3][3], inv[3][3];
	for (int r = 0; r < 3; ++r)
		for (int c = 0; c < 3; ++c) {
			Dm[r][c] = X[c + 1][r] - X[0][r];
			Ds[r][c] = x[c + 1][r] - x[0][r];
		}
	const double det = tt_det3(Dm);
	for (int r = 0; r < 3; ++r)
		for (int c = 0; c < 3; ++c) {
			/* inverse entry (r, c) = cofactor (c, r) / det */
			const int r0 = (c + 1) % 3, r1 = (c + 2) % 3, c0 = (r + 1) % 3, c1 = (r + 2) % 3;
			inv[r][c] = (Dm[r0][c0] * Dm[r1][c1] - Dm[r0][c1] * Dm[r1][c0]) / det;
		}
	for (int r = 0; r < 3; ++r)
		for (int c = 0; c < 3; ++c) F[r][c] = Ds[r][0] * inv[0][c] + Ds[r][1] * inv[1][c] + Ds[r][2] * inv[2][c];
}

/* The Neo-Hookean invariants |F|_F and det F. */
static inline void tt_invariants(double X[4][3], double x[4][3], double* norm, double* J) {
	double F[3][3];
	tt_deformation(X, x, F);
	double s = 0;
	for (int r = 0; r < 3; ++r)
		for (int c = 0; c < 3; ++c) s += F[r][c] * F[r][c];
	*norm = sqrt(s);
	*J = tt_det3(F);
}

/* Central differences of a function of the 12 coordinates: g[i][k] = dfn/dx[i][k]. */
typedef double (*tt_fn)(double x[4][3], const void* ctx);
static inline void tt_fd_gradient(tt_fn fn, const void* ctx, double x[4][3], double h, double g[4][3]) {
	double y[4][3];
	memcpy(y, x, sizeof y);
	for (int i = 0; i < 4; ++i)
		for (int k = 0; k < 3; ++k) {
			y[i][k] = x[i][k] + h;
			const double fp = fn(y, ctx);
			y[i][k] = x[i][k] - h;
			const double fm = fn(y, ctx);
			y[i][k] = x[i][k];
			g[i][k] = (fp - fm) / (2 * h);
		}
}

/* The world's particles [first, first + 4) as doubles. */
static inline void tt_get(const pbd_world* w, uint32_t first, double x[4][3]) {
	const pbd_vec3* p = pbd_world_positions(w);
	for (int i = 0; i < 4; ++i) {
		x[i][0] = (double)p[first + (uint32_t)i].x;
		x[i][1] = (double)p[first + (uint32_t)i].y;
		x[i][2] = (double)p[first + (uint32_t)i].z;
	}
}

/* Adds 4 particles at x (rounded to the scalar) with inverse masses iw; gives back the rounded x. */
static inline uint32_t tt_add(pbd_world* w, double x[4][3], const double iw[4]) {
	pbd_vec3 p[4];
	pbd_real inv[4];
	for (int i = 0; i < 4; ++i) {
		p[i] = pbd_v3((pbd_real)x[i][0], (pbd_real)x[i][1], (pbd_real)x[i][2]);
		inv[i] = (pbd_real)iw[i];
		x[i][0] = (double)p[i].x;
		x[i][1] = (double)p[i].y;
		x[i][2] = (double)p[i].z;
	}
	uint32_t first = 0;
	assert_int_equal(pbd_world_add_particles(w, 4, p, NULL, inv, &first), PBD_OK);
	return first;
}

/* A random tetrahedron near the regular one of edge about 1, positively oriented. */
static inline void tt_random_tet(uint64_t* seed, double x[4][3]) {
	static const double base[4][3] = {{0, 0, 0}, {1, 0, 0}, {0.5, 0.866, 0}, {0.5, 0.289, 0.816}};
	for (;;) {
		for (int i = 0; i < 4; ++i)
			for (int k = 0; k < 3; ++k) x[i][k] = base[i][k] + tp_rand_range(seed, -0.25, 0.25) + 0.3;
		if (tt_volume(x) > 0.05) return;
	}
}

/* Total signed volume of the tetrahedra of a world's body, in double. */
static inline double tt_total_volume(const pbd_world* w, const pbd_mesh* m, uint32_t first) {
	const pbd_vec3* p = pbd_world_positions(w);
	double sum = 0;
	for (uint32_t t = 0; t < m->tet_count; ++t) {
		double x[4][3];
		for (int i = 0; i < 4; ++i) {
			const pbd_vec3 v = p[first + m->tets[4 * t + (uint32_t)i]];
			x[i][0] = (double)v.x;
			x[i][1] = (double)v.y;
			x[i][2] = (double)v.z;
		}
		sum += tt_volume(x);
	}
	return sum;
}

/* Total volume of a mesh's tetrahedra at its own positions. */
static inline double tt_mesh_volume(const pbd_mesh* m) {
	double sum = 0;
	for (uint32_t t = 0; t < m->tet_count; ++t) {
		double x[4][3];
		for (int i = 0; i < 4; ++i) {
			const pbd_vec3 v = m->positions[m->tets[4 * t + (uint32_t)i]];
			x[i][0] = (double)v.x;
			x[i][1] = (double)v.y;
			x[i][2] = (double)v.z;
		}
		sum += tt_volume(x);
	}
	return sum;
}

#endif
