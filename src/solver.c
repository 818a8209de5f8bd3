/* One substep: predict, iterate the constraint projections with the chosen solver, resolve
 * collisions, derive velocities. */
#include <string.h>

#include "world.h"

/* Applies the summed Jacobi corrections. Mass-weighted corrections arrive already scaled per
 * constraint (see pbd_distance_accumulate_jacobi). Equal-split ones are averaged per particle:
 * omega * dx / (degree + alpha), where alpha > 0 lets the particle's current position take part
 * in the average with weight alpha (Games103 lab 2 uses 0.2). */
static void jacobi_apply(pbd_world* w) {
	const pbd_real alpha = w->def.jacobi_alpha, omega = w->def.jacobi_omega;
	const bool equal = w->def.jacobi_equal_split;
	pbd_vec3* restrict q = w->q;
	pbd_vec3* restrict dx = w->dx;
	const uint32_t* restrict deg = w->degree;
	const pbd_real* restrict iw = w->w;
	for (uint32_t i = 0, n = w->np; i < n; ++i) {
		if (iw[i] > 0 && deg[i] > 0) {
			const pbd_real den = (pbd_real)deg[i] + alpha;
			q[i] = pbd_v3_add(q[i], equal ? pbd_v3_scale(dx[i], omega / den) : dx[i]);
		}
		dx[i] = pbd_v3(0, 0, 0);
	}
}

void pbd_solver_substep(pbd_world* w, pbd_real h, pbd_real damping, int substep, int substeps) {
	pbd_particles_predict(w, h, damping, (pbd_real)substep / (pbd_real)substeps);
	if (w->nd && w->def.formulation == PBD_FORMULATION_XPBD) memset(w->lambda, 0, (size_t)w->nd * sizeof *w->lambda);

	const pbd_real inv_h2 = 1 / (h * h);
	const bool in_solver = w->def.collision_mode == PBD_COLLISION_IN_SOLVER && w->nc > 0;
	const int iterations = w->def.iterations;
	if (w->def.solver == PBD_SOLVER_JACOBI) {
		if (w->np) memset(w->dx, 0, (size_t)w->np * sizeof *w->dx);
		for (int it = 0; it < iterations; ++it) {
			pbd_distance_accumulate_jacobi(w, inv_h2);
			jacobi_apply(w);
			if (in_solver) pbd_collide_project(w);
		}
	} else {
		for (int it = 0; it < iterations; ++it) {
			pbd_distance_solve_gs(w, inv_h2);
			if (in_solver) pbd_collide_project(w);
		}
	}
	if (w->def.collision_mode == PBD_COLLISION_AFTER_SOLVER && w->nc > 0) pbd_collide_project(w);
	pbd_particles_update_velocities(w, h, substep == substeps);
}
