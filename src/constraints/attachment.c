/* Attachments C = |x - p| - rest: a particle held to a point p, with PBD stiffness or XPBD
 * compliance. A world point moves only by pbd_world_set_attachment_target, linearly through the
 * substeps of the next step, as a pinned particle's target does (particles.c). A point of a rigid
 * body moves with the body, and the constraint has two nodes (node.h): the particle and the
 * body, which takes its share of the correction by its generalised inverse mass at the point. */
#include <string.h>

#include "constraints/attachment.h"
#include "constraints/rows.h"
#include "model/node.h"
#include "model/world.h"
#ifdef PBD_HAVE_AVX2
#include "constraints/lanes.h"
#endif

typedef struct pbd_attachment_p {
	pbd_real stiffness, compliance;
} pbd_attachment_p;

_Static_assert(sizeof(pbd_attachment_p) == 2 * sizeof(pbd_real), "padding in attachment material");

#define FAM(w)  (&(w)->fam[PBD_FAMILY_ATTACHMENT])
#define HOT(f)  ((pbd_attachment_c*)(f)->hot)
#define COLD(f) ((pbd_attachment_p*)(f)->cold)

static const pbd_softness_fields softness =
    PBD_SOFTNESS_FIELDS(PBD_FAMILY_ATTACHMENT, pbd_attachment_c, pbd_attachment_p, 1, "constraint");

pbd_attachment_def pbd_attachment_def_default(void) {
	pbd_attachment_def d;
	memset(&d, 0, sizeof d);
	d.stiffness = 1;
	return d;
}

static pbd_status validate(pbd_world* w, uint32_t k, const pbd_attachment_def* d) {
	const char* fn = "pbd_world_add_attachments";
	if (d->particle >= w->np)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: constraint %u: particle index %u out of range (%u particles)", fn,
		                k, d->particle, w->np);
	if (!pbd_v3_is_finite(d->target))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: constraint %u: target is not finite", fn, k);
	if (d->body.index1 != 0 && !pbd_body_is_valid(w, d->body))
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: constraint %u: body %u is not a live body of this world", fn,
		                k, d->body.index1);
	if (!pbd_is_finite(d->rest)) return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: constraint %u: rest is not finite", fn, k);
	if (d->rest < 0)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: constraint %u: rest must be >= 0 (got %.9g)", fn, k,
		                (double)d->rest);
	return pbd_check_softness(w, fn, softness.item, k, d->stiffness, d->compliance);
}

pbd_status pbd_world_add_attachments(pbd_world* w, uint32_t count, const pbd_attachment_def* defs, uint32_t* first) {
	const char* fn = "pbd_world_add_attachments";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	if (count == 0) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: count is 0", fn);
	if (!defs) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: defs is NULL", fn);
	for (uint32_t k = 0; k < count; ++k) {
		const pbd_status st = validate(w, k, &defs[k]);
		if (st != PBD_OK) return st;
	}
	const uint32_t base = pbd_family_append(w, PBD_FAMILY_ATTACHMENT, count);
	if (base == UINT32_MAX)
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %u constraints", fn, count);
	pbd_family* f = FAM(w);
	for (uint32_t k = 0; k < count; ++k) {
		const pbd_attachment_def* d = &defs[k];
		pbd_attachment_c* c = &HOT(f)[base + k];
		c->i = d->particle;
		c->body = d->body.index1;
		c->rest = d->rest;
		c->from = d->target;
		c->to = d->target;
		COLD(f)[base + k].stiffness = d->stiffness;
		COLD(f)[base + k].compliance = d->compliance;
	}
	if (first) *first = base;
	return PBD_OK;
}

void pbd_attachment_release_body(pbd_world* w, uint32_t i) {
	pbd_family* f = FAM(w);
	bool any = false;
	for (uint32_t k = 0; k < f->n; ++k) {
		pbd_attachment_c* c = &HOT(f)[k];
		if (c->body != i + 1) continue;
		double p[3];
		pbd_body_point(w, i, c->to, p);
		c->from = c->to = pbd_v3((pbd_real)p[0], (pbd_real)p[1], (pbd_real)p[2]);
		c->body = 0;
		any = true;
	}
	/* one node fewer on these constraints: coloured again */
	if (any) w->partitioned = false;
}

uint32_t pbd_world_attachment_count(const pbd_world* w) { return w ? FAM(w)->n : 0; }

pbd_status pbd_world_get_attachment(const pbd_world* w, uint32_t index, pbd_attachment_def* out) {
	if (!w || !out) return PBD_ERR_INVALID_ARGUMENT;
	const pbd_family* f = FAM(w);
	if (index >= f->n)
		return pbd_fail((pbd_world*)w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_world_get_attachment: constraint %u out of range (%u)", index, f->n);
	const pbd_attachment_c* c = &HOT(f)[f->slot[index]];
	const pbd_attachment_p* p = &COLD(f)[f->slot[index]];
	out->particle = c->i;
	out->body.index1 = c->body;
	out->body.generation = c->body ? w->bodies.generation[c->body - 1] : 0;
	out->target = c->to;
	out->rest = c->rest;
	out->stiffness = p->stiffness;
	out->compliance = p->compliance;
	return PBD_OK;
}

/* Only `to` changes: `from` is where the point was when the coming step begins (the step that
 * moves it ends with from = to), so setting a target twice before a step moves it once, from
 * there to the last target. */
pbd_status pbd_world_set_attachment_target(pbd_world* w, uint32_t index, pbd_vec3 target) {
	const char* fn = "pbd_world_set_attachment_target";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_family* f = FAM(w);
	if (index >= f->n) return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: constraint %u out of range (%u)", fn, index, f->n);
	if (!pbd_v3_is_finite(target)) return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: target is not finite", fn);
	const pbd_status st = pbd_check_kinematic_move(w, fn, "target", HOT(f)[f->slot[index]].from, target);
	if (st != PBD_OK) return st;
	HOT(f)[f->slot[index]].to = target;
	w->stats_valid = false;
	return PBD_OK;
}

pbd_status pbd_world_set_attachment_material(pbd_world* w, uint32_t first, uint32_t count, pbd_real stiffness,
                                             pbd_real compliance) {
	return pbd_family_set_softness(w, "pbd_world_set_attachment_material", &softness, first, count, stiffness,
	                               compliance);
}

/* k' = 1 - (1 - k)^(1/n) for PBD (as distances do), the compliance for XPBD. */
static void refresh(pbd_family* f, const pbd_step_ctx* ctx) { pbd_family_refresh_softness(f, &softness, ctx); }

static uint32_t particles(const pbd_family* f, uint32_t k, uint32_t first, uint32_t* out, uint32_t cap) {
	const pbd_attachment_c* c = &HOT(f)[k];
	const uint32_t n = c->body ? 2 : 1;
	for (uint32_t j = first; j < n && j - first < cap; ++j) out[j - first] = j == 0 ? c->i : f->node_base + c->body - 1;
	return n;
}

/* The point of the current substep. */
static inline pbd_vec3 point(const pbd_attachment_c* c, pbd_real t) {
	return pbd_v3_add(c->from, pbd_v3_scale(pbd_v3_sub(c->to, c->from), t));
}

/* x - p + q: x - p first, exact when the particle is near its point however far both are from
 * the origin, then the small displacement (as pbd_rel forms differences of particles). */
static inline pbd_vec3 offset(const pbd_step_ctx* ctx, const pbd_attachment_c* c) {
	return pbd_v3_add(pbd_v3_sub(ctx->x[c->i], point(c, ctx->substep_fraction)), ctx->q[c->i]);
}

/* x - p for a point of a body: the particle's position less the body's centre first (exact when
 * the two are near, however far both are from the origin), then the particle's displacement, the
 * centre's remainder, the lever arm r (in *r) and what the substep's corrections moved the point
 * by. */
static inline pbd_vec3 body_offset(const pbd_step_ctx* ctx, const pbd_vec3* q, const pbd_attachment_c* c, pbd_vec3* r) {
	const pbd_bodies* b = ctx->bodies;
	const uint32_t s = c->body - 1;
	const pbd_vec3 arm = pbd_node_body_arm(b, s, point(c, ctx->substep_fraction));
	/* the arm as the substep's corrections turned it, so that the impulse acts along the line
	 * through the particle and the point, where it turns the pair without changing its angular
	 * momentum */
	*r = pbd_v3_add(arm, pbd_v3_cross(b->dtheta[s], arm));
	const pbd_vec3 body = pbd_v3_add(pbd_v3_add(b->x_lo[s], *r), b->dx[s]);
	return pbd_v3_sub(pbd_v3_add(pbd_v3_sub(ctx->x[c->i], b->x[s]), q[c->i]), body);
}

/* An attachment to a body point: the particle (w_p) and the body (w_b, node.h) share
 * dlambda = (-C - alpha~ lambda) / (w_p + w_b + alpha~) (XPBD) or -k' C / (w_p + w_b) (PBD); the
 * particle moves w_p dlambda n, the body takes -dlambda n at the point. Under Jacobi the particle's
 * share goes to dx scaled by omega / (N + alpha) as for the world points, while the body's is
 * applied at once: the constraints on one body are of different colours, so it is one writer at a
 * time and its moves are seen by the next colour, Gauss-Seidel for bodies. */
static void project_body(const pbd_step_ctx* ctx, const pbd_attachment_c* c, const pbd_vec3* q, pbd_vec3* to,
                         pbd_real* lambda, bool jacobi) {
	const uint32_t i = c->i, s = c->body - 1;
	pbd_vec3 r;
	const pbd_vec3 d = body_offset(ctx, q, c, &r);
	const pbd_real len = PBD_SQRT(pbd_v3_dot(d, d));
	if (!(len >= PBD_EPSILON_LENGTH)) return;
	const pbd_vec3 n = pbd_v3_scale(d, 1 / len);
	pbd_vec3 irn;
	const pbd_real wb = pbd_node_body_weight(ctx->bodies, s, r, n, &irn), wp = ctx->iw[i];
	if (!(wp + wb > 0)) return;
	const pbd_real fk =
	    jacobi && !ctx->jacobi_equal ? ctx->jacobi_omega / ((pbd_real)ctx->degree[i] + ctx->jacobi_alpha) : 1;
	const pbd_real C = len - c->rest;
	pbd_real dl;
	if (ctx->formulation == PBD_FORMULATION_XPBD) {
		const pbd_real at = c->s * ctx->inv_h2;
		dl = fk * ((-C - at * *lambda) / (wp + wb + at));
		*lambda += dl;
	} else {
		dl = fk * (-c->s * C / (wp + wb));
	}
	if (wp > 0) to[i] = pbd_v3_add(to[i], pbd_v3_scale(n, wp * dl));
	pbd_node_body_push(ctx->bodies, s, n, irn, -dl);
}

/* One particle, so the projection is the distance's with the other end's inverse mass 0:
 * PBD moves it by -k' C n, XPBD by w n dlambda with dlambda = (-C - alpha~ lambda) / (w + alpha~).
 * A particle on its point (|d| below PBD_EPSILON_LENGTH) has no direction: with rest 0 it is
 * satisfied, with rest > 0 it is left alone this iteration. */
void pbd_attachment_project(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	pbd_attachment_c* restrict c = HOT(f);
	pbd_attachment_settle(ctx, c, first, end);
	pbd_vec3* restrict q = ctx->q;
	const pbd_real* restrict iw = ctx->iw;
	pbd_real* restrict lambda = f->lambda;
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD;
	const pbd_real inv_h2 = ctx->inv_h2;
	for (uint32_t k = first; k < end; ++k) {
		if (c[k].body) {
			project_body(ctx, &c[k], q, q, &lambda[k], false);
			continue;
		}
		const uint32_t i = c[k].i;
		const pbd_real w = iw[i];
		if (w == 0) continue;
		const pbd_vec3 d = offset(ctx, &c[k]);
		const pbd_real len = PBD_SQRT(pbd_v3_dot(d, d));
		if (!(len >= PBD_EPSILON_LENGTH)) continue;
		const pbd_real C = len - c[k].rest;
		pbd_real s; /* the move is d * s */
		if (xpbd) {
			const pbd_real at = c[k].s * inv_h2;
			const pbd_real dl = (-C - at * lambda[k]) / (w + at);
			lambda[k] += dl;
			s = w * dl / len;
		} else {
			s = -c[k].s * C / len;
		}
		q[i] = pbd_v3_add(q[i], pbd_v3_scale(d, s));
	}
}

/* A spring of constant 1 / compliance to the point where the current substep ends. */
static void linearize(const pbd_step_ctx* ctx, const pbd_family* f, uint32_t first, uint32_t end, pbd_rows* rows) {
	const pbd_attachment_c* c = HOT(f);
	static const pbd_real one = 1;
	for (uint32_t k = first; k < end; ++k) {
		const pbd_real kk = pbd_rows_k(COLD(f)[k].compliance);
		if (kk == 0) pbd_rows_note_hard(rows, PBD_FAMILY_ATTACHMENT, f->user[k]);
		pbd_vec3 r;
		const pbd_vec3 d = c[k].body ? body_offset(ctx, ctx->q, &c[k], &r) : offset(ctx, &c[k]);
		pbd_rows_add_norm(rows, &c[k].i, &one, 1, d, c[k].rest, kk, kk);
	}
}

/* Jacobi: the same move from the iteration's start, scaled by omega / (N + alpha) (mass-weighted,
 * N the particle's constraint count) or left whole for the per-particle average (equal split,
 * where the particle's weight is 1 as in pbd_constraint_jacobi). */
void pbd_attachment_jacobi(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	pbd_attachment_c* restrict c = HOT(f);
	pbd_attachment_settle(ctx, c, first, end);
	pbd_vec3* restrict dx = ctx->dx;
	const pbd_real* restrict iw = ctx->iw;
	const uint32_t* restrict deg = ctx->degree;
	pbd_real* restrict lambda = f->lambda;
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD;
	const bool equal = ctx->jacobi_equal;
	const pbd_real alpha = ctx->jacobi_alpha, omega = ctx->jacobi_omega, inv_h2 = ctx->inv_h2;
	for (uint32_t k = first; k < end; ++k) {
		if (c[k].body) {
			project_body(ctx, &c[k], ctx->q, dx, &lambda[k], true);
			continue;
		}
		const uint32_t i = c[k].i;
		if (iw[i] == 0) continue;
		const pbd_real w = equal ? 1 : iw[i];
		const pbd_real fk = equal ? 1 : omega / ((pbd_real)deg[i] + alpha);
		const pbd_vec3 d = offset(ctx, &c[k]);
		const pbd_real len = PBD_SQRT(pbd_v3_dot(d, d));
		if (!(len >= PBD_EPSILON_LENGTH)) continue;
		const pbd_real C = len - c[k].rest;
		pbd_real s;
		if (xpbd) {
			const pbd_real at = c[k].s * inv_h2;
			const pbd_real dl = fk * ((-C - at * lambda[k]) / (w + at));
			lambda[k] += dl;
			s = w * dl / len;
		} else {
			s = fk * (-c[k].s * C / len);
		}
		dx[i] = pbd_v3_add(dx[i], pbd_v3_scale(d, s));
	}
}

/* C in double from the full position x + x_lo and the point where the step left it. */
static double violation(const pbd_world* w, const pbd_attachment_c* c) {
	const pbd_vec3 x = w->x[c->i], lo = w->x_lo[c->i];
	double p[3] = {(double)c->from.x, (double)c->from.y, (double)c->from.z};
	if (c->body) pbd_body_point(w, c->body - 1, c->from, p);
	const double dx = ((double)x.x - p[0]) + (double)lo.x;
	const double dy = ((double)x.y - p[1]) + (double)lo.y;
	const double dz = ((double)x.z - p[2]) + (double)lo.z;
	return sqrt(dx * dx + dy * dy + dz * dz) - (double)c->rest;
}

/* Violation |C| in m; strain |C| / rest where rest > 0 (an attachment at rest 0 has no length to
 * compare with, and counts in no strain); energy C^2 / (2 alpha) under XPBD, none for an ideal
 * constraint, undefined for a PBD stiffness in (0, 1). */
static void stats(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end, pbd_family_sums* out) {
	const bool xpbd = pbd_energy_from_compliance(w);
	for (uint32_t k = first; k < end; ++k) {
		const pbd_attachment_c* c = &HOT(f)[k];
		const pbd_attachment_p* p = &COLD(f)[k];
		const double C = violation(w, c), ac = C < 0 ? -C : C;
		out->max_violation = pbd_max_sticky(out->max_violation, ac);
		if (c->rest > 0) pbd_sums_strain(out, ac / (double)c->rest);
		pbd_sums_energy(out, xpbd, C, p->compliance);
		pbd_sums_stiffness(out, xpbd, p->stiffness);
	}
}

static double max_strain(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end) {
	double m = 0;
	for (uint32_t k = first; k < end; ++k) {
		const pbd_attachment_c* c = &HOT(f)[k];
		if (!(c->rest > 0)) continue;
		const double C = violation(w, c);
		const double strain = (C < 0 ? -C : C) / (double)c->rest;
		m = pbd_max_sticky(m, strain);
	}
	return m;
}

static bool check(const pbd_world* w, const pbd_family* f, uint32_t k, const char** why) {
	const pbd_attachment_c* c = &HOT(f)[k];
	const pbd_attachment_p* p = &COLD(f)[k];
	/* whether the body is live is checked with the nodes, once the bodies are loaded (snapshot.c) */
	if (c->body > UINT32_MAX - w->np) return *why = "names a body past any node", false;
	if (!pbd_is_finite(c->rest) || c->rest < 0) return *why = "has an invalid rest distance", false;
	if (!pbd_v3_is_finite(c->from) || !pbd_v3_is_finite(c->to)) return *why = "has a target that is not finite", false;
	if (!pbd_softness_ok(p->stiffness, p->compliance)) return *why = "has an invalid material", false;
	return true;
}

const pbd_family_ops pbd_family_attachment_ops = {
    .name = "attachment",
    .hot_size = sizeof(pbd_attachment_c),
    .cold_size = sizeof(pbd_attachment_p),
    .lambdas = 1,
    .bodies = true,
    .particles = particles,
    .refresh = refresh,
    .project = pbd_attachment_project,
    .jacobi = pbd_attachment_jacobi,
#ifdef PBD_HAVE_AVX2
    .project_lanes = pbd_attachment_project_avx2,
    .jacobi_lanes = pbd_attachment_jacobi_avx2,
#endif
    .stats = stats,
    .max_strain = max_strain,
    .check = check,
    .linearize = linearize,
    .row_count = 1,
    .row_entries = 1,
};
