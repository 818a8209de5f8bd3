/* Internals of pbd_render shared between its files; not part of its API. */
#ifndef PBD_RENDER_INTERNAL_H
#define PBD_RENDER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "pbd/render.h"

/* Writes "fmt..." into err (which may be NULL). Returns false, so failures read
 * `return render_fail(err, ...)`. */
bool render_fail(pbd_error* err, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- mesh_gen.c ---- */

/* A triangle mesh with positions and unit normals, 3 floats each, and 3 indices per triangle.
 * `shifts` (a capsule's, else NULL): per vertex, -1 or +1, the hemisphere the vertex belongs to,
 * which the surface shader moves along y by its half height. */
typedef struct render_mesh {
	uint32_t vertex_count;
	float* positions;
	float* normals;
	float* shifts;
	uint32_t index_count;
	uint32_t* indices;
} render_mesh;

/* The unit sphere around the origin as `slices` around the pole axis (y) by `stacks` from pole to
 * pole, counter-clockwise seen from outside. False when out of memory. */
bool render_mesh_uv_sphere(uint32_t slices, uint32_t stacks, render_mesh* out);
/* A capsule of radius 1 and half height 0 (two unit hemispheres with `stacks` each and a
 * cylinder of no height between their equators), to be stretched along y by the shifts. */
bool render_mesh_capsule(uint32_t slices, uint32_t stacks, render_mesh* out);
/* The cube [-1, 1]^3 with a flat normal per face (4 vertices each). */
bool render_mesh_box(render_mesh* out);
void render_mesh_free(render_mesh* m);

/* ---- normals.c ---- */

/* Smooth per-vertex normals of `count` vertices (xyz floats) from `triangle_count` triangles:
 * each vertex gets the sum of the cross products of its triangles' edges, i.e. of their normals
 * weighted by twice their areas, normalised. Vertices of no triangle (or only of degenerate ones)
 * get (0, 0, 0); the shader falls back to the face normal there. */
void render_smooth_normals(const float* positions, uint32_t count, const uint32_t* triangles, uint32_t triangle_count,
                           float* normals);

/* ---- camera.c ---- */

/* The camera's orthonormal frame: s (right), u (up), f (forward, eye to target). */
void render_camera_basis(const pbd_render_camera* c, float s[3], float u[3], float f[3]);

/* ---- framing.c ---- */

/* The plane collider's drawn quad: a square of half-size `half` centred at `center` spanned by
 * unit axes u, v orthogonal to the plane normal n. Sized from the scene bounds so it reaches well
 * past everything on it, with checker squares of a round size (1, 2 or 5 times a power of ten). */
typedef struct render_plane_quad {
	float center[3], u[3], v[3], n[3];
	float half;
	float tile;
} render_plane_quad;

void render_plane_quad_make(const pbd_plane* plane, const pbd_render_bounds* bounds, render_plane_quad* out);

/* A plane collider's plane in world coordinates: its local normal and offset moved by its pose. */
pbd_plane render_collider_world_plane(const pbd_collider_def* d);
/* The ball that holds a bounded collider (sphere, capsule, box; for a convex hull, mesh or
 * heightfield the ball around its world box, pbd_collider_get_bounds) where its pose puts it;
 * false for a plane. `d` is the def of collider `id` of `w`. */
bool render_collider_ball(const pbd_world* w, pbd_collider_id id, const pbd_collider_def* d, float center[3],
                          float* radius);

/* Whether the box holds anything. */
bool render_bounds_is_empty(const pbd_render_bounds* b);
/* Grows b to hold p. */
void render_bounds_add(pbd_render_bounds* b, const float p[3]);
void render_bounds_clear(pbd_render_bounds* b);

#endif
