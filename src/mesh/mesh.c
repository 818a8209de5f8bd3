/* Mesh ownership and the triangle-mesh builder: unique-edge extraction and bend edges. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "mesh/mesh.h"

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
		free(m->tets);
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

bool pbd_length_fits(pbd_vec3 a, pbd_vec3 b) {
	/* Halves first: their difference cannot overflow, not even in double builds. */
	const double d[3] = {0.5 * (double)a.x - 0.5 * (double)b.x, 0.5 * (double)a.y - 0.5 * (double)b.y,
	                     0.5 * (double)a.z - 0.5 * (double)b.z};
	double m = 0;
	for (int k = 0; k < 3; ++k) {
		if (!(fabs(d[k]) <= DBL_MAX)) return false;
		if (fabs(d[k]) > m) m = fabs(d[k]);
	}
	if (m == 0) return true;
	double s = 0; /* in [1, 3]: the squares of the components scaled by the largest */
	for (int k = 0; k < 3; ++k) s += (d[k] / m) * (d[k] / m);
	/* |b - a|^2 = 4 m^2 s is kept below half the scalar's maximum, so that the rounding of the
	 * dot product inside pbd_v3_length cannot carry it to infinity. */
	return m <= sqrt((double)PBD_REAL_MAX / (8.0 * s));
}

pbd_status pbd_mesh_check_lengths(const pbd_mesh* m, const char* fn, pbd_error* err) {
	for (uint32_t i = 0; i < m->vertex_count; ++i)
		if (!pbd_v3_is_finite(m->positions[i]))
			return pbd_fail_err(err, PBD_ERR_NOT_FINITE, "%s: vertex %u is not finite (the sizes overflow the scalar)",
			                    fn, i);
	for (uint32_t e = 0; e < m->edge_count; ++e) {
		const uint32_t a = m->edges[2 * e], b = m->edges[2 * e + 1];
		if (!pbd_length_fits(m->positions[a], m->positions[b]))
			return pbd_fail_err(err, PBD_ERR_NOT_FINITE,
			                    "%s: edge %u from vertex %u to %u is too long: its rest length overflows the scalar",
			                    fn, e, a, b);
	}
	return PBD_OK;
}

/* An undirected edge as one sortable key, smaller index in the high half. */
static uint64_t edge_key(uint32_t a, uint32_t b) { return a < b ? ((uint64_t)a << 32) | b : ((uint64_t)b << 32) | a; }

typedef pbd_half_edge half_edge;

static int cmp_half_edge(const void* pa, const void* pb) {
	const half_edge* a = (const half_edge*)pa;
	const half_edge* b = (const half_edge*)pb;
	if (a->key != b->key) return a->key < b->key ? -1 : 1;
	if (a->tri != b->tri) return a->tri < b->tri ? -1 : 1;
	return 0;
}

/* Sorting the 3 nt half-edges by vertex pair makes equal neighbours the same edge (O(n log n)). */
pbd_half_edge* pbd_mesh_half_edges(uint32_t nt, const uint32_t* idx) {
	const size_t nh = 3 * (size_t)nt;
	half_edge* he = (half_edge*)malloc((nh ? nh : 1) * sizeof *he);
	if (!he) return NULL;
	for (uint32_t t = 0; t < nt; ++t)
		for (int j = 0; j < 3; ++j) {
			const uint32_t* v = idx + 3 * (size_t)t;
			half_edge* h = &he[3 * (size_t)t + (size_t)j];
			h->key = edge_key(v[j], v[(j + 1) % 3]);
			h->opposite = v[(j + 2) % 3];
			h->tri = t;
		}
	qsort(he, nh, sizeof *he, cmp_half_edge);
	return he;
}

static int cmp_u64(const void* pa, const void* pb) {
	uint64_t a = *(const uint64_t*)pa, b = *(const uint64_t*)pb;
	return a < b ? -1 : (a > b ? 1 : 0);
}

pbd_status pbd_mesh_from_triangles(uint32_t nv, const pbd_vec3* pos, uint32_t nt, const uint32_t* idx, bool bend,
                                   pbd_mesh* out, pbd_error* err) {
	return pbd_mesh_build(nv, pos, nt, idx, bend, out, err, NULL);
}

static pbd_status at_triangle(pbd_mesh_fault* fault, uint32_t t, uint32_t other, uint32_t a, uint32_t b,
                              pbd_status st) {
	if (fault) *fault = (pbd_mesh_fault){t, other, a, b};
	return st;
}

pbd_status pbd_mesh_build(uint32_t nv, const pbd_vec3* pos, uint32_t nt, const uint32_t* idx, bool bend, pbd_mesh* out,
                          pbd_error* err, pbd_mesh_fault* fault) {
	if (fault) *fault = (pbd_mesh_fault){UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};
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
			return at_triangle(fault, t, UINT32_MAX, UINT32_MAX, UINT32_MAX,
			                   pbd_fail_err(err, PBD_ERR_DEGENERATE, "mesh: triangle %u repeats a vertex", t));
		/* Before the area test, which would call a triangle too large to measure degenerate. */
		for (int j = 0; j < 3; ++j) {
			const uint32_t a = v[j], b = v[(j + 1) % 3];
			if (!pbd_length_fits(pos[a], pos[b]))
				return at_triangle(fault, t, UINT32_MAX, a, b,
				                   pbd_fail_err(err, PBD_ERR_NOT_FINITE,
				                                "mesh: triangle %u: edge from vertex %u to %u is too long: its rest "
				                                "length overflows the scalar",
				                                t, a, b));
		}
		if (pbd_triangle_is_degenerate(pos[v[0]], pos[v[1]], pos[v[2]]))
			return at_triangle(fault, t, UINT32_MAX, UINT32_MAX, UINT32_MAX,
			                   pbd_fail_err(err, PBD_ERR_DEGENERATE, "mesh: triangle %u has zero area", t));
	}

	const size_t nh = 3 * (size_t)nt;
	half_edge* he = pbd_mesh_half_edges(nt, idx);
	if (!he) return pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "mesh: out of memory");

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
		if (bend && j - i == 2 && he[i].opposite != he[i + 1].opposite) {
			/* Two triangles whose edges all fit can still span a bend edge that does not. */
			const uint32_t a = he[i].opposite, b = he[i + 1].opposite;
			if (!pbd_length_fits(pos[a], pos[b])) {
				const uint32_t t0 = he[i].tri, t1 = he[i + 1].tri;
				free(he);
				free(bend_keys);
				return at_triangle(fault, t1, t0, a, b,
				                   pbd_fail_err(err, PBD_ERR_NOT_FINITE,
				                                "mesh: bend edge from vertex %u to %u (across triangles %u and %u) is "
				                                "too long: its rest length overflows the scalar",
				                                a, b, t0, t1));
			}
			bend_keys[nb++] = edge_key(a, b);
		}
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
