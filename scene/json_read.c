/* Strict typed reads from a cJSON tree, with messages that name the field's path. */
#include "json_read.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbd/scene.h"

const jr_range JR_UNIT = {0.0, 1.0, false, false};

void jr_format_number(char* out, size_t size, double v) {
	/* Integers in full (an index of 2^63 reads as such), others with the fewest digits that
	 * round-trip. */
	if (v == floor(v) && fabs(v) < 1e21) {
		snprintf(out, size, "%.0f", v);
		return;
	}
	for (int digits = 1; digits <= 17; ++digits) {
		snprintf(out, size, "%.*g", digits, v);
		if (strtod(out, NULL) == v) return;
	}
}

bool jr_fail(jr* r, const char* path, const char* fmt, ...) {
	if (r->failed) return false;
	r->failed = true;
	int n = (path && path[0]) ? snprintf(r->message, r->message_size, "%s: %s: ", r->source, path)
	                          : snprintf(r->message, r->message_size, "%s: ", r->source);
	if (n < 0) n = 0;
	if ((size_t)n < r->message_size) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(r->message + n, r->message_size - (size_t)n, fmt, ap);
		va_end(ap);
	}
	/* One line, always: a newline in a quoted value would split the message. */
	for (char* c = r->message; *c; ++c)
		if (*c == '\n' || *c == '\r') *c = ' ';
	return false;
}

void jr_path_key(char* out, const char* path, const char* key) {
	if (path[0])
		snprintf(out, JR_PATH_MAX, "%s.%s", path, key);
	else
		snprintf(out, JR_PATH_MAX, "%s", key);
}

void jr_path_index(char* out, const char* path, size_t index) { snprintf(out, JR_PATH_MAX, "%s[%zu]", path, index); }

const char* jr_type_name(const cJSON* item) {
	if (!item) return "nothing";
	if (cJSON_IsNumber(item)) return "a number";
	if (cJSON_IsString(item)) return "a string";
	if (cJSON_IsBool(item)) return "a boolean";
	if (cJSON_IsNull(item)) return "null";
	if (cJSON_IsArray(item)) return "an array";
	if (cJSON_IsObject(item)) return "an object";
	return "an unknown value";
}

/* Line and column (in characters, from 1) of byte `offset`, for syntax errors. */
static void line_col(const char* text, size_t offset, size_t* line, size_t* col) {
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < offset; ++i) {
		if (text[i] == '\n') {
			++*line;
			*col = 1;
		} else if (((unsigned char)text[i] & 0xC0u) != 0x80u) {
			++*col; /* UTF-8 continuation bytes do not start a new character */
		}
	}
}

/* A scan of the text before cJSON sees it, which builds nothing. It walks the same grammar with
 * cJSON's leniencies (any byte <= 32 is blank, numbers are what strtod takes) and stops at the
 * first character that cannot continue the text, which cJSON would not say exactly (string
 * errors point one past the character) nor why. On the way it adds up what cJSON will ask its
 * allocator for: a node per value, each string (keys included) with 2 bytes more than it has in
 * the text, and each number's text with 1 more (this cJSON copies it out to convert it), so that
 * a text whose tree would not fit the budget is refused before a byte of the tree exists. */
typedef struct syntax_scan {
	const char* s;
	size_t n, i;
	const char* why; /* set at the error */
	int depth;
	uint64_t values; /* JSON values so far */
	uint64_t bytes;  /* what the parser will request for them */
} syntax_scan;

static void scan_blank(syntax_scan* c) {
	while (c->i < c->n && (unsigned char)c->s[c->i] <= 32u) ++c->i;
}

static bool scan_fail(syntax_scan* c, const char* why) {
	c->why = c->i >= c->n ? "unexpected end of input" : why;
	return false;
}

static bool scan_value(syntax_scan* c);

static bool scan_string(syntax_scan* c) {
	const size_t start = c->i;
	++c->i; /* the opening quote */
	while (c->i < c->n && c->s[c->i] != '"') {
		if (c->s[c->i] == '\\') {
			++c->i;
			if (c->i >= c->n) break;
			char e = c->s[c->i];
			if (e == 'u') {
				for (int k = 1; k <= 4; ++k) {
					char h = c->i + (size_t)k < c->n ? c->s[c->i + (size_t)k] : '\0';
					if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F'))) {
						c->i += (size_t)k;
						return scan_fail(c, "bad \\u escape in a string");
					}
				}
				c->i += 4;
			} else if (!strchr("\"\\/bfnrt", e)) {
				return scan_fail(c, "unknown escape in a string");
			}
		}
		++c->i;
	}
	if (c->i >= c->n) return scan_fail(c, "unterminated string");
	++c->i;
	c->bytes += (uint64_t)(c->i - start); /* the content and 2 bytes, an upper bound */
	return true;
}

static size_t scan_digits(const char* s, size_t i, size_t end) {
	while (i < end && s[i] >= '0' && s[i] <= '9') ++i;
	return i;
}

/* cJSON takes the longest run of the characters a number can hold, copies it out (allocated: a
 * run of any length is read) and converts it with strtod, then resumes after what strtod took.
 * strtod takes from such a run, in the C locale, exactly: [-+]? (digits [. digits?] | . digits)
 * ([eE] [-+]? digits)?, so that is matched here without a copy. */
static bool scan_number(syntax_scan* c) {
	size_t run = c->i;
	while (run < c->n && c->s[run] && strchr("0123456789+-.eE", c->s[run])) ++run;
	size_t k = c->i;
	if (k < run && (c->s[k] == '-' || c->s[k] == '+')) ++k;
	const size_t int_start = k;
	k = scan_digits(c->s, k, run);
	bool mantissa = k > int_start;
	if (k < run && c->s[k] == '.') {
		const size_t frac = scan_digits(c->s, k + 1, run);
		if (mantissa || frac > k + 1) {
			mantissa = true;
			k = frac;
		}
	}
	if (!mantissa) return scan_fail(c, "malformed number");
	if (k < run && (c->s[k] == 'e' || c->s[k] == 'E')) {
		size_t e = k + 1;
		if (e < run && (c->s[e] == '-' || c->s[e] == '+')) ++e;
		const size_t e_end = scan_digits(c->s, e, run);
		if (e_end > e) k = e_end;
	}
	c->bytes += (uint64_t)(run - c->i) + 1;
	c->i = k;
	return true;
}

static bool scan_literal(syntax_scan* c, const char* word) {
	size_t len = strlen(word);
	for (size_t k = 0; k < len; ++k, ++c->i)
		if (c->i >= c->n || c->s[c->i] != word[k])
			return scan_fail(c,
			                 word[0] == 't' ? "expected true" : (word[0] == 'f' ? "expected false" : "expected null"));
	return true;
}

static bool scan_container(syntax_scan* c, char close) {
	if (++c->depth > CJSON_NESTING_LIMIT) return scan_fail(c, "nested too deeply");
	++c->i; /* the opening bracket */
	scan_blank(c);
	if (c->i < c->n && c->s[c->i] == close) {
		++c->i;
		--c->depth;
		return true;
	}
	for (;;) {
		scan_blank(c);
		if (close == '}') {
			if (c->i < c->n && c->s[c->i] == '}') return scan_fail(c, "trailing comma before '}'");
			if (c->i >= c->n || c->s[c->i] != '"') return scan_fail(c, "expected a key in double quotes");
			if (!scan_string(c)) return false;
			scan_blank(c);
			if (c->i >= c->n || c->s[c->i] != ':') return scan_fail(c, "expected ':' after the key");
			++c->i;
			scan_blank(c);
		} else if (c->i < c->n && c->s[c->i] == ']') {
			return scan_fail(c, "trailing comma before ']'");
		}
		if (!scan_value(c)) return false;
		scan_blank(c);
		if (c->i < c->n && c->s[c->i] == ',') {
			++c->i;
			continue;
		}
		if (c->i < c->n && c->s[c->i] == close) {
			++c->i;
			--c->depth;
			return true;
		}
		return scan_fail(c, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static bool scan_value(syntax_scan* c) {
	if (c->i >= c->n) return scan_fail(c, "");
	++c->values;
	c->bytes += sizeof(cJSON);
	char ch = c->s[c->i];
	if (ch == '{') return scan_container(c, '}');
	if (ch == '[') return scan_container(c, ']');
	if (ch == '"') return scan_string(c);
	if (ch == '-' || (ch >= '0' && ch <= '9')) return scan_number(c);
	if (ch == 't') return scan_literal(c, "true");
	if (ch == 'f') return scan_literal(c, "false");
	if (ch == 'n') return scan_literal(c, "null");
	return scan_fail(c, "unexpected character (a value must be an object, array, string, number, true, false or null)");
}

/* Scans the whole text; false with c->i at the error and c->why set on a syntax error. *top gets
 * the first character of the top-level value. */
static bool scan_text(syntax_scan* c, const char* text, size_t size, char* top) {
	memset(c, 0, sizeof *c);
	c->s = text;
	c->n = size;
	if (size >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) c->i = 3; /* UTF-8 byte order mark */
	scan_blank(c);
	*top = c->i < size ? text[c->i] : '\0';
	if (!scan_value(c)) return false;
	scan_blank(c);
	if (c->i < size) {
		c->why = "unexpected text after the end of the top-level value";
		return false;
	}
	return true;
}

/* The counting allocator behind cJSON. cJSON's hooks are process-wide function pointers without
 * a context argument, so the count lives in thread-local storage: a load counts its own parse,
 * whichever thread runs it. Outside jr_parse (budget 0) nothing is counted or refused. The count
 * only grows: what cJSON frees while it parses (its copies of numbers) stays counted, which
 * keeps the count an upper bound of what it holds without a size header on every block. */
typedef struct alloc_count {
	void* (*fn)(size_t); /* NULL: malloc */
	uint64_t used, budget;
	bool over_budget, failed;
} alloc_count;

static _Thread_local alloc_count counter;

static void* counted_malloc(size_t n) {
	alloc_count* a = &counter;
	if (a->budget && n > a->budget - a->used) {
		a->over_budget = true;
		return NULL;
	}
	void* p = a->fn ? a->fn(n) : malloc(n);
	if (!p) {
		a->failed = true;
		return NULL;
	}
	a->used += n;
	return p;
}

static void counted_free(void* p) { free(p); }

static void install_hooks(void) {
	cJSON_Hooks hooks = {counted_malloc, counted_free};
	cJSON_InitHooks(&hooks);
}

void jr_install_hooks(void) {
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, install_hooks);
}

void pbd_scene_set_parse_malloc(void* (*fn)(size_t)) { counter.fn = fn; }

uint64_t jr_parse_budget(size_t size) {
	return (uint64_t)PBD_SCENE_JSON_BASE_BYTES + (uint64_t)PBD_SCENE_JSON_BYTES_PER_BYTE * (uint64_t)size;
}

static const char* top_type_name(char top) {
	switch (top) {
	case '{':
		return "an object";
	case '[':
		return "an array";
	case '"':
		return "a string";
	case 't':
	case 'f':
		return "a boolean";
	case 'n':
		return "null";
	default:
		return "a number";
	}
}

/* "source:line:col: syntax error: why" */
static void syntax_error(jr* r, const char* text, size_t offset, const char* why) {
	size_t line, col;
	line_col(text, offset, &line, &col);
	r->failed = true;
	snprintf(r->message, r->message_size, "%s:%zu:%zu: syntax error: %s", r->source, line, col, why);
}

/* The parse budget's overrun: `values` > 0 when the scan predicted it (`need` bytes), 0 when the
 * allocator met it. */
static void budget_fail(jr* r, uint64_t values, uint64_t need, size_t size) {
	char need_s[32], budget_s[32], size_s[32];
	pbd_scene_format_bytes(need_s, sizeof need_s, need);
	pbd_scene_format_bytes(budget_s, sizeof budget_s, jr_parse_budget(size));
	pbd_scene_format_bytes(size_s, sizeof size_s, size);
	if (values)
		jr_fail(r, "",
		        "%llu JSON values would take %s of memory to parse, more than the %s allowed for a text of %s "
		        "(%u MiB + %u bytes per byte of text)",
		        (unsigned long long)values, need_s, budget_s, size_s, PBD_SCENE_JSON_BASE_BYTES >> 20,
		        PBD_SCENE_JSON_BYTES_PER_BYTE);
	else
		jr_fail(r, "",
		        "parsing needed more than the %s of memory allowed for a text of %s (%u MiB + %u bytes per byte "
		        "of text)",
		        budget_s, size_s, PBD_SCENE_JSON_BASE_BYTES >> 20, PBD_SCENE_JSON_BYTES_PER_BYTE);
}

static cJSON* parse_text(jr* r, const char* text, size_t size, bool terminated) {
	if (size > PBD_SCENE_MAX_FILE_BYTES) {
		char size_s[32];
		pbd_scene_format_bytes(size_s, sizeof size_s, size);
		jr_fail(r, "", "file too large (%s, the limit is %u MiB)", size_s, PBD_SCENE_MAX_FILE_BYTES >> 20);
		return NULL;
	}
	/* cJSON stops at a 0 byte and would take what follows for the end of the input. */
	const char* nul = memchr(text, '\0', size);
	if (nul) {
		syntax_error(r, text, (size_t)(nul - text), "a 0 byte in the text");
		return NULL;
	}
	syntax_scan c;
	char top;
	if (!scan_text(&c, text, size, &top)) {
		syntax_error(r, text, c.i > size ? size : c.i, c.why);
		return NULL;
	}
	/* Scenes are objects: anything else is refused before a tree is built for it. */
	if (top != '{') {
		jr_fail(r, "", "the top level must be an object (got %s)", top_type_name(top));
		return NULL;
	}
	if (c.bytes > jr_parse_budget(size)) {
		budget_fail(r, c.values, c.bytes, size);
		return NULL;
	}
	/* The parser rejects anything after the top-level value only when it sees a terminator. */
	char* copy = NULL;
	if (!terminated) {
		copy = malloc(size + 1);
		if (!copy) {
			jr_fail(r, "", "out of memory");
			return NULL;
		}
		memcpy(copy, text, size);
		copy[size] = '\0';
	}
	const char* src = copy ? copy : text;
	jr_install_hooks();
	counter.used = 0;
	counter.budget = jr_parse_budget(size);
	counter.over_budget = counter.failed = false;
	const char* end = NULL;
	cJSON* root = cJSON_ParseWithLengthOpts(src, size + 1, &end, 1);
	const alloc_count seen = counter;
	counter.budget = 0;
	if (!root) {
		char used_s[32];
		pbd_scene_format_bytes(used_s, sizeof used_s, seen.used);
		if (seen.failed)
			jr_fail(r, "", "out of memory while parsing (%s held by then)", used_s);
		else if (seen.over_budget)
			budget_fail(r, 0, seen.used, size);
		else /* the scan found no error where cJSON did: its position is all there is */
			syntax_error(r, src, end && end >= src && end <= src + size ? (size_t)(end - src) : 0, "malformed JSON");
	}
	free(copy);
	return root;
}

cJSON* jr_parse(jr* r, const char* text, size_t size, bool terminated) {
	if (size > PBD_SCENE_MAX_FILE_BYTES || !jr_has_comments(text, size)) return parse_text(r, text, size, terminated);
	char* copy = malloc(size + 1);
	if (!copy) {
		jr_fail(r, "", "out of memory");
		return NULL;
	}
	memcpy(copy, text, size);
	copy[size] = '\0';
	size_t bad = 0;
	cJSON* root = NULL;
	if (jr_blank_comments(copy, size, &bad))
		root = parse_text(r, copy, size, true);
	else
		syntax_error(r, copy, bad, "a /* comment that does not end");
	free(copy);
	return root;
}

/* Edit distance, to suggest the key that an unknown one was probably meant to be. */
static size_t edit_distance(const char* a, const char* b) {
	size_t la = strlen(a), lb = strlen(b);
	if (la > 31 || lb > 31) return 99;
	size_t row[32];
	for (size_t j = 0; j <= lb; ++j) row[j] = j;
	for (size_t i = 1; i <= la; ++i) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; ++j) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < best) best = row[j] + 1;
			if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

bool jr_object(jr* r, const cJSON* item, const char* path, const char* const* allowed) {
	if (!cJSON_IsObject(item)) return jr_fail(r, path, "expected an object (got %s)", jr_type_name(item));
	for (const cJSON* c = item->child; c; c = c->next) {
		const char* key = c->string ? c->string : "";
		bool known = false;
		for (const char* const* a = allowed; *a; ++a)
			if (strcmp(*a, key) == 0) known = true;
		char p[JR_PATH_MAX];
		jr_path_key(p, path, key);
		if (!known) {
			const char* best = NULL;
			size_t best_d = 3; /* suggest only close matches */
			for (const char* const* a = allowed; *a; ++a) {
				size_t d = edit_distance(key, *a);
				if (d < best_d) {
					best_d = d;
					best = *a;
				}
			}
			if (best) return jr_fail(r, p, "unknown key (did you mean \"%s\"?)", best);
			char list[256] = "";
			size_t used = 0;
			for (const char* const* a = allowed; *a && used < sizeof list; ++a) {
				int n = snprintf(list + used, sizeof list - used, "%s%s", a == allowed ? "" : ", ", *a);
				if (n < 0) break;
				used += (size_t)n;
			}
			return jr_fail(r, p, "unknown key (expected one of: %s)", list);
		}
		for (const cJSON* d = item->child; d != c; d = d->next)
			if (d->string && strcmp(d->string, key) == 0) return jr_fail(r, p, "duplicate key");
	}
	return true;
}

const cJSON* jr_get(const cJSON* obj, const char* key) { return cJSON_GetObjectItemCaseSensitive(obj, key); }

static bool in_range(double v, jr_range range) {
	if (range.lo_open ? !(v > range.lo) : !(v >= range.lo)) return false;
	if (range.hi_open ? !(v < range.hi) : !(v <= range.hi)) return false;
	return true;
}

/* "in (0, 2]" */
static void range_text(char* out, size_t size, jr_range range) {
	char lo[JR_NUMBER_MAX], hi[JR_NUMBER_MAX];
	jr_format_number(lo, sizeof lo, range.lo);
	jr_format_number(hi, sizeof hi, range.hi);
	snprintf(out, size, "in %c%s, %s%c", range.lo_open ? '(' : '[', lo, hi, range.hi_open ? ')' : ']');
}

static bool range_fail(jr* r, const char* path, double v, jr_range range) {
	char want[96], got[JR_NUMBER_MAX];
	range_text(want, sizeof want, range);
	jr_format_number(got, sizeof got, v);
	return jr_fail(r, path, "must be %s (got %s)", want, got);
}

bool jr_number_item(jr* r, const cJSON* item, const char* path, jr_range range, double* out) {
	if (!cJSON_IsNumber(item)) return jr_fail(r, path, "expected a number (got %s)", jr_type_name(item));
	double v = item->valuedouble;
	/* cJSON reads 1e999 as infinity; nothing in a scene is meaningfully that large. */
	if (!isfinite(v)) return jr_fail(r, path, "must be a finite number");
	if (!in_range(v, range)) return range_fail(r, path, v, range);
	*out = v;
	return true;
}

bool jr_real(jr* r, const cJSON* obj, const char* path, const char* key, double def, jr_range range, double* out) {
	const cJSON* item = jr_get(obj, key);
	if (!item) {
		*out = def;
		return true;
	}
	char p[JR_PATH_MAX];
	jr_path_key(p, path, key);
	return jr_number_item(r, item, p, range, out);
}

bool jr_to_real(jr* r, const char* path, double v, jr_range range, pbd_real* out) {
	const pbd_real p = (pbd_real)v;
	/* The magnitude cap keeps every accepted number far below the type's largest, so the only
	 * thing conversion can do beyond rounding is to lose a small non-zero magnitude: a positive
	 * mass, compliance or size that turned into 0 would silently mean "pinned", "hard" or
	 * "none". Signed quantities (plane offsets) may round to 0 harmlessly. */
	char got[JR_NUMBER_MAX];
	jr_format_number(got, sizeof got, v);
	if (!isfinite((double)p)) return jr_fail(r, path, "does not fit the %s scalar type (got %s)", JR_REAL_NAME, got);
	if (range.lo >= 0 && v != 0 && !(fabs((double)p) >= JR_REAL_MIN)) {
		char min[JR_NUMBER_MAX];
		jr_format_number(min, sizeof min, JR_REAL_MIN);
		return jr_fail(r, path, "too small for the %s scalar type: must be 0 or at least %s (got %s)", JR_REAL_NAME,
		               min, got);
	}
	/* Rounding may land on an excluded bound (an omega of 1.999999999 becomes 2 in float). Past
	 * an included one it moves by half a unit in the last place at most (a dt of 1e-9 becomes
	 * 9.99999972e-10), which changes nothing the bound is there for. */
	const double q = (double)p;
	if ((range.lo_open && !(q > range.lo)) || (range.hi_open && !(q < range.hi))) {
		char want[96];
		range_text(want, sizeof want, range);
		char rounded[JR_NUMBER_MAX];
		jr_format_number(rounded, sizeof rounded, (double)p);
		return jr_fail(r, path, "must be %s once rounded to the %s scalar type (got %s, which rounds to %s)", want,
		               JR_REAL_NAME, got, rounded);
	}
	*out = p;
	return true;
}

bool jr_real_p(jr* r, const cJSON* obj, const char* path, const char* key, pbd_real def, jr_range range,
               pbd_real* out) {
	const cJSON* item = jr_get(obj, key);
	if (!item) {
		*out = def;
		return true;
	}
	char p[JR_PATH_MAX];
	jr_path_key(p, path, key);
	double v = 0;
	return jr_number_item(r, item, p, range, &v) && jr_to_real(r, p, v, range, out);
}

/* The checks every integer shares: a finite whole number. */
static bool whole_number(jr* r, const cJSON* item, const char* path, double* out) {
	if (!cJSON_IsNumber(item)) return jr_fail(r, path, "expected an integer (got %s)", jr_type_name(item));
	double v = item->valuedouble;
	if (!isfinite(v)) return jr_fail(r, path, "must be a finite number");
	if (v != floor(v)) {
		char got[JR_NUMBER_MAX];
		jr_format_number(got, sizeof got, v);
		return jr_fail(r, path, "must be an integer (got %s)", got);
	}
	*out = v;
	return true;
}

bool jr_int_item(jr* r, const cJSON* item, const char* path, int64_t lo, int64_t hi, int64_t* out) {
	double v = 0;
	if (!whole_number(r, item, path, &v)) return false;
	char got[JR_NUMBER_MAX];
	jr_format_number(got, sizeof got, v);
	/* Converting a double outside [-2^63, 2^63) to int64 is undefined, and (double)INT64_MAX
	 * rounds up to 2^63, so the bounds cannot be compared as doubles: first make sure the value
	 * converts, then compare exactly as integers. */
	if (v < -0x1p63) return jr_fail(r, path, "must be >= %lld (got %s)", (long long)lo, got);
	if (v >= 0x1p63) return jr_fail(r, path, "must be <= %lld (got %s)", (long long)hi, got);
	const int64_t i = (int64_t)v;
	if (i < lo) return jr_fail(r, path, "must be >= %lld (got %s)", (long long)lo, got);
	if (i > hi) return jr_fail(r, path, "must be <= %lld (got %s)", (long long)hi, got);
	*out = i;
	return true;
}

bool jr_index_item(jr* r, const cJSON* item, const char* path, uint32_t count, const char* what, uint32_t* out) {
	double v = 0;
	if (!whole_number(r, item, path, &v)) return false;
	char got[JR_NUMBER_MAX];
	jr_format_number(got, sizeof got, v);
	if (v < 0) return jr_fail(r, path, "must be >= 0 (got %s)", got);
	/* count <= UINT32_MAX is exact in double, so the comparison is too, whatever v is. */
	if (v >= (double)count) return jr_fail(r, path, "index %s out of range (%s)", got, what);
	*out = (uint32_t)v;
	return true;
}

bool jr_int(jr* r, const cJSON* obj, const char* path, const char* key, int64_t def, int64_t lo, int64_t hi,
            int64_t* out) {
	const cJSON* item = jr_get(obj, key);
	if (!item) {
		*out = def;
		return true;
	}
	char p[JR_PATH_MAX];
	jr_path_key(p, path, key);
	return jr_int_item(r, item, p, lo, hi, out);
}

bool jr_bool(jr* r, const cJSON* obj, const char* path, const char* key, bool def, bool* out) {
	const cJSON* item = jr_get(obj, key);
	if (!item) {
		*out = def;
		return true;
	}
	if (!cJSON_IsBool(item)) {
		char p[JR_PATH_MAX];
		jr_path_key(p, path, key);
		return jr_fail(r, p, "expected true or false (got %s)", jr_type_name(item));
	}
	*out = cJSON_IsTrue(item);
	return true;
}

bool jr_string(jr* r, const cJSON* obj, const char* path, const char* key, const char* def, size_t max_len,
               const char** out) {
	const cJSON* item = jr_get(obj, key);
	if (!item) {
		*out = def;
		return true;
	}
	char p[JR_PATH_MAX];
	jr_path_key(p, path, key);
	if (!cJSON_IsString(item) || !item->valuestring)
		return jr_fail(r, p, "expected a string (got %s)", jr_type_name(item));
	const char* s = item->valuestring;
	size_t len = strlen(s);
	if (len > max_len) return jr_fail(r, p, "too long (%zu bytes, at most %zu)", len, max_len);
	for (size_t i = 0; i < len; ++i)
		if ((unsigned char)s[i] < 0x20u || s[i] == 0x7f) return jr_fail(r, p, "must not hold control characters");
	*out = s;
	return true;
}

bool jr_enum(jr* r, const cJSON* obj, const char* path, const char* key, int def, const char* const* names,
             const char* const* aliases, const int* alias_values, int* out) {
	const char* s = NULL;
	if (!jr_string(r, obj, path, key, NULL, 64, &s)) return false;
	if (!s) {
		*out = def;
		return true;
	}
	for (int i = 0; names[i]; ++i) {
		if (strcmp(names[i], s) == 0) {
			*out = i;
			return true;
		}
	}
	for (int i = 0; aliases && aliases[i]; ++i) {
		if (strcmp(aliases[i], s) == 0) {
			*out = alias_values[i];
			return true;
		}
	}
	char list[160] = "";
	size_t used = 0;
	for (int i = 0; names[i] && used < sizeof list; ++i) {
		int n = snprintf(list + used, sizeof list - used, "%s\"%s\"", i == 0 ? "" : ", ", names[i]);
		if (n < 0) break;
		used += (size_t)n;
	}
	char p[JR_PATH_MAX];
	jr_path_key(p, path, key);
	return jr_fail(r, p, "unknown value \"%s\" (expected one of %s)", s, list);
}

bool jr_vec3_item(jr* r, const cJSON* item, const char* path, double cap, pbd_vec3* out) {
	if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 3)
		return jr_fail(r, path, "expected an array of 3 numbers (got %s)",
		               cJSON_IsArray(item) ? "an array of another length" : jr_type_name(item));
	double v[3];
	int i = 0;
	for (const cJSON* c = item->child; c; c = c->next, ++i) {
		char p[JR_PATH_MAX];
		jr_path_index(p, path, (size_t)i);
		if (!jr_number_item(r, c, p, JR_SYMMETRIC(cap), &v[i])) return false;
	}
	out->x = (pbd_real)v[0];
	out->y = (pbd_real)v[1];
	out->z = (pbd_real)v[2];
	return true;
}

bool jr_vec3(jr* r, const cJSON* obj, const char* path, const char* key, pbd_vec3 def, double cap, pbd_vec3* out) {
	const cJSON* item = jr_get(obj, key);
	if (!item) {
		*out = def;
		return true;
	}
	char p[JR_PATH_MAX];
	jr_path_key(p, path, key);
	return jr_vec3_item(r, item, p, cap, out);
}

bool jr_array(jr* r, const cJSON* obj, const char* path, const char* key, const cJSON** out, size_t* count) {
	const cJSON* item = jr_get(obj, key);
	*out = NULL;
	*count = 0;
	if (!item) return true;
	if (!cJSON_IsArray(item)) {
		char p[JR_PATH_MAX];
		jr_path_key(p, path, key);
		return jr_fail(r, p, "expected an array (got %s)", jr_type_name(item));
	}
	*out = item;
	/* cJSON_GetArraySize returns int; count by walking so a huge array cannot overflow it. */
	size_t n = 0;
	for (const cJSON* c = item->child; c; c = c->next) ++n;
	*count = n;
	return true;
}
