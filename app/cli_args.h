/* Command-line parsing helpers of the `pbd` program: strict numbers and option matching. */
#ifndef PBD_APP_CLI_ARGS_H
#define PBD_APP_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit statuses of the program. */
enum {
	CLI_OK = 0,
	CLI_FAILED = 1,  /* bad input file, run-time failure */
	CLI_USAGE = 2,   /* bad command line */
	CLI_DIVERGED = 3 /* the simulation diverged; its outputs were written */
};

/* A whole-string integer in [lo, hi]: no sign games, no trailing characters, no overflow. */
bool cli_parse_int(const char* s, long lo, long hi, long* out);

/* A whole-string finite number, > lo when lo_open (>= lo otherwise) and <= hi. */
bool cli_parse_real(const char* s, double lo, bool lo_open, double hi, double* out);

/* A whole-string byte count: digits, then optionally one of K, M, G, T (either case, powers of
 * 1024), e.g. 4096, 500M, 10G. No sign, no fraction, nothing past 2^64 - 1. */
bool cli_parse_size(const char* s, uint64_t* out);

/* "WxH": two whole-string integers, each in [lo, hi] (hi at most INT_MAX), joined by an 'x' (640x480). */
bool cli_parse_dimensions(const char* s, long lo, long hi, int* w, int* h);

/* Walks argv[*i] through the options of one command. */
typedef struct cli_cursor {
	int argc;
	char** argv;
	int i;               /* index of the argument being looked at */
	const char* value;   /* the value of the option just matched, if it takes one */
	const char* program; /* "pbd run", for messages */
	bool failed;         /* a usage message has been printed */
	bool options_done;   /* "--" was passed: what follows are operands, whatever they look like */
} cli_cursor;

/* The argument at the cursor, or NULL past the last; *is_option says whether it is an option
 * ("-x..." or "--x...") rather than an operand (a lone "-" is an operand). A "--" is consumed
 * here, once: every argument after it is an operand. The caller advances past an operand. */
const char* cli_next(cli_cursor* c, bool* is_option);

/* True when argv[i] is the option `short_name` (may be NULL) or `long_name`. For an option that
 * takes a value, accepts "-n 5", "-n5", "--frames 5" and "--frames=5"; a missing value prints a
 * usage message, sets failed and returns false. Advances past what it consumed. */
bool cli_match(cli_cursor* c, const char* short_name, const char* long_name, bool takes_value);

/* Prints "pbd: <message> (see '<program> --help')" on stderr, sets failed. Returns CLI_USAGE. */
int cli_usage_error(cli_cursor* c, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
