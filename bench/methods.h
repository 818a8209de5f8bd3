/* Methods on one scene: every integration method of the library on the same hanging cloth. */
#ifndef PBD_BENCH_METHODS_H
#define PBD_BENCH_METHODS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/// For each size N, each method's largest stable step, its cost there, its cheapest setting that
/// holds the mean structural strain at or below 1 %, that setting's cost, and the energy drift
/// (methods.c states the scene and every criterion). h_min is the smallest step tried (s, > 0);
/// limit_s caps the wall time of one simulation (a row then says "time limit"); `only`, when not
/// NULL, names the one method to run. Prints a table per size on stdout and, when csv is given,
/// one row per size and method. Returns 0, or -1 when the material or a mesh could not be made.
int bench_methods(const uint32_t* sizes, int size_count, double h_min, double limit_s, const char* only, FILE* csv);

/// Whether `name` is one of the methods the table has a row for (pbd, xpbd, explicit_euler, ...).
bool bench_methods_known(const char* name);

#endif
