/* 8 particles' vectors as columns (x, y, z in one ymm each), for the lane kernels of the families
 * with one, three or four particles per constraint. The arithmetic is pbd/math.h's, operation
 * for operation, so that every lane rounds as the scalar code does (docs/solvers.md, "SIMD
 * lanes"). */
#ifndef PBD_SIMD_VEC3X8_AVX2_H
#define PBD_SIMD_VEC3X8_AVX2_H

#include "family.h"
#include "simd/lanes_avx2.h"

typedef struct v3x8 {
	__m256 x, y, z;
} v3x8;

static inline v3x8 v3x8_add(v3x8 a, v3x8 b) {
	return (v3x8){_mm256_add_ps(a.x, b.x), _mm256_add_ps(a.y, b.y), _mm256_add_ps(a.z, b.z)};
}
static inline v3x8 v3x8_sub(v3x8 a, v3x8 b) {
	return (v3x8){_mm256_sub_ps(a.x, b.x), _mm256_sub_ps(a.y, b.y), _mm256_sub_ps(a.z, b.z)};
}
static inline v3x8 v3x8_scale(v3x8 a, __m256 s) {
	return (v3x8){_mm256_mul_ps(a.x, s), _mm256_mul_ps(a.y, s), _mm256_mul_ps(a.z, s)};
}
static inline __m256 v3x8_dot(v3x8 a, v3x8 b) {
	return _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(a.x, b.x), _mm256_mul_ps(a.y, b.y)), _mm256_mul_ps(a.z, b.z));
}
static inline v3x8 v3x8_cross(v3x8 a, v3x8 b) {
	return (v3x8){_mm256_sub_ps(_mm256_mul_ps(a.y, b.z), _mm256_mul_ps(a.z, b.y)),
	              _mm256_sub_ps(_mm256_mul_ps(a.z, b.x), _mm256_mul_ps(a.x, b.z)),
	              _mm256_sub_ps(_mm256_mul_ps(a.x, b.y), _mm256_mul_ps(a.y, b.x))};
}
/* Zero where mask is clear: a skipped lane's inputs, before any arithmetic on them. */
static inline v3x8 v3x8_and(v3x8 a, __m256 mask) {
	return (v3x8){_mm256_and_ps(a.x, mask), _mm256_and_ps(a.y, mask), _mm256_and_ps(a.z, mask)};
}
static inline v3x8 v3x8_blend(v3x8 a, v3x8 b, __m256 mask) {
	return (v3x8){_mm256_blendv_ps(a.x, b.x, mask), _mm256_blendv_ps(a.y, b.y, mask), _mm256_blendv_ps(a.z, b.z, mask)};
}

static inline v3x8 v3x8_columns(const __m128 r[LANES]) {
	__m256 col[4];
	transpose(r, col, 3);
	return (v3x8){col[0], col[1], col[2]};
}
/* Committed positions (16-byte reads, load_x) and what the sweeps write (12 bytes, load3). */
static inline v3x8 v3x8_load_x(const pbd_vec3* x, const uint32_t idx[LANES]) {
	__m128 r[LANES];
	for (int j = 0; j < LANES; ++j) r[j] = load_x(&x[idx[j]]);
	return v3x8_columns(r);
}
static inline v3x8 v3x8_load3(const pbd_vec3* q, const uint32_t idx[LANES]) {
	__m128 r[LANES];
	for (int j = 0; j < LANES; ++j) r[j] = load3(&q[idx[j]]);
	return v3x8_columns(r);
}
/* Writes the lanes whose bit is set in `lanes`, 12 bytes each: the columns back into rows (the
 * same 4x4 transposes, with a zero 4th column), lane j and j + 4 in the halves of one ymm. */
static inline void v3x8_store(pbd_vec3* out, const uint32_t idx[LANES], v3x8 v, unsigned lanes) {
	const __m256 zero = _mm256_setzero_ps();
	const __m256 t0 = _mm256_unpacklo_ps(v.x, v.y), t1 = _mm256_unpacklo_ps(v.z, zero);
	const __m256 t2 = _mm256_unpackhi_ps(v.x, v.y), t3 = _mm256_unpackhi_ps(v.z, zero);
	const __m256 r[4] = {_mm256_shuffle_ps(t0, t1, 0x44), _mm256_shuffle_ps(t0, t1, 0xEE),
	                     _mm256_shuffle_ps(t2, t3, 0x44), _mm256_shuffle_ps(t2, t3, 0xEE)};
	for (int j = 0; j < 4; ++j) {
		if (lanes >> j & 1) store3(&out[idx[j]], _mm256_castps256_ps128(r[j]));
		if (lanes >> (j + 4) & 1) store3(&out[idx[j + 4]], _mm256_extractf128_ps(r[j], 1));
	}
}

/* pbd_rel for 8 lanes: (x_i - x_o) + (q_i - q_o). */
static inline v3x8 v3x8_rel(const pbd_step_ctx* ctx, const uint32_t i[LANES], const uint32_t o[LANES]) {
	return v3x8_add(v3x8_sub(v3x8_load_x(ctx->x, i), v3x8_load_x(ctx->x, o)),
	                v3x8_sub(v3x8_load3(ctx->q, i), v3x8_load3(ctx->q, o)));
}

/* A field of 8 consecutive records `stride` bytes apart, from the first one's. */
static inline __m256 field8(const void* first, size_t stride) {
	const int s = (int)(stride / sizeof(float));
	return _mm256_i32gather_ps((const float*)first, _mm256_setr_epi32(0, s, 2 * s, 3 * s, 4 * s, 5 * s, 6 * s, 7 * s),
	                           4);
}
static inline __m256i idx8(const uint32_t idx[LANES]) { return _mm256_loadu_si256((const __m256i*)(const void*)idx); }
/* Inverse masses and degrees of 8 particles. */
static inline __m256 iw8(const pbd_step_ctx* ctx, const uint32_t idx[LANES]) {
	return _mm256_i32gather_ps(ctx->iw, idx8(idx), 4);
}
/* A degree counts constraints, far below 2^31: the signed conversion is the unsigned one. */
static inline __m256i degree8(const pbd_step_ctx* ctx, const uint32_t idx[LANES]) {
	return _mm256_i32gather_epi32((const int*)ctx->degree, idx8(idx), 4);
}

#endif
