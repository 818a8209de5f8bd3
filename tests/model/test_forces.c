/* Air and impulses: the drag of one triangle matches its formula to rounding and splits into
 * equal thirds, an edge-on or zero-area triangle feels no normal force, sheets and ropes fall at
 * their analytic terminal velocities, particle drag decays at c / m, the wind carries a particle
 * to its speed, gusts stay within their bounds and are deterministic, impulses and explosions
 * change momentum by exactly what they give, bad arguments are refused with their message, and
 * a snapshot keeps the air. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/forces.h"
#include "test_physics.h"

static pbd_world_def no_gravity(void) {
	pbd_world_def d = pbd_world_def_default();
	d.gravity = pbd_v3(0, 0, 0);
	return d;
}

/* d with the mean wind `wind` and gusts of strength s at f Hz. */
static pbd_world_def gusty(pbd_world_def d, pbd_vec3 wind, double s, double f) {
	d.wind = wind;
	d.gust_strength = (pbd_real)s;
	d.gust_frequency = (pbd_real)f;
	return d;
}

/* Three free particles of 1 kg at a, b, c and the triangle (0, 1, 2). */
static pbd_world* one_triangle(const pbd_world_def* def, pbd_vec3 a, pbd_vec3 b, pbd_vec3 c) {
	pbd_world* w = test_world(def);
	const pbd_vec3 x[3] = {a, b, c};
	const pbd_real inv[3] = {1, 1, 1};
	assert_int_equal(pbd_world_add_particles(w, 3, x, NULL, inv, NULL), PBD_OK);
	const uint32_t tri[3] = {0, 1, 2};
	assert_int_equal(pbd_world_add_triangles(w, 1, tri, NULL), PBD_OK);
	return w;
}

/* The air force on every particle of w at time t, from its own velocities. */
static bool air_now(const pbd_world* w, double t, pbd_vec3* out) {
	for (uint32_t i = 0; i < pbd_world_particle_count(w); ++i) out[i] = pbd_v3(0, 0, 0);
	return pbd_forces_air(w, t, pbd_world_velocities(w), out);
}

static void assert_vec_near(pbd_vec3 a, tp_dvec3 b, double tol) {
	if (fabs((double)a.x - b.x) > tol || fabs((double)a.y - b.y) > tol || fabs((double)a.z - b.z) > tol)
		fail_msg("(%.9g, %.9g, %.9g) differs from (%.9g, %.9g, %.9g) by more than %g", (double)a.x, (double)a.y,
		         (double)a.z, b.x, b.y, b.z, tol);
}

/* ---- the force of one triangle ----------------------------------------------------------- */

/* Facing the wind: A Cn |U| along the wind, a third at each corner; tilted and moving: the
 * formula evaluated in double; and the force is added to what out holds. */
static void test_triangle_force(void** state) {
	(void)state;
	const pbd_world_def def = no_gravity();
	/* Area 1.5 m^2, normal +z; the wind blows at it along -z. */
	pbd_world* w = one_triangle(&def, pbd_v3(0, 0, 0), pbd_v3(2, 0, 0), pbd_v3(0, (pbd_real)1.5, 0));
	pbd_vec3 out[3];
	assert_false(air_now(w, 0, out)); /* no drag yet: nothing to do */
	out[0] = pbd_v3(7, 7, 7);
	assert_false(pbd_forces_air(w, 0, pbd_world_velocities(w), out));
	assert_true(out[0].x == 7 && out[0].y == 7 && out[0].z == 7); /* and nothing written */

	assert_int_equal(pbd_world_set_wind(w, pbd_v3(0, 0, -4), 0, (pbd_real)0.5), PBD_OK);
	assert_int_equal(pbd_world_set_triangle_drag(w, 0, 1, (pbd_real)0.7, (pbd_real)0.3, pbd_v3(0, 0, 0)), PBD_OK);
	assert_true(air_now(w, 0, out));
	const tp_dvec3 third = {0, 0, -1.5 * 0.7 * 4 / 3}; /* A Cn |U| / 3 = 1.4 N, along the wind */
	for (int k = 0; k < 3; ++k) assert_vec_near(out[k], third, TEST_TOL(1e-14, 1e-6));
	/* Added, not stored. */
	for (int k = 0; k < 3; ++k) out[k] = pbd_v3(1, 2, 3);
	assert_true(pbd_forces_air(w, 0, pbd_world_velocities(w), out));
	assert_vec_near(out[1], (tp_dvec3){1, 2, 3 - 1.4}, TEST_TOL(1e-14, 1e-6));
	pbd_world_destroy(w);

	/* Any orientation, moving corners, a wind of the triangle's own. */
	const pbd_vec3 a = {(pbd_real)0.3, (pbd_real)-0.2, (pbd_real)1.1},
	               b = {(pbd_real)1.4, (pbd_real)0.5, (pbd_real)0.2},
	               c = {(pbd_real)-0.4, (pbd_real)0.9, (pbd_real)0.6};
	w = one_triangle(&def, a, b, c);
	const pbd_vec3 vel[3] = {{1, (pbd_real)-0.5, 2}, {(pbd_real)0.25, 0, (pbd_real)-1}, {-2, 1, (pbd_real)0.5}};
	assert_int_equal(pbd_world_set_velocities(w, 0, 3, vel), PBD_OK);
	const pbd_vec3 wind = {3, (pbd_real)-1.5, (pbd_real)2.5}, own = {(pbd_real)-0.5, 1, (pbd_real)0.75};
	const double cn = 0.9, ct = 0.15;
	assert_int_equal(pbd_world_set_wind(w, wind, 0, 1), PBD_OK);
	assert_int_equal(pbd_world_set_triangle_drag(w, 0, 1, (pbd_real)cn, (pbd_real)ct, own), PBD_OK);
	assert_true(air_now(w, 0, out));
	const tp_dvec3 e1 = tp_dsub(tp_d(b), tp_d(a)), e2 = tp_dsub(tp_d(c), tp_d(a));
	tp_dvec3 n = {e1.y * e2.z - e1.z * e2.y, e1.z * e2.x - e1.x * e2.z, e1.x * e2.y - e1.y * e2.x};
	const double area = tp_dlen(n) / 2;
	n = (tp_dvec3){n.x / (2 * area), n.y / (2 * area), n.z / (2 * area)};
	tp_dvec3 u;
	u.x = (double)wind.x + (double)own.x - ((double)vel[0].x + (double)vel[1].x + (double)vel[2].x) / 3;
	u.y = (double)wind.y + (double)own.y - ((double)vel[0].y + (double)vel[1].y + (double)vel[2].y) / 3;
	u.z = (double)wind.z + (double)own.z - ((double)vel[0].z + (double)vel[1].z + (double)vel[2].z) / 3;
	const double un = n.x * u.x + n.y * u.y + n.z * u.z;
	const tp_dvec3 F = {area * (cn * un * n.x + ct * (u.x - un * n.x)), area * (cn * un * n.y + ct * (u.y - un * n.y)),
	                    area * (cn * un * n.z + ct * (u.z - un * n.z))};
	const tp_dvec3 F3 = {F.x / 3, F.y / 3, F.z / 3};
	for (int k = 0; k < 3; ++k) assert_vec_near(out[k], F3, TEST_TOL(1e-13, 2e-6) * tp_dlen(F));
	/* The three shares are the same numbers, so the triangle's force is exactly their sum. */
	assert_memory_equal(&out[0], &out[1], sizeof out[0]);
	assert_memory_equal(&out[0], &out[2], sizeof out[0]);
	assert_true(tp_dlen(F) > 1); /* not a trivial case */
	pbd_world_destroy(w);
}

/* A triangle edge-on to the wind feels no normal force: nothing at all without tangential drag,
 * only A Ct U along the wind with it. */
static void test_edge_on(void** state) {
	(void)state;
	const pbd_world_def def = no_gravity();
	pbd_world* w = one_triangle(&def, pbd_v3(0, 0, 0), pbd_v3(1, 0, 0), pbd_v3(0, 0, 1)); /* normal -y, area 0.5 */
	assert_int_equal(pbd_world_set_wind(w, pbd_v3(5, 0, -2), 0, 1), PBD_OK);
	assert_int_equal(pbd_world_set_triangle_drag(w, 0, 1, 3, 0, pbd_v3(0, 0, 0)), PBD_OK);
	pbd_vec3 out[3];
	assert_true(air_now(w, 0, out));
	for (int k = 0; k < 3; ++k) assert_true(out[k].x == 0 && out[k].y == 0 && out[k].z == 0);
	/* Stepped, it does not move at all. */
	for (int s = 0; s < 60; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	for (int k = 0; k < 3; ++k) assert_true(tp_len(pbd_world_velocities(w)[k]) == 0);

	assert_int_equal(pbd_world_set_triangle_drag(w, 0, 1, 3, (pbd_real)0.4, pbd_v3(0, 0, 0)), PBD_OK);
	assert_true(air_now(w, 0, out));
	for (int k = 0; k < 3; ++k) {
		assert_true(out[k].y == 0); /* no component across the triangle */
		assert_vec_near(out[k], (tp_dvec3){0.5 * 0.4 * 5 / 3, 0, 0.5 * 0.4 * -2 / 3}, TEST_TOL(1e-15, 1e-7));
	}
	pbd_world_destroy(w);
}

/* Triangles of zero area (collinear corners, two corners at one point) feel nothing, and a world
 * of them steps in wind and gravity without a NaN (the traps are on). */
static void test_zero_area(void** state) {
	(void)state;
	const pbd_world_def def = gusty(pbd_world_def_default(), pbd_v3(8, 0, 3), 0.5, 0.5);
	pbd_world* w = test_world(&def);
	const pbd_vec3 x[5] = {{0, 0, 0}, {1, 1, 1}, {2, 2, 2}, {5, 0, 0}, {5, 0, 0}};
	const pbd_real inv[5] = {1, 1, 1, 1, 1};
	assert_int_equal(pbd_world_add_particles(w, 5, x, NULL, inv, NULL), PBD_OK);
	const uint32_t tri[6] = {0, 1, 2, 3, 4, 0};
	assert_int_equal(pbd_world_add_triangles(w, 2, tri, NULL), PBD_OK);
	assert_int_equal(pbd_world_set_triangle_drag(w, 0, 2, 2, 1, pbd_v3(0, 1, 0)), PBD_OK);
	pbd_vec3 out[5];
	assert_true(air_now(w, 0.3, out));
	for (int k = 0; k < 5; ++k) assert_true(out[k].x == 0 && out[k].y == 0 && out[k].z == 0);
	for (int s = 0; s < 120; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_true(tp_all_finite(w));
	/* Nothing but gravity acted: free fall. (Falling, the corners' rounded positions make
	 * triangles of an ulp's area, which catch an ulp's worth of air.) */
	const double t = pbd_world_time(w);
	for (int k = 0; k < 5; ++k) {
		assert_near(pbd_world_velocities(w)[k].y, -9.81 * t, TEST_TOL(1e-9, 1e-3));
		assert_near(pbd_world_velocities(w)[k].x, 0, TEST_TOL(1e-9, 1e-3));
	}
	pbd_world_destroy(w);
}

/* ---- terminal velocities ----------------------------------------------------------------- */

/* Mean vertical velocity of particles [first, first + n) and their spread. */
static double mean_vy(const pbd_world* w, uint32_t first, uint32_t n, double* spread) {
	const pbd_vec3* v = pbd_world_velocities(w);
	double s = 0, lo = INFINITY, hi = -INFINITY;
	for (uint32_t i = first; i < first + n; ++i) {
		s += (double)v[i].y;
		lo = fmin(lo, (double)v[i].y);
		hi = fmax(hi, (double)v[i].y);
	}
	*spread = hi - lo;
	return s / n;
}

/* Adds the object of sd to w, steps 5 s and returns the relative error of the object's mean fall
 * speed against vt; all its particles fall at one speed. */
static double fall_error(pbd_world* w, const pbd_soft_def* sd, double vt, const char* label) {
	pbd_soft_info info;
	assert_int_equal(test_soft_create(w, sd, &info), PBD_OK);
	for (int s = 0; s < 300; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	double spread;
	const double v = -mean_vy(w, info.first_particle, info.particle_count, &spread);
	const double err = fabs(v - vt) / vt;
	print_message("%s: terminal velocity %.7f m/s, analytic %.7f, error %.2e\n", label, v, vt, err);
	assert_true(spread < 1e-4 * vt);
	return err;
}

/* A horizontal sheet of area density rho with normal drag Cn falls at v_t = rho g / Cn. Its
 * border particles carry less area and proportionally less mass, so the whole sheet falls as
 * one, flat. Both formulations; the time constant is rho / Cn = 0.3 s and the run 5 s. */
static void test_terminal_velocity_sheet(void** state) {
	(void)state;
	const double rho = 0.15, cn = 0.5, g = 9.81, vt = rho * g / cn;
	const pbd_formulation forms[2] = {PBD_FORMULATION_XPBD, PBD_FORMULATION_PBD};
	for (int f = 0; f < 2; ++f) {
		pbd_world_def def = pbd_world_def_default();
		def.formulation = forms[f];
		def.substeps = 4;
		def.iterations = 4;
		pbd_world* w = test_world(&def);
		pbd_mesh m;
		tp_grid(&m, 9, 9, 1, pbd_v3(0, 10, 0), 2, true);
		pbd_soft_def sd = pbd_soft_def_default();
		sd.mesh = &m;
		sd.mass_mode = PBD_MASS_DENSITY;
		sd.mass = (pbd_real)rho;
		sd.drag_normal = (pbd_real)cn;
		const double err = fall_error(w, &sd, vt, forms[f] == PBD_FORMULATION_XPBD ? "sheet (xpbd)" : "sheet (pbd)");
		pbd_mesh_free(&m);
		assert_true(err < 0.02);
		assert_true(err < 1e-4); /* the balance is exact; what is left is e^(-t / tau) and rounding */
		pbd_world_destroy(w);
	}

	/* One triangle of three loose particles, each a third of its mass, falling flat. */
	pbd_world* w = test_world(NULL);
	const pbd_vec3 x[3] = {{0, 5, 0}, {(pbd_real)0.6, 5, 0}, {0, 5, (pbd_real)0.4}};
	const double third = 0.6 * 0.4 / 2 * rho / 3;
	const pbd_real mass[3] = {(pbd_real)third, (pbd_real)third, (pbd_real)third};
	assert_int_equal(pbd_world_add_particles_mass(w, 3, x, NULL, mass, NULL), PBD_OK);
	const uint32_t tri[3] = {0, 2, 1};
	assert_int_equal(pbd_world_add_triangles(w, 1, tri, NULL), PBD_OK);
	assert_int_equal(pbd_world_set_triangle_drag(w, 0, 1, (pbd_real)cn, 0, pbd_v3(0, 0, 0)), PBD_OK);
	for (int s = 0; s < 300; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	double spread;
	const double v = mean_vy(w, 0, 3, &spread);
	print_message("triangle: terminal velocity %.7f m/s, error %.2e\n", -v, fabs(-v - vt) / vt);
	assert_true(fabs(-v - vt) < 0.02 * vt);
	pbd_world_destroy(w);
}

/* A rope with drag c on each particle of mass m falls at m g / c. */
static void test_terminal_velocity_rope(void** state) {
	(void)state;
	const double m = 0.05, c = 0.2, g = 9.81, vt = m * g / c;
	pbd_world_def def = pbd_world_def_default();
	def.formulation = PBD_FORMULATION_XPBD;
	def.substeps = 4;
	pbd_world* w = test_world(&def);
	pbd_rope_def rd = pbd_rope_def_default();
	rd.start = pbd_v3(0, 20, 0);
	rd.end = pbd_v3(2, 20, 0);
	rd.segments = 20;
	pbd_mesh mesh;
	pbd_error err;
	assert_int_equal(pbd_mesh_rope(&rd, &mesh, &err), PBD_OK);
	pbd_soft_def sd = pbd_soft_def_default();
	sd.mesh = &mesh;
	sd.mass = (pbd_real)m;
	sd.drag_particle = (pbd_real)c;
	assert_true(fall_error(w, &sd, vt, "rope") < 0.02);
	pbd_mesh_free(&mesh);
	pbd_world_destroy(w);
}

/* ---- particle drag and wind -------------------------------------------------------------- */

/* Without gravity, a particle's speed decays as exp(-c t / m): the measured rate over every
 * second matches c / m, and the speed at 4 s the exponential. */
static void test_particle_drag_decay(void** state) {
	(void)state;
	pbd_world_def def = no_gravity();
	def.substeps = 10;
	pbd_world* w = test_world(&def);
	const pbd_vec3 x = {0, 0, 0}, v0 = {3, 0, (pbd_real)-1};
	const pbd_real mass = 2;
	assert_int_equal(pbd_world_add_particles_mass(w, 1, &x, &v0, &mass, NULL), PBD_OK);
	const double c = 0.5, rate = c / 2;
	assert_int_equal(pbd_particles_set_drag(w, 0, 1, (pbd_real)c, pbd_v3(0, 0, 0)), PBD_OK);
	double prev = tp_len(v0);
	for (int second = 1; second <= 4; ++second) {
		for (int s = 0; s < 60; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
		const double now = tp_len(pbd_world_velocities(w)[0]);
		const double measured = log(prev / now);
		assert_true(fabs(measured - rate) < 1e-3 * rate);
		prev = now;
	}
	const double analytic = tp_len(v0) * exp(-rate * pbd_world_time(w));
	assert_true(fabs(prev - analytic) < 1e-3 * analytic);
	/* The direction is kept. */
	const pbd_vec3 v = pbd_world_velocities(w)[0];
	assert_near((double)v.x / (double)v.z, -3, TEST_TOL(1e-12, 1e-5));
	pbd_world_destroy(w);
}

/* A particle at rest in a wind goes to the wind's speed and never past it; a wind of its own
 * adds to the world's. The drag is strong (c / m = 4 per second) and the run 20 time constants. */
static void test_wind_carries_particle(void** state) {
	(void)state;
	pbd_world_def def = no_gravity();
	def.wind = pbd_v3(4, 0, 1);
	pbd_world* w = test_world(&def);
	const pbd_vec3 x[2] = {{0, 0, 0}, {0, 1, 0}};
	const pbd_real mass[2] = {(pbd_real)0.5, (pbd_real)0.5};
	assert_int_equal(pbd_world_add_particles_mass(w, 2, x, NULL, mass, NULL), PBD_OK);
	assert_int_equal(pbd_particles_set_drag(w, 0, 1, 2, pbd_v3(0, 0, 0)), PBD_OK);
	assert_int_equal(pbd_particles_set_drag(w, 1, 1, 2, pbd_v3(-1, 2, 0)), PBD_OK);
	const double U = sqrt(17.0);
	for (int s = 0; s < 300; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		assert_true(tp_len(pbd_world_velocities(w)[0]) <= U * (1 + 1e-6));
	}
	assert_vec_near(pbd_world_velocities(w)[0], (tp_dvec3){4, 0, 1}, 1e-5);
	assert_vec_near(pbd_world_velocities(w)[1], (tp_dvec3){3, 2, 1}, 1e-5);
	pbd_world_destroy(w);
}

/* ---- gusts ------------------------------------------------------------------------------- */

static double angle_between(pbd_vec3 a, pbd_vec3 b) {
	const double c =
	    ((double)a.x * (double)b.x + (double)a.y * (double)b.y + (double)a.z * (double)b.z) / (tp_len(a) * tp_len(b));
	return acos(fmin(1, fmax(-1, c)));
}

/* Over many times: the speed within |W| (1 +- s), the direction within s radians of the mean,
 * both reaching well into their range; smooth from one millisecond to the next; steady with
 * s = 0; the same numbers from another world with the same settings. */
static void test_gusts(void** state) {
	(void)state;
	const pbd_vec3 winds[2] = {{6, 0, 2}, {0, 5, 0}}; /* horizontal, and vertical (turns about x) */
	const double s = 0.4;
	for (int k = 0; k < 2; ++k) {
		const pbd_world_def def = gusty(pbd_world_def_default(), winds[k], s, 0.7);
		pbd_world* w = test_world(&def);
		pbd_world* twin = test_world(&def);
		const double W = tp_len(winds[k]);
		double lo = INFINITY, hi = 0, turn = 0, jump = 0;
		pbd_vec3 prev = pbd_world_wind_at(w, 0);
		for (int i = 1; i <= 200000; ++i) {
			const double t = 0.001 * i;
			const pbd_vec3 u = pbd_world_wind_at(w, t);
			const pbd_vec3 again = pbd_world_wind_at(twin, t);
			assert_memory_equal(&u, &again, sizeof u);
			const double speed = tp_len(u);
			lo = fmin(lo, speed);
			hi = fmax(hi, speed);
			turn = fmax(turn, angle_between(u, winds[k]));
			jump = fmax(jump, tp_dist(u, prev));
			prev = u;
		}
		print_message("gusts: speed %.4f to %.4f around %.4f, turn up to %.4f rad, s = %.2f\n", lo, hi, W, turn, s);
		assert_true(lo >= W * (1 - s) * (1 - 1e-6) && hi <= W * (1 + s) * (1 + 1e-6));
		assert_true(turn <= s * (1 + 1e-6));
		assert_true(hi - lo > 1.2 * s * W && turn > 0.6 * s); /* they do vary */
		/* The largest rate of change is about W s 2 pi f times 1.7: 2.1 m/s per 0.1 s. */
		assert_true(jump < 0.03 * W);
		pbd_world_destroy(w);
		pbd_world_destroy(twin);
	}
	pbd_world_def def = pbd_world_def_default();
	def.wind = pbd_v3(3, -1, 2);
	pbd_world* w = test_world(&def);
	for (int i = 0; i < 1000; ++i) {
		const pbd_vec3 u = pbd_world_wind_at(w, 0.37 * i);
		assert_memory_equal(&u, &def.wind, sizeof u);
	}
	assert_int_equal(pbd_world_set_wind(w, def.wind, 2, 3), PBD_OK);
	const pbd_vec3 mean = pbd_world_wind_at(w, INFINITY);
	assert_memory_equal(&mean, &def.wind, sizeof mean);
	const pbd_vec3 none = pbd_world_wind_at(NULL, 1);
	assert_true(none.x == 0 && none.y == 0 && none.z == 0);
	pbd_world_destroy(w);
}

/* The step feels the gusts at the time of each substep: a particle whose drag makes it follow
 * the air within a millisecond moves with wind_at(t), not with the mean. */
static void test_step_follows_gusts(void** state) {
	(void)state;
	pbd_world_def def = gusty(no_gravity(), pbd_v3(6, 0, 2), 0.4, 0.7);
	def.substeps = 10;
	pbd_world* w = test_world(&def);
	const pbd_vec3 x = {0, 0, 0};
	const pbd_real mass = (pbd_real)0.001;
	assert_int_equal(pbd_world_add_particles_mass(w, 1, &x, NULL, &mass, NULL), PBD_OK);
	assert_int_equal(pbd_particles_set_drag(w, 0, 1, 2, pbd_v3(0, 0, 0)), PBD_OK); /* c / m = 2000 / s */
	double off_mean = 0, worst = 0;
	const double h = (double)def.dt / def.substeps;
	for (int s = 0; s < 600; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_vec3 v = pbd_world_velocities(w)[0];
		const pbd_vec3 u = pbd_world_wind_at(w, pbd_world_time(w) - h); /* the last substep's start */
		worst = fmax(worst, tp_dist(v, u));
		off_mean = fmax(off_mean, tp_dist(v, def.wind));
	}
	print_message("gusts in the step: within %.4f m/s of wind_at, up to %.4f from the mean\n", worst, off_mean);
	assert_true(worst < 0.02);
	assert_true(off_mean > 1);
	pbd_world_destroy(w);
}

/* ---- impulses and explosions ------------------------------------------------------------- */

static void test_impulse(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = test_world_keep(msg);
	const pbd_vec3 x[2] = {{0, 0, 0}, {1, 0, 0}}, v[2] = {{1, 2, 3}, {0, 0, 0}};
	const pbd_real inv[2] = {(pbd_real)0.5, 0};
	assert_int_equal(pbd_world_add_particles(w, 2, x, v, inv, NULL), PBD_OK);
	const tp_dvec3 p0 = tp_momentum(w);
	const pbd_vec3 J = {(pbd_real)0.5, -1, 4};
	assert_int_equal(pbd_particle_apply_impulse(w, 0, J), PBD_OK);
	const tp_dvec3 dp = tp_dsub(tp_momentum(w), p0);
	assert_near(dp.x, 0.5, TEST_TOL(1e-15, 1e-6));
	assert_near(dp.y, -1, TEST_TOL(1e-15, 1e-6));
	assert_near(dp.z, 4, TEST_TOL(1e-15, 1e-6));
	assert_vec_near(pbd_world_velocities(w)[0], (tp_dvec3){1.25, 1.5, 5}, 0);
	/* Pinned: ignored. */
	assert_int_equal(pbd_particle_apply_impulse(w, 1, J), PBD_OK);
	assert_vec_near(pbd_world_velocities(w)[1], (tp_dvec3){0, 0, 0}, 0);
	/* Refused, naming the call, and nothing changed. */
	const pbd_vec3 before = pbd_world_velocities(w)[0];
	assert_int_equal(pbd_particle_apply_impulse(w, 2, J), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "pbd_particle_apply_impulse: particle 2 out of range"));
	assert_int_equal(pbd_particle_apply_impulse(w, 0, pbd_v3(0, (pbd_real)NAN, 0)), PBD_ERR_NOT_FINITE);
	assert_non_null(strstr(msg, "pbd_particle_apply_impulse: impulse is not finite"));
	assert_int_equal(pbd_particle_set_inv_mass(w, 0, (pbd_real)1e9), PBD_OK);
	assert_int_equal(pbd_particle_apply_impulse(w, 0, pbd_v3(PBD_REAL_MAX / 2, 0, 0)), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "beyond the scalar's range"));
	assert_memory_equal(&pbd_world_velocities(w)[0], &before, sizeof before);
	assert_int_equal(pbd_particle_apply_impulse(NULL, 0, J), PBD_ERR_INVALID_ARGUMENT);
	pbd_world_destroy(w);
}

/* Six particles on the axes at 0.5 from the centre, one at the centre, two beyond the radius, one
 * pinned inside: the six get J (1 - d / r) each, outward, the total momentum stays 0, the
 * others keep their velocities. Then a random cloud: the radial momentum given is the sum of
 * J (1 - d / r), and a negative impulse pulls in. */
static void test_explode(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = test_world_keep(msg);
	const pbd_real h = (pbd_real)0.5;
	const pbd_vec3 c = {1, 2, 3};
	pbd_vec3 x[10] = {{1 + h, 2, 3}, {1 - h, 2, 3}, {1, 2 + h, 3}, {1, 2 - h, 3}, {1, 2, 3 + h},
	                  {1, 2, 3 - h}, {1, 2, 3},     {3, 2, 3},     {1, 2, 1},     {1, (pbd_real)2.2, 3}};
	const pbd_real mass[10] = {2, 2, 1, 1, (pbd_real)0.5, (pbd_real)0.5, 3, 1, 1, 1};
	assert_int_equal(pbd_world_add_particles_mass(w, 10, x, NULL, mass, NULL), PBD_OK);
	assert_int_equal(pbd_particle_pin(w, 9), PBD_OK);
	uint32_t n = 99;
	assert_int_equal(pbd_world_explode(w, c, 1, 2, &n), PBD_OK);
	assert_int_equal(n, 6);
	const tp_dvec3 p = tp_momentum(w);
	assert_true(tp_dlen(p) < TEST_TOL(1e-15, 1e-6));
	double radial = 0;
	const pbd_vec3* v = pbd_world_velocities(w);
	for (int i = 0; i < 6; ++i) {
		const tp_dvec3 d = tp_dsub(tp_d(x[i]), tp_d(c));
		const double mi = (double)mass[i];
		const double pr = mi * ((double)v[i].x * d.x + (double)v[i].y * d.y + (double)v[i].z * d.z) / tp_dlen(d);
		assert_near(pr, 1, TEST_TOL(1e-15, 1e-6)); /* 2 (1 - 0.5) */
		radial += pr;
	}
	assert_near(radial, 6, TEST_TOL(1e-14, 1e-5));
	for (int i = 6; i < 10; ++i) assert_true(tp_len(v[i]) == 0);
	pbd_world_destroy(w);

	w = test_world_keep(msg);
	uint64_t seed = 7;
	pbd_vec3 cloud[200];
	pbd_real m[200];
	for (int i = 0; i < 200; ++i) {
		cloud[i] = pbd_v3((pbd_real)tp_rand_range(&seed, -2, 2), (pbd_real)tp_rand_range(&seed, -2, 2),
		                  (pbd_real)tp_rand_range(&seed, -2, 2));
		m[i] = (pbd_real)tp_rand_range(&seed, 0.1, 3);
	}
	assert_int_equal(pbd_world_add_particles_mass(w, 200, cloud, NULL, m, NULL), PBD_OK);
	const pbd_vec3 centre = {(pbd_real)0.1, (pbd_real)-0.2, (pbd_real)0.3};
	const double r = 1.7, J = -0.8;
	assert_int_equal(pbd_world_explode(w, centre, (pbd_real)r, (pbd_real)J, &n), PBD_OK);
	double given = 0, expected = 0;
	uint32_t inside = 0;
	v = pbd_world_velocities(w);
	for (int i = 0; i < 200; ++i) {
		const tp_dvec3 d = tp_dsub(tp_d(cloud[i]), tp_d(centre));
		const double dist = tp_dlen(d);
		if (dist >= r) {
			assert_true(tp_len(v[i]) == 0);
			continue;
		}
		++inside;
		expected += J * (1 - dist / r);
		given += (double)m[i] * ((double)v[i].x * d.x + (double)v[i].y * d.y + (double)v[i].z * d.z) / dist;
	}
	assert_int_equal(n, inside);
	assert_true(inside > 50 && inside < 200);
	assert_near(given, expected, TEST_TOL(1e-12, 1e-5) * fabs(expected));
	assert_true(given < 0); /* pulled in */

	/* Refused, naming the call and the argument. */
	assert_int_equal(pbd_world_explode(w, centre, 0, 1, &n), PBD_ERR_OUT_OF_RANGE);
	assert_int_equal(n, 0);
	assert_non_null(strstr(msg, "pbd_world_explode: radius must be > 0"));
	assert_int_equal(pbd_world_explode(w, centre, (pbd_real)NAN, 1, NULL), PBD_ERR_NOT_FINITE);
	assert_non_null(strstr(msg, "pbd_world_explode: radius is not finite"));
	assert_int_equal(pbd_world_explode(w, pbd_v3((pbd_real)INFINITY, 0, 0), 1, 1, NULL), PBD_ERR_NOT_FINITE);
	assert_non_null(strstr(msg, "pbd_world_explode: centre is not finite"));
	assert_int_equal(pbd_world_explode(w, centre, 1, (pbd_real)NAN, NULL), PBD_ERR_NOT_FINITE);
	assert_non_null(strstr(msg, "pbd_world_explode: impulse is not finite"));
	/* Too large for the lightest particle: refused before any particle is pushed. */
	const uint64_t hash = pbd_world_hash(w);
	assert_int_equal(pbd_world_explode(w, centre, 5, PBD_REAL_MAX / 2, &n), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "beyond the scalar's range"));
	assert_true(pbd_world_hash(w) == hash);
	assert_int_equal(pbd_world_explode(NULL, centre, 1, 1, NULL), PBD_ERR_INVALID_ARGUMENT);
	pbd_world_destroy(w);
}

/* ---- settings ---------------------------------------------------------------------------- */

static void test_bad_arguments(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = test_world_keep(msg);
	const pbd_vec3 x[3] = {{0, 0, 0}, {1, 0, 0}, {0, 0, 1}};
	const pbd_real inv[3] = {1, 1, 1};
	assert_int_equal(pbd_world_add_particles(w, 3, x, NULL, inv, NULL), PBD_OK);
	const uint32_t tri[3] = {0, 1, 2};
	assert_int_equal(pbd_world_add_triangles(w, 1, tri, NULL), PBD_OK);
	const pbd_vec3 calm = {0, 0, 0};
	const pbd_real nan = (pbd_real)NAN;

	assert_int_equal(pbd_world_set_triangle_drag(w, 0, 2, 1, 1, calm), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "pbd_world_set_triangle_drag: range [0, 0 + 2) exceeds the 1 triangles"));
	assert_int_equal(pbd_world_set_triangle_drag(w, 2, 0, 1, 1, calm), PBD_ERR_OUT_OF_RANGE);
	assert_int_equal(pbd_world_set_triangle_drag(w, 0, 1, -1, 1, calm), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "pbd_world_set_triangle_drag: normal must be >= 0 (got -1)"));
	assert_int_equal(pbd_world_set_triangle_drag(w, 0, 1, 1, nan, calm), PBD_ERR_NOT_FINITE);
	assert_non_null(strstr(msg, "pbd_world_set_triangle_drag: tangent is not finite"));
	assert_int_equal(pbd_world_set_triangle_drag(w, 0, 1, 1, 1, pbd_v3(0, nan, 0)), PBD_ERR_NOT_FINITE);
	assert_non_null(strstr(msg, "pbd_world_set_triangle_drag: wind is not finite"));
	assert_int_equal(pbd_world_set_triangle_drag(w, 0, 1, 1, 1, pbd_v3(0, 0, (pbd_real)2e6)), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "pbd_world_set_triangle_drag: wind: each component must be within"));
	assert_int_equal(pbd_world_set_triangle_drag(NULL, 0, 1, 1, 1, calm), PBD_ERR_INVALID_ARGUMENT);

	assert_int_equal(pbd_particles_set_drag(w, 1, 3, 1, calm), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "pbd_particles_set_drag: range [1, 1 + 3) exceeds the 3 particles"));
	assert_int_equal(pbd_particles_set_drag(w, 0, 3, (pbd_real)-0.5, calm), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "pbd_particles_set_drag: drag must be >= 0 (got -0.5)"));
	assert_int_equal(pbd_particles_set_drag(w, 0, 3, (pbd_real)INFINITY, calm), PBD_ERR_NOT_FINITE);
	assert_non_null(strstr(msg, "pbd_particles_set_drag: drag is not finite"));
	assert_int_equal(pbd_particles_set_drag(w, 0, 3, 1, pbd_v3((pbd_real)-INFINITY, 0, 0)), PBD_ERR_NOT_FINITE);
	assert_non_null(strstr(msg, "pbd_particles_set_drag: wind is not finite"));
	assert_int_equal(pbd_particles_set_drag(NULL, 0, 0, 1, calm), PBD_ERR_INVALID_ARGUMENT);
	/* Nothing took: the world has no air. */
	assert_int_equal(w->n_drag, 0);
	assert_int_equal(w->nt_drag, 0);
	/* Empty ranges are fine, and zero drag switches the air off again. */
	assert_int_equal(pbd_particles_set_drag(w, 3, 0, 1, calm), PBD_OK);
	assert_int_equal(pbd_world_set_triangle_drag(w, 0, 1, 0, 2, calm), PBD_OK);
	assert_int_equal(w->nt_drag, 1);
	assert_int_equal(pbd_world_set_triangle_drag(w, 0, 1, 0, 0, calm), PBD_OK);
	assert_int_equal(w->nt_drag, 0);

	/* Soft objects: the coefficients are checked, and each kind belongs to its kind of object. */
	pbd_mesh grid, rope;
	tp_grid(&grid, 3, 3, 1, pbd_v3(0, 0, 0), 1, false);
	pbd_rope_def rd = pbd_rope_def_default();
	pbd_error err;
	assert_int_equal(pbd_mesh_rope(&rd, &rope, &err), PBD_OK);
	pbd_soft_def sd = pbd_soft_def_default();
	sd.mesh = &grid;
	sd.drag_normal = -1;
	assert_int_equal(pbd_soft_create(w, &sd, NULL), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "pbd_soft_create: drag_normal must be >= 0 (got -1)"));
	sd.drag_normal = 0;
	sd.drag_tangent = nan;
	assert_int_equal(pbd_soft_create(w, &sd, NULL), PBD_ERR_NOT_FINITE);
	assert_non_null(strstr(msg, "pbd_soft_create: drag_tangent is not finite"));
	sd.drag_tangent = 0;
	sd.wind = pbd_v3(0, (pbd_real)-3e6, 0);
	assert_int_equal(pbd_soft_create(w, &sd, NULL), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "pbd_soft_create: wind: each component"));
	sd.wind = calm;
	sd.drag_particle = 1;
	assert_int_equal(pbd_soft_create(w, &sd, NULL), PBD_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "pbd_soft_create: drag_particle is for objects without triangles"));
	sd.mesh = &rope;
	sd.drag_particle = 0;
	sd.drag_normal = 1;
	assert_int_equal(pbd_soft_create(w, &sd, NULL), PBD_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "pbd_soft_create: drag_normal and drag_tangent act on triangles"));
	assert_int_equal(pbd_world_particle_count(w), 3);
	assert_int_equal(w->n_drag + w->nt_drag, 0);

	/* Accepted: the object's own triangles or particles get its air, nothing else does. */
	sd.mesh = &grid;
	sd.drag_normal = 2;
	sd.drag_tangent = (pbd_real)0.5;
	sd.wind = pbd_v3(1, 0, 0);
	pbd_soft_info gi, ri;
	assert_int_equal(test_soft_create(w, &sd, &gi), PBD_OK);
	assert_int_equal(w->nt_drag, gi.triangle_count);
	for (uint32_t f = 0; f < pbd_world_triangle_count(w); ++f) {
		const bool own = f >= gi.first_triangle;
		assert_true(w->tri_drag[f].normal == (own ? 2 : 0) && w->tri_drag[f].tangent == (own ? (pbd_real)0.5 : 0));
		assert_true(w->tri_wind[f].x == (own ? 1 : 0));
	}
	sd.mesh = &rope;
	sd.drag_normal = sd.drag_tangent = 0;
	sd.drag_particle = 3;
	assert_int_equal(test_soft_create(w, &sd, &ri), PBD_OK);
	assert_int_equal(w->n_drag, ri.particle_count);
	for (uint32_t i = 0; i < pbd_world_particle_count(w); ++i)
		assert_true(w->drag[i] == (i >= ri.first_particle ? 3 : 0));
	pbd_mesh_free(&grid);
	pbd_mesh_free(&rope);
	pbd_world_destroy(w);
}

/* ---- steps --------------------------------------------------------------------------------- */

/* Counts allocations. */
typedef struct counting {
	long calls;
} counting;

static void* count_alloc(size_t size, void* user) {
	((counting*)user)->calls++;
	return malloc(size);
}

static void count_free(void* p, size_t size, void* user) {
	(void)size;
	(void)user;
	free(p);
}

/* A flag in gusts beside a rope in the same wind, with drag of every kind. */
static pbd_world* windy_world(const pbd_world_def* base, bool air) {
	pbd_world_def def = gusty(base ? *base : pbd_world_def_default(), pbd_v3(7, 0, 1), 0.4, 0.8);
	def.formulation = PBD_FORMULATION_XPBD;
	def.substeps = 5;
	pbd_world* w = NULL;
	if (base) {
		assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	} else {
		w = test_world(&def);
	}
	pbd_grid_def gd = pbd_grid_def_default();
	gd.nx = 12;
	gd.ny = 8;
	gd.size_u = (pbd_real)1.5;
	gd.size_v = 1;
	gd.axis_v = pbd_v3(0, -1, 0); /* vertical, hanging from row 0 */
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(pbd_mesh_grid(&gd, &m, &err), PBD_OK);
	uint32_t pins[8];
	for (uint32_t j = 0; j < 8; ++j) pins[j] = j * 12;
	pbd_soft_def sd = pbd_soft_def_default();
	sd.mesh = &m;
	sd.mass_mode = PBD_MASS_DENSITY;
	sd.mass = (pbd_real)0.15;
	sd.pinned = pins;
	sd.pinned_count = 8;
	sd.material[PBD_EDGE_SHEAR].compliance_stretch = (pbd_real)1e-5;
	if (air) {
		sd.drag_normal = 3;
		sd.drag_tangent = (pbd_real)0.2;
		sd.wind = pbd_v3(0, (pbd_real)0.5, 0);
	}
	assert_int_equal(pbd_soft_create(w, &sd, NULL), PBD_OK);
	pbd_mesh_free(&m);
	pbd_rope_def rd = pbd_rope_def_default();
	rd.start = pbd_v3(0, 0, 1);
	rd.end = pbd_v3(0, -1, 1);
	assert_int_equal(pbd_mesh_rope(&rd, &m, &err), PBD_OK);
	sd = pbd_soft_def_default();
	sd.mesh = &m;
	sd.mass = (pbd_real)0.02;
	const uint32_t top = 0;
	sd.pinned = &top;
	sd.pinned_count = 1;
	if (air) sd.drag_particle = (pbd_real)0.05;
	assert_int_equal(pbd_soft_create(w, &sd, NULL), PBD_OK);
	pbd_mesh_free(&m);
	return w;
}

/* Once the step's arrays exist, stepping with air allocates nothing; without drag the step does
 * no air work and leaves the scratch alone. */
static void test_step_allocation_free(void** state) {
	(void)state;
	counting c = {0};
	pbd_world_def def = pbd_world_def_default();
	def.allocator.alloc = count_alloc;
	def.allocator.free = count_free;
	def.allocator.user = &c;
	def.log = test_log_fail;
	pbd_world* w = windy_world(&def, true);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_true(w->air_on);
	const long before = c.calls;
	for (int s = 0; s < 120; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_int_equal(c.calls, before);
	assert_true(tp_all_finite(w));
	/* The flag is blown out along +x: its free edge downwind of the pinned one. */
	assert_true(pbd_world_positions(w)[11].x > (pbd_real)0.8);
	pbd_world_destroy(w);

	pbd_world* still = windy_world(NULL, false);
	for (int s = 0; s < 10; ++s) assert_int_equal(pbd_world_step(still), PBD_OK);
	assert_false(still->air_on);
	pbd_vec3 out[1] = {{1, 1, 1}};
	assert_false(pbd_forces_air(still, 0, pbd_world_velocities(still), out));
	pbd_world_destroy(still);
}

/* A snapshot keeps the drag, the winds and the gusts: the loaded world steps bit-identically,
 * and differs from the same world without air. */
static void test_snapshot_keeps_air(void** state) {
	(void)state;
	pbd_world* a = windy_world(NULL, true);
	for (int s = 0; s < 20; ++s) assert_int_equal(pbd_world_step(a), PBD_OK);
	size_t n = 0;
	assert_int_equal(pbd_world_save_memory(a, NULL, 0, &n), PBD_OK);
	void* data = malloc(n);
	assert_int_equal(pbd_world_save_memory(a, data, n, &n), PBD_OK);
	pbd_world_def hooks = pbd_world_def_default();
	hooks.log = test_log_fail;
	pbd_world* b = NULL;
	pbd_error err;
	assert_int_equal(pbd_world_load_memory(data, n, &hooks, &b, &err), PBD_OK);
	assert_int_equal(b->n_drag, a->n_drag);
	assert_int_equal(b->nt_drag, a->nt_drag);
	const pbd_world_def da = pbd_world_get_def(a), db = pbd_world_get_def(b);
	assert_memory_equal(&da.wind, &db.wind, sizeof da.wind);
	assert_true(da.gust_strength == db.gust_strength && da.gust_frequency == db.gust_frequency);
	for (int s = 0; s < 30; ++s) {
		assert_int_equal(pbd_world_step(a), PBD_OK);
		assert_int_equal(pbd_world_step(b), PBD_OK);
	}
	assert_true(pbd_world_hash(a) == pbd_world_hash(b));
	/* Control: without the drag the same world ends elsewhere. */
	pbd_world* calm = windy_world(NULL, false);
	for (int s = 0; s < 50; ++s) assert_int_equal(pbd_world_step(calm), PBD_OK);
	assert_true(pbd_world_hash(calm) != pbd_world_hash(a));
	free(data);
	pbd_world_destroy(a);
	pbd_world_destroy(b);
	pbd_world_destroy(calm);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_triangle_force),
	    cmocka_unit_test(test_edge_on),
	    cmocka_unit_test(test_zero_area),
	    cmocka_unit_test(test_terminal_velocity_sheet),
	    cmocka_unit_test(test_terminal_velocity_rope),
	    cmocka_unit_test(test_particle_drag_decay),
	    cmocka_unit_test(test_wind_carries_particle),
	    cmocka_unit_test(test_gusts),
	    cmocka_unit_test(test_step_follows_gusts),
	    cmocka_unit_test(test_impulse),
	    cmocka_unit_test(test_explode),
	    cmocka_unit_test(test_bad_arguments),
	    cmocka_unit_test(test_step_allocation_free),
	    cmocka_unit_test(test_snapshot_keeps_air),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
