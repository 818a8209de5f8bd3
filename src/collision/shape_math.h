/* Geometry the collision code shares, one version of each: exact power-of-two scaling (so that
 * the shapes' quadratics see numbers near 1 whatever the size of the shape or the distance of the
 * point), unit vectors that neither overflow nor underflow, the clipping of a segment to a slab or
 * a box, the entry of a moving point into a ball, box overlap and the closest points of segments
 * and triangles. */
#ifndef PBD_SHAPE_MATH_H
#define PBD_SHAPE_MATH_H

#include <math.h>

#include "core/core.h"
#include "pbd/math.h"

/* Comparisons, not fmin/fmax: they inline, and the coordinates they see are finite (a NaN b gives
 * a). */
static inline pbd_real pbd_shape_min(pbd_real a, pbd_real b) { return b < a ? b : a; }
static inline pbd_real pbd_shape_max(pbd_real a, pbd_real b) { return b > a ? b : a; }
static inline pbd_real pbd_shape_clamp(pbd_real x, pbd_real lo, pbd_real hi) { return x < lo ? lo : (x > hi ? hi : x); }
/* x clamped to [0, 1]; NaN gives 0. */
static inline pbd_real pbd_clamp01(pbd_real x) { return x > 0 ? (x < 1 ? x : 1) : 0; }
static inline pbd_real pbd_shape_ldexp(pbd_real x, int e) {
#ifdef PBD_DOUBLE
	return ldexp(x, e);
#else
	return ldexpf(x, e);
#endif
}
static inline int pbd_shape_exponent(pbd_real x) {
	int e = 0;
#ifdef PBD_DOUBLE
	(void)frexp(x, &e);
#else
	(void)frexpf(x, &e);
#endif
	return e;
}
static inline pbd_vec3 pbd_shape_ldexp_v3(pbd_vec3 v, int e) {
	return pbd_v3(pbd_shape_ldexp(v.x, e), pbd_shape_ldexp(v.y, e), pbd_shape_ldexp(v.z, e));
}
/* The largest |component|. */
static inline pbd_real pbd_shape_max_abs(pbd_vec3 v) {
	return PBD_FMAX(PBD_FABS(v.x), PBD_FMAX(PBD_FABS(v.y), PBD_FABS(v.z)));
}
/* |v| and v / |v|, v first divided by its largest component, so that neither a far point
 * overflows nor a near one underflows to a zero length. Saturates at PBD_REAL_MAX, so that the
 * length stays finite for every finite v. Returns 0 for v = 0 and leaves *unit alone then. */
static inline pbd_real pbd_shape_unit(pbd_vec3 v, pbd_vec3* unit) {
	const pbd_real m = pbd_shape_max_abs(v);
	if (!(m > 0)) return 0;
#ifdef PBD_DOUBLE
	const pbd_vec3 u = pbd_v3(v.x / m, v.y / m, v.z / m); /* not times 1 / m: that overflows for a subnormal m */
#else
	/* In double: gcc -O3 packs three float divisions into one four-lane division whose fourth lane
	 * divides whatever follows v in memory, which can overflow (and trap in the tests, which trap
	 * overflow); two-lane double arithmetic has no spare lane. The quotients are the float ones: a
	 * quotient of floats lies at least 2^-49 (relative) from a midpoint between floats, farther
	 * than the two roundings in double can move it. */
	const double im = 1 / (double)m;
	const pbd_vec3 u = pbd_v3((pbd_real)((double)v.x * im), (pbd_real)((double)v.y * im), (pbd_real)((double)v.z * im));
#endif
	const pbd_real s = pbd_v3_length(u); /* in [1, sqrt 3] */
	*unit = pbd_v3_scale(u, 1 / s);
	return m > PBD_REAL_MAX / 2 ? PBD_REAL_MAX : m * s;
}

/* Narrows [*t0, *t1] to the parameters t at which a + t d lies in [lo, hi]; false when that leaves
 * it empty (an interval empty on entry included). Compares before it divides, so each quotient
 * lies in [0, 1] and none can overflow however short d is. One body for pbd_real and for double:
 * the convex shape clips in double whatever the precision. */
#define PBD_SHAPE_CLIP_SLAB(name, T)                                                                                   \
	static inline bool name(T a, T d, T lo, T hi, T* t0, T* t1) {                                                      \
		if (d == 0) return lo <= a && a <= hi && *t0 <= *t1;                                                           \
		if (d < 0) { /* mirrored, so that the point moves towards hi */                                                \
			const T l = lo;                                                                                            \
			lo = -hi;                                                                                                  \
			hi = -l;                                                                                                   \
			a = -a;                                                                                                    \
			d = -d;                                                                                                    \
		}                                                                                                              \
		const T near = lo - a, far = hi - a;                                                                           \
		if (far < 0 || near > d) return false;                                                                         \
		if (near > 0 && near / d > *t0) *t0 = near / d;                                                                \
		if (far < d && far / d < *t1) *t1 = far / d;                                                                   \
		return *t0 <= *t1;                                                                                             \
	}
PBD_SHAPE_CLIP_SLAB(pbd_clip_slab, pbd_real)
PBD_SHAPE_CLIP_SLAB(pbd_clip_slab_d, double)
#undef PBD_SHAPE_CLIP_SLAB

/* pbd_clip_slab on every axis: the parameters at which a + t d lies in the box [lo, hi]. */
static inline bool pbd_clip_box(pbd_vec3 a, pbd_vec3 d, pbd_vec3 lo, pbd_vec3 hi, pbd_real* t0, pbd_real* t1) {
	return pbd_clip_slab(a.x, d.x, lo.x, hi.x, t0, t1) && pbd_clip_slab(a.y, d.y, lo.y, hi.y, t0, t1) &&
	       pbd_clip_slab(a.z, d.z, lo.z, hi.z, t0, t1);
}

/* Whether the closed boxes [alo, ahi] and [blo, bhi] meet. */
/* The box in the collider's frame that holds the world box [lo, hi]: each local axis spans
 * |axis . world axis| of each half. */
static inline void pbd_pose_local_box(pbd_pose pose, pbd_vec3 lo, pbd_vec3 hi, pbd_vec3* llo, pbd_vec3* lhi) {
	const pbd_vec3 half = pbd_v3_scale(pbd_v3_sub(hi, lo), PBD_R(0.5));
	const pbd_vec3 centre = pbd_pose_apply_inverse(pose, pbd_v3_scale(pbd_v3_add(lo, hi), PBD_R(0.5)));
	const pbd_quat inv = pbd_quat_conj(pose.rotation);
	const pbd_vec3 ax = pbd_quat_rotate(inv, pbd_v3(1, 0, 0)), ay = pbd_quat_rotate(inv, pbd_v3(0, 1, 0)),
	               az = pbd_quat_rotate(inv, pbd_v3(0, 0, 1));
	const pbd_vec3 e = pbd_v3(PBD_FABS(ax.x) * half.x + PBD_FABS(ay.x) * half.y + PBD_FABS(az.x) * half.z,
	                          PBD_FABS(ax.y) * half.x + PBD_FABS(ay.y) * half.y + PBD_FABS(az.y) * half.z,
	                          PBD_FABS(ax.z) * half.x + PBD_FABS(ay.z) * half.y + PBD_FABS(az.z) * half.z);
	*llo = pbd_v3_sub(centre, e);
	*lhi = pbd_v3_add(centre, e);
}

static inline bool pbd_boxes_overlap(pbd_vec3 alo, pbd_vec3 ahi, pbd_vec3 blo, pbd_vec3 bhi) {
	return alo.x <= bhi.x && blo.x <= ahi.x && alo.y <= bhi.y && blo.y <= ahi.y && alo.z <= bhi.z && blo.z <= ahi.z;
}

/* Whether the bounding box of segment [a, b] misses the box [lo, hi]: a quick test before an exact
 * one (a segment can miss the box while its bounding box meets it). A NaN coordinate of one end
 * counts as the other end's. */
static inline bool pbd_segment_bounds_miss(pbd_vec3 a, pbd_vec3 b, pbd_vec3 lo, pbd_vec3 hi) {
	return PBD_FMAX(a.x, b.x) < lo.x || PBD_FMIN(a.x, b.x) > hi.x || PBD_FMAX(a.y, b.y) < lo.y ||
	       PBD_FMIN(a.y, b.y) > hi.y || PBD_FMAX(a.z, b.z) < lo.z || PBD_FMIN(a.z, b.z) > hi.z;
}

/* First s >= 0 at which f + s u is within sqrt(rr) of the origin, or 2 when it never is. The
 * smaller root is c / (-b' + sqrt(b'^2 - a c)), which does not cancel; it needs no division by
 * u.u, so a zero or tiny u needs no special case. A start inside gives 0. The discriminant is
 * taken as |u|^2 rr - |f x u|^2 (Lagrange's identity): the squares of b'^2 - a c cancel for a
 * motion that passes the origin at a small distance next to |f|, which then reads as a touch
 * when rr is 0 or small; the cross product keeps that distance to a rounding of |f|. */
static inline pbd_real pbd_shape_ball_entry(pbd_vec3 f, pbd_vec3 u, pbd_real rr) {
	const pbd_real c = pbd_v3_dot(f, f) - rr;
	if (!(c > 0)) return 0;
	const pbd_real half_b = pbd_v3_dot(f, u);
	if (!(half_b < 0)) return 2; /* not approaching */
	const pbd_vec3 x = pbd_v3_cross(f, u);
	const pbd_real disc = pbd_v3_dot(u, u) * rr - pbd_v3_dot(x, x);
	if (!(disc >= 0)) return 2;
	return c / (-half_b + PBD_SQRT(disc));
}

/* The point of triangle abc closest to p, with its barycentric weights (Ericson, "Real-Time
 * Collision Detection", 5.1.5: the Voronoi regions of the vertices, then of the edges, then the
 * face). A degenerate triangle falls into a vertex or edge region: no division by its area. */
static inline pbd_vec3 pbd_closest_on_triangle(pbd_vec3 p, pbd_vec3 a, pbd_vec3 b, pbd_vec3 c, pbd_real bary[3]) {
	const pbd_vec3 ab = pbd_v3_sub(b, a), ac = pbd_v3_sub(c, a), ap = pbd_v3_sub(p, a);
	const pbd_real d1 = pbd_v3_dot(ab, ap), d2 = pbd_v3_dot(ac, ap);
	if (d1 <= 0 && d2 <= 0) {
		bary[0] = 1, bary[1] = 0, bary[2] = 0;
		return a;
	}
	const pbd_vec3 bp = pbd_v3_sub(p, b);
	const pbd_real d3 = pbd_v3_dot(ab, bp), d4 = pbd_v3_dot(ac, bp);
	if (d3 >= 0 && d4 <= d3) {
		bary[0] = 0, bary[1] = 1, bary[2] = 0;
		return b;
	}
	const pbd_real vc = d1 * d4 - d3 * d2;
	/* An edge of zero length (d1 = d3 = 0) has no interior: it goes on to the other regions. */
	if (vc <= 0 && d1 >= 0 && d3 <= 0 && d1 - d3 > 0) {
		const pbd_real v = d1 / (d1 - d3);
		bary[0] = 1 - v, bary[1] = v, bary[2] = 0;
		return pbd_v3_add(a, pbd_v3_scale(ab, v));
	}
	const pbd_vec3 cp = pbd_v3_sub(p, c);
	const pbd_real d5 = pbd_v3_dot(ab, cp), d6 = pbd_v3_dot(ac, cp);
	if (d6 >= 0 && d5 <= d6) {
		bary[0] = 0, bary[1] = 0, bary[2] = 1;
		return c;
	}
	const pbd_real vb = d5 * d2 - d1 * d6;
	if (vb <= 0 && d2 >= 0 && d6 <= 0 && d2 - d6 > 0) {
		const pbd_real w = d2 / (d2 - d6);
		bary[0] = 1 - w, bary[1] = 0, bary[2] = w;
		return pbd_v3_add(a, pbd_v3_scale(ac, w));
	}
	const pbd_real va = d3 * d6 - d5 * d4;
	if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0 && (d4 - d3) + (d5 - d6) > 0) {
		const pbd_real w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
		bary[0] = 0, bary[1] = 1 - w, bary[2] = w;
		return pbd_v3_add(b, pbd_v3_scale(pbd_v3_sub(c, b), w));
	}
	const pbd_real sum = va + vb + vc;
	if (!(sum > 0)) { /* flat to rounding: the nearest vertex */
		bary[0] = 1, bary[1] = 0, bary[2] = 0;
		return a;
	}
	const pbd_real v = vb / sum, w = vc / sum;
	bary[0] = 1 - v - w, bary[1] = v, bary[2] = w;
	return pbd_v3_add(a, pbd_v3_add(pbd_v3_scale(ab, v), pbd_v3_scale(ac, w)));
}

/* The parameter in [0, 1] of the point of the segment from the origin along d closest to q: 0 for
 * d = 0, and never NaN (an overflowed product takes the end it points to). */
static inline pbd_real pbd_segment_param(pbd_vec3 q, pbd_vec3 d) {
	const pbd_real dd = pbd_v3_dot(d, d), qd = pbd_v3_dot(q, d);
	if (!(dd > 0) || !(qd > 0)) return 0;
	if (qd >= dd) return 1;
	return qd / dd;
}

/* The point of segment [a, b] closest to p, as the parameter in [0, 1]. */
static inline pbd_real pbd_closest_on_segment(pbd_vec3 p, pbd_vec3 a, pbd_vec3 b) {
	return pbd_segment_param(pbd_v3_sub(p, a), pbd_v3_sub(b, a));
}

/* The closest points of segments [a, b] and [c, d], as parameters s (on ab) and t (on cd) in
 * [0, 1]. Minimises |a + s (b - a) - c - t (d - c)|^2 over the square, clamping s, then t, then s
 * again. Zero-length segments take their start. Parallel segments (sin^2 of the angle below
 * 1e-6 in float, 1e-12 in double, where the free minimum is ill-conditioned) have a line of
 * closest pairs; s is the middle of the part of ab that faces cd (or ab's end nearer to cd), so
 * that a contact between overlapping parallel edges acts at the middle of the overlap, not at
 * an end. */
static inline void pbd_closest_segments(pbd_vec3 a, pbd_vec3 b, pbd_vec3 c, pbd_vec3 d, pbd_real* s_out,
                                        pbd_real* t_out) {
	const pbd_vec3 u = pbd_v3_sub(b, a), v = pbd_v3_sub(d, c), r = pbd_v3_sub(a, c);
	const pbd_real uu = pbd_v3_dot(u, u), vv = pbd_v3_dot(v, v), vr = pbd_v3_dot(v, r);
	pbd_real s = 0, t = 0;
	if (!(uu > 0)) {
		if (vv > 0) t = pbd_clamp01(vr / vv);
	} else {
		const pbd_real ur = pbd_v3_dot(u, r);
		if (!(vv > 0)) {
			s = pbd_clamp01(-ur / uu);
		} else {
			const pbd_real uv = pbd_v3_dot(u, v), denom = uu * vv - uv * uv;
#ifdef PBD_DOUBLE
			const pbd_real parallel = 1e-12;
#else
			const pbd_real parallel = 1e-6f;
#endif
			if (denom > parallel * uu * vv) {
				s = pbd_clamp01((uv * vr - ur * vv) / denom);
			} else {
				/* c and d as parameters along ab; the middle of their span clipped to [0, 1]. */
				const pbd_real sc = -ur / uu, sd = (uv - ur) / uu;
				const pbd_real lo = PBD_FMAX(0, PBD_FMIN(sc, sd)), hi = PBD_FMIN(1, PBD_FMAX(sc, sd));
				s = pbd_clamp01(PBD_R(0.5) * (lo + hi));
			}
			t = (uv * s + vr) / vv;
			if (t < 0) {
				t = 0;
				s = pbd_clamp01(-ur / uu);
			} else if (t > 1) {
				t = 1;
				s = pbd_clamp01((uv - ur) / uu);
			}
		}
	}
	*s_out = s;
	*t_out = t;
}

/* One contact between points interpolated from particles: the point sum_k g_k (x + q)_k must keep
 * n . point >= offset (the x parts folded into offset). Projected as one inequality constraint
 * with the particles' inverse masses weighted by g (Bridson et al. 2002), which keeps their
 * momentum: the correction of particle k is n s w_k g_k with s = -C / sum w_k g_k^2. The
 * vertex-face, edge-edge and face contacts of shapes all take this form with 3 or 4 particles. */
static inline void pbd_project_weighted_contact(pbd_vec3* restrict q, const pbd_real* restrict iw, const uint32_t* idx,
                                                const pbd_real* g, int count, pbd_vec3 n, pbd_real offset) {
	pbd_real C = -offset, wsum = 0;
	for (int k = 0; k < count; ++k) {
		C += g[k] * pbd_v3_dot(n, q[idx[k]]);
		wsum += iw[idx[k]] * g[k] * g[k];
	}
	if (!(C < 0) || !(wsum > 0)) return;
	const pbd_real s = -C / wsum;
	for (int k = 0; k < count; ++k) q[idx[k]] = pbd_v3_add(q[idx[k]], pbd_v3_scale(n, s * iw[idx[k]] * g[k]));
}

#endif
