/* The attachment family's kernels in AVX2 lanes, 8 consecutive positions of one colour group at
 * a time, bit-identical to constraints_attachment.c's under the rules of distance_avx2.c: each
 * lane makes the scalar code's operations in its order, a lane the scalar code skips (a pinned
 * particle, one on its point) is zeroed before its arithmetic and not written. */
#include <stddef.h>

#include "constraints_attachment.h"
#include "simd/lanes.h"
#include "simd/pull_avx2.h"

#define REC sizeof(pbd_attachment_c)

/* The particles' offsets d = (x - p) + q from their points p at the substep's fraction t,
 * p = from + (to - from) t (constraints_attachment.c, offset), and |d|. The scalar code skips a
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

static void sweep(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end, bool jacobi) {
	pbd_attachment_c* c = (pbd_attachment_c*)f->hot;
	pbd_attachment_settle(ctx, c, first, end);
	for (uint32_t k = first; k < end; k += LANES) {
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
