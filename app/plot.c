/* `pbd plot` and `pbd run --plot`: metrics.csv to PNG through gnuplot. */
#define _XOPEN_SOURCE 700 /* POSIX 2008 with realpath */
#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_args.h"
#include "cli_clock.h"
#include "gnuplot.h"
#include "output.h"

/* The strain axis is logarithmic when its positive values span this ratio (two decades) or more. */
#define PLOT_LOG_RATIO 100.0

/* A data line longer than this is not a metrics row (a row of `pbd run` is under 400 bytes). */
#define PLOT_LINE_MAX 65536

/* The columns the plots need, by name; their positions are read from the header. */
enum {
	COL_TIME,
	COL_KINETIC,
	COL_POTENTIAL,
	COL_ELASTIC,
	COL_TOTAL,
	COL_MAX_STRAIN,
	COL_MEAN_STRAIN,
	COL_CONTACTS,
	COL_COUNT
};
static const char* const column_names[COL_COUNT] = {"time",           "kinetic_energy", "potential_energy",
                                                    "elastic_energy", "total_energy",   "max_strain",
                                                    "mean_strain",    "contacts"};

/* A header has at most this many columns. */
#define PLOT_MAX_FIELDS 256

/* What the check of the CSV learned. */
typedef struct metrics_info {
	int fields;                   /* columns of the header */
	char* header;                 /* the header line, split at the commas */
	char* names[PLOT_MAX_FIELDS]; /* the name of each column, for messages */
	int col[COL_COUNT];           /* 1-based column of each needed quantity, as gnuplot counts */
	long rows;                    /* data rows */
	double strain_max;            /* largest max_strain / mean_strain */
	double strain_min;            /* smallest positive max_strain / mean_strain, +inf if none */
	double contacts_max;          /* largest contacts value */
} metrics_info;

/* Reads one line without its end (\n or \r\n) into buf. Returns 1 for a line, 0 at the end of
 * the file, -1 for a line too long or holding a NUL byte (*why says which), -2 on a read error. */
static int read_line(FILE* fp, char* buf, size_t size, size_t* len, const char** why) {
	size_t n = 0;
	int ch;
	while ((ch = getc(fp)) != EOF && ch != '\n') {
		if (ch == '\0') {
			*why = "a NUL byte (not a text file)";
			return -1;
		}
		if (n + 1 >= size) {
			*why = "line too long (not a metrics row)";
			return -1;
		}
		buf[n++] = (char)ch;
	}
	if (ch == EOF) {
		if (ferror(fp)) return -2;
		if (n == 0) return 0;
	}
	if (n > 0 && buf[n - 1] == '\r') --n;
	buf[n] = '\0';
	*len = n;
	return 1;
}

/* Splits buf in place at the commas; returns the number of fields (at most max; more are
 * counted but not stored). */
static int split_fields(char* buf, char** fields, int max) {
	int n = 0;
	char* p = buf;
	for (;;) {
		char* comma = strchr(p, ',');
		if (n < max) fields[n] = p;
		++n;
		if (!comma) break;
		*comma = '\0';
		p = comma + 1;
	}
	return n;
}

/* A decimal number as `pbd run` writes it (digits, sign, point, exponent), read whole by
 * strtod. Returns NULL when fine, or what is wrong with it. */
static const char* parse_number(const char* s, double* out) {
	if (!*s) return "empty";
	char* end = NULL;
	double v = strtod(s, &end);
	if (end == s || *end != '\0') return "not a number";
	if (!isfinite(v)) return "not a finite number";
	/* strtod also reads hexadecimal, "infinity" and "nan": gnuplot does not read them the same way. */
	for (const char* p = s; *p; ++p)
		if (!strchr("0123456789+-.eE", *p)) return "not a decimal number";
	*out = v;
	return NULL;
}

static bool check_header(const char* line, const char* path, metrics_info* info, pbd_scene_error* err) {
	info->header = strdup(line);
	if (!info->header) {
		pbd_scene_error_set(err, "%s: out of memory", path);
		return false;
	}
	char** fields = info->names;
	int n = split_fields(info->header, fields, PLOT_MAX_FIELDS);
	if (n > PLOT_MAX_FIELDS) {
		pbd_scene_error_set(err, "%s:1: not a metrics.csv header: %d columns (at most %d)", path, n, PLOT_MAX_FIELDS);
		return false;
	}
	info->fields = n;
	for (int c = 0; c < COL_COUNT; ++c) {
		info->col[c] = 0;
		for (int i = 0; i < n; ++i) {
			if (strcmp(fields[i], column_names[c]) != 0) continue;
			if (info->col[c]) {
				pbd_scene_error_set(err, "%s:1: not a metrics.csv header: column '%s' appears twice", path,
				                    column_names[c]);
				return false;
			}
			info->col[c] = i + 1;
		}
		if (!info->col[c]) {
			pbd_scene_error_set(err, "%s:1: not a metrics.csv header: no column '%s'", path, column_names[c]);
			return false;
		}
	}
	return true;
}

static bool check_row(char* line, long lineno, const char* path, metrics_info* info, pbd_scene_error* err) {
	char* fields[PLOT_MAX_FIELDS];
	if (!*line) {
		pbd_scene_error_set(err, "%s:%ld: empty line", path, lineno);
		return false;
	}
	int n = split_fields(line, fields, PLOT_MAX_FIELDS);
	if (n != info->fields) {
		pbd_scene_error_set(err, "%s:%ld: %d fields, the header has %d", path, lineno, n, info->fields);
		return false;
	}
	double values[PLOT_MAX_FIELDS];
	for (int i = 0; i < n; ++i) {
		/* `pbd run` leaves the elastic and total energy empty where no energy is defined. */
		const bool may_be_missing = i + 1 == info->col[COL_ELASTIC] || i + 1 == info->col[COL_TOTAL];
		if (may_be_missing && !*fields[i]) {
			values[i] = 0;
			continue;
		}
		const char* why = parse_number(fields[i], &values[i]);
		if (why) {
			pbd_scene_error_set(err, "%s:%ld: column %d (%.40s): '%.40s' is %s", path, lineno, i + 1, info->names[i],
			                    fields[i], why);
			return false;
		}
	}
	const double strains[2] = {values[info->col[COL_MAX_STRAIN] - 1], values[info->col[COL_MEAN_STRAIN] - 1]};
	for (int k = 0; k < 2; ++k) {
		if (strains[k] > info->strain_max) info->strain_max = strains[k];
		if (strains[k] > 0 && strains[k] < info->strain_min) info->strain_min = strains[k];
	}
	const double contacts = values[info->col[COL_CONTACTS] - 1];
	if (contacts > info->contacts_max) info->contacts_max = contacts;
	return true;
}

/* Reads the whole CSV; gnuplot is started only for a file that passes. */
/* Opens the CSV only when it is a regular file. O_NONBLOCK, and the type taken from the
 * descriptor: opening a FIFO without a writer would otherwise wait forever, and /dev/zero would be
 * read to the end of the line bound. */
static FILE* open_csv(const char* path, pbd_scene_error* err) {
	const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		pbd_scene_error_set(err, "%s: cannot open: %s", path, strerror(errno));
		if (fd >= 0) close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			pbd_scene_error_set(err, "%s: is a folder, not a metrics.csv file", path);
		else
			pbd_scene_error_set(err, "%s: cannot read %s, only a regular file", path,
			                    S_ISFIFO(st.st_mode)                         ? "a FIFO"
			                    : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
			                                                                 : "a special file");
		close(fd);
		return NULL;
	}
	const int flags = fcntl(fd, F_GETFL);
	if (flags >= 0) (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	FILE* fp = fdopen(fd, "rb");
	if (!fp) {
		pbd_scene_error_set(err, "%s: cannot open: %s", path, strerror(errno));
		close(fd);
	}
	return fp;
}

static bool check_csv(const char* path, metrics_info* info, pbd_scene_error* err) {
	FILE* fp = open_csv(path, err);
	if (!fp) return false;
	char* line = malloc(PLOT_LINE_MAX);
	if (!line) {
		fclose(fp);
		pbd_scene_error_set(err, "%s: out of memory", path);
		return false;
	}
	memset(info, 0, sizeof *info);
	info->strain_min = INFINITY;
	bool ok = false;
	long lineno = 0;
	for (;;) {
		size_t len = 0;
		const char* why = "";
		int r = read_line(fp, line, PLOT_LINE_MAX, &len, &why);
		if (r == 0) break;
		++lineno;
		if (r == -2) {
			pbd_scene_error_set(err, "%s: cannot read: %s", path, strerror(errno));
			goto done;
		}
		if (r == -1) {
			pbd_scene_error_set(err, "%s:%ld: %s", path, lineno, why);
			goto done;
		}
		if (lineno == 1) {
			if (!check_header(line, path, info, err)) goto done;
		} else {
			if (!check_row(line, lineno, path, info, err)) goto done;
			info->rows++;
		}
	}
	if (lineno == 0) {
		pbd_scene_error_set(err, "%s: empty file (expected the metrics.csv header)", path);
		goto done;
	}
	if (info->rows == 0) {
		pbd_scene_error_set(err, "%s: no data rows, only the header: nothing to plot", path);
		goto done;
	}
	ok = true;
done:
	free(line);
	fclose(fp);
	free(info->header);
	info->header = NULL;
	return ok;
}

/* The folder part of a path: "a/b/c.csv" -> "a/b", "c.csv" -> ".", "/c.csv" -> "/". */
static void folder_of(const char* path, char* out, size_t size) {
	const char* slash = strrchr(path, '/');
	if (!slash)
		snprintf(out, size, ".");
	else if (slash == path)
		snprintf(out, size, "/");
	else
		snprintf(out, size, "%.*s", (int)(slash - path), path);
	/* "a//b" or "a/" leave trailing slashes. */
	for (size_t n = strlen(out); n > 1 && out[n - 1] == '/'; --n) out[n - 1] = '\0';
}

/* The plots' title: the name of the folder holding the CSV (the scene's name for a run's output). */
static void title_of(const char* csv_path, char* out, size_t size) {
	char* real = realpath(csv_path, NULL);
	const char* name = "metrics";
	char folder[PATH_MAX];
	if (real) {
		folder_of(real, folder, sizeof folder);
		const char* slash = strrchr(folder, '/');
		const char* base = slash ? slash + 1 : folder;
		if (*base) name = base;
	}
	size_t n = strlen(name);
	if (n >= size) n = size - 1; /* a long name only shortens the title */
	memcpy(out, name, n);
	out[n] = '\0';
	free(real);
}

/* What the script is made from. */
typedef struct plot_script {
	const metrics_info* info;
	bool strain_log;
} plot_script;

/* The gnuplot script. Only numbers are written into it; the paths and the title arrive as
 * ARG1..ARG5 (`gnuplot -c script csv energy.png strain.png contacts.png title`). */
static void write_script(FILE* fp, const void* ctx) {
	const plot_script* ps = ctx;
	const metrics_info* info = ps->info;
	const bool strain_log = ps->strain_log;
	const int t = info->col[COL_TIME];
	/* A single row draws no line: show its points. */
	const char* style = info->rows < 2 ? "linespoints pointtype 7 pointsize 1.5" : "lines";
	fputs("# Written by pbd plot; ARG1 = metrics.csv, ARG2..ARG4 = the PNG files, ARG5 = the title.\n", fp);
	gnuplot_write_preamble(fp);
	fputs("set xlabel 'time (s)'\n"
	      "set xrange [*:*]\n",
	      fp);
	fprintf(fp,
	        "set title ARG5.': energy'\n"
	        "set ylabel 'energy (J)'\n"
	        "set output ARG2\n"
	        "plot ARG1 skip 1 using %d:%d with %s linewidth 2 title 'kinetic', \\\n"
	        "     ARG1 skip 1 using %d:%d with %s linewidth 2 title 'potential', \\\n"
	        "     ARG1 skip 1 using %d:%d with %s linewidth 2 title 'elastic', \\\n"
	        "     ARG1 skip 1 using %d:%d with %s linewidth 2 dashtype 2 title 'total'\n"
	        "unset output\n",
	        t, info->col[COL_KINETIC], style, t, info->col[COL_POTENTIAL], style, t, info->col[COL_ELASTIC], style, t,
	        info->col[COL_TOTAL], style);
	const int mx = info->col[COL_MAX_STRAIN], mean = info->col[COL_MEAN_STRAIN];
	if (strain_log) /* Zeros (frame 0, a constraint at rest) have no place on a log axis: they are left out. */
		fprintf(fp,
		        "set title ARG5.': strain (log scale, zeros left out)'\n"
		        "set logscale y\n"
		        "set format y '%%g'\n"
		        "set ylabel '|length - rest| / rest'\n"
		        "set output ARG3\n"
		        "plot ARG1 skip 1 using %d:(column(%d) > 0 ? column(%d) : NaN) with %s linewidth 2 title 'max', \\\n"
		        "     ARG1 skip 1 using %d:(column(%d) > 0 ? column(%d) : NaN) with %s linewidth 2 title 'mean'\n"
		        "unset output\n"
		        "unset logscale y\n"
		        "set format y '%% h'\n",
		        t, mx, mx, style, t, mean, mean, style);
	else
		fprintf(fp,
		        "set title ARG5.': strain'\n"
		        "set ylabel '|length - rest| / rest'\n"
		        "set yrange [0:*]\n"
		        "set output ARG3\n"
		        "plot ARG1 skip 1 using %d:%d with %s linewidth 2 title 'max', \\\n"
		        "     ARG1 skip 1 using %d:%d with %s linewidth 2 title 'mean'\n"
		        "unset output\n",
		        t, mx, style, t, mean, style);
	/* Contacts are counts: steps, from 0, with room above when there are none at all. */
	fprintf(fp,
	        "set title ARG5.': contacts'\n"
	        "set ylabel 'particles in contact'\n"
	        "set yrange [0:%s]\n"
	        "set output ARG4\n"
	        "plot ARG1 skip 1 using %d:%d with %s linewidth 2 title 'contacts'\n"
	        "unset output\n",
	        info->contacts_max > 0 ? "*" : "1", t, info->col[COL_CONTACTS], info->rows < 2 ? style : "steps");
}

bool plot_metrics(const char* csv_path, const char* out_dir, plot_result* result, pbd_scene_error* err) {
	const double start = cli_now_seconds();
	memset(result, 0, sizeof *result);
	metrics_info info;
	if (!check_csv(csv_path, &info, err)) return false;

	if (out_dir) {
		snprintf(result->out_dir, sizeof result->out_dir, "%s", out_dir);
		for (size_t n = strlen(result->out_dir); n > 1 && result->out_dir[n - 1] == '/'; --n)
			result->out_dir[n - 1] = '\0';
	} else {
		folder_of(csv_path, result->out_dir, sizeof result->out_dir);
	}
	char csv_arg[4200], pngs[3][4200];
	static const char* const names[3] = {PLOT_ENERGY_PNG, PLOT_STRAIN_PNG, PLOT_CONTACTS_PNG};
	bool fits = gnuplot_literal_path(csv_arg, sizeof csv_arg, csv_path, NULL);
	for (int i = 0; i < 3; ++i) fits = fits && gnuplot_literal_path(pngs[i], sizeof pngs[i], result->out_dir, names[i]);
	if (!fits) {
		pbd_scene_error_set(err, "%s: path too long", result->out_dir);
		return false;
	}

	char gnuplot[4200];
	if (!gnuplot_find(gnuplot, sizeof gnuplot, err)) return false;
	if (out_dir && !out_make_dir(result->out_dir, err)) return false;

	result->rows = info.rows;
	result->strain_log =
	    info.strain_max > 0 && isfinite(info.strain_min) && info.strain_max >= PLOT_LOG_RATIO * info.strain_min;
	char title[256];
	title_of(csv_path, title, sizeof title);
	const plot_script ps = {&info, result->strain_log};
	const char* const args[] = {csv_arg, pngs[0], pngs[1], pngs[2], title};
	const char* const outputs[] = {pngs[0], pngs[1], pngs[2]};
	if (!gnuplot_draw(gnuplot, write_script, &ps, args, 5, outputs, 3, err)) return false;
	result->seconds = cli_now_seconds() - start;
	return true;
}

void plot_help(FILE* fp) {
	fputs("Usage: pbd plot CSV [options]\n"
	      "\n"
	      "Draws the metrics.csv of a run (pbd run) as three PNG plots over simulated time:\n"
	      "  " PLOT_ENERGY_PNG "    kinetic, potential, elastic and total energy\n"
	      "  " PLOT_STRAIN_PNG "    max and mean strain (log scale when they span two decades or more)\n"
	      "  " PLOT_CONTACTS_PNG "  particles in contact with a collider\n"
	      "The CSV is checked first: a header with the metrics columns, then rows of finite decimal\n"
	      "numbers, at least one. The plots are drawn by gnuplot (Debian package gnuplot-nox), which\n"
	      "must be on PATH. Existing files of these names are replaced.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --out DIR          folder for the PNG files, created if needed (default: the CSV's)\n"
	      "  -q, --quiet            print nothing on success\n"
	      "  -h, --help             this text\n"
	      "\n"
	      "Exit status: 0 success, 1 bad CSV, gnuplot missing or failing, 2 bad command line.\n",
	      fp);
}

static void print_written(const plot_result* r, const char* csv_path) {
	printf("%s: %ld rows plotted into %s/: " PLOT_ENERGY_PNG ", " PLOT_STRAIN_PNG "%s, " PLOT_CONTACTS_PNG
	       " (%.3f s)\n",
	       csv_path, r->rows, r->out_dir, r->strain_log ? " (log scale)" : "", r->seconds);
}

int plot_main(int argc, char** argv) {
	const char* csv = NULL;
	const char* out_dir = NULL;
	bool quiet = false;
	cli_cursor c = {argc, argv, 1, NULL, "pbd plot", false, false};
	bool is_option;
	for (const char* arg; (arg = cli_next(&c, &is_option)) != NULL;) {
		if (is_option) {
			if (cli_match(&c, "-h", "--help", false)) {
				plot_help(stdout);
				return CLI_OK;
			} else if (cli_match(&c, "-o", "--out", true)) {
				if (!c.value[0]) return cli_usage_error(&c, "--out: empty folder name");
				out_dir = c.value;
			} else if (cli_match(&c, "-q", "--quiet", false)) {
				quiet = true;
			} else {
				return c.failed ? CLI_USAGE : cli_usage_error(&c, "unknown option '%s'", arg);
			}
			if (c.failed) return CLI_USAGE;
			continue;
		}
		if (csv) return cli_usage_error(&c, "more than one CSV given ('%s' and '%s')", csv, arg);
		if (!arg[0]) return cli_usage_error(&c, "empty CSV file name");
		csv = arg;
		c.i++;
	}
	if (!csv) return cli_usage_error(&c, "no CSV given (e.g. pbd plot out/cloth_sphere/metrics.csv)");
	plot_result r;
	pbd_scene_error err;
	if (!plot_metrics(csv, out_dir, &r, &err)) {
		fprintf(stderr, "pbd: %s\n", err.message);
		return CLI_FAILED;
	}
	if (!quiet) {
		print_written(&r, csv);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			fprintf(stderr, "pbd: standard output: write failed\n");
			return CLI_FAILED;
		}
	}
	return CLI_OK;
}

bool plot_after_run(const char* csv_path, const char* dir, bool quiet, pbd_scene_error* err) {
	plot_result r;
	if (!plot_metrics(csv_path, dir, &r, err)) return false;
	if (quiet) return true;
	printf("  plots %.3f s: " PLOT_ENERGY_PNG ", " PLOT_STRAIN_PNG "%s, " PLOT_CONTACTS_PNG "\n", r.seconds,
	       r.strain_log ? " (log scale)" : "");
	if (fflush(stdout) != 0 || ferror(stdout)) {
		pbd_scene_error_set(err, "standard output: write failed");
		return false;
	}
	return true;
}
