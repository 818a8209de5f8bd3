/* The force-based methods' substep (integrate.h): forces at the substep's start, the method's
 * update of velocities and positions, then the contact stage and velocity update every method
 * shares (solver.c). Explicit and symplectic Euler live here; implicit Euler in implicit.c. */
#include <string.h>

#include "model/forces.h"
#include "methods/integrate.h"
#include "methods/substep.h"
#include "model/world.h"

pbd_status pbd_integrate_prepare(pbd_world* w) {
	const char* method = pbd_method_name(w->def.method);
	const uint32_t bodies = pbd_bodies_dynamic(w);
	if (bodies)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT,
		                "pbd_world_step: the %s method does not move rigid bodies; this world has %u dynamic bodies "
		                "(the pbd method moves them)",
		                method, bodies);
	uint64_t entries = 0, rows = 0;
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		const pbd_family_ops* ops = pbd_family_table[t];
		const uint32_t n = w->fam[t].n;
		if (n == 0) continue;
		if (!ops->linearize)
			return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT,
			                "pbd_world_step: the %s method has no force model for the %u %s constraints of this world",
			                method, n, ops->name);
		uint64_t fr = (uint64_t)n * ops->row_count, fe = (uint64_t)n * ops->row_entries;
		if (ops->row_sizes) ops->row_sizes(&w->fam[t], &fr, &fe);
		rows += fr;
		entries += fe;
		if (entries > UINT32_MAX / 2 || rows > UINT32_MAX / 2)
			return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: too many constraints for the %s method", method);
	}
	pbd_integrator* in = w->integ;
	if (pbd_rows_reserve(w, &in->rows, (uint32_t)rows, (uint32_t)entries) != PBD_OK)
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for the %s method's %llu rows", method,
		                (unsigned long long)rows);
	if (in->cap < w->np) {
		const pbd_grow_item items[] = {
		    {(void**)&in->f, sizeof *in->f},           {(void**)&in->dv, sizeof *in->dv},
		    {(void**)&in->r, sizeof *in->r},           {(void**)&in->z, sizeof *in->z},
		    {(void**)&in->d, sizeof *in->d},           {(void**)&in->ad, sizeof *in->ad},
		    {(void**)&in->diag, 9 * sizeof *in->diag}, {(void**)&in->y, sizeof *in->y},
		    {(void**)&in->load, sizeof *in->load},     {(void**)&in->unit, sizeof *in->unit}};
		if (!pbd_grow_all(&w->mem, items, 10, in->cap, w->cap_p))
			return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for the %s method", method);
		in->cap = w->cap_p;
	}
	/* The rows on the positions the first substep will start from: projective dynamics factors its
	 * matrix from them, with the springs of the hard rows. */
	pbd_step_ctx ctx;
	pbd_step_ctx_init(w, w->def.dt / (pbd_real)w->nsub, &ctx);
	ctx.q = w->x_lo;
	pbd_integrate_linearize(w, &ctx);
	in->residual = 0;
	in->cg_iterations = 0;
	return PBD_OK;
}

pbd_status pbd_vbd_method_prepare(pbd_world* w) {
	const pbd_status st = pbd_integrate_prepare(w);
	if (st != PBD_OK) return st;
	if (pbd_vbd_prepare(w) != PBD_OK)
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for the vbd method");
	return PBD_OK;
}

pbd_status pbd_pd_method_prepare(pbd_world* w) {
	pbd_status st = pbd_integrate_prepare(w);
	if (st != PBD_OK) return st;
	const uint32_t large = pbd_pd_large_rows(w);
	if (large > PBD_PD_LOW_RANK_MAX)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT,
		                "pbd_world_step: the projective_dynamics method takes at most %d constraints over more than %u "
		                "free particles (enclosed volumes); this world has %u",
		                PBD_PD_LOW_RANK_MAX, PBD_PD_DENSE_MAX, large);
	st = pbd_pd_prepare(w);
	if (st != PBD_OK)
		return pbd_fail(
		    w, st,
		    "pbd_world_step: the projective dynamics matrix could not be factored (%s): a compliance too small "
		    "for the particles' masses, or degenerate geometry",
		    pbd_status_string(st));
	return PBD_OK;
}

void pbd_integrator_free(pbd_world* w) {
	pbd_integrator* in = w->integ;
	const size_t n = in->cap;
	pbd_free(&w->mem, in->f, n * sizeof *in->f);
	pbd_free(&w->mem, in->dv, n * sizeof *in->dv);
	pbd_free(&w->mem, in->r, n * sizeof *in->r);
	pbd_free(&w->mem, in->z, n * sizeof *in->z);
	pbd_free(&w->mem, in->d, n * sizeof *in->d);
	pbd_free(&w->mem, in->ad, n * sizeof *in->ad);
	pbd_free(&w->mem, in->diag, 9 * n * sizeof *in->diag);
	pbd_free(&w->mem, in->y, n * sizeof *in->y);
	pbd_free(&w->mem, in->load, n * sizeof *in->load);
	pbd_free(&w->mem, in->unit, n * sizeof *in->unit);
	pbd_vbd_free(w);
	pbd_pd_free(w);
	pbd_rows_free(w, &in->rows);
	memset(in, 0, sizeof *in);
}

/* Damps the velocities the particles bring into the substep, as the position-based prediction
 * does (pbd_world_def.damping_mode; the after-forces mode damps after the update instead). */
static void damp(pbd_world* w, pbd_real damping) {
	for (uint32_t i = 0; i < w->np; ++i) {
		w->v[i] = pbd_v3_scale(w->v[i], damping);
		w->v_lo[i] = pbd_v3_scale(w->v_lo[i], damping);
	}
}

/* The external forces on every particle at the substep's start (time t): gravity, the applied
 * forces and the air (forces.c, which also leaves the air's drag matrices for implicit Euler). */
static void external_forces(pbd_world* w, double t) {
	pbd_integrator* in = w->integ;
	const pbd_vec3 g = w->def.gravity;
	pbd_forces_substep(w, t);
	for (uint32_t i = 0; i < w->np; ++i) {
		const pbd_real m = w->w[i] > 0 ? 1 / w->w[i] : 0;
		pbd_vec3 f = pbd_v3_scale(g, m);
		if (w->flags[i] & PBD_PARTICLE_FORCE) f = pbd_v3_add(f, w->force[i]);
		if (w->air_on) f = pbd_v3_add(f, w->air_force[i]);
		in->f[i] = f;
	}
}

/* The total force: the external ones and the constraints' elastic and damping forces. */
static void total_forces(pbd_world* w, const pbd_step_ctx* ctx, double t) {
	pbd_integrator* in = w->integ;
	external_forces(w, t);
	pbd_integrate_linearize(w, ctx);
	pbd_rows_forces(&in->rows, w->v, w->def.stiffness_damping, in->f);
	if (w->def.method == PBD_METHOD_EXPLICIT_EULER) pbd_rows_hard_damping(w, ctx->h, in->f);
}

/* v <- v + dv, kept with its rounding remainder (as the prediction adds g h). */
static inline void add_velocity(pbd_world* w, uint32_t i, pbd_vec3 dv) {
	const pbd_vec3 b = pbd_v3_add(w->v_lo[i], dv);
	const pbd_vec3 s = pbd_v3_add(w->v[i], b);
	w->v_lo[i] = pbd_v3_sub(b, pbd_v3_sub(s, w->v[i]));
	w->v[i] = s;
}

/* The pinned particles' displacement in the substep: a target is approached along a straight
 * line and reached exactly at the step's end (as the position-based prediction does). */
static void pinned_displacements(pbd_world* w, pbd_real fraction) {
	for (uint32_t i = 0; i < w->np; ++i) {
		if (w->w[i] > 0) continue;
		if (w->flags[i] & PBD_PARTICLE_TARGET) {
			const pbd_vec3 from = w->from[i];
			const pbd_vec3 at =
			    fraction >= 1 ? w->target[i] : pbd_v3_add(from, pbd_v3_scale(pbd_v3_sub(w->target[i], from), fraction));
			w->q[i] = pbd_v3_sub(at, w->x[i]);
		} else {
			w->q[i] = pbd_v3(0, 0, 0);
		}
	}
}

static void euler(pbd_world* w, const pbd_step_ctx* ctx, pbd_real h, pbd_real damping, bool after_forces, double t);

void pbd_integrate_substep(pbd_world* w, pbd_real h, pbd_real damping, int substep, int substeps) {
	const pbd_method method = w->def.method;
	const bool after_forces = w->def.damping_mode == PBD_DAMPING_AFTER_FORCES;
	pbd_integrator* in = w->integ;
	if (w->np == 0) return; /* no particle: nothing moves, and the working arrays may not exist */
	const uint64_t t0 = pbd_prof_begin(w);
	if (damping != 1 && !after_forces) damp(w, damping);

	/* Forces at the substep's start: positions x + x_lo, velocities v. */
	for (uint32_t i = 0; i < w->np; ++i) w->q[i] = w->w[i] > 0 ? w->x_lo[i] : pbd_v3(0, 0, 0);
	pbd_prof_end(w, PBD_PHASE_PREDICT, t0);
	const uint64_t t1 = pbd_prof_begin(w);
	pbd_step_ctx ctx;
	pbd_step_ctx_init(w, h, &ctx);
	const pbd_real end = (pbd_real)substep / (pbd_real)substeps;
	const double t = w->time + (double)h * (substep - 1);
	if (method == PBD_METHOD_VBD || method == PBD_METHOD_PROJECTIVE_DYNAMICS) {
		/* Methods that solve for the positions at the substep's end, against targets that are there. */
		external_forces(w, t);
		pinned_displacements(w, end);
		ctx.substep_fraction = end;
		if (method == PBD_METHOD_VBD)
			pbd_vbd_solve(w, &ctx);
		else
			pbd_pd_solve(w, &ctx);
	} else {
		ctx.substep_fraction = (pbd_real)(substep - 1) / (pbd_real)substeps;
		euler(w, &ctx, h, damping, after_forces, t);
		pinned_displacements(w, end);
	}
	pbd_prof_end(w, PBD_PHASE_METHOD, t1);

	pbd_bodies_substep(w, h, damping); /* kinematic bodies: dynamic ones were refused in prepare */
	/* The contact stage of the position-based step, on the path x -> x + q the method produced. */
	pbd_substep_find_contacts(w, h);
	pbd_substep_project_contacts(w);
	pbd_substep_finish(w, h, substep, substeps);
	if (method == PBD_METHOD_EXPLICIT_EULER) {
		const uint64_t t2 = pbd_prof_begin(w);
		for (uint32_t i = 0; i < w->np; ++i)
			if (w->w[i] > 0) add_velocity(w, i, in->dv[i]);
		pbd_prof_end(w, PBD_PHASE_FINISH, t2);
	}
}

/* The Euler methods: forces at the substep's start, new velocities, positions moved by them
 * (explicit Euler moves with the old velocities and takes the new ones after the contact stage). */
static void euler(pbd_world* w, const pbd_step_ctx* ctx, pbd_real h, pbd_real damping, bool after_forces, double t) {
	const pbd_method method = w->def.method;
	pbd_integrator* in = w->integ;
	total_forces(w, ctx, t);
	if (method == PBD_METHOD_IMPLICIT_EULER) pbd_implicit_solve(w, ctx);
	for (uint32_t i = 0; i < w->np; ++i) {
		const pbd_real iw = w->w[i];
		if (!(iw > 0)) continue;
		const pbd_vec3 dv = method == PBD_METHOD_IMPLICIT_EULER ? in->dv[i] : pbd_v3_scale(in->f[i], h * iw);
		if (method == PBD_METHOD_EXPLICIT_EULER)
			in->dv[i] = dv;
		else
			add_velocity(w, i, dv);
		if (damping != 1 && after_forces) {
			w->v[i] = pbd_v3_scale(w->v[i], damping);
			w->v_lo[i] = pbd_v3_scale(w->v_lo[i], damping);
		}
		w->q[i] = pbd_v3_add(w->x_lo[i], pbd_v3_scale(w->v[i], h));
	}
}
