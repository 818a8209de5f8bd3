/* Rigid-body rows of the benchmark: a stack of boxes, a pyramid of boxes and a pile of mixed
 * shapes poured into a box, each in pbd (1 and 2 threads) and, when built with it, in Bullet's
 * btDiscreteDynamicsWorld. docs/BENCHMARKS.md, "Rigid bodies", describes the scenes and the
 * checks. */
#ifndef PBD_BENCH_RIGID_H
#define PBD_BENCH_RIGID_H

#include <stdbool.h>

/// Prints the scene lines and one row per scene and engine: stack (20 boxes, or 5 when `small`),
/// pyramid (20 layers, or 5) and pile (1000 bodies, or 50), `steps` steps of 1/60 s each. Every
/// row says a status; the bench only prints, it asserts no speed or quality. Returns -1 when a
/// run failed, else the number of scenes whose pbd state after the last step differed between 1
/// and 2 threads.
int bench_rigid(int steps, bool small, bool bullet);

#endif
