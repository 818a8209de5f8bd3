/* The distance lanes of distance_avx2.c built a second time, with -mavx512f -mavx512vl, where a
 * particle's 12 bytes move as one masked load or store (1 instruction instead of 3); chosen at
 * run time where the CPU has AVX-512F and VL (cpu.h). */
#define PBD_LANES_AVX512 1
#include "simd/distance_avx2.c"
