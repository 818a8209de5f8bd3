/* Collision rows of the benchmark: the hanging cloth draped on a static sphere (pbd and, when
 * built with it, Bullet's soft body), a cloth folded on itself dropped on a floor with and
 * without self-collision, a cloth draped over a table and four cloths piled on a sphere (each of
 * the last three also in Bullet's soft body with self-collision).
 * docs/BENCHMARKS.md, "Collision", describes the scenes and the checks. */
#ifndef PBD_BENCH_COLLISION_H
#define PBD_BENCH_COLLISION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/// Prints the scene lines and, for each size N, the rows sphere (pbd, and Bullet when `bullet`),
/// self, self-vf, self-off, and table and pile on 1 and 2 threads (and self, table and pile in
/// Bullet, one thread, when `bullet`); one CSV row each when csv is given. steps: steps per run;
/// repeat: runs per row (0: 3 for N <= 128, 1 above). Returns -1 when a run failed, else the
/// number of rows whose final state differed between repeats or between 1 and 2 threads. A row that penetrates,
/// diverged or did not converge says so in its status and does not count.
int bench_collision(const uint32_t* sizes, int size_count, int steps, int repeat, bool bullet, FILE* csv);

#endif
