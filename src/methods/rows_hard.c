/* Hard rows (compliance 0) under the force-based methods other than vertex block descent.
 *
 * Explicit, symplectic and implicit Euler and projective dynamics integrate springs; a hard row
 * has none. It gets the spring that makes its own mode as stiff as the method takes at the
 * substep h. With m_eff = 1 / sum_i w_i |grad_i C|^2 the row's effective mass (a distance:
 * 1 / (w_i + w_j)), a spring k along the row alone oscillates at omega^2 = k / m_eff, and
 * kappa = (omega h)^2 = h^2 k / m_eff measures the spring against the step:
 *
 *   implicit Euler, projective dynamics (stable at any kappa): k = kappa m_eff / h^2, kappa =
 *     pbd_world_def.hard_stiffness. A steady load F along the row stretches it by
 *     C = F / k = (F / m_eff) h^2 / kappa: a pendulum at rest sags by g h^2 / kappa.
 *   symplectic Euler: stable while (omega h)^2 < 4 / (1 + 2 beta / h) for every mode of the whole
 *     system (beta the stiffness damping), not only the row's own: a chain's top mode is twice its
 *     links'. The largest eigenvalue of M^-1 K is bounded by Gershgorin's theorem over 3x3 blocks,
 *       lambda_max <= max_i sqrt(w_i) sum_{rows r at i} k_r |grad_i C_r| S_r,
 *       S_r = sum_j sqrt(w_j) |grad_j C_r|
 *     (the transverse part of a norm row never raises a block's norm above k |a_i a_j|), and the
 *     hard rows share what the springs leave of the budget B = c / h^2 at each particle: a hard
 *     row takes k = min over its particles of (B - springs_i) / hard_i, with hard_i the same sum
 *     over the hard rows at unit k, so that no particle's sum passes B.
 *   explicit Euler: no undamped spring is stable (each step multiplies the energy by
 *     1 + omega^2 h^2). A hard row also gets damping along itself, beta' = max(beta, 2 h): with
 *     (omega h)^2 = 1 its own mode is then dead-beat (both eigenvalues of the step 0), and every
 *     mode below it decays (|mu|^2 = 1 - (omega h)^2). The budget is shared as above.
 *
 * Either way the result is a stiff spring, a soft approximation of the constraint: the row
 * stretches under load by O(h^2) and rings at most at the frequency the method allows. A row with
 * no free particle, or with zero gradient at every free one (a slack unilateral row), has
 * m_eff infinite and moves nothing: it gets k = 0. */
#include <math.h>

#include "methods/integrate.h"
#include "model/world.h"

/* The stiffest spring handed out, so that k C and k h^2 stay finite in float for any step the
 * world accepts (a 1e9 kg particle at a substep of 1e-10 s would otherwise ask for 1e31 N/m). */
static double cap_k(double k) {
	const double cap = sqrt((double)PBD_REAL_MAX);
	return k < cap ? k : cap;
}

/* sum_i w_i |grad_i C|^2 over the row's free particles: 1 / m_eff. */
static double inv_eff_mass(const pbd_world* w, const pbd_rows* r, uint32_t row) {
	double s = 0;
	for (uint32_t e = r->start[row]; e < r->start[row + 1]; ++e) {
		const pbd_real iw = w->w[r->p[e]];
		if (iw > 0) s += (double)iw * (double)pbd_v3_dot(r->grad[e], r->grad[e]);
	}
	return s;
}

/* Sets the missing constants of a hard row to k. */
static void set_row(pbd_rows* r, uint32_t row, double k) {
	const pbd_real kr = (pbd_real)cap_k(k);
	if (r->hard[row] & PBD_ROW_HARD_K) {
		r->k[row] = kr;
		const pbd_real C = r->C[row], rest = r->rest[row];
		r->g[row] = rest < 0 ? 0 : pbd_rows_transverse(kr, C, rest, C + rest);
	}
	if (r->hard[row] & PBD_ROW_HARD_KF) r->kf[row] = kr;
}

/* The fraction c of (omega h)^2 that the Euler methods keep every mode under, from the
 * stability of one damped mode (beta along every row, beta' = max(beta, 2 h) along the hard
 * ones under explicit Euler): symplectic Euler is stable for (omega h)^2 < 4 / (1 + 2 beta / h),
 * explicit Euler for (omega h)^2 < 4 / (2 beta' / h - 1), where beta' = 2 h gives 4 / 3 and the
 * dead-beat 1 is taken. The 0.9 keeps symplectic Euler off its edge, where the bound is tight
 * (a long chain) and the rows turn within the substep. */
static double euler_budget(const pbd_world* w, pbd_real h) {
	const double beta_h = (double)w->def.stiffness_damping / (double)h;
	if (w->def.method == PBD_METHOD_SYMPLECTIC_EULER) return 0.9 * 4 / (1 + 2 * beta_h);
	const double bh = beta_h > 2 ? beta_h : 2;
	const double c = 0.9 * 4 / (2 * bh - 1);
	return c < 1 ? c : 1;
}

/* Explicit and symplectic Euler: each hard row's share of the stable budget (see above), capped
 * at kappa m_eff / h^2 like the implicit methods' springs. */
static void share_budget(pbd_world* w, pbd_real h) {
	pbd_rows* r = &w->integ->rows;
	pbd_real *load = w->integ->load, *unit = w->integ->unit;
	for (uint32_t i = 0; i < w->np; ++i) load[i] = unit[i] = 0;
	for (uint32_t row = 0; row < r->n; ++row) {
		const uint32_t e0 = r->start[row], e1 = r->start[row + 1];
		pbd_real S = 0;
		for (uint32_t e = e0; e < e1; ++e) S += PBD_SQRT(w->w[r->p[e]] * pbd_v3_dot(r->grad[e], r->grad[e]));
		const bool hard = (r->hard[row] & PBD_ROW_HARD_K) != 0;
		for (uint32_t e = e0; e < e1; ++e) {
			const uint32_t p = r->p[e];
			const pbd_real t = PBD_SQRT(w->w[p] * pbd_v3_dot(r->grad[e], r->grad[e])) * S;
			if (hard)
				unit[p] += t;
			else
				load[p] += r->k[row] * t;
		}
	}
	const double ih2 = 1 / ((double)h * (double)h);
	const double B = euler_budget(w, h) * ih2, kappa = (double)w->def.hard_stiffness;
	for (uint32_t row = 0; row < r->n; ++row) {
		if (!r->hard[row]) continue;
		const double s = inv_eff_mass(w, r, row);
		double k = s > 0 ? kappa * ih2 / s : 0;
		if (r->hard[row] & PBD_ROW_HARD_K) {
			for (uint32_t e = r->start[row]; e < r->start[row + 1]; ++e) {
				const uint32_t p = r->p[e];
				if (!(unit[p] > 0) || !(pbd_v3_dot(r->grad[e], r->grad[e]) > 0) || !(w->w[p] > 0)) continue;
				/* Springs alone past the budget are unstable whatever the hard rows do; half of it
				 * keeps the hard row a constraint rather than nothing. */
				double left = B - (double)load[p];
				if (left < 0.5 * B) left = 0.5 * B;
				const double kp = left / (double)unit[p];
				if (kp < k) k = kp;
			}
		}
		set_row(r, row, k);
	}
}

void pbd_rows_soften_hard(pbd_world* w, pbd_real h) {
	pbd_rows* r = &w->integ->rows;
	if (r->n_hard == 0) return;
	const pbd_method method = w->def.method;
	if (method == PBD_METHOD_EXPLICIT_EULER || method == PBD_METHOD_SYMPLECTIC_EULER) {
		share_budget(w, h);
		return;
	}
	const double kappa_ih2 = (double)w->def.hard_stiffness / ((double)h * (double)h);
	for (uint32_t row = 0; row < r->n; ++row) {
		if (!r->hard[row]) continue;
		const double s = inv_eff_mass(w, r, row);
		set_row(r, row, s > 0 ? kappa_ih2 / s : 0);
	}
}

void pbd_integrate_linearize(pbd_world* w, const pbd_step_ctx* ctx) {
	pbd_rows_linearize_all(w, ctx, &w->integ->rows);
	if (w->def.method != PBD_METHOD_VBD) pbd_rows_soften_hard(w, ctx->h);
}

void pbd_rows_hard_damping(const pbd_world* w, pbd_real h, pbd_vec3* f) {
	const pbd_rows* r = &w->integ->rows;
	const pbd_real beta = w->def.stiffness_damping;
	const pbd_real extra = 2 * h - beta;
	if (r->n_hard == 0 || !(extra > 0)) return;
	for (uint32_t row = 0; row < r->n; ++row) {
		if (!(r->hard[row] & PBD_ROW_HARD_K)) continue;
		const uint32_t e0 = r->start[row], e1 = r->start[row + 1];
		pbd_real rate = 0;
		for (uint32_t e = e0; e < e1; ++e) rate += pbd_v3_dot(r->grad[e], w->v[r->p[e]]);
		const pbd_real s = -extra * r->k[row] * rate;
		for (uint32_t e = e0; e < e1; ++e) f[r->p[e]] = pbd_v3_add(f[r->p[e]], pbd_v3_scale(r->grad[e], s));
	}
}
