/* The interface every collider shape implements. A shape is one file, collide_<shape>.c, that
 * defines one pbd_shape_ops and is listed in the table in collide.c. */
#ifndef PBD_COLLIDE_H
#define PBD_COLLIDE_H

#include "world.h"

typedef struct pbd_shape_ops {
	const char* name;
	/* Checks the shape part of a def and normalises it in place (e.g. unit normal). */
	pbd_status (*validate)(pbd_world* w, pbd_collider_def* def);
	/* Pushes every particle with w > 0 out to at least `margin` from the surface, by changing
	 * its displacement q (the particle is at x + q; see world.h). */
	void (*project)(const pbd_collider_def* def, const pbd_vec3* x, pbd_vec3* q, const pbd_real* iw, uint32_t n);
	/* Sets PBD_PARTICLE_CONTACT in flags[i] of every particle with w > 0 closer to the
	 * surface than `reach` (negative inside). */
	void (*mark_contacts)(const pbd_collider_def* def, const pbd_vec3* x, const pbd_real* iw, uint32_t n,
	                      pbd_real reach, uint8_t* flags);
} pbd_shape_ops;

extern const pbd_shape_ops pbd_shape_plane_ops;
extern const pbd_shape_ops pbd_shape_sphere_ops;

#endif
