/* The files of `pbd compare`: compare.csv, one row per method per frame, and summary.csv, one
 * row per method. Their columns are documented in docs/compare.md; the enums give the 1-based
 * column numbers gnuplot reads them by. */
#ifndef PBD_APP_COMPARE_CSV_H
#define PBD_APP_COMPARE_CSV_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pbd/pbd.h"

#define COMPARE_CSV     "compare.csv"
#define COMPARE_SUMMARY "summary.csv"

/// Longest method name ("projective_dynamics") and its terminator, with room to spare.
#define COMPARE_NAME_MAX 24

/// Columns of compare.csv.
enum {
	COMPARE_COL_METHOD = 1,
	COMPARE_COL_FRAME,
	COMPARE_COL_TIME,
	COMPARE_COL_MEAN_STRAIN,
	COMPARE_COL_MAX_STRAIN,
	COMPARE_COL_KINETIC,
	COMPARE_COL_POTENTIAL,
	COMPARE_COL_ELASTIC,
	COMPARE_COL_TOTAL,
	COMPARE_COL_STEP_MS,
	COMPARE_COL_DIVERGED,
	COMPARE_COL_LINEAR_RESIDUAL,
	COMPARE_COL_LINEAR_ITERATIONS,
	COMPARE_COL_CONTACTS
};

/// Bytes a row of compare.csv takes at most: the name, 9 numbers of 24 characters (%.17g at its
/// widest), the frame, two counts and the commas.
#define COMPARE_CSV_ROW_MAX (COMPARE_NAME_MAX + 9 * 25 + 4 * 11 + 16)

void compare_csv_header(FILE* fp);

/// One frame of one method. step_ms is the wall time of the step that reached this frame, NaN
/// for frame 0 (written empty); `diverged` marks a frame at or after the method's first diverged
/// step. A number that is not finite is written empty, and so are the elastic and total energy
/// when the world has none defined (PBD stiffness).
void compare_csv_row(FILE* fp, const char* method, int frame, const pbd_stats* st, double step_ms, bool diverged);

/// What one method's run came to.
typedef struct compare_result {
	char method[COMPARE_NAME_MAX];
	int steps;                ///< steps taken
	double step_seconds;      ///< wall time of those steps, the simulation alone
	double simulated;         ///< simulated seconds they covered
	double final_mean_strain; ///< at the last frame reached
	double max_strain;        ///< the largest max_strain of any frame
	double energy_drift;      ///< (E_end - E_0) / |E_0| of the total energy; NaN when undefined
	char note[96];            ///< why the drift is no test of conservation ("damped;contacts"), or why it is missing
	uint64_t diverged_steps;
	int first_diverged; ///< frame, -1 when none
	bool failed;
	char status[448]; ///< "ok", "diverged at frame F", "failed: ..."
} compare_result;

/// Columns of summary.csv.
enum {
	COMPARE_SUM_METHOD = 1,
	COMPARE_SUM_STEPS,
	COMPARE_SUM_MS_PER_STEP,
	COMPARE_SUM_MS_PER_SIMULATED_SECOND,
	COMPARE_SUM_FINAL_MEAN_STRAIN,
	COMPARE_SUM_MAX_STRAIN,
	COMPARE_SUM_ENERGY_DRIFT,
	COMPARE_SUM_ENERGY_NOTE,
	COMPARE_SUM_DIVERGED_STEPS,
	COMPARE_SUM_STATUS
};

void compare_summary_header(FILE* fp);

/// One method; the note and the status are quoted when they hold a comma or a quote.
void compare_summary_row(FILE* fp, const compare_result* r);

/// ms per step and per simulated second; NaN when no step was taken.
double compare_ms_per_step(const compare_result* r);
double compare_ms_per_simulated_second(const compare_result* r);

#endif
