/* Rounded colliders (spheres and capsules) against the surface triangles of objects, so that a
 * ball smaller than a cloth's spacing cannot slip between its vertices: the particle contacts
 * of contact.c only see vertices. Once per substep, for each triangle near such a collider, the
 * point of the triangle closest to the collider's core (the sphere's centre, the capsule's
 * segment) is found with its barycentric weights b; when it lies off the triangle's vertices,
 * within the collider's radius plus margin, while none of the vertices is, the triangle gets a
 * contact: the point
 * sum_k b_k p_k must stay on the outer side of the plane through core + (radius + margin) n,
 * with n the direction from the core to the point. Each iteration projects it with the
 * vertices' inverse masses weighted by b (the projection of a point interpolated from three
 * particles, as in Bridson et al. 2002's cloth collisions), which keeps the momentum of the
 * three.
 *
 * A core that moves by more than half its thickness relative to a face in a substep (a small ball
 * at 20 m/s, a stretched sheet springing back past a ball) is followed along both paths instead:
 * see rounded_contact. After the first and the last iteration the faces that the constraints
 * moved into a core's way get contacts too (pbd_triangle_contacts_catch_late), as particles do.
 *
 * Shapes with corners (boxes, hulls, meshes, height fields) meet the triangles the same way at
 * their corners, each a core of radius zero: a corner that pokes up under a coarse cloth between
 * its vertices holds the face up. Where the corner lies over the inside of the face, the contact's
 * normal is the face's, turned to the side the solid is not on (the corner's outward direction
 * says which), so that a corner that got through the face in a substep is brought back, not
 * pushed on; beside the face, the direction from the corner to the nearest point of an edge.
 *
 * Their sharp convex edges do the same along a segment, a core of radius zero like a capsule's:
 * a table's edge under a cloth whose vertices hang on both sides of it, far from a corner. The
 * closest pair of the segment and the triangle is found exactly (where the segment passes
 * through, else ends against the triangle and the segment against its sides); apart, the
 * direction between the two points, when it leaves the solid; through the face or touching it,
 * the face's normal, on the side the edge's outward direction gives.
 *
 * Against the shape of a dynamic body the contact is two-way: the body takes its share of each
 * correction at the contact's core point by its generalised inverse mass (model/node.h). Its
 * edges meet faces only apart from them (see edge_contact).
 *
 * Triangles go in chunks of PBD_TRI_CHUNK consecutive indices (a mesh numbers its neighbours
 * close together), each with the box of its vertices; a collider looks only at the triangles of
 * the chunks its box meets. */
#include <stddef.h>
#include <string.h>

#include "collision/collide.h"
#include "collision/self_collision.h"
#include "collision/shape_math.h"
#include "model/node.h"

/* The core of a rounded shape in world coordinates at the pose given: a point or a segment
 * [c0, c1] and the radius around it. False for shapes without one. */
static bool core_of(const pbd_collider* c, pbd_pose pose, pbd_vec3* c0, pbd_vec3* c1, pbd_real* radius) {
	const pbd_collider_def* d = &c->def;
	if (d->type == PBD_SHAPE_SPHERE) {
		*c0 = *c1 = pbd_pose_apply(pose, d->shape.sphere.center);
		*radius = d->shape.sphere.radius;
		return true;
	}
	if (d->type == PBD_SHAPE_CAPSULE) {
		*c0 = pbd_pose_apply(pose, pbd_v3(0, -d->shape.capsule.half_height, 0));
		*c1 = pbd_pose_apply(pose, pbd_v3(0, d->shape.capsule.half_height, 0));
		*radius = d->shape.capsule.radius;
		return true;
	}
	return false;
}

/* The closest points of segment [s0, s1] and triangle (a, b, c): alternating projections, which
 * converge to the closest pair of two convex sets; a few rounds are plenty at contact range. */
static pbd_vec3 closest_pair(pbd_vec3 s0, pbd_vec3 s1, pbd_vec3 a, pbd_vec3 b, pbd_vec3 c, pbd_vec3* on_core,
                             pbd_real bary[3]) {
	pbd_vec3 core = pbd_v3_scale(pbd_v3_add(s0, s1), PBD_R(0.5));
	pbd_vec3 q = pbd_closest_on_triangle(core, a, b, c, bary);
	const bool segment = s0.x != s1.x || s0.y != s1.y || s0.z != s1.z;
	for (int round = 0; segment && round < 8; ++round) {
		core = pbd_v3_add(s0, pbd_v3_scale(pbd_v3_sub(s1, s0), pbd_closest_on_segment(q, s0, s1)));
		q = pbd_closest_on_triangle(core, a, b, c, bary);
	}
	*on_core = core;
	return q;
}

#define PBD_TRI_CHUNK 8u

/* Weights of a point off the vertices: above this, the vertex's own contact does the work. */
#define VERTEX_WEIGHT PBD_R(0.999)

/* The bounds of the search (PBD_COLLISION_MAX_CANDIDATES): what the current triangle examined,
 * the contacts it made and whether it stopped at a bound; the most contacts of the search, and
 * whether it reached them. Where the contacts go: the world's list (o NULL), or block `block`
 * of a stage on the threads, whose end keeps the first `limit` (pbd_block_out_finish). */
typedef struct tri_tally {
	uint32_t examined, kept;
	bool capped;
	uint32_t limit;
	bool full;
	pbd_block_out* o;
	uint32_t block, worker;
} tri_tally;

/* One triangle in the frame of its first vertex's x (so that far from the origin the small
 * numbers keep their precision): the predicted points, their box and the contact thickness of
 * its vertices. */
typedef struct tri_view {
	uint32_t t;
	const uint32_t* v;
	pbd_vec3 o, p[3], lo, hi;
	pbd_vec3 s[3];   /* where the vertices were at the start of the substep (s[0] is 0) */
	pbd_real radius; /* the largest radius of its vertices */
	tri_tally* tally;
	uint32_t body;     /* the dynamic body (slot + 1) of the shape, 0: none */
	uint32_t collider; /* the shape's slot */
	pbd_vec3 to_arm;   /* o less the body's centre: a core point plus this is its lever arm */
	bool plane_off;    /* tests only: no face's plane first (pbd_world's fkeep.plane_off) */
} tri_view;

/* Whether the triangle may examine one more of a shape's features: false, and marked, at a bound. */
static bool examine(const tri_view* tv) {
	tri_tally* k = tv->tally;
	if (k->examined == PBD_COLLISION_MAX_CANDIDATES || k->kept == PBD_COLLISION_MAX_CONTACTS) {
		k->capped = true;
		return false;
	}
	k->examined++;
	return true;
}

/* Comparisons, not fmin/fmax: these run for every triangle near a collider; the coordinates here
 * are finite. */
static inline pbd_vec3 v3_min(pbd_vec3 a, pbd_vec3 b) {
	return pbd_v3(pbd_shape_min(a.x, b.x), pbd_shape_min(a.y, b.y), pbd_shape_min(a.z, b.z));
}
static inline pbd_vec3 v3_max(pbd_vec3 a, pbd_vec3 b) {
	return pbd_v3(pbd_shape_max(a.x, b.x), pbd_shape_max(a.y, b.y), pbd_shape_max(a.z, b.z));
}

/* Whether the box of the segment [r0, r1] grown by thick misses the triangle's box. */
static bool box_far(pbd_vec3 r0, pbd_vec3 r1, pbd_real thick, const tri_view* tv) {
	const pbd_vec3 lo = v3_min(r0, r1), hi = v3_max(r0, r1);
	return lo.x - thick > tv->hi.x || hi.x + thick < tv->lo.x || lo.y - thick > tv->hi.y || hi.y + thick < tv->lo.y ||
	       lo.z - thick > tv->hi.z || hi.z + thick < tv->lo.z;
}

/* Whether one of the triangle's vertices lies within `thick` of the core [r0, r1] (with a band
 * of a tenth of the longest edge: vertices resting on the shape sit at `thick` give or take
 * rounding, and a face between them is no gap). Where a vertex rests on the shape, its own
 * contact holds the surface, and a face contact on top would only fight it over the sagitta of
 * the face. */
static bool vertex_touches(const tri_view* tv, pbd_vec3 r0, pbd_vec3 r1, pbd_real thick) {
	pbd_real edge2 = 0;
	for (int m = 0; m < 3; ++m) {
		const pbd_vec3 e = pbd_v3_sub(tv->p[(m + 1) % 3], tv->p[m]);
		edge2 = PBD_FMAX(edge2, pbd_v3_dot(e, e));
	}
	const pbd_real band = thick + PBD_CONTACT_TOLERANCE + PBD_R(0.1) * PBD_SQRT(edge2);
	for (int m = 0; m < 3; ++m) {
		const pbd_vec3 on = pbd_v3_add(r0, pbd_v3_scale(pbd_v3_sub(r1, r0), pbd_closest_on_segment(tv->p[m], r0, r1)));
		const pbd_vec3 dv = pbd_v3_sub(tv->p[m], on);
		if (pbd_v3_dot(dv, dv) < band * band) return true;
	}
	return false;
}

/* The contact of point b of the triangle with normal n: sum_k b_k (x_k + q_k) . n >=
 * (core + thick n) . n, relative to x of each vertex. */
static bool add_contact(pbd_world* w, const tri_view* tv, const pbd_real b[3], pbd_vec3 n, pbd_vec3 core,
                        pbd_real thick) {
	pbd_tri_contact k;
	k.t = tv->t;
	k.body = tv->body;
	k.collider = tv->collider;
	k.pad_ = 0;
	k.r = tv->body ? pbd_v3_add(tv->to_arm, core) : pbd_v3(0, 0, 0);
	k.b[0] = b[0], k.b[1] = b[1], k.b[2] = b[2];
	k.n = n;
	pbd_real base = 0;
	for (int m = 0; m < 3; ++m) base += b[m] * pbd_v3_dot(n, pbd_v3_sub(w->x[tv->v[m]], tv->o));
	k.offset = pbd_v3_dot(n, core) + thick - base;
	tri_tally* t = tv->tally;
	if (t->o) {
		pbd_tri_contact* r = (pbd_tri_contact*)pbd_block_out_push(t->o, t->block, t->worker);
		if (r) *r = k; /* else counted, and the block runs again */
		t->kept++;
		return true;
	}
	if (w->ntc == t->limit) {
		t->full = true;
		return true;
	}
	if (!pbd_grow_to(&w->mem, (void**)&w->tcon, sizeof *w->tcon, &w->cap_tc, w->ntc + 1)) return false;
	w->tcon[w->ntc++] = k;
	t->kept++;
	return true;
}

/* Whether the box of the core's path over the substep, [a, b] at its start and [c, d] now,
 * grown by thick, misses the box of the triangle's path. */
static bool path_far(pbd_vec3 a, pbd_vec3 b, pbd_vec3 c, pbd_vec3 d, pbd_real thick, const tri_view* tv) {
	pbd_vec3 lo = v3_min(v3_min(a, b), v3_min(c, d)), hi = v3_max(v3_max(a, b), v3_max(c, d));
	pbd_vec3 tlo = tv->lo, thi = tv->hi;
	for (int m = 0; m < 3; ++m) tlo = v3_min(tlo, tv->s[m]), thi = v3_max(thi, tv->s[m]);
	return lo.x - thick > thi.x || hi.x + thick < tlo.x || lo.y - thick > thi.y || hi.y + thick < tlo.y ||
	       lo.z - thick > thi.z || hi.z + thick < tlo.z;
}

/* The contact by distance between the core [r0, r1] and the face at its predicted place: the
 * direction from the core to the face's nearest point, at most `thick` apart. Gives false when
 * they are farther apart or the nearest point is at a vertex (whose own contact does the work). */
static bool contact_by_distance(const tri_view* tv, pbd_vec3 r0, pbd_vec3 r1, pbd_real thick, pbd_real b[3],
                                pbd_vec3* n, pbd_vec3* core) {
	const pbd_vec3 q = closest_pair(r0, r1, tv->p[0], tv->p[1], tv->p[2], core, b);
	if (b[0] > VERTEX_WEIGHT || b[1] > VERTEX_WEIGHT || b[2] > VERTEX_WEIGHT) return false;
	const pbd_vec3 d = pbd_v3_sub(q, *core);
	const pbd_real len = pbd_v3_length(d);
	if (!(len < thick)) return false;
	/* A triangle through the core has no direction out; its own normal, toward where the
	 * triangle's vertices were at the start of the substep, is the best guess. */
	if (len > PBD_EPSILON_LENGTH) {
		*n = pbd_v3_scale(d, 1 / len);
	} else {
		pbd_vec3 fn = pbd_v3_cross(pbd_v3_sub(tv->p[1], tv->p[0]), pbd_v3_sub(tv->p[2], tv->p[0]));
		const pbd_real fl = pbd_v3_length(fn);
		*n = fl > 0 ? pbd_v3_scale(fn, 1 / fl) : pbd_v3(0, 1, 0);
	}
	return true;
}

/* The plane through the face's point b, normal n (from the core, unit), kept `thick` ahead of
 * the core's point `core` at the end of the substep: a contact when the face would end nearer.
 * False only when out of memory. */
static bool held_plane(pbd_world* w, const tri_view* tv, const pbd_real b[3], pbd_vec3 n, pbd_vec3 core,
                       pbd_real thick) {
	pbd_real gap = -pbd_v3_dot(n, core);
	for (int m = 0; m < 3; ++m) gap += b[m] * pbd_v3_dot(n, tv->p[m]);
	if (!(gap < thick)) return true;
	for (int m = 0; m < 3; ++m) pbd_collide_yield(w, tv->collider, tv->v[m], n);
	return add_contact(w, tv, b, n, core, thick);
}

/* The most samples of a fast core's path against one face. */
#define PATH_SAMPLES 64

/* Whether the core [q0, q1] -> [r0, r1] and the face, each moving linearly from the start of
 * the substep to now, come within `thick` of each other: their distance sampled at steps of at
 * most half the thickness of relative motion (`move` bounds it), ends included. */
static bool paths_meet(const tri_view* tv, pbd_vec3 q0, pbd_vec3 q1, pbd_vec3 r0, pbd_vec3 r1, pbd_real thick,
                       pbd_real move) {
	const pbd_real want = move / (PBD_R(0.5) * thick);
	const int samples = want < PATH_SAMPLES ? (int)ceil((double)want) : PATH_SAMPLES;
	for (int k = 0; k <= samples; ++k) {
		const pbd_real f = (pbd_real)k / (pbd_real)samples;
		pbd_vec3 t[3];
		for (int m = 0; m < 3; ++m) t[m] = pbd_v3_add(tv->s[m], pbd_v3_scale(pbd_v3_sub(tv->p[m], tv->s[m]), f));
		const pbd_vec3 a0 = pbd_v3_add(q0, pbd_v3_scale(pbd_v3_sub(r0, q0), f));
		const pbd_vec3 a1 = pbd_v3_add(q1, pbd_v3_scale(pbd_v3_sub(r1, q1), f));
		pbd_real b[3];
		pbd_vec3 on_core;
		const pbd_vec3 d = pbd_v3_sub(closest_pair(a0, a1, t[0], t[1], t[2], &on_core, b), on_core);
		if (pbd_v3_dot(d, d) < thick * thick) return true;
	}
	return false;
}

/* A rounded collider's core [c0, c1] of the given radius against the triangle; [s0, s1] is the
 * core at the start of the substep.
 *
 * When the core moves less than half its thickness relative to the face in the substep, it
 * cannot pass the face without ending within reach of it: the face is kept off the core by the
 * distance between them at the end, unless a vertex touches the core (its own contact holds).
 *
 * Faster (a small ball at 20 m/s into a sheet, a sheet springing back past a ball), the
 * direction at the end may point through the face, to where the core went: a face the core
 * passed is pushed on to the far side. There, when the two paths come within reach during the
 * substep (paths_meet), the face is kept off the core's end along the direction from the core to
 * the face's nearest point at the start of the substep, when nothing had passed yet: the plane
 * between them then holds to the end, as a particle keeps its contact's plane. For a core
 * arriving from afar that direction is close to its motion, so the face ahead is carried along;
 * in a fold around the core, each side is pushed out and down and their shared edge, pushed by
 * both, goes ahead of it. The vertices' own contacts that push the other way yield. */
static bool rounded_contact(pbd_world* w, const pbd_collider* c, const tri_view* tv, pbd_vec3 c0, pbd_vec3 c1,
                            pbd_vec3 s0, pbd_vec3 s1, pbd_real radius) {
	const pbd_vec3 r0 = pbd_v3_sub(c0, tv->o), r1 = pbd_v3_sub(c1, tv->o);
	const pbd_vec3 q0 = pbd_v3_sub(s0, tv->o), q1 = pbd_v3_sub(s1, tv->o);
	const pbd_real thick = tv->radius + c->def.margin + radius;
	if (path_far(q0, q1, r0, r1, thick, tv)) return true;
	/* A bound on how far the core moves relative to any point of the face. */
	pbd_real face_move = 0;
	for (int m = 0; m < 3; ++m) face_move = PBD_FMAX(face_move, pbd_v3_length(pbd_v3_sub(tv->p[m], tv->s[m])));
	const pbd_real move = PBD_FMAX(pbd_v3_length(pbd_v3_sub(r0, q0)), pbd_v3_length(pbd_v3_sub(r1, q1))) + face_move;
	pbd_real b[3];
	pbd_vec3 n, core;
	if (!(move > PBD_R(0.5) * thick)) {
		if (box_far(r0, r1, thick, tv) || vertex_touches(tv, r0, r1, thick)) return true;
		if (!contact_by_distance(tv, r0, r1, thick, b, &n, &core)) return true;
		return add_contact(w, tv, b, n, core, thick);
	}
	if (!paths_meet(tv, q0, q1, r0, r1, thick, move)) return true;
	pbd_vec3 cs;
	const pbd_vec3 ds = pbd_v3_sub(closest_pair(q0, q1, tv->s[0], tv->s[1], tv->s[2], &cs, b), cs);
	const pbd_real ls = pbd_v3_length(ds);
	if (!(ls > PBD_EPSILON_LENGTH)) {
		/* through the core at the start: no direction to keep, the end's is the best guess */
		if (!contact_by_distance(tv, r0, r1, thick, b, &n, &core)) return true;
		return add_contact(w, tv, b, n, core, thick);
	}
	n = pbd_v3_scale(ds, 1 / ls);
	/* the core's point that was nearest the face, where it is now */
	core = pbd_v3_add(r0, pbd_v3_scale(pbd_v3_sub(r1, r0), pbd_closest_on_segment(cs, q0, q1)));
	if (!held_plane(w, tv, b, n, core, thick)) return false;
	/* The face's edges the same way, each by its own nearest point: in a fold around the core
	 * the sides' nearest points lie on the sides, and only the edge they share, under the core,
	 * says that it must go ahead. */
	for (int m = 0; m < 3; ++m) {
		const int m1 = (m + 1) % 3;
		pbd_real u, t;
		pbd_closest_segments(q0, q1, tv->s[m], tv->s[m1], &u, &t);
		const pbd_vec3 ce = pbd_v3_add(q0, pbd_v3_scale(pbd_v3_sub(q1, q0), u));
		const pbd_vec3 d = pbd_v3_sub(pbd_v3_add(tv->s[m], pbd_v3_scale(pbd_v3_sub(tv->s[m1], tv->s[m]), t)), ce);
		const pbd_real l = pbd_v3_length(d);
		if (!(l > PBD_EPSILON_LENGTH) || !(l < thick + move)) continue;
		pbd_real be[3] = {0, 0, 0};
		be[m] = 1 - t, be[m1] = t;
		const pbd_vec3 cn = pbd_v3_add(r0, pbd_v3_scale(pbd_v3_sub(r1, r0), u));
		if (!held_plane(w, tv, be, pbd_v3_scale(d, 1 / l), cn, thick)) return false;
	}
	return true;
}

/* The contact of a feature of a shape at `core` (a corner, or a point of an edge) that lies over
 * the inside of the triangle's face at q, or on it: the face's normal, on the side away from
 * the solid (`out`, unit or zero), so that a feature that got through the face within a substep
 * is brought back, not pushed on. */
static bool face_contact(pbd_world* w, const tri_view* tv, const pbd_real b[3], pbd_vec3 q, pbd_vec3 core, pbd_vec3 out,
                         pbd_real thick) {
	const pbd_vec3 fn = pbd_v3_cross(pbd_v3_sub(tv->p[1], tv->p[0]), pbd_v3_sub(tv->p[2], tv->p[0]));
	const pbd_real fl = pbd_v3_length(fn);
	if (!(fl > 0)) return true;
	pbd_vec3 n = pbd_v3_scale(fn, 1 / fl);
	/* The feature's height over the face where the substep started. */
	pbd_real h0 = -pbd_v3_dot(n, core);
	for (int m = 0; m < 3; ++m) h0 += b[m] * pbd_v3_dot(n, pbd_v3_sub(w->x[tv->v[m]], tv->o));
	const pbd_real s = pbd_v3_dot(n, out);
	if (PBD_FABS(s) < PBD_R(0.2)) {
		/* A face seen edge on from the feature (or a shape without an inside): the side the
		 * feature was on when the substep started, when that is clear. */
		if (!(PBD_FABS(h0) > PBD_R(0.5) * thick)) return true;
	}
	if (PBD_FABS(s) < PBD_R(0.2) ? h0 < 0 : s < 0) n = pbd_v3_scale(n, -1), h0 = -h0;
	/* A feature that was already deeper than the thickness behind the face when the substep
	 * started did not come through it now: the face lies behind it, over the solid (a corner on
	 * the far side of a box from the cloth), and other features hold it. */
	if (!(h0 > -thick) || !(pbd_v3_dot(n, pbd_v3_sub(q, core)) < thick)) return true;
	return add_contact(w, tv, b, n, core, thick);
}

/* A corner of a shape, at `corner` (in the triangle's frame) with the outward direction `out`
 * (unit, or zero when the shape does not know one), against the triangle. */
static bool corner_contact(pbd_world* w, const tri_view* tv, pbd_vec3 corner, pbd_vec3 out, pbd_real thick) {
	if (vertex_touches(tv, corner, corner, thick)) return true;
	pbd_real b[3];
	const pbd_vec3 q = pbd_closest_on_triangle(corner, tv->p[0], tv->p[1], tv->p[2], b);
	if (b[0] > VERTEX_WEIGHT || b[1] > VERTEX_WEIGHT || b[2] > VERTEX_WEIGHT) return true;
	if (b[0] > 0 && b[1] > 0 && b[2] > 0) return face_contact(w, tv, b, q, corner, out, thick);
	/* Beside the face: the distance to its edge, as for a ball of radius zero. */
	const pbd_vec3 d = pbd_v3_sub(q, corner);
	const pbd_real len = pbd_v3_length(d);
	if (!(len < thick) || !(len > PBD_EPSILON_LENGTH)) return true;
	return add_contact(w, tv, b, pbd_v3_scale(d, 1 / len), corner, thick);
}

/* The closest pair of segment [e0, e1] and the triangle p[3], exactly: the point where the
 * segment passes through the triangle, else the nearest of its ends against the triangle and of
 * the segment against the triangle's three sides. Gives the triangle's point in *q_out with its
 * weights and, in *u, the parameter of the segment's point; false when no candidate has a finite
 * distance (coordinates that overflowed), and then nothing is written. */
static bool segment_triangle(pbd_vec3 e0, pbd_vec3 e1, const pbd_vec3 p[3], pbd_vec3* q_out, pbd_real* u,
                             pbd_real bary[3]) {
	const pbd_vec3 fn = pbd_v3_cross(pbd_v3_sub(p[1], p[0]), pbd_v3_sub(p[2], p[0]));
	const pbd_real h0 = pbd_v3_dot(fn, pbd_v3_sub(e0, p[0])), h1 = pbd_v3_dot(fn, pbd_v3_sub(e1, p[0]));
	if ((h0 < 0 && h1 > 0) || (h0 > 0 && h1 < 0)) {
		const pbd_real s = h0 / (h0 - h1);
		const pbd_vec3 x = pbd_v3_add(e0, pbd_v3_scale(pbd_v3_sub(e1, e0), s));
		pbd_real b[3];
		const pbd_vec3 q = pbd_closest_on_triangle(x, p[0], p[1], p[2], b);
		if (b[0] > 0 && b[1] > 0 && b[2] > 0) {
			*q_out = q;
			*u = s;
			memcpy(bary, b, sizeof b);
			return true;
		}
	}
	/* A candidate counts only at a finite squared distance: with none, there is no pair. */
	pbd_real best = PBD_REAL_MAX, b[3];
	bool found = false;
	for (int end = 0; end < 2; ++end) {
		const pbd_vec3 x = end ? e1 : e0;
		const pbd_vec3 y = pbd_closest_on_triangle(x, p[0], p[1], p[2], b);
		const pbd_vec3 d = pbd_v3_sub(y, x);
		const pbd_real d2 = pbd_v3_dot(d, d);
		if (!(found ? d2 < best : d2 <= best)) continue;
		best = d2, *q_out = y, *u = (pbd_real)end, memcpy(bary, b, sizeof b);
		found = true;
	}
	for (int m = 0; m < 3; ++m) {
		pbd_real s, t;
		pbd_closest_segments(e0, e1, p[m], p[(m + 1) % 3], &s, &t);
		const pbd_vec3 x = pbd_v3_add(e0, pbd_v3_scale(pbd_v3_sub(e1, e0), s));
		const pbd_vec3 y = pbd_v3_add(p[m], pbd_v3_scale(pbd_v3_sub(p[(m + 1) % 3], p[m]), t));
		const pbd_vec3 d = pbd_v3_sub(y, x);
		const pbd_real d2 = pbd_v3_dot(d, d);
		if (!(found ? d2 < best : d2 <= best)) continue;
		best = d2, *q_out = y, *u = s;
		bary[m] = 1 - t, bary[(m + 1) % 3] = t, bary[(m + 2) % 3] = 0;
		found = true;
	}
	return found;
}

/* The part of the parameter range of an edge near either end that its corners' contacts cover. */
#define EDGE_END PBD_R(1e-3)

/* A convex edge [e0, e1] of a shape (in the triangle's frame) with the outward direction `out`
 * (unit) against the triangle: a core of radius zero, as a corner but along a segment. */
static bool edge_contact(pbd_world* w, const tri_view* tv, pbd_vec3 e0, pbd_vec3 e1, pbd_vec3 out, pbd_real thick) {
	if (vertex_touches(tv, e0, e1, thick)) return true;
	pbd_real b[3], u = 0;
	pbd_vec3 q;
	if (!segment_triangle(e0, e1, tv->p, &q, &u, b)) return true;
	if (b[0] > VERTEX_WEIGHT || b[1] > VERTEX_WEIGHT || b[2] > VERTEX_WEIGHT) return true;
	if (!(u > EDGE_END && u < 1 - EDGE_END)) return true;
	const pbd_vec3 core = pbd_v3_add(e0, pbd_v3_scale(pbd_v3_sub(e1, e0), u));
	const pbd_vec3 d = pbd_v3_sub(q, core);
	const pbd_real len = pbd_v3_length(d);
	if (!(len < thick)) return true;
	if (len > PBD_EPSILON_LENGTH && !(b[0] > 0 && b[1] > 0 && b[2] > 0)) {
		/* Apart, beside the face: the direction from the edge, when it leaves the solid; toward
		 * the solid, the face is over another of the shape's features. */
		const pbd_vec3 n = pbd_v3_scale(d, 1 / len);
		if (!(pbd_v3_dot(n, out) > 0)) return true;
		return add_contact(w, tv, b, n, core, thick);
	}
	/* Through the face or touching it. Not for a dynamic body's edge: there the face's normal is
	 * no distance's gradient, and through the edge's lever arm it rocks a body resting on a
	 * sagging cloth ever harder (a turned box on a trampoline gained up to 0.9 J); its corners
	 * and the vertices' own contacts hold it. */
	if (tv->body) return true;
	return face_contact(w, tv, b, q, core, out, thick);
}

/* The corners and edges of a shape near one chunk of triangles, in world coordinates. */
typedef struct feature_list {
	const pbd_corner_rec* corner;
	const pbd_edge_rec* edge;
	uint32_t ncorner, nedge;
} feature_list;

/* A growing array of corner or edge records (the triangle's scratch, or the step's pools). */
typedef struct feature_sink {
	pbd_world* w;
	pbd_corner_rec** corner;
	pbd_edge_rec** edge;
	uint32_t *n, *cap;
	bool failed;
} feature_sink;

static void collect_corner(void* ctx, uint32_t index, pbd_vec3 p, pbd_vec3 out) {
	feature_sink* s = (feature_sink*)ctx;
	if (!pbd_grow_to(&s->w->mem, (void**)s->corner, sizeof **s->corner, s->cap, *s->n + 1)) {
		s->failed = true;
		return;
	}
	(*s->corner)[(*s->n)++] = (pbd_corner_rec){index, p, out};
}

static void collect_edge(void* ctx, uint32_t index, pbd_vec3 a, pbd_vec3 b, pbd_vec3 out) {
	feature_sink* s = (feature_sink*)ctx;
	if (!pbd_grow_to(&s->w->mem, (void**)s->edge, sizeof **s->edge, s->cap, *s->n + 1)) {
		s->failed = true;
		return;
	}
	(*s->edge)[(*s->n)++] = (pbd_edge_rec){index, a, b, out};
}

/* Records (pbd_corner_rec or pbd_edge_rec, both named by the uint32_t index they start with) in
 * the order of their indices, each index once: an insertion sort (a handful, gathered in nearly
 * that order), then the later of equal indices out; their new count. A shape gives one feature
 * one point and direction, so the first of equal indices stands for them all. */
static uint32_t sort_unique(unsigned char* r, size_t size, uint32_t count) {
	unsigned char x[sizeof(pbd_edge_rec) > sizeof(pbd_corner_rec) ? sizeof(pbd_edge_rec) : sizeof(pbd_corner_rec)];
	uint32_t xi, yi;
	for (uint32_t i = 1; i < count; ++i) {
		memcpy(x, r + i * size, size);
		memcpy(&xi, x, sizeof xi);
		uint32_t j = i;
		for (; j > 0 && (memcpy(&yi, r + (j - 1) * size, sizeof yi), yi > xi); --j)
			memcpy(r + j * size, r + (j - 1) * size, size);
		memcpy(r + j * size, x, size);
	}
	uint32_t m = 0;
	for (uint32_t i = 0; i < count; ++i) {
		memcpy(&xi, r + i * size, sizeof xi);
		if (m > 0 && (memcpy(&yi, r + (m - 1) * size, sizeof yi), yi == xi)) continue;
		if (m != i) memcpy(r + m * size, r + i * size, size);
		++m;
	}
	return m;
}

/* The corners of a shape in the local box [llo, lhi], appended to the array from *n on: each
 * once, in the order of their indices, in the shape's frame. */
static bool local_corners(pbd_world* w, const pbd_collider* c, const pbd_shape_ops* ops, pbd_vec3 llo, pbd_vec3 lhi,
                          pbd_corner_rec** arr, uint32_t* n, uint32_t* cap) {
	const uint32_t from = *n;
	feature_sink sink = {w, arr, NULL, n, cap, false};
	ops->corners(&c->def, llo, lhi, collect_corner, &sink);
	if (sink.failed) return false;
	if (*n == from) return true; /* none, and perhaps no array yet to point into */
	*n = from + sort_unique((unsigned char*)(*arr + from), sizeof **arr, *n - from);
	return true;
}

/* The same for the shape's sharp edges whose box meets [llo, lhi]. */
static bool local_edges(pbd_world* w, const pbd_collider* c, const pbd_shape_ops* ops, pbd_vec3 llo, pbd_vec3 lhi,
                        pbd_edge_rec** arr, uint32_t* n, uint32_t* cap) {
	const uint32_t from = *n;
	feature_sink sink = {w, NULL, arr, n, cap, false};
	ops->edges(&c->def, llo, lhi, collect_edge, &sink);
	if (sink.failed) return false;
	if (*n == from) return true;
	*n = from + sort_unique((unsigned char*)(*arr + from), sizeof **arr, *n - from);
	return true;
}

/* Local corners to the world, in place. */
static void corners_to_world(pbd_corner_rec* r, uint32_t n, pbd_pose pose) {
	for (uint32_t i = 0; i < n; ++i) {
		r[i].p = pbd_pose_apply(pose, r[i].p);
		r[i].out = pbd_quat_rotate(pose.rotation, r[i].out);
	}
}

static pbd_edge_rec edge_in_world(const pbd_edge_rec* l, pbd_pose pose) {
	return (pbd_edge_rec){l->index, pbd_pose_apply(pose, l->a), pbd_pose_apply(pose, l->b),
	                      pbd_quat_rotate(pose.rotation, l->out)};
}

/* Whether a world edge passes through the world box [lo, hi] (a long edge's own box meets many
 * chunks that the edge does not). */
static bool edge_through(const pbd_edge_rec* e, pbd_vec3 lo, pbd_vec3 hi) {
	pbd_real t0 = 0, t1 = 1;
	return pbd_clip_box(e->a, pbd_v3_sub(e->b, e->a), lo, hi, &t0, &t1);
}

/* The corners of a shape in the local box [llo, lhi] into the triangle's scratch, each once, in
 * the order of their indices, in world coordinates. */
static bool gather_corners(pbd_world* w, const pbd_collider* c, const pbd_shape_ops* ops, pbd_vec3 llo, pbd_vec3 lhi) {
	w->ncorner = 0;
	if (!local_corners(w, c, ops, llo, lhi, &w->corner, &w->ncorner, &w->cap_corner)) return false;
	corners_to_world(w->corner, w->ncorner, c->def.pose);
	return true;
}

/* The shape's sharp edges in the local box [llo, lhi] that pass through the world box [lo, hi]
 * into the triangle's scratch, each once, in the order of their indices, in world coordinates. */
static bool gather_edges(pbd_world* w, const pbd_collider* c, const pbd_shape_ops* ops, pbd_vec3 llo, pbd_vec3 lhi,
                         pbd_vec3 lo, pbd_vec3 hi) {
	w->nedge = 0;
	if (!local_edges(w, c, ops, llo, lhi, &w->edge, &w->nedge, &w->cap_edge)) return false;
	uint32_t n = 0;
	for (uint32_t i = 0; i < w->nedge; ++i) {
		w->edge[n] = edge_in_world(&w->edge[i], c->def.pose);
		if (edge_through(&w->edge[n], lo, hi)) ++n;
	}
	w->nedge = n;
	return true;
}

/* ---- features a step need not gather again ------------------------------------------------
 * Each substep asks a shape for the corners and edges near each chunk of triangles: a walk of
 * its hierarchy or grid and a sort by index, for features that are mostly the same from one
 * substep to the next. The shape does not change within a step and a cloth moves a little per
 * substep, so the features are gathered once for the chunk's box grown by a skin and kept, in
 * the shape's frame. While the chunk's box stays inside the grown one, a substep picks from
 * them by the tests the shapes themselves apply (pbd_shape_ops.corners and .edges: a corner in
 * the box, an edge whose box meets it, both closed): the same features in the same order, so
 * the contacts, and every bit of the state, are the same as a gathering each substep. The kept
 * features live one step, as the clearances of contact.c do. */

/* About this many records and features of each kind at most a step keeps (some 20 MB in all);
 * beyond, chunks gather every substep as before. */
#define PBD_FKEEP_MAX ((uint32_t)1 << 18)

/* The skin: this many times the chunk's longest path in the substep, over the margin (a resting
 * cloth keeps its features for the step, a falling one for about that many substeps). */
#define PBD_FKEEP_SKIN_PATHS PBD_R(4.0)

/* The records of collider `slot` for the step, chunk 0 first, into *out (NULL where none are
 * kept); false when out of memory. */
static bool fkeep_records(pbd_world* w, uint32_t slot, uint32_t nchunk, pbd_feature_keep** out) {
	*out = NULL;
	if (w->fkeep.off) return true;
	if (!w->fkeep.ready) {
		if (!pbd_grow_to(&w->mem, (void**)&w->fkeep.of, sizeof *w->fkeep.of, &w->fkeep.cap_of, w->nc)) return false;
		for (uint32_t s = 0; s < w->nc; ++s) w->fkeep.of[s] = UINT32_MAX;
		w->fkeep.nrec = w->fkeep.ncorner = w->fkeep.nedge = 0;
		w->fkeep.nchunk = nchunk;
		w->fkeep.ready = true;
	}
	if (w->fkeep.nchunk != nchunk || slot >= w->nc) return true;
	if (w->fkeep.of[slot] == UINT32_MAX) {
		const uint32_t need = w->fkeep.nrec + nchunk;
		if (need > PBD_FKEEP_MAX || need < nchunk) return true;
		if (!pbd_grow_to(&w->mem, (void**)&w->fkeep.rec, sizeof *w->fkeep.rec, &w->fkeep.cap_rec, need)) return false;
		for (uint32_t k = w->fkeep.nrec; k < need; ++k) w->fkeep.rec[k].filled = false;
		w->fkeep.of[slot] = w->fkeep.nrec;
		w->fkeep.nrec = need;
	}
	*out = &w->fkeep.rec[w->fkeep.of[slot]];
	return true;
}

static bool box_inside(pbd_vec3 lo, pbd_vec3 hi, pbd_vec3 olo, pbd_vec3 ohi) {
	return lo.x >= olo.x && lo.y >= olo.y && lo.z >= olo.z && hi.x <= ohi.x && hi.y <= ohi.y && hi.z <= ohi.z;
}

/* What fkeep_ensure did. */
typedef enum { FKEEP_READY, FKEEP_NOT_KEPT, FKEEP_NO_MEMORY } fkeep_result;

/* Record r ready for a chunk whose box is [llo, lhi]: as it is while the box lies inside the
 * record's, else gathered again for the box grown by `skin`; FKEEP_NOT_KEPT where the record
 * cannot hold the features (the caller gathers them itself). */
static fkeep_result fkeep_ensure(pbd_world* w, const pbd_collider* c, const pbd_shape_ops* ops, pbd_feature_keep* r,
                                 bool corners, bool edges, pbd_vec3 llo, pbd_vec3 lhi, pbd_real skin) {
	if (r->filled && box_inside(llo, lhi, r->lo, r->hi)) {
		w->fkeep.reused++;
		return FKEEP_READY;
	}
	r->filled = false;
	const pbd_vec3 glo = pbd_v3(llo.x - skin, llo.y - skin, llo.z - skin),
	               ghi = pbd_v3(lhi.x + skin, lhi.y + skin, lhi.z + skin);
	if (!(skin >= 0) || !pbd_v3_is_finite(glo) || !pbd_v3_is_finite(ghi) || w->fkeep.ncorner > PBD_FKEEP_MAX ||
	    w->fkeep.nedge > PBD_FKEEP_MAX)
		return FKEEP_NOT_KEPT;
	r->corner = w->fkeep.ncorner, r->edge = w->fkeep.nedge;
	if (corners && !local_corners(w, c, ops, glo, ghi, &w->fkeep.corner, &w->fkeep.ncorner, &w->fkeep.cap_corner))
		return FKEEP_NO_MEMORY;
	if (edges && !local_edges(w, c, ops, glo, ghi, &w->fkeep.edge, &w->fkeep.nedge, &w->fkeep.cap_edge))
		return FKEEP_NO_MEMORY;
	r->ncorner = w->fkeep.ncorner - r->corner, r->nedge = w->fkeep.nedge - r->edge;
	r->lo = glo, r->hi = ghi;
	/* their world copies at the pose now: a static shape's, for the rest of the step */
	if (!pbd_grow_to(&w->mem, (void**)&w->fkeep.wcorner, sizeof *w->fkeep.wcorner, &w->fkeep.cap_wcorner,
	                 w->fkeep.ncorner) ||
	    !pbd_grow_to(&w->mem, (void**)&w->fkeep.wedge, sizeof *w->fkeep.wedge, &w->fkeep.cap_wedge, w->fkeep.nedge))
		return FKEEP_NO_MEMORY;
	r->pose = c->def.pose;
	/* (an empty run may have no array to point into) */
	if (r->ncorner) {
		memcpy(w->fkeep.wcorner + r->corner, w->fkeep.corner + r->corner, r->ncorner * sizeof *w->fkeep.corner);
		corners_to_world(w->fkeep.wcorner + r->corner, r->ncorner, r->pose);
	}
	for (uint32_t i = 0; i < r->nedge; ++i)
		w->fkeep.wedge[r->edge + i] = edge_in_world(&w->fkeep.edge[r->edge + i], r->pose);
	r->filled = true;
	w->fkeep.gathered++;
	return FKEEP_READY;
}

/* The features of record r that a gathering for the chunk's boxes would give ([llo, lhi] in the
 * shape's frame, [blo, bhi] in the world), in world coordinates, into `corner` and `edge`, which
 * have room for all of the record's. */
static void fkeep_take(const pbd_world* w, const pbd_collider* c, const pbd_feature_keep* r, pbd_vec3 llo, pbd_vec3 lhi,
                       pbd_vec3 blo, pbd_vec3 bhi, pbd_corner_rec* corner, pbd_edge_rec* edge, feature_list* fl) {
	const pbd_pose pose = c->def.pose;
	/* the world copies hold while the pose is the one they were made at (the same arithmetic
	 * would give the same bits) */
	const bool still = memcmp(&pose, &r->pose, sizeof pose) == 0;
	uint32_t nc = 0, ne = 0;
	for (uint32_t i = 0; i < r->ncorner; ++i) {
		const pbd_corner_rec* k = &w->fkeep.corner[r->corner + i];
		const pbd_vec3 p = k->p;
		if (llo.x <= p.x && p.x <= lhi.x && llo.y <= p.y && p.y <= lhi.y && llo.z <= p.z && p.z <= lhi.z)
			corner[nc++] = still ? w->fkeep.wcorner[r->corner + i] : *k;
	}
	if (!still) corners_to_world(corner, nc, pose);
	for (uint32_t i = 0; i < r->nedge; ++i) {
		const pbd_edge_rec* k = &w->fkeep.edge[r->edge + i];
		if (pbd_segment_bounds_miss(k->a, k->b, llo, lhi)) continue;
		edge[ne] = still ? w->fkeep.wedge[r->edge + i] : edge_in_world(k, pose);
		if (edge_through(&edge[ne], blo, bhi)) ++ne;
	}
	*fl = (feature_list){corner, edge, nc, ne};
}

/* ---- the face's plane first ------------------------------------------------------------
 * Most features that pass the box test lie on the solid's side of a face resting on the shape,
 * farther from the face's plane than the thickness: no contact can come of them, and the plane
 * says so for a dot product where the contact tests take closest points on segments and on the
 * triangle. The plane only turns away what those tests turn away (its bound is below theirs by
 * more than their roundings, PBD_CONTACT_TOLERANCE), so the contacts are the same. */
typedef struct face_plane {
	bool ready, flat;
	pbd_vec3 fn;  /* (p1 - p0) x (p2 - p0), as face_contact makes it */
	pbd_real fl;  /* |fn| */
	pbd_real lim; /* (thick + PBD_CONTACT_TOLERANCE) |fn|: a height beyond the reach of any contact */
} face_plane;

static void plane_of(const tri_view* tv, pbd_real thick, face_plane* f) {
	f->ready = true;
	f->fn = pbd_v3_cross(pbd_v3_sub(tv->p[1], tv->p[0]), pbd_v3_sub(tv->p[2], tv->p[0]));
	f->fl = pbd_v3_length(f->fn);
	f->flat = !(f->fl > 0);
	f->lim = (thick + PBD_CONTACT_TOLERANCE) * f->fl;
}

/* Whether the corner at x with outward direction `out` is turned away by corner_contact: the face
 * lies beyond the thickness on the side the corner's contact would push it to (face_contact keeps
 * only a face nearer than that there, and beside the face the distance is at least the height).
 * A face seen edge on, or a corner with no outside, is left to the full test: there the side
 * comes from where the substep started. */
static bool corner_beyond(const tri_view* tv, face_plane* f, pbd_real thick, pbd_vec3 x, pbd_vec3 out) {
	if (tv->plane_off) return false;
	if (!f->ready) plane_of(tv, thick, f);
	if (f->flat) return false;
	/* face_contact takes the side from the sign of s where |s| >= 0.2 |fn|; 0.21 leaves its
	 * rounding no room to decide otherwise */
	const pbd_real s = pbd_v3_dot(f->fn, out);
	if (!(PBD_FABS(s) >= PBD_R(0.21) * f->fl)) return false;
	/* the face's height over the corner along the side face_contact picks, times |fn| */
	const pbd_real h = pbd_v3_dot(f->fn, pbd_v3_sub(tv->p[0], x));
	return s > 0 ? h > f->lim : -h > f->lim;
}

/* Whether the segment [a, b] lies beyond the thickness on one side of the face's plane: then no
 * point of it is within the thickness of the face, and edge_contact turns it away. */
static bool segment_beyond(const tri_view* tv, face_plane* f, pbd_real thick, pbd_vec3 a, pbd_vec3 b) {
	if (tv->plane_off) return false;
	if (!f->ready) plane_of(tv, thick, f);
	if (f->flat) return false;
	const pbd_real ha = pbd_v3_dot(f->fn, pbd_v3_sub(a, tv->p[0])), hb = pbd_v3_dot(f->fn, pbd_v3_sub(b, tv->p[0]));
	return (ha > f->lim && hb > f->lim) || (ha < -f->lim && hb < -f->lim);
}

/* The corners gathered for the triangle's chunk against the triangle, those near its box. */
static bool corners_contacts(pbd_world* w, const pbd_collider* c, const tri_view* tv, const feature_list* fl) {
	const pbd_real thick = tv->radius + c->def.margin;
	face_plane f = {false, false, {0, 0, 0}, 0, 0};
	for (uint32_t i = 0; i < fl->ncorner && examine(tv); ++i) {
		const pbd_corner_rec* r = &fl->corner[i];
		const pbd_vec3 corner = pbd_v3_sub(r->p, tv->o);
		if (box_far(corner, corner, thick, tv) || corner_beyond(tv, &f, thick, corner, r->out)) continue;
		if (!corner_contact(w, tv, corner, r->out, thick)) return false;
	}
	return true;
}

/* The edges gathered for the triangle's chunk against the triangle, those near its box. */
static bool edges_contacts(pbd_world* w, const pbd_collider* c, const tri_view* tv, const feature_list* fl) {
	const pbd_real thick = tv->radius + c->def.margin;
	/* The ball around the triangle: a long edge's box meets many triangles' boxes, and the
	 * distance from the ball's centre to the edge turns most of them away for one projection. */
	const pbd_vec3 centre = pbd_v3_scale(pbd_v3_add(tv->lo, tv->hi), PBD_R(0.5));
	const pbd_real reach = pbd_v3_length(pbd_v3_sub(tv->hi, centre)) + thick;
	face_plane f = {false, false, {0, 0, 0}, 0, 0};
	for (uint32_t i = 0; i < fl->nedge && examine(tv); ++i) {
		const pbd_edge_rec* r = &fl->edge[i];
		const pbd_vec3 a = pbd_v3_sub(r->a, tv->o), b = pbd_v3_sub(r->b, tv->o);
		if (box_far(a, b, thick, tv)) continue;
		const pbd_vec3 d =
		    pbd_v3_sub(pbd_v3_add(a, pbd_v3_scale(pbd_v3_sub(b, a), pbd_closest_on_segment(centre, a, b))), centre);
		if (pbd_v3_dot(d, d) > reach * reach || segment_beyond(tv, &f, thick, a, b)) continue;
		if (!edge_contact(w, tv, a, b, r->out, thick)) return false;
	}
	return true;
}

/* The box of each particle's path in the substep (x to x + q), grown by the largest particle
 * radius, then of each chunk of triangles over its vertices' boxes; chunks with no free vertex
 * get an empty box. A vertex is shared by about six triangles: its box is made once. */
static bool chunk_boxes(pbd_world* w, uint32_t nchunk) {
	if (nchunk > w->cap_tri_chunk) {
		if (!pbd_grow(&w->mem, (void**)&w->tri_chunk, sizeof *w->tri_chunk, w->cap_tri_chunk, nchunk)) return false;
		w->cap_tri_chunk = nchunk;
	}
	if (nchunk > w->cap_tri_chunk_move) {
		if (!pbd_grow(&w->mem, (void**)&w->tri_chunk_move, sizeof *w->tri_chunk_move, w->cap_tri_chunk_move, nchunk))
			return false;
		w->cap_tri_chunk_move = nchunk;
	}
	if (w->np > w->cap_path_box) {
		if (!pbd_grow(&w->mem, (void**)&w->path_box, sizeof *w->path_box, w->cap_path_box, w->np)) return false;
		w->cap_path_box = w->np;
	}
	const pbd_real g = w->pcol->max_radius;
	for (uint32_t i = 0; i < w->np; ++i) {
		const pbd_vec3 x = w->x[i], p = pbd_v3_add(x, w->q[i]);
		w->path_box[i].lo =
		    pbd_v3(pbd_shape_min(x.x, p.x) - g, pbd_shape_min(x.y, p.y) - g, pbd_shape_min(x.z, p.z) - g);
		w->path_box[i].hi =
		    pbd_v3(pbd_shape_max(x.x, p.x) + g, pbd_shape_max(x.y, p.y) + g, pbd_shape_max(x.z, p.z) + g);
	}
	for (uint32_t k = 0; k < nchunk; ++k) {
		pbd_box3 b = {{PBD_REAL_MAX, PBD_REAL_MAX, PBD_REAL_MAX}, {-PBD_REAL_MAX, -PBD_REAL_MAX, -PBD_REAL_MAX}};
		pbd_real move = 0;
		const uint32_t end = (k + 1) * PBD_TRI_CHUNK < w->nt ? (k + 1) * PBD_TRI_CHUNK : w->nt;
		for (uint32_t t = k * PBD_TRI_CHUNK; t < end; ++t) {
			const uint32_t* v = &w->tri[3 * t];
			if (w->w[v[0]] <= 0 && w->w[v[1]] <= 0 && w->w[v[2]] <= 0) continue;
			for (int m = 0; m < 3; ++m) {
				b.lo = v3_min(b.lo, w->path_box[v[m]].lo);
				b.hi = v3_max(b.hi, w->path_box[v[m]].hi);
				const pbd_vec3 q = w->q[v[m]];
				move = pbd_shape_max(move, pbd_shape_max(PBD_FABS(q.x), pbd_shape_max(PBD_FABS(q.y), PBD_FABS(q.z))));
			}
		}
		w->tri_chunk[k] = b;
		w->tri_chunk_move[k] = move;
	}
	return true;
}

/* Whether the box of the paths of triangle v's vertices (chunk_boxes) misses the collider's box
 * [lo, hi]: most triangles of a chunk near a ball. */
static bool tri_far(const pbd_world* w, const uint32_t* v, pbd_vec3 lo, pbd_vec3 hi) {
	const pbd_box3* b = w->path_box;
	const pbd_vec3 a = v3_min(v3_min(b[v[0]].lo, b[v[1]].lo), b[v[2]].lo);
	const pbd_vec3 z = v3_max(v3_max(b[v[0]].hi, b[v[1]].hi), b[v[2]].hi);
	return a.x > hi.x || z.x < lo.x || a.y > hi.y || z.y < lo.y || a.z > hi.z || z.z < lo.z;
}

/* Whether contacts [0, n), in the order the search makes them (by collider, then triangle), hold
 * one of triangle t with collider `slot`. */
static bool has_face_contact(const pbd_world* w, uint32_t n, uint32_t slot, uint32_t t) {
	const uint32_t at = pbd_lower_bound_pair(w->tcon, sizeof *w->tcon, n, offsetof(pbd_tri_contact, collider),
	                                         offsetof(pbd_tri_contact, t), slot, t);
	return at < n && w->tcon[at].collider == slot && w->tcon[at].t == t;
}

/* The search's statistics (pbd_collision_count). */
typedef struct face_stats {
	uint64_t candidates;
	uint32_t most, most_kept, capped;
	bool full;
} face_stats;

/* Triangle t's view against collider `slot` (of dynamic body `body`, or 0); false when the
 * triangle has nothing to meet it with. */
static bool face_view(pbd_world* w, const pbd_collider* c, uint32_t slot, uint32_t body, uint32_t t, tri_view* tv) {
	tv->t = t;
	tv->v = &w->tri[3 * t];
	const uint32_t* v = tv->v;
	if (!(w->cmask[v[0]] & c->def.category)) return false;
	if (!body && w->w[v[0]] <= 0 && w->w[v[1]] <= 0 && w->w[v[2]] <= 0) return false;
	tv->o = w->x[v[0]];
	tv->body = body;
	tv->collider = slot;
	tv->to_arm = body ? pbd_v3_sub(tv->o, pbd_body_centre(&w->bodies, body - 1)) : pbd_v3(0, 0, 0);
	for (int m = 0; m < 3; ++m) {
		tv->s[m] = pbd_v3_sub(w->x[v[m]], tv->o);
		tv->p[m] = pbd_v3_add(tv->s[m], w->q[v[m]]);
	}
	tv->lo = tv->p[0], tv->hi = tv->p[0];
	for (int m = 1; m < 3; ++m) {
		tv->lo = v3_min(tv->lo, tv->p[m]);
		tv->hi = v3_max(tv->hi, tv->p[m]);
	}
	tv->radius = pbd_shape_max(pbd_shape_max(w->radius[v[0]], w->radius[v[1]]), w->radius[v[2]]);
	tv->plane_off = w->fkeep.plane_off;
	return true;
}

/* What one triangle's search did, into the statistics (or its block's tally, on the threads). */
static void face_note(const tri_tally* k, face_stats* st) {
	if (k->o) {
		pbd_block_out_item(k->o, k->block, k->examined, k->kept, k->capped);
		return;
	}
	st->candidates += k->examined;
	st->most = k->examined > st->most ? k->examined : st->most;
	st->most_kept = k->kept > st->most_kept ? k->kept : st->most_kept;
	st->capped += k->capped ? 1u : 0u;
}

/* The triangles of chunk k against the corners and edges fl of the shape in slot `slot`. False
 * when out of memory (on the calling thread only: a stage's contacts go to its blocks). */
static bool chunk_features(pbd_world* w, const pbd_collider* c, uint32_t slot, uint32_t body, uint32_t k,
                           const feature_list* fl, tri_tally* tally, face_stats* st) {
	const uint32_t end = (k + 1) * PBD_TRI_CHUNK < w->nt ? (k + 1) * PBD_TRI_CHUNK : w->nt;
	for (uint32_t t = k * PBD_TRI_CHUNK; t < end; ++t) {
		tri_view tv;
		if (!face_view(w, c, slot, body, t, &tv)) continue;
		tally->examined = tally->kept = 0;
		tally->capped = false;
		tv.tally = tally;
		if (!corners_contacts(w, c, &tv, fl) || !edges_contacts(w, c, &tv, fl)) return false;
		face_note(tally, st);
	}
	return true;
}

/* ---- chunks on the threads -------------------------------------------------------------------
 * A shape with corners and edges meets the chunks near it in blocks of chunks on the world's
 * threads, once every chunk's features are kept (fkeep_ensure, on the calling thread, where the
 * pools grow): each block picks its chunks' features into its worker's scratch and writes its
 * contacts to its own records, which come out in block order (block_out.h), so the contacts are
 * those one thread makes, in the same order. */

#define PBD_FACE_CHUNKS_PER_BLOCK 4u

typedef struct face_stage {
	pbd_world* w;
	const pbd_collider* c;
	uint32_t slot, body;
	const pbd_feature_keep* keep;
	pbd_block_out* o;
} face_stage;

static void face_block(void* arg, uint32_t block, uint32_t worker) {
	const face_stage* st = (const face_stage*)arg;
	pbd_world* w = st->w;
	pbd_block_out_open(st->o, block, worker);
	tri_tally tally = {0, 0, false, UINT32_MAX, false, st->o, block, worker};
	const uint32_t first = block * PBD_FACE_CHUNKS_PER_BLOCK;
	for (uint32_t i = first, end = pbd_block_end(first, w->nfitem, PBD_FACE_CHUNKS_PER_BLOCK); i < end; ++i) {
		const pbd_face_item* it = &w->fitem[i];
		feature_list fl;
		fkeep_take(w, st->c, &st->keep[it->k], it->llo, it->lhi, it->blo, it->bhi, w->fwork[worker].corner,
		           w->fwork[worker].edge, &fl);
		if (fl.ncorner == 0 && fl.nedge == 0) continue;
		(void)chunk_features(w, st->c, st->slot, st->body, it->k, &fl, &tally, NULL);
	}
	pbd_block_out_close(st->o, block, worker);
}

/* The box of chunk k grown by the margin, in the world and in the collider's frame. */
static pbd_face_item chunk_item(const pbd_world* w, const pbd_collider* c, uint32_t k) {
	pbd_face_item it;
	it.k = k;
	const pbd_real g = c->def.margin + PBD_CONTACT_TOLERANCE;
	const pbd_box3* b = &w->tri_chunk[k];
	it.blo = pbd_v3(b->lo.x - g, b->lo.y - g, b->lo.z - g);
	it.bhi = pbd_v3(b->hi.x + g, b->hi.y + g, b->hi.z + g);
	pbd_pose_local_box(c->def.pose, it.blo, it.bhi, &it.llo, &it.lhi);
	return it;
}

/* The skin of chunk k's kept features: the margin and a few of its longest paths. */
static pbd_real chunk_skin(const pbd_world* w, const pbd_collider* c, uint32_t k) {
	return c->def.margin + PBD_CONTACT_TOLERANCE + PBD_FKEEP_SKIN_PATHS * w->tri_chunk_move[k];
}

/* Collider c's face contacts on the threads, appended to the world's; *done false where a chunk's
 * features are not kept (nothing is appended: the caller then searches on its own thread). */
static pbd_status faces_on_threads(pbd_world* w, const pbd_collider* c, uint32_t slot, uint32_t body,
                                   const pbd_shape_ops* ops, pbd_feature_keep* keep, bool corners, bool edges,
                                   pbd_vec3 lo, pbd_vec3 hi, uint32_t nchunk, face_stats* st, bool* done) {
	*done = false;
	w->nfitem = 0;
	uint32_t most_corners = 0, most_edges = 0;
	for (uint32_t k = 0; k < nchunk; ++k) {
		if (!pbd_boxes_overlap(w->tri_chunk[k].lo, w->tri_chunk[k].hi, lo, hi)) continue;
		const pbd_face_item it = chunk_item(w, c, k);
		const fkeep_result kept =
		    fkeep_ensure(w, c, ops, &keep[k], corners, edges, it.llo, it.lhi, chunk_skin(w, c, k));
		if (kept == FKEEP_NO_MEMORY)
			return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for the kept features");
		if (kept == FKEEP_NOT_KEPT) return PBD_OK;
		const pbd_feature_keep* r = &keep[k];
		if (r->ncorner == 0 && r->nedge == 0) continue;
		most_corners = r->ncorner > most_corners ? r->ncorner : most_corners;
		most_edges = r->nedge > most_edges ? r->nedge : most_edges;
		if (!pbd_grow_to(&w->mem, (void**)&w->fitem, sizeof *w->fitem, &w->cap_fitem, w->nfitem + 1))
			return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for %u chunks", w->nfitem + 1);
		w->fitem[w->nfitem++] = it;
	}
	*done = true;
	if (w->nfitem == 0) return PBD_OK;
	const uint32_t threads = w->exec.threads;
	for (uint32_t t = 0; t < threads; ++t)
		if (!pbd_grow_to(&w->mem, (void**)&w->fwork[t].corner, sizeof *w->fwork[t].corner, &w->fwork[t].cap_corner,
		                 most_corners) ||
		    !pbd_grow_to(&w->mem, (void**)&w->fwork[t].edge, sizeof *w->fwork[t].edge, &w->fwork[t].cap_edge,
		                 most_edges))
			return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for the kept features");
	face_stage fs = {w, c, slot, body, keep, &w->pcol->face_out};
	const uint32_t blocks = pbd_blocks(w->nfitem, PBD_FACE_CHUNKS_PER_BLOCK);
	const uint32_t limit = pbd_collision_limit(w->nt);
	uint32_t n = 0;
	if (!pbd_block_out_begin(fs.o, &w->mem, threads, sizeof(pbd_tri_contact), blocks, 0))
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for triangle contacts");
	pbd_exec_stage(&w->exec, face_block, &fs, blocks);
	if (!pbd_block_out_finish(fs.o, &w->mem, face_block, &fs, w->ntc < limit ? limit - w->ntc : 0, (void**)&w->tstage,
	                          &n, &w->cap_tstage) ||
	    !pbd_grow_to(&w->mem, (void**)&w->tcon, sizeof *w->tcon, &w->cap_tc, w->ntc + n))
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for %u triangle contacts", w->ntc + n);
	if (n) memcpy(w->tcon + w->ntc, w->tstage, (size_t)n * sizeof *w->tcon);
	w->ntc += n;
	st->candidates += fs.o->candidates;
	st->most = fs.o->most_candidates > st->most ? fs.o->most_candidates : st->most;
	st->most_kept = fs.o->most_kept > st->most_kept ? fs.o->most_kept : st->most_kept;
	st->capped += fs.o->capped;
	st->full = st->full || fs.o->dropped > 0;
	return PBD_OK;
}

/* The search over every collider and the chunks of triangles near it. `late`: after an
 * iteration, for the faces that the constraints moved into a rounded collider's way, over their
 * whole path from the start of the substep to where the iteration left them; only faces with
 * no contact with that collider yet, the others keeping theirs. */
static pbd_status find_faces(pbd_world* w, bool late) {
	const uint32_t found = w->ntc;
	const uint32_t nchunk = (w->nt + PBD_TRI_CHUNK - 1) / PBD_TRI_CHUNK;
	bool boxed = false;
	tri_tally tally = {0, 0, false, pbd_collision_limit(w->nt), false, NULL, 0, 0};
	face_stats st = {0, 0, 0, 0, false};
	for (uint32_t s = 0; s < w->nc; ++s) {
		const pbd_collider* c = &w->colliders[s];
		if (!c->alive || c->def.trigger) continue;
		const pbd_shape_ops* ops = pbd_shape_ops_of(c->def.type);
		pbd_vec3 c0 = pbd_v3(0, 0, 0), c1 = c0, s0 = c0, s1 = c0;
		pbd_real radius = 0;
		const bool rounded = core_of(c, c->def.pose, &c0, &c1, &radius);
		if (late && !rounded) continue;
		if (rounded) (void)core_of(c, c->pose0, &s0, &s1, &radius);
		/* a dynamic body's shape is pushed back by the faces it pushes (pbd_triangle_contacts_project) */
		const uint32_t body = pbd_collider_dynamic_body(w, c);
		const bool corners = !rounded && ops->corners && !w->corners_off,
		           edges = !rounded && ops->edges && !w->edges_off;
		if (!rounded && !corners && !edges) continue;
		/* a rounded shape is swept over the substep; corners and edges are met where they are */
		const pbd_pose poses[2] = {c->def.pose, c->pose0};
		pbd_vec3 lo, hi;
		if (!pbd_collider_world_box(c, poses, rounded ? 2 : 1, c->def.margin + PBD_CONTACT_TOLERANCE, &lo, &hi))
			continue;
		if (!boxed && !chunk_boxes(w, nchunk))
			return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for %u triangle chunks", nchunk);
		boxed = true;
		pbd_feature_keep* keep = NULL;
		if (!rounded && !fkeep_records(w, s, nchunk, &keep))
			return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for the kept features");
		if (keep) {
			bool done = false;
			const pbd_status r = faces_on_threads(w, c, s, body, ops, keep, corners, edges, lo, hi, nchunk, &st, &done);
			if (r != PBD_OK) return r;
			if (done) continue;
		}
		/* on this thread, gathering each substep: rounded shapes (whose contacts make the
		 * particles' yield), and shapes whose features the step cannot keep */
		for (uint32_t k = 0; k < nchunk; ++k) {
			if (!pbd_boxes_overlap(w->tri_chunk[k].lo, w->tri_chunk[k].hi, lo, hi)) continue;
			if (!rounded) {
				/* The shape's corners and edges near the chunk, once for its triangles. */
				const pbd_face_item it = chunk_item(w, c, k);
				w->ncorner = w->nedge = 0;
				if (corners && !gather_corners(w, c, ops, it.llo, it.lhi))
					return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for %u corners",
					                w->ncorner + 1);
				if (edges && !gather_edges(w, c, ops, it.llo, it.lhi, it.blo, it.bhi))
					return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for %u edges",
					                w->nedge + 1);
				const feature_list fl = {w->corner, w->edge, w->ncorner, w->nedge};
				if (fl.ncorner == 0 && fl.nedge == 0) continue;
				if (!chunk_features(w, c, s, body, k, &fl, &tally, &st))
					return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for %u triangle contacts",
					                w->ntc + 1);
				continue;
			}
			const uint32_t end = (k + 1) * PBD_TRI_CHUNK < w->nt ? (k + 1) * PBD_TRI_CHUNK : w->nt;
			for (uint32_t t = k * PBD_TRI_CHUNK; t < end; ++t) {
				if (late && has_face_contact(w, found, s, t)) continue;
				if (tri_far(w, &w->tri[3 * t], lo, hi)) continue;
				tri_view tv;
				if (!face_view(w, c, s, body, t, &tv)) continue;
				tally.examined = 1;
				tally.kept = 0;
				tally.capped = false;
				tv.tally = &tally;
				if (!rounded_contact(w, c, &tv, c0, c1, s0, s1, radius))
					return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for %u triangle contacts",
					                w->ntc + 1);
				face_note(&tally, &st);
			}
		}
	}
	if (!late)
		pbd_collision_count(w, st.candidates, st.most, st.most_kept, w->ntc,
		                    st.capped + (tally.full || st.full ? 1u : 0u));
	return PBD_OK;
}

pbd_status pbd_triangle_contacts_find(pbd_world* w) {
	w->ntc = 0;
	if (w->def.collision_mode != PBD_COLLISION_IN_SOLVER || w->nt == 0) return PBD_OK;
	return find_faces(w, false);
}

static bool face_contact_before(const pbd_tri_contact* x, const pbd_tri_contact* y) {
	return x->collider != y->collider ? x->collider < y->collider : x->t < y->t;
}

static void project_range(pbd_world* w, uint32_t first, uint32_t end);

pbd_status pbd_triangle_contacts_catch_late(pbd_world* w) {
	if (w->def.collision_mode != PBD_COLLISION_IN_SOLVER || w->nt == 0 || w->pcol->torn) return PBD_OK;
	const uint32_t found = w->ntc;
	const pbd_status st = find_faces(w, true);
	if (w->ntc == found) return st;
	project_range(w, found, w->ntc);
	/* Back in order (collider, triangle), which the next late pass searches and the projection
	 * follows: the new ones, in order among themselves, each moved down past the old ones after
	 * it (a face's several contacts stay in the order they were made). */
	pbd_tri_contact* k = w->tcon;
	for (uint32_t i = found; i < w->ntc; ++i) {
		const pbd_tri_contact x = k[i];
		uint32_t at = i;
		while (at > 0 && face_contact_before(&x, &k[at - 1])) --at;
		memmove(&k[at + 1], &k[at], (size_t)(i - at) * sizeof *k);
		k[at] = x;
	}
	return st;
}

/* Against a dynamic body the face's point, of inverse mass sum b_k^2 w_k, and the body's point,
 * of generalised inverse mass w_b (model/node.h), share the correction: the body's point has
 * moved by the substep's corrections since the contact was found, and the face must stay that
 * much further out. */
static void project_with_body(pbd_world* w, const pbd_tri_contact* k) {
	const uint32_t* idx = &w->tri[3 * k->t];
	pbd_bodies* bs = &w->bodies;
	const uint32_t b = k->body - 1;
	pbd_real C = -k->offset - pbd_v3_dot(k->n, pbd_node_body_moved(bs, b, k->r)), wf = 0;
	for (int m = 0; m < 3; ++m) {
		C += k->b[m] * pbd_v3_dot(k->n, w->q[idx[m]]);
		wf += w->w[idx[m]] * k->b[m] * k->b[m];
	}
	if (!(C < 0)) return;
	pbd_vec3 irn;
	const pbd_real wb = pbd_node_body_weight(bs, b, k->r, k->n, &irn);
	if (!(wf + wb > 0)) return;
	const pbd_real dl = -C / (wf + wb);
	for (int m = 0; m < 3; ++m)
		w->q[idx[m]] = pbd_v3_add(w->q[idx[m]], pbd_v3_scale(k->n, dl * w->w[idx[m]] * k->b[m]));
	pbd_node_body_push(bs, b, k->n, irn, -dl);
}

void pbd_triangle_contacts_project(pbd_world* w) { project_range(w, 0, w->ntc); }

static void project_range(pbd_world* w, uint32_t first, uint32_t end) {
	for (uint32_t i = first; i < end; ++i) {
		const pbd_tri_contact* k = &w->tcon[i];
		if (k->body)
			project_with_body(w, k);
		else
			pbd_project_weighted_contact(w->q, w->w, &w->tri[3 * k->t], k->b, 3, k->n, k->offset);
	}
}
