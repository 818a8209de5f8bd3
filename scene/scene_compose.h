/* Reuse inside scene files: "include" (other files' objects, colliders, bodies, materials and
 * templates, merged before the file's own), named "materials" and object "templates". Resolved
 * on the parsed tree before the scene is built, so that the builder sees plain objects; each
 * object and collider keeps where it was written, so that a message names that file and field.
 * Internal to the scene library. */
#ifndef PBD_SCENE_COMPOSE_H
#define PBD_SCENE_COMPOSE_H

#include <stdbool.h>
#include <stdio.h>

#include <cJSON.h>

#include "json_read.h"
#include "pbd/scene.h"

#define SCENE_MAX_INCLUDE_DEPTH 8  /* files included by included files ... */
#define SCENE_MAX_INCLUDES      64 /* files included in all */
/* JSON values that templates and named materials may copy into objects, all uses together: about
 * the tree of the largest file the parser accepts. */
#define SCENE_MAX_COPIED_VALUES (1u << 21)

/* Keys an object took from a template or a named material. */
typedef struct scene_lender {
	const char* source;     /* its file; NULL when nothing was lent */
	char path[JR_PATH_MAX]; /* "templates.flag", "materials.silk" */
	char* keys;             /* each key ended by a 0 byte, the list by an empty key */
} scene_lender;

/* Where one entry of the composed "objects", "colliders" or "bodies" array was written. */
typedef struct scene_origin {
	const char* source;     /* the file */
	char path[JR_PATH_MAX]; /* "objects[2]" in that file */
	scene_lender lent[2];   /* [0] a template's keys, [1] a named material's */
} scene_origin;

typedef struct scene_compose {
	char** sources; /* the included files' names, which the origins point at */
	size_t source_count, source_cap;
	scene_origin* objects; /* one per entry of the composed arrays */
	size_t object_count, object_cap;
	scene_origin* colliders;
	size_t collider_count, collider_cap;
	scene_origin* bodies;
	size_t body_count, body_cap;
} scene_compose;

/* Replaces root's "include", "materials" and "templates" by what they mean: "objects",
 * "colliders" and "bodies" become the included files' entries followed by the file's own, templates and
 * named materials expanded into the objects that use them. `base_dir` is where the root file's
 * relative includes start (NULL = the working directory); with `builtin` they name the embedded
 * scenes/ files instead. False after a message in r. *out is filled either way: free it. */
bool scene_compose_run(jr* r, cJSON* root, const char* base_dir, bool builtin, scene_compose* out);

/* When r's message is about a key an entry took from a template or a named material, points it
 * at the file and path that gave the key. */
void scene_compose_blame(const scene_origin* origin, jr* r);

void scene_compose_free(scene_compose* c);

/* scene_files.c: opens `path` to read only when it is a regular file, without blocking on a FIFO that
 * has no writer. NULL when it cannot be opened (errno says why, *kind is NULL) or is not a
 * regular file (*kind says what it is: "a FIFO", "a directory", "a device" ...). Every file a
 * scene reads (the scene, its includes, its data files) is opened through it. */
FILE* scene_open_regular(const char* path, const char** kind);

/* scene_files.c: a scene file's text, at most PBD_SCENE_MAX_FILE_BYTES, terminated. NULL after a message. */
char* scene_read_text(FILE* fp, const char* path, size_t* out_size, pbd_scene_error* err);

#endif
