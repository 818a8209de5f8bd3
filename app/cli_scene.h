/* What `pbd run` and `pbd compare` share about the scene they simulate: finding the scene a
 * command line names (a file or a built-in), and the options that override its world settings
 * (--solver, --formulation, --method, --iterations, --substeps, --dt, --threads, --simd). */
#ifndef PBD_APP_CLI_SCENE_H
#define PBD_APP_CLI_SCENE_H

#include <stdbool.h>

#include "cli_args.h"
#include "pbd/scene.h"

/// World settings given on the command line; each negative or zero one leaves the scene's.
typedef struct cli_world_options {
	int solver;      ///< pbd_solver, -1: the scene's
	int formulation; ///< pbd_formulation, -1: the scene's
	int method;      ///< pbd_method, -1: the scene's
	int simd;        ///< pbd_simd, -1: the scene's
	long iterations; ///< 0: the scene's
	long substeps;   ///< 0: the scene's
	double dt;       ///< 0: the scene's
	long threads;    ///< 0: the scene's
} cli_world_options;

/// Every setting left to the scene.
void cli_world_options_init(cli_world_options* o);

/// True when the argument at the cursor is one of the world options; it is then consumed and
/// stored. A bad value prints the usage message and sets c->failed (still returning true).
bool cli_match_world_option(cli_cursor* c, cli_world_options* o);

/// Sets the given options on the scene's world. On a refusal, false with "<scene>: <library
/// message>" in err.
bool cli_world_options_apply(const cli_world_options* o, scene* s, scene_error* err);

/// Loads the scene `arg` names: an existing file that is not a folder; otherwise a built-in of
/// that name; otherwise, when it looks like a path, the file (to get the system's message).
bool cli_scene_load(const char* arg, const scene_options* so, scene* s, scene_error* err);

#endif
