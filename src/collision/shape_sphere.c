/* Solid ball: |x - c| >= radius + margin, in the collider's frame. */
#include "collision/collide.h"

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

/* A point at the very centre has no radial direction; it leaves upwards (+y). */
static pbd_real sphere_distance(const pbd_collider_def* def, pbd_vec3 p, pbd_vec3* normal) {
	const pbd_vec3 d = pbd_v3_sub(p, def->shape.sphere.center);
	const pbd_real len = pbd_v3_length(d);
	*normal = len > PBD_EPSILON_LENGTH ? pbd_v3_scale(d, 1 / len) : pbd_v3(0, 1, 0);
	return len - def->shape.sphere.radius;
}

/* |m + t u| = R with m = a - c, u = b - a: t^2 u.u + 2 t m.u + m.m - R^2 = 0. The smaller root
 * is written as c / (-b' + sqrt(b'^2 - a c)), which does not cancel when the segment is long and
 * the sphere small. */
static bool sphere_sweep(const pbd_collider_def* def, pbd_vec3 a, pbd_vec3 b, pbd_real radius, pbd_real* t,
                         pbd_vec3* normal) {
	const pbd_real r = def->shape.sphere.radius + radius;
	const pbd_vec3 m = pbd_v3_sub(a, def->shape.sphere.center), u = pbd_v3_sub(b, a);
	const pbd_real c = pbd_v3_dot(m, m) - r * r, half_b = pbd_v3_dot(m, u), uu = pbd_v3_dot(u, u);
	if (!(c > 0) || !(half_b < 0)) return false; /* inside already, or not approaching */
	const pbd_real disc = half_b * half_b - uu * c;
	if (!(disc >= 0)) return false;
	const pbd_real root = c / (-half_b + PBD_SQRT(disc));
	if (!(root <= 1)) return false;
	*t = root;
	sphere_distance(def, pbd_v3_add(a, pbd_v3_scale(u, root)), normal);
	return true;
}

static bool sphere_bounds(const pbd_collider_def* def, pbd_vec3* lo, pbd_vec3* hi) {
	const pbd_vec3 c = def->shape.sphere.center;
	const pbd_real r = def->shape.sphere.radius;
	*lo = pbd_v3(c.x - r, c.y - r, c.z - r);
	*hi = pbd_v3(c.x + r, c.y + r, c.z + r);
	return true;
}

const pbd_shape_ops pbd_shape_sphere_ops = {.name = "sphere",
                                            .validate = sphere_validate,
                                            .distance = sphere_distance,
                                            .sweep = sphere_sweep,
                                            .bounds = sphere_bounds};
