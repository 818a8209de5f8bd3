/* Mesh builders and bodies: grid and rope counts and geometry, unique-edge extraction and bend
 * pairs from triangles, the OBJ reader (its accepted forms and its error messages with file
 * and line), and the mass rules of pbd_soft_create. Expected counts are worked out by hand in
 * the comments, not recomputed with the builder's own formula. */
#define _POSIX_C_SOURCE 200809L
#include <fenv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mesh/mesh.h" /* the OBJ reader's limits, to reach them without gigabytes of input */
#include "test_physics.h"

static uint32_t count_kind(const pbd_mesh* m, pbd_edge_kind kind) {
	uint32_t n = 0;
	for (uint32_t e = 0; e < m->edge_count; ++e) n += (m->edge_kinds ? m->edge_kinds[e] : PBD_EDGE_STRUCTURAL) == kind;
	return n;
}

static int cmp_u64(const void* a, const void* b) {
	const uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
	return (x > y) - (x < y);
}

/* Every edge joins two distinct vertices in range, and no vertex pair appears twice. */
static void check_edges_unique(const pbd_mesh* m) {
	uint64_t* keys = (uint64_t*)malloc((m->edge_count + 1) * sizeof *keys);
	for (uint32_t e = 0; e < m->edge_count; ++e) {
		const uint32_t a = m->edges[2 * e], b = m->edges[2 * e + 1];
		assert_true(a < m->vertex_count && b < m->vertex_count);
		assert_true(a != b);
		keys[e] = a < b ? ((uint64_t)a << 32 | b) : ((uint64_t)b << 32 | a);
	}
	qsort(keys, m->edge_count, sizeof *keys, cmp_u64);
	for (uint32_t e = 1; e < m->edge_count; ++e) assert_true(keys[e] != keys[e - 1]);
	free(keys);
}

static bool has_edge(const pbd_mesh* m, uint32_t a, uint32_t b, pbd_edge_kind kind) {
	for (uint32_t e = 0; e < m->edge_count; ++e) {
		const uint32_t p = m->edges[2 * e], q = m->edges[2 * e + 1];
		if (((p == a && q == b) || (p == b && q == a)) && (!m->edge_kinds || m->edge_kinds[e] == kind)) return true;
	}
	return false;
}

/* ---- grid ------------------------------------------------------------------------------ */

/* 5 x 4 vertices over 4 m x 4.5 m: cells 1 m x 1.5 m, 12 cells.
 * structural: 4 per row x 4 rows + 5 per column x 3 = 31; shear: 12 per diagonal;
 * bend: 3 per row x 4 + 5 per column x 2 = 22. Edge lengths tell the kinds apart:
 * structural 1 or 1.5, shear sqrt(3.25), bend 2 or 3. */
static void test_grid_counts(void** state) {
	(void)state;
	const uint32_t shear_want[3] = {0, 12, 24};
	for (int diag = 0; diag <= 2; ++diag)
		for (int bend = 0; bend <= 1; ++bend) {
			pbd_grid_def gd = pbd_grid_def_default();
			gd.nx = 5;
			gd.ny = 4;
			gd.size_u = 4;
			gd.size_v = (pbd_real)4.5;
			gd.origin = pbd_v3(1, 2, 3);
			gd.axis_u = pbd_v3(0, 0, 1);
			gd.axis_v = pbd_v3(1, 0, 0);
			gd.diagonals = diag;
			gd.bend = bend;
			pbd_mesh m;
			pbd_error err;
			assert_int_equal(pbd_mesh_grid(&gd, &m, &err), PBD_OK);
			assert_true(m.owned);
			assert_int_equal(m.vertex_count, 20);
			assert_int_equal(m.triangle_count, 24);
			assert_int_equal(count_kind(&m, PBD_EDGE_STRUCTURAL), 31);
			assert_int_equal(count_kind(&m, PBD_EDGE_SHEAR), shear_want[diag]);
			assert_int_equal(count_kind(&m, PBD_EDGE_BEND), bend ? 22 : 0);
			assert_int_equal(m.edge_count, 31 + shear_want[diag] + (bend ? 22u : 0u));
			check_edges_unique(&m);
			for (uint32_t e = 0; e < m.edge_count; ++e) {
				const double len = tp_dist(m.positions[m.edges[2 * e]], m.positions[m.edges[2 * e + 1]]);
				const double tol = 1e-5;
				switch (m.edge_kinds[e]) {
				case PBD_EDGE_STRUCTURAL:
					assert_true(fabs(len - 1) < tol || fabs(len - 1.5) < tol);
					break;
				case PBD_EDGE_SHEAR:
					assert_near(len, sqrt(3.25), tol);
					break;
				case PBD_EDGE_BEND:
					assert_true(fabs(len - 2) < tol || fabs(len - 3) < tol);
					break;
				default:
					fail();
				}
			}
			/* Vertex (i, j) = origin + i * 1 m * axis_u + j * 1.5 m * axis_v; index j * nx + i. */
			const pbd_vec3 v13 = m.positions[3 * 5 + 1];
			assert_near(v13.x, 1 + 3 * 1.5, 1e-6);
			assert_near(v13.y, 2, 1e-6);
			assert_near(v13.z, 3 + 1, 1e-6);
			/* Every triangle has area 0.75 and faces axis_u x axis_v = +y (counter-clockwise). */
			for (uint32_t t = 0; t < m.triangle_count; ++t) {
				const pbd_vec3 a = m.positions[m.triangles[3 * t]], b = m.positions[m.triangles[3 * t + 1]],
				               c = m.positions[m.triangles[3 * t + 2]];
				const pbd_vec3 n = pbd_v3_cross(pbd_v3_sub(b, a), pbd_v3_sub(c, a));
				assert_near(0.5 * tp_len(n), 0.75, 1e-5);
				assert_true(n.y > 0);
			}
			/* With one diagonal, the shear edges are the triangles' diagonals (i,j)-(i+1,j+1). */
			if (diag == 1) assert_true(has_edge(&m, 0, 6, PBD_EDGE_SHEAR) && !has_edge(&m, 1, 5, PBD_EDGE_SHEAR));
			if (diag == 2) assert_true(has_edge(&m, 0, 6, PBD_EDGE_SHEAR) && has_edge(&m, 1, 5, PBD_EDGE_SHEAR));
			pbd_mesh_free(&m);
			assert_null(m.positions);
			assert_int_equal(m.vertex_count, 0);
		}
}

/* Small grids: 2 x 2 has 4 structural edges, 1 or 2 shear, and no room for bend edges;
 * 3 x 2 has 2 bend edges (one per row). */
static void test_grid_small(void** state) {
	(void)state;
	pbd_grid_def gd = pbd_grid_def_default();
	gd.bend = true;
	gd.diagonals = 2;
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(pbd_mesh_grid(&gd, &m, &err), PBD_OK);
	assert_int_equal(m.vertex_count, 4);
	assert_int_equal(m.triangle_count, 2);
	assert_int_equal(m.edge_count, 6);
	assert_int_equal(count_kind(&m, PBD_EDGE_BEND), 0);
	pbd_mesh_free(&m);
	gd.nx = 3;
	assert_int_equal(pbd_mesh_grid(&gd, &m, &err), PBD_OK);
	assert_int_equal(count_kind(&m, PBD_EDGE_BEND), 2);
	assert_true(has_edge(&m, 0, 2, PBD_EDGE_BEND) && has_edge(&m, 3, 5, PBD_EDGE_BEND));
	pbd_mesh_free(&m);
}

/* The grid's structural and shear edges (one diagonal) are exactly the edges of its triangles:
 * the triangle builder must find the same set. */
static void test_grid_edges_match_triangles(void** state) {
	(void)state;
	pbd_mesh g, t;
	tp_grid(&g, 7, 5, 1, pbd_v3(0, 0, 0), 1, false);
	pbd_error err;
	assert_int_equal(
	    pbd_mesh_from_triangles(g.vertex_count, g.positions, g.triangle_count, g.triangles, false, &t, &err), PBD_OK);
	assert_int_equal(t.edge_count, g.edge_count);
	for (uint32_t e = 0; e < g.edge_count; ++e)
		assert_true(has_edge(&t, g.edges[2 * e], g.edges[2 * e + 1], PBD_EDGE_STRUCTURAL));
	pbd_mesh_free(&g);
	pbd_mesh_free(&t);
}

static void test_grid_errors(void** state) {
	(void)state;
	pbd_mesh m;
	pbd_error err;
	pbd_grid_def gd;
	memset(&gd, 0, sizeof gd);
	gd.nx = gd.ny = 4;
	assert_int_equal(pbd_mesh_grid(&gd, &m, &err), PBD_ERR_UNINITIALIZED_DEF);
	gd = pbd_grid_def_default();
	gd.nx = 1;
	err.message[0] = 0;
	assert_int_equal(pbd_mesh_grid(&gd, &m, &err), PBD_ERR_OUT_OF_RANGE);
	assert_true(strlen(err.message) > 0);
	gd = pbd_grid_def_default();
	gd.diagonals = 3;
	assert_int_equal(pbd_mesh_grid(&gd, &m, &err), PBD_ERR_OUT_OF_RANGE);
	gd = pbd_grid_def_default();
	gd.size_u = 0;
	assert_int_equal(pbd_mesh_grid(&gd, &m, &err), PBD_ERR_OUT_OF_RANGE);
	gd = pbd_grid_def_default();
	gd.axis_v = pbd_v3(2, 0, 0); /* parallel to axis_u */
	assert_int_equal(pbd_mesh_grid(&gd, &m, &err), PBD_ERR_DEGENERATE);
	gd = pbd_grid_def_default();
	gd.axis_u = pbd_v3(0, 0, 0);
	assert_int_equal(pbd_mesh_grid(&gd, &m, &err), PBD_ERR_DEGENERATE);
	gd = pbd_grid_def_default();
	gd.origin.x = (pbd_real)INFINITY;
	assert_int_equal(pbd_mesh_grid(&gd, &m, &err), PBD_ERR_NOT_FINITE);
	gd = pbd_grid_def_default();
	gd.nx = gd.ny = 1u << 13; /* 2^26 vertices, over the limit */
	assert_int_equal(pbd_mesh_grid(&gd, &m, &err), PBD_ERR_OUT_OF_RANGE);
	assert_int_equal(pbd_mesh_grid(NULL, &m, &err), PBD_ERR_INVALID_ARGUMENT);
	assert_int_equal(pbd_mesh_grid(&gd, NULL, NULL), PBD_ERR_INVALID_ARGUMENT);
	/* A failed build leaves an empty mesh that is safe to free. */
	pbd_mesh_free(&m);
}

/* ---- rope ------------------------------------------------------------------------------ */

static void test_rope(void** state) {
	(void)state;
	pbd_rope_def rd = pbd_rope_def_default();
	rd.segments = 5;
	rd.start = pbd_v3(0, 1, 0);
	rd.end = pbd_v3(0, 1, 2);
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(pbd_mesh_rope(&rd, &m, &err), PBD_OK);
	assert_int_equal(m.vertex_count, 6);
	assert_int_equal(m.edge_count, 5);
	assert_int_equal(m.triangle_count, 0);
	assert_near(m.positions[3].z, 1.2, 1e-6);
	assert_near(m.positions[5].z, 2.0, 1e-6);
	for (uint32_t e = 0; e < 5; ++e)
		assert_near(tp_dist(m.positions[m.edges[2 * e]], m.positions[m.edges[2 * e + 1]]), 0.4, 1e-6);
	pbd_mesh_free(&m);
	/* With bend: 6 vertices, 5 links + 4 links two apart. */
	rd.bend = true;
	assert_int_equal(pbd_mesh_rope(&rd, &m, &err), PBD_OK);
	assert_int_equal(m.edge_count, 9);
	assert_int_equal(count_kind(&m, PBD_EDGE_STRUCTURAL), 5);
	assert_int_equal(count_kind(&m, PBD_EDGE_BEND), 4);
	assert_true(has_edge(&m, 3, 5, PBD_EDGE_BEND));
	check_edges_unique(&m);
	pbd_mesh_free(&m);
	/* One segment: 2 vertices, 1 link, no room for a bend link. */
	rd.segments = 1;
	assert_int_equal(pbd_mesh_rope(&rd, &m, &err), PBD_OK);
	assert_int_equal(m.vertex_count, 2);
	assert_int_equal(m.edge_count, 1);
	pbd_mesh_free(&m);
	/* Errors. */
	rd.segments = 0;
	assert_int_equal(pbd_mesh_rope(&rd, &m, &err), PBD_ERR_OUT_OF_RANGE);
	rd = pbd_rope_def_default();
	rd.end = rd.start;
	assert_int_equal(pbd_mesh_rope(&rd, &m, &err), PBD_ERR_DEGENERATE);
	rd = pbd_rope_def_default();
	rd.start.y = (pbd_real)NAN; /* traps stay on: the builder must test finiteness before comparing */
	assert_int_equal(pbd_mesh_rope(&rd, &m, &err), PBD_ERR_NOT_FINITE);
	rd.cookie = 0;
	assert_int_equal(pbd_mesh_rope(&rd, &m, &err), PBD_ERR_UNINITIALIZED_DEF);
}

/* ---- triangles ------------------------------------------------------------------------- */

static const pbd_vec3 quad_v[4] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
static const uint32_t quad_t[6] = {0, 1, 2, 0, 2, 3};

static void test_from_triangles_quad(void** state) {
	(void)state;
	pbd_mesh m;
	pbd_error err;
	/* 6 half-edges, the diagonal 0-2 shared: 5 edges. */
	assert_int_equal(pbd_mesh_from_triangles(4, quad_v, 2, quad_t, false, &m, &err), PBD_OK);
	assert_int_equal(m.vertex_count, 4);
	assert_int_equal(m.triangle_count, 2);
	assert_int_equal(m.edge_count, 5);
	check_edges_unique(&m);
	assert_true(has_edge(&m, 0, 2, PBD_EDGE_STRUCTURAL));
	assert_false(has_edge(&m, 1, 3, PBD_EDGE_STRUCTURAL));
	assert_memory_equal(m.triangles, quad_t, sizeof quad_t);
	pbd_mesh_free(&m);
	/* With bend: the one interior edge 0-2 gives the bend pair of its opposite vertices, 1-3. */
	assert_int_equal(pbd_mesh_from_triangles(4, quad_v, 2, quad_t, true, &m, &err), PBD_OK);
	assert_int_equal(m.edge_count, 6);
	assert_int_equal(count_kind(&m, PBD_EDGE_BEND), 1);
	assert_true(has_edge(&m, 1, 3, PBD_EDGE_BEND));
	pbd_mesh_free(&m);
}

/* A closed tetrahedron surface: 4 faces x 3 half-edges = 12, each edge shared twice: 6 edges.
 * Every edge's two opposite vertices are joined by another edge already, so bend adds none. */
static void test_from_triangles_tetrahedron(void** state) {
	(void)state;
	const pbd_vec3 v[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
	const uint32_t t[12] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
	pbd_mesh m;
	pbd_error err;
	for (int bend = 0; bend <= 1; ++bend) {
		assert_int_equal(pbd_mesh_from_triangles(4, v, 4, t, bend, &m, &err), PBD_OK);
		assert_int_equal(m.edge_count, 6);
		assert_int_equal(count_kind(&m, PBD_EDGE_STRUCTURAL), 6);
		check_edges_unique(&m);
		pbd_mesh_free(&m);
	}
}

/* An octahedron (+x -x +y -y +z -z): 8 faces, 12 edges. The two faces on edge (+x,+y) have
 * opposite vertices +z and -z: every bend pair is one of the 3 antipodal pairs, each found 4
 * times; de-duplicated, bend adds exactly 3 edges. */
static void test_from_triangles_octahedron(void** state) {
	(void)state;
	const pbd_vec3 v[6] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
	const uint32_t t[24] = {0, 2, 4, 2, 1, 4, 1, 3, 4, 3, 0, 4, 2, 0, 5, 1, 2, 5, 3, 1, 5, 0, 3, 5};
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(pbd_mesh_from_triangles(6, v, 8, t, false, &m, &err), PBD_OK);
	assert_int_equal(m.edge_count, 12);
	pbd_mesh_free(&m);
	assert_int_equal(pbd_mesh_from_triangles(6, v, 8, t, true, &m, &err), PBD_OK);
	assert_int_equal(m.edge_count, 15);
	assert_int_equal(count_kind(&m, PBD_EDGE_BEND), 3);
	assert_true(has_edge(&m, 0, 1, PBD_EDGE_BEND) && has_edge(&m, 2, 3, PBD_EDGE_BEND) &&
	            has_edge(&m, 4, 5, PBD_EDGE_BEND));
	check_edges_unique(&m);
	pbd_mesh_free(&m);
}

static void test_from_triangles_errors(void** state) {
	(void)state;
	pbd_mesh m;
	pbd_error err;
	const uint32_t out_of_range[3] = {0, 1, 4};
	err.message[0] = 0;
	assert_int_equal(pbd_mesh_from_triangles(4, quad_v, 1, out_of_range, false, &m, &err), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(err.message, "4"));
	const uint32_t repeated[3] = {0, 1, 1};
	err.message[0] = 0;
	assert_int_equal(pbd_mesh_from_triangles(4, quad_v, 1, repeated, false, &m, &err), PBD_ERR_DEGENERATE);
	assert_true(strlen(err.message) > 0);
	const pbd_vec3 line[3] = {{0, 0, 0}, {1, 1, 1}, {2, 2, 2}};
	const uint32_t tri[3] = {0, 1, 2};
	err.message[0] = 0;
	assert_int_equal(pbd_mesh_from_triangles(3, line, 1, tri, false, &m, &err), PBD_ERR_DEGENERATE);
	assert_true(strlen(err.message) > 0);
	/* Degeneracy is relative to the size: a 1e-3 m triangle is fine, a sliver is not. */
	const pbd_vec3 small[3] = {{0, 0, 0}, {(pbd_real)1e-3, 0, 0}, {0, (pbd_real)1e-3, 0}};
	assert_int_equal(pbd_mesh_from_triangles(3, small, 1, tri, false, &m, &err), PBD_OK);
	pbd_mesh_free(&m);
	const pbd_vec3 sliver[3] = {{0, 0, 0}, {1, 0, 0}, {(pbd_real)0.5, (pbd_real)TEST_TOL(1e-15, 1e-9), 0}};
	assert_int_equal(pbd_mesh_from_triangles(3, sliver, 1, tri, false, &m, &err), PBD_ERR_DEGENERATE);
	pbd_vec3 bad[4] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
	bad[3].z = (pbd_real)INFINITY;
	err.message[0] = 0;
	assert_int_equal(pbd_mesh_from_triangles(4, bad, 2, quad_t, false, &m, &err), PBD_ERR_NOT_FINITE);
	assert_true(strlen(err.message) > 0);
	assert_int_equal(pbd_mesh_from_triangles(4, quad_v, 0, quad_t, false, &m, &err), PBD_ERR_INVALID_ARGUMENT);
	assert_int_equal(pbd_mesh_from_triangles(4, NULL, 2, quad_t, false, &m, &err), PBD_ERR_INVALID_ARGUMENT);
	assert_int_equal(pbd_mesh_from_triangles(4, quad_v, 2, NULL, false, &m, &err), PBD_ERR_INVALID_ARGUMENT);
	assert_int_equal(pbd_mesh_from_triangles(4, quad_v, 2, quad_t, false, NULL, &err), PBD_ERR_INVALID_ARGUMENT);
	/* A NULL error holder is allowed. */
	assert_int_equal(pbd_mesh_from_triangles(4, quad_v, 1, out_of_range, false, &m, NULL), PBD_ERR_OUT_OF_RANGE);
	pbd_mesh_free(&m);
}

/* ---- OBJ ------------------------------------------------------------------------------- */

/* Writes `text` to a fresh temporary file; its path goes to path[64]. */
static void write_temp(const char* text, char path[64]) {
	snprintf(path, 64, "/tmp/pbd_test_mesh_XXXXXX");
	const int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE* f = fdopen(fd, "wb");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void test_obj_load(void** state) {
	(void)state;
	/* A quad in v/vt/vn form (fanned into 2 triangles), then a triangle by negative indices in
	 * mixed forms, a comment after a face, other records to skip, and CRLF line ends. */
	const char* text = "# test mesh\r\n"
	                   "o thing\r\n"
	                   "mtllib none.mtl\r\n"
	                   "v 0 0 0\r\n"
	                   "v 1 0 0\r\n"
	                   "v 1 1 0\r\n"
	                   "v 0 1 0\r\n"
	                   "vt 0 0\r\n"
	                   "vt 1 0\r\n"
	                   "vn 0 0 1\r\n"
	                   "s off\r\n"
	                   "f 1/1/1 2/2/1 3/1/1 4/1/1\r\n"
	                   "v 2 0 0.5\r\n"
	                   "f -4/1 -1//1 -3 # the last vertex is 5\r\n";
	char path[64];
	write_temp(text, path);
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(pbd_mesh_load_obj(path, false, &m, &err), PBD_OK);
	assert_int_equal(m.vertex_count, 5);
	assert_int_equal(m.triangle_count, 3);
	const uint32_t want[9] = {0, 1, 2, 0, 2, 3, 1, 4, 2};
	assert_memory_equal(m.triangles, want, sizeof want);
	assert_near(m.positions[4].x, 2, 0);
	assert_near(m.positions[4].z, 0.5, 0);
	/* Quad: 5 edges; the triangle (1, 4, 2) adds 1-4 and 4-2 (1-2 is shared): 7. */
	assert_int_equal(m.edge_count, 7);
	check_edges_unique(&m);
	pbd_mesh_free(&m);
	/* With bend: interior edges 0-2 (pair 1-3) and 1-2 (pair 0-4). */
	assert_int_equal(pbd_mesh_load_obj(path, true, &m, &err), PBD_OK);
	assert_int_equal(count_kind(&m, PBD_EDGE_BEND), 2);
	assert_true(has_edge(&m, 1, 3, PBD_EDGE_BEND) && has_edge(&m, 0, 4, PBD_EDGE_BEND));
	pbd_mesh_free(&m);
	unlink(path);
}

/* Loads `text` expecting failure `want`; the message must name the file and, when line > 0,
 * the line as "path:line:". */
static void expect_obj_error(const char* text, pbd_status want, int line) {
	char path[64];
	write_temp(text, path);
	pbd_mesh m;
	pbd_error err;
	err.message[0] = 0;
	const pbd_status st = pbd_mesh_load_obj(path, false, &m, &err);
	if (st != want)
		fail_msg("%s: got %s, want %s (%s)", text, pbd_status_string(st), pbd_status_string(want), err.message);
	assert_non_null(strstr(err.message, path));
	if (line > 0) {
		char where[96];
		snprintf(where, sizeof where, "%s:%d:", path, line);
		if (!strstr(err.message, where)) fail_msg("message '%s' lacks '%s'", err.message, where);
	}
	assert_int_equal(m.vertex_count, 0);
	assert_null(m.positions);
	unlink(path);
}

static void test_obj_errors(void** state) {
	(void)state;
	pbd_mesh m;
	pbd_error err;
	err.message[0] = 0;
	assert_int_equal(pbd_mesh_load_obj("/nonexistent/dir/missing.obj", false, &m, &err), PBD_ERR_IO);
	assert_non_null(strstr(err.message, "/nonexistent/dir/missing.obj"));

	expect_obj_error("v 0 0 0\nv 1 0 0\nv 1 2\nf 1 2 3\n", PBD_ERR_PARSE, 3);             /* malformed vertex */
	expect_obj_error("v 0 0 0\nv 1 0 0\nv 0 1 0\n\nf 1 2 9\n", PBD_ERR_OUT_OF_RANGE, 5);  /* index past the end */
	expect_obj_error("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 0\n", PBD_ERR_OUT_OF_RANGE, 4);    /* OBJ is 1-based */
	expect_obj_error("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 -4\n", PBD_ERR_OUT_OF_RANGE, 4);   /* before the first */
	expect_obj_error("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 1 2\n", PBD_ERR_DEGENERATE, 4);      /* repeated vertex */
	expect_obj_error("v 0 0 0\nv 1 0 0\nv 2 0 0\n# c\nf 1 2 3\n", PBD_ERR_DEGENERATE, 5); /* collinear */
	expect_obj_error("v 0 0 0\nv 1 0 0\nf 1 2\n", PBD_ERR_PARSE, 3);                      /* two corners */
	/* strtod itself raises FE_OVERFLOW on 1e999 (glibc), before the library sees the value. */
	test_disable_fp_traps();
	expect_obj_error("v 0 0 0\nv 1e999 0 0\nv 0 1 0\nf 1 2 3\n", PBD_ERR_NOT_FINITE, 2); /* overflow */
	test_enable_fp_traps();
	expect_obj_error("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\nv 1 1 0\n", PBD_ERR_OUT_OF_RANGE,
	                 4);                               /* used before defined */
	expect_obj_error("# nothing\n", PBD_ERR_PARSE, 0); /* no faces */
	expect_obj_error("", PBD_ERR_PARSE, 0);            /* empty */
	assert_int_equal(pbd_mesh_load_obj(NULL, false, &m, &err), PBD_ERR_INVALID_ARGUMENT);
}

/* A face corner that is not a number is a malformed line (PBD_ERR_PARSE: "contents are
 * malformed"), not an index past the end (PBD_ERR_OUT_OF_RANGE). */
static void test_obj_malformed_index_is_parse_error(void** state) {
	(void)state;
	expect_obj_error("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x\n", PBD_ERR_PARSE, 4);
	expect_obj_error("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3x\n", PBD_ERR_PARSE, 4);
}

/* A coordinate that is a finite double but overflows the library's float must be reported
 * without raising a floating-point overflow (a program running with FP traps, as these tests
 * do, would die on a bad input file). */
static void test_obj_float_overflow_no_fp_exception(void** state) {
	(void)state;
	if (sizeof(pbd_real) != sizeof(float)) skip();
	test_disable_fp_traps();
	feclearexcept(FE_ALL_EXCEPT);
	char path[64];
	write_temp("v 0 0 0\nv 1e300 0 0\nv 0 1 0\nf 1 2 3\n", path);
	pbd_mesh m;
	pbd_error err;
	const pbd_status st = pbd_mesh_load_obj(path, false, &m, &err);
	const int raised = fetestexcept(FE_OVERFLOW | FE_INVALID);
	test_enable_fp_traps();
	unlink(path);
	assert_int_equal(st, PBD_ERR_NOT_FINITE);
	assert_non_null(strstr(err.message, ":2:"));
	if (raised)
		fail_msg("pbd_mesh_load_obj raised a floating-point exception (%s) on 'v 1e300 0 0'",
		         (raised & FE_OVERFLOW) ? "overflow" : "invalid");
}

/* Loads `size` bytes of `text` from memory, expecting failure `want` with a message that holds
 * every one of the NULL-terminated `parts`. */
static void expect_obj_memory_error(const char* text, size_t size, const pbd_obj_limits* lim, pbd_status want, ...) {
	pbd_mesh m;
	pbd_error err;
	err.message[0] = 0;
	const pbd_obj_limits def = pbd_obj_limits_default();
	const pbd_status st = pbd_obj_load_memory(text, size, "mem.obj", false, lim ? lim : &def, &m, &err);
	if (st != want) fail_msg("got %s, want %s (%s)", pbd_status_string(st), pbd_status_string(want), err.message);
	va_list ap;
	va_start(ap, want);
	for (const char* part; (part = va_arg(ap, const char*));)
		if (!strstr(err.message, part)) fail_msg("message '%s' lacks '%s'", err.message, part);
	va_end(ap);
	assert_int_equal(m.vertex_count, 0);
	assert_null(m.positions);
}

static void refuse_obj(const char* path, const char* want, void* user) {
	(void)user;
	for (int with_groups = 0; with_groups < 2; ++with_groups) {
		pbd_mesh m;
		pbd_obj_groups g;
		pbd_error err;
		err.message[0] = 0;
		const pbd_status st = with_groups ? pbd_mesh_load_obj_groups(path, false, &m, &g, &err)
		                                  : pbd_mesh_load_obj(path, false, &m, &err);
		if (st != PBD_ERR_IO || !strstr(err.message, want))
			fail_msg("%s: status %d, message '%s'", path, (int)st, err.message);
		assert_null(m.positions);
		if (with_groups) assert_int_equal(g.count, 0);
	}
}

/* A path that is not a regular file (test_each_special_file) is refused before a byte is read,
 * with and without groups. */
static void test_obj_special_files(void** state) {
	(void)state;
	test_each_special_file(NULL, ".obj", refuse_obj, NULL);
}

/* A line past PBD_OBJ_MAX_LINE is refused with its file and line, from a file (read in pieces,
 * so the line spans many reads) and from memory; one byte shorter still loads. */
static void test_obj_line_too_long(void** state) {
	(void)state;
	const char* head = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n#";
	const size_t n = strlen(head) + PBD_OBJ_MAX_LINE + 1;
	char* text = (char*)malloc(n + 1);
	assert_non_null(text);
	memcpy(text, head, strlen(head));
	memset(text + strlen(head), 'x', PBD_OBJ_MAX_LINE);
	text[n - 1] = '\n';
	text[n] = 0;
	expect_obj_memory_error(text, n, NULL, PBD_ERR_OUT_OF_RANGE, "mem.obj:5: line longer than 1048576 bytes",
	                        (const char*)NULL);
	char path[64];
	write_temp(text, path);
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(pbd_mesh_load_obj(path, false, &m, &err), PBD_ERR_OUT_OF_RANGE);
	char where[96];
	snprintf(where, sizeof where, "%s:5: line longer than", path);
	if (!strstr(err.message, where)) fail_msg("message '%s' lacks '%s'", err.message, where);
	unlink(path);
	/* The comment "#xxx...x" of exactly PBD_OBJ_MAX_LINE bytes, without the last x and with it
	 * but with no line end after it. */
	text[n - 2] = '\n';
	assert_int_equal(pbd_mesh_load_obj_memory(text, n - 1, "mem.obj", false, &m, &err), PBD_OK);
	assert_int_equal(m.triangle_count, 1);
	pbd_mesh_free(&m);
	free(text);
}

/* The whole input is bounded too, here with the bound shrunk to 100 bytes: a file of 200 is
 * refused with its name, as is a buffer one byte over the bound. */
static void test_obj_input_bound(void** state) {
	(void)state;
	char text[201] = "";
	for (int i = 0; i < 20; ++i) strcat(text, "# comment\n"); /* 200 bytes */
	char path[64];
	write_temp(text, path);
	pbd_obj_limits lim = pbd_obj_limits_default();
	lim.max_bytes = 100;
	pbd_mesh m;
	pbd_error err;
	err.message[0] = 0;
	assert_int_equal(pbd_obj_load_file(path, false, &lim, &m, &err), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(err.message, "input longer than 100 bytes"));
	assert_non_null(strstr(err.message, path));
	unlink(path);
	/* Memory: a buffer over the bound is refused before a line of it is parsed. */
	const char* tri = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
	lim.max_bytes = strlen(tri) - 1;
	expect_obj_memory_error(tri, strlen(tri), &lim, PBD_ERR_OUT_OF_RANGE, "mem.obj:1: input longer than 31 bytes",
	                        (const char*)NULL);
	lim.max_bytes = strlen(tri);
	assert_int_equal(pbd_obj_load_memory(tri, strlen(tri), "mem.obj", false, &lim, &m, &err), PBD_OK);
	pbd_mesh_free(&m);
}

/* Vertices and triangles are both capped, as PBD_ERR_OUT_OF_RANGE naming the line. */
static void test_obj_counts_capped(void** state) {
	(void)state;
	pbd_obj_limits lim = pbd_obj_limits_default();
	assert_int_equal(lim.max_vertices, PBD_OBJ_MAX_VERTICES);
	assert_int_equal(lim.max_triangles, PBD_OBJ_MAX_TRIANGLES);
	assert_int_equal(lim.max_line, PBD_OBJ_MAX_LINE);
	assert_true(lim.max_bytes == PBD_OBJ_MAX_BYTES);
	const char* quad = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n";
	lim.max_vertices = 3;
	expect_obj_memory_error(quad, strlen(quad), &lim, PBD_ERR_OUT_OF_RANGE, "mem.obj:4: more than 3 vertices",
	                        (const char*)NULL);
	lim.max_vertices = 4;
	lim.max_triangles = 1; /* the quad fans into 2 */
	expect_obj_memory_error(quad, strlen(quad), &lim, PBD_ERR_OUT_OF_RANGE, "mem.obj:5: more than 1 triangles",
	                        (const char*)NULL);
	lim.max_triangles = 2;
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(pbd_obj_load_memory(quad, strlen(quad), "mem.obj", false, &lim, &m, &err), PBD_OK);
	assert_int_equal(m.triangle_count, 2);
	pbd_mesh_free(&m);
}

/* An allocator that fails from its `fail_at`-th call on (0 = the first). */
static int alloc_calls, alloc_fail_at;
static void* failing_realloc(void* ptr, size_t size) {
	if (alloc_calls++ >= alloc_fail_at) return NULL;
	return realloc(ptr, size);
}

/* Every allocation of the reader that fails is reported as out of memory, with the line it
 * happened on: never as a limit, an end of file or a file without triangles. */
static void test_obj_out_of_memory(void** state) {
	(void)state;
	/* 300 vertices and 298 triangles, so the arrays grow past their first 256 elements. */
	size_t cap = 64 * 1024, n = 0;
	char* text = (char*)malloc(cap);
	assert_non_null(text);
	for (int i = 0; i < 300; ++i) n += (size_t)snprintf(text + n, cap - n, "v %d %d 0\n", i, (i * i) % 7);
	for (int i = 3; i <= 300; ++i) n += (size_t)snprintf(text + n, cap - n, "f %d %d %d\n", i - 2, i - 1, i);
	pbd_obj_limits lim = pbd_obj_limits_default();
	lim.realloc_fn = failing_realloc;
	int failures = 0;
	for (alloc_fail_at = 0;; ++alloc_fail_at) {
		alloc_calls = 0;
		pbd_mesh m;
		pbd_error err;
		err.message[0] = 0;
		const pbd_status st = pbd_obj_load_memory(text, n, "mem.obj", false, &lim, &m, &err);
		if (st == PBD_OK) {
			assert_int_equal(m.vertex_count, 300);
			assert_int_equal(m.triangle_count, 298);
			pbd_mesh_free(&m);
			break;
		}
		++failures;
		if (st != PBD_ERR_OUT_OF_MEMORY)
			fail_msg("allocation %d failed: got %s (%s)", alloc_fail_at, pbd_status_string(st), err.message);
		assert_non_null(strstr(err.message, "mem.obj:"));
		assert_non_null(strstr(err.message, ": out of memory"));
		assert_null(m.positions);
	}
	/* The line buffer, and the vertex and both triangle arrays twice each. */
	assert_true(failures >= 7);
	free(text);
}

/* Coordinates that are finite but so large that an edge's length overflows the scalar (pbd_soft_create
 * would measure an infinite rest length) are refused at the face, and no floating-point exception
 * is raised on the way (the tests trap them). Sizes are scaled to the precision built. */
static void test_obj_edge_length_overflow(void** state) {
	(void)state;
	/* sqrt(max / 2), the longest edge accepted: about 1.3e19 in float, 9.5e153 in double. */
	const double big = sqrt((double)PBD_REAL_MAX / 2);
	char text[512];
	snprintf(text, sizeof text, "v %.9g 0 0\nv %.9g 0 0\nv 0 1 0\n# far\nf 1 2 3\n", -0.9 * (double)PBD_REAL_MAX,
	         0.9 * (double)PBD_REAL_MAX);
	expect_obj_memory_error(text, strlen(text), NULL, PBD_ERR_NOT_FINITE,
	                        "mem.obj:5: face edge from vertex 1 to 2 is too long", (const char*)NULL);
	/* Two faces whose own edges fit (0.7 and 0.65 x big), across an edge whose bend pair does
	 * not: the vertices opposite the shared edge 1-2 are 1.1 x big apart. */
	const double h = 0.55 * big, sh = 0.35 * big;
	snprintf(text, sizeof text, "v 0 %.9g 0\nv 0 %.9g 0\nv %.9g 0 0\nv %.9g 0 0\nf 1 2 3\n\nf 2 1 4\n", -sh, sh, h, -h);
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(pbd_mesh_load_obj_memory(text, strlen(text), "mem.obj", false, &m, &err), PBD_OK);
	/* Without bend edges the mesh is sound: a body measures every rest length as finite. */
	pbd_world* w = test_world(NULL);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	pbd_soft_info b;
	assert_int_equal(test_soft_create(w, &bd, &b), PBD_OK);
	assert_int_equal(b.distance_count, 5);
	for (uint32_t k = 0; k < b.distance_count; ++k) {
		pbd_distance_def d;
		assert_int_equal(pbd_world_get_distance(w, k, &d), PBD_OK);
		assert_true(isfinite(d.rest) && d.rest > 0);
	}
	pbd_world_destroy(w);
	pbd_mesh_free(&m);
	err.message[0] = 0;
	assert_int_equal(pbd_mesh_load_obj_memory(text, strlen(text), "mem.obj", true, &m, &err), PBD_ERR_NOT_FINITE);
	if (!strstr(err.message, "mem.obj:7: bend edge from vertex 3 to 4, across this face and the one on line 5"))
		fail_msg("unexpected message '%s'", err.message);
	assert_null(m.positions);
}

/* pbd_mesh_from_triangles, the grid and the rope refuse a rest length that would overflow
 * rather than hand a body an infinite one. */
static void test_builders_refuse_overflowing_lengths(void** state) {
	(void)state;
	const pbd_real far = (pbd_real)(0.9 * (double)PBD_REAL_MAX);
	const pbd_vec3 v[3] = {pbd_v3(-far, 0, 0), pbd_v3(far, 0, 0), pbd_v3(0, 1, 0)};
	const uint32_t t[3] = {0, 1, 2};
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(pbd_mesh_from_triangles(3, v, 1, t, false, &m, &err), PBD_ERR_NOT_FINITE);
	assert_non_null(strstr(err.message, "triangle 0: edge from vertex 0 to 1 is too long"));
	/* Each side fits, the diagonal (the shear edge) does not: sqrt(max / 2) is the longest edge
	 * accepted (about 1.3e19 in float), as a length squared must not overflow. */
	pbd_grid_def gd = pbd_grid_def_default();
	gd.size_u = gd.size_v = (pbd_real)(0.8 * sqrt((double)PBD_REAL_MAX / 2));
	assert_int_equal(pbd_mesh_grid(&gd, &m, &err), PBD_ERR_NOT_FINITE);
	assert_non_null(strstr(err.message, "pbd_mesh_grid: edge"));
	assert_null(m.positions);
	gd.diagonals = 0;
	assert_int_equal(pbd_mesh_grid(&gd, &m, &err), PBD_OK);
	pbd_mesh_free(&m);
	pbd_rope_def rd = pbd_rope_def_default();
	rd.start = pbd_v3(-far, 0, 0);
	rd.end = pbd_v3(far, 0, 0);
	assert_int_equal(pbd_mesh_rope(&rd, &m, &err), PBD_ERR_NOT_FINITE);
	assert_non_null(strstr(err.message, "pbd_mesh_rope: start to end is too long"));
}

/* A hand-made mesh carries no rest lengths: pbd_soft_create measures them, and refuses one that
 * overflows with the edge's name, adding nothing to the world. */
static void test_body_refuses_overflowing_rest_length(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world_def wd = pbd_world_def_default();
	wd.log = test_log_keep;
	wd.log_user = msg;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&wd, &w), PBD_OK);
	const pbd_real far = (pbd_real)(0.8 * sqrt((double)PBD_REAL_MAX / 2)); /* 0-1 is 1.6 x the longest */
	pbd_vec3 x[3] = {pbd_v3(-far, 0, 0), pbd_v3(far, 0, 0), pbd_v3(0, far / 4, 0)};
	uint32_t e[6] = {1, 2, 2, 0, 0, 1};
	pbd_mesh m;
	memset(&m, 0, sizeof m);
	m.vertex_count = 3;
	m.positions = x;
	m.edge_count = 3;
	m.edges = e;
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	pbd_soft_info b;
	assert_int_equal(test_soft_create(w, &bd, &b), PBD_ERR_NOT_FINITE);
	if (!strstr(msg, "pbd_soft_create: edge 2 from vertex 0 to 1 is too long")) fail_msg("message '%s'", msg);
	assert_int_equal(pbd_world_particle_count(w), 0);
	assert_int_equal(pbd_world_distance_count(w), 0);
	/* With rest lengths given, the positions' distance is never measured. */
	pbd_real rest[3] = {1, 1, 1};
	m.edge_rest = rest;
	assert_int_equal(test_soft_create(w, &bd, &b), PBD_OK);
	assert_int_equal(b.distance_count, 3);
	pbd_world_destroy(w);
}

/* Face indices appear in messages as written in the file (1-based, negative ones as given), and
 * vertices by their 1-based number. */
static void test_obj_messages_one_based(void** state) {
	(void)state;
	const char* v3 = "v 0 0 0\nv 1 0 0\nv 2 0 0\n";
	char text[256];
	snprintf(text, sizeof text, "%sf 1 2 9\n", v3);
	expect_obj_memory_error(text, strlen(text), NULL, PBD_ERR_OUT_OF_RANGE,
	                        "mem.obj:4: face index 9 refers to no vertex (3 defined so far)", (const char*)NULL);
	snprintf(text, sizeof text, "%sf 1/1 2/2 -4/3\n", v3);
	expect_obj_memory_error(text, strlen(text), NULL, PBD_ERR_OUT_OF_RANGE, "face index -4 refers", (const char*)NULL);
	snprintf(text, sizeof text, "%sf 1 2 0\n", v3);
	expect_obj_memory_error(text, strlen(text), NULL, PBD_ERR_OUT_OF_RANGE, "face index 0 refers", (const char*)NULL);
	snprintf(text, sizeof text, "%sf 3 2 -1\n", v3);
	expect_obj_memory_error(text, strlen(text), NULL, PBD_ERR_DEGENERATE, "mem.obj:4: degenerate face: vertex 3 is",
	                        (const char*)NULL);
	snprintf(text, sizeof text, "%sf 1 2 3\n", v3);
	expect_obj_memory_error(text, strlen(text), NULL, PBD_ERR_DEGENERATE, "vertices 1, 2, 3 span no area",
	                        (const char*)NULL);
	snprintf(text, sizeof text, "%sf 1 2 3x\n", v3);
	expect_obj_memory_error(text, strlen(text), NULL, PBD_ERR_PARSE, "mem.obj:4: malformed face corner '3x'",
	                        (const char*)NULL);
}

/* The memory entry reads what the file entry reads: the same mesh from the same bytes, without
 * needing a terminator after them; errors carry the given name, or "<memory>". */
static void test_obj_memory_matches_file(void** state) {
	(void)state;
	const char* text = "v 0 0 0\r\nv 1 0 0\r\nv 1 1 0\r\nv 0 1 0\r\nvt 0 0\r\nf 1/1 2/1 3/1 4/1\r\n"
	                   "v 2 0 0.5\r\nf -4 -1 -3 # last\r\nXXXX";
	const size_t n = strlen(text) - 4; /* the XXXX is past the end */
	char path[64];
	char* file_text = strndup(text, n);
	write_temp(file_text, path);
	free(file_text);
	for (int bend = 0; bend <= 1; ++bend) {
		pbd_mesh a, b;
		pbd_error err;
		assert_int_equal(pbd_mesh_load_obj(path, bend, &a, &err), PBD_OK);
		assert_int_equal(pbd_mesh_load_obj_memory(text, n, "x.obj", bend, &b, &err), PBD_OK);
		assert_int_equal(a.vertex_count, 5);
		assert_int_equal(a.vertex_count, b.vertex_count);
		assert_int_equal(a.triangle_count, b.triangle_count);
		assert_int_equal(a.edge_count, b.edge_count);
		assert_memory_equal(a.positions, b.positions, a.vertex_count * sizeof *a.positions);
		assert_memory_equal(a.triangles, b.triangles, 3 * a.triangle_count * sizeof *a.triangles);
		assert_memory_equal(a.edges, b.edges, 2 * a.edge_count * sizeof *a.edges);
		assert_memory_equal(a.edge_kinds, b.edge_kinds, a.edge_count);
		pbd_mesh_free(&a);
		pbd_mesh_free(&b);
	}
	unlink(path);
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(pbd_mesh_load_obj_memory("v 0 0 0\n", 8, NULL, false, &m, &err), PBD_ERR_PARSE);
	assert_non_null(strstr(err.message, "<memory>: no triangles"));
	assert_int_equal(pbd_mesh_load_obj_memory(NULL, 0, "empty", false, &m, &err), PBD_ERR_PARSE);
	assert_int_equal(pbd_mesh_load_obj_memory(NULL, 5, "x", false, &m, &err), PBD_ERR_INVALID_ARGUMENT);
	assert_int_equal(pbd_mesh_load_obj_memory("v", 1, "x", false, NULL, &err), PBD_ERR_INVALID_ARGUMENT);
	/* A NUL byte inside the buffer is not taken for its end. */
	expect_obj_memory_error("v 0 0 0\nv 1\0 0 0\n", 17, NULL, PBD_ERR_PARSE, "mem.obj:2: NUL byte", (const char*)NULL);
}

/* ---- bodies and masses ----------------------------------------------------------------- */

static double sum_mass(const pbd_world* w, const pbd_soft_info* b) {
	double s = 0;
	for (uint32_t i = 0; i < b->particle_count; ++i) s += 1.0 / (double)pbd_world_inv_masses(w)[b->first_particle + i];
	return s;
}

/* Grid 5 x 4 over 4 m x 4.5 m (cell 1.5 m^2, triangles 0.75 m^2). Lumped by area, a third of
 * each triangle per corner: an interior vertex touches 6 triangles (1.5 m^2), vertex (0,0)
 * touches 2 (0.5 m^2), vertex (4,0) only 1 (0.25 m^2). */
static void test_body_masses(void** state) {
	(void)state;
	pbd_world* w = test_world(NULL);
	pbd_grid_def gd = pbd_grid_def_default();
	gd.nx = 5;
	gd.ny = 4;
	gd.size_u = 4;
	gd.size_v = (pbd_real)4.5;
	gd.diagonals = 1;
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(pbd_mesh_grid(&gd, &m, &err), PBD_OK);

	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.mass_mode = PBD_MASS_TOTAL;
	bd.mass = (pbd_real)2.5;
	pbd_soft_info b1;
	assert_int_equal(test_soft_create(w, &bd, &b1), PBD_OK);
	assert_int_equal(b1.first_particle, 0);
	assert_int_equal(b1.particle_count, 20);
	assert_int_equal(b1.distance_count, 43);
	assert_int_equal(b1.triangle_count, 24);
	assert_near(sum_mass(w, &b1), 2.5, 1e-5);
	/* Share: interior 1.5 / 18 of the total. */
	assert_near(1.0 / (double)pbd_world_inv_masses(w)[6], 2.5 * 1.5 / 18, 1e-6);

	bd.mass_mode = PBD_MASS_DENSITY;
	bd.mass = (pbd_real)0.3; /* kg / m^2: 18 m^2 -> 5.4 kg */
	const uint32_t pins[2] = {0, 19};
	bd.pinned = pins;
	bd.pinned_count = 2;
	bd.translation = pbd_v3(0, 5, 0);
	pbd_soft_info b2;
	assert_int_equal(test_soft_create(w, &bd, &b2), PBD_OK);
	assert_int_equal(b2.first_particle, 20);
	assert_int_equal(b2.first_distance, 43);
	assert_int_equal(b2.first_triangle, 24);
	const pbd_real* iw = pbd_world_inv_masses(w);
	assert_true(iw[20] == 0 && iw[39] == 0);
	assert_true(pbd_particle_is_pinned(w, 20) && pbd_particle_is_pinned(w, 39));
	assert_false(pbd_particle_is_pinned(w, 21));
	assert_near(1.0 / (double)iw[20 + 6], 0.3 * 1.5, 1e-6);  /* interior */
	assert_near(1.0 / (double)iw[20 + 4], 0.3 * 0.25, 1e-6); /* corner with one triangle */
	/* The free vertices carry area x density minus the two pinned corners (0.5 + 0.5 m^2:
	 * vertex 19 = (4,3) also touches 2 triangles). */
	double free_mass = 0;
	for (uint32_t i = 20; i < 40; ++i)
		if (iw[i] > 0) free_mass += 1.0 / (double)iw[i];
	assert_near(free_mass, 0.3 * (18 - 0.5 - 0.5), 1e-5);
	assert_near(pbd_world_positions(w)[20 + 6].y, 5, 0);

	/* Per particle. */
	bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.mass = 4;
	pbd_soft_info b3;
	assert_int_equal(test_soft_create(w, &bd, &b3), PBD_OK);
	for (uint32_t i = 0; i < 20; ++i) assert_true(pbd_world_inv_masses(w)[b3.first_particle + i] == (pbd_real)0.25);
	pbd_mesh_free(&m);

	/* Rope of 2 m in 4 links: TOTAL 1 kg -> ends 0.125 kg, inner 0.25 kg; DENSITY 0.5 kg/m -> 1 kg. */
	pbd_rope_def rd = pbd_rope_def_default();
	rd.segments = 4;
	rd.end = pbd_v3(2, 0, 0);
	assert_int_equal(pbd_mesh_rope(&rd, &m, &err), PBD_OK);
	bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.mass_mode = PBD_MASS_TOTAL;
	bd.mass = 1;
	pbd_soft_info r1;
	assert_int_equal(test_soft_create(w, &bd, &r1), PBD_OK);
	assert_near(sum_mass(w, &r1), 1.0, 1e-6);
	assert_near(1.0 / (double)pbd_world_inv_masses(w)[r1.first_particle], 0.125, 1e-6);
	assert_near(1.0 / (double)pbd_world_inv_masses(w)[r1.first_particle + 2], 0.25, 1e-6);
	bd.mass_mode = PBD_MASS_DENSITY;
	bd.mass = (pbd_real)0.5;
	pbd_soft_info r2;
	assert_int_equal(test_soft_create(w, &bd, &r2), PBD_OK);
	assert_near(sum_mass(w, &r2), 1.0, 1e-6);
	pbd_mesh_free(&m);
	pbd_world_destroy(w);
}

/* A vertex pinned through the body def has a mass from the body's rule all the same; when it
 * is unpinned ("gives it back the inverse mass it had before pinning") it must get that mass,
 * not 1 kg: a released corner of a 0.3 kg/m^2 cloth weighing 1 kg would drag the whole cloth. */
static void test_body_pinned_vertex_unpins_to_its_mass(void** state) {
	(void)state;
	pbd_world* w = test_world(NULL);
	pbd_mesh m;
	pbd_grid_def gd = pbd_grid_def_default();
	gd.nx = 5;
	gd.ny = 4;
	gd.size_u = 4;
	gd.size_v = (pbd_real)4.5;
	gd.diagonals = 1;
	pbd_error err;
	assert_int_equal(pbd_mesh_grid(&gd, &m, &err), PBD_OK);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.mass_mode = PBD_MASS_DENSITY;
	bd.mass = (pbd_real)0.3;
	const uint32_t pin = 0; /* touches 2 triangles: 0.5 m^2, 0.15 kg */
	bd.pinned = &pin;
	bd.pinned_count = 1;
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);
	assert_true(pbd_world_inv_masses(w)[0] == 0);
	assert_int_equal(pbd_particle_unpin(w, 0), PBD_OK);
	const double mass = 1.0 / (double)pbd_world_inv_masses(w)[0];
	if (fabs(mass - 0.15) > 1e-6) fail_msg("unpinned body vertex has mass %g kg, its lumped mass is 0.15 kg", mass);
	pbd_world_destroy(w);
}

/* Materials: each edge kind gets its own parameters, and a disabled kind adds no constraint. */
static void test_body_materials(void** state) {
	(void)state;
	pbd_world* w = test_world(NULL);
	pbd_mesh m;
	tp_grid(&m, 4, 4, 1, pbd_v3(0, 0, 0), 2, true); /* 24 structural, 18 shear, 16 bend */
	assert_int_equal(count_kind(&m, PBD_EDGE_STRUCTURAL), 24);
	assert_int_equal(count_kind(&m, PBD_EDGE_SHEAR), 18);
	assert_int_equal(count_kind(&m, PBD_EDGE_BEND), 16);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.material[PBD_EDGE_SHEAR].stiffness_stretch = (pbd_real)0.5;
	bd.material[PBD_EDGE_SHEAR].compliance_compress = (pbd_real)0.25;
	bd.material[PBD_EDGE_BEND].enabled = false;
	pbd_soft_info b;
	assert_int_equal(test_soft_create(w, &bd, &b), PBD_OK);
	assert_int_equal(b.distance_count, 42);
	assert_int_equal(pbd_world_distance_count(w), 42);
	uint32_t shear = 0;
	for (uint32_t k = 0; k < 42; ++k) {
		pbd_distance_def d;
		assert_int_equal(pbd_world_get_distance(w, k, &d), PBD_OK);
		const double len = tp_dist(pbd_world_positions(w)[d.a], pbd_world_positions(w)[d.b]);
		assert_near(d.rest, len, 1e-6); /* rest = length in the mesh */
		if (d.stiffness_stretch == (pbd_real)0.5) {
			shear++;
			assert_near(len, sqrt(2.0) / 3, 1e-6);
			assert_true(d.compliance_compress == (pbd_real)0.25);
		} else {
			assert_near(len, 1.0 / 3, 1e-6);
		}
	}
	assert_int_equal(shear, 18);
	pbd_mesh_free(&m);
	pbd_world_destroy(w);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_grid_counts),
	    cmocka_unit_test(test_grid_small),
	    cmocka_unit_test(test_grid_edges_match_triangles),
	    cmocka_unit_test(test_grid_errors),
	    cmocka_unit_test(test_rope),
	    cmocka_unit_test(test_from_triangles_quad),
	    cmocka_unit_test(test_from_triangles_tetrahedron),
	    cmocka_unit_test(test_from_triangles_octahedron),
	    cmocka_unit_test(test_from_triangles_errors),
	    cmocka_unit_test(test_obj_load),
	    cmocka_unit_test(test_obj_errors),
	    cmocka_unit_test(test_obj_malformed_index_is_parse_error),
	    cmocka_unit_test(test_obj_float_overflow_no_fp_exception),
	    cmocka_unit_test(test_obj_special_files),
	    cmocka_unit_test(test_obj_line_too_long),
	    cmocka_unit_test(test_obj_input_bound),
	    cmocka_unit_test(test_obj_counts_capped),
	    cmocka_unit_test(test_obj_out_of_memory),
	    cmocka_unit_test(test_obj_edge_length_overflow),
	    cmocka_unit_test(test_builders_refuse_overflowing_lengths),
	    cmocka_unit_test(test_body_refuses_overflowing_rest_length),
	    cmocka_unit_test(test_obj_messages_one_based),
	    cmocka_unit_test(test_obj_memory_matches_file),
	    cmocka_unit_test(test_body_masses),
	    cmocka_unit_test(test_body_pinned_vertex_unpins_to_its_mass),
	    cmocka_unit_test(test_body_materials),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
