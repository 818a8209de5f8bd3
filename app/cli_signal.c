/* The handler does nothing but store the signal number: the run reads it between frames, where
 * stopping leaves every file whole. */
#define _POSIX_C_SOURCE 200809L
#include "cli_signal.h"

#include <signal.h>
#include <stdbool.h>
#include <string.h>

static volatile sig_atomic_t caught;

typedef struct caught_signal {
	int sig;
	bool installed;
	struct sigaction saved;
} caught_signal;

static caught_signal signals[2] = {{.sig = SIGINT}, {.sig = SIGTERM}};

static void on_signal(int sig) { caught = sig; }

void cli_signals_catch(void) {
	caught = 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* SA_RESETHAND: the second Ctrl-C is not held back. SA_RESTART: a write interrupted by the
	 * signal resumes instead of failing with EINTR. */
	sa.sa_flags = SA_RESETHAND | SA_RESTART;
	for (int i = 0; i < 2; ++i) {
		caught_signal* c = &signals[i];
		if (c->installed || sigaction(c->sig, NULL, &c->saved) != 0) continue;
		/* A signal ignored from the start (a shell's background job, nohup) stays ignored. */
		if (c->saved.sa_handler == SIG_IGN) continue;
		c->installed = sigaction(c->sig, &sa, NULL) == 0;
	}
}

int cli_signals_caught(void) { return (int)caught; }

void cli_signals_restore(void) {
	for (int i = 0; i < 2; ++i) {
		if (!signals[i].installed) continue;
		sigaction(signals[i].sig, &signals[i].saved, NULL);
		signals[i].installed = false;
	}
}
