/* What vector kernels this build carries and this CPU can run. Asked once per world, at
 * creation (pbd_world.simd_lanes), so that no step consults the CPU and no state is global. */
#ifndef PBD_CPU_H
#define PBD_CPU_H

#include <stdbool.h>

/* The build compiled the AVX2 kernels (CMake PBD_SIMD, float builds on x86-64 GCC/Clang). */
bool pbd_simd_built(void);
/* The build has them and the CPU runs AVX2 and FMA (Haswell and later, Zen and later). FMA is
 * part of the requirement only to name one common baseline: the kernels contract nothing. */
bool pbd_cpu_avx2(void);
/* The build compiled the AVX-512 variant (x86-64 GCC/Clang float builds) and the CPU runs AVX2,
 * AVX-512F and AVX-512VL (Skylake-SP, Ice Lake and later, Zen 4 and later). */
bool pbd_cpu_avx512(void);

#endif
