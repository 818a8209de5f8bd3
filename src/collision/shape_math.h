/* Arithmetic the curved shapes share: exact power-of-two scaling (so that their quadratics see
 * numbers near 1 whatever the size of the shape or the distance of the point) and the entry of
 * a moving point into a ball. */
#ifndef PBD_SHAPE_MATH_H
#define PBD_SHAPE_MATH_H

#include <math.h>

#include "core/core.h"
#include "pbd/math.h"

static inline pbd_real pbd_shape_min(pbd_real a, pbd_real b) { return b < a ? b : a; }
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
/* First s >= 0 at which f + s u is within sqrt(rr) of the origin, or 2 when it never is. The
 * smaller root is c / (-b' + sqrt(b'^2 - a c)), which does not cancel; it needs no division by
 * u.u, so a zero or tiny u needs no special case. A start inside gives 0. */
static inline pbd_real pbd_shape_ball_entry(pbd_vec3 f, pbd_vec3 u, pbd_real rr) {
	const pbd_real c = pbd_v3_dot(f, f) - rr;
	if (!(c > 0)) return 0;
	const pbd_real half_b = pbd_v3_dot(f, u);
	if (!(half_b < 0)) return 2; /* not approaching */
	const pbd_real disc = half_b * half_b - pbd_v3_dot(u, u) * c;
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

/* The point of segment [a, b] closest to p, as the parameter in [0, 1]. */
static inline pbd_real pbd_closest_on_segment(pbd_vec3 p, pbd_vec3 a, pbd_vec3 b) {
	const pbd_vec3 ab = pbd_v3_sub(b, a);
	const pbd_real len2 = pbd_v3_dot(ab, ab);
	if (!(len2 > 0)) return 0;
	const pbd_real t = pbd_v3_dot(pbd_v3_sub(p, a), ab) / len2;
	return t < 0 ? 0 : t > 1 ? 1 : t;
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
