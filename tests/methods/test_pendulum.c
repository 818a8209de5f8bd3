/* Pendulums: a small-amplitude pendulum keeps the analytic period 2 pi sqrt(L/g) with enough
 * substeps, a hard-constrained pendulum never gains energy, and the energies the library
 * reports are the hand-computed ones. */
#include <stdio.h>

#include "test_physics.h"

/* A particle of mass m on a hard link of length L to a pinned particle at the origin, released
 * from rest at angle theta0 (radians) from the downward vertical, in the xy plane. */
static pbd_world* pendulum(pbd_solver solver, pbd_formulation f, int substeps, int iterations, double L, double m,
                           double theta0, double g) {
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, (pbd_real)-g, 0);
	def.solver = solver;
	def.formulation = f;
	def.substeps = substeps;
	def.iterations = iterations;
	def.dt = (pbd_real)(1.0 / 60.0);
	pbd_world* w = test_world(&def);
	const pbd_vec3 x[2] = {{0, 0, 0}, {(pbd_real)(L * sin(theta0)), (pbd_real)(-L * cos(theta0)), 0}};
	const pbd_real inv[2] = {0, (pbd_real)(1.0 / m)};
	assert_int_equal(pbd_world_add_particles(w, 2, x, NULL, inv, NULL), PBD_OK);
	pbd_distance_def dd = pbd_distance_def_default();
	dd.a = 0;
	dd.b = 1;
	dd.rest = (pbd_real)L;
	assert_int_equal(pbd_world_add_distances(w, 1, &dd, NULL), PBD_OK);
	return w;
}

static void test_small_amplitude_period(void** state) {
	(void)state;
	const double L = 1.0, g = 9.81, theta0 = 2.0 * TP_PI / 180.0;
	/* Finite-amplitude correction (1 + theta0^2 / 16) is 8e-5 at 2 degrees: negligible at 1 %. */
	const double T = 2 * TP_PI * sqrt(L / g);
	const pbd_formulation forms[2] = {PBD_FORMULATION_PBD, PBD_FORMULATION_XPBD};
	const pbd_solver solvers[2] = {PBD_SOLVER_GAUSS_SEIDEL, PBD_SOLVER_JACOBI};
	const int subs[2] = {20, 40};
	for (int f = 0; f < 2; ++f)
		for (int s = 0; s < 2; ++s)
			for (int k = 0; k < 2; ++k) {
				pbd_world* w = pendulum(solvers[s], forms[f], subs[k], 1, L, 1.0, theta0, g);
				const double P = tp_period(w, 0, T, 6, 6);
				const double err = fabs(P - T) / T;
				printf("  pendulum %s %s substeps %d: period %.5f s, analytic %.5f s, error %.3f %%\n",
				       f ? "XPBD" : "PBD ", s ? "Jacobi" : "GS", subs[k], P, T, 100 * err);
				assert_true(err < 0.01);
				/* The link held: length 1 to float precision. */
				assert_near(tp_len(pbd_world_positions(w)[1]), L, TEST_TOL(1e-9, 1e-5));
				pbd_world_destroy(w);
			}
}

/* Control: a pendulum twice as long has a period sqrt(2) longer, measured the same way. */
static void test_period_scales_with_length(void** state) {
	(void)state;
	const double g = 9.81, theta0 = 2.0 * TP_PI / 180.0;
	pbd_world* w1 = pendulum(PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_XPBD, 20, 1, 1.0, 1.0, theta0, g);
	pbd_world* w2 = pendulum(PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_XPBD, 20, 1, 2.0, 1.0, theta0, g);
	const double T1 = 2 * TP_PI * sqrt(1.0 / g);
	const double p1 = tp_period(w1, 0, T1, 6, 6), p2 = tp_period(w2, 0, T1 * sqrt(2.0), 6, 6);
	assert_near(p2 / p1, sqrt(2.0), 0.01);
	pbd_world_destroy(w1);
	pbd_world_destroy(w2);
}

/* Total mechanical energy KE + PE of a hard pendulum (60 degrees, and a 3-link chain) never
 * rises from one step to the next: PBD and XPBD only take energy out. The library's stats are
 * checked against an independent computation at every step. */
static void check_energy_non_increasing(pbd_world* w, int steps, const char* name) {
	const pbd_vec3 g = pbd_world_get_def(w).gravity;
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	double e_prev = st.kinetic_energy + st.potential_energy;
	const double e0 = e_prev;
	const double scale = fabs(st.potential_energy) + 1.0;
	double worst_rise = 0;
	for (int s = 0; s < steps; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		pbd_world_get_stats(w, &st);
		/* Independent sums. */
		const pbd_vec3* x = pbd_world_positions(w);
		const pbd_vec3* v = pbd_world_velocities(w);
		const pbd_real* iw = pbd_world_inv_masses(w);
		double ke = 0, pe = 0;
		for (uint32_t i = 0; i < pbd_world_particle_count(w); ++i) {
			if (!(iw[i] > 0)) continue;
			const double mi = 1.0 / (double)iw[i];
			ke += 0.5 * mi *
			      ((double)v[i].x * (double)v[i].x + (double)v[i].y * (double)v[i].y + (double)v[i].z * (double)v[i].z);
			pe -= mi * ((double)g.x * (double)x[i].x + (double)g.y * (double)x[i].y + (double)g.z * (double)x[i].z);
		}
		assert_near(st.kinetic_energy, ke, 1e-9 * scale);
		assert_near(st.potential_energy, pe, 1e-9 * scale);
		const double e = ke + pe;
		if (e - e_prev > worst_rise) worst_rise = e - e_prev;
		/* Float positions of ~1 m carry ~1e-7 relative rounding into PE. */
		assert_true(e <= e_prev + TEST_TOL(1e-10, 2e-6) * scale);
		e_prev = e;
	}
	printf("  %s: energy %.5f J -> %.5f J over %d steps, largest step rise %.2g J\n", name, e0, e_prev, steps,
	       worst_rise);
	assert_true(e_prev <= e0);
}

static void test_energy_does_not_grow(void** state) {
	(void)state;
	const pbd_formulation forms[2] = {PBD_FORMULATION_PBD, PBD_FORMULATION_XPBD};
	const int subs[2] = {1, 8};
	for (int f = 0; f < 2; ++f)
		for (int k = 0; k < 2; ++k) {
			char name[96];
			snprintf(name, sizeof name, "pendulum 60 deg %s substeps %d", f ? "XPBD" : "PBD", subs[k]);
			pbd_world* w = pendulum(PBD_SOLVER_GAUSS_SEIDEL, forms[f], subs[k], 4, 1.5, 2.0, TP_PI / 3, 9.81);
			check_energy_non_increasing(w, 300, name);
			pbd_world_destroy(w);

			/* A 3-link chain released horizontally: chaotic, large velocities. */
			pbd_world_def def = pbd_world_def_default();
			def.formulation = forms[f];
			def.substeps = subs[k];
			def.iterations = 10;
			w = test_world(&def);
			const pbd_vec3 x[4] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}};
			const pbd_real inv[4] = {0, 1, (pbd_real)0.5, 2};
			assert_int_equal(pbd_world_add_particles(w, 4, x, NULL, inv, NULL), PBD_OK);
			pbd_distance_def dd[3];
			for (uint32_t i = 0; i < 3; ++i) {
				dd[i] = pbd_distance_def_default();
				dd[i].a = i;
				dd[i].b = i + 1;
			}
			assert_int_equal(pbd_world_add_distances(w, 3, dd, NULL), PBD_OK);
			snprintf(name, sizeof name, "3-link chain %s substeps %d", f ? "XPBD" : "PBD", subs[k]);
			check_energy_non_increasing(w, 300, name);
			pbd_world_destroy(w);
		}
}

/* Known state: a 2 kg particle at height 3 m moving at (1, 2, -2) m/s, plus a pinned one that
 * must not count. KE = 1/2 * 2 * 9 = 9 J, PE = m g h = 2 * 9.81 * 3 = 58.86 J, p = (2, 4, -4). */
static void test_energy_of_known_state(void** state) {
	(void)state;
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, (pbd_real)-9.81, 0);
	pbd_world* w = test_world(&def);
	const pbd_vec3 x[2] = {{1, 3, -2}, {5, 7, 1}};
	const pbd_vec3 v[2] = {{1, 2, -2}, {3, 3, 3}};
	const pbd_real inv[2] = {(pbd_real)0.5, 0};
	assert_int_equal(pbd_world_add_particles(w, 2, x, v, inv, NULL), PBD_OK);
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	assert_near(st.kinetic_energy, 9.0, 1e-12);
	assert_near(st.potential_energy, 2 * 9.81 * 3, TEST_TOL(1e-12, 1e-5));
	assert_near(st.momentum.x, 2.0, 1e-6);
	assert_near(st.momentum.y, 4.0, 1e-6);
	assert_near(st.momentum.z, -4.0, 1e-6);
	assert_true(st.particles == 2 && st.steps == 0 && st.time == 0);
	pbd_world_destroy(w);

	/* Oblique gravity: PE = -m g.x = -2 (1*1 - 9*3 + 0.5*-2) = 54 J. */
	def.gravity = pbd_v3(1, -9, (pbd_real)0.5);
	w = test_world(&def);
	assert_int_equal(pbd_world_add_particles(w, 2, x, v, inv, NULL), PBD_OK);
	pbd_world_get_stats(w, &st);
	assert_near(st.potential_energy, 54.0, 1e-9);
	pbd_world_destroy(w);

	/* One step of free flight with dt 0.25 and g = (0, -8, 0): exact in binary.
	 * v = (1, 0, -2), x = (1.25, 3, -2.5): KE = 5 J, PE = 2 * 8 * 3 = 48 J. */
	def.gravity = pbd_v3(0, -8, 0);
	def.dt = (pbd_real)0.25;
	w = test_world(&def);
	assert_int_equal(pbd_world_add_particles(w, 2, x, v, inv, NULL), PBD_OK);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	pbd_world_get_stats(w, &st);
	assert_near(st.kinetic_energy, 5.0, 1e-12);
	assert_near(st.potential_energy, 48.0, 1e-12);
	assert_true(st.steps == 1);
	assert_near(st.time, 0.25, 1e-12);
	pbd_world_destroy(w);
}

/* The stats describe the current state: changing a setting they depend on (gravity for PE)
 * after they were computed must not leave a stale value behind. */
static void test_stats_follow_settings(void** state) {
	(void)state;
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, (pbd_real)-9.81, 0);
	pbd_world* w = test_world(&def);
	const pbd_vec3 x = {1, 3, -2};
	const pbd_real inv = (pbd_real)0.5;
	assert_int_equal(pbd_world_add_particles(w, 1, &x, NULL, &inv, NULL), PBD_OK);
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	assert_near(st.potential_energy, 2 * 9.81 * 3, TEST_TOL(1e-12, 1e-5));
	assert_int_equal(pbd_world_set_gravity(w, pbd_v3(1, -9, (pbd_real)0.5)), PBD_OK);
	pbd_world_get_stats(w, &st);
	assert_near(st.potential_energy, 54.0, 1e-9);
	pbd_world_destroy(w);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_small_amplitude_period), cmocka_unit_test(test_period_scales_with_length),
	    cmocka_unit_test(test_energy_does_not_grow),   cmocka_unit_test(test_energy_of_known_state),
	    cmocka_unit_test(test_stats_follow_settings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
