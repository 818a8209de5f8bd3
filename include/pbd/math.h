/* pbd: small inline vector helpers, usable without a world. */
#ifndef PBD_MATH_H
#define PBD_MATH_H

#include <math.h>

#include "pbd/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef PBD_DOUBLE
#define PBD_SQRT sqrt
#else
#define PBD_SQRT sqrtf
#endif

static inline pbd_vec3 pbd_v3(pbd_real x, pbd_real y, pbd_real z) {
	pbd_vec3 r = {x, y, z};
	return r;
}
static inline pbd_vec3 pbd_v3_add(pbd_vec3 a, pbd_vec3 b) { return pbd_v3(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline pbd_vec3 pbd_v3_sub(pbd_vec3 a, pbd_vec3 b) { return pbd_v3(a.x - b.x, a.y - b.y, a.z - b.z); }
static inline pbd_vec3 pbd_v3_scale(pbd_vec3 a, pbd_real s) { return pbd_v3(a.x * s, a.y * s, a.z * s); }
static inline pbd_real pbd_v3_dot(pbd_vec3 a, pbd_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline pbd_vec3 pbd_v3_cross(pbd_vec3 a, pbd_vec3 b) {
	return pbd_v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline pbd_real pbd_v3_length(pbd_vec3 a) { return PBD_SQRT(pbd_v3_dot(a, a)); }
static inline bool pbd_v3_is_finite(pbd_vec3 a) { return isfinite(a.x) && isfinite(a.y) && isfinite(a.z); }

#ifdef __cplusplus
}
#endif

#endif
