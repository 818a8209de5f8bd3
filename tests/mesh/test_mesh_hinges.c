/* pbd_mesh_hinges: the interior edges of grids (3 (nx-1)(ny-1) - (nx-1) - (ny-1) of them) with
 * each hinge made of two mesh triangles, non-manifold edges and doubled triangles skipped and
 * counted, any orientation of the triangles, the capacity protocol, and refusals. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_physics.h"

/* Whether (a, b, c) is triangle t of the mesh up to rotation (same orientation). */
static bool same_oriented(const uint32_t* t, uint32_t a, uint32_t b, uint32_t c) {
	for (int r = 0; r < 3; ++r)
		if (t[r] == a && t[(r + 1) % 3] == b && t[(r + 2) % 3] == c) return true;
	return false;
}

/* The index of the mesh triangle (a, b, c) in either orientation, or UINT32_MAX. */
static uint32_t find_triangle(const uint32_t* tri, uint32_t nt, uint32_t a, uint32_t b, uint32_t c, bool* oriented) {
	for (uint32_t t = 0; t < nt; ++t) {
		if (same_oriented(tri + 3 * t, a, b, c)) {
			*oriented = true;
			return t;
		}
		if (same_oriented(tri + 3 * t, b, a, c)) {
			*oriented = false;
			return t;
		}
	}
	return UINT32_MAX;
}

static uint32_t* hinges_of(const pbd_mesh* m, uint32_t* n, uint32_t* skipped) {
	pbd_error err;
	assert_int_equal(pbd_mesh_hinges(m, NULL, 0, n, skipped, &err), PBD_OK);
	uint32_t* h = malloc((*n ? *n : 1) * 4 * sizeof *h);
	assert_int_equal(pbd_mesh_hinges(m, h, *n, n, skipped, &err), PBD_OK);
	return h;
}

static void test_grid_hinges(void** state) {
	(void)state;
	const uint32_t sizes[][2] = {{2, 2}, {2, 3}, {3, 2}, {5, 7}, {21, 21}};
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
		const uint32_t nx = sizes[s][0], ny = sizes[s][1];
		pbd_mesh m;
		tp_grid(&m, nx, ny, 1, pbd_v3(0, 0, 0), 2, true);
		uint32_t n, skipped;
		uint32_t* h = hinges_of(&m, &n, &skipped);
		assert_int_equal(n, 3 * (nx - 1) * (ny - 1) - (nx - 1) - (ny - 1));
		assert_int_equal(skipped, 0);
		uint64_t* keys = malloc((n ? n : 1) * sizeof *keys);
		for (uint32_t k = 0; k < n; ++k) {
			const uint32_t* q = h + 4 * k;
			bool o1 = false, o2 = false;
			/* (x0, x1, x2) is a triangle with its own orientation, (x1, x0, x3) the other (the grid is
			 * oriented consistently), and they are different triangles. */
			const uint32_t t1 = find_triangle(m.triangles, m.triangle_count, q[0], q[1], q[2], &o1);
			const uint32_t t2 = find_triangle(m.triangles, m.triangle_count, q[1], q[0], q[3], &o2);
			assert_true(t1 != UINT32_MAX && t2 != UINT32_MAX && t1 != t2);
			assert_true(o1 && o2);
			assert_true(t1 < t2); /* the first is the lower triangle */
			const uint32_t a = q[0] < q[1] ? q[0] : q[1], b = q[0] < q[1] ? q[1] : q[0];
			keys[k] = ((uint64_t)a << 32) | b;
			if (k) assert_true(keys[k] > keys[k - 1]); /* one per edge, in edge order */
		}
		/* Every bend edge pbd_mesh_from_triangles makes spans the wings of a hinge. */
		pbd_mesh tm;
		pbd_error err;
		assert_int_equal(
		    pbd_mesh_from_triangles(m.vertex_count, m.positions, m.triangle_count, m.triangles, true, &tm, &err),
		    PBD_OK);
		for (uint32_t e = 0; e < tm.edge_count; ++e) {
			if (tm.edge_kinds[e] != PBD_EDGE_BEND) continue;
			bool found = false;
			for (uint32_t k = 0; k < n && !found; ++k) {
				const uint32_t* q = h + 4 * k;
				found = (q[2] == tm.edges[2 * e] && q[3] == tm.edges[2 * e + 1]) ||
				        (q[3] == tm.edges[2 * e] && q[2] == tm.edges[2 * e + 1]);
			}
			assert_true(found);
		}
		pbd_mesh_free(&tm);
		free(keys);
		free(h);
		pbd_mesh_free(&m);
	}
}

/* Three triangles on one edge (a book of three pages) and a fourth beside the first page:
 * the shared edge is skipped and counted; the page's other edge makes the only hinge. A
 * triangle given twice: its three edges have two triangles with the same third vertex. */
static void test_non_manifold(void** state) {
	(void)state;
	pbd_vec3 pos[6] = {{0, 0, 0}, {1, 0, 0}, {0.5f, 1, 0}, {0.5f, -1, 0}, {0.5f, 0, 1}, {1.5f, 1, 0}};
	uint32_t tri[] = {0, 1, 2, 1, 0, 3, 0, 1, 4, 1, 5, 2};
	pbd_mesh m;
	memset(&m, 0, sizeof m);
	m.vertex_count = 6;
	m.positions = pos;
	m.triangle_count = 4;
	m.triangles = tri;
	uint32_t n, skipped;
	uint32_t* h = hinges_of(&m, &n, &skipped);
	assert_int_equal(n, 1);
	assert_int_equal(skipped, 1);
	/* edge 1-2 of triangles 0 (0, 1, 2) and 3 (1, 5, 2) */
	const uint32_t want[4] = {1, 2, 0, 5};
	assert_memory_equal(h, want, sizeof want);
	free(h);

	uint32_t twice[] = {0, 1, 2, 0, 1, 2, 1, 0, 3};
	m.triangles = twice;
	m.triangle_count = 3;
	h = hinges_of(&m, &n, &skipped);
	assert_int_equal(n, 0);
	assert_int_equal(skipped, 3);
	free(h);
}

/* Two triangles sharing an edge in the same direction (inconsistent orientation): still a hinge,
 * (x0, x1, x2) the first triangle as given, x3 the third vertex of the second. */
static void test_inconsistent_orientation(void** state) {
	(void)state;
	pbd_vec3 pos[4] = {{0, 0, 0}, {1, 0, 0}, {0.5f, 1, 0}, {0.5f, -1, 0}};
	uint32_t tri[] = {2, 0, 1, 0, 1, 3}; /* both run 0 -> 1 */
	pbd_mesh m;
	memset(&m, 0, sizeof m);
	m.vertex_count = 4;
	m.positions = pos;
	m.triangle_count = 2;
	m.triangles = tri;
	uint32_t n, skipped;
	uint32_t* h = hinges_of(&m, &n, &skipped);
	assert_int_equal(n, 1);
	assert_int_equal(skipped, 0);
	const uint32_t want[4] = {0, 1, 2, 3};
	assert_memory_equal(h, want, sizeof want);
	free(h);
	/* The hinge is the same shape whichever way the second triangle runs: a flat pair is a flat
	 * hinge (angle 0), so its rest angle does not depend on the mesh's orientation. */
	uint32_t tri2[] = {2, 0, 1, 1, 0, 3};
	m.triangles = tri2;
	h = hinges_of(&m, &n, &skipped);
	assert_memory_equal(h, want, sizeof want);
	free(h);
}

/* Counting with out4 NULL, a short capacity refused with the count reported, empty meshes,
 * refusals of bad triangles. */
static void test_protocol_and_refusals(void** state) {
	(void)state;
	pbd_mesh m;
	tp_grid(&m, 4, 4, 1, pbd_v3(0, 0, 0), 1, false);
	pbd_error err;
	uint32_t n = 0, skipped = 7;
	assert_int_equal(pbd_mesh_hinges(&m, NULL, 0, &n, &skipped, &err), PBD_OK);
	assert_int_equal(n, 21);
	assert_int_equal(skipped, 0);
	uint32_t buf[4 * 21];
	assert_int_equal(pbd_mesh_hinges(&m, buf, 20, &n, NULL, &err), PBD_ERR_OUT_OF_RANGE);
	assert_int_equal(n, 21);
	assert_non_null(strstr(err.message, "pbd_mesh_hinges: the mesh has 21 hinges, room for 20"));
	assert_int_equal(pbd_mesh_hinges(&m, buf, 21, &n, NULL, &err), PBD_OK);
	assert_int_equal(pbd_mesh_hinges(&m, buf, 21, NULL, NULL, &err), PBD_ERR_INVALID_ARGUMENT);
	assert_int_equal(pbd_mesh_hinges(NULL, buf, 21, &n, NULL, &err), PBD_ERR_INVALID_ARGUMENT);
	m.triangles[4] = 99;
	assert_int_equal(pbd_mesh_hinges(&m, buf, 21, &n, NULL, &err), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(err.message, "triangle 1: vertex index 99 out of range"));
	m.triangles[4] = m.triangles[3];
	assert_int_equal(pbd_mesh_hinges(&m, buf, 21, &n, NULL, &err), PBD_ERR_DEGENERATE);
	assert_non_null(strstr(err.message, "triangle 1 repeats a vertex"));
	pbd_mesh_free(&m);
	pbd_mesh rope;
	pbd_rope_def rd = pbd_rope_def_default();
	assert_int_equal(pbd_mesh_rope(&rd, &rope, &err), PBD_OK);
	assert_int_equal(pbd_mesh_hinges(&rope, NULL, 0, &n, &skipped, &err), PBD_OK);
	assert_int_equal(n, 0);
	pbd_mesh_free(&rope);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_grid_hinges),
	    cmocka_unit_test(test_non_manifold),
	    cmocka_unit_test(test_inconsistent_orientation),
	    cmocka_unit_test(test_protocol_and_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
