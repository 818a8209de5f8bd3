/* Joints in scene files: every type loads between the bodies it names, its frames given in the
 * bodies' frames or made from a world anchor and axis where the bodies start (the axis the frames'
 * x, so a hinge turns about it and starts at angle 0), with its limit, motor, compliance and break
 * thresholds; a distance joint keeps the length it starts with; a joint breaks in a scene as in
 * code; bad entries are refused in one line that names the file, the joint and the field; and the
 * built-in scenes with joints do what their descriptions say: the chains hold together, the door
 * opens to its limit, the cradle passes its momentum along the row, the wrecking ball knocks the
 * wall over. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pbd/math.h"
#include "pbd/scene.h"
#include "test_util.h"

static pbd_scene load_ok(const char* json) {
	pbd_scene s;
	pbd_scene_error err;
	const pbd_scene_options opt = {false, test_log_fail, NULL, 0};
	if (!pbd_scene_load_string(json, strlen(json), "t.json", NULL, &opt, &s, &err)) fail_msg("%s", err.message);
	return s;
}

static pbd_scene load_builtin_ok(const char* name) {
	pbd_scene s;
	pbd_scene_error err;
	const pbd_scene_options opt = {false, test_log_fail, NULL, 0};
	if (!pbd_scene_load_builtin(name, &opt, &s, &err)) fail_msg("%s: %s", name, err.message);
	return s;
}

static pbd_body_state body_state(const pbd_scene* s, uint32_t body) {
	pbd_body_state st;
	assert_int_equal(pbd_body_get_state(s->world, s->bodies[body].id, &st), PBD_OK);
	return st;
}

static pbd_joint_state joint_state(const pbd_scene* s, uint32_t joint) {
	pbd_joint_state st;
	assert_int_equal(pbd_world_get_joint_state(s->world, s->joints[joint].index, &st), PBD_OK);
	return st;
}

static pbd_joint_def joint_def(const pbd_scene* s, uint32_t joint) {
	pbd_joint_def d;
	assert_int_equal(pbd_world_get_joint(s->world, s->joints[joint].index, &d), PBD_OK);
	return d;
}

static double dist(pbd_vec3 a, pbd_vec3 b) { return (double)pbd_v3_length(pbd_v3_sub(a, b)); }

static bool same_id(pbd_body_id a, pbd_body_id b) { return a.index1 == b.index1 && a.generation == b.generation; }

/* A joint's frame on one side, in the world. */
static pbd_pose world_frame(const pbd_scene* s, pbd_body_id body, pbd_pose frame) {
	if (body.index1 == 0) return frame;
	pbd_body_state st;
	assert_int_equal(pbd_body_get_state(s->world, body, &st), PBD_OK);
	return (pbd_pose){pbd_pose_apply(st.pose, frame.position), pbd_quat_mul(st.pose.rotation, frame.rotation)};
}

/* Each type loads with its fields; the frames an anchor and axis make put both origins at the
 * anchor and both x axes along the axis, whatever the bodies' rotations. */
static void test_each_type(void** state) {
	(void)state;
	pbd_scene s = load_ok(
	    "{\"world\": {\"gravity\": [0, 0, 0]},"
	    " \"bodies\": ["
	    "  {\"name\": \"base\", \"type\": \"static\", \"position\": [0, 1, 0], \"shapes\": [{\"type\": \"box\", "
	    "\"half_extents\": [0.1, 0.1, 0.1]}]},"
	    "  {\"name\": \"arm\", \"type\": \"dynamic\", \"position\": [0.5, 1, 0], \"rotation\": {\"axis\": [1, 1, 0], "
	    "\"angle_deg\": 40}, \"shapes\": [{\"type\": \"box\", \"half_extents\": [0.3, 0.05, 0.05]}]},"
	    "  {\"name\": \"slider\", \"type\": \"dynamic\", \"position\": [1, 1, 0], \"shapes\": [{\"type\": \"sphere\", "
	    "\"radius\": 0.1}]},"
	    "  {\"name\": \"bob\", \"type\": \"dynamic\", \"position\": [1, 0, 0.5], \"shapes\": [{\"type\": \"sphere\", "
	    "\"radius\": 0.05}]}],"
	    " \"joints\": ["
	    "  {\"name\": \"elbow\", \"type\": \"hinge\", \"a\": \"base\", \"b\": \"arm\", \"anchor\": [0.2, 1, 0], "
	    "\"axis\": "
	    "[0, 0, 2], \"limit\": [-1, 1.5], \"motor\": {\"mode\": \"velocity\", \"target\": 2, \"max\": 5}, "
	    "\"compliance\": 1e-6, \"break_torque\": 100},"
	    "  {\"type\": \"prismatic\", \"a\": \"arm\", \"b\": \"slider\", \"anchor\": [1, 1, 0], \"axis\": [-1, 0, 0], "
	    "\"limit\": [-0.2, 0.3], \"motor\": {\"mode\": \"position\", \"target\": 0.1, \"compliance\": 0.01}},"
	    "  {\"type\": \"ball\", \"a\": \"world\", \"b\": \"slider\", \"anchor\": [1, 2, 0], \"axis\": [0, -1, 0], "
	    "\"swing\": 0.5, \"limit\": [-0.2, 0.2], \"break_force\": 50},"
	    "  {\"type\": \"fixed\", \"b\": \"arm\", \"frame_a\": {\"position\": [0.5, 1, 0]}, \"frame_b\": {\"rotation\": "
	    "{\"axis\": [1, 1, 0], \"angle_deg\": -40}}},"
	    "  {\"name\": \"rope\", \"type\": \"distance\", \"a\": \"slider\", \"b\": \"bob\", \"anchor_a\": [1, 1, 0], "
	    "\"anchor_b\": [1, 0, 0.5]},"
	    "  {\"type\": \"distance\", \"b\": \"bob\", \"anchor_a\": [1, 2, 0.5], \"anchor_b\": [1, 0, 0.5], \"limit\": "
	    "[0, "
	    "3]}]}");
	assert_int_equal(s.joint_count, 6);
	assert_int_equal(pbd_world_joint_count(s.world), 6);
	static const char* const names[6] = {"elbow", "joint1", "joint2", "joint3", "rope", "joint5"};
	static const pbd_joint_type types[6] = {PBD_JOINT_HINGE, PBD_JOINT_PRISMATIC, PBD_JOINT_BALL,
	                                        PBD_JOINT_FIXED, PBD_JOINT_DISTANCE,  PBD_JOINT_DISTANCE};
	/* the sides: 0 the world, else 1 + the body's index */
	static const int sides[6][2] = {{1, 2}, {2, 3}, {0, 3}, {0, 2}, {3, 4}, {0, 4}};
	for (uint32_t j = 0; j < 6; ++j) {
		assert_string_equal(s.joints[j].name, names[j]);
		assert_int_equal(s.joints[j].index, j);
		const pbd_joint_def d = joint_def(&s, j);
		assert_int_equal(d.type, types[j]);
		const pbd_body_id none = {0, 0};
		assert_true(same_id(d.body_a, sides[j][0] ? s.bodies[sides[j][0] - 1].id : none));
		assert_true(same_id(d.body_b, sides[j][1] ? s.bodies[sides[j][1] - 1].id : none));
	}
	/* The anchored joints: both origins at the anchor, both x axes along the axis. */
	static const pbd_vec3 anchors[3] = {{(pbd_real)0.2, 1, 0}, {1, 1, 0}, {1, 2, 0}};
	static const pbd_vec3 axes[3] = {{0, 0, 1}, {-1, 0, 0}, {0, -1, 0}};
	for (uint32_t j = 0; j < 3; ++j) {
		const pbd_joint_def d = joint_def(&s, j);
		const pbd_pose fa = world_frame(&s, d.body_a, d.frame_a), fb = world_frame(&s, d.body_b, d.frame_b);
		assert_true(dist(fa.position, anchors[j]) < 1e-6 && dist(fb.position, anchors[j]) < 1e-6);
		assert_true(dist(pbd_quat_rotate(fa.rotation, pbd_v3(1, 0, 0)), axes[j]) < 1e-6);
		assert_true(dist(pbd_quat_rotate(fb.rotation, pbd_v3(1, 0, 0)), axes[j]) < 1e-6);
		/* the same y axis on both sides: the angle starts at 0 */
		assert_true(dist(pbd_quat_rotate(fa.rotation, pbd_v3(0, 1, 0)), pbd_quat_rotate(fb.rotation, pbd_v3(0, 1, 0))) <
		            1e-6);
	}
	pbd_joint_def d = joint_def(&s, 0);
	assert_true(d.limit);
	assert_near(d.lower, -1, 1e-7);
	assert_near(d.upper, 1.5, 1e-7);
	assert_int_equal(d.motor, PBD_MOTOR_VELOCITY);
	assert_near(d.motor_target, 2, 1e-7);
	assert_near(d.motor_max, 5, 1e-7);
	assert_near(d.compliance, 1e-6, 1e-12);
	assert_near(d.break_torque, 100, 1e-5);
	assert_near(d.break_force, 0, 0);
	d = joint_def(&s, 1);
	assert_int_equal(d.motor, PBD_MOTOR_POSITION);
	assert_near(d.motor_target, 0.1, 1e-7);
	assert_near(d.motor_compliance, 0.01, 1e-9);
	assert_true(d.limit && fabs((double)d.lower + 0.2) < 1e-7 && fabs((double)d.upper - 0.3) < 1e-7);
	d = joint_def(&s, 2);
	assert_near(d.swing, 0.5, 1e-7);
	assert_true(d.limit);
	assert_near(d.break_force, 50, 1e-5);
	/* The fixed joint's frames as given: the world's at (0.5, 1, 0), the arm's turned back to the
	 * world's axes, so that it holds the arm where it is. */
	d = joint_def(&s, 3);
	assert_near(pbd_v3_length(pbd_v3_sub(d.frame_a.position, pbd_v3((pbd_real)0.5, 1, 0))), 0, 1e-7);
	const pbd_pose fa = world_frame(&s, d.body_a, d.frame_a), fb = world_frame(&s, d.body_b, d.frame_b);
	assert_true(dist(fa.position, fb.position) < 1e-6);
	assert_true(fabs(fabs((double)pbd_quat_mul(pbd_quat_conj(fa.rotation), fb.rotation).w) - 1) < 1e-6);
	/* Distance joints: the length they start with, or the limit given. */
	d = joint_def(&s, 4);
	assert_false(d.limit);
	assert_near(d.lower, sqrt(1.25), 1e-6);
	assert_near(d.upper, sqrt(1.25), 1e-6);
	d = joint_def(&s, 5);
	assert_near(d.lower, 0, 0);
	assert_near(d.upper, 3, 1e-7);
	/* In zero gravity with nothing moving, each joint starts without error. */
	assert_int_equal(pbd_world_set_joint_motor(s.world, 0, PBD_MOTOR_OFF, 0, 0, 0), PBD_OK);
	assert_int_equal(pbd_world_set_joint_motor(s.world, 1, PBD_MOTOR_OFF, 0, 0, 0), PBD_OK);
	assert_int_equal(pbd_scene_step(&s), PBD_OK);
	for (uint32_t j = 0; j < 6; ++j) {
		const pbd_joint_state js = joint_state(&s, j);
		assert_false(js.broken);
		if ((double)js.error_distance > 1e-5 || (double)js.error_angle > 1e-5)
			fail_msg("joint %u starts %.3g m and %.3g rad off", j, (double)js.error_distance, (double)js.error_angle);
	}
	assert_near(joint_state(&s, 0).position, 0, 1e-5);
	pbd_scene_free(&s);
}

/* A box hanging from a ball joint that holds twice its weight: it holds; at half its weight it
 * breaks in the first step, reported once. */
static void test_break_force(void** state) {
	(void)state;
	const double m = 1000 * 0.2 * 0.2 * 0.2;
	for (int breaking = 0; breaking < 2; ++breaking) {
		char json[1024];
		snprintf(json, sizeof json,
		         "{\"world\": {\"gravity\": [0, -9.81, 0], \"substeps\": 10},"
		         " \"bodies\": [{\"name\": \"box\", \"type\": \"dynamic\", \"position\": [0, 1, 0], \"shapes\": "
		         "[{\"type\": \"box\", \"half_extents\": [0.1, 0.1, 0.1]}]}],"
		         " \"joints\": [{\"name\": \"hook\", \"type\": \"ball\", \"b\": \"box\", \"anchor\": [0, 1.1, 0], "
		         "\"break_force\": %.17g}]}",
		         (breaking ? 0.5 : 2) * m * 9.81);
		pbd_scene s = load_ok(json);
		assert_int_equal(pbd_scene_step(&s), PBD_OK);
		pbd_joint_event ev;
		const uint32_t events = pbd_world_get_joint_events(s.world, &ev, 1);
		for (int f = 0; f < 29; ++f) assert_int_equal(pbd_scene_step(&s), PBD_OK);
		const double y = (double)body_state(&s, 0).center.y;
		assert_int_equal(events, breaking ? 1 : 0);
		assert_int_equal(joint_state(&s, 0).broken, breaking);
		if (breaking) {
			assert_int_equal(ev.joint, s.joints[0].index);
			assert_true(y < 1 - 0.5 * 9.81 * 0.25 * 0.9);
		} else {
			assert_near(y, 1, 1e-4);
		}
		pbd_scene_free(&s);
	}
}

/* ---- bad input --------------------------------------------------------------------------- */

#define BODIES                                                                                                         \
	"\"bodies\": [{\"name\": \"door\", \"type\": \"dynamic\", \"position\": [0.5, 1, 0], \"shapes\": [{\"type\": "     \
	"\"box\", \"half_extents\": [0.5, 1, 0.025]}]}, {\"name\": \"wall\", \"type\": \"static\", \"shapes\": "           \
	"[{\"type\": \"plane\"}]}, {\"name\": \"leaf\", \"type\": \"dynamic\", \"position\": [2, 1, 0], \"shapes\": "      \
	"[{\"type\": \"sphere\", \"radius\": 0.1}]}]"
#define HINGE "\"type\": \"hinge\", \"b\": \"door\", \"anchor\": [0, 1, 0], \"axis\": [0, 1, 0]"

static const struct {
	const char* json;
	const char* expect; /* the start of the message */
} bad_cases[] = {
    {"{" BODIES ", \"joints\": {}}", "t.json: joints: expected an array (got an object)"},
    {"{" BODIES ", \"joints\": [3]}", "t.json: joints[0]: expected an object (got a number)"},
    {"{" BODIES ", \"joints\": [{" HINGE ", \"axes\": [0, 1, 0]}]}",
     "t.json: joints[0].axes: unknown key (did you mean \"axis\"?)"},
    {"{" BODIES ", \"joints\": [{\"b\": \"door\", \"anchor\": [0, 1, 0]}]}",
     "t.json: joints[0]: missing \"type\" (\"fixed\", \"ball\", \"hinge\", \"prismatic\" or \"distance\")"},
    {"{" BODIES ", \"joints\": [{\"type\": \"hing\", \"b\": \"door\", \"anchor\": [0, 1, 0]}]}",
     "t.json: joints[0].type: unknown value \"hing\" (expected one of \"fixed\", \"ball\", \"hinge\", \"prismatic\", "
     "\"distance\")"},
    /* a body that is not there, named; the scene's bodies listed */
    {"{" BODIES ", \"joints\": [{\"type\": \"ball\", \"a\": \"door\", \"b\": \"dor\", \"anchor\": [0, 1, 0]}]}",
     "t.json: joints[0].b: no body named \"dor\" (the bodies are \"door\", \"wall\", \"leaf\")"},
    {"{\"joints\": [{\"type\": \"ball\", \"b\": \"door\", \"anchor\": [0, 1, 0]}]}",
     "t.json: joints[0].b: no body named \"door\": the scene has no \"bodies\""},
    {"{" BODIES ", \"joints\": [{\"type\": \"ball\", \"a\": \"door\", \"b\": \"door\", \"anchor\": [0, 1, 0]}]}",
     "t.json: joints[0].b: names the same body as \"a\" (\"door\")"},
    {"{" BODIES ", \"joints\": [{\"type\": \"ball\", \"a\": \"wall\", \"anchor\": [0, 1, 0]}]}",
     "t.json: joints[0]: neither \"a\" nor \"b\" names a dynamic body"},
    {"{" BODIES ", \"joints\": [{" HINGE ", \"limit\": [1, 0]}]}", "t.json: joints[0].limit: lower 1 is above upper 0"},
    {"{" BODIES ", \"joints\": [{" HINGE ", \"limit\": [-4, 0]}]}",
     "t.json: joints[0].limit[0]: must be in [-3.141592653589793, 3.141592653589793] (got -4)"},
    {"{" BODIES ", \"joints\": [{" HINGE ", \"limit\": 1}]}", "t.json: joints[0].limit: expected [lower, upper]"},
    {"{" BODIES ", \"joints\": [{\"type\": \"fixed\", \"b\": \"door\", \"anchor\": [0, 1, 0], \"limit\": [0, 1]}]}",
     "t.json: joints[0].limit: a fixed joint has no limit"},
    {"{" BODIES
     ", \"joints\": [{\"type\": \"distance\", \"b\": \"door\", \"anchor_a\": [0, 2, 0], \"anchor_b\": [0, 1, "
     "0], \"limit\": [-1, 1]}]}",
     "t.json: joints[0].limit[0]: must be in [0, 1000000] (got -1)"},
    /* a motor on a joint that has none, and motors missing or given too much */
    {"{" BODIES ", \"joints\": [{\"type\": \"ball\", \"b\": \"door\", \"anchor\": [0, 1, 0], \"motor\": {\"mode\": "
     "\"velocity\", \"target\": 1, \"max\": 1}}]}",
     "t.json: joints[0].motor: only hinge and prismatic joints have a motor (this one is ball)"},
    {"{" BODIES ", \"joints\": [{" HINGE ", \"motor\": {\"mode\": \"velocity\", \"target\": 1}}]}",
     "t.json: joints[0].motor: missing \"max\": the largest torque (N m) a velocity motor exerts"},
    {"{" BODIES ", \"joints\": [{" HINGE ", \"motor\": {\"target\": 1}}]}",
     "t.json: joints[0].motor: missing \"mode\" (\"velocity\" or \"position\")"},
    {"{" BODIES ", \"joints\": [{" HINGE ", \"motor\": {\"mode\": \"position\", \"target\": 1, \"max\": 2}}]}",
     "t.json: joints[0].motor.max: only for a velocity motor"},
    {"{" BODIES ", \"joints\": [{" HINGE ", \"motor\": {\"mode\": \"position\", \"target\": 4}}]}",
     "t.json: joints[0].motor.target: must be in (-3.141592653589793, 3.141592653589793] (got 4)"},
    {"{" BODIES ", \"joints\": [{" HINGE ", \"motor\": {\"mode\": \"velocity\", \"target\": 1, \"max\": 0}}]}",
     "t.json: joints[0].motor.max: must be in (0, 1000000000] (got 0)"},
    /* where the frames come from */
    {"{" BODIES ", \"joints\": [{\"type\": \"hinge\", \"b\": \"door\", \"anchor\": [0, 1, 0]}]}",
     "t.json: joints[0]: missing \"axis\": the world direction a hinge placed by an anchor turns about"},
    {"{" BODIES ", \"joints\": [{\"type\": \"prismatic\", \"b\": \"door\", \"anchor_b\": [0, 1, 0], \"frame_a\": {}}]}",
     "t.json: joints[0]: missing \"axis\": the world direction a prismatic placed by an anchor slides along"},
    {"{" BODIES ", \"joints\": [{\"type\": \"ball\", \"b\": \"door\", \"anchor\": [0, 1, 0], \"swing\": 1}]}",
     "t.json: joints[0]: missing \"axis\": the world direction a ball placed by an anchor turns about"},
    {"{" BODIES ", \"joints\": [{\"type\": \"hinge\", \"b\": \"door\", \"anchor\": [0, 1, 0], \"axis\": [0, 0, 0]}]}",
     "t.json: joints[0].axis: must not be zero"},
    {"{" BODIES ", \"joints\": [{\"type\": \"ball\", \"b\": \"door\"}]}",
     "t.json: joints[0]: side a needs a place: \"anchor\" (a world point both sides share), \"anchor_a\" (a world "
     "point) or \"frame_a\" (a pose in its body's frame)"},
    {"{" BODIES
     ", \"joints\": [{\"type\": \"ball\", \"b\": \"door\", \"anchor\": [0, 1, 0], \"anchor_b\": [0, 1, 0]}]}",
     "t.json: joints[0].anchor_b: give either \"anchor\" (both sides) or \"anchor_a\"/\"anchor_b\", not both"},
    {"{" BODIES ", \"joints\": [{\"type\": \"ball\", \"b\": \"door\", \"frame_a\": {}, \"anchor_a\": [0, 1, 0], "
     "\"anchor_b\": [0, 1, 0]}]}",
     "t.json: joints[0].anchor_a: give either \"frame_a\" (in the body's frame) or \"anchor_a\" (in the world), not "
     "both"},
    {"{" BODIES
     ", \"joints\": [{\"type\": \"ball\", \"b\": \"door\", \"frame_a\": {}, \"frame_b\": {}, \"anchor\": [0, "
     "1, 0]}]}",
     "t.json: joints[0].anchor: places neither side: both have a frame (\"frame_a\" and \"frame_b\")"},
    {"{" BODIES ", \"joints\": [{\"type\": \"hinge\", \"b\": \"door\", \"frame_a\": {}, \"frame_b\": {}, \"axis\": [0, "
     "1, 0]}]}",
     "t.json: joints[0].axis: only with an anchor: \"frame_a\" and \"frame_b\" carry their own rotations"},
    {"{" BODIES ", \"joints\": [{\"type\": \"ball\", \"b\": \"door\", \"frame_a\": [0, 1, 0], \"frame_b\": {}}]}",
     "t.json: joints[0].frame_a: expected {\"position\": [x, y, z], \"rotation\": ...} (got an array)"},
    {"{" BODIES ", \"joints\": [{\"type\": \"ball\", \"b\": \"door\", \"frame_a\": {\"rotation\": [0, 0, 0, 0]}, "
     "\"frame_b\": {}}]}",
     "t.json: joints[0].frame_a.rotation: must not be the zero quaternion"},
    /* the other fields' ranges */
    {"{" BODIES ", \"joints\": [{" HINGE ", \"swing\": 1}]}",
     "t.json: joints[0].swing: only a ball joint has a swing (cone) limit (this one is hinge)"},
    {"{" BODIES ", \"joints\": [{\"type\": \"ball\", \"b\": \"door\", \"anchor\": [0, 1, 0], \"axis\": [1, 0, 0], "
     "\"swing\": 0}]}",
     "t.json: joints[0].swing: must be in (0, 3.141592653589793] (got 0)"},
    {"{" BODIES ", \"joints\": [{" HINGE ", \"compliance\": -1}]}",
     "t.json: joints[0].compliance: must be in [0, 1000000] (got -1)"},
    {"{" BODIES ", \"joints\": [{" HINGE ", \"break_force\": -1}]}",
     "t.json: joints[0].break_force: must be in [0, 1000000000] (got -1)"},
    /* names: the joint's own in the message, unique among the joints; "world" is the world */
    {"{" BODIES ", \"joints\": [{" HINGE
     "}, {\"name\": \"hinge\", \"type\": \"ball\", \"a\": \"door\", \"b\": \"lef\", "
     "\"anchor\": [1, 1, 0]}]}",
     "t.json: joints[1].b: no body named \"lef\" (the bodies are \"door\", \"wall\", \"leaf\") (joint \"hinge\")"},
    {"{" BODIES ", \"joints\": [{\"name\": \"h\", " HINGE "}, {\"name\": \"h\", " HINGE "}]}",
     "t.json: joints[1].name: \"h\" is already the name of joints[0]"},
    {"{\"bodies\": [{\"name\": \"world\", \"type\": \"dynamic\", \"shapes\": [{\"type\": \"sphere\", \"radius\": 1}]}],"
     " \"joints\": [{\"type\": \"ball\", \"a\": \"world\", \"anchor\": [0, 1, 0]}]}",
     "t.json: joints[0].a: \"world\" is the world here, and bodies[0] is called \"world\" too (rename it)"},
};

static void test_bad_joints(void** state) {
	(void)state;
	for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; ++i) {
		const char* json = bad_cases[i].json;
		pbd_scene s;
		pbd_scene_error err;
		if (pbd_scene_load_string(json, strlen(json), "t.json", NULL, NULL, &s, &err))
			fail_msg("case %zu loaded: %s", i, json);
		if (strncmp(err.message, bad_cases[i].expect, strlen(bad_cases[i].expect)) != 0 || strchr(err.message, '\n'))
			fail_msg("case %zu: got \"%s\", expected \"%s...\"", i, err.message, bad_cases[i].expect);
		/* A failed load leaves the scene zeroed. */
		assert_null(s.world);
		assert_int_equal(s.joint_count, 0);
		assert_null(s.joints);
	}
}

/* Joints name the bodies of the composed scene, included ones too; an included file holds no
 * joints of its own (the key is refused there, with that file named). */
static void test_included_bodies(void** state) {
	(void)state;
	char dir[] = "/tmp/pbd_scene_joints_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char lib[64], bad[64], main_path[64], bad_main[64];
	snprintf(lib, sizeof lib, "%s/lib.json", dir);
	snprintf(bad, sizeof bad, "%s/bad.json", dir);
	snprintf(main_path, sizeof main_path, "%s/main.json", dir);
	snprintf(bad_main, sizeof bad_main, "%s/bad_main.json", dir);
	static const char* const bodies = "\"bodies\": [{\"name\": \"bob\", \"type\": \"dynamic\", \"position\": [0, 1, "
	                                  "0], \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.05}]}]";
	FILE* fp = fopen(lib, "w");
	assert_non_null(fp);
	fprintf(fp, "{%s}", bodies);
	assert_int_equal(fclose(fp), 0);
	fp = fopen(bad, "w");
	assert_non_null(fp);
	fprintf(fp, "{%s, \"joints\": [{\"type\": \"ball\", \"b\": \"bob\", \"anchor\": [0, 2, 0]}]}", bodies);
	assert_int_equal(fclose(fp), 0);
	fp = fopen(main_path, "w");
	assert_non_null(fp);
	fputs("{\"include\": [\"lib.json\"], \"joints\": [{\"type\": \"distance\", \"b\": \"bob\", \"anchor_a\": [0, 2, "
	      "0], \"anchor_b\": [0, 1, 0]}]}",
	      fp);
	assert_int_equal(fclose(fp), 0);
	fp = fopen(bad_main, "w");
	assert_non_null(fp);
	fputs("{\"include\": [\"bad.json\"]}", fp);
	assert_int_equal(fclose(fp), 0);

	pbd_scene s;
	pbd_scene_error err;
	if (!pbd_scene_load_file(main_path, NULL, &s, &err)) fail_msg("%s", err.message);
	assert_int_equal(s.joint_count, 1);
	assert_true(same_id(joint_def(&s, 0).body_b, s.bodies[0].id));
	assert_near(joint_def(&s, 0).upper, 1, 1e-6);
	pbd_scene_free(&s);
	assert_false(pbd_scene_load_file(bad_main, NULL, &s, &err));
	char want[128];
	snprintf(want, sizeof want, "%s: joints: unknown key", bad);
	if (!strstr(err.message, want)) fail_msg("got \"%s\", expected \"%s\"", err.message, want);
	assert_int_equal(remove(lib), 0);
	assert_int_equal(remove(bad), 0);
	assert_int_equal(remove(main_path), 0);
	assert_int_equal(remove(bad_main), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* ---- the built-in scenes with joints ----------------------------------------------------- */

/* The chains' links stay joined: 20 links of 10 cm whipping down from level on ball joints and on
 * hinges, 20 substeps of one iteration, for 3 s; the hinges also keep their axes. */
static void test_chains(void** state) {
	(void)state;
	static const char* const names[2] = {"chain_links", "hinge_chain"};
	for (int c = 0; c < 2; ++c) {
		pbd_scene s = load_builtin_ok(names[c]);
		assert_int_equal(s.body_count, 20);
		assert_int_equal(s.joint_count, 20);
		double worst = 0, worst_angle = 0, lowest = 2;
		for (int f = 0; f < 180; ++f) {
			assert_int_equal(pbd_scene_step(&s), PBD_OK);
			for (uint32_t j = 0; j < s.joint_count; ++j) {
				const pbd_joint_state js = joint_state(&s, j);
				worst = fmax(worst, (double)js.error_distance);
				worst_angle = fmax(worst_angle, (double)js.error_angle);
			}
			lowest = fmin(lowest, (double)body_state(&s, 19).center.y);
		}
		printf("%s: 20 links over 3 s, joint error up to %.3g m and %.3g rad; the last link fell to %.3f m\n", names[c],
		       worst, worst_angle, lowest);
		assert_true(worst < 5e-3);
		if (c == 1) assert_true(worst_angle < 1e-3);
		/* it did swing down: the last link below the pivot by most of the chain's 2 m */
		assert_true(lowest < 0.5);
		pbd_scene_free(&s);
	}
}

/* The motor swings the door open until the hinge's limit stops it at 1.6 rad, where it stays
 * pushed against the limit: the motor turns it on a little each step, and the limit takes that
 * back. */
static void test_door_motor(void** state) {
	(void)state;
	pbd_scene s = load_builtin_ok("door_motor");
	assert_int_equal(s.joint_count, 1);
	assert_string_equal(s.joints[0].name, "hinge");
	double prev = 0, fastest = 0, highest = 0, last_low = 2;
	bool opening = true;
	for (int f = 0; f < 180; ++f) {
		assert_int_equal(pbd_scene_step(&s), PBD_OK);
		const double a = (double)joint_state(&s, 0).position;
		if (a < 1.5 && a < prev - 1e-6) opening = false;
		fastest = fmax(fastest, (double)pbd_v3_length(body_state(&s, 1).angular_velocity));
		highest = fmax(highest, a);
		if (f >= 150) last_low = fmin(last_low, a);
		prev = a;
	}
	const pbd_joint_state js = joint_state(&s, 0);
	const pbd_vec3 w = body_state(&s, 1).angular_velocity;
	printf(
	    "door_motor: after 3 s at %.5f rad (limit 1.6), at most %.5f, at least %.5f in the last half second; spun at "
	    "most %.3f rad/s (motor 1 rad/s), (%.2g, %.2g, %.2g) rad/s at the end; hinge error %.2g m, %.2g rad\n",
	    (double)js.position, highest, last_low, fastest, (double)w.x, (double)w.y, (double)w.z,
	    (double)js.error_distance, (double)js.error_angle);
	assert_true(opening);
	assert_true(fabs((double)js.position - 1.6) < 0.02);
	assert_true(highest < 1.6 + 0.02 && last_low > 1.6 - 0.02);
	assert_true(fastest < 1.05);
	/* turned about the vertical only */
	assert_true((double)js.error_angle < 1e-3 && fabs((double)w.x) + fabs((double)w.z) < 1e-3);
	pbd_scene_free(&s);
}

/* The first ball swings in and stops; the last swings out with nearly all its speed, and the
 * three between barely move. */
static void test_newtons_cradle(void** state) {
	(void)state;
	pbd_scene s = load_builtin_ok("newtons_cradle");
	assert_int_equal(s.body_count, 5);
	double before = 0;
	int hit = -1;
	for (int f = 0; f < 60 && hit < 0; ++f) {
		const double v0 = (double)body_state(&s, 0).velocity.x;
		assert_int_equal(pbd_scene_step(&s), PBD_OK);
		if ((double)body_state(&s, 4).velocity.x > 0.1) {
			hit = f;
			before = v0;
		}
	}
	assert_true(hit > 0);
	double v[5];
	for (uint32_t b = 0; b < 5; ++b) v[b] = (double)body_state(&s, b).velocity.x;
	printf("newtons_cradle: the first ball hits at %.3f m/s in frame %d; then %.3f %.3f %.3f %.3f %.3f m/s\n", before,
	       hit + 1, v[0], v[1], v[2], v[3], v[4]);
	assert_true(before > 1);
	assert_true(fabs(v[0]) < 0.05 * before);
	for (int b = 1; b < 4; ++b) assert_true(fabs(v[b]) < 0.05 * before);
	assert_true(v[4] > 0.9 * before);
	pbd_scene_free(&s);
}

/* The ball on its chain smashes through the wall: every crate in its path (the two middle
 * columns) is knocked back further than its own width (0.25 m; the bottom ones, which slide with
 * crates on them, 0.34 m), the chain's last link stays on the ball, and the chain keeps its
 * length. */
static void test_wrecking_ball(void** state) {
	(void)state;
	pbd_scene s = load_builtin_ok("wrecking_ball");
	assert_int_equal(s.body_count, 13);
	assert_int_equal(pbd_world_attachment_count(s.world), 1);
	pbd_attachment_def a;
	assert_int_equal(pbd_world_get_attachment(s.world, 0, &a), PBD_OK);
	pbd_vec3 start[13];
	for (uint32_t b = 0; b < 13; ++b) start[b] = body_state(&s, b).center;
	double strays = 0, strain = 0, fastest = 0;
	for (int f = 0; f < 90; ++f) {
		assert_int_equal(pbd_scene_step(&s), PBD_OK);
		const pbd_body_state ball = body_state(&s, 0);
		const pbd_vec3 x = pbd_world_positions(s.world)[a.particle];
		strays = fmax(strays, dist(x, pbd_pose_apply(ball.pose, a.target)));
		fastest = fmax(fastest, (double)pbd_v3_length(ball.velocity));
		pbd_stats st;
		pbd_world_get_stats(s.world, &st);
		strain = fmax(strain, st.max_strain);
	}
	int in_path = 0, knocked = 0;
	double least = 1e9;
	for (uint32_t b = 1; b < 13; ++b) {
		if (fabs((double)start[b].z) > 0.2) continue;
		const double moved = (double)body_state(&s, b).center.x - (double)start[b].x;
		in_path++;
		knocked += moved > 0.25;
		least = fmin(least, moved);
	}
	printf("wrecking_ball: the ball up to %.3f m/s; after 1.5 s the %d crates in its path all knocked %.3f m back or "
	       "more; the attached link strays up to %.3g m, the chain's strain up to %.3g\n",
	       fastest, in_path, least, strays, strain);
	assert_int_equal(in_path, 6);
	assert_int_equal(knocked, 6);
	assert_true(strays < 0.01);
	assert_true(strain < 0.05);
	pbd_scene_free(&s);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_each_type),       cmocka_unit_test(test_break_force),   cmocka_unit_test(test_bad_joints),
	    cmocka_unit_test(test_included_bodies), cmocka_unit_test(test_chains),        cmocka_unit_test(test_door_motor),
	    cmocka_unit_test(test_newtons_cradle),  cmocka_unit_test(test_wrecking_ball),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
