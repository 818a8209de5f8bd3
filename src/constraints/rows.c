/* Linearised constraints (rows.h): storage, forces and the stiffness products. */
#include "constraints/rows.h"

#include <string.h>

#include "model/world.h"

pbd_status pbd_rows_reserve(pbd_world* w, pbd_rows* r, uint32_t rows, uint32_t entries) {
	if (rows > r->cap) {
		/* start[] holds one more than the rows. It grows first and keeps its own count, so that a
		 * failure of the others leaves it larger than cap + 1 but known. */
		size_t cap = r->cap ? r->cap : 64;
		while (cap < rows) cap *= 2;
		if (cap >= UINT32_MAX) return PBD_ERR_OUT_OF_MEMORY;
		if (cap + 1 > r->cap_start) {
			if (!pbd_grow(&w->mem, (void**)&r->start, sizeof *r->start, r->cap_start, cap + 1))
				return PBD_ERR_OUT_OF_MEMORY;
			r->cap_start = (uint32_t)(cap + 1);
		}
		const pbd_grow_item items[] = {{(void**)&r->C, sizeof *r->C},       {(void**)&r->k, sizeof *r->k},
		                               {(void**)&r->g, sizeof *r->g},       {(void**)&r->dir, sizeof *r->dir},
		                               {(void**)&r->rest, sizeof *r->rest}, {(void**)&r->kf, sizeof *r->kf},
		                               {(void**)&r->hard, sizeof *r->hard}};
		if (!pbd_grow_all(&w->mem, items, 7, r->cap, cap)) return PBD_ERR_OUT_OF_MEMORY;
		r->cap = (uint32_t)cap;
	}
	if (entries > r->cap_e) {
		size_t cap = r->cap_e ? r->cap_e : 128;
		while (cap < entries) cap *= 2;
		if (cap >= UINT32_MAX) return PBD_ERR_OUT_OF_MEMORY;
		const pbd_grow_item items[] = {
		    {(void**)&r->p, sizeof *r->p}, {(void**)&r->grad, sizeof *r->grad}, {(void**)&r->a, sizeof *r->a}};
		if (!pbd_grow_all(&w->mem, items, 3, r->cap_e, cap)) return PBD_ERR_OUT_OF_MEMORY;
		r->cap_e = (uint32_t)cap;
	}
	if (r->cap_start == 0) {
		/* Zero rows asked and none held yet: start[0] must exist all the same. */
		if (!pbd_grow(&w->mem, (void**)&r->start, sizeof *r->start, 0, 1)) return PBD_ERR_OUT_OF_MEMORY;
		r->cap_start = 1;
	}
	return PBD_OK;
}

void pbd_rows_free(pbd_world* w, pbd_rows* r) {
	const size_t nr = r->cap, ne = r->cap_e;
	pbd_free(&w->mem, r->start, (size_t)r->cap_start * sizeof *r->start);
	pbd_free(&w->mem, r->C, nr * sizeof *r->C);
	pbd_free(&w->mem, r->k, nr * sizeof *r->k);
	pbd_free(&w->mem, r->g, nr * sizeof *r->g);
	pbd_free(&w->mem, r->dir, nr * sizeof *r->dir);
	pbd_free(&w->mem, r->rest, nr * sizeof *r->rest);
	pbd_free(&w->mem, r->kf, nr * sizeof *r->kf);
	pbd_free(&w->mem, r->hard, nr * sizeof *r->hard);
	pbd_free(&w->mem, r->p, ne * sizeof *r->p);
	pbd_free(&w->mem, r->grad, ne * sizeof *r->grad);
	pbd_free(&w->mem, r->a, ne * sizeof *r->a);
	memset(r, 0, sizeof *r);
}

void pbd_rows_linearize_all(const pbd_world* w, const pbd_step_ctx* ctx, pbd_rows* r) {
	pbd_rows_clear(r);
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		const pbd_family* f = &w->fam[t];
		if (f->n) pbd_family_table[t]->linearize(ctx, f, 0, f->n, r);
		PBD_ASSERT(r->n <= r->cap && r->ne <= r->cap_e); /* as pbd_integrate_prepare sized them */
	}
}

double pbd_rows_forces(const pbd_rows* r, const pbd_vec3* v, pbd_real beta, pbd_vec3* f) {
	double energy = 0;
	for (uint32_t row = 0; row < r->n; ++row) {
		const uint32_t e0 = r->start[row], e1 = r->start[row + 1];
		const pbd_real k = r->k[row], C = r->C[row];
		pbd_real rate = 0; /* dC/dt = sum_i grad_i . v_i */
		if (beta > 0)
			for (uint32_t e = e0; e < e1; ++e) rate += pbd_v3_dot(r->grad[e], v[r->p[e]]);
		const pbd_real s = -k * (C + beta * rate);
		for (uint32_t e = e0; e < e1; ++e) f[r->p[e]] = pbd_v3_add(f[r->p[e]], pbd_v3_scale(r->grad[e], s));
		energy += 0.5 * (double)k * (double)C * (double)C;
	}
	return energy;
}

void pbd_rows_mul(const pbd_rows* r, pbd_real cg, pbd_real ct, const pbd_vec3* in, pbd_vec3* out) {
	for (uint32_t row = 0; row < r->n; ++row) {
		const uint32_t e0 = r->start[row], e1 = r->start[row + 1];
		pbd_real s = 0;
		for (uint32_t e = e0; e < e1; ++e) s += pbd_v3_dot(r->grad[e], in[r->p[e]]);
		s *= cg * r->k[row];
		for (uint32_t e = e0; e < e1; ++e) out[r->p[e]] = pbd_v3_add(out[r->p[e]], pbd_v3_scale(r->grad[e], s));
		const pbd_real g = ct * r->g[row];
		if (g > 0) {
			pbd_vec3 t = pbd_v3(0, 0, 0);
			for (uint32_t e = e0; e < e1; ++e) t = pbd_v3_add(t, pbd_v3_scale(in[r->p[e]], r->a[e]));
			const pbd_vec3 n = r->dir[row];
			t = pbd_v3_scale(pbd_v3_sub(t, pbd_v3_scale(n, pbd_v3_dot(n, t))), g);
			for (uint32_t e = e0; e < e1; ++e) out[r->p[e]] = pbd_v3_add(out[r->p[e]], pbd_v3_scale(t, r->a[e]));
		}
	}
}

void pbd_rows_diag(const pbd_rows* r, pbd_real cg, pbd_real ct, pbd_real* diag) {
	for (uint32_t row = 0; row < r->n; ++row) {
		const pbd_real kg = cg * r->k[row], g = ct * r->g[row];
		const pbd_vec3 n = r->dir[row];
		const pbd_real nn[3] = {n.x, n.y, n.z};
		for (uint32_t e = r->start[row]; e < r->start[row + 1]; ++e) {
			const pbd_vec3 gr = r->grad[e];
			const pbd_real gv[3] = {gr.x, gr.y, gr.z};
			const pbd_real ga = g * r->a[e] * r->a[e];
			pbd_real* d = diag + (size_t)r->p[e] * 9;
			for (int i = 0; i < 3; ++i)
				for (int j = 0; j < 3; ++j)
					d[i * 3 + j] += kg * gv[i] * gv[j] + ga * ((i == j ? 1 : 0) - nn[i] * nn[j]);
		}
	}
}
