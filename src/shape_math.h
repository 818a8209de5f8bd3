/* Arithmetic the curved shapes share: exact power-of-two scaling (so that their quadratics see
 * numbers near 1 whatever the size of the shape or the distance of the point) and the entry of
 * a moving point into a ball. */
#ifndef PBD_SHAPE_MATH_H
#define PBD_SHAPE_MATH_H

#include <math.h>

#include "core.h"
#include "pbd/math.h"

static inline pbd_real pbd_shape_min(pbd_real a, pbd_real b) { return b < a ? b : a; }
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

#endif
