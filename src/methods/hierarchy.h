/* The hierarchical solve (Müller 2008, "Hierarchical Position Based Dynamics", VRIPhys): coarse
 * levels of particles with unilateral distance constraints between them, iterated coarse to
 * fine before the real constraints, each level's corrections interpolated to the particles of
 * the next finer one. hierarchy.c builds the levels and runs the pass; docs/solvers.md derives it.
 *
 * Level 0 is every particle with a structural or shear distance constraint; level l + 1 is a
 * subset of level l. A particle in level l but not in level l + 1 leaves at level l + 1: it has
 * parents in level l + 1 (coarse neighbours in level l's graph) and interpolation weights to them. */
#ifndef PBD_HIERARCHY_H
#define PBD_HIERARCHY_H

#include "model/family.h"

/* A particle that keeps fewer coarse neighbours than this becomes coarse itself. */
#define PBD_HIERARCHY_MIN_PARENTS 2
/* The nearest this many coarse neighbours (by rest length) are a particle's parents. */
#define PBD_HIERARCHY_MAX_PARENTS 8
/* Above this many neighbours a particle's neighbourhood is not unfolded (hierarchy.c, step 3):
 * the coarse rest lengths through it fall back to the path a-i-b. */
#define PBD_HIERARCHY_MAX_RING 64

/* A coarse constraint: |x_a - x_b| <= rest, hard, projected only when stretched, with the
 * inverse masses of its ends in its level (aggregated from the particles they stand for). */
typedef struct pbd_coarse_c {
	uint32_t a, b;
	pbd_real rest;
	pbd_real wa, wb;
} pbd_coarse_c;

_Static_assert(sizeof(pbd_coarse_c) == 2 * sizeof(uint32_t) + 3 * sizeof(pbd_real), "padding in pbd_coarse_c");

typedef struct pbd_hierarchy {
	bool valid;      /* built for the current constraints, pins and masses */
	int built_for;   /* the def's hierarchy_levels it was built for */
	uint32_t levels; /* coarse levels built: fewer than asked when coarsening stops shrinking */
	uint32_t particles[PBD_HIERARCHY_MAX_LEVELS + 1]; /* particles in each level */
	/* Coarse constraints of level l (1..levels): [con_end[l - 1], con_end[l]), sorted into
	 * independent groups: group g of level l ends at group_end[l][g] (absolute). */
	uint32_t nc, cap_c;
	pbd_coarse_c* con;
	uint32_t con_end[PBD_HIERARCHY_MAX_LEVELS + 1];
	uint32_t group_end[PBD_HIERARCHY_MAX_LEVELS + 1][PBD_GROUP_COUNT];
	/* The particles leaving at level l: fine[k] for k in [fine_end[l - 1], fine_end[l]), whose
	 * parents are par[j] with weights weight[j] for j in [par_end[k - 1], par_end[k]). */
	uint32_t nf, cap_f;
	uint32_t* fine;
	uint32_t* par_end;
	uint32_t fine_end[PBD_HIERARCHY_MAX_LEVELS + 1];
	uint32_t npar, cap_par;
	uint32_t* par;
	pbd_real* weight;
} pbd_hierarchy;

typedef struct pbd_world pbd_world;

/* Builds the levels for the world's def.hierarchy_levels from its distance constraints, pins
 * and masses (never from positions, so that a loaded snapshot builds the same). Allocates;
 * PBD_ERR_OUT_OF_MEMORY leaves no hierarchy. */
pbd_status pbd_hierarchy_build(pbd_world* w);
void pbd_hierarchy_free(pbd_world* w);
/* Gauss-Seidel sweeps over level l (1 = finest coarse level) per pass: 2^(l-1), at most
 * `iterations` (pbd_world_def.hierarchy_iterations). Each level has about a quarter of the
 * particles of the one below, so doubling the sweeps per level halves its cost: the whole pass
 * costs about half a fine sweep, however deep. The coarse levels carry the correction across the
 * cloth and need the sweeps; the finest ones lie close to the real constraints, which the
 * iterations after the pass converge anyway. Measured on the 256 x 256 hanging cloth (6 levels,
 * 10 substeps): 4 sweeps on every level, 0.96 % mean strain at 46 ms per step; this schedule
 * up to 8, 0.93 % at 34 ms (docs/BENCHMARKS.md). */
static inline int pbd_hierarchy_sweeps(uint32_t l, int iterations) {
	const int s = l < 16 ? 1 << (l - 1) : iterations;
	return s < iterations ? s : iterations;
}
/* The coarse-to-fine pass of one substep, before the iterations: moves q. */
void pbd_hierarchy_solve(pbd_world* w, const pbd_step_ctx* ctx);
#ifdef PBD_HAVE_AVX2
/* project_coarse (hierarchy.c) in AVX2 lanes, bit-identical; (end - first) % 8 == 0, one group. */
void pbd_coarse_project_avx2(const pbd_step_ctx* ctx, const pbd_coarse_c* c, uint32_t first, uint32_t end);
void pbd_coarse_project_avx512(const pbd_step_ctx* ctx, const pbd_coarse_c* c, uint32_t first, uint32_t end);
#endif

#endif
