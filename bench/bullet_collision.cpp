/* pbd benchmark: Bullet's soft body in the collision rows (folded cloth, table, pile). The cloths
 * are btSoftBody objects built node by node, link by link and face by face from the same meshes
 * as the pbd rows, in one btSoftRigidDynamicsWorld with the colliders as static btRigidBody
 * objects. docs/BENCHMARKS.md, "Collision", lists the settings and why.
 *
 * Self-collision: for a soft body against itself in a btSoftRigidDynamicsWorld, Bullet offers
 * only cluster contacts (CL_SELF; CL_SS between two bodies). VF_SS (vertex against face) is not
 * run for a body against itself, and the face contacts of VF_DD and useSelfCollision belong to
 * btDeformableMultiBodyDynamicsWorld, another solver. So the cloths get one convex cluster per triangle
 * (generateClusters(0), the finest Bullet builds; clusters that share a node never collide) and CL_SS. CL_SELF itself
 * cannot be switched on in Bullet 3.24: btSoftBody::defaultCollisionHandler(btSoftBody*) switches on `collisions &
 * SVSmask`, and since SVSmask grew from 0x0030 (2.88) to 0x00f0 (2.89, with VF_DD) CL_SS | CL_SELF matches no case,
 * which turns off every soft-soft contact instead. The step therefore runs, for each cloth against itself, the very
 * collider that branch runs (btSoftColliders::CollideCL_SS) right after stepSimulation, where the world's own call to
 * it sits (after the soft bodies' constraints; the contacts are solved in the next step). */
#include "bullet_peer.h"

#include <cstdio>
#include <new>

#include <BulletCollision/BroadphaseCollision/btDbvtBroadphase.h>
#include <BulletCollision/CollisionDispatch/btCollisionDispatcher.h>
#include <BulletCollision/CollisionShapes/btBoxShape.h>
#include <BulletCollision/CollisionShapes/btSphereShape.h>
#include <BulletDynamics/ConstraintSolver/btSequentialImpulseConstraintSolver.h>
#include <BulletDynamics/Dynamics/btRigidBody.h>
#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftBodyInternals.h>
#include <BulletSoftBody/btSoftBodyRigidBodyCollisionConfiguration.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>
#include <LinearMath/btAlignedObjectArray.h>
#include <LinearMath/btScalar.h>

/* The floor is a box this large under y = height: Bullet's signed distance field (SDF_RS) only
 * handles convex shapes, and a btStaticPlaneShape reaches a soft body only as triangles. */
static const btScalar GROUND_HALF_XZ = 10;
static const btScalar GROUND_HALF_Y = 1;

struct pbd_bullet_scene {
	btSoftBodyRigidBodyCollisionConfiguration config;
	btCollisionDispatcher dispatcher;
	btDbvtBroadphase broadphase;
	btSequentialImpulseConstraintSolver solver;
	btSoftRigidDynamicsWorld world;
	btAlignedObjectArray<btSoftBody*> bodies;
	btAlignedObjectArray<btCollisionShape*> shapes;
	btAlignedObjectArray<btRigidBody*> colliders;
	bool self_collision = false;

	pbd_bullet_scene() : dispatcher(&config), world(&dispatcher, &broadphase, &solver, &config) {}
	~pbd_bullet_scene() {
		for (int i = 0; i < colliders.size(); ++i) {
			world.removeRigidBody(colliders[i]);
			delete colliders[i];
		}
		for (int i = 0; i < shapes.size(); ++i) delete shapes[i];
		for (int i = 0; i < bodies.size(); ++i) {
			world.removeSoftBody(bodies[i]);
			delete bodies[i];
		}
	}
	pbd_bullet_scene(const pbd_bullet_scene&) = delete;
	pbd_bullet_scene& operator=(const pbd_bullet_scene&) = delete;
};

static void set_error(char* err, size_t size, const char* message) {
	if (err && size > 0) std::snprintf(err, size, "%s", message);
}

static bool mesh_is_valid(const pbd_bullet_mesh* m, char* err, size_t err_size) {
	if (!m->positions || !m->masses || (m->link_count > 0 && !m->links) || (m->face_count > 0 && !m->faces)) {
		set_error(err, err_size, "bullet scene: null mesh array");
		return false;
	}
	// btSoftBody counts nodes, links and faces with int.
	if (m->node_count == 0 || m->node_count > 0x7fffffffu || m->link_count > 0x7fffffffu ||
	    m->face_count > 0x7fffffffu / 3) {
		set_error(err, err_size, "bullet scene: node, link or face count out of range");
		return false;
	}
	for (uint32_t i = 0; i < m->node_count; ++i)
		if (!(m->masses[i] > 0)) {
			set_error(err, err_size, "bullet scene: a node without mass");
			return false;
		}
	for (uint32_t i = 0; i < m->link_count; ++i) {
		const uint32_t a = m->links[2 * i], b = m->links[2 * i + 1];
		if (a >= m->node_count || b >= m->node_count || a == b) {
			set_error(err, err_size, "bullet scene: link with a bad node index");
			return false;
		}
	}
	for (uint32_t i = 0; i < 3 * m->face_count; ++i)
		if (m->faces[i] >= m->node_count) {
			set_error(err, err_size, "bullet scene: face with a bad node index");
			return false;
		}
	return true;
}

static bool desc_is_valid(const pbd_bullet_scene_desc* d, char* err, size_t err_size) {
	if (!d || !d->meshes || d->mesh_count == 0 || (d->collider_count > 0 && !d->colliders)) {
		set_error(err, err_size, "bullet scene: null desc or array");
		return false;
	}
	if (d->iterations < 1 || !(d->margin > 0) || !(d->voxel > 0) || !(d->friction >= 0 && d->friction <= 1) ||
	    !(d->contact_hardness > 0 && d->contact_hardness <= 1)) {
		set_error(err, err_size, "bullet scene: iterations, margin, voxel, friction or hardness out of range");
		return false;
	}
	for (uint32_t k = 0; k < d->collider_count; ++k) {
		const pbd_bullet_collider* c = &d->colliders[k];
		const bool ok = c->shape == PBD_BULLET_GROUND || (c->shape == PBD_BULLET_SPHERE && c->radius > 0) ||
		                (c->shape == PBD_BULLET_BOX && c->half[0] > 0 && c->half[1] > 0 && c->half[2] > 0);
		if (!ok) {
			set_error(err, err_size, "bullet scene: collider with a bad shape or size");
			return false;
		}
	}
	for (uint32_t m = 0; m < d->mesh_count; ++m)
		if (!mesh_is_valid(&d->meshes[m], err, err_size)) return false;
	return true;
}

static void add_collider(pbd_bullet_scene* s, const pbd_bullet_collider* c) {
	btVector3 origin(btScalar(c->center[0]), btScalar(c->center[1]), btScalar(c->center[2]));
	btCollisionShape* shape;
	if (c->shape == PBD_BULLET_SPHERE) {
		shape = new btSphereShape(btScalar(c->radius));
	} else {
		btVector3 half(btScalar(c->half[0]), btScalar(c->half[1]), btScalar(c->half[2]));
		if (c->shape == PBD_BULLET_GROUND) {
			half = btVector3(GROUND_HALF_XZ, GROUND_HALF_Y, GROUND_HALF_XZ);
			origin = btVector3(0, btScalar(c->height) - GROUND_HALF_Y, 0);
		}
		shape = new btBoxShape(half);
		// A box's default margin (4 cm) is carved out of its half extents, more than the table's
		// 2.5 cm: with 0, the shape is the box itself. The sphere's margin is its radius, which
		// the SDF's node margin counts in, so it keeps its default.
		shape->setMargin(0);
	}
	s->shapes.push_back(shape);
	btRigidBody::btRigidBodyConstructionInfo info(0, nullptr, shape);
	info.m_startWorldTransform.setIdentity();
	info.m_startWorldTransform.setOrigin(origin);
	// Bullet's soft contact friction is the body's kDF times this: kDF alone sets it.
	info.m_friction = 1;
	btRigidBody* body = new btRigidBody(info);
	s->colliders.push_back(body);
	s->world.addRigidBody(body);
}

static btSoftBody* add_cloth(pbd_bullet_scene* s, const pbd_bullet_scene_desc* d, const pbd_bullet_mesh* m) {
	btSoftBodyWorldInfo& info = s->world.getWorldInfo();
	const int n = int(m->node_count);
	btAlignedObjectArray<btVector3> x;
	btAlignedObjectArray<btScalar> mass;
	x.resize(n);
	mass.resize(n);
	for (int i = 0; i < n; ++i) {
		x[i] = btVector3(btScalar(m->positions[3 * i]), btScalar(m->positions[3 * i + 1]),
		                 btScalar(m->positions[3 * i + 2]));
		mass[i] = btScalar(m->masses[i]);
	}
	btSoftBody* b = new btSoftBody(&info, n, &x[0], &mass[0]);
	s->bodies.push_back(b);
	btSoftBody::Material* material = b->m_materials[0];
	material->m_kLST = 1;
	for (uint32_t i = 0; i < m->link_count; ++i)
		b->appendLink(int(m->links[2 * i]), int(m->links[2 * i + 1]), material, false);
	for (uint32_t i = 0; i < m->face_count; ++i)
		b->appendFace(int(m->faces[3 * i]), int(m->faces[3 * i + 1]), int(m->faces[3 * i + 2]), material);

	btSoftBody::Config& cfg = b->m_cfg;
	cfg.piterations = d->iterations;
	cfg.viterations = 0;
	cfg.diterations = 0;
	cfg.kDP = 0; // no damping, as pbd's damping 1
	cfg.kDG = 0;
	cfg.kLF = 0;
	cfg.timescale = 1;
	cfg.kDF = btScalar(d->friction);
	cfg.kKHR = btScalar(d->contact_hardness);
	b->setSolver(btSoftBody::eSolverPresets::Positions);
	b->m_useSelfCollision = false; // the deformable world's face contacts, not used by this world
	b->m_softSoftCollision = false;
	b->setActivationState(DISABLE_DEACTIVATION);

	const btScalar margin = btScalar(d->margin);
	b->getCollisionShape()->setMargin(margin);
	// The node tree's leaves were made with the default margin (0.25 m): refit them to ours.
	for (int i = 0; i < b->m_nodes.size(); ++i) {
		btSoftBody::Node& node = b->m_nodes[i];
		btDbvtVolume volume = btDbvtVolume::FromCR(node.m_x, margin);
		b->m_ndbvt.update(node.m_leaf, volume);
	}
	if (d->self_collision) {
		cfg.collisions = btSoftBody::fCollision::SDF_RS | btSoftBody::fCollision::CL_SS;
		// The cluster contacts' hardness and split (kSSHR_CL, kSS_SPLT_CL) and their solver's
		// iterations (citerations 4) keep Bullet's defaults.
		b->generateClusters(0);
	} else {
		cfg.collisions = btSoftBody::fCollision::SDF_RS;
		cfg.citerations = 0;
	}
	s->world.addSoftBody(b);
	return b;
}

static pbd_bullet_scene* create(const pbd_bullet_scene_desc* d) {
	pbd_bullet_scene* s = new pbd_bullet_scene();
	const btVector3 gravity(0, btScalar(d->gravity_y), 0);
	s->world.setGravity(gravity);
	btSoftBodyWorldInfo& info = s->world.getWorldInfo();
	info.m_gravity = gravity; // the world's soft-body info defaults to (0,-10,0)
	info.m_sparsesdf.setDefaultVoxelsz(btScalar(d->voxel));
	info.m_sparsesdf.Reset();
	s->self_collision = d->self_collision != 0;
	for (uint32_t k = 0; k < d->collider_count; ++k) add_collider(s, &d->colliders[k]);
	for (uint32_t m = 0; m < d->mesh_count; ++m) add_cloth(s, d, &d->meshes[m]);
	return s;
}

extern "C" pbd_bullet_scene* pbd_bullet_scene_create(const pbd_bullet_scene_desc* desc, char* err, size_t err_size) {
	if (!desc_is_valid(desc, err, err_size)) return nullptr;
	try {
		return create(desc);
	} catch (const std::bad_alloc&) {
		set_error(err, err_size, "bullet scene: out of memory");
	} catch (...) {
		set_error(err, err_size, "bullet scene: exception while building the soft bodies");
	}
	return nullptr;
}

extern "C" void pbd_bullet_scene_step(pbd_bullet_scene* scene, double dt) {
	// maxSubSteps 0: one internal step of exactly dt (see bullet_peer.cpp).
	scene->world.stepSimulation(btScalar(dt), 0);
	if (!scene->self_collision) return;
	for (int i = 0; i < scene->bodies.size(); ++i) {
		btSoftColliders::CollideCL_SS collide;
		collide.ProcessSoftSoft(scene->bodies[i], scene->bodies[i]);
	}
}

extern "C" void pbd_bullet_scene_get_positions(const pbd_bullet_scene* scene, double* positions) {
	size_t o = 0;
	for (int b = 0; b < scene->bodies.size(); ++b) {
		const btSoftBody::tNodeArray& nodes = scene->bodies[b]->m_nodes;
		for (int i = 0; i < nodes.size(); ++i)
			for (int k = 0; k < 3; ++k) positions[o++] = double(nodes[i].m_x[k]);
	}
}

extern "C" uint32_t pbd_bullet_scene_contact_count(const pbd_bullet_scene* scene) {
	uint32_t count = 0;
	for (int b = 0; b < scene->bodies.size(); ++b)
		count += uint32_t(scene->bodies[b]->m_rcontacts.size() + scene->bodies[b]->m_joints.size());
	return count;
}

extern "C" uint32_t pbd_bullet_scene_cluster_count(const pbd_bullet_scene* scene) {
	uint32_t count = 0;
	for (int b = 0; b < scene->bodies.size(); ++b) count += uint32_t(scene->bodies[b]->m_clusters.size());
	return count;
}

static uint64_t fnv1a(uint64_t h, const void* data, size_t size) {
	const unsigned char* p = static_cast<const unsigned char*>(data);
	for (size_t i = 0; i < size; ++i) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

extern "C" uint64_t pbd_bullet_scene_hash(const pbd_bullet_scene* scene) {
	uint64_t h = 0xcbf29ce484222325ull;
	for (int b = 0; b < scene->bodies.size(); ++b) {
		const btSoftBody::tNodeArray& nodes = scene->bodies[b]->m_nodes;
		for (int i = 0; i < nodes.size(); ++i)
			for (int k = 0; k < 3; ++k) {
				const btScalar xk = nodes[i].m_x[k], vk = nodes[i].m_v[k];
				h = fnv1a(h, &xk, sizeof xk);
				h = fnv1a(h, &vk, sizeof vk);
			}
	}
	return h;
}

extern "C" void pbd_bullet_scene_destroy(pbd_bullet_scene* scene) { delete scene; }
