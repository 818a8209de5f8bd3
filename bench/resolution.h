/* Resolution study: the sag of the same hanging cloth at several mesh resolutions. */
#ifndef PBD_BENCH_RESOLUTION_H
#define PBD_BENCH_RESOLUTION_H

#include <stdint.h>
#include <stdio.h>

/// Prints, for each size N and each method (PBD stiffness, PBD and XPBD from a physical
/// material), the sag and mean structural strain of the N x N hanging cloth after 3 s; one CSV row
/// each when csv is given. Returns 0, or -1 when the material could not be made.
int bench_resolution(const uint32_t* sizes, int size_count, FILE* csv);

#endif
