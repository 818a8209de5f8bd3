/* Prescribed motion: keyframe tracks and constant velocities turned into poses (motion.h).
 * Positions are interpolated in double and rounded once, so that a track passes through each
 * key's position exactly. */
#include "motion.h"

#include <math.h>

#include "pbd/math.h"

static void position_of(const pbd_scene_keyframe* k, double out[3]) {
	out[0] = (double)k->pose.position.x;
	out[1] = (double)k->pose.position.y;
	out[2] = (double)k->pose.position.z;
}

/* A loop's clock: `time` wrapped into [first key, last key], so that every period reads the same
 * keys. Without a loop the clock is the world's, and the ends hold. */
static double track_time(const pbd_scene_track* t, double time) {
	const uint32_t n = t->key_count;
	if (!t->loop || n < 2 || !isfinite(time)) return time;
	const double t0 = t->keys[0].time, period = t->keys[n - 1].time - t0;
	double u = fmod(time - t0, period);
	if (u < 0) u += period;
	return t0 + u;
}

/* The spline's velocity (m/s) at key i: the chord between its neighbours over their time apart
 * (Catmull-Rom for uneven times). The ends of a held track are at rest, so that the motion is C1
 * across the holds too; those of a loop are one instant, whose neighbours are the second key and
 * the last but one. */
static void key_tangent(const pbd_scene_track* t, uint32_t i, double out[3]) {
	const pbd_scene_keyframe* k = t->keys;
	const uint32_t n = t->key_count;
	out[0] = out[1] = out[2] = 0;
	uint32_t before, after;
	double span;
	if (i > 0 && i + 1 < n) {
		before = i - 1;
		after = i + 1;
		span = k[after].time - k[before].time;
	} else if (t->loop && n >= 2) {
		before = n - 2;
		after = 1;
		span = (k[1].time - k[0].time) + (k[n - 1].time - k[n - 2].time);
	} else {
		return;
	}
	double a[3], b[3];
	position_of(&k[before], a);
	position_of(&k[after], b);
	for (int c = 0; c < 3; ++c) out[c] = (b[c] - a[c]) / span;
}

pbd_pose scene_motion_track_pose(const pbd_scene_track* track, double time) {
	const pbd_scene_keyframe* k = track->keys;
	const uint32_t n = track->key_count;
	if (n == 0) return pbd_pose_identity();
	time = track_time(track, time);
	if (!(time > k[0].time)) return k[0].pose;
	if (time >= k[n - 1].time) return k[n - 1].pose;
	/* The last key at or before `time`: k[lo].time <= time < k[hi].time. */
	uint32_t lo = 0, hi = n - 1;
	while (hi - lo > 1) {
		const uint32_t mid = lo + (hi - lo) / 2;
		if (k[mid].time <= time)
			lo = mid;
		else
			hi = mid;
	}
	const double h = k[hi].time - k[lo].time, u = (time - k[lo].time) / h;
	if (u == 0) return k[lo].pose;
	double a[3], b[3], p[3];
	position_of(&k[lo], a);
	position_of(&k[hi], b);
	if (track->interp == PBD_SCENE_INTERP_CUBIC) {
		double ma[3], mb[3];
		key_tangent(track, lo, ma);
		key_tangent(track, hi, mb);
		/* The cubic Hermite basis. */
		const double v = 1 - u, h00 = (1 + 2 * u) * v * v, h10 = u * v * v, h01 = u * u * (3 - 2 * u), h11 = -u * u * v;
		for (int c = 0; c < 3; ++c) p[c] = h00 * a[c] + h10 * h * ma[c] + h01 * b[c] + h11 * h * mb[c];
	} else {
		for (int c = 0; c < 3; ++c) p[c] = a[c] + u * (b[c] - a[c]);
	}
	pbd_pose pose;
	pose.position = pbd_v3((pbd_real)p[0], (pbd_real)p[1], (pbd_real)p[2]);
	pose.rotation = pbd_quat_slerp(k[lo].pose.rotation, k[hi].pose.rotation, u);
	return pose;
}

pbd_pose scene_motion_velocity_pose(pbd_vec3 velocity, pbd_vec3 angular_velocity, double time) {
	pbd_pose pose = pbd_pose_identity();
	pose.position = pbd_v3((pbd_real)((double)velocity.x * time), (pbd_real)((double)velocity.y * time),
	                       (pbd_real)((double)velocity.z * time));
	const double w[3] = {(double)angular_velocity.x, (double)angular_velocity.y, (double)angular_velocity.z};
	const double rate = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
	if (!(rate > 0)) return pose;
	/* The angle from the start, not a sum of steps, so that nothing drifts over a long run. */
	const double half = 0.5 * rate * time, s = sin(half) / rate;
	pose.rotation = (pbd_quat){(pbd_real)(w[0] * s), (pbd_real)(w[1] * s), (pbd_real)(w[2] * s), (pbd_real)cos(half)};
	return pose;
}

const char* scene_motion_loop_error(const pbd_scene_track* t) {
	if (!t->loop) return NULL;
	const uint32_t n = t->key_count;
	if (n < 2) return "a loop needs at least two keyframes";
	const pbd_pose a = t->keys[0].pose, b = t->keys[n - 1].pose;
	const double dot = (double)a.rotation.x * (double)b.rotation.x + (double)a.rotation.y * (double)b.rotation.y +
	                   (double)a.rotation.z * (double)b.rotation.z + (double)a.rotation.w * (double)b.rotation.w;
	/* q and -q are one rotation: a full turn closes a loop. */
	if (a.position.x != b.position.x || a.position.y != b.position.y || a.position.z != b.position.z ||
	    fabs(dot) < 1 - 1e-6)
		return "the last keyframe must repeat the first keyframe's position and rotation, where the loop closes";
	return NULL;
}

pbd_pose pbd_scene_pin_motion_pose(const pbd_scene_pin_motion* m, double time) {
	if (m->track.key_count) return scene_motion_track_pose(&m->track, time);
	return scene_motion_velocity_pose(m->velocity, m->angular_velocity, time);
}

pbd_vec3 scene_motion_pin_point(const pbd_scene_pin_motion* m, pbd_pose pose, uint32_t k) {
	return pbd_v3_add(pbd_v3_add(m->centroid, pose.position), pbd_quat_rotate(pose.rotation, m->offsets[k]));
}

pbd_vec3 pbd_scene_pin_motion_position(const pbd_scene_pin_motion* m, uint32_t k, double time) {
	return scene_motion_pin_point(m, pbd_scene_pin_motion_pose(m, time), k);
}
