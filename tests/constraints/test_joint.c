/* Joints between rigid bodies (src/constraints/joint.c), against closed forms: a rod on a hinge
 * swings with the physical pendulum's period; a velocity motor spins a wheel up at torque / I and
 * holds the target speed; a position motor and a limit hold their angles; a slider falls along its
 * axis at g sin θ and stops at its limit; a body on a rope falls freely until the rope is taut;
 * a hanging body's joint reports its weight and breaks above its threshold; chains of 20 links on
 * ball joints and on hinges keep their joints together, a 1000:1 mass on a light chain too; two
 * welded bodies spinning in free space keep their momenta; the result is the same on one and two
 * threads and after a snapshot; bad definitions are refused naming the field. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_physics.h"

static const double g = 9.81;

static pbd_pose at(double x, double y, double z) {
	pbd_pose p = {pbd_v3((pbd_real)x, (pbd_real)y, (pbd_real)z), pbd_quat_identity()};
	return p;
}

/* A dynamic box of density `rho` with half extents (hx, hy, hz) at `pose`. */
static pbd_body_id box_body(pbd_world* w, double hx, double hy, double hz, double rho, pbd_pose pose) {
	pbd_collider_def d = pbd_collider_def_default();
	d.type = PBD_SHAPE_BOX;
	d.shape.box.half_extents = pbd_v3((pbd_real)hx, (pbd_real)hy, (pbd_real)hz);
	const pbd_collider_id probe = pbd_collider_create(w, &d);
	assert_true(pbd_collider_is_valid(w, probe));
	pbd_body_def bd = pbd_body_def_default();
	bd.type = PBD_BODY_DYNAMIC;
	assert_int_equal(pbd_collider_mass_properties(w, probe, rho, &bd.mass), PBD_OK);
	assert_int_equal(pbd_collider_destroy(w, probe), PBD_OK);
	bd.pose = pose;
	const pbd_body_id b = pbd_body_create(w, &bd);
	if (!pbd_body_is_valid(w, b)) fail_msg("pbd_body_create: %s", pbd_world_last_error(w));
	return b;
}

static pbd_body_state state_of(pbd_world* w, pbd_body_id id) {
	pbd_body_state s;
	assert_int_equal(pbd_body_get_state(w, id, &s), PBD_OK);
	return s;
}

static pbd_joint_state joint_state(pbd_world* w, uint32_t j) {
	pbd_joint_state s;
	assert_int_equal(pbd_world_get_joint_state(w, j, &s), PBD_OK);
	return s;
}

static uint32_t add_joint(pbd_world* w, const pbd_joint_def* d) {
	uint32_t first = UINT32_MAX;
	if (pbd_world_add_joints(w, 1, d, &first) != PBD_OK) fail_msg("pbd_world_add_joints: %s", pbd_world_last_error(w));
	return first;
}

static const pbd_body_id world_side = {0, 0};

/* A hinge about z joining the world at `pivot` to body b at its local point `local`. */
static pbd_joint_def hinge_z(pbd_body_id b, pbd_vec3 pivot, pbd_vec3 local) {
	pbd_joint_def d = pbd_joint_def_default();
	d.type = PBD_JOINT_HINGE;
	d.body_a = world_side;
	d.body_b = b;
	/* x of both frames along the world's z: the frames turned -90 degrees about y */
	const pbd_quat xz = pbd_quat_axis_angle(pbd_v3(0, 1, 0), (pbd_real)(-TP_PI / 2));
	d.frame_a = (pbd_pose){pivot, xz};
	d.frame_b = (pbd_pose){local, xz};
	return d;
}

/* The rod's angle from hanging straight down, about z. */
static double swing_angle(pbd_world* w, pbd_body_id b, pbd_vec3 pivot) {
	const pbd_body_state s = state_of(w, b);
	return atan2((double)s.center.x - (double)pivot.x, (double)pivot.y - (double)s.center.y);
}

/* A rod of length L (a thin box) hangs from a hinge at its top end; released at a small angle it
 * swings with the physical pendulum's period 2 pi sqrt(I_pivot / (m g d)), d = L / 2 and
 * I_pivot = m (L^2 + t^2) / 12 + m d^2 for a cross-section of thickness t in the swing's plane. */
static void test_hinge_pendulum_period(void** state) {
	(void)state;
	char msg[256] = "";
	const double L = 1, t = 0.04, amp = 0.1;
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-g, 0), 20, 1);
	const pbd_vec3 pivot = pbd_v3(0, 2, 0);
	pbd_pose pose = at(sin(amp) * L / 2, 2 - cos(amp) * L / 2, 0);
	pose.rotation = pbd_quat_axis_angle(pbd_v3(0, 0, 1), (pbd_real)amp);
	const pbd_body_id rod = box_body(w, t / 2, L / 2, t / 2, 1000, pose);
	const pbd_joint_def hinge = hinge_z(rod, pivot, pbd_v3(0, (pbd_real)(L / 2), 0));
	add_joint(w, &hinge);
	const double d = L / 2, expected = 2 * TP_PI * sqrt(((L * L + t * t) / 12 + d * d) / (g * d));
	/* upward zero crossings of the angle, interpolated */
	double prev = swing_angle(w, rod, pivot), first = -1, last = -1, worst = 0;
	int crossings = 0;
	const double dt = 1.0 / 60;
	for (int s = 1; s <= 60 * 8; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const double a = swing_angle(w, rod, pivot);
		if (prev < 0 && a >= 0) {
			const double tc = dt * (s - 1 + prev / (prev - a));
			if (first < 0) first = tc;
			last = tc;
			crossings++;
		}
		prev = a;
		worst = fmax(worst, (double)joint_state(w, 0).error_distance);
	}
	const double period = (last - first) / (crossings - 1);
	/* the small-amplitude period, corrected for the amplitude (1 + amp^2 / 16) */
	const double want = expected * (1 + amp * amp / 16);
	printf("  rod on a hinge: period %.5f s, physical pendulum %.5f s (%+.3f %%), pivot error up to %.2g m\n", period,
	       want, 100 * (period / want - 1), worst);
	assert_true(crossings >= 4);
	assert_true(fabs(period / want - 1) < 0.005);
	assert_true(worst < 1e-4);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* A wheel on a hinge about its axis, in no gravity: a velocity motor of torque tau spins it up at
 * tau / I and then holds the target speed. */
static void test_velocity_motor(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, 0, 0), 8, 1);
	const double a = 0.2, c = 0.05, rho = 1000, tau = 2, target = 10;
	const pbd_body_id wheel = box_body(w, a / 2, a / 2, c / 2, rho, at(0, 1, 0));
	pbd_joint_def d = hinge_z(wheel, pbd_v3(0, 1, 0), pbd_v3(0, 0, 0));
	d.motor = PBD_MOTOR_VELOCITY;
	d.motor_target = (pbd_real)target;
	d.motor_max = (pbd_real)tau;
	add_joint(w, &d);
	const double m = rho * a * a * c, I = m * (a * a + a * a) / 12, ramp = target * I / tau;
	const int half = (int)lround(ramp / 2 * 60);
	for (int s = 0; s < half; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const double w_half = (double)state_of(w, wheel).angular_velocity.z, want = tau * half / 60.0 / I;
	for (int s = half; s < 4 * half; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_body_state end = state_of(w, wheel);
	const pbd_joint_state js = joint_state(w, 0);
	printf("  wheel on a motor of %.1f N m: %.4f rad/s after %.3f s (tau t / I = %.4f), then %.4f rad/s (target %.1f); "
	       "torque %.3f N m\n",
	       tau, w_half, half / 60.0, want, (double)end.angular_velocity.z, target, (double)js.torque.z);
	assert_true(fabs(w_half / want - 1) < 0.01);
	assert_true(fabs((double)end.angular_velocity.z / target - 1) < 1e-3);
	assert_true(fabs((double)end.angular_velocity.x) + fabs((double)end.angular_velocity.y) < 1e-3);
	assert_true(tp_len(end.velocity) < 1e-3);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* A rod on a hinge under gravity: a rigid position motor holds it at its target angle; a limit
 * of +-0.3 rad stops a rod thrown at 5 rad/s. */
static void test_position_motor_and_limit(void** state) {
	(void)state;
	char msg[256] = "";
	const double L = 0.5, t = 0.04;
	const pbd_vec3 pivot = pbd_v3(0, 2, 0);
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-g, 0), 20, 1);
	const pbd_body_id held = box_body(w, t / 2, L / 2, t / 2, 1000, at(0, 2 - L / 2, 0));
	pbd_joint_def d = hinge_z(held, pivot, pbd_v3(0, (pbd_real)(L / 2), 0));
	d.motor = PBD_MOTOR_POSITION;
	d.motor_target = (pbd_real)0.5;
	add_joint(w, &d);
	for (int s = 0; s < 120; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_joint_state js = joint_state(w, 0);
	const double held_angle = swing_angle(w, held, pivot);
	pbd_world_destroy(w);

	w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-g, 0), 20, 1);
	const pbd_body_id thrown = box_body(w, t / 2, L / 2, t / 2, 1000, at(0, 2 - L / 2, 0));
	assert_int_equal(pbd_body_set_velocity(w, thrown, pbd_v3((pbd_real)(5 * L / 2), 0, 0), pbd_v3(0, 0, 5)), PBD_OK);
	d = hinge_z(thrown, pivot, pbd_v3(0, (pbd_real)(L / 2), 0));
	d.limit = true;
	d.lower = (pbd_real)-0.3;
	d.upper = (pbd_real)0.3;
	add_joint(w, &d);
	double highest = 0, lowest = 0;
	for (int s = 0; s < 120; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		highest = fmax(highest, swing_angle(w, thrown, pivot));
		lowest = fmin(lowest, swing_angle(w, thrown, pivot));
	}
	printf("  position motor at 0.5 rad: the rod hangs at %.5f rad (joint angle %.5f, torque %.4f N m); thrown at "
	       "5 rad/s into a +-0.3 rad limit: %.4f to %.4f rad\n",
	       held_angle, (double)js.position, (double)js.torque.z, lowest, highest);
	assert_true(fabs(held_angle - 0.5) < 1e-3);
	assert_true(fabs((double)js.position - 0.5) < 1e-3);
	const double m = 1000 * L * t * t;
	assert_true(fabs(fabs((double)js.torque.z) / (m * g * L / 2 * sin(0.5)) - 1) < 0.01);
	assert_true(highest > 0.29 && highest < 0.3 + 2e-3);
	assert_true(lowest > -0.3 - 2e-3);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* A box on a slider inclined at 30 degrees, frictionless, slides down it at g sin 30 and stops at
 * the lower limit, half a metre down. */
static void test_prismatic_slide_and_limit(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-g, 0), 20, 1);
	const double theta = TP_PI / 6;
	const pbd_body_id box = box_body(w, 0.05, 0.05, 0.05, 1000, at(0, 1, 0));
	pbd_joint_def d = pbd_joint_def_default();
	d.type = PBD_JOINT_PRISMATIC;
	d.body_a = world_side;
	d.body_b = box;
	/* the axis (the frames' x) rises at theta towards +x */
	d.frame_a = (pbd_pose){pbd_v3(0, 1, 0), pbd_quat_axis_angle(pbd_v3(0, 0, 1), (pbd_real)theta)};
	d.frame_b = (pbd_pose){pbd_v3(0, 0, 0), d.frame_a.rotation};
	d.limit = true;
	d.lower = (pbd_real)-0.5;
	d.upper = 1;
	add_joint(w, &d);
	for (int s = 0; s < 15; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const double s_quarter = (double)joint_state(w, 0).position, want = -0.5 * g * sin(theta) * 0.25 * 0.25;
	double off = 0;
	for (int s = 15; s < 120; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_joint_state js = joint_state(w, 0);
		off = fmax(off, fmax((double)js.error_distance, (double)js.error_angle));
	}
	const pbd_joint_state end = joint_state(w, 0);
	printf("  slider at 30 degrees: %.5f m after 0.25 s (g sin 30 t^2 / 2 = %.5f), rests at %.5f m (limit -0.5), "
	       "off the axis %.2g\n",
	       s_quarter, want, (double)end.position, off);
	assert_true(fabs(s_quarter / want - 1) < 0.01);
	assert_true(fabs((double)end.position + 0.5) < 1e-3);
	assert_true(off < 1e-4);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* A ball on a slack rope of 1 m falls freely until the rope is taut, then swings on it. */
static void test_rope_falls_free_until_taut(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-g, 0), 20, 1);
	const pbd_body_id ball = box_body(w, 0.05, 0.05, 0.05, 1000, at(0.5, 2, 0));
	pbd_joint_def d = pbd_joint_def_default();
	d.type = PBD_JOINT_DISTANCE;
	d.body_a = world_side;
	d.body_b = ball;
	d.frame_a.position = pbd_v3(0, 2, 0);
	d.upper = 1;
	add_joint(w, &d);
	for (int s = 0; s < 18; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	const double fell = 2 - (double)state_of(w, ball).center.y, want = 0.5 * g * 0.3 * 0.3;
	double longest = 0;
	for (int s = 18; s < 180; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		longest = fmax(longest, (double)joint_state(w, 0).position);
	}
	printf("  ball on a slack 1 m rope: fell %.5f m in 0.3 s (g t^2 / 2 = %.5f); the rope then stretched to %.6f m\n",
	       fell, want, longest);
	assert_true(fabs(fell / want - 1) < 0.005);
	assert_true(longest > 0.999 && longest < 1 + 1e-4);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* A box hanging at rest from a ball joint: the joint holds it with its weight. With a threshold
 * below the weight the joint breaks in the first step, says so once, and the box falls. */
static void test_force_and_break(void** state) {
	(void)state;
	char msg[256] = "";
	const double half = 0.1, rho = 500, m = rho * 8 * half * half * half;
	for (int breaking = 0; breaking < 2; ++breaking) {
		pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-g, 0), 10, 2);
		const pbd_body_id box = box_body(w, half, half, half, rho, at(0, 1, 0));
		pbd_joint_def d = pbd_joint_def_default();
		d.body_a = world_side;
		d.body_b = box;
		d.frame_a.position = pbd_v3(0, (pbd_real)(1 + half), 0);
		d.frame_b.position = pbd_v3(0, (pbd_real)half, 0);
		d.break_force = breaking ? (pbd_real)(0.5 * m * g) : 0;
		add_joint(w, &d);
		assert_int_equal(pbd_world_step(w), PBD_OK);
		pbd_joint_event ev[2];
		const uint32_t events = pbd_world_get_joint_events(w, ev, 2);
		const pbd_joint_state js = joint_state(w, 0);
		if (!breaking) {
			for (int s = 0; s < 59; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
			const pbd_joint_state rest = joint_state(w, 0);
			printf("  box of %.3f kg hanging on a ball joint: force on it (%.4f, %.4f, %.4f) N, m g = %.4f N\n", m,
			       (double)rest.force.x, (double)rest.force.y, (double)rest.force.z, m * g);
			assert_int_equal(events, 0);
			assert_false(rest.broken);
			assert_true(fabs((double)rest.force.y / (m * g) - 1) < 1e-3);
			assert_true(fabs((double)rest.force.x) + fabs((double)rest.force.z) < 1e-3 * m * g);
			assert_true(fabs((double)state_of(w, box).center.y - 1) < 1e-4);
		} else {
			for (int s = 0; s < 29; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
			const double v = (double)state_of(w, box).velocity.y;
			printf("  the same with break_force m g / 2: %u event (joint %u at %.4f N), broken %d; falling at %.4f m/s "
			       "after 0.5 s\n",
			       events, events ? ev[0].joint : 0, events ? (double)ev[0].force : 0.0, js.broken, v);
			assert_int_equal(events, 1);
			assert_int_equal(ev[0].joint, 0);
			assert_true((double)ev[0].force > 0.5 * m * g && (double)ev[0].force < 1.1 * m * g);
			assert_true(js.broken);
			assert_int_equal(pbd_world_get_joint_events(w, NULL, 0), 0);
			assert_true(fabs(v / (-g * 30 / 60.0) - 1) < 0.01);
		}
		assert_string_equal(msg, "");
		pbd_world_destroy(w);
	}
}

static double chain_at(int type, int links, double last_rho, int threads, uint64_t* hash, int substeps, int iterations);

/* Links of 10 cm (4 x 4 cm section) in a horizontal row, the first on the world, each on the next
 * by a joint of `type` about z at their touching ends; released, they swing down. Returns the
 * largest distance between a joint's two points over 3 s and the last link's end, in *end. */
static double chain(int type, int links, double last_rho, int threads, uint64_t* hash) {
	return chain_at(type, links, last_rho, threads, hash, 20, 1);
}

static double chain_at(int type, int links, double last_rho, int threads, uint64_t* hash, int substeps,
                       int iterations) {
	char msg[256] = "";
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, (pbd_real)-g, 0);
	def.substeps = substeps;
	def.iterations = iterations;
	def.threads = threads;
	def.log = test_log_keep;
	def.log_user = msg;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	const double len = 0.1, t = 0.04;
	pbd_body_id prev = world_side;
	for (int k = 0; k < links; ++k) {
		const pbd_body_id link =
		    box_body(w, len / 2, t / 2, t / 2, k == links - 1 ? last_rho : 1000, at(len * (k + 0.5), 2, 0));
		pbd_joint_def d = hinge_z(link, pbd_v3(0, 2, 0), pbd_v3((pbd_real)(-len / 2), 0, 0));
		d.type = (pbd_joint_type)type;
		d.body_a = prev;
		if (k > 0) d.frame_a.position = pbd_v3((pbd_real)(len / 2), 0, 0);
		add_joint(w, &d);
		prev = link;
	}
	double worst = 0;
	for (int s = 0; s < 180; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		for (uint32_t j = 0; j < (uint32_t)links; ++j) worst = fmax(worst, (double)joint_state(w, j).error_distance);
	}
	if (hash) *hash = pbd_world_hash(w);
	/* the partition moved the records: each joint is still what it was made */
	for (uint32_t j = 0; j < (uint32_t)links; ++j) {
		pbd_joint_def back;
		assert_int_equal(pbd_world_get_joint(w, j, &back), PBD_OK);
		assert_int_equal(back.type, type);
	}
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
	return worst;
}

/* 20 links on ball joints and on hinges, 20 substeps of one iteration (Müller et al. 2020's
 * setting), whipping down from level: the direct solve of the assembly holds the joints to a
 * micrometre. A 1000:1 mass at the end of nine light links stays whole too, at 20 substeps and at
 * 4 substeps of 2 iterations (projected joint by joint, it sagged by a metre; with one Newton
 * pass per iteration, the light links whipping round at 300 rad/s opened the joints by 2.8 cm at
 * 20 substeps and tore the chain apart at 4). */
static void test_chains(void** state) {
	(void)state;
	const double ball = chain(PBD_JOINT_BALL, 20, 1000, 1, NULL);
	const double hinge = chain(PBD_JOINT_HINGE, 20, 1000, 1, NULL);
	const double heavy = chain(PBD_JOINT_BALL, 10, 1000 * 1000, 1, NULL);
	const double heavy_few = chain_at(PBD_JOINT_BALL, 10, 1000 * 1000, 1, NULL, 4, 2);
	printf("  20 links of 10 cm released level: joint error up to %.3g m on ball joints, %.3g m on hinges; a 1000:1 "
	       "mass on 9 links %.3g m (20 x 1), %.3g m (4 x 2)\n",
	       ball, hinge, heavy, heavy_few);
	assert_true(ball < 1e-5);
	assert_true(hinge < 1e-5);
	assert_true(heavy < 1e-4);
	/* four substeps: the links turn by up to a radian in one, and the passes leave millimetres to
	 * centimetres (measured 4.4 mm in float, 2.1 cm in double: where the whipping links pass
	 * differs with rounding) */
	assert_true(heavy_few < 0.05);
}

/* The same chain on one and two threads, bit for bit. */
static void test_chain_threads(void** state) {
	(void)state;
	uint64_t one, two;
	chain(PBD_JOINT_HINGE, 20, 1000, 1, &one);
	chain(PBD_JOINT_HINGE, 20, 1000, 2, &two);
	assert_true(one == two);
}

/* Momentum about the origin of every dynamic body, in double. */
static void momenta(pbd_world* w, const pbd_body_id* ids, int n, double p[3], double l[3]) {
	memset(p, 0, 3 * sizeof *p);
	memset(l, 0, 3 * sizeof *l);
	for (int k = 0; k < n; ++k) {
		const pbd_body_state s = state_of(w, ids[k]);
		const double c[3] = {(double)s.center.x, (double)s.center.y, (double)s.center.z};
		for (int i = 0; i < 3; ++i) p[i] += s.momentum[i];
		l[0] += s.angular_momentum[0] + c[1] * s.momentum[2] - c[2] * s.momentum[1];
		l[1] += s.angular_momentum[1] + c[2] * s.momentum[0] - c[0] * s.momentum[2];
		l[2] += s.angular_momentum[2] + c[0] * s.momentum[1] - c[1] * s.momentum[0];
	}
}

/* Two boxes welded corner to corner and a third on a ball joint, thrown spinning in free space
 * for 2 s at `substeps` per step: no outside force or torque. Returns the change of the angular
 * momentum relative to it, the change of the linear momentum relative to it in *dp_rel. */
static double spinning_assembly(int substeps, double* dp_rel) {
	char msg[256] = "";
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, 0, 0), substeps, 1);
	pbd_body_id ids[3];
	ids[0] = box_body(w, 0.1, 0.05, 0.05, 1000, at(0, 0, 0));
	ids[1] = box_body(w, 0.05, 0.1, 0.05, 300, at(0.15, 0.15, 0));
	ids[2] = box_body(w, 0.05, 0.05, 0.05, 2000, at(-0.2, 0, 0));
	pbd_joint_def weld = pbd_joint_def_default();
	weld.type = PBD_JOINT_FIXED;
	weld.body_a = ids[0];
	weld.body_b = ids[1];
	weld.frame_a.position = pbd_v3((pbd_real)0.1, (pbd_real)0.05, 0);
	weld.frame_b.position = pbd_v3((pbd_real)-0.05, (pbd_real)-0.1, 0);
	add_joint(w, &weld);
	pbd_joint_def ball = pbd_joint_def_default();
	ball.body_a = ids[0];
	ball.body_b = ids[2];
	ball.frame_a.position = pbd_v3((pbd_real)-0.15, 0, 0);
	ball.frame_b.position = pbd_v3((pbd_real)0.05, 0, 0);
	add_joint(w, &ball);
	assert_int_equal(pbd_body_set_velocity(w, ids[0], pbd_v3(1, 0, 0), pbd_v3(0, 2, 5)), PBD_OK);
	assert_int_equal(pbd_body_set_velocity(w, ids[1], pbd_v3(0, -1, 0), pbd_v3(3, 0, 0)), PBD_OK);
	assert_int_equal(pbd_body_set_velocity(w, ids[2], pbd_v3(0, 0, 2), pbd_v3(0, 0, -4)), PBD_OK);
	/* the first step reconciles the velocities with the joints, as an inelastic collision: the
	 * momenta are counted from there on */
	assert_int_equal(pbd_world_step(w), PBD_OK);
	double p0[3], l0[3], p1[3], l1[3];
	momenta(w, ids, 3, p0, l0);
	double weld_error = 0;
	for (int s = 0; s < 120; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const pbd_joint_state js = joint_state(w, 0);
		weld_error = fmax(weld_error, fmax((double)js.error_distance, (double)js.error_angle));
	}
	momenta(w, ids, 3, p1, l1);
	const double pn = sqrt(p0[0] * p0[0] + p0[1] * p0[1] + p0[2] * p0[2]);
	const double ln = sqrt(l0[0] * l0[0] + l0[1] * l0[1] + l0[2] * l0[2]);
	double dp = 0, dl = 0;
	for (int i = 0; i < 3; ++i) {
		dp = fmax(dp, fabs(p1[i] - p0[i]));
		dl = fmax(dl, fabs(l1[i] - l0[i]));
	}
	printf("  three bodies on a weld and a ball joint, spinning for 2 s at %d substeps: momentum changed by %.2g of "
	       "%.4g kg m/s, angular momentum by %.2g of %.4g kg m^2/s; weld error up to %.2g\n",
	       substeps, dp, pn, dl, ln, weld_error);
	assert_true(weld_error < 2e-3);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
	*dp_rel = dp / pn;
	return dl / ln;
}

/* The joints' corrections are equal and opposite along the line through their points: the linear
 * momentum keeps to rounding. The angular momentum drifts by the first-order error of velocities
 * taken from positions (the levers of a substep's start against its end), which halves with
 * the substep. */
static void test_joints_keep_momentum(void** state) {
	(void)state;
	double dp20, dp40;
	const double dl20 = spinning_assembly(20, &dp20), dl40 = spinning_assembly(40, &dp40);
	assert_true(dp20 < 1e-5 && dp40 < 1e-5);
	assert_true(dl20 < 0.04);
	assert_true(dl40 < 0.6 * dl20);
}

/* A world with joints saved mid-swing and loaded again goes on in the same bits, its broken joint
 * and motor included. */
static void test_snapshot(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-g, 0), 10, 2);
	const pbd_body_id a = box_body(w, 0.05, 0.2, 0.05, 1000, at(0, 1.8, 0));
	const pbd_body_id b = box_body(w, 0.05, 0.2, 0.05, 1000, at(0, 1.4, 0));
	pbd_joint_def d = hinge_z(a, pbd_v3(0, 2, 0), pbd_v3(0, (pbd_real)0.2, 0));
	d.motor = PBD_MOTOR_VELOCITY;
	d.motor_target = 3;
	d.motor_max = 5;
	add_joint(w, &d);
	d = hinge_z(b, pbd_v3(0, (pbd_real)-0.2, 0), pbd_v3(0, (pbd_real)0.2, 0));
	d.body_a = a;
	d.break_torque = 4;
	add_joint(w, &d);
	for (int s = 0; s < 30; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	static unsigned char buf[1 << 16];
	size_t size = 0;
	assert_int_equal(pbd_world_save_memory(w, buf, sizeof buf, &size), PBD_OK);
	pbd_world_def def = pbd_world_get_def(w);
	pbd_world* v = NULL;
	pbd_error err;
	assert_int_equal(pbd_world_load_memory(buf, size, &def, &v, &err), PBD_OK);
	for (int s = 0; s < 60; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		assert_int_equal(pbd_world_step(v), PBD_OK);
	}
	assert_true(pbd_world_hash(w) == pbd_world_hash(v));
	assert_int_equal(pbd_world_joint_count(v), 2);
	assert_int_equal(joint_state(w, 1).broken, joint_state(v, 1).broken);
	printf("  saved after 0.5 s, loaded and stepped 1 s: same hash; the lower hinge %s\n",
	       joint_state(w, 1).broken ? "broke" : "held");
	assert_string_equal(msg, "");
	pbd_world_destroy(v);
	pbd_world_destroy(w);
}

/* A body that goes away leaves its joints holding to where it was; a joint without a dynamic body
 * left holds nothing. */
static void test_body_destroyed(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-g, 0), 10, 2);
	const pbd_body_id a = box_body(w, 0.05, 0.05, 0.05, 1000, at(0, 1, 0));
	const pbd_body_id b = box_body(w, 0.05, 0.05, 0.05, 1000, at(0, 0.8, 0));
	pbd_joint_def d = pbd_joint_def_default();
	d.body_a = a;
	d.body_b = b;
	d.frame_a.position = pbd_v3(0, (pbd_real)-0.1, 0);
	d.frame_b.position = pbd_v3(0, (pbd_real)0.1, 0);
	add_joint(w, &d);
	assert_int_equal(pbd_body_destroy(w, a), PBD_OK);
	pbd_joint_def back;
	assert_int_equal(pbd_world_get_joint(w, 0, &back), PBD_OK);
	assert_int_equal(back.body_a.index1, 0);
	assert_true(fabs((double)back.frame_a.position.y - 0.9) < 1e-6);
	for (int s = 0; s < 60; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_true(fabs((double)state_of(w, b).center.y - 0.8) < 1e-4);
	assert_int_equal(pbd_body_destroy(w, b), PBD_OK);
	assert_true(joint_state(w, 0).broken);
	assert_int_equal(pbd_world_set_joint_broken(w, 0, false), PBD_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "cannot hold again"));
	msg[0] = 0;
	assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

/* Each bad field is refused with an error that names it, and nothing is added. */
static void test_bad_definitions(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, 0, 0), 4, 1);
	const pbd_body_id a = box_body(w, 0.1, 0.1, 0.1, 1000, at(0, 0, 0));
	pbd_body_def sd = pbd_body_def_default();
	const pbd_body_id fixed = pbd_body_create(w, &sd);
	struct {
		pbd_joint_def d;
		pbd_status st;
		const char* says;
	} cases[16];
	int n = 0;
	pbd_joint_def base = pbd_joint_def_default();
	base.body_b = a;
	const pbd_body_id made_up = {7, 1};
	const pbd_quat zero = {0, 0, 0, 0};
#define CASE(field_expr, status, text)                                                                                 \
	do {                                                                                                               \
		pbd_joint_def d = base;                                                                                        \
		field_expr;                                                                                                    \
		cases[n].d = d;                                                                                                \
		cases[n].st = status;                                                                                          \
		cases[n].says = text;                                                                                          \
		n++;                                                                                                           \
	} while (0)
	CASE(d.body_b = world_side, PBD_ERR_INVALID_ARGUMENT, "neither body_a nor body_b");
	CASE(d.body_b = fixed, PBD_ERR_INVALID_ARGUMENT, "neither body_a nor body_b");
	CASE(d.body_a = a, PBD_ERR_INVALID_ARGUMENT, "the same body");
	CASE(d.body_a = made_up, PBD_ERR_INVALID_ARGUMENT, "body_a 7");
	CASE(d.type = PBD_JOINT_TYPE_COUNT, PBD_ERR_INVALID_ARGUMENT, "type");
	CASE(d.frame_a.position.x = NAN, PBD_ERR_NOT_FINITE, "frame_a");
	CASE(d.frame_b.rotation = zero, PBD_ERR_INVALID_ARGUMENT, "rotation is zero");
	CASE(d.compliance = -1, PBD_ERR_OUT_OF_RANGE, "compliance");
	CASE((d.limit = true, d.lower = 1, d.upper = 0), PBD_ERR_OUT_OF_RANGE, "lower");
	CASE((d.type = PBD_JOINT_HINGE, d.limit = true, d.lower = -4, d.upper = 0), PBD_ERR_OUT_OF_RANGE, "[-pi, pi]");
	CASE((d.type = PBD_JOINT_DISTANCE, d.lower = -1, d.upper = 1), PBD_ERR_OUT_OF_RANGE, "lower must be >= 0");
	CASE(d.swing = 0, PBD_ERR_OUT_OF_RANGE, "swing");
	CASE((d.motor = PBD_MOTOR_VELOCITY, d.motor_max = 1), PBD_ERR_INVALID_ARGUMENT, "only hinge and prismatic");
	CASE((d.type = PBD_JOINT_HINGE, d.motor = PBD_MOTOR_VELOCITY), PBD_ERR_OUT_OF_RANGE, "motor_max");
	CASE(d.break_force = -1, PBD_ERR_OUT_OF_RANGE, "break_force");
	CASE(d.break_torque = INFINITY, PBD_ERR_OUT_OF_RANGE, "break_torque");
#undef CASE
	for (int k = 0; k < n; ++k) {
		const pbd_status st = pbd_world_add_joints(w, 1, &cases[k].d, NULL);
		const char* err = pbd_world_last_error(w);
		if (st != cases[k].st || !strstr(err, cases[k].says))
			fail_msg("case %d: status %d, error '%s' (wanted %d and '%s')", k, (int)st, err, (int)cases[k].st,
			         cases[k].says);
	}
	assert_int_equal(pbd_world_joint_count(w), 0);
	assert_int_equal(pbd_world_add_joints(w, 1, &base, NULL), PBD_OK);
	pbd_joint_state js;
	assert_int_equal(pbd_world_get_joint_state(w, 1, &js), PBD_ERR_OUT_OF_RANGE);
	assert_int_equal(pbd_world_set_joint_motor(w, 0, PBD_MOTOR_VELOCITY, 1, 1, 0), PBD_ERR_INVALID_ARGUMENT);
	pbd_world_destroy(w);
}

/* A door on two hinges on one axis: ten of their rows are redundant, which the direct solve
 * takes without a complaint; a motor swings the door at its speed and both hinges hold. A net of
 * 24 x 24 balls on 1104 ball joints (3312 rows, past the direct solve's bound) is projected joint
 * by joint: it stays whole, though it stretches by centimetres (0.17 mm when solved directly, at
 * a factor cost that grows faster than its rows). */
static void test_redundant_hinges_and_a_net(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-g, 0), 20, 1);
	const pbd_body_id door = box_body(w, 0.5, 1, 0.025, 500, at(0.5, 1, 0));
	/* the hinges' x axes along the world's y: frames turned 90 degrees about z */
	const pbd_quat xy = pbd_quat_axis_angle(pbd_v3(0, 0, 1), (pbd_real)(TP_PI / 2));
	for (int k = 0; k < 2; ++k) {
		pbd_joint_def d = pbd_joint_def_default();
		d.type = PBD_JOINT_HINGE;
		d.body_a = world_side;
		d.body_b = door;
		d.frame_a = (pbd_pose){pbd_v3(0, (pbd_real)(k ? 1.8 : 0.2), 0), xy};
		d.frame_b = (pbd_pose){pbd_v3((pbd_real)-0.5, (pbd_real)(k ? 0.8 : -0.8), 0), xy};
		if (k) {
			d.motor = PBD_MOTOR_VELOCITY;
			d.motor_target = 1;
			d.motor_max = 500;
		}
		add_joint(w, &d);
	}
	double worst = 0;
	for (int s = 0; s < 60; ++s) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		for (uint32_t j = 0; j < 2; ++j) {
			const pbd_joint_state js = joint_state(w, j);
			worst = fmax(worst, fmax((double)js.error_distance, (double)js.error_angle));
		}
	}
	const double spin = (double)state_of(w, door).angular_velocity.y;
	pbd_world_destroy(w);

	w = tp_world_logged(msg, pbd_v3(0, (pbd_real)-g, 0), 8, 2);
	enum { N = 24 };
	static pbd_body_id ball[N][N];
	pbd_collider_def sphere = pbd_collider_def_default();
	sphere.type = PBD_SHAPE_SPHERE;
	sphere.shape.sphere.center = pbd_v3(0, 0, 0);
	sphere.shape.sphere.radius = (pbd_real)0.05;
	const pbd_collider_id probe = pbd_collider_create(w, &sphere);
	pbd_body_def bd = pbd_body_def_default();
	bd.type = PBD_BODY_DYNAMIC;
	assert_int_equal(pbd_collider_mass_properties(w, probe, 1000, &bd.mass), PBD_OK);
	assert_int_equal(pbd_collider_destroy(w, probe), PBD_OK);
	uint32_t joints = 0;
	for (int i = 0; i < N; ++i)
		for (int k = 0; k < N; ++k) {
			bd.pose = at(0.2 * i, 3, 0.2 * k);
			ball[i][k] = pbd_body_create(w, &bd);
			for (int dir = 0; dir < 2; ++dir) {
				if ((dir ? k : i) == 0) continue;
				pbd_joint_def d = pbd_joint_def_default();
				d.body_a = dir ? ball[i][k - 1] : ball[i - 1][k];
				d.body_b = ball[i][k];
				d.frame_a.position = dir ? pbd_v3(0, 0, (pbd_real)0.1) : pbd_v3((pbd_real)0.1, 0, 0);
				d.frame_b.position = dir ? pbd_v3(0, 0, (pbd_real)-0.1) : pbd_v3((pbd_real)-0.1, 0, 0);
				add_joint(w, &d);
				joints++;
			}
		}
	/* two corners held by the world */
	for (int c = 0; c < 2; ++c) {
		pbd_joint_def d = pbd_joint_def_default();
		d.body_b = ball[c ? N - 1 : 0][0];
		d.frame_a.position = pbd_v3((pbd_real)(c ? 0.2 * (N - 1) : 0), 3, 0);
		add_joint(w, &d);
	}
	double net = 0;
	for (int s = 0; s < 60; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	for (uint32_t j = 0; j < pbd_world_joint_count(w); ++j) net = fmax(net, (double)joint_state(w, j).error_distance);
	printf("  a door on two hinges on one axis: errors up to %.2g, turning at %.4f rad/s (motor 1); a net of %u ball "
	       "joints projected one by one: errors up to %.2g m after 1 s\n",
	       worst, spin, joints, net);
	assert_true(worst < 1e-4);
	assert_true(fabs(spin - 1) < 1e-3);
	/* projected one joint at a time, a net sags: a bound that catches a blow-up, not a quality */
	assert_true(net < 0.25);
	assert_string_equal(msg, "");
	pbd_world_destroy(w);
}

int main(void) {
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hinge_pendulum_period),
	    cmocka_unit_test(test_velocity_motor),
	    cmocka_unit_test(test_position_motor_and_limit),
	    cmocka_unit_test(test_prismatic_slide_and_limit),
	    cmocka_unit_test(test_rope_falls_free_until_taut),
	    cmocka_unit_test(test_force_and_break),
	    cmocka_unit_test(test_chains),
	    cmocka_unit_test(test_chain_threads),
	    cmocka_unit_test(test_joints_keep_momentum),
	    cmocka_unit_test(test_snapshot),
	    cmocka_unit_test(test_body_destroyed),
	    cmocka_unit_test(test_bad_definitions),
	    cmocka_unit_test(test_redundant_hinges_and_a_net),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
