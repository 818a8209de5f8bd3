/* The contact stage (docs/collision.md). Once per substep, every pair of a collider and a
 * particle near it becomes at most one contact: a plane the particle must stay on the outer side
 * of, found from where the particle started the substep (x) and where it is predicted (x + q):
 *  - a particle that started outside the margin and whose path crosses into it is caught by the
 *    shape's sweep: the plane is the surface's tangent plane where the path first touches, moved
 *    out by the margin. Nothing tunnels, and the push-out never goes through the shape (a
 *    radial push from a predicted point past the centre of a ball would);
 *  - otherwise a particle predicted within the margin plus its substep motion gets the tangent
 *    plane at its closest surface point (a speculative contact when it is still outside: it acts
 *    only if the constraints push the particle in).
 * The sweep runs in the collider's frame, from x in the frame at the start of the substep to
 * x + q in the frame at its end, so a moving collider sweeps through particles too. The iterations
 * then push particles out of the planes; friction (Macklin et al. 2014) acts on the tangential
 * slip once the iterations are done, and restitution on the normal velocity after the velocity
 * update. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "collision/collide.h"
#include "collision/self_collision.h"
#include "collision/shape_math.h"
#include "model/node.h"

static bool grow_to(pbd_world* w, void** p, size_t size, uint32_t* cap, uint32_t need) {
	if (need <= *cap) return true;
	uint32_t c = *cap ? *cap : 64;
	while (c < need) c = c > UINT32_MAX / 2 ? need : 2 * c;
	if (!pbd_grow(&w->mem, p, size, *cap, c)) return false;
	*cap = c;
	return true;
}

/* The world bounds of a collider over a substep (both poses), grown by `grow`; false when
 * unbounded. */
static bool world_bounds(const pbd_collider* c, pbd_real grow, pbd_vec3* lo, pbd_vec3* hi) {
	const pbd_pose poses[2] = {c->pose0, c->def.pose};
	return pbd_collider_world_box(c, poses, 2, grow, lo, hi);
}

/* Kinematic motion over one substep: x += v h, and q <- dq q with dq the rotation by the angle
 * |w| h about w, exact for any angle. In double: |w| from w scaled by its largest component,
 * the half angle reduced modulo 2 pi before its sine and cosine (the bounds on kinematic
 * velocities, PBD_MAX_KINEMATIC_ANGULAR_SPEED and PBD_MAX_DT, keep it finite), so that no square
 * overflows and the quaternion stays a unit one whatever the speed. */
static void advance(pbd_collider* c, pbd_real h) {
	c->pose0 = c->def.pose;
	if (c->def.kind != PBD_ACTOR_KINEMATIC) return;
	pbd_pose* p = &c->def.pose;
	p->position = pbd_v3_add(p->position, pbd_v3_scale(c->def.velocity, h));
	const pbd_vec3 om = c->def.angular_velocity;
	const double m = fmax(fabs((double)om.x), fmax(fabs((double)om.y), fabs((double)om.z)));
	if (!(m > 0)) return;
	const double u[3] = {(double)om.x / m, (double)om.y / m, (double)om.z / m};
	const double n = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]); /* in [1, sqrt 3] */
	const double two_pi = 6.283185307179586476925;
	const double half = fmod(0.5 * m * n * (double)h, two_pi);
	const double s = sin(half) / n, co = cos(half);
	const double a[4] = {u[0] * s, u[1] * s, u[2] * s, co};
	const double b[4] = {(double)p->rotation.x, (double)p->rotation.y, (double)p->rotation.z, (double)p->rotation.w};
	/* a b, the Hamilton product (vector part first, scalar last) */
	const double r[4] = {
	    a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1], a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
	    a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3], a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]};
	const double len = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
	p->rotation =
	    (pbd_quat){(pbd_real)(r[0] / len), (pbd_real)(r[1] / len), (pbd_real)(r[2] / len), (pbd_real)(r[3] / len)};
}

static bool reserve_contacts(pbd_world* w, uint32_t need) {
	if (need <= w->cap_con) return true;
	uint32_t cap = w->cap_con ? w->cap_con : 256;
	while (cap < need) cap = cap > UINT32_MAX / 2 ? need : 2 * cap;
	if (!pbd_grow(&w->mem, (void**)&w->con, sizeof *w->con, w->cap_con, cap)) return false;
	w->cap_con = cap;
	return true;
}

/* The contact k of particle i with collider `slot`: the plane through `target` with normal n
 * (both in the collider's frame at its pose at the end of the substep). */
static void make_contact(const pbd_world* w, pbd_contact_c* k, uint32_t slot, uint32_t i, pbd_vec3 n, pbd_vec3 target) {
	const pbd_collider* c = &w->colliders[slot];
	const pbd_pose p1 = c->def.pose;
	const pbd_vec3 xi = w->x[i];
	k->particle = i;
	k->collider = slot;
	k->n = pbd_quat_rotate(p1.rotation, n);
	/* The target relative to x: the frame's offset from x first, exact for a particle near a
	 * collider far from the origin. */
	const pbd_vec3 arm = pbd_quat_rotate(p1.rotation, target);
	k->offset = pbd_v3_dot(k->n, pbd_v3_add(pbd_v3_sub(p1.position, xi), arm));
	k->vc = c->def.kind == PBD_ACTOR_KINEMATIC ? pbd_v3_add(c->def.velocity, pbd_v3_cross(c->def.angular_velocity, arm))
	                                           : pbd_v3(0, 0, 0);
	k->vn0 = pbd_v3_dot(k->n, pbd_v3_sub(w->v[i], k->vc));
	k->dn = 0;
	k->yielded = 0;
	k->body = 0;
	k->r = pbd_v3(0, 0, 0);
	if (pbd_collider_dynamic_body(w, c)) {
		k->body = c->body;
		k->r = pbd_v3_add(pbd_v3_sub(p1.position, pbd_body_centre(&w->bodies, c->body - 1)), arm);
	}
}

/* ---- queries a step need not repeat ----------------------------------------------------------
 * Most particles near a mesh, a height field or a hull are not near its surface: of the
 * distance queries a substep makes, most answer "too far for a contact" (the test after the
 * sweep's distance in find_for). Such a query walks a hierarchy; its answer
 * stays useful for the rest of the step, because the distance is 1-Lipschitz in the collider's
 * frame (the shape does not change within a step): from a point where the distance was d, a
 * point at r from it is at least d - r away. So each measured distance is kept with the point
 * where it was measured, and a later query whose bound d - r already clears what the test asks
 * is not made. The bound is looser than the true distance, never above it (the slack covers the
 * roundings of both queries), so every particle it turns away the query would have turned away
 * too: the contacts, and every bit of the state, are the same. The kept values live one step,
 * so that nothing the API changes between steps (a collider's shape, the particles) is seen
 * through them. */

/* At most this many reals of clearances (4 per particle and dear collider): a world with more
 * keeps them for its first colliders and queries the others every time. */
#define PBD_CLEAR_MAX_REALS ((size_t)1 << 22)
/* About this many kept lists at most (some 80 MB); beyond, particles query the whole shape. */
#define PBD_NEAR_MAX_ENTRIES ((size_t)1 << 20)
#ifdef PBD_DOUBLE
#define CLEAR_EPS DBL_EPSILON
#else
#define CLEAR_EPS FLT_EPSILON
#endif

static bool dear_query(const pbd_collider* c) {
	const pbd_shape_type t = c->def.type;
	return t == PBD_SHAPE_MESH || t == PBD_SHAPE_HEIGHTFIELD || t == PBD_SHAPE_CONVEX;
}

/* The step's clearance blocks, every value not measured. False when out of memory: the step
 * then keeps none and makes every query (and reports the failure, as for the contacts). */
static bool clear_setup(pbd_world* w) {
	pbd_broad* bp = &w->broad;
	bp->clear_ready = true;
	bp->near_ready = false;
	bp->clear_np = 0;
	if (!grow_to(w, (void**)&bp->clear_of, sizeof *bp->clear_of, &bp->cap_clear_of, w->nc)) return false;
	size_t n = 0;
	for (uint32_t s = 0; s < w->nc; ++s) {
		const pbd_collider* c = &w->colliders[s];
		const bool fits = w->np > 0 && n + 4 * (size_t)w->np <= PBD_CLEAR_MAX_REALS;
		bp->clear_of[s] = c->alive && !c->def.trigger && dear_query(c) && fits ? (uint32_t)(n / 4) : UINT32_MAX;
		if (bp->clear_of[s] != UINT32_MAX) n += 4 * (size_t)w->np;
	}
	if (n > bp->cap_clear) {
		if (!pbd_grow(&w->mem, (void**)&bp->clear, sizeof *bp->clear, bp->cap_clear, n)) return false;
		bp->cap_clear = n;
	}
	for (size_t k = 3; k < n; k += 4) bp->clear[k] = (pbd_real)NAN;
	bp->clear_np = w->np;
	/* the kept lists: an entry per particle for each slot whose shape keeps them */
	if (!grow_to(w, (void**)&bp->near_of, sizeof *bp->near_of, &bp->cap_near_of, w->nc)) return false;
	size_t m = 0;
	for (uint32_t s = 0; s < w->nc; ++s) {
		const pbd_collider* c = &w->colliders[s];
		const bool fits = m + (size_t)w->np <= PBD_NEAR_MAX_ENTRIES;
		bp->near_of[s] = bp->clear_of[s] != UINT32_MAX && pbd_shape_ops_of(c->def.type)->near && !bp->near_off && fits
		                     ? (uint32_t)m
		                     : UINT32_MAX;
		if (bp->near_of[s] != UINT32_MAX) m += w->np;
	}
	if (!grow_to(w, (void**)&bp->near_ids, PBD_NEAR_CAP * sizeof *bp->near_ids, &bp->cap_near_ids, (uint32_t)m) ||
	    !grow_to(w, (void**)&bp->near_n, sizeof *bp->near_n, &bp->cap_near_n, (uint32_t)m) ||
	    !grow_to(w, (void**)&bp->near_ball, 4 * sizeof *bp->near_ball, &bp->cap_near_ball, (uint32_t)m))
		return false;
	if (m) memset(bp->near_n, PBD_NEAR_NOT_YET, m);
	bp->near_ready = true;
	return true;
}

/* The clearances of collider `slot`, or NULL. */
static pbd_real* clear_block(const pbd_world* w, uint32_t slot) {
	const pbd_broad* bp = &w->broad;
	if (!bp->clear_ready || bp->clear_off || bp->clear_np != w->np || bp->clear_np == 0 ||
	    bp->clear_of[slot] == UINT32_MAX)
		return NULL;
	return bp->clear + 4 * (size_t)bp->clear_of[slot];
}

/* The least distance at p that the kept distance k (point, distance) proves, less the roundings of
 * both queries (64 of the magnitudes); -PBD_REAL_MAX where nothing is kept. */
static pbd_real clear_bound(const pbd_real* k, pbd_vec3 p) {
	/* not measured (NaN; == is the comparison that raises no floating-point exception for it) */
	if (!(k[3] == k[3])) return -PBD_REAL_MAX;
	const pbd_vec3 ref = pbd_v3(k[0], k[1], k[2]);
	const pbd_real r = pbd_v3_length(pbd_v3_sub(p, ref));
	const pbd_real size = PBD_FMAX(PBD_FMAX(PBD_FABS(p.x), PBD_FABS(p.y)), PBD_FABS(p.z)) +
	                      PBD_FMAX(PBD_FMAX(PBD_FABS(ref.x), PBD_FABS(ref.y)), PBD_FABS(ref.z)) + PBD_FABS(k[3]);
	return k[3] - r - 64 * CLEAR_EPS * size;
}

/* Whether the kept distance k proves the distance at p larger than `need`, by the contact
 * tolerance besides. */
static bool clear_beyond(const pbd_real* k, pbd_vec3 p, pbd_real need) {
	return clear_bound(k, p) - PBD_CONTACT_TOLERANCE > need;
}

static void clear_note(pbd_real* k, pbd_vec3 p, pbd_real d) { k[0] = p.x, k[1] = p.y, k[2] = p.z, k[3] = d; }

/* Whether the kept distance k proves the distance at p no smaller than `need`, with the slack of
 * the roundings alone (settle_one's test, which has the contact tolerance on its other side). */
static bool clear_at_least(const pbd_real* k, pbd_vec3 p, pbd_real need) { return clear_bound(k, p) >= need; }

/* ---- candidates a step keeps --------------------------------------------------------------
 * A particle that rests on a mesh asks it for a distance and a sweep every substep, and each
 * query walks the hierarchy from its root to the few triangles under the particle. The first
 * query of the step that finds the particle near the surface also gathers those triangles, all
 * that come within the distance it found plus a skin (pbd_shape_ops.near); later queries take
 * the least over that list alone wherever the list proves it is the answer of the whole shape:
 * a point whose nearest listed triangle is nearer than the ball's edge (no other triangle can
 * be nearer), a path whose grown tube stays inside the ball. Both take the least value and the
 * lowest index among equals, as the hierarchy does, so the bits are the same (a test runs the
 * scenes both ways). Where the list cannot tell, the shape is asked and the list gathered again
 * around the new point. */

/* The first entry of collider slot's kept lists, or SIZE_MAX where it keeps none. */
static size_t near_base(const pbd_world* w, uint32_t slot) {
	const pbd_broad* bp = &w->broad;
	if (!bp->near_ready || bp->clear_np != w->np || bp->near_of[slot] == UINT32_MAX) return SIZE_MAX;
	return bp->near_of[slot];
}

static bool near_list_of(const pbd_world* w, size_t e, pbd_near_list* l) {
	const pbd_broad* bp = &w->broad;
	if (e == SIZE_MAX || bp->near_n[e] > PBD_NEAR_CAP) return false;
	const pbd_real* ball = bp->near_ball + 4 * e;
	*l = (pbd_near_list){bp->near_ids + e * PBD_NEAR_CAP, bp->near_n[e], pbd_v3(ball[0], ball[1], ball[2]), ball[3]};
	return true;
}

/* The distance of the local point p from collider c's shape, for entry e (SIZE_MAX: none, the
 * shape's query alone): from its list where it tells, else from the shape, after which a point
 * nearer than `gather_within` gathers its list again, for a ball `skin` beyond the distance. */
static pbd_real kept_distance(const pbd_world* w, const pbd_collider* c, const pbd_shape_ops* ops, size_t e, pbd_vec3 p,
                              pbd_real gather_within, pbd_real skin, pbd_vec3* n, uint64_t* used, uint64_t* gathered) {
	pbd_near_list l;
	pbd_real d;
	if (near_list_of(w, e, &l) && ops->distance_among(&c->def, &l, p, &d, n)) {
		++*used;
		return d;
	}
	d = ops->distance(&c->def, p, n);
	const pbd_broad* bp = &w->broad;
	if (e != SIZE_MAX && bp->near_n[e] != PBD_NEAR_NO && d < gather_within) {
		const pbd_real radius = PBD_FABS(d) + skin;
		const uint32_t got = ops->near(&c->def, p, radius, bp->near_ids + e * PBD_NEAR_CAP, PBD_NEAR_CAP);
		bp->near_n[e] = got <= PBD_NEAR_CAP ? (uint8_t)got : (uint8_t)PBD_NEAR_NO;
		pbd_real* ball = bp->near_ball + 4 * e;
		ball[0] = p.x, ball[1] = p.y, ball[2] = p.z, ball[3] = radius;
		++*gathered;
	}
	return d;
}

/* The sweep of a -> b against collider c's shape (sweep_from where it has one), from entry e's
 * list where it tells. */
static bool kept_sweep(const pbd_world* w, const pbd_collider* c, const pbd_shape_ops* ops, size_t e, pbd_vec3 a,
                       pbd_vec3 b, pbd_real radius, pbd_real start, pbd_real* t, pbd_vec3* n, uint64_t* used) {
	pbd_near_list l;
	bool hit;
	if (near_list_of(w, e, &l) && ops->sweep_among(&c->def, &l, a, b, radius, start, &hit, t, n)) {
		++*used;
		return hit;
	}
	return ops->sweep_from ? ops->sweep_from(&c->def, a, b, radius, start, t, n)
	                       : ops->sweep(&c->def, a, b, radius, t, n);
}

/* The contacts of one collider with particles [first, end), leaving out the particles that have
 * one with it among contacts [0, known). `sweep` false: closest points only (the after-solver
 * mode, which moves the finished positions out once, as Games103 lab 2 does, and the last
 * iteration's second look). lo, hi: the collider's box over the substep (both poses), when
 * bounded; a particle's path is tested against it as a whole. */
static void find_for(const pbd_world* w, uint32_t slot, bool sweep, uint32_t first, uint32_t end, bool bounded,
                     pbd_vec3 lo, pbd_vec3 hi, uint32_t known, pbd_real* keep, const pbd_real* kept, pbd_real* clear,
                     pbd_broad* counts, pbd_block_out* o, uint32_t block, uint32_t worker) {
	const pbd_collider* c = &w->colliders[slot];
	const pbd_shape_ops* ops = pbd_shape_ops_of(c->def.type);
	const pbd_real collider_margin = c->def.margin;
	const pbd_pose p0 = c->pose0, p1 = c->def.pose;
	uint64_t made = 0, spared = 0, used = 0, gathered = 0;
	const size_t near0 = near_base(w, slot);
	/* The known contacts come in order (collider, particle): one bisection finds this range's
	 * first, and a cursor walks on with the particles. */
	uint32_t next_known = known ? pbd_lower_bound_pair(w->con, sizeof *w->con, known, offsetof(pbd_contact_c, collider),
	                                                   offsetof(pbd_contact_c, particle), slot, first)
	                            : 0;
	for (uint32_t i = first; i < end; ++i) {
		if (w->w[i] <= 0 || !(w->cmask[i] & c->def.category)) continue;
		const pbd_vec3 xi = w->x[i], pi = pbd_v3_add(xi, w->q[i]);
		/* A particle gone non-finite in this step has no contact: the step will undo it, and a
		 * shape's queries have no answer for a NaN. */
		if (!pbd_v3_is_finite(pi) || (bounded && pbd_segment_bounds_miss(xi, pi, lo, hi))) continue;
		if (known) {
			while (next_known < known && w->con[next_known].collider == slot && w->con[next_known].particle < i)
				++next_known;
			if (next_known < known && w->con[next_known].collider == slot && w->con[next_known].particle == i) continue;
		}
		/* A particle with a thickness keeps its radius off the surface too. */
		const pbd_real margin = collider_margin + w->radius[i];
		const pbd_vec3 a = pbd_pose_apply_inverse(p0, xi), b = pbd_pose_apply_inverse(p1, pi);
		pbd_vec3 n, target;
		pbd_real t;
		/* Where it starts counts only when the path is swept (the after-solver mode looks at
		 * the finished position alone). */
		pbd_vec3 na = pbd_v3(0, 1, 0);
		pbd_real da = 0;
		const pbd_vec3 move = pbd_v3_sub(b, a);
		const pbd_real path = pbd_v3_length(move);
		pbd_real* cl = clear ? clear + 4 * (size_t)i : NULL;
		const size_t e = near0 == SIZE_MAX ? SIZE_MAX : near0 + i;
		/* A list for particles near the surface, for a ball that the next few substeps' paths
		 * stay inside. */
		const pbd_real skin = path + 4 * PBD_CONTACT_TOLERANCE;
		if (sweep) {
			const pbd_real* r = kept ? kept + 4 * (i - first) : NULL;
			if (r && r[0] == r[0]) {
				da = r[0];
				na = pbd_v3(r[1], r[2], r[3]);
			} else {
				/* turned away below without a query (its kept value stays NaN) */
				if (cl && clear_beyond(cl, a, margin + 2 * path + 2 * PBD_CONTACT_TOLERANCE)) {
					++spared;
					continue;
				}
				da = kept_distance(w, c, ops, e, a, margin + skin, skin, &na, &used, &gathered);
				if (cl) clear_note(cl, a, da), ++made;
			}
			if (keep) {
				pbd_real* k = keep + 4 * (i - first);
				k[0] = da, k[1] = na.x, k[2] = na.y, k[3] = na.z;
			}
		}
		/* The distance changes by at most the length of the path (it is 1-Lipschitz), so a
		 * particle farther than that from the margin can neither be swept into it nor end in
		 * reach of it: no sweep and no second distance for the particles around a collider that
		 * do not come near its surface. */
		if (sweep && da - margin > 2 * path + 2 * PBD_CONTACT_TOLERANCE) continue;
		/* The sweep's radius: the margin, or for a particle that starts on the surface (within
		 * rounding) a hair less than where it is, so that the path is still swept: on a
		 * non-convex surface, sliding along the face it rests on can carry it into the next bump. */
		const pbd_real swept = PBD_FMIN(margin, da - PBD_R(0.5) * PBD_CONTACT_TOLERANCE);
		/* The path can touch only where the distance falls below the sweep's radius on the way,
		 * and it falls by at most the path's length: a path that cannot get there (by a quarter
		 * of the tolerance, far above the roundings of either) misses, and is not swept. A
		 * particle resting on a surface moves far less than that in a substep. */
		const bool reaches = w->broad.clear_off || da - path - swept <= PBD_R(0.25) * PBD_CONTACT_TOLERANCE;
		if (sweep && da > margin - PBD_CONTACT_TOLERANCE && reaches &&
		    kept_sweep(w, c, ops, e, a, b, swept, da, &t, &n, &used)) {
			/* The point it first touches, moved out to the margin along the normal there. */
			target = pbd_v3_add(pbd_v3_add(a, pbd_v3_scale(move, t)), pbd_v3_scale(n, margin - swept));
		} else if (sweep && PBD_FABS(da - margin) <= PBD_CONTACT_TOLERANCE && pbd_v3_dot(na, move) < 0) {
			/* Started on the surface (within rounding) and heading in, where the sweep, which
			 * needs a start outside, sees nothing: the tangent plane where it started, not the
			 * nearest way out of where it is predicted, which may lie on the far side. */
			n = na;
			target = pbd_v3_add(a, pbd_v3_scale(na, margin - da));
		} else {
			const pbd_real reach = sweep ? path + PBD_CONTACT_TOLERANCE : 0;
			if (!sweep && cl && clear_beyond(cl, b, margin + reach)) {
				++spared;
				continue;
			}
			const pbd_real db = kept_distance(w, c, ops, e, b, margin + skin, skin, &n, &used, &gathered);
			if (cl) clear_note(cl, b, db), ++made;
			if (!(db < margin + reach)) continue;
			target = pbd_v3_add(b, pbd_v3_scale(n, margin - db));
		}
		pbd_contact_c* k = (pbd_contact_c*)pbd_block_out_push(o, block, worker);
		if (k) make_contact(w, k, slot, i, n, target); /* else counted, and the block runs again */
		pbd_block_out_item(o, block, 0, 1, false);
	}
	if (made) atomic_fetch_add_explicit(&counts->clear_made, made, memory_order_relaxed);
	if (spared) atomic_fetch_add_explicit(&counts->clear_spared, spared, memory_order_relaxed);
	if (used) atomic_fetch_add_explicit(&counts->near_used, used, memory_order_relaxed);
	if (gathered) atomic_fetch_add_explicit(&counts->near_gathered, gathered, memory_order_relaxed);
}

/* ---- broad phase ---------------------------------------------------------------------------
 * Particles go in chunks of PBD_CHUNK consecutive indices (a mesh numbers its neighbours close
 * together, so a chunk is a small patch), each with the box of its particles' paths x -> x + q.
 * Boxes of bounded colliders and of chunks are sorted by their low x and swept (sort and sweep):
 * each box meets the boxes of the other kind whose x intervals overlap its own, then y and z are
 * compared. Unbounded colliders (planes) meet every chunk. The (collider, chunk) pairs are sorted
 * so that contacts come out by collider, then particle, as without the broad phase. */

#define PBD_CHUNK 64u

static bool boxes_overlap(const pbd_box3* a, const pbd_box3* b) {
	return pbd_boxes_overlap(a->lo, a->hi, b->lo, b->hi);
}

/* Insertion sort of indices by the low x of their boxes: the order barely changes from one
 * substep to the next, so this is close to linear, and it is stable, hence deterministic. */
static void sort_by_low_x(uint32_t* idx, uint32_t n, const pbd_box3* box) {
	for (uint32_t i = 1; i < n; ++i) {
		const uint32_t v = idx[i];
		const pbd_real key = box[v].lo.x;
		uint32_t j = i;
		for (; j > 0 && box[idx[j - 1]].lo.x > key; --j) idx[j] = idx[j - 1];
		idx[j] = v;
	}
}

static bool broad_phase(pbd_world* w, uint32_t* npairs) {
	pbd_broad* bp = &w->broad;
	const uint32_t nchunk = (w->np + PBD_CHUNK - 1) / PBD_CHUNK;
	if (!grow_to(w, (void**)&bp->chunk, sizeof *bp->chunk, &bp->cap_chunk, nchunk) ||
	    !grow_to(w, (void**)&bp->chunk_order, sizeof *bp->chunk_order, &bp->cap_chunk_order, nchunk) ||
	    !grow_to(w, (void**)&bp->collider_order, sizeof *bp->collider_order, &bp->cap_collider_order, w->nc) ||
	    !grow_to(w, (void**)&bp->bounded_of, sizeof *bp->bounded_of, &bp->cap_bounded, w->nc) ||
	    !grow_to(w, (void**)&bp->collider, sizeof *bp->collider, &bp->cap_collider, w->nc))
		return false;
	const pbd_real grow = w->pcol->max_radius;
	uint32_t nk = 0;
	for (uint32_t k = 0; k < nchunk; ++k) {
		pbd_box3 b = {{PBD_REAL_MAX, PBD_REAL_MAX, PBD_REAL_MAX}, {-PBD_REAL_MAX, -PBD_REAL_MAX, -PBD_REAL_MAX}};
		const uint32_t end = (k + 1) * PBD_CHUNK < w->np ? (k + 1) * PBD_CHUNK : w->np;
		bool any = false;
		for (uint32_t i = k * PBD_CHUNK; i < end; ++i) {
			if (w->w[i] <= 0) continue;
			const pbd_vec3 a = w->x[i], p = pbd_v3_add(a, w->q[i]);
			b.lo = pbd_v3(PBD_FMIN(b.lo.x, PBD_FMIN(a.x, p.x)), PBD_FMIN(b.lo.y, PBD_FMIN(a.y, p.y)),
			              PBD_FMIN(b.lo.z, PBD_FMIN(a.z, p.z)));
			b.hi = pbd_v3(PBD_FMAX(b.hi.x, PBD_FMAX(a.x, p.x)), PBD_FMAX(b.hi.y, PBD_FMAX(a.y, p.y)),
			              PBD_FMAX(b.hi.z, PBD_FMAX(a.z, p.z)));
			any = true;
		}
		if (!any) continue;
		b.lo = pbd_v3(b.lo.x - grow, b.lo.y - grow, b.lo.z - grow);
		b.hi = pbd_v3(b.hi.x + grow, b.hi.y + grow, b.hi.z + grow);
		bp->chunk[k] = b;
		bp->chunk_order[nk++] = k;
	}
	uint32_t nb = 0, n = 0;
	for (uint32_t s = 0; s < w->nc; ++s) {
		const pbd_collider* c = &w->colliders[s];
		if (!c->alive || c->def.trigger) continue;
		bp->bounded_of[s] =
		    world_bounds(c, c->def.margin + PBD_CONTACT_TOLERANCE, &bp->collider[s].lo, &bp->collider[s].hi);
		if (bp->bounded_of[s]) {
			bp->collider_order[nb++] = s;
			continue;
		}
		for (uint32_t k = 0; k < nk; ++k) { /* unbounded: every chunk */
			if (!grow_to(w, (void**)&bp->pairs, sizeof *bp->pairs, &bp->cap_pairs, n + 1)) return false;
			bp->pairs[n++] = (uint64_t)s << 32 | bp->chunk_order[k];
		}
	}
	if (bp->brute_force) {
		for (uint32_t a = 0; a < nb; ++a)
			for (uint32_t k = 0; k < nk; ++k) {
				const uint32_t sa = bp->collider_order[a], kk = bp->chunk_order[k];
				if (!grow_to(w, (void**)&bp->pairs, sizeof *bp->pairs, &bp->cap_pairs, n + 1)) return false;
				bp->pairs[n++] = (uint64_t)sa << 32 | kk;
			}
		if (n > 1) qsort(bp->pairs, n, sizeof *bp->pairs, pbd_u64_cmp);
		*npairs = n;
		return true;
	}
	sort_by_low_x(bp->collider_order, nb, bp->collider);
	sort_by_low_x(bp->chunk_order, nk, bp->chunk);
	uint32_t i = 0, j = 0;
	while (i < nb && j < nk) {
		const uint32_t s = bp->collider_order[i], k = bp->chunk_order[j];
		if (bp->collider[s].lo.x <= bp->chunk[k].lo.x) {
			for (uint32_t m = j; m < nk && bp->chunk[bp->chunk_order[m]].lo.x <= bp->collider[s].hi.x; ++m) {
				const uint32_t km = bp->chunk_order[m];
				if (!boxes_overlap(&bp->collider[s], &bp->chunk[km])) continue;
				if (!grow_to(w, (void**)&bp->pairs, sizeof *bp->pairs, &bp->cap_pairs, n + 1)) return false;
				bp->pairs[n++] = (uint64_t)s << 32 | km;
			}
			++i;
		} else {
			for (uint32_t m = i; m < nb && bp->collider[bp->collider_order[m]].lo.x <= bp->chunk[k].hi.x; ++m) {
				const uint32_t sm = bp->collider_order[m];
				if (!boxes_overlap(&bp->collider[sm], &bp->chunk[k])) continue;
				if (!grow_to(w, (void**)&bp->pairs, sizeof *bp->pairs, &bp->cap_pairs, n + 1)) return false;
				bp->pairs[n++] = (uint64_t)sm << 32 | k;
			}
			++j;
		}
	}
	if (n > 1) qsort(bp->pairs, n, sizeof *bp->pairs, pbd_u64_cmp);
	*npairs = n;
	return true;
}

/* A search of the colliders' contacts over the broad phase's (collider, chunk) pairs, in blocks
 * of pairs on the world's threads; each pair's contacts come in particle order and the blocks'
 * in block order, so the contacts are those one thread makes, by collider then particle. */
typedef struct find_stage {
	const pbd_world* w;
	pbd_broad* counts; /* the world's, for the dear queries' counts */
	pbd_block_out* o;
	bool sweep;
	bool first; /* the substep's first sweep: it keeps the starting distances */
	uint32_t npairs, known;
} find_stage;

#define PBD_PAIRS_PER_BLOCK 4u

static void find_block(void* arg, uint32_t block, uint32_t worker) {
	const find_stage* st = (const find_stage*)arg;
	const pbd_world* w = st->w;
	const pbd_broad* bp = &w->broad;
	/* The particles' own test uses the collider's box grown by the largest radius. */
	const pbd_real r = w->pcol->max_radius;
	pbd_block_out_open(st->o, block, worker);
	const uint32_t first_pair = block * PBD_PAIRS_PER_BLOCK;
	for (uint32_t k = first_pair, end_pair = pbd_block_end(first_pair, st->npairs, PBD_PAIRS_PER_BLOCK); k < end_pair;
	     ++k) {
		const uint32_t s = (uint32_t)(bp->pairs[k] >> 32), chunk = (uint32_t)bp->pairs[k];
		const uint32_t first = chunk * PBD_CHUNK, end = first + PBD_CHUNK < w->np ? first + PBD_CHUNK : w->np;
		const pbd_box3 box = bp->collider[s];
		const pbd_vec3 lo = pbd_v3(box.lo.x - r, box.lo.y - r, box.lo.z - r),
		               hi = pbd_v3(box.hi.x + r, box.hi.y + r, box.hi.z + r);
		/* The starting distances: kept by the first search, read back by the second look where
		 * the first searched the same pair. */
		pbd_real* keep = NULL;
		const pbd_real* kept = NULL;
		if (st->first) {
			keep = bp->start + (size_t)k * 4 * PBD_CHUNK;
			for (uint32_t m = 0; m < 4 * PBD_CHUNK; ++m) keep[m] = (pbd_real)NAN;
		} else if (st->sweep && bp->nfirst) {
			const uint64_t* at = (const uint64_t*)bsearch(&bp->pairs[k], bp->first_pairs, bp->nfirst,
			                                              sizeof *bp->first_pairs, pbd_u64_cmp);
			if (at) kept = bp->start + (size_t)(at - bp->first_pairs) * 4 * PBD_CHUNK;
		}
		find_for(w, s, st->sweep, first, end, bp->bounded_of[s], lo, hi, st->known, keep, kept, clear_block(w, s),
		         st->counts, st->o, block, worker);
	}
	pbd_block_out_close(st->o, block, worker);
}

/* The contacts of every collider with the particles whose paths reach it, leaving out those
 * that have one among [0, known), into *out (count *n, capacity *cap). */
static bool search(pbd_world* w, bool sweep, bool first, uint32_t known, void** out, uint32_t* n, uint32_t* cap) {
	uint32_t npairs = 0;
	if (!broad_phase(w, &npairs)) return false;
	pbd_broad* bp = &w->broad;
	if (!bp->clear_ready && !clear_setup(w)) return false;
	if (first) {
		bp->nfirst = 0;
		if (sweep) {
			if (!grow_to(w, (void**)&bp->first_pairs, sizeof *bp->first_pairs, &bp->cap_first_pairs, npairs) ||
			    (npairs > UINT32_MAX / (4 * PBD_CHUNK)) ||
			    !grow_to(w, (void**)&bp->start, sizeof *bp->start, &bp->cap_start, npairs * 4 * PBD_CHUNK))
				return false;
			if (npairs) memcpy(bp->first_pairs, bp->pairs, (size_t)npairs * sizeof *bp->pairs);
			bp->nfirst = npairs;
		}
	}
	find_stage st = {w, &w->broad, &w->pcol->collider_out, sweep, first && sweep, npairs, known};
	const uint32_t blocks = pbd_blocks(npairs, PBD_PAIRS_PER_BLOCK);
	if (!pbd_block_out_begin(st.o, &w->mem, w->exec.threads, sizeof(pbd_contact_c), blocks, 0)) return false;
	pbd_exec_stage(&w->exec, find_block, &st, blocks);
	return pbd_block_out_finish(st.o, &w->mem, find_block, &st, UINT32_MAX - 1, out, n, cap);
}

static pbd_status find_contacts(pbd_world* w, bool sweep) {
	w->ncon = 0;
	if (!search(w, sweep, true, 0, (void**)&w->con, &w->ncon, &w->cap_con))
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for the contacts");
	return PBD_OK;
}

pbd_status pbd_collide_begin_substep(pbd_world* w, pbd_real h) {
	for (uint32_t s = 0; s < w->nc; ++s) {
		pbd_collider* c = &w->colliders[s];
		if (!c->alive) continue;
		if (c->body) {
			/* From where the body was at the substep's start to where it is predicted. */
			c->pose0 = c->def.pose;
			pbd_collider_follow(w, c, false);
		} else {
			advance(c, h);
		}
	}
	w->ncon = 0;
	/* a torn substep (pbd_collision_torn) has no contacts */
	if (w->def.collision_mode != PBD_COLLISION_IN_SOLVER || w->pcol->torn) return PBD_OK;
	return find_contacts(w, true);
}

pbd_status pbd_collide_after_iterations(pbd_world* w) {
	if (w->def.collision_mode != PBD_COLLISION_AFTER_SOLVER || w->pcol->torn) return PBD_OK;
	const pbd_status st = find_contacts(w, false);
	pbd_collide_project_contacts(w);
	return st;
}

/* The contact of particle i with collider `slot` among [0, n), by bisection: find_contacts makes
 * them in order (collider, particle) and the late passes keep them so (merge_late). UINT32_MAX:
 * none. */
static uint32_t contact_of(const pbd_world* w, uint32_t n, uint32_t slot, uint32_t i) {
	const uint32_t at = pbd_lower_bound_pair(w->con, sizeof *w->con, n, offsetof(pbd_contact_c, collider),
	                                         offsetof(pbd_contact_c, particle), slot, i);
	return at < n && w->con[at].collider == slot && w->con[at].particle == i ? at : UINT32_MAX;
}

static inline uint64_t contact_key(const pbd_contact_c* c) { return (uint64_t)c->collider << 32 | c->particle; }

/* The contacts [found, ncon) that a late pass added (in order among themselves: find_for makes
 * them by collider, then particle) merged with [0, found) into one run in order, from the back,
 * so that the next pass finds every contact by bisection. False when out of memory for the
 * scratch; the contacts are then as they were, in two runs. */
static bool merge_late(pbd_world* w, uint32_t found) {
	const uint32_t late = w->ncon - found;
	if (!grow_to(w, (void**)&w->con_late, sizeof *w->con_late, &w->cap_con_late, late)) return false;
	memcpy(w->con_late, w->con + found, (size_t)late * sizeof *w->con_late);
	pbd_contact_c* k = w->con;
	uint32_t a = found, b = late, out = w->ncon;
	while (b > 0) {
		if (a > 0 && contact_key(&k[a - 1]) > contact_key(&w->con_late[b - 1]))
			k[--out] = k[--a];
		else
			k[--out] = w->con_late[--b];
	}
	return true;
}

void pbd_collide_yield(pbd_world* w, uint32_t slot, uint32_t particle, pbd_vec3 n) {
	uint32_t k = contact_of(w, w->ncon, slot, particle);
	if (k == UINT32_MAX) {
		/* None yet: one that pushes nothing, so that the late passes do not make one that
		 * pushes the other way. */
		if (w->ncon == w->cap_con && !reserve_contacts(w, w->ncon + 1)) return;
		pbd_contact_c* c = &w->con[w->ncon];
		memset(c, 0, sizeof *c);
		c->particle = particle;
		c->collider = slot;
		c->n = n;
		c->offset = -PBD_REAL_MAX / 4;
		c->yielded = 1;
		w->ncon += 1;
		if (!merge_late(w, w->ncon - 1)) w->ncon -= 1;
		return;
	}
	if (!(pbd_v3_dot(w->con[k].n, n) < 0)) return;
	/* Kept in place, so that the late passes see the particle as having its contact and do not
	 * make it again; an offset no position reaches makes it push nothing, and with no normal
	 * correction it has no friction or restitution either. */
	w->con[k].offset = -PBD_REAL_MAX / 4;
	w->con[k].yielded = 1;
}

static void project_range(pbd_world* w, uint32_t first, uint32_t end);

/* Contacts nothing slips past. The substep's contacts come from each particle's predicted path,
 * but the constraints move particles during the iterations too: a hard link pulling towards a
 * ball's centre, a pin dragged across it, a cloth pulled over an edge. Once the iterations are
 * done, the whole path each particle took in the substep, from x to where the iterations left
 * it, is swept again against the colliders it has no contact with, as the predicted path was
 * (find_for): a path that enters a collider gets the plane where it first touched, one that ends
 * within the margin the plane at its closest surface point, and the new contacts are projected
 * at once. No particle ends a substep inside a collider or its margin shell, nor passes through
 * one, whatever moved it (where a constraint and the collider disagree, the collider wins and the
 * constraint stays violated). Particles that have a contact keep its plane, the energy-free
 * answer for resting contacts. */
pbd_status pbd_collide_catch_late(pbd_world* w, bool sweep) {
	if (w->def.collision_mode != PBD_COLLISION_IN_SOLVER || w->pcol->torn || w->nc == 0) return PBD_OK;
	const uint32_t found = w->ncon;
	uint32_t late = 0;
	if (!search(w, sweep, false, found, (void**)&w->con_late, &late, &w->cap_con_late) ||
	    (late > 0 && !reserve_contacts(w, found + late)))
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for %u late contacts", late);
	if (late > 0) {
		memcpy(w->con + found, w->con_late, (size_t)late * sizeof *w->con);
		w->ncon = found + late;
		project_range(w, found, w->ncon);
		if (!merge_late(w, found))
			return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for %u late contacts", late);
	}
	return PBD_OK;
}

/* A contact with a dynamic body moves both (Müller et al. 2020, section 3.3): the body's point
 * has moved by dx + dtheta x r since the contact was found, the particle must keep n . q at
 * least offset plus that, and the correction splits by the generalised inverse masses w_p and
 * w_b = 1/m + (r x n) . I^-1 (r x n): the particle moves w_p dl along n, the body -dl / m along
 * n and turns by -I^-1 (r x n) dl, with dl = depth / (w_p + w_b). Equal and opposite impulses:
 * momentum is kept. */
static pbd_real body_shift(const pbd_world* w, const pbd_contact_c* c, pbd_vec3 dir) {
	return pbd_v3_dot(dir, pbd_node_body_moved(&w->bodies, c->body - 1, c->r));
}

/* Moves particle i by `corr` (the whole relative correction) against the body of c: the particle
 * takes its share w_p / (w_p + w_b) along corr's direction and the body the rest, reversed.
 * Returns the share the particle took. */
static pbd_real push_body(pbd_world* w, const pbd_contact_c* c, uint32_t i, pbd_vec3 dir, pbd_real amount) {
	pbd_bodies* bs = &w->bodies;
	const uint32_t b = c->body - 1;
	const pbd_real wp = w->w[i];
	pbd_vec3 irn;
	const pbd_real wb = pbd_node_body_weight(bs, b, c->r, dir, &irn);
	const pbd_real dl = amount / (wp + wb);
	w->q[i] = pbd_v3_add(w->q[i], pbd_v3_scale(dir, wp * dl));
	pbd_node_body_push(bs, b, dir, irn, -dl);
	return wp * dl;
}

/* Gravity's unit direction, or zero without gravity. */
static pbd_vec3 gravity_down(const pbd_world* w) {
	const pbd_real g = pbd_v3_length(w->def.gravity);
	return g > 0 ? pbd_v3_scale(w->def.gravity, 1 / g) : pbd_v3(0, 0, 0);
}

/* The sweeps of pbd_collide_settle over the bodies resting on held particles, at most. */
#define PBD_SETTLE_SWEEPS 10

/* The body alone moves `amount` against dir, the particle held. */
static void push_body_alone(pbd_world* w, const pbd_contact_c* c, pbd_vec3 dir, pbd_real amount) {
	pbd_bodies* bs = &w->bodies;
	const uint32_t b = c->body - 1;
	pbd_vec3 irn;
	const pbd_real wb = pbd_node_body_weight(bs, b, c->r, dir, &irn);
	if (wb > 0) pbd_node_body_push(bs, b, dir, irn, -amount / wb);
}

void pbd_collide_project_contacts(pbd_world* w) { project_range(w, 0, w->ncon); }

static void project_range(pbd_world* w, uint32_t first, uint32_t end) {
	pbd_vec3* restrict q = w->q;
	pbd_contact_c* restrict con = w->con;
	for (uint32_t k = first; k < end; ++k) {
		pbd_contact_c* c = &con[k];
		if (c->body) {
			const pbd_real depth = c->offset + body_shift(w, c, c->n) - pbd_v3_dot(c->n, q[c->particle]);
			if (!(depth > 0)) continue;
			push_body(w, c, c->particle, c->n, depth);
			c->dn += depth;
			continue;
		}
		const pbd_real depth = c->offset - pbd_v3_dot(c->n, q[c->particle]);
		if (!(depth > 0)) continue;
		q[c->particle] = pbd_v3_add(q[c->particle], pbd_v3_scale(c->n, depth));
		c->dn += depth;
	}
}

/* Contact c's share of pbd_collide_settle: how far it moved its ends. `held`: only a body's
 * contact on a particle that a fixed collider holds below it, which moves the body alone. */
static pbd_real settle_one(pbd_world* w, const pbd_contact_c* c, pbd_vec3 down, bool held) {
	/* a face carried by the collider holds the particle on the side the collider left */
	if (c->yielded) return 0;
	const uint32_t i = c->particle;
	const bool body_alone = c->body && (w->flags[i] & PBD_PARTICLE_HELD);
	if (held && !body_alone) return 0;
	const pbd_collider* col = &w->colliders[c->collider];
	const pbd_real margin = col->def.margin + w->radius[i];
	/* a body's shape stands where the pose predicts it, moved by the substep's corrections */
	pbd_vec3 at = pbd_v3_add(w->x[i], w->q[i]);
	if (c->body) at = pbd_v3_sub(at, pbd_node_body_moved(&w->bodies, c->body - 1, c->r));
	const pbd_vec3 local = pbd_pose_apply_inverse(col->def.pose, at);
	/* A particle resting on a dear shape moves less in a substep than the tolerance below which
	 * it is moved out: the distance kept from the search proves it, without the query. (A body
	 * alone is moved from the margin itself: that bound, the stricter one, for it.) */
	const pbd_real* kept = clear_block(w, c->collider);
	if (kept && clear_at_least(kept + 4 * (size_t)i, local, margin - (body_alone ? 0 : PBD_CONTACT_TOLERANCE)))
		return 0;
	pbd_vec3 n;
	const size_t near0 = near_base(w, c->collider);
	uint64_t used = 0, gathered = 0;
	const pbd_real d = kept_distance(w, col, pbd_shape_ops_of(col->def.type), near0 == SIZE_MAX ? SIZE_MAX : near0 + i,
	                                 local, -PBD_REAL_MAX, 0, &n, &used, &gathered);
	if (used) atomic_fetch_add_explicit(&w->broad.near_used, used, memory_order_relaxed);
	const pbd_vec3 out = pbd_quat_rotate(col->def.pose.rotation, n);
	/* A body held up by particles settles onto the margin itself: within the tolerance it fell
	 * freely through the 0.1 mm, and each push back out threw it up at 4 cm/s. */
	const bool lifts = body_alone && pbd_v3_dot(out, down) > PBD_R(0.7071);
	if (!(d < margin - (lifts ? 0 : PBD_CONTACT_TOLERANCE))) return 0;
	if (lifts)
		push_body_alone(w, c, out, margin - d);
	else if (held)
		return 0;
	else if (c->body)
		push_body(w, c, i, out, margin - d);
	else
		w->q[i] = pbd_v3_add(w->q[i], pbd_v3_scale(out, margin - d));
	return margin - d;
}

/* The last word of the substep, after the iterations and friction: a particle that a contact
 * plane let into its collider anyway (a plane is one face of a shape; on a non-convex surface the
 * constraints can slide a particle along it into the next bump) moves out by its closest point.
 * Only deeper than the tolerance, so that resting contacts keep the planes' exact, energy-free
 * answer.
 *
 * A body resting on particles that a fixed collider holds up, a crate on a cloth on the floor,
 * moves out alone, the particle held (shock propagation, Guendelman et al. 2003), in sweeps over
 * those contacts until they hold, as a body's own contacts settle (rigid_contact.c). Shared by
 * inverse masses, a 5.5 kg crate on 0.2 g particles took one part in 25 000 of each push while
 * the floor gave the particle back all of it, and the crate sank through the cloth to the
 * floor; in one sweep, each particle lifting the crate in turn left it rocking at 0.6 rad/s. */
void pbd_collide_settle(pbd_world* w) {
	const pbd_vec3 down = gravity_down(w);
	bool any_held = false;
	if (w->bodies.alive)
		for (uint32_t k = 0; k < w->ncon; ++k) {
			const pbd_contact_c* c = &w->con[k];
			/* held: pushed up this substep by a collider that stands still */
			if (c->body || !(c->dn > 0) || !(pbd_v3_dot(c->n, down) < -PBD_R(0.7071)) || pbd_v3_dot(c->vc, c->vc) > 0)
				continue;
			w->flags[c->particle] = (uint8_t)(w->flags[c->particle] | PBD_PARTICLE_HELD);
			any_held = true;
		}
	for (uint32_t k = 0; k < w->ncon; ++k) settle_one(w, &w->con[k], down, false);
	if (!any_held) return;
	for (int sweep = 0; sweep < PBD_SETTLE_SWEEPS; ++sweep) {
		pbd_real most = 0;
		for (uint32_t k = 0; k < w->ncon; ++k) most = PBD_FMAX(most, settle_one(w, &w->con[k], down, true));
		if (!(most > 0)) break;
	}
}

/* Coulomb friction on the substep's slip relative to the surface, s = (q - vc h) less its
 * normal part, bounded by the normal correction dn the contact made: below static_friction dn
 * the particle sticks (s is undone); above, s shrinks by kinetic_friction dn. A particle sliding
 * on a floor with dn = g h^2 per substep thus slows by mu_k g, Coulomb's law. */
void pbd_collide_friction(pbd_world* w, pbd_real h) {
	pbd_vec3* restrict q = w->q;
	for (uint32_t k = 0; k < w->ncon; ++k) {
		const pbd_contact_c* c = &w->con[k];
		if (!(c->dn > 0)) continue;
		const pbd_collider_def* d = &w->colliders[c->collider].def;
		if (!(d->static_friction > 0)) continue;
		pbd_vec3 surface = pbd_v3_scale(c->vc, h);
		if (c->body) surface = pbd_v3_add(surface, pbd_node_body_moved(&w->bodies, c->body - 1, c->r));
		const pbd_vec3 slip = pbd_v3_sub(q[c->particle], surface);
		const pbd_vec3 tan = pbd_v3_sub(slip, pbd_v3_scale(c->n, pbd_v3_dot(c->n, slip)));
		const pbd_real len = pbd_v3_length(tan);
		if (!(len > 0)) continue;
		const pbd_real cut = len <= d->static_friction * c->dn ? 1 : PBD_FMIN(d->kinetic_friction * c->dn / len, 1);
		if (c->body)
			push_body(w, c, c->particle, pbd_v3_scale(tan, -1 / len), cut * len);
		else
			q[c->particle] = pbd_v3_sub(q[c->particle], pbd_v3_scale(tan, cut));
	}
}

/* The velocity of the point of contact c's dynamic body now. */
static pbd_vec3 body_point_velocity(const pbd_world* w, const pbd_contact_c* c) {
	const pbd_bodies* bs = &w->bodies;
	return pbd_v3_add(bs->v[c->body - 1], pbd_v3_cross(bs->omega[c->body - 1], c->r));
}

/* The normal velocity of particle c->particle relative to the surface of c: against a dynamic
 * body, relative to the velocity of the body's point now (Müller et al. 2020, section 3.6). */
static pbd_real relative_vn(const pbd_world* w, const pbd_contact_c* c) {
	const pbd_vec3 v = w->v[c->particle];
	return pbd_v3_dot(c->n, pbd_v3_sub(v, c->body ? body_point_velocity(w, c) : c->vc));
}

/* Changes the relative normal velocity of c by dvn. Against a dynamic body it is an impulse
 * p = dvn / (w_p + w_b) both ends take, split by their generalised inverse masses: the particle's
 * velocity changes by w_p p n, the body's by -p n / m and its spin by -p I^-1 (r x n), which
 * keeps the momentum of the pair. */
static void change_vn(pbd_world* w, const pbd_contact_c* c, pbd_real dvn) {
	pbd_vec3* v = &w->v[c->particle];
	if (!c->body) {
		*v = pbd_v3_add(*v, pbd_v3_scale(c->n, dvn));
		return;
	}
	pbd_bodies* bs = &w->bodies;
	const uint32_t b = c->body - 1;
	pbd_vec3 irn;
	const pbd_real wp = w->w[c->particle], wb = pbd_node_body_weight(bs, b, c->r, c->n, &irn);
	const pbd_real p = dvn / (wp + wb);
	*v = pbd_v3_add(*v, pbd_v3_scale(c->n, wp * p));
	if (!pbd_body_moves(bs, b)) return; /* asleep: it took no share of the push either */
	bs->v[b] = pbd_v3_sub(bs->v[b], pbd_v3_scale(c->n, bs->inv_mass[b] * p));
	bs->omega[b] = pbd_v3_sub(bs->omega[b], pbd_v3_scale(irn, p));
}

/* A particle that started the substep inside the margin shell was pushed out by its depth
 * there, and the velocity update turned that push into a velocity: depth / h along the normal,
 * 2.4 m/s for a cloth laid 1 cm into a floor's shell at 240 substeps a second. Deeper than the
 * contact tolerance (a particle resting on the shell starts each substep on it), that velocity is
 * taken back (at most the push, and never more than leaves the two ends at rest relative to each
 * other along the normal), so that a particle placed inside the shell, or left there, moves out
 * without leaping off. The depth where it started is the contact's offset (taken at the
 * surface's predicted place) less what the surface moved along the normal over the substep,
 * h n . vc: a kinematic collider's motion, or the motion of a dynamic body's point in its
 * prediction (vc is its velocity there, pbd_collider_follow), a push the surface gives and keeps.
 * A particle that falls onto a surface, or a surface that moves onto a particle, started outside
 * it: its depth is not positive and its collision keeps its impulse.
 *
 * A dynamic body took its share of the push, so the velocity comes back from both ends as one
 * impulse p = dv / (w_p + w_b), which keeps the momentum of the pair. A body gives back no more
 * than the substep's corrections left its point moving away from the particle, n . (vc - v_b):
 * where another contact took its share already (a box resting on a floor, which held it up
 * against the push), giving it back would throw the body at the particle's speed times
 * w_b / (w_p + w_b), and the particle takes back the rest alone. */
static void take_back_push_out(pbd_world* w, const pbd_contact_c* c, pbd_real h) {
	const pbd_real depth = c->offset - h * pbd_v3_dot(c->n, c->vc);
	if (!(depth > PBD_CONTACT_TOLERANCE)) return;
	const pbd_real vn = relative_vn(w, c);
	const pbd_real back = PBD_FMIN(depth, c->dn) / h;
	const pbd_real dvn = PBD_FMAX(vn - back, PBD_FMIN(vn, 0)) - vn;
	pbd_vec3* v = &w->v[c->particle];
	if (!c->body) {
		*v = pbd_v3_add(*v, pbd_v3_scale(c->n, dvn));
		return;
	}
	/* a body that settled alone off a held particle (pbd_collide_settle) owes it nothing */
	if (!(dvn < 0) || (w->flags[c->particle] & PBD_PARTICLE_HELD)) return;
	pbd_bodies* bs = &w->bodies;
	const uint32_t b = c->body - 1;
	pbd_vec3 irn;
	const pbd_real wp = w->w[c->particle], wb = pbd_node_body_weight(bs, b, c->r, c->n, &irn);
	pbd_real p = dvn / (wp + wb), dvp = wp * p;
	const pbd_real left = pbd_v3_dot(c->n, pbd_v3_sub(c->vc, body_point_velocity(w, c)));
	if (-wb * p > left) {
		p = left > 0 ? -left / wb : 0;
		dvp = dvn - wb * p;
	}
	*v = pbd_v3_add(*v, pbd_v3_scale(c->n, dvp));
	if (!pbd_body_moves(bs, b)) return;
	bs->v[b] = pbd_v3_sub(bs->v[b], pbd_v3_scale(c->n, bs->inv_mass[b] * p));
	bs->omega[b] = pbd_v3_sub(bs->omega[b], pbd_v3_scale(irn, p));
}

/* The velocities of the bodies that settled alone off held particles (pbd_collide_settle): in
 * sweeps until they hold, each such contact's body point stops along the normal, as the collider
 * that holds the particle stands still; the contacts between bodies do the same after their
 * settling pass (rigid_contact.c). The positions alone left a crate on 25 particles of a cloth on
 * the floor rocking at 0.5 rad/s: each substep's sweeps stopped at a slightly different tilt, and
 * a tilt of 1e-4 rad over a substep of 1/960 s is a turn of 0.1 rad/s. Towards the particle's own
 * speed instead, the crate took up the jitter of particles 12 000 times lighter. */
static void hold_bodies_on_held(pbd_world* w) {
	if (!w->bodies.alive) return;
	const pbd_vec3 down = gravity_down(w);
	pbd_bodies* bs = &w->bodies;
	for (int sweep = 0; sweep < PBD_SETTLE_SWEEPS; ++sweep) {
		pbd_real most = 0;
		for (uint32_t k = 0; k < w->ncon; ++k) {
			const pbd_contact_c* c = &w->con[k];
			if (!c->body || c->yielded || !(c->dn > 0) || !(w->flags[c->particle] & PBD_PARTICLE_HELD)) continue;
			const uint32_t b = c->body - 1;
			if (!pbd_body_moves(bs, b) || !(pbd_v3_dot(c->n, down) > PBD_R(0.7071))) continue;
			const pbd_real vn = -pbd_v3_dot(c->n, body_point_velocity(w, c));
			pbd_vec3 irn;
			const pbd_real wb = pbd_node_body_weight(bs, b, c->r, c->n, &irn);
			if (!(wb > 0)) continue;
			const pbd_real p = vn / wb;
			bs->v[b] = pbd_v3_add(bs->v[b], pbd_v3_scale(c->n, bs->inv_mass[b] * p));
			bs->omega[b] = pbd_v3_add(bs->omega[b], pbd_v3_scale(irn, p));
			most = PBD_FMAX(most, PBD_FABS(vn));
		}
		if (!(most > PBD_R(1e-7))) break;
	}
}

/* A particle that hit the surface faster than 2 |g| h leaves with restitution times its
 * approach speed along the normal; slower contacts keep what the projection left (zero), so a
 * resting particle does not hop. Against a dynamic body the change of relative velocity is an
 * impulse both take, split by their generalised inverse masses at the contact point (Müller et
 * al. 2020, section 3.6), the body's velocity being that of its point now. */
void pbd_collide_restitution(pbd_world* w, pbd_real h) {
	const pbd_real slow = 2 * pbd_v3_length(w->def.gravity) * h;
	for (uint32_t k = 0; k < w->ncon; ++k) {
		const pbd_contact_c* c = &w->con[k];
		if (c->yielded || !(c->dn > 0)) continue;
		take_back_push_out(w, c, h);
		const pbd_real e = w->colliders[c->collider].def.restitution;
		if (!(e > 0) || !(c->vn0 < -slow)) continue;
		change_vn(w, c, -e * c->vn0 - relative_vn(w, c));
	}
	hold_bodies_on_held(w);
	for (uint32_t k = 0; k < w->ncon; ++k)
		w->flags[w->con[k].particle] = (uint8_t)(w->flags[w->con[k].particle] & ~PBD_PARTICLE_HELD);
}

/* ---- after the step ----------------------------------------------------------------------- */

static int published_cmp(const void* a, const void* b) {
	const pbd_contact* x = (const pbd_contact*)a;
	const pbd_contact* y = (const pbd_contact*)b;
	if (x->collider_index1 != y->collider_index1) return x->collider_index1 < y->collider_index1 ? -1 : 1;
	return x->particle < y->particle ? -1 : x->particle > y->particle;
}

/* The published contacts: those of the last substep that touch (within the margin plus a
 * tolerance) or pushed, with the distance and closest point of the final position. */
static bool publish_contacts(pbd_world* w) {
	w->npub = 0;
	if (!grow_to(w, (void**)&w->pub, sizeof *w->pub, &w->cap_pub, w->ncon)) return false;
	for (uint32_t k = 0; k < w->ncon; ++k) {
		const pbd_contact_c* c = &w->con[k];
		if (c->yielded) continue;
		const pbd_collider* col = &w->colliders[c->collider];
		pbd_vec3 n;
		const pbd_vec3 local = pbd_pose_apply_inverse(col->def.pose, w->x[c->particle]);
		const pbd_real d = pbd_shape_ops_of(col->def.type)->distance(&col->def, local, &n);
		if (!(c->dn > 0) && !(d <= col->def.margin + w->radius[c->particle] + PBD_CONTACT_TOLERANCE)) continue;
		pbd_contact* out = &w->pub[w->npub++];
		out->particle = c->particle;
		out->collider_index1 = c->collider + 1;
		out->point = pbd_pose_apply(col->def.pose, pbd_v3_sub(local, pbd_v3_scale(n, d)));
		out->normal = pbd_quat_rotate(col->def.pose.rotation, n);
		out->distance = d;
		out->normal_correction = c->dn;
	}
	/* The contacts are kept in order (merge_late); only a merge that ran out of memory leaves
	 * them in two runs, and the published ones are put back in order then. */
	bool ordered = true;
	for (uint32_t k = 1; k < w->npub && ordered; ++k) ordered = published_cmp(&w->pub[k - 1], &w->pub[k]) < 0;
	if (!ordered) qsort(w->pub, w->npub, sizeof *w->pub, published_cmp);
	return true;
}

/* Trigger occupancy as sorted keys (slot << 32 | particle); events are the difference between
 * the last step's keys and this one's. */
/* The soft object a particle belongs to (its index in w->softs), or UINT32_MAX: the objects'
 * particle ranges are disjoint and in increasing order. */
static uint32_t object_of(const pbd_world* w, uint32_t particle) {
	uint32_t lo = 0, hi = w->ns;
	while (lo < hi) {
		const uint32_t mid = lo + (hi - lo) / 2;
		if (w->softs[mid].info.first_particle + w->softs[mid].info.particle_count <= particle)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < w->ns && w->softs[lo].alive && w->softs[lo].info.first_particle <= particle) return lo;
	return UINT32_MAX;
}

/* The distinct (trigger slot, object) keys of a sorted occupancy list, sorted. */
static bool object_keys(pbd_world* w, const uint64_t* list, uint32_t n, uint64_t** out, uint32_t* cap,
                        uint32_t* count) {
	*count = 0;
	for (uint32_t k = 0; k < n; ++k) {
		const uint32_t o = object_of(w, (uint32_t)list[k]);
		if (o == UINT32_MAX) continue;
		const uint64_t key = (list[k] >> 32) << 32 | o;
		if (*count && (*out)[*count - 1] == key) continue;
		if (!grow_to(w, (void**)out, sizeof **out, cap, *count + 1)) return false;
		(*out)[(*count)++] = key;
	}
	return true;
}

/* An object entered a trigger when the first of its particles did, and left when the last did. */
static bool object_events(pbd_world* w, uint32_t n_next) {
	w->nobj_ev = 0;
	uint32_t na, nb;
	if (!object_keys(w, w->inside, w->ninside, &w->obj_prev, &w->cap_obj_prev, &na) ||
	    !object_keys(w, w->inside_next, n_next, &w->obj_next, &w->cap_obj_next, &nb))
		return false;
	uint32_t a = 0, b = 0;
	while (a < na || b < nb) {
		const uint64_t ka = a < na ? w->obj_prev[a] : UINT64_MAX, kb = b < nb ? w->obj_next[b] : UINT64_MAX;
		if (ka == kb) {
			++a;
			++b;
			continue;
		}
		const bool entered = kb < ka;
		const uint64_t key = entered ? kb : ka;
		entered ? ++b : ++a;
		if (!entered && !w->colliders[key >> 32].alive) continue;
		if (!grow_to(w, (void**)&w->obj_events, sizeof *w->obj_events, &w->cap_obj_events, w->nobj_ev + 1))
			return false;
		const pbd_soft_rec* r = &w->softs[(uint32_t)key];
		w->obj_events[w->nobj_ev++] =
		    (pbd_trigger_object_event){(uint32_t)(key >> 32) + 1, {(uint32_t)key + 1, r->generation}, entered};
	}
	return true;
}

static bool update_triggers(pbd_world* w) {
	w->nev = 0;
	uint32_t n = 0;
	for (uint32_t s = 0; s < w->nc; ++s) {
		const pbd_collider* c = &w->colliders[s];
		if (!c->alive || !c->def.trigger) continue;
		const pbd_shape_ops* ops = pbd_shape_ops_of(c->def.type);
		pbd_vec3 lo, hi;
		const bool bounded = world_bounds(c, c->def.margin, &lo, &hi);
		for (uint32_t i = 0; i < w->np; ++i) {
			if (!(w->cmask[i] & c->def.category)) continue;
			const pbd_vec3 xi = w->x[i];
			if (bounded && pbd_segment_bounds_miss(xi, xi, lo, hi)) continue;
			pbd_vec3 nrm;
			if (!(ops->distance(&c->def, pbd_pose_apply_inverse(c->def.pose, xi), &nrm) <= c->def.margin)) continue;
			if (!grow_to(w, (void**)&w->inside_next, sizeof *w->inside_next, &w->cap_inside_next, n + 1)) return false;
			w->inside_next[n++] = (uint64_t)s << 32 | i;
		}
	}
	/* Both lists are sorted: merge them. */
	uint32_t a = 0, b = 0;
	while (a < w->ninside || b < n) {
		const uint64_t ka = a < w->ninside ? w->inside[a] : UINT64_MAX, kb = b < n ? w->inside_next[b] : UINT64_MAX;
		if (ka == kb) {
			++a;
			++b;
			continue;
		}
		const bool entered = kb < ka;
		const uint64_t key = entered ? kb : ka;
		entered ? ++b : ++a;
		/* A trigger destroyed since the last step reports nothing more. */
		if (!entered && !w->colliders[key >> 32].alive) continue;
		if (!grow_to(w, (void**)&w->events, sizeof *w->events, &w->cap_events, w->nev + 1)) return false;
		w->events[w->nev++] = (pbd_trigger_event){(uint32_t)(key >> 32) + 1, (uint32_t)key, entered};
	}
	if (!object_events(w, n)) return false;
	uint64_t* t = w->inside;
	const uint32_t tc = w->cap_inside;
	w->inside = w->inside_next;
	w->cap_inside = w->cap_inside_next;
	w->ninside = n;
	w->inside_next = t;
	w->cap_inside_next = tc;
	return true;
}

void pbd_collide_drop_kept(pbd_world* w) {
	w->broad.clear_ready = false;
	w->broad.near_ready = false;
}

pbd_real pbd_collide_stats_distance(const pbd_world* w, uint32_t slot, uint32_t i, pbd_vec3 l, pbd_real reach) {
	const pbd_collider* c = &w->colliders[slot];
	const pbd_shape_ops* ops = pbd_shape_ops_of(c->def.type);
	const pbd_real* kept = clear_block(w, slot);
	if (kept && clear_beyond(kept + 4 * (size_t)i, l, reach)) return PBD_REAL_MAX;
	const size_t base = near_base(w, slot);
	pbd_vec3 n;
	uint64_t used = 0, gathered = 0;
	return kept_distance(w, c, ops, base == SIZE_MAX ? SIZE_MAX : base + i, l, -PBD_REAL_MAX, 0, &n, &used, &gathered);
}

pbd_status pbd_collide_end_step(pbd_world* w) {
	/* the kept distances and lists stay for the step's statistics (pbd_collide_stats_distance),
	 * and go with pbd_collide_drop_kept */
	w->fkeep.ready = false;
	if (!publish_contacts(w) || !update_triggers(w))
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory publishing contacts");
	return PBD_OK;
}

uint32_t pbd_world_get_contacts(const pbd_world* w, pbd_contact* out, uint32_t capacity) {
	if (!w) return 0;
	if (out)
		for (uint32_t k = 0; k < w->npub && k < capacity; ++k) out[k] = w->pub[k];
	return w->npub;
}

uint32_t pbd_world_get_trigger_events(const pbd_world* w, pbd_trigger_event* out, uint32_t capacity) {
	if (!w) return 0;
	if (out)
		for (uint32_t k = 0; k < w->nev && k < capacity; ++k) out[k] = w->events[k];
	return w->nev;
}

uint32_t pbd_world_get_trigger_object_events(const pbd_world* w, pbd_trigger_object_event* out, uint32_t capacity) {
	if (!w) return 0;
	if (out)
		for (uint32_t k = 0; k < w->nobj_ev && k < capacity; ++k) out[k] = w->obj_events[k];
	return w->nobj_ev;
}
