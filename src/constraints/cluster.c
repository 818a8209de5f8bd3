/* Shape matching (Müller, Heidelberger, Teschner and Gross 2005): a cluster of particles is
 * pulled toward its rest shape, moved to the cluster's centre of mass and turned by the rotation
 * that fits the current positions best. That rotation is the rotational part of
 * A = sum_i m_i (p_i - c)(q_i - c0)^T, extracted by the iteration of Müller, Bender, Chentanez and
 * Macklin 2016 finished by Newton steps, warm-started from the cluster's quaternion of the
 * previous projection.
 *
 * As a constraint: with the goals g_i = R (q_i - c0) + c and the deviations d_i = x_i - g_i,
 *   C = sqrt(sum_i m_i |d_i|^2 / M),  M the mass of the free members,
 * the mass-weighted RMS distance of the members from the goal shape, in m. Since R and c minimise
 * sum_i m_i |d_i|^2, its gradient is dC/dx_i = m_i d_i / (M C) (the terms through R and c vanish
 * at the minimum). Projected like any scalar constraint, it moves each free member by -beta d_i
 * with one beta for the whole cluster: for PBD stiffness k' beta is k' (Müller's blend toward the
 * goals), for XPBD it follows from the compliance. One beta for all keeps sum m_i dx_i = 0 and,
 * R being the polar rotation, sum m_i (x_i - c) x dx_i = 0: shape matching moves no centre of mass
 * and applies no torque. docs/constraints.md derives it.
 *
 * Members are stored as a compressed row per cluster in the family's pool (first, count), with
 * their rest positions relative to the cluster's rest centre. Pinned members cannot move; the fit
 * treats them as far heavier than the rest (PBD_SHAPE_PIN_WEIGHT times the free mass), so that
 * the goal shape turns about them. The weights are derived in refresh, which runs again after a
 * pin or mass change (pbd_families_touch_all). */
#include <stdlib.h>
#include <string.h>

#include "constraints/rows.h"
#include "model/world.h"

/* The rotation is found in double whatever the build: it is a 3 x 3 problem per cluster, and the
 * tolerance can then sit just above the rounding of A. */
#ifdef PBD_DOUBLE
#define CLUSTER_ROT_TOL 1e-12
#else
#define CLUSTER_ROT_TOL 1e-6
#endif

/* A pinned member weighs this many times the free members of its cluster together. */
#define PBD_SHAPE_PIN_WEIGHT 1e3
/* Rotation iterations per projection; warm-started, one or two usually reach the tolerance. */
#define CLUSTER_ROT_ITERS 8
/* Below this turn (rad) the rotation takes Newton steps instead of Müller's. */
#define PBD_SHAPE_NEWTON_RANGE 0.25

typedef struct pbd_cluster_c {
	uint32_t first, count; /* members in the pool */
	pbd_real s;            /* k' (PBD) or the compliance (XPBD) */
	pbd_real inv_mfree;    /* 1 / mass of the free members, 1/kg; 0 when none is free */
	pbd_real inv_mtot;     /* 1 / sum of the weights */
	pbd_real quat[4];      /* rest -> current goal rotation, x y z w */
	pbd_vec3 c0;           /* rest centre under the current weights */
} pbd_cluster_c;

typedef struct pbd_cluster_p {
	pbd_real stiffness, compliance;
} pbd_cluster_p;

/* A member: its particle, its rest position relative to the cluster's rest centre at creation,
 * and its weight in the fit (refresh). */
typedef struct pbd_cluster_m {
	uint32_t p, spare;
	pbd_vec3 rest;
	pbd_real m;
} pbd_cluster_m;

_Static_assert(sizeof(pbd_cluster_c) == 2 * sizeof(uint32_t) + 10 * sizeof(pbd_real), "padding in pbd_cluster_c");
_Static_assert(sizeof(pbd_cluster_p) == 2 * sizeof(pbd_real), "padding in pbd_cluster_p");
_Static_assert(sizeof(pbd_cluster_m) == 2 * sizeof(uint32_t) + 4 * sizeof(pbd_real), "padding in pbd_cluster_m");

#define FAM(w)  (&(w)->fam[PBD_FAMILY_CLUSTER])
#define HOT(f)  ((pbd_cluster_c*)(f)->hot)
#define COLD(f) ((pbd_cluster_p*)(f)->cold)
#define POOL(f) ((pbd_cluster_m*)(f)->pool)

static const pbd_softness_fields softness =
    PBD_SOFTNESS_FIELDS(PBD_FAMILY_CLUSTER, pbd_cluster_c, pbd_cluster_p, 1, "cluster");

pbd_cluster_def pbd_cluster_def_default(void) {
	pbd_cluster_def d;
	memset(&d, 0, sizeof d);
	d.stiffness = 1;
	return d;
}

/* ---- rotation ------------------------------------------------------------------------------ */

/* The rotation matrix of a unit quaternion (x, y, z, w), row-major. */
static void quat_matrix(const double q[4], double R[9]) {
	const double x = q[0], y = q[1], z = q[2], w = q[3];
	R[0] = 1 - 2 * (y * y + z * z);
	R[1] = 2 * (x * y - z * w);
	R[2] = 2 * (x * z + y * w);
	R[3] = 2 * (x * y + z * w);
	R[4] = 1 - 2 * (x * x + z * z);
	R[5] = 2 * (y * z - x * w);
	R[6] = 2 * (x * z - y * w);
	R[7] = 2 * (y * z + x * w);
	R[8] = 1 - 2 * (x * x + y * y);
}

/* Solves H w = g for a symmetric H by Cholesky; false when H is not clearly positive definite
 * (a pivot below `floor`), as for a cluster on a line, whose turn about it is undetermined. */
static bool solve_spd(const double H[9], const double g[3], double floor, double w[3]) {
	const double d0 = H[0];
	if (!(d0 > floor)) return false;
	const double l00 = sqrt(d0), l10 = H[3] / l00, l20 = H[6] / l00;
	const double d1 = H[4] - l10 * l10;
	if (!(d1 > floor)) return false;
	const double l11 = sqrt(d1), l21 = (H[7] - l20 * l10) / l11;
	const double d2 = H[8] - l20 * l20 - l21 * l21;
	if (!(d2 > floor)) return false;
	const double l22 = sqrt(d2);
	const double y0 = g[0] / l00, y1 = (g[1] - l10 * y0) / l11, y2 = (g[2] - l20 * y0 - l21 * y1) / l22;
	w[2] = y2 / l22;
	w[1] = (y1 - l21 * w[2]) / l11;
	w[0] = (y0 - l10 * w[1] - l20 * w[2]) / l00;
	return true;
}

/* The rotation R of the polar decomposition A = R S, the one that maximises tr(R^T A), updated in
 * place from the warm start q. Every step turns R by a rotation vector w, R <- exp(w) R. With
 * B = A R^T, the gradient of tr(R^T A) in w is g = axial(B - B^T) = sum_c r_c x a_c (r_c, a_c the
 * columns of R and A) and its Hessian -H, H = tr(B) I - sym(B). Far from the optimum the step is
 * that of Müller et al. 2016, w = g / (|tr B| + eps): robust from any start, but it removes only
 * the part S / tr(S) of the remaining error per step, slow for an elongated or flat cluster.
 * Within PBD_SHAPE_NEWTON_RANGE of it, where the quadratic model holds, the step is Newton's,
 * w = H^-1 g, which converges quadratically; where H is not positive definite (a cluster on a
 * line) Müller's step stays. A is scaled to a largest entry of 1 first, so that eps means the
 * same at every size; an A with no entry of normal size (every member on the centre) keeps the
 * warm start. At a half turn g vanishes (a saddle); any rounding leaves it. Returns the last step
 * taken (0 when converged). */
static double extract_rotation(double q[4], const double A_in[9], int iters, double tol) {
	const double ql = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
	for (int a = 0; a < 4; ++a) q[a] /= ql; /* stored in pbd_real: unit to its rounding */
	double amax = 0;
	for (int i = 0; i < 9; ++i) amax = fmax(amax, fabs(A_in[i]));
	if (!(amax >= DBL_MIN)) return 0;
	double A[9];
	for (int i = 0; i < 9; ++i) A[i] = A_in[i] / amax;
	double theta = 0;
	for (int it = 0; it < iters; ++it) {
		double R[9], B[9];
		quat_matrix(q, R);
		for (int i = 0; i < 3; ++i)
			for (int j = 0; j < 3; ++j)
				B[3 * i + j] = A[3 * i] * R[3 * j] + A[3 * i + 1] * R[3 * j + 1] + A[3 * i + 2] * R[3 * j + 2];
		const double t = B[0] + B[4] + B[8];
		const double g[3] = {B[7] - B[5], B[2] - B[6], B[3] - B[1]};
		const double inv = 1 / (fabs(t) + 1e-9);
		double w[3] = {g[0] * inv, g[1] * inv, g[2] * inv};
		theta = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
		if (theta < PBD_SHAPE_NEWTON_RANGE && t > 0) {
			const double H[9] = {t - B[0], -0.5 * (B[1] + B[3]), -0.5 * (B[2] + B[6]), -0.5 * (B[1] + B[3]),
			                     t - B[4], -0.5 * (B[5] + B[7]), -0.5 * (B[2] + B[6]), -0.5 * (B[5] + B[7]),
			                     t - B[8]};
			double wn[3];
			if (solve_spd(H, g, 1e-6 * t, wn)) {
				const double tn = sqrt(wn[0] * wn[0] + wn[1] * wn[1] + wn[2] * wn[2]);
				if (tn < 2 * PBD_SHAPE_NEWTON_RANGE) {
					memcpy(w, wn, sizeof w);
					theta = tn;
				}
			}
		}
		if (!(theta >= tol)) return 0;
		const double sn = sin(0.5 * theta) / theta, cw = cos(0.5 * theta);
		const double v[3] = {w[0] * sn, w[1] * sn, w[2] * sn};
		/* q <- (v, cw) q */
		const double nq[4] = {cw * q[0] + q[3] * v[0] + (v[1] * q[2] - v[2] * q[1]),
		                      cw * q[1] + q[3] * v[1] + (v[2] * q[0] - v[0] * q[2]),
		                      cw * q[2] + q[3] * v[2] + (v[0] * q[1] - v[1] * q[0]),
		                      cw * q[3] - (v[0] * q[0] + v[1] * q[1] + v[2] * q[2])};
		const double l = sqrt(nq[0] * nq[0] + nq[1] * nq[1] + nq[2] * nq[2] + nq[3] * nq[3]);
		for (int a = 0; a < 4; ++a) q[a] = nq[a] / l;
	}
	return theta;
}

static inline pbd_vec3 mat_mul(const pbd_real R[9], pbd_vec3 v) {
	return pbd_v3(R[0] * v.x + R[1] * v.y + R[2] * v.z, R[3] * v.x + R[4] * v.y + R[5] * v.z,
	              R[6] * v.x + R[7] * v.y + R[8] * v.z);
}

/* ---- API ----------------------------------------------------------------------------------- */

static int compare_u32(const void* a, const void* b) {
	const uint32_t x = *(const uint32_t*)a, y = *(const uint32_t*)b;
	return (x > y) - (x < y);
}

/* The rest centre (plain mean, in double) of a cluster's rest positions. */
static void rest_mean(const pbd_world* w, const pbd_cluster_def* d, double mean[3]) {
	mean[0] = mean[1] = mean[2] = 0;
	for (uint32_t j = 0; j < d->count; ++j) {
		const pbd_vec3 x = d->rest ? d->rest[j] : w->x[d->particles[j]];
		mean[0] += (double)x.x;
		mean[1] += (double)x.y;
		mean[2] += (double)x.z;
	}
	for (int a = 0; a < 3; ++a) mean[a] /= (double)d->count;
}

static pbd_status validate(pbd_world* w, uint32_t k, const pbd_cluster_def* d, uint32_t* scratch) {
	const char* fn = "pbd_world_add_clusters";
	if (d->count == 0) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: cluster %u: count is 0", fn, k);
	if (!d->particles) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: cluster %u: particles is NULL", fn, k);
	for (uint32_t j = 0; j < d->count; ++j) {
		if (d->particles[j] >= w->np)
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
			                "%s: cluster %u: member %u: particle %u out of range (%u particles)", fn, k, j,
			                d->particles[j], w->np);
		if (d->rest && !pbd_v3_is_finite(d->rest[j]))
			return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: cluster %u: member %u: rest position is not finite", fn, k, j);
		scratch[j] = d->particles[j];
	}
	qsort(scratch, d->count, sizeof *scratch, compare_u32);
	for (uint32_t j = 1; j < d->count; ++j)
		if (scratch[j] == scratch[j - 1])
			return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: cluster %u: particle %u is a member twice", fn, k,
			                scratch[j]);
	double mean[3];
	rest_mean(w, d, mean);
	for (uint32_t j = 0; j < d->count; ++j) {
		const pbd_vec3 x = d->rest ? d->rest[j] : w->x[d->particles[j]];
		const double r[3] = {(double)x.x - mean[0], (double)x.y - mean[1], (double)x.z - mean[2]};
		for (int a = 0; a < 3; ++a)
			if (!(fabs(r[a]) < (double)PBD_REAL_MAX / 4))
				return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: cluster %u: member %u: its rest offset overflows", fn, k,
				                j);
	}
	return pbd_check_softness(w, fn, softness.item, k, d->stiffness, d->compliance);
}

pbd_status pbd_world_add_clusters(pbd_world* w, uint32_t count, const pbd_cluster_def* defs, uint32_t* first) {
	const char* fn = "pbd_world_add_clusters";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	if (count == 0) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: count is 0", fn);
	if (!defs) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: defs is NULL", fn);
	uint64_t members = 0;
	uint32_t largest = 0;
	for (uint32_t k = 0; k < count; ++k) {
		members += defs[k].count;
		if (defs[k].count > largest) largest = defs[k].count;
	}
	pbd_family* f = FAM(w);
	if (members > UINT32_MAX - 1 - f->pool_n)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: too many members (%llu)", fn, (unsigned long long)members);
	uint32_t* scratch = NULL;
	if (largest) {
		scratch = (uint32_t*)pbd_alloc(&w->mem, (size_t)largest * sizeof *scratch);
		if (!scratch) return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
	}
	pbd_status st = PBD_OK;
	for (uint32_t k = 0; k < count && st == PBD_OK; ++k) st = validate(w, k, &defs[k], scratch);
	pbd_free(&w->mem, scratch, (size_t)largest * sizeof *scratch);
	if (st != PBD_OK) return st;

	const uint32_t pool_base = pbd_family_pool_append(w, PBD_FAMILY_CLUSTER, (uint32_t)members);
	const uint32_t base = pool_base == UINT32_MAX ? UINT32_MAX : pbd_family_append(w, PBD_FAMILY_CLUSTER, count);
	if (base == UINT32_MAX) {
		if (pool_base != UINT32_MAX) f->pool_n = pool_base;
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %u clusters", fn, count);
	}
	uint32_t at = pool_base;
	for (uint32_t k = 0; k < count; ++k) {
		const pbd_cluster_def* d = &defs[k];
		pbd_cluster_c* c = &HOT(f)[base + k];
		c->first = at;
		c->count = d->count;
		c->quat[3] = 1;
		COLD(f)[base + k].stiffness = d->stiffness;
		COLD(f)[base + k].compliance = d->compliance;
		double mean[3];
		rest_mean(w, d, mean);
		for (uint32_t j = 0; j < d->count; ++j) {
			pbd_cluster_m* m = &POOL(f)[at + j];
			const pbd_vec3 x = d->rest ? d->rest[j] : w->x[d->particles[j]];
			m->p = d->particles[j];
			m->rest = pbd_v3((pbd_real)((double)x.x - mean[0]), (pbd_real)((double)x.y - mean[1]),
			                 (pbd_real)((double)x.z - mean[2]));
		}
		at += d->count;
	}
	if (first) *first = base;
	return PBD_OK;
}

uint32_t pbd_world_cluster_count(const pbd_world* w) { return w ? FAM(w)->n : 0; }

pbd_status pbd_world_get_cluster(const pbd_world* w, uint32_t index, pbd_cluster_def* out, uint32_t* members,
                                 uint32_t capacity) {
	if (!w || !out || (capacity && !members)) return PBD_ERR_INVALID_ARGUMENT;
	const pbd_family* f = FAM(w);
	if (index >= f->n)
		return pbd_fail((pbd_world*)w, PBD_ERR_OUT_OF_RANGE, "pbd_world_get_cluster: cluster %u out of range (%u)",
		                index, f->n);
	const pbd_cluster_c* c = &HOT(f)[f->slot[index]];
	const pbd_cluster_p* p = &COLD(f)[f->slot[index]];
	for (uint32_t j = 0; j < c->count && j < capacity; ++j) members[j] = POOL(f)[c->first + j].p;
	out->particles = members;
	out->count = c->count;
	out->rest = NULL;
	out->stiffness = p->stiffness;
	out->compliance = p->compliance;
	return PBD_OK;
}

pbd_status pbd_world_get_cluster_rotation(const pbd_world* w, uint32_t index, pbd_real out[4]) {
	if (!w || !out) return PBD_ERR_INVALID_ARGUMENT;
	const pbd_family* f = FAM(w);
	if (index >= f->n)
		return pbd_fail((pbd_world*)w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_world_get_cluster_rotation: cluster %u out of range (%u)", index, f->n);
	memcpy(out, HOT(f)[f->slot[index]].quat, 4 * sizeof *out);
	return PBD_OK;
}

pbd_status pbd_world_set_cluster_material(pbd_world* w, uint32_t first, uint32_t count, pbd_real stiffness,
                                          pbd_real compliance) {
	const char* fn = "pbd_world_set_cluster_material";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_family* f = FAM(w);
	if (first > f->n || count > f->n - first)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: range [%u, %u) exceeds the %u clusters", fn, first, first + count,
		                f->n);
	const pbd_status st = pbd_check_softness(w, fn, softness.item, first, stiffness, compliance);
	if (st == PBD_OK) pbd_family_write_softness(w, &softness, first, count, stiffness, compliance);
	return st;
}

/* ---- ops ----------------------------------------------------------------------------------- */

/* The weights of the fit: a free member its mass, a pinned one PBD_SHAPE_PIN_WEIGHT times the
 * free mass of its cluster (all 1 when no member is free: the cluster then only reports). In
 * double, for the sums; written by refresh and read by stats, so both fit with the same weights. */
static double free_mass(const pbd_cluster_m* m, uint32_t n, const pbd_real* iw) {
	double mf = 0;
	for (uint32_t j = 0; j < n; ++j)
		if (iw[m[j].p] > 0) mf += 1.0 / (double)iw[m[j].p];
	return mf;
}

static inline double weight(double mf, pbd_real w) {
	return w > 0 ? 1.0 / (double)w : mf > 0 ? PBD_SHAPE_PIN_WEIGHT * mf : 1;
}

static void refresh(pbd_family* f, const pbd_step_ctx* ctx) {
	pbd_family_refresh_softness(f, &softness, ctx);
	for (uint32_t k = 0; k < f->n; ++k) {
		pbd_cluster_c* c = &HOT(f)[k];
		pbd_cluster_m* m = POOL(f) + c->first;
		const double mf = free_mass(m, c->count, ctx->iw);
		double mt = 0, c0[3] = {0, 0, 0};
		for (uint32_t j = 0; j < c->count; ++j) {
			const double mj = weight(mf, ctx->iw[m[j].p]);
			m[j].m = (pbd_real)mj;
			mt += mj;
			c0[0] += mj * (double)m[j].rest.x;
			c0[1] += mj * (double)m[j].rest.y;
			c0[2] += mj * (double)m[j].rest.z;
		}
		c->inv_mfree = mf > 0 ? (pbd_real)(1 / mf) : 0;
		c->inv_mtot = (pbd_real)(1 / mt);
		c->c0 = pbd_v3((pbd_real)(c0[0] / mt), (pbd_real)(c0[1] / mt), (pbd_real)(c0[2] / mt));
	}
}

static uint32_t particles(const pbd_family* f, uint32_t k, uint32_t first, uint32_t* out, uint32_t cap) {
	const pbd_cluster_c* c = &HOT(f)[k];
	if (c->first > f->pool_n || c->count > f->pool_n - c->first) return 0; /* a corrupt record: check() says so */
	const pbd_cluster_m* m = POOL(f) + c->first;
	for (uint32_t j = first; j < c->count && j - first < cap; ++j) out[j - first] = m[j].p;
	return c->count;
}

/* The best fit of a cluster at the current positions: the first member's committed position and
 * displacement, taken before anything moves (positions are relative to them), the weighted centre
 * and the rotation R. */
typedef struct cluster_fit {
	pbd_vec3 xo, qo, cen;
	pbd_real R[9];
} cluster_fit;

static inline pbd_vec3 member_rel(const pbd_step_ctx* ctx, const cluster_fit* s, uint32_t i) {
	return pbd_v3_add(pbd_v3_sub(ctx->x[i], s->xo), pbd_v3_sub(ctx->q[i], s->qo));
}

/* R is iterated from the cluster's quaternion, which keeps the result as the next fit's warm
 * start. */
static void fit(const pbd_step_ctx* ctx, pbd_cluster_c* c, const pbd_cluster_m* m, cluster_fit* s) {
	const uint32_t n = c->count;
	s->xo = ctx->x[m[0].p];
	s->qo = ctx->q[m[0].p];
	pbd_vec3 cen = pbd_v3(0, 0, 0);
	for (uint32_t j = 0; j < n; ++j) cen = pbd_v3_add(cen, pbd_v3_scale(member_rel(ctx, s, m[j].p), m[j].m));
	cen = pbd_v3_scale(cen, c->inv_mtot);
	pbd_real A[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
	for (uint32_t j = 0; j < n; ++j) {
		const pbd_vec3 pj = pbd_v3_scale(pbd_v3_sub(member_rel(ctx, s, m[j].p), cen), m[j].m),
		               qj = pbd_v3_sub(m[j].rest, c->c0);
		A[0] += pj.x * qj.x, A[1] += pj.x * qj.y, A[2] += pj.x * qj.z;
		A[3] += pj.y * qj.x, A[4] += pj.y * qj.y, A[5] += pj.y * qj.z;
		A[6] += pj.z * qj.x, A[7] += pj.z * qj.y, A[8] += pj.z * qj.z;
	}
	double Ad[9], qd[4], Rd[9];
	for (int i = 0; i < 9; ++i) Ad[i] = (double)A[i];
	for (int i = 0; i < 4; ++i) qd[i] = (double)c->quat[i];
	extract_rotation(qd, Ad, CLUSTER_ROT_ITERS, CLUSTER_ROT_TOL);
	for (int i = 0; i < 4; ++i) c->quat[i] = (pbd_real)qd[i];
	quat_matrix(qd, Rd);
	for (int i = 0; i < 9; ++i) s->R[i] = (pbd_real)Rd[i];
	s->cen = cen;
}

/* Member j's deviation d_j = x_j - g_j from its goal g_j = R (q_j - c0) + centre. */
static inline pbd_vec3 deviation(const pbd_step_ctx* ctx, const pbd_cluster_c* c, const pbd_cluster_m* m, uint32_t j,
                                 const cluster_fit* s) {
	return pbd_v3_sub(pbd_v3_sub(member_rel(ctx, s, m[j].p), s->cen), mat_mul(s->R, pbd_v3_sub(m[j].rest, c->c0)));
}

/* The correction of one cluster from the current displacements: each free member moves by
 * -beta d_i, written to `out` (q for Gauss-Seidel, dx for Jacobi) with the factor `scale`
 * (omega / (N + alpha) of mass-weighted Jacobi, else 1), the multiplier taking the same scaled
 * step. Positions are relative to the first member, taken before anything moves. */
static void project_cluster(const pbd_step_ctx* ctx, pbd_cluster_c* c, const pbd_cluster_m* m, pbd_real* lambda,
                            pbd_vec3* out, bool jacobi) {
	const uint32_t n = c->count;
	const pbd_real* restrict iw = ctx->iw;
	cluster_fit fs;
	fit(ctx, c, m, &fs);
	pbd_real s_all = 0, s_free = 0;
	uint32_t deg = 0;
	for (uint32_t j = 0; j < n; ++j) {
		const pbd_vec3 d = deviation(ctx, c, m, j, &fs);
		const pbd_real e = m[j].m * pbd_v3_dot(d, d);
		s_all += e;
		if (iw[m[j].p] > 0) s_free += e;
		if (jacobi && ctx->degree[m[j].p] > deg) deg = ctx->degree[m[j].p];
	}
	const pbd_real C2 = s_all * c->inv_mfree;
	if (!(C2 >= PBD_EPSILON_LENGTH * PBD_EPSILON_LENGTH) || !(s_free > 0)) return;
	const pbd_real scale = jacobi && !ctx->jacobi_equal ? ctx->jacobi_omega / ((pbd_real)deg + ctx->jacobi_alpha) : 1;
	pbd_real beta;
	if (ctx->formulation == PBD_FORMULATION_XPBD) {
		/* sum_i w_i |dC/dx_i|^2 = S_free / (M S_all); dx_i = d_i dlambda / (M C) */
		const pbd_real C = PBD_SQRT(C2);
		const pbd_real D = s_free * c->inv_mfree / s_all;
		const pbd_real at = c->s * ctx->inv_h2;
		/* a member so far off that S_all overflowed leaves no finite direction: left alone */
		if (!(D + at > 0)) return;
		const pbd_real dl = scale * ((-C - at * *lambda) / (D + at));
		*lambda += dl;
		beta = -dl * c->inv_mfree / C;
	} else {
		/* dlambda = -k' C / D, so beta = k' S_all / S_free: k' when no member is pinned */
		beta = scale * c->s * (s_all / s_free);
	}
	for (uint32_t j = 0; j < n; ++j) {
		const uint32_t i = m[j].p;
		if (iw[i] == 0) continue;
		const pbd_vec3 d = deviation(ctx, c, m, j, &fs);
		out[i] = pbd_v3_sub(out[i], pbd_v3_scale(d, beta));
	}
}

static void project(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	pbd_cluster_c* c = HOT(f);
	const pbd_cluster_m* m = POOL(f);
	for (uint32_t k = first; k < end; ++k)
		if (c[k].inv_mfree > 0) project_cluster(ctx, &c[k], m + c[k].first, &f->lambda[k], ctx->q, false);
}

static void jacobi(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	pbd_cluster_c* c = HOT(f);
	const pbd_cluster_m* m = POOL(f);
	for (uint32_t k = first; k < end; ++k)
		if (c[k].inv_mfree > 0) project_cluster(ctx, &c[k], m + c[k].first, &f->lambda[k], ctx->dx, true);
}

/* Each member as a zero-length spring to its goal g_j, held where the current fit puts it: three
 * general rows per member, the components of d_j = x_j - g_j along x, y and z (gradient the unit
 * axis at the member), whose Gauss-Newton stiffness k_j I is the spring's whole Hessian. One norm
 * row |d_j| would give the same forces and stiffness but has no direction where it is satisfied,
 * and block descent's multiplier of a hard cluster, of one sign on |d_j|, then pushes the member
 * around its goal; components take multipliers of either sign. With M the free members' mass and
 * m_j the fit's weights, the constants k_j = m_j / (M alpha) make the rows' energy
 * sum k_j |d_j|^2 / 2 = C^2 / (2 alpha), the family's own, and since the fit minimises
 * sum m_j |d_j|^2 the forces -k_j d_j are its exact gradient (the terms through R and the centre
 * vanish). Only the stiffness is approximate: k_j I per member, without the coupling through the
 * fit. The fit's quaternion is kept as the projection keeps it (the warm start, and what
 * pbd_world_get_cluster_rotation reports). A cluster with no free member moves nothing: its rows
 * are kept at C = 0, with the constant shared by weight so that it stays finite. */
static void linearize(const pbd_step_ctx* ctx, const pbd_family* f, uint32_t first, uint32_t end, pbd_rows* rows) {
	static const pbd_vec3 axes[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
	pbd_cluster_c* c = HOT(f);
	for (uint32_t k = first; k < end; ++k) {
		const pbd_cluster_m* m = POOL(f) + c[k].first;
		const pbd_real ka = pbd_rows_k(COLD(f)[k].compliance);
		if (ka == 0) pbd_rows_note_hard(rows, PBD_FAMILY_CLUSTER, f->user[k]);
		const bool has_free = c[k].inv_mfree > 0;
		const pbd_real share = ka * (has_free ? c[k].inv_mfree : c[k].inv_mtot);
		cluster_fit fs;
		if (has_free) fit(ctx, &c[k], m, &fs);
		for (uint32_t j = 0; j < c[k].count; ++j) {
			const pbd_vec3 d = has_free ? deviation(ctx, &c[k], m, j, &fs) : pbd_v3(0, 0, 0);
			const pbd_real kj = share * m[j].m;
			for (int a = 0; a < 3; ++a)
				pbd_rows_add_general(rows, PBD_FAMILY_CLUSTER, &m[j].p, &axes[a], 1, (&d.x)[a], kj);
		}
	}
}

/* Three rows per member. */
static void row_sizes(const pbd_family* f, uint64_t* rows, uint64_t* entries) {
	uint64_t n = 0;
	for (uint32_t k = 0; k < f->n; ++k) n += HOT(f)[k].count;
	*rows = 3 * n;
	*entries = 3 * n;
}

/* C of one cluster in double from x + x_lo, with the fit's weights from the current inverse
 * masses and the rotation iterated to convergence from the stored quaternion; also the RMS rest
 * radius under the same weights. Returns false for a cluster with no free member. */
static bool measure(const pbd_world* w, const pbd_family* f, uint32_t k, double* C, double* radius) {
	const pbd_cluster_c* c = &HOT(f)[k];
	const pbd_cluster_m* m = POOL(f) + c->first;
	const uint32_t n = c->count;
	const double mf = free_mass(m, n, w->w);
	if (!(mf > 0)) return false;
	const uint32_t o = m[0].p;
	double mt = 0, cen[3] = {0, 0, 0}, c0[3] = {0, 0, 0};
	for (uint32_t j = 0; j < n; ++j) {
		const uint32_t i = m[j].p;
		const double mj = weight(mf, w->w[i]);
		const double r[3] = {((double)w->x[i].x - (double)w->x[o].x) + ((double)w->x_lo[i].x - (double)w->x_lo[o].x),
		                     ((double)w->x[i].y - (double)w->x[o].y) + ((double)w->x_lo[i].y - (double)w->x_lo[o].y),
		                     ((double)w->x[i].z - (double)w->x[o].z) + ((double)w->x_lo[i].z - (double)w->x_lo[o].z)};
		const double rq[3] = {(double)m[j].rest.x, (double)m[j].rest.y, (double)m[j].rest.z};
		mt += mj;
		for (int a = 0; a < 3; ++a) {
			cen[a] += mj * r[a];
			c0[a] += mj * rq[a];
		}
	}
	for (int a = 0; a < 3; ++a) {
		cen[a] /= mt;
		c0[a] /= mt;
	}
	double A[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, rest2 = 0;
	for (uint32_t j = 0; j < n; ++j) {
		const uint32_t i = m[j].p;
		const double mj = weight(mf, w->w[i]);
		const double p[3] = {
		    ((double)w->x[i].x - (double)w->x[o].x) + ((double)w->x_lo[i].x - (double)w->x_lo[o].x) - cen[0],
		    ((double)w->x[i].y - (double)w->x[o].y) + ((double)w->x_lo[i].y - (double)w->x_lo[o].y) - cen[1],
		    ((double)w->x[i].z - (double)w->x[o].z) + ((double)w->x_lo[i].z - (double)w->x_lo[o].z) - cen[2]};
		const double qq[3] = {(double)m[j].rest.x - c0[0], (double)m[j].rest.y - c0[1], (double)m[j].rest.z - c0[2]};
		for (int r = 0; r < 3; ++r)
			for (int s = 0; s < 3; ++s) A[3 * r + s] += mj * p[r] * qq[s];
		rest2 += mj * (qq[0] * qq[0] + qq[1] * qq[1] + qq[2] * qq[2]);
	}
	/* The same iteration, to convergence. */
	double qd[4] = {(double)c->quat[0], (double)c->quat[1], (double)c->quat[2], (double)c->quat[3]}, R[9];
	extract_rotation(qd, A, 100, 1e-14);
	quat_matrix(qd, R);
	double s_all = 0;
	for (uint32_t j = 0; j < n; ++j) {
		const uint32_t i = m[j].p;
		const double mj = weight(mf, w->w[i]);
		const double qq[3] = {(double)m[j].rest.x - c0[0], (double)m[j].rest.y - c0[1], (double)m[j].rest.z - c0[2]};
		double d[3];
		d[0] = ((double)w->x[i].x - (double)w->x[o].x) + ((double)w->x_lo[i].x - (double)w->x_lo[o].x) - cen[0];
		d[1] = ((double)w->x[i].y - (double)w->x[o].y) + ((double)w->x_lo[i].y - (double)w->x_lo[o].y) - cen[1];
		d[2] = ((double)w->x[i].z - (double)w->x[o].z) + ((double)w->x_lo[i].z - (double)w->x_lo[o].z) - cen[2];
		for (int r = 0; r < 3; ++r) d[r] -= R[3 * r] * qq[0] + R[3 * r + 1] * qq[1] + R[3 * r + 2] * qq[2];
		s_all += mj * (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
	}
	*C = sqrt(s_all / mf);
	*radius = sqrt(rest2 / mf);
	return true;
}

/* Violation C (m); strain C over the cluster's RMS rest radius (where it has one); energy
 * C^2 / (2 alpha) under XPBD, none for an ideal cluster, undefined for a PBD stiffness in (0, 1). */
static void stats(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end, pbd_family_sums* out) {
	const bool xpbd = pbd_energy_from_compliance(w);
	for (uint32_t k = first; k < end; ++k) {
		const pbd_cluster_p* p = &COLD(f)[k];
		pbd_sums_stiffness(out, xpbd, p->stiffness);
		double C, radius;
		if (!measure(w, f, k, &C, &radius)) continue;
		out->max_violation = pbd_max_sticky(out->max_violation, C);
		if (radius > 0) pbd_sums_strain(out, C / radius);
		pbd_sums_energy(out, xpbd, C, p->compliance);
	}
}

static double max_strain(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end) {
	double worst = 0;
	for (uint32_t k = first; k < end; ++k) {
		double C, radius;
		if (!measure(w, f, k, &C, &radius) || !(radius > 0)) continue;
		const double strain = C / radius;
		worst = pbd_max_sticky(worst, strain);
	}
	return worst;
}

static bool check(const pbd_world* w, const pbd_family* f, uint32_t k, const char** why) {
	(void)w;
	const pbd_cluster_c* c = &HOT(f)[k];
	const pbd_cluster_p* p = &COLD(f)[k];
	if (c->count == 0 || c->first > f->pool_n || c->count > f->pool_n - c->first)
		return *why = "has its members outside the pool", false;
	const double qn = (double)c->quat[0] * (double)c->quat[0] + (double)c->quat[1] * (double)c->quat[1] +
	                  (double)c->quat[2] * (double)c->quat[2] + (double)c->quat[3] * (double)c->quat[3];
	if (!(fabs(qn - 1) < 1e-3)) return *why = "has a rotation that is not a unit quaternion", false;
	if (!pbd_softness_ok(p->stiffness, p->compliance)) return *why = "has an invalid material", false;
	const pbd_cluster_m* m = POOL(f) + c->first;
	for (uint32_t j = 0; j < c->count; ++j)
		if (m[j].spare != 0 || !pbd_v3_is_finite(m[j].rest)) return *why = "has an invalid member", false;
	return true;
}

const pbd_family_ops pbd_family_cluster_ops = {
    .name = "cluster",
    .hot_size = sizeof(pbd_cluster_c),
    .cold_size = sizeof(pbd_cluster_p),
    .lambdas = 1,
    .pool_size = sizeof(pbd_cluster_m),
    .particles = particles,
    .refresh = refresh,
    .project = project,
    .jacobi = jacobi,
    .stats = stats,
    .max_strain = max_strain,
    .check = check,
    .linearize = linearize,
    .row_sizes = row_sizes,
};
