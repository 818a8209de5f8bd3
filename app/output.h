/* Files a run writes: mesh frames (OBJ, binary PLY or VTK .vtu), metrics.csv and state.txt. Formats
 * are documented in docs/scene-format.md; USD is written by output_usd.h, VTK by output_vtk.h. Each
 * call reports a failure as one line in err. */
#ifndef PBD_APP_OUTPUT_H
#define PBD_APP_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pbd/scene.h"

/* Enough digits for the scalar to read back to the same bits, and the longest such a number
 * prints: "-1.23456789e+38" (float), "-1.2345678901234567e+308" (double, also %.17g of a double). */
#ifdef PBD_DOUBLE
#define OUT_REAL_FMT   "%.17g"
#define OUT_REAL_WIDTH 24
#else
#define OUT_REAL_FMT   "%.9g"
#define OUT_REAL_WIDTH 15
#endif
#define OUT_DOUBLE_WIDTH 24

/// Decimal digits of v.
uint64_t out_digits(uint64_t v);

typedef enum out_format {
	OUT_FORMAT_OBJ = 0,
	OUT_FORMAT_PLY,
	OUT_FORMAT_NONE,
	OUT_FORMAT_USD,
	OUT_FORMAT_VTK
} out_format;

/// "OBJ", "PLY", "none", "USD", "VTK": for messages.
const char* out_format_name(out_format format);

/// A run that may write more than this (but no more than --max-output) is warned about.
#define OUT_WARN_BYTES (100ull << 20)

/// Creates `dir` and its missing parents (mkdir -p).
bool out_make_dir(const char* dir, pbd_scene_error* err);

/// Deletes the frame files of an earlier run (frame_<digits>.obj / .ply / .vtu,
/// bodies_<digits>.vtp and joints_<digits>.vtp, nothing else), so a
/// shorter run does not leave a mix of old and new frames; those numbered up to keep_through
/// stay (-1: none stay; a resumed run keeps the frames before its start). *removed gets how
/// many went.
bool out_clear_frames(const char* dir, long keep_through, unsigned* removed, pbd_scene_error* err);

/// <dir>/frame_<frame, 5 digits or more>.<obj|ply|vtu>
void out_frame_path(char* out, size_t out_size, const char* dir, int frame, out_format format);

/// The current particle positions with the triangles of every object (`f`) and, for objects
/// without triangles, their lines (`l`). OBJ frames also give each object with triangles its
/// area-weighted vertex normals (`vn`) and, for a grid cloth, its grid coordinates as texture
/// coordinates (`vt`, vertex (i, j) at (i/(nx-1), j/(ny-1))); their faces are then `f v/vt/vn`
/// (or `f v//vn`). Then each live rigid body: a `# body` comment with its frame, and the shapes it
/// carries posed at it (`o body_<index1>`, its `v` after the particles', `f`). VTK frames have the
/// bodies and the joints in files beside them (out_vtk_write_bodies, out_vtk_write_joints), each
/// written when the world has some. Nothing for OUT_FORMAT_NONE and
/// OUT_FORMAT_USD (one file for the run).
bool out_write_frame(const char* path, out_format format, const pbd_scene* s, int frame, pbd_scene_error* err);

/// metrics.csv: the header line, then one row per frame.
void out_metrics_header(FILE* fp);
void out_metrics_row(FILE* fp, int frame, const pbd_stats* st);

/// state.txt: every particle's position, velocity and inverse mass, in a form that reads back
/// bit for bit.
bool out_write_state(const char* path, const pbd_scene* s, int frame, double time, pbd_scene_error* err);

/// True when every position and velocity is finite; otherwise *bad gets the first bad particle.
bool out_state_is_finite(const pbd_scene* s, uint32_t* bad);

/// True when every number of a metrics row is finite.
bool out_stats_are_finite(const pbd_stats* st);

/* ---- rigid bodies ---------------------------------------------------------------------------- */

/// Spheres and capsules are drawn as latitude-longitude meshes of this many segments around the
/// axis and rings from pole to pole (a capsule has one ring more, at the seam of each half).
#define OUT_ROUND_SEGMENTS 16
#define OUT_ROUND_RINGS    8

/// Triangles in one vertex array: what the writers draw of the shapes a body carries.
typedef struct out_mesh {
	pbd_vec3* v;
	uint32_t* tri; ///< 3 per triangle, 0-based into v
	uint32_t nv, nt;
	uint32_t cap_v, cap_t;
} out_mesh;

/// Appends the shapes that ride on body `id` (the scene's colliders whose pbd_collider_def.body
/// names it) to m as triangles wound outward: in the body's frame, or where they are in the world
/// now when `world`. A box is its 12 triangles, a sphere or capsule a latitude-longitude mesh, a
/// convex hull, mesh or height field the triangles pbd_collider_get_triangles gives; a plane has
/// none. False only when out of memory. Start with a zeroed m; out_mesh_free releases it.
bool out_body_mesh(const pbd_scene* s, pbd_body_id id, bool world, out_mesh* m);
void out_mesh_free(out_mesh* m);

/// The vertices and triangles out_body_mesh gives every live body of the scene, added up (the
/// size of a frame).
void out_bodies_mesh_size(const pbd_scene* s, uint64_t* vertices, uint64_t* triangles);

/// The name a body goes by in the files: its name among the scene's "bodies", else body_<index1>.
void out_body_name(const pbd_scene* s, pbd_body_id id, char* out, size_t out_size);

/// An upper bound of the bytes a run writes, in parts.
typedef struct out_run_size {
	uint64_t frame;   ///< one frame file (0 for OUT_FORMAT_NONE); USD: what one frame adds
	uint64_t frames;  ///< all of them, frame 0 included (USD: animation.usda and its frame store; VTK: with the .pvd)
	uint64_t metrics; ///< metrics.csv
	uint64_t state;   ///< state.txt
	uint64_t total;
} out_run_size;

/// What a run of `frames` frames of `s` writes at most: frame files 0..frames in `format` (or the
/// one USD file with the frame store it is assembled from),
/// metrics.csv and state.txt (numbers counted at their widest). `parts` may be NULL.
uint64_t out_run_bytes(const pbd_scene* s, int frames, out_format format, out_run_size* parts);

#endif
