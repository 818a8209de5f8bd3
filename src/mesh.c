/* Mesh ownership and the triangle-mesh builder: unique-edge extraction and bend edges. */
#include <stdlib.h>
#include <string.h>

#include "mesh.h"

void pbd_mesh_free(pbd_mesh* m) {
	if (!m) return;
	if (m->owned) {
		free(m->positions);
		free(m->velocities);
		free(m->inv_masses);
		free(m->edges);
		free(m->edge_kinds);
		free(m->edge_rest);
		free(m->triangles);
	}
	memset(m, 0, sizeof *m);
}

pbd_status pbd_mesh_alloc(pbd_mesh* m, uint32_t nv, uint32_t ne, uint32_t nt, pbd_error* err) {
	memset(m, 0, sizeof *m);
	m->owned = true;
	m->positions = (pbd_vec3*)calloc(nv ? nv : 1, sizeof *m->positions);
	m->edges = (uint32_t*)calloc(ne ? 2 * (size_t)ne : 1, sizeof *m->edges);
	m->edge_kinds = (uint8_t*)calloc(ne ? ne : 1, sizeof *m->edge_kinds);
	m->triangles = (uint32_t*)calloc(nt ? 3 * (size_t)nt : 1, sizeof *m->triangles);
	if (!m->positions || !m->edges || !m->edge_kinds || !m->triangles) {
		pbd_mesh_free(m);
		return pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "mesh: out of memory");
	}
	m->vertex_count = nv;
	m->edge_count = ne;
	m->triangle_count = nt;
	return PBD_OK;
}

/* An undirected edge as one sortable key, smaller index in the high half. */
static uint64_t edge_key(uint32_t a, uint32_t b) { return a < b ? ((uint64_t)a << 32) | b : ((uint64_t)b << 32) | a; }

typedef struct half_edge {
	uint64_t key;
	uint32_t opposite; /* the triangle's third vertex */
	uint32_t tri;
} half_edge;

static int cmp_half_edge(const void* pa, const void* pb) {
	const half_edge* a = (const half_edge*)pa;
	const half_edge* b = (const half_edge*)pb;
	if (a->key != b->key) return a->key < b->key ? -1 : 1;
	if (a->tri != b->tri) return a->tri < b->tri ? -1 : 1;
	return 0;
}

static int cmp_u64(const void* pa, const void* pb) {
	uint64_t a = *(const uint64_t*)pa, b = *(const uint64_t*)pb;
	return a < b ? -1 : (a > b ? 1 : 0);
}

pbd_status pbd_mesh_from_triangles(uint32_t nv, const pbd_vec3* pos, uint32_t nt, const uint32_t* idx, bool bend,
                                   pbd_mesh* out, pbd_error* err) {
	if (!out) return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "mesh: output is NULL");
	memset(out, 0, sizeof *out);
	if (nv < 3 || nt < 1 || !pos || !idx)
		return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "mesh: needs at least 3 vertices and 1 triangle");
	if (nt > UINT32_MAX / 3) return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "mesh: too many triangles");
	for (uint32_t i = 0; i < nv; ++i)
		if (!pbd_v3_is_finite(pos[i])) return pbd_fail_err(err, PBD_ERR_NOT_FINITE, "mesh: vertex %u is not finite", i);
	for (uint32_t t = 0; t < nt; ++t) {
		const uint32_t* v = idx + 3 * (size_t)t;
		for (int j = 0; j < 3; ++j)
			if (v[j] >= nv)
				return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE,
				                    "mesh: triangle %u: vertex index %u out of range (%u vertices)", t, v[j], nv);
		if (v[0] == v[1] || v[1] == v[2] || v[0] == v[2])
			return pbd_fail_err(err, PBD_ERR_DEGENERATE, "mesh: triangle %u repeats a vertex", t);
		if (pbd_triangle_is_degenerate(pos[v[0]], pos[v[1]], pos[v[2]]))
			return pbd_fail_err(err, PBD_ERR_DEGENERATE, "mesh: triangle %u has zero area", t);
	}

	/* Sort the 3 nt half-edges by vertex pair: equal neighbours are the same edge (O(n log n)). */
	size_t nh = 3 * (size_t)nt;
	half_edge* he = (half_edge*)malloc(nh * sizeof *he);
	if (!he) return pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "mesh: out of memory");
	for (uint32_t t = 0; t < nt; ++t)
		for (int j = 0; j < 3; ++j) {
			const uint32_t* v = idx + 3 * (size_t)t;
			half_edge* h = &he[3 * (size_t)t + (size_t)j];
			h->key = edge_key(v[j], v[(j + 1) % 3]);
			h->opposite = v[(j + 2) % 3];
			h->tri = t;
		}
	qsort(he, nh, sizeof *he, cmp_half_edge);

	size_t n_unique = 0, n_bend = 0;
	for (size_t i = 0; i < nh;) {
		size_t j = i + 1;
		while (j < nh && he[j].key == he[i].key) ++j;
		n_unique++;
		/* Only a manifold interior edge (exactly two triangles) defines a bend pair. */
		if (bend && j - i == 2 && he[i].opposite != he[i + 1].opposite) n_bend++;
		i = j;
	}
	uint64_t* bend_keys = NULL;
	if (n_bend) {
		bend_keys = (uint64_t*)malloc(n_bend * sizeof *bend_keys);
		if (!bend_keys) {
			free(he);
			return pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "mesh: out of memory");
		}
	}
	size_t nb = 0;
	for (size_t i = 0; i < nh;) {
		size_t j = i + 1;
		while (j < nh && he[j].key == he[i].key) ++j;
		if (bend && j - i == 2 && he[i].opposite != he[i + 1].opposite)
			bend_keys[nb++] = edge_key(he[i].opposite, he[i + 1].opposite);
		i = j;
	}
	/* Two quads can share an opposite pair with a structural edge (a 2x1 strip); bend pairs that
	 * repeat or coincide with a structural edge add nothing, so drop them. */
	if (nb) qsort(bend_keys, nb, sizeof *bend_keys, cmp_u64);
	size_t keep = 0;
	for (size_t i = 0; i < nb; ++i) {
		if (i > 0 && bend_keys[i] == bend_keys[i - 1]) continue;
		bool structural = false;
		size_t lo = 0, hi = nh;
		while (lo < hi) { /* binary search in the sorted half-edges */
			size_t mid = lo + (hi - lo) / 2;
			if (he[mid].key < bend_keys[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < nh && he[lo].key == bend_keys[i]) structural = true;
		if (!structural) bend_keys[keep++] = bend_keys[i];
	}
	nb = keep;

	if (n_unique + nb > UINT32_MAX) {
		free(he);
		free(bend_keys);
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "mesh: too many edges");
	}
	pbd_status st = pbd_mesh_alloc(out, nv, (uint32_t)(n_unique + nb), nt, err);
	if (st != PBD_OK) {
		free(he);
		free(bend_keys);
		return st;
	}
	memcpy(out->positions, pos, nv * sizeof *pos);
	memcpy(out->triangles, idx, 3 * (size_t)nt * sizeof *idx);
	size_t e = 0;
	for (size_t i = 0; i < nh;) {
		size_t j = i + 1;
		while (j < nh && he[j].key == he[i].key) ++j;
		out->edges[2 * e] = (uint32_t)(he[i].key >> 32);
		out->edges[2 * e + 1] = (uint32_t)(he[i].key & 0xffffffffu);
		out->edge_kinds[e] = PBD_EDGE_STRUCTURAL;
		e++;
		i = j;
	}
	for (size_t i = 0; i < nb; ++i, ++e) {
		out->edges[2 * e] = (uint32_t)(bend_keys[i] >> 32);
		out->edges[2 * e + 1] = (uint32_t)(bend_keys[i] & 0xffffffffu);
		out->edge_kinds[e] = PBD_EDGE_BEND;
	}
	free(he);
	free(bend_keys);
	return PBD_OK;
}
