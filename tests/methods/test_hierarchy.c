/* The hierarchical solve (src/methods/hierarchy.c): the levels a grid gets, the interpolation weights,
 * pins at every level, what the coarse pass conserves, the strain it removes from a hanging
 * cloth at equal iterations, determinism and snapshots. */
#include <stdio.h>

#include "methods/hierarchy.h"
#include "test_physics.h"
#include "model/world.h"

/* A horizontal n x n cloth of 1 m (both diagonals, optional bend edges), 1 kg in all,
 * pinned at the listed vertices. */
static pbd_world* cloth(const pbd_world_def* def, uint32_t n, bool bend, const uint32_t* pins, uint32_t pin_count) {
	pbd_world* w = test_world(def);
	pbd_mesh m;
	tp_grid(&m, n, n, 1, pbd_v3((pbd_real)-0.5, 0, 0), 2, bend);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.mass_mode = PBD_MASS_TOTAL;
	bd.mass = 1;
	bd.pinned = pins;
	bd.pinned_count = pin_count;
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);
	return w;
}

static bool is_parent(const pbd_hierarchy* h, uint32_t k, uint32_t p) {
	for (uint32_t j = k ? h->par_end[k - 1] : 0; j < h->par_end[k]; ++j)
		if (h->par[j] == p) return true;
	return false;
}

/* Membership of every level: in_level[l][i]. */
static void levels_of(const pbd_hierarchy* h, uint32_t np, uint8_t* in_level) {
	memset(in_level, 0, (size_t)(h->levels + 1) * np);
	for (uint32_t l = 0; l <= h->levels; ++l)
		for (uint32_t k = h->con_end[l > 0 ? l - 1 : 0]; l > 0 && k < h->con_end[l]; ++k) {
			in_level[(size_t)l * np + h->con[k].a] = 1;
			in_level[(size_t)l * np + h->con[k].b] = 1;
		}
}

static void test_grid_levels(void** state) {
	(void)state;
	for (int bend = 0; bend < 2; ++bend) {
		pbd_world_def def = pbd_world_def_default();
		def.hierarchy_levels = 3;
		const uint32_t n = 33, pins[2] = {0, 32};
		pbd_world* w = cloth(&def, n, bend == 1, pins, 2);
		const uint32_t np = pbd_world_particle_count(w);
		pbd_vec3* rest_pos = malloc(np * sizeof *rest_pos);
		memcpy(rest_pos, pbd_world_positions(w), np * sizeof *rest_pos);
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_hierarchy* h = w->hier;
		printf("  33 x 33%s: level sizes %u %u %u %u, coarse constraints %u %u %u\n", bend ? " with bend edges" : "",
		       h->particles[0], h->particles[1], h->particles[2], h->particles[3], h->con_end[1],
		       h->con_end[2] - h->con_end[1], h->con_end[3] - h->con_end[2]);
		/* Every second particle along both directions: 17^2, 9^2, 5^2; bend edges do not count. */
		uint32_t sizes[PBD_HIERARCHY_MAX_LEVELS + 1];
		assert_int_equal(pbd_world_hierarchy_levels(w, sizes), 3);
		assert_int_equal(sizes[3], 25);
		assert_int_equal(h->levels, 3);
		assert_int_equal(h->particles[0], 1089);
		assert_int_equal(h->particles[1], 289);
		assert_int_equal(h->particles[2], 81);
		assert_int_equal(h->particles[3], 25);
		/* Each coarse level is a grid with both diagonals again. */
		const uint32_t side[4] = {33, 17, 9, 5};
		for (uint32_t l = 1; l <= 3; ++l)
			assert_int_equal(h->con_end[l] - h->con_end[l - 1],
			                 2 * side[l] * (side[l] - 1) + 2 * (side[l] - 1) * (side[l] - 1));
		/* The coarse rest lengths are the rest distances: a, the shared fine particle and b lie on a line. */
		for (uint32_t k = 0; k < h->nc; ++k)
			assert_near(h->con[k].rest, tp_dist(rest_pos[h->con[k].a], rest_pos[h->con[k].b]), 1e-6);

		uint8_t* in = malloc(4 * (size_t)np);
		levels_of(h, np, in);
		for (uint32_t l = 1; l <= 3; ++l) {
			uint32_t count = 0;
			for (uint32_t i = 0; i < np; ++i) count += in[(size_t)l * np + i];
			assert_int_equal(count, h->particles[l]);
			/* The constraints of one group share no particle. */
			uint8_t* seen = calloc(np, 1);
			for (int g = 0; g < PBD_GROUP_COUNT - 1; ++g) {
				memset(seen, 0, np);
				const uint32_t first = g ? h->group_end[l][g - 1] : h->con_end[l - 1];
				for (uint32_t k = first; k < h->group_end[l][g]; ++k) {
					assert_false(seen[h->con[k].a] || seen[h->con[k].b]);
					seen[h->con[k].a] = seen[h->con[k].b] = 1;
				}
			}
			free(seen);
		}
		/* Every particle leaving at level l has at least two parents in level l, weights summing to 1. */
		uint32_t leaving = 0;
		for (uint32_t l = 1; l <= h->levels; ++l)
			for (uint32_t k = h->fine_end[l - 1]; k < h->fine_end[l]; ++k) {
				const uint32_t i = h->fine[k], first = k ? h->par_end[k - 1] : 0;
				assert_true(h->par_end[k] - first >= PBD_HIERARCHY_MIN_PARENTS);
				assert_false(in[(size_t)l * np + i]);
				double sum = 0;
				for (uint32_t j = first; j < h->par_end[k]; ++j) {
					assert_true(in[(size_t)l * np + h->par[j]]);
					assert_true(h->weight[j] > 0);
					sum += (double)h->weight[j];
				}
				assert_near(sum, 1, 1e-6);
				leaving++;
			}
		assert_int_equal(leaving, 1089 - 25);
		/* An edge particle between two coarse ones weighs them equally; a cell centre its four corners. */
		for (uint32_t k = 0; k < h->fine_end[1]; ++k) {
			if (h->fine[k] == 1) {
				assert_true(is_parent(h, k, 0) && is_parent(h, k, 2));
				assert_near(h->weight[h->par_end[k] - 1], 0.5, 1e-7);
			}
			if (h->fine[k] == n + 1) {
				assert_true(is_parent(h, k, 0) && is_parent(h, k, 2) && is_parent(h, k, 2 * n) &&
				            is_parent(h, k, 2 * n + 2));
				assert_near(h->weight[h->par_end[k] - 1], 0.25, 1e-7);
			}
		}
		free(in);
		free(rest_pos);
		pbd_world_destroy(w);
	}
}

/* A rope halves per level; more levels than a small grid can have stop where coarsening does. */
static void test_rope_and_small_worlds(void** state) {
	(void)state;
	pbd_world_def def = pbd_world_def_default();
	def.hierarchy_levels = PBD_HIERARCHY_MAX_LEVELS;
	pbd_world* w = test_world(&def);
	pbd_rope_def rd = pbd_rope_def_default();
	rd.segments = 32;
	rd.end = pbd_v3(1, 0, 0);
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(pbd_mesh_rope(&rd, &m, &err), PBD_OK);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	const uint32_t pin = 0;
	bd.pinned = &pin;
	bd.pinned_count = 1;
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);
	for (int s = 0; s < 30; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_hierarchy* h = w->hier;
	printf("  rope of 33: %u levels:", h->levels);
	for (uint32_t l = 0; l <= h->levels; ++l) printf(" %u", h->particles[l]);
	printf("\n");
	assert_int_equal(h->particles[0], 33);
	assert_int_equal(h->particles[1], 17);
	assert_true(h->levels >= 3 && h->levels < PBD_HIERARCHY_MAX_LEVELS);
	for (uint32_t l = 1; l <= h->levels; ++l) assert_true(h->particles[l] < h->particles[l - 1]);
	assert_true(pbd_world_positions(w)[0].x == 0 && pbd_world_positions(w)[0].y == 0);
	assert_true(tp_all_finite(w));
	pbd_world_destroy(w);

	/* No constraints at all, two particles on one edge, a zero-length edge: nothing breaks. */
	w = test_world(&def);
	const pbd_vec3 p[3] = {{0, 0, 0}, {1, 0, 0}, {1, 0, 0}};
	const pbd_real iw[3] = {1, 1, 1};
	assert_int_equal(pbd_world_add_particles(w, 3, p, NULL, iw, NULL), PBD_OK);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_int_equal(w->hier->levels, 0);
	pbd_distance_def d = pbd_distance_def_default();
	d.a = 1;
	d.b = 2;
	assert_int_equal(pbd_world_add_distances(w, 1, &d, NULL), PBD_OK);
	d.a = 0;
	d.b = 2;
	assert_int_equal(pbd_world_add_distances(w, 1, &d, NULL), PBD_OK);
	for (int s = 0; s < 10; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_true(tp_all_finite(w));
	pbd_world_destroy(w);

	/* Out-of-range settings are refused, naming the field. */
	char msg[256] = "";
	pbd_world_def bad = pbd_world_def_default();
	bad.log = test_log_keep;
	bad.log_user = msg;
	bad.hierarchy_levels = PBD_HIERARCHY_MAX_LEVELS + 1;
	pbd_world* none = NULL;
	assert_int_equal(pbd_world_create(&bad, &none), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "hierarchy_levels"));
	bad.hierarchy_levels = 2;
	bad.hierarchy_iterations = 0;
	assert_int_equal(pbd_world_create(&bad, &none), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "hierarchy_iterations"));
	w = test_world(NULL);
	assert_int_equal(pbd_world_set_hierarchy(w, 3, 2), PBD_OK);
	assert_int_equal(pbd_world_get_def(w).hierarchy_levels, 3);
	pbd_world_destroy(w);
}

/* Pins hold at every level, under both solvers and formulations, also a pin where the coarse
 * selection would not have put a coarse particle, one pinned mid-run and one moved by a target. */
static void test_pins_never_move(void** state) {
	(void)state;
	for (int s = 0; s < 2; ++s)
		for (int f = 0; f < 2; ++f) {
			pbd_world_def def = pbd_world_def_default();
			def.solver = s ? PBD_SOLVER_JACOBI : PBD_SOLVER_GAUSS_SEIDEL;
			def.formulation = f ? PBD_FORMULATION_XPBD : PBD_FORMULATION_PBD;
			def.hierarchy_levels = 3;
			def.hierarchy_iterations = 3;
			def.iterations = 4;
			const uint32_t n = 20, pins[3] = {0, 19, 5 * 20 + 7};
			pbd_world* w = cloth(&def, n, false, pins, 3);
			const uint32_t np = pbd_world_particle_count(w);
			pbd_vec3 at[3];
			for (int k = 0; k < 3; ++k) at[k] = pbd_world_positions(w)[pins[k]];
			for (int step = 0; step < 60; ++step) {
				if (step == 20) assert_int_equal(pbd_particle_pin(w, 13), PBD_OK);
				const pbd_vec3 pin13 = pbd_world_positions(w)[13];
				if (step >= 30)
					assert_int_equal(pbd_particle_set_target(w, 19, pbd_v3((pbd_real)0.5, 0, (pbd_real)(0.01 * step))),
					                 PBD_OK);
				assert_int_equal(pbd_world_step(w), PBD_OK);
				for (int k = 0; k < 3; ++k)
					if (k != 1 || step < 30)
						assert_memory_equal(&pbd_world_positions(w)[pins[k]], &at[k], sizeof at[k]);
				if (step >= 20) assert_memory_equal(&pbd_world_positions(w)[13], &pin13, sizeof pin13);
				if (step >= 30) assert_near(pbd_world_positions(w)[19].z, 0.01 * step, 1e-6);
			}
			/* Every pin is in every level. */
			const pbd_hierarchy* h = w->hier;
			assert_int_equal(h->levels, 3);
			uint8_t* in = malloc(4 * (size_t)np);
			levels_of(h, np, in);
			const uint32_t all[4] = {pins[0], pins[1], pins[2], 13};
			for (uint32_t l = 1; l <= 3; ++l)
				for (int k = 0; k < 4; ++k) assert_true(in[(size_t)l * np + all[k]]);
			free(in);
			assert_true(tp_all_finite(w));
			pbd_world_destroy(w);
		}
}

/* The coarse pass alone, on a free cloth of unequal masses stretched at random: it keeps the
 * linear momentum (aggregated masses and the interpolation weights agree), and lowers the
 * stretch it can see. Angular momentum is not kept: an interpolated displacement is not a
 * rotation of the fine particle about the parents' centre; the drift is printed. */
static void test_coarse_pass_momentum(void** state) {
	(void)state;
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, 0, 0);
	def.hierarchy_levels = 3;
	def.hierarchy_iterations = 4;
	pbd_world* w = cloth(&def, 24, true, NULL, 0);
	const uint32_t np = pbd_world_particle_count(w);
	uint64_t seed = 11;
	for (uint32_t i = 0; i < np; ++i)
		assert_int_equal(pbd_particle_set_inv_mass(w, i, (pbd_real)tp_rand_range(&seed, 0.2, 5.0) * (pbd_real)np),
		                 PBD_OK);
	assert_int_equal(pbd_world_step(w), PBD_OK); /* builds the levels */
	assert_true(w->hier->valid && w->hier->levels == 3);
	/* Displacements that stretch the cloth by up to 30 %: every coarse level is active. */
	for (uint32_t i = 0; i < np; ++i) {
		const pbd_vec3 x = w->x[i];
		w->q[i] = pbd_v3((pbd_real)(0.3 * (double)x.x + tp_rand_range(&seed, -0.01, 0.01)),
		                 (pbd_real)tp_rand_range(&seed, -0.01, 0.01),
		                 (pbd_real)(0.25 * (double)x.z + tp_rand_range(&seed, -0.01, 0.01)));
	}
	pbd_vec3* before = malloc(np * sizeof *before);
	memcpy(before, w->q, np * sizeof *before);
	double stretch0 = 0, stretch1 = 0;
	const pbd_hierarchy* h = w->hier;
	for (uint32_t k = 0; k < h->nc; ++k) {
		const pbd_coarse_c* c = &h->con[k];
		const double len = tp_dist(pbd_v3_add(w->x[c->a], before[c->a]), pbd_v3_add(w->x[c->b], before[c->b]));
		stretch0 += fmax(0, len - (double)c->rest);
	}
	pbd_step_ctx ctx;
	pbd_step_ctx_init(w, def.dt, &ctx);
	pbd_hierarchy_solve(w, &ctx);
	tp_dvec3 p = {0, 0, 0}, L = {0, 0, 0};
	double scale = 0, lscale = 0;
	for (uint32_t i = 0; i < np; ++i) {
		const double m = 1 / (double)w->w[i];
		const tp_dvec3 d = tp_d(pbd_v3_sub(w->q[i], before[i]));
		const tp_dvec3 r = tp_d(pbd_v3_add(w->x[i], before[i]));
		p.x += m * d.x;
		p.y += m * d.y;
		p.z += m * d.z;
		scale += m * tp_dlen(d);
		L.x += m * (r.y * d.z - r.z * d.y);
		L.y += m * (r.z * d.x - r.x * d.z);
		L.z += m * (r.x * d.y - r.y * d.x);
		lscale += m * tp_dlen(r) * tp_dlen(d);
	}
	for (uint32_t k = 0; k < h->nc; ++k) {
		const pbd_coarse_c* c = &h->con[k];
		const double len = tp_dist(pbd_v3_add(w->x[c->a], w->q[c->a]), pbd_v3_add(w->x[c->b], w->q[c->b]));
		stretch1 += fmax(0, len - (double)c->rest);
	}
	printf("  coarse pass: |sum m dx| / sum m |dx| = %.2e, |sum m x X dx| / sum m |x||dx| = %.2e, coarse stretch "
	       "%.4g -> %.4g m\n",
	       tp_dlen(p) / scale, tp_dlen(L) / lscale, stretch0, stretch1);
	assert_true(scale > 0);
	assert_true(tp_dlen(p) <= TEST_TOL(1e-12, 2e-6) * scale);
	assert_true(stretch1 < 0.5 * stretch0);
	free(before);
	pbd_world_destroy(w);
}

/* The hanging cloth: 64 x 64, structural and shear links, pinned at two corners, 1 m, PBD,
 * 1 substep, 2 s, 10 iterations per substep in all (a coarse sweep counts as one). Returns the
 * mean structural strain at 2 s and its average over the second second. Without the hierarchy
 * the cloth breathes: its strain swings between about 0.05 and 0.5 with a period near 2 s, and
 * 2 s falls near a low. */
static double hanging_strain(int levels, int coarse_iterations, int fine_iterations, double* average, uint64_t* hash) {
	pbd_world_def def = pbd_world_def_default();
	def.iterations = fine_iterations;
	def.hierarchy_levels = levels;
	def.hierarchy_iterations = coarse_iterations;
	def.divergence_strain = 0; /* the plain solver leaves edges stretched past 10 near the pins */
	const uint32_t pins[2] = {0, 63};
	pbd_world* w = cloth(&def, 64, false, pins, 2);
	pbd_stats st;
	double sum = 0;
	for (int s = 1; s <= 120; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		pbd_world_get_stats(w, &st);
		if (s > 60) sum += st.edge_mean_strain[PBD_EDGE_STRUCTURAL];
	}
	assert_true(tp_all_finite(w));
	if (average) *average = sum / 60;
	if (hash) *hash = pbd_world_hash(w);
	pbd_world_destroy(w);
	return st.edge_mean_strain[PBD_EDGE_STRUCTURAL];
}

static void test_hanging_cloth_strain(void** state) {
	(void)state;
	double avg_plain, avg_h5, avg_h4;
	const double plain = hanging_strain(0, 1, 10, &avg_plain, NULL);
	const double h5 = hanging_strain(5, 1, 5, &avg_h5, NULL);
	const double h4 = hanging_strain(4, 1, 6, &avg_h4, NULL);
	printf("  64 x 64 hanging cloth, 10 sweeps per substep: mean structural strain at 2 s (average over 1-2 s)\n"
	       "    plain 10 iterations             %.4f (%.4f)\n"
	       "    5 levels x 1 + 5 fine iterations %.4f (%.4f), %.1f (%.1f) times lower\n"
	       "    4 levels x 1 + 6 fine iterations %.4f (%.4f), %.1f (%.1f) times lower\n",
	       plain, avg_plain, h5, avg_h5, plain / h5, avg_plain / avg_h5, h4, avg_h4, plain / h4, avg_plain / avg_h4);
	assert_true(3 * h5 < plain);
	assert_true(10 * avg_h5 < avg_plain);
	assert_true(2 * h4 < plain);
	uint64_t a, b;
	hanging_strain(5, 1, 5, NULL, &a);
	hanging_strain(5, 1, 5, NULL, &b);
	assert_true(a == b);
}

/* The coarse levels get the sweeps: level l runs min(2^(l-1), hierarchy_iterations), so the
 * finest coarse level costs one sweep, and raising the cap spends the sweeps where a correction
 * crosses the cloth and lowers the strain the hanging cloth keeps. */
static void test_sweep_schedule(void** state) {
	(void)state;
	const int capped8[6] = {1, 2, 4, 8, 8, 8}, capped3[4] = {1, 2, 3, 3};
	for (uint32_t l = 1; l <= 6; ++l) assert_int_equal(pbd_hierarchy_sweeps(l, 8), capped8[l - 1]);
	for (uint32_t l = 1; l <= 4; ++l) assert_int_equal(pbd_hierarchy_sweeps(l, 3), capped3[l - 1]);
	assert_int_equal(pbd_hierarchy_sweeps(PBD_HIERARCHY_MAX_LEVELS, 10000), 10000);
	double avg1, avg8;
	const double s1 = hanging_strain(5, 1, 5, &avg1, NULL);
	const double s8 = hanging_strain(5, 8, 5, &avg8, NULL);
	printf("  64 x 64 hanging cloth, 5 levels + 5 fine iterations: mean structural strain at 2 s (average over "
	       "1-2 s)\n    one sweep per level %.4f (%.4f), up to 8 sweeps %.4f (%.4f)\n",
	       s1, avg1, s8, avg8);
	assert_true(avg8 < 0.8 * avg1);
}

/* A cloth from an irregular triangle mesh (a jittered grid, diagonals at random), hanging from two
 * corners: the levels shrink, every fine particle has at least two parents with weights summing
 * to 1, and at equal sweeps the hierarchy leaves less stretch. Returns the mean structural strain
 * averaged over the second second. */
static double mesh_cloth(int levels, int fine_iterations, bool curved, uint32_t* sizes, uint32_t* built,
                         double* rest_error) {
	enum { N = 40 };
	pbd_vec3 pos[N * N];
	uint32_t tri[2 * (N - 1) * (N - 1) * 3];
	uint64_t seed = 3;
	const double h = 1.0 / (N - 1);
	for (uint32_t j = 0; j < N; ++j)
		for (uint32_t i = 0; i < N; ++i) {
			const bool inner = i > 0 && j > 0 && i < N - 1 && j < N - 1;
			const double dx = inner ? tp_rand_range(&seed, -0.3, 0.3) * h : 0,
			             dz = inner ? tp_rand_range(&seed, -0.3, 0.3) * h : 0;
			const double x = i * h - 0.5 + dx, z = j * h + dz;
			/* curved: a bowl, which no flat layout reproduces */
			pos[j * N + i] =
			    pbd_v3((pbd_real)x, curved ? (pbd_real)(0.4 * (x * x + (z - 0.5) * (z - 0.5))) : 0, (pbd_real)z);
		}
	uint32_t nt = 0;
	for (uint32_t j = 0; j + 1 < N; ++j)
		for (uint32_t i = 0; i + 1 < N; ++i) {
			const uint32_t a = j * N + i, b = a + 1, c = a + N, d = c + 1;
			const uint32_t t[2][3] = {{a, c, b}, {b, c, d}}, u[2][3] = {{a, c, d}, {a, d, b}};
			const bool flip = tp_rand(&seed) < 0.5;
			for (int k = 0; k < 2; ++k)
				for (int m = 0; m < 3; ++m) tri[3 * nt + (uint32_t)(3 * k + m)] = flip ? u[k][m] : t[k][m];
			nt += 2;
		}
	pbd_mesh mesh;
	pbd_error err;
	assert_int_equal(pbd_mesh_from_triangles(N * N, pos, nt, tri, true, &mesh, &err), PBD_OK);
	pbd_world_def def = pbd_world_def_default();
	def.iterations = fine_iterations;
	def.hierarchy_levels = levels;
	def.hierarchy_iterations = 1;
	def.divergence_strain = 0;
	pbd_world* w = test_world(&def);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &mesh;
	bd.mass_mode = PBD_MASS_TOTAL;
	bd.mass = 1;
	const uint32_t pins[2] = {0, N - 1};
	bd.pinned = pins;
	bd.pinned_count = 2;
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&mesh);
	double sum = 0;
	for (int s = 1; s <= 120; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		pbd_stats st;
		pbd_world_get_stats(w, &st);
		if (s > 60) sum += st.edge_mean_strain[PBD_EDGE_STRUCTURAL];
		assert_memory_equal(&pbd_world_positions(w)[0], &pos[0], sizeof pos[0]);
		assert_memory_equal(&pbd_world_positions(w)[N - 1], &pos[N - 1], sizeof pos[0]);
	}
	*built = pbd_world_hierarchy_levels(w, sizes);
	const pbd_hierarchy* hi = w->hier;
	/* The coarse rest lengths are the rest shape's distances on a flat mesh and never shorter
	 * than them on a curved one: a coarse constraint asks nothing the fine ones do not imply. */
	for (uint32_t l = 1; l <= hi->levels && rest_error; ++l) {
		double worst = 0, total = 0;
		for (uint32_t k = hi->con_end[l - 1]; k < hi->con_end[l]; ++k) {
			const double e = tp_dist(pos[hi->con[k].a], pos[hi->con[k].b]);
			const double rel = ((double)hi->con[k].rest - e) / e;
			assert_true(rel > -1e-5);
			if (!curved) assert_true(rel < 1e-5);
			if (rel > worst) worst = rel;
			total += rel;
		}
		rest_error[l] = total / (hi->con_end[l] - hi->con_end[l - 1]);
	}
	for (uint32_t k = 0; k < hi->nf; ++k) {
		const uint32_t first = k ? hi->par_end[k - 1] : 0;
		assert_true(hi->par_end[k] - first >= PBD_HIERARCHY_MIN_PARENTS);
		double wsum = 0;
		for (uint32_t j = first; j < hi->par_end[k]; ++j) wsum += (double)hi->weight[j];
		assert_near(wsum, 1, 1e-6);
	}
	assert_true(tp_all_finite(w));
	pbd_world_destroy(w);
	return sum / 60;
}

static void test_triangle_mesh_cloth(void** state) {
	(void)state;
	uint32_t sizes[PBD_HIERARCHY_MAX_LEVELS + 1], built = 0;
	double rest_error[PBD_HIERARCHY_MAX_LEVELS + 1];
	for (int curved = 0; curved < 2; ++curved) {
		const double plain = mesh_cloth(0, 10, curved, sizes, &built, NULL);
		assert_int_equal(built, 0);
		const double hier = mesh_cloth(PBD_HIERARCHY_MAX_LEVELS, 5, curved, sizes, &built, rest_error);
		printf("  irregular 40 x 40 triangle mesh, %s: levels", curved ? "curved" : "flat");
		for (uint32_t l = 0; l <= built; ++l) printf(" %u", sizes[l]);
		printf("\n    coarse rest lengths longer than the rest shape's distances by");
		for (uint32_t l = 1; l <= built; ++l) printf(" %.2f%%", 100 * rest_error[l]);
		printf(" on average per level\n    mean structural strain over 1-2 s at 10 sweeps per substep: %.4f plain, "
		       "%.4f with %u levels x 1 + 5 fine (%.1f times lower)\n",
		       plain, hier, built, plain / hier);
		assert_int_equal(sizes[0], 1600);
		assert_true(built >= 4);
		for (uint32_t l = 1; l <= built; ++l) assert_true(sizes[l] < sizes[l - 1]);
		assert_true(sizes[1] < 1600 / 2);
		if (!curved) assert_true(hier * 4 < plain);
	}
}

/* XPBD: the coarse pass moves positions without touching the fine multipliers, so it changes
 * where the iterations start and, for compliant links, also where they end: XPBD's fixed point
 * has x - x~ = M^-1 grad C lambda, and the coarse displacement is an offset outside that sum.
 * Hard links (compliance 0) converge to the same cloth; compliant ones hang stiffer. */
static void xpbd_hang(bool hierarchy, pbd_real compliance, double* strain, double* low_y) {
	pbd_world_def def = pbd_world_def_default();
	def.formulation = PBD_FORMULATION_XPBD;
	def.substeps = 4;
	def.iterations = 150;
	def.damping = (pbd_real)0.9;
	def.hierarchy_levels = hierarchy ? 2 : 0;
	pbd_world* w = test_world(&def);
	pbd_mesh m;
	tp_grid(&m, 10, 10, 1, pbd_v3(0, 0, 0), 2, false);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.mass_mode = PBD_MASS_TOTAL;
	bd.mass = 1;
	for (int e = 0; e < PBD_EDGE_KIND_COUNT; ++e) {
		bd.material[e].compliance_stretch = compliance;
		bd.material[e].compliance_compress = compliance;
	}
	const uint32_t pins[2] = {0, 9};
	bd.pinned = pins;
	bd.pinned_count = 2;
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);
	for (int s = 0; s < 240; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	*strain = st.edge_mean_strain[PBD_EDGE_STRUCTURAL];
	*low_y = (double)pbd_world_positions(w)[95].y;
	assert_true(tp_all_finite(w));
	pbd_world_destroy(w);
}

static void test_xpbd_interplay(void** state) {
	(void)state;
	double s0, s1, y0, y1;
	xpbd_hang(false, 0, &s0, &y0);
	xpbd_hang(true, 0, &s1, &y1);
	printf("  XPBD hard links, converged: mean structural strain %.2e without, %.2e with the hierarchy; lowest "
	       "edge middle at y %.5f / %.5f\n",
	       s0, s1, y0, y1);
	assert_true(s0 < 1e-4 && s1 < 1e-4);
	assert_near(y1, y0, 1e-3);
	xpbd_hang(false, (pbd_real)2e-3, &s0, &y0);
	xpbd_hang(true, (pbd_real)2e-3, &s1, &y1);
	printf("  XPBD compliance 2e-3 m/N: mean structural strain %.5f without, %.5f with the hierarchy; lowest edge "
	       "middle at y %.5f / %.5f\n",
	       s0, s1, y0, y1);
	assert_true(s1 < 0.5 * s0); /* the documented stiffening */
}

/* A snapshot taken mid-run resumes bit-identically: the levels are built again on load from
 * constraints, pins and masses alone. Also across a pin, a mass change and a moving target. */
static void test_snapshot_resume(void** state) {
	(void)state;
	for (int s = 0; s < 2; ++s)
		for (int f = 0; f < 2; ++f) {
			pbd_world_def def = pbd_world_def_default();
			def.solver = s ? PBD_SOLVER_JACOBI : PBD_SOLVER_GAUSS_SEIDEL;
			def.formulation = f ? PBD_FORMULATION_XPBD : PBD_FORMULATION_PBD;
			def.substeps = 2;
			def.iterations = 3;
			def.hierarchy_levels = 2;
			def.hierarchy_iterations = 2;
			const uint32_t pins[2] = {0, 15};
			pbd_world* a = cloth(&def, 16, true, pins, 2);
			assert_int_equal(pbd_particle_set_inv_mass(a, 100, (pbd_real)100), PBD_OK);
			for (int k = 0; k < 25; ++k) assert_int_equal(pbd_world_step(a), PBD_OK);
			size_t size = 0;
			assert_int_equal(pbd_world_save_memory(a, NULL, 0, &size), PBD_OK);
			void* mem = malloc(size);
			assert_int_equal(pbd_world_save_memory(a, mem, size, &size), PBD_OK);
			pbd_world_def hooks = pbd_world_def_default();
			hooks.log = test_log_fail;
			pbd_world* b = NULL;
			pbd_error err;
			assert_int_equal(pbd_world_load_memory(mem, size, &hooks, &b, &err), PBD_OK);
			free(mem);
			assert_int_equal(pbd_world_get_def(b).hierarchy_levels, 2);
			assert_int_equal(pbd_world_get_def(b).hierarchy_iterations, 2);
			pbd_world* both[2] = {a, b};
			for (int k = 0; k < 40; ++k)
				for (int i = 0; i < 2; ++i) {
					if (k == 10) assert_int_equal(pbd_particle_pin(both[i], 200), PBD_OK);
					if (k == 20) assert_int_equal(pbd_particle_set_inv_mass(both[i], 40, (pbd_real)50), PBD_OK);
					if (k >= 5)
						assert_int_equal(
						    pbd_particle_set_target(both[i], 15, pbd_v3((pbd_real)0.5, (pbd_real)(0.01 * k), 0)),
						    PBD_OK);
					assert_int_equal(pbd_world_step(both[i]), PBD_OK);
				}
			assert_true(pbd_world_hash(a) == pbd_world_hash(b));
			assert_true(tp_all_finite(a));
			pbd_world_destroy(a);
			pbd_world_destroy(b);
		}
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_grid_levels),          cmocka_unit_test(test_rope_and_small_worlds),
	    cmocka_unit_test(test_pins_never_move),      cmocka_unit_test(test_coarse_pass_momentum),
	    cmocka_unit_test(test_hanging_cloth_strain), cmocka_unit_test(test_sweep_schedule),
	    cmocka_unit_test(test_triangle_mesh_cloth),  cmocka_unit_test(test_xpbd_interplay),
	    cmocka_unit_test(test_snapshot_resume),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
