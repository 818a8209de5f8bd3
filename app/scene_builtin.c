/* The built-in scenes: the files of scenes/ compiled in by cmake/embed_scenes.cmake, and the
 * data files of scenes/data/ they refer to, compiled in by app/embed_data.cmake. */
#include <stdio.h>
#include <string.h>

#include <cJSON.h>

#include "json_read.h"
#include "pbd/scene.h"
#include "scene_embedded.h"

size_t scene_builtin_count(void) { return scene_embedded_count; }

const scene_builtin* scene_builtin_at(size_t index) {
	return index < scene_embedded_count ? &scene_embedded[index] : NULL;
}

const scene_builtin* scene_builtin_find(const char* name) {
	if (!name) return NULL;
	for (size_t i = 0; i < scene_embedded_count; ++i)
		if (strcmp(scene_embedded[i].name, name) == 0) return &scene_embedded[i];
	return NULL;
}

void scene_builtin_description(const scene_builtin* builtin, char* out, size_t out_size) {
	if (!out || out_size == 0) return;
	out[0] = '\0';
	if (!builtin) return;
	jr_install_hooks();
	cJSON* root = cJSON_ParseWithLength((const char*)builtin->json, builtin->size);
	const cJSON* d = cJSON_GetObjectItemCaseSensitive(root, "description");
	if (cJSON_IsString(d) && d->valuestring) snprintf(out, out_size, "%s", d->valuestring);
	cJSON_Delete(root);
}

bool scene_load_builtin(const char* name, const scene_options* options, scene* out, scene_error* err) {
	const scene_builtin* b = scene_builtin_find(name);
	if (!b) {
		memset(out, 0, sizeof *out);
		scene_error_set(err, "%s: no such built-in scene (see `pbd list`)", name ? name : "(null)");
		return false;
	}
	char source[SCENE_NAME_MAX + 16];
	snprintf(source, sizeof source, "builtin:%s.json", b->name);
	/* A built-in has no folder of its own: relative paths name the embedded data files, or else
	 * start in the working directory. */
	return scene_load_builtin_text((const char*)b->json, b->size, source, options, out, err);
}

const scene_data_file* scene_data_find(const char* path) {
	if (!path) return NULL;
	while (path[0] == '.' && path[1] == '/') path += 2;
	for (size_t i = 0; i < scene_data_embedded_count; ++i)
		if (strcmp(scene_data_embedded[i].name, path) == 0) return &scene_data_embedded[i];
	return NULL;
}
