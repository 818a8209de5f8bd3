/* `pbd plot` and `pbd run --plot`: metrics.csv to PNG through gnuplot. */
#define _XOPEN_SOURCE 700 /* POSIX 2008 with realpath */
#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_args.h"
#include "output.h"

extern char** environ;

/* The strain axis is logarithmic when its positive values span this ratio (two decades) or more. */
#define PLOT_LOG_RATIO 100.0

/* A data line longer than this is not a metrics row (a row of `pbd run` is under 400 bytes). */
#define PLOT_LINE_MAX 65536

/* Bytes of gnuplot's output kept for the error message: the end, where the error is. */
#define PLOT_TAIL_MAX 16384

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

static double now_seconds(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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

static bool check_header(const char* line, const char* path, metrics_info* info, scene_error* err) {
	info->header = strdup(line);
	if (!info->header) {
		scene_error_set(err, "%s: out of memory", path);
		return false;
	}
	char** fields = info->names;
	int n = split_fields(info->header, fields, PLOT_MAX_FIELDS);
	if (n > PLOT_MAX_FIELDS) {
		scene_error_set(err, "%s:1: not a metrics.csv header: %d columns (at most %d)", path, n, PLOT_MAX_FIELDS);
		return false;
	}
	info->fields = n;
	for (int c = 0; c < COL_COUNT; ++c) {
		info->col[c] = 0;
		for (int i = 0; i < n; ++i) {
			if (strcmp(fields[i], column_names[c]) != 0) continue;
			if (info->col[c]) {
				scene_error_set(err, "%s:1: not a metrics.csv header: column '%s' appears twice", path,
				                column_names[c]);
				return false;
			}
			info->col[c] = i + 1;
		}
		if (!info->col[c]) {
			scene_error_set(err, "%s:1: not a metrics.csv header: no column '%s'", path, column_names[c]);
			return false;
		}
	}
	return true;
}

static bool check_row(char* line, long lineno, const char* path, metrics_info* info, scene_error* err) {
	char* fields[PLOT_MAX_FIELDS];
	if (!*line) {
		scene_error_set(err, "%s:%ld: empty line", path, lineno);
		return false;
	}
	int n = split_fields(line, fields, PLOT_MAX_FIELDS);
	if (n != info->fields) {
		scene_error_set(err, "%s:%ld: %d fields, the header has %d", path, lineno, n, info->fields);
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
			scene_error_set(err, "%s:%ld: column %d (%.40s): '%.40s' is %s", path, lineno, i + 1, info->names[i],
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
static bool check_csv(const char* path, metrics_info* info, scene_error* err) {
	struct stat st;
	if (stat(path, &st) != 0) {
		scene_error_set(err, "%s: cannot open: %s", path, strerror(errno));
		return false;
	}
	if (S_ISDIR(st.st_mode)) {
		scene_error_set(err, "%s: is a folder, not a metrics.csv file", path);
		return false;
	}
	FILE* fp = fopen(path, "rb");
	if (!fp) {
		scene_error_set(err, "%s: cannot open: %s", path, strerror(errno));
		return false;
	}
	char* line = malloc(PLOT_LINE_MAX);
	if (!line) {
		fclose(fp);
		scene_error_set(err, "%s: out of memory", path);
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
			scene_error_set(err, "%s: cannot read: %s", path, strerror(errno));
			goto done;
		}
		if (r == -1) {
			scene_error_set(err, "%s:%ld: %s", path, lineno, why);
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
		scene_error_set(err, "%s: empty file (expected the metrics.csv header)", path);
		goto done;
	}
	if (info->rows == 0) {
		scene_error_set(err, "%s: no data rows, only the header: nothing to plot", path);
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

/* The first executable `name` on PATH, like the shell's lookup. */
static bool find_program(const char* name, char* out, size_t size) {
	const char* path = getenv("PATH");
	if (!path) path = "/usr/local/bin:/usr/bin:/bin";
	const char* p = path;
	for (;;) {
		const char* colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);
		int w = n ? snprintf(out, size, "%.*s/%s", (int)n, p, name) : snprintf(out, size, "./%s", name);
		struct stat st;
		if (w > 0 && (size_t)w < size && stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return true;
		if (!colon) return false;
		p = colon + 1;
	}
}

/* A path gnuplot takes literally: it treats "<cmd" as a pipe to read, "|cmd" as a pipe to write,
 * "-" as stdin and "+" as a pseudo-file; "./" in front of a relative path rules all of that out. */
static bool literal_path(char* out, size_t size, const char* dir, const char* file) {
	const char* prefix = dir[0] == '/' ? "" : "./";
	int w = file ? snprintf(out, size, "%s%s/%s", prefix, dir, file) : snprintf(out, size, "%s%s", prefix, dir);
	return w > 0 && (size_t)w < size;
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

/* The gnuplot script. Only numbers are written into it; the paths and the title arrive as
 * ARG1..ARG5 (`gnuplot -c script csv energy.png strain.png contacts.png title`). */
static void write_script(FILE* fp, const metrics_info* info, bool strain_log) {
	const int t = info->col[COL_TIME];
	/* A single row draws no line: show its points. */
	const char* style = info->rows < 2 ? "linespoints pointtype 7 pointsize 1.5" : "lines";
	fputs("# Written by pbd plot; ARG1 = metrics.csv, ARG2..ARG4 = the PNG files, ARG5 = the title.\n"
	      "set datafile separator comma\n"
	      "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
	      "  set terminal pngcairo size 960,600 noenhanced font 'sans,11'\n"
	      "} else {\n"
	      "  set terminal png size 960,600 noenhanced\n"
	      "}\n"
	      "set grid\n"
	      "set key outside right top\n"
	      "set xlabel 'time (s)'\n"
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

/* The line of gnuplot's output that says what went wrong: the last error line
 * ("script" line N: ...), with the lines after it ("system error: ..."), joined by "; ".
 * Warnings are skipped; with no error line, the last non-empty line. The temporary script's
 * name, gone by the time anyone reads the message, becomes "script". */
static void gnuplot_message(char* text, const char* script, char* out, size_t size) {
	enum { KEEP = 64 }; /* the last lines are the ones that matter */
	out[0] = '\0';
	char* lines[KEEP];
	int n = 0;
	for (char* p = strtok(text, "\n"); p; p = strtok(NULL, "\n")) {
		size_t len = strlen(p);
		while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == ' ')) p[--len] = '\0';
		if (strspn(p, " \t^") == len) continue; /* empty, or the caret under the failing command */
		if (n == KEEP) {
			memmove(lines, lines + 1, (KEEP - 1) * sizeof lines[0]);
			--n;
		}
		lines[n++] = p;
	}
	if (n == 0) return;
	int from = n - 1;
	for (int i = n - 1; i >= 0; --i) {
		const char* at = strstr(lines[i], " line ");
		if (at && strchr(at, ':') && !strstr(lines[i], "warning:")) {
			from = i;
			break;
		}
	}
	const size_t script_len = strlen(script);
	size_t used = 0;
	for (int i = from; i < n && used + 1 < size; ++i) {
		const char* line = lines[i];
		const char* name = "";
		if (line[0] == '"' && strncmp(line + 1, script, script_len) == 0 && line[1 + script_len] == '"') {
			name = "script";
			line += script_len + 2;
		}
		int w = snprintf(out + used, size - used, "%s%s%s", i > from ? "; " : "", name, line);
		if (w < 0) break;
		used += (size_t)w < size - used ? (size_t)w : size - used - 1;
	}
}

/* Runs `gnuplot -d -c script args...` with its stdin from /dev/null and its stdout and stderr
 * captured (only the tail is kept). Returns false with a message if it could not start or did
 * not exit with status 0. */
static bool run_gnuplot(const char* gnuplot, char* const args[], const char* script, scene_error* err) {
	int fds[2];
	if (pipe(fds) != 0) {
		scene_error_set(err, "cannot start gnuplot: pipe: %s", strerror(errno));
		return false;
	}
	fcntl(fds[0], F_SETFD, FD_CLOEXEC);
	fcntl(fds[1], F_SETFD, FD_CLOEXEC);
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
	posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
	pid_t pid;
	int rc = posix_spawn(&pid, gnuplot, &actions, NULL, args, environ);
	posix_spawn_file_actions_destroy(&actions);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		scene_error_set(err, "cannot start gnuplot (%s): %s", gnuplot, strerror(rc));
		return false;
	}
	char* tail = malloc(PLOT_TAIL_MAX + 1);
	size_t kept = 0;
	char chunk[4096];
	for (;;) {
		ssize_t got = read(fds[0], chunk, sizeof chunk);
		if (got < 0 && errno == EINTR) continue;
		if (got <= 0) break;
		if (!tail) continue;    /* out of memory: drain the pipe anyway */
		size_t g = (size_t)got; /* <= sizeof chunk < PLOT_TAIL_MAX */
		if (kept + g > PLOT_TAIL_MAX) {
			size_t drop = kept + g - PLOT_TAIL_MAX;
			memmove(tail, tail + drop, kept - drop);
			kept -= drop;
		}
		memcpy(tail + kept, chunk, g);
		kept += g;
	}
	close(fds[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			scene_error_set(err, "gnuplot: waitpid: %s", strerror(errno));
			free(tail);
			return false;
		}
	}
	bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (!ok) {
		char message[400] = "";
		if (tail) {
			tail[kept] = '\0';
			gnuplot_message(tail, script, message, sizeof message);
		}
		char how[64];
		if (WIFEXITED(status))
			snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(status));
		else if (WIFSIGNALED(status))
			snprintf(how, sizeof how, "killed by signal %d", WTERMSIG(status));
		else
			snprintf(how, sizeof how, "status %d", status);
		scene_error_set(err, "gnuplot failed (%s)%s%s", how, message[0] ? ": " : "", message);
	}
	free(tail);
	return ok;
}

/* Writes the script into a new temporary file; *path gets its name. */
static bool write_script_file(const metrics_info* info, bool strain_log, char* path, size_t size, scene_error* err) {
	const char* tmp = getenv("TMPDIR");
	if (!tmp || !*tmp) tmp = "/tmp";
	int w = snprintf(path, size, "%s/pbd-plot-XXXXXX", tmp);
	if (w < 0 || (size_t)w >= size) {
		scene_error_set(err, "TMPDIR: path too long");
		return false;
	}
	int fd = mkstemp(path);
	if (fd < 0) {
		scene_error_set(err, "cannot create a temporary file in %s: %s", tmp, strerror(errno));
		return false;
	}
	FILE* fp = fdopen(fd, "w");
	if (!fp) {
		scene_error_set(err, "%s: %s", path, strerror(errno));
		close(fd);
		unlink(path);
		return false;
	}
	write_script(fp, info, strain_log);
	bool failed = ferror(fp) != 0;
	if (fclose(fp) != 0) failed = true;
	if (failed) {
		scene_error_set(err, "%s: write failed", path);
		unlink(path);
		return false;
	}
	return true;
}

bool plot_metrics(const char* csv_path, const char* out_dir, plot_result* result, scene_error* err) {
	const double start = now_seconds();
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
	bool fits = literal_path(csv_arg, sizeof csv_arg, csv_path, NULL);
	for (int i = 0; i < 3; ++i) fits = fits && literal_path(pngs[i], sizeof pngs[i], result->out_dir, names[i]);
	if (!fits) {
		scene_error_set(err, "%s: path too long", result->out_dir);
		return false;
	}

	char gnuplot[4200];
	if (!find_program("gnuplot", gnuplot, sizeof gnuplot)) {
		scene_error_set(err, "gnuplot not found; install gnuplot-nox");
		return false;
	}
	if (out_dir && !out_make_dir(result->out_dir, err)) return false;

	result->rows = info.rows;
	result->strain_log =
	    info.strain_max > 0 && isfinite(info.strain_min) && info.strain_max >= PLOT_LOG_RATIO * info.strain_min;
	char title[256];
	title_of(csv_path, title, sizeof title);
	char script[4200];
	if (!write_script_file(&info, result->strain_log, script, sizeof script, err)) return false;
	/* Plots of an earlier run go first, so a file left behind is never taken for a new one. */
	for (int i = 0; i < 3; ++i) unlink(pngs[i]);
	char* args[] = {"gnuplot", "-d", "-c", script, csv_arg, pngs[0], pngs[1], pngs[2], title, NULL};
	bool ok = run_gnuplot(gnuplot, args, script, err);
	unlink(script);
	if (!ok) return false;
	for (int i = 0; i < 3; ++i) {
		struct stat st;
		if (stat(pngs[i], &st) != 0 || st.st_size == 0) {
			scene_error_set(err, "gnuplot wrote no %s", pngs[i]);
			return false;
		}
	}
	result->seconds = now_seconds() - start;
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
	bool quiet = false, options_done = false;
	cli_cursor c = {argc, argv, 1, NULL, "pbd plot", false};
	while (c.i < argc) {
		const char* arg = argv[c.i];
		if (!options_done && arg[0] == '-' && arg[1] != '\0') {
			if (strcmp(arg, "--") == 0) {
				options_done = true;
				c.i++;
			} else if (cli_match(&c, "-h", "--help", false)) {
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
	scene_error err;
	if (!plot_metrics(csv, out_dir, &r, &err)) {
		fprintf(stderr, "pbd: %s\n", err.message);
		return CLI_FAILED;
	}
	if (!quiet) {
		print_written(&r, csv);
		if (fflush(stdout) != 0) {
			fprintf(stderr, "pbd: standard output: write failed\n");
			return CLI_FAILED;
		}
	}
	return CLI_OK;
}

bool plot_after_run(const char* csv_path, const char* dir, bool quiet, scene_error* err) {
	plot_result r;
	if (!plot_metrics(csv_path, dir, &r, err)) return false;
	if (quiet) return true;
	printf("  plots %.3f s: " PLOT_ENERGY_PNG ", " PLOT_STRAIN_PNG "%s, " PLOT_CONTACTS_PNG "\n", r.seconds,
	       r.strain_log ? " (log scale)" : "");
	if (fflush(stdout) != 0) {
		scene_error_set(err, "standard output: write failed");
		return false;
	}
	return true;
}
