#include "core/cpu.h"

bool pbd_simd_built(void) {
#ifdef PBD_HAVE_AVX2
	return true;
#else
	return false;
#endif
}

bool pbd_cpu_avx512(void) {
#ifdef PBD_HAVE_AVX512
	/* as for AVX2, the check includes the OS's consent to save the ZMM and mask registers */
	return pbd_cpu_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
#else
	return false;
#endif
}

bool pbd_cpu_avx2(void) {
#ifdef PBD_HAVE_AVX2
	/* libgcc's check includes the OS's consent to save the YMM registers (OSXSAVE, XCR0). */
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
	return false;
#endif
}
