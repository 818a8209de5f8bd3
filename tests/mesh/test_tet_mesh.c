/* Tetrahedral meshes: the box and ball builders give positively oriented tetrahedra that fill the
 * box exactly and the ball up to the stated discretisation error, without slivers, with a closed,
 * consistently outward boundary (every edge in two boundary triangles, once each way) that
 * encloses the same volume, and the unique edges of the tetrahedra; the TetGen reader takes files
 * numbered from 0 and from 1 with comments, attributes and markers, reorients and reports
 * negatively listed tetrahedra, and refuses malformed files with file:line messages; bodies made
 * of tetrahedra weigh their particles by volume. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_tet.h"
#include "mesh/tet.h"

static int cmp_u64(const void* a, const void* b) {
	const uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
	return x < y ? -1 : x > y;
}

/* The smallest |6 V| / (longest edge)^3 over the tetrahedra, after checking each is positive. */
static double check_tets(const pbd_mesh* m) {
	double worst = 1;
	for (uint32_t t = 0; t < m->tet_count; ++t) {
		double x[4][3], l2 = 0;
		for (int i = 0; i < 4; ++i) {
			const uint32_t v = m->tets[4 * t + (uint32_t)i];
			assert_true(v < m->vertex_count);
			x[i][0] = (double)m->positions[v].x;
			x[i][1] = (double)m->positions[v].y;
			x[i][2] = (double)m->positions[v].z;
		}
		for (int a = 0; a < 4; ++a)
			for (int b = a + 1; b < 4; ++b) {
				const double d[3] = {x[a][0] - x[b][0], x[a][1] - x[b][1], x[a][2] - x[b][2]};
				l2 = fmax(l2, d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
			}
		const double v = tt_volume(x);
		assert_true(v > 0);
		worst = fmin(worst, 6 * v / (l2 * sqrt(l2)));
	}
	return worst;
}

/* The boundary is closed and consistently oriented: every directed edge of the boundary
 * triangles appears once and its reverse once (so every edge is in exactly two triangles, run
 * opposite ways); V - E + F = 2 (a sphere); the boundary encloses the tetrahedra's volume
 * (divergence theorem), which holds only if every triangle faces outward; the boundary vertices
 * are the ones the tetrahedra's faces of one tetrahedron only use. The edges are exactly the
 * unique edges of the tetrahedra. Returns the enclosed volume. */
static double check_boundary(const pbd_mesh* m) {
	const uint32_t nt = m->triangle_count;
	assert_true(nt > 0);
	uint64_t* he = malloc(3 * (size_t)nt * sizeof *he);
	double enclosed = 0;
	for (uint32_t t = 0; t < nt; ++t) {
		const uint32_t* v = m->triangles + 3 * t;
		double x[4][3] = {{0, 0, 0}};
		for (int j = 0; j < 3; ++j) {
			he[3 * t + (uint32_t)j] = ((uint64_t)v[j] << 32) | v[(j + 1) % 3];
			x[j + 1][0] = (double)m->positions[v[j]].x;
			x[j + 1][1] = (double)m->positions[v[j]].y;
			x[j + 1][2] = (double)m->positions[v[j]].z;
		}
		enclosed += tt_volume(x); /* the cone from the origin */
	}
	qsort(he, 3 * (size_t)nt, sizeof *he, cmp_u64);
	for (size_t i = 0; i < 3 * (size_t)nt; ++i) {
		if (i) assert_true(he[i] != he[i - 1]); /* no directed edge twice */
		const uint64_t rev = (he[i] << 32) | (he[i] >> 32);
		assert_non_null(bsearch(&rev, he, 3 * (size_t)nt, sizeof *he, cmp_u64));
	}
	/* V - E + F over the boundary's own vertices and edges */
	uint32_t nv = 0;
	uint8_t* used = calloc(m->vertex_count, 1);
	for (size_t k = 0; k < 3 * (size_t)nt; ++k)
		if (!used[m->triangles[k]]++) ++nv;
	assert_int_equal((int64_t)nv - (int64_t)(3 * (size_t)nt / 2) + (int64_t)nt, 2);
	free(used);
	free(he);
	/* edges: 6 per tetrahedron, unique, and every mesh edge one of them */
	uint64_t* te = malloc(6 * (size_t)m->tet_count * sizeof *te);
	size_t n = 0;
	for (uint32_t t = 0; t < m->tet_count; ++t)
		for (int a = 0; a < 4; ++a)
			for (int b = a + 1; b < 4; ++b) {
				const uint32_t u = m->tets[4 * t + (uint32_t)a], v = m->tets[4 * t + (uint32_t)b];
				te[n++] = u < v ? ((uint64_t)u << 32) | v : ((uint64_t)v << 32) | u;
			}
	qsort(te, n, sizeof *te, cmp_u64);
	size_t unique = 0;
	for (size_t i = 0; i < n; ++i)
		if (!i || te[i] != te[i - 1]) te[unique++] = te[i];
	assert_int_equal(m->edge_count, unique);
	for (uint32_t e = 0; e < m->edge_count; ++e) {
		const uint32_t u = m->edges[2 * e], v = m->edges[2 * e + 1];
		const uint64_t key = u < v ? ((uint64_t)u << 32) | v : ((uint64_t)v << 32) | u;
		assert_non_null(bsearch(&key, te, unique, sizeof *te, cmp_u64));
		assert_true(!m->edge_kinds || m->edge_kinds[e] == PBD_EDGE_STRUCTURAL);
	}
	free(te);
	return enclosed;
}

/* Boxes of several shapes and both splits: counts, orientation, the exact volume, the boundary. */
static void test_box(void** state) {
	(void)state;
	const uint32_t dims[4][3] = {{1, 1, 1}, {2, 1, 1}, {3, 2, 4}, {5, 5, 5}};
	for (int split = 5; split <= 6; ++split)
		for (int k = 0; k < 4; ++k) {
			pbd_tet_box_def d = pbd_tet_box_def_default();
			d.nx = dims[k][0];
			d.ny = dims[k][1];
			d.nz = dims[k][2];
			d.size = pbd_v3((pbd_real)0.7, (pbd_real)1.3, (pbd_real)0.4);
			d.origin = pbd_v3(-1, 2, (pbd_real)0.5);
			d.tets_per_cell = split;
			pbd_mesh m;
			pbd_error err;
			assert_int_equal(pbd_mesh_tet_box(&d, &m, &err), PBD_OK);
			const uint32_t cells = d.nx * d.ny * d.nz;
			assert_int_equal(m.vertex_count, (d.nx + 1) * (d.ny + 1) * (d.nz + 1));
			assert_int_equal(m.tet_count, cells * (uint32_t)split);
			assert_int_equal(m.triangle_count, 4 * (d.nx * d.ny + d.ny * d.nz + d.nx * d.nz));
			const double quality = check_tets(&m);
			printf("box %u x %u x %u, %d per cell: worst |6V|/L^3 %.4f\n", d.nx, d.ny, d.nz, split, quality);
			assert_true(quality > 0.01);
			/* exactly the box the (rounded) corner vertices span */
			const pbd_vec3 lo = m.positions[0], hi = m.positions[m.vertex_count - 1];
			const double box =
			    ((double)hi.x - (double)lo.x) * ((double)hi.y - (double)lo.y) * ((double)hi.z - (double)lo.z);
			const double vol = tt_mesh_volume(&m);
			assert_near(vol, box, 1e-13 * box);
			assert_near(box, 0.7 * 1.3 * 0.4, TEST_TOL(1e-12, 1e-6));
			assert_near(check_boundary(&m), vol, 1e-13 * box);
			pbd_mesh_free(&m);
			assert_null(m.tets);
		}
}

/* Cubic cells: the five-way split's worst tetrahedron is a corner one, |6V| / L^3 = 1 / 2^(3/2);
 * the six-way split's are all alike, 1 / 3^(3/2). */
static void test_box_shapes(void** state) {
	(void)state;
	for (int split = 5; split <= 6; ++split) {
		pbd_tet_box_def d = pbd_tet_box_def_default();
		d.nx = d.ny = d.nz = 3;
		d.size = pbd_v3(3, 3, 3);
		d.tets_per_cell = split;
		pbd_mesh m;
		pbd_error err;
		assert_int_equal(pbd_mesh_tet_box(&d, &m, &err), PBD_OK);
		assert_near(check_tets(&m), split == 5 ? 1 / pow(2, 1.5) : 1 / pow(3, 1.5), 1e-12);
		pbd_mesh_free(&m);
	}
}

/* Balls: every tetrahedron positive and of bounded shape, boundary vertices on the sphere, the
 * boundary closed, and the volume below the ball's by the discretisation error of the inscribed
 * polyhedron, which falls as 1 / n^2. */
static void test_sphere(void** state) {
	(void)state;
	const double pi = TP_PI;
	double prev_err = 1;
	for (uint32_t n = 1; n <= 8; ++n) {
		pbd_tet_sphere_def d = pbd_tet_sphere_def_default();
		d.subdivisions = n;
		d.radius = (pbd_real)0.5;
		d.center = pbd_v3(1, -2, 3);
		pbd_mesh m;
		pbd_error err;
		assert_int_equal(pbd_mesh_tet_sphere(&d, &m, &err), PBD_OK);
		assert_int_equal(m.vertex_count, (2 * n + 1) * (2 * n + 1) * (2 * n + 1));
		assert_int_equal(m.tet_count, 48 * n * n * n);
		assert_int_equal(m.triangle_count, 48 * n * n);
		const double quality = check_tets(&m);
		const double vol = tt_mesh_volume(&m), ball = 4.0 / 3.0 * pi * 0.125;
		const double rel = (ball - vol) / ball;
		printf("ball n = %u: %u tetrahedra, volume error %.4f %% (x n^2: %.3f), worst |6V|/L^3 %.4f\n", n, m.tet_count,
		       100 * rel, rel * n * n, quality);
		assert_true(quality > 0.15);
		assert_true(rel > 0 && rel * n * n < 0.3); /* inscribed: below the ball, by less than 0.3 / n^2 */
		assert_true(rel < prev_err);
		prev_err = rel;
		assert_near(check_boundary(&m), vol, 1e-9);
		for (uint32_t t = 0; t < 3 * m.triangle_count; ++t) {
			const pbd_vec3 p = m.positions[m.triangles[t]];
			assert_near(tp_dist(p, d.center), 0.5, TEST_TOL(1e-12, 1e-6));
		}
		pbd_mesh_free(&m);
	}
}

static void test_builder_refusals(void** state) {
	(void)state;
	pbd_mesh m;
	pbd_error err;
	pbd_tet_box_def b = pbd_tet_box_def_default();
	b.nx = 0;
	assert_int_equal(pbd_mesh_tet_box(&b, &m, &err), PBD_ERR_OUT_OF_RANGE);
	b.nx = 300;
	b.ny = 300;
	b.nz = 300;
	assert_int_equal(pbd_mesh_tet_box(&b, &m, &err), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(err.message, "pbd_mesh_tet_box"));
	b = pbd_tet_box_def_default();
	b.tets_per_cell = 4;
	assert_int_equal(pbd_mesh_tet_box(&b, &m, &err), PBD_ERR_OUT_OF_RANGE);
	b.tets_per_cell = 6;
	b.size.y = 0;
	assert_int_equal(pbd_mesh_tet_box(&b, &m, &err), PBD_ERR_OUT_OF_RANGE);
	b.size.y = 1;
	b.origin.x = (pbd_real)INFINITY;
	assert_int_equal(pbd_mesh_tet_box(&b, &m, &err), PBD_ERR_NOT_FINITE);
	b = pbd_tet_box_def_default();
	b.cookie = 0;
	assert_int_equal(pbd_mesh_tet_box(&b, &m, &err), PBD_ERR_UNINITIALIZED_DEF);
	pbd_tet_sphere_def s = pbd_tet_sphere_def_default();
	s.subdivisions = 0;
	assert_int_equal(pbd_mesh_tet_sphere(&s, &m, &err), PBD_ERR_OUT_OF_RANGE);
	s.subdivisions = 200;
	assert_int_equal(pbd_mesh_tet_sphere(&s, &m, &err), PBD_ERR_OUT_OF_RANGE);
	s.subdivisions = 2;
	s.radius = -1;
	assert_int_equal(pbd_mesh_tet_sphere(&s, &m, &err), PBD_ERR_OUT_OF_RANGE);
	s.radius = (pbd_real)TEST_TOL(1e300, 1e37); /* its tetrahedra's volumes overflow */
	assert_int_equal(pbd_mesh_tet_sphere(&s, &m, &err), PBD_ERR_NOT_FINITE);
	assert_null(m.positions);
}

/* ---- TetGen ------------------------------------------------------------------------------------ */

static char dir[64];

static void write_file(const char* path, const char* text) {
	FILE* f = fopen(path, "wb");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Loads node and ele text (written to files of those names in a temporary directory). */
static pbd_status load(const char* node, const char* ele, pbd_mesh* m, pbd_error* err, const pbd_tetgen_limits* lim) {
	char np[128], ep[128];
	snprintf(np, sizeof np, "%s/t.node", dir);
	snprintf(ep, sizeof ep, "%s/t.ele", dir);
	write_file(np, node);
	write_file(ep, ele);
	const pbd_tetgen_limits def = pbd_tetgen_limits_default();
	return pbd_tetgen_load(np, ep, lim ? lim : &def, m, err);
}

/* A cube split into five tetrahedra, numbered from 1, with comments, an attribute and boundary
 * markers on the points, a region attribute on the tetrahedra, blank lines and CRLF ends. */
static const char* cube_node1 = "# a unit cube\n"
                                "8 3 1 1   # points, dimension, attributes, markers\n"
                                "1  0 0 0  7.5 1\n"
                                "2  1 0 0  7.5 1\r\n"
                                "\n"
                                "3  0 1 0  7.5 1\n"
                                "4  1 1 0  7.5 1\n"
                                "5  0 0 1  7.5 1\n"
                                "6  1 0 1  7.5 1\n"
                                "7  0 1 1  7.5 1\n"
                                "8  1 1 1  7.5 1\n"
                                "# Generated by hand\n";
static const char* cube_ele1 = "5 4 1\n"
                               "1  1 4 7 6  3\n"
                               "2  2 1 4 6  3   # a corner, listed the other way round\n"
                               "3  3 1 7 4  3\n"
                               "4  5 1 6 7  3\n"
                               "5  8 4 7 6  3\n";

static void test_tetgen_loads(void** state) {
	(void)state;
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(load(cube_node1, cube_ele1, &m, &err, NULL), PBD_OK);
	assert_int_equal(m.vertex_count, 8);
	assert_int_equal(m.tet_count, 5);
	assert_int_equal(m.triangle_count, 12);
	assert_int_equal(m.edge_count, 18); /* 12 cube edges and 6 face diagonals */
	check_tets(&m);
	assert_near(tt_mesh_volume(&m), 1, 1e-12);
	assert_near(check_boundary(&m), 1, 1e-12);
	/* four listed with negative orientation were reoriented, and the note says so */
	assert_non_null(strstr(err.message, "t.ele:3: note: 4 tetrahedra"));
	assert_non_null(strstr(err.message, "reoriented"));
	const uint32_t tets[8] = {0, 3, 6, 5, 1, 0, 5, 3}; /* 1 4 7 6 as given, 2 1 4 6 swapped */
	assert_memory_equal(m.tets, tets, sizeof tets);
	pbd_mesh_free(&m);

	/* The same numbered from 0, without attributes, every tetrahedron positive: no note. */
	const char* node0 = "8 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 1 1 0\n4 0 0 1\n5 1 0 1\n6 0 1 1\n7 1 1 1\n";
	const char* ele0 = "5 4 0\n0 0 3 6 5\n1 1 0 5 3\n2 2 0 3 6\n3 4 0 6 5\n4 7 3 5 6\n";
	assert_int_equal(load(node0, ele0, &m, &err, NULL), PBD_OK);
	assert_string_equal(err.message, "");
	assert_int_equal(m.tet_count, 5);
	check_tets(&m);
	assert_near(check_boundary(&m), 1, 1e-12);
	pbd_mesh_free(&m);

	/* 10-node tetrahedra are read by their corners; a header without the optional numbers. */
	const char* ele10 = "1 10\n0 0 1 2 4  3 5 6 7 3 5\n";
	assert_int_equal(
	    load("8 3\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 1 1 0\n4 0 0 1\n5 1 0 1\n6 0 1 1\n7 1 1 1\n", ele10, &m, &err, NULL),
	    PBD_OK);
	assert_int_equal(m.tet_count, 1);
	assert_int_equal(m.triangle_count, 4);
	pbd_mesh_free(&m);
}

/* The example made with TetGen (docs/constraints.md gives the command): 196 points, 629
 * tetrahedra, its boundary the 320 triangles of the input surface, radius 0.5. */
static void test_tetgen_example(void** state) {
	(void)state;
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(pbd_mesh_load_tetgen(PBD_SOURCE_DIR "/scenes/meshes/ball.1.node",
	                                      PBD_SOURCE_DIR "/scenes/meshes/ball.1.ele", &m, &err),
	                 PBD_OK);
	assert_string_equal(err.message, "");
	assert_int_equal(m.vertex_count, 196);
	assert_int_equal(m.tet_count, 629);
	assert_int_equal(m.triangle_count, 320);
	const double quality = check_tets(&m);
	const double vol = tt_mesh_volume(&m);
	printf("ball.1: volume %.5f (ball %.5f), worst |6V|/L^3 %.4f\n", vol, 4.0 / 3 * TP_PI * 0.125, quality);
	assert_near(check_boundary(&m), vol, 1e-9);
	assert_true(vol > 0.5 && vol < 4.0 / 3 * TP_PI * 0.125);
	for (uint32_t t = 0; t < 3 * m.triangle_count; ++t) assert_near(tp_len(m.positions[m.triangles[t]]), 0.5, 2e-6);
	pbd_mesh_free(&m);
}

/* Every malformed file is refused with its name and line, and nothing is left allocated. */
static void test_tetgen_refusals(void** state) {
	(void)state;
	const char* node = "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n";
	const char* ele = "1 4 0\n0 0 1 2 3\n";
	static const struct {
		const char *node, *ele, *where, *what;
		pbd_status st;
	} bad[] = {
	    {"", "", "t.node:1:", "no header", PBD_ERR_PARSE},
	    {"# only a comment\n\n", "", "t.node:2:", "no header", PBD_ERR_PARSE},
	    {"three 3 0 0\n", "", "t.node:1:", "missing point count", PBD_ERR_PARSE},
	    {"4 2 0 0\n", "", "t.node:1:", "dimension 2", PBD_ERR_PARSE},
	    {"4 3 0 2\n", "", "t.node:1:", "boundary markers", PBD_ERR_PARSE},
	    {"4 3 0 0 9\n", "", "t.node:1:", "more than 4 numbers", PBD_ERR_PARSE},
	    {"0 3 0 0\n", "", "t.node:1:", "0 points", PBD_ERR_PARSE},
	    {"4 3 0 0\n0 0 0 0\n1 1 0 0\n", "", "t.node:3:", "truncated", PBD_ERR_PARSE},
	    {"4 3 0 0\n0 0 0 0\n1 1 0\n", "", "t.node:3:", "3 coordinates", PBD_ERR_PARSE},
	    {"4 3 0 0\n0 0 0 0\n1 1 0 nan\n", "", "t.node:3:", "not a finite", PBD_ERR_NOT_FINITE},
	    {"4 3 0 0\n0 0 0 0\n1 1 0 1e999\n", "", "t.node:3:", "not a finite", PBD_ERR_NOT_FINITE},
	    {"4 3 0 0\n0 0 0 0\n1 1 0 x\n", "", "t.node:3:", "not a number", PBD_ERR_PARSE},
	    {"4 3 0 0\n2 0 0 0\n", "", "t.node:2:", "must be 0 or 1", PBD_ERR_PARSE},
	    {"4 3 0 0\n0 0 0 0\n2 1 0 0\n", "", "t.node:3:", "expected 1", PBD_ERR_PARSE},
	    {"4 3 1 0\n0 0 0 0\n", "", "t.node:2:", "0 numbers after the coordinates", PBD_ERR_PARSE},
	    {"4 3 0 0\n0 0 0 0 5\n", "", "t.node:2:", "1 numbers after the coordinates", PBD_ERR_PARSE},
	    {"4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n4 1 1 1\n", "", "t.node:6:", "more lines", PBD_ERR_PARSE},
	    {NULL, "", "t.ele:1:", "no header", PBD_ERR_PARSE},
	    {NULL, "# tets\n", "t.ele:1:", "no header", PBD_ERR_PARSE},
	    {NULL, "x 4 0\n", "t.ele:1:", "missing tetrahedron count", PBD_ERR_PARSE},
	    {NULL, "1 6 0\n", "t.ele:1:", "4 or 10", PBD_ERR_PARSE},
	    {NULL, "2 4 0\n0 0 1 2 3\n", "t.ele:2:", "truncated", PBD_ERR_PARSE},
	    {NULL, "1 4 0\n0 0 1 2\n", "t.ele:2:", "needs 4 point numbers", PBD_ERR_PARSE},
	    {NULL, "1 4 0\n0 0 1 2 4\n", "t.ele:2:", "point 4 out of range", PBD_ERR_OUT_OF_RANGE},
	    {NULL, "1 4 0\n0 0 1 2 -1\n", "t.ele:2:", "out of range", PBD_ERR_OUT_OF_RANGE},
	    {NULL, "1 4 0\n0 0 1 2 2.5\n", "t.ele:2:", "not an integer", PBD_ERR_PARSE},
	    {NULL, "1 4 0\n0 0 1 2 2\n", "t.ele:2:", "point 2 repeats", PBD_ERR_DEGENERATE},
	    {NULL, "1 4 1\n0 0 1 2 3\n", "t.ele:2:", "0 numbers after the point numbers", PBD_ERR_PARSE},
	    {NULL, "1 4 0\n0 0 1 2 3\n1 0 1 2 3\n", "t.ele:3:", "more lines", PBD_ERR_PARSE},
	    {NULL, "2 4 0\n0 0 1 2 3\n1 0 1 2 3\n", "t.ele:3:", "same side", PBD_ERR_DEGENERATE},
	};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
		pbd_mesh m;
		pbd_error err;
		/* strtod itself raises FE_OVERFLOW on 1e999 (glibc), before the library sees the value */
		const bool overflow = bad[k].node && strstr(bad[k].node, "1e999");
		if (overflow) test_disable_fp_traps();
		const pbd_status st = load(bad[k].node ? bad[k].node : node, bad[k].ele ? bad[k].ele : ele, &m, &err, NULL);
		if (overflow) test_enable_fp_traps();
		if (st != bad[k].st || !strstr(err.message, bad[k].where) || !strstr(err.message, bad[k].what))
			fail_msg("case %zu: status %d, message '%s'", k, (int)st, err.message);
		assert_null(m.positions);
		assert_null(m.tets);
	}
	/* a flat tetrahedron, and three sharing one face */
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(load("4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 1 1 0\n", ele, &m, &err, NULL), PBD_ERR_DEGENERATE);
	assert_non_null(strstr(err.message, "t.ele:2: degenerate tetrahedron: points 0, 1, 2, 3 span no volume"));
	const char* fan = "5 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n4 0 0 -1\n";
	assert_int_equal(load(fan, "3 4 0\n0 0 1 2 3\n1 0 2 1 4\n2 0 1 2 3\n", &m, &err, NULL), PBD_ERR_DEGENERATE);
	assert_non_null(strstr(err.message, "t.ele:4: face (0, 1, 2) of this tetrahedron is shared by more than two"));
	/* the bounds: a line, a file, the counts */
	pbd_tetgen_limits lim = pbd_tetgen_limits_default();
	lim.max_line = 12;
	assert_int_equal(load(node, "1 4 0\n0 0 1 2 3      # long comment\n", &m, &err, &lim), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(err.message, "t.ele:2: line longer than 12 bytes"));
	lim = pbd_tetgen_limits_default();
	lim.max_bytes = 20;
	assert_int_equal(load(node, ele, &m, &err, &lim), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(err.message, "t.node:"));
	lim = pbd_tetgen_limits_default();
	lim.max_points = 3;
	assert_int_equal(load(node, ele, &m, &err, &lim), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(err.message, "t.node:1: header: 4 points, more than 3"));
	lim = pbd_tetgen_limits_default();
	lim.max_tets = 0;
	assert_int_equal(load(node, ele, &m, &err, &lim), PBD_ERR_OUT_OF_RANGE);
	char with_nul[] = "4 3 0 0\n0 0 0 0\nX";
	with_nul[sizeof with_nul - 2] = 0;
	{
		char np[128];
		snprintf(np, sizeof np, "%s/nul.node", dir);
		FILE* f = fopen(np, "wb");
		fwrite(with_nul, 1, sizeof with_nul - 1, f);
		fclose(f);
		assert_int_equal(pbd_mesh_load_tetgen(np, np, &m, &err), PBD_ERR_PARSE);
		assert_non_null(strstr(err.message, "nul.node:3: NUL byte"));
	}
	assert_int_equal(pbd_mesh_load_tetgen("/nonexistent/x.node", "x.ele", &m, &err), PBD_ERR_IO);
	assert_non_null(strstr(err.message, "/nonexistent/x.node: cannot open"));
	assert_int_equal(pbd_mesh_load_tetgen(NULL, "x.ele", &m, &err), PBD_ERR_INVALID_ARGUMENT);
}

/* The texts in memory give the mesh the files give, bit for bit, with the same note; messages
 * name "<name>.node" and "<name>.ele"; the texts need not be terminated. */
static void test_tetgen_memory(void** state) {
	(void)state;
	pbd_mesh f, m;
	pbd_error ferr, err;
	assert_int_equal(load(cube_node1, cube_ele1, &f, &ferr, NULL), PBD_OK);
	assert_int_equal(
	    pbd_mesh_load_tetgen_memory(cube_node1, strlen(cube_node1), cube_ele1, strlen(cube_ele1), "cube", &m, &err),
	    PBD_OK);
	assert_int_equal(m.vertex_count, f.vertex_count);
	assert_int_equal(m.tet_count, f.tet_count);
	assert_int_equal(m.triangle_count, f.triangle_count);
	assert_int_equal(m.edge_count, f.edge_count);
	assert_memory_equal(m.positions, f.positions, f.vertex_count * sizeof *f.positions);
	assert_memory_equal(m.tets, f.tets, 4 * (size_t)f.tet_count * sizeof *f.tets);
	assert_memory_equal(m.triangles, f.triangles, 3 * (size_t)f.triangle_count * sizeof *f.triangles);
	assert_memory_equal(m.edges, f.edges, 2 * (size_t)f.edge_count * sizeof *f.edges);
	assert_non_null(strstr(err.message, "cube.ele:3: note: 4 tetrahedra"));
	pbd_mesh_free(&m);
	pbd_mesh_free(&f);

	/* Cut short of their terminators: the last line of each is read without its line end, and a
	 * byte past the size would make the .ele one line too long. */
	const char node[] = "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n";
	const char ele[] = "1 4 0\n0 0 1 2 3\n1 0 1 2 3";
	assert_int_equal(pbd_mesh_load_tetgen_memory(node, sizeof node - 2, ele, 16, NULL, &m, &err), PBD_OK);
	assert_int_equal(m.tet_count, 1);
	assert_string_equal(err.message, "");
	pbd_mesh_free(&m);

	/* Errors name the texts; a NUL byte inside the size is refused as in a file. */
	assert_int_equal(pbd_mesh_load_tetgen_memory(node, sizeof node - 1, ele, sizeof ele - 1, "m", &m, &err),
	                 PBD_ERR_PARSE);
	assert_non_null(strstr(err.message, "m.ele:3: more lines"));
	assert_null(m.positions);
	assert_int_equal(pbd_mesh_load_tetgen_memory("4 3 0 0\n0 0", 12, ele, 16, NULL, &m, &err), PBD_ERR_PARSE);
	assert_non_null(strstr(err.message, "<memory>.node:2: NUL byte"));
	assert_int_equal(pbd_mesh_load_tetgen_memory(node, 0, ele, 16, "m", &m, &err), PBD_ERR_PARSE);
	assert_non_null(strstr(err.message, "m.node:1: no header"));
	/* The bound on a file's bytes holds for a text. */
	pbd_tetgen_limits lim = pbd_tetgen_limits_default();
	lim.max_bytes = 20;
	assert_int_equal(pbd_tetgen_load_memory(node, sizeof node - 1, ele, 16, "m", &lim, &m, &err), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(err.message, "m.node:1: file longer than 20 bytes"));
	assert_int_equal(pbd_mesh_load_tetgen_memory(NULL, 1, ele, 16, "m", &m, &err), PBD_ERR_INVALID_ARGUMENT);
}

/* Loads the path as the .node and as the .ele, the other file of the pair a good one. */
static void refuse_tetgen(const char* path, const char* want, void* user) {
	const char** good = (const char**)user;
	for (int as_ele = 0; as_ele < 2; ++as_ele) {
		pbd_mesh m;
		pbd_error err;
		const pbd_tetgen_limits lim = pbd_tetgen_limits_default();
		const pbd_status st = pbd_tetgen_load(as_ele ? good[0] : path, as_ele ? path : good[1], &lim, &m, &err);
		if (st != PBD_ERR_IO || !strstr(err.message, want))
			fail_msg("%s as the %s: status %d, message '%s'", path, as_ele ? ".ele" : ".node", (int)st, err.message);
		assert_null(m.positions);
		assert_null(m.tets);
	}
}

/* A path that is not a regular file (test_each_special_file) is refused, as the .node or the
 * .ele, before a byte is read. */
static void test_tetgen_special_files(void** state) {
	(void)state;
	char np[128], ep[128];
	snprintf(np, sizeof np, "%s/t.node", dir);
	snprintf(ep, sizeof ep, "%s/t.ele", dir);
	write_file(np, "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n");
	write_file(ep, "1 4 0\n0 0 1 2 3\n");
	const char* good[2] = {np, ep};
	test_each_special_file(dir, ".node", refuse_tetgen, good);
}

/* A body of tetrahedra: mass by volume (a quarter of each tetrahedron per corner), total as
 * asked, or by density; surface triangles as the body's triangles. */
static void test_body_masses(void** state) {
	(void)state;
	pbd_tet_box_def d = pbd_tet_box_def_default();
	d.nx = 2;
	d.ny = 1;
	d.nz = 1;
	d.size = pbd_v3(2, 1, 1);
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(pbd_mesh_tet_box(&d, &m, &err), PBD_OK);
	for (int mode = 1; mode <= 2; ++mode) {
		pbd_world* w = test_world(NULL);
		pbd_soft_def bd = pbd_soft_def_default();
		bd.mesh = &m;
		bd.mass_mode = (pbd_mass_mode)mode;
		bd.mass = mode == PBD_MASS_TOTAL ? 10 : 500; /* 10 kg, or 500 kg/m^3 of 2 m^3 */
		pbd_soft_info b;
		assert_int_equal(test_soft_create(w, &bd, &b), PBD_OK);
		assert_int_equal(b.triangle_count, m.triangle_count);
		const pbd_real* iw = pbd_world_inv_masses(w);
		double total = 0, lumped[12] = {0};
		for (uint32_t i = 0; i < b.particle_count; ++i) total += 1 / (double)iw[i];
		assert_near(total, mode == PBD_MASS_TOTAL ? 10 : 1000, TEST_TOL(1e-9, 1e-4));
		for (uint32_t t = 0; t < m.tet_count; ++t) {
			double x[4][3];
			for (int i = 0; i < 4; ++i) {
				const pbd_vec3 p = m.positions[m.tets[4 * t + (uint32_t)i]];
				x[i][0] = (double)p.x, x[i][1] = (double)p.y, x[i][2] = (double)p.z;
			}
			for (int i = 0; i < 4; ++i) lumped[m.tets[4 * t + (uint32_t)i]] += tt_volume(x) / 4;
		}
		for (uint32_t i = 0; i < b.particle_count; ++i)
			assert_near(1 / (double)iw[i], lumped[i] * total / 2, TEST_TOL(1e-9, 1e-5) * total);
		pbd_world_destroy(w);
	}
	pbd_mesh_free(&m);
}

static int setup(void** state) {
	(void)state;
	snprintf(dir, sizeof dir, "tet_mesh_test_%ld", (long)getpid());
	return mkdir(dir, 0700);
}

static int teardown(void** state) {
	(void)state;
	const char* names[4] = {"t.node", "t.ele", "nul.node", "fifo.node"};
	for (int i = 0; i < 4; ++i) {
		char p[128];
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		remove(p);
	}
	char sub[128];
	snprintf(sub, sizeof sub, "%s/sub.node", dir);
	rmdir(sub);
	return rmdir(dir);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_box),
	    cmocka_unit_test(test_box_shapes),
	    cmocka_unit_test(test_sphere),
	    cmocka_unit_test(test_builder_refusals),
	    cmocka_unit_test(test_tetgen_loads),
	    cmocka_unit_test(test_tetgen_example),
	    cmocka_unit_test(test_tetgen_refusals),
	    cmocka_unit_test(test_tetgen_memory),
	    cmocka_unit_test(test_tetgen_special_files),
	    cmocka_unit_test(test_body_masses),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
