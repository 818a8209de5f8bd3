/* The `pbd run` command. */
#ifndef PBD_APP_CLI_RUN_H
#define PBD_APP_CLI_RUN_H

#include <stdio.h>

/// argv[0] is "run"; returns the process exit status (see cli_args.h).
int cli_run(int argc, char** argv);

/// The text of 'pbd run --help'.
void cli_run_help(FILE* fp);

#endif
