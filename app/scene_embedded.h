/* The table that cmake/embed_scenes.cmake generates from the files in scenes/. Internal to the scene
 * library: users go through scene_builtin_at / scene_builtin_find. */
#ifndef PBD_APP_SCENE_EMBEDDED_H
#define PBD_APP_SCENE_EMBEDDED_H

#include "scene.h"

extern const scene_builtin scene_embedded[];
extern const size_t scene_embedded_count;

#endif
