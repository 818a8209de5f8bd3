/* libFuzzer target: OBJ text from the input bytes, parsed by pbd_mesh_load_obj_memory_groups, the
 * mesh and its groups checked against their documented shape, the mesh turned into a body and
 * stepped in a world on the checking allocator of fuzz_util.h, which must get every byte back.
 * The input's length picks the options (bend edges, mass rule, a pinned vertex), so a seed file
 * and the same file with a comment appended take different paths. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

/* What pbd_mesh_from_triangles promises of a mesh it returns. */
static void check_mesh(const pbd_mesh* m) {
	if (m->vertex_count < 3 || m->triangle_count < 1 || !m->owned) fuzz_fail("mesh too small or not owned");
	for (uint32_t i = 0; i < m->vertex_count; ++i)
		if (!fuzz_v3_finite(m->positions[i])) fuzz_fail("vertex %u not finite", i);
	for (uint32_t t = 0; t < m->triangle_count; ++t) {
		const uint32_t* v = m->triangles + 3 * (size_t)t;
		if (v[0] >= m->vertex_count || v[1] >= m->vertex_count || v[2] >= m->vertex_count)
			fuzz_fail("triangle %u out of range", t);
		if (v[0] == v[1] || v[1] == v[2] || v[0] == v[2]) fuzz_fail("triangle %u repeats a vertex", t);
	}
	for (uint32_t e = 0; e < m->edge_count; ++e) {
		const uint32_t a = m->edges[2 * e], b = m->edges[2 * e + 1];
		if (a >= m->vertex_count || b >= m->vertex_count || a == b) fuzz_fail("edge %u bad (%u, %u)", e, a, b);
		if (m->edge_kinds[e] != PBD_EDGE_STRUCTURAL && m->edge_kinds[e] != PBD_EDGE_BEND)
			fuzz_fail("edge %u of kind %u", e, m->edge_kinds[e]);
		/* The rest length a body will measure. */
		const pbd_vec3 d = pbd_v3_sub(m->positions[a], m->positions[b]);
		if (!isfinite(pbd_v3_length(d))) fuzz_fail("edge %u from %u to %u has no finite length", e, a, b);
	}
}

/* What pbd_obj_groups promises: offsets that rise from 0, and each group's triangles in range
 * and ascending. */
static void check_groups(const pbd_obj_groups* g, uint32_t triangles) {
	if (g->count && (!g->names || !g->first)) fuzz_fail("groups without arrays");
	if (g->first && g->first[0] != 0) fuzz_fail("first group does not start at 0");
	for (uint32_t i = 0; i < g->count; ++i) {
		if (!g->names[i] || !g->names[i][0]) fuzz_fail("group %u has no name", i);
		if (g->first[i + 1] < g->first[i]) fuzz_fail("group %u ends before it starts", i);
		for (uint32_t k = g->first[i]; k < g->first[i + 1]; ++k) {
			if (g->triangles[k] >= triangles) fuzz_fail("group %u names triangle %u", i, g->triangles[k]);
			if (k > g->first[i] && g->triangles[k] <= g->triangles[k - 1]) fuzz_fail("group %u not ascending", i);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
	const bool bend = size & 1;
	pbd_mesh m;
	pbd_obj_groups groups;
	pbd_error err;
	err.message[0] = 0;
	const pbd_status st = pbd_mesh_load_obj_memory_groups((const char*)data, size, "fuzz.obj", bend, &m, &groups, &err);
	if (st != PBD_OK) {
		if (strncmp(err.message, "fuzz.obj", 8) != 0) fuzz_fail("message does not name the input: %s", err.message);
		if (m.positions || m.vertex_count) fuzz_fail("failed load left a mesh behind");
		if (groups.names || groups.count) fuzz_fail("failed load left groups behind");
		return 0;
	}
	check_mesh(&m);
	check_groups(&groups, m.triangle_count);
	pbd_obj_groups_free(&groups);

	pbd_world_def wd = pbd_world_def_default();
	wd.substeps = 2;
	wd.iterations = 4;
	fuzz_heap heap;
	wd.allocator = fuzz_heap_allocator(&heap, FUZZ_HEAP_CAP);
	pbd_world* w = NULL;
	if (pbd_world_create(&wd, &w) != PBD_OK) fuzz_fail("pbd_world_create failed");
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.mass_mode = (pbd_mass_mode)((size >> 1) % 3);
	const uint32_t pinned[1] = {0};
	if ((size >> 3) & 1) {
		bd.pinned = pinned;
		bd.pinned_count = 1;
	}
	pbd_soft_info body;
	pbd_soft_id id;
	if (pbd_soft_create(w, &bd, &id) == PBD_OK && pbd_soft_get_info(w, id, &body) == PBD_OK) {
		if (body.particle_count != m.vertex_count || body.triangle_count != m.triangle_count ||
		    body.distance_count != m.edge_count)
			fuzz_fail("body counts differ from the mesh's");
		for (uint32_t k = 0; k < body.distance_count; ++k) {
			pbd_distance_def d;
			if (pbd_world_get_distance(w, body.first_distance + k, &d) != PBD_OK || !isfinite(d.rest) || d.rest < 0)
				fuzz_fail("constraint %u has no finite rest length", k);
		}
		fuzz_step_checked(w, 4, &heap);
	} else if (pbd_world_particle_count(w) != 0) {
		fuzz_fail("refused body left particles behind: %s", pbd_world_last_error(w));
	}
	pbd_world_destroy(w);
	fuzz_heap_check_empty(&heap, "a destroyed world");
	pbd_mesh_free(&m);
	return 0;
}
