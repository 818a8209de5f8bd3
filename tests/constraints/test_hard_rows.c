/* Hard constraints (compliance 0) under the force-based methods (rows_hard.c): each becomes a
 * spring k = kappa m_eff / h^2 under implicit Euler and projective dynamics, so a pendulum sags
 * by g h^2 / kappa and keeps the analytic period; explicit and symplectic Euler take the share of
 * their stability bound that Gershgorin's theorem leaves each row, and twice that share already
 * diverges on a chain. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "methods/integrate.h"
#include "constraints/rows.h"
#include "test_physics.h"
#include "model/world.h"

#define G 9.81

/* A 1 kg bob on a hard 1 m link to a pinned particle, released from rest at theta0. */
static pbd_world* pendulum(pbd_method method, double theta0) {
	pbd_world_def def = pbd_world_def_default();
	def.method = method;
	def.gravity = pbd_v3(0, (pbd_real)-G, 0);
	def.divergence_strain = 0;
	pbd_world* w = test_world(&def);
	const pbd_vec3 x[2] = {pbd_v3(0, 0, 0), pbd_v3((pbd_real)sin(theta0), (pbd_real)-cos(theta0), 0)};
	const pbd_real iw[2] = {0, 1};
	assert_int_equal(pbd_world_add_particles(w, 2, x, NULL, iw, NULL), PBD_OK);
	pbd_distance_def d = pbd_distance_def_default();
	d.a = 0, d.b = 1, d.rest = 1;
	assert_int_equal(pbd_world_add_distances(w, 1, &d, NULL), PBD_OK);
	return w;
}

typedef struct swing {
	double max_err, mean_err; /* |L - 1| at most, L - 1 on average */
	double period;            /* from upward zero crossings of x */
	double amplitude;         /* largest |angle| over the last period */
} swing;

static swing run_pendulum(pbd_method method, double theta0, int steps) {
	pbd_world* w = pendulum(method, theta0);
	const double dt = (double)pbd_world_get_def(w).dt;
	swing s = {0, 0, 0, 0};
	double prev = sin(theta0), first = -1, last = -1;
	int crossings = 0;
	for (int k = 1; k <= steps; ++k) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_vec3 p = pbd_world_positions(w)[1];
		const double err = tp_len(p) - 1;
		s.max_err = fmax(s.max_err, fabs(err));
		s.mean_err += err / steps;
		const double xs = (double)p.x;
		if (prev < 0 && xs >= 0) {
			const double t = (k - xs / (xs - prev)) * dt;
			if (first < 0) first = t;
			last = t;
			++crossings;
		}
		prev = xs;
		if (k > steps - 130) s.amplitude = fmax(s.amplitude, fabs(atan2((double)p.x, -(double)p.y)));
	}
	assert_true(crossings > 2);
	s.period = (last - first) / (crossings - 1);
	assert_true(tp_all_finite(w));
	pbd_world_destroy(w);
	return s;
}

/* Implicit Euler and projective dynamics run the hard pendulum. The static sag of the mapping is
 * g h^2 / kappa; projective dynamics iterates the nonlinear step and stays there, implicit Euler
 * linearises once per substep and adds the rotation's second order, (v h)^2 / (2 L) at most. The
 * period is the small-angle one with its finite-amplitude term, 2 pi sqrt(L / g) (1 + theta0^2 / 16),
 * within the methods' own O((omega h)^2) phase error; the amplitude decays as backward Euler's
 * (1 + omega^2 h^2)^(-1/2) per step, no faster than that times the mapping's share. */
static void test_pendulum_implicit_methods(void** state) {
	(void)state;
	const double theta0 = 0.1, h = 1.0 / 60, kappa = (double)pbd_world_def_default().hard_stiffness;
	const double sag = G * h * h / kappa, v = theta0 * sqrt(G), T0 = 2 * TP_PI / sqrt(G) * (1 + theta0 * theta0 / 16);
	const int steps = 1200;
	/* the amplitude measured over the last 130 steps: between the decays to their start and end */
	const double decay = pow(1 + G * h * h, -steps / 2.0), decay_from = pow(1 + G * h * h, -(steps - 130) / 2.0);
	const pbd_method methods[2] = {PBD_METHOD_IMPLICIT_EULER, PBD_METHOD_PROJECTIVE_DYNAMICS};
	for (int m = 0; m < 2; ++m) {
		const swing s = run_pendulum(methods[m], theta0, steps);
		printf("  %-19s |dL| <= %.3g, mean dL %.3g (g h^2 / kappa = %.3g), T / T0 = %.5f, amplitude %.3f of %.3f\n",
		       pbd_method_name(methods[m]), s.max_err, s.mean_err, sag, s.period / T0, s.amplitude / theta0, decay);
		if (methods[m] == PBD_METHOD_PROJECTIVE_DYNAMICS) {
			assert_true(s.max_err < TEST_TOL(1.3, 1.5) * sag);
			assert_true(fabs(s.mean_err / sag - 1) < 0.1);
		} else {
			assert_true(s.max_err < 1.5 * (sag + v * v * h * h / 2));
			assert_true(s.mean_err > 0.9 * sag && s.mean_err < 2 * sag);
		}
		assert_true(fabs(s.period / T0 - 1) < 0.003);
		assert_true(s.amplitude < 1.03 * decay_from * theta0);
		assert_true(s.amplitude > 0.4 * decay * theta0);
	}
}

/* Symplectic Euler keeps the swing's energy: the amplitude stays, the period is the analytic one. */
static void test_pendulum_symplectic(void** state) {
	(void)state;
	const double theta0 = 0.1, T0 = 2 * TP_PI / sqrt(G) * (1 + theta0 * theta0 / 16), h = 1.0 / 60;
	const swing s = run_pendulum(PBD_METHOD_SYMPLECTIC_EULER, theta0, 1200);
	printf("  symplectic_euler    |dL| <= %.3g, mean dL %.3g (g h^2 / 3.6 = %.3g), T / T0 = %.5f, amplitude %.4f\n",
	       s.max_err, s.mean_err, G * h * h / 3.6, s.period / T0, s.amplitude / theta0);
	/* The budget 0.9 * 4 / h^2 of a lone row: the static sag g h^2 / 3.6, ringing around it. */
	assert_true(fabs(s.mean_err / (G * h * h / 3.6) - 1) < 0.1);
	assert_true(s.max_err < 5 * G * h * h / 3.6);
	assert_true(fabs(s.period / T0 - 1) < 0.003);
	assert_true(fabs(s.amplitude / theta0 - 1) < 0.01);
}

/* A chain of n links of 0.1 m and 10 g hanging from a pinned particle, straight, 0.2 rad aside;
 * the links hard, or springs of the given constants (one per link) when k is not NULL. */
static pbd_world* chain(pbd_method method, int n, const double* k) {
	pbd_world_def def = pbd_world_def_default();
	def.method = method;
	def.substeps = 10;
	def.gravity = pbd_v3(0, (pbd_real)-G, 0);
	def.divergence_strain = 0;
	pbd_world* w = test_world(&def);
	for (int i = 0; i <= n; ++i) {
		const pbd_vec3 x = pbd_v3((pbd_real)(0.1 * i * sin(0.2)), (pbd_real)(-0.1 * i * cos(0.2)), 0);
		const pbd_real iw = i ? 100 : 0;
		assert_int_equal(pbd_world_add_particles(w, 1, &x, NULL, &iw, NULL), PBD_OK);
	}
	for (int i = 0; i < n; ++i) {
		pbd_distance_def d = pbd_distance_def_default();
		d.a = (uint32_t)i, d.b = (uint32_t)i + 1, d.rest = 0.1f;
		if (k) d.compliance_stretch = d.compliance_compress = (pbd_real)(1 / k[i]);
		assert_int_equal(pbd_world_add_distances(w, 1, &d, NULL), PBD_OK);
	}
	return w;
}

/* The worst relative stretch of any link over `steps` steps; stops early (returning it) once a
 * link is off by more than its length, which only a diverging run reaches. */
static double worst_strain(pbd_world* w, int n, int steps) {
	double worst = 0;
	for (int s = 0; s < steps && worst < 1; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_vec3* x = pbd_world_positions(w);
		for (int i = 0; i < n; ++i) worst = fmax(worst, fabs(tp_dist(x[i], x[i + 1]) / 0.1 - 1));
	}
	return worst;
}

/* Symplectic Euler on a hard chain: the Gershgorin share keeps every mode under (omega h)^2 =
 * 3.6, so the chain stays within a small strain for 10 s. The same chain of springs at the
 * constants the mapping chose stays too, and at twice them (what a bound on each row's own mode
 * would allow: an inner particle carries two rows) or four times them it diverges. */
static void test_chain_symplectic_bound(void** state) {
	(void)state;
	const int n = 10, steps = 600;
	pbd_world* w = chain(PBD_METHOD_SYMPLECTIC_EULER, n, NULL);
	const double hard = worst_strain(w, n, steps);
	assert_true(tp_all_finite(w));
	double k[10];
	const pbd_rows* r = &w->integ->rows;
	assert_int_equal(r->n, n);
	const double h = (double)pbd_world_get_def(w).dt / 10;
	for (int i = 0; i < n; ++i) {
		k[i] = (double)r->k[i];
		/* an inner row: its particles carry 4 w of unit load, so k w h^2 = 3.6 / 4 */
		if (i > 0 && i < n - 1) assert_near(k[i] * 100 * h * h, 0.9, 1e-4);
	}
	pbd_world_destroy(w);
	/* The top link's static stretch is n m g / k_0 = n g h^2 / 1.2 (k_0 w h^2 = 3.6 / 3). */
	const double stat = n * G * h * h / 1.2 / 0.1;
	printf("  hard chain of %d, symplectic Euler: worst strain %.3g (static %.3g)\n", n, hard, stat);
	assert_true(hard < 10 * stat);
	const double scale[3] = {1, 2, 4};
	for (int s = 0; s < 3; ++s) {
		double ks[10];
		for (int i = 0; i < n; ++i) ks[i] = scale[s] * k[i];
		w = chain(PBD_METHOD_SYMPLECTIC_EULER, n, ks);
		const double strain = worst_strain(w, n, steps);
		printf("  springs at %gx the mapping's constants: worst strain %.3g\n", scale[s], strain);
		if (s == 0)
			assert_true(strain < 10 * stat && tp_all_finite(w));
		else
			assert_true(strain >= 1);
		pbd_world_destroy(w);
	}
}

/* Explicit Euler: the hard rows' own modes are dead-beat, so a hard chain hanging at rest keeps
 * still with the static stretch of its springs (the swing itself gains energy under explicit
 * Euler whatever the constraints, so the chain starts straight down). */
static void test_chain_explicit_at_rest(void** state) {
	(void)state;
	const int n = 5;
	pbd_world_def def = pbd_world_def_default();
	def.method = PBD_METHOD_EXPLICIT_EULER;
	def.substeps = 10;
	def.divergence_strain = 0;
	pbd_world* w = test_world(&def);
	for (int i = 0; i <= n; ++i) {
		const pbd_vec3 x = pbd_v3(0, (pbd_real)(-0.1 * i), 0);
		const pbd_real iw = i ? 100 : 0;
		assert_int_equal(pbd_world_add_particles(w, 1, &x, NULL, &iw, NULL), PBD_OK);
	}
	for (int i = 0; i < n; ++i) {
		pbd_distance_def d = pbd_distance_def_default();
		d.a = (uint32_t)i, d.b = (uint32_t)i + 1, d.rest = 0.1f;
		assert_int_equal(pbd_world_add_distances(w, 1, &d, NULL), PBD_OK);
	}
	const double strain = worst_strain(w, n, 600);
	const pbd_vec3* x = pbd_world_positions(w);
	const double h = 1.0 / 600, stat = n * G * h * h * 3 / 0.1; /* k_0 w h^2 = 1 / 3 */
	const double top = tp_dist(x[0], x[1]) / 0.1 - 1;
	printf("  hard chain of %d at rest, explicit Euler: worst strain %.3g, top link at the end %.4g (static %.4g), "
	       "speed %.3g\n",
	       n, strain, top, stat, tp_len(pbd_world_velocities(w)[n]));
	/* The modes below the top one are underdamped (|mu|^2 = 1 - (omega h)^2): at most twice the static
	 * stretch on the way, then the static stretch itself. */
	assert_true(strain < 2 * stat);
	assert_true(fabs(top / stat - 1) < TEST_TOL(0.01, 0.05));
	assert_true(tp_len(pbd_world_velocities(w)[n]) < 1e-3);
	assert_true(fabs((double)x[n].x) < 1e-6);
	pbd_world_destroy(w);
}

/* The setting: validated, and a stiffer one sags less under implicit Euler (static sag g h^2 / kappa). */
static void test_setting(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = test_world_keep(msg);
	assert_int_equal(pbd_world_set_hard_stiffness(w, 0), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "pbd_world_def.hard_stiffness: must be in (0, 1e+08]"));
	assert_int_equal(pbd_world_set_hard_stiffness(w, (pbd_real)2e8), PBD_ERR_OUT_OF_RANGE);
	assert_int_equal(pbd_world_set_hard_stiffness(w, (pbd_real)NAN), PBD_ERR_OUT_OF_RANGE);
	assert_int_equal(pbd_world_set_hard_stiffness(w, 50), PBD_OK);
	assert_true(pbd_world_get_def(w).hard_stiffness == 50);
	pbd_world_destroy(w);
	const double h = 1.0 / 60;
	for (int k = 10; k <= 1000; k *= 10) {
		w = pendulum(PBD_METHOD_PROJECTIVE_DYNAMICS, 0);
		assert_int_equal(pbd_world_set_hard_stiffness(w, (pbd_real)k), PBD_OK);
		for (int s = 0; s < 60; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
		const double sag = tp_len(pbd_world_positions(w)[1]) - 1;
		printf("  kappa %4d: projective dynamics' pendulum at rest sags %.4g (g h^2 / kappa %.4g)\n", k, sag,
		       G * h * h / k);
		assert_true(fabs(sag / (G * h * h / k) - 1) < TEST_TOL(0.01, 0.05));
		pbd_world_destroy(w);
	}
}

/* A pinned-only hard row moves nothing and a slack one nothing either: no spring, no NaN. */
static void test_pinned_only_row(void** state) {
	(void)state;
	for (int m = PBD_METHOD_EXPLICIT_EULER; m <= PBD_METHOD_PROJECTIVE_DYNAMICS; ++m) {
		if (m == PBD_METHOD_VBD) continue;
		pbd_world_def def = pbd_world_def_default();
		def.method = (pbd_method)m;
		pbd_world* w = test_world(&def);
		const pbd_vec3 x[3] = {pbd_v3(0, 0, 0), pbd_v3(1, 0, 0), pbd_v3(2, 0, 0)};
		const pbd_real iw[3] = {0, 0, 1};
		assert_int_equal(pbd_world_add_particles(w, 3, x, NULL, iw, NULL), PBD_OK);
		pbd_distance_def d = pbd_distance_def_default();
		d.a = 0, d.b = 1, d.rest = 0.5f; /* both ends pinned, and violated */
		assert_int_equal(pbd_world_add_distances(w, 1, &d, NULL), PBD_OK);
		for (int s = 0; s < 10; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
		assert_true(tp_all_finite(w));
		assert_true(w->integ->rows.k[0] == 0);
		/* the free particle falls freely (the Euler methods' first-order error: n (n -+ 1) / 2 for n^2 / 2) */
		const double t = 10.0 / 60;
		assert_near(pbd_world_positions(w)[2].y, -0.5 * G * t * t, 0.11 * 0.5 * G * t * t);
		pbd_world_destroy(w);
	}
}

/* A snapshot of a world with hard rows under implicit Euler and projective dynamics resumes
 * bit-identically, the setting included. */
static void test_snapshot_resumes(void** state) {
	(void)state;
	const pbd_method methods[2] = {PBD_METHOD_IMPLICIT_EULER, PBD_METHOD_PROJECTIVE_DYNAMICS};
	for (int m = 0; m < 2; ++m) {
		pbd_world* a = chain(methods[m], 4, NULL);
		assert_int_equal(pbd_world_set_hard_stiffness(a, 300), PBD_OK);
		for (int s = 0; s < 20; ++s) assert_int_equal(pbd_world_step(a), PBD_OK);
		size_t size = 0;
		assert_int_equal(pbd_world_save_memory(a, NULL, 0, &size), PBD_OK);
		void* buf = malloc(size);
		assert_non_null(buf);
		assert_int_equal(pbd_world_save_memory(a, buf, size, &size), PBD_OK);
		pbd_world_def def = pbd_world_def_default();
		def.log = test_log_fail;
		pbd_world* b = NULL;
		assert_int_equal(pbd_world_load_memory(buf, size, &def, &b, NULL), PBD_OK);
		free(buf);
		assert_true(pbd_world_get_def(b).hard_stiffness == 300);
		for (int s = 0; s < 20; ++s) {
			assert_int_equal(pbd_world_step(a), PBD_OK);
			assert_int_equal(pbd_world_step(b), PBD_OK);
		}
		assert_true(pbd_world_hash(a) == pbd_world_hash(b));
		pbd_world_destroy(a);
		pbd_world_destroy(b);
	}
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pendulum_implicit_methods),
	    cmocka_unit_test(test_pendulum_symplectic),
	    cmocka_unit_test(test_chain_symplectic_bound),
	    cmocka_unit_test(test_chain_explicit_at_rest),
	    cmocka_unit_test(test_setting),
	    cmocka_unit_test(test_pinned_only_row),
	    cmocka_unit_test(test_snapshot_resumes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
