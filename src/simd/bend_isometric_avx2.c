/* The isometric bending family's Gauss-Seidel and Jacobi kernels in AVX2 lanes: 8 consecutive
 * positions of one colour group at a time (docs/solvers.md, "SIMD lanes").
 *
 * Bit-identical to the scalar kernels of constraints/bend_isometric.c under the rules of
 * distance_avx2.c: a lane whose hinge the scalar code skips (all pinned, stiffness 0, flat to
 * rounding) has its hinge vectors zeroed and its divisors set to 1 before the arithmetic the scalar
 * code would not perform, and writes nothing. */
#include "constraints/bend.h"
#include "simd/hinge_avx2.h"
#include "constraints/lanes.h"
#include "simd/step_avx2.h"

#define LANES PBD_LANES
#define REC   ((int)(sizeof(pbd_isometric_c) / sizeof(float)))
_Static_assert(offsetof(pbd_isometric_c, K) == 16 && offsetof(pbd_isometric_c, rest) == 32 &&
                   offsetof(pbd_isometric_c, s) == 36,
               "records of another shape");

static inline __m256 abs8(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }

typedef struct iso8 {
	hinge8 h;
	__m256 K[4];
} iso8;

static inline void load(const pbd_step_ctx* ctx, const pbd_isometric_c* c, iso8* t) {
	hinge8_load(ctx, c->p, REC, 6, &t->h);
	__m128 r[LANES];
	for (int j = 0; j < LANES; ++j) r[j] = _mm_loadu_ps(c[j].K);
	transpose(r, t->K, 4);
}

/* evaluate(): |s| and s / |s| for the lanes of `on`; returns where the hinge is not flat. */
static inline __m256 evaluate(const iso8* t, __m256 on, __m256* len, v8* dir) {
	const __m256 one = _mm256_set1_ps(1);
	const v8 a1 = v8_keep(t->h.a[0], on), a2 = v8_keep(t->h.a[1], on), a3 = v8_keep(t->h.a[2], on);
	const v8 s = v8_add(v8_add(v8_scale(a1, t->K[1]), v8_scale(a2, t->K[2])), v8_scale(a3, t->K[3]));
	const __m256 m1 = _mm256_add_ps(_mm256_add_ps(abs8(a1.x), abs8(a1.y)), abs8(a1.z));
	const __m256 m2 = _mm256_add_ps(_mm256_add_ps(abs8(a2.x), abs8(a2.y)), abs8(a2.z));
	const __m256 m3 = _mm256_add_ps(_mm256_add_ps(abs8(a3.x), abs8(a3.y)), abs8(a3.z));
	const __m256 m = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(abs8(t->K[1]), m1), _mm256_mul_ps(abs8(t->K[2]), m2)),
	                               _mm256_mul_ps(abs8(t->K[3]), m3));
	const __m256 s2 = v8_dot(s, s), floor = _mm256_mul_ps(_mm256_set1_ps(PBD_BEND_ISO_FLAT), m);
	__m256 ok = _mm256_and_ps(on, _mm256_cmp_ps(s2, _mm256_mul_ps(floor, floor), _CMP_GT_OS));
	ok = _mm256_and_ps(ok, _mm256_cmp_ps(s2, _mm256_setzero_ps(), _CMP_GT_OS));
	*len = _mm256_sqrt_ps(_mm256_blendv_ps(one, s2, ok));
	*dir = v8_scale(s, _mm256_div_ps(one, *len));
	return ok;
}

void pbd_bend_isometric_project_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_isometric_c* c = (const pbd_isometric_c*)f->hot;
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD;
	const __m256 zero = _mm256_setzero_ps(), inv_h2 = _mm256_set1_ps(ctx->inv_h2);
	for (uint32_t k = first; k < end; k += LANES) {
		iso8 t;
		load(ctx, c + k, &t);
		const __m256* w = t.h.w;
		const __m256* K = t.K;
		__m256 W = _mm256_mul_ps(_mm256_mul_ps(w[0], K[0]), K[0]);
		for (int i = 1; i < 4; ++i) W = _mm256_add_ps(W, _mm256_mul_ps(_mm256_mul_ps(w[i], K[i]), K[i]));
		__m256 on = _mm256_cmp_ps(W, zero, _CMP_GT_OS);
		if (!xpbd) on = _mm256_and_ps(on, _mm256_cmp_ps(t.h.s, zero, _CMP_NEQ_UQ));
		__m256 len;
		v8 dir;
		__m256 act = evaluate(&t, on, &len, &dir);
		const __m256 C = _mm256_sub_ps(len, t.h.rest);
		__m256 dl = xpbd ? lanes_xpbd_step(t.h.s, W, C, inv_h2, NULL, f->lambda + k, &act)
		                 : lanes_pbd_step(t.h.s, W, C, NULL, &act);
		dl = _mm256_and_ps(dl, act);
		v8 q[4];
		for (int i = 0; i < 4; ++i)
			q[i] = v8_add(t.h.q[i], v8_scale(dir, _mm256_mul_ps(_mm256_mul_ps(w[i], K[i]), dl)));
		hinge8_store_q(ctx, &t.h, q, act);
	}
}

void pbd_bend_isometric_jacobi_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_isometric_c* c = (const pbd_isometric_c*)f->hot;
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD, equal = ctx->jacobi_equal;
	const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1), inv_h2 = _mm256_set1_ps(ctx->inv_h2);
	for (uint32_t k = first; k < end; k += LANES) {
		iso8 t;
		load(ctx, c + k, &t);
		const __m256* K = t.K;
		const __m256* iw = t.h.w;
		const __m256 wsum = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(iw[0], iw[1]), iw[2]), iw[3]);
		__m256 on = _mm256_cmp_ps(wsum, zero, _CMP_NEQ_UQ);
		if (!xpbd) on = _mm256_and_ps(on, _mm256_cmp_ps(t.h.s, zero, _CMP_NEQ_UQ));
		const __m256 w[4] = {equal ? one : iw[0], equal ? one : iw[1], equal ? one : iw[2], equal ? one : iw[3]};
		__m256 W = zero;
		for (int i = 0; i < 4; ++i) W = _mm256_add_ps(W, _mm256_mul_ps(_mm256_mul_ps(w[i], K[i]), K[i]));
		const __m256 scale = equal ? one : hinge8_jacobi_scale(ctx, &t.h);
		__m256 len;
		v8 dir;
		__m256 act = evaluate(&t, on, &len, &dir);
		const __m256 C = _mm256_sub_ps(len, t.h.rest);
		__m256 dl = xpbd ? lanes_xpbd_step(t.h.s, W, C, inv_h2, &scale, f->lambda + k, &act)
		                 : lanes_pbd_step(t.h.s, W, C, &scale, &act);
		dl = _mm256_and_ps(dl, act);
		/* Jacobi's dx of a particle is its constraints' own: written for pins too, as the scalar
		 * kernel does */
		const unsigned m = v8_mask_bits(act);
		for (int i = 0; i < 4; ++i) {
			const v8 d = v8_load3(ctx->dx, t.h.p[i]);
			v8_store3(ctx->dx, t.h.p[i], v8_add(d, v8_scale(dir, _mm256_mul_ps(_mm256_mul_ps(w[i], K[i]), dl))), m);
		}
	}
}
