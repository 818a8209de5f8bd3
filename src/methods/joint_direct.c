/* The direct solve of joints (joint_direct.h, docs/joints.md).
 *
 * Projected one at a time, joints pass a correction along a chain one link per iteration, and a
 * heavy body on light links stretches the chain until that slow passing carries its weight: a
 * 1000:1 mass at the end of ten links sagged by a metre at 20 substeps. Solving all the holds of
 * an assembly at once removes both: the holds' scalar rows i, each C_i with gradients J_i
 * (linear and angular, per side), form the system
 *
 *   (J M^-1 J^T + alpha~) dlambda = -C - alpha~ lambda
 *
 * (XPBD's update of Macklin et al. 2016, eq. 18, for all rows together), whose solution moves
 * every body by M^-1 J^T dlambda: one Newton step on the holds per iteration, exact for their
 * linearisation whatever the masses. The matrix couples two rows where they share a body, so an
 * assembly's pattern is a tree of blocks for a chain or a ragdoll: the sparse Cholesky factor
 * (sparse_chol.h) is analysed once per layout and refactored every iteration, in time linear in
 * the rows. Limits, motors and distance joints stay with the projection (constraints/joint.c),
 * and so do assemblies past PBD_JOINT_DIRECT_MAX_ROWS rows.
 *
 * The rows: a point hold (fixed, ball, hinge) has three, the world's axes of b's point less a's;
 * a prismatic's the two axes of a's frame across the slide; a fixed or prismatic joint's turn
 * three, the world's axes of the rotation vector of b's frame from a's; a hinge's alignment the
 * two axes of a's frame across the hinge. A broken joint's rows stay in the layout with no
 * gradient and a unit diagonal, so breaking does not change the pattern. */
#include <math.h>
#include <string.h>

#include "constraints/joint.h"
#include "methods/joint_direct.h"
#include "model/node.h"
#include "model/world.h"

enum { ROW_POINT, ROW_SLIDE, ROW_TURN, ROW_ALIGN };

/* Rows i and j meeting on a body see each other through it; a row's diagonal also takes this
 * share of itself, so that redundant holds (two hinges on one door) keep the factor positive
 * definite. It acts as a compliance of a millionth of the row's own inverse mass. */
#define REGULARISE 1e-6

/* Newton passes per iteration at most: a light link whipped round at hundreds of rad/s turns by
 * most of a radian in a substep, where one linearisation leaves the holds open, so the solve is
 * taken again from where it put the bodies until every row's residual is below
 * PBD_JOINT_DIRECT_HOLDS (m or rad). A chain at rest holds after the first pass and takes one. */
#define PBD_JOINT_DIRECT_PASSES 4
#define PBD_JOINT_DIRECT_HOLDS  1e-6

static uint32_t rows_of(const pbd_joint_c* c) {
	switch ((pbd_joint_type)c->type) {
	case PBD_JOINT_FIXED:
		return 6;
	case PBD_JOINT_BALL:
		return 3;
	case PBD_JOINT_HINGE:
	case PBD_JOINT_PRISMATIC:
		return 5;
	default:
		return 0;
	}
}

static uint32_t find(uint32_t* parent, uint32_t i) {
	while (parent[i] != i) i = parent[i] = parent[parent[i]];
	return i;
}

static void clear_flags(pbd_family* f) {
	pbd_joint_c* c = (pbd_joint_c*)f->hot;
	for (uint32_t k = 0; k < f->n; ++k) c[k].flags &= ~PBD_JOINT_DIRECT;
}

void pbd_joint_direct_free(pbd_world* w) {
	pbd_joint_direct* d = w->jdirect;
	pbd_free(&w->mem, d->rows, d->cap_rows * sizeof *d->rows);
	pbd_free(&w->mem, d->rhs, d->cap_rows * sizeof *d->rhs);
	pbd_free(&w->mem, d->x, d->cap_rows * sizeof *d->x);
	pbd_free(&w->mem, d->err, d->cap_rows * sizeof *d->err);
	pbd_free(&w->mem, d->jac, d->cap_rows * 4 * sizeof *d->jac);
	pbd_free(&w->mem, d->entries, d->cap_entries * sizeof *d->entries);
	pbd_free(&w->mem, d->erow, d->cap_entries * sizeof *d->erow);
	pbd_free(&w->mem, d->ecol, d->cap_entries * sizeof *d->ecol);
	pbd_free(&w->mem, d->values, d->cap_entries * sizeof *d->values);
	pbd_free(&w->mem, d->body_rows, d->cap_scratch * sizeof *d->body_rows);
	pbd_sparse_chol_free(&d->chol, &w->mem);
	memset(d, 0, sizeof *d);
}

static bool reserve_rows(pbd_world* w, pbd_joint_direct* d, uint32_t n) {
	if (n <= d->cap_rows) return true;
	const pbd_grow_item items[] = {{(void**)&d->rows, sizeof *d->rows},
	                               {(void**)&d->rhs, sizeof *d->rhs},
	                               {(void**)&d->x, sizeof *d->x},
	                               {(void**)&d->err, sizeof *d->err},
	                               {(void**)&d->jac, 4 * sizeof *d->jac}};
	if (!pbd_grow_all(&w->mem, items, 5, d->cap_rows, n)) return false;
	d->cap_rows = n;
	return true;
}

static bool reserve_entries(pbd_world* w, pbd_joint_direct* d, uint32_t n) {
	if (n <= d->cap_entries) return true;
	const pbd_grow_item items[] = {{(void**)&d->entries, sizeof *d->entries},
	                               {(void**)&d->erow, sizeof *d->erow},
	                               {(void**)&d->ecol, sizeof *d->ecol},
	                               {(void**)&d->values, sizeof *d->values}};
	if (!pbd_grow_all(&w->mem, items, 4, d->cap_entries, n)) return false;
	d->cap_entries = n;
	return true;
}

/* The bodies a row moves: side 0 is a, side 1 is b; UINT32_MAX where that side does not move. */
static uint32_t mover(const pbd_joint_c* c, int side) {
	if (side == 0) return (c->flags & PBD_JOINT_A_MOVES) ? c->a - 1 : UINT32_MAX;
	return (c->flags & PBD_JOINT_B_MOVES) ? c->b - 1 : UINT32_MAX;
}

/* Which joints go direct, and their rows in family order. Returns the row count. */
static uint32_t choose(pbd_world* w, pbd_joint_direct* d, uint32_t* parent, uint32_t* count) {
	pbd_family* f = &w->fam[PBD_FAMILY_JOINT];
	pbd_joint_c* c = (pbd_joint_c*)f->hot;
	const uint32_t nb = w->bodies.n;
	for (uint32_t i = 0; i < nb; ++i) parent[i] = i, count[i] = 0;
	for (uint32_t k = 0; k < f->n; ++k) {
		const uint32_t a = mover(&c[k], 0), b = mover(&c[k], 1);
		if (!rows_of(&c[k]) || a == UINT32_MAX || b == UINT32_MAX) continue;
		const uint32_t ra = find(parent, a), rb = find(parent, b);
		if (ra != rb) parent[ra < rb ? rb : ra] = ra < rb ? ra : rb;
	}
	for (uint32_t k = 0; k < f->n; ++k) {
		const uint32_t a = mover(&c[k], 0), b = mover(&c[k], 1);
		const uint32_t body = a != UINT32_MAX ? a : b;
		if (rows_of(&c[k]) && body != UINT32_MAX) count[find(parent, body)] += rows_of(&c[k]);
	}
	uint32_t n = 0;
	for (uint32_t k = 0; k < f->n; ++k) {
		const uint32_t a = mover(&c[k], 0), b = mover(&c[k], 1);
		const uint32_t body = a != UINT32_MAX ? a : b;
		const uint32_t rows = rows_of(&c[k]);
		if (!rows || body == UINT32_MAX || count[find(parent, body)] > PBD_JOINT_DIRECT_MAX_ROWS) continue;
		c[k].flags |= PBD_JOINT_DIRECT;
		for (uint32_t r = 0; r < rows; ++r) {
			pbd_joint_row row = {k, 0, 0, (uint8_t)r, 0};
			const pbd_joint_type t = (pbd_joint_type)c[k].type;
			if (t == PBD_JOINT_PRISMATIC)
				row.kind = r < 2 ? ROW_SLIDE : ROW_TURN, row.axis = (uint8_t)(r < 2 ? r : r - 2);
			else if (t == PBD_JOINT_HINGE)
				row.kind = r < 3 ? ROW_POINT : ROW_ALIGN, row.axis = (uint8_t)(r < 3 ? r : r - 3);
			else
				row.kind = r < 3 ? ROW_POINT : ROW_TURN, row.axis = (uint8_t)(r < 3 ? r : r - 3);
			d->rows[n++] = row;
		}
	}
	return n;
}

/* The entries: per moving body every pair of its rows, then one diagonal term per row. */
static bool lay_out(pbd_world* w, pbd_joint_direct* d, uint32_t* start) {
	const pbd_family* f = &w->fam[PBD_FAMILY_JOINT];
	const pbd_joint_c* c = (const pbd_joint_c*)f->hot;
	const uint32_t nb = w->bodies.n;
	memset(start, 0, (size_t)(nb + 1) * sizeof *start);
	for (uint32_t i = 0; i < d->nrows; ++i)
		for (int s = 0; s < 2; ++s) {
			const uint32_t b = mover(&c[d->rows[i].joint], s);
			if (b != UINT32_MAX) start[b + 1]++;
		}
	uint64_t entries = d->nrows;
	for (uint32_t b = 0; b < nb; ++b) {
		entries += (uint64_t)start[b + 1] * (start[b + 1] + 1) / 2;
		start[b + 1] += start[b];
	}
	if (entries > UINT32_MAX / 2 || !reserve_entries(w, d, (uint32_t)entries)) return false;
	/* body_rows holds (row << 1 | side) by body, in row order */
	for (uint32_t i = 0; i < d->nrows; ++i)
		for (uint32_t s = 0; s < 2; ++s) {
			const uint32_t b = mover(&c[d->rows[i].joint], (int)s);
			if (b != UINT32_MAX) d->body_rows[start[b]++] = i << 1 | s;
		}
	for (uint32_t b = nb; b > 0; --b) start[b] = start[b - 1];
	start[0] = 0;
	uint32_t n = 0;
	for (uint32_t b = 0; b < nb; ++b)
		for (uint32_t p = start[b]; p < start[b + 1]; ++p)
			for (uint32_t q = start[b]; q <= p; ++q) {
				const uint32_t rp = d->body_rows[p], rq = d->body_rows[q];
				/* rows in order within a body, so p's row is the larger */
				d->entries[n++] = (pbd_joint_entry){rp >> 1, rq >> 1, b, (uint8_t)(rp & 1), (uint8_t)(rq & 1), {0, 0}};
			}
	for (uint32_t i = 0; i < d->nrows; ++i) d->entries[n++] = (pbd_joint_entry){i, i, UINT32_MAX, 0, 0, {0, 0}};
	d->nentries = n;
	for (uint32_t e = 0; e < n; ++e) d->erow[e] = d->entries[e].i, d->ecol[e] = d->entries[e].j;
	const pbd_sparse_pattern pat = {d->nrows, n, NULL, d->ecol, d->erow};
	return pbd_sparse_chol_analyze(&d->chol, &w->mem, &pat, NULL) == PBD_OK;
}

pbd_status pbd_joint_direct_prepare(pbd_world* w) {
	pbd_joint_direct* d = w->jdirect;
	pbd_family* f = &w->fam[PBD_FAMILY_JOINT];
	if (d->topology == w->topology && d->topology != 0) return PBD_OK;
	d->topology = w->topology;
	d->failed = false;
	d->nrows = 0;
	clear_flags(f);
	if (f->n == 0) return PBD_OK;
	uint32_t rows = 0;
	for (uint32_t k = 0; k < f->n; ++k) rows += rows_of(&((const pbd_joint_c*)f->hot)[k]);
	const uint32_t nb = w->bodies.n;
	/* the scratch holds two arrays of a body each while choosing, then the body starts and the
	 * rows by body (two a row) while laying out */
	const uint64_t scratch = 2 * (uint64_t)nb + 1 + 2 * (uint64_t)rows;
	if (rows == 0) return PBD_OK;
	if (scratch > UINT32_MAX || !reserve_rows(w, d, rows) ||
	    !pbd_grow_to(&w->mem, (void**)&d->body_rows, sizeof *d->body_rows, &d->cap_scratch, (uint32_t)scratch))
		goto fail;
	d->nrows = choose(w, d, d->body_rows, d->body_rows + nb);
	if (d->nrows == 0) return PBD_OK;
	/* lay_out reads body_rows from its start: the body starts go past the rows */
	if (!lay_out(w, d, d->body_rows + 2 * (size_t)rows)) goto fail;
	return PBD_OK;
fail:
	d->nrows = 0;
	clear_flags(f);
	return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for the direct solve of %u joint rows",
	                rows);
}

static pbd_vec3 axis_of(pbd_quat q, int axis) {
	return pbd_quat_rotate(q, axis == 0 ? pbd_v3(1, 0, 0) : axis == 1 ? pbd_v3(0, 1, 0) : pbd_v3(0, 0, 1));
}

static pbd_vec3 basis(int axis) { return axis == 0 ? pbd_v3(1, 0, 0) : axis == 1 ? pbd_v3(0, 1, 0) : pbd_v3(0, 0, 1); }

/* Each row's C and gradients at the current corrections: jac[4 i] and [4 i + 1] the linear and
 * angular parts on a, [4 i + 2] and [4 i + 3] on b. */
static void linearise(const pbd_world* w, pbd_joint_direct* d) {
	const pbd_family* f = &w->fam[PBD_FAMILY_JOINT];
	const pbd_joint_c* c = (const pbd_joint_c*)f->hot;
	const pbd_bodies* b = &w->bodies;
	uint32_t joint = UINT32_MAX;
	pbd_joint_side A = {0, {0, 0, 0}, {0, 0, 0, 1}}, B = A;
	pbd_vec3 sep = pbd_v3(0, 0, 0), turn = sep, align = sep;
	for (uint32_t i = 0; i < d->nrows; ++i) {
		const pbd_joint_row* row = &d->rows[i];
		pbd_vec3* jac = &d->jac[4 * (size_t)i];
		const pbd_joint_c* cj = &c[row->joint];
		const uint32_t ma = mover(cj, 0), mb = mover(cj, 1);
		const bool still = (ma == UINT32_MAX || b->asleep[ma]) && (mb == UINT32_MAX || b->asleep[mb]);
		if ((cj->flags & PBD_JOINT_BROKEN) || still) {
			jac[0] = jac[1] = jac[2] = jac[3] = pbd_v3(0, 0, 0);
			d->err[i] = 0;
			continue;
		}
		if (row->joint != joint) {
			joint = row->joint;
			pbd_joint_sides(b, cj, &A, &B);
			sep = pbd_joint_separation(b, &A, &B);
			turn = pbd_joint_turn_of(A.rot, B.rot);
			align = pbd_joint_turn_between(axis_of(A.rot, 0), axis_of(B.rot, 0));
		}
		if (row->kind == ROW_POINT || row->kind == ROW_SLIDE) {
			const pbd_vec3 u = row->kind == ROW_POINT ? basis(row->axis) : axis_of(A.rot, row->axis + 1);
			d->err[i] = pbd_v3_dot(sep, u);
			jac[0] = pbd_v3_scale(u, -1);
			jac[1] = pbd_v3_scale(pbd_v3_cross(A.r, u), -1);
			jac[2] = u;
			jac[3] = pbd_v3_cross(B.r, u);
		} else {
			const pbd_vec3 u = row->kind == ROW_TURN ? basis(row->axis) : axis_of(A.rot, row->axis + 1);
			d->err[i] = pbd_v3_dot(row->kind == ROW_TURN ? turn : align, u);
			jac[0] = pbd_v3(0, 0, 0);
			jac[1] = pbd_v3_scale(u, -1);
			jac[2] = pbd_v3(0, 0, 0);
			jac[3] = u;
		}
	}
}

static double dot(pbd_vec3 a, pbd_vec3 b) {
	return (double)a.x * (double)b.x + (double)a.y * (double)b.y + (double)a.z * (double)b.z;
}

static bool newton_pass(pbd_world* w, pbd_joint_direct* d, const pbd_step_ctx* ctx, int pass);

void pbd_joint_direct_iterate(pbd_world* w, const pbd_step_ctx* ctx) {
	pbd_joint_direct* d = w->jdirect;
	if (d->nrows == 0 || d->failed) return;
	for (int pass = 0; pass < PBD_JOINT_DIRECT_PASSES; ++pass)
		if (!newton_pass(w, d, ctx, pass)) break;
}

/* One Newton pass: the rows linearised where the corrections so far put the bodies, solved
 * together and applied. Returns false when there is nothing more to do: the rows already hold
 * (after the first pass) or the factor failed. */
static bool newton_pass(pbd_world* w, pbd_joint_direct* d, const pbd_step_ctx* ctx, int pass) {
	pbd_family* f = &w->fam[PBD_FAMILY_JOINT];
	const pbd_joint_c* c = (const pbd_joint_c*)f->hot;
	pbd_bodies* b = ctx->bodies;
	linearise(w, d);
	if (pass > 0) {
		double most = 0;
		for (uint32_t i = 0; i < d->nrows; ++i) {
			const pbd_joint_row* row = &d->rows[i];
			const pbd_real* lambda = f->lambda + (size_t)row->joint * PBD_JOINT_L_COUNT;
			const double r = (double)d->err[i] + (double)(c[row->joint].compliance * ctx->inv_h2) *
			                                         (double)lambda[PBD_JOINT_L_ROWS + row->index];
			most = fmax(most, fabs(r));
		}
		if (!(most > PBD_JOINT_DIRECT_HOLDS)) return false;
	}
	/* the body terms first, each row's own sum kept in rhs for its diagonal term */
	for (uint32_t i = 0; i < d->nrows; ++i) d->rhs[i] = 0;
	for (uint32_t e = 0; e < d->nentries; ++e) {
		const pbd_joint_entry* en = &d->entries[e];
		if (en->body == UINT32_MAX) continue;
		const pbd_vec3* ji = &d->jac[4 * (size_t)en->i + 2 * en->side_i];
		const pbd_vec3* jj = &d->jac[4 * (size_t)en->j + 2 * en->side_j];
		/* a body asleep takes nothing (one joined to an awake one until the step's end wakes it) */
		const double v = b->asleep[en->body] ? 0
		                                     : (double)b->inv_mass[en->body] * dot(ji[0], jj[0]) +
		                                           dot(ji[1], pbd_node_inv_inertia(b, en->body, jj[1]));
		d->values[e] = v;
		if (en->i == en->j) d->rhs[en->i] += v;
	}
	for (uint32_t e = 0; e < d->nentries; ++e) {
		const pbd_joint_entry* en = &d->entries[e];
		if (en->body != UINT32_MAX) continue;
		const pbd_joint_c* cj = &c[d->rows[en->i].joint];
		const double own = d->rhs[en->i];
		d->values[e] = own > 0 ? (double)(cj->compliance * ctx->inv_h2) + REGULARISE * own : 1;
	}
	for (uint32_t i = 0; i < d->nrows; ++i) {
		const pbd_joint_row* row = &d->rows[i];
		const pbd_real* lambda = f->lambda + (size_t)row->joint * PBD_JOINT_L_COUNT;
		d->rhs[i] = -(double)d->err[i] -
		            (double)(c[row->joint].compliance * ctx->inv_h2) * (double)lambda[PBD_JOINT_L_ROWS + row->index];
	}
	if (pbd_sparse_chol_factor(&d->chol, d->values) != PBD_OK) {
		d->failed = true;
		clear_flags(f);
		pbd_log(w, "pbd_world_step: the direct solve of %u joint rows failed; the joints are projected one by one",
		        d->nrows);
		return false;
	}
	pbd_sparse_chol_solve(&d->chol, d->rhs, d->x);
	for (uint32_t i = 0; i < d->nrows; ++i) {
		const pbd_joint_row* row = &d->rows[i];
		const pbd_joint_c* cj = &c[row->joint];
		if (cj->flags & PBD_JOINT_BROKEN) continue;
		const pbd_real dl = (pbd_real)d->x[i];
		pbd_real* l = f->lambda + (size_t)row->joint * PBD_JOINT_L_COUNT;
		l[PBD_JOINT_L_ROWS + row->index] += dl;
		const pbd_vec3* jac = &d->jac[4 * (size_t)i];
		for (int s = 0; s < 2; ++s) {
			const uint32_t body = mover(cj, s);
			if (body == UINT32_MAX || b->asleep[body]) continue;
			b->dx[body] = pbd_v3_add(b->dx[body], pbd_v3_scale(jac[2 * s], b->inv_mass[body] * dl));
			b->dtheta[body] =
			    pbd_v3_add(b->dtheta[body], pbd_node_inv_inertia(b, body, pbd_v3_scale(jac[2 * s + 1], dl)));
		}
		/* what b felt: the positional rows' push, the turning rows' torque */
		const bool point = row->kind == ROW_POINT || row->kind == ROW_SLIDE;
		const pbd_vec3 imp = pbd_v3_scale(point ? jac[2] : jac[3], dl);
		pbd_real* acc = l + (point ? PBD_JOINT_L_FORCE : PBD_JOINT_L_TORQUE);
		acc[0] += imp.x, acc[1] += imp.y, acc[2] += imp.z;
	}
	return true;
}
