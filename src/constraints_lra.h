/* The long-range attachment family's records, shared by its scalar kernels (constraints_lra.c)
 * and its vector ones (simd/lra_avx2.c). */
#ifndef PBD_CONSTRAINTS_LRA_H
#define PBD_CONSTRAINTS_LRA_H

#include "family.h"

#define PBD_LRA_NONE UINT32_MAX

/* Hot data: the particle, its pin (PBD_LRA_NONE when inactive), scale * L, and k' or the
 * compliance (see refresh). */
typedef struct pbd_lra_c {
	uint32_t i, pin;
	pbd_real rest, s;
} pbd_lra_c;

_Static_assert(sizeof(pbd_lra_c) == 2 * sizeof(uint32_t) + 2 * sizeof(pbd_real), "padding in pbd_lra_c");

#endif
