/* The method table: what the step calls for each pbd_method, in place of a flag and a chain of
 * ifs. A new method is its file(s), an entry of this table (method.c) and a name; the step
 * (world/world.c), the names the scene files and programs read (pbd_method_name) and the step
 * fuzzer follow the table.
 *
 * Every method's substep moves the particles along x -> x + q by its own rule and then runs the
 * stages all methods share (substep.h), so colliders, friction and restitution act the same. */
#ifndef PBD_METHODS_METHOD_H
#define PBD_METHODS_METHOD_H

#include "model/world.h"

typedef struct pbd_method_ops {
	const char* name; /* in scene files, on the command line and in output */
	/* Integrates forces: every family needs a force model (pbd_family_ops.linearize), and a
	 * constraint's energy is its compliance's (pbd_energy_from_compliance). */
	bool forces;
	/* Reads pbd_world_def.solver, the Chebyshev and hierarchy settings (the position-based
	 * iterations); the others ignore them. */
	bool solver_settings;
	/* Before the step moves anything: sizes the method's arrays and checks that it can run the
	 * world's constraints. A failure leaves the world as it was, with the reason in its last
	 * error. NULL: nothing to prepare. */
	pbd_status (*prepare)(pbd_world* w);
	/* One substep of length h: substep in [1, substeps]. */
	void (*substep)(pbd_world* w, pbd_real h, pbd_real damping, int substep, int substeps);
} pbd_method_ops;

/* Indexed by pbd_method. What a method keeps from step to step (VBD's multipliers, projective
 * dynamics' factor) is freed with the integrator (pbd_integrator_free) and saved in snapshots
 * in fixed places of the format (world/snapshot.c). */
extern const pbd_method_ops* const pbd_method_table[PBD_METHOD_COUNT];

#endif
