/* The force-based methods: one substep of explicit, symplectic or implicit Euler, projective
 * dynamics or vertex block descent, switched on pbd_world_def.method as MuJoCo's mj_step switches
 * on its integrator. They share the position-based step's frame (positions x + x_lo, the
 * substep's displacement q, velocities v + v_lo), its prediction of pinned targets, its contact
 * stage and its velocity update, so that colliders, friction and restitution act the same under
 * every method. */
#ifndef PBD_INTEGRATE_H
#define PBD_INTEGRATE_H

#include "constraints/rows.h"
#include "methods/sparse_chol.h"

/* Working arrays of the force-based methods, sized before the step. */
/* Projective dynamics (pd.c): the most free particles a general row may have and still be part
 * of the matrix (its square adds up to 4 096 entries), and how many larger rows (the enclosed
 * volume of a closed mesh) a low-rank update solves exactly, at one more solve each per iteration
 * (a world with more is refused). */
#define PBD_PD_DENSE_MAX    64u
#define PBD_PD_LOW_RANK_MAX 8

/* What a snapshot records of the projective dynamics factor besides its rows' weights and keys:
 * the rows, free particles and entries it was built over, and the FNV-1a hash of its values. */
typedef struct pbd_pd_saved {
	uint32_t rows, free, entries;
	uint64_t hash;
} pbd_pd_saved;

typedef struct pbd_integrator {
	uint32_t cap;   /* particles the arrays hold */
	pbd_vec3* f;    /* force on each particle, N */
	pbd_vec3* dv;   /* implicit Euler: the velocity change solved for */
	pbd_vec3* r;    /* CG residual */
	pbd_vec3* z;    /* CG preconditioned residual */
	pbd_vec3* d;    /* CG search direction */
	pbd_vec3* ad;   /* CG: A d */
	pbd_real* diag; /* 3x3 diagonal blocks of A, then their inverses, 9 per particle */
	pbd_vec3* y;    /* VBD and projective dynamics: the inertial target of each particle */
	/* Explicit and symplectic Euler (rows_hard.c): each particle's bound on the stiffness of its
	 * springs, and of its hard rows per unit spring constant */
	pbd_real *load, *unit;
	pbd_rows rows;
	/* vbd.c: rows by particle (compressed: the entries of particle i are inc[inc_start[i] ..
	 * inc_start[i + 1])), the entries' rows, the particles in colour order and where each colour
	 * starts, and the norm vectors u of the rows; rebuilt
	 * when the constraint set (topology) or the particle count changes. */
	uint64_t vbd_topology;
	uint32_t vbd_np, vbd_cap_np, vbd_cap_e, vbd_cap_r, colours;
	uint32_t *inc_start, *inc, *entry_row, *order;
	uint32_t colour_start[PBD_GROUP_COUNT + 1];
	pbd_vec3* u;
	/* vbd.c, the augmented Lagrangian of the hard rows (k = 0): each row's multiplier and penalty
	 * stiffness, carried from substep to substep (warm start) while the constraint set stays, and its
	 * value at the substep's start. */
	pbd_real *lam, *pen, *c0;
	uint32_t vbd_restored; /* rows whose lam and pen a snapshot gave (kept by the next build) */
	/* pd.c: the factor of the global matrix over the free particles (node[i], UINT32_MAX for a
	 * pinned one), its pattern and values as triplets, the pin set it was built for, and the
	 * right-hand sides (3 per node); per row, the weight a general row has in the matrix and the
	 * constant it was taken for (pd_rows rows when the factor was built) */
	pbd_sparse_chol chol;
	uint32_t *node, *pd_row, *pd_col;
	uint8_t* pd_free;
	double *pd_val, *pd_new, *rhs, *pd_wt, *pd_key;
	uint32_t pd_cap_np, pd_cap_nnz, pd_n, pd_nnz, pd_np, pd_cap_rows, pd_rows;
	/* the general rows too large for the matrix that a low-rank update solves, and their columns
	 * B^-1 g (3 pd_n doubles each) */
	uint32_t pd_lr[PBD_PD_LOW_RANK_MAX], pd_nlr;
	double* pd_u;
	size_t pd_cap_u;
	uint64_t pd_topology;
	/* a snapshot's weights and keys (in pd_wt and pd_key) for the next factor built over the same
	 * rows, free particles and entries (pbd_pd_restore); pd_restored is false once one was built */
	bool pd_restored;
	pbd_pd_saved pd_saved;
	/* implicit Euler's solves in the current step: worst relative residual and most iterations */
	double residual;
	uint32_t cg_iterations;
} pbd_integrator;

/* The prepare entries of the force-based methods (method.h): before the step moves anything, size
 * the arrays and check that every family of the world has a force model; vertex block descent
 * then builds its colouring, projective dynamics factors its matrix. A failure leaves the world
 * as it was, with the reason in its last error. */
pbd_status pbd_integrate_prepare(pbd_world* w);
pbd_status pbd_vbd_method_prepare(pbd_world* w);
pbd_status pbd_pd_method_prepare(pbd_world* w);
/* One substep of the world's force-based method. */
void pbd_integrate_substep(pbd_world* w, pbd_real h, pbd_real damping, int substep, int substeps);
void pbd_integrator_free(pbd_world* w);

/* vbd.c: sizes and builds the incidence and colouring (before the step), and solves one substep:
 * the displacements q of the free particles that minimise the backward-Euler energy. */
pbd_status pbd_vbd_prepare(pbd_world* w);
void pbd_vbd_solve(pbd_world* w, const pbd_step_ctx* ctx);
void pbd_vbd_free(pbd_world* w);
/* Snapshots: how many rows' multipliers and penalties are live (0 when none: another method, or
 * the constraint set changed since they were made), and their restoration into a loaded world. */
uint32_t pbd_vbd_saved_rows(const pbd_world* w);
pbd_status pbd_vbd_restore(pbd_world* w, uint32_t n, const pbd_real* lam, const pbd_real* pen);

/* pd.c: builds or refreshes the factor of the global matrix (before the step, after the rows
 * were linearised), and solves one substep by `iterations` local/global rounds. */
/* The general rows with more than PBD_PD_DENSE_MAX free particles in the current rows. */
uint32_t pbd_pd_large_rows(const pbd_world* w);
pbd_status pbd_pd_prepare(pbd_world* w);
void pbd_pd_solve(pbd_world* w, const pbd_step_ctx* ctx);
void pbd_pd_free(pbd_world* w);
/* Snapshots: what decides the iterates of projective dynamics beyond the positions, the weights
 * of the general rows, kept from the factor's build. pbd_pd_saved_state gives the rows whose weights
 * and keys (pd_wt, pd_key) are live, 0 rows when none (another method, no factor, or the constraints or
 * pins changed since it was built); pbd_pd_restore gives them to a loaded world, whose first
 * factor then takes them as the saved world's next step would have kept them. */
pbd_pd_saved pbd_pd_saved_state(const pbd_world* w);
pbd_status pbd_pd_restore(pbd_world* w, const pbd_pd_saved* s, const double* wt, const double* key);

/* rows_hard.c: the rows of every family at the context's positions into w->integ->rows; under
 * every method but VBD, which solves them as they are, the hard rows (compliance 0) then get a
 * stiff spring for the substep h (pbd_rows_soften_hard). */
void pbd_integrate_linearize(pbd_world* w, const pbd_step_ctx* ctx);
/* Gives every hard row of w->integ->rows its spring constant for the world's method at substep h. */
void pbd_rows_soften_hard(pbd_world* w, pbd_real h);
/* Explicit Euler: the extra damping along the hard rows that keeps their springs stable (added
 * to f, at the velocities v). */
void pbd_rows_hard_damping(const pbd_world* w, pbd_real h, pbd_vec3* f);

/* implicit.c: solves (M + h D + h^2 K) dv = h (f - h K v) by preconditioned conjugate gradients
 * into in->dv, from the rows and forces of the substep's start. */
void pbd_implicit_solve(pbd_world* w, const pbd_step_ctx* ctx);

#endif
