/* Strict typed reads from a cJSON tree, with messages that name the field's path. */
#include "json_read.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene.h"

const jr_range JR_ANY = {-INFINITY, INFINITY, false, false};
const jr_range JR_POSITIVE = {0.0, INFINITY, true, false};
const jr_range JR_NONNEG = {0.0, INFINITY, false, false};
const jr_range JR_UNIT = {0.0, 1.0, false, false};

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

/* cJSON says that a text is malformed but not exactly where (string errors point one past the
 * character) nor why. This scanner, run only after cJSON failed, walks the same grammar with
 * cJSON's leniencies (any byte <= 32 is blank, numbers are what strtod takes) and stops at the
 * first character that cannot continue the text. */
typedef struct syntax_scan {
	const char* s;
	size_t n, i;
	const char* why; /* set at the error */
	int depth;
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
	return true;
}

static bool scan_number(syntax_scan* c) {
	char buf[64];
	size_t k = 0;
	while (c->i + k < c->n && k + 1 < sizeof buf && strchr("0123456789+-.eE", c->s[c->i + k]) && c->s[c->i + k]) {
		buf[k] = c->s[c->i + k];
		++k;
	}
	buf[k] = '\0';
	char* end = NULL;
	strtod(buf, &end);
	if (end == buf) return scan_fail(c, "malformed number");
	c->i += (size_t)(end - buf);
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

/* The offset and reason of the first syntax error, or false if the scanner finds none. */
static bool locate_syntax_error(const char* text, size_t size, size_t* offset, const char** why) {
	syntax_scan c = {text, size, 0, NULL, 0};
	if (size >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) c.i = 3; /* UTF-8 byte order mark */
	scan_blank(&c);
	bool ok = scan_value(&c);
	if (ok) {
		scan_blank(&c);
		if (c.i < size) {
			ok = false;
			c.why = "unexpected text after the end of the top-level value";
		}
	}
	if (ok) return false;
	*offset = c.i;
	*why = c.why;
	return true;
}

cJSON* jr_parse(jr* r, const char* text, size_t size) {
	if (size > SCENE_MAX_FILE_BYTES) {
		jr_fail(r, "", "file too large (%zu bytes, the limit is %u)", size, SCENE_MAX_FILE_BYTES);
		return NULL;
	}
	/* cJSON stops at a 0 byte and would take what follows for the end of the input. */
	const char* nul = memchr(text, '\0', size);
	if (nul) {
		size_t line, col;
		line_col(text, (size_t)(nul - text), &line, &col);
		r->failed = true;
		snprintf(r->message, r->message_size, "%s:%zu:%zu: syntax error: a 0 byte in the text", r->source, line, col);
		return NULL;
	}
	/* A terminated copy: the parser then also rejects anything after the top-level value. */
	char* copy = malloc(size + 1);
	if (!copy) {
		jr_fail(r, "", "out of memory");
		return NULL;
	}
	memcpy(copy, text, size);
	copy[size] = '\0';
	const char* end = NULL;
	cJSON* root = cJSON_ParseWithLengthOpts(copy, size + 1, &end, 1);
	if (!root) {
		size_t offset = end ? (size_t)(end - copy) : 0;
		const char* why = NULL;
		if (!locate_syntax_error(copy, size, &offset, &why)) why = "malformed JSON";
		if (offset > size) offset = size;
		size_t line, col;
		line_col(copy, offset, &line, &col);
		r->failed = true;
		snprintf(r->message, r->message_size, "%s:%zu:%zu: syntax error: %s", r->source, line, col, why);
	}
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

/* "in (0, 2)", ">= 0", ... */
static void range_text(char* out, size_t size, jr_range range) {
	bool has_lo = isfinite(range.lo), has_hi = isfinite(range.hi);
	if (has_lo && has_hi)
		snprintf(out, size, "in %c%g, %g%c", range.lo_open ? '(' : '[', range.lo, range.hi, range.hi_open ? ')' : ']');
	else if (has_lo)
		snprintf(out, size, "%s %g", range.lo_open ? ">" : ">=", range.lo);
	else
		snprintf(out, size, "%s %g", range.hi_open ? "<" : "<=", range.hi);
}

static bool range_fail(jr* r, const char* path, double v, jr_range range) {
	char want[96];
	range_text(want, sizeof want, range);
	return jr_fail(r, path, "must be %s (got %g)", want, v);
}

bool jr_number_item(jr* r, const cJSON* item, const char* path, jr_range range, double* out) {
	if (!cJSON_IsNumber(item)) return jr_fail(r, path, "expected a number (got %s)", jr_type_name(item));
	double v = item->valuedouble;
	/* cJSON reads 1e999 as infinity; nothing in a scene is meaningfully that large. */
	if (!isfinite(v)) return jr_fail(r, path, "must be a finite number");
	if (fabs(v) > SCENE_MAX_MAGNITUDE)
		return jr_fail(r, path, "magnitude must be at most %g (got %g)", SCENE_MAX_MAGNITUDE, v);
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

/* A value printed in a message: integers in full (an index of 2^63 reads as such), others %g. */
static void format_number(char* out, size_t size, double v) {
	if (v == floor(v) && fabs(v) < 1e21)
		snprintf(out, size, "%.0f", v);
	else
		snprintf(out, size, "%.17g", v);
}

bool jr_to_real(jr* r, const char* path, double v, jr_range range, pbd_real* out) {
	const pbd_real p = (pbd_real)v;
	/* The magnitude cap keeps every accepted number far below the type's largest, so the only
	 * thing conversion can do beyond rounding is to lose a small non-zero magnitude: a positive
	 * mass, compliance or size that turned into 0 would silently mean "pinned", "rigid" or
	 * "none". Signed quantities (plane offsets) may round to 0 harmlessly. */
	if (!isfinite((double)p)) return jr_fail(r, path, "does not fit the %s scalar type (got %g)", JR_REAL_NAME, v);
	if (range.lo >= 0 && v != 0 && !(fabs((double)p) >= JR_REAL_MIN))
		return jr_fail(r, path, "too small for the %s scalar type: must be 0 or at least %g (got %g)", JR_REAL_NAME,
		               JR_REAL_MIN, v);
	/* Rounding may land on an excluded bound (an omega of 1.999999999 becomes 2 in float). */
	if (!in_range((double)p, range)) {
		char want[96];
		range_text(want, sizeof want, range);
		return jr_fail(r, path, "must be %s once rounded to the %s scalar type (got %.17g, which rounds to %.9g)", want,
		               JR_REAL_NAME, v, (double)p);
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
	if (v != floor(v)) return jr_fail(r, path, "must be an integer (got %g)", v);
	*out = v;
	return true;
}

bool jr_int_item(jr* r, const cJSON* item, const char* path, int64_t lo, int64_t hi, int64_t* out) {
	double v = 0;
	if (!whole_number(r, item, path, &v)) return false;
	char got[64];
	format_number(got, sizeof got, v);
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
	char got[64];
	format_number(got, sizeof got, v);
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

bool jr_vec3_item(jr* r, const cJSON* item, const char* path, pbd_vec3* out) {
	if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 3)
		return jr_fail(r, path, "expected an array of 3 numbers (got %s)",
		               cJSON_IsArray(item) ? "an array of another length" : jr_type_name(item));
	double v[3];
	int i = 0;
	for (const cJSON* c = item->child; c; c = c->next, ++i) {
		char p[JR_PATH_MAX];
		jr_path_index(p, path, (size_t)i);
		if (!jr_number_item(r, c, p, JR_ANY, &v[i])) return false;
	}
	out->x = (pbd_real)v[0];
	out->y = (pbd_real)v[1];
	out->z = (pbd_real)v[2];
	return true;
}

bool jr_vec3(jr* r, const cJSON* obj, const char* path, const char* key, pbd_vec3 def, pbd_vec3* out) {
	const cJSON* item = jr_get(obj, key);
	if (!item) {
		*out = def;
		return true;
	}
	char p[JR_PATH_MAX];
	jr_path_key(p, path, key);
	return jr_vec3_item(r, item, p, out);
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
