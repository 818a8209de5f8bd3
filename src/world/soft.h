/* Soft objects: the parts of pbd_soft_create that live in soft_constraints.c. */
#ifndef PBD_SOFT_H
#define PBD_SOFT_H

#include "core/core.h"

/* Checks the def's bending, tetrahedron and long-range settings. */
pbd_status pbd_soft_check_extras(pbd_world* w, const pbd_soft_def* d, const char* fn);

/* Spring constant k[e] (N/m) of every mesh edge from the def's cloth material; pos are the
 * object's rest positions. */
pbd_status pbd_soft_spring_constants(pbd_world* w, const pbd_soft_def* d, const pbd_vec3* pos, pbd_real* k,
                                     const char* fn);

/* Adds the hinges, tetrahedral elements and long-range attachments the def asks for, after the
 * object's particles (body->first_particle on) and edges are in the world. */
pbd_status pbd_soft_add_extras(pbd_world* w, const pbd_soft_def* d, const pbd_soft_info* body, const pbd_vec3* pos,
                               const char* fn);

#endif
