/* What the fuzz targets share: the checks that must hold of a world after any input, whatever the
 * library accepted or refused on the way, the allocator their worlds run on, and the checked
 * steps. A broken check prints one line and aborts, which libFuzzer reports as a crash and saves
 * the input. */
#ifndef PBD_FUZZ_UTIL_H
#define PBD_FUZZ_UTIL_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbd/math.h"
#include "pbd/pbd.h"

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2), noreturn))
#endif
void fuzz_fail(const char* fmt, ...);

static inline bool fuzz_v3_finite(pbd_vec3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }

/* The library may give up on a particle's state only where it says so: a non-finite position
 * or velocity is allowed once PBD_WARN_NONFINITE or PBD_WARN_DIVERGED has been reported. */
void fuzz_check_finite(const pbd_world* w);

/* Copies of the positions of the pinned particles (inverse mass 0) before a step, to compare
 * bit for bit after it. `moving` (may be NULL) marks particles given a target for this step,
 * which are allowed to move. */
typedef struct fuzz_pins {
	uint32_t n;
	uint32_t* index;
	pbd_vec3* x;
} fuzz_pins;

void fuzz_pins_take(fuzz_pins* s, const pbd_world* w, const unsigned char* moving);
/* Frees the copies after checking that no pinned particle moved by a single bit. */
void fuzz_pins_check(fuzz_pins* s, const pbd_world* w);
/* Frees the copies without a check (a step that did not run). */
void fuzz_pins_free(fuzz_pins* s);

/* A world's allocator: it refuses what would take the bytes held past `cap` (and remembers that
 * it did), and every block carries its size, so that a free or a realloc naming another size
 * than the block's, or of a pointer it did not hand out, is a finding. */
typedef struct fuzz_heap {
	size_t held, cap; /* bytes handed out and not given back; their limit */
	size_t blocks;    /* blocks handed out and not given back */
	bool refused;     /* an allocation was refused for the cap */
} fuzz_heap;

/* The cap of one world's heap: far more than any input the fuzzers make needs, far less than
 * what a size read from the input could ask for. */
#define FUZZ_HEAP_CAP ((size_t)256 << 20)

/* Empties *h, sets its cap and returns the hooks for pbd_world_def.allocator. */
pbd_allocator fuzz_heap_allocator(fuzz_heap* h, size_t cap);
/* Fails unless everything was given back (after pbd_world_destroy or a refused load). */
void fuzz_heap_check_empty(const fuzz_heap* h, const char* when);

/* Whether a failed step is the documented refusal of a force-based method: a family it has no
 * force model for, a dynamic rigid body (only the position-based method moves them), or under
 * projective dynamics more large constraints than its low-rank update takes. The step then says
 * why and leaves the world as it was. */
bool fuzz_step_refused(const pbd_world* w, pbd_status st);

/* Steps a world at most `max_steps` times while the work stays under a budget of constraint
 * projections, so that an input asking for 1000 substeps of 10000 iterations is loaded and
 * checked but does not turn into a timeout. Each step must succeed or be refused as
 * fuzz_step_refused says (which ends the stepping); finiteness is checked after every step, the
 * pinned particles across each step after the first (a pin with a target moves during the
 * first). Out of memory is allowed only when `heap` (the world's, or NULL) refused something:
 * it ends the stepping and returns false. */
bool fuzz_step_checked(pbd_world* w, int max_steps, const fuzz_heap* heap);

#endif
