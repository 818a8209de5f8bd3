/* Rigid-body rows of the benchmark: a stack of boxes, a pyramid of boxes and a pile of mixed
 * shapes poured into a box, and in a second table a pyramid of 5050 boxes, 5000 convex hulls
 * poured into a box and a grid of balls on ball joints, each in pbd (1 and 2 threads) and, when
 * built with it, in Bullet's btDiscreteDynamicsWorld. docs/BENCHMARKS.md, "Rigid bodies",
 * describes the scenes and the checks. */
#ifndef PBD_BENCH_RIGID_H
#define PBD_BENCH_RIGID_H

#include <stdbool.h>

/// Prints the scene lines and one row per scene and engine: stack (20 boxes, or 5 when `small`),
/// pyramid (20 layers, or 5) and pile (1000 bodies, or 50), `steps` steps of 1/60 s each. Every
/// row says a status; the bench only prints, it asserts no speed or quality. Returns -1 when a
/// run failed, else the number of scenes whose pbd state after the last step differed between 1
/// and 2 threads.
int bench_rigid(int steps, bool small, bool bullet);

/// The large table, as bench_rigid: pyramid (100 layers, or 10), hulls (5000 bodies, or 50) and
/// grid (100 x 100 balls, or 5 x 5), pbd at 20 substeps and at Box3D's 4, on 1 and 2 threads,
/// Bullet once per frame. Returns -1 when a run failed, else the number of scenes and pbd
/// settings whose state after the last step differed between 1 and 2 threads.
int bench_rigid_large(int steps, bool small, bool bullet);

#endif
