/* Contacts nothing slips past: a particle that the constraints move during the iterations meets
 * the colliders it reaches, however it got there. A particle resting above a ball on a hard link
 * that pulls it towards the ball's centre, a particle dragged by a pin jumped across a ball, a
 * cloth sliding over a sphere and a cloth dropped on a turned box: at 1 and 10 substeps, after
 * every step, every particle is outside its collider and no deeper than 1e-6 m into the margin
 * shell around it (where the link and the ball disagree, the ball wins and the link stays
 * stretched). A sheet hit at 20 m/s by a ball smaller than its cells keeps the ball on the side
 * it came from, whether the ball goes on regardless (kinematic) or the sheet catches it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_physics.h"

#define MARGIN 0.01
#define SHELL  1e-6

static pbd_world* world(char* msg, pbd_vec3 g, int substeps) {
	pbd_world_def def = pbd_world_def_default();
	def.gravity = g;
	def.substeps = substeps;
	def.iterations = 10;
	def.formulation = PBD_FORMULATION_XPBD;
	def.log = test_log_keep;
	def.log_user = msg;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	return w;
}

static void ball(pbd_world* w, double r) {
	pbd_collider_def c = pbd_collider_def_default();
	c.type = PBD_SHAPE_SPHERE;
	c.shape.sphere.center = pbd_v3(0, 0, 0);
	c.shape.sphere.radius = (pbd_real)r;
	c.margin = (pbd_real)MARGIN;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &c)));
}

/* How far the deepest of particles [first, end) is into the margin shell of a ball of radius r
 * at the origin. */
static double into_ball(const pbd_world* w, double r, uint32_t first, uint32_t end) {
	double worst = -1;
	for (uint32_t i = first; i < end; ++i) worst = fmax(worst, r + MARGIN - tp_len(pbd_world_positions(w)[i]));
	return worst;
}

/* The published contacts are in order, collider then particle, and no particle has two with one
 * collider (the late passes find a particle's contact by bisection and must not make another). */
static void assert_contacts_ordered(const pbd_world* w) {
	static pbd_contact c[2048];
	const uint32_t n = pbd_world_get_contacts(w, c, 2048);
	assert_true(n <= 2048);
	for (uint32_t k = 1; k < n; ++k)
		assert_true(c[k - 1].collider_index1 < c[k].collider_index1 ||
		            (c[k - 1].collider_index1 == c[k].collider_index1 && c[k - 1].particle < c[k].particle));
}

static uint32_t particle(pbd_world* w, pbd_vec3 at, pbd_real inv_mass) {
	uint32_t i = 0;
	const pbd_vec3 v = pbd_v3(0, 0, 0);
	assert_int_equal(pbd_world_add_particles(w, 1, &at, &v, &inv_mass, &i), PBD_OK);
	return i;
}

static void hard_link(pbd_world* w, uint32_t a, uint32_t b, double rest) {
	pbd_distance_def d = pbd_distance_def_default();
	d.a = a;
	d.b = b;
	d.rest = (pbd_real)rest;
	assert_int_equal(pbd_world_add_distances(w, 1, &d, NULL), PBD_OK);
}

/* An n x n cloth `size` m square of `mass` kg in the xz plane from `origin`, kept in *m for its
 * triangles (freed by the caller). */
static void grid_cloth(pbd_world* w, pbd_mesh* m, uint32_t n, double size, pbd_vec3 origin, double mass) {
	tp_grid(m, n, n, (pbd_real)size, origin, 1, false);
	pbd_soft_def d = pbd_soft_def_default();
	d.mesh = m;
	d.mass_mode = PBD_MASS_TOTAL;
	d.mass = (pbd_real)mass;
	pbd_soft_info info;
	assert_int_equal(test_soft_create(w, &d, &info), PBD_OK);
}

/* A particle 4 cm above a ball of radius 0.5 on a hard link 0.1 m long to a pin 0.3 m below the
 * ball's top, inside it: the link pulls the particle towards the centre. */
static void test_link_pulls_into_ball(void** state) {
	(void)state;
	const int substeps[2] = {1, 10};
	for (int k = 0; k < 2; ++k) {
		char msg[256] = "";
		pbd_world* w = world(msg, pbd_v3(0, 0, 0), substeps[k]);
		ball(w, 0.5);
		const uint32_t p = particle(w, pbd_v3(0, (pbd_real)(0.5 + MARGIN + 0.04), 0), 1);
		const uint32_t pin = particle(w, pbd_v3(0, (pbd_real)0.2, 0), 0);
		hard_link(w, p, pin, 0.1);
		double worst = -1;
		for (int s = 0; s < 60; ++s) {
			assert_int_equal(pbd_world_step(w), PBD_OK);
			worst = fmax(worst, into_ball(w, 0.5, p, p + 1));
		}
		const pbd_vec3 x = pbd_world_positions(w)[p];
		printf("  %2d substeps: a link pulling towards the centre: deepest %.3g m into the margin, the particle "
		       "ends at y = %.6f (link stretched to %.4f m)\n",
		       substeps[k], worst, (double)x.y, tp_dist(x, pbd_world_positions(w)[pin]));
		assert_true(worst <= SHELL);
		assert_true((double)x.y > 0.5); /* on top of the ball, not through it */
		pbd_world_destroy(w);
	}
}

/* A pin jumped 0.6 m across a ball of radius 0.1 in one step (its target moves it over the
 * substeps), dragging a particle on a hard link 0.2 m long along the line through the ball's
 * centre: the particle never ends inside the ball nor passes through it. */
static void test_pin_dragged_across(void** state) {
	(void)state;
	const int substeps[2] = {1, 10};
	for (int k = 0; k < 2; ++k) {
		char msg[256] = "";
		pbd_world* w = world(msg, pbd_v3(0, 0, 0), substeps[k]);
		ball(w, 0.1);
		const uint32_t p = particle(w, pbd_v3((pbd_real)-0.45, 0, 0), 1);
		const uint32_t pin = particle(w, pbd_v3((pbd_real)-0.25, 0, 0), 0);
		hard_link(w, p, pin, 0.2);
		double worst = -1;
		for (int s = 0; s < 30; ++s) {
			if (s == 1) assert_int_equal(pbd_particle_set_target(w, pin, pbd_v3((pbd_real)0.35, 0, 0)), PBD_OK);
			assert_int_equal(pbd_world_step(w), PBD_OK);
			worst = fmax(worst, into_ball(w, 0.1, p, p + 1));
		}
		const double end_x = (double)pbd_world_positions(w)[p].x;
		printf("  %2d substeps: a pin jumped across the ball: deepest %.3g m into the margin, the particle ends at x = "
		       "%.4f\n",
		       substeps[k], worst, end_x);
		assert_true(worst <= SHELL);
		assert_true(end_x < 0); /* held on the near side: it did not pass through the ball */
		pbd_world_destroy(w);
	}
}

/* A 24 x 24 cloth, 1.2 m square, dropped on a ball of radius 0.4 with a sideways speed of 2 m/s,
 * so that it slides over it and off. */
static void test_cloth_slides_over_ball(void** state) {
	(void)state;
	const int substeps[2] = {1, 10};
	for (int k = 0; k < 2; ++k) {
		char msg[256] = "";
		pbd_world* w = world(msg, pbd_v3(0, (pbd_real)-9.81, 0), substeps[k]);
		ball(w, 0.4);
		pbd_mesh m;
		grid_cloth(w, &m, 24, 1.2, pbd_v3((pbd_real)-0.9, (pbd_real)0.45, (pbd_real)-0.6), 0.2);
		pbd_mesh_free(&m);
		pbd_vec3 v[24 * 24];
		for (uint32_t i = 0; i < 24 * 24; ++i) v[i] = pbd_v3(2, 0, 0);
		assert_int_equal(pbd_world_set_velocities(w, 0, 24 * 24, v), PBD_OK);
		double worst = -1;
		for (int s = 0; s < 90; ++s) {
			assert_int_equal(pbd_world_step(w), PBD_OK);
			worst = fmax(worst, into_ball(w, 0.4, 0, pbd_world_particle_count(w)));
			assert_contacts_ordered(w);
		}
		printf("  %2d substeps: a cloth sliding over a ball: deepest %.3g m into the margin\n", substeps[k], worst);
		assert_true(worst <= SHELL);
		assert_true(tp_all_finite(w));
		pbd_world_destroy(w);
	}
}

/* A 24 x 24 cloth dropped on a box turned 30 degrees about y and 20 about x: the deepest
 * particle, in the box's frame, over every step. */
static void test_cloth_on_turned_box(void** state) {
	(void)state;
	const int substeps[2] = {1, 10};
	for (int k = 0; k < 2; ++k) {
		char msg[256] = "";
		pbd_world* w = world(msg, pbd_v3(0, (pbd_real)-9.81, 0), substeps[k]);
		pbd_collider_def c = pbd_collider_def_default();
		c.type = PBD_SHAPE_BOX;
		const pbd_vec3 half = pbd_v3((pbd_real)0.3, (pbd_real)0.2, (pbd_real)0.25);
		c.shape.box.half_extents = half;
		c.margin = (pbd_real)MARGIN;
		c.pose.rotation = pbd_quat_mul(pbd_quat_axis_angle(pbd_v3(0, 1, 0), (pbd_real)(30 * TP_PI / 180)),
		                               pbd_quat_axis_angle(pbd_v3(1, 0, 0), (pbd_real)(20 * TP_PI / 180)));
		assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &c)));
		pbd_mesh m;
		grid_cloth(w, &m, 24, 1.2, pbd_v3((pbd_real)-0.6, (pbd_real)0.5, (pbd_real)-0.6), 0.2);
		pbd_mesh_free(&m);
		double worst = -1;
		for (int s = 0; s < 90; ++s) {
			assert_int_equal(pbd_world_step(w), PBD_OK);
			for (uint32_t i = 0, n = pbd_world_particle_count(w); i < n; ++i) {
				const pbd_vec3 l = pbd_pose_apply_inverse(c.pose, pbd_world_positions(w)[i]);
				/* distance to the box: outside, the length of the excess; inside, minus the depth */
				const double e[3] = {fabs((double)l.x) - (double)half.x, fabs((double)l.y) - (double)half.y,
				                     fabs((double)l.z) - (double)half.z};
				const double out =
				    sqrt(fmax(e[0], 0) * fmax(e[0], 0) + fmax(e[1], 0) * fmax(e[1], 0) + fmax(e[2], 0) * fmax(e[2], 0));
				const double dist = out > 0 ? out : fmax(e[0], fmax(e[1], e[2]));
				worst = fmax(worst, MARGIN - dist);
			}
			assert_contacts_ordered(w);
		}
		printf("  %2d substeps: a cloth on a turned box: deepest %.3g m into the margin\n", substeps[k], worst);
		assert_true(worst <= SHELL);
		pbd_world_destroy(w);
	}
}

/* Whether the segment [a, b] passes through triangle (p, q, r) (Möller–Trumbore, in double). */
static bool segment_crosses(pbd_vec3 a, pbd_vec3 b, pbd_vec3 p, pbd_vec3 q, pbd_vec3 r) {
	const double d[3] = {(double)b.x - a.x, (double)b.y - a.y, (double)b.z - a.z};
	const double e1[3] = {(double)q.x - p.x, (double)q.y - p.y, (double)q.z - p.z};
	const double e2[3] = {(double)r.x - p.x, (double)r.y - p.y, (double)r.z - p.z};
	const double h[3] = {d[1] * e2[2] - d[2] * e2[1], d[2] * e2[0] - d[0] * e2[2], d[0] * e2[1] - d[1] * e2[0]};
	const double det = e1[0] * h[0] + e1[1] * h[1] + e1[2] * h[2];
	if (fabs(det) < 1e-300) return false;
	const double s[3] = {(double)a.x - p.x, (double)a.y - p.y, (double)a.z - p.z};
	const double u = (s[0] * h[0] + s[1] * h[1] + s[2] * h[2]) / det;
	if (u < 0 || u > 1) return false;
	const double k[3] = {s[1] * e1[2] - s[2] * e1[1], s[2] * e1[0] - s[0] * e1[2], s[0] * e1[1] - s[1] * e1[0]};
	const double v = (d[0] * k[0] + d[1] * k[1] + d[2] * k[2]) / det;
	if (v < 0 || u + v > 1) return false;
	const double t = (e2[0] * k[0] + e2[1] * k[1] + e2[2] * k[2]) / det;
	return t >= 0 && t <= 1;
}

/* How many of the sheet's triangles the segment [a, b] passes through. */
static int crossings(const pbd_world* w, const pbd_mesh* m, pbd_vec3 a, pbd_vec3 b) {
	const pbd_vec3* x = pbd_world_positions(w);
	int n = 0;
	for (uint32_t t = 0; t < m->triangle_count; ++t)
		n += segment_crosses(a, b, x[m->triangles[3 * t]], x[m->triangles[3 * t + 1]], x[m->triangles[3 * t + 2]]);
	return n;
}

/* The ball of the thin-sheet tests: 5 cm across, with a 5 mm margin, riding on a body (dynamic
 * of the given mass, or kinematic for mass 0) that starts at `start`, moving down at 20 m/s. */
static pbd_body_id fast_ball(pbd_world* w, double mass, pbd_vec3 start, pbd_collider_id* shape) {
	pbd_body_def bd = pbd_body_def_default();
	bd.type = mass > 0 ? PBD_BODY_DYNAMIC : PBD_BODY_KINEMATIC;
	bd.pose.position = start;
	bd.velocity = pbd_v3(0, -20, 0);
	if (mass > 0) {
		bd.mass.mass = mass;
		bd.mass.inertia[0] = bd.mass.inertia[1] = bd.mass.inertia[2] = 0.4 * mass * 0.025 * 0.025;
	}
	const pbd_body_id body = pbd_body_create(w, &bd);
	assert_true(pbd_body_is_valid(w, body));
	pbd_collider_def c = pbd_collider_def_default();
	c.type = PBD_SHAPE_SPHERE;
	c.shape.sphere.center = pbd_v3(0, 0, 0);
	c.shape.sphere.radius = (pbd_real)0.025;
	c.margin = (pbd_real)0.005;
	c.body = body;
	*shape = pbd_collider_create(w, &c);
	assert_true(pbd_collider_is_valid(w, *shape));
	return body;
}

/* A 20 x 20 sheet, 1 m square and 0.1 kg, pinned all round its border, hit by fast_ball 0.5 m
 * above the point (cx, cz) in cells, inside a cell next to the centre (5.3 cm across, so that the
 * ball, 6 cm with its margin, meets no vertex on its way and only the faces can hold it). A kinematic ball is stopped
 * once it is past `stop` below the sheet's plane. The sheet pinned round the path separates the ball's start from its
 * end, so the straight path from the start to the ball's centre crosses the sheet an odd number of times exactly when
 * the ball went through: counted after each of 40 steps. Returns whether it ever did. */
static bool ball_through_sheet(int substeps, double mass, double stop, double cx, double cz) {
	char msg[256] = "";
	pbd_world* w = world(msg, pbd_v3(0, (pbd_real)-9.81, 0), substeps);
	pbd_mesh m;
	const uint32_t n = 20;
	grid_cloth(w, &m, n, 1, pbd_v3((pbd_real)-0.5, 0, (pbd_real)-0.5), 0.1);
	for (uint32_t i = 0; i < n * n; ++i) {
		const uint32_t r = i / n, c = i % n;
		if (r == 0 || c == 0 || r == n - 1 || c == n - 1) assert_int_equal(pbd_particle_pin(w, i), PBD_OK);
	}
	const double cell = 1.0 / (n - 1);
	const pbd_vec3 start = pbd_v3((pbd_real)(-0.5 + cx * cell), (pbd_real)0.5, (pbd_real)(-0.5 + cz * cell));
	pbd_collider_id shape;
	const pbd_body_id body = fast_ball(w, mass, start, &shape);
	bool through = false;
	for (int s = 0; s < 40; ++s) {
		pbd_pose pose;
		assert_int_equal(pbd_collider_get_pose(w, shape, &pose), PBD_OK);
		if (mass == 0 && pose.position.y < (pbd_real)-stop)
			assert_int_equal(pbd_body_set_velocity(w, body, pbd_v3(0, 0, 0), pbd_v3(0, 0, 0)), PBD_OK);
		assert_int_equal(pbd_world_step(w), PBD_OK);
		assert_int_equal(pbd_collider_get_pose(w, shape, &pose), PBD_OK);
		through = through || crossings(w, &m, start, pose.position) % 2 != 0;
	}
	assert_true(tp_all_finite(w));
	pbd_mesh_free(&m);
	pbd_world_destroy(w);
	return through;
}

/* A kinematic ball at 20 m/s, 6 times its own size per step at one substep, goes through the
 * sheet's plane within one step and stops 0.17 m past it, dragging the sheet's middle along (5 %
 * strain on the way to the pins): the sheet stays ahead of it at 1, 4 and 10 substeps. */
static void test_thin_sheet_hit_fast(void** state) {
	(void)state;
	const int substeps[3] = {1, 4, 10};
	/* inside a face, and the middle of the cell, on the edge its two faces share: there the
	 * vertices' own contacts see the ball pass beside them and must yield to the faces' */
	const double at[2][2] = {{9.3, 8.6}, {9.5, 8.5}};
	for (int k = 0; k < 3; ++k)
		for (int a = 0; a < 2; ++a) {
			const bool through = ball_through_sheet(substeps[k], 0, 0.15, at[a][0], at[a][1]);
			printf("  %2d substeps: a kinematic ball at 20 m/s into a pinned sheet at (%.1f, %.1f) cells: %s\n",
			       substeps[k], at[a][0], at[a][1], through ? "went through" : "held");
			assert_false(through);
		}
}

/* Dynamic balls at 20 m/s, caught by the sheet, which takes their momentum: 10 g at 4 and 10
 * substeps, 70 g (a rubber ball of that size) at 10. (At one substep of 10 iterations the sheet is
 * too soft to stop even the light ball: it sinks 0.45 m, where the cone from the pins is
 * stretched by a third, and slips through the stretched cell.) */
static void test_thin_sheet_catches_ball(void** state) {
	(void)state;
	const struct {
		int substeps;
		double mass;
	} cases[3] = {{4, 0.01}, {10, 0.01}, {10, 0.07}};
	for (int k = 0; k < 3; ++k) {
		const bool through = ball_through_sheet(cases[k].substeps, cases[k].mass, 0, 9.3, 8.6);
		printf("  %2d substeps: a %.0f g ball at 20 m/s into a pinned sheet: %s\n", cases[k].substeps,
		       1000 * cases[k].mass, through ? "went through" : "caught");
		assert_false(through);
	}
}

int main(void) {
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_link_pulls_into_ball),   cmocka_unit_test(test_pin_dragged_across),
	    cmocka_unit_test(test_cloth_slides_over_ball), cmocka_unit_test(test_cloth_on_turned_box),
	    cmocka_unit_test(test_thin_sheet_hit_fast),    cmocka_unit_test(test_thin_sheet_catches_ball),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
