/* `pbd new [FILE] [--force]`: writes a starting scene, with comments on every field. */
#ifndef PBD_APP_CLI_NEW_H
#define PBD_APP_CLI_NEW_H

/// The starting scene's text: a cloth held at two corners falls onto a ball.
extern const char cli_new_scene[];

/// argv[0] is "new". Returns a CLI_* exit status.
int cli_new(int argc, char** argv);

#endif
