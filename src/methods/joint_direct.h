/* The direct solve of joints (joint_direct.c): the holds of the joints of small articulated
 * assemblies (chains, ragdolls, mechanisms) solved together, one linear system per iteration,
 * instead of joint by joint. */
#ifndef PBD_METHODS_JOINT_DIRECT_H
#define PBD_METHODS_JOINT_DIRECT_H

#include "methods/sparse_chol.h"
#include "model/family.h"

/* An assembly with more rows than this (a net of thousands of joints) keeps the projection joint
 * by joint: its factor would cost more per iteration than it saves. */
#define PBD_JOINT_DIRECT_MAX_ROWS 1536

/* One scalar row of a hold: which joint, and what it holds (joint_direct.c, row kinds). */
typedef struct pbd_joint_row {
	uint32_t joint; /* position in the family */
	uint8_t kind, axis;
	uint8_t index; /* the row's place among its joint's, for its multiplier */
	uint8_t pad;
} pbd_joint_row;

/* One entry of the system's lower triangle: rows i >= j meet on a body (their product through
 * its inverse mass and inertia), or a diagonal's own term (body UINT32_MAX). */
typedef struct pbd_joint_entry {
	uint32_t i, j, body;
	uint8_t side_i, side_j;
	uint8_t pad[2];
} pbd_joint_entry;

typedef struct pbd_joint_direct {
	uint64_t topology; /* the partition the rows were laid out for (world.h); 0: none */
	bool failed;       /* the factor failed for this layout: the joints went back to the projection */
	uint32_t nrows, cap_rows;
	pbd_joint_row* rows;
	uint32_t nentries, cap_entries;
	pbd_joint_entry* entries;
	uint32_t *erow, *ecol; /* the entries' pattern for the factor */
	double* values;        /* the entries' values */
	double *rhs, *x;       /* per row */
	pbd_vec3* jac;         /* per row and side: linear and angular parts, 4 vectors a row */
	pbd_real* err;         /* per row: C */
	uint32_t cap_scratch;
	uint32_t* body_rows; /* scratch of the layout: per dynamic body, its rows */
	pbd_sparse_chol chol;
} pbd_joint_direct;

typedef struct pbd_world pbd_world;

/* Lays the rows out again when the constraints' partition changed: which joints are solved
 * directly (PBD_JOINT_DIRECT on their records), their rows and the system's pattern, analysed.
 * Out of memory leaves every joint to the projection and returns the failure. */
pbd_status pbd_joint_direct_prepare(pbd_world* w);
/* One iteration: the rows at the current corrections, the system factored and solved, and the
 * bodies moved by the result. */
void pbd_joint_direct_iterate(pbd_world* w, const pbd_step_ctx* ctx);
void pbd_joint_direct_free(pbd_world* w);

#endif
