/* `pbd compare --plot`: strain, energy and cost of the methods through gnuplot. */
#define _POSIX_C_SOURCE 200809L
#include "compare_plot.h"

#include <math.h>
#include <stdio.h>

#include "compare_csv.h"
#include "gnuplot.h"

/* The strain axis is logarithmic when its positive values span this ratio (two decades) or more,
 * as for `pbd plot`. */
#define COMPARE_LOG_RATIO 100.0

typedef struct script_input {
	const compare_plot_input* in;
	bool strain_log;
} script_input;

/* One curve per method over time: column `col` of compare.csv for this method's rows before it
 * diverged. The names are checked words ([a-z_]), the only text from outside in the script. */
static void plot_per_method(FILE* fp, const compare_plot_input* in, int col, bool positive, bool energy) {
	fputs("plot ", fp);
	for (int i = 0; i < in->count; ++i) {
		const compare_plot_method* m = &in->methods[i];
		/* A single point draws no line: show it. */
		const char* style = m->valid_rows < 2 ? "linespoints pointtype 7 pointsize 1.5" : "lines";
		char title[96];
		if (energy && !m->energy_defined)
			snprintf(title, sizeof title, "%s (no energy: PBD stiffness)", m->name);
		else if (m->diverged_frame >= 0)
			snprintf(title, sizeof title, "%s (diverged at frame %d; cut there)", m->name, m->diverged_frame);
		else
			snprintf(title, sizeof title, "%s", m->name);
		char positive_test[32] = "";
		if (positive) snprintf(positive_test, sizeof positive_test, " && column(%d) > 0", col);
		fprintf(fp,
		        "%sARG1 skip 1 using %d:(strcol(%d) eq '%s' && column(%d) == 0%s ? column(%d) : NaN) with %s "
		        "linewidth 2 title '%s'",
		        i ? ", \\\n     " : "", COMPARE_COL_TIME, COMPARE_COL_METHOD, m->name, COMPARE_COL_DIVERGED,
		        positive_test, col, style, title);
	}
	fputc('\n', fp);
}

/* gnuplot refuses a plot whose points are all undefined: an empty frame with a word instead. */
static void plot_nothing(FILE* fp, const char* why) {
	fprintf(fp,
	        "set label 1 '%s' at graph 0.5, 0.5 center\n"
	        "set xrange [0:1]\n"
	        "set yrange [0:1]\n"
	        "plot -1 notitle\n"
	        "unset label 1\n"
	        "set xrange [*:*]\n",
	        why);
}

static void write_script(FILE* fp, const void* ctx) {
	const script_input* si = ctx;
	const compare_plot_input* in = si->in;
	fputs("# Written by pbd compare; ARG1 = compare.csv, ARG2 = summary.csv, ARG3..ARG5 = the PNG files, "
	      "ARG6 = the title.\n",
	      fp);
	gnuplot_write_preamble(fp);
	/* Below the plot, the method names with their notes take the width they need. */
	fputs("set key below\n"
	      "set xlabel 'time (s)'\n",
	      fp);
	if (si->strain_log) /* Zeros have no place on a log axis: they are left out. */
		fputs("set title ARG6.': mean strain (log scale, zeros left out)'\n"
		      "set logscale y\n"
		      "set format y '%g'\n",
		      fp);
	else
		fputs("set title ARG6.': mean strain'\n"
		      "set yrange [0:*]\n",
		      fp);
	fputs("set ylabel 'mean |length - rest| / rest'\n"
	      "set output ARG3\n",
	      fp);
	plot_per_method(fp, in, COMPARE_COL_MEAN_STRAIN, si->strain_log, false);
	fputs("unset output\n"
	      "unset logscale y\n"
	      "set format y '% h'\n"
	      "set yrange [*:*]\n"
	      "set title ARG6.': total energy (kinetic + potential + elastic)'\n"
	      "set ylabel 'energy (J)'\n"
	      "set output ARG4\n",
	      fp);
	bool any_energy = false, any_cost = false;
	for (int i = 0; i < in->count; ++i) {
		any_energy = any_energy || in->methods[i].energy_defined;
		any_cost = any_cost || in->methods[i].has_cost;
	}
	if (any_energy)
		plot_per_method(fp, in, COMPARE_COL_TOTAL, false, true);
	else
		plot_nothing(fp, "no energy defined (PBD stiffness)");
	/* The cost: one bar per method that took a step, labelled with its value. */
	fputs("unset output\n"
	      "set title ARG6.': cost of a step (simulation alone)'\n"
	      "set xlabel 'method'\n"
	      "set ylabel 'ms per step'\n"
	      "unset key\n"
	      "set grid noxtics ytics\n"
	      "set output ARG5\n",
	      fp);
	if (!any_cost) {
		plot_nothing(fp, "no method took a step");
	} else {
		fprintf(fp,
		        "set style fill solid 0.6 border -1\n"
		        "set boxwidth 0.6\n"
		        "set xrange [-0.6:%d.4]\n"
		        "set yrange [0:*]\n"
		        "set offsets 0, 0, graph 0.08, 0\n"
		        "%s"
		        "plot ARG2 skip 1 using 0:%d:xtic(%d) with boxes, \\\n"
		        "     ARG2 skip 1 using 0:%d:(sprintf('%%.4g', column(%d))) with labels offset 0,0.8\n",
		        in->count - 1, in->count > 4 ? "set xtics rotate by -20\n" : "", COMPARE_SUM_MS_PER_STEP,
		        COMPARE_SUM_METHOD, COMPARE_SUM_MS_PER_STEP, COMPARE_SUM_MS_PER_STEP);
	}
	fputs("unset output\n", fp);
}

bool compare_plot(const compare_plot_input* in, bool* strain_log, pbd_scene_error* err) {
	char csv[4200], summary[4200], pngs[3][4200];
	static const char* const names[3] = {COMPARE_STRAIN_PNG, COMPARE_ENERGY_PNG, COMPARE_COST_PNG};
	bool fits = gnuplot_literal_path(csv, sizeof csv, in->dir, COMPARE_CSV) &&
	            gnuplot_literal_path(summary, sizeof summary, in->dir, COMPARE_SUMMARY);
	for (int i = 0; i < 3; ++i) fits = fits && gnuplot_literal_path(pngs[i], sizeof pngs[i], in->dir, names[i]);
	if (!fits) {
		pbd_scene_error_set(err, "%s: path too long", in->dir);
		return false;
	}
	char gnuplot[4200];
	if (!gnuplot_find(gnuplot, sizeof gnuplot, err)) return false;
	*strain_log =
	    in->strain_max > 0 && isfinite(in->strain_min) && in->strain_max >= COMPARE_LOG_RATIO * in->strain_min;
	const script_input si = {in, *strain_log};
	const char* const args[] = {csv, summary, pngs[0], pngs[1], pngs[2], in->title};
	const char* const outputs[] = {pngs[0], pngs[1], pngs[2]};
	return gnuplot_draw(gnuplot, write_script, &si, args, 6, outputs, 3, err);
}
