/* Constraints linearised for the force-based methods.
 *
 * Every constraint C(x) with a finite spring constant k is an elastic energy E = k C^2 / 2 (the
 * energy whose stiff limit XPBD's compliance alpha = 1 / k solves for). The force-based methods
 * (integrate_*.c) do not project: they need E's gradient and Hessian. Each family writes its
 * constraints, at the current positions, as rows: C, k, and the particles with their gradients
 * dC/dx_i. From rows alone follow the forces f_i = -k C grad_i, the damping force along the
 * gradient, and the Gauss-Newton stiffness K = k grad grad^T, which is positive semi-definite.
 *
 * Most families are norms, C = |u| - r with u = sum_i a_i x_i (+ a constant): a distance
 * (a = 1, -1), an attachment (a = 1), an isometric bend (a = the cotangent weights). Their exact
 * Hessian adds the transverse term k C / |u| a_i a_j (I - n n^T), n = u / |u|, which keeps a
 * stretched spring stiff sideways. It is negative when the norm is below its rest value (a
 * compressed spring) and is then dropped, so that the system stays positive definite (Baraff and
 * Witkin 1998; Choi and Ko 2002): rows keep g = k max(C, 0) / |u| and the weights a_i.
 *
 * The arrays are sized before the step (pbd_rows_reserve), so linearising allocates nothing. */
#ifndef PBD_ROWS_H
#define PBD_ROWS_H

#include "model/family.h"

typedef struct pbd_rows {
	uint32_t n, cap; /* rows */
	/* entries of row r: [start[r], start[r + 1]); cap_start of them allocated (cap + 1 once any
	 * row is held, 1 before), counted apart from cap so that every array is freed with the size
	 * it has after a failed reserve */
	uint32_t* start;
	uint32_t cap_start;
	pbd_real* C;    /* constraint value */
	pbd_real* k;    /* spring constant, > 0 */
	pbd_real* g;    /* transverse stiffness k max(C, 0) / |u| of a norm row; 0 for the others */
	pbd_vec3* dir;  /* n = u / |u| of a norm row */
	pbd_real* rest; /* r of a norm row; -1 for a general row */
	/* The constant a projective method puts in its matrix, which must not change with the state:
	 * a distance's stretch constant, whatever side it is on now (k is the current side's). */
	pbd_real* kf;
	/* Which constants the row was built without (compliance 0): PBD_ROW_HARD_K when k is 0 (the
	 * side it is on now is hard), PBD_ROW_HARD_KF when kf is 0; 0 for a spring. Only vertex block
	 * descent solves such rows as they are; the other methods give them a spring first
	 * (pbd_rows_soften_hard, rows_hard.c). */
	uint8_t* hard;
	uint32_t n_hard;    /* rows with a hard flag */
	uint32_t ne, cap_e; /* entries */
	uint32_t* p;        /* particle */
	pbd_vec3* grad;     /* dC/dx_p */
	pbd_real* a;        /* weight a_i of a norm row */
	/* The first constraint met with no finite spring constant (compliance 0): which family and
	 * which user index, UINT32_MAX when none. */
	uint32_t hard_family, hard_index;
} pbd_rows;

enum { PBD_ROW_HARD_K = 1, PBD_ROW_HARD_KF = 2 };

/* Grows the arrays to hold `rows` rows and `entries` entries; the contents are not kept. */
pbd_status pbd_rows_reserve(pbd_world* w, pbd_rows* r, uint32_t rows, uint32_t entries);
void pbd_rows_free(pbd_world* w, pbd_rows* r);

/* Starts an empty set. */
static inline void pbd_rows_clear(pbd_rows* r) {
	r->n = 0;
	r->ne = 0;
	r->start[0] = 0;
	r->n_hard = 0;
	r->hard_family = UINT32_MAX;
	r->hard_index = UINT32_MAX;
}

/* The transverse stiffness of a norm row of constant k (see above): k at rest 0, where the energy
 * is quadratic, k C / |u| when stretched, 0 (clamped) when compressed. */
static inline pbd_real pbd_rows_transverse(pbd_real k, pbd_real C, pbd_real rest, pbd_real len) {
	return rest == 0 ? k : C > 0 ? k * C / len : 0;
}

/* Notes which constants of the row just appended are missing (k or kf 0). */
static inline void pbd_rows_mark_hard(pbd_rows* r, uint32_t row, pbd_real k, pbd_real kf) {
	const uint8_t hard = (uint8_t)((k == 0 ? PBD_ROW_HARD_K : 0) | (kf == 0 ? PBD_ROW_HARD_KF : 0));
	r->hard[row] = hard;
	r->n_hard += hard != 0;
}

/* Appends a norm row C = |u| - rest over particles p[0..n) with weights a (see above), spring
 * constant k now (0: hard) and kf for a constant matrix. The caller reserved room. */
static inline void pbd_rows_add_norm(pbd_rows* r, const uint32_t* p, const pbd_real* a, uint32_t n, pbd_vec3 u,
                                     pbd_real rest, pbd_real k, pbd_real kf) {
	const pbd_real len = PBD_SQRT(pbd_v3_dot(u, u));
	/* A norm too short for a direction takes a fixed one: at rest 0 the energy k |u|^2 / 2 is
	 * quadratic with Hessian k a_i a_j I whatever u is, so a satisfied zero-length spring keeps its
	 * stiffness; at rest > 0 coincident ends are pushed apart along x, the same way every time.
	 * Every constraint thus gives its row in every state, which the projective and block methods
	 * rely on (a constant structure). */
	const pbd_vec3 dir = len >= PBD_EPSILON_LENGTH ? pbd_v3_scale(u, 1 / len) : pbd_v3(1, 0, 0);
	const pbd_real C = len - rest;
	const uint32_t row = r->n++;
	r->C[row] = C;
	r->k[row] = k;
	r->g[row] = pbd_rows_transverse(k, C, rest, len);
	r->dir[row] = dir;
	r->rest[row] = rest;
	r->kf[row] = kf;
	pbd_rows_mark_hard(r, row, k, kf);
	for (uint32_t i = 0; i < n; ++i) {
		const uint32_t e = r->ne++;
		r->p[e] = p[i];
		r->a[e] = a[i];
		r->grad[e] = pbd_v3_scale(dir, a[i]);
	}
	r->start[r->n] = r->ne;
}

/* Appends a general row: C and its gradients grad[0..n) at particles p[0..n), with only the
 * Gauss-Newton stiffness k grad grad^T (the curvature term k C d2C/dx2 is left out, which keeps
 * the system positive semi-definite, as for a compressed spring). For families that are not
 * norms: volumes, strains, dihedral angles. A unilateral constraint that is slack gives C = 0 and
 * zero gradients, so that its row is still there (projective dynamics keeps a constant matrix). */
static inline void pbd_rows_add_general(pbd_rows* r, pbd_family_type type, const uint32_t* p, const pbd_vec3* grad,
                                        uint32_t n, pbd_real C, pbd_real k) {
	(void)type; /* the family, for the callers' readability; no row keeps it */
	const uint32_t row = r->n++;
	r->C[row] = C;
	r->k[row] = k;
	r->g[row] = 0;
	r->dir[row] = pbd_v3(0, 0, 0);
	r->rest[row] = -1; /* marks a general row: a norm's rest is >= 0 */
	r->kf[row] = k;
	pbd_rows_mark_hard(r, row, k, k);
	for (uint32_t i = 0; i < n; ++i) {
		const uint32_t e = r->ne++;
		r->p[e] = p[i];
		r->a[e] = 0;
		r->grad[e] = grad[i];
	}
	r->start[r->n] = r->ne;
}

/* The spring constant of a compliance, 0 for a hard constraint (compliance 0, or one so small
 * that its inverse overflows): a row with k = 0 is hard, which vertex block descent's augmented
 * Lagrangian solves as it is (vbd.c); the other methods map it to a stiff spring
 * (pbd_rows_soften_hard). */
static inline pbd_real pbd_rows_k(pbd_real compliance) {
	const pbd_real k = compliance > 0 ? 1 / compliance : 0;
	return pbd_is_finite(k) ? k : 0;
}

/* Notes a constraint without a finite spring constant (the first one wins). */
static inline void pbd_rows_note_hard(pbd_rows* r, pbd_family_type type, uint32_t user) {
	if (r->hard_family == UINT32_MAX) {
		r->hard_family = (uint32_t)type;
		r->hard_index = user;
	}
}

/* Clears r and appends the rows of every family of the world at the context's positions. */
void pbd_rows_linearize_all(const pbd_world* w, const pbd_step_ctx* ctx, pbd_rows* r);

/* Adds to f[] the elastic forces -k C grad_i and the damping forces -beta k (grad . v) grad_i
 * (Rayleigh's stiffness-proportional damping along the gradient: for a spring, seed 004's damping
 * along the spring, with c = beta k). Returns the elastic energy sum k C^2 / 2. */
double pbd_rows_forces(const pbd_rows* r, const pbd_vec3* v, pbd_real beta, pbd_vec3* f);

/* out += (cg K_GN + ct K_geo) in: the Gauss-Newton part sum_rows k grad (grad . in) scaled by cg,
 * the transverse part of the norm rows by ct. */
void pbd_rows_mul(const pbd_rows* r, pbd_real cg, pbd_real ct, const pbd_vec3* in, pbd_vec3* out);

/* Adds the diagonal 3x3 blocks of (cg K_GN + ct K_geo) to diag[] (9 reals per particle, row-major). */
void pbd_rows_diag(const pbd_rows* r, pbd_real cg, pbd_real ct, pbd_real* diag);

#endif
