/* Triangle mesh collider, in the collider's frame.
 *
 * `closed` false: a thin surface with two sides. The distance is the unsigned distance to the
 * nearest triangle and the normal points from the nearest point to p. In a face's region that
 * is the face normal turned to p's side, taken exactly; near an edge or a corner, where the
 * direction is lost in rounding (|p - nearest| under DIR_TOL, about 1e-4 in float, times the
 * triangle's size plus its distance from the origin), the face normal turned to p's side stands
 * in. For p exactly on the plane it is the front side, counter-clockwise ((b - a) x (c - a)):
 * the fixed choice. A zero-area nearest triangle gives the direction from its nearest point, or
 * +x for p on it.
 *
 * `closed` true: a watertight, consistently and outward wound mesh. The distance is signed
 * (negative inside), the side told by the angle-weighted pseudonormal of the nearest feature of
 * the nearest triangle (face, edge or vertex; Baerentzen and Aanaes 2005), all precomputed at
 * build. The normal is the outward direction from the nearest point (the face normal in a face's
 * region), and the feature's pseudonormal where that direction is lost in rounding.
 *
 * The nearest triangle comes from a bounding volume hierarchy (bvh.h) and the nearest point on
 * a triangle from the region method of Ericson (Real-Time Collision Detection, 5.1.5), with the
 * barycentric numerators taken from cross products (better conditioned than the dot-product
 * form); slivers (smallest angle under about 1e-3 rad) and zero-area triangles take the foot of
 * the perpendicular or the nearest of their edges instead. Sweeps find the exact
 * first touch of the point with each candidate triangle grown by the radius (a prism and three
 * capsules), see mesh_sweep.
 *
 * The owned bytes, all derived from the def's counts (the def keeps no other pointer):
 *   vertices (nv), triangles (3 nt), BVH nodes (2 nt - 1, unused ones zero), BVH order (nt),
 *   for a closed mesh the vertex pseudonormals (nv) and the edge pseudonormals (3 nt: edges
 *   v0v1, v1v2, v2v0 of each triangle), the face normals (nt, zero for a triangle of zero area)
 *   and a byte of flags per triangle (TRI_*), each array starting on a multiple of 16 bytes,
 *   padding zero. */
#include <stdint.h>
#include <string.h>

#include "collision/bvh.h"
#include "collision/collide.h"
#include "collision/shape_math.h"

#define MESH_MAX_VERTICES  PBD_OBJ_MAX_VERTICES
#define MESH_MAX_TRIANGLES PBD_OBJ_MAX_TRIANGLES

#ifdef PBD_DOUBLE
#define MESH_EPS DBL_EPSILON
#else
#define MESH_EPS FLT_EPSILON
#endif
/* Below this length, relative to the triangle's size and place, the direction from the nearest
 * point is rounding noise (its error is a few MESH_EPS of that size): about 0.1 degree at the
 * threshold. */
#define DIR_TOL (512 * MESH_EPS)
/* Widening of a triangle's sides, relative to its size, so that a point crossing a shared edge
 * is inside one of the two triangles whatever the rounding. */
#define SIDE_TOL (8 * MESH_EPS)

enum { FEAT_V0 = 0, FEAT_V1, FEAT_V2, FEAT_E01, FEAT_E12, FEAT_E20, FEAT_FACE };

/* A triangle's flags: TRI_CORNER << k, it lists its corner k (each vertex from one triangle, the
 * first that uses it); TRI_EDGE << k, its edge k is a sharp convex edge that mesh_edges lists. */
enum { TRI_CORNER = 1, TRI_EDGE = 8 };

/* ---- layout ------------------------------------------------------------------------------ */

typedef struct mesh_layout {
	uint64_t tri, nodes, order, vpn, epn, fn, flags, total; /* byte offsets; total is the size */
} mesh_layout;

static uint64_t align16(uint64_t x) { return (x + 15) & ~(uint64_t)15; }

static mesh_layout layout_of(uint32_t nv, uint32_t nt, bool closed) {
	mesh_layout l;
	l.tri = align16((uint64_t)nv * sizeof(pbd_vec3));
	l.nodes = align16(l.tri + 3 * (uint64_t)nt * sizeof(uint32_t));
	l.order = align16(l.nodes + (uint64_t)pbd_bvh_node_capacity(nt) * sizeof(pbd_bvh_node));
	l.vpn = align16(l.order + (uint64_t)nt * sizeof(uint32_t));
	l.epn = align16(l.vpn + (closed ? (uint64_t)nv * sizeof(pbd_vec3) : 0));
	l.fn = align16(l.epn + (closed ? 3 * (uint64_t)nt * sizeof(pbd_vec3) : 0));
	l.flags = align16(l.fn + (uint64_t)nt * sizeof(pbd_vec3));
	l.total = align16(l.flags + nt);
	return l;
}

typedef struct mesh_view {
	const pbd_vec3* v;
	const uint32_t* tri;
	const pbd_bvh_node* nodes;
	const uint32_t* order;
	const pbd_vec3* vpn;  /* closed only */
	const pbd_vec3* epn;  /* closed only */
	const pbd_vec3* fn;   /* face_normal's normal of each triangle, zero where it has none */
	const uint8_t* flags; /* TRI_* of each triangle */
	uint32_t nv, nt;
	bool closed;
} mesh_view;

/* The arrays of a built def: they all follow its vertices. */
static mesh_view view_of(const pbd_collider_def* def) {
	const pbd_trimesh* m = &def->shape.mesh;
	const mesh_layout l = layout_of(m->vertex_count, m->triangle_count, m->closed);
	const char* base = (const char*)(const void*)m->vertices;
	mesh_view v;
	v.v = m->vertices;
	v.tri = m->triangles;
	v.nodes = (const pbd_bvh_node*)(const void*)(base + l.nodes);
	v.order = (const uint32_t*)(const void*)(base + l.order);
	v.vpn = m->closed ? (const pbd_vec3*)(const void*)(base + l.vpn) : NULL;
	v.epn = m->closed ? (const pbd_vec3*)(const void*)(base + l.epn) : NULL;
	v.fn = (const pbd_vec3*)(const void*)(base + l.fn);
	v.flags = (const uint8_t*)(const void*)(base + l.flags);
	v.nv = m->vertex_count;
	v.nt = m->triangle_count;
	v.closed = m->closed;
	return v;
}

/* ---- small vector helpers ----------------------------------------------------------------- */

/* The largest |component|, as pbd_shape_max_abs gives it, in max instructions: its PBD_FMAX tests
 * for a NaN with branches, and the magnitudes here are never NaN (the points and vertices are
 * finite), where the two agree to the bit (a tie is between equal magnitudes). */
static pbd_real max_abs(pbd_vec3 v) {
	return pbd_shape_max(PBD_FABS(v.x), pbd_shape_max(PBD_FABS(v.y), PBD_FABS(v.z)));
}

/* The unit normal (b - a) x (c - a), counter-clockwise front; false (and *n alone) for a
 * triangle of zero area. */
static bool face_normal(pbd_vec3 a, pbd_vec3 b, pbd_vec3 c, pbd_vec3* n) {
	pbd_vec3 ab = pbd_v3_sub(b, a), ac = pbd_v3_sub(c, a);
	const pbd_real m = pbd_shape_max(max_abs(ab), max_abs(ac));
	if (!(m > 0)) return false;
	const int e = -pbd_shape_exponent(m);
	ab = pbd_shape_ldexp_v3(ab, e);
	ac = pbd_shape_ldexp_v3(ac, e);
	return pbd_shape_unit(pbd_v3_cross(ab, ac), n) > 0;
}

static pbd_vec3 vertex_of(const mesh_view* m, uint32_t t, int k) { return m->v[m->tri[3 * (size_t)t + (size_t)k]]; }

/* ---- nearest point on a triangle ------------------------------------------------------------ */

/* The nearest point of a triangle too thin for the region method (the smallest angle under
 * about 1e-3 rad, or zero area): the foot of the perpendicular where it falls inside (the
 * inside test may err only within rounding of an edge, where an edge's answer is as near),
 * else the nearest point of the three edges. s* are the scaled b - a, c - a, p - a. */
static pbd_vec3 closest_on_sliver(pbd_vec3 p, pbd_vec3 a, pbd_vec3 b, pbd_vec3 c, pbd_vec3 ap, pbd_vec3 sab,
                                  pbd_vec3 sac, pbd_vec3 sap, int* feature) {
	pbd_vec3 nu;
	const pbd_vec3 sbp = pbd_v3_sub(sap, sab), scp = pbd_v3_sub(sap, sac), sbc = pbd_v3_sub(sac, sab);
	const pbd_vec3 n = pbd_v3_cross(sab, sac);
	if (pbd_shape_unit(n, &nu) > 0) {
		const pbd_vec3 x = pbd_v3_sub(sap, pbd_v3_scale(nu, pbd_v3_dot(nu, sap))); /* the foot, from a */
		if (pbd_v3_dot(pbd_v3_cross(sab, x), n) >= 0 && pbd_v3_dot(pbd_v3_cross(sbc, pbd_v3_sub(x, sab)), n) >= 0 &&
		    pbd_v3_dot(pbd_v3_cross(pbd_v3_scale(sac, -1), pbd_v3_sub(x, sac)), n) >= 0) {
			*feature = FEAT_FACE;
			return pbd_v3_sub(p, pbd_v3_scale(nu, pbd_v3_dot(nu, ap)));
		}
	}
	const pbd_vec3 sca = pbd_v3_scale(sac, -1);
	const pbd_real t0 = pbd_segment_param(sap, sab), t1 = pbd_segment_param(sbp, sbc), t2 = pbd_segment_param(scp, sca);
	const pbd_vec3 r0 = pbd_v3_sub(sap, pbd_v3_scale(sab, t0)), r1 = pbd_v3_sub(sbp, pbd_v3_scale(sbc, t1)),
	               r2 = pbd_v3_sub(scp, pbd_v3_scale(sca, t2));
	const pbd_real q0 = pbd_v3_dot(r0, r0), q1 = pbd_v3_dot(r1, r1), q2 = pbd_v3_dot(r2, r2);
	if (q0 <= q1 && q0 <= q2) {
		*feature = t0 <= 0 ? FEAT_V0 : (t0 >= 1 ? FEAT_V1 : FEAT_E01);
		return pbd_v3_add(a, pbd_v3_scale(pbd_v3_sub(b, a), t0));
	}
	if (q1 <= q2) {
		*feature = t1 <= 0 ? FEAT_V1 : (t1 >= 1 ? FEAT_V2 : FEAT_E12);
		return pbd_v3_add(b, pbd_v3_scale(pbd_v3_sub(c, b), t1));
	}
	*feature = t2 <= 0 ? FEAT_V2 : (t2 >= 1 ? FEAT_V0 : FEAT_E20);
	return pbd_v3_add(c, pbd_v3_scale(pbd_v3_sub(a, c), t2));
}

/* The nearest point of triangle abc to p and, in *feature, the feature it lies on (FEAT_*).
 * Works on b - a, c - a, p - a, scaled by a power of two to numbers near 1 where they are far
 * from it, so that the products of products neither overflow nor underflow; the weights found
 * there apply to the unscaled edges. */
static pbd_vec3 closest_on_triangle(pbd_vec3 p, pbd_vec3 a, pbd_vec3 b, pbd_vec3 c, int* feature) {
	const pbd_vec3 ab = pbd_v3_sub(b, a), ac = pbd_v3_sub(c, a), ap = pbd_v3_sub(p, a);
	const pbd_real m = pbd_shape_max(pbd_shape_max(max_abs(ab), max_abs(ac)), max_abs(ap));
	*feature = FEAT_V0;
	if (!(m > 0)) return a;
	pbd_vec3 sab = ab, sac = ac, sap = ap;
	if (m > PBD_R(65536.0) || m < PBD_R(1.0) / PBD_R(65536.0)) {
		const int e = -pbd_shape_exponent(m);
		sab = pbd_shape_ldexp_v3(ab, e);
		sac = pbd_shape_ldexp_v3(ac, e);
		sap = pbd_shape_ldexp_v3(ap, e);
	}
	const pbd_vec3 sbp = pbd_v3_sub(sap, sab), scp = pbd_v3_sub(sap, sac), sbc = pbd_v3_sub(sac, sab);
	const pbd_vec3 n = pbd_v3_cross(sab, sac);
	const pbd_real l2 = pbd_shape_max(pbd_v3_dot(sab, sab), pbd_shape_max(pbd_v3_dot(sac, sac), pbd_v3_dot(sbc, sbc)));
	if (!(pbd_v3_dot(n, n) > l2 * l2 * PBD_R(1.0) / PBD_R(1048576.0)))
		return closest_on_sliver(p, a, b, c, ap, sab, sac, sap, feature);
	const pbd_real d1 = pbd_v3_dot(sab, sap), d2 = pbd_v3_dot(sac, sap);
	if (d1 <= 0 && d2 <= 0) return a;
	const pbd_real d3 = pbd_v3_dot(sab, sbp), d4 = pbd_v3_dot(sac, sbp);
	if (d3 >= 0 && d4 <= d3) {
		*feature = FEAT_V1;
		return b;
	}
	const pbd_real vc = pbd_v3_dot(n, pbd_v3_cross(sap, sbp));
	if (vc <= 0 && d1 >= 0 && d3 <= 0) {
		const pbd_real den = d1 - d3;
		*feature = FEAT_E01;
		return pbd_v3_add(a, pbd_v3_scale(ab, den > 0 ? d1 / den : 0));
	}
	const pbd_real d5 = pbd_v3_dot(sab, scp), d6 = pbd_v3_dot(sac, scp);
	if (d6 >= 0 && d5 <= d6) {
		*feature = FEAT_V2;
		return c;
	}
	const pbd_real vb = pbd_v3_dot(n, pbd_v3_cross(scp, sap));
	if (vb <= 0 && d2 >= 0 && d6 <= 0) {
		const pbd_real den = d2 - d6;
		*feature = FEAT_E20;
		return pbd_v3_add(a, pbd_v3_scale(ac, den > 0 ? d2 / den : 0));
	}
	const pbd_real va = pbd_v3_dot(n, pbd_v3_cross(sbp, scp));
	if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
		const pbd_real num = d4 - d3, den = num + (d5 - d6);
		*feature = FEAT_E12;
		return pbd_v3_add(b, pbd_v3_scale(pbd_v3_sub(c, b), den > 0 ? num / den : 0));
	}
	const pbd_real sum = va + vb + vc;
	if (sum > (PBD_FABS(va) + PBD_FABS(vb) + PBD_FABS(vc)) * PBD_R(1.0) / PBD_R(1048576.0)) {
		/* Inside the face's region. Rounding may leave a weight a hair outside [0, 1]. */
		pbd_real v = PBD_FMAX(vb / sum, 0), w = PBD_FMAX(vc / sum, 0);
		if (v + w > 1) {
			const pbd_real s = v + w;
			v /= s;
			w /= s;
		}
		*feature = FEAT_FACE;
		return pbd_v3_add(a, pbd_v3_add(pbd_v3_scale(ab, v), pbd_v3_scale(ac, w)));
	}
	/* Only rounding brings a well-shaped triangle here. */
	return closest_on_sliver(p, a, b, c, ap, sab, sac, sap, feature);
}

/* ---- validation ------------------------------------------------------------------------------ */

#define EDGE_EMPTY UINT32_MAX
#define EDGE_DUP   (1u << 31)

static uint64_t edge_key(const uint32_t* tri, uint32_t h) {
	const uint32_t base = h - h % 3;
	return (uint64_t)tri[h] << 32 | tri[base + (h % 3 + 1) % 3];
}

static uint32_t edge_hash(uint64_t key, int bits) { return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - bits)); }

/* The slot of `key` in the table of directed half-edges, or the empty slot where it would go. */
static uint32_t edge_find(const uint32_t* table, int bits, const uint32_t* tri, uint64_t key) {
	const uint32_t mask = (1u << bits) - 1;
	uint32_t pos = edge_hash(key, bits);
	while (table[pos] != EDGE_EMPTY && edge_key(tri, table[pos] & ~EDGE_DUP) != key) pos = (pos + 1) & mask;
	return pos;
}

/* Every directed edge a->b of a closed mesh occurs once, and so does b->a: then every edge has
 * exactly two triangles, along it in opposite directions. The half-edges are checked in
 * triangle order and the first bad one is named. */
static pbd_status check_closed(pbd_world* w, const pbd_trimesh* m) {
	const uint32_t* tri = m->triangles;
	const uint32_t nh = 3 * m->triangle_count;
	int bits = 2;
	while (((size_t)1 << bits) < 2 * (size_t)nh) ++bits;
	const size_t slots = (size_t)1 << bits, bytes = slots * sizeof(uint32_t);
	uint32_t* table = (uint32_t*)pbd_alloc(&w->mem, bytes);
	if (!table)
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_collider_create: out of memory checking the mesh's edges");
	memset(table, 0xFF, bytes);
	for (uint32_t h = 0; h < nh; ++h) {
		const uint32_t pos = edge_find(table, bits, tri, edge_key(tri, h));
		if (table[pos] == EDGE_EMPTY)
			table[pos] = h;
		else
			table[pos] |= EDGE_DUP;
	}
	pbd_status st = PBD_OK;
	for (uint32_t h = 0; h < nh && st == PBD_OK; ++h) {
		const uint64_t key = edge_key(tri, h), rev = (key << 32) | (key >> 32);
		const uint32_t own = table[edge_find(table, bits, tri, key)];
		const uint32_t other = table[edge_find(table, bits, tri, rev)];
		uint64_t dup = 0;
		uint32_t first = 0;
		if (own & EDGE_DUP) {
			dup = key;
			first = own & ~EDGE_DUP;
		} else if (other == EDGE_EMPTY) {
			st = pbd_fail(w, PBD_ERR_DEGENERATE,
			              "pbd_collider_create: closed mesh: the edge (%u, %u) of triangle %u has no triangle on its "
			              "other side (running from %u to %u): the mesh is not closed",
			              (uint32_t)(key >> 32), (uint32_t)key, h / 3, (uint32_t)key, (uint32_t)(key >> 32));
			break;
		} else if (other & EDGE_DUP) {
			dup = rev;
			first = other & ~EDGE_DUP;
		} else {
			continue;
		}
		uint32_t second = first + 1;
		while (second < nh && edge_key(tri, second) != dup) ++second;
		st =
		    pbd_fail(w, PBD_ERR_DEGENERATE,
		             "pbd_collider_create: closed mesh: triangles %u and %u both run along the edge (%u, %u) from "
		             "vertex %u to %u: the winding is inconsistent or the edge has more than two triangles",
		             first / 3, second / 3, (uint32_t)(dup >> 32), (uint32_t)dup, (uint32_t)(dup >> 32), (uint32_t)dup);
	}
	pbd_free(&w->mem, table, bytes);
	return st;
}

/* Six times the enclosed volume, in double and in units of 2^e (the coordinates' scale), so
 * that neither the products nor the sum can overflow. */
static double enclosed_volume6(const pbd_trimesh* m, int e) {
	const pbd_vec3 o = m->vertices[m->triangles[0]];
	double v = 0;
	for (uint32_t t = 0; t < m->triangle_count; ++t) {
		double q[3][3];
		for (int k = 0; k < 3; ++k) {
			const pbd_vec3 d =
			    pbd_shape_ldexp_v3(pbd_v3_sub(m->vertices[m->triangles[3 * (size_t)t + (size_t)k]], o), e);
			q[k][0] = (double)d.x;
			q[k][1] = (double)d.y;
			q[k][2] = (double)d.z;
		}
		v += q[0][0] * (q[1][1] * q[2][2] - q[1][2] * q[2][1]) - q[0][1] * (q[1][0] * q[2][2] - q[1][2] * q[2][0]) +
		     q[0][2] * (q[1][0] * q[2][1] - q[1][1] * q[2][0]);
	}
	return v;
}

static pbd_status mesh_validate(pbd_world* w, pbd_collider_def* def) {
	const pbd_trimesh* m = &def->shape.mesh;
	if (!m->vertices || !m->triangles)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_collider_create: mesh vertices or triangles is NULL");
	if (m->vertex_count < 1 || m->triangle_count < 1)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT,
		                "pbd_collider_create: mesh needs vertex_count >= 1 and triangle_count >= 1 (got %u, %u)",
		                m->vertex_count, m->triangle_count);
	if (m->vertex_count > MESH_MAX_VERTICES || m->triangle_count > MESH_MAX_TRIANGLES)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_collider_create: mesh vertex_count %u or triangle_count %u exceeds %u or %u",
		                m->vertex_count, m->triangle_count, MESH_MAX_VERTICES, MESH_MAX_TRIANGLES);
	if (layout_of(m->vertex_count, m->triangle_count, m->closed).total > SIZE_MAX / 2)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_collider_create: mesh of %u vertices and %u triangles needs more memory than this "
		                "platform addresses",
		                m->vertex_count, m->triangle_count);
	/* The same bound as the other shapes' on sizes and margin: the stage may square a size plus
	 * the margin, and the queries then never overflow for points within the bound. */
	const pbd_real cap = PBD_SQRT(PBD_REAL_MAX) / 4;
	if (!(def->margin <= cap))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_collider_create: mesh margin %.9g exceeds %g for this precision",
		                (double)def->margin, (double)cap);
	pbd_real extent = 0;
	for (uint32_t i = 0; i < m->vertex_count; ++i) {
		const pbd_vec3 p = m->vertices[i];
		if (!pbd_v3_is_finite(p))
			return pbd_fail(w, PBD_ERR_NOT_FINITE, "pbd_collider_create: mesh vertex %u is not finite", i);
		if (!(pbd_shape_max_abs(p) <= cap))
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
			                "pbd_collider_create: mesh vertex %u (%.9g, %.9g, %.9g) exceeds %g for this precision", i,
			                (double)p.x, (double)p.y, (double)p.z, (double)cap);
		extent = PBD_FMAX(extent, pbd_shape_max_abs(p));
	}
	for (uint32_t t = 0; t < m->triangle_count; ++t) {
		const uint32_t* v = m->triangles + 3 * (size_t)t;
		for (int k = 0; k < 3; ++k)
			if (v[k] >= m->vertex_count)
				return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
				                "pbd_collider_create: mesh triangle %u: vertex index %u out of range (vertex_count %u)",
				                t, v[k], m->vertex_count);
		if (m->closed && (v[0] == v[1] || v[1] == v[2] || v[0] == v[2]))
			return pbd_fail(w, PBD_ERR_DEGENERATE,
			                "pbd_collider_create: closed mesh triangle %u repeats a vertex (%u, %u, %u)", t, v[0], v[1],
			                v[2]);
	}
	if (!m->closed) return PBD_OK;
	const pbd_status st = check_closed(w, m);
	if (st != PBD_OK) return st;
	const int e = extent > 0 ? -pbd_shape_exponent(extent) : 0;
	const double v6 = enclosed_volume6(m, e);
	if (v6 < 0)
		return pbd_fail(w, PBD_ERR_DEGENERATE,
		                "pbd_collider_create: closed mesh encloses a negative volume: it is wound inside out "
		                "(clockwise seen from outside); reverse its triangles");
	if (!(v6 > 0)) return pbd_fail(w, PBD_ERR_DEGENERATE, "pbd_collider_create: closed mesh encloses no volume");
	return PBD_OK;
}

/* ---- build ------------------------------------------------------------------------------------ */

static size_t mesh_data_size(const pbd_collider_def* def) {
	const pbd_trimesh* m = &def->shape.mesh;
	return (size_t)layout_of(m->vertex_count, m->triangle_count, m->closed).total;
}

static void triangle_box(const void* ctx, uint32_t t, pbd_vec3* lo, pbd_vec3* hi) {
	const mesh_view* m = (const mesh_view*)ctx;
	const pbd_vec3 a = vertex_of(m, t, 0), b = vertex_of(m, t, 1), c = vertex_of(m, t, 2);
	*lo =
	    pbd_v3(PBD_FMIN(a.x, PBD_FMIN(b.x, c.x)), PBD_FMIN(a.y, PBD_FMIN(b.y, c.y)), PBD_FMIN(a.z, PBD_FMIN(b.z, c.z)));
	*hi =
	    pbd_v3(PBD_FMAX(a.x, PBD_FMAX(b.x, c.x)), PBD_FMAX(a.y, PBD_FMAX(b.y, c.y)), PBD_FMAX(a.z, PBD_FMAX(b.z, c.z)));
}

static pbd_vec3 face_unit_or_zero(const mesh_view* m, uint32_t t) {
	pbd_vec3 n = pbd_v3(0, 0, 0);
	face_normal(vertex_of(m, t, 0), vertex_of(m, t, 1), vertex_of(m, t, 2), &n);
	return n;
}

static pbd_vec3 unit_or_zero(pbd_vec3 v) {
	pbd_vec3 u = pbd_v3(0, 0, 0);
	pbd_shape_unit(v, &u);
	return u;
}

/* Angle-weighted vertex pseudonormals and edge pseudonormals (the sum of the two faces' unit
 * normals), unit or zero. The edges are paired through a hash table of undirected edges kept
 * in `scratch` (at least 6 nt uint32 slots), which the caller clears afterwards. */
static void build_pseudonormals(const mesh_view* m, pbd_vec3* vpn, pbd_vec3* epn, uint32_t* scratch,
                                size_t scratch_slots) {
	for (uint32_t t = 0; t < m->nt; ++t) {
		const pbd_vec3 n = face_unit_or_zero(m, t);
		for (int k = 0; k < 3; ++k) {
			const pbd_vec3 p = vertex_of(m, t, k), q = vertex_of(m, t, (k + 1) % 3), r = vertex_of(m, t, (k + 2) % 3);
			pbd_vec3 e1 = pbd_v3_sub(q, p), e2 = pbd_v3_sub(r, p);
			const pbd_real s = PBD_FMAX(pbd_shape_max_abs(e1), pbd_shape_max_abs(e2));
			if (s > 0) {
				const int e = -pbd_shape_exponent(s);
				e1 = pbd_shape_ldexp_v3(e1, e);
				e2 = pbd_shape_ldexp_v3(e2, e);
				const pbd_vec3 x = pbd_v3_cross(e1, e2);
				const double angle = atan2((double)pbd_v3_length(x), (double)pbd_v3_dot(e1, e2));
				pbd_vec3* acc = &vpn[m->tri[3 * (size_t)t + (size_t)k]];
				*acc = pbd_v3_add(*acc, pbd_v3_scale(n, (pbd_real)angle));
			}
			epn[3 * (size_t)t + (size_t)k] = n;
		}
	}
	for (uint32_t i = 0; i < m->nv; ++i) vpn[i] = unit_or_zero(vpn[i]);

	int bits = 2;
	while (((size_t)1 << bits) < 3 * (size_t)m->nt) ++bits;
	PBD_ASSERT(((size_t)1 << bits) <= scratch_slots);
	(void)scratch_slots;
	const uint32_t mask = (1u << bits) - 1;
	memset(scratch, 0xFF, ((size_t)1 << bits) * sizeof(uint32_t));
	for (uint32_t h = 0; h < 3 * m->nt; ++h) {
		const uint64_t key = edge_key(m->tri, h);
		const uint64_t ukey = (key >> 32) < (key & 0xFFFFFFFFu) ? key : (key << 32) | (key >> 32);
		uint32_t pos = edge_hash(ukey, bits);
		for (;;) {
			const uint32_t g = scratch[pos];
			if (g == EDGE_EMPTY) {
				scratch[pos] = h;
				break;
			}
			const uint64_t gk = edge_key(m->tri, g);
			const uint64_t gu = (gk >> 32) < (gk & 0xFFFFFFFFu) ? gk : (gk << 32) | (gk >> 32);
			if (gu == ukey) {
				/* The second triangle of the edge: both halves get the sum of the two normals. */
				const pbd_vec3 sum = unit_or_zero(pbd_v3_add(epn[g], epn[h]));
				epn[g] = sum;
				epn[h] = sum;
				break;
			}
			pos = (pos + 1) & mask;
		}
	}
}

/* Whether edge k of triangle t is listed by mesh_edges: once (from the triangle where it runs up in
 * index), convex and sharp; from the face normal and the edge pseudonormal (see edge_visit). */
static bool listed_edge(const mesh_view* m, uint32_t t, int k) {
	const uint32_t i = m->tri[3 * (size_t)t + (size_t)k], j = m->tri[3 * (size_t)t + (size_t)(k + 1) % 3];
	if (i >= j) return false;
	const pbd_vec3 a = m->v[i], b = m->v[j], n1 = m->fn[t], e = m->epn[3 * (size_t)t + (size_t)k];
	const pbd_vec3 n2 = pbd_v3_sub(pbd_v3_scale(e, 2 * pbd_v3_dot(n1, e)), n1);
	if (!(pbd_v3_dot(n1, e) > 0) || !(pbd_v3_dot(n1, n2) < PBD_SHARP_EDGE_COS)) return false;
	return pbd_v3_dot(pbd_v3_cross(n1, n2), pbd_v3_sub(b, a)) > 0;
}

/* The triangles' flags (the view's face normals and pseudonormals built). The first triangle of
 * each vertex is found through `scratch` (slots for nv uint32), which the caller clears afterwards;
 * with too few slots every triangle lists all its corners (the same vertex may then come more than
 * once, as mesh_corners allows). */
static void build_flags(const mesh_view* m, uint8_t* flags, uint32_t* scratch, size_t slots) {
	const bool owners = slots >= m->nv;
	if (owners) memset(scratch, 0xFF, (size_t)m->nv * sizeof(uint32_t));
	for (uint32_t t = 0; t < m->nt; ++t) {
		uint8_t f = 0;
		for (int k = 0; k < 3; ++k) {
			const uint32_t i = m->tri[3 * (size_t)t + (size_t)k];
			if (!owners || scratch[i] == UINT32_MAX) f |= (uint8_t)(TRI_CORNER << k);
			if (owners && scratch[i] == UINT32_MAX) scratch[i] = t;
			if (m->closed && listed_edge(m, t, k)) f |= (uint8_t)(TRI_EDGE << k);
		}
		flags[t] = f;
	}
}

static void mesh_build(pbd_collider_def* def, void* data) {
	pbd_trimesh* m = &def->shape.mesh;
	const mesh_layout l = layout_of(m->vertex_count, m->triangle_count, m->closed);
	char* base = (char*)data;
	const size_t vbytes = (size_t)m->vertex_count * sizeof(pbd_vec3);
	const size_t tbytes = 3 * (size_t)m->triangle_count * sizeof(uint32_t);
	/* memmove and the order of the writes let the def already point into `data`. */
	memmove(base, m->vertices, vbytes);
	memset(base + vbytes, 0, (size_t)l.tri - vbytes);
	memmove(base + l.tri, m->triangles, tbytes);
	memset(base + l.tri + tbytes, 0, (size_t)(l.total - l.tri) - tbytes);
	m->vertices = (const pbd_vec3*)(const void*)base;
	m->triangles = (const uint32_t*)(const void*)(base + l.tri);

	const mesh_view v = view_of(def);
	pbd_bvh_node* nodes = (pbd_bvh_node*)(void*)(base + l.nodes);
	const size_t node_bytes = (size_t)(l.order - l.nodes);
	if (m->closed) {
		build_pseudonormals(&v, (pbd_vec3*)(void*)(base + l.vpn), (pbd_vec3*)(void*)(base + l.epn),
		                    (uint32_t*)(void*)nodes, node_bytes / sizeof(uint32_t));
		memset(nodes, 0, node_bytes);
	}
	pbd_vec3* fn = (pbd_vec3*)(void*)(base + l.fn);
	for (uint32_t t = 0; t < m->triangle_count; ++t) fn[t] = face_unit_or_zero(&v, t);
	build_flags(&v, (uint8_t*)(void*)(base + l.flags), (uint32_t*)(void*)nodes, node_bytes / sizeof(uint32_t));
	memset(nodes, 0, node_bytes);
	pbd_bvh_build(nodes, (uint32_t*)(void*)(base + l.order), m->triangle_count, triangle_box, &v);
}

/* ---- distance ------------------------------------------------------------------------------- */

typedef struct near_ctx {
	const mesh_view* m;
	pbd_vec3 p;
	pbd_real scale;
} near_ctx;

static pbd_real near_dist2(void* vctx, uint32_t t) {
	const near_ctx* c = (const near_ctx*)vctx;
	const pbd_vec3 p = c->p;
	const pbd_vec3 a = pbd_v3_scale(vertex_of(c->m, t, 0), c->scale), b = pbd_v3_scale(vertex_of(c->m, t, 1), c->scale),
	               cc = pbd_v3_scale(vertex_of(c->m, t, 2), c->scale);
	int f;
	const pbd_vec3 q = closest_on_triangle(p, a, b, cc, &f);
	const pbd_vec3 d = pbd_v3_sub(p, q);
	return pbd_v3_dot(d, d);
}

/* The tolerance under which the direction from the nearest point of triangle abc is noise. */
static pbd_real direction_tolerance(pbd_vec3 a, pbd_vec3 b, pbd_vec3 c) {
	return DIR_TOL * (max_abs(a) + pbd_shape_max(max_abs(pbd_v3_sub(b, a)), max_abs(pbd_v3_sub(c, a))));
}

/* The signed distance from p (scaled by 2^-e, scale) to triangle t, the nearest one, and the
 * normal there. */
static pbd_real distance_from(const mesh_view* mp, pbd_vec3 p, int e, pbd_real scale, uint32_t t, pbd_vec3* normal) {
	const mesh_view m = *mp;
	const pbd_vec3 a = pbd_v3_scale(vertex_of(&m, t, 0), scale), b = pbd_v3_scale(vertex_of(&m, t, 1), scale),
	               c = pbd_v3_scale(vertex_of(&m, t, 2), scale);
	int f;
	const pbd_vec3 q = closest_on_triangle(p, a, b, c, &f);
	const pbd_vec3 diff = pbd_v3_sub(p, q);
	pbd_vec3 u = pbd_v3(1, 0, 0), fn = pbd_v3(0, 0, 0);
	const pbd_real len = pbd_shape_unit(diff, &u);
	/* The stored normal is face_normal's of the unscaled triangle; a scaled one (by a power of two)
	 * may lose bits on the way, and is computed. */
	if (e == 0)
		fn = m.fn[t];
	else
		face_normal(a, b, c, &fn);
	const bool has_face = fn.x != 0 || fn.y != 0 || fn.z != 0;
	const bool reliable = len > direction_tolerance(a, b, c);
	pbd_real sign = 1;
	pbd_vec3 n;
	if (m.closed) {
		const pbd_vec3 pn =
		    f == FEAT_FACE ? fn
		                   : (f < 3 ? m.vpn[m.tri[3 * (size_t)t + (size_t)f]] : m.epn[3 * (size_t)t + (size_t)(f - 3)]);
		sign = pbd_v3_dot(diff, pn) < 0 ? -1 : 1;
		if (f == FEAT_FACE && has_face)
			n = fn;
		else if (reliable)
			n = pbd_v3_scale(u, sign);
		else if (pn.x != 0 || pn.y != 0 || pn.z != 0)
			n = pn;
		else
			n = has_face ? fn : u;
	} else {
		const pbd_vec3 side = has_face && pbd_v3_dot(diff, fn) < 0 ? pbd_v3_scale(fn, -1) : fn;
		if (has_face && (f == FEAT_FACE || !reliable))
			n = side;
		else
			n = u;
	}
	*normal = n;
	pbd_real dist = len;
	if (e > 0) dist = len > pbd_shape_ldexp(PBD_REAL_MAX, -e) ? PBD_REAL_MAX : pbd_shape_ldexp(len, e);
	return sign * dist;
}

/* Points farther out than the vertices' bound are scaled down by a power of two (the mesh with
 * them), so that no squared distance overflows; the distance is scaled back, saturating. A point
 * that is not finite (a particle whose state overflowed, a step the world then undoes) has no
 * nearest triangle: PBD_REAL_MAX, outside, no contact. */
static pbd_real mesh_distance(const pbd_collider_def* def, pbd_vec3 p, pbd_vec3* normal) {
	*normal = pbd_v3(1, 0, 0);
	if (!pbd_v3_is_finite(p)) return PBD_REAL_MAX;
	const mesh_view m = view_of(def);
	const pbd_real cap = PBD_SQRT(PBD_REAL_MAX) / 4;
	int e = 0;
	pbd_real scale = 1;
	const pbd_real mp = max_abs(p);
	if (mp > cap) {
		e = pbd_shape_exponent(mp) - (pbd_shape_exponent(cap) - 1);
		scale = pbd_shape_ldexp(1, -e);
		p = pbd_shape_ldexp_v3(p, -e);
	}
	near_ctx ctx = {&m, p, scale};
	pbd_real d2;
	const uint32_t t = pbd_bvh_nearest(m.nodes, m.order, p, scale, near_dist2, &ctx, &d2);
	/* A finite p, its squares kept finite by the scaling, always finds one; the test keeps an
	 * answer that was not found from ever indexing the triangles. */
	if (t == PBD_BVH_NONE || t >= m.nt) return PBD_REAL_MAX;
	return distance_from(&m, p, e, scale, t, normal);
}

/* ---- kept lists ---------------------------------------------------------------------------- */

/* The room a kept list leaves around p: how much nearer than its radius a primitive's distance
 * from p must be to prove that no primitive outside the list is as near, less the roundings of
 * the boxes and the closest points (PBD_CONTACT_TOLERANCE, far above them, and a part of the
 * magnitudes for points far from the origin). */
static pbd_real list_room(const pbd_near_list* l, pbd_vec3 p) {
	const pbd_real slack = PBD_CONTACT_TOLERANCE + 64 * MESH_EPS * (max_abs(p) + max_abs(l->centre) + l->radius);
	return l->radius - pbd_v3_length(pbd_v3_sub(p, l->centre)) - slack;
}

typedef struct gather_ctx {
	const mesh_view* m;
	near_ctx near;
	pbd_real reach2; /* beyond this squared distance from the centre a triangle is left out */
	uint32_t* ids;
	uint32_t n, cap;
} gather_ctx;

static void gather_visit(void* vctx, uint32_t t) {
	gather_ctx* c = (gather_ctx*)vctx;
	if (c->n > c->cap || near_dist2(&c->near, t) > c->reach2) return;
	if (c->n < c->cap) c->ids[c->n] = t;
	c->n++;
}

/* The triangles whose boxes meet the cube around the ball, less those whose nearest point lies
 * beyond the ball by more than the rounding of the closest point. */
static uint32_t mesh_near(const pbd_collider_def* def, pbd_vec3 centre, pbd_real radius, uint32_t* ids, uint32_t cap) {
	const pbd_real limit = PBD_SQRT(PBD_REAL_MAX) / 16;
	if (!pbd_v3_is_finite(centre) || !(radius >= 0) || !(max_abs(centre) + radius < limit)) return PBD_NEAR_NONE;
	const mesh_view m = view_of(def);
	const pbd_real reach = radius + PBD_CONTACT_TOLERANCE + 64 * MESH_EPS * (max_abs(centre) + radius);
	gather_ctx c = {&m, {&m, centre, 1}, reach * reach, ids, 0, cap};
	const pbd_vec3 g = pbd_v3(radius, radius, radius);
	pbd_bvh_overlap(m.nodes, m.order, pbd_v3_sub(centre, g), pbd_v3_add(centre, g), gather_visit, &c);
	return c.n <= cap ? c.n : PBD_NEAR_NONE;
}

/* mesh_distance over the list: the nearest of its triangles, where it is nearer than any other
 * can be (the lowest index among equals, as the hierarchy picks). */
static bool mesh_distance_among(const pbd_collider_def* def, const pbd_near_list* l, pbd_vec3 p, pbd_real* dist,
                                pbd_vec3* normal) {
	const pbd_real room = list_room(l, p);
	if (!(room > 0) || !pbd_v3_is_finite(p)) return false;
	const mesh_view m = view_of(def);
	near_ctx ctx = {&m, p, 1};
	pbd_real bd2 = PBD_REAL_MAX;
	uint32_t best = PBD_BVH_NONE;
	for (uint32_t k = 0; k < l->n; ++k) {
		const uint32_t id = l->ids[k];
		const pbd_real d2 = near_dist2(&ctx, id);
		if (d2 < bd2 || (d2 == bd2 && id < best)) bd2 = d2, best = id;
	}
	if (best == PBD_BVH_NONE || !(bd2 < room * room)) return false;
	*dist = distance_from(&m, p, 0, 1, best, normal);
	return true;
}

/* ---- sweep --------------------------------------------------------------------------------- */

typedef struct sweep_ctx {
	const mesh_view* m;
	pbd_vec3 p0, u; /* the segment p0 + s u, s in [0, 1] */
	pbd_real r, pad;
} sweep_ctx;

/* The first s at which p0 + s u comes within r of triangle t, or 2. The triangle grown by r is
 * the union of a prism (the triangle thickened by r on both sides, its sides widened by
 * SIDE_TOL so that neighbours overlap), three finite cylinders around the edges and three balls
 * at the corners, all convex: the first touch is the earliest entry into one of them. A
 * cylinder's entry counts only within its edge's span; past it the point can only come in
 * through a flat end, which lies in a ball. A degenerate triangle has no prism and is covered
 * by the rest. The segment is first clipped to the triangle's grown box and expressed relative
 * to its first corner in units of its size (a power of two, exact). */
static pbd_real sweep_hit(void* vctx, uint32_t t, pbd_real best) {
	const sweep_ctx* c = (const sweep_ctx*)vctx;
	const pbd_vec3 A = vertex_of(c->m, t, 0), B = vertex_of(c->m, t, 1), C = vertex_of(c->m, t, 2);
	const pbd_real g = c->r + c->pad;
	const pbd_vec3 lo = pbd_v3(PBD_FMIN(A.x, PBD_FMIN(B.x, C.x)) - g, PBD_FMIN(A.y, PBD_FMIN(B.y, C.y)) - g,
	                           PBD_FMIN(A.z, PBD_FMIN(B.z, C.z)) - g);
	const pbd_vec3 hi = pbd_v3(PBD_FMAX(A.x, PBD_FMAX(B.x, C.x)) + g, PBD_FMAX(A.y, PBD_FMAX(B.y, C.y)) + g,
	                           PBD_FMAX(A.z, PBD_FMAX(B.z, C.z)) + g);
	/* Clipped to [0, 1], not to `best`: a triangle's answer must not depend on which came before
	 * it, so that every order of the same triangles (the hierarchy's, a kept list's) gives the
	 * same bits. One that enters its box after `best` cannot come first. */
	pbd_real s0 = 0, s1 = 1;
	if (!pbd_clip_box(c->p0, c->u, lo, hi, &s0, &s1) || s0 > best) return 2;
	const pbd_vec3 AB = pbd_v3_sub(B, A), AC = pbd_v3_sub(C, A);
	const pbd_real size = PBD_FMAX(PBD_FMAX(pbd_shape_max_abs(AB), pbd_shape_max_abs(AC)), c->r);
	if (!(size > 0)) return 2; /* a point, and no radius: only an exact pass touches it */
	const int e = -pbd_shape_exponent(size);
	const pbd_vec3 ab = pbd_shape_ldexp_v3(AB, e), ac = pbd_shape_ldexp_v3(AC, e);
	const pbd_vec3 q0 = pbd_shape_ldexp_v3(pbd_v3_sub(pbd_v3_add(c->p0, pbd_v3_scale(c->u, s0)), A), e);
	const pbd_vec3 q1 = pbd_shape_ldexp_v3(pbd_v3_sub(pbd_v3_add(c->p0, pbd_v3_scale(c->u, s1)), A), e);
	const pbd_vec3 w = pbd_v3_sub(q1, q0);
	const pbd_real rs = pbd_shape_ldexp(c->r, e), rr = rs * rs;
	const pbd_vec3 corner[3] = {pbd_v3(0, 0, 0), ab, ac};
	const pbd_vec3 edge[3] = {ab, pbd_v3_sub(ac, ab), pbd_v3_scale(ac, -1)};

	pbd_real sigma = 2;
	pbd_vec3 nu;
	if (pbd_shape_unit(pbd_v3_cross(ab, ac), &nu) > PBD_R(1.0) / PBD_R(1048576.0)) {
		pbd_real t0 = 0, t1 = 1;
		bool in = pbd_clip_slab(pbd_v3_dot(nu, q0), pbd_v3_dot(nu, w), -rs, rs, &t0, &t1);
		for (int k = 0; k < 3 && in; ++k) {
			const pbd_vec3 inward = pbd_v3_cross(nu, edge[k]);
			const pbd_real tol = SIDE_TOL * pbd_v3_length(inward);
			in = pbd_clip_slab(pbd_v3_dot(inward, pbd_v3_sub(q0, corner[k])), pbd_v3_dot(inward, w), -tol, PBD_REAL_MAX,
			                   &t0, &t1);
		}
		if (in) sigma = t0;
	}
	for (int k = 0; k < 3; ++k) {
		const pbd_vec3 E = edge[k];
		const pbd_real ee = pbd_v3_dot(E, E);
		if (!(ee > PBD_R(1.0) / PBD_R(1099511627776.0))) continue; /* 2^-40: the balls cover it */
		const pbd_vec3 f = pbd_v3_sub(q0, corner[k]);
		const pbd_vec3 fp = pbd_v3_sub(f, pbd_v3_scale(E, pbd_v3_dot(f, E) / ee));
		const pbd_vec3 wp = pbd_v3_sub(w, pbd_v3_scale(E, pbd_v3_dot(w, E) / ee));
		const pbd_real s = pbd_shape_ball_entry(fp, wp, rr);
		if (!(s < sigma)) continue;
		const pbd_real axial = pbd_v3_dot(pbd_v3_add(f, pbd_v3_scale(w, s)), E);
		if (axial >= 0 && axial <= ee) sigma = s;
	}
	for (int k = 0; k < 3; ++k) sigma = pbd_shape_min(sigma, pbd_shape_ball_entry(pbd_v3_sub(q0, corner[k]), w, rr));
	if (!(sigma <= 1)) return 2;
	return s0 + sigma * (s1 - s0);
}

/* The segment is clipped to the mesh's box grown by the radius (so that the arithmetic sees
 * only points near the mesh), the hierarchy gives the triangle reached first, and the normal
 * comes from its nearest point to the point at t: the direction from it, or where the radius is
 * too small for that direction to be reliable, the face normal turned against the motion. */
/* mesh_sweep_from over the hierarchy (l NULL) or over a kept list; *known false where the list
 * cannot tell. */
static bool sweep_with(const pbd_collider_def* def, const pbd_near_list* l, pbd_vec3 a, pbd_vec3 b, pbd_real radius,
                       pbd_real start, bool* known, pbd_real* t, pbd_vec3* normal) {
	*known = true;
	if (!(radius >= 0) || !pbd_v3_is_finite(a) || !pbd_v3_is_finite(b) || !(start > radius)) return false;
	const pbd_vec3 d = pbd_v3_sub(b, a);
	if ((d.x == 0 && d.y == 0 && d.z == 0) || !pbd_v3_is_finite(d)) return false;
	const mesh_view m = view_of(def);
	const pbd_bvh_node* root = &m.nodes[0];
	const pbd_real size = pbd_shape_max_abs(pbd_v3_sub(root->hi, root->lo));
	/* Keeps the boxes' rounding from cutting into the grown triangles. */
	const pbd_real pad = (size + radius) * PBD_R(1.0) / PBD_R(65536.0);
	const pbd_real g = radius + pad;
	pbd_real t0 = 0, t1 = 1;
	if (!pbd_clip_box(a, d, pbd_v3_sub(root->lo, pbd_v3(g, g, g)), pbd_v3_add(root->hi, pbd_v3(g, g, g)), &t0, &t1))
		return false;
	const pbd_vec3 p0 = t0 > 0 ? pbd_v3_add(a, pbd_v3_scale(d, t0)) : a;
	const pbd_vec3 p1 = t1 < 1 ? pbd_v3_add(a, pbd_v3_scale(d, t1)) : b;
	sweep_ctx ctx = {&m, p0, pbd_v3_sub(p1, p0), radius, pad};
	pbd_real s = 2;
	uint32_t tri = PBD_BVH_NONE;
	if (l) {
		/* Every point the grown path reaches lies within the list's ball, and a triangle it
		 * touches is on the list. */
		if (!(g < list_room(l, p0) && g < list_room(l, p1))) {
			*known = false;
			return false;
		}
		for (uint32_t k = 0; k < l->n; ++k) {
			const uint32_t id = l->ids[k];
			const pbd_real h = sweep_hit(&ctx, id, s);
			if (h <= 1 && (h < s || (h == s && id < tri))) s = h, tri = id;
		}
	} else {
		tri = pbd_bvh_first_hit(m.nodes, m.order, p0, p1, g, sweep_hit, &ctx, &s);
	}
	if (tri == PBD_BVH_NONE || tri >= m.nt) return false;
	/* The normal from the nearest point of the triangle to the point at s. */
	*t = pbd_shape_min(t0 + s * (t1 - t0), 1);
	const pbd_vec3 x = pbd_v3_add(p0, pbd_v3_scale(ctx.u, s));
	const pbd_vec3 A = vertex_of(&m, tri, 0), B = vertex_of(&m, tri, 1), C = vertex_of(&m, tri, 2);
	int f;
	const pbd_vec3 q = closest_on_triangle(x, A, B, C, &f);
	pbd_vec3 u = pbd_v3(0, 0, 0), fn;
	if (pbd_shape_unit(pbd_v3_sub(x, q), &u) > direction_tolerance(A, B, C)) {
		*normal = u;
	} else if ((fn = m.fn[tri]).x != 0 || fn.y != 0 || fn.z != 0) {
		*normal = pbd_v3_dot(fn, d) > 0 ? pbd_v3_scale(fn, -1) : fn;
	} else {
		pbd_shape_unit(pbd_v3_scale(d, -1), normal);
	}
	return true;
}

static bool mesh_sweep_from(const pbd_collider_def* def, pbd_vec3 a, pbd_vec3 b, pbd_real radius, pbd_real start,
                            pbd_real* t, pbd_vec3* normal) {
	bool known;
	return sweep_with(def, NULL, a, b, radius, start, &known, t, normal);
}

static bool mesh_sweep_among(const pbd_collider_def* def, const pbd_near_list* l, pbd_vec3 a, pbd_vec3 b,
                             pbd_real radius, pbd_real start, bool* hit, pbd_real* t, pbd_vec3* normal) {
	bool known;
	*hit = sweep_with(def, l, a, b, radius, start, &known, t, normal);
	return known;
}

static bool mesh_sweep(const pbd_collider_def* def, pbd_vec3 a, pbd_vec3 b, pbd_real radius, pbd_real* t,
                       pbd_vec3* normal) {
	pbd_vec3 n0;
	return mesh_sweep_from(def, a, b, radius, mesh_distance(def, a, &n0), t, normal);
}

/* ---- bounds and drawing ------------------------------------------------------------------------ */

/* The box of the vertices the triangles use (the hierarchy's root). */
static bool mesh_bounds(const pbd_collider_def* def, pbd_vec3* lo, pbd_vec3* hi) {
	const mesh_view m = view_of(def);
	*lo = m.nodes[0].lo;
	*hi = m.nodes[0].hi;
	return true;
}

static void mesh_triangles(const pbd_collider_def* def, pbd_vec3* vertex_out, uint32_t vertex_cap,
                           uint32_t* triangle_out, uint32_t triangle_cap, uint32_t* vertices, uint32_t* triangles) {
	const pbd_trimesh* m = &def->shape.mesh;
	if (vertex_out && vertex_cap)
		memcpy(vertex_out, m->vertices,
		       (size_t)(vertex_cap < m->vertex_count ? vertex_cap : m->vertex_count) * sizeof(pbd_vec3));
	if (triangle_out && triangle_cap)
		memcpy(triangle_out, m->triangles,
		       3 * (size_t)(triangle_cap < m->triangle_count ? triangle_cap : m->triangle_count) * sizeof(uint32_t));
	*vertices = m->vertex_count;
	*triangles = m->triangle_count;
}

/* ---- corners -------------------------------------------------------------------------------- */

typedef struct corner_ctx {
	const mesh_view* m;
	pbd_vec3 lo, hi;
	pbd_corner_fn emit;
	void* ctx;
} corner_ctx;

static void corner_visit(void* vctx, uint32_t t) {
	const corner_ctx* c = (const corner_ctx*)vctx;
	const uint8_t f = c->m->flags[t];
	for (int k = 0; k < 3; ++k) {
		if (!(f & (TRI_CORNER << k))) continue;
		const uint32_t i = c->m->tri[3 * (size_t)t + (size_t)k];
		const pbd_vec3 p = c->m->v[i];
		if ((c->lo.x <= p.x) & (p.x <= c->hi.x) & (c->lo.y <= p.y) & (p.y <= c->hi.y) & (c->lo.z <= p.z) &
		    (p.z <= c->hi.z))
			c->emit(c->ctx, i, p, c->m->closed ? c->m->vpn[i] : pbd_v3(0, 0, 0));
	}
}

/* The vertices in [lo, hi], each from the first triangle that uses it (whose box then meets
 * [lo, hi]: found through the hierarchy); a closed mesh gives its vertex pseudonormals, an open
 * one, two-sided, none. */
static void mesh_corners(const pbd_collider_def* def, pbd_vec3 lo, pbd_vec3 hi, pbd_corner_fn emit, void* ctx) {
	const mesh_view m = view_of(def);
	corner_ctx c = {&m, lo, hi, emit, ctx};
	pbd_bvh_overlap(m.nodes, m.order, lo, hi, corner_visit, &c);
}

/* ---- edges ---------------------------------------------------------------------------------- */

typedef struct edge_ctx {
	const mesh_view* m;
	pbd_vec3 lo, hi;
	pbd_edge_fn emit;
	void* ctx;
} edge_ctx;

/* The other face's normal comes back from the edge pseudonormal e = (n1 + n2) / |n1 + n2| as
 * its mirror image of n1, n2 = 2 (n1 . e) e - n1; the edge is convex where the other face turns
 * away from this one's outside, (n1 x n2) . (b - a) > 0 along the edge a -> b of this face's
 * outward winding. */
static void edge_visit(void* vctx, uint32_t t) {
	const edge_ctx* c = (const edge_ctx*)vctx;
	const uint8_t f = c->m->flags[t];
	if (!(f & (7 * TRI_EDGE))) return;
	for (int k = 0; k < 3; ++k) {
		if (!(f & (TRI_EDGE << k))) continue;
		const uint32_t i = c->m->tri[3 * (size_t)t + (size_t)k], j = c->m->tri[3 * (size_t)t + (size_t)(k + 1) % 3];
		const pbd_vec3 a = c->m->v[i], b = c->m->v[j];
		/* One test of six comparisons, without the branches of short circuits and NaN rules (the
		 * vertices are finite). */
		const pbd_vec3 lo = pbd_v3(pbd_shape_min(a.x, b.x), pbd_shape_min(a.y, b.y), pbd_shape_min(a.z, b.z));
		const pbd_vec3 hi = pbd_v3(pbd_shape_max(a.x, b.x), pbd_shape_max(a.y, b.y), pbd_shape_max(a.z, b.z));
		if ((lo.x > c->hi.x) | (hi.x < c->lo.x) | (lo.y > c->hi.y) | (hi.y < c->lo.y) | (lo.z > c->hi.z) |
		    (hi.z < c->lo.z))
			continue;
		c->emit(c->ctx, 3 * t + (uint32_t)k, a, b, c->m->epn[3 * (size_t)t + (size_t)k]);
	}
}

/* The sharp convex edges of the triangles whose boxes meet [lo, hi] (through the hierarchy) of a
 * closed mesh. An open mesh, two-sided, has no outside to tell a convex edge by: its edges are
 * left to its corners and the cloth's vertices. */
static void mesh_edges(const pbd_collider_def* def, pbd_vec3 lo, pbd_vec3 hi, pbd_edge_fn emit, void* ctx) {
	const mesh_view m = view_of(def);
	if (!m.closed) return;
	edge_ctx c = {&m, lo, hi, emit, ctx};
	pbd_bvh_overlap(m.nodes, m.order, lo, hi, edge_visit, &c);
}

const pbd_shape_ops pbd_shape_mesh_ops = {.name = "mesh",
                                          .validate = mesh_validate,
                                          .distance = mesh_distance,
                                          .sweep = mesh_sweep,
                                          .bounds = mesh_bounds,
                                          .data_size = mesh_data_size,
                                          .build = mesh_build,
                                          .triangles = mesh_triangles,
                                          .corners = mesh_corners,
                                          .edges = mesh_edges,
                                          .sweep_from = mesh_sweep_from,
                                          .near = mesh_near,
                                          .distance_among = mesh_distance_among,
                                          .sweep_among = mesh_sweep_among};
