/* Checks shared by the fuzz targets: what must hold of a world after any input, whatever the
 * library accepted or refused on the way. A broken check prints one line and aborts, which
 * libFuzzer reports as a crash and saves the input. */
#ifndef PBD_FUZZ_CHECK_H
#define PBD_FUZZ_CHECK_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbd/math.h"
#include "pbd/pbd.h"

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2), noreturn))
#endif
static inline void
fuzz_fail(const char* fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	fputs("fuzz check failed: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

static inline bool fuzz_v3_finite(pbd_vec3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }

/* The library may give up on a particle's state only where it says so: a non-finite position
 * or velocity is allowed once PBD_WARN_NONFINITE or PBD_WARN_DIVERGED has been reported. */
static inline void fuzz_check_finite(const pbd_world* w) {
	if (pbd_world_get_warning(w, PBD_WARN_NONFINITE).count || pbd_world_get_warning(w, PBD_WARN_DIVERGED).count) return;
	const uint32_t n = pbd_world_particle_count(w);
	const pbd_vec3* x = pbd_world_positions(w);
	const pbd_vec3* v = pbd_world_velocities(w);
	for (uint32_t i = 0; i < n; ++i)
		if (!fuzz_v3_finite(x[i]) || !fuzz_v3_finite(v[i]))
			fuzz_fail("particle %u of %u is not finite (x %g %g %g, v %g %g %g) and no warning says so", i, n,
			          (double)x[i].x, (double)x[i].y, (double)x[i].z, (double)v[i].x, (double)v[i].y, (double)v[i].z);
}

/* Copies of the positions of the pinned particles (inverse mass 0) before a step, to compare
 * bit for bit after it. `moving` (may be NULL) marks particles given a target for this step,
 * which are allowed to move. */
typedef struct fuzz_pins {
	uint32_t n;
	uint32_t* index;
	pbd_vec3* x;
} fuzz_pins;

static inline void fuzz_pins_take(fuzz_pins* s, const pbd_world* w, const unsigned char* moving) {
	const uint32_t n = pbd_world_particle_count(w);
	const pbd_real* iw = pbd_world_inv_masses(w);
	const pbd_vec3* x = pbd_world_positions(w);
	s->n = 0;
	s->index = (uint32_t*)malloc((n ? n : 1) * sizeof *s->index);
	s->x = (pbd_vec3*)malloc((n ? n : 1) * sizeof *s->x);
	if (!s->index || !s->x) fuzz_fail("out of memory in the harness");
	for (uint32_t i = 0; i < n; ++i)
		if (iw[i] == 0 && !(moving && moving[i])) {
			s->index[s->n] = i;
			s->x[s->n++] = x[i];
		}
}

/* Frees the copies after checking that no pinned particle moved by a single bit. */
static inline void fuzz_pins_check(fuzz_pins* s, const pbd_world* w) {
	const pbd_vec3* x = pbd_world_positions(w);
	for (uint32_t k = 0; k < s->n; ++k) {
		const uint32_t i = s->index[k];
		if (memcmp(&x[i], &s->x[k], sizeof x[i]) == 0) continue;
		fuzz_fail("pinned particle %u moved from %.9g %.9g %.9g to %.9g %.9g %.9g", i, (double)s->x[k].x,
		          (double)s->x[k].y, (double)s->x[k].z, (double)x[i].x, (double)x[i].y, (double)x[i].z);
	}
	free(s->index);
	free(s->x);
	s->index = NULL;
	s->x = NULL;
}

/* Steps a world at most `max_steps` times while the work stays under a budget of constraint
 * projections, so that an input asking for 1000 substeps of 10000 iterations is loaded and
 * checked but does not turn into a timeout. Pinned particles are compared across each step
 * after the first (a pin with a target moves during the first), finiteness after every step. */
/* One step. A force-based method may refuse a world (a family it has no force model for, or
 * under projective dynamics more large constraints than its low-rank update takes): the step then
 * returns PBD_ERR_INVALID_ARGUMENT, says why and leaves the world as it was. Anything else than
 * PBD_OK or that refusal fails. Returns whether the step ran. */
static inline bool fuzz_step_once(pbd_world* w) {
	const uint64_t before = pbd_world_hash(w);
	const pbd_status st = pbd_world_step(w);
	if (st == PBD_OK) return true;
	const char* e = pbd_world_last_error(w);
	if (pbd_world_get_def(w).method != PBD_METHOD_POSITION_BASED && st == PBD_ERR_INVALID_ARGUMENT &&
	    (strstr(e, "no force model") || strstr(e, "constraints over more than"))) {
		if (pbd_world_hash(w) != before) fuzz_fail("a refused step moved the world: %s", e);
		return false;
	}
	fuzz_fail("pbd_world_step failed: %s", e);
	return false;
}

static inline void fuzz_step_checked(pbd_world* w, int max_steps) {
	const pbd_world_def d = pbd_world_get_def(w);
	const double per_step = (double)d.substeps * (double)d.iterations *
	                            ((double)pbd_world_distance_count(w) +
	                             (double)pbd_world_collider_count(w) * (double)pbd_world_particle_count(w)) +
	                        (double)d.substeps * (double)pbd_world_particle_count(w);
	const double budget = 2e6;
	for (int s = 0; s < max_steps && (double)(s + 1) * per_step <= budget; ++s) {
		fuzz_pins pins = {0, NULL, NULL};
		if (s > 0) fuzz_pins_take(&pins, w, NULL);
		const bool ran = fuzz_step_once(w);
		fuzz_check_finite(w);
		if (s > 0) fuzz_pins_check(&pins, w);
		if (!ran) break;
	}
}

#endif
