/* One substep: predict, iterate the constraint projections with the chosen solver, resolve
 * collisions, derive velocities. The families are driven from their group lists (family.h):
 * one kernel call per family and group, the kernels loop over their range. */
#include <string.h>

#include "world.h"

void pbd_step_ctx_init(const pbd_world* w, pbd_real h, pbd_step_ctx* ctx) {
	memset(ctx, 0, sizeof *ctx);
	ctx->x = w->x;
	ctx->q = w->q;
	ctx->iw = w->w;
	ctx->dx = w->dx;
	ctx->degree = w->degree;
	ctx->h = h;
	ctx->inv_h2 = 1 / (h * h);
	ctx->formulation = w->def.formulation;
	ctx->iterations = w->def.iterations;
	ctx->jacobi_equal = w->def.jacobi_equal_split;
	ctx->jacobi_alpha = w->def.jacobi_alpha;
	ctx->jacobi_omega = w->def.jacobi_omega;
}

/* Applies the summed Jacobi corrections. Mass-weighted corrections arrive already scaled per
 * constraint (see the families' jacobi kernels). Equal-split ones are averaged per particle:
 * omega * dx / (degree + alpha), where alpha > 0 lets the particle's current position take part
 * in the average with weight alpha (Games103 lab 2 uses 0.2). */
static void jacobi_apply(pbd_world* w) {
	const pbd_real alpha = w->def.jacobi_alpha, omega = w->def.jacobi_omega;
	const bool equal = w->def.jacobi_equal_split;
	pbd_vec3* restrict q = w->q;
	pbd_vec3* restrict dx = w->dx;
	const uint32_t* restrict deg = w->degree;
	const pbd_real* restrict iw = w->w;
	for (uint32_t i = 0, n = w->np; i < n; ++i) {
		if (iw[i] > 0 && deg[i] > 0) {
			const pbd_real den = (pbd_real)deg[i] + alpha;
			q[i] = pbd_v3_add(q[i], equal ? pbd_v3_scale(dx[i], omega / den) : dx[i]);
		}
		dx[i] = pbd_v3(0, 0, 0);
	}
}

/* One Gauss-Seidel sweep: group by group, and within a group every family's range of it. The
 * constraints of a group share no particle, so how a group's ranges would be split among
 * threads does not change the result. */
static void sweep_gauss_seidel(pbd_world* w, const pbd_step_ctx* ctx) {
	for (int g = 0; g < PBD_GROUP_COUNT; ++g) {
		for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
			pbd_family* f = &w->fam[t];
			const uint32_t first = g ? f->group_end[g - 1] : 0, end = f->group_end[g];
			if (first < end) pbd_family_table[t]->project(ctx, f, first, end);
		}
	}
}

static void sweep_jacobi(pbd_world* w, const pbd_step_ctx* ctx) {
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		pbd_family* f = &w->fam[t];
		if (f->n) pbd_family_table[t]->jacobi(ctx, f, 0, f->n);
	}
	jacobi_apply(w);
}

void pbd_solver_substep(pbd_world* w, pbd_real h, pbd_real damping, int substep, int substeps) {
	pbd_particles_predict(w, h, damping, (pbd_real)substep / (pbd_real)substeps);
	pbd_step_ctx ctx;
	pbd_step_ctx_init(w, h, &ctx);
	if (ctx.formulation == PBD_FORMULATION_XPBD) {
		for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
			pbd_family* f = &w->fam[t];
			const uint32_t nl = pbd_family_table[t]->lambdas;
			if (f->n && nl) memset(f->lambda, 0, (size_t)f->n * nl * sizeof *f->lambda);
		}
	}

	const bool in_solver = w->def.collision_mode == PBD_COLLISION_IN_SOLVER && w->nc > 0;
	const int iterations = w->def.iterations;
	const bool jacobi = w->def.solver == PBD_SOLVER_JACOBI;
	if (jacobi && w->np) memset(w->dx, 0, (size_t)w->np * sizeof *w->dx);
	for (int it = 0; it < iterations; ++it) {
		if (jacobi)
			sweep_jacobi(w, &ctx);
		else
			sweep_gauss_seidel(w, &ctx);
		if (in_solver) pbd_collide_project(w);
	}
	if (w->def.collision_mode == PBD_COLLISION_AFTER_SOLVER && w->nc > 0) pbd_collide_project(w);
	pbd_particles_update_velocities(w, h, substep == substeps);
}
