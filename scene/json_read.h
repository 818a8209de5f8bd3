/* Strict typed reads from a cJSON tree, with one-line messages that name the field's path
 * ("objects[2].mass.value: must be > 0 (got -1)"). Internal to the scene library.
 *
 * Every getter takes the parent object and a key, writes the default when the key is absent,
 * and returns false after recording a message when the value is there but wrong. Only the
 * first failure is kept: later ones would describe its consequences. */
#ifndef PBD_APP_JSON_READ_H
#define PBD_APP_JSON_READ_H

#include <float.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "pbd/types.h"

#if defined(__GNUC__)
#define JR_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define JR_PRINTF(fmt, args)
#endif

/* Room for a field path; deeper or longer paths are cut, which only shortens a message. */
#define JR_PATH_MAX 160

typedef struct jr {
	const char* source; /* file name (or built-in label) that starts every message */
	char* message;      /* where the message goes */
	size_t message_size;
	bool failed;
} jr;

/* The smallest non-zero magnitude a non-negative quantity may have: the smallest normal number
 * of pbd_real (about 1.2e-38 in float builds, 2.2e-308 in double builds). Below it a value would
 * become 0 or lose its precision on conversion. */
#ifdef PBD_DOUBLE
#define JR_REAL_MIN  DBL_MIN
#define JR_REAL_NAME "double"
#else
#define JR_REAL_MIN  ((double)FLT_MIN)
#define JR_REAL_NAME "float"
#endif

/* A closed, open or half-open interval. Every number a scene holds is read against one, and
 * every one has finite bounds: the caps per kind of quantity in scene.h. */
typedef struct jr_range {
	double lo, hi;
	bool lo_open, hi_open;
} jr_range;

extern const jr_range JR_UNIT;                                      /* [0, 1] */
#define JR_SYMMETRIC(cap) ((jr_range){-(cap), (cap), false, false}) /* [-cap, cap] */
#define JR_NONNEG(cap)    ((jr_range){0.0, (cap), false, false})    /* [0, cap] */
#define JR_POSITIVE(cap)  ((jr_range){0.0, (cap), true, false})     /* (0, cap] */

/* A number for a message, with the fewest digits that read back to the same double: 1.0000001
 * stays 1.0000001 (%g would print 1, hiding why it is out of range), 0.1 stays 0.1. */
void jr_format_number(char* out, size_t size, double v);
#define JR_NUMBER_MAX 32 /* room jr_format_number needs */

/* Parses `size` bytes of a scene: a JSON object, `//` and block comments allowed (blanked in a
 * copy first, jr_blank_comments). When `terminated`, text[size] is a 0 byte that
 * the parser may use, which spares a copy of the text. Before anything is built, a scan checks
 * the syntax (an error becomes "source:line:col: syntax error: ...") and the top-level type, and
 * adds up the bytes the parser will ask for; a text that would need more than
 * jr_parse_budget(size) is refused in one line that says so. The parser's allocations are counted
 * against the same budget while it runs, and one that fails is reported as "out of memory". */
cJSON* jr_parse(jr* r, const char* text, size_t size, bool terminated);

/* Whether `size` bytes of text hold a `//` or block comment outside strings. */
bool jr_has_comments(const char* text, size_t size);
/* Overwrites every comment with spaces, newlines kept. False for a block comment that does not
 * end, with the offset of its start in *bad. jr_parse does this on a copy of a text with comments. */
bool jr_blank_comments(char* text, size_t size, size_t* bad);

/* The bytes the parser may request for a text of `size` bytes: PBD_SCENE_JSON_BASE_BYTES +
 * PBD_SCENE_JSON_BYTES_PER_BYTE * size (scene.h). */
uint64_t jr_parse_budget(size_t size);

/* Routes cJSON's allocations through the counting allocator; idempotent and thread-safe. Every
 * use of cJSON in the scene library calls it first, so that no tree is ever made by one
 * allocator and freed by the other. */
void jr_install_hooks(void);

/* Records "source: path: <formatted>" (or "source: <formatted>" for the empty path). Returns false. */
bool jr_fail(jr* r, const char* path, const char* fmt, ...) JR_PRINTF(3, 4);

/* path + "." + key, and path + "[index]". */
void jr_path_key(char* out, const char* path, const char* key);
void jr_path_index(char* out, const char* path, size_t index);

/* "a number", "a string", ... for messages. */
const char* jr_type_name(const cJSON* item);

/* `item` (at `path`) must be an object whose keys are all in the NULL-terminated `allowed`
 * list, each at most once. An unknown key is named, with the closest allowed one as a hint. */
bool jr_object(jr* r, const cJSON* item, const char* path, const char* const* allowed);

/* The value of `key` in `obj`, or NULL. */
const cJSON* jr_get(const cJSON* obj, const char* key);

bool jr_real(jr* r, const cJSON* obj, const char* path, const char* key, double def, jr_range range, double* out);
/* The same, stored as pbd_real through jr_to_real. */
bool jr_real_p(jr* r, const cJSON* obj, const char* path, const char* key, pbd_real def, jr_range range, pbd_real* out);
/* Converts a checked number to pbd_real. Refuses what the conversion would change in meaning:
 * a non-zero value of a non-negative quantity (range.lo >= 0) below JR_REAL_MIN (it would
 * become 0 or subnormal), and a value that rounds onto or past an open bound of `range`. */
bool jr_to_real(jr* r, const char* path, double v, jr_range range, pbd_real* out);
/* Checks a number item that is already at hand (array elements). */
bool jr_number_item(jr* r, const cJSON* item, const char* path, jr_range range, double* out);

bool jr_int(jr* r, const cJSON* obj, const char* path, const char* key, int64_t def, int64_t lo, int64_t hi,
            int64_t* out);
bool jr_int_item(jr* r, const cJSON* item, const char* path, int64_t lo, int64_t hi, int64_t* out);
/* An index below `count`: "index 7 out of range (<what>)" otherwise, e.g. what = "the object has
 * 3 particles". Any number is safe, 2^63 and beyond included. */
bool jr_index_item(jr* r, const cJSON* item, const char* path, uint32_t count, const char* what, uint32_t* out);

bool jr_bool(jr* r, const cJSON* obj, const char* path, const char* key, bool def, bool* out);

/* A string of at most max_len bytes without control characters; *out points into the tree. */
bool jr_string(jr* r, const cJSON* obj, const char* path, const char* key, const char* def, size_t max_len,
               const char** out);

/* One of the NULL-terminated `names`; *out is its position in the list. `aliases` (may be NULL)
 * is a NULL-terminated list of extra names, each mapping to alias_values[i]. */
bool jr_enum(jr* r, const cJSON* obj, const char* path, const char* key, int def, const char* const* names,
             const char* const* aliases, const int* alias_values, int* out);

/* An array of exactly 3 numbers, each in [-cap, cap]. */
bool jr_vec3(jr* r, const cJSON* obj, const char* path, const char* key, pbd_vec3 def, double cap, pbd_vec3* out);
bool jr_vec3_item(jr* r, const cJSON* item, const char* path, double cap, pbd_vec3* out);

/* `key` must be an array if present; *out is NULL when absent, *count its length. */
bool jr_array(jr* r, const cJSON* obj, const char* path, const char* key, const cJSON** out, size_t* count);

#endif
