/* Convex hull of a point set, in the collider's frame. The hull (convex_hull.c) is built into the
 * collider's data block when the collider is created (and again when a snapshot is loaded); the
 * queries below read its face planes and triangles there. All arithmetic is in double, in the
 * hull's normalised coordinates (a power-of-two scale, exact), so that float points lose nothing
 * to the query and neither a huge nor a tiny hull overflows or underflows.
 *
 * Inside, the distance is the largest plane distance (the nearest face; the lowest face index on
 * a tie), exact for a convex polytope. Outside, that is only a lower bound near edges and
 * corners: the nearest point of the surface is searched on every face whose plane the point is
 * in front of (the nearest point always lies on one of them), as the nearest point of the
 * triangle. The cost is linear in the number of faces. */
#include <float.h>
#include <math.h>

#include "collision/collide.h"
#include "collision/convex_hull.h"
#include "collision/shape_math.h"

/* Points farther than this many scales from the hull's centre are answered from the centre
 * alone (their relative error is below 2^-198); nearer ones have normalised coordinates whose
 * squares cannot overflow. */
#define CONVEX_FAR 0x1p200

static pbd_status convex_validate(pbd_world* w, pbd_collider_def* def) {
	const pbd_convex* c = &def->shape.convex;
	if (!c->points) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_collider_create: convex points is NULL");
	if (c->point_count < 4)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_collider_create: convex point_count must be >= 4 (got %u)",
		                c->point_count);
	if (c->point_count > PBD_CONVEX_MAX_POINTS)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_collider_create: convex point_count %u exceeds the maximum %u",
		                c->point_count, PBD_CONVEX_MAX_POINTS);
	/* The same bound as the other shapes' sizes, so that the stage may square a size plus the margin. */
	const pbd_real cap = PBD_SQRT(PBD_REAL_MAX) / 4;
	for (uint32_t i = 0; i < c->point_count; ++i) {
		const pbd_vec3 p = c->points[i];
		if (!pbd_v3_is_finite(p))
			return pbd_fail(w, PBD_ERR_NOT_FINITE, "pbd_collider_create: convex points[%u] is not finite", i);
		if (!(PBD_FABS(p.x) <= cap && PBD_FABS(p.y) <= cap && PBD_FABS(p.z) <= cap))
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
			                "pbd_collider_create: convex points[%u] (%.9g, %.9g, %.9g) exceeds %g for this precision",
			                i, (double)p.x, (double)p.y, (double)p.z, (double)cap);
	}
	if (!(def->margin <= cap))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_collider_create: convex margin %.9g exceeds %g for this precision", (double)def->margin,
		                (double)cap);
	pbd_hull_frame fr;
	pbd_hull_frame_of(c->points, c->point_count, &fr);
	if (!(fr.half > 0))
		return pbd_fail(w, PBD_ERR_DEGENERATE, "pbd_collider_create: convex points are all the same point");
	if (!(fr.half >= 0x1p-1000))
		return pbd_fail(w, PBD_ERR_DEGENERATE,
		                "pbd_collider_create: convex points span %.3g, below the least size %.3g", 2 * fr.half,
		                0x1p-999);
	uint32_t idx[4];
	double line_dist, plane_dist;
	pbd_hull_simplex(c->points, c->point_count, &fr, idx, &line_dist, &plane_dist);
	if (!(line_dist > PBD_HULL_FLAT))
		return pbd_fail(w, PBD_ERR_DEGENERATE,
		                "pbd_collider_create: convex points lie on one line (all within %.3g of it, size %.3g)",
		                line_dist * fr.scale, 2 * fr.half);
	if (!(plane_dist > PBD_HULL_FLAT))
		return pbd_fail(w, PBD_ERR_DEGENERATE,
		                "pbd_collider_create: convex points lie in one plane (all within %.3g of it, size %.3g)",
		                plane_dist * fr.scale, 2 * fr.half);
	return PBD_OK;
}

static size_t convex_data_size(const pbd_collider_def* def) {
	return pbd_hull_data_size(def->shape.convex.point_count);
}

static void convex_build(pbd_collider_def* def, void* data) {
	pbd_hull_build(def->shape.convex.points, def->shape.convex.point_count, data);
	def->shape.convex.points = (const pbd_vec3*)data;
}

static const pbd_hull* hull_of(const pbd_collider_def* def) {
	return pbd_hull_get(def->shape.convex.points, def->shape.convex.point_count);
}

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void vertex_q(const pbd_hull* h, const pbd_vec3* v, double q[3]) {
	q[0] = ((double)v->x - h->center[0]) * h->inv_scale;
	q[1] = ((double)v->y - h->center[1]) * h->inv_scale;
	q[2] = ((double)v->z - h->center[2]) * h->inv_scale;
}

/* The point of triangle (a, b, c) nearest to p (Ericson, Real-Time Collision Detection 5.1.5);
 * true when it lies inside the triangle (not on an edge or a corner). Every quotient is of a
 * positive denominator. */
static bool closest_on_triangle(const double p[3], const double a[3], const double b[3], const double c[3],
                                double out[3]) {
	double ab[3], ac[3], ap[3], bp[3], cp[3];
	for (int k = 0; k < 3; ++k) {
		ab[k] = b[k] - a[k];
		ac[k] = c[k] - a[k];
		ap[k] = p[k] - a[k];
		bp[k] = p[k] - b[k];
		cp[k] = p[k] - c[k];
	}
	const double d1 = dot3(ab, ap), d2 = dot3(ac, ap);
	const double d3 = dot3(ab, bp), d4 = dot3(ac, bp);
	const double d5 = dot3(ab, cp), d6 = dot3(ac, cp);
	const double vc = d1 * d4 - d3 * d2, vb = d5 * d2 - d1 * d6, va = d3 * d6 - d5 * d4;
	const double* from = a;
	const double* dir = ab;
	double s = 0;
	double bc[3];
	if (d1 <= 0 && d2 <= 0) {
		s = 0; /* corner a */
	} else if (d3 >= 0 && d4 <= d3) {
		from = b; /* corner b */
	} else if (d6 >= 0 && d5 <= d6) {
		from = c; /* corner c */
	} else if (vc <= 0 && d1 >= 0 && d3 <= 0) {
		s = d1 - d3 > 0 ? d1 / (d1 - d3) : 0; /* edge ab */
	} else if (vb <= 0 && d2 >= 0 && d6 <= 0) {
		dir = ac; /* edge ac */
		s = d2 - d6 > 0 ? d2 / (d2 - d6) : 0;
	} else if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
		for (int k = 0; k < 3; ++k) bc[k] = c[k] - b[k]; /* edge bc */
		from = b;
		dir = bc;
		const double den = (d4 - d3) + (d5 - d6);
		s = den > 0 ? (d4 - d3) / den : 0;
	} else {
		const double sum = va + vb + vc;
		const double v = sum > 0 ? vb / sum : 0, w = sum > 0 ? vc / sum : 0;
		for (int k = 0; k < 3; ++k) out[k] = a[k] + ab[k] * v + ac[k] * w;
		return true;
	}
	for (int k = 0; k < 3; ++k) out[k] = from[k] + dir[k] * s;
	return false;
}

/* Signed distance from the normalised point q (|q| <= 2^201 or so) in normalised units, and
 * the outward unit normal. */
static double hull_query(const pbd_hull* h, const double q[3], double n[3]) {
	const pbd_hull_plane* pl = pbd_hull_planes(h);
	const uint32_t nf = h->face_count;
	uint32_t top = 0;
	double smax = dot3(pl[0].n, q) - pl[0].offset;
	for (uint32_t f = 1; f < nf; ++f) {
		const double s = dot3(pl[f].n, q) - pl[f].offset;
		if (s > smax) {
			smax = s;
			top = f;
		}
	}
	for (int k = 0; k < 3; ++k) n[k] = pl[top].n[k];
	if (!(smax > 0)) return smax;

	/* Outside: the nearest point of the triangles the point is in front of (a little slack for
	 * the planes' rounding only adds candidates, each a true point of the surface). */
	const pbd_vec3* vs = pbd_hull_vertices(h);
	const uint32_t* tri = pbd_hull_triangles(h);
	double best = DBL_MAX, dir[3] = {0, 0, 0};
	bool flat = true;
	uint32_t best_face = top;
	for (uint32_t f = 0; f < nf; ++f) {
		const double s = dot3(pl[f].n, q) - pl[f].offset;
		if (!(s > -4 * PBD_HULL_EPS)) continue;
		double a[3], b[3], c[3], x[3];
		vertex_q(h, &vs[tri[3 * (size_t)f]], a);
		vertex_q(h, &vs[tri[3 * (size_t)f + 1]], b);
		vertex_q(h, &vs[tri[3 * (size_t)f + 2]], c);
		if (closest_on_triangle(q, a, b, c, x)) {
			/* Inside the triangle: the way out is the face's normal, the distance its plane's. */
			if (s * s < best) {
				best = s * s;
				best_face = f;
				flat = true;
			}
		} else {
			const double v[3] = {q[0] - x[0], q[1] - x[1], q[2] - x[2]};
			const double d2 = dot3(v, v);
			if (d2 < best) {
				best = d2;
				best_face = f;
				flat = false;
				for (int k = 0; k < 3; ++k) dir[k] = v[k];
			}
		}
	}
	/* Within 1e-9 of an edge or a corner, the direction from it is mostly rounding: the face
	 * whose plane the point is farthest in front of gives the way out there (as inside). */
	const double d = sqrt(best);
	if (flat) {
		for (int k = 0; k < 3; ++k) n[k] = pl[best_face].n[k];
	} else if (d > 1e-9) {
		for (int k = 0; k < 3; ++k) n[k] = dir[k] / d;
	}
	return d;
}

/* Signed distance from the local point p (double) in local units, and the normal. */
static double convex_distance_d(const pbd_hull* h, const double p[3], double n[3]) {
	const double v[3] = {p[0] - h->center[0], p[1] - h->center[1], p[2] - h->center[2]};
	const double m = fmax(fabs(v[0]), fmax(fabs(v[1]), fabs(v[2])));
	if (m > CONVEX_FAR * h->scale) {
		/* The hull lies within sqrt(3) scales of its centre: the distance from the centre less
		 * 2 scales is a lower bound, and off by less than 2^-198 of itself. */
		const double u[3] = {v[0] / m, v[1] / m, v[2] / m};
		const double len = sqrt(dot3(u, u)); /* in [1, sqrt 3] */
		for (int k = 0; k < 3; ++k) n[k] = u[k] / len;
		return m > DBL_MAX / 2 ? DBL_MAX : m * len - 2 * h->scale;
	}
	const double q[3] = {v[0] * h->inv_scale, v[1] * h->inv_scale, v[2] * h->inv_scale};
	return hull_query(h, q, n) * h->scale;
}

static pbd_real real_of(double d) {
	return d > (double)PBD_REAL_MAX ? PBD_REAL_MAX : (d < -(double)PBD_REAL_MAX ? -PBD_REAL_MAX : (pbd_real)d);
}

static pbd_vec3 normal_of(const double n[3]) { return pbd_v3((pbd_real)n[0], (pbd_real)n[1], (pbd_real)n[2]); }

static pbd_real convex_distance(const pbd_collider_def* def, pbd_vec3 p, pbd_vec3* normal) {
	/* A point that is not finite (a state that overflowed, which the step undoes) has no nearest
	 * face: no contact. */
	if (!pbd_v3_is_finite(p)) {
		*normal = pbd_v3(0, 1, 0);
		return PBD_REAL_MAX;
	}
	const double x[3] = {(double)p.x, (double)p.y, (double)p.z};
	double n[3];
	const double d = convex_distance_d(hull_of(def), x, n);
	*normal = normal_of(n);
	return real_of(d);
}

/* The largest pbd_real not above t, in [0, 1]: a rounded-up t could lie past the contact. */
static pbd_real t_down(double t) {
	if (!(t > 0)) return 0;
	if (t >= 1) return 1;
	pbd_real r = (pbd_real)t;
#ifdef PBD_DOUBLE
	if ((double)r > t) r = nextafter(r, 0);
#else
	if ((double)r > t) r = nextafterf(r, 0);
#endif
	return r;
}

/* The distance to a convex set is convex along a line, so f(t) = distance - radius is convex on
 * the segment, with slope n . (b - a) (n the normal there). From the left, Newton's step to the
 * root of the tangent never passes the first root of f (the tangent lies below f), and is exact
 * on a face: it lands within a tolerance of the contact in one step there, and quickly near an
 * edge or a corner (the grown hull is round there). A slope >= 0 means f rises from here on: no
 * contact. The step aims at half the tolerance, so that rounding does not carry it past. The
 * segment is first clipped to the grown hull's bounds (with room to spare) and expressed in the
 * hull's normalised coordinates. */
static bool convex_sweep(const pbd_collider_def* def, pbd_vec3 a, pbd_vec3 b, pbd_real radius, pbd_real* t,
                         pbd_vec3* normal) {
	if (!pbd_v3_is_finite(a) || !pbd_v3_is_finite(b)) return false;
	const pbd_hull* h = hull_of(def);
	const double r = (double)radius;
	const double ad[3] = {(double)a.x, (double)a.y, (double)a.z}, bd[3] = {(double)b.x, (double)b.y, (double)b.z};
	double n[3];
	if (!(convex_distance_d(h, ad, n) > r)) return false;
	double ah[3], dh[3];
	for (int k = 0; k < 3; ++k) {
		ah[k] = (ad[k] - h->center[k]) / 2;
		dh[k] = (bd[k] - h->center[k]) / 2 - ah[k];
	}
	if (dh[0] == 0 && dh[1] == 0 && dh[2] == 0) return false;

	/* The grown hull lies within its bounds grown by the radius. */
	const double grow = fmax(r, 0) + h->scale / 64 + fmax(r, 0) / 64;
	const double lo[3] = {(double)h->lo.x, (double)h->lo.y, (double)h->lo.z};
	const double hi[3] = {(double)h->hi.x, (double)h->hi.y, (double)h->hi.z};
	/* In halves, as ah and dh, so that nothing overflows however far the ends are. */
	double t0 = 0, t1 = 1;
	for (int k = 0; k < 3; ++k)
		if (!pbd_clip_slab_d(ah[k], dh[k], (lo[k] - h->center[k] - grow) / 2, (hi[k] - h->center[k] + grow) / 2, &t0,
		                     &t1))
			return false;
	double q0[3], qd[3];
	for (int k = 0; k < 3; ++k) {
		const double p0 = 2 * (ah[k] + t0 * dh[k]), p1 = 2 * (ah[k] + t1 * dh[k]); /* within the box */
		q0[k] = p0 * h->inv_scale;
		qd[k] = (p1 - p0) * h->inv_scale;
	}
	const double rn = r * h->inv_scale;
	if (!(fabs(rn) <= CONVEX_FAR)) {
		/* A radius past 2^200 hull sizes: the grown hull is a ball about the centre to within
		 * 2^-199 of its radius; the ball of radius + 2 scales contains it, so its entry is never
		 * later than the true one. In units of that radius. */
		const double R = r + 2 * h->scale;
		double f[3], v[3];
		for (int k = 0; k < 3; ++k) {
			f[k] = 2 * (ah[k] + t0 * dh[k]) / R; /* within the clip box: |f| < 2 */
			v[k] = 2 * ((t1 - t0) * dh[k]) / R;
		}
		const double c = dot3(f, f) - 1, hb = dot3(f, v);
		if (!(hb < 0)) return false; /* not approaching */
		double s = 0;                /* starting in the ball (within 2^-199 of the grown hull): now */
		if (c > 0) {
			const double disc = hb * hb - dot3(v, v) * c;
			if (!(disc >= 0)) return false;
			s = c / (-hb + sqrt(disc));
			if (!(s <= 1)) return false;
		}
		*t = t_down(t0 + s * (t1 - t0));
		double x[3];
		for (int k = 0; k < 3; ++k) x[k] = h->center[k] + 2 * (ah[k] + (double)*t * dh[k]);
		convex_distance_d(h, x, n);
		*normal = normal_of(n);
		return true;
	}

	const double tol = 1e-13 * (2 + fabs(rn));
	double u = 0;
	bool hit = true; /* if the steps run out, the contact lies ahead: report where they stopped */
	for (int it = 0; it < 100; ++it) {
		const double x[3] = {q0[0] + u * qd[0], q0[1] + u * qd[1], q0[2] + u * qd[2]};
		const double f = hull_query(h, x, n) - rn;
		if (f <= tol) break;
		const double slope = dot3(n, qd);
		if (!(slope < 0)) {
			hit = false;
			break;
		}
		if (f - tol / 2 > -slope * (1 - u)) { /* the tangent stays above tol / 2 to the end */
			hit = false;
			break;
		}
		const double next = u + (f - tol / 2) / -slope; /* compared first: no overflow */
		if (!(next > u)) break;                         /* the contact is within rounding of u */
		u = next;
	}
	if (!hit) return false;
	*t = t_down(t0 + u * (t1 - t0));
	*normal = normal_of(n);
	return true;
}

static bool convex_bounds(const pbd_collider_def* def, pbd_vec3* lo, pbd_vec3* hi) {
	const pbd_hull* h = hull_of(def);
	*lo = h->lo;
	*hi = h->hi;
	return true;
}

static void convex_triangles(const pbd_collider_def* def, pbd_vec3* vertex_out, uint32_t vertex_cap,
                             uint32_t* triangle_out, uint32_t triangle_cap, uint32_t* vertices, uint32_t* triangles) {
	const pbd_hull* h = hull_of(def);
	*vertices = h->vertex_count;
	*triangles = h->face_count;
	const pbd_vec3* vs = pbd_hull_vertices(h);
	const uint32_t* tri = pbd_hull_triangles(h);
	if (vertex_out)
		for (uint32_t i = 0; i < h->vertex_count && i < vertex_cap; ++i) vertex_out[i] = vs[i];
	if (triangle_out)
		for (size_t i = 0; i < h->face_count && i < triangle_cap; ++i)
			for (size_t k = 0; k < 3; ++k) triangle_out[3 * i + k] = tri[3 * i + k];
}

/* The hull's vertices in [lo, hi], each with the mean of the normals of the faces around it (the
 * faces are found by a pass over all of them: the few vertices near a cloth triangle are asked). */
static void convex_corners(const pbd_collider_def* def, pbd_vec3 lo, pbd_vec3 hi, pbd_corner_fn emit, void* ctx) {
	const pbd_hull* h = hull_of(def);
	const pbd_vec3* vs = pbd_hull_vertices(h);
	const uint32_t* tri = pbd_hull_triangles(h);
	const pbd_hull_plane* pl = pbd_hull_planes(h);
	for (uint32_t i = 0; i < h->vertex_count; ++i) {
		const pbd_vec3 p = vs[i];
		if (!(lo.x <= p.x && p.x <= hi.x && lo.y <= p.y && p.y <= hi.y && lo.z <= p.z && p.z <= hi.z)) continue;
		double n[3] = {0, 0, 0};
		for (uint32_t f = 0; f < h->face_count; ++f)
			if (tri[3 * f] == i || tri[3 * f + 1] == i || tri[3 * f + 2] == i)
				for (int k = 0; k < 3; ++k) n[k] += pl[f].n[k];
		const double len = sqrt(dot3(n, n));
		const pbd_vec3 out =
		    len > 0 ? pbd_v3((pbd_real)(n[0] / len), (pbd_real)(n[1] / len), (pbd_real)(n[2] / len)) : pbd_v3(0, 0, 0);
		emit(ctx, i, p, out);
	}
}

/* The hull's edges whose box meets [lo, hi]: each undirected edge once, from the face where it
 * runs from the lower vertex index to the higher, with the face across it found by a pass over
 * all faces (the few edges near a cloth triangle are asked). Between two triangles of one flat
 * face (their normals agree) there is no edge. */
static void convex_edges(const pbd_collider_def* def, pbd_vec3 lo, pbd_vec3 hi, pbd_edge_fn emit, void* ctx) {
	const pbd_hull* h = hull_of(def);
	const pbd_vec3* vs = pbd_hull_vertices(h);
	const uint32_t* tri = pbd_hull_triangles(h);
	const pbd_hull_plane* pl = pbd_hull_planes(h);
	for (uint32_t f = 0; f < h->face_count; ++f)
		for (uint32_t k = 0; k < 3; ++k) {
			const uint32_t i = tri[3 * f + k], j = tri[3 * f + (k + 1) % 3];
			if (i >= j) continue;
			const pbd_vec3 a = vs[i], b = vs[j];
			if (PBD_FMIN(a.x, b.x) > hi.x || PBD_FMAX(a.x, b.x) < lo.x || PBD_FMIN(a.y, b.y) > hi.y ||
			    PBD_FMAX(a.y, b.y) < lo.y || PBD_FMIN(a.z, b.z) > hi.z || PBD_FMAX(a.z, b.z) < lo.z)
				continue;
			for (uint32_t g = 0; g < h->face_count; ++g) {
				const uint32_t* t = &tri[3 * g];
				if (!((t[0] == j && t[1] == i) || (t[1] == j && t[2] == i) || (t[2] == j && t[0] == i))) continue;
				if (dot3(pl[f].n, pl[g].n) < (double)PBD_SHARP_EDGE_COS) {
					const double n[3] = {pl[f].n[0] + pl[g].n[0], pl[f].n[1] + pl[g].n[1], pl[f].n[2] + pl[g].n[2]};
					const double len = sqrt(dot3(n, n));
					if (len > 0)
						emit(ctx, 3 * f + k, a, b,
						     pbd_v3((pbd_real)(n[0] / len), (pbd_real)(n[1] / len), (pbd_real)(n[2] / len)));
				}
				break;
			}
		}
}

const pbd_shape_ops pbd_shape_convex_ops = {.name = "convex",
                                            .validate = convex_validate,
                                            .distance = convex_distance,
                                            .sweep = convex_sweep,
                                            .bounds = convex_bounds,
                                            .data_size = convex_data_size,
                                            .build = convex_build,
                                            .triangles = convex_triangles,
                                            .corners = convex_corners,
                                            .edges = convex_edges};
