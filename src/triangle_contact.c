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
 * three. */
#include <string.h>

#include "collide.h"
#include "shape_math.h"

/* The core of a rounded shape in world coordinates at the collider's current pose: a point or a
 * segment [c0, c1] and the radius around it. False for shapes without one. */
static bool core_of(const pbd_collider* c, pbd_vec3* c0, pbd_vec3* c1, pbd_real* radius) {
	const pbd_collider_def* d = &c->def;
	if (d->type == PBD_SHAPE_SPHERE) {
		*c0 = *c1 = pbd_pose_apply(d->pose, d->shape.sphere.center);
		*radius = d->shape.sphere.radius;
		return true;
	}
	if (d->type == PBD_SHAPE_CAPSULE) {
		*c0 = pbd_pose_apply(d->pose, pbd_v3(0, -d->shape.capsule.half_height, 0));
		*c1 = pbd_pose_apply(d->pose, pbd_v3(0, d->shape.capsule.half_height, 0));
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

static bool push(pbd_world* w, const pbd_tri_contact* k) {
	if (w->ntc == w->cap_tc) {
		const uint32_t cap = w->cap_tc ? 2 * w->cap_tc : 256;
		if (cap < w->cap_tc || !pbd_grow(&w->mem, (void**)&w->tcon, sizeof *w->tcon, w->cap_tc, cap)) return false;
		w->cap_tc = cap;
	}
	w->tcon[w->ntc++] = *k;
	return true;
}

pbd_status pbd_triangle_contacts_find(pbd_world* w) {
	w->ntc = 0;
	if (w->def.collision_mode != PBD_COLLISION_IN_SOLVER || w->nt == 0) return PBD_OK;
	/* Weights of a point off the vertices: above this, the vertex's own contact does the work. */
	const pbd_real vertex = PBD_R(0.999);
	for (uint32_t s = 0; s < w->nc; ++s) {
		const pbd_collider* c = &w->colliders[s];
		pbd_vec3 c0, c1;
		pbd_real radius;
		if (!c->alive || c->def.trigger || !core_of(c, &c0, &c1, &radius)) continue;
		for (uint32_t t = 0; t < w->nt; ++t) {
			const uint32_t* v = &w->tri[3 * t];
			if (!(w->cmask[v[0]] & c->def.category)) continue;
			if (w->w[v[0]] <= 0 && w->w[v[1]] <= 0 && w->w[v[2]] <= 0) continue;
			/* Relative to the first vertex's x, so that far from the origin the small numbers
			 * keep their precision. */
			const pbd_vec3 o = w->x[v[0]];
			pbd_vec3 p[3];
			for (int k = 0; k < 3; ++k) p[k] = pbd_v3_add(pbd_v3_sub(w->x[v[k]], o), w->q[v[k]]);
			const pbd_vec3 r0 = pbd_v3_sub(c0, o), r1 = pbd_v3_sub(c1, o);
			const pbd_real thick =
			    PBD_FMAX(PBD_FMAX(w->radius[v[0]], w->radius[v[1]]), w->radius[v[2]]) + c->def.margin + radius;
			/* A quick rejection on boxes before the closest point. */
			pbd_vec3 tlo = p[0], thi = p[0];
			for (int k = 1; k < 3; ++k) {
				tlo = pbd_v3(PBD_FMIN(tlo.x, p[k].x), PBD_FMIN(tlo.y, p[k].y), PBD_FMIN(tlo.z, p[k].z));
				thi = pbd_v3(PBD_FMAX(thi.x, p[k].x), PBD_FMAX(thi.y, p[k].y), PBD_FMAX(thi.z, p[k].z));
			}
			const bool far = PBD_FMIN(r0.x, r1.x) - thick > thi.x || PBD_FMAX(r0.x, r1.x) + thick < tlo.x ||
			                 PBD_FMIN(r0.y, r1.y) - thick > thi.y || PBD_FMAX(r0.y, r1.y) + thick < tlo.y ||
			                 PBD_FMIN(r0.z, r1.z) - thick > thi.z || PBD_FMAX(r0.z, r1.z) + thick < tlo.z;
			if (far) continue;
			/* Only where the shape reaches the face between vertices that do not touch it: where a
			 * vertex rests on the shape, its own contact holds the surface, and a face contact on
			 * top would only fight it over the sagitta of the face. */
			pbd_real edge2 = 0;
			for (int m = 0; m < 3; ++m) {
				const pbd_vec3 e = pbd_v3_sub(p[(m + 1) % 3], p[m]);
				edge2 = PBD_FMAX(edge2, pbd_v3_dot(e, e));
			}
			/* Touching, with a band of a tenth of the longest edge: vertices resting on the
			 * shape sit at `thick` give or take rounding, and a face between them is no gap. */
			const pbd_real band = thick + PBD_CONTACT_TOLERANCE + PBD_R(0.1) * PBD_SQRT(edge2);
			bool vertex_touches = false;
			for (int m = 0; m < 3 && !vertex_touches; ++m) {
				const pbd_vec3 on =
				    pbd_v3_add(r0, pbd_v3_scale(pbd_v3_sub(r1, r0), pbd_closest_on_segment(p[m], r0, r1)));
				const pbd_vec3 dv = pbd_v3_sub(p[m], on);
				vertex_touches = pbd_v3_dot(dv, dv) < band * band;
			}
			if (vertex_touches) continue;
			pbd_real b[3];
			pbd_vec3 core;
			const pbd_vec3 q = closest_pair(r0, r1, p[0], p[1], p[2], &core, b);
			if (b[0] > vertex || b[1] > vertex || b[2] > vertex) continue;
			const pbd_vec3 d = pbd_v3_sub(q, core);
			const pbd_real len = pbd_v3_length(d);
			if (!(len < thick)) continue;
			pbd_tri_contact k;
			k.t = t;
			k.pad_ = 0;
			k.b[0] = b[0], k.b[1] = b[1], k.b[2] = b[2];
			/* A triangle through the core has no direction out; its own normal, toward where
			 * the triangle's vertices were at the start of the substep, is the best guess. */
			if (len > PBD_EPSILON_LENGTH) {
				k.n = pbd_v3_scale(d, 1 / len);
			} else {
				pbd_vec3 fn = pbd_v3_cross(pbd_v3_sub(p[1], p[0]), pbd_v3_sub(p[2], p[0]));
				const pbd_real fl = pbd_v3_length(fn);
				k.n = fl > 0 ? pbd_v3_scale(fn, 1 / fl) : pbd_v3(0, 1, 0);
			}
			/* sum_k b_k (x_k + q_k) . n >= (core + thick n) . n, relative to x of each vertex. */
			pbd_real base = 0;
			for (int m = 0; m < 3; ++m) base += b[m] * pbd_v3_dot(k.n, pbd_v3_sub(w->x[v[m]], o));
			k.offset = pbd_v3_dot(k.n, core) + thick - base;
			if (!push(w, &k))
				return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for %u triangle contacts",
				                w->ntc + 1);
		}
	}
	return PBD_OK;
}

void pbd_triangle_contacts_project(pbd_world* w) {
	pbd_vec3* restrict q = w->q;
	const pbd_real* restrict iw = w->w;
	for (uint32_t i = 0; i < w->ntc; ++i) {
		const pbd_tri_contact* k = &w->tcon[i];
		const uint32_t* v = &w->tri[3 * k->t];
		pbd_real c = -k->offset, wsum = 0;
		for (int m = 0; m < 3; ++m) {
			c += k->b[m] * pbd_v3_dot(k->n, q[v[m]]);
			wsum += iw[v[m]] * k->b[m] * k->b[m];
		}
		if (!(c < 0) || !(wsum > 0)) continue;
		const pbd_real s = -c / wsum;
		for (int m = 0; m < 3; ++m) q[v[m]] = pbd_v3_add(q[v[m]], pbd_v3_scale(k->n, s * iw[v[m]] * k->b[m]));
	}
}
