/* The stages of a substep that every method shares (substep.c). A method's substep moves the
 * particles along x -> x + q by its own rule, then calls these in order: find the contacts of that
 * path once, project them (once, or after each of its iterations), and finish. */
#ifndef PBD_METHODS_SUBSTEP_H
#define PBD_METHODS_SUBSTEP_H

#include "model/world.h"

/* The contacts of the path x -> x + q: against colliders, among the world's own particles,
 * vertices and triangles, edges and edges; none when the state is torn (a diverged step). */
void pbd_substep_find_contacts(pbd_world* w, pbd_real h);
/* Contacts for what the iterations moved: the path each particle took so far, swept again against
 * the colliders it has no contact with (collision/contact.c, "Contacts nothing slips past").
 * The position-based solver calls it after its first iteration, so that the iterations after it
 * hold the new contacts together with everything else. */
void pbd_substep_catch_late(pbd_world* w, bool sweep);
/* One pass of the contacts' projections. */
void pbd_substep_project_contacts(pbd_world* w);
/* Friction, settling, the velocity update and restitution. */
void pbd_substep_finish(pbd_world* w, pbd_real h, int substep, int substeps);

#endif
