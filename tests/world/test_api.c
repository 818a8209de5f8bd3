/* API robustness: every invalid input is refused with the documented status and one message
 * (sent to the log callback and kept in pbd_world_last_error), and leaves the world exactly as
 * it was. Extreme but valid inputs (a huge dt, an all-pinned body) give no NaN; a deliberately
 * overflowing step is undone and counted as a warning. A tracking allocator checks that every
 * block is freed with the size it was allocated with, including after allocation failures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_physics.h"

/* ---- a world that keeps its messages ---------------------------------------------------- */

typedef struct logbook {
	char last[256];
	int count;
} logbook;

static void log_count(const char* message, void* user) {
	logbook* b = (logbook*)user;
	snprintf(b->last, sizeof b->last, "%s", message);
	b->count++;
}

/* Particles 0..5 in a row, 0 pinned, 5 links, one collider. */
static pbd_world* keeping_world(logbook* book) {
	pbd_world_def def = pbd_world_def_default();
	def.log = log_count;
	def.log_user = book;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	pbd_vec3 x[6];
	pbd_real inv[6];
	for (int i = 0; i < 6; ++i) {
		x[i] = pbd_v3((pbd_real)i * (pbd_real)0.2, 1, 0);
		inv[i] = i == 0 ? 0 : 1;
	}
	assert_int_equal(pbd_world_add_particles(w, 6, x, NULL, inv, NULL), PBD_OK);
	pbd_distance_def dd[5];
	for (uint32_t k = 0; k < 5; ++k) {
		dd[k] = pbd_distance_def_default();
		dd[k].a = k;
		dd[k].b = k + 1;
	}
	assert_int_equal(pbd_world_add_distances(w, 5, dd, NULL), PBD_OK);
	pbd_collider_def cd = pbd_collider_def_default();
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
	for (int s = 0; s < 3; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_int_equal(book->count, 0);
	return w;
}

/* Everything observable about a world. */
typedef struct snapshot {
	uint64_t hash;
	uint32_t np, nd, nt, nc;
	pbd_world_def def;
	pbd_real inv[16];
} snapshot;

static snapshot take(const pbd_world* w) {
	snapshot s;
	memset(&s, 0, sizeof s);
	s.hash = pbd_world_hash(w);
	s.np = pbd_world_particle_count(w);
	s.nd = pbd_world_distance_count(w);
	s.nt = pbd_world_triangle_count(w);
	s.nc = pbd_world_collider_count(w);
	s.def = pbd_world_get_def(w);
	for (uint32_t i = 0; i < s.np && i < 16; ++i) s.inv[i] = pbd_world_inv_masses(w)[i];
	return s;
}

static void same(const snapshot* a, const snapshot* b) {
	assert_true(a->hash == b->hash);
	assert_int_equal(a->np, b->np);
	assert_int_equal(a->nd, b->nd);
	assert_int_equal(a->nt, b->nt);
	assert_int_equal(a->nc, b->nc);
	assert_memory_equal(a->inv, b->inv, sizeof a->inv);
	const pbd_world_def *x = &a->def, *y = &b->def;
	assert_memory_equal(&x->gravity, &y->gravity, sizeof x->gravity);
	assert_true(x->dt == y->dt && x->substeps == y->substeps && x->iterations == y->iterations &&
	            x->max_substeps == y->max_substeps);
	assert_true(x->solver == y->solver && x->formulation == y->formulation && x->damping == y->damping);
	assert_true(x->jacobi_alpha == y->jacobi_alpha && x->jacobi_omega == y->jacobi_omega &&
	            x->jacobi_equal_split == y->jacobi_equal_split);
	assert_true(x->collision_mode == y->collision_mode && x->max_speed == y->max_speed);
}

/* Runs `call`, which must fail with `want`, log exactly one message, keep it as the last error,
 * and change nothing. */
#define EXPECT_REFUSED(w, book, want, call)                                                                            \
	do {                                                                                                               \
		const snapshot before_ = take(w);                                                                              \
		(book)->count = 0;                                                                                             \
		(book)->last[0] = 0;                                                                                           \
		const pbd_status st_ = (call);                                                                                 \
		if (st_ != (want))                                                                                             \
			fail_msg("%s: got '%s', want '%s'", #call, pbd_status_string(st_), pbd_status_string(want));               \
		assert_int_equal((book)->count, 1);                                                                            \
		assert_true(strlen((book)->last) > 0);                                                                         \
		assert_string_equal(pbd_world_last_error(w), (book)->last);                                                    \
		const snapshot after_ = take(w);                                                                               \
		same(&before_, &after_);                                                                                       \
	} while (0)

static const pbd_real nan_r = (pbd_real)NAN;
static const pbd_real inf_r = (pbd_real)INFINITY;

/* ---- world def and settings ------------------------------------------------------------- */

static void expect_create_refused(pbd_world_def def, pbd_status want) {
	logbook book = {"", 0};
	def.log = log_count;
	def.log_user = &book;
	pbd_world* w = (pbd_world*)&book; /* must be overwritten with NULL */
	const pbd_status st = pbd_world_create(&def, &w);
	if (st != want) fail_msg("create: got '%s', want '%s'", pbd_status_string(st), pbd_status_string(want));
	assert_null(w);
	assert_int_equal(book.count, 1);
	assert_true(strlen(book.last) > 0);
}

static void test_world_def_refused(void** state) {
	(void)state;
	pbd_world_def d;
	memset(&d, 0, sizeof d); /* declared, never initialised */
	expect_create_refused(d, PBD_ERR_UNINITIALIZED_DEF);
	d = pbd_world_def_default();
	d.gravity.y = nan_r;
	expect_create_refused(d, PBD_ERR_NOT_FINITE);
	d = pbd_world_def_default();
	d.gravity.x = inf_r;
	expect_create_refused(d, PBD_ERR_NOT_FINITE);
	const pbd_real bad_dt[4] = {0, -1, nan_r, inf_r};
	for (int i = 0; i < 4; ++i) {
		d = pbd_world_def_default();
		d.dt = bad_dt[i];
		expect_create_refused(d, PBD_ERR_OUT_OF_RANGE);
	}
	d = pbd_world_def_default();
	d.substeps = 0;
	expect_create_refused(d, PBD_ERR_OUT_OF_RANGE);
	d = pbd_world_def_default();
	d.max_substeps = -1;
	expect_create_refused(d, PBD_ERR_OUT_OF_RANGE);
	d = pbd_world_def_default();
	d.max_substeps = 100001;
	expect_create_refused(d, PBD_ERR_OUT_OF_RANGE);
	d = pbd_world_def_default();
	d.iterations = 0;
	expect_create_refused(d, PBD_ERR_OUT_OF_RANGE);
	d = pbd_world_def_default();
	d.iterations = -3;
	expect_create_refused(d, PBD_ERR_OUT_OF_RANGE);
	const pbd_real bad_damping[3] = {0, (pbd_real)1.5, (pbd_real)-0.1};
	for (int i = 0; i < 3; ++i) {
		d = pbd_world_def_default();
		d.damping = bad_damping[i];
		expect_create_refused(d, PBD_ERR_OUT_OF_RANGE);
	}
	d = pbd_world_def_default();
	d.jacobi_omega = 2;
	expect_create_refused(d, PBD_ERR_OUT_OF_RANGE);
	d = pbd_world_def_default();
	d.jacobi_omega = 0;
	expect_create_refused(d, PBD_ERR_OUT_OF_RANGE);
	d = pbd_world_def_default();
	d.jacobi_alpha = -1;
	expect_create_refused(d, PBD_ERR_OUT_OF_RANGE);
	d = pbd_world_def_default();
	d.max_speed = -1;
	expect_create_refused(d, PBD_ERR_OUT_OF_RANGE);
	d = pbd_world_def_default();
	d.solver = (pbd_solver)7;
	expect_create_refused(d, PBD_ERR_INVALID_ARGUMENT);
	d = pbd_world_def_default();
	d.formulation = (pbd_formulation)-1;
	expect_create_refused(d, PBD_ERR_INVALID_ARGUMENT);
	d = pbd_world_def_default();
	d.collision_mode = (pbd_collision_mode)2;
	expect_create_refused(d, PBD_ERR_INVALID_ARGUMENT);

	/* NULL pointers: no crash, no world. */
	d = pbd_world_def_default();
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(NULL, &w), PBD_ERR_INVALID_ARGUMENT);
	assert_null(w);
	assert_int_equal(pbd_world_create(&d, NULL), PBD_ERR_INVALID_ARGUMENT);
	pbd_world_destroy(NULL);
}

static void test_settings_refused(void** state) {
	(void)state;
	logbook book = {"", 0};
	pbd_world* w = keeping_world(&book);
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_set_dt(w, 0));
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_set_dt(w, -(pbd_real)0.01));
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_set_dt(w, nan_r));
	/* Substeps so short that 1/h^2 overflows, or so long that h^2 does: XPBD would compute
	 * inf * 0 in every projection. */
#ifdef PBD_DOUBLE
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_set_dt(w, 1e-200));
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_set_dt(w, 1e300));
#else
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_set_dt(w, 1e-25f));
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_set_dt(w, 1e30f));
#endif
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_set_substeps(w, 0));
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_set_max_substeps(w, -2));
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_set_iterations(w, 0));
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_set_damping(w, 0));
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_set_damping(w, (pbd_real)1.01));
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_set_jacobi(w, 0, 2, false));
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_set_jacobi(w, -1, 1, true));
	EXPECT_REFUSED(w, &book, PBD_ERR_NOT_FINITE, pbd_world_set_gravity(w, pbd_v3(0, nan_r, 0)));
	EXPECT_REFUSED(w, &book, PBD_ERR_NOT_FINITE, pbd_world_set_gravity(w, pbd_v3(0, 0, -inf_r)));
	EXPECT_REFUSED(w, &book, PBD_ERR_INVALID_ARGUMENT, pbd_world_set_solver(w, (pbd_solver)5));
	EXPECT_REFUSED(w, &book, PBD_ERR_INVALID_ARGUMENT, pbd_world_set_formulation(w, (pbd_formulation)9));
	EXPECT_REFUSED(w, &book, PBD_ERR_INVALID_ARGUMENT, pbd_world_set_collision_mode(w, (pbd_collision_mode)3));
	/* And valid settings do apply. */
	assert_int_equal(pbd_world_set_substeps(w, 4), PBD_OK);
	assert_int_equal(pbd_world_get_def(w).substeps, 4);
	assert_int_equal(pbd_world_set_max_substeps(w, 2), PBD_OK); /* below substeps: no effect, allowed */
	assert_int_equal(pbd_world_step_substeps(NULL), 0);
	/* get_def hands back a def that creates a world with the same settings. */
	pbd_world_def copy = pbd_world_get_def(w);
	pbd_world* w2 = NULL;
	assert_int_equal(pbd_world_create(&copy, &w2), PBD_OK);
	assert_int_equal(pbd_world_get_def(w2).substeps, 4);
	pbd_world_destroy(w2);
	book.count = 0;
	/* NULL world. */
	assert_int_equal(pbd_world_step(NULL), PBD_ERR_INVALID_ARGUMENT);
	assert_int_equal(pbd_world_set_dt(NULL, 1), PBD_ERR_INVALID_ARGUMENT);
	assert_int_equal(pbd_world_set_jacobi(NULL, 0, 1, false), PBD_ERR_INVALID_ARGUMENT);
	assert_int_equal(pbd_world_particle_count(NULL), 0);
	assert_null(pbd_world_positions(NULL));
	assert_non_null(pbd_world_last_error(NULL));
	pbd_world_get_stats(NULL, NULL);
	pbd_world_get_stats(w, NULL);
	assert_int_equal(pbd_world_get_warning(NULL, PBD_WARN_NONFINITE).count, 0);
	assert_int_equal(pbd_world_get_warning(w, (pbd_warning)99).count, 0);
	assert_int_equal(book.count, 0);
	pbd_world_destroy(w);
}

/* ---- particles -------------------------------------------------------------------------- */

#ifdef PBD_DOUBLE
#define PBD_TEST_SUBNORMAL 1e-310
#else
#define PBD_TEST_SUBNORMAL 1e-40f
#endif

static void test_particles_refused(void** state) {
	(void)state;
	logbook book = {"", 0};
	pbd_world* w = keeping_world(&book);
	pbd_vec3 x[4] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}};
	pbd_vec3 v[4] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
	pbd_real inv[4] = {1, 1, 1, 1};
	/* A bad element anywhere refuses the whole batch. */
	x[2].y = nan_r;
	EXPECT_REFUSED(w, &book, PBD_ERR_NOT_FINITE, pbd_world_add_particles(w, 4, x, v, inv, NULL));
	x[2].y = inf_r;
	EXPECT_REFUSED(w, &book, PBD_ERR_NOT_FINITE, pbd_world_add_particles(w, 4, x, v, inv, NULL));
	x[2].y = 0;
	v[3].z = nan_r;
	EXPECT_REFUSED(w, &book, PBD_ERR_NOT_FINITE, pbd_world_add_particles(w, 4, x, v, inv, NULL));
	v[3].z = 0;
	inv[1] = -1;
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_add_particles(w, 4, x, v, inv, NULL));
	inv[1] = nan_r;
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_add_particles(w, 4, x, v, inv, NULL));
	inv[1] = 1;
	EXPECT_REFUSED(w, &book, PBD_ERR_INVALID_ARGUMENT, pbd_world_add_particles(w, 0, x, v, inv, NULL));
	EXPECT_REFUSED(w, &book, PBD_ERR_INVALID_ARGUMENT, pbd_world_add_particles(w, 4, NULL, v, inv, NULL));
	EXPECT_REFUSED(w, &book, PBD_ERR_INVALID_ARGUMENT, pbd_world_add_particles(w, 4, x, v, NULL, NULL));
	assert_int_equal(pbd_world_add_particles(NULL, 4, x, v, inv, NULL), PBD_ERR_INVALID_ARGUMENT);

	/* Single-particle calls: index out of range, bad values. */
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_particle_set_inv_mass(w, 6, 1));
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_particle_set_inv_mass(w, 2, -1));
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_particle_set_inv_mass(w, 2, 0));
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_particle_set_inv_mass(w, 2, inf_r));
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_particle_pin(w, 6));
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_particle_unpin(w, UINT32_MAX));
	EXPECT_REFUSED(w, &book, PBD_ERR_INVALID_ARGUMENT, pbd_particle_set_target(w, 3, pbd_v3(0, 0, 0))); /* not pinned */
	EXPECT_REFUSED(w, &book, PBD_ERR_NOT_FINITE, pbd_particle_set_target(w, 0, pbd_v3(nan_r, 0, 0)));
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_particle_set_target(w, 6, pbd_v3(0, 0, 0)));
	EXPECT_REFUSED(w, &book, PBD_ERR_NOT_FINITE, pbd_particle_set_force(w, 1, pbd_v3(0, inf_r, 0)));
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_particle_set_force(w, 6, pbd_v3(0, 1, 0)));
	assert_false(pbd_particle_is_pinned(w, 6));
	assert_false(pbd_particle_is_pinned(NULL, 0));

	/* Bulk copies: ranges past the end (also ones whose end wraps around), NULL buffers,
	 * non-finite input. */
	pbd_vec3 buf[8];
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_get_positions(w, 7, 0, buf));
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_get_positions(w, 3, 4, buf));
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_get_positions(w, 1, UINT32_MAX, buf));
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_get_velocities(w, 0, 7, buf));
	EXPECT_REFUSED(w, &book, PBD_ERR_INVALID_ARGUMENT, pbd_world_get_positions(w, 0, 2, NULL));
	assert_int_equal(pbd_world_get_positions(w, 6, 0, buf), PBD_OK); /* empty range at the end */
	assert_int_equal(pbd_world_get_positions(w, 0, 6, buf), PBD_OK);
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_set_positions(w, 5, 2, buf));
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_set_positions(w, 2, UINT32_MAX - 1, buf));
	EXPECT_REFUSED(w, &book, PBD_ERR_INVALID_ARGUMENT, pbd_world_set_velocities(w, 0, 1, NULL));
	buf[3].x = nan_r;
	EXPECT_REFUSED(w, &book, PBD_ERR_NOT_FINITE, pbd_world_set_positions(w, 0, 6, buf));
	EXPECT_REFUSED(w, &book, PBD_ERR_NOT_FINITE, pbd_world_set_velocities(w, 0, 6, buf));
	pbd_world_destroy(w);
}

/* ---- constraints, triangles ------------------------------------------------------------- */

/* Particles given by mass: zero, negative, subnormal and non-finite masses have no inverse to
 * store; a good batch stores 1/m. */
static void test_particles_by_mass(void** state) {
	(void)state;
	logbook mbook = {"", 0};
	pbd_world* wm = keeping_world(&mbook);
	pbd_vec3 x[4] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}};
	pbd_vec3 v[4] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
	pbd_real mass[4] = {1, 2, 0, 4};
	EXPECT_REFUSED(wm, &mbook, PBD_ERR_OUT_OF_RANGE, pbd_world_add_particles_mass(wm, 4, x, v, mass, NULL));
	mass[2] = -1;
	EXPECT_REFUSED(wm, &mbook, PBD_ERR_OUT_OF_RANGE, pbd_world_add_particles_mass(wm, 4, x, v, mass, NULL));
	mass[2] = nan_r;
	EXPECT_REFUSED(wm, &mbook, PBD_ERR_OUT_OF_RANGE, pbd_world_add_particles_mass(wm, 4, x, v, mass, NULL));
	mass[2] = PBD_TEST_SUBNORMAL;
	EXPECT_REFUSED(wm, &mbook, PBD_ERR_OUT_OF_RANGE, pbd_world_add_particles_mass(wm, 4, x, v, mass, NULL));
	EXPECT_REFUSED(wm, &mbook, PBD_ERR_INVALID_ARGUMENT, pbd_world_add_particles_mass(wm, 4, x, v, NULL, NULL));
	mass[2] = 8;
	uint32_t first = 99;
	assert_int_equal(pbd_world_add_particles_mass(wm, 4, x, v, mass, &first), PBD_OK);
	assert_int_equal(first, pbd_world_particle_count(wm) - 4);
	const pbd_real* iw = pbd_world_inv_masses(wm) + first;
	assert_true(iw[0] == 1 && iw[1] == (pbd_real)0.5 && iw[2] == (pbd_real)0.125 && iw[3] == (pbd_real)0.25);
	pbd_world_destroy(wm);
}

static void test_distances_refused(void** state) {
	(void)state;
	logbook book = {"", 0};
	pbd_world* w = keeping_world(&book);
	pbd_distance_def dd[3];
	for (uint32_t k = 0; k < 3; ++k) {
		dd[k] = pbd_distance_def_default();
		dd[k].a = k;
		dd[k].b = k + 2;
	}
	/* Each fault in the last def of a batch refuses the batch. */
	dd[2].b = 6;
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_add_distances(w, 3, dd, NULL));
	dd[2].b = UINT32_MAX;
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_add_distances(w, 3, dd, NULL));
	dd[2].b = 2;
	EXPECT_REFUSED(w, &book, PBD_ERR_INVALID_ARGUMENT, pbd_world_add_distances(w, 3, dd, NULL));
	dd[2].b = 4;
	dd[2].stiffness_stretch = (pbd_real)1.5;
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_add_distances(w, 3, dd, NULL));
	dd[2].stiffness_stretch = 1;
	dd[2].stiffness_compress = -(pbd_real)0.1;
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_add_distances(w, 3, dd, NULL));
	dd[2].stiffness_compress = 1;
	dd[2].compliance_stretch = -1;
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_add_distances(w, 3, dd, NULL));
	dd[2].compliance_stretch = 0;
	dd[2].compliance_compress = inf_r;
	EXPECT_REFUSED(w, &book, PBD_ERR_NOT_FINITE, pbd_world_add_distances(w, 3, dd, NULL));
	dd[2].compliance_compress = 0;
	dd[2].rest = nan_r;
	EXPECT_REFUSED(w, &book, PBD_ERR_NOT_FINITE, pbd_world_add_distances(w, 3, dd, NULL));
	dd[2].rest = -1;
	EXPECT_REFUSED(w, &book, PBD_ERR_INVALID_ARGUMENT, pbd_world_add_distances(w, 0, dd, NULL));
	EXPECT_REFUSED(w, &book, PBD_ERR_INVALID_ARGUMENT, pbd_world_add_distances(w, 3, NULL, NULL));
	/* The batch is fine now. */
	uint32_t first = 0;
	assert_int_equal(pbd_world_add_distances(w, 3, dd, &first), PBD_OK);
	assert_int_equal(first, 5);
	pbd_distance_def got;
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_get_distance(w, 8, &got));
	assert_int_equal(pbd_world_get_distance(w, 7, NULL), PBD_ERR_INVALID_ARGUMENT);
	assert_int_equal(pbd_world_get_distance(w, 7, &got), PBD_OK);
	assert_true(got.a == 2 && got.b == 4);

	/* Triangles. */
	const uint32_t tri_bad[6] = {0, 1, 2, 3, 4, 6};
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_world_add_triangles(w, 2, tri_bad, NULL));
	const uint32_t tri_rep[6] = {0, 1, 2, 3, 3, 4};
	EXPECT_REFUSED(w, &book, PBD_ERR_DEGENERATE, pbd_world_add_triangles(w, 2, tri_rep, NULL));
	EXPECT_REFUSED(w, &book, PBD_ERR_INVALID_ARGUMENT, pbd_world_add_triangles(w, 0, tri_rep, NULL));
	EXPECT_REFUSED(w, &book, PBD_ERR_INVALID_ARGUMENT, pbd_world_add_triangles(w, 1, NULL, NULL));
	pbd_world_destroy(w);
}

/* ---- colliders -------------------------------------------------------------------------- */

/* A refused collider: the null id (pbd_collider_create returns no status), one message kept as
 * the last error, nothing added. */
#define EXPECT_COLLIDER_REFUSED(w, book, defp)                                                                         \
	do {                                                                                                               \
		const snapshot before_ = take(w);                                                                              \
		(book)->count = 0;                                                                                             \
		const pbd_collider_id id_ = pbd_collider_create(w, defp);                                                      \
		assert_int_equal(id_.index1, 0);                                                                               \
		assert_false(pbd_collider_is_valid(w, id_));                                                                   \
		assert_int_equal((book)->count, 1);                                                                            \
		assert_string_equal(pbd_world_last_error(w), (book)->last);                                                    \
		const snapshot after_ = take(w);                                                                               \
		same(&before_, &after_);                                                                                       \
	} while (0)

static void test_colliders_refused(void** state) {
	(void)state;
	logbook book = {"", 0};
	pbd_world* w = keeping_world(&book);
	pbd_collider_def cd;
	memset(&cd, 0, sizeof cd);
	EXPECT_COLLIDER_REFUSED(w, &book, &cd);
	cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_SPHERE;
	cd.shape.sphere.radius = 0;
	EXPECT_COLLIDER_REFUSED(w, &book, &cd);
	cd.shape.sphere.radius = -1;
	EXPECT_COLLIDER_REFUSED(w, &book, &cd);
	cd.shape.sphere.radius = 1;
	cd.shape.sphere.center.z = nan_r;
	EXPECT_COLLIDER_REFUSED(w, &book, &cd);
	cd = pbd_collider_def_default();
	cd.shape.plane.normal = pbd_v3(0, 0, 0);
	EXPECT_COLLIDER_REFUSED(w, &book, &cd);
	cd.shape.plane.normal = pbd_v3(0, 1, 0);
	cd.shape.plane.offset = inf_r;
	EXPECT_COLLIDER_REFUSED(w, &book, &cd);
	cd = pbd_collider_def_default();
	cd.type = (pbd_shape_type)7;
	EXPECT_COLLIDER_REFUSED(w, &book, &cd);
	cd.type = PBD_SHAPE_COUNT;
	EXPECT_COLLIDER_REFUSED(w, &book, &cd);
	cd = pbd_collider_def_default();
	cd.margin = -(pbd_real)0.01;
	EXPECT_COLLIDER_REFUSED(w, &book, &cd);
	EXPECT_COLLIDER_REFUSED(w, &book, NULL);
	const pbd_collider_id none = pbd_collider_create(NULL, &cd);
	assert_int_equal(none.index1, 0);
	/* The last error names the failing call. */
	book.count = 0;
	cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_SPHERE;
	assert_int_equal(pbd_collider_create(w, &cd).index1, 0); /* radius 0 in the default union */
	assert_non_null(strstr(pbd_world_last_error(w), "pbd_collider_create"));
	pbd_world_destroy(w);
}

/* ---- bodies ----------------------------------------------------------------------------- */

static void test_bodies_refused(void** state) {
	(void)state;
	logbook book = {"", 0};
	pbd_world* w = keeping_world(&book);
	pbd_mesh m;
	tp_grid(&m, 3, 3, 1, pbd_v3(0, 0, 0), 1, false);
	pbd_soft_def bd;
	memset(&bd, 0, sizeof bd);
	bd.mesh = &m;
	EXPECT_REFUSED(w, &book, PBD_ERR_UNINITIALIZED_DEF, pbd_soft_create(w, &bd, NULL));
	bd = pbd_soft_def_default();
	EXPECT_REFUSED(w, &book, PBD_ERR_INVALID_ARGUMENT, pbd_soft_create(w, &bd, NULL)); /* mesh NULL */
	EXPECT_REFUSED(w, &book, PBD_ERR_INVALID_ARGUMENT, pbd_soft_create(w, NULL, NULL));
	bd.mesh = &m;
	bd.mass = 0;
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_soft_create(w, &bd, NULL));
	bd.mass = nan_r;
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_soft_create(w, &bd, NULL));
	bd.mass = 1;
	bd.mass_mode = (pbd_mass_mode)3;
	EXPECT_REFUSED(w, &book, PBD_ERR_INVALID_ARGUMENT, pbd_soft_create(w, &bd, NULL));
	bd.mass_mode = PBD_MASS_PER_PARTICLE;
	const uint32_t pins[2] = {0, 9};
	bd.pinned = pins;
	bd.pinned_count = 2;
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_soft_create(w, &bd, NULL));
	bd.pinned = NULL;
	EXPECT_REFUSED(w, &book, PBD_ERR_INVALID_ARGUMENT, pbd_soft_create(w, &bd, NULL));
	bd.pinned_count = 0;
	bd.translation.x = inf_r;
	EXPECT_REFUSED(w, &book, PBD_ERR_NOT_FINITE, pbd_soft_create(w, &bd, NULL));
	bd.translation.x = 0;
	bd.material[PBD_EDGE_SHEAR].stiffness_stretch = (pbd_real)1.5;
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_soft_create(w, &bd, NULL));
	bd.material[PBD_EDGE_SHEAR].stiffness_stretch = 1;
	bd.material[PBD_EDGE_BEND].compliance_compress = -1;
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_soft_create(w, &bd, NULL));
	bd.material[PBD_EDGE_BEND].compliance_compress = 0;
	/* A broken hand-made mesh: an edge to itself, an edge out of range, a bad rest length. */
	m.edges[2 * 3 + 1] = m.edges[2 * 3];
	EXPECT_REFUSED(w, &book, PBD_ERR_DEGENERATE, pbd_soft_create(w, &bd, NULL));
	m.edges[2 * 3 + 1] = 9;
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_soft_create(w, &bd, NULL));
	m.edges[2 * 3 + 1] = 4;
	pbd_real rest[32];
	for (int i = 0; i < 32; ++i) rest[i] = 1;
	rest[5] = -1;
	m.edge_rest = rest;
	EXPECT_REFUSED(w, &book, PBD_ERR_OUT_OF_RANGE, pbd_soft_create(w, &bd, NULL));
	m.edge_rest = NULL;
	/* Mass by density needs a measure: a single vertex has none. */
	pbd_mesh one;
	memset(&one, 0, sizeof one);
	const pbd_vec3 p0 = {0, 0, 0};
	one.vertex_count = 1;
	one.positions = (pbd_vec3*)&p0;
	bd.mesh = &one;
	bd.mass_mode = PBD_MASS_DENSITY;
	EXPECT_REFUSED(w, &book, PBD_ERR_DEGENERATE, pbd_soft_create(w, &bd, NULL));
	one.vertex_count = 0;
	EXPECT_REFUSED(w, &book, PBD_ERR_INVALID_ARGUMENT, pbd_soft_create(w, &bd, NULL));
	assert_int_equal(pbd_soft_create(NULL, &bd, NULL), PBD_ERR_INVALID_ARGUMENT);
	pbd_mesh_free(&m);
	pbd_world_destroy(w);
}

static void test_status_strings(void** state) {
	(void)state;
	const char* seen[16];
	int n = 0;
	for (int s = PBD_OK; s <= PBD_ERR_UNINITIALIZED_DEF; ++s) {
		const char* str = pbd_status_string((pbd_status)s);
		assert_non_null(str);
		assert_true(strlen(str) > 0);
		for (int k = 0; k < n; ++k) assert_true(strcmp(seen[k], str) != 0);
		seen[n++] = str;
	}
	assert_non_null(pbd_status_string((pbd_status)1234));
	assert_non_null(pbd_version());
}

/* ---- extreme but valid inputs ------------------------------------------------------------ */

static pbd_world* cloth_world(pbd_world_def def, bool all_pinned, pbd_real compliance) {
	pbd_world* w = test_world(&def);
	pbd_mesh m;
	tp_grid(&m, 6, 6, 1, pbd_v3(0, 1, 0), 2, true);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	uint32_t pins[36];
	for (uint32_t i = 0; i < 36; ++i) pins[i] = i;
	bd.pinned = pins;
	if (!all_pinned) pins[1] = 5; /* two corners */
	bd.pinned_count = all_pinned ? 36 : 2;
	for (int k = 0; k < PBD_EDGE_KIND_COUNT; ++k) {
		bd.material[k].compliance_stretch = compliance;
		bd.material[k].compliance_compress = compliance;
	}
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);
	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_SPHERE;
	cd.shape.sphere.center = pbd_v3((pbd_real)0.5, (pbd_real)0.5, (pbd_real)0.5);
	cd.shape.sphere.radius = (pbd_real)0.3;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
	return w;
}

/* dt = 1e6 s: the cloth falls 5e12 m in one step, which floats hold. FP traps stay on: any
 * overflow or NaN inside the library fails the test. */
static void test_huge_dt(void** state) {
	(void)state;
	const pbd_solver solvers[2] = {PBD_SOLVER_GAUSS_SEIDEL, PBD_SOLVER_JACOBI};
	const pbd_formulation forms[2] = {PBD_FORMULATION_PBD, PBD_FORMULATION_XPBD};
	for (int s = 0; s < 2; ++s)
		for (int f = 0; f < 2; ++f) {
			pbd_world_def def = pbd_world_def_default();
			def.dt = (pbd_real)PBD_MAX_DT;
			def.divergence_strain = 0; /* the cloth tears apart; this test asks only for finite numbers */
			def.solver = solvers[s];
			def.formulation = forms[f];
			pbd_world* w = cloth_world(def, false, (pbd_real)1e-4);
			for (int k = 0; k < 3; ++k) assert_int_equal(pbd_world_step(w), PBD_OK);
			assert_true(tp_all_finite(w));
			assert_int_equal(pbd_world_get_warning(w, PBD_WARN_NONFINITE).count, 0);
			pbd_stats st;
			pbd_world_get_stats(w, &st);
			assert_true(isfinite(st.kinetic_energy) && isfinite(st.potential_energy) && isfinite(st.max_strain));
			pbd_world_destroy(w);
		}
}

/* Velocities of 1e30 m/s are finite but carry the particles 1e28 m in one step, where float
 * squared lengths overflow (traps off): the library must undo the step for the particles that
 * went non-finite, zero their velocities, count the event and log it once, however many steps
 * and particles it hits, and report the step as diverged. */
static void test_overflowing_step_is_undone(void** state) {
	(void)state;
	if (sizeof(pbd_real) != sizeof(float)) skip(); /* the squared lengths below do not overflow a double */
	logbook book = {"", 0};
	pbd_world_def def = pbd_world_def_default();
	def.log = log_count;
	def.log_user = &book;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	pbd_mesh m;
	tp_grid(&m, 4, 4, 1, pbd_v3(0, 1, 0), 1, false);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	const uint32_t pin = 0;
	bd.pinned = &pin;
	bd.pinned_count = 1;
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);
	pbd_vec3 fast[16];
	for (uint32_t i = 0; i < 16; ++i) fast[i] = pbd_v3((i % 2 ? 1 : -1) * (pbd_real)1e30, 0, 0);
	assert_int_equal(pbd_world_set_velocities(w, 0, 16, fast), PBD_OK);
	pbd_vec3 before[16];
	assert_int_equal(pbd_world_get_positions(w, 0, 16, before), PBD_OK);
	test_disable_fp_traps();
	assert_int_equal(pbd_world_step(w), PBD_OK);
	test_enable_fp_traps();
	assert_true(tp_all_finite(w));
	/* Restored to the start of the step, velocities zeroed. */
	assert_memory_equal(pbd_world_positions(w), before, sizeof before);
	for (uint32_t i = 0; i < 16; ++i) {
		const pbd_vec3 v = pbd_world_velocities(w)[i];
		assert_true(v.x == 0 && v.y == 0 && v.z == 0);
	}
	const pbd_warning_stat ws = pbd_world_get_warning(w, PBD_WARN_NONFINITE);
	assert_true(ws.count >= 1);
	assert_true(ws.last_index < 16);
	assert_int_equal(pbd_world_get_warning(w, PBD_WARN_DIVERGED).count, 1); /* one step diverged */
	assert_int_equal(book.count, 2); /* each logged once: the restore and the divergence */
	assert_non_null(strstr(book.last, "diverged"));
	/* The undone step zeroed the velocities: the next one is an ordinary fall. */
	assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_true(pbd_world_positions(w)[15].y < before[15].y);
	assert_int_equal(pbd_world_get_warning(w, PBD_WARN_DIVERGED).count, 1);
	assert_int_equal(book.count, 2);
	pbd_world_destroy(w);
}

/* An all-pinned body has no free particle in any constraint: no projection may divide by its
 * zero total inverse mass, in any solver or formulation, and nothing moves. */
static void test_all_pinned(void** state) {
	(void)state;
	const pbd_solver solvers[2] = {PBD_SOLVER_GAUSS_SEIDEL, PBD_SOLVER_JACOBI};
	const pbd_formulation forms[2] = {PBD_FORMULATION_PBD, PBD_FORMULATION_XPBD};
	const pbd_real compliances[2] = {0, (pbd_real)1e-3};
	for (int s = 0; s < 2; ++s)
		for (int f = 0; f < 2; ++f)
			for (int c = 0; c < 2; ++c)
				for (int e = 0; e < 2; ++e) {
					pbd_world_def def = pbd_world_def_default();
					def.solver = solvers[s];
					def.formulation = forms[f];
					def.jacobi_equal_split = e == 1;
					def.collision_mode = c ? PBD_COLLISION_AFTER_SOLVER : PBD_COLLISION_IN_SOLVER;
					pbd_world* w = cloth_world(def, true, compliances[c]);
					/* Stretch it so that the constraints are violated. */
					pbd_vec3 x[36];
					assert_int_equal(pbd_world_get_positions(w, 0, 36, x), PBD_OK);
					for (int i = 0; i < 36; ++i) x[i] = pbd_v3_scale(x[i], (pbd_real)1.3);
					assert_int_equal(pbd_world_set_positions(w, 0, 36, x), PBD_OK);
					const uint64_t h = pbd_world_hash(w);
					for (int k = 0; k < 5; ++k) assert_int_equal(pbd_world_step(w), PBD_OK);
					assert_true(pbd_world_hash(w) == h);
					pbd_stats st;
					pbd_world_get_stats(w, &st);
					assert_true(st.kinetic_energy == 0 && st.potential_energy == 0);
					assert_true(st.max_strain > 0.2);
					assert_int_equal(pbd_world_get_warning(w, PBD_WARN_NONFINITE).count, 0);
					pbd_world_destroy(w);
				}
}

/* A world with nothing in it (or only colliders) steps, for both solvers: the particle loops
 * and copies run over empty arrays that were never allocated. */
static void test_empty_world(void** state) {
	(void)state;
	for (int s = 0; s < 2; ++s) {
		pbd_world_def def = pbd_world_def_default();
		def.solver = s ? PBD_SOLVER_JACOBI : PBD_SOLVER_GAUSS_SEIDEL;
		pbd_world* w = test_world(&def);
		const uint64_t h = pbd_world_hash(w);
		assert_int_equal(pbd_world_step(w), PBD_OK);
		pbd_collider_def cd = pbd_collider_def_default();
		assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
		assert_int_equal(pbd_world_step(w), PBD_OK);
		assert_true(pbd_world_hash(w) == h);
		pbd_stats st;
		pbd_world_get_stats(w, &st);
		assert_true(st.particles == 0 && st.kinetic_energy == 0 && st.contacts == 0 && st.steps == 2);
		pbd_world_destroy(w);
	}
}

/* max_speed clamps and counts. */
static void test_speed_clamp(void** state) {
	(void)state;
	pbd_world_def def = pbd_world_def_default();
	def.max_speed = 2;
	pbd_world* w = test_world(&def);
	const pbd_vec3 x = {0, 0, 0};
	const pbd_real inv = 1;
	assert_int_equal(pbd_world_add_particles(w, 1, &x, NULL, &inv, NULL), PBD_OK);
	for (int k = 0; k < 60; ++k) {
		assert_int_equal(pbd_world_step(w), PBD_OK);
		assert_true(tp_len(pbd_world_velocities(w)[0]) <= 2 * (1 + 1e-6));
	}
	/* Free fall reaches 2 m/s after 12-13 steps of 1/60 s; every later step clamps. */
	const pbd_warning_stat ws = pbd_world_get_warning(w, PBD_WARN_SPEED_CLAMPED);
	assert_true(ws.count >= 45 && ws.count <= 49);
	assert_int_equal(ws.last_index, 0);
	pbd_world_destroy(w);

	/* Speeds whose float square overflows are clamped to max_speed too, not to zero. */
	def = pbd_world_def_default();
	def.max_speed = 10;
	def.gravity = pbd_v3(0, 0, 0);
	w = test_world(&def);
	const pbd_vec3 xs[2] = {{0, 0, 0}, {1, 0, 0}};
	const pbd_vec3 vs[2] = {{(pbd_real)1e19, 0, 0}, {0, (pbd_real)-1e20, 0}};
	const pbd_real invs[2] = {1, 1};
	assert_int_equal(pbd_world_add_particles(w, 2, xs, vs, invs, NULL), PBD_OK);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_near(pbd_world_velocities(w)[0].x, 10, 1e-4);
	assert_near(pbd_world_velocities(w)[1].y, -10, 1e-4);
	pbd_world_destroy(w);
}

/* ---- allocator ------------------------------------------------------------------------- */

enum { TRACK_MAX = 256 };

typedef struct tracker {
	void* ptr[TRACK_MAX];
	size_t size[TRACK_MAX];
	int live;
	long attempts;
	long fail_at; /* the attempt that returns NULL; -1 never */
	int size_mismatch;
	int unknown_free;
} tracker;

static int track_find(tracker* t, void* p) {
	for (int i = 0; i < t->live; ++i)
		if (t->ptr[i] == p) return i;
	return -1;
}

static void* track_alloc(size_t size, void* user) {
	tracker* t = (tracker*)user;
	if (t->attempts++ == t->fail_at) return NULL;
	void* p = malloc(size);
	assert_true(t->live < TRACK_MAX);
	t->ptr[t->live] = p;
	t->size[t->live++] = size;
	return p;
}

static void* track_realloc(void* ptr, size_t old_size, size_t new_size, void* user) {
	tracker* t = (tracker*)user;
	if (t->attempts++ == t->fail_at) return NULL;
	if (!ptr) {
		t->attempts--;
		return track_alloc(new_size, user);
	}
	const int i = track_find(t, ptr);
	assert_true(i >= 0);
	if (t->size[i] != old_size) t->size_mismatch++;
	void* p = realloc(ptr, new_size);
	t->ptr[i] = p;
	t->size[i] = new_size;
	return p;
}

static void track_free(void* ptr, size_t size, void* user) {
	tracker* t = (tracker*)user;
	const int i = track_find(t, ptr);
	if (i < 0) {
		t->unknown_free++;
		return;
	}
	if (t->size[i] != size) t->size_mismatch++;
	free(ptr);
	t->ptr[i] = t->ptr[t->live - 1];
	t->size[i] = t->size[t->live - 1];
	t->live--;
}

/* A full life: create, two bodies, colliders (one destroyed), steps, destroy. Returns false
 * when some call ran out of memory (which must then be the status it returned). */
static bool life(tracker* t, bool use_realloc) {
	logbook book = {"", 0};
	pbd_world_def def = pbd_world_def_default();
	def.allocator.alloc = track_alloc;
	def.allocator.realloc = use_realloc ? track_realloc : NULL;
	def.allocator.free = track_free;
	def.allocator.user = t;
	def.log = log_count;
	def.log_user = &book;
	def.particle_capacity = 8; /* small, so the arrays grow */
	pbd_world* w = NULL;
	pbd_status st = pbd_world_create(&def, &w);
	if (st != PBD_OK) {
		assert_int_equal(st, PBD_ERR_OUT_OF_MEMORY);
		assert_null(w);
		return false;
	}
	bool ok = true;
	pbd_mesh m;
	tp_grid(&m, 9, 9, 1, pbd_v3(0, 1, 0), 2, true);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	st = pbd_soft_create(w, &bd, NULL);
	if (st != PBD_OK) {
		assert_int_equal(st, PBD_ERR_OUT_OF_MEMORY);
		ok = false;
	}
	st = pbd_soft_create(w, &bd, NULL);
	if (st != PBD_OK) {
		assert_int_equal(st, PBD_ERR_OUT_OF_MEMORY);
		ok = false;
	}
	pbd_mesh_free(&m);
	pbd_collider_def cd = pbd_collider_def_default();
	for (int k = 0; k < 12; ++k) {
		const pbd_collider_id id = pbd_collider_create(w, &cd);
		if (id.index1 == 0) ok = false;
		if (k == 3 && id.index1) assert_int_equal(pbd_collider_destroy(w, id), PBD_OK);
	}
	for (int k = 0; k < 3; ++k) {
		st = pbd_world_step(w);
		if (st != PBD_OK) {
			assert_int_equal(st, PBD_ERR_OUT_OF_MEMORY);
			ok = false;
		}
	}
	assert_true(tp_all_finite(w));
	/* Only a failure may say something. */
	if (ok) assert_int_equal(book.count, 0);
	pbd_world_destroy(w);
	return ok;
}

static void test_allocator_accounting(void** state) {
	(void)state;
	for (int r = 0; r < 2; ++r) {
		tracker t;
		memset(&t, 0, sizeof t);
		t.fail_at = -1;
		assert_true(life(&t, r == 1));
		assert_int_equal(t.live, 0);
		assert_int_equal(t.size_mismatch, 0);
		assert_int_equal(t.unknown_free, 0);
		assert_true(t.attempts > 10);
	}
}

/* Every single allocation failure is reported as out of memory, leaks nothing, and frees
 * every block with the size it has. */
static void test_allocation_failures(void** state) {
	(void)state;
	char report[2][160] = {"", ""};
	for (int r = 0; r < 2; ++r) {
		tracker t;
		memset(&t, 0, sizeof t);
		t.fail_at = -1;
		life(&t, r == 1);
		const long total = t.attempts;
		int failures_with_mismatch = 0;
		long first_mismatch = -1;
		for (long k = 0; k < total; ++k) {
			memset(&t, 0, sizeof t);
			t.fail_at = k;
			assert_false(life(&t, r == 1));
			assert_int_equal(t.live, 0);
			assert_int_equal(t.unknown_free, 0);
			if (t.size_mismatch) {
				failures_with_mismatch++;
				if (first_mismatch < 0) first_mismatch = k;
			}
		}
		if (failures_with_mismatch)
			snprintf(report[r], sizeof report[r],
			         "%s allocator: %d of %ld injected failures leave blocks freed with a wrong size (first at "
			         "allocation %ld)",
			         r ? "realloc" : "alloc-only", failures_with_mismatch, total, first_mismatch);
	}
	if (report[0][0] || report[1][0]) fail_msg("%s; %s", report[0], report[1]);
}

/* Soft objects get ids with a generation: valid after creation, the ranges they report are
 * what was added (two objects get consecutive, disjoint ranges), and forged or null ids are
 * refused with a message. */
static void test_soft_ids(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = test_world_keep(msg);
	pbd_mesh grid, rope;
	tp_grid(&grid, 4, 3, 1, pbd_v3(0, 0, 0), 2, false);
	pbd_rope_def rd = pbd_rope_def_default();
	rd.segments = 5;
	pbd_error err;
	assert_int_equal(pbd_mesh_rope(&rd, &rope, &err), PBD_OK);
	pbd_soft_def sd = pbd_soft_def_default();
	sd.mesh = &grid;
	pbd_soft_id a, b;
	assert_int_equal(pbd_soft_create(w, &sd, &a), PBD_OK);
	sd.mesh = &rope;
	assert_int_equal(pbd_soft_create(w, &sd, &b), PBD_OK);
	assert_true(pbd_soft_is_valid(w, a) && pbd_soft_is_valid(w, b));
	assert_int_equal(pbd_world_soft_count(w), 2);
	pbd_soft_info ia, ib;
	assert_int_equal(pbd_soft_get_info(w, a, &ia), PBD_OK);
	assert_int_equal(pbd_soft_get_info(w, b, &ib), PBD_OK);
	assert_int_equal(ia.first_particle, 0);
	assert_int_equal(ia.particle_count, 12);
	assert_int_equal(ia.first_distance, 0);
	assert_int_equal(ia.distance_count, grid.edge_count);
	assert_int_equal(ia.triangle_count, 12);
	assert_int_equal(ib.first_particle, 12);
	assert_int_equal(ib.particle_count, 6);
	assert_int_equal(ib.first_distance, grid.edge_count);
	assert_int_equal(ib.distance_count, 5);
	assert_int_equal(ib.first_triangle, 12);
	assert_int_equal(ib.triangle_count, 0);

	/* Forged ids: null, past the end, wrong generation. */
	const pbd_soft_id bad[3] = {{0, 0}, {3, 1}, {1, 2}};
	for (int k = 0; k < 3; ++k) {
		assert_false(pbd_soft_is_valid(w, bad[k]));
		msg[0] = 0;
		assert_int_equal(pbd_soft_get_info(w, bad[k], &ia), PBD_ERR_INVALID_ARGUMENT);
		assert_non_null(strstr(msg, "pbd_soft_get_info: id"));
	}
	/* A refused def: the null id, nothing added, one line. */
	pbd_soft_def broken = pbd_soft_def_default();
	broken.mesh = &grid;
	broken.mass = -1;
	pbd_soft_id c = {7, 7};
	msg[0] = 0;
	assert_int_not_equal(pbd_soft_create(w, &broken, &c), PBD_OK);
	assert_int_equal(c.index1, 0);
	assert_true(msg[0] != 0);
	assert_int_equal(pbd_world_soft_count(w), 2);
	assert_int_equal(pbd_world_particle_count(w), 18);
	assert_false(pbd_soft_is_valid(NULL, a));
	pbd_mesh_free(&grid);
	pbd_mesh_free(&rope);
	pbd_world_destroy(w);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_world_def_refused),
	    cmocka_unit_test(test_settings_refused),
	    cmocka_unit_test(test_particles_by_mass),
	    cmocka_unit_test(test_particles_refused),
	    cmocka_unit_test(test_distances_refused),
	    cmocka_unit_test(test_colliders_refused),
	    cmocka_unit_test(test_bodies_refused),
	    cmocka_unit_test(test_status_strings),
	    cmocka_unit_test(test_huge_dt),
	    cmocka_unit_test(test_overflowing_step_is_undone),
	    cmocka_unit_test(test_all_pinned),
	    cmocka_unit_test(test_speed_clamp),
	    cmocka_unit_test(test_allocator_accounting),
	    cmocka_unit_test(test_allocation_failures),
	    /* Last: under -fsanitize=undefined a failure here aborts the program. */
	    cmocka_unit_test(test_empty_world),
	    cmocka_unit_test(test_soft_ids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
