/* Numbers to trust in the build users run (float unless PBD_DOUBLE): the pendulum keeps its
 * analytic period at many substeps and 100 m from the origin, free fall keeps its velocity at
 * dt = 1e-9 s, damping leaves equilibria where they are, a blow-up is reported as divergence,
 * extreme allowed values stay finite, and pinned particles are never written. */
#include <float.h>
#include <stdio.h>

#include "test_physics.h"

/* A 1 kg bob on a hard link of length L to a pinned pivot, released from rest at theta0 from the
 * downward vertical: XPBD, compliance 0, one Gauss-Seidel iteration, dt 1/60 s. */
static pbd_world* pendulum_at(pbd_vec3 pivot, int substeps, pbd_solver solver, double L, double theta0) {
	pbd_world_def def = pbd_world_def_default();
	def.formulation = PBD_FORMULATION_XPBD;
	def.solver = solver;
	def.substeps = substeps;
	def.iterations = 1;
	def.dt = (pbd_real)(1.0 / 60.0);
	pbd_world* w = test_world(&def);
	const pbd_vec3 x[2] = {
	    pivot, {(pbd_real)((double)pivot.x + L * sin(theta0)), (pbd_real)((double)pivot.y - L * cos(theta0)), pivot.z}};
	const pbd_real inv[2] = {0, 1};
	assert_int_equal(pbd_world_add_particles(w, 2, x, NULL, inv, NULL), PBD_OK);
	pbd_distance_def dd = pbd_distance_def_default();
	dd.a = 0;
	dd.b = 1;
	dd.rest = (pbd_real)L;
	assert_int_equal(pbd_world_add_distances(w, 1, &dd, NULL), PBD_OK);
	return w;
}

/* Seen before solving in displacements: +0.63 % at 50 substeps, -2.8 % at 100, +12.6 % at 200,
 * 8.2 % fast at (10, 10, 0) m, and no motion at all at (100, 100, 0) m. */
static void test_pendulum_period_substeps_and_far(void** state) {
	(void)state;
	const double L = 1.0, g = 9.81, theta0 = 2.0 * TP_PI / 180.0;
	/* Large-amplitude series to second order: 2 degrees add 7.6e-5. */
	const double T = 2 * TP_PI * sqrt(L / g) * (1 + theta0 * theta0 / 16);
	const pbd_vec3 pivots[3] = {{0, 0, 0}, {10, 10, 0}, {100, 100, 0}};
	const int subs[4] = {10, 50, 100, 200};
	const pbd_solver solvers[2] = {PBD_SOLVER_GAUSS_SEIDEL, PBD_SOLVER_JACOBI};
	for (int s = 0; s < 2; ++s)
		for (int p = 0; p < 3; ++p)
			for (int k = 0; k < 4; ++k) {
				pbd_world* w = pendulum_at(pivots[p], subs[k], solvers[s], L, theta0);
				/* 8 periods, 4 in the builds with assertions (ASan+UBSan): one period's error
				 * is the same, a crossing's interpolation error weighs a little more */
				const bool brief = test_with_assertions();
				const double P = tp_period(w, (double)pivots[p].x, T, brief ? 4 : 8, brief ? 6 : 10);
				const double err = (P - T) / T;
				printf("  pendulum %s pivot (%g, %g) substeps %3d: period %.6f s, analytic %.6f s, error %+.4f %%\n",
				       s ? "Jacobi" : "GS    ", (double)pivots[p].x, (double)pivots[p].y, subs[k], P, T, 100 * err);
				assert_true(fabs(err) < 1e-3);
				/* The link held and the pivot never moved. */
				assert_near(tp_dist(pbd_world_positions(w)[0], pbd_world_positions(w)[1]), L, TEST_TOL(1e-9, 2e-5));
				assert_memory_equal(&pbd_world_positions(w)[0], &pivots[p], sizeof(pbd_vec3));
				pbd_world_destroy(w);
			}
}

/* Free fall with dt = 1e-9 s: each step adds g dt = 1e-8 m/s, far below an ulp of a position
 * of 1 m, yet the velocity must grow by exactly that. */
static void test_free_fall_tiny_dt(void** state) {
	(void)state;
	const double dts[2] = {1e-9, 1e-6};
	const pbd_vec3 starts[2] = {{0, 1, 0}, {100, 100, 0}};
	for (int k = 0; k < 2; ++k)
		for (int p = 0; p < 2; ++p) {
			pbd_world_def def = pbd_world_def_default();
			def.dt = (pbd_real)dts[k];
			def.substeps = 10;
			pbd_world* w = test_world(&def);
			const pbd_real inv = 1;
			assert_int_equal(pbd_world_add_particles(w, 1, &starts[p], NULL, &inv, NULL), PBD_OK);
			const int steps = 1000;
			for (int s = 0; s < steps; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
			const double t = steps * (double)def.dt;
			const double v = (double)pbd_world_velocities(w)[0].y;
			printf("  free fall dt %g at y = %g: v = %.9g m/s after %g s, expected %.9g\n", dts[k], (double)starts[p].y,
			       v, t, -9.81 * t);
			/* 10^4 additions of g h, compensated: no rounding accumulates. */
			assert_near(v, -9.81 * t, TEST_TOL(1e-9, 1e-6) * 9.81 * t);
			assert_true(pbd_world_velocities(w)[0].x == 0 && pbd_world_velocities(w)[0].z == 0);
			pbd_world_destroy(w);
		}
	/* Over a longer fall the position follows the discrete law y = y0 - g h^2 n (n + 1) / 2 of
	 * n substeps to float precision of the coordinate, at both heights. */
	for (int p = 0; p < 2; ++p) {
		pbd_world_def def = pbd_world_def_default();
		def.substeps = 200;
		pbd_world* w = test_world(&def);
		const pbd_real inv = 1;
		assert_int_equal(pbd_world_add_particles(w, 1, &starts[p], NULL, &inv, NULL), PBD_OK);
		for (int s = 0; s < 60; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
		const double h = (double)def.dt / 200, n = 60.0 * 200;
		const double y = (double)starts[p].y - 9.81 * h * h * n * (n + 1) / 2;
		const double got = (double)pbd_world_positions(w)[0].y;
		printf("  free fall 1 s at 200 substeps from y = %g: y = %.9g, discrete law %.9g\n", (double)starts[p].y, got,
		       y);
		assert_near(got, y, TEST_TOL(1e-10, 5e-7) * fabs(y) + 1e-9);
		pbd_world_destroy(w);
	}
}

/* A 1 kg particle hangs from a pinned one on an XPBD link of compliance alpha: at rest the link
 * stretches by m g alpha, whatever the damping. The lab's order (damping after the forces)
 * settles at d m g alpha instead, with d the per-step damping at one substep. */
static double hanging_extension(pbd_real damping, pbd_damping_mode mode, int substeps) {
	pbd_world_def def = pbd_world_def_default();
	def.formulation = PBD_FORMULATION_XPBD;
	def.damping = damping;
	def.damping_mode = mode;
	def.substeps = substeps;
	def.iterations = 4;
	pbd_world* w = test_world(&def);
	const pbd_vec3 x[2] = {{0, 0, 0}, {0, -1, 0}};
	const pbd_real inv[2] = {0, 1};
	assert_int_equal(pbd_world_add_particles(w, 2, x, NULL, inv, NULL), PBD_OK);
	pbd_distance_def dd = pbd_distance_def_default();
	dd.a = 0;
	dd.b = 1;
	dd.rest = 1;
	dd.compliance_stretch = dd.compliance_compress = (pbd_real)1e-3;
	assert_int_equal(pbd_world_add_distances(w, 1, &dd, NULL), PBD_OK);
	for (int s = 0; s < 1200; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const double ext = -(double)pbd_world_positions(w)[1].y - 1.0;
	assert_true(fabs((double)pbd_world_velocities(w)[1].y) < 1e-4); /* at rest */
	pbd_world_destroy(w);
	return ext;
}

static void test_damping_keeps_equilibrium(void** state) {
	(void)state;
	const double mga = 9.81e-3;
	const pbd_real dampings[3] = {1, (pbd_real)0.99, (pbd_real)0.9};
	const int subs[2] = {1, 10};
	for (int d = 0; d < 3; ++d)
		for (int k = 0; k < 2; ++k) {
			const double ext = hanging_extension(dampings[d], PBD_DAMPING_VELOCITY, subs[k]);
			printf("  hanging spring, damping %.2f, %2d substeps: extension %.6f mm (m g alpha %.6f mm)\n",
			       (double)dampings[d], subs[k], 1e3 * ext, 1e3 * mga);
			assert_near(ext, mga, 1e-3 * mga);
		}
	/* The lab's order: 0.9 * 9.81 mm = 8.829 mm at one substep. It is an option, not a default. */
	const double lab = hanging_extension((pbd_real)0.9, PBD_DAMPING_AFTER_FORCES, 1);
	printf("  hanging spring, damping 0.90 after forces: extension %.6f mm\n", 1e3 * lab);
	assert_near(lab, 0.9 * mga, 1e-3 * mga);
}

/* Total momentum of a free, stretched, spinning cloth with unequal masses, far from the origin:
 * constraints are internal forces, so every solver and formulation conserves it. */
static void test_momentum_far_from_origin(void** state) {
	(void)state;
	const pbd_solver solvers[2] = {PBD_SOLVER_GAUSS_SEIDEL, PBD_SOLVER_JACOBI};
	const pbd_formulation forms[2] = {PBD_FORMULATION_PBD, PBD_FORMULATION_XPBD};
	for (int s = 0; s < 2; ++s)
		for (int f = 0; f < 2; ++f) {
			pbd_world_def def = pbd_world_def_default();
			def.gravity = pbd_v3(0, 0, 0);
			def.solver = solvers[s];
			def.formulation = forms[f];
			def.substeps = 20;
			def.iterations = 2;
			pbd_world* w = test_world(&def);
			pbd_mesh m;
			tp_grid(&m, 8, 8, 1, pbd_v3(1000, 1000, -1000), 2, false);
			pbd_soft_def bd = pbd_soft_def_default();
			bd.mesh = &m;
			assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
			pbd_mesh_free(&m);
			const uint32_t n = pbd_world_particle_count(w);
			uint64_t seed = 7;
			for (uint32_t i = 0; i < n; ++i)
				assert_int_equal(pbd_particle_set_inv_mass(w, i, (pbd_real)tp_rand_range(&seed, 0.2, 5)), PBD_OK);
			pbd_vec3 v[64];
			for (uint32_t i = 0; i < n; ++i)
				v[i] = pbd_v3((pbd_real)tp_rand_range(&seed, -1, 1), (pbd_real)tp_rand_range(&seed, -1, 1),
				              (pbd_real)tp_rand_range(&seed, -1, 1));
			assert_int_equal(pbd_world_set_velocities(w, 0, n, v), PBD_OK);
			const tp_dvec3 p0 = tp_momentum(w);
			double worst = 0, scale = 0;
			for (uint32_t i = 0; i < n; ++i) scale += tp_len(v[i]) / (double)pbd_world_inv_masses(w)[i];
			for (int k = 0; k < 120; ++k) {
				assert_int_equal(pbd_world_step(w), PBD_OK);
				const tp_dvec3 p = tp_momentum(w);
				worst = fmax(worst, fmax(fabs(p.x - p0.x), fmax(fabs(p.y - p0.y), fabs(p.z - p0.z))));
			}
			printf("  momentum %s %s at 1000 m: worst drift %.3g of %.3g kg m/s\n", s ? "Jacobi" : "GS    ",
			       f ? "XPBD" : "PBD ", worst, scale);
			assert_true(worst <= TEST_TOL(1e-10, 1e-4) * scale);
			pbd_world_destroy(w);
		}
}

/* A blow-up is reported: a cloth stepped with dt = 1000 s tears far past any material (strain
 * of millions); each such step counts as diverged and the first is logged. A sane run counts
 * nothing, and divergence_strain = 0 turns the strain test off. */
static void test_divergence_reported(void** state) {
	(void)state;
	for (int run = 0; run < 3; ++run) {
		char last[256] = "";
		pbd_world_def def = pbd_world_def_default();
		def.dt = run == 0 ? (pbd_real)(1.0 / 60.0) : (pbd_real)PBD_MAX_DT;
		def.divergence_strain = run == 2 ? 0 : 10;
		def.log = test_log_keep;
		def.log_user = last;
		pbd_world* w = NULL;
		assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
		pbd_mesh m;
		tp_grid(&m, 6, 6, 1, pbd_v3(0, 0, 0), 1, false);
		pbd_soft_def bd = pbd_soft_def_default();
		bd.mesh = &m;
		const uint32_t pins[2] = {0, 5};
		bd.pinned = pins;
		bd.pinned_count = 2;
		assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
		pbd_mesh_free(&m);
		for (int k = 0; k < 5; ++k) assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_warning_stat d = pbd_world_get_warning(w, PBD_WARN_DIVERGED);
		pbd_stats st;
		pbd_world_get_stats(w, &st);
		printf("  divergence run %d: max strain %.3g, diverged steps %llu\n", run, st.max_strain,
		       (unsigned long long)d.count);
		if (run == 1) {
			assert_true(st.max_strain > 1000);
			assert_int_equal(d.count, 5);
			assert_int_equal(d.last_index, 5); /* the last diverged step, counted from 1 */
			assert_non_null(strstr(last, "diverged at step 1: max strain"));
		} else {
			assert_int_equal(d.count, 0);
			assert_string_equal(last, "");
		}
		pbd_world_destroy(w);
	}
}

/* One Gauss-Seidel iteration per substep on a cloth too fine for it (the sweep cannot carry the
 * weight, so the cloth hangs stretched many times over) must still not blow up. A sweep close to
 * the order of creation did, at the settings below: the velocity v = (p - x)/h turns a negative
 * eigenvalue g < -1/3 of the sweep's Jacobian into growth per substep (docs/methods.md, Solvers);
 * the colour-by-colour order keeps the cloth bounded and never gains energy. */
static void test_one_iteration_cloth_stays_bounded(void** state) {
	(void)state;
	const uint32_t sizes[3] = {32, 64, 64};
	const int subs[3] = {1, 4, 5};
	for (int c = 0; c < 3; ++c) {
		pbd_world_def def = pbd_world_def_default();
		def.formulation = PBD_FORMULATION_XPBD;
		def.iterations = 1;
		def.substeps = subs[c];
		def.divergence_strain = 0; /* stretched by design here; the test bounds it itself */
		pbd_world* w = test_world(&def);
		pbd_mesh m;
		tp_grid(&m, sizes[c], sizes[c], 1, pbd_v3((pbd_real)-0.5, 0, 0), 2, false);
		pbd_soft_def bd = pbd_soft_def_default();
		bd.mesh = &m;
		bd.mass_mode = PBD_MASS_TOTAL;
		bd.mass = 1;
		const uint32_t pins[2] = {0, sizes[c] - 1};
		bd.pinned = pins;
		bd.pinned_count = 2;
		assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
		pbd_mesh_free(&m);
		pbd_stats st;
		pbd_world_get_stats(w, &st);
		const double e0 = st.kinetic_energy + st.potential_energy;
		double worst_strain = 0, worst_gain = -1e300;
		for (int k = 0; k < 120; ++k) {
			assert_int_equal(pbd_world_step(w), PBD_OK);
			pbd_world_get_stats(w, &st);
			worst_strain = fmax(worst_strain, st.max_strain);
			worst_gain = fmax(worst_gain, st.kinetic_energy + st.potential_energy - e0);
		}
		printf("  %ux%u cloth, XPBD, 1 iteration, %d substeps: peak strain %.3g, largest energy gain %.3g J\n",
		       sizes[c], sizes[c], subs[c], worst_strain, worst_gain);
		fflush(stdout);
		assert_int_equal(pbd_world_get_warning(w, PBD_WARN_NONFINITE).count, 0);
		/* The strain one iteration settles at, ~ g N^3 dt^2 / (2 S^2): bounded near it, where the
		 * old order reached 1e20. */
		const double n3 = (double)sizes[c] * sizes[c] * sizes[c];
		const double settle = 9.81 * n3 / (60.0 * 60.0) / (2.0 * subs[c] * subs[c]);
		assert_true(worst_strain < 1.5 * settle + 5);
		assert_true(worst_gain <= 1e-3);
		pbd_world_destroy(w);
	}
}

/* Extreme allowed values: the smallest and largest inverse masses project without overflow or
 * division by zero (the FP traps would fire), FLT_MIN and subnormals are refused, and the
 * world's caps refuse a gravity or dt whose first step would overflow float. */
static void test_extreme_values(void** state) {
	(void)state;
	char last[256] = "";
	pbd_world_def def = pbd_world_def_default();
	def.log = test_log_keep;
	def.log_user = last;
	const pbd_solver solvers[2] = {PBD_SOLVER_GAUSS_SEIDEL, PBD_SOLVER_JACOBI};
	const pbd_formulation forms[2] = {PBD_FORMULATION_PBD, PBD_FORMULATION_XPBD};
	for (int s = 0; s < 2; ++s)
		for (int f = 0; f < 2; ++f) {
			def.solver = solvers[s];
			def.formulation = forms[f];
			pbd_world* w = NULL;
			assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
			/* Links whose ends are nearly coincident (1e-8 m) and of the extreme masses. */
			const pbd_vec3 x[4] = {{0, 0, 0}, {(pbd_real)1e-8, 0, 0}, {1, 0, 0}, {1, (pbd_real)1e-8, 0}};
			const pbd_real inv[4] = {(pbd_real)PBD_INV_MASS_MIN, (pbd_real)PBD_INV_MASS_MIN, (pbd_real)PBD_INV_MASS_MAX,
			                         0};
			assert_int_equal(pbd_world_add_particles(w, 4, x, NULL, inv, NULL), PBD_OK);
			pbd_distance_def dd[3];
			for (int k = 0; k < 3; ++k) {
				dd[k] = pbd_distance_def_default();
				dd[k].a = (uint32_t)k;
				dd[k].b = (uint32_t)k + 1;
				dd[k].rest = 1;
			}
			assert_int_equal(pbd_world_add_distances(w, 3, dd, NULL), PBD_OK);
			for (int k = 0; k < 60; ++k) assert_int_equal(pbd_world_step(w), PBD_OK);
			for (uint32_t i = 0; i < 4; ++i) {
				assert_true(pbd_v3_is_finite(pbd_world_positions(w)[i]));
				assert_true(pbd_v3_is_finite(pbd_world_velocities(w)[i]));
			}
			assert_int_equal(pbd_world_get_warning(w, PBD_WARN_NONFINITE).count, 0);
			const pbd_real bad[4] = {FLT_MIN, FLT_MIN / 4, (pbd_real)(PBD_INV_MASS_MAX * 2), -1};
			for (int k = 0; k < 4; ++k) {
				assert_int_equal(pbd_world_add_particles(w, 1, x, NULL, &bad[k], NULL), PBD_ERR_OUT_OF_RANGE);
				assert_non_null(strstr(last, "inverse mass 0 must be 0 or in"));
				assert_int_equal(pbd_particle_set_inv_mass(w, 0, bad[k]), PBD_ERR_OUT_OF_RANGE);
			}
			pbd_world_destroy(w);
		}
	/* A value just outside a range prints with the digits that show why. */
	pbd_world_def bad = pbd_world_def_default();
	bad.log = test_log_keep;
	bad.log_user = last;
	bad.damping = (pbd_real)1.0000001;
	pbd_world* none = NULL;
	assert_int_equal(pbd_world_create(&bad, &none), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(last, "(got 1.0000001")); /* float: 1.00000012 */
	bad = pbd_world_def_default();
	bad.log = test_log_keep;
	bad.log_user = last;
	bad.gravity = pbd_v3(0, (pbd_real)-1e9, 0);
	assert_int_equal(pbd_world_create(&bad, &none), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(last, "pbd_world_def.gravity"));
	bad.gravity = pbd_v3(0, (pbd_real)-9.81, 0);
	bad.dt = (pbd_real)1e9;
	assert_int_equal(pbd_world_create(&bad, &none), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(last, "pbd_world_def.dt"));
	assert_null(none);
}

/* Pinned particles are never written: a pin at -0.0 keeps its sign bit, under every solver and
 * formulation, with colliders in and after the solver, while its neighbours move. */
static void test_pinned_bit_exact(void** state) {
	(void)state;
	const pbd_solver solvers[2] = {PBD_SOLVER_GAUSS_SEIDEL, PBD_SOLVER_JACOBI};
	const pbd_formulation forms[2] = {PBD_FORMULATION_PBD, PBD_FORMULATION_XPBD};
	for (int s = 0; s < 2; ++s)
		for (int f = 0; f < 2; ++f)
			for (int c = 0; c < 2; ++c) {
				pbd_world_def def = pbd_world_def_default();
				def.solver = solvers[s];
				def.formulation = forms[f];
				def.collision_mode = c ? PBD_COLLISION_AFTER_SOLVER : PBD_COLLISION_IN_SOLVER;
				def.substeps = 4;
				pbd_world* w = test_world(&def);
				const pbd_vec3 pin = {-0.0f, (pbd_real)0.5, -0.0f};
				const pbd_vec3 x[3] = {pin, {1, (pbd_real)0.5, 0}, {2, (pbd_real)0.5, 0}};
				const pbd_real inv[3] = {0, 1, 1};
				assert_int_equal(pbd_world_add_particles(w, 3, x, NULL, inv, NULL), PBD_OK);
				pbd_distance_def dd[2];
				for (int k = 0; k < 2; ++k) {
					dd[k] = pbd_distance_def_default();
					dd[k].a = (uint32_t)k;
					dd[k].b = (uint32_t)k + 1;
				}
				assert_int_equal(pbd_world_add_distances(w, 2, dd, NULL), PBD_OK);
				pbd_collider_def cd = pbd_collider_def_default();
				cd.shape.plane.offset = 1; /* the pin sits inside the half-space it must not leave */
				assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
				for (int k = 0; k < 60; ++k) {
					assert_int_equal(pbd_world_step(w), PBD_OK);
					assert_memory_equal(&pbd_world_positions(w)[0], &pin, sizeof pin);
				}
				assert_true(pbd_world_positions(w)[2].y > (pbd_real)0.99); /* the free ones were pushed out */
				pbd_world_destroy(w);
			}
}

/* The double pendulum (two 1 kg bobs on hard 1 m links, released with both links horizontal)
 * loses energy under XPBD: the projection removes the velocity along each link that the
 * prediction added, which is PBD's numerical damping. The loss falls with the substep count;
 * the numbers are the table in docs/methods.md. */
static void test_double_pendulum_energy_drift(void** state) {
	(void)state;
	const int subs[7] = {1, 2, 5, 10, 20, 50, 100};
	const double scale = 3 * 9.81; /* J: the fall of both bobs from horizontal to hanging */
	double prev_loss = 1e300;
	for (int k = 0; k < 7; ++k) {
		pbd_world_def def = pbd_world_def_default();
		def.formulation = PBD_FORMULATION_XPBD;
		def.substeps = subs[k];
		def.iterations = 1;
		pbd_world* w = test_world(&def);
		const pbd_vec3 x[3] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}};
		const pbd_real inv[3] = {0, 1, 1};
		assert_int_equal(pbd_world_add_particles(w, 3, x, NULL, inv, NULL), PBD_OK);
		pbd_distance_def dd[2];
		for (int j = 0; j < 2; ++j) {
			dd[j] = pbd_distance_def_default();
			dd[j].a = (uint32_t)j;
			dd[j].b = (uint32_t)j + 1;
		}
		assert_int_equal(pbd_world_add_distances(w, 2, dd, NULL), PBD_OK);
		pbd_stats st;
		pbd_world_get_stats(w, &st);
		const double e0 = st.kinetic_energy + st.potential_energy;
		double e1 = 0, e10 = 0, rise = 0, prev = e0;
		for (int step = 1; step <= 600; ++step) {
			assert_int_equal(pbd_world_step(w), PBD_OK);
			pbd_world_get_stats(w, &st);
			const double e = st.kinetic_energy + st.potential_energy;
			rise = fmax(rise, e - prev);
			prev = e;
			if (step == 60) e1 = e;
			if (step == 600) e10 = e;
		}
		const double loss = (e0 - e10) / scale;
		printf("  double pendulum XPBD, %3d substeps: energy lost after 1 s %.3f %%, after 10 s %.3f %% of 3 m g L; "
		       "largest rise in one step %.2g J\n",
		       subs[k], 100 * (e0 - e1) / scale, 100 * loss, rise);
		assert_true(loss >= 0 && loss < prev_loss); /* more substeps, less numerical damping */
		assert_true(rise <= TEST_TOL(1e-9, 2e-5) * scale);
		prev_loss = loss;
		if (subs[k] >= 50) assert_true(loss < 0.08); /* 7.7 % at 50 substeps, 4 % at 100 */
		pbd_world_destroy(w);
	}
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pendulum_period_substeps_and_far),
	    cmocka_unit_test(test_free_fall_tiny_dt),
	    cmocka_unit_test(test_damping_keeps_equilibrium),
	    cmocka_unit_test(test_momentum_far_from_origin),
	    cmocka_unit_test(test_divergence_reported),
	    cmocka_unit_test(test_one_iteration_cloth_stays_bounded),
	    cmocka_unit_test(test_extreme_values),
	    cmocka_unit_test(test_pinned_bit_exact),
	    cmocka_unit_test(test_double_pendulum_energy_drift),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
