/* The spatial hash (hash_grid.h). */
#include <math.h>
#include <string.h>

#include "collision/hash_grid.h"

bool pbd_hash_grid_reserve(pbd_hash_grid* g, pbd_alloc_ctx* mem, uint32_t points) {
	const uint32_t need_slots = 2 * (points ? points : 1) + 1;
	if (need_slots > g->cap_slots) {
		if (!pbd_grow(mem, (void**)&g->start, sizeof *g->start, g->cap_slots, need_slots)) return false;
		g->cap_slots = need_slots;
	}
	if (points > g->cap_points) {
		if (!pbd_grow(mem, (void**)&g->entry, sizeof *g->entry, g->cap_points, points)) return false;
		g->cap_points = points;
	}
	return true;
}

void pbd_hash_grid_free(pbd_hash_grid* g, pbd_alloc_ctx* mem) {
	pbd_free(mem, g->start, (size_t)g->cap_slots * sizeof *g->start);
	pbd_free(mem, g->entry, (size_t)g->cap_points * sizeof *g->entry);
	pbd_free(mem, g->first, (size_t)g->cap_first * sizeof *g->first);
	pbd_free(mem, g->cells, (size_t)g->cap_cells * sizeof *g->cells);
	memset(g, 0, sizeof *g);
}

static uint32_t slot_of(const pbd_hash_grid* g, pbd_vec3 p) {
	return pbd_hash_grid_slot(g, pbd_hash_grid_coord(g, p.x), pbd_hash_grid_coord(g, p.y), pbd_hash_grid_coord(g, p.z));
}

void pbd_hash_grid_build(pbd_hash_grid* g, const pbd_vec3* points, const pbd_real* radius, uint32_t n, pbd_real cell) {
	g->cell = cell;
	g->inv_cell = 1 / cell;
	g->slots = 2 * (n ? n : 1);
	memset(g->start, 0, ((size_t)g->slots + 1) * sizeof *g->start);
	/* Count per slot, prefix-sum to the end of each slot's run, then place each point by
	 * decrementing its slot's end: start[s] ends at the run's first entry. */
	for (uint32_t i = 0; i < n; ++i)
		if (!radius || radius[i] > 0) g->start[slot_of(g, points[i])]++;
	uint32_t sum = 0;
	for (uint32_t s = 0; s < g->slots; ++s) {
		sum += g->start[s];
		g->start[s] = sum;
	}
	g->start[g->slots] = sum;
	/* Backwards, so that each slot's entries end up in increasing index order: the pairs a
	 * query finds come out in the same order on every run. */
	for (uint32_t i = n; i-- > 0;)
		if (!radius || radius[i] > 0) g->entry[--g->start[slot_of(g, points[i])]] = i;
}

void pbd_hash_grid_box_range(const pbd_hash_grid* g, pbd_box3 b, int64_t lo[3], int64_t hi[3]) {
	lo[0] = pbd_hash_grid_coord(g, b.lo.x), lo[1] = pbd_hash_grid_coord(g, b.lo.y),
	lo[2] = pbd_hash_grid_coord(g, b.lo.z);
	hi[0] = pbd_hash_grid_coord(g, b.hi.x), hi[1] = pbd_hash_grid_coord(g, b.hi.y),
	hi[2] = pbd_hash_grid_coord(g, b.hi.z);
	for (int a = 0; a < 3; ++a)
		if (hi[a] - lo[a] >= PBD_HASH_GRID_MAX_SPAN) {
			const int64_t mid = lo[a] + (hi[a] - lo[a]) / 2;
			lo[a] = mid - PBD_HASH_GRID_MAX_SPAN / 2 + 1;
			hi[a] = mid + PBD_HASH_GRID_MAX_SPAN / 2;
		}
}

uint32_t pbd_hash_grid_box_slots(const pbd_hash_grid* g, pbd_box3 b, uint32_t* out) {
	int64_t lo[3], hi[3];
	pbd_hash_grid_box_range(g, b, lo, hi);
	/* Two cells of one slot are one slot; past a few hundred cells the check would cost more than
	 * the second visit, which the searches' stamps make harmless. */
	const bool unique = (hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1) <= 512;
	uint32_t n = 0;
	for (int64_t z = lo[2]; z <= hi[2]; ++z)
		for (int64_t y = lo[1]; y <= hi[1]; ++y)
			for (int64_t x = lo[0]; x <= hi[0] && n < PBD_HASH_GRID_MAX_CELLS; ++x) {
				const uint32_t s = pbd_hash_grid_slot(g, x, y, z);
				bool dup = false;
				for (uint32_t k = 0; unique && k < n && !dup; ++k) dup = out[k] == s;
				if (!dup) out[n++] = s;
			}
	return n;
}

/* Boxes per block of the threaded build: enough work per block (a box covers about 8 to 27
 * cells) that claiming one costs little. */
#define PBD_HASH_GRID_BOX_BLOCK 512u

typedef struct box_stage {
	pbd_hash_grid* g;
	const pbd_box3* box;
	int64_t* first_cell;
	uint32_t n;
	bool place; /* false: count each box's cells into first[k + 1]; true: write them at first[k] */
} box_stage;

static void box_block(void* arg, uint32_t block, uint32_t worker) {
	(void)worker;
	const box_stage* s = (const box_stage*)arg;
	pbd_hash_grid* g = s->g;
	uint32_t slots[PBD_HASH_GRID_MAX_CELLS];
	const uint32_t first = block * PBD_HASH_GRID_BOX_BLOCK, end = pbd_block_end(first, s->n, PBD_HASH_GRID_BOX_BLOCK);
	for (uint32_t k = first; k < end; ++k) {
		const bool used = s->box[k].lo.x <= s->box[k].hi.x;
		if (!s->place) {
			g->first[k + 1] = used ? pbd_hash_grid_box_slots(g, s->box[k], slots) : 0;
			if (s->first_cell) {
				int64_t hi[3];
				pbd_hash_grid_box_range(g, s->box[k], &s->first_cell[3 * (size_t)k], hi);
			}
		} else if (used)
			pbd_hash_grid_box_slots(g, s->box[k], g->cells + g->first[k]);
	}
}

bool pbd_hash_grid_build_boxes(pbd_hash_grid* g, pbd_alloc_ctx* mem, pbd_exec* exec, const pbd_box3* box, uint32_t n,
                               pbd_real cell, bool pow2, int64_t* first_cell) {
	uint32_t used = 0;
	for (uint32_t k = 0; k < n; ++k) used += box[k].lo.x <= box[k].hi.x;
	g->cell = cell;
	g->inv_cell = 1 / cell;
	g->slots = 2 * (used ? used : 1);
	if (pow2) {
		if (g->slots > (1u << 31)) return false;
		uint32_t p = 1;
		while (p < g->slots) p <<= 1;
		g->slots = p;
	}
	if (!pbd_grow_to(mem, (void**)&g->start, sizeof *g->start, &g->cap_slots, g->slots + 1) || n == UINT32_MAX ||
	    !pbd_grow_to(mem, (void**)&g->first, sizeof *g->first, &g->cap_first, n + 1))
		return false;
	/* Each box's cells, counted and then written on the threads: a box's slots depend on it alone. */
	box_stage st = {g, box, first_cell, n, false};
	const uint32_t blocks = pbd_blocks(n, PBD_HASH_GRID_BOX_BLOCK);
	g->first[0] = 0;
	pbd_exec_stage(exec, box_block, &st, blocks);
	uint64_t total = 0;
	for (uint32_t k = 0; k < n; ++k) {
		total += g->first[k + 1];
		if (total > UINT32_MAX) return false;
		g->first[k + 1] = (uint32_t)total;
	}
	if (!pbd_grow_to(mem, (void**)&g->cells, sizeof *g->cells, &g->cap_cells, (uint32_t)total)) return false;
	st.place = true;
	pbd_exec_stage(exec, box_block, &st, blocks);
	/* Count per slot, prefix-sum, then place backwards (as pbd_hash_grid_build), so that each
	 * slot's entries come in increasing box order. */
	memset(g->start, 0, ((size_t)g->slots + 1) * sizeof *g->start);
	for (uint32_t j = 0; j < (uint32_t)total; ++j) g->start[g->cells[j]]++;
	uint32_t sum = 0;
	for (uint32_t s = 0; s < g->slots; ++s) {
		sum += g->start[s];
		g->start[s] = sum;
	}
	g->start[g->slots] = sum;
	if (!pbd_grow_to(mem, (void**)&g->entry, sizeof *g->entry, &g->cap_points, sum)) return false;
	for (uint32_t k = n; k-- > 0;)
		for (uint32_t j = g->first[k]; j < g->first[k + 1]; ++j) g->entry[--g->start[g->cells[j]]] = k;
	return true;
}
