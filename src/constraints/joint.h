/* Joints between rigid bodies (constraints/joint.c): the family's records, and the stages of a
 * substep that act on joints outside the iterations. */
#ifndef PBD_CONSTRAINTS_JOINT_H
#define PBD_CONSTRAINTS_JOINT_H

#include "model/family.h"

/* flags of a joint's record */
#define PBD_JOINT_LIMIT       1u  /* the limit [lower, upper] holds */
#define PBD_JOINT_BROKEN      2u  /* holds nothing */
#define PBD_JOINT_A_MOVES     4u  /* side a is a dynamic body: a node of the constraint */
#define PBD_JOINT_B_MOVES     8u  /* likewise side b */
#define PBD_JOINT_DIRECT      16u /* its holds are solved by methods/joint_direct.c; its limits and motor here */
#define PBD_JOINT_MOTOR_SHIFT 8u  /* pbd_joint_motor in bits 8-9 */
#define PBD_JOINT_MOTOR_MASK  (3u << PBD_JOINT_MOTOR_SHIFT)
#define PBD_JOINT_KNOWN_FLAGS (31u | PBD_JOINT_MOTOR_MASK)

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
_Static_assert(sizeof(pbd_joint_c) <= PBD_FAMILY_RECORD_MAX, "a joint's record outgrows the partition's buffer");

/* The multipliers of one joint: one per correction of the projection here, the positional and
 * angular impulses on b summed over the substep (vectors), which the break test and the state
 * read, and one per row of the direct solve (methods/joint_direct.c). */
enum {
	PBD_JOINT_L_POINT,
	PBD_JOINT_L_ANGLE,
	PBD_JOINT_L_LIMIT,
	PBD_JOINT_L_LIMIT2,
	PBD_JOINT_L_MOTOR,
	PBD_JOINT_L_FORCE,
	PBD_JOINT_L_TORQUE = PBD_JOINT_L_FORCE + 3,
	PBD_JOINT_L_ROWS = PBD_JOINT_L_TORQUE + 3,
	PBD_JOINT_MAX_ROWS = 6,
	PBD_JOINT_L_COUNT = PBD_JOINT_L_ROWS + PBD_JOINT_MAX_ROWS
};
_Static_assert(PBD_JOINT_L_COUNT * sizeof(pbd_real) <= PBD_FAMILY_RECORD_MAX,
               "a joint's multipliers outgrow the partition's buffer");

/* A side of a joint as the substep's corrections have moved it. */
typedef struct pbd_joint_side {
	uint32_t s;   /* body slot; UINT32_MAX for the world */
	pbd_vec3 r;   /* lever arm from the centre of mass (world axes); the point itself for the world */
	pbd_quat rot; /* the joint frame's rotation in the world */
} pbd_joint_side;

typedef struct pbd_bodies pbd_bodies;

/* A ball joint that holds its point alone: no limit, no swing bound, not in the direct solve.
 * Its projection is one positional correction, which the lanes take 8 at a time. */
static inline bool pbd_joint_point_only(const pbd_joint_c* c) {
	return c->type == PBD_JOINT_BALL && !(c->flags & (PBD_JOINT_LIMIT | PBD_JOINT_DIRECT)) &&
	       c->swing >= PBD_R(3.14159265358979323846);
}

/* The family's Gauss-Seidel and Jacobi kernel (one for both: a joint's nodes are bodies). */
void pbd_joint_project(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end);
#ifdef PBD_HAVE_AVX2
/* The same over 8 positions of one colour group at a time (simd/joint_avx2.c). */
void pbd_joint_project_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end);
/* The distances between the points of 8 consecutive joints c[0..8) as the state reports them
 * (pbd_joint_state.error_distance of a ball, hinge or fixed joint), bit for bit: false, and
 * nothing written, unless all 8 are of those types and join two bodies. */
bool pbd_joint_distances_avx2(const pbd_bodies* b, const pbd_joint_c* c, float out[8]);
#endif

void pbd_joint_sides(const pbd_bodies* b, const pbd_joint_c* c, pbd_joint_side* A, pbd_joint_side* B);
/* b's point less a's, exact for bodies far from the origin. */
pbd_vec3 pbd_joint_separation(const pbd_bodies* b, const pbd_joint_side* A, const pbd_joint_side* B);
/* The rotation vector of frame rb from frame ra (rb = exp(e) ra), the short way. */
pbd_vec3 pbd_joint_turn_of(pbd_quat ra, pbd_quat rb);
/* The rotation vector that takes unit vector u to unit vector v the short way. */
pbd_vec3 pbd_joint_turn_between(pbd_vec3 u, pbd_vec3 v);

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
