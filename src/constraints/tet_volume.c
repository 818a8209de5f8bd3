/* Tetrahedral volume constraints C = V - V0, V = (x1 - x0) x (x2 - x0) . (x3 - x0) / 6: storage,
 * projection with PBD stiffness (Müller et al. 2007) or XPBD compliance (Macklin et al. 2016),
 * and the volume strain and elastic-energy diagnostics (docs/constraints.md). */
#include <string.h>

#include "constraints/tet_volume.h"
#include "constraints/rows.h"
#include "mesh/tet.h"
#include "model/world.h"
#ifdef PBD_HAVE_AVX2
#include "constraints/lanes.h"
#endif

/* Cold data: the material as given. */
typedef struct pbd_tet_volume_p {
	pbd_real stiffness;
	pbd_real compliance;
} pbd_tet_volume_p;

_Static_assert(sizeof(pbd_tet_volume_p) == 2 * sizeof(pbd_real), "padding in pbd_tet_volume_p");

#define FAM(w)  (&(w)->fam[PBD_FAMILY_TET_VOLUME])
#define HOT(f)  ((pbd_tet_volume_c*)(f)->hot)
#define COLD(f) ((pbd_tet_volume_p*)(f)->cold)

static const pbd_softness_fields softness =
    PBD_SOFTNESS_FIELDS(PBD_FAMILY_TET_VOLUME, pbd_tet_volume_c, pbd_tet_volume_p, 1, "constraint");

pbd_tet_volume_def pbd_tet_volume_def_default(void) {
	pbd_tet_volume_def d;
	memset(&d, 0, sizeof d);
	d.rest_volume = -1;
	d.stiffness = 1;
	d.compliance = 0;
	return d;
}

/* The gradient threshold of a rest volume: the gradients are a third of the face areas, about
 * (6 V0)^(2/3) / 6 at rest. */
static pbd_real grad2_min(double rest) {
	const double g = PBD_TET_COLLAPSE_REL * pow(6.0 * rest, 2.0 / 3.0) / 6.0;
	return (pbd_real)fmax(g * g, PBD_TET_GRAD2_FLOOR);
}

/* Checks def k and gives its rest volume. */
static pbd_status validate(pbd_world* w, uint32_t k, const pbd_tet_volume_def* d, double* rest) {
	const char* fn = "pbd_world_add_tet_volumes";
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
	pbd_status st = pbd_check_softness(w, fn, softness.item, k, d->stiffness, d->compliance);
	if (st != PBD_OK) return st;
	if (!pbd_is_finite(d->rest_volume))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: constraint %u: rest_volume is not finite", fn, k);
	if (d->rest_volume > 0) {
		/* Like a measured one: large enough for the projection's quotients, small enough for its
		 * products (tet.h). */
		const double v = (double)d->rest_volume;
		if (ilogb(v) < ilogb((double)PBD_REAL_MIN_NORMAL) + 24 || ilogb(v) >= ilogb((double)PBD_REAL_MAX) - 8)
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: constraint %u: rest_volume %.9g m^3 is out of range", fn, k,
			                v);
		*rest = v;
		return PBD_OK;
	}
	if (d->rest_volume == 0)
		return pbd_fail(w, PBD_ERR_DEGENERATE, "%s: constraint %u: rest_volume is 0 (negative measures it)", fn, k);
	const pbd_vec3* x = w->x;
	switch (pbd_tet_classify(x[d->p[0]], x[d->p[1]], x[d->p[2]], x[d->p[3]], rest)) {
	case PBD_TET_POSITIVE:
		return PBD_OK;
	case PBD_TET_INVERTED:
		return pbd_fail(w, PBD_ERR_DEGENERATE,
		                "%s: constraint %u: tetrahedron (%u, %u, %u, %u) is inverted (negative volume); list two of "
		                "its particles the other way round",
		                fn, k, d->p[0], d->p[1], d->p[2], d->p[3]);
	case PBD_TET_TOO_LARGE:
		return pbd_fail(w, PBD_ERR_NOT_FINITE,
		                "%s: constraint %u: tetrahedron (%u, %u, %u, %u) is too large: its volume overflows the scalar",
		                fn, k, d->p[0], d->p[1], d->p[2], d->p[3]);
	default:
		return pbd_fail(w, PBD_ERR_DEGENERATE,
		                "%s: constraint %u: tetrahedron (%u, %u, %u, %u) is degenerate: its volume is about 0", fn, k,
		                d->p[0], d->p[1], d->p[2], d->p[3]);
	}
}

pbd_status pbd_world_add_tet_volumes(pbd_world* w, uint32_t count, const pbd_tet_volume_def* defs, uint32_t* first) {
	const char* fn = "pbd_world_add_tet_volumes";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	if (count == 0) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: count is 0", fn);
	if (!defs) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: defs is NULL", fn);
	for (uint32_t k = 0; k < count; ++k) {
		double rest;
		const pbd_status st = validate(w, k, &defs[k], &rest);
		if (st != PBD_OK) return st;
	}
	const uint32_t base = pbd_family_append(w, PBD_FAMILY_TET_VOLUME, count);
	if (base == UINT32_MAX)
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %u constraints", fn, count);
	pbd_family* f = FAM(w);
	for (uint32_t k = 0; k < count; ++k) {
		const pbd_tet_volume_def* d = &defs[k];
		double rest = 0;
		validate(w, k, d, &rest); /* passed above; gives the rest volume again */
		pbd_tet_volume_c* c = &HOT(f)[base + k];
		memcpy(c->p, d->p, sizeof c->p);
		c->rest = (pbd_real)rest;
		c->grad2_min = grad2_min(rest);
		COLD(f)[base + k].stiffness = d->stiffness;
		COLD(f)[base + k].compliance = d->compliance;
	}
	if (first) *first = base;
	return PBD_OK;
}

pbd_status pbd_world_set_tet_volume_material(pbd_world* w, uint32_t first, uint32_t count, pbd_real stiffness,
                                             pbd_real compliance) {
	return pbd_family_set_softness(w, "pbd_world_set_tet_volume_material", &softness, first, count, stiffness,
	                               compliance);
}

uint32_t pbd_world_tet_volume_count(const pbd_world* w) { return w ? FAM(w)->n : 0; }

pbd_status pbd_world_get_tet_volume(const pbd_world* w, uint32_t index, pbd_tet_volume_def* out) {
	if (!w || !out) return PBD_ERR_INVALID_ARGUMENT;
	const pbd_family* f = FAM(w);
	if (index >= f->n)
		return pbd_fail((pbd_world*)w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_world_get_tet_volume: constraint %u out of range (%u)", index, f->n);
	const pbd_tet_volume_c* c = &HOT(f)[f->slot[index]];
	memcpy(out->p, c->p, sizeof out->p);
	out->rest_volume = c->rest;
	out->stiffness = COLD(f)[f->slot[index]].stiffness;
	out->compliance = COLD(f)[f->slot[index]].compliance;
	return PBD_OK;
}

/* PBD: k' = 1 - (1 - k)^(1/n) (Müller et al. 2007, section 3.3), as distances do. */
static void refresh(pbd_family* f, const pbd_step_ctx* ctx) { pbd_family_refresh_softness(f, &softness, ctx); }

static uint32_t particles(const pbd_family* f, uint32_t k, uint32_t first, uint32_t* out, uint32_t cap) {
	if (first == 0 && cap >= 4) memcpy(out, HOT(f)[k].p, 4 * sizeof *out);
	return 4;
}

/* C and its gradients at the current positions, relative to x0 (exact for a small tetrahedron
 * far from the origin). With e_i = x_i - x0: V = e1 . (e2 x e3) / 6 and dV/dx1 = e2 x e3 / 6,
 * dV/dx2 = e3 x e1 / 6, dV/dx3 = e1 x e2 / 6, dV/dx0 = -(their sum). False when the free
 * particles' gradients vanish (a tetrahedron collapsed to a line or a point): nothing to project
 * along, though C and g are written all the same (the force model keeps the row). */
static inline bool evaluate(const pbd_step_ctx* ctx, const pbd_tet_volume_c* c, pbd_real* C, pbd_vec3 g[4]) {
	const uint32_t* p = c->p;
	const pbd_vec3 e1 = pbd_rel(ctx, p[1], p[0]), e2 = pbd_rel(ctx, p[2], p[0]), e3 = pbd_rel(ctx, p[3], p[0]);
	const pbd_real sixth = PBD_R(1.0) / 6;
	g[1] = pbd_v3_scale(pbd_v3_cross(e2, e3), sixth);
	g[2] = pbd_v3_scale(pbd_v3_cross(e3, e1), sixth);
	g[3] = pbd_v3_scale(pbd_v3_cross(e1, e2), sixth);
	g[0] = pbd_v3_scale(pbd_v3_add(pbd_v3_add(g[1], g[2]), g[3]), -1);
	*C = pbd_v3_dot(e1, g[1]) - c->rest;
	pbd_real free2 = 0;
	for (int i = 0; i < 4; ++i)
		if (ctx->iw[p[i]] > 0) free2 += pbd_v3_dot(g[i], g[i]);
	return free2 > c->grad2_min;
}

static void project(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_tet_volume_c* c = HOT(f);
	for (uint32_t k = first; k < end; ++k) {
		pbd_vec3 g[4];
		pbd_real C;
		if (evaluate(ctx, &c[k], &C, g)) pbd_constraint_project(ctx, c[k].p, 4, C, g, c[k].s, &f->lambda[k]);
	}
}

static void jacobi(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_tet_volume_c* c = HOT(f);
	for (uint32_t k = first; k < end; ++k) {
		pbd_vec3 g[4];
		pbd_real C;
		if (evaluate(ctx, &c[k], &C, g)) pbd_constraint_jacobi(ctx, c[k].p, 4, C, g, c[k].s, &f->lambda[k]);
	}
}

/* A spring C = V - V0 of constant 1 / compliance along the projection's gradients, Gauss-Newton
 * stiffness only. A collapsed tetrahedron keeps its row, with the gradients it has. */
static void linearize(const pbd_step_ctx* ctx, const pbd_family* f, uint32_t first, uint32_t end, pbd_rows* rows) {
	const pbd_tet_volume_c* c = HOT(f);
	for (uint32_t k = first; k < end; ++k) {
		const pbd_real kk = pbd_rows_k(COLD(f)[k].compliance);
		if (kk == 0) pbd_rows_note_hard(rows, PBD_FAMILY_TET_VOLUME, f->user[k]);
		pbd_vec3 g[4];
		pbd_real C;
		(void)evaluate(ctx, &c[k], &C, g);
		pbd_rows_add_general(rows, PBD_FAMILY_TET_VOLUME, c[k].p, g, 4, C, kk);
	}
}

/* The volume in double from the full positions x + x_lo, relative to x0. */
static double current_volume(const pbd_world* w, const pbd_tet_volume_c* c) {
	double e[3][3];
	const uint32_t o = c->p[0];
	for (int i = 0; i < 3; ++i) {
		const uint32_t j = c->p[i + 1];
		e[i][0] = ((double)w->x[j].x - (double)w->x[o].x) + ((double)w->x_lo[j].x - (double)w->x_lo[o].x);
		e[i][1] = ((double)w->x[j].y - (double)w->x[o].y) + ((double)w->x_lo[j].y - (double)w->x_lo[o].y);
		e[i][2] = ((double)w->x[j].z - (double)w->x[o].z) + ((double)w->x_lo[j].z - (double)w->x_lo[o].z);
	}
	return (e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) + e[0][1] * (e[1][2] * e[2][0] - e[1][0] * e[2][2]) +
	        e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0])) /
	       6.0;
}

/* Violation |C| in m^3; strain |V - V0| / V0, the volume ratio error; energy C^2 / (2 alpha) for
 * a soft XPBD constraint, none for an ideal one, undefined for a PBD stiffness in (0, 1). */
static void stats(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end, pbd_family_sums* out) {
	const bool xpbd = pbd_energy_from_compliance(w);
	out->energy_defined = true;
	for (uint32_t k = first; k < end; ++k) {
		const pbd_tet_volume_c* c = &HOT(f)[k];
		const pbd_tet_volume_p* p = &COLD(f)[k];
		const double C = current_volume(w, c) - (double)c->rest;
		const double ac = fabs(C);
		out->max_violation = pbd_max_sticky(out->max_violation, ac);
		pbd_sums_strain(out, ac / (double)c->rest);
		pbd_sums_energy(out, xpbd, C, p->compliance);
		pbd_sums_stiffness(out, xpbd, p->stiffness);
	}
}

static double max_strain(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end) {
	double m = 0;
	for (uint32_t k = first; k < end; ++k) {
		const pbd_tet_volume_c* c = &HOT(f)[k];
		const double strain = fabs(current_volume(w, c) - (double)c->rest) / (double)c->rest;
		m = pbd_max_sticky(m, strain);
	}
	return m;
}

static bool check(const pbd_world* w, const pbd_family* f, uint32_t k, const char** why) {
	(void)w;
	const pbd_tet_volume_c* c = &HOT(f)[k];
	const pbd_tet_volume_p* p = &COLD(f)[k];
	for (int i = 0; i < 4; ++i)
		for (int j = i + 1; j < 4; ++j)
			if (c->p[i] == c->p[j]) return *why = "repeats a particle", false;
	if (!(c->rest > 0) || !pbd_is_finite(c->rest) || c->rest < PBD_REAL_MIN_NORMAL)
		return *why = "has an invalid rest volume", false;
	if (!(c->grad2_min > 0) || !pbd_is_finite(c->grad2_min)) return *why = "has an invalid collapse threshold", false;
	if (!pbd_softness_ok(p->stiffness, p->compliance)) return *why = "has an invalid material", false;
	return true;
}

const pbd_family_ops pbd_family_tet_volume_ops = {
    .name = "tet_volume",
    .hot_size = sizeof(pbd_tet_volume_c),
    .cold_size = sizeof(pbd_tet_volume_p),
    .lambdas = 1,
    .particles = particles,
    .refresh = refresh,
    .project = project,
    .jacobi = jacobi,
#ifdef PBD_HAVE_AVX2
    .project_lanes = pbd_tet_volume_project_avx2,
    .jacobi_lanes = pbd_tet_volume_jacobi_avx2,
#endif
    .stats = stats,
    .max_strain = max_strain,
    .check = check,
    .linearize = linearize,
    .row_count = 1,
    .row_entries = 4,
};
