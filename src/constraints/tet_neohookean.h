/* The Neo-Hookean tetrahedron family's records, shared by its scalar kernels
 * (constraints/tet_neohookean.c) and its vector ones (simd/tet_neohookean_avx2.c). */
#ifndef PBD_CONSTRAINTS_TET_NEOHOOKEAN_H
#define PBD_CONSTRAINTS_TET_NEOHOOKEAN_H

#include "model/family.h"

/* Hot data, read in every iteration. dm_inv is Dm^-1 row by row (Dm's columns are the rest edges
 * x1 - x0, x2 - x0, x3 - x0); s[0] and s[1] are the deviatoric and hydrostatic k' (PBD) or
 * compliance (XPBD), and gamma and dev_rest the targets of C_H = det F - gamma and
 * C_D = |F| - dev_rest, all derived in refresh. */
typedef struct pbd_tet_nh_c {
	uint32_t p[4];
	pbd_real dm_inv[9];
	pbd_real s[2];
	pbd_real gamma;
	pbd_real dev_rest;
	pbd_real grad2_min;
} pbd_tet_nh_c;

_Static_assert(sizeof(pbd_tet_nh_c) == 4 * sizeof(uint32_t) + 14 * sizeof(pbd_real), "padding in pbd_tet_nh_c");

/* Below this fraction of the product of its diagonal, the 2x2 system of the coupled XPBD step
 * counts as singular (only when a compliance rounds to 0): then the volume term is solved alone. */
#ifdef PBD_DOUBLE
#define PBD_NH_SINGULAR 1e-13
#else
#define PBD_NH_SINGULAR 1e-6f
#endif

#endif
