/* A scene's render settings -> camera, style and draw list for pbd_render. */
#include "scene_render.h"

#include <stdlib.h>
#include <string.h>

static pbd_render_rgb rgb_of(const float c[3]) { return (pbd_render_rgb){c[0], c[1], c[2]}; }

void scene_view_set_overlays(pbd_render_style* style, unsigned overlays) {
	style->show_particles = (overlays & PBD_SCENE_OVERLAY_PARTICLES) != 0;
	style->show_constraints = (overlays & PBD_SCENE_OVERLAY_CONSTRAINTS) != 0;
	style->show_pinned = (overlays & PBD_SCENE_OVERLAY_PINNED) != 0;
	style->show_contacts = (overlays & PBD_SCENE_OVERLAY_CONTACTS) != 0;
}

bool scene_view_make(const pbd_scene* s, int width, int height, scene_view* out, pbd_scene_error* err) {
	memset(out, 0, sizeof *out);
	const pbd_scene_render* sr = &s->render;
	out->width = width > 0 ? width : (sr->width > 0 ? sr->width : SCENE_RENDER_DEFAULT_WIDTH);
	out->height = height > 0 ? height : (sr->height > 0 ? sr->height : SCENE_RENDER_DEFAULT_HEIGHT);

	/* Lines: every object's, so a rope with bend links shows its links only. */
	uint64_t n = 0;
	for (uint32_t i = 0; i < s->object_count; ++i) n += s->objects[i].line_count;
	if (n > 0) {
		out->lines = malloc((size_t)n * 2 * sizeof *out->lines);
		if (!out->lines) {
			pbd_scene_error_set(err, "%s: out of memory", s->name);
			return false;
		}
		size_t k = 0;
		for (uint32_t i = 0; i < s->object_count; ++i) {
			const pbd_scene_object* o = &s->objects[i];
			memcpy(out->lines + k, o->lines, (size_t)o->line_count * 2 * sizeof *o->lines);
			k += (size_t)o->line_count * 2;
		}
	}
	/* An object without triangles and without lines (a particles object with no constraints)
	 * still has its particles drawn as balls; handing the renderer a non-NULL empty list keeps
	 * it from drawing the constraints of other triangle-free objects twice. */
	static const uint32_t no_lines[2] = {0, 0};
	out->draw =
	    (pbd_render_scene){s->world, s->colliders, s->collider_count, out->lines ? out->lines : no_lines, (uint32_t)n};

	pbd_render_style st = pbd_render_style_default();
	if (sr->has_cloth_color) st.cloth_front = rgb_of(sr->cloth_color);
	if (sr->has_back_color) st.cloth_back = rgb_of(sr->back_color);
	if (sr->has_collider_color) st.collider = rgb_of(sr->collider_color);
	if (sr->has_background) {
		st.background_top = rgb_of(sr->background_top);
		st.background_bottom = rgb_of(sr->background_bottom);
	}
	if (sr->has_overlays) scene_view_set_overlays(&st, sr->overlays);
	out->style = st;

	/* The automatic camera frames what the initial state can reach; the file's fields replace
	 * its parts. An eye without a target looks at the framed centre; a target without an eye
	 * is seen from the automatic direction and distance. */
	const float aspect = (float)out->width / (float)out->height;
	const float fov = sr->has_fov ? (float)sr->fov : PBD_RENDER_DEFAULT_FOV;
	const pbd_render_orbit orbit =
	    pbd_render_orbit_frame_scene(&out->draw, aspect, fov, PBD_RENDER_DEFAULT_YAW, PBD_RENDER_DEFAULT_PITCH);
	pbd_render_camera cam = pbd_render_camera_from_orbit(&orbit);
	const float offset[3] = {cam.eye[0] - cam.target[0], cam.eye[1] - cam.target[1], cam.eye[2] - cam.target[2]};
	if (sr->has_target) {
		cam.target[0] = (float)sr->target.x;
		cam.target[1] = (float)sr->target.y;
		cam.target[2] = (float)sr->target.z;
		for (int k = 0; k < 3; ++k) cam.eye[k] = cam.target[k] + offset[k];
	}
	if (sr->has_eye) {
		cam.eye[0] = (float)sr->eye.x;
		cam.eye[1] = (float)sr->eye.y;
		cam.eye[2] = (float)sr->eye.z;
	}
	if (sr->has_up) {
		cam.up[0] = (float)sr->up.x;
		cam.up[1] = (float)sr->up.y;
		cam.up[2] = (float)sr->up.z;
	}
	cam.fov_y = fov;
	if (!pbd_render_camera_is_valid(&cam)) {
		pbd_scene_error_set(err, "%s: render.camera: %s", s->name,
		                    sr->has_eye && !sr->has_target
		                        ? "the eye is at the framed centre or straight along up from it; give a target"
		                        : "the view direction is along up; give another up or eye");
		scene_view_free(out);
		return false;
	}
	out->camera = cam;
	return true;
}

void scene_view_free(scene_view* v) {
	if (!v) return;
	free(v->lines);
	memset(v, 0, sizeof *v);
}
