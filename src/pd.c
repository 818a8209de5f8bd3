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
 * moving body does not refactor every step. A row with more than PBD_PD_DENSE_MAX free particles
 * (the enclosed volume of a large closed mesh, n^2 entries) stays out of the matrix: w = 0, and its
 * force k C g enters the right-hand side at the iterate's positions (docs/methods.md). */
#include <math.h>
#include <string.h>

#include "integrate.h"
#include "world.h"

void pbd_pd_free(pbd_world* w) {
	pbd_integrator* in = &w->integ;
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
	in->node = NULL;
	in->pd_free = NULL;
	in->pd_row = in->pd_col = NULL;
	in->pd_val = in->pd_new = in->rhs = in->pd_wt = in->pd_key = NULL;
	in->pd_cap_np = in->pd_cap_nnz = in->pd_cap_rows = 0;
	in->pd_n = in->pd_nnz = in->pd_rows = 0;
	in->pd_topology = 0;
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

/* Entries of the matrix: one diagonal per free particle, and the square of each row's free
 * particles. */
static uint64_t entries(const pbd_world* w) {
	const pbd_rows* r = &w->integ.rows;
	uint64_t nnz = 0;
	for (uint32_t i = 0; i < w->np; ++i) nnz += w->w[i] > 0;
	for (uint32_t row = 0; row < r->n; ++row) {
		const uint64_t free = free_count(w, r, row);
		if (in_matrix(r, row, (uint32_t)free)) nnz += free * free;
	}
	return nnz;
}

/* What a general row's weight was taken for: its constant kf, or for a rigid row (whose kf follows
 * the gradients, rows_rigid.c) the world's rigid_stiffness, negated. */
static double row_key(const pbd_world* w, const pbd_rows* r, uint32_t row) {
	return r->hard[row] & PBD_ROW_HARD_KF ? -(double)w->def.rigid_stiffness : (double)r->kf[row];
}

/* Each general row's weight w = kf |g|^2 from the current linearisation (see above), with its key.
 * A rigid row's kf is kappa m_eff / h^2 (rows_rigid.c), which makes w = kappa |g|^2 / (h^2 sum_i
 * w_i |g_i|^2), a mass over h^2 whatever the gradient's size. A row with no gradient now (a slack
 * unilateral row, a degenerate element) still needs a weight if it has one particle, since it
 * grips as soon as it is taut: kf there, or kappa m_i / h^2 for a rigid one; a larger row keeps 0
 * and is integrated through the right-hand side alone until the factor is next built. */
static void weights(pbd_world* w, pbd_real h) {
	pbd_integrator* in = &w->integ;
	const pbd_rows* r = &in->rows;
	const double cap = sqrt((double)PBD_REAL_MAX);
	const double kappa_ih2 = (double)w->def.rigid_stiffness / ((double)h * (double)h);
	for (uint32_t row = 0; row < r->n; ++row) {
		in->pd_wt[row] = 0;
		in->pd_key[row] = 0;
		if (r->rest[row] >= 0) continue;
		in->pd_key[row] = row_key(w, r, row);
		const uint32_t e0 = r->start[row], e1 = r->start[row + 1];
		const uint32_t free = free_count(w, r, row);
		if (free == 0 || !in_matrix(r, row, free)) continue;
		double G = 0;
		for (uint32_t e = e0; e < e1; ++e) G += (double)pbd_v3_dot(r->grad[e], r->grad[e]);
		const double kf = (double)r->kf[row];
		double wt = 0;
		if (kf > 0 && G > 0)
			wt = kf * G;
		else if (e1 - e0 == 1)
			wt = r->hard[row] & PBD_ROW_HARD_KF ? kappa_ih2 / (double)w->w[r->p[e0]] : kf;
		in->pd_wt[row] = isfinite(wt) ? (wt < cap ? wt : cap) : 0;
	}
}

/* Whether every general row still has the constant its weight was taken for. */
static bool keys_kept(const pbd_world* w) {
	const pbd_integrator* in = &w->integ;
	const pbd_rows* r = &in->rows;
	for (uint32_t row = 0; row < r->n; ++row)
		if (r->rest[row] < 0 && row_key(w, r, row) != in->pd_key[row]) return false;
	return true;
}

/* The values of the matrix in the pattern's order into v (the pattern into row/col when given). */
static void assemble(const pbd_world* w, pbd_real h, uint32_t* prow, uint32_t* pcol, double* v) {
	const pbd_integrator* in = &w->integ;
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
	pbd_integrator* in = &w->integ;
	const pbd_real h = w->def.dt / (pbd_real)w->def.substeps;
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
		weights(w, h);
		assemble(w, h, in->pd_row, in->pd_col, in->pd_val);
		const pbd_sparse_pattern pat = {n, nnz, NULL, in->pd_col, in->pd_row};
		const pbd_status st = pbd_sparse_chol_analyze(&in->chol, &w->mem, &pat, NULL);
		if (st != PBD_OK) return st;
		in->pd_topology = w->topology;
	} else if (in->pd_n == 0) {
		return PBD_OK;
	} else {
		/* the kept weights first: a new factor only when a constant, a mass or the substep changed */
		if (in->chol.factored && keys_kept(w)) {
			assemble(w, h, NULL, NULL, in->pd_new);
			if (memcmp(in->pd_new, in->pd_val, (size_t)nnz * sizeof *in->pd_val) == 0) return PBD_OK;
		}
		weights(w, h);
		assemble(w, h, NULL, NULL, in->pd_val);
	}
	return pbd_sparse_chol_factor(&in->chol, in->pd_val);
}

/* A general row's part of the right-hand side, wt A_ff q_f - k C g_f (see above): the matrix's
 * own product at the current positions, less the row's force there. */
static void general_rhs(const pbd_world* w, uint32_t row, double* b) {
	const pbd_integrator* in = &w->integ;
	const pbd_rows* r = &in->rows;
	const uint32_t e0 = r->start[row], e1 = r->start[row + 1];
	const double wt = in->pd_wt[row], kc = (double)r->k[row] * (double)r->C[row];
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

void pbd_pd_solve(pbd_world* w, const pbd_step_ctx* ctx) {
	pbd_integrator* in = &w->integ;
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
			/* kf 0: a rigid row with no free particle (rows_rigid.c), which moves nothing */
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
		if (pbd_sparse_chol_solve3(&in->chol, b, b) != PBD_OK) return;
		for (uint32_t i = 0; i < w->np; ++i) {
			const uint32_t k = in->node[i];
			if (k != UINT32_MAX) w->q[i] = pbd_v3((pbd_real)b[3 * k], (pbd_real)b[3 * k + 1], (pbd_real)b[3 * k + 2]);
		}
	}
}
