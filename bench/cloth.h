/* What the benchmark's studies share: the clock, a silent log, and the hanging cloth's grid. */
#ifndef PBD_BENCH_CLOTH_H
#define PBD_BENCH_CLOTH_H

#include <stdbool.h>
#include <stdint.h>

#include "pbd/pbd.h"

/// Milliseconds on the monotonic clock (differences only).
double bench_now_ms(void);

/// A pbd_log_fn that drops every line: the studies read the warning counters instead.
void bench_quiet(const char* message, void* user);

/// The hanging cloth's grid (pbd_mesh_grid): a 1 m square of n x n vertices lying flat in the plane
/// y = 0, from x = -0.5 to 0.5 and z = 0 to 1, with both diagonals of every cell as shear edges and
/// no flexion edges. Vertices 0 and n - 1 are the corners of the edge z = 0, the ones the studies
/// pin. A study that wants flexion edges or another orientation changes those fields.
pbd_grid_def bench_cloth_grid_def(uint32_t n);

#endif
