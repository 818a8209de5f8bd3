/* Constraints on the four particles of a tetrahedron in AVX2 lanes: the edge vectors, and the
 * projections of family.h (pbd_constraint_project, pbd_constraint_jacobi) operation for operation,
 * shared by the volume and Neo-Hookean lanes (docs/solvers.md, "SIMD lanes"). */
#ifndef PBD_SIMD_TET_AVX2_H
#define PBD_SIMD_TET_AVX2_H

#include "simd/v8_avx2.h"

/* 8 tetrahedra: their particles, inverse masses, which of them are free (w > 0), x_i - x_0, and
 * q as the sweep has left it (Gauss-Seidel updates it here as it stores). */
typedef struct tet8 {
	uint32_t p[4][LANES];
	__m256 iw[4], free[4];
	v8 xd[4], q[4];
} tet8;

/* `rec` is the first record's p[0], `words` the record's size in 4-byte words. */
static inline void tet8_load(const pbd_step_ctx* ctx, const uint32_t* rec, int words, tet8* t) {
	for (int i = 0; i < 4; ++i) {
		for (int j = 0; j < LANES; ++j) t->p[i][j] = rec[j * words + i];
		t->iw[i] = iw8(ctx, t->p[i]);
		t->free[i] = _mm256_cmp_ps(t->iw[i], _mm256_setzero_ps(), _CMP_GT_OS);
		t->q[i] = v8_load3(ctx->q, t->p[i]);
	}
	const v8 x0 = v8_load_x(ctx->x, t->p[0]);
	for (int i = 1; i < 4; ++i) t->xd[i] = v8_sub(v8_load_x(ctx->x, t->p[i]), x0);
}

/* pbd_rel(p[i], p[0]) for i = 1..3 into e[0..2]. */
static inline void tet8_edges(const tet8* t, v8 e[3]) {
	for (int i = 1; i < 4; ++i) e[i - 1] = v8_add(t->xd[i], v8_sub(t->q[i], t->q[0]));
}

/* g[0] = -(g[1] + g[2] + g[3]), as the scalar code scales the sum by -1. */
static inline v8 tet8_opposite(const v8 g[4]) { return v8_scale(v8_add(v8_add(g[1], g[2]), g[3]), _mm256_set1_ps(-1)); }

/* The free particles' squared gradients above grad2_min: the scalar code adds only the free
 * ones', from 0; a pinned one's gradient is zeroed first, and adding its 0 changes no sum. */
static inline __m256 tet8_moves(const tet8* t, const v8 g[4], __m256 grad2_min) {
	__m256 free2 = _mm256_setzero_ps();
	for (int i = 0; i < 4; ++i) {
		const v8 gf = v8_keep(g[i], t->free[i]);
		free2 = _mm256_add_ps(free2, v8_dot(gf, gf));
	}
	return _mm256_cmp_ps(free2, grad2_min, _CMP_GT_OS);
}

/* sum_i w_i |g_i|^2 from 0, in the scalar order. */
static inline __m256 tet8_wsum(const __m256 w[4], const v8 g[4]) {
	__m256 wsum = _mm256_setzero_ps();
	for (int i = 0; i < 4; ++i) wsum = _mm256_add_ps(wsum, _mm256_mul_ps(w[i], v8_dot(g[i], g[i])));
	return wsum;
}

/* dlambda of pbd_constraint_project / _jacobi before the Jacobi factor, for the lanes in *act,
 * which it narrows to those with a positive denominator. A lane not in *act has its gradients,
 * C and compliance zeroed by the caller's mask and divides by 1. lambda: XPBD only, one per
 * constraint. */
static inline __m256 tet8_dlambda(const pbd_step_ctx* ctx, __m256* act, __m256 C, __m256 wsum, __m256 s,
                                  float* lambda) {
	const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1), sign = _mm256_set1_ps(-0.0f);
	if (ctx->formulation == PBD_FORMULATION_XPBD) {
		const __m256 at = _mm256_mul_ps(_mm256_and_ps(s, *act), _mm256_set1_ps(ctx->inv_h2));
		const __m256 den = _mm256_add_ps(wsum, at);
		*act = _mm256_and_ps(*act, _mm256_cmp_ps(den, zero, _CMP_GT_OS));
		const __m256 lam = _mm256_loadu_ps(lambda);
		return _mm256_div_ps(_mm256_sub_ps(_mm256_xor_ps(C, sign), _mm256_mul_ps(at, lam)),
		                     _mm256_blendv_ps(one, den, *act));
	}
	*act = _mm256_and_ps(*act, _mm256_cmp_ps(wsum, zero, _CMP_GT_OS));
	return _mm256_div_ps(_mm256_mul_ps(_mm256_xor_ps(s, sign), C), _mm256_blendv_ps(one, wsum, *act));
}

/* lambda += dl on the active lanes (one multiplier per constraint). */
static inline void tet8_lambda_add(float* lambda, __m256 dl, __m256 act) {
	const __m256 lam = _mm256_loadu_ps(lambda);
	_mm256_storeu_ps(lambda, _mm256_blendv_ps(lam, _mm256_add_ps(lam, dl), act));
}

/* Zeroes what the lanes outside act would compute with: gradients and C. */
static inline __m256 tet8_mask(v8 g[4], __m256 C, __m256 act) {
	for (int i = 0; i < 4; ++i) g[i] = v8_keep(g[i], act);
	return _mm256_and_ps(C, act);
}

/* pbd_constraint_project: q_i += g_i (w_i dl) for the free particles of the active lanes, kept in
 * t->q for what follows in the same sweep. */
static inline void tet8_project(const pbd_step_ctx* ctx, tet8* t, __m256 act, __m256 C, v8 g[4], __m256 s,
                                float* lambda) {
	C = tet8_mask(g, C, act);
	const __m256 dl = tet8_dlambda(ctx, &act, C, tet8_wsum(t->iw, g), s, lambda);
	if (ctx->formulation == PBD_FORMULATION_XPBD) tet8_lambda_add(lambda, dl, act);
	for (int i = 0; i < 4; ++i) {
		const __m256 m = _mm256_and_ps(act, t->free[i]);
		t->q[i] = v8_select(t->q[i], v8_add(t->q[i], v8_scale(g[i], _mm256_mul_ps(t->iw[i], dl))), m);
		v8_store3(ctx->q, t->p[i], t->q[i], (unsigned)_mm256_movemask_ps(m));
	}
}

/* The largest degree of the four particles, as a float. */
static inline __m256 tet8_degree(const pbd_step_ctx* ctx, const tet8* t) {
	__m256i d = degree8(ctx, t->p[0]);
	for (int i = 1; i < 4; ++i) d = _mm256_max_epu32(d, degree8(ctx, t->p[i]));
	return _mm256_cvtepi32_ps(d);
}

/* dx_i += g_i (w_i dl) for all four particles of the active lanes, w_i = 1 (equal split) or the
 * inverse mass. */
static inline void tet8_add_dx(const pbd_step_ctx* ctx, const tet8* t, const v8 g[4], const __m256 w[4], __m256 dl,
                               __m256 act) {
	const unsigned m = (unsigned)_mm256_movemask_ps(act);
	for (int i = 0; i < 4; ++i)
		v8_store3(ctx->dx, t->p[i], v8_add(v8_load3(ctx->dx, t->p[i]), v8_scale(g[i], _mm256_mul_ps(w[i], dl))), m);
}

/* pbd_constraint_jacobi: dl = scale dlambda, scale = omega / (max degree + alpha) or 1; with
 * part = 1/2 the Neo-Hookean PBD halves (constraints/tet_neohookean.c, jacobi_half), whose scale
 * is (omega / 2) / (max degree + alpha) or 1/2 (part omega is omega exactly for part = 1). */
static inline void tet8_jacobi(const pbd_step_ctx* ctx, const tet8* t, __m256 act, __m256 C, v8 g[4], __m256 s,
                               float* lambda, float part) {
	const __m256 one = _mm256_set1_ps(1);
	const bool equal = ctx->jacobi_equal;
	const __m256 scale = equal ? _mm256_set1_ps(part)
	                           : _mm256_div_ps(_mm256_set1_ps(part * ctx->jacobi_omega),
	                                           _mm256_add_ps(tet8_degree(ctx, t), _mm256_set1_ps(ctx->jacobi_alpha)));
	const __m256 w[4] = {equal ? one : t->iw[0], equal ? one : t->iw[1], equal ? one : t->iw[2],
	                     equal ? one : t->iw[3]};
	C = tet8_mask(g, C, act);
	const __m256 dl = _mm256_mul_ps(scale, tet8_dlambda(ctx, &act, C, tet8_wsum(w, g), s, lambda));
	if (ctx->formulation == PBD_FORMULATION_XPBD) tet8_lambda_add(lambda, dl, act);
	tet8_add_dx(ctx, t, g, w, dl, act);
}

#endif
