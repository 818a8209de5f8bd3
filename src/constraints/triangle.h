/* The triangle strain family's records (constraints/triangle.c), shared with its vector kernels
 * (simd/triangle_avx2.c). */
#ifndef PBD_CONSTRAINTS_TRIANGLE_H
#define PBD_CONSTRAINTS_TRIANGLE_H

#include "model/family.h"

/* Hot data. dm is Dm^-1 row-major, [p00 p01; p10 p11]: f_u = p00 e1 + p10 e2 and f_v = p01 e1 + p11 e2 with
 * e1 = x_b - x_a, e2 = x_c - x_a. s[0] (both stretches) and s[1] (shear) are the iteration-corrected stiffness k'
 * for PBD and the constraint compliance alpha / A for XPBD (see refresh). */
typedef struct pbd_triangle_c {
	uint32_t a, b, c;
	uint32_t spare; /* keeps the record free of padding in both precisions */
	pbd_real dm[4];
	pbd_real s[2];
} pbd_triangle_c;

_Static_assert(sizeof(pbd_triangle_c) == 4 * sizeof(uint32_t) + 6 * sizeof(pbd_real), "padding in pbd_triangle_c");

#endif
