/* pbd benchmark: the Bullet soft-body peer. A btSoftBody built node by node and link by link
 * from the same grid as the pbd run, in a btSoftRigidDynamicsWorld of its own.
 * docs/BENCHMARKS.md lists every setting and why it was chosen. */
#include "bullet_peer.h"

#include <cstdio>
#include <cstring>
#include <new>

#include <BulletCollision/BroadphaseCollision/btDbvtBroadphase.h>
#include <BulletCollision/CollisionDispatch/btCollisionDispatcher.h>
#include <BulletCollision/CollisionShapes/btSphereShape.h>
#include <BulletDynamics/ConstraintSolver/btSequentialImpulseConstraintSolver.h>
#include <BulletDynamics/Dynamics/btRigidBody.h>
#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftBodyRigidBodyCollisionConfiguration.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>
#include <LinearMath/btAlignedObjectArray.h>
#include <LinearMath/btScalar.h>

struct pbd_bullet_cloth {
	btSoftBodyRigidBodyCollisionConfiguration config;
	btCollisionDispatcher dispatcher;
	btDbvtBroadphase broadphase;
	btSequentialImpulseConstraintSolver solver;
	btSoftRigidDynamicsWorld world;
	btSoftBody* body = nullptr;
	btSphereShape* sphere_shape = nullptr; // the optional static collider
	btRigidBody* sphere_body = nullptr;

	pbd_bullet_cloth() : dispatcher(&config), world(&dispatcher, &broadphase, &solver, &config) {}
	~pbd_bullet_cloth() {
		if (sphere_body) {
			world.removeRigidBody(sphere_body);
			delete sphere_body;
		}
		delete sphere_shape;
		if (body) {
			world.removeSoftBody(body);
			delete body;
		}
	}
	pbd_bullet_cloth(const pbd_bullet_cloth&) = delete;
	pbd_bullet_cloth& operator=(const pbd_bullet_cloth&) = delete;
};

static void set_error(char* err, size_t size, const char* message) {
	if (err && size > 0) std::snprintf(err, size, "%s", message);
}

static bool desc_is_valid(const pbd_bullet_cloth_desc* d, char* err, size_t err_size) {
	if (!d || !d->positions || !d->masses || (d->link_count > 0 && !d->links)) {
		set_error(err, err_size, "bullet peer: null desc or array");
		return false;
	}
	// btSoftBody counts nodes and links with int.
	if (d->node_count == 0 || d->node_count > 0x7fffffffu || d->link_count > 0x7fffffffu) {
		set_error(err, err_size, "bullet peer: node or link count out of range");
		return false;
	}
	if (d->iterations < 1) {
		set_error(err, err_size, "bullet peer: iterations must be >= 1");
		return false;
	}
	if (d->sphere && !(d->sphere_radius > 0 && d->margin > 0)) {
		set_error(err, err_size, "bullet peer: the sphere needs a radius > 0 and a margin > 0");
		return false;
	}
	for (uint32_t i = 0; i < d->link_count; ++i) {
		const uint32_t a = d->links[2 * i], b = d->links[2 * i + 1];
		if (a >= d->node_count || b >= d->node_count || a == b) {
			set_error(err, err_size, "bullet peer: link with a bad node index");
			return false;
		}
		// Bullet's link solve divides by (im_a + im_b) / kLST: a link between two pinned nodes
		// would give inf/NaN in its prepare pass.
		if (d->masses[a] <= 0.0 && d->masses[b] <= 0.0) {
			set_error(err, err_size, "bullet peer: link between two pinned nodes");
			return false;
		}
	}
	return true;
}

// The static sphere and soft-rigid collision (SDF_RS: each node against the rigid shape's sparse
// signed distance field, resolved as a contact in the position solve with Bullet's default
// hardness kKHR). Everything else keeps Bullet's defaults.
static void add_sphere(pbd_bullet_cloth* c, const pbd_bullet_cloth_desc* d) {
	btSoftBody* b = c->body;
	const btScalar margin = btScalar(d->margin);
	b->m_cfg.collisions = btSoftBody::fCollision::SDF_RS;
	b->m_cfg.kDF = 0; // frictionless, as pbd's collider (friction 0 by default)
	b->getCollisionShape()->setMargin(margin);
	// The node tree's leaves were made with the default margin (0.25 m): refit them to ours.
	for (int i = 0; i < b->m_nodes.size(); ++i) {
		btSoftBody::Node& n = b->m_nodes[i];
		btDbvtVolume vol = btDbvtVolume::FromCR(n.m_x, margin);
		b->m_ndbvt.update(n.m_leaf, vol);
	}
	c->sphere_shape = new btSphereShape(btScalar(d->sphere_radius));
	btRigidBody::btRigidBodyConstructionInfo info(0, nullptr, c->sphere_shape);
	info.m_startWorldTransform.setIdentity();
	info.m_startWorldTransform.setOrigin(
	    btVector3(btScalar(d->sphere_center[0]), btScalar(d->sphere_center[1]), btScalar(d->sphere_center[2])));
	info.m_friction = 0;
	c->sphere_body = new btRigidBody(info);
	c->world.addRigidBody(c->sphere_body);
}

static pbd_bullet_cloth* create(const pbd_bullet_cloth_desc* d) {
	pbd_bullet_cloth* c = new pbd_bullet_cloth();
	const btVector3 gravity(0, btScalar(d->gravity_y), 0);
	c->world.setGravity(gravity);
	btSoftBodyWorldInfo& info = c->world.getWorldInfo();
	info.m_gravity = gravity; // the world's soft-body info defaults to (0,-10,0)

	const int n = int(d->node_count);
	btAlignedObjectArray<btVector3> x;
	btAlignedObjectArray<btScalar> m;
	x.resize(n);
	m.resize(n);
	for (int i = 0; i < n; ++i) {
		x[i] = btVector3(btScalar(d->positions[3 * i]), btScalar(d->positions[3 * i + 1]),
		                 btScalar(d->positions[3 * i + 2]));
		m[i] = btScalar(d->masses[i]);
	}
	c->body = new btSoftBody(&info, n, &x[0], &m[0]);
	btSoftBody* b = c->body;

	btSoftBody::Material* material = b->m_materials[0];
	material->m_kLST = 1;
	for (uint32_t i = 0; i < d->link_count; ++i) {
		// bcheckexist = false: the grid has no duplicate edges, and the check is O(links).
		b->appendLink(int(d->links[2 * i]), int(d->links[2 * i + 1]), material, false);
	}

	btSoftBody::Config& cfg = b->m_cfg;
	cfg.piterations = d->iterations;
	cfg.viterations = 0; // default: no velocity pass, positions only, as in pbd
	cfg.diterations = 0; // default: no drift correction pass
	cfg.citerations = 0; // no clusters in this body (default 4 would loop over none)
	cfg.kDP = 0;         // no damping, as pbd's damping 1
	cfg.kDG = 0;
	cfg.kLF = 0;
	cfg.timescale = 1;
	cfg.collisions = 0; // no rigid-soft, soft-soft or self collision handling
	b->setSolver(btSoftBody::eSolverPresets::Positions);
	b->m_useSelfCollision = false;
	b->m_softSoftCollision = false;
	// Sleeping would stop stepping a cloth that still swings; pbd never sleeps.
	b->setActivationState(DISABLE_DEACTIVATION);

	if (d->sphere) add_sphere(c, d);

	c->world.addSoftBody(b);
	return c;
}

extern "C" pbd_bullet_cloth* pbd_bullet_cloth_create(const pbd_bullet_cloth_desc* desc, char* err, size_t err_size) {
	if (!desc_is_valid(desc, err, err_size)) return nullptr;
	try {
		return create(desc);
	} catch (const std::bad_alloc&) {
		set_error(err, err_size, "bullet peer: out of memory");
	} catch (...) {
		set_error(err, err_size, "bullet peer: exception while building the soft body");
	}
	return nullptr;
}

extern "C" void pbd_bullet_cloth_step(pbd_bullet_cloth* cloth, double dt) {
	// maxSubSteps 0 selects Bullet's variable-step path: one internal step of exactly dt,
	// with no interpolation or fixed-step accumulator in between.
	cloth->world.stepSimulation(btScalar(dt), 0);
}

extern "C" void pbd_bullet_cloth_get_state(const pbd_bullet_cloth* cloth, double* positions, double* velocities) {
	const btSoftBody::tNodeArray& nodes = cloth->body->m_nodes;
	for (int i = 0; i < nodes.size(); ++i) {
		for (int k = 0; k < 3; ++k) {
			if (positions) positions[3 * i + k] = double(nodes[i].m_x[k]);
			if (velocities) velocities[3 * i + k] = double(nodes[i].m_v[k]);
		}
	}
}

extern "C" uint32_t pbd_bullet_cloth_contact_count(const pbd_bullet_cloth* cloth) {
	return uint32_t(cloth->body->m_rcontacts.size());
}

static uint64_t fnv1a(uint64_t h, const void* data, size_t size) {
	const unsigned char* p = static_cast<const unsigned char*>(data);
	for (size_t i = 0; i < size; ++i) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

extern "C" uint64_t pbd_bullet_cloth_hash(const pbd_bullet_cloth* cloth) {
	const btSoftBody::tNodeArray& nodes = cloth->body->m_nodes;
	uint64_t h = 0xcbf29ce484222325ull;
	for (int i = 0; i < nodes.size(); ++i) {
		// Only x, y, z: btVector3 carries a fourth, unused lane whose bits are not state.
		for (int k = 0; k < 3; ++k) {
			const btScalar xk = nodes[i].m_x[k], vk = nodes[i].m_v[k];
			h = fnv1a(h, &xk, sizeof xk);
			h = fnv1a(h, &vk, sizeof vk);
		}
	}
	return h;
}

extern "C" void pbd_bullet_cloth_destroy(pbd_bullet_cloth* cloth) { delete cloth; }

extern "C" int pbd_bullet_version(void) { return btGetVersion(); }

extern "C" int pbd_bullet_scalar_size(void) { return int(sizeof(btScalar)); }
