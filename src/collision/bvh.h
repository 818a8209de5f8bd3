/* Bounding volume hierarchy over primitives known by their boxes (the triangles of a mesh
 * collider). Built once, breadth first, by a binned surface area heuristic (Wald 2007), into
 * flat arrays of nodes and primitive indices with no pointers, so that it lives inside a
 * shape's owned bytes, copies with them and builds the same bytes from the same input. The
 * queries walk it depth first with a small fixed stack, nearer child first:
 * - pbd_bvh_nearest: the primitive nearest a point (branch and bound on box distances),
 * - pbd_bvh_first_hit: the primitive a moving point reaches first (boxes grown by a radius).
 * Ties go to the lowest primitive index, so the answers do not depend on the tree's shape. Both
 * may find nothing, and then answer PBD_BVH_NONE, which every caller must test before it
 * indexes anything with the answer. */
#ifndef PBD_BVH_H
#define PBD_BVH_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

typedef struct pbd_bvh_node {
	pbd_vec3 lo, hi; /* bounds of the primitives below */
	uint32_t first;  /* leaf: first entry of the order array; inner: left child (the right one is first + 1) */
	uint32_t count;  /* leaf: number of primitives (>= 1); inner: 0 */
} pbd_bvh_node;

/* The answer of a query that found no primitive. */
#define PBD_BVH_NONE UINT32_MAX

/* Most primitives in a leaf. */
#define PBD_BVH_LEAF_SIZE 4
/* Levels split by the heuristic; below them every split halves the count (an object median),
 * so that no input (however unevenly spread) makes the tree deeper than PBD_BVH_MAX_DEPTH. */
#define PBD_BVH_SAH_DEPTH 32
/* Bound on a leaf's depth (the root has depth 0): 32 levels, then at most 31 halvings of 2^32. */
#define PBD_BVH_MAX_DEPTH 64

/* Nodes a tree over n primitives may need (every leaf holds at least one). */
static inline size_t pbd_bvh_node_capacity(uint32_t n) { return n ? 2 * (size_t)n - 1 : 0; }

/* The box of primitive `prim`; its coordinates must lie within +-PBD_REAL_MAX / 4. */
typedef void (*pbd_bvh_box_fn)(const void* ctx, uint32_t prim, pbd_vec3* lo, pbd_vec3* hi);

/* Builds the tree over primitives 0..n-1 (n >= 1) into nodes (pbd_bvh_node_capacity(n), root at
 * 0) and order (n entries, a permutation: leaf primitives are order[first .. first + count)).
 * Writes every field of the nodes it uses and nothing past them; returns their number.
 * Deterministic: the same boxes give the same bytes. */
uint32_t pbd_bvh_build(pbd_bvh_node* nodes, uint32_t* order, uint32_t n, pbd_bvh_box_fn box, const void* ctx);

/* Squared distance of primitive `prim` from the query point (the query's own units). */
typedef pbd_real (*pbd_bvh_dist2_fn)(void* ctx, uint32_t prim);

/* The primitive with the least dist2 (lowest index among equals) and, in *best_d2, its dist2.
 * The node boxes are multiplied by `scale` (a power of two; 1 for none) before they are
 * compared with p, so that a query may run in scaled units; dist2 must use the same units.
 * Squared distances of p from the scaled boxes must not overflow. Only a finite dist2 counts:
 * where none is (p not finite, or squares that overflowed), the answer is PBD_BVH_NONE and
 * *best_d2 is PBD_REAL_MAX. */
uint32_t pbd_bvh_nearest(const pbd_bvh_node* nodes, const uint32_t* order, pbd_vec3 p, pbd_real scale,
                         pbd_bvh_dist2_fn dist2, void* ctx, pbd_real* best_d2);

/* The first s in [0, 1] at which p0 + s (p1 - p0) reaches primitive `prim`, or any value > 1
 * when it does not reach it before `best` (it may then stop early). */
typedef pbd_real (*pbd_bvh_hit_fn)(void* ctx, uint32_t prim, pbd_real best);

/* The primitive the segment p0..p1 reaches first (lowest index among equal s) and in *best_s its
 * s; PBD_BVH_NONE (and *best_s > 1) when none. Only primitives whose boxes grown by `grow` the
 * segment crosses are asked. */
uint32_t pbd_bvh_first_hit(const pbd_bvh_node* nodes, const uint32_t* order, pbd_vec3 p0, pbd_vec3 p1, pbd_real grow,
                           pbd_bvh_hit_fn hit, void* ctx, pbd_real* best_s);

/* Calls visit(ctx, prim) for every primitive whose box overlaps [lo, hi], left subtree first:
 * a fixed order for a given tree. */
typedef void (*pbd_bvh_visit_fn)(void* ctx, uint32_t prim);
void pbd_bvh_overlap(const pbd_bvh_node* nodes, const uint32_t* order, pbd_vec3 lo, pbd_vec3 hi, pbd_bvh_visit_fn visit,
                     void* ctx);

/* The gap from x to [lo, hi], 0 inside, in max instructions where PBD_FMAX's NaN rule would take
 * branches that the sides of the boxes make unpredictable: for a finite x the same number (a zero
 * may differ in sign, which the square drops). The zero is computed (x - x, NaN for an infinite x,
 * where the other operand wins), as gcc makes a branch of a comparison with a constant zero. */
static inline pbd_real pbd_bvh_gap(pbd_real x, pbd_real lo, pbd_real hi) {
	const pbd_real a = lo - x, b = x - hi, m = b > a ? b : a, zero = x - x;
	return zero > m ? zero : m;
}

/* Squared distance from p to the box [lo, hi] * scale; 0 inside. */
static inline pbd_real pbd_bvh_box_dist2(const pbd_bvh_node* node, pbd_vec3 p, pbd_real scale) {
	const pbd_real dx = pbd_bvh_gap(p.x, node->lo.x * scale, node->hi.x * scale);
	const pbd_real dy = pbd_bvh_gap(p.y, node->lo.y * scale, node->hi.y * scale);
	const pbd_real dz = pbd_bvh_gap(p.z, node->lo.z * scale, node->hi.z * scale);
	return dx * dx + dy * dy + dz * dz;
}

#endif
