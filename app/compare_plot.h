/* `pbd compare --plot`: the comparison's CSV files drawn by gnuplot as three PNG files, one line
 * (or bar) per method: mean strain and total energy over simulated time from compare.csv, and
 * the cost of a step from summary.csv. A diverged method's lines stop at the frame it diverged:
 * what follows is not a simulation result. Documented in docs/compare.md. */
#ifndef PBD_APP_COMPARE_PLOT_H
#define PBD_APP_COMPARE_PLOT_H

#include <stdbool.h>

#include "pbd/scene.h"

/// The files written into the comparison's folder.
#define COMPARE_STRAIN_PNG "strain.png"
#define COMPARE_ENERGY_PNG "energy.png"
#define COMPARE_COST_PNG   "cost.png"

/// One method as the plots label it.
typedef struct compare_plot_method {
	const char* name;    ///< as in the CSV's method column: [a-z_] only
	long valid_rows;     ///< rows of compare.csv before it diverged (all of them when it did not)
	int diverged_frame;  ///< the first diverged frame, -1 when none
	bool energy_defined; ///< its total energy column has numbers
	bool has_cost;       ///< summary.csv gives its ms per step (it took a step)
} compare_plot_method;

typedef struct compare_plot_input {
	const char* dir;   ///< the folder of compare.csv and summary.csv, where the PNG files go
	const char* title; ///< the scene's name
	int count;
	const compare_plot_method* methods;
	double strain_min; ///< smallest positive mean strain of the valid rows, +inf when none
	double strain_max; ///< largest mean strain of the valid rows
} compare_plot_input;

/// Draws strain.png, energy.png and cost.png. *strain_log gets whether the strain axis is
/// logarithmic (the values span two decades or more). False with one line in err: gnuplot
/// missing from PATH or failing.
bool compare_plot(const compare_plot_input* in, bool* strain_log, scene_error* err);

#endif
