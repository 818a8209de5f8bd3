/* Nodes: what a constraint moves. Nodes [0, np) are the particles and [np, np + bodies) the
 * rigid bodies, so that the colouring, degree[] and the partition's masks see one index space
 * and two constraints on one body never share a colour.
 *
 * A body moves under a correction at a point as Müller et al. 2020 ("Detailed rigid body
 * simulation with extended position based dynamics", section 3.3) describe: a positional
 * impulse p at lever arm r from the centre moves the centre by p / m and turns the body by
 * I^-1 (r x p), so that along a direction n the point has the generalised inverse mass
 * w = 1/m + (r x n) . I^-1 (r x n). Inside a substep the corrections gather in the body's dx and
 * dtheta (bodies.h), which the substep's end applies to the pose and the velocities; a point of
 * the body has meanwhile moved by dx + dtheta x r. Static and kinematic bodies have w = 0. */
#ifndef PBD_MODEL_NODE_H
#define PBD_MODEL_NODE_H

#include "model/bodies.h"

/* I^-1 v for body slot i in world axes, from its principal moments and axes. A body whose three
 * moments are equal (a ball, a cube) turns alike about every axis: no rotation to its axes. */
static inline pbd_vec3 pbd_node_inv_inertia(const pbd_bodies* b, uint32_t i, pbd_vec3 v) {
	const pbd_vec3 m = b->inertia[i];
	if (m.x == m.y && m.y == m.z) return pbd_v3_scale(v, 1 / m.x);
	const pbd_quat q = b->q[i];
	pbd_vec3 l = pbd_quat_rotate(pbd_quat_conj(q), v);
	l = pbd_v3(l.x / b->inertia[i].x, l.y / b->inertia[i].y, l.z / b->inertia[i].z);
	return pbd_quat_rotate(q, l);
}

/* How far the point at lever arm r of body slot i moved in this substep's corrections. */
static inline pbd_vec3 pbd_node_body_moved(const pbd_bodies* b, uint32_t i, pbd_vec3 r) {
	return pbd_v3_add(b->dx[i], pbd_v3_cross(b->dtheta[i], r));
}

/* A body's share of a correction along the unit direction n at lever arm r: its generalised
 * inverse mass, with I^-1 (r x n) in *irn for pbd_node_body_push. Zero for a body that is not
 * dynamic. */
static inline pbd_real pbd_node_body_weight(const pbd_bodies* b, uint32_t i, pbd_vec3 r, pbd_vec3 n, pbd_vec3* irn) {
	if (!pbd_body_moves(b, i)) {
		*irn = pbd_v3(0, 0, 0);
		return 0;
	}
	const pbd_vec3 rn = pbd_v3_cross(r, n);
	*irn = pbd_node_inv_inertia(b, i, rn);
	return b->inv_mass[i] + pbd_v3_dot(rn, *irn);
}

/* The positional impulse dl n at the point: the centre moves by dl n / m and the body turns by
 * dl I^-1 (r x n) (irn from pbd_node_body_weight). */
static inline void pbd_node_body_push(pbd_bodies* b, uint32_t i, pbd_vec3 n, pbd_vec3 irn, pbd_real dl) {
	if (!pbd_body_moves(b, i)) return;
	b->dx[i] = pbd_v3_add(b->dx[i], pbd_v3_scale(n, b->inv_mass[i] * dl));
	b->dtheta[i] = pbd_v3_add(b->dtheta[i], pbd_v3_scale(irn, dl));
}

/* The lever arm, world axes, of the point `local` (the body's frame, as the API gives points)
 * from the centre of mass of body slot i at its current orientation. */
static inline pbd_vec3 pbd_node_body_arm(const pbd_bodies* b, uint32_t i, pbd_vec3 local) {
	const pbd_vec3 from_centre = pbd_v3_sub(local, b->center[i]);
	return pbd_quat_rotate(b->q[i], pbd_quat_rotate(pbd_quat_conj(b->principal[i]), from_centre));
}

#endif
