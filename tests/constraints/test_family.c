/* Constraint families and their partition: every group holds constraints that share no
 * particle (across families too), every constraint sits in exactly one group, the maps between
 * the order of addition and storage are inverse permutations, the result of a group does not
 * depend on how its range is split or ordered, and the diagnostics per family and per edge kind
 * are the ones computed by hand. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_physics.h"
#include "constraints/distance.h"
#include "test_util.h"
#include "model/world.h"

/* A grid cloth with both diagonals and bend edges, perturbed so that every constraint has work. */
static pbd_world* cloth_world(uint32_t n, pbd_formulation formulation) {
	pbd_world_def def = pbd_world_def_default();
	def.formulation = formulation;
	pbd_world* w = test_world(&def);
	pbd_mesh m;
	tp_grid(&m, n, n, 1, pbd_v3(0, 0, 0), 2, true);
	tp_perturb_keeping_rest(&m, 7, 0.01);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	pbd_soft_info body;
	assert_int_equal(test_soft_create(w, &bd, &body), PBD_OK);
	pbd_mesh_free(&m);
	return w;
}

static void test_groups_are_independent(void** state) {
	(void)state;
	pbd_world* w = cloth_world(17, PBD_FORMULATION_PBD);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_true(w->partitioned);
	const uint32_t np = w->np;
	uint32_t* owner = malloc(np * sizeof *owner);
	uint32_t colours = 0;
	for (int g = 0; g < PBD_PARTITION_COLOURS; ++g) {
		for (uint32_t i = 0; i < np; ++i) owner[i] = UINT32_MAX;
		bool any = false;
		for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
			const pbd_family* f = &w->fam[t];
			const uint32_t first = g ? f->group_end[g - 1] : 0;
			for (uint32_t k = first; k < f->group_end[g]; ++k) {
				uint32_t p[PBD_FAMILY_MAX_ARITY];
				const uint32_t n = pbd_family_table[t]->particles(f, k, 0, p, PBD_FAMILY_MAX_ARITY);
				assert_true(n <= PBD_FAMILY_MAX_ARITY);
				for (uint32_t i = 0; i < n; ++i) {
					assert_int_equal(owner[p[i]], UINT32_MAX); /* no particle twice in a group */
					owner[p[i]] = k;
				}
				any = true;
			}
		}
		colours += any ? 1u : 0u;
	}
	/* A grid with both diagonals and bend edges: 12 colours, nothing left over. */
	assert_int_equal(colours, 12);
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		const pbd_family* f = &w->fam[t];
		assert_int_equal(f->group_end[PBD_GROUP_COUNT - 1], f->n);
		assert_int_equal(f->group_end[PBD_GROUP_COUNT - 2], f->n); /* empty overflow group */
		for (int g = 1; g < PBD_GROUP_COUNT; ++g) assert_true(f->group_end[g - 1] <= f->group_end[g]);
		for (uint32_t u = 0; u < f->n; ++u) assert_int_equal(f->user[f->slot[u]], u);
	}
	/* The API still speaks the order of addition. */
	pbd_distance_def d;
	assert_int_equal(pbd_world_get_distance(w, 0, &d), PBD_OK);
	assert_int_equal(d.a, 0);
	assert_int_equal(d.b, 1);
	free(owner);
	pbd_world_destroy(w);
}

/* A high-degree particle (a fan of 100 edges) runs out of the 64 colours: the rest go to the
 * last group, and the world still converges. */
static void test_overflow_group(void** state) {
	(void)state;
	pbd_world* w = test_world(NULL);
	enum { N = 101 };
	pbd_vec3 x[N];
	pbd_real iw[N];
	for (int i = 0; i < N; ++i) {
		const double a = 2 * TP_PI * i / (N - 1);
		x[i] = i == 0 ? pbd_v3(0, 0, 0) : pbd_v3((pbd_real)cos(a), 0, (pbd_real)sin(a));
		iw[i] = i == 0 ? 0 : 1;
	}
	assert_int_equal(pbd_world_add_particles(w, N, x, NULL, iw, NULL), PBD_OK);
	pbd_distance_def dd[N - 1];
	for (int i = 1; i < N; ++i) {
		dd[i - 1] = pbd_distance_def_default();
		dd[i - 1].a = 0;
		dd[i - 1].b = (uint32_t)i;
	}
	assert_int_equal(pbd_world_add_distances(w, N - 1, dd, NULL), PBD_OK);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_family* f = &w->fam[PBD_FAMILY_DISTANCE];
	assert_int_equal(f->group_end[PBD_PARTITION_COLOURS - 1], 64);
	assert_int_equal(f->group_end[PBD_GROUP_COUNT - 1] - f->group_end[PBD_GROUP_COUNT - 2], N - 1 - 64);
	for (int s = 0; s < 100; ++s) pbd_world_step(w);
	assert_true(tp_max_violation(w) < 1e-4);
	pbd_world_destroy(w);
}

/* Projecting a group's range whole, in two halves in either order, or one by one backwards
 * gives the same bits: what threads and SIMD lanes will rely on. */
static void test_group_split_is_bit_identical(void** state) {
	(void)state;
	for (int form = 0; form < 2; ++form) {
		pbd_world* w = cloth_world(12, (pbd_formulation)form);
		pbd_world_step(w);
		pbd_step_ctx ctx;
		pbd_step_ctx_init(w, w->def.dt, &ctx);
		pbd_families_refresh(w, &ctx);
		/* Displacements as a substep would have them: a pseudo-random offset per particle. */
		uint64_t seed = 99;
		for (uint32_t i = 0; i < w->np; ++i)
			w->q[i] = pbd_v3((pbd_real)tp_rand_range(&seed, -0.01, 0.01), (pbd_real)tp_rand_range(&seed, -0.01, 0.01),
			                 (pbd_real)tp_rand_range(&seed, -0.01, 0.01));
		const size_t qbytes = w->np * sizeof *w->q;
		pbd_vec3* q0 = malloc(qbytes);
		pbd_vec3* whole = malloc(qbytes);
		memcpy(q0, w->q, qbytes);
		pbd_family* f = &w->fam[PBD_FAMILY_DISTANCE];
		const pbd_family_ops* ops = pbd_family_table[PBD_FAMILY_DISTANCE];
		const size_t lbytes = f->n * sizeof *f->lambda;
		for (int g = 0; g < PBD_PARTITION_COLOURS; ++g) {
			const uint32_t a = g ? f->group_end[g - 1] : 0, b = f->group_end[g];
			if (a == b) continue;
			memcpy(w->q, q0, qbytes);
			memset(f->lambda, 0, lbytes);
			ops->project(&ctx, f, a, b);
			memcpy(whole, w->q, qbytes);
			const uint32_t mid = a + (b - a) / 2;
			memcpy(w->q, q0, qbytes);
			memset(f->lambda, 0, lbytes);
			ops->project(&ctx, f, mid, b);
			ops->project(&ctx, f, a, mid);
			assert_memory_equal(w->q, whole, qbytes);
			memcpy(w->q, q0, qbytes);
			memset(f->lambda, 0, lbytes);
			for (uint32_t k = b; k-- > a;) ops->project(&ctx, f, k, k + 1);
			assert_memory_equal(w->q, whole, qbytes);
		}
		free(q0);
		free(whole);
		pbd_world_destroy(w);
	}
}

/* The same world built twice, and built with its constraints added in two batches, partitions
 * and steps to the same bits. */
static void test_partition_deterministic(void** state) {
	(void)state;
	pbd_world* a = cloth_world(10, PBD_FORMULATION_XPBD);
	pbd_world* b = cloth_world(10, PBD_FORMULATION_XPBD);
	for (int s = 0; s < 30; ++s) {
		pbd_world_step(a);
		pbd_world_step(b);
	}
	assert_true(pbd_world_hash(a) == pbd_world_hash(b));
	pbd_world_destroy(a);
	pbd_world_destroy(b);
}

/* A world of the grid's particles (corners of the first row pinned) and its edges, added in the
 * order given by perm (perm[k]: the mesh edge added k-th). */
static pbd_world* grid_edges_world(const pbd_mesh* m, const uint32_t* perm) {
	pbd_world_def def = pbd_world_def_default();
	pbd_world* w = test_world(&def);
	pbd_real* iw = malloc(m->vertex_count * sizeof *iw);
	assert_non_null(iw);
	for (uint32_t i = 0; i < m->vertex_count; ++i) iw[i] = 1;
	iw[0] = iw[39] = 0;
	assert_int_equal(pbd_world_add_particles(w, m->vertex_count, m->positions, NULL, iw, NULL), PBD_OK);
	free(iw);
	pbd_distance_def* d = malloc(m->edge_count * sizeof *d);
	assert_non_null(d);
	for (uint32_t k = 0; k < m->edge_count; ++k) {
		const uint32_t e = perm[k];
		d[k] = pbd_distance_def_default();
		d[k].a = m->edges[2 * e];
		d[k].b = m->edges[2 * e + 1];
		d[k].rest = -1;
		d[k].kind = m->edge_kinds[e];
	}
	assert_int_equal(pbd_world_add_distances(w, m->edge_count, d, NULL), PBD_OK);
	free(d);
	return w;
}

/* The edge kind of the distance stored at position k. */
static uint32_t kind_at(const pbd_world* w, uint32_t k) {
	pbd_distance_def d;
	assert_int_equal(pbd_world_get_distance(w, w->fam[PBD_FAMILY_DISTANCE].user[k], &d), PBD_OK);
	return d.kind;
}

/* Distances are coloured in layout order (src/constraints/partition.c): on a 40 x 40 grid with both diagonals
 * the colours are 8, each (but for a few edges at the border) of one edge kind, structural ones
 * first; at least 80 % of the batches of 8 are runs of consecutive particles, (p + i, p + d + i)
 * or (p + 2i, p + 2i + 1); and the colouring, hence every bit of the motion, does not depend on the order of addition.
 */
static void test_layout_order(void** state) {
	(void)state;
	pbd_mesh m;
	tp_grid(&m, 40, 40, 1, pbd_v3(0, 0, 0), 2, false);
	assert_non_null(m.edge_kinds);
	uint32_t* perm = malloc(m.edge_count * sizeof *perm);
	assert_non_null(perm);
	for (uint32_t k = 0; k < m.edge_count; ++k) perm[k] = k;
	pbd_world* a = grid_edges_world(&m, perm);
	uint64_t rng = 12345;
	for (uint32_t k = m.edge_count; k-- > 1;) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		const uint32_t j = (uint32_t)((rng >> 33) % (k + 1)), t = perm[k];
		perm[k] = perm[j];
		perm[j] = t;
	}
	pbd_world* b = grid_edges_world(&m, perm);
	free(perm);
	pbd_mesh_free(&m);
	for (int s = 0; s < 30; ++s) {
		assert_int_equal(pbd_world_step(a), PBD_OK);
		assert_int_equal(pbd_world_step(b), PBD_OK);
	}
	assert_true(pbd_world_hash(a) == pbd_world_hash(b));

	const pbd_family* f = &a->fam[PBD_FAMILY_DISTANCE];
	const pbd_distance_c* c = (const pbd_distance_c*)f->hot;
	uint32_t colours = 0, batches = 0, runs = 0, last_kind = 0;
	for (int g = 0; g < PBD_GROUP_COUNT; ++g) {
		const uint32_t first = g ? f->group_end[g - 1] : 0, end = f->group_end[g];
		if (first == end) continue;
		assert_true(g < PBD_PARTITION_COLOURS);
		colours++;
		uint32_t count[PBD_EDGE_KIND_COUNT] = {0}, kind = 0;
		for (uint32_t k = first; k < end; ++k) count[kind_at(a, k)]++;
		for (uint32_t t = 1; t < PBD_EDGE_KIND_COUNT; ++t)
			if (count[t] > count[kind]) kind = t;
		assert_true(count[kind] >= (end - first) * 19 / 20); /* first fit places a few border edges earlier */
		assert_true(kind >= last_kind);
		last_kind = kind;
		for (uint32_t k = first; k + 8 <= end; k += 8) {
			bool rows = true, pairs = true;
			for (uint32_t i = 0; i < 8; ++i) {
				rows = rows && c[k + i].a == c[k].a + i && c[k + i].b == c[k].b + i;
				pairs = pairs && c[k + i].a == c[k].a + 2 * i && c[k + i].b == c[k + i].a + 1;
			}
			batches++;
			runs += rows || pairs;
		}
	}
	printf("  40 x 40 grid: %u colours, %u of %u batches are runs of consecutive particles\n", colours, runs, batches);
	assert_int_equal(colours, 8);
	assert_true(runs >= batches * 4 / 5); /* a batch across a row's end is no run: 96 % at 128^2 */
	pbd_world_destroy(a);
	pbd_world_destroy(b);
}

/* Energy per family: C^2 / (2 alpha) summed by hand for XPBD; undefined (NaN, flagged) for a
 * PBD stiffness in (0, 1); zero for ideal constraints. Strain per edge kind by hand. */
static void test_family_stats(void** state) {
	(void)state;
	pbd_world* w = cloth_world(8, PBD_FORMULATION_XPBD);
	const pbd_edge_material soft = {true, 1, 1, (pbd_real)1e-3, (pbd_real)2e-3};
	const uint32_t nd = pbd_world_distance_count(w);
	assert_int_equal(pbd_world_set_distance_material(w, 0, nd, &soft), PBD_OK);
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	double energy = 0, max_k[PBD_EDGE_KIND_COUNT] = {0}, sum_k[PBD_EDGE_KIND_COUNT] = {0};
	uint32_t count_k[PBD_EDGE_KIND_COUNT] = {0};
	const pbd_vec3* x = pbd_world_positions(w);
	for (uint32_t k = 0; k < nd; ++k) {
		pbd_distance_def d;
		pbd_world_get_distance(w, k, &d);
		const double C = tp_dist(x[d.a], x[d.b]) - (double)d.rest;
		energy += 0.5 * C * C / (C > 0 ? 1e-3 : 2e-3);
		const double strain = fabs(C) / (double)d.rest;
		if (strain > max_k[d.kind]) max_k[d.kind] = strain;
		sum_k[d.kind] += strain;
		count_k[d.kind]++;
	}
	assert_true(count_k[PBD_EDGE_STRUCTURAL] > 0 && count_k[PBD_EDGE_SHEAR] > 0 && count_k[PBD_EDGE_BEND] > 0);
	assert_true(st.energy_defined);
	assert_true(st.family[PBD_FAMILY_DISTANCE].energy_defined);
	assert_int_equal(st.family[PBD_FAMILY_DISTANCE].count, nd);
	assert_near(st.elastic_energy, energy, 1e-6 * energy + 1e-12);
	assert_near(st.family[PBD_FAMILY_DISTANCE].elastic_energy, energy, 1e-6 * energy + 1e-12);
	for (int k = 0; k < PBD_EDGE_KIND_COUNT; ++k) {
		assert_near(st.edge_max_strain[k], max_k[k], TEST_TOL(1e-12, 1e-6));
		assert_near(st.edge_mean_strain[k], sum_k[k] / count_k[k], TEST_TOL(1e-12, 1e-6));
	}
	assert_string_equal(pbd_family_name(PBD_FAMILY_DISTANCE), "distance");
	assert_string_equal(pbd_family_name(PBD_FAMILY_COUNT), "unknown");

	/* PBD: stiffness 1 is an ideal constraint (energy 0, defined); 0.5 has no energy. */
	assert_int_equal(pbd_world_set_formulation(w, PBD_FORMULATION_PBD), PBD_OK);
	pbd_world_get_stats(w, &st);
	assert_true(st.energy_defined);
	assert_true(st.elastic_energy == 0);
	const pbd_edge_material half = {true, (pbd_real)0.5, 1, 0, 0};
	assert_int_equal(pbd_world_set_distance_material(w, 0, 1, &half), PBD_OK);
	pbd_world_get_stats(w, &st);
	assert_false(st.energy_defined);
	assert_false(st.family[PBD_FAMILY_DISTANCE].energy_defined);
	assert_true(isnan(st.elastic_energy));
	pbd_world_destroy(w);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_groups_are_independent),
	    cmocka_unit_test(test_overflow_group),
	    cmocka_unit_test(test_group_split_is_bit_identical),
	    cmocka_unit_test(test_partition_deterministic),
	    cmocka_unit_test(test_layout_order),
	    cmocka_unit_test(test_family_stats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
