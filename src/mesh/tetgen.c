/* Tetrahedral meshes: the box and ball builders, the TetGen reader, and what all three derive from
 * the tetrahedra: the boundary triangles (faces of one tetrahedron only, oriented outward) and the
 * unique edges. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/file_in.h"
#include "mesh/mesh.h"
#include "mesh/tet.h"

/* More vertices than this are refused, as for grids and ropes: every derived count stays inside
 * 32 bits. */
#define PBD_TET_MESH_MAX_VERTICES (1u << 24)

pbd_tet_box_def pbd_tet_box_def_default(void) {
	pbd_tet_box_def d;
	memset(&d, 0, sizeof d);
	d.nx = d.ny = d.nz = 1;
	d.size = pbd_v3(1, 1, 1);
	d.origin = pbd_v3(0, 0, 0);
	d.tets_per_cell = 5;
	d.cookie = PBD_COOKIE;
	return d;
}

pbd_tet_sphere_def pbd_tet_sphere_def_default(void) {
	pbd_tet_sphere_def d;
	memset(&d, 0, sizeof d);
	d.center = pbd_v3(0, 0, 0);
	d.radius = 1;
	d.subdivisions = 2;
	d.cookie = PBD_COOKIE;
	return d;
}

/* ---- boundary and edges --------------------------------------------------------------------- */

/* One face of a tetrahedron: its vertices as the tetrahedron sees them from outside
 * (counter-clockwise), the same sorted as a key, and the tetrahedron. */
typedef struct tet_face {
	uint32_t key[3];
	uint32_t v[3];
	uint32_t tet;
	uint32_t slot; /* 4 tet + side, the face's place in the order of the input */
} tet_face;

static int cmp_face(const void* pa, const void* pb) {
	const tet_face* a = (const tet_face*)pa;
	const tet_face* b = (const tet_face*)pb;
	for (int i = 0; i < 3; ++i)
		if (a->key[i] != b->key[i]) return a->key[i] < b->key[i] ? -1 : 1;
	return a->tet < b->tet ? -1 : (a->tet > b->tet ? 1 : 0);
}

static int cmp_slot(const void* pa, const void* pb) {
	const uint32_t a = ((const tet_face*)pa)->slot, b = ((const tet_face*)pb)->slot;
	return a < b ? -1 : (a > b ? 1 : 0);
}

static int cmp_u64(const void* pa, const void* pb) {
	const uint64_t a = *(const uint64_t*)pa, b = *(const uint64_t*)pb;
	return a < b ? -1 : (a > b ? 1 : 0);
}

/* True when (a, b, c) and (d, e, f), the same three vertices, run the same way round. */
static bool same_turn(const uint32_t* x, const uint32_t* y) {
	for (int r = 0; r < 3; ++r)
		if (x[0] == y[r]) return x[1] == y[(r + 1) % 3];
	return false;
}

/* What tet_finish refused, in the mesh's tetrahedron numbering. */
typedef struct tet_fault {
	uint32_t tets[3]; /* the tetrahedra sharing the face (the first three), else UINT32_MAX */
	uint32_t face[3]; /* the face */
	bool overlap;     /* two tetrahedra on the same side of it, else more than two around it */
} tet_fault;

/* Derives the boundary triangles and the unique edges of m's tetrahedra (positively oriented),
 * allocating m->triangles, m->edges and m->edge_kinds. A face of a positive (a, b, c, d) seen from
 * outside is (a, c, b), (a, b, d), (a, d, c) or (b, c, d). A face that two tetrahedra share must
 * appear in opposite turns (else they overlap), and none in more than two. */
static pbd_status tet_finish(pbd_mesh* m, const char* fn, pbd_error* err, tet_fault* fault) {
	const size_t nt = m->tet_count, nf = 4 * nt;
	tet_face* faces = (tet_face*)malloc(nf * sizeof *faces);
	uint64_t* ekeys = (uint64_t*)malloc(6 * nt * sizeof *ekeys);
	pbd_status st = PBD_OK;
	if (!faces || !ekeys) {
		st = pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
		goto done;
	}
	static const int side[4][3] = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};
	static const int pair[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
	for (size_t t = 0; t < nt; ++t) {
		const uint32_t* v = m->tets + 4 * t;
		for (int s = 0; s < 4; ++s) {
			tet_face* f = &faces[4 * t + (size_t)s];
			for (int i = 0; i < 3; ++i) f->v[i] = f->key[i] = v[side[s][i]];
			f->tet = (uint32_t)t;
			f->slot = (uint32_t)(4 * t + (size_t)s);
			/* sort the key's three entries */
			if (f->key[0] > f->key[1]) {
				uint32_t x = f->key[0];
				f->key[0] = f->key[1];
				f->key[1] = x;
			}
			if (f->key[1] > f->key[2]) {
				uint32_t x = f->key[1];
				f->key[1] = f->key[2];
				f->key[2] = x;
			}
			if (f->key[0] > f->key[1]) {
				uint32_t x = f->key[0];
				f->key[0] = f->key[1];
				f->key[1] = x;
			}
		}
		for (int e = 0; e < 6; ++e) {
			const uint32_t a = v[pair[e][0]], b = v[pair[e][1]];
			ekeys[6 * t + (size_t)e] = a < b ? ((uint64_t)a << 32) | b : ((uint64_t)b << 32) | a;
		}
	}
	qsort(faces, nf, sizeof *faces, cmp_face);
	size_t nb = 0;
	for (size_t i = 0; i < nf;) {
		size_t j = i + 1;
		while (j < nf && !memcmp(faces[j].key, faces[i].key, sizeof faces[i].key)) ++j;
		if (j - i > 2 || (j - i == 2 && same_turn(faces[i].v, faces[i + 1].v))) {
			if (fault) {
				for (int k = 0; k < 3; ++k) {
					fault->tets[k] = i + (size_t)k < j ? faces[i + (size_t)k].tet : UINT32_MAX;
					fault->face[k] = faces[i].key[k];
				}
				fault->overlap = j - i == 2;
			}
			if (j - i > 2)
				st = pbd_fail_err(err, PBD_ERR_DEGENERATE,
				                  "%s: face (%u, %u, %u) is shared by more than two tetrahedra (%u, %u, %u, ...)", fn,
				                  faces[i].key[0], faces[i].key[1], faces[i].key[2], faces[i].tet, faces[i + 1].tet,
				                  faces[i + 2].tet);
			else
				st =
				    pbd_fail_err(err, PBD_ERR_DEGENERATE,
				                 "%s: tetrahedra %u and %u lie on the same side of their face (%u, %u, %u): they "
				                 "overlap",
				                 fn, faces[i].tet, faces[i + 1].tet, faces[i].key[0], faces[i].key[1], faces[i].key[2]);
			goto done;
		}
		if (j - i == 1) faces[nb++] = faces[i]; /* in place: nb <= i */
		i = j;
	}
	qsort(ekeys, 6 * nt, sizeof *ekeys, cmp_u64);
	size_t ne = 0;
	for (size_t i = 0; i < 6 * nt; ++i)
		if (i == 0 || ekeys[i] != ekeys[i - 1]) ekeys[ne++] = ekeys[i];
	m->triangles = (uint32_t*)malloc((nb ? 3 * nb : 1) * sizeof *m->triangles);
	m->edges = (uint32_t*)malloc(2 * ne * sizeof *m->edges);
	m->edge_kinds = (uint8_t*)calloc(ne, sizeof *m->edge_kinds); /* all structural */
	if (!m->triangles || !m->edges || !m->edge_kinds) {
		st = pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
		goto done;
	}
	/* Boundary triangles in the order of their tetrahedra, so that the mesh reads like its input. */
	qsort(faces, nb, sizeof *faces, cmp_slot);
	for (size_t i = 0; i < nb; ++i) memcpy(m->triangles + 3 * i, faces[i].v, sizeof faces[i].v);
	for (size_t e = 0; e < ne; ++e) {
		m->edges[2 * e] = (uint32_t)(ekeys[e] >> 32);
		m->edges[2 * e + 1] = (uint32_t)(ekeys[e] & 0xffffffffu);
	}
	m->triangle_count = (uint32_t)nb;
	m->edge_count = (uint32_t)ne;
done:
	free(faces);
	free(ekeys);
	return st;
}

/* Allocates an owned mesh's vertices and tetrahedra; the rest comes from tet_finish. */
static pbd_status tet_alloc(pbd_mesh* m, uint32_t nv, size_t nt, const char* fn, pbd_error* err) {
	memset(m, 0, sizeof *m);
	m->owned = true;
	m->positions = (pbd_vec3*)malloc(nv * sizeof *m->positions);
	m->tets = (uint32_t*)malloc(4 * nt * sizeof *m->tets);
	if (!m->positions || !m->tets) {
		pbd_mesh_free(m);
		return pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
	}
	m->vertex_count = nv;
	m->tet_count = (uint32_t)nt;
	return PBD_OK;
}

/* Appends tetrahedron (a, b, c, d) of lattice vertices whose lattice offsets from a are
 * (da, db, dc), swapping the last two when the offsets' determinant is negative: the lattice's
 * axes are scaled by positive sizes, so its sign is the sign of the volume. */
static void put_tet(uint32_t* t, uint32_t a, uint32_t b, uint32_t c, uint32_t d, int off[3][3]) {
	const int det = off[0][0] * (off[1][1] * off[2][2] - off[1][2] * off[2][1]) +
	                off[0][1] * (off[1][2] * off[2][0] - off[1][0] * off[2][2]) +
	                off[0][2] * (off[1][0] * off[2][1] - off[1][1] * off[2][0]);
	t[0] = a;
	t[1] = b;
	t[2] = det > 0 ? c : d;
	t[3] = det > 0 ? d : c;
}

/* The six tetrahedra of a cell around its diagonal from corner `o` (lattice coordinates) in the
 * directions dir (+1 or -1 per axis): one per order of the three axes, walking from o to the
 * opposite corner one axis at a time (Kuhn's triangulation). Cells sharing a face split it along
 * the same diagonal when their directions agree on the face's axes, which mirroring keeps. */
static uint32_t* kuhn_cell(uint32_t* t, const int o[3], const int dir[3], uint32_t (*index)(const int*, const void*),
                           const void* ctx) {
	static const int perm[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
	for (int p = 0; p < 6; ++p) {
		int c[4][3];
		memcpy(c[0], o, sizeof c[0]);
		for (int s = 1; s < 4; ++s) {
			memcpy(c[s], c[s - 1], sizeof c[s]);
			c[s][perm[p][s - 1]] += dir[perm[p][s - 1]];
		}
		int off[3][3];
		for (int s = 0; s < 3; ++s)
			for (int k = 0; k < 3; ++k) off[s][k] = c[s + 1][k] - c[0][k];
		put_tet(t, index(c[0], ctx), index(c[1], ctx), index(c[2], ctx), index(c[3], ctx), off);
		t += 4;
	}
	return t;
}

typedef struct box_lattice {
	uint32_t nx1, ny1; /* vertices along x and y */
} box_lattice;

static uint32_t box_index(const int* c, const void* ctx) {
	const box_lattice* b = (const box_lattice*)ctx;
	return ((uint32_t)c[2] * b->ny1 + (uint32_t)c[1]) * b->nx1 + (uint32_t)c[0];
}

/* Five tetrahedra: the central one on the four corners of one parity and a tetrahedron at each
 * corner of the other. The parity alternates from cell to cell, so that the two cells at a face
 * split it along the same diagonal. */
static uint32_t* five_cell(uint32_t* t, const int o[3], bool odd, const box_lattice* b) {
	static const int even_center[4][3] = {{0, 0, 0}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}};
	static const int even_corner[4][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}};
	int cen[4][3], cor[4][3];
	for (int i = 0; i < 4; ++i)
		for (int k = 0; k < 3; ++k) {
			/* the odd cells are the even ones mirrored in x */
			const int ce = k == 0 && odd ? 1 - even_center[i][k] : even_center[i][k];
			const int co = k == 0 && odd ? 1 - even_corner[i][k] : even_corner[i][k];
			cen[i][k] = o[k] + ce;
			cor[i][k] = o[k] + co;
		}
	int off[3][3];
	for (int s = 0; s < 3; ++s)
		for (int k = 0; k < 3; ++k) off[s][k] = cen[s + 1][k] - cen[0][k];
	put_tet(t, box_index(cen[0], b), box_index(cen[1], b), box_index(cen[2], b), box_index(cen[3], b), off);
	t += 4;
	for (int i = 0; i < 4; ++i) {
		/* the three central corners next to corner i: those one lattice step away */
		uint32_t nb[3];
		int nbc[3][3], n = 0;
		for (int j = 0; j < 4 && n < 3; ++j) {
			const int d = abs(cen[j][0] - cor[i][0]) + abs(cen[j][1] - cor[i][1]) + abs(cen[j][2] - cor[i][2]);
			if (d != 1) continue;
			nb[n] = box_index(cen[j], b);
			memcpy(nbc[n], cen[j], sizeof nbc[n]);
			++n;
		}
		for (int s = 0; s < 3; ++s)
			for (int k = 0; k < 3; ++k) off[s][k] = nbc[s][k] - cor[i][k];
		put_tet(t, box_index(cor[i], b), nb[0], nb[1], nb[2], off);
		t += 4;
	}
	return t;
}

pbd_status pbd_mesh_tet_box(const pbd_tet_box_def* d, pbd_mesh* out, pbd_error* err) {
	const char* fn = "pbd_mesh_tet_box";
	if (!d || !out) return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "%s: NULL argument", fn);
	memset(out, 0, sizeof *out);
	if (d->cookie != PBD_COOKIE)
		return pbd_fail_err(err, PBD_ERR_UNINITIALIZED_DEF, "%s: def not made by pbd_tet_box_def_default()", fn);
	if (d->nx < 1 || d->ny < 1 || d->nz < 1)
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "%s: nx, ny and nz must be >= 1 (got %u x %u x %u)", fn, d->nx,
		                    d->ny, d->nz);
	const uint64_t nv64 = (uint64_t)(d->nx + 1ull) * (d->ny + 1ull) * (d->nz + 1ull);
	if (nv64 > PBD_TET_MESH_MAX_VERTICES)
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "%s: %u x %u x %u cells exceed %u vertices", fn, d->nx, d->ny,
		                    d->nz, PBD_TET_MESH_MAX_VERTICES);
	if (!pbd_v3_is_finite(d->size) || !pbd_v3_is_finite(d->origin))
		return pbd_fail_err(err, PBD_ERR_NOT_FINITE, "%s: size or origin is not finite", fn);
	if (!(d->size.x > 0) || !(d->size.y > 0) || !(d->size.z > 0))
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "%s: the sizes must be > 0", fn);
	if (d->tets_per_cell != 5 && d->tets_per_cell != 6)
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "%s: tets_per_cell must be 5 or 6 (got %d)", fn,
		                    d->tets_per_cell);
	const uint32_t nx = d->nx, ny = d->ny, nz = d->nz;
	const size_t cells = (size_t)nx * ny * nz;
	pbd_status st = tet_alloc(out, (uint32_t)nv64, cells * (size_t)d->tets_per_cell, fn, err);
	if (st != PBD_OK) return st;
	for (uint32_t k = 0; k <= nz; ++k)
		for (uint32_t j = 0; j <= ny; ++j)
			for (uint32_t i = 0; i <= nx; ++i)
				out->positions[((size_t)k * (ny + 1) + j) * (nx + 1) + i] =
				    pbd_v3(d->origin.x + (pbd_real)i * d->size.x / (pbd_real)nx,
				           d->origin.y + (pbd_real)j * d->size.y / (pbd_real)ny,
				           d->origin.z + (pbd_real)k * d->size.z / (pbd_real)nz);
	const box_lattice lat = {nx + 1, ny + 1};
	uint32_t* t = out->tets;
	for (uint32_t k = 0; k < nz; ++k)
		for (uint32_t j = 0; j < ny; ++j)
			for (uint32_t i = 0; i < nx; ++i) {
				const int o[3] = {(int)i, (int)j, (int)k};
				if (d->tets_per_cell == 5) {
					t = five_cell(t, o, ((i + j + k) & 1u) != 0, &lat);
				} else {
					static const int up[3] = {1, 1, 1};
					t = kuhn_cell(t, o, up, box_index, &lat);
				}
			}
	st = tet_finish(out, fn, err, NULL);
	/* An origin and sizes that are each finite can still place vertices beyond the scalar's range. */
	if (st == PBD_OK) st = pbd_mesh_check_lengths(out, fn, err);
	if (st != PBD_OK) pbd_mesh_free(out);
	return st;
}

typedef struct ball_lattice {
	int n;         /* cells from the centre to the surface */
	uint32_t side; /* vertices along an axis, 2 n + 1 */
} ball_lattice;

static uint32_t ball_index(const int* c, const void* ctx) {
	const ball_lattice* b = (const ball_lattice*)ctx;
	return ((uint32_t)(c[2] + b->n) * b->side + (uint32_t)(c[1] + b->n)) * b->side + (uint32_t)(c[0] + b->n);
}

/* The ball: the lattice cube [-n, n]^3, Kuhn cells mirrored into each octant (every cell walks
 * from its corner nearest the centre outward), mapped by x -> x |x|_inf / |x|_2, which takes the
 * cube's shell |x|_inf = s onto the sphere of radius s. The map is a homeomorphism, homogeneous of
 * degree 1, and smooth on each of the six pyramids |x_a| >= |x_b|, |x_c|; the mirrored cells put
 * every tetrahedron inside one of them (the planes |x_a| = |x_b| are made of cell faces), so no
 * tetrahedron straddles a crease of the map. Its stretch lies between 3^(-1/2) and 1, which keeps
 * every tetrahedron positive and of bounded shape (tests/test_mesh_tet.c measures the worst). */
pbd_status pbd_mesh_tet_sphere(const pbd_tet_sphere_def* d, pbd_mesh* out, pbd_error* err) {
	const char* fn = "pbd_mesh_tet_sphere";
	if (!d || !out) return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "%s: NULL argument", fn);
	memset(out, 0, sizeof *out);
	if (d->cookie != PBD_COOKIE)
		return pbd_fail_err(err, PBD_ERR_UNINITIALIZED_DEF, "%s: def not made by pbd_tet_sphere_def_default()", fn);
	if (d->subdivisions < 1) return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "%s: subdivisions must be >= 1", fn);
	const uint64_t side = 2ull * d->subdivisions + 1;
	if (d->subdivisions > 1024 || side * side * side > PBD_TET_MESH_MAX_VERTICES)
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "%s: %u subdivisions exceed %u vertices", fn, d->subdivisions,
		                    PBD_TET_MESH_MAX_VERTICES);
	if (!pbd_v3_is_finite(d->center) || !pbd_is_finite(d->radius))
		return pbd_fail_err(err, PBD_ERR_NOT_FINITE, "%s: center or radius is not finite", fn);
	if (!(d->radius > 0)) return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "%s: radius must be > 0", fn);
	const int n = (int)d->subdivisions;
	const ball_lattice lat = {n, (uint32_t)side};
	pbd_status st = tet_alloc(out, (uint32_t)(side * side * side), 48 * (size_t)n * (size_t)n * (size_t)n, fn, err);
	if (st != PBD_OK) return st;
	for (int k = -n; k <= n; ++k)
		for (int j = -n; j <= n; ++j)
			for (int i = -n; i <= n; ++i) {
				const int c[3] = {i, j, k};
				const double g[3] = {(double)i / n, (double)j / n, (double)k / n};
				const double inf = fmax(fabs(g[0]), fmax(fabs(g[1]), fabs(g[2])));
				const double l2 = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
				const double s = l2 > 0 ? inf / l2 * (double)d->radius : 0;
				out->positions[ball_index(c, &lat)] =
				    pbd_v3(d->center.x + (pbd_real)(g[0] * s), d->center.y + (pbd_real)(g[1] * s),
				           d->center.z + (pbd_real)(g[2] * s));
			}
	uint32_t* t = out->tets;
	for (int k = -n; k < n; ++k)
		for (int j = -n; j < n; ++j)
			for (int i = -n; i < n; ++i) {
				const int lo[3] = {i, j, k};
				int o[3], dir[3];
				for (int a = 0; a < 3; ++a) {
					dir[a] = lo[a] >= 0 ? 1 : -1;
					o[a] = lo[a] >= 0 ? lo[a] : lo[a] + 1;
				}
				t = kuhn_cell(t, o, dir, ball_index, &lat);
			}
	/* The map keeps every orientation; what can fail is the scale: a radius whose tetrahedra the
	 * scalar cannot hold. */
	for (uint32_t e = 0; e < out->tet_count && st == PBD_OK; ++e) {
		const uint32_t* v = out->tets + 4 * (size_t)e;
		const pbd_vec3* x = out->positions;
		const pbd_tet_shape sh = pbd_tet_classify(x[v[0]], x[v[1]], x[v[2]], x[v[3]], NULL);
		if (sh == PBD_TET_TOO_LARGE)
			st = pbd_fail_err(err, PBD_ERR_NOT_FINITE,
			                  "%s: radius %.9g is too large: tetrahedron %u's volume overflows the scalar", fn,
			                  (double)d->radius, e);
		else if (sh != PBD_TET_POSITIVE)
			st = pbd_fail_err(err, PBD_ERR_DEGENERATE, "%s: radius %.9g is too small: tetrahedron %u is degenerate", fn,
			                  (double)d->radius, e);
	}
	if (st == PBD_OK) st = tet_finish(out, fn, err, NULL);
	if (st == PBD_OK) st = pbd_mesh_check_lengths(out, fn, err);
	if (st != PBD_OK) pbd_mesh_free(out);
	return st;
}

/* ---- TetGen .node / .ele ------------------------------------------------------------------------ */

#ifdef PBD_DOUBLE
#define TG_SCALAR "double"
#else
#define TG_SCALAR "float"
#endif

pbd_tetgen_limits pbd_tetgen_limits_default(void) {
	pbd_tetgen_limits lim;
	memset(&lim, 0, sizeof lim);
	lim.max_line = PBD_TETGEN_MAX_LINE;
	lim.max_bytes = PBD_TETGEN_MAX_BYTES;
	lim.max_points = PBD_TETGEN_MAX_POINTS;
	lim.max_tets = PBD_TETGEN_MAX_TETS;
	return lim;
}

/* One file, or one text in memory, read line by line, every size bounded: a wrong path (a binary
 * file, a file growing as it is read) ends in one error line instead of reading until memory runs
 * out. The same parser serves both, so a fuzzer of the memory entry point reaches all of it. */
typedef struct tg_reader {
	FILE* fp;        /* NULL: the text is mem[0, mem_size) */
	const char* mem; /* the text in memory, given whole as the first chunk */
	size_t mem_size;
	const char* name;
	const pbd_tetgen_limits* lim;
	pbd_error* err;
	char buf[16384];
	const char* chunk; /* buf, or the text in memory */
	size_t blen, bpos;
	char* line; /* the current line, its comment cut off, terminated */
	size_t cap;
	uint32_t lineno; /* lines read so far: the current line's number */
	uint64_t bytes;
} tg_reader;

static unsigned long tg_ln(const tg_reader* r) { return r->lineno ? (unsigned long)r->lineno : 1ul; }

/* Reads the next line that has something besides blanks and a comment. 1: r->line holds it;
 * 0: the file ended; -1: failed, *st and the error set. */
static int tg_next(tg_reader* r, pbd_status* st) {
	for (;;) {
		size_t len = 0;
		bool any = false, ended = false;
		for (;;) {
			if (r->bpos == r->blen) {
				if (r->fp) {
					r->chunk = r->buf;
					r->blen = fread(r->buf, 1, sizeof r->buf, r->fp);
				} else {
					r->chunk = r->mem;
					r->blen = r->mem_size;
					r->mem_size = 0;
				}
				r->bpos = 0;
				if (r->blen == 0) {
					if (r->fp && ferror(r->fp)) {
						*st = pbd_fail_err(r->err, PBD_ERR_IO, "%s:%lu: read error: %s", r->name,
						                   (unsigned long)r->lineno + 1, strerror(errno));
						return -1;
					}
					ended = true;
					break;
				}
				if (r->blen > r->lim->max_bytes - r->bytes) {
					*st = pbd_fail_err(r->err, PBD_ERR_OUT_OF_RANGE, "%s:%lu: file longer than %llu bytes", r->name,
					                   (unsigned long)r->lineno + 1, (unsigned long long)r->lim->max_bytes);
					return -1;
				}
				r->bytes += r->blen;
			}
			const char ch = r->chunk[r->bpos++];
			any = true;
			if (ch == '\n') break;
			if (ch == 0) {
				*st = pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: NUL byte: not a text file", r->name,
				                   (unsigned long)r->lineno + 1);
				return -1;
			}
			if (len >= r->lim->max_line) {
				*st = pbd_fail_err(r->err, PBD_ERR_OUT_OF_RANGE, "%s:%lu: line longer than %zu bytes", r->name,
				                   (unsigned long)r->lineno + 1, r->lim->max_line);
				return -1;
			}
			if (len + 1 >= r->cap) {
				size_t c = r->cap ? 2 * r->cap : 256;
				if (c > r->lim->max_line + 1) c = r->lim->max_line + 1;
				char* nl = (char*)realloc(r->line, c);
				if (!nl) {
					*st = pbd_fail_err(r->err, PBD_ERR_OUT_OF_MEMORY, "%s:%lu: out of memory", r->name,
					                   (unsigned long)r->lineno + 1);
					return -1;
				}
				r->line = nl;
				r->cap = c;
			}
			r->line[len++] = ch;
		}
		if (!any && ended) return 0;
		++r->lineno;
		if (!r->line) continue; /* an empty line before any text */
		r->line[len] = 0;
		char* hash = strchr(r->line, '#');
		if (hash) *hash = 0;
		for (const char* s = r->line; *s; ++s)
			if (*s != ' ' && *s != '\t' && *s != '\r') return 1;
		if (ended) return 0;
	}
}

/* The next blank-separated token of *s, or false at the end of the line. */
static bool tg_token(const char** s, const char** tok, int* len) {
	const char* p = *s;
	while (*p == ' ' || *p == '\t' || *p == '\r') ++p;
	if (!*p) return false;
	const char* q = p;
	while (*q && *q != ' ' && *q != '\t' && *q != '\r') ++q;
	*tok = p;
	*len = (int)(q - p > 40 ? 40 : q - p);
	*s = q;
	return true;
}

/* An integer token. */
static bool tg_int(const char* tok, int len, long long* out) {
	char tmp[48];
	memcpy(tmp, tok, (size_t)len);
	tmp[len] = 0;
	char* end;
	errno = 0;
	*out = strtoll(tmp, &end, 10);
	return end != tmp && !*end && errno != ERANGE && len < 40;
}

/* A real token, finite and within the scalar's range. 0 ok, 1 not a number, 2 out of range. */
static int tg_real(const char* tok, int len, double* out) {
	char tmp[48];
	memcpy(tmp, tok, (size_t)len);
	tmp[len] = 0;
	char* end;
	errno = 0;
	*out = strtod(tmp, &end);
	if (end == tmp || *end || len >= 40) return 1;
#ifdef PBD_DOUBLE
	const double limit = DBL_MAX;
#else
	const double limit = (double)FLT_MAX; /* checked in double, before the conversion could overflow */
#endif
	if (!isfinite(*out) || errno == ERANGE || fabs(*out) > limit) return 2;
	return 0;
}

/* Reads the optional header numbers after the count: at most `max` of them into v (the others
 * keep their defaults). */
static pbd_status tg_header(tg_reader* r, const char** s, long long* v, int max, const char* what) {
	const char* tok;
	int len, k = 0;
	while (tg_token(s, &tok, &len)) {
		if (k == max)
			return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: header has more than %d numbers (%s)", r->name,
			                    tg_ln(r), max + 1, what);
		if (!tg_int(tok, len, &v[k]))
			return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: header: '%.*s' is not an integer (%s)", r->name,
			                    tg_ln(r), len, tok, what);
		++k;
	}
	return PBD_OK;
}

/* The record number of record i: the first one (0 or 1) sets the numbering, the others follow. */
static pbd_status tg_number(tg_reader* r, const char** s, uint32_t i, uint32_t* base, const char* what) {
	const char* tok;
	int len;
	long long num;
	if (!tg_token(s, &tok, &len) || !tg_int(tok, len, &num))
		return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: %s %u: missing or malformed %s number", r->name, tg_ln(r),
		                    what, i + 1, what);
	if (i == 0) {
		if (num != 0 && num != 1)
			return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: the first %s is numbered %lld: must be 0 or 1", r->name,
			                    tg_ln(r), what, num);
		*base = (uint32_t)num;
	} else if (num != (long long)*base + i) {
		return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: %s numbered %lld, expected %lld (consecutive numbers)",
		                    r->name, tg_ln(r), what, num, (long long)*base + i);
	}
	return PBD_OK;
}

/* Checks that exactly `want` numbers (attributes, boundary markers) remain on the line. */
static pbd_status tg_rest(tg_reader* r, const char* s, long long want, const char* what) {
	const char* tok;
	int len;
	long long k = 0;
	while (tg_token(&s, &tok, &len)) {
		double x;
		if (tg_real(tok, len, &x) == 1)
			return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: '%.*s' is not a number", r->name, tg_ln(r), len, tok);
		++k;
	}
	if (k != want)
		return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: %lld numbers after the %s, the header says %lld", r->name,
		                    tg_ln(r), k, what, want);
	return PBD_OK;
}

/* Grows *p to hold n + 1 elements of `size`, doubling up to `max`. */
static bool tg_grow(void** p, size_t* cap, size_t n, size_t size, size_t max) {
	if (n < *cap) return true;
	size_t c = *cap ? 2 * *cap : 1024;
	if (c > max) c = max;
	void* q = realloc(*p, c * size);
	if (!q) return false;
	*p = q;
	*cap = c;
	return true;
}

typedef struct tg_mesh {
	pbd_vec3* pos;
	size_t np, cap_p;
	uint32_t node_base;
	uint32_t* tets;
	uint32_t* lines; /* the .ele line of each tetrahedron */
	size_t nt, cap_t, cap_l;
	uint32_t reoriented, first_reoriented;
} tg_mesh;

static pbd_status tg_read_nodes(tg_reader* r, tg_mesh* m) {
	pbd_status st = PBD_OK;
	const char* s;
	const char* tok;
	int len;
	const int got = tg_next(r, &st);
	if (got < 0) return st;
	if (got == 0)
		return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: no header line (<points> 3 <attributes> <markers>)",
		                    r->name, tg_ln(r));
	s = r->line;
	long long count;
	if (!tg_token(&s, &tok, &len) || !tg_int(tok, len, &count))
		return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: header: missing point count", r->name, tg_ln(r));
	long long h[3] = {3, 0, 0}; /* dimension, attributes, boundary markers */
	st = tg_header(r, &s, h, 3, "<points> 3 <attributes> <markers>");
	if (st != PBD_OK) return st;
	if (count <= 0)
		return pbd_fail_err(
		    r->err, PBD_ERR_PARSE,
		    "%s:%lu: header: %lld points (a .node file must list its points; .poly points are not read)", r->name,
		    tg_ln(r), count);
	if (count > r->lim->max_points)
		return pbd_fail_err(r->err, PBD_ERR_OUT_OF_RANGE, "%s:%lu: header: %lld points, more than %u", r->name,
		                    tg_ln(r), count, r->lim->max_points);
	if (h[0] != 3)
		return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: header: dimension %lld, must be 3", r->name, tg_ln(r),
		                    h[0]);
	if (h[1] < 0 || h[1] > 1024)
		return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: header: %lld attributes (0 to 1024)", r->name, tg_ln(r),
		                    h[1]);
	if (h[2] != 0 && h[2] != 1)
		return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: header: boundary markers must be 0 or 1 (got %lld)",
		                    r->name, tg_ln(r), h[2]);
	for (uint32_t i = 0; i < (uint32_t)count; ++i) {
		const int g = tg_next(r, &st);
		if (g < 0) return st;
		if (g == 0)
			return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: truncated: the header promises %lld points, found %u",
			                    r->name, tg_ln(r), count, i);
		s = r->line;
		st = tg_number(r, &s, i, &m->node_base, "point");
		if (st != PBD_OK) return st;
		double c[3];
		for (int k = 0; k < 3; ++k) {
			if (!tg_token(&s, &tok, &len))
				return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: point needs 3 coordinates", r->name, tg_ln(r));
			const int rc = tg_real(tok, len, &c[k]);
			if (rc == 1)
				return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: coordinate '%.*s' is not a number", r->name,
				                    tg_ln(r), len, tok);
			if (rc == 2)
				return pbd_fail_err(r->err, PBD_ERR_NOT_FINITE,
				                    "%s:%lu: coordinate '%.*s' is not a finite " TG_SCALAR " number", r->name, tg_ln(r),
				                    len, tok);
		}
		st = tg_rest(r, s, h[1] + h[2], "coordinates (attributes and boundary marker)");
		if (st != PBD_OK) return st;
		if (!tg_grow((void**)&m->pos, &m->cap_p, m->np, sizeof *m->pos, (size_t)count))
			return pbd_fail_err(r->err, PBD_ERR_OUT_OF_MEMORY, "%s:%lu: out of memory", r->name, tg_ln(r));
		m->pos[m->np++] = pbd_v3((pbd_real)c[0], (pbd_real)c[1], (pbd_real)c[2]);
	}
	const int g = tg_next(r, &st);
	if (g < 0) return st;
	if (g > 0)
		return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: more lines than the %lld points the header promises",
		                    r->name, tg_ln(r), count);
	return PBD_OK;
}

static pbd_status tg_read_tets(tg_reader* r, tg_mesh* m, const char* node_name) {
	pbd_status st = PBD_OK;
	const char* s;
	const char* tok;
	int len;
	const int got = tg_next(r, &st);
	if (got < 0) return st;
	if (got == 0)
		return pbd_fail_err(r->err, PBD_ERR_PARSE,
		                    "%s:%lu: no header line (<tetrahedra> <nodes per tetrahedron> "
		                    "<attributes>)",
		                    r->name, tg_ln(r));
	s = r->line;
	long long count;
	if (!tg_token(&s, &tok, &len) || !tg_int(tok, len, &count))
		return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: header: missing tetrahedron count", r->name, tg_ln(r));
	long long h[2] = {4, 0}; /* nodes per tetrahedron, attributes */
	st = tg_header(r, &s, h, 2, "<tetrahedra> <nodes per tetrahedron> <attributes>");
	if (st != PBD_OK) return st;
	if (count <= 0)
		return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: header: %lld tetrahedra", r->name, tg_ln(r), count);
	if (count > r->lim->max_tets)
		return pbd_fail_err(r->err, PBD_ERR_OUT_OF_RANGE, "%s:%lu: header: %lld tetrahedra, more than %u", r->name,
		                    tg_ln(r), count, r->lim->max_tets);
	if (h[0] != 4 && h[0] != 10)
		return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: header: %lld nodes per tetrahedron, must be 4 or 10",
		                    r->name, tg_ln(r), h[0]);
	if (h[1] < 0 || h[1] > 1024)
		return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: header: %lld attributes (0 to 1024)", r->name, tg_ln(r),
		                    h[1]);
	const long long lo = m->node_base, hi = (long long)m->node_base + (long long)m->np - 1;
	uint32_t tet_base = 0;
	for (uint32_t i = 0; i < (uint32_t)count; ++i) {
		const int g = tg_next(r, &st);
		if (g < 0) return st;
		if (g == 0)
			return pbd_fail_err(r->err, PBD_ERR_PARSE,
			                    "%s:%lu: truncated: the header promises %lld tetrahedra, found %u", r->name, tg_ln(r),
			                    count, i);
		s = r->line;
		st = tg_number(r, &s, i, &tet_base, "tetrahedron");
		if (st != PBD_OK) return st;
		uint32_t v[4];
		for (int k = 0; k < (int)h[0]; ++k) {
			long long num;
			if (!tg_token(&s, &tok, &len))
				return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: tetrahedron needs %lld point numbers", r->name,
				                    tg_ln(r), h[0]);
			if (!tg_int(tok, len, &num))
				return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: point number '%.*s' is not an integer", r->name,
				                    tg_ln(r), len, tok);
			if (num < lo || num > hi)
				return pbd_fail_err(r->err, PBD_ERR_OUT_OF_RANGE,
				                    "%s:%lu: point %lld out of range (%s numbers its points %lld to %lld)", r->name,
				                    tg_ln(r), num, node_name, lo, hi);
			if (k < 4) v[k] = (uint32_t)(num - lo); /* the corners; a 10-node tetrahedron's edge nodes follow */
		}
		st = tg_rest(r, s, h[1], "point numbers (attributes)");
		if (st != PBD_OK) return st;
		for (int a = 0; a < 4; ++a)
			for (int b = a + 1; b < 4; ++b)
				if (v[a] == v[b])
					return pbd_fail_err(r->err, PBD_ERR_DEGENERATE,
					                    "%s:%lu: degenerate tetrahedron: point %lld repeats", r->name, tg_ln(r),
					                    (long long)v[a] + lo);
		const pbd_tet_shape sh = pbd_tet_classify(m->pos[v[0]], m->pos[v[1]], m->pos[v[2]], m->pos[v[3]], NULL);
		if (sh == PBD_TET_DEGENERATE)
			return pbd_fail_err(r->err, PBD_ERR_DEGENERATE,
			                    "%s:%lu: degenerate tetrahedron: points %lld, %lld, %lld, %lld span no volume", r->name,
			                    tg_ln(r), (long long)v[0] + lo, (long long)v[1] + lo, (long long)v[2] + lo,
			                    (long long)v[3] + lo);
		if (sh == PBD_TET_TOO_LARGE)
			return pbd_fail_err(r->err, PBD_ERR_NOT_FINITE,
			                    "%s:%lu: tetrahedron too large: its volume overflows a " TG_SCALAR, r->name, tg_ln(r));
		if (sh == PBD_TET_INVERTED) {
			const uint32_t x = v[2];
			v[2] = v[3];
			v[3] = x;
			if (!m->reoriented++) m->first_reoriented = r->lineno;
		}
		if (!tg_grow((void**)&m->tets, &m->cap_t, m->nt, 4 * sizeof *m->tets, (size_t)count) ||
		    !tg_grow((void**)&m->lines, &m->cap_l, m->nt, sizeof *m->lines, (size_t)count))
			return pbd_fail_err(r->err, PBD_ERR_OUT_OF_MEMORY, "%s:%lu: out of memory", r->name, tg_ln(r));
		memcpy(m->tets + 4 * m->nt, v, sizeof v);
		m->lines[m->nt++] = r->lineno;
	}
	const int g = tg_next(r, &st);
	if (g < 0) return st;
	if (g > 0)
		return pbd_fail_err(r->err, PBD_ERR_PARSE, "%s:%lu: more lines than the %lld tetrahedra the header promises",
		                    r->name, tg_ln(r), count);
	return PBD_OK;
}

/* Where one of the two texts comes from: a path, or bytes in memory named `name` in messages. */
typedef struct tg_source {
	const char* path; /* NULL: data[0, size) */
	const char* name;
	const char* data;
	size_t size;
} tg_source;

static pbd_status tg_open(tg_reader* r, const tg_source* src, const pbd_tetgen_limits* lim, pbd_error* err) {
	memset(r, 0, sizeof *r);
	r->name = src->name;
	r->lim = lim;
	r->err = err;
	if (!src->path) {
		r->mem = src->data;
		r->mem_size = src->size;
		return PBD_OK;
	}
	/* A FIFO or a device is refused before it is read: a FIFO without a writer blocks forever. */
	return pbd_file_open_regular(src->path, &r->fp, NULL, err);
}

static void tg_close(tg_reader* r) {
	if (r->fp) fclose(r->fp);
	free(r->line);
	r->fp = NULL;
	r->line = NULL;
}

static pbd_status tg_load(const tg_source* node, const tg_source* ele, const pbd_tetgen_limits* lim, pbd_mesh* out,
                          pbd_error* err) {
	memset(out, 0, sizeof *out);
	tg_mesh m;
	memset(&m, 0, sizeof m);
	tg_reader r;
	pbd_status st = tg_open(&r, node, lim, err);
	if (st == PBD_OK) st = tg_read_nodes(&r, &m);
	tg_close(&r);
	if (st == PBD_OK) st = tg_open(&r, ele, lim, err);
	if (st == PBD_OK) st = tg_read_tets(&r, &m, node->name);
	tg_close(&r);
	const char* ele_name = ele->name;
	if (st == PBD_OK) {
		out->owned = true;
		out->vertex_count = (uint32_t)m.np;
		out->positions = m.pos;
		out->tet_count = (uint32_t)m.nt;
		out->tets = m.tets;
		m.pos = NULL;
		m.tets = NULL;
		tet_fault fault;
		pbd_error inner;
		st = tet_finish(out, "pbd_mesh_load_tetgen", &inner, &fault);
		if (st == PBD_ERR_DEGENERATE) {
			const long long b = m.node_base;
			const uint32_t* t = fault.tets;
			if (fault.overlap)
				pbd_fail_err(err, st,
				             "%s:%lu: this tetrahedron and the one on line %lu lie on the same side of their face "
				             "(%lld, %lld, %lld): they overlap",
				             ele_name, (unsigned long)m.lines[t[1]], (unsigned long)m.lines[t[0]], fault.face[0] + b,
				             fault.face[1] + b, fault.face[2] + b);
			else
				pbd_fail_err(err, st,
				             "%s:%lu: face (%lld, %lld, %lld) of this tetrahedron is shared by more than two "
				             "tetrahedra (lines %lu, %lu and %lu)",
				             ele_name, (unsigned long)m.lines[t[2]], fault.face[0] + b, fault.face[1] + b,
				             fault.face[2] + b, (unsigned long)m.lines[t[0]], (unsigned long)m.lines[t[1]],
				             (unsigned long)m.lines[t[2]]);
		} else if (st != PBD_OK) {
			pbd_fail_err(err, st, "%s: %s", ele_name, inner.message);
		}
		if (st == PBD_OK) st = pbd_mesh_check_lengths(out, "pbd_mesh_load_tetgen", err);
		if (st != PBD_OK) pbd_mesh_free(out);
	}
	if (st == PBD_OK && err) {
		if (m.reoriented)
			snprintf(err->message, sizeof err->message,
			         "%s:%lu: note: %u tetrahedra were listed with negative orientation and reoriented (their last two "
			         "points swapped); this is the first",
			         ele_name, (unsigned long)m.first_reoriented, m.reoriented);
		else
			err->message[0] = 0;
	}
	free(m.pos);
	free(m.tets);
	free(m.lines);
	return st;
}

pbd_status pbd_tetgen_load(const char* node_path, const char* ele_path, const pbd_tetgen_limits* lim, pbd_mesh* out,
                           pbd_error* err) {
	if (!node_path || !ele_path || !out || !lim)
		return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "pbd_mesh_load_tetgen: NULL argument");
	const tg_source node = {node_path, node_path, NULL, 0}, ele = {ele_path, ele_path, NULL, 0};
	return tg_load(&node, &ele, lim, out, err);
}

pbd_status pbd_tetgen_load_memory(const char* node_text, size_t node_size, const char* ele_text, size_t ele_size,
                                  const char* name, const pbd_tetgen_limits* lim, pbd_mesh* out, pbd_error* err) {
	if (!out || !lim || (!node_text && node_size) || (!ele_text && ele_size))
		return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "pbd_mesh_load_tetgen_memory: NULL argument");
	/* "<name>.node" and "<name>.ele", as the files would be called. */
	char node_name[256], ele_name[256];
	snprintf(node_name, sizeof node_name, "%s.node", name ? name : "<memory>");
	snprintf(ele_name, sizeof ele_name, "%s.ele", name ? name : "<memory>");
	const tg_source node = {NULL, node_name, node_text, node_size}, ele = {NULL, ele_name, ele_text, ele_size};
	return tg_load(&node, &ele, lim, out, err);
}

pbd_status pbd_mesh_load_tetgen(const char* node_path, const char* ele_path, pbd_mesh* out, pbd_error* err) {
	const pbd_tetgen_limits lim = pbd_tetgen_limits_default();
	return pbd_tetgen_load(node_path, ele_path, &lim, out, err);
}

pbd_status pbd_mesh_load_tetgen_memory(const char* node_text, size_t node_size, const char* ele_text, size_t ele_size,
                                       const char* name, pbd_mesh* out, pbd_error* err) {
	const pbd_tetgen_limits lim = pbd_tetgen_limits_default();
	return pbd_tetgen_load_memory(node_text, node_size, ele_text, ele_size, name, &lim, out, err);
}
