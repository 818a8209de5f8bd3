/* Triangle strain constraints: a continuum membrane per triangle (strain based dynamics, Müller et al. 2014), the
 * alternative to edge springs. Three scalar constraints per triangle on the deformation gradient F = Ds Dm^-1 (3x2)
 * in a material frame (u, v) of the rest triangle: the stretches |f_u| - 1 and |f_v| - 1 and the shear angle
 * asin(f_u.f_v / (|f_u| |f_v|)), each with its own multiplier, projected in turn (docs/constraints.md). */
#include <string.h>

#include "constraints/triangle.h"
#include "mesh/mesh.h"
#include "constraints/rows.h"
#include "constraints/lanes.h"
#include "constraints/strain.h"

/* Cold data: the parameters as given. */
typedef struct pbd_triangle_p {
	pbd_vec3 axis;
	pbd_real area;          /* rest area, m^2 */
	pbd_real stiffness[2];  /* stretch, shear */
	pbd_real compliance[2]; /* stretch, shear, per unit area (m/N) */
} pbd_triangle_p;

_Static_assert(sizeof(pbd_triangle_p) == sizeof(pbd_vec3) + 5 * sizeof(pbd_real), "padding in pbd_triangle_p");

#define FAM(w)  (&(w)->fam[PBD_FAMILY_TRIANGLE])
#define HOT(f)  ((pbd_triangle_c*)(f)->hot)
#define COLD(f) ((pbd_triangle_p*)(f)->cold)

/* Largest entry of Dm^-1 accepted (1/m). With |grad| <= 4 max|Dm^-1| / 0.01 under the guards of strain.h, the sum
 * w |grad|^2 over three particles stays below the scalar's range for every inverse mass up to PBD_INV_MASS_MAX:
 * 1.8e7 in float (rest edges down to about 1e-7 m). */
#define DM_INV_MAX (sqrt((double)PBD_REAL_MAX) * 1e-12)

pbd_triangle_strain_def pbd_triangle_strain_def_default(void) {
	pbd_triangle_strain_def d;
	memset(&d, 0, sizeof d);
	d.stretch_stiffness = 1;
	d.shear_stiffness = 1;
	return d;
}

/* The rest frame of a triangle, in double from the full positions: Dm^-1 and the area. Returns false when the
 * triangle has no usable area (flat, collapsed, or so small that Dm^-1 leaves the scalar's safe range). */
static bool rest_frame(const pbd_world* w, uint32_t a, uint32_t b, uint32_t c, pbd_vec3 axis, double dm[4],
                       double* area) {
	const pbd_vec3 *x = w->x, *lo = w->x_lo;
	double e1[3], e2[3];
	const pbd_real* pa = &x[a].x;
	const pbd_real* pb = &x[b].x;
	const pbd_real* pc = &x[c].x;
	const pbd_real* la = &lo[a].x;
	const pbd_real* lb = &lo[b].x;
	const pbd_real* lc = &lo[c].x;
	for (int k = 0; k < 3; ++k) {
		e1[k] = ((double)pb[k] - (double)pa[k]) + ((double)lb[k] - (double)la[k]);
		e2[k] = ((double)pc[k] - (double)pa[k]) + ((double)lc[k] - (double)la[k]);
	}
	const double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
	const double nn = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
	if (!(nn > 0) || !isfinite(nn)) return false;
	const double nh[3] = {n[0] / nn, n[1] / nn, n[2] / nn};
	/* u: the axis projected into the plane, or the first edge when there is no axis or it is normal to the plane. */
	double u[3] = {e1[0], e1[1], e1[2]};
	const double ax[3] = {(double)axis.x, (double)axis.y, (double)axis.z};
	const double al = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
	if (al > 0) {
		const double an = ax[0] * nh[0] + ax[1] * nh[1] + ax[2] * nh[2];
		const double p[3] = {ax[0] - an * nh[0], ax[1] - an * nh[1], ax[2] - an * nh[2]};
		if (sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) > 1e-6 * al) memcpy(u, p, sizeof u);
	}
	const double ul = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
	for (int k = 0; k < 3; ++k) u[k] /= ul;
	const double v[3] = {nh[1] * u[2] - nh[2] * u[1], nh[2] * u[0] - nh[0] * u[2], nh[0] * u[1] - nh[1] * u[0]};
	const double m00 = u[0] * e1[0] + u[1] * e1[1] + u[2] * e1[2], m01 = u[0] * e2[0] + u[1] * e2[1] + u[2] * e2[2];
	const double m10 = v[0] * e1[0] + v[1] * e1[1] + v[2] * e1[2], m11 = v[0] * e2[0] + v[1] * e2[1] + v[2] * e2[2];
	const double det = m00 * m11 - m01 * m10; /* = |e1 x e2| = 2 A, the frame being right-handed about n */
	if (!(det > 0)) return false;
	dm[0] = m11 / det;
	dm[1] = -m01 / det;
	dm[2] = -m10 / det;
	dm[3] = m00 / det;
	for (int k = 0; k < 4; ++k)
		if (!(fabs(dm[k]) <= DM_INV_MAX)) return false;
	*area = 0.5 * nn;
	return *area <= (double)PBD_REAL_MAX && (pbd_real)*area > 0;
}

static bool material_ok(pbd_real k0, pbd_real k1, pbd_real a0, pbd_real a1) {
	return k0 >= 0 && k0 <= 1 && k1 >= 0 && k1 <= 1 && a0 >= 0 && a1 >= 0 && pbd_is_finite(a0) && pbd_is_finite(a1);
}

static pbd_status validate(pbd_world* w, const char* fn, uint32_t k, const pbd_triangle_strain_def* d) {
	const uint32_t idx[3] = {d->a, d->b, d->c};
	for (int j = 0; j < 3; ++j)
		if (idx[j] >= w->np)
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: constraint %u: particle index %u out of range (%u particles)",
			                fn, k, idx[j], w->np);
	if (d->a == d->b || d->b == d->c || d->a == d->c)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: constraint %u repeats a particle (%u, %u, %u)", fn, k, d->a,
		                d->b, d->c);
	const pbd_real vals[4] = {d->stretch_stiffness, d->shear_stiffness, d->stretch_compliance, d->shear_compliance};
	for (int j = 0; j < 4; ++j)
		if (!pbd_is_finite(vals[j]))
			return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: constraint %u: a stiffness or compliance is not finite", fn, k);
	if (!pbd_v3_is_finite(d->axis))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: constraint %u: axis is not finite", fn, k);
	if (d->stretch_stiffness < 0 || d->stretch_stiffness > 1 || d->shear_stiffness < 0 || d->shear_stiffness > 1)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: constraint %u: stiffness must be in [0, 1]", fn, k);
	if (d->stretch_compliance < 0 || d->shear_compliance < 0)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: constraint %u: compliance must be >= 0", fn, k);
	double dm[4], area;
	if (pbd_triangle_is_degenerate(w->x[d->a], w->x[d->b], w->x[d->c]) ||
	    !rest_frame(w, d->a, d->b, d->c, d->axis, dm, &area))
		return pbd_fail(w, PBD_ERR_DEGENERATE,
		                "%s: constraint %u: the rest triangle (%u, %u, %u) has no area (flat, collapsed or too small)",
		                fn, k, d->a, d->b, d->c);
	/* The constraint's own compliance alpha / A must be a number. */
	const double big =
	    (double)(d->stretch_compliance > d->shear_compliance ? d->stretch_compliance : d->shear_compliance);
	if (!(big / area <= (double)PBD_REAL_MAX))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "%s: constraint %u: compliance / rest area overflows (area %.3g m^2); use a smaller compliance",
		                fn, k, area);
	return PBD_OK;
}

static void fill(pbd_world* w, uint32_t pos, const pbd_triangle_strain_def* d) {
	pbd_family* f = FAM(w);
	double dm[4], area;
	const bool ok = rest_frame(w, d->a, d->b, d->c, d->axis, dm, &area);
	PBD_ASSERT(ok);
	(void)ok;
	pbd_triangle_c* c = &HOT(f)[pos];
	c->a = d->a;
	c->b = d->b;
	c->c = d->c;
	for (int k = 0; k < 4; ++k) c->dm[k] = (pbd_real)dm[k];
	pbd_triangle_p* p = &COLD(f)[pos];
	p->axis = d->axis;
	p->area = (pbd_real)area;
	p->stiffness[0] = d->stretch_stiffness;
	p->stiffness[1] = d->shear_stiffness;
	p->compliance[0] = d->stretch_compliance;
	p->compliance[1] = d->shear_compliance;
}

/* The def of the k-th constraint of an add call: from defs, or from the world's surface triangle tri0 + k. */
static pbd_triangle_strain_def def_at(const pbd_world* w, const pbd_triangle_strain_def* defs,
                                      const pbd_triangle_strain_def* proto, uint32_t tri0, uint32_t k) {
	if (defs) return defs[k];
	pbd_triangle_strain_def d = *proto;
	const uint32_t* t = w->tri + 3 * ((size_t)tri0 + k);
	d.a = t[0];
	d.b = t[1];
	d.c = t[2];
	return d;
}

static pbd_status add(pbd_world* w, const char* fn, uint32_t count, const pbd_triangle_strain_def* defs,
                      const pbd_triangle_strain_def* proto, uint32_t tri0, uint32_t* first) {
	for (uint32_t k = 0; k < count; ++k) {
		const pbd_triangle_strain_def d = def_at(w, defs, proto, tri0, k);
		const pbd_status st = validate(w, fn, k, &d);
		if (st != PBD_OK) return st;
	}
	const uint32_t base = pbd_family_append(w, PBD_FAMILY_TRIANGLE, count);
	if (base == UINT32_MAX)
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %u constraints", fn, count);
	for (uint32_t k = 0; k < count; ++k) {
		const pbd_triangle_strain_def d = def_at(w, defs, proto, tri0, k);
		fill(w, base + k, &d);
	}
	if (first) *first = base;
	return PBD_OK;
}

pbd_status pbd_world_add_triangle_strains(pbd_world* w, uint32_t count, const pbd_triangle_strain_def* defs,
                                          uint32_t* first) {
	const char* fn = "pbd_world_add_triangle_strains";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	if (count == 0) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: count is 0", fn);
	if (!defs) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: defs is NULL", fn);
	return add(w, fn, count, defs, NULL, 0, first);
}

pbd_status pbd_world_add_surface_strains(pbd_world* w, uint32_t first_triangle, uint32_t count,
                                         const pbd_triangle_strain_def* proto, uint32_t* first) {
	const char* fn = "pbd_world_add_surface_strains";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	if (count == 0) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: count is 0", fn);
	if (!proto) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: proto is NULL", fn);
	if (first_triangle > w->nt || count > w->nt - first_triangle)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: triangles [%u, %u) exceed the %u surface triangles", fn,
		                first_triangle, first_triangle + count, w->nt);
	return add(w, fn, count, NULL, proto, first_triangle, first);
}

pbd_status pbd_world_set_triangle_strain_material(pbd_world* w, uint32_t first, uint32_t count,
                                                  const pbd_triangle_strain_material* m) {
	const char* fn = "pbd_world_set_triangle_strain_material";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_family* f = FAM(w);
	if (!m) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: material is NULL", fn);
	{
		const pbd_status range = pbd_family_check_range(w, fn, f, first, count);
		if (range != PBD_OK) return range;
	}
	if (!pbd_is_finite(m->stretch_stiffness) || !pbd_is_finite(m->shear_stiffness) ||
	    !pbd_is_finite(m->stretch_compliance) || !pbd_is_finite(m->shear_compliance))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: a parameter is not finite", fn);
	if (!material_ok(m->stretch_stiffness, m->shear_stiffness, m->stretch_compliance, m->shear_compliance))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: stiffness must be in [0, 1] and compliance >= 0", fn);
	const double big =
	    (double)(m->stretch_compliance > m->shear_compliance ? m->stretch_compliance : m->shear_compliance);
	for (uint32_t u = first; u < first + count; ++u)
		if (!(big / (double)COLD(f)[f->slot[u]].area <= (double)PBD_REAL_MAX))
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: constraint %u: compliance / rest area overflows", fn, u);
	for (uint32_t u = first; u < first + count; ++u) {
		pbd_triangle_p* p = &COLD(f)[f->slot[u]];
		p->stiffness[0] = m->stretch_stiffness;
		p->stiffness[1] = m->shear_stiffness;
		p->compliance[0] = m->stretch_compliance;
		p->compliance[1] = m->shear_compliance;
	}
	pbd_family_touch(w, PBD_FAMILY_TRIANGLE);
	return PBD_OK;
}

uint32_t pbd_world_triangle_strain_count(const pbd_world* w) { return w ? FAM(w)->n : 0; }

pbd_status pbd_world_get_triangle_strain(const pbd_world* w, uint32_t index, pbd_triangle_strain_def* out,
                                         pbd_real* rest_area) {
	if (!w || !out) return PBD_ERR_INVALID_ARGUMENT;
	const pbd_family* f = FAM(w);
	if (index >= f->n)
		return pbd_fail((pbd_world*)w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_world_get_triangle_strain: constraint %u out of range (%u)", index, f->n);
	const pbd_triangle_c* c = &HOT(f)[f->slot[index]];
	const pbd_triangle_p* p = &COLD(f)[f->slot[index]];
	*out = pbd_triangle_strain_def_default();
	out->a = c->a;
	out->b = c->b;
	out->c = c->c;
	out->axis = p->axis;
	out->stretch_stiffness = p->stiffness[0];
	out->shear_stiffness = p->stiffness[1];
	out->stretch_compliance = p->compliance[0];
	out->shear_compliance = p->compliance[1];
	if (rest_area) *rest_area = p->area;
	return PBD_OK;
}

/* PBD: k' = 1 - (1 - k)^(1/n) per part (as distances do). XPBD: the energy of a part is A C^2 / (2 alpha), so the
 * constraint's compliance is alpha / A. Derived here, once per change, not in every step. */
static void refresh(pbd_family* f, const pbd_step_ctx* ctx) {
	const pbd_real inv_n = PBD_R(1.0) / (pbd_real)ctx->iterations;
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD;
	for (uint32_t k = 0; k < f->n; ++k) {
		const pbd_triangle_p* p = &COLD(f)[k];
		for (int j = 0; j < 2; ++j) {
			const pbd_real kk = p->stiffness[j];
			HOT(f)[k].s[j] = xpbd ? p->compliance[j] / p->area : pbd_stiffness_per_iteration(kk, inv_n);
		}
	}
}

static uint32_t particles(const pbd_family* f, uint32_t k, uint32_t first, uint32_t* out, uint32_t cap) {
	if (first == 0 && cap >= 3) {
		out[0] = HOT(f)[k].a;
		out[1] = HOT(f)[k].b;
		out[2] = HOT(f)[k].c;
	}
	return 3;
}

/* Gauss-Seidel: the three parts in turn, each seeing the positions the previous one left; a PBD part with
 * stiffness 0 is off and costs nothing. The same projection as pbd_strain_part followed by pbd_constraint_project
 * (the tests hold them to each other), written out because the three parts of a triangle are a chain of
 * dependent square roots and divisions: the corners' displacements and the edge vectors stay in registers from
 * part to part, the stretch's denominator is the constant sum w_i (dF/dx_i)^2 of its rest coefficients, and each
 * part divides once. */
static void project(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_vec3* restrict x = ctx->x;
	pbd_vec3* restrict q = ctx->q;
	const pbd_real* restrict iw = ctx->iw;
	const pbd_triangle_c* restrict c = HOT(f);
	pbd_real* restrict lambda = f->lambda;
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD;
	const pbd_real inv_h2 = ctx->inv_h2;
	for (uint32_t k = first; k < end; ++k) {
		const uint32_t a = c[k].a, b = c[k].b, cc = c[k].c;
		const pbd_real wa = iw[a], wb = iw[b], wc = iw[cc];
		const pbd_real* dm = c[k].dm;
		pbd_real* lam = &lambda[3 * (size_t)k];
		pbd_vec3 qa = q[a], qb = q[b], qc = q[cc];
		const pbd_vec3 xa = x[a];
		pbd_vec3 e1 = pbd_v3_add(pbd_v3_sub(x[b], xa), pbd_v3_sub(qb, qa));
		pbd_vec3 e2 = pbd_v3_add(pbd_v3_sub(x[cc], xa), pbd_v3_sub(qc, qa));
		const pbd_real ss = c[k].s[0], sh = c[k].s[1];
		if (xpbd || ss != 0) {
			for (int j = 0; j < 2; ++j) {
				const pbd_real cb = dm[j], ccf = dm[2 + j], ca = -(cb + ccf);
				const pbd_vec3 fv = pbd_strain_column(dm, e1, e2, j);
				const pbd_real l2 = pbd_v3_dot(fv, fv);
				if (!(l2 > PBD_STRAIN_STRETCH_MIN2)) continue;
				const pbd_real len = PBD_SQRT(l2), C = len - 1;
				const pbd_real W = wa * ca * ca + wb * cb * cb + wc * ccf * ccf;
				/* t = dlambda / |f|: moving along f/|f| by dlambda is moving along f by t */
				pbd_real t;
				if (xpbd) {
					const pbd_real at = ss * inv_h2, den = W + at;
					if (!(den > 0)) continue;
					t = (-C - at * lam[j]) / (den * len);
					lam[j] += t * len;
				} else {
					if (!(W > 0)) continue;
					t = -ss * C / (W * len);
				}
				const pbd_vec3 da = pbd_v3_scale(fv, wa * ca * t), db = pbd_v3_scale(fv, wb * cb * t),
				               dc = pbd_v3_scale(fv, wc * ccf * t);
				qa = pbd_v3_add(qa, da);
				qb = pbd_v3_add(qb, db);
				qc = pbd_v3_add(qc, dc);
				e1 = pbd_v3_add(e1, pbd_v3_sub(db, da));
				e2 = pbd_v3_add(e2, pbd_v3_sub(dc, da));
			}
		}
		if (xpbd || sh != 0) {
			pbd_real C = 0;
			pbd_vec3 g[3];
			if (pbd_strain_part(dm, e1, e2, 2, &C, g)) {
				const pbd_real W =
				    wa * pbd_v3_dot(g[0], g[0]) + wb * pbd_v3_dot(g[1], g[1]) + wc * pbd_v3_dot(g[2], g[2]);
				pbd_real dl = 0;
				bool move = true;
				if (xpbd) {
					const pbd_real at = sh * inv_h2, den = W + at;
					move = den > 0;
					if (move) {
						dl = (-C - at * lam[2]) / den;
						lam[2] += dl;
					}
				} else {
					move = W > 0;
					if (move) dl = -sh * C / W;
				}
				if (move) {
					qa = pbd_v3_add(qa, pbd_v3_scale(g[0], wa * dl));
					qb = pbd_v3_add(qb, pbd_v3_scale(g[1], wb * dl));
					qc = pbd_v3_add(qc, pbd_v3_scale(g[2], wc * dl));
				}
			}
		}
		if (wa > 0) q[a] = qa;
		if (wb > 0) q[b] = qb;
		if (wc > 0) q[cc] = qc;
	}
}

/* Jacobi: the three parts from the iteration's start, summed into dx with the mass-weighted factor. */
static void jacobi(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_triangle_c* restrict c = HOT(f);
	pbd_real* restrict lambda = f->lambda;
	const bool pbd = ctx->formulation == PBD_FORMULATION_PBD;
	for (uint32_t k = first; k < end; ++k) {
		const uint32_t p[3] = {c[k].a, c[k].b, c[k].c};
		const pbd_vec3 e1 = pbd_rel(ctx, p[1], p[0]), e2 = pbd_rel(ctx, p[2], p[0]);
		for (int j = 0; j < 3; ++j) {
			const pbd_real s = c[k].s[j >> 1];
			if (pbd && s == 0) continue;
			pbd_real C;
			pbd_vec3 g[3];
			if (pbd_strain_part(c[k].dm, e1, e2, j, &C, g))
				pbd_constraint_jacobi(ctx, p, 3, C, g, s, &lambda[3 * (size_t)k + (size_t)j]);
		}
	}
}

/* The three parts as springs of constant A / alpha (their energy A C^2 / (2 alpha)). A stretch |f| - 1 is a norm of a
 * column of F, a combination of the corners (pbd_strain_column): a norm row at rest 1, with the transverse stiffness
 * of a stretched spring. The shear is a general row on pbd_strain_part's gradients, Gauss-Newton only; one without a
 * direction (a collapsed triangle) keeps its row with C = 0 and no gradient. */
static void linearize(const pbd_step_ctx* ctx, const pbd_family* f, uint32_t first, uint32_t end, pbd_rows* rows) {
	const pbd_triangle_c* c = HOT(f);
	for (uint32_t k = first; k < end; ++k) {
		const pbd_triangle_p* p = &COLD(f)[k];
		const pbd_real ks = pbd_rows_k(p->compliance[0] / p->area), kh = pbd_rows_k(p->compliance[1] / p->area);
		if (ks == 0 || kh == 0) pbd_rows_note_hard(rows, PBD_FAMILY_TRIANGLE, f->user[k]);
		const uint32_t pp[3] = {c[k].a, c[k].b, c[k].c};
		const pbd_real* dm = c[k].dm;
		const pbd_vec3 e1 = pbd_rel(ctx, pp[1], pp[0]), e2 = pbd_rel(ctx, pp[2], pp[0]);
		for (int j = 0; j < 2; ++j) {
			const pbd_real a[3] = {-(dm[j] + dm[2 + j]), dm[j], dm[2 + j]};
			pbd_rows_add_norm(rows, pp, a, 3, pbd_strain_column(dm, e1, e2, j), 1, ks, ks);
		}
		pbd_real C;
		pbd_vec3 g[3];
		if (!pbd_strain_part(dm, e1, e2, 2, &C, g)) {
			C = 0;
			g[0] = g[1] = g[2] = pbd_v3(0, 0, 0);
		}
		pbd_rows_add_general(rows, PBD_FAMILY_TRIANGLE, pp, g, 3, C, kh);
	}
}

/* The three constraint values in double from the full positions x + x_lo. A collapsed axis has stretch -1 and
 * no shear; parallel axes have the shear +-pi/2. */
static void values(const pbd_world* w, const pbd_triangle_c* c, double C[3]) {
	const uint32_t a = c->a, b = c->b, cc = c->c;
	const pbd_real* pa = &w->x[a].x;
	const pbd_real* pb = &w->x[b].x;
	const pbd_real* pc = &w->x[cc].x;
	const pbd_real* la = &w->x_lo[a].x;
	const pbd_real* lb = &w->x_lo[b].x;
	const pbd_real* lc = &w->x_lo[cc].x;
	double fu[3], fv[3];
	for (int k = 0; k < 3; ++k) {
		const double e1 = ((double)pb[k] - (double)pa[k]) + ((double)lb[k] - (double)la[k]);
		const double e2 = ((double)pc[k] - (double)pa[k]) + ((double)lc[k] - (double)la[k]);
		fu[k] = e1 * (double)c->dm[0] + e2 * (double)c->dm[2];
		fv[k] = e1 * (double)c->dm[1] + e2 * (double)c->dm[3];
	}
	const double lu = sqrt(fu[0] * fu[0] + fu[1] * fu[1] + fu[2] * fu[2]);
	const double lv = sqrt(fv[0] * fv[0] + fv[1] * fv[1] + fv[2] * fv[2]);
	C[0] = lu - 1;
	C[1] = lv - 1;
	C[2] = 0;
	if (lu > 0 && lv > 0) {
		double cs = (fu[0] * fv[0] + fu[1] * fv[1] + fu[2] * fv[2]) / (lu * lv);
		cs = cs > 1 ? 1 : cs < -1 ? -1 : cs;
		C[2] = asin(cs);
	}
}

/* Violation and strain: the largest of |stretch u|, |stretch v| and |shear angle| (rad), all dimensionless.
 * Energy: A C^2 / (2 alpha) per part for XPBD; none for ideal parts; undefined for a PBD stiffness in (0, 1). */
static void stats(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end, pbd_family_sums* out) {
	const bool xpbd = pbd_energy_from_compliance(w);
	out->energy_defined = true;
	for (uint32_t k = first; k < end; ++k) {
		const pbd_triangle_p* p = &COLD(f)[k];
		double C[3];
		values(w, &HOT(f)[k], C);
		double m = 0;
		for (int j = 0; j < 3; ++j) {
			const double a = fabs(C[j]);
			m = pbd_max_sticky(m, a);
			if (xpbd) {
				const double alpha = (double)p->compliance[j >> 1];
				if (alpha > 0) out->energy += 0.5 * C[j] * C[j] * (double)p->area / alpha;
			}
		}
		for (int j = 0; j < 2; ++j) pbd_sums_stiffness(out, xpbd, p->stiffness[j]);
		out->max_violation = pbd_max_sticky(out->max_violation, m);
		pbd_sums_strain(out, m);
	}
}

static double max_strain(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end) {
	double m = 0;
	for (uint32_t k = first; k < end; ++k) {
		double C[3];
		values(w, &HOT(f)[k], C);
		for (int j = 0; j < 3; ++j) m = pbd_max_sticky(m, fabs(C[j]));
	}
	return m;
}

static bool check(const pbd_world* w, const pbd_family* f, uint32_t k, const char** why) {
	(void)w;
	const pbd_triangle_c* c = &HOT(f)[k];
	const pbd_triangle_p* p = &COLD(f)[k];
	if (c->a == c->b || c->b == c->c || c->a == c->c) return *why = "repeats a particle", false;
	if (c->spare != 0) return *why = "has an invalid record", false;
	for (int j = 0; j < 4; ++j)
		if (!pbd_is_finite(c->dm[j]) || !(PBD_FABS(c->dm[j]) <= (pbd_real)DM_INV_MAX))
			return *why = "has an invalid rest shape", false;
	if (!(c->dm[0] * c->dm[3] - c->dm[1] * c->dm[2] > 0)) return *why = "has an invalid rest shape", false;
	if (!pbd_is_finite(p->area) || !(p->area > 0)) return *why = "has an invalid rest area", false;
	if (!pbd_v3_is_finite(p->axis)) return *why = "has an invalid axis", false;
	if (!material_ok(p->stiffness[0], p->stiffness[1], p->compliance[0], p->compliance[1]) ||
	    !((double)p->compliance[0] / (double)p->area <= (double)PBD_REAL_MAX) ||
	    !((double)p->compliance[1] / (double)p->area <= (double)PBD_REAL_MAX))
		return *why = "has an invalid material", false;
	return true;
}

const pbd_family_ops pbd_family_triangle_ops = {
    .name = "triangle",
    .hot_size = sizeof(pbd_triangle_c),
    .cold_size = sizeof(pbd_triangle_p),
    .lambdas = 3,
    .particles = particles,
    .refresh = refresh,
    .project = project,
    .jacobi = jacobi,
#ifdef PBD_HAVE_AVX2
    .project_lanes = pbd_triangle_project_avx2,
    .jacobi_lanes = pbd_triangle_jacobi_avx2,
#endif
    .stats = stats,
    .max_strain = max_strain,
    .check = check,
    .linearize = linearize,
    .row_count = 3,
    .row_entries = 9,
};
