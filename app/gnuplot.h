/* gnuplot as the plots of `pbd plot` and `pbd compare --plot` use it: a script written into a
 * temporary file holding only numbers and fixed text, run as `gnuplot -d -c SCRIPT ARG1 ...` with
 * every path and title as an argument (ARG1..ARG9 inside the script), so that no file name is
 * ever parsed as gnuplot syntax. */
#ifndef PBD_APP_GNUPLOT_H
#define PBD_APP_GNUPLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "pbd/scene.h"

/// gnuplot's path on PATH into out; false with "gnuplot not found; install gnuplot-nox".
bool gnuplot_find(char* out, size_t size, scene_error* err);

/// "<dir>/<file>" (file may be NULL: dir alone) in a form gnuplot takes literally: it reads
/// "<cmd" as a pipe to read, "|cmd" as a pipe to write, "-" as stdin and "+" as a pseudo-file,
/// and "./" in front of a relative path rules all of that out. False when it does not fit.
bool gnuplot_literal_path(char* out, size_t size, const char* dir, const char* file);

/// The lines every plot script starts with: comma-separated input, a 960 x 600 PNG terminal
/// (pngcairo where gnuplot has it, else png), a grid, the key outside on the right.
void gnuplot_write_preamble(FILE* fp);

/// Most arguments a script takes (gnuplot's ARG1..ARG9).
#define GNUPLOT_MAX_ARGS 9

/// Draws PNG files: writes the script through write(fp, ctx) into a temporary file ($TMPDIR or
/// /tmp), deletes the `png_count` files `pngs` (so that a plot left from before is never taken
/// for a new one), runs `gnuplot -d -c SCRIPT args...` (at most GNUPLOT_MAX_ARGS, the script's
/// ARG1...), deletes the script, and checks that every PNG was written. False with one line in
/// err: the script not written, gnuplot failing with its exit status and its last error line
/// ("gnuplot failed (exit status 1): script line 12: cannot open file"), or a PNG missing.
bool gnuplot_draw(const char* gnuplot, void (*write)(FILE* fp, const void* ctx), const void* ctx,
                  const char* const args[], int arg_count, const char* const pngs[], int png_count, scene_error* err);

#endif
