/* pbd benchmark: C interface to Bullet's btSoftBody, the peer engine of the hanging-cloth run
 * and of the collision rows. Only compiled when Bullet is found (PBD_HAVE_BULLET); bench.c stays plain C. */
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

/* ---- collision scenes (bench/bullet_collision.cpp) ------------------------------------------ */

/// Several cloths and static colliders in one btSoftRigidDynamicsWorld, with self-collision.
typedef struct pbd_bullet_scene pbd_bullet_scene;

typedef enum pbd_bullet_shape {
	PBD_BULLET_GROUND, ///< the floor: everything below y = height is solid
	PBD_BULLET_SPHERE,
	PBD_BULLET_BOX ///< axis-aligned
} pbd_bullet_shape;

/// A static collider: a btRigidBody of mass 0.
typedef struct pbd_bullet_collider {
	pbd_bullet_shape shape;
	double center[3]; ///< sphere, box: m
	double radius;    ///< sphere: m, > 0
	double half[3];   ///< box: half extents, m, > 0
	double height;    ///< ground: the floor's top, y in m
} pbd_bullet_collider;

/// One cloth. Arrays are read during create only.
typedef struct pbd_bullet_mesh {
	uint32_t node_count;
	const double* positions; ///< xyz per node (3 * node_count); the links' rest lengths are taken here
	const double* masses;    ///< kg per node, > 0
	uint32_t link_count;
	const uint32_t* links; ///< node index pairs (2 * link_count), distinct nodes
	uint32_t face_count;
	const uint32_t* faces; ///< 3 node indices per triangle
} pbd_bullet_mesh;

typedef struct pbd_bullet_scene_desc {
	uint32_t mesh_count;
	const pbd_bullet_mesh* meshes; ///< their nodes are numbered one cloth after the other
	uint32_t collider_count;
	const pbd_bullet_collider* colliders;
	int iterations;   ///< btSoftBody::Config::piterations, >= 1
	double gravity_y; ///< m/s^2 along y
	/// The soft bodies' collision margin, m (> 0): nodes keep it from the colliders, and two
	/// clusters of the cloths keep twice it from each other.
	double margin;
	double friction;         ///< Bullet's kDF (0..1): against the colliders and between clusters
	double contact_hardness; ///< kKHR (0..1], the hardness of contacts with static colliders
	double voxel;            ///< the sparse signed distance field's voxel, m (> 0)
	/// Nonzero: one cluster per triangle (generateClusters(0)), collided with the other cloths'
	/// (CL_SS) and with the cloth's own (the collider CL_SELF selects). Zero: no soft-soft contact.
	int self_collision;
} pbd_bullet_scene_desc;

/// Builds the world, the colliders and the cloths. NULL on failure, with the reason in err.
pbd_bullet_scene* pbd_bullet_scene_create(const pbd_bullet_scene_desc* desc, char* err, size_t err_size);

/// One stepSimulation(dt, 0) and, with self_collision, the clusters' self-contacts that the
/// next step solves.
void pbd_bullet_scene_step(pbd_bullet_scene* scene, double dt);

/// Every cloth's node positions, one cloth after the other (3 doubles per node).
void pbd_bullet_scene_get_positions(const pbd_bullet_scene* scene, double* positions);

/// Soft-rigid contacts (m_rcontacts) of the last step plus the cluster contacts (m_joints)
/// waiting for the next, over every cloth.
uint32_t pbd_bullet_scene_contact_count(const pbd_bullet_scene* scene);

/// The clusters over every cloth (0 without self_collision).
uint32_t pbd_bullet_scene_cluster_count(const pbd_bullet_scene* scene);

/// FNV-1a over every node position and velocity, as pbd_bullet_cloth_hash.
uint64_t pbd_bullet_scene_hash(const pbd_bullet_scene* scene);

/// Frees the scene. NULL is accepted.
void pbd_bullet_scene_destroy(pbd_bullet_scene* scene);

/// BT_BULLET_VERSION of the headers compiled against (e.g. 324 for 3.24).
int pbd_bullet_version(void);

/// sizeof(btScalar): 4 for the float build, 8 for the double one.
int pbd_bullet_scalar_size(void);

#ifdef __cplusplus
}
#endif

#endif
