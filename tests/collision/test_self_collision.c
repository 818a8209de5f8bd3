/* Particle collision (src/collision/self_collision.c, src/collision/hash_grid.c,
 * src/collision/vertex_triangle.c, src/collision/edge_edge.c, src/collision/contact_regions.c):
 * objects with a thickness keep apart from each other and, with self-collision, from themselves;
 * pairs keep momentum; mesh neighbours closer than the thickness at rest are left to the mesh;
 * edges do not pass through edges; results are deterministic; the contacts are projected by
 * regions that share no particle; the hash finds exactly the pairs a brute-force search finds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision/self_collision.h"
#include "collision/shape_math.h"
#include "test_physics.h"
#include "model/world.h"

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
		if (w->pcol->npairs > most_pairs) most_pairs = w->pcol->npairs;
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
		pairs += w->pcol->npairs;
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

/* Edges of the folded cloth's upper half (both ends in rows 10 to 19) that pass through a
 * triangle of the lower half (all three corners in rows 0 to 9), in double (Moller and Trumbore
 * 1997): an edge of one layer through the other, which the particle check above can miss. */
static int cmp_u64(const void* a, const void* b) {
	const uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
	return x < y ? -1 : x > y;
}

static uint32_t edges_through_lower_layer(const pbd_world* w) {
	/* The upper half's triangle edges, each once. */
	uint64_t* key = (uint64_t*)malloc(3 * (size_t)w->nt * sizeof *key);
	assert_non_null(key);
	size_t nk = 0;
	for (uint32_t t = 0; t < w->nt; ++t)
		for (uint32_t k = 0; k < 3; ++k) {
			const uint32_t a = w->tri[3 * t + k], b = w->tri[3 * t + (k + 1) % 3];
			if (a >= 200 && b >= 200) key[nk++] = (uint64_t)(a < b ? a : b) << 32 | (a < b ? b : a);
		}
	qsort(key, nk, sizeof *key, cmp_u64);
	uint32_t n = 0;
	for (size_t e = 0; e < nk; ++e) {
		if (e > 0 && key[e] == key[e - 1]) continue;
		const uint32_t i = (uint32_t)(key[e] >> 32), j = (uint32_t)key[e];
		const tp_dvec3 p = tp_d(w->x[i]), dir = tp_dsub(tp_d(w->x[j]), p);
		for (uint32_t t = 0; t < w->nt; ++t) {
			const uint32_t* v = &w->tri[3 * t];
			if (v[0] >= 200 || v[1] >= 200 || v[2] >= 200) continue;
			const tp_dvec3 a = tp_d(w->x[v[0]]), e1 = tp_dsub(tp_d(w->x[v[1]]), a), e2 = tp_dsub(tp_d(w->x[v[2]]), a);
			const tp_dvec3 h = {dir.y * e2.z - dir.z * e2.y, dir.z * e2.x - dir.x * e2.z, dir.x * e2.y - dir.y * e2.x};
			const double det = e1.x * h.x + e1.y * h.y + e1.z * h.z;
			if (fabs(det) < 1e-18) continue;
			const tp_dvec3 r = tp_dsub(p, a);
			const double u = (r.x * h.x + r.y * h.y + r.z * h.z) / det;
			const tp_dvec3 k = {r.y * e1.z - r.z * e1.y, r.z * e1.x - r.x * e1.z, r.x * e1.y - r.y * e1.x};
			const double vv = (dir.x * k.x + dir.y * k.y + dir.z * k.z) / det;
			const double f = (e2.x * k.x + e2.y * k.y + e2.z * k.z) / det;
			if (u >= 0 && vv >= 0 && u + vv <= 1 && f > 0 && f < 1) {
				n++;
				break;
			}
		}
	}
	free(key);
	return n;
}

/* A self-colliding n x n cloth of side `size` folded in two with its flat cloth's rest lengths:
 * the half z < size / 2 at height y_low, the other half laid back over it at y_up, so that the
 * edges across the fold start stretched (y_up - y_low over the grid spacing). */
static void add_folded_cloth(pbd_world* w, uint32_t n, pbd_real size, pbd_real y_low, pbd_real y_up, pbd_real thick,
                             bool edges) {
	pbd_mesh m;
	tp_grid(&m, n, n, size, pbd_v3(-size / 2, y_low, 0), 2, true);
	pbd_real* rest = (pbd_real*)malloc(m.edge_count * sizeof *rest);
	assert_non_null(rest);
	for (uint32_t e = 0; e < m.edge_count; ++e)
		rest[e] = pbd_v3_length(pbd_v3_sub(m.positions[m.edges[2 * e]], m.positions[m.edges[2 * e + 1]]));
	m.edge_rest = rest;
	for (uint32_t i = 0; i < m.vertex_count; ++i) {
		pbd_vec3* p = &m.positions[i];
		if (p->z > size / 2) *p = pbd_v3(p->x, y_up, size - p->z);
	}
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.mass_mode = PBD_MASS_TOTAL;
	bd.mass = (pbd_real)0.1;
	bd.thickness = thick;
	bd.self_collision = true;
	bd.edge_contacts = edges;
	bd.material[PBD_EDGE_BEND].stiffness_stretch = (pbd_real)0.02;
	bd.material[PBD_EDGE_BEND].stiffness_compress = (pbd_real)0.02;
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);
}

/* A cloth lying folded in two, its upper half 15 cm above the lower, falls onto a floor: with
 * self-collision the two layers end stacked a thickness apart; without it (the control) they
 * fall into each other. The check counts every pair that must keep apart: particles that were
 * the thickness apart in the folded start, from 0.1 s on (the layers meet at 0.17 s). */
static double fold(bool self, bool edges, uint32_t* active, uint32_t* crossed, uint32_t* edges_through,
                   uint32_t* edge_contacts) {
	pbd_world* w = world_with(pbd_v3(0, (pbd_real)-9.81, 0), 4, 10);
	const pbd_collider_def floor = pbd_collider_def_default();
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &floor)));
	add_folded_cloth(w, 20, 1, (pbd_real)0.02, (pbd_real)0.17, (pbd_real)0.04, edges);
	double worst = INFINITY;
	*active = 0;
	*edge_contacts = 0;
	for (int s = 0; s < 90; ++s) {
		/* The control steps without the self bit and is measured with it. */
		if (!self)
			for (uint32_t i = 0; i < w->np; ++i) w->cgroup[i] &= ~PBD_GROUP_SELF;
		assert_int_equal(pbd_world_step(w), PBD_OK);
		if (!self)
			for (uint32_t i = 0; i < w->np; ++i) w->cgroup[i] |= PBD_GROUP_SELF;
		*active += w->pcol->npairs;
		*edge_contacts += w->pcol->nee;
		const double gap = closest_colliding_pair(w, NULL);
		/* From 0.1 s: the first steps snap the stretched edges across the fold. */
		if (s >= 6 && gap < worst) worst = gap;
	}
	assert_true(tp_all_finite(w));
	*crossed = below_lower_layer(w);
	*edges_through = edges_through_lower_layer(w);
	pbd_world_destroy(w);
	return worst;
}

static void test_cloth_folds_on_itself(void** state) {
	(void)state;
	uint32_t with_pairs, without_pairs, vf_pairs, with_crossed, without_crossed, vf_crossed;
	uint32_t with_through, without_through, vf_through, with_ee, without_ee, vf_ee;
	const double with = fold(true, true, &with_pairs, &with_crossed, &with_through, &with_ee);
	const double without = fold(false, true, &without_pairs, &without_crossed, &without_through, &without_ee);
	const double vf = fold(true, false, &vf_pairs, &vf_crossed, &vf_through, &vf_ee);
	printf("  20 x 20 cloth (thickness 0.04 m) folded in two, falling on a floor: closest pair %.3g m inside the "
	       "thickness with self-collision (%u pair-substeps, %u edge-edge contact-substeps), %.3g m without edge "
	       "contacts, %.3g m without self-collision (%u)\n",
	       -with, with_pairs, with_ee, -vf, -without, without_pairs);
	printf("  upper-half particles ending below the lower half: %u with self-collision, %u without edge contacts, %u "
	       "without\n",
	       with_crossed, vf_crossed, without_crossed);
	printf("  upper-half edges ending through a lower-half triangle: %u with self-collision, %u without edge "
	       "contacts, %u without\n",
	       with_through, vf_through, without_through);
	assert_int_equal(with_crossed, 0);
	assert_int_equal(with_through, 0);
	assert_true(without_crossed >= 10); /* both layers end on the floor: about half of those over it */
	assert_true(without_through >= 10); /* the control: the edge check sees a layer through the other */
	assert_true(with_pairs > 0);
	assert_true(with_ee > 0);
	assert_int_equal(vf_ee, 0);
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

/* A 32 x 32 cloth of 0.5 m folded with its flat rest lengths, the upper half 15 cm above the
 * lower: the edges across the fold start 9.4 times stretched and snap shut, crushing the faces
 * of the fold. Face contacts whose triangle turned over within a substep read the starting
 * side against the flipped normal and pushed particles through (before: 24 m/s of jitter that
 * never settled, and a diverged 64 x 64 cloth); now the speed stays that of a cloth falling a few
 * centimetres, with edge contacts and without. Returns the largest particle speed over the last
 * 0.5 s of 1 s. */
static double stretched_fold(bool edges) {
	pbd_world* w = world_with(pbd_v3(0, (pbd_real)-9.81, 0), 4, 10);
	const pbd_collider_def floor = pbd_collider_def_default();
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &floor)));
	const pbd_real thick = (pbd_real)(0.8 * 0.5 / 31.0);
	add_folded_cloth(w, 32, (pbd_real)0.5, thick / 2, (pbd_real)0.15 + thick / 2, thick, edges);
	double fastest = 0;
	for (int s = 0; s < 60; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		assert_true(tp_all_finite(w));
		if (s >= 30)
			for (uint32_t i = 0; i < w->np; ++i) fastest = fmax(fastest, tp_dlen(tp_d(w->v[i])));
	}
	pbd_world_destroy(w);
	return fastest;
}

static void test_stretched_fold_snaps_shut(void** state) {
	(void)state;
	const double with = stretched_fold(true), without = stretched_fold(false);
	printf("  32 x 32 cloth folded with its edges across the fold 9.4 times stretched: fastest particle over the "
	       "last 0.5 s %.3g m/s with edge contacts, %.3g m/s without\n",
	       with, without);
	assert_true(without < 8); /* before: 24 m/s */
	assert_true(with < 20);
}

/* With no gravity and no collider, a free cloth folded in two whose upper half is thrown down onto
 * the lower: every self-contact (particle pairs, vertices against faces, edges against edges)
 * is an equal and opposite push, so the cloth's momentum stays what it was through the impact. */
static void test_self_contacts_keep_momentum(void** state) {
	(void)state;
	pbd_world* w = world_with(pbd_v3(0, 0, 0), 4, 10);
	add_folded_cloth(w, 20, 1, 0, (pbd_real)0.1, (pbd_real)0.04, true);
	/* the edges across the fold snap shut as well: internal forces, which keep momentum too */
	for (uint32_t i = 0; i < w->np; ++i)
		if (w->x[i].y > (pbd_real)0.05) w->v[i] = pbd_v3((pbd_real)0.3, -2, 0);
	const tp_dvec3 p0 = tp_momentum(w);
	const double size = tp_dlen(p0);
	double worst = 0;
	uint32_t contacts = 0;
	for (int s = 0; s < 60; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		worst = fmax(worst, tp_dlen(tp_dsub(tp_momentum(w), p0)) / size);
		contacts += w->pcol->npairs + w->pcol->nvt + w->pcol->nee;
	}
	printf("  a free folded cloth's upper half thrown onto the lower: momentum kept within %.2g of %.3g kg m/s "
	       "through %u self-contact-substeps\n",
	       worst, size, contacts);
	assert_true(contacts > 100);
	assert_true(worst < 1e-5);
	assert_true(tp_all_finite(w));
	pbd_world_destroy(w);
}

/* The distance of segments ab and cd at parameters s, t, in double. */
static double segment_gap(pbd_vec3 a, pbd_vec3 b, pbd_vec3 c, pbd_vec3 d, double s, double t) {
	const tp_dvec3 A = tp_d(a), B = tp_d(b), C = tp_d(c), D = tp_d(d);
	const tp_dvec3 p = {A.x + s * (B.x - A.x), A.y + s * (B.y - A.y), A.z + s * (B.z - A.z)};
	const tp_dvec3 q = {C.x + t * (D.x - C.x), C.y + t * (D.y - C.y), C.z + t * (D.z - C.z)};
	return tp_dlen(tp_dsub(p, q));
}

/* The least distance of two segments over a 201 x 201 grid of parameters: no true minimum is
 * above it. */
static double segment_gap_sampled(pbd_vec3 a, pbd_vec3 b, pbd_vec3 c, pbd_vec3 d) {
	double best = INFINITY;
	for (int i = 0; i <= 200; ++i)
		for (int j = 0; j <= 200; ++j) best = fmin(best, segment_gap(a, b, c, d, i / 200.0, j / 200.0));
	return best;
}

static void check_closest(pbd_vec3 a, pbd_vec3 b, pbd_vec3 c, pbd_vec3 d, double s_want, double t_want) {
	pbd_real s, t;
	pbd_closest_segments(a, b, c, d, &s, &t);
	if (fabs((double)s - s_want) > TEST_TOL(1e-12, 1e-6) || fabs((double)t - t_want) > TEST_TOL(1e-12, 1e-6))
		printf("  closest points: s %.9g t %.9g, want %.9g %.9g\n", (double)s, (double)t, s_want, t_want);
	assert_near(s, s_want, TEST_TOL(1e-12, 1e-6));
	assert_near(t, t_want, TEST_TOL(1e-12, 1e-6));
}

/* Closest points of two segments: analytic cases (skew, intersecting, parallel with and without
 * overlap, collinear, zero-length), and random pairs against a sampled minimum, none NaN. */
static void test_segment_closest_points(void** state) {
	(void)state;
	const pbd_vec3 o = pbd_v3(0, 0, 0), x1 = pbd_v3(1, 0, 0), x2 = pbd_v3(2, 0, 0);
	check_closest(pbd_v3(-1, 0, 0), x1, pbd_v3((pbd_real)0.5, 1, -1), pbd_v3((pbd_real)0.5, 1, 1), 0.75, 0.5);
	check_closest(o, x2, pbd_v3(1, -1, 0), pbd_v3(1, 1, 0), 0.5, 0.5);                       /* intersecting */
	check_closest(o, x2, pbd_v3(1, 1, 0), pbd_v3(3, 1, 0), 0.75, 0.25);                      /* parallel, overlap */
	check_closest(o, x2, pbd_v3(3, 1, 0), pbd_v3(1, 1, 0), 0.75, 0.75);                      /* anti-parallel */
	check_closest(o, x1, pbd_v3(2, 1, 0), pbd_v3(3, 1, 0), 1, 0);                            /* parallel, apart */
	check_closest(o, x2, x1, pbd_v3(3, 0, 0), 0.75, 0.25);                                   /* collinear */
	check_closest(pbd_v3(1, 2, 3), pbd_v3(1, 2, 3), pbd_v3(4, 5, 6), pbd_v3(4, 5, 6), 0, 0); /* two points */
	check_closest(pbd_v3((pbd_real)0.5, 1, 0), pbd_v3((pbd_real)0.5, 1, 0), o, x1, 0, 0.5);  /* point, segment */
	check_closest(o, x1, x2, x2, 1, 0);                                                      /* segment, point */
	check_closest(o, x1, pbd_v3(-1, 3, 0), pbd_v3(-1, 3, 0), 0, 0);
	check_closest(o, x1, pbd_v3(2, -1, 1), pbd_v3(2, 1, 1), 1, 0.5); /* an end against the middle */
	/* Nearly parallel (sin 1e-5), and a segment of 1e-20 m: finite parameters in [0, 1]. Below the
	 * parallel threshold the middle of the overlap stands for the closest pair, off the true
	 * minimum by at most half the length times the sine. */
	const pbd_vec3 cases[2][4] = {{o, x1, pbd_v3(0, 1, 0), pbd_v3(1, (pbd_real)1.00001, 0)},
	                              {o, pbd_v3((pbd_real)1e-20, 0, 0), pbd_v3(1, 1, 0), pbd_v3(1, -1, 0)}};
	for (int k = 0; k < 2; ++k) {
		pbd_real s, t;
		pbd_closest_segments(cases[k][0], cases[k][1], cases[k][2], cases[k][3], &s, &t);
		assert_true(s >= 0 && s <= 1 && t >= 0 && t <= 1);
		const double got = segment_gap(cases[k][0], cases[k][1], cases[k][2], cases[k][3], (double)s, (double)t);
		assert_true(got <= segment_gap_sampled(cases[k][0], cases[k][1], cases[k][2], cases[k][3]) + 0.5e-5 + 1e-6);
	}
	/* Random pairs, a third of them parallel (d - c a multiple of b - a): never above the sampled
	 * minimum. */
	uint64_t seed = 5;
	double worst = 0;
	for (int k = 0; k < 90; ++k) {
		pbd_vec3 p[4];
		for (int j = 0; j < 4; ++j)
			p[j] = pbd_v3((pbd_real)tp_rand_range(&seed, -1, 1), (pbd_real)tp_rand_range(&seed, -1, 1),
			              (pbd_real)tp_rand_range(&seed, -1, 1));
		if (k % 3 == 0) p[3] = pbd_v3_add(p[2], pbd_v3_scale(pbd_v3_sub(p[1], p[0]), (pbd_real)(k % 2 ? -0.5 : 2)));
		pbd_real s, t;
		pbd_closest_segments(p[0], p[1], p[2], p[3], &s, &t);
		assert_true(s >= 0 && s <= 1 && t >= 0 && t <= 1);
		const double excess =
		    segment_gap(p[0], p[1], p[2], p[3], (double)s, (double)t) - segment_gap_sampled(p[0], p[1], p[2], p[3]);
		if (excess > worst) worst = excess;
	}
	printf("  90 random segment pairs (30 parallel): closest distance at most %.2g m above a 201 x 201 sampling\n",
	       worst);
	assert_true(worst <= TEST_TOL(1e-12, 1e-6));
}

/* One edge-edge contact, projected once: the pair ends exactly the thickness apart along the
 * contact's normal, on the side it started from, and the corrections carry no momentum
 * (sum m_i dq_i = 0 with unequal masses), for a pair that came within the thickness and one that
 * passed through within the substep. */
static void test_edge_edge_projection(void** state) {
	(void)state;
	const pbd_real thick = (pbd_real)0.2;
	const pbd_vec3 x[4] = {pbd_v3(0, 0, 0), pbd_v3(1, 0, 0), pbd_v3((pbd_real)0.3, (pbd_real)0.3, (pbd_real)-0.5),
	                       pbd_v3((pbd_real)0.3, (pbd_real)0.3, (pbd_real)0.5)};
	const pbd_real inv[4] = {1, (pbd_real)0.5, 2, (pbd_real)0.25};
	const pbd_real drop[2] = {(pbd_real)0.25, (pbd_real)0.4}; /* cd ends 0.05 above ab; 0.1 below it */
	for (int k = 0; k < 2; ++k) {
		pbd_world* w = world_with(pbd_v3(0, 0, 0), 1, 1);
		assert_int_equal(pbd_world_add_particles(w, 4, x, NULL, inv, NULL), PBD_OK);
		for (uint32_t i = 0; i < 4; ++i) {
			w->radius[i] = thick / 2;
			w->cgroup[i] = i < 2 ? 1u : 2u;
			w->q[i] = pbd_v3(0, 0, 0);
		}
		w->q[0] = pbd_v3((pbd_real)0.01, 0, (pbd_real)0.02); /* some sliding too */
		w->q[2] = w->q[3] = pbd_v3(0, -drop[k], 0);
		pbd_ee_c e;
		assert_true(pbd_edge_edge_contact(w, 0, 1, 2, 3, thick, &e));
		assert_near(e.n.y, -1, 1e-6); /* from cd down to ab: the starting side */
		assert_true(pbd_grow_to(&w->mem, (void**)&w->pcol->ee, sizeof *w->pcol->ee, &w->pcol->cap_ee, 1));
		w->pcol->ee[0] = e;
		w->pcol->nee = 1;
		pbd_vec3 before[4];
		memcpy(before, w->q, sizeof before);
		const uint32_t ref = (uint32_t)PBD_CONTACT_EE << PBD_CONTACT_REF_SHIFT;
		pbd_edge_edge_project(w, &ref, 1);
		tp_dvec3 p = {0, 0, 0};
		for (int i = 0; i < 4; ++i) {
			const tp_dvec3 dq = tp_dsub(tp_d(w->q[i]), tp_d(before[i]));
			p.x += dq.x / (double)inv[i], p.y += dq.y / (double)inv[i], p.z += dq.z / (double)inv[i];
		}
		pbd_vec3 pos[4];
		for (int i = 0; i < 4; ++i) pos[i] = pbd_v3_add(x[i], w->q[i]);
		const double gap = segment_gap(pos[0], pos[1], pos[2], pos[3], (double)e.s, (double)e.t);
		const double cd_above = ((double)pos[2].y + (double)pos[3].y) / 2 - ((double)pos[0].y + (double)pos[1].y) / 2;
		printf("  edge-edge contact (%s): gap %.9g m after one projection (thickness %.2f), cd %.3g m above ab, "
		       "momentum change %.2g kg m/s\n",
		       k ? "passed through" : "within the thickness", gap, (double)thick, cd_above, tp_dlen(p));
		assert_near(gap, thick, TEST_TOL(1e-12, 1e-6));
		assert_true(cd_above > 0);
		assert_true(tp_dlen(p) <= TEST_TOL(1e-15, 1e-7));
		pbd_world_destroy(w);
	}
}

/* Two stiff strips standing on edge at right angles, A in the plane z = 0 above, B in x = 0
 * below, 17.5 cm apart, thrown at each other at 6 m/s each: their facing edges cross edge-on,
 * while no vertex comes near a face (A's vertices lie at x = +-0.1, +-0.3, B's at z = +-0.1,
 * +-0.3) or near a vertex of the other. They close 10 cm per substep, more than the thickness
 * and the contacts' reach: the first prediction leaves them 7.5 cm apart, the second 2.5 cm
 * through each other, so only the crossing found within the substep can stop them. Returns the
 * least distance between an edge of A and an edge of B over the steps; *crossed: A's lower edge
 * ended below B's upper edge. */
static double crossing_strips(bool edges, bool* crossed, uint32_t* contacts, uint32_t* others) {
	pbd_world* w = world_with(pbd_v3(0, 0, 0), 2, 10);
	const pbd_real thick = (pbd_real)0.02;
	for (int k = 0; k < 2; ++k) {
		pbd_grid_def gd = pbd_grid_def_default();
		gd.nx = 4;
		gd.ny = 2;
		gd.size_u = (pbd_real)0.6;
		gd.size_v = (pbd_real)0.2;
		gd.origin = k == 0 ? pbd_v3((pbd_real)-0.3, (pbd_real)0.0875, 0) : pbd_v3(0, (pbd_real)-0.2875, (pbd_real)-0.3);
		gd.axis_u = k == 0 ? pbd_v3(1, 0, 0) : pbd_v3(0, 0, 1);
		gd.axis_v = pbd_v3(0, 1, 0);
		gd.diagonals = 2;
		pbd_mesh m;
		pbd_error err;
		assert_int_equal(pbd_mesh_grid(&gd, &m, &err), PBD_OK);
		pbd_soft_def bd = pbd_soft_def_default();
		bd.mesh = &m;
		bd.mass_mode = PBD_MASS_TOTAL;
		bd.mass = (pbd_real)0.1;
		bd.thickness = thick;
		bd.edge_contacts = edges;
		bd.velocity = pbd_v3(0, k == 0 ? -6 : 6, 0);
		assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
		pbd_mesh_free(&m);
	}
	double least = INFINITY;
	*contacts = *others = 0;
	for (int s = 0; s < 30; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		*contacts += w->pcol->nee;
		*others += w->pcol->npairs + w->pcol->nvt;
		/* Every edge of A's triangles against every edge of B's. */
		double step_least = INFINITY;
		for (uint32_t t = 0; t < w->nt; ++t)
			for (uint32_t u = 0; u < w->nt; ++u)
				for (int i = 0; i < 3; ++i)
					for (int j = 0; j < 3; ++j) {
						const uint32_t a0 = w->tri[3 * t + (uint32_t)i], a1 = w->tri[3 * t + (uint32_t)(i + 1) % 3];
						const uint32_t b0 = w->tri[3 * u + (uint32_t)j], b1 = w->tri[3 * u + (uint32_t)(j + 1) % 3];
						if (a0 >= 8 || a1 >= 8 || b0 < 8 || b1 < 8) continue;
						pbd_real ss, tt;
						pbd_closest_segments(w->x[a0], w->x[a1], w->x[b0], w->x[b1], &ss, &tt);
						step_least = fmin(step_least,
						                  segment_gap(w->x[a0], w->x[a1], w->x[b0], w->x[b1], (double)ss, (double)tt));
					}
		least = fmin(least, step_least);
	}
	/* A's lower edge is vertices 0..3, B's upper edge 12..15. */
	double a_low = 0, b_high = 0;
	for (uint32_t i = 0; i < 4; ++i) a_low += (double)w->x[i].y / 4, b_high += (double)w->x[12 + i].y / 4;
	*crossed = a_low < b_high;
	assert_true(tp_all_finite(w));
	pbd_world_destroy(w);
	return least;
}

static void test_edges_cross_edge_on(void** state) {
	(void)state;
	bool with_crossed, without_crossed;
	uint32_t with_contacts, without_contacts, with_others, without_others;
	const double with = crossing_strips(true, &with_crossed, &with_contacts, &with_others);
	const double without = crossing_strips(false, &without_crossed, &without_contacts, &without_others);
	printf("  two strips crossing edge-on at 12 m/s (thickness 0.02 m): closest edges %.4g m apart with edge "
	       "contacts (%u contact-substeps), %s; without: %.4g m, %s; particle pairs and face contacts: %u, %u\n",
	       with, with_contacts, with_crossed ? "passed through" : "held apart", without,
	       without_crossed ? "passed through" : "held apart", with_others, without_others);
	assert_int_equal(with_others + without_others, 0); /* nothing else acts */
	assert_true(with_contacts > 0);
	assert_false(with_crossed);
	assert_true(with >= 0.9 * 0.02);
	assert_true(without_crossed); /* the control: without edge contacts they pass through */
	assert_int_equal(without_contacts, 0);
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
	printf("  %d random balls: %u pairs found by the hash, %u by brute force\n", N, w->pcol->npairs, brute);
	assert_int_equal(w->pcol->npairs, brute);
	for (uint32_t k = 0; k < w->pcol->npairs; ++k) {
		const pbd_pair_c* p = &w->pcol->pairs[k];
		assert_true(p->a < p->b);
		assert_true(tp_dist(x[p->a], x[p->b]) < 2 * (double)p->dist);
	}
	pbd_world_destroy(w);
}

/* Same input, bit-identical output. The edge list holds each triangle edge once, in increasing
 * order, and each edge's contacts come sorted by the other edge: the projection order follows
 * the edge list, not the hash's layout. */
static void test_deterministic(void** state) {
	(void)state;
	uint64_t hash[2];
	uint32_t contacts[2] = {0, 0};
	for (int run = 0; run < 2; ++run) {
		pbd_world* w = world_with(pbd_v3(0, (pbd_real)-9.81, 0), 2, 6);
		const pbd_collider_def floor = pbd_collider_def_default();
		assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &floor)));
		add_cloth(w, 12, 1, pbd_v3((pbd_real)-0.5, (pbd_real)0.3, (pbd_real)-0.5), (pbd_real)0.04, true, NULL);
		add_cloth(w, 12, 1, pbd_v3((pbd_real)-0.4, (pbd_real)0.4, (pbd_real)-0.6), (pbd_real)0.04, true, NULL);
		for (int s = 0; s < 60; ++s) {
			assert_int_equal(pbd_world_step(w), PBD_OK);
			const pbd_particle_collision* c = w->pcol;
			contacts[run] += c->nee;
			for (uint32_t k = 1; k < c->nee; ++k) {
				const pbd_ee_c *p = &c->ee[k - 1], *e = &c->ee[k];
				const uint64_t kp = (uint64_t)p->a << 32 | p->b, ke = (uint64_t)e->a << 32 | e->b;
				const uint64_t op = (uint64_t)p->c << 32 | p->d, oe = (uint64_t)e->c << 32 | e->d;
				assert_true(kp < ke || (kp == ke && op < oe));
				assert_true(ke < oe); /* each pair once, the lower edge first */
			}
		}
		/* 2 cloths of 11 x 11 quads, one diagonal each: 2 (2 x 11 x 12 + 121) edges. */
		assert_int_equal(w->pcol->nedge, 2 * (2 * 11 * 12 + 121));
		for (uint32_t e = 0; e < w->pcol->nedge; ++e) {
			const uint32_t* p = &w->pcol->edge[2 * e];
			assert_true(p[0] < p[1]);
			if (e > 0) assert_true(p[-2] < p[0] || (p[-2] == p[0] && p[-1] < p[1]));
		}
		hash[run] = pbd_world_hash(w);
		pbd_world_destroy(w);
	}
	printf("  two self-colliding cloths: %u edge-edge contact-substeps, runs bit-identical: %s\n", contacts[0],
	       hash[0] == hash[1] ? "yes" : "no");
	assert_true(contacts[0] > 0);
	assert_int_equal(contacts[0], contacts[1]);
	assert_true(hash[0] == hash[1]);
}

/* The self-contacts are projected by region on the threads (contact_regions.c): after every
 * substep's searches each contact is listed once, the regions of one grid share no particle (so
 * that threads may project them side by side), each region keeps list order, and in a folded
 * cloth lying on the floor nearly all contacts fall within a region, not in the serial rest. */
static void test_contact_regions(void** state) {
	(void)state;
	pbd_world* w = world_with(pbd_v3(0, (pbd_real)-9.81, 0), 2, 4);
	const pbd_collider_def floor = pbd_collider_def_default();
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &floor)));
	add_folded_cloth(w, 24, 1, (pbd_real)0.02, (pbd_real)0.08, (pbd_real)0.03, true);
	uint64_t listed = 0, rest = 0;
	for (int s = 0; s < 40; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_particle_collision* c = w->pcol;
		const pbd_contact_regions* r = &c->regions;
		const uint32_t total = c->npairs + c->nvt + c->nee;
		assert_true(r->listed);
		assert_int_equal(r->start[PBD_CONTACT_REGIONS + PBD_CONTACT_REGIONS_2 + 1], total);
		uint8_t* seen = (uint8_t*)calloc(total + 1, 1);
		uint32_t* owner = (uint32_t*)malloc(w->np * sizeof *owner);
		assert_non_null(seen);
		assert_non_null(owner);
		const uint32_t base[3] = {0, c->npairs, c->npairs + c->nvt};
		for (int grid = 0; grid < 2; ++grid) {
			const uint32_t first = grid ? PBD_CONTACT_REGIONS : 0,
			               count = grid ? PBD_CONTACT_REGIONS_2 : PBD_CONTACT_REGIONS;
			memset(owner, 0xff, w->np * sizeof *owner);
			for (uint32_t g = first; g < first + count; ++g)
				for (uint32_t k = r->start[g]; k < r->start[g + 1]; ++k) {
					const uint32_t ref = r->ref[k], kind = ref >> PBD_CONTACT_REF_SHIFT;
					if (k > r->start[g]) assert_true(r->ref[k - 1] < ref); /* list order */
					const uint32_t flat = base[kind] + (ref & PBD_CONTACT_REF_INDEX);
					assert_int_equal(seen[flat], 0);
					seen[flat] = 1;
					uint32_t p[4];
					const int m = pbd_contact_particles(w, ref, p);
					for (int i = 0; i < m; ++i) {
						assert_true(owner[p[i]] == UINT32_MAX || owner[p[i]] == g);
						owner[p[i]] = g;
					}
				}
		}
		const uint32_t from = r->start[PBD_CONTACT_REGIONS + PBD_CONTACT_REGIONS_2];
		for (uint32_t k = from; k < total; ++k) {
			const uint32_t ref = r->ref[k];
			const uint32_t flat = base[ref >> PBD_CONTACT_REF_SHIFT] + (ref & PBD_CONTACT_REF_INDEX);
			assert_int_equal(seen[flat], 0);
			seen[flat] = 1;
		}
		for (uint32_t k = 0; k < total; ++k) assert_int_equal(seen[k], 1);
		listed += total;
		rest += total - from;
		free(seen);
		free(owner);
	}
	printf("  a folded 24 x 24 cloth: %llu self-contact-substeps, %.2f %% of them projected alone, the rest by "
	       "region\n",
	       (unsigned long long)listed, 100.0 * (double)rest / (double)listed);
	assert_true(listed > 1000);
	assert_true((double)rest < 0.1 * (double)listed);
	pbd_world_destroy(w);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cloth_on_cloth),
	    cmocka_unit_test(test_cloth_folds_on_itself),
	    cmocka_unit_test(test_stretched_fold_snaps_shut),
	    cmocka_unit_test(test_self_contacts_keep_momentum),
	    cmocka_unit_test(test_segment_closest_points),
	    cmocka_unit_test(test_edge_edge_projection),
	    cmocka_unit_test(test_edges_cross_edge_on),
	    cmocka_unit_test(test_hash_equals_brute_force),
	    cmocka_unit_test(test_deterministic),
	    cmocka_unit_test(test_contact_regions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
