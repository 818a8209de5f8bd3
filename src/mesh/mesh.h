/* Helpers shared by the mesh builders. */
#ifndef PBD_MESH_INTERNAL_H
#define PBD_MESH_INTERNAL_H

#include "core/core.h"

/* Allocates an owned mesh with zeroed arrays of the given sizes. */
pbd_status pbd_mesh_alloc(pbd_mesh* m, uint32_t nv, uint32_t ne, uint32_t nt, pbd_error* err);

/* True when pbd_v3_length(b - a), which is how a body measures an edge's rest length, is finite.
 * Decided in double without overflowing, so a caller running with floating-point traps can ask
 * about any finite coordinates. False for non-finite input. */
bool pbd_length_fits(pbd_vec3 a, pbd_vec3 b);

/* Refuses a finished mesh whose positions are not finite or whose edges are too long for
 * pbd_length_fits: pbd_soft_create would measure an infinite rest length from it. `fn` names the
 * builder in the message. */
pbd_status pbd_mesh_check_lengths(const pbd_mesh* m, const char* fn, pbd_error* err);

/* What pbd_mesh_build refused, in the caller's triangle numbering, so that a loader can name the
 * place in its own input (the OBJ reader names the line of the face). UINT32_MAX when the failure
 * is not about particular triangles (out of memory, bad arguments). */
typedef struct pbd_mesh_fault {
	uint32_t triangle; /* the triangle refused, or the later of the two a bend edge spans */
	uint32_t other;    /* the earlier triangle of a bend edge, else UINT32_MAX */
	uint32_t a, b;     /* the vertices of the offending edge, else UINT32_MAX */
} pbd_mesh_fault;

/* The three half-edges of every triangle, sorted by undirected edge (vertex pair, smaller index
 * in the high half of key) and then by triangle: the half-edges of one edge are neighbours, in
 * the order of their triangles. The triangles must be valid (indices in range, no repeated
 * vertex). Returns NULL when out of memory; free() the result. */
typedef struct pbd_half_edge {
	uint64_t key;
	uint32_t opposite; /* the triangle's third vertex */
	uint32_t tri;
} pbd_half_edge;

pbd_half_edge* pbd_mesh_half_edges(uint32_t nt, const uint32_t* idx);

/* pbd_mesh_from_triangles, telling where it failed; fault may be NULL. */
pbd_status pbd_mesh_build(uint32_t nv, const pbd_vec3* pos, uint32_t nt, const uint32_t* idx, bool bend, pbd_mesh* out,
                          pbd_error* err, pbd_mesh_fault* fault);

/* Bounds of the OBJ reader (defaults: the PBD_OBJ_MAX_* of pbd.h). Tests shrink them, and make
 * allocation fail, to reach the limits without gigabytes of input. */
typedef struct pbd_obj_limits {
	size_t max_line;    /* bytes of one line, its end of line not counted */
	uint64_t max_bytes; /* bytes of the whole input; below 2^32, so line numbers fit 32 bits */
	uint32_t max_vertices, max_triangles;
	uint32_t max_groups, max_members;            /* distinct o/g names; (group, triangle) pairs */
	void* (*realloc_fn)(void* ptr, size_t size); /* NULL = realloc */
} pbd_obj_limits;

pbd_obj_limits pbd_obj_limits_default(void);
pbd_status pbd_obj_load_file(const char* path, bool bend, const pbd_obj_limits* lim, pbd_mesh* out, pbd_error* err);
pbd_status pbd_obj_load_memory(const char* data, size_t size, const char* name, bool bend, const pbd_obj_limits* lim,
                               pbd_mesh* out, pbd_error* err);
/* The same, also reading the o and g records when `groups` is not NULL. */
pbd_status pbd_obj_load_file_groups(const char* path, bool bend, const pbd_obj_limits* lim, pbd_mesh* out,
                                    pbd_obj_groups* groups, pbd_error* err);
pbd_status pbd_obj_load_memory_groups(const char* data, size_t size, const char* name, bool bend,
                                      const pbd_obj_limits* lim, pbd_mesh* out, pbd_obj_groups* groups, pbd_error* err);

static inline pbd_real pbd_triangle_area(pbd_vec3 a, pbd_vec3 b, pbd_vec3 c) {
	return PBD_R(0.5) * pbd_v3_length(pbd_v3_cross(pbd_v3_sub(b, a), pbd_v3_sub(c, a)));
}

/* Flat or collapsed: twice the area is below a precision-scaled fraction of the longest edge
 * squared, so the test does not depend on the mesh's units. Computed in double on the halved
 * edges scaled by a power of two (both exact), so that no coordinates, however large, overflow
 * the squares, also in double builds. */
static inline bool pbd_triangle_is_degenerate(pbd_vec3 a, pbd_vec3 b, pbd_vec3 c) {
#ifdef PBD_DOUBLE
	const double rel = 1e-12;
#else
	const double rel = 1e-6;
#endif
	double ab[3] = {0.5 * (double)b.x - 0.5 * (double)a.x, 0.5 * (double)b.y - 0.5 * (double)a.y,
	                0.5 * (double)b.z - 0.5 * (double)a.z};
	double ac[3] = {0.5 * (double)c.x - 0.5 * (double)a.x, 0.5 * (double)c.y - 0.5 * (double)a.y,
	                0.5 * (double)c.z - 0.5 * (double)a.z};
	double m = 0;
	for (int k = 0; k < 3; ++k) {
		if (!(fabs(ab[k]) <= DBL_MAX) || !(fabs(ac[k]) <= DBL_MAX)) return true; /* NaN or inf */
		m = fmax(m, fmax(fabs(ab[k]), fabs(ac[k])));
	}
	if (!(m > 0)) return true;
	const int e = -ilogb(m);
	for (int k = 0; k < 3; ++k) {
		ab[k] = ldexp(ab[k], e);
		ac[k] = ldexp(ac[k], e);
	}
	const double bc[3] = {ac[0] - ab[0], ac[1] - ab[1], ac[2] - ab[2]};
	double l2 = ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2];
	const double l2c = ac[0] * ac[0] + ac[1] * ac[1] + ac[2] * ac[2];
	const double l2b = bc[0] * bc[0] + bc[1] * bc[1] + bc[2] * bc[2];
	if (l2c > l2) l2 = l2c;
	if (l2b > l2) l2 = l2b;
	const double cx = ab[1] * ac[2] - ab[2] * ac[1], cy = ab[2] * ac[0] - ab[0] * ac[2],
	             cz = ab[0] * ac[1] - ab[1] * ac[0];
	const double twice_area = sqrt(cx * cx + cy * cy + cz * cz);
	return !(l2 > 0) || !(twice_area > rel * l2);
}

#endif
