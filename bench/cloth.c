/* What the benchmark's studies share (cloth.h). */
#define _POSIX_C_SOURCE 200809L

#include "cloth.h"

#include <time.h>

double bench_now_ms(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

void bench_quiet(const char* message, void* user) {
	(void)message;
	(void)user;
}

pbd_grid_def bench_cloth_grid_def(uint32_t n) {
	pbd_grid_def g = pbd_grid_def_default();
	g.nx = n;
	g.ny = n;
	g.size_u = 1;
	g.size_v = 1;
	g.origin = (pbd_vec3){(pbd_real)-0.5, 0, 0};
	g.axis_u = (pbd_vec3){1, 0, 0};
	g.axis_v = (pbd_vec3){0, 0, 1};
	g.diagonals = 2;
	g.bend = false;
	return g;
}
