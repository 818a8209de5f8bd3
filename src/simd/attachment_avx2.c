/* The attachment family's kernels in AVX2 lanes, 8 consecutive positions of one colour group at
 * a time, bit-identical to constraints/attachment.c's under the rules of distance_avx2.c: each
 * lane makes the scalar code's operations in its order, a lane the scalar code skips (a pinned
 * particle, one on its point) is zeroed before its arithmetic and not written. */
#include <stddef.h>

#include "constraints/attachment.h"
#include "constraints/lanes.h"
#include "simd/v8_avx2.h"

#define REC sizeof(pbd_attachment_c)

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

/* The particles' offsets d = (x - p) + q from their points p at the substep's fraction t,
 * p = from + (to - from) t (constraints/attachment.c, offset), and |d|. The scalar code skips a
 * pinned particle before it forms d: its lane's d becomes 0, whose length fails the test as well.
 * Gives the lanes that act. */
static inline __m256 load_lanes(const pbd_step_ctx* ctx, const pbd_attachment_c* c, const pbd_vec3* base, pull8* l) {
	for (int j = 0; j < LANES; ++j) l->i[j] = c[j].i;
	l->iw = iw8(ctx, l->i);
	l->rest = field8(&c->rest, REC);
	l->s = field8(&c->s, REC);
	const v8 from = {field8(&c->from.x, REC), field8(&c->from.y, REC), field8(&c->from.z, REC)};
	const v8 to = {field8(&c->to.x, REC), field8(&c->to.y, REC), field8(&c->to.z, REC)};
	const v8 p = v8_add(from, v8_scale(v8_sub(to, from), _mm256_set1_ps(ctx->substep_fraction)));
	const v8 q = v8_load3(ctx->q, l->i);
	l->base = base == ctx->q ? q : v8_load3(base, l->i);
	const __m256 act = _mm256_cmp_ps(l->iw, _mm256_setzero_ps(), _CMP_NEQ_UQ);
	l->d = v8_keep(v8_add(v8_sub(v8_load_x(ctx->x, l->i), p), q), act);
	l->len = _mm256_sqrt_ps(v8_dot(l->d, l->d));
	return _mm256_and_ps(act, _mm256_cmp_ps(l->len, _mm256_set1_ps(PBD_EPSILON_LENGTH), _CMP_GE_OS));
}

/* A batch with an attachment to a body goes to the scalar kernel whole: its constraints share no
 * node (one colour), so which of them runs in lanes changes no bit. */
static bool has_body(const pbd_attachment_c* c) {
	uint32_t any = 0;
	for (int j = 0; j < LANES; ++j) any |= c[j].body;
	return any != 0;
}

static void sweep(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end, bool jacobi) {
	pbd_attachment_c* c = (pbd_attachment_c*)f->hot;
	pbd_attachment_settle(ctx, c, first, end);
	for (uint32_t k = first; k < end; k += LANES) {
		if (has_body(&c[k])) {
			(jacobi ? pbd_attachment_jacobi : pbd_attachment_project)(ctx, f, k, k + LANES);
			continue;
		}
		pull8 l;
		const __m256 act = load_lanes(ctx, &c[k], jacobi ? ctx->dx : ctx->q, &l);
		(jacobi ? pull8_jacobi : pull8_project)(ctx, &l, act, f->lambda + k);
	}
}

void pbd_attachment_project_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	sweep(ctx, f, first, end, false);
}

void pbd_attachment_jacobi_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	sweep(ctx, f, first, end, true);
}
