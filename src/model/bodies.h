/* Rigid bodies (bodies.c): structure of arrays like the particles, one slot per body.
 *
 * A body's state is its centre of mass, kept as x + x_lo like a particle's position so that it
 * moves right far from the origin, and the orientation q of its principal axes (the axes in
 * which its inertia is the diagonal `inertia`). The user's frame is q * conj(principal): the
 * API speaks of that frame and of the centre `center` in it. */
#ifndef PBD_MODEL_BODIES_H
#define PBD_MODEL_BODIES_H

#include "core/core.h"

typedef struct pbd_bodies {
	uint32_t n, cap; /* slots used, slots allocated */
	uint32_t alive;  /* live bodies */
	uint8_t* type;   /* pbd_body_type */
	uint8_t* live;
	uint32_t* generation;
	int* cookie;
	pbd_vec3* x;     /* centre of mass, rounded */
	pbd_vec3* x_lo;  /* remainder: the centre is x + x_lo */
	pbd_vec3* v;     /* velocity of the centre, m/s */
	pbd_quat* q;     /* orientation of the principal axes */
	pbd_vec3* omega; /* angular velocity, world axes */
	pbd_real* inv_mass;
	pbd_vec3* inertia;   /* principal moments, kg m^2 */
	pbd_quat* principal; /* the principal axes in the body's frame */
	pbd_vec3* center;    /* centre of mass in the body's frame */
	pbd_vec3* force;     /* applied during the next step, N, world */
	pbd_vec3* torque;    /* the same, N m, world axes */
	pbd_real* gravity_scale;
	pbd_real* linear_damping;
	pbd_real* angular_damping;
	/* what the contacts of the current substep moved the centre and turned the body by
	 * (collision/contact.c), applied to the pose and the velocities at the substep's end */
	pbd_vec3 *dx, *dtheta;
	/* the state at the start of the step, put back when the step leaves a body non-finite */
	pbd_vec3 *x_step, *x_lo_step, *v_step, *omega_step;
	pbd_quat* q_step;
	pbd_pose* pose; /* the user frames, for pbd_world_body_poses */
	/* Sleeping (world/sleep.c): a dynamic body asleep neither moves nor is moved, and takes no
	 * correction (node.h); still is how long it has been slower than the world's sleep_speed (s);
	 * island names the island it fell asleep with (a body slot), which wakes as one. */
	uint8_t* asleep;
	pbd_real* still;
	uint32_t* island;
} pbd_bodies;

typedef struct pbd_world pbd_world;

void pbd_bodies_free(pbd_world* w);
/* Room for `capacity` slots (snapshots); PBD_ERR_OUT_OF_MEMORY leaves the arrays as they were. */
pbd_status pbd_bodies_reserve(pbd_world* w, uint32_t capacity);
/* Slot i as a snapshot gave it: NULL when every value is one the API could have made, else what
 * is wrong (the remainders of the centre are the loader's to check). */
const char* pbd_bodies_check(const pbd_world* w, uint32_t i);
/* Adds the dynamic bodies' kinetic energy (translation and rotation), gravitational potential
 * energy (-m s g . x, s the gravity scale), linear momentum and angular momentum about the origin
 * to the sums (stats.c). */
void pbd_bodies_energy(const pbd_world* w, double* kinetic, double* potential, double momentum[3], double angular[3]);
/* Counts the live slots again (after a load). */
void pbd_bodies_recount(pbd_world* w);
/* The step's start: the state kept to undo a body that becomes non-finite. */
void pbd_bodies_begin_step(pbd_world* w);
/* One substep of free motion (Müller et al. 2020, "Detailed rigid body simulation with extended
 * position based dynamics", with the rotation integrated by the implicit midpoint rule).
 * `damping` is the world's per-substep factor, which the particles take too. */
void pbd_bodies_substep(pbd_world* w, pbd_real h, pbd_real damping);
/* The step's end: forces and torques cleared; a non-finite body put back where the step found
 * it, counted as PBD_WARN_NONFINITE. Returns how many were put back. */
uint32_t pbd_bodies_end_step(pbd_world* w);
/* pose[] written again from the state of every live body (the end of a step, a load). */
void pbd_bodies_refresh_poses(pbd_world* w);
/* The slot of a live body of this world, or UINT32_MAX with the reason in w's error. */
uint32_t pbd_bodies_slot_of(pbd_world* w, pbd_body_id id, const char* fn);
/* Slot i dies with the shapes it carries (the constraints on it are the caller's). */
void pbd_bodies_kill(pbd_world* w, uint32_t i);
/* The world point, in double, of `local` (the body's frame) of slot i. */
void pbd_body_point(const pbd_world* w, uint32_t i, pbd_vec3 local, double out[3]);
/* The body's frame in the world (slot i, live). */
pbd_pose pbd_body_frame(const pbd_world* w, uint32_t i);
/* The centre of mass of slot i, rounded. */
static inline pbd_vec3 pbd_body_centre(const pbd_bodies* b, uint32_t i) { return b->x[i]; }
/* The contacts' corrections of the substep applied: the centre moved by dx, the body turned by
 * dtheta, v += dx / h and w += dtheta / h (a correction's velocity, as the particles get theirs
 * from their position change); both cleared. */
void pbd_bodies_apply_corrections(pbd_world* w, pbd_real h);
/* Wakes body slot i and every body asleep in its island (a scan of the bodies: an island wakes
 * once, and rarely). Nothing for a body awake. */
void pbd_bodies_wake(pbd_world* w, uint32_t i);
/* Whether slot i takes corrections: a dynamic body that is awake. */
static inline bool pbd_body_moves(const pbd_bodies* b, uint32_t i) {
	return b->type[i] == PBD_BODY_DYNAMIC && !b->asleep[i];
}
/* Dynamic bodies that are alive: the methods that cannot move them refuse the world. */
uint32_t pbd_bodies_dynamic(const pbd_world* w);

#endif
