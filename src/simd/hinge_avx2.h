/* The hinges (bend.h) of 8 bending constraints in AVX2 lanes, for the two bending families'
 * vector kernels: their particles, inverse masses, displacements and the hinge vectors relative to
 * x0 as pbd_rel forms them. */
#ifndef PBD_SIMD_HINGE_AVX2_H
#define PBD_SIMD_HINGE_AVX2_H

#include "model/family.h"
#include "simd/v8_avx2.h"

typedef struct hinge8 {
	uint32_t p[4][PBD_LANES]; /* particle i of lane j in p[i][j] */
	__m256i ip[4];
	__m256 w[4]; /* inverse masses */
	v8 q[4];     /* displacements */
	v8 a[3];     /* x1 - x0, x2 - x0, x3 - x0 */
	__m256 rest, s;
} hinge8;

/* rec: the first record, whose first words are the 4 particles; words `tail` .. tail + 3 of each
 * record hold two words and then rest and s; stride: words per record. */
static inline void hinge8_load(const pbd_step_ctx* ctx, const uint32_t* rec, int stride, int tail, hinge8* h) {
	__m128 r[PBD_LANES];
	__m256 col[4];
	for (int j = 0; j < PBD_LANES; ++j) r[j] = _mm_loadu_ps((const float*)(const void*)(rec + j * stride));
	transpose(r, col, 4);
	for (int i = 0; i < 4; ++i) {
		h->ip[i] = _mm256_castps_si256(col[i]);
		_mm256_storeu_si256((__m256i*)(void*)h->p[i], h->ip[i]);
		h->w[i] = _mm256_i32gather_ps(ctx->iw, h->ip[i], 4);
		h->q[i] = v8_load3(ctx->q, h->p[i]);
	}
	for (int j = 0; j < PBD_LANES; ++j) r[j] = _mm_loadu_ps((const float*)(const void*)(rec + j * stride + tail));
	transpose(r, col, 4);
	h->rest = col[2];
	h->s = col[3];
	const v8 x0 = v8_load_x(ctx->x, h->p[0]);
	for (int i = 1; i < 4; ++i) h->a[i - 1] = v8_add(v8_sub(v8_load_x(ctx->x, h->p[i]), x0), v8_sub(h->q[i], h->q[0]));
}

/* The mass-weighted Jacobi factor omega / (max degree + alpha) of pbd_constraint_jacobi. */
static inline __m256 hinge8_jacobi_scale(const pbd_step_ctx* ctx, const hinge8* h) {
	__m256i d = _mm256_i32gather_epi32((const int*)ctx->degree, h->ip[0], 4);
	for (int i = 1; i < 4; ++i) d = _mm256_max_epu32(d, _mm256_i32gather_epi32((const int*)ctx->degree, h->ip[i], 4));
	/* a degree counts constraints, far below 2^31: the signed conversion is the unsigned one */
	return _mm256_div_ps(_mm256_set1_ps(ctx->jacobi_omega),
	                     _mm256_add_ps(_mm256_cvtepi32_ps(d), _mm256_set1_ps(ctx->jacobi_alpha)));
}

/* Gauss-Seidel: moves the free particles of the lanes in `moved` to q; never stores into a pin. */
static inline void hinge8_store_q(const pbd_step_ctx* ctx, const hinge8* h, const v8 q[4], __m256 moved) {
	const __m256 zero = _mm256_setzero_ps();
	for (int i = 0; i < 4; ++i)
		v8_store3(ctx->q, h->p[i], q[i], v8_mask_bits(_mm256_and_ps(moved, _mm256_cmp_ps(h->w[i], zero, _CMP_GT_OQ))));
}

#endif
