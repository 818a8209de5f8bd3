/* Distance constraints C = |x_a - x_b| - rest: storage, Gauss-Seidel and Jacobi projection
 * with PBD stiffness (Müller et al. 2007) or XPBD compliance (Macklin et al. 2016), and the
 * strain and elastic-energy diagnostics. */
#include <string.h>

#include "world.h"

pbd_distance_def pbd_distance_def_default(void) {
	pbd_distance_def d;
	memset(&d, 0, sizeof d);
	d.rest = -1;
	d.stiffness_stretch = 1;
	d.stiffness_compress = 1;
	d.compliance_stretch = 0;
	d.compliance_compress = 0;
	return d;
}

static pbd_status validate(pbd_world* w, uint32_t k, const pbd_distance_def* d) {
	const char* fn = "pbd_world_add_distances";
	if (d->a >= w->np || d->b >= w->np)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: constraint %u: particle index %u out of range (%u particles)", fn,
		                k, d->a >= w->np ? d->a : d->b, w->np);
	if (d->a == d->b)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: constraint %u joins particle %u to itself", fn, k, d->a);
	const pbd_real vals[5] = {d->rest, d->stiffness_stretch, d->stiffness_compress, d->compliance_stretch,
	                          d->compliance_compress};
	for (int i = 0; i < 5; ++i)
		if (!pbd_is_finite(vals[i]))
			return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: constraint %u: a parameter is not finite", fn, k);
	if (d->stiffness_stretch < 0 || d->stiffness_stretch > 1 || d->stiffness_compress < 0 || d->stiffness_compress > 1)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: constraint %u: stiffness must be in [0, 1]", fn, k);
	if (d->compliance_stretch < 0 || d->compliance_compress < 0)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: constraint %u: compliance must be >= 0", fn, k);
	if (d->rest < 0 && !pbd_is_finite(pbd_v3_length(pbd_v3_sub(w->x[d->a], w->x[d->b]))))
		return pbd_fail(w, PBD_ERR_NOT_FINITE,
		                "%s: constraint %u: the distance between particles %u and %u overflows; no rest length", fn, k,
		                d->a, d->b);
	return PBD_OK;
}

pbd_status pbd_distances_reserve(pbd_world* w, uint32_t capacity) {
	if (capacity <= w->cap_d) return PBD_OK;
	const pbd_grow_item items[] = {
	    {(void**)&w->dist, sizeof *w->dist},
	    {(void**)&w->dist_p, sizeof *w->dist_p},
	    {(void**)&w->lambda, sizeof *w->lambda},
	    {(void**)&w->dist_slot, sizeof *w->dist_slot},
	    {(void**)&w->dist_scratch, sizeof *w->dist_scratch},
	};
	if (!pbd_grow_all(&w->mem, items, 5, w->cap_d, capacity)) return PBD_ERR_OUT_OF_MEMORY;
	w->cap_d = capacity;
	return PBD_OK;
}

pbd_status pbd_world_add_distances(pbd_world* w, uint32_t count, const pbd_distance_def* defs, uint32_t* first) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	if (count == 0) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_world_add_distances: count is 0");
	if (!defs) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_world_add_distances: defs is NULL");
	if (count > UINT32_MAX - 1 - w->nd) return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_add_distances: too many");
	for (uint32_t k = 0; k < count; ++k) {
		pbd_status st = validate(w, k, &defs[k]);
		if (st != PBD_OK) return st;
	}
	uint32_t need = w->nd + count;
	if (need > w->cap_d) {
		uint32_t cap = w->cap_d ? w->cap_d : 128;
		while (cap < need) cap = cap > UINT32_MAX / 2 ? need : cap * 2;
		if (pbd_distances_reserve(w, cap) != PBD_OK)
			return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_add_distances: out of memory");
	}
	for (uint32_t k = 0; k < count; ++k) {
		const pbd_distance_def* d = &defs[k];
		pbd_distance_c* c = &w->dist[w->nd + k];
		c->a = d->a;
		c->b = d->b;
		c->rest = d->rest >= 0 ? d->rest : pbd_v3_length(pbd_v3_sub(w->x[d->a], w->x[d->b]));
		pbd_distance_p* q = &w->dist_p[w->nd + k];
		q->stiffness[0] = d->stiffness_stretch;
		q->stiffness[1] = d->stiffness_compress;
		q->compliance[0] = d->compliance_stretch;
		q->compliance[1] = d->compliance_compress;
		q->user = w->nd + k;
		w->lambda[w->nd + k] = 0;
		w->dist_slot[w->nd + k] = w->nd + k;
		w->degree[d->a]++;
		w->degree[d->b]++;
	}
	if (first) *first = w->nd;
	w->nd += count;
	w->dist_refresh_iterations = -1;
	w->dist_scheduled = false;
	w->stats_valid = false;
	return PBD_OK;
}

pbd_status pbd_world_set_distance_material(pbd_world* w, uint32_t first, uint32_t count, const pbd_edge_material* m) {
	const char* fn = "pbd_world_set_distance_material";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	if (!m) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: material is NULL", fn);
	if (first > w->nd || count > w->nd - first)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: range [%u, %u) exceeds the %u constraints", fn, first,
		                first + count, w->nd);
	if (!pbd_is_finite(m->stiffness_stretch) || !pbd_is_finite(m->stiffness_compress) ||
	    !pbd_is_finite(m->compliance_stretch) || !pbd_is_finite(m->compliance_compress))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: a parameter is not finite", fn);
	if (m->stiffness_stretch < 0 || m->stiffness_stretch > 1 || m->stiffness_compress < 0 || m->stiffness_compress > 1)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: stiffness must be in [0, 1]", fn);
	if (m->compliance_stretch < 0 || m->compliance_compress < 0)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: compliance must be >= 0", fn);
	/* `enabled` is a creation-time choice; disabling a live constraint is stiffness 0. */
	for (uint32_t u = first; u < first + count; ++u) {
		pbd_distance_p* q = &w->dist_p[w->dist_slot[u]];
		q->stiffness[0] = m->stiffness_stretch;
		q->stiffness[1] = m->stiffness_compress;
		q->compliance[0] = m->compliance_stretch;
		q->compliance[1] = m->compliance_compress;
	}
	w->dist_refresh_iterations = -1;
	w->stats_valid = false;
	return PBD_OK;
}

uint32_t pbd_world_distance_count(const pbd_world* w) { return w ? w->nd : 0; }

pbd_status pbd_world_get_distance(const pbd_world* w, uint32_t index, pbd_distance_def* out) {
	if (!w || !out) return PBD_ERR_INVALID_ARGUMENT;
	if (index >= w->nd)
		return pbd_fail((pbd_world*)w, PBD_ERR_OUT_OF_RANGE, "pbd_world_get_distance: constraint %u out of range (%u)",
		                index, w->nd);
	const pbd_distance_c* c = &w->dist[w->dist_slot[index]];
	const pbd_distance_p* q = &w->dist_p[w->dist_slot[index]];
	out->a = c->a;
	out->b = c->b;
	out->rest = c->rest;
	out->stiffness_stretch = q->stiffness[0];
	out->stiffness_compress = q->stiffness[1];
	out->compliance_stretch = q->compliance[0];
	out->compliance_compress = q->compliance[1];
	return PBD_OK;
}

/* Recomputes the hot per-constraint parameter s[] when the formulation or the iteration count
 * changed. PBD: k' = 1 - (1 - k)^(1/n) so that n iterations of k' remove the same fraction of
 * the error as one projection with k (Müller et al. 2007, section 3.3). The pow runs here,
 * once per change, not in every step. */
void pbd_distance_refresh(pbd_world* w) {
	int n = w->def.iterations;
	pbd_formulation f = w->def.formulation;
	if (w->dist_refresh_iterations == n && w->dist_refresh_formulation == f) return;
	pbd_real inv_n = PBD_R(1.0) / (pbd_real)n;
	for (uint32_t k = 0; k < w->nd; ++k) {
		const pbd_distance_p* q = &w->dist_p[k];
		for (int j = 0; j < 2; ++j) {
			if (f == PBD_FORMULATION_XPBD) {
				w->dist[k].s[j] = q->compliance[j];
			} else {
				pbd_real kk = q->stiffness[j];
				w->dist[k].s[j] = (kk >= 1 || kk <= 0) ? kk : 1 - PBD_POW(1 - kk, inv_n);
			}
		}
	}
	w->dist_refresh_iterations = n;
	w->dist_refresh_formulation = f;
}

/* The current vector between the ends, from the committed positions and the displacements:
 * x_a - x_b is exact for particles near each other at any distance from the origin, and the
 * q's are small, so the sum keeps the bits that p_a - p_b of two large coordinates would lose. */
static inline pbd_vec3 separation(const pbd_vec3* restrict x, const pbd_vec3* restrict q, uint32_t a, uint32_t b) {
	return pbd_v3_add(pbd_v3_sub(x[a], x[b]), pbd_v3_sub(q[a], q[b]));
}

/* PBD: move both ends along the constraint gradient, weighted by inverse mass, by k' * C.
 * (w_a + w_b) |d| stays normal: inverse masses are 0 or >= PBD_INV_MASS_MIN and |d| is at
 * least PBD_EPSILON_LENGTH. */
static void solve_gs_pbd(pbd_world* w) {
	const pbd_vec3* restrict x = w->x;
	pbd_vec3* restrict q = w->q;
	const pbd_real* restrict iw = w->w;
	const pbd_distance_c* restrict c = w->dist;
	for (uint32_t k = 0, n = w->nd; k < n; ++k) {
		const uint32_t a = c[k].a, b = c[k].b;
		const pbd_real wa = iw[a], wb = iw[b];
		const pbd_real ws = wa + wb;
		if (ws == 0) continue;
		const pbd_vec3 d = separation(x, q, a, b);
		const pbd_real len = PBD_SQRT(pbd_v3_dot(d, d));
		if (!(len >= PBD_EPSILON_LENGTH)) continue;
		const pbd_real C = len - c[k].rest;
		const pbd_real stiff = c[k].s[C <= 0];
		const pbd_real s = stiff * C / (ws * len);
		q[a] = pbd_v3_sub(q[a], pbd_v3_scale(d, wa * s));
		q[b] = pbd_v3_add(q[b], pbd_v3_scale(d, wb * s));
	}
}

/* XPBD: dlambda = (-C - alpha~ lambda) / (wa + wb + alpha~), alpha~ = alpha / h^2. */
static void solve_gs_xpbd(pbd_world* w, pbd_real inv_h2) {
	const pbd_vec3* restrict x = w->x;
	pbd_vec3* restrict q = w->q;
	const pbd_real* restrict iw = w->w;
	const pbd_distance_c* restrict c = w->dist;
	pbd_real* restrict lambda = w->lambda;
	for (uint32_t k = 0, n = w->nd; k < n; ++k) {
		const uint32_t a = c[k].a, b = c[k].b;
		const pbd_real wa = iw[a], wb = iw[b];
		const pbd_vec3 d = separation(x, q, a, b);
		const pbd_real len = PBD_SQRT(pbd_v3_dot(d, d));
		if (!(len >= PBD_EPSILON_LENGTH)) continue;
		const pbd_real C = len - c[k].rest;
		const pbd_real at = c[k].s[C <= 0] * inv_h2;
		const pbd_real denom = wa + wb + at;
		if (denom == 0) continue;
		const pbd_real dl = (-C - at * lambda[k]) / denom;
		lambda[k] += dl;
		const pbd_real s = dl / len;
		q[a] = pbd_v3_add(q[a], pbd_v3_scale(d, wa * s));
		q[b] = pbd_v3_sub(q[b], pbd_v3_scale(d, wb * s));
	}
}

void pbd_distance_solve_gs(pbd_world* w, pbd_real inv_h2) {
	if (w->def.formulation == PBD_FORMULATION_XPBD)
		solve_gs_xpbd(w, inv_h2);
	else
		solve_gs_pbd(w);
}

/* Jacobi: every constraint reads the iteration's starting positions and adds its correction to
 * dx[]; solver.c applies the sum.
 *
 * Mass-weighted (the default): each constraint's correction is scaled by one factor for both
 * ends, omega / (max(N_a, N_b) + alpha) with N the constraint counts of the ends. A factor per
 * particle (the plain averaged Jacobi) would scale the two ends of a constraint differently and
 * push the centre of mass; one shared factor keeps sum(m dx) = 0, so momentum is conserved, and
 * as it is no larger than either end's own average factor, the iteration is at least as stable.
 * The XPBD multiplier takes the same scaled increment, so lambda matches the applied move.
 *
 * Equal split: each end takes half of the correction whatever the masses and each particle
 * averages its corrections, the strain limiting of Games103 lab 2; a pinned end is still never
 * moved because the apply step skips it. */
void pbd_distance_accumulate_jacobi(pbd_world* w, pbd_real inv_h2) {
	const pbd_vec3* restrict x = w->x;
	const pbd_vec3* restrict q = w->q;
	const pbd_real* restrict iw = w->w;
	const pbd_distance_c* restrict c = w->dist;
	pbd_vec3* restrict dx = w->dx;
	pbd_real* restrict lambda = w->lambda;
	const uint32_t* restrict deg = w->degree;
	const bool xpbd = w->def.formulation == PBD_FORMULATION_XPBD;
	const bool equal = w->def.jacobi_equal_split;
	const pbd_real alpha = w->def.jacobi_alpha, omega = w->def.jacobi_omega;
	for (uint32_t k = 0, n = w->nd; k < n; ++k) {
		const uint32_t a = c[k].a, b = c[k].b;
		const pbd_real wa = equal ? 1 : iw[a], wb = equal ? 1 : iw[b];
		const pbd_real f = equal ? 1 : omega / ((pbd_real)(deg[a] > deg[b] ? deg[a] : deg[b]) + alpha);
		const pbd_vec3 d = separation(x, q, a, b);
		const pbd_real len = PBD_SQRT(pbd_v3_dot(d, d));
		if (!(len >= PBD_EPSILON_LENGTH)) continue;
		const pbd_real C = len - c[k].rest;
		pbd_real s; /* correction of a is -wa * s * d, of b is +wb * s * d */
		if (xpbd) {
			const pbd_real at = c[k].s[C <= 0] * inv_h2;
			const pbd_real denom = wa + wb + at;
			if (denom == 0) continue;
			const pbd_real dl = f * ((-C - at * lambda[k]) / denom);
			lambda[k] += dl;
			s = -dl / len;
		} else {
			const pbd_real ws = wa + wb;
			if (ws == 0) continue;
			s = f * (c[k].s[C <= 0] * C / (ws * len));
		}
		dx[a] = pbd_v3_sub(dx[a], pbd_v3_scale(d, wa * s));
		dx[b] = pbd_v3_add(dx[b], pbd_v3_scale(d, wb * s));
	}
}

/* Length of a constraint in double, from the full positions x + x_lo. */
static double current_length(const pbd_world* w, const pbd_distance_c* c) {
	const pbd_vec3 xa = w->x[c->a], xb = w->x[c->b], la = w->x_lo[c->a], lb = w->x_lo[c->b];
	const double dx = ((double)xa.x - (double)xb.x) + ((double)la.x - (double)lb.x);
	const double dy = ((double)xa.y - (double)xb.y) + ((double)la.y - (double)lb.y);
	const double dz = ((double)xa.z - (double)xb.z) + ((double)la.z - (double)lb.z);
	return sqrt(dx * dx + dy * dy + dz * dz);
}

/* Strain, violation and (XPBD) elastic energy of the current positions. */
void pbd_distance_stats(const pbd_world* w, pbd_stats* st) {
	double max_strain = 0, sum_strain = 0, max_viol = 0, elastic = 0;
	uint32_t counted = 0;
	const bool xpbd = w->def.formulation == PBD_FORMULATION_XPBD;
	for (uint32_t k = 0; k < w->nd; ++k) {
		const pbd_distance_c* c = &w->dist[k];
		const double C = current_length(w, c) - (double)c->rest;
		const double ac = C < 0 ? -C : C;
		if (ac > max_viol) max_viol = ac;
		if (c->rest > 0) {
			double strain = ac / (double)c->rest;
			if (!(strain <= max_strain)) max_strain = strain; /* NaN wins, so it is reported */
			sum_strain += strain;
			counted++;
		}
		if (xpbd) {
			double alpha = (double)w->dist_p[k].compliance[C > 0 ? 0 : 1];
			if (alpha > 0) elastic += 0.5 * C * C / alpha;
		}
	}
	st->max_strain = max_strain;
	st->mean_strain = counted ? sum_strain / counted : 0;
	st->max_violation = max_viol;
	st->elastic_energy = elastic;
}

/* The strain test of the divergence check alone, for worlds without diagnostics. */
double pbd_distance_max_strain(const pbd_world* w) {
	double max_strain = 0;
	for (uint32_t k = 0; k < w->nd; ++k) {
		const pbd_distance_c* c = &w->dist[k];
		if (!(c->rest > 0)) continue;
		const double C = current_length(w, c) - (double)c->rest;
		const double strain = (C < 0 ? -C : C) / (double)c->rest;
		if (!(strain <= max_strain)) max_strain = strain; /* NaN wins, so it is reported */
	}
	return max_strain;
}
