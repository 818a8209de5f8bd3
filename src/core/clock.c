/* The library's clock, for the step's profile and the pool's idle spin only: nothing the simulation
 * computes reads it. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "core/profile.h"

uint64_t pbd_clock_ns(void) {
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void pbd_profile_publish(const pbd_profile_acc* acc, uint64_t step_ns, pbd_profile* out) {
	const double ms = 1e-6;
	out->step = (double)step_ns * ms;
	out->prepare = (double)acc->phase[PBD_PHASE_PREPARE] * ms;
	out->predict = (double)acc->phase[PBD_PHASE_PREDICT] * ms;
	out->collide = (double)acc->phase[PBD_PHASE_COLLIDE] * ms;
	out->hierarchy = (double)acc->phase[PBD_PHASE_HIERARCHY] * ms;
	out->contacts = (double)acc->phase[PBD_PHASE_CONTACTS] * ms;
	out->finish = (double)acc->phase[PBD_PHASE_FINISH] * ms;
	out->method = (double)acc->phase[PBD_PHASE_METHOD] * ms;
	out->stats = (double)acc->phase[PBD_PHASE_STATS] * ms;
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		uint64_t ns = 0;
		for (int k = 0; k < PBD_MAX_THREADS; ++k) ns += acc->family[k][t];
		out->family[t] = (double)ns * ms;
	}
}
