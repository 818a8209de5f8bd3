/* The attachment family's records and moving point, shared by its scalar kernels
 * (constraints/attachment.c) and its vector ones (simd/attachment_avx2.c). */
#ifndef PBD_CONSTRAINTS_ATTACHMENT_H
#define PBD_CONSTRAINTS_ATTACHMENT_H

#include "model/family.h"

/* Hot data. The point of the current step goes from `from` (where it was when the step began)
 * to `to` (where it is at its end); they are equal unless a new target was set. s is k' (PBD) or
 * the compliance (XPBD), see refresh. With body (slot + 1) set, the point is in that body's
 * frame and moves with it; 0: the world's. */
typedef struct pbd_attachment_c {
	uint32_t i;
	uint32_t body;
	pbd_real rest, s;
	pbd_vec3 from, to;
} pbd_attachment_c;

_Static_assert(sizeof(pbd_attachment_c) == 2 * sizeof(uint32_t) + 8 * sizeof(pbd_real), "padding in attachment");

/* The last substep ends on the target exactly, as pinned targets do; from then on from = to, so
 * the next step holds the point still unless a new target is set. Every record passes here in
 * every iteration, so the last substep's first iteration settles them all. */
static inline void pbd_attachment_settle(const pbd_step_ctx* ctx, pbd_attachment_c* c, uint32_t first, uint32_t end) {
	if (ctx->substep_fraction >= 1)
		for (uint32_t k = first; k < end; ++k) c[k].from = c[k].to;
}

/* Attachments to body slot i become attachments to the world points where the body is now: the
 * body is going away (pbd_body_destroy). */
void pbd_attachment_release_body(pbd_world* w, uint32_t i);

/* The scalar kernels, which the vector ones call for a batch that holds an attachment to a body. */
void pbd_attachment_project(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end);
void pbd_attachment_jacobi(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end);

#endif
