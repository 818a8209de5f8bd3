/* Rectangular grid cloth builder. */
#include <string.h>

#include "mesh/mesh.h"

pbd_grid_def pbd_grid_def_default(void) {
	pbd_grid_def d;
	memset(&d, 0, sizeof d);
	d.nx = 2;
	d.ny = 2;
	d.size_u = 1;
	d.size_v = 1;
	d.origin = pbd_v3(0, 0, 0);
	d.axis_u = pbd_v3(1, 0, 0);
	d.axis_v = pbd_v3(0, 0, 1);
	d.diagonals = 2;
	d.bend = false;
	d.cookie = PBD_COOKIE;
	return d;
}

/* Grids above this many vertices are refused: 2^24 particles is far past interactive use and
 * keeps every derived count inside 32 bits. */
#define PBD_GRID_MAX_VERTICES (1u << 24)

pbd_status pbd_mesh_grid(const pbd_grid_def* d, pbd_mesh* out, pbd_error* err) {
	if (!d || !out) return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "pbd_mesh_grid: NULL argument");
	memset(out, 0, sizeof *out);
	if (d->cookie != PBD_COOKIE)
		return pbd_fail_err(err, PBD_ERR_UNINITIALIZED_DEF, "pbd_mesh_grid: def not made by pbd_grid_def_default()");
	if (d->nx < 2 || d->ny < 2)
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "pbd_mesh_grid: nx and ny must be >= 2 (got %u x %u)", d->nx,
		                    d->ny);
	if ((uint64_t)d->nx * d->ny > PBD_GRID_MAX_VERTICES)
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "pbd_mesh_grid: %u x %u exceeds %u vertices", d->nx, d->ny,
		                    PBD_GRID_MAX_VERTICES);
	if (!pbd_is_finite(d->size_u) || !pbd_is_finite(d->size_v) || !pbd_v3_is_finite(d->origin) ||
	    !pbd_v3_is_finite(d->axis_u) || !pbd_v3_is_finite(d->axis_v))
		return pbd_fail_err(err, PBD_ERR_NOT_FINITE, "pbd_mesh_grid: a size, origin or axis is not finite");
	if (!(d->size_u > 0) || !(d->size_v > 0))
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "pbd_mesh_grid: sizes must be > 0");
	if (d->diagonals < 0 || d->diagonals > 2)
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "pbd_mesh_grid: diagonals must be 0, 1 or 2 (got %d)",
		                    d->diagonals);
	pbd_real lu = pbd_v3_length(d->axis_u), lv = pbd_v3_length(d->axis_v);
	if (!(lu > 0) || !(lv > 0))
		return pbd_fail_err(err, PBD_ERR_DEGENERATE, "pbd_mesh_grid: axis_u and axis_v must be non-zero");
	pbd_vec3 au = pbd_v3_scale(d->axis_u, 1 / lu), av = pbd_v3_scale(d->axis_v, 1 / lv);
	if (pbd_v3_length(pbd_v3_cross(au, av)) < PBD_R(1e-4))
		return pbd_fail_err(err, PBD_ERR_DEGENERATE, "pbd_mesh_grid: axis_u and axis_v are parallel");

	const uint32_t nx = d->nx, ny = d->ny;
	const uint32_t cells = (nx - 1) * (ny - 1);
	uint32_t ne = (nx - 1) * ny + nx * (ny - 1) + cells * (uint32_t)d->diagonals;
	if (d->bend) ne += (nx > 2 ? (nx - 2) * ny : 0) + (ny > 2 ? nx * (ny - 2) : 0);
	pbd_status st = pbd_mesh_alloc(out, nx * ny, ne, 2 * cells, err);
	if (st != PBD_OK) return st;

	/* t = i * size / (n - 1), in this order, reproduces the lab's 5 - 10 i / 20 bit for bit. */
	for (uint32_t j = 0; j < ny; ++j)
		for (uint32_t i = 0; i < nx; ++i) {
			pbd_real tu = (pbd_real)i * d->size_u / (pbd_real)(nx - 1);
			pbd_real tv = (pbd_real)j * d->size_v / (pbd_real)(ny - 1);
			out->positions[j * nx + i] = pbd_v3_add(d->origin, pbd_v3_add(pbd_v3_scale(au, tu), pbd_v3_scale(av, tv)));
		}
	out->grid_nx = nx;
	out->grid_ny = ny;
	out->grid_du = d->size_u / (pbd_real)(nx - 1);
	out->grid_dv = d->size_v / (pbd_real)(ny - 1);
	out->grid_diagonals = d->diagonals;
	uint32_t t = 0;
	for (uint32_t j = 0; j + 1 < ny; ++j)
		for (uint32_t i = 0; i + 1 < nx; ++i) {
			uint32_t v00 = j * nx + i, v10 = v00 + 1, v01 = v00 + nx, v11 = v01 + 1;
			uint32_t* tr = out->triangles + 6 * (size_t)t;
			tr[0] = v00, tr[1] = v10, tr[2] = v11;
			tr[3] = v00, tr[4] = v11, tr[5] = v01;
			++t;
		}
	uint32_t e = 0;
#define EDGE(va, vb, kind) (out->edges[2 * e] = (va), out->edges[2 * e + 1] = (vb), out->edge_kinds[e++] = (kind))
	/* Structural edges row by row, so that a Gauss-Seidel sweep walks memory in order. */
	for (uint32_t j = 0; j < ny; ++j) {
		for (uint32_t i = 0; i + 1 < nx; ++i) EDGE(j * nx + i, j * nx + i + 1, PBD_EDGE_STRUCTURAL);
		if (j + 1 < ny)
			for (uint32_t i = 0; i < nx; ++i) EDGE(j * nx + i, (j + 1) * nx + i, PBD_EDGE_STRUCTURAL);
	}
	if (d->diagonals > 0)
		for (uint32_t j = 0; j + 1 < ny; ++j)
			for (uint32_t i = 0; i + 1 < nx; ++i) {
				uint32_t v00 = j * nx + i;
				EDGE(v00, v00 + nx + 1, PBD_EDGE_SHEAR);
				if (d->diagonals == 2) EDGE(v00 + 1, v00 + nx, PBD_EDGE_SHEAR);
			}
	if (d->bend) {
		for (uint32_t j = 0; j < ny; ++j)
			for (uint32_t i = 0; i + 2 < nx; ++i) EDGE(j * nx + i, j * nx + i + 2, PBD_EDGE_BEND);
		for (uint32_t j = 0; j + 2 < ny; ++j)
			for (uint32_t i = 0; i < nx; ++i) EDGE(j * nx + i, (j + 2) * nx + i, PBD_EDGE_BEND);
	}
#undef EDGE
	/* Sizes and an origin that are each finite can still place vertices, or span shear and bend
	 * edges, beyond the scalar's range; a body would measure those rest lengths as infinite. */
	st = pbd_mesh_check_lengths(out, "pbd_mesh_grid", err);
	if (st != PBD_OK) pbd_mesh_free(out);
	return st;
}
