/* Thin cloth against itself and other cloth: edges against edges. Two edges can pass through
 * each other with no vertex passing through a face (two strips crossing edge-on, a fold whose
 * edges slide across each other), which neither the particle pairs (self_collision.c) nor the
 * vertex-face contacts (vertex_triangle.c) see. Here:
 *
 *  - the edges of the triangles whose endpoints have a thickness are listed once per step, each
 *    once, in increasing (a, b) order;
 *  - in each substep an edge is tested against its candidates (edge_candidates.c: lists kept
 *    across substeps, with no pair that shares a vertex, that is one object without
 *    self-collision, or that lies within the thickness of each other in the rest shape) whose
 *    boxes of the substep meet its own; each edge's partners come in the edge list's order, and
 *    so do its contacts, whatever the lists kept;
 *  - a pair went through each other within the substep when V = N . (a - c), N = (b - a) x (d - c)
 *    the edges' common normal, changes sign between the start and the prediction (Provot 1997,
 *    Bridson et al. 2002: two edges can only pass through each other where their four points
 *    are coplanar, V = 0), and where it crosses zero (bisection: V is a cubic in time) the
 *    segments meet inside both. Such a contact pushes them back along N turned to the sign V had
 *    at the start;
 *  - otherwise a pair is a contact while the prediction brings the segments nearer than the
 *    thickness plus their motion, with the direction between the closest points at the start as
 *    its normal.
 *
 * The coplanarity test decides a crossing, not a flip of the direction between the closest
 * points: that direction turns as edges slide across each other and flips when one passes the
 * other's end, with no crossing. The start's direction, not the prediction's, is the normal of
 * the other contacts: in a fold that snaps shut two predicted edges can meet, and a direction
 * between points 0 apart is noise (it pushed whole columns of a folded cloth sideways by a
 * thickness and blew it up).
 *
 * The contact is n . (p(s) - p(t)) >= thickness with p(s) = (1 - s) p_a + s p_b and
 * p(t) = (1 - t) p_c + t p_d at the prediction's closest parameters, projected with the four
 * inverse masses weighted by the interpolation weights: its corrections sum to zero momentum.
 * docs/collision.md, "Edges against edges", has the equations. */
#include <math.h>
#include <string.h>

#include "collision/self_collision.h"
#include "collision/shape_math.h"
#include "model/world.h"

/* Below this start separation along N, over the thickness, the side along N is a guess (two
 * edges of one flat layer lie in a plane, V = 0 to rounding), and a sign change is no crossing. */
#define PBD_EE_SIDE_MIN PBD_R(0.25)

/* A pair that starts nearer than the thickness is pushed apart by at most this many thicknesses
 * in a substep: the push becomes velocity, and a pair crushed together at a substep's start (a
 * fold snapping shut) would leave at a thickness per substep. */
#define PBD_EE_GROW PBD_R(0.25)
/* Bisection steps for the moment of coplanarity (the substep over 2^12), and how near the
 * segments must come there, over the thickness, to have gone through each other. */
#define PBD_EE_BISECT 12
#define PBD_EE_MEET   PBD_R(0.1)

/* Edges at an angle whose sine is at least PBD_EE_ANGLE_MIN: only there does N = u x v have a
 * direction that a sign change of V can be read against. Between nearly parallel edges N turns
 * through zero as they turn past each other, and V changes sign with it while the edges lie a
 * thickness apart (two stacked layers' parallel edges); those are left to the contact by the
 * direction between the closest points. */
#define PBD_EE_ANGLE_MIN PBD_R(0.1)

static bool at_angle(pbd_vec3 n, pbd_vec3 u, pbd_vec3 v) {
	return pbd_v3_dot(n, n) >= PBD_EE_ANGLE_MIN * PBD_EE_ANGLE_MIN * pbd_v3_dot(u, u) * pbd_v3_dot(v, v);
}

static bool edge_on(const pbd_world* w, uint32_t a, uint32_t b) {
	return w->radius[a] > 0 && w->radius[b] > 0 && !(w->cgroup[a] & PBD_GROUP_NO_EDGES);
}

/* Allocates; the caller reports a failure. */
pbd_status pbd_edge_edge_prepare(pbd_world* w) {
	pbd_particle_collision* c = w->pcol;
	c->nedge = 0;
	if (w->nt == 0 || c->solid < 4) return PBD_OK;
	/* Nothing to list when no edge can meet another: one object with edge contacts, without
	 * self-collision (the pass would hash its edges only to turn every pair away). */
	bool several = false, self = false;
	uint32_t group = 0;
	for (uint32_t i = 0; i < w->np && !several && !self; ++i) {
		if (!(w->radius[i] > 0) || (w->cgroup[i] & PBD_GROUP_NO_EDGES)) continue;
		if (group == 0) group = w->cgroup[i];
		several = w->cgroup[i] != group;
		self = (w->cgroup[i] & PBD_GROUP_SELF) != 0;
	}
	if (!several && !self) return PBD_OK;
	/* Each triangle's edges as (lo, hi), bucketed by lo with a counting sort: linear in the
	 * triangles, and each bucket is short (the edges around one vertex). */
	const uint32_t np = w->np, half = 3 * w->nt;
	if ((uint64_t)np + 1 + half > UINT32_MAX ||
	    !pbd_grow_to(&w->mem, (void**)&c->edge_scratch, sizeof *c->edge_scratch, &c->cap_edge_scratch, np + 1 + half))
		return PBD_ERR_OUT_OF_MEMORY;
	uint32_t* start = c->edge_scratch;
	uint32_t* other = c->edge_scratch + np + 1;
	memset(start, 0, ((size_t)np + 1) * sizeof *start);
	for (int pass = 0; pass < 2; ++pass) {
		if (pass == 1) {
			uint32_t sum = 0;
			for (uint32_t i = 0; i <= np; ++i) {
				sum += start[i];
				start[i] = sum;
			}
		}
		for (uint32_t t = w->nt; t-- > 0;)
			for (int k = 0; k < 3; ++k) {
				const uint32_t u = w->tri[3 * t + (uint32_t)k], v = w->tri[3 * t + (uint32_t)(k + 1) % 3];
				if (u == v || !edge_on(w, u, v)) continue;
				const uint32_t lo = u < v ? u : v, hi = u < v ? v : u;
				if (pass == 0)
					start[lo]++;
				else
					other[--start[lo]] = hi;
			}
	}
	uint32_t n = 0;
	for (uint32_t i = 0; i < np; ++i) {
		uint32_t* b = other + start[i];
		const uint32_t m = start[i + 1] - start[i];
		for (uint32_t k = 1; k < m; ++k) /* insertion sort: a handful of entries */
			for (uint32_t j = k; j > 0 && b[j - 1] > b[j]; --j) {
				const uint32_t tmp = b[j];
				b[j] = b[j - 1];
				b[j - 1] = tmp;
			}
		for (uint32_t k = 0; k < m; ++k) n += k == 0 || b[k] != b[k - 1];
	}
	if (!pbd_grow_to(&w->mem, (void**)&c->edge, sizeof *c->edge, &c->cap_edge, 2 * n) ||
	    !pbd_grow_to(&w->mem, (void**)&c->ebox, sizeof *c->ebox, &c->cap_ebox, n))
		return PBD_ERR_OUT_OF_MEMORY;
	bool changed = n != c->ecand.nedge;
	for (uint32_t i = 0; i < np; ++i) {
		const uint32_t* b = other + start[i];
		for (uint32_t k = 0, m = start[i + 1] - start[i]; k < m; ++k)
			if (k == 0 || b[k] != b[k - 1]) {
				changed = changed || c->edge[2 * c->nedge] != i || c->edge[2 * c->nedge + 1] != b[k];
				c->edge[2 * c->nedge] = i;
				c->edge[2 * c->nedge + 1] = b[k];
				c->nedge++;
			}
	}
	/* The kept candidates hold while the list is the one they were found for. */
	c->ecand.edges_changed |= changed;
	return PBD_OK;
}

static pbd_vec3 lerp(pbd_vec3 a, pbd_vec3 b, pbd_real s) { return pbd_v3_add(a, pbd_v3_scale(pbd_v3_sub(b, a), s)); }

/* Whether edges p0[0]p0[1] and p0[2]p0[3], moving by dq over the substep, went through each
 * other: V = N . (a - c) changes sign from v0 (at the start, where the edges are at least
 * PBD_EE_SIDE_MIN thick apart along N) to v1 (at the prediction), N keeps its direction and the
 * edges are at an angle at both ends, and where V crosses zero the segments meet inside both. */
static bool went_through(const pbd_vec3 p0[4], const pbd_vec3 dq[4], pbd_vec3 n0, pbd_vec3 n1, pbd_real v0, pbd_real v1,
                         pbd_real thick) {
	pbd_vec3 p1[4];
	for (int k = 0; k < 4; ++k) p1[k] = pbd_v3_add(p0[k], dq[k]);
	if (v0 == 0 || (v0 > 0 ? v1 > 0 : v1 < 0) || !(PBD_FABS(v0) >= PBD_EE_SIDE_MIN * thick * pbd_v3_length(n0)) ||
	    !(pbd_v3_dot(n0, n1) > 0) || !at_angle(n0, pbd_v3_sub(p0[1], p0[0]), pbd_v3_sub(p0[3], p0[2])) ||
	    !at_angle(n1, pbd_v3_sub(p1[1], p1[0]), pbd_v3_sub(p1[3], p1[2])))
		return false;
	/* The moment V crosses zero, by bisection: V is a cubic in time, and the pairs that get here
	 * are few. */
	pbd_real lo = 0, hi = 1;
	pbd_vec3 m[4];
	for (int it = 0; it < PBD_EE_BISECT; ++it) {
		const pbd_real mid = PBD_R(0.5) * (lo + hi);
		for (int k = 0; k < 4; ++k) m[k] = pbd_v3_add(p0[k], pbd_v3_scale(dq[k], mid));
		const pbd_real vm =
		    pbd_v3_dot(pbd_v3_cross(pbd_v3_sub(m[1], m[0]), pbd_v3_sub(m[3], m[2])), pbd_v3_sub(m[0], m[2]));
		if ((vm > 0) == (v0 > 0))
			lo = mid;
		else
			hi = mid;
	}
	for (int k = 0; k < 4; ++k) m[k] = pbd_v3_add(p0[k], pbd_v3_scale(dq[k], PBD_R(0.5) * (lo + hi)));
	pbd_real s, t;
	pbd_closest_segments(m[0], m[1], m[2], m[3], &s, &t);
	const pbd_vec3 g = pbd_v3_sub(lerp(m[0], m[1], s), lerp(m[2], m[3], t));
	return s > 0 && s < 1 && t > 0 && t < 1 && pbd_v3_dot(g, g) < PBD_EE_MEET * PBD_EE_MEET * thick * thick;
}

bool pbd_edge_edge_contact(const pbd_world* w, uint32_t a, uint32_t b, uint32_t c, uint32_t d, pbd_real thick,
                           pbd_ee_c* out) {
	const pbd_vec3* x = w->x;
	const pbd_vec3* q = w->q;
	/* Relative to a's start: small numbers far from the origin. The points are named, not put in
	 * arrays, which the compiler would keep in memory (rebuilt from partial stores and read back
	 * whole, a stall per read) for the one rare call that needs them. */
	const pbd_vec3 z = pbd_v3(0, 0, 0);
	const pbd_vec3 a0 = z, b0 = pbd_v3_sub(x[b], x[a]), c0 = pbd_v3_sub(x[c], x[a]), d0 = pbd_v3_sub(x[d], x[a]);
	const pbd_vec3 qa = q[a], qb = q[b], qc = q[c], qd = q[d];
	const pbd_vec3 a1 = pbd_v3_add(a0, qa), b1 = pbd_v3_add(b0, qb), c1 = pbd_v3_add(c0, qc), d1 = pbd_v3_add(d0, qd);
	const pbd_vec3 n0 = pbd_v3_cross(pbd_v3_sub(b0, a0), pbd_v3_sub(d0, c0));
	const pbd_vec3 n1 = pbd_v3_cross(pbd_v3_sub(b1, a1), pbd_v3_sub(d1, c1));
	const pbd_real v0 = pbd_v3_dot(n0, pbd_v3_sub(a0, c0)), v1 = pbd_v3_dot(n1, pbd_v3_sub(a1, c1));
	/* Within reach of a contact at the prediction: the thickness, and as far again as any of the
	 * four moved (a speculative reach, for what the iterations may still move them). */
	pbd_real motion = 0;
	motion = PBD_FMAX(motion, pbd_v3_dot(qa, qa));
	motion = PBD_FMAX(motion, pbd_v3_dot(qb, qb));
	motion = PBD_FMAX(motion, pbd_v3_dot(qc, qc));
	motion = PBD_FMAX(motion, pbd_v3_dot(qd, qd));
	const pbd_real reach = thick + PBD_SQRT(motion);
	const bool sign_change = v0 != 0 && (v0 > 0 ? v1 <= 0 : v1 >= 0);
	/* Most candidates are turned away here, before the closest points: no point of a segment is
	 * farther than half its length from its middle, so the middles' distance less the half
	 * lengths bounds the segments' distance from below (a thousandth of the reach spare for the
	 * rounding, so that no pair the exact test keeps is lost). */
	if (!sign_change) {
		const pbd_vec3 m = pbd_v3_sub(pbd_v3_add(a1, b1), pbd_v3_add(c1, d1));
		const pbd_real half = pbd_v3_length(pbd_v3_sub(b1, a1)) + pbd_v3_length(pbd_v3_sub(d1, c1));
		if (pbd_v3_length(m) - half > 2 * reach * PBD_R(1.001)) return false;
	}
	pbd_real s, t;
	pbd_closest_segments(a1, b1, c1, d1, &s, &t);
	const pbd_vec3 gap = pbd_v3_sub(lerp(a1, b1, s), lerp(c1, d1, t));
	const pbd_real dist = pbd_v3_length(gap);
	const bool near = dist < reach;
	if (!near && !sign_change) return false;
	pbd_vec3 n;
	pbd_real start; /* the gap the pair had at the start, along n */
	bool through = false;
	if (sign_change) {
		const pbd_vec3 p0[4] = {a0, b0, c0, d0}, dq[4] = {qa, qb, qc, qd};
		through = went_through(p0, dq, n0, n1, v0, v1, thick);
	}
	if (through) {
		/* Back along N, turned to the starting side. */
		const pbd_real len1 = pbd_v3_length(n1);
		if (!(len1 > PBD_EPSILON_LENGTH)) return false;
		n = pbd_v3_scale(n1, (v0 > 0 ? 1 : -1) / len1);
		start = PBD_FABS(v0) / pbd_v3_length(n0);
	} else {
		if (!near) return false;
		/* The direction between the closest points at the start, where the pair was apart: at
		 * the prediction two edges can meet (a snapping fold), and a direction taken there is
		 * noise, which pushed columns of a folded cloth sideways by a thickness and blew it up. */
		pbd_real s0, t0;
		pbd_closest_segments(a0, b0, c0, d0, &s0, &t0);
		const pbd_vec3 gap0 = pbd_v3_sub(lerp(a0, b0, s0), lerp(c0, d0, t0));
		const pbd_real dist0 = pbd_v3_length(gap0);
		if (dist0 > PBD_EPSILON_LENGTH)
			n = pbd_v3_scale(gap0, 1 / dist0);
		else if (dist > PBD_EPSILON_LENGTH)
			n = pbd_v3_scale(gap, 1 / dist);
		else
			return false;
		start = dist0;
	}
	out->a = a, out->b = b, out->c = c, out->d = d;
	out->s = s, out->t = t;
	out->n = n;
	/* n . (p(s) - p(t)) >= target, with the x parts (relative to x_a) folded in. A pair that
	 * starts nearer than the thickness is pushed out by at most PBD_EE_GROW thick per substep. */
	const pbd_real target = PBD_FMIN(thick, start + PBD_EE_GROW * thick);
	out->offset = target - pbd_v3_dot(n, pbd_v3_sub(pbd_v3_scale(b0, s), lerp(c0, d0, t)));
	return true;
}

/* The edges of one block against their listed candidates (edge_candidates.c) whose boxes of the
 * substep meet theirs and have a particle free to move: each edge's contacts come in the order of
 * the other edge, (c, d) in the edge list's order. */
static void ee_block(void* arg, uint32_t block, uint32_t worker) {
	const pbd_find_stage* s = (const pbd_find_stage*)arg;
	const pbd_world* w = s->w;
	const pbd_particle_collision* c = w->pcol;
	pbd_block_out* o = s->o;
	const uint32_t first_edge = block * s->block, end_edge = pbd_block_end(first_edge, c->nedge, s->block);
	pbd_block_out_open(o, block, worker);
	for (uint32_t e = first_edge; e < end_edge; ++e) {
		const uint32_t a = c->edge[2 * e], b = c->edge[2 * e + 1];
		uint32_t kept = 0;
		bool capped = false;
		for (uint32_t j = c->ecand.first[e]; j < c->ecand.first[e + 1]; ++j) {
			const uint32_t f = c->ecand.other[j];
			const pbd_box3 be = c->ebox[e], bf = c->ebox[f];
			if (be.lo.x > bf.hi.x || bf.lo.x > be.hi.x || be.lo.y > bf.hi.y || bf.lo.y > be.hi.y || be.lo.z > bf.hi.z ||
			    bf.lo.z > be.hi.z)
				continue;
			const uint32_t cc = c->edge[2 * f], dd = c->edge[2 * f + 1];
			if (w->w[a] <= 0 && w->w[b] <= 0 && w->w[cc] <= 0 && w->w[dd] <= 0) continue;
			const pbd_real thick = PBD_FMAX(w->radius[a], w->radius[b]) + PBD_FMAX(w->radius[cc], w->radius[dd]);
			pbd_ee_c k2;
			if (!pbd_edge_edge_contact(w, a, b, cc, dd, thick, &k2)) continue;
			if (kept == PBD_COLLISION_MAX_CONTACTS) {
				capped = true;
				break;
			}
			kept++;
			pbd_ee_c* rec = (pbd_ee_c*)pbd_block_out_push(o, block, worker);
			if (rec) *rec = k2; /* out of room: counted, and the block runs again */
		}
		pbd_block_out_item(o, block, c->ecand.first[e + 1] - c->ecand.first[e], kept, capped);
	}
	pbd_block_out_close(o, block, worker);
}

pbd_status pbd_edge_edge_find(pbd_world* w) {
	pbd_particle_collision* c = w->pcol;
	c->nee = 0;
	if (c->nedge < 2) return PBD_OK;
	const char* oom = "pbd_world_step: out of memory for the edge contacts";
	for (uint32_t k = 0; k < c->nedge; ++k)
		c->ebox[k] = pbd_box3_of_paths(w->x, w->q, &c->edge[2 * k], 2, c->max_radius);
	if (!pbd_edge_candidates_update(w)) return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s", oom);
	/* 128 edges per block */
	pbd_find_stage st = {w, NULL, &c->ee_out, 128};
	if (!pbd_find_in_blocks(w, &st, ee_block, sizeof(pbd_ee_c), c->nedge, 0, (void**)&c->ee, &c->nee, &c->cap_ee))
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s", oom);
	return PBD_OK;
}

void pbd_edge_edge_project(pbd_world* w, const uint32_t* ref, uint32_t count) {
	const pbd_particle_collision* c = w->pcol;
	const pbd_vec3* held = c->any_held ? c->held : NULL;
	for (uint32_t r = 0; r < count; ++r) {
		const pbd_ee_c* e = &c->ee[ref ? ref[r] & PBD_CONTACT_REF_INDEX : r];
		const uint32_t idx[4] = {e->a, e->b, e->c, e->d};
		const pbd_real g[4] = {1 - e->s, e->s, -(1 - e->t), -e->t};
		pbd_project_held_contact(w->q, w->w, held, idx, g, 4, e->n, e->offset, held && c->held_only);
	}
}
