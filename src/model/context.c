/* The step context (family.h): the arrays and settings of the world that a family's kernels see
 * in one substep, so that the kernels read no world. */
#include <string.h>

#include "model/world.h"

void pbd_step_ctx_init(const pbd_world* w, pbd_real h, pbd_step_ctx* ctx) {
	memset(ctx, 0, sizeof *ctx);
	ctx->x = w->x;
	ctx->q = w->q;
	ctx->iw = w->w;
	ctx->dx = w->dx;
	ctx->degree = w->degree;
	ctx->bodies = (pbd_bodies*)&w->bodies;
	ctx->np = w->np;
	ctx->h = h;
	ctx->inv_h2 = 1 / (h * h);
	ctx->substep_fraction = 1;
	ctx->formulation = w->def.formulation;
	ctx->iterations = w->def.iterations;
	ctx->jacobi_equal = w->def.jacobi_equal_split;
	ctx->jacobi_alpha = w->def.jacobi_alpha;
	ctx->jacobi_omega = w->def.jacobi_omega;
	ctx->simd = w->simd_lanes;
	ctx->avx512 = w->simd_avx512;
}
