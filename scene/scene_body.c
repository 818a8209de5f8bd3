/* The fields every mesh-based object shares (mass, material, models, pins, selections,
 * attachments, air), then the soft body made of them (scene_create_body). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbd/math.h"
#include "scene_internal.h"

/* Softness of a constraint: stiffness (PBD) and compliance (XPBD), each either one value for
 * both directions or split into _stretch/_compress; giving both forms is ambiguous. */
bool scene_read_softness(loader* L, const cJSON* obj, const char* path, pbd_edge_material* m) {
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
		    !scene_read_softness(L, e, epath, &mat[k]))
			return false;
	}
	return true;
}

/* A mass and an inverse mass share the range [PBD_SCENE_MIN_MASS, PBD_SCENE_MAX_MASS], so that either
 * one's reciprocal is within it too; an inverse mass may also be 0 (pinned). Both are checked on
 * the double read from the file, before any conversion to pbd_real. */
const jr_range scene_mass_range = {PBD_SCENE_MIN_MASS, PBD_SCENE_MAX_MASS, false, false};

bool scene_inv_mass_ok(loader* L, const char* path, double inv_mass) {
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
	    !jr_real(r, m, mpath, "value", (double)bd->mass, scene_mass_range, &mass) ||
	    !jr_to_real(r, vpath, mass, scene_mass_range, &bd->mass))
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
bool scene_read_vertex_set(loader* L, const cJSON* obj, const char* path, const char* key, const pbd_mesh* m,
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

bool scene_read_pinned(loader* L, const cJSON* obj, const char* path, const pbd_mesh* m, uint32_t** out,
                       uint32_t* out_count) {
	return scene_read_vertex_set(L, obj, path, "pinned", m, out, out_count);
}

/* "attached": {"vertices": as "pinned", "compliance": >= 0 (default 0), "body": a name}: each
 * vertex held to where it starts by an attachment of rest length 0, a zero-length spring of
 * constant 1 / compliance (seed 004's attachment springs), or a hard hold at compliance 0. With
 * "body" that point is the body's, taken in its frame where the body starts, and moves with it. */
static bool read_attached(loader* L, const cJSON* obj, const char* path, const pbd_mesh* m, const pbd_scene_object* o) {
	jr* r = &L->r;
	const cJSON* a = jr_get(obj, "attached");
	if (!a) return true;
	char apath[JR_PATH_MAX];
	jr_path_key(apath, path, "attached");
	static const char* const keys[] = {"vertices", "compliance", "body", NULL};
	pbd_attachment_def d = pbd_attachment_def_default();
	const char* body;
	if (!jr_object(r, a, apath, keys) ||
	    !jr_real_p(r, a, apath, "compliance", d.compliance, JR_NONNEG(PBD_SCENE_MAX_MAGNITUDE), &d.compliance) ||
	    !jr_string(r, a, apath, "body", NULL, PBD_SCENE_NAME_MAX - 1, &body))
		return false;
	if (!jr_get(a, "vertices")) return jr_fail(r, apath, "needs \"vertices\"");
	pbd_pose frame = pbd_pose_identity();
	if (body) {
		char bpath[JR_PATH_MAX];
		jr_path_key(bpath, apath, "body");
		uint32_t b;
		pbd_body_state st;
		if (!scene_find_body(L, bpath, body, &b)) return false;
		d.body = L->s->bodies[b].id;
		if (pbd_body_get_state(L->s->world, d.body, &st) != PBD_OK) return scene_fail_world(L, bpath);
		frame = st.pose;
	}
	uint32_t *idx = NULL, n = 0;
	if (!scene_read_vertex_set(L, a, apath, "vertices", m, &idx, &n)) return false;
	pbd_attachment_def* defs = n ? malloc(n * sizeof *defs) : NULL;
	bool ok = n == 0 || defs != NULL;
	if (!ok) ok = jr_fail(r, apath, "out of memory");
	const pbd_vec3* x = pbd_world_positions(L->s->world);
	for (uint32_t k = 0; ok && k < n; ++k) {
		defs[k] = d;
		defs[k].particle = o->range.first_particle + idx[k];
		defs[k].target = pbd_pose_apply_inverse(frame, x[defs[k].particle]);
	}
	if (ok && n && pbd_world_add_attachments(L->s->world, n, defs, NULL) != PBD_OK) ok = scene_fail_world(L, apath);
	free(defs);
	free(idx);
	return ok;
}

/* An object's "name"; out keeps what it holds (the default) when there is none. */
bool scene_read_name(loader* L, const cJSON* obj, const char* path, char out[PBD_SCENE_NAME_MAX]) {
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

bool scene_read_air(loader* L, const cJSON* obj, const char* path, bool triangles, pbd_real* normal, pbd_real* tangent,
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

/* Mass, pinned, material, translation and velocity: the fields every mesh-based object shares.
 * Then the body is created. `mesh` belongs to the caller. */
bool scene_create_body(loader* L, const cJSON* obj, const char* path, const pbd_mesh* mesh, pbd_scene_object* o) {
	jr* r = &L->r;
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = mesh;
	if (mesh->tet_count) bd.tets = PBD_TET_NEOHOOKEAN; /* a tetrahedral object is a solid unless told otherwise */
	pbd_cloth_material cloth;
	uint32_t* pinned = NULL;
	if (!read_models(L, obj, path, &bd, &cloth) ||
	    !scene_read_air(L, obj, path, mesh->triangle_count > 0, &bd.drag_normal, &bd.drag_tangent, &bd.drag_particle,
	                    &bd.wind))
		return false;
	/* A cloth material brings its density: the mass rule unless "mass" says otherwise. */
	if (bd.cloth && !jr_get(obj, "mass")) {
		bd.mass_mode = PBD_MASS_DENSITY;
		bd.mass = cloth.density;
	}
	if (!read_mass(L, obj, path, &bd) || !read_material(L, obj, path, bd.material) ||
	    !jr_vec3(r, obj, path, "translation", bd.translation, PBD_SCENE_MAX_LENGTH, &bd.translation) ||
	    !jr_vec3(r, obj, path, "velocity", bd.velocity, PBD_SCENE_MAX_SPEED, &bd.velocity) ||
	    !scene_read_pinned(L, obj, path, mesh, &pinned, &bd.pinned_count))
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
	bool ok = scene_reserve(L, path, mesh->vertex_count, edges);
	if (ok && (pbd_soft_create(L->s->world, &bd, &o->id) != PBD_OK ||
	           pbd_soft_get_info(L->s->world, o->id, &o->range) != PBD_OK))
		ok = scene_fail_world(L, path);
	free(pinned);
	o->grid_nx = mesh->grid_nx;
	o->grid_ny = mesh->grid_ny;
	ok = ok && read_attached(L, obj, path, mesh, o) && scene_read_moving_pins(L, obj, path, mesh, o);
	if (ok && o->range.triangle_count == 0) ok = lines_from_mesh(L, path, mesh, o->range.first_particle, o);
	return ok;
}
