/* The parts of pbd_render that need no GL driver: camera math (projection, picking rays,
 * matrices, orbits), the automatic framing of the seed scenes over their whole runs, smooth
 * normals, the sphere mesh, PNG files, and the video writer's refusals. Runs everywhere. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <stb_image.h>

#include "pbd/render.h"
#include "render_internal.h"
#include "scene_render.h"
#include "test_util.h"

static void test_project_and_ray(void** state) {
	(void)state;
	const pbd_render_camera cam = {{3, 2, 5}, {0, -1, 0}, {0, 1, 0}, 50};
	assert_true(pbd_render_camera_is_valid(&cam));
	const int w = 640, h = 360;
	float view[16], proj[16];
	pbd_render_camera_matrices(&cam, (float)w / h, 0.1f, 100.0f, view, proj);
	for (int k = 0; k < 50; ++k) {
		const float p[3] = {(float)(k % 5) - 2.0f, (float)(k % 7) * 0.5f - 2.0f, (float)(k % 3) - 1.0f};
		float px, py;
		assert_true(pbd_render_camera_project(&cam, w, h, p, &px, &py));
		/* The matrices put the point at the same pixel. */
		float v[4] = {0, 0, 0, 0}, c[4] = {0, 0, 0, 0};
		for (int r = 0; r < 4; ++r) v[r] = view[r] * p[0] + view[4 + r] * p[1] + view[8 + r] * p[2] + view[12 + r];
		for (int r = 0; r < 4; ++r)
			c[r] = proj[r] * v[0] + proj[4 + r] * v[1] + proj[8 + r] * v[2] + proj[12 + r] * v[3];
		assert_near((c[0] / c[3] + 1) * 0.5f * w, px, 1e-2);
		assert_near((1 - c[1] / c[3]) * 0.5f * h, py, 1e-2);
		/* The ray through that pixel passes through the point. */
		float o[3], d[3];
		pbd_render_camera_ray(&cam, w, h, px, py, o, d);
		const float r[3] = {p[0] - o[0], p[1] - o[1], p[2] - o[2]};
		const float t = r[0] * d[0] + r[1] * d[1] + r[2] * d[2];
		const float e[3] = {r[0] - t * d[0], r[1] - t * d[1], r[2] - t * d[2]};
		assert_true(t > 0);
		assert_near(sqrtf(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]), 0, 1e-4);
	}
	/* The target is the image centre; a point behind the eye does not project. */
	float px, py;
	assert_true(pbd_render_camera_project(&cam, w, h, cam.target, &px, &py));
	assert_near(px, w / 2.0, 1e-3);
	assert_near(py, h / 2.0, 1e-3);
	const float behind[3] = {6, 5, 10};
	assert_false(pbd_render_camera_project(&cam, w, h, behind, &px, &py));
	/* Degenerate cameras are refused. */
	pbd_render_camera bad = cam;
	memcpy(bad.eye, bad.target, sizeof bad.eye);
	assert_false(pbd_render_camera_is_valid(&bad));
	bad = cam;
	bad.up[0] = bad.target[0] - bad.eye[0];
	bad.up[1] = bad.target[1] - bad.eye[1];
	bad.up[2] = bad.target[2] - bad.eye[2];
	assert_false(pbd_render_camera_is_valid(&bad));
	bad = cam;
	bad.fov_y = 180;
	assert_false(pbd_render_camera_is_valid(&bad));
	bad = cam;
	bad.eye[1] = NAN;
	assert_false(pbd_render_camera_is_valid(&bad));
}

static void test_orbit(void** state) {
	(void)state;
	const pbd_render_orbit o = {{1, 2, 3}, 7, -120, 35, 45};
	const pbd_render_camera c = pbd_render_camera_from_orbit(&o);
	const float d[3] = {c.eye[0] - c.target[0], c.eye[1] - c.target[1], c.eye[2] - c.target[2]};
	assert_near(sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), 7, 1e-4);
	assert_near(d[1], 7 * sin(35 * 3.14159265358979 / 180), 1e-4);
	const pbd_render_orbit back = pbd_render_orbit_from_camera(&c);
	assert_near(back.distance, 7, 1e-4);
	assert_near(back.yaw, -120, 1e-3);
	assert_near(back.pitch, 35, 1e-3);
	assert_near(back.fov_y, 45, 0);
	assert_near(back.target[2], 3, 0);
	/* Yaw 0 looks along -z from the +z side. */
	const pbd_render_orbit front = {{0, 0, 0}, 2, 0, 0, 40};
	const pbd_render_camera f = pbd_render_camera_from_orbit(&front);
	assert_near(f.eye[2], 2, 1e-6);
	assert_near(f.eye[0], 0, 1e-6);
}

static void test_frame_box(void** state) {
	(void)state;
	const pbd_render_bounds b = {{-1, -2, -3}, {4, 1, 0}};
	for (int k = 0; k < 4; ++k) {
		const float aspect = k < 2 ? 16.0f / 9.0f : 0.5f;
		const pbd_render_orbit o = pbd_render_orbit_frame(&b, aspect, 40, (float)(k * 70 - 100), (float)(k * 20 - 10));
		const pbd_render_camera c = pbd_render_camera_from_orbit(&o);
		const int h = 500, w = (int)(h * aspect);
		float lo_x = 1e9f, hi_x = -1e9f, lo_y = 1e9f, hi_y = -1e9f;
		for (int corner = 0; corner < 8; ++corner) {
			const float p[3] = {(corner & 1) ? b.max[0] : b.min[0], (corner & 2) ? b.max[1] : b.min[1],
			                    (corner & 4) ? b.max[2] : b.min[2]};
			float px, py;
			assert_true(pbd_render_camera_project(&c, w, h, p, &px, &py));
			lo_x = fminf(lo_x, px);
			hi_x = fmaxf(hi_x, px);
			lo_y = fminf(lo_y, py);
			hi_y = fmaxf(hi_y, py);
		}
		/* All inside, filling the image in one direction (a margin of about 5%), and centred. */
		assert_true(lo_x >= 0 && lo_y >= 0 && hi_x <= w && hi_y <= h);
		const float fill = fmaxf((hi_x - lo_x) / w, (hi_y - lo_y) / h);
		assert_true(fill > 0.8f && fill < 0.95f);
		assert_near(0.5f * (lo_x + hi_x), w / 2.0, 0.03 * w);
		assert_near(0.5f * (lo_y + hi_y), h / 2.0, 0.03 * h);
	}
	/* An empty box frames something sensible. */
	pbd_render_bounds empty = {{1, 1, 1}, {0, 0, 0}};
	const pbd_render_orbit o = pbd_render_orbit_frame(&empty, 1, 40, 0, 0);
	assert_true(o.distance > 0 && isfinite(o.distance));
}

/* The automatic camera of each seed scene (its render.camera left out) keeps every particle of
 * the whole run in the image: the framing from the initial state anticipates the fall and the
 * swing. */
static void test_framing_covers_runs(void** state) {
	(void)state;
	const char* seeds[] = {"cloth_sphere", "double_pendulum", "hanging_cloth", "rope"};
	for (size_t i = 0; i < 4; ++i) {
		pbd_scene s;
		pbd_scene_error err;
		if (!pbd_scene_load_builtin(seeds[i], NULL, &s, &err)) fail_msg("%s", err.message);
		s.render.has_eye = s.render.has_target = s.render.has_up = s.render.has_fov = false;
		scene_view v;
		if (!scene_view_make(&s, 640, 480, &v, &err)) fail_msg("%s", err.message);
		const uint32_t n = pbd_world_particle_count(s.world);
		uint32_t outside = 0, total = 0;
		for (int f = 0; f <= s.frames; ++f) {
			if (f > 0) assert_int_equal(pbd_world_step(s.world), PBD_OK);
			const pbd_vec3* x = pbd_world_positions(s.world);
			for (uint32_t k = 0; k < n; ++k) {
				const float p[3] = {(float)x[k].x, (float)x[k].y, (float)x[k].z};
				float px, py;
				const bool in = pbd_render_camera_project(&v.camera, 640, 480, p, &px, &py) && px >= 0 && py >= 0 &&
				                px <= 640 && py <= 480;
				outside += in ? 0u : 1u;
				++total;
			}
		}
		printf("%s: %u of %u particle-frames outside the automatic frame\n", seeds[i], outside, total);
		if (outside > 0) fail_msg("%s: %u of %u particle-frames leave the automatic frame", seeds[i], outside, total);
		scene_view_free(&v);
		pbd_scene_free(&s);
	}
}

static void test_smooth_normals(void** state) {
	(void)state;
	/* A flat quad in the xz plane, counter-clockwise seen from +y: every normal is +y. */
	const float flat[12] = {0, 0, 0, 0, 0, 1, 1, 0, 1, 1, 0, 0};
	const uint32_t quad[6] = {0, 1, 2, 0, 2, 3};
	float n[12];
	render_smooth_normals(flat, 4, quad, 2, n);
	for (int i = 0; i < 4; ++i) {
		assert_near(n[3 * i], 0, 1e-6);
		assert_near(n[3 * i + 1], 1, 1e-6);
		assert_near(n[3 * i + 2], 0, 1e-6);
	}
	/* A slope made of two triangles: unit normals on its corners, zero on a vertex of none. */
	const float tent[15] = {0, 1, 0, 0, 1, 1, -1, 0, 0, -1, 0, 1, 2, -1, 0.5f};
	const uint32_t tris[6] = {0, 1, 3, 0, 3, 2};
	float tn[15];
	render_smooth_normals(tent, 5, tris, 2, tn);
	for (int i = 0; i < 3; ++i)
		assert_near(tn[3 * i] * tn[3 * i] + tn[3 * i + 1] * tn[3 * i + 1] + tn[3 * i + 2] * tn[3 * i + 2], 1, 1e-5);
	/* Vertex 4 is in no triangle: zero, not NaN. */
	assert_near(tn[12], 0, 0);
	assert_near(tn[13], 0, 0);
	const float ridge[9] = {0, 1, 0, 0, 1, 1, 2, -1, 0.5f};
	const uint32_t two[6] = {0, 1, 2, 0, 2, 1}; /* the same triangle both ways: they cancel */
	float rn[9];
	render_smooth_normals(ridge, 3, two, 2, rn);
	for (int i = 0; i < 9; ++i) assert_true(rn[i] == 0.0f);
	/* Area weighting: a big and a small face, their normals mix by area. */
	const float hinge[12] = {0, 0, 0, 0, 0, 1, 4, 0, 0, 0, 1, 0};
	const uint32_t ht[6] = {0, 1, 2, 0, 3, 1}; /* (0,1,2) in the xz plane, area 2; (0,3,1) in yz, area 0.5 */
	float hn[12];
	render_smooth_normals(hinge, 4, ht, 2, hn);
	/* Vertex 0 sums the cross products (0, 4, 0) and (1, 0, 0): twice each face's area. */
	const float ny = fabsf(hn[1]), nx = fabsf(hn[0]);
	assert_near(ny / nx, 4.0, 1e-4);
}

static void test_sphere_mesh(void** state) {
	(void)state;
	render_mesh m;
	assert_true(render_mesh_uv_sphere(16, 8, &m));
	assert_int_equal(m.index_count, 16 * 8 * 6);
	for (uint32_t i = 0; i < m.vertex_count; ++i) {
		const float* p = m.positions + 3 * i;
		assert_near(p[0] * p[0] + p[1] * p[1] + p[2] * p[2], 1, 1e-5);
		assert_near(m.normals[3 * i + 1], p[1], 0);
	}
	/* Counter-clockwise from outside: each non-degenerate face's normal points outwards. */
	uint32_t faces = 0;
	for (uint32_t t = 0; t < m.index_count / 3; ++t) {
		const float* a = m.positions + 3 * m.indices[3 * t];
		const float* b = m.positions + 3 * m.indices[3 * t + 1];
		const float* c = m.positions + 3 * m.indices[3 * t + 2];
		const float e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
		const float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
		                    e1[0] * e2[1] - e1[1] * e2[0]};
		const float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
		if (len < 1e-6f) continue; /* the triangles that touch a pole */
		const float centroid[3] = {a[0] + b[0] + c[0], a[1] + b[1] + c[1], a[2] + b[2] + c[2]};
		assert_true(n[0] * centroid[0] + n[1] * centroid[1] + n[2] * centroid[2] > 0);
		++faces;
	}
	assert_true(faces >= 16 * 6);
	render_mesh_free(&m);
	assert_false(render_mesh_uv_sphere(2, 8, &m));
}

static void test_png_round_trip(void** state) {
	(void)state;
	const int w = 7, h = 3; /* odd width: rows are not padded */
	uint8_t rgb[7 * 3 * 3];
	for (int i = 0; i < w * h * 3; ++i) rgb[i] = (uint8_t)(i * 11);
	pbd_error e;
	if (!pbd_render_write_png("test_render_math.png", w, h, rgb, &e)) fail_msg("%s", e.message);
	int iw, ih, ch;
	uint8_t* back = stbi_load("test_render_math.png", &iw, &ih, &ch, 3);
	assert_non_null(back);
	assert_int_equal(iw, w);
	assert_int_equal(ih, h);
	assert_int_equal(memcmp(back, rgb, sizeof rgb), 0);
	stbi_image_free(back);
	assert_false(pbd_render_write_png("no_such_folder/x.png", w, h, rgb, &e));
	assert_non_null(strstr(e.message, "no_such_folder/x.png: cannot write PNG"));
	assert_false(pbd_render_write_png("x.png", 0, h, rgb, &e));
}

static void test_video_refusals(void** state) {
	(void)state;
	pbd_render_video_format f;
	assert_true(pbd_render_video_format_of("a/b.mp4", &f));
	assert_int_equal(f, PBD_RENDER_VIDEO_MP4);
	assert_true(pbd_render_video_format_of("B.GIF", &f));
	assert_int_equal(f, PBD_RENDER_VIDEO_GIF);
	assert_false(pbd_render_video_format_of("a.mp4/b", &f));
	assert_false(pbd_render_video_format_of("movie.avi", &f));
	assert_false(pbd_render_video_format_of("mp4", &f));
	/* Without ffmpeg on the PATH: a clear message, no process. */
	const char* old = getenv("PATH");
	char* saved = old ? strdup(old) : NULL;
	mkdir("test_render_empty_bin", 0777);
	setenv("PATH", "test_render_empty_bin", 1);
	pbd_render_video* v = NULL;
	pbd_error e;
	assert_false(pbd_render_video_open("x.mp4", PBD_RENDER_VIDEO_MP4, 64, 48, 30, &v, &e));
	assert_null(v);
	assert_non_null(strstr(e.message, "ffmpeg is not on the PATH"));
	if (saved) {
		setenv("PATH", saved, 1);
		free(saved);
	} else {
		unsetenv("PATH");
	}
	assert_false(pbd_render_video_open("x.mp4", PBD_RENDER_VIDEO_MP4, 0, 48, 30, &v, &e));
	assert_false(pbd_render_video_open("x.mp4", PBD_RENDER_VIDEO_MP4, 64, 48, 0, &v, &e));
	assert_true(pbd_render_video_close(NULL, &e));
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_project_and_ray), cmocka_unit_test(test_orbit),
	    cmocka_unit_test(test_frame_box),       cmocka_unit_test(test_framing_covers_runs),
	    cmocka_unit_test(test_smooth_normals),  cmocka_unit_test(test_sphere_mesh),
	    cmocka_unit_test(test_png_round_trip),  cmocka_unit_test(test_video_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
