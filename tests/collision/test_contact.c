/* The contact stage (src/collision/contact.c): continuous collision that neither tunnels nor adds
 * energy, Coulomb friction against the analytic sliding law, restitution, kinematic colliders
 * that carry what rests on them, triggers, collision filtering, published contacts and exact
 * snapshot resume with moving colliders. */
#include <stdio.h>
#include <string.h>

#include "test_physics.h"
#include "collision/shape_math.h"
#include "model/world.h"

static pbd_world* bare_world(pbd_vec3 gravity, int substeps) {
	pbd_world_def def = pbd_world_def_default();
	def.gravity = gravity;
	def.substeps = substeps;
	def.iterations = 4;
	return test_world(&def);
}

static uint32_t add_particle(pbd_world* w, pbd_vec3 x, pbd_vec3 v) {
	const pbd_real inv = 1;
	uint32_t first;
	assert_int_equal(pbd_world_add_particles(w, 1, &x, &v, &inv, &first), PBD_OK);
	return first;
}

static pbd_collider_id add_sphere(pbd_world* w, pbd_vec3 c, pbd_real r, pbd_real margin) {
	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_SPHERE;
	cd.shape.sphere.center = c;
	cd.shape.sphere.radius = r;
	cd.margin = margin;
	const pbd_collider_id id = pbd_collider_create(w, &cd);
	assert_true(pbd_collider_is_valid(w, id));
	return id;
}

/* A particle at 50 m/s aimed at a ball, one substep of 1/60 s (0.83 m per step): from 16 start
 * phases along the line, head on and off centre, it must never end inside or beyond the ball,
 * and never leave faster than it came. */
static void test_fast_particle_does_not_tunnel(void** state) {
	(void)state;
	const double radii[2] = {0.5, 0.1};
	for (int ri = 0; ri < 2; ++ri)
		for (int off = 0; off < 2; ++off) {
			int beyond = 0;
			double worst_gain = 0, worst_inside = -1;
			for (int phase = 0; phase < 16; ++phase) {
				pbd_world* w = bare_world(pbd_v3(0, 0, 0), 1);
				const double r = radii[ri];
				add_sphere(w, pbd_v3(0, 0, 0), (pbd_real)r, 0);
				const double y = off ? 0.6 * r : 0;
				const double x0 = -3 - 0.83 * phase / 16.0;
				add_particle(w, pbd_v3((pbd_real)x0, (pbd_real)y, 0), pbd_v3(50, 0, 0));
				for (int s = 0; s < 12; ++s) {
					assert_int_equal(pbd_world_step(w), PBD_OK);
					const pbd_vec3 p = pbd_world_positions(w)[0];
					const double d = tp_len(p) - r;
					if (-d > worst_inside) worst_inside = -d;
					const double gain = tp_len(pbd_world_velocities(w)[0]) / 50 - 1;
					if (gain > worst_gain) worst_gain = gain;
				}
				/* Tunnelled: head on, it ended past the ball; off centre, it flew on undeflected
				 * (a particle that touched the ball leaves it farther from the line of centres). */
				const pbd_vec3 end = pbd_world_positions(w)[0];
				if (off ? fabs((double)end.y) <= y + 1e-6 : end.x > 0) beyond++;
				pbd_world_destroy(w);
			}
			printf("  ball r = %.1f m, %s: %d of 16 phases tunnelled, deepest %.2g m inside, speed gain %.2g\n",
			       radii[ri], off ? "off centre" : "head on  ", beyond, worst_inside, worst_gain);
			assert_int_equal(beyond, 0);
			assert_true(worst_inside <= TEST_TOL(1e-9, 1e-5));
			assert_true(worst_gain <= TEST_TOL(1e-9, 1e-5));
		}
}

/* A particle on a frictional slope: with the friction coefficient above tan(slope) it stays
 * put; below, it slides with Coulomb's acceleration g (sin a - mu_k cos a), checked against
 * s = a t^2 / 2 after 1 s. */
static double slide(double slope_deg, double mu_s, double mu_k, double seconds, double* expected) {
	const double a = slope_deg * 3.14159265358979323846 / 180;
	const double g = 9.81;
	pbd_world* w = bare_world(pbd_v3(0, (pbd_real)-g, 0), 10);
	pbd_collider_def cd = pbd_collider_def_default();
	cd.shape.plane.normal = pbd_v3((pbd_real)sin(a), (pbd_real)cos(a), 0);
	cd.shape.plane.offset = 0;
	cd.static_friction = (pbd_real)mu_s;
	cd.kinetic_friction = (pbd_real)mu_k;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
	add_particle(w, pbd_v3(0, 0, 0), pbd_v3(0, 0, 0));
	const int steps = (int)(seconds * 60 + 0.5);
	for (int s = 0; s < steps; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const double moved = tp_len(pbd_world_positions(w)[0]);
	const double acc = g * (sin(a) - mu_k * cos(a));
	*expected = acc > 0 && tan(a) > mu_s ? 0.5 * acc * seconds * seconds : 0;
	pbd_world_destroy(w);
	return moved;
}

static void test_friction_on_a_slope(void** state) {
	(void)state;
	double expected;
	const double stuck = slide(20, 0.5, 0.4, 5, &expected); /* tan 20 deg = 0.364 < 0.5 */
	printf("  slope 20 deg, mu_s 0.5: moved %.3g m in 5 s\n", stuck);
	assert_true(stuck < 1e-3);
	const double sliding = slide(30, 0.3, 0.2, 1, &expected); /* tan 30 deg = 0.577 > 0.3 */
	printf("  slope 30 deg, mu_k 0.2: slid %.4f m in 1 s, Coulomb %.4f m\n", sliding, expected);
	assert_near(sliding, expected, 0.02 * expected);
	const double free_slide = slide(30, 0, 0, 1, &expected);
	printf("  slope 30 deg, frictionless: slid %.4f m in 1 s, expected %.4f m\n", free_slide, expected);
	assert_near(free_slide, expected, 0.02 * expected);
}

/* A particle dropped from 1 m on a floor with restitution e rises to about e^2 m; with e = 0 it
 * stays; nothing ever rises higher than it fell. */
static double bounce_height(double e) {
	pbd_world* w = bare_world(pbd_v3(0, (pbd_real)-9.81, 0), 20);
	pbd_collider_def cd = pbd_collider_def_default();
	cd.restitution = (pbd_real)e;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
	add_particle(w, pbd_v3(0, 1, 0), pbd_v3(0, 0, 0));
	double top = 0;
	bool touched = false;
	for (int s = 0; s < 120; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const double y = (double)pbd_world_positions(w)[0].y;
		if (pbd_world_velocities(w)[0].y > 0) touched = true; /* on the way up */
		if (touched && y > top) top = y;
	}
	pbd_world_destroy(w);
	return top;
}

static void test_restitution(void** state) {
	(void)state;
	const double full = bounce_height(1), half = bounce_height(0.5), none = bounce_height(0);
	printf("  dropped from 1 m: rises to %.3f m (e = 1), %.3f m (e = 0.5), %.2g m (e = 0)\n", full, half, none);
	assert_true(full <= 1.0 + 1e-3 && full > 0.95);
	assert_near(half, 0.25, 0.02);
	assert_true(none < 1e-3);
}

/* A kinematic floor (a plane carried along x at 1 m/s, i.e. a conveyor belt) with friction
 * brings a particle resting on it up to its own speed; without friction the particle stays. */
static double carried_speed(double mu) {
	pbd_world* w = bare_world(pbd_v3(0, (pbd_real)-9.81, 0), 10);
	pbd_collider_def cd = pbd_collider_def_default();
	cd.pose.position = pbd_v3(0, -1, 0);
	cd.kind = PBD_ACTOR_KINEMATIC;
	cd.velocity = pbd_v3(1, 0, 0);
	cd.static_friction = (pbd_real)mu;
	cd.kinetic_friction = (pbd_real)mu;
	const pbd_collider_id id = pbd_collider_create(w, &cd);
	assert_true(pbd_collider_is_valid(w, id));
	add_particle(w, pbd_v3(0, -1, 0), pbd_v3(0, 0, 0));
	for (int s = 0; s < 60; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	pbd_collider_def now;
	assert_int_equal(pbd_collider_get_def(w, id, &now), PBD_OK);
	assert_near(now.pose.position.x, 1.0, 1e-4); /* 1 s at 1 m/s */
	const double vx = (double)pbd_world_velocities(w)[0].x;
	pbd_world_destroy(w);
	return vx;
}

static void test_kinematic_drags_by_friction(void** state) {
	(void)state;
	const double sticky = carried_speed(1.0), slippery = carried_speed(0);
	printf("  on a floor moving at 1 m/s for 1 s: particle at %.4f m/s with friction 1, %.4f without\n", sticky,
	       slippery);
	assert_near(sticky, 1.0, 1e-3);
	assert_true(fabs(slippery) < 1e-6);
}

/* A particle laid 8 mm deep into a floor's 10 mm margin shell moves out to the shell without
 * leaping off: the push-out is not kept as velocity (it was depth / h, 4.8 m/s at 10 substeps).
 * A kinematic floor rising at 1 m/s still carries what rests on it at its own speed. */
static void test_placed_inside_the_shell(void** state) {
	(void)state;
	for (int substeps = 1; substeps <= 10; substeps += 9) {
		pbd_world* w = bare_world(pbd_v3(0, (pbd_real)-9.81, 0), substeps);
		pbd_collider_def cd = pbd_collider_def_default();
		cd.margin = (pbd_real)0.01;
		assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
		add_particle(w, pbd_v3(0, (pbd_real)0.002, 0), pbd_v3(0, 0, 0));
		double highest = 0, fastest = 0;
		for (int s = 0; s < 30; ++s) {
			assert_int_equal(pbd_world_step(w), PBD_OK);
			const double y = (double)pbd_world_positions(w)[0].y, vy = (double)pbd_world_velocities(w)[0].y;
			if (s == 0) assert_true(y >= 0.01 - 1e-6);
			highest = y > highest ? y : highest;
			fastest = vy > fastest ? vy : fastest;
		}
		printf("  8 mm into a 10 mm shell, %2d substeps: highest %.6f m, fastest upward %.3g m/s\n", substeps, highest,
		       fastest);
		assert_true(highest < 0.01 + 1e-4);
		assert_true(fastest < 1e-2);
		pbd_world_destroy(w);
	}
	pbd_world* w = bare_world(pbd_v3(0, (pbd_real)-9.81, 0), 10);
	pbd_collider_def cd = pbd_collider_def_default();
	cd.margin = (pbd_real)0.01;
	cd.kind = PBD_ACTOR_KINEMATIC;
	cd.velocity = pbd_v3(0, 1, 0);
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
	add_particle(w, pbd_v3(0, (pbd_real)0.01, 0), pbd_v3(0, 0, 0));
	for (int s = 0; s < 30; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const double y = (double)pbd_world_positions(w)[0].y, vy = (double)pbd_world_velocities(w)[0].y;
	printf("  on a floor rising at 1 m/s for 0.5 s: %.4f m above its start, at %.4f m/s\n", y - 0.01, vy);
	assert_near(y, 0.51, 1e-3);
	assert_near(vy, 1.0, 1e-3);
	pbd_world_destroy(w);
}

/* move_to reaches a keyframe pose in one step, rotation included. */
static void test_move_to(void** state) {
	(void)state;
	pbd_world* w = bare_world(pbd_v3(0, 0, 0), 4);
	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_SPHERE;
	cd.shape.sphere.radius = (pbd_real)0.5;
	cd.kind = PBD_ACTOR_KINEMATIC;
	const pbd_collider_id id = pbd_collider_create(w, &cd);
	pbd_pose target = {pbd_v3(1, 2, 3), pbd_quat_axis_angle(pbd_v3(0, 0, 1), (pbd_real)0.5)};
	assert_int_equal(pbd_collider_move_to(w, id, target), PBD_OK);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	pbd_collider_def now;
	assert_int_equal(pbd_collider_get_def(w, id, &now), PBD_OK);
	assert_near(now.pose.position.x, 1, 1e-5);
	assert_near(now.pose.position.z, 3, 1e-5);
	const pbd_vec3 ex = pbd_quat_rotate(now.pose.rotation, pbd_v3(1, 0, 0));
	assert_near(ex.x, cos(0.5), 1e-3);
	assert_near(ex.y, sin(0.5), 1e-3);
	/* A static collider does not move and refuses velocities. */
	char msg[256] = "";
	pbd_world* w2 = test_world_keep(msg);
	cd.kind = PBD_ACTOR_STATIC;
	cd.velocity = pbd_v3(1, 0, 0);
	assert_false(pbd_collider_is_valid(w2, pbd_collider_create(w2, &cd)));
	assert_non_null(strstr(msg, "static collider"));
	cd.velocity = pbd_v3(0, 0, 0);
	const pbd_collider_id sid = pbd_collider_create(w2, &cd);
	assert_int_equal(pbd_collider_move_to(w2, sid, target), PBD_ERR_INVALID_ARGUMENT);
	assert_int_equal(pbd_collider_set_velocity(w2, sid, pbd_v3(1, 0, 0), pbd_v3(0, 0, 0)), PBD_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "static collider"));
	/* A teleport moves the sphere at once, and its bounds with it. */
	const pbd_pose there = {pbd_v3(5, 0, 0), pbd_quat_identity()};
	assert_int_equal(pbd_collider_set_pose(w2, sid, there), PBD_OK);
	pbd_vec3 lo, hi;
	assert_true(pbd_collider_get_bounds(w2, sid, &lo, &hi));
	assert_near(lo.x, 4.5, 1e-6);
	assert_near(hi.x, 5.5, 1e-6);
	const pbd_pose bad = {pbd_v3(0, 0, 0), {0, 0, 0, 0}};
	assert_int_equal(pbd_collider_set_pose(w2, sid, bad), PBD_ERR_DEGENERATE);
	assert_non_null(strstr(msg, "zero quaternion"));
	cd.kinetic_friction = 1;
	cd.static_friction = (pbd_real)0.5;
	assert_false(pbd_collider_is_valid(w2, pbd_collider_create(w2, &cd)));
	assert_non_null(strstr(msg, "kinetic_friction"));
	pbd_world_destroy(w2);
	pbd_world_destroy(w);
}

/* A trigger pushes nothing and reports exactly the particles that came inside, then left. */
static void test_trigger_events(void** state) {
	(void)state;
	pbd_world* w = bare_world(pbd_v3(0, 0, 0), 1);
	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_SPHERE;
	cd.shape.sphere.center = pbd_v3(0, 0, 0);
	cd.shape.sphere.radius = 1;
	cd.trigger = true;
	const pbd_collider_id id = pbd_collider_create(w, &cd);
	/* Particle 0 flies through; particle 1 stays outside; particle 2 starts inside. */
	add_particle(w, pbd_v3(-2, 0, 0), pbd_v3((pbd_real)6.3, 0, 0));
	add_particle(w, pbd_v3(-2, 2, 0), pbd_v3((pbd_real)6.3, 0, 0));
	add_particle(w, pbd_v3(0, 0, (pbd_real)0.5), pbd_v3(0, 0, 0));
	int entered0 = -1, left0 = -1, entered2 = -1, others = 0;
	for (int s = 0; s < 60; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		pbd_trigger_event ev[8];
		const uint32_t n = pbd_world_get_trigger_events(w, ev, 8);
		assert_true(n <= 8);
		for (uint32_t k = 0; k < n; ++k) {
			assert_int_equal(ev[k].collider_index1, id.index1);
			if (ev[k].particle == 0 && ev[k].entered && entered0 < 0)
				entered0 = s;
			else if (ev[k].particle == 0 && !ev[k].entered && left0 < 0)
				left0 = s;
			else if (ev[k].particle == 2 && ev[k].entered && entered2 < 0)
				entered2 = s;
			else
				others++;
		}
		assert_int_equal(pbd_world_get_contacts(w, NULL, 0), 0);
	}
	printf("  trigger: particle 0 entered at step %d, left at step %d; particle 2 reported at step %d\n", entered0,
	       left0, entered2);
	/* x(t) = -2 + 6.3 t enters |x| <= 1 at t = 0.159 s (during step 10, index 9) and leaves at
	 * t = 0.476 s (during step 29, index 28); no step ends near the boundary. */
	assert_int_equal(entered0, 9);
	assert_int_equal(left0, 28);
	assert_int_equal(entered2, 0);
	assert_int_equal(others, 0);
	/* It pushed nothing: particle 0 flew straight on. */
	assert_near(pbd_world_positions(w)[0].y, 0, 1e-6);
	pbd_world_destroy(w);

	/* Objects: a small cloth flying through enters once (its first particle) and leaves once (its
	 * last); a second one passing beside it reports nothing. */
	w = bare_world(pbd_v3(0, 0, 0), 1);
	const pbd_collider_id tid = pbd_collider_create(w, &cd);
	pbd_soft_id ids[2];
	for (int k = 0; k < 2; ++k) {
		pbd_mesh m;
		tp_grid(&m, 4, 4, (pbd_real)0.3, pbd_v3(-3, (pbd_real)(k ? 2 : -0.15), (pbd_real)-0.15), 1, false);
		pbd_soft_def bd = pbd_soft_def_default();
		bd.mesh = &m;
		bd.velocity = pbd_v3((pbd_real)6.3, 0, 0);
		assert_int_equal(pbd_soft_create(w, &bd, &ids[k]), PBD_OK);
		pbd_mesh_free(&m);
	}
	int entered = -1, left = -1, other = 0;
	for (int s = 0; s < 90; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		pbd_trigger_object_event ev[4];
		const uint32_t n = pbd_world_get_trigger_object_events(w, ev, 4);
		for (uint32_t k = 0; k < n; ++k) {
			assert_int_equal(ev[k].collider_index1, tid.index1);
			if (ev[k].object.index1 == ids[0].index1 && ev[k].object.generation == ids[0].generation && ev[k].entered &&
			    entered < 0)
				entered = s;
			else if (ev[k].object.index1 == ids[0].index1 && !ev[k].entered && left < 0)
				left = s;
			else
				other++;
		}
	}
	printf("  trigger: the cloth entered at step %d and left at step %d\n", entered, left);
	/* The cloth lies at y = -0.15, z in [-0.15, 0.15]: its particles nearest the axis (z = 0.05)
	 * are inside the ball for |x| <= 0.987. The front edge x = -2.7 + 6.3 t gets there at
	 * t = 0.272 s (step index 16), the back edge x = -3 + 6.3 t leaves at t = 0.633 s (index 37). */
	assert_int_equal(entered, 16);
	assert_int_equal(left, 37);
	assert_int_equal(other, 0);
	pbd_world_destroy(w);
}

/* A soft object whose collision mask misses the collider's category falls through it. */
static void test_collision_filter(void** state) {
	(void)state;
	for (int masked = 0; masked < 2; ++masked) {
		pbd_world* w = bare_world(pbd_v3(0, (pbd_real)-9.81, 0), 2);
		pbd_collider_def cd = pbd_collider_def_default();
		cd.category = 2;
		assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
		pbd_mesh m;
		tp_grid(&m, 4, 4, 1, pbd_v3(0, (pbd_real)0.5, 0), 1, false);
		pbd_soft_def bd = pbd_soft_def_default();
		bd.mesh = &m;
		bd.collision_mask = masked ? ~2u : 2u;
		assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
		pbd_mesh_free(&m);
		for (int s = 0; s < 60; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
		const double y = (double)pbd_world_positions(w)[0].y;
		if (masked)
			assert_true(y < -1);
		else
			assert_true(y > -1e-6);
		pbd_world_destroy(w);
	}
	/* The same filter on raw particles, through the setter. */
	pbd_world* w = bare_world(pbd_v3(0, (pbd_real)-9.81, 0), 2);
	const pbd_collider_def floor = pbd_collider_def_default();
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &floor)));
	add_particle(w, pbd_v3(0, (pbd_real)0.5, 0), pbd_v3(0, 0, 0));
	add_particle(w, pbd_v3(1, (pbd_real)0.5, 0), pbd_v3(0, 0, 0));
	assert_int_equal(pbd_particles_set_collision_mask(w, 1, 1, 0), PBD_OK);
	for (int s = 0; s < 60; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_true(pbd_world_positions(w)[0].y > (pbd_real)-1e-6);
	assert_true(pbd_world_positions(w)[1].y < (pbd_real)-1);
	pbd_world_destroy(w);
}

/* Published contacts: a cloth resting on a floor reports one contact per particle with the
 * floor's normal, at the floor, and comes to rest without jitter. */
static void test_published_contacts(void** state) {
	(void)state;
	pbd_world* w = bare_world(pbd_v3(0, (pbd_real)-9.81, 0), 4);
	pbd_collider_def cd = pbd_collider_def_default();
	cd.margin = (pbd_real)0.01;
	cd.static_friction = (pbd_real)0.5;
	cd.kinetic_friction = (pbd_real)0.4;
	const pbd_collider_id floor = pbd_collider_create(w, &cd);
	pbd_mesh m;
	tp_grid(&m, 10, 10, 1, pbd_v3((pbd_real)-0.5, (pbd_real)0.2, (pbd_real)-0.5), 2, true);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.mass_mode = PBD_MASS_TOTAL;
	bd.mass = (pbd_real)0.2;
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);
	for (int s = 0; s < 180; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	pbd_contact con[128];
	const uint32_t n = pbd_world_get_contacts(w, con, 128);
	assert_int_equal(n, 100);
	for (uint32_t k = 0; k < n; ++k) {
		assert_int_equal(con[k].collider_index1, floor.index1);
		assert_near(con[k].normal.y, 1, 1e-6);
		assert_near(con[k].point.y, 0, 1e-6);
		assert_near(con[k].distance, 0.01, 1e-4);
		assert_true(k == 0 || con[k].particle > con[k - 1].particle);
	}
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	printf("  cloth at rest on a floor: %u contacts, kinetic energy %.3g J\n", n, st.kinetic_energy);
	assert_int_equal(st.contacts, 100);
	assert_true(st.kinetic_energy < 1e-6);
	pbd_world_destroy(w);
}

/* A world with a moving kinematic collider, friction and a trigger resumes from a snapshot
 * bit for bit, events included. */
static void test_snapshot_with_moving_colliders(void** state) {
	(void)state;
	pbd_world* a = bare_world(pbd_v3(0, (pbd_real)-9.81, 0), 3);
	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_SPHERE;
	cd.shape.sphere.center = pbd_v3(0, 0, 0);
	cd.shape.sphere.radius = (pbd_real)0.3;
	cd.kind = PBD_ACTOR_KINEMATIC;
	cd.pose.position = pbd_v3(0, (pbd_real)-0.2, 0);
	cd.velocity = pbd_v3((pbd_real)0.3, 0, 0);
	cd.angular_velocity = pbd_v3(0, 1, 0);
	cd.static_friction = (pbd_real)0.6;
	cd.kinetic_friction = (pbd_real)0.5;
	assert_true(pbd_collider_is_valid(a, pbd_collider_create(a, &cd)));
	pbd_collider_def tr = pbd_collider_def_default();
	tr.type = PBD_SHAPE_SPHERE;
	tr.shape.sphere.center = pbd_v3(0, (pbd_real)-0.5, 0);
	tr.shape.sphere.radius = (pbd_real)0.4;
	tr.trigger = true;
	assert_true(pbd_collider_is_valid(a, pbd_collider_create(a, &tr)));
	pbd_mesh m;
	tp_grid(&m, 8, 8, 1, pbd_v3((pbd_real)-0.5, (pbd_real)0.3, (pbd_real)-0.5), 2, true);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	assert_int_equal(pbd_soft_create(a, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);
	for (int s = 0; s < 40; ++s) assert_int_equal(pbd_world_step(a), PBD_OK);
	size_t size = 0;
	assert_int_equal(pbd_world_save_memory(a, NULL, 0, &size), PBD_OK);
	void* buf = malloc(size);
	assert_int_equal(pbd_world_save_memory(a, buf, size, &size), PBD_OK);
	pbd_world* b = NULL;
	pbd_error err;
	assert_int_equal(pbd_world_load_memory(buf, size, NULL, &b, &err), PBD_OK);
	free(buf);
	uint32_t events_a = 0, events_b = 0;
	for (int s = 0; s < 40; ++s) {
		assert_int_equal(pbd_world_step(a), PBD_OK);
		assert_int_equal(pbd_world_step(b), PBD_OK);
		events_a += pbd_world_get_trigger_events(a, NULL, 0);
		events_b += pbd_world_get_trigger_events(b, NULL, 0);
		assert_true(pbd_world_hash(a) == pbd_world_hash(b));
	}
	printf("  resumed world: identical for 40 steps, %u trigger events in each\n", events_a);
	assert_int_equal(events_a, events_b);
	pbd_world_destroy(a);
	pbd_world_destroy(b);
}

/* A coarse cloth (cells of 0.25 m) dropped on a floor with a ball of radius 5 cm lying under the
 * middle of a cell: the ball holds the cloth's face up, not only its vertices, so it cannot poke
 * through between them; in the after-solver mode, which only sees vertices, it does (the
 * control). */
static double small_ball_under_cloth(pbd_collision_mode mode) {
	pbd_world_def def = pbd_world_def_default();
	def.collision_mode = mode;
	def.substeps = 4;
	def.iterations = 8;
	pbd_world* w = test_world(&def);
	const pbd_real r = (pbd_real)0.05;
	const pbd_vec3 c = pbd_v3((pbd_real)0.125, r, (pbd_real)0.125);
	add_sphere(w, c, r, 0);
	const pbd_collider_def floor = pbd_collider_def_default();
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &floor)));
	pbd_mesh m;
	tp_grid(&m, 5, 5, 1, pbd_v3((pbd_real)-0.5, (pbd_real)0.2, (pbd_real)-0.5), 1, false);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.mass_mode = PBD_MASS_TOTAL;
	bd.mass = (pbd_real)0.1;
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);
	for (int s = 0; s < 60; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	/* The height of the cloth's surface above the ball's centre, the middle of the cell, which
	 * lies on the cell's diagonal: the mean of its ends (the higher of the two diagonals). */
	const pbd_vec3* x = pbd_world_positions(w);
	const double h = fmax(0.5 * ((double)x[12].y + (double)x[18].y), 0.5 * ((double)x[13].y + (double)x[17].y));
	assert_true(tp_all_finite(w));
	pbd_world_destroy(w);
	return h - (double)(c.y + r);
}

static void test_ball_between_vertices(void** state) {
	(void)state;
	const double faces = small_ball_under_cloth(PBD_COLLISION_IN_SOLVER),
	             vertices = small_ball_under_cloth(PBD_COLLISION_AFTER_SOLVER);
	printf("  ball of 5 cm under a 0.25 m cloth cell: the cell's middle is %.3g m above the ball's top with face "
	       "contacts, %.3g m with vertex contacts only\n",
	       faces, vertices);
	assert_true(faces > -0.005);
	assert_true(vertices < -0.05);
}

/* The broad phase (sort and sweep of colliders against chunks of particles) finds exactly the
 * contacts that every collider against every particle finds, in the same order, on random
 * colliders of every bounded shape at random poses (and a plane) and a random cloud of moving
 * particles. */
static void test_broad_phase_equals_brute_force(void** state) {
	(void)state;
	pbd_contact* found[2] = {NULL, NULL};
	uint32_t count[2] = {0, 0};
	for (int brute = 0; brute < 2; ++brute) {
		pbd_world* w = bare_world(pbd_v3(0, (pbd_real)-9.81, 0), 1);
		uint64_t seed = 5;
		for (int k = 0; k < 60; ++k) {
			pbd_collider_def cd = pbd_collider_def_default();
			const int kind = k % 3;
			cd.type = kind == 0 ? PBD_SHAPE_SPHERE : kind == 1 ? PBD_SHAPE_BOX : PBD_SHAPE_CAPSULE;
			if (kind == 0) {
				cd.shape.sphere.center = pbd_v3(0, 0, 0);
				cd.shape.sphere.radius = (pbd_real)tp_rand_range(&seed, 0.05, 0.4);
			} else if (kind == 1) {
				cd.shape.box.half_extents =
				    pbd_v3((pbd_real)tp_rand_range(&seed, 0.05, 0.5), (pbd_real)tp_rand_range(&seed, 0.05, 0.5),
				           (pbd_real)tp_rand_range(&seed, 0.05, 0.5));
			} else {
				cd.shape.capsule.half_height = (pbd_real)tp_rand_range(&seed, 0, 0.5);
				cd.shape.capsule.radius = (pbd_real)tp_rand_range(&seed, 0.05, 0.3);
			}
			const double px = tp_rand_range(&seed, -3, 3), py = tp_rand_range(&seed, -3, 3),
			             pz = tp_rand_range(&seed, -3, 3);
			cd.pose.position = pbd_v3((pbd_real)px, (pbd_real)py, (pbd_real)pz);
			const double ax = tp_rand_range(&seed, -1, 1), ay = tp_rand_range(&seed, -1, 1),
			             az = tp_rand_range(&seed, -1, 1), aw = tp_rand_range(&seed, -1, 1);
			cd.pose.rotation = (pbd_quat){(pbd_real)ax, (pbd_real)ay, (pbd_real)az, (pbd_real)aw};
			cd.margin = (pbd_real)tp_rand_range(&seed, 0, 0.05);
			assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
		}
		pbd_collider_def floor = pbd_collider_def_default();
		floor.shape.plane.offset = -3;
		assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &floor)));
		enum { N = 3000 };
		static pbd_vec3 x[N], v[N];
		static pbd_real inv[N];
		for (int i = 0; i < N; ++i) {
			const double a = tp_rand_range(&seed, -3.5, 3.5), b = tp_rand_range(&seed, -3.5, 3.5),
			             c = tp_rand_range(&seed, -3.5, 3.5);
			x[i] = pbd_v3((pbd_real)a, (pbd_real)b, (pbd_real)c);
			const double va = tp_rand_range(&seed, -20, 20), vb = tp_rand_range(&seed, -20, 20),
			             vc = tp_rand_range(&seed, -20, 20);
			v[i] = pbd_v3((pbd_real)va, (pbd_real)vb, (pbd_real)vc);
			inv[i] = 1;
		}
		assert_int_equal(pbd_world_add_particles(w, N, x, v, inv, NULL), PBD_OK);
		w->broad.brute_force = brute == 1;
		assert_int_equal(pbd_world_step(w), PBD_OK);
		count[brute] = pbd_world_get_contacts(w, NULL, 0);
		found[brute] = malloc((count[brute] ? count[brute] : 1) * sizeof *found[brute]);
		pbd_world_get_contacts(w, found[brute], count[brute]);
		pbd_world_destroy(w);
	}
	printf("  60 random colliders and a floor, 3000 random moving particles: %u contacts with the sweep, %u against "
	       "every collider\n",
	       count[0], count[1]);
	assert_true(count[0] > 100);
	assert_int_equal(count[0], count[1]);
	assert_memory_equal(found[0], found[1], count[0] * sizeof *found[0]);
	free(found[0]);
	free(found[1]);
}

/* The first complaint: a cloth dropped on a ball lying on a floor slid off the ball and
 * skated away. With friction it stays draped: after 6 s its centre is still over the ball and it
 * is at rest (its wrinkles settle slowly: the fastest particle is at about 0.1 m/s after 4 s and
 * 0.03 m/s after 6 s). */
static void test_cloth_stays_on_ball(void** state) {
	(void)state;
	pbd_world_def def = pbd_world_def_default();
	def.substeps = 10;
	def.iterations = 2;
	def.formulation = PBD_FORMULATION_XPBD;
	def.damping = (pbd_real)0.99; /* the cloth's own wrinkles would ring for long without it */
	pbd_world* w = test_world(&def);
	pbd_collider_def ball = pbd_collider_def_default();
	ball.type = PBD_SHAPE_SPHERE;
	ball.shape.sphere.center = pbd_v3(0, (pbd_real)0.3, 0);
	ball.shape.sphere.radius = (pbd_real)0.3;
	ball.margin = (pbd_real)0.005;
	ball.static_friction = (pbd_real)0.6;
	ball.kinetic_friction = (pbd_real)0.4;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &ball)));
	pbd_collider_def floor = pbd_collider_def_default();
	floor.margin = (pbd_real)0.005;
	floor.static_friction = (pbd_real)0.6;
	floor.kinetic_friction = (pbd_real)0.4;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &floor)));
	pbd_mesh m;
	/* Off centre by 5 cm, so that a frictionless ball would shed it. */
	tp_grid(&m, 24, 24, 1, pbd_v3((pbd_real)-0.45, (pbd_real)0.8, (pbd_real)-0.5), 2, true);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.mass_mode = PBD_MASS_TOTAL;
	bd.mass = (pbd_real)0.2;
	bd.material[PBD_EDGE_BEND].compliance_stretch = (pbd_real)1e-2;
	bd.material[PBD_EDGE_BEND].compliance_compress = (pbd_real)1e-2;
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);
	double worst = 0;
	for (int s = 0; s < 360; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_vec3* x = pbd_world_positions(w);
		for (uint32_t i = 0; i < pbd_world_particle_count(w); ++i) {
			const double in_ball = 0.305 - tp_dist(x[i], ball.shape.sphere.center);
			const double in_floor = 0.005 - (double)x[i].y;
			worst = fmax(worst, fmax(in_ball, in_floor));
		}
	}
	const tp_dvec3 c = tp_center_of_mass(w);
	double vmax = 0;
	for (uint32_t i = 0; i < pbd_world_particle_count(w); ++i) vmax = fmax(vmax, tp_len(pbd_world_velocities(w)[i]));
	printf("  cloth on a ball on a floor, friction 0.6/0.4, 6 s: centre %.3f m from the ball's axis, fastest "
	       "particle %.2g m/s, deepest %.2g m into a margin\n",
	       sqrt(c.x * c.x + c.z * c.z), vmax, worst);
	assert_true(sqrt(c.x * c.x + c.z * c.z) < 0.1);
	assert_true(vmax < 0.1); /* settling, not skating away (0.6 m/s without friction and contact planes) */
	assert_true(worst < TEST_TOL(1e-9, 2e-5));
	pbd_world_destroy(w);
}

/* A cloth of particles dropped at 100 m/s on a 1 mm plate (a box) does not go through. */
static void test_thin_plate(void** state) {
	(void)state;
	pbd_world* w = bare_world(pbd_v3(0, 0, 0), 1);
	pbd_collider_def plate = pbd_collider_def_default();
	plate.type = PBD_SHAPE_BOX;
	plate.shape.box.half_extents = pbd_v3(1, (pbd_real)0.0005, 1);
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &plate)));
	uint64_t seed = 9;
	enum { N = 500 };
	pbd_vec3 x[N], v[N];
	pbd_real inv[N];
	for (int i = 0; i < N; ++i) {
		const double px = tp_rand_range(&seed, -0.9, 0.9), pz = tp_rand_range(&seed, -0.9, 0.9),
		             py = tp_rand_range(&seed, 0.01, 1.7);
		x[i] = pbd_v3((pbd_real)px, (pbd_real)py, (pbd_real)pz);
		v[i] = pbd_v3(0, -100, 0);
		inv[i] = 1;
	}
	assert_int_equal(pbd_world_add_particles(w, N, x, v, inv, NULL), PBD_OK);
	for (int s = 0; s < 10; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	uint32_t through = 0;
	for (int i = 0; i < N; ++i) through += pbd_world_positions(w)[i].y < 0 ? 1u : 0u;
	printf("  500 particles at 100 m/s (1.7 m per step) on a 1 mm plate: %u went through\n", through);
	assert_int_equal(through, 0);
	pbd_world_destroy(w);
}

/* The closest point of a triangle with a zero-length edge (two corners on one point, which a
 * cloth can reach when it crumples): no 0/0 (the FP traps catch one), weights that sum to 1,
 * the right point. Found by fuzz_step. */
static void test_degenerate_triangle_closest_point(void** state) {
	(void)state;
	const pbd_vec3 a = pbd_v3(0, 0, 0), c = pbd_v3(1, 0, 0);
	const pbd_vec3 probes[3] = {pbd_v3(0, 1, 0), pbd_v3((pbd_real)0.5, 1, 0), pbd_v3(2, 0, 0)};
	const double want_x[3] = {0, 0.5, 1};
	for (int k = 0; k < 3; ++k) {
		pbd_real b[3];
		const pbd_vec3 q = pbd_closest_on_triangle(probes[k], a, a, c, b);
		assert_near(b[0] + b[1] + b[2], 1, 1e-6);
		assert_near(q.x, want_x[k], 1e-6);
		assert_near(q.y, 0, 1e-6);
		const pbd_vec3 r = pbd_closest_on_triangle(probes[k], a, a, a, b);
		assert_near(tp_len(r), 0, 0);
	}
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fast_particle_does_not_tunnel),
	    cmocka_unit_test(test_friction_on_a_slope),
	    cmocka_unit_test(test_restitution),
	    cmocka_unit_test(test_kinematic_drags_by_friction),
	    cmocka_unit_test(test_placed_inside_the_shell),
	    cmocka_unit_test(test_move_to),
	    cmocka_unit_test(test_trigger_events),
	    cmocka_unit_test(test_collision_filter),
	    cmocka_unit_test(test_published_contacts),
	    cmocka_unit_test(test_snapshot_with_moving_colliders),
	    cmocka_unit_test(test_ball_between_vertices),
	    cmocka_unit_test(test_broad_phase_equals_brute_force),
	    cmocka_unit_test(test_cloth_stays_on_ball),
	    cmocka_unit_test(test_thin_plate),
	    cmocka_unit_test(test_degenerate_triangle_closest_point),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
