/* Tetrahedral stable Neo-Hookean elements as two constraints on the deformation gradient
 * F = Ds Dm^-1 (Macklin and Müller 2021, "A constraint-based formulation of stable Neo-Hookean
 * materials"): the deviatoric C_D = |F|_F with compliance 1 / (mu V0) and the hydrostatic
 * C_H = det F - gamma with compliance 1 / (lambda V0), gamma = 1 + mu / lambda, which together
 * store the stable Neo-Hookean energy of Smith et al. 2018 without its log term. Under PBD
 * stiffness the pair becomes |F|_F = sqrt(3) and det F = 1, which hold exactly when F is a
 * rotation. docs/constraints.md derives the gradients and the Lamé mapping. */
#include <string.h>

#include "constraints/tet_neohookean.h"
#include "constraints/rows.h"
#include "mesh/tet.h"
#include "model/world.h"
#ifdef PBD_HAVE_AVX2
#include "constraints/lanes.h"
#endif

/* Cold data: the rest volume and the material as given. */
typedef struct pbd_tet_nh_p {
	pbd_real volume;
	pbd_real youngs_modulus;
	pbd_real poisson_ratio;
	pbd_real stiffness[2];
} pbd_tet_nh_p;

_Static_assert(sizeof(pbd_tet_nh_p) == 5 * sizeof(pbd_real), "padding in pbd_tet_nh_p");

#define FAM(w)  (&(w)->fam[PBD_FAMILY_TET_NEOHOOKEAN])
#define HOT(f)  ((pbd_tet_nh_c*)(f)->hot)
#define COLD(f) ((pbd_tet_nh_p*)(f)->cold)

pbd_tet_neohookean_def pbd_tet_neohookean_def_default(void) {
	pbd_tet_neohookean_def d;
	memset(&d, 0, sizeof d);
	d.youngs_modulus = PBD_R(1e6);
	d.poisson_ratio = PBD_R(0.45);
	d.stiffness_deviatoric = 1;
	d.stiffness_hydrostatic = 1;
	return d;
}

/* The Lamé parameters the constraints use, from E and nu: mu = E / (2 (1 + nu)) and the
 * hydrostatic lambda' = lambda + mu = E / (2 (1 + nu) (1 - 2 nu)). Without the log term the
 * energy's small-strain limit is mu |e|^2 + (lambda' - mu) / 2 tr(e)^2, so lambda' = lambda + mu
 * reproduces linear elasticity with E and nu (docs/constraints.md), and stays positive for every
 * nu in (-1, 0.5), nu = 0 included. */
static void lame(double E, double nu, double* mu, double* lambda_h) {
	*mu = E / (2.0 * (1.0 + nu));
	*lambda_h = E / (2.0 * (1.0 + nu) * (1.0 - 2.0 * nu));
}

/* The compliances 1 / (mu V0) and 1 / (lambda' V0), or false when one is not a finite scalar. */
static bool compliances(double E, double nu, double volume, double* alpha_d, double* alpha_h) {
	double mu, lh;
	lame(E, nu, &mu, &lh);
	const double md = mu * volume, mh = lh * volume;
	/* compared before dividing, so that no quotient overflows, also in double builds */
	const double least = 2.0 / (double)PBD_REAL_MAX;
	if (!(md >= least) || !(mh >= least) || !isfinite(md) || !isfinite(mh)) return false;
	*alpha_d = 1.0 / md;
	*alpha_h = 1.0 / mh;
	return true;
}

static pbd_status material_ok(pbd_world* w, const char* fn, uint32_t k, pbd_real E, pbd_real nu, pbd_real kd,
                              pbd_real kh) {
	if (!pbd_is_finite(E) || !pbd_is_finite(nu) || !pbd_is_finite(kd) || !pbd_is_finite(kh))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: constraint %u: a material parameter is not finite", fn, k);
	if (!(E > 0))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: constraint %u: youngs_modulus must be > 0 (got %.9g)", fn, k,
		                (double)E);
	if (!(nu > -1 && nu < PBD_R(0.5)))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: constraint %u: poisson_ratio must be in (-1, 0.5) (got %.9g)", fn,
		                k, (double)nu);
	if (!(kd >= 0 && kd <= 1))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: constraint %u: stiffness_deviatoric must be in [0, 1] (got %.9g)",
		                fn, k, (double)kd);
	if (!(kh >= 0 && kh <= 1))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "%s: constraint %u: stiffness_hydrostatic must be in [0, 1] (got %.9g)", fn, k, (double)kh);
	return PBD_OK;
}

/* The rest shape of def k: Dm^-1 and V0 from the particles' positions, in double. */
static pbd_status rest_shape(pbd_world* w, uint32_t k, const pbd_tet_neohookean_def* d, double dm_inv[9],
                             double* volume) {
	const char* fn = "pbd_world_add_tet_neohookeans";
	const pbd_vec3* x = w->x;
	switch (pbd_tet_classify(x[d->p[0]], x[d->p[1]], x[d->p[2]], x[d->p[3]], volume)) {
	case PBD_TET_POSITIVE:
		break;
	case PBD_TET_INVERTED:
		return pbd_fail(w, PBD_ERR_DEGENERATE,
		                "%s: constraint %u: rest tetrahedron (%u, %u, %u, %u) is inverted (negative volume); list two "
		                "of its particles the other way round",
		                fn, k, d->p[0], d->p[1], d->p[2], d->p[3]);
	case PBD_TET_TOO_LARGE:
		return pbd_fail(w, PBD_ERR_NOT_FINITE,
		                "%s: constraint %u: rest tetrahedron (%u, %u, %u, %u) is too large: its volume overflows the "
		                "scalar",
		                fn, k, d->p[0], d->p[1], d->p[2], d->p[3]);
	default:
		return pbd_fail(w, PBD_ERR_DEGENERATE,
		                "%s: constraint %u: rest tetrahedron (%u, %u, %u, %u) is degenerate: its volume is about 0", fn,
		                k, d->p[0], d->p[1], d->p[2], d->p[3]);
	}
	double m[3][3]; /* m[r][c]: component r of edge c */
	const pbd_vec3 o = x[d->p[0]];
	for (int c = 0; c < 3; ++c) {
		const pbd_vec3 v = x[d->p[c + 1]];
		m[0][c] = (double)v.x - (double)o.x;
		m[1][c] = (double)v.y - (double)o.y;
		m[2][c] = (double)v.z - (double)o.z;
	}
	/* Dm^-1 = adj(Dm) / det(Dm); det = 6 V0 > 0 and the shape is not degenerate, so the entries are
	 * at most about 1e6 (float; 1e12 double) over the longest edge. */
	const double det = 6.0 * *volume;
	const double adj[9] = {
	    m[1][1] * m[2][2] - m[1][2] * m[2][1], m[0][2] * m[2][1] - m[0][1] * m[2][2],
	    m[0][1] * m[1][2] - m[0][2] * m[1][1], m[1][2] * m[2][0] - m[1][0] * m[2][2],
	    m[0][0] * m[2][2] - m[0][2] * m[2][0], m[0][2] * m[1][0] - m[0][0] * m[1][2],
	    m[1][0] * m[2][1] - m[1][1] * m[2][0], m[0][1] * m[2][0] - m[0][0] * m[2][1],
	    m[0][0] * m[1][1] - m[0][1] * m[1][0],
	};
	for (int i = 0; i < 9; ++i) {
		dm_inv[i] = adj[i] / det;
		if (!(fabs(dm_inv[i]) <= (double)PBD_REAL_MAX * 1e-6))
			return pbd_fail(w, PBD_ERR_DEGENERATE,
			                "%s: constraint %u: rest tetrahedron (%u, %u, %u, %u) is too thin to invert its shape", fn,
			                k, d->p[0], d->p[1], d->p[2], d->p[3]);
	}
	return PBD_OK;
}

static pbd_status validate(pbd_world* w, uint32_t k, const pbd_tet_neohookean_def* d, double dm_inv[9],
                           double* volume) {
	const char* fn = "pbd_world_add_tet_neohookeans";
	for (int i = 0; i < 4; ++i)
		if (d->p[i] >= w->np)
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
			                "%s: constraint %u: particle index p[%d] = %u out of range (%u "
			                "particles)",
			                fn, k, i, d->p[i], w->np);
	for (int i = 0; i < 4; ++i)
		for (int j = i + 1; j < 4; ++j)
			if (d->p[i] == d->p[j])
				return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: constraint %u: particle %u appears twice", fn, k,
				                d->p[i]);
	pbd_status st =
	    material_ok(w, fn, k, d->youngs_modulus, d->poisson_ratio, d->stiffness_deviatoric, d->stiffness_hydrostatic);
	if (st != PBD_OK) return st;
	st = rest_shape(w, k, d, dm_inv, volume);
	if (st != PBD_OK) return st;
	double ad, ah;
	if (!compliances((double)d->youngs_modulus, (double)d->poisson_ratio, *volume, &ad, &ah))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "%s: constraint %u: youngs_modulus %.9g Pa is too small for a rest volume of %.9g m^3: the "
		                "compliance overflows the scalar",
		                fn, k, (double)d->youngs_modulus, *volume);
	return PBD_OK;
}

pbd_status pbd_world_add_tet_neohookeans(pbd_world* w, uint32_t count, const pbd_tet_neohookean_def* defs,
                                         uint32_t* first) {
	const char* fn = "pbd_world_add_tet_neohookeans";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	if (count == 0) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: count is 0", fn);
	if (!defs) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: defs is NULL", fn);
	double dm_inv[9], volume;
	for (uint32_t k = 0; k < count; ++k) {
		const pbd_status st = validate(w, k, &defs[k], dm_inv, &volume);
		if (st != PBD_OK) return st;
	}
	const uint32_t base = pbd_family_append(w, PBD_FAMILY_TET_NEOHOOKEAN, count);
	if (base == UINT32_MAX)
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %u constraints", fn, count);
	pbd_family* f = FAM(w);
	for (uint32_t k = 0; k < count; ++k) {
		const pbd_tet_neohookean_def* d = &defs[k];
		rest_shape(w, k, d, dm_inv, &volume); /* passed above; derives the rest shape again */
		pbd_tet_nh_c* c = &HOT(f)[base + k];
		memcpy(c->p, d->p, sizeof c->p);
		double norm2 = 0;
		for (int i = 0; i < 9; ++i) {
			c->dm_inv[i] = (pbd_real)dm_inv[i];
			norm2 += dm_inv[i] * dm_inv[i];
		}
		/* The gradients of both constraints are P Dm^-T with |P|_F about 1 at rest. */
		c->grad2_min = (pbd_real)fmax(PBD_TET_COLLAPSE_REL * PBD_TET_COLLAPSE_REL * norm2, PBD_TET_GRAD2_FLOOR);
		pbd_tet_nh_p* q = &COLD(f)[base + k];
		q->volume = (pbd_real)volume;
		q->youngs_modulus = d->youngs_modulus;
		q->poisson_ratio = d->poisson_ratio;
		q->stiffness[0] = d->stiffness_deviatoric;
		q->stiffness[1] = d->stiffness_hydrostatic;
	}
	if (first) *first = base;
	return PBD_OK;
}

pbd_status pbd_world_set_tet_neohookean_material(pbd_world* w, uint32_t first, uint32_t count, pbd_real E, pbd_real nu,
                                                 pbd_real kd, pbd_real kh) {
	const char* fn = "pbd_world_set_tet_neohookean_material";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_family* f = FAM(w);
	{
		const pbd_status range = pbd_family_check_range(w, fn, f, first, count);
		if (range != PBD_OK) return range;
	}
	pbd_status st = material_ok(w, fn, first, E, nu, kd, kh);
	if (st != PBD_OK) return st;
	for (uint32_t u = first; u < first + count; ++u) {
		double ad, ah;
		if (!compliances((double)E, (double)nu, (double)COLD(f)[f->slot[u]].volume, &ad, &ah))
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
			                "%s: constraint %u: youngs_modulus %.9g Pa is too small for its rest volume: the "
			                "compliance overflows the scalar",
			                fn, u, (double)E);
	}
	for (uint32_t u = first; u < first + count; ++u) {
		pbd_tet_nh_p* q = &COLD(f)[f->slot[u]];
		q->youngs_modulus = E;
		q->poisson_ratio = nu;
		q->stiffness[0] = kd;
		q->stiffness[1] = kh;
	}
	pbd_family_touch(w, PBD_FAMILY_TET_NEOHOOKEAN);
	return PBD_OK;
}

uint32_t pbd_world_tet_neohookean_count(const pbd_world* w) { return w ? FAM(w)->n : 0; }

pbd_status pbd_world_get_tet_neohookean(const pbd_world* w, uint32_t index, pbd_tet_neohookean_def* out) {
	if (!w || !out) return PBD_ERR_INVALID_ARGUMENT;
	const pbd_family* f = FAM(w);
	if (index >= f->n)
		return pbd_fail((pbd_world*)w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_world_get_tet_neohookean: constraint %u out of range (%u)", index, f->n);
	const pbd_tet_nh_p* q = &COLD(f)[f->slot[index]];
	memcpy(out->p, HOT(f)[f->slot[index]].p, sizeof out->p);
	out->youngs_modulus = q->youngs_modulus;
	out->poisson_ratio = q->poisson_ratio;
	out->stiffness_deviatoric = q->stiffness[0];
	out->stiffness_hydrostatic = q->stiffness[1];
	return PBD_OK;
}

/* XPBD: the compliances of the material and the stable targets gamma = 1 + mu / lambda' and
 * |F| = 0, whose forces balance at F = I. PBD: a stiffness is a fraction of a projection, not a
 * material, so the targets become the rest state itself, det F = 1 and |F| = sqrt(3), and each
 * constraint takes its iteration-corrected stiffness k' = 1 - (1 - k)^(1/n). */
static void refresh(pbd_family* f, const pbd_step_ctx* ctx) {
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD;
	const pbd_real inv_n = PBD_R(1.0) / (pbd_real)ctx->iterations;
	for (uint32_t k = 0; k < f->n; ++k) {
		const pbd_tet_nh_p* q = &COLD(f)[k];
		pbd_tet_nh_c* c = &HOT(f)[k];
		if (xpbd) {
			double mu, lh, ad = 0, ah = 0;
			lame((double)q->youngs_modulus, (double)q->poisson_ratio, &mu, &lh);
			compliances((double)q->youngs_modulus, (double)q->poisson_ratio, (double)q->volume, &ad, &ah);
			c->s[0] = (pbd_real)ad;
			c->s[1] = (pbd_real)ah;
			c->gamma = (pbd_real)(1.0 + mu / lh);
			c->dev_rest = 0;
		} else {
			for (int j = 0; j < 2; ++j) {
				const pbd_real kk = q->stiffness[j];
				c->s[j] = pbd_stiffness_per_iteration(kk, inv_n);
			}
			c->gamma = 1;
			c->dev_rest = PBD_SQRT(PBD_R(3.0));
		}
	}
}

static uint32_t particles(const pbd_family* f, uint32_t k, uint32_t first, uint32_t* out, uint32_t cap) {
	if (first == 0 && cap >= 4) memcpy(out, HOT(f)[k].p, 4 * sizeof *out);
	return 4;
}

/* The columns of F = Ds Dm^-1 at the current positions, relative to x0: f_k = sum_j e_j M[j][k]
 * with e_j = x_j - x0 and M = Dm^-1. */
static inline void deformation(const pbd_step_ctx* ctx, const pbd_tet_nh_c* c, pbd_vec3 f[3]) {
	const uint32_t* p = c->p;
	const pbd_real* m = c->dm_inv;
	const pbd_vec3 e1 = pbd_rel(ctx, p[1], p[0]), e2 = pbd_rel(ctx, p[2], p[0]), e3 = pbd_rel(ctx, p[3], p[0]);
	for (int k = 0; k < 3; ++k)
		f[k] = pbd_v3_add(pbd_v3_add(pbd_v3_scale(e1, m[k]), pbd_v3_scale(e2, m[3 + k])), pbd_v3_scale(e3, m[6 + k]));
}

/* The particle gradients of a constraint from P = dC/dF (its columns): dC/dDs = P Dm^-T, so
 * dC/dx_j = sum_k P_k M[j-1][k] for j = 1..3 and dC/dx0 = -(their sum). False when the free
 * particles' gradients vanish (tet.h). */
static inline bool gradients(const pbd_step_ctx* ctx, const pbd_tet_nh_c* c, const pbd_vec3 P[3], pbd_vec3 g[4]) {
	const pbd_real* m = c->dm_inv;
	for (int j = 0; j < 3; ++j)
		g[j + 1] = pbd_v3_add(pbd_v3_add(pbd_v3_scale(P[0], m[3 * j]), pbd_v3_scale(P[1], m[3 * j + 1])),
		                      pbd_v3_scale(P[2], m[3 * j + 2]));
	g[0] = pbd_v3_scale(pbd_v3_add(pbd_v3_add(g[1], g[2]), g[3]), -1);
	pbd_real free2 = 0;
	for (int i = 0; i < 4; ++i)
		if (ctx->iw[c->p[i]] > 0) free2 += pbd_v3_dot(g[i], g[i]);
	return free2 > c->grad2_min;
}

/* C_D = |F|_F - dev_rest, dC_D/dF = F / |F|_F. Skipped when |F| is about 0 (collapsed to a
 * point), where the direction F / |F| is not defined. */
static inline bool deviatoric(const pbd_step_ctx* ctx, const pbd_tet_nh_c* c, const pbd_vec3 f[3], pbd_real* C,
                              pbd_vec3 g[4]) {
	const pbd_real r2 = pbd_v3_dot(f[0], f[0]) + pbd_v3_dot(f[1], f[1]) + pbd_v3_dot(f[2], f[2]);
	if (!(r2 > (pbd_real)(PBD_TET_COLLAPSE_REL * PBD_TET_COLLAPSE_REL))) return false;
	const pbd_real r = PBD_SQRT(r2), inv = 1 / r;
	const pbd_vec3 P[3] = {pbd_v3_scale(f[0], inv), pbd_v3_scale(f[1], inv), pbd_v3_scale(f[2], inv)};
	*C = r - c->dev_rest;
	return gradients(ctx, c, P, g);
}

/* C_H = det F - gamma, dC_H/dF = cof F = (f2 x f3, f3 x f1, f1 x f2). The cofactor vanishes when
 * the tetrahedron collapses to a line or a point: then skipped (C and g are written all the
 * same). It does not vanish for a flat or inverted one, which it pushes back to positive volume.
 * gamma is the hot record's for the projections, the material's for the force model. */
static inline bool hydrostatic(const pbd_step_ctx* ctx, const pbd_tet_nh_c* c, const pbd_vec3 f[3], pbd_real gamma,
                               pbd_real* C, pbd_vec3 g[4]) {
	const pbd_vec3 P[3] = {pbd_v3_cross(f[1], f[2]), pbd_v3_cross(f[2], f[0]), pbd_v3_cross(f[0], f[1])};
	*C = pbd_v3_dot(f[0], P[0]) - gamma;
	return gradients(ctx, c, P, g);
}

/* XPBD: both constraints in one step (Macklin et al. 2016, eq. 18 for a vector constraint with
 * the compliance diag(alpha_D, alpha_H)), solving the 2x2 system
 *   [S_DD + aD  S_DH     ] [dlD]   [-C_D - aD lD]
 *   [S_DH       S_HH + aH] [dlH] = [-C_H - aH lH],  S_XY = sum_i w_i gX_i . gY_i, aX = alpha_X / h^2.
 * Projected one after the other, the two would fight: at rest their gradients are parallel
 * (F / |F| and cof F are both multiples of the identity), the deviatoric term pulls toward F = 0
 * with the force the hydrostatic term pushes back with, and Gauss-Seidel between them converges
 * at the rate 1 - (aD + aH) / S, which for a stiff material is no progress at all. Solved
 * together, their forces cancel in one step. The determinant is assembled from the Gram part
 * S_DD S_HH - S_DH^2, clamped at 0 where rounding makes it negative, plus the compliance terms,
 * so that it stays positive. `scale` is 1 for Gauss-Seidel and the Jacobi factor otherwise; the
 * move goes to q or to dx. */
static inline void xpbd_pair(const pbd_step_ctx* ctx, const pbd_tet_nh_c* c, const pbd_vec3 f[3], pbd_real* lambda,
                             bool jacobi) {
	pbd_vec3 gd[4], gh[4];
	pbd_real cd = 0, ch = 0;
	const bool has_d = deviatoric(ctx, c, f, &cd, gd);
	const bool has_h = hydrostatic(ctx, c, f, c->gamma, &ch, gh);
	if (!has_d && !has_h) return;
	const uint32_t* p = c->p;
	const bool equal = jacobi && ctx->jacobi_equal;
	pbd_real scale = 1;
	if (jacobi && !equal) {
		uint32_t deg = 0;
		for (int i = 0; i < 4; ++i) deg = ctx->degree[p[i]] > deg ? ctx->degree[p[i]] : deg;
		scale = ctx->jacobi_omega / ((pbd_real)deg + ctx->jacobi_alpha);
	}
	pbd_real w[4], sdd = 0, shh = 0, sdh = 0;
	for (int i = 0; i < 4; ++i) {
		w[i] = equal ? 1 : ctx->iw[p[i]];
		if (!has_d) gd[i] = pbd_v3(0, 0, 0);
		if (!has_h) gh[i] = pbd_v3(0, 0, 0);
		sdd += w[i] * pbd_v3_dot(gd[i], gd[i]);
		shh += w[i] * pbd_v3_dot(gh[i], gh[i]);
		sdh += w[i] * pbd_v3_dot(gd[i], gh[i]);
	}
	const pbd_real ad = c->s[0] * ctx->inv_h2, ah = c->s[1] * ctx->inv_h2;
	const pbd_real bd = -cd - ad * lambda[0], bh = -ch - ah * lambda[1];
	const pbd_real a00 = sdd + ad, a11 = shh + ah;
	pbd_real dld = 0, dlh = 0;
	if (has_d && has_h) {
		const pbd_real gram = PBD_FMAX(sdd * shh - sdh * sdh, 0);
		const pbd_real det = gram + ad * shh + ah * sdd + ad * ah;
		if (det > PBD_NH_SINGULAR * a00 * a11) {
			const pbd_real inv = 1 / det;
			dld = (bd * a11 - sdh * bh) * inv;
			dlh = (a00 * bh - sdh * bd) * inv;
		} else if (a11 > 0) {
			dlh = bh / a11;
		}
	} else if (has_d) {
		if (!(a00 > 0)) return;
		dld = bd / a00;
	} else {
		if (!(a11 > 0)) return;
		dlh = bh / a11;
	}
	dld *= scale;
	dlh *= scale;
	lambda[0] += dld;
	lambda[1] += dlh;
	/* a pinned particle's q is not stored into (family.h); its move is 0 */
	pbd_vec3* out = jacobi ? ctx->dx : ctx->q;
	for (int i = 0; i < 4; ++i)
		if (jacobi || w[i] > 0)
			out[p[i]] = pbd_v3_add(out[p[i]],
			                       pbd_v3_scale(pbd_v3_add(pbd_v3_scale(gd[i], dld), pbd_v3_scale(gh[i], dlh)), w[i]));
}

/* Gauss-Seidel. XPBD: the coupled step. PBD: the targets |F| = sqrt(3) and det F = 1 hold
 * together at rest, so the two are projected one after the other, the hydrostatic one from where
 * the deviatoric one left the particles, and each iteration ends on the volume term. */
static void project(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_tet_nh_c* c = HOT(f);
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD;
	for (uint32_t k = first; k < end; ++k) {
		pbd_vec3 F[3], g[4];
		pbd_real C;
		deformation(ctx, &c[k], F);
		if (xpbd) {
			xpbd_pair(ctx, &c[k], F, &f->lambda[2 * k], false);
			continue;
		}
		if (deviatoric(ctx, &c[k], F, &C, g)) pbd_constraint_project(ctx, c[k].p, 4, C, g, c[k].s[0], NULL);
		deformation(ctx, &c[k], F);
		if (hydrostatic(ctx, &c[k], F, c[k].gamma, &C, g))
			pbd_constraint_project(ctx, c[k].p, 4, C, g, c[k].s[1], NULL);
	}
}

/* Jacobi, PBD: pbd_constraint_jacobi for one of the element's two constraints, both from the
 * iteration's start. The Jacobi averages count constraints per particle from the partition,
 * which sees an element once, while PBD adds two corrections for it; each is halved, so that the
 * element weighs as the two constraints it is there: the mass-weighted factor becomes
 * omega / (2 (max degree + alpha)), and an equal-split particle averages them as two. (The XPBD
 * step is one block constraint and keeps the factor as it is.) */
static inline void jacobi_half(const pbd_step_ctx* ctx, const uint32_t* p, pbd_real C, const pbd_vec3 g[4],
                               pbd_real k) {
	pbd_real scale = PBD_R(0.5);
	if (!ctx->jacobi_equal) {
		uint32_t deg = 0;
		for (int i = 0; i < 4; ++i) deg = ctx->degree[p[i]] > deg ? ctx->degree[p[i]] : deg;
		scale = PBD_R(0.5) * ctx->jacobi_omega / ((pbd_real)deg + ctx->jacobi_alpha);
	}
	pbd_real wi[4], wsum = 0;
	for (int i = 0; i < 4; ++i) {
		wi[i] = ctx->jacobi_equal ? 1 : ctx->iw[p[i]];
		wsum += wi[i] * pbd_v3_dot(g[i], g[i]);
	}
	if (!(wsum > 0)) return;
	const pbd_real dl = scale * (-k * C / wsum);
	for (int i = 0; i < 4; ++i) ctx->dx[p[i]] = pbd_v3_add(ctx->dx[p[i]], pbd_v3_scale(g[i], wi[i] * dl));
}

static void jacobi(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_tet_nh_c* c = HOT(f);
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD;
	for (uint32_t k = first; k < end; ++k) {
		pbd_vec3 F[3], g[4];
		pbd_real C;
		deformation(ctx, &c[k], F);
		if (xpbd) {
			xpbd_pair(ctx, &c[k], F, &f->lambda[2 * k], true);
			continue;
		}
		if (deviatoric(ctx, &c[k], F, &C, g)) jacobi_half(ctx, c[k].p, C, g, c[k].s[0]);
		if (hydrostatic(ctx, &c[k], F, c[k].gamma, &C, g)) jacobi_half(ctx, c[k].p, C, g, c[k].s[1]);
	}
}

/* A spring constant the scalar holds, else 0 (hard). */
static inline pbd_real spring(double k) { return k <= (double)PBD_REAL_MAX ? (pbd_real)k : 0; }

/* The energy of the XPBD pair, V0 (mu / 2 |F|^2 + lambda' / 2 (det F - gamma)^2), whatever the
 * formulation (the targets the PBD formulation puts in the hot record are not a material).
 * Gauss-Newton on C_D = |F| would keep only its stiffness along F / |F|, which at rest is
 * parallel to cof F, the hydrostatic gradient: shear would have none. So the deviatoric term is
 * written exactly as it is, |F|^2 = sum_k |f_k|^2, three norm rows at rest 0 on the columns
 * f_k = sum_j a_j x_j of F (weights from Dm^-1), each with the spring constant mu V0 = 1 / alpha_D
 * and its whole Hessian; the hydrostatic term is a general row C_H, constant lambda' V0 =
 * 1 / alpha_H, Gauss-Newton only. Four rows per element; their energy exceeds stats()'s by the
 * constant the latter subtracts at rest. */
static void linearize(const pbd_step_ctx* ctx, const pbd_family* f, uint32_t first, uint32_t end, pbd_rows* rows) {
	const pbd_tet_nh_c* c = HOT(f);
	for (uint32_t k = first; k < end; ++k) {
		const pbd_tet_nh_p* q = &COLD(f)[k];
		double mu, lh;
		lame((double)q->youngs_modulus, (double)q->poisson_ratio, &mu, &lh);
		const pbd_real kd = spring(mu * (double)q->volume), kh = spring(lh * (double)q->volume);
		if (kd == 0 || kh == 0) pbd_rows_note_hard(rows, PBD_FAMILY_TET_NEOHOOKEAN, f->user[k]);
		pbd_vec3 F[3], g[4];
		deformation(ctx, &c[k], F);
		const pbd_real* m = c[k].dm_inv;
		for (int j = 0; j < 3; ++j) {
			const pbd_real a[4] = {-(m[j] + m[3 + j] + m[6 + j]), m[j], m[3 + j], m[6 + j]};
			pbd_rows_add_norm(rows, c[k].p, a, 4, F[j], 0, kd, kd);
		}
		pbd_real C;
		(void)hydrostatic(ctx, &c[k], F, (pbd_real)(1.0 + mu / lh), &C, g);
		pbd_rows_add_general(rows, PBD_FAMILY_TET_NEOHOOKEAN, c[k].p, g, 4, C, kh);
	}
}

/* I_C = |F|^2 and J = det F in double, from the full positions x + x_lo. */
static void invariants(const pbd_world* w, const pbd_tet_nh_c* c, double* ic, double* J) {
	double e[3][3], f[3][3];
	const uint32_t o = c->p[0];
	for (int i = 0; i < 3; ++i) {
		const uint32_t j = c->p[i + 1];
		e[i][0] = ((double)w->x[j].x - (double)w->x[o].x) + ((double)w->x_lo[j].x - (double)w->x_lo[o].x);
		e[i][1] = ((double)w->x[j].y - (double)w->x[o].y) + ((double)w->x_lo[j].y - (double)w->x_lo[o].y);
		e[i][2] = ((double)w->x[j].z - (double)w->x[o].z) + ((double)w->x_lo[j].z - (double)w->x_lo[o].z);
	}
	for (int k = 0; k < 3; ++k)
		for (int r = 0; r < 3; ++r)
			f[k][r] = e[0][r] * (double)c->dm_inv[k] + e[1][r] * (double)c->dm_inv[3 + k] +
			          e[2][r] * (double)c->dm_inv[6 + k];
	*ic = 0;
	for (int k = 0; k < 3; ++k) *ic += f[k][0] * f[k][0] + f[k][1] * f[k][1] + f[k][2] * f[k][2];
	*J = f[0][0] * (f[1][1] * f[2][2] - f[1][2] * f[2][1]) + f[0][1] * (f[1][2] * f[2][0] - f[1][0] * f[2][2]) +
	     f[0][2] * (f[1][0] * f[2][1] - f[1][1] * f[2][0]);
}

/* Violation: the larger of | |F| - sqrt(3) | and |det F - 1|, the PBD constraints' values (zero
 * exactly at a rotation). Strain: the larger of | |F| / sqrt(3) - 1 |, the relative error of the
 * RMS stretch, and |det F - 1|, the volume ratio error. Energy (XPBD): the stable Neo-Hookean
 * energy V0 (mu / 2 (I_C - 3) + lambda' / 2 ((J - gamma)^2 - (1 - gamma)^2)), which is
 * C_D^2 / (2 alpha_D) + C_H^2 / (2 alpha_H) less its value at rest, so that a body at rest
 * stores none; undefined under a PBD stiffness in (0, 1). */
static void stats(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end, pbd_family_sums* out) {
	const bool xpbd = pbd_energy_from_compliance(w);
	const double sqrt3 = sqrt(3.0);
	out->energy_defined = true;
	for (uint32_t k = first; k < end; ++k) {
		const pbd_tet_nh_c* c = &HOT(f)[k];
		const pbd_tet_nh_p* q = &COLD(f)[k];
		double ic, J;
		invariants(w, c, &ic, &J);
		const double r = sqrt(ic);
		const double cd = fabs(r - sqrt3), ch = fabs(J - 1);
		const double viol = cd > ch ? cd : ch;
		out->max_violation = pbd_max_sticky(out->max_violation, viol);
		const double sd = fabs(r / sqrt3 - 1);
		const double strain = sd > ch ? sd : ch;
		pbd_sums_strain(out, strain);
		if (xpbd) {
			double mu, lh;
			lame((double)q->youngs_modulus, (double)q->poisson_ratio, &mu, &lh);
			const double gamma = 1.0 + mu / lh;
			out->energy += (double)q->volume *
			               (0.5 * mu * (ic - 3.0) + 0.5 * lh * ((J - gamma) * (J - gamma) - (1 - gamma) * (1 - gamma)));
		}
		for (int j = 0; j < 2; ++j) pbd_sums_stiffness(out, xpbd, q->stiffness[j]);
	}
}

static double max_strain(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end) {
	const double sqrt3 = sqrt(3.0);
	double m = 0;
	for (uint32_t k = first; k < end; ++k) {
		double ic, J;
		invariants(w, &HOT(f)[k], &ic, &J);
		const double sd = fabs(sqrt(ic) / sqrt3 - 1), ch = fabs(J - 1);
		const double strain = sd > ch ? sd : ch;
		m = pbd_max_sticky(m, strain);
	}
	return m;
}

static bool check(const pbd_world* w, const pbd_family* f, uint32_t k, const char** why) {
	(void)w;
	const pbd_tet_nh_c* c = &HOT(f)[k];
	const pbd_tet_nh_p* q = &COLD(f)[k];
	for (int i = 0; i < 4; ++i)
		for (int j = i + 1; j < 4; ++j)
			if (c->p[i] == c->p[j]) return *why = "repeats a particle", false;
	for (int i = 0; i < 9; ++i)
		if (!pbd_is_finite(c->dm_inv[i])) return *why = "has an invalid rest shape", false;
	if (!(c->grad2_min > 0) || !pbd_is_finite(c->grad2_min)) return *why = "has an invalid collapse threshold", false;
	if (!(q->volume > 0) || !pbd_is_finite(q->volume)) return *why = "has an invalid rest volume", false;
	double ad, ah;
	if (!(q->youngs_modulus > 0) || !pbd_is_finite(q->youngs_modulus) ||
	    !(q->poisson_ratio > -1 && q->poisson_ratio < PBD_R(0.5)) || !(q->stiffness[0] >= 0 && q->stiffness[0] <= 1) ||
	    !(q->stiffness[1] >= 0 && q->stiffness[1] <= 1) ||
	    !compliances((double)q->youngs_modulus, (double)q->poisson_ratio, (double)q->volume, &ad, &ah))
		return *why = "has an invalid material", false;
	return true;
}

const pbd_family_ops pbd_family_tet_neohookean_ops = {
    .name = "tet_neohookean",
    .hot_size = sizeof(pbd_tet_nh_c),
    .cold_size = sizeof(pbd_tet_nh_p),
    .lambdas = 2,
    .particles = particles,
    .refresh = refresh,
    .project = project,
    .jacobi = jacobi,
#ifdef PBD_HAVE_AVX2
    .project_lanes = pbd_tet_neohookean_project_avx2,
    .jacobi_lanes = pbd_tet_neohookean_jacobi_avx2,
#endif
    .stats = stats,
    .max_strain = max_strain,
    .check = check,
    .linearize = linearize,
    .row_count = 4,
    .row_entries = 16,
};
