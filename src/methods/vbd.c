/* Vertex block descent (Chen, Macklin, Kim et al. 2024, "Vertex Block Descent"): the backward
 * Euler step as the minimisation of
 *   G(x) = sum_i m_i / (2 h^2) |x_i - y_i|^2 + sum_rows E_r(x),   y = x_n + h v_n + h^2 f_ext / m,
 * by Gauss-Seidel over vertices: each vertex takes the Newton step of G in its own three
 * coordinates, the others held, x_i += H_i^-1 f_i with
 *   f_i = -m_i / h^2 (x_i - y_i) - sum_{rows at i} dE_r/dx_i,
 *   H_i = m_i / h^2 I + sum_{rows at i} d^2 E_r / dx_i^2,
 * sweeping the vertices colour by colour (no two vertices of a colour share a row, so a colour's
 * steps are independent). The rows' per-vertex Hessian blocks are those of implicit.c, with the
 * compressive transverse part clamped so that every H_i is positive definite. Damping is the
 * paper's: the stiffness-proportional force -(beta / h) K_ii (x_i - x_n) with its Hessian.
 *
 * Every row's stiffness ramps as AVBD's penalty does (below): from the inertia of its lightest
 * particle up to the material's k, growing with the row's error, so that a stiff row next to a
 * soft one does not dominate the first sweeps and throw its vertices past the solution.
 *
 * Hard rows (compliance 0) are solved by the augmented Lagrangian of AVBD (Giles, Diaz and Yuksel
 * 2025, "Augmented Vertex Block Descent"): the row's energy is pen C'^2 / 2 + lam C', with after each
 * sweep lam <- lam + pen C' and pen <- pen + beta |C'|, so that C' goes to 0 without an infinite
 * stiffness in any vertex's system; between substeps lam and pen are carried over, decayed by
 * AVBD_GAMMA (pen no lower than its start, the inertia m / h^2 of the row's lightest particle).
 * C' = C - AVBD_ALPHA C0 is the paper's stabilisation: of the error C0 the row had when the
 * substep began, only the share 1 - AVBD_ALPHA is removed per substep, so that old error does not
 * come out as a burst of velocity; the error the substep's own motion makes is removed whole.
 *
 * A norm row's vector u = sum_j a_j x_j moves linearly with its particles, so after a vertex step
 * d the rows at it update u += a_i d exactly, and the next vertex reads current values without
 * evaluating the family again; the rows are linearised afresh at the start of each iteration. */
#include <string.h>

#include "methods/integrate.h"
#include "model/world.h"

/* AVBD's stabilisation alpha (the paper's value: lower ones correct old error faster but let a
 * heavy chain blow up), and its warm start: the share of a hard row's multiplier and penalty kept
 * from the last substep, AVBD_LAMBDA_KEEP gamma and gamma. */
#define AVBD_ALPHA       0.99
#define AVBD_LAMBDA_KEEP 0.99
#define AVBD_GAMMA       0.99
/* The penalty grows by AVBD_BETA times its start per unit of strain |C| / rest (per metre of |C|
 * at rest 0), and stays below AVBD_PEN_MAX times its start, where float still solves the vertex
 * systems. */
#define AVBD_BETA    100
#define AVBD_PEN_MAX 1e6

void pbd_vbd_free(pbd_world* w) {
	pbd_integrator* in = w->integ;
	const size_t np_alloc = in->vbd_cap_np ? (size_t)in->vbd_cap_np + 1 : 0;
	pbd_free(&w->mem, in->inc_start, np_alloc * sizeof *in->inc_start);
	pbd_free(&w->mem, in->order, np_alloc * sizeof *in->order);
	pbd_free(&w->mem, in->inc, in->vbd_cap_e * sizeof *in->inc);
	pbd_free(&w->mem, in->entry_row, in->vbd_cap_e * sizeof *in->entry_row);
	pbd_free(&w->mem, in->u, in->vbd_cap_r * sizeof *in->u);
	pbd_free(&w->mem, in->lam, in->vbd_cap_r * sizeof *in->lam);
	pbd_free(&w->mem, in->pen, in->vbd_cap_r * sizeof *in->pen);
	pbd_free(&w->mem, in->c0, in->vbd_cap_r * sizeof *in->c0);
	in->inc_start = in->order = in->inc = in->entry_row = NULL;
	in->u = NULL;
	in->lam = in->pen = in->c0 = NULL;
	in->vbd_cap_np = in->vbd_cap_e = in->vbd_cap_r = 0;
}

/* Grows the arrays for the rows of the current linearisation (in->rows). */
static bool reserve(pbd_world* w) {
	pbd_integrator* in = w->integ;
	const pbd_rows* r = &in->rows;
	if (in->vbd_cap_np < w->np) {
		/* Both hold cap + 1 (order one spare), so that they grow together or not at all. */
		const size_t old = in->vbd_cap_np, cap = w->cap_p;
		const pbd_grow_item items[] = {{(void**)&in->inc_start, sizeof *in->inc_start},
		                               {(void**)&in->order, sizeof *in->order}};
		if (!pbd_grow_all(&w->mem, items, 2, old ? old + 1 : 0, cap + 1)) return false;
		in->vbd_cap_np = (uint32_t)cap;
	}
	if (in->vbd_cap_e < r->ne) {
		const pbd_grow_item items[] = {{(void**)&in->inc, sizeof *in->inc},
		                               {(void**)&in->entry_row, sizeof *in->entry_row}};
		if (!pbd_grow_all(&w->mem, items, 2, in->vbd_cap_e, r->cap_e)) return false;
		in->vbd_cap_e = r->cap_e;
	}
	if (in->vbd_cap_r < r->n) {
		const pbd_grow_item items[] = {{(void**)&in->u, sizeof *in->u},
		                               {(void**)&in->lam, sizeof *in->lam},
		                               {(void**)&in->pen, sizeof *in->pen},
		                               {(void**)&in->c0, sizeof *in->c0}};
		if (!pbd_grow_all(&w->mem, items, 4, in->vbd_cap_r, r->cap)) return false;
		in->vbd_cap_r = r->cap;
	}
	return true;
}

/* The rows by particle, and a greedy colouring of the particles: two particles that share a row
 * get different colours. Particles in order, lowest free colour first: deterministic. A particle
 * whose neighbours hold all PBD_PARTITION_COLOURS colours goes to a last group, swept in order. */
static void build(pbd_world* w) {
	pbd_integrator* in = w->integ;
	const pbd_rows* r = &in->rows;
	const uint32_t np = w->np;
	memset(in->inc_start, 0, ((size_t)np + 1) * sizeof *in->inc_start);
	for (uint32_t row = 0; row < r->n; ++row)
		for (uint32_t e = r->start[row]; e < r->start[row + 1]; ++e) {
			in->entry_row[e] = row;
			in->inc_start[r->p[e] + 1]++;
		}
	for (uint32_t i = 0; i < np; ++i) in->inc_start[i + 1] += in->inc_start[i];
	/* fill, with order[] as the running cursor */
	for (uint32_t i = 0; i < np; ++i) in->order[i] = in->inc_start[i];
	for (uint32_t e = 0; e < r->ne; ++e) in->inc[in->order[r->p[e]]++] = e;

	uint64_t* used = w->colour_mask; /* partition.c's scratch, free outside the partition */
	memset(used, 0, (size_t)np * sizeof *used);
	uint32_t count[PBD_GROUP_COUNT] = {0};
	for (uint32_t i = 0; i < np; ++i) {
		const uint64_t m = used[i];
		const uint32_t c = m == UINT64_MAX ? PBD_PARTITION_COLOURS : (uint32_t)__builtin_ctzll(~m);
		count[c]++;
		/* the colour is kept in order[] until the sort below */
		in->order[i] = c;
		if (c == PBD_PARTITION_COLOURS) continue;
		for (uint32_t k = in->inc_start[i]; k < in->inc_start[i + 1]; ++k) {
			const uint32_t row = in->entry_row[in->inc[k]];
			for (uint32_t e = r->start[row]; e < r->start[row + 1]; ++e) used[r->p[e]] |= 1ull << c;
		}
	}
	in->colour_start[0] = 0;
	for (uint32_t c = 0; c < PBD_GROUP_COUNT; ++c) in->colour_start[c + 1] = in->colour_start[c] + count[c];
	in->colours = PBD_GROUP_COUNT;
	/* A new constraint set starts its rows cold; a snapshot's state is kept for the rows it was
	 * saved with (the same constraints in the same order). */
	if (r->n && in->vbd_restored != r->n) {
		memset(in->lam, 0, (size_t)r->n * sizeof *in->lam);
		memset(in->pen, 0, (size_t)r->n * sizeof *in->pen);
	}
	in->vbd_restored = UINT32_MAX;
	/* counting sort by colour, particles in index order within a colour */
	uint32_t cursor[PBD_GROUP_COUNT];
	memcpy(cursor, in->colour_start, sizeof cursor);
	for (uint32_t i = 0; i < np; ++i) used[i] = in->order[i];
	for (uint32_t i = 0; i < np; ++i) in->order[cursor[used[i]]++] = i;
	memset(used, 0, (size_t)np * sizeof *used);
}

static void linearise(pbd_world* w, const pbd_step_ctx* ctx) { pbd_rows_linearize_all(w, ctx, &w->integ->rows); }

pbd_status pbd_vbd_prepare(pbd_world* w) {
	pbd_integrator* in = w->integ;
	if (!reserve(w)) return PBD_ERR_OUT_OF_MEMORY;
	if (w->np == 0) return PBD_OK; /* nothing to colour, and no arrays to do it in */
	if (in->vbd_topology != w->topology || in->vbd_np != w->np) {
		build(w);
		in->vbd_topology = w->topology;
		in->vbd_np = w->np;
	}
	return PBD_OK;
}

uint32_t pbd_vbd_saved_rows(const pbd_world* w) {
	const pbd_integrator* in = w->integ;
	return w->def.method == PBD_METHOD_VBD && in->vbd_topology == w->topology && in->lam ? in->rows.n : 0;
}

pbd_status pbd_vbd_restore(pbd_world* w, uint32_t n, const pbd_real* lam, const pbd_real* pen) {
	pbd_integrator* in = w->integ;
	if (in->vbd_cap_r < n) {
		const pbd_grow_item items[] = {{(void**)&in->u, sizeof *in->u},
		                               {(void**)&in->lam, sizeof *in->lam},
		                               {(void**)&in->pen, sizeof *in->pen},
		                               {(void**)&in->c0, sizeof *in->c0}};
		if (!pbd_grow_all(&w->mem, items, 4, in->vbd_cap_r, n)) return PBD_ERR_OUT_OF_MEMORY;
		in->vbd_cap_r = n;
	}
	memcpy(in->lam, lam, (size_t)n * sizeof *lam);
	memcpy(in->pen, pen, (size_t)n * sizeof *pen);
	in->vbd_restored = n;
	return PBD_OK;
}

/* A general row has rest -1 (rows.h). */
static inline bool row_is_norm(const pbd_rows* r, uint32_t row) { return r->rest[row] >= 0; }

/* A double to the scalar type, clamped to its range so that no conversion overflows: the step's
 * divergence test catches a state that needed the clamp. */
static inline pbd_real to_real(double v) {
	const double m = (double)PBD_REAL_MAX / 16;
	return (pbd_real)(v > m ? m : v < -m ? -m : v);
}

/* Solves H d = f for one symmetric 3x3 block in double; false when H is not positive definite. */
static bool solve3(const double H[6], const double f[3], pbd_vec3* d) {
	/* H = [h0 h1 h2; h1 h3 h4; h2 h4 h5] */
	const double c00 = H[3] * H[5] - H[4] * H[4], c01 = H[2] * H[4] - H[1] * H[5], c02 = H[1] * H[4] - H[2] * H[3];
	const double det = H[0] * c00 + H[1] * c01 + H[2] * c02;
	if (!(det > 0) || !(H[0] > 0)) return false;
	const double c11 = H[0] * H[5] - H[2] * H[2], c12 = H[1] * H[2] - H[0] * H[4], c22 = H[0] * H[3] - H[1] * H[1];
	const double id = 1 / det;
	*d = pbd_v3(to_real((c00 * f[0] + c01 * f[1] + c02 * f[2]) * id),
	            to_real((c01 * f[0] + c11 * f[1] + c12 * f[2]) * id),
	            to_real((c02 * f[0] + c12 * f[1] + c22 * f[2]) * id));
	return true;
}

/* A general row at vertex i (rows.h): its value C is carried in u.x and moved to first order by
 * the gradients, which stay those of the sweep's linearisation; Gauss-Newton stiffness only. */
static void general_step(const pbd_integrator* in, const pbd_rows* r, uint32_t e, uint32_t row, pbd_vec3 dn,
                         pbd_real damp, double f[3], double H[6]) {
	const bool hard = r->k[row] == 0;
	const double k = (double)in->pen[row];
	const double C = (double)in->u[row].x - (hard ? AVBD_ALPHA * (double)in->c0[row] : 0);
	const double g[3] = {(double)r->grad[e].x, (double)r->grad[e].y, (double)r->grad[e].z};
	const double force = k * C + (hard ? (double)in->lam[row] : 0);
	const double rate = g[0] * (double)dn.x + g[1] * (double)dn.y + g[2] * (double)dn.z;
	const double kd = hard ? 0 : (double)damp * k;
	for (int c = 0; c < 3; ++c) f[c] -= (force + kd * rate) * g[c];
	const double kk = k + kd;
	H[0] += kk * g[0] * g[0];
	H[1] += kk * g[0] * g[1];
	H[2] += kk * g[0] * g[2];
	H[3] += kk * g[1] * g[1];
	H[4] += kk * g[1] * g[2];
	H[5] += kk * g[2] * g[2];
}

/* One vertex's Newton step; moves q[i] and the rows at it. */
static void vertex_step(pbd_world* w, uint32_t i, pbd_real inv_h2, pbd_real damp) {
	pbd_integrator* in = w->integ;
	const pbd_rows* r = &in->rows;
	const double m = 1 / (double)w->w[i], mh = m * (double)inv_h2;
	const pbd_vec3 qi = w->q[i], dy = pbd_v3_sub(qi, in->y[i]), dn = pbd_v3_sub(qi, w->x_lo[i]);
	double f[3] = {-mh * (double)dy.x, -mh * (double)dy.y, -mh * (double)dy.z};
	double H[6] = {mh, 0, 0, mh, 0, mh};
	for (uint32_t k = in->inc_start[i]; k < in->inc_start[i + 1]; ++k) {
		const uint32_t e = in->inc[k], row = in->entry_row[e];
		const pbd_vec3 u = in->u[row];
		if (!row_is_norm(r, row)) {
			general_step(in, r, e, row, dn, damp, f, H);
			continue;
		}
		const double ux = (double)u.x, uy = (double)u.y, uz = (double)u.z;
		const double len = sqrt(ux * ux + uy * uy + uz * uz);
		double n[3];
		if (len >= (double)PBD_EPSILON_LENGTH) {
			n[0] = ux / len, n[1] = uy / len, n[2] = uz / len;
		} else {
			const pbd_vec3 d = r->dir[row];
			n[0] = (double)d.x, n[1] = (double)d.y, n[2] = (double)d.z;
		}
		const double a = (double)r->a[e], rest = (double)r->rest[row];
		const bool hard = r->k[row] == 0;
		const double k_ = (double)in->pen[row];
		const double C = len - rest - (hard ? AVBD_ALPHA * (double)in->c0[row] : 0);
		/* dE/dx_i = (k C + lam) a n (lam 0 for a soft row); the damping force is
		 * -(beta / h) k a^2 n n^T (x_i - x_n) */
		const double force = k_ * C + (hard ? (double)in->lam[row] : 0);
		const double ka2 = k_ * a * a;
		const double proj = n[0] * (double)dn.x + n[1] * (double)dn.y + n[2] * (double)dn.z;
		const double fd = hard ? 0 : (double)damp * ka2 * proj;
		for (int c = 0; c < 3; ++c) f[c] -= (force * a + fd) * n[c];
		const double gn = ka2 * (1 + (hard ? 0 : (double)damp));
		/* The transverse stiffness a^2 force / |u| of a stretched norm; none for a norm too short
		 * for a direction, whose ends (coincident, with rest > 0) have no side to be held on. */
		const double gt = rest == 0 ? ka2 : force > 0 && len >= (double)PBD_EPSILON_LENGTH ? a * a * force / len : 0;
		H[0] += gn * n[0] * n[0] + gt * (1 - n[0] * n[0]);
		H[1] += (gn - gt) * n[0] * n[1];
		H[2] += (gn - gt) * n[0] * n[2];
		H[3] += gn * n[1] * n[1] + gt * (1 - n[1] * n[1]);
		H[4] += (gn - gt) * n[1] * n[2];
		H[5] += gn * n[2] * n[2] + gt * (1 - n[2] * n[2]);
	}
	pbd_vec3 d;
	if (!solve3(H, f, &d)) return;
	w->q[i] = pbd_v3_add(qi, d);
	for (uint32_t k = in->inc_start[i]; k < in->inc_start[i + 1]; ++k) {
		const uint32_t e = in->inc[k];
		pbd_vec3* u = &in->u[in->entry_row[e]];
		if (row_is_norm(r, in->entry_row[e]))
			*u = pbd_v3_add(*u, pbd_v3_scale(d, r->a[e]));
		else
			u->x += pbd_v3_dot(r->grad[e], d); /* a general row's C, to first order */
	}
}

/* The penalty scale of a row: the inertia m / h^2 of its heaviest free particle. A row that holds
 * a heavy particle must grow as stiff as that particle's inertia before it holds it; scaled by
 * the lightest one, the ramp would take thousands of sweeps to get there (a light chain under a
 * heavy weight). */
static pbd_real pen_start(const pbd_world* w, uint32_t row, pbd_real inv_h2) {
	const pbd_rows* r = &w->integ->rows;
	pbd_real wmin = 0;
	for (uint32_t e = r->start[row]; e < r->start[row + 1]; ++e) {
		const pbd_real wi = w->w[r->p[e]];
		if (wi > 0 && (wmin == 0 || wi < wmin)) wmin = wi;
	}
	return wmin > 0 ? to_real((double)inv_h2 / (double)wmin) : 0;
}

static void warm_start(pbd_world* w, pbd_real inv_h2) {
	pbd_integrator* in = w->integ;
	const pbd_rows* r = &in->rows;
	for (uint32_t row = 0; row < r->n; ++row) {
		const pbd_real p0 = pen_start(w, row, inv_h2);
		in->lam[row] *= (pbd_real)(AVBD_LAMBDA_KEEP * AVBD_GAMMA);
		in->pen[row] = PBD_FMAX(in->pen[row] * (pbd_real)AVBD_GAMMA, p0);
		if (r->k[row] > 0) in->pen[row] = PBD_FMIN(in->pen[row], r->k[row]);
	}
}

/* After a sweep: each hard row's multiplier takes the force its penalty exerts, and the penalty
 * grows with what is left of C (AVBD's k <- k + beta |C|, with beta scaled by the start). */
static void dual_update(pbd_world* w, pbd_real inv_h2) {
	pbd_integrator* in = w->integ;
	const pbd_rows* r = &in->rows;
	for (uint32_t row = 0; row < r->n; ++row) {
		const bool hard = r->k[row] == 0;
		const pbd_vec3 u = in->u[row];
		const double value = row_is_norm(r, row) ? sqrt((double)pbd_v3_dot(u, u)) - (double)r->rest[row] : (double)u.x;
		const double C = value - (hard ? AVBD_ALPHA * (double)in->c0[row] : 0);
		const double pen = (double)in->pen[row], p0 = (double)pen_start(w, row, inv_h2);
		if (hard) in->lam[row] = to_real((double)in->lam[row] + pen * C);
		const double scale = r->rest[row] > 0 ? (double)r->rest[row] : 1;
		const double cap = hard ? AVBD_PEN_MAX * p0 : (double)r->k[row];
		in->pen[row] = to_real(fmin(pen + AVBD_BETA * p0 * fabs(C) / scale, cap));
	}
}

/* One colour's vertices in blocks on the world's threads: no two of them share a row, so each
 * step reads only what no other step of the colour writes, and the blocks give the bits of the
 * sweep in order. */
typedef struct colour_stage {
	pbd_world* w;
	uint32_t first, end; /* positions in order[] */
	pbd_real inv_h2, damp;
} colour_stage;

#define VBD_BLOCK 64u /* vertices per block: a vertex step reads all its rows */

static void run_vertices(pbd_world* w, uint32_t first, uint32_t end, pbd_real inv_h2, pbd_real damp) {
	for (uint32_t k = first; k < end; ++k) {
		const uint32_t i = w->integ->order[k];
		if (w->w[i] > 0) vertex_step(w, i, inv_h2, damp);
	}
}

static void colour_block(void* arg, uint32_t block, uint32_t worker) {
	(void)worker;
	const colour_stage* s = (const colour_stage*)arg;
	const uint32_t first = s->first + block * VBD_BLOCK;
	run_vertices(s->w, first, pbd_block_end(first, s->end, VBD_BLOCK), s->inv_h2, s->damp);
}

static void sweep(pbd_world* w, pbd_real inv_h2, pbd_real damp) {
	const pbd_integrator* in = w->integ;
	colour_stage s = {w, 0, 0, inv_h2, damp};
	for (uint32_t c = 0; c < in->colours; ++c) {
		s.first = in->colour_start[c];
		s.end = in->colour_start[c + 1];
		if (c + 1 == in->colours) /* the vertices the colouring could not place: in order, on this thread */
			run_vertices(w, s.first, s.end, inv_h2, damp);
		else if (s.first < s.end)
			pbd_exec_stage(&w->exec, colour_block, &s, pbd_blocks(s.end - s.first, VBD_BLOCK));
	}
}

void pbd_vbd_solve(pbd_world* w, const pbd_step_ctx* ctx) {
	pbd_integrator* in = w->integ;
	const pbd_real h = ctx->h;
	/* The inertial target, and the first guess: where the particles would go without constraints. */
	for (uint32_t i = 0; i < w->np; ++i) {
		if (!(w->w[i] > 0)) continue;
		const pbd_vec3 v = pbd_v3_add(w->v[i], pbd_v3_scale(in->f[i], h * w->w[i]));
		in->y[i] = pbd_v3_add(w->x_lo[i], pbd_v3_scale(v, h));
		w->q[i] = in->y[i];
	}
	pbd_step_ctx lin = *ctx;
	if (w->integ->rows.hard_family != UINT32_MAX) {
		/* the hard rows' error at the substep's start, for the stabilisation */
		lin.q = w->x_lo;
		linearise(w, &lin);
		for (uint32_t row = 0; row < in->rows.n; ++row) in->c0[row] = in->rows.k[row] == 0 ? in->rows.C[row] : 0;
	}
	lin.q = w->q;
	const pbd_real damp = w->def.stiffness_damping / h;
	const pbd_rows* r = &in->rows;
	for (int it = 0; it < w->def.iterations; ++it) {
		linearise(w, &lin);
		if (it == 0) warm_start(w, ctx->inv_h2);
		for (uint32_t row = 0; row < r->n; ++row)
			in->u[row] =
			    row_is_norm(r, row) ? pbd_v3_scale(r->dir[row], r->C[row] + r->rest[row]) : pbd_v3(r->C[row], 0, 0);
		sweep(w, ctx->inv_h2, damp);
		dual_update(w, ctx->inv_h2);
	}
}
