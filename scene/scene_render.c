/* The "render" settings of a scene: image size, camera, colors, overlays. They do not change the
 * simulation; the program and the viewer read them. */
#include <stdio.h>
#include <string.h>

#include "pbd/math.h"
#include "scene_internal.h"

const char* const pbd_scene_overlay_names[] = {"particles", "constraints", "pinned", "contacts", NULL};

static int hex_digit(char c) {
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

/* A color: [r, g, b] with each in [0, 1], or "#rrggbb". */
static bool read_color_item(loader* L, const cJSON* item, const char* path, float out[3]) {
	jr* r = &L->r;
	if (cJSON_IsString(item) && item->valuestring) {
		const char* t = item->valuestring;
		bool ok = strlen(t) == 7 && t[0] == '#';
		for (int i = 1; ok && i < 7; ++i) ok = hex_digit(t[i]) >= 0;
		if (!ok) return jr_fail(r, path, "expected \"#rrggbb\" or [r, g, b] (got \"%.16s\")", t);
		for (int k = 0; k < 3; ++k) out[k] = (float)(hex_digit(t[1 + 2 * k]) * 16 + hex_digit(t[2 + 2 * k])) / 255.0f;
		return true;
	}
	if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 3)
		return jr_fail(r, path, "expected \"#rrggbb\" or [r, g, b] with each in [0, 1] (got %s)",
		               cJSON_IsArray(item) ? "an array of another length" : jr_type_name(item));
	int k = 0;
	for (const cJSON* c = item->child; c; c = c->next, ++k) {
		char p[JR_PATH_MAX];
		jr_path_index(p, path, (size_t)k);
		double v;
		if (!jr_number_item(r, c, p, JR_UNIT, &v)) return false;
		out[k] = (float)v;
	}
	return true;
}

static bool read_color(loader* L, const cJSON* obj, const char* path, const char* key, bool* has, float out[3]) {
	const cJSON* item = jr_get(obj, key);
	if (!item) return true;
	char p[JR_PATH_MAX];
	jr_path_key(p, path, key);
	*has = true;
	return read_color_item(L, item, p, out);
}

/* "background": one color, or [top, bottom] for a vertical gradient. */
static bool read_background(loader* L, const cJSON* obj, const char* path, pbd_scene_render* sr) {
	const cJSON* item = jr_get(obj, "background");
	if (!item) return true;
	char p[JR_PATH_MAX];
	jr_path_key(p, path, "background");
	sr->has_background = true;
	if (cJSON_IsArray(item) && cJSON_GetArraySize(item) == 2) {
		char p0[JR_PATH_MAX], p1[JR_PATH_MAX];
		jr_path_index(p0, p, 0);
		jr_path_index(p1, p, 1);
		return read_color_item(L, item->child, p0, sr->background_top) &&
		       read_color_item(L, item->child->next, p1, sr->background_bottom);
	}
	if (!read_color_item(L, item, p, sr->background_top)) return false;
	memcpy(sr->background_bottom, sr->background_top, sizeof sr->background_top);
	return true;
}

static double v3_len2(pbd_vec3 v) { return (double)v.x * v.x + (double)v.y * v.y + (double)v.z * v.z; }

static bool read_camera(loader* L, const cJSON* obj, const char* path, pbd_scene_render* sr) {
	jr* r = &L->r;
	const cJSON* c = jr_get(obj, "camera");
	if (!c) return true;
	char cpath[JR_PATH_MAX];
	jr_path_key(cpath, path, "camera");
	static const char* const keys[] = {"eye", "target", "up", "fov", NULL};
	if (!jr_object(r, c, cpath, keys)) return false;
	sr->has_eye = jr_get(c, "eye") != NULL;
	sr->has_target = jr_get(c, "target") != NULL;
	sr->has_up = jr_get(c, "up") != NULL;
	sr->has_fov = jr_get(c, "fov") != NULL;
	if (!jr_vec3(r, c, cpath, "eye", pbd_v3(0, 0, 0), PBD_SCENE_MAX_LENGTH, &sr->eye) ||
	    !jr_vec3(r, c, cpath, "target", pbd_v3(0, 0, 0), PBD_SCENE_MAX_LENGTH, &sr->target) ||
	    !jr_vec3(r, c, cpath, "up", pbd_v3(0, 1, 0), PBD_SCENE_MAX_DIRECTION, &sr->up) ||
	    !jr_real(r, c, cpath, "fov", 40, (jr_range){1, 170, false, false}, &sr->fov))
		return false;
	char p[JR_PATH_MAX];
	if (!(v3_len2(sr->up) > 1e-12)) {
		jr_path_key(p, cpath, "up");
		return jr_fail(r, p, "must not be zero");
	}
	/* With both ends given the view direction is known: it must differ from up. What the
	 * automatic framing fills in is checked when the camera is made. */
	if (sr->has_eye && sr->has_target) {
		const pbd_vec3 d = pbd_v3_sub(sr->target, sr->eye);
		const double len2 = v3_len2(d);
		if (!(len2 > 1e-12)) {
			jr_path_key(p, cpath, "target");
			return jr_fail(r, p, "must differ from eye");
		}
		const pbd_vec3 x = pbd_v3_cross(d, sr->up);
		if (!(v3_len2(x) > 1e-6 * len2 * v3_len2(sr->up))) {
			jr_path_key(p, cpath, "up");
			return jr_fail(r, p, "must not be parallel to the view direction (target - eye)");
		}
	}
	return true;
}

static bool read_overlays(loader* L, const cJSON* obj, const char* path, pbd_scene_render* sr) {
	jr* r = &L->r;
	const cJSON* arr;
	size_t n;
	if (!jr_array(r, obj, path, "overlays", &arr, &n)) return false;
	if (!arr) return true;
	char opath[JR_PATH_MAX];
	jr_path_key(opath, path, "overlays");
	sr->has_overlays = true;
	sr->overlays = 0;
	size_t i = 0;
	for (const cJSON* c = arr->child; c; c = c->next, ++i) {
		char p[JR_PATH_MAX];
		jr_path_index(p, opath, i);
		if (!cJSON_IsString(c) || !c->valuestring) return jr_fail(r, p, "expected a string (got %s)", jr_type_name(c));
		unsigned bit = 0;
		for (unsigned k = 0; pbd_scene_overlay_names[k]; ++k)
			if (strcmp(c->valuestring, pbd_scene_overlay_names[k]) == 0) bit = 1u << k;
		if (!bit)
			return jr_fail(r, p,
			               "unknown overlay \"%.32s\" (one of \"particles\", \"constraints\", \"pinned\", "
			               "\"contacts\")",
			               c->valuestring);
		if (sr->overlays & bit) return jr_fail(r, p, "\"%s\" is listed twice", c->valuestring);
		sr->overlays |= bit;
	}
	return true;
}

/* "render": {"width", "height", "camera", colors, "overlays"}; see docs/scene-format.md. */
bool scene_read_render(loader* L, const cJSON* root, pbd_scene_render* sr) {
	jr* r = &L->r;
	memset(sr, 0, sizeof *sr);
	const cJSON* o = jr_get(root, "render");
	if (!o) return true;
	static const char* const keys[] = {"width",          "height",     "camera",   "cloth_color", "back_color",
	                                   "collider_color", "background", "overlays", NULL};
	const char* path = "render";
	if (!jr_object(r, o, path, keys)) return false;
	int64_t w, h;
	if (!jr_int(r, o, path, "width", 0, PBD_SCENE_RENDER_MIN_SIZE, PBD_SCENE_RENDER_MAX_SIZE, &w) ||
	    !jr_int(r, o, path, "height", 0, PBD_SCENE_RENDER_MIN_SIZE, PBD_SCENE_RENDER_MAX_SIZE, &h))
		return false;
	sr->width = (int)w;
	sr->height = (int)h;
	return read_camera(L, o, path, sr) &&
	       read_color(L, o, path, "cloth_color", &sr->has_cloth_color, sr->cloth_color) &&
	       read_color(L, o, path, "back_color", &sr->has_back_color, sr->back_color) &&
	       read_color(L, o, path, "collider_color", &sr->has_collider_color, sr->collider_color) &&
	       read_background(L, o, path, sr) && read_overlays(L, o, path, sr);
}
