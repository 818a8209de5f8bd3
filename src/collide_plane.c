/* Half-space collider: dot(n, x) >= offset + margin. */
#include "collide.h"

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

static void plane_mark_contacts(const pbd_collider_def* def, const pbd_vec3* restrict x, const pbd_real* restrict iw,
                                uint32_t n, pbd_real reach, uint8_t* restrict flags) {
	const pbd_vec3 nrm = def->shape.plane.normal;
	const pbd_real limit = def->shape.plane.offset + reach;
	for (uint32_t i = 0; i < n; ++i)
		if (iw[i] > 0 && pbd_v3_dot(nrm, x[i]) <= limit) flags[i] = (uint8_t)(flags[i] | PBD_PARTICLE_CONTACT);
}

static void plane_project(const pbd_collider_def* def, const pbd_vec3* restrict x, pbd_vec3* restrict q,
                          const pbd_real* restrict iw, uint32_t n) {
	const pbd_vec3 nrm = def->shape.plane.normal;
	const pbd_real limit = def->shape.plane.offset + def->margin;
	for (uint32_t i = 0; i < n; ++i) {
		if (iw[i] <= 0) continue;
		/* Signed distance below the limit, with the committed part and the displacement apart. */
		const pbd_real depth = (limit - pbd_v3_dot(nrm, x[i])) - pbd_v3_dot(nrm, q[i]);
		if (depth > 0) q[i] = pbd_v3_add(q[i], pbd_v3_scale(nrm, depth));
	}
}

const pbd_shape_ops pbd_shape_plane_ops = {"plane", plane_validate, plane_project, plane_mark_contacts};
