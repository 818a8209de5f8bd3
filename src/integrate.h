/* The force-based methods: one substep of explicit, symplectic or implicit Euler, projective
 * dynamics or vertex block descent, switched on pbd_world_def.method as MuJoCo's mj_step switches
 * on its integrator. They share the position-based step's frame (positions x + x_lo, the
 * substep's displacement q, velocities v + v_lo), its prediction of pinned targets, its contact
 * stage and its velocity update, so that colliders, friction and restitution act the same under
 * every method. */
#ifndef PBD_INTEGRATE_H
#define PBD_INTEGRATE_H

#include "rows.h"

/* Working arrays of the force-based methods, sized before the step. */
typedef struct pbd_integrator {
	uint32_t cap;   /* particles the arrays hold */
	pbd_vec3* f;    /* force on each particle, N */
	pbd_vec3* dv;   /* implicit Euler: the velocity change solved for */
	pbd_vec3* r;    /* CG residual */
	pbd_vec3* z;    /* CG preconditioned residual */
	pbd_vec3* d;    /* CG search direction */
	pbd_vec3* ad;   /* CG: A d */
	pbd_real* diag; /* 3x3 diagonal blocks of A, then their inverses, 9 per particle */
	pbd_rows rows;
	/* implicit Euler's solves in the current step: worst relative residual and most iterations */
	double residual;
	uint32_t cg_iterations;
} pbd_integrator;

/* Before the step moves anything: sizes the arrays and checks that every family of the world has
 * a force model and every constraint a finite spring constant. A failure leaves the world as it
 * was, with the reason in its last error. */
pbd_status pbd_integrate_prepare(pbd_world* w);
/* One substep of the world's force-based method. */
void pbd_integrate_substep(pbd_world* w, pbd_real h, pbd_real damping, int substep, int substeps);
void pbd_integrator_free(pbd_world* w);

/* implicit.c: solves (M + h D + h^2 K) dv = h (f - h K v) by preconditioned conjugate gradients
 * into in->dv, from the rows and forces of the substep's start. */
void pbd_implicit_solve(pbd_world* w, const pbd_step_ctx* ctx);

#endif
