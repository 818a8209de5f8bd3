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
 * squared, so the test does not depend on the mesh's units. Computed in double so that large
 * float coordinates cannot overflow the squares. */
static inline bool pbd_triangle_is_degenerate(pbd_vec3 a, pbd_vec3 b, pbd_vec3 c) {
#ifdef PBD_DOUBLE
	const double rel = 1e-12;
#else
	const double rel = 1e-6;
#endif
	const double ab[3] = {(double)b.x - (double)a.x, (double)b.y - (double)a.y, (double)b.z - (double)a.z};
	const double ac[3] = {(double)c.x - (double)a.x, (double)c.y - (double)a.y, (double)c.z - (double)a.z};
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
