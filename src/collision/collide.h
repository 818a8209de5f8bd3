/* The contact stage and the interface every collider shape implements.
 *
 * A shape is one file, collision/shape_<shape>.c, that defines one pbd_shape_ops and is listed in the
 * table in collide.c. Its functions work in the shape's local frame (the collider's pose maps it
 * to the world) and never see the world's particles: the stage (collide.c) finds, once per
 * substep, which particles are near which collider, asks the shape for a distance or a sweep,
 * and writes a contact plane per pair; the iterations project against the planes
 * (docs/collision.md). */
#ifndef PBD_COLLIDE_H
#define PBD_COLLIDE_H

#include <string.h>

#include "model/world.h"

/* A corner of a shape's surface (pbd_shape_ops.corners): a name for the vertex, unique within the
 * shape, its local point and a unit direction out of the solid there, or zero where the shape
 * has no inside (an open mesh). */
typedef void (*pbd_corner_fn)(void* ctx, uint32_t index, pbd_vec3 p, pbd_vec3 outward);

/* A convex edge of a shape's surface (pbd_shape_ops.edges): a name for it, unique within the
 * shape, its local end points and a unit direction out of the solid there (the normalised sum
 * of the unit normals of the two faces that meet at it). */
typedef void (*pbd_edge_fn)(void* ctx, uint32_t index, pbd_vec3 a, pbd_vec3 b, pbd_vec3 outward);

/* A shape's primitives near a ball of its local frame (pbd_shape_ops.near): every primitive that
 * comes within `radius` of `centre` is among ids[0, n). */
typedef struct pbd_near_list {
	const uint32_t* ids;
	uint32_t n;
	pbd_vec3 centre;
	pbd_real radius;
} pbd_near_list;

#define PBD_NEAR_NONE UINT32_MAX

/* The cosine of the angle between two faces' normals below which their edge is sharp (10
 * degrees): over a flatter crease a cloth face rests on the faces beside it, held by its
 * vertices' contacts within the sagitta of the crease. */
#define PBD_SHARP_EDGE_COS PBD_R(0.985)

typedef struct pbd_shape_ops {
	const char* name;
	/* Checks the shape part of a def and normalises it in place (e.g. unit normal). The caller
	 * has checked the margin, the pose and the material; the shape checks that its sizes plus
	 * the margin stay far enough from overflow for its own arithmetic. */
	pbd_status (*validate)(pbd_world* w, pbd_collider_def* def);
	/* Signed distance from the local point p to the surface (negative inside) and, in *normal,
	 * the outward unit normal of the surface at the closest point; for a point inside, the
	 * direction of the nearest way out. Finite and unit for every finite p, also where the
	 * nearest point is not unique (a sphere's centre, a box's centre): a fixed choice then. */
	pbd_real (*distance)(const pbd_collider_def* def, pbd_vec3 p, pbd_vec3* normal);
	/* Continuous collision: the first t in [0, 1] at which the point a + t (b - a) comes within
	 * `radius` of the surface, for a point a farther than `radius` from it. Returns false when it
	 * never does (or when a is not outside); otherwise *t and, in *normal, the outward unit
	 * normal of the surface at the point it first touches. */
	bool (*sweep)(const pbd_collider_def* def, pbd_vec3 a, pbd_vec3 b, pbd_real radius, pbd_real* t, pbd_vec3* normal);
	/* Local bounding box of the shape (without margin); false when it is unbounded (a plane). */
	bool (*bounds)(const pbd_collider_def* def, pbd_vec3* lo, pbd_vec3* hi);
	/* Shapes with arrays (NULL for the others): the bytes the world must own for a validated
	 * def, and the copy into `data` (aligned for any type) of the caller's arrays and of what
	 * the shape derives from them, after which the def's pointers must point into `data`. A
	 * copied def given again (a snapshot reload) must build the same bytes. */
	size_t (*data_size)(const pbd_collider_def* def);
	void (*build)(pbd_collider_def* def, void* data);
	/* Shapes with arrays (NULL for the others): the surface as triangles in the local frame,
	 * for drawing. Writes up to vertex_cap vertices and triangle_cap triangles (either array may
	 * be NULL) and returns the counts the whole surface needs in *vertices and *triangles. */
	void (*triangles)(const pbd_collider_def* def, pbd_vec3* vertex_out, uint32_t vertex_cap, uint32_t* triangle_out,
	                  uint32_t triangle_cap, uint32_t* vertices, uint32_t* triangles);
	/* Shapes with sharp corners (NULL for the others): emit(ctx, ...) for every vertex of the
	 * surface whose local point lies in [lo, hi], in a fixed order; the same vertex may come
	 * more than once. The outward direction lies
	 * in the cone of the normals of the faces that meet there (for the face contacts of triangle_contact.c, which need
	 * to know on which side of a cloth triangle the solid is). */
	void (*corners)(const pbd_collider_def* def, pbd_vec3 lo, pbd_vec3 hi, pbd_corner_fn emit, void* ctx);
	/* Shapes with sharp edges (NULL for the others): emit(ctx, ...) for every convex edge whose
	 * faces' normals meet at a cosine below PBD_SHARP_EDGE_COS and whose box meets [lo, hi], in
	 * a fixed order; the same edge may come more than once. Flat edges (a triangulation's
	 * diagonals) and concave ones are left out: the faces beside them hold a cloth there. An
	 * open mesh, which has no outside, lists none. */
	void (*edges)(const pbd_collider_def* def, pbd_vec3 lo, pbd_vec3 hi, pbd_edge_fn emit, void* ctx);
	/* Shapes whose distance is a search (NULL for the others): the sweep for a caller that knows
	 * `start`, a's distance as `distance` gives it, so that the sweep need not ask again. */
	bool (*sweep_from)(const pbd_collider_def* def, pbd_vec3 a, pbd_vec3 b, pbd_real radius, pbd_real start,
	                   pbd_real* t, pbd_vec3* normal);
	/* Shapes whose distance is a search over primitives (NULL for the others): the candidates a
	 * step keeps per particle (contact.c, "Candidates a step keeps"). `near` writes into ids the
	 * primitives that may come within `radius` of the local point `centre` (every other one lies
	 * farther), in a fixed order, and returns their count; more than cap, or a point too far out
	 * for the lists' arithmetic: PBD_NEAR_NONE. */
	uint32_t (*near)(const pbd_collider_def* def, pbd_vec3 centre, pbd_real radius, uint32_t* ids, uint32_t cap);
	/* `distance` and `sweep_from` over a list alone, where it proves the answer of the whole
	 * shape: the same bits as theirs (both take the least value, the lowest index among equals,
	 * and each primitive's value does not depend on the others). False where the list cannot
	 * tell: a point, or a path with its radius, not well inside the list's ball. */
	bool (*distance_among)(const pbd_collider_def* def, const pbd_near_list* l, pbd_vec3 p, pbd_real* dist,
	                       pbd_vec3* normal);
	/* *hit: whether the path touches, with *t and *normal as sweep_from gives them. */
	bool (*sweep_among)(const pbd_collider_def* def, const pbd_near_list* l, pbd_vec3 a, pbd_vec3 b, pbd_real radius,
	                    pbd_real start, bool* hit, pbd_real* t, pbd_vec3* normal);
} pbd_shape_ops;

extern const pbd_shape_ops pbd_shape_plane_ops;
extern const pbd_shape_ops pbd_shape_sphere_ops;
extern const pbd_shape_ops pbd_shape_capsule_ops;
extern const pbd_shape_ops pbd_shape_box_ops;
extern const pbd_shape_ops pbd_shape_convex_ops;
extern const pbd_shape_ops pbd_shape_mesh_ops;
extern const pbd_shape_ops pbd_shape_heightfield_ops;

/* Copies a validated def's arrays into memory the world owns (pbd_shape_ops.build) and points
 * the def at them; PBD_ERR_OUT_OF_MEMORY leaves c->data NULL. */
pbd_status pbd_collider_attach_data(pbd_world* w, pbd_collider* c);
/* The world box of a collider's shape over `pose_count` poses, grown by `grow`; false for an
 * unbounded shape (a plane). */
bool pbd_collider_world_box(const pbd_collider* c, const pbd_pose* poses, int pose_count, pbd_real grow, pbd_vec3* lo,
                            pbd_vec3* hi);
/* Frees every collider's arrays and the collider array (world destruction). */
void pbd_colliders_free(pbd_world* w);

/* pbd_collider_create's checks of a def (a loaded snapshot's colliders): PBD_OK, the status of
 * the first check it fails, or PBD_ERR_OUT_OF_MEMORY when a check could not get its scratch. */
pbd_status pbd_collider_def_check(pbd_world* w, const pbd_collider_def* def);

/* The ops of a shape type (type checked by the caller). */
const pbd_shape_ops* pbd_shape_ops_of(pbd_shape_type type);
/* A shape on a body (pbd_collider.body) moved to where the body is now (collide.c). */
void pbd_collider_follow(pbd_world* w, pbd_collider* c, bool jump);
/* Every shape on a body moved to where its body is, after the contacts' corrections. */
void pbd_colliders_follow_bodies(pbd_world* w);

/* A contact of the stage: particle `particle` must stay where dot(n, q) >= offset, with q its
 * displacement from x (world.h), i.e. on the outer side of a plane through the point the
 * particle may reach. Relative to x, so that a world far from the origin keeps the precision of
 * the step's small numbers. */
typedef struct pbd_contact_c {
	uint32_t particle;
	uint32_t collider; /* slot */
	uint32_t body;     /* slot + 1 of the dynamic body the collider rides on, pushed back; 0: none */
	uint32_t yielded;  /* 1: it pushes nothing this substep (pbd_collide_yield) */
	pbd_vec3 n;
	pbd_real offset;
	pbd_vec3 vc;  /* velocity of the collider's surface at the contact, m/s */
	pbd_real vn0; /* normal velocity relative to the surface when the contact was found */
	pbd_real dn;  /* normal correction accumulated over the iterations of the substep, m */
	pbd_vec3 r;   /* a body's contact: from its centre of mass to the contact point */
} pbd_contact_c;

_Static_assert(sizeof(pbd_contact_c) == 4 * sizeof(uint32_t) + 12 * sizeof(pbd_real), "padding in pbd_contact_c");

/* A rigid contact (rigid_contact.c): a feature of one collider's shape (the point side, p)
 * against the surface of another's (s), at least one of them on a dynamic body. The two points
 * must keep (x_p - x_s) . n >= the pair's gap, n the surface's outward normal. */
typedef struct pbd_rigid_c {
	uint32_t p, s;   /* the dynamic bodies (slot + 1) of the two ends; 0: an end no contact moves */
	uint32_t cp, cs; /* the colliders' slots */
	pbd_vec3 n;
	pbd_vec3 at;     /* midway between the two points, world, at the prediction (what the API reports) */
	pbd_vec3 rp, rs; /* from each dynamic body's centre of mass to its point */
	pbd_vec3 slip;   /* the points' relative motion from the substep's start to the prediction */
	pbd_vec3 vfix;   /* the velocity of an end that is no dynamic body's, feature's less surface's */
	pbd_vec3 ip, is; /* I^-1 (r x n) of each dynamic end (model/node.h), for a push along n */
	pbd_real wp, ws; /* each end's generalised inverse mass along n; 0 for an end no contact moves */
	pbd_real sep;    /* the separation along n at the prediction, less the gap */
	pbd_real sep0;   /* the soft step: sep when made, at the step's first substep */
	pbd_real dn;     /* the normal correction of this substep's iterations, m */
	pbd_vec3 ft;     /* static friction's tangential correction of this substep so far, m */
	pbd_real lambda; /* dn's impulse so far, kg m (+ on the feature's body): a kept contact's warm start */
	/* The soft step (PBD_BODY_SOLVER_SOFT_STEP): the normal impulse and the tangential friction
	 * impulse so far, N s (+ on the feature's body), carried from substep to substep and from
	 * step to step; the separation less the gap after the substep's iterations. */
	pbd_real pn;
	pbd_vec3 pt;
	pbd_real c_end;
	pbd_real pstep; /* the normal impulse the step applied so far: 0 for a speculative contact never closed */
	/* the soft step: two tangents across n, and per tangent I^-1 (r x t) of each end and the
	 * pair's generalised inverse mass along it (made with the contact, as wp, ws for n) */
	pbd_vec3 t[2], ipt[2], ist[2];
	pbd_real wt[2];
	pbd_real vn0; /* the normal relative velocity when found, m/s */
	/* AVBD (PBD_BODY_SOLVER_AVBD): the normal and friction rows' penalties, N/m, and the
	 * separation less the gap at the substep's start */
	pbd_real kn, kt, c0;
	pbd_real budget; /* the velocity pass: how much more slip speed kinetic friction may take, m/s */
	pbd_real mu_s, mu_k, e;
	uint32_t held;  /* the end (slot + 1) shock propagation holds, lower along gravity; 0: none */
	uint32_t group; /* the body (slot + 1) whose contacts the settling passes take together */
	/* the feature's surface point in its shape's frame, the other surface's point and normal in
	 * the other shape's frame: what a later substep of the step reads the contact from again */
	pbd_vec3 lp, ls, ln;
} pbd_rigid_c;

/* A pair of colliders of a substep's rigid contacts (rigid_contact.c): the lower and higher slot
 * (lower << 32 | higher), where the shape of smaller reach stood in the other's frame when the
 * pair's contacts were searched, that reach, and its contacts' range in the substep's list. */
typedef struct pbd_rigid_pair {
	uint64_t key;
	pbd_vec3 at;
	pbd_quat turn;
	pbd_real reach;
	uint32_t first, count;
	bool i_moves; /* the lower slot's shape is the one of smaller reach */
} pbd_rigid_pair;

/* A feature of a shape in its own frame (rigid_contact.c): a point (a == b) or a segment, with a
 * radius. `ends`: the segment's ends are features of their own (a box's corners), so only a point
 * between them that comes nearer than both counts. */
typedef struct pbd_rigid_feature {
	pbd_vec3 a, b;
	pbd_real r;
	bool ends;
} pbd_rigid_feature;

/* After the colliders took the bodies' predicted poses: the contacts of the dynamic bodies' shapes
 * with each other and with every collider. */
pbd_status pbd_rigid_contacts_find(pbd_world* w);
/* Before a step's substeps: its first substep searches every pair afresh. */
void pbd_rigid_contacts_begin_step(pbd_world* w);
/* The kept contacts no longer describe the colliders (one was made, changed or dropped): the next
 * substep searches every pair afresh. */
void pbd_rigid_contacts_forget(pbd_world* w);
/* The kept pairs and contacts a snapshot gave (w->rpair, w->nrpair, w->rkeep: the pairs' keys,
 * poses, reaches and counts, first in order; each contact's cp, lp, ls, ln, pn and pt): NULL when
 * the search could have made them, else what is wrong. */
const char* pbd_rigid_contacts_check_kept(const pbd_world* w);
/* One pass over them (every iteration). */
void pbd_rigid_contacts_project(pbd_world* w);
/* After the iterations, before the bodies take their corrections: one more pass, from the bottom
 * up with shock propagation, each body's contacts until they settle. */
void pbd_rigid_contacts_settle(pbd_world* w);
/* After the bodies took their velocities: the contacts' velocity pass (restitution, no normal
 * speed otherwise, kinetic friction). */
void pbd_rigid_contacts_velocities(pbd_world* w, pbd_real h);

/* A rounded collider against a surface triangle (triangle_contact.c): the point sum_k b_k p_k
 * of triangle t must keep dot(n, sum_k b_k q_k) >= offset. */
typedef struct pbd_tri_contact {
	pbd_real b[3];
	pbd_vec3 n;
	pbd_real offset;
	pbd_vec3 r; /* a dynamic body's lever arm to the contact's core point */
	uint32_t t;
	uint32_t body;     /* the dynamic body (slot + 1) whose shape it is, pushed back; 0: none */
	uint32_t collider; /* slot */
	uint32_t pad_;
} pbd_tri_contact;

_Static_assert(sizeof(pbd_tri_contact) == 4 * sizeof(uint32_t) + 10 * sizeof(pbd_real), "padding in pbd_tri_contact");

/* A corner of a collider near a surface triangle (triangle_contact.c's scratch): the shape's
 * name for it, its local point and outward direction (pbd_corner_fn). */
typedef struct pbd_corner_rec {
	uint32_t index;
	pbd_vec3 p, out;
} pbd_corner_rec;

/* An edge of a collider near a surface triangle (triangle_contact.c's scratch): the shape's name
 * for it, its local end points and outward direction (pbd_edge_fn). */
typedef struct pbd_edge_rec {
	uint32_t index;
	pbd_vec3 a, b, out;
} pbd_edge_rec;

/* The features of one collider gathered for one chunk of surface triangles, kept for the step
 * (triangle_contact.c): the local box they were gathered for and their runs in the step's pools. */
typedef struct pbd_feature_keep {
	pbd_pose pose; /* the collider's pose when they were gathered: their world copies' */
	pbd_vec3 lo, hi;
	uint32_t corner, ncorner, edge, nedge;
	bool filled;
} pbd_feature_keep;

/* A chunk of surface triangles for the face contacts' stage (triangle_contact.c): its number, its
 * box grown by the margin in the world and that box in the collider's frame. */
typedef struct pbd_face_item {
	uint32_t k;
	pbd_vec3 llo, lhi, blo, bhi;
} pbd_face_item;

/* After the substep's particle contacts: the triangle contacts (PBD_COLLISION_IN_SOLVER). */
pbd_status pbd_triangle_contacts_find(pbd_world* w);
/* One pass over them (every iteration). */
void pbd_triangle_contacts_project(pbd_world* w);
/* After an iteration: the faces that the constraints moved into a rounded collider's way get
 * contacts too, projected at once (as pbd_collide_catch_late for particles). */
pbd_status pbd_triangle_contacts_catch_late(pbd_world* w);

/* Advances kinematic colliders by one substep of h (their pose at the start of it is kept for
 * the sweeps), then, in PBD_COLLISION_IN_SOLVER, finds the substep's contacts from x (start)
 * and x + q (predicted). */
pbd_status pbd_collide_begin_substep(pbd_world* w, pbd_real h);
/* PBD_COLLISION_AFTER_SOLVER: the contacts of the finished positions, projected once. */
pbd_status pbd_collide_after_iterations(pbd_world* w);
/* After the iterations: a contact, projected at once, for every particle that ends within a
 * collider's margin without one (contact.c, "Contacts nothing slips past"). */
pbd_status pbd_collide_catch_late(pbd_world* w, bool sweep);
/* The first of records [0, n) of `size` bytes (in order by the pair of uint32 fields at byte
 * offsets `hi` and `lo`) whose pair is not below (key_hi, key_lo): the contact arrays' search. */
static inline uint32_t pbd_lower_bound_pair(const void* base, size_t size, uint32_t n, size_t hi, size_t lo,
                                            uint32_t key_hi, uint32_t key_lo) {
	const uint64_t key = (uint64_t)key_hi << 32 | key_lo;
	uint32_t a = 0, b = n;
	while (a < b) {
		const uint32_t mid = a + (b - a) / 2;
		const unsigned char* r = (const unsigned char*)base + (size_t)mid * size;
		uint32_t h, l;
		memcpy(&h, r + hi, sizeof h);
		memcpy(&l, r + lo, sizeof l);
		if (((uint64_t)h << 32 | l) < key)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

/* A face that a fast rounded collider meets keeps the plane between them at the start of the
 * substep, normal n (triangle_contact.c, rounded_contact). A vertex of that face whose own contact
 * with the collider pushes it the other way (normal against n: the collider passed beside the
 * vertex, so it alone would end on the far side) yields: its contact pushes nothing this
 * substep. A vertex with no contact gets one that pushes nothing, so that the late passes make
 * none. */
void pbd_collide_yield(pbd_world* w, uint32_t slot, uint32_t particle, pbd_vec3 n);
/* One pass of the contact planes over q (every iteration in PBD_COLLISION_IN_SOLVER). */
void pbd_collide_project_contacts(pbd_world* w);
/* After friction: particles still deeper than the tolerance in a collider move out by its
 * closest point (PBD_COLLISION_IN_SOLVER). */
void pbd_collide_settle(pbd_world* w);
/* After the iterations: Coulomb friction on the substep's tangential slip. */
void pbd_collide_friction(pbd_world* w, pbd_real h);
/* After the velocity update: the push-out of a particle that started inside the margin shell
 * taken back from its velocity, and restitution of fast approaches. */
void pbd_collide_restitution(pbd_world* w, pbd_real h);
/* After the step: the published contacts and the trigger events. */
pbd_status pbd_collide_end_step(pbd_world* w);
/* The distances and lists a step keeps (contact.c) dropped: at the start of every step and once
 * its statistics are made, so that nothing the API changes between steps is seen through them. */
void pbd_collide_drop_kept(pbd_world* w);
/* For the statistics of the step just made: the distance of particle i, at the local point l,
 * from collider slot's shape, or PBD_REAL_MAX where the step's kept distance proves it farther
 * than `reach`; the kept lists answer where they can (the same bits as the query). */
pbd_real pbd_collide_stats_distance(const pbd_world* w, uint32_t slot, uint32_t i, pbd_vec3 l, pbd_real reach);

#endif
