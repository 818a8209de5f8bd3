/* Capsule: the points within `radius` of the segment (0, -half_height, 0)..(0, half_height, 0),
 * in the collider's frame. */
#include "collision/collide.h"
#include "collision/shape_math.h"

static pbd_status capsule_validate(pbd_world* w, pbd_collider_def* def) {
	const pbd_capsule* c = &def->shape.capsule;
	if (!pbd_is_finite(c->half_height) || !pbd_is_finite(c->radius))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "pbd_collider_create: capsule half_height or radius is not finite");
	if (!(c->radius > 0))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_collider_create: capsule radius must be > 0 (got %.9g)",
		                (double)c->radius);
	if (!(c->half_height >= 0))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_collider_create: capsule half_height must be >= 0 (got %.9g)",
		                (double)c->half_height);
	/* The same bound as the sphere's, so that the stage may square a size plus the margin. The
	 * shape's own arithmetic works in units of its size and needs no more. */
	const pbd_real cap = PBD_SQRT(PBD_REAL_MAX) / 4;
	if (!(c->half_height <= cap && c->radius <= cap && def->margin <= cap))
		return pbd_fail(
		    w, PBD_ERR_OUT_OF_RANGE,
		    "pbd_collider_create: capsule half_height %.9g, radius %.9g or margin %.9g exceeds %g for this precision",
		    (double)c->half_height, (double)c->radius, (double)def->margin, (double)cap);
	return PBD_OK;
}

/* A point on the segment itself has no radial direction; it leaves along +x. */
static pbd_real capsule_distance(const pbd_collider_def* def, pbd_vec3 p, pbd_vec3* normal) {
	const pbd_real h = def->shape.capsule.half_height;
	const pbd_real y = pbd_shape_clamp(p.y, -h, h);
	*normal = pbd_v3(1, 0, 0);
	const pbd_real len = pbd_shape_unit(pbd_v3(p.x, p.y - y, p.z), normal);
	return len - def->shape.capsule.radius;
}

/* The capsule grown by `radius` is the union of a cylinder and two balls, all convex, so the
 * first touch is the earliest of their entries. The cylinder's entry counts only within the
 * segment's span: past it, the ray can only come in through a flat end, which lies in a ball.
 * The segment is first clipped to a box around the shape and expressed in units of the shape's
 * size (a power of two, exact): the quadratics then see numbers near 1, whatever the size of
 * the capsule or the distance of the points. */
static bool capsule_sweep(const pbd_collider_def* def, pbd_vec3 a, pbd_vec3 b, pbd_real radius, pbd_real* t,
                          pbd_vec3* normal) {
	const pbd_real h = def->shape.capsule.half_height;
	const pbd_real r = def->shape.capsule.radius + radius;
	if (!(r > 0)) return false;
	pbd_vec3 n;
	if (!(capsule_distance(def, a, &n) > radius)) return false;
	const pbd_vec3 d = pbd_v3_sub(b, a);
	if (d.x == 0 && d.y == 0 && d.z == 0) return false;

	/* The padding keeps the clipping's rounding from cutting into the shape. */
	const pbd_real size = h + r, pad = size / 16;
	pbd_real t0 = 0, t1 = 1;
	const pbd_vec3 half = pbd_v3(r + pad, size + pad, r + pad);
	if (!pbd_clip_box(a, d, pbd_v3_scale(half, -1), half, &t0, &t1)) return false;
	const int e = -pbd_shape_exponent(size);
	const pbd_vec3 p0 = pbd_shape_ldexp_v3(t0 > 0 ? pbd_v3_add(a, pbd_v3_scale(d, t0)) : a, e);
	const pbd_vec3 p1 = pbd_shape_ldexp_v3(t1 < 1 ? pbd_v3_add(a, pbd_v3_scale(d, t1)) : b, e);
	const pbd_vec3 u = pbd_v3_sub(p1, p0);
	const pbd_real hs = pbd_shape_ldexp(h, e), rs = pbd_shape_ldexp(r, e), rr = rs * rs;

	pbd_real s = pbd_shape_ball_entry(pbd_v3(p0.x, 0, p0.z), pbd_v3(u.x, 0, u.z), rr);
	if (!(s <= 1 && PBD_FABS(p0.y + s * u.y) <= hs)) s = 2;
	s = pbd_shape_min(s, pbd_shape_ball_entry(pbd_v3(p0.x, p0.y - hs, p0.z), u, rr));
	s = pbd_shape_min(s, pbd_shape_ball_entry(pbd_v3(p0.x, p0.y + hs, p0.z), u, rr));
	if (!(s <= 1)) return false;

	*t = pbd_shape_min(t0 + s * (t1 - t0), 1);
	capsule_distance(def, pbd_v3_add(a, pbd_v3_scale(d, *t)), normal);
	return true;
}

static bool capsule_bounds(const pbd_collider_def* def, pbd_vec3* lo, pbd_vec3* hi) {
	const pbd_real r = def->shape.capsule.radius, y = def->shape.capsule.half_height + r;
	*lo = pbd_v3(-r, -y, -r);
	*hi = pbd_v3(r, y, r);
	return true;
}

const pbd_shape_ops pbd_shape_capsule_ops = {.name = "capsule",
                                             .validate = capsule_validate,
                                             .distance = capsule_distance,
                                             .sweep = capsule_sweep,
                                             .bounds = capsule_bounds};
