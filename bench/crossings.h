/* Quality checks of the collision rows, on positions in double: the mesh edges that pass through
 * a triangle of the mesh (a cloth through itself or through another cloth), and the particles
 * inside a collider. */
#ifndef PBD_BENCH_CROSSINGS_H
#define PBD_BENCH_CROSSINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// The triangles to check and the scratch of the count, sized once by col_crossings_init so
/// that col_count_crossings allocates nothing. Zero it (or init it) before use.
typedef struct col_crossings {
	uint32_t nv, nt, edge_count;
	uint32_t* tris;  /* 3 per triangle, vertex indices (a copy of the caller's) */
	uint32_t* edges; /* 2 per undirected edge of the triangles, each once, lower index first */
	double* boxes;   /* 6 per triangle: min xyz, max xyz; NaN for a triangle with a non-finite corner */
	/* the uniform grid over the triangles' boxes, its cells mapped to buckets: bucket b holds
	 * items[start[b] .. start[b + 1]) (a triangle and its box) */
	uint32_t* start;
	struct col_item* items;
	size_t bucket_count; /* a power of two */
	size_t item_capacity;
} col_crossings;

/// Takes `nt` triangles (3 indices each, below nv) over nv vertices: derives the undirected edges
/// and sizes the scratch. Returns false (and leaves c empty) on a bad index or out of memory.
bool col_crossings_init(col_crossings* c, const uint32_t* tri, uint32_t nt, uint32_t nv);
void col_crossings_free(col_crossings* c);

/// The edges that pass through a triangle they share no vertex with, each edge counted once,
/// for the vertex positions xyz (3 per vertex, nv vertices): exact segment-triangle tests in
/// double (the segment's parameter and the barycentric coordinates in their closed ranges; an
/// edge in the triangle's plane does not count), over a hashed grid of cells about the mean
/// triangle size. Edges and triangles with a non-finite corner are skipped. Allocates nothing.
/// UINT32_MAX when the triangles' cells could not be made to fit the scratch (never seen).
uint32_t col_count_crossings(col_crossings* c, const double* xyz);

/// The same count by testing every edge against every triangle: the check of the grid.
uint32_t col_count_crossings_brute(const col_crossings* c, const double* xyz);

/// A collider's shape, as the checks see it: the shape itself, not its margin.
typedef enum col_shape_kind { COL_SHAPE_PLANE, COL_SHAPE_SPHERE, COL_SHAPE_BOX } col_shape_kind;

typedef struct col_shape {
	col_shape_kind kind;
	double normal[3]; /* plane: unit outward normal; the solid is dot(normal, x) < offset */
	double offset;    /* plane */
	double center[3]; /* sphere, box (axis-aligned) */
	double radius;    /* sphere */
	double half[3];   /* box: half extents */
} col_shape;

/// How deep a particle must be inside a shape (m) to count: below it, float rounding.
#define COL_INSIDE_TOLERANCE 1e-6

/// Signed distance from p to the shape's surface, m (negative inside).
double col_shape_distance(const col_shape* s, const double p[3]);

/// The particles (3 doubles each, np of them) deeper than COL_INSIDE_TOLERANCE inside any of the
/// shapes, each particle counted once. A non-finite particle does not count.
uint32_t col_count_inside(const double* xyz, uint32_t np, const col_shape* shapes, uint32_t shape_count);

#endif
