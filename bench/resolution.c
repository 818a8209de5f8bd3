/* Resolution study: does the same cloth hang the same at every mesh resolution? Seed 002 says a
 * PBD stiffness does not: the same k on more, shorter edges in series makes a softer sheet. A
 * physical material mapped to compliances (XPBD) should not depend on the mesh. The hanging
 * cloth (1 m, N x N, two top corners pinned, structural + shear, 0.2 kg/m^2) settles for 3 s under
 * damping; the table gives the sag of the bottom edge's middle below the pins and the mean
 * structural strain, per N and method. */
#define _POSIX_C_SOURCE 200809L

#include "resolution.h"

#include "cloth.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "pbd/pbd.h"

#define RES_STEPS 180 /* 3 s at 60 Hz */

typedef struct res_method {
	const char* name;
	const char* what;
	pbd_formulation formulation;
	int substeps, iterations;
	bool material; /* the physical material (else PBD stiffness RES_PBD_STIFFNESS on every edge) */
} res_method;

#define RES_PBD_STIFFNESS ((pbd_real)0.5)

static const res_method methods[] = {
    {"pbd-k0.5", "PBD stiffness 0.5 on every edge, 10 iterations, 1 substep", PBD_FORMULATION_PBD, 1, 10, false},
    {"pbd-mat", "PBD, stiffness from the rubber material's compliance, 20 substeps x 2 iterations", PBD_FORMULATION_PBD,
     20, 2, true},
    {"xpbd-mat", "XPBD, compliance from the rubber material, 20 substeps x 2 iterations", PBD_FORMULATION_XPBD, 20, 2,
     true},
    {"xpbd-mat+", "XPBD, compliance from the rubber material, 100 substeps x 2 iterations (closer to converged)",
     PBD_FORMULATION_XPBD, 100, 2, true},
};

typedef struct res_result {
	bool ok;
	double sag, strain, ms;
	bool diverged;
} res_result;

static res_result run(uint32_t n, const res_method* m, const pbd_cloth_material* cloth) {
	res_result r;
	memset(&r, 0, sizeof r);
	pbd_world_def d = pbd_world_def_default();
	d.formulation = m->formulation;
	d.substeps = m->substeps;
	d.iterations = m->iterations;
	d.damping = (pbd_real)0.95;
	d.diagnostics = false;
	d.log = bench_quiet;
	pbd_world* w = NULL;
	if (pbd_world_create(&d, &w) != PBD_OK) return r;
	pbd_grid_def g = bench_cloth_grid_def(n);
	g.axis_v = (pbd_vec3){0, -1, 0};
	pbd_mesh mesh;
	pbd_error err;
	if (pbd_mesh_grid(&g, &mesh, &err) != PBD_OK) {
		pbd_world_destroy(w);
		return r;
	}
	pbd_soft_def sd = pbd_soft_def_default();
	sd.mesh = &mesh;
	sd.mass_mode = PBD_MASS_DENSITY;
	sd.mass = cloth->density;
	sd.material[PBD_EDGE_BEND].enabled = false;
	if (m->material) {
		sd.cloth = cloth;
	} else {
		for (int k = 0; k < PBD_EDGE_KIND_COUNT; ++k) {
			sd.material[k].stiffness_stretch = RES_PBD_STIFFNESS;
			sd.material[k].stiffness_compress = RES_PBD_STIFFNESS;
		}
	}
	const uint32_t pins[2] = {0, n - 1};
	sd.pinned = pins;
	sd.pinned_count = 2;
	const pbd_status st = pbd_soft_create(w, &sd, NULL);
	pbd_mesh_free(&mesh);
	if (st != PBD_OK) {
		pbd_world_destroy(w);
		return r;
	}
	const double t0 = bench_now_ms();
	for (int i = 0; i < RES_STEPS; ++i) pbd_world_step(w);
	r.ms = (bench_now_ms() - t0) / RES_STEPS;
	pbd_stats s;
	pbd_world_get_stats(w, &s);
	const pbd_vec3* x = pbd_world_positions(w);
	/* The bottom edge's middle: the mean of its one or two middle vertices. */
	const uint32_t row = (n - 1) * n;
	const double y = 0.5 * ((double)x[row + (n - 1) / 2].y + (double)x[row + n / 2].y);
	r.sag = -y;
	r.strain = s.edge_mean_strain[PBD_EDGE_STRUCTURAL];
	r.diverged = pbd_world_get_warning(w, PBD_WARN_DIVERGED).count > 0 || !isfinite(y);
	r.ok = true;
	pbd_world_destroy(w);
	return r;
}

int bench_resolution(const uint32_t* sizes, int size_count, FILE* csv) {
	pbd_cloth_material cloth;
	pbd_error err;
	if (pbd_cloth_material_preset("rubber", &cloth, &err) != PBD_OK) {
		fprintf(stderr, "pbd bench: %s\n", err.message);
		return -1;
	}
	printf("\nresolution: the hanging cloth (1 m, N x N, two top corners pinned, structural + shear, %.3g kg/m^2, "
	       "damping 0.95)\nafter 3 s: sag of the bottom edge's middle below the pins (m; 1 m = unstretched) and mean "
	       "structural strain\n\n",
	       (double)cloth.density);
	for (size_t i = 0; i < sizeof methods / sizeof methods[0]; ++i)
		printf("  %-10s %s\n", methods[i].name, methods[i].what);
	printf("\n%5s  %-9s %10s %12s %10s  %s\n", "N", "method", "sag m", "strain %", "ms/step", "status");
	if (csv) fputs("n,method,sag_m,mean_structural_strain,ms_per_step,status\n", csv);
	for (int si = 0; si < size_count; ++si) {
		for (size_t mi = 0; mi < sizeof methods / sizeof methods[0]; ++mi) {
			const res_result r = run(sizes[si], &methods[mi], &cloth);
			const char* status = !r.ok ? "failed" : r.diverged ? "diverged" : "ok";
			printf("%5u  %-10s %10.4f %12.3f %10.2f  %s\n", sizes[si], methods[mi].name, r.sag, 100 * r.strain, r.ms,
			       status);
			fflush(stdout);
			if (csv)
				fprintf(csv, "%u,%s,%.6f,%.6g,%.3f,%s\n", sizes[si], methods[mi].name, r.sag, r.strain, r.ms, status);
		}
	}
	return 0;
}
