/* The "objects" of a scene, one reader per type: particles with distance constraints, grid and
 * mesh cloth, ropes and tetrahedral solids; and the size estimate that refuses a scene past the
 * caps before its first object is allocated. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbd/math.h"
#include "scene_internal.h"

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

static bool read_particles(loader* L, const cJSON* obj, const char* path, pbd_scene_object* o) {
	jr* r = &L->r;
	static const char* const keys[] = {"type",        "name",     "particles",     "constraints", "pinned", "material",
	                                   "translation", "velocity", "drag_particle", "wind",        NULL};
	if (!jr_object(r, obj, path, keys) || !scene_read_name(L, obj, path, o->name)) return false;
	const cJSON* parr;
	size_t np;
	if (!jr_array(r, obj, path, "particles", &parr, &np)) return false;
	char ppath[JR_PATH_MAX];
	jr_path_key(ppath, path, "particles");
	if (np == 0) return jr_fail(r, ppath, parr ? "must hold at least one particle" : "missing (a list of particles)");
	if (!scene_reserve(L, ppath, np, 0)) return false;

	pbd_vec3 translation, velocity;
	pbd_edge_material soft = pbd_soft_def_default().material[PBD_EDGE_STRUCTURAL];
	pbd_real drag_normal, drag_tangent, drag;
	pbd_vec3 wind;
	if (!jr_vec3(r, obj, path, "translation", pbd_v3(0, 0, 0), PBD_SCENE_MAX_LENGTH, &translation) ||
	    !jr_vec3(r, obj, path, "velocity", pbd_v3(0, 0, 0), PBD_SCENE_MAX_SPEED, &velocity) ||
	    !scene_read_air(L, obj, path, false, &drag_normal, &drag_tangent, &drag, &wind))
		return false;
	const cJSON* mat = jr_get(obj, "material");
	if (mat) {
		char mpath[JR_PATH_MAX];
		jr_path_key(mpath, path, "material");
		static const char* const mkeys[] = {"stiffness",  "stiffness_stretch",  "stiffness_compress",
		                                    "compliance", "compliance_stretch", "compliance_compress",
		                                    NULL};
		if (!jr_object(r, mat, mpath, mkeys) || !scene_read_softness(L, mat, mpath, &soft)) return false;
	}

	const cJSON* carr;
	size_t nc;
	if (!jr_array(r, obj, path, "constraints", &carr, &nc)) return false;
	char cpath[JR_PATH_MAX];
	jr_path_key(cpath, path, "constraints");
	if (!scene_reserve(L, cpath, 0, nc)) return false;

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
		     jr_real(r, c, p, "mass", 1.0, scene_mass_range, &mass) &&
		     jr_real(r, c, p, "inv_mass", 1.0 / mass, JR_NONNEG(PBD_SCENE_MAX_MASS), &inv_mass) &&
		     (!jr_get(c, "inv_mass") || scene_inv_mass_ok(L, p, inv_mass));
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
		ok = scene_read_pinned(L, obj, path, &pm, &pinned, &pinned_count);
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
		     jr_real_p(r, c, p, "rest", rest, JR_NONNEG(PBD_SCENE_MAX_LENGTH), &rest) &&
		     scene_read_softness(L, c, p, &m);
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
			ok = scene_fail_world(L, ppath);
		o->range.particle_count = (uint32_t)np;
		if (ok && drag > 0 &&
		    pbd_particles_set_drag(world, o->range.first_particle, (uint32_t)np, drag, wind) != PBD_OK)
			ok = scene_fail_world(L, path);
	}
	if (ok) {
		o->range.first_distance = pbd_world_distance_count(world);
		for (size_t k = 0; k < nc; ++k) {
			dd[k].a += o->range.first_particle;
			dd[k].b += o->range.first_particle;
		}
		if (nc && pbd_world_add_distances(world, (uint32_t)nc, dd, &o->range.first_distance) != PBD_OK)
			ok = scene_fail_world(L, cpath);
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
	if (!scene_direction_finite(L, path, "axis_u", u) || !scene_direction_finite(L, path, "axis_v", v)) return false;
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
	static const char* const keys[] = {"type",
	                                   "name",
	                                   "nx",
	                                   "ny",
	                                   "size",
	                                   "origin",
	                                   "axis_u",
	                                   "axis_v",
	                                   "diagonals",
	                                   "bend",
	                                   "mass",
	                                   "pinned",
	                                   "material",
	                                   "translation",
	                                   "velocity",
	                                   SCENE_MODEL_KEYS,
	                                   SCENE_AIR_KEYS,
	                                   SCENE_ATTACH_KEYS,
	                                   NULL};
	if (!jr_object(r, obj, path, keys) || !scene_read_name(L, obj, path, o->name)) return false;
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
	if (!scene_check_caps(L, path, n, ne)) return false;

	pbd_mesh mesh;
	pbd_error err;
	if (pbd_mesh_grid(&g, &mesh, &err) != PBD_OK) return jr_fail(r, path, "%s", err.message);
	bool ok = scene_create_body(L, obj, path, &mesh, o);
	pbd_mesh_free(&mesh);
	return ok;
}

static bool read_mesh_cloth(loader* L, const cJSON* obj, const char* path, pbd_scene_object* o) {
	jr* r = &L->r;
	static const char* const keys[] = {"type",     "name",           "obj",          "vertices",        "triangles",
	                                   "bend",     "mass",           "pinned",       "material",        "translation",
	                                   "velocity", SCENE_MODEL_KEYS, SCENE_AIR_KEYS, SCENE_ATTACH_KEYS, NULL};
	if (!jr_object(r, obj, path, keys) || !scene_read_name(L, obj, path, o->name)) return false;
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
		if (!scene_load_obj(L, opath, file, bend, &mesh, &groups)) return false;
		L->groups = &groups;
	} else if (!scene_read_inline_mesh(L, obj, path, bend, &mesh)) {
		return false;
	}
	bool ok = scene_create_body(L, obj, path, &mesh, o);
	L->groups = NULL;
	pbd_obj_groups_free(&groups);
	pbd_mesh_free(&mesh);
	return ok;
}

static bool read_rope(loader* L, const cJSON* obj, const char* path, pbd_scene_object* o) {
	jr* r = &L->r;
	static const char* const keys[] = {
	    "type",           "name",      "start",          "end",          "segments",        "bend",
	    "mass",           "pinned",    "material",       "translation",  "velocity",        "long_range",
	    "collision_mask", "thickness", "self_collision", SCENE_AIR_KEYS, SCENE_ATTACH_KEYS, NULL};
	if (!jr_object(r, obj, path, keys) || !scene_read_name(L, obj, path, o->name)) return false;
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
	if (!scene_check_caps(L, path, (uint64_t)segments + 1, (uint64_t)segments * (d.bend ? 2 : 1))) return false;
	pbd_mesh mesh;
	pbd_error err;
	if (pbd_mesh_rope(&d, &mesh, &err) != PBD_OK) return jr_fail(r, path, "%s", err.message);
	bool ok = scene_create_body(L, obj, path, &mesh, o);
	pbd_mesh_free(&mesh);
	return ok;
}

/* A tetrahedral mesh from its builder or file, then a soft object like any other: its surface
 * triangles are what output and rendering see. */
static bool tet_object(loader* L, const cJSON* obj, const char* path, pbd_mesh* mesh, pbd_scene_object* o) {
	bool ok = scene_check_caps(L, path, mesh->vertex_count, mesh->edge_count);
	ok = ok && scene_create_body(L, obj, path, mesh, o);
	pbd_mesh_free(mesh);
	return ok;
}

#define TET_KEYS                                                                                                       \
	"mass", "pinned", "material", "translation", "velocity", "tets", "balloon", "long_range", "collision_mask",        \
	    "thickness", "self_collision", "edge_contacts", SCENE_AIR_KEYS, SCENE_ATTACH_KEYS

static bool read_tet_box(loader* L, const cJSON* obj, const char* path, pbd_scene_object* o) {
	jr* r = &L->r;
	static const char* const keys[] = {"type", "name", "cells", "size", "origin", "tets_per_cell", TET_KEYS, NULL};
	if (!jr_object(r, obj, path, keys) || !scene_read_name(L, obj, path, o->name)) return false;
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
	if (!jr_object(r, obj, path, keys) || !scene_read_name(L, obj, path, o->name)) return false;
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
	if (!jr_object(r, obj, path, keys) || !scene_read_name(L, obj, path, o->name)) return false;
	const char *node = NULL, *ele = NULL;
	if (!jr_string(r, obj, path, "node", NULL, 4096, &node) || !jr_string(r, obj, path, "ele", NULL, 4096, &ele))
		return false;
	if (!node || !ele || !node[0] || !ele[0]) return jr_fail(r, path, "needs \"node\" and \"ele\" file names");
	char npath[JR_PATH_MAX], node_full[4200], ele_full[4200];
	jr_path_key(npath, path, "node");
	if (!scene_resolve_path(L, npath, node, node_full, sizeof node_full) ||
	    !scene_resolve_path(L, npath, ele, ele_full, sizeof ele_full))
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
const scene_origin* scene_object_place(const loader* L, size_t i, char path[JR_PATH_MAX]) {
	const scene_origin* org = i < L->compose->object_count ? &L->compose->objects[i] : NULL;
	if (org)
		snprintf(path, JR_PATH_MAX, "%s", org->path);
	else
		jr_path_index(path, "objects", i);
	return org;
}

bool scene_check_total_size(loader* L, const cJSON* objects) {
	uint64_t particles = 0, constraints = 0;
	size_t i = 0;
	for (const cJSON* o = objects ? objects->child : NULL; o; o = o->next, ++i) {
		uint64_t p, c;
		estimate_size(o, &p, &c);
		particles += p;
		constraints += c;
		char path[JR_PATH_MAX];
		const scene_origin* org = scene_object_place(L, i, path);
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

bool scene_read_object(loader* L, const cJSON* obj, const char* path, pbd_scene_object* o) {
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
