/* Distance constraints C = |x_a - x_b| - rest: storage, Gauss-Seidel and Jacobi projection
 * with PBD stiffness (Müller et al. 2007) or XPBD compliance (Macklin et al. 2016), and the
 * strain and elastic-energy diagnostics. */
#include <string.h>

#include "constraints/distance.h"
#include "constraints/rows.h"
#include "constraints/lanes.h"
#include "model/world.h"

/* Cold data: the parameters as given, kept to rebuild s[] when settings change. */
typedef struct pbd_distance_p {
	pbd_real stiffness[2];
	pbd_real compliance[2];
	uint32_t kind;  /* pbd_edge_kind */
	uint32_t flags; /* DIST_FROM_COMPLIANCE; also keeps the record free of padding in both precisions */
} pbd_distance_p;

_Static_assert(sizeof(pbd_distance_p) == 2 * sizeof(uint32_t) + 4 * sizeof(pbd_real), "padding in pbd_distance_p");

#define FAM(w) (&(w)->fam[PBD_FAMILY_DISTANCE])
/* Under PBD, the stiffness is derived from the compliance (pbd_distance_def.stiffness_from_compliance). */
#define DIST_FROM_COMPLIANCE 1u
#define HOT(f)               ((pbd_distance_c*)(f)->hot)
#define COLD(f)              ((pbd_distance_p*)(f)->cold)

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
	if (d->kind >= PBD_EDGE_KIND_COUNT)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: constraint %u: unknown edge kind %u", fn, k, d->kind);
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

pbd_status pbd_world_add_distances(pbd_world* w, uint32_t count, const pbd_distance_def* defs, uint32_t* first) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	if (count == 0) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_world_add_distances: count is 0");
	if (!defs) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_world_add_distances: defs is NULL");
	for (uint32_t k = 0; k < count; ++k) {
		pbd_status st = validate(w, k, &defs[k]);
		if (st != PBD_OK) return st;
	}
	const uint32_t base = pbd_family_append(w, PBD_FAMILY_DISTANCE, count);
	if (base == UINT32_MAX)
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_add_distances: out of memory for %u constraints", count);
	pbd_family* f = FAM(w);
	for (uint32_t k = 0; k < count; ++k) {
		const pbd_distance_def* d = &defs[k];
		pbd_distance_c* c = &HOT(f)[base + k];
		c->a = d->a;
		c->b = d->b;
		c->rest = d->rest >= 0 ? d->rest : pbd_v3_length(pbd_v3_sub(w->x[d->a], w->x[d->b]));
		pbd_distance_p* q = &COLD(f)[base + k];
		q->stiffness[0] = d->stiffness_stretch;
		q->stiffness[1] = d->stiffness_compress;
		q->compliance[0] = d->compliance_stretch;
		q->compliance[1] = d->compliance_compress;
		q->kind = d->kind;
		q->flags = d->stiffness_from_compliance ? DIST_FROM_COMPLIANCE : 0u;
	}
	if (first) *first = base;
	return PBD_OK;
}

pbd_status pbd_world_set_distance_material(pbd_world* w, uint32_t first, uint32_t count, const pbd_edge_material* m) {
	const char* fn = "pbd_world_set_distance_material";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_family* f = FAM(w);
	if (!m) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: material is NULL", fn);
	{
		const pbd_status range = pbd_family_check_range(w, fn, f, first, count);
		if (range != PBD_OK) return range;
	}
	if (!pbd_is_finite(m->stiffness_stretch) || !pbd_is_finite(m->stiffness_compress) ||
	    !pbd_is_finite(m->compliance_stretch) || !pbd_is_finite(m->compliance_compress))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: a parameter is not finite", fn);
	if (m->stiffness_stretch < 0 || m->stiffness_stretch > 1 || m->stiffness_compress < 0 || m->stiffness_compress > 1)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: stiffness must be in [0, 1]", fn);
	if (m->compliance_stretch < 0 || m->compliance_compress < 0)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: compliance must be >= 0", fn);
	/* `enabled` is a creation-time choice; disabling a live constraint is stiffness 0. */
	for (uint32_t u = first; u < first + count; ++u) {
		pbd_distance_p* q = &COLD(f)[f->slot[u]];
		q->stiffness[0] = m->stiffness_stretch;
		q->stiffness[1] = m->stiffness_compress;
		q->compliance[0] = m->compliance_stretch;
		q->compliance[1] = m->compliance_compress;
	}
	pbd_family_touch(w, PBD_FAMILY_DISTANCE);
	return PBD_OK;
}

uint32_t pbd_world_distance_count(const pbd_world* w) { return w ? FAM(w)->n : 0; }

pbd_status pbd_world_get_distance(const pbd_world* w, uint32_t index, pbd_distance_def* out) {
	if (!w || !out) return PBD_ERR_INVALID_ARGUMENT;
	const pbd_family* f = FAM(w);
	if (index >= f->n)
		return pbd_fail((pbd_world*)w, PBD_ERR_OUT_OF_RANGE, "pbd_world_get_distance: constraint %u out of range (%u)",
		                index, f->n);
	const pbd_distance_c* c = &HOT(f)[f->slot[index]];
	const pbd_distance_p* q = &COLD(f)[f->slot[index]];
	out->a = c->a;
	out->b = c->b;
	out->rest = c->rest;
	out->stiffness_stretch = q->stiffness[0];
	out->stiffness_compress = q->stiffness[1];
	out->compliance_stretch = q->compliance[0];
	out->compliance_compress = q->compliance[1];
	out->kind = q->kind;
	out->stiffness_from_compliance = (q->flags & DIST_FROM_COMPLIANCE) != 0;
	return PBD_OK;
}

/* Which layout the ends of the 8 constraints from position k have (PBD_RUN_*). Two rows of 8
 * that overlap cannot both belong to one colour group, but a batch whose ends coincide could
 * look like it; it is left to the general path. */
static uint8_t run_kind(const pbd_distance_lanes* l, uint32_t k) {
	const uint32_t a0 = l->a[k], b0 = l->b[k];
	bool pairs = true, rows = b0 - a0 >= PBD_LANES && a0 - b0 >= PBD_LANES;
	for (uint32_t j = 0; j < PBD_LANES; ++j) {
		const uint32_t a = l->a[k + j], b = l->b[k + j];
		pairs = pairs && a == a0 + 2 * j && b == a + 1;
		rows = rows && a == a0 + j && b == b0 + j;
	}
	return pairs ? PBD_RUN_PAIRS : rows ? PBD_RUN_ROWS : PBD_RUN_NONE;
}

/* pbd_distance_lanes: the records field by field, and the layout of every 8 from each position
 * (a batch may start anywhere: a block starts where its colour group does). */
void pbd_distance_copy_lanes(pbd_family* f, bool records) {
	if (!f->lanes) return;
	const pbd_distance_lanes l = pbd_distance_lanes_of(f);
	const pbd_distance_c* c = HOT(f);
	for (uint32_t k = 0; k < f->n; ++k) {
		l.s0[k] = c[k].s[0];
		l.s1[k] = c[k].s[1];
	}
	if (!records) return;
	for (uint32_t k = 0; k < f->n; ++k) {
		l.a[k] = c[k].a;
		l.b[k] = c[k].b;
		l.rest[k] = c[k].rest;
	}
	for (uint32_t k = 0; k < f->n; ++k) l.run[k] = k + PBD_LANES <= f->n ? run_kind(&l, k) : (uint8_t)PBD_RUN_NONE;
}

#if defined(PBD_HAVE_AVX2) && !defined(NDEBUG)
/* pbd_family_ops.lanes_agree: every field and layout of the first n entries, bit for bit. */
static bool lanes_agree(const pbd_family* f) {
	if (!f->lanes || f->n > f->cap) return false;
	const pbd_distance_lanes l = pbd_distance_lanes_of(f);
	const pbd_distance_c* c = HOT(f);
	for (uint32_t k = 0; k < f->n; ++k) {
		if (l.a[k] != c[k].a || l.b[k] != c[k].b || memcmp(&l.rest[k], &c[k].rest, sizeof c[k].rest) ||
		    memcmp(&l.s0[k], &c[k].s[0], sizeof c[k].s[0]) || memcmp(&l.s1[k], &c[k].s[1], sizeof c[k].s[1]))
			return false;
		if (l.run[k] != (k + PBD_LANES <= f->n ? run_kind(&l, k) : (uint8_t)PBD_RUN_NONE)) return false;
	}
	return true;
}
#endif

/* Derives s[] for the formulation and iteration count. PBD: k' = 1 - (1 - k)^(1/n) so that n
 * iterations of k' remove the same fraction of the error as one projection with k (Müller et al.
 * 2007, section 3.3). The pow runs here, once per change, not in every step. */
static void refresh(pbd_family* f, const pbd_step_ctx* ctx) {
	const pbd_real inv_n = PBD_R(1.0) / (pbd_real)ctx->iterations;
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD;
	for (uint32_t k = 0; k < f->n; ++k) {
		const pbd_distance_p* q = &COLD(f)[k];
		const pbd_real W = ctx->iw[HOT(f)[k].a] + ctx->iw[HOT(f)[k].b];
		for (int j = 0; j < 2; ++j) {
			/* The fraction of C one XPBD projection removes, W / (W + alpha / h^2). */
			pbd_real kk = q->stiffness[j];
			if (!xpbd && (q->flags & DIST_FROM_COMPLIANCE)) {
				const pbd_real at = q->compliance[j] * ctx->inv_h2;
				kk = at == 0 ? 1 : W == 0 ? 0 : W / (W + at);
			}
			HOT(f)[k].s[j] = xpbd ? q->compliance[j] : pbd_stiffness_per_iteration(kk, inv_n);
		}
	}
	/* a new step length or iteration count changes s[] only; the ends and rest lengths change
	 * with the constraint set, its order or a material, which mark the family stale */
	pbd_distance_copy_lanes(f, f->stale);
}

static uint32_t particles(const pbd_family* f, uint32_t k, uint32_t first, uint32_t* out, uint32_t cap) {
	if (first == 0 && cap >= 2) {
		out[0] = HOT(f)[k].a;
		out[1] = HOT(f)[k].b;
	}
	return 2;
}

/* Edges of a kind in the order structural, shear, bend (as a grid is built, and the order that
 * holds a strongly stretched cloth together), then by how far apart their particles are numbered:
 * a grid's rows of edges of one direction. */
static pbd_layout layout(const pbd_family* f, uint32_t k) {
	const pbd_distance_c* c = &HOT(f)[k];
	return (pbd_layout){(uint64_t)COLD(f)[k].kind << 32 | (uint32_t)(c->b - c->a), c->a};
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
static void project_pbd(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_vec3* restrict x = ctx->x;
	pbd_vec3* restrict q = ctx->q;
	const pbd_real* restrict iw = ctx->iw;
	const pbd_distance_c* restrict c = HOT(f);
	for (uint32_t k = first; k < end; ++k) {
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
		if (wa > 0) q[a] = pbd_v3_sub(q[a], pbd_v3_scale(d, wa * s));
		if (wb > 0) q[b] = pbd_v3_add(q[b], pbd_v3_scale(d, wb * s));
	}
}

/* XPBD: dlambda = (-C - alpha~ lambda) / (wa + wb + alpha~), alpha~ = alpha / h^2. */
static void project_xpbd(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_vec3* restrict x = ctx->x;
	pbd_vec3* restrict q = ctx->q;
	const pbd_real* restrict iw = ctx->iw;
	const pbd_distance_c* restrict c = HOT(f);
	pbd_real* restrict lambda = f->lambda;
	const pbd_real inv_h2 = ctx->inv_h2;
	for (uint32_t k = first; k < end; ++k) {
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
		if (wa > 0) q[a] = pbd_v3_add(q[a], pbd_v3_scale(d, wa * s));
		if (wb > 0) q[b] = pbd_v3_sub(q[b], pbd_v3_scale(d, wb * s));
	}
}

uint32_t pbd_distance_run_batches(const pbd_family* f, uint32_t first, uint32_t end) {
#ifdef PBD_HAVE_AVX512
	const pbd_distance_lanes l = pbd_distance_lanes_of(f);
	uint32_t runs = 0;
	for (uint32_t k = first; k + PBD_LANES <= end; k += PBD_LANES) runs += l.run[k] != PBD_RUN_NONE;
	return runs;
#else
	(void)f;
	(void)first;
	(void)end;
	return 0;
#endif
}

static void project(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	if (ctx->formulation == PBD_FORMULATION_XPBD)
		project_xpbd(ctx, f, first, end);
	else
		project_pbd(ctx, f, first, end);
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
static void jacobi(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_vec3* restrict x = ctx->x;
	const pbd_vec3* restrict q = ctx->q;
	const pbd_real* restrict iw = ctx->iw;
	const pbd_distance_c* restrict c = HOT(f);
	pbd_vec3* restrict dx = ctx->dx;
	pbd_real* restrict lambda = f->lambda;
	const uint32_t* restrict deg = ctx->degree;
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD;
	const bool equal = ctx->jacobi_equal;
	const pbd_real alpha = ctx->jacobi_alpha, omega = ctx->jacobi_omega, inv_h2 = ctx->inv_h2;
	for (uint32_t k = first; k < end; ++k) {
		const uint32_t a = c[k].a, b = c[k].b;
		const pbd_real wa = equal ? 1 : iw[a], wb = equal ? 1 : iw[b];
		const pbd_real fk = equal ? 1 : omega / ((pbd_real)(deg[a] > deg[b] ? deg[a] : deg[b]) + alpha);
		const pbd_vec3 d = separation(x, q, a, b);
		const pbd_real len = PBD_SQRT(pbd_v3_dot(d, d));
		if (!(len >= PBD_EPSILON_LENGTH)) continue;
		const pbd_real C = len - c[k].rest;
		pbd_real s; /* correction of a is -wa * s * d, of b is +wb * s * d */
		if (xpbd) {
			const pbd_real at = c[k].s[C <= 0] * inv_h2;
			const pbd_real denom = wa + wb + at;
			if (denom == 0) continue;
			const pbd_real dl = fk * ((-C - at * lambda[k]) / denom);
			lambda[k] += dl;
			s = -dl / len;
		} else {
			const pbd_real ws = wa + wb;
			if (ws == 0) continue;
			s = fk * (c[k].s[C <= 0] * C / (ws * len));
		}
		dx[a] = pbd_v3_sub(dx[a], pbd_v3_scale(d, wa * s));
		dx[b] = pbd_v3_add(dx[b], pbd_v3_scale(d, wb * s));
	}
}

/* Squared length of a constraint in double, from the full positions x + x_lo. */
static double current_length2(const pbd_world* w, const pbd_distance_c* c) {
	const pbd_vec3 xa = w->x[c->a], xb = w->x[c->b], la = w->x_lo[c->a], lb = w->x_lo[c->b];
	const double dx = ((double)xa.x - (double)xb.x) + ((double)la.x - (double)lb.x);
	const double dy = ((double)xa.y - (double)xb.y) + ((double)la.y - (double)lb.y);
	const double dz = ((double)xa.z - (double)xb.z) + ((double)la.z - (double)lb.z);
	return dx * dx + dy * dy + dz * dz;
}

static double current_length(const pbd_world* w, const pbd_distance_c* c) { return sqrt(current_length2(w, c)); }

/* Strain (all edges and per edge kind), violation and elastic energy of the current positions. The energy of a soft
 * XPBD constraint is C^2 / (2 alpha); an ideal one (alpha 0, or PBD stiffness 0 or 1) stores none; a PBD stiffness in
 * (0, 1) is a fraction of a projection, not a material, so it has none. */
static void stats(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end, pbd_family_sums* out) {
	const bool xpbd = pbd_energy_from_compliance(w);
	out->energy_defined = true;
	for (uint32_t k = first; k < end; ++k) {
		const pbd_distance_c* c = &HOT(f)[k];
		const pbd_distance_p* p = &COLD(f)[k];
		const double C = current_length(w, c) - (double)c->rest;
		const double ac = C < 0 ? -C : C;
		if (ac > out->max_violation) out->max_violation = ac;
		if (c->rest > 0) {
			const double strain = ac / (double)c->rest;
			const uint32_t kind = p->kind < PBD_EDGE_KIND_COUNT ? p->kind : PBD_EDGE_STRUCTURAL;
			pbd_sums_strain(out, strain);
			out->kind_max[kind] = pbd_max_sticky(out->kind_max[kind], strain);
			out->kind_sum[kind] += strain;
			out->kind_count[kind]++;
		}
		const bool from_compliance = xpbd || (p->flags & DIST_FROM_COMPLIANCE);
		pbd_sums_energy(out, from_compliance, C, p->compliance[C > 0 ? 0 : 1]);
		for (int j = 0; j < 2; ++j) pbd_sums_stiffness(out, from_compliance, p->stiffness[j]);
	}
}

/* The divergence test's first look: no square root and no division, so that a large cloth's step
 * does not spend a quarter of its time on a test that passes (a 512 x 512 cloth at 10 iterations:
 * 10.7 of 44 ms). The band is narrowed by a millionth, far above the rounding of the squares, so
 * that a constraint at the bound itself goes to max_strain, which decides. */
static bool strain_within(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end, double bound) {
	const double hi = (1 + bound) * (1 - 1e-6), lo = bound < 1 ? (1 - bound) * (1 + 1e-6) : 0;
	const double hi2 = hi * hi, lo2 = lo * lo;
	bool ok = true;
	for (uint32_t k = first; k < end; ++k) {
		const pbd_distance_c* c = &HOT(f)[k];
		if (!(c->rest > 0)) continue;
		const double r2 = (double)c->rest * (double)c->rest, l2 = current_length2(w, c);
		ok &= l2 <= hi2 * r2 && l2 >= lo2 * r2; /* false for NaN */
	}
	return ok;
}

static double max_strain(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end) {
	double m = 0;
	for (uint32_t k = first; k < end; ++k) {
		const pbd_distance_c* c = &HOT(f)[k];
		if (!(c->rest > 0)) continue;
		const double C = current_length(w, c) - (double)c->rest;
		const double strain = (C < 0 ? -C : C) / (double)c->rest;
		m = pbd_max_sticky(m, strain);
	}
	return m;
}

/* A spring of constant 1 / compliance on the side (stretched or compressed) it is on now; kf, the
 * projective methods' constant, is the stretch side's. */
static void linearize(const pbd_step_ctx* ctx, const pbd_family* f, uint32_t first, uint32_t end, pbd_rows* rows) {
	const pbd_distance_c* c = HOT(f);
	const pbd_distance_p* q = COLD(f);
	static const pbd_real weights[2] = {1, -1};
	for (uint32_t k = first; k < end; ++k) {
		const pbd_vec3 d = separation(ctx->x, ctx->q, c[k].a, c[k].b);
		const int side = pbd_v3_dot(d, d) < c[k].rest * c[k].rest;
		const pbd_real ks = pbd_rows_k(q[k].compliance[0]), kc = pbd_rows_k(q[k].compliance[1]);
		/* Hard on either side counts whatever side it is on now, so that a method that cannot
		 * take it refuses it before the step rather than when it first compresses. */
		if (ks == 0 || kc == 0) pbd_rows_note_hard(rows, PBD_FAMILY_DISTANCE, f->user[k]);
		const uint32_t p[2] = {c[k].a, c[k].b};
		pbd_rows_add_norm(rows, p, weights, 2, d, c[k].rest, side ? kc : ks, ks);
	}
}

static bool check(const pbd_world* w, const pbd_family* f, uint32_t k, const char** why) {
	(void)w;
	const pbd_distance_c* c = &HOT(f)[k];
	const pbd_distance_p* p = &COLD(f)[k];
	if (c->a == c->b) return *why = "joins a particle to itself", false;
	if (!pbd_is_finite(c->rest) || c->rest < 0) return *why = "has an invalid rest length", false;
	if (!(p->stiffness[0] >= 0 && p->stiffness[0] <= 1 && p->stiffness[1] >= 0 && p->stiffness[1] <= 1) ||
	    !(p->compliance[0] >= 0 && p->compliance[1] >= 0) || !pbd_is_finite(p->compliance[0]) ||
	    !pbd_is_finite(p->compliance[1]))
		return *why = "has an invalid material", false;
	if (p->kind >= PBD_EDGE_KIND_COUNT || (p->flags & ~DIST_FROM_COMPLIANCE) != 0)
		return *why = "has an invalid edge kind or flags", false;
	return true;
}

const pbd_family_ops pbd_family_distance_ops = {
    .name = "distance",
    .hot_size = sizeof(pbd_distance_c),
    .cold_size = sizeof(pbd_distance_p),
    .lambdas = 1,
#ifdef PBD_HAVE_AVX2
    .lanes_size = PBD_DISTANCE_LANES_SIZE,
#ifndef NDEBUG
    .lanes_agree = lanes_agree,
#endif
#endif
    .layout = layout,
    .particles = particles,
    .refresh = refresh,
    .project = project,
    .jacobi = jacobi,
#ifdef PBD_HAVE_AVX2
    .project_lanes = pbd_distance_project_avx2,
    .jacobi_lanes = pbd_distance_jacobi_avx2,
#endif
    .stats = stats,
    .max_strain = max_strain,
    .strain_within = strain_within,
    .check = check,
    .linearize = linearize,
    .row_count = 1,
    .row_entries = 2,
};
