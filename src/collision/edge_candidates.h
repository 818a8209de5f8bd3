/* The candidate pairs of edges for edge-edge contacts, kept from one substep to the next
 * (edge_candidates.c; docs/collision.md, "Edge candidates kept across substeps"). */
#ifndef PBD_EDGE_CANDIDATES_H
#define PBD_EDGE_CANDIDATES_H

#include "collision/block_out.h"
#include "collision/hash_grid.h"

typedef struct pbd_edge_candidates {
	/* the lists: edge e's partners f > e are other[first[e] .. first[e + 1]), increasing */
	uint32_t *first, *other;
	uint32_t nother, cap_first, cap_other;
	uint32_t *next_first, *next_other; /* the lists being merged, swapped in when done */
	uint32_t cap_next_first, cap_next_other;
	uint32_t *ins_first, *ins; /* the merge's arrivals per edge */
	uint32_t cap_ins_first, cap_ins;
	pbd_box3* vref; /* per particle: the box of its motion the lists hold for */
	uint32_t cap_vref;
	unsigned char* left; /* per particle: it left its box this substep */
	uint32_t cap_left;
	pbd_box3* eref; /* per edge: the union of its particles' boxes, grown by the largest radius */
	uint32_t cap_eref;
	pbd_vec3* rmid; /* per edge, in the rest shape: its middle, half its length and its box */
	pbd_real* rhalf;
	pbd_box3* rbox;
	uint32_t cap_rmid, cap_rhalf, cap_rbox;
	pbd_hash_grid grid; /* the edges by eref at the last full listing */
	int64_t* elo;       /* per edge: the first cell of its box in the grid, 3 coordinates */
	uint32_t cap_elo;
	pbd_real* sbox; /* per entry of the grid, its edge's box: lo.x of all entries, lo.y, ..., hi.z */
	uint32_t cap_sbox;
	unsigned char* moved; /* per edge: its box changed since the last full listing */
	uint32_t* moved_list; /* those edges */
	uint32_t nmoved, cap_moved, cap_moved_list;
	unsigned char* searched; /* per edge: searched again this substep */
	uint32_t* search;        /* those edges, increasing */
	uint32_t nsearch, cap_searched, cap_search;
	uint32_t* pair; /* a search's finds, (d, f); f increasing within each d */
	uint32_t npair, cap_pair;
	pbd_block_out out;
	uint32_t np, nedge;     /* the particles and edges the lists were made for */
	pbd_real radius;        /* the largest radius they were made with */
	bool listed;            /* false: made anew at the next update */
	bool cut;               /* the last search stopped at a bound */
	bool edges_changed;     /* the edge list changed since (pbd_edge_edge_prepare) */
	bool off;               /* tests only: made anew in every substep, from the substep's paths alone */
	bool ahead;             /* the last whole listing carried the boxes ahead */
	uint32_t since;         /* substeps since the last whole listing */
	uint32_t exact_left;    /* whole listings still to make of the paths alone */
	uint32_t full, partial; /* updates since creation: full listings, searches of some edges */
	uint32_t exact;         /* full listings made of the paths alone after a short hold */
} pbd_edge_candidates;

typedef struct pbd_world pbd_world;

/* Brings the lists up to date for the substep's paths (x to x + q) of the world's edges
 * (pbd_particle_collision.edge); false when out of memory (the lists are made anew next time). */
bool pbd_edge_candidates_update(pbd_world* w);
void pbd_edge_candidates_free(pbd_edge_candidates* k, pbd_alloc_ctx* mem);

#endif
