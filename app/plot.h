/* Plots of a run's metrics.csv (energy, strain, contacts over time) as PNG files, drawn by
 * gnuplot run as a child process. The CSV is checked first (header, field counts, finite
 * numbers), so gnuplot only ever sees a well-formed table; paths reach gnuplot as arguments of
 * `gnuplot -c`, never inside the script text. Documented in docs/plots.md. */
#ifndef PBD_APP_PLOT_H
#define PBD_APP_PLOT_H

#include <stdbool.h>
#include <stdio.h>

#include "pbd/scene.h"

/// The files written into the output folder, in this order.
#define PLOT_ENERGY_PNG   "energy.png"
#define PLOT_STRAIN_PNG   "strain.png"
#define PLOT_CONTACTS_PNG "contacts.png"

/// What was plotted.
typedef struct plot_result {
	long rows;          ///< data rows of the CSV (frames)
	bool strain_log;    ///< the strain plot has a logarithmic axis
	double seconds;     ///< wall time of the whole call (checking the CSV, running gnuplot)
	char out_dir[4096]; ///< the folder the PNG files went into
} plot_result;

/// Checks `csv_path` (a metrics.csv of `pbd run`) and writes energy.png, strain.png and
/// contacts.png into `out_dir` (created if needed; NULL: the CSV's folder). On failure returns
/// false with one line in err: a missing or unreadable file, a header without the expected
/// columns, a bad row ("file:line: ..."), a CSV with no data row, gnuplot missing from PATH, or
/// gnuplot failing (its exit status and its last error line).
bool plot_metrics(const char* csv_path, const char* out_dir, plot_result* result, scene_error* err);

/// `pbd plot CSV [-o DIR] [-q]`; argv[0] is "plot". Returns the exit status (see cli_args.h).
int plot_main(int argc, char** argv);

/// The text of 'pbd plot --help'.
void plot_help(FILE* fp);

/// For `pbd run --plot`: plots the run's metrics.csv into its folder and, unless quiet, prints
/// the summary's plot line on stdout (its time apart from the simulation's and output's).
bool plot_after_run(const char* csv_path, const char* dir, bool quiet, scene_error* err);

#endif
