/* Rigid bodies against colliders and each other (src/collision/rigid_contact.c), against closed
 * forms: a ball dropped on a floor bounces to e² of its height; a box on a slope stays below
 * tan θ = μ and slides with a = g (sin θ − μ cos θ) above it; a box sliding on the floor stops
 * after v² / (2 μ g); a box dropped on a box comes to rest on it and five stacked boxes stand;
 * two balls meeting in free space keep their linear momentum, and their angular momentum in the
 * limit of small substeps; a box, a ball and a capsule rest on a height field, a mesh, a hull and
 * a box; a heap of them finds the same pairs with the sweep as with every pair; bodies crushed
 * into one place keep a bounded number of contacts; balls and cubes fired at 50 m/s stop at a
 * wall or a plate 1 cm thick; a cube whose centre lies past the edge under it tips over that edge
 * as the closed form of a body pivoting on an edge says, and a stack whose upper part's centre
 * lies past the bottom cube's edge falls as that upper part would as one rigid body, while the
 * same stack just inside its tipping point stands; twenty cubes stacked and a pyramid of 210
 * stand. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/world.h"
#include "test_bodies.h"

/* A ball of restitution e dropped from rest with its lowest point h0 above a floor rises after the
 * first bounce to e² h0 (the floor's restitution is 0: a pair bounces with the larger). */
static void test_ball_bounces(void** state) {
	(void)state;
	char msg[256] = "";
	const double r = 0.1, h0 = 1, e = 0.8;
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-9.81, 0), 20, 1);
	double lowest;
	const double apex = ball_apex(w, r, h0, e, &lowest);
	printf("  ball of restitution %.1f dropped from %.2f m: rises to %.4f m (e² h = %.4f), lowest point %.2g m\n", e,
	       h0, apex, e * e * h0, lowest);
	assert_true(fabs(apex - e * e * h0) < 0.02 * e * e * h0);
	assert_true(lowest > -1e-3);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* The cube of slope_speeds at 20 substeps of one iteration. */
static void slope(double theta, double mu, double* v1, double* v2) {
	char msg[256] = "";
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-9.81, 0), 20, 1);
	slope_speeds(w, theta, mu, v1, v2);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

static void test_box_on_slope(void** state) {
	(void)state;
	const double mu = 0.5, g = 9.81;
	double v1 = 0, v2 = 0;
	const double still = 20 * TP_PI / 180;
	slope(still, mu, &v1, &v2);
	printf("  cube on a %.0f° slope, mu %.1f (tan %.3f): speed %.2g m/s at 0.5 s, %.2g m/s at 1.5 s\n",
	       still * 180 / TP_PI, mu, tan(still), v1, v2);
	assert_true(fabs(v2) < 1e-3);
	const double steep = 35 * TP_PI / 180;
	slope(steep, mu, &v1, &v2);
	const double a = (v2 - v1) / 1.0, expect = g * (sin(steep) - mu * cos(steep));
	printf("  cube on a %.0f° slope, mu %.1f: slides at %.4f m/s² (g (sin - mu cos) = %.4f)\n", steep * 180 / TP_PI, mu,
	       a, expect);
	assert_true(fabs(a - expect) < 0.02 * expect);
}

/* A cube sliding at v0 on a floor stops after v0² / (2 mu g). */
static void test_box_slides_to_a_stop(void** state) {
	(void)state;
	char msg[256] = "";
	const double half = 0.1, g = 9.81, mu = 0.4, v0 = 2;
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-g, 0), 20, 1);
	floor_with(w, pbd_v3(0, 1, 0), mu, 0);
	const pbd_body_id b = body_with(w, material(box_shape(half), mu, 0), at(0, half, 0), pbd_v3((pbd_real)v0, 0, 0));
	for (int s = 0; s < 120; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_body_state st = state_of(w, b);
	const double travelled = (double)st.pose.position.x, expect = v0 * v0 / (2 * mu * g);
	printf("  cube sliding at %.1f m/s, mu %.1f: stops after %.4f m (v²/(2 mu g) = %.4f), speed %.2g m/s, "
	       "height %.5f m\n",
	       v0, mu, travelled, expect, (double)pbd_v3_length(st.velocity), (double)st.pose.position.y);
	assert_true(fabs(travelled - expect) < 0.02 * expect);
	assert_true((double)pbd_v3_length(st.velocity) < 1e-3);
	assert_true(fabs((double)st.pose.position.y - half) < 1e-3);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* Two cubes stacked and sliding together at v0 on a floor (mu_s 0.6, mu_k 0.5): the upper one
 * rides on the lower, so both stop after v0² / (2 mu_k g), as one body would. At each setting the
 * floor's friction is that of both cubes' weight and no more: a rule that undid any slip within
 * the cone however often the passes came back to it stopped the pair after 0.21 m of 0.41. */
static void test_stacked_boxes_slide_as_one(void** state) {
	(void)state;
	const double half = 0.25, g = 9.81, mu_s = 0.6, mu_k = 0.5, v0 = 2, expect = v0 * v0 / (2 * mu_k * g);
	const int settings[][2] = {{20, 1}, {4, 2}};
	for (int k = 0; k < 2; ++k) {
		char msg[256] = "";
		pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-g, 0), settings[k][0], settings[k][1]);
		pbd_collider_def fl = material(pbd_collider_def_default(), mu_s, 0), cube = material(box_shape(half), mu_s, 0);
		fl.kinetic_friction = cube.kinetic_friction = (pbd_real)mu_k;
		assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &fl)));
		pbd_body_id b[2];
		for (int i = 0; i < 2; ++i) b[i] = body_with(w, cube, at(0, half * (1 + 2 * i), 0), pbd_v3((pbd_real)v0, 0, 0));
		for (int s = 0; s < 120; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
		for (int i = 0; i < 2; ++i) {
			const pbd_body_state st = state_of(w, b[i]);
			const double travelled = (double)st.pose.position.x;
			printf("  %s of two cubes sliding at %.1f m/s, mu_k %.1f, %d x %d: stops after %.4f m (v²/(2 mu_k g) = "
			       "%.4f), speed %.2g m/s\n",
			       i ? "upper" : "lower", v0, mu_k, settings[k][0], settings[k][1], travelled, expect,
			       (double)pbd_v3_length(st.velocity));
			assert_true(fabs(travelled - expect) < 0.05 * expect);
			assert_true((double)pbd_v3_length(st.velocity) < 1e-3);
		}
		assert_string_equal(msg, "");
		pbd_world_destroy(w);
	}
}

/* Two balls meeting off-centre in free space (restitution 1, friction 0.3), `substeps` per step:
 * the change of the pair's linear momentum, of its angular momentum about the origin, and the
 * size of that angular momentum. */
static void balls_meet(int substeps, double* dp, double* dl, double* l0) {
	char msg[256] = "";
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, 0, 0), substeps, 1);
	const pbd_body_id a = body_with(w, material(ball_shape(0.1), 0.3, 1), at(-0.5, 0, 0), pbd_v3(2, 0, 0));
	const pbd_body_id c = body_with(w, material(ball_shape(0.15), 0.3, 1), at(0.5, 0.08, 0), pbd_v3(-1, 0, 0));
	pbd_stats s0, s1;
	pbd_world_get_stats(w, &s0);
	for (int s = 0; s < 60; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	pbd_world_get_stats(w, &s1);
	*dp = *dl = *l0 = 0;
	for (int k = 0; k < 3; ++k) {
		*dp = fmax(*dp, fabs(s1.body_momentum[k] - s0.body_momentum[k]));
		*dl = fmax(*dl, fabs(s1.body_angular_momentum[k] - s0.body_angular_momentum[k]));
		*l0 = fmax(*l0, fabs(s0.body_angular_momentum[k]));
	}
	const pbd_body_state sa = state_of(w, a), sc = state_of(w, c);
	assert_true((double)sa.velocity.x < 2); /* they met */
	assert_true(
	    (double)pbd_v3_dot(pbd_v3_sub(sc.pose.position, sa.pose.position), pbd_v3_sub(sc.velocity, sa.velocity)) > 0);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* Every impulse is equal and opposite at one point, so linear momentum is kept to rounding.
 * Angular momentum is kept in the limit: a positional correction moves a body while it moves,
 * which turns x * m v by about the correction times the relative speed, an error that shrinks
 * with the substep. */
static void test_balls_keep_momentum(void** state) {
	(void)state;
	const double p0 = 2 * 1000 * 4.0 / 3 * TP_PI * 0.001 - 1 * 1000 * 4.0 / 3 * TP_PI * 0.003375;
	double dp8, dl8, l8, dp32, dl32, l32;
	balls_meet(8, &dp8, &dl8, &l8);
	balls_meet(32, &dp32, &dl32, &l32);
	printf("  two balls meeting off-centre: momentum change %.2g and %.2g of %.3g kg m/s; angular momentum change "
	       "%.3g of %.3g kg m²/s at 8 substeps, %.3g at 32\n",
	       dp8, dp32, fabs(p0), dl8, l8, dl32);
	assert_true(dp8 < 1e-5 * fabs(p0) && dp32 < 1e-5 * fabs(p0));
	assert_true(dl8 < 0.02 * l8);
	assert_true(dl32 < 0.25 * dl8);
}

/* A cube dropped from 10 cm onto a cube resting on the floor comes to rest on it, and five cubes
 * stacked flush stand: after 5 s the top one has moved less than 5 mm. */
static void test_boxes_rest_on_boxes(void** state) {
	(void)state;
	char msg[256] = "";
	const double half = 0.1;
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-9.81, 0), 20, 1);
	floor_with(w, pbd_v3(0, 1, 0), 0.5, 0);
	/* the cube under the dropped one, and the lower four of the stack of five */
	(void)body_with(w, material(box_shape(half), 0.5, 0), at(0, half, 0), pbd_v3(0, 0, 0));
	for (int k = 0; k < 4; ++k)
		(void)body_with(w, material(box_shape(half), 0.5, 0), at(3, (2 * k + 1) * half, 0), pbd_v3(0, 0, 0));
	/* the dropped one, and a stack of three */
	const pbd_body_id dropped =
	    body_with(w, material(box_shape(half), 0.5, 0), at(0, 3 * half + 0.1, 0), pbd_v3(0, 0, 0));
	const pbd_body_id top = body_with(w, material(box_shape(half), 0.5, 0), at(3, 9 * half, 0), pbd_v3(0, 0, 0));
	const pbd_vec3 top0 = state_of(w, top).pose.position;
	for (int s = 0; s < 300; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_body_state d = state_of(w, dropped), t = state_of(w, top);
	const double drift = (double)pbd_v3_length(pbd_v3_sub(t.pose.position, top0));
	printf("  a cube dropped on a cube rests at %.5f m (3 half sizes: %.5f), speed %.2g m/s; five cubes stacked: the "
	       "top moved %.3g m in 5 s\n",
	       (double)d.pose.position.y, 3 * half, (double)pbd_v3_length(d.velocity), drift);
	assert_true(fabs((double)d.pose.position.y - 3 * half) < 1e-3);
	assert_true((double)pbd_v3_length(d.velocity) < 1e-2);
	assert_true(drift < 5e-3);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* Forty boxes and balls dropped in a heap onto a floor, with a static box among them: the sort
 * and sweep finds the pairs that testing every pair of colliders finds (the same final state, bit
 * for bit), nothing goes non-finite and nothing ends under the floor. */
static uint64_t heap(bool brute_force, double* lowest) {
	char msg[256] = "";
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-9.81, 0), 10, 1);
	w->rigid_brute_force = brute_force;
	floor_with(w, pbd_v3(0, 1, 0), 0.5, 0);
	pbd_collider_def fixed = material(box_shape(0.15), 0.5, 0);
	fixed.pose = at(0.1, 0.15, 0);
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &fixed)));
	uint32_t seed = 12345;
	pbd_body_id ids[40];
	for (int k = 0; k < 40; ++k) {
		seed = seed * 1664525u + 1013904223u;
		const double x = (double)(seed >> 8) / 16777216.0 - 0.5;
		seed = seed * 1664525u + 1013904223u;
		const double z = (double)(seed >> 8) / 16777216.0 - 0.5;
		const pbd_collider_def shape =
		    k % 2 ? material(ball_shape(0.06), 0.4, 0.2) : material(box_shape(0.05), 0.4, 0.2);
		ids[k] = body_with(w, shape, at(0.6 * x, 0.5 + 0.13 * k, 0.6 * z), pbd_v3(0, 0, 0));
	}
	for (int s = 0; s < 120; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	*lowest = 1e9;
	for (int k = 0; k < 40; ++k) {
		const pbd_body_state st = state_of(w, ids[k]);
		assert_true(pbd_v3_is_finite(st.pose.position) && pbd_v3_is_finite(st.velocity));
		*lowest = fmin(*lowest, (double)st.pose.position.y);
	}
	const uint64_t h = pbd_world_hash(w);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
	return h;
}

static void test_heap_sort_and_sweep(void** state) {
	(void)state;
	double low_sweep, low_brute;
	const uint64_t a = heap(false, &low_sweep), b = heap(true, &low_brute);
	printf(
	    "  40 boxes and balls in a heap: the same state with the sweep and with every pair: %s; lowest centre %.4f m\n",
	    a == b ? "yes" : "no", low_sweep);
	assert_true(a == b);
	assert_true(low_sweep > 0.04); /* the smallest half size is 0.05 m */
}

/* Three hundred boxes created in one place, each touching every other: the substep keeps at most
 * PBD_COLLISION_CONTACTS_PER_ITEM contacts per body and says so once, and the step ends with
 * every body finite. Unbounded, the 44 850 pairs would make over 350 000 contacts. */
static void test_crushed_bodies_bounded(void** state) {
	(void)state;
	char msg[512] = "";
	enum { N = 300 };
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, 0, 0), 2, 1);
	pbd_body_id ids[N];
	for (int k = 0; k < N; ++k)
		ids[k] =
		    body_with(w, material(box_shape(0.1), 0.5, 0), at(0.001 * (k % 7), 0.001 * (k % 5), 0), pbd_v3(0, 0, 0));
	assert_int_equal(pbd_world_step(w), PBD_OK);
	const uint32_t kept = w->nrc;
	assert_int_equal(pbd_world_step(w), PBD_OK);
	printf("  %d boxes in one place: %u contacts kept in the last substep (bound %u); logged: %.60s...\n", N, kept,
	       (unsigned)PBD_COLLISION_CONTACTS_PER_ITEM * N, msg);
	assert_true(kept <= (uint32_t)PBD_COLLISION_CONTACTS_PER_ITEM * N);
	assert_true(kept > N);
	assert_non_null(strstr(msg, "reached its bound"));
	for (int k = 0; k < N; ++k) {
		const pbd_body_state st = state_of(w, ids[k]);
		assert_true(pbd_v3_is_finite(st.pose.position) && pbd_v3_is_finite(st.velocity));
	}
	pbd_world_destroy(w);
}

/* A dynamic shape dropped onto a static one of another kind comes to rest on it: the features of
 * each against the other's distance need no code for the pair. Returns the dropped body's centre
 * height at the end and its speed. */
static void drop_onto(pbd_collider_def ground, pbd_collider_def dropped, pbd_pose from, double* y, double* speed) {
	char msg[256] = "";
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-9.81, 0), 20, 1);
	if (!pbd_collider_is_valid(w, pbd_collider_create(w, &ground))) fail_msg("%s", pbd_world_last_error(w));
	const pbd_body_id b = body_with(w, dropped, from, pbd_v3(0, 0, 0));
	for (int s = 0; s < 150; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_body_state st = state_of(w, b);
	*y = (double)st.pose.position.y;
	*speed = (double)pbd_v3_length(st.velocity);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

static void test_every_shape_holds_a_body(void** state) {
	(void)state;
	/* a flat height field at 0.2 m, a closed cube mesh with its top at 0.2 m, a hull of a cube's
	 * corners with its top at 0.2 m, and a static box with its top at 0.2 m */
	static pbd_real heights[5 * 5];
	for (int k = 0; k < 25; ++k) heights[k] = (pbd_real)0.2;
	pbd_collider_def field = material(pbd_collider_def_default(), 0.5, 0);
	field.type = PBD_SHAPE_HEIGHTFIELD;
	field.shape.heightfield = (pbd_heightfield){heights, 5, 5, (pbd_real)0.25, (pbd_real)0.25};
	field.pose = at(-0.5, 0, -0.5);
	static const pbd_vec3 corner[8] = {{-0.5f, -0.3f, -0.5f}, {0.5f, -0.3f, -0.5f}, {0.5f, -0.3f, 0.5f},
	                                   {-0.5f, -0.3f, 0.5f},  {-0.5f, 0.2f, -0.5f}, {0.5f, 0.2f, -0.5f},
	                                   {0.5f, 0.2f, 0.5f},    {-0.5f, 0.2f, 0.5f}};
	static const uint32_t faces[36] = {0, 1, 2, 0, 2, 3, 4, 6, 5, 4, 7, 6, 0, 5, 1, 0, 4, 5,
	                                   1, 6, 2, 1, 5, 6, 2, 7, 3, 2, 6, 7, 3, 4, 0, 3, 7, 4};
	pbd_collider_def mesh = material(pbd_collider_def_default(), 0.5, 0);
	mesh.type = PBD_SHAPE_MESH;
	mesh.shape.mesh = (pbd_trimesh){corner, faces, 8, 12, true};
	pbd_collider_def hull = material(pbd_collider_def_default(), 0.5, 0);
	hull.type = PBD_SHAPE_CONVEX;
	hull.shape.convex.points = corner;
	hull.shape.convex.point_count = 8;
	pbd_collider_def table = material(box_shape(0.25), 0.5, 0);
	table.pose = at(0, -0.05, 0);
	pbd_collider_def capsule = material(pbd_collider_def_default(), 0.5, 0);
	capsule.type = PBD_SHAPE_CAPSULE;
	capsule.shape.capsule = (pbd_capsule){(pbd_real)0.15, (pbd_real)0.05};
	pbd_pose lying = at(0.05, 0.5, 0);
	lying.rotation = pbd_quat_axis_angle(pbd_v3(0, 0, 1), (pbd_real)(TP_PI / 2)); /* along x */
	const struct {
		const char* name;
		pbd_collider_def ground, dropped;
		pbd_pose from;
		double rest;
	} cases[] = {
	    {"a box on a height field", field, material(box_shape(0.05), 0.5, 0), at(0.05, 0.5, 0.05), 0.25},
	    {"a box on a closed mesh", mesh, material(box_shape(0.05), 0.5, 0), at(0.05, 0.5, 0.05), 0.25},
	    {"a ball on a convex hull", hull, material(ball_shape(0.05), 0.5, 0), at(0.05, 0.5, 0.05), 0.25},
	    {"a capsule lying on a box", table, capsule, lying, 0.25},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
		double y, speed;
		drop_onto(cases[k].ground, cases[k].dropped, cases[k].from, &y, &speed);
		printf("  %s: rests at %.5f m (%.2f), speed %.2g m/s\n", cases[k].name, y, cases[k].rest, speed);
		assert_true(fabs(y - cases[k].rest) < 1e-3);
		assert_true(speed < 1e-3); /* a capsule resting on one point rolled at 6.6 mm/s */
	}
}

/* A cube resting on the floor reports its four bottom corners touching it
 * (pbd_world_get_body_contacts): the cube's collider against the floor's, the floor's normal, the
 * corners' places, no gap. */
static void test_body_contacts_reported(void** state) {
	(void)state;
	char msg[256] = "";
	const double half = 0.1;
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-9.81, 0), 10, 1);
	pbd_collider_def floor = material(pbd_collider_def_default(), 0.5, 0);
	floor.shape.plane.normal = pbd_v3(0, 1, 0);
	const pbd_collider_id fid = pbd_collider_create(w, &floor);
	(void)body_with(w, material(box_shape(half), 0.5, 0), at(1, half, 2), pbd_v3(0, 0, 0));
	for (int s = 0; s < 30; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	pbd_body_contact c[16];
	const uint32_t n = pbd_world_get_body_contacts(w, c, 16);
	assert_int_equal(pbd_world_get_body_contacts(w, NULL, 0), n);
	printf("  a cube at rest on the floor: %u body contacts, the first at (%.4f %.4f %.4f), separation %.2g m\n", n,
	       (double)c[0].point.x, (double)c[0].point.y, (double)c[0].point.z, (double)c[0].separation);
	assert_int_equal(n, 4);
	for (uint32_t k = 0; k < n; ++k) {
		assert_int_equal(c[k].surface.index1, fid.index1);
		assert_int_equal(c[k].surface.generation, fid.generation);
		assert_true(c[k].feature.index1 != fid.index1);
		assert_near(c[k].normal.y, 1, 1e-6);
		assert_near(c[k].point.y, 0, 1e-4);
		assert_near(fabs((double)c[k].point.x - 1), half, 1e-4);
		assert_near(fabs((double)c[k].point.z - 2), half, 1e-4);
		assert_true(fabs((double)c[k].separation) < 1e-4);
	}
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* A ball (radius 5 cm) or a cube (5 cm half size, turned `turn` degrees about a skew axis) fired
 * at 50 m/s from 0.5 m away at a wall 1 cm thick and 2 m square, `angle` degrees from its normal:
 * a static box, or a body of the given density (0: static). Returns how far the centre came past
 * the wall's near face (z = -5 mm in the wall's frame) at the end of any step of the next second
 * until it slid past the wall's edge (negative: it stayed on the near side). Without gravity. */
static double fired_at_wall(bool cube, double angle, double turn, double density, int substeps, int iterations) {
	char msg[256] = "";
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, 0, 0), substeps, iterations);
	pbd_collider_def wall = box_shape(1);
	wall.shape.box.half_extents.z = (pbd_real)0.005;
	pbd_body_id plate = {0, 0};
	if (density > 0)
		plate = body_of(w, wall, density, at(0, 0, 0), pbd_v3(0, 0, 0));
	else
		assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &wall)));
	const double a = angle * TP_PI / 180;
	const pbd_vec3 dir = pbd_v3((pbd_real)sin(a), 0, (pbd_real)cos(a));
	pbd_pose from = {pbd_v3_scale(dir, (pbd_real)-0.5), pbd_quat_identity()};
	const pbd_vec3 axis = pbd_v3((pbd_real)0.3, 1, (pbd_real)0.2);
	if (cube)
		from.rotation =
		    pbd_quat_axis_angle(pbd_v3_scale(axis, 1 / pbd_v3_length(axis)), (pbd_real)(turn * TP_PI / 180));
	const pbd_body_id b = body_with(w, cube ? box_shape(0.05) : ball_shape(0.05), from, pbd_v3_scale(dir, 50));
	double past = -1;
	for (int s = 0; s < 60; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		pbd_vec3 x = state_of(w, b).pose.position;
		if (density > 0) {
			const pbd_body_state p = state_of(w, plate);
			x = pbd_quat_rotate(pbd_quat_conj(p.pose.rotation), pbd_v3_sub(x, p.pose.position));
		}
		if (!(fabs((double)x.x) < 0.95 && fabs((double)x.y) < 0.95)) break; /* past the wall's edge */
		past = fmax(past, (double)x.z + 0.005);
	}
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
	return past;
}

/* A fast small body does not pass through a thin one: a ball and a cube fired at 50 m/s at a
 * static wall 1 cm thick, from several angles, at 20 substeps of 1 iteration and at one substep
 * of 10 (the world's default). A cube moves 4.2 cm a substep at 20 (most of its half size), a ball or a
 * cube 83 cm in one: their corners and centres were found past the wall's middle, whose nearest
 * way out led on through (every case at one substep, the cube head on and at 30 degrees at 20;
 * it ended 37.6 m past the wall). */
static void test_fast_bodies_stay_before_thin_walls(void** state) {
	(void)state;
	const double angles[] = {0, 30, 60};
	const struct { int substeps, iterations; } runs[] = {{20, 1}, {1, 10}};
	for (size_t r = 0; r < sizeof runs / sizeof runs[0]; ++r)
		for (int shape = 0; shape < 3; ++shape)
			for (size_t k = 0; k < sizeof angles / sizeof angles[0]; ++k) {
				const bool cube = shape > 0;
				const double turn = shape == 2 ? 37 : 0;
				const double past = fired_at_wall(cube, angles[k], turn, 0, runs[r].substeps, runs[r].iterations);
				printf("  %s fired at 50 m/s, %2.0f° off the normal of a static wall 1 cm thick, %2d substep(s): "
				       "centre %.4f m before its face\n",
				       shape == 0 ? "ball" : (shape == 1 ? "cube" : "turned cube"), angles[k], runs[r].substeps, -past);
				assert_true(past < 0);
			}
}

/* The same at a plate of 1 cm that is a body far heavier than them, as heavy, and lighter. */
static void test_fast_bodies_stay_before_thin_plates(void** state) {
	(void)state;
	const double densities[] = {100000, 1000, 10}; /* the plate 40 t, 40 kg, 0.4 kg; the cube 1 kg */
	for (int substeps = 20; substeps >= 1; substeps -= 19)
		for (size_t d = 0; d < sizeof densities / sizeof densities[0]; ++d)
			for (int shape = 0; shape < 3; ++shape)
				for (int k = 0; k < 2; ++k) {
					const bool cube = shape > 0;
					const double turn = shape == 2 ? 37 : 0, angle = 30.0 * k;
					const double past =
					    fired_at_wall(cube, angle, turn, densities[d], substeps, substeps == 1 ? 10 : 1);
					printf("  %s fired at 50 m/s, %2.0f° off the normal of a plate body of density %6.0f, %2d "
					       "substep(s): centre %.4f m before its face\n",
					       shape == 0 ? "ball" : (shape == 1 ? "cube" : "turned cube"), angle, densities[d], substeps,
					       -past);
					assert_true(past < 0);
				}
}

/* ---- bodies tipping over an edge ----------------------------------------------------------- */

/* The angular acceleration of a rigid body of equal cubes of edge a turned by theta from rest on
 * an edge it pivots on, the cubes' centres at (x[k], y[k]) from the edge (x past it, y up):
 * g sum(x cos theta + y sin theta) / sum(a²/6 + x² + y²), each cube's moment of inertia a²/6
 * per unit mass about its centre and the parallel axes to the edge. */
static double tip_accel(const double* x, const double* y, int count, double a, double theta) {
	double torque = 0, inertia = 0;
	for (int k = 0; k < count; ++k) {
		torque += x[k] * cos(theta) + y[k] * sin(theta);
		inertia += a * a / 6 + x[k] * x[k] + y[k] * y[k];
	}
	return 9.81 * torque / inertia;
}

/* That body turning from rest, by fourth-order Runge-Kutta, until time `until` or the turn
 * `angle`, whichever comes first: returns the time, with the angular speed then in *omega. */
static double tip_closed_form(const double* x, const double* y, int count, double a, double until, double angle,
                              double* omega) {
	double th = 0, w = 0, t = 0;
	const double dt = 1e-5;
	while (t < until - dt / 2 && th < angle) {
		const double k1t = w, k1w = tip_accel(x, y, count, a, th);
		const double k2t = w + dt / 2 * k1w, k2w = tip_accel(x, y, count, a, th + dt / 2 * k1t);
		const double k3t = w + dt / 2 * k2w, k3w = tip_accel(x, y, count, a, th + dt / 2 * k2t);
		const double k4t = w + dt * k3w, k4w = tip_accel(x, y, count, a, th + dt * k3t);
		th += dt / 6 * (k1t + 2 * k2t + 2 * k3t + k4t);
		w += dt / 6 * (k1w + 2 * k2w + 2 * k3w + k4w);
		t += dt;
	}
	*omega = w;
	return t;
}

/* How far a body has turned from its start upright: the angle of its rotation. */
static double turn_of(pbd_quat q) {
	const double s = sqrt((double)q.x * (double)q.x + (double)q.y * (double)q.y + (double)q.z * (double)q.z);
	return 2 * atan2(s, fabs((double)q.w));
}

/* A cube of edge 0.24 m (400 kg/m³) at rest on a static box of the same size, its centre d past
 * the box's edge (negative: inside), at 20 substeps of 1 iteration: its angular speed after one
 * step and after 0.1 s, and its largest turn over 1 s. */
static void cube_on_edge(double d, double* w1, double* w6, double* turn) {
	char msg[256] = "";
	const double half = 0.12;
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-9.81, 0), 20, 1);
	pbd_collider_def support = material(box_shape(half), 0.6, 0);
	support.pose = at(0, half, 0);
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &support)));
	pbd_collider_def cube = material(box_shape(half), 0.6, 0);
	cube.kinetic_friction = (pbd_real)0.5;
	const pbd_body_id b = body_of(w, cube, 400, at(half + d, 3 * half, 0), pbd_v3(0, 0, 0));
	*turn = 0;
	for (int s = 1; s <= 60; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_body_state st = state_of(w, b);
		*turn = fmax(*turn, turn_of(st.pose.rotation));
		if (s == 1) *w1 = -(double)st.angular_velocity.z;
		if (s == 6) *w6 = -(double)st.angular_velocity.z;
	}
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* A cube whose centre lies past the edge of what carries it tips over that edge at once: it
 * turns about the edge with alpha = m g d / I_edge at the first instant (the closed form above,
 * one cube: x = d, y = a / 2), and its angular speed follows the closed form within 1 % after one
 * step (measured 0.01 %, its centre 1.5 and 5 cm past the edge) and, 1.5 cm past, after 0.1 s
 * (0.06 %). One whose centre lies 1 cm inside stands still (turned 0.8 µrad in 1 s). */
static void test_cube_tips_over_edge(void** state) {
	(void)state;
	const double a = 0.24, ds[2] = {0.015, 0.05};
	for (int k = 0; k < 2; ++k) {
		const double x = ds[k], y = a / 2;
		double w1, w6, turn, c1, c6;
		cube_on_edge(ds[k], &w1, &w6, &turn);
		(void)tip_closed_form(&x, &y, 1, a, 1.0 / 60, 10, &c1);
		(void)tip_closed_form(&x, &y, 1, a, 0.1, 10, &c6);
		printf("  a cube of %.2f m on an edge, its centre %.1f cm past it: alpha %.4f rad/s² at the start; "
		       "%.5f rad/s after one step (closed form %.5f), %.5f after 0.1 s (%.5f)\n",
		       a, 100 * ds[k], tip_accel(&x, &y, 1, a, 0), w1, c1, w6, c6);
		assert_true(fabs(w1 - c1) < 0.01 * c1);
		if (k == 0) assert_true(fabs(w6 - c6) < 0.01 * c6);
	}
	double w1, w6, turn;
	cube_on_edge(-0.01, &w1, &w6, &turn);
	printf("  its centre 1 cm inside: turned %.2g rad in 1 s\n", turn);
	assert_true(turn < 1e-3);
}

/* The leaning stack: `count` cubes of 0.24 m (400 kg/m³, friction 0.6 static, 0.5 kinetic)
 * stacked 1 mm apart on a floor of margin 5 mm, each `step` further along x than the one below,
 * at `substeps` x `iterations`, sleeping on or off, stepped `steps` times. Returns the time the
 * top cube had turned past 0.3 rad (-1: never), with its largest turn, the largest horizontal
 * distance it moved and how far its centre came down in *turn, *moved, *drop. */
static double leaning_stack(int count, double step, int substeps, int iterations, bool sleeping, int steps,
                            double* turn, double* moved, double* drop) {
	char msg[256] = "";
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, (pbd_real)-9.81, 0);
	def.substeps = substeps;
	def.iterations = iterations;
	if (!sleeping) def.sleep_time = 0;
	def.log = test_log_keep;
	def.log_user = msg;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	pbd_collider_def floor = material(pbd_collider_def_default(), 0.6, 0);
	floor.kinetic_friction = (pbd_real)0.5;
	floor.margin = (pbd_real)0.005;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &floor)));
	const double half = 0.12;
	pbd_collider_def cube = material(box_shape(half), 0.6, 0);
	cube.kinetic_friction = (pbd_real)0.5;
	pbd_body_id top = {0};
	for (int k = 0; k < count; ++k)
		top = body_of(w, cube, 400, at(k * step, 0.006 + half + k * (2 * half + 0.001), 0), pbd_v3(0, 0, 0));
	const pbd_vec3 start = state_of(w, top).pose.position;
	double tipped = -1;
	*turn = *moved = *drop = 0;
	for (int s = 1; s <= steps; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_body_state st = state_of(w, top);
		assert_true(pbd_v3_is_finite(st.pose.position));
		*turn = fmax(*turn, turn_of(st.pose.rotation));
		if (tipped < 0 && *turn > 0.3) tipped = s / 60.0;
		const double dx = (double)st.pose.position.x - (double)start.x,
		             dz = (double)st.pose.position.z - (double)start.z;
		*moved = fmax(*moved, sqrt(dx * dx + dz * dz));
		*drop = fmax(*drop, (double)start.y - (double)st.pose.position.y);
	}
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
	return tipped;
}

/* A stack whose upper part cannot stand falls as one rigid body tips over an edge. Three cubes
 * each 9 cm further out than the one below: the upper two's centre lies 1.5 cm past the bottom
 * cube's edge, though each cube's own centre lies over the one below it. Before, it stood level
 * for ever at 16 x 2, 20 x 1, 20 x 2, 10 x 4 and 40 x 1 (sleeping on and off), and four cubes
 * 8 cm apart (4 cm past) too: the settling pass held each body on the one below it under its own
 * weight alone. The upper two, pivoting on the bottom cube's edge from rest as one rigid body,
 * turn by 0.3 rad in 0.462 s; the top cube did so in 0.500 s at 20 x 1 and 16 x 2, the landing
 * on the 1 mm gaps included (the same with sleeping on and off), and of four cubes in 0.55 to
 * 0.65 s (closed form 0.452 s). Asserted: the turn within 1.25 times the closed form for three
 * cubes and 1.6 times for four, and the top cube down near the floor after 3 s. */
static void test_leaning_stack_topples(void** state) {
	(void)state;
	const double a = 0.24;
	/* the upper cubes' centres from the bottom cube's edge once the gaps have closed */
	const double x3[2] = {0.09 - 0.12, 0.18 - 0.12}, y3[2] = {0.12, 0.36};
	const double x4[3] = {0.08 - 0.12, 0.16 - 0.12, 0.24 - 0.12}, y4[3] = {0.12, 0.36, 0.60};
	double omega;
	const double t3 = tip_closed_form(x3, y3, 2, a, 10, 0.3, &omega);
	const double t4 = tip_closed_form(x4, y4, 3, a, 10, 0.3, &omega);
	const struct {
		int count, substeps, iterations;
		bool sleeping;
	} runs[4] = {{3, 20, 1, true}, {3, 16, 2, false}, {4, 20, 1, false}, {4, 16, 2, true}};
	for (int r = 0; r < 4; ++r) {
		const int n = runs[r].count;
		double turn, moved, drop;
		const double t = leaning_stack(n, n == 3 ? 0.09 : 0.08, runs[r].substeps, runs[r].iterations, runs[r].sleeping,
		                               180, &turn, &moved, &drop);
		const double closed = n == 3 ? t3 : t4;
		printf("  %d cubes %s cm apart at %d x %d, sleeping %s: the top turned 0.3 rad after %.3f s (as one rigid body "
		       "on the edge: %.3f s), its centre came down %.3f m in 3 s\n",
		       n, n == 3 ? "9" : "8", runs[r].substeps, runs[r].iterations, runs[r].sleeping ? "on" : "off", t, closed,
		       drop);
		assert_true(t > 0.9 * closed && t < (n == 3 ? 1.25 : 1.6) * closed);
		/* lying on the floor: from 2 (n - 1) + 1 half edges up to one, give or take a cube */
		assert_true(drop > (2 * (n - 1) - 2) * 0.12);
	}
}

/* The same stack just inside its tipping point stands: three cubes 7.8 cm and 7.5 cm apart
 * (the upper two's centre 3 mm and 7.5 mm inside the bottom cube's edge) stay level for 5 s at
 * 20 x 1 and 16 x 2, sleeping off: the top cube turns less than 0.01 rad and moves less than
 * 1 cm sideways (measured at most 0.14 mrad and 0.03 mm; it comes down the 3 mm of the gaps).
 * 8.2 cm apart (3 mm past) it tips, in 0.80 s at both (closed form 0.736 s). The short run
 * (sanitizers, Debug) takes 2 s. */
static void test_leaning_stack_inside_stands(void** state) {
	(void)state;
	const double steps[2] = {0.078, 0.075};
	const int settings[2][2] = {{20, 1}, {16, 2}};
	for (int k = 0; k < 2; ++k)
		for (int s = 0; s < 2; ++s) {
			double turn, moved, drop;
			const double t = leaning_stack(3, steps[k], settings[s][0], settings[s][1], false, test_short() ? 120 : 300,
			                               &turn, &moved, &drop);
			printf(
			    "  3 cubes %.1f cm apart (%.1f mm inside the edge) at %d x %d: the top turned %.2g rad, moved %.2g m "
			    "sideways and %.4f m down\n",
			    100 * steps[k], 1000 * (0.12 - 1.5 * steps[k]), settings[s][0], settings[s][1], turn, moved, drop);
			assert_true(t < 0);
			assert_true(turn < 0.01);
			assert_true(moved < 0.01);
		}
}

/* Cubes of edge 0.5 m (1000 kg/m³, friction 0.5 with the floor and with each other) on a floor
 * in `layers` rows: one cube a row (a stack), or in row k layers - k cubes side by side and
 * touching, each on the two below it (a pyramid). Sleeping is off, so that the contacts alone
 * hold them. Returns the largest horizontal distance the top cube moved from where it started
 * over `steps` steps at 60 Hz of 20 substeps of 1 iteration, with the largest of any cube in
 * *any. */
static double tall_drift(int layers, bool pyramid, int steps, double* any) {
	char msg[256] = "";
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, (pbd_real)-9.81, 0);
	def.substeps = 20;
	def.iterations = 1;
	def.sleep_time = 0;
	def.log = test_log_keep;
	def.log_user = msg;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	floor_with(w, pbd_v3(0, 1, 0), 0.5, 0);
	const double half = 0.25;
	enum { MAX = 256 };
	pbd_body_id ids[MAX];
	pbd_vec3 start[MAX];
	int n = 0;
	for (int row = 0; row < layers; ++row) {
		const int count = pyramid ? layers - row : 1;
		for (int k = 0; k < count && n < MAX; ++k, ++n) {
			start[n] = pbd_v3((pbd_real)((k - (count - 1) / 2.0) * 2 * half), (pbd_real)((2 * row + 1) * half), 0);
			ids[n] = body_with(w, material(box_shape(half), 0.5, 0), (pbd_pose){start[n], pbd_quat_identity()},
			                   pbd_v3(0, 0, 0));
		}
	}
	double top = 0;
	*any = 0;
	for (int s = 0; s < steps; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		for (int k = 0; k < n; ++k) {
			const pbd_vec3 x = state_of(w, ids[k]).pose.position;
			assert_true(pbd_v3_is_finite(x));
			const double dx = (double)x.x - (double)start[k].x, dz = (double)x.z - (double)start[k].z;
			const double moved = sqrt(dx * dx + dz * dz);
			*any = fmax(*any, moved);
			if (k == n - 1) top = fmax(top, moved);
		}
	}
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
	return top;
}

/* Twenty cubes stacked flush stand: the top one moves less than 1 cm in 10 s. One iteration over
 * the corner contacts in turn left each substep a little tilt, which the next one's velocity kept
 * and the stack above amplified: ten cubes moved 1.1 cm in 5 s and twenty fell; a float's step of
 * a micrometre ten metres up woke the top of the stack again (the contacts' geometry is now read
 * from the pair). The short run (sanitizers, Debug) takes 2 s. */
static void test_tall_stack_stands(void** state) {
	(void)state;
	const int steps = test_short() ? 120 : 600;
	double any;
	const double top = tall_drift(20, false, steps, &any);
	printf("  twenty cubes of 0.5 m stacked flush: the top one moved %.3g m in %.0f s (any cube %.3g m)\n", top,
	       steps / 60.0, any);
	assert_true(top < 0.01);
}

/* A pyramid of 20 rows (210 cubes, each on two below) stands: the top cube moves less than 1 cm
 * in 10 s. The short run (sanitizers, Debug) builds 8 rows (36 cubes) for 2 s. */
static void test_pyramid_stands(void** state) {
	(void)state;
	const bool short_run = test_short();
	const int layers = short_run ? 8 : 20, steps = short_run ? 120 : 600;
	double any;
	const double top = tall_drift(layers, true, steps, &any);
	printf("  a pyramid of %d rows of cubes of 0.5 m: the top one moved %.3g m in %.0f s (any cube %.3g m)\n", layers,
	       top, steps / 60.0, any);
	assert_true(top < 0.01);
}

/* `--pyramid`: the pyramid alone (a minute and more in Release; tests/CMakeLists.txt labels it
 * slow). */
int main(int argc, char** argv) {
	test_enable_fp_traps();
	if (argc > 1 && strcmp(argv[1], "--pyramid") == 0) {
		const struct CMUnitTest pyramid[] = {cmocka_unit_test(test_pyramid_stands)};
		return cmocka_run_group_tests(pyramid, NULL, NULL);
	}
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ball_bounces),
	    cmocka_unit_test(test_box_on_slope),
	    cmocka_unit_test(test_box_slides_to_a_stop),
	    cmocka_unit_test(test_stacked_boxes_slide_as_one),
	    cmocka_unit_test(test_boxes_rest_on_boxes),
	    cmocka_unit_test(test_balls_keep_momentum),
	    cmocka_unit_test(test_heap_sort_and_sweep),
	    cmocka_unit_test(test_crushed_bodies_bounded),
	    cmocka_unit_test(test_every_shape_holds_a_body),
	    cmocka_unit_test(test_body_contacts_reported),
	    cmocka_unit_test(test_fast_bodies_stay_before_thin_walls),
	    cmocka_unit_test(test_fast_bodies_stay_before_thin_plates),
	    cmocka_unit_test(test_cube_tips_over_edge),
	    cmocka_unit_test(test_leaning_stack_topples),
	    cmocka_unit_test(test_leaning_stack_inside_stands),
	    cmocka_unit_test(test_tall_stack_stands),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
