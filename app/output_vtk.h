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

/// <dir>/animation.pvd: frames 0 to `last` whose frame_<n>.vtu is in `dir` (a resumed run keeps
/// the earlier ones), at time frame * dt.
bool out_vtk_write_index(const char* dir, int last, double dt, pbd_scene_error* err);

/// At most the bytes of one .vtu of `s`, and of the .pvd of a run of `frames` frames.
uint64_t out_vtk_frame_bytes(const pbd_scene* s, int last_frame);
uint64_t out_vtk_index_bytes(int frames);

#endif
