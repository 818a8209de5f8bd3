/* Work after divergence (src/collision/self_collision.c, src/collision/vertex_triangle.c, src/collision/edge_edge.c,
 * src/collision/triangle_contact.c, src/collision/block_out.c; docs/collision.md, "Bounded work"): a world that blew
 * up costs bounded memory and bounded contact searches per step. Memory is what the world's own
 * allocator holds live, work what pbd_world_get_collision_work counts; nothing here reads a
 * clock. The scene is the built-in cloth_stack (two self-colliding cloths of 2048 particles in
 * all), whose explicit Euler integration blows up in its second frame. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counting.h" /* soak/: the counting allocator pbd-soak --diverge measures with */
#include "pbd/scene.h"
#include "collision/self_collision.h"
#include "test_util.h"
#include "model/world.h"

/* A diverged frame may hold at most this many times the peak memory of the first frame
 * (creation included). */
#define MEMORY_BOUND 4

/* What the library logged about the run. */
typedef struct logged {
	int diverged, skipped, capped;
} logged;

static void keep_log(const char* message, void* user) {
	logged* l = (logged*)user;
	l->diverged += strstr(message, "diverged") != NULL;
	l->skipped += strstr(message, "contact searches skipped") != NULL;
	l->capped += strstr(message, "reached its bound") != NULL;
}

/* cloth_stack loaded through the scene library, its world moved onto the counting allocator
 * (without a limit until the test sets one). */
static void load(pbd_scene* s, soak_counting* mem, logged* log) {
	pbd_scene_error err;
	if (!pbd_scene_load_builtin("cloth_stack", NULL, s, &err)) fail_msg("cloth_stack: %s", err.message);
	memset(log, 0, sizeof *log);
	pbd_world_def def = pbd_world_def_default();
	def.allocator = soak_counting_allocator(mem, SIZE_MAX);
	def.log = keep_log;
	def.log_user = log;
	pbd_error perr;
	if (!soak_move_world(&s->world, &def, &perr)) fail_msg("cloth_stack: %s", perr.message);
}

/* The bounds every search of a step keeps (PBD_COLLISION_MAX_CANDIDATES and the rest). */
static void assert_within_caps(const pbd_world* w) {
	const pbd_collision_work k = pbd_world_get_collision_work(w);
	assert_true(k.most_candidates <= PBD_COLLISION_MAX_CANDIDATES);
	assert_true(k.most_item_contacts <= PBD_COLLISION_MAX_CONTACTS);
	/* the largest search has an item per edge: 3 per triangle at most */
	const uint64_t items = 3 * (uint64_t)pbd_world_triangle_count(w);
	assert_true(k.most_contacts <= items * PBD_COLLISION_CONTACTS_PER_ITEM);
}

/* Explicit Euler blows cloth_stack up in its second frame and its cloths fly apart over
 * kilometres: every diverged frame stays within MEMORY_BOUND times the first frame's memory, and
 * its contact searches examine no more candidates than the healthy first frame's full searches
 * did, because the torn state skips them. Before the searches were bounded, the second frame alone grew the
 * contact arrays to gigabytes over half a minute. */
static void test_exploded_stack_bounded(void** state) {
	(void)state;
	test_disable_fp_traps(); /* the blown-up state overflows on purpose */
	pbd_scene s;
	soak_counting mem;
	logged log;
	load(&s, &mem, &log);
	pbd_world* w = s.world;
	assert_int_equal(pbd_world_set_method(w, PBD_METHOD_EXPLICIT_EULER), PBD_OK);
	assert_int_equal(pbd_scene_step(&s), PBD_OK);
	const size_t first = mem.peak;
	/* The healthy frame's searches, made in full in every substep: the edges' candidate lists
	 * kept across substeps (edge_candidates.c) spare most of them there, while a frame that blows
	 * up makes them anew, for boxes that carry the flying particles' motion ahead. */
	pbd_collision_work healthy;
	{
		pbd_scene full;
		soak_counting full_mem;
		logged full_log;
		load(&full, &full_mem, &full_log);
		full.world->pcol->ecand.off = true;
		assert_int_equal(pbd_world_set_method(full.world, PBD_METHOD_EXPLICIT_EULER), PBD_OK);
		assert_int_equal(pbd_scene_step(&full), PBD_OK);
		healthy = pbd_world_get_collision_work(full.world);
		pbd_scene_free(&full);
	}
	assert_true(healthy.candidates > 0);
	assert_int_equal(healthy.skipped, 0);
	assert_int_equal(pbd_world_get_warning(w, PBD_WARN_DIVERGED).count, 0);
	mem.limit = MEMORY_BOUND * first;
	size_t worst = 0;
	uint64_t most = 0;
	for (int frame = 2; frame <= 10; ++frame) {
		mem.peak = mem.live;
		const pbd_status st = pbd_scene_step(&s);
		if (st != PBD_OK)
			fail_msg("frame %d: %s (the world's memory is bounded by %d x the first frame's %zu bytes)", frame,
			         pbd_world_last_error(w), MEMORY_BOUND, first);
		assert_true(mem.peak <= mem.limit);
		assert_within_caps(w);
		const pbd_collision_work k = pbd_world_get_collision_work(w);
		assert_true(k.candidates <= healthy.candidates);
		if (mem.peak > worst) worst = mem.peak;
		if (k.candidates > most) most = k.candidates;
	}
	const pbd_collision_work k = pbd_world_get_collision_work(w);
	printf("  exploded cloth_stack: first frame %zu bytes, diverged frames at most %zu (%.2f x); candidates %llu "
	       "in the first frame, at most %llu after; %llu substeps skipped, %u diverged frames\n",
	       first, worst, (double)worst / (double)first, (unsigned long long)healthy.candidates,
	       (unsigned long long)most, (unsigned long long)k.skipped_total,
	       (unsigned)pbd_world_get_warning(w, PBD_WARN_DIVERGED).count);
	assert_true(pbd_world_get_warning(w, PBD_WARN_DIVERGED).count >= 8); /* it really blew up */
	assert_true(k.skipped_total > 0);
	assert_int_equal(log.skipped, 1); /* logged once */
	pbd_scene_free(&s);
	test_enable_fp_traps();
}

/* The bounds without the skip: particles crushed into one point stretch nothing, so nothing skips
 * their search, and all of them land in one cell of the hash. Each particle stops at
 * PBD_COLLISION_MAX_CANDIDATES candidates or PBD_COLLISION_MAX_CONTACTS pairs, the search at
 * PBD_COLLISION_CONTACTS_PER_ITEM pairs per particle, and the memory the step adds stays within
 * what those pairs take (a thread's buffer and the result, each at most twice its size, and the
 * pairs' references for the projection).
 * Unbounded, the 20 000 particles made 200 million pairs (2.4 gigabytes). */
static void test_crushed_particles_capped(void** state) {
	(void)state;
	enum { N = 20000, SIDE = 30 };
	soak_counting mem;
	logged log = {0, 0, 0};
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, 0, 0);
	def.allocator = soak_counting_allocator(&mem, SIZE_MAX);
	def.log = keep_log;
	def.log_user = &log;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	pbd_vec3* x = (pbd_vec3*)malloc(N * sizeof *x);
	pbd_real* inv = (pbd_real*)malloc(N * sizeof *inv);
	assert_true(x && inv);
	for (int i = 0; i < N; ++i) {
		x[i] = pbd_v3((pbd_real)(i % SIDE), (pbd_real)(i / SIDE % SIDE), (pbd_real)(i / (SIDE * SIDE)));
		inv[i] = 1;
	}
	assert_int_equal(pbd_world_add_particles(w, N, x, NULL, inv, NULL), PBD_OK);
	/* balls of radius 0.1, 1 m apart, each its own collision group: every pair may collide */
	for (int i = 0; i < N; ++i) {
		w->radius[i] = (pbd_real)0.1;
		w->cgroup[i] = (uint32_t)i + 1;
	}
	assert_int_equal(pbd_world_step(w), PBD_OK);
	const size_t first = mem.peak;
	assert_int_equal(w->pcol->npairs, 0);
	for (int i = 0; i < N; ++i) x[i] = pbd_v3(0, 0, 0);
	assert_int_equal(pbd_world_set_positions(w, 0, N, x), PBD_OK);
	free(x);
	free(inv);
	/* each pair kept, and its reference for the projection by region (contact_regions.c) */
	const size_t pairs_bytes =
	    4 * (size_t)N * PBD_COLLISION_CONTACTS_PER_ITEM * (sizeof(pbd_pair_c) + sizeof(uint32_t));
	mem.limit = first + pairs_bytes;
	mem.peak = mem.live;
	const pbd_status st = pbd_world_step(w);
	if (st != PBD_OK)
		fail_msg("crushed: %s (the world's memory is bounded by the first frame's %zu bytes and %zu for the pairs)",
		         pbd_world_last_error(w), first, pairs_bytes);
	const pbd_collision_work k = pbd_world_get_collision_work(w);
	printf("  %d particles crushed into a point: first frame %zu bytes, crushed frame %zu (%.2f x); %llu "
	       "candidates, %u particles capped, the most one examined %u and kept %u, %u pairs kept\n",
	       N, first, mem.peak, (double)mem.peak / (double)first, (unsigned long long)k.candidates, k.capped,
	       k.most_candidates, k.most_item_contacts, w->pcol->npairs);
	assert_int_equal(k.skipped, 0);
	assert_true(k.capped > 0);
	assert_int_equal(k.most_candidates, PBD_COLLISION_MAX_CANDIDATES);
	assert_int_equal(k.most_item_contacts, PBD_COLLISION_MAX_CONTACTS);
	assert_true(k.candidates <= (uint64_t)N * PBD_COLLISION_MAX_CANDIDATES);
	assert_int_equal(w->pcol->npairs, N * PBD_COLLISION_CONTACTS_PER_ITEM);
	assert_int_equal(k.most_contacts, w->pcol->npairs);
	assert_int_equal(log.capped, 1);
	pbd_world_destroy(w);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exploded_stack_bounded),
	    cmocka_unit_test(test_crushed_particles_capped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
