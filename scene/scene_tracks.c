/* Prescribed motion read from a scene: rotations, keyframe tracks, a kinematic collider's
 * keyframes and moving pins; and the step that moves colliders, kinematic bodies and pins along
 * them (the poses themselves are motion.c's). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "motion.h"
#include "pbd/math.h"
#include "scene_internal.h"

/* A unit quaternion from components already checked finite and bounded. Normalised here, in
 * double, so that what the library stores is what the file meant; false for the zero one. */
static bool quat_from(const double q[4], pbd_quat* out) {
	const double len = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
	if (!(len > 0)) return false;
	*out = (pbd_quat){(pbd_real)(q[0] / len), (pbd_real)(q[1] / len), (pbd_real)(q[2] / len), (pbd_real)(q[3] / len)};
	return true;
}

/* A rotation: {"axis": [x, y, z], "angle_deg": a}, or a quaternion [x, y, z, w]. The JSON type
 * tells the two apart, so neither can be mistaken for the other. */
bool scene_read_rotation(loader* L, const cJSON* obj, const char* path, const char* key, pbd_quat* out) {
	jr* r = &L->r;
	const cJSON* item = jr_get(obj, key);
	if (!item) return true;
	char p[JR_PATH_MAX];
	jr_path_key(p, path, key);
	if (cJSON_IsArray(item)) {
		if (cJSON_GetArraySize(item) != 4)
			return jr_fail(r, p, "expected a quaternion [x, y, z, w] (got an array of another length)");
		double q[4];
		size_t k = 0;
		for (const cJSON* e = item->child; e; e = e->next, ++k) {
			char q_path[JR_PATH_MAX];
			jr_path_index(q_path, p, k);
			if (!jr_number_item(r, e, q_path, JR_SYMMETRIC(PBD_SCENE_MAX_DIRECTION), &q[k])) return false;
		}
		if (!quat_from(q, out)) return jr_fail(r, p, "must not be the zero quaternion");
		return true;
	}
	if (!cJSON_IsObject(item))
		return jr_fail(r, p, "expected {\"axis\": [x, y, z], \"angle_deg\": a} or a quaternion [x, y, z, w] (got %s)",
		               jr_type_name(item));
	static const char* const keys[] = {"axis", "angle_deg", NULL};
	if (!jr_object(r, item, p, keys)) return false;
	if (!jr_get(item, "axis") || !jr_get(item, "angle_deg"))
		return jr_fail(r, p, "missing \"%s\"", jr_get(item, "axis") ? "angle_deg" : "axis");
	pbd_vec3 axis;
	double deg;
	if (!jr_vec3(r, item, p, "axis", pbd_v3(0, 1, 0), PBD_SCENE_MAX_DIRECTION, &axis) ||
	    !jr_real(r, item, p, "angle_deg", 0, JR_SYMMETRIC(PBD_SCENE_MAX_ANGLE_DEG), &deg))
		return false;
	const double a[3] = {(double)axis.x, (double)axis.y, (double)axis.z};
	const double len = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
	if (!(len > 0)) {
		char q[JR_PATH_MAX];
		jr_path_key(q, p, "axis");
		return jr_fail(r, q, "must not be zero");
	}
	const double half = 0.5 * deg * (3.14159265358979323846 / 180.0), s = sin(half) / len;
	const double q[4] = {a[0] * s, a[1] * s, a[2] * s, cos(half)};
	quat_from(q, out); /* unit by construction */
	return true;
}

static const char* const interp_names[] = {"linear", "cubic", NULL};

/* A track at `kpath`: an array of keys {"time", "position", "rotation"}, times strictly
 * increasing, or {"keys": that array, "interp": "linear" | "cubic", "loop": bool}. A key that
 * leaves out its position or rotation keeps the previous key's (the first: origin, identity).
 * The keys belong to *t as soon as they are allocated, so that pbd_scene_free releases them
 * whatever fails. */
bool scene_read_track(loader* L, const cJSON* item, const char* kpath, pbd_scene_track* t) {
	jr* r = &L->r;
	const cJSON* arr = item;
	char apath[JR_PATH_MAX];
	snprintf(apath, sizeof apath, "%s", kpath);
	int interp = PBD_SCENE_INTERP_LINEAR;
	bool loop = false;
	if (cJSON_IsObject(item)) {
		static const char* const keys[] = {"keys", "interp", "loop", NULL};
		if (!jr_object(r, item, kpath, keys) ||
		    !jr_enum(r, item, kpath, "interp", interp, interp_names, NULL, NULL, &interp) ||
		    !jr_bool(r, item, kpath, "loop", loop, &loop))
			return false;
		arr = jr_get(item, "keys");
		if (!arr) return jr_fail(r, kpath, "missing \"keys\"");
		jr_path_key(apath, kpath, "keys");
	}
	if (!cJSON_IsArray(arr))
		return jr_fail(r, apath, "expected an array of keyframes or {\"keys\": [...], \"interp\", \"loop\"} (got %s)",
		               jr_type_name(arr));
	const size_t n = (size_t)cJSON_GetArraySize(arr);
	if (n == 0) return jr_fail(r, apath, "must hold at least one keyframe");
	if (n > PBD_SCENE_MAX_KEYFRAMES)
		return jr_fail(r, apath, "too many keyframes (%zu, the limit is %d)", n, PBD_SCENE_MAX_KEYFRAMES);
	pbd_scene_keyframe* keys = malloc(n * sizeof *keys);
	if (!keys) return jr_fail(r, apath, "out of memory");
	t->keys = keys;
	t->key_count = 0;
	t->interp = (pbd_scene_interp)interp;
	t->loop = loop;
	static const char* const allowed[] = {"time", "position", "rotation", NULL};
	pbd_pose pose = pbd_pose_identity();
	size_t i = 0;
	for (const cJSON* k = arr->child; k; k = k->next, ++i) {
		char p[JR_PATH_MAX];
		jr_path_index(p, apath, i);
		if (!jr_object(r, k, p, allowed)) return false;
		if (!jr_get(k, "time")) return jr_fail(r, p, "missing \"time\"");
		double time;
		if (!jr_real(r, k, p, "time", 0, JR_NONNEG(PBD_SCENE_MAX_TIME), &time) ||
		    !jr_vec3(r, k, p, "position", pose.position, PBD_SCENE_MAX_LENGTH, &pose.position) ||
		    !scene_read_rotation(L, k, p, "rotation", &pose.rotation))
			return false;
		if (i > 0 && !(time > keys[i - 1].time)) {
			char q[JR_PATH_MAX], got[JR_NUMBER_MAX], prev[JR_NUMBER_MAX];
			jr_path_key(q, p, "time");
			jr_format_number(got, sizeof got, time);
			jr_format_number(prev, sizeof prev, keys[i - 1].time);
			return jr_fail(r, q, "must be greater than the previous keyframe's %s (got %s)", prev, got);
		}
		keys[i].time = time;
		keys[i].pose = pose;
		t->key_count = (uint32_t)(i + 1);
	}
	const char* why = scene_motion_loop_error(t);
	if (why) {
		char q[JR_PATH_MAX];
		jr_path_key(q, kpath, "loop");
		return jr_fail(r, q, "%s", why);
	}
	return true;
}

/* A kinematic collider's "keyframes" (scene_read_track). The track is registered before its keys are
 * read. *start gets the pose at time 0, where the world starts. */
bool scene_read_keyframes(loader* L, const cJSON* c, const char* path, uint32_t collider, pbd_pose* start) {
	const cJSON* item = jr_get(c, "keyframes");
	if (!item) return true;
	char kpath[JR_PATH_MAX];
	jr_path_key(kpath, path, "keyframes");
	pbd_scene_track* t = &L->s->tracks[L->s->track_count++];
	memset(t, 0, sizeof *t);
	t->collider = collider;
	if (!scene_read_track(L, item, kpath, t)) return false;
	*start = pbd_scene_track_pose(t, 0.0);
	return true;
}

/* One entry of "moving_pins": {"vertices": as "pinned", then "keyframes" (a track, whose
 * positions displace the vertices' centroid and whose rotations turn them about it) or "velocity"
 * and "angular_velocity"}. Read once the body exists: the vertices are pinned, their centroid is
 * taken where they are in the world, and they are put where the motion has them at time 0. The
 * entry is registered before anything is allocated, so that pbd_scene_free releases what is. */
static bool read_pin_motion(loader* L, const cJSON* e, const char* p, const pbd_mesh* mesh, const pbd_scene_object* o) {
	jr* r = &L->r;
	pbd_scene* s = L->s;
	static const char* const keys[] = {"vertices", "keyframes", "velocity", "angular_velocity", NULL};
	if (!cJSON_IsObject(e)) return jr_fail(r, p, "expected an object (got %s)", jr_type_name(e));
	if (!jr_object(r, e, p, keys)) return false;
	if (!jr_get(e, "vertices")) return jr_fail(r, p, "missing \"vertices\"");
	const char* velocity_key = jr_get(e, "velocity")           ? "velocity"
	                           : jr_get(e, "angular_velocity") ? "angular_velocity"
	                                                           : NULL;
	const cJSON* track = jr_get(e, "keyframes");
	char q[JR_PATH_MAX];
	if (!track && !velocity_key) return jr_fail(r, p, "missing \"keyframes\" (or \"velocity\", \"angular_velocity\")");
	if (track && velocity_key) {
		jr_path_key(q, p, velocity_key);
		return jr_fail(r, q, "not with keyframes, which give the motion; give either");
	}
	pbd_scene_pin_motion* grown = realloc(s->pin_motions, (s->pin_motion_count + 1) * sizeof *grown);
	if (!grown) return jr_fail(r, p, "out of memory");
	s->pin_motions = grown;
	pbd_scene_pin_motion* m = &grown[s->pin_motion_count++];
	memset(m, 0, sizeof *m);
	m->object = (uint32_t)(o - s->objects);
	m->track.collider = UINT32_MAX;
	char vpath[JR_PATH_MAX];
	jr_path_key(vpath, p, "vertices");
	if (!scene_read_vertex_set(L, e, p, "vertices", mesh, &m->particles, &m->count)) return false;
	if (m->count == 0) return jr_fail(r, vpath, "selects no vertex");
	m->offsets = malloc(m->count * sizeof *m->offsets);
	if (!m->offsets) return jr_fail(r, vpath, "out of memory");
	if (track) {
		jr_path_key(q, p, "keyframes");
		if (!scene_read_track(L, track, q, &m->track)) return false;
	} else if (!jr_vec3(r, e, p, "velocity", m->velocity, PBD_SCENE_MAX_SPEED, &m->velocity) ||
	           !jr_vec3(r, e, p, "angular_velocity", m->angular_velocity, PBD_SCENE_MAX_SPEED, &m->angular_velocity)) {
		return false;
	}
	/* The centroid is summed in double, where thousands of float additions would drift. */
	const pbd_vec3* x = pbd_world_positions(s->world);
	double c[3] = {0, 0, 0};
	for (uint32_t k = 0; k < m->count; ++k) {
		const uint32_t v = m->particles[k];
		m->particles[k] = o->range.first_particle + v;
		if (pbd_particle_is_pinned(s->world, m->particles[k]))
			return jr_fail(r, vpath, "vertex %u is already pinned (by \"pinned\" or another moving pin set)", v);
		const pbd_vec3 xv = x[m->particles[k]];
		c[0] += (double)xv.x;
		c[1] += (double)xv.y;
		c[2] += (double)xv.z;
	}
	m->centroid = pbd_v3((pbd_real)(c[0] / m->count), (pbd_real)(c[1] / m->count), (pbd_real)(c[2] / m->count));
	for (uint32_t k = 0; k < m->count; ++k) m->offsets[k] = pbd_v3_sub(x[m->particles[k]], m->centroid);
	const pbd_pose start = pbd_scene_pin_motion_pose(m, 0.0);
	for (uint32_t k = 0; k < m->count; ++k) {
		const pbd_vec3 at = scene_motion_pin_point(m, start, k);
		if (pbd_particle_pin(s->world, m->particles[k]) != PBD_OK ||
		    pbd_world_set_positions(s->world, m->particles[k], 1, &at) != PBD_OK)
			return scene_fail_world(L, p);
	}
	return true;
}

/* "moving_pins": an array of sets of pinned vertices, each carried rigidly by its motion
 * (read_pin_motion) in pbd_scene_before_step. */
bool scene_read_moving_pins(loader* L, const cJSON* obj, const char* path, const pbd_mesh* mesh,
                            const pbd_scene_object* o) {
	const cJSON* list;
	size_t n;
	if (!jr_array(&L->r, obj, path, "moving_pins", &list, &n)) return false;
	char lpath[JR_PATH_MAX];
	jr_path_key(lpath, path, "moving_pins");
	size_t i = 0;
	for (const cJSON* e = list ? list->child : NULL; e; e = e->next, ++i) {
		char p[JR_PATH_MAX];
		jr_path_index(p, lpath, i);
		if (!read_pin_motion(L, e, p, mesh, o)) return false;
	}
	return true;
}

pbd_pose pbd_scene_track_pose(const pbd_scene_track* track, double time) {
	return scene_motion_track_pose(track, time);
}

pbd_status pbd_scene_before_step(pbd_scene* s) {
	if (!s || !s->world) return PBD_ERR_INVALID_ARGUMENT;
	if (s->track_count == 0 && s->pin_motion_count == 0 && s->body_count == 0) return PBD_OK;
	/* The clock is the world's, not one kept here, so that a world resumed from a snapshot or
	 * given another dt between steps follows its keyframes from where it is. */
	const double end = pbd_world_time(s->world) + (double)pbd_world_get_def(s->world).dt;
	for (uint32_t k = 0; k < s->track_count; ++k) {
		const pbd_scene_track* t = &s->tracks[k];
		const pbd_status status =
		    pbd_collider_move_to(s->world, s->colliders[t->collider], pbd_scene_track_pose(t, end));
		if (status != PBD_OK) return status;
	}
	for (uint32_t k = 0; k < s->body_count; ++k) {
		const pbd_scene_body* b = &s->bodies[k];
		if (b->track.key_count == 0) continue;
		const pbd_status status = pbd_body_move_to(s->world, b->id, pbd_scene_track_pose(&b->track, end));
		if (status != PBD_OK) return status;
	}
	/* A target, unlike a position set here, moves the pin through the substeps, and the velocity
	 * the step gives it is the motion's, which contacts and friction see. */
	for (uint32_t k = 0; k < s->pin_motion_count; ++k) {
		const pbd_scene_pin_motion* m = &s->pin_motions[k];
		const pbd_pose pose = pbd_scene_pin_motion_pose(m, end);
		for (uint32_t i = 0; i < m->count; ++i) {
			const pbd_status status =
			    pbd_particle_set_target(s->world, m->particles[i], scene_motion_pin_point(m, pose, i));
			if (status != PBD_OK) return status;
		}
	}
	return PBD_OK;
}

pbd_status pbd_scene_step(pbd_scene* s) {
	const pbd_status status = pbd_scene_before_step(s);
	return status != PBD_OK ? status : pbd_world_step(s->world);
}
