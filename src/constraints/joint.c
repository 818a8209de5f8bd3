/* Joints (docs/joints.md): a family whose nodes are rigid bodies, projected with the particles'
 * constraints in the same colours and iterations, as Müller et al. 2020 ("Detailed rigid body
 * simulation with extended position based dynamics", section 3.3-3.4) solve them.
 *
 * Every part of a joint is one of two corrections between its sides a and b:
 *
 *  - positional: the two points should coincide along a direction. With d the vector from a's
 *    point to b's, C = |d| and n = d / |d|; each side's generalised inverse mass at its lever
 *    arm r is w = 1/m + (r x n) . I^-1 (r x n) (model/node.h), and
 *    dlambda = (-C - alpha~ lambda) / (w_a + w_b + alpha~), alpha~ = compliance / h^2,
 *    moves b by dlambda n at its point and a by -dlambda n at its.
 *  - angular: b's frame is turned by the rotation vector e from where it should be. With
 *    theta = |e|, n = e / theta and w = n . I^-1 n per side, the same dlambda turns b by
 *    dlambda I_b^-1 n and a by -dlambda I_a^-1 n.
 *
 * The positional and angular holds of a joint, its limits and a position motor are such
 * corrections, each with its multiplier; a limit corrects only past its bound. The corrections
 * gather in the bodies' dx and dtheta, and the frames are read as those have moved and turned
 * them (model/node.h), so each part sees the parts before it. Joints always use the compliance
 * (XPBD): with 0, a joint holds rigidly under either formulation.
 *
 * After the iterations the multipliers over h^2 are the force and torque the joint exerted in
 * the substep (Müller et al. 2020, section 3.5), which break a joint past its thresholds. A
 * velocity motor acts after the velocities, as an impulse toward the target speed bounded by
 * its torque or force times h. */
#include <math.h>
#include <string.h>

#include "constraints/joint.h"
#include "model/node.h"
#include "model/world.h"

#define FAM(w)  (&(w)->fam[PBD_FAMILY_JOINT])
#define HOT(f)  ((pbd_joint_c*)(f)->hot)
#define COLD(f) ((pbd_joint_p*)(f)->cold)

/* Cold data: what the API gives back and the kernels never read. */
typedef struct pbd_joint_p {
	uint32_t gen_a, gen_b; /* the bodies' generations, for the ids */
	int32_t cookie;
	uint32_t zero; /* keeps the record free of padding */
} pbd_joint_p;

_Static_assert(sizeof(pbd_joint_p) == 4 * sizeof(uint32_t), "padding in joint cold record");

static const pbd_real pi = PBD_R(3.14159265358979323846);

/* ---- the sides as the substep's corrections have moved them -------------------------------- */

typedef pbd_joint_side side;

/* The orientation of body slot i with the substep's turn dtheta so far: q + (dtheta, 0) q / 2,
 * normalised, as the substep's end will apply it (bodies.c). */
static pbd_quat orientation_now(const pbd_bodies* b, uint32_t i) {
	const pbd_quat q = b->q[i];
	const pbd_vec3 t = b->dtheta[i];
	if (t.x == 0 && t.y == 0 && t.z == 0) return q;
	const pbd_quat spin = {t.x / 2, t.y / 2, t.z / 2, 0};
	const pbd_quat dq = pbd_quat_mul(spin, q);
	pbd_quat r = {q.x + dq.x, q.y + dq.y, q.z + dq.z, q.w + dq.w};
	const pbd_real inv = 1 / PBD_SQRT(r.x * r.x + r.y * r.y + r.z * r.z + r.w * r.w);
	r.x *= inv, r.y *= inv, r.z *= inv, r.w *= inv;
	return r;
}

/* The body's user frame, q * conj(principal) (bodies.h), turned as the substep's end will turn
 * it (bodies.c), not by the linear dtheta x r: a light link between heavy ones turns by a large
 * angle within a substep, and a point moved by the linear rule is not where the body then puts
 * it. */
static pbd_quat user_now(const pbd_bodies* b, uint32_t i) {
	return pbd_quat_mul(orientation_now(b, i), pbd_quat_conj(b->principal[i]));
}

static side side_of(const pbd_bodies* b, uint32_t body, pbd_vec3 p, pbd_quat rot) {
	side sd;
	if (body == 0) {
		sd.s = UINT32_MAX;
		sd.r = p;
		sd.rot = rot;
		return sd;
	}
	sd.s = body - 1;
	const pbd_quat user = user_now(b, sd.s);
	sd.r = pbd_quat_rotate(user, pbd_v3_sub(p, b->center[sd.s]));
	sd.rot = pbd_quat_mul(user, rot);
	return sd;
}

/* A side for a point hold, which reads the arm alone: side_of's arm to the bit, without the
 * frame's rotation (a quaternion product per side and projection), left as the identity. */
static side point_side(const pbd_bodies* b, uint32_t body, pbd_vec3 p) {
	side sd;
	sd.rot = pbd_quat_identity();
	if (body == 0) {
		sd.s = UINT32_MAX;
		sd.r = p;
		return sd;
	}
	sd.s = body - 1;
	sd.r = pbd_quat_rotate(user_now(b, sd.s), pbd_v3_sub(p, b->center[sd.s]));
	return sd;
}

/* The sides a joint's point part reads: only a prismatic's reads a frame (its axis). */
static void point_sides(const pbd_bodies* b, const pbd_joint_c* c, side* A, side* B) {
	if (c->type == PBD_JOINT_PRISMATIC) {
		pbd_joint_sides(b, c, A, B);
	} else {
		*A = point_side(b, c->a, c->pa);
		*B = point_side(b, c->b, c->pb);
	}
}

/* b's point less a's: the centres' difference first, then their remainders and the arms and
 * moves, so that two bodies far from the origin lose nothing to rounding. */
pbd_vec3 pbd_joint_separation(const pbd_bodies* b, const side* A, const side* B) {
	pbd_vec3 d, near = pbd_v3(0, 0, 0);
	if (A->s != UINT32_MAX && B->s != UINT32_MAX)
		d = pbd_v3_sub(b->x[B->s], b->x[A->s]);
	else if (B->s != UINT32_MAX)
		d = pbd_v3_sub(b->x[B->s], A->r);
	else if (A->s != UINT32_MAX)
		d = pbd_v3_sub(B->r, b->x[A->s]);
	else
		d = pbd_v3_sub(B->r, A->r); /* both bodies gone */
	if (B->s != UINT32_MAX) near = pbd_v3_add(near, pbd_v3_add(pbd_v3_add(b->x_lo[B->s], B->r), b->dx[B->s]));
	if (A->s != UINT32_MAX) near = pbd_v3_sub(near, pbd_v3_add(pbd_v3_add(b->x_lo[A->s], A->r), b->dx[A->s]));
	return pbd_v3_add(d, near);
}

void pbd_joint_sides(const pbd_bodies* b, const pbd_joint_c* c, side* A, side* B) {
	*A = side_of(b, c->a, c->pa, c->ra);
	*B = side_of(b, c->b, c->pb, c->rb);
}

static pbd_vec3 axis_x(pbd_quat q) { return pbd_quat_rotate(q, pbd_v3(1, 0, 0)); }
static pbd_vec3 axis_y(pbd_quat q) { return pbd_quat_rotate(q, pbd_v3(0, 1, 0)); }

static bool dynamic(const pbd_bodies* b, const side* s) { return s->s != UINT32_MAX && pbd_body_moves(b, s->s); }

/* ---- the two corrections ------------------------------------------------------------------- */

static pbd_real dlambda(pbd_real C, pbd_real wsum, pbd_real compliance, pbd_real inv_h2, pbd_real* lambda) {
	const pbd_real at = compliance * inv_h2;
	const pbd_real den = wsum + at;
	if (!(den > 0)) return 0;
	const pbd_real dl = (-C - at * *lambda) / den;
	*lambda += dl;
	return dl;
}

/* Removes the vector d (b's point less a's) along its direction. */
static void correct_point(const pbd_step_ctx* ctx, const side* A, const side* B, pbd_vec3 d, pbd_real compliance,
                          pbd_real* lambda, pbd_real* impulse) {
	pbd_bodies* b = ctx->bodies;
	const pbd_real C = pbd_v3_length(d);
	if (!(C >= PBD_EPSILON_LENGTH)) return;
	const pbd_vec3 n = pbd_v3_scale(d, 1 / C);
	pbd_vec3 ia = pbd_v3(0, 0, 0), ib = pbd_v3(0, 0, 0);
	const pbd_real wa = A->s != UINT32_MAX ? pbd_node_body_weight(b, A->s, A->r, n, &ia) : 0;
	const pbd_real wb = B->s != UINT32_MAX ? pbd_node_body_weight(b, B->s, B->r, n, &ib) : 0;
	const pbd_real dl = dlambda(C, wa + wb, compliance, ctx->inv_h2, lambda);
	if (dl == 0) return;
	if (A->s != UINT32_MAX) pbd_node_body_push(b, A->s, n, ia, -dl);
	if (B->s != UINT32_MAX) pbd_node_body_push(b, B->s, n, ib, dl);
	impulse[0] += dl * n.x, impulse[1] += dl * n.y, impulse[2] += dl * n.z;
}

/* Turns b back by the rotation vector e (and a forward), in the ratio of their inertias. */
static void correct_angle(const pbd_step_ctx* ctx, const side* A, const side* B, pbd_vec3 e, pbd_real compliance,
                          pbd_real* lambda, pbd_real* impulse) {
	pbd_bodies* b = ctx->bodies;
	const pbd_real theta = pbd_v3_length(e);
	if (!(theta >= PBD_EPSILON_LENGTH)) return;
	const pbd_vec3 n = pbd_v3_scale(e, 1 / theta);
	const bool ma = dynamic(b, A), mb = dynamic(b, B);
	const pbd_vec3 ia = ma ? pbd_node_inv_inertia(b, A->s, n) : pbd_v3(0, 0, 0);
	const pbd_vec3 ib = mb ? pbd_node_inv_inertia(b, B->s, n) : pbd_v3(0, 0, 0);
	const pbd_real dl = dlambda(theta, pbd_v3_dot(n, ia) + pbd_v3_dot(n, ib), compliance, ctx->inv_h2, lambda);
	if (dl == 0) return;
	if (ma) b->dtheta[A->s] = pbd_v3_sub(b->dtheta[A->s], pbd_v3_scale(ia, dl));
	if (mb) b->dtheta[B->s] = pbd_v3_add(b->dtheta[B->s], pbd_v3_scale(ib, dl));
	impulse[0] += dl * n.x, impulse[1] += dl * n.y, impulse[2] += dl * n.z;
}

/* ---- the angles a joint measures ------------------------------------------------------------ */

pbd_vec3 pbd_joint_turn_between(pbd_vec3 u, pbd_vec3 v) {
	const pbd_vec3 x = pbd_v3_cross(u, v);
	const pbd_real s = pbd_v3_length(x);
	if (!(s >= PBD_EPSILON_LENGTH)) return pbd_v3(0, 0, 0); /* aligned, or opposite: no one way round */
	const pbd_real angle = (pbd_real)atan2((double)s, (double)pbd_v3_dot(u, v));
	return pbd_v3_scale(x, angle / s);
}

pbd_vec3 pbd_joint_turn_of(pbd_quat ra, pbd_quat rb) {
	pbd_quat d = pbd_quat_mul(rb, pbd_quat_conj(ra));
	if (d.w < 0) d = (pbd_quat){-d.x, -d.y, -d.z, -d.w};
	const pbd_real s = PBD_SQRT(d.x * d.x + d.y * d.y + d.z * d.z);
	if (!(s >= PBD_EPSILON_LENGTH)) return pbd_v3(2 * d.x, 2 * d.y, 2 * d.z);
	const pbd_real angle = 2 * (pbd_real)atan2((double)s, (double)d.w);
	return pbd_v3_scale(pbd_v3(d.x, d.y, d.z), angle / s);
}

/* The angle of b's y axis about the axis n from a's, both taken in the plane across n. */
static pbd_real angle_about(pbd_vec3 n, pbd_quat ra, pbd_quat rb) {
	const pbd_vec3 ya = axis_y(ra), yb = axis_y(rb);
	const pbd_vec3 pa = pbd_v3_sub(ya, pbd_v3_scale(n, pbd_v3_dot(ya, n)));
	const pbd_vec3 pb = pbd_v3_sub(yb, pbd_v3_scale(n, pbd_v3_dot(yb, n)));
	return (pbd_real)atan2((double)pbd_v3_dot(pbd_v3_cross(pa, pb), n), (double)pbd_v3_dot(pa, pb));
}

/* The axis both frames turn about for a twist: the mean of the two x axes; false when they point
 * opposite ways. */
static bool twist_axis(pbd_quat ra, pbd_quat rb, pbd_vec3* n) {
	const pbd_vec3 m = pbd_v3_add(axis_x(ra), axis_x(rb));
	const pbd_real len = pbd_v3_length(m);
	if (!(len >= PBD_R(1e-6))) return false;
	*n = pbd_v3_scale(m, 1 / len);
	return true;
}

/* An angle difference in (-pi, pi]. */
static pbd_real wrap(pbd_real a) {
	while (a > pi) a -= 2 * pi;
	while (a <= -pi) a += 2 * pi;
	return a;
}

/* How far x lies outside [lo, hi] (signed: negative below). */
static pbd_real outside(pbd_real x, pbd_real lo, pbd_real hi) { return x < lo ? x - lo : x > hi ? x - hi : 0; }

static pbd_joint_motor motor_of(const pbd_joint_c* c) {
	return (pbd_joint_motor)((c->flags & PBD_JOINT_MOTOR_MASK) >> PBD_JOINT_MOTOR_SHIFT);
}

/* ---- projection ----------------------------------------------------------------------------- */

static void project_one(const pbd_step_ctx* ctx, const pbd_joint_c* c, pbd_real* l) {
	const pbd_bodies* b = ctx->bodies;
	pbd_real* force = l + PBD_JOINT_L_FORCE;
	pbd_real* torque = l + PBD_JOINT_L_TORQUE;
	const bool limit = (c->flags & PBD_JOINT_LIMIT) != 0;
	const bool hold = !(c->flags & PBD_JOINT_DIRECT); /* the holds, unless the direct solve has them */
	side A, B;
	/* The angular parts first: the positional ones then act through arms in their final
	 * directions. A ball joint without limits has none. */
	const bool angular = c->type != PBD_JOINT_DISTANCE && !(c->type == PBD_JOINT_BALL && !limit && c->swing >= pi);
	if (angular) pbd_joint_sides(b, c, &A, &B);
	switch (angular ? (pbd_joint_type)c->type : PBD_JOINT_TYPE_COUNT) {
	case PBD_JOINT_FIXED:
	case PBD_JOINT_PRISMATIC:
		if (hold)
			correct_angle(ctx, &A, &B, pbd_joint_turn_of(A.rot, B.rot), c->compliance, &l[PBD_JOINT_L_ANGLE], torque);
		break;
	case PBD_JOINT_HINGE: {
		if (hold)
			correct_angle(ctx, &A, &B, pbd_joint_turn_between(axis_x(A.rot), axis_x(B.rot)), c->compliance,
			              &l[PBD_JOINT_L_ANGLE], torque);
		const bool drive = motor_of(c) == PBD_MOTOR_POSITION;
		if (!limit && !drive) break;
		pbd_joint_sides(b, c, &A, &B);
		pbd_vec3 n;
		if (!twist_axis(A.rot, B.rot, &n)) break;
		const pbd_real theta = angle_about(n, A.rot, B.rot);
		if (limit)
			correct_angle(ctx, &A, &B, pbd_v3_scale(n, outside(theta, c->lower, c->upper)), 0, &l[PBD_JOINT_L_LIMIT],
			              torque);
		if (drive) {
			pbd_joint_sides(b, c, &A, &B);
			correct_angle(ctx, &A, &B, pbd_v3_scale(n, wrap(angle_about(n, A.rot, B.rot) - c->motor_target)),
			              c->motor_compliance, &l[PBD_JOINT_L_MOTOR], torque);
		}
		break;
	}
	case PBD_JOINT_BALL: {
		if (c->swing < pi) {
			const pbd_vec3 e = pbd_joint_turn_between(axis_x(A.rot), axis_x(B.rot));
			const pbd_real phi = pbd_v3_length(e);
			if (phi > c->swing)
				correct_angle(ctx, &A, &B, pbd_v3_scale(e, (phi - c->swing) / phi), 0, &l[PBD_JOINT_L_LIMIT], torque);
		}
		if (limit) {
			pbd_joint_sides(b, c, &A, &B);
			pbd_vec3 n;
			if (twist_axis(A.rot, B.rot, &n))
				correct_angle(ctx, &A, &B, pbd_v3_scale(n, outside(angle_about(n, A.rot, B.rot), c->lower, c->upper)),
				              0, &l[PBD_JOINT_L_LIMIT2], torque);
		}
		break;
	}
	case PBD_JOINT_DISTANCE:
	case PBD_JOINT_TYPE_COUNT:
		break;
	}
	point_sides(b, c, &A, &B);
	const pbd_vec3 d = pbd_joint_separation(b, &A, &B);
	switch ((pbd_joint_type)c->type) {
	case PBD_JOINT_FIXED:
	case PBD_JOINT_BALL:
	case PBD_JOINT_HINGE:
		if (hold) correct_point(ctx, &A, &B, d, c->compliance, &l[PBD_JOINT_L_POINT], force);
		break;
	case PBD_JOINT_PRISMATIC: {
		/* off the axis held; along it the limit and the drive */
		const pbd_vec3 x = axis_x(A.rot);
		const pbd_real s = pbd_v3_dot(d, x);
		if (hold)
			correct_point(ctx, &A, &B, pbd_v3_sub(d, pbd_v3_scale(x, s)), c->compliance, &l[PBD_JOINT_L_POINT], force);
		if (limit) {
			pbd_joint_sides(b, c, &A, &B);
			const pbd_real s1 = pbd_v3_dot(pbd_joint_separation(b, &A, &B), x);
			correct_point(ctx, &A, &B, pbd_v3_scale(x, outside(s1, c->lower, c->upper)), 0, &l[PBD_JOINT_L_LIMIT],
			              force);
		}
		if (motor_of(c) == PBD_MOTOR_POSITION) {
			pbd_joint_sides(b, c, &A, &B);
			const pbd_real s2 = pbd_v3_dot(pbd_joint_separation(b, &A, &B), x);
			correct_point(ctx, &A, &B, pbd_v3_scale(x, s2 - c->motor_target), c->motor_compliance,
			              &l[PBD_JOINT_L_MOTOR], force);
		}
		break;
	}
	case PBD_JOINT_DISTANCE: {
		const pbd_real len = pbd_v3_length(d);
		if (!(len >= PBD_EPSILON_LENGTH)) break; /* no direction to push apart along */
		correct_point(ctx, &A, &B, pbd_v3_scale(d, outside(len, c->lower, c->upper) / len), c->compliance,
		              &l[PBD_JOINT_L_POINT], force);
		break;
	}
	case PBD_JOINT_TYPE_COUNT:
		break;
	}
}

/* What project_one does for a joint that holds its point alone (pbd_joint_point_only), without
 * its dispatch: the most common joint of nets and chains. simd/joint_avx2.c does the same in
 * lanes. */
static void hold_point(const pbd_step_ctx* ctx, const pbd_joint_c* c, pbd_real* l) {
	const pbd_bodies* b = ctx->bodies;
	const side A = point_side(b, c->a, c->pa), B = point_side(b, c->b, c->pb);
	correct_point(ctx, &A, &B, pbd_joint_separation(b, &A, &B), c->compliance, &l[PBD_JOINT_L_POINT],
	              l + PBD_JOINT_L_FORCE);
}

/* Jacobi runs the same projection: a joint's nodes are bodies, which every solver moves at once,
 * one colour at a time (attachment.c). */
void pbd_joint_project(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_joint_c* c = HOT(f);
	const pbd_bodies* b = ctx->bodies;
	for (uint32_t k = first; k < end; ++k) {
		if (c[k].flags & PBD_JOINT_BROKEN) continue;
		/* an island asleep: neither side takes a correction */
		if ((!c[k].a || !pbd_body_moves(b, c[k].a - 1)) && (!c[k].b || !pbd_body_moves(b, c[k].b - 1))) continue;
		pbd_real* l = f->lambda + (size_t)k * PBD_JOINT_L_COUNT;
		if (pbd_joint_point_only(&c[k]))
			hold_point(ctx, &c[k], l);
		else
			project_one(ctx, &c[k], l);
	}
}

static void refresh(pbd_family* f, const pbd_step_ctx* ctx) { (void)f, (void)ctx; }

static uint32_t particles(const pbd_family* f, uint32_t k, uint32_t first, uint32_t* out, uint32_t cap) {
	const pbd_joint_c* c = &HOT(f)[k];
	uint32_t nodes[2], n = 0;
	if (c->flags & PBD_JOINT_A_MOVES) nodes[n++] = f->node_base + c->a - 1;
	if (c->flags & PBD_JOINT_B_MOVES) nodes[n++] = f->node_base + c->b - 1;
	for (uint32_t j = first; j < n && j - first < cap; ++j) out[j - first] = nodes[j];
	return n;
}

/* ---- the stages outside the iterations ------------------------------------------------------ */

static void record_break(pbd_world* w, uint32_t user, pbd_real force, pbd_real torque) {
	/* a step rarely breaks a joint: the list grows then, and only then */
	if (!pbd_grow_to(&w->mem, (void**)&w->jev, sizeof *w->jev, &w->cap_jev, w->njev + 1)) {
		/* the joint still breaks; the step reports that its events are incomplete */
		if (w->step_status == PBD_OK) w->step_status = PBD_ERR_OUT_OF_MEMORY;
		pbd_log(w, "pbd_world_step: out of memory for the event of joint %u, which broke", user);
		return;
	}
	w->jev[w->njev++] = (pbd_joint_event){user, force, torque};
}

/* Set on a joint that broke in the pass below, in the blocks, and cleared by the step that
 * reports it, on the calling thread: it never outlives pbd_joints_after_iterations. */
#define JOINT_BREAKING (1u << 16)

typedef struct after_stage {
	pbd_family* f;
	const pbd_bodies* b;
	uint32_t size; /* joints per block */
	pbd_real inv_h2;
	_Atomic bool broke; /* some joint broke: its event is still to be recorded */
} after_stage;

/* Each joint's force and torque and whether it breaks, in blocks of joints on the world's
 * threads: a joint reads and writes only its own record and multipliers. */
static void after_block(void* p, uint32_t block, uint32_t worker) {
	(void)worker;
	after_stage* s = (after_stage*)p;
	pbd_family* f = s->f;
	pbd_joint_c* c = HOT(f);
	const pbd_bodies* b = s->b;
	const pbd_real inv_h2 = s->inv_h2;
	const uint32_t first = block * s->size, end = pbd_block_end(first, f->n, s->size);
	bool broke = false;
	for (uint32_t k = first; k < end; ++k) {
		pbd_real* l = f->lambda + (size_t)k * PBD_JOINT_L_COUNT;
		/* an island asleep keeps the forces it fell asleep with */
		if ((!c[k].a || !pbd_body_moves(b, c[k].a - 1)) && (!c[k].b || !pbd_body_moves(b, c[k].b - 1))) continue;
		c[k].force =
		    pbd_v3_scale(pbd_v3(l[PBD_JOINT_L_FORCE], l[PBD_JOINT_L_FORCE + 1], l[PBD_JOINT_L_FORCE + 2]), inv_h2);
		c[k].torque =
		    pbd_v3_scale(pbd_v3(l[PBD_JOINT_L_TORQUE], l[PBD_JOINT_L_TORQUE + 1], l[PBD_JOINT_L_TORQUE + 2]), inv_h2);
		memset(l, 0, PBD_JOINT_L_COUNT * sizeof *l);
		if ((c[k].flags & PBD_JOINT_BROKEN) || (c[k].break_force == 0 && c[k].break_torque == 0)) continue;
		const pbd_real fl = pbd_v3_length(c[k].force), tl = pbd_v3_length(c[k].torque);
		if ((c[k].break_force > 0 && fl > c[k].break_force) || (c[k].break_torque > 0 && tl > c[k].break_torque)) {
			c[k].flags |= PBD_JOINT_BROKEN | JOINT_BREAKING;
			broke = true;
		}
	}
	if (broke) atomic_store_explicit(&s->broke, true, memory_order_relaxed);
}

void pbd_joints_after_iterations(pbd_world* w, pbd_real h) {
	pbd_family* f = FAM(w);
	if (f->n == 0) return;
	after_stage s = {f, &w->bodies, w->exec.block_constraints, 1 / (h * h), false};
	pbd_exec_stage(&w->exec, after_block, &s, pbd_blocks(f->n, s.size));
	if (!atomic_load_explicit(&s.broke, memory_order_relaxed)) return;
	/* the events in the order of the joints, as one thread finds them */
	pbd_joint_c* c = HOT(f);
	for (uint32_t k = 0; k < f->n; ++k) {
		if (!(c[k].flags & JOINT_BREAKING)) continue;
		c[k].flags &= ~JOINT_BREAKING;
		record_break(w, f->user[k], pbd_v3_length(c[k].force), pbd_v3_length(c[k].torque));
	}
}

/* The velocity of side s's point (lever arm r) in the world. */
static pbd_vec3 point_velocity(const pbd_bodies* b, const side* s) {
	if (s->s == UINT32_MAX) return pbd_v3(0, 0, 0);
	return pbd_v3_add(b->v[s->s], pbd_v3_cross(b->omega[s->s], s->r));
}

static pbd_vec3 spin(const pbd_bodies* b, const side* s) {
	return s->s == UINT32_MAX ? pbd_v3(0, 0, 0) : b->omega[s->s];
}

/* A hinge's drive turns b about the axis relative to a; a slider's pushes b's point along it. The
 * impulse that reaches the target speed, bounded by the motor's force or torque over h. */
static void drive_velocity(pbd_bodies* b, pbd_joint_c* c, pbd_real h) {
	side A, B;
	pbd_joint_sides(b, c, &A, &B);
	const pbd_vec3 n = axis_x(A.rot);
	const bool ma = dynamic(b, &A), mb = dynamic(b, &B);
	const pbd_real bound = c->motor_max * h;
	if (c->type == PBD_JOINT_HINGE) {
		const pbd_vec3 ia = ma ? pbd_node_inv_inertia(b, A.s, n) : pbd_v3(0, 0, 0);
		const pbd_vec3 ib = mb ? pbd_node_inv_inertia(b, B.s, n) : pbd_v3(0, 0, 0);
		const pbd_real k = pbd_v3_dot(n, ia) + pbd_v3_dot(n, ib);
		if (!(k > 0)) return;
		const pbd_real speed = pbd_v3_dot(pbd_v3_sub(spin(b, &B), spin(b, &A)), n);
		pbd_real j = (c->motor_target - speed) / k;
		j = j > bound ? bound : j < -bound ? -bound : j;
		if (ma) b->omega[A.s] = pbd_v3_sub(b->omega[A.s], pbd_v3_scale(ia, j));
		if (mb) b->omega[B.s] = pbd_v3_add(b->omega[B.s], pbd_v3_scale(ib, j));
		c->torque = pbd_v3_add(c->torque, pbd_v3_scale(n, j / h));
		return;
	}
	pbd_vec3 ia = pbd_v3(0, 0, 0), ib = pbd_v3(0, 0, 0);
	const pbd_real wa = ma ? pbd_node_body_weight(b, A.s, A.r, n, &ia) : 0;
	const pbd_real wb = mb ? pbd_node_body_weight(b, B.s, B.r, n, &ib) : 0;
	if (!(wa + wb > 0)) return;
	const pbd_real speed = pbd_v3_dot(pbd_v3_sub(point_velocity(b, &B), point_velocity(b, &A)), n);
	pbd_real j = (c->motor_target - speed) / (wa + wb);
	j = j > bound ? bound : j < -bound ? -bound : j;
	if (ma) {
		b->v[A.s] = pbd_v3_sub(b->v[A.s], pbd_v3_scale(n, b->inv_mass[A.s] * j));
		b->omega[A.s] = pbd_v3_sub(b->omega[A.s], pbd_v3_scale(ia, j));
	}
	if (mb) {
		b->v[B.s] = pbd_v3_add(b->v[B.s], pbd_v3_scale(n, b->inv_mass[B.s] * j));
		b->omega[B.s] = pbd_v3_add(b->omega[B.s], pbd_v3_scale(ib, j));
	}
	c->force = pbd_v3_add(c->force, pbd_v3_scale(n, j / h));
}

void pbd_joints_velocities(pbd_world* w, pbd_real h) {
	pbd_family* f = FAM(w);
	pbd_joint_c* c = HOT(f);
	for (uint32_t k = 0; k < f->n; ++k)
		if (!(c[k].flags & PBD_JOINT_BROKEN) && motor_of(&c[k]) == PBD_MOTOR_VELOCITY)
			drive_velocity(&w->bodies, &c[k], h);
}

/* A change to a joint wakes what it joins. */
static void wake_sides(pbd_world* w, const pbd_joint_c* c) {
	if (c->flags & PBD_JOINT_A_MOVES) pbd_bodies_wake(w, c->a - 1);
	if (c->flags & PBD_JOINT_B_MOVES) pbd_bodies_wake(w, c->b - 1);
}

void pbd_joint_release_body(pbd_world* w, uint32_t i) {
	pbd_family* f = FAM(w);
	bool any = false;
	const pbd_pose frame = pbd_body_frame(w, i);
	for (uint32_t k = 0; k < f->n; ++k) {
		pbd_joint_c* c = &HOT(f)[k];
		for (int s = 0; s < 2; ++s) {
			uint32_t* body = s ? &c->b : &c->a;
			if (*body != i + 1) continue;
			pbd_vec3* p = s ? &c->pb : &c->pa;
			pbd_quat* r = s ? &c->rb : &c->ra;
			double x[3];
			pbd_body_point(w, i, *p, x);
			*p = pbd_v3((pbd_real)x[0], (pbd_real)x[1], (pbd_real)x[2]);
			*r = pbd_quat_mul(frame.rotation, *r);
			*body = 0;
			c->flags &= ~(s ? PBD_JOINT_B_MOVES : PBD_JOINT_A_MOVES);
			wake_sides(w, c);
			any = true;
		}
		/* nothing left to move: it holds nothing */
		if (!(c->flags & (PBD_JOINT_A_MOVES | PBD_JOINT_B_MOVES))) c->flags |= PBD_JOINT_BROKEN;
	}
	if (any) w->partitioned = false;
}

/* ---- the API -------------------------------------------------------------------------------- */

pbd_joint_def pbd_joint_def_default(void) {
	pbd_joint_def d;
	memset(&d, 0, sizeof d);
	d.type = PBD_JOINT_BALL;
	d.frame_a = d.frame_b = pbd_pose_identity();
	d.swing = pi;
	return d;
}

static bool finite_pose(pbd_pose p) { return pbd_v3_is_finite(p.position) && pbd_quat_is_finite(p.rotation); }

static pbd_real quat_norm(pbd_quat q) { return PBD_SQRT(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w); }

static pbd_status check_side(pbd_world* w, uint32_t k, const char* name, pbd_body_id id) {
	if (id.index1 == 0 && id.generation == 0) return PBD_OK;
	if (!pbd_body_is_valid(w, id))
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT,
		                "pbd_world_add_joints: joint %u: %s %u is not a live body of this world", k, name, id.index1);
	return PBD_OK;
}

static bool is_dynamic(const pbd_world* w, pbd_body_id id) {
	return id.index1 != 0 && w->bodies.type[id.index1 - 1] == PBD_BODY_DYNAMIC;
}

static pbd_status check_motor(pbd_world* w, const char* fn, uint32_t k, pbd_joint_type type, pbd_joint_motor motor,
                              pbd_real target, pbd_real max, pbd_real compliance) {
	if ((int)motor < 0 || motor > PBD_MOTOR_POSITION)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: joint %u: motor %d is not a pbd_joint_motor", fn, k,
		                (int)motor);
	if (motor == PBD_MOTOR_OFF) return PBD_OK;
	if (type != PBD_JOINT_HINGE && type != PBD_JOINT_PRISMATIC)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: joint %u: only hinge and prismatic joints have a motor", fn,
		                k);
	if (!pbd_is_finite(target))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: joint %u: motor_target is not finite", fn, k);
	if (motor == PBD_MOTOR_VELOCITY && !(max > 0 && pbd_is_finite(max)))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: joint %u: a velocity motor needs motor_max > 0 (got %.9g)", fn, k,
		                (double)max);
	if (motor == PBD_MOTOR_POSITION && !(compliance >= 0 && pbd_is_finite(compliance)))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: joint %u: motor_compliance must be >= 0 and finite (got %.9g)",
		                fn, k, (double)compliance);
	if (motor == PBD_MOTOR_POSITION && type == PBD_JOINT_HINGE && !(target > -pi && target <= pi))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "%s: joint %u: a hinge's motor_target angle must lie in (-pi, pi] (got %.9g)", fn, k,
		                (double)target);
	return PBD_OK;
}

static pbd_status validate(pbd_world* w, uint32_t k, const pbd_joint_def* d) {
	const char* fn = "pbd_world_add_joints";
	if ((int)d->type < 0 || d->type >= PBD_JOINT_TYPE_COUNT)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: joint %u: type %d is not a pbd_joint_type", fn, k,
		                (int)d->type);
	pbd_status st = check_side(w, k, "body_a", d->body_a);
	if (st == PBD_OK) st = check_side(w, k, "body_b", d->body_b);
	if (st != PBD_OK) return st;
	if (d->body_a.index1 != 0 && d->body_a.index1 == d->body_b.index1)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: joint %u: body_a and body_b are the same body", fn, k);
	if (!is_dynamic(w, d->body_a) && !is_dynamic(w, d->body_b))
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: joint %u: neither body_a nor body_b is a dynamic body", fn,
		                k);
	if (!finite_pose(d->frame_a) || !finite_pose(d->frame_b))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: joint %u: frame_%c is not finite", fn, k,
		                finite_pose(d->frame_a) ? 'b' : 'a');
	if (!(quat_norm(d->frame_a.rotation) > PBD_R(1e-6)) || !(quat_norm(d->frame_b.rotation) > PBD_R(1e-6)))
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: joint %u: a frame's rotation is zero", fn, k);
	if (!(d->compliance >= 0 && pbd_is_finite(d->compliance)))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: joint %u: compliance must be >= 0 and finite (got %.9g)", fn, k,
		                (double)d->compliance);
	const bool ranged = d->limit || d->type == PBD_JOINT_DISTANCE;
	if (ranged && !(pbd_is_finite(d->lower) && pbd_is_finite(d->upper) && d->lower <= d->upper))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "%s: joint %u: lower %.9g and upper %.9g must be finite, lower <= upper", fn, k,
		                (double)d->lower, (double)d->upper);
	if (d->type == PBD_JOINT_DISTANCE && d->lower < 0)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: joint %u: a distance joint's lower must be >= 0 (got %.9g)", fn,
		                k, (double)d->lower);
	if (d->limit && (d->type == PBD_JOINT_HINGE || d->type == PBD_JOINT_BALL) && !(d->lower >= -pi && d->upper <= pi))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: joint %u: angle limits must lie in [-pi, pi] (got %.9g, %.9g)",
		                fn, k, (double)d->lower, (double)d->upper);
	if (d->limit && (d->type == PBD_JOINT_FIXED || d->type == PBD_JOINT_DISTANCE))
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: joint %u: a %s joint has no limit to set", fn, k,
		                d->type == PBD_JOINT_FIXED ? "fixed" : "distance");
	if (!(d->swing > 0 && d->swing <= pi))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: joint %u: swing must lie in (0, pi] (got %.9g)", fn, k,
		                (double)d->swing);
	st = check_motor(w, fn, k, d->type, d->motor, d->motor_target, d->motor_max, d->motor_compliance);
	if (st != PBD_OK) return st;
	if (!(d->break_force >= 0 && pbd_is_finite(d->break_force) && d->break_torque >= 0 &&
	      pbd_is_finite(d->break_torque)))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: joint %u: break_force and break_torque must be >= 0 and finite",
		                fn, k);
	return PBD_OK;
}

static pbd_quat unit(pbd_quat q) {
	const pbd_real n = quat_norm(q);
	return (pbd_quat){q.x / n, q.y / n, q.z / n, q.w / n};
}

pbd_status pbd_world_add_joints(pbd_world* w, uint32_t count, const pbd_joint_def* defs, uint32_t* first) {
	const char* fn = "pbd_world_add_joints";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	if (count == 0) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: count is 0", fn);
	if (!defs) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: defs is NULL", fn);
	for (uint32_t k = 0; k < count; ++k) {
		const pbd_status st = validate(w, k, &defs[k]);
		if (st != PBD_OK) return st;
	}
	const uint32_t base = pbd_family_append(w, PBD_FAMILY_JOINT, count);
	if (base == UINT32_MAX) return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %u joints", fn, count);
	pbd_family* f = FAM(w);
	for (uint32_t k = 0; k < count; ++k) {
		const pbd_joint_def* d = &defs[k];
		pbd_joint_c* c = &HOT(f)[base + k];
		c->type = (uint32_t)d->type;
		c->a = d->body_a.index1;
		c->b = d->body_b.index1;
		c->flags = (d->limit && d->type != PBD_JOINT_DISTANCE ? PBD_JOINT_LIMIT : 0) |
		           (is_dynamic(w, d->body_a) ? PBD_JOINT_A_MOVES : 0) |
		           (is_dynamic(w, d->body_b) ? PBD_JOINT_B_MOVES : 0) | ((uint32_t)d->motor << PBD_JOINT_MOTOR_SHIFT);
		c->pa = d->frame_a.position;
		c->pb = d->frame_b.position;
		c->ra = unit(d->frame_a.rotation);
		c->rb = unit(d->frame_b.rotation);
		c->compliance = d->compliance;
		c->lower = d->type == PBD_JOINT_DISTANCE || d->limit ? d->lower : 0;
		c->upper = d->type == PBD_JOINT_DISTANCE || d->limit ? d->upper : 0;
		c->swing = d->swing;
		c->motor_target = d->motor_target;
		c->motor_max = d->motor_max;
		c->motor_compliance = d->motor_compliance;
		c->break_force = d->break_force;
		c->break_torque = d->break_torque;
		pbd_joint_p* p = &COLD(f)[base + k];
		p->gen_a = d->body_a.generation;
		p->gen_b = d->body_b.generation;
		p->cookie = d->cookie;
	}
	if (first) *first = base;
	return PBD_OK;
}

uint32_t pbd_world_joint_count(const pbd_world* w) { return w ? FAM(w)->n : 0; }

static pbd_status find(const pbd_world* w, const char* fn, uint32_t index, uint32_t* k) {
	const pbd_family* f = FAM(w);
	if (index >= f->n)
		return pbd_fail((pbd_world*)w, PBD_ERR_OUT_OF_RANGE, "%s: joint %u out of range (%u)", fn, index, f->n);
	*k = f->slot[index];
	return PBD_OK;
}

pbd_status pbd_world_get_joint(const pbd_world* w, uint32_t index, pbd_joint_def* out) {
	if (!w || !out) return PBD_ERR_INVALID_ARGUMENT;
	uint32_t k = 0;
	const pbd_status st = find(w, "pbd_world_get_joint", index, &k);
	if (st != PBD_OK) return st;
	const pbd_family* f = FAM(w);
	const pbd_joint_c* c = &HOT(f)[k];
	const pbd_joint_p* p = &COLD(f)[k];
	*out = pbd_joint_def_default();
	out->type = (pbd_joint_type)c->type;
	out->body_a = (pbd_body_id){c->a, c->a ? p->gen_a : 0};
	out->body_b = (pbd_body_id){c->b, c->b ? p->gen_b : 0};
	out->frame_a = (pbd_pose){c->pa, c->ra};
	out->frame_b = (pbd_pose){c->pb, c->rb};
	out->compliance = c->compliance;
	out->limit = (c->flags & PBD_JOINT_LIMIT) != 0;
	out->lower = c->lower;
	out->upper = c->upper;
	out->swing = c->swing;
	out->motor = motor_of(c);
	out->motor_target = c->motor_target;
	out->motor_max = c->motor_max;
	out->motor_compliance = c->motor_compliance;
	out->break_force = c->break_force;
	out->break_torque = c->break_torque;
	out->cookie = p->cookie;
	return PBD_OK;
}

/* The sides at the committed state (no corrections pending between steps). */
static void measure(const pbd_world* w, const pbd_joint_c* c, pbd_joint_state* out) {
	const pbd_bodies* b = &w->bodies;
	side A, B;
	pbd_joint_sides(b, c, &A, &B);
	const pbd_vec3 d = pbd_joint_separation(b, &A, &B);
	const pbd_vec3 x = axis_x(A.rot);
	pbd_vec3 n;
	switch ((pbd_joint_type)c->type) {
	case PBD_JOINT_FIXED:
		out->error_distance = pbd_v3_length(d);
		out->error_angle = pbd_v3_length(pbd_joint_turn_of(A.rot, B.rot));
		break;
	case PBD_JOINT_HINGE:
		out->error_distance = pbd_v3_length(d);
		out->error_angle = pbd_v3_length(pbd_joint_turn_between(x, axis_x(B.rot)));
		if (twist_axis(A.rot, B.rot, &n)) out->position = angle_about(n, A.rot, B.rot);
		break;
	case PBD_JOINT_BALL: {
		out->error_distance = pbd_v3_length(d);
		const pbd_real phi = pbd_v3_length(pbd_joint_turn_between(x, axis_x(B.rot)));
		out->error_angle = phi > c->swing ? phi - c->swing : 0;
		if (twist_axis(A.rot, B.rot, &n)) {
			out->position = angle_about(n, A.rot, B.rot);
			if (c->flags & PBD_JOINT_LIMIT) out->error_angle += PBD_FABS(outside(out->position, c->lower, c->upper));
		}
		break;
	}
	case PBD_JOINT_PRISMATIC: {
		out->position = pbd_v3_dot(d, x);
		out->error_distance = pbd_v3_length(pbd_v3_sub(d, pbd_v3_scale(x, out->position)));
		out->error_angle = pbd_v3_length(pbd_joint_turn_of(A.rot, B.rot));
		break;
	}
	case PBD_JOINT_DISTANCE:
		out->position = pbd_v3_length(d);
		out->error_distance = PBD_FABS(outside(out->position, c->lower, c->upper));
		break;
	case PBD_JOINT_TYPE_COUNT:
		break;
	}
}

/* measure's error_distance alone, to the bit, for the diagnostics of every step: without the
 * angles (two atan2 per ball joint) that the statistics do not read. */
static pbd_real error_distance(const pbd_world* w, const pbd_joint_c* c) {
	const pbd_bodies* b = &w->bodies;
	side A, B;
	point_sides(b, c, &A, &B);
	const pbd_vec3 d = pbd_joint_separation(b, &A, &B);
	switch ((pbd_joint_type)c->type) {
	case PBD_JOINT_FIXED:
	case PBD_JOINT_HINGE:
	case PBD_JOINT_BALL:
		return pbd_v3_length(d);
	case PBD_JOINT_PRISMATIC: {
		const pbd_vec3 x = axis_x(A.rot);
		return pbd_v3_length(pbd_v3_sub(d, pbd_v3_scale(x, pbd_v3_dot(d, x))));
	}
	case PBD_JOINT_DISTANCE:
		return PBD_FABS(outside(pbd_v3_length(d), c->lower, c->upper));
	case PBD_JOINT_TYPE_COUNT:
		break;
	}
	return 0;
}

pbd_status pbd_world_get_joint_state(const pbd_world* w, uint32_t index, pbd_joint_state* out) {
	if (!w || !out) return PBD_ERR_INVALID_ARGUMENT;
	uint32_t k = 0;
	const pbd_status st = find(w, "pbd_world_get_joint_state", index, &k);
	if (st != PBD_OK) return st;
	const pbd_joint_c* c = &HOT(FAM(w))[k];
	memset(out, 0, sizeof *out);
	out->broken = (c->flags & PBD_JOINT_BROKEN) != 0;
	measure(w, c, out);
	if (!out->broken) {
		out->force = c->force;
		out->torque = c->torque;
	}
	return PBD_OK;
}

pbd_status pbd_world_set_joint_motor(pbd_world* w, uint32_t index, pbd_joint_motor motor, pbd_real target, pbd_real max,
                                     pbd_real compliance) {
	const char* fn = "pbd_world_set_joint_motor";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	uint32_t k = 0;
	pbd_status st = find(w, fn, index, &k);
	if (st != PBD_OK) return st;
	pbd_joint_c* c = &HOT(FAM(w))[k];
	st = check_motor(w, fn, index, (pbd_joint_type)c->type, motor, target, max, compliance);
	if (st != PBD_OK) return st;
	wake_sides(w, c);
	c->flags = (c->flags & ~PBD_JOINT_MOTOR_MASK) | ((uint32_t)motor << PBD_JOINT_MOTOR_SHIFT);
	c->motor_target = target;
	c->motor_max = max;
	c->motor_compliance = compliance;
	return PBD_OK;
}

pbd_status pbd_world_set_joint_broken(pbd_world* w, uint32_t index, bool broken) {
	const char* fn = "pbd_world_set_joint_broken";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	uint32_t k = 0;
	const pbd_status st = find(w, fn, index, &k);
	if (st != PBD_OK) return st;
	pbd_joint_c* c = &HOT(FAM(w))[k];
	if (!broken && !(c->flags & (PBD_JOINT_A_MOVES | PBD_JOINT_B_MOVES)))
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: joint %u: both its bodies are gone; it cannot hold again", fn,
		                index);
	wake_sides(w, c);
	c->flags = broken ? c->flags | PBD_JOINT_BROKEN : c->flags & ~PBD_JOINT_BROKEN;
	return PBD_OK;
}

uint32_t pbd_world_get_joint_events(const pbd_world* w, pbd_joint_event* out, uint32_t capacity) {
	if (!w) return 0;
	if (out)
		for (uint32_t k = 0; k < w->njev && k < capacity; ++k) out[k] = w->jev[k];
	return w->njev;
}

/* ---- diagnostics and snapshots -------------------------------------------------------------- */

/* The positional error as violation (m), and under XPBD a compliant joint's C^2 / (2 alpha). */
static void stats(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end, pbd_family_sums* out) {
	const bool xpbd = pbd_energy_from_compliance(w);
	const pbd_joint_c* c = HOT(f);
	uint32_t k = first;
#ifdef PBD_HAVE_AVX2
	/* the distances of 8 joints at a time where the lanes take them, summed in order as below */
	if (w->simd_lanes)
		for (; end - k >= 8; k += 8) {
			pbd_real e[8];
			const bool lanes = pbd_joint_distances_avx2(&w->bodies, &c[k], e);
			for (uint32_t j = k; j < k + 8; ++j) {
				if (c[j].flags & PBD_JOINT_BROKEN) continue;
				const pbd_real ej = lanes ? e[j - k] : error_distance(w, &c[j]);
				out->max_violation = pbd_max_sticky(out->max_violation, (double)ej);
				pbd_sums_energy(out, xpbd, (double)ej, c[j].compliance);
			}
		}
#endif
	for (; k < end; ++k) {
		if (c[k].flags & PBD_JOINT_BROKEN) continue;
		const pbd_real e = error_distance(w, &c[k]);
		out->max_violation = pbd_max_sticky(out->max_violation, (double)e);
		pbd_sums_energy(out, xpbd, (double)e, c[k].compliance);
	}
}

static double max_strain(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end) {
	(void)w, (void)f, (void)first, (void)end;
	return 0; /* a joint has no rest length to strain */
}

static bool check(const pbd_world* w, const pbd_family* f, uint32_t k, const char** why) {
	const pbd_joint_c* c = &HOT(f)[k];
	const pbd_joint_p* p = &COLD(f)[k];
	if (c->type >= PBD_JOINT_TYPE_COUNT) return *why = "has an unknown type", false;
	if (c->flags & ~PBD_JOINT_KNOWN_FLAGS) return *why = "has unknown flags", false;
	if (motor_of(c) > PBD_MOTOR_POSITION) return *why = "has an unknown motor", false;
	if (c->a > UINT32_MAX - w->np || c->b > UINT32_MAX - w->np) return *why = "names a body past any node", false;
	if (((c->flags & PBD_JOINT_A_MOVES) && c->a == 0) || ((c->flags & PBD_JOINT_B_MOVES) && c->b == 0))
		return *why = "moves the world", false;
	if (c->a != 0 && c->a == c->b) return *why = "joins a body to itself", false;
	if (p->zero != 0) return *why = "has a non-zero reserved field", false;
	const pbd_real r[] = {c->compliance,       c->lower,       c->upper,       c->swing, c->motor_target, c->motor_max,
	                      c->motor_compliance, c->break_force, c->break_torque};
	for (size_t i = 0; i < sizeof r / sizeof r[0]; ++i)
		if (!pbd_is_finite(r[i])) return *why = "has a value that is not finite", false;
	if (!pbd_v3_is_finite(c->pa) || !pbd_v3_is_finite(c->pb) || !pbd_v3_is_finite(c->force) ||
	    !pbd_v3_is_finite(c->torque) || !pbd_quat_is_finite(c->ra) || !pbd_quat_is_finite(c->rb))
		return *why = "has a frame or force that is not finite", false;
	if (!(PBD_FABS(quat_norm(c->ra) - 1) < PBD_R(1e-3)) || !(PBD_FABS(quat_norm(c->rb) - 1) < PBD_R(1e-3)))
		return *why = "has a frame rotation that is not a unit quaternion", false;
	if (c->compliance < 0 || c->motor_compliance < 0 || c->motor_max < 0 || c->break_force < 0 || c->break_torque < 0 ||
	    !(c->swing > 0 && c->swing <= pi) || c->lower > c->upper)
		return *why = "has a value out of its range", false;
	return true;
}

const pbd_family_ops pbd_family_joint_ops = {
    .name = "joint",
    .hot_size = sizeof(pbd_joint_c),
    .cold_size = sizeof(pbd_joint_p),
    .lambdas = PBD_JOINT_L_COUNT,
    .bodies = true,
    .only_bodies = true,
    .particles = particles,
    .refresh = refresh,
    .project = pbd_joint_project,
    .jacobi = pbd_joint_project,
#ifdef PBD_HAVE_AVX2
    .project_lanes = pbd_joint_project_avx2,
    .jacobi_lanes = pbd_joint_project_avx2,
#endif
    .stats = stats,
    .max_strain = max_strain,
    .check = check,
};
