/* The families' vector kernels (family.h: project_lanes, jacobi_lanes), one file each in
 * src/simd/, built only where PBD_HAVE_AVX2 is defined (src/CMakeLists.txt). Each is bit-identical
 * to its family's scalar kernels (docs/solvers.md, "SIMD lanes"). */
#ifndef PBD_SIMD_LANES_H
#define PBD_SIMD_LANES_H

#include "model/family.h"

/* Constraints per vector: 8 floats of AVX2. */
#define PBD_LANES 8

#define PBD_LANES_DECLARE(family)                                                                                      \
	void pbd_##family##_project_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end);            \
	void pbd_##family##_jacobi_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end);

PBD_LANES_DECLARE(attachment)
PBD_LANES_DECLARE(tet_volume)
PBD_LANES_DECLARE(tet_neohookean)
PBD_LANES_DECLARE(triangle)
PBD_LANES_DECLARE(bend_isometric)
PBD_LANES_DECLARE(bend_dihedral)

#undef PBD_LANES_DECLARE

#endif
