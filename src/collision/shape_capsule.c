/* Capsule: the points within `radius` of the segment (0, -half_height, 0)..(0, half_height, 0),
 * in the collider's frame. */
#include "collision/collide.h"
#include "collision/shape_math.h"

/* |v| and v / |v|, with v first divided by its largest component: squaring v itself would
 * overflow for a far point and underflow to a zero length (no direction) for a very near one.
 * Saturates at PBD_REAL_MAX, so that the distance stays finite for every finite point. Returns 0
 * for v = 0 and leaves *unit alone then. */
static pbd_real capsule_unit(pbd_vec3 v, pbd_vec3* unit) {
	const pbd_real m = PBD_FMAX(PBD_FABS(v.x), PBD_FMAX(PBD_FABS(v.y), PBD_FABS(v.z)));
	if (!(m > 0)) return 0;
	const pbd_vec3 u = pbd_v3(v.x / m, v.y / m, v.z / m); /* not times 1 / m: that overflows for a subnormal m */
	const pbd_real s = pbd_v3_length(u);                  /* in [1, sqrt 3] */
	*unit = pbd_v3_scale(u, 1 / s);
	return m > PBD_REAL_MAX / 2 ? PBD_REAL_MAX : m * s;
}

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
	const pbd_real y = p.y > h ? h : (p.y < -h ? -h : p.y);
	*normal = pbd_v3(1, 0, 0);
	const pbd_real len = capsule_unit(pbd_v3(p.x, p.y - y, p.z), normal);
	return len - def->shape.capsule.radius;
}

/* Narrows [*t0, *t1] to the parameters at which a + t d lies in [lo, hi]; false when that is
 * empty. Compares before it divides, so each quotient lies in [0, 1] and none can overflow
 * however short d is. */
static bool capsule_clip(pbd_real a, pbd_real d, pbd_real lo, pbd_real hi, pbd_real* t0, pbd_real* t1) {
	if (d == 0) return lo <= a && a <= hi;
	if (d < 0) {
		const pbd_real l = lo;
		lo = -hi;
		hi = -l;
		a = -a;
		d = -d;
	}
	const pbd_real near = lo - a, far = hi - a;
	if (far < 0 || near > d) return false;
	if (near > 0) *t0 = PBD_FMAX(*t0, near / d);
	if (far < d) *t1 = pbd_shape_min(*t1, far / d);
	return *t0 <= *t1;
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
	if (!capsule_clip(a.x, d.x, -(r + pad), r + pad, &t0, &t1) ||
	    !capsule_clip(a.y, d.y, -(size + pad), size + pad, &t0, &t1) ||
	    !capsule_clip(a.z, d.z, -(r + pad), r + pad, &t0, &t1))
		return false;
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

const pbd_shape_ops pbd_shape_capsule_ops = {
    "capsule", capsule_validate, capsule_distance, capsule_sweep, capsule_bounds, NULL, NULL, NULL, NULL, NULL};
