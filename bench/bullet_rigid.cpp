/* pbd benchmark: Bullet's rigid-body world in the rigid-body rows (bench/rigid.c). The bodies are
 * btRigidBody objects with btBoxShape, btSphereShape, btCapsuleShape and btConvexHullShape, given
 * the mass and the principal moments the pbd rows compute, joined by btPoint2PointConstraint where
 * the scene has ball joints, in one btDiscreteDynamicsWorld stepped once per frame or in as many
 * substeps as pbd takes.
 *
 * Bodies never sleep here (DISABLE_DEACTIVATION), nor in the pbd rows (sleep_time 0): a row's time
 * is the work of a step on the same awake bodies, and a stack that fell asleep would hide its
 * drift. docs/BENCHMARKS.md, "Rigid bodies", lists the other settings. */
#include "bullet_rigid.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>

#include <BulletCollision/BroadphaseCollision/btDbvtBroadphase.h>
#include <BulletCollision/CollisionDispatch/btCollisionDispatcher.h>
#include <BulletCollision/CollisionDispatch/btDefaultCollisionConfiguration.h>
#include <BulletCollision/CollisionShapes/btBoxShape.h>
#include <BulletCollision/CollisionShapes/btCapsuleShape.h>
#include <BulletCollision/CollisionShapes/btConvexHullShape.h>
#include <BulletCollision/CollisionShapes/btSphereShape.h>
#include <BulletCollision/CollisionShapes/btStaticPlaneShape.h>
#include <BulletCollision/NarrowPhaseCollision/btPersistentManifold.h>
#include <BulletDynamics/ConstraintSolver/btPoint2PointConstraint.h>
#include <BulletDynamics/ConstraintSolver/btSequentialImpulseConstraintSolver.h>
#include <BulletDynamics/Dynamics/btDiscreteDynamicsWorld.h>
#include <BulletDynamics/Dynamics/btRigidBody.h>
#include <LinearMath/btAlignedObjectArray.h>
#include <LinearMath/btScalar.h>

struct pbd_bullet_rigid {
	btDefaultCollisionConfiguration config;
	btCollisionDispatcher dispatcher;
	btDbvtBroadphase broadphase;
	btSequentialImpulseConstraintSolver solver;
	btDiscreteDynamicsWorld world;
	btAlignedObjectArray<btCollisionShape*> shapes;
	btAlignedObjectArray<btRigidBody*> bodies; // in the order of the desc; the floor is not one of them
	btAlignedObjectArray<btPoint2PointConstraint*> joints;
	btRigidBody* floor = nullptr;

	pbd_bullet_rigid() : dispatcher(&config), world(&dispatcher, &broadphase, &solver, &config) {}
	~pbd_bullet_rigid() {
		for (int i = 0; i < joints.size(); ++i) {
			world.removeConstraint(joints[i]);
			delete joints[i];
		}
		for (int i = 0; i < bodies.size(); ++i) {
			world.removeRigidBody(bodies[i]);
			delete bodies[i];
		}
		if (floor) {
			world.removeRigidBody(floor);
			delete floor;
		}
		for (int i = 0; i < shapes.size(); ++i) delete shapes[i];
	}
	pbd_bullet_rigid(const pbd_bullet_rigid&) = delete;
	pbd_bullet_rigid& operator=(const pbd_bullet_rigid&) = delete;
};

static void set_error(char* err, size_t size, const char* message) {
	if (err && size > 0) std::snprintf(err, size, "%s", message);
}

static bool finite3(const double* v) { return std::isfinite(v[0]) && std::isfinite(v[1]) && std::isfinite(v[2]); }

static bool body_is_valid(const pbd_bullet_rigid_body* b) {
	bool shape_ok = false;
	switch (b->shape) {
	case PBD_BULLET_RIGID_BOX:
		shape_ok = b->half[0] > 0 && b->half[1] > 0 && b->half[2] > 0 && finite3(b->half);
		break;
	case PBD_BULLET_RIGID_SPHERE:
		shape_ok = b->radius > 0 && std::isfinite(b->radius);
		break;
	case PBD_BULLET_RIGID_CAPSULE:
		shape_ok = b->radius > 0 && b->half_height > 0 && std::isfinite(b->radius) && std::isfinite(b->half_height);
		break;
	case PBD_BULLET_RIGID_HULL:
		shape_ok = b->points && b->point_count >= 4 && b->point_count <= 0x7fffffffu;
		for (uint32_t k = 0; shape_ok && k < b->point_count; ++k) shape_ok = finite3(b->points + 3 * (size_t)k);
		break;
	}
	const double q = b->rotation[0] * b->rotation[0] + b->rotation[1] * b->rotation[1] +
	                 b->rotation[2] * b->rotation[2] + b->rotation[3] * b->rotation[3];
	const bool dynamic_ok = b->mass == 0 || (b->mass > 0 && b->inertia[0] > 0 && b->inertia[1] > 0 &&
	                                         b->inertia[2] > 0 && std::isfinite(b->mass) && finite3(b->inertia));
	return shape_ok && dynamic_ok && finite3(b->position) && std::fabs(q - 1) < 1e-6;
}

static bool desc_is_valid(const pbd_bullet_rigid_desc* d, char* err, size_t err_size) {
	if (!d || (d->body_count > 0 && !d->bodies) || d->body_count > 0x7fffffffu) {
		set_error(err, err_size, "bullet rigid: null desc or bodies, or too many bodies");
		return false;
	}
	if (d->iterations < 1 || !(d->friction >= 0 && d->friction <= 10) || !std::isfinite(d->gravity_y)) {
		set_error(err, err_size, "bullet rigid: iterations, friction or gravity out of range");
		return false;
	}
	for (uint32_t i = 0; i < d->body_count; ++i)
		if (!body_is_valid(&d->bodies[i])) {
			set_error(err, err_size, "bullet rigid: a body with a bad shape, pose, mass or inertia");
			return false;
		}
	if (d->joint_count > 0 && !d->joints) {
		set_error(err, err_size, "bullet rigid: joint_count without joints");
		return false;
	}
	const int64_t n = d->body_count;
	for (uint32_t i = 0; i < d->joint_count; ++i) {
		const pbd_bullet_rigid_joint* j = &d->joints[i];
		if (j->a < -1 || j->a >= n || j->b < -1 || j->b >= n || j->a == j->b || !finite3(j->pivot_a) ||
		    !finite3(j->pivot_b)) {
			set_error(err, err_size, "bullet rigid: a joint with a bad body index or pivot");
			return false;
		}
	}
	return true;
}

static btCollisionShape* make_shape(const pbd_bullet_rigid_body* b) {
	switch (b->shape) {
	case PBD_BULLET_RIGID_BOX:
		// The box keeps its default margin (4 cm): btBoxShape takes it out of the half extents, so
		// the shape's surface is still the box's.
		return new btBoxShape(btVector3(btScalar(b->half[0]), btScalar(b->half[1]), btScalar(b->half[2])));
	case PBD_BULLET_RIGID_SPHERE:
		return new btSphereShape(btScalar(b->radius));
	case PBD_BULLET_RIGID_CAPSULE:
		return new btCapsuleShape(btScalar(b->radius), btScalar(2 * b->half_height));
	case PBD_BULLET_RIGID_HULL: {
		btConvexHullShape* hull = new btConvexHullShape();
		for (uint32_t k = 0; k < b->point_count; ++k) {
			const double* p = b->points + 3 * (size_t)k;
			hull->addPoint(btVector3(btScalar(p[0]), btScalar(p[1]), btScalar(p[2])), false);
		}
		hull->recalcLocalAabb();
		hull->setMargin(btScalar(PBD_BULLET_RIGID_HULL_MARGIN));
		return hull;
	}
	}
	return nullptr;
}

static btVector3 vec3(const double* v) { return btVector3(btScalar(v[0]), btScalar(v[1]), btScalar(v[2])); }

static void create(pbd_bullet_rigid* s, const pbd_bullet_rigid_desc* d) {
	s->world.setGravity(btVector3(0, btScalar(d->gravity_y), 0));
	s->world.getSolverInfo().m_numIterations = d->iterations;
	const btScalar friction = btScalar(std::sqrt(d->friction));
	if (d->floor) {
		btCollisionShape* plane = new btStaticPlaneShape(btVector3(0, 1, 0), 0);
		s->shapes.push_back(plane);
		btRigidBody::btRigidBodyConstructionInfo info(0, nullptr, plane);
		info.m_friction = friction;
		s->floor = new btRigidBody(info);
		s->world.addRigidBody(s->floor);
	}
	for (uint32_t i = 0; i < d->body_count; ++i) {
		const pbd_bullet_rigid_body* b = &d->bodies[i];
		btCollisionShape* shape = make_shape(b);
		s->shapes.push_back(shape);
		const btVector3 inertia(btScalar(b->inertia[0]), btScalar(b->inertia[1]), btScalar(b->inertia[2]));
		btRigidBody::btRigidBodyConstructionInfo info(btScalar(b->mass), nullptr, shape,
		                                              b->mass > 0 ? inertia : btVector3(0, 0, 0));
		info.m_startWorldTransform.setIdentity();
		info.m_startWorldTransform.setOrigin(
		    btVector3(btScalar(b->position[0]), btScalar(b->position[1]), btScalar(b->position[2])));
		info.m_startWorldTransform.setRotation(btQuaternion(btScalar(b->rotation[0]), btScalar(b->rotation[1]),
		                                                    btScalar(b->rotation[2]), btScalar(b->rotation[3])));
		info.m_friction = friction;
		btRigidBody* body = new btRigidBody(info);
		s->bodies.push_back(body);
		if (b->mass > 0) body->setActivationState(DISABLE_DEACTIVATION);
		if (b->no_contact)
			s->world.addRigidBody(body, int(btBroadphaseProxy::DefaultFilter), 0);
		else
			s->world.addRigidBody(body);
	}
	for (uint32_t i = 0; i < d->joint_count; ++i) {
		const pbd_bullet_rigid_joint* j = &d->joints[i];
		// The world side is Bullet's fixed body, whose frame is the world's.
		btRigidBody& a = j->a < 0 ? btTypedConstraint::getFixedBody() : *s->bodies[j->a];
		btRigidBody& b = j->b < 0 ? btTypedConstraint::getFixedBody() : *s->bodies[j->b];
		btPoint2PointConstraint* c = new btPoint2PointConstraint(a, b, vec3(j->pivot_a), vec3(j->pivot_b));
		s->joints.push_back(c);
		s->world.addConstraint(c, true);
	}
}

extern "C" pbd_bullet_rigid* pbd_bullet_rigid_create(const pbd_bullet_rigid_desc* desc, char* err, size_t err_size) {
	if (!desc_is_valid(desc, err, err_size)) return nullptr;
	pbd_bullet_rigid* s = nullptr;
	try {
		s = new pbd_bullet_rigid();
		create(s, desc);
		return s;
	} catch (const std::bad_alloc&) {
		set_error(err, err_size, "bullet rigid: out of memory");
	} catch (...) {
		set_error(err, err_size, "bullet rigid: exception while building the bodies");
	}
	delete s;
	return nullptr;
}

extern "C" void pbd_bullet_rigid_step(pbd_bullet_rigid* world, double dt, int substeps) {
	// maxSubSteps 0: one internal step of exactly the length given. Bullet's own substepping,
	// stepSimulation(dt, n, dt / n), counts the steps from an accumulated time, which rounding can
	// leave one short in a frame.
	const int n = substeps > 1 ? substeps : 1;
	const btScalar h = btScalar(dt / n);
	for (int i = 0; i < n; ++i) world->world.stepSimulation(h, 0);
}

extern "C" void pbd_bullet_rigid_get_positions(const pbd_bullet_rigid* world, double* positions) {
	for (int i = 0; i < world->bodies.size(); ++i) {
		const btVector3& x = world->bodies[i]->getCenterOfMassPosition();
		for (int k = 0; k < 3; ++k) positions[3 * i + k] = double(x[k]);
	}
}

extern "C" double pbd_bullet_rigid_min_distance(const pbd_bullet_rigid* world, uint32_t* count) {
	double least = std::numeric_limits<double>::infinity();
	uint32_t points = 0;
	// getNumManifolds and getManifoldByIndexInternal are not const in Bullet's interface.
	btCollisionDispatcher& dispatcher = const_cast<btCollisionDispatcher&>(world->dispatcher);
	const int manifolds = dispatcher.getNumManifolds();
	for (int m = 0; m < manifolds; ++m) {
		const btPersistentManifold* manifold = dispatcher.getManifoldByIndexInternal(m);
		for (int p = 0; p < manifold->getNumContacts(); ++p) {
			const double distance = double(manifold->getContactPoint(p).getDistance());
			if (distance < least) least = distance;
			++points;
		}
	}
	if (count) *count = points;
	return least;
}

extern "C" double pbd_bullet_rigid_max_joint_error(const pbd_bullet_rigid* world) {
	double most = 0;
	for (int i = 0; i < world->joints.size(); ++i) {
		const btPoint2PointConstraint* c = world->joints[i];
		const btVector3 a = c->getRigidBodyA().getCenterOfMassTransform() * c->getPivotInA();
		const btVector3 b = c->getRigidBodyB().getCenterOfMassTransform() * c->getPivotInB();
		const double gap = double((a - b).length());
		if (!(gap <= most)) most = gap;
		if (std::isnan(most)) break; // a NaN is the answer
	}
	return most;
}

extern "C" void pbd_bullet_rigid_destroy(pbd_bullet_rigid* world) { delete world; }
