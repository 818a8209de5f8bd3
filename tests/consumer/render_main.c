/* Frames a built-in scene with the installed renderer's camera and, where an EGL device is there,
 * draws it offscreen and checks that the cloth covers part of the image. */
#include <stdio.h>
#include <stdlib.h>

#include <pbd/render.h>
#include <pbd/scene.h>

int main(void) {
	pbd_scene s;
	pbd_scene_error serr;
	if (!pbd_scene_load_builtin("cloth_sphere", NULL, &s, &serr)) {
		fprintf(stderr, "%s\n", serr.message);
		return 1;
	}
	pbd_render_scene sc = {s.world, s.colliders, s.collider_count, NULL, 0};
	const int w = 160, h = 90;
	pbd_render_camera cam = pbd_render_camera_frame(&sc, (float)w / (float)h);
	if (!pbd_render_camera_is_valid(&cam)) return 1;
	/* The framing keeps every particle in view. */
	const pbd_vec3* x = pbd_world_positions(s.world);
	for (uint32_t i = 0; i < pbd_world_particle_count(s.world); ++i) {
		float p[3] = {(float)x[i].x, (float)x[i].y, (float)x[i].z}, px, py;
		if (!pbd_render_camera_project(&cam, w, h, p, &px, &py) || px < 0 || py < 0 || px > w || py > h) return 1;
	}
	int rc = 0;
	pbd_error err;
	pbd_render_offscreen* off = NULL;
	if (!pbd_render_offscreen_create(w, h, 4, &off, &err)) {
		printf("render: camera checked; no offscreen context here (%s)\n", err.message);
	} else {
		pbd_renderer* r = NULL;
		uint8_t* rgb = malloc((size_t)w * h * 3);
		pbd_render_style style = pbd_render_style_default();
		if (!rgb || !pbd_renderer_create(&r, &err) || !pbd_renderer_update(r, &sc)) {
			rc = 1;
		} else {
			pbd_render_offscreen_bind(off);
			pbd_renderer_draw(r, &cam, &style, w, h);
			if (!pbd_render_offscreen_read(off, rgb, &err)) rc = 1;
			/* The background is a vertical gradient: a pixel unlike its row's first shows the scene. */
			size_t drawn = 0;
			for (size_t i = 0; rc == 0 && i < (size_t)w * h; ++i) {
				const uint8_t* row = rgb + 3 * (i / (size_t)w) * (size_t)w;
				drawn += rgb[3 * i] != row[0] || rgb[3 * i + 1] != row[1] || rgb[3 * i + 2] != row[2];
			}
			printf("render: %zu of %d pixels drawn on %s\n", drawn, w * h, pbd_render_offscreen_device(off));
			if (drawn < (size_t)(w * h) / 20) rc = 1;
		}
		if (r) pbd_renderer_destroy(r);
		pbd_render_offscreen_destroy(off);
		free(rgb);
	}
	pbd_scene_free(&s);
	return rc;
}
