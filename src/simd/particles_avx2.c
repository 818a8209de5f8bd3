/* The per-particle passes in AVX2 lanes (docs/solvers.md, "SIMD lanes"). A pbd_vec3 array is
 * read as flat floats: 8 particles are 24 floats, 3 ymm, and every operation of these passes is
 * component by component, so lane k of ymm r holds component (8 r + k) mod 3 of particle
 * (8 r + k) / 3 and nothing is transposed. A per-particle value (a mask, a factor) reaches its
 * three components by vpermps.
 *
 * Bit-identical to the scalar loops of particles.c and solver.c, which stay the reference, under
 * the rules of simd/distance_avx2.c: each lane performs the scalar code's IEEE operations in its
 * order, nothing contracts (-ffp-contract=off), compares use the scalar predicates, and a lane
 * the scalar code would skip gets harmless inputs (zeros, a divisor of 1) and its old value back,
 * so that it raises no FP exception the scalar code would not. Whatever only some particles do
 * (targets, external forces, a speed clamp, a non-finite value) is left to the scalar code, a
 * group of 8 at a time; counts are made there alone. Loads and stores cover the group's 8
 * particles exactly: never the arrays' spare element. */
#ifdef PBD_DOUBLE
#error "the AVX2 lanes are built for float only (src/CMakeLists.txt)"
#endif

#include <immintrin.h>

#include <float.h>
#include <string.h>

#include "model/particles_simd.h"

_Static_assert(sizeof(pbd_vec3) == 3 * sizeof(float), "pbd_vec3 is read as 3 consecutive floats");

#define LANES 8

/* 8 particles' vectors, 24 floats */
typedef struct flat {
	__m256 r[3];
} flat;

static inline flat load8(const pbd_vec3* p) {
	const float* f = (const float*)(const void*)p;
	return (flat){{_mm256_loadu_ps(f), _mm256_loadu_ps(f + LANES), _mm256_loadu_ps(f + 2 * LANES)}};
}

static inline void store8(pbd_vec3* p, flat v) {
	float* f = (float*)(void*)p;
	for (int r = 0; r < 3; ++r) _mm256_storeu_ps(f + r * LANES, v.r[r]);
}

/* One vector as 8 particles' worth: x y z x y z x y | z x y z x y z x | y z x y z x y z. */
static inline flat splat3(pbd_vec3 v) {
	return (flat){{_mm256_setr_ps(v.x, v.y, v.z, v.x, v.y, v.z, v.x, v.y),
	               _mm256_setr_ps(v.z, v.x, v.y, v.z, v.x, v.y, v.z, v.x),
	               _mm256_setr_ps(v.y, v.z, v.x, v.y, v.z, v.x, v.y, v.z)}};
}

/* Per-particle lanes (particle k in lane k) to the particles' components. */
static inline flat expand3(__m256 m) {
	return (flat){{_mm256_permutevar8x32_ps(m, _mm256_setr_epi32(0, 0, 0, 1, 1, 1, 2, 2)),
	               _mm256_permutevar8x32_ps(m, _mm256_setr_epi32(2, 3, 3, 3, 4, 4, 4, 5)),
	               _mm256_permutevar8x32_ps(m, _mm256_setr_epi32(5, 5, 6, 6, 6, 7, 7, 7))}};
}

/* 24 component bits (bit j: float j of the group) to the 3 ymm masks */
static inline flat mask_of_bits(uint32_t bits) {
	const __m256i lane = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
	flat m;
	for (int r = 0; r < 3; ++r) {
		const __m256i b = _mm256_set1_epi32((int)(bits >> (r * LANES) & 0xffu));
		m.r[r] = _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(b, lane), lane));
	}
	return m;
}

/* All 8 inverse masses from w[i] positive: the group's particles are free. */
static inline bool all_free(const pbd_real* iw) {
	return _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(iw), _mm256_setzero_ps(), _CMP_GT_OQ)) == 0xff;
}

/* The 8 flags bytes from flags[0], each with only the bits of `bit`. */
static inline uint64_t flags8(const uint8_t* flags, uint8_t bit) {
	uint64_t f;
	memcpy(&f, flags, sizeof f);
	return f & (0x0101010101010101ull * bit);
}

/* particles.c's two_sum, lane-wise */
static inline __m256 two_sum(__m256 a, __m256 b, __m256* err) {
	const __m256 s = _mm256_add_ps(a, b);
	const __m256 bb = _mm256_sub_ps(s, a);
	*err = _mm256_add_ps(_mm256_sub_ps(a, _mm256_sub_ps(s, bb)), _mm256_sub_ps(b, bb));
	return s;
}

uint32_t pbd_particles_predict_avx2(pbd_world* w, pbd_real h, pbd_real damping, uint32_t i, uint32_t end) {
	const bool after_forces = w->def.damping_mode == PBD_DAMPING_AFTER_FORCES;
	const bool damp_before = damping != 1 && !after_forces, damp_after = damping != 1 && after_forces;
	const flat gh = splat3(pbd_v3_scale(w->def.gravity, h));
	const __m256 hh = _mm256_set1_ps(h), d = _mm256_set1_ps(damping);
	for (; end - i >= LANES; i += LANES) {
		if (!all_free(w->w + i) || flags8(w->flags + i, PBD_PARTICLE_FORCE)) break;
		const flat v = load8(w->v + i), vlo = load8(w->v_lo + i), lo = load8(w->x_lo + i);
		flat vo, vlo_o, q;
		for (int r = 0; r < 3; ++r) {
			__m256 vi = v.r[r], vl = vlo.r[r];
			if (damp_before) {
				vi = _mm256_mul_ps(vi, d);
				vl = _mm256_mul_ps(vl, d);
			}
			/* add_compensated(&vi, &vl, gh) */
			vi = two_sum(vi, _mm256_add_ps(vl, gh.r[r]), &vl);
			if (damp_after) {
				vi = _mm256_mul_ps(vi, d);
				vl = _mm256_mul_ps(vl, d);
			}
			vo.r[r] = vi;
			vlo_o.r[r] = vl;
			q.r[r] = _mm256_add_ps(lo.r[r], _mm256_mul_ps(vi, hh));
		}
		store8(w->v + i, vo);
		store8(w->v_lo + i, vlo_o);
		store8(w->q + i, q);
	}
	return i;
}

uint32_t pbd_particles_velocity_avx2(pbd_world* w, pbd_real h, pbd_real inv_h, uint32_t i, uint32_t end) {
	const pbd_real max_speed = w->def.max_speed;
	/* No component above max_speed / 2 leaves the speed at most sqrt(3) / 2 of it, in the scalar
	 * code's double arithmetic too: such a group cannot clamp. A bound rounded in the subnormals
	 * could exceed the half, so a max_speed that small leaves every group to the scalar code. */
	const bool check = max_speed > 0;
	if (check && !(max_speed >= 4 * FLT_MIN)) return i;
	const __m256 half = _mm256_set1_ps(max_speed * 0.5f), sign = _mm256_set1_ps(-0.0f);
	const __m256 hh = _mm256_set1_ps(h), ih = _mm256_set1_ps(inv_h), zero = _mm256_setzero_ps();
	for (; end - i >= LANES; i += LANES) {
		if (!all_free(w->w + i)) break;
		const flat v = load8(w->v + i), vlo = load8(w->v_lo + i), lo = load8(w->x_lo + i), q = load8(w->q + i);
		/* dq = q - (x_lo + v h), and which particles have a component of it other than 0 */
		flat dq;
		uint32_t nz = 0;
		for (int r = 0; r < 3; ++r) {
			dq.r[r] = _mm256_sub_ps(q.r[r], _mm256_add_ps(lo.r[r], _mm256_mul_ps(v.r[r], hh)));
			nz |= (uint32_t)_mm256_movemask_ps(_mm256_cmp_ps(dq.r[r], zero, _CMP_NEQ_UQ)) << (r * LANES);
		}
		const uint32_t any = (nz | nz >> 1 | nz >> 2) & 0x249249u; /* bit 3k: particle k */
		const flat act = mask_of_bits(any | any << 1 | any << 2);
		flat vo, vlo_o;
		__m256 fast = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
		for (int r = 0; r < 3; ++r) {
			/* add_compensated(&vi, &vl, dq / h) where the scalar code calls it */
			const __m256 vi = _mm256_and_ps(v.r[r], act.r[r]), vl = _mm256_and_ps(vlo.r[r], act.r[r]);
			__m256 e;
			const __m256 s = two_sum(vi, _mm256_add_ps(vl, _mm256_mul_ps(dq.r[r], ih)), &e);
			vo.r[r] = _mm256_blendv_ps(v.r[r], s, act.r[r]);
			vlo_o.r[r] = _mm256_blendv_ps(vlo.r[r], e, act.r[r]);
			/* quiet: a NaN goes to the scalar code, whose compare raises what it raises */
			fast = _mm256_and_ps(fast, _mm256_cmp_ps(_mm256_andnot_ps(sign, vo.r[r]), half, _CMP_LE_OQ));
		}
		if (check && _mm256_movemask_ps(fast) != 0xff) break;
		store8(w->v + i, vo);
		store8(w->v_lo + i, vlo_o);
		const flat x = load8(w->x + i);
		flat xo, e;
		for (int r = 0; r < 3; ++r) xo.r[r] = two_sum(x.r[r], q.r[r], &e.r[r]);
		store8(w->x + i, xo);
		store8(w->x_lo + i, e);
	}
	return i;
}

/* Whether all 24 floats are finite: exponent bits not all set, as integers, raising nothing */
static inline bool finite8(const pbd_vec3* p) {
	const flat v = load8(p);
	const __m256i e = _mm256_set1_epi32(0x7f800000);
	__m256i bad = _mm256_setzero_si256();
	for (int r = 0; r < 3; ++r)
		bad = _mm256_or_si256(bad, _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(v.r[r]), e), e));
	return _mm256_testz_si256(bad, bad);
}

uint32_t pbd_particles_end_avx2(pbd_world* w, uint32_t i, uint32_t end) {
	for (; end - i >= LANES; i += LANES) {
		if (!finite8(w->x + i) || !finite8(w->v + i) || !finite8(w->x_lo + i)) break;
		uint64_t f;
		memcpy(&f, w->flags + i, sizeof f);
		f &= ~(0x0101010101010101ull * PBD_PARTICLE_TARGET);
		memcpy(w->flags + i, &f, sizeof f);
	}
	return i;
}

uint32_t pbd_particles_begin_avx2(const pbd_world* w, uint32_t i, uint32_t end) {
	const __m256i t = _mm256_set1_epi8((char)PBD_PARTICLE_TARGET);
	for (; end - i >= 4 * LANES; i += 4 * LANES) {
		const __m256i f = _mm256_loadu_si256((const __m256i*)(const void*)(w->flags + i));
		if (!_mm256_testz_si256(f, t)) break;
	}
	return i;
}

uint32_t pbd_jacobi_apply_avx2(pbd_world* w, uint32_t i, uint32_t end) {
	const bool equal = w->def.jacobi_equal_split;
	const __m256 alpha = _mm256_set1_ps(w->def.jacobi_alpha), omega = _mm256_set1_ps(w->def.jacobi_omega);
	const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1);
	const flat zeros = {{zero, zero, zero}};
	for (; end - i >= LANES; i += LANES) {
		const __m256i deg = _mm256_loadu_si256((const __m256i*)(const void*)(w->degree + i));
		const __m256 has = _mm256_castsi256_ps(
		    _mm256_xor_si256(_mm256_cmpeq_epi32(deg, _mm256_setzero_si256()), _mm256_set1_epi32(-1)));
		const __m256 on = _mm256_and_ps(_mm256_cmp_ps(_mm256_loadu_ps(w->w + i), zero, _CMP_GT_OQ), has);
		const flat act = expand3(on);
		flat f = {{one, one, one}};
		if (equal) {
			/* a degree counts constraints, far below 2^31: the signed conversion is the unsigned one */
			const __m256 den = _mm256_blendv_ps(one, _mm256_add_ps(_mm256_cvtepi32_ps(deg), alpha), on);
			f = expand3(_mm256_div_ps(omega, den));
		}
		const flat q = load8(w->q + i), dx = load8(w->dx + i);
		flat qo;
		for (int r = 0; r < 3; ++r) {
			const __m256 dxa = _mm256_and_ps(dx.r[r], act.r[r]);
			const __m256 inc = equal ? _mm256_mul_ps(dxa, f.r[r]) : dxa;
			qo.r[r] = _mm256_blendv_ps(q.r[r], _mm256_add_ps(q.r[r], inc), act.r[r]);
		}
		store8(w->q + i, qo);
		store8(w->dx + i, zeros);
	}
	return i;
}

uint32_t pbd_chebyshev_avx2(const pbd_world* w, pbd_real omega, pbd_real gamma, uint32_t i, uint32_t end) {
	const __m256 om = _mm256_set1_ps(omega), ga = _mm256_set1_ps(gamma), zero = _mm256_setzero_ps();
	for (; end - i >= LANES; i += LANES) {
		const flat act = expand3(_mm256_cmp_ps(_mm256_loadu_ps(w->w + i), zero, _CMP_NEQ_UQ));
		const flat prev = load8(w->q_prev + i), qk = load8(w->q_iter + i), q = load8(w->q + i);
		store8(w->q_prev + i, qk);
		flat qo;
		for (int r = 0; r < 3; ++r) {
			const __m256 a = _mm256_and_ps(q.r[r], act.r[r]), k = _mm256_and_ps(qk.r[r], act.r[r]);
			const __m256 p = _mm256_and_ps(prev.r[r], act.r[r]);
			const __m256 step = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(a, k), ga), _mm256_sub_ps(k, p));
			qo.r[r] = _mm256_blendv_ps(q.r[r], _mm256_add_ps(_mm256_mul_ps(step, om), p), act.r[r]);
		}
		store8(w->q + i, qo);
	}
	return i;
}
