/* Programs the `pbd` program runs to finish its work (gnuplot for plots, ffmpeg for videos put
 * side by side). Each is found on PATH as the shell would and started with an argument vector,
 * never through a shell, so a file name is never read as a command; its stdin is /dev/null and
 * only the end of what it prints is kept, where its error is. */
#ifndef PBD_APP_CHILD_PROCESS_H
#define PBD_APP_CHILD_PROCESS_H

#include <stdbool.h>
#include <stddef.h>

#include "pbd/scene.h"

/// The first executable `name` in the PATH folders (an empty entry is the current folder) into
/// out; false when there is none.
bool child_find_program(const char* name, char* out, size_t size);

/// Runs the program at path `program` with `args` (args[0] its name for messages, then the
/// arguments, then NULL) and waits for it. The last tail_size - 1 bytes of its stdout and stderr
/// together go into `tail`, terminated (tail may be NULL: the output is read and dropped).
/// *status gets the status waitpid reports. False with one line in err only when it could not be
/// started or waited for; how it ended is the caller's to judge (child_succeeded).
bool child_run(const char* program, char* const args[], char* tail, size_t tail_size, int* status, scene_error* err);

/// True for a normal exit with status 0.
bool child_succeeded(int status);

/// "exit status 3", "killed by signal 9": how a program ended, for a message.
void child_describe_status(int status, char* out, size_t size);

#endif
