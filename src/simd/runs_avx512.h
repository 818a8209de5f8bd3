/* The AVX-512 distance lanes' particle moves for batches whose 16 ends lie in runs of consecutive
 * particles, which a grid cloth's colour groups are largely made of: a row's structural edges of
 * one colour, (p, p + 1), (p + 2, p + 3), ... ("pairs": the 16 ends are one run of 48 floats), and
 * a row of vertical edges, (p + k, p + k + nx) ("rows": two runs of 8). They move as a few wide
 * loads and stores and permutes, where the general path needs 16 moves of 12 bytes and transposes
 * each way; the values are the same bits. Particles outside the batch are neither read nor
 * written: the runs are exactly its particles, and a partial store is masked per particle. Which
 * batches are runs is found once per refresh (constraints/distance.c, PBD_RUN_*). */
#ifndef PBD_SIMD_RUNS_AVX512_H
#define PBD_SIMD_RUNS_AVX512_H

#include "simd/lanes_avx2.h"

/* One coordinate per register, the 8 lanes' a ends in elements 0-7, their b ends in 8-15. */
typedef struct run16 {
	__m512 c[3];
} run16;

static inline __m256 run_lo(__m512 v) { return _mm512_castps512_ps256(v); }
static inline __m256 run_hi(__m512 v) { return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)); }
static inline __m512 run_join(__m256 lo, __m256 hi) {
	return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1));
}

/* Pairs: float 3 i + c of the 48 holds coordinate c of particle a0 + i, and element e of
 * coordinate c comes from float in[e] + c. */
static inline void run_load(const pbd_vec3* p, uint32_t a0, run16* out) {
	const float* f = &p[a0].x;
	const __m512 v0 = _mm512_loadu_ps(f), v1 = _mm512_loadu_ps(f + 16), v2 = _mm512_loadu_ps(f + 32);
	const __m512i in = _mm512_setr_epi32(0, 6, 12, 18, 24, 30, 36, 42, 3, 9, 15, 21, 27, 33, 39, 45);
	const __m512i high = _mm512_set1_epi32(31);
	for (int c = 0; c < 3; ++c) {
		const __m512i idx = _mm512_add_epi32(in, _mm512_set1_epi32(c));
		/* floats 0-31 from v0:v1, 32-47 from v2 (the permute reads the index's low 4 bits) */
		out->c[c] = _mm512_mask_permutexvar_ps(_mm512_permutex2var_ps(v0, idx, v1), _mm512_cmpgt_epi32_mask(idx, high),
		                                       idx, v2);
	}
}

/* Writes the particles whose bit is set in `write` (bit e: element e's particle). Output float f
 * takes element idx & 15 of coordinate f % 3: x below 16, y from 16, z where the z mask is set. */
static inline void run_store(pbd_vec3* p, uint32_t a0, const run16* v, __mmask16 write) {
	const __m512i idx[3] = {_mm512_setr_epi32(0, 16, 0, 8, 24, 8, 1, 17, 1, 9, 25, 9, 2, 18, 2, 10),
	                        _mm512_setr_epi32(26, 10, 3, 19, 3, 11, 27, 11, 4, 20, 4, 12, 28, 12, 5, 21),
	                        _mm512_setr_epi32(5, 13, 29, 13, 6, 22, 6, 14, 30, 14, 7, 23, 7, 15, 31, 15)};
	static const __mmask16 z[3] = {0x4924, 0x2492, 0x9249};
	float* f = &p[a0].x;
	for (int r = 0; r < 3; ++r) {
		const __m512 o =
		    _mm512_mask_permutexvar_ps(_mm512_permutex2var_ps(v->c[0], idx[r], v->c[1]), z[r], idx[r], v->c[2]);
		/* whole batches, the common case, go out as plain stores: a masked one cannot be
		 * forwarded to a later load (lanes_avx2.h) */
		if (write == 0xffff) {
			_mm512_storeu_ps(f + 16 * r, o);
		} else {
			const __m512i element = _mm512_and_si512(idx[r], _mm512_set1_epi32(15));
			const __mmask16 k =
			    _mm512_test_epi32_mask(_mm512_srlv_epi32(_mm512_set1_epi32(write), element), _mm512_set1_epi32(1));
			_mm512_mask_storeu_ps(f + 16 * r, k, o);
		}
	}
}

/* Rows keep their particles' layout instead: a run of 8 is 24 floats, a zmm and a ymm, and the
 * separations are formed float by float, x_a - x_b and q_a - q_b of the same coordinate facing
 * each other in the two runs, then split into coordinates once; the corrections are spread back
 * over the floats the same way. */
typedef struct run24 {
	__m512 lo; /* floats 0-15 */
	__m256 hi; /* floats 16-23 */
} run24;

static inline run24 run24_load(const pbd_vec3* p, uint32_t first) {
	const float* f = &p[first].x;
	return (run24){_mm512_loadu_ps(f), _mm256_loadu_ps(f + 16)};
}
static inline run24 run24_sub(run24 a, run24 b) {
	return (run24){_mm512_sub_ps(a.lo, b.lo), _mm256_sub_ps(a.hi, b.hi)};
}
static inline run24 run24_add(run24 a, run24 b) {
	return (run24){_mm512_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)};
}
/* coordinate c of the 8 particles: float 3 k + c */
static inline __m256 run24_coord(run24 v, int c) {
	const __m512i idx =
	    _mm512_add_epi32(_mm512_setr_epi32(0, 3, 6, 9, 12, 15, 18, 21, 0, 0, 0, 0, 0, 0, 0, 0), _mm512_set1_epi32(c));
	return run_lo(_mm512_permutex2var_ps(v.lo, idx, _mm512_castps256_ps512(v.hi)));
}
/* the particle of each float: k for float 3 k + c */
static inline __m512i run24_particle_lo(void) {
	return _mm512_setr_epi32(0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5);
}
static inline __m256i run24_particle_hi(void) { return _mm256_setr_epi32(5, 5, 6, 6, 6, 7, 7, 7); }
/* lane k's value on its particle's 3 floats */
static inline run24 run24_spread(__m256 v) {
	return (run24){_mm512_permutexvar_ps(run24_particle_lo(), _mm512_castps256_ps512(v)),
	               _mm256_permutexvar_ps(run24_particle_hi(), v)};
}
/* q - d s (sub) or q + d s, on the floats of the particles whose bit is set in `write` only */
static inline run24 run24_update(run24 q, run24 d, run24 s, unsigned write, bool sub) {
	__mmask16 klo = 0xffff;
	__mmask8 khi = 0xff;
	if (write != 0xffu) {
		const __m512i one = _mm512_set1_epi32(1);
		klo = _mm512_test_epi32_mask(_mm512_srlv_epi32(_mm512_set1_epi32((int)write), run24_particle_lo()), one);
		khi = _mm256_test_epi32_mask(_mm256_srlv_epi32(_mm256_set1_epi32((int)write), run24_particle_hi()),
		                             _mm256_set1_epi32(1));
	}
	const __m512 plo = _mm512_maskz_mul_ps(klo, d.lo, s.lo);
	const __m256 phi = _mm256_maskz_mul_ps(khi, d.hi, s.hi);
	if (sub) return (run24){_mm512_mask_sub_ps(q.lo, klo, q.lo, plo), _mm256_mask_sub_ps(q.hi, khi, q.hi, phi)};
	return (run24){_mm512_mask_add_ps(q.lo, klo, q.lo, plo), _mm256_mask_add_ps(q.hi, khi, q.hi, phi)};
}
static inline void run24_store(pbd_vec3* p, uint32_t first, run24 v, unsigned write) {
	float* f = &p[first].x;
	if (write == 0xffu) {
		_mm512_storeu_ps(f, v.lo);
		_mm256_storeu_ps(f + 16, v.hi);
		return;
	}
	const __mmask16 klo = _mm512_test_epi32_mask(_mm512_srlv_epi32(_mm512_set1_epi32((int)write), run24_particle_lo()),
	                                             _mm512_set1_epi32(1));
	const __mmask8 khi = _mm256_test_epi32_mask(_mm256_srlv_epi32(_mm256_set1_epi32((int)write), run24_particle_hi()),
	                                            _mm256_set1_epi32(1));
	_mm512_mask_storeu_ps(f, klo, v.lo);
	_mm256_mask_storeu_ps(f + 16, khi, v.hi);
}

#endif
