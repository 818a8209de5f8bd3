/* Isometric bending constraints (Bergou et al. 2006, "A quadratic bending model for inextensible
 * surfaces") on a hinge (bend.h): C = |s| - r0 with s = sum_i K_i x_i, the hinge's mean-curvature
 * vector from constant cotangent weights K of the rest shape. C^2 / 2 = (1/2) sum_ij Q_ij x_i . x_j
 * with Q = K K^T is Bergou's quadratic energy when the rest state is flat (r0 = 0). */
#include <string.h>

#include "constraints/bend.h"
#include "constraints/rows.h"
#include "constraints/lanes.h"

/* Cold: the material as given, and kappa = |e| sqrt(3 / (A2 + A3)) of the rest shape, the length
 * of s per unit of 2 sin(theta / 2) (for the strain and the rest angle). */
typedef struct pbd_isometric_p {
	pbd_real stiffness;
	pbd_real compliance;
	pbd_real kappa;
} pbd_isometric_p;

_Static_assert(sizeof(pbd_isometric_p) == 3 * sizeof(pbd_real), "padding in pbd_isometric_p");

#define FAM(w)  (&(w)->fam[PBD_FAMILY_BEND_ISOMETRIC])
#define HOT(f)  ((pbd_isometric_c*)(f)->hot)
#define COLD(f) ((pbd_isometric_p*)(f)->cold)

static const pbd_softness_fields softness =
    PBD_SOFTNESS_FIELDS(PBD_FAMILY_BEND_ISOMETRIC, pbd_isometric_c, pbd_isometric_p, 1, "constraint");

/* The largest sum_i K_i^2 (1/m^2) a constraint may have: then sum_i w_i K_i^2 stays finite for
 * inverse masses up to PBD_INV_MASS_MAX. */
#define ISO_MAX_K2 ((double)PBD_REAL_MAX / (8.0 * PBD_INV_MASS_MAX))

static inline double dot_d(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static inline double cross_len_d(const double a[3], const double b[3]) {
	const double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
	return sqrt(x * x + y * y + z * z);
}

bool pbd_hinge_isometric_weights(const double e[3], const double a2[3], const double a3[3], double K[4],
                                 double* kappa) {
	/* The bounds of the dihedral kernel: a triangle whose height over the edge is below
	 * sqrt(PBD_BEND_MIN_HEIGHT2) edge lengths has cotangents beyond any use. */
	const double l2 = dot_d(e, e), eps = (double)PBD_EPSILON_LENGTH;
	if (!(l2 >= eps * eps)) return false;
	const double reach = (double)PBD_BEND_MAX_REACH2 * l2;
	if (!(dot_d(a2, a2) <= reach) || !(dot_d(a3, a3) <= reach)) return false;
	const double twice2 = cross_len_d(e, a2), twice3 = cross_len_d(e, a3); /* 2 A2, 2 A3 */
	const double hmin = sqrt((double)PBD_BEND_MIN_HEIGHT2) * l2;
	if (!(twice2 > hmin) || !(twice3 > hmin)) return false;
	/* cot of the angle at x0 between e and a, and at x1 between -e and a - e; |e x a| is twice the
	 * area for both. */
	const double e2 = dot_d(e, a2), e3 = dot_d(e, a3);
	const double c02 = e2 / twice2, c12 = (l2 - e2) / twice2;
	const double c03 = e3 / twice3, c13 = (l2 - e3) / twice3;
	const double scale = sqrt(3.0 / (0.5 * (twice2 + twice3)));
	K[1] = scale * (c02 + c03);
	K[2] = -scale * (c02 + c12);
	K[3] = -scale * (c03 + c13);
	K[0] = -(K[1] + K[2] + K[3]); /* = scale * (c12 + c13): the weights sum to zero */
	*kappa = sqrt(l2) * scale;
	const double k2 = K[0] * K[0] + K[1] * K[1] + K[2] * K[2] + K[3] * K[3];
	return k2 <= ISO_MAX_K2 && *kappa <= (double)PBD_REAL_MAX;
}

pbd_bend_isometric_def pbd_bend_isometric_def_default(void) {
	pbd_bend_isometric_def d;
	memset(&d, 0, sizeof d);
	d.measure_rest = true;
	d.rest = 0;
	d.stiffness = 1;
	d.compliance = 0;
	return d;
}

/* Validates one def and derives its record: weights, rest length of s, kappa. */
static pbd_status derive(pbd_world* w, uint32_t k, const pbd_bend_isometric_def* d, pbd_isometric_c* c,
                         pbd_isometric_p* q) {
	const char* fn = "pbd_world_add_bend_isometrics";
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
	if (!d->measure_rest) {
		if (!pbd_is_finite(d->rest))
			return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: constraint %u: rest is not finite", fn, k);
		if (d->rest < -PBD_PI_R || d->rest > PBD_PI_R)
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: constraint %u: rest must be in [-pi, pi]", fn, k);
	}
	double e[3], a2[3], a3[3], K[4], kappa;
	pbd_hinge_vectors_d(w, d->p, e, a2, a3);
	if (!pbd_hinge_isometric_weights(e, a2, a3, K, &kappa))
		return pbd_fail(w, PBD_ERR_DEGENERATE,
		                "%s: constraint %u: the hinge has a triangle of zero area or a collapsed edge (or is too small "
		                "for the scalar); no weights",
		                fn, k);
	double r0;
	if (d->measure_rest) {
		double s[3];
		for (int j = 0; j < 3; ++j) s[j] = K[1] * e[j] + K[2] * a2[j] + K[3] * a3[j];
		r0 = sqrt(dot_d(s, s));
	} else {
		r0 = 2 * sin(0.5 * fabs((double)d->rest)) * kappa;
	}
	memcpy(c->p, d->p, sizeof c->p);
	for (int i = 0; i < 4; ++i) c->K[i] = (pbd_real)K[i];
	c->rest = (pbd_real)r0;
	c->s = 0;
	q->stiffness = d->stiffness;
	q->compliance = d->compliance;
	q->kappa = (pbd_real)kappa;
	return PBD_OK;
}

pbd_status pbd_world_add_bend_isometrics(pbd_world* w, uint32_t count, const pbd_bend_isometric_def* defs,
                                         uint32_t* first) {
	const char* fn = "pbd_world_add_bend_isometrics";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	if (count == 0) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: count is 0", fn);
	if (!defs) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: defs is NULL", fn);
	for (uint32_t k = 0; k < count; ++k) {
		pbd_isometric_c c;
		pbd_isometric_p q;
		const pbd_status st = derive(w, k, &defs[k], &c, &q);
		if (st != PBD_OK) return st;
	}
	const uint32_t base = pbd_family_append(w, PBD_FAMILY_BEND_ISOMETRIC, count);
	if (base == UINT32_MAX)
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %u constraints", fn, count);
	pbd_family* f = FAM(w);
	for (uint32_t k = 0; k < count; ++k)
		(void)derive(w, k, &defs[k], &HOT(f)[base + k], &COLD(f)[base + k]); /* validated above */
	if (first) *first = base;
	return PBD_OK;
}

uint32_t pbd_world_bend_isometric_count(const pbd_world* w) { return w ? FAM(w)->n : 0; }

pbd_status pbd_world_get_bend_isometric(const pbd_world* w, uint32_t index, pbd_bend_isometric_def* out) {
	if (!w || !out) return PBD_ERR_INVALID_ARGUMENT;
	const pbd_family* f = FAM(w);
	if (index >= f->n)
		return pbd_fail((pbd_world*)w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_world_get_bend_isometric: constraint %u out of range (%u)", index, f->n);
	const pbd_isometric_c* c = &HOT(f)[f->slot[index]];
	const pbd_isometric_p* q = &COLD(f)[f->slot[index]];
	memset(out, 0, sizeof *out);
	memcpy(out->p, c->p, sizeof out->p);
	out->measure_rest = false;
	const double half = 0.5 * (double)c->rest / (double)q->kappa;
	out->rest = (pbd_real)(2 * asin(half < 1 ? half : 1));
	out->stiffness = q->stiffness;
	out->compliance = q->compliance;
	return PBD_OK;
}

pbd_status pbd_world_set_bend_isometric_material(pbd_world* w, uint32_t first, uint32_t count, pbd_real stiffness,
                                                 pbd_real compliance) {
	return pbd_family_set_softness(w, "pbd_world_set_bend_isometric_material", &softness, first, count, stiffness,
	                               compliance);
}

/* s = the compliance (XPBD) or k' = 1 - (1 - k)^(1/n) (PBD), as for distances. */
static void refresh(pbd_family* f, const pbd_step_ctx* ctx) { pbd_family_refresh_softness(f, &softness, ctx); }

static uint32_t particles(const pbd_family* f, uint32_t k, uint32_t first, uint32_t* out, uint32_t cap) {
	if (first == 0 && cap >= 4) memcpy(out, HOT(f)[k].p, 4 * sizeof *out);
	return 4;
}

/* s = sum_i K_i x_i from positions relative to x0 (the K_0 term drops since the weights sum to
 * zero), its length and direction. False when the hinge is flat to rounding (PBD_BEND_ISO_FLAT). */
static inline bool evaluate(const pbd_step_ctx* ctx, const pbd_isometric_c* c, pbd_real* len, pbd_vec3* dir) {
	const uint32_t o = c->p[0];
	const pbd_vec3 a1 = pbd_rel(ctx, c->p[1], o), a2 = pbd_rel(ctx, c->p[2], o), a3 = pbd_rel(ctx, c->p[3], o);
	const pbd_vec3 s =
	    pbd_v3_add(pbd_v3_add(pbd_v3_scale(a1, c->K[1]), pbd_v3_scale(a2, c->K[2])), pbd_v3_scale(a3, c->K[3]));
	const pbd_real m = PBD_FABS(c->K[1]) * (PBD_FABS(a1.x) + PBD_FABS(a1.y) + PBD_FABS(a1.z)) +
	                   PBD_FABS(c->K[2]) * (PBD_FABS(a2.x) + PBD_FABS(a2.y) + PBD_FABS(a2.z)) +
	                   PBD_FABS(c->K[3]) * (PBD_FABS(a3.x) + PBD_FABS(a3.y) + PBD_FABS(a3.z));
	const pbd_real s2 = pbd_v3_dot(s, s), floor = PBD_BEND_ISO_FLAT * m;
	if (!(s2 > floor * floor) || !(s2 > 0)) return false;
	*len = PBD_SQRT(s2);
	*dir = pbd_v3_scale(s, 1 / *len);
	return true;
}

/* grad_i C = K_i dir: every particle moves along dir, by w_i K_i dlambda, and s moves by
 * W dlambda dir with W = sum_i w_i K_i^2. s is linear in the positions, so one PBD projection
 * with k' = 1 lands exactly on |s| = r0. */
static void project(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_real* restrict iw = ctx->iw;
	pbd_vec3* restrict q = ctx->q;
	const pbd_isometric_c* restrict c = HOT(f);
	pbd_real* restrict lambda = f->lambda;
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD;
	for (uint32_t k = first; k < end; ++k) {
		const uint32_t* p = c[k].p;
		const pbd_real* K = c[k].K;
		const pbd_real W =
		    iw[p[0]] * K[0] * K[0] + iw[p[1]] * K[1] * K[1] + iw[p[2]] * K[2] * K[2] + iw[p[3]] * K[3] * K[3];
		if (!(W > 0) || (!xpbd && c[k].s == 0)) continue; /* all pinned, or nothing to do */
		pbd_real len;
		pbd_vec3 dir;
		if (!evaluate(ctx, &c[k], &len, &dir)) continue;
		const pbd_real C = len - c[k].rest;
		pbd_real dl;
		if (xpbd) {
			const pbd_real at = c[k].s * ctx->inv_h2;
			const pbd_real den = W + at;
			if (!(den > 0)) continue;
			dl = (-C - at * lambda[k]) / den;
			lambda[k] += dl;
		} else {
			dl = -c[k].s * C / W;
		}
		for (int i = 0; i < 4; ++i)
			if (iw[p[i]] > 0) q[p[i]] = pbd_v3_add(q[p[i]], pbd_v3_scale(dir, iw[p[i]] * K[i] * dl));
	}
}

/* The norm row C = |s| - r0 with s = sum_i K_i x_i: a flat-rest hinge is the quadratic energy k |s|^2 / 2, kept
 * where s vanishes too (rows.h). */
static void linearize(const pbd_step_ctx* ctx, const pbd_family* f, uint32_t first, uint32_t end, pbd_rows* rows) {
	const pbd_isometric_c* c = HOT(f);
	for (uint32_t k = first; k < end; ++k) {
		const pbd_real kk = pbd_rows_k(COLD(f)[k].compliance);
		if (kk == 0) pbd_rows_note_hard(rows, PBD_FAMILY_BEND_ISOMETRIC, f->user[k]);
		const uint32_t o = c[k].p[0];
		const pbd_vec3 a1 = pbd_rel(ctx, c[k].p[1], o), a2 = pbd_rel(ctx, c[k].p[2], o),
		               a3 = pbd_rel(ctx, c[k].p[3], o);
		const pbd_vec3 s = pbd_v3_add(pbd_v3_add(pbd_v3_scale(a1, c[k].K[1]), pbd_v3_scale(a2, c[k].K[2])),
		                              pbd_v3_scale(a3, c[k].K[3]));
		pbd_rows_add_norm(rows, c[k].p, c[k].K, 4, s, c[k].rest, kk, kk);
	}
}

/* Jacobi: the same from the iteration's start into dx, mass-weighted with one factor for the
 * hinge (momentum kept) or with unit weights for the equal split, as pbd_constraint_jacobi. */
static void jacobi(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_real* restrict iw = ctx->iw;
	pbd_vec3* restrict dx = ctx->dx;
	const uint32_t* restrict deg = ctx->degree;
	const pbd_isometric_c* restrict c = HOT(f);
	pbd_real* restrict lambda = f->lambda;
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD, equal = ctx->jacobi_equal;
	for (uint32_t k = first; k < end; ++k) {
		const uint32_t* p = c[k].p;
		const pbd_real* K = c[k].K;
		if (iw[p[0]] + iw[p[1]] + iw[p[2]] + iw[p[3]] == 0 || (!xpbd && c[k].s == 0)) continue;
		pbd_real w[4], W = 0, scale = 1;
		uint32_t dmax = 0;
		for (int i = 0; i < 4; ++i) {
			w[i] = equal ? 1 : iw[p[i]];
			W += w[i] * K[i] * K[i];
			dmax = deg[p[i]] > dmax ? deg[p[i]] : dmax;
		}
		if (!equal) scale = ctx->jacobi_omega / ((pbd_real)dmax + ctx->jacobi_alpha);
		pbd_real len;
		pbd_vec3 dir;
		if (!evaluate(ctx, &c[k], &len, &dir)) continue;
		const pbd_real C = len - c[k].rest;
		pbd_real dl;
		if (xpbd) {
			const pbd_real at = c[k].s * ctx->inv_h2;
			const pbd_real den = W + at;
			if (!(den > 0)) continue;
			dl = scale * ((-C - at * lambda[k]) / den);
			lambda[k] += dl;
		} else {
			if (!(W > 0)) continue;
			dl = scale * (-c[k].s * C / W);
		}
		for (int i = 0; i < 4; ++i) dx[p[i]] = pbd_v3_add(dx[p[i]], pbd_v3_scale(dir, w[i] * K[i] * dl));
	}
}

/* C in double from x + x_lo. Flat to rounding, a flat-rest hinge has C = 0 and a curved one -r0. */
static double violation(const pbd_world* w, const pbd_isometric_c* c) {
	double e[3], a2[3], a3[3], s[3];
	pbd_hinge_vectors_d(w, c->p, e, a2, a3);
	for (int j = 0; j < 3; ++j) s[j] = (double)c->K[1] * e[j] + (double)c->K[2] * a2[j] + (double)c->K[3] * a3[j];
	return sqrt(dot_d(s, s)) - (double)c->rest;
}

/* Violation |C| (dimensionless); strain |C| / (kappa pi), which is the bend-angle error as a
 * fraction of a half turn for small errors (|s| = 2 sin(theta / 2) kappa for an inextensible
 * bend); energy C^2 / (2 alpha) for a soft XPBD hinge. */
static void stats(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end, pbd_family_sums* out) {
	const bool xpbd = pbd_energy_from_compliance(w);
	const double pi = 3.14159265358979323846;
	out->energy_defined = true;
	for (uint32_t k = first; k < end; ++k) {
		const pbd_isometric_p* q = &COLD(f)[k];
		pbd_sums_stiffness(out, xpbd, q->stiffness);
		const double C = violation(w, &HOT(f)[k]), ac = fabs(C);
		const double strain = ac / ((double)q->kappa * pi);
		out->max_violation = pbd_max_sticky(out->max_violation, ac);
		pbd_sums_strain(out, strain);
		pbd_sums_energy(out, xpbd, C, q->compliance);
	}
}

static double max_strain(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end) {
	double m = 0;
	for (uint32_t k = first; k < end; ++k) {
		const double strain = fabs(violation(w, &HOT(f)[k])) / ((double)COLD(f)[k].kappa * 3.14159265358979323846);
		m = pbd_max_sticky(m, strain);
	}
	return m;
}

static bool check(const pbd_world* w, const pbd_family* f, uint32_t k, const char** why) {
	(void)w;
	const pbd_isometric_c* c = &HOT(f)[k];
	const pbd_isometric_p* q = &COLD(f)[k];
	for (int i = 0; i < 4; ++i)
		for (int j = 0; j < i; ++j)
			if (c->p[i] == c->p[j]) return *why = "uses a particle twice", false;
	double k2 = 0;
	for (int i = 0; i < 4; ++i) {
		if (!pbd_is_finite(c->K[i])) return *why = "has an invalid weight", false;
		k2 += (double)c->K[i] * (double)c->K[i];
	}
	if (!(k2 <= ISO_MAX_K2)) return *why = "has an invalid weight", false;
	if (!pbd_is_finite(c->rest) || !(c->rest >= 0)) return *why = "has an invalid rest bend", false;
	if (!pbd_is_finite(q->kappa) || !(q->kappa > 0)) return *why = "has an invalid rest shape", false;
	if (!pbd_softness_ok(q->stiffness, q->compliance)) return *why = "has an invalid material", false;
	return true;
}

const pbd_family_ops pbd_family_bend_isometric_ops = {
    .name = "bend_isometric",
    .hot_size = sizeof(pbd_isometric_c),
    .cold_size = sizeof(pbd_isometric_p),
    .lambdas = 1,
    .particles = particles,
    .refresh = refresh,
    .project = project,
    .jacobi = jacobi,
#ifdef PBD_HAVE_AVX2
    .project_lanes = pbd_bend_isometric_project_avx2,
    .jacobi_lanes = pbd_bend_isometric_jacobi_avx2,
#endif
    .stats = stats,
    .max_strain = max_strain,
    .check = check,
    .linearize = linearize,
    .row_count = 1,
    .row_entries = 4,
};
