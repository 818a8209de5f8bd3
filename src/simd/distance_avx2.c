/* The distance family's Gauss-Seidel and Jacobi kernels in AVX2 lanes: 8 consecutive positions
 * of one colour group at a time (docs/solvers.md, "SIMD lanes").
 *
 * Bit-identical to the scalar kernels of constraints/distance.c, which stay the reference:
 * - The constraints of a colour group share no particle, so reading the 8 constraints' particles
 *   before writing any is what the scalar loop would read, and a particle's Jacobi sum receives
 *   its terms in the same order.
 * - Each lane performs the scalar code's IEEE operations in its order (vsqrtps and vdivps are
 *   correctly rounded like their scalar forms, no reciprocal estimates), and this file is built
 *   with -ffp-contract=off like the rest, so that no multiply and add fuse.
 * - Compares use the predicates the scalar code compiles to: signalling for <, <=, >= (comiss),
 *   quiet for == (ucomiss), so a NaN raises the same FE_INVALID.
 * - Where the scalar code skips a constraint before an operation, the lane's inputs are first made
 *   harmless (d = 0, a divisor of 1), so that a skipped lane raises no FP exception the scalar code
 *   would not, and its particles are not written at all.
 * - A pbd_vec3 is 12 bytes: what the kernels write is read and written as exactly 12 (load3,
 *   store3); only the committed positions, which no sweep writes, are read as 16 (load_x). */
#include <stddef.h>

#include "constraints/distance.h"
#include "methods/hierarchy.h"
#include "simd/lanes_avx2.h"
#ifdef PBD_LANES_AVX512
#include "simd/runs_avx512.h"
#endif

/* Words per coarse record {a, b, rest, wa, wb}, which the coarse kernel reads as 5 words from
 * the first one's a; the distance kernels read the family's copy field by field
 * (pbd_distance_lanes). */
#define REC ((int)(sizeof(pbd_coarse_c) / sizeof(float)))
_Static_assert(sizeof(pbd_coarse_c) == 5 * sizeof(float) && offsetof(pbd_coarse_c, rest) == 8 &&
                   offsetof(pbd_coarse_c, wb) == 16,
               "records of another shape");

/* The AVX-512 variant (distance_avx512.c) is this file again with PBD_LANES_AVX512 defined: its
 * particle moves (lanes_avx2.h) are masked loads and stores, the rest is the same. */
#ifdef PBD_LANES_AVX512
#define LANES_FN(name) name##_avx512
#else
#define LANES_FN(name) name##_avx2
#endif

/* 8 constraints: their records' fields and their separations d = (x_a - x_b) + (q_a - q_b),
 * per lane as xmm (w = 0) and transposed into dx, dy, dz. */
typedef struct lanes {
	__m128 d[LANES], qa[LANES], qb[LANES];
	__m256 dx, dy, dz;
	__m256i ia, ib;      /* the ends */
	__m256 rest, s0, s1; /* the records' other fields */
} lanes;

/* The ends of lane j: a[j * stride], b[j * stride]. */
typedef struct ends {
	const uint32_t *a, *b;
	int stride;
} ends;

static inline void load_params(const pbd_distance_lanes* v, uint32_t k, lanes* l) {
	l->rest = _mm256_loadu_ps(v->rest + k);
	l->s0 = _mm256_loadu_ps(v->s0 + k);
	l->s1 = _mm256_loadu_ps(v->s1 + k);
}

static inline void load_fields(const pbd_distance_lanes* v, uint32_t k, lanes* l) {
	l->ia = _mm256_loadu_si256((const __m256i*)(const void*)(v->a + k));
	l->ib = _mm256_loadu_si256((const __m256i*)(const void*)(v->b + k));
	load_params(v, k, l);
}

static inline void load_records(const uint32_t* rec, lanes* l) {
	/* the first 16 bytes of each 20-byte record, {a, b, rest, wa}, moved as bits; wb gathered */
	__m128 r[LANES];
	__m256 col[4];
	for (int j = 0; j < LANES; ++j) r[j] = _mm_loadu_ps((const float*)(const void*)(rec + j * REC));
	transpose(r, col, 4);
	l->ia = _mm256_castps_si256(col[0]);
	l->ib = _mm256_castps_si256(col[1]);
	l->rest = col[2];
	l->s0 = col[3];
	l->s1 = _mm256_i32gather_ps((const float*)(const void*)(rec + 4),
	                            _mm256_setr_epi32(0, REC, 2 * REC, 3 * REC, 4 * REC, 5 * REC, 6 * REC, 7 * REC), 4);
}

static inline void load_particles(const pbd_step_ctx* ctx, ends e, lanes* l) {
	const pbd_vec3* x = ctx->x;
	const pbd_vec3* q = ctx->q;
	__m256 col[4];
	for (int j = 0; j < LANES; ++j) {
		const uint32_t a = e.a[j * e.stride], b = e.b[j * e.stride];
		l->qa[j] = load3(&q[a]);
		l->qb[j] = load3(&q[b]);
		l->d[j] = _mm_add_ps(_mm_sub_ps(load_x(&x[a]), load_x(&x[b])), _mm_sub_ps(l->qa[j], l->qb[j]));
	}
	transpose(l->d, col, 3);
	l->dx = col[0];
	l->dy = col[1];
	l->dz = col[2];
}

static inline ends record_ends(const uint32_t* rec) { return (ends){rec, rec + 1, REC}; }
static inline ends field_ends(const pbd_distance_lanes* v, uint32_t k) { return (ends){v->a + k, v->b + k, 1}; }

/* pbd_v3_dot(d, d), left to right as the scalar sum. */
static inline __m256 length(const lanes* l) {
	const __m256 xx = _mm256_mul_ps(l->dx, l->dx), yy = _mm256_mul_ps(l->dy, l->dy), zz = _mm256_mul_ps(l->dz, l->dz);
	return _mm256_sqrt_ps(_mm256_add_ps(_mm256_add_ps(xx, yy), zz));
}

/* s[C <= 0] */
static inline __m256 side_param(const lanes* l, __m256 C) {
	return _mm256_blendv_ps(l->s0, l->s1, _mm256_cmp_ps(C, _mm256_setzero_ps(), _CMP_LE_OS));
}

/* Moves the active lanes' ends: a by -sa d (add_a: +sa d), b by the opposite. The scalar kernel
 * skips the other constraints, so their particles are not written at all. */
static inline void store_lanes(ends e, const lanes* l, const pbd_vec3* q, pbd_vec3* upd, __m256 sa, __m256 sb,
                               __m256 active, bool add_a, __m256 wa, __m256 wb) {
	_Alignas(32) float fa[LANES], fb[LANES];
	_mm256_store_ps(fa, sa);
	_mm256_store_ps(fb, sb);
	const unsigned m = (unsigned)_mm256_movemask_ps(active);
	/* Pinned ends are never stored into, as in the scalar kernels (family.h): other threads may
	 * read them. Jacobi's dx of a pin is this constraint's own and is written as the scalar one. */
	const __m256 zero = _mm256_setzero_ps();
	const unsigned free_a = upd == q ? (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(wa, zero, _CMP_GT_OQ)) : 0xffu;
	const unsigned free_b = upd == q ? (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(wb, zero, _CMP_GT_OQ)) : 0xffu;
	if ((m & free_a & free_b) == 0xffu) {
		/* every lane moves both ends, the common case: no test per lane */
		for (int j = 0; j < LANES; ++j) {
			const uint32_t a = e.a[j * e.stride], b = e.b[j * e.stride];
			const __m128 ma = _mm_mul_ps(l->d[j], _mm_broadcast_ss(&fa[j]));
			const __m128 mb = _mm_mul_ps(l->d[j], _mm_broadcast_ss(&fb[j]));
			const __m128 pa = upd == q ? l->qa[j] : load3(&upd[a]), pb = upd == q ? l->qb[j] : load3(&upd[b]);
			store3(&upd[a], add_a ? _mm_add_ps(pa, ma) : _mm_sub_ps(pa, ma));
			store3(&upd[b], add_a ? _mm_sub_ps(pb, mb) : _mm_add_ps(pb, mb));
		}
		return;
	}
	for (int j = 0; j < LANES; ++j) {
		if (!(m >> j & 1)) continue;
		const uint32_t a = e.a[j * e.stride], b = e.b[j * e.stride];
		const __m128 ma = _mm_mul_ps(l->d[j], _mm_broadcast_ss(&fa[j]));
		const __m128 mb = _mm_mul_ps(l->d[j], _mm_broadcast_ss(&fb[j]));
		/* Gauss-Seidel moves q, read before any store of this block: the lanes share no particle */
		const __m128 pa = upd == q ? l->qa[j] : load3(&upd[a]), pb = upd == q ? l->qb[j] : load3(&upd[b]);
		if (free_a >> j & 1) store3(&upd[a], add_a ? _mm_add_ps(pa, ma) : _mm_sub_ps(pa, ma));
		if (free_b >> j & 1) store3(&upd[b], add_a ? _mm_sub_ps(pb, mb) : _mm_add_ps(pb, mb));
	}
}

/* One batch of 8 constraints between loading and storing. */
typedef struct batch {
	lanes l;
	__m256 wa, wb, sa, sb, act;
#ifdef PBD_LANES_AVX512
	int run; /* PBD_RUN_NONE, or the layout its ends have (runs_avx512.h) */
	uint32_t a0, b0;
	run16 q;         /* pairs: q of the ends, which l.qa and l.qb then do not hold */
	run24 qa, qb, d; /* rows: q of the two runs, and the separations float by float */
#endif
} batch;

#ifdef PBD_LANES_AVX512
/* The separations in the order of load_particles, (x_a - x_b) + (q_a - q_b), and the inverse
 * masses, from runs. */
static inline void run_batch_load(const pbd_step_ctx* ctx, batch* b) {
	if (b->run == PBD_RUN_ROWS) {
		b->qa = run24_load(ctx->q, b->a0);
		b->qb = run24_load(ctx->q, b->b0);
		b->d = run24_add(run24_sub(run24_load(ctx->x, b->a0), run24_load(ctx->x, b->b0)), run24_sub(b->qa, b->qb));
		b->l.dx = run24_coord(b->d, 0);
		b->l.dy = run24_coord(b->d, 1);
		b->l.dz = run24_coord(b->d, 2);
		b->wa = _mm256_loadu_ps(ctx->iw + b->a0);
		b->wb = _mm256_loadu_ps(ctx->iw + b->b0);
		return;
	}
	run16 x;
	run_load(ctx->x, b->a0, &x);
	run_load(ctx->q, b->a0, &b->q);
	__m256 d[3];
	for (int c = 0; c < 3; ++c)
		d[c] = _mm256_add_ps(_mm256_sub_ps(run_lo(x.c[c]), run_hi(x.c[c])),
		                     _mm256_sub_ps(run_lo(b->q.c[c]), run_hi(b->q.c[c])));
	b->l.dx = d[0];
	b->l.dy = d[1];
	b->l.dz = d[2];
	const __m512 w = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15),
	                                       _mm512_loadu_ps(ctx->iw + b->a0));
	b->wa = run_lo(w);
	b->wb = run_hi(w);
}

/* store_lanes for a run: the same products and sums, formed only for the ends that are written
 * (an active lane's free ends), so that no other element raises an FP exception. */
static inline void run_batch_store(const pbd_step_ctx* ctx, const batch* b, bool add_a) {
	const __m256 zero = _mm256_setzero_ps();
	const unsigned m = (unsigned)_mm256_movemask_ps(b->act);
	const unsigned free_a = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(b->wa, zero, _CMP_GT_OQ));
	const unsigned free_b = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(b->wb, zero, _CMP_GT_OQ));
	const __mmask16 write = (__mmask16)((m & free_a) | (m & free_b) << LANES);
	if (!write) return;
	if (b->run == PBD_RUN_ROWS) {
		/* the written lanes are active, where d is what the lanes computed with */
		const unsigned wa = m & free_a, wb = m & free_b;
		if (wa) run24_store(ctx->q, b->a0, run24_update(b->qa, b->d, run24_spread(b->sa), wa, !add_a), wa);
		if (wb) run24_store(ctx->q, b->b0, run24_update(b->qb, b->d, run24_spread(b->sb), wb, add_a), wb);
		return;
	}
	const __mmask16 sub = (__mmask16)(write & (add_a ? 0xff00u : 0x00ffu));
	const __mmask16 add = (__mmask16)(write & (add_a ? 0x00ffu : 0xff00u));
	const __m512 s = run_join(b->sa, b->sb);
	const __m256 d[3] = {b->l.dx, b->l.dy, b->l.dz};
	run16 out;
	for (int c = 0; c < 3; ++c) {
		const __m512 q = b->q.c[c];
		const __m512 prod = _mm512_maskz_mul_ps(write, run_join(d[c], d[c]), s);
		out.c[c] = _mm512_mask_add_ps(_mm512_mask_sub_ps(q, sub, q, prod), add, q, prod);
	}
	run_store(ctx->q, b->a0, &out, write);
}
#endif

static inline void batch_load(const pbd_step_ctx* ctx, const pbd_distance_lanes* v, uint32_t k, batch* b) {
#ifdef PBD_LANES_AVX512
	b->run = v->run[k];
	if (b->run != PBD_RUN_NONE) {
		load_params(v, k, &b->l);
		b->a0 = v->a[k];
		b->b0 = v->b[k];
		run_batch_load(ctx, b);
		return;
	}
#endif
	load_fields(v, k, &b->l);
	load_particles(ctx, field_ends(v, k), &b->l);
	b->wa = _mm256_i32gather_ps(ctx->iw, b->l.ia, 4);
	b->wb = _mm256_i32gather_ps(ctx->iw, b->l.ib, 4);
}

static inline void solve_pbd(batch* b) {
	const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1), eps = _mm256_set1_ps(PBD_EPSILON_LENGTH);
	lanes* l = &b->l;
	const __m256 ws = _mm256_add_ps(b->wa, b->wb);
	/* scalar: if (ws == 0) continue, before d is formed */
	__m256 act = _mm256_cmp_ps(ws, zero, _CMP_NEQ_UQ);
	l->dx = _mm256_and_ps(l->dx, act);
	l->dy = _mm256_and_ps(l->dy, act);
	l->dz = _mm256_and_ps(l->dz, act);
	const __m256 len = length(l);
	act = _mm256_and_ps(act, _mm256_cmp_ps(len, eps, _CMP_GE_OS));
	const __m256 C = _mm256_sub_ps(len, l->rest);
	const __m256 stiff = side_param(l, C);
	const __m256 den = _mm256_blendv_ps(one, _mm256_mul_ps(ws, len), act);
	const __m256 s = _mm256_div_ps(_mm256_mul_ps(stiff, C), den);
	b->sa = _mm256_mul_ps(b->wa, s);
	b->sb = _mm256_mul_ps(b->wb, s);
	b->act = act;
}

static inline void solve_xpbd(const pbd_step_ctx* ctx, batch* b, float* lambda) {
	const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1), eps = _mm256_set1_ps(PBD_EPSILON_LENGTH);
	const __m256 inv_h2 = _mm256_set1_ps(ctx->inv_h2), sign = _mm256_set1_ps(-0.0f);
	const lanes* l = &b->l;
	const __m256 len = length(l);
	__m256 act = _mm256_cmp_ps(len, eps, _CMP_GE_OS);
	const __m256 C = _mm256_sub_ps(len, l->rest);
	/* a skipped lane's compliance is 0, so that alpha~ cannot overflow where the scalar code
	 * never forms it */
	const __m256 at = _mm256_mul_ps(_mm256_and_ps(side_param(l, C), act), inv_h2);
	const __m256 denom = _mm256_add_ps(_mm256_add_ps(b->wa, b->wb), at);
	act = _mm256_and_ps(act, _mm256_cmp_ps(denom, zero, _CMP_NEQ_UQ));
	const __m256 lam = _mm256_loadu_ps(lambda);
	const __m256 num = _mm256_sub_ps(_mm256_xor_ps(C, sign), _mm256_mul_ps(at, lam));
	const __m256 dl = _mm256_div_ps(num, _mm256_blendv_ps(one, denom, act));
	_mm256_storeu_ps(lambda, _mm256_blendv_ps(lam, _mm256_add_ps(lam, dl), act));
	const __m256 s = _mm256_div_ps(dl, _mm256_blendv_ps(one, len, act));
	b->sa = _mm256_mul_ps(b->wa, s);
	b->sb = _mm256_mul_ps(b->wb, s);
	b->act = act;
}

static inline void solve(const pbd_step_ctx* ctx, batch* b, float* lambda, bool xpbd) {
	if (xpbd)
		solve_xpbd(ctx, b, lambda);
	else
		solve_pbd(b);
}

static inline void batch_store(const pbd_step_ctx* ctx, const pbd_distance_lanes* v, uint32_t k, const batch* b,
                               bool xpbd) {
#ifdef PBD_LANES_AVX512
	if (b->run != PBD_RUN_NONE) {
		run_batch_store(ctx, b, xpbd);
		return;
	}
#endif
	store_lanes(field_ends(v, k), &b->l, ctx->q, ctx->q, b->sa, b->sb, b->act, xpbd, b->wa, b->wb);
}

/* Two batches at a time: their dependency chains (loads, square root, division, stores) are
 * independent, as no two constraints of a colour share a particle, and interleaved the processor
 * overlaps them, where one batch alone leaves it waiting on the chain. Called with a constant
 * xpbd, so that each formulation gets its own loop. */
static inline void project_batches(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end, bool xpbd) {
	const pbd_distance_lanes v = pbd_distance_lanes_of(f);
	uint32_t k = first;
	for (; k + 2 * LANES <= end; k += 2 * LANES) {
		batch b0, b1;
		batch_load(ctx, &v, k, &b0);
		batch_load(ctx, &v, k + LANES, &b1);
		solve(ctx, &b0, f->lambda + k, xpbd);
		solve(ctx, &b1, f->lambda + k + LANES, xpbd);
		batch_store(ctx, &v, k, &b0, xpbd);
		batch_store(ctx, &v, k + LANES, &b1, xpbd);
	}
	if (k < end) {
		batch b0;
		batch_load(ctx, &v, k, &b0);
		solve(ctx, &b0, f->lambda + k, xpbd);
		batch_store(ctx, &v, k, &b0, xpbd);
	}
}

/* The AVX2 entries hand over to the AVX-512 variant where the world chose it (cpu.h). */
#if defined(PBD_HAVE_AVX512) && !defined(PBD_LANES_AVX512)
#define TO_AVX512(call)                                                                                                \
	if (ctx->avx512) {                                                                                                 \
		call;                                                                                                          \
		return;                                                                                                        \
	}
#else
#define TO_AVX512(call)
#endif

void LANES_FN(pbd_distance_project)(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	TO_AVX512(pbd_distance_project_avx512(ctx, f, first, end))
	if (ctx->formulation == PBD_FORMULATION_XPBD)
		project_batches(ctx, f, first, end, true);
	else
		project_batches(ctx, f, first, end, false);
}

#ifndef PBD_LANES_AVX512
/* Jacobi stays on the AVX2 moves: it reads each particle's accumulator right after the previous
 * colour's stage stored into it, and a masked store cannot be forwarded to that read (the Jacobi
 * step ran twice as long with AVX-512 moves, where Gauss-Seidel ran 10-20 % faster). */
/* constraints/distance.c's jacobi: weights and the shared factor fk are formed for every
 * constraint there too, before the length test. */
void LANES_FN(pbd_distance_jacobi)(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_distance_lanes v = pbd_distance_lanes_of(f);
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD;
	const bool equal = ctx->jacobi_equal;
	const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1), eps = _mm256_set1_ps(PBD_EPSILON_LENGTH);
	const __m256 inv_h2 = _mm256_set1_ps(ctx->inv_h2), sign = _mm256_set1_ps(-0.0f);
	const __m256 alpha = _mm256_set1_ps(ctx->jacobi_alpha), omega = _mm256_set1_ps(ctx->jacobi_omega);
	for (uint32_t k = first; k < end; k += LANES) {
		lanes l;
		load_fields(&v, k, &l);
		load_particles(ctx, field_ends(&v, k), &l);
		__m256 wa = one, wb = one, fk = one;
		if (!equal) {
			wa = _mm256_i32gather_ps(ctx->iw, l.ia, 4);
			wb = _mm256_i32gather_ps(ctx->iw, l.ib, 4);
			const __m256i da = _mm256_i32gather_epi32((const int*)ctx->degree, l.ia, 4);
			const __m256i db = _mm256_i32gather_epi32((const int*)ctx->degree, l.ib, 4);
			/* a degree counts constraints, far below 2^31: the signed conversion is the unsigned one */
			fk = _mm256_div_ps(omega, _mm256_add_ps(_mm256_cvtepi32_ps(_mm256_max_epu32(da, db)), alpha));
		}
		const __m256 len = length(&l);
		__m256 act = _mm256_cmp_ps(len, eps, _CMP_GE_OS);
		const __m256 C = _mm256_sub_ps(len, l.rest);
		const __m256 sp = _mm256_and_ps(side_param(&l, C), act);
		__m256 s;
		if (xpbd) {
			const __m256 at = _mm256_mul_ps(sp, inv_h2);
			const __m256 denom = _mm256_add_ps(_mm256_add_ps(wa, wb), at);
			act = _mm256_and_ps(act, _mm256_cmp_ps(denom, zero, _CMP_NEQ_UQ));
			float* lambda = f->lambda + k;
			const __m256 lam = _mm256_loadu_ps(lambda);
			const __m256 num = _mm256_sub_ps(_mm256_xor_ps(C, sign), _mm256_mul_ps(at, lam));
			const __m256 dl = _mm256_mul_ps(fk, _mm256_div_ps(num, _mm256_blendv_ps(one, denom, act)));
			_mm256_storeu_ps(lambda, _mm256_blendv_ps(lam, _mm256_add_ps(lam, dl), act));
			s = _mm256_div_ps(_mm256_xor_ps(dl, sign), _mm256_blendv_ps(one, len, act));
		} else {
			const __m256 ws = _mm256_add_ps(wa, wb);
			act = _mm256_and_ps(act, _mm256_cmp_ps(ws, zero, _CMP_NEQ_UQ));
			const __m256 den = _mm256_blendv_ps(one, _mm256_mul_ps(ws, len), act);
			s = _mm256_mul_ps(fk, _mm256_div_ps(_mm256_mul_ps(sp, C), den));
		}
		store_lanes(field_ends(&v, k), &l, ctx->q, ctx->dx, _mm256_mul_ps(wa, s), _mm256_mul_ps(wb, s), act, false, wa,
		            wb);
	}
}
#endif

/* hierarchy.c's project_coarse: a coarse constraint acts only when stretched, len^2 > rest^2,
 * which the scalar code tests before the square root (the root of a finite len^2 raises nothing). */
void LANES_FN(pbd_coarse_project)(const pbd_step_ctx* ctx, const pbd_coarse_c* c, uint32_t first, uint32_t end) {
	TO_AVX512(pbd_coarse_project_avx512(ctx, c, first, end))
	const __m256 one = _mm256_set1_ps(1), eps = _mm256_set1_ps(PBD_EPSILON_LENGTH);
	for (uint32_t k = first; k < end; k += LANES) {
		lanes l;
		load_records(&c[k].a, &l);
		load_particles(ctx, record_ends(&c[k].a), &l);
		const __m256 wa = l.s0, wb = l.s1;
		const __m256 len2 = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(l.dx, l.dx), _mm256_mul_ps(l.dy, l.dy)),
		                                  _mm256_mul_ps(l.dz, l.dz));
		__m256 act = _mm256_cmp_ps(len2, _mm256_mul_ps(l.rest, l.rest), _CMP_GT_OS);
		const __m256 len = _mm256_sqrt_ps(len2);
		act = _mm256_and_ps(act, _mm256_cmp_ps(len, eps, _CMP_GE_OS));
		const __m256 den = _mm256_blendv_ps(one, _mm256_mul_ps(_mm256_add_ps(wa, wb), len), act);
		const __m256 s = _mm256_div_ps(_mm256_sub_ps(len, l.rest), den);
		store_lanes(record_ends(&c[k].a), &l, ctx->q, ctx->q, _mm256_mul_ps(wa, s), _mm256_mul_ps(wb, s), act, false,
		            wa, wb);
	}
}
