/* A world allocator that counts the bytes the world holds live and their peak, for measuring
 * what a step costs in memory (pbd-soak --diverge, tests/world/test_diverged.c). Public API only. */
#ifndef PBD_SOAK_COUNTING_H
#define PBD_SOAK_COUNTING_H

#include <stdbool.h>
#include <stddef.h>

#include "pbd/pbd.h"

/* Set peak = live before a stretch to measure that stretch's peak. */
typedef struct soak_counting {
	size_t live, peak;
	/* Allocations that would take live past this are refused, so that a step that would need more
	 * fails at once (out of memory) instead of taking minutes to grow; SIZE_MAX for none. */
	size_t limit;
} soak_counting;

/* Empties *c, sets its limit and returns the hooks for pbd_world_def.allocator. */
pbd_allocator soak_counting_allocator(soak_counting* c, size_t limit);

/* Moves *world onto the allocator and log of `def` through a snapshot, which continues it bit for
 * bit, and destroys the old world. False with the library's message in err (the world left as it
 * was). */
bool soak_move_world(pbd_world** world, const pbd_world_def* def, pbd_error* err);

#endif
