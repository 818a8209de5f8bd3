/* Edges through faces and particles inside colliders, for the collision rows (crossings.h). The
 * crossing count must be cheap enough to run after every step of a 128 x 128 cloth, outside the
 * timed calls: a hashed uniform grid over the triangles' boxes, rebuilt per call into scratch
 * sized once, keeps each edge's candidates to the triangles near it. */
#include "crossings.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Cell coordinates are clamped so that a far-flung vertex (a blown-up cloth) cannot overflow them. */
static const double CELL_CLAMP = 1e9;
/* Items (triangle-cell incidences) per triangle the scratch holds; past it the cells grow. A cell at
 * least the whole mesh's size puts a triangle in 8 cells at most, so the count always fits. */
enum { ITEMS_PER_TRIANGLE = 16, MIN_BUCKETS = 64 };

/* A triangle in a cell, with its box in float rounded outwards: the edges' first test reads it
 * from the cell's list, beside its neighbours, instead of from the triangle's slot. */
typedef struct col_item {
	float lo[3], hi[3];
	uint32_t tri;
} col_item;

void col_crossings_free(col_crossings* c) {
	free(c->tris);
	free(c->edges);
	free(c->boxes);
	free(c->start);
	free(c->items);
	memset(c, 0, sizeof *c);
}

static int compare_u64(const void* a, const void* b) {
	const uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
	return (x > y) - (x < y);
}

bool col_crossings_init(col_crossings* c, const uint32_t* tri, uint32_t nt, uint32_t nv) {
	memset(c, 0, sizeof *c);
	for (size_t k = 0; k < 3 * (size_t)nt; ++k)
		if (tri[k] >= nv) return false;
	size_t buckets = MIN_BUCKETS;
	while (buckets < 2 * (size_t)nt) buckets *= 2;
	const size_t ne_max = 3 * (size_t)nt;
	/* + 1: no zero-sized request for an empty mesh */
	uint64_t* keys = malloc((ne_max + 1) * sizeof *keys);
	c->tris = malloc((ne_max + 1) * sizeof *c->tris);
	c->edges = malloc((2 * ne_max + 1) * sizeof *c->edges);
	c->boxes = malloc((6 * (size_t)nt + 1) * sizeof *c->boxes);
	c->start = malloc((buckets + 1) * sizeof *c->start);
	c->item_capacity = ITEMS_PER_TRIANGLE * (size_t)nt + 64;
	c->items = malloc(c->item_capacity * sizeof *c->items);
	if (!keys || !c->tris || !c->edges || !c->boxes || !c->start || !c->items) {
		free(keys);
		col_crossings_free(c);
		return false;
	}
	c->nv = nv;
	c->nt = nt;
	c->bucket_count = buckets;
	if (ne_max) memcpy(c->tris, tri, ne_max * sizeof *c->tris);
	/* Each undirected edge once: the (low, high) keys of the triangles' sides, sorted, repeats dropped. */
	for (uint32_t t = 0; t < nt; ++t)
		for (int k = 0; k < 3; ++k) {
			const uint32_t a = tri[3 * t + (uint32_t)k], b = tri[3 * t + (uint32_t)(k + 1) % 3];
			const uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
			keys[3 * (size_t)t + (size_t)k] = (uint64_t)lo << 32 | hi;
		}
	qsort(keys, ne_max, sizeof *keys, compare_u64);
	uint32_t ne = 0;
	for (size_t k = 0; k < ne_max; ++k) {
		if (k > 0 && keys[k] == keys[k - 1]) continue;
		c->edges[2 * (size_t)ne] = (uint32_t)(keys[k] >> 32);
		c->edges[2 * (size_t)ne + 1] = (uint32_t)keys[k];
		++ne;
	}
	c->edge_count = ne;
	free(keys);
	return true;
}

/* The grid of one count: cells of side 1 / inv_h from `origin`, and the buckets they map to. A
 * cell's bucket is its row-major index (x fastest) modulo the bucket count, rather than a scatter
 * hash, so that neighbouring cells, which an edge's neighbours query next, sit side by side. */
typedef struct grid {
	double origin[3], inv_h;
	uint64_t stride_y, stride_z;
	size_t mask;
} grid;

/* x >= origin (the grid's bounds hold every finite corner), so truncation is the floor. */
static int64_t cell_index(double x, double origin, double inv_h) {
	double i = (x - origin) * inv_h;
	if (i > CELL_CLAMP) i = CELL_CLAMP;
	if (!(i > 0)) i = 0;
	return (int64_t)i;
}

static size_t bucket_of(const grid* g, int64_t x, int64_t y, int64_t z) {
	return (size_t)(((uint64_t)x + g->stride_y * (uint64_t)y + g->stride_z * (uint64_t)z) & g->mask);
}

typedef struct cell_range {
	int64_t lo[3], hi[3];
} cell_range;

static cell_range range_of(const grid* g, const double* box) {
	cell_range r;
	for (int k = 0; k < 3; ++k) {
		r.lo[k] = cell_index(box[k], g->origin[k], g->inv_h);
		r.hi[k] = cell_index(box[3 + k], g->origin[k], g->inv_h);
	}
	return r;
}

/* Segment p-q against triangle a-b-c (Möller-Trumbore), without dividing by the determinant: the
 * segment's parameter in [0, 1] and the barycentric coordinates in [0, 1], edges included. A
 * segment parallel to the triangle's plane (determinant exactly 0) does not pass through it. */
static bool segment_hits_triangle(const double* p, const double* q, const double* a, const double* b, const double* c) {
	const double d[3] = {q[0] - p[0], q[1] - p[1], q[2] - p[2]};
	const double e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
	const double e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
	const double pv[3] = {d[1] * e2[2] - d[2] * e2[1], d[2] * e2[0] - d[0] * e2[2], d[0] * e2[1] - d[1] * e2[0]};
	double det = e1[0] * pv[0] + e1[1] * pv[1] + e1[2] * pv[2];
	if (det == 0 || !isfinite(det)) return false;
	const double tv[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]};
	const double qv[3] = {tv[1] * e1[2] - tv[2] * e1[1], tv[2] * e1[0] - tv[0] * e1[2], tv[0] * e1[1] - tv[1] * e1[0]};
	double u = tv[0] * pv[0] + tv[1] * pv[1] + tv[2] * pv[2];
	double v = d[0] * qv[0] + d[1] * qv[1] + d[2] * qv[2];
	double t = e2[0] * qv[0] + e2[1] * qv[1] + e2[2] * qv[2];
	if (det < 0) {
		det = -det;
		u = -u;
		v = -v;
		t = -t;
	}
	return u >= 0 && v >= 0 && u + v <= det && t >= 0 && t <= det;
}

/* Finite inputs only: plain comparisons, which the compiler keeps inline (fmin and fmax are calls). */
static double min2(double a, double b) { return a < b ? a : b; }
static double max2(double a, double b) { return a > b ? a : b; }

/* A float on x's side of it, for boxes in float that still hold the double ones: the pad, 16 of
 * float's half-ulps and more than its smallest step, beats the rounding; past float's range the
 * bound goes to its end (or to infinity, which is on the right side). */
static float float_below(double x) {
	if (x > (double)FLT_MAX) return FLT_MAX;
	return (float)(x - (fabs(x) * 1e-6 + 1e-30));
}

static float float_above(double x) {
	if (x < -(double)FLT_MAX) return -FLT_MAX;
	return (float)(x + (fabs(x) * 1e-6 + 1e-30));
}

static bool finite3(const double* p) { return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]); }

uint32_t col_count_crossings(col_crossings* c, const double* xyz) {
	const uint32_t nt = c->nt;
	if (nt == 0) return 0;
	/* The triangles' boxes, the grid's bounds and the mean triangle size (largest box side). */
	double lo[3] = {(double)INFINITY, (double)INFINITY, (double)INFINITY};
	double hi[3] = {-(double)INFINITY, -(double)INFINITY, -(double)INFINITY};
	double size_sum = 0;
	uint32_t finite_count = 0;
	for (uint32_t t = 0; t < nt; ++t) {
		double* box = c->boxes + 6 * (size_t)t;
		const double* v[3] = {xyz + 3 * (size_t)c->tris[3 * t], xyz + 3 * (size_t)c->tris[3 * t + 1],
		                      xyz + 3 * (size_t)c->tris[3 * t + 2]};
		if (!finite3(v[0]) || !finite3(v[1]) || !finite3(v[2])) {
			box[0] = (double)NAN;
			continue;
		}
		double side = 0;
		for (int k = 0; k < 3; ++k) {
			box[k] = min2(v[0][k], min2(v[1][k], v[2][k]));
			box[3 + k] = max2(v[0][k], max2(v[1][k], v[2][k]));
			side = max2(side, box[3 + k] - box[k]);
			lo[k] = min2(lo[k], box[k]);
			hi[k] = max2(hi[k], box[3 + k]);
		}
		size_sum += side;
		++finite_count;
	}
	if (finite_count == 0) return 0;
	double h = size_sum / finite_count;
	if (!(h > 0) || !isfinite(h)) h = 1;
	grid g;
	memcpy(g.origin, lo, sizeof lo);
	g.mask = c->bucket_count - 1;
	/* Coarser cells until every triangle's cells fit the items (a few huge triangles of a blown-up
	 * cloth would otherwise cover millions of cells). */
	bool fits = false;
	for (int grow = 0; grow < 128 && !fits; ++grow) {
		if (grow > 0) h *= 2;
		g.inv_h = 1 / h;
		double items = 0;
		for (uint32_t t = 0; t < nt && items <= (double)c->item_capacity; ++t) {
			const double* box = c->boxes + 6 * (size_t)t;
			if (isnan(box[0])) continue;
			const cell_range r = range_of(&g, box);
			items +=
			    (double)(r.hi[0] - r.lo[0] + 1) * (double)(r.hi[1] - r.lo[1] + 1) * (double)(r.hi[2] - r.lo[2] + 1);
		}
		fits = items <= (double)c->item_capacity;
	}
	if (!fits) return UINT32_MAX;
	g.stride_y = (uint64_t)cell_index(hi[0], lo[0], g.inv_h) + 1;
	g.stride_z = g.stride_y * ((uint64_t)cell_index(hi[1], lo[1], g.inv_h) + 1);

	/* Counting sort of (cell's bucket, triangle): start[b] counts, then ends, then (filled backwards)
	 * begins; start[bucket_count] is the total. */
	const size_t nb = c->bucket_count;
	memset(c->start, 0, (nb + 1) * sizeof *c->start);
	for (uint32_t t = 0; t < nt; ++t) {
		const double* box = c->boxes + 6 * (size_t)t;
		if (isnan(box[0])) continue;
		const cell_range r = range_of(&g, box);
		for (int64_t z = r.lo[2]; z <= r.hi[2]; ++z)
			for (int64_t y = r.lo[1]; y <= r.hi[1]; ++y)
				for (int64_t x = r.lo[0]; x <= r.hi[0]; ++x) c->start[bucket_of(&g, x, y, z)]++;
	}
	for (size_t b = 1; b < nb; ++b) c->start[b] += c->start[b - 1];
	c->start[nb] = c->start[nb - 1];
	for (uint32_t t = nt; t-- > 0;) {
		const double* box = c->boxes + 6 * (size_t)t;
		if (isnan(box[0])) continue;
		const cell_range r = range_of(&g, box);
		for (int64_t z = r.lo[2]; z <= r.hi[2]; ++z)
			for (int64_t y = r.lo[1]; y <= r.hi[1]; ++y)
				for (int64_t x = r.lo[0]; x <= r.hi[0]; ++x) c->items[--c->start[bucket_of(&g, x, y, z)]].tri = t;
	}
	for (uint32_t i = 0; i < c->start[nb]; ++i) {
		col_item* it = &c->items[i];
		const double* box = c->boxes + 6 * (size_t)it->tri;
		for (int k = 0; k < 3; ++k) {
			it->lo[k] = float_below(box[k]);
			it->hi[k] = float_above(box[3 + k]);
		}
	}

	/* Each edge against the triangles of the cells its box touches; a triangle met in several of
	 * them is tested in the first only, without a mark per triangle to clear. */
	uint32_t crossing = 0;
	for (uint32_t e = 0; e < c->edge_count; ++e) {
		const uint32_t ia = c->edges[2 * (size_t)e], ib = c->edges[2 * (size_t)e + 1];
		const double *p = xyz + 3 * (size_t)ia, *q = xyz + 3 * (size_t)ib;
		if (!finite3(p) || !finite3(q)) continue;
		double box[6];
		float fbox[6];
		for (int k = 0; k < 3; ++k) {
			box[k] = min2(p[k], q[k]);
			box[3 + k] = max2(p[k], q[k]);
			fbox[k] = float_below(box[k]);
			fbox[3 + k] = float_above(box[3 + k]);
		}
		const cell_range r = range_of(&g, box);
		bool hit = false;
		for (int64_t z = r.lo[2]; z <= r.hi[2] && !hit; ++z)
			for (int64_t y = r.lo[1]; y <= r.hi[1] && !hit; ++y)
				for (int64_t x = r.lo[0]; x <= r.hi[0] && !hit; ++x) {
					const size_t b = bucket_of(&g, x, y, z);
					for (uint32_t i = c->start[b]; i < c->start[b + 1] && !hit; ++i) {
						const col_item* it = &c->items[i];
						if (it->lo[0] > fbox[3] || it->hi[0] < fbox[0] || it->lo[1] > fbox[4] || it->hi[1] < fbox[1] ||
						    it->lo[2] > fbox[5] || it->hi[2] < fbox[2])
							continue;
						const uint32_t t = it->tri;
						const uint32_t* v = c->tris + 3 * (size_t)t;
						if (v[0] == ia || v[1] == ia || v[2] == ia || v[0] == ib || v[1] == ib || v[2] == ib) continue;
						/* The pair meets in every cell the two ranges share: test it in the first. */
						const double* tb = c->boxes + 6 * (size_t)t;
						const int64_t tx = cell_index(tb[0], g.origin[0], g.inv_h);
						const int64_t ty = cell_index(tb[1], g.origin[1], g.inv_h);
						const int64_t tz = cell_index(tb[2], g.origin[2], g.inv_h);
						if (x != (tx > r.lo[0] ? tx : r.lo[0]) || y != (ty > r.lo[1] ? ty : r.lo[1]) ||
						    z != (tz > r.lo[2] ? tz : r.lo[2]))
							continue;
						hit = segment_hits_triangle(p, q, xyz + 3 * (size_t)v[0], xyz + 3 * (size_t)v[1],
						                            xyz + 3 * (size_t)v[2]);
					}
				}
		if (hit) ++crossing;
	}
	return crossing;
}

uint32_t col_count_crossings_brute(const col_crossings* c, const double* xyz) {
	uint32_t crossing = 0;
	for (uint32_t e = 0; e < c->edge_count; ++e) {
		const uint32_t ia = c->edges[2 * (size_t)e], ib = c->edges[2 * (size_t)e + 1];
		const double *p = xyz + 3 * (size_t)ia, *q = xyz + 3 * (size_t)ib;
		if (!finite3(p) || !finite3(q)) continue;
		for (uint32_t t = 0; t < c->nt; ++t) {
			const uint32_t* v = c->tris + 3 * (size_t)t;
			if (v[0] == ia || v[1] == ia || v[2] == ia || v[0] == ib || v[1] == ib || v[2] == ib) continue;
			const double *a = xyz + 3 * (size_t)v[0], *b = xyz + 3 * (size_t)v[1], *d = xyz + 3 * (size_t)v[2];
			if (!finite3(a) || !finite3(b) || !finite3(d)) continue;
			if (segment_hits_triangle(p, q, a, b, d)) {
				++crossing;
				break;
			}
		}
	}
	return crossing;
}

double col_shape_distance(const col_shape* s, const double p[3]) {
	switch (s->kind) {
	case COL_SHAPE_PLANE:
		return s->normal[0] * p[0] + s->normal[1] * p[1] + s->normal[2] * p[2] - s->offset;
	case COL_SHAPE_SPHERE: {
		const double dx = p[0] - s->center[0], dy = p[1] - s->center[1], dz = p[2] - s->center[2];
		return sqrt(dx * dx + dy * dy + dz * dz) - s->radius;
	}
	case COL_SHAPE_BOX: {
		double outside = 0, inside = -(double)INFINITY;
		for (int k = 0; k < 3; ++k) {
			const double d = fabs(p[k] - s->center[k]) - s->half[k];
			if (d > 0) outside += d * d;
			inside = fmax(inside, d);
		}
		return outside > 0 ? sqrt(outside) : inside;
	}
	}
	return (double)NAN;
}

uint32_t col_count_inside(const double* xyz, uint32_t np, const col_shape* shapes, uint32_t shape_count) {
	uint32_t inside = 0;
	for (uint32_t i = 0; i < np; ++i)
		for (uint32_t k = 0; k < shape_count; ++k)
			if (col_shape_distance(&shapes[k], xyz + 3 * (size_t)i) < -COL_INSIDE_TOLERANCE) {
				++inside;
				break;
			}
	return inside;
}
