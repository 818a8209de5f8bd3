/* JSON scene -> pbd_world, through the public API. Every value is checked here first so that a
 * mistake is reported with the path of the field that holds it; whatever the library still
 * refuses is passed through with the path of the object it came from. This file reads the top
 * level, creates the world and then the bodies, objects, colliders and joints in order; each
 * concern's fields are read in a file of its own (scene_internal.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbd/math.h"
#include "scene_internal.h"

/* The world's log callback: see struct pbd_scene_log. */
static void scene_log_route(const char* message, void* user) {
	struct pbd_scene_log* l = user;
	if (l->loading) {
		snprintf(l->held, sizeof l->held, "%s", message);
		return;
	}
	if (l->fn) l->fn(message, l->user);
}

/* The library's last message, with the path of the object whose creation it refused. */
bool scene_fail_world(loader* L, const char* path) {
	return jr_fail(&L->r, path, "%s", pbd_world_last_error(L->s->world));
}

/* Checks the scene-wide caps before anything is allocated for an object. */
bool scene_check_caps(loader* L, const char* path, uint64_t particles, uint64_t constraints) {
	if (L->particles + particles > L->max_particles)
		return jr_fail(&L->r, path, "too many particles (%llu in the scene with this object, the limit is %llu)",
		               (unsigned long long)(L->particles + particles), (unsigned long long)L->max_particles);
	if (L->constraints + constraints > L->max_constraints)
		return jr_fail(&L->r, path, "too many constraints (%llu in the scene with this object, the limit is %llu)",
		               (unsigned long long)(L->constraints + constraints), (unsigned long long)L->max_constraints);
	return true;
}

/* Checks the caps and counts the object in. */
bool scene_reserve(loader* L, const char* path, uint64_t particles, uint64_t constraints) {
	if (!scene_check_caps(L, path, particles, constraints)) return false;
	L->particles += particles;
	L->constraints += constraints;
	return true;
}

/* A direction the library normalises in pbd_real: its squared length must be finite there, or
 * the normalised vector would be 0 or NaN. The component caps keep it so; this says which field
 * it is if a cap is ever raised past them. */
bool scene_direction_finite(loader* L, const char* path, const char* key, pbd_vec3 d) {
	if (isfinite((double)pbd_v3_dot(d, d))) return true;
	char p[JR_PATH_MAX];
	jr_path_key(p, path, key);
	return jr_fail(&L->r, p, "its length overflows the %s scalar type", JR_REAL_NAME);
}

void scene_note(loader* L, const char* path, const char* fmt, ...) {
	if (!L->note) return;
	char line[512];
	int n = snprintf(line, sizeof line, "%s: %s: ", L->r.source, path);
	if (n < 0) n = 0;
	if ((size_t)n < sizeof line) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
		va_end(ap);
	}
	L->note(line, L->note_user);
}

static bool name_ok(const char* s) {
	if (!s[0] || s[0] == '.') return false;
	for (const char* c = s; *c; ++c)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
		      *c == '-' || *c == '.'))
			return false;
	return true;
}

bool scene_build(loader* L, const cJSON* root, const char* default_name, const pbd_scene_options* opt) {
	jr* r = &L->r;
	pbd_scene* s = L->s;
	if (!cJSON_IsObject(root)) return jr_fail(r, "", "the top level must be an object (got %s)", jr_type_name(root));
	static const char* const keys[] = {"name",      "description", "frames", "world",  "objects",
	                                   "colliders", "bodies",      "joints", "render", NULL};
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
	if (!scene_read_render(L, root, &s->render)) return false;

	pbd_world_def def = pbd_world_def_default();
	if (!scene_read_world(L, root, &def)) return false;
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

	const cJSON *objects, *colliders, *bodies, *joints;
	size_t no, ncol, nb, nj, nshapes;
	if (!jr_array(r, root, "", "objects", &objects, &no) || !jr_array(r, root, "", "colliders", &colliders, &ncol) ||
	    !jr_array(r, root, "", "bodies", &bodies, &nb) || !jr_array(r, root, "", "joints", &joints, &nj))
		return false;
	if (!scene_check_total_size(L, objects) || !scene_count_body_shapes(L, bodies, ncol, &nshapes)) return false;
	/* The file's colliders first, so that each keeps its index; the bodies' shapes after them. The
	 * bodies are made before the objects, whose attachments may name them. */
	if (ncol + nshapes > 0) {
		s->colliders = calloc(ncol + nshapes, sizeof *s->colliders);
		s->tracks = ncol ? calloc(ncol, sizeof *s->tracks) : NULL;
		if (!s->colliders || (ncol && !s->tracks)) return jr_fail(r, "colliders", "out of memory");
	}
	if (!scene_read_bodies(L, bodies, (uint32_t)ncol)) return false;
	if (no > 0) {
		s->objects = calloc(no, sizeof *s->objects);
		if (!s->objects) return jr_fail(r, "objects", "out of memory");
	}
	size_t i = 0;
	const char* source = r->source;
	for (const cJSON* o = objects ? objects->child : NULL; o; o = o->next, ++i) {
		char p[JR_PATH_MAX];
		const scene_origin* org = scene_object_place(L, i, p);
		if (org) r->source = org->source;
		pbd_scene_object* so = &s->objects[i];
		snprintf(so->name, sizeof so->name, "object%zu", i);
		s->object_count = (uint32_t)(i + 1); /* counted before reading, so pbd_scene_free sees its lines */
		const bool ok = scene_read_object(L, o, p, so);
		scene_compose_blame(org, r);
		r->source = source;
		if (!ok) return false;
	}
	i = 0;
	const pbd_body_id world_collider = {0, 0};
	for (const cJSON* c = colliders ? colliders->child : NULL; c; c = c->next, ++i) {
		const scene_origin* org = i < L->compose->collider_count ? &L->compose->colliders[i] : NULL;
		char p[JR_PATH_MAX];
		jr_path_index(p, "colliders", i);
		if (org) {
			snprintf(p, sizeof p, "%s", org->path);
			r->source = org->source;
		}
		const bool ok = scene_read_collider(L, c, p, (uint32_t)i, world_collider, &s->colliders[i]);
		r->source = source;
		if (!ok) return false;
		s->collider_count = (uint32_t)(i + 1);
	}
	s->collider_count = (uint32_t)(ncol + nshapes);
	/* Last: a joint made from an anchor takes the bodies where they are when the scene starts. */
	return scene_read_joints(L, joints);
}
