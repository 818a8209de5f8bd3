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

static inline pbd_quat pbd_quat_identity(void) {
	pbd_quat q = {0, 0, 0, 1};
	return q;
}
static inline pbd_quat pbd_quat_mul(pbd_quat a, pbd_quat b) {
	pbd_quat r = {a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y, a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
	              a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w, a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
	return r;
}
static inline pbd_quat pbd_quat_conj(pbd_quat a) {
	pbd_quat r = {-a.x, -a.y, -a.z, a.w};
	return r;
}
/// Rotates v by the unit quaternion q: v + 2 w (u x v) + 2 u x (u x v), u the vector part.
static inline pbd_vec3 pbd_quat_rotate(pbd_quat q, pbd_vec3 v) {
	const pbd_vec3 u = pbd_v3(q.x, q.y, q.z);
	const pbd_vec3 t = pbd_v3_scale(pbd_v3_cross(u, v), 2);
	return pbd_v3_add(pbd_v3_add(v, pbd_v3_scale(t, q.w)), pbd_v3_cross(u, t));
}
/// Rotation about a unit axis by `angle` radians.
static inline pbd_quat pbd_quat_axis_angle(pbd_vec3 axis, pbd_real angle) {
	const pbd_real s = (pbd_real)sin(0.5 * (double)angle), c = (pbd_real)cos(0.5 * (double)angle);
	pbd_quat r = {axis.x * s, axis.y * s, axis.z * s, c};
	return r;
}
static inline bool pbd_quat_is_finite(pbd_quat q) {
	return isfinite(q.x) && isfinite(q.y) && isfinite(q.z) && isfinite(q.w);
}
/// Spherical interpolation from a (t = 0) to b (t = 1), the shorter way round; a normalised
/// lerp where the two are so close that slerp's sin(theta) would divide by almost nothing.
static inline pbd_quat pbd_quat_slerp(pbd_quat qa, pbd_quat qb, double t) {
	const double a[4] = {(double)qa.x, (double)qa.y, (double)qa.z, (double)qa.w};
	double b[4] = {(double)qb.x, (double)qb.y, (double)qb.z, (double)qb.w};
	double dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
	if (dot < 0) {
		for (int k = 0; k < 4; ++k) b[k] = -b[k];
		dot = -dot;
	}
	double wa = 1 - t, wb = t;
	if (dot < 0.9995) {
		const double theta = acos(dot), s = sin(theta);
		wa = sin((1 - t) * theta) / s;
		wb = sin(t * theta) / s;
	}
	double q[4], len2 = 0;
	for (int k = 0; k < 4; ++k) {
		q[k] = wa * a[k] + wb * b[k];
		len2 += q[k] * q[k];
	}
	const double len = sqrt(len2);
	if (!(len > 0)) return qa;
	pbd_quat r = {(pbd_real)(q[0] / len), (pbd_real)(q[1] / len), (pbd_real)(q[2] / len), (pbd_real)(q[3] / len)};
	return r;
}
static inline pbd_pose pbd_pose_identity(void) {
	pbd_pose p = {{0, 0, 0}, {0, 0, 0, 1}};
	return p;
}
/// The world position of a point given in the pose's frame.
static inline pbd_vec3 pbd_pose_apply(pbd_pose pose, pbd_vec3 local) {
	return pbd_v3_add(pose.position, pbd_quat_rotate(pose.rotation, local));
}
/// The pose-frame position of a world point.
static inline pbd_vec3 pbd_pose_apply_inverse(pbd_pose pose, pbd_vec3 world) {
	return pbd_quat_rotate(pbd_quat_conj(pose.rotation), pbd_v3_sub(world, pose.position));
}

#ifdef __cplusplus
}
#endif

#endif
