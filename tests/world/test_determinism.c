/* Determinism: the same inputs give the same bits. Two worlds built the same way and stepped
 * the same number of times have equal pbd_world_hash after every step, whether stepped one
 * after the other or interleaved (no hidden shared state), and a world destroyed and built
 * again replays the same trajectory. The hash itself must see a one-ulp change. */
#include <stdio.h>

#include "test_physics.h"

typedef struct setup {
	pbd_solver solver;
	pbd_formulation formulation;
	pbd_collision_mode mode;
} setup;

/* A cloth with bend edges and two pins falling onto a sphere and a tilted plane, plus a rope
 * added after the cloth (so the constraint schedule sees two bodies). */
static pbd_world* build(const setup* s) {
	pbd_world_def def = pbd_world_def_default();
	def.solver = s->solver;
	def.formulation = s->formulation;
	def.collision_mode = s->mode;
	def.substeps = 3;
	def.iterations = 6;
	def.damping = (pbd_real)0.995;
	def.jacobi_alpha = s->solver == PBD_SOLVER_JACOBI ? (pbd_real)0.1 : 0;
	def.jacobi_omega = s->solver == PBD_SOLVER_JACOBI ? (pbd_real)1.2 : 1;
	pbd_world* w = test_world(&def);
	pbd_mesh m;
	tp_grid(&m, 16, 12, (pbd_real)1.5, pbd_v3((pbd_real)-0.75, (pbd_real)1.2, (pbd_real)-0.6), 2, true);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.mass_mode = PBD_MASS_TOTAL;
	bd.mass = (pbd_real)0.4;
	bd.material[PBD_EDGE_BEND].stiffness_stretch = (pbd_real)0.3;
	bd.material[PBD_EDGE_BEND].stiffness_compress = (pbd_real)0.3;
	bd.material[PBD_EDGE_BEND].compliance_stretch = (pbd_real)1e-3;
	bd.material[PBD_EDGE_BEND].compliance_compress = (pbd_real)1e-3;
	const uint32_t pins[2] = {0, 15};
	bd.pinned = pins;
	bd.pinned_count = 2;
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);

	pbd_rope_def rd = pbd_rope_def_default();
	rd.segments = 15;
	rd.start = pbd_v3((pbd_real)0.9, (pbd_real)1.5, 0);
	rd.end = pbd_v3((pbd_real)0.9, (pbd_real)0.5, (pbd_real)0.3);
	rd.bend = true;
	pbd_error err;
	assert_int_equal(pbd_mesh_rope(&rd, &m, &err), PBD_OK);
	bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.velocity = pbd_v3((pbd_real)-0.5, 0, (pbd_real)0.2);
	const uint32_t pin = 0;
	bd.pinned = &pin;
	bd.pinned_count = 1;
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);

	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_SPHERE;
	cd.shape.sphere.center = pbd_v3((pbd_real)0.1, (pbd_real)0.4, 0);
	cd.shape.sphere.radius = (pbd_real)0.35;
	cd.margin = (pbd_real)0.01;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
	cd = pbd_collider_def_default();
	cd.shape.plane.normal = pbd_v3((pbd_real)0.1, 1, (pbd_real)-0.05);
	cd.shape.plane.offset = 0;
	cd.margin = (pbd_real)0.005;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
	return w;
}

static const setup setups[] = {
    {PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_PBD, PBD_COLLISION_IN_SOLVER},
    {PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_XPBD, PBD_COLLISION_AFTER_SOLVER},
    {PBD_SOLVER_JACOBI, PBD_FORMULATION_PBD, PBD_COLLISION_AFTER_SOLVER},
    {PBD_SOLVER_JACOBI, PBD_FORMULATION_XPBD, PBD_COLLISION_IN_SOLVER},
};

enum { STEPS = 200 };

static void test_two_worlds_same_hash(void** state) {
	(void)state;
	for (size_t k = 0; k < sizeof setups / sizeof setups[0]; ++k) {
		/* Interleaved: a and b step alternately. */
		pbd_world* a = build(&setups[k]);
		pbd_world* b = build(&setups[k]);
		assert_true(pbd_world_hash(a) == pbd_world_hash(b));
		uint64_t hashes[STEPS];
		uint64_t prev = pbd_world_hash(a);
		for (int s = 0; s < STEPS; ++s) {
			assert_int_equal(pbd_world_step(a), PBD_OK);
			assert_int_equal(pbd_world_step(b), PBD_OK);
			hashes[s] = pbd_world_hash(a);
			assert_true(hashes[s] == pbd_world_hash(b));
			/* The state changes every step (the cloth falls), so equal hashes are not trivial. */
			assert_true(hashes[s] != prev);
			prev = hashes[s];
		}
		pbd_stats st;
		pbd_world_get_stats(a, &st);
		assert_true(st.contacts > 0); /* the colliders took part */
		printf("  setup %zu: hash after %d steps %016llx, %u contacts\n", k, STEPS,
		       (unsigned long long)hashes[STEPS - 1], st.contacts);
		pbd_world_destroy(a);
		pbd_world_destroy(b);

		/* Re-created: a fresh world replays the recorded hashes, stepped alone. */
		pbd_world* c = build(&setups[k]);
		for (int s = 0; s < STEPS; ++s) {
			assert_int_equal(pbd_world_step(c), PBD_OK);
			assert_true(pbd_world_hash(c) == hashes[s]);
		}
		pbd_world_destroy(c);
	}
}

/* The hash sees a one-ulp change of one coordinate, and of one velocity. */
static void test_hash_sees_one_ulp(void** state) {
	(void)state;
	pbd_world* a = build(&setups[0]);
	const uint64_t h0 = pbd_world_hash(a);
	pbd_vec3 p;
	assert_int_equal(pbd_world_get_positions(a, 37, 1, &p), PBD_OK);
	const pbd_vec3 orig = p;
#ifdef PBD_DOUBLE
	p.y = nextafter(orig.y, 10.0);
#else
	p.y = nextafterf(orig.y, 10.0f);
#endif
	assert_int_equal(pbd_world_set_positions(a, 37, 1, &p), PBD_OK);
	assert_true(pbd_world_hash(a) != h0);
	assert_int_equal(pbd_world_set_positions(a, 37, 1, &orig), PBD_OK);
	assert_true(pbd_world_hash(a) == h0);
	pbd_vec3 v = {0, 0, (pbd_real)1e-30};
	assert_int_equal(pbd_world_set_velocities(a, 40, 1, &v), PBD_OK);
	assert_true(pbd_world_hash(a) != h0);
	pbd_world_destroy(a);
}

/* Changing a setting and changing it back between steps leaves no trace: the cached solver
 * parameters (k' per iteration count, constraint order) are rebuilt to the same bits. */
static void test_settings_round_trip(void** state) {
	(void)state;
	pbd_world* a = build(&setups[1]);
	pbd_world* b = build(&setups[1]);
	for (int s = 0; s < 20; ++s) {
		assert_int_equal(pbd_world_step(a), PBD_OK);
		assert_int_equal(pbd_world_step(b), PBD_OK);
	}
	/* b: switch to PBD with 3 iterations and back, without stepping in between. */
	assert_int_equal(pbd_world_set_formulation(b, PBD_FORMULATION_PBD), PBD_OK);
	assert_int_equal(pbd_world_set_iterations(b, 3), PBD_OK);
	assert_int_equal(pbd_world_set_iterations(b, 6), PBD_OK);
	assert_int_equal(pbd_world_set_formulation(b, PBD_FORMULATION_XPBD), PBD_OK);
	for (int s = 0; s < 20; ++s) {
		assert_int_equal(pbd_world_step(a), PBD_OK);
		assert_int_equal(pbd_world_step(b), PBD_OK);
		assert_true(pbd_world_hash(a) == pbd_world_hash(b));
	}
	pbd_world_destroy(a);
	pbd_world_destroy(b);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_two_worlds_same_hash),
	    cmocka_unit_test(test_hash_sees_one_ulp),
	    cmocka_unit_test(test_settings_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
