/* Helpers shared by the mesh builders. */
#ifndef PBD_MESH_INTERNAL_H
#define PBD_MESH_INTERNAL_H

#include "core.h"

/* Allocates an owned mesh with zeroed arrays of the given sizes. */
pbd_status pbd_mesh_alloc(pbd_mesh* m, uint32_t nv, uint32_t ne, uint32_t nt, pbd_error* err);

static inline pbd_real pbd_triangle_area(pbd_vec3 a, pbd_vec3 b, pbd_vec3 c) {
	return PBD_R(0.5) * pbd_v3_length(pbd_v3_cross(pbd_v3_sub(b, a), pbd_v3_sub(c, a)));
}

/* Flat or collapsed: twice the area is below a precision-scaled fraction of the longest edge
 * squared, so the test does not depend on the mesh's units. */
static inline bool pbd_triangle_is_degenerate(pbd_vec3 a, pbd_vec3 b, pbd_vec3 c) {
#ifdef PBD_DOUBLE
	const pbd_real rel = 1e-12;
#else
	const pbd_real rel = 1e-6f;
#endif
	pbd_vec3 ab = pbd_v3_sub(b, a), bc = pbd_v3_sub(c, b), ca = pbd_v3_sub(a, c);
	pbd_real l2 = pbd_v3_dot(ab, ab);
	if (pbd_v3_dot(bc, bc) > l2) l2 = pbd_v3_dot(bc, bc);
	if (pbd_v3_dot(ca, ca) > l2) l2 = pbd_v3_dot(ca, ca);
	pbd_real twice_area = pbd_v3_length(pbd_v3_cross(ab, pbd_v3_sub(c, a)));
	return !(l2 > 0) || !(twice_area > rel * l2);
}

#endif
