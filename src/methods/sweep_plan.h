/* The Gauss-Seidel sweep as stages of blocks: a stage per colour group, each family's range of
 * that colour cut into blocks of PBD_BLOCK_CONSTRAINTS (task.h), and, for threads, the sweep as a
 * chain (pbd_exec_chain) with each block's particle range and the blocks of the previous colour
 * it depends on, worked out once per partition. */
#ifndef PBD_SWEEP_PLAN_H
#define PBD_SWEEP_PLAN_H

#include "model/family.h"
#include "core/task.h"

typedef struct pbd_world pbd_world;

/* One stage of the sweeps: constraints that share no particle, the ranges [first[t], end[t]) of
 * each family t, cut into blocks; start[t] is family t's first block. */
typedef struct pbd_range_stage {
	pbd_world* w;
	const pbd_step_ctx* ctx;
	bool jacobi;
	uint32_t first[PBD_FAMILY_COUNT], end[PBD_FAMILY_COUNT];
	uint32_t start[PBD_FAMILY_COUNT + 1];
} pbd_range_stage;

/* Sets s to group g of the families in `mask` (bit t: family t); returns its blocks. */
uint32_t pbd_range_stage_init(pbd_range_stage* s, pbd_world* w, const pbd_step_ctx* ctx, bool jacobi, int g,
                              uint32_t mask);
/* Projects block `block` of the stage (a pbd_stage_fn). */
void pbd_range_block(void* p, uint32_t block, uint32_t worker);

typedef struct pbd_sweep_plan {
	bool valid;
	uint64_t topology; /* the partition it was made for (pbd_world.topology) */
	uint32_t block_constraints;
	uint32_t stages; /* the colour groups that hold constraints */
	pbd_range_stage stage[PBD_CHAIN_MAX_STAGES];
	void* ctx[PBD_CHAIN_MAX_STAGES];
	uint32_t first[PBD_CHAIN_MAX_STAGES + 1];
	uint32_t cap; /* blocks the arrays hold */
	uint32_t *lo, *hi, *dep_first, *dep_last;
	_Atomic uint32_t* flag;
} pbd_sweep_plan;

/* Makes w->plan match the partition, growing its arrays (before a step's stages). */
pbd_status pbd_sweep_plan_update(pbd_world* w);
void pbd_sweep_plan_free(pbd_world* w);
/* One Gauss-Seidel sweep over the colour groups as a chain, with `ctx` (w->plan valid). */
void pbd_sweep_plan_run(pbd_world* w, const pbd_step_ctx* ctx);

#endif
