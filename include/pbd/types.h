/* pbd: position based dynamics in C.
 * Value types, enums and definition structs of the public API. */
#ifndef PBD_TYPES_H
#define PBD_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pbd/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Marks the functions the shared library exports; everything else is hidden.
#if defined(__GNUC__)
#define PBD_API __attribute__((visibility("default")))
#else
#define PBD_API
#endif

/// Marks a name kept for one release after a rename; the message gives the new name.
#if defined(__GNUC__)
#define PBD_DEPRECATED(msg) __attribute__((deprecated(msg)))
#else
#define PBD_DEPRECATED(msg)
#endif

/// Scalar type of every position, velocity and parameter. Float unless the library was
/// configured with PBD_DOUBLE=ON (see pbd/config.h).
#ifdef PBD_DOUBLE
typedef double pbd_real;
#else
typedef float pbd_real;
#endif

/// A 3-vector. Plain value, no padding, so an array of them is a packed xyz stream.
typedef struct pbd_vec3 {
	pbd_real x, y, z;
} pbd_vec3;

/// Result of every call that can fail. The message that goes with a failure is sent to the
/// world's log callback and kept in pbd_world_last_error() (or in a pbd_error for calls
/// that do not take a world).
typedef enum pbd_status {
	PBD_OK = 0,
	PBD_ERR_INVALID_ARGUMENT, ///< a null pointer, a count of 0 where one is needed, a bad enum
	PBD_ERR_NOT_FINITE,       ///< a NaN or infinite number was passed in
	PBD_ERR_OUT_OF_RANGE,     ///< a value outside its documented range, an index past the end
	PBD_ERR_DEGENERATE,       ///< geometry that cannot define the requested thing
	PBD_ERR_OUT_OF_MEMORY,    ///< the allocator returned NULL
	PBD_ERR_IO,               ///< a file could not be opened or read
	PBD_ERR_PARSE,            ///< a file was read but its contents are malformed
	PBD_ERR_UNINITIALIZED_DEF ///< a def struct that was not made by its *_default() function
} pbd_status;

/// Human-readable name of a status ("ok", "invalid argument", ...). Never NULL.
PBD_API const char* pbd_status_string(pbd_status status);

/// Error message holder for the calls that do not take a world (mesh builders, loaders).
typedef struct pbd_error {
	char message[256];
} pbd_error;

/// How the constraint iterations visit constraints.
typedef enum pbd_solver {
	/// Sequential Gauss-Seidel: each projection sees the positions moved by the ones before.
	PBD_SOLVER_GAUSS_SEIDEL = 0,
	/// Jacobi: every constraint reads the positions of the iteration start; a particle moves by
	/// omega * (sum of its corrections) / (number of its constraints + alpha).
	PBD_SOLVER_JACOBI = 1
} pbd_solver;

/// How a constraint's softness is given.
typedef enum pbd_formulation {
	/// Müller et al. 2007: stiffness k in [0,1], corrected per iteration count to
	/// k' = 1 - (1 - k)^(1/n). Effective stiffness still depends on dt and substeps.
	PBD_FORMULATION_PBD = 0,
	/// Macklin et al. 2016: compliance alpha (inverse stiffness, m/N for a distance), with a
	/// Lagrange multiplier per constraint accumulated over the iterations of a substep.
	PBD_FORMULATION_XPBD = 1
} pbd_formulation;

/// How contacts between rigid bodies (and between a body and a collider) are solved
/// (docs/collision.md, "Solvers for body contacts"). Particles' contacts are not affected.
typedef enum pbd_body_solver {
	/// Müller et al. 2020: positional non-penetration and static friction in the iterations, then
	/// a settling pass body by body from the bottom up (shock propagation) and the velocity pass.
	PBD_BODY_SOLVER_POSITION = 0,
	/// The soft step of Box2D v3 (Catto 2024, "Solver2D"): each substep one relaxed impulse pass
	/// with a soft position bias, the positions, then one pass without the bias; impulses carried
	/// from substep to substep and from step to step (warm starting), contacts kept while the
	/// pair stands still.
	PBD_BODY_SOLVER_SOFT_STEP = 1,
	/// Augmented vertex block descent (Giles et al. 2025): each body takes the Newton step of its
	/// inertia and its contacts' penalty energy in its six coordinates, the others held, colour by
	/// colour; the contacts' multipliers and penalties grow after each sweep (augmented
	/// Lagrangian) and are carried from substep to substep and step to step.
	PBD_BODY_SOLVER_AVBD = 2
} pbd_body_solver;

/// Which projection kernels run the distance constraints of a colour group.
typedef enum pbd_simd {
	/// The widest lanes the build and the CPU have (AVX-512, then AVX2), the scalar kernels otherwise.
	PBD_SIMD_AUTO = 0,
	/// The scalar kernels only.
	PBD_SIMD_SCALAR = 1,
	/// AVX2 lanes; pbd_world_create fails on a build or CPU without them. Results are bit-identical
	/// to PBD_SIMD_SCALAR (docs/solvers.md, "SIMD lanes").
	PBD_SIMD_AVX2 = 2,
	/// The AVX2 lanes, with the distance kernels' particle moves as AVX-512 masked loads and stores
	/// (AVX-512F and VL); refused where the build or the CPU lacks them. The same bits again.
	PBD_SIMD_AVX512 = 3
} pbd_simd;

/// When collisions with colliders are resolved.
typedef enum pbd_collision_mode {
	/// As inequality constraints, projected in every iteration after the other constraints.
	PBD_COLLISION_IN_SOLVER = 0,
	/// Once per substep after all iterations: move the particle out to the surface. Velocity
	/// follows from the position change, which is the correction of Games103 lab 2 (seed 001).
	PBD_COLLISION_AFTER_SOLVER = 1
} pbd_collision_mode;

/// How damping acts on a particle's velocity in each substep (d = damping^(1/substeps)).
typedef enum pbd_damping_mode {
	/// v <- d v + h F / m: the velocity a particle brings in is damped, the forces of the substep
	/// are not, so a body at rest feels its full weight and every equilibrium is the undamped one.
	PBD_DAMPING_VELOCITY = 0,
	/// v <- d (v + h F / m): the order of Games103 lab 2 (seed 001). It damps the applied forces
	/// too, so a hanging body settles short of its true equilibrium (a spring at d times its
	/// extension); kept to reproduce that scene.
	PBD_DAMPING_AFTER_FORCES = 1
} pbd_damping_mode;

/// How a world advances its particles in time. One scene, one material, any method: the
/// force-based methods read each constraint's spring constant k = 1 / compliance (XPBD's
/// compliance, which a physical material sets), the position-based one its PBD stiffness or XPBD
/// compliance. docs/methods.md gives every method's equations and compares them.
typedef enum pbd_method {
	/// Position-based: PBD stiffness or XPBD compliance (pbd_world_def.formulation), solved by
	/// Gauss-Seidel or Jacobi (pbd_world_def.solver) in `iterations` per substep.
	PBD_METHOD_POSITION_BASED = 0,
	/// Forward Euler: x += h v_n, v += h a(x_n, v_n). Gains energy; stable only for tiny steps.
	PBD_METHOD_EXPLICIT_EULER = 1,
	/// Semi-implicit (symplectic) Euler: v += h a(x_n, v_n), then x += h v_{n+1}.
	PBD_METHOD_SYMPLECTIC_EULER = 2,
	/// Backward Euler linearised once per substep (Baraff & Witkin 1998): (M + h D + h^2 K) dv =
	/// h (f + h K v), solved by conjugate gradients with a block-Jacobi preconditioner.
	PBD_METHOD_IMPLICIT_EULER = 3,
	/// Projective dynamics (Liu et al. 2013, Bouaziz et al. 2014): `iterations` local/global
	/// rounds per substep against a system matrix factored once (sparse Cholesky).
	PBD_METHOD_PROJECTIVE_DYNAMICS = 4,
	/// Vertex block descent (Chen et al. 2024): `iterations` Gauss-Seidel sweeps over a vertex
	/// colouring, each vertex taking a 3x3 Newton step on the backward-Euler energy.
	PBD_METHOD_VBD = 5,
	PBD_METHOD_COUNT
} pbd_method;

/// Name of a method ("pbd", "explicit_euler", "symplectic_euler", "implicit_euler",
/// "projective_dynamics", "vbd"); "unknown" for a value outside the enum.
PBD_API const char* pbd_method_name(pbd_method method);
/// The method of a name as pbd_method_name writes it; false for an unknown name.
PBD_API bool pbd_method_from_name(const char* name, pbd_method* out);
/// Name of a solver ("gauss_seidel", "jacobi"); "unknown" for a value outside the enum.
PBD_API const char* pbd_solver_name(pbd_solver solver);
/// The solver of a name as pbd_solver_name writes it; false for an unknown name.
PBD_API bool pbd_solver_from_name(const char* name, pbd_solver* out);
/// Name of a formulation ("pbd", "xpbd"); "unknown" for a value outside the enum.
PBD_API const char* pbd_formulation_name(pbd_formulation formulation);
/// "position", "soft_step" or "avbd"; "unknown" otherwise.
PBD_API const char* pbd_body_solver_name(pbd_body_solver solver);
/// The body solver of a name as pbd_body_solver_name writes it; false for an unknown name.
PBD_API bool pbd_body_solver_from_name(const char* name, pbd_body_solver* out);
/// The formulation of a name as pbd_formulation_name writes it; false for an unknown name.
PBD_API bool pbd_formulation_from_name(const char* name, pbd_formulation* out);

/// Range of a free particle's inverse mass, 1/kg (0 pins). Bounded so that the products the
/// projections form, (w_a + w_b) |d| and its quotients, stay normal and finite in float.
#define PBD_INV_MASS_MIN 1e-9
#define PBD_INV_MASS_MAX 1e15

/// Largest principal moment of a dynamic body's inertia, kg m^2: stored in float, its products
/// with the angular velocities the kinematic limits allow stay finite.
#define PBD_BODY_MAX_INERTIA 1e30

/// Most coarse levels a world's hierarchical solve builds (pbd_world_def.hierarchy_levels).
#define PBD_HIERARCHY_MAX_LEVELS 16

/// Caps on the world's gravity components (m/s^2) and step length (s): within them, one step's
/// products stay finite in float.
#define PBD_MAX_GRAVITY 1e6
#define PBD_MAX_DT      1e3
/// Largest pbd_world_def.hard_stiffness.
#define PBD_MAX_HARD_STIFFNESS 1e8
/// Deprecated: the former name of PBD_MAX_HARD_STIFFNESS.
#define PBD_MAX_RIGID_STIFFNESS PBD_MAX_HARD_STIFFNESS
/// Caps on kinematic motion: each component of a kinematic collider's velocity (m/s) and angular
/// velocity (rad/s), as given or as pbd_collider_move_to derives them, and each component of the
/// speed at which a pinned particle's target or an attachment's point moves over one step
/// ((target - current) / dt). Beyond them the motion of one step is no simulation result, and the
/// products of the contact stage leave the scalar's range; a value past them is refused with
/// PBD_ERR_OUT_OF_RANGE.
#define PBD_MAX_KINEMATIC_SPEED         1e5
#define PBD_MAX_KINEMATIC_ANGULAR_SPEED 1e5

/// Allocation hooks. All NULL means the C library's malloc/free. Blocks need the alignment of
/// max_align_t only (the world places what needs more, its cache-line-aligned members, within a
/// larger block itself). free and realloc receive the size the block was allocated, or last
/// reallocated, with, also after an allocation failed; realloc may be NULL (alloc, copy, free).
typedef struct pbd_allocator {
	void* (*alloc)(size_t size, void* user);
	void* (*realloc)(void* ptr, size_t old_size, size_t new_size, void* user);
	void (*free)(void* ptr, size_t size, void* user);
	void* user;
} pbd_allocator;

/// Log callback: receives one line without a trailing newline. NULL means silence.
typedef void (*pbd_log_fn)(const char* message, void* user);

/// A piece of work the library hands to a task system: call task(task_ctx) exactly once.
typedef void pbd_task_fn(void* task_ctx);
/// Starts task(task_ctx) on another thread and returns a handle that finish_task receives, or
/// runs it on the calling thread and returns NULL. It must not wait for the task: the library's
/// tasks wait for work the calling thread hands out after enqueueing them (Box2D v3's model).
typedef void* pbd_enqueue_task_fn(pbd_task_fn* task, void* task_ctx, void* user_ctx);
/// Blocks until the task behind `user_task` (what enqueue_task returned) has returned.
typedef void pbd_finish_task_fn(void* user_task, void* user_ctx);

/// Most threads a world runs on (pbd_world_def.threads).
#define PBD_MAX_THREADS 64

/// Everything a world is created with. Make it with pbd_world_def_default() and change fields.
typedef struct pbd_world_def {
	pbd_vec3 gravity;              ///< m/s^2, default (0, -9.81, 0)
	pbd_real dt;                   ///< default step length in seconds used by pbd_world_step (> 0)
	int substeps;                  ///< substeps per step, >= 1 (Macklin et al. 2019 "small steps")
	int iterations;                ///< constraint iterations per substep, >= 1
	pbd_solver solver;             ///< Gauss-Seidel or Jacobi
	pbd_formulation formulation;   ///< PBD stiffness or XPBD compliance
	pbd_real damping;              ///< velocity kept per step, in (0,1]; 1 = no damping
	pbd_damping_mode damping_mode; ///< what the damping multiplies (default: the velocity only)
	pbd_real jacobi_alpha;         ///< Jacobi: weight of the current position in the average, >= 0
	pbd_real jacobi_omega;         ///< Jacobi: over-relaxation factor, in (0,2)
	bool jacobi_equal_split;       ///< Jacobi: split each correction 1/2-1/2 whatever the masses (seed 001)
	/// Jacobi: Chebyshev semi-iterative acceleration (Wang 2015). Off by default.
	bool chebyshev;
	/// Chebyshev: spectral radius of the plain Jacobi iteration, in (0, 1); 0 estimates it from the
	/// ratio of successive corrections during the delay iterations of every substep.
	pbd_real chebyshev_rho;
	/// Chebyshev: plain Jacobi iterations of each substep before the acceleration starts, >= 1.
	int chebyshev_delay;
	/// Chebyshev: under-relaxation gamma of each accelerated update, in (0, 1].
	pbd_real chebyshev_gamma;
	/// Substeps that follow the motion: above `substeps`, a step runs more substeps, up to this
	/// many, when its fastest particle with a radius would otherwise move farther than the least
	/// thickness (twice the least radius) in one substep (docs/collision.md, "Substeps that follow
	/// the motion"); pbd_world_step_substeps tells how many the last step ran. 0 (default) or at
	/// most `substeps`: every step runs `substeps`. In [0, 100000].
	int max_substeps;
	/// Hierarchical solve (Müller 2008, "Hierarchical Position Based Dynamics"): coarse levels
	/// built from the distance-constraint graph, each iterated before the finer one and its
	/// corrections interpolated down, once per substep before the `iterations` of the real
	/// constraints. 0 (default) turns it off; at most PBD_HIERARCHY_MAX_LEVELS.
	int hierarchy_levels;
	/// Hierarchical solve: the most Gauss-Seidel sweeps on a coarse level per substep, >= 1
	/// (default 8). Level l (1 = finest coarse level) gets min(2^(l-1), hierarchy_iterations):
	/// the coarse levels, which carry corrections across the whole cloth, get the sweeps.
	int hierarchy_iterations;
	pbd_collision_mode collision_mode;
	pbd_real max_speed; ///< clamp on particle speed in m/s, 0 = no clamp
	bool diagnostics;   ///< compute pbd_stats after every step (one extra pass)
	/// Time every phase of each step into pbd_stats.profile (default false). Off, no clock is read
	/// and the profile is all zero; on or off, the simulation is bit-identical. Not saved in
	/// snapshots (a loaded world starts with it off).
	bool profile;
	/// A step after which some distance constraint is stretched or compressed by more than this
	/// many times its rest length (|C| / rest) counts as diverged (PBD_WARN_DIVERGED), as does a
	/// step that produced a non-finite state. Default 10; 0 turns the strain test off.
	pbd_real divergence_strain;
	/// How particles advance (default PBD_METHOD_POSITION_BASED). The force-based methods use
	/// `iterations` too: CG iterations at most (implicit Euler), local/global rounds (projective
	/// dynamics), sweeps (VBD); the explicit ones none.
	pbd_method method;
	/// Force-based methods: damping along each spring, as a time in seconds: a spring of constant
	/// k gets the damping coefficient c = stiffness_damping * k (N s/m), the stiffness-proportional
	/// part of Rayleigh damping, so that it means the same on any mesh. >= 0, default 0.
	pbd_real stiffness_damping;
	/// Implicit Euler: the CG solve stops when the residual is at most this fraction of the
	/// right-hand side, in (0, 1) (default 1e-4); pbd_stats.linear_residual reports what it reached.
	pbd_real linear_tolerance;
	/// Force-based methods but VBD: how stiff a hard constraint (compliance 0) is made. Such a row
	/// becomes a spring k = hard_stiffness * m_eff / h^2 (h the substep, m_eff the row's effective
	/// mass, 1 / (w_a + w_b) for a distance), so that a steady load sags it by (F / m_eff) h^2 /
	/// hard_stiffness; explicit and symplectic Euler cap it at their stability bound. In
	/// (0, 1e8], default 1000 (docs/methods.md, "Hard constraints under force-based methods").
	pbd_real hard_stiffness;
	/// Air: the wind's velocity everywhere, m/s (default 0). Objects with drag feel it
	/// (pbd_soft_def.drag_normal and friends); every method applies air forces.
	pbd_vec3 wind;
	/// Gusts: the wind's speed varies by up to this fraction of |wind| around its mean and turns
	/// by up to as many radians about the y axis (a wind along y: about x), smoothly and
	/// deterministically (a sum of incommensurate sines). >= 0, default 0 (steady).
	pbd_real gust_strength;
	pbd_real gust_frequency; ///< Hz, > 0: the dominant frequency of the gusts (default 0.5)
	/// Rigid bodies fall asleep (docs/collision.md, "Sleeping"): an island of dynamic bodies (those
	/// joined by contacts and joints) whose every body has moved slower than sleep_speed for
	/// sleep_time seconds stops and costs nothing until a contact with a moving body, a joint's
	/// change or a call on one of its bodies wakes it. Seconds, >= 0 (default 0.5); 0 keeps every
	/// body awake.
	pbd_real sleep_time;
	/// m/s, >= 0 (default 0.05): a body counts as still while its centre's speed plus its spin times
	/// its radius of gyration stays below this.
	pbd_real sleep_speed;
	/// How body contacts are solved (default PBD_BODY_SOLVER_POSITION).
	pbd_body_solver body_solver;
	/// The soft step: how fast a body contact springs back, Hz, >= 0. 0 (default) takes an eighth of
	/// the substep rate (30 Hz at 4 substeps of 1/60 s): stiffer contacts sag less under a load
	/// (about g / (2 pi f)^2 per unit of load over mass), but from about a quarter of the rate a
	/// tall stack sways (docs/collision.md, "Solvers for body contacts"). The position solver
	/// ignores it.
	pbd_real contact_hertz;
	pbd_simd simd;              ///< vector kernels (default PBD_SIMD_AUTO); never changes results
	uint32_t particle_capacity; ///< initial capacities; the arrays grow when adding beyond them
	uint32_t distance_capacity;
	pbd_allocator allocator;
	pbd_log_fn log; ///< where error and warning lines go
	void* log_user;
	/// Threads a step runs on, the caller's included, in [1, PBD_MAX_THREADS] (default 1). The
	/// state after every step is the same, bit for bit, for any count (docs/solvers.md, "Threads").
	int threads;
	/// The game's own task system; both NULL (default) uses a built-in pool of threads - 1
	/// POSIX threads when threads > 1. Give both or neither. A step enqueues threads - 1 tasks
	/// at most and finishes them all before it returns.
	pbd_enqueue_task_fn* enqueue_task;
	pbd_finish_task_fn* finish_task;
	void* task_user; ///< user_ctx of enqueue_task and finish_task
	int cookie;      ///< set by pbd_world_def_default(); do not touch
} pbd_world_def;

/// Edge kinds a mesh can hold; a body def sets the material of each kind.
typedef enum pbd_edge_kind {
	PBD_EDGE_STRUCTURAL = 0, ///< along the cloth's threads / a rope's links
	PBD_EDGE_SHEAR = 1,      ///< across a grid cell's diagonal
	PBD_EDGE_BEND = 2,       ///< across two cells (flexion), or across an edge between two triangles
	PBD_EDGE_KIND_COUNT
} pbd_edge_kind;

/// Constraint families: each kind of constraint a world holds, with its own storage, solver
/// kernels and diagnostics (pbd_stats.family).
typedef enum pbd_family_type {
	PBD_FAMILY_DISTANCE = 0,   ///< C = |x_a - x_b| - rest
	PBD_FAMILY_TET_VOLUME,     ///< C = V - V0 of a tetrahedron
	PBD_FAMILY_TET_NEOHOOKEAN, ///< stable Neo-Hookean tetrahedron: a deviatoric and a hydrostatic constraint
	PBD_FAMILY_ATTACHMENT,     ///< C = |x - p| - rest: a particle held to a world point p
	PBD_FAMILY_LRA,            ///< C = |x - x_pin| - L <= 0: long-range attachments to the nearest pin
	PBD_FAMILY_CLUSTER,        ///< shape matching: a cluster pulled toward its rest shape, rotated
	PBD_FAMILY_BEND_DIHEDRAL,  ///< C = theta - rest, theta the dihedral angle of a hinge
	PBD_FAMILY_BEND_ISOMETRIC, ///< C = |sum_i K_i x_i| - r0 on a hinge (Bergou et al. 2006)
	PBD_FAMILY_TRIANGLE, ///< membrane strain of a triangle: stretch along two material axes and shear between them
	PBD_FAMILY_VOLUME,   ///< C = V - pressure V0, the volume enclosed by a closed triangle mesh
	PBD_FAMILY_JOINT,    ///< a joint between two rigid bodies (or a body and the world): pbd_joint_def
	PBD_FAMILY_COUNT,
	/// Deprecated: the former name of PBD_FAMILY_CLUSTER.
	PBD_FAMILY_SHAPE PBD_DEPRECATED("use PBD_FAMILY_CLUSTER") = PBD_FAMILY_CLUSTER
} pbd_family_type;

/// One distance constraint C = |x_a - x_b| - rest.
typedef struct pbd_distance_def {
	uint32_t a, b;                ///< world particle indices, distinct
	pbd_real rest;                ///< rest length >= 0; negative means "the current distance"
	pbd_real stiffness_stretch;   ///< PBD stiffness in [0,1] when C > 0
	pbd_real stiffness_compress;  ///< PBD stiffness in [0,1] when C < 0 (0 = a string/rope link)
	pbd_real compliance_stretch;  ///< XPBD compliance >= 0 (m/N) when C > 0
	pbd_real compliance_compress; ///< XPBD compliance >= 0 (m/N) when C < 0
	uint32_t kind;                ///< pbd_edge_kind, for the strain per kind in pbd_stats (default structural)
	/// Under PBD, ignore the stiffness values and use the fraction one XPBD projection with the
	/// compliance removes, s = W / (W + alpha / h^2) with W = w_a + w_b (then corrected for the
	/// iteration count): the constraint is then the same spring 1/alpha under both formulations,
	/// and its energy C^2 / (2 alpha) is defined under both (docs/methods.md, "Physical materials").
	bool stiffness_from_compliance;
} pbd_distance_def;

/// A distance constraint that pulls and pushes with full stiffness and zero compliance.
PBD_API pbd_distance_def pbd_distance_def_default(void);

/// One tetrahedral volume constraint C = V - V0 with V = (x1 - x0) x (x2 - x0) . (x3 - x0) / 6
/// (docs/constraints.md, "Tetrahedral volume").
typedef struct pbd_tet_volume_def {
	uint32_t p[4];        ///< world particle indices x0..x3, distinct, positively oriented (V > 0)
	pbd_real rest_volume; ///< V0 in m^3, > 0; negative means "the current volume", which must be > 0
	pbd_real stiffness;   ///< PBD stiffness in [0,1]
	pbd_real compliance;  ///< XPBD compliance >= 0 in m^5/N (J = C^2 / (2 alpha)); a bulk modulus K is V0 / K
} pbd_tet_volume_def;

/// A hard volume constraint (stiffness 1, compliance 0) that measures its rest volume.
PBD_API pbd_tet_volume_def pbd_tet_volume_def_default(void);

/// One stable Neo-Hookean tetrahedron (Macklin and Müller 2021): a deviatoric and a hydrostatic
/// constraint on the deformation gradient F = Ds Dm^-1 (docs/constraints.md, "Tetrahedral stable
/// Neo-Hookean"). The rest shape is the particles' positions when the constraint is added.
typedef struct pbd_tet_neohookean_def {
	uint32_t p[4];                  ///< world particle indices x0..x3, distinct, positively oriented at rest
	pbd_real youngs_modulus;        ///< XPBD: Young's modulus E in Pa, > 0
	pbd_real poisson_ratio;         ///< XPBD: Poisson's ratio nu in (-1, 0.5)
	pbd_real stiffness_deviatoric;  ///< PBD: stiffness in [0,1] of the shape term |F| = sqrt(3)
	pbd_real stiffness_hydrostatic; ///< PBD: stiffness in [0,1] of the volume term det F = 1
} pbd_tet_neohookean_def;

/// Rubber-like defaults: E = 1 MPa, nu = 0.45, PBD stiffnesses 1.
PBD_API pbd_tet_neohookean_def pbd_tet_neohookean_def_default(void);
/// A rigid body of a world: index1 is its slot + 1 (0 is the null id), generation tells a live
/// body from one that was destroyed in the same slot.
typedef struct pbd_body_id {
	uint32_t index1;
	uint32_t generation;
} pbd_body_id;

/// One attachment C = |x - p| - rest: particle `particle` held to the point `target`
/// (a spring to a fixed point with compliance, a hard rod of length rest, or, with rest 0 and no
/// compliance, a particle glued to a point that pbd_world_set_attachment_target can move). The
/// point is the world's, or with `body` set a point of that rigid body, which carries it along:
/// a dynamic body is pulled by the particle as much as it pulls (a cloth pinned to a swinging
/// box), a kinematic one leads it (a flag on a moving pole).
typedef struct pbd_attachment_def {
	uint32_t particle;   ///< world particle index
	pbd_vec3 target;     ///< the point p, m: world coordinates, or the body's frame when body is set
	pbd_body_id body;    ///< the rigid body the point belongs to; the null id (default): the world
	pbd_real rest;       ///< distance kept from p, m, >= 0 (default 0)
	pbd_real stiffness;  ///< PBD stiffness in [0,1] (default 1)
	pbd_real compliance; ///< XPBD compliance >= 0, m/N (default 0)
} pbd_attachment_def;

/// An attachment at rest distance 0, full stiffness, zero compliance, target at the origin.
PBD_API pbd_attachment_def pbd_attachment_def_default(void);

/// How long-range attachments measure the rest distance from a particle to a pin.
typedef enum pbd_lra_mode {
	PBD_LRA_EUCLIDEAN = 0, ///< straight line between the rest positions
	PBD_LRA_GEODESIC = 1   ///< shortest path along the distance constraints among the set's particles
} pbd_lra_mode;

/// A set of long-range attachments (Kim, Chentanez and Müller 2012) over a range of particles:
/// one unilateral constraint |x - x_pin| <= scale * L per particle of the range, to the nearest
/// pinned particle of the range at rest distance L. Which particles are pinned is read when the
/// set is added and again at the next step after any pbd_particle_pin / unpin / set_inv_mass.
typedef struct pbd_lra_def {
	uint32_t first_particle; ///< the range, e.g. a body's particles
	uint32_t particle_count; ///< >= 1
	pbd_lra_mode mode;       ///< how L is measured (default geodesic)
	pbd_real scale;          ///< > 0: how far past L a particle may go, as a factor (default 1)
	pbd_real stiffness;      ///< PBD stiffness in [0,1] (default 1)
	pbd_real compliance;     ///< XPBD compliance >= 0, m/N (default 0)
} pbd_lra_def;

/// Geodesic, scale 1, full stiffness, zero compliance, an empty range.
PBD_API pbd_lra_def pbd_lra_def_default(void);

/// One long-range attachment as it stands after the last rebuild.
typedef struct pbd_lra_info {
	uint32_t particle;   ///< the constrained particle
	uint32_t pin;        ///< the pinned particle it is held to; UINT32_MAX when inactive (pinned, or no pin reached)
	pbd_real rest;       ///< scale * L, m
	pbd_real stiffness;  ///< PBD, [0,1]
	pbd_real compliance; ///< XPBD, m/N
} pbd_lra_info;

/// A shape-matching cluster (Müller et al. 2005): its members are pulled toward their rest shape,
/// translated to their centre of mass and turned by the rotation that fits it best.
typedef struct pbd_cluster_def {
	const uint32_t* particles; ///< member particle indices, distinct (count of them)
	uint32_t count;            ///< members, >= 1
	const pbd_vec3* rest;      ///< rest positions of the members (count), m, or NULL for their current positions
	pbd_real stiffness;        ///< PBD stiffness in [0,1]: the fraction of the way to the goal per step (default 1)
	pbd_real compliance;       ///< XPBD compliance >= 0, m/N, of the RMS distance to the goal (default 0)
} pbd_cluster_def;

/// No members, rest from the current positions, full stiffness, zero compliance.
PBD_API pbd_cluster_def pbd_cluster_def_default(void);
/// One dihedral bending constraint on a hinge: the triangles (p[0], p[1], p[2]) and
/// (p[1], p[0], p[3]) share the edge p[0]-p[1]. C = theta - rest, with theta in (-pi, pi] the
/// signed angle between the two triangles' normals (0 flat, +-pi folded shut), positive when the
/// wings p[2] and p[3] rise along their triangles' normals. Energy (XPBD) C^2 / (2 compliance).
typedef struct pbd_bend_dihedral_def {
	uint32_t p[4];       ///< world particle indices, distinct: p[0]-p[1] the shared edge, p[2] and p[3] the wings
	bool measure_rest;   ///< true (the default): the rest angle is the hinge's angle when added; false: `rest`
	pbd_real rest;       ///< rest angle in rad, in [-pi, pi] (pi and -pi are the same fold), when not measured
	pbd_real stiffness;  ///< PBD stiffness in [0,1]
	pbd_real compliance; ///< XPBD compliance >= 0 in 1/(N m) (rad^2/J): 1 / bending stiffness in N m/rad^2
} pbd_bend_dihedral_def;

/// A dihedral bend that keeps the angle it is added at, fully stiff, zero compliance.
PBD_API pbd_bend_dihedral_def pbd_bend_dihedral_def_default(void);

/// One isometric bending constraint (Bergou et al. 2006) on a hinge laid out as for
/// pbd_bend_dihedral_def. C = |sum_i K_i x_i| - r0 with constant weights K_i (1/m) taken from the
/// cotangents of the hinge when added, so that C^2 / 2 is Bergou's quadratic energy
/// (1/2) sum_ij Q_ij x_i . x_j, about 3 |e|^2 theta^2 / (2 A) for a small bend theta (|e| the
/// edge's length, A the two triangles' area). The model is exact for a flat rest state and
/// inextensible motion; a curved rest state keeps the bend's size, not its direction
/// (docs/constraints.md). Energy C^2 / (2 compliance).
typedef struct pbd_bend_isometric_def {
	uint32_t p[4];       ///< world particle indices, distinct: p[0]-p[1] the shared edge, p[2] and p[3] the wings
	bool measure_rest;   ///< true (the default): the rest bend is the hinge's bend when added; false: `rest`
	pbd_real rest;       ///< rest bend angle in rad, in [-pi, pi], when not measured; only |rest| counts (0 = flat)
	pbd_real stiffness;  ///< PBD stiffness in [0,1]
	pbd_real compliance; ///< XPBD compliance >= 0 in 1/(N m) (1/J): C is dimensionless
} pbd_bend_isometric_def;

/// An isometric bend that keeps the bend it is added at, fully stiff, zero compliance.
PBD_API pbd_bend_isometric_def pbd_bend_isometric_def_default(void);
/// Membrane strain of one triangle (strain based dynamics, Müller et al. 2014): three constraints on the deformation
/// gradient F = Ds Dm^-1 (3x2) taken in a material frame (u, v) of the rest triangle, with f_u, f_v the columns of F:
/// stretch along u, |f_u| - 1; stretch along v, |f_v| - 1; shear, asin(f_u.f_v / (|f_u| |f_v|)), the shear angle
/// (pi/2 less the angle between the deformed axes). The rest shape is the triangle's current shape. The energy of a
/// part with compliance alpha is A C^2 / (2 alpha), A the rest area: alpha is a compliance per unit area, 1/Y in m/N
/// for a membrane modulus Y in N/m (force per unit width per unit strain), and the constraint's own compliance is alpha
/// / A (1/J).
typedef struct pbd_triangle_strain_def {
	uint32_t a, b, c;            ///< world particle indices, distinct; the rest triangle must have an area
	pbd_vec3 axis;               ///< material direction u (the warp), projected into the rest triangle's plane; v is
	                             ///< normal x u. Zero, or a direction normal to the triangle, means along b - a.
	pbd_real stretch_stiffness;  ///< PBD stiffness in [0,1] of both stretches (0 = no resistance)
	pbd_real shear_stiffness;    ///< PBD stiffness in [0,1] of the shear (0 = no resistance)
	pbd_real stretch_compliance; ///< XPBD compliance >= 0 of both stretches, per unit area (m/N = 1 / stretch modulus)
	pbd_real shear_compliance;   ///< XPBD compliance >= 0 of the shear, per unit area (m/N = 1 / shear modulus)
} pbd_triangle_strain_def;

/// Stiffness and compliance of triangle strain constraints, for pbd_world_set_triangle_strain_material.
typedef struct pbd_triangle_strain_material {
	pbd_real stretch_stiffness, shear_stiffness;   ///< PBD, [0,1]
	pbd_real stretch_compliance, shear_compliance; ///< XPBD, >= 0, m/N (per unit area)
} pbd_triangle_strain_material;

/// The volume enclosed by a closed triangle mesh (a balloon): C = V(x) - pressure V0, with
/// V = (1/6) sum over the triangles of (x_a x x_b) . x_c. The mesh must be closed and consistently wound, every edge
/// shared by exactly two triangles that run along it in opposite directions, counter-clockwise seen from outside (so
/// that V > 0). The energy is C^2 / (2 alpha): alpha is in m^6/J = m^3/Pa, the volume change per unit of pressure
/// difference (V0 / K for a bulk modulus K; V0 / p for a gas at pressure p held at constant temperature).
typedef struct pbd_volume_def {
	uint32_t triangle_count;   ///< >= 4
	const uint32_t* triangles; ///< 3 world particle indices per triangle, read during the add call only
	pbd_real rest_volume;      ///< V0 in m^3, > 0; negative means the volume the mesh encloses now
	pbd_real pressure;         ///< target volume as a multiple of V0, > 0 (1 keeps the volume, 1.5 inflates)
	pbd_real stiffness;        ///< PBD stiffness in [0,1]
	pbd_real compliance;       ///< XPBD compliance >= 0, m^3/Pa
} pbd_volume_def;

/// A rotation as a unit quaternion (x, y, z vector part, w scalar part); {0, 0, 0, 1} is none.
typedef struct pbd_quat {
	pbd_real x, y, z, w;
} pbd_quat;

/// Where a collider is: its local frame's origin and rotation in the world. A shape's geometry
/// is given in the local frame.
typedef struct pbd_pose {
	pbd_vec3 position;
	pbd_quat rotation; ///< normalised on creation, must not be zero
} pbd_pose;

/// Collider shapes. A new shape is an entry here and a member of pbd_collider_def.shape, plus
/// one file src/collide_<shape>.c that implements pbd_shape_ops and a line in collide.c's table.
typedef enum pbd_shape_type {
	PBD_SHAPE_PLANE = 0,       ///< half-space: particles are kept where dot(n, x) >= offset
	PBD_SHAPE_SPHERE = 1,      ///< solid ball
	PBD_SHAPE_CAPSULE = 2,     ///< the points within `radius` of a segment along the local y axis
	PBD_SHAPE_BOX = 3,         ///< solid box centred on the local origin, axes along the local axes
	PBD_SHAPE_CONVEX = 4,      ///< the convex hull of a set of points
	PBD_SHAPE_MESH = 5,        ///< a static triangle mesh: a thin two-sided surface, or a closed solid
	PBD_SHAPE_HEIGHTFIELD = 6, ///< a grid of heights over the local xz plane; solid below
	PBD_SHAPE_COUNT
} pbd_shape_type;

typedef struct pbd_plane {
	pbd_vec3 normal; ///< outward normal; normalised on creation, must not be zero
	pbd_real offset; ///< plane is dot(normal, x) = offset
} pbd_plane;

typedef struct pbd_sphere {
	pbd_vec3 center;
	pbd_real radius; ///< > 0
} pbd_sphere;

typedef struct pbd_capsule {
	pbd_real half_height; ///< the segment runs from (0, -half_height, 0) to (0, half_height, 0); >= 0
	pbd_real radius;      ///< > 0
} pbd_capsule;

typedef struct pbd_box {
	pbd_vec3 half_extents; ///< each > 0
} pbd_box;

/// The shapes below carry arrays. pbd_collider_create copies them into memory the world owns
/// (with what it derives from them: the hull's faces, the mesh's bounding volume hierarchy), so
/// the caller's arrays may go right after the call; pbd_collider_get_def returns pointers to the
/// world's copies, valid while the collider lives.

/// The convex hull of `point_count` points (>= 4, not all in one plane).
typedef struct pbd_convex {
	const pbd_vec3* points;
	uint32_t point_count;
} pbd_convex;

/// A triangle mesh. `closed` false: a thin surface with two sides, kept `margin` away on either
/// side. `closed` true: a watertight, consistently wound (outward) mesh whose inside is solid.
typedef struct pbd_trimesh {
	const pbd_vec3* vertices;
	const uint32_t* triangles; ///< 3 vertex indices per triangle
	uint32_t vertex_count, triangle_count;
	bool closed;
} pbd_trimesh;

/// Heights over the local xz plane: sample (ix, iz) is at (ix cell_x, heights[iz nx + ix],
/// iz cell_z), the surface is the two triangles of each cell, and everything below it is solid.
typedef struct pbd_heightfield {
	const pbd_real* heights; ///< nx * nz, finite
	uint32_t nx, nz;         ///< samples along x and z, each >= 2
	pbd_real cell_x, cell_z; ///< spacing of the samples, m, > 0
} pbd_heightfield;

/// How a collider moves by itself. A shape that rides on a body (pbd_collider_def.body) moves
/// with the body instead, and a dynamic body is pushed by what it touches.
typedef enum pbd_actor_kind {
	/// Never moves; velocities must be zero.
	PBD_ACTOR_STATIC = 0,
	/// Moves by its velocity and angular velocity every substep, whatever touches it, and drags
	/// what rests on it by friction. Set the velocities, or a pose to reach by the end of the
	/// next step (pbd_collider_move_to), before each step.
	PBD_ACTOR_KINEMATIC = 1
} pbd_actor_kind;

/// How a rigid body moves (pbd_body_def.type).
typedef enum pbd_body_type {
	/// Never moves: the world's ground, walls, furniture.
	PBD_BODY_STATIC = 0,
	/// Moves by the velocities it is given, whatever touches it (a platform, an animated hand).
	PBD_BODY_KINEMATIC = 1,
	/// Moves by its mass, inertia, gravity and the forces, torques and impulses it receives.
	PBD_BODY_DYNAMIC = 2
} pbd_body_type;

/// What a rigid body's motion needs of its matter: mass, where it is centred and how it resists
/// turning. Double precision: sums over many triangles and shifts by the parallel-axis theorem
/// lose digits in float.
typedef struct pbd_mass_properties {
	double mass;      ///< kg
	double center[3]; ///< centre of mass
	/// Inertia tensor about the centre of mass, kg m^2, axes of the frame: the symmetric matrix
	/// [xx xy xz; xy yy yz; xz yz zz] stored as {xx, yy, zz, xy, xz, yz}.
	double inertia[6];
} pbd_mass_properties;

/// A rigid body (pbd_body_create). Its frame is `pose`; its matter is `mass` in that frame (from
/// pbd_collider_mass_properties and pbd_mass_properties_combine, or given), needed by a dynamic
/// body only.
typedef struct pbd_body_def {
	pbd_body_type type;        ///< static by default
	pbd_pose pose;             ///< the body's frame in the world; identity by default
	pbd_vec3 velocity;         ///< m/s of the centre of mass (kinematic and dynamic)
	pbd_vec3 angular_velocity; ///< rad/s, world axes (kinematic and dynamic)
	/// Dynamic only: mass > 0 and an inertia about the centre that a solid can have (positive
	/// principal moments, each at most the sum of the other two), in the body's frame.
	pbd_mass_properties mass;
	pbd_real gravity_scale;   ///< multiplies the world's gravity; default 1
	pbd_real linear_damping;  ///< 1/s, >= 0: v shrinks by 1 / (1 + h c) each substep of length h
	pbd_real angular_damping; ///< 1/s, >= 0, the same for the angular velocity
	int cookie;
} pbd_body_def;

/// What a body is doing now (pbd_body_get_state).
typedef struct pbd_body_state {
	pbd_body_type type;        ///< as created
	double mass;               ///< kg; 0 for a static or kinematic body (it yields to nothing)
	pbd_pose pose;             ///< the body's frame
	pbd_vec3 center;           ///< its centre of mass in the world
	pbd_vec3 velocity;         ///< of the centre of mass, m/s
	pbd_vec3 angular_velocity; ///< rad/s, world axes
	/// Dynamic bodies: linear momentum m v (kg m/s) and angular momentum about the centre of
	/// mass I w (kg m^2/s, world axes), in double; zero for the others.
	double momentum[3], angular_momentum[3];
	double kinetic_energy; ///< J: m v^2 / 2 + w . I w / 2; zero for static and kinematic bodies
	bool asleep;           ///< a dynamic body whose island sleeps (pbd_world_def.sleep_time)
} pbd_body_state;

/// A collider: an actor with one shape. Particles are kept at least `margin` away from its
/// surface, unless it is a trigger, which pushes nothing and reports who entered and left.
typedef struct pbd_collider_def {
	pbd_shape_type type;
	union {
		pbd_plane plane;
		pbd_sphere sphere;
		pbd_capsule capsule;
		pbd_box box;
		pbd_convex convex;
		pbd_trimesh mesh;
		pbd_heightfield heightfield;
	} shape;
	pbd_real margin;           ///< collision thickness in m, >= 0
	pbd_actor_kind kind;       ///< static (default) or kinematic
	pbd_pose pose;             ///< the shape's frame; identity by default (the shape is in world coordinates)
	pbd_vec3 velocity;         ///< m/s of the frame's origin (kinematic only)
	pbd_vec3 angular_velocity; ///< rad/s about the frame's origin (kinematic only)
	/// Coulomb friction (Macklin et al. 2014): a particle whose tangential slip in a substep is
	/// below static_friction times its normal correction sticks; otherwise the slip shrinks by
	/// kinetic_friction times the normal correction. 0 (default) is frictionless; kinetic <= static.
	pbd_real static_friction;
	pbd_real kinetic_friction;
	/// Share of the normal approach speed a particle keeps, reversed, when it hits the surface,
	/// in [0, 1] (default 0: it stays on the surface). Slow contacts (under 2 |g| h) never bounce.
	pbd_real restitution;
	/// The rigid body the shape rides on (the null id: none). The pose is then in the body's frame,
	/// the shape moves with the body, `kind` stays static and the velocities zero (the body's give
	/// the surface its speed), and a dynamic body is pushed back by the particles it pushes.
	pbd_body_id body;
	bool trigger; ///< report entries and exits (pbd_world_get_trigger_events); no response
	/// Collision filter: a particle collides with this collider when its soft object's
	/// collision_mask (pbd_soft_def) has a bit of `category` set. Default 1.
	uint32_t category;
	int cookie;
} pbd_collider_def;

/// A contact after a step: a particle within `margin` (plus a small tolerance) of a collider's
/// surface, or pushed out of it during the step's last substep.
typedef struct pbd_contact {
	uint32_t particle;
	uint32_t collider_index1;   ///< the collider's id index1 (pbd_collider_id)
	pbd_vec3 point;             ///< the closest point of the surface
	pbd_vec3 normal;            ///< outward unit normal of the surface there
	pbd_real distance;          ///< from the surface to the particle, m (negative inside; >= margin when resolved)
	pbd_real normal_correction; ///< m the contact pushed the particle along the normal in the last substep
} pbd_contact;

/// A particle that entered or left a trigger collider during a step.
typedef struct pbd_trigger_event {
	uint32_t collider_index1; ///< the trigger's id index1
	uint32_t particle;
	bool entered; ///< true: it came within margin of the shape; false: it left
} pbd_trigger_event;

/// Handle to a collider: index + 1 (0 = null) and a generation that a removal bumps.
typedef struct pbd_collider_id {
	uint32_t index1;
	uint32_t generation;
} pbd_collider_id;

/// A contact of a dynamic body's shape after a step (pbd_world_get_body_contacts): a corner, an
/// edge or a rounded core of one collider's shape against the surface of another, one of the two
/// on a dynamic body.
typedef struct pbd_body_contact {
	pbd_collider_id feature;    ///< the collider whose corner, edge or core touches
	pbd_collider_id surface;    ///< the collider whose surface it touches
	pbd_vec3 point;             ///< where, midway between the two, at the last substep's prediction
	pbd_vec3 normal;            ///< the surface's outward unit normal there
	pbd_real separation;        ///< m between the two after the last substep, less both margins (about 0 at rest)
	pbd_real normal_correction; ///< m the last substep's iterations pushed the two apart along the normal
} pbd_body_contact;

/// A pair of colliders, at least one on a dynamic body, that touched during the last step
/// (pbd_world_get_contact_pairs, pbd_world_get_contact_events; docs/collision.md, "Contact events").
typedef struct pbd_contact_pair {
	pbd_collider_id collider_a; ///< the collider of the lower index1
	pbd_collider_id collider_b;
	pbd_body_id body_a; ///< the body collider_a rides on; the null id for none
	pbd_body_id body_b;
	pbd_vec3 point;  ///< of the pair's strongest contact in the step, world, m
	pbd_vec3 normal; ///< unit, from collider_a toward collider_b, at that contact
	/// N s the pair's contacts pushed the two apart along their normals over the step: the
	/// iterations' corrections as impulses, dn / ((w_a + w_b) h) summed over substeps and contacts,
	/// and the velocity pass's (restitution, the approach speed taken out) where a body had this
	/// pair alone pushing it in the substep. 0 while the pair's bodies sleep.
	pbd_real impulse;
} pbd_contact_pair;

/// A pair of colliders that began or stopped touching during the last step
/// (pbd_world_get_contact_events).
typedef struct pbd_contact_event {
	/// true: the pair touches in the last step and did not in the one before; false: it touched in
	/// the one before and does not now (pair.point and pair.normal are then where it last touched,
	/// pair.impulse 0).
	bool begin;
	pbd_contact_pair pair;
} pbd_contact_event;

/// What a joint holds (pbd_joint_def.type). A joint has a frame on each side, frame_a on body_a
/// and frame_b on body_b; the x axis of a frame is the joint's axis and its y axis the zero of
/// the joint's angle.
typedef enum pbd_joint_type {
	PBD_JOINT_FIXED = 0,     ///< the two frames coincide: the bodies move as one (a weld)
	PBD_JOINT_BALL = 1,      ///< the origins coincide; optional cone (swing) and twist limits
	PBD_JOINT_HINGE = 2,     ///< the origins coincide and the x axes align: b turns about x, with limits and a motor
	PBD_JOINT_PRISMATIC = 3, ///< the frames keep their orientation and b's origin stays on a's x axis: a slider
	PBD_JOINT_DISTANCE = 4,  ///< the origins stay between `lower` and `upper` apart: a rod, a rope (lower 0)
	PBD_JOINT_TYPE_COUNT
} pbd_joint_type;

/// A hinge's or slider's drive (pbd_joint_def.motor).
typedef enum pbd_joint_motor {
	PBD_MOTOR_OFF = 0,
	/// Drives the speed of b relative to a about (hinge, rad/s) or along (prismatic, m/s) the axis
	/// to motor_target, with at most motor_max torque (N m) or force (N).
	PBD_MOTOR_VELOCITY = 1,
	/// Drives the angle (rad) or offset (m) to motor_target as a spring of compliance
	/// motor_compliance (0: at once).
	PBD_MOTOR_POSITION = 2
} pbd_joint_motor;

/// A joint (pbd_world_add_joints): a constraint between two rigid bodies, or a body and the world,
/// solved with the particles' constraints in the same iterations (docs/joints.md).
typedef struct pbd_joint_def {
	pbd_joint_type type;
	/// The two sides; the null id is the world. At least one is a dynamic body, and they differ.
	pbd_body_id body_a, body_b;
	/// The joint's frame on each side, in that body's frame (the world's for the world).
	pbd_pose frame_a, frame_b;
	/// How the joint yields: m/N for its positional hold, rad/(N m) for its angular one; 0
	/// (default) holds rigidly, as XPBD's compliance (Macklin et al. 2016).
	pbd_real compliance;
	/// Hinge: the angle of b about the axis in [lower, upper] rad; prismatic: the offset of b's
	/// origin along a's x axis in [lower, upper] m; ball: the twist about the axis in
	/// [lower, upper] rad. Off by default. A distance joint always keeps [lower, upper].
	bool limit;
	pbd_real lower, upper;
	/// Ball: the largest angle between the two x axes, rad, in (0, pi]; pi (default) is free.
	pbd_real swing;
	pbd_joint_motor motor;     ///< hinge and prismatic only; off by default
	pbd_real motor_target;     ///< rad/s or m/s (velocity), rad or m (position)
	pbd_real motor_max;        ///< velocity motor: the largest torque (N m) or force (N), > 0
	pbd_real motor_compliance; ///< position motor: rad/(N m) or m/N, >= 0
	/// The joint breaks (and stops holding) when the force (N) or torque (N m) it exerted in a
	/// substep exceeds these; 0 (default): never. Reported by pbd_world_get_joint_events.
	pbd_real break_force, break_torque;
	int cookie;
} pbd_joint_def;

/// What a joint is doing after the last step (pbd_world_get_joint_state).
typedef struct pbd_joint_state {
	bool broken;
	/// Hinge: the angle of b about the axis from a's zero (rad, in (-pi, pi]); ball: the twist;
	/// prismatic: the offset along the axis (m); distance: the distance (m); fixed: 0.
	pbd_real position;
	/// The joint's error: m between the two origins (for a prismatic, off the axis; for a
	/// distance joint, outside [lower, upper]) and rad between the frames where they must agree.
	pbd_real error_distance, error_angle;
	/// The force (N) and torque (N m, world axes) the joint exerted on body b in the last
	/// substep, its motor's effort included (a's are the opposite).
	pbd_vec3 force, torque;
} pbd_joint_state;

/// A joint that broke during the last step (pbd_world_get_joint_events).
typedef struct pbd_joint_event {
	uint32_t joint;  ///< its index
	pbd_real force;  ///< N it exerted in the substep it broke
	pbd_real torque; ///< N m
} pbd_joint_event;

/// The topology and rest shape of a particle system, owned by the caller. Filled by the
/// builders (pbd_mesh_grid, pbd_mesh_rope, pbd_mesh_from_triangles, pbd_mesh_load_obj) and
/// released with pbd_mesh_free; a hand-made mesh may point at the caller's own arrays.
typedef struct pbd_mesh {
	uint32_t vertex_count;
	pbd_vec3* positions;  ///< initial positions (vertex_count)
	pbd_vec3* velocities; ///< initial velocities (vertex_count) or NULL for zero
	pbd_real* inv_masses; ///< per-vertex inverse masses or NULL to derive them from the body def
	uint32_t edge_count;
	uint32_t* edges;     ///< 2 per edge, vertex indices
	uint8_t* edge_kinds; ///< pbd_edge_kind per edge, or NULL for all structural
	pbd_real* edge_rest; ///< rest length per edge, or NULL for the length in `positions`
	uint32_t triangle_count;
	uint32_t* triangles; ///< 3 per triangle, counter-clockwise seen from the front
	uint32_t tet_count;
	uint32_t* tets; ///< 4 per tetrahedron (x0..x3), positively oriented: (x1-x0) x (x2-x0) . (x3-x0) > 0
	bool owned;     ///< arrays were allocated by a builder; pbd_mesh_free releases them
	/// Set by pbd_mesh_grid (0 otherwise, as in a zeroed hand-made mesh): the grid's vertex counts,
	/// cell sizes and diagonals, so that a physical material maps exactly to its springs.
	uint32_t grid_nx, grid_ny;
	pbd_real grid_du, grid_dv;
	int grid_diagonals;
} pbd_mesh;

/// The named groups of an OBJ file (pbd_mesh_load_obj_groups): the names its `o` and `g` records
/// give and the triangles of the faces under each. A face belongs to the object named by the last
/// `o` line and to every name of the last `g` line (`g` with no name: to no group); neither record
/// clears the other. Released with pbd_obj_groups_free.
typedef struct pbd_obj_groups {
	uint32_t count;      ///< distinct names
	char** names;        ///< `count` names, in the order they first appear
	uint32_t* first;     ///< count + 1 offsets: group i holds triangles[first[i] .. first[i + 1])
	uint32_t* triangles; ///< triangle indices of the mesh (pbd_mesh.triangles / 3), ascending per group
} pbd_obj_groups;

/// A rectangular cloth of nx x ny vertices. Vertex (i, j) has index j*nx + i and sits at
/// origin + (i/(nx-1)) * size_u * axis_u + (j/(ny-1)) * size_v * axis_v.
typedef struct pbd_grid_def {
	uint32_t nx, ny; ///< vertices along u and v, >= 2
	pbd_real size_u, size_v;
	pbd_vec3 origin;         ///< position of vertex (0,0)
	pbd_vec3 axis_u, axis_v; ///< unit directions, not parallel
	int diagonals;           ///< shear edges per cell: 0, 1 (the triangulation diagonal) or 2 (both)
	bool bend;               ///< flexion edges between vertices two apart along u and v
	int cookie;
} pbd_grid_def;

/// A rope of `segments` links from `start` to `end`.
typedef struct pbd_rope_def {
	uint32_t segments;   ///< >= 1; the rope has segments + 1 particles
	pbd_vec3 start, end; ///< must differ
	bool bend;           ///< add links between particles two apart (resist folding)
	int cookie;
} pbd_rope_def;

/// A box of nx x ny x nz cells split into tetrahedra, with its boundary as triangles and the
/// tetrahedra's edges. Vertex (i, j, k) has index (k (ny+1) + j) (nx+1) + i and sits at
/// origin + (i size.x / nx, j size.y / ny, k size.z / nz).
typedef struct pbd_tet_box_def {
	uint32_t nx, ny, nz; ///< cells along x, y and z, >= 1
	pbd_vec3 size;       ///< extents in m, each > 0
	pbd_vec3 origin;     ///< the corner with the smallest coordinates
	/// 5: a central tetrahedron and four corners, mirrored from cell to cell (the default);
	/// 6: the six tetrahedra around each cell's diagonal from (i, j, k) to (i+1, j+1, k+1)
	int tets_per_cell;
	int cookie;
} pbd_tet_box_def;

/// A tetrahedralised ball: the cube [-n, n]^3 of unit cells, six tetrahedra per cell mirrored
/// into every octant, mapped onto the ball by x -> x |x|_inf / |x|_2 (cube shells to spheres).
typedef struct pbd_tet_sphere_def {
	pbd_vec3 center;
	pbd_real radius;       ///< m, > 0
	uint32_t subdivisions; ///< n: cells from the centre to the surface along each axis, >= 1
	int cookie;
} pbd_tet_sphere_def;

/// How a body's particle masses are set when the mesh carries no inverse masses.
typedef enum pbd_mass_mode {
	PBD_MASS_PER_PARTICLE = 0, ///< `mass` kg for every particle
	PBD_MASS_TOTAL = 1,        ///< `mass` kg for the whole body, lumped by volume (tets), area, length, or evenly
	PBD_MASS_DENSITY = 2       ///< `mass` is a density: kg/m^3 with tets, kg/m^2 with triangles, kg/m for ropes
} pbd_mass_mode;

/// Material of one edge kind.
typedef struct pbd_edge_material {
	bool enabled;                 ///< create constraints for this kind
	pbd_real stiffness_stretch;   ///< PBD, [0,1]
	pbd_real stiffness_compress;  ///< PBD, [0,1]
	pbd_real compliance_stretch;  ///< XPBD, >= 0
	pbd_real compliance_compress; ///< XPBD, >= 0
} pbd_edge_material;

/// A physical cloth material (include/pbd/material.h).
typedef struct pbd_cloth_material pbd_cloth_material;

/// How a soft object resists bending.
typedef enum pbd_bend_model {
	PBD_BEND_EDGES = 0,     ///< the mesh's bend (flexion) edges as distance constraints
	PBD_BEND_DIHEDRAL = 1,  ///< a dihedral-angle constraint per interior edge (Müller et al. 2007)
	PBD_BEND_ISOMETRIC = 2, ///< an isometric bending constraint per interior edge (Bergou et al. 2006)
	PBD_BEND_NONE = 3       ///< no bending resistance
} pbd_bend_model;

/// What carries a soft object's in-plane stretch and shear.
typedef enum pbd_membrane_model {
	PBD_MEMBRANE_EDGES = 0,    ///< the mesh's structural and shear edges as distance constraints
	PBD_MEMBRANE_TRIANGLES = 1 ///< a triangle strain constraint per triangle (Müller et al. 2014)
} pbd_membrane_model;

/// What a soft object's tetrahedra become.
typedef enum pbd_tet_model {
	PBD_TET_NONE = 0,      ///< nothing (the edges of the tets still become distance constraints)
	PBD_TET_VOLUME = 1,    ///< a volume constraint per tetrahedron
	PBD_TET_NEOHOOKEAN = 2 ///< a stable Neo-Hookean element per tetrahedron
} pbd_tet_model;

/// Everything needed to turn a mesh into particles and constraints of a world.
typedef struct pbd_soft_def {
	const pbd_mesh* mesh;
	pbd_vec3 translation; ///< added to every mesh position
	pbd_vec3 velocity;    ///< added to every initial velocity
	pbd_mass_mode mass_mode;
	pbd_real mass; ///< > 0, meaning set by mass_mode
	pbd_edge_material material[PBD_EDGE_KIND_COUNT];
	const uint32_t* pinned; ///< mesh vertex indices to pin (inverse mass 0), or NULL
	uint32_t pinned_count;
	/// A physical material (include/pbd/material.h), or NULL. When set, every distance constraint
	/// gets the compliance 1/k of its spring constant k (grids: the exact mapping of
	/// pbd_cloth_grid_springs, border edges halved; other meshes: van Gelder's per edge; bend edges:
	/// pbd_cloth_flexion_stiffness), and under PBD the stiffness one XPBD projection would give
	/// (stiffness_from_compliance), so the cloth is the same under both formulations; the stiffness
	/// and compliance values of `material` are then not used, only its `enabled` flags.
	const pbd_cloth_material* cloth;
	/// Bending: PBD_BEND_EDGES uses the mesh's bend edges as distance constraints
	/// (material[PBD_EDGE_BEND]); the hinge models add one constraint per interior edge of the
	/// triangles instead (and no bend edges), with bend_stiffness / bend_compliance, or the
	/// hinge stiffness of `cloth` when given.
	pbd_bend_model bend;
	pbd_real bend_stiffness;  ///< PBD stiffness of hinge constraints, [0, 1] (default 1)
	pbd_real bend_compliance; ///< XPBD compliance of hinge constraints, 1/(N m), >= 0 (default 0)
	/// Tetrahedra of the mesh (if any) become constraints of this model.
	pbd_tet_model tets;
	pbd_real tet_stiffness;      ///< volume model: PBD stiffness [0, 1]; Neo-Hookean: both PBD stiffnesses
	pbd_real tet_compliance;     ///< volume model: XPBD compliance, m^5/N
	pbd_real tet_youngs_modulus; ///< Neo-Hookean: Young's modulus E, Pa (default 1e6)
	pbd_real tet_poisson_ratio;  ///< Neo-Hookean: Poisson's ratio in (-1, 0.5) (default 0.45)
	/// Long-range attachments to the pinned vertices (Kim et al. 2012): one unilateral limit per
	/// vertex on its distance to the nearest pin, which keeps a hanging cloth from stretching.
	bool long_range;
	pbd_lra_mode long_range_mode; ///< default geodesic
	pbd_real long_range_scale;    ///< > 0, slack allowed past the rest distance, as a factor (default 1)
	/// In-plane elasticity: PBD_MEMBRANE_EDGES uses the structural and shear edges as distance
	/// constraints; PBD_MEMBRANE_TRIANGLES adds a triangle strain constraint per triangle instead
	/// (and no structural or shear edges), with the compliances 1/stretch and 1/shear of `cloth`
	/// when given, else membrane_stiffness / membrane_compliance for stretch and shear alike.
	pbd_membrane_model membrane;
	pbd_real membrane_stiffness;  ///< PBD stiffness [0, 1] of the triangle strains (default 1)
	pbd_real membrane_compliance; ///< XPBD compliance per unit area, m/N (default 0)
	/// A closed surface keeps its enclosed volume times `pressure` (a balloon): one volume
	/// constraint over the object's triangles, which must be closed and consistently wound.
	bool balloon;
	pbd_real pressure;          ///< target volume as a multiple of the rest volume, > 0 (default 1)
	pbd_real volume_stiffness;  ///< PBD stiffness [0, 1] (default 1)
	pbd_real volume_compliance; ///< XPBD compliance, m^3/Pa (default 0)
	/// The colliders the object's particles collide with: those whose category shares a bit with
	/// this mask (default all bits; 0 ignores every collider).
	uint32_t collision_mask;
	/// Collision thickness, m (>= 0, default 0): each particle is a ball of half this radius,
	/// kept that far from colliders and from the particles of other objects with a thickness.
	pbd_real thickness;
	/// Particles of this object also keep `thickness` apart from each other, except those closer
	/// than that in the rest shape (mesh neighbours). Needs thickness > 0.
	bool self_collision;
	/// The edges of the object's triangles also keep `thickness` apart from the edges of other
	/// objects with a thickness and, with self_collision, from its own (edge-edge contacts: two
	/// strips crossing edge-on, edges of a fold sliding across each other; docs/collision.md).
	/// Default true; only acts with thickness > 0, on an object whose mesh has triangles.
	bool edge_contacts;
	/// Air (docs/methods.md, "Forces"): each of the object's triangles feels
	/// A (drag_normal (n.u) n + drag_tangent (u - (n.u) n)), u the velocity of the air relative to
	/// the triangle's centre (the wind minus the mean of its corners' velocities), n its unit normal,
	/// A its area, spread evenly over its three corners (seed 003's viscous model, with a tangential
	/// term). Both in kg/(m^2 s), >= 0, default 0. An object without triangles (a rope) feels
	/// drag_particle (wind - v) at each particle instead, kg/s, >= 0, default 0. A coefficient
	/// of the other kind (drag_particle for a mesh with triangles, drag_normal or drag_tangent
	/// for one without) is refused with PBD_ERR_INVALID_ARGUMENT: it would do nothing, or count
	/// the air twice.
	pbd_real drag_normal;
	pbd_real drag_tangent;
	pbd_real drag_particle;
	pbd_vec3 wind; ///< m/s, added to the world's wind for this object (default 0)
	int cookie;
} pbd_soft_def;

/// Handle to a soft object (a cloth, rope or soft body made from a mesh): index + 1 (0 = null)
/// and a generation, as colliders have, so that a stale id is caught once objects can be removed.
typedef struct pbd_soft_id {
	uint32_t index1;
	uint32_t generation;
} pbd_soft_id;

/// A soft object that entered a trigger (its first particle came in) or left it (its last
/// particle went out) during a step.
typedef struct pbd_trigger_object_event {
	uint32_t collider_index1; ///< the trigger's id index1
	pbd_soft_id object;
	bool entered;
} pbd_trigger_object_event;

/// Where a soft object's pieces landed in the world's flat arrays.
typedef struct pbd_soft_info {
	uint32_t first_particle, particle_count;
	uint32_t first_distance, distance_count;
	uint32_t first_triangle, triangle_count;
	/// Its constraints of every family: [first[f], first[f] + count[f]) in the order of addition
	/// of family f (first_distance and distance_count repeat the distance family's).
	uint32_t first[PBD_FAMILY_COUNT], count[PBD_FAMILY_COUNT];
} pbd_soft_info;

/// Diagnostics of one constraint family.
typedef struct pbd_family_stats {
	uint32_t count;        ///< constraints of the family
	double max_violation;  ///< max |C| in the family's unit (m for a distance)
	double max_strain;     ///< the family's relative violation: |C| / rest for a distance
	double mean_strain;    ///< mean of it over the constraints that have one
	double elastic_energy; ///< J; NaN when energy_defined is false
	bool energy_defined;   ///< false when some constraint of the family has no energy (PBD stiffness)
} pbd_family_stats;

/// Where the last pbd_world_step spent its wall-clock time, in milliseconds (pbd_world_def.profile;
/// all zero when off). The phases do not overlap; the rest of `step` (the Jacobi average, the
/// Chebyshev update, the multipliers' reset) belongs to none of them, so their sum is <= step.
typedef struct pbd_profile {
	double step;      ///< the whole pbd_world_step
	double prepare;   ///< its start: partition, hierarchy and method set-up, families refreshed; its end checks
	double predict;   ///< external forces, air and the prediction (force-based methods: damping, start state)
	double collide;   ///< contact finding: colliders, triangle contacts, particle/self, vertex-triangle, edge-edge
	double hierarchy; ///< the coarse levels of the hierarchical solve
	/// each family's projection kernels (Gauss-Seidel or Jacobi), over all iterations and substeps,
	/// added up over the threads that ran them: on several threads (pbd_world_def.threads) this is
	/// processor time, and the phases may add up to more than `step`
	double family[PBD_FAMILY_COUNT];
	double contacts;          ///< the contact projections inside the iterations
	double finish;            ///< after the iterations: collisions, friction, settling, velocities, restitution
	double method;            ///< the force-based methods' solve (implicit Euler, projective dynamics, VBD, explicit)
	double stats;             ///< the diagnostics pass (pbd_world_def.diagnostics) or the divergence check
	int substeps, iterations; ///< what the step ran
	uint32_t constraints[PBD_FAMILY_COUNT]; ///< constraints of each family
} pbd_profile;

/// Diagnostics of the world's current state.
typedef struct pbd_stats {
	double time;             ///< simulated seconds since creation
	uint64_t steps;          ///< pbd_world_step calls so far
	double kinetic_energy;   ///< J, m v^2 / 2 over particles with finite mass, and w . I w / 2 too for dynamic bodies
	double potential_energy; ///< J, gravitational, -sum m g.x over particles and dynamic bodies (zero at the origin)
	/// J, sum over the families. A constraint with XPBD compliance alpha > 0 stores C^2 / (2 alpha);
	/// one with zero compliance, or PBD stiffness 1, is ideal and stores none; one with a PBD
	/// stiffness in (0, 1) has no defined energy, and then this is NaN and energy_defined false.
	double elastic_energy;
	bool energy_defined;
	pbd_vec3 momentum;    ///< kg m/s, over particles with finite mass and dynamic bodies
	double max_strain;    ///< the largest strain of any family (|C| / rest for distances); divergence reads it
	double mean_strain;   ///< mean |C| / rest over the distance constraints with rest > 0
	double max_violation; ///< max |C| in m over distance constraints
	double edge_max_strain[PBD_EDGE_KIND_COUNT];  ///< max |C| / rest of the distances of each edge kind
	double edge_mean_strain[PBD_EDGE_KIND_COUNT]; ///< mean |C| / rest of each edge kind (0 when none)
	pbd_family_stats family[PBD_FAMILY_COUNT];    ///< per constraint family
	/// Implicit Euler: the largest relative residual |b - A x| / |b| any CG solve of the last step
	/// ended with, and the most iterations one took (0 for the other methods).
	double linear_residual;
	uint32_t linear_iterations;
	uint32_t contacts; ///< particles within margin (plus their radius) of a collider after the step
	uint32_t particles, distances, colliders;
	pbd_profile profile; ///< the last step's time per phase (pbd_world_def.profile)
	uint32_t bodies;     ///< live rigid bodies
	/// The dynamic bodies' share of kinetic_energy (J) and of momentum (kg m/s), and their angular
	/// momentum about the origin (kg m^2/s: each body's spin I w plus its centre's x * m v).
	double body_kinetic_energy;
	double body_momentum[3], body_angular_momentum[3];
} pbd_stats;

/// Bounds on the contact searches of one substep (docs/collision.md, "Bounded work"), far above
/// what a simulation that has not blown up reaches (the built-in scenes under every method stay
/// below a tenth of them, a fold snapping shut with its edges 9.4 times stretched below a fifth):
/// they keep a step on a state crushed or flung apart from costing unbounded time and memory.
/// Each query item (a particle against particles, a particle against surface triangles, an edge
/// against edges, a surface triangle against a collider's corners and edges) examines at most
/// PBD_COLLISION_MAX_CANDIDATES candidates and keeps at most PBD_COLLISION_MAX_CONTACTS contacts;
/// one search keeps at most PBD_COLLISION_CONTACTS_PER_ITEM contacts per query item in all (and
/// PBD_COLLISION_MAX_CONTACTS at least). An item or search stopped there is counted in
/// pbd_collision_work.capped, and the first one is logged.
#define PBD_COLLISION_MAX_CANDIDATES    16384u
#define PBD_COLLISION_MAX_CONTACTS      1024u
#define PBD_COLLISION_CONTACTS_PER_ITEM 64u

/// What the contact searches of the last step did (pbd_world_get_collision_work): integer counts,
/// the same on any number of threads.
typedef struct pbd_collision_work {
	uint64_t candidates;         ///< candidates the searches examined, over the step's substeps
	uint32_t most_candidates;    ///< the most one query item examined in one search
	uint32_t most_item_contacts; ///< the most contacts one query item kept in one search
	uint32_t most_contacts;      ///< the most contacts one search kept in one substep
	uint32_t capped;             ///< query items and searches stopped at a bound (see PBD_COLLISION_MAX_CANDIDATES)
	/// Substeps whose searches among the world's own particles and triangles (particle pairs,
	/// vertex-triangle, edge-edge, triangles against colliders) were skipped because the
	/// predicted state was torn: a non-finite position, or a surface triangle's edge stretched
	/// past (1 + divergence_strain) times its length when added. Such a state is a blown-up step
	/// (PBD_WARN_DIVERGED), and contacts found in it would only cost time; the first is logged.
	uint32_t skipped;
	uint64_t capped_total, skipped_total; ///< capped and skipped since the world was created
} pbd_collision_work;

/// Run-time events the library counts. The first of each kind is also logged.
typedef enum pbd_warning {
	/// Particle states became NaN/inf; counted per particle. The whole step was undone: every
	/// particle is back where the step started, at rest.
	PBD_WARN_NONFINITE = 0,
	PBD_WARN_SPEED_CLAMPED, ///< a particle's speed exceeded max_speed and was clamped
	/// The step blew up: it was undone for a non-finite state, or it left a constraint stretched
	/// past divergence_strain. Counted per step; last_index is the step count (pbd_stats.steps)
	/// at the last one. The numbers after such a step are not a simulation result.
	PBD_WARN_DIVERGED,
	PBD_WARN_COUNT
} pbd_warning;

typedef struct pbd_warning_stat {
	uint64_t count;
	uint32_t last_index; ///< particle index of the last occurrence (a step count for DIVERGED)
} pbd_warning_stat;

/// Opaque world.
typedef struct pbd_world pbd_world;

#ifdef __cplusplus
}
#endif

#endif
