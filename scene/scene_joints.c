/* The "joints" of a scene: joints between its bodies, or a body and the world, named by the
 * bodies' names. Each side's frame is given in that body's frame ("frame_a", "frame_b") or made
 * from a world point ("anchor", "anchor_a", "anchor_b") and a world "axis" where the bodies are
 * when the scene loads. Read after the bodies, objects and colliders; every field is checked here
 * so that a mistake is reported at its path, with the joint's name when it has one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbd/math.h"
#include "scene_internal.h"

/* Positions follow pbd_joint_type. */
static const char* const joint_types[] = {"fixed", "ball", "hinge", "prismatic", "distance", NULL};
/* Positions follow pbd_joint_motor, less PBD_MOTOR_OFF. */
static const char* const motor_modes[] = {"velocity", "position", NULL};

#define SCENE_PI 3.14159265358979323846

/* One side of a joint: the body its name gives (the null id and no index for the world) and the
 * body's frame as the scene loads. */
typedef struct joint_side {
	pbd_body_id id;
	const pbd_scene_body* body; /* NULL: the world */
	pbd_pose pose;
} joint_side;

/* "a" or "b": a body's name, or "world" (or nothing) for the world. */
static bool read_side(loader* L, const cJSON* j, const char* path, const char* key, joint_side* out) {
	jr* r = &L->r;
	const pbd_scene* s = L->s;
	out->id = (pbd_body_id){0, 0};
	out->body = NULL;
	out->pose = pbd_pose_identity();
	const char* name;
	if (!jr_string(r, j, path, key, NULL, PBD_SCENE_NAME_MAX - 1, &name)) return false;
	char p[JR_PATH_MAX];
	jr_path_key(p, path, key);
	if (!name || !strcmp(name, "world")) {
		for (uint32_t i = 0; name && i < s->body_count; ++i)
			if (!strcmp(s->bodies[i].name, "world"))
				return jr_fail(r, p, "\"world\" is the world here, and bodies[%u] is called \"world\" too (rename it)",
				               i);
		return true;
	}
	uint32_t b;
	if (!scene_find_body(L, p, name, &b)) return false;
	out->body = &s->bodies[b];
	out->id = out->body->id;
	pbd_body_state st;
	if (pbd_body_get_state(s->world, out->id, &st) != PBD_OK) return scene_fail_world(L, p);
	out->pose = st.pose;
	return true;
}

/* "frame_a" or "frame_b": {"position", "rotation"} in the side's frame, as a body's pose is given. */
static bool read_frame(loader* L, const cJSON* j, const char* path, const char* key, pbd_pose* out) {
	jr* r = &L->r;
	const cJSON* f = jr_get(j, key);
	char p[JR_PATH_MAX];
	jr_path_key(p, path, key);
	if (!cJSON_IsObject(f))
		return jr_fail(r, p, "expected {\"position\": [x, y, z], \"rotation\": ...} (got %s)", jr_type_name(f));
	static const char* const keys[] = {"position", "rotation", NULL};
	*out = pbd_pose_identity();
	return jr_object(r, f, p, keys) &&
	       jr_vec3(r, f, p, "position", out->position, PBD_SCENE_MAX_LENGTH, &out->position) &&
	       scene_read_rotation(L, f, p, "rotation", &out->rotation);
}

/* The rotation that turns the x axis onto the unit direction `a` along the shortest arc: the
 * joint's axis, with its y axis (the zero of its angle) the one that moves least. */
static pbd_quat x_onto(const double a[3]) {
	const double w = 1 + a[0];
	/* Opposite to x: half a turn about y keeps y where it is. */
	if (w < 1e-12) return (pbd_quat){0, 1, 0, 0};
	const double n = sqrt(w * w + a[1] * a[1] + a[2] * a[2]);
	return (pbd_quat){0, (pbd_real)(-a[2] / n), (pbd_real)(a[1] / n), (pbd_real)(w / n)};
}

/* Whether a joint of this type turns or slides about its frames' x axis, so that a frame made from
 * an anchor needs an "axis": hinges and sliders always, ball joints with a twist or cone limit. */
static bool needs_axis(pbd_joint_type type, const cJSON* j) {
	return type == PBD_JOINT_HINGE || type == PBD_JOINT_PRISMATIC ||
	       (type == PBD_JOINT_BALL && (jr_get(j, "limit") || jr_get(j, "swing")));
}

/* The two frames: each side's "frame_*", or else its anchor ("anchor_*" or "anchor") and "axis" in
 * the world, carried into the side's frame where it is now. */
static bool read_frames(loader* L, const cJSON* j, const char* path, pbd_joint_type type, const joint_side sides[2],
                        pbd_joint_def* d) {
	jr* r = &L->r;
	static const char* const frame_keys[2] = {"frame_a", "frame_b"};
	static const char* const anchor_keys[2] = {"anchor_a", "anchor_b"};
	static const char* const side_names[2] = {"a", "b"};
	pbd_pose* frames[2] = {&d->frame_a, &d->frame_b};
	char p[JR_PATH_MAX];
	const bool shared = jr_get(j, "anchor") != NULL;
	bool anchored = false;
	for (int k = 0; k < 2; ++k) {
		if (shared && jr_get(j, anchor_keys[k])) {
			jr_path_key(p, path, anchor_keys[k]);
			return jr_fail(r, p, "give either \"anchor\" (both sides) or \"anchor_a\"/\"anchor_b\", not both");
		}
		if (jr_get(j, frame_keys[k]) && jr_get(j, anchor_keys[k])) {
			jr_path_key(p, path, anchor_keys[k]);
			return jr_fail(r, p, "give either \"%s\" (in the body's frame) or \"%s\" (in the world), not both",
			               frame_keys[k], anchor_keys[k]);
		}
		if (!jr_get(j, frame_keys[k]) && !jr_get(j, anchor_keys[k]) && !shared)
			return jr_fail(r, path,
			               "side %s needs a place: \"anchor\" (a world point both sides share), \"%s\" (a world "
			               "point) or \"%s\" (a pose in its body's frame)",
			               side_names[k], anchor_keys[k], frame_keys[k]);
		anchored = anchored || !jr_get(j, frame_keys[k]);
	}
	if (shared && !anchored) {
		jr_path_key(p, path, "anchor");
		return jr_fail(r, p, "places neither side: both have a frame (\"frame_a\" and \"frame_b\")");
	}
	const cJSON* axis_item = jr_get(j, "axis");
	if (axis_item && !anchored) {
		jr_path_key(p, path, "axis");
		return jr_fail(r, p, "only with an anchor: \"frame_a\" and \"frame_b\" carry their own rotations");
	}
	if (anchored && !axis_item && needs_axis(type, j))
		return jr_fail(r, path, "missing \"axis\": the world direction a %s placed by an anchor %s", joint_types[type],
		               type == PBD_JOINT_PRISMATIC ? "slides along" : "turns about");
	pbd_quat turn = pbd_quat_identity();
	if (axis_item) {
		pbd_vec3 a;
		if (!jr_vec3(r, j, path, "axis", pbd_v3(1, 0, 0), PBD_SCENE_MAX_DIRECTION, &a) ||
		    !scene_direction_finite(L, path, "axis", a))
			return false;
		const double v[3] = {(double)a.x, (double)a.y, (double)a.z};
		const double len = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
		if (!(len > 0)) {
			jr_path_key(p, path, "axis");
			return jr_fail(r, p, "must not be zero");
		}
		const double u[3] = {v[0] / len, v[1] / len, v[2] / len};
		turn = x_onto(u);
	}
	pbd_vec3 anchor = pbd_v3(0, 0, 0);
	if (shared && !jr_vec3(r, j, path, "anchor", anchor, PBD_SCENE_MAX_LENGTH, &anchor)) return false;
	for (int k = 0; k < 2; ++k) {
		if (jr_get(j, frame_keys[k])) {
			if (!read_frame(L, j, path, frame_keys[k], frames[k])) return false;
			continue;
		}
		pbd_vec3 at = anchor;
		if (jr_get(j, anchor_keys[k]) && !jr_vec3(r, j, path, anchor_keys[k], at, PBD_SCENE_MAX_LENGTH, &at))
			return false;
		const pbd_pose pose = sides[k].pose;
		frames[k]->position = pbd_pose_apply_inverse(pose, at);
		frames[k]->rotation = pbd_quat_mul(pbd_quat_conj(pose.rotation), turn);
	}
	return true;
}

/* The world point of a side's frame origin. */
static void frame_origin(const joint_side* side, pbd_pose frame, double out[3]) {
	const pbd_vec3 x = pbd_pose_apply(side->pose, frame.position);
	out[0] = (double)x.x;
	out[1] = (double)x.y;
	out[2] = (double)x.z;
}

/* "limit": [lower, upper], rad for angles (hinge, and a ball joint's twist), m for a slider's
 * offset and a distance joint's length. A distance joint without one keeps the length it starts
 * with. */
static bool read_limit(loader* L, const cJSON* j, const char* path, pbd_joint_type type, const joint_side sides[2],
                       pbd_joint_def* d) {
	jr* r = &L->r;
	const cJSON* item = jr_get(j, "limit");
	char p[JR_PATH_MAX];
	jr_path_key(p, path, "limit");
	if (!item) {
		if (type != PBD_JOINT_DISTANCE) return true;
		double pa[3], pb[3];
		frame_origin(&sides[0], d->frame_a, pa);
		frame_origin(&sides[1], d->frame_b, pb);
		const double dx = pb[0] - pa[0], dy = pb[1] - pa[1], dz = pb[2] - pa[2];
		const double len = sqrt(dx * dx + dy * dy + dz * dz);
		return jr_to_real(r, path, len, JR_NONNEG(4 * PBD_SCENE_MAX_LENGTH), &d->lower) &&
		       jr_to_real(r, path, len, JR_NONNEG(4 * PBD_SCENE_MAX_LENGTH), &d->upper);
	}
	if (type == PBD_JOINT_FIXED) return jr_fail(r, p, "a fixed joint has no limit (it holds every degree of freedom)");
	if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 2)
		return jr_fail(r, p, "expected [lower, upper] (got %s)",
		               cJSON_IsArray(item) ? "an array of another length" : jr_type_name(item));
	const bool angle = type == PBD_JOINT_HINGE || type == PBD_JOINT_BALL;
	const jr_range range = angle                        ? JR_SYMMETRIC(SCENE_PI)
	                       : type == PBD_JOINT_DISTANCE ? JR_NONNEG(PBD_SCENE_MAX_LENGTH)
	                                                    : JR_SYMMETRIC(PBD_SCENE_MAX_LENGTH);
	double v[2];
	pbd_real out[2];
	size_t k = 0;
	for (const cJSON* e = item->child; e; e = e->next, ++k) {
		char q[JR_PATH_MAX];
		jr_path_index(q, p, k);
		if (!jr_number_item(r, e, q, range, &v[k]) || !jr_to_real(r, q, v[k], range, &out[k])) return false;
	}
	if (v[0] > v[1]) {
		char lo[JR_NUMBER_MAX], hi[JR_NUMBER_MAX];
		jr_format_number(lo, sizeof lo, v[0]);
		jr_format_number(hi, sizeof hi, v[1]);
		return jr_fail(r, p, "lower %s is above upper %s", lo, hi);
	}
	d->lower = out[0];
	d->upper = out[1];
	/* A distance joint always keeps its range: the library's flag is for the other types. */
	d->limit = type != PBD_JOINT_DISTANCE;
	return true;
}

/* "motor": {"mode", "target", "max", "compliance"}: a hinge's or slider's drive. */
static bool read_motor(loader* L, const cJSON* j, const char* path, pbd_joint_type type, pbd_joint_def* d) {
	jr* r = &L->r;
	const cJSON* m = jr_get(j, "motor");
	if (!m) return true;
	char p[JR_PATH_MAX], q[JR_PATH_MAX];
	jr_path_key(p, path, "motor");
	if (type != PBD_JOINT_HINGE && type != PBD_JOINT_PRISMATIC)
		return jr_fail(r, p, "only hinge and prismatic joints have a motor (this one is %s)", joint_types[type]);
	static const char* const keys[] = {"mode", "target", "max", "compliance", NULL};
	if (!jr_object(r, m, p, keys)) return false;
	if (!jr_get(m, "mode")) return jr_fail(r, p, "missing \"mode\" (\"velocity\" or \"position\")");
	int mode;
	if (!jr_enum(r, m, p, "mode", 0, motor_modes, NULL, NULL, &mode)) return false;
	const bool velocity = mode == 0;
	d->motor = velocity ? PBD_MOTOR_VELOCITY : PBD_MOTOR_POSITION;
	const char* dropped = velocity ? "compliance" : "max";
	if (jr_get(m, dropped)) {
		jr_path_key(q, p, dropped);
		return jr_fail(r, q, "only for a %s motor", velocity ? "position" : "velocity");
	}
	/* A hinge's position target is an angle as the joint reads it, in (-pi, pi]. */
	const jr_range target = velocity                  ? JR_SYMMETRIC(PBD_SCENE_MAX_SPEED)
	                        : type == PBD_JOINT_HINGE ? (jr_range){-SCENE_PI, SCENE_PI, true, false}
	                                                  : JR_SYMMETRIC(PBD_SCENE_MAX_LENGTH);
	if (!jr_real_p(r, m, p, "target", 0, target, &d->motor_target)) return false;
	if (!velocity)
		return jr_real_p(r, m, p, "compliance", 0, JR_NONNEG(PBD_SCENE_MAX_COMPLIANCE), &d->motor_compliance);
	if (!jr_get(m, "max"))
		return jr_fail(r, p, "missing \"max\": the largest %s a velocity motor exerts",
		               type == PBD_JOINT_HINGE ? "torque (N m)" : "force (N)");
	return jr_real_p(r, m, p, "max", 0, JR_POSITIVE(PBD_SCENE_MAX_MAGNITUDE), &d->motor_max);
}

/* Joint `index` into d; its name into `name`, and *named once the file's own name is read and
 * found unique. */
static bool read_joint(loader* L, const cJSON* j, const char* path, uint32_t index, pbd_joint_def* d,
                       char name[PBD_SCENE_NAME_MAX], bool* named) {
	jr* r = &L->r;
	const pbd_scene* s = L->s;
	static const char* const keys[] = {
	    "name", "type",       "a",     "b",     "frame_a", "frame_b",     "anchor",       "anchor_a", "anchor_b",
	    "axis", "compliance", "limit", "swing", "motor",   "break_force", "break_torque", NULL};
	if (!jr_object(r, j, path, keys)) return false;
	snprintf(name, PBD_SCENE_NAME_MAX, "joint%u", index);
	if (!scene_read_name(L, j, path, name)) return false;
	char p[JR_PATH_MAX];
	for (uint32_t k = 0; k < index; ++k)
		if (!strcmp(s->joints[k].name, name)) {
			jr_path_key(p, path, "name");
			return jr_fail(r, p, "\"%s\" is already the name of joints[%u]", name, k);
		}
	*named = jr_get(j, "name") != NULL;
	if (!jr_get(j, "type"))
		return jr_fail(r, path, "missing \"type\" (\"fixed\", \"ball\", \"hinge\", \"prismatic\" or \"distance\")");
	int t;
	if (!jr_enum(r, j, path, "type", 0, joint_types, NULL, NULL, &t)) return false;
	const pbd_joint_type type = (pbd_joint_type)t;
	*d = pbd_joint_def_default();
	d->type = type;
	joint_side sides[2];
	if (!read_side(L, j, path, "a", &sides[0]) || !read_side(L, j, path, "b", &sides[1])) return false;
	if (sides[0].body && sides[0].body == sides[1].body) {
		jr_path_key(p, path, "b");
		return jr_fail(r, p, "names the same body as \"a\" (\"%s\")", sides[0].body->name);
	}
	if (!(sides[0].body && sides[0].body->type == PBD_BODY_DYNAMIC) &&
	    !(sides[1].body && sides[1].body->type == PBD_BODY_DYNAMIC))
		return jr_fail(r, path, "neither \"a\" nor \"b\" names a dynamic body, so the joint would move nothing");
	d->body_a = sides[0].id;
	d->body_b = sides[1].id;
	if (!read_frames(L, j, path, type, sides, d) || !read_limit(L, j, path, type, sides, d) ||
	    !read_motor(L, j, path, type, d) ||
	    !jr_real_p(r, j, path, "compliance", 0, JR_NONNEG(PBD_SCENE_MAX_COMPLIANCE), &d->compliance) ||
	    !jr_real_p(r, j, path, "break_force", 0, JR_NONNEG(PBD_SCENE_MAX_MAGNITUDE), &d->break_force) ||
	    !jr_real_p(r, j, path, "break_torque", 0, JR_NONNEG(PBD_SCENE_MAX_MAGNITUDE), &d->break_torque))
		return false;
	if (jr_get(j, "swing")) {
		jr_path_key(p, path, "swing");
		if (type != PBD_JOINT_BALL)
			return jr_fail(r, p, "only a ball joint has a swing (cone) limit (this one is %s)", joint_types[type]);
		if (!jr_real_p(r, j, path, "swing", SCENE_PI, (jr_range){0, SCENE_PI, true, false}, &d->swing)) return false;
	}
	return true;
}

bool scene_read_joints(loader* L, const cJSON* joints) {
	jr* r = &L->r;
	pbd_scene* s = L->s;
	const size_t n = joints ? (size_t)cJSON_GetArraySize(joints) : 0;
	if (n == 0) return true;
	s->joints = calloc(n, sizeof *s->joints);
	if (!s->joints) return jr_fail(r, "joints", "out of memory");
	uint32_t i = 0;
	for (const cJSON* j = joints->child; j; j = j->next, ++i) {
		char path[JR_PATH_MAX];
		jr_path_index(path, "joints", i);
		char name[PBD_SCENE_NAME_MAX] = "";
		bool named = false;
		pbd_joint_def d;
		uint32_t first = 0;
		bool ok = scene_reserve(L, path, 0, 1) && read_joint(L, j, path, i, &d, name, &named);
		if (ok && pbd_world_add_joints(s->world, 1, &d, &first) != PBD_OK) ok = scene_fail_world(L, path);
		if (!ok) {
			/* A named joint is named in the message too. */
			const size_t used = strlen(r->message);
			if (named && used + 1 < r->message_size)
				snprintf(r->message + used, r->message_size - used, " (joint \"%s\")", name);
			return false;
		}
		snprintf(s->joints[i].name, sizeof s->joints[i].name, "%s", name);
		s->joints[i].index = first;
		s->joint_count = i + 1;
	}
	return true;
}
