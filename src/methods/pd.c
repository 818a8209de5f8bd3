/* Projective dynamics (Liu, Bargteil, O'Brien and Kavan 2013, "Fast simulation of mass-spring
 * systems"; Bouaziz, Martin, Liu, Kavan and Pauly 2014, "Projective dynamics"). A norm row's
 * energy k (|u| - r)^2 / 2 is k |u - p|^2 / 2 with p = r u / |u| the nearest point of the sphere
 * |u| = r: a quadratic in the positions once p is fixed. The backward-Euler step then alternates
 *   local:  p of every row from the current positions (the rows' linearisation gives it);
 *   global: minimise sum_i m_i / (2 h^2) |x_i - y_i|^2 + sum_rows kf / 2 |u(x) - p|^2,
 * whose matrix M / h^2 + sum_rows kf a a^T is the same in x, y and z and does not depend on the
 * positions: it is factored once (sparse_chol.h) and each global step is one solve of three
 * right-hand sides. The matrix uses each row's constant kf (a distance's stretch constant); a row
 * on a side with another constant k aims at r' = |u| - (k / kf) C instead of r, so that its force
 * at the current positions is k C, the material's.
 *
 * Everything is solved for the displacement q from the step's committed positions, never for the
 * coordinates themselves, so the precision does not depend on the distance from the origin. The
 * free particles are the unknowns; pinned ones enter the right-hand side. The factor is kept
 * while the constraint set, the pins, the masses, the constants and the substep stay. The
 * stiffness damping is not part of this method (it has no place in the constant matrix); the
 * world's velocity damping is.
 *
 * A general row (rows.h: C and its gradients g_i over particles S, n = |S|) has no sphere to
 * project on. It enters the matrix as w A with A the centring matrix I_n - 1 1^T / n over S (the
 * same in x, y and z, and blind to a translation, as the row is: sum_i g_i = 0 for every family
 * with n > 1) or A = I_1 for a one-particle row (a long-range attachment or a shape-matching axis,
 * whose other end is fixed), and aims at p_S = x_S - (k / w) C g. Its part of the global gradient
 * at the current positions is then w A (x - p) = k C A g = k C g, the row's own force, so the
 * fixed point of the iteration is the implicit Euler step whatever w is; w only sets how fast it
 * gets there. The weight w = k |g|^2 is taken when the factor is built and kept with it, so that a
 * moving body does not refactor every step; only a row that outgrows it (weights_hold) brings a
 * new factor.
 *
 * A row with more than PBD_PD_DENSE_MAX free particles (the enclosed volume of a closed mesh)
 * stays out of the matrix B: its n^2 entries would fill the factor, and w A would stiffen every
 * mode of the mesh but the one the row acts on (with a hard row's weight, a thousand times the
 * mass: the cloth then barely moves within the iterations; docs/methods.md). Up to
 * PBD_PD_LOW_RANK_MAX such rows are instead solved with their own Gauss-Newton stiffness
 * k g g^T from the current linearisation, through the Woodbury identity on B's factor:
 *   (B + G K G^T)^-1 b = z - U (K^-1 + G^T U)^-1 G^T z,   z = B^-1 b, U = B^-1 G,
 * one more solve per row and a small dense system per iteration, with k g (g . q - C) in the
 * right-hand side (again the row's force at the fixed point). A world with more such rows is
 * refused (pbd_integrate_prepare): their force alone in the right-hand side, lagged by an
 * iteration, diverges once k h^2 |g|^2 / m > 1, which a hard row's spring always is. */
#include <math.h>
#include <string.h>

#include "methods/integrate.h"
#include "model/world.h"

void pbd_pd_free(pbd_world* w) {
	pbd_integrator* in = w->integ;
	pbd_sparse_chol_free(&in->chol, &w->mem);
	pbd_free(&w->mem, in->node, in->pd_cap_np * sizeof *in->node);
	pbd_free(&w->mem, in->pd_free, in->pd_cap_np * sizeof *in->pd_free);
	pbd_free(&w->mem, in->pd_row, in->pd_cap_nnz * sizeof *in->pd_row);
	pbd_free(&w->mem, in->pd_col, in->pd_cap_nnz * sizeof *in->pd_col);
	pbd_free(&w->mem, in->pd_val, in->pd_cap_nnz * sizeof *in->pd_val);
	pbd_free(&w->mem, in->pd_new, in->pd_cap_nnz * sizeof *in->pd_new);
	pbd_free(&w->mem, in->rhs, 3 * (size_t)in->pd_cap_np * sizeof *in->rhs);
	pbd_free(&w->mem, in->pd_wt, in->pd_cap_rows * sizeof *in->pd_wt);
	pbd_free(&w->mem, in->pd_key, in->pd_cap_rows * sizeof *in->pd_key);
	pbd_free(&w->mem, in->pd_u, in->pd_cap_u * sizeof *in->pd_u);
	in->pd_u = NULL;
	in->pd_cap_u = 0;
	in->pd_nlr = 0;
	in->node = NULL;
	in->pd_free = NULL;
	in->pd_row = in->pd_col = NULL;
	in->pd_val = in->pd_new = in->rhs = in->pd_wt = in->pd_key = NULL;
	in->pd_cap_np = in->pd_cap_nnz = in->pd_cap_rows = 0;
	in->pd_n = in->pd_nnz = in->pd_rows = 0;
	in->pd_topology = 0;
	in->pd_restored = false;
}

pbd_pd_saved pbd_pd_saved_state(const pbd_world* w) {
	const pbd_integrator* in = w->integ;
	pbd_pd_saved s = {0, 0, 0, 0};
	if (w->def.method != PBD_METHOD_PROJECTIVE_DYNAMICS) return s;
	if (in->pd_restored) return in->pd_saved; /* loaded and not stepped: what it was given */
	if (!in->chol.factored || in->pd_n == 0 || in->pd_topology != w->topology || in->pd_np != w->np ||
	    in->pd_rows != in->rows.n)
		return s;
	for (uint32_t i = 0; i < w->np; ++i)
		if (in->pd_free[i] != (w->w[i] > 0)) return s;
	s.rows = in->pd_rows;
	s.free = in->pd_n;
	s.entries = in->pd_nnz;
	s.hash = pbd_fnv1a(PBD_FNV1A_START, in->pd_val, (size_t)in->pd_nnz * sizeof *in->pd_val);
	return s;
}

pbd_status pbd_pd_restore(pbd_world* w, const pbd_pd_saved* s, const double* wt, const double* key) {
	pbd_integrator* in = w->integ;
	if (in->pd_cap_rows < s->rows) {
		const pbd_grow_item items[] = {{(void**)&in->pd_wt, sizeof *in->pd_wt},
		                               {(void**)&in->pd_key, sizeof *in->pd_key}};
		if (!pbd_grow_all(&w->mem, items, 2, in->pd_cap_rows, s->rows)) return PBD_ERR_OUT_OF_MEMORY;
		in->pd_cap_rows = s->rows;
	}
	memcpy(in->pd_wt, wt, (size_t)s->rows * sizeof *wt);
	memcpy(in->pd_key, key, (size_t)s->rows * sizeof *key);
	in->pd_saved = *s;
	in->pd_restored = true;
	return PBD_OK;
}

/* The free particles of a row. */
static uint32_t free_count(const pbd_world* w, const pbd_rows* r, uint32_t row) {
	uint32_t n = 0;
	for (uint32_t e = r->start[row]; e < r->start[row + 1]; ++e) n += w->w[r->p[e]] > 0;
	return n;
}

/* Whether a row with `free` free particles has its square in the matrix: every norm row (a few
 * particles each), and the general rows up to PBD_PD_DENSE_MAX free particles. */
static bool in_matrix(const pbd_rows* r, uint32_t row, uint32_t free) {
	return r->rest[row] >= 0 || free <= PBD_PD_DENSE_MAX;
}

uint32_t pbd_pd_large_rows(const pbd_world* w) {
	const pbd_rows* r = &w->integ->rows;
	uint32_t n = 0;
	for (uint32_t row = 0; row < r->n; ++row) n += !in_matrix(r, row, free_count(w, r, row));
	return n;
}

/* Entries of the matrix: one diagonal per free particle, and the square of each row's free
 * particles. */
static uint64_t entries(const pbd_world* w) {
	const pbd_rows* r = &w->integ->rows;
	uint64_t nnz = 0;
	for (uint32_t i = 0; i < w->np; ++i) nnz += w->w[i] > 0;
	for (uint32_t row = 0; row < r->n; ++row) {
		const uint64_t free = free_count(w, r, row);
		if (in_matrix(r, row, (uint32_t)free)) nnz += free * free;
	}
	return nnz;
}

/* What a general row's weight was taken for: its constant kf, or for a hard row (whose kf follows
 * the gradients, rows_hard.c) the world's hard_stiffness, negated. */
static double row_key(const pbd_world* w, const pbd_rows* r, uint32_t row) {
	return r->hard[row] & PBD_ROW_HARD_KF ? -(double)w->def.hard_stiffness : (double)r->kf[row];
}

/* A general row's weight w = kf |g|^2 from the current linearisation (see above). A hard row's kf
 * is kappa m_eff / h^2 (rows_hard.c), which makes w = kappa |g|^2 / (h^2 sum_i w_i |g_i|^2), a mass
 * over h^2 whatever the gradient's size. A row with no gradient now (a slack unilateral row, a
 * degenerate element) still needs a weight if it has one particle, since it grips as soon as it is
 * taut: kf there, or kappa m_i / h^2 for a hard one; a larger row gets 0 until its gradient
 * returns (weights_hold). The weight stops at PBD_PD_WEIGHT_MAX times its lightest free particle's
 * m / h^2: w A is singular (a translation), so the pivots are that mass over h^2 and would drown
 * in w's rounding past it; a row asking more (an element nearly degenerate, whose gradient grows
 * as one over its size) is a spring of (omega h)^2 > 10^8, hard in every practical sense. */
#define PBD_PD_WEIGHT_MAX 1e8
static double row_weight(const pbd_world* w, uint32_t row, double kappa_ih2, double ih2) {
	const pbd_rows* r = &w->integ->rows;
	const uint32_t e0 = r->start[row], e1 = r->start[row + 1];
	double G = 0, iw_max = 0;
	for (uint32_t e = e0; e < e1; ++e) {
		G += (double)pbd_v3_dot(r->grad[e], r->grad[e]);
		if ((double)w->w[r->p[e]] > iw_max) iw_max = (double)w->w[r->p[e]];
	}
	const double kf = (double)r->kf[row];
	double wt = 0;
	if (kf > 0 && G > 0)
		wt = kf * G;
	else if (e1 - e0 == 1)
		wt = r->hard[row] & PBD_ROW_HARD_KF ? kappa_ih2 / (double)w->w[r->p[e0]] : kf;
	const double cap = iw_max > 0 ? PBD_PD_WEIGHT_MAX * ih2 / iw_max : 0;
	return isfinite(wt) ? (wt < cap ? wt : cap) : 0;
}

/* The general rows too large for the matrix into pd_lr, each with weight -1, and room for their
 * columns. */
static pbd_status reserve_low_rank(pbd_world* w) {
	pbd_integrator* in = w->integ;
	const pbd_rows* r = &in->rows;
	in->pd_nlr = 0;
	for (uint32_t row = 0; row < r->n; ++row) {
		if (r->rest[row] >= 0) continue;
		const uint32_t free = free_count(w, r, row);
		if (free == 0 || in_matrix(r, row, free)) continue;
		PBD_ASSERT(in->pd_nlr < PBD_PD_LOW_RANK_MAX); /* pbd_integrate_prepare refused more */
		in->pd_lr[in->pd_nlr++] = row;
		in->pd_wt[row] = -1;
	}
	const size_t need = 3 * (size_t)in->pd_n * in->pd_nlr;
	if (need > in->pd_cap_u) {
		if (!pbd_grow(&w->mem, (void**)&in->pd_u, sizeof *in->pd_u, in->pd_cap_u, need)) return PBD_ERR_OUT_OF_MEMORY;
		in->pd_cap_u = need;
	}
	return PBD_OK;
}

/* Every general row's weight and key, and the low-rank rows. With `grow` a row keeps its weight
 * where that is larger, so that weights only grow while the rows stay. */
static pbd_status refresh_weights(pbd_world* w, pbd_real h, bool grow) {
	pbd_integrator* in = w->integ;
	const pbd_rows* r = &in->rows;
	const double kappa_ih2 = (double)w->def.hard_stiffness / ((double)h * (double)h);
	for (uint32_t row = 0; row < r->n; ++row) {
		const double old = grow ? in->pd_wt[row] : 0;
		in->pd_wt[row] = 0;
		in->pd_key[row] = 0;
		if (r->rest[row] >= 0) continue;
		in->pd_key[row] = row_key(w, r, row);
		const uint32_t free = free_count(w, r, row);
		if (free == 0 || !in_matrix(r, row, free)) continue;
		const double wt = row_weight(w, row, kappa_ih2, 1 / ((double)h * (double)h));
		in->pd_wt[row] = wt > old ? wt : old;
	}
	return reserve_low_rank(w);
}

/* Whether every general row still has the constant its weight was taken for. */
static bool keys_kept(const pbd_world* w) {
	const pbd_integrator* in = w->integ;
	const pbd_rows* r = &in->rows;
	for (uint32_t row = 0; row < r->n; ++row)
		if (r->rest[row] < 0 && row_key(w, r, row) != in->pd_key[row]) return false;
	return true;
}

/* Whether no row in the matrix has outgrown its weight: the iteration needs w A at least half of
 * the row's own stiffness k g g^T along g (its error there is multiplied by about (w - k |g|^2) /
 * (m / h^2 + w)), and a weight taken from a degenerate element (g near 0) is far below what the
 * element asks once it unfolds. Past twice the weight the factor is rebuilt with the larger
 * weights; below, a larger weight than needed only slows the iteration. */
static bool weights_hold(const pbd_world* w, pbd_real h) {
	const pbd_integrator* in = w->integ;
	const pbd_rows* r = &in->rows;
	const double ih2 = 1 / ((double)h * (double)h), kappa_ih2 = (double)w->def.hard_stiffness * ih2;
	for (uint32_t row = 0; row < r->n; ++row) {
		if (r->rest[row] >= 0 || in->pd_wt[row] < 0 || free_count(w, r, row) == 0) continue;
		if (row_weight(w, row, kappa_ih2, ih2) > 2 * in->pd_wt[row]) return false;
	}
	return true;
}

/* The values of the matrix in the pattern's order into v (the pattern into row/col when given). */
static void assemble(const pbd_world* w, pbd_real h, uint32_t* prow, uint32_t* pcol, double* v) {
	const pbd_integrator* in = w->integ;
	const pbd_rows* r = &in->rows;
	const double ih2 = 1 / ((double)h * (double)h);
	uint32_t q = 0;
	for (uint32_t i = 0; i < w->np; ++i) {
		if (!(w->w[i] > 0)) continue;
		if (prow) prow[q] = pcol[q] = in->node[i];
		v[q++] = ih2 / (double)w->w[i];
	}
	for (uint32_t row = 0; row < r->n; ++row) {
		const uint32_t e0 = r->start[row], e1 = r->start[row + 1];
		const bool general = r->rest[row] < 0;
		if (general && !in_matrix(r, row, free_count(w, r, row))) continue;
		const double kf = (double)r->kf[row];
		/* a general row: wt (I - 1 1^T / n), or wt for one particle */
		const double wt = general ? in->pd_wt[row] : 0;
		const double off = e1 - e0 > 1 ? wt / (double)(e1 - e0) : 0;
		for (uint32_t e = e0; e < e1; ++e) {
			if (!(w->w[r->p[e]] > 0)) continue;
			for (uint32_t f = e0; f < e1; ++f) {
				if (!(w->w[r->p[f]] > 0)) continue;
				if (prow) {
					prow[q] = in->node[r->p[e]];
					pcol[q] = in->node[r->p[f]];
				}
				v[q++] = general ? (e == f ? wt : 0) - off : kf * (double)r->a[e] * (double)r->a[f];
			}
		}
	}
}

/* Before the step, after the rows were linearised: a new analysis when the constraint set or the
 * pins changed, a new factor when a value did. */
pbd_status pbd_pd_prepare(pbd_world* w) {
	pbd_integrator* in = w->integ;
	const pbd_real h = w->def.dt / (pbd_real)w->nsub;
	const uint64_t nnz64 = entries(w);
	if (nnz64 > UINT32_MAX / 2) return PBD_ERR_OUT_OF_MEMORY;
	const uint32_t nnz = (uint32_t)nnz64;
	if (in->pd_cap_np < w->np) {
		const pbd_grow_item items[] = {{(void**)&in->node, sizeof *in->node},
		                               {(void**)&in->pd_free, sizeof *in->pd_free},
		                               {(void**)&in->rhs, 3 * sizeof *in->rhs}};
		if (!pbd_grow_all(&w->mem, items, 3, in->pd_cap_np, w->cap_p)) return PBD_ERR_OUT_OF_MEMORY;
		in->pd_cap_np = w->cap_p;
		in->pd_topology = 0;
	}
	if (in->pd_cap_nnz < nnz) {
		size_t cap = in->pd_cap_nnz ? in->pd_cap_nnz : 1024;
		while (cap < nnz) cap *= 2;
		const pbd_grow_item items[] = {{(void**)&in->pd_row, sizeof *in->pd_row},
		                               {(void**)&in->pd_col, sizeof *in->pd_col},
		                               {(void**)&in->pd_val, sizeof *in->pd_val},
		                               {(void**)&in->pd_new, sizeof *in->pd_new}};
		if (!pbd_grow_all(&w->mem, items, 4, in->pd_cap_nnz, cap)) return PBD_ERR_OUT_OF_MEMORY;
		in->pd_cap_nnz = (uint32_t)cap;
		in->pd_topology = 0;
	}
	if (in->pd_cap_rows < in->rows.n) {
		const pbd_grow_item items[] = {{(void**)&in->pd_wt, sizeof *in->pd_wt},
		                               {(void**)&in->pd_key, sizeof *in->pd_key}};
		if (!pbd_grow_all(&w->mem, items, 2, in->pd_cap_rows, in->rows.cap)) return PBD_ERR_OUT_OF_MEMORY;
		in->pd_cap_rows = in->rows.cap;
		in->pd_topology = 0;
	}
	bool same = in->pd_topology == w->topology && in->pd_np == w->np && in->pd_nnz == nnz && in->pd_rows == in->rows.n;
	for (uint32_t i = 0; same && i < w->np; ++i) same = in->pd_free[i] == (w->w[i] > 0);
	if (!same) {
		uint32_t n = 0;
		for (uint32_t i = 0; i < w->np; ++i) {
			in->pd_free[i] = w->w[i] > 0;
			in->node[i] = in->pd_free[i] ? n++ : UINT32_MAX;
		}
		in->pd_n = n;
		in->pd_np = w->np;
		in->pd_nnz = nnz;
		in->pd_rows = in->rows.n;
		in->pd_topology = 0;
		in->chol.factored = false;
		if (n == 0) {
			in->pd_topology = w->topology;
			return PBD_OK;
		}
		/* A snapshot's weights are taken as the saved world's next step would have taken them
		 * (the branch below): kept while they hold, their constants stay and the matrix is the
		 * one it factored; weights from these positions would give another matrix and, short of
		 * convergence, other iterates. */
		const pbd_pd_saved* sv = &in->pd_saved;
		const bool restored = in->pd_restored && sv->rows == in->rows.n && sv->free == n && sv->entries == nnz;
		in->pd_restored = false;
		pbd_status sw = restored ? reserve_low_rank(w) : refresh_weights(w, h, false);
		if (sw != PBD_OK) return sw;
		assemble(w, h, in->pd_row, in->pd_col, in->pd_val);
		if (restored) {
			const bool hold = weights_hold(w, h);
			if (!hold || !keys_kept(w) ||
			    pbd_fnv1a(PBD_FNV1A_START, in->pd_val, nnz * sizeof *in->pd_val) != sv->hash) {
				sw = refresh_weights(w, h, !hold);
				if (sw != PBD_OK) return sw;
				assemble(w, h, NULL, NULL, in->pd_val);
			}
		}
		const pbd_sparse_pattern pat = {n, nnz, NULL, in->pd_col, in->pd_row};
		const pbd_status st = pbd_sparse_chol_analyze(&in->chol, &w->mem, &pat, NULL);
		if (st != PBD_OK) return st;
		in->pd_topology = w->topology;
	} else if (in->pd_n == 0) {
		return PBD_OK;
	} else {
		/* the kept weights first: a new factor only when a constant, a mass or the substep changed,
		 * or a row outgrew its weight */
		const bool hold = weights_hold(w, h);
		if (in->chol.factored && hold && keys_kept(w)) {
			assemble(w, h, NULL, NULL, in->pd_new);
			if (memcmp(in->pd_new, in->pd_val, (size_t)nnz * sizeof *in->pd_val) == 0) return PBD_OK;
		}
		const pbd_status sw = refresh_weights(w, h, !hold);
		if (sw != PBD_OK) return sw;
		assemble(w, h, NULL, NULL, in->pd_val);
	}
	return pbd_sparse_chol_factor(&in->chol, in->pd_val);
}

/* A general row's part of the right-hand side, wt A_ff q_f - k C g_f (see above): the matrix's
 * own product at the current positions, less the row's force there. A row whose stiffness
 * k |g|^2 outgrew twice its weight within the step (an element unfolding from degenerate, whose
 * gradient grows as 1 / its size) would make the iteration diverge: its k is lowered to
 * 2 w / |g|^2 for the rest of the step, and the next step's factor takes a larger weight
 * (weights_hold). */
static void general_rhs(const pbd_world* w, uint32_t row, double* b) {
	const pbd_integrator* in = w->integ;
	const pbd_rows* r = &in->rows;
	const uint32_t e0 = r->start[row], e1 = r->start[row + 1];
	const double wt = in->pd_wt[row];
	if (wt < 0) {
		/* a low-rank row: k g (g . q - C), its Gauss-Newton product less its force */
		double gq = 0;
		for (uint32_t e = e0; e < e1; ++e)
			if (in->node[r->p[e]] != UINT32_MAX) gq += (double)pbd_v3_dot(r->grad[e], w->q[r->p[e]]);
		const double s = (double)r->k[row] * (gq - (double)r->C[row]);
		for (uint32_t e = e0; e < e1; ++e) {
			const uint32_t k = in->node[r->p[e]];
			if (k == UINT32_MAX) continue;
			b[3 * k] += s * (double)r->grad[e].x;
			b[3 * k + 1] += s * (double)r->grad[e].y;
			b[3 * k + 2] += s * (double)r->grad[e].z;
		}
		return;
	}
	double G = 0, kr = (double)r->k[row];
	for (uint32_t e = e0; e < e1; ++e) G += (double)pbd_v3_dot(r->grad[e], r->grad[e]);
	if (kr * G > 2 * wt) kr = G > 0 ? 2 * wt / G : 0;
	const double kc = kr * (double)r->C[row];
	double mean[3] = {0, 0, 0};
	if (wt > 0 && e1 - e0 > 1) {
		for (uint32_t e = e0; e < e1; ++e) {
			if (in->node[r->p[e]] == UINT32_MAX) continue;
			const pbd_vec3 q = w->q[r->p[e]];
			mean[0] += (double)q.x;
			mean[1] += (double)q.y;
			mean[2] += (double)q.z;
		}
		for (int c = 0; c < 3; ++c) mean[c] /= (double)(e1 - e0);
	}
	for (uint32_t e = e0; e < e1; ++e) {
		const uint32_t k = in->node[r->p[e]];
		if (k == UINT32_MAX) continue;
		const pbd_vec3 q = w->q[r->p[e]], g = r->grad[e];
		b[3 * k] += wt * ((double)q.x - mean[0]) - kc * (double)g.x;
		b[3 * k + 1] += wt * ((double)q.y - mean[1]) - kc * (double)g.y;
		b[3 * k + 2] += wt * ((double)q.z - mean[2]) - kc * (double)g.z;
	}
}

/* g . v over a row's free particles, v 3 per node. */
static double row_dot(const pbd_world* w, uint32_t row, const double* v) {
	const pbd_integrator* in = w->integ;
	const pbd_rows* r = &in->rows;
	double s = 0;
	for (uint32_t e = r->start[row]; e < r->start[row + 1]; ++e) {
		const uint32_t k = in->node[r->p[e]];
		if (k == UINT32_MAX) continue;
		const pbd_vec3 g = r->grad[e];
		s += (double)g.x * v[3 * k] + (double)g.y * v[3 * k + 1] + (double)g.z * v[3 * k + 2];
	}
	return s;
}

/* z = B^-1 b in, (B + G K G^T)^-1 b out (see above), over the low-rank rows with a spring now (a
 * slack one has k = 0 and no stiffness). */
static pbd_status low_rank(pbd_world* w, double* z) {
	pbd_integrator* in = w->integ;
	const pbd_rows* r = &in->rows;
	const size_t n3 = 3 * (size_t)in->pd_n;
	uint32_t act[PBD_PD_LOW_RANK_MAX], na = 0;
	for (uint32_t j = 0; j < in->pd_nlr; ++j)
		if (r->k[in->pd_lr[j]] > 0) act[na++] = in->pd_lr[j];
	if (na == 0) return PBD_OK;
	for (uint32_t a = 0; a < na; ++a) {
		double* u = in->pd_u + a * n3;
		memset(u, 0, n3 * sizeof *u);
		for (uint32_t e = r->start[act[a]]; e < r->start[act[a] + 1]; ++e) {
			const uint32_t k = in->node[r->p[e]];
			if (k == UINT32_MAX) continue;
			u[3 * k] += (double)r->grad[e].x;
			u[3 * k + 1] += (double)r->grad[e].y;
			u[3 * k + 2] += (double)r->grad[e].z;
		}
		const pbd_status st = pbd_sparse_chol_solve3(&in->chol, u, u);
		if (st != PBD_OK) return st;
	}
	/* S = K^-1 + G^T U, symmetric positive definite, factored in place (Cholesky, lower part) */
	double S[PBD_PD_LOW_RANK_MAX][PBD_PD_LOW_RANK_MAX], c[PBD_PD_LOW_RANK_MAX];
	for (uint32_t a = 0; a < na; ++a) {
		for (uint32_t b = 0; b <= a; ++b) S[a][b] = row_dot(w, act[a], in->pd_u + b * n3);
		S[a][a] += 1 / (double)r->k[act[a]];
		c[a] = row_dot(w, act[a], z);
	}
	for (uint32_t a = 0; a < na; ++a) {
		for (uint32_t b = 0; b < a; ++b) {
			double s = S[a][b];
			for (uint32_t m = 0; m < b; ++m) s -= S[a][m] * S[b][m];
			S[a][b] = s / S[b][b];
		}
		double d = S[a][a];
		for (uint32_t m = 0; m < a; ++m) d -= S[a][m] * S[a][m];
		if (!(d > 0)) return PBD_OK; /* lost to rounding: keep B's solution, a plain iteration */
		S[a][a] = sqrt(d);
	}
	for (uint32_t a = 0; a < na; ++a) {
		for (uint32_t m = 0; m < a; ++m) c[a] -= S[a][m] * c[m];
		c[a] /= S[a][a];
	}
	for (uint32_t a = na; a-- > 0;) {
		for (uint32_t m = a + 1; m < na; ++m) c[a] -= S[m][a] * c[m];
		c[a] /= S[a][a];
	}
	for (uint32_t a = 0; a < na; ++a) {
		const double* u = in->pd_u + a * n3;
		for (size_t i = 0; i < n3; ++i) z[i] -= c[a] * u[i];
	}
	return PBD_OK;
}

void pbd_pd_solve(pbd_world* w, const pbd_step_ctx* ctx) {
	pbd_integrator* in = w->integ;
	const pbd_rows* r = &in->rows;
	const pbd_real h = ctx->h;
	const double ih2 = (double)ctx->inv_h2;
	/* The inertial target, and the first guess. */
	for (uint32_t i = 0; i < w->np; ++i) {
		if (!(w->w[i] > 0)) continue;
		const pbd_vec3 v = pbd_v3_add(w->v[i], pbd_v3_scale(in->f[i], h * w->w[i]));
		in->y[i] = pbd_v3_add(w->x_lo[i], pbd_v3_scale(v, h));
		w->q[i] = in->y[i];
	}
	if (in->pd_n == 0) return;
	pbd_step_ctx lin = *ctx;
	lin.q = w->q;
	double* b = in->rhs;
	for (int it = 0; it < w->def.iterations; ++it) {
		pbd_integrate_linearize(w, &lin);
		for (uint32_t i = 0; i < w->np; ++i) {
			const uint32_t k = in->node[i];
			if (k == UINT32_MAX) continue;
			const double m = ih2 / (double)w->w[i];
			b[3 * k] = m * (double)in->y[i].x;
			b[3 * k + 1] = m * (double)in->y[i].y;
			b[3 * k + 2] = m * (double)in->y[i].z;
		}
		for (uint32_t row = 0; row < r->n; ++row) {
			const uint32_t e0 = r->start[row], e1 = r->start[row + 1];
			if (r->rest[row] < 0) {
				general_rhs(w, row, b);
				continue;
			}
			/* the target of sum_free a_j q_j: its current value less C' along the row's direction */
			const double kf = (double)r->kf[row];
			/* kf 0: a hard row with no free particle (rows_hard.c), which moves nothing */
			const double c = kf > 0 ? (double)r->C[row] * (double)r->k[row] / kf : 0;
			double t[3] = {-c * (double)r->dir[row].x, -c * (double)r->dir[row].y, -c * (double)r->dir[row].z};
			for (uint32_t e = e0; e < e1; ++e) {
				if (in->node[r->p[e]] == UINT32_MAX) continue;
				const pbd_vec3 q = w->q[r->p[e]];
				const double a = (double)r->a[e];
				t[0] += a * (double)q.x;
				t[1] += a * (double)q.y;
				t[2] += a * (double)q.z;
			}
			for (uint32_t e = e0; e < e1; ++e) {
				const uint32_t k = in->node[r->p[e]];
				if (k == UINT32_MAX) continue;
				const double s = kf * (double)r->a[e];
				b[3 * k] += s * t[0];
				b[3 * k + 1] += s * t[1];
				b[3 * k + 2] += s * t[2];
			}
		}
		if (pbd_sparse_chol_solve3(&in->chol, b, b) != PBD_OK || low_rank(w, b) != PBD_OK) return;
		for (uint32_t i = 0; i < w->np; ++i) {
			const uint32_t k = in->node[i];
			if (k != UINT32_MAX) w->q[i] = pbd_v3((pbd_real)b[3 * k], (pbd_real)b[3 * k + 1], (pbd_real)b[3 * k + 2]);
		}
	}
}
