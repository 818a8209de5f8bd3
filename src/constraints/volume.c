/* Volume constraints: the volume enclosed by a closed triangle mesh (a balloon), C = V(x) - pressure V0, one
 * scalar constraint over every particle of the mesh (Müller et al. 2007, section 4.4; docs/constraints.md).
 *
 * A constraint's size varies with its mesh, so its lists live in the family's data block (family.h) as 32-bit
 * words at the record's adr: first its np distinct particles (world indices, ascending), then its nt triangles as
 * three positions in that list each. The gradient needs one vector per particle of the constraint: the working
 * memory holds two arrays of the largest np, the positions relative to the first particle and the gradients,
 * sized when constraints are added or loaded. With more particles than PBD_FAMILY_MAX_ARITY a volume goes to the
 * partition's serial group, which is where a rare global constraint belongs. */
#include <stdlib.h>
#include <string.h>

#include "constraints/rows.h"
#include "model/world.h"

/* Hot data. The kernels work with 6 V (no factor per triangle): C' = 6 V - 6 target with gradient 6 dV/dx, which is
 * the same projection as C = V - target when the compliance is 36 alpha (the multiplier is then lambda / 6). s is
 * the iteration-corrected PBD stiffness, or 36 alpha for XPBD (see refresh). */
typedef struct pbd_volume_c {
	uint32_t adr; /* first word of the constraint's lists in the data block */
	uint32_t np;  /* distinct particles */
	uint32_t nt;  /* triangles */
	uint32_t spare;
	pbd_real target6; /* 6 pressure V0, m^3 */
	pbd_real s;
} pbd_volume_c;

/* Cold data: the parameters as given. */
typedef struct pbd_volume_p {
	pbd_real rest;     /* V0, m^3 */
	pbd_real pressure; /* target over rest */
	pbd_real stiffness;
	pbd_real compliance; /* m^3/Pa */
} pbd_volume_p;

_Static_assert(sizeof(pbd_volume_c) == 4 * sizeof(uint32_t) + 2 * sizeof(pbd_real), "padding in pbd_volume_c");
_Static_assert(sizeof(pbd_volume_p) == 4 * sizeof(pbd_real), "padding in pbd_volume_p");

#define FAM(w)   (&(w)->fam[PBD_FAMILY_VOLUME])
#define HOT(f)   ((pbd_volume_c*)(f)->hot)
#define COLD(f)  ((pbd_volume_p*)(f)->cold)
#define WORDS(f) ((const uint32_t*)(f)->data)

static const pbd_softness_fields softness =
    PBD_SOFTNESS_FIELDS(PBD_FAMILY_VOLUME, pbd_volume_c, pbd_volume_p, 36, "constraint");

pbd_volume_def pbd_volume_def_default(void) {
	pbd_volume_def d;
	memset(&d, 0, sizeof d);
	d.rest_volume = -1;
	d.pressure = 1;
	d.stiffness = 1;
	d.compliance = 0;
	return d;
}

/* True when the record's lists lie inside the data block: a loaded record is checked before anything reads
 * them, and particles() answers none for one that is not. */
static bool lists_fit(const pbd_family* f, const pbd_volume_c* c) {
	const uint64_t words = f->data_size / sizeof(uint32_t);
	return (uint64_t)c->adr + c->np + 3 * (uint64_t)c->nt <= words;
}

/* ---- adding ------------------------------------------------------------------------------------------------- */

typedef struct edge_key {
	uint64_t key; /* from << 32 | to */
	uint32_t tri;
	uint32_t spare;
} edge_key;

static int cmp_edge(const void* pa, const void* pb) {
	const uint64_t a = ((const edge_key*)pa)->key, b = ((const edge_key*)pb)->key;
	return a < b ? -1 : a > b;
}

static int cmp_u32(const void* pa, const void* pb) {
	const uint32_t a = *(const uint32_t*)pa, b = *(const uint32_t*)pb;
	return a < b ? -1 : a > b;
}

static bool has_edge(const edge_key* e, size_t n, uint64_t key) {
	size_t lo = 0, hi = n;
	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;
		if (e[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && e[lo].key == key;
}

/* The distinct particles of a triangle list, sorted, into out (3 nt entries of room); returns their count. */
static uint32_t distinct(const uint32_t* tri, uint32_t nt, uint32_t* out) {
	const size_t n = 3 * (size_t)nt;
	memcpy(out, tri, n * sizeof *out);
	qsort(out, n, sizeof *out, cmp_u32);
	uint32_t m = 0;
	for (size_t i = 0; i < n; ++i)
		if (m == 0 || out[i] != out[m - 1]) out[m++] = out[i];
	return m;
}

/* Position of particle p in the sorted list. */
static uint32_t local_of(const uint32_t* list, uint32_t n, uint32_t p) {
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		const uint32_t mid = lo + (hi - lo) / 2;
		if (list[mid] < p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The enclosed volume in double from the full positions, relative to particle o, and the largest distance of a
 * vertex from o. */
static double mesh_volume(const pbd_world* w, const uint32_t* tri, uint32_t nt, uint32_t o, double* extent) {
	double v6 = 0, ext2 = 0;
	for (uint32_t t = 0; t < nt; ++t) {
		double r[3][3];
		for (int j = 0; j < 3; ++j) {
			const uint32_t i = tri[3 * (size_t)t + (size_t)j];
			const pbd_real* x = &w->x[i].x;
			const pbd_real* xo = &w->x[o].x;
			const pbd_real* l = &w->x_lo[i].x;
			const pbd_real* lo = &w->x_lo[o].x;
			double d2 = 0;
			for (int k = 0; k < 3; ++k) {
				r[j][k] = ((double)x[k] - (double)xo[k]) + ((double)l[k] - (double)lo[k]);
				d2 += r[j][k] * r[j][k];
			}
			if (d2 > ext2) ext2 = d2;
		}
		v6 += r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) + r[0][1] * (r[1][2] * r[2][0] - r[1][0] * r[2][2]) +
		      r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]);
	}
	if (extent) *extent = sqrt(ext2);
	return v6 / 6;
}

/* Checks one def; on success *np is its number of distinct particles. edges and verts are scratch for 3 nt
 * entries. */
static pbd_status validate(pbd_world* w, uint32_t k, const pbd_volume_def* d, edge_key* edges, uint32_t* verts,
                           uint32_t* np) {
	const char* fn = "pbd_world_add_volumes";
	const uint32_t nt = d->triangle_count;
	const uint32_t* tri = d->triangles;
	for (uint32_t t = 0; t < nt; ++t) {
		const uint32_t* v = tri + 3 * (size_t)t;
		for (int j = 0; j < 3; ++j)
			if (v[j] >= w->np)
				return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
				                "%s: constraint %u: triangle %u: particle index %u out of range (%u particles)", fn, k,
				                t, v[j], w->np);
		if (v[0] == v[1] || v[1] == v[2] || v[0] == v[2])
			return pbd_fail(w, PBD_ERR_DEGENERATE, "%s: constraint %u: triangle %u repeats a particle (%u, %u, %u)", fn,
			                k, t, v[0], v[1], v[2]);
		for (int j = 0; j < 3; ++j) {
			edge_key* e = &edges[3 * (size_t)t + (size_t)j];
			e->key = (uint64_t)v[j] << 32 | v[(j + 1) % 3];
			e->tri = t;
			e->spare = 0;
		}
	}
	/* Closed and consistently wound: every directed edge a->b occurs once, and so does b->a. Then every edge has
	 * exactly two triangles, running along it in opposite directions. */
	const size_t ne = 3 * (size_t)nt;
	qsort(edges, ne, sizeof *edges, cmp_edge);
	for (size_t i = 0; i + 1 < ne; ++i)
		if (edges[i].key == edges[i + 1].key) {
			const uint32_t t0 = edges[i].tri < edges[i + 1].tri ? edges[i].tri : edges[i + 1].tri;
			const uint32_t t1 = edges[i].tri < edges[i + 1].tri ? edges[i + 1].tri : edges[i].tri;
			return pbd_fail(w, PBD_ERR_DEGENERATE,
			                "%s: constraint %u: triangles %u and %u both run from particle %u to %u: the winding is "
			                "inconsistent or the edge has more than two triangles",
			                fn, k, t0, t1, (uint32_t)(edges[i].key >> 32), (uint32_t)edges[i].key);
		}
	for (size_t i = 0; i < ne; ++i) {
		const uint64_t key = edges[i].key;
		if (!has_edge(edges, ne, (key << 32) | (key >> 32)))
			return pbd_fail(w, PBD_ERR_DEGENERATE,
			                "%s: constraint %u: the edge from particle %u to %u (triangle %u) has no triangle on its "
			                "other side: the mesh is not closed",
			                fn, k, (uint32_t)(key >> 32), (uint32_t)key, edges[i].tri);
	}
	*np = distinct(tri, nt, verts);
	double extent = 0;
	const double v = mesh_volume(w, tri, nt, verts[0], &extent);
	/* The kernels sum w |grad 6V|^2 with |grad_i 6V| up to the area of the triangles around i: bounded by
	 * 12 nt extent^2, it must leave the scalar's range room for a balloon growing several times. */
	const double g = 12.0 * nt * extent * extent;
	if (!(g * g * PBD_INV_MASS_MAX <= 1e-4 * (double)PBD_REAL_MAX))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "%s: constraint %u: the mesh (%u triangles, %.3g m across) is too large "
		                "for the scalar's range",
		                fn, k, nt, extent);
	if (v < 0)
		return pbd_fail(w, PBD_ERR_DEGENERATE,
		                "%s: constraint %u: the mesh encloses a negative volume (%.6g m^3): it is wound inside out "
		                "(clockwise seen from outside); reverse its triangles",
		                fn, k, v);
	if (d->rest_volume < 0 && !(v > 0 && (pbd_real)v > 0 && v <= (double)PBD_REAL_MAX))
		return pbd_fail(w, PBD_ERR_DEGENERATE, "%s: constraint %u: the mesh encloses no volume (%.6g m^3)", fn, k, v);
	return PBD_OK;
}

static pbd_status check_params(pbd_world* w, const char* fn, uint32_t k, pbd_real pressure, pbd_real stiffness,
                               pbd_real compliance) {
	if (!pbd_is_finite(pressure) || !pbd_is_finite(stiffness) || !pbd_is_finite(compliance))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: constraint %u: a parameter is not finite", fn, k);
	if (!(pressure > 0)) return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: constraint %u: pressure must be > 0", fn, k);
	if (stiffness < 0 || stiffness > 1)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: constraint %u: stiffness must be in [0, 1]", fn, k);
	/* 36 alpha must be a number (the kernels' scaled compliance). */
	if (compliance < 0 || !((double)compliance * 36 <= (double)PBD_REAL_MAX))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: constraint %u: compliance must be in [0, %g]", fn, k,
		                (double)PBD_REAL_MAX / 36);
	return PBD_OK;
}

static bool target_ok(pbd_real rest, pbd_real pressure) {
	const double t6 = 6.0 * (double)rest * (double)pressure;
	return t6 <= (double)PBD_REAL_MAX && (pbd_real)t6 > 0;
}

pbd_status pbd_world_add_volumes(pbd_world* w, uint32_t count, const pbd_volume_def* defs, uint32_t* first) {
	const char* fn = "pbd_world_add_volumes";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	if (count == 0) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: count is 0", fn);
	if (!defs) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: defs is NULL", fn);
	uint32_t max_nt = 0;
	for (uint32_t k = 0; k < count; ++k) {
		const pbd_volume_def* d = &defs[k];
		if (!d->triangles) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: constraint %u: triangles is NULL", fn, k);
		if (d->triangle_count < 4 || d->triangle_count > UINT32_MAX / 3)
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
			                "%s: constraint %u: triangle_count %u (a closed mesh has at least 4 triangles)", fn, k,
			                d->triangle_count);
		if (!pbd_is_finite(d->rest_volume))
			return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: constraint %u: rest_volume is not finite", fn, k);
		if (d->rest_volume == 0)
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
			                "%s: constraint %u: rest_volume must be > 0, or negative for the current volume", fn, k);
		const pbd_status st = check_params(w, fn, k, d->pressure, d->stiffness, d->compliance);
		if (st != PBD_OK) return st;
		if (d->triangle_count > max_nt) max_nt = d->triangle_count;
	}
	const size_t scratch = 3 * (size_t)max_nt;
	edge_key* edges = (edge_key*)pbd_alloc(&w->mem, scratch * sizeof *edges);
	uint32_t* verts = (uint32_t*)pbd_alloc(&w->mem, scratch * sizeof *verts);
	pbd_status st = PBD_OK;
	if (!edges || !verts) st = pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
	pbd_family* f = FAM(w);
	uint64_t words = f->data_size / sizeof(uint32_t);
	uint32_t max_np = 0;
	for (uint32_t k = 0; k < count && st == PBD_OK; ++k) {
		uint32_t np = 0;
		st = validate(w, k, &defs[k], edges, verts, &np);
		if (st != PBD_OK) break;
		const pbd_real rest = defs[k].rest_volume > 0
		                          ? defs[k].rest_volume
		                          : (pbd_real)mesh_volume(w, defs[k].triangles, defs[k].triangle_count, verts[0], NULL);
		if (!target_ok(rest, defs[k].pressure))
			st = pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: constraint %u: pressure x rest volume is out of range", fn, k);
		words += np + 3 * (uint64_t)defs[k].triangle_count;
		if (np > max_np) max_np = np;
	}
	if (st == PBD_OK && words > UINT32_MAX)
		st = pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: the meshes of the volume constraints exceed 2^32 indices", fn);
	if (st == PBD_OK && pbd_family_reserve_data(w, PBD_FAMILY_VOLUME, (size_t)words * sizeof(uint32_t),
	                                            2 * (size_t)max_np * sizeof(pbd_vec3)) != PBD_OK)
		st = pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for the meshes", fn);
	uint32_t base = 0;
	if (st == PBD_OK) {
		base = pbd_family_append(w, PBD_FAMILY_VOLUME, count);
		if (base == UINT32_MAX)
			st = pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %u constraints", fn, count);
	}
	for (uint32_t k = 0; k < count && st == PBD_OK; ++k) {
		const pbd_volume_def* d = &defs[k];
		uint32_t* data = (uint32_t*)f->data;
		const uint32_t adr = (uint32_t)(f->data_size / sizeof(uint32_t));
		const uint32_t np = distinct(d->triangles, d->triangle_count, verts);
		memcpy(data + adr, verts, (size_t)np * sizeof *verts);
		uint32_t* tl = data + adr + np;
		for (size_t i = 0; i < 3 * (size_t)d->triangle_count; ++i) tl[i] = local_of(verts, np, d->triangles[i]);
		f->data_size += (np + 3 * (size_t)d->triangle_count) * sizeof(uint32_t);
		pbd_volume_c* c = &HOT(f)[base + k];
		pbd_volume_p* p = &COLD(f)[base + k];
		c->adr = adr;
		c->np = np;
		c->nt = d->triangle_count;
		p->rest = d->rest_volume > 0 ? d->rest_volume
		                             : (pbd_real)mesh_volume(w, d->triangles, d->triangle_count, verts[0], NULL);
		p->pressure = d->pressure;
		p->stiffness = d->stiffness;
		p->compliance = d->compliance;
		c->target6 = (pbd_real)(6.0 * (double)p->rest * (double)p->pressure);
	}
	pbd_free(&w->mem, edges, scratch * sizeof *edges);
	pbd_free(&w->mem, verts, scratch * sizeof *verts);
	if (st == PBD_OK && first) *first = base;
	return st;
}

/* ---- settings and queries ----------------------------------------------------------------------------------- */

pbd_status pbd_world_set_volume_pressure(pbd_world* w, uint32_t index, pbd_real pressure) {
	const char* fn = "pbd_world_set_volume_pressure";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_family* f = FAM(w);
	if (index >= f->n) return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: constraint %u out of range (%u)", fn, index, f->n);
	if (!pbd_is_finite(pressure)) return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: pressure is not finite", fn);
	pbd_volume_p* p = &COLD(f)[f->slot[index]];
	if (!(pressure > 0) || !target_ok(p->rest, pressure))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: pressure %.6g is out of range", fn, (double)pressure);
	p->pressure = pressure;
	HOT(f)[f->slot[index]].target6 = (pbd_real)(6.0 * (double)p->rest * (double)pressure);
	w->stats_valid = false;
	return PBD_OK;
}

pbd_status pbd_world_set_volume_material(pbd_world* w, uint32_t first, uint32_t count, pbd_real stiffness,
                                         pbd_real compliance) {
	const char* fn = "pbd_world_set_volume_material";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_status st = pbd_family_check_range(w, fn, FAM(w), first, count);
	if (st == PBD_OK) st = check_params(w, fn, first, 1, stiffness, compliance);
	if (st == PBD_OK) pbd_family_write_softness(w, &softness, first, count, stiffness, compliance);
	return st;
}

uint32_t pbd_world_volume_count(const pbd_world* w) { return w ? FAM(w)->n : 0; }

pbd_status pbd_world_get_volume(const pbd_world* w, uint32_t index, pbd_volume_def* out, uint32_t* indices,
                                uint32_t capacity) {
	if (!w || !out) return PBD_ERR_INVALID_ARGUMENT;
	const pbd_family* f = FAM(w);
	if (index >= f->n)
		return pbd_fail((pbd_world*)w, PBD_ERR_OUT_OF_RANGE, "pbd_world_get_volume: constraint %u out of range (%u)",
		                index, f->n);
	const pbd_volume_c* c = &HOT(f)[f->slot[index]];
	const pbd_volume_p* p = &COLD(f)[f->slot[index]];
	*out = pbd_volume_def_default();
	out->triangle_count = c->nt;
	out->rest_volume = p->rest;
	out->pressure = p->pressure;
	out->stiffness = p->stiffness;
	out->compliance = p->compliance;
	out->triangles = NULL;
	if (indices && capacity / 3 >= c->nt) {
		const uint32_t* pl = WORDS(f) + c->adr;
		const uint32_t* tl = pl + c->np;
		for (size_t i = 0; i < 3 * (size_t)c->nt; ++i) indices[i] = pl[tl[i]];
		out->triangles = indices;
	}
	return PBD_OK;
}

/* The enclosed volume in double from the full positions x + x_lo, relative to the first particle. */
static double current_volume(const pbd_world* w, const pbd_family* f, const pbd_volume_c* c) {
	const uint32_t* pl = WORDS(f) + c->adr;
	const uint32_t* tl = pl + c->np;
	const uint32_t o = pl[0];
	double v6 = 0;
	for (uint32_t t = 0; t < c->nt; ++t) {
		double r[3][3];
		for (int j = 0; j < 3; ++j) {
			const uint32_t i = pl[tl[3 * (size_t)t + (size_t)j]];
			const pbd_real* x = &w->x[i].x;
			const pbd_real* xo = &w->x[o].x;
			const pbd_real* l = &w->x_lo[i].x;
			const pbd_real* lo = &w->x_lo[o].x;
			for (int k = 0; k < 3; ++k) r[j][k] = ((double)x[k] - (double)xo[k]) + ((double)l[k] - (double)lo[k]);
		}
		v6 += r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) + r[0][1] * (r[1][2] * r[2][0] - r[1][0] * r[2][2]) +
		      r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]);
	}
	return v6 / 6;
}

pbd_status pbd_world_measure_volume(const pbd_world* w, uint32_t index, double* volume, double* target) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	const pbd_family* f = FAM(w);
	if (index >= f->n)
		return pbd_fail((pbd_world*)w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_world_measure_volume: constraint %u out of range (%u)", index, f->n);
	const pbd_volume_c* c = &HOT(f)[f->slot[index]];
	const pbd_volume_p* p = &COLD(f)[f->slot[index]];
	if (volume) *volume = current_volume(w, f, c);
	if (target) *target = (double)p->rest * (double)p->pressure;
	return PBD_OK;
}

/* ---- the family ------------------------------------------------------------------------------------------- */

/* PBD: k' = 1 - (1 - k)^(1/n). XPBD: 36 alpha, the compliance of the 6 V form. */
static void refresh(pbd_family* f, const pbd_step_ctx* ctx) { pbd_family_refresh_softness(f, &softness, ctx); }

static uint32_t particles(const pbd_family* f, uint32_t k, uint32_t first, uint32_t* out, uint32_t cap) {
	const pbd_volume_c* c = &HOT(f)[k];
	if (!lists_fit(f, c)) return 0;
	const uint32_t* pl = WORDS(f) + c->adr;
	for (uint32_t i = first; i < c->np && i - first < cap; ++i) out[i - first] = pl[i];
	return c->np;
}

/* 6 V at the current positions, relative to the first particle, and its gradient per particle of the list into
 * g: each triangle (a, b, c) adds its doubled area vector n = (x_b - x_a) x (x_c - x_a) to its three corners and
 * x_a . n to 6 V. Around a vertex of a closed mesh the n's sum to the sum of x_j x x_k (docs/constraints.md), the
 * gradient of 6 V, and each term is translation-invariant, so nothing grows with the distance from the origin. */
static pbd_real evaluate(const pbd_step_ctx* ctx, const pbd_family* f, const pbd_volume_c* c) {
	const uint32_t* restrict pl = WORDS(f) + c->adr;
	const uint32_t* restrict tl = pl + c->np;
	pbd_vec3* restrict r = (pbd_vec3*)f->work;
	pbd_vec3* restrict g = r + c->np;
	const uint32_t o = pl[0];
	for (uint32_t i = 0; i < c->np; ++i) {
		r[i] = pbd_rel(ctx, pl[i], o);
		g[i] = pbd_v3(0, 0, 0);
	}
	pbd_real v6 = 0;
	for (uint32_t t = 0; t < c->nt; ++t) {
		const uint32_t a = tl[3 * (size_t)t], b = tl[3 * (size_t)t + 1], cc = tl[3 * (size_t)t + 2];
		const pbd_vec3 ra = r[a];
		const pbd_vec3 n = pbd_v3_cross(pbd_v3_sub(r[b], ra), pbd_v3_sub(r[cc], ra));
		v6 += pbd_v3_dot(ra, n);
		g[a] = pbd_v3_add(g[a], n);
		g[b] = pbd_v3_add(g[b], n);
		g[cc] = pbd_v3_add(g[cc], n);
	}
	return v6;
}

static void project(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_volume_c* restrict c = HOT(f);
	for (uint32_t k = first; k < end; ++k) {
		const pbd_real v6 = evaluate(ctx, f, &c[k]);
		const pbd_vec3* g = (const pbd_vec3*)f->work + c[k].np;
		pbd_constraint_project(ctx, WORDS(f) + c[k].adr, c[k].np, v6 - c[k].target6, g, c[k].s, &f->lambda[k]);
	}
}

static void jacobi(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_volume_c* restrict c = HOT(f);
	for (uint32_t k = first; k < end; ++k) {
		const pbd_real v6 = evaluate(ctx, f, &c[k]);
		const pbd_vec3* g = (const pbd_vec3*)f->work + c[k].np;
		pbd_constraint_jacobi(ctx, WORDS(f) + c[k].adr, c[k].np, v6 - c[k].target6, g, c[k].s, &f->lambda[k]);
	}
}

/* A spring C = V - pressure V0 of constant 1 / compliance over every particle of the mesh: the kernels' 6 V form
 * scaled back by 1/6, Gauss-Newton stiffness only. */
static void linearize(const pbd_step_ctx* ctx, const pbd_family* f, uint32_t first, uint32_t end, pbd_rows* rows) {
	const pbd_volume_c* c = HOT(f);
	const pbd_real sixth = PBD_R(1.0) / 6;
	for (uint32_t k = first; k < end; ++k) {
		const pbd_real kk = pbd_rows_k(COLD(f)[k].compliance);
		if (kk == 0) pbd_rows_note_hard(rows, PBD_FAMILY_VOLUME, f->user[k]);
		const pbd_real v6 = evaluate(ctx, f, &c[k]);
		pbd_vec3* g = (pbd_vec3*)f->work + c[k].np;
		for (uint32_t i = 0; i < c[k].np; ++i) g[i] = pbd_v3_scale(g[i], sixth);
		pbd_rows_add_general(rows, PBD_FAMILY_VOLUME, WORDS(f) + c[k].adr, g, c[k].np, (v6 - c[k].target6) * sixth, kk);
	}
}

/* One row per constraint over its particles. */
static void row_sizes(const pbd_family* f, uint64_t* rows, uint64_t* entries) {
	*rows = f->n;
	*entries = 0;
	for (uint32_t k = 0; k < f->n; ++k) *entries += HOT(f)[k].np;
}

/* Violation |V - pressure V0| in m^3; strain |V / (pressure V0) - 1|; energy C^2 / (2 alpha) for XPBD. */
static void stats(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end, pbd_family_sums* out) {
	const bool xpbd = pbd_energy_from_compliance(w);
	out->energy_defined = true;
	for (uint32_t k = first; k < end; ++k) {
		const pbd_volume_p* p = &COLD(f)[k];
		const double target = (double)p->rest * (double)p->pressure;
		const double C = current_volume(w, f, &HOT(f)[k]) - target;
		const double ac = fabs(C), strain = ac / target;
		out->max_violation = pbd_max_sticky(out->max_violation, ac);
		pbd_sums_strain(out, strain);
		pbd_sums_energy(out, xpbd, C, p->compliance);
		pbd_sums_stiffness(out, xpbd, p->stiffness);
	}
}

static double max_strain(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end) {
	double m = 0;
	for (uint32_t k = first; k < end; ++k) {
		const pbd_volume_p* p = &COLD(f)[k];
		const double target = (double)p->rest * (double)p->pressure;
		const double s = fabs(current_volume(w, f, &HOT(f)[k]) / target - 1);
		m = pbd_max_sticky(m, s);
	}
	return m;
}

static bool check(const pbd_world* w, const pbd_family* f, uint32_t k, const char** why) {
	(void)w;
	const pbd_volume_c* c = &HOT(f)[k];
	const pbd_volume_p* p = &COLD(f)[k];
	if (c->spare != 0 || c->np < 4 || c->nt < 4 || !lists_fit(f, c)) return *why = "has invalid mesh lists", false;
	const uint32_t* pl = WORDS(f) + c->adr;
	for (uint32_t i = 1; i < c->np; ++i)
		if (!(pl[i - 1] < pl[i])) return *why = "has an unsorted particle list", false;
	const uint32_t* tl = pl + c->np;
	for (size_t i = 0; i < 3 * (size_t)c->nt; ++i)
		if (tl[i] >= c->np) return *why = "has a triangle outside its particle list", false;
	if (!pbd_is_finite(p->rest) || !(p->rest > 0) || !pbd_is_finite(p->pressure) || !(p->pressure > 0) ||
	    !target_ok(p->rest, p->pressure) || c->target6 != (pbd_real)(6.0 * (double)p->rest * (double)p->pressure))
		return *why = "has an invalid rest volume or pressure", false;
	if (!pbd_softness_ok(p->stiffness, p->compliance) || !((double)p->compliance * 36 <= (double)PBD_REAL_MAX))
		return *why = "has an invalid material", false;
	return true;
}

static size_t work_bytes(const pbd_family* f) {
	uint32_t m = 0;
	for (uint32_t k = 0; k < f->n; ++k) m = HOT(f)[k].np > m ? HOT(f)[k].np : m;
	return 2 * (size_t)m * sizeof(pbd_vec3);
}

const pbd_family_ops pbd_family_volume_ops = {
    .name = "volume",
    .hot_size = sizeof(pbd_volume_c),
    .cold_size = sizeof(pbd_volume_p),
    .lambdas = 1,
    .data = true,
    .shared_work = true,
    .particles = particles,
    .refresh = refresh,
    .project = project,
    .jacobi = jacobi,
    .stats = stats,
    .max_strain = max_strain,
    .check = check,
    .work_bytes = work_bytes,
    .linearize = linearize,
    .row_sizes = row_sizes,
};
