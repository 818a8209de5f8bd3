/* The viewer's grab of rigid bodies, without a window: a world made through the API is handed
 * to the viewer as a scene, and the picking, the scripted drag (--drag-body, through the same
 * input handlers as the mouse) and the steps run as in `pbd view --frames`, minus the drawing.
 *
 * Picking: a ray through each shape type of a dynamic body (sphere, capsule, box, convex hull,
 * closed mesh) finds that body; a particle in front of a body wins over it, one behind it loses.
 * Grabbing: the body's type and mass come from its state, and the press does not move it;
 * dragged across the view, the body follows the cursor and ends near its target; let go while
 * the cursor moves, it is thrown with the drag's velocity. A body the world says is not dynamic is
 * neither picked nor accepted by the script. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbd/math.h"
#include "test_util.h"
#include "viewer.h"

enum { BODIES = 5, WIDTH = 400, HEIGHT = 300 };

static const pbd_vec3 cube_points[8] = {{-0.4f, -0.4f, -0.4f}, {0.4f, -0.4f, -0.4f}, {-0.4f, 0.4f, -0.4f},
                                        {0.4f, 0.4f, -0.4f},   {-0.4f, -0.4f, 0.4f}, {0.4f, -0.4f, 0.4f},
                                        {-0.4f, 0.4f, 0.4f},   {0.4f, 0.4f, 0.4f}};
/* The cube's faces, counter-clockwise seen from outside. */
static const uint32_t cube_triangles[36] = {0, 2, 1, 1, 2, 3, 4, 5, 6, 5, 7, 6, 0, 1, 4, 1, 5, 4,
                                            2, 6, 3, 3, 6, 7, 0, 4, 2, 2, 4, 6, 1, 3, 5, 3, 7, 5};

/* Body k: the box to drag (0), then a sphere, a capsule, a convex hull and a closed mesh, with
 * the masses 2, 0.5, 1, 1, 1 kg. */
static const float body_x[BODIES] = {0.0f, -2.2f, -1.1f, 2.6f, 3.6f};
static const double body_mass[BODIES] = {2.0, 0.5, 1.0, 1.0, 1.0};
#define BODY_Y 0.4f

/* Two pinned particles on the line of sight through the box's centre: one in front of it, off
 * to the side within its outline, one behind it. */
#define FRONT_PARTICLE 0u
#define BACK_PARTICLE  1u

/* Adds a body carrying one shape to the world and to the scene; its index in the scene's bodies. */
static uint32_t add_body(viewer* v, const pbd_body_def* bd, pbd_collider_def cd) {
	pbd_scene* sc = &v->sc;
	const uint32_t k = sc->body_count, c = sc->collider_count;
	sc->bodies = realloc(sc->bodies, (k + 1) * sizeof *sc->bodies);
	sc->colliders = realloc(sc->colliders, (c + 1) * sizeof *sc->colliders);
	assert_non_null(sc->bodies);
	assert_non_null(sc->colliders);
	pbd_scene_body* sb = &sc->bodies[k];
	memset(sb, 0, sizeof *sb);
	sb->id = pbd_body_create(sc->world, bd);
	assert_true(pbd_body_is_valid(sc->world, sb->id));
	sb->type = bd->type;
	snprintf(sb->name, sizeof sb->name, "body%u", k);
	sb->first_collider = c;
	sb->shape_count = 1;
	cd.body = sb->id;
	sc->colliders[c] = pbd_collider_create(sc->world, &cd);
	assert_true(pbd_collider_is_valid(sc->world, sc->colliders[c]));
	sc->body_count = k + 1;
	sc->collider_count = c + 1;
	return k;
}

static viewer* make_viewer(void) {
	viewer* v = calloc(1, sizeof *v);
	assert_non_null(v);
	pbd_world_def wd = pbd_world_def_default();
	wd.log = test_log_fail; /* the picking and the pull must not be refused */
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&wd, &w), PBD_OK);
	pbd_scene* sc = &v->sc;
	sc->world = w;
	snprintf(sc->name, sizeof sc->name, "bodies");
	for (uint32_t k = 0; k < BODIES; ++k) {
		pbd_body_def bd = pbd_body_def_default();
		bd.type = PBD_BODY_DYNAMIC;
		bd.pose.position = pbd_v3(body_x[k], BODY_Y, 0);
		const double m = body_mass[k], i = m * (0.8 * 0.8 + 0.8 * 0.8) / 12.0;
		bd.mass = (pbd_mass_properties){m, {0, 0, 0}, {i, i, i, 0, 0, 0}};
		pbd_collider_def cd = pbd_collider_def_default();
		switch (k) {
		case 0:
			cd.type = PBD_SHAPE_BOX;
			cd.shape.box.half_extents = pbd_v3(0.4f, 0.4f, 0.4f);
			break;
		case 1:
			cd.type = PBD_SHAPE_SPHERE;
			cd.shape.sphere = (pbd_sphere){pbd_v3(0, 0, 0), 0.4f};
			break;
		case 2:
			cd.type = PBD_SHAPE_CAPSULE;
			cd.shape.capsule = (pbd_capsule){0.2f, 0.3f};
			break;
		case 3:
			cd.type = PBD_SHAPE_CONVEX;
			cd.shape.convex = (pbd_convex){cube_points, 8};
			break;
		default:
			cd.type = PBD_SHAPE_MESH;
			cd.shape.mesh = (pbd_trimesh){cube_points, cube_triangles, 8, 12, true};
			break;
		}
		assert_int_equal(add_body(v, &bd, cd), k);
	}

	v->scripted = true;
	v->time_scale = 1.0;
	v->window_w = v->fb_w = WIDTH;
	v->window_h = v->fb_h = HEIGHT;
	v->orbit = (pbd_render_orbit){{0.6f, 0.6f, 0}, 9.0f, 0.0f, 10.0f, 40.0f};

	/* The particles on the ray through the box's centre, 2 m before it and 2 m past it. */
	const pbd_render_camera cam = view_camera(v);
	const float c[3] = {body_x[0], BODY_Y, 0};
	float dir[3], len = 0;
	for (int k = 0; k < 3; ++k) {
		dir[k] = c[k] - cam.eye[k];
		len += dir[k] * dir[k];
	}
	len = sqrtf(len);
	pbd_vec3 x[2];
	for (int s = 0; s < 2; ++s) {
		const float along = s == 0 ? -2.0f : 2.0f;
		const float p[3] = {c[0] + along * dir[0] / len, c[1] + along * dir[1] / len, c[2] + along * dir[2] / len};
		x[s] = pbd_v3(p[0], p[1], p[2]);
	}
	x[FRONT_PARTICLE].x += 0.25f; /* out of the pick radius around the centre, still in front of the box */
	const pbd_real inv_mass[2] = {0, 0};
	assert_int_equal(pbd_world_add_particles(w, 2, x, NULL, inv_mass, NULL), PBD_OK);
	return v;
}

static void free_viewer(viewer* v) {
	pbd_scene_free(&v->sc);
	free(v);
}

/* Where world point p is drawn, in window coordinates. */
static void window_point(const viewer* v, pbd_vec3 p, double* x, double* y) {
	const pbd_render_camera cam = view_camera(v);
	const float q[3] = {(float)p.x, (float)p.y, (float)p.z};
	float px = 0, py = 0;
	assert_true(pbd_render_camera_project(&cam, v->window_w, v->window_h, q, &px, &py));
	assert_true(px > 0 && py > 0 && px < (float)v->window_w && py < (float)v->window_h);
	*x = (double)px;
	*y = (double)py;
}

static pbd_body_state body_state(const viewer* v, uint32_t k) {
	pbd_body_state st;
	assert_int_equal(pbd_body_get_state(v->sc.world, v->sc.bodies[k].id, &st), PBD_OK);
	return st;
}

static void test_pick_shapes(void** state) {
	(void)state;
	viewer* v = make_viewer();
	for (uint32_t k = 0; k < BODIES; ++k) {
		double x, y;
		window_point(v, body_state(v, k).center, &x, &y);
		view_pick_hit hit;
		assert_true(view_pick(v, x, y, &hit));
		if (hit.kind != VIEW_GRAB_BODY || hit.index != k)
			fail_msg("the press on body %u picked %s %u", k, hit.kind == VIEW_GRAB_BODY ? "body" : "particle",
			         hit.index);
		/* The point picked is on the shape's side facing the camera (+z), near the ray's axis. */
		if (!(hit.point[2] > 0.15f && hit.point[2] < 0.45f))
			fail_msg("body %u picked at z = %g, not on its near side", k, (double)hit.point[2]);
	}
	/* The box's centre has the particle behind it within the pick radius: the box is nearer. The
	 * particle in front of it wins where it is drawn, though the box is under the cursor too. */
	double x, y;
	window_point(v, pbd_world_positions(v->sc.world)[FRONT_PARTICLE], &x, &y);
	view_pick_hit hit;
	assert_true(view_pick(v, x, y, &hit));
	assert_int_equal(hit.kind, VIEW_GRAB_PARTICLE);
	assert_int_equal(hit.index, FRONT_PARTICLE);
	/* Beside every body: nothing. */
	assert_false(view_pick(v, 5.0, 5.0, &hit));
	free_viewer(v);
}

/* The mass is the body's, from its state, whether it is at rest or moving; the press leaves a
 * body at rest exactly at rest. */
static void test_grab_mass(void** state) {
	(void)state;
	viewer* v = make_viewer();
	double x, y;
	window_point(v, body_state(v, 0).center, &x, &y);
	assert_true(view_grab_begin(v, x, y));
	assert_int_equal(v->grab.kind, VIEW_GRAB_BODY);
	assert_int_equal(v->grab.index, 0);
	assert_true(fabs(v->grab.mass - body_mass[0]) < 1e-5 * body_mass[0]);
	const pbd_body_state st = body_state(v, 0);
	assert_true(st.velocity.x == 0 && st.velocity.y == 0 && st.velocity.z == 0);
	assert_true(st.angular_velocity.x == 0 && st.angular_velocity.y == 0 && st.angular_velocity.z == 0);
	view_grab_end(v);
	assert_false(v->grab.active);
	/* Let go before any step: nothing was dragged, nothing is thrown. */
	const pbd_body_state after = body_state(v, 0);
	assert_true(after.velocity.x == 0 && after.velocity.y == 0 && after.velocity.z == 0);

	/* The sphere, falling after a few steps. */
	for (int i = 0; i < 5; ++i) view_step(v);
	window_point(v, body_state(v, 1).center, &x, &y);
	assert_true(view_grab_begin(v, x, y));
	assert_int_equal(v->grab.index, 1);
	assert_true(body_state(v, 1).velocity.y < 0);
	assert_true(fabs(v->grab.mass - body_mass[1]) < 1e-5 * body_mass[1]);
	view_grab_end(v);
	free_viewer(v);
}

/* `--drag-body 0:X,Y,Z`: pressed where the box's centre is drawn, dragged over 240 steps to where
 * the target is drawn. It is held against gravity the whole way and ends near the target, metres
 * from where it started and from where it would have fallen. */
static void test_scripted_drag(void** state) {
	(void)state;
	viewer* v = make_viewer();
	const long frames = 240;
	char* argv[] = {"view", "--frames", "240", "--drag-body", "0:2.5,2.2,0", "-q"};
	bool help = false;
	assert_int_equal(view_parse_options(6, argv, &v->opt, &help), VIEW_OK);
	assert_false(help);
	char why[256];
	if (!view_script_check(v, why, sizeof why)) fail_msg("%s", why);
	const pbd_vec3 start = body_state(v, 0).center;
	const pbd_vec3 target = pbd_v3(2.5f, 2.2f, 0);
	for (long f = 1; f <= frames && !v->quit; ++f) {
		view_script_apply(v, f);
		if (f == 1) {
			assert_true(v->grab.active);
			assert_int_equal(v->grab.kind, VIEW_GRAB_BODY);
		}
		view_step(v);
	}
	assert_false(v->failed);
	assert_true(v->grab.active);
	/* The cursor reached the target's image at the last step; on the drag plane that is the target
	 * itself moved along the view by the press's depth, so compare with the drag target. */
	float held[3];
	assert_true(view_grab_point(v, held));
	const pbd_vec3 t = v->grab.target;
	const double gap = sqrt(((double)held[0] - (double)t.x) * ((double)held[0] - (double)t.x) +
	                        ((double)held[1] - (double)t.y) * ((double)held[1] - (double)t.y) +
	                        ((double)held[2] - (double)t.z) * ((double)held[2] - (double)t.z));
	const pbd_vec3 c = body_state(v, 0).center;
	const double moved = (double)pbd_v3_length(pbd_v3_sub(c, start));
	const double to_target_before = (double)pbd_v3_length(pbd_v3_sub(target, start));
	const double to_target_after = (double)pbd_v3_length(pbd_v3_sub(target, c));
	printf("box: moved %.3f m, %.3f m from the target (%.3f before), the point held %.3f m from the drag target\n",
	       moved, to_target_after, to_target_before, gap);
	if (!(gap < 0.4)) fail_msg("the point held is %g m from the drag target", gap);
	if (!(moved > 2.0)) fail_msg("the box moved only %g m", moved);
	if (!(to_target_after < 0.35 * to_target_before))
		fail_msg("the box is %g m from the target, %g m before the drag", to_target_after, to_target_before);
	/* Still held up: not falling fast. */
	assert_true(fabs((double)body_state(v, 0).velocity.y) < 1.5);
	view_script_apply(v, frames + 1);
	assert_false(v->grab.active);
	free_viewer(v);
}

/* A long rod held at one end, where its effective mass is a quarter of its mass: it swings
 * under the point held as a pendulum, the point stays on its target, and its energy does not
 * grow (the spring, which pulls with the whole mass, would feed a swing it overshoots). */
static void test_rod_held_at_end(void** state) {
	(void)state;
	viewer* v = make_viewer();
	pbd_body_def bd = pbd_body_def_default();
	bd.type = PBD_BODY_DYNAMIC;
	/* Lying along x, 2.4 m long, above the other bodies. */
	bd.pose = (pbd_pose){pbd_v3(0.6f, 2.0f, 0), pbd_quat_axis_angle(pbd_v3(0, 0, 1), 1.5707963f)};
	const double m = 3.0, il = m * 2.4 * 2.4 / 12.0, ia = 0.5 * m * 0.1 * 0.1;
	bd.mass = (pbd_mass_properties){m, {0, 0, 0}, {il, ia, il, 0, 0, 0}};
	bd.gravity_scale = 1;
	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_CAPSULE;
	cd.shape.capsule = (pbd_capsule){1.1f, 0.1f};
	assert_int_equal(add_body(v, &bd, cd), BODIES);

	/* Its right end, pressed and held there. */
	double x, y;
	window_point(v, pbd_v3(1.75f, 2.0f, 0), &x, &y);
	assert_true(view_grab_begin(v, x, y));
	assert_int_equal(v->grab.kind, VIEW_GRAB_BODY);
	assert_int_equal(v->grab.index, BODIES);
	double energy_early = 0;
	for (int i = 0; i < 600; ++i) {
		view_step(v);
		const pbd_body_state st = body_state(v, BODIES);
		if (i == 99) energy_early = st.kinetic_energy + m * 9.81 * (double)st.center.y;
		if (!(fabs((double)st.angular_velocity.z) < 20.0 && pbd_v3_length(st.velocity) < 20.0f))
			fail_msg("step %d: the rod spins at %g rad/s, moves at %g m/s", i, (double)st.angular_velocity.z,
			         (double)pbd_v3_length(st.velocity));
	}
	float held[3];
	assert_true(view_grab_point(v, held));
	const pbd_vec3 t = v->grab.target;
	const pbd_body_state st = body_state(v, BODIES);
	printf("rod: the end held %.3f m below its target, %.3f m aside; centre at %.3f %.3f; spin %.3g rad/s\n",
	       (double)t.y - (double)held[1], fabs((double)t.x - (double)held[0]), (double)st.center.x, (double)st.center.y,
	       (double)st.angular_velocity.z);
	assert_true(fabs((double)held[0] - (double)t.x) < 0.1);
	assert_true((double)t.y - (double)held[1] < 0.3);
	assert_true((double)st.center.y < (double)held[1]);
	const double energy = st.kinetic_energy + m * 9.81 * (double)st.center.y;
	if (!(energy <= energy_early + 0.05 * m))
		fail_msg("the swing gained energy: %g J after 100 steps, %g J after 600", energy_early, energy);
	view_grab_end(v);
	free_viewer(v);
}

/* Let go while the cursor moves: the body leaves with the drag's velocity, the point held moving
 * as the cursor's point on the drag plane did, and flies on with it. The spring alone lets the
 * body trail a cursor that speeds up, and would throw it slower than the drag. */
static void test_throw(void** state) {
	(void)state;
	viewer* v = make_viewer();
	double x, y;
	window_point(v, body_state(v, 0).center, &x, &y);
	assert_true(view_grab_begin(v, x, y));
	/* Held still for a second, then swept right at a constant pace for a third of a second,
	 * about 5 m/s on the drag plane. */
	for (int i = 0; i < 60; ++i) view_step(v);
	const double dt = (double)pbd_world_get_def(v->sc.world).dt;
	pbd_vec3 before = v->grab.target;
	for (int i = 1; i <= 20; ++i) {
		before = v->grab.target;
		view_input_cursor(v, x + 4.0 * i, y);
		view_step(v);
	}
	const pbd_vec3 drag = pbd_v3_scale(pbd_v3_sub(v->grab.target, before), (pbd_real)(1.0 / dt));
	pbd_body_state st = body_state(v, 0);
	const pbd_vec3 p = pbd_pose_apply(st.pose, v->grab.local);
	const pbd_vec3 trailing = pbd_v3_add(st.velocity, pbd_v3_cross(st.angular_velocity, pbd_v3_sub(p, st.center)));
	view_grab_end(v);
	st = body_state(v, 0);
	const pbd_vec3 held = pbd_v3_add(st.velocity, pbd_v3_cross(st.angular_velocity, pbd_v3_sub(p, st.center)));
	const double miss = (double)pbd_v3_length(pbd_v3_sub(held, drag)) / (double)pbd_v3_length(drag);
	printf("throw: drag %.3f %.3f %.3f m/s; the point held %.3f %.3f %.3f m/s before the release, %.3f %.3f %.3f "
	       "after\n",
	       (double)drag.x, (double)drag.y, (double)drag.z, (double)trailing.x, (double)trailing.y, (double)trailing.z,
	       (double)held.x, (double)held.y, (double)held.z);
	if (!((double)drag.x > 4.0)) fail_msg("the drag moved at %g m/s", (double)drag.x);
	if (!(miss < 0.01)) fail_msg("the point held left at %.1f%% off the drag's velocity", 100.0 * miss);
	/* Free now: a tenth of a second later it has flown on at that pace. */
	const pbd_vec3 start = st.center;
	for (int i = 0; i < 6; ++i) view_step(v);
	const double flown = (double)(body_state(v, 0).center.x - start.x);
	if (!(fabs(flown - 6.0 * dt * (double)st.velocity.x) < 0.01 && flown > 0.4))
		fail_msg("after the release it moved %g m along the throw", flown);
	free_viewer(v);
}

/* The script refuses a body the scene does not have, or one the world says is not dynamic. */
static void test_script_check(void** state) {
	(void)state;
	viewer* v = make_viewer();
	char* argv[] = {"view", "--frames", "10", "--drag-body", "7:0,0,0", "-q"};
	bool help = false;
	assert_int_equal(view_parse_options(6, argv, &v->opt, &help), VIEW_OK);
	char why[256];
	assert_false(view_script_check(v, why, sizeof why));
	assert_non_null(strstr(why, "body 7 does not exist"));
	/* A kinematic box above the others. */
	pbd_body_def bd = pbd_body_def_default();
	bd.type = PBD_BODY_KINEMATIC;
	bd.pose.position = pbd_v3(0.6f, 2.0f, 0);
	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_BOX;
	cd.shape.box.half_extents = pbd_v3(0.4f, 0.4f, 0.4f);
	const uint32_t k = add_body(v, &bd, cd);
	v->opt.drags[0].index = k;
	assert_false(view_script_check(v, why, sizeof why));
	assert_non_null(strstr(why, "not dynamic"));
	/* And a pick never grabs it. */
	double x, y;
	window_point(v, body_state(v, k).center, &x, &y);
	view_pick_hit hit;
	assert_false(view_pick(v, x, y, &hit) && hit.kind == VIEW_GRAB_BODY && hit.index == k);
	free_viewer(v);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pick_shapes),   cmocka_unit_test(test_grab_mass),
	    cmocka_unit_test(test_scripted_drag), cmocka_unit_test(test_rod_held_at_end),
	    cmocka_unit_test(test_script_check),  cmocka_unit_test(test_throw),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
