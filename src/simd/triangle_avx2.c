/* The triangle strain family's Gauss-Seidel and Jacobi kernels in AVX2 lanes: 8 consecutive
 * positions of one colour group at a time (docs/solvers.md, "SIMD lanes").
 *
 * Bit-identical to the scalar kernels of constraints/triangle.c under the rules of
 * distance_avx2.c. A triangle's three parts are a chain, each seeing the corners the previous one
 * moved, and whether a part acts differs from lane to lane: a lane whose part the scalar code skips
 * keeps its corners, edges and multiplier through a select, and its inputs are zeroed or replaced
 * by 1 before the operations the scalar code would not perform, so that it raises nothing. The
 * shear's atanf is libm's, called per active lane. */
#include <string.h>

#include "constraints/triangle.h"
#include "constraints/lanes.h"
#include "simd/step_avx2.h"
#include "simd/v8_avx2.h"
#include "constraints/strain.h"

#define LANES PBD_LANES

/* The records of 8 constraints and their corners' inverse masses. */
typedef struct tri8 {
	uint32_t a[LANES], b[LANES], c[LANES];
	__m256 dm[4], s[2];
	__m256 wa, wb, wc;
} tri8;

static inline void load_records(const pbd_step_ctx* ctx, const pbd_triangle_c* c, tri8* t) {
	__m128 r[LANES];
	__m256 col[4];
	for (int j = 0; j < LANES; ++j) {
		t->a[j] = c[j].a;
		t->b[j] = c[j].b;
		t->c[j] = c[j].c;
		r[j] = _mm_loadu_ps(c[j].dm);
	}
	transpose(r, t->dm, 4);
	for (int j = 0; j < LANES; ++j) r[j] = _mm_loadu_ps(&c[j].dm[2]); /* dm[2], dm[3], s[0], s[1] */
	transpose(r, col, 4);
	t->s[0] = col[2];
	t->s[1] = col[3];
	const __m256i ia = _mm256_loadu_si256((const __m256i*)(const void*)t->a);
	const __m256i ib = _mm256_loadu_si256((const __m256i*)(const void*)t->b);
	const __m256i ic = _mm256_loadu_si256((const __m256i*)(const void*)t->c);
	t->wa = _mm256_i32gather_ps(ctx->iw, ia, 4);
	t->wb = _mm256_i32gather_ps(ctx->iw, ib, 4);
	t->wc = _mm256_i32gather_ps(ctx->iw, ic, 4);
}

/* The multipliers of 8 constraints, 3 each, as one ymm per part. */
typedef struct lambdas {
	_Alignas(32) float v[3][LANES];
} lambdas;

static inline void lambdas_load(const float* lambda, lambdas* l) {
	for (int j = 0; j < LANES; ++j)
		for (int p = 0; p < 3; ++p) l->v[p][j] = lambda[3 * j + p];
}
static inline void lambdas_store(float* lambda, const lambdas* l) {
	for (int j = 0; j < LANES; ++j)
		for (int p = 0; p < 3; ++p) lambda[3 * j + p] = l->v[p][j];
}

/* The records of 8 constraints and, for XPBD, their multipliers. */
static inline void load_block(const pbd_step_ctx* ctx, const pbd_triangle_c* c, const float* lambda, bool xpbd, tri8* t,
                              lambdas* lam) {
	load_records(ctx, c, t);
	if (xpbd) lambdas_load(lambda, lam);
}

/* pbd_strain_column */
static inline v8 column(const tri8* t, v8 e1, v8 e2, int m) {
	return v8_add(v8_scale(e1, t->dm[m]), v8_scale(e2, t->dm[2 + m]));
}

static inline __m256 atan_lanes(__m256 v, __m256 active) {
	_Alignas(32) float a[LANES];
	_mm256_store_ps(a, v);
	const unsigned m = v8_mask_bits(active);
	for (int j = 0; j < LANES; ++j) a[j] = (m >> j & 1) ? PBD_ATAN(a[j]) : 0;
	return _mm256_load_ps(a);
}

/* pbd_strain_part's stretch (j = 0, 1) for the lanes of `on`; returns where it has a direction. */
static inline __m256 stretch_part(const tri8* t, v8 e1, v8 e2, int j, __m256 on, __m256* C, v8 g[3]) {
	const __m256 one = _mm256_set1_ps(1);
	const __m256 cb = t->dm[j], cc = t->dm[2 + j];
	const v8 fv = column(t, v8_keep(e1, on), v8_keep(e2, on), j);
	const __m256 l2 = v8_dot(fv, fv);
	const __m256 ok = _mm256_and_ps(on, _mm256_cmp_ps(l2, _mm256_set1_ps(PBD_STRAIN_STRETCH_MIN2), _CMP_GT_OS));
	const __m256 len = _mm256_sqrt_ps(_mm256_blendv_ps(one, l2, ok));
	const v8 n = v8_scale(fv, _mm256_div_ps(one, len));
	*C = _mm256_sub_ps(len, one);
	g[1] = v8_scale(n, cb);
	g[2] = v8_scale(n, cc);
	g[0] = v8_scale(n, v8_neg(_mm256_add_ps(cb, cc)));
	return ok;
}

/* pbd_strain_part's shear (j = 2) for the lanes of `on`; returns where it has a direction. */
static inline __m256 shear_part(const tri8* t, v8 e1, v8 e2, __m256 on, __m256* C, v8 g[3]) {
	const __m256 one = _mm256_set1_ps(1);
	v8 fu = column(t, v8_keep(e1, on), v8_keep(e2, on), 0), fv = column(t, v8_keep(e1, on), v8_keep(e2, on), 1);
	__m256 lu2 = v8_dot(fu, fu), lv2 = v8_dot(fv, fv);
	const __m256 lo = _mm256_set1_ps(PBD_STRAIN_SHEAR_MIN2), hi = _mm256_set1_ps(PBD_STRAIN_SHEAR_MAX2);
	__m256 ok = _mm256_and_ps(_mm256_and_ps(on, _mm256_cmp_ps(lu2, lo, _CMP_GT_OS)),
	                          _mm256_and_ps(_mm256_cmp_ps(lv2, lo, _CMP_GT_OS), _mm256_cmp_ps(lu2, hi, _CMP_LT_OS)));
	ok = _mm256_and_ps(ok, _mm256_cmp_ps(lv2, hi, _CMP_LT_OS));
	/* the skipped lanes' axes may be long enough for their products to overflow */
	fu = v8_keep(fu, ok);
	fv = v8_keep(fv, ok);
	lu2 = _mm256_and_ps(lu2, ok);
	lv2 = _mm256_and_ps(lv2, ok);
	const v8 n = v8_cross(fu, fv);
	const __m256 d = v8_dot(fu, fv), a2 = v8_dot(n, n);
	const __m256 l2 = _mm256_mul_ps(lu2, lv2);
	ok = _mm256_and_ps(ok, _mm256_cmp_ps(a2, _mm256_mul_ps(_mm256_set1_ps(PBD_STRAIN_SHEAR_SIN2), l2), _CMP_GT_OS));
	const __m256 ia = _mm256_div_ps(one, _mm256_sqrt_ps(_mm256_blendv_ps(one, a2, ok)));
	const __m256 il = _mm256_div_ps(one, _mm256_blendv_ps(one, l2, ok));
	const __m256 dia = _mm256_mul_ps(d, ia);
	*C = atan_lanes(dia, ok);
	const __m256 k = _mm256_mul_ps(dia, il);
	const v8 gu = v8_sub(v8_scale(fv, ia), v8_scale(fu, _mm256_mul_ps(k, lv2)));
	const v8 gv = v8_sub(v8_scale(fu, ia), v8_scale(fv, _mm256_mul_ps(k, lu2)));
	g[1] = v8_add(v8_scale(gu, t->dm[0]), v8_scale(gv, t->dm[1]));
	g[2] = v8_add(v8_scale(gu, t->dm[2]), v8_scale(gv, t->dm[3]));
	g[0] = v8_scale(v8_add(g[1], g[2]), _mm256_set1_ps(-1));
	return ok;
}

static void project_block(const pbd_step_ctx* ctx, const pbd_triangle_c* c, float* lambda) {
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD;
	const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1), all = _mm256_cmp_ps(zero, zero, _CMP_EQ_OQ);
	const __m256 inv_h2 = _mm256_set1_ps(ctx->inv_h2);
	tri8 t;
	lambdas lam;
	load_block(ctx, c, lambda, xpbd, &t, &lam);
	v8 qa = v8_load3(ctx->q, t.a), qb = v8_load3(ctx->q, t.b), qc = v8_load3(ctx->q, t.c);
	const v8 xa = v8_load_x(ctx->x, t.a);
	v8 e1 = v8_add(v8_sub(v8_load_x(ctx->x, t.b), xa), v8_sub(qb, qa));
	v8 e2 = v8_add(v8_sub(v8_load_x(ctx->x, t.c), xa), v8_sub(qc, qa));
	const __m256 ss = t.s[0], sh = t.s[1];
	const __m256 on_s = xpbd ? all : _mm256_cmp_ps(ss, zero, _CMP_NEQ_UQ);
	for (int j = 0; j < 2; ++j) {
		const __m256 cb = t.dm[j], ccf = t.dm[2 + j], ca = v8_neg(_mm256_add_ps(cb, ccf));
		const v8 fv = column(&t, v8_keep(e1, on_s), v8_keep(e2, on_s), j);
		const __m256 l2 = v8_dot(fv, fv);
		__m256 act = _mm256_and_ps(on_s, _mm256_cmp_ps(l2, _mm256_set1_ps(PBD_STRAIN_STRETCH_MIN2), _CMP_GT_OS));
		const __m256 len = _mm256_sqrt_ps(_mm256_blendv_ps(one, l2, act));
		const __m256 C = _mm256_sub_ps(len, one);
		const __m256 W = _mm256_add_ps(
		    _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(t.wa, ca), ca), _mm256_mul_ps(_mm256_mul_ps(t.wb, cb), cb)),
		    _mm256_mul_ps(_mm256_mul_ps(t.wc, ccf), ccf));
		__m256 tt;
		if (xpbd) {
			const __m256 at = _mm256_mul_ps(_mm256_and_ps(ss, act), inv_h2), den = _mm256_add_ps(W, at);
			act = _mm256_and_ps(act, _mm256_cmp_ps(den, zero, _CMP_GT_OS));
			const __m256 l = _mm256_load_ps(lam.v[j]);
			const __m256 num = _mm256_sub_ps(v8_neg(C), _mm256_mul_ps(at, l));
			tt = _mm256_div_ps(num, _mm256_blendv_ps(one, _mm256_mul_ps(den, len), act));
			_mm256_store_ps(lam.v[j], _mm256_blendv_ps(l, _mm256_add_ps(l, _mm256_mul_ps(tt, len)), act));
		} else {
			act = _mm256_and_ps(act, _mm256_cmp_ps(W, zero, _CMP_GT_OS));
			tt = _mm256_div_ps(_mm256_mul_ps(v8_neg(ss), C), _mm256_blendv_ps(one, _mm256_mul_ps(W, len), act));
		}
		tt = _mm256_and_ps(tt, act);
		const v8 da = v8_scale(fv, _mm256_mul_ps(_mm256_mul_ps(t.wa, ca), tt));
		const v8 db = v8_scale(fv, _mm256_mul_ps(_mm256_mul_ps(t.wb, cb), tt));
		const v8 dc = v8_scale(fv, _mm256_mul_ps(_mm256_mul_ps(t.wc, ccf), tt));
		qa = v8_select(qa, v8_add(qa, da), act);
		qb = v8_select(qb, v8_add(qb, db), act);
		qc = v8_select(qc, v8_add(qc, dc), act);
		e1 = v8_select(e1, v8_add(e1, v8_sub(db, da)), act);
		e2 = v8_select(e2, v8_add(e2, v8_sub(dc, da)), act);
	}
	{
		__m256 C;
		v8 g[3];
		__m256 act = shear_part(&t, e1, e2, xpbd ? all : _mm256_cmp_ps(sh, zero, _CMP_NEQ_UQ), &C, g);
		const __m256 W = _mm256_add_ps(
		    _mm256_add_ps(_mm256_mul_ps(t.wa, v8_dot(g[0], g[0])), _mm256_mul_ps(t.wb, v8_dot(g[1], g[1]))),
		    _mm256_mul_ps(t.wc, v8_dot(g[2], g[2])));
		__m256 dl =
		    xpbd ? lanes_xpbd_step(sh, W, C, inv_h2, NULL, lam.v[2], &act) : lanes_pbd_step(sh, W, C, NULL, &act);
		dl = _mm256_and_ps(dl, act);
		qa = v8_select(qa, v8_add(qa, v8_scale(g[0], _mm256_mul_ps(t.wa, dl))), act);
		qb = v8_select(qb, v8_add(qb, v8_scale(g[1], _mm256_mul_ps(t.wb, dl))), act);
		qc = v8_select(qc, v8_add(qc, v8_scale(g[2], _mm256_mul_ps(t.wc, dl))), act);
	}
	if (xpbd) lambdas_store(lambda, &lam);
	/* as the scalar kernel: every free corner is written, no pinned one */
	v8_store3(ctx->q, t.a, qa, v8_mask_bits(_mm256_cmp_ps(t.wa, zero, _CMP_GT_OQ)));
	v8_store3(ctx->q, t.b, qb, v8_mask_bits(_mm256_cmp_ps(t.wb, zero, _CMP_GT_OQ)));
	v8_store3(ctx->q, t.c, qc, v8_mask_bits(_mm256_cmp_ps(t.wc, zero, _CMP_GT_OQ)));
}

void pbd_triangle_project_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_triangle_c* c = (const pbd_triangle_c*)f->hot;
	for (uint32_t k = first; k < end; k += LANES) project_block(ctx, c + k, f->lambda + 3 * (size_t)k);
}

/* constraints/triangle.c's jacobi: the three parts from the same edges through
 * pbd_constraint_jacobi, each adding to dx in turn. */
static void jacobi_block(const pbd_step_ctx* ctx, const pbd_triangle_c* c, float* lambda) {
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD, equal = ctx->jacobi_equal;
	const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1), all = _mm256_cmp_ps(zero, zero, _CMP_EQ_OQ);
	const __m256 inv_h2 = _mm256_set1_ps(ctx->inv_h2);
	tri8 t;
	lambdas lam;
	load_block(ctx, c, lambda, xpbd, &t, &lam);
	__m256 w[3] = {one, one, one}, scale = one;
	if (!equal) {
		w[0] = t.wa;
		w[1] = t.wb;
		w[2] = t.wc;
		const __m256i da = _mm256_i32gather_epi32((const int*)ctx->degree, _mm256_loadu_si256((const void*)t.a), 4);
		const __m256i db = _mm256_i32gather_epi32((const int*)ctx->degree, _mm256_loadu_si256((const void*)t.b), 4);
		const __m256i dc = _mm256_i32gather_epi32((const int*)ctx->degree, _mm256_loadu_si256((const void*)t.c), 4);
		/* a degree counts constraints, far below 2^31: the signed conversion is the unsigned one */
		const __m256 deg = _mm256_cvtepi32_ps(_mm256_max_epu32(_mm256_max_epu32(da, db), dc));
		scale = _mm256_div_ps(_mm256_set1_ps(ctx->jacobi_omega), _mm256_add_ps(deg, _mm256_set1_ps(ctx->jacobi_alpha)));
	}
	const v8 qa = v8_load3(ctx->q, t.a), xa = v8_load_x(ctx->x, t.a);
	const v8 e1 = v8_add(v8_sub(v8_load_x(ctx->x, t.b), xa), v8_sub(v8_load3(ctx->q, t.b), qa));
	const v8 e2 = v8_add(v8_sub(v8_load_x(ctx->x, t.c), xa), v8_sub(v8_load3(ctx->q, t.c), qa));
	v8 d[3] = {v8_load3(ctx->dx, t.a), v8_load3(ctx->dx, t.b), v8_load3(ctx->dx, t.c)};
	__m256 any = zero;
	for (int j = 0; j < 3; ++j) {
		const __m256 s = t.s[j >> 1];
		const __m256 on = xpbd ? all : _mm256_cmp_ps(s, zero, _CMP_NEQ_UQ);
		__m256 C;
		v8 g[3];
		__m256 act = j < 2 ? stretch_part(&t, e1, e2, j, on, &C, g) : shear_part(&t, e1, e2, on, &C, g);
		__m256 wsum = zero;
		for (int i = 0; i < 3; ++i) wsum = _mm256_add_ps(wsum, _mm256_mul_ps(w[i], v8_dot(g[i], g[i])));
		__m256 dl = xpbd ? lanes_xpbd_step(s, wsum, C, inv_h2, &scale, lam.v[j], &act)
		                 : lanes_pbd_step(s, wsum, C, &scale, &act);
		dl = _mm256_and_ps(dl, act);
		for (int i = 0; i < 3; ++i) d[i] = v8_select(d[i], v8_add(d[i], v8_scale(g[i], _mm256_mul_ps(w[i], dl))), act);
		any = _mm256_or_ps(any, act);
	}
	if (xpbd) lambdas_store(lambda, &lam);
	/* the scalar kernel writes the corners of a constraint with an acting part, pinned or not:
	 * Jacobi's dx of a particle is its constraints' own */
	const unsigned m = v8_mask_bits(any);
	v8_store3(ctx->dx, t.a, d[0], m);
	v8_store3(ctx->dx, t.b, d[1], m);
	v8_store3(ctx->dx, t.c, d[2], m);
}

void pbd_triangle_jacobi_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_triangle_c* c = (const pbd_triangle_c*)f->hot;
	for (uint32_t k = first; k < end; k += LANES) jacobi_block(ctx, c + k, f->lambda + 3 * (size_t)k);
}
