/* pbd benchmark: C interface to Bullet's btSoftBody, the peer engine of the hanging-cloth run.
 * Only compiled when Bullet is found (PBD_HAVE_BULLET); bench.c stays plain C. */
#ifndef PBD_BENCH_BULLET_PEER_H
#define PBD_BENCH_BULLET_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One soft-body cloth in its own btSoftRigidDynamicsWorld.
typedef struct pbd_bullet_cloth pbd_bullet_cloth;

/// What the cloth is made of. Arrays are read during create only.
typedef struct pbd_bullet_cloth_desc {
	uint32_t node_count;
	const double* positions; ///< xyz per node (3 * node_count)
	const double* masses;    ///< kg per node; 0 pins the node (Bullet's inverse mass 0)
	uint32_t link_count;
	const uint32_t* links; ///< node index pairs (2 * link_count), distinct nodes
	int iterations;        ///< btSoftBody::Config::piterations, >= 1
	double gravity_y;      ///< m/s^2 along y (world and btSoftBodyWorldInfo)
	/// Nonzero: a static sphere (btSphereShape in a btRigidBody of mass 0) joins the world and the
	/// cloth collides with it (cfg.collisions = SDF_RS, frictionless: kDF = 0, friction 0).
	/// Zero (a zeroed desc): no rigid body and no collision handling at all.
	int sphere;
	double sphere_center[3]; ///< m
	double sphere_radius;    ///< m, > 0
	double margin;           ///< the soft body's collision margin, m (> 0): nodes are kept this far out
} pbd_bullet_cloth_desc;

/// Builds the world and the cloth. NULL on failure, with the reason in err (may be NULL).
pbd_bullet_cloth* pbd_bullet_cloth_create(const pbd_bullet_cloth_desc* desc, char* err, size_t err_size);

/// One btSoftRigidDynamicsWorld::stepSimulation(dt, 0): exactly one step of length dt.
void pbd_bullet_cloth_step(pbd_bullet_cloth* cloth, double dt);

/// Copies the node positions and velocities (3 * node_count each; either may be NULL).
void pbd_bullet_cloth_get_state(const pbd_bullet_cloth* cloth, double* positions, double* velocities);

/// Soft-rigid contacts (btSoftBody::m_rcontacts) found in the last step: 0 without a sphere.
uint32_t pbd_bullet_cloth_contact_count(const pbd_bullet_cloth* cloth);

/// FNV-1a over the bits of every node position and velocity, in Bullet's own scalar type.
/// Comparable between runs of this peer only, not with pbd_world_hash.
uint64_t pbd_bullet_cloth_hash(const pbd_bullet_cloth* cloth);

/// Frees the cloth and its world. NULL is accepted.
void pbd_bullet_cloth_destroy(pbd_bullet_cloth* cloth);

/// BT_BULLET_VERSION of the headers compiled against (e.g. 324 for 3.24).
int pbd_bullet_version(void);

/// sizeof(btScalar): 4 for the float build, 8 for the double one.
int pbd_bullet_scalar_size(void);

#ifdef __cplusplus
}
#endif

#endif
