/* The rigid bodies' passes of a substep in AVX2 lanes (simd/bodies_avx2.c), built only where
 * PBD_HAVE_AVX2 is defined. Each takes 4 consecutive body slots that the caller (bodies.c) found
 * fit for them, and gives the bits of the scalar code. */
#ifndef PBD_MODEL_BODIES_SIMD_H
#define PBD_MODEL_BODIES_SIMD_H

#include "model/bodies.h"

/* dynamic_substep of slots [i, i + 4): live dynamic bodies, awake, each with three equal
 * principal moments. */
void pbd_bodies_dynamic_avx2(pbd_bodies* b, uint32_t i, double h, double damping, const double g[3]);
/* corrections_block of slots [i, i + 4): live dynamic bodies, awake, each with a correction. */
void pbd_bodies_corrections_avx2(pbd_bodies* b, uint32_t i, pbd_real h);

#endif
