/* libFuzzer target: a TetGen mesh from the input bytes, read by pbd_mesh_load_tetgen_memory. The
 * input up to its first '%' is the .node text, the rest the .ele text (without a '%', the whole
 * input is both). A mesh the reader returns is checked against what pbd.h promises of it (every
 * tetrahedron positive, boundary faces outward and closed, the unique edges of the tetrahedra),
 * then made into a body, volume or Neo-Hookean by the input's length, and stepped in a world on
 * the checking allocator of fuzz_util.h, which must get every byte back. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

/* 6 V of (a, b, c, d) with the sign of its orientation, in double on edges scaled by a power of
 * two so that neither huge nor tiny coordinates overflow or underflow. */
static double six_volume(pbd_vec3 a, pbd_vec3 b, pbd_vec3 c, pbd_vec3 d) {
	const pbd_vec3 p[3] = {b, c, d};
	double e[3][3], m = 0;
	for (int i = 0; i < 3; ++i) {
		e[i][0] = 0.5 * (double)p[i].x - 0.5 * (double)a.x;
		e[i][1] = 0.5 * (double)p[i].y - 0.5 * (double)a.y;
		e[i][2] = 0.5 * (double)p[i].z - 0.5 * (double)a.z;
		for (int k = 0; k < 3; ++k) m = fmax(m, fabs(e[i][k]));
	}
	if (!(m > 0)) return 0;
	const int ex = -ilogb(m);
	for (int i = 0; i < 3; ++i)
		for (int k = 0; k < 3; ++k) e[i][k] = ldexp(e[i][k], ex);
	return e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) + e[0][1] * (e[1][2] * e[2][0] - e[1][0] * e[2][2]) +
	       e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0]);
}

static int cmp_u64(const void* pa, const void* pb) {
	const uint64_t a = *(const uint64_t*)pa, b = *(const uint64_t*)pb;
	return a < b ? -1 : a > b;
}

static uint64_t edge_key(uint32_t a, uint32_t b) { return a < b ? ((uint64_t)a << 32) | b : ((uint64_t)b << 32) | a; }

static void check_mesh(const pbd_mesh* m) {
	if (!m->owned || m->vertex_count < 4 || m->tet_count < 1 || m->triangle_count < 4)
		fuzz_fail("mesh too small or not owned (%u vertices, %u tetrahedra, %u triangles)", m->vertex_count,
		          m->tet_count, m->triangle_count);
	const uint32_t nv = m->vertex_count;
	for (uint32_t i = 0; i < nv; ++i)
		if (!fuzz_v3_finite(m->positions[i])) fuzz_fail("vertex %u not finite", i);
	for (uint32_t t = 0; t < m->tet_count; ++t) {
		const uint32_t* v = m->tets + 4 * (size_t)t;
		for (int i = 0; i < 4; ++i) {
			if (v[i] >= nv) fuzz_fail("tetrahedron %u names vertex %u of %u", t, v[i], nv);
			for (int j = 0; j < i; ++j)
				if (v[i] == v[j]) fuzz_fail("tetrahedron %u repeats vertex %u", t, v[i]);
		}
		const pbd_vec3* x = m->positions;
		if (!(six_volume(x[v[0]], x[v[1]], x[v[2]], x[v[3]]) > 0)) fuzz_fail("tetrahedron %u is not positive", t);
	}
	/* The boundary of positive tetrahedra is closed and consistently turned: every directed edge of
	 * its triangles is matched by as many running the other way. */
	const size_t nh = 3 * (size_t)m->triangle_count;
	uint64_t* fwd = (uint64_t*)malloc(nh * sizeof *fwd);
	uint64_t* rev = (uint64_t*)malloc(nh * sizeof *rev);
	if (!fwd || !rev) fuzz_fail("out of memory in the harness");
	for (uint32_t t = 0; t < m->triangle_count; ++t) {
		const uint32_t* v = m->triangles + 3 * (size_t)t;
		for (int i = 0; i < 3; ++i) {
			const uint32_t a = v[i], b = v[(i + 1) % 3];
			if (a >= nv || a == b) fuzz_fail("boundary triangle %u bad (%u, %u, %u)", t, v[0], v[1], v[2]);
			fwd[3 * (size_t)t + (size_t)i] = ((uint64_t)a << 32) | b;
			rev[3 * (size_t)t + (size_t)i] = ((uint64_t)b << 32) | a;
		}
	}
	qsort(fwd, nh, sizeof *fwd, cmp_u64);
	qsort(rev, nh, sizeof *rev, cmp_u64);
	if (memcmp(fwd, rev, nh * sizeof *fwd) != 0) fuzz_fail("boundary not closed or not consistently turned");
	free(fwd);
	free(rev);
	/* The edges: sorted, unique, and exactly those of the tetrahedra. */
	const size_t ne = m->edge_count;
	uint64_t* keys = (uint64_t*)malloc((ne ? ne : 1) * sizeof *keys);
	if (!keys) fuzz_fail("out of memory in the harness");
	for (size_t e = 0; e < ne; ++e) {
		const uint32_t a = m->edges[2 * e], b = m->edges[2 * e + 1];
		if (a >= nv || b >= nv || a >= b) fuzz_fail("edge %zu bad (%u, %u)", e, a, b);
		if (m->edge_kinds[e] != PBD_EDGE_STRUCTURAL) fuzz_fail("edge %zu of kind %u", e, m->edge_kinds[e]);
		keys[e] = edge_key(a, b);
		if (e && keys[e] <= keys[e - 1]) fuzz_fail("edges not sorted and unique at %zu", e);
	}
	const size_t nk = 6 * (size_t)m->tet_count;
	uint64_t* tk = (uint64_t*)malloc(nk * sizeof *tk);
	if (!tk) fuzz_fail("out of memory in the harness");
	size_t n = 0;
	for (uint32_t t = 0; t < m->tet_count; ++t) {
		const uint32_t* v = m->tets + 4 * (size_t)t;
		for (int i = 0; i < 4; ++i)
			for (int j = i + 1; j < 4; ++j) tk[n++] = edge_key(v[i], v[j]);
	}
	qsort(tk, nk, sizeof *tk, cmp_u64);
	n = 0;
	for (size_t k = 0; k < nk; ++k)
		if (k == 0 || tk[k] != tk[k - 1]) tk[n++] = tk[k];
	if (n != ne || memcmp(tk, keys, ne * sizeof *keys) != 0)
		fuzz_fail("%zu edges, the tetrahedra have %zu (or others)", ne, n);
	free(tk);
	free(keys);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
	const char* text = (const char*)data;
	const char* cut = (const char*)memchr(text, '%', size);
	const size_t node_size = cut ? (size_t)(cut - text) : size;
	const char* ele = cut ? cut + 1 : text;
	const size_t ele_size = cut ? size - node_size - 1 : size;
	pbd_mesh m;
	pbd_error err;
	err.message[0] = 0;
	const pbd_status st = pbd_mesh_load_tetgen_memory(text, node_size, ele, ele_size, "fuzz", &m, &err);
	if (st != PBD_OK) {
		if (strncmp(err.message, "fuzz.node:", 10) != 0 && strncmp(err.message, "fuzz.ele:", 9) != 0)
			fuzz_fail("message does not name the input and line: %s", err.message);
		if (m.positions || m.tets || m.vertex_count || m.tet_count) fuzz_fail("failed load left a mesh behind");
		return 0;
	}
	if (err.message[0] && strncmp(err.message, "fuzz.ele:", 9) != 0) fuzz_fail("note does not name the .ele");
	check_mesh(&m);

	pbd_world_def wd = pbd_world_def_default();
	wd.substeps = 2;
	wd.iterations = 4;
	fuzz_heap heap;
	wd.allocator = fuzz_heap_allocator(&heap, FUZZ_HEAP_CAP);
	pbd_world* w = NULL;
	if (pbd_world_create(&wd, &w) != PBD_OK) fuzz_fail("pbd_world_create failed");
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.tets = (size & 1) ? PBD_TET_NEOHOOKEAN : PBD_TET_VOLUME;
	bd.mass_mode = (pbd_mass_mode)((size >> 1) % 3);
	const uint32_t pinned[1] = {0};
	if ((size >> 3) & 1) {
		bd.pinned = pinned;
		bd.pinned_count = 1;
	}
	pbd_soft_id id;
	pbd_soft_info body;
	if (pbd_soft_create(w, &bd, &id) == PBD_OK && pbd_soft_get_info(w, id, &body) == PBD_OK) {
		if (body.particle_count != m.vertex_count) fuzz_fail("body particles differ from the mesh's vertices");
		const pbd_family_type fam = bd.tets == PBD_TET_VOLUME ? PBD_FAMILY_TET_VOLUME : PBD_FAMILY_TET_NEOHOOKEAN;
		if (body.count[fam] == 0) fuzz_fail("a body of %u tetrahedra has no tetrahedron constraints", m.tet_count);
		fuzz_step_checked(w, 4, &heap);
	} else if (pbd_world_particle_count(w) != 0) {
		fuzz_fail("refused body left particles behind: %s", pbd_world_last_error(w));
	}
	pbd_world_destroy(w);
	fuzz_heap_check_empty(&heap, "a destroyed world");
	pbd_mesh_free(&m);
	return 0;
}
