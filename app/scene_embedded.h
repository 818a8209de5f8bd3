/* The tables that cmake/embed_scenes.cmake and app/embed_data.cmake generate from the files in
 * scenes/ and scenes/data/. Internal to the scene library: users go through scene_builtin_at /
 * scene_builtin_find. */
#ifndef PBD_APP_SCENE_EMBEDDED_H
#define PBD_APP_SCENE_EMBEDDED_H

#include "pbd/scene.h"

extern const scene_builtin scene_embedded[];
extern const size_t scene_embedded_count;

/* A data file of scenes/data/, named by its path relative to scenes/ ("data/terrain.pgm"). */
typedef struct scene_data_file {
	const char* name;
	const unsigned char* bytes; /* followed by a 0 byte */
	size_t size;                /* the 0 not counted */
} scene_data_file;

extern const scene_data_file scene_data_embedded[];
extern const size_t scene_data_embedded_count;

/* The embedded data file that a built-in scene's relative path names ("data/x.obj",
 * "./data/x.obj"); NULL if none. */
const scene_data_file* scene_data_find(const char* path);

/* scene_load_string for a built-in scene: relative file names are looked up among the embedded
 * data files first, then in the working directory. */
bool scene_load_builtin_text(const char* text, size_t size, const char* source, const scene_options* options,
                             scene* out, scene_error* err);

#endif
