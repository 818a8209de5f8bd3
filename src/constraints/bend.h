/* Hinge geometry of the bending families (constraints/bend_dihedral.c, constraints/bend_isometric.c).
 *
 * A hinge is two triangles (x0, x1, x2) and (x1, x0, x3) sharing the edge x0-x1; x2 and x3 are
 * the wings. The kernels see it as three vectors relative to x0 (pbd_rel): e = x1 - x0,
 * a2 = x2 - x0, a3 = x3 - x0, so that its shape is exact however far from the origin it sits. */
#ifndef PBD_BEND_H
#define PBD_BEND_H

#include "model/world.h"

/* A hinge has no usable angle when a triangle's height over the shared edge is below this
 * fraction of the edge (squared here), or when a wing reaches more than sqrt(PBD_BEND_MAX_REACH2)
 * edge lengths from x0 (a collapsed edge under normal wings). Within these bounds every scaled
 * gradient below is at most about 2e4 / sqrt(PBD_BEND_MIN_HEIGHT2) long, so that sum w |g|^2
 * stays finite for inverse masses up to PBD_INV_MASS_MAX. */
#ifdef PBD_DOUBLE
#define PBD_BEND_MIN_HEIGHT2 1e-24
#else
#define PBD_BEND_MIN_HEIGHT2 1e-12f
#endif
#define PBD_BEND_MAX_REACH2 PBD_R(1e8)

#define PBD_PI_R PBD_R(3.14159265358979323846)

/* s is a sum of terms K_i a_i that cancel on a flat hinge, so its rounding error is a multiple
 * of the scalar's epsilon times M = sum_i |K_i| |a_i|_1: below PBD_BEND_ISO_FLAT M the direction of s is
 * noise and the hinge counts as flat. A flat-rest hinge (C = |s|) has nothing to do there; a
 * curved-rest one is skipped until it leaves the flat state (no direction back to r0 is
 * preferred). */
#ifdef PBD_DOUBLE
#define PBD_BEND_ISO_FLAT 2e-15
#else
#define PBD_BEND_ISO_FLAT 1e-6f
#endif

/* The hot records of the two families, shared with their vector kernels (simd/). */
/* Isometric: the hinge, its weights K (1/m, summing to zero), the rest length r0 of s (dimensionless,
 * 0 = flat), and s = k' (PBD) or the compliance (XPBD). */
typedef struct pbd_isometric_c {
	uint32_t p[4];
	pbd_real K[4];
	pbd_real rest;
	pbd_real s;
} pbd_isometric_c;

_Static_assert(sizeof(pbd_isometric_c) == 4 * sizeof(uint32_t) + 6 * sizeof(pbd_real), "padding in pbd_isometric_c");

/* Dihedral: the hinge, its rest angle in (-pi, pi], and s = k' (PBD) or the compliance (XPBD). */
typedef struct pbd_dihedral_c {
	uint32_t p[4];
	pbd_real rest;
	pbd_real s;
} pbd_dihedral_c;

_Static_assert(sizeof(pbd_dihedral_c) == 4 * sizeof(uint32_t) + 2 * sizeof(pbd_real), "padding in pbd_dihedral_c");

#ifdef PBD_DOUBLE
#define PBD_ATAN2 atan2
#else
/* atan2 for the float kernels, within about an ulp of pi of the true value: about 3 ns a call
 * where glibc's atan2f (through atanf) takes 12, and the same bits under every C library. The
 * octant is reduced to t in [-tan(pi/8), tan(pi/8)] with one division (above tan(pi/8),
 * atan(a) = pi/4 + atan((a - 1)/(a + 1))), where atan(t) = t + t z P(z), z = t^2, with P fitted
 * by weighted least squares on Chebyshev nodes (relative error 2.1e-8 in exact arithmetic, below
 * the float's half ulp). atan2(0, 0) is 0, and a negative zero y counts as positive (pi, not -pi,
 * for a hinge folded shut). */
static inline float pbd_atan2f(float y, float x) {
	const float ax = fabsf(x), ay = fabsf(y);
	const float hi = ax > ay ? ax : ay, lo = ax > ay ? ay : ax;
	if (!(hi > 0)) return 0;
	float t, r0;
	if (lo > 0.41421356f * hi) {
		t = (lo - hi) / (lo + hi);
		r0 = 0.78539816f;
	} else {
		t = lo / hi;
		r0 = 0;
	}
	const float z = t * t;
	float r = r0 + (t + t * z * (-0.333329672f + z * (0.19978274f + z * (-0.138829081f + z * 0.0806871274f))));
	if (ay > ax) r = 1.57079633f - r;
	if (x < 0) r = 3.14159265f - r;
	return y < 0 ? -r : r;
}
#define PBD_ATAN2 pbd_atan2f
#endif

/* The signed dihedral angle theta of a hinge and its gradients, scaled: g[i] = L dtheta/dx_i with
 * L = |e|, so that they are dimensionless and bounded by the hinge's shape, not its size (the
 * true gradient is g[i] / L). Returns false, writing nothing, for a hinge without a usable angle.
 *
 * In units of L (e' = e/L a unit vector, a' = a/L), n1 = e' x a2' and n2 = a3' x e' are the
 * normals of the two triangles (|n1| = h1/L, h1 the height of x2 over the edge) and
 * theta = atan2((n2 x n1) . e', n1 . n2), in [-pi, pi], exact at 0 and pi where acos(n1 . n2)
 * loses its derivative. A wing turns its triangle about the edge: moving x2 by d along n1/|n1|
 * turns theta by d/h1, so dtheta/dx2 = n1/(|n1| h1) and g2 = n1/|n1|^2, likewise g3 = n2/|n2|^2.
 * The edge's ends take the rest so that the gradients sum to zero (translation) and their
 * moments vanish (rotation): with s = a' . e' the position of a wing's foot along the edge,
 * g0 = -(1 - s2) g2 - (1 - s3) g3 and g1 = -s2 g2 - s3 g3 (Bridson et al. 2003, section 4). */
static inline bool pbd_hinge_dihedral(pbd_vec3 e, pbd_vec3 a2, pbd_vec3 a3, pbd_real* theta, pbd_real* len,
                                      pbd_vec3 g[4]) {
	const pbd_real l2 = pbd_v3_dot(e, e);
	if (!(l2 >= PBD_EPSILON_LENGTH * PBD_EPSILON_LENGTH)) return false;
	const pbd_real reach = PBD_BEND_MAX_REACH2 * l2;
	if (!(pbd_v3_dot(a2, a2) <= reach) || !(pbd_v3_dot(a3, a3) <= reach)) return false;
	const pbd_real l = PBD_SQRT(l2), il = 1 / l;
	const pbd_vec3 u = pbd_v3_scale(e, il), b2 = pbd_v3_scale(a2, il), b3 = pbd_v3_scale(a3, il);
	const pbd_vec3 n1 = pbd_v3_cross(u, b2), n2 = pbd_v3_cross(b3, u);
	const pbd_real q1 = pbd_v3_dot(n1, n1), q2 = pbd_v3_dot(n2, n2);
	if (!(q1 > PBD_BEND_MIN_HEIGHT2) || !(q2 > PBD_BEND_MIN_HEIGHT2)) return false;
	*theta = PBD_ATAN2(pbd_v3_dot(pbd_v3_cross(n2, n1), u), pbd_v3_dot(n1, n2));
	*len = l;
	const pbd_real iq = 1 / (q1 * q2); /* one division for both 1/|n|^2 */
	g[2] = pbd_v3_scale(n1, q2 * iq);
	g[3] = pbd_v3_scale(n2, q1 * iq);
	const pbd_real s2 = pbd_v3_dot(b2, u), s3 = pbd_v3_dot(b3, u);
	g[0] = pbd_v3_add(pbd_v3_scale(g[2], s2 - 1), pbd_v3_scale(g[3], s3 - 1));
	g[1] = pbd_v3_sub(pbd_v3_scale(g[2], -s2), pbd_v3_scale(g[3], s3));
	return true;
}

/* The hinge vectors e, a2, a3 of particles p[0..3] in double from the full positions x + x_lo,
 * for the measurements (rest shapes, diagnostics). */
static inline void pbd_hinge_vectors_d(const pbd_world* w, const uint32_t p[4], double e[3], double a2[3],
                                       double a3[3]) {
	double* out[3] = {e, a2, a3};
	const pbd_vec3 xo = w->x[p[0]], lo = w->x_lo[p[0]];
	for (int j = 0; j < 3; ++j) {
		const pbd_vec3 x = w->x[p[j + 1]], l = w->x_lo[p[j + 1]];
		out[j][0] = ((double)x.x - (double)xo.x) + ((double)l.x - (double)lo.x);
		out[j][1] = ((double)x.y - (double)xo.y) + ((double)l.y - (double)lo.y);
		out[j][2] = ((double)x.z - (double)xo.z) + ((double)l.z - (double)lo.z);
	}
}

/* pbd_hinge_dihedral's angle in double, with the same bounds (a hinge the kernels skip has none
 * here either). */
bool pbd_hinge_dihedral_d(const double e[3], const double a2[3], const double a3[3], double* theta);

/* The isometric weights of a hinge in its rest shape (Bergou et al. 2006, section 4.2, with the
 * normalisation of the energy folded in): K = sqrt(3 / (A2 + A3)) (c12 + c13, c02 + c03,
 * -(c02 + c12), -(c03 + c13)) in 1/m, where c_vt is the cotangent of the angle at edge vertex v
 * (0 or 1) in the triangle of wing t (2 or 3) and A_t that triangle's area. sum_i K_i x_i is then the hinge's
 * mean-curvature vector, of length 2 sin(theta/2) |e| sqrt(3 / (A2 + A3)) when the hinge is a flat one folded by theta.
 * Computed in double from positions relative to x0. Returns false when a triangle has zero area or the weights do not
 * fit the scalar; *kappa receives |e| sqrt(3 / (A2 + A3)). */
bool pbd_hinge_isometric_weights(const double e[3], const double a2[3], const double a3[3], double K[4], double* kappa);

#endif
