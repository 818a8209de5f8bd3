/* Heightfield shape, called through its ops in the shape's frame, against a reference written
 * apart from it in double: the exact signed distance to the prism under the surface (every
 * triangle by brute force, the four walls, the sign from the height under the point). Checked:
 * a flat field is a plane's distance above and below; a tilted planar field is the plane's exact
 * distance above and below, away from the borders; a bumpy and a steep field, and a large one
 * (several pyramid levels), against the reference at random points above, below and beside;
 * normals unit everywhere (far, huge and tiny points included) and equal to central differences
 * of the distance; sweeps against a 2000-step sampling of random, aimed and grazing segments (no
 * sampled point before the returned t within the radius, the point at t on the grown surface,
 * no sample within the radius on a miss); chosen sweeps (straight down, walls, corners, starting
 * inside, zero length, far away); particles at 100 m/s dropped on a bumpy field never end below
 * it; validation of every field; bounds and triangles; a build from a copy is the same bytes; a
 * field scaled by a power of two gives the scaled answers; and through a world: creation copies
 * the heights, particles at 100 m/s stay out through the contact stage, snapshots round-trip.
 * HF_VERBOSE=1 prints the worst cases. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision/collide.h"
#include "test_physics.h"

/* Fields of about 1 m: the float tolerances follow from a few roundings of numbers near 1. */
#define DIST_TOL TEST_TOL(1e-12, 4e-6)
#define UNIT_TOL TEST_TOL(1e-14, 1e-6)

#define R(x) ((pbd_real)(x))

static const pbd_shape_ops* const ops = &pbd_shape_heightfield_ops;

/* ---- fields --------------------------------------------------------------------------------- */

typedef double (*height_fn)(double x, double z, uint32_t i, uint32_t j, const double* k);

typedef struct field {
	pbd_collider_def def; /* built: its heights point into data */
	void* data;
	size_t size;
} field;

/* Sample positions exactly as the shape computes them: i cell_x, rounded once in pbd_real. */
static double sx(const pbd_collider_def* cd, uint32_t i) {
	return (double)((pbd_real)i * cd->shape.heightfield.cell_x);
}
static double sz(const pbd_collider_def* cd, uint32_t j) {
	return (double)((pbd_real)j * cd->shape.heightfield.cell_z);
}
static double sh(const pbd_collider_def* cd, uint32_t i, uint32_t j) {
	return (double)cd->shape.heightfield.heights[(size_t)j * cd->shape.heightfield.nx + i];
}

static pbd_collider_def hf_def(const pbd_real* heights, uint32_t nx, uint32_t nz, double cx, double cz) {
	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_HEIGHTFIELD;
	cd.shape.heightfield.heights = heights;
	cd.shape.heightfield.nx = nx;
	cd.shape.heightfield.nz = nz;
	cd.shape.heightfield.cell_x = (pbd_real)cx;
	cd.shape.heightfield.cell_z = (pbd_real)cz;
	return cd;
}

/* Validates and builds a field from fn, then overwrites and frees the caller's heights: the
 * built field must hold its own copy. */
static field field_make(uint32_t nx, uint32_t nz, double cx, double cz, height_fn fn, const double* k) {
	pbd_real* h = malloc((size_t)nx * nz * sizeof *h);
	assert_non_null(h);
	field f;
	f.def = hf_def(h, nx, nz, cx, cz);
	for (uint32_t j = 0; j < nz; ++j)
		for (uint32_t i = 0; i < nx; ++i) h[(size_t)j * nx + i] = (pbd_real)fn(sx(&f.def, i), sz(&f.def, j), i, j, k);
	pbd_world* w = test_world(NULL);
	assert_int_equal(ops->validate(w, &f.def), PBD_OK);
	pbd_world_destroy(w);
	f.size = ops->data_size(&f.def);
	assert_true(f.size >= (size_t)nx * nz * sizeof(pbd_real));
	f.data = malloc(f.size);
	assert_non_null(f.data);
	ops->build(&f.def, f.data);
	assert_ptr_equal(f.def.shape.heightfield.heights, f.data);
	memset(h, 0xff, (size_t)nx * nz * sizeof *h);
	free(h);
	return f;
}

static void field_free(field* f) {
	free(f->data);
	f->data = NULL;
}

/* A fixed hash of (i, j) in [-1, 1]. */
static double noise(uint32_t i, uint32_t j) {
	uint64_t s = ((uint64_t)i * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)j * 0xC2B2AE3D27D4EB4Full) ^ 0x165667B19E3779F9ull;
	s ^= s >> 29;
	s *= 0xBF58476D1CE4E5B9ull;
	s ^= s >> 32;
	return (double)(s >> 11) * (2.0 / 9007199254740992.0) - 1;
}

static double h_flat(double x, double z, uint32_t i, uint32_t j, const double* k) {
	(void)x, (void)z, (void)i, (void)j;
	return k[0];
}
static double h_plane(double x, double z, uint32_t i, uint32_t j, const double* k) {
	(void)i, (void)j;
	return k[0] + k[1] * x + k[2] * z;
}
/* Smooth hills plus k[1] of noise per sample, times k[0]. */
static double h_bumpy(double x, double z, uint32_t i, uint32_t j, const double* k) {
	return k[0] * (0.3 * sin(2.1 * x + 0.3) * cos(1.7 * z - 0.2) + 0.2 * sin(0.9 * x * z) + k[1] * noise(i, j));
}

/* ---- reference in double ---------------------------------------------------------------- */

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
static pbd_vec3 v3_of(tp_dvec3 v) { return pbd_v3((pbd_real)v.x, (pbd_real)v.y, (pbd_real)v.z); }

/* A random point of [x0, x1] x [y0, y1] x [z0, z1], drawn x, y, z in this order whatever order
 * the compiler evaluates arguments in, so that every build sees the same points. */
static tp_dvec3 rand_box(uint64_t* seed, double x0, double x1, double y0, double y1, double z0, double z1) {
	const double x = tp_rand_range(seed, x0, x1);
	const double y = tp_rand_range(seed, y0, y1);
	const double z = tp_rand_range(seed, z0, z1);
	return dv(x, y, z);
}

/* Closest point of triangle abc to p (Ericson, Real-Time Collision Detection 5.1.5). */
static tp_dvec3 closest_on_triangle(tp_dvec3 p, tp_dvec3 a, tp_dvec3 b, tp_dvec3 c) {
	const tp_dvec3 ab = dsub(b, a), ac = dsub(c, a), ap = dsub(p, a);
	const double d1 = ddot(ab, ap), d2 = ddot(ac, ap);
	if (d1 <= 0 && d2 <= 0) return a;
	const tp_dvec3 bp = dsub(p, b);
	const double d3 = ddot(ab, bp), d4 = ddot(ac, bp);
	if (d3 >= 0 && d4 <= d3) return b;
	const double vc = d1 * d4 - d3 * d2;
	if (vc <= 0 && d1 >= 0 && d3 <= 0) return dadd(a, dscale(ab, d1 / (d1 - d3)));
	const tp_dvec3 cp = dsub(p, c);
	const double d5 = ddot(ab, cp), d6 = ddot(ac, cp);
	if (d6 >= 0 && d5 <= d6) return c;
	const double vb = d5 * d2 - d1 * d6;
	if (vb <= 0 && d2 >= 0 && d6 <= 0) return dadd(a, dscale(ac, d2 / (d2 - d6)));
	const double va = d3 * d6 - d5 * d4;
	if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0)
		return dadd(b, dscale(dsub(c, b), (d4 - d3) / ((d4 - d3) + (d5 - d6))));
	const double den = 1 / (va + vb + vc);
	return dadd(a, dadd(dscale(ab, vb * den), dscale(ac, vc * den)));
}

static tp_dvec3 vtx(const pbd_collider_def* cd, uint32_t i, uint32_t j) {
	return dv(sx(cd, i), sh(cd, i, j), sz(cd, j));
}

/* Linear interpolation along the border polyline through samples (i, j) as t runs over axis. */
static double border(const pbd_collider_def* cd, bool along_z, uint32_t fixed, double c) {
	const pbd_heightfield* f = &cd->shape.heightfield;
	const uint32_t n = along_z ? f->nz : f->nx;
	for (uint32_t k = 0; k + 1 < n; ++k) {
		const double c0 = along_z ? sz(cd, k) : sx(cd, k), c1 = along_z ? sz(cd, k + 1) : sx(cd, k + 1);
		if (c <= c1 || k + 2 == n) {
			const double h0 = along_z ? sh(cd, fixed, k) : sh(cd, k, fixed);
			const double h1 = along_z ? sh(cd, fixed, k + 1) : sh(cd, k + 1, fixed);
			const double t = fmin(fmax((c - c0) / (c1 - c0), 0), 1);
			return h0 + (h1 - h0) * t;
		}
	}
	return 0;
}

/* The surface's height at (x, z) in the footprint, T0 where w <= u. */
static double surface_at(const pbd_collider_def* cd, double x, double z) {
	const pbd_heightfield* f = &cd->shape.heightfield;
	uint32_t i = 0, j = 0;
	while (i + 2 < f->nx && x > sx(cd, i + 1)) ++i;
	while (j + 2 < f->nz && z > sz(cd, j + 1)) ++j;
	const double u = (x - sx(cd, i)) / (sx(cd, i + 1) - sx(cd, i)), w = (z - sz(cd, j)) / (sz(cd, j + 1) - sz(cd, j));
	const double h00 = sh(cd, i, j), h10 = sh(cd, i + 1, j), h01 = sh(cd, i, j + 1), h11 = sh(cd, i + 1, j + 1);
	return w <= u ? h00 + (h10 - h00) * u + (h11 - h10) * w : h00 + (h11 - h01) * u + (h01 - h00) * w;
}

static double lx_of(const pbd_collider_def* cd) { return sx(cd, cd->shape.heightfield.nx - 1); }
static double lz_of(const pbd_collider_def* cd) { return sz(cd, cd->shape.heightfield.nz - 1); }

static bool ref_inside(const pbd_collider_def* cd, tp_dvec3 p) {
	return p.x >= 0 && p.x <= lx_of(cd) && p.z >= 0 && p.z <= lz_of(cd) && p.y < surface_at(cd, p.x, p.z);
}

/* Squared distance from p to the box of cell (i, j). */
static double cell_box_d2(const pbd_collider_def* cd, tp_dvec3 p, uint32_t i, uint32_t j) {
	const double lo = fmin(fmin(sh(cd, i, j), sh(cd, i + 1, j)), fmin(sh(cd, i, j + 1), sh(cd, i + 1, j + 1)));
	const double hi = fmax(fmax(sh(cd, i, j), sh(cd, i + 1, j)), fmax(sh(cd, i, j + 1), sh(cd, i + 1, j + 1)));
	const double dx = fmax(fmax(sx(cd, i) - p.x, p.x - sx(cd, i + 1)), 0);
	const double dy = fmax(fmax(lo - p.y, p.y - hi), 0);
	const double dz = fmax(fmax(sz(cd, j) - p.z, p.z - sz(cd, j + 1)), 0);
	return dx * dx + dy * dy + dz * dz;
}

/* The nearest boundary point q and its squared distance: every triangle (cells no nearer than
 * the best so far skipped by their boxes) and the walls. */
static double ref_nearest(const pbd_collider_def* cd, tp_dvec3 p, tp_dvec3* q) {
	const pbd_heightfield* f = &cd->shape.heightfield;
	double best = (double)INFINITY;
	for (int k = 0; k < 4; ++k) {
		const bool along_z = k < 2, far_side = (k & 1) != 0;
		const double len = along_z ? lz_of(cd) : lx_of(cd), c = along_z ? p.z : p.x, cc = fmin(fmax(c, 0), len);
		const uint32_t fixed = far_side ? (along_z ? f->nx - 1 : f->nz - 1) : 0;
		if (!(p.y <= border(cd, along_z, fixed, cc))) continue;
		const double plane = far_side ? (along_z ? lx_of(cd) : lz_of(cd)) : 0;
		const tp_dvec3 w = along_z ? dv(plane, p.y, cc) : dv(cc, p.y, plane);
		const double d2 = ddot(dsub(p, w), dsub(p, w));
		if (d2 < best) {
			best = d2;
			*q = w;
		}
	}
	for (uint32_t j = 0; j + 1 < f->nz; ++j)
		for (uint32_t i = 0; i + 1 < f->nx; ++i) {
			if (cell_box_d2(cd, p, i, j) >= best) continue;
			const tp_dvec3 v00 = vtx(cd, i, j), v10 = vtx(cd, i + 1, j), v01 = vtx(cd, i, j + 1),
			               v11 = vtx(cd, i + 1, j + 1);
			const tp_dvec3 c0 = closest_on_triangle(p, v00, v11, v10), c1 = closest_on_triangle(p, v00, v01, v11);
			const double d0 = ddot(dsub(p, c0), dsub(p, c0)), d1 = ddot(dsub(p, c1), dsub(p, c1));
			if (d0 < best) {
				best = d0;
				*q = c0;
			}
			if (d1 < best) {
				best = d1;
				*q = c1;
			}
		}
	return best;
}

/* Signed distance and outward normal of the reference. */
static double ref_distance(const pbd_collider_def* cd, tp_dvec3 p, tp_dvec3* n) {
	tp_dvec3 q = p;
	const double d = sqrt(ref_nearest(cd, p, &q));
	const bool inside = ref_inside(cd, p);
	if (n) *n = d > 0 ? dscale(dsub(p, q), inside ? -1 / d : 1 / d) : dv(0, 1, 0);
	return inside ? -d : d;
}

/* True when p lies within r of the solid (or in it); quicker than the distance. */
static bool ref_within(const pbd_collider_def* cd, tp_dvec3 p, double r) {
	const pbd_heightfield* f = &cd->shape.heightfield;
	/* Everything within r of the solid lies over the footprint grown by r, below the top + r. */
	double top = -(double)INFINITY;
	for (uint32_t k = 0; k < f->nx * f->nz; ++k) top = fmax(top, (double)f->heights[k]);
	if (p.x < -r || p.z < -r || p.x > lx_of(cd) + r || p.z > lz_of(cd) + r || p.y > top + r) return false;
	if (ref_inside(cd, p)) return true;
	const double rr = r * r;
	for (int k = 0; k < 4; ++k) {
		const bool along_z = k < 2, far_side = (k & 1) != 0;
		const double len = along_z ? lz_of(cd) : lx_of(cd), c = along_z ? p.z : p.x, cc = fmin(fmax(c, 0), len);
		const uint32_t fixed = far_side ? (along_z ? f->nx - 1 : f->nz - 1) : 0;
		const double plane = far_side ? (along_z ? lx_of(cd) : lz_of(cd)) : 0;
		const double across = (along_z ? p.x : p.z) - plane;
		if (across * across + (c - cc) * (c - cc) <= rr && p.y <= border(cd, along_z, fixed, cc)) return true;
	}
	/* Only the cells whose xz rectangle comes within r of p. */
	uint32_t i0 = 0, i1 = f->nx - 2, j0 = 0, j1 = f->nz - 2;
	while (i0 < i1 && sx(cd, i0 + 1) < p.x - r) ++i0;
	while (i1 > i0 && sx(cd, i1) > p.x + r) --i1;
	while (j0 < j1 && sz(cd, j0 + 1) < p.z - r) ++j0;
	while (j1 > j0 && sz(cd, j1) > p.z + r) --j1;
	for (uint32_t j = j0; j <= j1; ++j)
		for (uint32_t i = i0; i <= i1; ++i) {
			if (cell_box_d2(cd, p, i, j) > rr) continue;
			const tp_dvec3 v00 = vtx(cd, i, j), v10 = vtx(cd, i + 1, j), v01 = vtx(cd, i, j + 1),
			               v11 = vtx(cd, i + 1, j + 1);
			const tp_dvec3 c0 = closest_on_triangle(p, v00, v11, v10), c1 = closest_on_triangle(p, v00, v01, v11);
			if (ddot(dsub(p, c0), dsub(p, c0)) <= rr || ddot(dsub(p, c1), dsub(p, c1)) <= rr) return true;
		}
	return false;
}

/* The reference's normal is stable at p: the same within 1e-2 a small step away in each of six
 * directions (p is off the medial set, where the nearest point jumps). */
static bool normal_stable(const pbd_collider_def* cd, tp_dvec3 p, tp_dvec3 n, double step) {
	for (int k = 0; k < 6; ++k) {
		const double s = (k & 1) ? -step : step;
		const tp_dvec3 o = dadd(p, k < 2 ? dv(s, 0, 0) : (k < 4 ? dv(0, s, 0) : dv(0, 0, s)));
		tp_dvec3 m;
		ref_distance(cd, o, &m);
		if (dlen(dsub(m, n)) > 1e-2) return false;
	}
	return true;
}

static double lib_distance(const pbd_collider_def* cd, tp_dvec3 p, pbd_vec3* n) {
	return (double)ops->distance(cd, v3_of(p), n);
}

static void check_unit(const pbd_collider_def* cd, pbd_vec3 p) {
	pbd_vec3 n = pbd_v3(0, 0, 0);
	const pbd_real d = ops->distance(cd, p, &n);
	if (!pbd_is_finite(d) || !pbd_v3_is_finite(n) || fabs(tp_len(n) - 1) > UNIT_TOL || (double)n.y < -UNIT_TOL)
		fail_msg("at (%g, %g, %g): distance %g, normal (%g, %g, %g), |normal| %.17g", (double)p.x, (double)p.y,
		         (double)p.z, (double)d, (double)n.x, (double)n.y, (double)n.z, tp_len(n));
}

/* The library's distance at p is `want` and its normal (nx, ny, nz). */
static void check_distance(const pbd_collider_def* cd, tp_dvec3 p, double want, tp_dvec3 wn, double tol) {
	pbd_vec3 n = pbd_v3(0, 0, 0);
	const double d = lib_distance(cd, p, &n);
	if (fabs(d - want) > tol || fabs((double)n.x - wn.x) > tol || fabs((double)n.y - wn.y) > tol ||
	    fabs((double)n.z - wn.z) > tol)
		fail_msg("at (%.9g, %.9g, %.9g): distance %.9g normal (%.9g, %.9g, %.9g), want %.9g (%.9g, %.9g, %.9g)", p.x,
		         p.y, p.z, d, (double)n.x, (double)n.y, (double)n.z, want, wn.x, wn.y, wn.z);
}

/* ---- distance ----------------------------------------------------------------------------- */

static void test_flat(void** state) {
	(void)state;
	const double k[1] = {0.3};
	field f = field_make(9, 7, 0.25, 0.5, h_flat, k);
	const pbd_collider_def* cd = &f.def;
	uint64_t seed = 1;
	double worst = 0;
	for (int n = 0; n < 4000; ++n) {
		/* Above: anywhere over the footprint (the plane's distance); below: shallower than the
		 * nearest wall. */
		const double x = tp_rand_range(&seed, 0, 2), z = tp_rand_range(&seed, 0, 3);
		const double y = tp_rand_range(&seed, -1, 3);
		const double wall = fmin(fmin(x, 2 - x), fmin(z, 3 - z));
		if (y < 0.3 && 0.3 - y >= wall) continue;
		pbd_vec3 nn;
		const double d = lib_distance(cd, dv(x, y, z), &nn);
		worst = fmax(worst, fabs(d - (y - 0.3)));
		check_distance(cd, dv(x, y, z), y - 0.3, dv(0, 1, 0), DIST_TOL);
	}
	printf("flat: max |distance - plane's| %.3g\n", worst);
	/* Beside the footprint: a wall below the border height, the border edge above it. */
	check_distance(cd, dv(-0.5, 0, 1), 0.5, dv(-1, 0, 0), DIST_TOL);
	check_distance(cd, dv(2.25, -3, 1), 0.25, dv(1, 0, 0), DIST_TOL);
	check_distance(cd, dv(1, 0.1, -0.2), 0.2, dv(0, 0, -1), DIST_TOL);
	check_distance(cd, dv(1, -1, 3.5), 0.5, dv(0, 0, 1), DIST_TOL);
	check_distance(cd, dv(-0.3, 0.7, 1), 0.5, dv(-0.6, 0.8, 0), DIST_TOL);
	check_distance(cd, dv(-0.3, -1, -0.4), 0.5, dv(-0.6, 0, -0.8), DIST_TOL); /* the corner line */
	check_distance(cd, dv(-0.3, 0.3, -0.4), 0.5, dv(-0.6, 0, -0.8), DIST_TOL);
	field_free(&f);
}

/* Heights c + gx x + gz z: the plane's exact distance, above and below, where the nearest point
 * of the plane lies in the footprint away from its border and (below) no wall is nearer. */
static void test_tilted(void** state) {
	(void)state;
	const double k[3] = {0.2, 0.35, -0.6};
	field f = field_make(11, 13, 0.3, 0.25, h_plane, k);
	const pbd_collider_def* cd = &f.def;
	const double len = sqrt(1 + k[1] * k[1] + k[2] * k[2]);
	const tp_dvec3 n = dv(-k[1] / len, 1 / len, -k[2] / len);
	const double lx = lx_of(cd), lz = lz_of(cd);
	uint64_t seed = 2;
	double worst = 0, worst_n = 0;
	int above = 0, below = 0;
	for (int m = 0; m < 20000 && (above < 3000 || below < 3000); ++m) {
		const tp_dvec3 p = rand_box(&seed, 0, lx, -2, 2, 0, lz);
		const double d = (p.y - (k[0] + k[1] * p.x + k[2] * p.z)) / len;
		const tp_dvec3 q = dsub(p, dscale(n, d));
		const double border = fmin(fmin(q.x, lx - q.x), fmin(q.z, lz - q.z));
		if (border < 0.05) continue;
		if (d < 0 && -d >= fmin(fmin(p.x, lx - p.x), fmin(p.z, lz - p.z)) - 0.01) continue;
		pbd_vec3 got;
		const double dd = lib_distance(cd, p, &got);
		worst = fmax(worst, fabs(dd - d));
		worst_n = fmax(worst_n, dlen(dsub(tp_d(got), n)));
		check_distance(cd, p, d, n, DIST_TOL);
		if (d > 0)
			++above;
		else
			++below;
	}
	printf("tilted plane: %d above, %d below; max |distance - plane's| %.3g, max |normal - plane's| %.3g\n", above,
	       below, worst, worst_n);
	assert_true(above >= 3000 && below >= 1000);
	field_free(&f);
}

/* The library against the reference at random points of a box around the field: the signed
 * distance everywhere, the normal where the reference's is stable. */
static void check_vs_reference(const pbd_collider_def* cd, uint64_t seed, int count, double tol, bool normals,
                               const char* what) {
	pbd_vec3 lo, hi;
	assert_true(ops->bounds(cd, &lo, &hi));
	const double pad = 0.5;
	double worst = 0, worst_n = 0, worst_above = 0;
	int compared_n = 0, n_above = 0, n_below = 0, n_outside = 0;
	for (int m = 0; m < count; ++m) {
		const tp_dvec3 p = rand_box(&seed, (double)lo.x - pad, (double)hi.x + pad, (double)lo.y - pad,
		                            (double)hi.y + pad, (double)lo.z - pad, (double)hi.z + pad);
		tp_dvec3 rn;
		const double rd = ref_distance(cd, p, &rn);
		pbd_vec3 n;
		const double d = lib_distance(cd, p, &n);
		const double err = fabs(d - rd);
		if (err > tol) fail_msg("%s at (%.9g, %.9g, %.9g): distance %.9g, reference %.9g", what, p.x, p.y, p.z, d, rd);
		worst = fmax(worst, err);
		const bool outside = p.x < 0 || p.z < 0 || p.x > lx_of(cd) || p.z > lz_of(cd);
		n_outside += outside;
		if (!outside && rd > 0) {
			++n_above;
			worst_above = fmax(worst_above, err);
		}
		n_below += rd < 0;
		assert_true(fabs(tp_len(n) - 1) <= UNIT_TOL);
		if (normals && fabs(rd) > 1e-3 && normal_stable(cd, p, rn, 1e-4)) {
			const double e = dlen(dsub(tp_d(n), rn));
			if (getenv("HF_VERBOSE") && e > 2e-5)
				printf("  normal off by %.3g at (%.9g, %.9g, %.9g): distance %.9g reference %.9g, normal (%.9g, %.9g, "
				       "%.9g) reference (%.9g, %.9g, %.9g)\n",
				       e, p.x, p.y, p.z, d, rd, (double)n.x, (double)n.y, (double)n.z, rn.x, rn.y, rn.z);
			worst_n = fmax(worst_n, e);
			if (e > TEST_TOL(1e-9, 2e-3))
				fail_msg("%s at (%.9g, %.9g, %.9g): normal (%.9g, %.9g, %.9g), reference (%.9g, %.9g, %.9g)", what, p.x,
				         p.y, p.z, (double)n.x, (double)n.y, (double)n.z, rn.x, rn.y, rn.z);
			++compared_n;
		}
	}
	printf("%s: %d points (%d above the surface, %d inside, %d beside the footprint): max |distance - reference| "
	       "%.3g (above %.3g), max |normal - reference| %.3g at %d points\n",
	       what, count, n_above, n_below, n_outside, worst, worst_above, worst_n, compared_n);
	assert_true(n_above > count / 40 && n_below > count / 40 && (!normals || compared_n > count / 2));
}

static void test_bumpy_vs_reference(void** state) {
	(void)state;
	const double bumpy[2] = {1, 0.15}, steep[2] = {3, 0.5};
	field f = field_make(13, 11, 0.3, 0.25, h_bumpy, bumpy);
	check_vs_reference(&f.def, 3, 6000, DIST_TOL, true, "bumpy");
	field_free(&f);
	field g = field_make(9, 12, 0.2, 0.15, h_bumpy, steep); /* slopes up to about 10 */
	check_vs_reference(&g.def, 4, 6000, TEST_TOL(1e-12, 1e-5), true, "steep");
	field_free(&g);
	field c = field_make(2, 2, 0.7, 0.4, h_bumpy, steep); /* one cell: the pyramid is the cell */
	check_vs_reference(&c.def, 5, 3000, DIST_TOL, true, "one cell");
	field_free(&c);
	field s = field_make(40, 2, 0.05, 0.3, h_bumpy, bumpy); /* a strip: levels along x only */
	check_vs_reference(&s.def, 6, 3000, DIST_TOL, true, "strip");
	field_free(&s);
}

/* A field of 257 x 193 samples: eight levels of the pyramid, and blocks of every size pruned. */
static void test_large_field(void** state) {
	(void)state;
	const double k[2] = {1, 0.05};
	field f = field_make(257, 193, 0.0625, 0.078125, h_bumpy, k);
	check_vs_reference(&f.def, 7, 400, TEST_TOL(1e-12, 1e-5), false, "large");
	/* Far above it: a long way through the pyramid for a nearest point far to the side. */
	uint64_t seed = 8;
	double worst = 0;
	for (int m = 0; m < 100; ++m) {
		const tp_dvec3 p = rand_box(&seed, -20, 36, 5, 30, -20, 35);
		pbd_vec3 n;
		worst = fmax(worst, fabs(lib_distance(&f.def, p, &n) - ref_distance(&f.def, p, NULL)));
	}
	printf("large, far points: max |distance - reference| %.3g\n", worst);
	assert_true(worst <= TEST_TOL(1e-12, 2e-5));
	field_free(&f);
}

/* |normal| = 1, pointing up or sideways, and a finite distance everywhere: random points, the
 * samples, edges and cell centres and points a hair off them, and points at the ends of the range. */
static void test_normal_is_unit(void** state) {
	(void)state;
	const double k[2] = {2, 0.3};
	field f = field_make(7, 6, 0.4, 0.3, h_bumpy, k);
	const pbd_collider_def* cd = &f.def;
	uint64_t seed = 9;
	for (int m = 0; m < 20000; ++m) check_unit(cd, v3_of(rand_box(&seed, -1, 3.4, -3, 3, -1, 2.5)));
	const pbd_real tiny = (pbd_real)1e-30, big = PBD_REAL_MAX;
	for (uint32_t j = 0; j < 6; ++j)
		for (uint32_t i = 0; i < 7; ++i) {
			const pbd_vec3 v = v3_of(vtx(cd, i, j));
			const pbd_vec3 offs[] = {pbd_v3(0, 0, 0),
			                         pbd_v3(0, tiny, 0),
			                         pbd_v3(0, -tiny, 0),
			                         pbd_v3(tiny, 0, -tiny),
			                         pbd_v3(0, R(1e-6), 0),
			                         pbd_v3(0, -R(1e-6), 0),
			                         pbd_v3(R(0.2), 0, 0),
			                         pbd_v3(0, 0, R(0.15)),
			                         pbd_v3(R(0.2), 0, R(0.15)),
			                         pbd_v3(R(0.2), -2, R(0.15)),
			                         pbd_v3(R(0.1), 0, R(0.2)),
			                         pbd_v3(R(0.3), 0, R(0.1))};
			for (size_t o = 0; o < sizeof offs / sizeof offs[0]; ++o) check_unit(cd, pbd_v3_add(v, offs[o]));
		}
	const pbd_vec3 pts[] = {
	    pbd_v3(big, big, big),
	    pbd_v3(-big, big, -big),
	    pbd_v3(big, 0, 0),
	    pbd_v3(0, -big, 0),
	    pbd_v3(1, -big, 1),
	    pbd_v3(1, big, 1),
	    pbd_v3(-big, -big, 1),
	    pbd_v3(big, tiny, 0),
	    pbd_v3(tiny, big, -big),
	    pbd_v3(0, 0, 0),
	    pbd_v3(tiny, 0, tiny),
	    pbd_v3(-tiny, -tiny, -tiny),
	    pbd_v3(R(2.4), -1, R(1.5)),
	    pbd_v3(R(1.2), -1, R(0.75)),
	    pbd_v3(R(1e20), -R(1e20), 1),
	    pbd_v3(-R(1e10), R(1e10), R(1e10)),
	};
	for (size_t m = 0; m < sizeof pts / sizeof pts[0]; ++m) check_unit(cd, pts[m]);
	/* Deep inside, the nearest way out is the nearest wall; far away the distance saturates. */
	pbd_vec3 n;
	assert_near(ops->distance(cd, pbd_v3(R(0.6), -big / 2, R(0.75)), &n), -0.6, DIST_TOL);
	assert_near(n.x, -1, 0);
	assert_true(ops->distance(cd, pbd_v3(big, big, big), &n) == PBD_REAL_MAX);
	assert_near(ops->distance(cd, pbd_v3(-big, 1, 1), &n) / big, 1, 1e-6);
	assert_near(n.x, -1, 1e-6);
	field_free(&f);
}

/* The normal is the gradient of the distance: central differences above the surface, where the
 * reference's normal is stable over more than the step. */
static void test_normal_is_gradient(void** state) {
	(void)state;
	const double k[2] = {1, 0.15};
	field f = field_make(13, 11, 0.3, 0.25, h_bumpy, k);
	const pbd_collider_def* cd = &f.def;
	const double step = TEST_TOL(1e-5, 1e-3);
	uint64_t seed = 10;
	double worst = 0;
	int used = 0;
	for (int m = 0; m < 6000; ++m) {
		const tp_dvec3 p = rand_box(&seed, 0.1, 3.5, -0.5, 1.5, 0.1, 2.4);
		tp_dvec3 rn;
		const double rd = ref_distance(cd, p, &rn);
		if (!(rd > 0.02) || !normal_stable(cd, p, rn, 10 * step)) continue;
		pbd_vec3 n, dummy;
		lib_distance(cd, p, &n);
		double g[3];
		for (int a = 0; a < 3; ++a) {
			const tp_dvec3 e = a == 0 ? dv(step, 0, 0) : (a == 1 ? dv(0, step, 0) : dv(0, 0, step));
			g[a] = (lib_distance(cd, dadd(p, e), &dummy) - lib_distance(cd, dsub(p, e), &dummy)) / (2 * step);
		}
		const double err = fmax(fabs(g[0] - (double)n.x), fmax(fabs(g[1] - (double)n.y), fabs(g[2] - (double)n.z)));
		worst = fmax(worst, err);
		++used;
	}
	printf("normal vs central differences at %d points above the surface, max error %.3g\n", used, worst);
	assert_true(used > 1500);
	assert_true(worst < TEST_TOL(1e-6, 2e-2));
	field_free(&f);
}

/* ---- sweep -------------------------------------------------------------------------------- */

typedef struct sweep_stats {
	int segments, hits, sampled_hits;
	double surface_err;  /* max | reference distance of the point at t - radius | */
	double depth_before; /* max over samples before t (all on a miss) of how far within the radius, 0 if none */
	double normal_err;   /* max | normal - reference normal at the point at t |, where stable */
	double approach;     /* max dot(normal, unit direction): <= 0 up to rounding */
} sweep_stats;

static tp_dvec3 dlerp(pbd_vec3 a, pbd_vec3 b, double t) {
	return dv((double)a.x + t * ((double)b.x - (double)a.x), (double)a.y + t * ((double)b.y - (double)a.y),
	          (double)a.z + t * ((double)b.z - (double)a.z));
}

/* One sweep against a sampling of 2000 steps of the segment. */
static void sweep_vs_samples(const pbd_collider_def* cd, pbd_vec3 a, pbd_vec3 b, pbd_real radius, sweep_stats* st) {
	const double r = (double)radius;
	pbd_real t = -1;
	pbd_vec3 n = pbd_v3(0, 0, 0);
	const bool hit = ops->sweep(cd, a, b, radius, &t, &n);
	const int samples = 2000;
	bool sampled = false;
	for (int i = 0; i <= samples; ++i) {
		const double ti = (double)i / samples;
		if (hit && ti >= (double)t) break;
		const tp_dvec3 p = dlerp(a, b, ti);
		if (!ref_within(cd, p, r)) continue;
		sampled = true;
		st->depth_before = fmax(st->depth_before, r - ref_distance(cd, p, NULL)); /* how far within */
	}
	st->segments++;
	if (sampled) st->sampled_hits++;
	if (!hit) return;
	st->hits++;
	assert_true(t >= 0 && t <= 1);
	tp_dvec3 rn;
	const tp_dvec3 p = dlerp(a, b, (double)t);
	const double dist = ref_distance(cd, p, &rn);
	st->surface_err = fmax(st->surface_err, fabs(dist - r));
	if (getenv("HF_VERBOSE") && fabs(dist - r) > 1e-5)
		printf("  bad hit: (%.9g, %.9g, %.9g) -> (%.9g, %.9g, %.9g) r %.9g: t %.9g n (%g %g %g), distance at t %.9g\n",
		       (double)a.x, (double)a.y, (double)a.z, (double)b.x, (double)b.y, (double)b.z, r, (double)t, (double)n.x,
		       (double)n.y, (double)n.z, dist);
	if (fabs(tp_len(n) - 1) > UNIT_TOL) fail_msg("|normal| %.17g", tp_len(n));
	if (normal_stable(cd, p, rn, 1e-4)) st->normal_err = fmax(st->normal_err, dlen(dsub(tp_d(n), rn)));
	const tp_dvec3 dir = dv((double)b.x - (double)a.x, (double)b.y - (double)a.y, (double)b.z - (double)a.z);
	st->approach = fmax(st->approach, ddot(tp_d(n), dir) / dlen(dir));
}

/* Random segments around the field: a third anywhere, a third aimed at it, a third grazing the
 * grown surface (along a tangent at the nearest point, shifted in or out by up to 1e-3, where a
 * sweep that rounds the wrong way would tunnel); a quarter of the radii 0. */
static sweep_stats random_sweeps(const pbd_collider_def* cd, uint64_t seed, int count, const char* what, double tol) {
	sweep_stats st;
	memset(&st, 0, sizeof st);
	st.approach = -1;
	pbd_vec3 lo, hi;
	assert_true(ops->bounds(cd, &lo, &hi));
	const double pad = 0.6;
	const tp_dvec3 blo = dv((double)lo.x - pad, (double)lo.y - pad, (double)lo.z - pad);
	const tp_dvec3 bhi = dv((double)hi.x + pad, (double)hi.y + pad, (double)hi.z + pad);
	while (st.segments < count) {
		const pbd_real radius = tp_rand(&seed) < 0.25 ? 0 : (pbd_real)tp_rand_range(&seed, 0, 0.2);
		const double ax = tp_rand_range(&seed, blo.x, bhi.x), ay = tp_rand_range(&seed, blo.y, bhi.y),
		             az = tp_rand_range(&seed, blo.z, bhi.z);
		pbd_vec3 a = v3_of(dv(ax, ay, az)), b;
		const double mode = tp_rand(&seed);
		if (mode < 1.0 / 3) {
			const double bx = tp_rand_range(&seed, blo.x, bhi.x), by = tp_rand_range(&seed, blo.y, bhi.y),
			             bz = tp_rand_range(&seed, blo.z, bhi.z);
			b = v3_of(dv(bx, by, bz));
		} else if (mode < 2.0 / 3) {
			tp_dvec3 n0;
			const tp_dvec3 ad = tp_d(a);
			const double d0 = ref_distance(cd, ad, &n0) - (double)radius;
			if (!(d0 > 0)) continue;
			const tp_dvec3 q = dsub(ad, dscale(n0, d0));
			const tp_dvec3 w = rand_box(&seed, -1, 1, -1, 1, -1, 1);
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
			const tp_dvec3 aim =
			    rand_box(&seed, (double)lo.x, (double)hi.x, (double)lo.y, (double)hi.y, (double)lo.z, (double)hi.z);
			const double kk = tp_rand_range(&seed, 0.2, 2);
			b = v3_of(dadd(tp_d(a), dscale(dsub(aim, tp_d(a)), kk)));
		}
		const double da = ref_distance(cd, tp_d(a), NULL);
		pbd_real t;
		pbd_vec3 n;
		if (da < (double)radius - tol) {
			assert_false(ops->sweep(cd, a, b, radius, &t, &n)); /* starts within the radius */
			continue;
		}
		if (da <= (double)radius + tol) continue; /* on the grown surface: either answer */
		sweep_vs_samples(cd, a, b, radius, &st);
	}
	printf("%s: %d segments, %d hits, %d with a sample within the radius before t or on a miss; max |distance at t - "
	       "radius| "
	       "%.3g, max depth of a sample before t %.3g, max normal error %.3g, max normal . direction %.3g\n",
	       what, st.segments, st.hits, st.sampled_hits, st.surface_err, st.depth_before, st.normal_err, st.approach);
	return st;
}

static void check_random_sweeps(const pbd_collider_def* cd, uint64_t seed, int count, const char* what, double tol) {
	const sweep_stats st = random_sweeps(cd, seed, count, what, tol);
	assert_true(st.hits > st.segments / 5);
	assert_true(st.surface_err <= tol);
	assert_true(st.depth_before <= tol); /* no tunnelling, never late */
	assert_true(st.normal_err <= TEST_TOL(1e-9, 2e-3));
	assert_true(st.approach <= TEST_TOL(1e-12, 1e-6));
}

static void test_sweep_random(void** state) {
	(void)state;
	const double bumpy[2] = {1, 0.15}, steep[2] = {3, 0.5};
	field f = field_make(9, 8, 0.3, 0.25, h_bumpy, bumpy);
	check_random_sweeps(&f.def, 21, 1500, "sweep bumpy", DIST_TOL);
	field_free(&f);
	field g = field_make(8, 7, 0.2, 0.15, h_bumpy, steep);
	check_random_sweeps(&g.def, 22, 1500, "sweep steep", TEST_TOL(1e-12, 1e-5));
	field_free(&g);
	const double k[1] = {0.1};
	field h = field_make(5, 4, 0.5, 0.5, h_flat, k);
	check_random_sweeps(&h.def, 23, 1000, "sweep flat", DIST_TOL);
	field_free(&h);
}

/* A sweep that must hit at want_t with the normal wn. */
static void check_hit(const pbd_collider_def* cd, tp_dvec3 a, tp_dvec3 b, double radius, double want_t, tp_dvec3 wn,
                      double tol) {
	pbd_real t = -1;
	pbd_vec3 n = pbd_v3(0, 0, 0);
	if (!ops->sweep(cd, v3_of(a), v3_of(b), (pbd_real)radius, &t, &n))
		fail_msg("(%g, %g, %g) -> (%g, %g, %g) radius %g missed", a.x, a.y, a.z, b.x, b.y, b.z, radius);
	if (fabs((double)t - want_t) > tol || dlen(dsub(tp_d(n), wn)) > tol)
		fail_msg("(%g, %g, %g) -> (%g, %g, %g) radius %g: t %.9g normal (%.9g, %.9g, %.9g), want %.9g (%g, %g, %g)",
		         a.x, a.y, a.z, b.x, b.y, b.z, radius, (double)t, (double)n.x, (double)n.y, (double)n.z, want_t, wn.x,
		         wn.y, wn.z);
}

static void check_miss(const pbd_collider_def* cd, tp_dvec3 a, tp_dvec3 b, double radius) {
	pbd_real t;
	pbd_vec3 n;
	if (ops->sweep(cd, v3_of(a), v3_of(b), (pbd_real)radius, &t, &n))
		fail_msg("(%g, %g, %g) -> (%g, %g, %g) radius %g hit at %g", a.x, a.y, a.z, b.x, b.y, b.z, radius, (double)t);
}

static void test_sweep_cases(void** state) {
	(void)state;
	const double k[1] = {0.5};
	field f = field_make(5, 4, 0.5, 0.5, h_flat, k); /* [0, 2] x [0, 1.5], height 0.5 */
	const pbd_collider_def* cd = &f.def;
	const double r = 0.1, tol = TEST_TOL(1e-12, 2e-6);
	const tp_dvec3 up = dv(0, 1, 0);
	/* Straight down, onto a sample, an edge, a diagonal, a cell's middle; radius 0 too. */
	check_hit(cd, dv(1, 3, 0.5), dv(1, -3, 0.5), r, (3 - 0.6) / 6, up, tol);
	check_hit(cd, dv(0.75, 3, 0.5), dv(0.75, -3, 0.5), r, (3 - 0.6) / 6, up, tol);
	check_hit(cd, dv(0.6, 3, 0.6), dv(0.6, -3, 0.6), r, (3 - 0.6) / 6, up, tol);
	check_hit(cd, dv(0.7, 3, 0.9), dv(0.7, -3, 0.9), 0, (3 - 0.5) / 6, up, tol);
	check_hit(cd, dv(0.5, 3, 0.5), dv(0.5, -3, 0.5), 0, (3 - 0.5) / 6, up, tol);
	/* Slanted, far across the field: the first cell under the path, not the nearest to a. */
	check_hit(cd, dv(-1, 2.6, 0.3), dv(3, -1.4, 0.3), r, 2.0 / 4, up, tol);
	/* Starting inside, within the radius, zero length; ending short; passing above; leaving. */
	check_miss(cd, dv(1, 0.2, 0.5), dv(1, 3, 0.5), r);
	check_miss(cd, dv(1, 0.55, 0.5), dv(1, -3, 0.5), r);
	check_miss(cd, dv(1, 1, 0.5), dv(1, 1, 0.5), r);
	check_miss(cd, dv(1, 3, 0.5), dv(1, 0.61, 0.5), r);
	check_miss(cd, dv(-1, 0.61, 0.5), dv(3, 0.61, 0.5), r);
	check_miss(cd, dv(1, 0.7, 0.5), dv(1, 3, 0.5), r);
	/* Beside the field, below the border: the walls, each from outside; past the end of a wall,
	 * the corner line; above the border height, the border edge's capsule. */
	check_hit(cd, dv(-2, 0, 0.7), dv(2, 0, 0.7), r, (2 - r) / 4, dv(-1, 0, 0), tol);
	check_hit(cd, dv(4, -5, 0.7), dv(0, -5, 0.7), r, (2 - r) / 4, dv(1, 0, 0), tol);
	check_hit(cd, dv(1, -1, -2), dv(1, -1, 2), r, (2 - r) / 4, dv(0, 0, -1), tol);
	check_hit(cd, dv(1, 0.2, 3.5), dv(1, 0.2, -0.5), r, (2 - r) / 4, dv(0, 0, 1), tol);
	check_hit(cd, dv(-2, -1, -0.05), dv(2, -1, -0.05), r, (2 - sqrt(r * r - 0.0025)) / 4,
	          dv(-sqrt(r * r - 0.0025) / r, 0, -0.5), TEST_TOL(1e-12, 4e-6));
	check_hit(cd, dv(-2, 0.55, 0.7), dv(2, 0.55, 0.7), r, (2 - sqrt(r * r - 0.0025)) / 4,
	          dv(-sqrt(r * r - 0.0025) / r, 0.5, 0), TEST_TOL(1e-12, 4e-6));
	check_miss(cd, dv(-2, -1, -0.11), dv(2, -1, -0.11), r);
	check_miss(cd, dv(-2, 0.61, 0.7), dv(-0.11, 0.61, 0.7), r);
	/* Outside the footprint going down past it, and below the field outside it: no touch. */
	check_miss(cd, dv(-0.2, 3, 0.7), dv(-0.2, -30, 0.7), r);
	check_miss(cd, dv(-1, -40, -1), dv(3, -40, -1), r);
	/* Into the top of a wall's corner from above: the corner's vertex ball. */
	check_hit(cd, dv(-0.05, 3, -0.05), dv(-0.05, -3, -0.05), r, (3 - 0.5 - sqrt(r * r - 0.005)) / 6,
	          dv(-0.05 / r, sqrt(r * r - 0.005) / r, -0.05 / r), TEST_TOL(1e-12, 4e-6));
	/* Far away: no overflow, no underflow to a miss. */
	pbd_real t;
	pbd_vec3 n;
	const pbd_real far = (pbd_real)1e6;
	assert_true(ops->sweep(cd, pbd_v3(far, 0, R(0.7)), pbd_v3(-far, 0, R(0.7)), (pbd_real)r, &t, &n));
	assert_near(1e6 - 2e6 * (double)t, 2.1, TEST_TOL(1e-9, 0.2));
	assert_near(n.x, 1, 1e-6);
	assert_true(ops->sweep(cd, pbd_v3(1, far, R(0.7)), pbd_v3(1, -far, R(0.7)), (pbd_real)r, &t, &n));
	assert_near(1e6 - 2e6 * (double)t, 0.6, TEST_TOL(1e-9, 0.2));
	assert_near(n.y, 1, 1e-6);
	const pbd_real big = PBD_REAL_MAX / 4;
	assert_true(ops->sweep(cd, pbd_v3(1, big, R(0.7)), pbd_v3(1, -big, R(0.7)), 0, &t, &n));
	assert_near(t, 0.5, 1e-6);
	assert_false(ops->sweep(cd, pbd_v3(big, big, big), pbd_v3(big, big, -big), (pbd_real)r, &t, &n));
	field_free(&f);
	/* The same field at 2^-50 and 2^50 of its size: the same answers in units of the field, from a
	 * million field sizes away too; and the small one swept from a metre away, where the points
	 * lie some 2^50 cell sizes outside every cell (no overflow on the way to a cell's units). */
	for (int e = -50; e <= 50; e += 100) {
		const double s = ldexp(1, e);
		const double ks[1] = {0.5 * s};
		field g = field_make(5, 4, 0.5 * s, 0.5 * s, h_flat, ks);
		const pbd_collider_def* cg = &g.def;
		assert_true(ops->sweep(cg, v3_of(dv(1e6 * s, 0.2 * s, 0.7 * s)), v3_of(dv(-1e6 * s, 0.2 * s, 0.7 * s)),
		                       R(r * s), &t, &n));
		assert_near(1e6 - 2e6 * (double)t, 2.1, TEST_TOL(1e-9, 0.2));
		assert_near(n.x, 1, 1e-6);
		check_hit(cg, dscale(dv(-2, -1, -0.05), s), dscale(dv(2, -1, -0.05), s), r * s, (2 - sqrt(r * r - 0.0025)) / 4,
		          dv(-sqrt(r * r - 0.0025) / r, 0, -0.5), TEST_TOL(1e-12, 4e-6));
		check_hit(cg, dscale(dv(1, 3, 0.5), s), dscale(dv(1, -3, 0.5), s), r * s, (3 - 0.6) / 6, up, tol);
		if (e < 0) {
			assert_true(
			    ops->sweep(cg, v3_of(dv(1, 0.2 * s, 0.7 * s)), v3_of(dv(-1, 0.2 * s, 0.7 * s)), R(r * s), &t, &n));
			assert_near(t, 0.5, 1e-6);
			assert_near(n.x, 1, 1e-6);
			check_unit(cg, v3_of(dv(1, 0.2 * s, 0.7 * s)));
		}
		field_free(&g);
	}
}

/* Particles at 100 m/s (and gravity) dropped on a bumpy field, every move swept: a hit stops the
 * particle at the contact, a hair off it, and removes the approach from its velocity; one that
 * starts a substep within the radius is first put back on it. None ever ends within the field. */
static void test_fast_drop(void** state) {
	(void)state;
	const double k[2] = {2, 0.2};
	field f = field_make(33, 33, 0.25, 0.25, h_bumpy, k); /* 8 m x 8 m, cells of 25 cm */
	const pbd_collider_def* cd = &f.def;
	const pbd_real r = (pbd_real)0.02, gap = (pbd_real)1e-4, h = (pbd_real)(1.0 / 240);
	uint64_t seed = 30;
	int contacts = 0, stuck = 0;
	double worst = 1e30;
	for (int p = 0; p < 150; ++p) {
		pbd_vec3 x = v3_of(rand_box(&seed, 1, 7, 3, 3, 1, 7));
		pbd_vec3 v = v3_of(rand_box(&seed, -30, 30, -100, -100, -30, 30));
		for (int step = 0; step < 120; ++step) {
			/* Back onto the grown surface (a few times: in a crease one push can bring it near
			 * the other side). */
			bool clear = false;
			for (int it = 0; it < 8 && !clear; ++it) {
				pbd_vec3 na;
				const pbd_real da = ops->distance(cd, x, &na);
				clear = da > r + gap / 2;
				if (clear) break;
				x = pbd_v3_add(x, pbd_v3_scale(na, r + gap - da));
				const pbd_real vn = pbd_v3_dot(v, na);
				if (vn < 0) v = pbd_v3_sub(v, pbd_v3_scale(na, vn));
			}
			if (!clear) {
				++stuck;
				continue;
			}
			v.y -= (pbd_real)9.81 * h;
			const pbd_vec3 b = pbd_v3_add(x, pbd_v3_scale(v, h));
			pbd_real t;
			pbd_vec3 n;
			if (ops->sweep(cd, x, b, r, &t, &n)) {
				++contacts;
				x = pbd_v3_add(pbd_v3_add(x, pbd_v3_scale(pbd_v3_sub(b, x), t)), pbd_v3_scale(n, gap));
				const pbd_real vn = pbd_v3_dot(v, n);
				if (vn < 0) v = pbd_v3_sub(v, pbd_v3_scale(n, vn));
			} else {
				x = b;
			}
			/* Off the field's sides the particle falls past it, alongside the walls. */
			const double d = ref_distance(cd, tp_d(x), NULL);
			worst = fmin(worst, d);
			if (!(d > (double)r - 2 * (double)gap))
				fail_msg("particle %d, step %d: at (%g, %g, %g), distance %g within the radius %g", p, step,
				         (double)x.x, (double)x.y, (double)x.z, d, (double)r);
		}
	}
	printf("100 m/s drops: %d contacts, %d substeps held in a crease, least distance from the field %.6g (radius %g)\n",
	       contacts, stuck, worst, (double)r);
	assert_true(contacts > 150);
	field_free(&f);
}

/* ---- validation, storage, bounds, triangles ----------------------------------------------- */

static void check_validate(pbd_world* w, char* msg, pbd_collider_def cd, pbd_status want, const char* field_name) {
	msg[0] = '\0';
	const pbd_status st = ops->validate(w, &cd);
	if (st != want) fail_msg("validate: status %d, want %d (%s)", (int)st, (int)want, msg);
	if (want == PBD_OK) {
		assert_string_equal(msg, "");
		return;
	}
	assert_int_equal(strncmp(msg, "pbd_collider_create: ", 21), 0);
	if (!strstr(msg, field_name)) fail_msg("message '%s' does not name '%s'", msg, field_name);
	assert_null(strchr(msg, '\n'));
}

static void test_validate(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = test_world_keep(msg);
	const pbd_real nan = (pbd_real)NAN, inf = (pbd_real)INFINITY, cap = PBD_SQRT(PBD_REAL_MAX) / 4;
	pbd_real h[12] = {0, R(0.1), R(0.2), R(0.3), R(0.4), R(0.5), R(0.6), R(0.7), R(0.8), R(0.9), 1, R(1.1)};
	check_validate(w, msg, hf_def(h, 4, 3, 0.5, 0.25), PBD_OK, "");
	check_validate(w, msg, hf_def(h, 2, 2, 0.5, 0.25), PBD_OK, "");
	check_validate(w, msg, hf_def(NULL, 4, 3, 0.5, 0.25), PBD_ERR_INVALID_ARGUMENT, "heights");
	check_validate(w, msg, hf_def(h, 1, 3, 0.5, 0.25), PBD_ERR_OUT_OF_RANGE, "nx");
	check_validate(w, msg, hf_def(h, 0, 3, 0.5, 0.25), PBD_ERR_OUT_OF_RANGE, "nx");
	check_validate(w, msg, hf_def(h, 4, 1, 0.5, 0.25), PBD_ERR_OUT_OF_RANGE, "nz");
	check_validate(w, msg, hf_def(h, 1u << 13, (1u << 13) + 1, 0.5, 0.25), PBD_ERR_OUT_OF_RANGE, "nx * nz");
	check_validate(w, msg, hf_def(h, 1u << 31, 1u << 31, 0.5, 0.25), PBD_ERR_OUT_OF_RANGE, "nx * nz");
	check_validate(w, msg, hf_def(h, 4, 3, 0, 0.25), PBD_ERR_OUT_OF_RANGE, "cell_x");
	check_validate(w, msg, hf_def(h, 4, 3, 0.5, -1), PBD_ERR_OUT_OF_RANGE, "cell_z");
	check_validate(w, msg, hf_def(h, 4, 3, -0.0, 0.25), PBD_ERR_OUT_OF_RANGE, "cell_x");
	check_validate(w, msg, hf_def(h, 4, 3, (double)nan, 0.25), PBD_ERR_NOT_FINITE, "cell_x");
	check_validate(w, msg, hf_def(h, 4, 3, 0.5, (double)inf), PBD_ERR_NOT_FINITE, "cell_z");
	check_validate(w, msg, hf_def(h, 4, 3, (double)PBD_REAL_MIN_NORMAL, 0.25), PBD_ERR_OUT_OF_RANGE, "cell_x");
	check_validate(w, msg, hf_def(h, 4, 3, 0.5, (double)(PBD_SQRT(PBD_REAL_MIN_NORMAL) * 2)), PBD_ERR_OUT_OF_RANGE,
	               "cell_z");
	check_validate(w, msg, hf_def(h, 4, 3, (double)(PBD_SQRT(PBD_REAL_MIN_NORMAL) * 8), 0.25), PBD_OK, "");
	check_validate(w, msg, hf_def(h, 4, 3, (double)(cap / 4), 0.25), PBD_OK, "");
	check_validate(w, msg, hf_def(h, 4, 3, (double)(cap / 2), 0.25), PBD_ERR_OUT_OF_RANGE, "cell_x");
	check_validate(w, msg, hf_def(h, 4, 3, 0.5, (double)cap), PBD_ERR_OUT_OF_RANGE, "cell_z");
	check_validate(w, msg, hf_def(h, 4, 3, (double)PBD_REAL_MAX, 0.25), PBD_ERR_OUT_OF_RANGE, "cell_x");
	h[5] = nan;
	check_validate(w, msg, hf_def(h, 4, 3, 0.5, 0.25), PBD_ERR_NOT_FINITE, "heights[5]");
	h[5] = -inf;
	check_validate(w, msg, hf_def(h, 4, 3, 0.5, 0.25), PBD_ERR_NOT_FINITE, "heights[5]");
	h[5] = cap * 2;
	check_validate(w, msg, hf_def(h, 4, 3, 0.5, 0.25), PBD_ERR_OUT_OF_RANGE, "heights[5]");
	h[5] = -cap;
	check_validate(w, msg, hf_def(h, 4, 3, 0.5, 0.25), PBD_OK, "");
	h[5] = R(0.5);
	pbd_collider_def cd = hf_def(h, 4, 3, 0.5, 0.25);
	cd.margin = cap * 2;
	check_validate(w, msg, cd, PBD_ERR_OUT_OF_RANGE, "margin");
	pbd_world_destroy(w);
}

/* A build from the caller's array and a build from a def that points into the first copy (a
 * snapshot reload) are the same bytes, and the two answer alike, bit for bit. */
static void test_build_determinism(void** state) {
	(void)state;
	const double k[2] = {1.5, 0.3};
	field f = field_make(37, 29, 0.2, 0.3, h_bumpy, k);
	const size_t size = ops->data_size(&f.def);
	assert_int_equal(size, f.size);
	pbd_collider_def copy = f.def;
	void* data = malloc(size);
	assert_non_null(data);
	memset(data, 0x5a, size);
	ops->build(&copy, data);
	assert_ptr_equal(copy.shape.heightfield.heights, data);
	assert_memory_equal(data, f.data, size);
	uint64_t seed = 40;
	for (int m = 0; m < 2000; ++m) {
		const pbd_vec3 a = v3_of(rand_box(&seed, -1, 8, -2, 2, -1, 9));
		const pbd_vec3 b = v3_of(rand_box(&seed, -1, 8, -2, 2, -1, 9));
		pbd_vec3 n1, n2;
		const pbd_real d1 = ops->distance(&f.def, a, &n1), d2 = ops->distance(&copy, a, &n2);
		assert_memory_equal(&d1, &d2, sizeof d1);
		assert_memory_equal(&n1, &n2, sizeof n1);
		pbd_real t1 = -1, t2 = -1;
		const bool h1 = ops->sweep(&f.def, a, b, (pbd_real)0.05, &t1, &n1);
		const bool h2 = ops->sweep(&copy, a, b, (pbd_real)0.05, &t2, &n2);
		assert_int_equal(h1, h2);
		if (h1) {
			assert_memory_equal(&t1, &t2, sizeof t1);
			assert_memory_equal(&n1, &n2, sizeof n1);
		}
	}
	free(data);
	field_free(&f);
}

static void test_bounds_and_triangles(void** state) {
	(void)state;
	const double k[2] = {1, 0.4};
	field f = field_make(6, 4, 0.5, 0.25, h_bumpy, k);
	const pbd_collider_def* cd = &f.def;
	pbd_vec3 lo, hi;
	assert_true(ops->bounds(cd, &lo, &hi));
	double hmin = 1e30, hmax = -1e30;
	for (uint32_t j = 0; j < 4; ++j)
		for (uint32_t i = 0; i < 6; ++i) {
			hmin = fmin(hmin, sh(cd, i, j));
			hmax = fmax(hmax, sh(cd, i, j));
		}
	assert_near(lo.x, 0, 0);
	assert_near(lo.z, 0, 0);
	assert_near(hi.x, 2.5, 0);
	assert_near(hi.z, 0.75, 0);
	assert_near(lo.y, hmin - 2.5, 1e-6); /* as deep again as the field is wide: the solid goes on below */
	assert_near(hi.y, hmax, 0);

	uint32_t nv = 0, nt = 0;
	ops->triangles(cd, NULL, 0, NULL, 0, &nv, &nt);
	assert_int_equal(nv, 24);
	assert_int_equal(nt, 2 * 5 * 3);
	pbd_vec3 verts[24];
	uint32_t tris[3 * 30 + 3];
	tris[90] = tris[91] = tris[92] = 12345;
	ops->triangles(cd, verts, 24, tris, 30, &nv, &nt);
	assert_int_equal(tris[90], 12345); /* nothing past the triangles */
	for (uint32_t j = 0; j < 4; ++j)
		for (uint32_t i = 0; i < 6; ++i) {
			const pbd_vec3 v = verts[j * 6 + i];
			assert_near(v.x, sx(cd, i), 0);
			assert_near(v.y, sh(cd, i, j), 0);
			assert_near(v.z, sz(cd, j), 0);
			assert_true(v.x >= lo.x && v.y >= lo.y && v.z >= lo.z && v.x <= hi.x && v.y <= hi.y && v.z <= hi.z);
		}
	/* Every cell's two triangles, wound with the normal up, covering the cell exactly once, and
	 * the surface's distance zero at their centroids. */
	int seen[5 * 3] = {0};
	for (uint32_t t = 0; t < nt; ++t) {
		const uint32_t* o = tris + 3 * t;
		for (int c = 0; c < 3; ++c) assert_true(o[c] < nv);
		const tp_dvec3 a = tp_d(verts[o[0]]), b = tp_d(verts[o[1]]), c = tp_d(verts[o[2]]);
		const tp_dvec3 nrm = dcross(dsub(b, a), dsub(c, a));
		assert_true(nrm.y > 0);
		assert_near(nrm.y, 0.5 * 0.25, 1e-6); /* |xz projection| = cell area / 2, times 2 */
		const uint32_t m = o[0] < o[1] ? (o[0] < o[2] ? o[0] : o[2]) : (o[1] < o[2] ? o[1] : o[2]);
		seen[(m / 6) * 5 + m % 6]++;
		const tp_dvec3 centroid = dscale(dadd(a, dadd(b, c)), 1.0 / 3);
		pbd_vec3 n;
		assert_near(lib_distance(cd, centroid, &n), 0, DIST_TOL);
	}
	for (int c = 0; c < 15; ++c) assert_int_equal(seen[c], 2);
	/* Partial capacities: fills what fits, still counts everything. */
	pbd_vec3 few[5];
	uint32_t tri_few[3 * 4];
	ops->triangles(cd, few, 5, tri_few, 4, &nv, &nt);
	assert_int_equal(nv, 24);
	assert_int_equal(nt, 30);
	for (int i = 0; i < 5; ++i) assert_memory_equal(&few[i], &verts[i], sizeof few[i]);
	assert_memory_equal(tri_few, tris, sizeof tri_few);
	ops->triangles(cd, NULL, 100, tri_few, 4, &nv, &nt);
	assert_int_equal(nv, 24);
	field_free(&f);
}

/* The same field scaled by 2^e, for e far either way: the distance scales with it (the geometry
 * is exactly the same in units of the field), the normal does not, and a sweep hits at the same t. */
static void test_scaled_fields(void** state) {
	(void)state;
	const double k[2] = {1, 0.2};
	field base = field_make(9, 7, 0.25, 0.375, h_bumpy, k);
	const int exps[] = {-50, -20, 20, 60};
	for (size_t e = 0; e < sizeof exps / sizeof exps[0]; ++e) {
		const int ex = exps[e];
		const double s = ldexp(1, ex);
		pbd_real h[63];
		for (int i = 0; i < 63; ++i) h[i] = (pbd_real)((double)base.def.shape.heightfield.heights[i] * s);
		field f;
		f.def = hf_def(h, 9, 7, 0.25 * s, 0.375 * s);
		pbd_world* w = test_world(NULL);
		assert_int_equal(ops->validate(w, &f.def), PBD_OK);
		pbd_world_destroy(w);
		f.data = malloc(ops->data_size(&f.def));
		ops->build(&f.def, f.data);
		uint64_t seed = 50;
		double worst = 0, worst_n = 0, worst_t = 0;
		for (int m = 0; m < 2000; ++m) {
			const tp_dvec3 p = rand_box(&seed, -0.5, 2.5, -1, 1, -0.5, 3);
			const tp_dvec3 q = rand_box(&seed, -0.5, 2.5, -1, 1, -0.5, 3);
			pbd_vec3 n0, n1;
			const double d0 = lib_distance(&base.def, p, &n0);
			const double d1 = lib_distance(&f.def, dscale(p, s), &n1) / s;
			worst = fmax(worst, fabs(d1 - d0));
			worst_n = fmax(worst_n, dlen(dsub(tp_d(n1), tp_d(n0))));
			pbd_real t0, t1;
			const bool h0 = ops->sweep(&base.def, v3_of(p), v3_of(q), (pbd_real)0.05, &t0, &n0);
			const bool h1 =
			    ops->sweep(&f.def, v3_of(dscale(p, s)), v3_of(dscale(q, s)), (pbd_real)(0.05 * s), &t1, &n1);
			assert_int_equal(h0, h1);
			if (h0) worst_t = fmax(worst_t, fabs((double)t1 - (double)t0));
		}
		printf("field scaled by 2^%d: max |distance / scale - unscaled| %.3g, normal %.3g, sweep t %.3g\n", ex, worst,
		       worst_n, worst_t);
		assert_true(worst <= DIST_TOL && worst_n <= UNIT_TOL * 4 && worst_t <= DIST_TOL);
		free(f.data);
	}
	field_free(&base);
}

/* Through the world (needs the shape's line in collide.c's table): pbd_collider_create copies the
 * heights (the caller's array is freed right after), get_def points at the copy, get_bounds and
 * get_triangles answer; particles thrown at 100 m/s onto the field stay finite, and a snapshot
 * reloads to the same heights and steps on bit for bit. In both collision modes no particle ever
 * ends a step more than the margin inside the field. (In the solver a contact is a plane, and the
 * constraints can slide a fast particle along it into the next bump of a non-convex surface; the
 * stage sweeps a particle that starts on the surface and settles what a plane let in, which took
 * the worst depth from 2.6 m to 3 mm.) */
/* The statistics' contact count (collide.c) skips the particles outside the field's box from the
 * sides and above, where no query can find the field within reach; it must count exactly the
 * particles that the field's own distance query puts within the margin. Particles all around a
 * turned and moved field, beside it, above it, below its surface and on it (a particle placed on
 * the surface plus an offset across the margin), and none moves: the count is of these positions. */
static void test_contact_count_culls_nothing(void** state) {
	(void)state;
	pbd_world* w = test_world(NULL);
	const double k[2] = {1.5, 0.2};
	field f = field_make(33, 29, 0.25, 0.25, h_bumpy, k);
	pbd_collider_def cd = f.def;
	cd.margin = R(0.01);
	cd.pose.position = pbd_v3(R(-3), R(1.5), R(2));
	cd.pose.rotation = pbd_quat_axis_angle(pbd_v3(R(0.3), R(1), R(0.2)), R(0.7));
	const double lx = 32 * 0.25, lz = 28 * 0.25;
	enum { count = 4000 };
	pbd_vec3 x[count];
	pbd_real inv[count];
	uint64_t seed = 77;
	for (int i = 0; i < count; ++i) {
		tp_dvec3 l;
		if (i % 2 == 0) { /* anywhere around the field, up to 0.3 m past its sides, from below to above */
			l = rand_box(&seed, -0.3, lx + 0.3, -4, 3, -0.3, lz + 0.3);
		} else { /* at a vertex of the surface, or past the border beside one, within a few margins */
			const uint32_t vi = (uint32_t)(rand_box(&seed, 0, 32.999, 0, 0, 0, 0).x),
			               vj = (uint32_t)(rand_box(&seed, 0, 28.999, 0, 0, 0, 0).x);
			const tp_dvec3 d = rand_box(&seed, -0.05, 0.05, -0.03, 0.03, -0.05, 0.05);
			l = (tp_dvec3){sx(&f.def, vi) + (vi == 0 || vi == 32 ? d.x : 0), sh(&f.def, vi, vj) + d.y,
			               sz(&f.def, vj) + (vj == 0 || vj == 28 ? d.z : 0)};
		}
		x[i] = pbd_pose_apply(cd.pose, v3_of(l));
		inv[i] = 1;
	}
	const pbd_collider_id id = pbd_collider_create(w, &cd);
	assert_true(pbd_collider_is_valid(w, id));
	assert_int_equal(pbd_world_add_particles(w, count, x, NULL, inv, NULL), PBD_OK);
	pbd_collider_def got;
	assert_int_equal(pbd_collider_get_def(w, id, &got), PBD_OK);
	uint32_t want = 0;
	for (int i = 0; i < count; ++i) {
		pbd_vec3 n;
		want += ops->distance(&got, pbd_pose_apply_inverse(got.pose, x[i]), &n) <= got.margin + PBD_CONTACT_TOLERANCE;
	}
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	printf("contacts of %d particles around a turned field: %u counted, %u by the field's query for each\n", count,
	       st.contacts, want);
	assert_true(want > count / 10);
	assert_int_equal(st.contacts, want);
	pbd_world_destroy(w);
	field_free(&f);
}

static void test_through_world(void** state) {
	(void)state;
	const pbd_collision_mode modes[2] = {PBD_COLLISION_IN_SOLVER, PBD_COLLISION_AFTER_SOLVER};
	for (int md = 0; md < 2; ++md) {
		pbd_world_def wd = pbd_world_def_default();
		wd.collision_mode = modes[md];
		wd.substeps = 4;
		pbd_world* w = test_world(&wd);
		const double k[2] = {1.5, 0.2};
		field f = field_make(33, 29, 0.25, 0.25, h_bumpy, k); /* a reference copy, to measure with */
		const size_t n = 33 * 29;
		pbd_real* h = malloc(n * sizeof *h);
		assert_non_null(h);
		memcpy(h, f.def.shape.heightfield.heights, n * sizeof *h);
		pbd_collider_def cd = hf_def(h, 33, 29, 0.25, 0.25);
		cd.margin = R(0.01);
		const pbd_collider_id id = pbd_collider_create(w, &cd);
		assert_true(pbd_collider_is_valid(w, id));
		free(h);
		pbd_collider_def got;
		assert_int_equal(pbd_collider_get_def(w, id, &got), PBD_OK);
		assert_true(got.shape.heightfield.heights != cd.shape.heightfield.heights);
		assert_memory_equal(got.shape.heightfield.heights, f.def.shape.heightfield.heights, n * sizeof(pbd_real));
		pbd_vec3 lo, hi, llo, lhi;
		assert_true(pbd_collider_get_bounds(w, id, &lo, &hi));
		ops->bounds(&f.def, &llo, &lhi);
		assert_memory_equal(&lo, &llo, sizeof lo);
		assert_memory_equal(&hi, &lhi, sizeof hi);
		uint32_t nv = 0, nt = 0;
		assert_int_equal(pbd_collider_get_triangles(w, id, NULL, 0, NULL, 0, &nv, &nt), PBD_OK);
		assert_int_equal(nv, 33 * 29);
		assert_int_equal(nt, 2 * 32 * 28);

		enum { count = 300 };
		pbd_vec3 x[count], v[count];
		pbd_real inv[count];
		uint64_t seed = 60;
		for (int i = 0; i < count; ++i) {
			x[i] = v3_of(rand_box(&seed, 1, 7, 2.5, 3.5, 1, 6));
			v[i] = v3_of(rand_box(&seed, -20, 20, -100, -60, -20, 20));
			inv[i] = 1;
		}
		assert_int_equal(pbd_world_add_particles(w, count, x, v, inv, NULL), PBD_OK);
		double worst = 1e30;
		for (int step = 0; step < 40; ++step) {
			assert_int_equal(pbd_world_step(w), PBD_OK);
			const pbd_vec3* px = pbd_world_positions(w);
			for (int i = 0; i < count; ++i) worst = fmin(worst, ref_distance(&f.def, tp_d(px[i]), NULL));
		}
		assert_true(tp_all_finite(w));
		printf("world, contacts %s: %d particles at 60 to 100 m/s, least distance from the field after a step %.4g "
		       "(margin %g)\n",
		       md == 0 ? "in the solver" : "after the solver", count, worst, (double)cd.margin);
		assert_true(worst >= -(double)cd.margin);

		size_t size = 0;
		assert_int_equal(pbd_world_save_memory(w, NULL, 0, &size), PBD_OK);
		void* buf = malloc(size);
		assert_non_null(buf);
		assert_int_equal(pbd_world_save_memory(w, buf, size, &size), PBD_OK);
		pbd_world* b = NULL;
		pbd_error err;
		assert_int_equal(pbd_world_load_memory(buf, size, NULL, &b, &err), PBD_OK);
		assert_int_equal(pbd_collider_get_def(b, id, &got), PBD_OK);
		assert_memory_equal(got.shape.heightfield.heights, f.def.shape.heightfield.heights, n * sizeof(pbd_real));
		for (int step = 0; step < 10; ++step) {
			assert_int_equal(pbd_world_step(w), PBD_OK);
			assert_int_equal(pbd_world_step(b), PBD_OK);
		}
		assert_memory_equal(pbd_world_positions(w), pbd_world_positions(b), count * sizeof(pbd_vec3));
		pbd_world_destroy(b);
		free(buf);
		pbd_world_destroy(w);
		field_free(&f);
	}
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_flat),
	    cmocka_unit_test(test_tilted),
	    cmocka_unit_test(test_bumpy_vs_reference),
	    cmocka_unit_test(test_large_field),
	    cmocka_unit_test(test_normal_is_unit),
	    cmocka_unit_test(test_normal_is_gradient),
	    cmocka_unit_test(test_sweep_random),
	    cmocka_unit_test(test_sweep_cases),
	    cmocka_unit_test(test_fast_drop),
	    cmocka_unit_test(test_validate),
	    cmocka_unit_test(test_build_determinism),
	    cmocka_unit_test(test_bounds_and_triangles),
	    cmocka_unit_test(test_scaled_fields),
	    cmocka_unit_test(test_contact_count_culls_nothing),
	    cmocka_unit_test(test_through_world),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
