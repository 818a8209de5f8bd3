/* The convex hull shape, called through its ops in the shape's frame: the hull it builds (a
 * closed, consistently wound surface whose vertices are input points, with every input point
 * behind every face: that is the convex hull), distances and normals against a brute-force
 * reference computed here in double from the hull's triangles (and against the box's closed form
 * for a cube given with interior points), closed forms on a tetrahedron and an octahedron,
 * normals against central differences, unit normals everywhere, sweeps against a dense sampling
 * of random segments, the special segments, validation, determinism of the built bytes and big
 * or degenerate point sets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collision/collide.h"
#include "collision/convex_hull.h"
#include "test_physics.h"

/* Hulls of about 1 m: the float tolerances follow from a few roundings of numbers near 1 (the
 * library computes in double; the float result is rounded once). */
#define DIST_TOL TEST_TOL(1e-12, 2e-6)
#define UNIT_TOL TEST_TOL(1e-14, 1e-6)
/* How far the hull may be from the exact one, per metre of size (quickhull drops points within
 * about 1e-11 (double) or 1e-7 (float) of it). */
#define HULL_TOL TEST_TOL(1e-9, 2e-6)

static const pbd_shape_ops* const ops = &pbd_shape_convex_ops;

typedef struct hull {
	pbd_collider_def cd;
	void* data;
	size_t size;
	/* The built surface, read back through the triangles op, and its planes (computed here). */
	pbd_vec3* verts;
	uint32_t* tris;
	uint32_t nv, nt;
	tp_dvec3* pn; /* unit outward normals */
	double* po;   /* plane offsets: inside is dot(pn, x) <= po */
} hull;

static tp_dvec3 dv(double x, double y, double z) {
	tp_dvec3 r = {x, y, z};
	return r;
}
static tp_dvec3 dsub(tp_dvec3 a, tp_dvec3 b) { return dv(a.x - b.x, a.y - b.y, a.z - b.z); }
static tp_dvec3 dadd(tp_dvec3 a, tp_dvec3 b) { return dv(a.x + b.x, a.y + b.y, a.z + b.z); }
static tp_dvec3 dscale(tp_dvec3 a, double s) { return dv(a.x * s, a.y * s, a.z * s); }
static double ddot(tp_dvec3 a, tp_dvec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static double dlen(tp_dvec3 a) { return sqrt(ddot(a, a)); }
static tp_dvec3 dcross(tp_dvec3 a, tp_dvec3 b) {
	return dv(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static pbd_vec3 v3d(double x, double y, double z) { return pbd_v3((pbd_real)x, (pbd_real)y, (pbd_real)z); }
static pbd_vec3 v3_of(tp_dvec3 v) { return v3d(v.x, v.y, v.z); }
/* v rounded to pbd_real and back. Through memory: gcc 12 at -O2 vectorises the x and y of
 * tp_d(v3_of(v)) and then uses the unrounded doubles (seen on Debian 12.2.0). */
static tp_dvec3 as_real(tp_dvec3 v) {
	volatile pbd_real r[3] = {(pbd_real)v.x, (pbd_real)v.y, (pbd_real)v.z};
	return dv((double)r[0], (double)r[1], (double)r[2]);
}

/* Drawn x, y, z in this order whatever order the compiler evaluates arguments in. */
static tp_dvec3 rand_box(uint64_t* seed, double hx, double hy, double hz) {
	const double x = tp_rand_range(seed, -hx, hx);
	const double y = tp_rand_range(seed, -hy, hy);
	const double z = tp_rand_range(seed, -hz, hz);
	return dv(x, y, z);
}
static tp_dvec3 rand_cube(uint64_t* seed, double half) { return rand_box(seed, half, half, half); }
static tp_dvec3 rand_unit(uint64_t* seed) {
	for (;;) {
		const tp_dvec3 v = rand_cube(seed, 1);
		const double l = dlen(v);
		if (l > 0.1 && l <= 1) return dscale(v, 1 / l);
	}
}

static tp_dvec3 dlerp(pbd_vec3 a, pbd_vec3 b, double t) {
	return dv((double)a.x + t * ((double)b.x - (double)a.x), (double)a.y + t * ((double)b.y - (double)a.y),
	          (double)a.z + t * ((double)b.z - (double)a.z));
}

static pbd_collider_def convex_def(const pbd_vec3* pts, uint32_t n) {
	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_CONVEX;
	cd.shape.convex.points = pts;
	cd.shape.convex.point_count = n;
	return cd;
}

/* Validates (with a world that fails the test on any message), builds into a block of its own
 * and reads the surface back. */
static hull hull_make(const pbd_vec3* pts, uint32_t n) {
	hull h;
	memset(&h, 0, sizeof h);
	h.cd = convex_def(pts, n);
	pbd_world* w = test_world(NULL);
	assert_int_equal(ops->validate(w, &h.cd), PBD_OK);
	pbd_world_destroy(w);
	h.size = ops->data_size(&h.cd);
	h.data = malloc(h.size);
	assert_non_null(h.data);
	memset(h.data, 0xA5, h.size);
	ops->build(&h.cd, h.data);
	assert_ptr_equal(h.cd.shape.convex.points, h.data);
	assert_int_equal(h.cd.shape.convex.point_count, n);
	assert_memory_equal(h.data, pts, (size_t)n * sizeof(pbd_vec3));
	ops->triangles(&h.cd, NULL, 0, NULL, 0, &h.nv, &h.nt);
	h.verts = malloc((size_t)h.nv * sizeof *h.verts);
	h.tris = malloc(3 * (size_t)h.nt * sizeof *h.tris);
	h.pn = malloc((size_t)h.nt * sizeof *h.pn);
	h.po = malloc((size_t)h.nt * sizeof *h.po);
	assert_true(h.verts && h.tris && h.pn && h.po);
	uint32_t nv2 = 0, nt2 = 0;
	ops->triangles(&h.cd, h.verts, h.nv, h.tris, h.nt, &nv2, &nt2);
	assert_int_equal(nv2, h.nv);
	assert_int_equal(nt2, h.nt);
	for (uint32_t f = 0; f < h.nt; ++f) {
		const tp_dvec3 a = tp_d(h.verts[h.tris[3 * f]]), b = tp_d(h.verts[h.tris[3 * f + 1]]),
		               c = tp_d(h.verts[h.tris[3 * f + 2]]);
		const tp_dvec3 nn = dcross(dsub(b, a), dsub(c, a));
		const double l = dlen(nn);
		assert_true(l > 0);
		h.pn[f] = dscale(nn, 1 / l);
		h.po[f] = (ddot(h.pn[f], a) + ddot(h.pn[f], b) + ddot(h.pn[f], c)) / 3;
	}
	return h;
}

static void hull_free(hull* h) {
	free(h->data);
	free(h->verts);
	free(h->tris);
	free(h->pn);
	free(h->po);
}

/* The point of segment [a, b] nearest to p. */
static tp_dvec3 ref_on_segment(tp_dvec3 p, tp_dvec3 a, tp_dvec3 b) {
	const tp_dvec3 ab = dsub(b, a);
	const double l2 = ddot(ab, ab);
	double s = l2 > 0 ? ddot(dsub(p, a), ab) / l2 : 0;
	s = s < 0 ? 0 : (s > 1 ? 1 : s);
	return dadd(a, dscale(ab, s));
}

/* The point of the triangle nearest to p: the projection onto its plane when that falls inside
 * (all three edge tests), else the nearest of the edges' nearest points. */
static tp_dvec3 ref_on_triangle(tp_dvec3 p, tp_dvec3 a, tp_dvec3 b, tp_dvec3 c) {
	const tp_dvec3 nn = dcross(dsub(b, a), dsub(c, a));
	const tp_dvec3 x = dsub(p, dscale(nn, ddot(dsub(p, a), nn) / ddot(nn, nn)));
	if (ddot(dcross(dsub(b, a), dsub(x, a)), nn) >= 0 && ddot(dcross(dsub(c, b), dsub(x, b)), nn) >= 0 &&
	    ddot(dcross(dsub(a, c), dsub(x, c)), nn) >= 0)
		return x;
	const tp_dvec3 e[3] = {ref_on_segment(p, a, b), ref_on_segment(p, b, c), ref_on_segment(p, c, a)};
	tp_dvec3 best = e[0];
	for (int i = 1; i < 3; ++i)
		if (dlen(dsub(p, e[i])) < dlen(dsub(p, best))) best = e[i];
	return best;
}

/* Reference signed distance and normal from the built surface, by brute force. Inside: the
 * largest plane distance; outside: the nearest point over all triangles. *gap, when given, is
 * the margin by which the largest plane distance beats the next (inside) or the distance itself
 * (outside): where the normal is well defined. */
static double ref_distance(const hull* h, tp_dvec3 p, tp_dvec3* n, double* gap) {
	double top = -1e300, second = -1e300;
	uint32_t tf = 0;
	for (uint32_t f = 0; f < h->nt; ++f) {
		const double s = ddot(h->pn[f], p) - h->po[f];
		if (s > top) {
			second = top;
			top = s;
			tf = f;
		} else if (s > second) {
			second = s;
		}
	}
	if (top <= 0) {
		if (n) *n = h->pn[tf];
		if (gap) *gap = fmin(top - second, -top);
		return top;
	}
	double best = 1e300;
	tp_dvec3 bx = p;
	for (uint32_t f = 0; f < h->nt; ++f) {
		const tp_dvec3 x = ref_on_triangle(p, tp_d(h->verts[h->tris[3 * f]]), tp_d(h->verts[h->tris[3 * f + 1]]),
		                                   tp_d(h->verts[h->tris[3 * f + 2]]));
		const double d = dlen(dsub(p, x));
		if (d < best) {
			best = d;
			bx = x;
		}
	}
	if (n) *n = best > 0 ? dscale(dsub(p, bx), 1 / best) : h->pn[tf];
	if (gap) *gap = best;
	return best;
}

static double lib_distance(const hull* h, tp_dvec3 p, tp_dvec3* n) {
	pbd_vec3 nn = pbd_v3(0, 0, 0);
	const pbd_real d = ops->distance(&h->cd, v3_of(p), &nn);
	if (n) *n = tp_d(nn);
	return (double)d;
}

/* The hull is the convex hull of pts: closed and consistently wound (each directed edge once,
 * its reverse once), F = 2V - 4, every vertex an input point, every input point behind every
 * face within tol, and on or inside the library's surface within tol. */
static void check_hull(const hull* h, const pbd_vec3* pts, uint32_t n, double tol) {
	assert_true(h->nv >= 4 && h->nv <= n);
	assert_int_equal(h->nt, 2 * h->nv - 4);
	for (uint32_t f = 0; f < h->nt; ++f)
		for (int k = 0; k < 3; ++k) {
			const uint32_t a = h->tris[3 * f + (uint32_t)k], b = h->tris[3 * f + (uint32_t)(k + 1) % 3];
			assert_true(a < h->nv && b < h->nv && a != b);
			int same = 0, reverse = 0;
			for (uint32_t g = 0; g < h->nt; ++g)
				for (int j = 0; j < 3; ++j) {
					const uint32_t c = h->tris[3 * g + (uint32_t)j], d = h->tris[3 * g + (uint32_t)(j + 1) % 3];
					same += c == a && d == b;
					reverse += c == b && d == a;
				}
			assert_int_equal(same, 1);
			assert_int_equal(reverse, 1);
		}
	for (uint32_t v = 0; v < h->nv; ++v) {
		bool found = false;
		for (uint32_t i = 0; i < n && !found; ++i) found = memcmp(&h->verts[v], &pts[i], sizeof(pbd_vec3)) == 0;
		assert_true(found);
	}
	double worst_plane = -1e300, worst_point = -1e300;
	for (uint32_t i = 0; i < n; ++i) {
		const tp_dvec3 p = tp_d(pts[i]);
		for (uint32_t f = 0; f < h->nt; ++f) worst_plane = fmax(worst_plane, ddot(h->pn[f], p) - h->po[f]);
		worst_point = fmax(worst_point, lib_distance(h, p, NULL));
	}
	printf("  hull of %u points: %u vertices, %u faces; points in front of a face by at most %.3g, "
	       "library distance of a point at most %.3g\n",
	       n, h->nv, h->nt, worst_plane, worst_point);
	assert_true(worst_plane <= tol);
	assert_true(worst_point <= tol);
}

typedef struct dist_stats {
	double dist_err, normal_err;
	int inside, outside, normals;
} dist_stats;

/* Library against reference at `count` random points about `center` and in the hull's bounds;
 * normals compared where they are well defined (gap above 1e-3 of the size). */
static dist_stats compare_random(const hull* h, tp_dvec3 center, double half, int count, uint64_t seed) {
	dist_stats st;
	memset(&st, 0, sizeof st);
	pbd_vec3 lo, hi;
	assert_true(ops->bounds(&h->cd, &lo, &hi));
	const tp_dvec3 mid = dscale(dadd(tp_d(lo), tp_d(hi)), 0.5), ext = dscale(dsub(tp_d(hi), tp_d(lo)), 0.55);
	for (int k = 0; k < count; ++k) {
		/* Half about the centre, half in the hull's bounds (a slab's inside is thin). */
		const tp_dvec3 p =
		    k % 2 ? dadd(center, rand_cube(&seed, half)) : dadd(mid, rand_box(&seed, ext.x, ext.y, ext.z));
		const tp_dvec3 pf = as_real(p); /* the point the library sees */
		tp_dvec3 rn, ln;
		double gap;
		const double rd = ref_distance(h, pf, &rn, &gap), ld = lib_distance(h, pf, &ln);
		st.dist_err = fmax(st.dist_err, fabs(rd - ld));
		if (rd > 0)
			st.outside++;
		else
			st.inside++;
		if (gap > 1e-3 * half) {
			st.normal_err = fmax(st.normal_err, dlen(dsub(rn, ln)));
			st.normals++;
		}
		if (fabs(dlen(ln) - 1) > UNIT_TOL) fail_msg("|normal| = %.17g", dlen(ln));
	}
	return st;
}

static void test_cube_with_interior_points(void** state) {
	(void)state;
	const double hx = 1, hy = 0.5, hz = 0.25;
	enum { N = 300 };
	pbd_vec3 pts[N];
	uint64_t seed = 1;
	for (uint32_t i = 0; i < N; ++i) pts[i] = v3_of(rand_box(&seed, hx * 0.999, hy * 0.999, hz * 0.999));
	/* The corners, some twice, scattered among the interior points. */
	for (int c = 0; c < 8; ++c) {
		const pbd_vec3 corner = v3d(c & 1 ? hx : -hx, c & 2 ? hy : -hy, c & 4 ? hz : -hz);
		pts[17 + 31 * c] = corner;
		if (c % 3 == 0) pts[20 + 31 * c] = corner;
	}
	hull h = hull_make(pts, N);
	check_hull(&h, pts, N, HULL_TOL);
	assert_int_equal(h.nv, 8);
	assert_int_equal(h.nt, 12);
	hull_free(&h);
	/* Points on the faces and an edge: on the surface. Quickhull may have taken one as a vertex
	 * before the corners around it (its faces are then coplanar); the surface is the same. */
	pts[5] = v3d(hx, 0.1, -0.1);
	pts[6] = v3d(0.3, -hy, hz);
	pts[7] = v3d(0, hy, 0);
	h = hull_make(pts, N);
	check_hull(&h, pts, N, HULL_TOL);
	assert_true(h.nv >= 8 && h.nv <= 11);
	/* The box's distance, exact: clamped excess outside, nearest face inside. */
	double worst = 0, worst_n = 0;
	int normals = 0;
	for (int k = 0; k < 20000; ++k) {
		const tp_dvec3 p = as_real(rand_cube(&seed, 2));
		const double q[3] = {fabs(p.x) - hx, fabs(p.y) - hy, fabs(p.z) - hz};
		const double s[3] = {p.x < 0 ? -1 : 1, p.y < 0 ? -1 : 1, p.z < 0 ? -1 : 1};
		double want;
		tp_dvec3 wn;
		bool defined = true;
		if (q[0] > 0 || q[1] > 0 || q[2] > 0) {
			const tp_dvec3 e = dv(fmax(q[0], 0), fmax(q[1], 0), fmax(q[2], 0));
			want = dlen(e);
			wn = dv(s[0] * e.x / want, s[1] * e.y / want, s[2] * e.z / want);
			defined = want > 1e-3;
		} else {
			int m = 0;
			for (int i = 1; i < 3; ++i)
				if (q[i] > q[m]) m = i;
			want = q[m];
			wn = dv(m == 0 ? s[0] : 0, m == 1 ? s[1] : 0, m == 2 ? s[2] : 0);
			for (int i = 0; i < 3; ++i)
				if (i != m && q[m] - q[i] < 1e-3) defined = false;
		}
		tp_dvec3 ln;
		const double ld = lib_distance(&h, p, &ln);
		worst = fmax(worst, fabs(ld - want));
		if (defined) {
			worst_n = fmax(worst_n, dlen(dsub(ln, wn)));
			normals++;
		}
	}
	printf("  cube: max |distance - box distance| %.3g, max normal error %.3g at %d points\n", worst, worst_n, normals);
	assert_true(worst <= DIST_TOL);
	assert_true(worst_n <= TEST_TOL(1e-12, 2e-6));
	pbd_vec3 lo, hi;
	assert_true(ops->bounds(&h.cd, &lo, &hi));
	assert_true(lo.x == (pbd_real)-hx && lo.y == (pbd_real)-hy && lo.z == (pbd_real)-hz);
	assert_true(hi.x == (pbd_real)hx && hi.y == (pbd_real)hy && hi.z == (pbd_real)hz);
	hull_free(&h);
}

/* Point clouds of several kinds: in a box, on a sphere, in a slab, with duplicates, far from
 * the origin, tiny and huge. */
static uint32_t cloud(int kind, uint64_t seed, pbd_vec3* pts, uint32_t n, tp_dvec3* center, double* size) {
	*center = dv(0, 0, 0);
	*size = 1;
	for (uint32_t i = 0; i < n; ++i) {
		tp_dvec3 p;
		switch (kind) {
		case 0:
			p = rand_box(&seed, 1, 0.7, 0.4);
			break;
		case 1:
			p = dscale(rand_unit(&seed), 0.9);
			break;
		case 2:
			p = rand_box(&seed, 1, 1, 0.02);
			break; /* a slab 1/50 thick */
		case 3:
			p = i % 3 ? tp_d(pts[i / 3]) : rand_cube(&seed, 0.8);
			break; /* two thirds repeats */
		case 4:
			*center = dv(100, -50, 25); /* far from the origin: the float points carry 4e-6 of rounding */
			p = dadd(*center, rand_cube(&seed, 1));
			break;
		case 5:
			*size = 1e-6;
			p = dscale(rand_unit(&seed), 1e-6 * tp_rand_range(&seed, 0.5, 1));
			break;
		default:
			*size = 1e6;
			p = dscale(rand_cube(&seed, 1), 1e6);
			break;
		}
		pts[i] = v3_of(p);
	}
	return n;
}

static void test_random_hulls(void** state) {
	(void)state;
	static const char* const names[] = {"box", "sphere", "slab", "repeats", "far", "tiny", "huge"};
	enum { N = 200 };
	pbd_vec3 pts[N];
	for (int kind = 0; kind < 7; ++kind)
		for (uint64_t rep = 0; rep < 3; ++rep) {
			tp_dvec3 center;
			double size;
			const uint32_t n = cloud(kind, 100 * (uint64_t)kind + rep, pts, kind == 1 ? 60 : N, &center, &size);
			hull h = hull_make(pts, n);
			const double rel = size;
			printf("%s %d:\n", names[kind], (int)rep);
			check_hull(&h, pts, n, HULL_TOL * rel);
			const dist_stats st = compare_random(&h, center, 1.6 * size, 3000, 7 + rep);
			printf("  %d inside, %d outside: max |distance - reference| %.3g, max normal error %.3g (%d normals)\n",
			       st.inside, st.outside, st.dist_err, st.normal_err, st.normals);
			assert_true(st.inside > 100 && st.outside > 100);
			assert_true(st.dist_err <= DIST_TOL * rel);
			assert_true(st.normal_err <= TEST_TOL(1e-9, 1e-5));
			hull_free(&h);
		}
}

/* A distance d, normal (nx, ny, nz) at p. */
static void check_at(const hull* h, double x, double y, double z, double want, double nx, double ny, double nz) {
	tp_dvec3 n;
	const double d = lib_distance(h, dv(x, y, z), &n);
	if (fabs(d - want) > DIST_TOL || fabs(n.x - nx) > DIST_TOL || fabs(n.y - ny) > DIST_TOL ||
	    fabs(n.z - nz) > DIST_TOL)
		fail_msg("at (%g, %g, %g): distance %.12g normal (%.9g, %.9g, %.9g), want %.12g (%g, %g, %g)", x, y, z, d, n.x,
		         n.y, n.z, want, nx, ny, nz);
}

static void test_tetrahedron(void** state) {
	(void)state;
	const pbd_vec3 pts[4] = {v3d(0, 0, 0), v3d(1, 0, 0), v3d(0, 1, 0), v3d(0, 0, 1)};
	hull h = hull_make(pts, 4);
	check_hull(&h, pts, 4, HULL_TOL);
	assert_int_equal(h.nv, 4);
	assert_int_equal(h.nt, 4);
	const double s3 = 1 / sqrt(3.0), s2 = sqrt(0.5);
	check_at(&h, 2, 0, 0, 1, 1, 0, 0);                 /* beyond a corner */
	check_at(&h, 1, 1, 1, 2 * s3, s3, s3, s3);         /* in front of the slanted face */
	check_at(&h, -1, -1, 0.5, sqrt(2.0), -s2, -s2, 0); /* beside an edge */
	check_at(&h, 0.2, 0.3, -0.5, 0.5, 0, 0, -1);       /* below a face */
	{                                                  /* on an edge: distance 0, the normal of one of its faces */
		tp_dvec3 n;
		assert_near(lib_distance(&h, dv(0.5, 0.5, 0), &n), 0, DIST_TOL);
		assert_true(dlen(dsub(n, dv(0, 0, -1))) <= UNIT_TOL || dlen(dsub(n, dv(s3, s3, s3))) <= UNIT_TOL);
	}
	check_at(&h, 0.1, 0.2, 0.3, -0.1, -1, 0, 0);        /* inside, nearest face x = 0 */
	check_at(&h, 0.3, 0.3, 0.3, -0.1 * s3, s3, s3, s3); /* inside, nearest the slanted face */
	check_at(&h, 0.5, 0.5, 0.5, 0.5 * s3, s3, s3, s3);  /* just in front of it */
	check_at(&h, -0.5, 1.5, -0.5, sqrt(0.75), -s2 * sqrt(2.0 / 3), s2 * sqrt(2.0 / 3), -s2 * sqrt(2.0 / 3));
	hull_free(&h);
}

static void test_octahedron(void** state) {
	(void)state;
	const pbd_vec3 pts[7] = {v3d(1, 0, 0), v3d(-1, 0, 0), v3d(0, 1, 0), v3d(0, -1, 0),
	                         v3d(0, 0, 1), v3d(0, 0, -1), v3d(0, 0, 0)};
	hull h = hull_make(pts, 7);
	check_hull(&h, pts, 7, HULL_TOL);
	assert_int_equal(h.nv, 6);
	assert_int_equal(h.nt, 8);
	const double s3 = 1 / sqrt(3.0), s2 = sqrt(0.5);
	check_at(&h, 2, 2, 2, 5 * s3, s3, s3, s3);
	check_at(&h, -2, 2, -2, 5 * s3, -s3, s3, -s3);
	check_at(&h, 3, 0, 0, 2, 1, 0, 0);
	check_at(&h, 0, 0, -1.5, 0.5, 0, 0, -1);
	check_at(&h, 1, 1, 0, s2, s2, s2, 0);
	check_at(&h, 0, -1, -1, s2, 0, -s2, -s2);
	check_at(&h, 0.1, 0.1, 0.1, -0.7 * s3, s3, s3, s3);
	check_at(&h, -0.1, 0.2, -0.3, -0.4 * s3, -s3, s3, -s3);
	/* The centre: all eight faces tie; some fixed face normal. */
	tp_dvec3 n;
	assert_near(lib_distance(&h, dv(0, 0, 0), &n), -s3, DIST_TOL);
	assert_near(fabs(n.x), s3, DIST_TOL);
	assert_near(fabs(n.y), s3, DIST_TOL);
	assert_near(fabs(n.z), s3, DIST_TOL);
	pbd_vec3 lo, hi;
	assert_true(ops->bounds(&h.cd, &lo, &hi));
	assert_true(lo.x == -1 && lo.y == -1 && lo.z == -1 && hi.x == 1 && hi.y == 1 && hi.z == 1);
	hull_free(&h);
}

/* The normal is the gradient of the distance: central differences at random points away from
 * where the distance is not smooth enough for them (inside, where two faces are nearly equally
 * near; near the surface). Outside, the normal is 1/d-Lipschitz and its derivative jumps where
 * the nearest feature changes (face, edge, corner): a difference quotient across such a jump
 * errs by up to step / d, which the bound allows. */
static void test_normal_is_gradient(void** state) {
	(void)state;
	enum { N = 40 };
	pbd_vec3 pts[N];
	tp_dvec3 center;
	double size;
	cloud(0, 5, pts, N, &center, &size);
	hull h = hull_make(pts, N);
	const double step = TEST_TOL(1e-5, 1e-3);
	uint64_t seed = 11;
	double worst = 0, worst_inside = 0;
	int used = 0;
	for (int k = 0; k < 4000; ++k) {
		const tp_dvec3 p = as_real(rand_cube(&seed, 1.5));
		double gap;
		const double rd = ref_distance(&h, p, NULL, &gap);
		if (gap < 0.02 || fabs(rd) < 0.02) continue;
		tp_dvec3 n;
		lib_distance(&h, p, &n);
		double g[3];
		for (int i = 0; i < 3; ++i) {
			const tp_dvec3 e = dv(i == 0 ? step : 0, i == 1 ? step : 0, i == 2 ? step : 0);
			g[i] = (lib_distance(&h, dadd(p, e), NULL) - lib_distance(&h, dsub(p, e), NULL)) / (2 * step);
		}
		const double err = fmax(fabs(g[0] - n.x), fmax(fabs(g[1] - n.y), fabs(g[2] - n.z)));
		const double bound = TEST_TOL(1e-6, 1e-3) + (rd > 0 ? step / (rd - step) : 0);
		if (err > bound) fail_msg("at (%g, %g, %g), distance %g: normal error %.3g", p.x, p.y, p.z, rd, err);
		worst = fmax(worst, err);
		if (rd < 0) worst_inside = fmax(worst_inside, err);
		++used;
	}
	printf("normal vs central differences at %d points, max error %.3g (inside %.3g)\n", used, worst, worst_inside);
	assert_true(used > 1000);
	assert_true(worst_inside < TEST_TOL(1e-6, 1e-3));
	hull_free(&h);
}

static void check_unit(const hull* h, pbd_vec3 p) {
	pbd_vec3 n = pbd_v3(0, 0, 0);
	const pbd_real d = ops->distance(&h->cd, p, &n);
	if (!pbd_is_finite(d) || !pbd_v3_is_finite(n) || fabs(tp_len(n) - 1) > UNIT_TOL)
		fail_msg("at (%g, %g, %g): distance %g, |normal| %.17g", (double)p.x, (double)p.y, (double)p.z, (double)d,
		         tp_len(n));
}

/* |normal| = 1 and a finite distance everywhere: random points, the vertices, edge midpoints,
 * face centres, points a hair off them, and points at the ends of the range; also for a tiny
 * and a huge hull. */
static void test_normal_is_unit(void** state) {
	(void)state;
	enum { N = 50 };
	pbd_vec3 pts[N];
	const double scales[3] = {1, 1e-6, 1e6};
	for (int s = 0; s < 3; ++s) {
		tp_dvec3 center;
		double size;
		cloud(1, 3 + (uint64_t)s, pts, N, &center, &size);
		for (uint32_t i = 0; i < N; ++i) pts[i] = v3_of(dscale(tp_d(pts[i]), scales[s]));
		hull h = hull_make(pts, N);
		uint64_t seed = 40 + (uint64_t)s;
		for (int k = 0; k < 5000; ++k) check_unit(&h, v3_of(rand_cube(&seed, 2 * scales[s])));
		const pbd_real tiny = (pbd_real)1e-30, big = PBD_REAL_MAX;
		for (uint32_t f = 0; f < h.nt; ++f) {
			const pbd_vec3 a = h.verts[h.tris[3 * f]], b = h.verts[h.tris[3 * f + 1]], c = h.verts[h.tris[3 * f + 2]];
			const pbd_vec3 mid = pbd_v3_scale(pbd_v3_add(a, b), (pbd_real)0.5);
			const pbd_vec3 cen = pbd_v3_scale(pbd_v3_add(pbd_v3_add(a, b), c), (pbd_real)(1.0 / 3));
			check_unit(&h, a);
			check_unit(&h, mid);
			check_unit(&h, cen);
			check_unit(&h, pbd_v3(a.x + tiny, a.y, a.z - tiny));
			check_unit(&h, pbd_v3_add(cen, pbd_v3_scale(v3_of(h.pn[f]), (pbd_real)(1e-7 * scales[s]))));
			check_unit(&h, pbd_v3_sub(cen, pbd_v3_scale(v3_of(h.pn[f]), (pbd_real)(1e-7 * scales[s]))));
		}
		const pbd_vec3 far[] = {pbd_v3(0, 0, 0),         pbd_v3(tiny, tiny, tiny), pbd_v3(big, big, big),
		                        pbd_v3(-big, big, -big), pbd_v3(big, 0, 0),        pbd_v3(0, -big, 0),
		                        pbd_v3(big, tiny, 0),    pbd_v3(tiny, big, -big)};
		for (size_t i = 0; i < sizeof far / sizeof far[0]; ++i) check_unit(&h, far[i]);
		/* Far away: the distance from the centre. */
		pbd_vec3 n;
		const pbd_real d = ops->distance(&h.cd, pbd_v3(big, 0, 0), &n);
		assert_true((double)d > 0.99 * (double)big);
		assert_near(n.x, 1, UNIT_TOL);
		hull_free(&h);
	}
}

typedef struct sweep_stats {
	int segments, hits, sampled_hits;
	double surface_err, depth_before, normal_err, approach;
} sweep_stats;

/* One sweep against a sampling of 2000 steps of the segment. */
static void sweep_vs_samples(const hull* h, pbd_vec3 a, pbd_vec3 b, pbd_real radius, sweep_stats* st) {
	const double r = (double)radius;
	pbd_real t = -1;
	pbd_vec3 n = pbd_v3(0, 0, 0);
	const bool hit = ops->sweep(&h->cd, a, b, radius, &t, &n);
	const int samples = 2000;
	int first = -1;
	double depth = -1e30;
	for (int i = 0; i <= samples; ++i) {
		const double ti = (double)i / samples;
		const tp_dvec3 pi = dlerp(a, b, ti);
		/* The largest plane distance is a lower bound of the distance (equal inside): where it
		 * is well above the radius, it stands in for the costly exact value. */
		double di = -1e300;
		for (uint32_t f = 0; f < h->nt; ++f) di = fmax(di, ddot(h->pn[f], pi) - h->po[f]);
		if (di <= r + 1e-3) di = ref_distance(h, pi, NULL, NULL);
		if (first < 0 && di <= r) first = i;
		if (!hit || ti < (double)t) depth = fmax(depth, r - di);
	}
	st->segments++;
	if (first >= 0) st->sampled_hits++;
	st->depth_before = fmax(st->depth_before, depth);
	if (!hit) return;
	st->hits++;
	assert_true(t >= 0 && t <= 1);
	tp_dvec3 rn;
	const tp_dvec3 p = dlerp(a, b, (double)t);
	const double dist = ref_distance(h, p, &rn, NULL);
	st->surface_err = fmax(st->surface_err, fabs(dist - r));
	assert_true(fabs(tp_len(n) - 1) <= UNIT_TOL);
	if (r >= 0.05) st->normal_err = fmax(st->normal_err, dlen(dsub(tp_d(n), rn)));
	const tp_dvec3 dir = dsub(tp_d(b), tp_d(a));
	st->approach = fmax(st->approach, ddot(tp_d(n), dir) / dlen(dir));
}

/* Random segments in [-2, 2]^3: a third anywhere, a third grazing the grown hull (along a
 * tangent, shifted in or out by up to 1e-3), a third aimed at it; a quarter of the radii 0. */
static sweep_stats random_sweeps(const hull* h, uint64_t seed, int count) {
	sweep_stats st;
	memset(&st, 0, sizeof st);
	st.depth_before = -1e30;
	st.approach = -1;
	while (st.segments < count) {
		const pbd_real radius = tp_rand(&seed) < 0.25 ? 0 : (pbd_real)tp_rand_range(&seed, 0, 0.2);
		pbd_vec3 a = v3_of(rand_cube(&seed, 2));
		pbd_vec3 b;
		const double mode = tp_rand(&seed);
		if (mode < 1.0 / 3) {
			b = v3_of(rand_cube(&seed, 2));
		} else if (mode < 2.0 / 3) {
			tp_dvec3 n0;
			const tp_dvec3 ad = tp_d(a);
			const double d0 = ref_distance(h, ad, &n0, NULL) - (double)radius;
			if (!(d0 > 0)) continue;
			const tp_dvec3 q = dsub(ad, dscale(n0, d0));
			const tp_dvec3 w = rand_cube(&seed, 1);
			tp_dvec3 tg = dsub(w, dscale(n0, ddot(w, n0)));
			const double tl = dlen(tg);
			if (!(tl > 1e-3)) continue;
			const double shift = tp_rand_range(&seed, -1e-3, 1e-3), len = tp_rand_range(&seed, 0.05, 1.5);
			tg = dscale(tg, 1 / tl);
			const tp_dvec3 c = dadd(q, dscale(n0, shift));
			const double before = tp_rand_range(&seed, 0.01, len);
			a = v3_of(dsub(c, dscale(tg, before)));
			b = v3_of(dadd(c, dscale(tg, len - before)));
		} else {
			const tp_dvec3 aim = rand_cube(&seed, 1.1);
			const double k = tp_rand_range(&seed, 0.2, 2);
			b = v3_of(dadd(tp_d(a), dscale(dsub(aim, tp_d(a)), k)));
		}
		const double da = ref_distance(h, tp_d(a), NULL, NULL);
		pbd_real t;
		pbd_vec3 n;
		if (da < (double)radius - DIST_TOL) {
			assert_false(ops->sweep(&h->cd, a, b, radius, &t, &n)); /* starts inside the grown hull */
			continue;
		}
		if (da <= (double)radius + DIST_TOL) continue; /* on the grown surface: either answer */
		sweep_vs_samples(h, a, b, radius, &st);
	}
	printf("  %d segments, %d hits (%d found by sampling); max |distance at t - radius| %.3g, max depth of a "
	       "sample before t %.3g, max normal error %.3g, max normal . direction %.3g\n",
	       st.segments, st.hits, st.sampled_hits, st.surface_err, st.depth_before, st.normal_err, st.approach);
	return st;
}

static void test_sweep_random(void** state) {
	(void)state;
	enum { N = 30 };
	pbd_vec3 pts[N];
	for (int kind = 0; kind < 3; ++kind) {
		tp_dvec3 center;
		double size;
		cloud(kind, 60 + (uint64_t)kind, pts, N, &center, &size);
		hull h = hull_make(pts, N);
		printf("sweeps, cloud %d (%u faces):\n", kind, h.nt);
		const sweep_stats st = random_sweeps(&h, 70 + (uint64_t)kind, 700);
		assert_true(st.hits > st.segments / 5);
		assert_true(st.surface_err <= TEST_TOL(1e-11, 2e-6));
		assert_true(st.depth_before <= TEST_TOL(1e-11, 2e-6)); /* no tunnelling */
		assert_true(st.normal_err <= TEST_TOL(1e-9, 2e-5));
		assert_true(st.approach <= TEST_TOL(1e-9, 1e-6));
		hull_free(&h);
	}
}

static void check_hit(const hull* h, pbd_vec3 a, pbd_vec3 b, double radius, double want_t, double nx, double ny,
                      double nz, double tol) {
	pbd_real t = -1;
	pbd_vec3 n = pbd_v3(0, 0, 0);
	if (!ops->sweep(&h->cd, a, b, (pbd_real)radius, &t, &n))
		fail_msg("(%g, %g, %g) -> (%g, %g, %g) missed", (double)a.x, (double)a.y, (double)a.z, (double)b.x, (double)b.y,
		         (double)b.z);
	if (fabs((double)t - want_t) > tol || fabs((double)n.x - nx) > tol || fabs((double)n.y - ny) > tol ||
	    fabs((double)n.z - nz) > tol)
		fail_msg("(%g, %g, %g) -> (%g, %g, %g): t %.12g normal (%.9g, %.9g, %.9g), want %.12g (%g, %g, %g)",
		         (double)a.x, (double)a.y, (double)a.z, (double)b.x, (double)b.y, (double)b.z, (double)t, (double)n.x,
		         (double)n.y, (double)n.z, want_t, nx, ny, nz);
	assert_true((double)t <= want_t + TEST_TOL(1e-12, 1e-7)); /* never after the contact */
}

static void check_miss(const hull* h, pbd_vec3 a, pbd_vec3 b, double radius) {
	pbd_real t = -1;
	pbd_vec3 n = pbd_v3(0, 0, 0);
	if (ops->sweep(&h->cd, a, b, (pbd_real)radius, &t, &n))
		fail_msg("(%g, %g, %g) -> (%g, %g, %g) hit at %g", (double)a.x, (double)a.y, (double)a.z, (double)b.x,
		         (double)b.y, (double)b.z, (double)t);
}

static void test_sweep_cases(void** state) {
	(void)state;
	/* The box of half extents (1, 0.5, 0.25) as a hull: the box shape's own cases. */
	pbd_vec3 pts[8];
	for (int c = 0; c < 8; ++c) pts[c] = v3d(c & 1 ? 1 : -1, c & 2 ? 0.5 : -0.5, c & 4 ? 0.25 : -0.25);
	hull h = hull_make(pts, 8);
	const double r = 0.1, tol = TEST_TOL(1e-12, 2e-6), s2 = sqrt(0.5), s3 = 1 / sqrt(3.0);
	check_miss(&h, v3d(2, 0, 0), v3d(2, 0, 0), r);     /* zero length */
	check_miss(&h, v3d(0.5, 0, 0), v3d(0.5, 0, 0), r); /* zero length inside */
	check_miss(&h, v3d(0.5, 0, 0), v3d(3, 0, 0), r);   /* starts inside */
	check_miss(&h, v3d(1.05, 0, 0), v3d(-3, 0, 0), r); /* starts within the radius */
	check_miss(&h, v3d(1.05, 0.55, 0), v3d(3, 3, 0), r);
	check_hit(&h, v3d(3, 0.1, 0.1), v3d(-3, 0.1, 0.1), r, (3 - 1.1) / 6, 1, 0, 0, tol); /* a face */
	check_hit(&h, v3d(0.2, -3, 0), v3d(0.2, 3, 0), r, (3 - 0.6) / 6, 0, -1, 0, tol);
	check_hit(&h, v3d(2, 1.5, 0), v3d(-1, -1.5, 0), r, (sqrt(2.0) - r) / (3 * sqrt(2.0)), s2, s2, 0, tol); /* edge */
	check_hit(&h, v3d(2, 1.5, 1.25), v3d(0, -0.5, -0.75), r, (sqrt(3.0) - r) / (2 * sqrt(3.0)), s3, s3, s3,
	          tol);                                                               /* corner */
	check_hit(&h, v3d(3, 0.1, 0.1), v3d(-3, 0.1, 0.1), 0, 2.0 / 6, 1, 0, 0, tol); /* radius 0 */
	check_miss(&h, v3d(3, 0.51, 0), v3d(-3, 0.51, 0), 0);
	check_miss(&h, v3d(3, 0.61, 0), v3d(-3, 0.61, 0), r);
	check_miss(&h, v3d(3, 0, 0), v3d(1.11, 0, 0), r);           /* ends short */
	check_miss(&h, v3d(1.09, 0.59, -2), v3d(1.09, 0.59, 2), r); /* past a rounded edge */
	check_miss(&h, v3d(3, 0, 0), v3d(6, 0, 0), r);              /* going away */
	/* Grazing the top face: touches where it begins or not at all; a hair lower comes in through
	 * the rounded edge. */
	{
		pbd_real t;
		pbd_vec3 n;
		if (ops->sweep(&h.cd, v3d(-3, 0.6, 0), v3d(3, 0.6, 0), (pbd_real)r, &t, &n))
			assert_true((double)t <= 1.0 / 3 + 1e-6);
	}
	const double y = 0.6 - 1e-3, dx = sqrt(r * r - (y - 0.5) * (y - 0.5));
	check_hit(&h, v3d(-3, y, 0), v3d(3, y, 0), r, (2 - dx) / 6, -dx / r, (y - 0.5) / r, 0, TEST_TOL(1e-9, 2e-4));
	/* Far away. */
	const pbd_real far = (pbd_real)1e6;
	pbd_real t;
	pbd_vec3 n;
	assert_true(ops->sweep(&h.cd, pbd_v3(far, 0, 0), pbd_v3(-far, 0, 0), (pbd_real)r, &t, &n));
	assert_near(1e6 - 2e6 * (double)t, 1.1, TEST_TOL(1e-9, 0.2));
	assert_true(1e6 - 2e6 * (double)t >= 1.1 - TEST_TOL(1e-9, 1e-6) * 1e6);
	assert_near(n.x, 1, 1e-6);
	const pbd_real big = PBD_REAL_MAX / 2;
	assert_true(ops->sweep(&h.cd, pbd_v3(big, 0, 0), pbd_v3(-big, 0, 0), (pbd_real)r, &t, &n));
	assert_near(t, 0.5, 1e-6);
	assert_false(ops->sweep(&h.cd, pbd_v3(big, big, 0), pbd_v3(-big, big, 0), (pbd_real)r, &t, &n));
	hull_free(&h);

	/* Hulls far from 1 m either way. */
	for (int s = 0; s < 2; ++s) {
		const double k = s == 0 ? 1e-20 : 1e15;
		pbd_vec3 sp[8];
		for (int c = 0; c < 8; ++c) sp[c] = v3d(c & 1 ? k : -k, c & 2 ? k : -k, c & 4 ? k : -k);
		hull hs = hull_make(sp, 8);
		check_hit(&hs, v3d(0, 0, 4 * k), v3d(0, 0, -4 * k), k, 2.0 / 8, 0, 0, 1, tol);
		check_hit(&hs, v3d(4 * k, 4 * k, 4 * k), v3d(0, 0, 0), k, (1 - 1 / (3 * sqrt(3.0))) * 0.75, s3, s3, s3,
		          TEST_TOL(1e-12, 4e-6));
		check_hit(&hs, v3d(4 * k, 0.5 * k, 0), v3d(-4 * k, 0.5 * k, 0), 0, 3.0 / 8, 1, 0, 0, tol);
		hull_free(&hs);
	}
	/* A radius past 2^200 hull sizes (a subnormal hull in float): the hull is a point. */
	const double k = TEST_TOL(1e-60, 1e-43), big_r = TEST_TOL(1e100, 1e18);
	pbd_vec3 sp[8];
	for (int c = 0; c < 8; ++c) sp[c] = v3d(c & 1 ? k : -k, c & 2 ? k : -k, c & 4 ? k : -k);
	hull hs = hull_make(sp, 8);
	check_hit(&hs, v3d(4 * big_r, 0, 0), v3d(-4 * big_r, 0, 0), big_r, 3.0 / 8, 1, 0, 0, tol);
	check_hit(&hs, v3d(0, -4 * big_r, 0), v3d(0, 0, 0), big_r, 3.0 / 4, 0, -1, 0, tol);
	check_miss(&hs, v3d(4 * big_r, 1.01 * big_r, 0), v3d(-4 * big_r, 1.01 * big_r, 0), big_r);
	check_miss(&hs, v3d(4 * big_r, 0, 0), v3d(8 * big_r, 0, 0), big_r);
	hull_free(&hs);
}

/* validate with a world that keeps its last message: the status, and a message that names the
 * call and the field. */
static void check_validate(pbd_world* w, const char* msg, pbd_collider_def cd, pbd_status want, const char* field) {
	char* m = (char*)msg;
	m[0] = '\0';
	const pbd_status st = ops->validate(w, &cd);
	if (st != want) fail_msg("validate: status %d, want %d (%s)", (int)st, (int)want, msg);
	if (want == PBD_OK) {
		assert_string_equal(msg, "");
		return;
	}
	printf("  %s\n", msg);
	assert_int_equal(strncmp(msg, "pbd_collider_create: ", 21), 0);
	assert_non_null(strstr(msg, field));
	assert_null(strchr(msg, '\n'));
}

static void test_validate(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = test_world_keep(msg);
	pbd_vec3 pts[64];
	const pbd_vec3 tet[4] = {v3d(0, 0, 0), v3d(1, 0, 0), v3d(0, 1, 0), v3d(0, 0, 1)};
	check_validate(w, msg, convex_def(tet, 4), PBD_OK, "");
	check_validate(w, msg, convex_def(NULL, 4), PBD_ERR_INVALID_ARGUMENT, "points");
	check_validate(w, msg, convex_def(tet, 3), PBD_ERR_OUT_OF_RANGE, "point_count");
	check_validate(w, msg, convex_def(tet, 0), PBD_ERR_OUT_OF_RANGE, "point_count");
	check_validate(w, msg, convex_def(tet, PBD_CONVEX_MAX_POINTS + 1), PBD_ERR_OUT_OF_RANGE, "point_count");
	check_validate(w, msg, convex_def(tet, UINT32_MAX), PBD_ERR_OUT_OF_RANGE, "point_count");
	memcpy(pts, tet, sizeof tet);
	pts[2].y = (pbd_real)NAN;
	check_validate(w, msg, convex_def(pts, 4), PBD_ERR_NOT_FINITE, "points[2]");
	pts[2] = v3d(0, 1, 0);
	pts[3].z = (pbd_real)INFINITY;
	check_validate(w, msg, convex_def(pts, 4), PBD_ERR_NOT_FINITE, "points[3]");
	pts[3] = v3d(0, 0, (double)PBD_SQRT(PBD_REAL_MAX));
	check_validate(w, msg, convex_def(pts, 4), PBD_ERR_OUT_OF_RANGE, "points[3]");
	pts[3] = v3d(0, 0, 1);
	pbd_collider_def cd = convex_def(pts, 4);
	cd.margin = PBD_SQRT(PBD_REAL_MAX);
	check_validate(w, msg, cd, PBD_ERR_OUT_OF_RANGE, "margin");
	/* Degenerate sets: one point, a line, a plane (a grid, and one with jitter below the limit). */
	for (int i = 0; i < 64; ++i) pts[i] = v3d(0.5, -2, 3);
	check_validate(w, msg, convex_def(pts, 64), PBD_ERR_DEGENERATE, "points");
	for (int i = 0; i < 64; ++i) pts[i] = v3d(0.5 + i, -2 + 2 * i, 3 - 0.5 * i);
	check_validate(w, msg, convex_def(pts, 64), PBD_ERR_DEGENERATE, "line");
	for (int i = 0; i < 64; ++i) pts[i] = v3d(i % 8, 0.25 * (i / 8), 2);
	check_validate(w, msg, convex_def(pts, 64), PBD_ERR_DEGENERATE, "plane");
	uint64_t seed = 9;
	for (int i = 0; i < 64; ++i) {
		const tp_dvec3 p = rand_cube(&seed, 1);
		pts[i] = v3d(p.x, p.y, 3 + 0.5 * p.x - 0.25 * p.y + p.z * TEST_TOL(1e-10, 1e-7)); /* tilted, jittered */
	}
	check_validate(w, msg, convex_def(pts, 64), PBD_ERR_DEGENERATE, "plane");
	for (int i = 0; i < 64; ++i) {
		const tp_dvec3 p = rand_cube(&seed, 1);
		pts[i] = v3d(p.x, p.y, p.z * 1e-3);
	}
	check_validate(w, msg, convex_def(pts, 64), PBD_OK, ""); /* thin, but a solid */
	/* Collinear but for one point: still flat. */
	for (int i = 0; i < 64; ++i) pts[i] = v3d(i, 0, 0);
	pts[10] = v3d(3, 1, 0);
	check_validate(w, msg, convex_def(pts, 64), PBD_ERR_DEGENERATE, "plane");
	pbd_world_destroy(w);
}

/* The same points give the same bytes: in two fresh blocks filled differently, from a def that
 * already points into an old block (a snapshot reload), and in place. */
static void test_determinism(void** state) {
	(void)state;
	enum { N = 500 };
	pbd_vec3 pts[N];
	tp_dvec3 center;
	double size;
	cloud(0, 77, pts, N, &center, &size);
	const pbd_collider_def cd0 = convex_def(pts, N);
	const size_t size0 = ops->data_size(&cd0);
	unsigned char* blocks[4];
	for (int i = 0; i < 4; ++i) {
		blocks[i] = malloc(size0);
		assert_non_null(blocks[i]);
		memset(blocks[i], 0x11 * (i + 1), size0);
	}
	pbd_collider_def a = cd0, b = cd0;
	ops->build(&a, blocks[0]);
	ops->build(&b, blocks[1]);
	assert_memory_equal(blocks[0], blocks[1], size0);
	pbd_collider_def c = a; /* points into blocks[0] */
	assert_int_equal(ops->data_size(&c), size0);
	ops->build(&c, blocks[2]);
	assert_ptr_equal(c.shape.convex.points, blocks[2]);
	assert_memory_equal(blocks[0], blocks[2], size0);
	memcpy(blocks[3], blocks[0], size0);
	pbd_collider_def d = a;
	d.shape.convex.points = (const pbd_vec3*)(void*)blocks[3];
	ops->build(&d, blocks[3]); /* in place */
	assert_memory_equal(blocks[0], blocks[3], size0);
	/* The queries read the same block the same way. */
	pbd_vec3 n1, n2;
	assert_true(ops->distance(&a, v3d(0.3, 2, -1), &n1) == ops->distance(&c, v3d(0.3, 2, -1), &n2));
	assert_memory_equal(&n1, &n2, sizeof n1);
	for (int i = 0; i < 4; ++i) free(blocks[i]);
}

/* Point sets that stress the construction: a lattice (many coplanar and collinear points), a
 * cylinder (coplanar rims), points on a sphere with noise at the rounding level, all duplicates
 * of a tetrahedron, a big random ball and a big sphere. Each builds a valid hull in bounded time. */
static void test_hard_sets(void** state) {
	(void)state;
	const uint32_t nmax = 100000;
	pbd_vec3* pts = malloc(nmax * sizeof *pts);
	assert_non_null(pts);
	uint64_t seed = 123;

	uint32_t n = 0; /* a 10^3 lattice: the hull is its 8 corners */
	for (int i = 0; i < 10; ++i)
		for (int j = 0; j < 10; ++j)
			for (int k = 0; k < 10; ++k) pts[n++] = v3d(i * 0.1, j * 0.1, k * 0.1);
	hull h = hull_make(pts, n);
	check_hull(&h, pts, n, HULL_TOL);
	assert_int_equal(h.nv, 8);
	hull_free(&h);

	n = 0; /* a cylinder: two rims of 64 and their centres */
	for (int i = 0; i < 64; ++i) {
		const double a = 2 * TP_PI * i / 64;
		pts[n++] = v3d(cos(a), -0.5, sin(a));
		pts[n++] = v3d(cos(a), 0.5, sin(a));
	}
	pts[n++] = v3d(0, -0.5, 0);
	pts[n++] = v3d(0, 0.5, 0);
	h = hull_make(pts, n);
	check_hull(&h, pts, n, HULL_TOL);
	assert_int_equal(h.nv, 128);
	const dist_stats cyl = compare_random(&h, dv(0, 0, 0), 1.5, 2000, 5);
	printf("  cylinder: max |distance - reference| %.3g\n", cyl.dist_err);
	assert_true(cyl.dist_err <= DIST_TOL);
	hull_free(&h);

	n = 0; /* a sphere, with noise at the rounding level */
	for (int i = 0; i < 500; ++i)
		pts[n++] = v3_of(dscale(rand_unit(&seed), 1 + tp_rand_range(&seed, -1, 1) * TEST_TOL(1e-15, 1e-7)));
	h = hull_make(pts, n);
	check_hull(&h, pts, n, HULL_TOL);
	hull_free(&h);

	n = 0; /* a tetrahedron's corners, each 50 times */
	for (int i = 0; i < 200; ++i) pts[n++] = v3d(i % 4 == 1, i % 4 == 2, i % 4 == 3);
	h = hull_make(pts, n);
	check_hull(&h, pts, n, HULL_TOL);
	assert_int_equal(h.nv, 4);
	hull_free(&h);

	/* The largest sets: a ball of 100000 points, a sphere of 20000. */
	for (int s = 0; s < 2; ++s) {
		n = s == 0 ? nmax : 20000;
		for (uint32_t i = 0; i < n; ++i) {
			const tp_dvec3 u = rand_unit(&seed);
			pts[i] = v3_of(dscale(u, s == 0 ? cbrt(tp_rand(&seed)) : 1));
		}
		const clock_t c0 = clock();
		h = hull_make(pts, n);
		const double secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
		printf("  %u points %s: %u vertices, %u faces, built in %.3f s, block %.1f MB\n", n,
		       s == 0 ? "in a ball" : "on a sphere", h.nv, h.nt, secs, (double)h.size / 1e6);
		assert_int_equal(h.nt, 2 * h.nv - 4);
		/* Every 97th point behind every face, and not outside the surface. */
		double worst = -1e300;
		for (uint32_t i = 0; i < n; i += 97) {
			for (uint32_t f = 0; f < h.nt; ++f) worst = fmax(worst, ddot(h.pn[f], tp_d(pts[i])) - h.po[f]);
			worst = fmax(worst, lib_distance(&h, tp_d(pts[i]), NULL));
		}
		printf("  worst point in front of the hull by %.3g\n", worst);
		assert_true(worst <= HULL_TOL);
		hull_free(&h);
	}
	free(pts);
}

static void test_triangles_capacity(void** state) {
	(void)state;
	const pbd_vec3 pts[6] = {v3d(1, 0, 0), v3d(-1, 0, 0), v3d(0, 1, 0), v3d(0, -1, 0), v3d(0, 0, 1), v3d(0, 0, -1)};
	hull h = hull_make(pts, 6);
	pbd_vec3 vs[3];
	uint32_t tr[3 * 2 + 1];
	tr[6] = 12345;
	uint32_t nv = 0, nt = 0;
	ops->triangles(&h.cd, vs, 3, tr, 2, &nv, &nt);
	assert_int_equal(nv, 6);
	assert_int_equal(nt, 8);
	assert_int_equal(tr[6], 12345); /* nothing past the capacity */
	assert_memory_equal(vs, h.verts, sizeof vs);
	assert_memory_equal(tr, h.tris, 6 * sizeof(uint32_t));
	hull_free(&h);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cube_with_interior_points),
	    cmocka_unit_test(test_random_hulls),
	    cmocka_unit_test(test_tetrahedron),
	    cmocka_unit_test(test_octahedron),
	    cmocka_unit_test(test_normal_is_gradient),
	    cmocka_unit_test(test_normal_is_unit),
	    cmocka_unit_test(test_sweep_random),
	    cmocka_unit_test(test_sweep_cases),
	    cmocka_unit_test(test_validate),
	    cmocka_unit_test(test_determinism),
	    cmocka_unit_test(test_hard_sets),
	    cmocka_unit_test(test_triangles_capacity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
