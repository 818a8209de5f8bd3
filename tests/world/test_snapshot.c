/* Snapshots: a world saved after some steps and loaded again ends bit-identical to the world
 * that never stopped, under every solver and formulation, with colliders, pins, targets,
 * forces and air; every corrupt, truncated or foreign snapshot is refused with one line, also
 * a forged one (a remainder past its position's rounding, a warning naming no particle, a mesh
 * collider without arrays), and a file that is no regular file or not the size its header says
 * is refused without reading it; a world saved after an undone step loads and steps on. */
#define _GNU_SOURCE /* mkdtemp */
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

	const size_t settings = 28; /* magic, version, scalar size, byte order, size */
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

	/* The soft object records come last but for the block descent, projective dynamics, rigid
	 * body, shapes-on-bodies and touching pairs' states (a count each, 0 here: a position-based
	 * world without bodies), the two sleep settings and the kept contacts' block, 8 words and two per family each,
	 * before the 8-byte hash. */
	const size_t at_soft =
	    n - 8 - TEST_SNAPSHOT_KEPT_NONE - 2 * sizeof(pbd_real) - 5 * 4 - (8 + 2 * PBD_FAMILY_COUNT) * 4;
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

/* ---- snapshots as untrusted input ----------------------------------------------------------- */

/* Offsets of a snapshot of this build: the header (magic, version, scalar size, byte order, the
 * snapshot's size), the settings with the Chebyshev estimate, the clock, the step count and the
 * warning counters, then the particle count and the particle arrays. */
#define AT_SIZE     20u
#define AT_SETTINGS 28u
#define DEF_BYTES   (2 * sizeof(pbd_vec3) + 14 * sizeof(pbd_real) + 13 * 4)
#define AT_WARNINGS (AT_SETTINGS + DEF_BYTES + 8 + 8)
#define AT_NP       (AT_WARNINGS + PBD_WARN_COUNT * 12)
/* Component c of particle i's vector in the particle array `array` (0 positions, 1 their
 * remainders, 2 velocities, 3 their remainders, ...). */
static size_t at_particle(uint32_t np, int array, uint32_t i, int c) {
	return AT_NP + 4 + ((size_t)array * np + i) * sizeof(pbd_vec3) + (size_t)c * sizeof(pbd_real);
}

static const pbd_vec3 rock_v[8] = {{-0.3f, -0.2f, -0.3f}, {0.3f, -0.2f, -0.3f}, {-0.3f, 0.2f, -0.3f},
                                   {0.3f, 0.2f, -0.3f},   {-0.3f, -0.2f, 0.3f}, {0.3f, -0.2f, 0.3f},
                                   {-0.3f, 0.2f, 0.3f},   {0.3f, 0.2f, 0.3f}};
static const uint32_t rock_t[36] = {1, 3, 7, 1, 7, 5, 0, 4, 6, 0, 6, 2, 2, 6, 7, 2, 7, 3,
                                    0, 1, 5, 0, 5, 4, 4, 5, 7, 4, 7, 6, 0, 2, 3, 0, 3, 1};

/* A cloth dropped on a closed triangle-mesh collider (a box of 12 triangles, the rock of
 * cloth_on_mesh in small), stepped until it rests on it: the contacts go through the mesh's
 * hierarchy. */
static pbd_world* mesh_world(void) {
	pbd_world* w = test_world(NULL);
	pbd_mesh m;
	tp_grid(&m, 8, 8, 1, pbd_v3((pbd_real)-0.5, (pbd_real)0.25, (pbd_real)-0.5), 1, false);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);
	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_MESH;
	cd.shape.mesh.vertices = rock_v;
	cd.shape.mesh.triangles = rock_t;
	cd.shape.mesh.vertex_count = 8;
	cd.shape.mesh.triangle_count = 12;
	cd.shape.mesh.closed = true;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &cd)));
	for (int k = 0; k < 30; ++k) assert_int_equal(pbd_world_step(w), PBD_OK);
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	assert_true(st.contacts > 0);
	return w;
}

static uint8_t* save(const pbd_world* w, size_t* n) {
	assert_int_equal(pbd_world_save_memory(w, NULL, 0, n), PBD_OK);
	uint8_t* d = malloc(*n);
	assert_int_equal(pbd_world_save_memory(w, d, *n, n), PBD_OK);
	return d;
}

static void put_real_at(uint8_t* d, size_t at, pbd_real v) { memcpy(d + at, &v, sizeof v); }

static pbd_real real_at(const uint8_t* d, size_t at) {
	pbd_real v;
	memcpy(&v, d + at, sizeof v);
	return v;
}

/* Half a unit in the last place of x, exactly (0 for 0, where every sum rounding to x is exact). */
static double half_ulp_of(pbd_real x) {
	if (x == 0) return 0;
	int e;
	(void)frexp(fabs((double)x), &e);
	return ldexp(1.0, e - (sizeof(pbd_real) == 4 ? 24 : 53) - 1);
}

/* A particle's rounding remainder is at most half an ulp of its position: a snapshot of a world
 * resting on a mesh collider with one remainder set to -1.7e38 (resealed, so that the content
 * checks must catch it) is refused with a line naming the particle and the remainder, before
 * anything steps it (loaded, its first step read past the mesh's triangles). The bound itself is
 * exact: half an ulp loads, the next number up does not. A velocity's remainder above the
 * velocity is refused too. */
static void test_remainder_out_of_range(void** state) {
	(void)state;
	pbd_world* w = mesh_world();
	size_t n = 0;
	uint8_t* good = save(w, &n);
	uint8_t* bad = malloc(n);
	const uint32_t np = pbd_world_particle_count(w);
	uint32_t np_saved;
	memcpy(&np_saved, good + AT_NP, 4);
	assert_int_equal(np_saved, np);
	char msg[256];
	assert_int_equal(load_bytes(good, n, msg), PBD_OK);

	const uint32_t i = np / 2 + 3;
	memcpy(bad, good, n);
	put_real_at(bad, at_particle(np, 1, i, 1), (pbd_real)-1.7e38);
	reseal(bad, n);
	assert_int_equal(load_bytes(bad, n, msg), PBD_ERR_OUT_OF_RANGE);
	char want[64];
	snprintf(want, sizeof want, "snapshot: particle %u: remainder", i);
	assert_non_null(strstr(msg, want));
	assert_non_null(strstr(msg, "-1.7e+38"));

	/* At the bound and just past it. */
	const pbd_real x = real_at(good, at_particle(np, 0, i, 1));
	assert_true(x != 0);
	const pbd_real half = (pbd_real)half_ulp_of(x);
	assert_true((double)half == half_ulp_of(x));
	memcpy(bad, good, n);
	put_real_at(bad, at_particle(np, 1, i, 1), -half);
	reseal(bad, n);
	pbd_world* edge = NULL;
	pbd_error err;
	assert_int_equal(pbd_world_load_memory(bad, n, NULL, &edge, &err), PBD_OK);
	assert_int_equal(pbd_world_step(edge), PBD_OK);
	assert_true(tp_all_finite(edge));
	pbd_world_destroy(edge);
	memcpy(bad, good, n);
	put_real_at(bad, at_particle(np, 1, i, 1), -nextafterf((float)half, INFINITY));
	if (sizeof(pbd_real) == 8) put_real_at(bad, at_particle(np, 1, i, 1), (pbd_real)-nextafter((double)half, INFINITY));
	reseal(bad, n);
	assert_int_equal(load_bytes(bad, n, msg), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, want));

	/* A velocity's remainder larger than the velocity. */
	memcpy(bad, good, n);
	put_real_at(bad, at_particle(np, 3, i, 0), (pbd_real)1e30);
	reseal(bad, n);
	assert_int_equal(load_bytes(bad, n, msg), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "remainder 1e+30 of velocity x"));
	free(bad);
	free(good);
	pbd_world_destroy(w);
}

/* A warning counter names a particle there is (a user may index the positions with it). */
static void test_warning_counter_out_of_range(void** state) {
	(void)state;
	pbd_world* w = mesh_world();
	size_t n = 0;
	uint8_t* d = save(w, &n);
	const uint64_t count = 1;
	const uint32_t last = pbd_world_particle_count(w) + 5;
	memcpy(d + AT_WARNINGS + 12 * PBD_WARN_NONFINITE, &count, 8);
	memcpy(d + AT_WARNINGS + 12 * PBD_WARN_NONFINITE + 8, &last, 4);
	reseal(d, n);
	char msg[256];
	assert_int_equal(load_bytes(d, n, msg), PBD_ERR_PARSE);
	assert_non_null(strstr(msg, "warning counter 0"));
	free(d);
	pbd_world_destroy(w);
}

/* The step count is held far from wrapping: a snapshot that says 2^64 - 1 steps (three steps
 * short of a world whose diverged-step counter would exceed its step count) is refused, naming
 * the clock; 2^62 loads. */
static void test_step_count_out_of_range(void** state) {
	(void)state;
	pbd_world* w = mesh_world();
	size_t n = 0;
	uint8_t* d = save(w, &n);
	const size_t at_steps = AT_WARNINGS - 8;
	const uint64_t huge = UINT64_MAX, most = UINT64_C(1) << 62;
	memcpy(d + at_steps, &huge, 8);
	reseal(d, n);
	char msg[256];
	assert_int_equal(load_bytes(d, n, msg), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "step count 18446744073709551615"));
	memcpy(d + at_steps, &most, 8);
	reseal(d, n);
	assert_int_equal(load_bytes(d, n, msg), PBD_OK);
	free(d);
	pbd_world_destroy(w);
}

/* A world of bodies alone whose body blew up (a force no float acceleration holds on a gram)
 * counts the non-finite state with no particle to name, and its snapshot loads and steps on. */
static void test_body_blow_up_round_trip(void** state) {
	(void)state;
	char log[512] = "";
	pbd_world* w = test_world_keep(log);
	pbd_body_def bd = pbd_body_def_default();
	bd.type = PBD_BODY_DYNAMIC;
	bd.mass.mass = 1e-3;
	bd.mass.inertia[0] = bd.mass.inertia[1] = bd.mass.inertia[2] = 1e-6;
	const pbd_body_id b = pbd_body_create(w, &bd);
	assert_true(pbd_body_is_valid(w, b));
	const pbd_real big = TEST_REAL_MAX / 8;
	assert_int_equal(pbd_body_apply_force(w, b, pbd_v3(big, 0, 0), pbd_v3(0, 0, 0)), PBD_OK);
	test_disable_fp_traps(); /* the overflow is the point */
	assert_int_equal(pbd_world_step(w), PBD_OK);
	test_enable_fp_traps();
	const pbd_warning_stat bad = pbd_world_get_warning(w, PBD_WARN_NONFINITE);
	assert_true(bad.count == 1 && bad.last_index == 0);
	assert_non_null(strstr(log, "body 1 became non-finite"));
	size_t n = 0;
	uint8_t* d = save(w, &n);
	pbd_world* back = NULL;
	pbd_error err;
	assert_int_equal(pbd_world_load_memory(d, n, NULL, &back, &err), PBD_OK);
	assert_true(pbd_world_hash(back) == pbd_world_hash(w));
	assert_int_equal(pbd_world_step(back), PBD_OK);
	pbd_body_state st;
	assert_int_equal(pbd_body_get_state(back, b, &st), PBD_OK);
	assert_true(isfinite(st.pose.position.x) && st.velocity.y < 0);
	pbd_world_destroy(back);
	free(d);
	pbd_world_destroy(w);
}

/* A mesh collider whose arrays are empty (the counts 0 and the arrays cut out, the size and the
 * checksum made to match) is refused by the mesh's own check, naming the collider; no pointer is
 * formed from the empty block. */
static void test_empty_collider_arrays(void** state) {
	(void)state;
	pbd_world* w = mesh_world();
	size_t n = 0;
	uint8_t* d = save(w, &n);
	/* The vertices as the collider keeps them follow its counts (8, 12, closed). */
	size_t at = 0;
	for (size_t k = AT_NP; k + sizeof rock_v <= n && !at; ++k)
		if (memcmp(d + k, rock_v, sizeof rock_v) == 0) at = k;
	assert_true(at > 12);
	uint32_t counts[3];
	memcpy(counts, d + at - 12, sizeof counts);
	assert_true(counts[0] == 8 && counts[1] == 12 && counts[2] == 1);
	const size_t cut = sizeof rock_v + sizeof rock_t;
	const size_t m = n - cut;
	uint8_t* e = malloc(m);
	memcpy(e, d, at);
	memcpy(e + at, d + at + cut, n - at - cut);
	const uint32_t zero[2] = {0, 0};
	memcpy(e + at - 12, zero, sizeof zero);
	const uint64_t size = m;
	memcpy(e + AT_SIZE, &size, 8);
	reseal(e, m);
	char msg[256];
	assert_int_not_equal(load_bytes(e, m, msg), PBD_OK);
	assert_non_null(strstr(msg, "snapshot: collider 0: mesh"));
	free(e);
	free(d);
	pbd_world_destroy(w);
}

static pbd_status load_file(const char* path, char* msg) {
	pbd_world* w = NULL;
	pbd_error err;
	err.message[0] = 0;
	const pbd_status st = pbd_world_load(path, NULL, &w, &err);
	if (st == PBD_OK) {
		pbd_world_destroy(w);
	} else {
		assert_null(w);
		assert_true(err.message[0] != 0 && strchr(err.message, '\n') == NULL);
	}
	snprintf(msg, 256, "%s", err.message);
	return st;
}

static void write_file(const char* path, const uint8_t* d, size_t n) {
	FILE* f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(d, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static void refuse_snapshot(const char* path, const char* want, void* user) {
	(void)user;
	char msg[256];
	assert_int_equal(load_file(path, msg), PBD_ERR_IO);
	if (!strstr(msg, want)) fail_msg("%s: '%s'", path, msg);
}

/* Only a regular file is read, and only as much as its header says: a path that is not a
 * regular file (test_each_special_file) is refused before a byte is read, with a line naming the
 * file and what it is; a file cut short or with bytes past its end, and a header announcing more
 * than the file or the cap, are refused without reading (or allocating) more. */
static void test_files_that_are_not_snapshots(void** state) {
	(void)state;
	char dir[] = "/tmp/pbd_snapshot_test_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char msg[256], path[256];
	test_each_special_file(dir, ".pbds", refuse_snapshot, NULL);

	pbd_world* w = busy_world(PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_PBD);
	drive(w);
	size_t n = 0;
	uint8_t* d = save(w, &n);
	snprintf(path, sizeof path, "%s/x.pbds", dir);
	write_file(path, d, n);
	assert_int_equal(load_file(path, msg), PBD_OK);
	write_file(path, d, n / 2);
	assert_int_equal(load_file(path, msg), PBD_ERR_PARSE);
	assert_non_null(strstr(msg, "x.pbds: truncated"));
	uint8_t* longer = malloc(n + 3);
	memcpy(longer, d, n);
	memset(longer + n, 7, 3);
	write_file(path, longer, n + 3);
	assert_int_equal(load_file(path, msg), PBD_ERR_PARSE);
	assert_non_null(strstr(msg, "x.pbds: trailing bytes"));
	free(longer);
	/* A header announcing a terabyte, resealed: refused before a byte past it is read. */
	const uint64_t huge = (uint64_t)1 << 40;
	memcpy(d + AT_SIZE, &huge, 8);
	reseal(d, n);
	write_file(path, d, n);
	assert_int_equal(load_file(path, msg), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(msg, "more than"));
	assert_int_equal(load_bytes(d, n, msg), PBD_ERR_PARSE);
	assert_non_null(strstr(msg, "truncated"));
	remove(path);
	rmdir(dir);
	free(d);
	pbd_world_destroy(w);
}

/* A step undone for a non-finite state leaves the world loadable and steppable: the multipliers
 * it left, which were not finite, are cleared with the undo (XPBD's, which nothing reads before
 * the next substep sets them; vertex block descent's, which carry from step to step and would
 * make every later step non-finite too), so that what `pbd run --save-every` writes after a
 * diverged frame resumes, and the world goes on from where the undo put it. */
static void test_saved_after_undone_step(void** state) {
	(void)state;
	const pbd_method methods[2] = {PBD_METHOD_POSITION_BASED, PBD_METHOD_VBD};
	for (int k = 0; k < 2; ++k) {
		char last[256] = "";
		pbd_world_def def = pbd_world_def_default();
		def.formulation = PBD_FORMULATION_XPBD;
		def.method = methods[k];
		def.log = test_log_keep; /* the undone step is logged */
		def.log_user = last;
		pbd_world* w = NULL;
		assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
		pbd_mesh m;
		tp_grid(&m, 4, 4, 1, pbd_v3(0, 1, 0), 1, false);
		pbd_soft_def bd = pbd_soft_def_default();
		bd.mesh = &m;
		bd.material[PBD_EDGE_STRUCTURAL].compliance_stretch = (pbd_real)1e-6;
		const uint32_t pin = 0;
		bd.pinned = &pin;
		bd.pinned_count = 1;
		assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
		pbd_mesh_free(&m);
		assert_int_equal(pbd_world_step(w), PBD_OK);
		const uint32_t n = pbd_world_particle_count(w);
		pbd_vec3 fast[16];
		for (uint32_t i = 0; i < n; ++i) fast[i] = pbd_v3((i % 2 ? 1 : -1) * (TEST_REAL_MAX / 2), 0, 0);
		assert_int_equal(pbd_world_set_velocities(w, 0, n, fast), PBD_OK);
		test_disable_fp_traps();
		assert_int_equal(pbd_world_step(w), PBD_OK);
		test_enable_fp_traps();
		const uint64_t undone = pbd_world_get_warning(w, PBD_WARN_NONFINITE).count;
		assert_true(undone > 0);
		size_t size = 0;
		uint8_t* d = save(w, &size);
		pbd_world* back = NULL;
		pbd_error err;
		err.message[0] = 0;
		assert_int_equal(pbd_world_load_memory(d, size, NULL, &back, &err), PBD_OK);
		assert_true(pbd_world_hash(back) == pbd_world_hash(w));
		/* At rest where the undo put it, the cloth steps on as any cloth does. */
		for (int s = 0; s < 3; ++s) {
			assert_int_equal(pbd_world_step(back), PBD_OK);
			assert_int_equal(pbd_world_step(w), PBD_OK);
		}
		assert_true(pbd_world_hash(back) == pbd_world_hash(w));
		assert_true(pbd_world_get_warning(w, PBD_WARN_NONFINITE).count == undone);
		assert_true(tp_all_finite(w));
		free(d);
		pbd_world_destroy(back);
		pbd_world_destroy(w);
	}
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_resume_is_bit_identical), cmocka_unit_test(test_corrupt_snapshots_refused),
	    cmocka_unit_test(test_load_out_of_memory),      cmocka_unit_test(test_empty_parts),
	    cmocka_unit_test(test_remainder_out_of_range),  cmocka_unit_test(test_warning_counter_out_of_range),
	    cmocka_unit_test(test_step_count_out_of_range), cmocka_unit_test(test_body_blow_up_round_trip),
	    cmocka_unit_test(test_empty_collider_arrays),   cmocka_unit_test(test_files_that_are_not_snapshots),
	    cmocka_unit_test(test_saved_after_undone_step),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
