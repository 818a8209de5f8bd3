/* SIMD lanes of the cloth families (triangle strains, isometric and dihedral hinges) where they
 * must mask or keep a lane apart: pinned corners, coincident particles, flat, folded and inverted
 * elements, stiffness 0 (a PBD part that is off) and 1, compliance 0, coordinates near 1e4. A
 * cloth is started crumpled and stepped once with PBD_SIMD_SCALAR and once with PBD_SIMD_AVX2
 * under FP traps; the two worlds must end with the same hash. test_simd compares the kernels
 * themselves on scattered states. Skipped where the build or the CPU has no AVX2. */
#include <stdio.h>

#include "core/cpu.h"
#include "test_physics.h"
#include "model/world.h"

typedef struct cloth_case {
	const char* name;
	pbd_formulation formulation;
	pbd_solver solver;
	bool equal; /* Jacobi's equal split */
	pbd_bend_model bend;
	double offset; /* added to every coordinate */
	pbd_real membrane_stiffness, membrane_compliance, bend_stiffness, bend_compliance;
	uint32_t pin_every; /* pin every n-th particle besides two corners; 0: only the corners */
	bool crumple;
} cloth_case;

#define NX 16
#define NY 12

static const cloth_case cases[] = {
    {"isometric, PBD, crumpled", PBD_FORMULATION_PBD, PBD_SOLVER_GAUSS_SEIDEL, false, PBD_BEND_ISOMETRIC, 0, 0.8f, 0,
     0.5f, 0, 7, true},
    {"isometric, XPBD compliance 0, Jacobi", PBD_FORMULATION_XPBD, PBD_SOLVER_JACOBI, false, PBD_BEND_ISOMETRIC, 0, 1,
     0, 1, 0, 5, true},
    {"dihedral, PBD stiffness 1, Jacobi equal", PBD_FORMULATION_PBD, PBD_SOLVER_JACOBI, true, PBD_BEND_DIHEDRAL, 0, 1,
     0, 1, 0, 3, true},
    {"dihedral, XPBD, at 1e4", PBD_FORMULATION_XPBD, PBD_SOLVER_GAUSS_SEIDEL, false, PBD_BEND_DIHEDRAL, 1e4, 1, 1e-6f,
     1, 1e-3f, 0, true},
    {"stiffness 0 (parts off), PBD", PBD_FORMULATION_PBD, PBD_SOLVER_GAUSS_SEIDEL, false, PBD_BEND_DIHEDRAL, 0, 0, 0, 0,
     0, 4, true},
    {"isometric, XPBD, at -1e4, Jacobi", PBD_FORMULATION_XPBD, PBD_SOLVER_JACOBI, false, PBD_BEND_ISOMETRIC, -1e4, 1,
     1e-5f, 1, 1e-2f, 0, true},
    {"smooth drape, XPBD", PBD_FORMULATION_XPBD, PBD_SOLVER_GAUSS_SEIDEL, false, PBD_BEND_ISOMETRIC, 0, 1, 1e-7f, 1,
     1e-4f, 0, false},
};

/* Every seventh particle onto its neighbour (zero-length edges, collapsed triangles), row 4 onto
 * the midline of rows 3 and 5 (flat hinges), row 8 mirrored through row 7 (inverted triangles,
 * hinges folded shut), row 10 pulled 3 m out (stretched far). */
static void crumple(pbd_world* w) {
	pbd_vec3 p[NX * NY];
	assert_int_equal(pbd_world_get_positions(w, 0, NX * NY, p), PBD_OK);
	for (uint32_t i = 0; i < NX; ++i) {
		const pbd_vec3 a = p[3 * NX + i], b = p[5 * NX + i];
		p[4 * NX + i] = pbd_v3_scale(pbd_v3_add(a, b), 0.5f);
		p[8 * NX + i] = pbd_v3_sub(pbd_v3_scale(p[7 * NX + i], 2), p[8 * NX + i]);
		p[10 * NX + i] = pbd_v3_add(p[10 * NX + i], pbd_v3(0.5f, 3, -1));
	}
	for (uint32_t i = 1; i < NX * NY; i += 7) p[i] = p[i - 1];
	assert_int_equal(pbd_world_set_positions(w, 0, NX * NY, p), PBD_OK);
}

static uint64_t run_case(const cloth_case* c, pbd_simd simd) {
	pbd_grid_def gd = pbd_grid_def_default();
	gd.nx = NX;
	gd.ny = NY;
	gd.size_u = 1;
	gd.size_v = 0.8f;
	gd.origin = pbd_v3((pbd_real)(c->offset - 0.5), (pbd_real)(c->offset + 1), (pbd_real)c->offset);
	gd.axis_u = pbd_v3(1, 0, 0);
	gd.axis_v = pbd_v3(0, 0.6f, 0.8f);
	pbd_mesh mesh;
	assert_int_equal(pbd_mesh_grid(&gd, &mesh, NULL), PBD_OK);
	pbd_world_def wd = pbd_world_def_default();
	wd.formulation = c->formulation;
	wd.solver = c->solver;
	wd.simd = simd;
	wd.jacobi_equal_split = c->equal;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&wd, &w), PBD_OK);
	uint32_t pins[NX * NY];
	uint32_t np = 0;
	pins[np++] = 0;
	pins[np++] = NX - 1;
	if (c->pin_every)
		for (uint32_t i = 2; i < NX * NY; i += c->pin_every) pins[np++] = i;
	pbd_soft_def sd = pbd_soft_def_default();
	sd.mesh = &mesh;
	sd.pinned = pins;
	sd.pinned_count = np;
	sd.membrane = PBD_MEMBRANE_TRIANGLES;
	sd.membrane_stiffness = c->membrane_stiffness;
	sd.membrane_compliance = c->membrane_compliance;
	sd.bend = c->bend;
	sd.bend_stiffness = c->bend_stiffness;
	sd.bend_compliance = c->bend_compliance;
	pbd_soft_id id;
	assert_int_equal(pbd_soft_create(w, &sd, &id), PBD_OK);
	pbd_mesh_free(&mesh);
	if (c->crumple) crumple(w);
	for (int k = 0; k < 20; ++k) assert_int_equal(pbd_world_step(w), PBD_OK);
	const uint64_t h = pbd_world_hash(w);
	pbd_world_destroy(w);
	return h;
}

static void test_cloth_lanes_same_hash(void** state) {
	(void)state;
	if (!pbd_cpu_avx2()) {
		printf("skipped: no AVX2 kernels in this build or on this CPU\n");
		skip();
	}
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
		const uint64_t hs = run_case(&cases[i], PBD_SIMD_SCALAR), hv = run_case(&cases[i], PBD_SIMD_AVX2);
		if (hs != hv)
			fail_msg("%s: lanes end at %016llx, scalar at %016llx", cases[i].name, (unsigned long long)hv,
			         (unsigned long long)hs);
	}
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cloth_lanes_same_hash),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
