/* Internal layout of a world. Not installed; tests may include it. */
#ifndef PBD_WORLD_INTERNAL_H
#define PBD_WORLD_INTERNAL_H

#include "core/core.h"
#include "model/bodies.h"
#include "model/family.h"
#include "core/profile.h"
#include "core/task.h"

/* The state of stages that live above the world's data (methods/, collision/): the world points
 * at it, in the block it was allocated in (world.c), so that this header names no stage's types. */
typedef struct pbd_hierarchy pbd_hierarchy;
typedef struct pbd_integrator pbd_integrator;
typedef struct pbd_particle_collision pbd_particle_collision;
typedef struct pbd_sweep_plan pbd_sweep_plan;

enum {
	PBD_PARTICLE_PINNED = 1u << 0,
	PBD_PARTICLE_TARGET = 1u << 1,  /* pinned and moving to target[] during this step */
	PBD_PARTICLE_FORCE = 1u << 2,   /* has a non-zero external force */
	PBD_PARTICLE_CONTACT = 1u << 3, /* scratch mark of the contact count in the diagnostics */
	PBD_PARTICLE_HELD = 1u << 4     /* a still collider holds it up (pbd_collide_settle to _restitution) */
};

typedef struct pbd_collider {
	/* def.pose is where it is now. A shape on a body is held as a kinematic collider whose pose
	 * and velocities follow the body (collide.c); the API shows it as the user gave it. */
	pbd_collider_def def;
	pbd_pose pose0; /* where it was at the start of the current substep (collide.c) */
	uint32_t body;  /* slot + 1 of the body it rides on; 0: none */
	pbd_pose local; /* its pose in that body's frame */
	void* data;     /* the shape's arrays, owned (pbd_shape_ops.build); NULL for most shapes */
	size_t data_size;
	uint32_t generation;
	bool alive;
} pbd_collider;

typedef struct pbd_contact_c pbd_contact_c;

/* The most primitives a particle's kept list holds (pbd_broad.near_ids), and its count's marks:
 * no list gathered yet in this step, and none to be (more primitives, or a point too far out). */
#define PBD_NEAR_CAP     16u
#define PBD_NEAR_NOT_YET 0xFFu
#define PBD_NEAR_NO      0xFEu

/* The broad phase's working arrays (contact.c), grown when the world grows. */
typedef struct pbd_broad {
	pbd_box3* chunk; /* per chunk of particles: the box of their paths in the substep */
	uint32_t* chunk_order;
	pbd_box3* collider; /* per collider slot: its box over the substep */
	uint8_t* bounded_of;
	uint32_t* collider_order;
	uint64_t* pairs; /* (collider slot << 32 | chunk), sorted */
	uint32_t cap_chunk, cap_chunk_order, cap_collider, cap_bounded, cap_collider_order, cap_pairs;
	/* The substep's first search: its pairs, and per pair and particle of the chunk the distance
	 * from the collider where the particle starts and its normal there (4 reals; NaN: not
	 * measured), which the second look's sweep needs again: x and the collider's starting pose
	 * have not moved. */
	uint64_t* first_pairs;
	pbd_real* start;
	uint32_t nfirst, cap_first_pairs, cap_start;
	/* The clearances a step keeps (contact.c, "Queries a step need not repeat"): per collider
	 * slot whose distance query is dear (meshes, height fields, hulls), the first entry of its block
	 * (UINT32_MAX: none), an entry of 4 reals per particle; in an entry, the point in the collider's frame
	 * where the particle's distance was last measured in this step, and that distance (NaN: not
	 * measured yet). Set up at the step's first search, dropped at its end. */
	uint32_t* clear_of;
	pbd_real* clear;
	size_t cap_clear;
	uint32_t cap_clear_of, clear_np;
	bool clear_ready;
	bool clear_off; /* tests only: every query made, to check that the kept ones change nothing */
	/* Over the world's life: the dear queries made, and those the kept clearances spared. */
	_Atomic uint64_t clear_made, clear_spared;
	/* The candidates a step keeps (contact.c, "Candidates a step keeps"): per collider slot whose
	 * shape keeps lists, the first entry of its block (UINT32_MAX: none); per entry (a particle)
	 * up to PBD_NEAR_CAP primitives, their count (or PBD_NEAR_NOT_YET, PBD_NEAR_NO) and the ball
	 * in the collider's frame they cover (centre, radius). Reset at the step's first search. */
	uint32_t* near_of;
	uint32_t* near_ids;
	uint8_t* near_n;
	pbd_real* near_ball;
	uint32_t cap_near_of, cap_near_ids, cap_near_n, cap_near_ball;
	bool near_ready; /* set up for the step's particles and colliders (pbd_collide_drop_kept clears it) */
	bool near_off;   /* tests only: no list kept, to check that the kept ones change nothing */
	/* Over the world's life: the queries a kept list answered, and the lists gathered. */
	_Atomic uint64_t near_used, near_gathered;
	bool brute_force; /* tests only: every collider against every chunk, to check the sweep */
} pbd_broad;

/* A symmetric 3x3 matrix. */
typedef struct pbd_sym3 {
	pbd_real xx, yy, zz, xy, xz, yz;
} pbd_sym3;

/* Air drag coefficients of a surface triangle, kg/(m^2 s): across it and along it. */
typedef struct pbd_tri_drag {
	pbd_real normal, tangent;
} pbd_tri_drag;

/* One block's sums in the statistics pass: a range of one family's constraints, or a range of
 * particles (kinetic and potential energy, momentum). */
typedef struct pbd_stats_part {
	pbd_family_sums fam;
	double kinetic, potential, momentum[3];
} pbd_stats_part;

typedef struct pbd_soft_rec {
	pbd_soft_info info;
	uint32_t generation;
	uint32_t alive; /* 1; a removal will set 0 and bump the generation */
} pbd_soft_rec;

struct pbd_world {
	pbd_world_def def; /* current settings; cookie valid */
	pbd_alloc_ctx mem;
	/* The world sits this many bytes into the block it was allocated in, placed at the alignment
	 * its type declares (pbd_exec's per-thread shares are cache-line aligned), which the
	 * allocator does not promise. */
	size_t block_offset;
	char last_error[256];

	/* particles, structure of arrays */
	uint32_t np, cap_p;
	/* A position is x + x_lo: x is the float nearest to it (what the API shows) and x_lo the
	 * rounding remainder, at most half an ulp of x. Inside a substep the solver moves q, the
	 * displacement from x (it starts at x_lo + v h), never x itself: constraint math takes
	 * differences (x_a - x_b) + (q_a - q_b), exact for near particles however far from the
	 * origin, and the velocity is rebuilt from q, where the small terms are not lost to the
	 * size of the coordinate (docs/methods.md, "Precision"). */
	pbd_vec3* x;      /* positions at the end of the last substep, rounded */
	pbd_vec3* x_lo;   /* remainder: the position is x + x_lo */
	pbd_vec3* q;      /* displacement from x inside a substep */
	pbd_vec3* v;      /* velocities, rounded */
	pbd_vec3* v_lo;   /* remainder: the velocity is v + v_lo, so that many substeps of g h add up */
	pbd_vec3* x_step; /* positions at the start of the step, to undo a non-finite particle */
	pbd_vec3* force;  /* external force, N */
	pbd_vec3* target; /* kinematic target of a pinned particle */
	pbd_vec3* from;   /* where a targeted particle started the step */
	pbd_real* w;      /* inverse mass, 0 = pinned */
	pbd_real* w_free; /* inverse mass to restore when unpinned */
	uint8_t* flags;
	uint32_t* cmask;  /* collision mask: collides with colliders whose category shares a bit */
	pbd_real* radius; /* collision radius, half the object's thickness; 0: a point */
	uint32_t* cgroup; /* particle collision group (object index + 1, | PBD_GROUP_SELF); 0: none */
	pbd_vec3* x_rest; /* position when added: self-collision skips pairs closer than this at rest */
	/* sized by node (node.h, nodes.c): cap_node entries */
	size_t cap_node;
	uint32_t* degree;      /* constraints of all families touching the node (Jacobi averaging) */
	pbd_vec3* dx;          /* Jacobi correction accumulator */
	uint64_t* colour_mask; /* partition.c's scratch: colours used around each node */
	pbd_vec3* q_prev;      /* Chebyshev: the iterate before the last (solver.c) */
	pbd_vec3* q_iter;      /* Chebyshev: the iterate the last sweep started from; the hierarchy's q0 */
	pbd_real rho_estimate; /* Chebyshev: spectral radius measured in the last substep (0: none yet) */
	pbd_real* drag;        /* air drag on the particle, kg/s, >= 0 (forces.c) */
	pbd_vec3* drag_wind;   /* wind of the particle's own, added to the world's, m/s */
	pbd_vec3* air_force;   /* air force of the current substep, N (forces.c's scratch) */
	pbd_sym3* air_drag;    /* the air's drag on the particle's velocity, kg/s (forces.c's scratch) */
	uint32_t n_drag;       /* particles with drag > 0 */
	bool air_on;           /* air_force and air_drag hold this substep's air */

	/* constraints, one storage block per family (family.h) */
	pbd_family fam[PBD_FAMILY_COUNT];
	bool partitioned;      /* every family is in solver order (partition.c) */
	bool simd_lanes;       /* def.simd resolved against the build and the CPU at creation (cpu.h) */
	bool simd_avx512;      /* and whether the lanes move particles with AVX-512 masked loads and stores */
	uint64_t topology;     /* partitions built so far: what depends on the constraint set compares it */
	bool masses_changed;   /* an inverse mass or a pin changed since the hierarchy was built (hierarchy.c) */
	pbd_hierarchy* hier;   /* coarse levels of the hierarchical solve (hierarchy.c) */
	pbd_integrator* integ; /* the force-based methods' working arrays (integrate.c) */

	/* surface triangles */
	uint32_t nt, cap_t;
	uint32_t* tri;
	pbd_tri_drag* tri_drag; /* air drag of each triangle (forces.c) */
	pbd_vec3* tri_wind;     /* wind of the triangle's own, added to the world's, m/s */
	uint32_t nt_drag;       /* triangles with a drag coefficient > 0 */

	/* colliders and the contact stage (collide.c, contact.c) */
	uint32_t nc, cap_c;
	pbd_collider* colliders;
	uint32_t ncon, cap_con; /* contacts of the current substep, in order (collider, particle) */
	pbd_contact_c* con;
	pbd_contact_c* con_late; /* scratch of the late passes (contact.c merge_late) */
	uint32_t cap_con_late;
	uint32_t npub, cap_pub; /* contacts published after the last step */
	pbd_contact* pub;
	uint32_t ninside, cap_inside, cap_inside_next; /* trigger occupancy, sorted (slot << 32 | particle) */
	uint64_t *inside, *inside_next;
	uint32_t nev, cap_events; /* trigger events of the last step */
	pbd_trigger_event* events;
	uint32_t nobj_ev, cap_obj_events, cap_obj_prev, cap_obj_next; /* the same for whole objects */
	pbd_trigger_object_event* obj_events;
	uint64_t *obj_prev, *obj_next;
	pbd_particle_collision* pcol; /* particle pairs (self_collision.c) */
	uint32_t ntc, cap_tc;         /* colliders against surface triangles (triangle_contact.c) */
	struct pbd_tri_contact* tcon;
	pbd_box3* tri_chunk; /* per chunk of surface triangles: the box of their vertices' paths */
	uint32_t cap_tri_chunk;
	pbd_box3* path_box; /* per particle: the box of its path in the substep, grown by the largest radius */
	uint32_t cap_path_box;
	uint32_t ncorner, cap_corner; /* the corners of a shape near one triangle (triangle_contact.c's scratch) */
	struct pbd_corner_rec* corner;
	uint32_t nedge, cap_edge; /* the edges of a shape near one triangle (triangle_contact.c's scratch) */
	struct pbd_edge_rec* edge;
	/* The face contacts of one collider on the threads (triangle_contact.c, "Chunks on the
	 * threads"): the chunks to search, each worker's corners and edges of one chunk, and the
	 * contacts in block order before they join tcon. */
	struct pbd_face_item* fitem;
	uint32_t nfitem, cap_fitem;
	struct {
		struct pbd_corner_rec* corner;
		struct pbd_edge_rec* edge;
		uint32_t cap_corner, cap_edge;
	} fwork[PBD_MAX_THREADS];
	struct pbd_tri_contact* tstage;
	uint32_t cap_tstage;
	pbd_real* tri_chunk_move; /* per chunk of surface triangles: its vertices' longest path in the substep */
	uint32_t cap_tri_chunk_move;
	/* The corners and edges of colliders gathered for chunks of surface triangles, kept for the
	 * rest of the step (triangle_contact.c, "Features a step need not gather again"): per
	 * collider slot the first of its records, one per chunk (UINT32_MAX: none yet); the records;
	 * the gathered features in the collider's frame, each record's in one run, and in the world. */
	struct {
		uint32_t* of;
		struct pbd_feature_keep* rec;
		struct pbd_corner_rec *corner, *wcorner; /* wcorner, wedge: the same in the world at the record's pose */
		struct pbd_edge_rec *edge, *wedge;
		uint32_t cap_of, cap_rec, cap_corner, cap_edge, cap_wcorner, cap_wedge, nrec, ncorner, nedge, nchunk;
		bool ready;
		bool off;                  /* tests only: every chunk gathers its features every substep */
		bool plane_off;            /* tests only: features go to the closest points without the face's plane first */
		uint64_t gathered, reused; /* over the world's life: chunks gathered and chunks filtered */
	} fkeep;
	bool corners_off;     /* tests only: no face contacts for shapes with corners, the path before them */
	bool edges_off;       /* tests only: no face contacts for the edges of shapes, the path before them */
	pbd_broad broad;      /* colliders against chunks of particles (contact.c) */
	uint32_t nrc, cap_rc; /* the dynamic bodies' contacts with each other and with colliders (rigid_contact.c) */
	struct pbd_rigid_c* rcon;
	uint32_t nrfeat, cap_rfeat; /* the features of one shape near another (rigid_contact.c's scratch) */
	struct pbd_rigid_feature* rfeat;
	/* rigid_contact.c's broad phase: per collider slot its box over the substep, the slots by the
	 * boxes' low x (kept from substep to substep, so that sorting is nearly linear), and the
	 * pairs that overlap, (lower slot << 32 | higher), sorted */
	pbd_box3* rbox;
	uint32_t* rorder;
	uint64_t* rpairs;
	uint32_t nrorder, cap_rbox, cap_rorder, cap_rpairs;
	/* rigid_contact.c: the last substep's pairs and contacts, which the next substep of the step
	 * keeps for a pair that stood still relative to itself; rpair_next is the scratch of the next */
	struct pbd_rigid_pair *rpair, *rpair_next;
	struct pbd_rigid_c* rkeep;
	uint32_t nrpair, cap_rpair, cap_rpair_next, cap_rkeep;
	bool rkeep_valid;
	/* rigid_contact.c, the soft step: the substep of the step the contacts are at (from 1), whether
	 * the first substep's search succeeded, and each body's centre and orientation then, from which
	 * the later substeps move the contacts it made */
	uint32_t rsub;
	int nsub; /* the current (or last) step's substeps: pbd_world_def.substeps, or more (max_substeps) */
	bool rsearched;
	struct pbd_soft_ref {
		pbd_vec3 x, x_lo;
		pbd_quat q;
	} * rref;
	uint32_t cap_rref;
	/* rigid_soft.c: the step's contacts by colour (indices into rcon, then scratch), where each
	 * colour starts (64 colours), and per body the colours its contacts took */
	uint32_t* rsoft;
	uint64_t* rsoft_used;
	uint32_t rsoft_first[65];
	uint32_t cap_rsoft, cap_rsoft_used;
	/* rigid_avbd.c: per body slot where its contacts start in ravbd_list (nb + 1), then the bodies
	 * by colour and scratch (2 nb); where each colour starts; per body the contacts' share of its
	 * correction, centre then turn, and the scale of its rows' penalties */
	uint32_t *ravbd_first, *ravbd_list;
	pbd_vec3* ravbd_d;
	pbd_real* ravbd_load; /* per body: its heaviest contact partner's mass over its own, >= 1 */
	uint32_t ravbd_colour_first[65];
	uint32_t cap_ravbd_first, cap_ravbd_list, cap_ravbd_d, cap_ravbd_load;
	/* rigid_contact.c's schedule of the settling and velocity passes: the groups (each by the
	 * index of its first contact in the passes' list) level by level, the groups of a level
	 * independent of each other; and per level where its groups start */
	uint32_t* rsched;
	uint32_t cap_rsched, nrgroup, nrlevel_settle, nrlevel_velocity;
	bool rigid_brute_force; /* tests only: every pair of colliders, to check the sweep */
	bool rigid_capped;      /* this substep's rigid contacts reached their bound (rigid_contact.c) */
	uint32_t rigid_iter;    /* the iteration of the substep the rigid contacts are projected in (rigid_contact.c) */
	/* the bodies' pairs of colliders (contact_events.c): those that touched in the last step, those
	 * touching in this one, a substep's contacts by pair (scratch), all sorted by pair; the events */
	struct pbd_touch *touch, *touch_next, *touch_sub;
	uint32_t ntouch, ntouch_next, cap_touch, cap_touch_next, cap_touch_sub;
	struct pbd_touch_body* touch_body; /* per body: its velocity before the substep's velocity pass */
	uint32_t ntouch_body, cap_touch_body;
	uint32_t ncev, cap_cev;
	pbd_contact_event* cev;
	pbd_status step_status; /* the first failure inside the current step's substeps */
	pbd_exec exec;          /* the threads a step's stages run on (task.c) */
	pbd_sweep_plan* plan;   /* the Gauss-Seidel sweep as a chain, for threads (sweep_plan.c) */
	uint32_t cap_block;     /* per block of particles (PBD_BLOCK_PARTICLES_MIN at least): what a stage counted */
	uint32_t *block_count, *block_index, *block_first;

	pbd_bodies bodies;      /* rigid bodies (bodies.c) */
	uint32_t njev, cap_jev; /* joints that broke in the last step (constraints/joint.c) */
	pbd_joint_event* jev;
	struct pbd_joint_direct* jdirect; /* the direct solve of small assemblies' joints (methods/joint_direct.c) */

	/* soft objects: the ranges each one got (soft.c) */
	uint32_t ns, cap_s;
	pbd_soft_rec* softs;

	/* clock and health */
	double time;
	uint64_t steps;
	pbd_warning_stat warnings[PBD_WARN_COUNT];
	pbd_stats stats;
	bool stats_valid;
	pbd_stats_part* stats_part; /* per block of the statistics pass (stats.c) */
	uint32_t cap_stats_part;
	pbd_profile_acc prof; /* the current step's time per phase (profile.h) */
	pbd_profile profile;  /* the last step's, published; zero when def.profile is off */
};

/* A phase's start and end: the clock is read only when the world profiles. */
static inline uint64_t pbd_prof_begin(const pbd_world* w) { return w->def.profile ? pbd_clock_ns() : 0; }
static inline void pbd_prof_end(pbd_world* w, pbd_phase phase, uint64_t t0) {
	if (w->def.profile) w->prof.phase[phase] += pbd_clock_ns() - t0;
}
/* Per thread (`worker`, task.h): the family kernels run on every thread of a stage. */
static inline void pbd_prof_end_family(pbd_world* w, uint32_t worker, int family, uint64_t t0) {
	if (w->def.profile) w->prof.family[worker][family] += pbd_clock_ns() - t0;
}

/* True when the constraints' energy is the compliance's, C^2 / (2 alpha): under XPBD and under
 * every force-based method, whose springs have k = 1 / alpha. */
static inline bool pbd_energy_from_compliance(const pbd_world* w) {
	return w->def.formulation == PBD_FORMULATION_XPBD || w->def.method != PBD_METHOD_POSITION_BASED;
}

/* particles.c */
pbd_status pbd_particles_reserve(pbd_world* w, uint32_t capacity);
/* Elements allocated in each particle array for a capacity: one spare past it (particles.c). */
static inline size_t pbd_particles_allocated(uint32_t capacity) { return capacity ? (size_t)capacity + 1 : 0; }
void pbd_particles_begin_step(pbd_world* w);
/* The node arrays (nodes.c) for the particles' and the bodies' capacities. */
pbd_status pbd_nodes_reserve(pbd_world* w);
void pbd_nodes_free(pbd_world* w);
/* The nodes: particles, then bodies (node.h). */
static inline uint32_t pbd_node_count(const pbd_world* w) { return w->np + w->bodies.n; }
void pbd_particles_predict(pbd_world* w, pbd_real h, pbd_real damping, pbd_real alpha_substep);
void pbd_particles_update_velocities(pbd_world* w, pbd_real h, bool last_substep);
uint32_t pbd_particles_end_step(pbd_world* w);
pbd_status pbd_check_particle(pbd_world* w, uint32_t index, const char* fn);
/* Kinematic motion within PBD_MAX_KINEMATIC_SPEED: a point of `field` moved from `from` to `to`
 * over one step of the world's dt (a pinned particle's target, an attachment's point);
 * PBD_ERR_OUT_OF_RANGE with the message otherwise. */
pbd_status pbd_check_kinematic_move(pbd_world* w, const char* fn, const char* field, pbd_vec3 from, pbd_vec3 to);
/* collide.c: a kinematic collider's velocities within PBD_MAX_KINEMATIC_SPEED and
 * PBD_MAX_KINEMATIC_ANGULAR_SPEED. */
pbd_status pbd_check_kinematic_velocity(pbd_world* w, const char* fn, pbd_vec3 velocity, pbd_vec3 angular_velocity);
/* v += dv for a free particle, carried in (v, v_lo) as the step carries its own changes. */
void pbd_particle_add_velocity(pbd_world* w, uint32_t index, pbd_vec3 dv);
bool pbd_inv_mass_ok(pbd_real inv_mass);

/* The dynamic body (slot + 1) collider c rides on, which contacts push back; 0: none. */
static inline uint32_t pbd_collider_dynamic_body(const pbd_world* w, const pbd_collider* c) {
	return c->body && w->bodies.type[c->body - 1] == PBD_BODY_DYNAMIC ? c->body : 0;
}

/* Order of 64-bit keys (the contact stages' pairs) for qsort and bsearch. */
static inline int pbd_u64_cmp(const void* a, const void* b) {
	const uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
	return x < y ? -1 : x > y;
}

/* triangles.c */
pbd_status pbd_triangles_reserve(pbd_world* w, uint32_t capacity);

/* context.c: the step context of the world for a substep of length h. */
void pbd_step_ctx_init(const pbd_world* w, pbd_real h, pbd_step_ctx* ctx);

/* collide.c */
uint32_t pbd_collide_count_contacts(pbd_world* w);

/* stats.c: the statistics pass runs as a stage of blocks (task.h), the blocks' sums combined in
 * block order, so that they are the same on any number of threads. */
/* Sizes the per-block sums for the world's current constraints and particles; the step calls it
 * before its first stage, so that the pass allocates nothing. */
pbd_status pbd_stats_reserve(pbd_world* w);
void pbd_stats_free(pbd_world* w);
void pbd_stats_compute(pbd_world* w, pbd_stats* out);
double pbd_stats_max_strain(pbd_world* w);
/* The divergence test: the largest strain when one may be past `bound` (>= 0); otherwise a value
 * at most `bound` (0 where the families tell cheaply that every strain is within it). */
double pbd_stats_strain_past(pbd_world* w, double bound);

#endif
