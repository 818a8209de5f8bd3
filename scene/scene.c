/* The scene library's entry points: a scene file, text or built-in scene parsed, composed
 * (scene_compose.c) and built into a world (scene_build.c); and freed. */
#include "pbd/scene.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene_internal.h"

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
	L.note = options ? options->log : NULL;
	L.note_user = options ? options->log_user : NULL;
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
	bool ok = scene_compose_run(&L.r, root, base_dir, builtin, &comp) && scene_build(&L, root, default_name, options);
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
	for (uint32_t i = 0; i < s->body_count; ++i) free(s->bodies[i].track.keys);
	free(s->bodies);
	free(s->joints);
	memset(s, 0, sizeof *s);
}
