/* The distance family's records, shared by its scalar kernels (constraints_distance.c) and its
 * vector ones (simd/distance_avx2.c). */
#ifndef PBD_CONSTRAINTS_DISTANCE_H
#define PBD_CONSTRAINTS_DISTANCE_H

#include "family.h"

/* Hot data, read in every iteration. s[0] applies when the constraint is stretched (C > 0), s[1]
 * when compressed: the iteration-corrected stiffness k' for PBD, the compliance for XPBD (see
 * refresh). */
typedef struct pbd_distance_c {
	uint32_t a, b;
	pbd_real rest;
	pbd_real s[2];
} pbd_distance_c;

_Static_assert(sizeof(pbd_distance_c) == 2 * sizeof(uint32_t) + 3 * sizeof(pbd_real), "padding in pbd_distance_c");

#ifdef PBD_HAVE_AVX2
/* The scalar kernels' operations, 8 constraints at a time; (end - first) % 8 == 0, and the range
 * lies in one colour group (family.h, project_lanes). */
void pbd_distance_project_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end);
void pbd_distance_jacobi_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end);
void pbd_distance_project_avx512(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end);
uint32_t pbd_distance_run_batches_avx512(const pbd_family* f, uint32_t first, uint32_t end);
#endif

/* How many of the batches of 8 of [first, end) the AVX-512 Gauss-Seidel lanes move as runs of
 * consecutive particles (simd/runs_avx512.h); 0 in a build without them. For tests, which cannot
 * tell the two paths apart by their results. */
uint32_t pbd_distance_run_batches(const pbd_family* f, uint32_t first, uint32_t end);

#endif
