/* The constraints of one triangle strain element (constraints/triangle.c): values and gradients of its three
 * parts from the edge vectors and the rest frame, shared with the tests. */
#ifndef PBD_STRAIN_H
#define PBD_STRAIN_H

#include "model/world.h"

#ifdef PBD_DOUBLE
#define PBD_ATAN atan
#else
#define PBD_ATAN atanf
#endif

/* Below these a part has no direction and is skipped: a stretch when its column of F is shorter than 1e-6 (the
 * side collapsed to a millionth of its rest length); the shear when a column is shorter than 1e-2 or the columns
 * are parallel to within 1e-4 rad (the triangle is a segment). F is dimensionless, so are these bounds. */
#define PBD_STRAIN_STRETCH_MIN2 PBD_R(1e-12)
#define PBD_STRAIN_SHEAR_MIN2   PBD_R(1e-4)
#define PBD_STRAIN_SHEAR_SIN2   PBD_R(1e-8)
/* ... and when an axis is stretched beyond about 3e7 times its rest length, where |f_u|^2 |f_v|^2 would leave the
 * float range: such a triangle's stretch is all that matters. */
#define PBD_STRAIN_SHEAR_MAX2 PBD_R(1e15)

/* Column m of F (0: f_u, 1: f_v) at the edge vectors e1 = x_b - x_a, e2 = x_c - x_a: e1 dm[m] + e2 dm[2 + m], a
 * combination of the corners with the weights -(dm[m] + dm[2 + m]), dm[m], dm[2 + m]. */
static inline pbd_vec3 pbd_strain_column(const pbd_real* dm, pbd_vec3 e1, pbd_vec3 e2, int m) {
	return pbd_v3_add(pbd_v3_scale(e1, dm[m]), pbd_v3_scale(e2, dm[2 + m]));
}

/* Constraint value and gradients (a, b, c) of part j at the edge vectors e1 = x_b - x_a, e2 = x_c - x_a; false
 * when the part has no direction there.
 *
 * Stretch along column m of F (j = 0: u, 1: v), f = e1 dm[m] + e2 dm[2 + m]: C = |f| - 1, dC/df = f / |f|, and
 * df/dx_b = dm[m], df/dx_c = dm[2 + m], df/dx_a = -(dm[m] + dm[2 + m]).
 *
 * Shear (j = 2): C = asin(c), c = n_u.n_v, n = f / |f|, the shear angle (pi/2 minus the angle between the axes).
 * dC/df_u = (n_v - c n_u) / (|f_u| sqrt(1 - c^2)), dC/df_v likewise: unit vectors across each axis, in the plane of
 * the two, over the axis length; no stretch to first order. Chained through F as above. Evaluated without a root
 * per axis: with d = f_u.f_v and a = |f_u x f_v| = |f_u||f_v| sqrt(1 - c^2), C = atan(d / a) and
 * dC/df_u = f_v / a - f_u d / (a |f_u|^2); the cross product keeps a accurate where the axes are nearly parallel. */
static inline bool pbd_strain_part(const pbd_real* dm, pbd_vec3 e1, pbd_vec3 e2, int j, pbd_real* C, pbd_vec3 g[3]) {
	if (j < 2) {
		const pbd_real cb = dm[j], cc = dm[2 + j];
		const pbd_vec3 fv = pbd_strain_column(dm, e1, e2, j);
		const pbd_real l2 = pbd_v3_dot(fv, fv);
		if (!(l2 > PBD_STRAIN_STRETCH_MIN2)) return false;
		const pbd_real len = PBD_SQRT(l2);
		const pbd_vec3 n = pbd_v3_scale(fv, 1 / len);
		*C = len - 1;
		g[1] = pbd_v3_scale(n, cb);
		g[2] = pbd_v3_scale(n, cc);
		g[0] = pbd_v3_scale(n, -(cb + cc));
		return true;
	}
	const pbd_vec3 fu = pbd_strain_column(dm, e1, e2, 0), fv = pbd_strain_column(dm, e1, e2, 1);
	const pbd_real lu2 = pbd_v3_dot(fu, fu), lv2 = pbd_v3_dot(fv, fv);
	if (!(lu2 > PBD_STRAIN_SHEAR_MIN2) || !(lv2 > PBD_STRAIN_SHEAR_MIN2) || !(lu2 < PBD_STRAIN_SHEAR_MAX2) ||
	    !(lv2 < PBD_STRAIN_SHEAR_MAX2))
		return false;
	const pbd_vec3 n = pbd_v3_cross(fu, fv);
	const pbd_real d = pbd_v3_dot(fu, fv), a2 = pbd_v3_dot(n, n); /* |f_u||f_v| cos, (|f_u||f_v| sin)^2 */
	const pbd_real l2 = lu2 * lv2;
	if (!(a2 > PBD_STRAIN_SHEAR_SIN2 * l2)) return false;
	const pbd_real ia = 1 / PBD_SQRT(a2), il = 1 / l2;
	*C = PBD_ATAN(d * ia);
	const pbd_real k = d * ia * il;
	const pbd_vec3 gu = pbd_v3_sub(pbd_v3_scale(fv, ia), pbd_v3_scale(fu, k * lv2));
	const pbd_vec3 gv = pbd_v3_sub(pbd_v3_scale(fu, ia), pbd_v3_scale(fv, k * lu2));
	g[1] = pbd_v3_add(pbd_v3_scale(gu, dm[0]), pbd_v3_scale(gv, dm[1]));
	g[2] = pbd_v3_add(pbd_v3_scale(gu, dm[2]), pbd_v3_scale(gv, dm[3]));
	g[0] = pbd_v3_scale(pbd_v3_add(g[1], g[2]), -1);
	return true;
}

#endif
