/* The multiplier steps of family.h's pbd_constraint_project and pbd_constraint_jacobi in AVX2
 * lanes, for the lanes of a mask: each performs the scalar step's operations in its order, and a
 * lane outside the mask divides by 1, with a compliance of 0, so that it raises nothing. */
#ifndef PBD_SIMD_STEP_AVX2_H
#define PBD_SIMD_STEP_AVX2_H

#include "simd/v8_avx2.h"

/* XPBD: dlambda = scale ((-C - at lambda) / (W + at)), at = s inv_h2, added to the multipliers
 * at `lambda` (8 floats); *act loses the lanes whose denominator is not positive. scale NULL:
 * Gauss-Seidel's unscaled step. */
static inline __m256 lanes_xpbd_step(__m256 s, __m256 W, __m256 C, __m256 inv_h2, const __m256* scale, float* lambda,
                                     __m256* act) {
	const __m256 one = _mm256_set1_ps(1);
	const __m256 at = _mm256_mul_ps(_mm256_and_ps(s, *act), inv_h2), den = _mm256_add_ps(W, at);
	*act = _mm256_and_ps(*act, _mm256_cmp_ps(den, _mm256_setzero_ps(), _CMP_GT_OS));
	const __m256 lam = _mm256_loadu_ps(lambda);
	__m256 dl = _mm256_div_ps(_mm256_sub_ps(v8_neg(C), _mm256_mul_ps(at, lam)), _mm256_blendv_ps(one, den, *act));
	if (scale) dl = _mm256_mul_ps(*scale, dl);
	_mm256_storeu_ps(lambda, _mm256_blendv_ps(lam, _mm256_add_ps(lam, dl), *act));
	return dl;
}

/* PBD: dlambda = scale (-s C / W); *act loses the lanes whose W is not positive. scale NULL:
 * Gauss-Seidel's unscaled step. */
static inline __m256 lanes_pbd_step(__m256 s, __m256 W, __m256 C, const __m256* scale, __m256* act) {
	*act = _mm256_and_ps(*act, _mm256_cmp_ps(W, _mm256_setzero_ps(), _CMP_GT_OS));
	const __m256 r = _mm256_div_ps(_mm256_mul_ps(v8_neg(s), C), _mm256_blendv_ps(_mm256_set1_ps(1), W, *act));
	return scale ? _mm256_mul_ps(*scale, r) : r;
}

#endif
