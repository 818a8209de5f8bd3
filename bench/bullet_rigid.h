/* pbd benchmark: C interface to Bullet's rigid-body world (btDiscreteDynamicsWorld), the peer of
 * the rigid-body rows (bench/rigid.c). Only compiled when Bullet is found (PBD_HAVE_BULLET). */
#ifndef PBD_BENCH_BULLET_RIGID_H
#define PBD_BENCH_BULLET_RIGID_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Rigid bodies and static shapes in one btDiscreteDynamicsWorld (btDefaultCollisionConfiguration,
/// btDbvtBroadphase, btSequentialImpulseConstraintSolver).
typedef struct pbd_bullet_rigid pbd_bullet_rigid;

typedef enum pbd_bullet_rigid_shape {
	PBD_BULLET_RIGID_BOX,     ///< btBoxShape of half extents `half`
	PBD_BULLET_RIGID_SPHERE,  ///< btSphereShape of `radius`
	PBD_BULLET_RIGID_CAPSULE, ///< btCapsuleShape (along local y): `radius`, segment of half length `half_height`
	/// btConvexHullShape of `points`, its margin PBD_BULLET_RIGID_HULL_MARGIN outside them
	PBD_BULLET_RIGID_HULL
} pbd_bullet_rigid_shape;

/// Bullet's convex hull keeps its margin outside the points (a box takes it out of its half
/// extents); the default 4 cm would swell a rock of 10 cm, this much keeps its collision sound.
#define PBD_BULLET_RIGID_HULL_MARGIN 0.01

/// One body. mass 0 makes it static; a dynamic one gets `mass` and the principal moments
/// `inertia` about its centre (the shape's local axes), as the pbd rows compute them.
typedef struct pbd_bullet_rigid_body {
	pbd_bullet_rigid_shape shape;
	double half[3];       ///< box: m, each > 0
	double radius;        ///< sphere, capsule: m, > 0
	double half_height;   ///< capsule: m, > 0
	const double* points; ///< hull: 3 per point, m, in the body's frame; read during create only
	uint32_t point_count; ///< hull: >= 4
	double position[3];   ///< centre, m
	double rotation[4];   ///< unit quaternion x, y, z, w
	double mass;          ///< kg, >= 0
	double inertia[3];    ///< kg m^2, dynamic bodies: each > 0
	int no_contact;       ///< nonzero: touches nothing (its collision filter mask is 0); joints still hold it
} pbd_bullet_rigid_body;

/// A btPoint2PointConstraint: the pivots of the two sides held together.
typedef struct pbd_bullet_rigid_joint {
	int32_t a, b;      ///< bodies of the desc, distinct; -1 is the world (at most one side)
	double pivot_a[3]; ///< in a's frame (the world's for the world), m
	double pivot_b[3]; ///< in b's frame, m
} pbd_bullet_rigid_joint;

typedef struct pbd_bullet_rigid_desc {
	uint32_t body_count;
	const pbd_bullet_rigid_body* bodies; ///< read during create only
	int floor;                           ///< nonzero: a static btStaticPlaneShape y = 0 (normal +y)
	double gravity_y;                    ///< m/s^2
	/// Bullet multiplies the two bodies' frictions; each body gets the square root of this so
	/// that every pair has it (pbd takes the geometric mean of equal values: the same).
	double friction;
	int iterations; ///< btContactSolverInfo::m_numIterations, >= 1
	uint32_t joint_count;
	/// Read during create only. The two bodies of a joint do not touch each other
	/// (addConstraint's disableCollisionsBetweenLinkedBodies).
	const pbd_bullet_rigid_joint* joints;
} pbd_bullet_rigid_desc;

/// Builds the world. NULL on failure, with the reason in err (may be NULL).
pbd_bullet_rigid* pbd_bullet_rigid_create(const pbd_bullet_rigid_desc* desc, char* err, size_t err_size);

/// One frame of length dt as `substeps` (>= 1) calls stepSimulation(dt / substeps, 0): each call
/// one internal step of exactly that length, without the accumulator's remainder and interpolation.
void pbd_bullet_rigid_step(pbd_bullet_rigid* world, double dt, int substeps);

/// The centres of the bodies in the order of the desc (3 doubles each, static ones too).
void pbd_bullet_rigid_get_positions(const pbd_bullet_rigid* world, double* positions);

/// The smallest distance of a contact point in the dispatcher's manifolds after the last step (m,
/// negative: penetrating), and how many points there are in *count (may be NULL). +infinity
/// when there is none.
double pbd_bullet_rigid_min_distance(const pbd_bullet_rigid* world, uint32_t* count);

/// The largest distance between the two world pivots of a joint after the last step (m; 0
/// without joints).
double pbd_bullet_rigid_max_joint_error(const pbd_bullet_rigid* world);

/// Frees the world. NULL is accepted.
void pbd_bullet_rigid_destroy(pbd_bullet_rigid* world);

#ifdef __cplusplus
}
#endif

#endif
