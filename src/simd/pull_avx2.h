/* The projection of a constraint C = |d| - rest on one particle, along d, in AVX2 lanes: shared by
 * the attachment and long-range attachment lanes, whose scalar kernels make the same operations
 * once each has its d, |d| and active lanes (constraints_attachment.c, constraints_lra.c). */
#ifndef PBD_SIMD_PULL_AVX2_H
#define PBD_SIMD_PULL_AVX2_H

#include "simd/v8_avx2.h"

/* 8 constraints: their particles, inverse masses, records' rest and s, d and |d|, and what the
 * move is added to, q (Gauss-Seidel) or dx (Jacobi). */
typedef struct pull8 {
	uint32_t i[LANES];
	__m256 iw, rest, s, len;
	v8 d, base;
} pull8;

/* XPBD: dlambda = fk ((-C - alpha~ lambda) / (w + alpha~)) (fk only when scaled); gives
 * w dlambda / |d|. A skipped lane's compliance is 0 and its divisors 1. */
static inline __m256 pull8_xpbd(const pbd_step_ctx* ctx, const pull8* l, __m256 act, __m256 C, __m256 w, __m256 fk,
                                bool scaled, float* lambda) {
	const __m256 one = _mm256_set1_ps(1);
	const __m256 at = _mm256_mul_ps(_mm256_and_ps(l->s, act), _mm256_set1_ps(ctx->inv_h2));
	const __m256 lam = _mm256_loadu_ps(lambda);
	const __m256 num = _mm256_sub_ps(_mm256_xor_ps(C, _mm256_set1_ps(-0.0f)), _mm256_mul_ps(at, lam));
	__m256 dl = _mm256_div_ps(num, _mm256_blendv_ps(one, _mm256_add_ps(w, at), act));
	if (scaled) dl = _mm256_mul_ps(fk, dl);
	_mm256_storeu_ps(lambda, _mm256_blendv_ps(lam, _mm256_add_ps(lam, dl), act));
	return _mm256_div_ps(_mm256_mul_ps(w, dl), _mm256_blendv_ps(one, l->len, act));
}

/* PBD: -k' C / |d|. */
static inline __m256 pull8_pbd(const pull8* l, __m256 act, __m256 C) {
	const __m256 num = _mm256_mul_ps(_mm256_xor_ps(l->s, _mm256_set1_ps(-0.0f)), C);
	return _mm256_div_ps(num, _mm256_blendv_ps(_mm256_set1_ps(1), l->len, act));
}

/* Gauss-Seidel: q += d s on the active lanes, C = |d| - rest. */
static inline void pull8_project(const pbd_step_ctx* ctx, const pull8* l, __m256 act, float* lambda) {
	const __m256 C = _mm256_sub_ps(l->len, l->rest);
	const __m256 s = ctx->formulation == PBD_FORMULATION_XPBD ? pull8_xpbd(ctx, l, act, C, l->iw, l->iw, false, lambda)
	                                                          : pull8_pbd(l, act, C);
	v8_store3(ctx->q, l->i, v8_add(l->base, v8_scale(l->d, s)), (unsigned)_mm256_movemask_ps(act));
}

/* Jacobi: dx += d s with the weight w = 1 (equal split) or w_i and the factor
 * fk = omega / (degree + alpha) (mass-weighted). */
static inline void pull8_jacobi(const pbd_step_ctx* ctx, const pull8* l, __m256 act, float* lambda) {
	const __m256 one = _mm256_set1_ps(1);
	const bool equal = ctx->jacobi_equal;
	const __m256 w = equal ? one : l->iw;
	const __m256 fk =
	    equal ? one
	          : _mm256_div_ps(_mm256_set1_ps(ctx->jacobi_omega),
	                          _mm256_add_ps(_mm256_cvtepi32_ps(degree8(ctx, l->i)), _mm256_set1_ps(ctx->jacobi_alpha)));
	const __m256 C = _mm256_sub_ps(l->len, l->rest);
	const __m256 s = ctx->formulation == PBD_FORMULATION_XPBD ? pull8_xpbd(ctx, l, act, C, w, fk, true, lambda)
	                                                          : _mm256_mul_ps(fk, pull8_pbd(l, act, C));
	v8_store3(ctx->dx, l->i, v8_add(l->base, v8_scale(l->d, s)), (unsigned)_mm256_movemask_ps(act));
}

#endif
