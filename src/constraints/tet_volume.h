/* The tetrahedral volume family's records, shared by its scalar kernels
 * (constraints/tet_volume.c) and its vector ones (simd/tet_volume_avx2.c). */
#ifndef PBD_CONSTRAINTS_TET_VOLUME_H
#define PBD_CONSTRAINTS_TET_VOLUME_H

#include "model/family.h"

/* Hot data, read in every iteration. s is the iteration-corrected stiffness k' (PBD) or the
 * compliance (XPBD), derived in refresh. Below grad2_min the squared gradients of the free
 * particles count as zero (tet.h, PBD_TET_COLLAPSE_REL). */
typedef struct pbd_tet_volume_c {
	uint32_t p[4];
	pbd_real rest;
	pbd_real s;
	pbd_real grad2_min;
} pbd_tet_volume_c;

_Static_assert(sizeof(pbd_tet_volume_c) == 4 * sizeof(uint32_t) + 3 * sizeof(pbd_real), "padding in pbd_tet_volume_c");

#endif
