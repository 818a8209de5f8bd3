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
 * distance along a segment to a convex set is convex, so an edge along which it rises from both
 * ends is not searched); against a mesh or a height field it is a local minimum. A feature within
 * the shapes' margins plus their motion over the substep makes a contact with the other shape's
 * outward normal n (speculative contacts, as MuJoCo and Box2D keep): the two points must keep
 * (p_feature - p_surface) . n >= margin_a + margin_b. The normal is read where the feature first
 * touched the other shape over the substep when it came from outside (first_touch: a fast body's
 * prediction lies past the middle of a thin one, whose nearest way out leads on through), else
 * at the prediction; a corner on the other shape's surface reads it a little way into its own
 * shape (two equal boxes stacked flush put each corner on the other's edge, where the nearest way
 * out is any of three faces). Both ends push at one point. A pair's geometry is taken from an
 * origin at the pair, with the bodies' centres to the remainder (side_of).
 *
 * The response is Müller et al. 2020's (sections 3.5 and 3.6), with the generalised inverse
 * masses of both ends (model/node.h): in each iteration a contact whose separation, with what the
 * corrections since moved the two points, is below the gap is corrected along n, a correction
 * that later ones made more than enough is taken back, and in the same pass static friction takes
 * the tangential slip off its correction so far, kept within static_friction times the normal
 * correction (kinetic_friction once it slides). After the iterations one more
 * pass settles the contacts body by body from the bottom up along gravity, each body's contacts
 * over and over until they hold, with the lower body of a contact within 45 degrees of gravity
 * held still (shock propagation, Guendelman et al. 2003) and two bodies side by side left to the
 * iterations; a body that others rest on alone is settled first together with them (their
 * contacts on it moving both ends), so that what it carries weighs on it and turns with it, and
 * their contacts start the next substep of the step from the impulses they ended this one with
 * (warm starting). After the velocities, in the same order and holding the same ends: each
 * contact's normal speed becomes e times the speed it approached with where it bounces, else
 * none, and kinetic friction takes off its tangential speed up to kinetic_friction times the
 * normal correction over h, less what static friction took. A pair's friction is the geometric
 * mean of the two shapes' (sqrt(mu_a mu_b), as Box2D and Jolt combine it) and its restitution the
 * larger of the two.
 *
 * Both passes take the bodies' groups in levels (plan_passes): the groups of a level touch no
 * body another of them moves, so they run side by side on the world's threads and give the bits
 * of the passes' order on any number of them.
 *
 * That response is the position solver (PBD_BODY_SOLVER_POSITION). Under the soft step
 * (rigid_soft.c) this file searches the contacts at a step's first substep only, over the motion
 * of the whole step, and keeps them from step to step while their pairs stand still. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collision/collide.h"
#include "collision/self_collision.h"
#include "collision/shape_math.h"
#include "collision/rigid_contact.h"

/* Golden-section steps for the point of an edge nearest a shape: the bracket shrinks to
 * 0.618^20, about 1e-4 of the edge. */
#define PBD_RIGID_SECTION_STEPS 20

/* How far into its own shape, as a share of its distance to the shape's centre, a corner on the
 * other shape's surface reads the normal. */
#define PBD_RIGID_NORMAL_SHIFT PBD_R(0.02)

/* Steps of the search for a point's first touch along its path over the substep. */
#define PBD_RIGID_SWEEP_STEPS 32

/* The settling passes go over one body's contacts at most this often, until a pass changes
 * their points' relative position by no more than PBD_RIGID_SETTLED (m) or their relative speed
 * by no more than PBD_RIGID_SETTLED_SPEED (m/s). */
#define PBD_RIGID_GROUP_SWEEPS  10
#define PBD_RIGID_SETTLED       PBD_R(1e-7)
#define PBD_RIGID_SETTLED_SPEED PBD_R(1e-7)

/* A pair whose shapes moved less than this (m) relative to each other since its contacts were
 * searched in the step keeps them in the next substep, read again where they lie on the shapes:
 * a resting stack is searched once per step. */
#define PBD_RIGID_KEEP PBD_R(1e-5)

/* The soft step keeps a pair's contacts while its shapes move no more than PBD_SOFT_KEEP m, at
 * most PBD_SOFT_KEEP_SHARE of the smaller shape's reach, relative to each other, and its search
 * makes contacts of the features that far beyond the gap (speculative), so that none that
 * comes within the gap meanwhile is missed. */
#define PBD_SOFT_KEEP       PBD_R(0.005)
#define PBD_SOFT_KEEP_SHARE PBD_R(0.02)

/* A kept contact's impulses go to the contact of a fresh search whose feature point lies within
 * this share of the pair's reach of its own (a box's corners lie a reach apart and more). */
#define PBD_SOFT_MATCH PBD_R(0.05)

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

/* One collider of a pair as the pair's search sees it: its poses at the prediction and at the
 * substep's start, the point its velocity is given at, and its velocities, all with positions
 * from an origin at the pair. A body's centre is its rounded part less the origin plus its
 * remainder (bodies.h): ten metres up a float's step is a micrometre, what gravity moves a
 * resting body in a substep of 1/1200 s, and a pair's geometry read from world floats there woke
 * the top of a stack of twenty (its cubes rocked at a few mm/s; in double precision it stood). */
typedef struct side {
	pbd_pose now, start;
	pbd_vec3 centre;   /* the body's centre of mass, or the collider's origin */
	pbd_vec3 v, omega; /* the velocity of `centre`, and the angular velocity */
	uint32_t body;     /* the dynamic body (slot + 1) that contacts move, or 0 */
} side;

static side side_of(const pbd_world* w, const pbd_collider* c, pbd_vec3 origin, pbd_real h) {
	side s;
	s.body = pbd_collider_dynamic_body(w, c);
	if (!c->body) {
		s.now = c->def.pose;
		s.start = c->pose0;
		s.now.position = pbd_v3_sub(s.now.position, origin);
		s.start.position = pbd_v3_sub(s.start.position, origin);
		s.centre = s.now.position;
		s.v = c->def.velocity;
		s.omega = c->def.angular_velocity;
		return s;
	}
	const pbd_bodies* b = &w->bodies;
	const uint32_t i = c->body - 1;
	s.centre = pbd_v3_add(pbd_v3_sub(b->x[i], origin), b->x_lo[i]);
	s.v = b->v[i];
	s.omega = b->omega[i];
	/* the shape's origin from the centre (pbd_body_frame, pbd_collider_follow) */
	const pbd_vec3 arm = pbd_v3_sub(c->local.position, b->center[i]);
	const pbd_quat user = pbd_quat_mul(b->q[i], pbd_quat_conj(b->principal[i]));
	s.now.rotation = c->def.pose.rotation;
	s.now.position = pbd_v3_add(s.centre, pbd_quat_rotate(user, arm));
	/* the substep moved a moving body's centre by v h (bodies.c), which the prediction holds */
	const pbd_vec3 centre0 = b->type[i] == PBD_BODY_STATIC ? s.centre : pbd_v3_sub(s.centre, pbd_v3_scale(s.v, h));
	const pbd_quat user0 = pbd_quat_mul(c->pose0.rotation, pbd_quat_conj(c->local.rotation));
	s.start.rotation = c->pose0.rotation;
	s.start.position = pbd_v3_add(centre0, pbd_quat_rotate(user0, arm));
	return s;
}

/* The signed distance from point p (the pair's frame) to the surface of collider c at its
 * predicted pose `at`, with the outward normal in *n. */
static pbd_real distance_to(const pbd_collider* c, const pbd_shape_ops* ops, pbd_pose at, pbd_vec3 p, pbd_vec3* n) {
	pbd_vec3 ln;
	const pbd_real d = ops->distance(&c->def, pbd_pose_apply_inverse(at, p), &ln);
	*n = pbd_quat_rotate(at.rotation, ln);
	return d;
}

/* The point of segment [a, b] nearest collider c: its parameter, distance and normal. A point
 * (a == b) is its own nearest. */
static pbd_real nearest_on(const pbd_collider* c, const pbd_shape_ops* ops, pbd_pose at, pbd_vec3 a, pbd_vec3 b,
                           pbd_real* t, pbd_vec3* n) {
	const pbd_vec3 u = pbd_v3_sub(b, a);
	if (u.x == 0 && u.y == 0 && u.z == 0) {
		*t = 0;
		return distance_to(c, ops, at, a, n);
	}
	const pbd_real g = PBD_R(0.6180339887498949);
	pbd_real lo = 0, hi = 1, m1 = hi - g, m2 = lo + g;
	pbd_vec3 n1, n2;
	pbd_real f1 = distance_to(c, ops, at, pbd_v3_add(a, pbd_v3_scale(u, m1)), &n1);
	pbd_real f2 = distance_to(c, ops, at, pbd_v3_add(a, pbd_v3_scale(u, m2)), &n2);
	for (int k = 0; k < PBD_RIGID_SECTION_STEPS; ++k) {
		if (f1 <= f2) {
			hi = m2, m2 = m1, f2 = f1;
			m1 = hi - g * (hi - lo);
			f1 = distance_to(c, ops, at, pbd_v3_add(a, pbd_v3_scale(u, m1)), &n1);
		} else {
			lo = m1, m1 = m2, f1 = f2;
			m2 = lo + g * (hi - lo);
			f2 = distance_to(c, ops, at, pbd_v3_add(a, pbd_v3_scale(u, m2)), &n2);
		}
	}
	*t = f1 <= f2 ? m1 : m2;
	*n = f1 <= f2 ? n1 : n2;
	return f1 <= f2 ? f1 : f2;
}

/* Whether the shape is convex, so that the distance to it along a line, outside it, is convex
 * too and a chord through two points of it crosses zero no later than it does. */
static bool convex_shape(pbd_shape_type t) { return t != PBD_SHAPE_MESH && t != PBD_SHAPE_HEIGHTFIELD; }

/* Where the point `local` of side p (its shape's frame; radius r) first comes within the gap of
 * the surface of collider cs (side s) over the substep: its path in the surface's frame, from where
 * both stood at the substep's start to the prediction, taken straight, from *from to *to. Returns
 * the path's parameter at the first touch; 0 when the point started within the gap and moved
 * further than the tolerance; -1 when it moved less (a resting contact, read at the prediction)
 * or does not come within the gap.
 *
 * A point that moves further in a substep than the other shape is thick has passed its middle at
 * the prediction, or left it, and the nearest way out there points on through. The first touch is
 * found by conservative advancement (a distance is 1-Lipschitz, so the point can move that far
 * along its path before it touches), with the chord through the last two distances as the step
 * where the shape is convex. */
static pbd_real first_touch(const side* p, const side* s, const pbd_collider* cs, const pbd_shape_ops* ops,
                            pbd_vec3 local, pbd_real r, pbd_real gap, pbd_vec3* from, pbd_vec3* to) {
	const pbd_real tol = PBD_CONTACT_TOLERANCE;
	const pbd_vec3 p0 = pbd_pose_apply_inverse(s->start, pbd_pose_apply(p->start, local));
	const pbd_vec3 p1 = pbd_pose_apply_inverse(s->now, pbd_pose_apply(p->now, local));
	*from = p0, *to = p1;
	const pbd_vec3 u = pbd_v3_sub(p1, p0);
	const pbd_real len = pbd_v3_length(u);
	if (!(len > tol)) return -1;
	pbd_vec3 ln;
	pbd_real d = ops->distance(&cs->def, p0, &ln) - r - gap;
	if (!(d > tol)) return 0;
	const bool chord = convex_shape(cs->def.type);
	pbd_real t = 0, t_last = 0, d_last = 0;
	for (int k = 0; k < PBD_RIGID_SWEEP_STEPS; ++k) {
		pbd_real next = t + d / len;
		if (chord && k > 0 && d < d_last) {
			/* the chord reaches zero reach / fall further, at or before the shape does */
			const pbd_real fall = d_last - d, reach = d * (t - t_last);
			if (!(reach < fall * (1 - t))) return -1;
			next = PBD_FMAX(next, t + reach / fall);
		}
		if (!(next < 1)) {
			/* past the prediction: touching there, or not at all */
			if (t == 1) return -1;
			next = 1;
		}
		t_last = t, d_last = d, t = next;
		d = ops->distance(&cs->def, pbd_v3_add(p0, pbd_v3_scale(u, t)), &ln) - r - gap;
		if (d <= tol) return t;
	}
	return -1; /* a path that grazes the surface: the prediction's contact holds it */
}

/* The velocity of point x (the pair's frame) of a side. */
static pbd_vec3 velocity_at(const side* s, pbd_vec3 x) {
	return pbd_v3_add(s->v, pbd_v3_cross(s->omega, pbd_v3_sub(x, s->centre)));
}

/* How far point x (the pair's frame, at the prediction) of a side moved over the substep. */
static pbd_vec3 moved_from_start(const side* s, pbd_vec3 x) {
	const pbd_vec3 local = pbd_pose_apply_inverse(s->now, x);
	const pbd_vec3 d = pbd_v3_sub(s->now.position, s->start.position);
	return pbd_v3_add(d,
	                  pbd_v3_sub(pbd_quat_rotate(s->now.rotation, local), pbd_quat_rotate(s->start.rotation, local)));
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

/* Whether the distance along an edge to a convex shape, da and db at its ends with slopes sa and
 * sb there (per the edge's length), may come nearer between them than both ends by more than the
 * tolerance. The distance is convex along the edge, so it lies above both ends' tangents, and its
 * least value above where they cross: an edge that only grazes, or whose slopes are rounding
 * (a box resting tilted by a hair on another), is not searched. */
static bool edge_may_dip(pbd_real da, pbd_real db, pbd_real sa, pbd_real sb) {
	const pbd_real tol = PBD_CONTACT_TOLERANCE;
	if (!(sa < -tol) || !(sb > tol)) return false;
	/* da + sa t = db + sb (t - 1) */
	const pbd_real t = (db - sb - da) / (sa - sb);
	const pbd_real least = da + sa * PBD_FMIN(PBD_FMAX(t, 0), 1);
	return least < PBD_FMIN(da, db) - tol;
}

/* The distances at the prediction of a shape's first corners, which the edges between them read
 * again: a box's eight. */
#define PBD_RIGID_CORNER_CACHE 8
typedef struct corner_cache {
	pbd_vec3 at[PBD_RIGID_CORNER_CACHE], n[PBD_RIGID_CORNER_CACHE]; /* the corner (its shape's frame), the normal */
	pbd_real d[PBD_RIGID_CORNER_CACHE];
	uint32_t count;
} corner_cache;

/* The distance to collider c at its pose `at` of the point `local` of a shape (`world` in the
 * pair's frame), from the cache where a corner there was seen. */
static pbd_real corner_distance(corner_cache* seen, const pbd_collider* c, const pbd_shape_ops* ops, pbd_pose at,
                                pbd_vec3 local, pbd_vec3 world, pbd_vec3* n) {
	for (uint32_t k = 0; k < seen->count; ++k)
		if (seen->at[k].x == local.x && seen->at[k].y == local.y && seen->at[k].z == local.z) {
			*n = seen->n[k];
			return seen->d[k];
		}
	const pbd_real d = distance_to(c, ops, at, world, n);
	/* an edge's end outside the other's reach is no feature, but the other edges there read it */
	if (seen->count < PBD_RIGID_CORNER_CACHE) {
		seen->at[seen->count] = local, seen->n[seen->count] = *n, seen->d[seen->count] = d;
		seen->count++;
	}
	return d;
}

/* What the contacts of collider `fp`'s features against collider `fs`'s surface share. */
typedef struct pair_ctx {
	uint32_t fp, fs;
	side sp, ss;
	pbd_vec3 origin; /* the pair's frame: from the centre of a body of the pair */
	pbd_vec3 up;     /* against gravity: shock propagation (pbd_rigid_contacts_settle) and its groups */
	pbd_real gap, mu_s, mu_k, e;
	pbd_real hp, hs; /* the two centres' heights along up */
	pbd_real spec;   /* how much further than the gap and the motion a feature still makes a contact */
	pbd_real ahead;  /* the substeps whose motion the search covers: all of the step's for the soft step */
} pair_ctx;

static pair_ctx pair_of(const pbd_world* w, uint32_t fp, uint32_t fs) {
	const pbd_collider* cp = &w->colliders[fp];
	const pbd_collider* cs = &w->colliders[fs];
	pair_ctx c;
	c.fp = fp, c.fs = fs;
	const pbd_real h = w->def.dt / (pbd_real)w->nsub;
	const pbd_collider* anchor = cs->body ? cs : cp;
	c.origin = anchor->body ? w->bodies.x[anchor->body - 1] : pbd_v3(0, 0, 0);
	c.sp = side_of(w, cp, c.origin, h);
	c.ss = side_of(w, cs, c.origin, h);
	c.gap = cp->def.margin + cs->def.margin;
	c.mu_s = PBD_SQRT(cp->def.static_friction * cs->def.static_friction);
	c.mu_k = PBD_FMIN(PBD_SQRT(cp->def.kinetic_friction * cs->def.kinetic_friction), c.mu_s);
	c.e = PBD_FMAX(cp->def.restitution, cs->def.restitution);
	const pbd_real g = pbd_v3_length(w->def.gravity);
	c.up = g > 0 ? pbd_v3_scale(w->def.gravity, -1 / g) : pbd_v3(0, 0, 0);
	c.hp = pbd_v3_dot(c.up, c.sp.centre), c.hs = pbd_v3_dot(c.up, c.ss.centre);
	c.spec = 0;
	c.ahead = pbd_rigid_per_step(w) ? (pbd_real)w->nsub : 1;
	return c;
}

/* A contact between the feature's surface point pf and the other surface's point ps (the pair's
 * frame, at the prediction), n the other surface's outward normal, d their separation along it,
 * slip what the two points moved over the substep. */
static bool make_contact(pbd_world* w, const pair_ctx* c, pbd_vec3 pf, pbd_vec3 ps, pbd_vec3 n, pbd_real d,
                         pbd_vec3 slip) {
	const side *sp = &c->sp, *ss = &c->ss;
	const uint32_t bp = sp->body, bs = ss->body;
	pbd_rigid_c r;
	r.p = bp, r.s = bs, r.cp = c->fp, r.cs = c->fs;
	r.n = n;
	/* Both ends push at one point, between the two along n from the feature's (the surface's
	 * point of a first touch lies back along the path): a tangential push at two points
	 * apart along n would be a couple, and turn the pair. */
	const pbd_vec3 mid = pbd_v3_sub(pf, pbd_v3_scale(n, d / 2));
	r.at = pbd_v3_add(c->origin, mid);
	r.rp = bp ? pbd_v3_sub(mid, sp->centre) : pbd_v3(0, 0, 0);
	r.rs = bs ? pbd_v3_sub(mid, ss->centre) : pbd_v3(0, 0, 0);
	r.slip = slip;
	r.sep = r.sep0 = d - c->gap;
	r.dn = r.lambda = r.pn = r.c_end = r.pstep = 0;
	r.ft = r.pt = pbd_v3(0, 0, 0);
	r.budget = 0;
	r.vn0 = pbd_v3_dot(n, pbd_v3_sub(velocity_at(sp, pf), velocity_at(ss, ps)));
	/* The ends that no contact moves keep their velocity through the substep. */
	r.vfix = pbd_v3_sub(bp ? pbd_v3(0, 0, 0) : velocity_at(sp, pf), bs ? pbd_v3(0, 0, 0) : velocity_at(ss, ps));
	r.mu_s = c->mu_s, r.mu_k = c->mu_k, r.e = c->e;
	r.wp = pbd_rigid_weight(w, bp, r.rp, n, &r.ip);
	r.ws = pbd_rigid_weight(w, bs, r.rs, n, &r.is);
	if (pbd_rigid_per_step(w)) pbd_soft_tangents(w, &r);
	/* The lower of two bodies held under shock propagation where the normal is within 45
	 * degrees of gravity; the group: the end that moves then, the one that moves at all,
	 * or of two side by side the one further up (the later slot on a tie). */
	r.held = 0;
	if (bp && bs && PBD_FABS(pbd_v3_dot(n, c->up)) > PBD_R(0.7071)) r.held = c->hp < c->hs ? bp : bs;
	if (!bp || !bs)
		r.group = bp ? bp : bs;
	else if (r.held)
		r.group = r.held == bp ? bs : bp;
	else
		r.group = c->hp > c->hs || (c->hp == c->hs && bp > bs) ? bp : bs;
	/* where the two points and the normal are on their shapes, for the substeps that keep it */
	r.lp = pbd_pose_apply_inverse(sp->now, pf);
	r.ls = pbd_pose_apply_inverse(ss->now, ps);
	r.ln = pbd_quat_rotate(pbd_quat_conj(ss->now.rotation), n);
	return push_contact(w, &r);
}

/* The features of the pair's collider `fp` against the surface of its collider `fs`: contacts
 * into w->rcon. */
static bool features_against(pbd_world* w, const pair_ctx* pair, pbd_vec3 slo, pbd_vec3 shi) {
	const uint32_t fs = pair->fs;
	const pbd_collider* cp = &w->colliders[pair->fp];
	const pbd_collider* cs = &w->colliders[fs];
	const pbd_shape_ops* ops = pbd_shape_ops_of(cs->def.type);
	/* The features that pass through the other's box over the substep, not only those in it at
	 * the prediction: the local boxes of both poses, and what lies between. */
	pbd_vec3 llo, lhi, llo0, lhi0;
	pbd_pose_local_box(cp->def.pose, slo, shi, &llo, &lhi);
	pbd_pose_local_box(cp->pose0, slo, shi, &llo0, &lhi0);
	llo = pbd_v3(PBD_FMIN(llo.x, llo0.x), PBD_FMIN(llo.y, llo0.y), PBD_FMIN(llo.z, llo0.z));
	lhi = pbd_v3(PBD_FMAX(lhi.x, lhi0.x), PBD_FMAX(lhi.y, lhi0.y), PBD_FMAX(lhi.z, lhi0.z));
	if (!gather(w, cp, llo, lhi)) return false;
	const pair_ctx pc = *pair;
	const side sp = pc.sp, ss = pc.ss;
	const pbd_real gap = pc.gap;
	if (!sp.body && !ss.body) return true;
	const feature* f = w->rfeat;
	const bool convex = convex_shape(cs->def.type);
	corner_cache seen;
	seen.count = 0;
	/* the centre of the features' shape: its bounds' middle */
	pbd_vec3 blo, bhi, mid_p = pbd_v3(0, 0, 0);
	if (pbd_shape_ops_of(cp->def.type)->bounds(&cp->def, &blo, &bhi))
		mid_p = pbd_v3_scale(pbd_v3_add(blo, bhi), PBD_R(0.5));
	for (uint32_t k = 0; k < w->nrfeat; ++k) {
		const pbd_vec3 a = pbd_pose_apply(sp.now, f[k].a), b = pbd_pose_apply(sp.now, f[k].b);
		pbd_real t, da = 0, db = 0;
		pbd_vec3 n;
		if (f[k].ends) {
			/* An edge counts between its ends only, where it comes nearer than both (its
			 * corners are features of their own). Along a line the distance to a convex shape
			 * is convex: where it does not fall from either end toward the other, the ends are
			 * nearest, and the search is skipped (a face resting on a face has every edge so). */
			pbd_vec3 na, nb;
			da = corner_distance(&seen, cs, ops, ss.now, f[k].a, a, &na);
			db = corner_distance(&seen, cs, ops, ss.now, f[k].b, b, &nb);
			const pbd_vec3 u = pbd_v3_sub(b, a);
			if (convex && !edge_may_dip(da, db, pbd_v3_dot(na, u), pbd_v3_dot(nb, u))) continue;
		}
		pbd_real dist = nearest_on(cs, ops, ss.now, a, b, &t, &n);
		if (!f[k].ends && seen.count < PBD_RIGID_CORNER_CACHE) {
			seen.at[seen.count] = f[k].a, seen.n[seen.count] = n, seen.d[seen.count] = dist;
			seen.count++;
		}
		if (f[k].ends) {
			const pbd_real tol = PBD_CONTACT_TOLERANCE;
			if (!(t > 0 && t < 1) || !(dist < da - tol) || !(dist < db - tol)) continue;
		}
		const pbd_vec3 core = pbd_v3_add(a, pbd_v3_scale(pbd_v3_sub(b, a), t));
		/* Where the normal is read: at the prediction, or for a point that came from outside the
		 * gap, where it first touched (the other shape carried to its predicted pose), so that a
		 * fast point is sent back the way it came; its slip is then what it moved since. A point
		 * that started within the gap and moved far reads it where it started. An edge's point is
		 * the one nearest at the prediction, on its own path. */
		pbd_vec3 at_core = core, centre_p = pbd_pose_apply(sp.now, mid_p), touch_slip = pbd_v3(0, 0, 0);
		bool swept = false;
		{
			const pbd_vec3 local = pbd_v3_add(f[k].a, pbd_v3_scale(pbd_v3_sub(f[k].b, f[k].a), t));
			pbd_vec3 from, to;
			const pbd_real tt = first_touch(&sp, &ss, cs, ops, local, f[k].r, gap, &from, &to);
			if (tt >= 0) {
				const pbd_vec3 c0 = pbd_pose_apply_inverse(ss.start, pbd_pose_apply(sp.start, mid_p));
				const pbd_vec3 c1 = pbd_pose_apply_inverse(ss.now, pbd_pose_apply(sp.now, mid_p));
				at_core = pbd_pose_apply(ss.now, pbd_v3_add(from, pbd_v3_scale(pbd_v3_sub(to, from), tt)));
				centre_p = pbd_pose_apply(ss.now, pbd_v3_add(c0, pbd_v3_scale(pbd_v3_sub(c1, c0), tt)));
				touch_slip = pbd_quat_rotate(ss.now.rotation, pbd_v3_scale(pbd_v3_sub(to, from), 1 - tt));
				dist = distance_to(cs, ops, ss.now, at_core, &n);
				swept = true;
			}
		}
		pbd_real dist_n = dist;
		if (f[k].r == 0) {
			/* A corner on the other shape's edge (two equal boxes stacked flush) has no one
			 * normal there: the nearest way out turns with the rounding. The normal is read a
			 * little way into the corner's own shape, toward its centre (the side it came from),
			 * and the distance is then the corner's height over that face's plane, which a convex
			 * shape lies behind. */
			const pbd_vec3 in = pbd_v3_sub(centre_p, at_core);
			const pbd_real len = pbd_v3_length(in);
			const pbd_real shift = PBD_RIGID_NORMAL_SHIFT * len;
			if (len > 0 && dist < shift) {
				pbd_vec3 ns;
				const pbd_vec3 sh = pbd_v3_add(at_core, pbd_v3_scale(in, shift / len));
				const pbd_real ds = distance_to(cs, ops, ss.now, sh, &ns);
				/* the face's point nearest the shifted point, and the corner's height over it */
				const pbd_vec3 q = pbd_v3_sub(sh, pbd_v3_scale(ns, ds));
				n = ns;
				dist_n = pbd_v3_dot(ns, pbd_v3_sub(at_core, q));
			}
		}
		/* the feature's surface point, at the prediction, and the other surface's point */
		const pbd_vec3 pf = pbd_v3_sub(core, pbd_v3_scale(n, f[k].r));
		const pbd_vec3 ps = pbd_v3_sub(at_core, pbd_v3_scale(n, dist_n));
		const pbd_real d = pbd_v3_dot(n, pbd_v3_sub(pf, ps));
		const pbd_vec3 slip = swept ? touch_slip : pbd_v3_sub(moved_from_start(&sp, pf), moved_from_start(&ss, ps));
		/* Within the gap, or within what the two points moved over the substep. */
		if (!swept && !(d < gap + pbd_v3_length(slip) * pc.ahead + PBD_CONTACT_TOLERANCE + pc.spec)) continue;
		if (!make_contact(w, &pc, pf, ps, n, d, slip)) return false;
	}
	return true;
}

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

/* The pairs of colliders that may touch in this substep (one of them on a dynamic body, not both
 * on one body, their boxes over the substep overlapping), sorted, into w->rpairs; returns how
 * many, or UINT32_MAX when out of memory. Sort and sweep on the boxes' low x; an unbounded shape
 * (a plane) meets every collider on a dynamic body. */
static pbd_real reach_of(const pbd_collider* c);

/* The soft step searches once per step: how much further than over this substep the collider may
 * move over the rest of the step, at the pace of this substep. */
static pbd_real rest_of_step(const pbd_world* w, const pbd_collider* c) {
	if (!pbd_rigid_per_step(w) || w->nsub < 2) return 0;
	const pbd_quat d = pbd_quat_mul(c->def.pose.rotation, pbd_quat_conj(c->pose0.rotation));
	const pbd_real reach = reach_of(c);
	const pbd_real turn = reach < PBD_REAL_MAX ? 2 * reach * pbd_v3_length(pbd_v3(d.x, d.y, d.z)) : 0;
	const pbd_real shift = pbd_v3_length(pbd_v3_sub(c->def.pose.position, c->pose0.position));
	return (pbd_real)(w->nsub - 1) * (shift + turn);
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
		} else if (!pbd_collider_world_box(c, poses, 2, c->def.margin + PBD_CONTACT_TOLERANCE + rest_of_step(w, c),
		                                   &b->lo, &b->hi)) {
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

/* A float's bits as an unsigned key in the float's order. */
static uint32_t order_key(pbd_real x) {
	const float f = (float)x;
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return (u & 0x80000000u) ? ~u : u | 0x80000000u;
}

/* Where in w->rpairs, past the passes' list and order_contacts' scratch, lie the contacts of the
 * bodies body m carries alone (each resting on m and on nothing else; pbd_rigid_c.held is m + 1):
 * [carried + from[m], carried + from[m + 1]), in the passes' order. */
static uint64_t* carried_of(const pbd_world* w, uint64_t** from) {
	const uint32_t n = w->nrc, nb = w->bodies.n;
	uint64_t* carried = w->rpairs + (n + 1) + (nb + 1) + nb;
	*from = carried + n;
	return carried;
}

/* Where the group that starts at list[a] ends. */
static uint32_t group_end(const pbd_world* w, uint32_t a) {
	const uint64_t* list = w->rpairs;
	const uint32_t m = w->rcon[list[a]].group;
	uint32_t e = a + 1;
	while (list[e] != UINT64_MAX && w->rcon[list[e]].group == m) ++e;
	return e;
}

static uint32_t max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }

/* One body's access in a group of a pass: `moves` it, or only reads where it is. With `level`
 * 0 it raises *at to what the access must come after: the last level that moved the body, and
 * for a move also the last that read it; else it records the access at `level`. */
static void access(uint32_t body, bool moves, uint32_t level, uint32_t* at, uint32_t* moved, uint32_t* read) {
	if (!body) return;
	const uint32_t i = body - 1;
	if (!level) {
		*at = max_u32(*at, moved[i]);
		if (moves) *at = max_u32(*at, read[i]);
	} else if (moves) {
		moved[i] = level;
	} else {
		read[i] = max_u32(read[i], level);
	}
}

/* The accesses of the group [a, e) of the passes' list (with the contacts [c0, c1) of the bodies
 * it carries, in the settling pass) at `level`, or with level 0 the level it must come after. The
 * settling pass leaves two bodies side by side alone (settle_group) and moves both ends of a
 * carried body's contact; both passes move each end that is not held. */
static uint32_t group_access(const pbd_world* w, uint32_t a, uint32_t e, const uint64_t* c0, const uint64_t* c1,
                             bool settling, uint32_t level, uint32_t* moved, uint32_t* read) {
	const uint64_t* list = w->rpairs;
	uint32_t at = 0;
	for (uint32_t q = a; q < e; ++q) {
		const pbd_rigid_c* k = &w->rcon[list[q]];
		if (settling && !k->held && k->p && k->s) continue;
		access(k->p, k->p != k->held, level, &at, moved, read);
		access(k->s, k->s != k->held, level, &at, moved, read);
	}
	for (const uint64_t* c = c0; c < c1; ++c) {
		const pbd_rigid_c* k = &w->rcon[*c];
		access(k->p, true, level, &at, moved, read);
		access(k->s, true, level, &at, moved, read);
	}
	return at;
}

/* The levels of one pass (pbd_rigid_contacts_settle or _velocities) into order (the groups'
 * starts, level by level) and first (where each level starts; returns the level count). A group
 * comes a level after every group before it in the list that moved a body it touches or read one
 * it moves, so that the groups of a level touch nothing another of them moves: they run side by
 * side, on any number of threads, to the bits of the list's order. */
static uint32_t plan_pass(const pbd_world* w, bool settling, const uint32_t* starts, uint32_t ng, uint32_t* order,
                          uint32_t* first, uint32_t* level, uint32_t* moved, uint32_t* read) {
	const uint32_t nb = w->bodies.n;
	const uint64_t* list = w->rpairs;
	uint64_t* from;
	const uint64_t* carried = carried_of(w, &from);
	memset(moved, 0, nb * sizeof *moved);
	memset(read, 0, nb * sizeof *read);
	uint32_t levels = 0;
	for (uint32_t g = 0; g < ng; ++g) {
		const uint32_t a = starts[g], e = group_end(w, a), m = w->rcon[list[a]].group - 1;
		const uint64_t *c0 = settling ? carried + from[m] : NULL, *c1 = settling ? carried + from[m + 1] : NULL;
		level[g] = group_access(w, a, e, c0, c1, settling, 0, moved, read) + 1;
		group_access(w, a, e, c0, c1, settling, level[g], moved, read);
		levels = max_u32(levels, level[g]);
	}
	memset(first, 0, (levels + 1) * sizeof *first);
	for (uint32_t g = 0; g < ng; ++g) first[level[g]]++;
	for (uint32_t l = 0; l < levels; ++l) first[l + 1] += first[l];
	/* first[l] now ends level l (1-based); each level's groups in the list's order */
	for (uint32_t g = ng; g-- > 0;) order[--first[level[g]]] = starts[g];
	/* first[l] starts level l + 1 */
	for (uint32_t l = 0; l < levels; ++l) first[l] = first[l + 1];
	first[levels] = ng;
	return levels;
}

/* The schedule of both passes (pbd_world.rsched): the groups' starts in the list's order, then
 * per pass the starts level by level and where each level starts, then scratch. */
static bool plan_passes(pbd_world* w) {
	const uint32_t nb = w->bodies.n;
	const uint64_t need = 8 * (uint64_t)nb + 4;
	if (need > UINT32_MAX ||
	    !pbd_grow_to(&w->mem, (void**)&w->rsched, sizeof *w->rsched, &w->cap_rsched, (uint32_t)need))
		return false;
	const uint64_t* list = w->rpairs;
	uint32_t* starts = w->rsched;
	uint32_t ng = 0;
	for (uint32_t a = 0; list[a] != UINT64_MAX; a = group_end(w, a)) starts[ng++] = a;
	uint32_t *settle = starts + ng, *settle_first = settle + ng, *velocity = settle_first + ng + 1,
	         *velocity_first = velocity + ng, *level = velocity_first + ng + 1, *moved = level + ng, *read = moved + nb;
	w->nrgroup = ng;
	w->nrlevel_settle = plan_pass(w, true, starts, ng, settle, settle_first, level, moved, read);
	w->nrlevel_velocity = plan_pass(w, false, starts, ng, velocity, velocity_first, level, moved, read);
	return true;
}

/* The order the passes take the contacts in, into w->rpairs once the search is done with it
 * (indices, ended by UINT64_MAX): by the body whose group each is in (pbd_rigid_c.group), the
 * groups from the bottom up along gravity, then by slot; each group's contacts in the order the
 * search made them. Then, by body, the contacts of the bodies it carries (carried_of). */
static bool order_contacts(pbd_world* w) {
	const uint32_t n = w->nrc, nb = w->bodies.n;
	const uint64_t need = 2 * (uint64_t)n + 3 * (uint64_t)nb + 3;
	if (need > UINT32_MAX ||
	    !pbd_grow_to(&w->mem, (void**)&w->rpairs, sizeof *w->rpairs, &w->cap_rpairs, (uint32_t)need))
		return false;
	uint64_t *list = w->rpairs, *at = list + n + 1, *groups = at + nb + 1;
	const pbd_real g = pbd_v3_length(w->def.gravity);
	const pbd_vec3 up = g > 0 ? pbd_v3_scale(w->def.gravity, -1 / g) : pbd_v3(0, 0, 0);
	memset(at, 0, (nb + 1) * sizeof *at);
	for (uint32_t k = 0; k < n; ++k) at[w->rcon[k].group - 1]++;
	uint32_t ng = 0;
	for (uint32_t m = 0; m < nb; ++m)
		if (at[m]) groups[ng++] = (uint64_t)(g > 0 ? order_key(pbd_v3_dot(up, w->bodies.x[m])) : 0) << 32 | m;
	if (ng > 1) qsort(groups, ng, sizeof *groups, pbd_u64_cmp);
	uint64_t next = 0;
	for (uint32_t q = 0; q < ng; ++q) {
		const uint32_t m = (uint32_t)groups[q];
		const uint64_t count = at[m];
		at[m] = next;
		next += count;
	}
	for (uint32_t k = 0; k < n; ++k) list[at[w->rcon[k].group - 1]++] = k;
	list[n] = UINT64_MAX;
	/* What each body rests on (the held ends of its contacts): one body (slot + 1), or
	 * UINT64_MAX for more than one, or for a collider that is no dynamic body besides. */
	uint64_t* on = groups;
	memset(on, 0, nb * sizeof *on);
	for (uint32_t k = 0; k < n; ++k) {
		const pbd_rigid_c* c = &w->rcon[k];
		uint64_t* u = &on[c->group - 1];
		if (c->held)
			*u = *u == 0 || *u == c->held ? c->held : UINT64_MAX;
		else if ((!c->p || !c->s) && PBD_FABS(pbd_v3_dot(c->n, up)) > PBD_R(0.7071))
			*u = UINT64_MAX;
	}
	uint64_t* from;
	uint64_t* carried = carried_of(w, &from);
	memset(from, 0, (nb + 1) * sizeof *from);
	for (uint32_t k = 0; k < n; ++k)
		if (w->rcon[k].held && on[w->rcon[k].group - 1] == w->rcon[k].held) from[w->rcon[k].held]++;
	for (uint32_t m = 0; m < nb; ++m) from[m + 1] += from[m];
	memcpy(at, from, nb * sizeof *at);
	for (uint32_t q = 0; q < n; ++q) {
		const pbd_rigid_c* c = &w->rcon[list[q]];
		if (c->held && on[c->group - 1] == c->held) carried[at[c->held - 1]++] = list[q];
	}
	/* the soft step's passes take the list in turn */
	return pbd_rigid_per_step(w) || plan_passes(w);
}

/* The reach of a shape from its frame's origin: the radius of a ball there that holds it, or
 * infinity (a plane). */
static pbd_real reach_of(const pbd_collider* c) {
	pbd_vec3 lo, hi;
	if (!pbd_shape_ops_of(c->def.type)->bounds(&c->def, &lo, &hi)) return PBD_REAL_MAX;
	const pbd_vec3 far = pbd_v3(PBD_FMAX(PBD_FABS(lo.x), PBD_FABS(hi.x)), PBD_FMAX(PBD_FABS(lo.y), PBD_FABS(hi.y)),
	                            PBD_FMAX(PBD_FABS(lo.z), PBD_FABS(hi.z)));
	return pbd_v3_length(far);
}

/* Where the pair's shape of smaller reach stands in the other's frame (c: the pair's context
 * with i's features against j). */
static void relative_pose(const pair_ctx* c, bool i_moves, pbd_vec3* at, pbd_quat* turn) {
	const pbd_pose a = i_moves ? c->sp.now : c->ss.now, b = i_moves ? c->ss.now : c->sp.now;
	const pbd_quat inv = pbd_quat_conj(b.rotation);
	*at = pbd_quat_rotate(inv, pbd_v3_sub(a.position, b.position));
	*turn = pbd_quat_mul(inv, a.rotation);
}

/* Whether pair `k` of this substep stands, relative to itself, within PBD_RIGID_KEEP of where its
 * contacts were searched: then none of its points moved further, and its contacts are read again
 * from where they lie on the two shapes. */
static pbd_real keep_distance(const pbd_world* w, pbd_real reach) {
	return pbd_rigid_per_step(w) ? PBD_FMIN(PBD_SOFT_KEEP, PBD_SOFT_KEEP_SHARE * reach) : PBD_RIGID_KEEP;
}

static bool still_close(const pbd_world* w, const pbd_rigid_pair* k, const pair_ctx* c) {
	if (!(k->reach < PBD_REAL_MAX)) return false;
	pbd_vec3 at;
	pbd_quat turn;
	relative_pose(c, k->i_moves, &at, &turn);
	const pbd_quat d = pbd_quat_mul(pbd_quat_conj(k->turn), turn);
	/* a turn by angle a has |(x, y, z)| = sin(a / 2): a point at distance r moves 2 r sin(a / 2) */
	const pbd_real moved = pbd_v3_length(pbd_v3_sub(at, k->at)) + 2 * k->reach * pbd_v3_length(pbd_v3(d.x, d.y, d.z));
	return moved <= keep_distance(w, k->reach);
}

/* A pass that holds the ends shock propagation holds, or none. */
typedef enum pass_kind { PASS_BOTH, PASS_SHOCK } pass_kind;

/* Whether end `body` (slot + 1) of contact k stays put in this pass. */
static bool held(const pbd_rigid_c* k, uint32_t body, pass_kind pass) { return pass == PASS_SHOCK && body == k->held; }

/* A correction of `amount` m along the contact's normal between its two points, shared by the
 * generalised inverse masses of the ends it moves: + on the feature's body. */
static void push_normal(pbd_world* w, pbd_rigid_c* k, pbd_real amount, pass_kind pass) {
	const pbd_real wp = held(k, k->p, pass) ? 0 : k->wp, ws = held(k, k->s, pass) ? 0 : k->ws;
	const pbd_real wsum = wp + ws;
	if (!(wsum > 0)) return;
	const pbd_real dl = amount / wsum;
	if (wp > 0) pbd_node_body_push(&w->bodies, k->p - 1, k->n, k->ip, dl);
	if (ws > 0) pbd_node_body_push(&w->bodies, k->s - 1, k->n, k->is, -dl);
	k->lambda += dl;
}

/* The kept contacts [first, first + count) of the last substep, read again at this substep's
 * prediction: each one's two points and normal where they lie on their shapes. */
static bool contacts_again(pbd_world* w, const pbd_rigid_pair* k, const pair_ctx* ij, const pair_ctx* ji) {
	for (uint32_t q = k->first; q < k->first + k->count; ++q) {
		const pbd_rigid_c* old = &w->rkeep[q];
		const pair_ctx* c = old->cp == ij->fp ? ij : ji;
		const pbd_vec3 pf = pbd_pose_apply(c->sp.now, old->lp), ps = pbd_pose_apply(c->ss.now, old->ls);
		const pbd_vec3 n = pbd_quat_rotate(c->ss.now.rotation, old->ln);
		const pbd_real d = pbd_v3_dot(n, pbd_v3_sub(pf, ps));
		const pbd_vec3 slip = pbd_v3_sub(moved_from_start(&c->sp, pf), moved_from_start(&c->ss, ps));
		const uint32_t before = w->nrc;
		if (!make_contact(w, c, pf, ps, n, d, slip)) return false;
		if (w->nrc > before) {
			/* the points where the search found them, not their round trip through the poses */
			pbd_rigid_c* now = &w->rcon[w->nrc - 1];
			now->lp = old->lp, now->ls = old->ls, now->ln = old->ln;
			/* Warm start: the contact starts from the impulse it ended the last substep with
			 * (kept for a body on the one body that carries it, pbd_rigid_contacts_settle), on
			 * both ends. The settling pass holds the lower body, so what it pushed a body up
			 * with reaches the one below only here, a substep later; from a cold start the
			 * settling pass below an overhanging upper part did not release the edge it lifts
			 * from in its ten sweeps. The iterations take back what the new poses no longer
			 * need. */
			now->pn = old->pn, now->pt = old->pt;
			if (old->lambda > 0) {
				push_normal(w, now, old->lambda * (now->wp + now->ws), PASS_BOTH);
				now->dn = old->lambda * (now->wp + now->ws);
			}
		}
	}
	return true;
}

/* The soft step keeps its contacts and their impulses from step to step (warm starting). */
void pbd_rigid_contacts_begin_step(pbd_world* w) {
	if (!pbd_rigid_per_step(w)) w->rkeep_valid = false;
	w->rsub = 0;
	w->rsearched = false;
}

void pbd_rigid_contacts_forget(pbd_world* w) { w->rkeep_valid = false; }

const char* pbd_rigid_contacts_check_kept(const pbd_world* w) {
	for (uint32_t k = 0; k < w->nrpair; ++k) {
		const pbd_rigid_pair* r = &w->rpair[k];
		const uint32_t i = (uint32_t)(r->key >> 32), j = (uint32_t)r->key;
		if (i >= j || j >= w->nc) return "a pair's colliders out of range";
		if (k > 0 && r->key <= w->rpair[k - 1].key) return "pairs out of order";
		const pbd_quat t = r->turn;
		const pbd_real len = PBD_SQRT(t.x * t.x + t.y * t.y + t.z * t.z + t.w * t.w);
		if (!pbd_v3_is_finite(r->at) || !(PBD_FABS(len - 1) < PBD_R(1e-3)) ||
		    !(r->reach > 0 && (pbd_is_finite(r->reach) || r->reach == PBD_REAL_MAX)))
			return "a pair's pose or reach out of range";
		for (uint32_t q = r->first; q < r->first + r->count; ++q) {
			const pbd_rigid_c* c = &w->rkeep[q];
			if (c->cp != i && c->cp != j) return "a contact's collider is not of its pair";
			/* points within a kilometre of their shapes' frames keep the products of a pose finite */
			const pbd_real far = PBD_R(1e3);
			if (!(pbd_v3_length(c->lp) < far) || !(pbd_v3_length(c->ls) < far) || !pbd_v3_is_finite(c->pt) ||
			    !pbd_is_finite(c->pn) || c->pn < 0)
				return "a contact's point or impulse out of range";
			const pbd_real n = pbd_v3_length(c->ln);
			if (!(PBD_FABS(n - 1) < PBD_R(1e-3))) return "a contact's normal is not a unit vector";
		}
	}
	return NULL;
}

/* A fresh search's contacts [first, w->nrc) of a pair the last substep had too (`old`) start
 * from the impulses of the kept contact of the same shape whose feature point lies nearest, within
 * PBD_SOFT_MATCH of the pair's reach. */
static void match_impulses(pbd_world* w, const pbd_rigid_pair* old, uint32_t first) {
	const pbd_real tol = PBD_SOFT_MATCH * old->reach;
	for (uint32_t q = first; q < w->nrc; ++q) {
		pbd_rigid_c* now = &w->rcon[q];
		pbd_real best = tol * tol;
		const pbd_rigid_c* from = NULL;
		for (uint32_t o = old->first; o < old->first + old->count; ++o) {
			const pbd_rigid_c* k = &w->rkeep[o];
			if (k->cp != now->cp) continue;
			const pbd_vec3 e = pbd_v3_sub(k->lp, now->lp);
			const pbd_real d = pbd_v3_dot(e, e);
			if (d <= best) best = d, from = k;
		}
		if (from) now->pn = from->pn, now->pt = from->pt;
	}
}

pbd_status pbd_rigid_contacts_find(pbd_world* w) {
	w->rsub++;
	if (pbd_rigid_per_step(w) && w->rsub > 1 && w->rsearched) {
		if (pbd_avbd_step(w))
			pbd_avbd_advance(w);
		else
			pbd_soft_advance(w);
		return PBD_OK;
	}
	w->nrc = 0;
	w->rigid_capped = false;
	const bool keep = w->rkeep_valid;
	w->rkeep_valid = false;
	if (!w->bodies.alive || w->nc < 2) return PBD_OK;
	const uint32_t npairs = broad_phase(w);
	if (npairs == UINT32_MAX ||
	    !pbd_grow_to(&w->mem, (void**)&w->rpair_next, sizeof *w->rpair_next, &w->cap_rpair_next, npairs))
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for the bodies' contacts");
	/* Past the bound the search stops: the pairs after it, in their sorted order, keep none. */
	bool found = true;
	const uint32_t nkept = keep ? w->nrpair : 0;
	uint32_t o = 0, made = 0;
	for (uint32_t k = 0; k < npairs && w->nrc < contact_limit(w) && found; ++k) {
		const uint64_t key = w->rpairs[k];
		const uint32_t i = (uint32_t)(key >> 32), j = (uint32_t)key;
		const uint32_t first = w->nrc;
		pair_ctx ij = pair_of(w, i, j), ji = pair_of(w, j, i);
		pbd_rigid_pair* rec = &w->rpair_next[made++];
		while (o < nkept && w->rpair[o].key < key) ++o;
		if (o < nkept && w->rpair[o].key == key && still_close(w, &w->rpair[o], &ij)) {
			found = contacts_again(w, &w->rpair[o], &ij, &ji);
			*rec = w->rpair[o];
		} else {
			const pbd_box3 bi = w->rbox[i], bj = w->rbox[j];
			/* Each shape's features within the other's box, against the other's surface. */
			const pbd_vec3 olo =
			    pbd_v3(PBD_FMAX(bi.lo.x, bj.lo.x), PBD_FMAX(bi.lo.y, bj.lo.y), PBD_FMAX(bi.lo.z, bj.lo.z));
			const pbd_vec3 ohi =
			    pbd_v3(PBD_FMIN(bi.hi.x, bj.hi.x), PBD_FMIN(bi.hi.y, bj.hi.y), PBD_FMIN(bi.hi.z, bj.hi.z));
			const pbd_real ri = reach_of(&w->colliders[i]), rj = reach_of(&w->colliders[j]);
			if (pbd_rigid_per_step(w) && PBD_FMIN(ri, rj) < PBD_REAL_MAX)
				ij.spec = ji.spec = keep_distance(w, PBD_FMIN(ri, rj));
			found = features_against(w, &ij, olo, ohi) && features_against(w, &ji, olo, ohi);
			if (found && pbd_rigid_per_step(w) && o < nkept && w->rpair[o].key == key)
				match_impulses(w, &w->rpair[o], first);
			rec->key = key;
			rec->i_moves = ri <= rj;
			rec->reach = PBD_FMIN(ri, rj);
			relative_pose(&ij, rec->i_moves, &rec->at, &rec->turn);
		}
		rec->first = first;
		rec->count = w->nrc - first;
	}
	/* This substep's pairs and contacts, for the next substep of the step to keep. */
	if (found && pbd_grow_to(&w->mem, (void**)&w->rkeep, sizeof *w->rkeep, &w->cap_rkeep, w->nrc)) {
		if (w->nrc) memcpy(w->rkeep, w->rcon, w->nrc * sizeof *w->rcon);
		pbd_rigid_pair* t = w->rpair;
		w->rpair = w->rpair_next, w->rpair_next = t;
		const uint32_t c = w->cap_rpair;
		w->cap_rpair = w->cap_rpair_next, w->cap_rpair_next = c;
		w->nrpair = made;
		w->rkeep_valid = true;
	}
	if (w->rigid_capped) pbd_collision_count(w, 0, 0, 0, w->nrc, 1);
	/* Out of memory, the contacts found so far are kept (the step goes on), in the passes' order. */
	if (!order_contacts(w)) {
		w->nrc = 0;
		found = false;
	}
	if (pbd_rigid_per_step(w) && found) {
		found = pbd_avbd_step(w) ? pbd_avbd_begin(w) : pbd_soft_begin(w);
		w->rsearched = found;
	}
	if (!found) return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for the bodies' contacts");
	return PBD_OK;
}

/* The same along any unit direction. */
static void push_pair(pbd_world* w, const pbd_rigid_c* k, pbd_vec3 dir, pbd_real amount, pass_kind pass) {
	pbd_vec3 ip = pbd_v3(0, 0, 0), is = pbd_v3(0, 0, 0);
	const pbd_real wp = held(k, k->p, pass) ? 0 : pbd_rigid_weight(w, k->p, k->rp, dir, &ip);
	const pbd_real ws = held(k, k->s, pass) ? 0 : pbd_rigid_weight(w, k->s, k->rs, dir, &is);
	const pbd_real wsum = wp + ws;
	if (!(wsum > 0)) return;
	const pbd_real dl = amount / wsum;
	if (wp > 0) pbd_node_body_push(&w->bodies, k->p - 1, dir, ip, dl);
	if (ws > 0) pbd_node_body_push(&w->bodies, k->s - 1, dir, is, -dl);
}

/* The points' tangential slip over the substep so far, with its length. */
static pbd_vec3 tangential_slip(const pbd_world* w, const pbd_rigid_c* k, pbd_real* len) {
	const pbd_vec3 slip =
	    pbd_v3_add(k->slip, pbd_v3_sub(pbd_rigid_moved(w, k->p, k->rp), pbd_rigid_moved(w, k->s, k->rs)));
	const pbd_vec3 tan = pbd_v3_sub(slip, pbd_v3_scale(k->n, pbd_v3_dot(k->n, slip)));
	*len = pbd_v3_length(tan);
	return tan;
}

/* One contact's projection: the normal, then static friction. Returns how far it moved the
 * points. */
static pbd_real project(pbd_world* w, pbd_rigid_c* k, pass_kind pass) {
	const pbd_real c =
	    k->sep + pbd_v3_dot(k->n, pbd_v3_sub(pbd_rigid_moved(w, k->p, k->rp), pbd_rigid_moved(w, k->s, k->rs)));
	pbd_real most = 0;
	if (c < 0) {
		push_normal(w, k, -c, pass);
		k->dn -= c;
		most = -c;
	} else if (c > 0 && k->dn > 0) {
		/* a push that later ones made more than enough is taken back, down to none */
		const pbd_real back = PBD_FMIN(c, k->dn);
		push_normal(w, k, -back, pass);
		k->dn -= back;
		most = back;
	}
	/* Static friction in the same pass (Müller et al. 2020), so that the corner contacts of a
	 * stack hold each other in the iterations instead of after them (five stacked cubes crept
	 * 3.3 cm in 5 s with friction after the iterations alone, 1.5 mm with it here). Each visit
	 * takes the slip left since the substep's start off the tangential correction so far, and
	 * that sum is kept within the cone: mu_s times the normal correction while it holds, mu_k
	 * once it slides. The paper undoes a slip within the cone at once and leaves one past it
	 * alone; in repeated passes that rule switched on and off as the normal corrections moved,
	 * and a cube on two others, which each want it to follow them, never settled: 68 % of a
	 * 465-cube pyramid's settling passes ran out of sweeps with up to 10 um left, a speed of
	 * 1 cm/s at 20 substeps, and the top of a pyramid of 50 rows jumped. Summed and clamped,
	 * the two pulls meet at the cone and stop. */
	if (!(k->mu_s > 0)) return most;
	pbd_real len;
	const pbd_vec3 tan = tangential_slip(w, k, &len);
	if (!(len > 0)) return most;
	pbd_vec3 want = pbd_v3_sub(k->ft, tan);
	const pbd_real size = pbd_v3_length(want), cone = k->mu_s * PBD_FMAX(k->dn, 0);
	if (size > cone) want = pbd_v3_scale(want, k->mu_k * PBD_FMAX(k->dn, 0) / size);
	const pbd_vec3 step = pbd_v3_sub(want, k->ft);
	const pbd_real moved_by = pbd_v3_length(step);
	if (moved_by > 0) {
		push_pair(w, k, pbd_v3_scale(step, 1 / moved_by), moved_by, pass);
		k->ft = want;
	}
	return PBD_FMAX(most, moved_by);
}

void pbd_rigid_contacts_project(pbd_world* w) {
	if (pbd_avbd_step(w)) {
		pbd_avbd_solve(w);
		return;
	}
	if (pbd_soft_step(w)) {
		pbd_soft_solve(w);
		return;
	}
	const uint64_t* list = w->rpairs;
	for (uint32_t q = 0; list[q] != UINT64_MAX; ++q) project(w, &w->rcon[list[q]], PASS_BOTH);
}

/* One body's contacts [a, e) of the passes' list swept until they settle, the lower body of
 * each held, together with the contacts [c0, c1) of the bodies it carries, which move both. */
static void settle_group(pbd_world* w, uint32_t a, uint32_t e, const uint64_t* c0, const uint64_t* c1) {
	const uint64_t* list = w->rpairs;
	for (int sweep = 0; sweep < PBD_RIGID_GROUP_SWEEPS; ++sweep) {
		pbd_real most = 0;
		for (uint32_t q = a; q < e; ++q) {
			/* Two bodies side by side, which neither holds, are left to the iterations: this
			 * pass would push each against the other over and over, and at one substep of
			 * 1/60 s the side contacts of a pyramid, whose normals turn at the cubes' edges,
			 * threw cubes kilometres. */
			pbd_rigid_c* k = &w->rcon[list[q]];
			if (!k->held && k->p && k->s) continue;
			most = PBD_FMAX(most, project(w, k, PASS_SHOCK));
		}
		for (const uint64_t* c = c0; c < c1; ++c) most = PBD_FMAX(most, project(w, &w->rcon[*c], PASS_BOTH));
		if (!(most > PBD_RIGID_SETTLED)) break;
	}
}

/* A level of a pass: its groups' starts in the passes' list, in blocks of PBD_RIGID_GROUP_BLOCK
 * on the world's threads. */
#define PBD_RIGID_GROUP_BLOCK 2u

typedef struct level_stage {
	pbd_world* w;
	const uint32_t* starts;
	uint32_t count;
	pbd_real slow; /* the velocity pass's speed below which nothing bounces */
} level_stage;

static void settle_block(void* ctx, uint32_t block, uint32_t worker) {
	(void)worker;
	const level_stage* s = (const level_stage*)ctx;
	pbd_world* w = s->w;
	uint64_t* from;
	const uint64_t* carried = carried_of(w, &from);
	const uint32_t first = block * PBD_RIGID_GROUP_BLOCK, end = pbd_block_end(first, s->count, PBD_RIGID_GROUP_BLOCK);
	for (uint32_t g = first; g < end; ++g) {
		const uint32_t a = s->starts[g], e = group_end(w, a);
		/* A body that carries others alone is settled first with them: its contacts below,
		 * the lower body held, and theirs on it, which move both ends, so that what rests on it
		 * weighs on it where it rests and turns with it. Settled alone, a body carried its own
		 * weight here, and an upper part whose centre lay past the edge below it stood level
		 * for ever as long as each body's own centre lay over the one below it (three cubes
		 * each 9 cm further out, the upper two's centre 1.5 cm past the edge); now the upper
		 * part tips over the edge as one rigid body would (0.500 s to turn 0.3 rad, 0.462 s
		 * in closed form). Only what rests on this body alone: a cube of a pyramid on two
		 * below moved with each in turn, and the pyramid's top drifted 5.9 mm in 100 steps
		 * where it drifts 0.5 mm. Then the body alone, as before, so that the stack below is
		 * at rest before the bodies above are settled on it. */
		const uint32_t m = w->rcon[w->rpairs[a]].group - 1;
		if (from[m + 1] > from[m]) settle_group(w, a, e, carried + from[m], carried + from[m + 1]);
		settle_group(w, a, e, NULL, NULL);
	}
}

void pbd_rigid_contacts_settle(pbd_world* w) {
	if (pbd_rigid_per_step(w)) return;
	uint64_t* from;
	const uint64_t* carried = carried_of(w, &from);
	const uint32_t ng = w->nrgroup, *order = w->rsched + ng, *first = order + ng;
	for (uint32_t l = 0; l < w->nrlevel_settle; ++l) {
		level_stage s = {w, order + first[l], first[l + 1] - first[l], 0};
		pbd_exec_stage(&w->exec, settle_block, &s, pbd_blocks(s.count, PBD_RIGID_GROUP_BLOCK));
	}
	/* What the contacts kept into the next substep start from (contacts_again): those of the
	 * bodies carried alone. Every contact of a pyramid of 210 warm-started made its top
	 * drift 3.5 mm in 100 steps where it drifts 0.5 mm, and the step a quarter slower. */
	if (w->rkeep_valid) {
		for (uint32_t k = 0; k < w->nrc; ++k) w->rkeep[k].lambda = 0;
		for (const uint64_t* c = carried; c < carried + from[w->bodies.n]; ++c)
			w->rkeep[*c].lambda = w->rcon[*c].lambda;
	}
}

/* One contact's velocities (Müller et al. 2020, section 3.6): the normal speed of the two points
 * becomes e times the speed they approached with where they bounce, else none, and kinetic
 * friction takes off the tangential speed up to what is left of its budget. Returns the largest
 * change of relative speed it made. */
static pbd_real velocities(pbd_world* w, pbd_rigid_c* k, pbd_real slow, pass_kind pass) {
	const pbd_real wp = held(k, k->p, pass) ? 0 : k->wp, ws = held(k, k->s, pass) ? 0 : k->ws;
	if (!(wp + ws > 0)) return 0;
	const pbd_vec3 rel0 = pbd_v3_sub(pbd_rigid_velocity(w, k->p, k->rp), pbd_rigid_velocity(w, k->s, k->rs));
	const pbd_real vn = pbd_v3_dot(k->n, pbd_v3_add(rel0, k->vfix));
	const pbd_real target = k->e > 0 && k->vn0 < -slow ? -k->e * k->vn0 : 0;
	pbd_rigid_impulse(w, k, k->n, wp, k->ip, ws, k->is, (target - vn) / (wp + ws));
	pbd_real most = PBD_FABS(target - vn);
	if (!(k->budget > 0)) return most;
	const pbd_vec3 rel = pbd_rigid_relative_velocity(w, k);
	const pbd_vec3 vt = pbd_v3_sub(rel, pbd_v3_scale(k->n, pbd_v3_dot(k->n, rel)));
	const pbd_real len = pbd_v3_length(vt);
	if (!(len > 0)) return most;
	const pbd_vec3 dir = pbd_v3_scale(vt, -1 / len);
	pbd_vec3 jp = pbd_v3(0, 0, 0), js = pbd_v3(0, 0, 0);
	const pbd_real tp = wp > 0 ? pbd_rigid_weight(w, k->p, k->rp, dir, &jp) : 0;
	const pbd_real ts = ws > 0 ? pbd_rigid_weight(w, k->s, k->rs, dir, &js) : 0;
	if (!(tp + ts > 0)) return most;
	const pbd_real dv = PBD_FMIN(len, k->budget);
	pbd_rigid_impulse(w, k, dir, tp, jp, ts, js, dv / (tp + ts));
	k->budget -= dv;
	return PBD_FMAX(most, dv);
}

static void velocity_block(void* ctx, uint32_t block, uint32_t worker) {
	(void)worker;
	const level_stage* s = (const level_stage*)ctx;
	pbd_world* w = s->w;
	const uint64_t* list = w->rpairs;
	const uint32_t first = block * PBD_RIGID_GROUP_BLOCK, end = pbd_block_end(first, s->count, PBD_RIGID_GROUP_BLOCK);
	for (uint32_t g = first; g < end; ++g) {
		const uint32_t a = s->starts[g], e = group_end(w, a);
		for (int sweep = 0; sweep < PBD_RIGID_GROUP_SWEEPS; ++sweep) {
			pbd_real most = 0;
			for (uint32_t q = a; q < e; ++q)
				most = PBD_FMAX(most, velocities(w, &w->rcon[list[q]], s->slow, PASS_SHOCK));
			if (!(most > PBD_RIGID_SETTLED_SPEED)) break;
		}
	}
}

void pbd_rigid_contacts_velocities(pbd_world* w, pbd_real h) {
	const pbd_real slow = 2 * pbd_v3_length(w->def.gravity) * h;
	pbd_bodies* b = &w->bodies;
	if (pbd_avbd_step(w)) {
		pbd_avbd_velocities(w, h, slow);
		return;
	}
	if (pbd_soft_step(w)) {
		pbd_soft_velocities(w, h, slow);
		return;
	}
	/* The bodies moved with their corrections: both ends' arms to one point again, where the
	 * feature's body carried it, so that the impulses are equal and opposite at one point; the
	 * weights at the turned bodies. Kinetic friction's budget is mu_k times the normal
	 * correction as a speed (Müller et al. 2020: h mu_k |f_n| of the normal force), less what
	 * static friction took in the position passes. */
	for (uint32_t i = 0; i < w->nrc; ++i) {
		pbd_rigid_c* k = &w->rcon[i];
		if (!(k->dn > 0)) {
			k->wp = k->ws = 0;
			continue;
		}
		if (k->p && k->s) {
			const uint32_t p = k->p - 1, s = k->s - 1;
			const pbd_vec3 between = pbd_v3_add(pbd_v3_sub(b->x[p], b->x[s]), pbd_v3_sub(b->x_lo[p], b->x_lo[s]));
			k->rs = pbd_v3_add(between, k->rp);
		}
		k->wp = pbd_rigid_weight(w, k->p, k->rp, k->n, &k->ip);
		k->ws = pbd_rigid_weight(w, k->s, k->rs, k->n, &k->is);
		k->budget = PBD_FMAX(k->mu_k * k->dn - pbd_v3_length(k->ft), 0) / h;
	}
	const uint32_t ng = w->nrgroup, *order = w->rsched + 3 * ng + 1, *first = order + ng;
	for (uint32_t l = 0; l < w->nrlevel_velocity; ++l) {
		level_stage s = {w, order + first[l], first[l + 1] - first[l], slow};
		pbd_exec_stage(&w->exec, velocity_block, &s, pbd_blocks(s.count, PBD_RIGID_GROUP_BLOCK));
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
