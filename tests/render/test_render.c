/* Headless rendering: the default scene drawn offscreen (EGL) after some frames and written to
 * PNG, then checked as an image: its size, that it is not blank, that the cloth's particles
 * land on cloth-colored pixels where nothing hides them, and that the sphere shows where the
 * cloth does not cover it and is covered where the cloth is in front. Positions are projected
 * with the camera `pbd run --render` uses (scene_view_make), so the test sees what users see.
 *
 * Skipped (exit status 77) when no OpenGL driver can be had, never failed for it. Floating-point
 * traps stay off here: the GL driver's own code (Mesa's shader compiler and rasteriser) is free
 * to compute infinities and NaNs internally. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stb_image.h>

#include "pbd/math.h"
#include "pbd/render.h"
#include "render_internal.h"
#include "scene_render.h"
#include "test_util.h"

/* ---- images ------------------------------------------------------------------------------- */

typedef enum pixel_kind {
	PIXEL_OTHER = 0,
	PIXEL_CLOTH,
	PIXEL_COLLIDER,
	PIXEL_BODY,
	PIXEL_BACKGROUND,
	PIXEL_JOINT,
	PIXEL_CONTACT
} pixel_kind;

/* Tells the default style's colors apart by hue, whatever the lighting: the joints magenta (red
 * and blue well above green), the contacts green (well above both), the cloth warm (red well
 * above blue, front terracotta or back mustard), the colliders blue, the dynamic bodies teal
 * (green above blue), the background grey. */
static pixel_kind classify(const uint8_t* p) {
	const int r = p[0], g = p[1], b = p[2];
	if (r > g + 60 && b > g + 60) return PIXEL_JOINT;
	if (g > r + 80 && g > b + 80) return PIXEL_CONTACT;
	if (r > b + 40 && r >= g) return PIXEL_CLOTH;
	if (b > r + 30 && b >= g) return PIXEL_COLLIDER;
	if (g > r + 40 && g >= b) return PIXEL_BODY;
	if (abs(r - b) < 30 && abs(r - g) < 30 && r > 120) return PIXEL_BACKGROUND;
	return PIXEL_OTHER;
}

/* Whether a pixel of `kind` lies within `radius` pixels of (x, y). */
static bool kind_near(const uint8_t* img, int w, int h, float x, float y, int radius, pixel_kind kind) {
	const int cx = (int)floorf(x), cy = (int)floorf(y);
	for (int dy = -radius; dy <= radius; ++dy)
		for (int dx = -radius; dx <= radius; ++dx) {
			const int px = cx + dx, py = cy + dy;
			if (px < 0 || py < 0 || px >= w || py >= h) continue;
			if (classify(img + 3 * ((size_t)py * (size_t)w + (size_t)px)) == kind) return true;
		}
	return false;
}

static bool inside(int w, int h, float x, float y, float margin) {
	return x >= margin && y >= margin && x <= (float)w - margin && y <= (float)h - margin;
}

/* ---- geometry on the CPU, to know what should be visible ----------------------------------- */

static void sub3(const float a[3], const float b[3], float o[3]) {
	o[0] = a[0] - b[0];
	o[1] = a[1] - b[1];
	o[2] = a[2] - b[2];
}
static float dot3(const float a[3], const float b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void cross3(const float a[3], const float b[3], float o[3]) {
	o[0] = a[1] * b[2] - a[2] * b[1];
	o[1] = a[2] * b[0] - a[0] * b[2];
	o[2] = a[0] * b[1] - a[1] * b[0];
}

static void pos_of(const pbd_world* w, uint32_t i, float out[3]) {
	const pbd_vec3 p = pbd_world_positions(w)[i];
	out[0] = (float)p.x;
	out[1] = (float)p.y;
	out[2] = (float)p.z;
}

/* Does the segment from `eye` to `p` pass through one of the world's triangles before p
 * (Möller-Trumbore)? Triangles with p as a corner do not count. */
static bool cloth_hides(const pbd_world* w, const float eye[3], const float p[3], uint32_t skip_vertex) {
	const uint32_t nt = pbd_world_triangle_count(w);
	const uint32_t* t = pbd_world_triangles(w);
	float d[3];
	sub3(p, eye, d);
	for (uint32_t k = 0; k < nt; ++k) {
		if (t[3 * k] == skip_vertex || t[3 * k + 1] == skip_vertex || t[3 * k + 2] == skip_vertex) continue;
		float a[3], b[3], c[3], e1[3], e2[3], q[3], s[3], r[3];
		pos_of(w, t[3 * k], a);
		pos_of(w, t[3 * k + 1], b);
		pos_of(w, t[3 * k + 2], c);
		sub3(b, a, e1);
		sub3(c, a, e2);
		cross3(d, e2, q);
		const float det = dot3(e1, q);
		if (fabsf(det) < 1e-12f) continue;
		const float inv = 1.0f / det;
		sub3(eye, a, s);
		const float u = dot3(s, q) * inv;
		if (u < 0 || u > 1) continue;
		cross3(s, e1, r);
		const float v = dot3(d, r) * inv;
		if (v < 0 || u + v > 1) continue;
		const float tt = dot3(e2, r) * inv;
		if (tt > 1e-4f && tt < 1.0f - 1e-4f) return true;
	}
	return false;
}

/* Does the segment from `eye` to `p` pass through the ball (c, radius) before p? */
static bool ball_hides(const float eye[3], const float p[3], const float c[3], float radius) {
	float d[3], m[3];
	sub3(p, eye, d);
	sub3(eye, c, m);
	const float a = dot3(d, d), b = dot3(m, d), cc = dot3(m, m) - radius * radius;
	const float disc = b * b - a * cc;
	if (disc <= 0) return false;
	const float t = (-b - sqrtf(disc)) / a;
	return t > 0 && t < 0.999f;
}

/* ---- fixture ------------------------------------------------------------------------------ */

typedef struct drawn {
	pbd_scene s;
	scene_view view;
	pbd_render_offscreen* off;
	pbd_renderer* r;
	uint8_t* rgb;
} drawn;

static void open_scene(drawn* d, const char* name, int steps) {
	memset(d, 0, sizeof *d);
	pbd_scene_error err;
	if (!pbd_scene_load_builtin(name, NULL, &d->s, &err)) fail_msg("%s", err.message);
	/* The camera frames the initial state, as in a run. */
	if (!scene_view_make(&d->s, 0, 0, &d->view, &err)) fail_msg("%s", err.message);
	pbd_error e;
	if (!pbd_render_offscreen_create(d->view.width, d->view.height, 4, &d->off, &e)) fail_msg("%s", e.message);
	if (!pbd_renderer_create(&d->r, &e)) fail_msg("%s", e.message);
	/* The renderer first sees the initial state, as in a run (its automatic sizes follow it). */
	if (!pbd_renderer_update(d->r, &d->view.draw)) fail_msg("%s", pbd_renderer_last_error(d->r));
	for (int f = 0; f < steps; ++f) assert_int_equal(pbd_world_step(d->s.world), PBD_OK);
	d->rgb = malloc((size_t)d->view.width * (size_t)d->view.height * 3);
	assert_non_null(d->rgb);
}

static void draw(drawn* d, const pbd_render_style* style) {
	pbd_error e;
	pbd_render_offscreen_bind(d->off);
	if (!pbd_renderer_update(d->r, &d->view.draw)) fail_msg("%s", pbd_renderer_last_error(d->r));
	if (!pbd_renderer_draw(d->r, &d->view.camera, style ? style : &d->view.style, d->view.width, d->view.height))
		fail_msg("%s", pbd_renderer_last_error(d->r));
	if (!pbd_render_offscreen_read(d->off, d->rgb, &e)) fail_msg("%s", e.message);
}

static void close_scene(drawn* d) {
	pbd_renderer_destroy(d->r);
	pbd_render_offscreen_destroy(d->off);
	free(d->rgb);
	scene_view_free(&d->view);
	pbd_scene_free(&d->s);
}

/* ---- the default scene -------------------------------------------------------------------- */

#define CLOTH_FRAMES 120 /* 4 s: the cloth has fallen onto the sphere and hangs over it */

static void test_cloth_sphere_png(void** state) {
	(void)state;
	drawn d;
	open_scene(&d, "cloth_sphere", CLOTH_FRAMES);
	draw(&d, NULL);
	const int w = d.view.width, h = d.view.height;

	/* Through a PNG file and back: what is checked is what was written. */
	pbd_error e;
	const char* path = "test_render_cloth_sphere.png";
	if (!pbd_render_write_png(path, w, h, d.rgb, &e)) fail_msg("%s", e.message);
	int iw = 0, ih = 0, channels = 0;
	uint8_t* img = stbi_load(path, &iw, &ih, &channels, 3);
	assert_non_null(img);
	assert_int_equal(iw, d.s.render.width);
	assert_int_equal(ih, d.s.render.height);
	assert_int_equal(memcmp(img, d.rgb, (size_t)w * (size_t)h * 3), 0);

	/* Not blank: the luminance varies, and the corners show the background. */
	double sum = 0, sum2 = 0;
	for (size_t i = 0; i < (size_t)w * (size_t)h; ++i) {
		const double y = 0.2126 * img[3 * i] + 0.7152 * img[3 * i + 1] + 0.0722 * img[3 * i + 2];
		sum += y;
		sum2 += y * y;
	}
	const double n = (double)w * h, mean = sum / n, var = sum2 / n - mean * mean;
	if (!(var > 200)) fail_msg("the image is nearly uniform (luminance variance %g)", var);
	assert_int_equal(classify(img), PIXEL_BACKGROUND);
	assert_int_equal(classify(img + 3 * ((size_t)w - 1)), PIXEL_BACKGROUND);

	/* The cloth: its inner particles that the sphere does not hide sit on cloth pixels. */
	const pbd_render_camera* cam = &d.view.camera;
	pbd_collider_def sphere;
	assert_int_equal(pbd_collider_get_def(d.s.world, d.s.colliders[0], &sphere), PBD_OK);
	assert_int_equal(sphere.type, PBD_SHAPE_SPHERE);
	const float c[3] = {(float)sphere.shape.sphere.center.x, (float)sphere.shape.sphere.center.y,
	                    (float)sphere.shape.sphere.center.z};
	const float radius = (float)sphere.shape.sphere.radius * (1.0f - d.view.style.collider_inset);
	const pbd_soft_info* cloth = &d.s.objects[0].range;
	const uint32_t nx = 21;
	int checked = 0, on_cloth = 0;
	for (uint32_t j = 1; j + 1 < nx; ++j)
		for (uint32_t i = 1; i + 1 < nx; ++i) {
			float p[3], px, py;
			pos_of(d.s.world, cloth->first_particle + j * nx + i, p);
			if (!pbd_render_camera_project(cam, w, h, p, &px, &py) || !inside(w, h, px, py, 3)) continue;
			if (ball_hides(cam->eye, p, c, radius)) continue;
			++checked;
			on_cloth += kind_near(img, w, h, px, py, 1, PIXEL_CLOTH) ? 1 : 0;
		}
	if (checked < 100 || on_cloth < checked * 95 / 100)
		fail_msg("cloth: %d of %d visible inner particles on cloth-colored pixels", on_cloth, checked);

	/* The sphere: points on its near side show its color where no cloth triangle is in front,
	 * and the cloth's where one is; both kinds must exist (it lies under the cloth). */
	int bare = 0, bare_ok = 0, covered = 0, covered_ok = 0;
	const int samples = 600;
	for (int k = 0; k < samples; ++k) {
		/* Fibonacci sphere: evenly spread directions. */
		const float z = 1.0f - 2.0f * ((float)k + 0.5f) / (float)samples;
		const float rho = sqrtf(1.0f - z * z), phi = 2.39996323f * (float)k;
		const float dir[3] = {rho * cosf(phi), z, rho * sinf(phi)};
		const float p[3] = {c[0] + radius * dir[0], c[1] + radius * dir[1], c[2] + radius * dir[2]};
		float to_eye[3], px, py;
		sub3(cam->eye, p, to_eye);
		/* Clearly on the near side, away from the outline where one pixel decides. */
		if (dot3(dir, to_eye) < 0.3f * sqrtf(dot3(to_eye, to_eye))) continue;
		if (!pbd_render_camera_project(cam, w, h, p, &px, &py) || !inside(w, h, px, py, 3)) continue;
		if (cloth_hides(d.s.world, cam->eye, p, UINT32_MAX)) {
			++covered;
			covered_ok += kind_near(img, w, h, px, py, 1, PIXEL_CLOTH) ? 1 : 0;
		} else {
			++bare;
			bare_ok += kind_near(img, w, h, px, py, 1, PIXEL_COLLIDER) ? 1 : 0;
		}
	}
	if (bare < 20 || bare_ok < bare * 95 / 100)
		fail_msg("sphere: %d of %d uncovered near-side points on collider-colored pixels", bare_ok, bare);
	if (covered < 5 || covered_ok < covered * 90 / 100)
		fail_msg("sphere under the cloth: %d of %d covered points on cloth-colored pixels", covered_ok, covered);
	printf("cloth: %d/%d particles; sphere: %d/%d bare, %d/%d covered points as expected\n", on_cloth, checked, bare_ok,
	       bare, covered_ok, covered);
	stbi_image_free(img);
	close_scene(&d);
}

/* ---- bodies without triangles, overlays, planes ------------------------------------------- */

/* The pendulum: balls at its particles (pinned one marked dark), tubes along its links. */
static void test_pendulum_balls_and_links(void** state) {
	(void)state;
	drawn d;
	open_scene(&d, "double_pendulum", 0);
	draw(&d, NULL);
	const int w = d.view.width, h = d.view.height;
	float p[3], q[3], px, py;
	for (uint32_t i = 1; i < 3; ++i) {
		pos_of(d.s.world, i, p);
		assert_true(pbd_render_camera_project(&d.view.camera, w, h, p, &px, &py));
		assert_true(kind_near(d.rgb, w, h, px, py, 1, PIXEL_CLOTH));
		/* and the midpoint of the link that ends here */
		pos_of(d.s.world, i - 1, q);
		const float m[3] = {0.5f * (p[0] + q[0]), 0.5f * (p[1] + q[1]), 0.5f * (p[2] + q[2])};
		assert_true(pbd_render_camera_project(&d.view.camera, w, h, m, &px, &py));
		assert_true(kind_near(d.rgb, w, h, px, py, 1, PIXEL_CLOTH));
	}
	/* The pinned particle's marker is dark. */
	pos_of(d.s.world, 0, p);
	assert_true(pbd_render_camera_project(&d.view.camera, w, h, p, &px, &py));
	const uint8_t* pin = d.rgb + 3 * ((size_t)floorf(py) * (size_t)w + (size_t)floorf(px));
	assert_true(pin[0] < 90 && pin[1] < 90 && pin[2] < 90);
	/* Halfway between the links, off the pendulum: background. */
	assert_int_equal(classify(d.rgb + 3 * ((size_t)(h - 2) * (size_t)w + 1)), PIXEL_BACKGROUND);
	close_scene(&d);
}

/* Every overlay on: drawing succeeds and changes the cloth's pixels; all off but the colliders:
 * no dark pinned markers remain at the pins. */
static void test_overlays(void** state) {
	(void)state;
	drawn d;
	open_scene(&d, "cloth_sphere", 60);
	const size_t bytes = (size_t)d.view.width * (size_t)d.view.height * 3;
	pbd_render_style plain = d.view.style;
	plain.show_particles = plain.show_constraints = plain.show_pinned = plain.show_contacts = false;
	draw(&d, &plain);
	uint8_t* before = malloc(bytes);
	assert_non_null(before);
	memcpy(before, d.rgb, bytes);
	pbd_render_style all = plain;
	all.show_particles = all.show_constraints = all.show_pinned = all.show_contacts = true;
	draw(&d, &all);
	size_t changed = 0;
	for (size_t i = 0; i < bytes; i += 3)
		changed +=
		    (abs(before[i] - d.rgb[i]) + abs(before[i + 1] - d.rgb[i + 1]) + abs(before[i + 2] - d.rgb[i + 2]) > 30)
		        ? 1u
		        : 0u;
	if (changed < 2000) fail_msg("the overlays changed only %zu pixels", changed);
	/* Drawing again without a new update gives the same image (a paused viewer redraws). */
	draw(&d, &plain);
	assert_int_equal(memcmp(before, d.rgb, bytes), 0);
	free(before);
	close_scene(&d);
}

/* A plane collider: a finite checkered quad, two shades of the collider color. */
static void test_plane_checker(void** state) {
	(void)state;
	const char* json =
	    "{\"frames\": 1, \"objects\": [{\"type\": \"particles\", \"particles\": [{\"x\": [0, 3, 0]}]}],"
	    " \"colliders\": [{\"type\": \"plane\", \"normal\": [0, 1, 0], \"offset\": 0}],"
	    " \"render\": {\"width\": 320, \"height\": 240, \"camera\": {\"eye\": [0, 6, 6], \"target\": [0, "
	    "0, 0], \"fov\": 40}}}";
	drawn d;
	memset(&d, 0, sizeof d);
	pbd_scene_error err;
	if (!pbd_scene_load_string(json, strlen(json), "plane.json", NULL, NULL, &d.s, &err)) fail_msg("%s", err.message);
	if (!scene_view_make(&d.s, 0, 0, &d.view, &err)) fail_msg("%s", err.message);
	pbd_error e;
	if (!pbd_render_offscreen_create(d.view.width, d.view.height, 1, &d.off, &e)) fail_msg("%s", e.message);
	if (!pbd_renderer_create(&d.r, &e)) fail_msg("%s", e.message);
	d.rgb = malloc((size_t)d.view.width * (size_t)d.view.height * 3);
	assert_non_null(d.rgb);
	draw(&d, NULL);
	/* The checker squares are anchored at the origin; sample the middle of a few squares. */
	render_plane_quad q;
	pbd_render_bounds b;
	pbd_render_framing_bounds(&d.view.draw, &b);
	pbd_collider_def def;
	assert_int_equal(pbd_collider_get_def(d.s.world, d.s.colliders[0], &def), PBD_OK);
	render_plane_quad_make(&def.shape.plane, &b, &q);
	int light = 0, dark = 0;
	for (int a = -2; a <= 1; ++a) {
		for (int c = -2; c <= 1; ++c) {
			/* The middle of square (a, c) along the quad's axes from the plane's origin. */
			float p[3];
			for (int k = 0; k < 3; ++k) p[k] = (((float)a + 0.5f) * q.u[k] + ((float)c + 0.5f) * q.v[k]) * q.tile;
			float px, py;
			if (!pbd_render_camera_project(&d.view.camera, d.view.width, d.view.height, p, &px, &py) ||
			    !inside(d.view.width, d.view.height, px, py, 2))
				continue;
			const uint8_t* pix = d.rgb + 3 * ((size_t)py * (size_t)d.view.width + (size_t)px);
			assert_int_equal(classify(pix), PIXEL_COLLIDER);
			const int lum = pix[0] + pix[1] + pix[2];
			if ((a + c) & 1)
				dark += lum;
			else
				light += lum;
		}
	}
	assert_true(light > 0 && dark > 0);
	assert_true(light > dark); /* same count of each parity: the odd squares are darker */
	close_scene(&d);
}

/* The pixel kind at a world point, with the scene's camera; false when it projects off the image. */
static bool kind_at(const drawn* d, const float p[3], pixel_kind kind) {
	float px, py;
	if (!pbd_render_camera_project(&d->view.camera, d->view.width, d->view.height, p, &px, &py) ||
	    !inside(d->view.width, d->view.height, px, py, 3))
		fail_msg("(%g, %g, %g) projects off the image", (double)p[0], (double)p[1], (double)p[2]);
	return kind_near(d->rgb, d->view.width, d->view.height, px, py, 1, kind);
}

/* The kind of the very pixel a world point falls on. */
static pixel_kind pixel_at(const drawn* d, const float p[3]) {
	float px, py;
	if (!pbd_render_camera_project(&d->view.camera, d->view.width, d->view.height, p, &px, &py) ||
	    !inside(d->view.width, d->view.height, px, py, 3))
		fail_msg("(%g, %g, %g) projects off the image", (double)p[0], (double)p[1], (double)p[2]);
	return classify(d->rgb + 3 * ((size_t)py * (size_t)d->view.width + (size_t)px));
}

/* Convex hulls, meshes and heightfields are drawn from their triangles where their poses put
 * them, a kinematic one where it has moved to, a trigger translucent. */
static void test_mesh_colliders(void** state) {
	(void)state;
	const char* json =
	    "{\"frames\": 1, \"world\": {\"dt\": 0.02},"
	    " \"objects\": [{\"type\": \"particles\", \"particles\": [{\"x\": [0, 3, -3], \"inv_mass\": 0}]}],"
	    " \"colliders\": ["
	    "  {\"type\": \"convex\", \"points\": [[-0.5,-0.5,-0.5], [0.5,-0.5,-0.5], [-0.5,0.5,-0.5], [0.5,0.5,-0.5],"
	    "   [-0.5,-0.5,0.5], [0.5,-0.5,0.5], [-0.5,0.5,0.5], [0.5,0.5,0.5]], \"position\": [-2, 0.5, 0],"
	    "   \"kind\": \"kinematic\", \"velocity\": [2, 0, 0]},"
	    "  {\"type\": \"mesh\", \"vertices\": [[0,0,0], [1.2,0,0], [0,1.2,0], [0,0,1.2]],"
	    "   \"triangles\": [[0,2,1], [0,1,3], [0,3,2], [1,2,3]], \"closed\": true, \"position\": [0.5, 0, -0.5]},"
	    "  {\"type\": \"heightfield\", \"heights\": [[0, 0.1, 0], [0.1, 0.3, 0.1], [0, 0.1, 0]], \"cell\": [1, 1],"
	    "   \"position\": [-1, 0, 2]},"
	    "  {\"type\": \"convex\", \"points\": [[-0.4,-0.4,-0.4], [0.4,-0.4,-0.4], [-0.4,0.4,-0.4], [0.4,0.4,-0.4],"
	    "   [-0.4,-0.4,0.4], [0.4,-0.4,0.4], [-0.4,0.4,0.4], [0.4,0.4,0.4]], \"position\": [2.6, 0.5, -1.5],"
	    "   \"trigger\": true}"
	    " ],"
	    " \"render\": {\"width\": 320, \"height\": 240, \"camera\": {\"eye\": [0, 5, 8], \"target\": [0, 0, 0],"
	    " \"fov\": 45}}}";
	drawn d;
	memset(&d, 0, sizeof d);
	pbd_scene_error err;
	if (!pbd_scene_load_string(json, strlen(json), "meshes.json", NULL, NULL, &d.s, &err)) fail_msg("%s", err.message);
	if (!scene_view_make(&d.s, 0, 0, &d.view, &err)) fail_msg("%s", err.message);
	pbd_error e;
	if (!pbd_render_offscreen_create(d.view.width, d.view.height, 1, &d.off, &e)) fail_msg("%s", e.message);
	if (!pbd_renderer_create(&d.r, &e)) fail_msg("%s", e.message);
	d.rgb = malloc((size_t)d.view.width * (size_t)d.view.height * 3);
	assert_non_null(d.rgb);
	draw(&d, NULL);
	const float hull[3] = {-2, 0.5f, 0}, moved[3] = {-1, 0.5f, 0};
	const float tetra[3] = {0.8f, 0.3f, -0.2f}; /* inside the tetrahedron, seen through its front face */
	const float terrain[3] = {0, 0.25f, 3};     /* on the heightfield's middle */
	const float trigger[3] = {2.6f, 0.5f, -1.5f};
	assert_true(kind_at(&d, hull, PIXEL_COLLIDER));
	assert_true(kind_at(&d, tetra, PIXEL_COLLIDER));
	assert_true(kind_at(&d, terrain, PIXEL_COLLIDER));
	assert_true(kind_at(&d, moved, PIXEL_BACKGROUND));
	/* The trigger changes its pixels, but lets the background show through. */
	float tx, ty;
	assert_true(pbd_render_camera_project(&d.view.camera, d.view.width, d.view.height, trigger, &tx, &ty));
	const size_t at = 3 * ((size_t)ty * (size_t)d.view.width + (size_t)tx);
	const uint8_t with[3] = {d.rgb[at], d.rgb[at + 1], d.rgb[at + 2]};
	pbd_render_style hidden = d.view.style;
	hidden.show_colliders = false;
	draw(&d, &hidden);
	assert_false(kind_at(&d, hull, PIXEL_COLLIDER));
	assert_true(abs(with[2] - d.rgb[at + 2]) + abs(with[0] - d.rgb[at]) > 10);
	assert_true(with[0] > 100); /* not opaque collider blue: the grey behind shows */

	/* 25 steps of 0.02 s at 2 m/s: the kinematic hull moved 1 m along x. */
	for (int f = 0; f < 25; ++f) assert_int_equal(pbd_scene_step(&d.s), PBD_OK);
	draw(&d, NULL);
	assert_true(kind_at(&d, moved, PIXEL_COLLIDER));
	assert_true(kind_at(&d, hull, PIXEL_BACKGROUND));
	assert_string_equal(pbd_renderer_last_error(d.r), "");
	close_scene(&d);
}

/* The world grows between updates: the renderer reads its topology again. */
static void test_topology_change(void** state) {
	(void)state;
	drawn d;
	open_scene(&d, "rope", 10);
	draw(&d, NULL);
	const pbd_vec3 x[2] = {{0, 0, 0}, {0.5, 0, 0}};
	const pbd_real inv_mass[2] = {1, 0};
	assert_int_equal(pbd_world_add_particles(d.s.world, 2, x, NULL, inv_mass, NULL), PBD_OK);
	draw(&d, NULL);
	assert_string_equal(pbd_renderer_last_error(d.r), "");
	close_scene(&d);
}

/* ---- rigid bodies ------------------------------------------------------------------------- */

enum { BODY_SHAPES = 5 };

/* A world made through the API: one dynamic body per bounded shape type (sphere, capsule, box,
 * convex hull, closed mesh), each in its own column, and beside them a static box collider and,
 * above it, a box carried by a kinematic body. */
typedef struct body_world {
	pbd_world* w;
	pbd_body_id bodies[BODY_SHAPES];
	pbd_body_id kinematic;
	pbd_collider_id colliders[BODY_SHAPES + 2];
	float x[BODY_SHAPES]; /* the columns */
} body_world;

static const pbd_vec3 cube_points[8] = {{-0.4f, -0.4f, -0.4f}, {0.4f, -0.4f, -0.4f}, {-0.4f, 0.4f, -0.4f},
                                        {0.4f, 0.4f, -0.4f},   {-0.4f, -0.4f, 0.4f}, {0.4f, -0.4f, 0.4f},
                                        {-0.4f, 0.4f, 0.4f},   {0.4f, 0.4f, 0.4f}};
/* The cube's faces, counter-clockwise seen from outside. */
static const uint32_t cube_triangles[36] = {0, 2, 1, 1, 2, 3, 4, 5, 6, 5, 7, 6, 0, 1, 4, 1, 5, 4,
                                            2, 6, 3, 3, 6, 7, 0, 4, 2, 2, 4, 6, 1, 3, 5, 3, 7, 5};

static void make_body_world(body_world* bw) {
	memset(bw, 0, sizeof *bw);
	pbd_world_def wd = pbd_world_def_default();
	wd.gravity = pbd_v3(0, 0, 0);
	assert_int_equal(pbd_world_create(&wd, &bw->w), PBD_OK);
	for (int k = 0; k < BODY_SHAPES; ++k) {
		bw->x[k] = -3.2f + 1.6f * (float)k;
		pbd_body_def bd = pbd_body_def_default();
		bd.type = PBD_BODY_DYNAMIC;
		bd.pose.position = pbd_v3(bw->x[k], 0.5f, 0);
		bd.mass = (pbd_mass_properties){1.0, {0, 0, 0}, {0.1, 0.1, 0.1, 0, 0, 0}};
		bw->bodies[k] = pbd_body_create(bw->w, &bd);
		assert_true(pbd_body_is_valid(bw->w, bw->bodies[k]));
		pbd_collider_def cd = pbd_collider_def_default();
		cd.body = bw->bodies[k];
		switch (k) {
		case 0:
			cd.type = PBD_SHAPE_SPHERE;
			cd.shape.sphere = (pbd_sphere){pbd_v3(0, 0, 0), 0.45f};
			break;
		case 1:
			cd.type = PBD_SHAPE_CAPSULE;
			cd.shape.capsule = (pbd_capsule){0.25f, 0.3f};
			break;
		case 2:
			cd.type = PBD_SHAPE_BOX;
			cd.shape.box.half_extents = pbd_v3(0.4f, 0.4f, 0.4f);
			break;
		case 3:
			cd.type = PBD_SHAPE_CONVEX;
			cd.shape.convex = (pbd_convex){cube_points, 8};
			break;
		default:
			cd.type = PBD_SHAPE_MESH;
			cd.shape.mesh = (pbd_trimesh){cube_points, cube_triangles, 8, 12, true};
			break;
		}
		bw->colliders[k] = pbd_collider_create(bw->w, &cd);
		assert_true(pbd_collider_is_valid(bw->w, bw->colliders[k]));
	}
	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_BOX;
	cd.shape.box.half_extents = pbd_v3(0.4f, 0.4f, 0.4f);
	cd.pose.position = pbd_v3(4.8f, 0.5f, 0);
	bw->colliders[BODY_SHAPES] = pbd_collider_create(bw->w, &cd);
	assert_true(pbd_collider_is_valid(bw->w, bw->colliders[BODY_SHAPES]));
	pbd_body_def bd = pbd_body_def_default();
	bd.type = PBD_BODY_KINEMATIC;
	bd.pose.position = pbd_v3(4.8f, 2.1f, 0);
	bw->kinematic = pbd_body_create(bw->w, &bd);
	assert_true(pbd_body_is_valid(bw->w, bw->kinematic));
	cd.pose.position = pbd_v3(0, 0, 0);
	cd.body = bw->kinematic;
	bw->colliders[BODY_SHAPES + 1] = pbd_collider_create(bw->w, &cd);
	assert_true(pbd_collider_is_valid(bw->w, bw->colliders[BODY_SHAPES + 1]));
}

/* The shapes of dynamic bodies are drawn in the body color where their bodies are, every frame:
 * moved by pbd_body_set_pose (and turned, which the mesh shapes' triangles, read once in their
 * frame, must follow), each shape is drawn where its body went and no longer where it was. A
 * static collider keeps the collider color, and so does the shape of a kinematic body: the
 * renderer asks the world each body's type. */
static void test_body_shapes(void** state) {
	(void)state;
	body_world bw;
	make_body_world(&bw);
	drawn d;
	memset(&d, 0, sizeof d);
	d.view.width = 640;
	d.view.height = 320;
	d.view.style = pbd_render_style_default();
	d.view.camera = (pbd_render_camera){{0, 1.2f, 11}, {0.8f, 1.2f, 0}, {0, 1, 0}, 40};
	d.view.draw = (pbd_render_scene){bw.w, bw.colliders, BODY_SHAPES + 2, NULL, 0};
	pbd_error e;
	if (!pbd_render_offscreen_create(d.view.width, d.view.height, 1, &d.off, &e)) fail_msg("%s", e.message);
	if (!pbd_renderer_create(&d.r, &e)) fail_msg("%s", e.message);
	d.rgb = malloc((size_t)d.view.width * (size_t)d.view.height * 3);
	assert_non_null(d.rgb);

	draw(&d, NULL);
	const size_t bytes = (size_t)d.view.width * (size_t)d.view.height * 3;
	uint8_t* before = malloc(bytes);
	assert_non_null(before);
	memcpy(before, d.rgb, bytes);
	const float low_y = 0.5f, high_y = 2.1f;
	for (int k = 0; k < BODY_SHAPES; ++k) {
		const float at[3] = {bw.x[k], low_y, 0}, above[3] = {bw.x[k], high_y, 0};
		if (!kind_at(&d, at, PIXEL_BODY)) fail_msg("shape %d is not drawn in the body color where its body is", k);
		assert_true(kind_at(&d, above, PIXEL_BACKGROUND));
	}
	const float fixed[3] = {4.8f, 0.5f, 0}, carried[3] = {4.8f, 2.1f, 0};
	assert_true(kind_at(&d, fixed, PIXEL_COLLIDER));
	assert_true(kind_at(&d, carried, PIXEL_COLLIDER));

	/* Up by 1.6 m and an eighth of a turn about z. */
	const pbd_quat turn = pbd_quat_axis_angle(pbd_v3(0, 0, 1), 0.78539816f);
	for (int k = 0; k < BODY_SHAPES; ++k)
		assert_int_equal(pbd_body_set_pose(bw.w, bw.bodies[k], (pbd_pose){pbd_v3(bw.x[k], high_y, 0), turn}), PBD_OK);
	draw(&d, NULL);
	for (int k = 0; k < BODY_SHAPES; ++k) {
		const float at[3] = {bw.x[k], low_y, 0}, above[3] = {bw.x[k], high_y, 0};
		if (!kind_at(&d, above, PIXEL_BODY)) fail_msg("shape %d is not drawn where its body was moved to", k);
		if (!kind_at(&d, at, PIXEL_BACKGROUND)) fail_msg("shape %d is still drawn where its body was", k);
		/* Turned, not only moved: the capsule's upper end leans left, out of where it stood
		 * upright, and the cubes stand on an edge, a corner above their upright top and nothing
		 * where their upright corner was (points of their front faces, z = 0.4, which the camera
		 * sees from below left). The pixels themselves, a few from the outlines. */
		if (k == 0) continue;
		const float z = k == 1 ? 0.0f : 0.4f;
		const float in[3] = {k == 1 ? bw.x[k] - 0.36f : bw.x[k], k == 1 ? high_y + 0.36f : high_y + 0.52f, z};
		const float out[3] = {k == 1 ? bw.x[k] : bw.x[k] + 0.36f, high_y + (k == 1 ? 0.5f : 0.36f), z};
		if (pixel_at(&d, in) != PIXEL_BODY || pixel_at(&d, out) != PIXEL_BACKGROUND)
			fail_msg("shape %d is not drawn turned with its body", k);
	}
	assert_true(kind_at(&d, fixed, PIXEL_COLLIDER));
	assert_true(kind_at(&d, carried, PIXEL_COLLIDER));
	/* The image changed around the moved bodies only: nothing right of x = 4.1, where the
	 * static and kinematic boxes stand (the camera does not pitch, so that line is a column of
	 * the image). */
	size_t changed = 0, changed_right = 0;
	const float boundary[3] = {4.1f, 1.2f, 0};
	float bx, by;
	assert_true(pbd_render_camera_project(&d.view.camera, d.view.width, d.view.height, boundary, &bx, &by));
	for (size_t i = 0; i < bytes; i += 3) {
		const bool differs =
		    abs(before[i] - d.rgb[i]) + abs(before[i + 1] - d.rgb[i + 1]) + abs(before[i + 2] - d.rgb[i + 2]) > 30;
		const float px = (float)((i / 3) % (size_t)d.view.width);
		changed += differs ? 1u : 0u;
		changed_right += differs && px > bx ? 1u : 0u;
	}
	if (changed < 2000) fail_msg("moving the bodies changed only %zu pixels", changed);
	if (changed_right > 0) fail_msg("%zu pixels changed around the fixed boxes, which did not move", changed_right);
	free(before);
	assert_string_equal(pbd_renderer_last_error(d.r), "");

	pbd_renderer_destroy(d.r);
	pbd_render_offscreen_destroy(d.off);
	free(d.rgb);
	pbd_world_destroy(bw.w);
}

/* ---- joints and the bodies' contacts ------------------------------------------------------ */

/* A box hung from the world by a hinge 0.3 m above its top (axis along x), and a ball hung from
 * the box's bottom by a rope (a distance joint), seen from the front; no gravity, so that nothing
 * moves. Each joint that holds is drawn in the joint color: a marker at its anchor, the hinge's
 * axis through it, the rope from end to end. A broken one is not drawn, nor any when the style
 * hides them. */
static void test_joints(void** state) {
	(void)state;
	pbd_world_def wd = pbd_world_def_default();
	wd.gravity = pbd_v3(0, 0, 0);
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&wd, &w), PBD_OK);
	pbd_body_def bd = pbd_body_def_default();
	bd.type = PBD_BODY_DYNAMIC;
	bd.mass = (pbd_mass_properties){1.0, {0, 0, 0}, {0.06, 0.06, 0.06, 0, 0, 0}};
	bd.pose.position = pbd_v3(-2, 0.9f, 0);
	const pbd_body_id box = pbd_body_create(w, &bd);
	bd.pose.position = pbd_v3(-2, -0.6f, 0);
	const pbd_body_id ball = pbd_body_create(w, &bd);
	assert_true(pbd_body_is_valid(w, box) && pbd_body_is_valid(w, ball));
	pbd_collider_id colliders[2];
	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_BOX;
	cd.shape.box.half_extents = pbd_v3(0.3f, 0.3f, 0.3f);
	cd.body = box;
	colliders[0] = pbd_collider_create(w, &cd);
	cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_SPHERE;
	cd.shape.sphere = (pbd_sphere){pbd_v3(0, 0, 0), 0.25f};
	cd.body = ball;
	colliders[1] = pbd_collider_create(w, &cd);
	assert_true(pbd_collider_is_valid(w, colliders[0]) && pbd_collider_is_valid(w, colliders[1]));

	const float hinge_at[3] = {-2, 1.5f, 0};
	pbd_joint_def joints[2] = {pbd_joint_def_default(), pbd_joint_def_default()};
	joints[0].type = PBD_JOINT_HINGE;
	joints[0].body_b = box;
	joints[0].frame_a.position = pbd_v3(hinge_at[0], hinge_at[1], hinge_at[2]);
	joints[0].frame_b.position = pbd_v3(0, 0.6f, 0);
	joints[1].type = PBD_JOINT_DISTANCE;
	joints[1].body_a = box;
	joints[1].body_b = ball;
	joints[1].frame_a.position = pbd_v3(0, -0.3f, 0);
	joints[1].frame_b.position = pbd_v3(0, 0.25f, 0);
	joints[1].lower = 0;
	joints[1].upper = 0.95f;
	uint32_t first = 0;
	assert_int_equal(pbd_world_add_joints(w, 2, joints, &first), PBD_OK);

	drawn d;
	memset(&d, 0, sizeof d);
	d.view.width = 320;
	d.view.height = 240;
	d.view.style = pbd_render_style_default();
	assert_true(d.view.style.show_joints);
	d.view.camera = (pbd_render_camera){{-2, 0.5f, 6}, {-2, 0.5f, 0}, {0, 1, 0}, 40};
	d.view.draw = (pbd_render_scene){w, colliders, 2, NULL, 0};
	pbd_error e;
	if (!pbd_render_offscreen_create(d.view.width, d.view.height, 1, &d.off, &e)) fail_msg("%s", e.message);
	if (!pbd_renderer_create(&d.r, &e)) fail_msg("%s", e.message);
	d.rgb = malloc((size_t)d.view.width * (size_t)d.view.height * 3);
	assert_non_null(d.rgb);
	draw(&d, NULL);
	if (!pbd_render_write_png("test_render_joints.png", d.view.width, d.view.height, d.rgb, &e))
		fail_msg("%s", e.message);

	/* The hinge: its anchor, and its axis a few pixels to each side along x (the camera looks
	 * along -z, so x is the image's horizontal). */
	float ax, ay;
	assert_true(pbd_render_camera_project(&d.view.camera, d.view.width, d.view.height, hinge_at, &ax, &ay));
	if (pixel_at(&d, hinge_at) != PIXEL_JOINT) fail_msg("no joint marker at the hinge's anchor");
	const float axis_left[3] = {hinge_at[0] - 0.08f, hinge_at[1], 0},
	            axis_right[3] = {hinge_at[0] + 0.08f, hinge_at[1], 0};
	if (!kind_at(&d, axis_left, PIXEL_JOINT) || !kind_at(&d, axis_right, PIXEL_JOINT))
		fail_msg("the hinge's axis is not drawn along x through its anchor");
	/* Across the axis, off it: nothing. */
	const float above[3] = {hinge_at[0], hinge_at[1] + 0.15f, 0};
	assert_int_equal(pixel_at(&d, above), PIXEL_BACKGROUND);
	/* The rope: its two ends and its middle, in the gap between the box and the ball. */
	const float rope_top[3] = {-2, 0.6f, 0}, rope_mid[3] = {-2, 0.125f, 0}, rope_bottom[3] = {-2, -0.35f, 0};
	if (pixel_at(&d, rope_mid) != PIXEL_JOINT) fail_msg("the distance joint's line is not drawn");
	assert_true(kind_at(&d, rope_top, PIXEL_JOINT));
	assert_true(kind_at(&d, rope_bottom, PIXEL_JOINT));
	/* Beside the rope: the background; the bodies keep their color away from the joints. */
	const float beside[3] = {-1.8f, 0.125f, 0}, box_side[3] = {-1.85f, 0.9f, 0.3f};
	assert_int_equal(pixel_at(&d, beside), PIXEL_BACKGROUND);
	assert_int_equal(pixel_at(&d, box_side), PIXEL_BODY);

	/* Hidden by the style: no joint pixel anywhere. */
	pbd_render_style hidden = d.view.style;
	hidden.show_joints = false;
	draw(&d, &hidden);
	size_t joint_pixels = 0;
	for (size_t i = 0; i < (size_t)d.view.width * (size_t)d.view.height; ++i)
		joint_pixels += classify(d.rgb + 3 * i) == PIXEL_JOINT ? 1u : 0u;
	assert_int_equal(joint_pixels, 0);

	/* The hinge broken: it is gone, the rope stays. */
	assert_int_equal(pbd_world_set_joint_broken(w, first, true), PBD_OK);
	draw(&d, NULL);
	assert_int_equal(pixel_at(&d, hinge_at), PIXEL_BACKGROUND);
	assert_false(kind_at(&d, axis_left, PIXEL_JOINT));
	assert_false(kind_at(&d, axis_right, PIXEL_JOINT));
	assert_int_equal(pixel_at(&d, rope_mid), PIXEL_JOINT);
	/* Mended, it is back. */
	assert_int_equal(pbd_world_set_joint_broken(w, first, false), PBD_OK);
	draw(&d, NULL);
	assert_int_equal(pixel_at(&d, hinge_at), PIXEL_JOINT);
	printf("joints: hinge anchor at pixel (%.1f, %.1f)\n", (double)ax, (double)ay);
	assert_string_equal(pbd_renderer_last_error(d.r), "");

	pbd_renderer_destroy(d.r);
	pbd_render_offscreen_destroy(d.off);
	free(d.rgb);
	pbd_world_destroy(w);
}

/* A box settled on a static slab: the library reports its contacts, drawn as green dots with a
 * short normal when the contact overlay is on (it is off by default, as the particles' contacts
 * are), and not at all when it is off. */
static void test_body_contacts(void** state) {
	(void)state;
	pbd_world_def wd = pbd_world_def_default();
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&wd, &w), PBD_OK);
	pbd_collider_id colliders[2];
	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_BOX;
	cd.shape.box.half_extents = pbd_v3(2, 0.2f, 2);
	cd.pose.position = pbd_v3(0, -0.2f, 0);
	colliders[0] = pbd_collider_create(w, &cd);
	pbd_body_def bd = pbd_body_def_default();
	bd.type = PBD_BODY_DYNAMIC;
	bd.mass = (pbd_mass_properties){1.0, {0, 0, 0}, {0.06, 0.06, 0.06, 0, 0, 0}};
	bd.pose.position = pbd_v3(0, 0.3f, 0);
	const pbd_body_id box = pbd_body_create(w, &bd);
	cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_BOX;
	cd.shape.box.half_extents = pbd_v3(0.3f, 0.3f, 0.3f);
	cd.body = box;
	colliders[1] = pbd_collider_create(w, &cd);
	assert_true(pbd_collider_is_valid(w, colliders[0]) && pbd_collider_is_valid(w, colliders[1]));
	for (int i = 0; i < 10; ++i) assert_int_equal(pbd_world_step(w), PBD_OK);
	pbd_body_contact contacts[16];
	const uint32_t n = pbd_world_get_body_contacts(w, contacts, 16);
	if (n == 0 || n > 16) fail_msg("the box reports %u contacts", n);

	drawn d;
	memset(&d, 0, sizeof d);
	d.view.width = 320;
	d.view.height = 240;
	d.view.style = pbd_render_style_default();
	assert_false(d.view.style.show_contacts);
	d.view.camera = (pbd_render_camera){{0.8f, 1.6f, 4}, {0, 0.2f, 0}, {0, 1, 0}, 40};
	d.view.draw = (pbd_render_scene){w, colliders, 2, NULL, 0};
	pbd_error e;
	if (!pbd_render_offscreen_create(d.view.width, d.view.height, 1, &d.off, &e)) fail_msg("%s", e.message);
	if (!pbd_renderer_create(&d.r, &e)) fail_msg("%s", e.message);
	const size_t pixels = (size_t)d.view.width * (size_t)d.view.height;
	d.rgb = malloc(pixels * 3);
	assert_non_null(d.rgb);

	draw(&d, NULL);
	size_t green = 0;
	for (size_t i = 0; i < pixels; ++i) green += classify(d.rgb + 3 * i) == PIXEL_CONTACT ? 1u : 0u;
	assert_int_equal(green, 0);

	pbd_render_style shown = d.view.style;
	shown.show_contacts = true;
	draw(&d, &shown);
	if (!pbd_render_write_png("test_render_body_contacts.png", d.view.width, d.view.height, d.rgb, &e))
		fail_msg("%s", e.message);
	for (uint32_t k = 0; k < n; ++k) {
		const float p[3] = {(float)contacts[k].point.x, (float)contacts[k].point.y, (float)contacts[k].point.z};
		if (!kind_at(&d, p, PIXEL_CONTACT)) fail_msg("contact %u is not drawn where it is", k);
		/* Its normal, the slab's up, a little above it. */
		const float up[3] = {p[0] + 0.03f * (float)contacts[k].normal.x, p[1] + 0.03f * (float)contacts[k].normal.y,
		                     p[2] + 0.03f * (float)contacts[k].normal.z};
		if (!kind_at(&d, up, PIXEL_CONTACT)) fail_msg("contact %u has no normal drawn", k);
	}
	green = 0;
	for (size_t i = 0; i < pixels; ++i) green += classify(d.rgb + 3 * i) == PIXEL_CONTACT ? 1u : 0u;
	printf("body contacts: %u, drawn on %zu pixels\n", n, green);
	assert_string_equal(pbd_renderer_last_error(d.r), "");

	pbd_renderer_destroy(d.r);
	pbd_render_offscreen_destroy(d.off);
	free(d.rgb);
	pbd_world_destroy(w);
}

int main(void) {
	/* Skipped, not failed, where no GL driver can be had: the probe is the real context. */
	pbd_render_offscreen* probe = NULL;
	pbd_error e;
	if (!pbd_render_offscreen_create(16, 16, 1, &probe, &e)) {
		printf("SKIP: no OpenGL context can be made here: %s\n", e.message);
		return 77;
	}
	printf("OpenGL device: %s\n", pbd_render_offscreen_device(probe));
	pbd_render_offscreen_destroy(probe);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cloth_sphere_png), cmocka_unit_test(test_pendulum_balls_and_links),
	    cmocka_unit_test(test_overlays),         cmocka_unit_test(test_plane_checker),
	    cmocka_unit_test(test_topology_change),  cmocka_unit_test(test_mesh_colliders),
	    cmocka_unit_test(test_body_shapes),      cmocka_unit_test(test_joints),
	    cmocka_unit_test(test_body_contacts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
