/* The hinges of a triangle mesh for the bending constraints, from the same sorted half-edges that
 * give pbd_mesh_build its edges and bend edges. */
#include <stdlib.h>

#include "mesh/mesh.h"

/* Whether the edge's run of half-edges [i, j) makes a hinge: exactly two triangles with
 * different third vertices (the rule of pbd_mesh_build's bend edges). */
static bool is_hinge(const pbd_half_edge* he, size_t i, size_t j) {
	return j - i == 2 && he[i].opposite != he[i + 1].opposite;
}

pbd_status pbd_mesh_hinges(const pbd_mesh* m, uint32_t* out4, uint32_t capacity, uint32_t* count, uint32_t* skipped,
                           pbd_error* err) {
	const char* fn = "pbd_mesh_hinges";
	if (count) *count = 0;
	if (skipped) *skipped = 0;
	if (!m) return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "%s: mesh is NULL", fn);
	if (!count) return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "%s: count is NULL", fn);
	const uint32_t nt = m->triangle_count, nv = m->vertex_count;
	if (nt == 0) return PBD_OK;
	if (!m->triangles) return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "%s: triangles is NULL", fn);
	if (nt > UINT32_MAX / 3) return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "%s: too many triangles", fn);
	for (uint32_t t = 0; t < nt; ++t) {
		const uint32_t* v = m->triangles + 3 * (size_t)t;
		for (int j = 0; j < 3; ++j)
			if (v[j] >= nv)
				return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE,
				                    "%s: triangle %u: vertex index %u out of range (%u vertices)", fn, t, v[j], nv);
		if (v[0] == v[1] || v[1] == v[2] || v[0] == v[2])
			return pbd_fail_err(err, PBD_ERR_DEGENERATE, "%s: triangle %u repeats a vertex", fn, t);
	}
	pbd_half_edge* he = pbd_mesh_half_edges(nt, m->triangles);
	if (!he) return pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);

	const size_t nh = 3 * (size_t)nt;
	uint32_t n = 0, bad = 0;
	for (size_t i = 0; i < nh;) {
		size_t j = i + 1;
		while (j < nh && he[j].key == he[i].key) ++j;
		if (is_hinge(he, i, j))
			n++;
		else if (j - i >= 2)
			bad++;
		i = j;
	}
	*count = n;
	if (skipped) *skipped = bad;
	if (out4 && capacity < n) {
		free(he);
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "%s: the mesh has %u hinges, room for %u", fn, n, capacity);
	}
	if (out4) {
		uint32_t h = 0;
		for (size_t i = 0; i < nh;) {
			size_t j = i + 1;
			while (j < nh && he[j].key == he[i].key) ++j;
			if (is_hinge(he, i, j)) {
				/* The first triangle rotated to (x0, x1, x2) with x2 its third vertex keeps its
				 * orientation; x3 comes from the other triangle whichever its orientation. */
				const uint32_t* v = m->triangles + 3 * (size_t)he[i].tri;
				const int k = v[0] == he[i].opposite ? 0 : v[1] == he[i].opposite ? 1 : 2;
				uint32_t* o = out4 + 4 * (size_t)h++;
				o[0] = v[(k + 1) % 3];
				o[1] = v[(k + 2) % 3];
				o[2] = he[i].opposite;
				o[3] = he[i + 1].opposite;
			}
			i = j;
		}
	}
	free(he);
	return PBD_OK;
}
