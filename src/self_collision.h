/* Particle collision: particles with a thickness keep apart, within one object (self-collision)
 * and between objects, through pairs found once per substep with a spatial hash
 * (docs/collision.md, "Cloth against cloth"). */
#ifndef PBD_SELF_COLLISION_H
#define PBD_SELF_COLLISION_H

#include "hash_grid.h"

/* Bit of a particle's collision group that lets it collide with particles of its own group. */
#define PBD_GROUP_SELF 0x80000000u

/* A pair of particles that must stay `dist` apart (the sum of their radii). */
typedef struct pbd_pair_c {
	uint32_t a, b;
	pbd_real dist;
} pbd_pair_c;

typedef struct pbd_particle_collision {
	pbd_hash_grid grid;
	pbd_vec3* p; /* predicted positions of the substep, hashed */
	uint32_t cap_p;
	pbd_pair_c* pairs;
	uint32_t npairs, cap_pairs;
	pbd_real max_radius; /* over the particles, at the last prepare */
	uint32_t solid;      /* particles with a radius */
} pbd_particle_collision;

typedef struct pbd_world pbd_world;

/* At the start of a step: counts the particles with a radius and makes room for the hash
 * (allocates only when the particle count grew). */
pbd_status pbd_particle_collision_prepare(pbd_world* w);
/* After the prediction of a substep: the pairs within reach. */
pbd_status pbd_particle_collision_find(pbd_world* w);
/* One pass over the pairs (every iteration). */
void pbd_particle_collision_project(pbd_world* w);
void pbd_particle_collision_free(pbd_world* w);

#endif
