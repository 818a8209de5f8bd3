/* The family table and the storage every family shares: growth, append, free, refresh. */
#include <string.h>

#include "model/world.h"

extern const pbd_family_ops pbd_family_distance_ops;
extern const pbd_family_ops pbd_family_tet_volume_ops;
extern const pbd_family_ops pbd_family_tet_neohookean_ops;
extern const pbd_family_ops pbd_family_attachment_ops;
extern const pbd_family_ops pbd_family_lra_ops;
extern const pbd_family_ops pbd_family_cluster_ops;
extern const pbd_family_ops pbd_family_bend_dihedral_ops;
extern const pbd_family_ops pbd_family_bend_isometric_ops;
extern const pbd_family_ops pbd_family_triangle_ops;
extern const pbd_family_ops pbd_family_volume_ops;
extern const pbd_family_ops pbd_family_joint_ops;

const pbd_family_ops* const pbd_family_table[PBD_FAMILY_COUNT] = {
    [PBD_FAMILY_DISTANCE] = &pbd_family_distance_ops,
    [PBD_FAMILY_TET_VOLUME] = &pbd_family_tet_volume_ops,
    [PBD_FAMILY_TET_NEOHOOKEAN] = &pbd_family_tet_neohookean_ops,
    [PBD_FAMILY_ATTACHMENT] = &pbd_family_attachment_ops,
    [PBD_FAMILY_LRA] = &pbd_family_lra_ops,
    [PBD_FAMILY_CLUSTER] = &pbd_family_cluster_ops,
    [PBD_FAMILY_BEND_DIHEDRAL] = &pbd_family_bend_dihedral_ops,
    [PBD_FAMILY_BEND_ISOMETRIC] = &pbd_family_bend_isometric_ops,
    [PBD_FAMILY_TRIANGLE] = &pbd_family_triangle_ops,
    [PBD_FAMILY_VOLUME] = &pbd_family_volume_ops,
    [PBD_FAMILY_JOINT] = &pbd_family_joint_ops,
};

const char* pbd_family_name(pbd_family_type type) {
	if ((int)type < 0 || type >= PBD_FAMILY_COUNT) return "unknown";
	return pbd_family_table[type]->name;
}

pbd_status pbd_family_reserve(pbd_world* w, pbd_family_type type, uint32_t capacity) {
	pbd_family* f = &w->fam[type];
	const pbd_family_ops* ops = pbd_family_table[type];
	if (capacity <= f->cap) return PBD_OK;
	if (ops->lambdas && capacity > UINT32_MAX / ops->lambdas) return PBD_ERR_OUT_OF_MEMORY;
	/* lambda holds ops->lambdas entries per constraint: grown as one element of that size. */
	const pbd_grow_item items[] = {
	    {&f->hot, ops->hot_size},
	    {&f->cold, ops->cold_size},
	    {(void**)&f->lambda, (ops->lambdas ? ops->lambdas : 1) * sizeof *f->lambda},
	    {(void**)&f->slot, sizeof *f->slot},
	    {(void**)&f->user, sizeof *f->user},
	    {(void**)&f->scratch, sizeof *f->scratch},
	    {&f->lanes, ops->lanes_size},
	};
	const int n_items = (int)(sizeof items / sizeof items[0]) - (ops->lanes_size ? 0 : 1);
	if (!pbd_grow_all(&w->mem, items, n_items, f->cap, capacity)) return PBD_ERR_OUT_OF_MEMORY;
	f->cap = capacity;
	/* The lanes' fields lie cap entries apart: moved into the larger block byte for byte, they
	 * no longer line up with the records, whether or not constraints follow (a soft object
	 * reserves for all its edges and may add none, or fail after reserving). */
	f->stale = true;
	return pbd_stats_reserve(w);
}

uint32_t pbd_family_append(pbd_world* w, pbd_family_type type, uint32_t count) {
	pbd_family* f = &w->fam[type];
	const pbd_family_ops* ops = pbd_family_table[type];
	if (count > UINT32_MAX - 1 - f->n) return UINT32_MAX;
	const uint32_t need = f->n + count;
	if (need > f->cap) {
		uint32_t cap = f->cap ? f->cap : 128;
		while (cap < need) cap = cap > UINT32_MAX / 2 ? need : cap * 2;
		if (pbd_family_reserve(w, type, cap) != PBD_OK) return UINT32_MAX;
	}
	const uint32_t base = f->n;
	memset(pbd_family_hot(f, ops, base), 0, (size_t)count * ops->hot_size);
	memset((char*)f->cold + (size_t)base * ops->cold_size, 0, (size_t)count * ops->cold_size);
	const uint32_t nl = ops->lambdas ? ops->lambdas : 1;
	memset(f->lambda + (size_t)base * nl, 0, (size_t)count * nl * sizeof *f->lambda);
	for (uint32_t k = base; k < need; ++k) {
		f->slot[k] = k;
		f->user[k] = k;
	}
	f->n = need;
	f->stale = true;
	w->partitioned = false;
	w->stats_valid = false;
	return base;
}

void pbd_family_free(pbd_world* w, pbd_family* f, const pbd_family_ops* ops) {
	const size_t c = f->cap;
	const size_t nl = ops->lambdas ? ops->lambdas : 1;
	pbd_free(&w->mem, f->hot, c * ops->hot_size);
	pbd_free(&w->mem, f->cold, c * ops->cold_size);
	pbd_free(&w->mem, f->lambda, c * nl * sizeof *f->lambda);
	pbd_free(&w->mem, f->slot, c * sizeof *f->slot);
	pbd_free(&w->mem, f->user, c * sizeof *f->user);
	pbd_free(&w->mem, f->scratch, c * sizeof *f->scratch);
	pbd_free(&w->mem, f->lanes, c * ops->lanes_size);
	if (ops->pool_size) pbd_free(&w->mem, f->pool, (size_t)f->pool_cap * ops->pool_size);
	pbd_free(&w->mem, f->data, f->data_cap);
	pbd_free(&w->mem, f->work, f->work_size);
	memset(f, 0, sizeof *f);
}

uint32_t pbd_family_pool_append(pbd_world* w, pbd_family_type type, uint32_t count) {
	pbd_family* f = &w->fam[type];
	const size_t es = pbd_family_table[type]->pool_size;
	PBD_ASSERT(es > 0);
	if (count > UINT32_MAX - 1 - f->pool_n) return UINT32_MAX;
	const uint32_t need = f->pool_n + count;
	if (need > f->pool_cap) {
		uint32_t cap = f->pool_cap ? f->pool_cap : 256;
		while (cap < need) cap = cap > UINT32_MAX / 2 ? need : cap * 2;
		if (!pbd_grow(&w->mem, &f->pool, es, f->pool_cap, cap)) return UINT32_MAX;
		f->pool_cap = cap;
	}
	const uint32_t base = f->pool_n;
	memset((char*)f->pool + (size_t)base * es, 0, (size_t)count * es);
	f->pool_n = need;
	return base;
}

pbd_status pbd_family_reserve_data(pbd_world* w, pbd_family_type type, size_t data_bytes, size_t work_bytes) {
	pbd_family* f = &w->fam[type];
	size_t cap = f->data_cap;
	if (data_bytes > cap) {
		cap = cap ? cap : 1024;
		while (cap < data_bytes) cap = cap > SIZE_MAX / 2 ? data_bytes : cap * 2;
	}
	/* The working memory first: if the data block then fails, a larger work block is harmless. */
	if (work_bytes > f->work_size) {
		if (!pbd_grow(&w->mem, &f->work, 1, f->work_size, work_bytes)) return PBD_ERR_OUT_OF_MEMORY;
		f->work_size = work_bytes;
	}
	if (cap > f->data_cap) {
		if (!pbd_grow(&w->mem, &f->data, 1, f->data_cap, cap)) return PBD_ERR_OUT_OF_MEMORY;
		f->data_cap = cap;
	}
	return PBD_OK;
}

void pbd_family_touch(pbd_world* w, pbd_family_type type) {
	w->fam[type].stale = true;
	w->stats_valid = false;
}

void pbd_families_touch_all(pbd_world* w) {
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) w->fam[t].stale = true;
	w->stats_valid = false;
}

void pbd_families_refresh(pbd_world* w, const pbd_step_ctx* ctx) {
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		pbd_family* f = &w->fam[t];
		if (!f->n) continue;
		if (!f->stale && f->refresh_iterations == ctx->iterations && f->refresh_formulation == ctx->formulation &&
		    f->refresh_h == ctx->h)
			continue;
		pbd_family_table[t]->refresh(f, ctx);
		f->stale = false;
		f->refresh_iterations = ctx->iterations;
		f->refresh_formulation = ctx->formulation;
		f->refresh_h = ctx->h;
	}
#ifndef NDEBUG
	/* The kernels read the lanes of the families refreshed now and of those left as they were:
	 * both must mirror the records. */
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		const pbd_family* f = &w->fam[t];
		if (f->n && pbd_family_table[t]->lanes_agree) PBD_ASSERT(pbd_family_table[t]->lanes_agree(f));
	}
#endif
}

pbd_status pbd_family_check_range(pbd_world* w, const char* fn, const pbd_family* f, uint32_t first, uint32_t count) {
	if (first > f->n || count > f->n - first)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: range [%u, %u) exceeds the %u constraints", fn, first,
		                first + count, f->n);
	return PBD_OK;
}

pbd_status pbd_check_softness(pbd_world* w, const char* fn, const char* what, uint32_t k, pbd_real stiffness,
                              pbd_real compliance) {
	if (!pbd_is_finite(stiffness) || !pbd_is_finite(compliance))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: %s %u: stiffness or compliance is not finite", fn, what, k);
	if (stiffness < 0 || stiffness > 1)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: %s %u: stiffness must be in [0, 1] (got %.9g)", fn, what, k,
		                (double)stiffness);
	if (compliance < 0)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: %s %u: compliance must be >= 0 (got %.9g)", fn, what, k,
		                (double)compliance);
	return PBD_OK;
}

void pbd_family_refresh_softness(pbd_family* f, const pbd_softness_fields* sf, const pbd_step_ctx* ctx) {
	const pbd_family_ops* ops = pbd_family_table[sf->type];
	const pbd_real inv_n = PBD_R(1.0) / (pbd_real)ctx->iterations;
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD;
	const char* cold = (const char*)f->cold;
	char* hot = (char*)f->hot;
	for (uint32_t k = 0; k < f->n; ++k, cold += ops->cold_size, hot += ops->hot_size) {
		const pbd_real stiffness = *(const pbd_real*)(cold + sf->stiffness);
		const pbd_real compliance = *(const pbd_real*)(cold + sf->compliance);
		*(pbd_real*)(hot + sf->s) =
		    xpbd ? sf->compliance_scale * compliance : pbd_stiffness_per_iteration(stiffness, inv_n);
	}
}

void pbd_family_write_softness(pbd_world* w, const pbd_softness_fields* sf, uint32_t first, uint32_t count,
                               pbd_real stiffness, pbd_real compliance) {
	pbd_family* f = &w->fam[sf->type];
	const size_t size = pbd_family_table[sf->type]->cold_size;
	for (uint32_t u = first; u < first + count; ++u) {
		char* cold = (char*)f->cold + (size_t)f->slot[u] * size;
		*(pbd_real*)(cold + sf->stiffness) = stiffness;
		*(pbd_real*)(cold + sf->compliance) = compliance;
	}
	pbd_family_touch(w, sf->type);
}

pbd_status pbd_family_set_softness(pbd_world* w, const char* fn, const pbd_softness_fields* sf, uint32_t first,
                                   uint32_t count, pbd_real stiffness, pbd_real compliance) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_status st = pbd_family_check_range(w, fn, &w->fam[sf->type], first, count);
	if (st == PBD_OK) st = pbd_check_softness(w, fn, sf->item, first, stiffness, compliance);
	if (st == PBD_OK) pbd_family_write_softness(w, sf, first, count, stiffness, compliance);
	return st;
}
