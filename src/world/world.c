/* World lifetime, settings and the step orchestration. */
#include <float.h>
#include <string.h>

#include "collision/collide.h"
#include "collision/contact_events.h"
#include "core/cpu.h"
#include "methods/hierarchy.h"
#include "methods/integrate.h"
#include "methods/joint_direct.h"
#include "methods/method.h"
#include "collision/self_collision.h"
#include "constraints/attachment.h"
#include "constraints/joint.h"
#include "methods/sweep_plan.h"
#include "model/world.h"
#include "world/sleep.h"

pbd_world_def pbd_world_def_default(void) {
	pbd_world_def d;
	memset(&d, 0, sizeof d);
	d.gravity = pbd_v3(0, PBD_R(-9.81), 0);
	d.dt = PBD_R(1.0) / PBD_R(60.0);
	d.substeps = 1;
	d.iterations = 10;
	d.solver = PBD_SOLVER_GAUSS_SEIDEL;
	d.formulation = PBD_FORMULATION_PBD;
	d.damping = 1;
	d.damping_mode = PBD_DAMPING_VELOCITY;
	d.jacobi_alpha = 0;
	d.jacobi_omega = 1;
	d.jacobi_equal_split = false;
	d.chebyshev = false;
	d.chebyshev_rho = 0;
	d.chebyshev_delay = 3;
	d.chebyshev_gamma = PBD_R(0.9);
	d.hierarchy_levels = 0;
	d.hierarchy_iterations = 8;
	d.collision_mode = PBD_COLLISION_IN_SOLVER;
	d.max_speed = 0;
	d.sleep_time = PBD_R(0.5);
	d.sleep_speed = PBD_R(0.05);
	d.diagnostics = true;
	d.divergence_strain = 10;
	d.method = PBD_METHOD_POSITION_BASED;
	d.stiffness_damping = 0;
	d.linear_tolerance = PBD_R(1e-4);
	d.hard_stiffness = 1000;
	d.wind = pbd_v3(0, 0, 0);
	d.gust_strength = 0;
	d.gust_frequency = PBD_R(0.5);
	d.threads = 1;
	d.cookie = PBD_COOKIE;
	return d;
}

/* Checks every setting of a def. `w` receives the message (a scratch world for create). */
static pbd_status validate_def(pbd_world* w, const pbd_world_def* d) {
	if (d->cookie != PBD_COOKIE)
		return pbd_fail(w, PBD_ERR_UNINITIALIZED_DEF, "pbd_world_def: not made by pbd_world_def_default()");
	if (!pbd_v3_is_finite(d->gravity)) return pbd_fail(w, PBD_ERR_NOT_FINITE, "pbd_world_def.gravity: not finite");
	/* The caps keep the first step's products (g dt^2, squared distances) finite in float. */
	const pbd_real gmax = (pbd_real)PBD_MAX_GRAVITY;
	if (PBD_FABS(d->gravity.x) > gmax || PBD_FABS(d->gravity.y) > gmax || PBD_FABS(d->gravity.z) > gmax)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_world_def.gravity: each component must be within +-%g m/s^2 (got %.9g, %.9g, %.9g)",
		                PBD_MAX_GRAVITY, (double)d->gravity.x, (double)d->gravity.y, (double)d->gravity.z);
	if (!pbd_is_finite(d->dt) || d->dt <= 0 || d->dt > (pbd_real)PBD_MAX_DT)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.dt: must be in (0, %g] s (got %.9g)", PBD_MAX_DT,
		                (double)d->dt);
	if (d->substeps < 1 || d->substeps > 100000)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.substeps: must be in [1, 100000] (got %d)",
		                d->substeps);
	{
		/* XPBD divides compliance by h^2: a substep so short that 1/h^2 overflows would turn every
		 * projection into inf * 0. Compared, not computed, so that checking raises no FP
		 * exception; the upper end is PBD_MAX_DT's. */
		const pbd_real h = d->dt / (pbd_real)d->substeps;
		const pbd_real h_min = PBD_SQRT(PBD_REAL_MIN_NORMAL);
		if (!(h >= h_min))
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
			                "pbd_world_def.dt: the substep dt / substeps = %.9g s is below %g s for this precision",
			                (double)h, (double)h_min);
	}
	if (d->max_substeps < 0 || d->max_substeps > 100000)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.max_substeps: must be in [0, 100000] (got %d)",
		                d->max_substeps);
	if (d->max_substeps > d->substeps) {
		const pbd_real h = d->dt / (pbd_real)d->max_substeps;
		if (!(h >= PBD_SQRT(PBD_REAL_MIN_NORMAL)))
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
			                "pbd_world_def.max_substeps: the substep dt / max_substeps = %.9g s is below %g s for "
			                "this precision",
			                (double)h, (double)PBD_SQRT(PBD_REAL_MIN_NORMAL));
	}
	if (d->iterations < 1 || d->iterations > 100000)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.iterations: must be in [1, 100000] (got %d)",
		                d->iterations);
	if (d->solver != PBD_SOLVER_GAUSS_SEIDEL && d->solver != PBD_SOLVER_JACOBI)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_world_def.solver: unknown solver %d", (int)d->solver);
	if (d->formulation != PBD_FORMULATION_PBD && d->formulation != PBD_FORMULATION_XPBD)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_world_def.formulation: unknown formulation %d",
		                (int)d->formulation);
	if (!pbd_is_finite(d->damping) || d->damping <= 0 || d->damping > 1)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.damping: must be in (0, 1] (got %.9g)",
		                (double)d->damping);
	if (!pbd_is_finite(d->jacobi_alpha) || d->jacobi_alpha < 0)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.jacobi_alpha: must be >= 0 (got %.9g)",
		                (double)d->jacobi_alpha);
	if (!pbd_is_finite(d->jacobi_omega) || d->jacobi_omega <= 0 || d->jacobi_omega >= 2)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.jacobi_omega: must be in (0, 2) (got %.9g)",
		                (double)d->jacobi_omega);
	if (!pbd_is_finite(d->chebyshev_rho) || d->chebyshev_rho < 0 || d->chebyshev_rho >= 1)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.chebyshev_rho: must be in [0, 1) (got %.9g)",
		                (double)d->chebyshev_rho);
	if (d->chebyshev_delay < 1 || d->chebyshev_delay > 100000)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.chebyshev_delay: must be in [1, 100000] (got %d)",
		                d->chebyshev_delay);
	if (!pbd_is_finite(d->chebyshev_gamma) || d->chebyshev_gamma <= 0 || d->chebyshev_gamma > 1)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.chebyshev_gamma: must be in (0, 1] (got %.9g)",
		                (double)d->chebyshev_gamma);
	if (d->hierarchy_levels < 0 || d->hierarchy_levels > PBD_HIERARCHY_MAX_LEVELS)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.hierarchy_levels: must be in [0, %d] (got %d)",
		                PBD_HIERARCHY_MAX_LEVELS, d->hierarchy_levels);
	if (d->hierarchy_iterations < 1 || d->hierarchy_iterations > 100000)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.hierarchy_iterations: must be in [1, 100000] (got %d)",
		                d->hierarchy_iterations);
	if (d->collision_mode != PBD_COLLISION_IN_SOLVER && d->collision_mode != PBD_COLLISION_AFTER_SOLVER)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_world_def.collision_mode: unknown mode %d",
		                (int)d->collision_mode);
	if (d->damping_mode != PBD_DAMPING_VELOCITY && d->damping_mode != PBD_DAMPING_AFTER_FORCES)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_world_def.damping_mode: unknown mode %d",
		                (int)d->damping_mode);
	if (!pbd_is_finite(d->divergence_strain) || d->divergence_strain < 0)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.divergence_strain: must be >= 0 (got %.9g)",
		                (double)d->divergence_strain);
	if (!pbd_is_finite(d->sleep_time) || d->sleep_time < 0)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.sleep_time: must be >= 0 s (got %.9g)",
		                (double)d->sleep_time);
	if (!pbd_is_finite(d->sleep_speed) || d->sleep_speed < 0)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.sleep_speed: must be >= 0 m/s (got %.9g)",
		                (double)d->sleep_speed);
	if (d->body_solver != PBD_BODY_SOLVER_POSITION && d->body_solver != PBD_BODY_SOLVER_SOFT_STEP &&
	    d->body_solver != PBD_BODY_SOLVER_AVBD)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_world_def.body_solver: unknown solver %d",
		                (int)d->body_solver);
	if (!pbd_is_finite(d->contact_hertz) || d->contact_hertz < 0 || d->contact_hertz > (pbd_real)1e6)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.contact_hertz: must be in [0, 1e6] Hz (got %.9g)",
		                (double)d->contact_hertz);
	if (!pbd_is_finite(d->max_speed) || d->max_speed < 0)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.max_speed: must be >= 0 (got %.9g)",
		                (double)d->max_speed);
	if (d->simd != PBD_SIMD_AUTO && d->simd != PBD_SIMD_SCALAR && d->simd != PBD_SIMD_AVX2 &&
	    d->simd != PBD_SIMD_AVX512)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_world_def.simd: unknown mode %d", (int)d->simd);
	if (d->simd == PBD_SIMD_AVX2 && !pbd_cpu_avx2())
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_world_def.simd: AVX2 requested, but %s",
		                pbd_simd_built() ? "this CPU lacks AVX2 or FMA" : "this build has no AVX2 kernels");
	if (d->simd == PBD_SIMD_AVX512 && !pbd_cpu_avx512())
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_world_def.simd: AVX-512 requested, but %s",
		                pbd_simd_built() ? "this build or this CPU lacks AVX-512F and VL"
		                                 : "this build has no AVX kernels");
	if ((int)d->method < 0 || d->method >= PBD_METHOD_COUNT)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_world_def.method: unknown method %d", (int)d->method);
	if (!pbd_is_finite(d->stiffness_damping) || d->stiffness_damping < 0)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.stiffness_damping: must be >= 0 s (got %.9g)",
		                (double)d->stiffness_damping);
	if (!pbd_is_finite(d->linear_tolerance) || d->linear_tolerance <= 0 || d->linear_tolerance >= 1)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.linear_tolerance: must be in (0, 1) (got %.9g)",
		                (double)d->linear_tolerance);
	if (!pbd_is_finite(d->hard_stiffness) || d->hard_stiffness <= 0 ||
	    d->hard_stiffness > (pbd_real)PBD_MAX_HARD_STIFFNESS)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.hard_stiffness: must be in (0, %g] (got %.9g)",
		                PBD_MAX_HARD_STIFFNESS, (double)d->hard_stiffness);
	if (!pbd_v3_is_finite(d->wind)) return pbd_fail(w, PBD_ERR_NOT_FINITE, "pbd_world_def.wind: not finite");
	/* The same cap as gravity's: air forces scale with the wind speed. */
	if (PBD_FABS(d->wind.x) > gmax || PBD_FABS(d->wind.y) > gmax || PBD_FABS(d->wind.z) > gmax)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.wind: each component must be within +-%g m/s",
		                PBD_MAX_GRAVITY);
	if (!pbd_is_finite(d->gust_strength) || d->gust_strength < 0 || d->gust_strength > 10)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.gust_strength: must be in [0, 10] (got %.9g)",
		                (double)d->gust_strength);
	if (!pbd_is_finite(d->gust_frequency) || d->gust_frequency <= 0 || d->gust_frequency > 1000)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.gust_frequency: must be in (0, 1000] Hz (got %.9g)",
		                (double)d->gust_frequency);
	if (d->threads < 1 || d->threads > PBD_MAX_THREADS)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_def.threads: must be in [1, %d] (got %d)", PBD_MAX_THREADS,
		                d->threads);
	if (!d->enqueue_task != !d->finish_task)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT,
		                "pbd_world_def: enqueue_task and finish_task must be given together (one is NULL)");
	return PBD_OK;
}

/* def.simd against this build and CPU (validate_def refused AVX2 where they lack it). */
static bool simd_lanes(const pbd_world_def* d) { return d->simd != PBD_SIMD_SCALAR && pbd_cpu_avx2(); }
static bool simd_avx512(const pbd_world_def* d) {
	return (d->simd == PBD_SIMD_AUTO || d->simd == PBD_SIMD_AVX512) && pbd_cpu_avx512();
}

/* One allocation holds the world and the state of the stages it points at (world.h), each part
 * at its own alignment inside the struct. The block has room to move it to the alignment of its
 * type: malloc, and any allocator of the user's, promise only that of max_align_t. */
typedef struct world_block {
	struct pbd_world world; /* first: the block's address is the world's */
	pbd_hierarchy hier;
	pbd_integrator integ;
	pbd_particle_collision pcol;
	pbd_sweep_plan plan;
	pbd_joint_direct jdirect;
} world_block;
#define WORLD_ALIGN ((uintptr_t) _Alignof(world_block))
static size_t world_block_size(void) { return sizeof(world_block) + (size_t)WORLD_ALIGN - 1; }

pbd_status pbd_world_create(const pbd_world_def* def, pbd_world** out) {
	if (!out) return PBD_ERR_INVALID_ARGUMENT;
	*out = NULL;
	if (!def) return PBD_ERR_INVALID_ARGUMENT;
	/* Validate through a stack world so the message reaches the def's log callback. */
	pbd_world probe;
	memset(&probe, 0, sizeof probe);
	probe.def.log = def->log;
	probe.def.log_user = def->log_user;
	pbd_status st = validate_def(&probe, def);
	if (st != PBD_OK) return st;

	pbd_alloc_ctx mem;
	pbd_alloc_init(&mem, &def->allocator);
	char* block = (char*)pbd_alloc(&mem, world_block_size());
	if (!block) return pbd_fail(&probe, PBD_ERR_OUT_OF_MEMORY, "pbd_world_create: out of memory");
	const size_t offset = (size_t)(-(uintptr_t)block & (WORLD_ALIGN - 1));
	world_block* parts = (world_block*)(void*)(block + offset);
	memset(parts, 0, sizeof *parts);
	pbd_world* w = &parts->world;
	w->hier = &parts->hier;
	w->integ = &parts->integ;
	w->pcol = &parts->pcol;
	w->plan = &parts->plan;
	w->jdirect = &parts->jdirect;
	w->def = *def;
	w->nsub = def->substeps;
	w->mem = mem;
	w->block_offset = offset;
	if (pbd_exec_init(&w->exec, &w->mem, (uint32_t)def->threads, def->enqueue_task, def->finish_task, def->task_user) !=
	    PBD_OK) {
		pbd_world_destroy(w);
		return pbd_fail(&probe, PBD_ERR_OUT_OF_MEMORY, "pbd_world_create: cannot start %d threads", def->threads);
	}
	w->simd_lanes = simd_lanes(def);
	w->simd_avx512 = simd_avx512(def);
	if (def->particle_capacity && pbd_particles_reserve(w, def->particle_capacity) != PBD_OK) {
		pbd_world_destroy(w);
		return pbd_fail(&probe, PBD_ERR_OUT_OF_MEMORY, "pbd_world_create: out of memory");
	}
	if (def->distance_capacity) {
		if (pbd_family_reserve(w, PBD_FAMILY_DISTANCE, def->distance_capacity) != PBD_OK) {
			pbd_world_destroy(w);
			return pbd_fail(&probe, PBD_ERR_OUT_OF_MEMORY, "pbd_world_create: out of memory");
		}
	}
	*out = w;
	return PBD_OK;
}

void pbd_world_destroy(pbd_world* w) {
	if (!w) return;
	pbd_alloc_ctx mem = w->mem;
	pbd_exec_free(&w->exec, &mem);
	size_t cp = pbd_particles_allocated(w->cap_p);
	pbd_free(&mem, w->x, cp * sizeof *w->x);
	pbd_free(&mem, w->q, cp * sizeof *w->q);
	pbd_free(&mem, w->x_lo, cp * sizeof *w->x_lo);
	pbd_free(&mem, w->v, cp * sizeof *w->v);
	pbd_free(&mem, w->v_lo, cp * sizeof *w->v_lo);
	pbd_free(&mem, w->x_step, cp * sizeof *w->x_step);
	pbd_free(&mem, w->force, cp * sizeof *w->force);
	pbd_free(&mem, w->target, cp * sizeof *w->target);
	pbd_free(&mem, w->from, cp * sizeof *w->from);
	pbd_free(&mem, w->w, cp * sizeof *w->w);
	pbd_free(&mem, w->w_free, cp * sizeof *w->w_free);
	pbd_free(&mem, w->flags, cp * sizeof *w->flags);
	pbd_free(&mem, w->cmask, cp * sizeof *w->cmask);
	pbd_free(&mem, w->radius, cp * sizeof *w->radius);
	pbd_free(&mem, w->cgroup, cp * sizeof *w->cgroup);
	pbd_free(&mem, w->x_rest, cp * sizeof *w->x_rest);
	pbd_free(&mem, w->block_count, w->cap_block * sizeof *w->block_count);
	pbd_free(&mem, w->block_index, w->cap_block * sizeof *w->block_index);
	pbd_free(&mem, w->block_first, w->cap_block * sizeof *w->block_first);
	pbd_particle_collision_free(w);
	pbd_stats_free(w);
	pbd_sweep_plan_free(w);
	pbd_nodes_free(w);
	pbd_free(&mem, w->dx, cp * sizeof *w->dx);
	pbd_free(&mem, w->q_prev, cp * sizeof *w->q_prev);
	pbd_free(&mem, w->q_iter, cp * sizeof *w->q_iter);
	pbd_free(&mem, w->drag, cp * sizeof *w->drag);
	pbd_free(&mem, w->drag_wind, cp * sizeof *w->drag_wind);
	pbd_free(&mem, w->air_force, cp * sizeof *w->air_force);
	pbd_free(&mem, w->air_drag, cp * sizeof *w->air_drag);
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) pbd_family_free(w, &w->fam[t], pbd_family_table[t]);
	pbd_hierarchy_free(w);
	pbd_bodies_free(w);
	pbd_integrator_free(w);
	pbd_joint_direct_free(w);
	pbd_contact_events_free(w);
	pbd_free(&mem, w->tri, w->cap_t * 3 * sizeof *w->tri);
	pbd_free(&mem, w->tri_drag, w->cap_t * sizeof *w->tri_drag);
	pbd_free(&mem, w->tri_wind, w->cap_t * sizeof *w->tri_wind);
	pbd_colliders_free(w);
	pbd_free(&mem, w->con, w->cap_con * sizeof *w->con);
	pbd_free(&mem, w->con_late, w->cap_con_late * sizeof *w->con_late);
	pbd_free(&mem, w->tcon, w->cap_tc * sizeof *w->tcon);
	pbd_free(&mem, w->rcon, w->cap_rc * sizeof *w->rcon);
	pbd_free(&mem, w->rfeat, w->cap_rfeat * sizeof *w->rfeat);
	pbd_free(&mem, w->rbox, w->cap_rbox * sizeof *w->rbox);
	pbd_free(&mem, w->rorder, w->cap_rorder * sizeof *w->rorder);
	pbd_free(&mem, w->rpairs, w->cap_rpairs * sizeof *w->rpairs);
	pbd_free(&mem, w->rsched, w->cap_rsched * sizeof *w->rsched);
	pbd_free(&mem, w->rpair, w->cap_rpair * sizeof *w->rpair);
	pbd_free(&mem, w->rpair_next, w->cap_rpair_next * sizeof *w->rpair_next);
	pbd_free(&mem, w->rkeep, w->cap_rkeep * sizeof *w->rkeep);
	pbd_free(&mem, w->rref, w->cap_rref * sizeof *w->rref);
	pbd_free(&mem, w->rsoft, w->cap_rsoft * sizeof *w->rsoft);
	pbd_free(&mem, w->rsoft_used, w->cap_rsoft_used * sizeof *w->rsoft_used);
	pbd_free(&mem, w->ravbd_first, w->cap_ravbd_first * sizeof *w->ravbd_first);
	pbd_free(&mem, w->ravbd_list, w->cap_ravbd_list * sizeof *w->ravbd_list);
	pbd_free(&mem, w->ravbd_d, w->cap_ravbd_d * sizeof *w->ravbd_d);
	pbd_free(&mem, w->ravbd_load, w->cap_ravbd_load * sizeof *w->ravbd_load);
	pbd_free(&mem, w->tri_chunk, w->cap_tri_chunk * sizeof *w->tri_chunk);
	pbd_free(&mem, w->path_box, w->cap_path_box * sizeof *w->path_box);
	pbd_free(&mem, w->corner, w->cap_corner * sizeof *w->corner);
	pbd_free(&mem, w->tri_chunk_move, w->cap_tri_chunk_move * sizeof *w->tri_chunk_move);
	pbd_free(&mem, w->fitem, w->cap_fitem * sizeof *w->fitem);
	pbd_free(&mem, w->tstage, w->cap_tstage * sizeof *w->tstage);
	for (uint32_t t = 0; t < PBD_MAX_THREADS; ++t) {
		pbd_free(&mem, w->fwork[t].corner, w->fwork[t].cap_corner * sizeof *w->fwork[t].corner);
		pbd_free(&mem, w->fwork[t].edge, w->fwork[t].cap_edge * sizeof *w->fwork[t].edge);
	}
	pbd_free(&mem, w->fkeep.of, w->fkeep.cap_of * sizeof *w->fkeep.of);
	pbd_free(&mem, w->fkeep.rec, w->fkeep.cap_rec * sizeof *w->fkeep.rec);
	pbd_free(&mem, w->fkeep.corner, w->fkeep.cap_corner * sizeof *w->fkeep.corner);
	pbd_free(&mem, w->fkeep.edge, w->fkeep.cap_edge * sizeof *w->fkeep.edge);
	pbd_free(&mem, w->fkeep.wcorner, w->fkeep.cap_wcorner * sizeof *w->fkeep.wcorner);
	pbd_free(&mem, w->fkeep.wedge, w->fkeep.cap_wedge * sizeof *w->fkeep.wedge);
	pbd_free(&mem, w->edge, w->cap_edge * sizeof *w->edge);
	pbd_broad* bp = &w->broad;
	pbd_free(&mem, bp->chunk, bp->cap_chunk * sizeof *bp->chunk);
	pbd_free(&mem, bp->chunk_order, bp->cap_chunk_order * sizeof *bp->chunk_order);
	pbd_free(&mem, bp->collider, bp->cap_collider * sizeof *bp->collider);
	pbd_free(&mem, bp->bounded_of, bp->cap_bounded * sizeof *bp->bounded_of);
	pbd_free(&mem, bp->collider_order, bp->cap_collider_order * sizeof *bp->collider_order);
	pbd_free(&mem, bp->pairs, bp->cap_pairs * sizeof *bp->pairs);
	pbd_free(&mem, bp->first_pairs, bp->cap_first_pairs * sizeof *bp->first_pairs);
	pbd_free(&mem, bp->start, bp->cap_start * sizeof *bp->start);
	pbd_free(&mem, bp->clear_of, bp->cap_clear_of * sizeof *bp->clear_of);
	pbd_free(&mem, bp->clear, bp->cap_clear * sizeof *bp->clear);
	pbd_free(&mem, bp->near_of, bp->cap_near_of * sizeof *bp->near_of);
	pbd_free(&mem, bp->near_ids, (size_t)bp->cap_near_ids * PBD_NEAR_CAP * sizeof *bp->near_ids);
	pbd_free(&mem, bp->near_n, bp->cap_near_n * sizeof *bp->near_n);
	pbd_free(&mem, bp->near_ball, (size_t)bp->cap_near_ball * 4 * sizeof *bp->near_ball);
	pbd_free(&mem, w->pub, w->cap_pub * sizeof *w->pub);
	pbd_free(&mem, w->inside, w->cap_inside * sizeof *w->inside);
	pbd_free(&mem, w->inside_next, w->cap_inside_next * sizeof *w->inside_next);
	pbd_free(&mem, w->events, w->cap_events * sizeof *w->events);
	pbd_free(&mem, w->obj_events, w->cap_obj_events * sizeof *w->obj_events);
	pbd_free(&mem, w->jev, w->cap_jev * sizeof *w->jev);
	pbd_free(&mem, w->obj_prev, w->cap_obj_prev * sizeof *w->obj_prev);
	pbd_free(&mem, w->obj_next, w->cap_obj_next * sizeof *w->obj_next);
	pbd_free(&mem, w->softs, w->cap_s * sizeof *w->softs);
	pbd_free(&mem, (char*)w - w->block_offset, world_block_size());
}

const char* pbd_world_last_error(const pbd_world* w) { return w ? w->last_error : "no world"; }

pbd_world_def pbd_world_get_def(const pbd_world* w) { return w ? w->def : pbd_world_def_default(); }

/* Applies one changed setting through the same validation as create. */
static pbd_status apply_def(pbd_world* w, const pbd_world_def* d) {
	pbd_status st = validate_def(w, d);
	if (st == PBD_OK && (d->threads != w->def.threads || d->enqueue_task != w->def.enqueue_task ||
	                     d->finish_task != w->def.finish_task || d->task_user != w->def.task_user)) {
		pbd_exec_free(&w->exec, &w->mem);
		if (pbd_exec_init(&w->exec, &w->mem, (uint32_t)d->threads, d->enqueue_task, d->finish_task, d->task_user) !=
		    PBD_OK) {
			/* Back to what worked before; a serial world always does. */
			pbd_exec_init(&w->exec, &w->mem, (uint32_t)w->def.threads, w->def.enqueue_task, w->def.finish_task,
			              w->def.task_user);
			return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_set_threads: cannot start %d threads", d->threads);
		}
	}
	if (st == PBD_OK) {
		w->def = *d;
		w->simd_lanes = simd_lanes(d);
		w->simd_avx512 = simd_avx512(d);
		w->stats_valid = false; /* gravity feeds the potential energy */
	}
	return st;
}

/* The setters of one setting each: a copy of the def with the field changed, checked as create
 * checks it (apply_def). */
pbd_status pbd_world_set_dt(pbd_world* w, pbd_real value) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_world_def d = w->def;
	d.dt = value;
	return apply_def(w, &d);
}

pbd_status pbd_world_set_substeps(pbd_world* w, int value) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_world_def d = w->def;
	d.substeps = value;
	return apply_def(w, &d);
}

pbd_status pbd_world_set_max_substeps(pbd_world* w, int value) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_world_def d = w->def;
	d.max_substeps = value;
	return apply_def(w, &d);
}

pbd_status pbd_world_set_iterations(pbd_world* w, int value) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_world_def d = w->def;
	d.iterations = value;
	return apply_def(w, &d);
}

pbd_status pbd_world_set_solver(pbd_world* w, pbd_solver value) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_world_def d = w->def;
	d.solver = value;
	return apply_def(w, &d);
}

pbd_status pbd_world_set_formulation(pbd_world* w, pbd_formulation value) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_world_def d = w->def;
	d.formulation = value;
	return apply_def(w, &d);
}

pbd_status pbd_world_set_gravity(pbd_world* w, pbd_vec3 value) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_world_def d = w->def;
	d.gravity = value;
	return apply_def(w, &d);
}

pbd_status pbd_world_set_damping(pbd_world* w, pbd_real value) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_world_def d = w->def;
	d.damping = value;
	return apply_def(w, &d);
}

pbd_status pbd_world_set_collision_mode(pbd_world* w, pbd_collision_mode value) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_world_def d = w->def;
	d.collision_mode = value;
	return apply_def(w, &d);
}

pbd_status pbd_world_set_method(pbd_world* w, pbd_method value) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_world_def d = w->def;
	d.method = value;
	return apply_def(w, &d);
}

pbd_status pbd_world_set_hard_stiffness(pbd_world* w, pbd_real value) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_world_def d = w->def;
	d.hard_stiffness = value;
	return apply_def(w, &d);
}

pbd_status pbd_world_set_threads(pbd_world* w, int value) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_world_def d = w->def;
	d.threads = value;
	return apply_def(w, &d);
}

pbd_status pbd_world_set_simd(pbd_world* w, pbd_simd value) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_world_def d = w->def;
	d.simd = value;
	return apply_def(w, &d);
}

pbd_status pbd_world_set_profile(pbd_world* w, bool on) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	w->def.profile = on;
	/* Off means all zero from now on, also in the stats already computed. */
	if (!on) {
		memset(&w->profile, 0, sizeof w->profile);
		memset(&w->stats.profile, 0, sizeof w->stats.profile);
	}
	return PBD_OK;
}

pbd_status pbd_world_set_force_settings(pbd_world* w, pbd_real stiffness_damping, pbd_real linear_tolerance) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_world_def d = w->def;
	d.stiffness_damping = stiffness_damping;
	d.linear_tolerance = linear_tolerance;
	return apply_def(w, &d);
}

pbd_status pbd_world_set_wind(pbd_world* w, pbd_vec3 wind, pbd_real gust_strength, pbd_real gust_frequency) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_world_def d = w->def;
	d.wind = wind;
	d.gust_strength = gust_strength;
	d.gust_frequency = gust_frequency;
	return apply_def(w, &d);
}

pbd_status pbd_world_set_chebyshev(pbd_world* w, bool on, pbd_real rho, int delay, pbd_real gamma) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_world_def d = w->def;
	d.chebyshev = on;
	d.chebyshev_rho = rho;
	d.chebyshev_delay = delay;
	d.chebyshev_gamma = gamma;
	return apply_def(w, &d);
}

pbd_status pbd_world_set_hierarchy(pbd_world* w, int levels, int iterations) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_world_def d = w->def;
	d.hierarchy_levels = levels;
	d.hierarchy_iterations = iterations;
	return apply_def(w, &d);
}

pbd_status pbd_world_set_jacobi(pbd_world* w, pbd_real alpha, pbd_real omega, bool equal_split) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_world_def d = w->def;
	d.jacobi_alpha = alpha;
	d.jacobi_omega = omega;
	d.jacobi_equal_split = equal_split;
	return apply_def(w, &d);
}

/* The multipliers of an undone step belong to a state that no longer is, and need not be
 * finite. The families' are read by nothing before the next substep sets them to 0 (XPBD starts
 * every substep without them); vertex block descent's multipliers and penalties carry from step
 * to step, and its rows start cold again, as after a change of the constraints, rather than carry
 * a NaN into every later step. Cleared, they leave the world as a snapshot may carry it, so that
 * a world saved after an undone step loads again. */
static void clear_multipliers(pbd_world* w) {
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		pbd_family* f = &w->fam[t];
		const uint32_t nl = pbd_family_table[t]->lambdas;
		if (f->n && nl) memset(f->lambda, 0, (size_t)f->n * nl * sizeof *f->lambda);
	}
	const uint32_t rows = pbd_vbd_saved_rows(w);
	if (rows) {
		memset(w->integ->lam, 0, (size_t)rows * sizeof *w->integ->lam);
		memset(w->integ->pen, 0, (size_t)rows * sizeof *w->integ->pen);
	}
}

/* A blown-up step is reported, never passed off as a result: a non-finite state (already
 * undone per particle) or a strain no material reaches marks the step as diverged. The first
 * occurrence is logged with its cause; the counter counts diverged steps. */
static void check_divergence(pbd_world* w, uint32_t restored, double strain) {
	const double bound = (double)w->def.divergence_strain;
	const bool strained = bound > 0 && !(strain <= bound);
	if (!restored && !strained) return;
	pbd_warning_stat* ws = &w->warnings[PBD_WARN_DIVERGED];
	if (ws->count == 0) {
		if (restored)
			pbd_log(w, "pbd_world_step: diverged at step %llu: %u particles became non-finite",
			        (unsigned long long)w->steps, restored);
		else
			pbd_log(w, "pbd_world_step: diverged at step %llu: max strain %.3g exceeds divergence_strain %.3g",
			        (unsigned long long)w->steps, strain, bound);
	}
	ws->count++;
	ws->last_index = (uint32_t)(w->steps > UINT32_MAX ? UINT32_MAX : w->steps);
}

/* Ends the step's profile: the stats pass is timed up to here, so the stats computed in the
 * step receive the profile afterwards. */
static void publish_profile(pbd_world* w, uint64_t t_stats, uint64_t t_step) {
	if (!w->def.profile) return;
	pbd_prof_end(w, PBD_PHASE_STATS, t_stats);
	pbd_profile_publish(&w->prof, pbd_clock_ns() - t_step, &w->profile);
	w->profile.substeps = w->nsub;
	w->profile.iterations = w->def.iterations;
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) w->profile.constraints[t] = w->fam[t].n;
	w->stats.profile = w->profile;
}

/* The substeps of the coming step (pbd_world_def.max_substeps): enough that the fastest particle
 * with a radius, at its speed plus what gravity adds in the step, moves at most the least
 * thickness per substep. Two layers that close more than a thickness in one substep meet their
 * contact with less room than the iterations need to part them (a 128 x 128 cloth falling on a
 * table at 4 substeps let edges through faces where it bunched at the corners; at 8, none). */
static int step_substeps(const pbd_world* w) {
	const pbd_world_def* d = &w->def;
	if (d->max_substeps <= d->substeps) return d->substeps;
	pbd_real rmin = PBD_REAL_MAX, v2 = 0;
	for (uint32_t i = 0; i < w->np; ++i) {
		const pbd_real r = w->radius[i];
		if (!(r > 0) || !(w->w[i] > 0)) continue;
		rmin = PBD_FMIN(rmin, r);
		v2 = PBD_FMAX(v2, pbd_v3_dot(w->v[i], w->v[i]));
	}
	if (rmin == PBD_REAL_MAX) return d->substeps;
	const double motion = ((double)PBD_SQRT(v2) + (double)pbd_v3_length(d->gravity) * (double)d->dt) * (double)d->dt;
	const double need = ceil(motion / (2 * (double)rmin));
	/* A non-finite speed (the step will restore the particle and report it) asks for nothing. */
	if (!(need > (double)d->substeps)) return d->substeps;
	return need < (double)d->max_substeps ? (int)need : d->max_substeps;
}

int pbd_world_step_substeps(const pbd_world* w) { return w ? w->nsub : 0; }

pbd_status pbd_world_step(pbd_world* w) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	const pbd_world_def* d = &w->def;
	const int substeps = step_substeps(w);
	w->nsub = substeps;
	pbd_real h = d->dt / (pbd_real)substeps;
	/* Damping is given per step; spread it over the substeps so the step total is the same. */
	pbd_real damping = d->damping == 1 ? 1 : PBD_POW(d->damping, PBD_R(1.0) / (pbd_real)substeps);
	const uint64_t t_step = pbd_prof_begin(w);
	if (d->profile) memset(&w->prof, 0, sizeof w->prof);
	pbd_collide_drop_kept(w); /* whatever an earlier step left kept, none of it holds now */

	if (!w->partitioned) {
		pbd_partition_build(w);
		w->hier->valid = false;
	}
	/* Built here, before any particle moves: a failure leaves the world as it was. */
	if (d->hierarchy_levels > 0 &&
	    (!w->hier->valid || w->masses_changed || w->hier->built_for != d->hierarchy_levels) &&
	    pbd_hierarchy_build(w) != PBD_OK)
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory building %d hierarchy levels",
		                d->hierarchy_levels);
	{
		pbd_step_ctx ctx;
		pbd_step_ctx_init(w, h, &ctx);
		pbd_families_refresh(w, &ctx);
	}
	const pbd_method_ops* method = pbd_method_table[d->method];
	if (method->prepare) {
		const pbd_status st = method->prepare(w);
		if (st != PBD_OK) return st;
	}
	if (w->fam[PBD_FAMILY_JOINT].n > 0 || w->jdirect->nrows > 0) {
		const pbd_status st = pbd_joint_direct_prepare(w);
		if (st != PBD_OK) return st;
	}
	if (pbd_particle_collision_prepare(w) != PBD_OK)
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for particle collision");
	if (pbd_stats_reserve(w) != PBD_OK)
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for the statistics");
	w->step_status = PBD_OK;
	pbd_particles_begin_step(w);
	pbd_bodies_begin_step(w);
	pbd_rigid_contacts_begin_step(w);
	w->njev = 0;
	pbd_contact_events_begin_step(w);
	pbd_prof_end(w, PBD_PHASE_PREPARE, t_step);
	for (int s = 1; s <= substeps; ++s) method->substep(w, h, damping, s, substeps);
	const uint64_t t_end = pbd_prof_begin(w);
	const uint32_t restored = pbd_particles_end_step(w);
	/* a body put back where the step found it leaves the contacts kept for the next step behind */
	if (pbd_bodies_end_step(w)) pbd_rigid_contacts_forget(w);
	if (restored) clear_multipliers(w);
	const pbd_status contacts = pbd_collide_end_step(w);
	pbd_contact_events_end_step(w); /* before sleep: a pair that slept through the step still touches */
	pbd_sleep_update(w);
	pbd_prof_end(w, PBD_PHASE_PREPARE, t_end);

	w->time += (double)d->dt;
	w->steps += 1;
	w->stats_valid = false;
	double strain = 0;
	const uint64_t t_stats = pbd_prof_begin(w);
	if (d->diagnostics) {
		pbd_stats_compute(w, &w->stats);
		w->stats_valid = true;
		strain = w->stats.max_strain;
	} else if (d->divergence_strain > 0) {
		strain = pbd_stats_strain_past(w, (double)d->divergence_strain);
	}
	pbd_collide_drop_kept(w);
	pbd_exec_end(&w->exec); /* after the step's last stage: the threads return */
	check_divergence(w, restored, strain);
	publish_profile(w, t_stats, t_step);
	return w->step_status != PBD_OK ? w->step_status : contacts;
}

void pbd_world_get_stats(pbd_world* w, pbd_stats* out) {
	if (!w || !out) return;
	if (!w->stats_valid) {
		pbd_stats_compute(w, &w->stats);
		pbd_exec_end(&w->exec);
		w->stats_valid = true;
	}
	*out = w->stats;
}

pbd_warning_stat pbd_world_get_warning(const pbd_world* w, pbd_warning which) {
	pbd_warning_stat none = {0, 0};
	if (!w || (int)which < 0 || which >= PBD_WARN_COUNT) return none;
	return w->warnings[which];
}

pbd_collision_work pbd_world_get_collision_work(const pbd_world* w) {
	pbd_collision_work none;
	memset(&none, 0, sizeof none);
	return w ? w->pcol->work : none;
}

uint64_t pbd_world_hash(const pbd_world* w) {
	uint64_t h = PBD_FNV1A_START;
	if (!w) return h;
	h = pbd_fnv1a(h, w->x, (size_t)w->np * sizeof *w->x);
	h = pbd_fnv1a(h, w->v, (size_t)w->np * sizeof *w->v);
	h = pbd_fnv1a(h, w->x_lo, (size_t)w->np * sizeof *w->x_lo);
	h = pbd_fnv1a(h, w->v_lo, (size_t)w->np * sizeof *w->v_lo);
	/* the bodies' state (none: the hash of the particles alone) */
	const pbd_bodies* b = &w->bodies;
	h = pbd_fnv1a(h, b->x, (size_t)b->n * sizeof *b->x);
	h = pbd_fnv1a(h, b->x_lo, (size_t)b->n * sizeof *b->x_lo);
	h = pbd_fnv1a(h, b->v, (size_t)b->n * sizeof *b->v);
	h = pbd_fnv1a(h, b->q, (size_t)b->n * sizeof *b->q);
	h = pbd_fnv1a(h, b->omega, (size_t)b->n * sizeof *b->omega);
	return h;
}

/* Here rather than in bodies.c: a body takes with it what hangs on it in other layers, the shapes
 * it carries and the attachments to its points. */
pbd_status pbd_body_destroy(pbd_world* w, pbd_body_id id) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	const uint32_t i = pbd_bodies_slot_of(w, id, "pbd_body_destroy");
	if (i == UINT32_MAX) return PBD_ERR_INVALID_ARGUMENT;
	pbd_attachment_release_body(w, i);
	pbd_joint_release_body(w, i);
	pbd_bodies_kill(w, i);
	return PBD_OK;
}
