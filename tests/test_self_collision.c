/* Particle collision (src/self_collision.c, src/hash_grid.c): objects with a thickness keep
 * apart from each other and, with self-collision, from themselves; pairs keep momentum; mesh
 * neighbours closer than the thickness at rest are left to the mesh; results are deterministic
 * and the hash finds exactly the pairs a brute-force search finds. */
#include <stdio.h>
#include <stdlib.h>

#include "test_physics.h"
#include "world.h"

static pbd_world* world_with(pbd_vec3 gravity, int substeps, int iterations) {
	pbd_world_def def = pbd_world_def_default();
	def.gravity = gravity;
	def.substeps = substeps;
	def.iterations = iterations;
	return test_world(&def);
}

static pbd_soft_info add_cloth(pbd_world* w, uint32_t n, pbd_real size, pbd_vec3 origin, pbd_real thickness, bool self,
                               const pbd_vec3* velocity) {
	pbd_mesh m;
	tp_grid(&m, n, n, size, origin, 2, true);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.mass_mode = PBD_MASS_TOTAL;
	bd.mass = (pbd_real)0.1;
	bd.thickness = thickness;
	bd.self_collision = self;
	bd.material[PBD_EDGE_BEND].stiffness_stretch = (pbd_real)0.05;
	bd.material[PBD_EDGE_BEND].stiffness_compress = (pbd_real)0.05;
	if (velocity) bd.velocity = *velocity;
	pbd_soft_info info;
	assert_int_equal(test_soft_create(w, &bd, &info), PBD_OK);
	pbd_mesh_free(&m);
	return info;
}

/* The closest pair that must keep `thickness` apart: particles of different objects, or of one
 * self-colliding object that are at least the thickness apart at rest. Brute force, in double. */
static double closest_colliding_pair(const pbd_world* w, uint32_t* pairs_within) {
	double best = INFINITY;
	uint32_t within = 0;
	for (uint32_t a = 0; a < w->np; ++a)
		for (uint32_t b = a + 1; b < w->np; ++b) {
			if (!(w->radius[a] > 0) || !(w->radius[b] > 0)) continue;
			const double dist = (double)w->radius[a] + (double)w->radius[b];
			if (w->cgroup[a] == w->cgroup[b] &&
			    (!(w->cgroup[a] & PBD_GROUP_SELF) || tp_dist(w->x_rest[a], w->x_rest[b]) < dist))
				continue;
			const double d = tp_dist(w->x[a], w->x[b]);
			if (d < 2 * dist) within++;
			if (d - dist < best) best = d - dist;
		}
	if (pairs_within) *pairs_within = within;
	return best;
}

/* Two cloths, one above the other, dropped on a ball: the upper one rests on the lower one, never
 * closer than the thickness (less a small tolerance), and the pair projection keeps momentum in
 * free fall (no collider, no gravity: two cloths thrown at each other). */
static void test_cloth_on_cloth(void** state) {
	(void)state;
	pbd_world* w = world_with(pbd_v3(0, (pbd_real)-9.81, 0), 4, 10);
	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_SPHERE;
	cd.shape.sphere.center = pbd_v3(0, 0, 0);
	cd.shape.sphere.radius = (pbd_real)0.3;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
	const pbd_real t = (pbd_real)0.03;
	add_cloth(w, 16, 1, pbd_v3((pbd_real)-0.5, (pbd_real)0.4, (pbd_real)-0.5), t, false, NULL);
	add_cloth(w, 16, 1, pbd_v3((pbd_real)-0.45, (pbd_real)0.5, (pbd_real)-0.55), t, false, NULL);
	double worst = INFINITY;
	uint32_t most_pairs = 0;
	for (int s = 0; s < 120; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		uint32_t within;
		const double gap = closest_colliding_pair(w, &within);
		if (gap < worst) worst = gap;
		if (w->pcol.npairs > most_pairs) most_pairs = w->pcol.npairs;
	}
	printf("  two 16 x 16 cloths of thickness %.2f m on a ball: closest pair %.2g m inside the thickness, up to %u "
	       "pairs per substep\n",
	       (double)t, -worst, most_pairs);
	assert_true(most_pairs > 0);
	assert_true(worst > -0.1 * (double)t);
	assert_true(tp_all_finite(w));
	pbd_world_destroy(w);

	/* Momentum: two cloths thrown at each other, without gravity, colliders or pins. */
	w = world_with(pbd_v3(0, 0, 0), 2, 8);
	const pbd_vec3 up = pbd_v3(0, 2, 0), down = pbd_v3(0, -1, 0);
	add_cloth(w, 8, (pbd_real)0.5, pbd_v3(0, 0, 0), t, false, &up);
	add_cloth(w, 8, (pbd_real)0.5, pbd_v3((pbd_real)0.02, (pbd_real)0.2, (pbd_real)0.01), t, false, &down);
	const tp_dvec3 p0 = tp_momentum(w);
	uint32_t pairs = 0;
	for (int s = 0; s < 30; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		pairs += w->pcol.npairs;
	}
	const tp_dvec3 p1 = tp_momentum(w);
	printf("  two cloths thrown together: momentum change %.2g of %.2g kg m/s over %u pairs\n",
	       tp_dlen(tp_dsub(p1, p0)), 0.1 * 3, pairs);
	assert_true(pairs > 0);
	assert_true(tp_dlen(tp_dsub(p1, p0)) <= TEST_TOL(1e-12, 1e-5));
	pbd_world_destroy(w);
}

/* Particles of the folded cloth's upper half (rows 10 to 19 of the 20 x 20 grid) that ended
 * below the lower half's surface: under the lower half's triangle over which they lie. A layer
 * that passed through the other shows here. */
static uint32_t below_lower_layer(const pbd_world* w) {
	uint32_t n = 0;
	for (uint32_t i = 200; i < 400; ++i) {
		const pbd_vec3 p = w->x[i];
		for (uint32_t t = 0; t < w->nt; ++t) {
			const uint32_t* v = &w->tri[3 * t];
			if (v[0] >= 200 || v[1] >= 200 || v[2] >= 200) continue;
			/* Barycentric weights of p's xz in the triangle's xz projection. */
			const double ax = (double)w->x[v[0]].x, az = (double)w->x[v[0]].z, bx = (double)w->x[v[1]].x,
			             bz = (double)w->x[v[1]].z, cx = (double)w->x[v[2]].x, cz = (double)w->x[v[2]].z;
			const double det = (bx - ax) * (cz - az) - (cx - ax) * (bz - az);
			if (fabs(det) < 1e-12) continue;
			const double u = ((double)p.x - ax) * (cz - az) - (cx - ax) * ((double)p.z - az),
			             vv = (bx - ax) * ((double)p.z - az) - ((double)p.x - ax) * (bz - az);
			const double b1 = u / det, b2 = vv / det, b0 = 1 - b1 - b2;
			if (b0 < 0 || b1 < 0 || b2 < 0) continue;
			const double y = b0 * (double)w->x[v[0]].y + b1 * (double)w->x[v[1]].y + b2 * (double)w->x[v[2]].y;
			if ((double)p.y < y) {
				n++;
				break;
			}
		}
	}
	return n;
}

/* A cloth lying folded in two, its upper half 15 cm above the lower, falls onto a floor: with
 * self-collision the two layers end stacked a thickness apart; without it (the control) they
 * fall into each other. The check counts every pair that must keep apart: particles that were
 * the thickness apart in the folded start, from 0.1 s on (the layers meet at 0.17 s). */
static double fold(bool self, uint32_t* active, uint32_t* crossed) {
	pbd_world* w = world_with(pbd_v3(0, (pbd_real)-9.81, 0), 4, 10);
	const pbd_collider_def floor = pbd_collider_def_default();
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &floor)));
	pbd_mesh m;
	tp_grid(&m, 20, 20, 1, pbd_v3((pbd_real)-0.5, (pbd_real)0.02, 0), 2, true);
	pbd_real* rest = (pbd_real*)malloc(m.edge_count * sizeof *rest);
	assert_non_null(rest);
	for (uint32_t e = 0; e < m.edge_count; ++e)
		rest[e] = pbd_v3_length(pbd_v3_sub(m.positions[m.edges[2 * e]], m.positions[m.edges[2 * e + 1]]));
	m.edge_rest = rest;
	for (uint32_t i = 0; i < m.vertex_count; ++i) {
		pbd_vec3* p = &m.positions[i];
		if (p->z > (pbd_real)0.5) *p = pbd_v3(p->x, (pbd_real)0.17, 1 - p->z); /* folded back on top */
	}
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.mass_mode = PBD_MASS_TOTAL;
	bd.mass = (pbd_real)0.1;
	bd.thickness = (pbd_real)0.04;
	bd.self_collision = true;
	bd.material[PBD_EDGE_BEND].stiffness_stretch = (pbd_real)0.02;
	bd.material[PBD_EDGE_BEND].stiffness_compress = (pbd_real)0.02;
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);
	double worst = INFINITY;
	*active = 0;
	for (int s = 0; s < 90; ++s) {
		/* The control steps without the self bit and is measured with it. */
		if (!self)
			for (uint32_t i = 0; i < w->np; ++i) w->cgroup[i] &= ~PBD_GROUP_SELF;
		assert_int_equal(pbd_world_step(w), PBD_OK);
		if (!self)
			for (uint32_t i = 0; i < w->np; ++i) w->cgroup[i] |= PBD_GROUP_SELF;
		*active += w->pcol.npairs;
		const double gap = closest_colliding_pair(w, NULL);
		/* From 0.1 s: the first steps snap the stretched edges across the fold. */
		if (s >= 6 && gap < worst) worst = gap;
	}
	assert_true(tp_all_finite(w));
	*crossed = below_lower_layer(w);
	pbd_world_destroy(w);
	return worst;
}

static void test_cloth_folds_on_itself(void** state) {
	(void)state;
	uint32_t with_pairs, without_pairs, with_crossed, without_crossed;
	const double with = fold(true, &with_pairs, &with_crossed), without = fold(false, &without_pairs, &without_crossed);
	printf("  20 x 20 cloth (thickness 0.04 m) folded in two, falling on a floor: closest pair %.3g m inside the "
	       "thickness with self-collision (%u pair-substeps), %.3g m without (%u)\n",
	       -with, with_pairs, -without, without_pairs);
	printf("  upper-half particles ending below the lower half: %u with self-collision, %u without\n", with_crossed,
	       without_crossed);
	assert_int_equal(with_crossed, 0);
	assert_true(without_crossed >= 10); /* both layers end on the floor: about half of those over it */
	assert_true(with_pairs > 0);
	assert_true(with > -0.006);   /* within 15 % of the thickness */
	assert_true(without < -0.02); /* the control: it does pass through itself */

	/* At rest and flat, with neighbours closer than the thickness: nothing moves. */
	pbd_world* w = world_with(pbd_v3(0, 0, 0), 2, 4);
	add_cloth(w, 10, 1, pbd_v3(0, 0, 0), (pbd_real)0.3, true, NULL);
	pbd_vec3 before[100];
	memcpy(before, pbd_world_positions(w), sizeof before);
	for (int s = 0; s < 10; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_memory_equal(before, pbd_world_positions(w), sizeof before);
	pbd_world_destroy(w);
}

/* The hash finds every pair a brute-force search finds, on random points with random radii. */
static void test_hash_equals_brute_force(void** state) {
	(void)state;
	enum { N = 400 };
	pbd_world* w = world_with(pbd_v3(0, 0, 0), 1, 1);
	uint64_t seed = 11;
	pbd_vec3 x[N];
	pbd_real inv[N];
	for (int i = 0; i < N; ++i) {
		x[i] = pbd_v3((pbd_real)tp_rand_range(&seed, -1, 1), (pbd_real)tp_rand_range(&seed, -1, 1),
		              (pbd_real)tp_rand_range(&seed, -1, 1));
		inv[i] = 1;
	}
	assert_int_equal(pbd_world_add_particles(w, N, x, NULL, inv, NULL), PBD_OK);
	for (int i = 0; i < N; ++i) {
		w->radius[i] = (pbd_real)tp_rand_range(&seed, 0.01, 0.08);
		w->cgroup[i] = (uint32_t)(i + 1);
	}
	assert_int_equal(pbd_particle_collision_prepare(w), PBD_OK);
	for (int i = 0; i < N; ++i) w->q[i] = pbd_v3(0, 0, 0);
	assert_int_equal(pbd_particle_collision_find(w), PBD_OK);
	uint32_t brute = 0;
	for (int a = 0; a < N; ++a)
		for (int b = a + 1; b < N; ++b) {
			const double dist = (double)w->radius[a] + (double)w->radius[b];
			if (tp_dist(x[a], x[b]) < 2 * dist) brute++;
		}
	printf("  %d random balls: %u pairs found by the hash, %u by brute force\n", N, w->pcol.npairs, brute);
	assert_int_equal(w->pcol.npairs, brute);
	for (uint32_t k = 0; k < w->pcol.npairs; ++k) {
		const pbd_pair_c* p = &w->pcol.pairs[k];
		assert_true(p->a < p->b);
		assert_true(tp_dist(x[p->a], x[p->b]) < 2 * (double)p->dist);
	}
	pbd_world_destroy(w);
}

/* Same input, bit-identical output, and a snapshot resumes the same. */
static void test_deterministic(void** state) {
	(void)state;
	uint64_t hash[2];
	for (int run = 0; run < 2; ++run) {
		pbd_world* w = world_with(pbd_v3(0, (pbd_real)-9.81, 0), 2, 6);
		const pbd_collider_def floor = pbd_collider_def_default();
		assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &floor)));
		add_cloth(w, 12, 1, pbd_v3((pbd_real)-0.5, (pbd_real)0.3, (pbd_real)-0.5), (pbd_real)0.04, true, NULL);
		add_cloth(w, 12, 1, pbd_v3((pbd_real)-0.4, (pbd_real)0.4, (pbd_real)-0.6), (pbd_real)0.04, true, NULL);
		for (int s = 0; s < 60; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
		hash[run] = pbd_world_hash(w);
		pbd_world_destroy(w);
	}
	assert_true(hash[0] == hash[1]);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cloth_on_cloth),
	    cmocka_unit_test(test_cloth_folds_on_itself),
	    cmocka_unit_test(test_hash_equals_brute_force),
	    cmocka_unit_test(test_deterministic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
