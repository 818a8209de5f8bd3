/* The "world" settings of a scene: the pbd_world_def it is built with. */
#include "scene_internal.h"

static const char* const solver_aliases[] = {"gs", NULL};
static const int solver_alias_values[] = {PBD_SOLVER_GAUSS_SEIDEL};
static const char* const collision_names[] = {"in_solver", "after_solver", NULL};
static const char* const damping_mode_names[] = {"velocity", "after_forces", NULL};
static const char* const simd_names[] = {"auto", "scalar", "avx2", "avx512", NULL};

bool scene_read_world(loader* L, const cJSON* root, pbd_world_def* d) {
	jr* r = &L->r;
	const cJSON* w = jr_get(root, "world");
	if (!w) return true;
	/* The library names its methods, solvers and formulations, so that a scene spells them as the
	 * program and the library do; listed in the order of their enums, which jr_enum returns. */
	const char* method_names[PBD_METHOD_COUNT + 1];
	for (int m = 0; m < PBD_METHOD_COUNT; ++m) method_names[m] = pbd_method_name((pbd_method)m);
	method_names[PBD_METHOD_COUNT] = NULL;
	const char* const solver_names[] = {pbd_solver_name(PBD_SOLVER_GAUSS_SEIDEL), pbd_solver_name(PBD_SOLVER_JACOBI),
	                                    NULL};
	const char* const formulation_names[] = {pbd_formulation_name(PBD_FORMULATION_PBD),
	                                         pbd_formulation_name(PBD_FORMULATION_XPBD), NULL};
	const char* const body_solver_names[] = {pbd_body_solver_name(PBD_BODY_SOLVER_POSITION),
	                                         pbd_body_solver_name(PBD_BODY_SOLVER_SOFT_STEP),
	                                         pbd_body_solver_name(PBD_BODY_SOLVER_AVBD), NULL};
	static const char* const keys[] = {"gravity",
	                                   "dt",
	                                   "substeps",
	                                   "max_substeps",
	                                   "iterations",
	                                   "solver",
	                                   "formulation",
	                                   "damping",
	                                   "damping_mode",
	                                   "jacobi",
	                                   "collision_mode",
	                                   "max_speed",
	                                   "divergence_strain",
	                                   "sleep_time",
	                                   "sleep_speed",
	                                   "body_solver",
	                                   "contact_hertz",
	                                   "chebyshev",
	                                   "hierarchy",
	                                   "method",
	                                   "stiffness_damping",
	                                   "linear_tolerance",
	                                   "hard_stiffness",
	                                   "rigid_stiffness",
	                                   "wind",
	                                   "gusts",
	                                   "threads",
	                                   "simd",
	                                   NULL};
	const char* path = "world";
	if (!jr_object(r, w, path, keys)) return false;
	int64_t substeps, max_substeps, iterations, threads;
	int solver, formulation, collision, damping_mode, method, simd, body_solver;
	if (!jr_vec3(r, w, path, "gravity", d->gravity, PBD_SCENE_MAX_GRAVITY, &d->gravity) ||
	    !jr_real_p(r, w, path, "dt", d->dt, (jr_range){PBD_SCENE_MIN_DT, PBD_SCENE_MAX_DT, false, false}, &d->dt) ||
	    !jr_int(r, w, path, "substeps", d->substeps, 1, PBD_SCENE_MAX_SUBSTEPS, &substeps) ||
	    !jr_int(r, w, path, "max_substeps", d->max_substeps, 0, PBD_SCENE_MAX_SUBSTEPS, &max_substeps) ||
	    !jr_int(r, w, path, "iterations", d->iterations, 1, PBD_SCENE_MAX_ITERATIONS, &iterations) ||
	    !jr_enum(r, w, path, "solver", (int)d->solver, solver_names, solver_aliases, solver_alias_values, &solver) ||
	    !jr_enum(r, w, path, "formulation", (int)d->formulation, formulation_names, NULL, NULL, &formulation) ||
	    !jr_real_p(r, w, path, "damping", d->damping, (jr_range){0, 1, true, false}, &d->damping) ||
	    !jr_enum(r, w, path, "damping_mode", (int)d->damping_mode, damping_mode_names, NULL, NULL, &damping_mode) ||
	    !jr_enum(r, w, path, "collision_mode", (int)d->collision_mode, collision_names, NULL, NULL, &collision) ||
	    !jr_real_p(r, w, path, "max_speed", d->max_speed, JR_NONNEG(PBD_SCENE_MAX_SPEED), &d->max_speed) ||
	    !jr_real_p(r, w, path, "divergence_strain", d->divergence_strain, JR_NONNEG(PBD_SCENE_MAX_MAGNITUDE),
	               &d->divergence_strain) ||
	    !jr_real_p(r, w, path, "sleep_time", d->sleep_time, JR_NONNEG(PBD_SCENE_MAX_MAGNITUDE), &d->sleep_time) ||
	    !jr_real_p(r, w, path, "sleep_speed", d->sleep_speed, JR_NONNEG(PBD_SCENE_MAX_SPEED), &d->sleep_speed) ||
	    !jr_enum(r, w, path, "body_solver", (int)d->body_solver, body_solver_names, NULL, NULL, &body_solver) ||
	    !jr_real_p(r, w, path, "contact_hertz", d->contact_hertz, JR_NONNEG(1e6), &d->contact_hertz) ||
	    !jr_enum(r, w, path, "method", (int)d->method, method_names, NULL, NULL, &method) ||
	    !jr_enum(r, w, path, "simd", (int)d->simd, simd_names, NULL, NULL, &simd) ||
	    !jr_real_p(r, w, path, "stiffness_damping", d->stiffness_damping, JR_NONNEG(PBD_SCENE_MAX_MAGNITUDE),
	               &d->stiffness_damping) ||
	    !jr_real_p(r, w, path, "linear_tolerance", d->linear_tolerance, (jr_range){0, 1, true, true},
	               &d->linear_tolerance) ||
	    !jr_real_p(r, w, path, "hard_stiffness", d->hard_stiffness, (jr_range){0, PBD_MAX_HARD_STIFFNESS, true, false},
	               &d->hard_stiffness) ||
	    !jr_vec3(r, w, path, "wind", d->wind, PBD_SCENE_MAX_SPEED, &d->wind) ||
	    !jr_int(r, w, path, "threads", d->threads, 1, PBD_MAX_THREADS, &threads))
		return false;
	d->threads = (int)threads;
	d->method = (pbd_method)method;
	d->simd = (pbd_simd)simd;
	d->damping_mode = (pbd_damping_mode)damping_mode;
	d->substeps = (int)substeps;
	d->max_substeps = (int)max_substeps;
	d->iterations = (int)iterations;
	d->solver = (pbd_solver)solver;
	d->formulation = (pbd_formulation)formulation;
	d->collision_mode = (pbd_collision_mode)collision;
	d->body_solver = (pbd_body_solver)body_solver;

	const cJSON* j = jr_get(w, "jacobi");
	if (j) {
		static const char* const jkeys[] = {"alpha", "omega", "equal_split", NULL};
		const char* jpath = "world.jacobi";
		if (!jr_object(r, j, jpath, jkeys) ||
		    !jr_real_p(r, j, jpath, "alpha", d->jacobi_alpha, JR_NONNEG(PBD_SCENE_MAX_MAGNITUDE), &d->jacobi_alpha) ||
		    !jr_real_p(r, j, jpath, "omega", d->jacobi_omega, (jr_range){0, 2, true, true}, &d->jacobi_omega) ||
		    !jr_bool(r, j, jpath, "equal_split", d->jacobi_equal_split, &d->jacobi_equal_split))
			return false;
	}
	const cJSON* c = jr_get(w, "chebyshev");
	if (c) {
		static const char* const ckeys[] = {"rho", "delay", "gamma", NULL};
		const char* cpath = "world.chebyshev";
		int64_t delay;
		if (!jr_object(r, c, cpath, ckeys) ||
		    !jr_real_p(r, c, cpath, "rho", d->chebyshev_rho, (jr_range){0, 1, false, true}, &d->chebyshev_rho) ||
		    !jr_int(r, c, cpath, "delay", d->chebyshev_delay, 1, PBD_SCENE_MAX_ITERATIONS, &delay) ||
		    !jr_real_p(r, c, cpath, "gamma", d->chebyshev_gamma, (jr_range){0, 1, true, false}, &d->chebyshev_gamma))
			return false;
		d->chebyshev = true;
		d->chebyshev_delay = (int)delay;
	}
	const cJSON* hj = jr_get(w, "hierarchy");
	if (hj) {
		static const char* const hkeys[] = {"levels", "iterations", NULL};
		const char* hpath = "world.hierarchy";
		int64_t levels, its;
		if (!jr_object(r, hj, hpath, hkeys) ||
		    !jr_int(r, hj, hpath, "levels", d->hierarchy_levels, 0, PBD_HIERARCHY_MAX_LEVELS, &levels) ||
		    !jr_int(r, hj, hpath, "iterations", d->hierarchy_iterations, 1, PBD_SCENE_MAX_ITERATIONS, &its))
			return false;
		d->hierarchy_levels = (int)levels;
		d->hierarchy_iterations = (int)its;
	}
	const cJSON* gj = jr_get(w, "gusts");
	if (gj) {
		static const char* const gkeys[] = {"strength", "frequency", NULL};
		const char* gpath = "world.gusts";
		if (!jr_object(r, gj, gpath, gkeys) ||
		    !jr_real_p(r, gj, gpath, "strength", d->gust_strength, JR_NONNEG(PBD_SCENE_MAX_GUST_STRENGTH),
		               &d->gust_strength) ||
		    !jr_real_p(r, gj, gpath, "frequency", d->gust_frequency, JR_POSITIVE(PBD_SCENE_MAX_GUST_FREQUENCY),
		               &d->gust_frequency))
			return false;
	}
	/* The name hard_stiffness had before "rigid" came to mean rigid bodies: still read, with a note. */
	if (jr_get(w, "rigid_stiffness")) {
		if (jr_get(w, "hard_stiffness"))
			return jr_fail(r, "world.rigid_stiffness", "is the old name of hard_stiffness, which is given too");
		if (!jr_real_p(r, w, path, "rigid_stiffness", d->hard_stiffness,
		               (jr_range){0, PBD_MAX_HARD_STIFFNESS, true, false}, &d->hard_stiffness))
			return false;
		scene_note(L, "world.rigid_stiffness", "deprecated, now called hard_stiffness");
	}
	return true;
}
