/* Substeps that follow the motion (pbd_world_def.max_substeps; docs/collision.md): the count a
 * step picks from the fastest particle with a radius, and a step that picked n substeps is the
 * same, bit for bit, as a step of a world set to n substeps. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test_physics.h"

#define THICKNESS 0.02

/* A 6 x 6 cloth 0.5 m square at height y, THICKNESS thick with self-collision, in a world of
 * `substeps` (at most `most`) and the given gravity; a floor below it when `floor`. */
static pbd_world* cloth_world(int substeps, int most, pbd_vec3 g, bool floor, char* msg) {
	pbd_world_def def = pbd_world_def_default();
	def.gravity = g;
	def.substeps = substeps;
	def.max_substeps = most;
	def.iterations = 3;
	def.formulation = PBD_FORMULATION_XPBD;
	def.damping = (pbd_real)0.98; /* spread over the substeps: the count must be the step's */
	def.log = test_log_keep;
	def.log_user = msg;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	pbd_mesh m;
	tp_grid(&m, 6, 6, (pbd_real)0.5, pbd_v3(0, (pbd_real)0.1, 0), 1, true);
	pbd_soft_def d = pbd_soft_def_default();
	d.mesh = &m;
	d.mass_mode = PBD_MASS_TOTAL;
	d.mass = (pbd_real)0.2;
	d.thickness = (pbd_real)THICKNESS;
	d.self_collision = true;
	for (int k = 0; k < PBD_EDGE_KIND_COUNT; ++k) d.material[k].compliance_stretch = (pbd_real)1e-6;
	pbd_soft_info info;
	assert_int_equal(test_soft_create(w, &d, &info), PBD_OK);
	pbd_mesh_free(&m);
	if (floor) {
		pbd_collider_def c = pbd_collider_def_default();
		c.type = PBD_SHAPE_PLANE;
		c.shape.plane.normal = pbd_v3(0, 1, 0);
		c.shape.plane.offset = 0;
		c.static_friction = (pbd_real)0.5;
		c.kinetic_friction = (pbd_real)0.4;
		assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &c)));
	}
	return w;
}

static void set_all_velocities(pbd_world* w, pbd_vec3 v) {
	const uint32_t n = pbd_world_particle_count(w);
	pbd_vec3* vs = malloc(n * sizeof *vs);
	assert_non_null(vs);
	for (uint32_t i = 0; i < n; ++i) vs[i] = v;
	assert_int_equal(pbd_world_set_velocities(w, 0, n, vs), PBD_OK);
	free(vs);
}

/* Without gravity the step's motion is |v| dt: ceil(|v| dt / thickness) substeps, at least
 * `substeps` and at most max_substeps. The speeds keep clear of whole ratios, so that rounding
 * cannot move the count. */
static void test_count_follows_the_fastest_particle(void** state) {
	(void)state;
	char msg[512] = "";
	pbd_world* w = cloth_world(2, 16, pbd_v3(0, 0, 0), false, msg);
	assert_int_equal(pbd_world_step_substeps(w), 2); /* before the first step */
	const double dt = 1.0 / 60;
	const double speeds[] = {0, 0.5, 2.7, 5.1, 9.3, 18.6, 400};
	for (size_t k = 0; k < sizeof speeds / sizeof *speeds; ++k) {
		set_all_velocities(w, pbd_v3(0, 0, (pbd_real)speeds[k]));
		assert_int_equal(pbd_world_step(w), PBD_OK);
		int want = (int)ceil(speeds[k] * dt / THICKNESS);
		want = want < 2 ? 2 : want > 16 ? 16 : want;
		assert_int_equal(pbd_world_step_substeps(w), want);
	}
	/* Gravity counts as the speed it adds over the step: at rest, g dt^2 = 2.7 mm, under the
	 * thickness; from 1.1 m/s, (1.1 + g dt) dt = 21 mm, over it. */
	pbd_world* g = cloth_world(1, 8, pbd_v3(0, (pbd_real)-9.81, 0), false, msg);
	assert_int_equal(pbd_world_step(g), PBD_OK);
	assert_int_equal(pbd_world_step_substeps(g), 1);
	set_all_velocities(g, pbd_v3(0, (pbd_real)-1.1, 0));
	assert_int_equal(pbd_world_step(g), PBD_OK);
	assert_int_equal(pbd_world_step_substeps(g), 2);
	/* A max_substeps at most substeps turns the rule off. */
	assert_int_equal(pbd_world_set_max_substeps(g, 1), PBD_OK);
	set_all_velocities(g, pbd_v3(0, -50, 0));
	assert_int_equal(pbd_world_step(g), PBD_OK);
	assert_int_equal(pbd_world_step_substeps(g), 1);
	/* One particle fast among slow ones decides. */
	set_all_velocities(w, pbd_v3(0, 0, 0));
	const pbd_vec3 fast = pbd_v3((pbd_real)6.3, 0, 0);
	assert_int_equal(pbd_world_set_velocities(w, 17, 1, &fast), PBD_OK);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_int_equal(pbd_world_step_substeps(w), 6);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
	pbd_world_destroy(g);
}

/* A cloth thrown at a floor and bunching on it: each step of the adaptive world, which picks
 * between 2 and 12 substeps, equals a step of a world set to the count it picked (the XPBD
 * multipliers, the damping's share per substep and the contacts' substep all follow the count). */
static void test_adaptive_step_is_a_fixed_step(void** state) {
	(void)state;
	char msg[512] = "";
	const pbd_vec3 g = pbd_v3(0, (pbd_real)-9.81, 0);
	pbd_world* a = cloth_world(2, 12, g, true, msg);
	pbd_world* b = cloth_world(2, 0, g, true, msg);
	set_all_velocities(a, pbd_v3((pbd_real)0.7, (pbd_real)-4.2, 0));
	set_all_velocities(b, pbd_v3((pbd_real)0.7, (pbd_real)-4.2, 0));
	int seen_low = 99, seen_high = 0;
	for (int step = 0; step < 30; ++step) {
		assert_int_equal(pbd_world_step(a), PBD_OK);
		const int n = pbd_world_step_substeps(a);
		seen_low = n < seen_low ? n : seen_low;
		seen_high = n > seen_high ? n : seen_high;
		assert_int_equal(pbd_world_set_substeps(b, n), PBD_OK);
		assert_int_equal(pbd_world_step(b), PBD_OK);
		assert_int_equal(pbd_world_step_substeps(b), n);
		assert_true(pbd_world_hash(a) == pbd_world_hash(b));
	}
	/* The throw needs more than the least count, the rest on the floor only the least. */
	assert_true(seen_high >= 4);
	assert_int_equal(seen_low, 2);
	assert_string_equal(msg, "");
	pbd_world_destroy(a);
	pbd_world_destroy(b);
}

/* A snapshot keeps max_substeps, and the loaded world goes on picking the same counts. */
static void test_snapshot_keeps_max_substeps(void** state) {
	(void)state;
	char msg[512] = "";
	pbd_world* a = cloth_world(2, 9, pbd_v3(0, (pbd_real)-9.81, 0), true, msg);
	set_all_velocities(a, pbd_v3(0, (pbd_real)-6.5, 0));
	size_t size = 0;
	unsigned char* buf = test_snapshot_save(a, &size);
	pbd_world* b = NULL;
	pbd_error err;
	/* The last word before the 8-byte hash, forged out of range and resealed: refused by name. */
	unsigned char* forged = malloc(size);
	assert_non_null(forged);
	memcpy(forged, buf, size);
	const int32_t bad = -5;
	memcpy(forged + size - 8 - sizeof bad, &bad, sizeof bad);
	test_snapshot_reseal(forged, size);
	assert_int_equal(pbd_world_load_memory(forged, size, NULL, &b, &err), PBD_ERR_OUT_OF_RANGE);
	assert_null(b);
	assert_non_null(strstr(err.message, "max_substeps"));
	free(forged);
	assert_int_equal(pbd_world_load_memory(buf, size, NULL, &b, &err), PBD_OK);
	free(buf);
	assert_int_equal(pbd_world_get_def(b).max_substeps, 9);
	for (int step = 0; step < 5; ++step) {
		assert_int_equal(pbd_world_step(a), PBD_OK);
		assert_int_equal(pbd_world_step(b), PBD_OK);
		assert_int_equal(pbd_world_step_substeps(a), pbd_world_step_substeps(b));
		assert_true(pbd_world_hash(a) == pbd_world_hash(b));
	}
	assert_string_equal(msg, "");
	pbd_world_destroy(a);
	pbd_world_destroy(b);
}

int main(void) {
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_count_follows_the_fastest_particle),
	    cmocka_unit_test(test_adaptive_step_is_a_fixed_step),
	    cmocka_unit_test(test_snapshot_keeps_max_substeps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
