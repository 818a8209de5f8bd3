/* Colliders: cloth dropped on a sphere and on a plane ends every step with every free
 * particle at least `margin` from the surface, in both collision modes and with both solvers;
 * resting contacts are counted; degenerate inputs (a particle at the sphere's centre) give no
 * NaN; plane normals are normalised; collider ids go stale on destroy. */
#include <stdio.h>

#include "test_physics.h"

typedef struct drop_result {
	double worst_penetration; /* max over steps and particles of (margin - distance), <= 0 is clear */
	uint32_t contacts_mid, contacts_end;
	double max_speed_end;
} drop_result;

/* Signed distance of x from a collider's surface, in double, from its def. */
static double surface_distance(const pbd_collider_def* cd, pbd_vec3 x) {
	if (cd->type == PBD_SHAPE_SPHERE) return tp_dist(x, cd->shape.sphere.center) - (double)cd->shape.sphere.radius;
	const pbd_vec3 n = cd->shape.plane.normal;
	const double len = tp_len(n);
	return ((double)n.x * (double)x.x + (double)n.y * (double)x.y + (double)n.z * (double)x.z -
	        (double)cd->shape.plane.offset) /
	       len;
}

/* A 14 x 14 cloth of 1.2 m, free, dropped from 0.5 m above the top of the shape. */
static drop_result drop_cloth(pbd_shape_type shape, pbd_solver solver, pbd_collision_mode mode, int steps) {
	pbd_world_def def = pbd_world_def_default();
	def.solver = solver;
	def.collision_mode = mode;
	def.substeps = 2;
	def.iterations = 8;
	def.damping = (pbd_real)0.98; /* lets the plane case come to rest within the test */
	pbd_world* w = test_world(&def);
	pbd_collider_def cd = pbd_collider_def_default();
	cd.margin = (pbd_real)0.02;
	if (shape == PBD_SHAPE_SPHERE) {
		cd.type = PBD_SHAPE_SPHERE;
		cd.shape.sphere.center = pbd_v3(0, 0, 0);
		cd.shape.sphere.radius = (pbd_real)0.4;
	} else {
		cd.shape.plane.normal = pbd_v3(0, 1, 0);
		cd.shape.plane.offset = (pbd_real)0.4;
	}
	const pbd_collider_id id = pbd_collider_create(w, &cd);
	assert_true(pbd_collider_is_valid(w, id));
	pbd_mesh m;
	tp_grid(&m, 14, 14, (pbd_real)1.2, pbd_v3((pbd_real)-0.6, (pbd_real)0.9, (pbd_real)-0.6), 2, true);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.mass_mode = PBD_MASS_TOTAL;
	bd.mass = (pbd_real)0.3;
	bd.material[PBD_EDGE_BEND].stiffness_stretch = (pbd_real)0.1;
	bd.material[PBD_EDGE_BEND].stiffness_compress = (pbd_real)0.1;
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);

	drop_result r = {-1e30, 0, 0, 0};
	const double margin = (double)cd.margin;
	for (int s = 0; s < steps; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_vec3* x = pbd_world_positions(w);
		for (uint32_t i = 0; i < pbd_world_particle_count(w); ++i) {
			const double pen = margin - surface_distance(&cd, x[i]);
			if (pen > r.worst_penetration) r.worst_penetration = pen;
		}
		if (s == 60) { /* 1 s: 0.3 s after the first touch */
			pbd_stats mid;
			pbd_world_get_stats(w, &mid);
			r.contacts_mid = mid.contacts;
		}
	}
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	r.contacts_end = st.contacts;
	/* Independent contact count: particles within margin + 1e-4 of the surface. */
	uint32_t n = 0;
	const pbd_vec3* x = pbd_world_positions(w);
	const pbd_vec3* v = pbd_world_velocities(w);
	for (uint32_t i = 0; i < pbd_world_particle_count(w); ++i) {
		if (surface_distance(&cd, x[i]) <= margin + 1e-4) n++;
		const double sp = tp_len(v[i]);
		if (sp > r.max_speed_end) r.max_speed_end = sp;
	}
	assert_int_equal(n, st.contacts);
	assert_true(tp_all_finite(w));
	pbd_world_destroy(w);
	return r;
}

static void test_cloth_on_colliders(void** state) {
	(void)state;
	const pbd_shape_type shapes[2] = {PBD_SHAPE_SPHERE, PBD_SHAPE_PLANE};
	const pbd_solver solvers[2] = {PBD_SOLVER_GAUSS_SEIDEL, PBD_SOLVER_JACOBI};
	const pbd_collision_mode modes[2] = {PBD_COLLISION_IN_SOLVER, PBD_COLLISION_AFTER_SOLVER};
	for (int sh = 0; sh < 2; ++sh)
		for (int s = 0; s < 2; ++s)
			for (int md = 0; md < 2; ++md) {
				const drop_result r = drop_cloth(shapes[sh], solvers[s], modes[md], 240);
				printf("  %s %s %s: worst penetration into the margin %.2g m, contacts %u then %u of 196, "
				       "max speed at the end %.3g m/s\n",
				       sh ? "plane " : "sphere", s ? "Jacobi" : "GS    ", md ? "after solver" : "in solver   ",
				       r.worst_penetration, r.contacts_mid, r.contacts_end, r.max_speed_end);
				/* Projection lands on the surface up to float rounding of ~1 m coordinates. */
				assert_true(r.worst_penetration <= TEST_TOL(1e-9, 1e-6));
				/* After 1 s the cloth lies draped on the shape. (A free cloth slides off a
				 * frictionless sphere later, so the sphere's end count may be anything.) */
				assert_true(r.contacts_mid > 0);
				/* On the plane the whole cloth comes to rest flat and touches. */
				if (shapes[sh] == PBD_SHAPE_PLANE) {
					assert_int_equal(r.contacts_end, 196);
					assert_true(r.max_speed_end < 0.05);
				}
			}
}

/* Control: without the collider the cloth falls through where the sphere was. */
static void test_no_collider_falls_through(void** state) {
	(void)state;
	pbd_world* w = test_world(NULL);
	const pbd_vec3 x = {0, 1, 0};
	const pbd_real inv = 1;
	assert_int_equal(pbd_world_add_particles(w, 1, &x, NULL, &inv, NULL), PBD_OK);
	for (int s = 0; s < 60; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_true(pbd_world_positions(w)[0].y < (pbd_real)-2);
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	assert_int_equal(st.contacts, 0);
	pbd_world_destroy(w);
}

/* A particle exactly at the centre of a sphere has no radial direction: it must still come
 * out to radius + margin, finite, in both modes (the FP traps catch a 0/0). */
static void test_particle_at_sphere_center(void** state) {
	(void)state;
	const pbd_collision_mode modes[2] = {PBD_COLLISION_IN_SOLVER, PBD_COLLISION_AFTER_SOLVER};
	for (int md = 0; md < 2; ++md) {
		pbd_world_def def = pbd_world_def_default();
		def.gravity = pbd_v3(0, 0, 0);
		def.collision_mode = modes[md];
		pbd_world* w = test_world(&def);
		pbd_collider_def cd = pbd_collider_def_default();
		cd.type = PBD_SHAPE_SPHERE;
		cd.shape.sphere.center = pbd_v3(1, 2, 3);
		cd.shape.sphere.radius = (pbd_real)0.5;
		cd.margin = (pbd_real)0.25;
		assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
		const pbd_vec3 x = {1, 2, 3};
		const pbd_real inv = 1;
		assert_int_equal(pbd_world_add_particles(w, 1, &x, NULL, &inv, NULL), PBD_OK);
		assert_int_equal(pbd_world_step(w), PBD_OK);
		assert_true(tp_all_finite(w));
		assert_near(tp_dist(pbd_world_positions(w)[0], x), 0.75, TEST_TOL(1e-12, 1e-6));
		assert_int_equal(pbd_world_get_warning(w, PBD_WARN_NONFINITE).count, 0);
		pbd_world_destroy(w);
	}
}

/* The plane keeps dot(n, x) >= offset + margin with n normalised on creation, whatever length
 * the given normal had, and get_def returns the unit normal. A plane given as n = (0, 2, 0),
 * offset 2 is the set dot(n, x) = 2, i.e. y = 1: normalising n must also divide the offset by
 * |n|, or the plane the user described moves to y = 2. */
static void test_plane_normal_normalised(void** state) {
	(void)state;
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, 0, 0);
	pbd_world* w = test_world(&def);
	pbd_collider_def cd = pbd_collider_def_default();
	cd.shape.plane.normal = pbd_v3(0, 3, 4); /* length 5 */
	cd.shape.plane.offset = 0;
	cd.margin = (pbd_real)0.1;
	const pbd_collider_id id = pbd_collider_create(w, &cd);
	assert_true(pbd_collider_is_valid(w, id));
	pbd_collider_def got;
	assert_int_equal(pbd_collider_get_def(w, id, &got), PBD_OK);
	assert_near(tp_len(got.shape.plane.normal), 1.0, TEST_TOL(1e-12, 1e-6));
	assert_near(got.shape.plane.normal.y, 0.6, TEST_TOL(1e-12, 1e-6));
	assert_near(got.shape.plane.normal.z, 0.8, TEST_TOL(1e-12, 1e-6));
	/* A particle 1 m behind the plane goes to exactly margin in front of it, along n. */
	const pbd_vec3 x = {(pbd_real)0.5, (pbd_real)-0.6, (pbd_real)-0.8};
	const pbd_real inv = 1;
	assert_int_equal(pbd_world_add_particles(w, 1, &x, NULL, &inv, NULL), PBD_OK);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_vec3 p = pbd_world_positions(w)[0];
	assert_near(p.x, 0.5, TEST_TOL(1e-12, 1e-6));
	assert_near(p.y, 0.06, TEST_TOL(1e-12, 1e-6));
	assert_near(p.z, 0.08, TEST_TOL(1e-12, 1e-6));
	assert_true(pbd_collider_destroy(w, id) == PBD_OK);
	pbd_world_destroy(w);

	/* Offset with a non-unit normal: the plane 2y = 2 is y = 1. */
	w = test_world(&def);
	cd = pbd_collider_def_default();
	cd.shape.plane.normal = pbd_v3(0, 2, 0);
	cd.shape.plane.offset = 2;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
	const pbd_vec3 below = {0, (pbd_real)0.5, 0};
	assert_int_equal(pbd_world_add_particles(w, 1, &below, NULL, &inv, NULL), PBD_OK);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_near(pbd_world_positions(w)[0].y, 1.0, TEST_TOL(1e-12, 1e-6));
	pbd_world_destroy(w);

	/* Normals whose length overflows or underflows the precision describe planes all the same:
	 * n = (0, 1e30, 1e30) with offset 1e30 is y + z = 1, and so is n scaled to 1e-30. */
	const pbd_real scales[2] = {(pbd_real)1e30, (pbd_real)1e-30};
	for (int k = 0; k < 2; ++k) {
		w = test_world(&def);
		cd = pbd_collider_def_default();
		cd.shape.plane.normal = pbd_v3(0, scales[k], scales[k]);
		cd.shape.plane.offset = scales[k];
		const pbd_collider_id big = pbd_collider_create(w, &cd);
		assert_true(pbd_collider_is_valid(w, big));
		assert_int_equal(pbd_collider_get_def(w, big, &got), PBD_OK);
		assert_near(got.shape.plane.normal.y, sqrt(0.5), TEST_TOL(1e-12, 1e-6));
		assert_near(got.shape.plane.normal.z, sqrt(0.5), TEST_TOL(1e-12, 1e-6));
		assert_near(got.shape.plane.offset, sqrt(0.5), TEST_TOL(1e-12, 1e-6));
		pbd_world_destroy(w);
	}
	/* An offset that no unit normal can carry is refused with its numbers, not made infinite. */
	char last[256] = "";
	pbd_world_def logged = pbd_world_def_default();
	logged.log = test_log_keep;
	logged.log_user = last;
	pbd_world_create(&logged, &w);
	cd = pbd_collider_def_default();
	const bool single = sizeof(pbd_real) == sizeof(float);
	cd.shape.plane.normal = pbd_v3(0, (pbd_real)(single ? 1e-30 : 1e-300), 0);
	cd.shape.plane.offset = (pbd_real)(single ? 1e30 : 1e300);
	assert_false(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
	assert_non_null(strstr(last, "overflows"));
	cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_SPHERE;
	cd.shape.sphere.radius = (pbd_real)(single ? 1e30 : 1e300);
	assert_false(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
	assert_non_null(strstr(last, "sphere radius"));
	pbd_world_destroy(w);
}

/* Generation ids: a destroyed collider's id is stale forever, the slot is reused by the next
 * collider with a new generation, and stale ids are refused with a message. */
static void test_collider_ids(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = test_world_keep(msg);
	pbd_collider_def cd = pbd_collider_def_default();
	const pbd_collider_id a = pbd_collider_create(w, &cd);
	const pbd_collider_id b = pbd_collider_create(w, &cd);
	assert_true(pbd_collider_is_valid(w, a) && pbd_collider_is_valid(w, b));
	assert_true(a.index1 != 0 && b.index1 != 0 && a.index1 != b.index1);
	assert_int_equal(pbd_world_collider_count(w), 2);

	assert_int_equal(pbd_collider_destroy(w, a), PBD_OK);
	assert_false(pbd_collider_is_valid(w, a));
	assert_true(pbd_collider_is_valid(w, b));
	assert_int_equal(pbd_world_collider_count(w), 1);
	assert_string_equal(msg, "");

	/* Destroying or reading through the stale id fails with a message. */
	assert_int_equal(pbd_collider_destroy(w, a), PBD_ERR_INVALID_ARGUMENT);
	assert_true(strlen(msg) > 0);
	msg[0] = 0;
	pbd_collider_def got;
	assert_int_equal(pbd_collider_get_def(w, a, &got), PBD_ERR_INVALID_ARGUMENT);
	assert_true(strlen(msg) > 0);

	/* The next collider reuses the slot with another generation; the old id stays stale. */
	cd.type = PBD_SHAPE_SPHERE;
	cd.shape.sphere.radius = 1;
	const pbd_collider_id c = pbd_collider_create(w, &cd);
	assert_int_equal(c.index1, a.index1);
	assert_true(c.generation != a.generation);
	assert_true(pbd_collider_is_valid(w, c));
	assert_false(pbd_collider_is_valid(w, a));
	assert_int_equal(pbd_collider_get_def(w, c, &got), PBD_OK);
	assert_int_equal(got.type, PBD_SHAPE_SPHERE);

	/* The null id and ids past the end are never valid. */
	const pbd_collider_id null_id = {0, 0}, past = {99, 1};
	assert_false(pbd_collider_is_valid(w, null_id));
	assert_false(pbd_collider_is_valid(w, past));
	assert_false(pbd_collider_is_valid(NULL, c));
	/* A destroyed collider no longer acts: a particle under the destroyed plane falls. */
	assert_int_equal(pbd_collider_destroy(w, b), PBD_OK);
	assert_int_equal(pbd_collider_destroy(w, c), PBD_OK);
	assert_int_equal(pbd_world_collider_count(w), 0);
	const pbd_vec3 x = {0, (pbd_real)-1, 0};
	const pbd_real inv = 1;
	assert_int_equal(pbd_world_add_particles(w, 1, &x, NULL, &inv, NULL), PBD_OK);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_true(pbd_world_positions(w)[0].y < (pbd_real)-1);
	pbd_world_destroy(w);
}

/* In-solver collisions of Jacobi and Gauss-Seidel: a chain hanging over a sphere rests on it
 * with its pinned end untouched and its links at their rest length. */
static void test_rope_over_sphere(void** state) {
	(void)state;
	const pbd_solver solvers[2] = {PBD_SOLVER_GAUSS_SEIDEL, PBD_SOLVER_JACOBI};
	for (int s = 0; s < 2; ++s) {
		pbd_world_def def = pbd_world_def_default();
		def.solver = solvers[s];
		def.substeps = 4;
		def.iterations = 20;
		def.damping = (pbd_real)0.9;
		pbd_world* w = test_world(&def);
		pbd_collider_def cd = pbd_collider_def_default();
		cd.type = PBD_SHAPE_SPHERE;
		cd.shape.sphere.center = pbd_v3(0, 0, 0);
		cd.shape.sphere.radius = (pbd_real)0.5;
		assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
		pbd_rope_def rd = pbd_rope_def_default();
		rd.segments = 20;
		rd.start = pbd_v3(-1, (pbd_real)0.6, 0);
		rd.end = pbd_v3(1, (pbd_real)0.6, 0);
		pbd_mesh m;
		pbd_error err;
		assert_int_equal(pbd_mesh_rope(&rd, &m, &err), PBD_OK);
		pbd_soft_def bd = pbd_soft_def_default();
		bd.mesh = &m;
		const uint32_t pin = 0;
		bd.pinned = &pin;
		bd.pinned_count = 1;
		assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
		pbd_mesh_free(&m);
		for (int k = 0; k < 200; ++k) {
			assert_int_equal(pbd_world_step(w), PBD_OK);
			const pbd_vec3* x = pbd_world_positions(w);
			for (uint32_t i = 0; i < 21; ++i) assert_true(tp_len(x[i]) >= 0.5 - TEST_TOL(1e-9, 1e-6));
		}
		pbd_stats st;
		pbd_world_get_stats(w, &st);
		assert_true(st.contacts > 0);
		assert_true(tp_max_violation(w) < 0.01);
		pbd_world_destroy(w);
	}
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cloth_on_colliders),
	    cmocka_unit_test(test_no_collider_falls_through),
	    cmocka_unit_test(test_particle_at_sphere_center),
	    cmocka_unit_test(test_plane_normal_normalised),
	    cmocka_unit_test(test_collider_ids),
	    cmocka_unit_test(test_rope_over_sphere),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
