/* The stages of a substep that every method shares (substep.h): the contacts of the path a
 * method produced, their projections, then friction, settling, the velocity update and
 * restitution, so that colliders act the same under every method and no method reaches into
 * another's file. */
#include "collision/collide.h"
#include "collision/contact_events.h"
#include "collision/self_collision.h"
#include "constraints/joint.h"
#include "methods/substep.h"
#include "model/world.h"

static void note(pbd_world* w, pbd_status st) {
	if (st != PBD_OK && w->step_status == PBD_OK) w->step_status = st;
}

void pbd_substep_find_contacts(pbd_world* w, pbd_real h) {
	/* Out of memory for contacts leaves the ones found so far: the step goes on and returns the
	 * first failure (step_status). */
	const uint64_t t0 = pbd_prof_begin(w);
	/* A torn state (non-finite, or stretched past the divergence bound) is a step that blew up:
	 * its contacts are not searched, neither among the world's own particles and triangles, whose
	 * candidates grow with the square of how far it flew apart, nor against the colliders, whose
	 * queries from kilometres away visit every face of a mesh. The colliders still move. */
	const bool torn = (w->nc > 0 || w->pcol->solid > 1) && pbd_collision_torn(w);
	w->pcol->torn = torn;
	w->ntc = 0;
	w->pcol->npairs = w->pcol->nvt = w->pcol->nee = 0;
	if (w->nc > 0) {
		note(w, pbd_collide_begin_substep(w, h));
		if (!torn) note(w, pbd_triangle_contacts_find(w));
		note(w, pbd_rigid_contacts_find(w));
	}
	w->pcol->any_held = false;
	if (w->pcol->solid > 1 && !torn) {
		pbd_particle_collision_hold(w);
		note(w, pbd_particle_collision_find(w));
		note(w, pbd_vertex_triangle_find(w));
		note(w, pbd_edge_edge_find(w));
	}
	note(w, pbd_contact_regions_build(w));
	pbd_prof_end(w, PBD_PHASE_COLLIDE, t0);
}

void pbd_substep_catch_late(pbd_world* w, bool sweep) {
	if (w->nc == 0) return;
	const uint64_t t0 = pbd_prof_begin(w);
	note(w, pbd_triangle_contacts_catch_late(w));
	note(w, pbd_collide_catch_late(w, sweep));
	pbd_prof_end(w, PBD_PHASE_COLLIDE, t0);
}

void pbd_substep_project_contacts(pbd_world* w) {
	const uint64_t t0 = pbd_prof_begin(w);
	pbd_contact_regions_project(w);
	/* Triangles before vertices: a vertex's own contact has the last word. */
	if (w->ntc > 0) pbd_triangle_contacts_project(w);
	if (w->def.collision_mode == PBD_COLLISION_IN_SOLVER && w->ncon > 0) pbd_collide_project_contacts(w);
	if (w->nrc > 0) pbd_rigid_contacts_project(w);
	pbd_prof_end(w, PBD_PHASE_CONTACTS, t0);
}

void pbd_substep_finish(pbd_world* w, pbd_real h, int substep, int substeps) {
	const uint64_t t0 = pbd_prof_begin(w);
	if (w->nc > 0) {
		note(w, pbd_collide_after_iterations(w));
		pbd_collide_friction(w, h);
		if (w->def.collision_mode == PBD_COLLISION_IN_SOLVER) pbd_collide_settle(w);
		/* The colliders had the last word; the contacts that have a held particle get one more,
		 * which moves no held particle into its collider (self_collision.h): a layer the collider
		 * put back where another lies is pushed off it before the next substep's searches take
		 * the layers' sides as they are. */
		if (w->pcol->any_held) {
			w->pcol->held_only = true;
			pbd_contact_regions_project(w);
			w->pcol->held_only = false;
		}
	}
	if (w->bodies.alive) {
		if (w->nrc > 0) pbd_rigid_contacts_settle(w);
		pbd_joints_after_iterations(w, h);
		pbd_bodies_apply_corrections(w, h);
		pbd_joints_velocities(w, h);
		note(w, pbd_contact_events_before_velocities(w));
		if (w->nrc > 0) pbd_rigid_contacts_velocities(w, h);
		note(w, pbd_contact_events_substep(w, h));
		pbd_colliders_follow_bodies(w);
	}
	pbd_particles_update_velocities(w, h, substep == substeps);
	if (w->ncon > 0) pbd_collide_restitution(w, h);
	pbd_prof_end(w, PBD_PHASE_FINISH, t0);
}
