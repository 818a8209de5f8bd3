/* The step's profile (pbd_world_def.profile): nanoseconds per phase, summed while the step runs
 * and published as milliseconds in pbd_stats.profile when it ends. Every clock read is behind
 * the def's flag, so a world that does not profile reads no clock. */
#ifndef PBD_PROFILE_INTERNAL_H
#define PBD_PROFILE_INTERNAL_H

#include <stdint.h>

#include "pbd/types.h"

typedef enum pbd_phase {
	PBD_PHASE_PREPARE = 0,
	PBD_PHASE_PREDICT,
	PBD_PHASE_COLLIDE,
	PBD_PHASE_HIERARCHY,
	PBD_PHASE_CONTACTS,
	PBD_PHASE_FINISH,
	PBD_PHASE_METHOD,
	PBD_PHASE_STATS,
	PBD_PHASE_COUNT
} pbd_phase;

typedef struct pbd_profile_acc {
	uint64_t phase[PBD_PHASE_COUNT];
	uint64_t family[PBD_MAX_THREADS][PBD_FAMILY_COUNT]; /* per thread, added up when published */
} pbd_profile_acc;

/* Nanoseconds of a monotonic clock from an arbitrary start (clock.c): a change of the system
 * time during a step never shows up as its cost. */
uint64_t pbd_clock_ns(void);

/* The published profile: acc converted to ms, with the step's total and what it ran. */
void pbd_profile_publish(const pbd_profile_acc* acc, uint64_t step_ns, pbd_profile* out);

#endif
