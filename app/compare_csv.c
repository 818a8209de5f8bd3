/* Writers of compare.csv and summary.csv. */
#include "compare_csv.h"

#include <math.h>
#include <string.h>

/* A number as metrics.csv writes it (reads back to the same double), or nothing. */
static void put_number(FILE* fp, double v) {
	if (isfinite(v)) fprintf(fp, "%.17g", v);
}

/* RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled. */
static void put_text(FILE* fp, const char* s) {
	if (!s[strcspn(s, ",\"\r\n")]) {
		fputs(s, fp);
		return;
	}
	fputc('"', fp);
	for (; *s; ++s) {
		if (*s == '"') fputc('"', fp);
		fputc(*s, fp);
	}
	fputc('"', fp);
}

void compare_csv_header(FILE* fp) {
	fputs("method,frame,time,mean_strain,max_strain,kinetic_energy,potential_energy,elastic_energy,total_energy,"
	      "step_ms,diverged,linear_residual,linear_iterations,contacts\n",
	      fp);
}

void compare_csv_row(FILE* fp, const char* method, int frame, const pbd_stats* st, double step_ms, bool diverged) {
	fprintf(fp, "%s,%d,", method, frame);
	const double total = st->kinetic_energy + st->potential_energy + st->elastic_energy;
	const double numbers[] = {st->time,
	                          st->mean_strain,
	                          st->max_strain,
	                          st->kinetic_energy,
	                          st->potential_energy,
	                          st->energy_defined ? st->elastic_energy : (double)NAN,
	                          st->energy_defined ? total : (double)NAN,
	                          step_ms};
	for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; ++i) {
		put_number(fp, numbers[i]);
		fputc(',', fp);
	}
	fprintf(fp, "%d,", diverged ? 1 : 0);
	put_number(fp, st->linear_residual);
	fprintf(fp, ",%u,%u\n", st->linear_iterations, st->contacts);
}

double compare_ms_per_step(const compare_result* r) {
	return r->steps > 0 ? 1e3 * r->step_seconds / r->steps : (double)NAN;
}

double compare_ms_per_simulated_second(const compare_result* r) {
	return r->steps > 0 && r->simulated > 0 ? 1e3 * r->step_seconds / r->simulated : (double)NAN;
}

void compare_summary_header(FILE* fp) {
	fputs("method,steps,ms_per_step,ms_per_simulated_second,final_mean_strain,max_strain,energy_drift,energy_note,"
	      "diverged_steps,status\n",
	      fp);
}

void compare_summary_row(FILE* fp, const compare_result* r) {
	fprintf(fp, "%s,%d,", r->method, r->steps);
	const double numbers[] = {compare_ms_per_step(r), compare_ms_per_simulated_second(r), r->final_mean_strain,
	                          r->max_strain, r->energy_drift};
	for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; ++i) {
		put_number(fp, numbers[i]);
		fputc(',', fp);
	}
	put_text(fp, r->note);
	fprintf(fp, ",%llu,", (unsigned long long)r->diverged_steps);
	put_text(fp, r->status);
	fputc('\n', fp);
}
