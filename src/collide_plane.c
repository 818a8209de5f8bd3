/* Half-space collider: dot(n, x) >= offset + margin. */
#include "collide.h"

static pbd_status plane_validate(pbd_world* w, pbd_collider_def* def) {
	pbd_plane* pl = &def->shape.plane;
	if (!pbd_v3_is_finite(pl->normal) || !pbd_is_finite(pl->offset))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "pbd_collider_create: plane normal or offset is not finite");
	pbd_real len = pbd_v3_length(pl->normal);
	if (!(len > PBD_R(1e-12)))
		return pbd_fail(w, PBD_ERR_DEGENERATE, "pbd_collider_create: plane normal has zero length");
	/* dot(n, x) = d and dot(n / |n|, x) = d / |n| are the same plane. */
	pl->normal = pbd_v3_scale(pl->normal, 1 / len);
	pl->offset = pl->offset / len;
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
