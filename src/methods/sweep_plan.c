/* The Gauss-Seidel sweep's stages and its chain (sweep_plan.h).
 *
 * On several threads each colour of a sweep waited for the whole previous colour: on a 128^2 cloth
 * a stage is 11 microseconds of work per thread, and the caller paid 1 to 2 more per stage to
 * announce it, claim, and wait for the other thread's last block. As a chain, a block waits only
 * for the blocks of the previous colour that share particles with it, and for the colours before
 * that: a thread that finished its part of a colour goes on into the next one, and the threads
 * meet only where their parts of the cloth do. The particles a block touches are taken as the
 * range [lo, hi] of their indices, so a mesh whose numbering is not local makes every block
 * depend on every block before it, and the chain runs as the stages did. */
#include "methods/sweep_plan.h"

#include <string.h>

#include "model/world.h"

uint32_t pbd_range_stage_init(pbd_range_stage* s, pbd_world* w, const pbd_step_ctx* ctx, bool jacobi, int g,
                              uint32_t mask) {
	s->w = w;
	s->ctx = ctx;
	s->jacobi = jacobi;
	uint32_t blocks = 0;
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		const pbd_family* f = &w->fam[t];
		s->start[t] = blocks;
		s->first[t] = g ? f->group_end[g - 1] : 0;
		s->end[t] = f->group_end[g];
		if (!(mask >> t & 1u)) s->end[t] = s->first[t];
		const uint32_t n = s->end[t] - s->first[t];
		if (n) blocks += pbd_family_table[t]->shared_work ? 1u : pbd_blocks(n, w->exec.block_constraints);
	}
	s->start[PBD_FAMILY_COUNT] = blocks;
	return blocks;
}

/* The family and constraint range of block `block` of the stage. */
static int block_range(const pbd_range_stage* s, uint32_t block, uint32_t* first, uint32_t* end) {
	int t = 0;
	while (block >= s->start[t + 1]) ++t;
	*first = s->first[t];
	*end = s->end[t];
	if (!pbd_family_table[t]->shared_work) {
		const uint32_t size = s->w->exec.block_constraints;
		*first += (block - s->start[t]) * size;
		*end = pbd_block_end(*first, *end, size);
	}
	return t;
}

void pbd_range_block(void* p, uint32_t block, uint32_t worker) {
	const pbd_range_stage* s = (const pbd_range_stage*)p;
	const uint64_t t0 = pbd_prof_begin(s->w);
	uint32_t first, end;
	const int t = block_range(s, block, &first, &end);
	const pbd_family_ops* ops = pbd_family_table[t];
	pbd_family* f = &s->w->fam[t];
	/* AVX2 lanes over the block's multiple of 8 (a block lies in one colour), the scalar kernel
	 * on the rest: the same bits either way (simd/distance_avx2.c). */
	void (*lanes)(const pbd_step_ctx*, pbd_family*, uint32_t, uint32_t) =
	    s->jacobi ? ops->jacobi_lanes : ops->project_lanes;
	if (s->ctx->simd && lanes && end - first >= 8) {
		const uint32_t split = first + (end - first) / 8 * 8;
		lanes(s->ctx, f, first, split);
		first = split;
	}
	if (first < end) (s->jacobi ? ops->jacobi : ops->project)(s->ctx, f, first, end);
	pbd_prof_end_family(s->w, worker, t, t0);
}

/* The smallest and largest particle index of the block's constraints. */
static void block_particles(const pbd_range_stage* s, uint32_t block, uint32_t* lo, uint32_t* hi) {
	uint32_t first, end;
	const int t = block_range(s, block, &first, &end);
	const pbd_family* f = &s->w->fam[t];
	const pbd_family_ops* ops = pbd_family_table[t];
	uint32_t l = UINT32_MAX, h = 0, p[PBD_FAMILY_MAX_ARITY];
	for (uint32_t k = first; k < end; ++k) {
		uint32_t n = PBD_FAMILY_MAX_ARITY;
		for (uint32_t from = 0; from < n; from += PBD_FAMILY_MAX_ARITY) {
			n = ops->particles(f, k, from, p, PBD_FAMILY_MAX_ARITY);
			const uint32_t m = n - from < PBD_FAMILY_MAX_ARITY ? n - from : PBD_FAMILY_MAX_ARITY;
			for (uint32_t i = 0; i < m; ++i) {
				l = p[i] < l ? p[i] : l;
				h = p[i] > h ? p[i] : h;
			}
		}
	}
	*lo = l;
	*hi = h;
}

/* Bytes per block: lo, hi, dep_first, dep_last and flag, carved from one allocation. */
#define PLAN_BYTES (4 * sizeof(uint32_t) + sizeof(_Atomic uint32_t))

static bool grow(pbd_world* w, uint32_t need) {
	pbd_sweep_plan* pl = w->plan;
	if (need <= pl->cap) return true;
	pbd_free(&w->mem, pl->lo, (size_t)pl->cap * PLAN_BYTES);
	pl->lo = NULL;
	pl->cap = 0;
	uint32_t* m = (uint32_t*)pbd_alloc(&w->mem, (size_t)need * PLAN_BYTES);
	if (!m) return false;
	pl->lo = m;
	pl->hi = m + need;
	pl->dep_first = m + 2 * (size_t)need;
	pl->dep_last = m + 3 * (size_t)need;
	pl->flag = (_Atomic uint32_t*)(void*)(m + 4 * (size_t)need);
	pl->cap = need;
	return true;
}

pbd_status pbd_sweep_plan_update(pbd_world* w) {
	pbd_sweep_plan* pl = w->plan;
	if (pl->valid && pl->topology == w->topology && pl->block_constraints == w->exec.block_constraints) return PBD_OK;
	pl->valid = false;
	uint32_t stages = 0, total = 0;
	for (int g = 0; g < PBD_PARTITION_COLOURS; ++g) {
		pbd_range_stage s;
		const uint32_t blocks = pbd_range_stage_init(&s, w, NULL, false, g, (1u << PBD_FAMILY_COUNT) - 1u);
		if (!blocks) continue;
		pl->stage[stages] = s;
		pl->ctx[stages] = &pl->stage[stages];
		pl->first[stages++] = total;
		total += blocks;
	}
	pl->first[stages] = total;
	pl->stages = stages;
	if (!grow(w, total)) return PBD_ERR_OUT_OF_MEMORY;
	for (uint32_t s = 0; s < stages; ++s)
		for (uint32_t b = pl->first[s]; b < pl->first[s + 1]; ++b)
			block_particles(&pl->stage[s], b - pl->first[s], &pl->lo[b], &pl->hi[b]);
	for (uint32_t s = 0; s < stages; ++s)
		for (uint32_t b = pl->first[s]; b < pl->first[s + 1]; ++b) {
			uint32_t df = 1, dl = 0;
			if (s > 0)
				for (uint32_t i = pl->first[s - 1]; i < pl->first[s]; ++i) {
					if (pl->lo[i] > pl->hi[b] || pl->lo[b] > pl->hi[i]) continue;
					if (df > dl) df = i;
					dl = i;
				}
			pl->dep_first[b] = df;
			pl->dep_last[b] = dl;
			atomic_init(&pl->flag[b], 0);
		}
	pl->topology = w->topology;
	pl->block_constraints = w->exec.block_constraints;
	pl->valid = stages > 0;
	return PBD_OK;
}

void pbd_sweep_plan_free(pbd_world* w) {
	pbd_sweep_plan* pl = w->plan;
	pbd_free(&w->mem, pl->lo, (size_t)pl->cap * PLAN_BYTES);
	memset(pl, 0, sizeof *pl);
}

void pbd_sweep_plan_run(pbd_world* w, const pbd_step_ctx* ctx) {
	pbd_sweep_plan* pl = w->plan;
	for (uint32_t s = 0; s < pl->stages; ++s) pl->stage[s].ctx = ctx;
	const pbd_chain c = {pl->stages, pbd_range_block, pl->ctx, pl->first, pl->dep_first, pl->dep_last, pl->flag};
	pbd_exec_chain(&w->exec, &c);
}
