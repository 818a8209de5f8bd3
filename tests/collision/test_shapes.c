/* Capsule and box shapes, called through their ops in the shape's frame: distances and normals
 * against closed forms at chosen points (faces, edges, corners, inside, the centre, the axis),
 * normals against central differences of the distance, unit normals at the degenerate points,
 * sweeps against a dense sampling of random segments (no sampled point before the returned t
 * lies inside, the point at t lies on the grown surface, a miss has no sample inside), the
 * special segments (zero length, along and through the axis, tangent, starting inside, far
 * away), the validation of sizes and the bounds. */
#include <stdio.h>
#include <string.h>

#include "collision/collide.h"
#include "collision/shape_math.h"
#include "test_physics.h"

/* Shapes of about 1 m: the float tolerances follow from a few roundings of numbers near 1. */
#define DIST_TOL TEST_TOL(1e-12, 2e-6)
#define UNIT_TOL TEST_TOL(1e-14, 1e-6)

static pbd_collider_def capsule_def(double half_height, double radius) {
	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_CAPSULE;
	cd.shape.capsule.half_height = (pbd_real)half_height;
	cd.shape.capsule.radius = (pbd_real)radius;
	return cd;
}

static pbd_collider_def box_def(double hx, double hy, double hz) {
	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_BOX;
	cd.shape.box.half_extents = pbd_v3((pbd_real)hx, (pbd_real)hy, (pbd_real)hz);
	return cd;
}

static pbd_vec3 v3d(double x, double y, double z) { return pbd_v3((pbd_real)x, (pbd_real)y, (pbd_real)z); }

static tp_dvec3 dv(double x, double y, double z) {
	tp_dvec3 r = {x, y, z};
	return r;
}

static double dlen(tp_dvec3 v) { return sqrt(v.x * v.x + v.y * v.y + v.z * v.z); }

static double ddot(tp_dvec3 a, tp_dvec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

/* A random point of [lo, hi] per axis, drawn x, y, z in this order whatever order the compiler
 * evaluates arguments in, so that every build sees the same points. */
static tp_dvec3 rand_in(uint64_t* seed, tp_dvec3 lo, tp_dvec3 hi) {
	const double x = tp_rand_range(seed, lo.x, hi.x);
	const double y = tp_rand_range(seed, lo.y, hi.y);
	const double z = tp_rand_range(seed, lo.z, hi.z);
	return dv(x, y, z);
}

static tp_dvec3 rand_cube(uint64_t* seed, double half) {
	return rand_in(seed, dv(-half, -half, -half), dv(half, half, half));
}

static pbd_vec3 v3_of(tp_dvec3 v) { return v3d(v.x, v.y, v.z); }

/* The segment's point at t, in double from the float ends. */
static tp_dvec3 dlerp(pbd_vec3 a, pbd_vec3 b, double t) {
	return dv((double)a.x + t * ((double)b.x - (double)a.x), (double)a.y + t * ((double)b.y - (double)a.y),
	          (double)a.z + t * ((double)b.z - (double)a.z));
}

/* Reference signed distances and outward normals, in double, written apart from the library's. */
static double ref_capsule(const pbd_collider_def* cd, tp_dvec3 p, tp_dvec3* n) {
	const double h = (double)cd->shape.capsule.half_height, r = (double)cd->shape.capsule.radius;
	const tp_dvec3 d = dv(p.x, p.y - fmax(-h, fmin(h, p.y)), p.z);
	const double len = dlen(d);
	if (n) *n = len > 0 ? dv(d.x / len, d.y / len, d.z / len) : dv(1, 0, 0);
	return len - r;
}

static double ref_box(const pbd_collider_def* cd, tp_dvec3 p, tp_dvec3* n) {
	const pbd_vec3 h = cd->shape.box.half_extents;
	const double q[3] = {fabs(p.x) - (double)h.x, fabs(p.y) - (double)h.y, fabs(p.z) - (double)h.z};
	const double s[3] = {p.x < 0 ? -1 : 1, p.y < 0 ? -1 : 1, p.z < 0 ? -1 : 1};
	if (q[0] > 0 || q[1] > 0 || q[2] > 0) {
		const tp_dvec3 e = dv(fmax(q[0], 0), fmax(q[1], 0), fmax(q[2], 0));
		const double len = dlen(e);
		if (n) *n = dv(s[0] * e.x / len, s[1] * e.y / len, s[2] * e.z / len);
		return len;
	}
	int k = 0;
	for (int i = 1; i < 3; ++i)
		if (q[i] > q[k]) k = i;
	if (n) *n = dv(k == 0 ? s[0] : 0, k == 1 ? s[1] : 0, k == 2 ? s[2] : 0);
	return q[k];
}

static double ref_distance(const pbd_collider_def* cd, tp_dvec3 p, tp_dvec3* n) {
	return cd->type == PBD_SHAPE_CAPSULE ? ref_capsule(cd, p, n) : ref_box(cd, p, n);
}

static const pbd_shape_ops* ops_of(const pbd_collider_def* cd) {
	return cd->type == PBD_SHAPE_CAPSULE ? &pbd_shape_capsule_ops : &pbd_shape_box_ops;
}

/* The library's distance at p is `want` and its normal (nx, ny, nz). */
static void check_distance(const pbd_collider_def* cd, pbd_vec3 p, double want, double nx, double ny, double nz) {
	pbd_vec3 n = pbd_v3(0, 0, 0);
	const pbd_real d = ops_of(cd)->distance(cd, p, &n);
	if (fabs((double)d - want) > DIST_TOL || fabs((double)n.x - nx) > DIST_TOL || fabs((double)n.y - ny) > DIST_TOL ||
	    fabs((double)n.z - nz) > DIST_TOL)
		fail_msg("%s at (%g, %g, %g): distance %.9g normal (%.9g, %.9g, %.9g), want %.9g (%g, %g, %g)",
		         ops_of(cd)->name, (double)p.x, (double)p.y, (double)p.z, (double)d, (double)n.x, (double)n.y,
		         (double)n.z, want, nx, ny, nz);
}

static void test_capsule_distance(void** state) {
	(void)state;
	const pbd_collider_def cd = capsule_def(0.5, 0.25);
	const double s3 = 1 / sqrt(3.0);
	check_distance(&cd, v3d(1, 0, 0), 0.75, 1, 0, 0);                      /* beside the side */
	check_distance(&cd, v3d(0, 0.3, -0.25), 0, 0, 0, -1);                  /* on the side */
	check_distance(&cd, v3d(0, 2, 0), 1.25, 0, 1, 0);                      /* above the top, on the axis */
	check_distance(&cd, v3d(0, -1, 0), 0.25, 0, -1, 0);                    /* below the bottom */
	check_distance(&cd, v3d(3, 4.5, 0), 4.75, 0.6, 0.8, 0);                /* off the top end */
	check_distance(&cd, v3d(-1, -1.5, 1), sqrt(3.0) - 0.25, -s3, -s3, s3); /* off the bottom end */
	check_distance(&cd, v3d(0, 0.5, 0.25), 0, 0, 0, 1);                    /* where side meets cap */
	check_distance(&cd, v3d(0.1, 0.2, 0), -0.15, 1, 0, 0);                 /* inside */
	check_distance(&cd, v3d(0, 0.7, 0), -0.05, 0, 1, 0);                   /* inside the top cap */
	check_distance(&cd, v3d(0, 0, 0), -0.25, 1, 0, 0);                     /* the centre: fixed +x */
	check_distance(&cd, v3d(0, 0.5, 0), -0.25, 1, 0, 0);                   /* the segment's end */
	check_distance(&cd, v3d(0, -0.3, 0), -0.25, 1, 0, 0);                  /* on the segment */
	const pbd_collider_def ball = capsule_def(0, 0.5);                     /* half_height 0: a ball */
	check_distance(&ball, v3d(0, 0, -2), 1.5, 0, 0, -1);
	check_distance(&ball, v3d(0, 0, 0), -0.5, 1, 0, 0);
}

static void test_box_distance(void** state) {
	(void)state;
	const pbd_collider_def cd = box_def(1, 0.5, 0.25);
	const double s2 = sqrt(0.5), s3 = 1 / sqrt(3.0);
	check_distance(&cd, v3d(2, 0, 0), 1, 1, 0, 0); /* faces */
	check_distance(&cd, v3d(0.3, -1, 0.1), 0.5, 0, -1, 0);
	check_distance(&cd, v3d(0, 0, 0.75), 0.5, 0, 0, 1);
	check_distance(&cd, v3d(2, 1.5, 0), sqrt(2.0), s2, s2, 0);         /* an edge */
	check_distance(&cd, v3d(-2, -1.5, 1.25), sqrt(3.0), -s3, -s3, s3); /* a corner */
	check_distance(&cd, v3d(1, 0.2, 0.1), 0, 1, 0, 0);                 /* on a face */
	check_distance(&cd, v3d(1, 0.5, 0), 0, 1, 0, 0);                   /* on an edge: x first */
	check_distance(&cd, v3d(0.9, 0, 0), -0.1, 1, 0, 0);                /* inside, nearest face x */
	check_distance(&cd, v3d(0, 0, 0.2), -0.05, 0, 0, 1);
	check_distance(&cd, v3d(0, 0.1, -0.2), -0.05, 0, 0, -1);
	check_distance(&cd, v3d(0, 0, 0), -0.25, 0, 0, 1); /* the centre: its nearest face is z */
	const pbd_collider_def cube = box_def(1, 1, 1);
	check_distance(&cube, v3d(0, 0, 0), -1, 1, 0, 0);          /* tie of all three: +x */
	check_distance(&cube, v3d(0.5, 0.5, 0), -0.5, 1, 0, 0);    /* tie of x and y: x */
	check_distance(&cube, v3d(-0.5, -0.5, 0), -0.5, -1, 0, 0); /* on the negative side */
	check_distance(&cube, v3d(0, 0.5, -0.5), -0.5, 0, 1, 0);   /* tie of y and z: y */
}

/* The normal is the gradient of the distance: central differences at random points away from
 * where the distance is not smooth enough for them: the medial set (the capsule's segment, the
 * box's planes inside where two faces are equally near) and the planes through the capsule's
 * ends and the box's faces, across which the distance is only once differentiable (the
 * differences then err by the order of the step). */
static bool smooth_at(const pbd_collider_def* cd, tp_dvec3 p) {
	const double gap = 0.02;
	if (cd->type == PBD_SHAPE_CAPSULE) {
		const double h = (double)cd->shape.capsule.half_height;
		return ref_capsule(cd, p, NULL) + (double)cd->shape.capsule.radius >= gap && fabs(fabs(p.y) - h) >= gap;
	}
	const pbd_vec3 h = cd->shape.box.half_extents;
	double q[3] = {fabs(p.x) - (double)h.x, fabs(p.y) - (double)h.y, fabs(p.z) - (double)h.z};
	for (int i = 0; i < 2; ++i) /* descending */
		for (int j = 0; j < 2 - i; ++j)
			if (q[j] < q[j + 1]) {
				const double tmp = q[j];
				q[j] = q[j + 1];
				q[j + 1] = tmp;
			}
	if (q[0] <= 0) return q[0] - q[1] >= gap && q[0] <= -gap;
	return fabs(q[0]) >= gap && fabs(q[1]) >= gap && fabs(q[2]) >= gap;
}

static void check_gradient(const pbd_collider_def* cd, uint64_t seed) {
	const pbd_shape_ops* ops = ops_of(cd);
	const pbd_real step = (pbd_real)TEST_TOL(1e-5, 1e-3);
	double worst = 0;
	int used = 0;
	for (int k = 0; k < 4000; ++k) {
		const pbd_vec3 p = v3_of(rand_cube(&seed, 1.5));
		if (!smooth_at(cd, tp_d(p))) continue;
		pbd_vec3 n, dummy;
		ops->distance(cd, p, &n);
		const pbd_vec3 ex = pbd_v3(step, 0, 0), ey = pbd_v3(0, step, 0), ez = pbd_v3(0, 0, step);
		const double g[3] = {((double)ops->distance(cd, pbd_v3_add(p, ex), &dummy) -
		                      (double)ops->distance(cd, pbd_v3_sub(p, ex), &dummy)) /
		                         (2 * (double)step),
		                     ((double)ops->distance(cd, pbd_v3_add(p, ey), &dummy) -
		                      (double)ops->distance(cd, pbd_v3_sub(p, ey), &dummy)) /
		                         (2 * (double)step),
		                     ((double)ops->distance(cd, pbd_v3_add(p, ez), &dummy) -
		                      (double)ops->distance(cd, pbd_v3_sub(p, ez), &dummy)) /
		                         (2 * (double)step)};
		const double err = fmax(fabs(g[0] - (double)n.x), fmax(fabs(g[1] - (double)n.y), fabs(g[2] - (double)n.z)));
		if (err > worst) worst = err;
		++used;
	}
	printf("%s: normal vs central differences at %d points, max error %.3g\n", ops->name, used, worst);
	assert_true(used > 1000);
	assert_true(worst < TEST_TOL(1e-6, 1e-3));
}

static void test_normal_is_gradient(void** state) {
	(void)state;
	const pbd_collider_def c = capsule_def(0.6, 0.3), b = box_def(0.8, 0.5, 0.3);
	check_gradient(&c, 11);
	check_gradient(&b, 12);
}

static void check_unit(const pbd_collider_def* cd, pbd_vec3 p) {
	pbd_vec3 n = pbd_v3(0, 0, 0);
	const pbd_real d = ops_of(cd)->distance(cd, p, &n);
	if (!pbd_is_finite(d) || !pbd_v3_is_finite(n) || fabs(tp_len(n) - 1) > UNIT_TOL)
		fail_msg("%s at (%g, %g, %g): distance %g, |normal| %.17g", ops_of(cd)->name, (double)p.x, (double)p.y,
		         (double)p.z, (double)d, tp_len(n));
}

/* |normal| = 1 and a finite distance everywhere: random points, the degenerate ones (the
 * capsule's segment, the box's centre, edges and corners), points a hair off them, and points
 * at the ends of the range. */
static void test_normal_is_unit(void** state) {
	(void)state;
	const pbd_real tiny = (pbd_real)1e-30, big = PBD_REAL_MAX;
	const pbd_collider_def shapes[3] = {capsule_def(0.5, 0.25), capsule_def(0, 0.25), box_def(1, 0.5, 0.25)};
	for (int s = 0; s < 3; ++s) {
		const pbd_collider_def* cd = &shapes[s];
		uint64_t seed = 100 + (uint64_t)s;
		for (int k = 0; k < 20000; ++k) check_unit(cd, v3_of(rand_cube(&seed, 3)));
		const pbd_real h = cd->type == PBD_SHAPE_CAPSULE ? cd->shape.capsule.half_height : cd->shape.box.half_extents.y;
		const pbd_real hx = cd->type == PBD_SHAPE_CAPSULE ? 0 : cd->shape.box.half_extents.x;
		const pbd_real hz = cd->type == PBD_SHAPE_CAPSULE ? 0 : cd->shape.box.half_extents.z;
		const pbd_vec3 pts[] = {
		    pbd_v3(0, 0, 0),       pbd_v3(0, h, 0),          pbd_v3(0, -h, 0),         pbd_v3(0, h / 2, 0),
		    pbd_v3(tiny, 0, 0),    pbd_v3(0, h + tiny, 0),   pbd_v3(tiny, tiny, tiny), pbd_v3(-tiny, h, tiny),
		    pbd_v3(hx, h, hz),     pbd_v3(hx + tiny, h, hz), pbd_v3(hx, h + tiny, 0),  pbd_v3(-hx, -h, -hz - tiny),
		    pbd_v3(big, big, big), pbd_v3(-big, big, -big),  pbd_v3(big, 0, 0),        pbd_v3(0, -big, 0),
		    pbd_v3(big, tiny, 0),  pbd_v3(tiny, big, -big),
		};
		for (size_t i = 0; i < sizeof pts / sizeof pts[0]; ++i) check_unit(cd, pts[i]);
	}
}

typedef struct sweep_stats {
	int segments, hits, sampled_hits;
	double surface_err;  /* max | distance of the point at t - radius | */
	double depth_before; /* max over samples before t (all of them on a miss) of radius - distance */
	double normal_err;   /* max | normal - reference normal at the point at t | */
	double approach;     /* max dot(normal, unit direction): <= 0 up to rounding */
} sweep_stats;

/* One sweep against a sampling of 2000 steps of the segment. */
static void sweep_vs_samples(const pbd_collider_def* cd, pbd_vec3 a, pbd_vec3 b, pbd_real radius, sweep_stats* st) {
	const pbd_shape_ops* ops = ops_of(cd);
	const double r = (double)radius;
	pbd_real t = -1;
	pbd_vec3 n = pbd_v3(0, 0, 0);
	const bool hit = ops->sweep(cd, a, b, radius, &t, &n);
	const int samples = 2000;
	int first = -1;
	double depth = -1e30;
	for (int i = 0; i <= samples; ++i) {
		const double ti = (double)i / samples;
		const double di = ref_distance(cd, dlerp(a, b, ti), NULL);
		if (first < 0 && di <= r) first = i;
		if (!hit || ti < (double)t) depth = fmax(depth, r - di);
	}
	st->segments++;
	if (first >= 0) st->sampled_hits++;
	if (depth > st->depth_before) st->depth_before = depth;
	if (!hit) return;
	st->hits++;
	assert_true(t >= 0 && t <= 1);
	tp_dvec3 rn;
	const tp_dvec3 p = dlerp(a, b, (double)t);
	const double dist = ref_distance(cd, p, &rn);
	st->surface_err = fmax(st->surface_err, fabs(dist - r));
	assert_true(fabs(tp_len(n) - 1) <= UNIT_TOL);
	/* Where the grown surface is sharp (a box grown by 0) or tightly curved, the reference normal
	 * at a point off by rounding may differ from the one at the exact point: compared only where
	 * the rounding is small next to the curvature radius. */
	if (cd->type == PBD_SHAPE_CAPSULE || r >= 0.05) {
		const tp_dvec3 nd = tp_d(n);
		st->normal_err = fmax(st->normal_err, dlen(dv(nd.x - rn.x, nd.y - rn.y, nd.z - rn.z)));
	}
	const tp_dvec3 dir = dv((double)b.x - (double)a.x, (double)b.y - (double)a.y, (double)b.z - (double)a.z);
	st->approach = fmax(st->approach, ddot(tp_d(n), dir) / dlen(dir));
}

/* Random segments in [-2, 2]^3: a third anywhere, a third aimed at the shape, a third grazing
 * it (along a tangent of the grown surface, shifted in or out by up to 1e-3, where a sweep that
 * rounds the wrong way would tunnel); a quarter of the radii 0. */
static sweep_stats random_sweeps(const pbd_collider_def* cd, uint64_t seed, int count) {
	sweep_stats st;
	memset(&st, 0, sizeof st);
	st.depth_before = -1e30;
	st.approach = -1;
	pbd_vec3 lo, hi;
	assert_true(ops_of(cd)->bounds(cd, &lo, &hi));
	while (st.segments < count) {
		const pbd_real radius = tp_rand(&seed) < 0.25 ? 0 : (pbd_real)tp_rand_range(&seed, 0, 0.2);
		pbd_vec3 a = v3_of(rand_cube(&seed, 2));
		pbd_vec3 b;
		const double mode = tp_rand(&seed);
		if (mode < 1.0 / 3) {
			b = v3_of(rand_cube(&seed, 2));
		} else if (mode < 2.0 / 3) {
			/* The closest point of the grown surface to a, a tangent there, and a shift along the normal. */
			tp_dvec3 n0;
			const tp_dvec3 ad = tp_d(a);
			const double d0 = ref_distance(cd, ad, &n0) - (double)radius;
			if (!(d0 > 0)) continue;
			const tp_dvec3 q = dv(ad.x - d0 * n0.x, ad.y - d0 * n0.y, ad.z - d0 * n0.z);
			const tp_dvec3 w = rand_cube(&seed, 1);
			const double wn = ddot(w, n0);
			tp_dvec3 tg = dv(w.x - wn * n0.x, w.y - wn * n0.y, w.z - wn * n0.z);
			const double tl = dlen(tg);
			if (!(tl > 1e-3)) continue;
			const double shift = tp_rand_range(&seed, -1e-3, 1e-3), len = tp_rand_range(&seed, 0.05, 1.5);
			tg = dv(tg.x / tl, tg.y / tl, tg.z / tl);
			const tp_dvec3 c = dv(q.x + shift * n0.x, q.y + shift * n0.y, q.z + shift * n0.z);
			const double before = tp_rand_range(&seed, 0.01, len);
			a = v3d(c.x - before * tg.x, c.y - before * tg.y, c.z - before * tg.z);
			b = v3d(c.x + (len - before) * tg.x, c.y + (len - before) * tg.y, c.z + (len - before) * tg.z);
		} else {
			const tp_dvec3 aim = rand_in(&seed, dv((double)lo.x - 0.1, (double)lo.y - 0.1, (double)lo.z - 0.1),
			                             dv((double)hi.x + 0.1, (double)hi.y + 0.1, (double)hi.z + 0.1));
			const double k = tp_rand_range(&seed, 0.2, 2);
			b = v3d((double)a.x + k * (aim.x - (double)a.x), (double)a.y + k * (aim.y - (double)a.y),
			        (double)a.z + k * (aim.z - (double)a.z));
		}
		const double da = ref_distance(cd, tp_d(a), NULL);
		pbd_real t;
		pbd_vec3 n;
		if (da < (double)radius - DIST_TOL) {
			assert_false(ops_of(cd)->sweep(cd, a, b, radius, &t, &n)); /* starts inside the grown shape */
			continue;
		}
		if (da <= (double)radius + DIST_TOL) continue; /* on the grown surface: either answer */
		sweep_vs_samples(cd, a, b, radius, &st);
	}
	printf("%s: %d segments, %d hits (%d found by sampling); max |distance at t - radius| %.3g, max depth of a "
	       "sample before t %.3g, max normal error %.3g, max normal . direction %.3g\n",
	       ops_of(cd)->name, st.segments, st.hits, st.sampled_hits, st.surface_err, st.depth_before, st.normal_err,
	       st.approach);
	return st;
}

static void check_random_sweeps(const pbd_collider_def* cd, uint64_t seed) {
	const sweep_stats st = random_sweeps(cd, seed, 3000);
	assert_true(st.hits > st.segments / 5);
	assert_true(st.surface_err <= TEST_TOL(1e-12, 2e-6));
	assert_true(st.depth_before <= TEST_TOL(1e-12, 2e-6)); /* no tunnelling */
	assert_true(st.normal_err <= TEST_TOL(1e-12, 2e-5));
	assert_true(st.approach <= TEST_TOL(1e-12, 1e-6));
}

static void test_sweep_random(void** state) {
	(void)state;
	const pbd_collider_def c = capsule_def(0.6, 0.3), ball = capsule_def(0, 0.4), b = box_def(0.8, 0.5, 0.3),
	                       flat = box_def(1.2, 0.05, 0.6);
	check_random_sweeps(&c, 21);
	check_random_sweeps(&ball, 22);
	check_random_sweeps(&b, 23);
	check_random_sweeps(&flat, 24);
}

/* A sweep that must hit at t with the normal (nx, ny, nz). */
static void check_hit(const pbd_collider_def* cd, pbd_vec3 a, pbd_vec3 b, double radius, double want_t, double nx,
                      double ny, double nz, double tol) {
	pbd_real t = -1;
	pbd_vec3 n = pbd_v3(0, 0, 0);
	if (!ops_of(cd)->sweep(cd, a, b, (pbd_real)radius, &t, &n))
		fail_msg("%s: (%g, %g, %g) -> (%g, %g, %g) missed", ops_of(cd)->name, (double)a.x, (double)a.y, (double)a.z,
		         (double)b.x, (double)b.y, (double)b.z);
	if (fabs((double)t - want_t) > tol || fabs((double)n.x - nx) > tol || fabs((double)n.y - ny) > tol ||
	    fabs((double)n.z - nz) > tol)
		fail_msg("%s: (%g, %g, %g) -> (%g, %g, %g): t %.9g normal (%.9g, %.9g, %.9g), want %.9g (%g, %g, %g)",
		         ops_of(cd)->name, (double)a.x, (double)a.y, (double)a.z, (double)b.x, (double)b.y, (double)b.z,
		         (double)t, (double)n.x, (double)n.y, (double)n.z, want_t, nx, ny, nz);
}

static void check_miss(const pbd_collider_def* cd, pbd_vec3 a, pbd_vec3 b, double radius) {
	pbd_real t = -1;
	pbd_vec3 n = pbd_v3(0, 0, 0);
	if (ops_of(cd)->sweep(cd, a, b, (pbd_real)radius, &t, &n))
		fail_msg("%s: (%g, %g, %g) -> (%g, %g, %g) hit at %g", ops_of(cd)->name, (double)a.x, (double)a.y, (double)a.z,
		         (double)b.x, (double)b.y, (double)b.z, (double)t);
}

/* A tangent segment may touch or not; when it touches, it does so at the tangent point. */
static void check_graze(const pbd_collider_def* cd, pbd_vec3 a, pbd_vec3 b, double radius, double want_t, double tol) {
	pbd_real t = -1;
	pbd_vec3 n = pbd_v3(0, 0, 0);
	if (!ops_of(cd)->sweep(cd, a, b, (pbd_real)radius, &t, &n)) return;
	assert_true(fabs((double)t - want_t) <= tol);
	assert_true(fabs(tp_len(n) - 1) <= UNIT_TOL);
	assert_near(ref_distance(cd, dlerp(a, b, (double)t), NULL), radius, TEST_TOL(1e-9, 1e-5));
}

static void test_capsule_sweep_cases(void** state) {
	(void)state;
	const pbd_collider_def cd = capsule_def(0.5, 0.25);
	const double r = 0.05, R = 0.3, tol = TEST_TOL(1e-12, 2e-6);
	/* Zero length, outside and inside; starting inside the shape or within the radius of it. */
	check_miss(&cd, v3d(1, 0, 0), v3d(1, 0, 0), r);
	check_miss(&cd, v3d(0.1, 0, 0), v3d(0.1, 0, 0), r);
	check_miss(&cd, v3d(0.1, 0, 0), v3d(2, 0, 0), r);
	check_miss(&cd, v3d(0.27, 0, 0), v3d(-2, 0, 0), r);
	check_miss(&cd, v3d(0, 0, 0), v3d(0, 3, 0), r);
	/* Along the axis: in through a cap, beside it, away from it. */
	const double cap_y = 0.5 + sqrt(R * R - 0.01);
	check_hit(&cd, v3d(0.1, 3, 0), v3d(0.1, -3, 0), r, (3 - cap_y) / 6, 0.1 / R, (cap_y - 0.5) / R, 0, tol);
	check_hit(&cd, v3d(0, -3, 0), v3d(0, 3, 0), r, (3 - 0.8) / 6, 0, -1, 0, tol);
	check_miss(&cd, v3d(0.31, 3, 0), v3d(0.31, -3, 0), r);
	check_miss(&cd, v3d(0.31, 0, 0), v3d(0.31, 2, 0), r);
	check_miss(&cd, v3d(0, 1, 0), v3d(0, 3, 0), r);
	/* Across the axis: through the side, through the seam of side and cap, a short one that stops
	 * short, one that ends exactly on the grown surface. */
	check_hit(&cd, v3d(-2, 0.2, 0), v3d(2, 0.2, 0), r, (2 - R) / 4, -1, 0, 0, tol);
	check_hit(&cd, v3d(-2, 0.5, 0), v3d(2, 0.5, 0), r, (2 - R) / 4, -1, 0, 0, tol);
	check_hit(&cd, v3d(0, 0.2, -2), v3d(0, 0.2, 2), r, (2 - R) / 4, 0, 0, -1, tol);
	check_miss(&cd, v3d(-2, 0.2, 0), v3d(-0.31, 0.2, 0), r);
	check_hit(&cd, v3d(-2, 0.2, 0), v3d(-0.25, 0.2, 0), r, (2 - R) / 1.75, -1, 0, 0, tol);
	/* Tangent to the side: touches at the middle or not at all; a hair outside misses, a hair
	 * inside hits just before the middle. */
	check_graze(&cd, v3d(-2, 0, R), v3d(2, 0, R), r, 0.5, TEST_TOL(1e-6, 2e-3));
	check_miss(&cd, v3d(-2, 0, R * 1.001), v3d(2, 0, R * 1.001), r);
	const double zi = R * 0.999;
	check_hit(&cd, v3d(-2, 0, zi), v3d(2, 0, zi), r, 0.5 - sqrt(R * R - zi * zi) / 4, -sqrt(R * R - zi * zi) / R, 0,
	          zi / R, TEST_TOL(1e-9, 2e-4));
	/* Radius 0: the bare capsule. A ball (half_height 0). */
	check_hit(&cd, v3d(2, -0.1, 0), v3d(-2, -0.1, 0), 0, (2 - 0.25) / 4, 1, 0, 0, tol);
	const pbd_collider_def ball = capsule_def(0, 0.25);
	check_hit(&ball, v3d(0, 2, 0), v3d(0, -2, 0), r, (2 - R) / 4, 0, 1, 0, tol);
	/* Far away, and a shape far from 1 m either way: no overflow, no underflow to a miss. */
	const pbd_real far = (pbd_real)1e6;
	pbd_real t;
	pbd_vec3 n;
	assert_true(pbd_shape_capsule_ops.sweep(&cd, pbd_v3(far, (pbd_real)0.1, 0), pbd_v3(-far, (pbd_real)0.1, 0),
	                                        (pbd_real)r, &t, &n));
	assert_near(1e6 - 2e6 * (double)t, R, TEST_TOL(1e-9, 0.2));
	assert_near(n.x, 1, 1e-6);
	const pbd_real huge = PBD_SQRT(PBD_REAL_MAX) / 8, small = (pbd_real)1e-20;
	const pbd_collider_def big = capsule_def((double)huge, (double)huge), little = capsule_def(0, (double)small);
	check_hit(&big, pbd_v3(4 * huge, 0, 0), pbd_v3(-4 * huge, 0, 0), 0, 3.0 / 8, 1, 0, 0, tol);
	check_hit(&big, pbd_v3(0, 4 * huge, 0), pbd_v3(0, -4 * huge, 0), (double)huge, 1.0 / 8, 0, 1, 0, tol);
	check_hit(&little, pbd_v3(4 * small, 0, 0), pbd_v3(-4 * small, 0, 0), 0, 3.0 / 8, 1, 0, 0, tol);
	check_hit(&little, pbd_v3(0, 0, 4 * small), pbd_v3(0, 0, -4 * small), (double)small, 2.0 / 8, 0, 0, 1, tol);
	const pbd_real sub = PBD_REAL_MIN_NORMAL / 1024; /* subnormal: no 1 / size may appear */
	const pbd_collider_def least = capsule_def((double)sub, (double)sub);
	check_hit(&least, pbd_v3(4 * sub, 0, 0), pbd_v3(-4 * sub, 0, 0), 0, 3.0 / 8, 1, 0, 0, tol);
	check_hit(&least, pbd_v3(0, 4 * sub, 0), pbd_v3(0, -4 * sub, 0), 0, 2.0 / 8, 0, 1, 0, tol);
	check_unit(&least, pbd_v3(sub, sub, 0));
}

static void test_box_sweep_cases(void** state) {
	(void)state;
	const pbd_collider_def cd = box_def(1, 0.5, 0.25);
	const double r = 0.1, tol = TEST_TOL(1e-12, 2e-6), s2 = sqrt(0.5), s3 = 1 / sqrt(3.0);
	/* Zero length; starting inside the box or within the radius of it. */
	check_miss(&cd, v3d(2, 0, 0), v3d(2, 0, 0), r);
	check_miss(&cd, v3d(0.5, 0, 0), v3d(0.5, 0, 0), r);
	check_miss(&cd, v3d(0.5, 0, 0), v3d(3, 0, 0), r);
	check_miss(&cd, v3d(1.05, 0, 0), v3d(-3, 0, 0), r);
	check_miss(&cd, v3d(1.05, 0.55, 0), v3d(3, 3, 0), r);
	/* A face, an edge, a corner, each aimed at straight on. */
	check_hit(&cd, v3d(3, 0.1, 0.1), v3d(-3, 0.1, 0.1), r, (3 - 1.1) / 6, 1, 0, 0, tol);
	check_hit(&cd, v3d(0.2, -3, 0), v3d(0.2, 3, 0), r, (3 - 0.6) / 6, 0, -1, 0, tol);
	check_hit(&cd, v3d(2, 1.5, 0), v3d(-1, -1.5, 0), r, (sqrt(2.0) - r) / (3 * sqrt(2.0)), s2, s2, 0, tol);
	check_hit(&cd, v3d(2, 1.5, 1.25), v3d(0, -0.5, -0.75), r, (sqrt(3.0) - r) / (2 * sqrt(3.0)), s3, s3, s3, tol);
	check_hit(&cd, v3d(-2, -1.5, -1.25), v3d(0, 0.5, 0.75), r, (sqrt(3.0) - r) / (2 * sqrt(3.0)), -s3, -s3, -s3, tol);
	/* Radius 0: the sharp box, also through a corner exactly. */
	check_hit(&cd, v3d(3, 0.1, 0.1), v3d(-3, 0.1, 0.1), 0, 2.0 / 6, 1, 0, 0, tol);
	check_hit(&cd, v3d(2, 1.5, 1.25), v3d(0, -0.5, -0.75), 0, 0.5, 1, 0, 0, tol);
	check_miss(&cd, v3d(3, 0.51, 0), v3d(-3, 0.51, 0), 0);
	/* Beside the grown box, and ending just short of it. */
	check_miss(&cd, v3d(3, 0.61, 0), v3d(-3, 0.61, 0), r);
	check_miss(&cd, v3d(3, 0, 0), v3d(1.11, 0, 0), r);
	/* Past an edge, rounded off: a miss where the sharp grown box would be hit. */
	check_miss(&cd, v3d(1.09, 0.59, -2), v3d(1.09, 0.59, 2), r);
	/* Grazing the top face: touches where the face begins or not at all; a hair lower comes in
	 * through the rounded edge just before. */
	check_graze(&cd, v3d(-3, 0.6, 0), v3d(3, 0.6, 0), r, 1.0 / 3, TEST_TOL(1e-9, 1e-3));
	const double y = 0.6 - 1e-3, dx = sqrt(r * r - (y - 0.5) * (y - 0.5));
	check_hit(&cd, v3d(-3, y, 0), v3d(3, y, 0), r, (2 - dx) / 6, -dx / r, (y - 0.5) / r, 0, TEST_TOL(1e-9, 2e-4));
	/* Starting inside the grown box's bounds but outside the rounded shape, into a corner ball. */
	const double cx = 1 + sqrt(r * r - 0.005);
	check_hit(&cd, v3d(1.09, 0.55, 0.3), v3d(0.5, 0.55, 0.3), r, (1.09 - cx) / 0.59, (cx - 1) / r, 0.05 / r, 0.05 / r,
	          TEST_TOL(1e-9, 2e-5));
	/* Far away, and boxes far from 1 m either way. */
	const pbd_real far = (pbd_real)1e6;
	pbd_real t;
	pbd_vec3 n;
	assert_true(pbd_shape_box_ops.sweep(&cd, pbd_v3(far, 0, 0), pbd_v3(-far, 0, 0), (pbd_real)r, &t, &n));
	assert_near(1e6 - 2e6 * (double)t, 1.1, TEST_TOL(1e-9, 0.2));
	assert_near(n.x, 1, 1e-6);
	const pbd_real huge = PBD_SQRT(PBD_REAL_MAX) / 8, small = (pbd_real)1e-20;
	const pbd_collider_def big = box_def((double)huge, (double)huge, (double)huge);
	const pbd_collider_def little = box_def((double)small, (double)small, (double)small);
	check_hit(&big, pbd_v3(4 * huge, 0, 0), pbd_v3(-4 * huge, 0, 0), (double)huge, 2.0 / 8, 1, 0, 0, tol);
	check_hit(&big, pbd_v3(4 * huge, 4 * huge, 4 * huge), pbd_v3(0, 0, 0), (double)huge,
	          (1 - 1 / (3 * sqrt(3.0))) * 0.75, s3, s3, s3, TEST_TOL(1e-12, 4e-6));
	check_hit(&little, pbd_v3(0, 0, 4 * small), pbd_v3(0, 0, -4 * small), (double)small, 2.0 / 8, 0, 0, 1, tol);
	check_hit(&little, pbd_v3(4 * small, 4 * small, 4 * small), pbd_v3(0, 0, 0), (double)small,
	          (1 - 1 / (3 * sqrt(3.0))) * 0.75, s3, s3, s3, TEST_TOL(1e-12, 4e-6));
	const pbd_real sub = PBD_REAL_MIN_NORMAL / 1024;
	const pbd_collider_def least = box_def((double)sub, (double)sub, (double)sub);
	check_hit(&least, pbd_v3(0, 0, 4 * sub), pbd_v3(0, 0, -4 * sub), (double)sub, 2.0 / 8, 0, 0, 1, tol);
	check_hit(&least, pbd_v3(4 * sub, 4 * sub, 4 * sub), pbd_v3(0, 0, 0), (double)sub, (1 - 1 / (3 * sqrt(3.0))) * 0.75,
	          s3, s3, s3, TEST_TOL(1e-12, 4e-6));
	check_unit(&least, pbd_v3(2 * sub, 2 * sub, 2 * sub));
}

/* The clipping of a segment to a slab and a box. An interval that is already empty stays empty
 * whatever the segment does: one parallel to the slab and inside it (d = 0) must not turn [0.75,
 * 0.25] into a hit, or a caller that clips [t0, best] (the height field's blocks from their key
 * up to the best hit so far) would take t0 for an entry where the best hit comes before it. */
static void test_clip_slab(void** state) {
	(void)state;
	pbd_real t0 = PBD_R(0.75), t1 = PBD_R(0.25);
	assert_false(pbd_clip_slab(PBD_R(0.5), 0, 0, 1, &t0, &t1));
	double d0 = 0.75, d1 = 0.25;
	assert_false(pbd_clip_slab_d(0.5, 0, 0, 1, &d0, &d1));
	t0 = PBD_R(0.75), t1 = PBD_R(0.25);
	assert_false(pbd_clip_box(v3d(0.5, 0.5, 0.5), v3d(0, 0, 0), v3d(0, 0, 0), v3d(1, 1, 1), &t0, &t1));
	/* Parallel, inside and outside; then narrowed from either side, and mirrored. */
	t0 = PBD_R(0.25), t1 = PBD_R(0.75);
	assert_true(pbd_clip_slab(PBD_R(0.5), 0, 0, 1, &t0, &t1));
	assert_true(t0 == PBD_R(0.25) && t1 == PBD_R(0.75));
	assert_false(pbd_clip_slab(2, 0, 0, 1, &t0, &t1));
	t0 = 0, t1 = 1;
	assert_true(pbd_clip_slab(-1, 4, 0, 1, &t0, &t1));
	assert_true(t0 == PBD_R(0.25) && t1 == PBD_R(0.5));
	t0 = 0, t1 = 1;
	assert_true(pbd_clip_slab(2, -4, 0, 1, &t0, &t1));
	assert_true(t0 == PBD_R(0.25) && t1 == PBD_R(0.5));
	d0 = 0, d1 = 1;
	assert_true(pbd_clip_slab_d(2, -4, 0, 1, &d0, &d1));
	assert_true(d0 == 0.25 && d1 == 0.5);
	/* Short of the slab, past it, and a step too short to divide by. */
	t0 = 0, t1 = 1;
	assert_false(pbd_clip_slab(-1, PBD_R(0.5), 0, 1, &t0, &t1));
	assert_false(pbd_clip_slab(2, 1, 0, 1, &t0, &t1));
	assert_false(pbd_clip_slab(-1, PBD_REAL_MIN_NORMAL, 0, 1, &t0, &t1));
	assert_true(pbd_clip_slab(PBD_R(0.5), PBD_REAL_MIN_NORMAL, 0, 1, &t0, &t1));
	assert_true(t0 == 0 && t1 == 1);
	/* A box: in through one face and out through another. */
	assert_true(pbd_clip_box(v3d(-1, 0.5, 0.5), v3d(4, 0, 0.5), v3d(0, 0, 0), v3d(1, 1, 1), &t0, &t1));
	assert_true(t0 == PBD_R(0.25) && t1 == PBD_R(0.5));
	t0 = 0, t1 = 1;
	assert_false(pbd_clip_box(v3d(-1, 0.5, 0.5), v3d(4, 0, 3), v3d(0, 0, 0), v3d(1, 1, 1), &t0, &t1));
}

/* A segment along an edge of the box or along the capsule's axis, outside the grown shape by a few
 * percent of a radius that is small next to the shape: inside the grown box's bounds, where the
 * ball at the far corner or cap is tested from about two sizes away. The entry into that ball
 * must see the miss; the squares of b'^2 - a c cancel there and read it as a touch. */
static void test_sweep_beside_small_radius(void** state) {
	(void)state;
	const double r = 1e-4;
	const pbd_collider_def box = box_def(1, 1, 1), capsule = capsule_def(1, 1e-3);
	for (int i = 0; i < 40; ++i) {
		const double k = 1.02 + 0.01 * i, e = k * r * sqrt(0.5); /* the distance from the edge is k r */
		for (int sign = -1; sign <= 1; sign += 2) {
			check_miss(&box, v3d(1 + e, -3 * sign, 1 + e), v3d(1 + e, 3 * sign, 1 + e), r);
			check_miss(&box, v3d(-3 * sign, 1 + e, -1 - e), v3d(3 * sign, 1 + e, -1 - e), r);
			check_miss(&capsule, v3d(k * (1e-3 + r), -3 * sign, 0), v3d(k * (1e-3 + r), 3 * sign, 0), r);
			check_miss(&capsule, v3d(0, -3 * sign, k * 1e-3), v3d(0, 3 * sign, k * 1e-3), 0);
		}
	}
	/* Just inside: the rounded edge or the side is hit. */
	const double e = 0.9 * r * sqrt(0.5);
	pbd_real t;
	pbd_vec3 n;
	assert_true(pbd_shape_box_ops.sweep(&box, v3d(1 + e, -3, 1 + e), v3d(1 + e, 3, 1 + e), (pbd_real)r, &t, &n));
	assert_near(t, 2.0 / 6, 1e-4);
	assert_true(pbd_shape_capsule_ops.sweep(&capsule, v3d(0.9e-3, -3, 0), v3d(0.9e-3, 3, 0), 0, &t, &n));
}

/* validate with a world that keeps its last message: the status, and a message that names the call. */
static void check_validate(pbd_world* w, const char* msg, pbd_collider_def cd, pbd_status want, const char* field) {
	char* m = (char*)msg;
	m[0] = '\0';
	const pbd_status st = ops_of(&cd)->validate(w, &cd);
	if (st != want) fail_msg("%s validate: status %d, want %d (%s)", ops_of(&cd)->name, (int)st, (int)want, msg);
	if (want == PBD_OK) {
		assert_string_equal(msg, "");
		return;
	}
	assert_int_equal(strncmp(msg, "pbd_collider_create: ", 21), 0);
	assert_non_null(strstr(msg, field));
}

static void test_validate(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = test_world_keep(msg);
	const double nan = (double)NAN, inf = (double)INFINITY;
	const double huge = (double)PBD_SQRT(PBD_REAL_MAX), ok_big = (double)(PBD_SQRT(PBD_REAL_MAX) / 8);
	check_validate(w, msg, capsule_def(0.5, 0.2), PBD_OK, "");
	check_validate(w, msg, capsule_def(0, 0.2), PBD_OK, "");
	check_validate(w, msg, capsule_def(ok_big, ok_big), PBD_OK, "");
	check_validate(w, msg, capsule_def(0.5, 0), PBD_ERR_OUT_OF_RANGE, "radius");
	check_validate(w, msg, capsule_def(0.5, -1), PBD_ERR_OUT_OF_RANGE, "radius");
	check_validate(w, msg, capsule_def(-0.1, 0.2), PBD_ERR_OUT_OF_RANGE, "half_height");
	check_validate(w, msg, capsule_def(nan, 0.2), PBD_ERR_NOT_FINITE, "half_height");
	check_validate(w, msg, capsule_def(0.5, nan), PBD_ERR_NOT_FINITE, "radius");
	check_validate(w, msg, capsule_def(0.5, inf), PBD_ERR_NOT_FINITE, "radius");
	check_validate(w, msg, capsule_def(-inf, 0.2), PBD_ERR_NOT_FINITE, "half_height");
	check_validate(w, msg, capsule_def(huge, 0.2), PBD_ERR_OUT_OF_RANGE, "half_height");
	check_validate(w, msg, capsule_def(0.5, huge), PBD_ERR_OUT_OF_RANGE, "radius");
	pbd_collider_def cd = capsule_def(0.5, 0.2);
	cd.margin = (pbd_real)huge;
	check_validate(w, msg, cd, PBD_ERR_OUT_OF_RANGE, "margin");

	check_validate(w, msg, box_def(1, 0.5, 0.25), PBD_OK, "");
	check_validate(w, msg, box_def(ok_big, ok_big, ok_big), PBD_OK, "");
	check_validate(w, msg, box_def(0, 1, 1), PBD_ERR_OUT_OF_RANGE, "half_extents");
	check_validate(w, msg, box_def(1, -1, 1), PBD_ERR_OUT_OF_RANGE, "half_extents");
	check_validate(w, msg, box_def(1, 1, -0.0), PBD_ERR_OUT_OF_RANGE, "half_extents");
	check_validate(w, msg, box_def(1, 1, nan), PBD_ERR_NOT_FINITE, "half_extents");
	check_validate(w, msg, box_def(inf, 1, 1), PBD_ERR_NOT_FINITE, "half_extents");
	check_validate(w, msg, box_def(1, huge, 1), PBD_ERR_OUT_OF_RANGE, "half_extents");
	cd = box_def(1, 1, 1);
	cd.margin = (pbd_real)huge;
	check_validate(w, msg, cd, PBD_ERR_OUT_OF_RANGE, "margin");
	pbd_world_destroy(w);
}

static void test_bounds(void** state) {
	(void)state;
	pbd_vec3 lo, hi;
	const pbd_collider_def c = capsule_def(0.5, 0.25), b = box_def(1, 0.5, 0.25);
	assert_true(pbd_shape_capsule_ops.bounds(&c, &lo, &hi));
	assert_near(lo.x, -0.25, 0);
	assert_near(lo.y, -0.75, 0);
	assert_near(lo.z, -0.25, 0);
	assert_near(hi.x, 0.25, 0);
	assert_near(hi.y, 0.75, 0);
	assert_near(hi.z, 0.25, 0);
	assert_true(pbd_shape_box_ops.bounds(&b, &lo, &hi));
	assert_near(lo.x, -1, 0);
	assert_near(lo.y, -0.5, 0);
	assert_near(lo.z, -0.25, 0);
	assert_near(hi.x, 1, 0);
	assert_near(hi.y, 0.5, 0);
	assert_near(hi.z, 0.25, 0);
	/* Every point of the shape lies in its bounds. */
	uint64_t seed = 7;
	for (int k = 0; k < 20000; ++k) {
		const pbd_vec3 p = v3_of(rand_cube(&seed, 1.5));
		pbd_vec3 n;
		for (int s = 0; s < 2; ++s) {
			const pbd_collider_def* cd = s == 0 ? &c : &b;
			if (ops_of(cd)->distance(cd, p, &n) > 0) continue;
			ops_of(cd)->bounds(cd, &lo, &hi);
			assert_true(p.x >= lo.x && p.y >= lo.y && p.z >= lo.z && p.x <= hi.x && p.y <= hi.y && p.z <= hi.z);
		}
	}
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_capsule_distance),
	    cmocka_unit_test(test_box_distance),
	    cmocka_unit_test(test_normal_is_gradient),
	    cmocka_unit_test(test_normal_is_unit),
	    cmocka_unit_test(test_sweep_random),
	    cmocka_unit_test(test_capsule_sweep_cases),
	    cmocka_unit_test(test_box_sweep_cases),
	    cmocka_unit_test(test_sweep_beside_small_radius),
	    cmocka_unit_test(test_clip_slab),
	    cmocka_unit_test(test_validate),
	    cmocka_unit_test(test_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
