/* Triangle mesh shape, called through pbd_shape_mesh_ops in the shape's frame, and its bounding
 * volume hierarchy (bvh.h): a closed cube mesh against the exact box distance (signs, normals
 * away from the medial planes), a closed icosphere against the sphere within the tessellation
 * error, an open quad (unsigned, two-sided, the fixed normal on the surface), the hierarchy's
 * nearest triangle against brute force on a random soup (same index) and its structure, the
 * mesh distance against a brute-force double reference, sweeps against a dense sampling of
 * random segments (never later than the first sampled contact, a miss has no sample within the
 * radius), a particle at 100 m/s through a thin plate (never tunnels, also through the shared
 * diagonal and the corners), validation (indices, NaN, closedness with the edge named, winding,
 * inside out), degenerate triangles (no NaN), deterministic builds (and rebuilding from the
 * copy), bounds and triangles, an OBJ loaded as a mesh, unit normals at extreme points, no
 * nearest triangle for a point that is not finite (and no read with the answer not found), a
 * kinematic mesh collider at 1.7e15 m/s and faster and a cloth thrown off a mesh at 1e30 m/s
 * (their overflowing steps undone, nothing read past the triangles), and the cost of building
 * and querying a 100k-triangle mesh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collision/bvh.h"
#include "collision/collide.h"
#include "test_physics.h"

#define DIST_TOL TEST_TOL(1e-12, 3e-6)
#define UNIT_TOL TEST_TOL(1e-14, 1e-6)

static const pbd_shape_ops* ops = &pbd_shape_mesh_ops;

/* ---- double helpers, apart from the library's ---------------------------------------------- */

typedef tp_dvec3 dvec;

static dvec dv(double x, double y, double z) {
	dvec r = {x, y, z};
	return r;
}
static dvec dsub(dvec a, dvec b) { return dv(a.x - b.x, a.y - b.y, a.z - b.z); }
static dvec dadd(dvec a, dvec b) { return dv(a.x + b.x, a.y + b.y, a.z + b.z); }
static dvec dscale(dvec a, double s) { return dv(a.x * s, a.y * s, a.z * s); }
static double ddot(dvec a, dvec b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static dvec dcross(dvec a, dvec b) { return dv(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x); }
static double dlen(dvec a) { return sqrt(ddot(a, a)); }
static pbd_vec3 v3d(double x, double y, double z) { return pbd_v3((pbd_real)x, (pbd_real)y, (pbd_real)z); }
static pbd_vec3 v3_of(dvec v) { return v3d(v.x, v.y, v.z); }

static dvec rand_in(uint64_t* seed, double lo, double hi) {
	const double x = tp_rand_range(seed, lo, hi);
	const double y = tp_rand_range(seed, lo, hi);
	const double z = tp_rand_range(seed, lo, hi);
	return dv(x, y, z);
}

/* The segment's point at t, in double from the pbd_real ends. */
static dvec dlerp(pbd_vec3 a, pbd_vec3 b, double t) {
	return dv((double)a.x + t * ((double)b.x - (double)a.x), (double)a.y + t * ((double)b.y - (double)a.y),
	          (double)a.z + t * ((double)b.z - (double)a.z));
}

/* Squared distance from p to the segment a..b, nearest point in *q. */
static double ref_seg_dist2(dvec p, dvec a, dvec b, dvec* q) {
	const dvec ab = dsub(b, a);
	const double dd = ddot(ab, ab);
	double t = dd > 0 ? ddot(dsub(p, a), ab) / dd : 0;
	t = t < 0 ? 0 : (t > 1 ? 1 : t);
	*q = dadd(a, dscale(ab, t));
	const dvec d = dsub(p, *q);
	return ddot(d, d);
}

/* Squared distance from p to triangle abc by projection onto its plane and the three edges
 * (not the library's region method). */
static double ref_tri_dist2(dvec p, dvec a, dvec b, dvec c, dvec* q) {
	const dvec n = dcross(dsub(b, a), dsub(c, a));
	const double nn = ddot(n, n);
	const double scale = fmax(ddot(dsub(b, a), dsub(b, a)), ddot(dsub(c, a), dsub(c, a)));
	if (nn > 1e-24 * scale * scale) {
		const dvec x = dsub(p, dscale(n, ddot(n, dsub(p, a)) / nn));
		if (ddot(dcross(dsub(b, a), dsub(x, a)), n) >= 0 && ddot(dcross(dsub(c, b), dsub(x, b)), n) >= 0 &&
		    ddot(dcross(dsub(a, c), dsub(x, c)), n) >= 0) {
			*q = x;
			const dvec d = dsub(p, x);
			return ddot(d, d);
		}
	}
	dvec q0, q1, q2;
	const double d0 = ref_seg_dist2(p, a, b, &q0), d1 = ref_seg_dist2(p, b, c, &q1), d2 = ref_seg_dist2(p, c, a, &q2);
	if (d0 <= d1 && d0 <= d2) {
		*q = q0;
		return d0;
	}
	*q = d1 <= d2 ? q1 : q2;
	return d1 <= d2 ? d1 : d2;
}

/* ---- meshes ------------------------------------------------------------------------------------ */

typedef struct mesh {
	pbd_vec3* v;
	uint32_t* t;
	uint32_t nv, nt;
} mesh;

static void mesh_free(mesh* m) {
	free(m->v);
	free(m->t);
	memset(m, 0, sizeof *m);
}

static dvec vert(const mesh* m, uint32_t t, int k) { return tp_d(m->v[m->t[3 * t + (uint32_t)k]]); }

/* Unsigned distance to the nearest triangle by brute force, in double. */
static double ref_mesh_dist(const mesh* m, dvec p, uint32_t* tri) {
	double best = INFINITY;
	for (uint32_t t = 0; t < m->nt; ++t) {
		dvec q;
		const double d2 = ref_tri_dist2(p, vert(m, t, 0), vert(m, t, 1), vert(m, t, 2), &q);
		if (d2 < best) {
			best = d2;
			if (tri) *tri = t;
		}
	}
	return sqrt(best);
}

/* Inside a closed mesh: the generalised winding number (the solid angles of the triangles seen
 * from p, Van Oosterom and Strackee 1983) is 1 inside and 0 outside. */
static bool ref_inside(const mesh* m, dvec p) {
	double sum = 0;
	for (uint32_t t = 0; t < m->nt; ++t) {
		const dvec a = dsub(vert(m, t, 0), p), b = dsub(vert(m, t, 1), p), c = dsub(vert(m, t, 2), p);
		const double la = dlen(a), lb = dlen(b), lc = dlen(c);
		const double num = ddot(a, dcross(b, c));
		const double den = la * lb * lc + ddot(a, b) * lc + ddot(b, c) * la + ddot(c, a) * lb;
		sum += 2 * atan2(num, den);
	}
	return sum > 2 * TP_PI;
}

/* A box of half extents h, 8 vertices (bit 0: +x, bit 1: +y, bit 2: +z), 12 triangles wound
 * counter-clockwise seen from outside. */
static mesh cube_mesh(double hx, double hy, double hz) {
	static const uint32_t quads[6][4] = {{1, 3, 7, 5}, {0, 4, 6, 2}, {2, 6, 7, 3},
	                                     {0, 1, 5, 4}, {4, 5, 7, 6}, {0, 2, 3, 1}};
	mesh m;
	m.nv = 8;
	m.nt = 12;
	m.v = malloc(8 * sizeof *m.v);
	m.t = malloc(36 * sizeof *m.t);
	for (uint32_t i = 0; i < 8; ++i) m.v[i] = v3d(i & 1 ? hx : -hx, i & 2 ? hy : -hy, i & 4 ? hz : -hz);
	for (int f = 0; f < 6; ++f) {
		const uint32_t tri[6] = {quads[f][0], quads[f][1], quads[f][2], quads[f][0], quads[f][2], quads[f][3]};
		memcpy(m.t + 6 * f, tri, sizeof tri);
	}
	return m;
}

/* An icosahedron subdivided `levels` times, its vertices on the unit sphere. */
static mesh icosphere(int levels) {
	const double g = (1 + sqrt(5.0)) / 2;
	const double base_v[12][3] = {{-1, g, 0},  {1, g, 0},  {-1, -g, 0}, {1, -g, 0}, {0, -1, g},  {0, 1, g},
	                              {0, -1, -g}, {0, 1, -g}, {g, 0, -1},  {g, 0, 1},  {-g, 0, -1}, {-g, 0, 1}};
	static const uint32_t base_t[20][3] = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11},
	                                       {1, 5, 9},  {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
	                                       {3, 9, 4},  {3, 4, 2},  {3, 2, 6},   {3, 6, 8},  {3, 8, 9},
	                                       {4, 9, 5},  {2, 4, 11}, {6, 2, 10},  {8, 6, 7},  {9, 8, 1}};
	uint32_t nt = 20, nv = 12;
	uint32_t max_t = 20, max_v = 12;
	for (int l = 0; l < levels; ++l) {
		max_v += max_t * 3 / 2;
		max_t *= 4;
	}
	dvec* v = malloc(max_v * sizeof *v);
	uint32_t* t = malloc(3 * max_t * sizeof *t);
	for (int i = 0; i < 12; ++i) v[i] = dscale(dv(base_v[i][0], base_v[i][1], base_v[i][2]), 1 / sqrt(1 + g * g));
	memcpy(t, base_t, sizeof base_t);
	uint32_t* edge_a = malloc(max_t * 3 * sizeof *edge_a); /* midpoint cache: (a, b) -> vertex */
	uint32_t* edge_b = malloc(max_t * 3 * sizeof *edge_b);
	uint32_t* edge_m = malloc(max_t * 3 * sizeof *edge_m);
	for (int l = 0; l < levels; ++l) {
		uint32_t ne = 0;
		uint32_t* nt_arr = malloc(3 * 4 * nt * sizeof *nt_arr);
		for (uint32_t f = 0; f < nt; ++f) {
			uint32_t mid[3];
			for (int k = 0; k < 3; ++k) {
				uint32_t a = t[3 * f + (uint32_t)k], b = t[3 * f + (uint32_t)(k + 1) % 3];
				if (a > b) {
					const uint32_t s = a;
					a = b;
					b = s;
				}
				uint32_t found = UINT32_MAX;
				for (uint32_t e = 0; e < ne; ++e)
					if (edge_a[e] == a && edge_b[e] == b) found = edge_m[e];
				if (found == UINT32_MAX) {
					const dvec mp = dadd(v[a], v[b]);
					v[nv] = dscale(mp, 1 / dlen(mp));
					edge_a[ne] = a;
					edge_b[ne] = b;
					edge_m[ne++] = found = nv++;
				}
				mid[k] = found;
			}
			const uint32_t* c = t + 3 * f;
			const uint32_t sub[12] = {c[0], mid[0], mid[2], c[1],   mid[1], mid[0],
			                          c[2], mid[2], mid[1], mid[0], mid[1], mid[2]};
			memcpy(nt_arr + 12 * f, sub, sizeof sub);
		}
		memcpy(t, nt_arr, 12 * nt * sizeof *t);
		free(nt_arr);
		nt *= 4;
	}
	free(edge_a);
	free(edge_b);
	free(edge_m);
	mesh m;
	m.nv = nv;
	m.nt = nt;
	m.v = malloc(nv * sizeof *m.v);
	m.t = t;
	for (uint32_t i = 0; i < nv; ++i) m.v[i] = v3_of(v[i]);
	free(v);
	return m;
}

/* n random triangles of sizes up to `size` in [-1, 1]^3. */
static mesh soup(uint32_t n, double size, uint64_t seed) {
	mesh m;
	m.nv = 3 * n;
	m.nt = n;
	m.v = malloc(m.nv * sizeof *m.v);
	m.t = malloc(3 * (size_t)n * sizeof *m.t);
	for (uint32_t i = 0; i < n; ++i) {
		const dvec c = rand_in(&seed, -1, 1);
		for (uint32_t k = 0; k < 3; ++k) {
			m.v[3 * i + k] = v3_of(dadd(c, rand_in(&seed, -size / 2, size / 2)));
			m.t[3 * i + k] = 3 * i + k;
		}
	}
	return m;
}

/* A height field of nx x nz cells, two triangles each, over [-1, 1]^2: an open surface. */
static mesh terrain(uint32_t nx, uint32_t nz) {
	mesh m;
	m.nv = (nx + 1) * (nz + 1);
	m.nt = 2 * nx * nz;
	m.v = malloc(m.nv * sizeof *m.v);
	m.t = malloc(3 * (size_t)m.nt * sizeof *m.t);
	for (uint32_t j = 0; j <= nz; ++j)
		for (uint32_t i = 0; i <= nx; ++i) {
			const double x = -1 + 2.0 * i / nx, z = -1 + 2.0 * j / nz;
			m.v[j * (nx + 1) + i] = v3d(x, 0.1 * sin(5 * x) * cos(4 * z), z);
		}
	uint32_t k = 0;
	for (uint32_t j = 0; j < nz; ++j)
		for (uint32_t i = 0; i < nx; ++i) {
			const uint32_t a = j * (nx + 1) + i, b = a + 1, c = a + nx + 1, d = c + 1;
			const uint32_t tri[6] = {a, c, b, b, c, d}; /* +y front */
			memcpy(m.t + 6 * k++, tri, sizeof tri);
		}
	return m;
}

/* ---- the shape -------------------------------------------------------------------------------- */

typedef struct built {
	pbd_collider_def def;
	void* data;
	size_t size;
} built;

static pbd_collider_def mesh_def(const mesh* m, bool closed) {
	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_MESH;
	cd.shape.mesh.vertices = m->v;
	cd.shape.mesh.triangles = m->t;
	cd.shape.mesh.vertex_count = m->nv;
	cd.shape.mesh.triangle_count = m->nt;
	cd.shape.mesh.closed = closed;
	return cd;
}

/* What pbd_collider_create does: validate, size, build into fresh (dirty) memory. */
static built build_def(pbd_collider_def cd, unsigned char fill) {
	char msg[256] = "";
	pbd_world* w = test_world_keep(msg);
	const pbd_status st = ops->validate(w, &cd);
	if (st != PBD_OK) fail_msg("validate: %d (%s)", (int)st, msg);
	pbd_world_destroy(w);
	built b;
	b.size = ops->data_size(&cd);
	b.data = malloc(b.size);
	assert_non_null(b.data);
	memset(b.data, fill, b.size);
	ops->build(&cd, b.data);
	assert_ptr_equal((const void*)cd.shape.mesh.vertices, b.data);
	b.def = cd;
	return b;
}

static built build_mesh(const mesh* m, bool closed) { return build_def(mesh_def(m, closed), 0xA5); }

static void built_free(built* b) { free(b->data); }

static void check_unit_normal(pbd_vec3 n, const char* where) {
	if (!pbd_v3_is_finite(n) || fabs(tp_len(n) - 1) > UNIT_TOL)
		fail_msg("%s: normal (%g, %g, %g) not unit", where, (double)n.x, (double)n.y, (double)n.z);
}

/* ---- closed cube against the box ------------------------------------------------------------ */

static double ref_box(dvec h, dvec p, dvec* n, double* gap) {
	const double q[3] = {fabs(p.x) - h.x, fabs(p.y) - h.y, fabs(p.z) - h.z};
	const double s[3] = {p.x < 0 ? -1 : 1, p.y < 0 ? -1 : 1, p.z < 0 ? -1 : 1};
	if (q[0] > 0 || q[1] > 0 || q[2] > 0) {
		const dvec e = dv(fmax(q[0], 0), fmax(q[1], 0), fmax(q[2], 0));
		const double len = dlen(e);
		*n = dv(s[0] * e.x / len, s[1] * e.y / len, s[2] * e.z / len);
		*gap = 1;
		return len;
	}
	int k = 0;
	for (int i = 1; i < 3; ++i)
		if (q[i] > q[k]) k = i;
	*n = dv(k == 0 ? s[0] : 0, k == 1 ? s[1] : 0, k == 2 ? s[2] : 0);
	/* Distance to the medial set: how much nearer the nearest face is than the next. */
	double second = -INFINITY;
	for (int i = 0; i < 3; ++i)
		if (i != k) second = fmax(second, q[i]);
	*gap = q[k] - second;
	return q[k];
}

static void check_against_box(const built* b, dvec h, uint64_t seed, int count) {
	double worst_d = 0, worst_n = 0;
	int inside = 0;
	for (int k = 0; k < count; ++k) {
		const pbd_vec3 p = v3_of(rand_in(&seed, -2, 2));
		dvec rn;
		double gap;
		const double want = ref_box(h, tp_d(p), &rn, &gap);
		pbd_vec3 n;
		const double d = (double)ops->distance(&b->def, p, &n);
		check_unit_normal(n, "cube");
		worst_d = fmax(worst_d, fabs(d - want));
		if (gap > 1e-3 && fabs(want) > 1e-2) worst_n = fmax(worst_n, dlen(dsub(tp_d(n), rn)));
		inside += want < 0;
	}
	printf("cube %.2g x %.2g x %.2g: %d points (%d inside), max |distance error| %.3g, max normal error %.3g\n", h.x,
	       h.y, h.z, count, inside, worst_d, worst_n);
	assert_true(inside > count / 100);
	assert_true(worst_d <= DIST_TOL);
	/* Where two features are nearly as near (within the rounding of a squared distance, a
	 * relative sqrt(epsilon) apart), the nearest triangle may be either, and the direction to
	 * its nearest point differs by up to about sqrt(epsilon). */
	assert_true(worst_n <= TEST_TOL(1e-7, 5e-4));
}

static void test_cube_vs_box(void** state) {
	(void)state;
	mesh m = cube_mesh(1, 0.5, 0.25);
	built b = build_mesh(&m, true);
	check_against_box(&b, dv(1, 0.5, 0.25), 1, 100000);
	/* Chosen points: faces, edges, corners, on the surface, inside (unique nearest face). */
	const struct {
		double p[3], d, n[3];
	} cases[] = {
	    {{2, 0, 0}, 1, {1, 0, 0}},           {{0.3, -1, 0.1}, 0.5, {0, -1, 0}},
	    {{0, 0, 0.75}, 0.5, {0, 0, 1}},      {{2, 1.5, 0}, sqrt(2.0), {sqrt(0.5), sqrt(0.5), 0}},
	    {{1, 0.2, 0.1}, 0, {1, 0, 0}},       {{0.9, 0, 0}, -0.1, {1, 0, 0}},
	    {{0, 0.1, -0.2}, -0.05, {0, 0, -1}}, {{-0.5, 0.45, 0}, -0.05, {0, 1, 0}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
		pbd_vec3 n;
		const double d = (double)ops->distance(&b.def, v3d(cases[i].p[0], cases[i].p[1], cases[i].p[2]), &n);
		assert_near(d, cases[i].d, DIST_TOL);
		assert_near(n.x, cases[i].n[0], DIST_TOL);
		assert_near(n.y, cases[i].n[1], DIST_TOL);
		assert_near(n.z, cases[i].n[2], DIST_TOL);
	}
	/* The corner and edge of the surface itself: the pseudonormal. */
	pbd_vec3 n;
	assert_near(ops->distance(&b.def, v3d(1, 0.5, 0.25), &n), 0, DIST_TOL);
	check_unit_normal(n, "corner");
	assert_true(n.x > 0 && n.y > 0 && n.z > 0);
	assert_near(ops->distance(&b.def, v3d(1, 0.5, 0), &n), 0, DIST_TOL);
	assert_near(n.x, sqrt(0.5), DIST_TOL);
	assert_near(n.y, sqrt(0.5), DIST_TOL);
	built_free(&b);
	mesh_free(&m);
}

/* ---- icosphere against the sphere ------------------------------------------------------------- */

static void test_icosphere_vs_sphere(void** state) {
	(void)state;
	mesh m = icosphere(3);
	assert_int_equal(m.nt, 1280);
	built b = build_mesh(&m, true);
	/* The tessellation error: the deepest the faces come in (at their centres), and the vertices
	 * are on the sphere. */
	double inner = 1;
	for (uint32_t t = 0; t < m.nt; ++t) {
		const dvec n = dcross(dsub(vert(&m, t, 1), vert(&m, t, 0)), dsub(vert(&m, t, 2), vert(&m, t, 0)));
		inner = fmin(inner, ddot(n, vert(&m, t, 0)) / dlen(n));
	}
	const double tess = 1 - inner;
	uint64_t seed = 3;
	double worst = 0, worst_n = 0;
	int inside = 0;
	for (int k = 0; k < 50000; ++k) {
		const dvec p = rand_in(&seed, -1.6, 1.6);
		pbd_vec3 n;
		const double d = (double)ops->distance(&b.def, v3_of(p), &n);
		check_unit_normal(n, "icosphere");
		const double r = dlen(p), want = r - 1;
		worst = fmax(worst, fabs(d - want));
		if (r > 0.2) worst_n = fmax(worst_n, dlen(dsub(tp_d(n), dscale(p, 1 / r))));
		if (want < -tess) assert_true(d < 0);
		if (want > 0) assert_true(d > 0);
		inside += d < 0;
	}
	printf("icosphere (%u triangles): tessellation error %.4g, max |distance - sphere| %.4g, max normal error %.3g, "
	       "%d inside\n",
	       m.nt, tess, worst, worst_n, inside);
	assert_true(worst <= tess + DIST_TOL);
	/* Each face's normal differs from the radial direction by up to the angle a face spans. */
	assert_true(worst_n < 0.2);
	built_free(&b);
	mesh_free(&m);
}

/* ---- open quad ------------------------------------------------------------------------------- */

static mesh quad_mesh(double half, double y) {
	mesh m;
	m.nv = 4;
	m.nt = 2;
	m.v = malloc(4 * sizeof *m.v);
	m.t = malloc(6 * sizeof *m.t);
	m.v[0] = v3d(-half, y, -half);
	m.v[1] = v3d(half, y, -half);
	m.v[2] = v3d(half, y, half);
	m.v[3] = v3d(-half, y, half);
	const uint32_t t[6] = {0, 2, 1, 0, 3, 2}; /* counter-clockwise seen from +y */
	memcpy(m.t, t, sizeof t);
	return m;
}

static void check_d(const built* b, pbd_vec3 p, double want, double nx, double ny, double nz) {
	pbd_vec3 n;
	const double d = (double)ops->distance(&b->def, p, &n);
	if (fabs(d - want) > DIST_TOL || fabs((double)n.x - nx) > DIST_TOL || fabs((double)n.y - ny) > DIST_TOL ||
	    fabs((double)n.z - nz) > DIST_TOL)
		fail_msg("at (%g, %g, %g): distance %.9g normal (%.9g, %.9g, %.9g), want %.9g (%g, %g, %g)", (double)p.x,
		         (double)p.y, (double)p.z, d, (double)n.x, (double)n.y, (double)n.z, want, nx, ny, nz);
}

static void test_open_quad(void** state) {
	(void)state;
	mesh m = quad_mesh(1, 0);
	built b = build_mesh(&m, false);
	const double s2 = sqrt(0.5);
	check_d(&b, v3d(0.3, 0.5, -0.2), 0.5, 0, 1, 0);   /* above */
	check_d(&b, v3d(0.3, -0.5, -0.2), 0.5, 0, -1, 0); /* below: the same distance, the other side */
	check_d(&b, v3d(0.5, 0.25, 0.5), 0.25, 0, 1, 0);  /* over the shared diagonal */
	check_d(&b, v3d(2, 0, 0), 1, 1, 0, 0);            /* beside an edge, in the plane */
	check_d(&b, v3d(2, 1, 0), sqrt(2.0), s2, s2, 0);  /* off an edge */
	check_d(&b, v3d(2, -1, 2), sqrt(3.0), 1 / sqrt(3.0), -1 / sqrt(3.0), 1 / sqrt(3.0)); /* off a corner */
	/* On the surface: the face normal, its front (counter-clockwise) side, the fixed choice;
	 * a hair off it, the side the point is on. */
	check_d(&b, v3d(0.2, 0, 0.1), 0, 0, 1, 0);
	check_d(&b, v3d(0.5, 0, 0.5), 0, 0, 1, 0); /* on the diagonal */
	check_d(&b, v3d(1, 0, 0.3), 0, 0, 1, 0);   /* on the boundary edge */
	check_d(&b, v3d(-1, 0, -1), 0, 0, 1, 0);   /* on a corner */
	check_d(&b, v3d(0.2, -1e-30, 0.1), 1e-30, 0, -1, 0);
	check_d(&b, v3d(0.2, 1e-30, 0.1), 1e-30, 0, 1, 0);
	/* Just off the boundary edge: in float the offset is within rounding of the edge and the
	 * face normal (on the point's side) stands in for the lost direction; in double it is not. */
	pbd_vec3 n;
	assert_near(ops->distance(&b.def, v3d(1 + 1e-7, -1e-30, 0.3), &n), TEST_TOL(1e-7, 1.1920929e-7), DIST_TOL);
	assert_near(n.x, TEST_TOL(1, 0), 1e-8); /* the direction's error: epsilon over the distance */
	assert_near(n.y, TEST_TOL(0, -1), 1e-8);
	assert_near(n.z, 0, 1e-8);
	/* Two-sided: the distance is even in y everywhere. */
	uint64_t seed = 5;
	for (int k = 0; k < 20000; ++k) {
		const dvec p = rand_in(&seed, -2, 2);
		pbd_vec3 n1, n2;
		const double d1 = (double)ops->distance(&b.def, v3_of(p), &n1);
		const double d2 = (double)ops->distance(&b.def, v3d(p.x, -p.y, p.z), &n2);
		assert_true(d1 >= 0);
		assert_near(d1, d2, DIST_TOL);
		assert_near(n1.y, -n2.y, DIST_TOL);
		assert_near(d1, ref_mesh_dist(&m, tp_d(v3_of(p)), NULL), DIST_TOL);
	}
	built_free(&b);
	mesh_free(&m);
}

/* ---- hierarchy -------------------------------------------------------------------------------- */

typedef struct soup_ctx {
	const mesh* m;
	dvec p;
	long calls;
} soup_ctx;

static void soup_box(const void* vctx, uint32_t t, pbd_vec3* lo, pbd_vec3* hi) {
	const soup_ctx* c = vctx;
	pbd_vec3 l = c->m->v[c->m->t[3 * t]], h = l;
	for (uint32_t k = 1; k < 3; ++k) {
		const pbd_vec3 v = c->m->v[c->m->t[3 * t + k]];
		l = pbd_v3(PBD_FMIN(l.x, v.x), PBD_FMIN(l.y, v.y), PBD_FMIN(l.z, v.z));
		h = pbd_v3(PBD_FMAX(h.x, v.x), PBD_FMAX(h.y, v.y), PBD_FMAX(h.z, v.z));
	}
	*lo = l;
	*hi = h;
}

static pbd_real soup_dist2(void* vctx, uint32_t t) {
	soup_ctx* c = vctx;
	c->calls++;
	dvec q;
	return (pbd_real)ref_tri_dist2(c->p, vert(c->m, t, 0), vert(c->m, t, 1), vert(c->m, t, 2), &q);
}

static bool box_contains(pbd_vec3 lo, pbd_vec3 hi, pbd_vec3 l, pbd_vec3 h) {
	return lo.x <= l.x && lo.y <= l.y && lo.z <= l.z && hi.x >= h.x && hi.y >= h.y && hi.z >= h.z;
}

/* Every primitive in exactly one leaf, leaves of 1..PBD_BVH_LEAF_SIZE, boxes nested and tight
 * around the leaves' primitives, depth bounded. Returns the depth. */
static int check_tree(const pbd_bvh_node* nodes, uint32_t count, const uint32_t* order, uint32_t n, const soup_ctx* c) {
	char* seen = calloc(n, 1);
	uint32_t stack[2 * PBD_BVH_MAX_DEPTH + 2], depth_of[2 * PBD_BVH_MAX_DEPTH + 2];
	int sp = 0, max_depth = 0;
	uint32_t leaves = 0;
	stack[sp] = 0;
	depth_of[sp++] = 0;
	while (sp > 0) {
		--sp;
		const uint32_t i = stack[sp], depth = depth_of[sp];
		assert_true(i < count);
		max_depth = depth > (uint32_t)max_depth ? (int)depth : max_depth;
		const pbd_bvh_node* nd = &nodes[i];
		if (nd->count) {
			assert_true(nd->count <= PBD_BVH_LEAF_SIZE);
			++leaves;
			for (uint32_t k = 0; k < nd->count; ++k) {
				const uint32_t prim = order[nd->first + k];
				assert_true(prim < n);
				assert_false(seen[prim]);
				seen[prim] = 1;
				pbd_vec3 l, h;
				soup_box(c, prim, &l, &h);
				assert_true(box_contains(nd->lo, nd->hi, l, h));
			}
		} else {
			for (uint32_t k = 0; k < 2; ++k) {
				assert_true(box_contains(nd->lo, nd->hi, nodes[nd->first + k].lo, nodes[nd->first + k].hi));
				assert_true(sp < 2 * PBD_BVH_MAX_DEPTH + 2);
				stack[sp] = nd->first + k;
				depth_of[sp++] = depth + 1;
			}
		}
	}
	for (uint32_t i = 0; i < n; ++i) assert_true(seen[i]);
	assert_int_equal(count, 2 * leaves - 1);
	free(seen);
	assert_true(max_depth < PBD_BVH_MAX_DEPTH);
	return max_depth;
}

static void test_bvh_nearest_vs_brute(void** state) {
	(void)state;
	mesh m = soup(3000, 0.2, 9);
	soup_ctx c = {&m, dv(0, 0, 0), 0};
	pbd_bvh_node* nodes = malloc(pbd_bvh_node_capacity(m.nt) * sizeof *nodes);
	uint32_t* order = malloc(m.nt * sizeof *order);
	const uint32_t count = pbd_bvh_build(nodes, order, m.nt, soup_box, &c);
	const int depth = check_tree(nodes, count, order, m.nt, &c);
	uint64_t seed = 10;
	const int queries = 5000;
	long brute_calls = 0;
	c.calls = 0;
	for (int k = 0; k < queries; ++k) {
		const pbd_vec3 p = v3_of(rand_in(&seed, -1.5, 1.5));
		c.p = tp_d(p);
		pbd_real d2;
		const uint32_t got = pbd_bvh_nearest(nodes, order, p, 1, soup_dist2, &c, &d2);
		uint32_t want = 0;
		pbd_real best = PBD_REAL_MAX;
		for (uint32_t t = 0; t < m.nt; ++t) {
			dvec q;
			const pbd_real d = (pbd_real)ref_tri_dist2(c.p, vert(&m, t, 0), vert(&m, t, 1), vert(&m, t, 2), &q);
			if (d < best) {
				best = d;
				want = t;
			}
		}
		brute_calls += m.nt;
		if (got != want || d2 != best)
			fail_msg("query %d: hierarchy %u (%g), brute force %u (%g)", k, got, (double)d2, want, (double)best);
	}
	printf("hierarchy over %u triangles: %u nodes, depth %d; %d queries agree with brute force, %.1f triangles "
	       "visited per query (of %u)\n",
	       m.nt, count, depth, queries, (double)c.calls / queries, m.nt);
	assert_true(c.calls * 20 < brute_calls);
	/* Ties go to the lowest index: many copies of one triangle. */
	mesh same = soup(1, 0.3, 4);
	mesh many;
	many.nv = 3;
	many.nt = 200;
	many.v = same.v;
	many.t = calloc(3 * 200, sizeof *many.t);
	for (uint32_t t = 0; t < 200; ++t)
		for (uint32_t k = 0; k < 3; ++k) many.t[3 * t + k] = k;
	soup_ctx cm = {&many, dv(0, 0, 0), 0};
	const uint32_t cnt = pbd_bvh_build(nodes, order, many.nt, soup_box, &cm);
	check_tree(nodes, cnt, order, many.nt, &cm);
	for (int k = 0; k < 100; ++k) {
		const pbd_vec3 p = v3_of(rand_in(&seed, -1.5, 1.5));
		cm.p = tp_d(p);
		pbd_real d2;
		assert_int_equal(pbd_bvh_nearest(nodes, order, p, 1, soup_dist2, &cm, &d2), 0);
	}
	free(many.t);
	mesh_free(&same);
	free(nodes);
	free(order);
	mesh_free(&m);
}

/* Tree structure on uneven inputs: points spread geometrically (which drives a greedy split
 * deep), all on one spot, and a single triangle. */
static void test_bvh_structure(void** state) {
	(void)state;
	const uint32_t n = 2000;
	mesh m;
	m.nv = 3 * n;
	m.nt = n;
	m.v = malloc(m.nv * sizeof *m.v);
	m.t = malloc(3 * n * sizeof *m.t);
	for (uint32_t i = 0; i < n; ++i) {
		const double x = pow(1.02, (double)i) * 1e-6;
		for (uint32_t k = 0; k < 3; ++k) {
			m.v[3 * i + k] = v3d(x + 1e-9 * k, k == 1 ? 1e-9 : 0, k == 2 ? 1e-9 : 0);
			m.t[3 * i + k] = 3 * i + k;
		}
	}
	soup_ctx c = {&m, dv(0, 0, 0), 0};
	pbd_bvh_node* nodes = malloc(pbd_bvh_node_capacity(n) * sizeof *nodes);
	uint32_t* order = malloc(n * sizeof *order);
	int depth = check_tree(nodes, pbd_bvh_build(nodes, order, n, soup_box, &c), order, n, &c);
	printf("geometric spread: depth %d\n", depth);
	for (uint32_t i = 0; i < m.nv; ++i) m.v[i] = v3d(0.5, 0.5, 0.5);
	depth = check_tree(nodes, pbd_bvh_build(nodes, order, n, soup_box, &c), order, n, &c);
	printf("all on one spot: depth %d\n", depth);
	assert_true(depth <= 10);
	assert_int_equal(pbd_bvh_build(nodes, order, 1, soup_box, &c), 1);
	assert_int_equal(nodes[0].count, 1);
	free(nodes);
	free(order);
	mesh_free(&m);
}

/* The shape's distance against the brute-force double reference on a soup (open, unsigned). */
static void test_mesh_vs_brute(void** state) {
	(void)state;
	mesh m = soup(1000, 0.3, 12);
	built b = build_mesh(&m, false);
	uint64_t seed = 13;
	double worst = 0;
	for (int k = 0; k < 4000; ++k) {
		const pbd_vec3 p = v3_of(rand_in(&seed, -1.5, 1.5));
		pbd_vec3 n;
		const double d = (double)ops->distance(&b.def, p, &n);
		check_unit_normal(n, "soup");
		const double want = ref_mesh_dist(&m, tp_d(p), NULL);
		worst = fmax(worst, fabs(d - want));
		/* The normal points from the nearest point to p: p - d n is on the surface. */
		if (want > 1e-3) {
			const dvec q = dsub(tp_d(p), dscale(tp_d(n), d));
			assert_true(ref_mesh_dist(&m, q, NULL) <= TEST_TOL(1e-12, 1e-5));
		}
	}
	printf("soup of %u triangles: max |distance - brute force| %.3g\n", m.nt, worst);
	assert_true(worst <= DIST_TOL);
	built_free(&b);
	mesh_free(&m);
}

/* ---- sweeps ----------------------------------------------------------------------------------- */

typedef struct sweep_stats {
	int segments, hits, sampled_hits;
	double surface_err, depth_before, approach;
} sweep_stats;

static void sweep_vs_samples(const built* b, const mesh* m, pbd_vec3 a, pbd_vec3 e, pbd_real radius, sweep_stats* st) {
	const double r = (double)radius;
	pbd_real t = -1;
	pbd_vec3 n = pbd_v3(0, 0, 0);
	const bool hit = ops->sweep(&b->def, a, e, radius, &t, &n);
	const int samples = 1000;
	int first = -1;
	double depth = -1e30;
	for (int i = 0; i <= samples; ++i) {
		const double ti = (double)i / samples;
		if (hit && ti >= (double)t) break;
		const double di = ref_mesh_dist(m, dlerp(a, e, ti), NULL);
		if (first < 0 && di <= r) first = i;
		depth = fmax(depth, r - di);
	}
	st->segments++;
	if (first >= 0) st->sampled_hits++;
	st->depth_before = fmax(st->depth_before, depth);
	if (!hit) return;
	st->hits++;
	assert_true(t >= 0 && t <= 1);
	check_unit_normal(n, "sweep");
	st->surface_err = fmax(st->surface_err, fabs(ref_mesh_dist(m, dlerp(a, e, (double)t), NULL) - r));
	const dvec dir = dsub(tp_d(e), tp_d(a));
	st->approach = fmax(st->approach, ddot(tp_d(n), dir) / dlen(dir));
}

/* Random segments: a third anywhere, a third aimed at a random triangle, a third grazing one
 * (along its plane, offset by the radius plus up to +-1e-3); a quarter of the radii 0. */
static sweep_stats random_sweeps(const built* b, const mesh* m, bool closed, uint64_t seed, int count) {
	sweep_stats st;
	memset(&st, 0, sizeof st);
	st.depth_before = -1e30;
	st.approach = -1;
	while (st.segments < count) {
		const pbd_real radius = tp_rand(&seed) < 0.25 ? 0 : (pbd_real)tp_rand_range(&seed, 0, 0.2);
		pbd_vec3 a = v3_of(rand_in(&seed, -2, 2)), e;
		const double mode = tp_rand(&seed);
		const uint32_t tri = (uint32_t)(tp_rand(&seed) * m->nt) % m->nt;
		const double u = tp_rand(&seed), v = tp_rand(&seed) * (1 - u);
		const dvec A = vert(m, tri, 0), B = vert(m, tri, 1), C = vert(m, tri, 2);
		const dvec on = dadd(A, dadd(dscale(dsub(B, A), u), dscale(dsub(C, A), v)));
		if (mode < 1.0 / 3) {
			e = v3_of(rand_in(&seed, -2, 2));
		} else if (mode < 2.0 / 3) {
			const double k = tp_rand_range(&seed, 0.5, 2);
			e = v3_of(dadd(tp_d(a), dscale(dsub(on, tp_d(a)), k)));
		} else {
			dvec nrm = dcross(dsub(B, A), dsub(C, A));
			const double nl = dlen(nrm);
			if (!(nl > 1e-6)) continue;
			nrm = dscale(nrm, (tp_rand(&seed) < 0.5 ? 1 : -1) / nl);
			dvec tg = dcross(nrm, rand_in(&seed, -1, 1));
			const double tl = dlen(tg);
			if (!(tl > 1e-3)) continue;
			tg = dscale(tg, 1 / tl);
			const dvec c = dadd(on, dscale(nrm, (double)radius + tp_rand_range(&seed, -1e-3, 1e-3)));
			const double len = tp_rand_range(&seed, 0.05, 1.5), before = tp_rand_range(&seed, 0.01, len);
			a = v3_of(dsub(c, dscale(tg, before)));
			e = v3_of(dadd(c, dscale(tg, len - before)));
		}
		const double da = closed && ref_inside(m, tp_d(a)) ? -1 : ref_mesh_dist(m, tp_d(a), NULL);
		pbd_real t;
		pbd_vec3 n;
		if (da < (double)radius - DIST_TOL) {
			assert_false(ops->sweep(&b->def, a, e, radius, &t, &n)); /* starts within the radius */
			continue;
		}
		if (da <= (double)radius + DIST_TOL) continue; /* on the grown surface: either answer */
		sweep_vs_samples(b, m, a, e, radius, &st);
	}
	printf("%d segments, %d hits, %d with a sample within the radius before t; max |distance at t - radius| %.3g, max "
	       "depth of a sample "
	       "before t %.3g, max normal . direction %.3g\n",
	       st.segments, st.hits, st.sampled_hits, st.surface_err, st.depth_before, st.approach);
	assert_true(st.surface_err <= TEST_TOL(1e-12, 4e-6));
	assert_true(st.depth_before <= TEST_TOL(1e-12, 4e-6)); /* never later than a sampled contact */
	assert_true(st.approach <= TEST_TOL(1e-9, 1e-5));
	return st;
}

static void test_sweep_random(void** state) {
	(void)state;
	mesh cube = cube_mesh(0.8, 0.5, 0.3), ico = icosphere(1), sp = soup(60, 0.5, 31), q = quad_mesh(0.7, 0.1);
	built bc = build_mesh(&cube, true), bi = build_mesh(&ico, true), bs = build_mesh(&sp, false),
	      bq = build_mesh(&q, false);
	/* a third of the samples in the builds with assertions (ASan+UBSan) */
	const int d = test_with_assertions() ? 3 : 1;
	sweep_stats st = random_sweeps(&bc, &cube, true, 41, 1500 / d);
	assert_true(st.hits > st.segments / 5);
	st = random_sweeps(&bi, &ico, true, 42, 1000 / d);
	assert_true(st.hits > st.segments / 5);
	st = random_sweeps(&bs, &sp, false, 43, 600 / d);
	assert_true(st.hits > st.segments / 5);
	st = random_sweeps(&bq, &q, false, 44, 1500 / d);
	assert_true(st.hits > st.segments / 5);
	built_free(&bc);
	built_free(&bi);
	built_free(&bs);
	built_free(&bq);
	mesh_free(&cube);
	mesh_free(&ico);
	mesh_free(&sp);
	mesh_free(&q);
}

/* A particle at 100 m/s over a 60 Hz step (1.67 m) through an open plate of no thickness and
 * through a closed plate 1 mm thick, from above and below, at random places and exactly through
 * the shared diagonal and the corners: always caught, at the right t, with the right normal. */
static void check_plate_pass(const built* b, pbd_vec3 a, pbd_vec3 e, pbd_real radius, double top, double sign,
                             bool along_side) {
	pbd_real t = -1;
	pbd_vec3 n = pbd_v3(0, 0, 0);
	if (!ops->sweep(&b->def, a, e, radius, &t, &n))
		fail_msg("tunnelled: (%.9g, %.9g, %.9g) -> (%.9g, %.9g, %.9g), radius %g", (double)a.x, (double)a.y,
		         (double)a.z, (double)e.x, (double)e.y, (double)e.z, (double)radius);
	const double want = (sign * (double)a.y - top - (double)radius) / (sign * ((double)a.y - (double)e.y));
	assert_near(t, want, TEST_TOL(1e-12, 2e-6));
	if (along_side) {
		/* Down the slab's side (its plane holds the motion): the side's normal is as true. */
		assert_true((double)n.y * sign >= 0 && (double)n.y * (double)(e.y - a.y) <= 0);
		assert_true(fabs(tp_len(n) - 1) <= UNIT_TOL);
	} else {
		assert_near(n.y, sign, TEST_TOL(1e-12, 1e-5));
	}
}

static void test_no_tunnelling(void** state) {
	(void)state;
	mesh open = quad_mesh(0.5, 0), slab = cube_mesh(0.5, 0.0005, 0.5);
	built bo = build_mesh(&open, false), bs = build_mesh(&slab, true);
	const double step = 100.0 / 60.0;
	uint64_t seed = 51;
	for (int k = 0; k < 20000; ++k) {
		const pbd_real radius = k % 3 == 0 ? 0 : (pbd_real)(k % 3 == 1 ? 1e-3 : 1e-5);
		double x, z;
		if (k < 12) { /* the corners, the diagonal's ends and middle, an edge's middle */
			const double pts[12][2] = {{-0.5, -0.5}, {0.5, -0.5},  {0.5, 0.5},       {-0.5, 0.5},
			                           {0, 0},       {0.25, 0.25}, {-0.25, -0.25},   {0.5, 0},
			                           {0, 0.5},     {0.1, 0.1},   {0.4999, 0.4999}, {-0.5, 0}};
			x = pts[k][0];
			z = pts[k][1];
		} else if (k < 2000) { /* on the diagonal */
			x = z = tp_rand_range(&seed, -0.5, 0.5);
		} else {
			x = tp_rand_range(&seed, -0.5, 0.5);
			z = tp_rand_range(&seed, -0.5, 0.5);
		}
		const double dx = tp_rand_range(&seed, -0.01, 0.01), dz = tp_rand_range(&seed, -0.01, 0.01);
		const double f = tp_rand_range(&seed, 0.1, 0.9); /* where in the step the plate is crossed */
		const double up = f * step, down = (1 - f) * step;
		const pbd_vec3 a = v3d(x - f * dx, up, z - f * dz), e = v3d(x + (1 - f) * dx, -down, z + (1 - f) * dz);
		if (k < 12 || fabs(x) > 0.499 || fabs(z) > 0.499) {
			/* Straight down at the edges and corners, so that the crossing is exactly there. */
			const pbd_vec3 a2 = v3d(x, up, z), e2 = v3d(x, -down, z);
			const bool side = fabs(x) >= 0.5 || fabs(z) >= 0.5;
			check_plate_pass(&bo, a2, e2, radius, 0, 1, false);
			check_plate_pass(&bo, e2, a2, radius, 0, -1, false);
			check_plate_pass(&bs, a2, e2, radius, 0.0005, 1, side);
			check_plate_pass(&bs, e2, a2, radius, 0.0005, -1, side);
			continue;
		}
		check_plate_pass(&bo, a, e, radius, 0, 1, false);
		check_plate_pass(&bo, e, a, radius, 0, -1, false);
		check_plate_pass(&bs, a, e, radius, 0.0005, 1, false);
		check_plate_pass(&bs, e, a, radius, 0.0005, -1, false);
	}
	built_free(&bo);
	built_free(&bs);
	mesh_free(&open);
	mesh_free(&slab);
}

/* ---- validation ---------------------------------------------------------------------------------- */

static void check_validate(pbd_world* w, char* msg, pbd_collider_def cd, pbd_status want, const char* field) {
	msg[0] = '\0';
	const pbd_status st = ops->validate(w, &cd);
	if (st != want) fail_msg("validate: status %d, want %d (%s)", (int)st, (int)want, msg);
	if (want == PBD_OK) {
		assert_string_equal(msg, "");
		return;
	}
	printf("  %s\n", msg);
	assert_int_equal(strncmp(msg, "pbd_collider_create: ", 21), 0);
	assert_null(strchr(msg, '\n'));
	if (!strstr(msg, field)) fail_msg("message \"%s\" does not name \"%s\"", msg, field);
}

static void test_validate(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = test_world_keep(msg);
	mesh cube = cube_mesh(1, 1, 1), q = quad_mesh(1, 0);
	check_validate(w, msg, mesh_def(&cube, true), PBD_OK, "");
	check_validate(w, msg, mesh_def(&cube, false), PBD_OK, "");
	check_validate(w, msg, mesh_def(&q, false), PBD_OK, "");

	pbd_collider_def cd = mesh_def(&cube, true);
	cd.shape.mesh.vertices = NULL;
	check_validate(w, msg, cd, PBD_ERR_INVALID_ARGUMENT, "NULL");
	cd = mesh_def(&cube, true);
	cd.shape.mesh.triangles = NULL;
	check_validate(w, msg, cd, PBD_ERR_INVALID_ARGUMENT, "NULL");
	cd = mesh_def(&cube, false);
	cd.shape.mesh.triangle_count = 0;
	check_validate(w, msg, cd, PBD_ERR_INVALID_ARGUMENT, "triangle_count");
	cd.shape.mesh.triangle_count = PBD_OBJ_MAX_TRIANGLES + 1;
	check_validate(w, msg, cd, PBD_ERR_OUT_OF_RANGE, "triangle_count");

	/* Indices: the triangle and the index named. */
	cube.t[3 * 5 + 1] = 8;
	check_validate(w, msg, mesh_def(&cube, false), PBD_ERR_OUT_OF_RANGE, "triangle 5: vertex index 8");
	cube.t[3 * 5 + 1] = UINT32_MAX;
	check_validate(w, msg, mesh_def(&cube, true), PBD_ERR_OUT_OF_RANGE, "4294967295");
	mesh_free(&cube);
	cube = cube_mesh(1, 1, 1);

	/* Vertices: NaN, infinite, beyond the bound; the margin. */
	const pbd_vec3 keep = cube.v[2];
	cube.v[2].y = (pbd_real)NAN;
	check_validate(w, msg, mesh_def(&cube, false), PBD_ERR_NOT_FINITE, "vertex 2");
	cube.v[2].y = (pbd_real)INFINITY;
	check_validate(w, msg, mesh_def(&cube, true), PBD_ERR_NOT_FINITE, "vertex 2");
	cube.v[2].y = PBD_SQRT(PBD_REAL_MAX);
	check_validate(w, msg, mesh_def(&cube, true), PBD_ERR_OUT_OF_RANGE, "vertex 2");
	cube.v[2] = keep;
	cd = mesh_def(&cube, true);
	cd.margin = PBD_SQRT(PBD_REAL_MAX);
	check_validate(w, msg, cd, PBD_ERR_OUT_OF_RANGE, "margin");

	/* Closed: an open mesh, a flipped triangle, a repeated vertex, inside out. */
	check_validate(w, msg, mesh_def(&q, true), PBD_ERR_DEGENERATE, "edge (2, 1)");
	mesh holed = cube_mesh(1, 1, 1);
	holed.nt = 11; /* the last triangle gone */
	check_validate(w, msg, mesh_def(&holed, true), PBD_ERR_DEGENERATE, "not closed");
	mesh_free(&holed);
	mesh flip = cube_mesh(1, 1, 1);
	const uint32_t s = flip.t[3 * 7 + 1];
	flip.t[3 * 7 + 1] = flip.t[3 * 7 + 2];
	flip.t[3 * 7 + 2] = s;
	check_validate(w, msg, mesh_def(&flip, true), PBD_ERR_DEGENERATE, "winding");
	check_validate(w, msg, mesh_def(&flip, false), PBD_OK, "");
	mesh_free(&flip);
	mesh rep = cube_mesh(1, 1, 1);
	rep.t[1] = rep.t[0];
	check_validate(w, msg, mesh_def(&rep, true), PBD_ERR_DEGENERATE, "repeats");
	check_validate(w, msg, mesh_def(&rep, false), PBD_OK, "");
	mesh_free(&rep);
	mesh inv = cube_mesh(1, 1, 1);
	for (uint32_t t = 0; t < inv.nt; ++t) {
		const uint32_t x = inv.t[3 * t + 1];
		inv.t[3 * t + 1] = inv.t[3 * t + 2];
		inv.t[3 * t + 2] = x;
	}
	check_validate(w, msg, mesh_def(&inv, true), PBD_ERR_DEGENERATE, "inside out");
	mesh_free(&inv);
	/* Two triangles back to back: closed, but nothing inside. */
	mesh two = quad_mesh(1, 0);
	two.nt = 2;
	const uint32_t bb[6] = {0, 2, 1, 0, 1, 2};
	memcpy(two.t, bb, sizeof bb);
	check_validate(w, msg, mesh_def(&two, true), PBD_ERR_DEGENERATE, "no volume");
	mesh_free(&two);
	/* The edge named is the first bad one in triangle order. */
	mesh open3 = cube_mesh(1, 1, 1);
	open3.t[3 * 0 + 0] = 4; /* triangle 0 was (1, 3, 7): now (4, 3, 7) */
	check_validate(w, msg, mesh_def(&open3, true), PBD_ERR_DEGENERATE, "(4, 3)");
	mesh_free(&open3);
	mesh_free(&cube);
	mesh_free(&q);
	pbd_world_destroy(w);
}

/* ---- degenerate triangles ---------------------------------------------------------------------- */

static void test_degenerate(void** state) {
	(void)state;
	/* Open: a segment-like triangle, a point-like one, one with two equal corners, a sliver. */
	mesh m;
	m.nv = 9;
	m.nt = 5;
	m.v = malloc(9 * sizeof *m.v);
	m.t = malloc(15 * sizeof *m.t);
	const double pv[9][3] = {{0, 0, 0},   {1, 0, 0},  {2, 0, 0},  {0.5, 1, 0.5},    {-1, -1, 1},
	                         {-1, -1, 1}, {0, 1, -1}, {1, 1, -1}, {2, 1, -1 + 1e-7}};
	for (int i = 0; i < 9; ++i) m.v[i] = v3d(pv[i][0], pv[i][1], pv[i][2]);
	const uint32_t tt[15] = {0, 1, 2, 3, 3, 3, 4, 5, 6, 6, 7, 8, 2, 1, 0};
	memcpy(m.t, tt, sizeof tt);
	built b = build_mesh(&m, false);
	uint64_t seed = 61;
	double worst = 0;
	for (int k = 0; k < 20000; ++k) {
		const pbd_vec3 p = v3_of(rand_in(&seed, -2.5, 2.5));
		pbd_vec3 n;
		const double d = (double)ops->distance(&b.def, p, &n);
		check_unit_normal(n, "degenerate");
		worst = fmax(worst, fabs(d - ref_mesh_dist(&m, tp_d(p), NULL)));
	}
	/* Exactly on them. */
	for (int i = 0; i < 9; ++i) {
		pbd_vec3 n;
		assert_near(ops->distance(&b.def, m.v[i], &n), 0, DIST_TOL);
		check_unit_normal(n, "on a degenerate corner");
	}
	pbd_vec3 n;
	assert_near(ops->distance(&b.def, v3d(0.5, 0, 0), &n), 0, DIST_TOL);
	check_unit_normal(n, "on a degenerate edge");
	printf("degenerate triangles: max |distance - brute force| %.3g\n", worst);
	assert_true(worst <= DIST_TOL);
	sweep_stats st = random_sweeps(&b, &m, false, 62, 500);
	(void)st;
	built_free(&b);
	mesh_free(&m);

	/* Closed: a cube whose triangle 0, (c, a, b), is split at the midpoint m of its edge a -> b
	 * into (c, a, m) and (c, m, b), and the zero-area triangle (a, b, m) closes the split: its
	 * a -> b pairs the neighbour's b -> a, b -> m pairs m -> b, m -> a pairs a -> m. */
	mesh c = cube_mesh(1, 0.5, 0.25);
	const uint32_t cc = c.t[0], ea = c.t[1], eb = c.t[2], mid = 8;
	mesh d;
	d.nv = 9;
	d.nt = 14;
	d.v = malloc(9 * sizeof *d.v);
	d.t = malloc(42 * sizeof *d.t);
	memcpy(d.v, c.v, 8 * sizeof *d.v);
	d.v[8] = v3_of(dscale(dadd(tp_d(c.v[ea]), tp_d(c.v[eb])), 0.5));
	memcpy(d.t, c.t, 36 * sizeof *d.t);
	const uint32_t t0[3] = {cc, ea, mid}, t12[3] = {cc, mid, eb}, t13[3] = {ea, eb, mid};
	memcpy(d.t, t0, sizeof t0);
	memcpy(d.t + 36, t12, sizeof t12);
	memcpy(d.t + 39, t13, sizeof t13);
	built bd = build_mesh(&d, true);
	check_against_box(&bd, dv(1, 0.5, 0.25), 63, 50000);
	built_free(&bd);
	mesh_free(&d);
	mesh_free(&c);
}

/* ---- determinism, bounds, triangles, OBJ -------------------------------------------------------- */

static void test_build_deterministic(void** state) {
	(void)state;
	mesh ms[3] = {cube_mesh(1, 0.5, 0.25), icosphere(2), soup(500, 0.3, 71)};
	const bool closed[3] = {true, true, false};
	for (int i = 0; i < 3; ++i) {
		built b1 = build_def(mesh_def(&ms[i], closed[i]), 0x00), b2 = build_def(mesh_def(&ms[i], closed[i]), 0xFF);
		assert_int_equal(b1.size, b2.size);
		assert_memory_equal(b1.data, b2.data, b1.size);
		/* A snapshot reload: the def pointing into the first copy builds the same bytes. */
		built b3 = build_def(b1.def, 0x3C);
		assert_int_equal(b3.size, b1.size);
		assert_memory_equal(b1.data, b3.data, b1.size);
		/* And rebuilding in place changes nothing. */
		pbd_collider_def again = b1.def;
		ops->build(&again, b1.data);
		assert_memory_equal(b1.data, b3.data, b1.size);
		built_free(&b1);
		built_free(&b2);
		built_free(&b3);
		mesh_free(&ms[i]);
	}
}

static void test_bounds_and_triangles(void** state) {
	(void)state;
	mesh m = icosphere(1);
	built b = build_mesh(&m, true);
	pbd_vec3 lo, hi;
	assert_true(ops->bounds(&b.def, &lo, &hi));
	pbd_vec3 wl = m.v[0], wh = m.v[0];
	for (uint32_t i = 1; i < m.nv; ++i) {
		wl = pbd_v3(PBD_FMIN(wl.x, m.v[i].x), PBD_FMIN(wl.y, m.v[i].y), PBD_FMIN(wl.z, m.v[i].z));
		wh = pbd_v3(PBD_FMAX(wh.x, m.v[i].x), PBD_FMAX(wh.y, m.v[i].y), PBD_FMAX(wh.z, m.v[i].z));
	}
	assert_memory_equal(&lo, &wl, sizeof lo);
	assert_memory_equal(&hi, &wh, sizeof hi);
	uint32_t nv = 0, nt = 0;
	ops->triangles(&b.def, NULL, 0, NULL, 0, &nv, &nt);
	assert_int_equal(nv, m.nv);
	assert_int_equal(nt, m.nt);
	pbd_vec3* v = malloc(m.nv * sizeof *v);
	uint32_t* t = malloc(3 * m.nt * sizeof *t);
	ops->triangles(&b.def, v, m.nv, t, m.nt, &nv, &nt);
	assert_memory_equal(v, m.v, m.nv * sizeof *v);
	assert_memory_equal(t, m.t, 3 * m.nt * sizeof *t);
	uint32_t part[6] = {7, 7, 7, 7, 7, 7};
	ops->triangles(&b.def, NULL, 0, part, 1, &nv, &nt); /* capacity 1: only the first triangle */
	assert_memory_equal(part, m.t, 3 * sizeof *part);
	assert_int_equal(part[3], 7);
	assert_int_equal(nt, m.nt);
	free(v);
	free(t);
	built_free(&b);
	mesh_free(&m);
}

/* A pbd_mesh (here from OBJ text) is a pbd_trimesh by its positions and triangles. */
static void test_obj_mesh(void** state) {
	(void)state;
	const char obj[] = "v -1 -0.5 -0.25\nv 1 -0.5 -0.25\nv -1 0.5 -0.25\nv 1 0.5 -0.25\n"
	                   "v -1 -0.5 0.25\nv 1 -0.5 0.25\nv -1 0.5 0.25\nv 1 0.5 0.25\n"
	                   "f 2 4 8 6\nf 1 5 7 3\nf 3 7 8 4\nf 1 2 6 5\nf 5 6 8 7\nf 1 3 4 2\n";
	pbd_mesh pm;
	pbd_error err;
	assert_int_equal(pbd_mesh_load_obj_memory(obj, sizeof obj - 1, "cube.obj", false, &pm, &err), PBD_OK);
	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_MESH;
	cd.shape.mesh.vertices = pm.positions;
	cd.shape.mesh.triangles = pm.triangles;
	cd.shape.mesh.vertex_count = pm.vertex_count;
	cd.shape.mesh.triangle_count = pm.triangle_count;
	cd.shape.mesh.closed = true;
	built b = build_def(cd, 0);
	pbd_mesh_free(&pm); /* the shape owns its copy */
	check_against_box(&b, dv(1, 0.5, 0.25), 81, 20000);
	built_free(&b);
}

/* ---- extremes and cost ---------------------------------------------------------------------------- */

static void test_extreme_points(void** state) {
	(void)state;
	mesh ms[2] = {cube_mesh(1, 0.5, 0.25), quad_mesh(1, 0)};
	const pbd_real big = PBD_REAL_MAX, tiny = (pbd_real)1e-30, cap = PBD_SQRT(PBD_REAL_MAX) / 4;
	for (int i = 0; i < 2; ++i) {
		built b = build_mesh(&ms[i], i == 0);
		const pbd_vec3 pts[] = {pbd_v3(big, big, big), pbd_v3(-big, big, -big), pbd_v3(big, 0, 0),
		                        pbd_v3(0, -big, 0),    pbd_v3(big, tiny, 0),    pbd_v3(tiny, big, -big),
		                        pbd_v3(cap, cap, cap), pbd_v3(2 * cap, 0, 0),   pbd_v3(tiny, tiny, tiny),
		                        pbd_v3(1, tiny, 0),    pbd_v3(0, 0, 0)};
		for (size_t k = 0; k < sizeof pts / sizeof pts[0]; ++k) {
			pbd_vec3 n;
			const pbd_real d = ops->distance(&b.def, pts[k], &n);
			assert_true(pbd_is_finite(d));
			check_unit_normal(n, "extreme");
		}
		pbd_vec3 n;
		const double far = (double)ops->distance(&b.def, pbd_v3(big, 0, 0), &n);
		assert_near(far / (double)big, 1, 1e-6);
		assert_near(n.x, 1, UNIT_TOL);
		built_free(&b);
		mesh_free(&ms[i]);
	}
	/* A mesh at the bound of its coordinates, far from the origin. */
	mesh c = cube_mesh(1, 1, 1);
	for (uint32_t i = 0; i < c.nv; ++i) c.v[i] = pbd_v3_add(pbd_v3_scale(c.v[i], cap / 4), pbd_v3(cap / 2, 0, 0));
	built b = build_mesh(&c, true);
	pbd_vec3 n;
	assert_near(ops->distance(&b.def, pbd_v3(cap / 2, 0, 0), &n) / (cap / 4), -1, 1e-5);
	assert_near(ops->distance(&b.def, pbd_v3(-cap, 0, 0), &n) / (cap / 4), 5, 1e-5);
	assert_near(n.x, -1, UNIT_TOL);
	built_free(&b);
	mesh_free(&c);
}

/* A point that is not finite (a particle whose state overflowed in a substep, which the step
 * then undoes) has no nearest triangle: the hierarchy says so (PBD_BVH_NONE), and the mesh
 * answers no contact (PBD_REAL_MAX, a unit normal, no sweep hit) without indexing its triangles
 * with the answer it did not find. */
static void test_no_nearest_triangle(void** state) {
	(void)state;
	const pbd_real inf = (pbd_real)INFINITY, nan = (pbd_real)NAN;
	const pbd_vec3 pts[] = {pbd_v3(inf, 0, 0), pbd_v3(0, -inf, 0),    pbd_v3(inf, -inf, inf),
	                        pbd_v3(0, 0, nan), pbd_v3(nan, nan, nan), pbd_v3(1, inf, nan)};
	const size_t np = sizeof pts / sizeof pts[0];
	test_disable_fp_traps(); /* inf - inf, as a step that overflowed computes it */
	mesh ms[2] = {cube_mesh(1, 0.5, 0.25), quad_mesh(1, 0)};
	for (int i = 0; i < 2; ++i) {
		built b = build_mesh(&ms[i], i == 0);
		for (size_t k = 0; k < np; ++k) {
			pbd_vec3 n = pbd_v3(0, 0, 0);
			assert_true(ops->distance(&b.def, pts[k], &n) >= PBD_REAL_MAX);
			check_unit_normal(n, "no nearest triangle");
			pbd_real t = 2;
			assert_false(ops->sweep(&b.def, pts[k], pbd_v3(0, 0, 0), (pbd_real)0.01, &t, &n));
			assert_false(ops->sweep(&b.def, pbd_v3(0, 3, 0), pts[k], (pbd_real)0.01, &t, &n));
		}
		built_free(&b);
		mesh_free(&ms[i]);
	}
	/* The hierarchy itself, over a random soup: every squared distance is inf or NaN. */
	mesh m = soup(200, 0.1, 17);
	soup_ctx c = {&m, dv(0, 0, 0), 0};
	pbd_bvh_node* nodes = malloc(pbd_bvh_node_capacity(m.nt) * sizeof *nodes);
	uint32_t* order = malloc(m.nt * sizeof *order);
	pbd_bvh_build(nodes, order, m.nt, soup_box, &c);
	for (size_t k = 0; k < np; ++k) {
		c.p = tp_d(pts[k]);
		pbd_real d2 = 0;
		assert_int_equal(pbd_bvh_nearest(nodes, order, pts[k], 1, soup_dist2, &c, &d2), PBD_BVH_NONE);
		assert_true(d2 == PBD_REAL_MAX);
	}
	test_enable_fp_traps();
	free(nodes);
	free(order);
	mesh_free(&m);
}

/* A kinematic mesh collider moving at 1.7e15 m/s and faster through a cloth: the collider's
 * contacts push particles so far that a substep's state overflows, and the settling of the
 * contacts then asks the mesh for the distance of a point that is not finite. No read past the
 * triangles (ASan), no NaN: each such step is undone (the state stays finite) and counted. A
 * speed the API refuses (a bound on kinematic velocities) has nothing to test. */
static void test_kinematic_mesh_at_extreme_speed(void** state) {
	(void)state;
	const double speeds[] = {1.7e15, -1.7e15, 1e22, 1e30};
	for (int axis = 0; axis < 3; ++axis)
		for (size_t k = 0; k < sizeof speeds / sizeof speeds[0]; ++k)
			for (int closed = 0; closed < 2; ++closed) {
				char msg[256] = "";
				pbd_world* w = test_world_keep(msg);
				pbd_mesh g;
				tp_grid(&g, 6, 6, 1, pbd_v3((pbd_real)-0.5, (pbd_real)0.3, (pbd_real)-0.5), 1, false);
				pbd_soft_def bd = pbd_soft_def_default();
				bd.mesh = &g;
				assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
				pbd_mesh_free(&g);
				mesh m = cube_mesh(0.5, 0.25, 0.5);
				pbd_collider_def cd = mesh_def(&m, closed == 1);
				cd.kind = PBD_ACTOR_KINEMATIC;
				const pbd_real v = (pbd_real)speeds[k];
				cd.velocity = pbd_v3(axis == 0 ? v : 0, axis == 1 ? v : 0, axis == 2 ? v : 0);
				const bool made = pbd_collider_is_valid(w, pbd_collider_create(w, &cd));
				mesh_free(&m);
				if (!made) {
					assert_true(msg[0] != 0);
					pbd_world_destroy(w);
					continue;
				}
				/* The state overflows: the step undoes it and says so, which is the result here. */
				test_disable_fp_traps();
				for (int s = 0; s < 30; ++s) {
					const pbd_status st = pbd_world_step(w);
					assert_true(st == PBD_OK || st == PBD_ERR_NOT_FINITE);
					assert_true(tp_all_finite(w));
				}
				test_enable_fp_traps();
				pbd_world_destroy(w);
			}
}

/* A cloth lying on a mesh collider is thrown at 1e30 m/s and more: the contacts found at the
 * start of the substep hold particles whose predicted positions overflow, and settling them asks
 * the mesh for the distance of a point that is not finite. No read past the triangles (ASan), no
 * NaN left behind: the step is undone, said so, and the state stays finite. */
static void test_mesh_contact_overflow(void** state) {
	(void)state;
	const double speeds[] = {1e30, (double)PBD_REAL_MAX / 2};
	for (int closed = 0; closed < 2; ++closed)
		for (size_t k = 0; k < sizeof speeds / sizeof speeds[0]; ++k) {
			char msg[256] = "";
			pbd_world* w = test_world_keep(msg);
			pbd_mesh g;
			tp_grid(&g, 6, 6, (pbd_real)0.4, pbd_v3((pbd_real)-0.2, (pbd_real)0.25, (pbd_real)-0.2), 1, false);
			pbd_soft_def bd = pbd_soft_def_default();
			bd.mesh = &g;
			assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
			pbd_mesh_free(&g);
			mesh m = cube_mesh(0.5, 0.25, 0.5); /* the cloth lies on its top face */
			pbd_collider_def cd = mesh_def(&m, closed == 1);
			cd.margin = (pbd_real)0.01;
			assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
			mesh_free(&m);
			const uint32_t n = pbd_world_particle_count(w);
			pbd_vec3 v[36];
			for (uint32_t i = 0; i < n; ++i) v[i] = pbd_v3(0, (pbd_real)((i % 2 ? 1 : -1) * speeds[k]), 0);
			assert_int_equal(pbd_world_set_velocities(w, 0, n, v), PBD_OK);
			test_disable_fp_traps(); /* the overflow is the point */
			for (int s = 0; s < 3; ++s) {
				assert_int_equal(pbd_world_step(w), PBD_OK);
				assert_true(tp_all_finite(w));
			}
			test_enable_fp_traps();
			/* 1e30 m/s overflows a float's squared distances, not a double's. */
			if (speeds[k] > sqrt((double)PBD_REAL_MAX))
				assert_true(pbd_world_get_warning(w, PBD_WARN_NONFINITE).count > 0);
			pbd_world_destroy(w);
		}
}

/* Processor time, so that a loaded machine does not inflate the figures. */
static double now(void) { return (double)clock() / CLOCKS_PER_SEC; }

/* Build, then distances and sweeps at points near the surface (as the contact stage asks: a
 * particle within its reach of the collider) and anywhere in the box. */
static void test_cost_100k(void** state) {
	(void)state;
	mesh ms[2] = {terrain(224, 224), soup(100000, 0.05, 91)};
	const char* names[2] = {"terrain", "soup"};
	for (int i = 0; i < 2; ++i) {
		pbd_collider_def cd = mesh_def(&ms[i], false);
		const size_t size = ops->data_size(&cd);
		void* data = malloc(size);
		const double t0 = now();
		ops->build(&cd, data);
		const double t1 = now();
		uint64_t seed = 92;
		const int q = 50000;
		double near_us = 0, far_us = 0;
		for (int pass = 0; pass < 2; ++pass) {
			const double s0 = now();
			for (int k = 0; k < q; ++k) {
				dvec p = rand_in(&seed, -1.2, 1.2);
				if (pass == 0) { /* within 5 cm of a random triangle */
					const uint32_t t = (uint32_t)(tp_rand(&seed) * ms[i].nt) % ms[i].nt;
					p = dadd(vert(&ms[i], t, 0), rand_in(&seed, -0.05, 0.05));
				}
				pbd_vec3 n;
				(void)ops->distance(&cd, v3_of(p), &n);
			}
			*(pass == 0 ? &near_us : &far_us) = 1e6 * (now() - s0) / q;
		}
		const double s2 = now();
		int hits = 0;
		for (int k = 0; k < q; ++k) {
			const uint32_t t = (uint32_t)(tp_rand(&seed) * ms[i].nt) % ms[i].nt;
			const pbd_vec3 a = v3_of(dadd(vert(&ms[i], t, 0), rand_in(&seed, -0.05, 0.05)));
			const pbd_vec3 e = pbd_v3_add(a, v3_of(rand_in(&seed, -0.05, 0.05)));
			pbd_real th;
			pbd_vec3 n;
			hits += ops->sweep(&cd, a, e, (pbd_real)0.01, &th, &n);
		}
		const double s3 = now();
		printf("%s: %u triangles, %.1f MB, build %.1f ms; distance %.2f us near the surface, %.2f us anywhere; "
		       "sweep of 5 cm with radius 1 cm near the surface %.2f us (%d hits) (processor time)\n",
		       names[i], ms[i].nt, (double)size / 1e6, 1e3 * (t1 - t0), near_us, far_us, 1e6 * (s3 - s2) / q, hits);
		free(data);
		mesh_free(&ms[i]);
	}
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cube_vs_box),
	    cmocka_unit_test(test_icosphere_vs_sphere),
	    cmocka_unit_test(test_open_quad),
	    cmocka_unit_test(test_bvh_nearest_vs_brute),
	    cmocka_unit_test(test_bvh_structure),
	    cmocka_unit_test(test_mesh_vs_brute),
	    cmocka_unit_test(test_sweep_random),
	    cmocka_unit_test(test_no_tunnelling),
	    cmocka_unit_test(test_validate),
	    cmocka_unit_test(test_degenerate),
	    cmocka_unit_test(test_build_deterministic),
	    cmocka_unit_test(test_bounds_and_triangles),
	    cmocka_unit_test(test_obj_mesh),
	    cmocka_unit_test(test_extreme_points),
	    cmocka_unit_test(test_no_nearest_triangle),
	    cmocka_unit_test(test_kinematic_mesh_at_extreme_speed),
	    cmocka_unit_test(test_mesh_contact_overflow),
	    cmocka_unit_test(test_cost_100k),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
