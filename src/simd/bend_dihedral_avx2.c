/* The dihedral bending family's Gauss-Seidel and Jacobi kernels in AVX2 lanes: 8 consecutive
 * positions of one colour group at a time (docs/solvers.md, "SIMD lanes").
 *
 * Bit-identical to the scalar kernels of constraints/bend_dihedral.c under the rules of
 * distance_avx2.c. pbd_hinge_dihedral's bounds are tested in its order, and a lane that fails one
 * has the inputs of the next steps zeroed (or its divisors set to 1) before they are formed, so
 * that it raises nothing the scalar code would not. The angle is bend.h's PBD_ATAN2, called per
 * active lane. */
#include "constraints/bend.h"
#include "simd/hinge_avx2.h"
#include "constraints/lanes.h"
#include "simd/step_avx2.h"

#define LANES PBD_LANES
#define REC   ((int)(sizeof(pbd_dihedral_c) / sizeof(float)))
_Static_assert(offsetof(pbd_dihedral_c, rest) == 16 && offsetof(pbd_dihedral_c, s) == 20, "records of another shape");

static inline __m256 atan2_lanes(__m256 y, __m256 x, __m256 active) {
	_Alignas(32) float ay[LANES], ax[LANES];
	_mm256_store_ps(ay, y);
	_mm256_store_ps(ax, x);
	const unsigned m = v8_mask_bits(active);
	for (int j = 0; j < LANES; ++j) ay[j] = (m >> j & 1) ? PBD_ATAN2(ay[j], ax[j]) : 0;
	return _mm256_load_ps(ay);
}

/* pbd_hinge_dihedral and the wrap of theta - rest, for the lanes of `on`; returns where the hinge
 * has an angle. */
static inline __m256 evaluate(const hinge8* h, __m256 on, __m256* C, __m256* len, v8 g[4]) {
	const __m256 one = _mm256_set1_ps(1);
	v8 e = v8_keep(h->a[0], on), a2 = v8_keep(h->a[1], on), a3 = v8_keep(h->a[2], on);
	__m256 l2 = v8_dot(e, e);
	__m256 ok =
	    _mm256_and_ps(on, _mm256_cmp_ps(l2, _mm256_set1_ps(PBD_EPSILON_LENGTH * PBD_EPSILON_LENGTH), _CMP_GE_OS));
	a2 = v8_keep(a2, ok);
	a3 = v8_keep(a3, ok);
	const __m256 reach = _mm256_mul_ps(_mm256_set1_ps(PBD_BEND_MAX_REACH2), l2);
	ok = _mm256_and_ps(ok, _mm256_cmp_ps(v8_dot(a2, a2), reach, _CMP_LE_OS));
	ok = _mm256_and_ps(ok, _mm256_cmp_ps(v8_dot(a3, a3), reach, _CMP_LE_OS));
	e = v8_keep(e, ok);
	a2 = v8_keep(a2, ok);
	a3 = v8_keep(a3, ok);
	l2 = _mm256_blendv_ps(one, l2, ok);
	const __m256 l = _mm256_sqrt_ps(l2), il = _mm256_div_ps(one, l);
	const v8 u = v8_scale(e, il), b2 = v8_scale(a2, il), b3 = v8_scale(a3, il);
	const v8 n1 = v8_cross(u, b2), n2 = v8_cross(b3, u);
	__m256 q1 = v8_dot(n1, n1), q2 = v8_dot(n2, n2);
	const __m256 hmin = _mm256_set1_ps(PBD_BEND_MIN_HEIGHT2);
	ok = _mm256_and_ps(ok, _mm256_cmp_ps(q1, hmin, _CMP_GT_OS));
	ok = _mm256_and_ps(ok, _mm256_cmp_ps(q2, hmin, _CMP_GT_OS));
	q1 = _mm256_blendv_ps(one, q1, ok);
	q2 = _mm256_blendv_ps(one, q2, ok);
	const __m256 theta = atan2_lanes(v8_dot(v8_cross(n2, n1), u), v8_dot(n1, n2), ok);
	*len = l;
	const __m256 iq = _mm256_div_ps(one, _mm256_mul_ps(q1, q2));
	g[2] = v8_scale(n1, _mm256_mul_ps(q2, iq));
	g[3] = v8_scale(n2, _mm256_mul_ps(q1, iq));
	const __m256 s2 = v8_dot(b2, u), s3 = v8_dot(b3, u);
	g[0] = v8_add(v8_scale(g[2], _mm256_sub_ps(s2, one)), v8_scale(g[3], _mm256_sub_ps(s3, one)));
	g[1] = v8_sub(v8_scale(g[2], v8_neg(s2)), v8_scale(g[3], s3));
	/* wrap_angle */
	const __m256 c = _mm256_sub_ps(theta, h->rest);
	const __m256 pi = _mm256_set1_ps(PBD_PI_R), two_pi = _mm256_set1_ps(2 * PBD_PI_R);
	const __m256 above = _mm256_cmp_ps(c, pi, _CMP_GT_OS), below = _mm256_cmp_ps(c, v8_neg(pi), _CMP_LT_OS);
	*C = _mm256_blendv_ps(_mm256_blendv_ps(c, _mm256_add_ps(c, two_pi), below), _mm256_sub_ps(c, two_pi), above);
	return ok;
}

/* W = sum_i w_i |g_i|^2, from 0 as the scalar sum */
static inline __m256 weight(const __m256 w[4], const v8 g[4]) {
	__m256 W = _mm256_setzero_ps();
	for (int i = 0; i < 4; ++i) W = _mm256_add_ps(W, _mm256_mul_ps(w[i], v8_dot(g[i], g[i])));
	return W;
}

/* the lanes the scalar kernels do not skip at once: some particle free, and a stiffness (PBD) */
static inline __m256 acting(const hinge8* h, bool xpbd) {
	const __m256 zero = _mm256_setzero_ps();
	const __m256 sum = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(h->w[0], h->w[1]), h->w[2]), h->w[3]);
	const __m256 on = _mm256_cmp_ps(sum, zero, _CMP_NEQ_UQ);
	return xpbd ? on : _mm256_and_ps(on, _mm256_cmp_ps(h->s, zero, _CMP_NEQ_UQ));
}

/* XPBD in units of the hinge (constraints/bend_dihedral.c): mu = scale ((-C - at lambda) /
 * (W + at L^2)), the multipliers grow by mu L^2 and the particles move by w_i g_i (mu L), the
 * factor returned; *act loses the lanes whose denominator is not positive. scale NULL: none. */
static inline __m256 xpbd_factor(__m256 s, __m256 W, __m256 C, __m256 len, __m256 inv_h2, const __m256* scale,
                                 float* lambda, __m256* act) {
	const __m256 one = _mm256_set1_ps(1);
	const __m256 at = _mm256_mul_ps(_mm256_and_ps(s, *act), inv_h2);
	const __m256 den = _mm256_add_ps(W, _mm256_mul_ps(_mm256_mul_ps(at, len), len));
	*act = _mm256_and_ps(*act, _mm256_cmp_ps(den, _mm256_setzero_ps(), _CMP_GT_OS));
	const __m256 lam = _mm256_loadu_ps(lambda);
	__m256 mu = _mm256_div_ps(_mm256_sub_ps(v8_neg(C), _mm256_mul_ps(at, lam)), _mm256_blendv_ps(one, den, *act));
	if (scale) mu = _mm256_mul_ps(*scale, mu);
	_mm256_storeu_ps(lambda,
	                 _mm256_blendv_ps(lam, _mm256_add_ps(lam, _mm256_mul_ps(_mm256_mul_ps(mu, len), len)), *act));
	return _mm256_mul_ps(mu, len);
}

void pbd_bend_dihedral_project_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_dihedral_c* c = (const pbd_dihedral_c*)f->hot;
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD;
	const __m256 inv_h2 = _mm256_set1_ps(ctx->inv_h2);
	for (uint32_t k = first; k < end; k += LANES) {
		hinge8 h;
		hinge8_load(ctx, c[k].p, REC, 2, &h);
		__m256 C, len;
		v8 g[4];
		__m256 act = evaluate(&h, acting(&h, xpbd), &C, &len, g);
		const __m256 W = weight(h.w, g);
		__m256 factor = xpbd ? xpbd_factor(h.s, W, C, len, inv_h2, NULL, f->lambda + k, &act)
		                     : _mm256_mul_ps(lanes_pbd_step(h.s, W, C, NULL, &act), len);
		factor = _mm256_and_ps(factor, act);
		v8 q[4];
		for (int i = 0; i < 4; ++i) q[i] = v8_add(h.q[i], v8_scale(g[i], _mm256_mul_ps(h.w[i], factor)));
		hinge8_store_q(ctx, &h, q, act);
	}
}

void pbd_bend_dihedral_jacobi_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_dihedral_c* c = (const pbd_dihedral_c*)f->hot;
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD, equal = ctx->jacobi_equal;
	const __m256 one = _mm256_set1_ps(1), inv_h2 = _mm256_set1_ps(ctx->inv_h2);
	for (uint32_t k = first; k < end; k += LANES) {
		hinge8 h;
		hinge8_load(ctx, c[k].p, REC, 2, &h);
		const __m256 w[4] = {equal ? one : h.w[0], equal ? one : h.w[1], equal ? one : h.w[2], equal ? one : h.w[3]};
		const __m256 scale = equal ? one : hinge8_jacobi_scale(ctx, &h);
		__m256 C, len;
		v8 g[4];
		__m256 act = evaluate(&h, acting(&h, xpbd), &C, &len, g);
		const __m256 W = weight(w, g);
		__m256 factor = xpbd ? xpbd_factor(h.s, W, C, len, inv_h2, &scale, f->lambda + k, &act)
		                     : _mm256_mul_ps(lanes_pbd_step(h.s, W, C, &scale, &act), len);
		factor = _mm256_and_ps(factor, act);
		/* Jacobi's dx of a particle is its constraints' own: written for pins too, as the scalar
		 * kernel does */
		const unsigned m = v8_mask_bits(act);
		for (int i = 0; i < 4; ++i) {
			const v8 d = v8_load3(ctx->dx, h.p[i]);
			v8_store3(ctx->dx, h.p[i], v8_add(d, v8_scale(g[i], _mm256_mul_ps(w[i], factor))), m);
		}
	}
}
