/* The long-range attachment family's kernels in AVX2 lanes, 8 consecutive positions of one colour
 * group at a time, bit-identical to constraints_lra.c's under the rules of distance_avx2.c. The
 * pin is read, never written: it has inverse mass 0, and other constraints of the colour, on other
 * threads, read it too (family.h). */
#include "constraints_lra.h"
#include "simd/lanes.h"
#include "simd/pull_avx2.h"

#define REC sizeof(pbd_lra_c)

/* constraints_lra.c's taut: d = x - x_pin (pbd_rel), active once |d|^2 > rest^2, then |d|. The
 * scalar code tests the inverse mass and the pin before it forms anything: a lane without a pin
 * reads its own particle as the pin, and a lane skipped so far has d = 0 and rest = 0, so that
 * its square and its test raise nothing. Gives the lanes that act. */
static inline __m256 load_lanes(const pbd_step_ctx* ctx, const pbd_lra_c* c, const pbd_vec3* base, pull8* l) {
	uint32_t pin[LANES];
	unsigned linked = 0;
	for (int j = 0; j < LANES; ++j) {
		l->i[j] = c[j].i;
		linked |= (unsigned)(c[j].pin != PBD_LRA_NONE) << j;
		pin[j] = c[j].pin != PBD_LRA_NONE ? c[j].pin : c[j].i;
	}
	const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
	const __m256 has_pin =
	    _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)linked), bit), bit));
	l->iw = iw8(ctx, l->i);
	l->s = field8(&c->s, REC);
	const __m256 act = _mm256_and_ps(has_pin, _mm256_cmp_ps(l->iw, _mm256_setzero_ps(), _CMP_NEQ_UQ));
	l->rest = _mm256_and_ps(field8(&c->rest, REC), act);
	const v3x8 q = v3x8_load3(ctx->q, l->i);
	l->base = base == ctx->q ? q : v3x8_load3(base, l->i);
	l->d = v3x8_and(
	    v3x8_add(v3x8_sub(v3x8_load_x(ctx->x, l->i), v3x8_load_x(ctx->x, pin)), v3x8_sub(q, v3x8_load3(ctx->q, pin))),
	    act);
	const __m256 len2 = v3x8_dot(l->d, l->d);
	l->len = _mm256_sqrt_ps(len2);
	return _mm256_and_ps(act, _mm256_cmp_ps(len2, _mm256_mul_ps(l->rest, l->rest), _CMP_GT_OS));
}

static void sweep(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end, bool jacobi) {
	const pbd_lra_c* c = (const pbd_lra_c*)f->hot;
	for (uint32_t k = first; k < end; k += LANES) {
		pull8 l;
		const __m256 act = load_lanes(ctx, &c[k], jacobi ? ctx->dx : ctx->q, &l);
		(jacobi ? pull8_jacobi : pull8_project)(ctx, &l, act, f->lambda + k);
	}
}

void pbd_lra_project_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	sweep(ctx, f, first, end, false);
}

void pbd_lra_jacobi_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	sweep(ctx, f, first, end, true);
}
