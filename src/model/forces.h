/* Air and impulses: the world's wind with its gusts, drag on surface triangles and on
 * particles, and the velocity kicks of impulses and explosions (docs/methods.md, "Forces").
 * Internal; the public calls are pbd_world_wind_at, pbd_world_set_triangle_drag,
 * pbd_particles_set_drag, pbd_particle_apply_impulse and pbd_world_explode. */
#ifndef PBD_FORCES_H
#define PBD_FORCES_H

#include "model/world.h"

/* The wind of the def at time t (s): its mean `wind` turned and scaled by the gusts. Exactly the
 * mean when gust_strength is 0 or t is not finite. */
pbd_vec3 pbd_forces_wind(const pbd_world_def* d, double t);

/* ADDS the air force (N) on every particle to out[0, np): each surface triangle with drag gives
 * a third of A (Cn (n.u) n + Ct (u - (n.u) n)) to each corner, u = wind(t) + the triangle's own
 * wind - the mean of its corners' velocities; each particle with drag c gets
 * c (wind(t) + its own wind - v). Positions are w->x, velocities `v` (np entries, any array the
 * caller integrates: w->v, or a force-based method's own); `out` must not alias `v`.
 *
 * Returns false, writing nothing, when no particle and no triangle has drag, so that the caller
 * skips the air altogether (a world without air does no work for it). Pinned particles receive
 * their share too; callers ignore it. Reads the world only: safe to call at any point of a step,
 * and allocation-free. */
bool pbd_forces_air(const pbd_world* w, double t, const pbd_vec3* v, pbd_vec3* out);

/* The position-based step's use of it, at the start of a substep at time t: the air on w->v
 * into w->air_force with its drag on each particle's own velocity into w->air_drag, for
 * pbd_particles_predict; sets w->air_on (false, and nothing written, without air). */
void pbd_forces_substep(pbd_world* w, double t);

/* The velocity change of a free particle in a substep with the air's drag taken at the velocity
 * it ends with (backward Euler in the drag, docs/methods.md, "Forces"): (I + hw K) dv = rhs, K its
 * drag (w->air_drag), hw = h / m, rhs = h (g + (f + F_air) / m). The same balance of forces at
 * rest as h F / m, equal to it to first order, and a drag that never overshoots, whatever the
 * drag, mass or substep. */
pbd_vec3 pbd_forces_kick(const pbd_sym3* k, pbd_real hw, pbd_vec3 rhs);

/* Argument checks shared by the setters and pbd_soft_create: `what` names the argument in the
 * message ("fn: what ..."). A drag coefficient is finite and >= 0; a wind is finite and each
 * component within +-PBD_MAX_GRAVITY m/s (the world wind's cap). */
pbd_status pbd_forces_check_drag(pbd_world* w, const char* fn, const char* what, pbd_real drag);
pbd_status pbd_forces_check_wind(pbd_world* w, const char* fn, const char* what, pbd_vec3 wind);

/* Store checked values, keeping n_drag and nt_drag true. */
void pbd_forces_store_triangles(pbd_world* w, uint32_t first, uint32_t count, pbd_tri_drag drag, pbd_vec3 wind);
void pbd_forces_store_particles(pbd_world* w, uint32_t first, uint32_t count, pbd_real drag, pbd_vec3 wind);

/* Recounts n_drag and nt_drag from the arrays (after a snapshot filled them). */
void pbd_forces_recount(pbd_world* w);

#endif
