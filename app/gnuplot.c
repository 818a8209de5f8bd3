/* gnuplot as a child process: finding it, its temporary script, its error line. */
#define _POSIX_C_SOURCE 200809L
#include "gnuplot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "child_process.h"

/* Bytes of gnuplot's output kept for the error message: the end, where the error is. */
#define GNUPLOT_TAIL_MAX 16384

bool gnuplot_find(char* out, size_t size, pbd_scene_error* err) {
	if (child_find_program("gnuplot", out, size)) return true;
	pbd_scene_error_set(err, "gnuplot not found; install gnuplot-nox");
	return false;
}

bool gnuplot_literal_path(char* out, size_t size, const char* dir, const char* file) {
	const char* prefix = dir[0] == '/' ? "" : "./";
	int w = file ? snprintf(out, size, "%s%s/%s", prefix, dir, file) : snprintf(out, size, "%s%s", prefix, dir);
	return w > 0 && (size_t)w < size;
}

void gnuplot_write_preamble(FILE* fp) {
	fputs("set datafile separator comma\n"
	      "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
	      "  set terminal pngcairo size 960,600 noenhanced font 'sans,11'\n"
	      "} else {\n"
	      "  set terminal png size 960,600 noenhanced\n"
	      "}\n"
	      "set grid\n"
	      "set key outside right top\n",
	      fp);
}

static bool write_script(void (*write)(FILE* fp, const void* ctx), const void* ctx, char* path, size_t size,
                         pbd_scene_error* err) {
	const char* tmp = getenv("TMPDIR");
	if (!tmp || !*tmp) tmp = "/tmp";
	int w = snprintf(path, size, "%s/pbd-plot-XXXXXX", tmp);
	if (w < 0 || (size_t)w >= size) {
		pbd_scene_error_set(err, "TMPDIR: path too long");
		return false;
	}
	int fd = mkstemp(path);
	if (fd < 0) {
		pbd_scene_error_set(err, "cannot create a temporary file in %s: %s", tmp, strerror(errno));
		return false;
	}
	FILE* fp = fdopen(fd, "w");
	if (!fp) {
		pbd_scene_error_set(err, "%s: %s", path, strerror(errno));
		close(fd);
		unlink(path);
		return false;
	}
	write(fp, ctx);
	bool failed = ferror(fp) != 0;
	if (fclose(fp) != 0) failed = true;
	if (failed) {
		pbd_scene_error_set(err, "%s: write failed", path);
		unlink(path);
		return false;
	}
	return true;
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

static bool run(const char* gnuplot, char* const args[], const char* script, pbd_scene_error* err) {
	char* tail = malloc(GNUPLOT_TAIL_MAX + 1); /* NULL: the output is drained, the message shorter */
	int status;
	if (!child_run(gnuplot, args, tail, tail ? GNUPLOT_TAIL_MAX + 1 : 0, &status, err)) {
		free(tail);
		return false;
	}
	bool ok = child_succeeded(status);
	if (!ok) {
		char message[400] = "";
		if (tail) gnuplot_message(tail, script, message, sizeof message);
		char how[64];
		child_describe_status(status, how, sizeof how);
		pbd_scene_error_set(err, "gnuplot failed (%s)%s%s", how, message[0] ? ": " : "", message);
	}
	free(tail);
	return ok;
}

bool gnuplot_draw(const char* gnuplot, void (*write)(FILE* fp, const void* ctx), const void* ctx,
                  const char* const args[], int arg_count, const char* const pngs[], int png_count,
                  pbd_scene_error* err) {
	if (arg_count < 0 || arg_count > GNUPLOT_MAX_ARGS) {
		pbd_scene_error_set(err, "gnuplot: %d script arguments, at most %d", arg_count, GNUPLOT_MAX_ARGS);
		return false;
	}
	char script[4200];
	if (!write_script(write, ctx, script, sizeof script, err)) return false;
	for (int i = 0; i < png_count; ++i) unlink(pngs[i]);
	/* posix_spawn takes char* const[]: the strings are only read. */
	char* argv[4 + GNUPLOT_MAX_ARGS + 1] = {"gnuplot", "-d", "-c", script};
	for (int i = 0; i < arg_count; ++i) argv[4 + i] = (char*)args[i];
	argv[4 + arg_count] = NULL;
	bool ok = run(gnuplot, argv, script, err);
	unlink(script);
	for (int i = 0; ok && i < png_count; ++i) {
		struct stat st;
		if (stat(pngs[i], &st) != 0 || st.st_size == 0) {
			pbd_scene_error_set(err, "gnuplot wrote no %s", pngs[i]);
			ok = false;
		}
	}
	return ok;
}
