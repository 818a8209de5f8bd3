/* One substep: predict, iterate the constraint projections with the chosen solver, resolve
 * collisions, derive velocities. The families are driven from their group lists (family.h):
 * one kernel call per family and group, the kernels loop over their range. */
#include <string.h>

#include "model/forces.h"
#include "methods/hierarchy.h"
#include "methods/joint_direct.h"
#include "methods/solver.h"
#include "methods/substep.h"
#include "collision/self_collision.h"
#include "methods/sweep_plan.h"
#include "model/world.h"
#ifdef PBD_HAVE_AVX2
#include "model/particles_simd.h"
#endif

/* Applies the summed Jacobi corrections to particles [first, end). Mass-weighted corrections
 * arrive already scaled per constraint (see the families' jacobi kernels). Equal-split ones are
 * averaged per particle: omega * dx / (degree + alpha), where alpha > 0 lets the particle's
 * current position take part in the average with weight alpha (Games103 lab 2 uses 0.2). */
static void jacobi_apply_block(void* p, uint32_t block, uint32_t worker) {
	(void)worker;
	pbd_world* w = (pbd_world*)p;
	const pbd_real alpha = w->def.jacobi_alpha, omega = w->def.jacobi_omega;
	const bool equal = w->def.jacobi_equal_split;
	pbd_vec3* restrict q = w->q;
	pbd_vec3* restrict dx = w->dx;
	const uint32_t* restrict deg = w->degree;
	const pbd_real* restrict iw = w->w;
	const uint32_t end = pbd_block_end(block * w->exec.block_particles, w->np, w->exec.block_particles);
	uint32_t first = block * w->exec.block_particles;
#ifdef PBD_HAVE_AVX2
	/* every group in lanes: only the last few particles here */
	if (w->simd_lanes) first = pbd_jacobi_apply_avx2(w, first, end);
#endif
	for (uint32_t i = first; i < end; ++i) {
		if (iw[i] > 0 && deg[i] > 0) {
			const pbd_real den = (pbd_real)deg[i] + alpha;
			q[i] = pbd_v3_add(q[i], equal ? pbd_v3_scale(dx[i], omega / den) : dx[i]);
		}
		dx[i] = pbd_v3(0, 0, 0);
	}
}

/* Runs group g of the families in `mask` (bit t: family t) as one stage. */
static void run_group(pbd_world* w, const pbd_step_ctx* ctx, bool jacobi, int g, uint32_t mask) {
	pbd_range_stage s;
	const uint32_t blocks = pbd_range_stage_init(&s, w, ctx, jacobi, g, mask);
	pbd_exec_stage(&w->exec, pbd_range_block, &s, blocks);
}

/* Family t's last group, the constraints the colouring could not place: in order, on the calling
 * thread, never in lanes. */
static void run_last_group(pbd_world* w, const pbd_step_ctx* ctx, bool jacobi, int t) {
	pbd_family* f = &w->fam[t];
	const uint32_t first = f->group_end[PBD_PARTITION_COLOURS - 1], end = f->group_end[PBD_PARTITION_COLOURS];
	if (first >= end) return;
	const uint64_t t0 = pbd_prof_begin(w);
	(jacobi ? pbd_family_table[t]->jacobi : pbd_family_table[t]->project)(ctx, f, first, end);
	pbd_prof_end_family(w, 0, t, t0);
}

#define ALL_FAMILIES ((1u << PBD_FAMILY_COUNT) - 1u)

/* One Gauss-Seidel sweep: group by group, every family's range of a group in one stage. Colours
 * are shared by all families, so a group's constraints share no particle whatever their family:
 * each particle moves at most once per group, in the same order on any number of threads. The
 * last group, the constraints the colouring could not place, goes in order on one thread. */
static void sweep_gauss_seidel(pbd_world* w, const pbd_step_ctx* ctx) {
	/* on threads, as a chain: the same order of projection, with less waiting (sweep_plan.c) */
	if (w->exec.threads > 1 && w->plan->valid && w->plan->topology == w->topology)
		pbd_sweep_plan_run(w, ctx);
	else
		for (int g = 0; g < PBD_PARTITION_COLOURS; ++g) run_group(w, ctx, false, g, ALL_FAMILIES);
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) run_last_group(w, ctx, false, t);
}

/* A Jacobi sweep adds every constraint's correction into dx. The sums go family by family, in
 * storage order, as one thread would add them: a stage holds one group of one family (no two of
 * its constraints add to the same particle), and the last group is one block. */
static void sweep_jacobi(pbd_world* w, const pbd_step_ctx* ctx) {
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		if (!w->fam[t].n) continue;
		for (int g = 0; g < PBD_PARTITION_COLOURS; ++g) run_group(w, ctx, true, g, 1u << t);
		run_last_group(w, ctx, true, t);
	}
	pbd_exec_stage(&w->exec, jacobi_apply_block, w, pbd_blocks(w->np, w->exec.block_particles));
}

/* Chebyshev semi-iterative acceleration of Jacobi (Wang 2015, "A Chebyshev semi-iterative
 * approach for accelerating projective and position-based dynamics", eq. 11-12): after the
 * plain sweep has produced q^ from q_k, the next iterate is
 *   q_{k+1} = omega_{k+1} (gamma (q^ - q_k) + q_k - q_{k-1}) + q_{k-1}
 * with omega = 1 during the first `delay` iterations, omega = 2 / (2 - rho^2) at the first
 * accelerated one and omega_{k+1} = 4 / (4 - rho^2 omega_k) after. rho is the spectral radius of
 * the plain iteration; when not given it is the ratio of the last two plain corrections,
 * |q^ - q_k| / |q_{k-1}^ - q_{k-1}|, measured in every substep's delay iterations (at least two of
 * them then) and held below 0.99, since an overestimate makes the iteration diverge. */
typedef struct chebyshev {
	bool on;
	int delay;
	pbd_real rho, gamma, omega;
	double last_norm;
	const pbd_world* w;
} chebyshev;

static double correction_norm2(const pbd_world* w) {
	double s = 0;
	for (uint32_t i = 0; i < w->np; ++i) {
		const pbd_vec3 d = pbd_v3_sub(w->q[i], w->q_iter[i]);
		s += (double)d.x * (double)d.x + (double)d.y * (double)d.y + (double)d.z * (double)d.z;
	}
	return s;
}

static void chebyshev_block(void* p, uint32_t block, uint32_t worker) {
	(void)worker;
	const chebyshev* c = (const chebyshev*)p;
	const pbd_world* w = c->w;
	const pbd_real om = c->omega, ga = c->gamma;
	pbd_vec3* restrict q = w->q;
	pbd_vec3* restrict qk = w->q_iter;
	pbd_vec3* restrict qp = w->q_prev;
	const pbd_real* restrict iw = w->w;
	const uint32_t end = pbd_block_end(block * w->exec.block_particles, w->np, w->exec.block_particles);
	uint32_t first = block * w->exec.block_particles;
#ifdef PBD_HAVE_AVX2
	if (w->simd_lanes) first = pbd_chebyshev_avx2(w, om, ga, first, end);
#endif
	for (uint32_t i = first; i < end; ++i) {
		const pbd_vec3 prev = qp[i];
		qp[i] = qk[i];
		if (iw[i] == 0) continue;
		const pbd_vec3 step = pbd_v3_add(pbd_v3_scale(pbd_v3_sub(q[i], qk[i]), ga), pbd_v3_sub(qk[i], prev));
		q[i] = pbd_v3_add(pbd_v3_scale(step, om), prev);
	}
}

static void chebyshev_update(pbd_world* w, chebyshev* c, int it) {
	const bool estimating = c->rho == 0;
	if (it < c->delay) {
		if (estimating) {
			const double n2 = correction_norm2(w);
			if (it > 0 && c->last_norm > 0) {
				const double r = sqrt(n2 / c->last_norm);
				w->rho_estimate = (pbd_real)(r < 0.99 ? r : 0.99);
			}
			c->last_norm = n2;
		}
		memcpy(w->q_prev, w->q_iter, (size_t)w->np * sizeof *w->q_prev);
		return;
	}
	const pbd_real rho = estimating ? w->rho_estimate : c->rho;
	c->omega = it == c->delay ? 2 / (2 - rho * rho) : 4 / (4 - rho * rho * c->omega);
	c->w = w;
	pbd_exec_stage(&w->exec, chebyshev_block, c, pbd_blocks(w->np, w->exec.block_particles));
}

pbd_status pbd_solver_prepare(pbd_world* w) {
	if (w->exec.threads > 1 && w->def.solver == PBD_SOLVER_GAUSS_SEIDEL && pbd_sweep_plan_update(w) != PBD_OK)
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for the sweep's plan");
	return PBD_OK;
}

void pbd_solver_substep(pbd_world* w, pbd_real h, pbd_real damping, int substep, int substeps) {
	/* The air at the state the substep starts from, as predict takes gravity and forces. */
	const uint64_t t0 = pbd_prof_begin(w);
	pbd_forces_substep(w, w->time + (double)h * (substep - 1));
	pbd_particles_predict(w, h, damping, (pbd_real)substep / (pbd_real)substeps);
	pbd_bodies_substep(w, h, damping);
	pbd_prof_end(w, PBD_PHASE_PREDICT, t0);
	pbd_substep_find_contacts(w, h);
	pbd_step_ctx ctx;
	pbd_step_ctx_init(w, h, &ctx);
	ctx.substep_fraction = (pbd_real)substep / (pbd_real)substeps;
	if (ctx.formulation == PBD_FORMULATION_XPBD) {
		for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
			pbd_family* f = &w->fam[t];
			const uint32_t nl = pbd_family_table[t]->lambdas;
			if (f->n && nl) memset(f->lambda, 0, (size_t)f->n * nl * sizeof *f->lambda);
		}
	}

	const int iterations = w->def.iterations;
	const bool jacobi = w->def.solver == PBD_SOLVER_JACOBI;
	if (jacobi && w->np) memset(w->dx, 0, (size_t)w->np * sizeof *w->dx);
	chebyshev cheb = {jacobi && w->def.chebyshev && w->np > 0,
	                  w->def.chebyshev_delay,
	                  w->def.chebyshev_rho,
	                  w->def.chebyshev_gamma,
	                  1,
	                  0,
	                  w};
	if (cheb.on && cheb.rho == 0 && cheb.delay < 2) cheb.delay = 2;
	/* The coarse levels first: they start the iterations from a state whose long-range stretch
	 * is already gone. They move positions only; the multipliers stay at zero. */
	if (w->def.hierarchy_levels > 0) {
		const uint64_t th = pbd_prof_begin(w);
		pbd_hierarchy_solve(w, &ctx);
		pbd_prof_end(w, PBD_PHASE_HIERARCHY, th);
	}
	for (int it = 0; it < iterations; ++it) {
		if (cheb.on) memcpy(w->q_iter, w->q, (size_t)w->np * sizeof *w->q_iter);
		if (jacobi)
			sweep_jacobi(w, &ctx);
		else
			sweep_gauss_seidel(w, &ctx);
		/* Extrapolated before the contacts, so that an iteration never ends inside a collider. */
		if (cheb.on) chebyshev_update(w, &cheb, it);
		if (w->jdirect->nrows) pbd_joint_direct_iterate(w, &ctx);
		if (it == 0 || it == iterations - 1) pbd_substep_catch_late(w, it == 0);
		pbd_substep_project_contacts(w);
	}
	pbd_substep_finish(w, h, substep, substeps);
}
