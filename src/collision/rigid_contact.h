/* What the two solvers of the bodies' contacts share (rigid_contact.c, the position solver and the
 * search; rigid_soft.c, the soft step): a contact's ends as bodies, their weights, motion and
 * velocities, and the soft step's entry points. */
#ifndef PBD_COLLISION_RIGID_CONTACT_H
#define PBD_COLLISION_RIGID_CONTACT_H

#include "collision/collide.h"
#include "model/node.h"
#include "model/world.h"

/* End `body` (slot + 1; 0: an end no contact moves) of a contact at arm r: its generalised inverse
 * mass along unit n, with I^-1 (r x n) in *irn (model/node.h). */
static inline pbd_real pbd_rigid_weight(const pbd_world* w, uint32_t body, pbd_vec3 r, pbd_vec3 n, pbd_vec3* irn) {
	if (!body) {
		*irn = pbd_v3(0, 0, 0);
		return 0;
	}
	return pbd_node_body_weight(&w->bodies, body - 1, r, n, irn);
}

/* How far the corrections of this substep moved the contact's point on body `body` (slot + 1). */
static inline pbd_vec3 pbd_rigid_moved(const pbd_world* w, uint32_t body, pbd_vec3 r) {
	return body ? pbd_node_body_moved(&w->bodies, body - 1, r) : pbd_v3(0, 0, 0);
}

/* The velocity of the contact's point on body `body` (slot + 1; 0: at rest). */
static inline pbd_vec3 pbd_rigid_velocity(const pbd_world* w, uint32_t body, pbd_vec3 r) {
	if (!body) return pbd_v3(0, 0, 0);
	const pbd_bodies* b = &w->bodies;
	return pbd_v3_add(b->v[body - 1], pbd_v3_cross(b->omega[body - 1], r));
}

/* The relative velocity of the contact's two points, feature's less surface's. */
static inline pbd_vec3 pbd_rigid_relative_velocity(const pbd_world* w, const pbd_rigid_c* k) {
	return pbd_v3_add(pbd_v3_sub(pbd_rigid_velocity(w, k->p, k->rp), pbd_rigid_velocity(w, k->s, k->rs)), k->vfix);
}

/* How far the contact's two points moved apart in this substep's corrections, feature's less
 * surface's. */
static inline pbd_vec3 pbd_rigid_moved_apart(const pbd_world* w, const pbd_rigid_c* k) {
	return pbd_v3_sub(pbd_rigid_moved(w, k->p, k->rp), pbd_rigid_moved(w, k->s, k->rs));
}

/* An impulse p along unit dir between the contact's two points (I^-1 (r x dir) of each end in
 * jp, js; their weights tell which ends take it): + on the feature's body. */
static inline void pbd_rigid_impulse(pbd_world* w, const pbd_rigid_c* k, pbd_vec3 dir, pbd_real wp, pbd_vec3 jp,
                                     pbd_real ws, pbd_vec3 js, pbd_real p) {
	pbd_bodies* b = &w->bodies;
	if (wp > 0) {
		b->v[k->p - 1] = pbd_v3_add(b->v[k->p - 1], pbd_v3_scale(dir, b->inv_mass[k->p - 1] * p));
		b->omega[k->p - 1] = pbd_v3_add(b->omega[k->p - 1], pbd_v3_scale(jp, p));
	}
	if (ws > 0) {
		b->v[k->s - 1] = pbd_v3_sub(b->v[k->s - 1], pbd_v3_scale(dir, b->inv_mass[k->s - 1] * p));
		b->omega[k->s - 1] = pbd_v3_sub(b->omega[k->s - 1], pbd_v3_scale(js, p));
	}
}

/* ---- The soft step (rigid_soft.c) ---------------------------------------------------------- */

static inline bool pbd_soft_step(const pbd_world* w) { return w->def.body_solver == PBD_BODY_SOLVER_SOFT_STEP; }
static inline bool pbd_avbd_step(const pbd_world* w) { return w->def.body_solver == PBD_BODY_SOLVER_AVBD; }
/* The soft step and AVBD search the contacts at the step's first substep only, move them with
 * their bodies in the later ones and carry their impulses from step to step. */
static inline bool pbd_rigid_per_step(const pbd_world* w) { return w->def.body_solver != PBD_BODY_SOLVER_POSITION; }

/* A new contact's two tangents across n and their weights (pbd_rigid_c.t, ipt, ist, wt). */
void pbd_soft_tangents(const pbd_world* w, pbd_rigid_c* k);
/* The first substep of a step, after the search ordered its contacts: their colours for the
 * threads, the bodies' poses the later substeps move the contacts from, and the impulses the
 * contacts carry applied (warm starting). False when out of memory. */
bool pbd_soft_begin(pbd_world* w);
/* A later substep of the step: the first one's contacts moved with their bodies, warm-started. */
void pbd_soft_advance(pbd_world* w);
/* One pass of the iterations. */
void pbd_soft_solve(pbd_world* w);
/* The bodies' centres and orientations at the first substep's prediction, from which the later
 * substeps move the contacts it made. False when out of memory. */
bool pbd_soft_remember(pbd_world* w);
/* A later substep: each contact's separation at this substep's prediction, from what its two
 * points moved since the search. */
void pbd_soft_move(pbd_world* w);
/* The contacts' impulses into the kept contacts, for the next step. */
void pbd_soft_keep(pbd_world* w);
/* After the bodies took their corrections: the relaxing pass, restitution after the step's last
 * substep, and what the API and the contact events read. */
void pbd_soft_velocities(pbd_world* w, pbd_real h, pbd_real slow);

/* ---- Augmented vertex block descent (rigid_avbd.c) ------------------------------------------ */

/* The first substep of a step, after the search ordered its contacts: the bodies' colours and
 * contact lists, the rows' penalties and warm-started multipliers. False when out of memory. */
bool pbd_avbd_begin(pbd_world* w);
/* A later substep of the step: the first one's contacts moved with their bodies. */
void pbd_avbd_advance(pbd_world* w);
/* One sweep of the iterations: every body's block step, colour by colour, then the rows'
 * multipliers and penalties. */
void pbd_avbd_solve(pbd_world* w);
/* After the bodies took their corrections: restitution after the step's last substep, and what
 * the API and the contact events read. */
void pbd_avbd_velocities(pbd_world* w, pbd_real h, pbd_real slow);

#endif
