/* Rigid bodies in scene files: static, kinematic and dynamic bodies load with their shapes (posed
 * in the body's frame) after the file's colliders; a dynamic body's matter is its shapes' at a
 * density (mass and inertia of a box) or given; the world names the solver of their contacts; a
 * dynamic body falls as the discrete free fall of its centre; a kinematic body follows its
 * keyframes and reaches each key; an attachment to a body holds its point in the body's frame;
 * bodies come from included files too; bad input is refused in one line that names the field; the
 * four built-in scenes with bodies do what their descriptions say. */
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
	if (!pbd_scene_load_string(json, strlen(json), "t.json", NULL, NULL, &s, &err)) fail_msg("%s", err.message);
	return s;
}

static pbd_body_state state_of(const pbd_scene* s, uint32_t body) {
	pbd_body_state st;
	assert_int_equal(pbd_body_get_state(s->world, s->bodies[body].id, &st), PBD_OK);
	return st;
}

static bool same_id(pbd_body_id a, pbd_body_id b) { return a.index1 == b.index1 && a.generation == b.generation; }

/* |q . r| = 1: the same rotation (q and -q are one). */
static void assert_same_rotation(pbd_quat q, pbd_quat r, double tol) {
	const double d =
	    (double)q.x * (double)r.x + (double)q.y * (double)r.y + (double)q.z * (double)r.z + (double)q.w * (double)r.w;
	if (fabs(fabs(d) - 1) > tol) fail_msg("rotations differ: |q . r| = %.9g", fabs(d));
}

static void test_each_type(void** state) {
	(void)state;
	pbd_scene s = load_ok(
	    "{\"world\": {\"gravity\": [0, -9.81, 0]},"
	    " \"objects\": [{\"type\": \"grid_cloth\", \"nx\": 4, \"ny\": 4, \"size\": [1, 1], \"origin\": [-0.5, 2, "
	    "-0.5], \"axis_u\": [1, 0, 0], \"axis_v\": [0, 0, 1]}],"
	    " \"colliders\": [{\"type\": \"plane\"}],"
	    " \"bodies\": ["
	    "  {\"name\": \"table\", \"type\": \"static\", \"position\": [0, 0.5, 0],"
	    "   \"shapes\": [{\"type\": \"box\", \"half_extents\": [1, 0.05, 1], \"static_friction\": 0.4},"
	    "              {\"type\": \"plane\", \"offset\": -0.5}]},"
	    "  {\"name\": \"paddle\", \"type\": \"kinematic\", \"position\": [2, 1, 0], \"velocity\": [0, 0, 1],"
	    "   \"angular_velocity\": [0, 1, 0],"
	    "   \"shapes\": [{\"type\": \"capsule\", \"half_height\": 0.5, \"radius\": 0.05,"
	    "                \"rotation\": {\"axis\": [0, 0, 1], \"angle_deg\": 90}}]},"
	    "  {\"name\": \"dumbbell\", \"type\": \"dynamic\", \"position\": [0, 3, 0],"
	    "   \"rotation\": {\"axis\": [0, 1, 0], \"angle_deg\": 30}, \"gravity_scale\": 0.5,"
	    "   \"linear_damping\": 0.1, \"angular_damping\": 0.2,"
	    "   \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.1, \"center\": [-0.3, 0, 0]},"
	    "              {\"type\": \"sphere\", \"radius\": 0.1, \"position\": [0.3, 0, 0], \"margin\": 0.01},"
	    "              {\"type\": \"capsule\", \"half_height\": 0.3, \"radius\": 0.02,"
	    "               \"rotation\": {\"axis\": [0, 0, 1], \"angle_deg\": 90}}]}]}");
	assert_int_equal(s.body_count, 3);
	assert_int_equal(pbd_world_body_count(s.world), 3);
	static const char* const names[3] = {"table", "paddle", "dumbbell"};
	static const pbd_body_type types[3] = {PBD_BODY_STATIC, PBD_BODY_KINEMATIC, PBD_BODY_DYNAMIC};
	static const uint32_t shapes[3] = {2, 1, 3};
	/* The file's one collider first, then each body's shapes in order. */
	assert_int_equal(s.collider_count, 1 + 2 + 1 + 3);
	assert_int_equal(s.track_count, 0);
	uint32_t first = 1;
	for (uint32_t b = 0; b < 3; ++b) {
		assert_string_equal(s.bodies[b].name, names[b]);
		assert_int_equal(s.bodies[b].type, types[b]);
		assert_true(pbd_body_is_valid(s.world, s.bodies[b].id));
		assert_int_equal(s.bodies[b].first_collider, first);
		assert_int_equal(s.bodies[b].shape_count, shapes[b]);
		assert_int_equal(s.bodies[b].track.key_count, 0);
		for (uint32_t k = 0; k < shapes[b]; ++k) {
			pbd_collider_def d;
			assert_int_equal(pbd_collider_get_def(s.world, s.colliders[first + k], &d), PBD_OK);
			assert_true(same_id(d.body, s.bodies[b].id));
		}
		first += shapes[b];
	}
	pbd_collider_def d;
	assert_int_equal(pbd_collider_get_def(s.world, s.colliders[0], &d), PBD_OK);
	assert_int_equal(d.body.index1, 0);
	/* A shape's pose is in its body's frame: read back as given, and in the world where the
	 * body's frame puts it. */
	assert_int_equal(pbd_collider_get_def(s.world, s.colliders[s.bodies[2].first_collider + 1], &d), PBD_OK);
	assert_near(d.pose.position.x, 0.3, 1e-6);
	assert_near(d.margin, 0.01, 1e-7);
	pbd_pose at;
	assert_int_equal(pbd_collider_get_pose(s.world, s.colliders[s.bodies[2].first_collider + 1], &at), PBD_OK);
	const double c30 = cos(3.14159265358979 / 6), s30 = sin(3.14159265358979 / 6);
	assert_near(at.position.x, 0.3 * c30, 1e-5);
	assert_near(at.position.y, 3, 1e-5);
	assert_near(at.position.z, -0.3 * s30, 1e-5);
	assert_int_equal(pbd_collider_get_def(s.world, s.colliders[s.bodies[0].first_collider], &d), PBD_OK);
	assert_int_equal(d.type, PBD_SHAPE_BOX);
	assert_near(d.static_friction, 0.4, 1e-6);

	const pbd_body_state paddle = state_of(&s, 1);
	assert_near(paddle.pose.position.x, 2, 1e-6);
	assert_near(paddle.velocity.z, 1, 1e-6);
	assert_near(paddle.angular_velocity.y, 1, 1e-6);
	/* The dumbbell is symmetric about its origin: its centre of mass is there. */
	const pbd_body_state bell = state_of(&s, 2);
	assert_near(bell.center.x, 0, 1e-6);
	assert_near(bell.center.y, 3, 1e-6);
	for (int f = 0; f < 30; ++f) assert_int_equal(pbd_scene_step(&s), PBD_OK);
	assert_near(state_of(&s, 0).pose.position.y, 0.5, 0); /* static */
	assert_near(state_of(&s, 1).pose.position.z, 0.5, 1e-4);
	assert_true((double)state_of(&s, 2).center.y < 3);
	pbd_scene_free(&s);
	assert_null(s.bodies);
	assert_int_equal(s.body_count, 0);
}

/* A solid box of half extents (a, b, c) at density 500: m = 500 * 8abc and the inertia of a box,
 * m (b^2 + c^2) / 3 ... Read back through the momenta: p = m v and L = I w. */
static void test_density_box(void** state) {
	(void)state;
	const double a = 0.3, b = 0.2, c = 0.1, m = 500 * 8 * a * b * c;
	const double I[3] = {m * (b * b + c * c) / 3, m * (a * a + c * c) / 3, m * (a * a + b * b) / 3};
	const double v = 2, w[3] = {0.5, -0.7, 0.9};
	/* The same box by density, by mass alone (inertia scaled from the shape), and by mass and
	 * inertia; then a box whose shape sits off the body's origin, centred there by "center". */
	static const char* const matter[] = {"\"density\": 500", "\"mass\": 120",
	                                     "\"mass\": 120, \"inertia\": [5.0, 5.2, 6.5, 0, 0, 0]",
	                                     "\"mass\": 120, \"center\": [0.1, 0, 0]"};
	for (int k = 0; k < 4; ++k) {
		char json[1024];
		snprintf(json, sizeof json,
		         "{\"world\": {\"gravity\": [0, 0, 0]}, \"bodies\": [{\"type\": \"dynamic\", \"position\": [1, 2, 3],"
		         " \"velocity\": [%g, 0, 0], \"angular_velocity\": [%g, %g, %g], %s,"
		         " \"shapes\": [{\"type\": \"box\", \"half_extents\": [%g, %g, %g]}]}]}",
		         v, w[0], w[1], w[2], matter[k], a, b, c);
		pbd_scene s = load_ok(json);
		const pbd_body_state st = state_of(&s, 0);
		const double mass = k == 0 ? m : 120;
		double want[3];
		for (int j = 0; j < 3; ++j) want[j] = I[j] * mass / m;
		if (k == 2) {
			want[0] = 5.0;
			want[1] = 5.2;
			want[2] = 6.5;
		} else if (k == 3) {
			/* Moved 0.1 m along x by the parallel-axis theorem: y and z gain m d^2. */
			want[1] += mass * 0.01;
			want[2] += mass * 0.01;
		}
		printf("matter {%s}: m %.6g kg (want %.6g), L (%.6g, %.6g, %.6g), want (%.6g, %.6g, %.6g)\n", matter[k],
		       st.momentum[0] / v, mass, st.angular_momentum[0], st.angular_momentum[1], st.angular_momentum[2],
		       want[0] * w[0], want[1] * w[1], want[2] * w[2]);
		assert_near(st.momentum[0] / v, mass, 1e-5 * mass);
		for (int j = 0; j < 3; ++j) assert_near(st.angular_momentum[j], want[j] * w[j], 1e-5 * mass);
		assert_near(st.center.x, k == 3 ? 1.1 : 1, 1e-6);
		assert_near(st.center.y, 2, 1e-6);
		pbd_scene_free(&s);
	}
	/* A T of two boxes: the combined mass, and the centre of mass between the two. */
	pbd_scene s =
	    load_ok("{\"bodies\": [{\"type\": \"dynamic\", \"density\": 500, \"velocity\": [1, 0, 0],"
	            " \"shapes\": [{\"type\": \"box\", \"half_extents\": [0.2, 0.03, 0.03], \"position\": [0, 0.18, 0]},"
	            "              {\"type\": \"box\", \"half_extents\": [0.03, 0.15, 0.03]}]}]}");
	const double m1 = 500 * 8 * 0.2 * 0.03 * 0.03, m2 = 500 * 8 * 0.03 * 0.15 * 0.03;
	const pbd_body_state st = state_of(&s, 0);
	assert_near(st.momentum[0], m1 + m2, 1e-5);
	assert_near(st.center.y, 0.18 * m1 / (m1 + m2), 1e-6);
	pbd_scene_free(&s);
}

/* v += g h, x += v h each substep: after n substeps x = x0 + v0 t + s g h^2 n (n + 1) / 2, s the
 * gravity scale; the world's damping (1, none) leaves it so. */
static void test_free_fall(void** state) {
	(void)state;
	pbd_scene s =
	    load_ok("{\"world\": {\"gravity\": [0, -9.81, 0], \"dt\": 0.016666667, \"substeps\": 4},"
	            " \"bodies\": ["
	            "  {\"name\": \"a\", \"type\": \"dynamic\", \"position\": [1, 20, -3], \"velocity\": [2, 5, 0],"
	            "   \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.1}]},"
	            "  {\"name\": \"b\", \"type\": \"dynamic\", \"position\": [0, 20, 0], \"gravity_scale\": 0.5,"
	            "   \"mass\": 2, \"inertia\": [0.1, 0.1, 0.1, 0, 0, 0]}]}");
	const int steps = 60;
	for (int f = 0; f < steps; ++f) assert_int_equal(pbd_scene_step(&s), PBD_OK);
	const double h = (double)pbd_world_get_def(s.world).dt / 4, n = 4.0 * steps, t = h * n;
	const double g = (double)(pbd_real)-9.81, drop = g * h * h * n * (n + 1) / 2;
	const pbd_body_state a = state_of(&s, 0), b = state_of(&s, 1);
	printf("free fall: y %.9g, expected %.9g; half gravity: y %.9g, expected %.9g\n", (double)a.center.y,
	       20 + 5 * t + drop, (double)b.center.y, 20 + drop / 2);
	assert_near(a.center.y, 20 + 5 * t + drop, TEST_TOL(1e-9, 2e-5));
	assert_near(a.center.x, 1 + 2 * t, TEST_TOL(1e-9, 2e-5));
	assert_near(a.center.z, -3, TEST_TOL(1e-9, 2e-5));
	assert_near(b.center.y, 20 + drop / 2, TEST_TOL(1e-9, 2e-5));
	pbd_scene_free(&s);
}

/* The world's body solver and its contact stiffness as the file names them. */
static void test_body_solver(void** state) {
	(void)state;
	pbd_scene s = load_ok("{\"world\": {\"body_solver\": \"soft_step\", \"contact_hertz\": 45}}");
	const pbd_world_def d = pbd_world_get_def(s.world);
	assert_int_equal(d.body_solver, PBD_BODY_SOLVER_SOFT_STEP);
	assert_true(d.contact_hertz == (pbd_real)45);
	pbd_scene_free(&s);
	s = load_ok("{\"world\": {\"body_solver\": \"avbd\"}}");
	assert_int_equal(pbd_world_get_def(s.world).body_solver, PBD_BODY_SOLVER_AVBD);
	pbd_scene_free(&s);
	s = load_ok("{\"world\": {}}");
	assert_int_equal(pbd_world_get_def(s.world).body_solver, PBD_BODY_SOLVER_POSITION);
	pbd_scene_free(&s);
}

/* A kinematic body on keyframes is where its track says after every step, and at each key's
 * pose at that key's time; the shape it carries goes with it. */
static void test_kinematic_keyframes(void** state) {
	(void)state;
	pbd_scene s = load_ok(
	    "{\"world\": {\"dt\": 0.02, \"substeps\": 4},"
	    " \"objects\": [{\"type\": \"grid_cloth\", \"nx\": 6, \"ny\": 6, \"size\": [1, 1], \"origin\": [-0.5, 0.3, "
	    "-0.5], \"axis_u\": [1, 0, 0], \"axis_v\": [0, 0, 1]}],"
	    " \"bodies\": [{\"name\": \"arm\", \"type\": \"kinematic\", \"keyframes\": ["
	    "   {\"time\": 0, \"position\": [0, 0, 0]},"
	    "   {\"time\": 0.5, \"position\": [0.4, 0.2, 0], \"rotation\": {\"axis\": [0, 1, 0], \"angle_deg\": 90}},"
	    "   {\"time\": 1, \"position\": [0.4, 0.5, -0.3], \"rotation\": {\"axis\": [1, 0, 0], \"angle_deg\": 45}}],"
	    "  \"shapes\": [{\"type\": \"box\", \"half_extents\": [0.2, 0.05, 0.1], \"position\": [0.1, 0, 0],"
	    "               \"static_friction\": 0.5}]}]}");
	const pbd_scene_body* b = &s.bodies[0];
	assert_int_equal(b->track.key_count, 3);
	assert_int_equal(b->track.collider, UINT32_MAX);
	assert_int_equal(s.track_count, 0);
	for (int f = 1; f <= 60; ++f) {
		assert_int_equal(pbd_scene_step(&s), PBD_OK);
		const pbd_body_state st = state_of(&s, 0);
		const pbd_pose want = pbd_scene_track_pose(&b->track, pbd_world_time(s.world));
		if (fabs((double)st.pose.position.x - (double)want.position.x) > 1e-5 ||
		    fabs((double)st.pose.position.y - (double)want.position.y) > 1e-5 ||
		    fabs((double)st.pose.position.z - (double)want.position.z) > 1e-5)
			fail_msg("frame %d: the body is at (%g, %g, %g), its track at (%g, %g, %g)", f, (double)st.pose.position.x,
			         (double)st.pose.position.y, (double)st.pose.position.z, (double)want.position.x,
			         (double)want.position.y, (double)want.position.z);
		assert_same_rotation(st.pose.rotation, want.rotation, 1e-6);
		if (f == 25 || f == 50) {
			const pbd_pose key = b->track.keys[f / 25].pose;
			assert_near(st.pose.position.x, key.position.x, 1e-5);
			assert_near(st.pose.position.y, key.position.y, 1e-5);
			assert_near(st.pose.position.z, key.position.z, 1e-5);
			assert_same_rotation(st.pose.rotation, key.rotation, 1e-6);
			/* The shape at the body's frame composed with its own pose. */
			pbd_pose at;
			assert_int_equal(pbd_collider_get_pose(s.world, s.colliders[b->first_collider], &at), PBD_OK);
			const pbd_vec3 x = pbd_pose_apply(key, pbd_v3((pbd_real)0.1, 0, 0));
			assert_near(at.position.x, x.x, 1e-5);
			assert_near(at.position.y, x.y, 1e-5);
			assert_near(at.position.z, x.z, 1e-5);
		}
	}
	/* After the last key it stays there. */
	for (int f = 0; f < 10; ++f) assert_int_equal(pbd_scene_step(&s), PBD_OK);
	const pbd_body_state st = state_of(&s, 0);
	assert_near(st.pose.position.z, -0.3, 1e-5);
	assert_near(st.velocity.z, 0, 1e-4);
	pbd_scene_free(&s);
}

/* "attached" with "body": each attachment names the body and holds the vertex's starting point
 * in the body's frame; the vertices go where the body takes them. */
static void test_attached_to_body(void** state) {
	(void)state;
	pbd_scene s = load_ok(
	    "{\"world\": {\"gravity\": [0, -9.81, 0], \"substeps\": 8},"
	    " \"bodies\": [{\"name\": \"bar\", \"type\": \"kinematic\", \"position\": [1, 2, 3],"
	    "   \"rotation\": {\"axis\": [0, 0, 1], \"angle_deg\": 90}, \"velocity\": [0.5, 0, 0],"
	    /* The top edge lies on the bar's axis: the bar, of a category the cloth's mask leaves out,
	     * does not push it off. */
	    "   \"shapes\": [{\"type\": \"capsule\", \"half_height\": 0.6, \"radius\": 0.02, \"category\": 2}]}],"
	    " \"objects\": [{\"type\": \"grid_cloth\", \"nx\": 5, \"ny\": 5, \"size\": [1, 1], \"origin\": [0.5, 2, 3],"
	    "   \"axis_u\": [1, 0, 0], \"axis_v\": [0, -1, 0], \"collision_mask\": 1,"
	    "   \"attached\": {\"vertices\": {\"grid_edge\": \"top\"}, \"body\": \"bar\"}}]}");
	assert_int_equal(pbd_world_attachment_count(s.world), 5);
	const pbd_body_state body = state_of(&s, 0);
	const pbd_vec3* x = pbd_world_positions(s.world);
	pbd_vec3 local[5];
	for (uint32_t k = 0; k < 5; ++k) {
		pbd_attachment_def a;
		assert_int_equal(pbd_world_get_attachment(s.world, k, &a), PBD_OK);
		assert_true(same_id(a.body, s.bodies[0].id));
		assert_int_equal(a.particle, k);
		/* The top edge runs along the world's x, which the body's frame turned 90 degrees about z
		 * holds along its -y: vertex k is at (0, 0.5 - 0.25 k, 0) in the body's frame. */
		local[k] = pbd_pose_apply_inverse(body.pose, x[k]);
		assert_near(a.target.x, local[k].x, 1e-6);
		assert_near(a.target.y, local[k].y, 1e-6);
		assert_near(a.target.z, local[k].z, 1e-6);
		assert_near(a.target.x, 0, 1e-6);
		assert_near(a.target.y, 0.5 - 0.25 * k, 1e-6);
	}
	for (int f = 0; f < 30; ++f) assert_int_equal(pbd_scene_step(&s), PBD_OK);
	const pbd_body_state moved = state_of(&s, 0);
	assert_near(moved.pose.position.x, 1.25, 1e-4);
	x = pbd_world_positions(s.world);
	double worst = 0;
	for (uint32_t k = 0; k < 5; ++k) {
		const pbd_vec3 want = pbd_pose_apply(moved.pose, local[k]);
		worst = fmax(worst, (double)pbd_v3_length(pbd_v3_sub(x[k], want)));
	}
	printf("attached edge: worst distance from its points on the moving body %.3g m\n", worst);
	assert_true(worst < 1e-3);
	pbd_scene_free(&s);
}

/* Bodies in an included file come before the including file's own, and an attachment in the
 * including file names one; a mistake in an included body names that file. */
static void test_included_bodies(void** state) {
	(void)state;
	char dir[] = "/tmp/pbd_scene_bodies_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char lib[64], bad[64], main_path[64], bad_main[64];
	snprintf(lib, sizeof lib, "%s/lib.json", dir);
	snprintf(bad, sizeof bad, "%s/bad.json", dir);
	snprintf(main_path, sizeof main_path, "%s/main.json", dir);
	snprintf(bad_main, sizeof bad_main, "%s/bad_main.json", dir);
	FILE* fp = fopen(lib, "w");
	assert_non_null(fp);
	fputs("{\"bodies\": [{\"name\": \"hook\", \"type\": \"static\", \"position\": [0, 1, 0],"
	      " \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.05}]}]}",
	      fp);
	assert_int_equal(fclose(fp), 0);
	fp = fopen(bad, "w");
	assert_non_null(fp);
	fputs("{\"bodies\": [{\"name\": \"hook\", \"type\": \"dynamic\", \"shapes\": [{\"type\": \"plane\"}]}]}", fp);
	assert_int_equal(fclose(fp), 0);
	fp = fopen(main_path, "w");
	assert_non_null(fp);
	fputs("{\"include\": [\"lib.json\"],"
	      " \"bodies\": [{\"name\": \"ball\", \"type\": \"dynamic\", \"position\": [0, 3, 0],"
	      "  \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.1}]}],"
	      " \"objects\": [{\"type\": \"rope\", \"start\": [0, 1, 0], \"end\": [1, 1, 0], \"segments\": 4,"
	      "  \"attached\": {\"vertices\": [0], \"body\": \"hook\"}}]}",
	      fp);
	assert_int_equal(fclose(fp), 0);
	fp = fopen(bad_main, "w");
	assert_non_null(fp);
	fputs("{\"include\": [\"bad.json\"]}", fp);
	assert_int_equal(fclose(fp), 0);

	pbd_scene s;
	pbd_scene_error err;
	if (!pbd_scene_load_file(main_path, NULL, &s, &err)) fail_msg("%s", err.message);
	assert_int_equal(s.body_count, 2);
	assert_string_equal(s.bodies[0].name, "hook");
	assert_string_equal(s.bodies[1].name, "ball");
	pbd_attachment_def a;
	assert_int_equal(pbd_world_get_attachment(s.world, 0, &a), PBD_OK);
	assert_true(same_id(a.body, s.bodies[0].id));
	assert_near(a.target.y, 0, 1e-6);
	pbd_scene_free(&s);

	assert_false(pbd_scene_load_file(bad_main, NULL, &s, &err));
	char want[128];
	snprintf(want, sizeof want, "%s: bodies[0].shapes[0]: a plane bounds no volume", bad);
	if (strncmp(err.message, want, strlen(want)) != 0) fail_msg("got \"%s\", expected \"%s...\"", err.message, want);
	unlink(lib);
	unlink(bad);
	unlink(main_path);
	unlink(bad_main);
	rmdir(dir);
}

static const struct {
	const char* json;
	const char* expect;
} bad_cases[] = {
    {"{\"world\": {\"body_solver\": \"impulse\"}}", "t.json: world.body_solver: unknown value \"impulse\""},
    {"{\"world\": {\"contact_hertz\": -1}}", "t.json: world.contact_hertz:"},
    {"{\"bodies\": {\"type\": \"static\"}}", "t.json: bodies: expected an array"},
    {"{\"bodies\": [{\"name\": \"a\"}]}", "t.json: bodies[0]: missing \"type\" (\"static\", \"kinematic\" or"},
    {"{\"bodies\": [{\"type\": \"rigid\"}]}", "t.json: bodies[0].type: unknown value \"rigid\""},
    {"{\"bodies\": [{\"type\": \"static\", \"desnity\": 3}]}",
     "t.json: bodies[0].desnity: unknown key (did you mean \"density\"?)"},
    {"{\"bodies\": [{\"name\": \"a\", \"type\": \"static\"}, {\"name\": \"a\", \"type\": \"static\"}]}",
     "t.json: bodies[1].name: \"a\" is already the name of bodies[0]"},
    {"{\"bodies\": [{\"type\": \"static\"}, {\"type\": \"dynamic\", \"shapes\": [{\"type\": \"sphere\", \"radius\": "
     "1}, {\"type\": \"cube\"}]}]}",
     "t.json: bodies[1].shapes[1].type: unknown value \"cube\""},
    {"{\"bodies\": [{\"type\": \"dynamic\", \"shapes\": [{\"type\": \"sphere\"}]}]}",
     "t.json: bodies[0].shapes[0]: missing \"radius\""},
    {"{\"bodies\": [{\"type\": \"dynamic\", \"shapes\": [{\"type\": \"plane\"}]}]}",
     "t.json: bodies[0].shapes[0]: a plane bounds no volume, so \"density\" cannot give the body its matter"},
    {"{\"bodies\": [{\"type\": \"dynamic\", \"shapes\": [{\"type\": \"sphere\", \"radius\": 1}, {\"type\": "
     "\"heightfield\", \"heights\": [[0, 0], [0, 0]]}]}]}",
     "t.json: bodies[0].shapes[1]: a heightfield bounds no volume"},
    {"{\"bodies\": [{\"type\": \"dynamic\", \"shapes\": [{\"type\": \"mesh\", \"vertices\": [[0, 0, 0], [1, 0, 0], "
     "[0, 0, 1]], \"triangles\": [[0, 2, 1]]}]}]}",
     "t.json: bodies[0].shapes[0]: an open mesh (\"closed\" is false) bounds no volume"},
    {"{\"bodies\": [{\"type\": \"dynamic\", \"mass\": 2, \"shapes\": [{\"type\": \"plane\"}]}]}",
     "t.json: bodies[0].mass: needs \"inertia\" too: shapes[0] is a plane, which bounds no volume"},
    {"{\"bodies\": [{\"type\": \"dynamic\", \"mass\": 2}]}",
     "t.json: bodies[0].mass: needs \"inertia\" too: the body has no shapes to take it from"},
    {"{\"bodies\": [{\"type\": \"dynamic\"}]}",
     "t.json: bodies[0]: a dynamic body needs \"shapes\" (its matter at \"density\") or \"mass\" and \"inertia\""},
    {"{\"bodies\": [{\"type\": \"dynamic\", \"mass\": 2, \"inertia\": [1, 1, 1, 0, 0]}]}",
     "t.json: bodies[0].inertia: expected an array of 6 numbers"},
    {"{\"bodies\": [{\"type\": \"dynamic\", \"mass\": 2, \"inertia\": [1, 1, 5, 0, 0, 0]}]}",
     "t.json: bodies[0].inertia: pbd_body_set_mass: mass.inertia has principal moments"},
    {"{\"bodies\": [{\"type\": \"dynamic\", \"density\": 10, \"mass\": 2, \"inertia\": [1, 1, 1, 0, 0, 0]}]}",
     "t.json: bodies[0].density: give either density or mass, not both"},
    {"{\"bodies\": [{\"type\": \"dynamic\", \"center\": [0, 1, 0], \"shapes\": [{\"type\": \"sphere\", \"radius\": "
     "1}]}]}",
     "t.json: bodies[0].center: only with \"mass\""},
    {"{\"bodies\": [{\"type\": \"dynamic\", \"density\": 1e9, \"shapes\": [{\"type\": \"sphere\", \"radius\": 10}]}]}",
     "t.json: bodies[0].density: gives the body a mass of"},
    {"{\"bodies\": [{\"type\": \"dynamic\", \"mass\": 0, \"inertia\": [1, 1, 1, 0, 0, 0]}]}",
     "t.json: bodies[0].mass: must be in [1e-09, 1000000000] (got 0)"},
    {"{\"bodies\": [{\"type\": \"static\", \"velocity\": [1, 0, 0]}]}",
     "t.json: bodies[0].velocity: a static body does not move (give \"type\": \"kinematic\")"},
    {"{\"bodies\": [{\"type\": \"dynamic\", \"mass\": 1, \"inertia\": [1, 1, 1, 0, 0, 0], \"keyframes\": [{\"time\": "
     "0}]}]}",
     "t.json: bodies[0].keyframes: only a kinematic body follows keyframes"},
    {"{\"bodies\": [{\"type\": \"kinematic\", \"density\": 10}]}",
     "t.json: bodies[0].density: only a dynamic body has matter"},
    {"{\"bodies\": [{\"type\": \"static\", \"gravity_scale\": 0}]}",
     "t.json: bodies[0].gravity_scale: only a dynamic body feels gravity and damping"},
    {"{\"bodies\": [{\"type\": \"kinematic\", \"position\": [0, 1, 0], \"keyframes\": [{\"time\": 0}]}]}",
     "t.json: bodies[0].position: not with keyframes"},
    {"{\"bodies\": [{\"type\": \"kinematic\", \"keyframes\": [{\"time\": 1}, {\"time\": 0}]}]}",
     "t.json: bodies[0].keyframes[1].time: must be greater than the previous keyframe's 1 (got 0)"},
    {"{\"bodies\": [{\"type\": \"kinematic\", \"shapes\": [{\"type\": \"sphere\", \"radius\": 1, \"kind\": "
     "\"kinematic\"}]}]}",
     "t.json: bodies[0].shapes[0].kind: a shape moves with its body"},
    {"{\"bodies\": [{\"type\": \"static\", \"shapes\": [{\"type\": \"sphere\", \"radius\": 1, \"velocity\": [1, 0, "
     "0]}]}]}",
     "t.json: bodies[0].shapes[0].velocity: a shape moves with its body"},
    {"{\"bodies\": [{\"type\": \"dynamic\", \"gravity_scale\": 2e6, \"mass\": 1, \"inertia\": [1, 1, 1, 0, 0, 0]}]}",
     "t.json: bodies[0].gravity_scale: must be in [-1000000, 1000000] (got 2000000)"},
    {"{\"bodies\": [{\"type\": \"static\", \"shapes\": {\"type\": \"sphere\", \"radius\": 1}}]}",
     "t.json: bodies[0].shapes: expected an array"},
    {"{\"objects\": [{\"type\": \"rope\", \"start\": [0, 0, 0], \"end\": [1, 0, 0], \"segments\": 2, \"attached\": "
     "{\"vertices\": [0], \"body\": \"pole\"}}]}",
     "t.json: objects[0].attached.body: no body named \"pole\": the scene has no \"bodies\""},
    {"{\"bodies\": [{\"name\": \"mast\", \"type\": \"static\"}, {\"name\": \"boom\", \"type\": \"static\"}],"
     " \"objects\": [{\"type\": \"rope\", \"start\": [0, 0, 0], \"end\": [1, 0, 0], \"segments\": 2, \"attached\": "
     "{\"vertices\": [0], \"body\": \"pole\"}}]}",
     "t.json: objects[0].attached.body: no body named \"pole\" (the bodies are \"mast\", \"boom\")"},
    {"{\"bodies\": [{\"name\": \"pole\", \"type\": \"static\"}], \"objects\": [{\"type\": \"rope\", \"start\": [0, 0, "
     "0], \"end\": [1, 0, 0], \"segments\": 2, \"attached\": {\"vertices\": [0], \"body\": 3}}]}",
     "t.json: objects[0].attached.body: expected a string"},
};

static void test_bad_input(void** state) {
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
		assert_int_equal(s.body_count, 0);
		assert_null(s.bodies);
	}
}

/* ---- the built-in scenes with bodies ---------------------------------------------------- */

static pbd_scene load_builtin_ok(const char* name) {
	pbd_scene s;
	pbd_scene_error err;
	const pbd_scene_options opt = {false, test_log_fail, NULL, 0};
	if (!pbd_scene_load_builtin(name, &opt, &s, &err)) fail_msg("%s: %s", name, err.message);
	return s;
}

static double speed(pbd_vec3 v) { return (double)pbd_v3_length(v); }

/* The ball, about four times the cloth's mass, is slowed to a fraction of its speed toward the
 * cloth and pushes the cloth back, which swings. */
static void test_ball_into_cloth(void** state) {
	(void)state;
	pbd_scene s = load_builtin_ok("ball_into_cloth");
	assert_int_equal(s.body_count, 1);
	const double vz0 = (double)state_of(&s, 0).velocity.z;
	const uint32_t n = pbd_world_particle_count(s.world);
	double slowest = fabs(vz0), pushed = 0;
	for (int f = 0; f < 45; ++f) {
		assert_int_equal(pbd_scene_step(&s), PBD_OK);
		slowest = fmin(slowest, fabs((double)state_of(&s, 0).velocity.z));
		const pbd_vec3* x = pbd_world_positions(s.world);
		double z = 0;
		for (uint32_t i = 0; i < n; ++i) z += (double)x[i].z;
		pushed = fmin(pushed, z / n);
	}
	printf("ball into cloth: vz %.3f m/s, slowest %.3f m/s; the cloth's mean z reaches %.3f m\n", vz0, slowest, pushed);
	assert_true(slowest < 0.25 * fabs(vz0));
	assert_true(pushed < -0.1);
	pbd_scene_free(&s);
}

/* The box comes to rest on the trampoline, in the dip it makes, with no particle inside it. */
static void test_box_on_trampoline(void** state) {
	(void)state;
	pbd_scene s = load_builtin_ok("box_on_trampoline");
	for (int f = 0; f < s.frames; ++f) assert_int_equal(pbd_scene_step(&s), PBD_OK);
	const pbd_body_state st = state_of(&s, 0);
	printf("box on trampoline after %d frames: centre y %.4f m, speed %.3g m/s, spin %.3g rad/s\n", s.frames,
	       (double)st.center.y, speed(st.velocity), speed(st.angular_velocity));
	assert_true(speed(st.velocity) < 0.05);
	assert_true(speed(st.angular_velocity) < 0.2);
	assert_true((double)st.center.y < 0.1 && (double)st.center.y > -0.3); /* on the cloth, sagging it */
	const pbd_vec3* x = pbd_world_positions(s.world);
	for (uint32_t i = 0, n = pbd_world_particle_count(s.world); i < n; ++i) {
		const pbd_vec3 l = pbd_pose_apply_inverse(st.pose, x[i]);
		assert_false(fabs((double)l.x) < 0.19 && fabs((double)l.y) < 0.09 && fabs((double)l.z) < 0.19);
	}
	pbd_scene_free(&s);
}

/* The crates and balls come to rest on the floor and on each other under the cloth: every body
 * above the floor by its half height, the high crate on the low one, no particle under the
 * floor. */
static void test_crates_under_cloth(void** state) {
	(void)state;
	pbd_scene s = load_builtin_ok("crates_under_cloth");
	for (int f = 0; f < s.frames; ++f) assert_int_equal(pbd_scene_step(&s), PBD_OK);
	/* half heights: the crates' (0.15, 0.12, 0.1) and the balls' radii */
	const double low[5] = {0.15, 0.12, 0.1, 0.1, 0.08};
	double fastest = 0;
	for (uint32_t k = 0; k < 5; ++k) {
		const pbd_body_state st = state_of(&s, k);
		fastest = fmax(fastest, speed(st.velocity));
		assert_true((double)st.center.y > low[k] - 2e-3);
	}
	const pbd_body_state lo = state_of(&s, 0), hi = state_of(&s, 1);
	const pbd_vec3* x = pbd_world_positions(s.world);
	double lowest = 1e9;
	for (uint32_t i = 0, n = pbd_world_particle_count(s.world); i < n; ++i) lowest = fmin(lowest, (double)x[i].y);
	printf("crates under cloth after %d frames: the high crate's centre at %.4f m on the low one's at %.4f m, the "
	       "fastest body %.3g m/s, the lowest particle %.4f m\n",
	       s.frames, (double)hi.center.y, (double)lo.center.y, fastest, lowest);
	assert_true(fabs((double)hi.center.y - (double)lo.center.y - (0.15 + 0.12)) < 2e-3); /* resting on it */
	assert_true(fastest < 0.05);
	assert_true(lowest > -1e-6);
	pbd_scene_free(&s);
}

/* The pole carries the flag's edge: each attached vertex stays at its point of the pole. */
static void test_flag_on_pole(void** state) {
	(void)state;
	pbd_scene s = load_builtin_ok("flag_on_pole");
	assert_int_equal(s.bodies[0].type, PBD_BODY_KINEMATIC);
	assert_true(s.bodies[0].track.loop);
	const uint32_t n = pbd_world_attachment_count(s.world);
	assert_int_equal(n, 17);
	double worst = 0, travel = 0;
	for (int f = 0; f < 90; ++f) {
		assert_int_equal(pbd_scene_step(&s), PBD_OK);
		const pbd_body_state pole = state_of(&s, 0);
		travel = fmax(travel, (double)pole.pose.position.z);
		const pbd_vec3* x = pbd_world_positions(s.world);
		for (uint32_t k = 0; k < n; ++k) {
			pbd_attachment_def a;
			assert_int_equal(pbd_world_get_attachment(s.world, k, &a), PBD_OK);
			worst = fmax(worst, (double)pbd_v3_length(pbd_v3_sub(x[a.particle], pbd_pose_apply(pole.pose, a.target))));
		}
	}
	printf("flag on pole: the pole travels %.3f m; an attached vertex strays at most %.3g m\n", travel, worst);
	assert_true(travel > 0.5);
	assert_true(worst < 0.01);
	pbd_scene_free(&s);
}

/* Spun about its intermediate axis (x), the handle flips: the spin along its body's x reverses
 * and comes back, while the energy stays. */
static void test_t_handle_flips(void** state) {
	(void)state;
	pbd_scene s = load_builtin_ok("t_handle");
	const pbd_body_state s0 = state_of(&s, 0);
	double least = 1e9, last = 0;
	int flips = 0;
	for (int f = 0; f < s.frames; ++f) {
		assert_int_equal(pbd_scene_step(&s), PBD_OK);
		const pbd_body_state st = state_of(&s, 0);
		const double wx = (double)pbd_quat_rotate(pbd_quat_conj(st.pose.rotation), st.angular_velocity).x;
		least = fmin(least, wx);
		if (last != 0 && (wx > 0) != (last > 0)) ++flips;
		last = wx;
		assert_near(st.kinetic_energy, s0.kinetic_energy, 1e-3 * s0.kinetic_energy);
	}
	printf("t_handle: spin along its x from %.3f rad/s down to %.3f rad/s, %d reversals in %d frames\n",
	       (double)s0.angular_velocity.x, least, flips, s.frames);
	assert_true(least < -0.9 * (double)s0.angular_velocity.x);
	assert_true(flips >= 2);
	pbd_scene_free(&s);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_each_type),        cmocka_unit_test(test_density_box),
	    cmocka_unit_test(test_free_fall),        cmocka_unit_test(test_kinematic_keyframes),
	    cmocka_unit_test(test_attached_to_body), cmocka_unit_test(test_included_bodies),
	    cmocka_unit_test(test_body_solver),      cmocka_unit_test(test_bad_input),
	    cmocka_unit_test(test_ball_into_cloth),  cmocka_unit_test(test_box_on_trampoline),
	    cmocka_unit_test(test_flag_on_pole),     cmocka_unit_test(test_crates_under_cloth),
	    cmocka_unit_test(test_t_handle_flips),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
