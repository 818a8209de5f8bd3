/* Collision rows of the benchmark: the hanging cloth draped on a static sphere (pbd and, when
 * built with it, Bullet's soft body), and a cloth folded on itself dropped on a floor with and
 * without self-collision. docs/BENCHMARKS.md, "Collision", describes the scenes and the checks. */
#ifndef PBD_BENCH_COLLISION_H
#define PBD_BENCH_COLLISION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/// Prints the scene lines and, for each size N, the rows sphere (pbd, and Bullet when `bullet`),
/// self and self-off; one CSV row each when csv is given. steps: steps per run; repeat: runs per
/// row (0: 3 for N <= 128, 1 above). Returns -1 when a run failed, else the number of rows whose
/// final state differed between repeats. A row that penetrates or diverged says so in its status
/// and does not count.
int bench_collision(const uint32_t* sizes, int size_count, int steps, int repeat, bool bullet, FILE* csv);

#endif
