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

/// Range of a free particle's inverse mass, 1/kg (0 pins). Bounded so that the products the
/// projections form, (w_a + w_b) |d| and its quotients, stay normal and finite in float.
#define PBD_INV_MASS_MIN 1e-9
#define PBD_INV_MASS_MAX 1e15

/// Most coarse levels a world's hierarchical solve builds (pbd_world_def.hierarchy_levels).
#define PBD_HIERARCHY_MAX_LEVELS 16

/// Caps on the world's gravity components (m/s^2) and step length (s): within them, one step's
/// products stay finite in float.
#define PBD_MAX_GRAVITY 1e6
#define PBD_MAX_DT      1e3

/// Allocation hooks. All NULL means the C library's malloc/free.
typedef struct pbd_allocator {
	void* (*alloc)(size_t size, void* user);
	void* (*realloc)(void* ptr, size_t old_size, size_t new_size, void* user);
	void (*free)(void* ptr, size_t size, void* user);
	void* user;
} pbd_allocator;

/// Log callback: receives one line without a trailing newline. NULL means silence.
typedef void (*pbd_log_fn)(const char* message, void* user);

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
	/// Hierarchical solve (Müller 2008, "Hierarchical Position Based Dynamics"): coarse levels
	/// built from the distance-constraint graph, each iterated before the finer one and its
	/// corrections interpolated down, once per substep before the `iterations` of the real
	/// constraints. 0 (default) turns it off; at most PBD_HIERARCHY_MAX_LEVELS.
	int hierarchy_levels;
	/// Hierarchical solve: Gauss-Seidel iterations on each coarse level per substep, >= 1.
	int hierarchy_iterations;
	pbd_collision_mode collision_mode;
	pbd_real max_speed; ///< clamp on particle speed in m/s, 0 = no clamp
	bool diagnostics;   ///< compute pbd_stats after every step (one extra pass)
	/// A step after which some distance constraint is stretched or compressed by more than this
	/// many times its rest length (|C| / rest) counts as diverged (PBD_WARN_DIVERGED), as does a
	/// step that produced a non-finite state. Default 10; 0 turns the strain test off.
	pbd_real divergence_strain;
	uint32_t particle_capacity; ///< initial capacities; the arrays grow when adding beyond them
	uint32_t distance_capacity;
	pbd_allocator allocator;
	pbd_log_fn log; ///< where error and warning lines go
	void* log_user;
	int cookie; ///< set by pbd_world_def_default(); do not touch
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
	PBD_FAMILY_DISTANCE = 0, ///< C = |x_a - x_b| - rest
	PBD_FAMILY_COUNT
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
} pbd_distance_def;

/// A distance constraint that pulls and pushes with full stiffness and zero compliance.
PBD_API pbd_distance_def pbd_distance_def_default(void);

/// Collider shapes. A new shape is an entry here and a member of pbd_collider_def.shape, plus
/// one file src/collide_<shape>.c that implements pbd_shape_ops and a line in collide.c's table.
typedef enum pbd_shape_type {
	PBD_SHAPE_PLANE = 0,  ///< half-space: particles are kept where dot(n, x) >= offset
	PBD_SHAPE_SPHERE = 1, ///< solid ball
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

/// A static collider. Particles are kept at least `margin` away from its surface.
typedef struct pbd_collider_def {
	pbd_shape_type type;
	union {
		pbd_plane plane;
		pbd_sphere sphere;
	} shape;
	pbd_real margin; ///< collision thickness in m, >= 0
	int cookie;
} pbd_collider_def;

/// Handle to a collider: index + 1 (0 = null) and a generation that a removal bumps.
typedef struct pbd_collider_id {
	uint32_t index1;
	uint32_t generation;
} pbd_collider_id;

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
	bool owned;          ///< arrays were allocated by a builder; pbd_mesh_free releases them
} pbd_mesh;

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

/// How a body's particle masses are set when the mesh carries no inverse masses.
typedef enum pbd_mass_mode {
	PBD_MASS_PER_PARTICLE = 0, ///< `mass` kg for every particle
	PBD_MASS_TOTAL = 1,        ///< `mass` kg for the whole body, lumped by area (or length, or evenly)
	PBD_MASS_DENSITY = 2       ///< `mass` is an area density kg/m^2 (line density kg/m for ropes)
} pbd_mass_mode;

/// Material of one edge kind.
typedef struct pbd_edge_material {
	bool enabled;                 ///< create constraints for this kind
	pbd_real stiffness_stretch;   ///< PBD, [0,1]
	pbd_real stiffness_compress;  ///< PBD, [0,1]
	pbd_real compliance_stretch;  ///< XPBD, >= 0
	pbd_real compliance_compress; ///< XPBD, >= 0
} pbd_edge_material;

/// Everything needed to turn a mesh into particles and constraints of a world.
typedef struct pbd_body_def {
	const pbd_mesh* mesh;
	pbd_vec3 translation; ///< added to every mesh position
	pbd_vec3 velocity;    ///< added to every initial velocity
	pbd_mass_mode mass_mode;
	pbd_real mass; ///< > 0, meaning set by mass_mode
	pbd_edge_material material[PBD_EDGE_KIND_COUNT];
	const uint32_t* pinned; ///< mesh vertex indices to pin (inverse mass 0), or NULL
	uint32_t pinned_count;
	int cookie;
} pbd_body_def;

/// Where a body's pieces landed in the world's flat arrays.
typedef struct pbd_body {
	uint32_t first_particle, particle_count;
	uint32_t first_distance, distance_count;
	uint32_t first_triangle, triangle_count;
} pbd_body;

/// Diagnostics of one constraint family.
typedef struct pbd_family_stats {
	uint32_t count;        ///< constraints of the family
	double max_violation;  ///< max |C| in the family's unit (m for a distance)
	double max_strain;     ///< the family's relative violation: |C| / rest for a distance
	double mean_strain;    ///< mean of it over the constraints that have one
	double elastic_energy; ///< J; NaN when energy_defined is false
	bool energy_defined;   ///< false when some constraint of the family has no energy (PBD stiffness)
} pbd_family_stats;

/// Diagnostics of the world's current state.
typedef struct pbd_stats {
	double time;             ///< simulated seconds since creation
	uint64_t steps;          ///< pbd_world_step calls so far
	double kinetic_energy;   ///< J, sum of m v^2 / 2 over particles with finite mass
	double potential_energy; ///< J, gravitational, -sum m g.x (zero at the origin)
	/// J, sum over the families. A constraint with XPBD compliance alpha > 0 stores C^2 / (2 alpha);
	/// one with zero compliance, or PBD stiffness 1, is ideal and stores none; one with a PBD
	/// stiffness in (0, 1) has no defined energy, and then this is NaN and energy_defined false.
	double elastic_energy;
	bool energy_defined;
	pbd_vec3 momentum;                            ///< kg m/s, over particles with finite mass
	double max_strain;                            ///< max |C| / rest over distance constraints with rest > 0
	double mean_strain;                           ///< mean |C| / rest
	double max_violation;                         ///< max |C| in m over distance constraints
	double edge_max_strain[PBD_EDGE_KIND_COUNT];  ///< max |C| / rest of the distances of each edge kind
	double edge_mean_strain[PBD_EDGE_KIND_COUNT]; ///< mean |C| / rest of each edge kind (0 when none)
	pbd_family_stats family[PBD_FAMILY_COUNT];    ///< per constraint family
	uint32_t contacts;                            ///< particles within margin of a collider after the step
	uint32_t particles, distances, colliders;
} pbd_stats;

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
