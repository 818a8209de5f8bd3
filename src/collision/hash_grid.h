/* A spatial hash of points (Teschner et al. 2003; the dense layout of Müller's "Ten Minute
 * Physics" 11): cells of a uniform grid hashed into a table of twice as many slots as points,
 * filled by a counting sort, so that a build is linear in the points and a query visits the 27
 * cells around a point. Used by particle collision (self_collision.c). Boxes (triangles and edges
 * along their paths in a substep) go into every cell they cover instead (vertex_triangle.c,
 * edge_edge.c). */
#ifndef PBD_HASH_GRID_H
#define PBD_HASH_GRID_H

#include "core/core.h"
#include "core/task.h"

/* The box of the paths x[i] -> x[i] + q[i] of the n particles idx[0..n), grown by g. */
static inline pbd_box3 pbd_box3_of_paths(const pbd_vec3* x, const pbd_vec3* q, const uint32_t* idx, int n, pbd_real g) {
	pbd_box3 b = {x[idx[0]], x[idx[0]]};
	for (int k = 0; k < n; ++k) {
		const pbd_vec3 a = x[idx[k]], p = pbd_v3_add(a, q[idx[k]]);
		b.lo = pbd_v3(PBD_FMIN(b.lo.x, PBD_FMIN(a.x, p.x)), PBD_FMIN(b.lo.y, PBD_FMIN(a.y, p.y)),
		              PBD_FMIN(b.lo.z, PBD_FMIN(a.z, p.z)));
		b.hi = pbd_v3(PBD_FMAX(b.hi.x, PBD_FMAX(a.x, p.x)), PBD_FMAX(b.hi.y, PBD_FMAX(a.y, p.y)),
		              PBD_FMAX(b.hi.z, PBD_FMAX(a.z, p.z)));
	}
	b.lo = pbd_v3(b.lo.x - g, b.lo.y - g, b.lo.z - g);
	b.hi = pbd_v3(b.hi.x + g, b.hi.y + g, b.hi.z + g);
	return b;
}

typedef struct pbd_hash_grid {
	pbd_real cell;       /* edge of a cell, m */
	pbd_real inv_cell;   /* 1 / cell */
	uint32_t slots;      /* table size: 2 x the points of the last build, at least 1 */
	uint32_t cap_slots;  /* allocated slots + 1 */
	uint32_t cap_points; /* allocated entries */
	uint32_t* start;     /* slots + 1: the entries of slot s are entry[start[s] .. start[s + 1]) */
	uint32_t* entry;     /* point indices, grouped by slot */
	/* A build of boxes on threads: each box's slots, box k's at cells[first[k] .. first[k + 1]) */
	uint32_t *first, *cells;
	uint32_t cap_first, cap_cells;
} pbd_hash_grid;

/* Makes room for `points` points (allocates; call outside the substep loop). */
bool pbd_hash_grid_reserve(pbd_hash_grid* g, pbd_alloc_ctx* mem, uint32_t points);
void pbd_hash_grid_free(pbd_hash_grid* g, pbd_alloc_ctx* mem);
/* Hashes points[i] for the i with radius[i] > 0 (all when radius is NULL) into cells of edge
 * `cell` (> 0). Needs a reserve for at least n points. */
void pbd_hash_grid_build(pbd_hash_grid* g, const pbd_vec3* points, const pbd_real* radius, uint32_t n, pbd_real cell);
/* Hashes box k into every cell it covers (see pbd_hash_grid_box_slots), skipping the boxes with
 * lo.x > hi.x, into cells of edge `cell` (> 0), with a table of 2 x the boxes hashed. Grows the
 * table when needed (false: out of memory). Each slot's entries come in increasing k. The boxes'
 * cells are found in blocks on the threads of `exec`, the counting and placing stay on the calling
 * thread, so the table is the same on any number of threads. */
bool pbd_hash_grid_build_boxes(pbd_hash_grid* g, pbd_alloc_ctx* mem, pbd_exec* exec, const pbd_box3* box, uint32_t n,
                               pbd_real cell, bool pow2, int64_t* first_cell);
/* The slots of the cells box b covers, at most PBD_HASH_GRID_MAX_CELLS of them, into out;
 * returns how many (each once, for a box of up to 512 cells). A box wider than
 * PBD_HASH_GRID_MAX_SPAN cells along an axis keeps the ones around its middle: only a
 * degenerate, enormous primitive reaches that, and it keeps a query bounded. A long primitive
 * must fit: a cell is about a primitive's mean size, and the fold of a folded cloth, or the long
 * edges of a coarse mesh beside a fine one, span ten cells and more; kept to their middle four
 * they missed the edges near their ends, which passed through them. */
#define PBD_HASH_GRID_MAX_SPAN  16
#define PBD_HASH_GRID_MAX_CELLS (PBD_HASH_GRID_MAX_SPAN * PBD_HASH_GRID_MAX_SPAN * PBD_HASH_GRID_MAX_SPAN)
uint32_t pbd_hash_grid_box_slots(const pbd_hash_grid* g, pbd_box3 b, uint32_t* out);
/* The integer cell coordinates of the first and last cells box b covers, as box_slots takes them. */
void pbd_hash_grid_box_range(const pbd_hash_grid* g, pbd_box3 b, int64_t lo[3], int64_t hi[3]);
/* The slot of the cell with integer coordinates (ix, iy, iz). */
static inline uint64_t pbd_hash_grid_hash(int64_t ix, int64_t iy, int64_t iz) {
	return ((uint64_t)ix * 92837111u) ^ ((uint64_t)iy * 689287499u) ^ ((uint64_t)iz * 283923481u);
}
static inline uint32_t pbd_hash_grid_slot(const pbd_hash_grid* g, int64_t ix, int64_t iy, int64_t iz) {
	return (uint32_t)(pbd_hash_grid_hash(ix, iy, iz) % g->slots);
}
/* The integer cell coordinate of a coordinate, clamped so that a far point cannot overflow (and a
 * NaN, which has no cell, gets cell 0). */
static inline int64_t pbd_hash_grid_coord(const pbd_hash_grid* g, pbd_real x) {
	const double c = floor((double)x * (double)g->inv_cell);
	return c < -1e15 ? (int64_t)-1e15 : c > 1e15 ? (int64_t)1e15 : c == c ? (int64_t)c : 0;
}

#endif
