/* The tetrahedral volume family's kernels in AVX2 lanes, 8 consecutive positions of one colour
 * group at a time, bit-identical to constraints/tet_volume.c's under the rules of
 * distance_avx2.c. */
#include "constraints/tet_volume.h"
#include "constraints/lanes.h"
#include "simd/tet_avx2.h"

#define REC sizeof(pbd_tet_volume_c)

/* constraints/tet_volume.c's evaluate: C = e1 . g1 - V0 with g1 = e2 x e3 / 6, g2 = e3 x e1 / 6,
 * g3 = e1 x e2 / 6, g0 = -(g1 + g2 + g3), all formed for every tetrahedron as there; gives the
 * lanes whose free particles' gradients do not vanish. */
static inline __m256 evaluate(const pbd_tet_volume_c* c, const tet8* t, __m256* C, v8 g[4]) {
	v8 e[3];
	tet8_edges(t, e);
	const __m256 sixth = _mm256_set1_ps(1.0f / 6);
	g[1] = v8_scale(v8_cross(e[1], e[2]), sixth);
	g[2] = v8_scale(v8_cross(e[2], e[0]), sixth);
	g[3] = v8_scale(v8_cross(e[0], e[1]), sixth);
	g[0] = tet8_opposite(g);
	*C = _mm256_sub_ps(v8_dot(e[0], g[1]), field8(&c->rest, REC));
	return tet8_moves(t, g, field8(&c->grad2_min, REC));
}

static void sweep(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end, bool jacobi) {
	const pbd_tet_volume_c* c = (const pbd_tet_volume_c*)f->hot;
	for (uint32_t k = first; k < end; k += LANES) {
		tet8 t;
		tet8_load(ctx, c[k].p, (int)(REC / sizeof(uint32_t)), &t);
		v8 g[4];
		__m256 C;
		const __m256 act = evaluate(&c[k], &t, &C, g);
		if (jacobi)
			tet8_jacobi(ctx, &t, act, C, g, field8(&c[k].s, REC), f->lambda + k, 1);
		else
			tet8_project(ctx, &t, act, C, g, field8(&c[k].s, REC), f->lambda + k);
	}
}

void pbd_tet_volume_project_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	sweep(ctx, f, first, end, false);
}

void pbd_tet_volume_jacobi_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	sweep(ctx, f, first, end, true);
}
