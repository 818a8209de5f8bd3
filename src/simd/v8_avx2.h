/* Eight vec3s in AVX2 lanes, one ymm per coordinate, and the vector operations of pbd/math.h on
 * them: each lane performs the scalar function's float operations in its order, so that a lane
 * kernel written with these rounds as its scalar kernel written with pbd_v3_*. Also the particle
 * loads and stores of 8 constraints' corners (no two lanes share a particle). */
#ifndef PBD_SIMD_V8_AVX2_H
#define PBD_SIMD_V8_AVX2_H

#include "model/family.h"
#include "simd/lanes_avx2.h"

typedef struct v8 {
	__m256 x, y, z;
} v8;

/* -v, as the scalar negation: the sign bit flipped */
static inline __m256 v8_neg(__m256 v) { return _mm256_xor_ps(v, _mm256_set1_ps(-0.0f)); }

static inline v8 v8_add(v8 a, v8 b) {
	return (v8){_mm256_add_ps(a.x, b.x), _mm256_add_ps(a.y, b.y), _mm256_add_ps(a.z, b.z)};
}
static inline v8 v8_sub(v8 a, v8 b) {
	return (v8){_mm256_sub_ps(a.x, b.x), _mm256_sub_ps(a.y, b.y), _mm256_sub_ps(a.z, b.z)};
}
static inline v8 v8_scale(v8 a, __m256 s) {
	return (v8){_mm256_mul_ps(a.x, s), _mm256_mul_ps(a.y, s), _mm256_mul_ps(a.z, s)};
}
static inline __m256 v8_dot(v8 a, v8 b) {
	return _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(a.x, b.x), _mm256_mul_ps(a.y, b.y)), _mm256_mul_ps(a.z, b.z));
}
static inline v8 v8_cross(v8 a, v8 b) {
	return (v8){_mm256_sub_ps(_mm256_mul_ps(a.y, b.z), _mm256_mul_ps(a.z, b.y)),
	            _mm256_sub_ps(_mm256_mul_ps(a.z, b.x), _mm256_mul_ps(a.x, b.z)),
	            _mm256_sub_ps(_mm256_mul_ps(a.x, b.y), _mm256_mul_ps(a.y, b.x))};
}
/* b where the mask is set, else a */
static inline v8 v8_select(v8 a, v8 b, __m256 mask) {
	return (v8){_mm256_blendv_ps(a.x, b.x, mask), _mm256_blendv_ps(a.y, b.y, mask), _mm256_blendv_ps(a.z, b.z, mask)};
}
/* 0 where the mask is clear: the inputs of a lane whose constraint the scalar code skips */
static inline v8 v8_keep(v8 a, __m256 mask) {
	return (v8){_mm256_and_ps(a.x, mask), _mm256_and_ps(a.y, mask), _mm256_and_ps(a.z, mask)};
}

static inline v8 v8_from_rows(const __m128 r[PBD_LANES]) {
	__m256 c[4];
	transpose(r, c, 3);
	return (v8){c[0], c[1], c[2]};
}
/* committed positions of the particles idx[0..8) */
static inline v8 v8_load_x(const pbd_vec3* x, const uint32_t idx[PBD_LANES]) {
	__m128 r[PBD_LANES];
	for (int j = 0; j < PBD_LANES; ++j) r[j] = load_x(&x[idx[j]]);
	return v8_from_rows(r);
}
/* displacements (or Jacobi sums) of the particles idx[0..8) */
static inline v8 v8_load3(const pbd_vec3* q, const uint32_t idx[PBD_LANES]) {
	__m128 r[PBD_LANES];
	for (int j = 0; j < PBD_LANES; ++j) r[j] = load3(&q[idx[j]]);
	return v8_from_rows(r);
}
/* writes lane j into q[idx[j]] where bit j of `lanes` is set */
static inline void v8_store3(pbd_vec3* q, const uint32_t idx[PBD_LANES], v8 v, unsigned lanes) {
	__m128 r[PBD_LANES];
	untranspose(v.x, v.y, v.z, r);
	for (int j = 0; j < PBD_LANES; ++j)
		if (lanes >> j & 1) store3(&q[idx[j]], r[j]);
}

static inline unsigned v8_mask_bits(__m256 mask) { return (unsigned)_mm256_movemask_ps(mask); }

/* pbd_rel for 8 lanes: (x_i - x_o) + (q_i - q_o). */
static inline v8 v8_rel(const pbd_step_ctx* ctx, const uint32_t i[PBD_LANES], const uint32_t o[PBD_LANES]) {
	return v8_add(v8_sub(v8_load_x(ctx->x, i), v8_load_x(ctx->x, o)), v8_sub(v8_load3(ctx->q, i), v8_load3(ctx->q, o)));
}

/* A field of 8 consecutive records `stride` bytes apart, from the first one's. */
static inline __m256 field8(const void* first, size_t stride) {
	const int s = (int)(stride / sizeof(float));
	return _mm256_i32gather_ps((const float*)first, _mm256_setr_epi32(0, s, 2 * s, 3 * s, 4 * s, 5 * s, 6 * s, 7 * s),
	                           4);
}
static inline __m256i idx8(const uint32_t idx[PBD_LANES]) {
	return _mm256_loadu_si256((const __m256i*)(const void*)idx);
}
/* Inverse masses and degrees of 8 particles. */
static inline __m256 iw8(const pbd_step_ctx* ctx, const uint32_t idx[PBD_LANES]) {
	return _mm256_i32gather_ps(ctx->iw, idx8(idx), 4);
}
/* A degree counts constraints, far below 2^31: the signed conversion is the unsigned one. */
static inline __m256i degree8(const pbd_step_ctx* ctx, const uint32_t idx[PBD_LANES]) {
	return _mm256_i32gather_epi32((const int*)ctx->degree, idx8(idx), 4);
}

#endif
