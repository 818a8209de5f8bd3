/* Loads and stores of the AVX2 lanes (lanes.h): particles in and out of registers, 12 bytes at a
 * time, and the transposes between one xmm per lane and one ymm per coordinate. */
#ifndef PBD_SIMD_LANES_AVX2_H
#define PBD_SIMD_LANES_AVX2_H

#ifdef PBD_DOUBLE
#error "the AVX2 lanes are built for float only (src/CMakeLists.txt)"
#endif

#include <immintrin.h>

#include "core/core.h"
#include "constraints/lanes.h"

#define LANES PBD_LANES

#ifdef PBD_LANES_AVX512
/* The AVX-512 variant (simd/distance_avx512.c): a particle moves in and out as one masked load or
 * store of exactly its 12 bytes, where AVX2 needs two of each and a shuffle; nothing past the
 * particle is read or written, and a masked-off lane raises no fault. A masked store cannot be
 * forwarded to a load that follows it closely (docs/solvers.md, "SIMD lanes"). */
static inline __m128 load_x(const pbd_vec3* p) { return _mm_maskz_loadu_ps(7, &p->x); }
static inline __m128 load3(const pbd_vec3* p) { return _mm_maskz_loadu_ps(7, &p->x); }
static inline void store3(pbd_vec3* p, __m128 v) { _mm_mask_storeu_ps(&p->x, 7, v); }
#else
/* A committed position, x, y, z and a zero: the 4th float read is the next particle's x, or the
 * arrays' spare element after the last particle (particles.c), and is replaced by 0 in the same
 * instruction, so that no arithmetic sees it. x is not written during the sweeps. */
static inline __m128 load_x(const pbd_vec3* p) { return _mm_blend_ps(_mm_setzero_ps(), _mm_loadu_ps(&p->x), 7); }
/* What the sweeps write (q, dx): exactly the 12 bytes, as 8 + 4, in loads as in stores. A load
 * wider than the particle would overlap stores to the next particle still in flight, which cannot
 * be forwarded (nor can masked stores be), and a wider store would write the next particle, which
 * may be another lane's or another thread's. */
static inline __m128 load3(const pbd_vec3* p) {
	const __m128 xy = _mm_castsi128_ps(_mm_loadl_epi64((const __m128i*)(const void*)&p->x));
	return _mm_insert_ps(xy, _mm_load_ss(&p->z), 0x20);
}
static inline void store3(pbd_vec3* p, __m128 v) {
	_mm_storel_pi((__m64*)(void*)&p->x, v);
	_mm_store_ss(&p->z, _mm_movehl_ps(v, v));
}
#endif

/* Rows j and j + 4 of 8 xmm rows share a ymm, then a 4x4 transpose in each half: column i of
 * the rows in out[i], lane j = row j. */
static inline void transpose(const __m128 r[PBD_LANES], __m256 out[4], int columns) {
	const __m256 r0 = _mm256_set_m128(r[4], r[0]), r1 = _mm256_set_m128(r[5], r[1]);
	const __m256 r2 = _mm256_set_m128(r[6], r[2]), r3 = _mm256_set_m128(r[7], r[3]);
	const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpacklo_ps(r2, r3);
	const __m256 t2 = _mm256_unpackhi_ps(r0, r1), t3 = _mm256_unpackhi_ps(r2, r3);
	out[0] = _mm256_shuffle_ps(t0, t1, 0x44);
	out[1] = _mm256_shuffle_ps(t0, t1, 0xEE);
	out[2] = _mm256_shuffle_ps(t2, t3, 0x44);
	if (columns > 3) out[3] = _mm256_shuffle_ps(t2, t3, 0xEE);
}

/* The inverse for three columns x, y, z: row j of out holds lane j's (x, y, z, 0). */
static inline void untranspose(__m256 x, __m256 y, __m256 z, __m128 out[PBD_LANES]) {
	const __m256 w = _mm256_setzero_ps();
	const __m256 t0 = _mm256_unpacklo_ps(x, y), t1 = _mm256_unpacklo_ps(z, w);
	const __m256 t2 = _mm256_unpackhi_ps(x, y), t3 = _mm256_unpackhi_ps(z, w);
	const __m256 r0 = _mm256_shuffle_ps(t0, t1, 0x44), r1 = _mm256_shuffle_ps(t0, t1, 0xEE);
	const __m256 r2 = _mm256_shuffle_ps(t2, t3, 0x44), r3 = _mm256_shuffle_ps(t2, t3, 0xEE);
	out[0] = _mm256_castps256_ps128(r0);
	out[1] = _mm256_castps256_ps128(r1);
	out[2] = _mm256_castps256_ps128(r2);
	out[3] = _mm256_castps256_ps128(r3);
	out[4] = _mm256_extractf128_ps(r0, 1);
	out[5] = _mm256_extractf128_ps(r1, 1);
	out[6] = _mm256_extractf128_ps(r2, 1);
	out[7] = _mm256_extractf128_ps(r3, 1);
}

#endif
