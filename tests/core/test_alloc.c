/* Allocator contracts. A user allocator (pbd_allocator) sees every block the library takes: each
 * one is freed once, with the size it was allocated (or last reallocated) with, nothing is left
 * at destroy, and this holds after any single allocation fails, wherever it fails: creating the
 * world, building a scene with every constraint family and collider shape, its first steps
 * under every method, a snapshot and the world loaded from it. Every failure is reported as out
 * of memory and leaves a world that goes on stepping. The world itself is placed at the
 * alignment its type declares, also when the allocator returns blocks at 16 mod 64. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_physics.h"
#include "model/world.h"

/* ---- a tracking allocator ----------------------------------------------------------------- */

typedef struct live_block {
	void* ptr; /* what the library got */
	void* raw; /* what malloc gave */
	size_t size;
} live_block;

typedef struct tracker {
	live_block* live;
	size_t n, cap;
	long attempts; /* calls of alloc and realloc so far */
	long fail_at;  /* the attempt that returns NULL; -1 never */
	long size_mismatch, unknown_free;
	/* Each block is handed out at this offset from a 64-byte boundary (0: as malloc gives it). */
	size_t offset;
} tracker;

static void tracker_reset(tracker* t, long fail_at, size_t offset) {
	free(t->live);
	memset(t, 0, sizeof *t);
	t->fail_at = fail_at;
	t->offset = offset;
}

static long find_block(const tracker* t, const void* p) {
	for (size_t i = 0; i < t->n; ++i)
		if (t->live[i].ptr == p) return (long)i;
	return -1;
}

static void* raw_block(const tracker* t, size_t size, void** raw) {
	if (t->offset == 0) return *raw = malloc(size);
	/* 64-aligned storage, handed out `offset` bytes in. */
	const size_t bytes = (size + t->offset + 63) / 64 * 64;
	*raw = aligned_alloc(64, bytes);
	return *raw ? (char*)*raw + t->offset : NULL;
}

static void* track_alloc(size_t size, void* user) {
	tracker* t = (tracker*)user;
	assert_true(size > 0);
	if (t->attempts++ == t->fail_at) return NULL;
	void* raw = NULL;
	void* p = raw_block(t, size, &raw);
	assert_non_null(p);
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 256;
		t->live = (live_block*)realloc(t->live, t->cap * sizeof *t->live);
		assert_non_null(t->live);
	}
	t->live[t->n++] = (live_block){p, raw, size};
	return p;
}

static void drop_block(tracker* t, size_t i) {
	free(t->live[i].raw);
	t->live[i] = t->live[--t->n];
}

static void track_free(void* ptr, size_t size, void* user) {
	tracker* t = (tracker*)user;
	const long i = find_block(t, ptr);
	if (i < 0) {
		t->unknown_free++;
		return;
	}
	if (t->live[i].size != size) t->size_mismatch++;
	drop_block(t, (size_t)i);
}

/* A move to a fresh block, so that the offset holds for reallocated blocks too. */
static void* track_realloc(void* ptr, size_t old_size, size_t new_size, void* user) {
	tracker* t = (tracker*)user;
	if (!ptr) return track_alloc(new_size, user);
	const long i = find_block(t, ptr);
	assert_true(i >= 0);
	if (t->live[i].size != old_size) t->size_mismatch++;
	void* fresh = track_alloc(new_size, user);
	if (!fresh) return NULL;
	memcpy(fresh, ptr, old_size < new_size ? old_size : new_size);
	drop_block(t, (size_t)find_block(t, ptr));
	return fresh;
}

/* ---- a scene with everything that allocates --------------------------------------------- */

static long cur_fail = -1; /* the failing allocation, for messages */

typedef struct run_log {
	int count;
	char first[256];
} run_log;

static void log_keep_first(const char* message, void* user) {
	run_log* l = (run_log*)user;
	if (l->count++ == 0) snprintf(l->first, sizeof l->first, "%s", message);
}

typedef struct life_cfg {
	pbd_method method;
	int threads;
	bool use_realloc;
	size_t offset;
} life_cfg;

/* A call's status: OK, or out of memory after an injected failure (anything else fails the
 * test). Returns whether it succeeded. */
static bool ok_or_oom(pbd_status st, bool* ok, const char* what) {
	if (st == PBD_OK) return true;
	if (st != PBD_ERR_OUT_OF_MEMORY)
		fail_msg("%s (allocation %ld failed): got '%s', want ok or out of memory", what, cur_fail,
		         pbd_status_string(st));
	*ok = false;
	return false;
}

static bool soft(pbd_world* w, const pbd_soft_def* def, pbd_soft_info* info, bool* ok, const char* what) {
	pbd_soft_id id;
	if (!ok_or_oom(pbd_soft_create(w, def, &id), ok, what)) return false;
	assert_int_equal(pbd_soft_get_info(w, id, info), PBD_OK);
	return true;
}

static void add_colliders(pbd_world* w, bool* ok) {
	static const pbd_vec3 cube[8] = {{-1, -1, -1}, {1, -1, -1}, {-1, 1, -1}, {1, 1, -1},
	                                 {-1, -1, 1},  {1, -1, 1},  {-1, 1, 1},  {1, 1, 1}};
	static const pbd_vec3 tet_v[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
	static const uint32_t tet_t[12] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
	static const pbd_real heights[9] = {0, (pbd_real)0.1, 0, (pbd_real)0.1, (pbd_real)0.2, (pbd_real)0.1, 0, 0, 0};
	for (int shape = 0; shape < PBD_SHAPE_COUNT + 2; ++shape) {
		pbd_collider_def cd = pbd_collider_def_default();
		cd.margin = (pbd_real)0.01;
		switch (shape) {
		case PBD_SHAPE_PLANE:
			cd.shape.plane.offset = -4;
			break;
		case PBD_SHAPE_SPHERE:
			cd.type = PBD_SHAPE_SPHERE;
			cd.shape.sphere.center = pbd_v3(0, (pbd_real)0.2, (pbd_real)0.3);
			cd.shape.sphere.radius = (pbd_real)0.2;
			cd.kind = PBD_ACTOR_KINEMATIC;
			cd.velocity = pbd_v3(0, (pbd_real)0.1, 0);
			cd.angular_velocity = pbd_v3(0, 1, 0);
			cd.static_friction = (pbd_real)0.5;
			cd.kinetic_friction = (pbd_real)0.4;
			break;
		case PBD_SHAPE_CAPSULE:
			cd.type = PBD_SHAPE_CAPSULE;
			cd.shape.capsule.half_height = (pbd_real)0.2;
			cd.shape.capsule.radius = (pbd_real)0.1;
			cd.pose.position = pbd_v3(1, (pbd_real)0.5, 0);
			break;
		case PBD_SHAPE_BOX:
			cd.type = PBD_SHAPE_BOX;
			cd.shape.box.half_extents = pbd_v3((pbd_real)0.2, (pbd_real)0.1, (pbd_real)0.2);
			cd.pose.position = pbd_v3((pbd_real)0.5, (pbd_real)-0.5, (pbd_real)0.5);
			break;
		case PBD_SHAPE_CONVEX:
			cd.type = PBD_SHAPE_CONVEX;
			cd.shape.convex.points = cube;
			cd.shape.convex.point_count = 8;
			cd.pose.position = pbd_v3(0, -3, 0);
			break;
		case PBD_SHAPE_MESH:
			cd.type = PBD_SHAPE_MESH;
			cd.shape.mesh.vertices = tet_v;
			cd.shape.mesh.triangles = tet_t;
			cd.shape.mesh.vertex_count = 4;
			cd.shape.mesh.triangle_count = 4;
			cd.shape.mesh.closed = true;
			cd.pose.position = pbd_v3((pbd_real)0.3, -1, (pbd_real)0.3);
			break;
		case PBD_SHAPE_HEIGHTFIELD:
			cd.type = PBD_SHAPE_HEIGHTFIELD;
			cd.shape.heightfield.heights = heights;
			cd.shape.heightfield.nx = 3;
			cd.shape.heightfield.nz = 3;
			cd.shape.heightfield.cell_x = (pbd_real)0.5;
			cd.shape.heightfield.cell_z = (pbd_real)0.5;
			cd.pose.position = pbd_v3(0, (pbd_real)-1.5, 0);
			break;
		case PBD_SHAPE_COUNT: /* a trigger */
			cd.type = PBD_SHAPE_SPHERE;
			cd.shape.sphere.radius = (pbd_real)0.5;
			cd.trigger = true;
			break;
		default: /* one more mesh, destroyed: its slot and arrays are reused by the next */
			cd.type = PBD_SHAPE_MESH;
			cd.shape.mesh.vertices = tet_v;
			cd.shape.mesh.triangles = tet_t;
			cd.shape.mesh.vertex_count = 4;
			cd.shape.mesh.triangle_count = 4;
			cd.pose.position = pbd_v3(5, 5, 5);
			break;
		}
		const pbd_collider_id id = pbd_collider_create(w, &cd);
		if (id.index1 == 0) {
			if (!strstr(pbd_world_last_error(w), "out of memory"))
				fail_msg("pbd_collider_create (shape %d): %s", shape, pbd_world_last_error(w));
			*ok = false;
			continue;
		}
		if (shape == PBD_SHAPE_COUNT + 1) {
			assert_int_equal(pbd_collider_destroy(w, id), PBD_OK);
			cd.pose.position = pbd_v3(6, 5, 5);
			if (pbd_collider_create(w, &cd).index1 == 0) *ok = false;
		}
	}
}

/* Objects of every constraint family, with pins, thickness, self-collision and air. */
static void add_objects(pbd_world* w, bool* ok) {
	pbd_mesh m;
	pbd_error err;
	pbd_soft_info info;

	/* A cloth of distances with dihedral bends, pinned corners, long-range attachments, a
	 * thickness with self-collision, and drag. */
	tp_grid(&m, 6, 6, 1, pbd_v3((pbd_real)-0.5, (pbd_real)0.6, (pbd_real)-0.5), 2, false);
	const uint32_t pins[2] = {0, 5};
	pbd_soft_def sd = pbd_soft_def_default();
	sd.mesh = &m;
	sd.pinned = pins;
	sd.pinned_count = 2;
	sd.bend = PBD_BEND_DIHEDRAL;
	sd.bend_compliance = (pbd_real)1e-1;
	sd.long_range = true;
	sd.thickness = (pbd_real)0.02;
	sd.self_collision = true;
	sd.drag_normal = (pbd_real)0.5;
	sd.drag_tangent = (pbd_real)0.1;
	soft(w, &sd, &info, ok, "cloth");
	pbd_mesh_free(&m);

	/* A membrane of triangle strains with isometric bends and a shape-matching patch. */
	tp_grid(&m, 4, 4, (pbd_real)0.6, pbd_v3(1, 1, 0), 1, false);
	sd = pbd_soft_def_default();
	sd.mesh = &m;
	sd.membrane = PBD_MEMBRANE_TRIANGLES;
	sd.membrane_compliance = (pbd_real)1e-2;
	sd.bend = PBD_BEND_ISOMETRIC;
	sd.bend_compliance = 1;
	if (soft(w, &sd, &info, ok, "membrane")) {
		uint32_t members[4];
		for (uint32_t k = 0; k < 4; ++k) members[k] = info.first_particle + k;
		pbd_cluster_def sh = pbd_cluster_def_default();
		sh.particles = members;
		sh.count = 4;
		sh.compliance = (pbd_real)1e-1;
		ok_or_oom(pbd_world_add_clusters(w, 1, &sh, NULL), ok, "clusters");
	}
	pbd_mesh_free(&m);

	/* Tetrahedra: stable Neo-Hookean, then volume constraints. */
	pbd_tet_box_def bx = pbd_tet_box_def_default();
	bx.nx = 2;
	bx.ny = 1;
	bx.nz = 1;
	bx.size = pbd_v3((pbd_real)0.4, (pbd_real)0.2, (pbd_real)0.2);
	bx.origin = pbd_v3(-2, 0, 0);
	assert_int_equal(pbd_mesh_tet_box(&bx, &m, &err), PBD_OK);
	sd = pbd_soft_def_default();
	sd.mesh = &m;
	sd.tets = PBD_TET_NEOHOOKEAN;
	sd.tet_youngs_modulus = (pbd_real)1e3;
	for (int k = 0; k < PBD_EDGE_KIND_COUNT; ++k) sd.material[k].enabled = false;
	soft(w, &sd, &info, ok, "neo-hookean");
	sd.translation = pbd_v3(0, 0, 1);
	sd.tets = PBD_TET_VOLUME;
	sd.tet_compliance = (pbd_real)1e-3;
	sd.material[PBD_EDGE_STRUCTURAL].enabled = true;
	soft(w, &sd, &info, ok, "tet volumes");
	pbd_mesh_free(&m);

	/* A balloon: the closed surface of a tetrahedralised ball. */
	pbd_tet_sphere_def bs = pbd_tet_sphere_def_default();
	bs.center = pbd_v3(2, (pbd_real)0.5, 0);
	bs.radius = (pbd_real)0.2;
	bs.subdivisions = 1;
	assert_int_equal(pbd_mesh_tet_sphere(&bs, &m, &err), PBD_OK);
	m.tet_count = 0;
	sd = pbd_soft_def_default();
	sd.mesh = &m;
	sd.balloon = true;
	sd.volume_compliance = (pbd_real)1e-2;
	soft(w, &sd, &info, ok, "balloon");
	pbd_mesh_free(&m);

	/* A rope with drag on its particles, its end attached to a point. */
	pbd_rope_def rd = pbd_rope_def_default();
	rd.segments = 5;
	rd.start = pbd_v3(-1, 2, -1);
	rd.end = pbd_v3(0, 2, -1);
	assert_int_equal(pbd_mesh_rope(&rd, &m, &err), PBD_OK);
	sd = pbd_soft_def_default();
	sd.mesh = &m;
	sd.drag_particle = (pbd_real)0.01;
	if (soft(w, &sd, &info, ok, "rope")) {
		pbd_attachment_def ad = pbd_attachment_def_default();
		ad.particle = info.first_particle;
		ad.target = pbd_v3(-1, 2, -1);
		ok_or_oom(pbd_world_add_attachments(w, 1, &ad, NULL), ok, "attachments");
	}
	pbd_mesh_free(&m);
}

/* One life: create, build, step, save, load, step the copy, destroy both. Returns false when
 * some call ran out of memory (which must be the status it reported). */
static bool life(tracker* t, const life_cfg* cfg) {
	run_log lg = {0, ""};
	pbd_world_def def = pbd_world_def_default();
	def.allocator.alloc = track_alloc;
	def.allocator.realloc = cfg->use_realloc ? track_realloc : NULL;
	def.allocator.free = track_free;
	def.allocator.user = t;
	def.log = log_keep_first;
	def.log_user = &lg;
	def.particle_capacity = 4; /* small, so that the arrays grow */
	def.distance_capacity = 4;
	def.method = cfg->method;
	def.threads = cfg->threads;
	def.iterations = 4;
	def.substeps = 2;
	def.formulation = PBD_FORMULATION_XPBD;
	def.hierarchy_levels = cfg->method == PBD_METHOD_POSITION_BASED ? 2 : 0; /* its coarse levels allocate too */
	pbd_world* w = NULL;
	const pbd_status st = pbd_world_create(&def, &w);
	if (st != PBD_OK) {
		assert_int_equal(st, PBD_ERR_OUT_OF_MEMORY);
		assert_null(w);
		return false;
	}
	assert_int_equal((uintptr_t)w % _Alignof(struct pbd_world), 0);
	bool ok = true;
	add_objects(w, &ok);
	add_colliders(w, &ok);
	for (int s = 0; s < 3; ++s) ok_or_oom(pbd_world_step(w), &ok, "pbd_world_step");
	assert_true(tp_all_finite(w));

	size_t size = 0;
	assert_int_equal(pbd_world_save_memory(w, NULL, 0, &size), PBD_OK);
	void* buf = malloc(size);
	assert_int_equal(pbd_world_save_memory(w, buf, size, &size), PBD_OK);
	pbd_world* copy = NULL;
	pbd_error err = {""};
	const pbd_status loaded = pbd_world_load_memory(buf, size, &def, &copy, &err);
	if (loaded != PBD_OK && loaded != PBD_ERR_OUT_OF_MEMORY)
		fail_msg("load (allocation %ld failed): '%s': %s", cur_fail, pbd_status_string(loaded), err.message);
	if (ok_or_oom(loaded, &ok, "pbd_world_load_memory")) {
		ok_or_oom(pbd_world_step(copy), &ok, "pbd_world_step (loaded)");
		assert_true(tp_all_finite(copy));
	} else {
		assert_null(copy);
		assert_true(strlen(err.message) > 0);
	}
	free(buf);
	pbd_world_destroy(copy);
	if (ok && lg.count) fail_msg("a world without failures logged: %s", lg.first);
	pbd_world_destroy(w);
	return ok;
}

static const char* cfg_name(const life_cfg* c, char* buf, size_t n) {
	snprintf(buf, n, "%s, %d thread%s, %s, blocks at %zu mod 64", pbd_method_name(c->method), c->threads,
	         c->threads > 1 ? "s" : "", c->use_realloc ? "realloc" : "alloc and free", c->offset);
	return buf;
}

/* Runs the life once for its count of allocations, then once failing each one of them. */
static void every_failure(const life_cfg* cfg) {
	char name[128];
	cfg_name(cfg, name, sizeof name);
	tracker t = {0};
	tracker_reset(&t, -1, cfg->offset);
	cur_fail = -1;
	if (!life(&t, cfg)) fail_msg("%s: the life fails without an injected failure", name);
	if (t.n || t.size_mismatch || t.unknown_free)
		fail_msg("%s: %zu blocks leaked, %ld freed with a wrong size, %ld unknown", name, t.n, t.size_mismatch,
		         t.unknown_free);
	const long total = t.attempts;
	for (long k = 0; k < total; ++k) {
		tracker_reset(&t, k, cfg->offset);
		cur_fail = k;
		if (life(&t, cfg)) fail_msg("%s: allocation %ld failed and no call reported it", name, k);
		if (t.n || t.size_mismatch || t.unknown_free)
			fail_msg("%s: after allocation %ld of %ld failed: %zu blocks leaked, %ld freed or reallocated with a "
			         "wrong size, %ld unknown",
			         name, k, total, t.n, t.size_mismatch, t.unknown_free);
	}
	tracker_reset(&t, -1, 0);
	printf("  %s: %ld allocations, each failed once: sizes and leaks clean\n", name, total);
}

/* The method a run covers (main's --method argument). */
static pbd_method run_method = PBD_METHOD_POSITION_BASED;

/* Each method with the allocator's alloc and free alone, and with its realloc at blocks 16 or 32
 * bytes off a cache line (the position-based method on two threads: the pool and the sweep's
 * plan allocate too). */
static void test_failures(void** state) {
	(void)state;
	const bool pbd = run_method == PBD_METHOD_POSITION_BASED;
	const life_cfg a = {run_method, 1, false, 0}, b = {run_method, pbd ? 2 : 1, true, pbd ? 16 : 32};
	every_failure(&a);
	every_failure(&b);
}

/* The world's cache-line-aligned members (the threads' shares of a stage) are aligned however
 * the allocator places its blocks, and the world frees the very block it got. */
static void test_world_alignment(void** state) {
	(void)state;
	for (size_t offset = 16; offset < 64; offset += 16) {
		for (int threads = 1; threads <= 2; ++threads) {
			tracker t = {0};
			tracker_reset(&t, -1, offset);
			pbd_world_def def = pbd_world_def_default();
			def.allocator.alloc = track_alloc;
			def.allocator.free = track_free;
			def.allocator.user = &t;
			def.threads = threads;
			def.log = test_log_fail;
			pbd_world* w = NULL;
			assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
			assert_int_equal((uintptr_t)w % _Alignof(struct pbd_world), 0);
			assert_int_equal((uintptr_t)&w->exec.share[0] % 64, 0);
			pbd_mesh m;
			tp_grid(&m, 5, 5, 1, pbd_v3(0, 1, 0), 1, false);
			pbd_soft_def sd = pbd_soft_def_default();
			sd.mesh = &m;
			assert_int_equal(pbd_soft_create(w, &sd, NULL), PBD_OK);
			pbd_mesh_free(&m);
			for (int s = 0; s < 3; ++s) assert_int_equal(pbd_world_step(w), PBD_OK);
			assert_true(tp_all_finite(w));
			pbd_world_destroy(w);
			assert_int_equal(t.n, 0);
			assert_int_equal(t.size_mismatch, 0);
			assert_int_equal(t.unknown_free, 0);
			tracker_reset(&t, -1, 0);
		}
	}
}

/* Without arguments: the alignment; with --method NAME, every allocation failure under that
 * method (ctest runs one entry per method, side by side). */
int main(int argc, char** argv) {
	test_enable_fp_traps();
	if (argc == 3 && strcmp(argv[1], "--method") == 0) {
		if (!pbd_method_from_name(argv[2], &run_method)) {
			fprintf(stderr, "test_alloc: --method takes a method's name, not '%s'\n", argv[2]);
			return 2;
		}
		const struct CMUnitTest tests[] = {cmocka_unit_test(test_failures)};
		return cmocka_run_group_tests(tests, NULL, NULL);
	}
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_world_alignment)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
