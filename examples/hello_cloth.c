/* hello_cloth: a 32 x 32 cloth pinned at two corners falls onto a sphere.
 * Shows the smallest complete use of the library: a world, a grid mesh turned into a body,
 * a collider, a step loop and the diagnostics. Prints one line per simulated second. */
#include <stdio.h>

#include "pbd/pbd.h"

int main(void) {
	pbd_world_def wd = pbd_world_def_default();
	wd.formulation = PBD_FORMULATION_XPBD;
	wd.substeps = 4;
	wd.iterations = 5;
	pbd_world* world = NULL;
	if (pbd_world_create(&wd, &world) != PBD_OK) return 1;

	pbd_grid_def gd = pbd_grid_def_default();
	gd.nx = gd.ny = 32;
	gd.origin = (pbd_vec3){-0.5f, 1.0f, -0.5f};
	gd.bend = true;
	pbd_mesh mesh;
	pbd_error err;
	if (pbd_mesh_grid(&gd, &mesh, &err) != PBD_OK) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}

	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &mesh;
	bd.mass_mode = PBD_MASS_TOTAL;
	bd.mass = 0.2f;                                        /* kg for the whole cloth */
	bd.material[PBD_EDGE_BEND].compliance_stretch = 1e-3f; /* soft folding */
	bd.material[PBD_EDGE_BEND].compliance_compress = 1e-3f;
	const uint32_t pinned[2] = {0, gd.nx - 1}; /* the two corners of the first row */
	bd.pinned = pinned;
	bd.pinned_count = 2;
	pbd_soft_info cloth;
	pbd_soft_id cloth_id;
	if (pbd_soft_create(world, &bd, &cloth_id) != PBD_OK || pbd_soft_get_info(world, cloth_id, &cloth) != PBD_OK) {
		fprintf(stderr, "%s\n", pbd_world_last_error(world));
		return 1;
	}
	pbd_mesh_free(&mesh);

	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_SPHERE;
	cd.shape.sphere.center = (pbd_vec3){0.0f, 0.6f, -0.3f};
	cd.shape.sphere.radius = 0.2f;
	cd.margin = 0.005f;
	pbd_collider_create(world, &cd);

	for (int frame = 1; frame <= 180; ++frame) {
		pbd_world_step(world);
		if (frame % 60 == 0) {
			pbd_stats s;
			pbd_world_get_stats(world, &s);
			printf("t = %.1f s  max strain %.4f  contacts %u  kinetic energy %.5f J\n", s.time, s.max_strain,
			       s.contacts, s.kinetic_energy);
		}
	}
	pbd_world_destroy(world);
	return 0;
}
