/* The clock the `pbd` program times its work with: CLOCK_MONOTONIC, so that a change of the
 * system time during a run never shows up as a step's cost. The including file defines
 * _POSIX_C_SOURCE (or _XOPEN_SOURCE) before its first include, as clock_gettime needs. */
#ifndef PBD_APP_CLI_CLOCK_H
#define PBD_APP_CLI_CLOCK_H

#include <time.h>

/* Seconds from an arbitrary start; only differences mean anything. */
static inline double cli_now_seconds(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
