/* Meshes a scene gives: OBJ files (embedded or on disk) and inline points and triangles, for
 * mesh cloth and for convex and mesh colliders. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene_internal.h"

/* An OBJ file named at field `fpath`: for a built-in scene the embedded data file of that name if
 * there is one, else the file (relative to the scene's folder). Its coordinates are held to the
 * cap of the scene's own. */
bool scene_load_obj(loader* L, const char* fpath, const char* file, bool bend, pbd_mesh* mesh, pbd_obj_groups* groups) {
	jr* r = &L->r;
	if (!file[0]) return jr_fail(r, fpath, "must not be empty");
	char full[SCENE_FILE_NAME_MAX];
	pbd_error err;
	pbd_status st;
	const scene_data_file* emb = scene_embedded_data(L, file);
	if (emb) {
		snprintf(full, sizeof full, "builtin:%s", emb->name);
		st = pbd_mesh_load_obj_memory_groups((const char*)emb->bytes, emb->size, full, bend, mesh, groups, &err);
	} else {
		if (!scene_resolve_path(L, fpath, file, full, sizeof full)) return false;
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
bool scene_read_points(loader* L, const cJSON* arr, const char* apath, size_t min, const char* what, pbd_vec3** out,
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
bool scene_read_triangles(loader* L, const cJSON* arr, const char* tpath, uint32_t nv, uint32_t** out,
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
bool scene_read_inline_mesh(loader* L, const cJSON* obj, const char* path, bool bend, pbd_mesh* mesh) {
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
	if (!scene_check_caps(L, vpath, nv, 0)) return false;
	pbd_vec3* pos;
	uint32_t* tri = NULL;
	uint32_t nvu, ntu;
	bool ok = scene_read_points(L, varr, vpath, 3, "vertices", &pos, &nvu) &&
	          scene_read_triangles(L, tarr, tpath, nvu, &tri, &ntu);
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
