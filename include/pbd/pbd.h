/* pbd: position based dynamics in C.
 *
 * A world owns particles (structure of arrays), constraints (one flat array per kind) and
 * colliders. One call advances it:
 *
 *     pbd_world_def def = pbd_world_def_default();
 *     pbd_world* w = NULL;
 *     if (pbd_world_create(&def, &w) != PBD_OK) return 1;
 *     ... add particles, constraints, bodies, colliders ...
 *     for (int i = 0; i < 600; ++i) pbd_world_step(w);
 *     pbd_world_destroy(w);
 *
 * Indices: particles, distance constraints and triangles are numbered in the order they were
 * added to the world, from 0. Pointers returned by the accessors stay valid until the next call
 * that adds to the world or destroys it; stepping does not move them.
 *
 * Errors: every call that can fail returns a pbd_status (or a null id), sends one line to the
 * world's log callback and keeps it for pbd_world_last_error(). No call aborts or exits.
 */
#ifndef PBD_PBD_H
#define PBD_PBD_H

#include "pbd/types.h"
#include "pbd/material.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Version of the library as "major.minor.patch".
PBD_API const char* pbd_version(void);

/* ---- world ------------------------------------------------------------------------------ */

/// Defaults: gravity (0,-9.81,0), dt 1/60, 1 substep, 10 iterations, Gauss-Seidel, PBD
/// stiffness, no damping, Jacobi alpha 0 and omega 1, collisions in the solver, diagnostics on.
PBD_API pbd_world_def pbd_world_def_default(void);

/// Creates a world. On failure *out is NULL and the def's log callback got the reason.
PBD_API pbd_status pbd_world_create(const pbd_world_def* def, pbd_world** out);

/// Frees the world and everything in it. NULL is accepted.
PBD_API void pbd_world_destroy(pbd_world* world);

/// Advances the world by its dt (world def, or pbd_world_set_dt). Returns PBD_OK, or:
/// PBD_ERR_INVALID_ARGUMENT for a NULL world, or when the world's method cannot run its
/// constraints (see pbd_world_set_method); PBD_ERR_OUT_OF_MEMORY when an allocation fails (the
/// arrays the step needs grow before any particle moves; the contact arrays may grow inside the
/// substeps, and the step then ends with this status and its contacts incomplete); under
/// projective dynamics PBD_ERR_DEGENERATE when its system matrix is not positive definite to the
/// factor's pivot tolerance and PBD_ERR_NOT_FINITE when an entry of it overflows. Every failure
/// but a contact array's leaves the particles untouched. A step that blows up is not a failure: it
/// returns PBD_OK and is counted as PBD_WARN_DIVERGED.
PBD_API pbd_status pbd_world_step(pbd_world* world);

/// The substeps the last step ran: pbd_world_def.substeps, or more under max_substeps. Before a
/// world's first step, and after a load, the substeps it was created with. 0 for NULL.
PBD_API int pbd_world_step_substeps(const pbd_world* world);

/// The last error message of this world ("" if none).
PBD_API const char* pbd_world_last_error(const pbd_world* world);

/// Settings that may change between steps. Each validates like pbd_world_create.
PBD_API pbd_status pbd_world_set_dt(pbd_world* world, pbd_real dt);
PBD_API pbd_status pbd_world_set_substeps(pbd_world* world, int substeps);
PBD_API pbd_status pbd_world_set_max_substeps(pbd_world* world, int max_substeps);
PBD_API pbd_status pbd_world_set_iterations(pbd_world* world, int iterations);
PBD_API pbd_status pbd_world_set_solver(pbd_world* world, pbd_solver solver);
PBD_API pbd_status pbd_world_set_formulation(pbd_world* world, pbd_formulation formulation);
PBD_API pbd_status pbd_world_set_gravity(pbd_world* world, pbd_vec3 gravity);
PBD_API pbd_status pbd_world_set_damping(pbd_world* world, pbd_real damping);
PBD_API pbd_status pbd_world_set_jacobi(pbd_world* world, pbd_real alpha, pbd_real omega, bool equal_split);
/// Chebyshev acceleration of the Jacobi solver (see pbd_world_def.chebyshev*); rho 0 estimates.
PBD_API pbd_status pbd_world_set_chebyshev(pbd_world* world, bool on, pbd_real rho, int delay, pbd_real gamma);
/// Hierarchical solve (see pbd_world_def.hierarchy_levels); levels 0 turns it off.
PBD_API pbd_status pbd_world_set_hierarchy(pbd_world* world, int levels, int iterations);
/// Coarse levels the hierarchical solve has built (at the first step after the constraints, pins,
/// masses or hierarchy_levels changed; 0 before that or when it is off). When `particles` is not
/// NULL it receives the particle count of levels 0 to the returned one (PBD_HIERARCHY_MAX_LEVELS + 1
/// entries at most).
PBD_API uint32_t pbd_world_hierarchy_levels(const pbd_world* world, uint32_t* particles);
/// Switches the method (pbd_world_def.method); takes effect at the next step. The force-based
/// methods but VBD integrate a constraint of compliance 0 (a hard link) as a stiff spring (see
/// pbd_world_def.hard_stiffness). The step fails with PBD_ERR_INVALID_ARGUMENT when a family of
/// the world has no force model yet, or, under projective dynamics, when more than 8 constraints
/// span over 64 free particles each (enclosed volumes of large meshes), and under projective
/// dynamics with PBD_ERR_DEGENERATE or PBD_ERR_NOT_FINITE when its matrix cannot be factored
/// (see pbd_world_step).
PBD_API pbd_status pbd_world_set_method(pbd_world* world, pbd_method method);
/// The distance kernels (pbd_world_def.simd); results do not depend on them. PBD_SIMD_AVX2 or
/// PBD_SIMD_AVX512 on a build or CPU without them is refused.
PBD_API pbd_status pbd_world_set_simd(pbd_world* world, pbd_simd simd);
/// How stiff the force-based methods make hard constraints (pbd_world_def.hard_stiffness).
PBD_API pbd_status pbd_world_set_hard_stiffness(pbd_world* world, pbd_real hard_stiffness);
/// Threads the next steps run on, in [1, PBD_MAX_THREADS]; starts or stops the built-in pool
/// (when the world has no task system of the game's). Results do not depend on it.
PBD_API pbd_status pbd_world_set_threads(pbd_world* world, int threads);
/// Turns the per-phase profile of the step (pbd_stats.profile) on or off; it never changes the result.
PBD_API pbd_status pbd_world_set_profile(pbd_world* world, bool on);
/// Force-based settings: stiffness damping (s, >= 0) and the CG tolerance (in (0, 1)).
PBD_API pbd_status pbd_world_set_force_settings(pbd_world* world, pbd_real stiffness_damping,
                                                pbd_real linear_tolerance);
/// The wind (m/s) and its gusts (see pbd_world_def.wind).
PBD_API pbd_status pbd_world_set_wind(pbd_world* world, pbd_vec3 wind, pbd_real gust_strength, pbd_real gust_frequency);
/// The world's wind at `time` seconds, gusts included (what a particle with no wind of its own
/// feels then); the mean wind for a non-finite time, (0, 0, 0) for a NULL world.
PBD_API pbd_vec3 pbd_world_wind_at(const pbd_world* world, double time);
/// Air on the surface triangles [first, first + count): drag coefficients (kg/(m^2 s), >= 0) and
/// a wind added to the world's (see pbd_soft_def.drag_normal).
PBD_API pbd_status pbd_world_set_triangle_drag(pbd_world* world, uint32_t first, uint32_t count, pbd_real normal,
                                               pbd_real tangent, pbd_vec3 wind);
/// Air on the particles [first, first + count) that belong to no triangle with drag: f = drag
/// (wind + own wind - v), drag in kg/s, >= 0 (a particle given both feels both).
PBD_API pbd_status pbd_particles_set_drag(pbd_world* world, uint32_t first, uint32_t count, pbd_real drag,
                                          pbd_vec3 wind);
/// Adds an impulse (N s) to a free particle's velocity: v += impulse / m. Pinned particles ignore
/// it. Non-finite impulse: PBD_ERR_NOT_FINITE.
PBD_API pbd_status pbd_particle_apply_impulse(pbd_world* world, uint32_t index, pbd_vec3 impulse);
/// A radial explosion: every free particle at distance d < radius from `centre` receives the
/// impulse `impulse` (1 - d / radius) (N s) directed away from the centre; a particle exactly at
/// the centre has no direction and receives none. radius > 0, impulse finite (negative pulls in).
/// Returns the number of particles pushed in *count when count is not NULL.
PBD_API pbd_status pbd_world_explode(pbd_world* world, pbd_vec3 centre, pbd_real radius, pbd_real impulse,
                                     uint32_t* count);
PBD_API pbd_status pbd_world_set_collision_mode(pbd_world* world, pbd_collision_mode mode);
/// Current settings, as a def (cookie set, so it can create a copy of this world's setup).
PBD_API pbd_world_def pbd_world_get_def(const pbd_world* world);

/// Diagnostics after the last step (recomputed now if the world's diagnostics flag is off).
PBD_API void pbd_world_get_stats(pbd_world* world, pbd_stats* out);

/// Recovered-from run-time events, indexed by pbd_warning.
PBD_API pbd_warning_stat pbd_world_get_warning(const pbd_world* world, pbd_warning which);

/// What the contact searches of the last step examined and kept, and what they skipped or cut
/// at their bounds (pbd_collision_work; all zero for a NULL world).
PBD_API pbd_collision_work pbd_world_get_collision_work(const pbd_world* world);

/// FNV-1a hash of the bits of every position and velocity (with the remainders the library keeps
/// below their rounding) and of every rigid body's centre, orientation and velocities: equal
/// hashes mean bit-identical state. A world without bodies hashes its particles alone.
PBD_API uint64_t pbd_world_hash(const pbd_world* world);

/* ---- snapshots ------------------------------------------------------------------------- */

/// Writes the complete state of the world (settings, particles, constraints, colliders, clock,
/// warning counters) to `path`, through a temporary file renamed into place. A world loaded
/// from it and stepped ends bit-identical to this one stepped as often. The format is native
/// (scalar size and byte order are recorded and checked on load).
PBD_API pbd_status pbd_world_save(const pbd_world* world, const char* path);

/// The same into memory: *size receives the bytes needed; with buffer NULL nothing is written.
PBD_API pbd_status pbd_world_save_memory(const pbd_world* world, void* buffer, size_t capacity, size_t* size);

/// The most bytes pbd_world_load reads: a snapshot records its size in its header, and a larger
/// one is refused before anything past the header is read.
#define PBD_SNAPSHOT_MAX_BYTES ((uint64_t)1 << 34)

/// Creates a world from a snapshot file. `def` may be NULL; when given (made by
/// pbd_world_def_default), only its allocator, log, threads and task system are used, every
/// setting comes from the snapshot. A snapshot is untrusted input: only a regular file is
/// opened (a FIFO, a device or a directory fails with PBD_ERR_IO before a byte is read), its
/// header is read first and then exactly the bytes it announces (at most
/// PBD_SNAPSHOT_MAX_BYTES), and every value is checked against the bounds the API sets before
/// anything is built from it. A file that is not a valid snapshot of this precision fails with
/// one line in err naming the file and the field, e.g. "x.pbds: particle 12: remainder ...":
/// PBD_ERR_PARSE, or PBD_ERR_OUT_OF_RANGE, PBD_ERR_NOT_FINITE or PBD_ERR_DEGENERATE for a value
/// the API would refuse so, PBD_ERR_IO when it cannot be read; PBD_ERR_OUT_OF_MEMORY when an
/// allocation fails.
PBD_API pbd_status pbd_world_load(const char* path, const pbd_world_def* def, pbd_world** out, pbd_error* err);

/// The same from memory; the errors name "snapshot" for the file.
PBD_API pbd_status pbd_world_load_memory(const void* data, size_t size, const pbd_world_def* def, pbd_world** out,
                                         pbd_error* err);

/* ---- particles -------------------------------------------------------------------------- */

/// Adds `count` particles. `velocities` may be NULL (zero). Inverse mass 0 pins a particle.
/// The index of the first new particle goes to *first (may be NULL).
PBD_API pbd_status pbd_world_add_particles(pbd_world* world, uint32_t count, const pbd_vec3* positions,
                                           const pbd_vec3* velocities, const pbd_real* inv_masses, uint32_t* first);

/// Same, with masses in kg (each finite and > 0) instead of inverse masses; pin afterwards with
/// pbd_particle_pin.
PBD_API pbd_status pbd_world_add_particles_mass(pbd_world* world, uint32_t count, const pbd_vec3* positions,
                                                const pbd_vec3* velocities, const pbd_real* masses, uint32_t* first);

PBD_API uint32_t pbd_world_particle_count(const pbd_world* world);
/// Simulated seconds since the world was created (or since the snapshot's world was); cheap,
/// unlike pbd_world_get_stats.
PBD_API double pbd_world_time(const pbd_world* world);
/// Sets the collision mask of particles [first, first + count): they collide with the colliders
/// whose category shares a bit with it (pbd_soft_def.collision_mask sets it for an object).
PBD_API pbd_status pbd_particles_set_collision_mask(pbd_world* world, uint32_t first, uint32_t count, uint32_t mask);

/// Read-only views of the particle arrays (pbd_world_particle_count() entries).
PBD_API const pbd_vec3* pbd_world_positions(const pbd_world* world);
PBD_API const pbd_vec3* pbd_world_velocities(const pbd_world* world);
PBD_API const pbd_real* pbd_world_inv_masses(const pbd_world* world);

/// Bulk copies of [first, first + count).
PBD_API pbd_status pbd_world_get_positions(const pbd_world* world, uint32_t first, uint32_t count, pbd_vec3* out);
PBD_API pbd_status pbd_world_set_positions(pbd_world* world, uint32_t first, uint32_t count, const pbd_vec3* in);
PBD_API pbd_status pbd_world_get_velocities(const pbd_world* world, uint32_t first, uint32_t count, pbd_vec3* out);
PBD_API pbd_status pbd_world_set_velocities(pbd_world* world, uint32_t first, uint32_t count, const pbd_vec3* in);

/// Sets a free particle's inverse mass (> 0). A pinned particle keeps 0 until unpinned and gets
/// this value then.
PBD_API pbd_status pbd_particle_set_inv_mass(pbd_world* world, uint32_t index, pbd_real inv_mass);

/// Pins a particle: inverse mass 0, velocity 0. It never moves unless given a target.
PBD_API pbd_status pbd_particle_pin(pbd_world* world, uint32_t index);

/// Unpins a particle and gives it back the inverse mass it had before pinning.
PBD_API pbd_status pbd_particle_unpin(pbd_world* world, uint32_t index);

PBD_API bool pbd_particle_is_pinned(const pbd_world* world, uint32_t index);

/// Moves a pinned particle kinematically to `target` over the next step (linearly through the
/// substeps, so the cloth it holds sees a smooth motion and the velocity it reports is the
/// motion's). It stays there afterwards. Fails on a particle that is not pinned
/// (PBD_ERR_INVALID_ARGUMENT), and with PBD_ERR_OUT_OF_RANGE on a target that a component of the
/// motion would reach faster than PBD_MAX_KINEMATIC_SPEED over one step of dt.
PBD_API pbd_status pbd_particle_set_target(pbd_world* world, uint32_t index, pbd_vec3 target);

/// A force in N applied to the particle at every step until changed (zero to clear).
PBD_API pbd_status pbd_particle_set_force(pbd_world* world, uint32_t index, pbd_vec3 force);

/* ---- constraint families ---------------------------------------------------------------- */

/// Name of a constraint family ("distance", ...), as pbd_stats.family reports them; "unknown"
/// for a value out of range.
PBD_API const char* pbd_family_name(pbd_family_type type);

/* ---- distance constraints --------------------------------------------------------------- */

/// Adds `count` distance constraints. The index of the first goes to *first (may be NULL).
/// All are validated before any is added.
PBD_API pbd_status pbd_world_add_distances(pbd_world* world, uint32_t count, const pbd_distance_def* defs,
                                           uint32_t* first);

PBD_API uint32_t pbd_world_distance_count(const pbd_world* world);

/// Changes the stiffness and compliance of constraints [first, first + count) while the world
/// runs (a material slider, a tearing effect); their particles and rest lengths stay. Ranges
/// and values are validated as in pbd_world_add_distances.
PBD_API pbd_status pbd_world_set_distance_material(pbd_world* world, uint32_t first, uint32_t count,
                                                   const pbd_edge_material* material);

/// The particle pair of constraint `index` (for drawing and output).
PBD_API pbd_status pbd_world_get_distance(const pbd_world* world, uint32_t index, pbd_distance_def* out);

/* ---- tetrahedral volume constraints ------------------------------------------------------ */

/// Adds `count` tetrahedral volume constraints C = V - V0. The index of the first goes to *first
/// (may be NULL). All are validated before any is added; a rest volume that is measured must be
/// positive and not degenerate (|6 V| above a precision-scaled fraction of the longest edge
/// cubed), else PBD_ERR_DEGENERATE names the constraint.
PBD_API pbd_status pbd_world_add_tet_volumes(pbd_world* world, uint32_t count, const pbd_tet_volume_def* defs,
                                             uint32_t* first);

PBD_API uint32_t pbd_world_tet_volume_count(const pbd_world* world);

/// The particles, rest volume and material of constraint `index` (rest_volume as measured).
PBD_API pbd_status pbd_world_get_tet_volume(const pbd_world* world, uint32_t index, pbd_tet_volume_def* out);

/// Changes the PBD stiffness (in [0,1]) and XPBD compliance (>= 0) of constraints
/// [first, first + count) while the world runs.
PBD_API pbd_status pbd_world_set_tet_volume_material(pbd_world* world, uint32_t first, uint32_t count,
                                                     pbd_real stiffness, pbd_real compliance);

/* ---- tetrahedral stable Neo-Hookean constraints ----------------------------------------- */

/// Adds `count` stable Neo-Hookean tetrahedra, each two constraints (deviatoric and hydrostatic)
/// with two multipliers. The rest shape is the particles' current positions; a rest shape that is
/// inverted or degenerate fails with PBD_ERR_DEGENERATE naming the constraint. All are validated
/// before any is added.
PBD_API pbd_status pbd_world_add_tet_neohookeans(pbd_world* world, uint32_t count, const pbd_tet_neohookean_def* defs,
                                                 uint32_t* first);

PBD_API uint32_t pbd_world_tet_neohookean_count(const pbd_world* world);

/// The particles and material of constraint `index`.
PBD_API pbd_status pbd_world_get_tet_neohookean(const pbd_world* world, uint32_t index, pbd_tet_neohookean_def* out);

/// Changes the material of constraints [first, first + count) while the world runs; validated
/// as in pbd_world_add_tet_neohookeans. Rest shapes stay.
PBD_API pbd_status pbd_world_set_tet_neohookean_material(pbd_world* world, uint32_t first, uint32_t count,
                                                         pbd_real youngs_modulus, pbd_real poisson_ratio,
                                                         pbd_real stiffness_deviatoric, pbd_real stiffness_hydrostatic);

/* ---- attachments to points -------------------------------------------------------------- */

/// Adds `count` attachments (pbd_attachment_def). The index of the first goes to *first (may be
/// NULL). All are validated before any is added. An attachment of a pinned particle does nothing.
PBD_API pbd_status pbd_world_add_attachments(pbd_world* world, uint32_t count, const pbd_attachment_def* defs,
                                             uint32_t* first);

PBD_API uint32_t pbd_world_attachment_count(const pbd_world* world);

/// The def of attachment `index`, with the target it will have reached after the next step.
PBD_API pbd_status pbd_world_get_attachment(const pbd_world* world, uint32_t index, pbd_attachment_def* out);

/// Moves the point of attachment `index` to `target` over the next step, linearly through its
/// substeps (as pbd_particle_set_target moves a pinned particle); it stays there afterwards.
/// PBD_ERR_OUT_OF_RANGE, as there, for a point that would move faster than PBD_MAX_KINEMATIC_SPEED.
PBD_API pbd_status pbd_world_set_attachment_target(pbd_world* world, uint32_t index, pbd_vec3 target);

/// Changes the stiffness and compliance of attachments [first, first + count).
PBD_API pbd_status pbd_world_set_attachment_material(pbd_world* world, uint32_t first, uint32_t count,
                                                     pbd_real stiffness, pbd_real compliance);

/* ---- long-range attachments -------------------------------------------------------------- */

/// Adds `count` sets of long-range attachments (pbd_lra_def): each adds one constraint per
/// particle of its range, in particle order, the first set's first at *first (may be NULL). The
/// geodesic mode measures along the distance constraints that exist now between particles of the
/// range. The constraints follow the pins: after pbd_particle_pin, unpin or set_inv_mass the next
/// step finds each particle's nearest pin again (no allocation in the step); a pinned particle's
/// own constraint, or one that reaches no pin, is inactive until the pins change.
PBD_API pbd_status pbd_world_add_lras(pbd_world* world, uint32_t count, const pbd_lra_def* defs, uint32_t* first);

PBD_API uint32_t pbd_world_lra_count(const pbd_world* world);

/// Long-range attachment `index` as of the last step (or its addition).
PBD_API pbd_status pbd_world_get_lra(const pbd_world* world, uint32_t index, pbd_lra_info* out);

/// Changes the stiffness and compliance of long-range attachments [first, first + count).
PBD_API pbd_status pbd_world_set_lra_material(pbd_world* world, uint32_t first, uint32_t count, pbd_real stiffness,
                                              pbd_real compliance);

/* ---- clusters (shape matching) ----------------------------------------------------------- */

/// Adds `count` shape-matching clusters (pbd_cluster_def); the members are copied. The index of the
/// first goes to *first (may be NULL). All are validated before any is added.
PBD_API pbd_status pbd_world_add_clusters(pbd_world* world, uint32_t count, const pbd_cluster_def* defs,
                                          uint32_t* first);

PBD_API uint32_t pbd_world_cluster_count(const pbd_world* world);

/// Cluster `index`: out->count, stiffness and compliance, and its first `capacity` members
/// written to `members` (out->particles points there; rest is NULL).
PBD_API pbd_status pbd_world_get_cluster(const pbd_world* world, uint32_t index, pbd_cluster_def* out,
                                         uint32_t* members, uint32_t capacity);

/// The rotation from cluster `index`'s rest shape to its current goal shape, as a unit
/// quaternion (x, y, z, w), as found in the last step.
PBD_API pbd_status pbd_world_get_cluster_rotation(const pbd_world* world, uint32_t index, pbd_real out[4]);

/// Changes the stiffness and compliance of clusters [first, first + count).
PBD_API pbd_status pbd_world_set_cluster_material(pbd_world* world, uint32_t first, uint32_t count, pbd_real stiffness,
                                                  pbd_real compliance);

/* ---- bending constraints ---------------------------------------------------------------- */

/// Adds `count` dihedral bending constraints (pbd_bend_dihedral_def). The index of the first goes
/// to *first (may be NULL). All are validated before any is added; a measured rest angle needs
/// two triangles of non-zero area (PBD_ERR_DEGENERATE otherwise).
PBD_API pbd_status pbd_world_add_bend_dihedrals(pbd_world* world, uint32_t count, const pbd_bend_dihedral_def* defs,
                                                uint32_t* first);
PBD_API uint32_t pbd_world_bend_dihedral_count(const pbd_world* world);
/// The hinge, rest angle (always measure_rest false) and material of constraint `index`.
PBD_API pbd_status pbd_world_get_bend_dihedral(const pbd_world* world, uint32_t index, pbd_bend_dihedral_def* out);
/// Changes the PBD stiffness ([0,1]) and XPBD compliance (>= 0) of constraints [first, first + count).
PBD_API pbd_status pbd_world_set_bend_dihedral_material(pbd_world* world, uint32_t first, uint32_t count,
                                                        pbd_real stiffness, pbd_real compliance);

/// Adds `count` isometric bending constraints (pbd_bend_isometric_def), as for the dihedral ones.
/// The weights come from the hinge's current shape, which must be its rest shape: both triangles
/// of non-zero area (PBD_ERR_DEGENERATE otherwise, also for a hinge too small or too thin for the
/// scalar to hold its weights).
PBD_API pbd_status pbd_world_add_bend_isometrics(pbd_world* world, uint32_t count, const pbd_bend_isometric_def* defs,
                                                 uint32_t* first);
PBD_API uint32_t pbd_world_bend_isometric_count(const pbd_world* world);
/// The hinge, rest bend angle in [0, pi] (always measure_rest false) and material of constraint `index`.
PBD_API pbd_status pbd_world_get_bend_isometric(const pbd_world* world, uint32_t index, pbd_bend_isometric_def* out);
/// Changes the PBD stiffness ([0,1]) and XPBD compliance (>= 0) of constraints [first, first + count).
PBD_API pbd_status pbd_world_set_bend_isometric_material(pbd_world* world, uint32_t first, uint32_t count,
                                                         pbd_real stiffness, pbd_real compliance);

/* ---- triangle strain constraints --------------------------------------------------------- */

/// Stiffness 1 and compliance 0 for stretch and shear (an inextensible, unshearable membrane), axis zero.
PBD_API pbd_triangle_strain_def pbd_triangle_strain_def_default(void);

/// Adds `count` triangle strain constraints, each measuring its rest shape from the current positions. The index of
/// the first goes to *first (may be NULL). All are validated before any is added; a triangle without area (or too
/// small for the scalar: edges below about 1e-7 m in float) is PBD_ERR_DEGENERATE.
PBD_API pbd_status pbd_world_add_triangle_strains(pbd_world* world, uint32_t count, const pbd_triangle_strain_def* defs,
                                                  uint32_t* first);

/// One triangle strain constraint per surface triangle [first_triangle, first_triangle + count) of the world (a
/// body's triangles, pbd_soft_info.first_triangle), with the axis and material of `proto` (its a, b, c are ignored).
PBD_API pbd_status pbd_world_add_surface_strains(pbd_world* world, uint32_t first_triangle, uint32_t count,
                                                 const pbd_triangle_strain_def* proto, uint32_t* first);

PBD_API uint32_t pbd_world_triangle_strain_count(const pbd_world* world);

/// Changes the stiffness and compliance of constraints [first, first + count); validated as in the add call.
PBD_API pbd_status pbd_world_set_triangle_strain_material(pbd_world* world, uint32_t first, uint32_t count,
                                                          const pbd_triangle_strain_material* material);

/// Constraint `index` as added (axis as given); its rest area in m^2 goes to *rest_area (may be NULL).
PBD_API pbd_status pbd_world_get_triangle_strain(const pbd_world* world, uint32_t index, pbd_triangle_strain_def* out,
                                                 pbd_real* rest_area);

/* ---- volume constraints ------------------------------------------------------------------ */

/// No triangles, rest volume measured (-1), pressure 1, stiffness 1, compliance 0.
PBD_API pbd_volume_def pbd_volume_def_default(void);

/// Adds `count` volume constraints. Each is validated (indices, a closed and consistently wound mesh, a positive
/// volume: a mesh wound inside out is reported as such) before any is added. The index of the first goes to *first.
PBD_API pbd_status pbd_world_add_volumes(pbd_world* world, uint32_t count, const pbd_volume_def* defs, uint32_t* first);

PBD_API uint32_t pbd_world_volume_count(const pbd_world* world);

/// Changes the pressure (target volume over rest volume, > 0) of constraint `index`: inflating or deflating.
PBD_API pbd_status pbd_world_set_volume_pressure(pbd_world* world, uint32_t index, pbd_real pressure);

/// Changes stiffness ([0,1]) and compliance (>= 0, m^3/Pa) of constraints [first, first + count).
PBD_API pbd_status pbd_world_set_volume_material(pbd_world* world, uint32_t first, uint32_t count, pbd_real stiffness,
                                                 pbd_real compliance);

/// Constraint `index` with its rest volume as stored. Its triangles (world particle indices) are written to
/// `indices` when `capacity` holds 3 * triangle_count of them, and out->triangles then points there; otherwise
/// out->triangles is NULL and only the count is set.
PBD_API pbd_status pbd_world_get_volume(const pbd_world* world, uint32_t index, pbd_volume_def* out, uint32_t* indices,
                                        uint32_t capacity);

/// The volume constraint `index` encloses now (m^3, in double from the full positions) and its target pressure V0.
PBD_API pbd_status pbd_world_measure_volume(const pbd_world* world, uint32_t index, double* volume, double* target);

/* ---- surface triangles ------------------------------------------------------------------ */

/// Adds triangles (3 world particle indices each) that describe the surface for output and for
/// later area-based forces. They do not constrain anything by themselves.
PBD_API pbd_status pbd_world_add_triangles(pbd_world* world, uint32_t count, const uint32_t* indices, uint32_t* first);
PBD_API uint32_t pbd_world_triangle_count(const pbd_world* world);
PBD_API const uint32_t* pbd_world_triangles(const pbd_world* world);

/* ---- soft objects (mesh -> particles + constraints + triangles) ------------------------- */

/// Defaults: translation 0, mass 1 kg per particle, structural edges enabled and fully stiff
/// (stiffness 1, compliance 0), shear and bend edges enabled with the same material.
PBD_API pbd_soft_def pbd_soft_def_default(void);

/// Adds the particles, distance constraints and triangles of `def->mesh` to the world as one soft
/// object (a cloth, a rope, a soft body). Its handle goes to *id (may be NULL); on failure nothing
/// is added and *id is the null id.
PBD_API pbd_status pbd_soft_create(pbd_world* world, const pbd_soft_def* def, pbd_soft_id* id);

/// True while the id names a soft object of this world.
PBD_API bool pbd_soft_is_valid(const pbd_world* world, pbd_soft_id id);

/// Where the object's particles, constraints and triangles are in the world's arrays.
PBD_API pbd_status pbd_soft_get_info(const pbd_world* world, pbd_soft_id id, pbd_soft_info* out);

/// Soft objects in the world.
PBD_API uint32_t pbd_world_soft_count(const pbd_world* world);

/* ---- rigid bodies ------------------------------------------------------------------------- */

/// Defaults: a static body at the origin, gravity scale 1, no damping.
PBD_API pbd_body_def pbd_body_def_default(void);
/// Adds a rigid body; the null id (index1 0) on error, with the field and value named.
/// Dynamic bodies move under the position-based method; the force-based methods refuse a world
/// with a dynamic body at its next step. A body touches particles through the shapes it carries
/// (pbd_collider_def.body) and holds them by attachments (pbd_attachment_def.body); a dynamic
/// body's shapes meet every other collider and every other body's shapes (docs/collision.md,
/// "Bodies against bodies").
PBD_API pbd_body_id pbd_body_create(pbd_world* world, const pbd_body_def* def);
/// True while the id names a live body of this world.
PBD_API bool pbd_body_is_valid(const pbd_world* world, pbd_body_id id);
/// Removes a body with the shapes it carries; its id becomes invalid. Attachments to it hold
/// their particles to the world points where the body left them.
PBD_API pbd_status pbd_body_destroy(pbd_world* world, pbd_body_id id);
/// Live bodies of the world.
PBD_API uint32_t pbd_world_body_count(const pbd_world* world);
/// The frames of every body slot, indexed by id.index1 - 1, with the number of slots in *slots
/// (may be NULL): kept current by every step, creation, pose change and load, valid until the
/// next pbd_body_create (which may move the array). A destroyed body's slot keeps its last frame.
PBD_API const pbd_pose* pbd_world_body_poses(const pbd_world* world, uint32_t* slots);
/// The id of the body in slot `slot` (index1 - 1), or the null id when the slot is past the end
/// or its body was destroyed: how a program walks every body.
PBD_API pbd_body_id pbd_world_body_at(const pbd_world* world, uint32_t slot);
/// Where the body is and how it moves, with its momentum and energy.
PBD_API pbd_status pbd_body_get_state(const pbd_world* world, pbd_body_id id, pbd_body_state* out);
/// Gives a dynamic body new matter (from pbd_collider_mass_properties of the shapes it carries,
/// combined by pbd_mass_properties_combine): its frame, velocity and angular velocity stay, its
/// centre of mass and principal axes move inside the frame. Checked as pbd_body_def.mass;
/// PBD_ERR_INVALID_ARGUMENT for a static or kinematic body.
PBD_API pbd_status pbd_body_set_mass(pbd_world* world, pbd_body_id id, const pbd_mass_properties* mass);
/// Moves the body's frame to `pose` at once (nothing is swept along the jump).
PBD_API pbd_status pbd_body_set_pose(pbd_world* world, pbd_body_id id, pbd_pose pose);
/// Sets the velocity of the centre of mass and the angular velocity (world axes) of a kinematic
/// or dynamic body. PBD_ERR_NOT_FINITE for a non-finite component, PBD_ERR_OUT_OF_RANGE past
/// PBD_MAX_KINEMATIC_SPEED or PBD_MAX_KINEMATIC_ANGULAR_SPEED.
PBD_API pbd_status pbd_body_set_velocity(pbd_world* world, pbd_body_id id, pbd_vec3 velocity,
                                         pbd_vec3 angular_velocity);
/// Sets a kinematic body's velocities so that the next step carries its frame to `target` (a
/// keyframe), turning it the short way; they stay until changed, so the body goes on moving unless
/// called again (as pbd_collider_move_to). PBD_ERR_INVALID_ARGUMENT for a body that is not
/// kinematic, PBD_ERR_OUT_OF_RANGE for a move faster than the kinematic speed limits.
PBD_API pbd_status pbd_body_move_to(pbd_world* world, pbd_body_id id, pbd_pose target);
/// A force (N) at a world point of a dynamic body during the next step: it pushes the centre of
/// mass and turns the body by (point - centre) x force. Forces add up until the step, which
/// clears them.
PBD_API pbd_status pbd_body_apply_force(pbd_world* world, pbd_body_id id, pbd_vec3 force, pbd_vec3 point);
/// A torque (N m, world axes) on a dynamic body during the next step.
PBD_API pbd_status pbd_body_apply_torque(pbd_world* world, pbd_body_id id, pbd_vec3 torque);
/// An impulse (N s) at a world point of a dynamic body, now: v += J / m, w += I^-1 (r x J).
PBD_API pbd_status pbd_body_apply_impulse(pbd_world* world, pbd_body_id id, pbd_vec3 impulse, pbd_vec3 point);
/// Wakes a sleeping dynamic body and its island (pbd_world_def.sleep_time), or puts it and its
/// island to sleep now (at rest: velocities zero). The setters, forces, torques and impulses above
/// wake a body themselves. PBD_ERR_INVALID_ARGUMENT for a body that is not dynamic.
PBD_API pbd_status pbd_body_set_asleep(pbd_world* world, pbd_body_id id, bool asleep);

/* ---- joints ------------------------------------------------------------------------------- */

/// Defaults: a ball joint between two null ids (set at least one body), identity frames, rigid,
/// no limit, swing pi, no motor, unbreakable.
PBD_API pbd_joint_def pbd_joint_def_default(void);
/// Adds `count` joints (pbd_joint_def); the index of the first goes to *first (may be NULL). All
/// are validated before any is added, an error naming the joint and the field. Joints are
/// constraints like the particles' (PBD_FAMILY_JOINT), projected in the same iterations, always
/// with XPBD's compliance (docs/joints.md). A joint to a body that is destroyed holds to the world
/// frame where the body left it.
PBD_API pbd_status pbd_world_add_joints(pbd_world* world, uint32_t count, const pbd_joint_def* defs, uint32_t* first);
PBD_API uint32_t pbd_world_joint_count(const pbd_world* world);
/// The def of joint `index` as it is now (a released side reads as the world).
PBD_API pbd_status pbd_world_get_joint(const pbd_world* world, uint32_t index, pbd_joint_def* out);
/// Its angle or offset, errors, force and torque after the last step, and whether it broke.
PBD_API pbd_status pbd_world_get_joint_state(const pbd_world* world, uint32_t index, pbd_joint_state* out);
/// Sets a hinge's or prismatic joint's motor (checked as pbd_joint_def); PBD_MOTOR_OFF stops it.
PBD_API pbd_status pbd_world_set_joint_motor(pbd_world* world, uint32_t index, pbd_joint_motor motor, pbd_real target,
                                             pbd_real max, pbd_real compliance);
/// Breaks joint `index` now (a broken joint stays in the list, holding nothing) or mends it.
PBD_API pbd_status pbd_world_set_joint_broken(pbd_world* world, uint32_t index, bool broken);
/// The joints that broke during the last step: copies up to `capacity` (out may be NULL) and
/// returns how many there are, in the order they broke.
PBD_API uint32_t pbd_world_get_joint_events(const pbd_world* world, pbd_joint_event* out, uint32_t capacity);

/* ---- colliders -------------------------------------------------------------------------- */

PBD_API pbd_collider_def pbd_collider_def_default(void);

/// Adds a collider; the null id (index1 0) on error.
PBD_API pbd_collider_id pbd_collider_create(pbd_world* world, const pbd_collider_def* def);

/// True while the id names a live collider of this world.
PBD_API bool pbd_collider_is_valid(const pbd_world* world, pbd_collider_id id);

/// Removes a collider; its id and copies of it become invalid.
PBD_API pbd_status pbd_collider_destroy(pbd_world* world, pbd_collider_id id);

/// Reads back a collider's def (shape normalised as stored).
PBD_API pbd_status pbd_collider_get_def(const pbd_world* world, pbd_collider_id id, pbd_collider_def* out);

/// Where a collider's frame is now, in the world: its pose, or for a shape on a body the body's
/// frame composed with the shape's pose in it (pbd_collider_get_def gives the pose as given).
PBD_API pbd_status pbd_collider_get_pose(const pbd_world* world, pbd_collider_id id, pbd_pose* out);
PBD_API uint32_t pbd_world_collider_count(const pbd_world* world);

/// Teleports a collider: nothing is swept along the jump (particles it lands on are pushed out
/// of it by the nearest way). Use pbd_collider_move_to for motion that drags and sweeps.
PBD_API pbd_status pbd_collider_set_pose(pbd_world* world, pbd_collider_id id, pbd_pose pose);
/// Sets a kinematic collider's velocities (a static one accepts only zeros: PBD_ERR_INVALID_ARGUMENT).
/// PBD_ERR_NOT_FINITE for a non-finite component, PBD_ERR_OUT_OF_RANGE for one past
/// PBD_MAX_KINEMATIC_SPEED or PBD_MAX_KINEMATIC_ANGULAR_SPEED.
PBD_API pbd_status pbd_collider_set_velocity(pbd_world* world, pbd_collider_id id, pbd_vec3 velocity,
                                             pbd_vec3 angular_velocity);
/// Sets a kinematic collider's velocities so that the next step carries it to `target` (a
/// keyframe); they stay until changed, so the collider goes on moving unless called again.
/// PBD_ERR_OUT_OF_RANGE when those velocities pass PBD_MAX_KINEMATIC_SPEED or
/// PBD_MAX_KINEMATIC_ANGULAR_SPEED (a keyframe too far for one step of dt).
PBD_API pbd_status pbd_collider_move_to(pbd_world* world, pbd_collider_id id, pbd_pose target);

/// The world bounding box of a collider's shape at its current pose, without margin; false (and
/// nothing written) for an unbounded shape (a plane) or a stale id.
PBD_API bool pbd_collider_get_bounds(const pbd_world* world, pbd_collider_id id, pbd_vec3* lo, pbd_vec3* hi);
/// The surface of a convex, mesh or heightfield collider as triangles in its local frame (apply
/// its pose to draw it): copies up to the capacities (either array may be NULL) and returns
/// PBD_OK with the counts the whole surface needs; PBD_ERR_INVALID_ARGUMENT for other shapes.
PBD_API pbd_status pbd_collider_get_triangles(const pbd_world* world, pbd_collider_id id, pbd_vec3* vertices,
                                              uint32_t vertex_capacity, uint32_t* triangles, uint32_t triangle_capacity,
                                              uint32_t* vertex_count, uint32_t* triangle_count);

/// Mass, centre of mass and inertia of a solid collider shape of uniform `density` (kg/m^3), in
/// the frame its pose maps to: the sphere, capsule and box in closed form, a convex hull and a
/// closed mesh from their surface triangles (signed tetrahedra from the origin, Blow & Binstock
/// 2004). PBD_ERR_INVALID_ARGUMENT for a plane, an open mesh or a height field (they bound no
/// finite volume), for a closed mesh whose triangles enclose no positive volume (wound inward or
/// not closed), for a stale id; PBD_ERR_OUT_OF_RANGE for a density that is not finite and > 0;
/// PBD_ERR_OUT_OF_MEMORY when the triangles cannot be copied.
PBD_API pbd_status pbd_collider_mass_properties(pbd_world* world, pbd_collider_id id, pbd_real density,
                                                pbd_mass_properties* out);
/// The mass properties of `count` parts taken as one solid: masses add, the centre is the mass
/// average, and each part's inertia moves to that centre by the parallel-axis theorem.
/// PBD_ERR_INVALID_ARGUMENT for no parts or a part whose mass is not finite and > 0.
PBD_API pbd_status pbd_mass_properties_combine(const pbd_mass_properties* parts, uint32_t count,
                                               pbd_mass_properties* out);

/// The contacts after the last step (pbd_contact): copies up to `capacity` into `out` (which
/// may be NULL) and returns how many there are. Ordered by collider, then particle.
PBD_API uint32_t pbd_world_get_contacts(const pbd_world* world, pbd_contact* out, uint32_t capacity);
/// The contacts of dynamic bodies' shapes with each other and with colliders that touch after the
/// last step (docs/collision.md, "Bodies against bodies"): copies up to `capacity` (out may be
/// NULL) and returns how many there are, ordered by the pair of colliders.
PBD_API uint32_t pbd_world_get_body_contacts(const pbd_world* world, pbd_body_contact* out, uint32_t capacity);
/// The pairs of colliders, at least one on a dynamic body, that touched during the last step, each
/// with its strongest contact and its normal impulse over the step (docs/collision.md, "Contact
/// events"): copies up to `capacity` (out may be NULL) and returns how many there are, ordered by
/// the pair's index1s. A pair whose bodies sleep still touches, with impulse 0.
PBD_API uint32_t pbd_world_get_contact_pairs(const pbd_world* world, pbd_contact_pair* out, uint32_t capacity);
/// The pairs that began or stopped touching during the last step: copies up to `capacity` (out may
/// be NULL) and returns how many there are, ordered by the pair's index1s (an end before a begin of
/// the same slots). A destroyed collider or body ends its pairs at the next step; the ids an end
/// names may then be stale.
PBD_API uint32_t pbd_world_get_contact_events(const pbd_world* world, pbd_contact_event* out, uint32_t capacity);
/// The particles that entered or left a trigger collider during the last step: copies up to
/// `capacity` events and returns how many there are. Ordered by trigger, then particle.
PBD_API uint32_t pbd_world_get_trigger_events(const pbd_world* world, pbd_trigger_event* out, uint32_t capacity);
/// The soft objects that entered or left a trigger during the last step (the first of their
/// particles came in, the last went out): copies up to `capacity` and returns how many there are.
PBD_API uint32_t pbd_world_get_trigger_object_events(const pbd_world* world, pbd_trigger_object_event* out,
                                                     uint32_t capacity);

/* ---- meshes (no world needed) ----------------------------------------------------------- */

PBD_API pbd_grid_def pbd_grid_def_default(void);
PBD_API pbd_rope_def pbd_rope_def_default(void);

/// Rectangular cloth: vertices, triangles (2 per cell, split along (i,j)-(i+1,j+1)), structural,
/// shear and (if asked) bend edges, in that order. PBD_ERR_NOT_FINITE when a vertex or an edge
/// length would overflow the scalar.
PBD_API pbd_status pbd_mesh_grid(const pbd_grid_def* def, pbd_mesh* out, pbd_error* err);

/// Rope: segments + 1 vertices, structural links, and bend links if asked. PBD_ERR_NOT_FINITE
/// when the length from start to end overflows the scalar.
PBD_API pbd_status pbd_mesh_rope(const pbd_rope_def* def, pbd_mesh* out, pbd_error* err);

/// Cloth from any triangle mesh: copies the arrays, extracts the unique edges of the triangles
/// (structural), and if `bend` adds one bend edge across every interior edge (between the two
/// vertices opposite it). Rejects indices out of range, repeated vertices in a triangle,
/// triangles of zero area, and edges whose length (the rest length a body measures) overflows
/// the scalar (PBD_ERR_NOT_FINITE).
PBD_API pbd_status pbd_mesh_from_triangles(uint32_t vertex_count, const pbd_vec3* positions, uint32_t triangle_count,
                                           const uint32_t* indices, bool bend, pbd_mesh* out, pbd_error* err);

/// Bounds of the OBJ reader, so that a wrong file (a binary one, one growing as it is read) ends
/// in an error instead of exhausting memory: bytes of one line, of the whole input, and the most
/// vertices and triangles (2^24 particles, as for grids and ropes, is far past interactive use).
#define PBD_OBJ_MAX_LINE      (1u << 20)
#define PBD_OBJ_MAX_BYTES     ((uint64_t)1 << 31)
#define PBD_OBJ_MAX_VERTICES  (1u << 24)
#define PBD_OBJ_MAX_TRIANGLES (1u << 25)

/// Loads a Wavefront OBJ (v and f records; polygons are fanned into triangles; negative and
/// v/vt/vn indices accepted) and builds it as with pbd_mesh_from_triangles.
/// Errors name the file and line ("mesh.obj:12: ..."), vertices 1-based as the file numbers
/// them. PBD_ERR_OUT_OF_RANGE past the PBD_OBJ_MAX_* bounds, PBD_ERR_NOT_FINITE for a
/// coordinate, or an edge length, beyond the scalar's range, PBD_ERR_OUT_OF_MEMORY when an
/// allocation fails, PBD_ERR_IO for a path that is not a regular file (a FIFO, a device, a
/// directory), refused before it is read.
PBD_API pbd_status pbd_mesh_load_obj(const char* path, bool bend, pbd_mesh* out, pbd_error* err);

/// The same from `size` bytes of OBJ text in memory (need not be terminated), for data that does
/// not come from a file. `name` stands for the path in messages (NULL = "<memory>").
PBD_API pbd_status pbd_mesh_load_obj_memory(const char* data, size_t size, const char* name, bool bend, pbd_mesh* out,
                                            pbd_error* err);

/// Most distinct group names, and most (group, triangle) memberships, one OBJ file may hold.
#define PBD_OBJ_MAX_GROUPS  4096u
#define PBD_OBJ_MAX_MEMBERS (1u << 26)

/// pbd_mesh_load_obj, also reading the file's `o` and `g` records into *groups (see
/// pbd_obj_groups). On failure both are left zeroed. PBD_ERR_OUT_OF_RANGE past PBD_OBJ_MAX_GROUPS
/// names or PBD_OBJ_MAX_MEMBERS memberships.
PBD_API pbd_status pbd_mesh_load_obj_groups(const char* path, bool bend, pbd_mesh* out, pbd_obj_groups* groups,
                                            pbd_error* err);
/// The same from memory, as pbd_mesh_load_obj_memory.
PBD_API pbd_status pbd_mesh_load_obj_memory_groups(const char* data, size_t size, const char* name, bool bend,
                                                   pbd_mesh* out, pbd_obj_groups* groups, pbd_error* err);
/// Releases what pbd_mesh_load_obj_groups allocated. Accepts a zeroed struct; leaves it zeroed.
PBD_API void pbd_obj_groups_free(pbd_obj_groups* groups);

PBD_API pbd_tet_box_def pbd_tet_box_def_default(void);
PBD_API pbd_tet_sphere_def pbd_tet_sphere_def_default(void);

/// Tetrahedral box: vertices, tetrahedra (positively oriented; faces shared by two cells are
/// split the same way on both sides), the boundary triangles (outward, counter-clockwise seen
/// from outside) and the unique edges of the tetrahedra (structural). The tetrahedra fill the box
/// exactly. Past 2^24 vertices PBD_ERR_OUT_OF_RANGE.
PBD_API pbd_status pbd_mesh_tet_box(const pbd_tet_box_def* def, pbd_mesh* out, pbd_error* err);

/// Tetrahedralised ball (see pbd_tet_sphere_def): (2n+1)^3 vertices, 48 n^3 tetrahedra, every one
/// positively oriented, boundary vertices on the sphere, with boundary triangles and edges as for
/// the box. The volume is that of the inscribed polyhedron, below the ball's by about 0.29 / n^2
/// of it (22 % at n = 1, 1.8 % at n = 4, 0.45 % at n = 8). Past 2^24 vertices PBD_ERR_OUT_OF_RANGE.
PBD_API pbd_status pbd_mesh_tet_sphere(const pbd_tet_sphere_def* def, pbd_mesh* out, pbd_error* err);

/// Bounds of the TetGen reader: bytes of a line and of a file, and the most points and
/// tetrahedra.
#define PBD_TETGEN_MAX_LINE   (1u << 20)
#define PBD_TETGEN_MAX_BYTES  ((uint64_t)1 << 31)
#define PBD_TETGEN_MAX_POINTS (1u << 24)
#define PBD_TETGEN_MAX_TETS   (1u << 26)

/// Loads a TetGen mesh: the points of a .node file and the tetrahedra of an .ele file (comments
/// from '#', numbering from 0 or 1 as the first point says, attributes and boundary markers
/// skipped, 10-node tetrahedra read by their 4 corners). Builds the boundary triangles (faces of
/// one tetrahedron only, outward) and the unique edges. Every error names the file and line
/// ("ball.ele:12: ..."): malformed or missing numbers and counts, a truncated file, an index out
/// of range, a non-finite coordinate, a repeated or degenerate tetrahedron, a face shared by more
/// than two tetrahedra or by two on the same side. A tetrahedron listed with negative orientation
/// is reoriented (its last two vertices swapped); on success err then holds a note saying how
/// many and where the first one was, and is empty otherwise. A path that is not a regular file
/// (a FIFO, a device, a directory) is refused with PBD_ERR_IO before it is read.
PBD_API pbd_status pbd_mesh_load_tetgen(const char* node_path, const char* ele_path, pbd_mesh* out, pbd_error* err);
/// The same from the texts of the two files in memory, `node_size` and `ele_size` bytes (need not
/// be terminated), for data that does not come from files. Messages name them "<name>.node" and
/// "<name>.ele" (name NULL = "<memory>").
PBD_API pbd_status pbd_mesh_load_tetgen_memory(const char* node_text, size_t node_size, const char* ele_text,
                                               size_t ele_size, const char* name, pbd_mesh* out, pbd_error* err);
/// The hinges of a mesh's triangles, for the bending constraints: for every edge shared by
/// exactly two triangles, 4 vertex indices (x0, x1, x2, x3) such that (x0, x1, x2) is the first of
/// the two triangles (lower index) with its own orientation and x3 is the other's third vertex;
/// so (x1, x0, x3) is the second triangle when the two are oriented consistently. The hinges
/// come in the order of their edges (sorted by vertex pair), whatever the orientation of the
/// triangles. *count receives the number of hinges; they are written to out4 (4 per hinge) when it
/// is not NULL, which needs capacity >= *count (PBD_ERR_OUT_OF_RANGE otherwise, nothing written).
/// Edges that make no hinge are counted in *skipped (may be NULL): those of 3 or more triangles
/// (non-manifold) and those whose two triangles have the same third vertex (a doubled triangle).
/// Fails on a triangle index out of range or a triangle repeating a vertex.
PBD_API pbd_status pbd_mesh_hinges(const pbd_mesh* mesh, uint32_t* out4, uint32_t capacity, uint32_t* count,
                                   uint32_t* skipped, pbd_error* err);

/// Frees a builder-made mesh and zeroes it. Does nothing to a mesh with owned == false.
PBD_API void pbd_mesh_free(pbd_mesh* mesh);

/* ---- deprecated names ------------------------------------------------------------------- */

/// The former names of shape matching and of hard constraints, kept for one release. "Shape" now
/// names a collider's geometry only and "rigid" a rigid body: shape matching's clusters are
/// clusters, and a constraint of compliance 0 is hard. pbd_world_def.rigid_stiffness became
/// pbd_world_def.hard_stiffness without an alias (a field cannot have two names).
typedef pbd_cluster_def pbd_shape_def PBD_DEPRECATED("use pbd_cluster_def");

PBD_DEPRECATED("use pbd_cluster_def_default")
static inline pbd_cluster_def pbd_shape_def_default(void) { return pbd_cluster_def_default(); }

PBD_DEPRECATED("use pbd_world_add_clusters")
static inline pbd_status pbd_world_add_shapes(pbd_world* world, uint32_t count, const pbd_cluster_def* defs,
                                              uint32_t* first) {
	return pbd_world_add_clusters(world, count, defs, first);
}

PBD_DEPRECATED("use pbd_world_cluster_count")
static inline uint32_t pbd_world_shape_count(const pbd_world* world) { return pbd_world_cluster_count(world); }

PBD_DEPRECATED("use pbd_world_get_cluster")
static inline pbd_status pbd_world_get_shape(const pbd_world* world, uint32_t index, pbd_cluster_def* out,
                                             uint32_t* members, uint32_t capacity) {
	return pbd_world_get_cluster(world, index, out, members, capacity);
}

PBD_DEPRECATED("use pbd_world_get_cluster_rotation")
static inline pbd_status pbd_world_get_shape_rotation(const pbd_world* world, uint32_t index, pbd_real out[4]) {
	return pbd_world_get_cluster_rotation(world, index, out);
}

PBD_DEPRECATED("use pbd_world_set_cluster_material")
static inline pbd_status pbd_world_set_shape_material(pbd_world* world, uint32_t first, uint32_t count,
                                                      pbd_real stiffness, pbd_real compliance) {
	return pbd_world_set_cluster_material(world, first, count, stiffness, compliance);
}

PBD_DEPRECATED("use pbd_world_set_hard_stiffness")
static inline pbd_status pbd_world_set_rigid_stiffness(pbd_world* world, pbd_real hard_stiffness) {
	return pbd_world_set_hard_stiffness(world, hard_stiffness);
}

#ifdef __cplusplus
}
#endif

#endif
