/* Snapshots: a world saved after some steps and loaded again ends bit-identical to the world
 * that never stopped, under every solver and formulation, with colliders, pins, targets,
 * forces and air; every corrupt, truncated or foreign snapshot is refused with one line. */
#include <stdio.h>
#include <unistd.h>

#include "test_physics.h"

/* A cloth with both kinds of colliders, two pins (one of them moved by a target every step),
 * a force on one particle, unequal masses, stretched rest lengths and air drag in gusts. */
static pbd_world* busy_world(pbd_solver solver, pbd_formulation f) {
	pbd_world_def def = pbd_world_def_default();
	def.solver = solver;
	def.formulation = f;
	def.substeps = 3;
	def.iterations = 4;
	def.damping = (pbd_real)0.995;
	/* Jacobi runs accelerated with a measured spectral radius, which the snapshot carries. */
	def.chebyshev = solver == PBD_SOLVER_JACOBI;
	def.chebyshev_delay = 2;
	/* Gusts, so that the air depends on the clock the snapshot carries. */
	def.wind = pbd_v3(0, 0, (pbd_real)1.5);
	def.gust_strength = (pbd_real)0.3;
	pbd_world* w = test_world(&def);
	pbd_mesh m;
	tp_grid(&m, 9, 7, 1, pbd_v3(100, 5, -3), 2, true);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.material[PBD_EDGE_SHEAR].compliance_stretch = (pbd_real)1e-4;
	bd.material[PBD_EDGE_BEND].stiffness_stretch = (pbd_real)0.3;
	bd.material[PBD_EDGE_BEND].compliance_stretch = (pbd_real)1e-2;
	const uint32_t pins[2] = {0, 8};
	bd.pinned = pins;
	bd.pinned_count = 2;
	bd.drag_normal = (pbd_real)0.8;
	bd.drag_tangent = (pbd_real)0.1;
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);
	pbd_collider_def cd = pbd_collider_def_default();
	cd.shape.plane.normal = pbd_v3(0, 2, (pbd_real)0.1); /* the cloth hangs onto it */
	cd.shape.plane.offset = (pbd_real)8.6;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
	cd.type = PBD_SHAPE_SPHERE;
	cd.shape.sphere.center = pbd_v3((pbd_real)100.5, (pbd_real)4.5, (pbd_real)-2.8); /* in its swing */
	cd.shape.sphere.radius = (pbd_real)0.3;
	cd.margin = (pbd_real)0.01;
	const pbd_collider_id gone = pbd_collider_create(w, &cd);
	assert_int_equal(pbd_collider_destroy(w, gone), PBD_OK); /* a dead slot with a generation */
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
	assert_int_equal(pbd_particle_set_inv_mass(w, 30, (pbd_real)0.25), PBD_OK);
	assert_int_equal(pbd_particle_set_force(w, 40, pbd_v3(1, 0, (pbd_real)0.5)), PBD_OK);
	return w;
}

/* One step of the run: the pinned corner 8 follows a circle. */
static void drive(pbd_world* w) {
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	const double a = 0.7 * (double)st.steps;
	assert_int_equal(
	    pbd_particle_set_target(w, 8, pbd_v3((pbd_real)(101 + 0.1 * cos(a)), 5, (pbd_real)(-3 + 0.1 * sin(a)))),
	    PBD_OK);
	assert_int_equal(pbd_world_step(w), PBD_OK);
}

static void test_resume_is_bit_identical(void** state) {
	(void)state;
	const pbd_solver solvers[2] = {PBD_SOLVER_GAUSS_SEIDEL, PBD_SOLVER_JACOBI};
	const pbd_formulation forms[2] = {PBD_FORMULATION_PBD, PBD_FORMULATION_XPBD};
	char path[64];
	snprintf(path, sizeof path, "snapshot_test_%ld.pbds", (long)getpid());
	for (int s = 0; s < 2; ++s)
		for (int f = 0; f < 2; ++f) {
			pbd_world* a = busy_world(solvers[s], forms[f]);
			for (int k = 0; k < 37; ++k) drive(a);
			/* A target set before saving travels with the snapshot. */
			assert_int_equal(pbd_particle_set_target(a, 0, pbd_v3(100, (pbd_real)5.05, -3)), PBD_OK);
			assert_int_equal(pbd_world_save(a, path), PBD_OK);
			size_t size = 0;
			assert_int_equal(pbd_world_save_memory(a, NULL, 0, &size), PBD_OK);
			void* mem = malloc(size);
			assert_int_equal(pbd_world_save_memory(a, mem, size, &size), PBD_OK);

			pbd_world_def hooks = pbd_world_def_default();
			hooks.log = test_log_fail;
			pbd_world *b = NULL, *c = NULL;
			pbd_error err;
			assert_int_equal(pbd_world_load(path, &hooks, &b, &err), PBD_OK);
			assert_int_equal(pbd_world_load_memory(mem, size, &hooks, &c, &err), PBD_OK);
			assert_true(pbd_world_hash(b) == pbd_world_hash(a));
			/* Saving the loaded world gives the same bytes. */
			void* again = malloc(size);
			size_t size2 = 0;
			assert_int_equal(pbd_world_save_memory(b, again, size, &size2), PBD_OK);
			assert_int_equal(size2, size);
			assert_memory_equal(again, mem, size);
			free(again);
			free(mem);

			uint32_t touched = 0;
			for (int k = 0; k < 50; ++k) {
				drive(a);
				drive(b);
				drive(c);
				pbd_stats sk;
				pbd_world_get_stats(a, &sk);
				if (sk.contacts > touched) touched = sk.contacts;
			}
			const uint32_t n = pbd_world_particle_count(a);
			assert_memory_equal(pbd_world_positions(a), pbd_world_positions(b), n * sizeof(pbd_vec3));
			assert_memory_equal(pbd_world_velocities(a), pbd_world_velocities(b), n * sizeof(pbd_vec3));
			assert_true(pbd_world_hash(a) == pbd_world_hash(b) && pbd_world_hash(a) == pbd_world_hash(c));
			pbd_stats sa, sb;
			pbd_world_get_stats(a, &sa);
			pbd_world_get_stats(b, &sb);
			assert_true(sa.steps == 87 && sb.steps == 87 && sa.time == sb.time);
			assert_true(touched > 0); /* the colliders took part */
			assert_true(sa.max_strain == sb.max_strain && sa.kinetic_energy == sb.kinetic_energy);
			/* Control: the run is not trivially static, so equal hashes mean something. */
			pbd_world* fresh = busy_world(solvers[s], forms[f]);
			assert_true(pbd_world_hash(fresh) != pbd_world_hash(a));
			pbd_world_destroy(fresh);
			/* Ids stay valid across the snapshot: the live sphere is slot 2, generation 2. */
			const pbd_collider_id sphere = {2, 2}, dead = {2, 1};
			assert_true(pbd_collider_is_valid(b, sphere));
			assert_false(pbd_collider_is_valid(b, dead));
			pbd_world_destroy(a);
			pbd_world_destroy(b);
			pbd_world_destroy(c);
		}
	remove(path);
}

static uint64_t fnv(const uint8_t* d, size_t n) {
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; ++i) {
		h ^= d[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Re-seal a snapshot whose payload was edited, so that the content checks, not the checksum,
 * must catch the edit. */
static void reseal(uint8_t* d, size_t n) {
	const uint64_t h = fnv(d, n - 8);
	memcpy(d + n - 8, &h, 8);
}

static pbd_status load_bytes(const uint8_t* d, size_t n, char* msg) {
	pbd_world* w = NULL;
	pbd_error err;
	err.message[0] = 0;
	const pbd_status st = pbd_world_load_memory(d, n, NULL, &w, &err);
	if (st == PBD_OK) {
		pbd_world_destroy(w);
	} else {
		assert_null(w);
		assert_true(err.message[0] != 0 && strchr(err.message, '\n') == NULL);
	}
	if (msg) snprintf(msg, 256, "%s", err.message);
	return st;
}

static void test_corrupt_snapshots_refused(void** state) {
	(void)state;
	pbd_world* w = busy_world(PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_XPBD);
	for (int k = 0; k < 3; ++k) drive(w);
	size_t n = 0;
	assert_int_equal(pbd_world_save_memory(w, NULL, 0, &n), PBD_OK);
	uint8_t* good = malloc(n);
	uint8_t* bad = malloc(n);
	assert_int_equal(pbd_world_save_memory(w, good, n, &n), PBD_OK);
	char msg[256];
	assert_int_equal(load_bytes(good, n, msg), PBD_OK);
	/* Every truncation. */
	for (size_t len = 0; len < n; ++len) assert_int_not_equal(load_bytes(good, len, NULL), PBD_OK);
	/* Every single-byte change is caught by the checksum. */
	for (size_t i = 0; i < n; i += 7) {
		memcpy(bad, good, n);
		bad[i] ^= 0x5a;
		assert_int_not_equal(load_bytes(bad, n, NULL), PBD_OK);
	}
	/* Resealed edits are caught by the content checks: the precision, a setting, a count past
	 * the bytes, a constraint index, an inverse mass, a NaN position. */
	memcpy(bad, good, n);
	const uint32_t other = sizeof(pbd_real) == 4 ? 8 : 4;
	memcpy(bad + 12, &other, 4);
	reseal(bad, n);
	assert_int_equal(load_bytes(bad, n, msg), PBD_ERR_PARSE);
	assert_non_null(strstr(msg, sizeof(pbd_real) == 4 ? "written by a double build" : "written by a float build"));

	const size_t settings = 20; /* magic, version, scalar size, byte order */
	memcpy(bad, good, n);
	const pbd_real huge_dt = (pbd_real)1e9;
	memcpy(bad + settings + sizeof(pbd_vec3), &huge_dt, sizeof huge_dt);
	reseal(bad, n);
	assert_int_equal(load_bytes(bad, n, msg), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "pbd_world_def.dt"));

	/* The particle count sits after the settings, the clock and the warnings. */
	/* with the Chebyshev estimate, the two hierarchy settings, the method with its three settings
	 * and the wind with its gusts */
	const size_t def_bytes = 2 * sizeof(pbd_vec3) + 14 * sizeof(pbd_real) + 13 * 4;
	const size_t at_np = settings + def_bytes + 8 + 8 + PBD_WARN_COUNT * 12;
	uint32_t np;
	memcpy(&np, good + at_np, 4);
	assert_int_equal(np, pbd_world_particle_count(w));
	memcpy(bad, good, n);
	const uint32_t many = 0x7fffffff;
	memcpy(bad + at_np, &many, 4);
	reseal(bad, n);
	assert_int_equal(load_bytes(bad, n, msg), PBD_ERR_PARSE);
	assert_non_null(strstr(msg, "does not fit"));

	memcpy(bad, good, n);
	const pbd_real nan_x = (pbd_real)NAN;
	memcpy(bad + at_np + 4 + sizeof(pbd_real), &nan_x, sizeof nan_x); /* x[0].y */
	reseal(bad, n);
	assert_int_equal(load_bytes(bad, n, msg), PBD_ERR_NOT_FINITE);

	const size_t at_w = at_np + 4 + 6 * (size_t)np * sizeof(pbd_vec3);
	memcpy(bad, good, n);
	const pbd_real tiny = (pbd_real)1e-30;
	memcpy(bad + at_w + 5 * sizeof(pbd_real), &tiny, sizeof tiny);
	reseal(bad, n);
	assert_int_equal(load_bytes(bad, n, msg), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "inverse mass"));

	/* The families follow the particles: their count, then per family the constraint count,
	 * the record sizes and the multipliers per constraint, then the records. */
	/* w, w_free, collision masks, radii, groups, rest positions, flags */
	const size_t at_fam = at_w + 3 * (size_t)np * sizeof(pbd_real) + 2 * (size_t)np * sizeof(uint32_t) +
	                      (size_t)np * sizeof(pbd_vec3) + np;
	uint32_t nd, hot_size;
	memcpy(&nd, good + at_fam + 4, 4);
	memcpy(&hot_size, good + at_fam + 8, 4);
	assert_int_equal(nd, pbd_world_distance_count(w));
	const size_t at_dist = at_fam + 20;
	memcpy(bad, good, n);
	memcpy(bad + at_dist, &np, 4); /* the first record's first particle = particle count */
	reseal(bad, n);
	assert_int_equal(load_bytes(bad, n, msg), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "distance constraint"));
	assert_non_null(strstr(msg, "uses particle"));

	memcpy(bad, good, n);
	const uint32_t other_size = hot_size + 4;
	memcpy(bad + at_fam + 8, &other_size, 4);
	reseal(bad, n);
	assert_int_equal(load_bytes(bad, n, msg), PBD_ERR_PARSE);
	assert_non_null(strstr(msg, "another record layout"));

	/* The order of addition must be a permutation: two records claiming user index 0. */
	const size_t at_user = at_dist + (size_t)nd * (hot_size + 2 * 4 + 4 * sizeof(pbd_real) + sizeof(pbd_real));
	memcpy(bad, good, n);
	memcpy(bad + at_user + 4, bad + at_user, 4);
	reseal(bad, n);
	assert_int_equal(load_bytes(bad, n, msg), PBD_ERR_PARSE);
	assert_non_null(strstr(msg, "not a permutation"));

	/* A record that breaks the family's own rules: a NaN rest length. */
	memcpy(bad, good, n);
	memcpy(bad + at_dist + 8, &nan_x, sizeof nan_x);
	reseal(bad, n);
	assert_int_equal(load_bytes(bad, n, msg), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "invalid rest length"));

	/* The soft object records come last but for the block descent and projective dynamics states
	 * (a count each, 0 here: a position-based world), 8 words and two per family each, before the
	 * 8-byte hash. */
	const size_t at_soft = n - 8 - 2 * 4 - (8 + 2 * PBD_FAMILY_COUNT) * 4;
	uint32_t rec[8];
	memcpy(rec, good + at_soft, sizeof rec);
	assert_int_equal(rec[1], pbd_world_particle_count(w)); /* the one object holds every particle */
	memcpy(bad, good, n);
	const uint32_t past = rec[1] + 1;
	memcpy(bad + at_soft + 4, &past, 4);
	reseal(bad, n);
	assert_int_equal(load_bytes(bad, n, msg), PBD_ERR_PARSE);
	assert_non_null(strstr(msg, "soft object 0 is invalid"));

	/* Not a snapshot at all, and a missing file. */
	assert_int_equal(load_bytes((const uint8_t*)"{\"name\": 1}", 11, msg), PBD_ERR_PARSE);
	assert_non_null(strstr(msg, "not a pbd snapshot"));
	pbd_world* none = NULL;
	pbd_error err;
	assert_int_equal(pbd_world_load("/nonexistent/dir/x.pbds", NULL, &none, &err), PBD_ERR_IO);
	assert_non_null(strstr(err.message, "/nonexistent/dir/x.pbds: cannot open"));
	char last[256] = "";
	pbd_world_def d = pbd_world_def_default();
	d.log = test_log_keep;
	d.log_user = last;
	pbd_world* logged = NULL;
	assert_int_equal(pbd_world_create(&d, &logged), PBD_OK);
	assert_int_equal(pbd_world_save(logged, "/nonexistent/dir/x.pbds"), PBD_ERR_IO);
	assert_non_null(strstr(last, "cannot open for writing"));
	pbd_world_destroy(logged);
	free(good);
	free(bad);
	pbd_world_destroy(w);
}

/* Allocation failures while loading: every one is reported as out of memory and leaks nothing. */
typedef struct counting {
	long calls, fail_at, live;
} counting;

static void* count_alloc(size_t size, void* user) {
	counting* c = (counting*)user;
	if (c->calls++ == c->fail_at) return NULL;
	c->live++;
	return malloc(size);
}

static void count_free(void* p, size_t size, void* user) {
	(void)size;
	counting* c = (counting*)user;
	if (p) c->live--;
	free(p);
}

static void test_load_out_of_memory(void** state) {
	(void)state;
	pbd_world* w = busy_world(PBD_SOLVER_JACOBI, PBD_FORMULATION_PBD);
	drive(w);
	size_t n = 0;
	pbd_world_save_memory(w, NULL, 0, &n);
	uint8_t* data = malloc(n);
	pbd_world_save_memory(w, data, n, &n);
	pbd_world_destroy(w);
	counting c = {0, -1, 0};
	pbd_world_def hooks = pbd_world_def_default();
	hooks.allocator.alloc = count_alloc;
	hooks.allocator.free = count_free;
	hooks.allocator.user = &c;
	pbd_world* ok = NULL;
	pbd_error err;
	assert_int_equal(pbd_world_load_memory(data, n, &hooks, &ok, &err), PBD_OK);
	pbd_world_destroy(ok);
	assert_int_equal(c.live, 0);
	const long total = c.calls;
	assert_true(total > 2);
	for (long k = 0; k < total; ++k) {
		c.calls = 0;
		c.fail_at = k;
		c.live = 0;
		pbd_world* out = NULL;
		assert_int_equal(pbd_world_load_memory(data, n, &hooks, &out, &err), PBD_ERR_OUT_OF_MEMORY);
		assert_null(out);
		assert_non_null(strstr(err.message, "out of memory"));
		assert_int_equal(c.live, 0);
	}
	free(data);
}

/* Worlds with empty arrays (no particles at all; particles without constraints, triangles or
 * colliders) round-trip too: nothing is read into or written from storage that does not exist. */
static void test_empty_parts(void** state) {
	(void)state;
	for (int k = 0; k < 2; ++k) {
		pbd_world* w = test_world(NULL);
		if (k == 1) {
			const pbd_vec3 x = {1, 2, 3};
			const pbd_real inv = 1;
			assert_int_equal(pbd_world_add_particles(w, 1, &x, NULL, &inv, NULL), PBD_OK);
		}
		assert_int_equal(pbd_world_step(w), PBD_OK);
		size_t n = 0;
		assert_int_equal(pbd_world_save_memory(w, NULL, 0, &n), PBD_OK);
		uint8_t* data = malloc(n);
		assert_int_equal(pbd_world_save_memory(w, data, n, &n), PBD_OK);
		pbd_world* back = NULL;
		pbd_error err;
		assert_int_equal(pbd_world_load_memory(data, n, NULL, &back, &err), PBD_OK);
		assert_int_equal(pbd_world_particle_count(back), (uint32_t)k);
		assert_int_equal(pbd_world_step(w), PBD_OK);
		assert_int_equal(pbd_world_step(back), PBD_OK);
		assert_true(pbd_world_hash(w) == pbd_world_hash(back));
		free(data);
		pbd_world_destroy(back);
		pbd_world_destroy(w);
	}
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_resume_is_bit_identical),
	    cmocka_unit_test(test_corrupt_snapshots_refused),
	    cmocka_unit_test(test_load_out_of_memory),
	    cmocka_unit_test(test_empty_parts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
