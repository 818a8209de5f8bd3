/* The step's profile (pbd_stats.profile): every phase is >= 0 and together they fit in the
 * step's wall time, each phase that runs in a scene is measured there and each that does not
 * stays exactly zero, the counts are what the step ran, all of it is zero when the profile is
 * off, and timing a step never changes its result (equal world hashes). */
#include <stdio.h>
#include <string.h>

#include "test_physics.h"

typedef struct scene_opts {
	bool profile;
	pbd_solver solver;
	pbd_method method;
	int hierarchy_levels;
	bool self_collision;
	bool sphere;
} scene_opts;

/* A 16 x 16 cloth with bend edges dropped on a sphere, optionally colliding with itself. */
static pbd_world* build(const scene_opts* o) {
	pbd_world_def def = pbd_world_def_default();
	def.profile = o->profile;
	def.solver = o->solver;
	def.method = o->method;
	def.hierarchy_levels = o->hierarchy_levels;
	def.substeps = 4;
	def.iterations = 8;
	pbd_world* w = test_world(&def);
	if (o->sphere) {
		pbd_collider_def cd = pbd_collider_def_default();
		cd.type = PBD_SHAPE_SPHERE;
		cd.shape.sphere.center = pbd_v3(0, 0, 0);
		cd.shape.sphere.radius = (pbd_real)0.3;
		assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
	}
	pbd_mesh m;
	tp_grid(&m, 16, 16, 1, pbd_v3((pbd_real)-0.5, (pbd_real)0.4, (pbd_real)-0.5), 2, true);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.mass_mode = PBD_MASS_TOTAL;
	bd.mass = (pbd_real)0.1;
	bd.thickness = (pbd_real)0.02;
	bd.self_collision = o->self_collision;
	bd.material[PBD_EDGE_BEND].stiffness_stretch = (pbd_real)0.05;
	bd.material[PBD_EDGE_BEND].stiffness_compress = (pbd_real)0.05;
	bd.material[PBD_EDGE_BEND].compliance_stretch = (pbd_real)1e-3;
	bd.material[PBD_EDGE_BEND].compliance_compress = (pbd_real)1e-3;
	pbd_soft_info info;
	assert_int_equal(test_soft_create(w, &bd, &info), PBD_OK);
	pbd_mesh_free(&m);
	return w;
}

static double phase_sum(const pbd_profile* p) {
	double s = p->prepare + p->predict + p->collide + p->hierarchy + p->contacts + p->finish + p->method + p->stats;
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) s += p->family[t];
	return s;
}

static bool all_phases_nonnegative(const pbd_profile* p) {
	bool ok = p->step >= 0 && p->prepare >= 0 && p->predict >= 0 && p->collide >= 0 && p->hierarchy >= 0 &&
	          p->contacts >= 0 && p->finish >= 0 && p->method >= 0 && p->stats >= 0;
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) ok = ok && p->family[t] >= 0;
	return ok;
}

static bool all_zero(const pbd_profile* p) {
	pbd_profile zero;
	memset(&zero, 0, sizeof zero);
	return memcmp(p, &zero, sizeof zero) == 0;
}

/* Steps `steps` times, checks each step's profile for consistency and returns the phases summed. */
static pbd_profile step_and_sum(pbd_world* w, int steps) {
	pbd_profile total;
	memset(&total, 0, sizeof total);
	const pbd_world_def def = pbd_world_get_def(w);
	for (int s = 0; s < steps; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		pbd_stats st;
		pbd_world_get_stats(w, &st);
		const pbd_profile* p = &st.profile;
		assert_true(all_phases_nonnegative(p));
		assert_true(p->step > 0);
		/* The phases are disjoint parts of the step; the clock's reads around each add a little. */
		assert_true(phase_sum(p) <= p->step * 1.0001 + 1e-4);
		assert_int_equal(p->substeps, def.substeps);
		assert_int_equal(p->iterations, def.iterations);
		for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
			assert_int_equal(p->constraints[t], st.family[t].count);
			/* A family without constraints runs no kernel. */
			if (p->constraints[t] == 0) assert_true(p->family[t] == 0);
		}
		total.step += p->step;
		total.prepare += p->prepare;
		total.predict += p->predict;
		total.collide += p->collide;
		total.hierarchy += p->hierarchy;
		total.contacts += p->contacts;
		total.finish += p->finish;
		total.method += p->method;
		total.stats += p->stats;
		for (int t = 0; t < PBD_FAMILY_COUNT; ++t) total.family[t] += p->family[t];
	}
	return total;
}

/* A self-colliding cloth on a sphere: every phase it runs is measured, the others are zero. */
static void test_phases_of_cloth_on_sphere(void** state) {
	(void)state;
	const scene_opts o = {true, PBD_SOLVER_GAUSS_SEIDEL, PBD_METHOD_POSITION_BASED, 0, true, true};
	pbd_world* w = build(&o);
	const pbd_profile t = step_and_sum(w, 30);
	printf("  30 steps of a 16 x 16 cloth on a sphere: step %.3f ms, predict %.3f, collide %.3f, distance %.3f, "
	       "contacts %.3f, finish %.3f, stats %.3f, prepare %.3f\n",
	       t.step, t.predict, t.collide, t.family[PBD_FAMILY_DISTANCE], t.contacts, t.finish, t.stats, t.prepare);
	assert_true(t.predict > 0);
	assert_true(t.collide > 0);
	assert_true(t.family[PBD_FAMILY_DISTANCE] > 0);
	assert_true(t.contacts > 0);
	assert_true(t.finish > 0);
	assert_true(t.stats > 0);
	assert_true(t.prepare > 0);
	/* Not in this scene: no coarse levels, no force-based solve. */
	assert_true(t.hierarchy == 0);
	assert_true(t.method == 0);
	assert_true(phase_sum(&t) <= t.step * 1.0001 + 1e-3);
	/* The solve is most of a step of this scene: what the phases leave out is small. */
	assert_true(phase_sum(&t) >= 0.5 * t.step);
	pbd_world_destroy(w);
}

/* The coarse levels and the Jacobi kernels are timed, and so is a force-based method's solve. */
static void test_phases_of_other_solvers(void** state) {
	(void)state;
	{
		const scene_opts o = {true, PBD_SOLVER_GAUSS_SEIDEL, PBD_METHOD_POSITION_BASED, 2, false, false};
		pbd_world* w = build(&o);
		const pbd_profile t = step_and_sum(w, 5);
		assert_true(t.hierarchy > 0);
		assert_true(t.family[PBD_FAMILY_DISTANCE] > 0);
		pbd_world_destroy(w);
	}
	{
		const scene_opts o = {true, PBD_SOLVER_JACOBI, PBD_METHOD_POSITION_BASED, 0, false, true};
		pbd_world* w = build(&o);
		const pbd_profile t = step_and_sum(w, 5);
		assert_true(t.family[PBD_FAMILY_DISTANCE] > 0);
		assert_true(t.collide > 0);
		assert_true(t.hierarchy == 0 && t.method == 0);
		pbd_world_destroy(w);
	}
	{
		const scene_opts o = {true, PBD_SOLVER_GAUSS_SEIDEL, PBD_METHOD_IMPLICIT_EULER, 0, false, true};
		pbd_world* w = build(&o);
		const pbd_profile t = step_and_sum(w, 5);
		assert_true(t.method > 0);
		assert_true(t.collide > 0);
		assert_true(t.finish > 0);
		/* The force-based methods run no projection kernel. */
		for (int f = 0; f < PBD_FAMILY_COUNT; ++f) assert_true(t.family[f] == 0);
		pbd_world_destroy(w);
	}
}

/* Off (the default), the profile is all zero; turned off after profiled steps, it is zero again. */
static void test_off_is_zero(void** state) {
	(void)state;
	assert_false(pbd_world_def_default().profile);
	const scene_opts o = {false, PBD_SOLVER_GAUSS_SEIDEL, PBD_METHOD_POSITION_BASED, 0, true, true};
	pbd_world* w = build(&o);
	pbd_stats st;
	for (int s = 0; s < 5; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		pbd_world_get_stats(w, &st);
		assert_true(all_zero(&st.profile));
	}
	assert_int_equal(pbd_world_set_profile(w, true), PBD_OK);
	assert_true(pbd_world_get_def(w).profile);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	pbd_world_get_stats(w, &st);
	assert_true(st.profile.step > 0);
	assert_int_equal(pbd_world_set_profile(w, false), PBD_OK);
	pbd_world_get_stats(w, &st);
	assert_true(all_zero(&st.profile));
	assert_int_equal(pbd_world_step(w), PBD_OK);
	pbd_world_get_stats(w, &st);
	assert_true(all_zero(&st.profile));
	assert_int_equal(pbd_world_set_profile(NULL, true), PBD_ERR_INVALID_ARGUMENT);
	pbd_world_destroy(w);
}

/* Timing reads a clock and nothing the simulation computes: the same scene stepped with the
 * profile on and off ends in the same bits, under every solver path the profile touches. */
static void test_profile_keeps_results(void** state) {
	(void)state;
	const scene_opts cases[] = {
	    {false, PBD_SOLVER_GAUSS_SEIDEL, PBD_METHOD_POSITION_BASED, 0, true, true},
	    {false, PBD_SOLVER_JACOBI, PBD_METHOD_POSITION_BASED, 0, true, true},
	    {false, PBD_SOLVER_GAUSS_SEIDEL, PBD_METHOD_POSITION_BASED, 2, false, true},
	    {false, PBD_SOLVER_GAUSS_SEIDEL, PBD_METHOD_IMPLICIT_EULER, 0, false, true},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
		scene_opts on = cases[c];
		on.profile = true;
		pbd_world* a = build(&cases[c]);
		pbd_world* b = build(&on);
		for (int s = 0; s < 40; ++s) {
			assert_int_equal(pbd_world_step(a), PBD_OK);
			assert_int_equal(pbd_world_step(b), PBD_OK);
		}
		const uint64_t ha = pbd_world_hash(a), hb = pbd_world_hash(b);
		assert_true(ha == hb);
		/* The scene moved, so equal hashes compare two trajectories, not two resting states. */
		pbd_world* rest = build(&cases[c]);
		assert_true(pbd_world_hash(rest) != ha);
		pbd_world_destroy(rest);
		pbd_world_destroy(a);
		pbd_world_destroy(b);
	}
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_phases_of_cloth_on_sphere),
	    cmocka_unit_test(test_phases_of_other_solvers),
	    cmocka_unit_test(test_off_is_zero),
	    cmocka_unit_test(test_profile_keeps_results),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
