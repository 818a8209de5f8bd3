/* Solid box centred on the origin of the collider's frame, with its faces across the axes. */
#include "collision/collide.h"
#include "collision/shape_math.h"

static pbd_real box_get(pbd_vec3 v, int i) { return i == 0 ? v.x : (i == 1 ? v.y : v.z); }

static pbd_vec3 box_set(pbd_vec3 v, int i, pbd_real x) {
	if (i == 0)
		v.x = x;
	else if (i == 1)
		v.y = x;
	else
		v.z = x;
	return v;
}

static pbd_vec3 box_axis(int i, pbd_real sign) { return box_set(pbd_v3(0, 0, 0), i, sign); }

static pbd_status box_validate(pbd_world* w, pbd_collider_def* def) {
	const pbd_vec3 e = def->shape.box.half_extents;
	if (!pbd_v3_is_finite(e))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "pbd_collider_create: box half_extents is not finite");
	if (!(e.x > 0 && e.y > 0 && e.z > 0))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_collider_create: box half_extents must each be > 0 (got %.9g, %.9g, %.9g)", (double)e.x,
		                (double)e.y, (double)e.z);
	/* The same bound as the sphere's, so that the stage may square a size plus the margin. The
	 * shape's own arithmetic works in units of its size and needs no more. */
	const pbd_real cap = PBD_SQRT(PBD_REAL_MAX) / 4;
	if (!(e.x <= cap && e.y <= cap && e.z <= cap && def->margin <= cap))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_collider_create: box half_extents (%.9g, %.9g, %.9g) or margin %.9g exceeds %g for this "
		                "precision",
		                (double)e.x, (double)e.y, (double)e.z, (double)def->margin, (double)cap);
	return PBD_OK;
}

/* Outside, the nearest point is the point clamped into the box and the excess over the faces
 * is the way out; it is divided by its largest component before it is squared, so that neither
 * a far point overflows nor a near one underflows to a zero length. Inside, the nearest face
 * wins, x before y before z and the positive side on a tie, so that the centre gets a fixed
 * normal. */
static pbd_real box_distance(const pbd_collider_def* def, pbd_vec3 p, pbd_vec3* normal) {
	const pbd_vec3 h = def->shape.box.half_extents;
	const pbd_vec3 q = pbd_v3(PBD_FABS(p.x) - h.x, PBD_FABS(p.y) - h.y, PBD_FABS(p.z) - h.z);
	const pbd_real m = PBD_FMAX(q.x, PBD_FMAX(q.y, q.z));
	if (m > 0) {
		const pbd_vec3 u = pbd_v3(PBD_FMAX(q.x, 0) / m, PBD_FMAX(q.y, 0) / m, PBD_FMAX(q.z, 0) / m);
		const pbd_real s = pbd_v3_length(u); /* in [1, sqrt 3] */
		*normal = pbd_v3(p.x < 0 ? -u.x / s : u.x / s, p.y < 0 ? -u.y / s : u.y / s, p.z < 0 ? -u.z / s : u.z / s);
		return m > PBD_REAL_MAX / 2 ? PBD_REAL_MAX : m * s;
	}
	const int k = q.x >= q.y && q.x >= q.z ? 0 : (q.y >= q.z ? 1 : 2);
	*normal = box_axis(k, box_get(p, k) < 0 ? -1 : 1);
	return m;
}

/* pbd_clip_box on the box [-e, e], with *axis the axis whose face is crossed at *t0 (-1 when a is
 * inside). */
static bool box_clip(pbd_vec3 a, pbd_vec3 d, pbd_vec3 e, pbd_real* t0, pbd_real* t1, int* axis) {
	*axis = -1;
	for (int i = 0; i < 3; ++i) {
		const pbd_real ei = box_get(e, i), before = *t0;
		if (!pbd_clip_slab(box_get(a, i), box_get(d, i), -ei, ei, t0, t1)) return false;
		if (*t0 > before) *axis = i;
	}
	return true;
}

/* The box grown by `radius` (a sum with a ball: rounded edges and corners) is the union of
 * three boxes, each grown along one axis only, twelve cylinders around the edges and eight
 * balls at the corners, all convex; the first touch is the earliest of their entries. A
 * cylinder's entry counts only within its edge's span: past it, the ray can only come in
 * through a flat end, which lies in a corner ball. Testing every piece needs no guess of the
 * region the segment arrives in, which rounding could get wrong near a boundary. The segment is
 * first clipped to the grown box's bounds and expressed in units of its size (a power of two,
 * exact): the quadratics then see numbers near 1, whatever the size of the box or the distance
 * of the points. A radius <= 0 leaves the box sharp: the clip alone is the answer. */
static bool box_sweep(const pbd_collider_def* def, pbd_vec3 a, pbd_vec3 b, pbd_real radius, pbd_real* t,
                      pbd_vec3* normal) {
	const pbd_vec3 h = def->shape.box.half_extents;
	const pbd_vec3 grown = pbd_v3(h.x + radius, h.y + radius, h.z + radius);
	if (!(grown.x > 0 && grown.y > 0 && grown.z > 0)) return false;
	pbd_vec3 n;
	if (!(box_distance(def, a, &n) > radius)) return false;
	const pbd_vec3 d = pbd_v3_sub(b, a);
	if (d.x == 0 && d.y == 0 && d.z == 0) return false;

	pbd_real t0 = 0, t1 = 1;
	int axis;
	if (!box_clip(a, d, grown, &t0, &t1, &axis)) return false;
	if (!(radius > 0)) {
		*t = t0;
		/* axis < 0: a is inside the clip box yet outside by the distance, a rounding case. */
		if (axis >= 0)
			*normal = box_axis(axis, box_get(d, axis) < 0 ? 1 : -1);
		else
			box_distance(def, a, normal);
		return true;
	}

	const int e = -pbd_shape_exponent(PBD_FMAX(grown.x, PBD_FMAX(grown.y, grown.z)));
	const pbd_vec3 p0 = pbd_shape_ldexp_v3(t0 > 0 ? pbd_v3_add(a, pbd_v3_scale(d, t0)) : a, e);
	const pbd_vec3 p1 = pbd_shape_ldexp_v3(t1 < 1 ? pbd_v3_add(a, pbd_v3_scale(d, t1)) : b, e);
	const pbd_vec3 u = pbd_v3_sub(p1, p0);
	const pbd_vec3 hs = pbd_shape_ldexp_v3(h, e);
	const pbd_real rs = pbd_shape_ldexp(radius, e), rr = rs * rs;

	pbd_real best = 2;
	int face = -1; /* the axis of the face hit first, -1 for an edge or a corner */
	for (int k = 0; k < 3; ++k) {
		pbd_real s0 = 0, s1 = 1;
		int ax;
		if (!box_clip(p0, u, box_set(hs, k, box_get(hs, k) + rs), &s0, &s1, &ax) || !(s0 < best)) continue;
		best = s0;
		face = ax >= 0 ? ax : (axis >= 0 ? axis : k); /* p0 on the clip box's face, or the start itself */
	}
	for (int m = 0; m < 3; ++m) { /* the four edges along axis m */
		const int i = (m + 1) % 3, j = (m + 2) % 3;
		const pbd_real hm = box_get(hs, m);
		for (int c = 0; c < 4; ++c) {
			pbd_vec3 f = box_set(p0, i, box_get(p0, i) - ((c & 1) ? box_get(hs, i) : -box_get(hs, i)));
			f = box_set(f, j, box_get(f, j) - ((c & 2) ? box_get(hs, j) : -box_get(hs, j)));
			const pbd_real s = pbd_shape_ball_entry(box_set(f, m, 0), box_set(u, m, 0), rr);
			if (s < best && PBD_FABS(box_get(f, m) + s * box_get(u, m)) <= hm) {
				best = s;
				face = -1;
			}
		}
	}
	for (int c = 0; c < 8; ++c) {
		const pbd_vec3 corner = pbd_v3((c & 1) ? hs.x : -hs.x, (c & 2) ? hs.y : -hs.y, (c & 4) ? hs.z : -hs.z);
		const pbd_real s = pbd_shape_ball_entry(pbd_v3_sub(p0, corner), u, rr);
		if (s < best) {
			best = s;
			face = -1;
		}
	}
	if (!(best <= 1)) return false;

	*t = pbd_shape_min(t0 + best * (t1 - t0), 1);
	const pbd_vec3 hit = pbd_v3_add(a, pbd_v3_scale(d, *t));
	/* A face's normal is exact from its axis; the distance's could tilt by rounding where the
	 * radius is small next to the box. */
	if (face >= 0)
		*normal = box_axis(face, box_get(hit, face) < 0 ? -1 : 1);
	else
		box_distance(def, hit, normal);
	return true;
}

static bool box_bounds(const pbd_collider_def* def, pbd_vec3* lo, pbd_vec3* hi) {
	const pbd_vec3 h = def->shape.box.half_extents;
	*lo = pbd_v3(-h.x, -h.y, -h.z);
	*hi = h;
	return true;
}

static bool in_box(pbd_vec3 p, pbd_vec3 lo, pbd_vec3 hi) {
	return lo.x <= p.x && p.x <= hi.x && lo.y <= p.y && p.y <= hi.y && lo.z <= p.z && p.z <= hi.z;
}

/* The eight corners; three faces meet at right angles in each, so the angle-weighted normal
 * there is the diagonal (+-1, +-1, +-1) / sqrt 3 whatever the extents. */
static void box_corners(const pbd_collider_def* def, pbd_vec3 lo, pbd_vec3 hi, pbd_corner_fn emit, void* ctx) {
	const pbd_vec3 h = def->shape.box.half_extents;
	const pbd_real d = 1 / PBD_SQRT(3);
	for (uint32_t k = 0; k < 8; ++k) {
		const pbd_real sx = k & 1 ? 1 : -1, sy = k & 2 ? 1 : -1, sz = k & 4 ? 1 : -1;
		const pbd_vec3 p = pbd_v3(sx * h.x, sy * h.y, sz * h.z);
		if (in_box(p, lo, hi)) emit(ctx, k, p, pbd_v3(sx * d, sy * d, sz * d));
	}
}

/* The twelve edges, four along each axis; two faces meet at a right angle in each, so the
 * outward direction is the sum of their axes over sqrt 2. */
static void box_edges(const pbd_collider_def* def, pbd_vec3 lo, pbd_vec3 hi, pbd_edge_fn emit, void* ctx) {
	const pbd_real h[3] = {def->shape.box.half_extents.x, def->shape.box.half_extents.y, def->shape.box.half_extents.z};
	const pbd_real l[3] = {lo.x, lo.y, lo.z}, u[3] = {hi.x, hi.y, hi.z};
	const pbd_real d = 1 / PBD_SQRT(2);
	for (uint32_t axis = 0; axis < 3; ++axis) {
		const uint32_t i = (axis + 1) % 3, j = (axis + 2) % 3;
		if (l[axis] > h[axis] || u[axis] < -h[axis]) continue;
		for (uint32_t k = 0; k < 4; ++k) {
			const pbd_real si = k & 1 ? 1 : -1, sj = k & 2 ? 1 : -1;
			if (si * h[i] < l[i] || si * h[i] > u[i] || sj * h[j] < l[j] || sj * h[j] > u[j]) continue;
			pbd_real a[3], b[3], o[3];
			a[axis] = -h[axis], b[axis] = h[axis], o[axis] = 0;
			a[i] = b[i] = si * h[i], o[i] = si * d;
			a[j] = b[j] = sj * h[j], o[j] = sj * d;
			emit(ctx, 4 * axis + k, pbd_v3(a[0], a[1], a[2]), pbd_v3(b[0], b[1], b[2]), pbd_v3(o[0], o[1], o[2]));
		}
	}
}

const pbd_shape_ops pbd_shape_box_ops = {.name = "box",
                                         .validate = box_validate,
                                         .distance = box_distance,
                                         .sweep = box_sweep,
                                         .bounds = box_bounds,
                                         .corners = box_corners,
                                         .edges = box_edges};
