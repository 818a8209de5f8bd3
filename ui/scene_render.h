/* A scene's "render" settings resolved against its world, for pbd_render: image size, camera
 * (the file's fields, the automatic framing for the rest), style, and what to draw. Used by
 * `pbd run --render`, the viewer and the rendering test, so all three see the same picture.
 * Built only with pbd_render. */
#ifndef PBD_UI_SCENE_RENDER_H
#define PBD_UI_SCENE_RENDER_H

#include <stdbool.h>

#include "pbd/render.h"
#include "pbd/scene.h"

/// Image size when neither the command line nor the scene gives one.
#define SCENE_RENDER_DEFAULT_WIDTH  960
#define SCENE_RENDER_DEFAULT_HEIGHT 540

typedef struct scene_view {
	int width, height;
	pbd_render_camera camera;
	pbd_render_style style;
	pbd_render_scene draw; ///< the world, the scene's colliders, and the lines of its objects
	uint32_t* lines;       ///< owned: every object's lines, concatenated
} scene_view;

/// Resolves the settings. Call it on the state the camera should frame (the initial one for a
/// run). `width`/`height` > 0 override the scene's. Fails (one line in err, "render.camera: ...")
/// when the camera the file and the framing make together is degenerate.
bool scene_view_make(const pbd_scene* s, int width, int height, scene_view* out, pbd_scene_error* err);

/// Turns the style's overlays on and off as `overlays` (SCENE_OVERLAY_* bits) says.
void scene_view_set_overlays(pbd_render_style* style, unsigned overlays);

void scene_view_free(scene_view* v);

#endif
