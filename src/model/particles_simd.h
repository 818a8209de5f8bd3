/* The per-particle passes of a step in AVX2 lanes (simd/particles_avx2.c), built only where
 * PBD_HAVE_AVX2 is defined. Each takes particles [i, end) in groups of 8 and returns the first
 * particle it left: the start of a group that needs the scalar code, or of the last 0 to 7
 * particles. The caller runs its scalar loop on that group and calls again, so that each group
 * goes through one code path whole, and the two paths give the same bits. */
#ifndef PBD_SIMD_PARTICLES_AVX2_H
#define PBD_SIMD_PARTICLES_AVX2_H

#include "model/world.h"

/* predict_block: groups of free particles with no external force, and no air anywhere. */
uint32_t pbd_particles_predict_avx2(pbd_world* w, pbd_real h, pbd_real damping, uint32_t i, uint32_t end);
/* velocity_block: groups of free particles none of which may reach max_speed. */
uint32_t pbd_particles_velocity_avx2(pbd_world* w, pbd_real h, pbd_real inv_h, uint32_t i, uint32_t end);
/* end_block: groups whose particles are all finite. */
uint32_t pbd_particles_end_avx2(pbd_world* w, uint32_t i, uint32_t end);
/* begin_block's search for targets: groups of 32 particles none of which has one. */
uint32_t pbd_particles_begin_avx2(const pbd_world* w, uint32_t i, uint32_t end);
/* solver.c's jacobi_apply_block and chebyshev_block: every group. */
uint32_t pbd_jacobi_apply_avx2(pbd_world* w, uint32_t i, uint32_t end);
uint32_t pbd_chebyshev_avx2(const pbd_world* w, pbd_real omega, pbd_real gamma, uint32_t i, uint32_t end);

#endif
