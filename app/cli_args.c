/* Command-line parsing helpers: strict numbers and option matching. */
#include "cli_args.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cli_parse_int(const char* s, long lo, long hi, long* out) {
	/* strtol skips leading blanks and accepts a sign: refuse the blanks, keep the minus. */
	if (!s || !*s || isspace((unsigned char)*s) || *s == '+') return false;
	char* end = NULL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno == ERANGE || end == s || *end != '\0') return false;
	if (v < lo || v > hi) return false;
	*out = v;
	return true;
}

bool cli_parse_real(const char* s, double lo, bool lo_open, double hi, double* out) {
	if (!s || !*s || isspace((unsigned char)*s)) return false;
	char* end = NULL;
	errno = 0;
	double v = strtod(s, &end);
	/* ERANGE also flags underflow to 0, which is then caught by the range test if it matters. */
	if (end == s || *end != '\0' || !isfinite(v)) return false;
	if (errno == ERANGE && v != 0) return false;
	if (lo_open ? !(v > lo) : !(v >= lo)) return false;
	if (!(v <= hi)) return false;
	*out = v;
	return true;
}

bool cli_parse_size(const char* s, uint64_t* out) {
	if (!s || !(*s >= '0' && *s <= '9')) return false;
	uint64_t v = 0;
	for (; *s >= '0' && *s <= '9'; ++s) {
		const uint64_t d = (uint64_t)(*s - '0');
		if (v > (UINT64_MAX - d) / 10) return false;
		v = v * 10 + d;
	}
	unsigned shift = 0;
	switch (*s) {
	case '\0':
		break;
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	case 't':
	case 'T':
		shift = 40;
		break;
	default:
		return false;
	}
	if (*s && s[1] != '\0') return false;
	if (shift && v > (UINT64_MAX >> shift)) return false;
	*out = v << shift;
	return true;
}

bool cli_parse_dimensions(const char* s, long lo, long hi, int* w, int* h) {
	const char* x = strchr(s, 'x');
	if (!x || x == s || (size_t)(x - s) > 15) return false;
	char a[16];
	memcpy(a, s, (size_t)(x - s));
	a[x - s] = '\0';
	long lw, lh;
	if (!cli_parse_int(a, lo, hi, &lw) || !cli_parse_int(x + 1, lo, hi, &lh)) return false;
	*w = (int)lw;
	*h = (int)lh;
	return true;
}

int cli_usage_error(cli_cursor* c, const char* fmt, ...) {
	fputs("pbd: ", stderr);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see '%s --help')\n", c->program);
	c->failed = true;
	return CLI_USAGE;
}

const char* cli_next(cli_cursor* c, bool* is_option) {
	if (c->i >= c->argc) return NULL;
	const char* arg = c->argv[c->i];
	if (!c->options_done && strcmp(arg, "--") == 0) {
		c->options_done = true;
		if (++c->i >= c->argc) return NULL;
		arg = c->argv[c->i];
	}
	*is_option = !c->options_done && arg[0] == '-' && arg[1] != '\0';
	return arg;
}

bool cli_match(cli_cursor* c, const char* short_name, const char* long_name, bool takes_value) {
	if (c->failed || c->i >= c->argc) return false;
	const char* arg = c->argv[c->i];
	c->value = NULL;
	const char* attached = NULL;
	bool matched = false;
	if (short_name && strcmp(arg, short_name) == 0) {
		matched = true;
	} else if (short_name && takes_value && strncmp(arg, short_name, strlen(short_name)) == 0 && arg[1] != '-') {
		matched = true; /* -n50 */
		attached = arg + strlen(short_name);
	} else if (long_name) {
		size_t n = strlen(long_name);
		if (strcmp(arg, long_name) == 0) {
			matched = true;
		} else if (strncmp(arg, long_name, n) == 0 && arg[n] == '=') {
			if (!takes_value) {
				cli_usage_error(c, "option %s takes no value", long_name);
				return false;
			}
			matched = true;
			attached = arg + n + 1;
		}
	}
	if (!matched || c->failed) return false;
	if (!takes_value || attached) {
		c->value = attached;
		c->i++;
		return true;
	}
	if (c->i + 1 >= c->argc) {
		cli_usage_error(c, "option %s needs a value", arg);
		return false;
	}
	c->value = c->argv[c->i + 1];
	c->i += 2;
	return true;
}
