/* A spatial hash of points (Teschner et al. 2003; the dense layout of Müller's "Ten Minute
 * Physics" 11): cells of a uniform grid hashed into a table of twice as many slots as points,
 * filled by a counting sort, so that a build is linear in the points and a query visits the 27
 * cells around a point. Used by particle collision (self_collision.c). */
#ifndef PBD_HASH_GRID_H
#define PBD_HASH_GRID_H

#include "core.h"

typedef struct pbd_hash_grid {
	pbd_real cell;       /* edge of a cell, m */
	pbd_real inv_cell;   /* 1 / cell */
	uint32_t slots;      /* table size: 2 x the points of the last build, at least 1 */
	uint32_t cap_slots;  /* allocated slots + 1 */
	uint32_t cap_points; /* allocated entries */
	uint32_t* start;     /* slots + 1: the entries of slot s are entry[start[s] .. start[s + 1]) */
	uint32_t* entry;     /* point indices, grouped by slot */
} pbd_hash_grid;

/* Makes room for `points` points (allocates; call outside the substep loop). */
bool pbd_hash_grid_reserve(pbd_hash_grid* g, pbd_alloc_ctx* mem, uint32_t points);
void pbd_hash_grid_free(pbd_hash_grid* g, pbd_alloc_ctx* mem);
/* Hashes points[i] for the i with radius[i] > 0 (all when radius is NULL) into cells of edge
 * `cell` (> 0). Needs a reserve for at least n points. */
void pbd_hash_grid_build(pbd_hash_grid* g, const pbd_vec3* points, const pbd_real* radius, uint32_t n, pbd_real cell);
/* The slot of the cell with integer coordinates (ix, iy, iz). */
static inline uint32_t pbd_hash_grid_slot(const pbd_hash_grid* g, int64_t ix, int64_t iy, int64_t iz) {
	const uint64_t h = ((uint64_t)ix * 92837111u) ^ ((uint64_t)iy * 689287499u) ^ ((uint64_t)iz * 283923481u);
	return (uint32_t)(h % g->slots);
}
/* The integer cell coordinate of a coordinate, clamped so that a far point cannot overflow. */
static inline int64_t pbd_hash_grid_coord(const pbd_hash_grid* g, pbd_real x) {
	const double c = floor((double)x * (double)g->inv_cell);
	return c < -1e15 ? (int64_t)-1e15 : c > 1e15 ? (int64_t)1e15 : (int64_t)c;
}

#endif
