/* The "bodies" of a scene: rigid bodies, static, kinematic (moved by velocities or keyframes) or
 * dynamic, each carrying shapes read exactly as the "colliders" are, posed in the body's frame.
 * A dynamic body's matter is that of its shapes at a density, or given. Read before the objects,
 * whose attachments may name a body. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbd/math.h"
#include "scene_internal.h"

/* Positions follow pbd_body_type. */
static const char* const body_types[] = {"static", "kinematic", "dynamic", NULL};

/* The most colliders a scene may hold, its own and its bodies' shapes together. */
#define SCENE_MAX_COLLIDERS 100000

bool scene_count_body_shapes(loader* L, const cJSON* bodies, size_t colliders, size_t* out) {
	if (colliders > SCENE_MAX_COLLIDERS) return jr_fail(&L->r, "colliders", "too many colliders (%zu)", colliders);
	size_t n = 0;
	for (const cJSON* b = bodies ? bodies->child : NULL; b; b = b->next) {
		const cJSON* shapes = cJSON_IsObject(b) ? jr_get(b, "shapes") : NULL;
		/* Anything but an array is refused where the body is read; it holds no shape. */
		if (cJSON_IsArray(shapes)) n += (size_t)cJSON_GetArraySize(shapes);
		if (n + colliders > SCENE_MAX_COLLIDERS)
			return jr_fail(&L->r, "bodies", "too many colliders and shapes (more than %d)", SCENE_MAX_COLLIDERS);
	}
	*out = n;
	return true;
}

bool scene_find_body(loader* L, const char* path, const char* name, uint32_t* index) {
	const pbd_scene* s = L->s;
	for (uint32_t i = 0; i < s->body_count; ++i)
		if (!strcmp(s->bodies[i].name, name)) {
			*index = i;
			return true;
		}
	if (s->body_count == 0) return jr_fail(&L->r, path, "no body named \"%s\": the scene has no \"bodies\"", name);
	/* The names the scene has, as many as the line holds. */
	char names[256];
	size_t used = 0;
	names[0] = '\0';
	for (uint32_t i = 0; i < s->body_count && used < sizeof names; ++i) {
		const int w = snprintf(names + used, sizeof names - used, "%s\"%s\"", i ? ", " : "", s->bodies[i].name);
		if (w < 0) break;
		used += (size_t)w;
	}
	return jr_fail(&L->r, path, "no body named \"%s\" (the bodies are %s)", name, names);
}

/* Refuses the first of `keys` that obj holds, at path.key, with `why`. */
static bool refuse_keys(loader* L, const cJSON* obj, const char* path, const char* const* keys, size_t n,
                        const char* why) {
	for (size_t k = 0; k < n; ++k) {
		if (!jr_get(obj, keys[k])) continue;
		char p[JR_PATH_MAX];
		jr_path_key(p, path, keys[k]);
		return jr_fail(&L->r, p, "%s", why);
	}
	return true;
}

/* "inertia": [xx, yy, zz, xy, xz, yz], kg m^2 about the centre of mass, the body's axes. */
static bool read_inertia(loader* L, const cJSON* b, const char* path, double out[6]) {
	jr* r = &L->r;
	const cJSON* item = jr_get(b, "inertia");
	char p[JR_PATH_MAX];
	jr_path_key(p, path, "inertia");
	if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 6)
		return jr_fail(r, p, "expected an array of 6 numbers [xx, yy, zz, xy, xz, yz] (got %s)",
		               cJSON_IsArray(item) ? "an array of another length" : jr_type_name(item));
	size_t k = 0;
	for (const cJSON* e = item->child; e; e = e->next, ++k) {
		char q[JR_PATH_MAX];
		jr_path_index(q, p, k);
		if (!jr_number_item(r, e, q, JR_SYMMETRIC(PBD_SCENE_MAX_MAGNITUDE), &out[k])) return false;
	}
	return true;
}

/* What a dynamic body's file says of its matter. */
typedef struct matter_keys {
	double density;
	bool has_mass, has_center, has_inertia;
	double mass;
	double center[3];
	double inertia[6];
} matter_keys;

static bool read_matter_keys(loader* L, const cJSON* b, const char* path, matter_keys* m) {
	jr* r = &L->r;
	char p[JR_PATH_MAX];
	memset(m, 0, sizeof *m);
	if (jr_get(b, "density") && jr_get(b, "mass")) {
		jr_path_key(p, path, "density");
		return jr_fail(r, p, "give either density or mass, not both");
	}
	static const char* const with_mass[] = {"center", "inertia"};
	if (!jr_get(b, "mass") &&
	    !refuse_keys(L, b, path, with_mass, 2,
	                 "only with \"mass\" (\"density\" takes the centre and inertia from the shapes)"))
		return false;
	pbd_vec3 c = pbd_v3(0, 0, 0);
	if (!jr_real(r, b, path, "density", 1000, JR_POSITIVE(PBD_SCENE_MAX_MAGNITUDE), &m->density) ||
	    !jr_real(r, b, path, "mass", 1, scene_mass_range, &m->mass) ||
	    !jr_vec3(r, b, path, "center", c, PBD_SCENE_MAX_LENGTH, &c))
		return false;
	m->has_mass = jr_get(b, "mass") != NULL;
	m->has_center = jr_get(b, "center") != NULL;
	m->has_inertia = jr_get(b, "inertia") != NULL;
	m->center[0] = (double)c.x;
	m->center[1] = (double)c.y;
	m->center[2] = (double)c.z;
	return !m->has_inertia || read_inertia(L, b, path, m->inertia);
}

/* What keeps a shape from having matter ("a plane"), or NULL for a solid one. */
static const char* hollow(const pbd_collider_def* d) {
	switch (d->type) {
	case PBD_SHAPE_PLANE:
		return "a plane";
	case PBD_SHAPE_HEIGHTFIELD:
		return "a heightfield";
	case PBD_SHAPE_MESH:
		return d->shape.mesh.closed ? NULL : "an open mesh (\"closed\" is false)";
	default:
		return NULL;
	}
}

/* The matter of body `sb`'s shapes taken as one solid at `density`. False with *hollow_shape set
 * (and no message) when a shape bounds no volume; false after a message when the library
 * refuses one. */
static bool shapes_matter(loader* L, const char* spath, const pbd_scene_body* sb, double density,
                          pbd_mass_properties* out, uint32_t* hollow_shape, const char** what) {
	pbd_scene* s = L->s;
	*what = NULL;
	pbd_mass_properties* parts = malloc(sb->shape_count * sizeof *parts);
	if (!parts) return jr_fail(&L->r, spath, "out of memory");
	bool ok = true;
	for (uint32_t k = 0; ok && k < sb->shape_count; ++k) {
		const pbd_collider_id id = s->colliders[sb->first_collider + k];
		pbd_collider_def d;
		char p[JR_PATH_MAX];
		jr_path_index(p, spath, k);
		if (pbd_collider_get_def(s->world, id, &d) != PBD_OK) {
			ok = scene_fail_world(L, p);
		} else if ((*what = hollow(&d)) != NULL) {
			*hollow_shape = k;
			ok = false;
		} else if (pbd_collider_mass_properties(s->world, id, (pbd_real)density, &parts[k]) != PBD_OK) {
			ok = scene_fail_world(L, p);
		}
	}
	if (ok && pbd_mass_properties_combine(parts, sb->shape_count, out) != PBD_OK) ok = scene_fail_world(L, spath);
	free(parts);
	return ok;
}

/* The matter of a dynamic body: its shapes' at "density", or the given "mass" with the given
 * "center" and "inertia", each of which defaults to the shapes' (the inertia scaled to the mass
 * and moved to the centre by the parallel-axis theorem). */
static bool body_matter(loader* L, const char* path, const pbd_scene_body* sb, const matter_keys* m,
                        pbd_mass_properties* out) {
	jr* r = &L->r;
	char spath[JR_PATH_MAX], p[JR_PATH_MAX];
	jr_path_key(spath, path, "shapes");
	if (!m->has_mass && sb->shape_count == 0)
		return jr_fail(r, path,
		               "a dynamic body needs \"shapes\" (its matter at \"density\") or \"mass\" and \"inertia\"");
	pbd_mass_properties shapes;
	uint32_t hollow_shape = 0;
	const char* what = NULL;
	bool solid = false;
	if (sb->shape_count > 0 && (!m->has_mass || !m->has_inertia || !m->has_center)) {
		solid = shapes_matter(L, spath, sb, m->has_mass ? 1000 : m->density, &shapes, &hollow_shape, &what);
		if (!solid && !what) return false;
	}
	if (!m->has_mass) {
		if (!solid) {
			jr_path_index(p, spath, hollow_shape);
			return jr_fail(r, p,
			               "%s bounds no volume, so \"density\" cannot give the body its matter (give the body "
			               "\"mass\" and \"inertia\")",
			               what);
		}
		if (!(shapes.mass >= PBD_SCENE_MIN_MASS && shapes.mass <= PBD_SCENE_MAX_MASS)) {
			char got[JR_NUMBER_MAX], lo[JR_NUMBER_MAX], hi[JR_NUMBER_MAX];
			jr_format_number(got, sizeof got, shapes.mass);
			jr_format_number(lo, sizeof lo, PBD_SCENE_MIN_MASS);
			jr_format_number(hi, sizeof hi, PBD_SCENE_MAX_MASS);
			jr_path_key(p, path, "density");
			return jr_fail(r, p, "gives the body a mass of %s kg, outside [%s, %s]", got, lo, hi);
		}
		*out = shapes;
		return true;
	}
	memset(out, 0, sizeof *out);
	out->mass = m->mass;
	for (int k = 0; k < 3; ++k) out->center[k] = m->has_center ? m->center[k] : solid ? shapes.center[k] : 0;
	if (m->has_inertia) {
		memcpy(out->inertia, m->inertia, sizeof out->inertia);
		return true;
	}
	if (!solid) {
		jr_path_key(p, path, "mass");
		if (sb->shape_count == 0) return jr_fail(r, p, "needs \"inertia\" too: the body has no shapes to take it from");
		return jr_fail(r, p, "needs \"inertia\" too: shapes[%u] is %s, which bounds no volume", hollow_shape, what);
	}
	const double scale = m->mass / shapes.mass;
	const double d[3] = {out->center[0] - shapes.center[0], out->center[1] - shapes.center[1],
	                     out->center[2] - shapes.center[2]};
	const double mm = m->mass;
	out->inertia[0] = shapes.inertia[0] * scale + mm * (d[1] * d[1] + d[2] * d[2]);
	out->inertia[1] = shapes.inertia[1] * scale + mm * (d[0] * d[0] + d[2] * d[2]);
	out->inertia[2] = shapes.inertia[2] * scale + mm * (d[0] * d[0] + d[1] * d[1]);
	out->inertia[3] = shapes.inertia[3] * scale - mm * d[0] * d[1];
	out->inertia[4] = shapes.inertia[4] * scale - mm * d[0] * d[2];
	out->inertia[5] = shapes.inertia[5] * scale - mm * d[1] * d[2];
	return true;
}

/* The keys that would be dropped or contradict each other for a body of this type are refused
 * at the key that says it. */
static bool check_type_keys(loader* L, const cJSON* b, const char* path, pbd_body_type type) {
	static const char* const motion[] = {"velocity", "angular_velocity", "keyframes"};
	static const char* const matter[] = {"density", "mass", "center", "inertia"};
	static const char* const dynamics[] = {"gravity_scale", "linear_damping", "angular_damping"};
	static const char* const pose[] = {"position", "rotation", "velocity", "angular_velocity"};
	if (type == PBD_BODY_STATIC &&
	    !refuse_keys(L, b, path, motion, 3, "a static body does not move (give \"type\": \"kinematic\")"))
		return false;
	if (type == PBD_BODY_DYNAMIC &&
	    !refuse_keys(L, b, path, motion + 2, 1,
	                 "only a kinematic body follows keyframes (give \"type\": \"kinematic\")"))
		return false;
	if (type != PBD_BODY_DYNAMIC &&
	    (!refuse_keys(L, b, path, matter, 4, "only a dynamic body has matter (give \"type\": \"dynamic\")") ||
	     !refuse_keys(L, b, path, dynamics, 3,
	                  "only a dynamic body feels gravity and damping (give \"type\": \"dynamic\")")))
		return false;
	if (jr_get(b, "keyframes") &&
	    !refuse_keys(L, b, path, pose, 4, "not with keyframes, which give the pose and the motion; give either"))
		return false;
	return true;
}

/* Body `index`: its def, the body, its shapes, then its matter. It is counted in the scene
 * before anything is allocated for it, so that pbd_scene_free releases its track whatever fails. */
static bool read_body(loader* L, const cJSON* b, const char* path, uint32_t index, uint32_t first_shape) {
	jr* r = &L->r;
	pbd_scene* s = L->s;
	pbd_scene_body* sb = &s->bodies[index];
	memset(sb, 0, sizeof *sb);
	sb->track.collider = UINT32_MAX;
	sb->first_collider = first_shape;
	s->body_count = index + 1;
	if (!cJSON_IsObject(b)) return jr_fail(r, path, "expected an object (got %s)", jr_type_name(b));
	static const char* const keys[] = {"name",           "type",
	                                   "position",       "rotation",
	                                   "velocity",       "angular_velocity",
	                                   "keyframes",      "gravity_scale",
	                                   "linear_damping", "angular_damping",
	                                   "shapes",         "density",
	                                   "mass",           "center",
	                                   "inertia",        NULL};
	if (!jr_object(r, b, path, keys)) return false;
	char p[JR_PATH_MAX];
	snprintf(sb->name, sizeof sb->name, "body%u", index);
	if (!scene_read_name(L, b, path, sb->name)) return false;
	for (uint32_t j = 0; j < index; ++j)
		if (!strcmp(s->bodies[j].name, sb->name)) {
			jr_path_key(p, path, "name");
			return jr_fail(r, p, "\"%s\" is already the name of bodies[%u]", sb->name, j);
		}
	if (!jr_get(b, "type")) return jr_fail(r, path, "missing \"type\" (\"static\", \"kinematic\" or \"dynamic\")");
	int type;
	if (!jr_enum(r, b, path, "type", 0, body_types, NULL, NULL, &type)) return false;
	sb->type = (pbd_body_type)type;
	if (!check_type_keys(L, b, path, sb->type)) return false;

	pbd_body_def d = pbd_body_def_default();
	d.type = sb->type;
	matter_keys m;
	if (!jr_vec3(r, b, path, "position", d.pose.position, PBD_SCENE_MAX_LENGTH, &d.pose.position) ||
	    !scene_read_rotation(L, b, path, "rotation", &d.pose.rotation) ||
	    !jr_vec3(r, b, path, "velocity", d.velocity, PBD_SCENE_MAX_SPEED, &d.velocity) ||
	    !jr_vec3(r, b, path, "angular_velocity", d.angular_velocity, PBD_SCENE_MAX_SPEED, &d.angular_velocity) ||
	    /* The library's bound on the scale. */
	    !jr_real_p(r, b, path, "gravity_scale", d.gravity_scale, JR_SYMMETRIC(1e6), &d.gravity_scale) ||
	    !jr_real_p(r, b, path, "linear_damping", d.linear_damping, JR_NONNEG(PBD_SCENE_MAX_MAGNITUDE),
	               &d.linear_damping) ||
	    !jr_real_p(r, b, path, "angular_damping", d.angular_damping, JR_NONNEG(PBD_SCENE_MAX_MAGNITUDE),
	               &d.angular_damping) ||
	    !read_matter_keys(L, b, path, &m))
		return false;
	const cJSON* track = jr_get(b, "keyframes");
	if (track) {
		jr_path_key(p, path, "keyframes");
		if (!scene_read_track(L, track, p, &sb->track)) return false;
		d.pose = pbd_scene_track_pose(&sb->track, 0.0);
	}
	const cJSON* shapes;
	size_t n;
	if (!jr_array(r, b, path, "shapes", &shapes, &n)) return false;
	/* A dynamic body is made with stand-in matter, which its shapes' replaces once they exist. */
	if (d.type == PBD_BODY_DYNAMIC) d.mass = (pbd_mass_properties){1, {0, 0, 0}, {1, 1, 1, 0, 0, 0}};
	sb->id = pbd_body_create(s->world, &d);
	if (sb->id.index1 == 0) return scene_fail_world(L, path);

	char spath[JR_PATH_MAX];
	jr_path_key(spath, path, "shapes");
	size_t k = 0;
	for (const cJSON* c = shapes ? shapes->child : NULL; c; c = c->next, ++k) {
		jr_path_index(p, spath, k);
		if (!scene_read_collider(L, c, p, UINT32_MAX, sb->id, &s->colliders[first_shape + k])) return false;
		sb->shape_count = (uint32_t)(k + 1);
	}
	if (d.type != PBD_BODY_DYNAMIC) return true;
	pbd_mass_properties mp;
	if (!body_matter(L, path, sb, &m, &mp)) return false;
	if (pbd_body_set_mass(s->world, sb->id, &mp) != PBD_OK) {
		if (m.has_inertia) jr_path_key(p, path, "inertia");
		return scene_fail_world(L, m.has_inertia ? p : path);
	}
	return true;
}

bool scene_read_bodies(loader* L, const cJSON* bodies, uint32_t first_shape) {
	jr* r = &L->r;
	pbd_scene* s = L->s;
	const size_t n = bodies ? (size_t)cJSON_GetArraySize(bodies) : 0;
	if (n == 0) return true;
	s->bodies = calloc(n, sizeof *s->bodies);
	if (!s->bodies) return jr_fail(r, "bodies", "out of memory");
	const char* source = r->source;
	size_t i = 0;
	uint32_t shape = first_shape;
	for (const cJSON* b = bodies->child; b; b = b->next, ++i) {
		const scene_origin* org = i < L->compose->body_count ? &L->compose->bodies[i] : NULL;
		char p[JR_PATH_MAX];
		jr_path_index(p, "bodies", i);
		if (org) {
			snprintf(p, sizeof p, "%s", org->path);
			r->source = org->source;
		}
		const bool ok = read_body(L, b, p, (uint32_t)i, shape);
		r->source = source;
		if (!ok) return false;
		shape += s->bodies[i].shape_count;
	}
	return true;
}
