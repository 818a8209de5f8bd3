/* The position-based method (solver.c): PBD or XPBD constraint projections by coloured
 * Gauss-Seidel or Jacobi, with Chebyshev acceleration and the hierarchy's coarse levels. */
#ifndef PBD_METHODS_SOLVER_H
#define PBD_METHODS_SOLVER_H

#include "model/world.h"

/* The method table's prepare (method.h): the Gauss-Seidel sweep's plan for the threads. */
pbd_status pbd_solver_prepare(pbd_world* w);
/* One substep: predict, find the contacts, iterate, finish (substep.h). */
void pbd_solver_substep(pbd_world* w, pbd_real h, pbd_real damping, int substep, int substeps);

#endif
