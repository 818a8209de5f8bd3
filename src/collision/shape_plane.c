/* Half-space collider: dot(n, x) >= offset + margin. */
#include "collision/collide.h"

static pbd_status plane_validate(pbd_world* w, pbd_collider_def* def) {
	pbd_plane* pl = &def->shape.plane;
	if (!pbd_v3_is_finite(pl->normal) || !pbd_is_finite(pl->offset))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "pbd_collider_create: plane normal or offset is not finite");
	/* Scaled by its largest component first, so that the length of a huge normal cannot
	 * overflow (which would turn the unit normal into 0) nor a tiny one underflow. */
	const pbd_real m = PBD_FMAX(PBD_FABS(pl->normal.x), PBD_FMAX(PBD_FABS(pl->normal.y), PBD_FABS(pl->normal.z)));
	if (!(m > 0)) return pbd_fail(w, PBD_ERR_DEGENERATE, "pbd_collider_create: plane normal has zero length");
	/* dot(n, x) = d and dot(n / |n|, x) = d / |n| are the same plane. The offset, and the
	 * margin added to it, stay within half the range, checked before dividing. */
	const pbd_real half = PBD_REAL_MAX / 2;
	if (!(PBD_FABS(pl->offset) <= (m < 1 ? m * half : half)) || !(def->margin <= half))
		return pbd_fail(
		    w, PBD_ERR_OUT_OF_RANGE,
		    "pbd_collider_create: plane offset %.9g over a normal of length %.9g, or margin %.9g, overflows",
		    (double)pl->offset, (double)m, (double)def->margin);
	const pbd_vec3 n = pbd_v3_scale(pl->normal, 1 / m);
	const pbd_real len = pbd_v3_length(n); /* in [1, sqrt 3] */
	pl->normal = pbd_v3_scale(n, 1 / len);
	pl->offset = pl->offset / m / len;
	return PBD_OK;
}

static pbd_real plane_distance(const pbd_collider_def* def, pbd_vec3 p, pbd_vec3* normal) {
	*normal = def->shape.plane.normal;
	return pbd_v3_dot(def->shape.plane.normal, p) - def->shape.plane.offset;
}

static bool plane_sweep(const pbd_collider_def* def, pbd_vec3 a, pbd_vec3 b, pbd_real radius, pbd_real* t,
                        pbd_vec3* normal) {
	const pbd_vec3 n = def->shape.plane.normal;
	const pbd_real level = def->shape.plane.offset + radius;
	const pbd_real da = pbd_v3_dot(n, a) - level, db = pbd_v3_dot(n, b) - level;
	if (!(da > 0) || !(db <= 0)) return false;
	/* da > 0 >= db, so the quotient lies in (0, 1]. */
	*t = da / (da - db);
	*normal = n;
	return true;
}

static bool plane_bounds(const pbd_collider_def* def, pbd_vec3* lo, pbd_vec3* hi) {
	(void)def;
	*lo = *hi = pbd_v3(0, 0, 0);
	return false;
}

const pbd_shape_ops pbd_shape_plane_ops = {.name = "plane",
                                           .validate = plane_validate,
                                           .distance = plane_distance,
                                           .sweep = plane_sweep,
                                           .bounds = plane_bounds};
