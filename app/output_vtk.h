/* `pbd run --format vtk`: a VTK XML UnstructuredGrid (.vtu, ASCII) per frame and a ParaView
 * collection (<dir>/animation.pvd) that lists them with their times. The layout is described in
 * docs/scene-format.md. */
#ifndef PBD_APP_OUTPUT_VTK_H
#define PBD_APP_OUTPUT_VTK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pbd/scene.h"

/// One frame: every particle as a point with PointData "velocity" (3 components) and "strain"
/// (the mean |l / rest - 1| of the distance constraints at the particle, 0 where there are none),
/// the triangles of each object as VTK_TRIANGLE cells and, for objects without triangles, their
/// lines as VTK_LINE cells.
bool out_vtk_write(FILE* fp, const pbd_scene* s, int frame, pbd_scene_error* err);

/// <dir>/bodies_<frame, 5 digits or more>.vtp
void out_vtk_bodies_path(char* out, size_t out_size, const char* dir, int frame);

/// The live rigid bodies of one frame as VTK XML PolyData: each body's origin as a vertex (in
/// slot order), then the shapes it carries, posed at the frame, as triangles. Point arrays:
/// "body" (the body's id.index1), "orientation" (its rotation, quaternion x y z w) and "velocity"
/// (of the body's matter at the point, v + w x (p - centre of mass)).
bool out_vtk_write_bodies(FILE* fp, const pbd_scene* s, int frame, pbd_scene_error* err);

/// <dir>/joints_<frame, 5 digits or more>.vtp
void out_vtk_joints_path(char* out, size_t out_size, const char* dir, int frame);

/// The world's joints at one frame as VTK XML PolyData: joint k (in index order, broken ones too)
/// is line cell k, from point 2k, its anchor on a (frame_a's origin in the world), to point
/// 2k + 1, its anchor on b. Cell arrays, from pbd_world_get_joint_state: "type" (pbd_joint_type),
/// "broken" (0 or 1), "force" and "torque" (the magnitudes of what it exerted on b in the last
/// substep, N and N m), "error_distance" (m) and "position" (its angle, rad, or offset, m).
bool out_vtk_write_joints(FILE* fp, const pbd_scene* s, int frame, pbd_scene_error* err);

/// <dir>/animation.pvd: frames 0 to `last` whose frame_<n>.vtu is in `dir` (a resumed run keeps
/// the earlier ones), at time frame * dt, as part 0; where a bodies_<n>.vtp is there too, it is
/// part 1 of that time step, and a joints_<n>.vtp part 2.
bool out_vtk_write_index(const char* dir, int last, double dt, pbd_scene_error* err);

/// At most the bytes of one .vtu of `s`, and of the .pvd of a run of `frames` frames.
uint64_t out_vtk_frame_bytes(const pbd_scene* s, int last_frame);
uint64_t out_vtk_index_bytes(int frames);
/// At most the bytes of one bodies_<n>.vtp of `s` (0 without live bodies).
uint64_t out_vtk_bodies_bytes(const pbd_scene* s, int last_frame);
/// At most the bytes of one joints_<n>.vtp of `s` (0 without joints).
uint64_t out_vtk_joints_bytes(const pbd_scene* s, int last_frame);

#endif
