/* Dihedral bending constraints C = theta - rest on a hinge (bend.h): the signed angle between the
 * normals of two triangles sharing an edge, with the gradients of Bridson et al. 2003 that stay
 * finite flat and folded, projected with PBD stiffness (Müller et al. 2007, appendix A, which
 * uses acos instead) or XPBD compliance (Macklin et al. 2016). */
#include <string.h>

#include "constraints/bend.h"
#include "constraints/rows.h"
#include "constraints/lanes.h"

/* Cold: the material as given. */
typedef struct pbd_dihedral_p {
	pbd_real stiffness;
	pbd_real compliance;
} pbd_dihedral_p;

_Static_assert(sizeof(pbd_dihedral_p) == 2 * sizeof(pbd_real), "padding in pbd_dihedral_p");

#define FAM(w)  (&(w)->fam[PBD_FAMILY_BEND_DIHEDRAL])
#define HOT(f)  ((pbd_dihedral_c*)(f)->hot)
#define COLD(f) ((pbd_dihedral_p*)(f)->cold)

static const pbd_softness_fields softness =
    PBD_SOFTNESS_FIELDS(PBD_FAMILY_BEND_DIHEDRAL, pbd_dihedral_c, pbd_dihedral_p, 1, "constraint");

static inline double dot_d(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static inline void cross_d(const double a[3], const double b[3], double out[3]) {
	out[0] = a[1] * b[2] - a[2] * b[1];
	out[1] = a[2] * b[0] - a[0] * b[2];
	out[2] = a[0] * b[1] - a[1] * b[0];
}

bool pbd_hinge_dihedral_d(const double e[3], const double a2[3], const double a3[3], double* theta) {
	const double l2 = dot_d(e, e), eps = (double)PBD_EPSILON_LENGTH;
	if (!(l2 >= eps * eps)) return false;
	const double reach = (double)PBD_BEND_MAX_REACH2 * l2;
	if (!(dot_d(a2, a2) <= reach) || !(dot_d(a3, a3) <= reach)) return false;
	const double il = 1 / sqrt(l2);
	double u[3], b2[3], b3[3], n1[3], n2[3], m[3];
	for (int k = 0; k < 3; ++k) {
		u[k] = e[k] * il;
		b2[k] = a2[k] * il;
		b3[k] = a3[k] * il;
	}
	cross_d(u, b2, n1);
	cross_d(b3, u, n2);
	const double hmin = (double)PBD_BEND_MIN_HEIGHT2;
	if (!(dot_d(n1, n1) > hmin) || !(dot_d(n2, n2) > hmin)) return false;
	cross_d(n2, n1, m);
	*theta = atan2(dot_d(m, u), dot_d(n1, n2));
	return true;
}

/* theta - rest taken into [-pi, pi]: the shorter way round, so that a rest angle near a full fold
 * is not pulled the long way back through flat when theta crosses pi. */
static inline pbd_real wrap_angle(pbd_real c) {
	if (c > PBD_PI_R) return c - 2 * PBD_PI_R;
	if (c < -PBD_PI_R) return c + 2 * PBD_PI_R;
	return c;
}

static inline double wrap_angle_d(double c) {
	const double pi = 3.14159265358979323846;
	if (c > pi) return c - 2 * pi;
	if (c < -pi) return c + 2 * pi;
	return c;
}

pbd_bend_dihedral_def pbd_bend_dihedral_def_default(void) {
	pbd_bend_dihedral_def d;
	memset(&d, 0, sizeof d);
	d.measure_rest = true;
	d.rest = 0;
	d.stiffness = 1;
	d.compliance = 0;
	return d;
}

/* Validates one def and finds its rest angle. */
static pbd_status validate(pbd_world* w, uint32_t k, const pbd_bend_dihedral_def* d, pbd_real* rest) {
	const char* fn = "pbd_world_add_bend_dihedrals";
	for (int i = 0; i < 4; ++i) {
		if (d->p[i] >= w->np)
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
			                "%s: constraint %u: particle index p[%d] = %u out of range (%u particles)", fn, k, i,
			                d->p[i], w->np);
		for (int j = 0; j < i; ++j)
			if (d->p[i] == d->p[j])
				return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: constraint %u: p[%d] and p[%d] are both particle %u",
				                fn, k, j, i, d->p[i]);
	}
	const pbd_status st = pbd_check_softness(w, fn, softness.item, k, d->stiffness, d->compliance);
	if (st != PBD_OK) return st;
	if (d->measure_rest) {
		double e[3], a2[3], a3[3], theta;
		pbd_hinge_vectors_d(w, d->p, e, a2, a3);
		if (!pbd_hinge_dihedral_d(e, a2, a3, &theta))
			return pbd_fail(
			    w, PBD_ERR_DEGENERATE,
			    "%s: constraint %u: the hinge has a triangle of zero area or a collapsed edge; no rest angle", fn, k);
		*rest = (pbd_real)theta;
	} else {
		if (!pbd_is_finite(d->rest))
			return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: constraint %u: rest is not finite", fn, k);
		if (d->rest < -PBD_PI_R || d->rest > PBD_PI_R)
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: constraint %u: rest must be in [-pi, pi]", fn, k);
		*rest = d->rest;
	}
	/* -pi and pi are the same fold; keep one of them so that check() has one range. */
	if (*rest <= -PBD_PI_R) *rest = PBD_PI_R;
	return PBD_OK;
}

pbd_status pbd_world_add_bend_dihedrals(pbd_world* w, uint32_t count, const pbd_bend_dihedral_def* defs,
                                        uint32_t* first) {
	const char* fn = "pbd_world_add_bend_dihedrals";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	if (count == 0) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: count is 0", fn);
	if (!defs) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: defs is NULL", fn);
	for (uint32_t k = 0; k < count; ++k) {
		pbd_real rest;
		const pbd_status st = validate(w, k, &defs[k], &rest);
		if (st != PBD_OK) return st;
	}
	const uint32_t base = pbd_family_append(w, PBD_FAMILY_BEND_DIHEDRAL, count);
	if (base == UINT32_MAX)
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %u constraints", fn, count);
	pbd_family* f = FAM(w);
	for (uint32_t k = 0; k < count; ++k) {
		const pbd_bend_dihedral_def* d = &defs[k];
		pbd_dihedral_c* c = &HOT(f)[base + k];
		memcpy(c->p, d->p, sizeof c->p);
		(void)validate(w, k, d, &c->rest); /* the same answer as above: nothing moved since */
		COLD(f)[base + k].stiffness = d->stiffness;
		COLD(f)[base + k].compliance = d->compliance;
	}
	if (first) *first = base;
	return PBD_OK;
}

uint32_t pbd_world_bend_dihedral_count(const pbd_world* w) { return w ? FAM(w)->n : 0; }

pbd_status pbd_world_get_bend_dihedral(const pbd_world* w, uint32_t index, pbd_bend_dihedral_def* out) {
	if (!w || !out) return PBD_ERR_INVALID_ARGUMENT;
	const pbd_family* f = FAM(w);
	if (index >= f->n)
		return pbd_fail((pbd_world*)w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_world_get_bend_dihedral: constraint %u out of range (%u)", index, f->n);
	const pbd_dihedral_c* c = &HOT(f)[f->slot[index]];
	const pbd_dihedral_p* q = &COLD(f)[f->slot[index]];
	memset(out, 0, sizeof *out);
	memcpy(out->p, c->p, sizeof out->p);
	out->measure_rest = false;
	out->rest = c->rest;
	out->stiffness = q->stiffness;
	out->compliance = q->compliance;
	return PBD_OK;
}

pbd_status pbd_world_set_bend_dihedral_material(pbd_world* w, uint32_t first, uint32_t count, pbd_real stiffness,
                                                pbd_real compliance) {
	return pbd_family_set_softness(w, "pbd_world_set_bend_dihedral_material", &softness, first, count, stiffness,
	                               compliance);
}

/* s = the compliance (XPBD) or k' = 1 - (1 - k)^(1/n) (PBD), as for distances. */
static void refresh(pbd_family* f, const pbd_step_ctx* ctx) { pbd_family_refresh_softness(f, &softness, ctx); }

static uint32_t particles(const pbd_family* f, uint32_t k, uint32_t first, uint32_t* out, uint32_t cap) {
	if (first == 0 && cap >= 4) memcpy(out, HOT(f)[k].p, 4 * sizeof *out);
	return 4;
}

/* One hinge's C and scaled gradients g (bend.h) from the current positions; false when the hinge
 * has no usable angle, which skips it (no NaN from a flat or collapsed triangle). */
static inline bool evaluate(const pbd_step_ctx* ctx, const pbd_dihedral_c* c, pbd_real* C, pbd_real* len,
                            pbd_vec3 g[4]) {
	const uint32_t o = c->p[0];
	pbd_real theta;
	if (!pbd_hinge_dihedral(pbd_rel(ctx, c->p[1], o), pbd_rel(ctx, c->p[2], o), pbd_rel(ctx, c->p[3], o), &theta, len,
	                        g))
		return false;
	*C = wrap_angle(theta - c->rest);
	return true;
}

/* With the scaled gradients g = L grad C, PBD moves particle i by -s C w_i grad_i / sum_j w_j |grad_j|^2
 * = w_i g_i (-s C L / W), W = sum_j w_j |g_j|^2. XPBD: dlambda = (-C - at lambda) / (W / L^2 + at)
 * = L^2 mu with mu = (-C - at lambda) / (W + at L^2), and particle i moves by w_i grad_i dlambda
 * = w_i g_i (mu L). Every factor stays bounded for hinges of any size. */
static void project(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_real* restrict iw = ctx->iw;
	pbd_vec3* restrict q = ctx->q;
	const pbd_dihedral_c* restrict c = HOT(f);
	pbd_real* restrict lambda = f->lambda;
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD;
	for (uint32_t k = first; k < end; ++k) {
		const uint32_t* p = c[k].p;
		const pbd_real w[4] = {iw[p[0]], iw[p[1]], iw[p[2]], iw[p[3]]};
		if (w[0] + w[1] + w[2] + w[3] == 0 || (!xpbd && c[k].s == 0)) continue;
		pbd_real C, len;
		pbd_vec3 g[4];
		if (!evaluate(ctx, &c[k], &C, &len, g)) continue;
		pbd_real W = 0;
		for (int i = 0; i < 4; ++i) W += w[i] * pbd_v3_dot(g[i], g[i]);
		pbd_real factor;
		if (xpbd) {
			const pbd_real at = c[k].s * ctx->inv_h2;
			const pbd_real den = W + at * len * len;
			if (!(den > 0)) continue;
			const pbd_real mu = (-C - at * lambda[k]) / den;
			lambda[k] += mu * len * len;
			factor = mu * len;
		} else {
			if (!(W > 0)) continue;
			factor = -c[k].s * C / W * len;
		}
		for (int i = 0; i < 4; ++i)
			if (w[i] > 0) q[p[i]] = pbd_v3_add(q[p[i]], pbd_v3_scale(g[i], w[i] * factor));
	}
}

/* Jacobi: the same step from the iteration's start into dx, mass-weighted with one factor
 * omega / (max degree + alpha) for the whole hinge (momentum is kept), or with unit weights for
 * the equal split, as pbd_constraint_jacobi does. */
static void jacobi(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_real* restrict iw = ctx->iw;
	pbd_vec3* restrict dx = ctx->dx;
	const uint32_t* restrict deg = ctx->degree;
	const pbd_dihedral_c* restrict c = HOT(f);
	pbd_real* restrict lambda = f->lambda;
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD, equal = ctx->jacobi_equal;
	for (uint32_t k = first; k < end; ++k) {
		const uint32_t* p = c[k].p;
		if (iw[p[0]] + iw[p[1]] + iw[p[2]] + iw[p[3]] == 0 || (!xpbd && c[k].s == 0)) continue;
		pbd_real w[4], scale = 1;
		uint32_t dmax = 0;
		for (int i = 0; i < 4; ++i) {
			w[i] = equal ? 1 : iw[p[i]];
			dmax = deg[p[i]] > dmax ? deg[p[i]] : dmax;
		}
		if (!equal) scale = ctx->jacobi_omega / ((pbd_real)dmax + ctx->jacobi_alpha);
		pbd_real C, len;
		pbd_vec3 g[4];
		if (!evaluate(ctx, &c[k], &C, &len, g)) continue;
		pbd_real W = 0;
		for (int i = 0; i < 4; ++i) W += w[i] * pbd_v3_dot(g[i], g[i]);
		pbd_real factor;
		if (xpbd) {
			const pbd_real at = c[k].s * ctx->inv_h2;
			const pbd_real den = W + at * len * len;
			if (!(den > 0)) continue;
			const pbd_real mu = scale * ((-C - at * lambda[k]) / den);
			lambda[k] += mu * len * len;
			factor = mu * len;
		} else {
			if (!(W > 0)) continue;
			factor = scale * (-c[k].s * C / W) * len;
		}
		for (int i = 0; i < 4; ++i) dx[p[i]] = pbd_v3_add(dx[p[i]], pbd_v3_scale(g[i], w[i] * factor));
	}
}

/* A spring C = theta - rest of constant 1 / compliance along the true gradients g / L, Gauss-Newton
 * stiffness only. A hinge without an angle keeps its row with C = 0 and no gradient. */
static void linearize(const pbd_step_ctx* ctx, const pbd_family* f, uint32_t first, uint32_t end, pbd_rows* rows) {
	const pbd_dihedral_c* c = HOT(f);
	for (uint32_t k = first; k < end; ++k) {
		const pbd_real kk = pbd_rows_k(COLD(f)[k].compliance);
		if (kk == 0) pbd_rows_note_hard(rows, PBD_FAMILY_BEND_DIHEDRAL, f->user[k]);
		pbd_real C, len;
		pbd_vec3 g[4];
		if (evaluate(ctx, &c[k], &C, &len, g)) {
			const pbd_real il = 1 / len;
			for (int i = 0; i < 4; ++i) g[i] = pbd_v3_scale(g[i], il);
		} else {
			C = 0;
			for (int i = 0; i < 4; ++i) g[i] = pbd_v3(0, 0, 0);
		}
		pbd_rows_add_general(rows, PBD_FAMILY_BEND_DIHEDRAL, c[k].p, g, 4, C, kk);
	}
}

/* C of the constraint at position k in double from x + x_lo; false for a hinge without an angle. */
static bool violation(const pbd_world* w, const pbd_dihedral_c* c, double* C) {
	double e[3], a2[3], a3[3], theta;
	pbd_hinge_vectors_d(w, c->p, e, a2, a3);
	if (!pbd_hinge_dihedral_d(e, a2, a3, &theta)) return false;
	*C = wrap_angle_d(theta - (double)c->rest);
	return true;
}

/* Violation |C| in rad; strain |C| / pi, the angle error as a fraction of a half turn (0 to 1);
 * energy C^2 / (2 alpha) for a soft XPBD hinge. A hinge without an angle (a flat or collapsed
 * triangle) counts in none of them. */
static void stats(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end, pbd_family_sums* out) {
	const bool xpbd = pbd_energy_from_compliance(w);
	const double inv_pi = 1 / 3.14159265358979323846;
	out->energy_defined = true;
	for (uint32_t k = first; k < end; ++k) {
		const pbd_dihedral_p* q = &COLD(f)[k];
		pbd_sums_stiffness(out, xpbd, q->stiffness);
		double C;
		if (!violation(w, &HOT(f)[k], &C)) continue;
		const double ac = fabs(C), strain = ac * inv_pi;
		out->max_violation = pbd_max_sticky(out->max_violation, ac);
		pbd_sums_strain(out, strain);
		pbd_sums_energy(out, xpbd, C, q->compliance);
	}
}

static double max_strain(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end) {
	double m = 0;
	for (uint32_t k = first; k < end; ++k) {
		double C;
		if (!violation(w, &HOT(f)[k], &C)) continue;
		const double strain = fabs(C) / 3.14159265358979323846;
		m = pbd_max_sticky(m, strain);
	}
	return m;
}

static bool check(const pbd_world* w, const pbd_family* f, uint32_t k, const char** why) {
	(void)w;
	const pbd_dihedral_c* c = &HOT(f)[k];
	const pbd_dihedral_p* q = &COLD(f)[k];
	for (int i = 0; i < 4; ++i)
		for (int j = 0; j < i; ++j)
			if (c->p[i] == c->p[j]) return *why = "uses a particle twice", false;
	if (!pbd_is_finite(c->rest) || !(c->rest > -PBD_PI_R && c->rest <= PBD_PI_R))
		return *why = "has an invalid rest angle", false;
	if (!pbd_softness_ok(q->stiffness, q->compliance)) return *why = "has an invalid material", false;
	return true;
}

const pbd_family_ops pbd_family_bend_dihedral_ops = {
    .name = "bend_dihedral",
    .hot_size = sizeof(pbd_dihedral_c),
    .cold_size = sizeof(pbd_dihedral_p),
    .lambdas = 1,
    .particles = particles,
    .refresh = refresh,
    .project = project,
    .jacobi = jacobi,
#ifdef PBD_HAVE_AVX2
    .project_lanes = pbd_bend_dihedral_project_avx2,
    .jacobi_lanes = pbd_bend_dihedral_jacobi_avx2,
#endif
    .stats = stats,
    .max_strain = max_strain,
    .check = check,
    .linearize = linearize,
    .row_count = 1,
    .row_entries = 4,
};
