/* Shapes on bodies and particle-body contact both ways: a shape follows its body and reads back
 * as given; with no gravity a ball thrown into a free cloth keeps the total linear momentum of
 * ball and cloth through the contact, slows and pushes the cloth, whether its vertices or only
 * its faces meet the ball; a box dropped on a cloth
 * pinned at its border comes to rest on it with no particle inside; a shape on a kinematic body
 * carries what rests on it; destroying a body removes its shapes; bad attachments are refused;
 * restitution against a floating body gives the relative speed it should with the momentum of
 * the pair kept, and friction on it stops a sliding particle after Coulomb's distance; a particle
 * placed inside a body's shape moves out without leaping off and without throwing the body, while
 * a particle dropped on a body, or hit by one, keeps its collision. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_physics.h"

/* A cloth of n x n particles spanning `size` in the xz plane at height y, `mass` kg in all. */
static void cloth(pbd_world* w, uint32_t n, pbd_real size, pbd_real y, pbd_real mass, bool pin_border) {
	pbd_mesh m;
	tp_grid(&m, n, n, size, pbd_v3(-size / 2, y, -size / 2), 1, false);
	pbd_soft_def d = pbd_soft_def_default();
	d.mesh = &m;
	d.mass_mode = PBD_MASS_TOTAL;
	d.mass = mass;
	uint32_t pins[4 * 64];
	uint32_t np = 0;
	if (pin_border)
		for (uint32_t i = 0; i < n; ++i)
			for (uint32_t j = 0; j < n; ++j)
				if (i == 0 || j == 0 || i == n - 1 || j == n - 1) pins[np++] = i * n + j;
	d.pinned = pins;
	d.pinned_count = np;
	assert_int_equal(pbd_soft_create(w, &d, NULL), PBD_OK);
	pbd_mesh_free(&m);
}

static pbd_body_id body_with(pbd_world* w, pbd_collider_def shape, double density, pbd_vec3 at, pbd_vec3 v) {
	/* The matter from the shape itself, through a probe collider at the body's origin. */
	const pbd_collider_id probe = pbd_collider_create(w, &shape);
	assert_true(pbd_collider_is_valid(w, probe));
	pbd_body_def bd = pbd_body_def_default();
	bd.type = PBD_BODY_DYNAMIC;
	assert_int_equal(pbd_collider_mass_properties(w, probe, (pbd_real)density, &bd.mass), PBD_OK);
	assert_int_equal(pbd_collider_destroy(w, probe), PBD_OK);
	bd.pose.position = at;
	bd.velocity = v;
	const pbd_body_id b = pbd_body_create(w, &bd);
	if (!pbd_body_is_valid(w, b)) fail_msg("pbd_body_create: %s", pbd_world_last_error(w));
	shape.body = b;
	const pbd_collider_id c = pbd_collider_create(w, &shape);
	if (!pbd_collider_is_valid(w, c)) fail_msg("pbd_collider_create: %s", pbd_world_last_error(w));
	return b;
}

static pbd_body_state state_of(pbd_world* w, pbd_body_id id) {
	pbd_body_state s;
	assert_int_equal(pbd_body_get_state(w, id, &s), PBD_OK);
	return s;
}

/* A ball of `radius` thrown at 3 m/s into a free cloth of n x n particles spanning 1 m. With
 * n = 16 its vertices meet the ball; with n = 4 the ball passes through the middle of a cell,
 * clear of every vertex, and only the faces' contacts (collision/triangle_contact.c) stop it. */
static void ball_into_free_cloth(uint32_t n, double radius) {
	char msg[256] = "";
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, 0, 0), 4, 10);
	cloth(w, n, 1, 0, (pbd_real)0.5, false);
	pbd_collider_def ball = pbd_collider_def_default();
	ball.type = PBD_SHAPE_SPHERE;
	ball.shape.sphere.radius = (pbd_real)radius;
	ball.shape.sphere.center = pbd_v3(0, 0, 0);
	ball.margin = (pbd_real)0.005;
	const pbd_body_id b = body_with(w, ball, 200, pbd_v3(0, (pbd_real)0.4, 0), pbd_v3(0, -3, 0));
	const pbd_body_state s0 = state_of(w, b);
	const tp_dvec3 c0 = tp_momentum(w);
	const double p0[3] = {c0.x + s0.momentum[0], c0.y + s0.momentum[1], c0.z + s0.momentum[2]};
	const double scale = fabs(s0.momentum[1]);
	double worst = 0;
	uint32_t touched = 0;
	for (int s = 0; s < 40; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_body_state st = state_of(w, b);
		const tp_dvec3 c = tp_momentum(w);
		const double p[3] = {c.x + st.momentum[0], c.y + st.momentum[1], c.z + st.momentum[2]};
		for (int k = 0; k < 3; ++k) worst = fmax(worst, fabs(p[k] - p0[k]) / scale);
		touched += pbd_world_get_contacts(w, NULL, 0) > 0;
	}
	const pbd_body_state s1 = state_of(w, b);
	const tp_dvec3 c1 = tp_momentum(w);
	printf("ball of radius %.2f into a free %u x %u cloth: ball vy %.4f -> %.4f m/s, cloth py %.4f kg m/s, worst "
	       "momentum error %.3g (relative), %u steps with vertex contacts\n",
	       radius, n, n, (double)s0.velocity.y, (double)s1.velocity.y, c1.y, worst, touched);
	assert_true(n >= 16 ? touched > 0 : touched == 0);
	assert_true((double)s1.velocity.y > -2.9); /* slowed by the cloth */
	assert_true(c1.y < -0.05);                 /* which it pushed */
	assert_true(worst < 1e-5);
	/* The statistics count the body: their momentum is the sum over the cloth and the ball. */
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	assert_int_equal(st.bodies, 1);
	assert_true(fabs((double)st.momentum.y - (c1.y + s1.momentum[1])) < 1e-6 * scale);
	assert_true(st.kinetic_energy >= s1.kinetic_energy);
	pbd_world_destroy(w);
}

static void test_ball_into_free_cloth(void** state) {
	(void)state;
	ball_into_free_cloth(16, 0.15);
}

/* A ball of radius 0.12 dropped on a 4 x 4 cloth pinned at its border (the cell in the middle is
 * 0.33 m wide, its free vertices 0.24 m from the ball's centre line): no vertex is under the ball,
 * the faces' contacts hold it, and after 5 s it rests on the cloth, pushing it down, with no
 * vertex inside it. Face contacts have no friction, so it may still rock a little sideways in
 * the dip it made. */
static void test_ball_held_by_faces(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-9.81, 0), 8, 10);
	cloth(w, 4, 1, 0, (pbd_real)0.5, true);
	pbd_collider_def ball = pbd_collider_def_default();
	ball.type = PBD_SHAPE_SPHERE;
	ball.shape.sphere.radius = (pbd_real)0.12;
	ball.shape.sphere.center = pbd_v3(0, 0, 0);
	ball.margin = (pbd_real)0.005;
	const pbd_body_id b = body_with(w, ball, 100, pbd_v3(0, (pbd_real)0.3, 0), pbd_v3(0, 0, 0));
	double lowest = 1;
	for (int s = 0; s < 300; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		lowest = fmin(lowest, (double)state_of(w, b).center.y);
	}
	const pbd_body_state s1 = state_of(w, b);
	double sag = 0, inside = 0;
	for (uint32_t i = 0; i < 16; ++i) {
		const pbd_vec3 p = pbd_world_positions(w)[i];
		sag = fmin(sag, (double)p.y);
		inside = fmax(inside, 0.12 - tp_dist(p, s1.center));
	}
	const double aside = hypot((double)s1.center.x, (double)s1.center.z);
	printf("ball held by the faces of a coarse cloth: centre y %.4f m (lowest %.4f), %.3f m off the axis, vertical "
	       "speed %.2e m/s, cloth's free vertices down to %.4f m, deepest vertex inside %.2g m\n",
	       (double)s1.center.y, lowest, aside, (double)s1.velocity.y, sag, inside);
	assert_true((double)s1.center.y > 0 && lowest > 0); /* on the cloth, never through it */
	assert_true(fabs((double)s1.velocity.y) < 0.02);    /* at rest on it */
	assert_true(aside < 0.05);
	assert_true(sag < -0.01); /* pushing it down */
	assert_true(inside <= 0);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* The box's particles: none deeper inside than a tolerance, in the box's frame. */
static double deepest_inside(pbd_world* w, pbd_body_id b, pbd_vec3 half) {
	const pbd_body_state s = state_of(w, b);
	const pbd_vec3* x = pbd_world_positions(w);
	double worst = 0;
	for (uint32_t i = 0, n = pbd_world_particle_count(w); i < n; ++i) {
		const pbd_vec3 l = pbd_pose_apply_inverse(s.pose, x[i]);
		const double in = fmin(fmin((double)half.x - fabs((double)l.x), (double)half.y - fabs((double)l.y)),
		                       (double)half.z - fabs((double)l.z));
		worst = fmax(worst, in);
	}
	return worst;
}

/* A particle well inside the box's footprint (half a grid spacing in from its edges, so that
 * float and double agree on which). */
static bool under_box(pbd_vec3 p, pbd_vec3 half) {
	return fabs((double)p.x) < (double)half.x - 0.05 && fabs((double)p.z) < (double)half.z - 0.05;
}

/* The trampoline of the tests below: a 2 m cloth of 21 x 21 particles, 1 kg, pinned at its
 * border, and a 40 x 20 x 40 cm box body of density 100 held half a metre above it with the
 * given friction. A trampoline rings without loss; a little damping lets it settle within a test. */
static const pbd_vec3 trampoline_half = {(pbd_real)0.2, (pbd_real)0.1, (pbd_real)0.2};

static pbd_body_id trampoline_with_box(pbd_world* w, double friction) {
	assert_int_equal(pbd_world_set_damping(w, (pbd_real)0.97), PBD_OK);
	cloth(w, 21, 2, 0, 1, true);
	pbd_collider_def box = pbd_collider_def_default();
	box.type = PBD_SHAPE_BOX;
	box.shape.box.half_extents = trampoline_half;
	box.margin = (pbd_real)0.005;
	box.static_friction = (pbd_real)(1.25 * friction);
	box.kinetic_friction = (pbd_real)friction;
	return body_with(w, box, 100, pbd_v3(0, (pbd_real)0.5, 0), pbd_v3(0, 0, 0));
}

static void test_box_on_trampoline(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-9.81, 0), 8, 10);
	const pbd_vec3 half = trampoline_half;
	const pbd_body_id b = trampoline_with_box(w, 0.4);
	double worst = 0;
	for (int s = 0; s < 300; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		worst = fmax(worst, deepest_inside(w, b, half));
	}
	const double end = deepest_inside(w, b, half);
	const pbd_body_state s = state_of(w, b);
	const double speed =
	    sqrt((double)(s.velocity.x * s.velocity.x + s.velocity.y * s.velocity.y + s.velocity.z * s.velocity.z));
	printf("box on a trampoline: centre y %.4f m, speed %.3g m/s, deepest particle inside %.3g m at the end (%.3g "
	       "during the fall)\n",
	       (double)s.center.y, speed, end, worst);
	assert_true(speed < 0.05);              /* at rest */
	assert_true((double)s.center.y > -0.5); /* on the cloth, not through it */
	assert_true((double)s.center.y < 0.1);  /* and sagging it */
	assert_true(worst < 0.02);              /* none deep inside during the fall */
	assert_true(end <= 0);                  /* and none inside at rest */

	/* The same cloth with the box's weight spread over the particles under its footprint sags
	 * alike: the box rests where the cloth's tension balances its weight. */
	const uint32_t mid = 10 * 21 + 10;
	const double sag_box = (double)pbd_world_positions(w)[mid].y;
	const double box_mass = 100.0 * 8 * (double)half.x * (double)half.y * (double)half.z; /* density 100 */
	pbd_world* l = tp_world_logged(msg, pbd_v3(0, (pbd_real)-9.81, 0), 8, 10);
	assert_int_equal(pbd_world_set_damping(l, (pbd_real)0.97), PBD_OK);
	cloth(l, 21, 2, 0, 1, true);
	const pbd_vec3* x = pbd_world_positions(l);
	uint32_t under = 0;
	for (uint32_t i = 0; i < 21 * 21; ++i) under += under_box(x[i], half);
	for (uint32_t i = 0; i < 21 * 21; ++i) {
		if (!(under_box(x[i], half))) continue;
		const double m = 1 / (double)pbd_world_inv_masses(l)[i] + box_mass / under;
		assert_int_equal(pbd_particle_set_inv_mass(l, i, (pbd_real)(1 / m)), PBD_OK);
	}
	for (int k = 0; k < 300; ++k) assert_int_equal(pbd_world_step(l), PBD_OK);
	const double sag_load = (double)pbd_world_positions(l)[mid].y;
	printf("sag under the box %.4f m, under its weight on the %u particles beneath it %.4f m\n", sag_box, under,
	       sag_load);
	assert_true(fabs(sag_box - sag_load) < 0.1 * fabs(sag_load));
	pbd_world_destroy(l);
	pbd_world_destroy(w);
}

/* A 0.24 m crate of 5.5 kg dropped onto a 0.2 kg cloth of 2 cm thickness lying on the floor, 12 000
 * times as heavy as one of its particles: it comes to rest on the cloth, its face a particle's
 * radius plus its margin above the particles (15 + 10 + 5 = 30 mm above the floor), and stays
 * still. Shared by inverse masses alone, its pushes on the particles were given back by the
 * floor and it sank through the cloth to its own contact with the floor, 10 mm up. */
static void test_crate_rests_on_cloth_on_floor(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-9.81, 0), 16, 2);
	pbd_collider_def floor = pbd_collider_def_default();
	floor.margin = (pbd_real)0.005;
	floor.static_friction = floor.kinetic_friction = (pbd_real)0.5;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &floor)));
	pbd_mesh m;
	tp_grid(&m, 21, 21, 1, pbd_v3((pbd_real)-0.5, (pbd_real)0.015, (pbd_real)-0.5), 1, false);
	pbd_soft_def d = pbd_soft_def_default();
	d.mesh = &m;
	d.mass_mode = PBD_MASS_TOTAL;
	d.mass = (pbd_real)0.2;
	d.thickness = (pbd_real)0.02;
	assert_int_equal(pbd_soft_create(w, &d, NULL), PBD_OK);
	pbd_mesh_free(&m);
	pbd_collider_def crate = pbd_collider_def_default();
	crate.type = PBD_SHAPE_BOX;
	crate.shape.box.half_extents = pbd_v3((pbd_real)0.12, (pbd_real)0.12, (pbd_real)0.12);
	crate.margin = (pbd_real)0.005;
	crate.static_friction = crate.kinetic_friction = (pbd_real)0.5;
	const pbd_body_id b = body_with(w, crate, 400, pbd_v3(0, (pbd_real)0.25, 0), pbd_v3(0, 0, 0));
	double fastest_late = 0;
	for (int s = 0; s < 180; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		if (s >= 120) fastest_late = fmax(fastest_late, (double)pbd_v3_length(state_of(w, b).velocity));
	}
	const pbd_body_state st = state_of(w, b);
	const double face = (double)st.center.y - 0.12;
	printf("crate on a cloth on the floor: its face %.4f m above the floor (0.030 on the cloth, 0.010 through it), "
	       "up to %.3g m/s over the last second\n",
	       face, fastest_late);
	assert_true(fabs(face - 0.030) < 0.002);
	assert_true(fastest_late < 0.01);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

static void test_follow_and_refusals(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, 0, 0), 1, 10);
	pbd_body_def kd = pbd_body_def_default();
	kd.type = PBD_BODY_KINEMATIC;
	kd.pose.position = pbd_v3(1, 0, 0);
	kd.velocity = pbd_v3(0, 0, 6);
	const pbd_body_id kb = pbd_body_create(w, &kd);
	assert_true(pbd_body_is_valid(w, kb));
	pbd_collider_def sh = pbd_collider_def_default();
	sh.type = PBD_SHAPE_SPHERE;
	sh.shape.sphere.radius = (pbd_real)0.5;
	sh.shape.sphere.center = pbd_v3(0, 0, 0);
	sh.pose.position = pbd_v3(0, 2, 0); /* in the body's frame */
	sh.body = kb;
	const pbd_collider_id c = pbd_collider_create(w, &sh);
	assert_true(pbd_collider_is_valid(w, c));
	for (int s = 0; s < 60; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	pbd_vec3 lo, hi;
	assert_true(pbd_collider_get_bounds(w, c, &lo, &hi));
	printf("shape on a kinematic body after 1 s: centre (%.6g, %.6g, %.6g)\n", (double)(lo.x + hi.x) / 2,
	       (double)(lo.y + hi.y) / 2, (double)(lo.z + hi.z) / 2);
	assert_true(fabs((double)(lo.z + hi.z) / 2 - 6) < 1e-4 && fabs((double)(lo.y + hi.y) / 2 - 2) < 1e-5);
	pbd_pose now;
	assert_int_equal(pbd_collider_get_pose(w, c, &now), PBD_OK); /* where it is: the body's frame, then its own */
	assert_true(fabs((double)now.position.z - 6) < 1e-4 && fabs((double)now.position.y - 2) < 1e-6 &&
	            fabs((double)now.position.x - 1) < 1e-6);
	pbd_collider_def back;
	assert_int_equal(pbd_collider_get_def(w, c, &back), PBD_OK);
	assert_true(back.pose.position.y == 2 && back.kind == PBD_ACTOR_STATIC && back.body.index1 == kb.index1);
	/* A teleport of the body moves its shape at once, start of the substep included. */
	pbd_pose jump = pbd_pose_identity();
	jump.position = pbd_v3(-5, 1, 0);
	assert_int_equal(pbd_body_set_pose(w, kb, jump), PBD_OK);
	assert_int_equal(pbd_collider_get_pose(w, c, &now), PBD_OK);
	assert_true(now.position.x == -5 && now.position.y == 3 && now.position.z == 0);
	assert_int_equal(pbd_collider_set_pose(w, c, sh.pose), PBD_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "move the body"));
	sh.kind = PBD_ACTOR_KINEMATIC;
	assert_false(pbd_collider_is_valid(w, pbd_collider_create(w, &sh)));
	assert_non_null(strstr(msg, "kind must stay static"));
	sh.kind = PBD_ACTOR_STATIC;
	/* A shape and a pose each finite that together put the shape past float's range: refused,
	 * no collider with infinite bounds. */
	pbd_collider_def far = pbd_collider_def_default();
	far.type = PBD_SHAPE_SPHERE;
	far.shape.sphere.center = pbd_v3(0, 0, -TEST_REAL_MAX);
	far.shape.sphere.radius = (pbd_real)0.055;
	far.pose.position = pbd_v3(0, -TEST_REAL_MAX, -TEST_REAL_MAX);
	const uint32_t colliders = pbd_world_collider_count(w);
	assert_false(pbd_collider_is_valid(w, pbd_collider_create(w, &far)));
	assert_non_null(strstr(msg, "past the range of the scalar"));
	assert_int_equal(pbd_world_collider_count(w), colliders);
	assert_int_equal(pbd_body_destroy(w, kb), PBD_OK);
	assert_false(pbd_collider_is_valid(w, c)); /* went with its body */
	assert_false(pbd_collider_is_valid(w, pbd_collider_create(w, &sh)));
	assert_non_null(strstr(msg, "stale"));
	pbd_world_destroy(w);
}

/* A ball in a cloth saved mid-contact resumes bit for bit: its shape rides on it again. */
static void test_snapshot_with_shapes(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-9.81, 0), 8, 10);
	cloth(w, 16, 1, 0, (pbd_real)0.5, true);
	pbd_collider_def ball = pbd_collider_def_default();
	ball.type = PBD_SHAPE_SPHERE;
	ball.shape.sphere.radius = (pbd_real)0.15;
	ball.shape.sphere.center = pbd_v3(0, 0, 0);
	ball.static_friction = (pbd_real)0.3;
	ball.kinetic_friction = (pbd_real)0.2;
	ball.margin = (pbd_real)0.005;
	const pbd_body_id b = body_with(w, ball, 50, pbd_v3(0, (pbd_real)0.3, 0), pbd_v3(0, -2, 0));
	uint32_t touching = 0;
	for (int s = 0; s < 6; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		touching += pbd_world_get_contacts(w, NULL, 0) > 0;
	}
	assert_true(touching > 0); /* saved while the ball presses into the cloth */
	size_t size = 0;
	assert_int_equal(pbd_world_save_memory(w, NULL, 0, &size), PBD_OK);
	unsigned char* buf = test_malloc(size);
	assert_int_equal(pbd_world_save_memory(w, buf, size, &size), PBD_OK);
	pbd_world* back = NULL;
	pbd_error err;
	if (pbd_world_load_memory(buf, size, NULL, &back, &err) != PBD_OK) fail_msg("load: %s", err.message);
	for (int s = 0; s < 20; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		assert_int_equal(pbd_world_step(back), PBD_OK);
	}
	assert_true(pbd_world_hash(w) == pbd_world_hash(back));
	const pbd_body_state a = state_of(w, b), c = state_of(back, b);
	assert_memory_equal(&a, &c, sizeof a);
	pbd_world_destroy(back);
	pbd_world_destroy(w);
	test_free(buf);
}

/* A box of 2 m x 0.2 m x 2 m floating (gravity scale 0) with its top face at y = 0, `mass` kg,
 * its surface's friction and restitution given. */
static pbd_body_id floating_slab(pbd_world* w, double mass, double mu, double e) {
	pbd_collider_def slab = pbd_collider_def_default();
	slab.type = PBD_SHAPE_BOX;
	slab.shape.box.half_extents = pbd_v3(1, (pbd_real)0.1, 1);
	slab.static_friction = (pbd_real)mu;
	slab.kinetic_friction = (pbd_real)mu;
	slab.restitution = (pbd_real)e;
	pbd_body_def bd = pbd_body_def_default();
	bd.type = PBD_BODY_DYNAMIC;
	bd.gravity_scale = 0;
	bd.pose.position = pbd_v3(0, (pbd_real)-0.1, 0);
	bd.mass.mass = mass;
	bd.mass.inertia[0] = bd.mass.inertia[2] = mass * (4 + 0.04) / 12; /* a box 2 x 0.2 x 2 */
	bd.mass.inertia[1] = mass * 8 / 12;
	const pbd_body_id b = pbd_body_create(w, &bd);
	assert_true(pbd_body_is_valid(w, b));
	slab.body = b;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &slab)));
	return b;
}

static uint32_t one_particle(pbd_world* w, pbd_vec3 at, pbd_vec3 v, pbd_real mass) {
	const pbd_real im = 1 / mass;
	uint32_t i = 0;
	assert_int_equal(pbd_world_add_particles(w, 1, &at, &v, &im, &i), PBD_OK);
	return i;
}

/* With no gravity a 1 kg particle meets the top of a 10 kg floating slab head on at 2 m/s: it
 * leaves with restitution times the approach speed relative to the slab, and the pair keeps its
 * momentum (the restitution impulse is shared as the contact's is). */
static void test_body_restitution(void** state) {
	(void)state;
	const double es[3] = {1, 0.5, 0};
	for (int k = 0; k < 3; ++k) {
		char msg[256] = "";
		pbd_world* w = tp_world_logged(msg, pbd_v3(0, 0, 0), 8, 10);
		const pbd_body_id slab = floating_slab(w, 10, 0, es[k]);
		const uint32_t p = one_particle(w, pbd_v3(0, (pbd_real)0.3, 0), pbd_v3(0, -2, 0), 1);
		for (int s = 0; s < 30; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_body_state b = state_of(w, slab);
		const double vp = (double)pbd_world_velocities(w)[p].y, vb = (double)b.velocity.y;
		const double rel = vp - vb, momentum = vp + b.momentum[1];
		printf("  e = %.1f: leaves at %.4f m/s relative to the slab (%.4f expected); momentum %.6f (-2)\n", es[k], rel,
		       2 * es[k], momentum);
		assert_near(rel, 2 * es[k], 0.02 * 2 + 1e-3);
		assert_near(momentum, -2, 1e-4);
		assert_true(fabs((double)b.angular_velocity.x) + fabs((double)b.angular_velocity.z) < 1e-4); /* head on */
		assert_string_equal(msg, "");
		pbd_world_destroy(w);
	}
}

/* A particle slid at 2 m/s on a floating 1000 kg slab with kinetic friction 0.4 stops after
 * v^2 / (2 mu g) = 0.51 m relative to it, Coulomb's law, as on a fixed floor. */
static void test_body_friction(void** state) {
	(void)state;
	char msg[256] = "";
	const double g = 9.81, mu = 0.4, v0 = 2;
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-g, 0), 10, 10);
	const pbd_body_id slab = floating_slab(w, 1000, mu, 0);
	const uint32_t p = one_particle(w, pbd_v3(0, 0, 0), pbd_v3((pbd_real)v0, 0, 0), 1);
	for (int s = 0; s < 90; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_body_state b = state_of(w, slab);
	const double slid = (double)pbd_world_positions(w)[p].x - (double)b.center.x, expect = v0 * v0 / (2 * mu * g);
	/* at rest on the slab: moving with the slab's point beneath it, which the off-centre load
	 * also turns */
	const pbd_vec3 r = pbd_v3_sub(pbd_world_positions(w)[p], b.center);
	const pbd_vec3 under = pbd_v3_add(b.velocity, pbd_v3_cross(b.angular_velocity, r));
	const double rel = tp_dist(pbd_world_velocities(w)[p], under);
	printf("  slid %.4f m on the slab, Coulomb %.4f m; slab pushed to %.3e m/s, particle %.2e m/s off its point\n",
	       slid, expect, (double)b.velocity.x, rel);
	assert_near(slid, expect, 0.03 * expect);
	assert_true(rel < 1e-4);
	assert_true(b.velocity.x > 0); /* and pushed it */
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* A box turned 20 degrees about the vertical, frictionless, dropped on the trampoline: its
 * corners and edges meet the cloth's faces across the diagonals, and it settles all the same
 * (the contacts give it no energy). */
static void test_turned_box_settles(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-9.81, 0), 16, 2);
	const pbd_vec3 half = trampoline_half;
	const pbd_body_id b = trampoline_with_box(w, 0);
	pbd_pose turned = state_of(w, b).pose;
	turned.rotation = pbd_quat_axis_angle(pbd_v3(0, 1, 0), (pbd_real)(20 * TP_PI / 180));
	assert_int_equal(pbd_body_set_pose(w, b, turned), PBD_OK);
	double late = 0;
	for (int s = 0; s < 600; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		if (s >= 400) late = fmax(late, state_of(w, b).kinetic_energy);
	}
	const pbd_body_state s = state_of(w, b);
	printf("turned frictionless box on a trampoline: most kinetic energy after 6.7 s %.3g J, speed %.3g m/s at 10 s, "
	       "deepest particle inside %.3g m\n",
	       late, tp_len(s.velocity), deepest_inside(w, b, half));
	assert_true(late < 0.01);
	assert_true(tp_len(s.velocity) < 0.05);
	assert_true(deepest_inside(w, b, half) <= 0);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* A world like tp_world_logged's, on `threads` threads, with bodies falling asleep after
 * `sleep_time` s of stillness (0: never). */
static pbd_world* world_on(char* msg, pbd_vec3 g, int substeps, int iterations, int threads, double sleep_time) {
	pbd_world_def def = pbd_world_def_default();
	def.sleep_time = (pbd_real)sleep_time;
	def.gravity = g;
	def.substeps = substeps;
	def.iterations = iterations;
	def.threads = threads;
	def.log = test_log_keep;
	def.log_user = msg;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	return w;
}

/* A 20 cm box of density 500 (4 kg) centred at `at`, moving at v, restitution e. */
static pbd_body_id box_20cm(pbd_world* w, pbd_vec3 at, pbd_vec3 v, double e) {
	pbd_collider_def box = pbd_collider_def_default();
	box.type = PBD_SHAPE_BOX;
	box.shape.box.half_extents = pbd_v3((pbd_real)0.1, (pbd_real)0.1, (pbd_real)0.1);
	box.restitution = (pbd_real)e;
	return body_with(w, box, 500, at, v);
}

static double total_momentum_y(pbd_world* w, pbd_body_id b) { return tp_momentum(w).y + state_of(w, b).momentum[1]; }

/* A particle of `mass` placed 5 cm inside a 20 cm box of 4 kg resting on a floor, 3 cm off its
 * axis (its top face is the nearest), at 10 substeps a step. The contact pushes it out by its
 * depth in the first substep, 30 m/s as a speed, which it must not keep (a 10 g particle that kept
 * it would fly to 25 m). It ends on the top face, and the box, whose share of the push the floor
 * held, is not thrown either. The same bits on 1 and 2 threads. */
static void placed_inside_resting_box(double mass) {
	pbd_world* ws[2];
	pbd_body_id box[2];
	uint32_t p = 0;
	char msg[2][256] = {"", ""};
	for (int t = 0; t < 2; ++t) {
		ws[t] = world_on(msg[t], pbd_v3(0, (pbd_real)-9.81, 0), 10, 2, t + 1, 0.5);
		const pbd_collider_def floor = pbd_collider_def_default();
		assert_true(pbd_collider_is_valid(ws[t], pbd_collider_create(ws[t], &floor)));
		box[t] = box_20cm(ws[t], pbd_v3(0, (pbd_real)0.1, 0), pbd_v3(0, 0, 0), 0);
		p = one_particle(ws[t], pbd_v3((pbd_real)0.03, (pbd_real)0.15, 0), pbd_v3(0, 0, 0), (pbd_real)mass);
	}
	double top = 0, fastest_box = 0, lowest_box = 1, highest_box = 0;
	for (int s = 0; s < 60; ++s) {
		for (int t = 0; t < 2; ++t) assert_int_equal(pbd_world_step(ws[t]), PBD_OK);
		assert_memory_equal(pbd_world_positions(ws[0]), pbd_world_positions(ws[1]), sizeof(pbd_vec3));
		assert_memory_equal(pbd_world_velocities(ws[0]), pbd_world_velocities(ws[1]), sizeof(pbd_vec3));
		const pbd_body_state b0 = state_of(ws[0], box[0]), b1 = state_of(ws[1], box[1]);
		assert_memory_equal(&b0, &b1, sizeof b0);
		top = fmax(top, (double)pbd_world_positions(ws[0])[p].y);
		fastest_box = fmax(fastest_box, tp_len(b0.velocity) + 0.1 * tp_len(b0.angular_velocity));
		lowest_box = fmin(lowest_box, (double)b0.center.y);
		highest_box = fmax(highest_box, (double)b0.center.y);
	}
	const double y = (double)pbd_world_positions(ws[0])[p].y, vy = (double)pbd_world_velocities(ws[0])[p].y;
	const pbd_body_state b = state_of(ws[0], box[0]);
	printf("  %g kg: rises to %.4f m (top face at 0.2), ends at %.4f m moving %.3g m/s; box's centre %.4f..%.4f m, "
	       "its fastest point %.3g m/s (1 and 2 threads agree)\n",
	       mass, top, y, vy, lowest_box, highest_box, fastest_box);
	assert_true(fabs(y - (double)b.center.y - 0.1) < 0.003); /* on the top face */
	assert_true(top < 0.2 + 0.02);                           /* never leapt off it */
	assert_true(fabs(vy) < 0.05);
	assert_true(fastest_box < 0.01); /* nor was the box thrown */
	assert_true(lowest_box > 0.1 - 0.003 && highest_box < 0.1 + 0.003);
	for (int t = 0; t < 2; ++t) {
		assert_string_equal(msg[t], "");
		pbd_world_destroy(ws[t]);
	}
}

static void test_placed_inside_resting_box(void** state) {
	(void)state;
	placed_inside_resting_box(0.01);
	placed_inside_resting_box(1); /* a quarter of the push on the box, which the floor holds */
}

/* The same with no gravity and no floor: a floating box and the particle 5 cm inside it (no
 * sleeping, which stops a slow body). The push-out and the speed it takes back are equal and
 * opposite impulses on the two, so the total momentum stays zero, and neither leaves with the
 * push-out's speed. A heavy particle turns the box as it pushes out, and ends its first substep
 * within the contact tolerance of the turned face; that last push, below the tolerance, is kept
 * as against a static collider (at most 1e-4 m / h, 0.06 m/s here). */
static void placed_inside_floating_box(double mass) {
	char msg[256] = "";
	pbd_world* w = world_on(msg, pbd_v3(0, 0, 0), 10, 2, 1, 0);
	const pbd_body_id box = box_20cm(w, pbd_v3(0, (pbd_real)0.1, 0), pbd_v3(0, 0, 0), 0);
	const uint32_t p = one_particle(w, pbd_v3((pbd_real)0.03, (pbd_real)0.15, 0), pbd_v3(0, 0, 0), (pbd_real)mass);
	/* the scale: the particle's momentum had it kept the push-out, 30 m/s */
	const double scale = mass * 0.05 * 600;
	double worst = 0, fastest = 0, fastest_box = 0, first_gap = 0;
	for (int s = 0; s < 60; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		worst = fmax(worst, fabs(total_momentum_y(w, box)) / scale);
		const pbd_body_state b = state_of(w, box);
		fastest = fmax(fastest, tp_len(pbd_world_velocities(w)[p]));
		fastest_box = fmax(fastest_box, tp_len(b.velocity) + 0.1 * tp_len(b.angular_velocity));
		if (s == 0) first_gap = (double)pbd_pose_apply_inverse(b.pose, pbd_world_positions(w)[p]).y - 0.1;
	}
	const pbd_body_state b = state_of(w, box);
	const double gap = (double)pbd_pose_apply_inverse(b.pose, pbd_world_positions(w)[p]).y - 0.1;
	printf("  %g kg: %.2g m off the top face after a step, %.2g m after 60; fastest %.3g m/s, box's fastest point "
	       "%.3g m/s, momentum error %.3g (relative)\n",
	       mass, first_gap, gap, fastest, fastest_box, worst);
	assert_true(fabs(first_gap) < 0.001);
	assert_true(fastest < 0.1 && fastest_box < 0.1);
	assert_true(worst < 1e-5);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

static void test_placed_inside_floating_box(void** state) {
	(void)state;
	placed_inside_floating_box(0.01);
	placed_inside_floating_box(1);
}

/* A 10 g particle dropped 0.3 m onto the box resting on the floor bounces with restitution e:
 * it started outside, so nothing of its collision is taken back, and it rises again to about
 * e^2 times the height it fell. */
static void test_dropped_onto_resting_box(void** state) {
	(void)state;
	const double es[2] = {0.5, 0};
	for (int k = 0; k < 2; ++k) {
		char msg[256] = "";
		pbd_world* w = world_on(msg, pbd_v3(0, (pbd_real)-9.81, 0), 10, 2, 1, 0.5);
		const pbd_collider_def floor = pbd_collider_def_default();
		assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &floor)));
		const pbd_body_id box = box_20cm(w, pbd_v3(0, (pbd_real)0.1, 0), pbd_v3(0, 0, 0), es[k]);
		const uint32_t p = one_particle(w, pbd_v3((pbd_real)0.03, (pbd_real)0.5, 0), pbd_v3(0, 0, 0), (pbd_real)0.01);
		double peak = 0, fastest_box = 0;
		bool down = false;
		for (int s = 0; s < 45; ++s) {
			assert_int_equal(pbd_world_step(w), PBD_OK);
			const double y = (double)pbd_world_positions(w)[p].y;
			down = down || y < 0.21;
			if (down) peak = fmax(peak, y - 0.2);
			const pbd_body_state b = state_of(w, box);
			fastest_box = fmax(fastest_box, tp_len(b.velocity) + 0.1 * tp_len(b.angular_velocity));
		}
		printf("  e = %.1f: dropped 0.3 m onto the resting box, it bounces %.4f m (e^2 x 0.3 = %.4f); box's fastest "
		       "point %.3g m/s\n",
		       es[k], peak, es[k] * es[k] * 0.3, fastest_box);
		assert_true(down);
		assert_near(peak, es[k] * es[k] * 0.3, 0.1 * es[k] * es[k] * 0.3 + 0.002);
		assert_true(fastest_box < 0.02);
		assert_string_equal(msg, "");
		pbd_world_destroy(w);
	}
}

/* A real collision keeps its impulse: with no gravity, the 4 kg box moving up at 2 m/s meets a
 * 10 g particle at rest 5 cm above it. The particle started outside, so nothing is taken back:
 * it leaves at restitution e times the approach speed relative to the box, and the pair keeps
 * its momentum. */
static void test_box_hits_resting_particle(void** state) {
	(void)state;
	const double es[2] = {0.5, 0};
	for (int k = 0; k < 2; ++k) {
		char msg[256] = "";
		pbd_world* w = world_on(msg, pbd_v3(0, 0, 0), 10, 2, 1, 0);
		const pbd_body_id box = box_20cm(w, pbd_v3(0, 0, 0), pbd_v3(0, 2, 0), es[k]);
		const uint32_t p = one_particle(w, pbd_v3(0, (pbd_real)0.15, 0), pbd_v3(0, 0, 0), (pbd_real)0.01);
		const double p0 = total_momentum_y(w, box);
		for (int s = 0; s < 30; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_body_state b = state_of(w, box);
		const double vp = (double)pbd_world_velocities(w)[p].y, rel = vp - (double)b.velocity.y;
		const double momentum = total_momentum_y(w, box);
		printf("  e = %.1f: a box at 2 m/s hits a resting particle: it leaves at %.4f m/s (%.4f relative, %.4f "
		       "expected); momentum %.6f (%.6f)\n",
		       es[k], vp, rel, 2 * es[k], momentum, p0);
		assert_near(rel, 2 * es[k], 0.02 * 2 + 1e-3);
		assert_true(vp > 1.9); /* pushed away, not left inside */
		assert_near(momentum, p0, 1e-5 * p0);
		assert_string_equal(msg, "");
		pbd_world_destroy(w);
	}
}

int main(void) {
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ball_into_free_cloth),
	    cmocka_unit_test(test_ball_held_by_faces),
	    cmocka_unit_test(test_box_on_trampoline),
	    cmocka_unit_test(test_crate_rests_on_cloth_on_floor),
	    cmocka_unit_test(test_turned_box_settles),
	    cmocka_unit_test(test_follow_and_refusals),
	    cmocka_unit_test(test_snapshot_with_shapes),
	    cmocka_unit_test(test_body_restitution),
	    cmocka_unit_test(test_body_friction),
	    cmocka_unit_test(test_placed_inside_resting_box),
	    cmocka_unit_test(test_placed_inside_floating_box),
	    cmocka_unit_test(test_dropped_onto_resting_box),
	    cmocka_unit_test(test_box_hits_resting_particle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
