/* Solid ball collider: |x - c| >= radius + margin. */
#include "collide.h"

static pbd_status sphere_validate(pbd_world* w, pbd_collider_def* def) {
	const pbd_sphere* s = &def->shape.sphere;
	if (!pbd_v3_is_finite(s->center) || !pbd_is_finite(s->radius))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "pbd_collider_create: sphere center or radius is not finite");
	if (!(s->radius > 0))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_collider_create: sphere radius must be > 0 (got %.9g)",
		                (double)s->radius);
	/* The projection compares squared distances with (radius + margin)^2: both are bounded so
	 * that it stays finite (compared, not squared, so checking raises no FP exception). */
	const pbd_real cap = PBD_SQRT(PBD_REAL_MAX) / 4;
	if (!(s->radius <= cap && def->margin <= cap))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_collider_create: sphere radius %.9g or margin %.9g exceeds %g for this precision",
		                (double)s->radius, (double)def->margin, (double)cap);
	return PBD_OK;
}

static void sphere_mark_contacts(const pbd_collider_def* def, const pbd_vec3* restrict x, const pbd_real* restrict iw,
                                 uint32_t n, pbd_real reach, uint8_t* restrict flags) {
	const pbd_vec3 c = def->shape.sphere.center;
	const pbd_real r = def->shape.sphere.radius + reach;
	for (uint32_t i = 0; i < n; ++i) {
		if (iw[i] <= 0) continue;
		const pbd_vec3 d = pbd_v3_sub(x[i], c);
		if (pbd_v3_dot(d, d) <= r * r) flags[i] = (uint8_t)(flags[i] | PBD_PARTICLE_CONTACT);
	}
}

/* Moves a particle inside the ball radially out to the surface (plus margin), the response of
 * Games103 lab 2. A particle at the very centre has no radial direction; it goes up (+y). */
static void sphere_project(const pbd_collider_def* def, const pbd_vec3* restrict x, pbd_vec3* restrict q,
                           const pbd_real* restrict iw, uint32_t n) {
	const pbd_vec3 c = def->shape.sphere.center;
	const pbd_real r = def->shape.sphere.radius + def->margin;
	const pbd_real r2 = r * r;
	for (uint32_t i = 0; i < n; ++i) {
		if (iw[i] <= 0) continue;
		const pbd_vec3 xc = pbd_v3_sub(x[i], c);
		const pbd_vec3 d = pbd_v3_add(xc, q[i]);
		const pbd_real d2 = pbd_v3_dot(d, d);
		if (d2 >= r2) continue;
		const pbd_real len = PBD_SQRT(d2);
		/* (r d) / len in this order, as the lab computes it, so the seed scene can be matched. */
		const pbd_vec3 out =
		    len > PBD_EPSILON_LENGTH ? pbd_v3(r * d.x / len, r * d.y / len, r * d.z / len) : pbd_v3(0, r, 0);
		q[i] = pbd_v3_sub(out, xc); /* lands on c + out */
	}
}

const pbd_shape_ops pbd_shape_sphere_ops = {"sphere", sphere_validate, sphere_project, sphere_mark_contacts};
