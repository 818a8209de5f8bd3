/* The `pbd compare` command: one scene under several methods, side by side. */
#ifndef PBD_APP_CLI_COMPARE_H
#define PBD_APP_CLI_COMPARE_H

#include <stdio.h>

/// argv[0] is "compare"; returns the process exit status (see cli_args.h and 'pbd compare --help').
int cli_compare(int argc, char** argv);

/// The text of 'pbd compare --help'.
void cli_compare_help(FILE* fp);

#endif
