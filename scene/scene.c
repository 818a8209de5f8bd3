/* JSON scene -> pbd_world, through the public API. Every value is checked here first so that a
 * mistake is reported with the path of the field that holds it; whatever the library still
 * refuses is passed through with the path of the object it came from. */
#define _POSIX_C_SOURCE 200809L /* fileno, fdopen, O_CLOEXEC */
#include "pbd/scene.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json_read.h"
#include "motion.h"
#include "pbd/math.h"
#include "scene_compose.h"
#include "scene_embedded.h"

#ifdef PBD_SCENE_HAVE_STB
#include <stb_image.h>
#endif

/* Everything one load needs, so that nothing is global. */
typedef struct loader {
	jr r;
	const char* base_dir; /* where relative file names start; NULL = working directory */
	bool builtin;         /* a built-in scene: relative names look in the embedded data files first */
	pbd_scene* s;
	uint64_t particles; /* running totals, checked against the scene caps */
	uint64_t constraints;
	uint64_t max_particles, max_constraints; /* the caps: SCENE_MAX_* or the options' lower ones */
	const pbd_obj_groups* groups;            /* the OBJ groups of the mesh_cloth being read, else NULL */
	const scene_compose* compose;            /* where each object and collider was written */
} loader;

const char* pbd_scene_object_type_name(pbd_scene_object_type type) {
	switch (type) {
	case PBD_SCENE_OBJECT_PARTICLES:
		return "particles";
	case PBD_SCENE_OBJECT_GRID_CLOTH:
		return "grid_cloth";
	case PBD_SCENE_OBJECT_MESH_CLOTH:
		return "mesh_cloth";
	case PBD_SCENE_OBJECT_ROPE:
		return "rope";
	case PBD_SCENE_OBJECT_TET_BOX:
		return "tet_box";
	case PBD_SCENE_OBJECT_TET_SPHERE:
		return "tet_sphere";
	case PBD_SCENE_OBJECT_TETGEN:
		return "tetgen";
	}
	return "unknown";
}

/* Between the world and the caller's log callback: quiet while the scene loads (the loader
 * reports a refusal itself, with the field path, so the caller would otherwise see it twice),
 * then passing every message on. Heap-allocated because the world keeps its address and the
 * scene struct is returned by value. */
struct pbd_scene_log {
	pbd_log_fn fn;
	void* user;
	bool loading;
	char held[256]; /* the last message held back while loading */
};

static void scene_log_route(const char* message, void* user) {
	struct pbd_scene_log* l = user;
	if (l->loading) {
		snprintf(l->held, sizeof l->held, "%s", message);
		return;
	}
	if (l->fn) l->fn(message, l->user);
}

/* The library's last message, with the path of the object whose creation it refused. */
static bool fail_world(loader* L, const char* path) {
	return jr_fail(&L->r, path, "%s", pbd_world_last_error(L->s->world));
}

/* Checks the scene-wide caps before anything is allocated for an object. */
static bool check_caps(loader* L, const char* path, uint64_t particles, uint64_t constraints) {
	if (L->particles + particles > L->max_particles)
		return jr_fail(&L->r, path, "too many particles (%llu in the scene with this object, the limit is %llu)",
		               (unsigned long long)(L->particles + particles), (unsigned long long)L->max_particles);
	if (L->constraints + constraints > L->max_constraints)
		return jr_fail(&L->r, path, "too many constraints (%llu in the scene with this object, the limit is %llu)",
		               (unsigned long long)(L->constraints + constraints), (unsigned long long)L->max_constraints);
	return true;
}

/* Checks the caps and counts the object in. */
static bool reserve(loader* L, const char* path, uint64_t particles, uint64_t constraints) {
	if (!check_caps(L, path, particles, constraints)) return false;
	L->particles += particles;
	L->constraints += constraints;
	return true;
}

/* A direction the library normalises in pbd_real: its squared length must be finite there, or
 * the normalised vector would be 0 or NaN. The component caps keep it so; this says which field
 * it is if a cap is ever raised past them. */
static bool direction_finite(loader* L, const char* path, const char* key, pbd_vec3 d) {
	if (isfinite((double)pbd_v3_dot(d, d))) return true;
	char p[JR_PATH_MAX];
	jr_path_key(p, path, key);
	return jr_fail(&L->r, p, "its length overflows the %s scalar type", JR_REAL_NAME);
}

/* ---- world settings ---------------------------------------------------------------------- */

static const char* const solver_names[] = {"gauss_seidel", "jacobi", NULL};
static const char* const solver_aliases[] = {"gs", NULL};
static const int solver_alias_values[] = {PBD_SOLVER_GAUSS_SEIDEL};
static const char* const formulation_names[] = {"pbd", "xpbd", NULL};
static const char* const collision_names[] = {"in_solver", "after_solver", NULL};
static const char* const damping_mode_names[] = {"velocity", "after_forces", NULL};
static const char* const simd_names[] = {"auto", "scalar", "avx2", "avx512", NULL};
static const char* const method_names[] = {
    "pbd", "explicit_euler", "symplectic_euler", "implicit_euler", "projective_dynamics", "vbd", NULL};

static bool read_world(loader* L, const cJSON* root, pbd_world_def* d) {
	jr* r = &L->r;
	const cJSON* w = jr_get(root, "world");
	if (!w) return true;
	static const char* const keys[] = {"gravity",
	                                   "dt",
	                                   "substeps",
	                                   "iterations",
	                                   "solver",
	                                   "formulation",
	                                   "damping",
	                                   "damping_mode",
	                                   "jacobi",
	                                   "collision_mode",
	                                   "max_speed",
	                                   "divergence_strain",
	                                   "chebyshev",
	                                   "hierarchy",
	                                   "method",
	                                   "stiffness_damping",
	                                   "linear_tolerance",
	                                   "rigid_stiffness",
	                                   "wind",
	                                   "gusts",
	                                   "threads",
	                                   "simd",
	                                   NULL};
	const char* path = "world";
	if (!jr_object(r, w, path, keys)) return false;
	int64_t substeps, iterations, threads;
	int solver, formulation, collision, damping_mode, method, simd;
	if (!jr_vec3(r, w, path, "gravity", d->gravity, PBD_SCENE_MAX_GRAVITY, &d->gravity) ||
	    !jr_real_p(r, w, path, "dt", d->dt, (jr_range){PBD_SCENE_MIN_DT, PBD_SCENE_MAX_DT, false, false}, &d->dt) ||
	    !jr_int(r, w, path, "substeps", d->substeps, 1, PBD_SCENE_MAX_SUBSTEPS, &substeps) ||
	    !jr_int(r, w, path, "iterations", d->iterations, 1, PBD_SCENE_MAX_ITERATIONS, &iterations) ||
	    !jr_enum(r, w, path, "solver", (int)d->solver, solver_names, solver_aliases, solver_alias_values, &solver) ||
	    !jr_enum(r, w, path, "formulation", (int)d->formulation, formulation_names, NULL, NULL, &formulation) ||
	    !jr_real_p(r, w, path, "damping", d->damping, (jr_range){0, 1, true, false}, &d->damping) ||
	    !jr_enum(r, w, path, "damping_mode", (int)d->damping_mode, damping_mode_names, NULL, NULL, &damping_mode) ||
	    !jr_enum(r, w, path, "collision_mode", (int)d->collision_mode, collision_names, NULL, NULL, &collision) ||
	    !jr_real_p(r, w, path, "max_speed", d->max_speed, JR_NONNEG(PBD_SCENE_MAX_SPEED), &d->max_speed) ||
	    !jr_real_p(r, w, path, "divergence_strain", d->divergence_strain, JR_NONNEG(PBD_SCENE_MAX_MAGNITUDE),
	               &d->divergence_strain) ||
	    !jr_enum(r, w, path, "method", (int)d->method, method_names, NULL, NULL, &method) ||
	    !jr_enum(r, w, path, "simd", (int)d->simd, simd_names, NULL, NULL, &simd) ||
	    !jr_real_p(r, w, path, "stiffness_damping", d->stiffness_damping, JR_NONNEG(PBD_SCENE_MAX_MAGNITUDE),
	               &d->stiffness_damping) ||
	    !jr_real_p(r, w, path, "linear_tolerance", d->linear_tolerance, (jr_range){0, 1, true, true},
	               &d->linear_tolerance) ||
	    !jr_real_p(r, w, path, "rigid_stiffness", d->rigid_stiffness,
	               (jr_range){0, PBD_MAX_RIGID_STIFFNESS, true, false}, &d->rigid_stiffness) ||
	    !jr_vec3(r, w, path, "wind", d->wind, PBD_SCENE_MAX_SPEED, &d->wind) ||
	    !jr_int(r, w, path, "threads", d->threads, 1, PBD_MAX_THREADS, &threads))
		return false;
	d->threads = (int)threads;
	d->method = (pbd_method)method;
	d->simd = (pbd_simd)simd;
	d->damping_mode = (pbd_damping_mode)damping_mode;
	d->substeps = (int)substeps;
	d->iterations = (int)iterations;
	d->solver = (pbd_solver)solver;
	d->formulation = (pbd_formulation)formulation;
	d->collision_mode = (pbd_collision_mode)collision;

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
	return true;
}

/* ---- shared object fields ---------------------------------------------------------------- */

/* Softness of a constraint: stiffness (PBD) and compliance (XPBD), each either one value for
 * both directions or split into _stretch/_compress; giving both forms is ambiguous. */
static bool read_softness(loader* L, const cJSON* obj, const char* path, pbd_edge_material* m) {
	jr* r = &L->r;
	static const char* const which[2] = {"stiffness", "compliance"};
	for (int k = 0; k < 2; ++k) {
		const jr_range range = k == 0 ? JR_UNIT : JR_NONNEG(PBD_SCENE_MAX_COMPLIANCE);
		pbd_real* stretch = k == 0 ? &m->stiffness_stretch : &m->compliance_stretch;
		pbd_real* compress = k == 0 ? &m->stiffness_compress : &m->compliance_compress;
		char key_s[32], key_c[32];
		snprintf(key_s, sizeof key_s, "%s_stretch", which[k]);
		snprintf(key_c, sizeof key_c, "%s_compress", which[k]);
		if (jr_get(obj, which[k])) {
			if (jr_get(obj, key_s) || jr_get(obj, key_c)) {
				char p[JR_PATH_MAX];
				jr_path_key(p, path, which[k]);
				return jr_fail(&L->r, p, "give either %s or %s/%s, not both", which[k], key_s, key_c);
			}
			pbd_real v;
			if (!jr_real_p(r, obj, path, which[k], 0, range, &v)) return false;
			*stretch = *compress = v;
		} else if (!jr_real_p(r, obj, path, key_s, *stretch, range, stretch) ||
		           !jr_real_p(r, obj, path, key_c, *compress, range, compress)) {
			return false;
		}
	}
	return true;
}

/* "material": {"structural": {...}, "shear": {...}, "bend": {...}} */
static bool read_material(loader* L, const cJSON* obj, const char* path, pbd_edge_material mat[PBD_EDGE_KIND_COUNT]) {
	jr* r = &L->r;
	const cJSON* m = jr_get(obj, "material");
	if (!m) return true;
	char mpath[JR_PATH_MAX];
	jr_path_key(mpath, path, "material");
	static const char* const kinds[] = {"structural", "shear", "bend", NULL};
	if (!jr_object(r, m, mpath, kinds)) return false;
	static const char* const keys[] = {"enabled",    "stiffness",          "stiffness_stretch",   "stiffness_compress",
	                                   "compliance", "compliance_stretch", "compliance_compress", NULL};
	for (int k = 0; k < PBD_EDGE_KIND_COUNT; ++k) {
		const cJSON* e = jr_get(m, kinds[k]);
		if (!e) continue;
		char epath[JR_PATH_MAX];
		jr_path_key(epath, mpath, kinds[k]);
		if (!jr_object(r, e, epath, keys) || !jr_bool(r, e, epath, "enabled", mat[k].enabled, &mat[k].enabled) ||
		    !read_softness(L, e, epath, &mat[k]))
			return false;
	}
	return true;
}

/* A mass and an inverse mass share the range [PBD_SCENE_MIN_MASS, PBD_SCENE_MAX_MASS], so that either
 * one's reciprocal is within it too; an inverse mass may also be 0 (pinned). Both are checked on
 * the double read from the file, before any conversion to pbd_real. */
static const jr_range mass_range = {PBD_SCENE_MIN_MASS, PBD_SCENE_MAX_MASS, false, false};

static bool inv_mass_ok(loader* L, const char* path, double inv_mass) {
	if (inv_mass == 0 || inv_mass >= PBD_SCENE_MIN_MASS) return true;
	char p[JR_PATH_MAX], got[JR_NUMBER_MAX], min[JR_NUMBER_MAX], max[JR_NUMBER_MAX];
	jr_path_key(p, path, "inv_mass");
	jr_format_number(got, sizeof got, inv_mass);
	jr_format_number(min, sizeof min, PBD_SCENE_MIN_MASS);
	jr_format_number(max, sizeof max, PBD_SCENE_MAX_MASS);
	return jr_fail(&L->r, p, "must be 0 (pinned) or in [%s, %s] (got %s)", min, max, got);
}

static const char* const mass_mode_names[] = {"per_particle", "total", "density", NULL};

/* "mass": {"mode": ..., "value": ...} */
static bool read_mass(loader* L, const cJSON* obj, const char* path, pbd_soft_def* bd) {
	jr* r = &L->r;
	const cJSON* m = jr_get(obj, "mass");
	if (!m) return true;
	char mpath[JR_PATH_MAX];
	jr_path_key(mpath, path, "mass");
	static const char* const keys[] = {"mode", "value", NULL};
	int mode;
	double mass;
	char vpath[JR_PATH_MAX];
	jr_path_key(vpath, mpath, "value");
	if (!jr_object(r, m, mpath, keys) ||
	    !jr_enum(r, m, mpath, "mode", (int)bd->mass_mode, mass_mode_names, NULL, NULL, &mode) ||
	    !jr_real(r, m, mpath, "value", (double)bd->mass, mass_range, &mass) ||
	    !jr_to_real(r, vpath, mass, mass_range, &bd->mass))
		return false;
	bd->mass_mode = (pbd_mass_mode)mode;
	return true;
}

/* The group an OBJ-based mesh_cloth's selection {"group": "name"} at `path` names; UINT32_MAX
 * after a message that lists the groups there are. */
static uint32_t find_group(loader* L, const char* path, const cJSON* name) {
	const pbd_obj_groups* g = L->groups;
	if (!g) {
		jr_fail(&L->r, path, "needs a mesh_cloth read from an \"obj\" file");
		return UINT32_MAX;
	}
	if (!cJSON_IsString(name) || !name->valuestring) {
		jr_fail(&L->r, path, "expected a group name (got %s)", jr_type_name(name));
		return UINT32_MAX;
	}
	for (uint32_t i = 0; i < g->count; ++i)
		if (!strcmp(g->names[i], name->valuestring)) return i;
	char list[200] = "";
	size_t used = 0;
	for (uint32_t i = 0; i < g->count && used < sizeof list; ++i) {
		const int n = snprintf(list + used, sizeof list - used, "%s\"%s\"", i ? ", " : "", g->names[i]);
		if (n < 0) break;
		used += (size_t)n;
	}
	if (g->count == 0)
		jr_fail(&L->r, path, "unknown group \"%.64s\" (the OBJ file names no groups: add g or o lines)",
		        name->valuestring);
	else
		jr_fail(&L->r, path, "unknown group \"%.64s\" (the OBJ file has %s)", name->valuestring, list);
	return UINT32_MAX;
}

/* One pin selection object: marks the vertices it selects in sel[] and returns how many it
 * selected (0 is an error the caller reports). Grid edges and corners use the grid's own (i, j):
 * "top" is the row j = 0 (the edge at the grid's origin, from which hanging_cloth hangs), "bottom"
 * j = ny - 1, "left" the column i = 0, "right" i = nx - 1. Boxes and spheres are in the mesh's
 * coordinates, before the object's translation. A group picks the vertices of the faces an OBJ
 * file's g or o record names. */
static bool read_selection(loader* L, const cJSON* c, const char* p, const pbd_mesh* m, uint8_t* sel,
                           uint32_t* selected) {
	jr* r = &L->r;
	static const char* const keys[] = {"grid_edge", "grid_corners", "range", "box", "sphere", "group", NULL};
	if (!jr_object(r, c, p, keys)) return false;
	if (cJSON_GetArraySize(c) != 1)
		return jr_fail(r, p, "expected one of grid_edge, grid_corners, range, box, sphere, group");
	const uint32_t n = m->vertex_count, nx = m->grid_nx, ny = m->grid_ny;
	const bool grid = nx >= 2 && ny >= 2 && (uint64_t)nx * ny == n;
	uint32_t count = 0;
	/* 1 marks a vertex listed by index, 2 one a selection picked; `matched` counts what this
	 * selection matches, pinned before or not, `count` what it adds. */
	uint32_t matched = 0;
#define PICK(v) (matched++, count += sel[v] ? 0u : 1u, sel[v] = sel[v] ? sel[v] : 2)
	const cJSON* item = c->child;
	char q[JR_PATH_MAX];
	jr_path_key(q, p, item->string);
	if (!strcmp(item->string, "grid_edge") || !strcmp(item->string, "grid_corners")) {
		if (!grid) return jr_fail(r, q, "needs a grid_cloth object");
		static const char* const edges[] = {"top", "bottom", "left", "right", NULL};
		static const char* const corners[] = {"top_left", "top_right", "bottom_left", "bottom_right", NULL};
		const bool edge = !strcmp(item->string, "grid_edge");
		const cJSON* list = item;
		if (!edge && !cJSON_IsArray(item)) return jr_fail(r, q, "expected an array of corner names");
		for (const cJSON* e = edge ? item : list->child; e; e = edge ? NULL : e->next) {
			const char* const* names = edge ? edges : corners;
			int which = -1;
			for (int k = 0; cJSON_IsString(e) && names[k]; ++k)
				if (!strcmp(e->valuestring, names[k])) which = k;
			if (which < 0)
				return jr_fail(r, q, "unknown %s (expected %s)", edge ? "edge" : "corner",
				               edge ? "\"top\", \"bottom\", \"left\", \"right\""
				                    : "\"top_left\", \"top_right\", \"bottom_left\", \"bottom_right\"");
			if (edge) {
				for (uint32_t t = 0; t < (which < 2 ? nx : ny); ++t) {
					const uint32_t v = which == 0   ? t
					                   : which == 1 ? (ny - 1) * nx + t
					                   : which == 2 ? t * nx
					                                : t * nx + nx - 1;
					PICK(v);
				}
			} else {
				const uint32_t v = (which >= 2 ? (ny - 1) * nx : 0) + (which % 2 ? nx - 1 : 0);
				PICK(v);
			}
		}
	} else if (!strcmp(item->string, "range")) {
		if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 2) return jr_fail(r, q, "expected [first, count]");
		int64_t first, num;
		char i0[JR_PATH_MAX], i1[JR_PATH_MAX];
		jr_path_index(i0, q, 0);
		jr_path_index(i1, q, 1);
		if (!jr_int_item(r, item->child, i0, 0, (int64_t)n - 1, &first) ||
		    !jr_int_item(r, item->child->next, i1, 1, (int64_t)n - first, &num))
			return false;
		for (int64_t v = first; v < first + num; ++v) PICK((uint32_t)v);
	} else if (!strcmp(item->string, "group")) {
		const uint32_t g = find_group(L, q, item);
		if (g == UINT32_MAX) return false;
		const pbd_obj_groups* gr = L->groups;
		for (uint32_t k = gr->first[g]; k < gr->first[g + 1]; ++k)
			for (int j = 0; j < 3; ++j) {
				const uint32_t v = m->triangles[3 * (size_t)gr->triangles[k] + (size_t)j];
				PICK(v);
			}
	} else if (!strcmp(item->string, "box")) {
		static const char* const bkeys[] = {"min", "max", NULL};
		pbd_vec3 lo = pbd_v3(0, 0, 0), hi = pbd_v3(0, 0, 0);
		if (!jr_object(r, item, q, bkeys) || !jr_vec3(r, item, q, "min", lo, PBD_SCENE_MAX_LENGTH, &lo) ||
		    !jr_vec3(r, item, q, "max", hi, PBD_SCENE_MAX_LENGTH, &hi))
			return false;
		for (uint32_t v = 0; v < n; ++v) {
			const pbd_vec3 x = m->positions[v];
			if (x.x >= lo.x && x.x <= hi.x && x.y >= lo.y && x.y <= hi.y && x.z >= lo.z && x.z <= hi.z) PICK(v);
		}
	} else {
		static const char* const skeys[] = {"center", "radius", NULL};
		pbd_vec3 center = pbd_v3(0, 0, 0);
		double radius = 0;
		if (!jr_object(r, item, q, skeys) || !jr_vec3(r, item, q, "center", center, PBD_SCENE_MAX_LENGTH, &center) ||
		    !jr_real(r, item, q, "radius", 0, JR_POSITIVE(PBD_SCENE_MAX_LENGTH), &radius))
			return false;
		for (uint32_t v = 0; v < n; ++v) {
			const pbd_vec3 x = m->positions[v];
			const double dx = (double)x.x - (double)center.x, dy = (double)x.y - (double)center.y,
			             dz = (double)x.z - (double)center.z;
			if (dx * dx + dy * dy + dz * dz <= radius * radius) PICK(v);
		}
	}
#undef PICK
	if (matched == 0) return jr_fail(r, p, "selects no vertex");
	*selected += count;
	return true;
}

/* "pinned": vertex indices (each below the vertex count, none listed twice) and selection objects
 * (read_selection), in an array, or one selection object alone. Vertices a selection picks again
 * are pinned once. *out is malloc'd (NULL if empty). */
static bool read_vertex_set(loader* L, const cJSON* obj, const char* path, const char* key, const pbd_mesh* m,
                            uint32_t** out, uint32_t* out_count) {
	jr* r = &L->r;
	const uint32_t count = m->vertex_count;
	*out = NULL;
	*out_count = 0;
	const cJSON* pin = jr_get(obj, key);
	if (!pin) return true;
	char ppath[JR_PATH_MAX];
	jr_path_key(ppath, path, key);
	if (!cJSON_IsArray(pin) && !cJSON_IsObject(pin))
		return jr_fail(r, ppath, "expected an array of vertex indices and selections, or a selection");
	uint8_t* seen = calloc(count ? count : 1, 1);
	if (!seen) return jr_fail(r, ppath, "out of memory");
	char what[64];
	snprintf(what, sizeof what, "the object has %u vert%s", count, count == 1 ? "ex" : "ices");
	uint32_t selected = 0;
	bool ok = true;
	if (cJSON_IsObject(pin)) {
		ok = read_selection(L, pin, ppath, m, seen, &selected);
	} else {
		size_t i = 0;
		for (const cJSON* c = pin->child; c && ok; c = c->next, ++i) {
			char p[JR_PATH_MAX];
			jr_path_index(p, ppath, i);
			uint32_t v;
			if (cJSON_IsObject(c)) {
				ok = read_selection(L, c, p, m, seen, &selected);
			} else if (!jr_index_item(r, c, p, count, what, &v)) {
				ok = false;
			} else if (seen[v] == 1) {
				ok = jr_fail(r, p, "vertex %u is listed twice", v);
			} else {
				selected += seen[v] ? 0u : 1u;
				seen[v] = 1;
			}
		}
	}
	uint32_t* idx = ok && selected ? malloc(selected * sizeof *idx) : NULL;
	if (ok && selected && !idx) ok = jr_fail(r, ppath, "out of memory");
	if (ok && idx) {
		uint32_t k = 0;
		for (uint32_t v = 0; v < count; ++v)
			if (seen[v]) idx[k++] = v;
		*out = idx;
		*out_count = selected;
	}
	free(seen);
	return ok;
}

static bool read_pinned(loader* L, const cJSON* obj, const char* path, const pbd_mesh* m, uint32_t** out,
                        uint32_t* out_count) {
	return read_vertex_set(L, obj, path, "pinned", m, out, out_count);
}

/* "attached": {"vertices": as "pinned", "compliance": >= 0 (default 0)}: each vertex held to
 * where it starts by an attachment of rest length 0, a zero-length spring of constant
 * 1 / compliance (seed 004's attachment springs), or a rigid hold at compliance 0. */
static bool read_attached(loader* L, const cJSON* obj, const char* path, const pbd_mesh* m, const pbd_scene_object* o) {
	jr* r = &L->r;
	const cJSON* a = jr_get(obj, "attached");
	if (!a) return true;
	char apath[JR_PATH_MAX];
	jr_path_key(apath, path, "attached");
	static const char* const keys[] = {"vertices", "compliance", NULL};
	pbd_attachment_def d = pbd_attachment_def_default();
	if (!jr_object(r, a, apath, keys) ||
	    !jr_real_p(r, a, apath, "compliance", d.compliance, JR_NONNEG(PBD_SCENE_MAX_MAGNITUDE), &d.compliance))
		return false;
	if (!jr_get(a, "vertices")) return jr_fail(r, apath, "needs \"vertices\"");
	uint32_t *idx = NULL, n = 0;
	if (!read_vertex_set(L, a, apath, "vertices", m, &idx, &n)) return false;
	pbd_attachment_def* defs = n ? malloc(n * sizeof *defs) : NULL;
	bool ok = n == 0 || defs != NULL;
	if (!ok) ok = jr_fail(r, apath, "out of memory");
	const pbd_vec3* x = pbd_world_positions(L->s->world);
	for (uint32_t k = 0; ok && k < n; ++k) {
		defs[k] = d;
		defs[k].particle = o->range.first_particle + idx[k];
		defs[k].target = x[defs[k].particle];
	}
	if (ok && n && pbd_world_add_attachments(L->s->world, n, defs, NULL) != PBD_OK) ok = fail_world(L, apath);
	free(defs);
	free(idx);
	return ok;
}

/* An object's "name"; out keeps what it holds (the default) when there is none. */
static bool read_name(loader* L, const cJSON* obj, const char* path, char out[PBD_SCENE_NAME_MAX]) {
	const char* name;
	if (!jr_string(&L->r, obj, path, "name", NULL, PBD_SCENE_NAME_MAX - 1, &name)) return false;
	if (name) snprintf(out, PBD_SCENE_NAME_MAX, "%s", name);
	return true;
}

/* Line pieces to draw an object that has no triangles: the structural edges of its mesh. */
static bool lines_from_mesh(loader* L, const char* path, const pbd_mesh* m, uint32_t first, pbd_scene_object* o) {
	uint32_t n = 0;
	for (uint32_t e = 0; e < m->edge_count; ++e)
		if (!m->edge_kinds || m->edge_kinds[e] == PBD_EDGE_STRUCTURAL) ++n;
	if (n == 0) return true;
	o->lines = malloc(2 * (size_t)n * sizeof *o->lines);
	if (!o->lines) return jr_fail(&L->r, path, "out of memory");
	uint32_t k = 0;
	for (uint32_t e = 0; e < m->edge_count; ++e) {
		if (m->edge_kinds && m->edge_kinds[e] != PBD_EDGE_STRUCTURAL) continue;
		o->lines[2 * k] = first + m->edges[2 * e];
		o->lines[2 * k + 1] = first + m->edges[2 * e + 1];
		++k;
	}
	o->line_count = n;
	return true;
}

/* The keys every surface object takes: its models (read_models) and its collision filter (create_body). */
#define MODEL_KEYS                                                                                                     \
	"cloth_material", "bending", "membrane", "long_range", "balloon", "collision_mask", "thickness", "self_collision", \
	    "edge_contacts"

static const char* const bend_model_names[] = {"edges", "dihedral", "isometric", "none", NULL};
static const char* const membrane_model_names[] = {"edges", "triangles", NULL};
static const char* const lra_mode_names[] = {"euclidean", "geodesic", NULL};
static const char* const tet_model_names[] = {"none", "volume", "neohookean", NULL};

/* "cloth_material": a preset name, or {"preset", "density", "stretch", "shear", "bending"} with
 * the preset (if any) as the base of the numbers given. */
static bool read_cloth_material(loader* L, const cJSON* obj, const char* path, pbd_soft_def* d,
                                pbd_cloth_material* cloth) {
	jr* r = &L->r;
	const cJSON* c = jr_get(obj, "cloth_material");
	if (!c) return true;
	char p[JR_PATH_MAX];
	jr_path_key(p, path, "cloth_material");
	const char* base = NULL;
	if (cJSON_IsString(c)) {
		base = c->valuestring;
	} else if (cJSON_IsObject(c)) {
		static const char* const keys[] = {"preset", "density", "stretch", "shear", "bending", NULL};
		if (!jr_object(r, c, p, keys) || !jr_string(r, c, p, "preset", NULL, 63, &base)) return false;
	} else {
		return jr_fail(r, p, "expected a preset name or an object {density, stretch, shear, bending}");
	}
	memset(cloth, 0, sizeof *cloth);
	if (base) {
		pbd_error err;
		if (pbd_cloth_material_preset(base, cloth, &err) != PBD_OK) return jr_fail(r, p, "%s", err.message);
	} else if (!jr_get(c, "density") || !jr_get(c, "stretch")) {
		return jr_fail(r, p, "needs a preset, or at least density and stretch");
	}
	if (cJSON_IsObject(c) &&
	    (!jr_real_p(r, c, p, "density", cloth->density, JR_POSITIVE(PBD_SCENE_MAX_MASS), &cloth->density) ||
	     !jr_real_p(r, c, p, "stretch", cloth->stretch, JR_POSITIVE(PBD_SCENE_MAX_MAGNITUDE), &cloth->stretch) ||
	     !jr_real_p(r, c, p, "shear", cloth->shear, JR_NONNEG(PBD_SCENE_MAX_MAGNITUDE), &cloth->shear) ||
	     !jr_real_p(r, c, p, "bending", cloth->bending, JR_NONNEG(PBD_SCENE_MAX_MAGNITUDE), &cloth->bending)))
		return false;
	pbd_error err;
	if (pbd_cloth_material_check(cloth, &err) != PBD_OK) return jr_fail(r, p, "%s", err.message);
	d->cloth = cloth;
	return true;
}

/* A model switch {"model": name, "stiffness", "compliance"}: *model, *stiffness, *compliance keep
 * their defaults for what is not given. */
static bool read_model(loader* L, const cJSON* obj, const char* path, const char* key, const char* const* names,
                       int* model, pbd_real* stiffness, pbd_real* compliance) {
	jr* r = &L->r;
	const cJSON* c = jr_get(obj, key);
	if (!c) return true;
	char p[JR_PATH_MAX];
	jr_path_key(p, path, key);
	static const char* const keys[] = {"model", "stiffness", "compliance", NULL};
	return jr_object(r, c, p, keys) && jr_enum(r, c, p, "model", *model, names, NULL, NULL, model) &&
	       jr_real_p(r, c, p, "stiffness", *stiffness, JR_UNIT, stiffness) &&
	       jr_real_p(r, c, p, "compliance", *compliance, JR_NONNEG(PBD_SCENE_MAX_COMPLIANCE), compliance);
}

/* The constraint models of an object (pbd_soft_def): cloth_material, bending, membrane,
 * long_range, balloon, and for tetrahedral objects tets. */
static bool read_models(loader* L, const cJSON* obj, const char* path, pbd_soft_def* d, pbd_cloth_material* cloth) {
	jr* r = &L->r;
	int bend = (int)d->bend, membrane = (int)d->membrane, tets = (int)d->tets;
	if (!read_cloth_material(L, obj, path, d, cloth) ||
	    !read_model(L, obj, path, "bending", bend_model_names, &bend, &d->bend_stiffness, &d->bend_compliance) ||
	    !read_model(L, obj, path, "membrane", membrane_model_names, &membrane, &d->membrane_stiffness,
	                &d->membrane_compliance))
		return false;
	d->bend = (pbd_bend_model)bend;
	d->membrane = (pbd_membrane_model)membrane;
	char p[JR_PATH_MAX];
	const cJSON* lr = jr_get(obj, "long_range");
	if (lr) {
		jr_path_key(p, path, "long_range");
		int mode = (int)d->long_range_mode;
		static const char* const keys[] = {"mode", "scale", NULL};
		if (cJSON_IsBool(lr)) {
			d->long_range = cJSON_IsTrue(lr);
		} else if (!cJSON_IsObject(lr)) {
			return jr_fail(r, p, "expected true, false or {\"mode\", \"scale\"}");
		} else if (!jr_object(r, lr, p, keys) || !jr_enum(r, lr, p, "mode", mode, lra_mode_names, NULL, NULL, &mode) ||
		           !jr_real_p(r, lr, p, "scale", d->long_range_scale, JR_POSITIVE(PBD_SCENE_MAX_MAGNITUDE),
		                      &d->long_range_scale)) {
			return false;
		} else {
			d->long_range = true;
			d->long_range_mode = (pbd_lra_mode)mode;
		}
	}
	const cJSON* b = jr_get(obj, "balloon");
	if (b) {
		jr_path_key(p, path, "balloon");
		static const char* const keys[] = {"pressure", "stiffness", "compliance", NULL};
		if (!cJSON_IsObject(b)) return jr_fail(r, p, "expected {\"pressure\", \"stiffness\", \"compliance\"}");
		if (!jr_object(r, b, p, keys) ||
		    !jr_real_p(r, b, p, "pressure", d->pressure, JR_POSITIVE(PBD_SCENE_MAX_MAGNITUDE), &d->pressure) ||
		    !jr_real_p(r, b, p, "stiffness", d->volume_stiffness, JR_UNIT, &d->volume_stiffness) ||
		    !jr_real_p(r, b, p, "compliance", d->volume_compliance, JR_NONNEG(PBD_SCENE_MAX_COMPLIANCE),
		               &d->volume_compliance))
			return false;
		d->balloon = true;
	}
	const cJSON* t = jr_get(obj, "tets");
	if (t) {
		jr_path_key(p, path, "tets");
		static const char* const keys[] = {"model", "stiffness", "compliance", "youngs_modulus", "poisson_ratio", NULL};
		if (!jr_object(r, t, p, keys) || !jr_enum(r, t, p, "model", tets, tet_model_names, NULL, NULL, &tets) ||
		    !jr_real_p(r, t, p, "stiffness", d->tet_stiffness, JR_UNIT, &d->tet_stiffness) ||
		    !jr_real_p(r, t, p, "compliance", d->tet_compliance, JR_NONNEG(PBD_SCENE_MAX_COMPLIANCE),
		               &d->tet_compliance) ||
		    !jr_real_p(r, t, p, "youngs_modulus", d->tet_youngs_modulus, JR_POSITIVE(PBD_SCENE_MAX_MAGNITUDE),
		               &d->tet_youngs_modulus) ||
		    !jr_real_p(r, t, p, "poisson_ratio", d->tet_poisson_ratio, (jr_range){-1, 0.5, true, true},
		               &d->tet_poisson_ratio))
			return false;
		d->tets = (pbd_tet_model)tets;
	}
	return true;
}

/* The air keys: "drag" across the object's triangles and "drag_tangent" along them (kg/(m^2 s)),
 * "drag_particle" on each particle of an object without triangles (kg/s), and a "wind" of its own
 * added to the world's. A coefficient of the kind the object does not have is named at its key. */
#define AIR_KEYS "drag", "drag_tangent", "drag_particle", "wind"
/* Every mesh-based object may hold vertices by attachment springs (read_attached) and move pinned
 * ones (read_moving_pins). */
#define ATTACH_KEY "attached", "moving_pins"

static bool read_air(loader* L, const cJSON* obj, const char* path, bool triangles, pbd_real* normal, pbd_real* tangent,
                     pbd_real* particle, pbd_vec3* wind) {
	jr* r = &L->r;
	if (!jr_real_p(r, obj, path, "drag", 0, JR_NONNEG(PBD_SCENE_MAX_MAGNITUDE), normal) ||
	    !jr_real_p(r, obj, path, "drag_tangent", 0, JR_NONNEG(PBD_SCENE_MAX_MAGNITUDE), tangent) ||
	    !jr_real_p(r, obj, path, "drag_particle", 0, JR_NONNEG(PBD_SCENE_MAX_MAGNITUDE), particle) ||
	    !jr_vec3(r, obj, path, "wind", pbd_v3(0, 0, 0), PBD_SCENE_MAX_SPEED, wind))
		return false;
	char p[JR_PATH_MAX];
	if (triangles && *particle > 0) {
		jr_path_key(p, path, "drag_particle");
		return jr_fail(r, p, "is for objects without triangles (give \"drag\" and \"drag_tangent\")");
	}
	if (!triangles && (*normal > 0 || *tangent > 0)) {
		jr_path_key(p, path, *normal > 0 ? "drag" : "drag_tangent");
		return jr_fail(r, p, "acts on triangles and this object has none (give \"drag_particle\")");
	}
	return true;
}

static bool read_moving_pins(loader* L, const cJSON* obj, const char* path, const pbd_mesh* mesh,
                             const pbd_scene_object* o);

/* Mass, pinned, material, translation and velocity: the fields every mesh-based object shares.
 * Then the body is created. `mesh` belongs to the caller. */
static bool create_body(loader* L, const cJSON* obj, const char* path, const pbd_mesh* mesh, pbd_scene_object* o) {
	jr* r = &L->r;
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = mesh;
	if (mesh->tet_count) bd.tets = PBD_TET_NEOHOOKEAN; /* a tetrahedral object is a solid unless told otherwise */
	pbd_cloth_material cloth;
	uint32_t* pinned = NULL;
	if (!read_models(L, obj, path, &bd, &cloth) || !read_air(L, obj, path, mesh->triangle_count > 0, &bd.drag_normal,
	                                                         &bd.drag_tangent, &bd.drag_particle, &bd.wind))
		return false;
	/* A cloth material brings its density: the mass rule unless "mass" says otherwise. */
	if (bd.cloth && !jr_get(obj, "mass")) {
		bd.mass_mode = PBD_MASS_DENSITY;
		bd.mass = cloth.density;
	}
	if (!read_mass(L, obj, path, &bd) || !read_material(L, obj, path, bd.material) ||
	    !jr_vec3(r, obj, path, "translation", bd.translation, PBD_SCENE_MAX_LENGTH, &bd.translation) ||
	    !jr_vec3(r, obj, path, "velocity", bd.velocity, PBD_SCENE_MAX_SPEED, &bd.velocity) ||
	    !read_pinned(L, obj, path, mesh, &pinned, &bd.pinned_count))
		return false;
	int64_t mask;
	if (!jr_int(r, obj, path, "collision_mask", bd.collision_mask, 0, UINT32_MAX, &mask)) {
		free(pinned);
		return false;
	}
	bd.collision_mask = (uint32_t)mask;
	if (!jr_real_p(r, obj, path, "thickness", bd.thickness, JR_NONNEG(PBD_SCENE_MAX_LENGTH), &bd.thickness) ||
	    !jr_bool(r, obj, path, "self_collision", bd.self_collision, &bd.self_collision) ||
	    !jr_bool(r, obj, path, "edge_contacts", bd.edge_contacts, &bd.edge_contacts)) {
		free(pinned);
		return false;
	}
	if (bd.self_collision && !(bd.thickness > 0)) {
		free(pinned);
		char p[JR_PATH_MAX];
		jr_path_key(p, path, "self_collision");
		return jr_fail(r, p, "needs a \"thickness\" > 0");
	}
	bd.pinned = pinned;
	uint32_t edges = mesh->edge_count;
	bool ok = reserve(L, path, mesh->vertex_count, edges);
	if (ok && (pbd_soft_create(L->s->world, &bd, &o->id) != PBD_OK ||
	           pbd_soft_get_info(L->s->world, o->id, &o->range) != PBD_OK))
		ok = fail_world(L, path);
	free(pinned);
	o->grid_nx = mesh->grid_nx;
	o->grid_ny = mesh->grid_ny;
	ok = ok && read_attached(L, obj, path, mesh, o) && read_moving_pins(L, obj, path, mesh, o);
	if (ok && o->range.triangle_count == 0) ok = lines_from_mesh(L, path, mesh, o->range.first_particle, o);
	return ok;
}

/* ---- object types ------------------------------------------------------------------------ */

static bool read_particles(loader* L, const cJSON* obj, const char* path, pbd_scene_object* o) {
	jr* r = &L->r;
	static const char* const keys[] = {"type",        "name",     "particles",     "constraints", "pinned", "material",
	                                   "translation", "velocity", "drag_particle", "wind",        NULL};
	if (!jr_object(r, obj, path, keys) || !read_name(L, obj, path, o->name)) return false;
	const cJSON* parr;
	size_t np;
	if (!jr_array(r, obj, path, "particles", &parr, &np)) return false;
	char ppath[JR_PATH_MAX];
	jr_path_key(ppath, path, "particles");
	if (np == 0) return jr_fail(r, ppath, parr ? "must hold at least one particle" : "missing (a list of particles)");
	if (!reserve(L, ppath, np, 0)) return false;

	pbd_vec3 translation, velocity;
	pbd_edge_material soft = pbd_soft_def_default().material[PBD_EDGE_STRUCTURAL];
	pbd_real drag_normal, drag_tangent, drag;
	pbd_vec3 wind;
	if (!jr_vec3(r, obj, path, "translation", pbd_v3(0, 0, 0), PBD_SCENE_MAX_LENGTH, &translation) ||
	    !jr_vec3(r, obj, path, "velocity", pbd_v3(0, 0, 0), PBD_SCENE_MAX_SPEED, &velocity) ||
	    !read_air(L, obj, path, false, &drag_normal, &drag_tangent, &drag, &wind))
		return false;
	const cJSON* mat = jr_get(obj, "material");
	if (mat) {
		char mpath[JR_PATH_MAX];
		jr_path_key(mpath, path, "material");
		static const char* const mkeys[] = {"stiffness",  "stiffness_stretch",  "stiffness_compress",
		                                    "compliance", "compliance_stretch", "compliance_compress",
		                                    NULL};
		if (!jr_object(r, mat, mpath, mkeys) || !read_softness(L, mat, mpath, &soft)) return false;
	}

	const cJSON* carr;
	size_t nc;
	if (!jr_array(r, obj, path, "constraints", &carr, &nc)) return false;
	char cpath[JR_PATH_MAX];
	jr_path_key(cpath, path, "constraints");
	if (!reserve(L, cpath, 0, nc)) return false;

	pbd_vec3* x = malloc(np * sizeof *x);
	pbd_vec3* v = malloc(np * sizeof *v);
	pbd_real* w = malloc(np * sizeof *w);
	pbd_distance_def* dd = nc ? malloc(nc * sizeof *dd) : NULL;
	uint32_t* pinned = NULL;
	uint32_t pinned_count = 0;
	bool ok = x && v && w && (nc == 0 || dd);
	if (!ok) jr_fail(r, path, "out of memory");

	static const char* const pkeys[] = {"x", "v", "mass", "inv_mass", NULL};
	size_t i = 0;
	for (const cJSON* c = parr ? parr->child : NULL; ok && c; c = c->next, ++i) {
		char p[JR_PATH_MAX];
		jr_path_index(p, ppath, i);
		double mass, inv_mass;
		ok = jr_object(r, c, p, pkeys);
		if (ok && !jr_get(c, "x")) ok = jr_fail(r, p, "missing \"x\" (the position)");
		if (ok && jr_get(c, "mass") && jr_get(c, "inv_mass"))
			ok = jr_fail(r, p, "give either mass or inv_mass, not both");
		ok = ok && jr_vec3(r, c, p, "x", pbd_v3(0, 0, 0), PBD_SCENE_MAX_LENGTH, &x[i]) &&
		     jr_vec3(r, c, p, "v", pbd_v3(0, 0, 0), PBD_SCENE_MAX_SPEED, &v[i]) &&
		     jr_real(r, c, p, "mass", 1.0, mass_range, &mass) &&
		     jr_real(r, c, p, "inv_mass", 1.0 / mass, JR_NONNEG(PBD_SCENE_MAX_MASS), &inv_mass) &&
		     (!jr_get(c, "inv_mass") || inv_mass_ok(L, p, inv_mass));
		if (!ok) break;
		x[i] = pbd_v3_add(x[i], translation);
		v[i] = pbd_v3_add(v[i], velocity);
		w[i] = (pbd_real)inv_mass; /* in {0} and [1e-9, 1e9]: exact enough in either precision */
	}
	if (ok) {
		/* Selections see the particles as given, translation included. */
		pbd_mesh pm;
		memset(&pm, 0, sizeof pm);
		pm.vertex_count = (uint32_t)np;
		pm.positions = x;
		ok = read_pinned(L, obj, path, &pm, &pinned, &pinned_count);
	}
	for (uint32_t k = 0; ok && k < pinned_count; ++k) w[pinned[k]] = 0;

	static const char* const ckeys[] = {"type",
	                                    "a",
	                                    "b",
	                                    "rest",
	                                    "stiffness",
	                                    "stiffness_stretch",
	                                    "stiffness_compress",
	                                    "compliance",
	                                    "compliance_stretch",
	                                    "compliance_compress",
	                                    NULL};
	static const char* const ctypes[] = {"distance", NULL};
	char what[64];
	snprintf(what, sizeof what, "the object has %zu particle%s", np, np == 1 ? "" : "s");
	i = 0;
	for (const cJSON* c = carr ? carr->child : NULL; ok && c; c = c->next, ++i) {
		char p[JR_PATH_MAX];
		jr_path_index(p, cpath, i);
		int type;
		uint32_t a, b;
		pbd_real rest = -1; /* omitted: the library measures the current distance */
		pbd_edge_material m = soft;
		char qa[JR_PATH_MAX], qb[JR_PATH_MAX];
		jr_path_key(qa, p, "a");
		jr_path_key(qb, p, "b");
		ok = jr_object(r, c, p, ckeys) && jr_enum(r, c, p, "type", 0, ctypes, NULL, NULL, &type);
		if (ok && (!jr_get(c, "a") || !jr_get(c, "b")))
			ok = jr_fail(r, p, "missing \"a\" or \"b\" (the particle indices)");
		ok = ok && jr_index_item(r, jr_get(c, "a"), qa, (uint32_t)np, what, &a) &&
		     jr_index_item(r, jr_get(c, "b"), qb, (uint32_t)np, what, &b) &&
		     jr_real_p(r, c, p, "rest", rest, JR_NONNEG(PBD_SCENE_MAX_LENGTH), &rest) && read_softness(L, c, p, &m);
		if (!ok) break;
		if (a == b) {
			ok = jr_fail(r, qb, "joins particle %u to itself", a);
			break;
		}
		/* The library measures an omitted rest length in pbd_real; the coordinate caps keep it
		 * finite, and this names the constraint should one ever not be. */
		if (rest < 0 && !isfinite((double)pbd_v3_length(pbd_v3_sub(x[a], x[b])))) {
			char q[JR_PATH_MAX];
			jr_path_key(q, p, "rest");
			ok = jr_fail(r, q, "omitted, and the distance of particles %u and %u overflows the %s scalar type", a, b,
			             JR_REAL_NAME);
			break;
		}
		pbd_distance_def* d = &dd[i];
		*d = pbd_distance_def_default();
		d->a = a;
		d->b = b;
		d->rest = rest;
		d->stiffness_stretch = m.stiffness_stretch;
		d->stiffness_compress = m.stiffness_compress;
		d->compliance_stretch = m.compliance_stretch;
		d->compliance_compress = m.compliance_compress;
	}

	pbd_world* world = L->s->world;
	if (ok) {
		if (pbd_world_add_particles(world, (uint32_t)np, x, v, w, &o->range.first_particle) != PBD_OK)
			ok = fail_world(L, ppath);
		o->range.particle_count = (uint32_t)np;
		if (ok && drag > 0 &&
		    pbd_particles_set_drag(world, o->range.first_particle, (uint32_t)np, drag, wind) != PBD_OK)
			ok = fail_world(L, path);
	}
	if (ok) {
		o->range.first_distance = pbd_world_distance_count(world);
		for (size_t k = 0; k < nc; ++k) {
			dd[k].a += o->range.first_particle;
			dd[k].b += o->range.first_particle;
		}
		if (nc && pbd_world_add_distances(world, (uint32_t)nc, dd, &o->range.first_distance) != PBD_OK)
			ok = fail_world(L, cpath);
		o->range.distance_count = (uint32_t)nc;
		o->range.first_triangle = pbd_world_triangle_count(world);
	}
	if (ok && nc) {
		o->lines = malloc(2 * nc * sizeof *o->lines);
		if (!o->lines) {
			ok = jr_fail(r, path, "out of memory");
		} else {
			for (size_t k = 0; k < nc; ++k) {
				o->lines[2 * k] = dd[k].a;
				o->lines[2 * k + 1] = dd[k].b;
			}
			o->line_count = (uint32_t)nc;
		}
	}
	free(x);
	free(v);
	free(w);
	free(dd);
	free(pinned);
	return ok;
}

/* The same test the grid builder applies, made here to name the field. */
static bool axes_ok(loader* L, const char* path, pbd_vec3 u, pbd_vec3 v) {
	char p[JR_PATH_MAX];
	if (!direction_finite(L, path, "axis_u", u) || !direction_finite(L, path, "axis_v", v)) return false;
	double lu = sqrt((double)pbd_v3_dot(u, u)), lv = sqrt((double)pbd_v3_dot(v, v));
	if (!(lu > 0)) {
		jr_path_key(p, path, "axis_u");
		return jr_fail(&L->r, p, "must not be zero");
	}
	if (!(lv > 0)) {
		jr_path_key(p, path, "axis_v");
		return jr_fail(&L->r, p, "must not be zero");
	}
	double cx = (double)u.y * v.z - (double)u.z * v.y, cy = (double)u.z * v.x - (double)u.x * v.z,
	       cz = (double)u.x * v.y - (double)u.y * v.x;
	if (sqrt(cx * cx + cy * cy + cz * cz) / (lu * lv) < 1e-4) {
		jr_path_key(p, path, "axis_v");
		return jr_fail(&L->r, p, "must not be parallel to axis_u");
	}
	return true;
}

static bool read_grid_cloth(loader* L, const cJSON* obj, const char* path, pbd_scene_object* o) {
	jr* r = &L->r;
	static const char* const keys[] = {
	    "type", "name",   "nx",       "ny",          "size",     "origin",   "axis_u", "axis_v",   "diagonals", "bend",
	    "mass", "pinned", "material", "translation", "velocity", MODEL_KEYS, AIR_KEYS, ATTACH_KEY, NULL};
	if (!jr_object(r, obj, path, keys) || !read_name(L, obj, path, o->name)) return false;
	pbd_grid_def g = pbd_grid_def_default();
	int64_t nx, ny, diagonals;
	if (!jr_int(r, obj, path, "nx", g.nx, 2, PBD_SCENE_MAX_PARTICLES, &nx) ||
	    !jr_int(r, obj, path, "ny", g.ny, 2, PBD_SCENE_MAX_PARTICLES, &ny) ||
	    !jr_vec3(r, obj, path, "origin", g.origin, PBD_SCENE_MAX_LENGTH, &g.origin) ||
	    !jr_vec3(r, obj, path, "axis_u", g.axis_u, PBD_SCENE_MAX_DIRECTION, &g.axis_u) ||
	    !jr_vec3(r, obj, path, "axis_v", g.axis_v, PBD_SCENE_MAX_DIRECTION, &g.axis_v) ||
	    !jr_int(r, obj, path, "diagonals", g.diagonals, 0, 2, &diagonals) ||
	    !jr_bool(r, obj, path, "bend", g.bend, &g.bend) || !axes_ok(L, path, g.axis_u, g.axis_v))
		return false;
	const cJSON* size = jr_get(obj, "size");
	if (size) {
		char sp[JR_PATH_MAX];
		jr_path_key(sp, path, "size");
		if (!cJSON_IsArray(size) || cJSON_GetArraySize(size) != 2)
			return jr_fail(r, sp, "expected an array of 2 numbers [u, v] (got %s)",
			               cJSON_IsArray(size) ? "an array of another length" : jr_type_name(size));
		pbd_real* uv[2] = {&g.size_u, &g.size_v};
		const cJSON* item = size->child;
		for (size_t k = 0; k < 2; ++k, item = item->next) {
			char p[JR_PATH_MAX];
			double d;
			jr_path_index(p, sp, k);
			const jr_range range = JR_POSITIVE(PBD_SCENE_MAX_LENGTH);
			if (!jr_number_item(r, item, p, range, &d) || !jr_to_real(r, p, d, range, uv[k])) return false;
		}
	}
	uint64_t n = (uint64_t)nx * (uint64_t)ny;
	if (n > PBD_SCENE_MAX_PARTICLES)
		return jr_fail(r, path, "nx * ny = %llu particles exceeds the limit of %u", (unsigned long long)n,
		               PBD_SCENE_MAX_PARTICLES);
	g.nx = (uint32_t)nx;
	g.ny = (uint32_t)ny;
	g.diagonals = (int)diagonals;
	/* Edge count before building, so an absurd grid is refused before it is allocated. */
	uint64_t ne = (uint64_t)(nx - 1) * (uint64_t)ny + (uint64_t)nx * (uint64_t)(ny - 1) +
	              (uint64_t)diagonals * (uint64_t)(nx - 1) * (uint64_t)(ny - 1);
	if (g.bend) ne += (uint64_t)(nx - 2) * (uint64_t)ny + (uint64_t)nx * (uint64_t)(ny - 2);
	if (!check_caps(L, path, n, ne)) return false;

	pbd_mesh mesh;
	pbd_error err;
	if (pbd_mesh_grid(&g, &mesh, &err) != PBD_OK) return jr_fail(r, path, "%s", err.message);
	bool ok = create_body(L, obj, path, &mesh, o);
	pbd_mesh_free(&mesh);
	return ok;
}

/* Joins the scene's folder and a relative path. */
static bool resolve_path(loader* L, const char* path, const char* file, char* out, size_t out_size) {
	int n = (file[0] == '/' || !L->base_dir || !L->base_dir[0]) ? snprintf(out, out_size, "%s", file)
	                                                            : snprintf(out, out_size, "%s/%s", L->base_dir, file);
	if (n < 0 || (size_t)n >= out_size) return jr_fail(&L->r, path, "path too long");
	return true;
}

/* The embedded data file a built-in scene's relative `file` names, or NULL (then the file is
 * read from disk). */
static const scene_data_file* embedded_data(const loader* L, const char* file) {
	return L->builtin && file[0] != '/' ? scene_data_find(file) : NULL;
}

#define SCENE_FILE_NAME_MAX 4200 /* a resolved file name: a folder and a 4096-byte string */

/* An OBJ file named at field `fpath`: for a built-in scene the embedded data file of that name if
 * there is one, else the file (relative to the scene's folder). Its coordinates are held to the
 * cap of the scene's own. */
static bool load_obj(loader* L, const char* fpath, const char* file, bool bend, pbd_mesh* mesh,
                     pbd_obj_groups* groups) {
	jr* r = &L->r;
	if (!file[0]) return jr_fail(r, fpath, "must not be empty");
	char full[SCENE_FILE_NAME_MAX];
	pbd_error err;
	pbd_status st;
	const scene_data_file* emb = embedded_data(L, file);
	if (emb) {
		snprintf(full, sizeof full, "builtin:%s", emb->name);
		st = pbd_mesh_load_obj_memory_groups((const char*)emb->bytes, emb->size, full, bend, mesh, groups, &err);
	} else {
		if (!resolve_path(L, fpath, file, full, sizeof full)) return false;
		st = pbd_mesh_load_obj_groups(full, bend, mesh, groups, &err);
	}
	if (st != PBD_OK) return jr_fail(r, fpath, "%s", err.message);
	/* The file's numbers never passed the scene's caps: hold them to the one of coordinates. */
	for (uint32_t i = 0; i < mesh->vertex_count; ++i) {
		const pbd_vec3 x = mesh->positions[i];
		const double c[3] = {(double)x.x, (double)x.y, (double)x.z};
		for (int k = 0; k < 3; ++k) {
			if (fabs(c[k]) <= PBD_SCENE_MAX_LENGTH) continue;
			char got[JR_NUMBER_MAX], max[JR_NUMBER_MAX];
			jr_format_number(got, sizeof got, c[k]);
			jr_format_number(max, sizeof max, PBD_SCENE_MAX_LENGTH);
			pbd_mesh_free(mesh);
			pbd_obj_groups_free(groups);
			return jr_fail(r, fpath, "%s: vertex %u: coordinate %c is %s, beyond the scene cap of +-%s", full, i + 1,
			               "xyz"[k], got, max);
		}
	}
	return true;
}

/* An array of at least `min` points [x, y, z] at `key`, each within the coordinate cap; *out is
 * malloc'd. `what` names them in the message about too few ("vertices", "points"). */
static bool read_points(loader* L, const cJSON* arr, const char* apath, size_t min, const char* what, pbd_vec3** out,
                        uint32_t* count) {
	jr* r = &L->r;
	*out = NULL;
	*count = 0;
	size_t n = 0;
	for (const cJSON* c = arr->child; c; c = c->next) ++n;
	if (n < min) return jr_fail(r, apath, "needs at least %zu %s (got %zu)", min, what, n);
	if (n > UINT32_MAX / 4) return jr_fail(r, apath, "too many %s (%zu)", what, n);
	pbd_vec3* pos = malloc(n * sizeof *pos);
	if (!pos) return jr_fail(r, apath, "out of memory");
	size_t i = 0;
	for (const cJSON* c = arr->child; c; c = c->next, ++i) {
		char p[JR_PATH_MAX];
		jr_path_index(p, apath, i);
		if (!jr_vec3_item(r, c, p, PBD_SCENE_MAX_LENGTH, &pos[i])) {
			free(pos);
			return false;
		}
	}
	*out = pos;
	*count = (uint32_t)n;
	return true;
}

/* An array of at least one triangle [a, b, c] at `tpath`: indices below `nv`, no corner repeated;
 * *out is malloc'd, 3 per triangle. */
static bool read_triangles(loader* L, const cJSON* arr, const char* tpath, uint32_t nv, uint32_t** out,
                           uint32_t* count) {
	jr* r = &L->r;
	*out = NULL;
	*count = 0;
	size_t nt = 0;
	for (const cJSON* c = arr->child; c; c = c->next) ++nt;
	if (nt < 1) return jr_fail(r, tpath, "needs at least 1 triangle");
	if (nt > PBD_SCENE_MAX_CONSTRAINTS) return jr_fail(r, tpath, "too many triangles (%zu)", nt);
	uint32_t* tri = malloc(3 * nt * sizeof *tri);
	if (!tri) return jr_fail(r, tpath, "out of memory");
	char what[64];
	snprintf(what, sizeof what, "the mesh has %u vertices", nv);
	size_t i = 0;
	bool ok = true;
	for (const cJSON* c = arr->child; ok && c; c = c->next, ++i) {
		char p[JR_PATH_MAX];
		jr_path_index(p, tpath, i);
		if (!cJSON_IsArray(c) || cJSON_GetArraySize(c) != 3) {
			ok = jr_fail(r, p, "expected an array of 3 vertex indices (got %s)",
			             cJSON_IsArray(c) ? "an array of another length" : jr_type_name(c));
			break;
		}
		int k = 0;
		for (const cJSON* e = c->child; ok && e; e = e->next, ++k) {
			char q[JR_PATH_MAX];
			jr_path_index(q, p, (size_t)k);
			ok = jr_index_item(r, e, q, nv, what, &tri[3 * i + (size_t)k]);
		}
		const uint32_t* t = &tri[3 * i];
		if (ok && (t[0] == t[1] || t[1] == t[2] || t[0] == t[2])) ok = jr_fail(r, p, "repeats a vertex");
	}
	if (!ok) {
		free(tri);
		return false;
	}
	*out = tri;
	*count = (uint32_t)nt;
	return true;
}

/* Inline "vertices": [[x,y,z],...] and "triangles": [[a,b,c],...]. */
static bool read_inline_mesh(loader* L, const cJSON* obj, const char* path, bool bend, pbd_mesh* mesh) {
	jr* r = &L->r;
	const cJSON *varr, *tarr;
	size_t nv, nt;
	if (!jr_array(r, obj, path, "vertices", &varr, &nv) || !jr_array(r, obj, path, "triangles", &tarr, &nt))
		return false;
	char vpath[JR_PATH_MAX], tpath[JR_PATH_MAX];
	jr_path_key(vpath, path, "vertices");
	jr_path_key(tpath, path, "triangles");
	if (!varr || !tarr) return jr_fail(r, path, "needs \"obj\", or both \"vertices\" and \"triangles\"");
	if (nv < 3) return jr_fail(r, vpath, "needs at least 3 vertices (got %zu)", nv);
	if (nt < 1) return jr_fail(r, tpath, "needs at least 1 triangle");
	if (!check_caps(L, vpath, nv, 0)) return false;
	pbd_vec3* pos;
	uint32_t* tri = NULL;
	uint32_t nvu, ntu;
	bool ok = read_points(L, varr, vpath, 3, "vertices", &pos, &nvu) && read_triangles(L, tarr, tpath, nvu, &tri, &ntu);
	if (ok) {
		pbd_error err;
		/* Zero-area triangles are left to the library, whose tolerance is the one that matters. */
		if (pbd_mesh_from_triangles(nvu, pos, ntu, tri, bend, mesh, &err) != PBD_OK)
			ok = jr_fail(r, tpath, "%s", err.message);
	}
	free(pos);
	free(tri);
	return ok;
}

static bool read_mesh_cloth(loader* L, const cJSON* obj, const char* path, pbd_scene_object* o) {
	jr* r = &L->r;
	static const char* const keys[] = {"type",     "name",     "obj",    "vertices", "triangles",
	                                   "bend",     "mass",     "pinned", "material", "translation",
	                                   "velocity", MODEL_KEYS, AIR_KEYS, ATTACH_KEY, NULL};
	if (!jr_object(r, obj, path, keys) || !read_name(L, obj, path, o->name)) return false;
	bool bend;
	const char* file;
	if (!jr_bool(r, obj, path, "bend", false, &bend) || !jr_string(r, obj, path, "obj", NULL, 4096, &file))
		return false;
	pbd_mesh mesh;
	memset(&mesh, 0, sizeof mesh);
	pbd_obj_groups groups;
	memset(&groups, 0, sizeof groups);
	if (file) {
		char opath[JR_PATH_MAX];
		jr_path_key(opath, path, "obj");
		if (jr_get(obj, "vertices") || jr_get(obj, "triangles"))
			return jr_fail(r, opath, "give either obj or vertices/triangles, not both");
		if (!load_obj(L, opath, file, bend, &mesh, &groups)) return false;
		L->groups = &groups;
	} else if (!read_inline_mesh(L, obj, path, bend, &mesh)) {
		return false;
	}
	bool ok = create_body(L, obj, path, &mesh, o);
	L->groups = NULL;
	pbd_obj_groups_free(&groups);
	pbd_mesh_free(&mesh);
	return ok;
}

static bool read_rope(loader* L, const cJSON* obj, const char* path, pbd_scene_object* o) {
	jr* r = &L->r;
	static const char* const keys[] = {
	    "type",           "name",      "start",          "end",         "segments", "bend",
	    "mass",           "pinned",    "material",       "translation", "velocity", "long_range",
	    "collision_mask", "thickness", "self_collision", AIR_KEYS,      ATTACH_KEY, NULL};
	if (!jr_object(r, obj, path, keys) || !read_name(L, obj, path, o->name)) return false;
	pbd_rope_def d = pbd_rope_def_default();
	int64_t segments;
	if (!jr_vec3(r, obj, path, "start", d.start, PBD_SCENE_MAX_LENGTH, &d.start) ||
	    !jr_vec3(r, obj, path, "end", d.end, PBD_SCENE_MAX_LENGTH, &d.end) ||
	    !jr_int(r, obj, path, "segments", d.segments, 1, PBD_SCENE_MAX_PARTICLES - 1, &segments) ||
	    !jr_bool(r, obj, path, "bend", d.bend, &d.bend))
		return false;
	d.segments = (uint32_t)segments;
	if (d.start.x == d.end.x && d.start.y == d.end.y && d.start.z == d.end.z) {
		char p[JR_PATH_MAX];
		jr_path_key(p, path, "end");
		return jr_fail(r, p, "must differ from start");
	}
	if (!check_caps(L, path, (uint64_t)segments + 1, (uint64_t)segments * (d.bend ? 2 : 1))) return false;
	pbd_mesh mesh;
	pbd_error err;
	if (pbd_mesh_rope(&d, &mesh, &err) != PBD_OK) return jr_fail(r, path, "%s", err.message);
	bool ok = create_body(L, obj, path, &mesh, o);
	pbd_mesh_free(&mesh);
	return ok;
}

/* A tetrahedral mesh from its builder or file, then a soft object like any other: its surface
 * triangles are what output and rendering see. */
static bool tet_object(loader* L, const cJSON* obj, const char* path, pbd_mesh* mesh, pbd_scene_object* o) {
	bool ok = check_caps(L, path, mesh->vertex_count, mesh->edge_count);
	ok = ok && create_body(L, obj, path, mesh, o);
	pbd_mesh_free(mesh);
	return ok;
}

#define TET_KEYS                                                                                                       \
	"mass", "pinned", "material", "translation", "velocity", "tets", "balloon", "long_range", "collision_mask",        \
	    "thickness", "self_collision", "edge_contacts", AIR_KEYS, ATTACH_KEY

static bool read_tet_box(loader* L, const cJSON* obj, const char* path, pbd_scene_object* o) {
	jr* r = &L->r;
	static const char* const keys[] = {"type", "name", "cells", "size", "origin", "tets_per_cell", TET_KEYS, NULL};
	if (!jr_object(r, obj, path, keys) || !read_name(L, obj, path, o->name)) return false;
	pbd_tet_box_def d = pbd_tet_box_def_default();
	int64_t per_cell;
	if (!jr_vec3(r, obj, path, "size", d.size, PBD_SCENE_MAX_LENGTH, &d.size) ||
	    !jr_vec3(r, obj, path, "origin", d.origin, PBD_SCENE_MAX_LENGTH, &d.origin) ||
	    !jr_int(r, obj, path, "tets_per_cell", d.tets_per_cell, 5, 6, &per_cell))
		return false;
	d.tets_per_cell = (int)per_cell;
	const cJSON* cells = jr_get(obj, "cells");
	if (cells) {
		char p[JR_PATH_MAX];
		jr_path_key(p, path, "cells");
		if (!cJSON_IsArray(cells) || cJSON_GetArraySize(cells) != 3)
			return jr_fail(r, p, "expected an array of 3 cell counts [nx, ny, nz]");
		int64_t c[3];
		size_t i = 0;
		for (const cJSON* e = cells->child; e; e = e->next, ++i) {
			char q[JR_PATH_MAX];
			jr_path_index(q, p, i);
			if (!jr_int_item(r, e, q, 1, 1000, &c[i])) return false;
		}
		if ((c[0] + 1) * (c[1] + 1) * (c[2] + 1) > (int64_t)PBD_SCENE_MAX_PARTICLES)
			return jr_fail(r, p, "too many cells");
		d.nx = (uint32_t)c[0];
		d.ny = (uint32_t)c[1];
		d.nz = (uint32_t)c[2];
	}
	pbd_mesh mesh;
	pbd_error err;
	if (pbd_mesh_tet_box(&d, &mesh, &err) != PBD_OK) return jr_fail(r, path, "%s", err.message);
	return tet_object(L, obj, path, &mesh, o);
}

static bool read_tet_sphere(loader* L, const cJSON* obj, const char* path, pbd_scene_object* o) {
	jr* r = &L->r;
	static const char* const keys[] = {"type", "name", "center", "radius", "subdivisions", TET_KEYS, NULL};
	if (!jr_object(r, obj, path, keys) || !read_name(L, obj, path, o->name)) return false;
	pbd_tet_sphere_def d = pbd_tet_sphere_def_default();
	int64_t sub;
	if (!jr_vec3(r, obj, path, "center", d.center, PBD_SCENE_MAX_LENGTH, &d.center) ||
	    !jr_real_p(r, obj, path, "radius", d.radius, JR_POSITIVE(PBD_SCENE_MAX_LENGTH), &d.radius) ||
	    !jr_int(r, obj, path, "subdivisions", d.subdivisions, 1, 64, &sub))
		return false;
	d.subdivisions = (uint32_t)sub;
	pbd_mesh mesh;
	pbd_error err;
	if (pbd_mesh_tet_sphere(&d, &mesh, &err) != PBD_OK) return jr_fail(r, path, "%s", err.message);
	return tet_object(L, obj, path, &mesh, o);
}

/* "node" and "ele": TetGen files, relative to the scene's folder. */
static bool read_tetgen(loader* L, const cJSON* obj, const char* path, pbd_scene_object* o) {
	jr* r = &L->r;
	static const char* const keys[] = {"type", "name", "node", "ele", TET_KEYS, NULL};
	if (!jr_object(r, obj, path, keys) || !read_name(L, obj, path, o->name)) return false;
	const char *node = NULL, *ele = NULL;
	if (!jr_string(r, obj, path, "node", NULL, 4096, &node) || !jr_string(r, obj, path, "ele", NULL, 4096, &ele))
		return false;
	if (!node || !ele || !node[0] || !ele[0]) return jr_fail(r, path, "needs \"node\" and \"ele\" file names");
	char npath[JR_PATH_MAX], node_full[4200], ele_full[4200];
	jr_path_key(npath, path, "node");
	if (!resolve_path(L, npath, node, node_full, sizeof node_full) ||
	    !resolve_path(L, npath, ele, ele_full, sizeof ele_full))
		return false;
	pbd_mesh mesh;
	pbd_error err;
	if (pbd_mesh_load_tetgen(node_full, ele_full, &mesh, &err) != PBD_OK) return jr_fail(r, npath, "%s", err.message);
	return tet_object(L, obj, path, &mesh, o);
}

static const char* const object_types[] = {"particles", "grid_cloth", "mesh_cloth", "rope",
                                           "tet_box",   "tet_sphere", "tetgen",     NULL};

/* An integer field for the size estimate: its value when it is a sane integer, else `def`
 * (a wrong value is reported by the full read). */
static uint64_t size_field(const cJSON* obj, const char* key, uint64_t def, uint64_t lo) {
	const cJSON* v = jr_get(obj, key);
	if (!v) return def;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != floor(v->valuedouble) ||
	    v->valuedouble < (double)lo || v->valuedouble > (double)PBD_SCENE_MAX_PARTICLES)
		return 0;
	return (uint64_t)v->valuedouble;
}

static uint64_t array_length(const cJSON* obj, const char* key) {
	const cJSON* a = jr_get(obj, key);
	uint64_t n = 0;
	if (cJSON_IsArray(a))
		for (const cJSON* c = a->child; c; c = c->next) ++n;
	return n;
}

/* What an object will add to the world, from its size fields alone, so that a scene whose
 * objects together pass the caps is refused before the first of them is allocated. Meshes
 * read from OBJ files count when they are loaded. */
static void estimate_size(const cJSON* obj, uint64_t* particles, uint64_t* constraints) {
	*particles = *constraints = 0;
	const cJSON* t = jr_get(obj, "type");
	if (!cJSON_IsString(t) || !t->valuestring) return;
	const char* type = t->valuestring;
	const cJSON* bend_item = jr_get(obj, "bend");
	const bool bend = cJSON_IsTrue(bend_item);
	if (strcmp(type, "grid_cloth") == 0) {
		pbd_grid_def g = pbd_grid_def_default();
		uint64_t nx = size_field(obj, "nx", g.nx, 2), ny = size_field(obj, "ny", g.ny, 2);
		uint64_t diagonals = size_field(obj, "diagonals", (uint64_t)g.diagonals, 0);
		if (nx < 2 || ny < 2 || diagonals > 2) return;
		*particles = nx * ny;
		*constraints = (nx - 1) * ny + nx * (ny - 1) + diagonals * (nx - 1) * (ny - 1);
		if (bend) *constraints += (nx - 2) * ny + nx * (ny - 2);
	} else if (strcmp(type, "rope") == 0) {
		uint64_t segments = size_field(obj, "segments", pbd_rope_def_default().segments, 1);
		if (segments == 0) return;
		*particles = segments + 1;
		*constraints = segments * (bend ? 2 : 1);
	} else if (strcmp(type, "particles") == 0) {
		*particles = array_length(obj, "particles");
		*constraints = array_length(obj, "constraints");
	} else if (strcmp(type, "mesh_cloth") == 0) {
		*particles = array_length(obj, "vertices");
	}
}

/* Where object i of the composed scene was written: its path in *path, and the file, which the
 * caller puts in r.source while it reads the object (an included file's object is reported in
 * that file's terms). */
static const scene_origin* object_place(const loader* L, size_t i, char path[JR_PATH_MAX]) {
	const scene_origin* org = i < L->compose->object_count ? &L->compose->objects[i] : NULL;
	if (org)
		snprintf(path, JR_PATH_MAX, "%s", org->path);
	else
		jr_path_index(path, "objects", i);
	return org;
}

static bool check_total_size(loader* L, const cJSON* objects) {
	uint64_t particles = 0, constraints = 0;
	size_t i = 0;
	for (const cJSON* o = objects ? objects->child : NULL; o; o = o->next, ++i) {
		uint64_t p, c;
		estimate_size(o, &p, &c);
		particles += p;
		constraints += c;
		char path[JR_PATH_MAX];
		const scene_origin* org = object_place(L, i, path);
		const char* source = L->r.source;
		if (org) L->r.source = org->source;
		bool ok = true;
		if (particles > PBD_SCENE_MAX_PARTICLES)
			ok = jr_fail(&L->r, path, "too many particles (%llu in the scene up to this object, the limit is %u)",
			             (unsigned long long)particles, PBD_SCENE_MAX_PARTICLES);
		else if (constraints > PBD_SCENE_MAX_CONSTRAINTS)
			ok = jr_fail(&L->r, path, "too many constraints (%llu in the scene up to this object, the limit is %u)",
			             (unsigned long long)constraints, PBD_SCENE_MAX_CONSTRAINTS);
		L->r.source = source;
		if (!ok) return false;
	}
	return true;
}

static bool read_object(loader* L, const cJSON* obj, const char* path, pbd_scene_object* o) {
	jr* r = &L->r;
	if (!cJSON_IsObject(obj)) return jr_fail(r, path, "expected an object (got %s)", jr_type_name(obj));
	if (!jr_get(obj, "type"))
		return jr_fail(r, path,
		               "missing \"type\" (one of \"particles\", \"grid_cloth\", \"mesh_cloth\", \"rope\", \"tet_box\", "
		               "\"tet_sphere\", \"tetgen\")");
	int type;
	if (!jr_enum(r, obj, path, "type", 0, object_types, NULL, NULL, &type)) return false;
	o->type = (pbd_scene_object_type)type;
	switch (o->type) {
	case PBD_SCENE_OBJECT_PARTICLES:
		return read_particles(L, obj, path, o);
	case PBD_SCENE_OBJECT_GRID_CLOTH:
		return read_grid_cloth(L, obj, path, o);
	case PBD_SCENE_OBJECT_MESH_CLOTH:
		return read_mesh_cloth(L, obj, path, o);
	case PBD_SCENE_OBJECT_ROPE:
		return read_rope(L, obj, path, o);
	case PBD_SCENE_OBJECT_TET_BOX:
		return read_tet_box(L, obj, path, o);
	case PBD_SCENE_OBJECT_TET_SPHERE:
		return read_tet_sphere(L, obj, path, o);
	case PBD_SCENE_OBJECT_TETGEN:
		return read_tetgen(L, obj, path, o);
	}
	return jr_fail(r, path, "unknown type");
}

/* ---- colliders --------------------------------------------------------------------------- */

/* Positions in collider_types follow pbd_shape_type; those in actor_kinds pbd_actor_kind. */
static const char* const collider_types[] = {"plane",  "sphere", "capsule",     "box",
                                             "convex", "mesh",   "heightfield", NULL};
static const char* const actor_kinds[] = {"static", "kinematic", NULL};

/* The keys every collider takes besides its shape's. */
#define COLLIDER_KEYS                                                                                                  \
	"type", "margin", "kind", "position", "rotation", "velocity", "angular_velocity", "keyframes", "static_friction",  \
	    "kinetic_friction", "restitution", "trigger", "category"

/* A unit quaternion from components already checked finite and bounded. Normalised here, in
 * double, so that what the library stores is what the file meant; false for the zero one. */
static bool quat_from(const double q[4], pbd_quat* out) {
	const double len = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
	if (!(len > 0)) return false;
	*out = (pbd_quat){(pbd_real)(q[0] / len), (pbd_real)(q[1] / len), (pbd_real)(q[2] / len), (pbd_real)(q[3] / len)};
	return true;
}

/* A rotation: {"axis": [x, y, z], "angle_deg": a}, or a quaternion [x, y, z, w]. The JSON type
 * tells the two apart, so neither can be mistaken for the other. */
static bool read_rotation(loader* L, const cJSON* obj, const char* path, const char* key, pbd_quat* out) {
	jr* r = &L->r;
	const cJSON* item = jr_get(obj, key);
	if (!item) return true;
	char p[JR_PATH_MAX];
	jr_path_key(p, path, key);
	if (cJSON_IsArray(item)) {
		if (cJSON_GetArraySize(item) != 4)
			return jr_fail(r, p, "expected a quaternion [x, y, z, w] (got an array of another length)");
		double q[4];
		size_t k = 0;
		for (const cJSON* e = item->child; e; e = e->next, ++k) {
			char q_path[JR_PATH_MAX];
			jr_path_index(q_path, p, k);
			if (!jr_number_item(r, e, q_path, JR_SYMMETRIC(PBD_SCENE_MAX_DIRECTION), &q[k])) return false;
		}
		if (!quat_from(q, out)) return jr_fail(r, p, "must not be the zero quaternion");
		return true;
	}
	if (!cJSON_IsObject(item))
		return jr_fail(r, p, "expected {\"axis\": [x, y, z], \"angle_deg\": a} or a quaternion [x, y, z, w] (got %s)",
		               jr_type_name(item));
	static const char* const keys[] = {"axis", "angle_deg", NULL};
	if (!jr_object(r, item, p, keys)) return false;
	if (!jr_get(item, "axis") || !jr_get(item, "angle_deg"))
		return jr_fail(r, p, "missing \"%s\"", jr_get(item, "axis") ? "angle_deg" : "axis");
	pbd_vec3 axis;
	double deg;
	if (!jr_vec3(r, item, p, "axis", pbd_v3(0, 1, 0), PBD_SCENE_MAX_DIRECTION, &axis) ||
	    !jr_real(r, item, p, "angle_deg", 0, JR_SYMMETRIC(PBD_SCENE_MAX_ANGLE_DEG), &deg))
		return false;
	const double a[3] = {(double)axis.x, (double)axis.y, (double)axis.z};
	const double len = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
	if (!(len > 0)) {
		char q[JR_PATH_MAX];
		jr_path_key(q, p, "axis");
		return jr_fail(r, q, "must not be zero");
	}
	const double half = 0.5 * deg * (3.14159265358979323846 / 180.0), s = sin(half) / len;
	const double q[4] = {a[0] * s, a[1] * s, a[2] * s, cos(half)};
	quat_from(q, out); /* unit by construction */
	return true;
}

static const char* const interp_names[] = {"linear", "cubic", NULL};

/* A track at `kpath`: an array of keys {"time", "position", "rotation"}, times strictly
 * increasing, or {"keys": that array, "interp": "linear" | "cubic", "loop": bool}. A key that
 * leaves out its position or rotation keeps the previous key's (the first: origin, identity).
 * The keys belong to *t as soon as they are allocated, so that pbd_scene_free releases them
 * whatever fails. */
static bool read_track(loader* L, const cJSON* item, const char* kpath, pbd_scene_track* t) {
	jr* r = &L->r;
	const cJSON* arr = item;
	char apath[JR_PATH_MAX];
	snprintf(apath, sizeof apath, "%s", kpath);
	int interp = PBD_SCENE_INTERP_LINEAR;
	bool loop = false;
	if (cJSON_IsObject(item)) {
		static const char* const keys[] = {"keys", "interp", "loop", NULL};
		if (!jr_object(r, item, kpath, keys) ||
		    !jr_enum(r, item, kpath, "interp", interp, interp_names, NULL, NULL, &interp) ||
		    !jr_bool(r, item, kpath, "loop", loop, &loop))
			return false;
		arr = jr_get(item, "keys");
		if (!arr) return jr_fail(r, kpath, "missing \"keys\"");
		jr_path_key(apath, kpath, "keys");
	}
	if (!cJSON_IsArray(arr))
		return jr_fail(r, apath, "expected an array of keyframes or {\"keys\": [...], \"interp\", \"loop\"} (got %s)",
		               jr_type_name(arr));
	const size_t n = (size_t)cJSON_GetArraySize(arr);
	if (n == 0) return jr_fail(r, apath, "must hold at least one keyframe");
	if (n > PBD_SCENE_MAX_KEYFRAMES)
		return jr_fail(r, apath, "too many keyframes (%zu, the limit is %d)", n, PBD_SCENE_MAX_KEYFRAMES);
	pbd_scene_keyframe* keys = malloc(n * sizeof *keys);
	if (!keys) return jr_fail(r, apath, "out of memory");
	t->keys = keys;
	t->key_count = 0;
	t->interp = (pbd_scene_interp)interp;
	t->loop = loop;
	static const char* const allowed[] = {"time", "position", "rotation", NULL};
	pbd_pose pose = pbd_pose_identity();
	size_t i = 0;
	for (const cJSON* k = arr->child; k; k = k->next, ++i) {
		char p[JR_PATH_MAX];
		jr_path_index(p, apath, i);
		if (!jr_object(r, k, p, allowed)) return false;
		if (!jr_get(k, "time")) return jr_fail(r, p, "missing \"time\"");
		double time;
		if (!jr_real(r, k, p, "time", 0, JR_NONNEG(PBD_SCENE_MAX_TIME), &time) ||
		    !jr_vec3(r, k, p, "position", pose.position, PBD_SCENE_MAX_LENGTH, &pose.position) ||
		    !read_rotation(L, k, p, "rotation", &pose.rotation))
			return false;
		if (i > 0 && !(time > keys[i - 1].time)) {
			char q[JR_PATH_MAX], got[JR_NUMBER_MAX], prev[JR_NUMBER_MAX];
			jr_path_key(q, p, "time");
			jr_format_number(got, sizeof got, time);
			jr_format_number(prev, sizeof prev, keys[i - 1].time);
			return jr_fail(r, q, "must be greater than the previous keyframe's %s (got %s)", prev, got);
		}
		keys[i].time = time;
		keys[i].pose = pose;
		t->key_count = (uint32_t)(i + 1);
	}
	const char* why = scene_motion_loop_error(t);
	if (why) {
		char q[JR_PATH_MAX];
		jr_path_key(q, kpath, "loop");
		return jr_fail(r, q, "%s", why);
	}
	return true;
}

/* A kinematic collider's "keyframes" (read_track). The track is registered before its keys are
 * read. *start gets the pose at time 0, where the world starts. */
static bool read_keyframes(loader* L, const cJSON* c, const char* path, uint32_t collider, pbd_pose* start) {
	const cJSON* item = jr_get(c, "keyframes");
	if (!item) return true;
	char kpath[JR_PATH_MAX];
	jr_path_key(kpath, path, "keyframes");
	pbd_scene_track* t = &L->s->tracks[L->s->track_count++];
	memset(t, 0, sizeof *t);
	t->collider = collider;
	if (!read_track(L, item, kpath, t)) return false;
	*start = pbd_scene_track_pose(t, 0.0);
	return true;
}

/* One entry of "moving_pins": {"vertices": as "pinned", then "keyframes" (a track, whose
 * positions displace the vertices' centroid and whose rotations turn them about it) or "velocity"
 * and "angular_velocity"}. Read once the body exists: the vertices are pinned, their centroid is
 * taken where they are in the world, and they are put where the motion has them at time 0. The
 * entry is registered before anything is allocated, so that pbd_scene_free releases what is. */
static bool read_pin_motion(loader* L, const cJSON* e, const char* p, const pbd_mesh* mesh, const pbd_scene_object* o) {
	jr* r = &L->r;
	pbd_scene* s = L->s;
	static const char* const keys[] = {"vertices", "keyframes", "velocity", "angular_velocity", NULL};
	if (!cJSON_IsObject(e)) return jr_fail(r, p, "expected an object (got %s)", jr_type_name(e));
	if (!jr_object(r, e, p, keys)) return false;
	if (!jr_get(e, "vertices")) return jr_fail(r, p, "missing \"vertices\"");
	const char* velocity_key = jr_get(e, "velocity")           ? "velocity"
	                           : jr_get(e, "angular_velocity") ? "angular_velocity"
	                                                           : NULL;
	const cJSON* track = jr_get(e, "keyframes");
	char q[JR_PATH_MAX];
	if (!track && !velocity_key) return jr_fail(r, p, "missing \"keyframes\" (or \"velocity\", \"angular_velocity\")");
	if (track && velocity_key) {
		jr_path_key(q, p, velocity_key);
		return jr_fail(r, q, "not with keyframes, which give the motion; give either");
	}
	pbd_scene_pin_motion* grown = realloc(s->pin_motions, (s->pin_motion_count + 1) * sizeof *grown);
	if (!grown) return jr_fail(r, p, "out of memory");
	s->pin_motions = grown;
	pbd_scene_pin_motion* m = &grown[s->pin_motion_count++];
	memset(m, 0, sizeof *m);
	m->object = (uint32_t)(o - s->objects);
	m->track.collider = UINT32_MAX;
	char vpath[JR_PATH_MAX];
	jr_path_key(vpath, p, "vertices");
	if (!read_vertex_set(L, e, p, "vertices", mesh, &m->particles, &m->count)) return false;
	if (m->count == 0) return jr_fail(r, vpath, "selects no vertex");
	m->offsets = malloc(m->count * sizeof *m->offsets);
	if (!m->offsets) return jr_fail(r, vpath, "out of memory");
	if (track) {
		jr_path_key(q, p, "keyframes");
		if (!read_track(L, track, q, &m->track)) return false;
	} else if (!jr_vec3(r, e, p, "velocity", m->velocity, PBD_SCENE_MAX_SPEED, &m->velocity) ||
	           !jr_vec3(r, e, p, "angular_velocity", m->angular_velocity, PBD_SCENE_MAX_SPEED, &m->angular_velocity)) {
		return false;
	}
	/* The centroid is summed in double, where thousands of float additions would drift. */
	const pbd_vec3* x = pbd_world_positions(s->world);
	double c[3] = {0, 0, 0};
	for (uint32_t k = 0; k < m->count; ++k) {
		const uint32_t v = m->particles[k];
		m->particles[k] = o->range.first_particle + v;
		if (pbd_particle_is_pinned(s->world, m->particles[k]))
			return jr_fail(r, vpath, "vertex %u is already pinned (by \"pinned\" or another moving pin set)", v);
		const pbd_vec3 xv = x[m->particles[k]];
		c[0] += (double)xv.x;
		c[1] += (double)xv.y;
		c[2] += (double)xv.z;
	}
	m->centroid = pbd_v3((pbd_real)(c[0] / m->count), (pbd_real)(c[1] / m->count), (pbd_real)(c[2] / m->count));
	for (uint32_t k = 0; k < m->count; ++k) m->offsets[k] = pbd_v3_sub(x[m->particles[k]], m->centroid);
	const pbd_pose start = pbd_scene_pin_motion_pose(m, 0.0);
	for (uint32_t k = 0; k < m->count; ++k) {
		const pbd_vec3 at = scene_motion_pin_point(m, start, k);
		if (pbd_particle_pin(s->world, m->particles[k]) != PBD_OK ||
		    pbd_world_set_positions(s->world, m->particles[k], 1, &at) != PBD_OK)
			return fail_world(L, p);
	}
	return true;
}

/* "moving_pins": an array of sets of pinned vertices, each carried rigidly by its motion
 * (read_pin_motion) in pbd_scene_before_step. */
static bool read_moving_pins(loader* L, const cJSON* obj, const char* path, const pbd_mesh* mesh,
                             const pbd_scene_object* o) {
	const cJSON* list;
	size_t n;
	if (!jr_array(&L->r, obj, path, "moving_pins", &list, &n)) return false;
	char lpath[JR_PATH_MAX];
	jr_path_key(lpath, path, "moving_pins");
	size_t i = 0;
	for (const cJSON* e = list ? list->child : NULL; e; e = e->next, ++i) {
		char p[JR_PATH_MAX];
		jr_path_index(p, lpath, i);
		if (!read_pin_motion(L, e, p, mesh, o)) return false;
	}
	return true;
}

/* ---- collider shapes with arrays ---------------------------------------------------------- */

/* The arrays a convex, mesh or heightfield shape points at until pbd_collider_create has copied
 * them. */
typedef struct shape_arrays {
	pbd_vec3* points;
	uint32_t* triangles;
	pbd_real* heights;
	pbd_mesh mesh; /* an OBJ file's, when the shape came from one */
} shape_arrays;

static void shape_arrays_free(shape_arrays* a) {
	free(a->points);
	free(a->triangles);
	free(a->heights);
	pbd_mesh_free(&a->mesh);
	memset(a, 0, sizeof *a);
}

/* The bytes of a data file named at field `fpath`: an embedded one for a built-in scene, else
 * the file read whole (at most `max_bytes`). *owned is what the caller frees (NULL for embedded
 * bytes); `name` gets what names the file in messages. */
static bool read_data_file(loader* L, const char* fpath, const char* file, size_t max_bytes,
                           const unsigned char** bytes, size_t* size, unsigned char** owned,
                           char name[SCENE_FILE_NAME_MAX]) {
	jr* r = &L->r;
	*bytes = NULL;
	*size = 0;
	*owned = NULL;
	if (!file[0]) return jr_fail(r, fpath, "must not be empty");
	const scene_data_file* emb = embedded_data(L, file);
	if (emb) {
		snprintf(name, SCENE_FILE_NAME_MAX, "builtin:%s", emb->name);
		*bytes = emb->bytes;
		*size = emb->size;
		return true;
	}
	if (!resolve_path(L, fpath, file, name, SCENE_FILE_NAME_MAX)) return false;
	const char* kind;
	FILE* fp = scene_open_regular(name, &kind);
	if (!fp && kind) return jr_fail(r, fpath, "%s: cannot read %s, only a regular file", name, kind);
	if (!fp) return jr_fail(r, fpath, "%s: cannot open: %s", name, strerror(errno));
	/* In chunks, as the scene text is read: the file may grow while it is read. */
	size_t cap = 1 << 16, n = 0;
	unsigned char* buf = malloc(cap);
	bool ok = buf != NULL;
	if (!ok) jr_fail(r, fpath, "%s: out of memory", name);
	while (ok) {
		if (n == cap) {
			if (cap > max_bytes) {
				char lim[32];
				pbd_scene_format_bytes(lim, sizeof lim, max_bytes);
				ok = jr_fail(r, fpath, "%s: file too large (more than the limit of %s)", name, lim);
				break;
			}
			unsigned char* bigger = realloc(buf, 2 * cap);
			if (!bigger) {
				ok = jr_fail(r, fpath, "%s: out of memory", name);
				break;
			}
			buf = bigger;
			cap *= 2;
		}
		const size_t got = fread(buf + n, 1, cap - n, fp);
		n += got;
		if (got == 0) break;
	}
	if (ok && ferror(fp)) ok = jr_fail(r, fpath, "%s: cannot read: %s", name, strerror(errno));
	if (ok && n > max_bytes) {
		char lim[32];
		pbd_scene_format_bytes(lim, sizeof lim, max_bytes);
		ok = jr_fail(r, fpath, "%s: file too large (more than the limit of %s)", name, lim);
	}
	fclose(fp);
	if (!ok) {
		free(buf);
		return false;
	}
	*bytes = buf;
	*size = n;
	*owned = buf;
	return true;
}

/* A decoded grey image: w x h samples, row 0 first, each at most max_pixel. */
typedef struct grey_image {
	uint32_t w, h;
	uint16_t* pixels; /* malloc'd */
	double max_pixel;
} grey_image;

/* Skips whitespace and '#' comments of a PNM header; false at the end of the bytes. */
static bool pnm_skip(const unsigned char* b, size_t n, size_t* i) {
	for (;;) {
		while (*i < n && (b[*i] == ' ' || b[*i] == '\t' || b[*i] == '\r' || b[*i] == '\n')) ++*i;
		if (*i < n && b[*i] == '#') {
			while (*i < n && b[*i] != '\n') ++*i;
			continue;
		}
		return *i < n;
	}
}

/* A decimal header field of at most 9 digits. */
static bool pnm_number(const unsigned char* b, size_t n, size_t* i, uint32_t* out) {
	if (!pnm_skip(b, n, i) || b[*i] < '0' || b[*i] > '9') return false;
	uint32_t v = 0;
	int digits = 0;
	while (*i < n && b[*i] >= '0' && b[*i] <= '9') {
		if (++digits > 9) return false;
		v = v * 10 + (uint32_t)(b[(*i)++] - '0');
	}
	*out = v;
	return true;
}

/* A binary PGM (P5): read here, so that PGM heightfields need no image library. Samples are 1
 * byte, or 2 (big-endian) when maxval > 255; max_pixel is the header's maxval. */
static bool read_pgm(loader* L, const char* fpath, const char* name, const unsigned char* b, size_t n,
                     grey_image* img) {
	jr* r = &L->r;
	size_t i = 2;
	uint32_t w, h, maxval;
	if (!pnm_number(b, n, &i, &w) || !pnm_number(b, n, &i, &h) || !pnm_number(b, n, &i, &maxval) || i >= n ||
	    !(b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n'))
		return jr_fail(r, fpath, "%s: the PGM header does not read (expected \"P5 width height maxval\")", name);
	++i; /* the one whitespace byte before the samples */
	if (maxval < 1 || maxval > 65535)
		return jr_fail(r, fpath, "%s: the PGM maxval must be in [1, 65535] (got %u)", name, maxval);
	if (w < 2 || h < 2) return jr_fail(r, fpath, "%s: needs at least 2 x 2 pixels (got %u x %u)", name, w, h);
	if ((uint64_t)w * h > PBD_SCENE_MAX_HEIGHTFIELD_SAMPLES)
		return jr_fail(r, fpath, "%s: %u x %u pixels is more than the %u samples a heightfield may have", name, w, h,
		               PBD_SCENE_MAX_HEIGHTFIELD_SAMPLES);
	const size_t bytes_per = maxval > 255 ? 2 : 1, count = (size_t)w * h;
	if (n - i < count * bytes_per)
		return jr_fail(r, fpath, "%s: the PGM is cut short (%zu bytes of samples, %u x %u needs %zu)", name, n - i, w,
		               h, count * bytes_per);
	img->pixels = malloc(count * sizeof *img->pixels);
	if (!img->pixels) return jr_fail(r, fpath, "out of memory");
	for (size_t k = 0; k < count; ++k) {
		const unsigned char* s = b + i + k * bytes_per;
		const uint32_t v = bytes_per == 2 ? ((uint32_t)s[0] << 8) | s[1] : s[0];
		if (v > maxval) {
			free(img->pixels);
			img->pixels = NULL;
			return jr_fail(r, fpath, "%s: pixel (%zu, %zu) is %u, more than the maxval %u", name, k % w, k / w, v,
			               maxval);
		}
		img->pixels[k] = (uint16_t)v;
	}
	img->w = w;
	img->h = h;
	img->max_pixel = maxval;
	return true;
}

/* A grey PNG, 8- or 16-bit, through stb_image. */
static bool read_png(loader* L, const char* fpath, const char* name, const unsigned char* b, size_t n,
                     grey_image* img) {
	jr* r = &L->r;
#ifndef PBD_SCENE_HAVE_STB
	(void)b;
	(void)n;
	(void)img;
	return jr_fail(r, fpath,
	               "%s: PNG height images need stb_image, which this build lacks (install libstb-dev and rebuild); "
	               "use a binary PGM, or give the heights inline in \"heights\"",
	               name);
#else
	int w = 0, h = 0, channels = 0;
	if (n > INT32_MAX || !stbi_info_from_memory(b, (int)n, &w, &h, &channels))
		return jr_fail(r, fpath, "%s: cannot read the image: %s", name, stbi_failure_reason());
	if (channels != 1 && channels != 2)
		return jr_fail(r, fpath, "%s: expected a grey image (got %d color channels)", name, channels);
	if (w < 2 || h < 2) return jr_fail(r, fpath, "%s: needs at least 2 x 2 pixels (got %d x %d)", name, w, h);
	if ((uint64_t)w * (uint64_t)h > PBD_SCENE_MAX_HEIGHTFIELD_SAMPLES)
		return jr_fail(r, fpath, "%s: %d x %d pixels is more than the %u samples a heightfield may have", name, w, h,
		               PBD_SCENE_MAX_HEIGHTFIELD_SAMPLES);
	const bool wide = stbi_is_16_bit_from_memory(b, (int)n) != 0;
	int w2 = 0, h2 = 0, c2 = 0;
	void* pixels = wide ? (void*)stbi_load_16_from_memory(b, (int)n, &w2, &h2, &c2, 1)
	                    : (void*)stbi_load_from_memory(b, (int)n, &w2, &h2, &c2, 1);
	if (!pixels || w2 != w || h2 != h) {
		stbi_image_free(pixels);
		return jr_fail(r, fpath, "%s: cannot read the image: %s", name,
		               pixels ? "its size changed while decoding" : stbi_failure_reason());
	}
	const size_t count = (size_t)w * (size_t)h;
	img->pixels = malloc(count * sizeof *img->pixels);
	if (!img->pixels) {
		stbi_image_free(pixels);
		return jr_fail(r, fpath, "out of memory");
	}
	for (size_t k = 0; k < count; ++k)
		img->pixels[k] = wide ? ((const uint16_t*)pixels)[k] : ((const unsigned char*)pixels)[k];
	stbi_image_free(pixels);
	img->w = (uint32_t)w;
	img->h = (uint32_t)h;
	img->max_pixel = wide ? 65535 : 255;
	return true;
#endif
}

/* Heights from a grey image: sample (ix, iz) is pixel (ix, iz), row iz of the image (top row
 * first) along z, so that the image seen from above (+y, with x to the right) is the terrain
 * seen from above with z pointing down the image. height = pixel / max_pixel * scale + offset,
 * max_pixel being a PGM's maxval, or 255 or 65535 for an 8- or 16-bit PNG. */
static bool read_height_image(loader* L, const char* fpath, const char* file, double scale, double offset,
                              pbd_heightfield* hf, pbd_real** heights) {
	jr* r = &L->r;
	const unsigned char* bytes;
	size_t size;
	unsigned char* owned;
	char name[SCENE_FILE_NAME_MAX];
	if (!read_data_file(L, fpath, file, PBD_SCENE_MAX_IMAGE_BYTES, &bytes, &size, &owned, name)) return false;
	grey_image img;
	memset(&img, 0, sizeof img);
	bool ok;
	if (size >= 2 && bytes[0] == 'P' && bytes[1] == '5')
		ok = read_pgm(L, fpath, name, bytes, size, &img);
	else if (size >= 8 && memcmp(bytes, "\x89PNG\r\n\x1a\n", 8) == 0)
		ok = read_png(L, fpath, name, bytes, size, &img);
	else
		ok = jr_fail(r, fpath, "%s: not a binary PGM (P5) or PNG image%s", name,
		             size >= 2 && bytes[0] == 'P' && bytes[1] == '2' ? " (plain-text PGM, P2, is not read)" : "");
	free(owned);
	if (!ok) return false;
	const size_t count = (size_t)img.w * img.h;
	pbd_real* out = malloc(count * sizeof *out);
	if (!out) {
		free(img.pixels);
		return jr_fail(r, fpath, "out of memory");
	}
	for (size_t k = 0; k < count; ++k) out[k] = (pbd_real)((double)img.pixels[k] / img.max_pixel * scale + offset);
	free(img.pixels);
	hf->nx = img.w;
	hf->nz = img.h;
	hf->heights = out;
	*heights = out;
	return true;
}

/* "heights": nz rows of nx numbers, row iz being the samples along x at z = iz * cell_z. */
static bool read_height_rows(loader* L, const cJSON* arr, const char* hpath, pbd_heightfield* hf, pbd_real** heights) {
	jr* r = &L->r;
	size_t nz = 0, nx = 0;
	for (const cJSON* row = arr->child; row; row = row->next, ++nz) {
		char p[JR_PATH_MAX];
		jr_path_index(p, hpath, nz);
		if (!cJSON_IsArray(row)) return jr_fail(r, p, "expected a row of heights (got %s)", jr_type_name(row));
		size_t n = 0;
		for (const cJSON* e = row->child; e; e = e->next) ++n;
		if (nz == 0) {
			if (n < 2) return jr_fail(r, p, "needs at least 2 heights (got %zu)", n);
			nx = n;
		} else if (n != nx) {
			return jr_fail(r, p, "has %zu heights, but row 0 has %zu: every row must have the same length", n, nx);
		}
		if ((uint64_t)nx * (nz + 1) > PBD_SCENE_MAX_HEIGHTFIELD_SAMPLES)
			return jr_fail(r, hpath, "more than the %u samples a heightfield may have",
			               PBD_SCENE_MAX_HEIGHTFIELD_SAMPLES);
	}
	if (nz < 2) return jr_fail(r, hpath, "needs at least 2 rows (got %zu)", nz);
	pbd_real* out = malloc(nx * nz * sizeof *out);
	if (!out) return jr_fail(r, hpath, "out of memory");
	size_t iz = 0;
	for (const cJSON* row = arr->child; row; row = row->next, ++iz) {
		size_t ix = 0;
		for (const cJSON* e = row->child; e; e = e->next, ++ix) {
			char p[JR_PATH_MAX], q[JR_PATH_MAX];
			jr_path_index(p, hpath, iz);
			jr_path_index(q, p, ix);
			double v;
			const jr_range range = JR_SYMMETRIC(PBD_SCENE_MAX_LENGTH);
			if (!jr_number_item(r, e, q, range, &v) || !jr_to_real(r, q, v, range, &out[iz * nx + ix])) {
				free(out);
				return false;
			}
		}
	}
	hf->nx = (uint32_t)nx;
	hf->nz = (uint32_t)nz;
	hf->heights = out;
	*heights = out;
	return true;
}

/* Two positive lengths [a, b] at `key` (a heightfield's cell), kept when absent. */
static bool read_pair(loader* L, const cJSON* obj, const char* path, const char* key, pbd_real* a, pbd_real* b) {
	jr* r = &L->r;
	const cJSON* item = jr_get(obj, key);
	if (!item) return true;
	char p[JR_PATH_MAX];
	jr_path_key(p, path, key);
	if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 2)
		return jr_fail(r, p, "expected an array of 2 numbers (got %s)",
		               cJSON_IsArray(item) ? "an array of another length" : jr_type_name(item));
	pbd_real* out[2] = {a, b};
	size_t k = 0;
	for (const cJSON* e = item->child; e; e = e->next, ++k) {
		char q[JR_PATH_MAX];
		double v;
		const jr_range range = JR_POSITIVE(PBD_SCENE_MAX_LENGTH);
		jr_path_index(q, p, k);
		if (!jr_number_item(r, e, q, range, &v) || !jr_to_real(r, q, v, range, out[k])) return false;
	}
	return true;
}

/* "obj" against the inline keys that would say the same: one form or the other. */
static bool one_source(loader* L, const cJSON* c, const char* path, const char* file_key, const char* a,
                       const char* b) {
	if (!jr_get(c, file_key) || (!jr_get(c, a) && !(b && jr_get(c, b)))) return true;
	char p[JR_PATH_MAX];
	jr_path_key(p, path, file_key);
	if (b) return jr_fail(&L->r, p, "give either %s or %s/%s, not both", file_key, a, b);
	return jr_fail(&L->r, p, "give either %s or %s, not both", file_key, a);
}

static bool read_convex(loader* L, const cJSON* c, const char* path, pbd_convex* cv, shape_arrays* a) {
	jr* r = &L->r;
	const char* file;
	const cJSON* arr;
	size_t n;
	if (!jr_string(r, c, path, "obj", NULL, 4096, &file) || !jr_array(r, c, path, "points", &arr, &n) ||
	    !one_source(L, c, path, "obj", "points", NULL))
		return false;
	char p[JR_PATH_MAX];
	if (file) {
		jr_path_key(p, path, "obj");
		if (!load_obj(L, p, file, false, &a->mesh, NULL)) return false;
		if (a->mesh.vertex_count < 4)
			return jr_fail(r, p, "needs at least 4 vertices for a hull (got %u)", a->mesh.vertex_count);
		cv->points = a->mesh.positions;
		cv->point_count = a->mesh.vertex_count;
		return true;
	}
	if (!arr) return jr_fail(r, path, "needs \"points\" (at least 4 [x, y, z]) or \"obj\"");
	jr_path_key(p, path, "points");
	if (!read_points(L, arr, p, 4, "points", &a->points, &cv->point_count)) return false;
	cv->points = a->points;
	return true;
}

static bool read_trimesh(loader* L, const cJSON* c, const char* path, pbd_trimesh* m, shape_arrays* a) {
	jr* r = &L->r;
	const char* file;
	const cJSON *varr, *tarr;
	size_t nv, nt;
	if (!jr_bool(r, c, path, "closed", false, &m->closed) || !jr_string(r, c, path, "obj", NULL, 4096, &file) ||
	    !jr_array(r, c, path, "vertices", &varr, &nv) || !jr_array(r, c, path, "triangles", &tarr, &nt) ||
	    !one_source(L, c, path, "obj", "vertices", "triangles"))
		return false;
	char p[JR_PATH_MAX];
	if (file) {
		jr_path_key(p, path, "obj");
		if (!load_obj(L, p, file, false, &a->mesh, NULL)) return false;
		m->vertices = a->mesh.positions;
		m->vertex_count = a->mesh.vertex_count;
		m->triangles = a->mesh.triangles;
		m->triangle_count = a->mesh.triangle_count;
		return true;
	}
	if (!varr || !tarr) return jr_fail(r, path, "needs \"obj\", or both \"vertices\" and \"triangles\"");
	char tp[JR_PATH_MAX];
	jr_path_key(p, path, "vertices");
	jr_path_key(tp, path, "triangles");
	if (!read_points(L, varr, p, 3, "vertices", &a->points, &m->vertex_count) ||
	    !read_triangles(L, tarr, tp, m->vertex_count, &a->triangles, &m->triangle_count))
		return false;
	m->vertices = a->points;
	m->triangles = a->triangles;
	return true;
}

static bool read_heightfield(loader* L, const cJSON* c, const char* path, pbd_heightfield* hf, shape_arrays* a) {
	jr* r = &L->r;
	const char* file;
	const cJSON* arr;
	size_t n;
	double scale, offset;
	hf->cell_x = hf->cell_z = 1;
	if (!jr_string(r, c, path, "image", NULL, 4096, &file) || !jr_array(r, c, path, "heights", &arr, &n) ||
	    !one_source(L, c, path, "image", "heights", NULL) || !read_pair(L, c, path, "cell", &hf->cell_x, &hf->cell_z) ||
	    !jr_real(r, c, path, "height_scale", 1, JR_POSITIVE(PBD_SCENE_MAX_LENGTH), &scale) ||
	    !jr_real(r, c, path, "height_offset", 0, JR_SYMMETRIC(PBD_SCENE_MAX_LENGTH), &offset))
		return false;
	char p[JR_PATH_MAX];
	if (file) {
		jr_path_key(p, path, "image");
		return read_height_image(L, p, file, scale, offset, hf, &a->heights);
	}
	/* Inline heights are metres: a scale or offset would say something they do not do. */
	static const char* const image_only[] = {"height_scale", "height_offset"};
	for (size_t k = 0; k < 2; ++k) {
		if (!jr_get(c, image_only[k])) continue;
		jr_path_key(p, path, image_only[k]);
		return jr_fail(r, p, "only with \"image\" (inline heights are in metres)");
	}
	if (!arr) return jr_fail(r, path, "needs \"heights\" (rows of numbers) or \"image\"");
	jr_path_key(p, path, "heights");
	return read_height_rows(L, arr, p, hf, &a->heights);
}

/* The shape keys of each type; the rest of a collider is its actor (read_collider). Arrays the
 * shape points at are in `a` until the collider is made. */
static bool read_shape(loader* L, const cJSON* c, const char* path, pbd_collider_def* d, shape_arrays* a) {
	jr* r = &L->r;
	char p[JR_PATH_MAX];
	switch (d->type) {
	case PBD_SHAPE_SPHERE: {
		static const char* const keys[] = {COLLIDER_KEYS, "center", "radius", NULL};
		pbd_sphere* sp = &d->shape.sphere;
		sp->center = pbd_v3(0, 0, 0);
		if (!jr_object(r, c, path, keys) ||
		    !jr_vec3(r, c, path, "center", sp->center, PBD_SCENE_MAX_LENGTH, &sp->center))
			return false;
		if (!jr_get(c, "radius")) return jr_fail(r, path, "missing \"radius\"");
		return jr_real_p(r, c, path, "radius", 1, JR_POSITIVE(PBD_SCENE_MAX_LENGTH), &sp->radius);
	}
	case PBD_SHAPE_CAPSULE: {
		static const char* const keys[] = {COLLIDER_KEYS, "half_height", "radius", NULL};
		pbd_capsule* cp = &d->shape.capsule;
		if (!jr_object(r, c, path, keys)) return false;
		if (!jr_get(c, "half_height") || !jr_get(c, "radius"))
			return jr_fail(r, path, "missing \"%s\"", jr_get(c, "radius") ? "half_height" : "radius");
		return jr_real_p(r, c, path, "half_height", 0, JR_NONNEG(PBD_SCENE_MAX_LENGTH), &cp->half_height) &&
		       jr_real_p(r, c, path, "radius", 1, JR_POSITIVE(PBD_SCENE_MAX_LENGTH), &cp->radius);
	}
	case PBD_SHAPE_BOX: {
		static const char* const keys[] = {COLLIDER_KEYS, "half_extents", NULL};
		if (!jr_object(r, c, path, keys)) return false;
		const cJSON* he = jr_get(c, "half_extents");
		if (!he) return jr_fail(r, path, "missing \"half_extents\"");
		jr_path_key(p, path, "half_extents");
		if (!cJSON_IsArray(he) || cJSON_GetArraySize(he) != 3)
			return jr_fail(r, p, "expected an array of 3 numbers [x, y, z] (got %s)",
			               cJSON_IsArray(he) ? "an array of another length" : jr_type_name(he));
		pbd_real* h[3] = {&d->shape.box.half_extents.x, &d->shape.box.half_extents.y, &d->shape.box.half_extents.z};
		const jr_range range = JR_POSITIVE(PBD_SCENE_MAX_LENGTH);
		size_t k = 0;
		for (const cJSON* e = he->child; e; e = e->next, ++k) {
			char q[JR_PATH_MAX];
			double v;
			jr_path_index(q, p, k);
			if (!jr_number_item(r, e, q, range, &v) || !jr_to_real(r, q, v, range, h[k])) return false;
		}
		return true;
	}
	case PBD_SHAPE_CONVEX: {
		static const char* const keys[] = {COLLIDER_KEYS, "points", "obj", NULL};
		return jr_object(r, c, path, keys) && read_convex(L, c, path, &d->shape.convex, a);
	}
	case PBD_SHAPE_MESH: {
		static const char* const keys[] = {COLLIDER_KEYS, "obj", "vertices", "triangles", "closed", NULL};
		return jr_object(r, c, path, keys) && read_trimesh(L, c, path, &d->shape.mesh, a);
	}
	case PBD_SHAPE_HEIGHTFIELD: {
		static const char* const keys[] = {COLLIDER_KEYS,  "heights",       "image", "cell",
		                                   "height_scale", "height_offset", NULL};
		return jr_object(r, c, path, keys) && read_heightfield(L, c, path, &d->shape.heightfield, a);
	}
	case PBD_SHAPE_COUNT:
		return jr_fail(r, path, "unsupported collider type");
	case PBD_SHAPE_PLANE:
		break;
	}
	static const char* const keys[] = {COLLIDER_KEYS, "normal", "offset", NULL};
	pbd_plane* pl = &d->shape.plane;
	if (!jr_object(r, c, path, keys) ||
	    !jr_vec3(r, c, path, "normal", pl->normal, PBD_SCENE_MAX_DIRECTION, &pl->normal) ||
	    !jr_real_p(r, c, path, "offset", pl->offset, JR_SYMMETRIC(PBD_SCENE_MAX_LENGTH), &pl->offset))
		return false;
	const pbd_vec3 n = pl->normal;
	if (!direction_finite(L, path, "normal", n)) return false;
	if (!((double)n.x * n.x + (double)n.y * n.y + (double)n.z * n.z > 1e-12)) {
		jr_path_key(p, path, "normal");
		return jr_fail(r, p, "must not be zero");
	}
	return true;
}

/* Collider `index` of the file: its shape, then how it moves (kind, pose, velocities or
 * keyframes), its contact material and its filter. */
static bool read_collider_def(loader* L, const cJSON* c, const char* path, uint32_t index, pbd_collider_def* out,
                              shape_arrays* a);

static bool read_collider(loader* L, const cJSON* c, const char* path, uint32_t index, pbd_collider_id* id) {
	shape_arrays a;
	memset(&a, 0, sizeof a);
	pbd_collider_def d;
	bool ok = read_collider_def(L, c, path, index, &d, &a);
	if (ok) {
		/* The library copies the shape's arrays: they go right after. */
		*id = pbd_collider_create(L->s->world, &d);
		if (id->index1 == 0) ok = fail_world(L, path);
	}
	shape_arrays_free(&a);
	return ok;
}

static bool read_collider_def(loader* L, const cJSON* c, const char* path, uint32_t index, pbd_collider_def* out,
                              shape_arrays* a) {
	jr* r = &L->r;
	if (!cJSON_IsObject(c)) return jr_fail(r, path, "expected an object (got %s)", jr_type_name(c));
	if (!jr_get(c, "type"))
		return jr_fail(r, path,
		               "missing \"type\" (\"plane\", \"sphere\", \"capsule\", \"box\", \"convex\", \"mesh\" or "
		               "\"heightfield\")");
	int type;
	if (!jr_enum(r, c, path, "type", 0, collider_types, NULL, NULL, &type)) return false;
	pbd_collider_def d = pbd_collider_def_default();
	d.type = (pbd_shape_type)type;
	if (!read_shape(L, c, path, &d, a)) return false;

	char p[JR_PATH_MAX];
	int kind;
	if (!jr_real_p(r, c, path, "margin", d.margin, JR_NONNEG(PBD_SCENE_MAX_LENGTH), &d.margin) ||
	    !jr_enum(r, c, path, "kind", (int)d.kind, actor_kinds, NULL, NULL, &kind))
		return false;
	d.kind = (pbd_actor_kind)kind;
	/* Motion on a static collider, or velocities beside keyframes, would be silently dropped or
	 * overridden: both are refused at the key that says it. */
	static const char* const motion[] = {"velocity", "angular_velocity", "keyframes"};
	for (size_t k = 0; k < 3 && d.kind == PBD_ACTOR_STATIC; ++k) {
		if (!jr_get(c, motion[k])) continue;
		jr_path_key(p, path, motion[k]);
		return jr_fail(r, p, "a static collider does not move (give \"kind\": \"kinematic\")");
	}
	if (jr_get(c, "keyframes")) {
		static const char* const fixed[] = {"position", "rotation", "velocity", "angular_velocity"};
		for (size_t k = 0; k < 4; ++k) {
			if (!jr_get(c, fixed[k])) continue;
			jr_path_key(p, path, fixed[k]);
			return jr_fail(r, p, "not with keyframes, which give the pose and the motion; give either");
		}
	}
	int64_t category;
	double mu_s, mu_k;
	const jr_range mu_range = JR_NONNEG(PBD_SCENE_MAX_MAGNITUDE);
	if (!jr_vec3(r, c, path, "position", d.pose.position, PBD_SCENE_MAX_LENGTH, &d.pose.position) ||
	    !read_rotation(L, c, path, "rotation", &d.pose.rotation) ||
	    !jr_vec3(r, c, path, "velocity", d.velocity, PBD_SCENE_MAX_SPEED, &d.velocity) ||
	    !jr_vec3(r, c, path, "angular_velocity", d.angular_velocity, PBD_SCENE_MAX_SPEED, &d.angular_velocity) ||
	    !jr_real(r, c, path, "static_friction", (double)d.static_friction, mu_range, &mu_s) ||
	    /* One coefficient is Coulomb friction: sliding resists as much as sticking does. */
	    !jr_real(r, c, path, "kinetic_friction", mu_s, mu_range, &mu_k) ||
	    !jr_real_p(r, c, path, "restitution", d.restitution, JR_UNIT, &d.restitution) ||
	    !jr_bool(r, c, path, "trigger", d.trigger, &d.trigger) ||
	    !jr_int(r, c, path, "category", d.category, 0, UINT32_MAX, &category))
		return false;
	d.category = (uint32_t)category;
	char sp[JR_PATH_MAX];
	jr_path_key(sp, path, "static_friction");
	jr_path_key(p, path, "kinetic_friction");
	/* Compared as written; rounding to pbd_real keeps the order. */
	if (mu_k > mu_s) {
		char got[JR_NUMBER_MAX], max[JR_NUMBER_MAX];
		jr_format_number(got, sizeof got, mu_k);
		jr_format_number(max, sizeof max, mu_s);
		return jr_fail(r, p, "must be at most static_friction, %s (got %s)", max, got);
	}
	if (!jr_to_real(r, sp, mu_s, mu_range, &d.static_friction) ||
	    !jr_to_real(r, p, mu_k, mu_range, &d.kinetic_friction))
		return false;
	if (!read_keyframes(L, c, path, index, &d.pose)) return false;
	*out = d;
	return true;
}

/* ---- keyframed motion --------------------------------------------------------------------- */

pbd_pose pbd_scene_track_pose(const pbd_scene_track* track, double time) {
	return scene_motion_track_pose(track, time);
}

pbd_status pbd_scene_before_step(pbd_scene* s) {
	if (!s || !s->world) return PBD_ERR_INVALID_ARGUMENT;
	if (s->track_count == 0 && s->pin_motion_count == 0) return PBD_OK;
	/* The clock is the world's, not one kept here, so that a world resumed from a snapshot or
	 * given another dt between steps follows its keyframes from where it is. */
	const double end = pbd_world_time(s->world) + (double)pbd_world_get_def(s->world).dt;
	for (uint32_t k = 0; k < s->track_count; ++k) {
		const pbd_scene_track* t = &s->tracks[k];
		const pbd_status status =
		    pbd_collider_move_to(s->world, s->colliders[t->collider], pbd_scene_track_pose(t, end));
		if (status != PBD_OK) return status;
	}
	/* A target, unlike a position set here, moves the pin through the substeps, and the velocity
	 * the step gives it is the motion's, which contacts and friction see. */
	for (uint32_t k = 0; k < s->pin_motion_count; ++k) {
		const pbd_scene_pin_motion* m = &s->pin_motions[k];
		const pbd_pose pose = pbd_scene_pin_motion_pose(m, end);
		for (uint32_t i = 0; i < m->count; ++i) {
			const pbd_status status =
			    pbd_particle_set_target(s->world, m->particles[i], scene_motion_pin_point(m, pose, i));
			if (status != PBD_OK) return status;
		}
	}
	return PBD_OK;
}

pbd_status pbd_scene_step(pbd_scene* s) {
	const pbd_status status = pbd_scene_before_step(s);
	return status != PBD_OK ? status : pbd_world_step(s->world);
}

/* ---- render settings ---------------------------------------------------------------------- */

const char* const pbd_scene_overlay_names[] = {"particles", "constraints", "pinned", "contacts", NULL};

static int hex_digit(char c) {
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

/* A color: [r, g, b] with each in [0, 1], or "#rrggbb". */
static bool read_color_item(loader* L, const cJSON* item, const char* path, float out[3]) {
	jr* r = &L->r;
	if (cJSON_IsString(item) && item->valuestring) {
		const char* t = item->valuestring;
		bool ok = strlen(t) == 7 && t[0] == '#';
		for (int i = 1; ok && i < 7; ++i) ok = hex_digit(t[i]) >= 0;
		if (!ok) return jr_fail(r, path, "expected \"#rrggbb\" or [r, g, b] (got \"%.16s\")", t);
		for (int k = 0; k < 3; ++k) out[k] = (float)(hex_digit(t[1 + 2 * k]) * 16 + hex_digit(t[2 + 2 * k])) / 255.0f;
		return true;
	}
	if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 3)
		return jr_fail(r, path, "expected \"#rrggbb\" or [r, g, b] with each in [0, 1] (got %s)",
		               cJSON_IsArray(item) ? "an array of another length" : jr_type_name(item));
	int k = 0;
	for (const cJSON* c = item->child; c; c = c->next, ++k) {
		char p[JR_PATH_MAX];
		jr_path_index(p, path, (size_t)k);
		double v;
		if (!jr_number_item(r, c, p, JR_UNIT, &v)) return false;
		out[k] = (float)v;
	}
	return true;
}

static bool read_color(loader* L, const cJSON* obj, const char* path, const char* key, bool* has, float out[3]) {
	const cJSON* item = jr_get(obj, key);
	if (!item) return true;
	char p[JR_PATH_MAX];
	jr_path_key(p, path, key);
	*has = true;
	return read_color_item(L, item, p, out);
}

/* "background": one color, or [top, bottom] for a vertical gradient. */
static bool read_background(loader* L, const cJSON* obj, const char* path, pbd_scene_render* sr) {
	const cJSON* item = jr_get(obj, "background");
	if (!item) return true;
	char p[JR_PATH_MAX];
	jr_path_key(p, path, "background");
	sr->has_background = true;
	if (cJSON_IsArray(item) && cJSON_GetArraySize(item) == 2) {
		char p0[JR_PATH_MAX], p1[JR_PATH_MAX];
		jr_path_index(p0, p, 0);
		jr_path_index(p1, p, 1);
		return read_color_item(L, item->child, p0, sr->background_top) &&
		       read_color_item(L, item->child->next, p1, sr->background_bottom);
	}
	if (!read_color_item(L, item, p, sr->background_top)) return false;
	memcpy(sr->background_bottom, sr->background_top, sizeof sr->background_top);
	return true;
}

static double v3_len2(pbd_vec3 v) { return (double)v.x * v.x + (double)v.y * v.y + (double)v.z * v.z; }

static bool read_camera(loader* L, const cJSON* obj, const char* path, pbd_scene_render* sr) {
	jr* r = &L->r;
	const cJSON* c = jr_get(obj, "camera");
	if (!c) return true;
	char cpath[JR_PATH_MAX];
	jr_path_key(cpath, path, "camera");
	static const char* const keys[] = {"eye", "target", "up", "fov", NULL};
	if (!jr_object(r, c, cpath, keys)) return false;
	sr->has_eye = jr_get(c, "eye") != NULL;
	sr->has_target = jr_get(c, "target") != NULL;
	sr->has_up = jr_get(c, "up") != NULL;
	sr->has_fov = jr_get(c, "fov") != NULL;
	if (!jr_vec3(r, c, cpath, "eye", pbd_v3(0, 0, 0), PBD_SCENE_MAX_LENGTH, &sr->eye) ||
	    !jr_vec3(r, c, cpath, "target", pbd_v3(0, 0, 0), PBD_SCENE_MAX_LENGTH, &sr->target) ||
	    !jr_vec3(r, c, cpath, "up", pbd_v3(0, 1, 0), PBD_SCENE_MAX_DIRECTION, &sr->up) ||
	    !jr_real(r, c, cpath, "fov", 40, (jr_range){1, 170, false, false}, &sr->fov))
		return false;
	char p[JR_PATH_MAX];
	if (!(v3_len2(sr->up) > 1e-12)) {
		jr_path_key(p, cpath, "up");
		return jr_fail(r, p, "must not be zero");
	}
	/* With both ends given the view direction is known: it must differ from up. What the
	 * automatic framing fills in is checked when the camera is made. */
	if (sr->has_eye && sr->has_target) {
		const pbd_vec3 d = pbd_v3_sub(sr->target, sr->eye);
		const double len2 = v3_len2(d);
		if (!(len2 > 1e-12)) {
			jr_path_key(p, cpath, "target");
			return jr_fail(r, p, "must differ from eye");
		}
		const pbd_vec3 x = pbd_v3_cross(d, sr->up);
		if (!(v3_len2(x) > 1e-6 * len2 * v3_len2(sr->up))) {
			jr_path_key(p, cpath, "up");
			return jr_fail(r, p, "must not be parallel to the view direction (target - eye)");
		}
	}
	return true;
}

static bool read_overlays(loader* L, const cJSON* obj, const char* path, pbd_scene_render* sr) {
	jr* r = &L->r;
	const cJSON* arr;
	size_t n;
	if (!jr_array(r, obj, path, "overlays", &arr, &n)) return false;
	if (!arr) return true;
	char opath[JR_PATH_MAX];
	jr_path_key(opath, path, "overlays");
	sr->has_overlays = true;
	sr->overlays = 0;
	size_t i = 0;
	for (const cJSON* c = arr->child; c; c = c->next, ++i) {
		char p[JR_PATH_MAX];
		jr_path_index(p, opath, i);
		if (!cJSON_IsString(c) || !c->valuestring) return jr_fail(r, p, "expected a string (got %s)", jr_type_name(c));
		unsigned bit = 0;
		for (unsigned k = 0; pbd_scene_overlay_names[k]; ++k)
			if (strcmp(c->valuestring, pbd_scene_overlay_names[k]) == 0) bit = 1u << k;
		if (!bit)
			return jr_fail(r, p,
			               "unknown overlay \"%.32s\" (one of \"particles\", \"constraints\", \"pinned\", "
			               "\"contacts\")",
			               c->valuestring);
		if (sr->overlays & bit) return jr_fail(r, p, "\"%s\" is listed twice", c->valuestring);
		sr->overlays |= bit;
	}
	return true;
}

/* "render": {"width", "height", "camera", colors, "overlays"}; see docs/scene-format.md. */
static bool read_render(loader* L, const cJSON* root, pbd_scene_render* sr) {
	jr* r = &L->r;
	memset(sr, 0, sizeof *sr);
	const cJSON* o = jr_get(root, "render");
	if (!o) return true;
	static const char* const keys[] = {"width",          "height",     "camera",   "cloth_color", "back_color",
	                                   "collider_color", "background", "overlays", NULL};
	const char* path = "render";
	if (!jr_object(r, o, path, keys)) return false;
	int64_t w, h;
	if (!jr_int(r, o, path, "width", 0, PBD_SCENE_RENDER_MIN_SIZE, PBD_SCENE_RENDER_MAX_SIZE, &w) ||
	    !jr_int(r, o, path, "height", 0, PBD_SCENE_RENDER_MIN_SIZE, PBD_SCENE_RENDER_MAX_SIZE, &h))
		return false;
	sr->width = (int)w;
	sr->height = (int)h;
	return read_camera(L, o, path, sr) &&
	       read_color(L, o, path, "cloth_color", &sr->has_cloth_color, sr->cloth_color) &&
	       read_color(L, o, path, "back_color", &sr->has_back_color, sr->back_color) &&
	       read_color(L, o, path, "collider_color", &sr->has_collider_color, sr->collider_color) &&
	       read_background(L, o, path, sr) && read_overlays(L, o, path, sr);
}

/* ---- the scene --------------------------------------------------------------------------- */

static bool name_ok(const char* s) {
	if (!s[0] || s[0] == '.') return false;
	for (const char* c = s; *c; ++c)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
		      *c == '-' || *c == '.'))
			return false;
	return true;
}

static bool build(loader* L, const cJSON* root, const char* default_name, const pbd_scene_options* opt) {
	jr* r = &L->r;
	pbd_scene* s = L->s;
	if (!cJSON_IsObject(root)) return jr_fail(r, "", "the top level must be an object (got %s)", jr_type_name(root));
	static const char* const keys[] = {"name",    "description", "frames", "world",
	                                   "objects", "colliders",   "render", NULL};
	if (!jr_object(r, root, "", keys)) return false;

	const char* name;
	const char* description;
	int64_t frames;
	if (!jr_string(r, root, "", "name", default_name, PBD_SCENE_NAME_MAX - 1, &name) ||
	    !jr_string(r, root, "", "description", "", sizeof s->description - 1, &description) ||
	    !jr_int(r, root, "", "frames", 240, 0, PBD_SCENE_MAX_FRAMES, &frames))
		return false;
	/* The name becomes the output folder out/<name>/, so it must be a plain file name. */
	if (!name_ok(name))
		return jr_fail(r, "name", "\"%s\" must be letters, digits, '_', '-' or '.', not starting with '.'", name);
	snprintf(s->name, sizeof s->name, "%s", name);
	snprintf(s->description, sizeof s->description, "%s", description);
	s->frames = (int)frames;

	/* Read before anything is allocated: a bad render field costs no world. */
	if (!read_render(L, root, &s->render)) return false;

	pbd_world_def def = pbd_world_def_default();
	if (!read_world(L, root, &def)) return false;
	if (opt) def.diagnostics = !opt->no_diagnostics;
	s->log = calloc(1, sizeof *s->log);
	if (!s->log) return jr_fail(r, "", "out of memory");
	s->log->fn = opt ? opt->log : NULL;
	s->log->user = opt ? opt->log_user : NULL;
	s->log->loading = true;
	def.log = scene_log_route;
	def.log_user = s->log;
	if (pbd_world_create(&def, &s->world) != PBD_OK)
		/* Without a world there is no last error to read: the router kept the message. */
		return jr_fail(r, "world", "%s", s->log->held[0] ? s->log->held : "the library refused the settings");

	const cJSON *objects, *colliders;
	size_t no, ncol;
	if (!jr_array(r, root, "", "objects", &objects, &no) || !jr_array(r, root, "", "colliders", &colliders, &ncol))
		return false;
	if (!check_total_size(L, objects)) return false;
	if (no > 0) {
		s->objects = calloc(no, sizeof *s->objects);
		if (!s->objects) return jr_fail(r, "objects", "out of memory");
	}
	size_t i = 0;
	const char* source = r->source;
	for (const cJSON* o = objects ? objects->child : NULL; o; o = o->next, ++i) {
		char p[JR_PATH_MAX];
		const scene_origin* org = object_place(L, i, p);
		if (org) r->source = org->source;
		pbd_scene_object* so = &s->objects[i];
		snprintf(so->name, sizeof so->name, "object%zu", i);
		s->object_count = (uint32_t)(i + 1); /* counted before reading, so pbd_scene_free sees its lines */
		const bool ok = read_object(L, o, p, so);
		scene_compose_blame(org, r);
		r->source = source;
		if (!ok) return false;
	}
	if (ncol > 0) {
		if (ncol > 100000) return jr_fail(r, "colliders", "too many colliders (%zu)", ncol);
		s->colliders = calloc(ncol, sizeof *s->colliders);
		s->tracks = calloc(ncol, sizeof *s->tracks);
		if (!s->colliders || !s->tracks) return jr_fail(r, "colliders", "out of memory");
	}
	i = 0;
	for (const cJSON* c = colliders ? colliders->child : NULL; c; c = c->next, ++i) {
		const scene_origin* org = i < L->compose->collider_count ? &L->compose->colliders[i] : NULL;
		char p[JR_PATH_MAX];
		jr_path_index(p, "colliders", i);
		if (org) {
			snprintf(p, sizeof p, "%s", org->path);
			r->source = org->source;
		}
		const bool ok = read_collider(L, c, p, (uint32_t)i, &s->colliders[i]);
		r->source = source;
		if (!ok) return false;
		s->collider_count = (uint32_t)(i + 1);
	}
	return true;
}

/* The file name without folder and extension, made safe as a scene name. */
static void stem_of(const char* source, char out[PBD_SCENE_NAME_MAX]) {
	const char* base = strrchr(source, '/');
	base = base ? base + 1 : source;
	size_t n = strcspn(base, ".");
	if (n >= PBD_SCENE_NAME_MAX) n = PBD_SCENE_NAME_MAX - 1;
	for (size_t i = 0; i < n; ++i) {
		char c = base[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
		out[i] = ok ? c : '_';
	}
	out[n] = '\0';
	if (n == 0) snprintf(out, PBD_SCENE_NAME_MAX, "scene");
}

/* `text` is terminated at text[size] when `owned` is: then it belongs to the load, which frees it
 * once parsed so that the text and the objects built from the tree are never held together. */
static bool load(const char* text, size_t size, char* owned, const char* source, const char* base_dir, bool builtin,
                 const char* default_name, const pbd_scene_options* options, pbd_scene* out, pbd_scene_error* err) {
	memset(out, 0, sizeof *out);
	loader L;
	memset(&L, 0, sizeof L);
	L.r.source = source ? source : "<scene>";
	L.r.message = err->message;
	L.r.message_size = sizeof err->message;
	L.base_dir = base_dir;
	L.builtin = builtin;
	L.s = out;
	L.max_particles = PBD_SCENE_MAX_PARTICLES;
	L.max_constraints = PBD_SCENE_MAX_CONSTRAINTS;
	if (options && options->max_particles && options->max_particles < PBD_SCENE_MAX_PARTICLES) {
		L.max_particles = options->max_particles;
		L.max_constraints = 8 * (uint64_t)options->max_particles;
	}
	err->message[0] = '\0';
	cJSON* root = jr_parse(&L.r, text, size, owned != NULL);
	free(owned);
	if (!root) return false;
	scene_compose comp;
	L.compose = &comp;
	bool ok = scene_compose_run(&L.r, root, base_dir, builtin, &comp) && build(&L, root, default_name, options);
	scene_compose_free(&comp);
	cJSON_Delete(root);
	if (!ok)
		pbd_scene_free(out);
	else
		out->log->loading = false; /* from now on the caller's callback hears the library */
	return ok;
}

bool pbd_scene_load_string(const char* text, size_t size, const char* source, const char* base_dir,
                           const pbd_scene_options* options, pbd_scene* out, pbd_scene_error* err) {
	char stem[PBD_SCENE_NAME_MAX];
	stem_of(source ? source : "scene", stem);
	return load(text, size, NULL, source, base_dir, false, stem, options, out, err);
}

bool scene_load_builtin_text(const char* text, size_t size, const char* source, const pbd_scene_options* options,
                             pbd_scene* out, pbd_scene_error* err) {
	char stem[PBD_SCENE_NAME_MAX];
	stem_of(source ? source : "scene", stem);
	return load(text, size, NULL, source, NULL, true, stem, options, out, err);
}

FILE* scene_open_regular(const char* path, const char** kind) {
	*kind = NULL;
	/* O_NONBLOCK: opening a FIFO to read would otherwise wait for a writer, maybe forever. The
	 * type is then taken from the descriptor, not the path, so that nothing can be swapped in
	 * between the check and the read. */
	const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) return NULL;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		const int e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			*kind = "a directory";
		else if (S_ISFIFO(st.st_mode))
			*kind = "a FIFO";
		else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
			*kind = "a device";
		else if (S_ISSOCK(st.st_mode))
			*kind = "a socket";
		else
			*kind = "not a regular file";
		close(fd);
		return NULL;
	}
	/* Back to blocking reads, which stdio expects; a regular file never blocks. */
	const int flags = fcntl(fd, F_GETFL);
	if (flags >= 0) (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	FILE* fp = fdopen(fd, "rb");
	if (!fp) {
		const int e = errno;
		close(fd);
		errno = e;
	}
	return fp;
}

/* Reads at most PBD_SCENE_MAX_FILE_BYTES + 1 bytes, so that a file past the cap costs no more than
 * the cap; in chunks rather than trusting the size fstat gives, since the file may grow while it
 * is read. The buffer has room for a terminating 0. */
char* scene_read_text(FILE* fp, const char* path, size_t* out_size, pbd_scene_error* err) {
	size_t cap = 1 << 16, size = 0;
	struct stat st;
	/* A regular file's size is a good first guess: one allocation, no copies. */
	if (fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0 &&
	    (uint64_t)st.st_size <= PBD_SCENE_MAX_FILE_BYTES)
		cap = (size_t)st.st_size + 2; /* the terminator, and a byte for fread to find the end */
	char* text = malloc(cap);
	if (!text) {
		pbd_scene_error_set(err, "%s: out of memory", path);
		return NULL;
	}
	for (;;) {
		if (size + 1 >= cap) {
			if (size > PBD_SCENE_MAX_FILE_BYTES) {
				pbd_scene_error_set(err, "%s: file too large (more than the limit of %u MiB)", path,
				                    PBD_SCENE_MAX_FILE_BYTES >> 20);
				free(text);
				return NULL;
			}
			size_t bigger_cap = cap * 2 > PBD_SCENE_MAX_FILE_BYTES + 2 ? PBD_SCENE_MAX_FILE_BYTES + 2 : cap * 2;
			char* bigger = realloc(text, bigger_cap);
			if (!bigger) {
				pbd_scene_error_set(err, "%s: out of memory", path);
				free(text);
				return NULL;
			}
			text = bigger;
			cap = bigger_cap;
		}
		size_t got = fread(text + size, 1, cap - 1 - size, fp);
		size += got;
		if (got == 0) break;
	}
	if (ferror(fp)) {
		pbd_scene_error_set(err, "%s: cannot read: %s", path, strerror(errno));
		free(text);
		return NULL;
	}
	if (size > PBD_SCENE_MAX_FILE_BYTES) {
		pbd_scene_error_set(err, "%s: file too large (more than the limit of %u MiB)", path,
		                    PBD_SCENE_MAX_FILE_BYTES >> 20);
		free(text);
		return NULL;
	}
	text[size] = '\0';
	*out_size = size;
	return text;
}

bool pbd_scene_load_file(const char* path, const pbd_scene_options* options, pbd_scene* out, pbd_scene_error* err) {
	memset(out, 0, sizeof *out);
	err->message[0] = '\0';
	const char* kind;
	FILE* fp = scene_open_regular(path, &kind);
	if (!fp && kind) {
		pbd_scene_error_set(err, "%s: cannot read %s, only a regular file", path, kind);
		return false;
	}
	if (!fp) {
		pbd_scene_error_set(err, "%s: cannot open: %s", path, strerror(errno));
		return false;
	}
	size_t size = 0;
	char* text = scene_read_text(fp, path, &size, err);
	fclose(fp);
	if (!text) return false;
	/* Relative obj paths start in the scene file's folder. */
	char dir[4096];
	const char* slash = strrchr(path, '/');
	const char* base_dir = NULL;
	if (slash) {
		size_t n = (size_t)(slash - path);
		if (n == 0) n = 1; /* "/scene.json": the root */
		if (n >= sizeof dir) {
			pbd_scene_error_set(err, "%s: path too long", path);
			free(text);
			return false;
		}
		memcpy(dir, path, n);
		dir[n] = '\0';
		base_dir = dir;
	}
	char stem[PBD_SCENE_NAME_MAX];
	stem_of(path, stem);
	return load(text, size, text, path, base_dir, false, stem, options, out, err);
}

void pbd_scene_error_set(pbd_scene_error* err, const char* fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof err->message, fmt, ap);
	va_end(ap);
}

void pbd_scene_format_bytes(char* out, size_t out_size, uint64_t bytes) {
	static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	if (bytes < 1024) {
		snprintf(out, out_size, "%llu bytes", (unsigned long long)bytes);
		return;
	}
	double v = (double)bytes / 1024.0;
	int u = 0;
	while (v >= 1024.0 && u < 5) {
		v /= 1024.0;
		++u;
	}
	snprintf(out, out_size, "%.1f %s", v, units[u]);
}

void pbd_scene_free(pbd_scene* s) {
	if (!s) return;
	pbd_world_destroy(s->world);
	free(s->log); /* after the world, which may still log while it goes */
	for (uint32_t i = 0; i < s->object_count; ++i) free(s->objects[i].lines);
	free(s->objects);
	free(s->colliders);
	for (uint32_t i = 0; i < s->track_count; ++i) free(s->tracks[i].keys);
	free(s->tracks);
	for (uint32_t i = 0; i < s->pin_motion_count; ++i) {
		free(s->pin_motions[i].particles);
		free(s->pin_motions[i].offsets);
		free(s->pin_motions[i].track.keys);
	}
	free(s->pin_motions);
	memset(s, 0, sizeof *s);
}
