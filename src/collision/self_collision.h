/* Particle collision: particles with a thickness keep apart, within one object (self-collision)
 * and between objects, through pairs found once per substep with a spatial hash; particles keep
 * off surface triangles (vertex_triangle.c) and edges off edges (edge_edge.c)
 * (docs/collision.md, "Cloth against cloth"). */
#ifndef PBD_SELF_COLLISION_H
#define PBD_SELF_COLLISION_H

#include "collision/block_out.h"
#include "collision/edge_candidates.h"
#include "collision/hash_grid.h"

/* Bit of a particle's collision group that lets it collide with particles of its own group. */
#define PBD_GROUP_SELF 0x80000000u
/* Bit of a particle's collision group: its object's edges take no part in edge-edge contacts. */
#define PBD_GROUP_NO_EDGES 0x40000000u

/* A pair of particles that must stay `dist` apart (the sum of their radii). */
typedef struct pbd_pair_c {
	uint32_t a, b;
	pbd_real dist;
} pbd_pair_c;

/* A particle against a surface triangle (vertex_triangle.c): with b the barycentric weights of
 * the triangle's point and n its normal toward the particle's side, n . (q_p - sum b_k q_k) >=
 * offset (the thickness, relative to the particles' x). */
typedef struct pbd_vt_c {
	uint32_t p, t;
	pbd_real b[3];
	pbd_vec3 n;
	pbd_real offset;
} pbd_vt_c;

/* Two edges (edge_edge.c), (a, b) and (c, d): with s and t the parameters of their closest points
 * and n the direction from cd to ab on the side they started from,
 * n . ((1 - s) q_a + s q_b - (1 - t) q_c - t q_d) >= offset (the thickness, relative to the
 * particles' x). */
typedef struct pbd_ee_c {
	uint32_t a, b, c, d;
	pbd_real s, t;
	pbd_vec3 n;
	pbd_real offset;
} pbd_ee_c;

/* The substep's contacts between particles (pairs, vertex-face and edge-edge) by region of space,
 * so that threads project them side by side (contact_regions.c). A reference is
 * kind << PBD_CONTACT_REF_SHIFT | the record's index in its kind's list. */
#define PBD_CONTACT_REF_SHIFT 30u
#define PBD_CONTACT_REF_INDEX ((1u << PBD_CONTACT_REF_SHIFT) - 1u)
enum { PBD_CONTACT_PAIR, PBD_CONTACT_VT, PBD_CONTACT_EE };
/* Regions along each axis of the particles' box; the second grid, shifted by half a region, has
 * one more. */
#define PBD_CONTACT_SPLIT     4u
#define PBD_CONTACT_REGIONS   (PBD_CONTACT_SPLIT * PBD_CONTACT_SPLIT * PBD_CONTACT_SPLIT)
#define PBD_CONTACT_REGIONS_2 ((PBD_CONTACT_SPLIT + 1) * (PBD_CONTACT_SPLIT + 1) * (PBD_CONTACT_SPLIT + 1))

typedef struct pbd_contact_regions {
	uint32_t* cell; /* per particle, 2 each: its region in the grid and in the shifted grid */
	uint32_t cap_cell;
	uint32_t* ref; /* the references by region, in list order within each */
	uint32_t cap_ref;
	/* the first grid's region k holds [start[k], start[k + 1]), the shifted grid's region k
	 * [start[PBD_CONTACT_REGIONS + k], ...), and the last range the contacts that span regions of
	 * both grids, projected alone, in list order, after the others */
	uint32_t start[PBD_CONTACT_REGIONS + PBD_CONTACT_REGIONS_2 + 2];
	bool listed; /* false: out of memory, and the lists are projected as they are */
} pbd_contact_regions;

typedef struct pbd_particle_collision {
	pbd_hash_grid grid;
	pbd_vec3* p; /* predicted positions of the substep, hashed */
	uint32_t cap_p;
	pbd_pair_c* pairs;
	uint32_t npairs, cap_pairs;
	pbd_hash_grid tgrid; /* surface triangles by the boxes of their paths */
	pbd_box3* tbox;      /* per triangle: the box of its path, empty when it has no thickness */
	uint32_t cap_tbox;
	pbd_vt_c* vt;
	uint32_t nvt, cap_vt;
	uint32_t* edge; /* the triangles' edges with a thickness, (a, b) with a < b, in increasing order */
	uint32_t nedge, cap_edge;
	uint32_t* edge_scratch; /* the edge list's build: a bucket per particle, then the buckets' entries */
	uint32_t cap_edge_scratch;
	pbd_hash_grid egrid; /* the edges by the boxes of their paths */
	pbd_box3* ebox;
	uint32_t cap_ebox;
	pbd_edge_candidates ecand; /* the edges' candidate pairs (edge_candidates.h) */
	pbd_ee_c* ee;
	uint32_t nee, cap_ee;
	/* the searches' results per block, in block order (block_out.h) */
	pbd_block_out pair_out, vt_out, ee_out;
	pbd_block_out collider_out;  /* the colliders' contacts (contact.c), searched the same way */
	pbd_block_out face_out;      /* the face contacts of shapes with corners (triangle_contact.c) */
	pbd_contact_regions regions; /* the pairs', vt's and ee's, after each substep's searches */
	pbd_real max_radius;         /* over the particles, at the last prepare */
	uint32_t solid;              /* particles with a radius, 0 when no two of them may meet */
	pbd_collision_work work;     /* the step's counters; the totals since creation */
	bool torn;                   /* the current substep's state is torn: its contacts are not searched */
	/* per particle, this substep: the outward normal of the still collider it has a contact with,
	 * or zero (pbd_particle_collision_hold) */
	pbd_vec3* held;
	uint32_t cap_held;
	bool any_held;
	bool held_only; /* the last pass (substep.c): only the contacts that have a held particle */
} pbd_particle_collision;

typedef struct pbd_world pbd_world;

/* A search in blocks of query items (block_out.h): what a block function reads. */
typedef struct pbd_find_stage {
	const pbd_world* w;
	const pbd_hash_grid* g; /* the candidates' hash */
	pbd_block_out* o;
	uint32_t block; /* query items per block: any size gives the same results in the same order */
} pbd_find_stage;

/* Runs fn over `items` query items in blocks on the world's threads and leaves the records, in
 * block order, in *out (count and capacity in *n, *cap), at most pbd_collision_limit(items) of
 * them; stamps: candidates per thread's stamp array. Adds the pass to the step's counters. False
 * when out of memory. */
bool pbd_find_in_blocks(pbd_world* w, pbd_find_stage* st, void (*fn)(void*, uint32_t, uint32_t), size_t rec,
                        uint32_t items, uint32_t stamps, void** out, uint32_t* n, uint32_t* cap);

/* The most contacts one search over `items` query items keeps (PBD_COLLISION_CONTACTS_PER_ITEM). */
static inline uint32_t pbd_collision_limit(uint32_t items) {
	const uint64_t n = (uint64_t)items * PBD_COLLISION_CONTACTS_PER_ITEM;
	return n < PBD_COLLISION_MAX_CONTACTS ? PBD_COLLISION_MAX_CONTACTS
	       : n > UINT32_MAX - 1           ? UINT32_MAX - 1
	                                      : (uint32_t)n;
}
/* Of the entries [first, end) of a hash slot, those a query item that examined *examined
 * candidates so far may still examine: [first, return), all of them or as many as
 * PBD_COLLISION_MAX_CANDIDATES leaves (then *capped). Counts them in *examined; one checked per
 * slot, not per candidate, so the cap costs the search nothing. */
static inline uint32_t pbd_collision_slot_end(uint32_t first, uint32_t end, uint32_t* examined, bool* capped) {
	const uint32_t room = PBD_COLLISION_MAX_CANDIDATES - *examined;
	if (end - first > room) {
		end = first + room;
		*capped = true;
	}
	*examined += end - first;
	return end;
}
/* Adds a search's candidates, contacts and cut items to the step's counters (the first cut is
 * logged): `candidates` examined, the most one item examined and kept, `found` kept in all,
 * `capped` items and searches stopped at a bound. */
void pbd_collision_count(pbd_world* w, uint64_t candidates, uint32_t most, uint32_t most_kept, uint32_t found,
                         uint32_t capped);
/* Before a substep's searches: whether the predicted state is torn (pbd_collision_work.skipped):
 * a position not finite, or a distance constraint stretched past 1 + divergence_strain times its
 * rest length. Counted and, the first time, logged. */
bool pbd_collision_torn(pbd_world* w);

/* Particles held by a collider (docs/collision.md, "Layers pressed against a collider"): a contact
 * between particles does not push a particle into a still collider it touches; its partners take
 * that part of the correction. Two layers of cloth pressed against a table's underside would
 * otherwise be pushed into the table by their contact, and put back by the collider, which has
 * the last word, until the layers lay in one plane and passed through each other. A push counts
 * as into the collider where its direction meets the collider's outward normal at a cosine below
 * -PBD_HELD_COS; a push along the surface moves the particle as before, and a contact whose free
 * particles carry less than PBD_HELD_SHARE of it shares its push as if none were held. (Letting a
 * held particle slide along the surface with the push's tangential part, instead of holding it,
 * let more layers through at the table's corners.) */
#define PBD_HELD_COS PBD_R(0.5)
/* The least part of a contact's generalised inverse mass that its free particles must carry for
 * the held ones to be held. */
#define PBD_HELD_SHARE PBD_R(0.25)

/* After the substep's collider contacts: each particle's held normal (allocated at prepare). */
void pbd_particle_collision_hold(pbd_world* w);

/* The inverse mass particle i moves with when a contact pushes it along dir (not normalised:
 * only its direction counts). */
static inline pbd_real pbd_held_weight(const pbd_vec3* held, const pbd_real* iw, uint32_t i, pbd_vec3 dir) {
	if (held && pbd_v3_dot(held[i], dir) < -PBD_HELD_COS * pbd_v3_length(dir)) return 0;
	return iw[i];
}

/* The weighted contact n . sum_k g_k q_k >= offset (shape_math.h's), with each particle's inverse
 * mass as pbd_held_weight gives it. */
static inline void pbd_project_held_contact(pbd_vec3* restrict q, const pbd_real* restrict iw, const pbd_vec3* held,
                                            const uint32_t* idx, const pbd_real* g, int count, pbd_vec3 n,
                                            pbd_real offset, bool held_only) {
	pbd_real C = -offset, wsum = 0, wfree = 0, wk[4];
	if (held_only) {
		bool any = false;
		for (int k = 0; k < count && !any; ++k) any = pbd_v3_dot(held[idx[k]], held[idx[k]]) > 0;
		if (!any) return;
	}
	for (int k = 0; k < count; ++k) {
		C += g[k] * pbd_v3_dot(n, q[idx[k]]);
		wk[k] = pbd_held_weight(held, iw, idx[k], pbd_v3_scale(n, g[k]));
		wsum += wk[k] * g[k] * g[k];
		wfree += iw[idx[k]] * g[k] * g[k];
	}
	if (!(C < 0)) return;
	/* Every particle held, or the free ones with too small a part of the contact (a vertex of the
	 * face far from its point, whose share would move it PBD_HELD_SHARE^-1 times as far and more):
	 * they share the push as if none were. */
	if (!(wsum >= PBD_HELD_SHARE * wfree)) {
		for (int k = 0; k < count; ++k) wk[k] = iw[idx[k]];
		wsum = wfree;
	}
	if (!(wsum > 0)) return;
	const pbd_real s = -C / wsum;
	for (int k = 0; k < count; ++k) q[idx[k]] = pbd_v3_add(q[idx[k]], pbd_v3_scale(n, s * wk[k] * g[k]));
}

/* At the start of a step: counts the particles with a radius and makes room for the hash
 * (allocates only when the particle count grew). */
pbd_status pbd_particle_collision_prepare(pbd_world* w);
/* After the prediction of a substep: the pairs within reach. */
pbd_status pbd_particle_collision_find(pbd_world* w);
/* Projects the pairs that `ref` names (count references of kind PBD_CONTACT_PAIR), or, when ref
 * is NULL, the first `count` pairs of the list. */
void pbd_particle_collision_project(pbd_world* w, const uint32_t* ref, uint32_t count);
void pbd_particle_collision_free(pbd_world* w);
/* After the pairs: particles against the triangles near their paths. */
pbd_status pbd_vertex_triangle_find(pbd_world* w);
/* Projects the vertex-face contacts that `ref` names (NULL: the first `count`). */
void pbd_vertex_triangle_project(pbd_world* w, const uint32_t* ref, uint32_t count);
/* At the start of a step (from prepare): the list of edges (allocates when it grew). */
pbd_status pbd_edge_edge_prepare(pbd_world* w);
/* After the prediction of a substep: the edge pairs within reach, or crossed in the substep. */
pbd_status pbd_edge_edge_find(pbd_world* w);
/* Projects the edge-edge contacts that `ref` names (NULL: the first `count`). */
void pbd_edge_edge_project(pbd_world* w, const uint32_t* ref, uint32_t count);
/* The particles of contact reference `ref` into p; returns how many (2 or 4). */
int pbd_contact_particles(const pbd_world* w, uint32_t ref, uint32_t p[4]);
/* After a substep's searches: the pairs, vertex-face and edge-edge contacts by region. Out of
 * memory, the lists are projected as they are, in list order, on the calling thread. */
pbd_status pbd_contact_regions_build(pbd_world* w);
/* One pass over those contacts (every iteration): the first grid's regions side by side, then the
 * shifted grid's, then the rest; the same result on any number of threads. */
void pbd_contact_regions_project(pbd_world* w);
void pbd_contact_regions_free(pbd_world* w);
/* The contact of edges (a, b) and (c, d) of combined thickness `thick`, from the substep's start
 * x and prediction x + q, when there is one; the pair filters (shared vertices, groups, rest-shape
 * neighbours) are the caller's (edge_edge.c; exposed for the tests). */
bool pbd_edge_edge_contact(const pbd_world* w, uint32_t a, uint32_t b, uint32_t c, uint32_t d, pbd_real thick,
                           pbd_ee_c* out);

#endif
