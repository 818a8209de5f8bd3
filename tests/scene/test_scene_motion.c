/* Prescribed motion in scenes: cubic tracks pass through their keys with a continuous velocity,
 * loops repeat, kinematic colliders and moving pins follow their tracks step by step while the
 * cloth they carry follows without a non-finite number, and bad motion input is refused in one
 * line that names the field. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbd/math.h"
#include "pbd/scene.h"
#include "test_util.h"

static pbd_scene load_ok(const char* json) {
	pbd_scene s;
	pbd_scene_error err;
	if (!pbd_scene_load_string(json, strlen(json), "t.json", NULL, NULL, &s, &err)) fail_msg("%s", err.message);
	return s;
}

static void assert_all_finite(const pbd_scene* s) {
	const uint32_t n = pbd_world_particle_count(s->world);
	const pbd_vec3* x = pbd_world_positions(s->world);
	const pbd_vec3* v = pbd_world_velocities(s->world);
	for (uint32_t i = 0; i < n; ++i)
		if (!pbd_v3_is_finite(x[i]) || !pbd_v3_is_finite(v[i])) fail_msg("particle %u is not finite", i);
}

static double component(pbd_vec3 v, int c) { return c == 0 ? (double)v.x : c == 1 ? (double)v.y : (double)v.z; }

/* Second-order one-sided differences: the track's velocity just before and just after `t`. */
static void one_sided_velocities(const pbd_scene_track* t, double at, double h, double left[3], double right[3]) {
	const pbd_vec3 p0 = pbd_scene_track_pose(t, at).position;
	const pbd_vec3 m1 = pbd_scene_track_pose(t, at - h).position, m2 = pbd_scene_track_pose(t, at - 2 * h).position;
	const pbd_vec3 p1 = pbd_scene_track_pose(t, at + h).position, p2 = pbd_scene_track_pose(t, at + 2 * h).position;
	for (int c = 0; c < 3; ++c) {
		left[c] = (3 * component(p0, c) - 4 * component(m1, c) + component(m2, c)) / (2 * h);
		right[c] = (-3 * component(p0, c) + 4 * component(p1, c) - component(p2, c)) / (2 * h);
	}
}

/* Uneven times and a turn between two keys. */
static pbd_scene_keyframe test_keys[5];

static pbd_scene_track make_track(pbd_scene_interp interp, bool loop) {
	static const double times[5] = {0.5, 1.2, 2.0, 2.4, 3.5};
	static const float pos[5][3] = {{0, 0, 0}, {1, 0.5f, -0.25f}, {1.5f, 2, 0.5f}, {0.25f, 1.75f, 1}, {0, 0, 0}};
	for (int k = 0; k < 5; ++k) {
		test_keys[k].time = times[k];
		test_keys[k].pose = pbd_pose_identity();
		test_keys[k].pose.position = pbd_v3(pos[k][0], pos[k][1], pos[k][2]);
	}
	test_keys[2].pose.rotation = pbd_quat_axis_angle(pbd_v3(0, 0, 1), 1.0f);
	pbd_scene_track t = {UINT32_MAX, 5, test_keys, interp, loop};
	return t;
}

static void test_cubic_through_keys(void** state) {
	(void)state;
	pbd_scene_track t = make_track(PBD_SCENE_INTERP_CUBIC, false);
	for (uint32_t k = 0; k < t.key_count; ++k) {
		const pbd_pose p = pbd_scene_track_pose(&t, t.keys[k].time);
		if (p.position.x != t.keys[k].pose.position.x || p.position.y != t.keys[k].pose.position.y ||
		    p.position.z != t.keys[k].pose.position.z)
			fail_msg("key %u: the cubic track is at (%g, %g, %g)", k, (double)p.position.x, (double)p.position.y,
			         (double)p.position.z);
		assert_near(fabs((double)pbd_v3_dot(
		                     pbd_v3(p.rotation.x, p.rotation.y, p.rotation.z),
		                     pbd_v3(t.keys[k].pose.rotation.x, t.keys[k].pose.rotation.y, t.keys[k].pose.rotation.z)) +
		                 (double)(p.rotation.w * t.keys[k].pose.rotation.w)),
		            1, 1e-6);
	}
	/* Between keys it is a curve, not the chord: halfway from key 1 to key 2 it is off the line. */
	const pbd_vec3 mid = pbd_scene_track_pose(&t, 1.6).position;
	assert_true(fabs((double)mid.x - 1.25) > 1e-3 || fabs((double)mid.y - 1.25) > 1e-3);

	/* Continuous velocity at every interior key, equal to the chord of its neighbours over their
	 * time apart; the linear track's velocity jumps there. */
	const double h = 1e-3;
	pbd_scene_track lin = make_track(PBD_SCENE_INTERP_LINEAR, false);
	for (uint32_t k = 1; k + 1 < t.key_count; ++k) {
		double left[3], right[3];
		one_sided_velocities(&t, t.keys[k].time, h, left, right);
		const double span = t.keys[k + 1].time - t.keys[k - 1].time;
		double jump = 0;
		for (int c = 0; c < 3; ++c) {
			const double chord =
			    (component(t.keys[k + 1].pose.position, c) - component(t.keys[k - 1].pose.position, c)) / span;
			if (fabs(left[c] - right[c]) > 2e-3 || fabs(left[c] - chord) > 2e-3)
				fail_msg("key %u, axis %d: velocity %g before, %g after, tangent %g", k, c, left[c], right[c], chord);
		}
		one_sided_velocities(&lin, t.keys[k].time, h, left, right);
		for (int c = 0; c < 3; ++c) jump = fmax(jump, fabs(left[c] - right[c]));
		assert_true(jump > 0.5);
	}
	/* A held cubic track starts and ends at rest, so that it is C1 across its holds. */
	double left[3], right[3];
	one_sided_velocities(&t, t.keys[0].time, h, left, right);
	for (int c = 0; c < 3; ++c) assert_near(right[c], 0, 2e-3);
	one_sided_velocities(&t, t.keys[4].time, h, left, right);
	for (int c = 0; c < 3; ++c) assert_near(left[c], 0, 2e-3);
}

static void test_loop_repeats(void** state) {
	(void)state;
	for (int interp = 0; interp < 2; ++interp) {
		pbd_scene_track t = make_track((pbd_scene_interp)interp, true);
		const double period = t.keys[4].time - t.keys[0].time;
		for (double time = -2.3; time < 9; time += 0.137) {
			const pbd_pose a = pbd_scene_track_pose(&t, time), b = pbd_scene_track_pose(&t, time + period),
			               c = pbd_scene_track_pose(&t, time + 3 * period);
			for (int k = 0; k < 3; ++k) {
				assert_near(component(a.position, k), component(b.position, k), 1e-5);
				assert_near(component(a.position, k), component(c.position, k), 1e-5);
			}
			const double dot = (double)(a.rotation.x * b.rotation.x + a.rotation.y * b.rotation.y +
			                            a.rotation.z * b.rotation.z + a.rotation.w * b.rotation.w);
			assert_near(fabs(dot), 1, 1e-5);
		}
		/* Keys are hit in every period, and the track moves (it is not held) past its last key. */
		const pbd_vec3 k2 = pbd_scene_track_pose(&t, t.keys[2].time + 2 * period).position;
		assert_near(k2.x, 1.5, 1e-5);
		assert_near(k2.y, 2, 1e-5);
		assert_true(pbd_scene_track_pose(&t, t.keys[4].time + 0.3).position.x > 0.01f);
		if (interp == PBD_SCENE_INTERP_CUBIC) {
			/* The tangents wrap: the velocity is continuous where the loop closes, and not zero. */
			double left[3], right[3];
			one_sided_velocities(&t, t.keys[4].time + period, 1e-3, left, right);
			double speed = 0;
			for (int c = 0; c < 3; ++c) {
				assert_near(left[c], right[c], 2e-3);
				speed += right[c] * right[c];
			}
			assert_true(sqrt(speed) > 0.1);
		}
	}
}

/* A kinematic sphere on a cubic loop under a falling cloth: each frame the collider is at the pose
 * its track gives at the world's time, and the cloth stays finite. */
static void test_collider_cubic_loop(void** state) {
	(void)state;
	pbd_scene s = load_ok(
	    "{\"world\": {\"dt\": 0.02, \"substeps\": 4, \"gravity\": [0, -9.8, 0]},"
	    " \"objects\": [{\"type\": \"grid_cloth\", \"nx\": 8, \"ny\": 8, \"size\": [1, 1], \"origin\": [-0.5, 0.6, "
	    "-0.5],"
	    "   \"axis_u\": [1, 0, 0], \"axis_v\": [0, 0, 1]}],"
	    " \"colliders\": [{\"type\": \"sphere\", \"radius\": 0.3, \"kind\": \"kinematic\", \"static_friction\": 0.5,"
	    "   \"keyframes\": {\"interp\": \"cubic\", \"loop\": true, \"keys\": ["
	    "     {\"time\": 0, \"position\": [0, 0, 0]}, {\"time\": 0.4, \"position\": [0.3, 0.1, 0]},"
	    "     {\"time\": 0.8, \"position\": [0, 0.2, 0.3], \"rotation\": {\"axis\": [0, 1, 0], \"angle_deg\": 90}},"
	    "     {\"time\": 1.2, \"position\": [0, 0, 0], \"rotation\": [0, 0, 0, 1]}]}}]}");
	assert_int_equal(s.track_count, 1);
	assert_int_equal(s.tracks[0].interp, PBD_SCENE_INTERP_CUBIC);
	assert_true(s.tracks[0].loop);
	assert_int_equal(s.tracks[0].key_count, 4);
	for (int f = 1; f <= 160; ++f) {
		assert_int_equal(pbd_scene_step(&s), PBD_OK);
		pbd_collider_def d;
		assert_int_equal(pbd_collider_get_def(s.world, s.colliders[0], &d), PBD_OK);
		const pbd_pose want = pbd_scene_track_pose(&s.tracks[0], pbd_world_time(s.world));
		for (int c = 0; c < 3; ++c)
			if (fabs(component(d.pose.position, c) - component(want.position, c)) > 1e-5)
				fail_msg("frame %d: the sphere is off its track on axis %d", f, c);
		assert_all_finite(&s);
	}
	/* 160 frames of 0.02 s are two periods of 1.2 s and 0.8 s: at the third key's pose. */
	pbd_collider_def d;
	assert_int_equal(pbd_collider_get_def(s.world, s.colliders[0], &d), PBD_OK);
	assert_near(d.pose.position.z, 0.3, 1e-4);
	assert_near(d.pose.position.y, 0.2, 1e-4);
	pbd_scene_free(&s);
}

static pbd_vec3 centroid_of(const pbd_scene* s, uint32_t first, uint32_t count) {
	const pbd_vec3* x = pbd_world_positions(s->world);
	double c[3] = {0, 0, 0};
	for (uint32_t i = first; i < first + count; ++i)
		for (int k = 0; k < 3; ++k) c[k] += component(x[i], k);
	return pbd_v3((pbd_real)(c[0] / count), (pbd_real)(c[1] / count), (pbd_real)(c[2] / count));
}

/* A cloth carried by its top edge along a looping track: the edge is where the track puts it at
 * every frame, moving at the track's speed, and the cloth follows. */
static void test_moving_pinned_edge(void** state) {
	(void)state;
	pbd_scene s = load_ok(
	    "{\"world\": {\"dt\": 0.02, \"substeps\": 8, \"gravity\": [0, -9.8, 0]},"
	    " \"objects\": [{\"type\": \"grid_cloth\", \"nx\": 9, \"ny\": 9, \"size\": [1, 1], \"origin\": [-0.5, 1, 0],"
	    "   \"axis_u\": [1, 0, 0], \"axis_v\": [0, -1, 0],"
	    "   \"moving_pins\": [{\"vertices\": {\"grid_edge\": \"top\"}, \"keyframes\": {\"interp\": \"cubic\","
	    "     \"loop\": true, \"keys\": [{\"time\": 0}, {\"time\": 0.5, \"position\": [1, 0, 0]},"
	    "     {\"time\": 1, \"position\": [1, 0, 1], \"rotation\": {\"axis\": [0, 1, 0], \"angle_deg\": 45}},"
	    "     {\"time\": 1.5, \"position\": [0, 0, 0], \"rotation\": [0, 0, 0, 1]}]}}]}],"
	    " \"colliders\": [{\"type\": \"plane\", \"offset\": -5}]}");
	assert_int_equal(s.pin_motion_count, 1);
	const pbd_scene_pin_motion* m = &s.pin_motions[0];
	assert_int_equal(m->object, 0);
	assert_int_equal(m->count, 9);
	const uint32_t first = s.objects[0].range.first_particle, n = s.objects[0].range.particle_count;
	/* The top edge as the file wrote it: x from -0.5 to 0.5 at y = 1, z = 0. */
	pbd_vec3 start[9];
	for (uint32_t k = 0; k < 9; ++k) {
		assert_int_equal(m->particles[k], first + k);
		assert_true(pbd_particle_is_pinned(s.world, first + k));
		start[k] = pbd_v3((pbd_real)(-0.5 + 0.125 * k), 1, 0);
		assert_near(pbd_world_positions(s.world)[first + k].x, start[k].x, 1e-6);
	}
	const pbd_vec3 c0 = centroid_of(&s, first, n);
	const pbd_vec3* x = pbd_world_positions(s.world);
	const pbd_vec3* v = pbd_world_velocities(s.world);
	pbd_vec3 prev[9];
	memcpy(prev, x + first, sizeof prev);
	const double dt = 0.02;
	double farthest = 0;
	for (int f = 1; f <= 150; ++f) {
		assert_int_equal(pbd_scene_step(&s), PBD_OK);
		x = pbd_world_positions(s.world);
		v = pbd_world_velocities(s.world);
		const double time = pbd_world_time(s.world);
		for (uint32_t k = 0; k < 9; ++k) {
			const pbd_vec3 want = pbd_scene_pin_motion_position(m, k, time);
			for (int c = 0; c < 3; ++c) {
				if (fabs(component(x[first + k], c) - component(want, c)) > 1e-5)
					fail_msg("frame %d: pinned vertex %u is off its track on axis %d", f, k, c);
				/* Its velocity is the motion's, for contacts and friction. */
				const double moved = (component(x[first + k], c) - component(prev[k], c)) / dt;
				if (fabs(component(v[first + k], c) - moved) > 1e-3)
					fail_msg("frame %d: vertex %u moves at %g on axis %d, reports %g", f, k, moved, c,
					         component(v[first + k], c));
			}
			prev[k] = x[first + k];
		}
		/* At the key times the edge is the file's edge displaced by the key's position. */
		if (f == 25 || f == 100)
			for (uint32_t k = 0; k < 9; ++k) {
				assert_near(x[first + k].x, start[k].x + 1, 1e-4);
				assert_near(x[first + k].y, 1, 1e-4);
				assert_near(x[first + k].z, 0, 1e-4);
			}
		if (f == 50) {
			/* Turned 45 degrees about y around the displaced centroid (0, 1, 0) + (1, 0, 1). */
			const double a = 3.14159265358979323846 / 4;
			for (uint32_t k = 0; k < 9; ++k) {
				assert_near(x[first + k].x, 1 + cos(a) * (double)start[k].x, 1e-4);
				assert_near(x[first + k].z, 1 - sin(a) * (double)start[k].x, 1e-4);
			}
		}
		assert_all_finite(&s);
		farthest = fmax(farthest, (double)pbd_v3_length(pbd_v3_sub(centroid_of(&s, first, n), c0)));
	}
	/* The cloth was dragged along: its centroid went most of the track's 1.4 m from where it started. */
	assert_true(farthest > 0.7);
	pbd_scene_free(&s);
}

/* Constant velocity and angular velocity: after t seconds the set has moved v t and turned |w| t
 * about its moving centroid. */
static void test_moving_pins_velocity(void** state) {
	(void)state;
	pbd_scene s = load_ok(
	    "{\"world\": {\"dt\": 0.01, \"substeps\": 4, \"gravity\": [0, 0, 0]},"
	    " \"objects\": [{\"type\": \"grid_cloth\", \"nx\": 5, \"ny\": 5, \"size\": [1, 1], \"origin\": [0, 0, 0],"
	    "   \"axis_u\": [1, 0, 0], \"axis_v\": [0, 0, 1],"
	    "   \"moving_pins\": [{\"vertices\": {\"grid_corners\": [\"top_left\", \"top_right\"]},"
	    "     \"velocity\": [0, 0.5, 0], \"angular_velocity\": [0, 2, 0]}]}]}");
	const pbd_scene_pin_motion* m = &s.pin_motions[0];
	assert_int_equal(m->count, 2);
	assert_int_equal(m->track.key_count, 0);
	const uint32_t a = m->particles[0], b = m->particles[1];
	for (int f = 0; f < 100; ++f) assert_int_equal(pbd_scene_step(&s), PBD_OK);
	const double t = pbd_world_time(s.world), angle = 2 * t;
	assert_near(t, 1, 1e-6);
	/* The corners start at x = 0 and x = 1 (z = 0), about the centroid (0.5, 0, 0). A turn about +y
	 * takes +x toward -z. */
	const pbd_vec3* x = pbd_world_positions(s.world);
	assert_near(x[a].x, 0.5 - 0.5 * cos(angle), 1e-4);
	assert_near(x[a].z, 0.5 * sin(angle), 1e-4);
	assert_near(x[b].x, 0.5 + 0.5 * cos(angle), 1e-4);
	assert_near(x[b].z, -0.5 * sin(angle), 1e-4);
	assert_near(x[a].y, 0.5 * t, 1e-4);
	assert_near(x[b].y, 0.5 * t, 1e-4);
	assert_all_finite(&s);
	pbd_scene_free(&s);
}

static const char* const cloth_head =
    "{\"objects\": [{\"type\": \"grid_cloth\", \"nx\": 4, \"ny\": 4, \"size\": [1, 1],";

static const struct {
	const char* json; /* after cloth_head when it starts with a quote; whole otherwise */
	const char* expect;
} bad_cases[] = {
    {"\"moving_pins\": [{\"vertices\": {\"grid_edge\": \"top\"}, \"keyframes\": [{\"time\": 0}, {\"time\": 1}, "
     "{\"time\": 1}]}]}]}",
     "t.json: objects[0].moving_pins[0].keyframes[2].time: must be greater than the previous keyframe's 1 (got 1)"},
    {"\"moving_pins\": [{\"vertices\": {\"grid_edge\": \"top\"}, \"keyframes\": {\"loop\": true, \"keys\": "
     "[{\"time\": 0}]}}]}]}",
     "t.json: objects[0].moving_pins[0].keyframes.loop: a loop needs at least two keyframes"},
    {"\"moving_pins\": [{\"vertices\": {\"grid_edge\": \"top\"}, \"keyframes\": {\"loop\": true, \"keys\": "
     "[{\"time\": 0}, {\"time\": 1, \"position\": [1, 0, 0]}]}}]}]}",
     "t.json: objects[0].moving_pins[0].keyframes.loop: the last keyframe must repeat the first keyframe's"},
    {"\"moving_pins\": [{\"vertices\": {\"grid_edge\": \"top\"}, \"keyframes\": {\"interp\": \"bezier\", \"keys\": "
     "[{\"time\": 0}]}}]}]}",
     "t.json: objects[0].moving_pins[0].keyframes.interp: unknown value \"bezier\""},
    {"\"moving_pins\": [{\"vertices\": [], \"velocity\": [1, 0, 0]}]}]}",
     "t.json: objects[0].moving_pins[0].vertices: selects no vertex"},
    {"\"moving_pins\": [{\"vertices\": {\"box\": {\"min\": [5, 5, 5], \"max\": [6, 6, 6]}}, \"velocity\": [1, 0, "
     "0]}]}]}",
     "t.json: objects[0].moving_pins[0].vertices: selects no vertex"},
    {"\"moving_pins\": [{\"vertices\": [0]}]}]}", "t.json: objects[0].moving_pins[0]: missing \"keyframes\""},
    {"\"moving_pins\": [{\"keyframes\": [{\"time\": 0}]}]}]}",
     "t.json: objects[0].moving_pins[0]: missing \"vertices\""},
    {"\"moving_pins\": [{\"vertices\": [0], \"keyframes\": [{\"time\": 0}], \"angular_velocity\": [0, 1, 0]}]}]}",
     "t.json: objects[0].moving_pins[0].angular_velocity: not with keyframes"},
    {"\"pinned\": [1], \"moving_pins\": [{\"vertices\": [0, 1], \"velocity\": [1, 0, 0]}]}]}",
     "t.json: objects[0].moving_pins[0].vertices: vertex 1 is already pinned"},
    {"\"moving_pins\": [{\"vertices\": [0], \"velocity\": [1, 0, 0]}, {\"vertices\": [2, 0], \"velocity\": [1, 0, "
     "0]}]}]}",
     "t.json: objects[0].moving_pins[1].vertices: vertex 0 is already pinned"},
    {"\"moving_pins\": {\"vertices\": [0], \"velocity\": [1, 0, 0]}}]}",
     "t.json: objects[0].moving_pins: expected an array"},
    {"\"moving_pins\": [{\"vertices\": [0], \"keyframes\": {\"keys\": [{\"time\": 0}], \"loops\": true}}]}]}",
     "t.json: objects[0].moving_pins[0].keyframes.loops: unknown key"},
    {"{\"objects\": [{\"type\": \"particles\", \"particles\": [{\"x\": [0, 0, 0]}], \"moving_pins\": []}]}",
     "t.json: objects[0].moving_pins: unknown key"},
    {"{\"colliders\": [{\"type\": \"sphere\", \"radius\": 1, \"kind\": \"kinematic\", \"keyframes\": {\"interp\": "
     "\"spline\", \"keys\": [{\"time\": 0}]}}]}",
     "t.json: colliders[0].keyframes.interp: unknown value \"spline\""},
    {"{\"colliders\": [{\"type\": \"sphere\", \"radius\": 1, \"kind\": \"kinematic\", \"keyframes\": {\"loop\": true, "
     "\"keys\": [{\"time\": 2}]}}]}",
     "t.json: colliders[0].keyframes.loop: a loop needs at least two keyframes"},
    {"{\"colliders\": [{\"type\": \"sphere\", \"radius\": 1, \"kind\": \"kinematic\", \"keyframes\": {\"keys\": "
     "[{\"time\": 1}, {\"time\": 0.5}]}}]}",
     "t.json: colliders[0].keyframes.keys[1].time: must be greater than the previous keyframe's 1 (got 0.5)"},
    {"{\"colliders\": [{\"type\": \"sphere\", \"radius\": 1, \"kind\": \"kinematic\", \"keyframes\": {\"keys\": 4}}]}",
     "t.json: colliders[0].keyframes.keys: expected an array of keyframes"},
};

static void test_bad_motion(void** state) {
	(void)state;
	for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; ++i) {
		char json[1024];
		if (bad_cases[i].json[0] == '{')
			snprintf(json, sizeof json, "%s", bad_cases[i].json);
		else
			snprintf(json, sizeof json, "%s %s", cloth_head, bad_cases[i].json);
		pbd_scene s;
		pbd_scene_error err;
		if (pbd_scene_load_string(json, strlen(json), "t.json", NULL, NULL, &s, &err))
			fail_msg("case %zu loaded: %s", i, json);
		if (strncmp(err.message, bad_cases[i].expect, strlen(bad_cases[i].expect)) != 0 || strchr(err.message, '\n'))
			fail_msg("case %zu: got \"%s\", expected \"%s...\"", i, err.message, bad_cases[i].expect);
		/* A failed load leaves the scene zeroed. */
		assert_null(s.world);
		assert_int_equal(s.pin_motion_count, 0);
	}
}

int main(void) {
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cubic_through_keys),   cmocka_unit_test(test_loop_repeats),
	    cmocka_unit_test(test_collider_cubic_loop),  cmocka_unit_test(test_moving_pinned_edge),
	    cmocka_unit_test(test_moving_pins_velocity), cmocka_unit_test(test_bad_motion),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
