/* The distance family's records, shared by its scalar kernels (constraints/distance.c) and its
 * vector ones (simd/distance_avx2.c). */
#ifndef PBD_CONSTRAINTS_DISTANCE_H
#define PBD_CONSTRAINTS_DISTANCE_H

#include "model/family.h"

/* Hot data, read in every iteration. s[0] applies when the constraint is stretched (C > 0), s[1]
 * when compressed: the iteration-corrected stiffness k' for PBD, the compliance for XPBD (see
 * refresh). */
typedef struct pbd_distance_c {
	uint32_t a, b;
	pbd_real rest;
	pbd_real s[2];
} pbd_distance_c;

_Static_assert(sizeof(pbd_distance_c) == 2 * sizeof(uint32_t) + 3 * sizeof(pbd_real), "padding in pbd_distance_c");

/* The vector kernels' copy of the records (pbd_family.lanes), field by field, so that 8
 * constraints' fields load as one vector each where the records would need a transpose and a
 * gather. Each array holds cap entries; refresh writes the first n. */
typedef struct pbd_distance_lanes {
	uint32_t *a, *b;
	pbd_real *rest, *s0, *s1;
	/* the layout of the ends of the 8 constraints from here (PBD_RUN_*), where 8 remain */
	uint8_t* run;
} pbd_distance_lanes;

/* the family's lanes_size where the build has vector kernels (float only) */
#define PBD_DISTANCE_LANES_SIZE (2 * sizeof(uint32_t) + 3 * sizeof(pbd_real) + 1)

static inline pbd_distance_lanes pbd_distance_lanes_of(const pbd_family* f) {
	pbd_distance_lanes l;
	const size_t cap = f->cap;
	l.a = (uint32_t*)f->lanes;
	l.b = l.a + cap;
	l.rest = (pbd_real*)(void*)(l.b + cap);
	l.s0 = l.rest + cap;
	l.s1 = l.s0 + cap;
	l.run = (uint8_t*)(void*)(l.s1 + cap);
	return l;
}

/* Layouts of the 16 ends of 8 consecutive constraints that the AVX-512 lanes move as whole
 * vectors (simd/runs_avx512.h): "pairs", (p, p + 1), (p + 2, p + 3), ..., the 16 ends one run of
 * consecutive particles; "rows", (p + j, r + j), two runs of 8 that do not overlap. */
enum { PBD_RUN_NONE, PBD_RUN_PAIRS, PBD_RUN_ROWS };

/* Writes f->lanes from the records where the family has them: s0 and s1, and with `records` the
 * ends, rest lengths and layouts too. Refresh calls it, with `records` after the partition and
 * any change of the constraints. */
void pbd_distance_copy_lanes(pbd_family* f, bool records);

#ifdef PBD_HAVE_AVX2
/* The scalar kernels' operations, 8 constraints at a time; (end - first) % 8 == 0, and the range
 * lies in one colour group (family.h, project_lanes). */
void pbd_distance_project_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end);
void pbd_distance_jacobi_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end);
void pbd_distance_project_avx512(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end);
#endif

/* How many of the batches of 8 of [first, end) the AVX-512 Gauss-Seidel lanes move as runs of
 * consecutive particles (simd/runs_avx512.h), as of the last refresh; 0 in a build without them.
 * For tests, which cannot tell the two paths apart by their results. */
uint32_t pbd_distance_run_batches(const pbd_family* f, uint32_t first, uint32_t end);

#endif
