/* SIMD lanes across edits of a world between its steps. The vector kernels read the distance
 * family's copy of its records (pbd_family.lanes), which must follow every change of the records
 * and of their storage: bodies from every builder (tet ball, tet box, cloth, rope), a body that
 * brings particles but no constraint (its edges reserved, none added), a body whose creation
 * fails at each of its allocations in turn (constraints added, then taken back), new materials
 * and iteration counts, pins and masses. Sequences of 4 such edits in every order, each edit
 * followed by a step or not (the last by two), run on worlds that differ only in their kernels
 * (scalar, AVX2 and AVX-512 where the CPU has them) under Gauss-Seidel with PBD and Jacobi with
 * XPBD; after every step the worlds must hold the same positions and velocities, bit for bit.
 * Debug builds also check the copy against the records before every step (lanes_agree, family.h).
 * Skipped, with the reason printed, where the build or the CPU has no AVX2. */
#include <stdio.h>
#include <stdlib.h>

#include "core/cpu.h"
#include "test_physics.h"

/* An allocator that refuses one allocation on request, to fail a creation part way. */
typedef struct failing_mem {
	long countdown; /* allocations left before the refused one; negative: none refused */
} failing_mem;

static bool refuse(failing_mem* m) {
	if (m->countdown < 0) return false;
	if (m->countdown-- > 0) return false;
	m->countdown = -1;
	return true;
}
static void* fm_alloc(size_t size, void* user) { return refuse((failing_mem*)user) ? NULL : malloc(size); }
static void* fm_realloc(void* ptr, size_t old_size, size_t new_size, void* user) {
	(void)old_size;
	return refuse((failing_mem*)user) ? NULL : realloc(ptr, new_size);
}
static void fm_free(void* ptr, size_t size, void* user) {
	(void)size;
	(void)user;
	free(ptr);
}

enum { MAX_KERNELS = 3 };

/* One world per kernel, all given the same edits. */
typedef struct worlds {
	int n;
	pbd_world* w[MAX_KERNELS];
	failing_mem mem[MAX_KERNELS];
	const char* kernel[MAX_KERNELS];
} worlds;

/* The bodies' meshes, built once. */
typedef struct meshes {
	pbd_mesh ball, box, cloth, rope;
} meshes;

typedef enum edit {
	EDIT_BALL,     /* a tetrahedral ball with volume constraints, hung from one vertex */
	EDIT_BOX,      /* a tetrahedral box with Neo-Hookean elements, hung from an edge */
	EDIT_CLOTH,    /* a cloth with dihedral hinges and long-range attachments */
	EDIT_ROPE,     /* a rope with bend links */
	EDIT_POINTS,   /* the box's vertices alone: edge materials off, no tetrahedra */
	EDIT_FAILED,   /* the box with volumes, created through a refusal of each of its allocations in turn */
	EDIT_MATERIAL, /* new materials on part of the distances and volumes, another iteration count */
	EDIT_PINS,     /* a pin, an unpin and a new mass */
	EDIT_COUNT
} edit;

static const char* const edit_names[EDIT_COUNT] = {"tet ball", "tet box",    "cloth",    "rope",
                                                   "points",   "failed box", "material", "pins"};

typedef struct solver_case {
	pbd_solver solver;
	pbd_formulation formulation;
	const char* name;
} solver_case;

static const solver_case solver_cases[] = {
    {PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_PBD, "Gauss-Seidel PBD"},
    {PBD_SOLVER_JACOBI, PBD_FORMULATION_XPBD, "Jacobi XPBD"},
};

static bool have_avx2(void) {
	if (pbd_cpu_avx2()) return true;
	printf("skipped: %s\n", pbd_simd_built() ? "this CPU has no AVX2 and FMA" : "this build has no AVX2 kernels");
	return false;
}

static void worlds_create(worlds* ws, const solver_case* sc) {
	static const pbd_simd kernels[MAX_KERNELS] = {PBD_SIMD_SCALAR, PBD_SIMD_AVX2, PBD_SIMD_AVX512};
	static const char* const names[MAX_KERNELS] = {"scalar", "AVX2", "AVX-512"};
	ws->n = pbd_cpu_avx512() ? 3 : 2;
	for (int k = 0; k < ws->n; ++k) {
		pbd_world_def def = pbd_world_def_default();
		def.solver = sc->solver;
		def.formulation = sc->formulation;
		def.substeps = 1;
		def.iterations = 2;
		def.diagnostics = false;
		def.divergence_strain = 0;
		def.simd = kernels[k];
		ws->mem[k].countdown = -1;
		def.allocator = (pbd_allocator){fm_alloc, fm_realloc, fm_free, &ws->mem[k]};
		/* refused allocations are reported; the creation's status is what is checked */
		def.log = NULL;
		ws->w[k] = NULL;
		assert_int_equal(pbd_world_create(&def, &ws->w[k]), PBD_OK);
		ws->kernel[k] = names[k];
	}
}

static void worlds_destroy(worlds* ws) {
	for (int k = 0; k < ws->n; ++k) pbd_world_destroy(ws->w[k]);
}

/* Steps every world and compares each with the scalar one. */
static void worlds_step(worlds* ws, const char* what, int step) {
	for (int k = 0; k < ws->n; ++k) assert_int_equal(pbd_world_step(ws->w[k]), PBD_OK);
	const uint32_t np = pbd_world_particle_count(ws->w[0]);
	const pbd_vec3* x0 = pbd_world_positions(ws->w[0]);
	const pbd_vec3* v0 = pbd_world_velocities(ws->w[0]);
	for (int k = 1; k < ws->n; ++k) {
		assert_int_equal(pbd_world_particle_count(ws->w[k]), np);
		const pbd_vec3* x = pbd_world_positions(ws->w[k]);
		const pbd_vec3* v = pbd_world_velocities(ws->w[k]);
		for (uint32_t i = 0; i < np; ++i)
			if (memcmp(&x[i], &x0[i], sizeof x[i]) || memcmp(&v[i], &v0[i], sizeof v[i]))
				fail_msg("%s, step %d: %s particle %u at %.9g %.9g %.9g moving %.9g %.9g %.9g, scalar at %.9g %.9g "
				         "%.9g moving %.9g %.9g %.9g",
				         what, step, ws->kernel[k], i, (double)x[i].x, (double)x[i].y, (double)x[i].z, (double)v[i].x,
				         (double)v[i].y, (double)v[i].z, (double)x0[i].x, (double)x0[i].y, (double)x0[i].z,
				         (double)v0[i].x, (double)v0[i].y, (double)v0[i].z);
	}
}

/* A body from `mesh` at `at`. The edge kinds get different stiffnesses and compliances, and
 * stretch differs from compression, so that the lanes' s0 and s1 vary from batch to batch. */
static pbd_soft_def body_def(const pbd_mesh* mesh, pbd_vec3 at, const uint32_t* pins, uint32_t pin_count) {
	pbd_soft_def d = pbd_soft_def_default();
	d.mesh = mesh;
	d.translation = at;
	d.mass_mode = PBD_MASS_TOTAL;
	d.mass = (pbd_real)0.5;
	d.pinned = pins;
	d.pinned_count = pin_count;
	d.material[PBD_EDGE_STRUCTURAL].stiffness_compress = (pbd_real)0.6;
	d.material[PBD_EDGE_STRUCTURAL].compliance_stretch = (pbd_real)1e-6;
	d.material[PBD_EDGE_SHEAR].stiffness_stretch = (pbd_real)0.8;
	d.material[PBD_EDGE_SHEAR].compliance_stretch = (pbd_real)1e-5;
	d.material[PBD_EDGE_BEND].stiffness_stretch = (pbd_real)0.3;
	d.material[PBD_EDGE_BEND].stiffness_compress = (pbd_real)0.3;
	d.material[PBD_EDGE_BEND].compliance_stretch = (pbd_real)1e-3;
	d.material[PBD_EDGE_BEND].compliance_compress = (pbd_real)1e-3;
	d.tet_stiffness = (pbd_real)0.9;
	d.tet_compliance = (pbd_real)1e-7;
	return d;
}

static void create_all(worlds* ws, const pbd_soft_def* d) {
	for (int k = 0; k < ws->n; ++k)
		if (pbd_soft_create(ws->w[k], d, NULL) != PBD_OK)
			fail_msg("%s world: %s", ws->kernel[k], pbd_world_last_error(ws->w[k]));
}

/* Refuses allocation 0, 1, 2, ... of the creation until it succeeds. A refused creation leaves
 * the counts as they were; the worlds must refuse at the same places. */
static void create_failing(worlds* ws, const pbd_soft_def* d) {
	for (long at = 0;; ++at) {
		assert_true(at < 1000);
		pbd_status scalar = PBD_OK;
		for (int k = 0; k < ws->n; ++k) {
			pbd_world* w = ws->w[k];
			const uint32_t np = pbd_world_particle_count(w), nd = pbd_world_distance_count(w);
			const uint32_t nv = pbd_world_tet_volume_count(w), ns = pbd_world_soft_count(w);
			ws->mem[k].countdown = at;
			const pbd_status st = pbd_soft_create(w, d, NULL);
			ws->mem[k].countdown = -1;
			if (st != PBD_OK) {
				assert_int_equal(st, PBD_ERR_OUT_OF_MEMORY);
				assert_int_equal(pbd_world_particle_count(w), np);
				assert_int_equal(pbd_world_distance_count(w), nd);
				assert_int_equal(pbd_world_tet_volume_count(w), nv);
				assert_int_equal(pbd_world_soft_count(w), ns);
			}
			if (k == 0) scalar = st;
			assert_int_equal(st, scalar);
		}
		if (scalar == PBD_OK) return;
	}
}

static void apply(worlds* ws, const meshes* m, edit e) {
	static const uint32_t ball_pin[1] = {0}, box_pins[2] = {0, 1}, rope_pin[1] = {0};
	pbd_soft_def d;
	switch (e) {
	case EDIT_BALL:
		d = body_def(&m->ball, pbd_v3(0, 2, 0), ball_pin, 1);
		d.tets = PBD_TET_VOLUME;
		create_all(ws, &d);
		return;
	case EDIT_BOX:
		d = body_def(&m->box, pbd_v3(1, 2, 0), box_pins, 2);
		d.tets = PBD_TET_NEOHOOKEAN;
		d.tet_youngs_modulus = (pbd_real)2e4;
		create_all(ws, &d);
		return;
	case EDIT_CLOTH: {
		const uint32_t pins[2] = {0, m->cloth.vertex_count - 1};
		d = body_def(&m->cloth, pbd_v3(-1, 2, 0), pins, 2);
		d.bend = PBD_BEND_DIHEDRAL;
		d.bend_stiffness = (pbd_real)0.5;
		d.bend_compliance = (pbd_real)1e-2;
		d.long_range = true;
		create_all(ws, &d);
		return;
	}
	case EDIT_ROPE:
		d = body_def(&m->rope, pbd_v3(0, 3, 1), rope_pin, 1);
		create_all(ws, &d);
		return;
	case EDIT_POINTS:
		d = body_def(&m->box, pbd_v3(2, 1, 0), NULL, 0);
		for (int k = 0; k < PBD_EDGE_KIND_COUNT; ++k) d.material[k].enabled = false;
		create_all(ws, &d);
		return;
	case EDIT_FAILED:
		d = body_def(&m->box, pbd_v3(-2, 2, 1), box_pins, 2);
		d.tets = PBD_TET_VOLUME;
		create_failing(ws, &d);
		return;
	case EDIT_MATERIAL:
		for (int k = 0; k < ws->n; ++k) {
			pbd_world* w = ws->w[k];
			const uint32_t nd = pbd_world_distance_count(w), nv = pbd_world_tet_volume_count(w);
			const pbd_edge_material em = {true, (pbd_real)0.7, (pbd_real)0.9, (pbd_real)1e-4, (pbd_real)1e-3};
			if (nd) assert_int_equal(pbd_world_set_distance_material(w, nd / 4, nd / 2, &em), PBD_OK);
			if (nv)
				assert_int_equal(pbd_world_set_tet_volume_material(w, 0, nv / 3, (pbd_real)0.5, (pbd_real)1e-6),
				                 PBD_OK);
			/* the PBD stiffness per iteration changes alone */
			assert_int_equal(pbd_world_set_iterations(w, pbd_world_get_def(w).iterations == 2 ? 3 : 2), PBD_OK);
		}
		return;
	case EDIT_PINS:
		for (int k = 0; k < ws->n; ++k) {
			pbd_world* w = ws->w[k];
			const uint32_t np = pbd_world_particle_count(w);
			if (!np) continue;
			assert_int_equal(pbd_particle_pin(w, np / 2), PBD_OK);
			assert_int_equal(pbd_particle_unpin(w, 0), PBD_OK);
			if (!pbd_particle_is_pinned(w, np / 3))
				assert_int_equal(pbd_particle_set_inv_mass(w, np / 3, (pbd_real)0.25), PBD_OK);
		}
		return;
	case EDIT_COUNT:
		break;
	}
	fail_msg("unknown edit %d", (int)e);
}

/* Runs `edits` in order, edit i followed by a step where bit i of `steps` is set, the last one by
 * two steps, comparing the worlds after each step. */
static void run_sequence(const meshes* m, const solver_case* sc, const edit* edits, int count, unsigned steps) {
	char what[256];
	int len = snprintf(what, sizeof what, "%s:", sc->name);
	for (int i = 0; i < count && len < (int)sizeof what; ++i)
		len += snprintf(what + len, sizeof what - (size_t)len, " %s%s", edit_names[edits[i]],
		                i + 1 < count && steps >> i & 1u ? ", step;" : ";");
	worlds ws;
	worlds_create(&ws, sc);
	int step = 0;
	for (int i = 0; i < count; ++i) {
		apply(&ws, m, edits[i]);
		if (i + 1 < count && steps >> i & 1u) worlds_step(&ws, what, step++);
	}
	for (int i = 0; i < 2; ++i) worlds_step(&ws, what, step++);
	worlds_destroy(&ws);
}

static int meshes_setup(void** state) {
	meshes* m = calloc(1, sizeof *m);
	if (!m) return -1;
	pbd_error err;
	pbd_tet_sphere_def sd = pbd_tet_sphere_def_default();
	sd.radius = (pbd_real)0.3;
	sd.subdivisions = 2;
	pbd_tet_box_def bd = pbd_tet_box_def_default();
	bd.nx = 3;
	bd.ny = 2;
	bd.nz = 2;
	bd.size = pbd_v3((pbd_real)0.6, (pbd_real)0.3, (pbd_real)0.3);
	pbd_rope_def rd = pbd_rope_def_default();
	rd.segments = 30;
	rd.start = pbd_v3(0, 0, 0);
	rd.end = pbd_v3((pbd_real)1.2, (pbd_real)0.4, 0);
	rd.bend = true;
	pbd_grid_def gd = pbd_grid_def_default();
	gd.nx = 8;
	gd.ny = 8;
	gd.size_u = 1;
	gd.size_v = 1;
	gd.diagonals = 2;
	if (pbd_mesh_tet_sphere(&sd, &m->ball, &err) != PBD_OK || pbd_mesh_tet_box(&bd, &m->box, &err) != PBD_OK ||
	    pbd_mesh_rope(&rd, &m->rope, &err) != PBD_OK || pbd_mesh_grid(&gd, &m->cloth, &err) != PBD_OK)
		return -1;
	*state = m;
	return 0;
}

static int meshes_teardown(void** state) {
	meshes* m = (meshes*)*state;
	pbd_mesh_free(&m->ball);
	pbd_mesh_free(&m->box);
	pbd_mesh_free(&m->rope);
	pbd_mesh_free(&m->cloth);
	free(m);
	return 0;
}

/* The case that read past the particle arrays: a tet ball, then a tet box, then the first step;
 * and the other way round. */
static void test_ball_then_box_before_first_step(void** state) {
	if (!have_avx2()) skip();
	const meshes* m = (const meshes*)*state;
	const edit edits[2] = {EDIT_BALL, EDIT_BOX}, reversed[2] = {EDIT_BOX, EDIT_BALL};
	for (size_t s = 0; s < sizeof solver_cases / sizeof solver_cases[0]; ++s) {
		run_sequence(m, &solver_cases[s], edits, 2, 0u);
		run_sequence(m, &solver_cases[s], reversed, 2, 0u);
	}
}

/* Every order of the 4 edits of `set`, each but the last followed by a step or not (the last is
 * followed by steps in any case), after the edits of `prelude`, each followed by a step. The
 * solvers take turns, so that each order and each choice of steps meets both. */
static void run_permutations(const meshes* m, const edit* prelude, int prelude_count, const edit set[4]) {
	edit edits[8];
	assert_true(prelude_count <= 4);
	for (int i = 0; i < prelude_count; ++i) edits[i] = prelude[i];
	int idx[4] = {0, 1, 2, 3};
	for (;;) {
		for (int i = 0; i < 4; ++i) edits[prelude_count + i] = set[idx[i]];
		const unsigned all = (1u << prelude_count) - 1u;
		for (unsigned steps = 0; steps < 8; ++steps)
			run_sequence(m, &solver_cases[(steps ^ steps >> 1 ^ steps >> 2) & 1u], edits, prelude_count + 4,
			             all | steps << prelude_count);
		/* the next permutation in lexicographic order */
		int i = 2;
		while (i >= 0 && idx[i] > idx[i + 1]) --i;
		if (i < 0) return;
		int j = 3;
		while (idx[j] < idx[i]) --j;
		int t = idx[i];
		idx[i] = idx[j];
		idx[j] = t;
		for (int a = i + 1, b = 3; a < b; ++a, --b) {
			t = idx[a];
			idx[a] = idx[b];
			idx[b] = t;
		}
	}
}

/* The builders in every order. */
static void test_bodies_in_every_order(void** state) {
	if (!have_avx2()) skip();
	const edit set[4] = {EDIT_BALL, EDIT_BOX, EDIT_CLOTH, EDIT_ROPE};
	run_permutations((const meshes*)*state, NULL, 0, set);
}

/* After a rope has stepped: a body without constraints (whose reserve moves the distances'
 * storage), a body whose creation fails part way (its constraints taken back), materials and
 * pins, in every order. */
static void test_reserve_failure_materials_pins(void** state) {
	if (!have_avx2()) skip();
	const edit prelude[1] = {EDIT_ROPE};
	const edit set[4] = {EDIT_POINTS, EDIT_FAILED, EDIT_MATERIAL, EDIT_PINS};
	run_permutations((const meshes*)*state, prelude, 1, set);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ball_then_box_before_first_step),
	    cmocka_unit_test(test_bodies_in_every_order),
	    cmocka_unit_test(test_reserve_failure_materials_pins),
	};
	return cmocka_run_group_tests(tests, meshes_setup, meshes_teardown);
}
