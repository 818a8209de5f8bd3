/* Heightfield: a grid of heights over the local xz plane, solid below.
 *
 * Sample (i, j) is the vertex (x_i, h[j nx + i], z_j) with x_i = i cell_x and z_j = j cell_z,
 * both rounded once in pbd_real (every function here computes them the same way). Cell (i, j)
 * spans [x_i, x_i+1] x [z_j, z_j+1] and is cut along its diagonal from (i, j) to (i+1, j+1) into
 * two triangles, wound counter-clockwise seen from above (their normals point up):
 *   T0 = (v00, v11, v10), the half where (z - z_j) / cell_z <= (x - x_i) / cell_x,
 *   T1 = (v00, v01, v11), the other half.
 * The solid is the prism under the surface: the points whose (x, z) lies in the footprint
 * [0, (nx-1) cell_x] x [0, (nz-1) cell_z] and whose y lies below the surface there, down to
 * -infinity. Its boundary is the surface plus four vertical walls that hang from the border of
 * the surface. The distance is the exact signed Euclidean distance to that boundary, everywhere:
 *  - above the surface, the distance to the nearest triangle (a wall is never nearer there);
 *  - outside the footprint, the distance to the nearest triangle or wall, so that the field looks
 *    like a block cut out of the ground: a particle beside it slides down its side;
 *  - inside (below the surface), minus the distance to the nearest point of the surface or of a
 *    wall, the nearest way out.
 * The normal is the outward normal at the nearest point: a face's own normal (exact, and up),
 * a wall's normal, or the direction between the point and an edge or a vertex. It is continuous
 * off the medial set and points up or sideways, never down (every outward normal of this solid
 * has y >= 0). Near an edge, within a few roundings of it, the direction between the point and the
 * edge is noise, and the nearest face's normal is used instead.
 *
 * A max-min pyramid over the cells (level l holds, per block of 2^l x 2^l cells, the lowest and
 * highest height in it) bounds the work: the distance walks it depth-first from the blocks within
 * the distance of the cell under the point, nearest block first, and prunes every block whose box
 * is no nearer than the best triangle found; the sweep walks it front to back along the segment
 * and prunes every block the segment enters after the first touch found. Most points lie near the
 * surface, where the cell under them and the walls settle the distance, or leave one neighbouring
 * cell to open: the distance then tells so from the gaps to the cell's sides, and skips the walk,
 * whose offers would have been those same ones (hf_near_cells). The pyramid, the cells' normals and
 * the list of ridges (for the edges) live after the copied heights in the collider's data and are
 * rebuilt from them (build is deterministic).
 *
 * The sweep is exact: the moving point first comes within `radius` of the boundary where it
 * enters the radius-neighbourhood of one of its pieces (a face: the slab above it within the
 * triangle; an edge: a capsule; a vertex: a ball; a wall: the slab outside it; a corner of the
 * footprint: the vertical cylinder under its vertex), and the earliest of those entries is the
 * answer. Each cell's pieces are tested in the cell's own frame, in units of its size (a power of
 * two, exact), so that the quadratics see numbers near 1 whatever the size of the field. */
#include <float.h>
#include <string.h>

#include "collision/collide.h"
#include "collision/shape_math.h"

/* At most 2^26 samples, so that indices fit and the pyramid has at most 26 levels. */
#define HF_MAX_SAMPLES (1u << 26)
#define HF_MAX_LEVELS  26
/* Depth-first stack: up to four roots, then at most three waiting siblings per level. */
#define HF_STACK (4 * (HF_MAX_LEVELS + 2))

#ifdef PBD_DOUBLE
#define HF_EPS DBL_EPSILON
#else
#define HF_EPS FLT_EPSILON
#endif

/* The caps of the other shapes: sizes and heights within them keep every squared length of the
 * distance search, and every product of two sizes, finite. The cell sizes are bounded from below
 * too, so that the product of the two (the vertical part of a face's normal) is a normal number. */
static pbd_real hf_cap(void) { return PBD_SQRT(PBD_REAL_MAX) / 4; }
static pbd_real hf_min_cell(void) { return 4 * PBD_SQRT(PBD_REAL_MIN_NORMAL); }

typedef struct hf_view {
	const pbd_real* h; /* nx * nz heights */
	uint32_t nx, nz;
	pbd_real cx, cz;                                       /* nominal cell sizes */
	pbd_real lx, lz;                                       /* the footprint's extents, x_(nx-1) and z_(nz-1) */
	int top;                                               /* the pyramid's level with one block */
	const pbd_real* mm[HF_MAX_LEVELS + 1];                 /* level l >= 1: (min, max) per block, row by row */
	const pbd_real* nrm;                                   /* per cell, row by row: T0's unit normal, then T1's */
	uint32_t nridges;                                      /* the grid edges that hf_edges lists */
	const uint32_t* ridge;                                 /* their indices, ascending */
	const pbd_vec3* ridge_out;                             /* their outward directions */
	uint32_t bx[HF_MAX_LEVELS + 1], bz[HF_MAX_LEVELS + 1]; /* blocks per row and per column */
} hf_view;

/* Blocks of level l along an axis of n samples (n - 1 cells). */
static uint32_t hf_blocks(uint32_t n, int l) { return (uint32_t)(((uint64_t)(n - 1) + ((uint64_t)1 << l) - 1) >> l); }

static int hf_top_level(uint32_t nx, uint32_t nz) {
	int l = 0;
	while (hf_blocks(nx, l) > 1 || hf_blocks(nz, l) > 1) ++l;
	return l;
}

/* Reals of the pyramid's levels 1..top (level 0, the cells, is read from the heights). */
static size_t hf_pyramid_reals(uint32_t nx, uint32_t nz) {
	size_t n = 0;
	for (int l = 1, top = hf_top_level(nx, nz); l <= top; ++l) n += 2 * (size_t)hf_blocks(nx, l) * hf_blocks(nz, l);
	return n;
}

/* The data of a field, in reals: its heights (nx nz), its lowest and highest height, the cells'
 * normals (6 per cell, row by row: T0's unit normal, then T1's), the pyramid's levels 1..top; then,
 * in bytes, on a multiple of 16 the number of ridges and their indices, on the next their outward
 * directions. What a distance query needs sits at fixed places after the heights; the pyramid and
 * the ridges, for the walks, after a loop over the levels. */
typedef struct hf_layout {
	size_t count, index, out, total; /* byte offsets, and the size */
} hf_layout;

static size_t hf_align16(size_t x) { return (x + 15) & ~(size_t)15; }

static size_t hf_reals_before_pyramid(uint32_t nx, uint32_t nz) {
	return (size_t)nx * nz + 2 + 6 * (size_t)(nx - 1) * (nz - 1);
}

static hf_layout hf_layout_of(uint32_t nx, uint32_t nz, uint32_t nridges) {
	hf_layout l;
	const size_t reals = hf_reals_before_pyramid(nx, nz) + hf_pyramid_reals(nx, nz);
	l.count = hf_align16(reals * sizeof(pbd_real));
	l.index = l.count + 16;
	l.out = hf_align16(l.index + (size_t)nridges * sizeof(uint32_t));
	l.total = l.out + (size_t)nridges * sizeof(pbd_vec3);
	return l;
}

/* The view of a field's heights and of what sits at fixed places after them (a field being built
 * has only the heights yet); the pyramid and the ridges come with hf_view_levels and
 * hf_view_ridges. */
static void hf_view_heights(hf_view* v, const pbd_heightfield* f) {
	v->h = f->heights;
	v->nx = f->nx;
	v->nz = f->nz;
	v->cx = f->cell_x;
	v->cz = f->cell_z;
	v->lx = (pbd_real)(f->nx - 1) * f->cell_x;
	v->lz = (pbd_real)(f->nz - 1) * f->cell_z;
	v->nrm = f->heights + (size_t)f->nx * f->nz + 2;
	v->top = 0;
	v->mm[0] = NULL;
	v->bx[0] = f->nx - 1;
	v->bz[0] = f->nz - 1;
	v->nridges = 0;
	v->ridge = NULL;
	v->ridge_out = NULL;
}

/* The pyramid's levels, after the normals. */
static void hf_view_levels(hf_view* v) {
	v->top = hf_top_level(v->nx, v->nz);
	const pbd_real* m = v->h + hf_reals_before_pyramid(v->nx, v->nz);
	for (int l = 1; l <= v->top; ++l) {
		v->mm[l] = m;
		v->bx[l] = hf_blocks(v->nx, l);
		v->bz[l] = hf_blocks(v->nz, l);
		m += 2 * (size_t)v->bx[l] * v->bz[l];
	}
}

/* The ridges of a built field, after its pyramid (hf_view_levels first). */
static void hf_view_ridges(hf_view* v) {
	const pbd_real* end = v->top > 0 ? v->mm[v->top] + 2 : v->h + hf_reals_before_pyramid(v->nx, v->nz);
	const char* base = (const char*)(const void*)v->h;
	const size_t count = hf_align16((size_t)(end - v->h) * sizeof(pbd_real));
	memcpy(&v->nridges, base + count, sizeof v->nridges);
	v->ridge = (const uint32_t*)(const void*)(base + count + 16);
	v->ridge_out =
	    (const pbd_vec3*)(const void*)(base + hf_align16(count + 16 + (size_t)v->nridges * sizeof(uint32_t)));
}

/* The view of a built field, pyramid included. */
static void hf_view_init(hf_view* v, const pbd_heightfield* f) {
	hf_view_heights(v, f);
	hf_view_levels(v);
}

static pbd_real hf_x(const hf_view* v, uint32_t i) { return (pbd_real)i * v->cx; }
static pbd_real hf_z(const hf_view* v, uint32_t j) { return (pbd_real)j * v->cz; }
static pbd_real hf_height(const hf_view* v, uint32_t i, uint32_t j) { return v->h[(size_t)j * v->nx + i]; }

/* The cell along an axis (n samples, nominal size c, extent len) that holds coordinate x, clamped
 * into the grid. Compares before it divides, so the quotient stays below n. */
static uint32_t hf_cell_of(pbd_real x, pbd_real c, pbd_real len, uint32_t n) {
	if (!(x > 0)) return 0;
	if (!(x < len)) return n - 2;
	const uint32_t i = (uint32_t)(x / c);
	return i < n - 2 ? i : n - 2;
}

static void hf_cell_minmax(const hf_view* v, uint32_t i, uint32_t j, pbd_real* lo, pbd_real* hi) {
	const pbd_real* r0 = v->h + (size_t)j * v->nx + i;
	const pbd_real* r1 = r0 + v->nx;
	*lo = pbd_shape_min(pbd_shape_min(r0[0], r0[1]), pbd_shape_min(r1[0], r1[1]));
	*hi = pbd_shape_max(pbd_shape_max(r0[0], r0[1]), pbd_shape_max(r1[0], r1[1]));
}

/* A block of level l: its samples [*i0, *i1] x [*j0, *j1] and its lowest and highest height. */
static void hf_block(const hf_view* v, int l, uint32_t bx, uint32_t bz, uint32_t* i0, uint32_t* i1, uint32_t* j0,
                     uint32_t* j1, pbd_real* lo, pbd_real* hi) {
	*i0 = bx << l;
	*j0 = bz << l;
	const uint64_t ie = (uint64_t)(bx + 1) << l, je = (uint64_t)(bz + 1) << l;
	*i1 = ie < v->nx - 1 ? (uint32_t)ie : v->nx - 1;
	*j1 = je < v->nz - 1 ? (uint32_t)je : v->nz - 1;
	if (l == 0) {
		hf_cell_minmax(v, bx, bz, lo, hi);
		return;
	}
	const pbd_real* m = v->mm[l] + 2 * ((size_t)bz * v->bx[l] + bx);
	*lo = m[0];
	*hi = m[1];
}

/* The lowest and highest height of a built field. */
static void hf_root_minmax(const hf_view* v, pbd_real* lo, pbd_real* hi) {
	*lo = v->h[(size_t)v->nx * v->nz];
	*hi = v->h[(size_t)v->nx * v->nz + 1];
}

/* The unit upward normals of a cell's triangles from its sizes and its height differences
 * d10 = h10 - h00, d01 = h01 - h00 and d11 = h11 - h00: T0 has the slopes d10 / cx along x and
 * (d11 - d10) / cz along z, T1 the slopes (d11 - d01) / cx and d01 / cz. Each is the cross product
 * of two edges, a product of two sizes per component. A degenerate cell (sizes rounded to 0) gets
 * (0, 1, 0). */
static void hf_cell_normals(pbd_real cx, pbd_real cz, const pbd_real* r0, const pbd_real* r1, pbd_vec3* n0,
                            pbd_vec3* n1) {
	*n0 = pbd_v3(0, 1, 0);
	*n1 = pbd_v3(0, 1, 0);
	pbd_shape_unit(pbd_v3(-cz * (r0[1] - r0[0]), cx * cz, cx * (r0[1] - r1[1])), n0);
	pbd_shape_unit(pbd_v3(cz * (r1[0] - r1[1]), cx * cz, -cx * (r1[0] - r0[0])), n1);
}

/* The height of the surface at (x, z), inside the footprint, in cell (i, j) (the cell of x and z,
 * hf_cell_of). */
static pbd_real hf_surface(const hf_view* v, pbd_real x, pbd_real z, uint32_t i, uint32_t j) {
	const pbd_real x0 = hf_x(v, i), z0 = hf_z(v, j), cx = hf_x(v, i + 1) - x0, cz = hf_z(v, j + 1) - z0;
	const pbd_real u = cx > 0 ? pbd_shape_clamp((x - x0) / cx, 0, 1) : 0,
	               w = cz > 0 ? pbd_shape_clamp((z - z0) / cz, 0, 1) : 0;
	const pbd_real* r0 = v->h + (size_t)j * v->nx + i;
	const pbd_real* r1 = r0 + v->nx;
	if (w <= u) return r0[0] + (r0[1] - r0[0]) * u + (r1[1] - r0[1]) * w;
	return r0[0] + (r1[1] - r1[0]) * u + (r1[0] - r0[0]) * w;
}

/* The height of the border along the wall x = x_i (i = 0 or nx - 1) at z, and of the wall
 * z = z_j at x: the edges of the border cells, linear between the samples. */
static pbd_real hf_border_z(const hf_view* v, uint32_t i, pbd_real z) {
	const uint32_t j = hf_cell_of(z, v->cz, v->lz, v->nz);
	const pbd_real z0 = hf_z(v, j), cz = hf_z(v, j + 1) - z0;
	const pbd_real w = cz > 0 ? pbd_shape_clamp((z - z0) / cz, 0, 1) : 0;
	const pbd_real a = hf_height(v, i, j), b = hf_height(v, i, j + 1);
	return a + (b - a) * w;
}

static pbd_real hf_border_x(const hf_view* v, uint32_t j, pbd_real x) {
	const uint32_t i = hf_cell_of(x, v->cx, v->lx, v->nx);
	const pbd_real x0 = hf_x(v, i), cx = hf_x(v, i + 1) - x0;
	const pbd_real u = cx > 0 ? pbd_shape_clamp((x - x0) / cx, 0, 1) : 0;
	const pbd_real a = hf_height(v, i, j), b = hf_height(v, i + 1, j);
	return a + (b - a) * u;
}

/* ---- validation and storage --------------------------------------------------------------- */

static uint32_t hf_find_ridges(const hf_view* v, uint32_t* index, pbd_vec3* out);

static pbd_status hf_validate(pbd_world* w, pbd_collider_def* def) {
	const pbd_heightfield* f = &def->shape.heightfield;
	const pbd_real cap = hf_cap(), floor_size = hf_min_cell();
	if (!f->heights) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_collider_create: heightfield heights is NULL");
	if (f->nx < 2 || f->nz < 2)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_collider_create: heightfield %s must be >= 2 (got %u)",
		                f->nx < 2 ? "nx" : "nz", f->nx < 2 ? f->nx : f->nz);
	const uint64_t samples = (uint64_t)f->nx * f->nz;
	if (samples > HF_MAX_SAMPLES)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_collider_create: heightfield nx * nz = %u * %u exceeds %u samples", f->nx, f->nz,
		                HF_MAX_SAMPLES);
	if (!pbd_is_finite(f->cell_x) || !pbd_is_finite(f->cell_z))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "pbd_collider_create: heightfield %s is not finite",
		                pbd_is_finite(f->cell_x) ? "cell_z" : "cell_x");
	if (!(f->cell_x > 0 && f->cell_z > 0))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_collider_create: heightfield %s must be > 0 (got %.9g)",
		                f->cell_x > 0 ? "cell_z" : "cell_x", (double)(f->cell_x > 0 ? f->cell_z : f->cell_x));
	if (!(f->cell_x >= floor_size && f->cell_z >= floor_size))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_collider_create: heightfield %s %.9g is below %g for this precision",
		                f->cell_x >= floor_size ? "cell_z" : "cell_x",
		                (double)(f->cell_x >= floor_size ? f->cell_z : f->cell_x), (double)floor_size);
	/* Divided rather than multiplied, so that no huge cell size overflows on the way. */
	if (!(f->cell_x <= cap / (pbd_real)(f->nx - 1) && f->cell_z <= cap / (pbd_real)(f->nz - 1))) {
		const bool x = !(f->cell_x <= cap / (pbd_real)(f->nx - 1));
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_collider_create: heightfield %s %.9g times %s - 1 = %u exceeds %g for this precision",
		                x ? "cell_x" : "cell_z", (double)(x ? f->cell_x : f->cell_z), x ? "nx" : "nz",
		                x ? f->nx - 1 : f->nz - 1, (double)cap);
	}
	if (!(def->margin <= cap))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_collider_create: heightfield margin %.9g exceeds %g for this precision",
		                (double)def->margin, (double)cap);
	for (uint32_t k = 0; k < (uint32_t)samples; ++k) {
		const pbd_real h = f->heights[k];
		if (!pbd_is_finite(h))
			return pbd_fail(w, PBD_ERR_NOT_FINITE,
			                "pbd_collider_create: heightfield heights[%u] (ix %u, iz %u) is not finite", k, k % f->nx,
			                k / f->nx);
		if (!(PBD_FABS(h) <= cap))
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
			                "pbd_collider_create: heightfield heights[%u] = %.9g exceeds %g for this precision", k,
			                (double)h, (double)cap);
	}
	return PBD_OK;
}

static size_t hf_data_size(const pbd_collider_def* def) {
	const pbd_heightfield* f = &def->shape.heightfield;
	hf_view v;
	hf_view_heights(&v, f);
	return hf_layout_of(f->nx, f->nz, hf_find_ridges(&v, NULL, NULL)).total;
}

/* Copies the heights, then fills the cells' normals, which every query would otherwise compute
 * again (two square roots per cell), the pyramid level by level (level 1 from the cells, each
 * further level from the (up to four) blocks of the one below) and the ridges. */
static void hf_build(pbd_collider_def* def, void* data) {
	pbd_heightfield* f = &def->shape.heightfield;
	pbd_real* h = (pbd_real*)data;
	const size_t samples = (size_t)f->nx * f->nz;
	memmove(h, f->heights, samples * sizeof(pbd_real));
	f->heights = h;
	hf_view v;
	hf_view_heights(&v, f);
	hf_view_levels(&v);
	pbd_real* m = h + samples + 2;
	for (uint32_t j = 0; j + 1 < v.nz; ++j)
		for (uint32_t i = 0; i + 1 < v.nx; ++i) {
			const pbd_real* r0 = h + (size_t)j * v.nx + i;
			pbd_vec3 n0, n1;
			hf_cell_normals(hf_x(&v, i + 1) - hf_x(&v, i), hf_z(&v, j + 1) - hf_z(&v, j), r0, r0 + v.nx, &n0, &n1);
			m[0] = n0.x, m[1] = n0.y, m[2] = n0.z, m[3] = n1.x, m[4] = n1.y, m[5] = n1.z;
			m += 6;
		}
	for (int l = 1; l <= v.top; ++l) {
		for (uint32_t bz = 0; bz < v.bz[l]; ++bz)
			for (uint32_t bx = 0; bx < v.bx[l]; ++bx) {
				pbd_real lo = PBD_REAL_MAX, hi = -PBD_REAL_MAX;
				for (uint32_t c = 0; c < 4; ++c) {
					const uint32_t cx = 2 * bx + (c & 1), cz = 2 * bz + (c >> 1);
					if (cx >= v.bx[l - 1] || cz >= v.bz[l - 1]) continue;
					uint32_t i0, i1, j0, j1;
					pbd_real clo, chi;
					hf_block(&v, l - 1, cx, cz, &i0, &i1, &j0, &j1, &clo, &chi);
					lo = pbd_shape_min(lo, clo);
					hi = pbd_shape_max(hi, chi);
				}
				m[0] = lo;
				m[1] = hi;
				m += 2;
			}
	}
	/* The root block's heights, where every query finds them. */
	uint32_t i0, i1, j0, j1;
	hf_block(&v, v.top, 0, 0, &i0, &i1, &j0, &j1, h + samples, h + samples + 1);
	/* The ridges, after the reals; the padding zero, so that the same heights give the same bytes. */
	char* base = (char*)data;
	const uint32_t nridges = hf_find_ridges(&v, NULL, NULL);
	const hf_layout lay = hf_layout_of(v.nx, v.nz, nridges);
	const size_t used = (size_t)((char*)m - base);
	memset(base + used, 0, lay.total - used);
	memcpy(base + lay.count, &nridges, sizeof nridges);
	hf_find_ridges(&v, (uint32_t*)(void*)(base + lay.index), (pbd_vec3*)(void*)(base + lay.out));
}

/* The normals of cell (i, j)'s triangles, as hf_cell_normals gives them. */
static void hf_normals_of(const hf_view* v, uint32_t i, uint32_t j, pbd_vec3* n0, pbd_vec3* n1) {
	const pbd_real* m = v->nrm + 6 * ((size_t)j * (v->nx - 1) + i);
	*n0 = pbd_v3(m[0], m[1], m[2]);
	*n1 = pbd_v3(m[3], m[4], m[5]);
}

static bool hf_bounds(const pbd_collider_def* def, pbd_vec3* lo, pbd_vec3* hi) {
	hf_view v;
	hf_view_heights(&v, &def->shape.heightfield);
	pbd_real ylo, yhi;
	hf_root_minmax(&v, &ylo, &yhi);
	/* The solid goes on below the lowest height: the box reaches as deep again as the field is
	 * wide, so that a particle pushed under the surface is still found and brought back up. */
	*lo = pbd_v3(0, ylo - PBD_FMAX(v.lx, v.lz), 0);
	*hi = pbd_v3(v.lx, yhi, v.lz);
	return true;
}

/* Vertex (i, j) is number j nx + i; cell (i, j) gives triangles 2 (j (nx - 1) + i) and the next,
 * T0 and T1 as above. */
static void hf_triangles(const pbd_collider_def* def, pbd_vec3* vertex_out, uint32_t vertex_cap, uint32_t* triangle_out,
                         uint32_t triangle_cap, uint32_t* vertices, uint32_t* triangles) {
	hf_view v;
	hf_view_heights(&v, &def->shape.heightfield);
	const uint32_t nv = v.nx * v.nz, nt = 2 * (v.nx - 1) * (v.nz - 1);
	*vertices = nv;
	*triangles = nt;
	if (vertex_out)
		for (uint32_t k = 0; k < nv && k < vertex_cap; ++k)
			vertex_out[k] = pbd_v3(hf_x(&v, k % v.nx), v.h[k], hf_z(&v, k / v.nx));
	if (triangle_out)
		for (uint32_t t = 0; t < nt && t < triangle_cap; ++t) {
			const uint32_t c = t / 2, i = c % (v.nx - 1), j = c / (v.nx - 1);
			const uint32_t v00 = j * v.nx + i, v10 = v00 + 1, v01 = v00 + v.nx, v11 = v01 + 1;
			uint32_t* o = triangle_out + 3 * (size_t)t;
			o[0] = v00;
			o[1] = (t & 1) ? v01 : v11;
			o[2] = (t & 1) ? v11 : v10;
		}
}

/* ---- distance ----------------------------------------------------------------------------- */

/* The nearest boundary point found so far, in the query frame (the local frame times s, a power
 * of two that is 1 unless the point is so far away that squares would overflow). */
typedef struct hf_near {
	pbd_real d2;   /* squared distance, for comparisons */
	pbd_real dist; /* the distance of a face or a wall (kind 0) */
	pbd_vec3 dir;  /* p - q for an edge, a vertex or a corner line (kind 1) */
	pbd_vec3 face; /* outward normal of the face or wall; for kind 1 the normal of a face beside it */
	int kind;
} hf_near;

static void hf_offer(hf_near* best, pbd_real d2, int kind, pbd_real dist, pbd_vec3 dir, pbd_vec3 face) {
	/* A face's or a wall's squared distance counts a few roundings less: in a near tie with an
	 * edge beside it (squared distances tell a foot from the edge only to about sqrt(eps) of the
	 * distance) the face wins, whose normal is exact. */
	if (kind == 0) d2 -= d2 * (16 * HF_EPS);
	if (!(d2 < best->d2)) return;
	best->d2 = d2;
	best->kind = kind;
	best->dist = dist;
	best->dir = dir;
	best->face = face;
}

/* The gap from x to [lo, hi] (lo <= hi), 0 inside: the larger of the two differences, one of which
 * is negative outside and both inside, so that no branch is taken. */
static pbd_real hf_gap(pbd_real x, pbd_real lo, pbd_real hi) {
	/* hi - hi is the zero (hi is finite): gcc takes a constant zero for a branch, which the sides
	 * of the boxes make unpredictable, and a computed one for a max instruction. */
	return pbd_shape_max(pbd_shape_max(lo - x, x - hi), hi - hi);
}

/* The nearest point of segment a..b (in the same frame as l) to l: *dir = l minus that point, and
 * its squared length. */
static inline pbd_real hf_segment_near(pbd_vec3 l, pbd_vec3 a, pbd_vec3 b, pbd_vec3* dir) {
	const pbd_vec3 e = pbd_v3_sub(b, a), f = pbd_v3_sub(l, a);
	const pbd_real fe = pbd_v3_dot(f, e), ee = pbd_v3_dot(e, e);
	if (!(fe > 0))
		*dir = f;
	else if (!(fe < ee))
		*dir = pbd_v3_sub(l, b);
	else
		*dir = pbd_v3_sub(f, pbd_v3_scale(e, fe / ee));
	return pbd_v3_dot(*dir, *dir);
}

/* The two triangles of cell (i, j) against the point p (local frame), in the query frame. */
static void hf_cell_near(const hf_view* v, pbd_real s, pbd_vec3 p, uint32_t i, uint32_t j, hf_near* best) {
	const pbd_real* r0 = v->h + (size_t)j * v->nx + i;
	const pbd_real* r1 = r0 + v->nx;
	const pbd_real x0 = hf_x(v, i), z0 = hf_z(v, j), cx = hf_x(v, i + 1) - x0, cz = hf_z(v, j + 1) - z0;
	pbd_vec3 n0, n1;
	hf_normals_of(v, i, j, &n0, &n1);
	/* The point and the vertices relative to v00; the differences before the scaling, which
	 * keeps every one of them finite. */
	const pbd_vec3 l = pbd_v3((p.x - x0) * s, (p.y - r0[0]) * s, (p.z - z0) * s);
	const pbd_real cxs = cx * s, czs = cz * s;
	const pbd_vec3 a = pbd_v3(0, 0, 0), b10 = pbd_v3(cxs, (r0[1] - r0[0]) * s, 0),
	               b01 = pbd_v3(0, (r1[0] - r0[0]) * s, czs), b11 = pbd_v3(cxs, (r1[1] - r0[0]) * s, czs);
	/* Faces: the foot of the perpendicular, when it lies in the triangle (in xz, T0 is
	 * u <= 1, w >= 0, w <= u with u = x / cx and w = z / cz; T1 the mirror). */
	const pbd_real f0 = pbd_v3_dot(l, n0), f1 = pbd_v3_dot(l, n1);
	const pbd_vec3 q0 = pbd_v3_sub(l, pbd_v3_scale(n0, f0)), q1 = pbd_v3_sub(l, pbd_v3_scale(n1, f1));
	if (q0.x <= cxs && q0.z >= 0 && q0.z * cxs <= q0.x * czs) hf_offer(best, f0 * f0, 0, PBD_FABS(f0), a, n0);
	if (q1.z <= czs && q1.x >= 0 && q1.z * cxs >= q1.x * czs) hf_offer(best, f1 * f1, 0, PBD_FABS(f1), a, n1);
	/* The five edges (with their end points), offered in order; only where one of them is taken
	 * (the first least of the five, if below the best) do the offers run. */
	pbd_vec3 dir[5];
	const pbd_real d2[5] = {hf_segment_near(l, a, b10, &dir[0]), hf_segment_near(l, b10, b11, &dir[1]),
	                        hf_segment_near(l, a, b11, &dir[2]), hf_segment_near(l, a, b01, &dir[3]),
	                        hf_segment_near(l, b01, b11, &dir[4])};
	pbd_real least = best->d2;
	for (int k = 0; k < 5; ++k) least = d2[k] < least ? d2[k] : least;
	if (!(least < best->d2)) return;
	for (int k = 0; k < 5; ++k) hf_offer(best, d2[k], 1, 0, dir[k], k < 3 ? n0 : n1);
}

/* The four walls: the wall x = 0 is the region z in [0, lz], y <= border height, of that plane.
 * Where the point's y is above the border height at the clamped z, the region's nearest point is on
 * the border, an edge of the surface, found by the cells; otherwise it is the foot on the wall (a
 * face of the solid) or, past the wall's end, on the vertical line under the corner. The walls come
 * first in the order of the offers, and *best holds what came after them (the cell under the
 * point): the first wall that is nearest among them is the answer where it is no farther than
 * *best, which it then replaces. So the border's height, a division, is looked up only for a wall
 * near enough to be the answer. */
static void hf_walls_near(const hf_view* v, pbd_real s, pbd_vec3 p, hf_near* best) {
	hf_near w;
	w.d2 = PBD_REAL_MAX;
	for (int k = 0; k < 4; ++k) {
		const bool along_z = k < 2; /* walls x = 0 and x = lx run along z */
		const pbd_real c = along_z ? p.z : p.x, len = along_z ? v->lz : v->lx;
		const pbd_real cc = pbd_shape_clamp(c, 0, len);
		const bool far_side = (k & 1) != 0;
		const pbd_real across = along_z ? p.x - (far_side ? v->lx : 0) : p.z - (far_side ? v->lz : 0);
		const pbd_real along = c - cc;
		const pbd_vec3 dir = along_z ? pbd_v3(across * s, 0, along * s) : pbd_v3(along * s, 0, across * s);
		pbd_real d2 = pbd_v3_dot(dir, dir);
		if (along == 0) d2 -= d2 * (16 * HF_EPS); /* as hf_offer counts a face */
		if (!(d2 < w.d2 && d2 <= best->d2)) continue;
		const pbd_real hb =
		    along_z ? hf_border_z(v, far_side ? v->nx - 1 : 0, cc) : hf_border_x(v, far_side ? v->nz - 1 : 0, cc);
		if (!(p.y <= hb)) continue;
		const pbd_real sign = far_side ? 1 : -1;
		w.d2 = d2;
		w.kind = along == 0 ? 0 : 1;
		w.dist = along == 0 ? PBD_FABS(across) * s : 0;
		w.dir = dir;
		w.face = along_z ? pbd_v3(sign, 0, 0) : pbd_v3(0, 0, sign);
	}
	if (w.d2 < PBD_REAL_MAX) *best = w;
}

typedef struct hf_node {
	pbd_real key; /* squared distance to its box (distance), or entry parameter (sweep) */
	uint32_t bx, bz;
	int l;
} hf_node;

/* Pushes up to four nodes so that the one with the smallest key comes off the stack first. */
static void hf_push_sorted(hf_node* stack, int* sp, hf_node* nodes, int n) {
	for (int a = 1; a < n; ++a)
		for (int b = a; b > 0 && nodes[b - 1].key < nodes[b].key; --b) {
			const hf_node t = nodes[b];
			nodes[b] = nodes[b - 1];
			nodes[b - 1] = t;
		}
	for (int a = 0; a < n; ++a) stack[(*sp)++] = nodes[a];
}

/* Squared distance in the query frame from p to the box [x0, x1] x [lo, hi] x [z0, z1]. */
static pbd_real hf_box_d2(pbd_real s, pbd_vec3 p, pbd_real x0, pbd_real x1, pbd_real lo, pbd_real hi, pbd_real z0,
                          pbd_real z1) {
	const pbd_real dx = hf_gap(p.x, x0, x1) * s, dy = hf_gap(p.y, lo, hi) * s, dz = hf_gap(p.z, z0, z1) * s;
	return dx * dx + dy * dy + dz * dz;
}

/* Squared distance in the query frame from p to the box of a block. */
static pbd_real hf_block_d2(const hf_view* v, pbd_real s, pbd_vec3 p, int l, uint32_t bx, uint32_t bz) {
	uint32_t i0, i1, j0, j1;
	pbd_real lo, hi;
	hf_block(v, l, bx, bz, &i0, &i1, &j0, &j1, &lo, &hi);
	const pbd_real x0 = hf_x(v, i0), x1 = hf_x(v, i1), z0 = hf_z(v, j0), z1 = hf_z(v, j1);
	return hf_box_d2(s, p, x0, x1, lo, hi, z0, z1);
}

/* The children of block (bx, bz) of level l whose keys (hf_block_d2's, the same bits) are below d2,
 * in the order of their numbers c = (kx & 1) + 2 (kz & 1); their number. The children share their
 * sides: two gaps along x and two along z serve the four. */
static int hf_kids(const hf_view* v, pbd_real s, pbd_vec3 p, int l, uint32_t bx, uint32_t bz, pbd_real d2,
                   hf_node kids[4]) {
	const int lc = l - 1;
	const uint32_t kx = 2 * bx, kz = 2 * bz;
	const bool x1 = kx + 1 < v->bx[lc], z1 = kz + 1 < v->bz[lc];
	const uint64_t xm = (uint64_t)(kx + 1) << lc, xe = (uint64_t)(kx + 2) << lc;
	const uint64_t zm = (uint64_t)(kz + 1) << lc, ze = (uint64_t)(kz + 2) << lc;
	const pbd_real X0 = hf_x(v, kx << lc), Xm = hf_x(v, xm < v->nx - 1 ? (uint32_t)xm : v->nx - 1),
	               X1 = hf_x(v, xe < v->nx - 1 ? (uint32_t)xe : v->nx - 1);
	const pbd_real Z0 = hf_z(v, kz << lc), Zm = hf_z(v, zm < v->nz - 1 ? (uint32_t)zm : v->nz - 1),
	               Z1 = hf_z(v, ze < v->nz - 1 ? (uint32_t)ze : v->nz - 1);
	const pbd_real dx[2] = {hf_gap(p.x, X0, Xm) * s, hf_gap(p.x, Xm, X1) * s};
	const pbd_real dz[2] = {hf_gap(p.z, Z0, Zm) * s, hf_gap(p.z, Zm, Z1) * s};
	int n = 0;
	for (uint32_t c = 0; c < 4; ++c) {
		const uint32_t cx = c & 1, cz = c >> 1;
		if ((cx && !x1) || (cz && !z1)) continue;
		pbd_real lo, hi;
		if (lc == 0) {
			hf_cell_minmax(v, kx + cx, kz + cz, &lo, &hi);
		} else {
			const pbd_real* m = v->mm[lc] + 2 * ((size_t)(kz + cz) * v->bx[lc] + kx + cx);
			lo = m[0];
			hi = m[1];
		}
		const pbd_real dy = hf_gap(p.y, lo, hi) * s;
		const pbd_real key = dx[cx] * dx[cx] + dy * dy + dz[cz] * dz[cz];
		if (key < d2) kids[n++] = (hf_node){key, kx + cx, kz + cz, lc};
	}
	return n;
}

/* The lowest level whose blocks cover cells [i0, i1] x [j0, j1] with at most two per axis. */
static int hf_start_level(const hf_view* v, uint32_t i0, uint32_t i1, uint32_t j0, uint32_t j1) {
	int l = 0;
	while (l < v->top && ((i1 >> l) - (i0 >> l) > 1 || (j1 >> l) - (j0 >> l) > 1)) ++l;
	return l;
}

/* The cells [i0, i1] x [j0, j1] within r of p across the plane, one more on each side for the
 * rounding of the cell index. */
static void hf_cells_within(const hf_view* v, pbd_vec3 p, pbd_real r, uint32_t* i0, uint32_t* i1, uint32_t* j0,
                            uint32_t* j1) {
	*i0 = hf_cell_of(pbd_shape_clamp(p.x - r, 0, v->lx), v->cx, v->lx, v->nx);
	*i1 = hf_cell_of(pbd_shape_clamp(p.x + r, 0, v->lx), v->cx, v->lx, v->nx);
	*j0 = hf_cell_of(pbd_shape_clamp(p.z - r, 0, v->lz), v->cz, v->lz, v->nz);
	*j1 = hf_cell_of(pbd_shape_clamp(p.z + r, 0, v->lz), v->cz, v->lz, v->nz);
	*i0 -= (uint32_t)(*i0 > 0);
	*j0 -= (uint32_t)(*j0 > 0);
	*i1 += (uint32_t)(*i1 < v->nx - 2);
	*j1 += (uint32_t)(*j1 < v->nz - 2);
}

/* The other cells, after the one under the point and the walls (scale s = 2^-k): only blocks within
 * the distance found so far can hold a nearer point. The walk starts from the lowest level whose
 * blocks cover those cells two by two (from the root for a far point) and goes depth first, nearest
 * block first; the order of the offers is that walk's. */
static void hf_near_rest(const hf_view* vp, pbd_real s, pbd_vec3 p, int k, uint32_t ci, uint32_t cj, hf_near* bestp) {
	hf_view v = *vp;
	hf_view_levels(&v);
	hf_near best = *bestp;
	hf_node roots[4];
	int nroots = 0;
	int l = v.top;
	uint32_t b0 = 0, b1 = 0, c0 = 0, c1 = 0;
	if (k == 0) {
		uint32_t i0, i1, j0, j1;
		hf_cells_within(&v, p, PBD_SQRT(best.d2), &i0, &i1, &j0, &j1);
		l = hf_start_level(&v, i0, i1, j0, j1);
		b0 = i0 >> l;
		b1 = i1 >> l;
		c0 = j0 >> l;
		c1 = j1 >> l;
	}
	for (uint32_t bz = c0; bz <= c1; ++bz)
		for (uint32_t bx = b0; bx <= b1; ++bx) {
			const pbd_real key = hf_block_d2(&v, s, p, l, bx, bz);
			if (key < best.d2) roots[nroots++] = (hf_node){key, bx, bz, l};
		}
	hf_node stack[HF_STACK];
	int sp = 0;
	hf_push_sorted(stack, &sp, roots, nroots);
	while (sp > 0) {
		const hf_node nd = stack[--sp];
		if (!(nd.key < best.d2)) continue;
		if (nd.l == 0) {
			if (nd.bx != ci || nd.bz != cj) hf_cell_near(&v, s, p, nd.bx, nd.bz, &best);
			continue;
		}
		hf_node kids[4];
		const int nk = hf_kids(&v, s, p, nd.l, nd.bx, nd.bz, best.d2, kids);
		hf_push_sorted(stack, &sp, kids, nk);
	}
	*bestp = best;
}

/* The cells other than (ci, cj) whose box is nearer p than sqrt(d2) (by the walk's key, as
 * hf_block_d2 computes it), among the eight around it: their number, and the cells and their keys
 * in oi, oj and okey; -1 when a cell farther out may be as near too (or p lies outside the cell),
 * for the walk to find them all. Every other cell lies beyond one of the four sides of cell
 * (ci, cj), and its key is at least the square of the gap between p and that side (rounding is
 * monotone: the key's gap is no smaller, nor is its sum); beyond a neighbour, of the gap to the
 * neighbour's far side. The neighbours whose side gap does not settle it are asked for their keys. */
static int hf_near_cells(const hf_view* v, pbd_real s, pbd_vec3 p, uint32_t ci, uint32_t cj, pbd_real d2,
                         uint32_t oi[8], uint32_t oj[8], pbd_real okey[8]) {
	const uint32_t nci = v->nx - 1, ncj = v->nz - 1; /* cells per row and per column */
	const pbd_real x0 = hf_x(v, ci), x1 = hf_x(v, ci + 1), z0 = hf_z(v, cj), z1 = hf_z(v, cj + 1);
	if (!(p.x >= x0 && p.x <= x1 && p.z >= z0 && p.z <= z1)) return -1;
	/* Gaps to the sides of the cell (0 where there is no cell beyond) and to the far sides of the
	 * neighbours (required to settle everything beyond them). */
	bool near[4]; /* -x, +x, -z, +z: a neighbour beyond that side may be nearer */
	const pbd_real g[4] = {(p.x - x0) * s, (x1 - p.x) * s, (p.z - z0) * s, (z1 - p.z) * s};
	const bool has[4] = {ci > 0, ci + 1 < nci, cj > 0, cj + 1 < ncj};
	for (int k = 0; k < 4; ++k) near[k] = has[k] && !(g[k] * g[k] >= d2);
	if (!(near[0] || near[1] || near[2] || near[3])) return 0;
	const pbd_real g2[4] = {
	    ci > 1 ? (p.x - hf_x(v, ci - 1)) * s : PBD_REAL_MAX, ci + 2 < nci ? (hf_x(v, ci + 2) - p.x) * s : PBD_REAL_MAX,
	    cj > 1 ? (p.z - hf_z(v, cj - 1)) * s : PBD_REAL_MAX, cj + 2 < ncj ? (hf_z(v, cj + 2) - p.z) * s : PBD_REAL_MAX};
	for (int k = 0; k < 4; ++k)
		if (!(g2[k] >= PBD_REAL_MAX || g2[k] * g2[k] >= d2)) return -1;
	int n = 0;
	for (int dj = -1; dj <= 1; ++dj)
		for (int di = -1; di <= 1; ++di) {
			if ((di == 0 && dj == 0) || (di < 0 && !has[0]) || (di > 0 && !has[1]) || (dj < 0 && !has[2]) ||
			    (dj > 0 && !has[3]))
				continue;
			if ((di < 0 && !near[0]) || (di > 0 && !near[1]) || (dj < 0 && !near[2]) || (dj > 0 && !near[3])) continue;
			const uint32_t i = (uint32_t)((int64_t)ci + di), j = (uint32_t)((int64_t)cj + dj);
			const pbd_real key = hf_block_d2(v, s, p, 0, i, j);
			if (key >= d2) continue;
			oi[n] = i, oj[n] = j, okey[n] = key;
			++n;
		}
	return n;
}

/* Whether the walk of hf_near_rest, from the roots of level l, comes to cell (ai, aj) before cell
 * (bi, bj): at the first level where their blocks part, the nearer block comes off the stack first
 * (hf_push_sorted), and of two as near the one pushed later: the later root in row order, or the
 * child with the higher number c = (kx & 1) + 2 (kz & 1). */
static bool hf_walk_before(const hf_view* v, pbd_real s, pbd_vec3 p, int l, uint32_t ai, uint32_t aj, uint32_t bi,
                           uint32_t bj) {
	for (int m = l; m >= 0; --m) {
		const uint32_t ax = ai >> m, az = aj >> m, bx = bi >> m, bz = bj >> m;
		if (ax == bx && az == bz) continue;
		const pbd_real ka = hf_block_d2(v, s, p, m, ax, az), kb = hf_block_d2(v, s, p, m, bx, bz);
		if (ka != kb) return ka < kb;
		if (m == l) return az != bz ? az > bz : ax > bx;
		return (ax & 1) + 2 * (az & 1) > (bx & 1) + 2 * (bz & 1);
	}
	return false;
}

/* The cells that hf_near_cells found, all that the walk would open (the others' keys are no
 * nearer than the best), offered in the walk's order: each where its key is still below the best
 * when the walk comes to it. The roots are hf_near_rest's, for a point that needs no scaling. */
static void hf_near_in_order(const hf_view* vp, pbd_vec3 p, int n, const uint32_t* ci, const uint32_t* cj,
                             const pbd_real* key, hf_near* best) {
	hf_view v = *vp;
	hf_view_levels(&v);
	uint32_t i0, i1, j0, j1;
	hf_cells_within(&v, p, PBD_SQRT(best->d2), &i0, &i1, &j0, &j1);
	const int l = hf_start_level(&v, i0, i1, j0, j1);
	int order[8];
	for (int a = 0; a < n; ++a) {
		int b = a;
		for (; b > 0 && hf_walk_before(&v, 1, p, l, ci[a], cj[a], ci[order[b - 1]], cj[order[b - 1]]); --b)
			order[b] = order[b - 1];
		order[b] = a;
	}
	for (int a = 0; a < n; ++a)
		if (key[order[a]] < best->d2) hf_cell_near(&v, 1, p, ci[order[a]], cj[order[a]], best);
}

/* Whether p, over cell (ci, cj) of the footprint, is below the surface. The surface over the cell
 * lies between the cell's lowest and highest heights but for a few roundings of them: outside that
 * band (grown by far more) the answer needs no division. */
static bool hf_below(const hf_view* v, pbd_vec3 p, uint32_t ci, uint32_t cj) {
	pbd_real lo, hi;
	hf_cell_minmax(v, ci, cj, &lo, &hi);
	const pbd_real pad = (PBD_FABS(lo) + PBD_FABS(hi)) * PBD_R(0x1p-16) + PBD_REAL_MIN_NORMAL;
	if (p.y > hi + pad) return false;
	if (p.y < lo - pad) return true;
	return p.y < hf_surface(v, p.x, p.z, ci, cj);
}

static pbd_real hf_distance(const pbd_collider_def* def, pbd_vec3 p, pbd_vec3* normal) {
	/* A point that is not finite (a state that overflowed, which the step undoes) is near no
	 * cell: no contact. */
	*normal = pbd_v3(0, 1, 0);
	if (!pbd_v3_is_finite(p)) return PBD_REAL_MAX;
	hf_view v;
	hf_view_heights(&v, &def->shape.heightfield);
	const pbd_real cap = hf_cap();
	const pbd_real m = PBD_FMAX(PBD_FABS(p.x), PBD_FMAX(PBD_FABS(p.y), PBD_FABS(p.z)));
	int k = 0;
	if (m > cap) k = pbd_shape_exponent(m) - pbd_shape_exponent(cap) + 1;
	const pbd_real s = pbd_shape_ldexp(1, -k);

	hf_near best;
	best.d2 = PBD_REAL_MAX;
	best.kind = 0;
	best.dist = PBD_REAL_MAX;
	best.dir = pbd_v3(0, 1, 0);
	best.face = pbd_v3(0, 1, 0);
	const uint32_t ci = hf_cell_of(p.x, v.cx, v.lx, v.nx), cj = hf_cell_of(p.z, v.cz, v.lz, v.nz);
	hf_cell_near(&v, s, p, ci, cj, &best);
	hf_walls_near(&v, s, p, &best);
	/* No other cell nearer than the best: the walk would open none; one: the walk would open it
	 * alone, whatever its order; a few around the cell: those, in the walk's order. */
	uint32_t oi[8], oj[8];
	pbd_real okey[8];
	const int others = hf_near_cells(&v, s, p, ci, cj, best.d2, oi, oj, okey);
	if (others == 1)
		hf_cell_near(&v, s, p, oi[0], oj[0], &best);
	else if (others > 1 && k == 0)
		hf_near_in_order(&v, p, others, oi, oj, okey, &best);
	else if (others != 0)
		hf_near_rest(&v, s, p, k, ci, cj, &best);
	const bool inside = p.x >= 0 && p.x <= v.lx && p.z >= 0 && p.z <= v.lz && hf_below(&v, p, ci, cj);
	pbd_real d;
	if (best.kind == 0) {
		d = best.dist;
		*normal = best.face;
	} else {
		pbd_vec3 u = best.face;
		d = pbd_shape_unit(best.dir, &u);
		/* Within a few roundings of an edge the direction is noise: the face beside it. */
		pbd_real ymin, ymax;
		hf_root_minmax(&v, &ymin, &ymax);
		const pbd_real size = PBD_FMAX(PBD_FMAX(v.lx, v.lz), PBD_FMAX(PBD_FABS(ymin), PBD_FABS(ymax)));
		const pbd_real band = 64 * HF_EPS * (m * s + size * s);
		if (!(d > band))
			u = best.face;
		else if (inside)
			u = pbd_v3_scale(u, -1);
		*normal = u;
	}
	if (k > 0) d = d >= PBD_REAL_MAX * s ? PBD_REAL_MAX : pbd_shape_ldexp(d, k);
	return inside ? -d : d;
}

/* ---- sweep -------------------------------------------------------------------------------- */

typedef struct hf_sweep_best {
	pbd_real t;
	pbd_vec3 n;
} hf_sweep_best;

static void hf_take(hf_sweep_best* best, pbd_real t, pbd_vec3 n) {
	if (t < best->t) {
		best->t = t;
		best->n = n;
	}
}

/* First s in [0, 1] at which f + s u is within sqrt(rr) of the segment from the origin to e
 * (capsule side only: the ends are the vertex balls), or 2; *dir the perpendicular offset there. */
static pbd_real hf_edge_entry(pbd_vec3 f, pbd_vec3 u, pbd_vec3 e, pbd_real rr, pbd_vec3* dir) {
	const pbd_real ee = pbd_v3_dot(e, e);
	if (!(ee >= PBD_REAL_MIN_NORMAL)) return 2; /* too short to tell from its ends */
	const pbd_real fe = pbd_v3_dot(f, e), ue = pbd_v3_dot(u, e);
	const pbd_vec3 fp = pbd_v3_sub(f, pbd_v3_scale(e, fe / ee)), up = pbd_v3_sub(u, pbd_v3_scale(e, ue / ee));
	const pbd_real s = pbd_shape_ball_entry(fp, up, rr);
	if (!(s <= 1)) return 2;
	const pbd_real along = fe + s * ue;
	if (!(along >= 0 && along <= ee)) return 2;
	*dir = pbd_v3_add(fp, pbd_v3_scale(up, s));
	return s;
}

/* w in units of 1 / g (g a power of two), each component clamped to 64 units first: rounding of
 * a far segment's points can leave them far outside the box they were clipped to, and the
 * quadratics must stay finite (the answer is then only as good as those points). */
static pbd_vec3 hf_to_unit(pbd_vec3 w, pbd_real g) {
	const pbd_real lim = 64 / g;
	return pbd_v3(pbd_shape_clamp(w.x, -lim, lim) * g, pbd_shape_clamp(w.y, -lim, lim) * g,
	              pbd_shape_clamp(w.z, -lim, lim) * g);
}

/* The sub-segment a + t d, t in [t0, t1], against the two triangles of cell (i, j). */
static void hf_cell_sweep(const hf_view* v, uint32_t i, uint32_t j, pbd_vec3 a, pbd_vec3 d, pbd_real t0, pbd_real t1,
                          pbd_real radius, hf_sweep_best* best) {
	const pbd_real* r0 = v->h + (size_t)j * v->nx + i;
	const pbd_real* r1 = r0 + v->nx;
	const pbd_real x0 = hf_x(v, i), z0 = hf_z(v, j), cx = hf_x(v, i + 1) - x0, cz = hf_z(v, j + 1) - z0;
	pbd_real lo, hi;
	hf_cell_minmax(v, i, j, &lo, &hi);
	pbd_vec3 n0, n1;
	hf_normals_of(v, i, j, &n0, &n1);
	/* The cell's frame: origin v00, in units of the cell's size. */
	const pbd_real size = PBD_FMAX(PBD_FMAX(cx, cz), PBD_FMAX(hi - lo, radius));
	const pbd_real g = pbd_shape_ldexp(1, -pbd_shape_exponent(size));
	const pbd_vec3 p0 = t0 > 0 ? pbd_v3_add(a, pbd_v3_scale(d, t0)) : a;
	const pbd_vec3 p1 = pbd_v3_add(a, pbd_v3_scale(d, t1));
	const pbd_vec3 l0 = hf_to_unit(pbd_v3_sub(p0, pbd_v3(x0, r0[0], z0)), g);
	const pbd_vec3 l1 = hf_to_unit(pbd_v3_sub(p1, pbd_v3(x0, r0[0], z0)), g);
	const pbd_vec3 u = pbd_v3_sub(l1, l0);
	const pbd_real rs = radius * g, rr = rs * rs, cxs = cx * g, czs = cz * g;
	const pbd_vec3 vtx[4] = {pbd_v3(0, 0, 0), pbd_v3(cxs, (r0[1] - r0[0]) * g, 0), pbd_v3(0, (r1[0] - r0[0]) * g, czs),
	                         pbd_v3(cxs, (r1[1] - r0[0]) * g, czs)};
	pbd_real bs = 2;
	pbd_vec3 bn = n0;
	/* Faces, entered from above: the slab within rs above the plane, where its foot lies in the
	 * triangle. From below, or into the slab beside the triangle, the first touch is an edge's. */
	for (int f = 0; f < 2; ++f) {
		const pbd_vec3 n = f == 0 ? n0 : n1;
		const pbd_real f0 = pbd_v3_dot(l0, n), f1 = pbd_v3_dot(l1, n);
		pbd_real s;
		if (f0 > rs) {
			if (!(f1 <= rs)) continue;
			s = (f0 - rs) / (f0 - f1);
		} else if (f0 >= -rs) {
			s = 0;
		} else {
			continue;
		}
		const pbd_vec3 pt = pbd_v3_add(l0, pbd_v3_scale(u, s));
		const pbd_vec3 q = pbd_v3_sub(pt, pbd_v3_scale(n, pbd_v3_dot(pt, n)));
		const bool in = f == 0 ? (q.x <= cxs && q.z >= 0 && q.z * cxs <= q.x * czs)
		                       : (q.z <= czs && q.x >= 0 && q.z * cxs >= q.x * czs);
		if (in && s < bs) {
			bs = s;
			bn = n;
		}
	}
	/* Edges: 0-1, 1-3, 0-3 (the diagonal), 0-2, 2-3. */
	static const int edges[5][2] = {{0, 1}, {1, 3}, {0, 3}, {0, 2}, {2, 3}};
	for (int e = 0; e < 5; ++e) {
		const pbd_vec3 va = vtx[edges[e][0]], vb = vtx[edges[e][1]];
		pbd_vec3 dir = pbd_v3(0, 0, 0);
		const pbd_real s = hf_edge_entry(pbd_v3_sub(l0, va), u, pbd_v3_sub(vb, va), rr, &dir);
		if (s < bs) {
			bs = s;
			bn = e < 3 ? n0 : n1;
			pbd_shape_unit(dir, &bn);
		}
	}
	for (int c = 0; c < 4; ++c) {
		const pbd_vec3 f = pbd_v3_sub(l0, vtx[c]);
		const pbd_real s = pbd_shape_ball_entry(f, u, rr);
		if (s < bs) {
			bs = s;
			bn = c == 2 ? n1 : n0;
			pbd_shape_unit(pbd_v3_add(f, pbd_v3_scale(u, s)), &bn);
		}
	}
	if (bs <= 1) hf_take(best, pbd_shape_min(t0 + bs * (t1 - t0), t1), bn);
}

/* Narrows [*t0, *t1] to the parameters at which the segment is inside a block's box grown by the
 * radius and a pad for the rounding of the clipping (a sixteenth of the block's size, plus `tol`
 * for the rounding of the segment's own coordinates); false when it never is. */
static bool hf_block_clip(const hf_view* v, int l, uint32_t bx, uint32_t bz, pbd_vec3 a, pbd_vec3 d, pbd_real radius,
                          pbd_real tol, pbd_real* t0, pbd_real* t1) {
	uint32_t i0, i1, j0, j1;
	pbd_real lo, hi;
	hf_block(v, l, bx, bz, &i0, &i1, &j0, &j1, &lo, &hi);
	const pbd_real x0 = hf_x(v, i0), x1 = hf_x(v, i1), z0 = hf_z(v, j0), z1 = hf_z(v, j1);
	const pbd_real size = PBD_FMAX(PBD_FMAX(x1 - x0, z1 - z0), PBD_FMAX(hi - lo, radius));
	const pbd_real g = radius + size / 16 + tol;
	return pbd_clip_box(a, d, pbd_v3(x0 - g, lo - g, z0 - g), pbd_v3(x1 + g, hi + g, z1 + g), t0, t1);
}

/* The walls, entered from outside the footprint, and the vertical lines under the corners. */
static void hf_walls_sweep(const hf_view* v, pbd_vec3 a, pbd_vec3 d, pbd_real radius, pbd_real tol,
                           hf_sweep_best* best) {
	for (int k = 0; k < 4; ++k) {
		const bool along_z = k < 2, far_side = (k & 1) != 0;
		const pbd_real ac = along_z ? a.x : a.z, dc = along_z ? d.x : d.z;
		const pbd_real plane = far_side ? (along_z ? v->lx : v->lz) + radius : -radius;
		/* Distance to go towards the wall, as a positive number, and the speed towards it. */
		const pbd_real gap = far_side ? ac - plane : plane - ac, speed = far_side ? -dc : dc;
		if (!(gap > 0 && speed > 0 && gap <= speed)) continue;
		const pbd_real t = gap / speed;
		if (!(t < best->t)) continue;
		const pbd_vec3 p = pbd_v3_add(a, pbd_v3_scale(d, t));
		const pbd_real c = along_z ? p.z : p.x, len = along_z ? v->lz : v->lx;
		if (!(c >= 0 && c <= len)) continue;
		const pbd_real hb =
		    along_z ? hf_border_z(v, far_side ? v->nx - 1 : 0, c) : hf_border_x(v, far_side ? v->nz - 1 : 0, c);
		if (!(p.y <= hb)) continue;
		const pbd_real sign = far_side ? 1 : -1;
		hf_take(best, t, along_z ? pbd_v3(sign, 0, 0) : pbd_v3(0, 0, sign));
	}
	/* Corner lines: a 2-D ball entry in xz on the segment clipped to the footprint grown by the
	 * radius, in units of the footprint's size; they count below the corner's height only (above
	 * it, the corner's vertex ball, a cell's, is the first touch). */
	const pbd_real size = PBD_FMAX(PBD_FMAX(v->lx, v->lz), radius), pad = radius + size / 16 + tol;
	pbd_real t0 = 0, t1 = pbd_shape_min(best->t, 1);
	if (!pbd_clip_slab(a.x, d.x, -pad, v->lx + pad, &t0, &t1) || !pbd_clip_slab(a.z, d.z, -pad, v->lz + pad, &t0, &t1))
		return;
	const pbd_real g = pbd_shape_ldexp(1, -pbd_shape_exponent(size));
	const pbd_vec3 p0 = t0 > 0 ? pbd_v3_add(a, pbd_v3_scale(d, t0)) : a, p1 = pbd_v3_add(a, pbd_v3_scale(d, t1));
	const pbd_vec3 u = hf_to_unit(pbd_v3(p1.x - p0.x, 0, p1.z - p0.z), g);
	const pbd_real rs = radius * g;
	for (int c = 0; c < 4; ++c) {
		const bool hx = (c & 1) != 0, hz = (c & 2) != 0;
		const pbd_real cxp = hx ? v->lx : 0, czp = hz ? v->lz : 0;
		const pbd_vec3 f = hf_to_unit(pbd_v3(p0.x - cxp, 0, p0.z - czp), g);
		const pbd_real s = pbd_shape_ball_entry(f, u, rs * rs);
		if (!(s <= 1)) continue;
		const pbd_real t = pbd_shape_min(t0 + s * (t1 - t0), t1);
		if (!(t < best->t)) continue;
		const pbd_real corner_h = hf_height(v, hx ? v->nx - 1 : 0, hz ? v->nz - 1 : 0);
		if (!(a.y + t * d.y <= corner_h)) continue;
		pbd_vec3 n = pbd_v3(hx ? 1 : -1, 0, hz ? 1 : -1);
		pbd_shape_unit(n, &n);
		pbd_shape_unit(pbd_v3_add(f, pbd_v3_scale(u, s)), &n);
		hf_take(best, t, n);
	}
}

static bool hf_sweep_from(const pbd_collider_def* def, pbd_vec3 a, pbd_vec3 b, pbd_real radius, pbd_real da,
                          pbd_real* t, pbd_vec3* normal) {
	if (!(radius >= 0) || !(da > radius)) return false;
	const pbd_vec3 d = pbd_v3_sub(b, a);
	if ((d.x == 0 && d.y == 0 && d.z == 0) || !pbd_v3_is_finite(d)) return false;
	hf_view v;
	hf_view_init(&v, &def->shape.heightfield);
	/* The distance changes by at most the length of the path: a path that stays farther than the
	 * radius from the surface by more than the roundings of the pieces' entries below (a few ulps
	 * of the largest coordinate in sight; 128 are far above them) touches nothing they would find.
	 * For paths and radii within a cell, which put no coordinate near the clamp of hf_to_unit. */
	const pbd_real cell = PBD_FMIN(v.cx, v.cz), ma = pbd_shape_max_abs(a), md = pbd_shape_max_abs(d);
	if (ma <= hf_cap() && md <= cell && radius <= cell) {
		pbd_real ylo, yhi;
		hf_root_minmax(&v, &ylo, &yhi);
		const pbd_real size = ma + md + radius + PBD_FMAX(v.cx, v.cz) + PBD_FMAX(PBD_FABS(ylo), PBD_FABS(yhi));
		if (da - radius > pbd_v3_length(d) + 128 * HF_EPS * size) return false;
	}
	hf_sweep_best best = {2, pbd_v3(0, 1, 0)};
	/* The rounding of points of the segment, for the pads of the clipping. */
	const pbd_real tol = 16 * HF_EPS *
	                     (PBD_FMAX(PBD_FABS(a.x), PBD_FMAX(PBD_FABS(a.y), PBD_FABS(a.z))) +
	                      PBD_FMAX(PBD_FABS(d.x), PBD_FMAX(PBD_FABS(d.y), PBD_FABS(d.z))));
	hf_walls_sweep(&v, a, d, radius, tol, &best);

	/* The cells: the blocks that cover the part of the segment near the field, two by two per
	 * axis at the lowest level that does, then front to back. */
	pbd_real ylo, yhi;
	hf_root_minmax(&v, &ylo, &yhi);
	pbd_real t0 = 0, t1 = pbd_shape_min(best.t, 1);
	const pbd_real size = PBD_FMAX(PBD_FMAX(v.lx, v.lz), PBD_FMAX(yhi - ylo, radius)), g = radius + size / 16 + tol;
	if (pbd_clip_box(a, d, pbd_v3(-g, ylo - g, -g), pbd_v3(v.lx + g, yhi + g, v.lz + g), &t0, &t1)) {
		const pbd_vec3 p0 = t0 > 0 ? pbd_v3_add(a, pbd_v3_scale(d, t0)) : a, p1 = pbd_v3_add(a, pbd_v3_scale(d, t1));
		const pbd_real reach = radius + radius / 16 + tol;
		uint32_t i0 = hf_cell_of(PBD_FMIN(p0.x, p1.x) - reach, v.cx, v.lx, v.nx);
		uint32_t i1 = hf_cell_of(PBD_FMAX(p0.x, p1.x) + reach, v.cx, v.lx, v.nx);
		uint32_t j0 = hf_cell_of(PBD_FMIN(p0.z, p1.z) - reach, v.cz, v.lz, v.nz);
		uint32_t j1 = hf_cell_of(PBD_FMAX(p0.z, p1.z) + reach, v.cz, v.lz, v.nz);
		i0 -= (uint32_t)(i0 > 0);
		j0 -= (uint32_t)(j0 > 0);
		i1 += (uint32_t)(i1 < v.nx - 2);
		j1 += (uint32_t)(j1 < v.nz - 2);
		const int l = hf_start_level(&v, i0, i1, j0, j1);
		hf_node roots[4];
		int nroots = 0;
		for (uint32_t bz = j0 >> l; bz <= j1 >> l; ++bz)
			for (uint32_t bx = i0 >> l; bx <= i1 >> l; ++bx) {
				pbd_real s0 = t0, s1 = t1;
				if (hf_block_clip(&v, l, bx, bz, a, d, radius, tol, &s0, &s1))
					roots[nroots++] = (hf_node){s0, bx, bz, l};
			}
		hf_node stack[HF_STACK];
		int sp = 0;
		hf_push_sorted(stack, &sp, roots, nroots);
		while (sp > 0) {
			const hf_node nd = stack[--sp];
			if (!(nd.key < best.t)) continue;
			if (nd.l == 0) {
				pbd_real s0 = nd.key, s1 = pbd_shape_min(best.t, 1);
				if (hf_block_clip(&v, 0, nd.bx, nd.bz, a, d, radius, tol, &s0, &s1))
					hf_cell_sweep(&v, nd.bx, nd.bz, a, d, s0, s1, radius, &best);
				continue;
			}
			hf_node kids[4];
			int nk = 0;
			for (uint32_t c = 0; c < 4; ++c) {
				const uint32_t kx = 2 * nd.bx + (c & 1), kz = 2 * nd.bz + (c >> 1);
				if (kx >= v.bx[nd.l - 1] || kz >= v.bz[nd.l - 1]) continue;
				pbd_real s0 = nd.key, s1 = pbd_shape_min(best.t, 1);
				if (hf_block_clip(&v, nd.l - 1, kx, kz, a, d, radius, tol, &s0, &s1))
					kids[nk++] = (hf_node){s0, kx, kz, nd.l - 1};
			}
			hf_push_sorted(stack, &sp, kids, nk);
		}
	}
	if (!(best.t <= 1)) return false;
	*t = best.t;
	*normal = best.n;
	return true;
}

static bool hf_sweep(const pbd_collider_def* def, pbd_vec3 a, pbd_vec3 b, pbd_real radius, pbd_real* t,
                     pbd_vec3* normal) {
	if (!(radius >= 0)) return false;
	pbd_vec3 n;
	return hf_sweep_from(def, a, b, radius, hf_distance(def, a, &n), t, normal);
}

/* ---- corners ------------------------------------------------------------------------------- */

/* The outward direction at sample (i, j): up, tilted by the central differences of the heights
 * (one-sided at the border), so always in the upper half where the solid lies below. */
static pbd_vec3 hf_sample_up(const hf_view* v, uint32_t i, uint32_t j) {
	const uint32_t il = i > 0 ? i - 1 : i, ir = i + 1 < v->nx ? i + 1 : i;
	const uint32_t jl = j > 0 ? j - 1 : j, jr = j + 1 < v->nz ? j + 1 : j;
	const pbd_real gx = (hf_height(v, ir, j) - hf_height(v, il, j)) / (hf_x(v, ir) - hf_x(v, il));
	const pbd_real gz = (hf_height(v, i, jr) - hf_height(v, i, jl)) / (hf_z(v, jr) - hf_z(v, jl));
	pbd_vec3 n = pbd_v3(0, 1, 0);
	pbd_shape_unit(pbd_v3(-gx, 1, -gz), &n);
	return n;
}

static pbd_vec3 hf_point(const hf_view* v, uint32_t i, uint32_t j) {
	return pbd_v3(hf_x(v, i), hf_height(v, i, j), hf_z(v, j));
}

/* The samples along an axis (n of them, at x_i = i c) that a feature of the box [lo, hi] can
 * involve: from the last sample at or before lo (an edge from it may reach lo) to the first at or
 * after hi, found from the division's guess and settled by comparisons with the samples' own
 * coordinates. */
static void hf_span(pbd_real lo, pbd_real hi, pbd_real c, pbd_real len, uint32_t n, uint32_t* i0, uint32_t* i1) {
	uint32_t a = hf_cell_of(lo, c, len, n), b = hf_cell_of(hi, c, len, n) + 1;
	while (a > 0 && (pbd_real)a * c >= lo) --a;
	while (b + 1 < n && (pbd_real)(b + 1) * c <= hi) ++b;
	*i0 = a;
	*i1 = b;
}

/* The samples in [lo, hi], in the order of their indices. */
static void hf_corners(const pbd_collider_def* def, pbd_vec3 lo, pbd_vec3 hi, pbd_corner_fn emit, void* ctx) {
	hf_view v;
	hf_view_heights(&v, &def->shape.heightfield);
	if (!(hi.x >= 0 && lo.x <= v.lx && hi.z >= 0 && lo.z <= v.lz)) return;
	uint32_t i0, i1, j0, j1;
	hf_span(lo.x, hi.x, v.cx, v.lx, v.nx, &i0, &i1);
	hf_span(lo.z, hi.z, v.cz, v.lz, v.nz, &j0, &j1);
	for (uint32_t j = j0; j <= j1; ++j)
		for (uint32_t i = i0; i <= i1; ++i) {
			const pbd_vec3 p = hf_point(&v, i, j);
			if (lo.x <= p.x && p.x <= hi.x && lo.y <= p.y && p.y <= hi.y && lo.z <= p.z && p.z <= hi.z)
				emit(ctx, j * v.nx + i, p, hf_sample_up(&v, i, j));
		}
}

/* ---- edges --------------------------------------------------------------------------------- */

/* The upward unit normal of the triangle (a, b, o), or zero for a degenerate one. */
static pbd_vec3 hf_face_up(pbd_vec3 a, pbd_vec3 b, pbd_vec3 o) {
	pbd_vec3 n = pbd_v3_cross(pbd_v3_sub(b, a), pbd_v3_sub(o, a)), u = pbd_v3(0, 0, 0);
	if (n.y < 0) n = pbd_v3_scale(n, -1);
	pbd_shape_unit(n, &u);
	return u;
}

/* Whether grid edge `index` is a ridge, and its outward direction. An edge along x from sample
 * (i, j) is index 3 (j nx + i), along z 3 (j nx + i) + 1, the diagonal of cell (i, j)
 * 3 (j nx + i) + 2. The edge from sample a to sample b lies between the triangles (a, b, o1) and
 * (a, b, o2), where a missing one is the wall that hangs from the border; it is a ridge when it is
 * sharp and the far vertex of each triangle lies below the other's plane (a wall's always does). */
static bool hf_ridge(const hf_view* v, uint32_t index, pbd_vec3* out) {
	const uint32_t kind = index % 3, i = index / 3 % v->nx, j = index / 3 / v->nx;
	uint32_t ib = i, jb = j;
	bool has[2] = {true, true};
	uint32_t oi[2], oj[2];
	if (kind == 0) {
		/* Along x at row j: the cell above's T0 (far vertex (i+1, j+1)), the cell below's T1 (far
		 * vertex (i, j-1)). */
		if (i + 1 >= v->nx) return false;
		ib = i + 1;
		has[0] = j + 1 < v->nz, has[1] = j > 0;
		oi[0] = i + 1, oj[0] = j + 1, oi[1] = i, oj[1] = j > 0 ? j - 1 : 0;
	} else if (kind == 1) {
		/* Along z at column i: the cell right's T1 (far vertex (i+1, j+1)), the cell left's T0 (far
		 * vertex (i-1, j)). */
		if (j + 1 >= v->nz) return false;
		jb = j + 1;
		has[0] = i + 1 < v->nx, has[1] = i > 0;
		oi[0] = i + 1, oj[0] = j + 1, oi[1] = i > 0 ? i - 1 : 0, oj[1] = j;
	} else {
		if (i + 1 >= v->nx || j + 1 >= v->nz) return false;
		ib = i + 1, jb = j + 1;
		oi[0] = i + 1, oj[0] = j, oi[1] = i, oj[1] = j + 1;
	}
	const pbd_vec3 a = hf_point(v, i, j), b = hf_point(v, ib, jb);
	const int k = has[0] ? 0 : 1;
	if (!has[k]) return false;
	const pbd_vec3 o = hf_point(v, oi[k], oj[k]);
	const pbd_vec3 n1 = hf_face_up(a, b, o);
	pbd_vec3 n2;
	if (has[1 - k]) {
		const pbd_vec3 o2 = hf_point(v, oi[1 - k], oj[1 - k]);
		n2 = hf_face_up(a, b, o2);
		if (!(pbd_v3_dot(n1, pbd_v3_sub(o2, a)) < 0)) return false;
	} else {
		/* The wall: horizontal, across the edge, away from the triangle. */
		n2 = pbd_v3(b.z - a.z, 0, a.x - b.x);
		if (pbd_v3_dot(n2, pbd_v3_sub(o, a)) > 0) n2 = pbd_v3_scale(n2, -1);
		const pbd_vec3 w = n2;
		n2 = pbd_v3(0, 0, 0);
		pbd_shape_unit(w, &n2);
	}
	if (!(pbd_v3_dot(n1, n2) < PBD_SHARP_EDGE_COS)) return false;
	*out = pbd_v3(0, 0, 0);
	return pbd_shape_unit(pbd_v3_add(n1, n2), out) > 0;
}

/* The ridges of the field, in the order of their indices: their number, and where index and out are
 * given, the ridges themselves. */
static uint32_t hf_find_ridges(const hf_view* v, uint32_t* index, pbd_vec3* out) {
	uint32_t n = 0;
	for (uint32_t e = 0, end = 3 * v->nx * v->nz; e < end; ++e) {
		pbd_vec3 o;
		if (!hf_ridge(v, e, &o)) continue;
		if (index) index[n] = e, out[n] = o;
		++n;
	}
	return n;
}

/* The ridges whose box meets [lo, hi], in the order of their indices: those of the rows and columns
 * of samples that can reach the box, from the list the build made. */
static void hf_edges(const pbd_collider_def* def, pbd_vec3 lo, pbd_vec3 hi, pbd_edge_fn emit, void* ctx) {
	hf_view v;
	hf_view_init(&v, &def->shape.heightfield);
	hf_view_ridges(&v);
	if (v.nridges == 0 || !(hi.x >= 0 && lo.x <= v.lx && hi.z >= 0 && lo.z <= v.lz)) return;
	uint32_t i0, i1, j0, j1;
	hf_span(lo.x, hi.x, v.cx, v.lx, v.nx, &i0, &i1);
	hf_span(lo.z, hi.z, v.cz, v.lz, v.nz, &j0, &j1);
	for (uint32_t j = j0; j <= j1; ++j) {
		const uint32_t first = 3 * (j * v.nx + i0), last = 3 * (j * v.nx + i1) + 2;
		uint32_t k = 0, n = v.nridges;
		while (k < n) { /* the first ridge at or after `first` */
			const uint32_t mid = k + (n - k) / 2;
			if (v.ridge[mid] < first)
				k = mid + 1;
			else
				n = mid;
		}
		for (; k < v.nridges && v.ridge[k] <= last; ++k) {
			const uint32_t e = v.ridge[k], kind = e % 3, i = e / 3 % v.nx;
			const pbd_vec3 a = hf_point(&v, i, j);
			const pbd_vec3 b = hf_point(&v, kind == 1 ? i : i + 1, kind == 0 ? j : j + 1);
			if (!pbd_segment_bounds_miss(a, b, lo, hi)) emit(ctx, e, a, b, v.ridge_out[k]);
		}
	}
}

const pbd_shape_ops pbd_shape_heightfield_ops = {.name = "heightfield",
                                                 .validate = hf_validate,
                                                 .distance = hf_distance,
                                                 .sweep = hf_sweep,
                                                 .bounds = hf_bounds,
                                                 .data_size = hf_data_size,
                                                 .build = hf_build,
                                                 .triangles = hf_triangles,
                                                 .corners = hf_corners,
                                                 .edges = hf_edges,
                                                 .sweep_from = hf_sweep_from};
