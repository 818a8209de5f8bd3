/* Camera math: look-at and perspective matrices, projection of points and picking rays, orbit
 * parameters. The automatic framing of a scene is in framing.c. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "render_internal.h"

bool render_fail(pbd_error* err, const char* fmt, ...) {
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof err->message, fmt, ap);
		va_end(ap);
	}
	return false;
}

#define DEG2RAD 0.017453292519943295

static void v3_sub(const float a[3], const float b[3], float out[3]) {
	out[0] = a[0] - b[0];
	out[1] = a[1] - b[1];
	out[2] = a[2] - b[2];
}
static float v3_dot(const float a[3], const float b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void v3_cross(const float a[3], const float b[3], float out[3]) {
	const float x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
	out[0] = x;
	out[1] = y;
	out[2] = z;
}
static float v3_norm(float v[3]) {
	const float len = sqrtf(v3_dot(v, v));
	if (len > 0) {
		v[0] /= len;
		v[1] /= len;
		v[2] /= len;
	}
	return len;
}

void render_camera_basis(const pbd_render_camera* c, float s[3], float u[3], float f[3]) {
	v3_sub(c->target, c->eye, f);
	v3_norm(f);
	v3_cross(f, c->up, s);
	v3_norm(s);
	v3_cross(s, f, u);
}

bool pbd_render_camera_is_valid(const pbd_render_camera* c) {
	if (!c) return false;
	for (int i = 0; i < 3; ++i)
		if (!isfinite(c->eye[i]) || !isfinite(c->target[i]) || !isfinite(c->up[i])) return false;
	if (!(c->fov_y > 0 && c->fov_y < 180)) return false;
	float f[3], s[3], up[3] = {c->up[0], c->up[1], c->up[2]};
	v3_sub(c->target, c->eye, f);
	if (v3_norm(f) <= 0 || v3_norm(up) <= 0) return false;
	v3_cross(f, up, s);
	/* sin of the angle between up and the view direction: below ~0.06 degrees the image's
	 * roll is undefined (and so is the frame above). */
	return sqrtf(v3_dot(s, s)) > 1e-3f;
}

void pbd_render_camera_matrices(const pbd_render_camera* c, float aspect, float z_near, float z_far, float view[16],
                                float proj[16]) {
	float s[3], u[3], f[3];
	render_camera_basis(c, s, u, f);
	/* Column-major: element (row, col) at [col * 4 + row]. */
	for (int i = 0; i < 16; ++i) view[i] = proj[i] = 0.0f;
	for (int k = 0; k < 3; ++k) {
		view[k * 4 + 0] = s[k];
		view[k * 4 + 1] = u[k];
		view[k * 4 + 2] = -f[k];
	}
	view[12] = -v3_dot(s, c->eye);
	view[13] = -v3_dot(u, c->eye);
	view[14] = v3_dot(f, c->eye);
	view[15] = 1.0f;
	const float t = 1.0f / tanf((float)((double)c->fov_y * 0.5 * DEG2RAD));
	proj[0] = t / aspect;
	proj[5] = t;
	proj[10] = (z_far + z_near) / (z_near - z_far);
	proj[11] = -1.0f;
	proj[14] = 2.0f * z_far * z_near / (z_near - z_far);
}

bool pbd_render_camera_project(const pbd_render_camera* c, int width, int height, const float p[3], float* px,
                               float* py) {
	float s[3], u[3], f[3], d[3];
	render_camera_basis(c, s, u, f);
	v3_sub(p, c->eye, d);
	const float z = v3_dot(f, d);
	if (!(z > 0)) return false;
	const float t = 1.0f / tanf((float)((double)c->fov_y * 0.5 * DEG2RAD));
	const float aspect = (float)width / (float)height;
	const float nx = t / aspect * v3_dot(s, d) / z;
	const float ny = t * v3_dot(u, d) / z;
	*px = (nx + 1.0f) * 0.5f * (float)width;
	*py = (1.0f - ny) * 0.5f * (float)height;
	return true;
}

void pbd_render_camera_ray(const pbd_render_camera* c, int width, int height, float px, float py, float origin[3],
                           float dir[3]) {
	float s[3], u[3], f[3];
	render_camera_basis(c, s, u, f);
	const float t = tanf((float)((double)c->fov_y * 0.5 * DEG2RAD));
	const float aspect = (float)width / (float)height;
	const float nx = 2.0f * px / (float)width - 1.0f;
	const float ny = 1.0f - 2.0f * py / (float)height;
	for (int k = 0; k < 3; ++k) {
		origin[k] = c->eye[k];
		dir[k] = f[k] + s[k] * nx * aspect * t + u[k] * ny * t;
	}
	v3_norm(dir);
}

pbd_render_camera pbd_render_camera_from_orbit(const pbd_render_orbit* o) {
	const double yaw = (double)o->yaw * DEG2RAD, pitch = (double)o->pitch * DEG2RAD;
	const float dir[3] = {(float)(cos(pitch) * sin(yaw)), (float)sin(pitch), (float)(cos(pitch) * cos(yaw))};
	pbd_render_camera c;
	for (int k = 0; k < 3; ++k) {
		c.target[k] = o->target[k];
		c.eye[k] = o->target[k] + o->distance * dir[k];
		c.up[k] = k == 1 ? 1.0f : 0.0f;
	}
	c.fov_y = o->fov_y;
	return c;
}

pbd_render_orbit pbd_render_orbit_from_camera(const pbd_render_camera* c) {
	pbd_render_orbit o;
	float v[3];
	v3_sub(c->eye, c->target, v);
	const float d = v3_norm(v);
	for (int k = 0; k < 3; ++k) o.target[k] = c->target[k];
	o.distance = d > 0 ? d : 1.0f;
	const float y = v[1] < -1.0f ? -1.0f : (v[1] > 1.0f ? 1.0f : v[1]);
	o.pitch = (float)(asin((double)y) / DEG2RAD);
	if (o.pitch > 89.0f) o.pitch = 89.0f;
	if (o.pitch < -89.0f) o.pitch = -89.0f;
	o.yaw = (float)(atan2((double)v[0], (double)v[2]) / DEG2RAD);
	o.fov_y = c->fov_y;
	return o;
}
