/* The convex hull of a point set (quickhull in double precision), built into the memory the
 * world owns for a convex collider, and the layout collision/shape_convex.c reads.
 *
 * The collider's data block holds, from its start: the caller's points as given (the def's
 * `points` point here), a pbd_hull header, the face planes, the hull's vertices, its triangles,
 * and a work area the construction used, left zeroed. The work area is sized from the point
 * count alone (no other allocation happens, so the construction cannot fail once the block is
 * there), which makes the block about 350 bytes per input point whatever the hull.
 *
 * Geometry is computed in normalised coordinates q = (x - center) * inv_scale, with the scale a
 * power of two (exact) that puts every point in [-1, 1]^3: the tolerances are then absolute,
 * and neither a huge nor a tiny hull overflows or underflows. */
#ifndef PBD_CONVEX_HULL_H
#define PBD_CONVEX_HULL_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

/* Most points a convex collider may have. */
#define PBD_CONVEX_MAX_POINTS 100000u

/* Width below which a point set counts as flat, in units of its half extent; and the distance,
 * in the same units, within which quickhull treats a point as on the hull (discarded). The
 * hull is the true one to within a few PBD_HULL_EPS. Float data carries its rounding of about
 * 6e-8, so the float library ignores points that close rather than grow faces from them. */
#ifdef PBD_DOUBLE
#define PBD_HULL_EPS  1e-11
#define PBD_HULL_FLAT 1e-8
#else
#define PBD_HULL_EPS  1e-7
#define PBD_HULL_FLAT 1e-5
#endif

/* A face's plane in normalised coordinates: inside is dot(n, q) <= offset; n is unit. */
typedef struct pbd_hull_plane {
	double n[3];
	double offset;
} pbd_hull_plane;

typedef struct pbd_hull {
	double center[3]; /* local point the normalised coordinates are relative to */
	double scale;     /* power of two: q = (x - center) / scale lies in [-1, 1]^3 */
	double inv_scale; /* 1 / scale, exact */
	pbd_vec3 lo, hi;  /* bounds of the points (local) */
	uint32_t point_count, vertex_count, face_count, pad_;
	/* byte offsets from the start of the block: planes (face_count), vertices (vertex_count
	 * pbd_vec3, local, in the order of the input), triangles (3 * face_count, outward winding) */
	uint64_t plane_offset, vertex_offset, triangle_offset;
} pbd_hull;

/* The bounds, centre and scale of a point set (point_count >= 1, all finite). half is the
 * largest half extent, 0 when all points coincide. */
typedef struct pbd_hull_frame {
	double lo[3], hi[3], center[3], half, scale, inv_scale;
} pbd_hull_frame;

void pbd_hull_frame_of(const pbd_vec3* points, uint32_t n, pbd_hull_frame* frame);

/* The initial simplex quickhull starts from: idx[0], idx[1] far apart, idx[2] farthest from their
 * line (at *line_dist), idx[3] farthest from the plane of the three (at *plane_dist), both in
 * units of frame->scale. The set is flat when either distance is <= PBD_HULL_FLAT. Needs
 * frame->half > 0. */
void pbd_hull_simplex(const pbd_vec3* points, uint32_t n, const pbd_hull_frame* frame, uint32_t idx[4],
                      double* line_dist, double* plane_dist);

/* Bytes of the data block for n points (4 <= n <= PBD_CONVEX_MAX_POINTS). */
size_t pbd_hull_data_size(uint32_t n);

/* Copies the n points (which may already lie at the start of `data`) to the start of `data` and
 * builds the hull after them. The points must have passed the convex shape's validation (finite,
 * not flat). Deterministic: the same points give the same bytes. */
void pbd_hull_build(const pbd_vec3* points, uint32_t n, void* data);

/* Byte offset of the header from the start of the block. */
static inline size_t pbd_hull_header_offset(uint32_t n) { return ((size_t)n * sizeof(pbd_vec3) + 15) & ~(size_t)15; }

/* The header of a built block, from the copied points at its start. */
static inline const pbd_hull* pbd_hull_get(const pbd_vec3* points, uint32_t n) {
	return (const pbd_hull*)(const void*)((const char*)points + pbd_hull_header_offset(n));
}
static inline const pbd_hull_plane* pbd_hull_planes(const pbd_hull* h) {
	return (const pbd_hull_plane*)(const void*)((const char*)h - pbd_hull_header_offset(h->point_count) +
	                                            h->plane_offset);
}
static inline const pbd_vec3* pbd_hull_vertices(const pbd_hull* h) {
	return (const pbd_vec3*)(const void*)((const char*)h - pbd_hull_header_offset(h->point_count) + h->vertex_offset);
}
static inline const uint32_t* pbd_hull_triangles(const pbd_hull* h) {
	return (const uint32_t*)(const void*)((const char*)h - pbd_hull_header_offset(h->point_count) + h->triangle_offset);
}

#endif
