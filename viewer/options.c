/* The command line of `pbd view`: the scene, the window, and the scripted input of test runs. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include "viewer.h"

static void print_help(FILE* fp) {
	fputs("Usage: pbd view [SCENE] [options]\n"
	      "\n"
	      "Shows a scene file or built-in scene (default: " VIEW_DEFAULT_SCENE ") in a window as it runs.\n"
	      "Mouse: left drag on the cloth grabs a particle, on a dynamic body the body, elsewhere it\n"
	      "orbits; right or middle drag (or shift + left) pans, the wheel zooms. Keys: H or ? in the\n"
	      "window lists them.\n"
	      "\n"
	      "Options:\n"
	      "  --size WxH               window size (default: the scene's render size, else 960x540)\n"
	      "  --paused                 start paused (space runs, N steps once)\n"
	      "  --frames N               scripted run: N simulation steps, one per drawn frame, as fast as\n"
	      "                           possible (no vsync, no real-time pacing), then exit; input comes\n"
	      "                           from --drag, --mouse and --key only\n"
	      "  --screenshot FILE        save the last drawn frame as PNG when the viewer exits\n"
	      "  --drag I:X,Y,Z[:F-T]     scripted mouse drag of particle I: press where it is drawn before\n"
	      "                           step F, move the cursor in equal steps to where the world point\n"
	      "                           X,Y,Z is drawn (reached before step T), release after step T\n"
	      "                           (default F-T: 1-N); prints where the particle was let go\n"
	      "  --drag-body B:X,Y,Z[:F-T] the same for the scene's body B (0 = the first in the file),\n"
	      "                           pressed where its centre of mass is drawn; prints where the\n"
	      "                           point held was let go\n"
	      "  --mouse F:ACTION:X,Y     scripted left-button event before step F (1..N+1): press, move\n"
	      "                           or release at window point X,Y (pixels from the top left)\n"
	      "  --key F:KEY              scripted key press before step F: a character (g ] . ? ...) or\n"
	      "                           space, tab, up, down, left, right, enter, backspace, escape,\n"
	      "                           bracketleft, bracketright, semicolon\n"
	      "  --track I                print particle I's position when the viewer exits (repeatable)\n"
	      "  --hidden                 do not show the window (scripted runs)\n"
	      "  -q, --quiet              print nothing but errors\n"
	      "  -h, --help               this text\n"
	      "\n"
	      "The keys and the panel are described in docs/rendering.md.\n"
	      "Exit status: 0 success, 1 the scene did not load or no window could be opened, 2 bad\n"
	      "command line.\n",
	      fp);
}

static int usage(const view_options* o, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static int usage(const view_options* o, const char* fmt, ...) {
	fputs("pbd: ", stderr);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see '%s --help')\n", o->program);
	return VIEW_USAGE;
}

/* A decimal integer in [lo, hi] that ends at *end: no blanks, no '+', no overflow. */
static bool parse_long_prefix(const char* s, long lo, long hi, long* out, const char** end) {
	if (!s || !isdigit((unsigned char)*s)) {
		if (!(s && *s == '-' && isdigit((unsigned char)s[1]))) return false;
	}
	char* e = NULL;
	errno = 0;
	const long v = strtol(s, &e, 10);
	if (errno == ERANGE || e == s || v < lo || v > hi) return false;
	*out = v;
	*end = e;
	return true;
}

static bool parse_long(const char* s, long lo, long hi, long* out) {
	const char* end = NULL;
	return parse_long_prefix(s, lo, hi, out, &end) && *end == '\0';
}

/* A finite number followed by `stop` (or the end of the string when stop is 0). */
static bool parse_real_prefix(const char* s, char stop, double* out, const char** end) {
	if (!s || !*s || isspace((unsigned char)*s)) return false;
	char* e = NULL;
	errno = 0;
	const double v = strtod(s, &e);
	if (e == s || !isfinite(v) || fabs(v) > 1e9) return false;
	if (*e != stop) return false;
	*out = v;
	*end = e;
	return true;
}

/* "X,Y" (window point) or "X,Y,Z" (world point), the last number ending at a ':' or the end. */
static bool parse_point(const char* s, int n, double* out, const char** end) {
	const char* p = s;
	for (int k = 0; k < n; ++k) {
		const char stop = k + 1 < n ? ',' : (strchr(p, ':') ? ':' : '\0');
		if (!parse_real_prefix(p, stop, &out[k], &p)) return false;
		if (k + 1 < n) ++p;
	}
	*end = p;
	return true;
}

typedef struct key_name {
	const char* name;
	int key;
} key_name;

/* A key as typed: one character, as on a US layout (GLFW names keys by that layout's positions),
 * or the name of a key without one. */
static bool parse_key(const char* s, int* key, int* mods) {
	static const key_name named[] = {
	    {"space", GLFW_KEY_SPACE},
	    {"tab", GLFW_KEY_TAB},
	    {"up", GLFW_KEY_UP},
	    {"down", GLFW_KEY_DOWN},
	    {"left", GLFW_KEY_LEFT},
	    {"right", GLFW_KEY_RIGHT},
	    {"enter", GLFW_KEY_ENTER},
	    {"escape", GLFW_KEY_ESCAPE},
	    {"backspace", GLFW_KEY_BACKSPACE},
	    /* X11's names of the keys that CMake lists and some shells treat specially. */
	    {"bracketleft", GLFW_KEY_LEFT_BRACKET},
	    {"bracketright", GLFW_KEY_RIGHT_BRACKET},
	    {"semicolon", GLFW_KEY_SEMICOLON},
	};
	for (size_t i = 0; i < sizeof named / sizeof named[0]; ++i) {
		if (strcmp(s, named[i].name) == 0) {
			*key = named[i].key;
			*mods = 0;
			return true;
		}
	}
	if (strlen(s) != 1) return false;
	const unsigned char c = (unsigned char)s[0];
	*mods = 0;
	if (c >= 'a' && c <= 'z') {
		*key = GLFW_KEY_A + (c - 'a');
		return true;
	}
	if (c >= 'A' && c <= 'Z') {
		*key = GLFW_KEY_A + (c - 'A');
		*mods = GLFW_MOD_SHIFT;
		return true;
	}
	if (c >= '0' && c <= '9') {
		*key = GLFW_KEY_0 + (c - '0');
		return true;
	}
	/* Unshifted punctuation is its own key code; the shifted ones are their key with shift. */
	static const char plain[] = "',-./;=[\\]`";
	static const char shifted[] = "\"<_>?:+{|}~";
	const char* at = strchr(plain, c);
	if (at) {
		*key = (int)c;
		return true;
	}
	at = strchr(shifted, c);
	if (at && c != '\0') {
		*key = (int)(unsigned char)plain[at - shifted];
		*mods = GLFW_MOD_SHIFT;
		return true;
	}
	return false;
}

static int add_event(view_options* o, const view_event* e) {
	if (o->event_count >= VIEW_MAX_EVENTS) return usage(o, "more than %d scripted events", VIEW_MAX_EVENTS);
	o->events[o->event_count++] = *e;
	return VIEW_OK;
}

/* "F:ACTION:X,Y" */
static int parse_mouse(view_options* o, const char* value) {
	view_event e = {0};
	const char* p = NULL;
	if (!parse_long_prefix(value, 1, VIEW_MAX_FRAMES + 1, &e.frame, &p) || *p != ':')
		return usage(o, "--mouse: expected F:ACTION:X,Y with a frame F >= 1, got '%s'", value);
	++p;
	static const struct {
		const char* name;
		view_event_type type;
	} actions[] = {{"press:", VIEW_EVENT_PRESS}, {"move:", VIEW_EVENT_MOVE}, {"release:", VIEW_EVENT_RELEASE}};
	bool found = false;
	for (size_t i = 0; i < sizeof actions / sizeof actions[0]; ++i) {
		const size_t n = strlen(actions[i].name);
		if (strncmp(p, actions[i].name, n) == 0) {
			e.type = actions[i].type;
			p += n;
			found = true;
			break;
		}
	}
	if (!found) return usage(o, "--mouse: the action must be press, move or release, got '%s'", value);
	double xy[2];
	if (!parse_point(p, 2, xy, &p) || *p != '\0')
		return usage(o, "--mouse: expected a window point X,Y after the action, got '%s'", value);
	e.x = xy[0];
	e.y = xy[1];
	return add_event(o, &e);
}

/* "F:KEY" */
static int parse_key_event(view_options* o, const char* value) {
	view_event e = {0};
	const char* p = NULL;
	if (!parse_long_prefix(value, 1, VIEW_MAX_FRAMES + 1, &e.frame, &p) || *p != ':')
		return usage(o, "--key: expected F:KEY with a frame F >= 1, got '%s'", value);
	e.type = VIEW_EVENT_KEY;
	if (!parse_key(p + 1, &e.key, &e.mods)) return usage(o, "--key: unknown key '%s'", p + 1);
	return add_event(o, &e);
}

/* "I:X,Y,Z[:F-T]" (--drag) or "B:X,Y,Z[:F-T]" (--drag-body) */
static int parse_drag(view_options* o, const char* value, bool body) {
	if (o->drag_count >= VIEW_MAX_DRAGS) return usage(o, "more than %d drags", VIEW_MAX_DRAGS);
	const char* opt = body ? "--drag-body" : "--drag";
	const char* form = body ? "B:X,Y,Z[:F-T]" : "I:X,Y,Z[:F-T]";
	view_drag_script d = {0};
	d.body = body;
	const char* p = NULL;
	long index = 0;
	if (!parse_long_prefix(value, 0, (long)PBD_SCENE_MAX_PARTICLES - 1, &index, &p) || *p != ':')
		return usage(o, "%s: expected %s with a %s index %c, got '%s'", opt, form, body ? "body" : "particle", form[0],
		             value);
	d.index = (uint32_t)index;
	double xyz[3];
	if (!parse_point(p + 1, 3, xyz, &p))
		return usage(o, "%s: expected a world point X,Y,Z after the index, got '%s'", opt, value);
	for (int k = 0; k < 3; ++k) d.point[k] = (float)xyz[k];
	if (*p == ':') {
		if (!parse_long_prefix(p + 1, 1, VIEW_MAX_FRAMES, &d.from, &p) || *p != '-' ||
		    !parse_long_prefix(p + 1, 1, VIEW_MAX_FRAMES, &d.to, &p) || *p != '\0' || d.to < d.from)
			return usage(o, "%s: expected frames F-T with 1 <= F <= T after the point, got '%s'", opt, value);
	} else if (*p != '\0') {
		return usage(o, "%s: expected %s, got '%s'", opt, form, value);
	}
	o->drags[o->drag_count++] = d;
	return VIEW_OK;
}

/* Returns the option's value: attached ("--frames=5") or the next argument. NULL when missing
 * (message printed). */
static const char* option_value(view_options* o, int argc, char** argv, int* i, const char* name) {
	const char* arg = argv[*i];
	const size_t n = strlen(name);
	if (arg[n] == '=') return arg + n + 1;
	if (*i + 1 >= argc) {
		usage(o, "option %s needs a value", name);
		return NULL;
	}
	return argv[++*i];
}

static bool is_option(const char* arg, const char* name) {
	const size_t n = strlen(name);
	return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

int view_parse_options(int argc, char** argv, view_options* o, bool* help_shown) {
	*o = (view_options){.program = "pbd view", .frames = -1};
	*help_shown = false;
	for (int i = 1; i < argc; ++i) {
		const char* arg = argv[i];
		if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
			print_help(stdout);
			*help_shown = true;
			return VIEW_OK;
		}
		if (arg[0] != '-' || arg[1] == '\0') {
			if (o->scene_arg) return usage(o, "more than one pbd_scene given ('%s' and '%s')", o->scene_arg, arg);
			o->scene_arg = arg;
			continue;
		}
		/* Flags take no value. */
		static const char* const flags[] = {"--paused", "--hidden", "--quiet", "-q"};
		bool flag = false;
		for (size_t k = 0; k < sizeof flags / sizeof flags[0]; ++k) {
			if (strcmp(arg, flags[k]) == 0)
				flag = true;
			else if (is_option(arg, flags[k]) && arg[1] == '-')
				return usage(o, "option %s takes no value", flags[k]);
		}
		if (flag) {
			if (strcmp(arg, "--paused") == 0)
				o->paused = true;
			else if (strcmp(arg, "--hidden") == 0)
				o->hidden = true;
			else
				o->quiet = true;
			continue;
		}
		static const char* const valued[] = {"--size",  "--frames", "--screenshot", "--drag",
		                                     "--mouse", "--key",    "--track",      "--drag-body"};
		const char* name = NULL;
		for (size_t k = 0; k < sizeof valued / sizeof valued[0]; ++k)
			if (is_option(arg, valued[k])) name = valued[k];
		if (!name) return usage(o, "unknown option '%s'", arg);
		const char* value = option_value(o, argc, argv, &i, name);
		if (!value) return VIEW_USAGE;
		int rc = VIEW_OK;
		if (strcmp(name, "--size") == 0) {
			long w = 0, h = 0;
			const char* p = NULL;
			if (!parse_long_prefix(value, 16, PBD_RENDER_MAX_SIZE, &w, &p) || (*p != 'x' && *p != 'X') ||
			    !parse_long(p + 1, 16, PBD_RENDER_MAX_SIZE, &h))
				return usage(o, "--size: expected WxH with each in [16, %d], got '%s'", PBD_RENDER_MAX_SIZE, value);
			o->width = (int)w;
			o->height = (int)h;
		} else if (strcmp(name, "--frames") == 0) {
			if (!parse_long(value, 0, VIEW_MAX_FRAMES, &o->frames))
				return usage(o, "--frames: expected an integer in [0, %d], got '%s'", VIEW_MAX_FRAMES, value);
		} else if (strcmp(name, "--screenshot") == 0) {
			if (!*value) return usage(o, "--screenshot: empty file name");
			o->screenshot = value;
		} else if (strcmp(name, "--drag") == 0 || strcmp(name, "--drag-body") == 0) {
			rc = parse_drag(o, value, strcmp(name, "--drag-body") == 0);
		} else if (strcmp(name, "--mouse") == 0) {
			rc = parse_mouse(o, value);
		} else if (strcmp(name, "--key") == 0) {
			rc = parse_key_event(o, value);
		} else {
			long index = 0;
			if (!parse_long(value, 0, (long)PBD_SCENE_MAX_PARTICLES - 1, &index))
				return usage(o, "--track: expected a particle index, got '%s'", value);
			if (o->tracked_count >= VIEW_MAX_TRACKED)
				return usage(o, "more than %d tracked particles", VIEW_MAX_TRACKED);
			o->tracked[o->tracked_count++] = (uint32_t)index;
		}
		if (rc != VIEW_OK) return rc;
	}
	/* Scripted input needs a scripted run: in a live window the user's own input would mix in. */
	if (o->frames < 0 && (o->event_count > 0 || o->drag_count > 0))
		return usage(o, "--drag, --drag-body, --mouse and --key need --frames");
	for (int k = 0; k < o->event_count; ++k)
		if (o->events[k].frame > o->frames + 1)
			return usage(o, "a scripted event at frame %ld is past --frames %ld (+1)", o->events[k].frame, o->frames);
	for (int k = 0; k < o->drag_count; ++k) {
		view_drag_script* d = &o->drags[k];
		if (d->from == 0) {
			d->from = 1;
			d->to = o->frames;
		}
		if (d->to > o->frames || d->from > d->to)
			return usage(o, "--drag of %s %u: frames %ld-%ld are not within 1-%ld", d->body ? "body" : "particle",
			             d->index, d->from, d->to, o->frames);
		for (int j = 0; j < k; ++j)
			if (!(d->from > o->drags[j].to || o->drags[j].from > d->to))
				return usage(o, "--drag: the drags of %s %u and %s %u overlap (one mouse)",
				             o->drags[j].body ? "body" : "particle", o->drags[j].index, d->body ? "body" : "particle",
				             d->index);
	}
	return VIEW_OK;
}
