/* Attachments C = |x - p| - rest: the gradient the projection uses equals finite differences of
 * the C the diagnostics measure, one projection lands where the linearisation says (exactly on
 * the sphere for PBD, at the fraction alpha~ / (w + alpha~) of C for XPBD), the energy's derivative
 * is the constraint force, degenerate cases stay finite, a moved target is followed linearly
 * through the substeps and then held, far from the origin the relative motion keeps its bits,
 * and runs are deterministic and survive snapshots. An attachment pulls toward a fixed point of
 * the world, an external body: it conserves no momentum, so that test does not apply. */
#include <stdlib.h>
#include <string.h>

#include "test_physics.h"
#include "model/world.h"

/* Central differences: a step that keeps the truncation error (h^2) and the rounding of the
 * coordinates (eps / h) both well below the tolerances, in each precision. */
#define FD_STEP TEST_TOL(1e-5, 1e-3)

static pbd_world* make_world(pbd_formulation form, pbd_solver solver, int iterations, int substeps) {
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, 0, 0);
	def.formulation = form;
	def.solver = solver;
	def.iterations = iterations;
	def.substeps = substeps;
	def.dt = (pbd_real)0.01;
	return test_world(&def);
}

static uint32_t add_particle(pbd_world* w, pbd_vec3 x, pbd_real inv_mass) {
	uint32_t i;
	assert_int_equal(pbd_world_add_particles(w, 1, &x, NULL, &inv_mass, &i), PBD_OK);
	return i;
}

static uint32_t attach(pbd_world* w, uint32_t i, pbd_vec3 p, pbd_real rest, pbd_real k, pbd_real alpha) {
	pbd_attachment_def d = pbd_attachment_def_default();
	d.particle = i;
	d.target = p;
	d.rest = rest;
	d.stiffness = k;
	d.compliance = alpha;
	uint32_t first;
	assert_int_equal(pbd_world_add_attachments(w, 1, &d, &first), PBD_OK);
	return first;
}

/* The C of the diagnostics (double, from x + x_lo), signed by the test's own geometry. */
static double stats_C(pbd_world* w, pbd_vec3 p, double rest) {
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	const double len = tp_dist(pbd_world_positions(w)[0], p);
	const double c = st.family[PBD_FAMILY_ATTACHMENT].max_violation;
	return len >= rest ? c : -c;
}

/* Gradient: one PBD projection with k = 1 moves the particle by -C grad C (|grad C| = 1), so the
 * projection's gradient is -dx / C; it must equal the central difference of the diagnostics' C.
 * Energy: under XPBD the reported energy is C^2 / (2 alpha), and its central difference is the
 * constraint force's C grad / alpha. At random configurations, stretched and compressed. */
static void test_gradient_and_energy(void** state) {
	(void)state;
	uint64_t seed = 11;
	for (int trial = 0; trial < 20; ++trial) {
		const pbd_vec3 p = pbd_v3((pbd_real)tp_rand_range(&seed, -1, 1), (pbd_real)tp_rand_range(&seed, -1, 1),
		                          (pbd_real)tp_rand_range(&seed, -1, 1));
		const pbd_vec3 x0 =
		    pbd_v3_add(p, pbd_v3((pbd_real)tp_rand_range(&seed, -1, 1), (pbd_real)tp_rand_range(&seed, -1, 1),
		                         (pbd_real)tp_rand_range(&seed, -1, 1)));
		const double rest = tp_rand_range(&seed, 0, 1.5);
		const double alpha = 1e-3;
		pbd_world* w = make_world(PBD_FORMULATION_XPBD, PBD_SOLVER_GAUSS_SEIDEL, 1, 1);
		add_particle(w, x0, (pbd_real)0.7);
		attach(w, 0, p, (pbd_real)rest, 1, (pbd_real)alpha);
		const double C = stats_C(w, p, rest);
		if (fabs(C) < 0.05) {
			pbd_world_destroy(w);
			continue;
		}
		/* central differences of C and of E = C^2 / (2 alpha) */
		double fd[3], fe[3];
		for (int a = 0; a < 3; ++a) {
			double cp = 0, cm = 0, ep = 0, em = 0, hp = 0, hm = 0;
			for (int sgn = 0; sgn < 2; ++sgn) {
				pbd_vec3 y = x0;
				pbd_real* c = a == 0 ? &y.x : a == 1 ? &y.y : &y.z;
				*c = *c + (pbd_real)(sgn ? -FD_STEP : FD_STEP);
				assert_int_equal(pbd_world_set_positions(w, 0, 1, &y), PBD_OK);
				pbd_stats st;
				pbd_world_get_stats(w, &st);
				const double cc = stats_C(w, p, rest);
				const double coord = a == 0 ? (double)y.x : a == 1 ? (double)y.y : (double)y.z;
				if (sgn) {
					cm = cc, em = st.family[PBD_FAMILY_ATTACHMENT].elastic_energy, hm = coord;
				} else {
					cp = cc, ep = st.family[PBD_FAMILY_ATTACHMENT].elastic_energy, hp = coord;
				}
			}
			fd[a] = (cp - cm) / (hp - hm);
			fe[a] = (ep - em) / (hp - hm);
		}
		assert_int_equal(pbd_world_set_positions(w, 0, 1, &x0), PBD_OK);
		pbd_stats st;
		pbd_world_get_stats(w, &st);
		assert_near(st.family[PBD_FAMILY_ATTACHMENT].elastic_energy, C * C / (2 * alpha), 1e-9 + 1e-6 * C * C / alpha);
		/* the projection's gradient (PBD, k = 1) */
		assert_int_equal(pbd_world_set_formulation(w, PBD_FORMULATION_PBD), PBD_OK);
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const tp_dvec3 dx = tp_dsub(tp_d(pbd_world_positions(w)[0]), tp_d(x0));
		const double g[3] = {-dx.x / C, -dx.y / C, -dx.z / C};
		const double tol = TEST_TOL(1e-6, 2e-3);
		for (int a = 0; a < 3; ++a) {
			assert_near(g[a], fd[a], tol);
			assert_near(fe[a], C * g[a] / alpha, tol * fabs(C) / alpha + 1e-6);
		}
		pbd_world_destroy(w);
	}
}

/* One projection, one free constraint: PBD k = 1 puts the particle on the sphere (C after is at
 * rounding level, far below C^2); XPBD leaves C alpha~ / (w + alpha~) of it, since the particle
 * moves along the exact direction of the constraint. Both solvers (one constraint: equal). */
static void test_single_projection(void** state) {
	(void)state;
	const pbd_solver solvers[2] = {PBD_SOLVER_GAUSS_SEIDEL, PBD_SOLVER_JACOBI};
	for (int s = 0; s < 2; ++s) {
		const pbd_vec3 p = pbd_v3((pbd_real)0.2, (pbd_real)-0.4, (pbd_real)0.1);
		const pbd_vec3 x0 = pbd_v3((pbd_real)1.1, (pbd_real)0.3, (pbd_real)-0.6);
		const double len0 = tp_dist(x0, p);
		for (int r = 0; r < 2; ++r) {
			const double rest = r ? 0.5 : 2.0; /* stretched, compressed */
			pbd_world* w = make_world(PBD_FORMULATION_PBD, solvers[s], 1, 1);
			add_particle(w, x0, 2);
			attach(w, 0, p, (pbd_real)rest, 1, 0);
			assert_int_equal(pbd_world_step(w), PBD_OK);
			assert_near(tp_dist(pbd_world_positions(w)[0], p), rest, TEST_TOL(1e-12, 1e-6));
			pbd_world_destroy(w);

			const double alpha = 2e-4, w_inv = 2, at = alpha / (0.01 * 0.01);
			w = make_world(PBD_FORMULATION_XPBD, solvers[s], 1, 1);
			add_particle(w, x0, (pbd_real)w_inv);
			attach(w, 0, p, (pbd_real)rest, 1, (pbd_real)alpha);
			assert_int_equal(pbd_world_step(w), PBD_OK);
			const double C1 = tp_dist(pbd_world_positions(w)[0], p) - rest;
			assert_near(C1, (len0 - rest) * at / (w_inv + at), TEST_TOL(1e-12, 2e-6));
			pbd_world_destroy(w);
		}
	}
}

/* Stiffness k in (0, 1) is iteration-corrected: n iterations remove the fraction k of C. */
static void test_iteration_corrected_stiffness(void** state) {
	(void)state;
	const int ns[3] = {1, 4, 20};
	for (int i = 0; i < 3; ++i) {
		pbd_world* w = make_world(PBD_FORMULATION_PBD, PBD_SOLVER_GAUSS_SEIDEL, ns[i], 1);
		add_particle(w, pbd_v3(3, 0, 0), 1);
		attach(w, 0, pbd_v3(0, 0, 0), 1, (pbd_real)0.25, 0);
		assert_int_equal(pbd_world_step(w), PBD_OK);
		assert_near(pbd_world_positions(w)[0].x, 1 + 2 * 0.75, TEST_TOL(1e-12, 2e-6));
		pbd_world_destroy(w);
	}
}

/* Degenerate: a particle on its point with rest 0 is satisfied (nothing moves, no NaN); with
 * rest > 0 it has no direction and is left alone; a pinned particle never moves; with traps on. */
static void test_degenerate(void** state) {
	(void)state;
	for (int form = 0; form < 2; ++form)
		for (int solver = 0; solver < 2; ++solver) {
			pbd_world* w = make_world((pbd_formulation)form, (pbd_solver)solver, 3, 2);
			const pbd_vec3 p = pbd_v3((pbd_real)0.5, 2, -1);
			add_particle(w, p, 1);
			add_particle(w, p, 1);
			add_particle(w, pbd_v3(3, 3, 3), 0);
			attach(w, 0, p, 0, 1, 0);
			attach(w, 1, p, (pbd_real)0.5, 1, (pbd_real)1e-4);
			attach(w, 2, p, 0, 1, 0);
			for (int s = 0; s < 3; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
			const pbd_vec3* x = pbd_world_positions(w);
			assert_memory_equal(&x[0], &p, sizeof p);
			assert_true(pbd_v3_is_finite(x[1]));
			assert_true(x[2].x == 3 && x[2].y == 3 && x[2].z == 3);
			pbd_stats st;
			pbd_world_get_stats(w, &st);
			assert_true(isfinite(st.family[PBD_FAMILY_ATTACHMENT].max_violation));
			pbd_world_destroy(w);
		}
}

/* A moved target is followed linearly through the substeps, as a pinned particle's target: a
 * hard attachment at rest 0 and a pinned particle given the same target trace the same path,
 * end on the target with velocity (target - start) / dt, and in the next step (no new target)
 * both stay there at rest. Setting the target twice before a step moves it once, to the last. */
static void test_moving_target(void** state) {
	(void)state;
	pbd_world* w = make_world(PBD_FORMULATION_PBD, PBD_SOLVER_GAUSS_SEIDEL, 1, 4);
	const pbd_vec3 start = pbd_v3(1, 2, 3), goal = pbd_v3(2, 2, (pbd_real)3.5);
	add_particle(w, start, 1);
	add_particle(w, pbd_v3_add(start, pbd_v3(0, 5, 0)), 0);
	const uint32_t a = attach(w, 0, start, 0, 1, 0);
	assert_int_equal(pbd_world_set_attachment_target(w, a, pbd_v3(9, 9, 9)), PBD_OK);
	assert_int_equal(pbd_world_set_attachment_target(w, a, goal), PBD_OK);
	assert_int_equal(pbd_particle_set_target(w, 1, pbd_v3_add(goal, pbd_v3(0, 5, 0))), PBD_OK);
	pbd_attachment_def got;
	assert_int_equal(pbd_world_get_attachment(w, a, &got), PBD_OK);
	assert_memory_equal(&got.target, &goal, sizeof goal);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_vec3* x = pbd_world_positions(w);
	const pbd_vec3* v = pbd_world_velocities(w);
	const double tol = TEST_TOL(1e-12, 1e-5);
	assert_near(x[0].x, 2, tol);
	assert_near(x[0].z, 3.5, tol);
	/* the velocity of the last substep: a quarter of the way in a quarter of dt */
	assert_near(v[0].x, 1 / 0.01, 1e3 * tol);
	assert_near(v[0].z, 0.5 / 0.01, 1e3 * tol);
	assert_near(v[0].x, v[1].x, 1e3 * tol);
	assert_near(v[0].z, v[1].z, 1e3 * tol);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_near(x[0].x, 2, tol);
	assert_near(x[0].z, 3.5, tol);
	assert_near(tp_len(v[0]), 0, 1e3 * tol);
	assert_near(tp_len(v[1]), 0, 1e3 * tol);
	pbd_world_destroy(w);
}

/* Far from the origin: the same compliant attachment swinging under gravity at the origin and
 * at 1e5 m (where a float's spacing is 8 mm) moves the same relative to its point, to the
 * precision of the full position x + x_lo (measured: within 3e-7 m in float), because x - p is
 * formed before the displacement. */
static void test_far_from_origin(void** state) {
	(void)state;
	const pbd_vec3 offsets[2] = {{0, 0, 0}, {(pbd_real)1e5, (pbd_real)-1e5, (pbd_real)1e5}};
	double rel[2][3];
	for (int o = 0; o < 2; ++o) {
		pbd_world_def def = pbd_world_def_default();
		def.formulation = PBD_FORMULATION_XPBD;
		def.substeps = 10;
		pbd_world* w = test_world(&def);
		const pbd_vec3 p = offsets[o];
		add_particle(w, pbd_v3_add(p, pbd_v3((pbd_real)0.5, 0, (pbd_real)0.25)), 1);
		attach(w, 0, p, (pbd_real)0.5, 1, (pbd_real)1e-3);
		for (int s = 0; s < 60; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_vec3 x = w->x[0], lo = w->x_lo[0];
		rel[o][0] = ((double)x.x - (double)p.x) + (double)lo.x;
		rel[o][1] = ((double)x.y - (double)p.y) + (double)lo.y;
		rel[o][2] = ((double)x.z - (double)p.z) + (double)lo.z;
		pbd_world_destroy(w);
	}
	for (int a = 0; a < 3; ++a) assert_near(rel[1][a], rel[0][a], TEST_TOL(1e-9, 5e-6));
	/* and it did swing: the bob is well away from its start */
	assert_true(fabs(rel[0][1]) > 0.1);
}

/* A small scene: a chain of particles each attached to points on a circle, hard and soft,
 * stepped under both solvers and formulations: finite, hard ones converge to C ~ 0 under
 * gravity-free settling, two identical runs hash the same, and a snapshot taken while a target
 * is in motion resumes bit-identically. */
static pbd_world* scene(pbd_formulation form, pbd_solver solver) {
	pbd_world_def def = pbd_world_def_default();
	def.formulation = form;
	def.solver = solver;
	def.iterations = 8;
	def.substeps = 2;
	pbd_world* w = test_world(&def);
	enum { N = 12 };
	pbd_vec3 x[N];
	pbd_real iw[N];
	for (int i = 0; i < N; ++i) {
		x[i] = pbd_v3((pbd_real)(0.3 * i), (pbd_real)(0.1 * (i % 3)), 0);
		iw[i] = (pbd_real)(0.5 + 0.25 * (i % 4));
	}
	assert_int_equal(pbd_world_add_particles(w, N, x, NULL, iw, NULL), PBD_OK);
	pbd_attachment_def d[N];
	for (int i = 0; i < N; ++i) {
		d[i] = pbd_attachment_def_default();
		d[i].particle = (uint32_t)i;
		d[i].target = pbd_v3((pbd_real)(0.3 * i), 1, (pbd_real)(0.05 * i));
		d[i].rest = (pbd_real)(i % 2 ? 0.2 : 0);
		d[i].compliance = (pbd_real)(i % 3 ? 0 : 1e-4);
		d[i].stiffness = (pbd_real)(i % 3 ? 1 : 0.5);
	}
	assert_int_equal(pbd_world_add_attachments(w, N, d, NULL), PBD_OK);
	pbd_distance_def dd[N - 1];
	for (int i = 0; i + 1 < N; ++i) {
		dd[i] = pbd_distance_def_default();
		dd[i].a = (uint32_t)i;
		dd[i].b = (uint32_t)i + 1;
	}
	assert_int_equal(pbd_world_add_distances(w, N - 1, dd, NULL), PBD_OK);
	return w;
}

static void test_scene_runs(void** state) {
	(void)state;
	for (int form = 0; form < 2; ++form)
		for (int solver = 0; solver < 2; ++solver) {
			pbd_world* a = scene((pbd_formulation)form, (pbd_solver)solver);
			pbd_world* b = scene((pbd_formulation)form, (pbd_solver)solver);
			for (int s = 0; s < 40; ++s) {
				if (s == 10) {
					pbd_world_set_attachment_target(a, 3, pbd_v3(1, 2, 0));
					pbd_world_set_attachment_target(b, 3, pbd_v3(1, 2, 0));
				}
				assert_int_equal(pbd_world_step(a), PBD_OK);
				assert_int_equal(pbd_world_step(b), PBD_OK);
			}
			assert_true(tp_all_finite(a));
			assert_true(pbd_world_hash(a) == pbd_world_hash(b));
			/* a snapshot taken with a target set but not yet reached */
			assert_int_equal(pbd_world_set_attachment_target(a, 5, pbd_v3((pbd_real)1.5, (pbd_real)0.5, 1)), PBD_OK);
			size_t size = 0;
			assert_int_equal(pbd_world_save_memory(a, NULL, 0, &size), PBD_OK);
			void* buf = malloc(size);
			assert_int_equal(pbd_world_save_memory(a, buf, size, &size), PBD_OK);
			pbd_world* c = NULL;
			pbd_error err;
			assert_int_equal(pbd_world_load_memory(buf, size, NULL, &c, &err), PBD_OK);
			free(buf);
			for (int s = 0; s < 30; ++s) {
				assert_int_equal(pbd_world_step(a), PBD_OK);
				assert_int_equal(pbd_world_step(c), PBD_OK);
			}
			assert_true(pbd_world_hash(a) == pbd_world_hash(c));
			pbd_world_destroy(a);
			pbd_world_destroy(b);
			pbd_world_destroy(c);
		}
	/* Hard attachments without gravity settle onto their spheres. */
	pbd_world* w = make_world(PBD_FORMULATION_XPBD, PBD_SOLVER_JACOBI, 20, 2);
	for (int i = 0; i < 5; ++i) {
		add_particle(w, pbd_v3((pbd_real)i, 1, 0), 1);
		attach(w, (uint32_t)i, pbd_v3((pbd_real)i, 0, (pbd_real)0.3), (pbd_real)0.5, 1, 0);
	}
	for (int s = 0; s < 20; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	assert_true(st.family[PBD_FAMILY_ATTACHMENT].max_violation < TEST_TOL(1e-9, 1e-5));
	assert_true(st.family[PBD_FAMILY_ATTACHMENT].energy_defined);
	assert_int_equal(st.family[PBD_FAMILY_ATTACHMENT].count, 5);
	pbd_world_destroy(w);
}

/* Stats: strain |C| / rest where rest > 0, energy undefined for a PBD stiffness in (0, 1). */
static void test_stats_and_material(void** state) {
	(void)state;
	pbd_world* w = make_world(PBD_FORMULATION_PBD, PBD_SOLVER_GAUSS_SEIDEL, 1, 1);
	add_particle(w, pbd_v3(2, 0, 0), 1);
	add_particle(w, pbd_v3(0, 3, 0), 1);
	attach(w, 0, pbd_v3(0, 0, 0), 1, 1, 0);
	attach(w, 1, pbd_v3(0, 0, 0), 0, 1, 0);
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	const pbd_family_stats* fs = &st.family[PBD_FAMILY_ATTACHMENT];
	assert_near(fs->max_violation, 3, 1e-12);
	assert_near(fs->max_strain, 1, 1e-12); /* only the one with rest 1 has a strain */
	assert_near(fs->mean_strain, 1, 1e-12);
	assert_true(fs->energy_defined && fs->elastic_energy == 0);
	assert_int_equal(pbd_world_set_attachment_material(w, 1, 1, (pbd_real)0.5, 0), PBD_OK);
	pbd_world_get_stats(w, &st);
	assert_false(st.family[PBD_FAMILY_ATTACHMENT].energy_defined);
	pbd_attachment_def d;
	assert_int_equal(pbd_world_get_attachment(w, 1, &d), PBD_OK);
	assert_true(d.stiffness == (pbd_real)0.5 && d.particle == 1);
	assert_string_equal(pbd_family_name(PBD_FAMILY_ATTACHMENT), "attachment");
	pbd_world_destroy(w);
}

/* Refusals name the function, the constraint and the field. */
static void test_errors(void** state) {
	(void)state;
	char last[256] = "";
	pbd_world_def def = pbd_world_def_default();
	def.log = test_log_keep;
	def.log_user = last;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	add_particle(w, pbd_v3(0, 0, 0), 1);
	pbd_attachment_def d[2] = {pbd_attachment_def_default(), pbd_attachment_def_default()};
	d[1].particle = 7;
	assert_int_equal(pbd_world_add_attachments(w, 2, d, NULL), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(last, "pbd_world_add_attachments: constraint 1: particle"));
	assert_int_equal(pbd_world_attachment_count(w), 0);
	d[1].particle = 0;
	d[1].rest = -1;
	assert_int_equal(pbd_world_add_attachments(w, 2, d, NULL), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(last, "rest"));
	d[1].rest = 0;
	d[1].target.y = (pbd_real)INFINITY;
	assert_int_equal(pbd_world_add_attachments(w, 2, d, NULL), PBD_ERR_NOT_FINITE);
	assert_non_null(strstr(last, "target"));
	d[1].target.y = 0;
	d[1].stiffness = 2;
	assert_int_equal(pbd_world_add_attachments(w, 2, d, NULL), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(last, "stiffness"));
	d[1].stiffness = 1;
	d[1].compliance = -1;
	assert_int_equal(pbd_world_add_attachments(w, 2, d, NULL), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(last, "compliance"));
	d[1].compliance = 0;
	assert_int_equal(pbd_world_add_attachments(w, 2, d, NULL), PBD_OK);
	assert_int_equal(pbd_world_set_attachment_target(w, 2, pbd_v3(0, 0, 0)), PBD_ERR_OUT_OF_RANGE);
	assert_int_equal(pbd_world_set_attachment_target(w, 0, pbd_v3((pbd_real)NAN, 0, 0)), PBD_ERR_NOT_FINITE);
	assert_int_equal(pbd_world_set_attachment_material(w, 1, 2, 1, 0), PBD_ERR_OUT_OF_RANGE);
	assert_int_equal(pbd_world_add_attachments(w, 0, d, NULL), PBD_ERR_INVALID_ARGUMENT);
	pbd_world_destroy(w);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gradient_and_energy),
	    cmocka_unit_test(test_single_projection),
	    cmocka_unit_test(test_iteration_corrected_stiffness),
	    cmocka_unit_test(test_degenerate),
	    cmocka_unit_test(test_moving_target),
	    cmocka_unit_test(test_far_from_origin),
	    cmocka_unit_test(test_scene_runs),
	    cmocka_unit_test(test_stats_and_material),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
