/* Cost to quality: the cheapest setting of each method that holds the hanging cloth taut. */
#ifndef PBD_BENCH_QUALITY_H
#define PBD_BENCH_QUALITY_H

#include <stdint.h>
#include <stdio.h>

/// For each size N, each method's cheapest setting (substeps x iterations, searched over a ladder
/// of increasing cost) whose N x N hanging cloth has mean structural strain <= target at t = 2 s
/// without diverging, on each of the thread counts, with its measured ms per 1/60 s step, and the same for the strain
/// at every step of t in (1, 2] s; a ladder ends early after a missing rung dearer than cap_ms per step. Prints a table
/// on stdout and, when csv is given, one row per size, method and measure. Returns 0, or -1 when a world could not be
/// made.
int bench_quality(const uint32_t* sizes, int size_count, const int* threads, int thread_count, double target,
                  double cap_ms, const char* only_method, FILE* csv);

#endif
