/* Changing the solver while it runs: solver and formulation, iterations, substeps, and the
 * stiffness of every distance constraint.
 *
 * Stiffness is one scale s = 2^level applied to each constraint's material as the scene loaded
 * it (kept here per constraint, so going back to level 0, or reloading, restores it exactly and
 * repeated changes do not drift). Both formulations scale a softness the same way:
 *   stiffer (s > 1): softness / s;
 *   softer (s < 1):  (softness + reference) / s - reference, so that a hard constraint
 *                    (softness 0) softens too, gradually from the reference on.
 * XPBD's softness is its compliance a; the reference a0 is the compliance at which the scene's
 * bodies would stretch by about 1% under their own weight (an edge of mean rest length L carries
 * about the weight M g of the bodies spread over the sqrt(N) edges across them, and stretches by
 * a0 times that force). PBD's softness is (1 - k) / k for a stiffness k in (0, 1] (k = 1 / (1 +
 * softness), the form a compliance takes in one projection), with the reference 0.01: halving
 * from k = 1 gives 0.99, 0.97, 0.93, 0.87 ... PBD's stiffness is applied through the
 * iteration-count correction, so a k even slightly below 1 is already soft; equal steps in k
 * would turn a cloth to rubber in two presses. */
#include <math.h>
#include <stdlib.h>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include "viewer.h"

#define STIFFNESS_LEVEL_MIN (-20)
#define STIFFNESS_LEVEL_MAX 10

const char* view_solver_name(pbd_solver s) { return s == PBD_SOLVER_JACOBI ? "Jacobi" : "Gauss-Seidel"; }

const char* view_formulation_name(pbd_formulation f) { return f == PBD_FORMULATION_XPBD ? "XPBD" : "PBD"; }

void view_controls_free(view_controls* c) {
	free(c->original);
	*c = (view_controls){0};
}

/* See the file comment. */
static double reference_compliance(const pbd_world* w, const view_controls* c, const pbd_distance_def* defs_rest,
                                   uint32_t rest_count) {
	const uint32_t n = pbd_world_particle_count(w);
	const pbd_real* inv = pbd_world_inv_masses(w);
	double mass = 0;
	uint32_t free_count = 0;
	for (uint32_t i = 0; i < n; ++i) {
		if (inv[i] > 0) {
			mass += 1.0 / (double)inv[i];
			++free_count;
		}
	}
	double rest = 0;
	for (uint32_t i = 0; i < rest_count; ++i) rest += (double)defs_rest[i].rest;
	rest = rest_count ? rest / rest_count : 0;
	const pbd_world_def def = pbd_world_get_def(w);
	double g = sqrt((double)def.gravity.x * (double)def.gravity.x + (double)def.gravity.y * (double)def.gravity.y +
	                (double)def.gravity.z * (double)def.gravity.z);
	if (!(g > 0)) g = 9.81; /* no gravity: the weight it would have on Earth */
	(void)c;
	if (!(mass > 0) || !(rest > 0)) return 1e-6;
	const double force = mass * g / sqrt((double)free_count);
	return 0.01 * rest / force;
}

bool view_controls_init(viewer* v) {
	view_controls* c = &v->controls;
	view_controls_free(c);
	const pbd_world* w = v->sc.world;
	const uint32_t n = pbd_world_distance_count(w);
	if (n == 0) return true;
	c->original = malloc((size_t)n * sizeof *c->original);
	pbd_distance_def* defs = malloc((size_t)n * sizeof *defs);
	if (!c->original || !defs) {
		free(defs);
		view_controls_free(c);
		return false;
	}
	for (uint32_t i = 0; i < n; ++i) {
		if (pbd_world_get_distance(w, i, &defs[i]) != PBD_OK) defs[i] = pbd_distance_def_default();
		c->original[i] = (pbd_edge_material){
		    .enabled = true,
		    .stiffness_stretch = defs[i].stiffness_stretch,
		    .stiffness_compress = defs[i].stiffness_compress,
		    .compliance_stretch = defs[i].compliance_stretch,
		    .compliance_compress = defs[i].compliance_compress,
		};
	}
	c->count = n;
	c->reference_compliance = reference_compliance(w, c, defs, n);
	free(defs);
	return true;
}

/* See the file comment. */
static double scale_softness(double softness, double s, double reference) {
	const double out = s >= 1.0 ? softness / s : (softness + reference) / s - reference;
	return out > 0 ? out : 0;
}

#define PBD_SOFTNESS_REFERENCE 0.01

static pbd_real scale_stiffness(pbd_real k, double s) {
	if (!(k > 0)) return k; /* no stiffness (a rope's compression) stays none */
	const double soft = scale_softness((1.0 - (double)k) / (double)k, s, PBD_SOFTNESS_REFERENCE);
	return (pbd_real)(1.0 / (1.0 + soft));
}

static pbd_real scale_compliance(pbd_real a, double s, double a0) { return (pbd_real)scale_softness((double)a, s, a0); }

static bool same_material(const pbd_edge_material* a, const pbd_edge_material* b) {
	return a->stiffness_stretch == b->stiffness_stretch && a->stiffness_compress == b->stiffness_compress &&
	       a->compliance_stretch == b->compliance_stretch && a->compliance_compress == b->compliance_compress;
}

bool view_controls_set_stiffness(viewer* v, int level) {
	view_controls* c = &v->controls;
	if (level < STIFFNESS_LEVEL_MIN) level = STIFFNESS_LEVEL_MIN;
	if (level > STIFFNESS_LEVEL_MAX) level = STIFFNESS_LEVEL_MAX;
	const double s = ldexp(1.0, level);
	/* One call per run of constraints that loaded with the same material: a cloth's structural,
	 * shear and bend edges are each one run, so this is a handful of calls, not one each. */
	for (uint32_t first = 0; first < c->count;) {
		uint32_t end = first + 1;
		while (end < c->count && same_material(&c->original[end], &c->original[first])) ++end;
		const pbd_edge_material* o = &c->original[first];
		const pbd_edge_material m = {
		    .enabled = true,
		    .stiffness_stretch = scale_stiffness(o->stiffness_stretch, s),
		    .stiffness_compress = scale_stiffness(o->stiffness_compress, s),
		    .compliance_stretch = scale_compliance(o->compliance_stretch, s, c->reference_compliance),
		    .compliance_compress = scale_compliance(o->compliance_compress, s, c->reference_compliance),
		};
		if (pbd_world_set_distance_material(v->sc.world, first, end - first, &m) != PBD_OK) {
			view_message(v, "stiffness: %s", pbd_world_last_error(v->sc.world));
			return false;
		}
		first = end;
	}
	c->stiffness_level = level;
	return true;
}

/* n up or down by one, or doubled or halved with shift, within [1, max]. */
static int next_count(int n, bool up, bool shift, int max) {
	long m = shift ? (up ? 2L * n : n / 2) : (up ? n + 1L : n - 1L);
	if (m < 1) m = 1;
	if (m > max) m = max;
	return (int)m;
}

bool view_controls_key(viewer* v, int key, int mods) {
	pbd_world* w = v->sc.world;
	const pbd_world_def def = pbd_world_get_def(w);
	const bool shift = (mods & GLFW_MOD_SHIFT) != 0;
	pbd_status st = PBD_OK;
	switch (key) {
	case GLFW_KEY_G: {
		const pbd_solver s = def.solver == PBD_SOLVER_JACOBI ? PBD_SOLVER_GAUSS_SEIDEL : PBD_SOLVER_JACOBI;
		st = pbd_world_set_solver(w, s);
		if (st == PBD_OK) view_message(v, "solver: %s", view_solver_name(s));
		break;
	}
	case GLFW_KEY_X: {
		const pbd_formulation f = def.formulation == PBD_FORMULATION_XPBD ? PBD_FORMULATION_PBD : PBD_FORMULATION_XPBD;
		st = pbd_world_set_formulation(w, f);
		if (st == PBD_OK) view_message(v, "formulation: %s", view_formulation_name(f));
		break;
	}
	case GLFW_KEY_LEFT_BRACKET:
	case GLFW_KEY_RIGHT_BRACKET: {
		const int n = next_count(def.iterations, key == GLFW_KEY_RIGHT_BRACKET, shift, PBD_SCENE_MAX_ITERATIONS);
		st = pbd_world_set_iterations(w, n);
		if (st == PBD_OK) view_message(v, "iterations: %d", n);
		break;
	}
	case GLFW_KEY_COMMA:
	case GLFW_KEY_PERIOD: {
		const int n = next_count(def.substeps, key == GLFW_KEY_PERIOD, shift, PBD_SCENE_MAX_SUBSTEPS);
		st = pbd_world_set_substeps(w, n);
		if (st == PBD_OK) view_message(v, "substeps: %d", n);
		break;
	}
	case GLFW_KEY_UP:
	case GLFW_KEY_DOWN:
	case GLFW_KEY_0: {
		const int level = key == GLFW_KEY_0 ? 0 : v->controls.stiffness_level + (key == GLFW_KEY_UP ? 1 : -1);
		if (view_controls_set_stiffness(v, level))
			view_message(v, "stiffness: x%g of the scene's materials", ldexp(1.0, v->controls.stiffness_level));
		return true;
	}
	default:
		return false;
	}
	if (st != PBD_OK) view_message(v, "%s", pbd_world_last_error(w));
	return true;
}
