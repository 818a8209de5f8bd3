/* The soft step for the bodies' contacts (PBD_BODY_SOLVER_SOFT_STEP; docs/collision.md, "Solvers
 * for body contacts"): Box2D v3's substep in the terms of the contact stage.
 *
 * A body's prediction is x + h v, and a correction dx of it is the velocity change dx / h
 * (pbd_bodies_apply_corrections), so an impulse P applied before the positions is the correction
 * h P / m. Each substep the contacts apply the impulses they carry (warm starting); the iterations
 * solve each contact with a soft bias towards its separation at the substep's start; after the
 * positions the velocity pass solves them again without the bias (relaxing), as impulses on the
 * velocities alone, and after the step's last substep restitution gives back the speed a contact
 * closed in with. Each contact keeps the impulses it summed, normal >= 0 and friction within mu
 * times the normal one, for the same contact in the next substep and step.
 *
 * The search (rigid_contact.c) runs at the step's first substep only; the later substeps move its
 * contacts with their bodies. The passes take the contacts colour by colour: a colour holds no two
 * contacts on one moving body, so its contacts run side by side on the world's threads and the
 * result is the colouring's, the same on any number of threads. */
#include <math.h>
#include <string.h>

#include "collision/rigid_contact.h"
#include "core/task.h"

/* The soft step's contact softness: unless the world sets contact_hertz, a contact springs back
 * at PBD_SOFT_RATE_SHARE of the substep rate (30 Hz at 4 substeps of 1/60 s, Box2D v3's default;
 * a softer contact sags more under a load, g / omega^2 per unit of load over mass, and at a
 * quarter of the rate a stack of 20 cubes swayed 7 cm in 10 s at 4 substeps and 3.9 cm at 16),
 * with Box2D's damping ratio PBD_SOFT_DAMPING, twice that against an end no contact moves, and
 * never pushes faster than PBD_SOFT_PUSH m/s. */
#define PBD_SOFT_RATE_SHARE PBD_R(0.125)
#define PBD_SOFT_DAMPING    PBD_R(10.0)
#define PBD_SOFT_PUSH       PBD_R(3.0)

/* A soft constraint's coefficients for a substep of h (Catto, "Solver2D", 2024): the bias rate
 * (1/s) on the separation, and the shares of the rigid impulse and of the impulse so far. */
typedef struct softness {
	pbd_real bias_rate, mass_scale, impulse_scale;
} softness;

static softness soft_of(pbd_real hertz, pbd_real h) {
	const pbd_real omega = PBD_R(6.283185307179586) * hertz;
	const pbd_real a1 = 2 * PBD_SOFT_DAMPING + h * omega, a2 = h * omega * a1, a3 = 1 / (1 + a2);
	return (softness){omega / a1, a2 * a3, a3};
}

/* The velocity of the contact's point on body `body` (slot + 1) with this substep's corrections
 * so far as velocities. */
static pbd_vec3 corrected_velocity(const pbd_world* w, uint32_t body, pbd_vec3 r, pbd_real inv_h) {
	if (!body) return pbd_v3(0, 0, 0);
	const pbd_bodies* b = &w->bodies;
	const pbd_vec3 v = pbd_v3_add(b->v[body - 1], pbd_v3_cross(b->omega[body - 1], r));
	return pbd_v3_add(v, pbd_v3_scale(pbd_rigid_moved(w, body, r), inv_h));
}

/* The impulse p (N s) along unit dir on the contact's two points (+ on the feature's body), whose
 * ends turn by jp and js per unit (I^-1 (r x dir)): as the correction h p, or as the velocity
 * change p with `on_velocity`. */
static void soft_apply(pbd_world* w, const pbd_rigid_c* k, pbd_vec3 dir, pbd_vec3 jp, pbd_vec3 js, pbd_real p,
                       pbd_real h, bool on_velocity) {
	if (on_velocity) {
		pbd_rigid_impulse(w, k, dir, k->wp, jp, k->ws, js, p);
		return;
	}
	if (k->p) pbd_node_body_push(&w->bodies, k->p - 1, dir, jp, h * p);
	if (k->s) pbd_node_body_push(&w->bodies, k->s - 1, dir, js, -h * p);
}

/* The tangential friction of a contact whose relative point velocity is `rel`: along each tangent
 * the impulse that stops the slip, their sum kept within the cone mu pn (mu_s while it holds,
 * mu_k once it slides). */
static void soft_friction(pbd_world* w, pbd_rigid_c* k, pbd_vec3 rel, pbd_real h, bool on_velocity) {
	if (!(k->mu_s > 0) || !(k->wt[0] > 0) || !(k->wt[1] > 0)) return;
	const pbd_real was[2] = {pbd_v3_dot(k->pt, k->t[0]), pbd_v3_dot(k->pt, k->t[1])};
	pbd_real want[2] = {was[0] - pbd_v3_dot(rel, k->t[0]) / k->wt[0], was[1] - pbd_v3_dot(rel, k->t[1]) / k->wt[1]};
	const pbd_real size = PBD_SQRT(want[0] * want[0] + want[1] * want[1]), cone = k->mu_s * k->pn;
	if (size > cone) {
		const pbd_real f = k->mu_k * k->pn / size;
		want[0] *= f, want[1] *= f;
	}
	for (int a = 0; a < 2; ++a)
		if (want[a] != was[a]) soft_apply(w, k, k->t[a], k->ipt[a], k->ist[a], want[a] - was[a], h, on_velocity);
	k->pt = pbd_v3_add(pbd_v3_scale(k->t[0], want[0]), pbd_v3_scale(k->t[1], want[1]));
}

static void soft_warm_start(pbd_world* w, pbd_rigid_c* k, pbd_real h) {
	if (k->pn > 0) soft_apply(w, k, k->n, k->ip, k->is, k->pn, h, false);
	/* the impulse carried, on this substep's tangent plane */
	const pbd_real p0 = pbd_v3_dot(k->pt, k->t[0]), p1 = pbd_v3_dot(k->pt, k->t[1]);
	k->pt = pbd_v3_add(pbd_v3_scale(k->t[0], p0), pbd_v3_scale(k->t[1], p1));
	if (p0 != 0) soft_apply(w, k, k->t[0], k->ipt[0], k->ist[0], p0, h, false);
	if (p1 != 0) soft_apply(w, k, k->t[1], k->ipt[1], k->ist[1], p1, h, false);
}

/* One contact's soft solve in the iterations: friction, then the normal impulse that brings the
 * points' normal speed to the bias of their separation at the substep's start (closing a gap at
 * most, pushing out of an overlap softly and no faster than PBD_SOFT_PUSH). */
static void soft_solve(pbd_world* w, pbd_rigid_c* k, pbd_real h, const softness* soft) {
	const pbd_real inv_h = 1 / h;
	const pbd_real wsum = k->wp + k->ws;
	if (!(wsum > 0)) return;
	/* Friction first, then the normal, which matters more, has the last word (the order of Box2D
	 * v2; with friction after it, the top of twenty stacked cubes swayed 1.1 cm in 10 s at 8
	 * substeps, 0.75 cm so). */
	const pbd_vec3 before = pbd_v3_add(
	    pbd_v3_sub(corrected_velocity(w, k->p, k->rp, inv_h), corrected_velocity(w, k->s, k->rs, inv_h)), k->vfix);
	soft_friction(w, k, before, h, false);
	const pbd_vec3 rel = pbd_v3_add(
	    pbd_v3_sub(corrected_velocity(w, k->p, k->rp, inv_h), corrected_velocity(w, k->s, k->rs, inv_h)), k->vfix);
	const pbd_real vn = pbd_v3_dot(k->n, rel);
	const pbd_real c = k->sep + pbd_v3_dot(k->n, pbd_rigid_moved_apart(w, k));
	/* c less what the speed adds over the substep: where the points stood when it began */
	const pbd_real s0 = c - h * vn;
	pbd_real bias, mass_scale = 1, impulse_scale = 0;
	if (s0 > 0)
		bias = s0 * inv_h;
	else {
		const softness* f = &soft[k->p && k->s ? 0 : 1];
		bias = PBD_FMAX(f->mass_scale * f->bias_rate * s0, -PBD_SOFT_PUSH);
		mass_scale = f->mass_scale, impulse_scale = f->impulse_scale;
	}
	const pbd_real want = PBD_FMAX(k->pn - (mass_scale * vn + bias) / wsum - impulse_scale * k->pn, 0);
	const pbd_real dp = want - k->pn;
	k->pn = want;
	/* the speed it closed in with, which restitution gives back (a contact made ahead of the touch
	 * read it at the step's first substep, before the rest of the fall) */
	if (k->pstep == 0) k->vn0 = PBD_FMIN(k->vn0, vn);
	k->pstep += want;
	if (dp != 0) soft_apply(w, k, k->n, k->ip, k->is, dp, h, false);
	k->c_end = c + h * dp * wsum;
}

/* How far the point at arm r of body `body` (slot + 1; 0: none) moved since the first substep's
 * prediction. */
static pbd_vec3 moved_since_search(const pbd_world* w, uint32_t body, pbd_vec3 r) {
	if (!body) return pbd_v3(0, 0, 0);
	const pbd_bodies* b = &w->bodies;
	const uint32_t i = body - 1;
	const struct pbd_soft_ref* ref = &w->rref[i];
	const pbd_vec3 shift = pbd_v3_add(pbd_v3_sub(b->x[i], ref->x), pbd_v3_sub(b->x_lo[i], ref->x_lo));
	const pbd_quat turn = pbd_quat_mul(b->q[i], pbd_quat_conj(ref->q));
	return pbd_v3_add(shift, pbd_v3_sub(pbd_quat_rotate(turn, r), r));
}

/* The relaxing pass after the positions, on the velocities: friction, then the normal with no bias
 * but a gap's. */
static void soft_relax(pbd_world* w, pbd_rigid_c* k, pbd_real h) {
	const pbd_real wsum = k->wp + k->ws;
	if (!(wsum > 0)) return;
	const pbd_vec3 before = pbd_rigid_relative_velocity(w, k);
	soft_friction(w, k, before, h, true);
	const pbd_vec3 rel = pbd_rigid_relative_velocity(w, k);
	const pbd_real vn = pbd_v3_dot(k->n, rel);
	/* Apart, the points may close the gap over the next substep, whose solve stops them at it: here
	 * a contact ahead of the touch only lets go of what it holds, for a braking before the touch
	 * would take speed a bounce gives back (a ball with restitution 0.8 rose to 0.93 e² of its
	 * height). */
	const pbd_real target = k->c_end > 0 ? -k->c_end / h : 0;
	pbd_real want = PBD_FMAX(k->pn + (target - vn) / wsum, 0);
	if (k->c_end > 0) want = PBD_FMIN(want, k->pn);
	const pbd_real dp = want - k->pn;
	k->pn = want;
	if (dp != 0) pbd_rigid_impulse(w, k, k->n, k->wp, k->ip, k->ws, k->is, dp);
}

/* After the step's last substep, as Box2D: a contact that closed in (it took an impulse) at a
 * speed past `slow` leaves at e times that speed. */
static void soft_restitution(pbd_world* w, pbd_rigid_c* k, pbd_real slow) {
	const pbd_real wsum = k->wp + k->ws;
	if (!(k->e > 0) || !(k->vn0 < -slow) || !(k->pstep > 0) || !(wsum > 0)) return;
	const pbd_vec3 rel = pbd_rigid_relative_velocity(w, k);
	const pbd_real vn = pbd_v3_dot(k->n, rel);
	const pbd_real want = PBD_FMAX(k->pn - (vn + k->e * k->vn0) / wsum, 0);
	const pbd_real dp = want - k->pn;
	k->pn = want;
	if (dp != 0) pbd_rigid_impulse(w, k, k->n, k->wp, k->ip, k->ws, k->is, dp);
}

/* The contacts of a colour in blocks of this many on the threads: a pass over a colour of the
 * 210-cube pyramid (about 100 contacts) takes about as long as handing it to the threads, and in
 * blocks of 16 the pyramid's step took 4.7 ms on two threads where it takes 3.5 on one; in blocks
 * of 64 such a colour stays on the calling thread (PBD_EXEC_MIN_BLOCKS). */
#define PBD_SOFT_BLOCK 64u

/* Colours 0 .. PBD_SOFT_COLOURS - 1 hold no two contacts on one moving body; the contacts that
 * find none of them free go to a last colour, taken in turn on one thread. */
#define PBD_SOFT_COLOURS 63u
_Static_assert(sizeof((pbd_world*)0)->rsoft_first / sizeof(uint32_t) == PBD_SOFT_COLOURS + 2, "rsoft_first");

void pbd_soft_tangents(const pbd_world* w, pbd_rigid_c* k) {
	/* any pair of tangents: friction's impulse is kept as a vector */
	const pbd_vec3 n = k->n;
	const pbd_vec3 axis = PBD_FABS(n.x) < PBD_R(0.57735) ? pbd_v3(1, 0, 0) : pbd_v3(0, 1, 0);
	const pbd_vec3 t0 = pbd_v3_cross(n, axis);
	k->t[0] = pbd_v3_scale(t0, 1 / pbd_v3_length(t0));
	k->t[1] = pbd_v3_cross(n, k->t[0]);
	for (int a = 0; a < 2; ++a)
		k->wt[a] = pbd_rigid_weight(w, k->p, k->rp, k->t[a], &k->ipt[a]) +
		           pbd_rigid_weight(w, k->s, k->rs, k->t[a], &k->ist[a]);
}

/* Each contact of the passes' list (w->rpairs) a colour, greedily in the list's order, and the
 * contacts by colour into w->rsoft (w->rsoft_first[c] .. [c + 1]). False when out of memory. */
static bool colour(pbd_world* w) {
	const uint32_t n = w->nrc, nb = w->bodies.n;
	if (!pbd_grow_to(&w->mem, (void**)&w->rsoft, sizeof *w->rsoft, &w->cap_rsoft, 2 * n + 1) ||
	    !pbd_grow_to(&w->mem, (void**)&w->rsoft_used, sizeof *w->rsoft_used, &w->cap_rsoft_used, nb + 1))
		return false;
	uint64_t* used = w->rsoft_used;
	memset(used, 0, nb * sizeof *used);
	uint32_t* of = w->rsoft + n; /* each listed contact's colour, in the list's order */
	uint32_t* first = w->rsoft_first;
	memset(first, 0, sizeof w->rsoft_first);
	for (uint32_t q = 0; q < n; ++q) {
		const pbd_rigid_c* k = &w->rcon[w->rpairs[q]];
		const uint64_t taken = (k->wp > 0 ? used[k->p - 1] : 0) | (k->ws > 0 ? used[k->s - 1] : 0);
		uint32_t c = PBD_SOFT_COLOURS;
		if (~taken & ((UINT64_C(1) << PBD_SOFT_COLOURS) - 1)) {
			c = 0;
			while (taken >> c & 1) ++c;
			if (k->wp > 0) used[k->p - 1] |= UINT64_C(1) << c;
			if (k->ws > 0) used[k->s - 1] |= UINT64_C(1) << c;
		}
		of[q] = c;
		first[c + 1]++;
	}
	for (uint32_t c = 0; c <= PBD_SOFT_COLOURS; ++c) first[c + 1] += first[c];
	uint32_t at[PBD_SOFT_COLOURS + 1];
	memcpy(at, first, sizeof at);
	for (uint32_t q = 0; q < n; ++q) w->rsoft[at[of[q]]++] = (uint32_t)w->rpairs[q];
	return true;
}

typedef enum soft_pass { PASS_WARM, PASS_SOLVE, PASS_RELAX, PASS_BOUNCE } soft_pass;

typedef struct soft_stage {
	pbd_world* w;
	const uint32_t* list; /* the colour's contacts */
	uint32_t count, block;
	soft_pass pass;
	pbd_real h, slow;
	softness soft[2];
} soft_stage;

static void soft_block(void* ctx, uint32_t block, uint32_t worker) {
	(void)worker;
	const soft_stage* s = (const soft_stage*)ctx;
	pbd_world* w = s->w;
	const uint32_t first = block * s->block, end = pbd_block_end(first, s->count, s->block);
	for (uint32_t q = first; q < end; ++q) {
		pbd_rigid_c* k = &w->rcon[s->list[q]];
		switch (s->pass) {
		case PASS_WARM:
			soft_warm_start(w, k, s->h);
			break;
		case PASS_SOLVE:
			soft_solve(w, k, s->h, s->soft);
			break;
		case PASS_RELAX:
			soft_relax(w, k, s->h);
			break;
		case PASS_BOUNCE:
			soft_restitution(w, k, s->slow);
			break;
		}
	}
}

/* One pass over every contact, colour by colour. */
static void run(pbd_world* w, soft_pass pass, pbd_real slow) {
	const pbd_real h = w->def.dt / (pbd_real)w->nsub;
	const pbd_real hertz = w->def.contact_hertz > 0 ? w->def.contact_hertz : PBD_SOFT_RATE_SHARE / h;
	soft_stage s = {w, NULL, 0, PBD_SOFT_BLOCK, pass, h, slow, {soft_of(hertz, h), soft_of(2 * hertz, h)}};
	for (uint32_t c = 0; c <= PBD_SOFT_COLOURS; ++c) {
		s.list = w->rsoft + w->rsoft_first[c];
		s.count = w->rsoft_first[c + 1] - w->rsoft_first[c];
		if (s.count == 0) continue;
		/* the last colour's contacts may share bodies: one block, in turn */
		s.block = c < PBD_SOFT_COLOURS ? PBD_SOFT_BLOCK : s.count;
		pbd_exec_stage(&w->exec, soft_block, &s, pbd_blocks(s.count, s.block));
	}
}

bool pbd_soft_remember(pbd_world* w) {
	const pbd_bodies* b = &w->bodies;
	if (!pbd_grow_to(&w->mem, (void**)&w->rref, sizeof *w->rref, &w->cap_rref, b->n)) return false;
	for (uint32_t i = 0; i < b->n; ++i) w->rref[i] = (struct pbd_soft_ref){b->x[i], b->x_lo[i], b->q[i]};
	return true;
}

bool pbd_soft_begin(pbd_world* w) {
	if (!colour(w) || !pbd_soft_remember(w)) return false;
	run(w, PASS_WARM, 0);
	return true;
}

void pbd_soft_move(pbd_world* w) {
	const pbd_real since = w->def.dt / (pbd_real)w->nsub * (pbd_real)(w->rsub - 1);
	for (uint32_t q = 0; q < w->nrc; ++q) {
		pbd_rigid_c* k = &w->rcon[q];
		const pbd_vec3 d = pbd_v3_sub(moved_since_search(w, k->p, k->rp), moved_since_search(w, k->s, k->rs));
		k->sep = k->sep0 + pbd_v3_dot(k->n, pbd_v3_add(d, pbd_v3_scale(k->vfix, since)));
	}
}

void pbd_soft_advance(pbd_world* w) {
	pbd_soft_move(w);
	run(w, PASS_WARM, 0);
}

void pbd_soft_solve(pbd_world* w) { run(w, PASS_SOLVE, 0); }

void pbd_soft_velocities(pbd_world* w, pbd_real h, pbd_real slow) {
	run(w, PASS_RELAX, slow);
	if (w->rsub >= (uint32_t)w->nsub) run(w, PASS_BOUNCE, slow);
	/* What the API and the contact events read: the separation at the substep's end and the
	 * substep's normal impulse, as the correction it made (pbd_world_get_body_contacts). */
	for (uint32_t q = 0; q < w->nrc; ++q) {
		pbd_rigid_c* k = &w->rcon[q];
		k->dn = k->pn * (k->wp + k->ws) * h;
		k->sep = k->c_end - k->dn;
	}
	pbd_soft_keep(w);
}

void pbd_soft_keep(pbd_world* w) {
	if (!w->rkeep_valid) return;
	for (uint32_t k = 0; k < w->nrc; ++k) {
		/* an impulse that is not a number is not carried (the step puts its bodies back) */
		const bool finite = pbd_is_finite(w->rcon[k].pn) && pbd_v3_is_finite(w->rcon[k].pt);
		w->rkeep[k].pn = finite ? w->rcon[k].pn : 0;
		w->rkeep[k].pt = finite ? w->rcon[k].pt : pbd_v3(0, 0, 0);
	}
}
