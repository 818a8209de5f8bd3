/* The bodies' pairs of colliders that touch, step by step, and the events of their beginning and
 * end (contact_events.c; docs/collision.md, "Contact events"). */
#ifndef PBD_COLLISION_CONTACT_EVENTS_H
#define PBD_COLLISION_CONTACT_EVENTS_H

#include "model/world.h"

/* A pair of colliders that touches, the lower slot first (a). */
typedef struct pbd_touch {
	uint64_t pair;           /* lower collider slot << 32 | higher */
	uint32_t gen_a, gen_b;   /* the colliders' generations */
	uint32_t body_a, body_b; /* slot + 1 of the bodies they ride on; 0: none */
	uint32_t bgen_a, bgen_b; /* those bodies' generations */
	pbd_vec3 point, normal;  /* of the strongest contact, world; the normal from a toward b */
	pbd_real impulse;        /* N s along the normals over the step */
	pbd_real strongest;      /* the strongest contact's impulse in its substep, N s */
	pbd_real separation;     /* its separation after its substep, m */
	uint32_t order;          /* a substep's contact: its index (the sort's tie-break) */
	uint32_t held;           /* a pair of the last step: 1 when its bodies slept as this step began */
} pbd_touch;

/* A body's velocity before a substep's velocity pass, and how many pairs pushed it. */
typedef struct pbd_touch_body {
	pbd_vec3 v;
	uint32_t pairs;
} pbd_touch_body;

/* Before the substeps: the pairs of the last step that sleep, and none touching yet. */
void pbd_contact_events_begin_step(pbd_world* w);
/* Before the substep's velocity pass (rigid_contact.c): the bodies' velocities. */
pbd_status pbd_contact_events_before_velocities(pbd_world* w);
/* After the substep's velocity pass (rigid_contact.c): its touching contacts, by pair, added to
 * the step's. */
pbd_status pbd_contact_events_substep(pbd_world* w, pbd_real h);
/* After the substeps, before the bodies' sleep is updated: the events, and the step's pairs become
 * the last step's. A failure is the step's (w->step_status). */
void pbd_contact_events_end_step(pbd_world* w);
void pbd_contact_events_free(pbd_world* w);

/* Snapshots: room for n pairs of the last step (w->touch), and whether pair k as loaded is one a
 * step could leave (NULL) or why not. */
pbd_status pbd_contact_events_reserve(pbd_world* w, uint32_t n);
const char* pbd_contact_events_check(const pbd_world* w, uint32_t k);

#endif
