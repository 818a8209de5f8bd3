/* Attachments that end on a rigid body's point: two nodes, a particle and a body, in one solve.
 * A ball hung by a point of its surface from a pinned particle swings with the period of a
 * physical pendulum, which only the body's rotation gives; with no gravity a free particle on a
 * string to a spinning body keeps the pair's linear and angular momentum; a particle glued to a
 * moving kinematic body rides on its point; a cloth hung from a swinging box gives the same bits
 * on one and two threads and under every SIMD kernel, and resumes from a snapshot bit for bit;
 * destroying the body leaves its attachments holding the points where it was; a stale body is
 * refused, and a snapshot whose attachment names a dead body is refused. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/cpu.h"
#include "test_physics.h"

static pbd_world* world(char* msg, pbd_vec3 g) {
	pbd_world_def def = pbd_world_def_default();
	def.gravity = g;
	def.log = test_log_keep;
	def.log_user = msg;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	return w;
}

static pbd_collider_def sphere_shape(double r) {
	pbd_collider_def s = pbd_collider_def_default();
	s.type = PBD_SHAPE_SPHERE;
	s.shape.sphere.center = pbd_v3(0, 0, 0); /* the default's plane normal shares its storage */
	s.shape.sphere.radius = (pbd_real)r;
	return s;
}

static pbd_collider_def box_shape(double hx, double hy, double hz) {
	pbd_collider_def s = pbd_collider_def_default();
	s.type = PBD_SHAPE_BOX;
	s.shape.box.half_extents = pbd_v3((pbd_real)hx, (pbd_real)hy, (pbd_real)hz);
	return s;
}

/* A dynamic body carrying `shape`, its matter from the shape at `density`. */
static pbd_body_id dynamic_body(pbd_world* w, pbd_collider_def shape, double density, pbd_pose pose) {
	pbd_body_def bd = pbd_body_def_default();
	bd.type = PBD_BODY_DYNAMIC;
	bd.pose = pose;
	bd.mass.mass = 1;
	bd.mass.inertia[0] = bd.mass.inertia[1] = bd.mass.inertia[2] = 1;
	const pbd_body_id b = pbd_body_create(w, &bd);
	if (!pbd_body_is_valid(w, b)) fail_msg("pbd_body_create: %s", pbd_world_last_error(w));
	shape.body = b;
	const pbd_collider_id c = pbd_collider_create(w, &shape);
	if (!pbd_collider_is_valid(w, c)) fail_msg("pbd_collider_create: %s", pbd_world_last_error(w));
	pbd_mass_properties mp;
	assert_int_equal(pbd_collider_mass_properties(w, c, (pbd_real)density, &mp), PBD_OK);
	assert_int_equal(pbd_body_set_mass(w, b, &mp), PBD_OK);
	return b;
}

static pbd_body_state state_of(const pbd_world* w, pbd_body_id id) {
	pbd_body_state s;
	assert_int_equal(pbd_body_get_state(w, id, &s), PBD_OK);
	return s;
}

static uint32_t particle(pbd_world* w, pbd_vec3 at, pbd_vec3 v, pbd_real inv_mass) {
	uint32_t i = 0;
	assert_int_equal(pbd_world_add_particles(w, 1, &at, &v, &inv_mass, &i), PBD_OK);
	return i;
}

static void attach(pbd_world* w, uint32_t p, pbd_body_id b, pbd_vec3 local, pbd_real rest) {
	pbd_attachment_def a = pbd_attachment_def_default();
	a.particle = p;
	a.body = b;
	a.target = local;
	a.rest = rest;
	if (pbd_world_add_attachments(w, 1, &a, NULL) != PBD_OK) fail_msg("attach: %s", pbd_world_last_error(w));
}

/* A ball of radius r hung from a pinned particle by the top of its surface is a physical
 * pendulum: T = 2 pi sqrt(I_p / (m g d)) with d = r and I_p = 2/5 m r^2 + m r^2, so
 * T = 2 pi sqrt(7 r / (5 g)), 18 % longer than a point mass at the same distance (whose period
 * an attachment at the centre, which cannot turn the ball, gives). Small swings (0.05 rad: the
 * amplitude's lengthening is 2e-4), default substeps, float. */
static double swing_period(double r, bool at_surface) {
	char msg[256] = "";
	const double g = 9.81;
	pbd_world* w = world(msg, pbd_v3(0, (pbd_real)-g, 0));
	const double a0 = 0.05, d = at_surface ? r : 2 * r;
	const pbd_quat turn = pbd_quat_axis_angle(pbd_v3(0, 0, 1), (pbd_real)a0);
	pbd_pose pose;
	pose.rotation = at_surface ? turn : pbd_quat_identity();
	pose.position = pbd_v3((pbd_real)(d * sin(a0)), (pbd_real)(-d * cos(a0)), 0);
	const pbd_body_id ball = dynamic_body(w, sphere_shape(r), 1000, pose);
	const uint32_t pivot = particle(w, pbd_v3(0, 0, 0), pbd_v3(0, 0, 0), 0);
	attach(w, pivot, ball, at_surface ? pbd_v3(0, (pbd_real)r, 0) : pbd_v3(0, 0, 0), at_surface ? 0 : (pbd_real)d);
	const double dt = (double)pbd_world_get_def(w).dt;
	double prev = (double)state_of(w, ball).center.x, first = -1, last = -1;
	int crossings = 0;
	for (int s = 1; s <= (int)(6 / dt); ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const double x = (double)state_of(w, ball).center.x;
		if ((prev > 0) != (x > 0)) {
			const double tc = (s - 1) * dt + dt * prev / (prev - x);
			if (crossings == 0) first = tc;
			last = tc;
			crossings++;
		}
		prev = x;
	}
	assert_true(crossings >= 8);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
	return 2 * (last - first) / (crossings - 1);
}

static void test_physical_pendulum(void** state) {
	(void)state;
	const double r = 0.1, g = 9.81;
	const double T = swing_period(r, true), expect = 2 * TP_PI * sqrt(7 * r / (5 * g));
	printf("ball hung by its surface: T = %.5f s, physical pendulum %.5f s (%+.3f %%)\n", T, expect,
	       100 * (T / expect - 1));
	assert_true(fabs(T / expect - 1) < 0.01);
	/* by its centre on a string of length 2r the ball cannot be turned: a point mass */
	const double Tc = swing_period(r, false), point = 2 * TP_PI * sqrt(2 * r / g);
	printf("ball on a string to its centre: T = %.5f s, simple pendulum %.5f s (%+.3f %%)\n", Tc, point,
	       100 * (Tc / point - 1));
	assert_true(fabs(Tc / point - 1) < 0.01);
}

/* Total momenta of the particle and the body: linear, and angular about the origin (the body's
 * own spin plus its centre's orbit). */
static void momenta(const pbd_world* w, uint32_t p, pbd_body_id b, double m_p, double lin[3], double ang[3]) {
	const pbd_body_state s = state_of(w, b);
	const pbd_vec3 x = pbd_world_positions(w)[p], v = pbd_world_velocities(w)[p];
	const double xp[3] = {x.x, x.y, x.z}, pp[3] = {m_p * v.x, m_p * v.y, m_p * v.z};
	const double c[3] = {s.center.x, s.center.y, s.center.z};
	for (int k = 0; k < 3; ++k) lin[k] = pp[k] + s.momentum[k];
	for (int k = 0; k < 3; ++k) {
		const int i = (k + 1) % 3, j = (k + 2) % 3;
		ang[k] = xp[i] * pp[j] - xp[j] * pp[i] + c[i] * s.momentum[j] - c[j] * s.momentum[i] + s.angular_momentum[k];
	}
}

/* Worst relative drift of the linear and angular momenta of a particle on a taut string (an
 * attachment of rest length 0.5 m) to a spinning box, over 3 s with no gravity. */
static void string_drift(int substeps, double* lin, double* ang) {
	char msg[256] = "";
	pbd_world* w = world(msg, pbd_v3(0, 0, 0));
	assert_int_equal(pbd_world_set_substeps(w, substeps), PBD_OK);
	const pbd_body_id b = dynamic_body(w, box_shape(0.3, 0.1, 0.2), 500, pbd_pose_identity()); /* 24 kg */
	assert_int_equal(pbd_body_set_velocity(w, b, pbd_v3(0, (pbd_real)0.3, 0), pbd_v3((pbd_real)0.5, 0, 2)), PBD_OK);
	const double m_p = 2;
	/* 0.5 m from the box's corner (0.3, 0.1, 0.2), already taut */
	const uint32_t p = particle(w, pbd_v3((pbd_real)0.7, (pbd_real)0.4, (pbd_real)0.2), pbd_v3(1, 0, (pbd_real)0.5),
	                            (pbd_real)(1 / m_p));
	attach(w, p, b, pbd_v3((pbd_real)0.3, (pbd_real)0.1, (pbd_real)0.2), (pbd_real)0.5);
	double l0[3], a0[3];
	momenta(w, p, b, m_p, l0, a0);
	double worst_l = 0, worst_a = 0, moved = 0;
	const pbd_vec3 start = pbd_world_positions(w)[p];
	for (int s = 0; s < 180; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		double l[3], a[3];
		momenta(w, p, b, m_p, l, a);
		double dl = 0, da = 0, nl = 0, na = 0;
		for (int k = 0; k < 3; ++k) {
			dl += (l[k] - l0[k]) * (l[k] - l0[k]);
			da += (a[k] - a0[k]) * (a[k] - a0[k]);
			nl += l0[k] * l0[k];
			na += a0[k] * a0[k];
		}
		worst_l = fmax(worst_l, sqrt(dl / nl));
		worst_a = fmax(worst_a, sqrt(da / na));
		moved = fmax(moved, tp_dist(pbd_world_positions(w)[p], start));
	}
	printf("string to a spinning box, %d substeps, 3 s: linear momentum within %.2e, angular %.2e; particle "
	       "moved %.2f m\n",
	       substeps, worst_l, worst_a, moved);
	assert_true(moved > 0.5); /* the string swung the particle round */
	/* The statistics give the body's share: its momentum and its angular momentum about the
	 * origin, spin and orbit, as the body's state does. */
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	const pbd_body_state bs = state_of(w, b);
	const double c[3] = {bs.center.x, bs.center.y, bs.center.z};
	for (int k = 0; k < 3; ++k) {
		const int i = (k + 1) % 3, j = (k + 2) % 3;
		const double orbit = c[i] * bs.momentum[j] - c[j] * bs.momentum[i];
		assert_true(fabs(st.body_momentum[k] - bs.momentum[k]) <= 1e-12 * (1 + fabs(bs.momentum[k])));
		assert_true(fabs(st.body_angular_momentum[k] - (bs.angular_momentum[k] + orbit)) <= 1e-5);
	}
	assert_true(fabs(st.body_kinetic_energy - bs.kinetic_energy) <= 1e-12 * (1 + bs.kinetic_energy));
	pbd_world_destroy(w);
	*lin = worst_l;
	*ang = worst_a;
}

/* The impulses along the string are equal and opposite, so linear momentum is kept to rounding;
 * they act along the line through both points, so angular momentum is kept up to the error of
 * the substep's rotation (the body turns by its midpoint velocity, its velocity takes the
 * corrections as dtheta / h), first order in h: 3.5 % over 3 s at 8 substeps of 60 Hz, 0.9 % at 32. */
static void test_momentum_through_the_string(void** state) {
	(void)state;
	double l8, a8, l32, a32;
	string_drift(8, &l8, &a8);
	string_drift(32, &l32, &a32);
	assert_true(l8 < 1e-5 && l32 < 1e-5);
	assert_true(a32 < 1.5e-2);
	assert_true(a32 < a8 / 3); /* first order in h */
}

/* A particle glued (rest 0) to a point of a kinematic body that moves and turns stays on the
 * point: the body leads, nothing pulls it back. */
static void test_rides_a_kinematic_body(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = world(msg, pbd_v3(0, (pbd_real)-9.81, 0));
	pbd_body_def kd = pbd_body_def_default();
	kd.type = PBD_BODY_KINEMATIC;
	kd.pose.position = pbd_v3(0, 1, 0);
	kd.velocity = pbd_v3(1, 0, 0);
	kd.angular_velocity = pbd_v3(0, 2, 0);
	const pbd_body_id pole = pbd_body_create(w, &kd);
	assert_true(pbd_body_is_valid(w, pole));
	const uint32_t p = particle(w, pbd_v3((pbd_real)0.5, 1, 0), pbd_v3(0, 0, 0), 1);
	attach(w, p, pole, pbd_v3((pbd_real)0.5, 0, 0), 0);
	double worst = 0;
	for (int s = 0; s < 60; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_body_state st = state_of(w, pole);
		const pbd_vec3 point = pbd_pose_apply(st.pose, pbd_v3((pbd_real)0.5, 0, 0));
		worst = fmax(worst, tp_dist(pbd_world_positions(w)[p], point));
	}
	const pbd_body_state st = state_of(w, pole);
	printf("glued to a kinematic body for 1 s: at most %.2e m off its point; body at x = %.4f\n", worst,
	       (double)st.pose.position.x);
	assert_true(fabs((double)st.pose.position.x - 1) < 1e-4);
	assert_true(worst < 1e-4);
	pbd_world_destroy(w);
}

/* A 12 x 12 cloth whose top row hangs from the bottom edge of a box, the box hung by its top
 * from a pinned particle and pushed sideways. */
static pbd_world* swinging_box_cloth(char* msg, int threads, pbd_simd simd, pbd_solver solver, pbd_body_id* box) {
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, (pbd_real)-9.81, 0);
	def.threads = threads;
	def.simd = simd;
	def.solver = solver;
	def.substeps = 4;
	def.log = test_log_keep;
	def.log_user = msg;
	pbd_world* w = NULL;
	if (pbd_world_create(&def, &w) != PBD_OK) return NULL;
	const uint32_t n = 12;
	const pbd_real size = 1;
	pbd_mesh m;
	tp_grid(&m, n, n, size, pbd_v3(-size / 2, 0, 0), 1, false);
	/* the grid lies in xz: stand it up in xy, hanging down from y = 0 */
	for (uint32_t i = 0; i < m.vertex_count; ++i) m.positions[i] = pbd_v3(m.positions[i].x, -m.positions[i].z, 0);
	pbd_soft_def sd = pbd_soft_def_default();
	sd.mesh = &m;
	sd.mass_mode = PBD_MASS_TOTAL;
	sd.mass = (pbd_real)0.3;
	pbd_soft_id soft;
	assert_int_equal(pbd_soft_create(w, &sd, &soft), PBD_OK);
	pbd_mesh_free(&m);
	pbd_pose pose = pbd_pose_identity();
	pose.position = pbd_v3(0, (pbd_real)0.05, 0);
	*box = dynamic_body(w, box_shape(0.55, 0.05, 0.05), 300, pose);
	const uint32_t pivot = particle(w, pbd_v3(0, (pbd_real)0.6, 0), pbd_v3(0, 0, 0), 0);
	attach(w, pivot, *box, pbd_v3(0, (pbd_real)0.05, 0), (pbd_real)0.5);
	pbd_attachment_def row[12];
	for (uint32_t j = 0; j < n; ++j) {
		row[j] = pbd_attachment_def_default();
		row[j].particle = j; /* the grid's first row, at y = 0 */
		row[j].body = *box;
		row[j].target = pbd_v3(pbd_world_positions(w)[j].x, (pbd_real)-0.05, 0);
	}
	assert_int_equal(pbd_world_add_attachments(w, n, row, NULL), PBD_OK);
	assert_int_equal(pbd_body_apply_impulse(w, *box, pbd_v3(2, 0, (pbd_real)0.5), pbd_v3((pbd_real)0.5, 0, 0)), PBD_OK);
	return w;
}

static bool have_avx2(void) { return pbd_cpu_avx2(); }

static void test_cloth_on_a_swinging_box_same_bits(void** state) {
	(void)state;
	const pbd_solver solvers[2] = {PBD_SOLVER_GAUSS_SEIDEL, PBD_SOLVER_JACOBI};
	for (int sv = 0; sv < 2; ++sv) {
		char msg[256] = "";
		pbd_body_id box;
		pbd_world* ref = swinging_box_cloth(msg, 1, PBD_SIMD_SCALAR, solvers[sv], &box);
		assert_non_null(ref);
		for (int s = 0; s < 90; ++s) assert_int_equal(pbd_world_step(ref), PBD_OK);
		assert_true(tp_all_finite(ref));
		const pbd_body_state bs = state_of(ref, box);
		/* the cloth stayed on the box's edge */
		double off = 0;
		for (uint32_t j = 0; j < 12; ++j) {
			pbd_attachment_def a;
			assert_int_equal(pbd_world_get_attachment(ref, 1 + j, &a), PBD_OK);
			off = fmax(off, tp_dist(pbd_world_positions(ref)[j], pbd_pose_apply(bs.pose, a.target)));
		}
		printf("%s: box swung to (%.3f, %.3f, %.3f); cloth's top row within %.2e m of the edge\n",
		       sv ? "jacobi" : "gauss-seidel", (double)bs.center.x, (double)bs.center.y, (double)bs.center.z, off);
		assert_true(off < 0.01);
		assert_true(fabs((double)bs.center.x) > 0.01 || fabs((double)bs.center.z) > 0.01);
		const uint64_t want = pbd_world_hash(ref);
		pbd_world_destroy(ref);
		const int threads[3] = {2, 3, 1};
		const pbd_simd simds[3] = {PBD_SIMD_SCALAR, PBD_SIMD_AVX2, PBD_SIMD_AUTO};
		for (int t = 0; t < 3; ++t)
			for (int k = 0; k < 3; ++k) {
				if (simds[k] != PBD_SIMD_SCALAR && !have_avx2()) continue;
				pbd_world* w = swinging_box_cloth(msg, threads[t], simds[k], solvers[sv], &box);
				assert_non_null(w);
				for (int s = 0; s < 90; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
				if (pbd_world_hash(w) != want)
					fail_msg("%s, %d threads, simd %d: hash differs", sv ? "jacobi" : "gauss-seidel", threads[t],
					         (int)simds[k]);
				pbd_world_destroy(w);
			}
		assert_string_equal(msg, "");
	}
}

static void test_snapshot_and_destroy(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_body_id box;
	pbd_world* w = swinging_box_cloth(msg, 1, PBD_SIMD_AUTO, PBD_SOLVER_GAUSS_SEIDEL, &box);
	for (int s = 0; s < 30; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	size_t size = 0;
	assert_int_equal(pbd_world_save_memory(w, NULL, 0, &size), PBD_OK);
	unsigned char* buf = test_malloc(size);
	assert_int_equal(pbd_world_save_memory(w, buf, size, &size), PBD_OK);
	pbd_world* back = NULL;
	pbd_error err;
	if (pbd_world_load_memory(buf, size, NULL, &back, &err) != PBD_OK) fail_msg("load: %s", err.message);
	pbd_attachment_def a;
	assert_int_equal(pbd_world_get_attachment(back, 3, &a), PBD_OK);
	assert_int_equal(a.body.index1, box.index1);
	assert_int_equal(a.body.generation, box.generation);
	for (int s = 0; s < 30; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		assert_int_equal(pbd_world_step(back), PBD_OK);
	}
	assert_true(pbd_world_hash(w) == pbd_world_hash(back));
	pbd_world_destroy(back);

	/* The box goes: its attachments hold their particles where its edge was. */
	const pbd_body_state bs = state_of(w, box);
	assert_int_equal(pbd_world_get_attachment(w, 5, &a), PBD_OK);
	const pbd_vec3 edge = pbd_pose_apply(bs.pose, a.target);
	assert_int_equal(pbd_body_destroy(w, box), PBD_OK);
	assert_int_equal(pbd_world_get_attachment(w, 5, &a), PBD_OK);
	assert_int_equal(a.body.index1, 0);
	assert_true(tp_dist(a.target, edge) < 1e-5);
	for (int s = 0; s < 60; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_true(tp_dist(pbd_world_positions(w)[4], edge) < 0.01);

	/* A stale body is refused, naming the constraint. */
	pbd_attachment_def bad = pbd_attachment_def_default();
	bad.particle = 0;
	bad.body = box;
	assert_int_equal(pbd_world_add_attachments(w, 1, &bad, NULL), PBD_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(pbd_world_last_error(w), "constraint 0: body"));
	pbd_world_destroy(w);
	test_free(buf);
}

/* A snapshot whose attachment names a body that was destroyed (forged: the slot exists, dead) or
 * no body at all is refused with the node named. */
static void test_snapshot_forged_body(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = world(msg, pbd_v3(0, 0, 0));
	const pbd_body_id b1 = dynamic_body(w, sphere_shape(0.1), 1000, pbd_pose_identity());
	const pbd_body_id b2 = dynamic_body(w, sphere_shape(0.1), 1000, pbd_pose_identity());
	const uint32_t p = particle(w, pbd_v3(0, 1, 0), pbd_v3(0, 0, 0), 1);
	attach(w, p, b2, pbd_v3(0, 0, 0), 1);
	assert_int_equal(pbd_body_destroy(w, b1), PBD_OK);
	for (uint32_t forged = 1; forged <= 3; forged += 2) { /* the dead slot, then past the last */
		size_t size = 0;
		assert_int_equal(pbd_world_save_memory(w, NULL, 0, &size), PBD_OK);
		unsigned char* buf = test_malloc(size);
		assert_int_equal(pbd_world_save_memory(w, buf, size, &size), PBD_OK);
		/* the attachment record: particle p, body 2 (slot 1 + 1), rest 1 */
		unsigned char want[8 + sizeof(pbd_real)];
		const uint32_t words[2] = {p, 2};
		const pbd_real rest = 1;
		memcpy(want, words, 8);
		memcpy(want + 8, &rest, sizeof rest);
		size_t at = SIZE_MAX;
		for (size_t k = 0; k + sizeof want <= size; ++k)
			if (memcmp(buf + k, want, sizeof want) == 0) {
				assert_true(at == SIZE_MAX);
				at = k;
			}
		assert_true(at != SIZE_MAX);
		memcpy(buf + at + 4, &forged, 4);
		test_snapshot_reseal(buf, size);
		pbd_world* back = NULL;
		pbd_error err;
		assert_int_not_equal(pbd_world_load_memory(buf, size, NULL, &back, &err), PBD_OK);
		assert_null(back);
		printf("forged body %u: %s\n", forged, err.message);
		assert_non_null(strstr(err.message, "attachment constraint 0 uses node"));
		test_free(buf);
	}
	pbd_world_destroy(w);
}

int main(void) {
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_physical_pendulum),      cmocka_unit_test(test_momentum_through_the_string),
	    cmocka_unit_test(test_rides_a_kinematic_body), cmocka_unit_test(test_cloth_on_a_swinging_box_same_bits),
	    cmocka_unit_test(test_snapshot_and_destroy),   cmocka_unit_test(test_snapshot_forged_body),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
