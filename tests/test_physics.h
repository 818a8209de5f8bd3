/* Header-only helpers of the physics tests: double-precision measurements of a world's state
 * (independent of the library's own diagnostics, so a wrong pbd_stats cannot hide a wrong
 * solver), a fixed pseudo-random sequence and small world builders. */
#ifndef PBD_TEST_PHYSICS_H
#define PBD_TEST_PHYSICS_H

#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "test_util.h"

#define TP_PI 3.14159265358979323846

typedef struct tp_dvec3 {
	double x, y, z;
} tp_dvec3;

static inline tp_dvec3 tp_d(pbd_vec3 v) {
	tp_dvec3 r = {(double)v.x, (double)v.y, (double)v.z};
	return r;
}

static inline double tp_dist(pbd_vec3 a, pbd_vec3 b) {
	const double dx = (double)a.x - (double)b.x, dy = (double)a.y - (double)b.y, dz = (double)a.z - (double)b.z;
	return sqrt(dx * dx + dy * dy + dz * dz);
}

static inline double tp_len(pbd_vec3 a) {
	return sqrt((double)a.x * (double)a.x + (double)a.y * (double)a.y + (double)a.z * (double)a.z);
}

/* Fixed linear congruential sequence (Knuth MMIX): the same numbers on every platform, so the
 * "random" scenes are reproducible and a failure can be replayed. Returns [0, 1). */
static inline double tp_rand(uint64_t* state) {
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(*state >> 11) * (1.0 / 9007199254740992.0);
}

static inline double tp_rand_range(uint64_t* state, double lo, double hi) { return lo + (hi - lo) * tp_rand(state); }

/* Max |C| = | |x_a - x_b| - rest | over every distance constraint, in double. */
static inline double tp_max_violation(const pbd_world* w) {
	const pbd_vec3* x = pbd_world_positions(w);
	double worst = 0;
	for (uint32_t k = 0, n = pbd_world_distance_count(w); k < n; ++k) {
		pbd_distance_def d;
		assert_int_equal(pbd_world_get_distance(w, k, &d), PBD_OK);
		const double c = fabs(tp_dist(x[d.a], x[d.b]) - (double)d.rest);
		if (c > worst) worst = c;
	}
	return worst;
}

/* Mass-weighted centre of mass of the particles with finite mass. */
static inline tp_dvec3 tp_center_of_mass(const pbd_world* w) {
	const pbd_vec3* x = pbd_world_positions(w);
	const pbd_real* iw = pbd_world_inv_masses(w);
	tp_dvec3 c = {0, 0, 0};
	double m = 0;
	for (uint32_t i = 0, n = pbd_world_particle_count(w); i < n; ++i) {
		if (!(iw[i] > 0)) continue;
		const double mi = 1.0 / (double)iw[i];
		c.x += mi * (double)x[i].x;
		c.y += mi * (double)x[i].y;
		c.z += mi * (double)x[i].z;
		m += mi;
	}
	c.x /= m;
	c.y /= m;
	c.z /= m;
	return c;
}

/* Linear momentum sum m v over the particles with finite mass. */
static inline tp_dvec3 tp_momentum(const pbd_world* w) {
	const pbd_vec3* v = pbd_world_velocities(w);
	const pbd_real* iw = pbd_world_inv_masses(w);
	tp_dvec3 p = {0, 0, 0};
	for (uint32_t i = 0, n = pbd_world_particle_count(w); i < n; ++i) {
		if (!(iw[i] > 0)) continue;
		const double mi = 1.0 / (double)iw[i];
		p.x += mi * (double)v[i].x;
		p.y += mi * (double)v[i].y;
		p.z += mi * (double)v[i].z;
	}
	return p;
}

static inline double tp_dlen(tp_dvec3 a) { return sqrt(a.x * a.x + a.y * a.y + a.z * a.z); }
static inline tp_dvec3 tp_dsub(tp_dvec3 a, tp_dvec3 b) {
	tp_dvec3 r = {a.x - b.x, a.y - b.y, a.z - b.z};
	return r;
}

/* True when every position and velocity of the world is finite. */
static inline bool tp_all_finite(const pbd_world* w) {
	const pbd_vec3* x = pbd_world_positions(w);
	const pbd_vec3* v = pbd_world_velocities(w);
	for (uint32_t i = 0, n = pbd_world_particle_count(w); i < n; ++i)
		if (!pbd_v3_is_finite(x[i]) || !pbd_v3_is_finite(v[i])) return false;
	return true;
}

/* A world with gravity g, `substeps` of `iterations`, whose log lines go to msg
 * (test_log_keep): a test asserts msg is still empty at its end. */
static inline pbd_world* tp_world_logged(char* msg, pbd_vec3 g, int substeps, int iterations) {
	pbd_world_def def = pbd_world_def_default();
	def.gravity = g;
	def.substeps = substeps;
	def.iterations = iterations;
	def.log = test_log_keep;
	def.log_user = msg;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	return w;
}

/* A grid mesh of nx x ny vertices spanning size x size in the xz plane at height y. */
static inline void tp_grid(pbd_mesh* m, uint32_t nx, uint32_t ny, pbd_real size, pbd_vec3 origin, int diagonals,
                           bool bend) {
	pbd_grid_def gd = pbd_grid_def_default();
	gd.nx = nx;
	gd.ny = ny;
	gd.size_u = size;
	gd.size_v = size;
	gd.origin = origin;
	gd.diagonals = diagonals;
	gd.bend = bend;
	pbd_error err;
	assert_int_equal(pbd_mesh_grid(&gd, m, &err), PBD_OK);
}

/* Moves every vertex of a builder-made mesh by a pseudo-random offset in [-amp, amp] per axis
 * while keeping the unperturbed lengths as the edges' rest lengths, so a body made from it
 * starts violating its constraints. pbd_mesh_free releases the rest lengths with the mesh. */
static inline void tp_perturb_keeping_rest(pbd_mesh* m, uint64_t seed, double amp) {
	pbd_real* rest = (pbd_real*)malloc(m->edge_count * sizeof *rest);
	assert_non_null(rest);
	for (uint32_t e = 0; e < m->edge_count; ++e)
		rest[e] = pbd_v3_length(pbd_v3_sub(m->positions[m->edges[2 * e]], m->positions[m->edges[2 * e + 1]]));
	for (uint32_t i = 0; i < m->vertex_count; ++i)
		m->positions[i] = pbd_v3_add(m->positions[i], pbd_v3((pbd_real)tp_rand_range(&seed, -amp, amp),
		                                                     (pbd_real)tp_rand_range(&seed, -amp, amp),
		                                                     (pbd_real)tp_rand_range(&seed, -amp, amp)));
	m->edge_rest = rest;
}

/* Period of a pendulum bob (particle 1) from the zero crossings of its x relative to the
 * pivot's, over `periods` expected periods T; at least `min_crossings` must occur. */
static inline double tp_period(pbd_world* w, double pivot_x, double T, double periods, int min_crossings) {
	const double dt = (double)pbd_world_get_def(w).dt;
	const int steps = (int)(periods * T / dt);
	double prev = (double)pbd_world_positions(w)[1].x - pivot_x, t_prev = 0, first = -1, last = -1;
	int crossings = 0;
	for (int s = 1; s <= steps; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const double x = (double)pbd_world_positions(w)[1].x - pivot_x, t = s * dt;
		if ((prev > 0) != (x > 0)) {
			const double tc = t_prev + (t - t_prev) * prev / (prev - x);
			if (crossings == 0) first = tc;
			last = tc;
			crossings++;
		}
		prev = x;
		t_prev = t;
	}
	assert_true(crossings >= min_crossings);
	return 2 * (last - first) / (crossings - 1);
}

#endif
