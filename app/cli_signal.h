/* SIGINT and SIGTERM during `pbd run`: the run notes them and stops between frames, so that
 * what it has written is whole. */
#ifndef PBD_APP_CLI_SIGNAL_H
#define PBD_APP_CLI_SIGNAL_H

/* Installs the handlers, each for one delivery: a second signal of the same kind acts as if
 * none were installed (it ends the program), for a frame that takes too long to finish. A signal
 * that was ignored when the program started (a shell's background job, nohup) stays ignored. */
void cli_signals_catch(void);

/* The signal received since cli_signals_catch (SIGINT or SIGTERM), or 0. */
int cli_signals_caught(void);

/* Puts back the handlers cli_signals_catch replaced; does nothing when none are installed. */
void cli_signals_restore(void);

#endif
