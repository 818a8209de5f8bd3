/* save_resume: run a rope for a while, save the world to a snapshot, keep stepping, then load
 * the snapshot into a second world and step it as often. The two end bit-identical, which is
 * what makes a long run resumable after a stop. Also shows reading the divergence counter. */
#include <stdio.h>

#include "pbd/pbd.h"

static int step_n(pbd_world* w, int n) {
	for (int i = 0; i < n; ++i)
		if (pbd_world_step(w) != PBD_OK) return 1;
	return 0;
}

int main(void) {
	pbd_world_def wd = pbd_world_def_default();
	wd.formulation = PBD_FORMULATION_XPBD;
	wd.substeps = 8;
	wd.iterations = 2;
	pbd_world* a = NULL;
	if (pbd_world_create(&wd, &a) != PBD_OK) return 1;

	pbd_rope_def rd = pbd_rope_def_default();
	rd.segments = 20;
	rd.start = (pbd_vec3){0, 2, 0};
	rd.end = (pbd_vec3){2, 2, 0};
	pbd_mesh mesh;
	pbd_error err;
	if (pbd_mesh_rope(&rd, &mesh, &err) != PBD_OK) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &mesh;
	const uint32_t pin = 0;
	bd.pinned = &pin;
	bd.pinned_count = 1;
	const pbd_status st = pbd_soft_create(a, &bd, NULL);
	pbd_mesh_free(&mesh);
	if (st != PBD_OK) return 1;

	const char* path = "save_resume.pbds";
	if (step_n(a, 60) || pbd_world_save(a, path) != PBD_OK) {
		fprintf(stderr, "%s\n", pbd_world_last_error(a));
		return 1;
	}
	pbd_world* b = NULL;
	if (pbd_world_load(path, NULL, &b, &err) != PBD_OK) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	remove(path);
	if (step_n(a, 120) || step_n(b, 120)) return 1;

	const bool same = pbd_world_hash(a) == pbd_world_hash(b);
	const pbd_vec3 tip = pbd_world_positions(b)[20];
	printf("after 3 s: tip at (%.4f, %.4f, %.4f); resumed world %s the uninterrupted one; diverged steps %llu\n",
	       (double)tip.x, (double)tip.y, (double)tip.z, same ? "is bit-identical to" : "DIFFERS from",
	       (unsigned long long)pbd_world_get_warning(b, PBD_WARN_DIVERGED).count);
	pbd_world_destroy(a);
	pbd_world_destroy(b);
	return same ? 0 : 1;
}
