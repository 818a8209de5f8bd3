/* Rigid bodies against each other and against every collider (docs/collision.md, "Bodies against
 * bodies").
 *
 * Each substep, after the colliders took their bodies' predicted poses, every pair of colliders
 * of which at least one rides on a dynamic body (and not both on the same body) whose boxes over
 * the substep overlap is tested both ways: the features of one shape against the distance of the
 * other. A shape's features are what its surface is made of where it can touch:
 *
 *  - a sphere: its centre, with the radius;
 *  - a capsule: its core segment, with the radius (both ends, and the point of the segment
 *    nearest the other shape when that lies between them);
 *  - a box, a convex hull, a mesh, a height field: its corners, and its sharp edges where a point
 *    between their ends comes nearer the other shape than both ends (an edge across an edge).
 *
 * The nearest point of a segment to a convex shape is found by golden-section search (the
 * distance along a segment to a convex set is convex); against a mesh or a height field it is a
 * local minimum. A feature within the shapes' margins plus their motion over the substep makes a
 * contact with the other shape's outward normal n there (speculative contacts, as MuJoCo and
 * Box2D keep): the two points must keep (p_feature - p_surface) . n >= margin_a + margin_b. A
 * corner on the other shape's surface reads the normal a little way into its own shape (two equal
 * boxes stacked flush put each corner on the other's edge, where the nearest way out is any of
 * three faces). Both ends push at one point, midway between the two.
 *
 * The response is Müller et al. 2020's (section 3.5): each iteration a contact whose separation,
 * with what the corrections since moved the two points, is below the gap is corrected along n
 * by the generalised inverse masses of both ends (model/node.h), and in the same pass a
 * tangential slip of the points below static_friction times the normal correction is undone;
 * after the iterations a longer slip is shortened by kinetic_friction times it, as particles have
 * it; after the velocities, restitution gives the pair back e times the
 * normal speed it approached with, and a pair that started the substep overlapping gets no speed
 * from being pushed apart (as particles, contact.c "take_back_push_out": a resting stack whose
 * contacts sank a little hopped and rocked itself over). A pair's friction is the geometric mean of the two shapes'
 * (sqrt(mu_a mu_b), as Box2D and Jolt combine it) and its restitution the larger of the two. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collision/collide.h"
#include "collision/self_collision.h"
#include "collision/shape_math.h"
#include "model/node.h"
#include "model/world.h"

/* Golden-section steps for the point of an edge nearest a shape: the bracket shrinks to
 * 0.618^20, about 1e-4 of the edge. */
#define PBD_RIGID_SECTION_STEPS 20

/* How far into its own shape, as a share of its distance to the shape's centre, a corner on the
 * other shape's surface reads the normal. */
#define PBD_RIGID_NORMAL_SHIFT PBD_R(0.02)

typedef pbd_rigid_feature feature;

typedef struct feature_list {
	pbd_world* w;
	bool failed;
} feature_list;

static bool add_feature(pbd_world* w, feature f) {
	if (!pbd_grow_to(&w->mem, (void**)&w->rfeat, sizeof *w->rfeat, &w->cap_rfeat, w->nrfeat + 1)) return false;
	w->rfeat[w->nrfeat++] = f;
	return true;
}

static void on_corner(void* ctx, uint32_t index, pbd_vec3 p, pbd_vec3 out) {
	(void)index, (void)out;
	feature_list* l = (feature_list*)ctx;
	if (!l->failed && !add_feature(l->w, (feature){p, p, 0, false})) l->failed = true;
}

static void on_edge(void* ctx, uint32_t index, pbd_vec3 a, pbd_vec3 b, pbd_vec3 out) {
	(void)index, (void)out;
	feature_list* l = (feature_list*)ctx;
	if (!l->failed && !add_feature(l->w, (feature){a, b, 0, true})) l->failed = true;
}

/* The features of collider c in its frame that lie in the local box [lo, hi] (the other shape's
 * reach), into w->rfeat. False when out of memory. */
static bool gather(pbd_world* w, const pbd_collider* c, pbd_vec3 lo, pbd_vec3 hi) {
	w->nrfeat = 0;
	const pbd_collider_def* d = &c->def;
	switch (d->type) {
	case PBD_SHAPE_SPHERE:
		return add_feature(w, (feature){d->shape.sphere.center, d->shape.sphere.center, d->shape.sphere.radius, false});
	case PBD_SHAPE_CAPSULE: {
		/* Both ends, and the core between them where it comes nearer than both: a capsule lying
		 * on a floor rests on its two ends, one lying across an edge on the point over it. */
		const pbd_real h = d->shape.capsule.half_height, r = d->shape.capsule.radius;
		const pbd_vec3 lo_end = pbd_v3(0, -h, 0), hi_end = pbd_v3(0, h, 0);
		return add_feature(w, (feature){lo_end, lo_end, r, false}) &&
		       add_feature(w, (feature){hi_end, hi_end, r, false}) &&
		       (h == 0 || add_feature(w, (feature){lo_end, hi_end, r, true}));
	}
	default: {
		const pbd_shape_ops* ops = pbd_shape_ops_of(d->type);
		feature_list l = {w, false};
		if (ops->corners) ops->corners(d, lo, hi, on_corner, &l);
		if (ops->edges) ops->edges(d, lo, hi, on_edge, &l);
		return !l.failed;
	}
	}
}

/* The signed distance from world point p to collider c's surface (at its predicted pose), with
 * the outward normal in *n (world). */
static pbd_real distance_to(const pbd_collider* c, const pbd_shape_ops* ops, pbd_vec3 p, pbd_vec3* n) {
	pbd_vec3 ln;
	const pbd_real d = ops->distance(&c->def, pbd_pose_apply_inverse(c->def.pose, p), &ln);
	*n = pbd_quat_rotate(c->def.pose.rotation, ln);
	return d;
}

/* The point of segment [a, b] (world) nearest collider c: its parameter, distance and normal. A
 * point (a == b) is its own nearest. */
static pbd_real nearest_on(const pbd_collider* c, const pbd_shape_ops* ops, pbd_vec3 a, pbd_vec3 b, pbd_real* t,
                           pbd_vec3* n) {
	const pbd_vec3 u = pbd_v3_sub(b, a);
	if (u.x == 0 && u.y == 0 && u.z == 0) {
		*t = 0;
		return distance_to(c, ops, a, n);
	}
	const pbd_real g = PBD_R(0.6180339887498949);
	pbd_real lo = 0, hi = 1, m1 = hi - g, m2 = lo + g;
	pbd_vec3 n1, n2;
	pbd_real f1 = distance_to(c, ops, pbd_v3_add(a, pbd_v3_scale(u, m1)), &n1);
	pbd_real f2 = distance_to(c, ops, pbd_v3_add(a, pbd_v3_scale(u, m2)), &n2);
	for (int k = 0; k < PBD_RIGID_SECTION_STEPS; ++k) {
		if (f1 <= f2) {
			hi = m2, m2 = m1, f2 = f1;
			m1 = hi - g * (hi - lo);
			f1 = distance_to(c, ops, pbd_v3_add(a, pbd_v3_scale(u, m1)), &n1);
		} else {
			lo = m1, m1 = m2, f1 = f2;
			m2 = lo + g * (hi - lo);
			f2 = distance_to(c, ops, pbd_v3_add(a, pbd_v3_scale(u, m2)), &n2);
		}
	}
	*t = f1 <= f2 ? m1 : m2;
	*n = f1 <= f2 ? n1 : n2;
	return f1 <= f2 ? f1 : f2;
}

/* The velocity of world point p of collider c (its body's, or a kinematic collider's own). */
static pbd_vec3 velocity_at(const pbd_world* w, const pbd_collider* c, pbd_vec3 p) {
	if (c->body) {
		const uint32_t i = c->body - 1;
		return pbd_v3_add(w->bodies.v[i],
		                  pbd_v3_cross(w->bodies.omega[i], pbd_v3_sub(p, pbd_body_centre(&w->bodies, i))));
	}
	return pbd_v3_add(c->def.velocity, pbd_v3_cross(c->def.angular_velocity, pbd_v3_sub(p, c->def.pose.position)));
}

/* How far the world point p of collider c moved from the substep's start (pose0) to now. */
static pbd_vec3 moved_from_start(const pbd_collider* c, pbd_vec3 p) {
	const pbd_vec3 local = pbd_pose_apply_inverse(c->def.pose, p);
	const pbd_vec3 d = pbd_v3_sub(c->def.pose.position, c->pose0.position);
	return pbd_v3_add(
	    d, pbd_v3_sub(pbd_quat_rotate(c->def.pose.rotation, local), pbd_quat_rotate(c->pose0.rotation, local)));
}

static pbd_vec3 lever(const pbd_world* w, uint32_t body, pbd_vec3 p) {
	return body ? pbd_v3_sub(p, pbd_body_centre(&w->bodies, body - 1)) : pbd_v3(0, 0, 0);
}

/* The most contacts one substep keeps: PBD_COLLISION_CONTACTS_PER_ITEM per dynamic body (a box on
 * a box has eight), so that bodies crushed into one place (every pair touching) bound the memory
 * as the particles' searches do; past it contacts are dropped and counted (pbd_collision_count). */
static uint32_t contact_limit(const pbd_world* w) {
	const uint64_t n = (uint64_t)PBD_COLLISION_CONTACTS_PER_ITEM * (w->bodies.alive > 16 ? w->bodies.alive : 16);
	return n > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)n;
}

static bool push_contact(pbd_world* w, const pbd_rigid_c* k) {
	if (w->nrc >= contact_limit(w)) {
		w->rigid_capped = true;
		return true;
	}
	if (!pbd_grow_to(&w->mem, (void**)&w->rcon, sizeof *w->rcon, &w->cap_rc, w->nrc + 1)) return false;
	w->rcon[w->nrc++] = *k;
	return true;
}

/* The features of collider `fp` against the surface of collider `fs`: contacts into w->rcon. */
static bool features_against(pbd_world* w, uint32_t fp, uint32_t fs, pbd_vec3 slo, pbd_vec3 shi) {
	const pbd_collider* cp = &w->colliders[fp];
	const pbd_collider* cs = &w->colliders[fs];
	const pbd_shape_ops* ops = pbd_shape_ops_of(cs->def.type);
	pbd_vec3 llo, lhi;
	pbd_pose_local_box(cp->def.pose, slo, shi, &llo, &lhi);
	if (!gather(w, cp, llo, lhi)) return false;
	const pbd_real gap = cp->def.margin + cs->def.margin;
	const uint32_t bp = pbd_collider_dynamic_body(w, cp), bs = pbd_collider_dynamic_body(w, cs);
	const pbd_real mu_s = PBD_SQRT(cp->def.static_friction * cs->def.static_friction);
	const pbd_real mu_k = PBD_FMIN(PBD_SQRT(cp->def.kinetic_friction * cs->def.kinetic_friction), mu_s);
	const pbd_real e = PBD_FMAX(cp->def.restitution, cs->def.restitution);
	const feature* f = w->rfeat;
	/* the centre of the features' shape: its bounds' middle */
	pbd_vec3 blo, bhi, centre_p = cp->def.pose.position;
	if (pbd_shape_ops_of(cp->def.type)->bounds(&cp->def, &blo, &bhi))
		centre_p = pbd_pose_apply(cp->def.pose, pbd_v3_scale(pbd_v3_add(blo, bhi), PBD_R(0.5)));
	for (uint32_t k = 0; k < w->nrfeat; ++k) {
		const pbd_vec3 a = pbd_pose_apply(cp->def.pose, f[k].a), b = pbd_pose_apply(cp->def.pose, f[k].b);
		pbd_real t;
		pbd_vec3 n;
		const pbd_real dist = nearest_on(cs, ops, a, b, &t, &n);
		if (f[k].ends) {
			/* An edge counts between its ends only, where it comes nearer than both (its
			 * corners are features of their own). */
			pbd_vec3 na, nb;
			const pbd_real tol = PBD_CONTACT_TOLERANCE;
			if (!(t > 0 && t < 1) || !(dist < distance_to(cs, ops, a, &na) - tol) ||
			    !(dist < distance_to(cs, ops, b, &nb) - tol))
				continue;
		}
		const pbd_vec3 core = pbd_v3_add(a, pbd_v3_scale(pbd_v3_sub(b, a), t));
		pbd_real dist_n = dist;
		if (f[k].r == 0) {
			/* A corner on the other shape's edge (two equal boxes stacked flush) has no one
			 * normal there: the nearest way out turns with the rounding. The normal is read a
			 * little way into the corner's own shape, toward its centre (the side it came from),
			 * and the distance is then the corner's height over that face's plane, which a convex
			 * shape lies behind. */
			const pbd_vec3 in = pbd_v3_sub(centre_p, core);
			const pbd_real len = pbd_v3_length(in);
			const pbd_real shift = PBD_RIGID_NORMAL_SHIFT * len;
			if (len > 0 && dist < shift) {
				pbd_vec3 ns;
				const pbd_vec3 sp = pbd_v3_add(core, pbd_v3_scale(in, shift / len));
				const pbd_real ds = distance_to(cs, ops, sp, &ns);
				/* the face's point nearest the shifted point, and the corner's height over it */
				const pbd_vec3 q = pbd_v3_sub(sp, pbd_v3_scale(ns, ds));
				n = ns;
				dist_n = pbd_v3_dot(ns, pbd_v3_sub(core, q));
			}
		}
		const pbd_real d = dist_n - f[k].r;
		/* Within the gap, or within what the two points moved over the substep. */
		const pbd_vec3 pf = pbd_v3_sub(core, pbd_v3_scale(n, f[k].r)); /* the feature's surface point */
		const pbd_vec3 ps = pbd_v3_sub(core, pbd_v3_scale(n, dist_n)); /* the nearest point of the surface */
		const pbd_vec3 slip = pbd_v3_sub(moved_from_start(cp, pf), moved_from_start(cs, ps));
		if (!(d < gap + pbd_v3_length(slip) + PBD_CONTACT_TOLERANCE)) continue;
		pbd_rigid_c r;
		r.p = bp, r.s = bs, r.cp = fp, r.cs = fs;
		r.n = n;
		/* Both ends push at one point, between the two: a tangential push at two points apart
		 * along n would be a couple, and turn the pair. */
		const pbd_vec3 mid = pbd_v3_scale(pbd_v3_add(pf, ps), PBD_R(0.5));
		r.at = mid;
		r.rp = lever(w, bp, mid);
		r.rs = lever(w, bs, mid);
		r.slip = slip;
		r.sep = d - gap;
		/* How deep the pair already was where the substep started (the prediction less the
		 * points' approach over it), past the tolerance: pushing that out must not become
		 * speed, or every resting contact that sank a little hops (a stack of boxes rose and
		 * rocked itself apart). */
		r.depth0 = PBD_FMAX(pbd_v3_dot(n, slip) - r.sep, 0);
		r.dn = 0;
		r.vn0 = pbd_v3_dot(n, pbd_v3_sub(velocity_at(w, cp, pf), velocity_at(w, cs, ps)));
		/* The ends that no contact moves keep their velocity through the substep. */
		r.vfix =
		    pbd_v3_sub(bp ? pbd_v3(0, 0, 0) : velocity_at(w, cp, pf), bs ? pbd_v3(0, 0, 0) : velocity_at(w, cs, ps));
		r.mu_s = mu_s, r.mu_k = mu_k, r.e = e;
		if (!push_contact(w, &r)) return false;
	}
	return true;
}

/* The pairs of colliders that may touch in this substep (one of them on a dynamic body, not both
 * on one body, their boxes over the substep overlapping), sorted, into w->rpairs; returns how
 * many, or UINT32_MAX when out of memory. Sort and sweep on the boxes' low x; an unbounded shape
 * (a plane) meets every collider on a dynamic body. */
/* Whether a pair may move (world/sleep.c): not when both ends sleep, or one sleeps and the other
 * does not move; an awake dynamic body or a moving kinematic one wakes the end that sleeps. */
static bool pair_awake(pbd_world* w, const pbd_collider* a, const pbd_collider* b) {
	const pbd_bodies* bd = &w->bodies;
	const uint32_t sa = a->body ? a->body - 1 : UINT32_MAX, sb = b->body ? b->body - 1 : UINT32_MAX;
	const bool za = sa != UINT32_MAX && bd->type[sa] == PBD_BODY_DYNAMIC && bd->asleep[sa];
	const bool zb = sb != UINT32_MAX && bd->type[sb] == PBD_BODY_DYNAMIC && bd->asleep[sb];
	if (!za && !zb) return true;
	if (za && zb) return false;
	const pbd_collider* other = za ? b : a;
	const uint32_t so = za ? sb : sa;
	bool moving;
	if (so != UINT32_MAX && bd->type[so] == PBD_BODY_DYNAMIC)
		moving = true;
	else if (so != UINT32_MAX)
		moving = pbd_v3_dot(bd->v[so], bd->v[so]) > 0 || pbd_v3_dot(bd->omega[so], bd->omega[so]) > 0;
	else
		moving = other->def.kind == PBD_ACTOR_KINEMATIC &&
		         (pbd_v3_dot(other->def.velocity, other->def.velocity) > 0 ||
		          pbd_v3_dot(other->def.angular_velocity, other->def.angular_velocity) > 0);
	if (!moving) return false;
	pbd_bodies_wake(w, za ? sa : sb);
	return true;
}

static uint32_t broad_phase(pbd_world* w) {
	const uint32_t nc = w->nc;
	if (!pbd_grow_to(&w->mem, (void**)&w->rbox, sizeof *w->rbox, &w->cap_rbox, nc) ||
	    !pbd_grow_to(&w->mem, (void**)&w->rorder, sizeof *w->rorder, &w->cap_rorder, nc))
		return UINT32_MAX;
	/* The order of the last substep, then the slots it did not hold (new colliders). */
	if (w->nrorder != nc) {
		for (uint32_t k = 0; k < nc; ++k) w->rorder[k] = k;
		w->nrorder = nc;
	}
	for (uint32_t k = 0; k < nc; ++k) {
		const pbd_collider* c = &w->colliders[k];
		pbd_box3* b = &w->rbox[k];
		const pbd_pose poses[2] = {c->def.pose, c->pose0};
		if (!c->alive || c->def.trigger) {
			*b = (pbd_box3){{1, 1, 1}, {0, 0, 0}}; /* empty: meets nothing */
		} else if (!pbd_collider_world_box(c, poses, 2, c->def.margin + PBD_CONTACT_TOLERANCE, &b->lo, &b->hi)) {
			b->lo = pbd_v3(-PBD_REAL_MAX, -PBD_REAL_MAX, -PBD_REAL_MAX);
			b->hi = pbd_v3(PBD_REAL_MAX, PBD_REAL_MAX, PBD_REAL_MAX);
		}
	}
	/* Insertion sort by low x: nearly linear, as the order barely changes between substeps. */
	uint32_t* o = w->rorder;
	for (uint32_t i = 1; i < nc; ++i) {
		const uint32_t v = o[i];
		const pbd_real key = w->rbox[v].lo.x;
		uint32_t j = i;
		for (; j > 0 && w->rbox[o[j - 1]].lo.x > key; --j) o[j] = o[j - 1];
		o[j] = v;
	}
	uint32_t n = 0;
	for (uint32_t a = 0; a < nc; ++a) {
		const uint32_t i = o[a];
		const pbd_box3 bi = w->rbox[i];
		if (!(bi.lo.x <= bi.hi.x)) continue;
		const pbd_collider* ci = &w->colliders[i];
		const bool di = pbd_collider_dynamic_body(w, ci) != 0;
		for (uint32_t b = a + 1; b < nc; ++b) {
			const uint32_t j = o[b];
			const pbd_box3 bj = w->rbox[j];
			if (bj.lo.x > bi.hi.x && !w->rigid_brute_force) break;
			if (!(bj.lo.x <= bj.hi.x) || !pbd_boxes_overlap(bi.lo, bi.hi, bj.lo, bj.hi)) continue;
			const pbd_collider* cj = &w->colliders[j];
			if ((!di && !pbd_collider_dynamic_body(w, cj)) || (ci->body && ci->body == cj->body)) continue;
			if (!pair_awake(w, ci, cj)) continue;
			/* two planes never touch */
			if (bi.lo.x == -PBD_REAL_MAX && bj.lo.x == -PBD_REAL_MAX && bi.hi.x == PBD_REAL_MAX &&
			    bj.hi.x == PBD_REAL_MAX)
				continue;
			/* bodies crushed into one place: as many pairs as the contacts' bound, then no more */
			if (n == contact_limit(w)) {
				w->rigid_capped = true;
				break;
			}
			if (!pbd_grow_to(&w->mem, (void**)&w->rpairs, sizeof *w->rpairs, &w->cap_rpairs, n + 1)) return UINT32_MAX;
			w->rpairs[n++] = (uint64_t)(i < j ? i : j) << 32 | (i < j ? j : i);
		}
	}
	if (n > 1) qsort(w->rpairs, n, sizeof *w->rpairs, pbd_u64_cmp);
	return n;
}

pbd_status pbd_rigid_contacts_find(pbd_world* w) {
	w->nrc = 0;
	w->rigid_capped = false;
	if (!w->bodies.alive || w->nc < 2) return PBD_OK;
	const uint32_t npairs = broad_phase(w);
	if (npairs == UINT32_MAX)
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for the bodies' contacts");
	/* Past the bound the search stops: the pairs after it, in their sorted order, keep none. */
	for (uint32_t k = 0; k < npairs && w->nrc < contact_limit(w); ++k) {
		const uint32_t i = (uint32_t)(w->rpairs[k] >> 32), j = (uint32_t)w->rpairs[k];
		const pbd_box3 bi = w->rbox[i], bj = w->rbox[j];
		/* Each shape's features within the other's box, against the other's surface. */
		const pbd_vec3 olo = pbd_v3(PBD_FMAX(bi.lo.x, bj.lo.x), PBD_FMAX(bi.lo.y, bj.lo.y), PBD_FMAX(bi.lo.z, bj.lo.z));
		const pbd_vec3 ohi = pbd_v3(PBD_FMIN(bi.hi.x, bj.hi.x), PBD_FMIN(bi.hi.y, bj.hi.y), PBD_FMIN(bi.hi.z, bj.hi.z));
		if (!features_against(w, i, j, olo, ohi) || !features_against(w, j, i, olo, ohi))
			return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for the bodies' contacts");
	}
	if (w->rigid_capped) pbd_collision_count(w, 0, 0, 0, w->nrc, 1);
	return PBD_OK;
}

/* How far the corrections of this substep moved the contact's point on body `body` (slot + 1). */
static pbd_vec3 moved(const pbd_world* w, uint32_t body, pbd_vec3 r) {
	return body ? pbd_node_body_moved(&w->bodies, body - 1, r) : pbd_v3(0, 0, 0);
}

static pbd_real weight(const pbd_world* w, uint32_t body, pbd_vec3 r, pbd_vec3 n, pbd_vec3* irn) {
	if (!body) {
		*irn = pbd_v3(0, 0, 0);
		return 0;
	}
	return pbd_node_body_weight(&w->bodies, body - 1, r, n, irn);
}

/* The positional impulse dl along unit dir between the contact's two points: + on the feature's
 * body, - on the surface's. */
static void push_pair(pbd_world* w, const pbd_rigid_c* k, pbd_vec3 dir, pbd_real amount) {
	pbd_vec3 ip, is;
	const pbd_real wsum = weight(w, k->p, k->rp, dir, &ip) + weight(w, k->s, k->rs, dir, &is);
	if (!(wsum > 0)) return;
	const pbd_real dl = amount / wsum;
	if (k->p) pbd_node_body_push(&w->bodies, k->p - 1, dir, ip, dl);
	if (k->s) pbd_node_body_push(&w->bodies, k->s - 1, dir, is, -dl);
}

/* The points' tangential slip over the substep so far, with its length. */
static pbd_vec3 tangential_slip(const pbd_world* w, const pbd_rigid_c* k, pbd_real* len) {
	const pbd_vec3 slip = pbd_v3_add(k->slip, pbd_v3_sub(moved(w, k->p, k->rp), moved(w, k->s, k->rs)));
	const pbd_vec3 tan = pbd_v3_sub(slip, pbd_v3_scale(k->n, pbd_v3_dot(k->n, slip)));
	*len = pbd_v3_length(tan);
	return tan;
}

void pbd_rigid_contacts_project(pbd_world* w) {
	for (uint32_t i = 0; i < w->nrc; ++i) {
		pbd_rigid_c* k = &w->rcon[i];
		const pbd_real c = k->sep + pbd_v3_dot(k->n, pbd_v3_sub(moved(w, k->p, k->rp), moved(w, k->s, k->rs)));
		if (c < 0) {
			push_pair(w, k, k->n, -c);
			k->dn -= c;
		}
		/* Static friction in the same pass (Müller et al. 2020): a slip within mu_s times the
		 * normal correction so far is undone at once, so that the corner contacts of a stack hold
		 * each other in the iterations instead of after them (five stacked cubes crept 3.3 cm in
		 * 5 s with friction after the iterations alone, 1.5 mm with it here). */
		if (!(k->dn > 0) || !(k->mu_s > 0)) continue;
		pbd_real len;
		const pbd_vec3 tan = tangential_slip(w, k, &len);
		if (len > 0 && len <= k->mu_s * k->dn) push_pair(w, k, pbd_v3_scale(tan, -1 / len), len);
	}
}

void pbd_rigid_contacts_friction(pbd_world* w) {
	for (uint32_t i = 0; i < w->nrc; ++i) {
		const pbd_rigid_c* k = &w->rcon[i];
		if (!(k->dn > 0) || !(k->mu_s > 0)) continue;
		pbd_real len;
		const pbd_vec3 tan = tangential_slip(w, k, &len);
		if (!(len > 0)) continue;
		const pbd_real cut = len <= k->mu_s * k->dn ? 1 : PBD_FMIN(k->mu_k * k->dn / len, 1);
		push_pair(w, k, pbd_v3_scale(tan, -1 / len), cut * len);
	}
}

/* The velocity of the contact's point on body `body` (slot + 1; 0: at rest). */
static pbd_vec3 body_velocity(const pbd_world* w, uint32_t body, pbd_vec3 r) {
	if (!body) return pbd_v3(0, 0, 0);
	const pbd_bodies* b = &w->bodies;
	return pbd_v3_add(b->v[body - 1], pbd_v3_cross(b->omega[body - 1], r));
}

/* An impulse p along n between the contact's two points (arms rp, rs): + on the feature's body. */
static void impulse(pbd_world* w, const pbd_rigid_c* k, pbd_vec3 ip, pbd_vec3 is, pbd_real p) {
	pbd_bodies* b = &w->bodies;
	if (k->p) {
		b->v[k->p - 1] = pbd_v3_add(b->v[k->p - 1], pbd_v3_scale(k->n, b->inv_mass[k->p - 1] * p));
		b->omega[k->p - 1] = pbd_v3_add(b->omega[k->p - 1], pbd_v3_scale(ip, p));
	}
	if (k->s) {
		b->v[k->s - 1] = pbd_v3_sub(b->v[k->s - 1], pbd_v3_scale(k->n, b->inv_mass[k->s - 1] * p));
		b->omega[k->s - 1] = pbd_v3_sub(b->omega[k->s - 1], pbd_v3_scale(is, p));
	}
}

void pbd_rigid_contacts_restitution(pbd_world* w, pbd_real h) {
	const pbd_real slow = 2 * pbd_v3_length(w->def.gravity) * h;
	pbd_bodies* b = &w->bodies;
	for (uint32_t i = 0; i < w->nrc; ++i) {
		const pbd_rigid_c* k = &w->rcon[i];
		if (!(k->dn > 0)) continue;
		const bool bounce = k->e > 0 && k->vn0 < -slow;
		if (!bounce && !(k->depth0 > 0)) continue;
		/* The bodies moved with their corrections: both ends' arms to one point again, where the
		 * feature's body carried it, so that the impulses are equal and opposite at one point. */
		pbd_vec3 rp = k->rp, rs = k->rs;
		if (k->p && k->s) rs = pbd_v3_sub(pbd_v3_add(pbd_body_centre(b, k->p - 1), rp), pbd_body_centre(b, k->s - 1));
		const pbd_vec3 rel = pbd_v3_sub(body_velocity(w, k->p, rp), body_velocity(w, k->s, rs));
		const pbd_real vn = pbd_v3_dot(k->n, pbd_v3_add(rel, k->vfix));
		pbd_vec3 ip, is;
		const pbd_real wsum = weight(w, k->p, rp, k->n, &ip) + weight(w, k->s, rs, k->n, &is);
		if (!(wsum > 0)) continue;
		pbd_real target;
		if (bounce) {
			target = -k->e * k->vn0;
		} else {
			/* the push-out of the starting depth taken back from the separating speed */
			const pbd_real back = PBD_FMIN(k->depth0, k->dn) / h;
			target = PBD_FMAX(vn - back, PBD_FMIN(vn, 0));
		}
		impulse(w, k, ip, is, (target - vn) / wsum);
	}
}

uint32_t pbd_world_get_body_contacts(const pbd_world* w, pbd_body_contact* out, uint32_t capacity) {
	if (!w) return 0;
	uint32_t n = 0;
	for (uint32_t k = 0; k < w->nrc; ++k) {
		const pbd_rigid_c* c = &w->rcon[k];
		/* the speculative ones that never closed in are not touching */
		const pbd_real separation = c->sep + c->dn;
		if (!(c->dn > 0) && !(separation <= PBD_CONTACT_TOLERANCE)) continue;
		if (out && n < capacity) {
			const pbd_collider *f = &w->colliders[c->cp], *s = &w->colliders[c->cs];
			out[n] = (pbd_body_contact){
			    {c->cp + 1, f->generation}, {c->cs + 1, s->generation}, c->at, c->n, separation, c->dn};
		}
		n++;
	}
	return n;
}
