/* Joints between rigid bodies (constraints/joint.c): the family's records, and the stages of a
 * substep that act on joints outside the iterations. */
#ifndef PBD_CONSTRAINTS_JOINT_H
#define PBD_CONSTRAINTS_JOINT_H

#include "model/family.h"

/* flags of a joint's record */
#define PBD_JOINT_LIMIT       1u /* the limit [lower, upper] holds */
#define PBD_JOINT_BROKEN      2u /* holds nothing */
#define PBD_JOINT_A_MOVES     4u /* side a is a dynamic body: a node of the constraint */
#define PBD_JOINT_B_MOVES     8u /* likewise side b */
#define PBD_JOINT_MOTOR_SHIFT 8u /* pbd_joint_motor in bits 8-9 */
#define PBD_JOINT_MOTOR_MASK  (3u << PBD_JOINT_MOTOR_SHIFT)
#define PBD_JOINT_KNOWN_FLAGS (15u | PBD_JOINT_MOTOR_MASK)

/* Hot data: everything the kernels read. A side is a body slot + 1, or 0 for the world, whose
 * frame is given in world coordinates. */
typedef struct pbd_joint_c {
	uint32_t type; /* pbd_joint_type */
	uint32_t a, b;
	uint32_t flags;
	pbd_vec3 pa, pb; /* the frames' origins, each in its side's frame */
	pbd_quat ra, rb; /* the frames' rotations, likewise */
	pbd_real compliance, lower, upper, swing;
	pbd_real motor_target, motor_max, motor_compliance;
	pbd_real break_force, break_torque;
	pbd_vec3 force, torque; /* what the joint exerted on b in the last substep, N and N m */
} pbd_joint_c;

_Static_assert(sizeof(pbd_joint_c) == 4 * sizeof(uint32_t) + 29 * sizeof(pbd_real), "padding in joint");

/* A joint to body slot i holds to the world frame where the body is now: the body is going away
 * (pbd_body_destroy). */
void pbd_joint_release_body(pbd_world* w, uint32_t i);
/* After a substep's iterations, before the bodies take their corrections: the force and torque
 * each joint exerted (its multipliers over h^2), the joints that broke, and the multipliers
 * cleared for the next substep under either formulation. */
void pbd_joints_after_iterations(pbd_world* w, pbd_real h);
/* After the bodies' velocities were updated: the velocity motors. */
void pbd_joints_velocities(pbd_world* w, pbd_real h);

#endif
