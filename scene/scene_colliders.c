/* The "colliders" of a scene: each shape's fields (plane, sphere, capsule, box, convex hull,
 * triangle mesh, heightfield), then the actor's (kind, pose, motion, contact material, filter). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbd/math.h"
#include "scene_internal.h"

/* Positions in collider_types follow pbd_shape_type; those in actor_kinds pbd_actor_kind. */
static const char* const collider_types[] = {"plane",  "sphere", "capsule",     "box",
                                             "convex", "mesh",   "heightfield", NULL};
static const char* const actor_kinds[] = {"static", "kinematic", NULL};

/* The keys every collider takes besides its shape's. */
#define COLLIDER_KEYS                                                                                                  \
	"type", "margin", "kind", "position", "rotation", "velocity", "angular_velocity", "keyframes", "static_friction",  \
	    "kinetic_friction", "restitution", "trigger", "category"

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
		if (!scene_load_obj(L, p, file, false, &a->mesh, NULL)) return false;
		if (a->mesh.vertex_count < 4)
			return jr_fail(r, p, "needs at least 4 vertices for a hull (got %u)", a->mesh.vertex_count);
		cv->points = a->mesh.positions;
		cv->point_count = a->mesh.vertex_count;
		return true;
	}
	if (!arr) return jr_fail(r, path, "needs \"points\" (at least 4 [x, y, z]) or \"obj\"");
	jr_path_key(p, path, "points");
	if (!scene_read_points(L, arr, p, 4, "points", &a->points, &cv->point_count)) return false;
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
		if (!scene_load_obj(L, p, file, false, &a->mesh, NULL)) return false;
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
	if (!scene_read_points(L, varr, p, 3, "vertices", &a->points, &m->vertex_count) ||
	    !scene_read_triangles(L, tarr, tp, m->vertex_count, &a->triangles, &m->triangle_count))
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
		return scene_read_height_image(L, p, file, scale, offset, hf, &a->heights);
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

/* The shape keys of each type; the rest of a collider is its actor (scene_read_collider). Arrays the
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
	if (!scene_direction_finite(L, path, "normal", n)) return false;
	if (!((double)n.x * n.x + (double)n.y * n.y + (double)n.z * n.z > 1e-12)) {
		jr_path_key(p, path, "normal");
		return jr_fail(r, p, "must not be zero");
	}
	return true;
}

/* Collider `index` of the file, or a shape on `body`: its shape, then how it moves (kind, pose,
 * velocities or keyframes), its contact material and its filter. */
static bool read_collider_def(loader* L, const cJSON* c, const char* path, uint32_t index, pbd_body_id body,
                              pbd_collider_def* out, shape_arrays* a);

bool scene_read_collider(loader* L, const cJSON* c, const char* path, uint32_t index, pbd_body_id body,
                         pbd_collider_id* id) {
	shape_arrays a;
	memset(&a, 0, sizeof a);
	pbd_collider_def d;
	bool ok = read_collider_def(L, c, path, index, body, &d, &a);
	if (ok) {
		/* The library copies the shape's arrays: they go right after. */
		*id = pbd_collider_create(L->s->world, &d);
		if (id->index1 == 0) ok = scene_fail_world(L, path);
	}
	shape_arrays_free(&a);
	return ok;
}

static bool read_collider_def(loader* L, const cJSON* c, const char* path, uint32_t index, pbd_body_id body,
                              pbd_collider_def* out, shape_arrays* a) {
	jr* r = &L->r;
	if (!cJSON_IsObject(c)) return jr_fail(r, path, "expected an object (got %s)", jr_type_name(c));
	char p[JR_PATH_MAX];
	/* A shape on a body moves with it: a motion of its own would contradict the body's. */
	static const char* const own_motion[] = {"kind", "velocity", "angular_velocity", "keyframes"};
	for (size_t k = 0; k < 4 && body.index1 != 0; ++k) {
		if (!jr_get(c, own_motion[k])) continue;
		jr_path_key(p, path, own_motion[k]);
		return jr_fail(r, p, "a shape moves with its body (give the body's \"type\", \"velocity\" or \"keyframes\")");
	}
	if (!jr_get(c, "type"))
		return jr_fail(r, path,
		               "missing \"type\" (\"plane\", \"sphere\", \"capsule\", \"box\", \"convex\", \"mesh\" or "
		               "\"heightfield\")");
	int type;
	if (!jr_enum(r, c, path, "type", 0, collider_types, NULL, NULL, &type)) return false;
	pbd_collider_def d = pbd_collider_def_default();
	d.type = (pbd_shape_type)type;
	d.body = body;
	if (!read_shape(L, c, path, &d, a)) return false;

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
	    !scene_read_rotation(L, c, path, "rotation", &d.pose.rotation) ||
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
	if (!scene_read_keyframes(L, c, path, index, &d.pose)) return false;
	*out = d;
	return true;
}
