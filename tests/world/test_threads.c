/* Threads change nothing but the time: every built-in scene ends bit-identical after 200 steps on
 * 1, 2, 3 and 8 threads, with the built-in pool, a game's task system that starts a thread per
 * task, and one that runs every task inline. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "constraints/distance.h"
#include "pbd/scene.h"
#include "collision/self_collision.h"
#include "test_physics.h"
#include "test_util.h"
#include "model/world.h"

/* Blocks this small put even a 32^2 cloth's colours and particles on several threads. */
static void small_blocks(pbd_world* w) {
	w->exec.block_constraints = 64;
	w->exec.block_particles = PBD_BLOCK_PARTICLES_MIN;
	w->exec.min_blocks = 2;
}

/* Steps per scene and thread count: 200 in Release; 20 in the short run (test_short), by which
 * every cloth has reached its collider (frames 13 to 18); 5 under ThreadSanitizer. */
static int scene_steps(void) {
#if defined(PBD_TSAN)
	return 5;
#else
	return test_short() ? 20 : 200;
#endif
}

static uint64_t run_scene(const char* name, int threads, int steps, bool small) {
	pbd_scene s;
	pbd_scene_error err;
	if (!pbd_scene_load_builtin(name, NULL, &s, &err)) fail_msg("%s: %s", name, err.message);
	pbd_world* w = s.world;
	assert_int_equal(pbd_world_set_threads(w, threads), PBD_OK);
	if (small) small_blocks(w);
	for (int i = 0; i < steps; ++i) pbd_scene_step(&s);
	const uint64_t h = pbd_world_hash(w);
	pbd_scene_free(&s);
	return h;
}

/* Each scene under its own solver (cloth_sphere is the Jacobi one; the big cloth below runs
 * every solver path). */
/* The scenes are split into SCENE_PARTS ctest entries (test_threads --scenes K runs every
 * SCENE_PARTS-th scene from K), so that they run side by side and each stays short. */
#define SCENE_PARTS 4

static void test_builtin_scenes_any_thread_count(void** state) {
	const size_t part = *(const size_t*)*state;
	const int counts[] = {2, 3, 8};
	for (size_t i = part; i < pbd_scene_builtin_count(); i += SCENE_PARTS) {
		const char* name = pbd_scene_builtin_at(i)->name;
		const uint64_t one = run_scene(name, 1, scene_steps(), false);
		for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
			const uint64_t h = run_scene(name, counts[c], scene_steps(), true);
			if (h != one)
				fail_msg("%s: %d threads end at %016llx, one thread at %016llx", name, counts[c], (unsigned long long)h,
				         (unsigned long long)one);
		}
	}
}

/* A hanging cloth large enough for the default blocks, under every solver path that has stages:
 * Gauss-Seidel, Jacobi with Chebyshev, the hierarchy's coarse levels, and VBD's colours. */
static void add_cloth(pbd_world* w) {
	pbd_mesh m;
	const uint32_t n = 72, pins[2] = {0, n - 1};
	tp_grid(&m, n, n, 1, pbd_v3((pbd_real)-0.5, 0, 0), 2, true);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.mass_mode = PBD_MASS_TOTAL;
	bd.mass = 1;
	bd.pinned = pins;
	bd.pinned_count = 2;
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);
}

static pbd_world* big_cloth_method(int threads, pbd_solver solver, bool chebyshev, int levels, pbd_method method) {
	pbd_world_def d = pbd_world_def_default();
	d.method = method;
	d.threads = threads;
	d.solver = solver;
	d.chebyshev = chebyshev;
	d.hierarchy_levels = levels;
	d.substeps = 2;
	d.max_speed = 3; /* clamps while the cloth falls: the warning counts must agree too */
	pbd_world* w = test_world(&d);
	add_cloth(w);
	return w;
}

static pbd_world* big_cloth(int threads, pbd_solver solver, bool chebyshev, int levels) {
	return big_cloth_method(threads, solver, chebyshev, levels, PBD_METHOD_POSITION_BASED);
}

/* The big cloth's four cases, or with `part` the one case of that number, so that ctest runs them
 * side by side (under ThreadSanitizer they are two thirds of the pool's tests, VBD's case alone
 * half). */
static void test_big_cloth_every_solver(void** state) {
	const size_t* part = (const size_t*)*state;
	struct {
		pbd_solver solver;
		bool chebyshev;
		int levels;
		pbd_method method;
	} cases[] = {{PBD_SOLVER_GAUSS_SEIDEL, false, 0, PBD_METHOD_POSITION_BASED},
	             {PBD_SOLVER_JACOBI, true, 0, PBD_METHOD_POSITION_BASED},
	             {PBD_SOLVER_GAUSS_SEIDEL, false, 3, PBD_METHOD_POSITION_BASED},
	             {PBD_SOLVER_GAUSS_SEIDEL, false, 0, PBD_METHOD_VBD}};
	/* 30 steps on 1 to 4 threads; in the short run and under ThreadSanitizer (where this test took
	 * 137 s, the longest of the configuration) 20, by which the fall has reached the clamp
	 * (3 m/s after 18.3 steps), on 1, 2 and 4 threads */
#if defined(PBD_TSAN)
	const bool brief = true;
#else
	const bool brief = test_short();
#endif
	const int steps = brief ? 20 : 30;
	for (size_t k = part ? *part : 0; k < (part ? *part + 1 : sizeof cases / sizeof cases[0]); ++k) {
		uint64_t one = 0, clamped = 0;
		for (int threads = 1; threads <= 4; ++threads) {
			if (brief && threads == 3) continue;
			pbd_world* w =
			    big_cloth_method(threads, cases[k].solver, cases[k].chebyshev, cases[k].levels, cases[k].method);
			for (int i = 0; i < steps; ++i) assert_int_equal(pbd_world_step(w), PBD_OK);
			const uint64_t h = pbd_world_hash(w);
			const pbd_warning_stat ws = pbd_world_get_warning(w, PBD_WARN_SPEED_CLAMPED);
			if (threads == 1) {
				one = h;
				clamped = ws.count;
				assert_true(clamped > 0);
			} else {
				assert_true(h == one);
				assert_true(ws.count == clamped);
			}
			pbd_world_destroy(w);
		}
	}
}

/* The statistics are a stage too: their per-block sums, combined in block order, give the same
 * bits on any number of threads, with the default blocks and with small ones (more blocks, other
 * bits, but the same for every thread count), through the step's pass and pbd_world_get_stats. */
static void test_stats_any_thread_count(void** state) {
	(void)state;
	for (int small = 0; small < 2; ++small) {
		pbd_stats one, got;
		double strain_one = 0;
		for (int threads = 1; threads <= 4; ++threads) {
			pbd_world* w = big_cloth(threads, PBD_SOLVER_GAUSS_SEIDEL, false, 0);
			if (small) small_blocks(w);
			for (int i = 0; i < 10; ++i) assert_int_equal(pbd_world_step(w), PBD_OK);
			got = w->stats; /* the step's own pass (diagnostics are on by default) */
			assert_true(w->stats_valid);
			w->stats_valid = false;
			pbd_stats again;
			pbd_world_get_stats(w, &again);
			assert_memory_equal(&w->stats, &got, sizeof got);
			const double strain = pbd_stats_max_strain(w);
			assert_true(strain == got.max_strain);
			/* The divergence test's cheap look decides nothing at the bound: a bound just below the
			 * largest strain still gets the exact value, one clearly above it a value within it. */
			assert_true(pbd_stats_strain_past(w, strain * (1 - 1e-9)) == strain);
			assert_true(pbd_stats_strain_past(w, 0) == strain);
			assert_true(got.family[PBD_FAMILY_DISTANCE].max_strain == strain); /* the links hold the largest */
			assert_true(pbd_stats_strain_past(w, strain * 1.01) < strain);
			assert_true(got.kinetic_energy > 0 && got.max_strain > 0 && got.family[PBD_FAMILY_DISTANCE].count > 0);
			if (threads == 1) {
				one = got;
				strain_one = strain;
			} else {
				assert_memory_equal(&got, &one, sizeof got);
				assert_true(strain == strain_one);
			}
			pbd_world_destroy(w);
		}
	}
}

/* A pile of bodies whose contacts settle level by level (rigid_contact.c): a pyramid of six
 * rows, a column of three cubes on its top, two cubes pressed side by side against each other on
 * the floor, and a ball thrown into the pyramid. After 60 steps the world is bit-identical on 1,
 * 2, 3 and 8 threads; the passes put several bodies in one level, so the threads share them. */
static pbd_world* pile_of_bodies(int threads) {
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, (pbd_real)-9.81, 0);
	def.substeps = 8;
	def.iterations = 1;
	def.threads = threads;
	def.sleep_time = 0;
	pbd_world* w = test_world(&def);
	small_blocks(w);
	pbd_collider_def floor = pbd_collider_def_default();
	floor.static_friction = floor.kinetic_friction = (pbd_real)0.5;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &floor)));
	pbd_collider_def cube = pbd_collider_def_default();
	cube.type = PBD_SHAPE_BOX;
	cube.shape.box.half_extents = pbd_v3((pbd_real)0.1, (pbd_real)0.1, (pbd_real)0.1);
	cube.static_friction = cube.kinetic_friction = (pbd_real)0.5;
	pbd_collider_def ball = cube;
	ball.type = PBD_SHAPE_SPHERE;
	ball.shape.sphere.center = pbd_v3(0, 0, 0);
	ball.shape.sphere.radius = (pbd_real)0.08;
	pbd_mass_properties cube_mass, ball_mass;
	pbd_collider_id probe = pbd_collider_create(w, &cube);
	assert_int_equal(pbd_collider_mass_properties(w, probe, 500, &cube_mass), PBD_OK);
	assert_int_equal(pbd_collider_destroy(w, probe), PBD_OK);
	probe = pbd_collider_create(w, &ball);
	assert_int_equal(pbd_collider_mass_properties(w, probe, 2000, &ball_mass), PBD_OK);
	assert_int_equal(pbd_collider_destroy(w, probe), PBD_OK);
	pbd_vec3 at[40], v[40];
	bool is_ball[40] = {false};
	uint32_t n = 0;
	for (int row = 0; row < 6; ++row)
		for (int k = 0; k < 6 - row; ++k) {
			at[n] = pbd_v3((pbd_real)((k - (5 - row) * 0.5) * 0.205), (pbd_real)(0.1 + 0.2 * row), 0);
			v[n++] = pbd_v3(0, 0, 0);
		}
	for (int k = 0; k < 3; ++k) {
		at[n] = pbd_v3((pbd_real)0.02, (pbd_real)(1.3 + 0.2 * k), 0);
		v[n++] = pbd_v3(0, 0, 0);
	}
	at[n] = pbd_v3((pbd_real)1.0, (pbd_real)0.1, 0), v[n++] = pbd_v3(-1, 0, 0);
	at[n] = pbd_v3((pbd_real)1.2, (pbd_real)0.1, 0), v[n++] = pbd_v3(-1, 0, 0);
	at[n] = pbd_v3((pbd_real)-1.5, (pbd_real)0.5, (pbd_real)0.05), v[n] = pbd_v3(6, 1, 0), is_ball[n++] = true;
	for (uint32_t i = 0; i < n; ++i) {
		pbd_body_def bd = pbd_body_def_default();
		bd.type = PBD_BODY_DYNAMIC;
		bd.mass = is_ball[i] ? ball_mass : cube_mass;
		bd.pose.position = at[i];
		bd.velocity = v[i];
		pbd_collider_def shape = is_ball[i] ? ball : cube;
		shape.body = pbd_body_create(w, &bd);
		assert_true(pbd_body_is_valid(w, shape.body));
		assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, &shape)));
	}
	return w;
}

static void test_bodies_any_thread_count(void** state) {
	(void)state;
	const int counts[] = {1, 2, 3, 8};
	uint64_t one = 0;
	for (int c = 0; c < 4; ++c) {
		pbd_world* w = pile_of_bodies(counts[c]);
		uint32_t shared = 0;
		for (int s = 0; s < 60; ++s) {
			assert_int_equal(pbd_world_step(w), PBD_OK);
			if (w->nrlevel_settle < w->nrgroup) shared++;
		}
		const uint64_t h = pbd_world_hash(w);
		if (c == 0)
			one = h;
		else
			assert_true(h == one);
		assert_true(shared > 50);
		pbd_world_destroy(w);
	}
}

/* The collision searches' per-thread buffers settle at what a pass finds: a block that did not fit
 * one thread's buffer must not grow the calling thread's buffer pass after pass (it once doubled
 * at every substep on 8 threads, until memory ran out). */
static void test_search_buffers_settle(void** state) {
	(void)state;
	pbd_scene s;
	pbd_scene_error err;
	if (!pbd_scene_load_builtin("cloth_stack", NULL, &s, &err)) fail_msg("cloth_stack: %s", err.message);
	pbd_world* w = s.world;
	assert_int_equal(pbd_world_set_threads(w, 8), PBD_OK);
	for (int i = 0; i < 12; ++i) pbd_scene_step(&s);
	const pbd_particle_collision* c = w->pcol;
	const pbd_block_out* outs[3] = {&c->pair_out, &c->vt_out, &c->ee_out};
	const uint32_t found[3] = {c->npairs, c->nvt, c->nee};
	assert_true(c->npairs > 0 && c->nee > 0);
	for (int k = 0; k < 3; ++k)
		for (uint32_t t = 0; t < outs[k]->threads; ++t) {
			/* room for the largest pass (pbd_grow_to doubles from 256), not more */
			const uint32_t cap = outs[k]->worker[t].cap, most = outs[k]->most;
			if (cap > 2 * most + 256)
				fail_msg("search %d, thread %u: %u records of room for at most %u found (now %u)", k, t, cap, most,
				         found[k]);
		}
	pbd_scene_free(&s);
}

/* A constraint gone non-finite is reported as a NaN strain wherever it lies: in the first block of
 * several, the later blocks' finite maxima must not replace it. */
static void test_stats_nan_stays(void** state) {
	(void)state;
	pbd_world* w = big_cloth(2, PBD_SOLVER_GAUSS_SEIDEL, false, 0);
	small_blocks(w);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	const pbd_family* f = &w->fam[PBD_FAMILY_DISTANCE];
	const uint32_t a = ((const pbd_distance_c*)f->hot)[0].a;
	w->x[a].x = (pbd_real)NAN;
	test_disable_fp_traps();
	pbd_stats s;
	pbd_stats_compute(w, &s);
	const double strain = pbd_stats_max_strain(w);
	const double past = pbd_stats_strain_past(w, 10);
	pbd_exec_end(&w->exec);
	test_enable_fp_traps();
	assert_true(s.max_strain != s.max_strain);
	assert_true(s.family[PBD_FAMILY_DISTANCE].max_strain != s.family[PBD_FAMILY_DISTANCE].max_strain);
	assert_true(strain != strain);
	assert_true(past != past);
	w->x[a].x = 0;
	pbd_world_destroy(w);
}

/* A game's task system that starts a thread per task, and one that runs each task inline. */
typedef struct spawned {
	pthread_t thread;
	pbd_task_fn* task;
	void* ctx;
} spawned;

static void* spawned_main(void* p) {
	spawned* s = (spawned*)p;
	s->task(s->ctx);
	return NULL;
}

typedef struct spawner {
	int enqueued, finished;
} spawner;

static void* spawn_enqueue(pbd_task_fn* task, void* ctx, void* user) {
	spawner* sp = (spawner*)user;
	spawned* s = (spawned*)malloc(sizeof *s);
	assert_non_null(s);
	s->task = task;
	s->ctx = ctx;
	assert_int_equal(pthread_create(&s->thread, NULL, spawned_main, s), 0);
	sp->enqueued++;
	return s;
}

static void spawn_finish(void* handle, void* user) {
	spawned* s = (spawned*)handle;
	pthread_join(s->thread, NULL);
	free(s);
	((spawner*)user)->finished++;
}

static void* inline_enqueue(pbd_task_fn* task, void* ctx, void* user) {
	(*(int*)user)++;
	task(ctx);
	return NULL;
}

static void inline_finish(void* handle, void* user) {
	(void)handle;
	(void)user;
	fail_msg("finish_task called for a task that ran inline");
}

static void test_game_task_systems(void** state) {
	(void)state;
	pbd_world* w = big_cloth(1, PBD_SOLVER_GAUSS_SEIDEL, false, 0);
	for (int i = 0; i < 10; ++i) pbd_world_step(w);
	const uint64_t one = pbd_world_hash(w);
	pbd_world_destroy(w);

	spawner sp = {0, 0};
	w = big_cloth(3, PBD_SOLVER_GAUSS_SEIDEL, false, 0);
	pbd_world_def d = pbd_world_get_def(w);
	pbd_world_destroy(w);
	d.enqueue_task = spawn_enqueue;
	d.finish_task = spawn_finish;
	d.task_user = &sp;
	w = test_world(&d);
	add_cloth(w);
	for (int i = 0; i < 10; ++i) pbd_world_step(w);
	assert_true(pbd_world_hash(w) == one);
	/* Two tasks per step, all finished. */
	assert_int_equal(sp.enqueued, 20);
	assert_int_equal(sp.finished, 20);
	pbd_world_destroy(w);

	int ran = 0;
	d.enqueue_task = inline_enqueue;
	d.finish_task = inline_finish;
	d.task_user = &ran;
	w = test_world(&d);
	add_cloth(w);
	for (int i = 0; i < 10; ++i) pbd_world_step(w);
	assert_true(pbd_world_hash(w) == one);
	assert_int_equal(ran, 20);
	pbd_world_destroy(w);
}

/* Flush-to-zero set by the game on its own thread reaches the workers: the results agree with one
 * thread under the same mode. */
static void test_fp_mode_reaches_workers(void** state) {
	(void)state;
#if defined(__x86_64__) || defined(__i386__)
	const unsigned csr = _mm_getcsr();
	_mm_setcsr(csr | 0x8040u); /* FTZ and DAZ */
	uint64_t h[2];
	for (int k = 0; k < 2; ++k) {
		pbd_world* w = big_cloth(k ? 4 : 1, PBD_SOLVER_GAUSS_SEIDEL, false, 0);
		for (int i = 0; i < 10; ++i) pbd_world_step(w);
		h[k] = pbd_world_hash(w);
		pbd_world_destroy(w);
	}
	_mm_setcsr(csr);
	assert_true(h[0] == h[1]);
#else
	skip();
#endif
}

/* The pool's threads stay between steps and sleep when none comes for a while: a step after
 * they fell asleep wakes them and ends where one thread does. */
static void test_pool_sleeps_between_steps(void** state) {
	(void)state;
	uint64_t h[2];
	uint32_t slept = 0;
	for (int k = 0; k < 2; ++k) {
		pbd_world* w = big_cloth(k ? 2 : 1, PBD_SOLVER_GAUSS_SEIDEL, false, 0);
		for (int i = 0; i < 6; ++i) {
			assert_int_equal(pbd_world_step(w), PBD_OK);
			/* up to a second for the worker to give up waiting (sanitizer builds run slowly) */
			for (int ms = 0; ms < 1000 && k && atomic_load(&w->exec.sleepers) == 0; ++ms)
				nanosleep(&(struct timespec){0, 1000000}, NULL);
			if (k) slept += atomic_load(&w->exec.sleepers);
		}
		h[k] = pbd_world_hash(w);
		pbd_world_destroy(w);
	}
	assert_int_equal(slept, 6);
	assert_true(h[0] == h[1]);
}

#if defined(__x86_64__) || defined(__i386__)
/* What each block of a stage saw: the thread that ran it and its MXCSR. Each block takes a few
 * microseconds, so that the worker gets some of them. */
typedef struct csr_seen {
	uint32_t worker[64], csr[64];
} csr_seen;

static void csr_block(void* ctx, uint32_t block, uint32_t worker) {
	csr_seen* s = (csr_seen*)ctx;
	volatile double x = 1;
	for (int i = 0; i < 20000; ++i) x = x * 1.0000001;
	s->worker[block] = worker;
	s->csr[block] = _mm_getcsr() & 0x8040u;
}

/* The pool's workers take up the caller's FTZ and DAZ at the next step's stages, also when the
 * caller changed them while the workers slept between steps. */
static void test_pool_takes_fp_mode_each_step(void** state) {
	(void)state;
	pbd_world* w = big_cloth(2, PBD_SOLVER_GAUSS_SEIDEL, false, 0);
	const unsigned csr = _mm_getcsr();
	for (int k = 0; k < 3; ++k) {
		const uint32_t want = k == 1 ? 0x8040u : 0;
		_mm_setcsr((csr & ~0x8040u) | want);
		/* stages of one step until the worker, woken by the first, ran some blocks (a loaded
		 * machine may wake it late) */
		uint32_t on_worker = 0;
		for (int tries = 0; tries < 200 && !on_worker; ++tries) {
			csr_seen seen;
			memset(&seen, 0xff, sizeof seen);
			pbd_exec_stage(&w->exec, csr_block, &seen, 64);
			for (int b = 0; b < 64; ++b) {
				assert_int_equal(seen.csr[b], want);
				on_worker += seen.worker[b] == 1;
			}
		}
		pbd_exec_end(&w->exec);
		_mm_setcsr(csr);
		assert_true(on_worker > 0);
		for (int ms = 0; ms < 1000 && atomic_load(&w->exec.sleepers) == 0; ++ms)
			nanosleep(&(struct timespec){0, 1000000}, NULL);
		assert_int_equal(atomic_load(&w->exec.sleepers), 1);
	}
	pbd_world_destroy(w);
}
#else
static void test_pool_takes_fp_mode_each_step(void** state) {
	(void)state;
	skip();
}
#endif

/* A chain of stages over 4096 cells, each stage cutting them into blocks at its own offsets:
 * every block finds each of its cells touched by all the earlier stages and no later one, on 1,
 * 2, 3 and 8 threads, whatever order the threads reach the blocks in. */
#define CHAIN_CELLS  4096u
#define CHAIN_STAGES 9u

typedef struct chain_stage {
	uint32_t* touched;
	uint32_t stage, bounds[80]; /* block b: cells [bounds[b], bounds[b + 1]) */
	_Atomic uint32_t* bad;
} chain_stage;

static void chain_block(void* ctx, uint32_t block, uint32_t worker) {
	(void)worker;
	chain_stage* s = (chain_stage*)ctx;
	volatile double x = 1;
	for (uint32_t i = 0; i < 2000u * (block % 3 + 1); ++i) x = x * 1.0000001;
	for (uint32_t p = s->bounds[block]; p < s->bounds[block + 1]; ++p) {
		if (s->touched[p] != s->stage) atomic_fetch_add(s->bad, 1);
		s->touched[p] = s->stage + 1;
	}
}

static void test_chain_keeps_stage_order(void** state) {
	(void)state;
	const int counts[] = {1, 2, 3, 8};
	for (int ti = 0; ti < 4; ++ti) {
		pbd_world_def d = pbd_world_def_default();
		d.threads = counts[ti];
		pbd_world* w = test_world(&d);
		uint32_t* touched = calloc(CHAIN_CELLS, sizeof *touched);
		static chain_stage st[CHAIN_STAGES];
		void* ctx[CHAIN_STAGES];
		uint32_t first[CHAIN_STAGES + 1], lo[CHAIN_STAGES * 80], hi[CHAIN_STAGES * 80];
		uint32_t dep_first[CHAIN_STAGES * 80], dep_last[CHAIN_STAGES * 80];
		_Atomic uint32_t flag[CHAIN_STAGES * 80];
		_Atomic uint32_t bad = 0;
		assert_non_null(touched);
		uint32_t total = 0;
		for (uint32_t s = 0; s < CHAIN_STAGES; ++s) {
			/* blocks of 64 to 128 cells, starting at an offset of the stage's own */
			const uint32_t offset = (s * 37u) % 64u;
			uint32_t n = 0, at = 0;
			st[s].bounds[n++] = 0;
			if (offset) st[s].bounds[n++] = at = offset;
			while (at < CHAIN_CELLS) {
				at += 64u + (at * 7u + s * 13u) % 65u;
				st[s].bounds[n++] = at < CHAIN_CELLS ? at : CHAIN_CELLS;
			}
			st[s].touched = touched;
			st[s].stage = s;
			st[s].bad = &bad;
			ctx[s] = &st[s];
			first[s] = total;
			for (uint32_t b = 0; b + 1 < n; ++b) {
				lo[total + b] = st[s].bounds[b];
				hi[total + b] = st[s].bounds[b + 1] - 1;
				atomic_init(&flag[total + b], 0);
			}
			total += n - 1;
		}
		first[CHAIN_STAGES] = total;
		for (uint32_t s = 0; s < CHAIN_STAGES; ++s)
			for (uint32_t b = first[s]; b < first[s + 1]; ++b) {
				dep_first[b] = 1;
				dep_last[b] = 0;
				if (s > 0)
					for (uint32_t i = first[s - 1]; i < first[s]; ++i)
						if (lo[i] <= hi[b] && lo[b] <= hi[i]) {
							if (dep_first[b] > dep_last[b]) dep_first[b] = i;
							dep_last[b] = i;
						}
			}
		const pbd_chain c = {CHAIN_STAGES, chain_block, ctx, first, dep_first, dep_last, flag};
		for (int round = 0; round < 20; ++round) {
			memset(touched, 0, CHAIN_CELLS * sizeof *touched);
			pbd_exec_chain(&w->exec, &c);
			for (uint32_t p = 0; p < CHAIN_CELLS; ++p) assert_int_equal(touched[p], CHAIN_STAGES);
		}
		pbd_exec_end(&w->exec);
		assert_int_equal(atomic_load(&bad), 0);
		free(touched);
		pbd_world_destroy(w);
	}
}

/* A run saved on two threads and resumed on three, with the thread count changed between steps
 * along the way, ends where one thread without a stop does. */
static void test_resume_and_switch(void** state) {
	(void)state;
	pbd_world* w = big_cloth(1, PBD_SOLVER_GAUSS_SEIDEL, false, 2);
	for (int i = 0; i < 20; ++i) pbd_world_step(w);
	const uint64_t one = pbd_world_hash(w);
	pbd_world_destroy(w);

	w = big_cloth(2, PBD_SOLVER_GAUSS_SEIDEL, false, 2);
	for (int i = 0; i < 5; ++i) pbd_world_step(w);
	assert_int_equal(pbd_world_set_threads(w, 4), PBD_OK);
	for (int i = 0; i < 5; ++i) pbd_world_step(w);
	assert_int_equal(pbd_world_set_threads(w, 2), PBD_OK);
	size_t size = 0;
	assert_int_equal(pbd_world_save_memory(w, NULL, 0, &size), PBD_OK);
	void* buf = malloc(size);
	assert_non_null(buf);
	assert_int_equal(pbd_world_save_memory(w, buf, size, &size), PBD_OK);
	pbd_world_destroy(w);
	pbd_world_def hooks = pbd_world_def_default();
	hooks.threads = 3;
	pbd_error err;
	assert_int_equal(pbd_world_load_memory(buf, size, &hooks, &w, &err), PBD_OK);
	free(buf);
	assert_int_equal(pbd_world_get_def(w).threads, 3);
	for (int i = 0; i < 10; ++i) pbd_world_step(w);
	assert_true(pbd_world_hash(w) == one);
	pbd_world_destroy(w);
}

static void test_settings(void** state) {
	(void)state;
	pbd_world_def d = pbd_world_def_default();
	assert_int_equal(d.threads, 1);
	pbd_world* w = NULL;
	d.threads = 0;
	assert_int_equal(pbd_world_create(&d, &w), PBD_ERR_OUT_OF_RANGE);
	d.threads = PBD_MAX_THREADS + 1;
	assert_int_equal(pbd_world_create(&d, &w), PBD_ERR_OUT_OF_RANGE);
	d.threads = 2;
	d.enqueue_task = inline_enqueue;
	assert_int_equal(pbd_world_create(&d, &w), PBD_ERR_INVALID_ARGUMENT);
	d.enqueue_task = NULL;
	assert_int_equal(pbd_world_create(&d, &w), PBD_OK);
	assert_int_equal(pbd_world_set_threads(w, 65), PBD_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(pbd_world_last_error(w), "threads"));
	assert_int_equal(pbd_world_get_def(w).threads, 2);
	/* Worlds with pools come and go (the sanitizers see every thread joined and freed). */
	for (int i = 0; i < 50; ++i) {
		assert_int_equal(pbd_world_set_threads(w, 1 + i % 5), PBD_OK);
		pbd_world* v = NULL;
		pbd_world_def e = pbd_world_def_default();
		e.threads = 1 + i % 8;
		assert_int_equal(pbd_world_create(&e, &v), PBD_OK);
		pbd_world_destroy(v);
	}
	pbd_world_destroy(w);
}

int main(int argc, char** argv) {
	test_enable_fp_traps();
	if (argc == 3 && strcmp(argv[1], "--scenes") == 0) {
		static size_t part;
		part = (size_t)strtoul(argv[2], NULL, 10);
		if (part >= SCENE_PARTS) {
			fprintf(stderr, "test_threads: --scenes expects 0 to %d\n", SCENE_PARTS - 1);
			return 2;
		}
		const struct CMUnitTest scenes[] = {
		    cmocka_unit_test_prestate(test_builtin_scenes_any_thread_count, &part),
		};
		return cmocka_run_group_tests(scenes, NULL, NULL);
	}
	/* --big K: the big cloth's case K (test_big_cloth_every_solver); --pool: the other tests;
	 * no argument runs them all */
	if (argc == 3 && strcmp(argv[1], "--big") == 0) {
		static size_t part;
		part = (size_t)strtoul(argv[2], NULL, 10);
		if (part > 3) {
			fprintf(stderr, "test_threads: --big expects 0 to 3\n");
			return 2;
		}
		const struct CMUnitTest big[] = {
		    cmocka_unit_test_prestate(test_big_cloth_every_solver, &part),
		};
		return cmocka_run_group_tests(big, NULL, NULL);
	}
	const bool pool = argc == 2 && strcmp(argv[1], "--pool") == 0;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_settings),
	    cmocka_unit_test(test_game_task_systems),
	    cmocka_unit_test(test_fp_mode_reaches_workers),
	    cmocka_unit_test(test_resume_and_switch),
	    cmocka_unit_test(test_pool_sleeps_between_steps),
	    cmocka_unit_test(test_chain_keeps_stage_order),
	    cmocka_unit_test(test_pool_takes_fp_mode_each_step),
	    cmocka_unit_test(test_stats_any_thread_count),
	    cmocka_unit_test(test_bodies_any_thread_count),
	    cmocka_unit_test(test_stats_nan_stays),
	    cmocka_unit_test(test_search_buffers_settle),
	    cmocka_unit_test(test_big_cloth_every_solver),
	};
	enum { COUNT = sizeof tests / sizeof tests[0] };
	if (pool) return _cmocka_run_group_tests("threads_pool", tests, COUNT - 1, NULL, NULL);
	if (argc > 1) {
		fprintf(stderr, "test_threads: expected --pool, --big 0 to 3 or --scenes 0 to %d\n", SCENE_PARTS - 1);
		return 2;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
