/* Shared helpers of the test programs: floating-point traps, a strict log, tolerances. */
#ifndef PBD_TEST_UTIL_H
#define PBD_TEST_UTIL_H

#include <float.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pbd/math.h"
#include "pbd/pbd.h"

/* Tolerances scaled by the precision the library was built with. */
#ifdef PBD_DOUBLE
#define TEST_TOL(dbl, flt) (dbl)
#else
#define TEST_TOL(dbl, flt) (flt)
#endif
/* The largest finite pbd_real, for states meant to overflow in either precision. */
#ifdef PBD_DOUBLE
#define TEST_REAL_MAX DBL_MAX
#else
#define TEST_REAL_MAX FLT_MAX
#endif

/* Traps invalid operations, division by zero and overflow (glibc), so a NaN born anywhere in
 * the library fails the test at its source. Call first thing in main(). */
void test_enable_fp_traps(void);
/* Disables them again, for tests that feed NaN on purpose. */
void test_disable_fp_traps(void);

/* A log callback for world defs that fails the running test on any message. */
void test_log_fail(const char* message, void* user);
/* A log callback that records the last message into a char[256] given as user. */
void test_log_keep(const char* message, void* user);

/* A world made from `def` (or the default def when NULL) with test_log_fail attached. */
pbd_world* test_world(const pbd_world_def* def);

/* A default world whose log messages land in msg (a char[256]), for tests of error messages. */
pbd_world* test_world_keep(char* msg);

/* pbd_soft_create, then the ranges the object got (zeroed when creation fails). */
pbd_status test_soft_create(pbd_world* w, const pbd_soft_def* def, pbd_soft_info* out);

/* Called with a path that is not a regular file and the message its refusal must contain
 * ("<path>: cannot read a FIFO, only a regular file"). */
typedef void test_refuse_fn(const char* path, const char* want, void* user);

/* Calls refuse for each kind of path that is not a regular file, which every reader must refuse
 * before reading a byte: a FIFO without a writer (opening it to read would wait for one forever),
 * a directory, and /dev/zero (endless; skipped where the sandbox has none). The FIFO and the
 * directory are made in `dir` (NULL: a fresh folder in /tmp) as fifo<suffix> and sub<suffix>,
 * after removing any left by an earlier run, and removed afterwards. An alarm turns a reader
 * that blocks into a failure instead of a hang. */
void test_each_special_file(const char* dir, const char* suffix, test_refuse_fn* refuse, void* user);

/* Whether the heavy tests (every built-in scene on several thread counts, or in lanes and in
 * scalar) take their short length: always in builds without NDEBUG (Debug, the AddressSanitizer
 * build), which run 3 to 20 times slower than Release; in optimised builds when the environment
 * sets PBD_TEST_SHORT to a value other than 0, as scripts/test.sh does in the configurations
 * that repeat what gcc Release runs at full length. What they assert is the same. */
bool test_short(void);

/* Whether this test was built with assertions (no NDEBUG): Debug and the ASan+UBSan build, 3 to
 * 20 times slower than the optimised builds, where some tests take fewer samples. Inline, so that
 * it reads the test's own build flags. */
static inline bool test_with_assertions(void) {
#ifdef NDEBUG
	return false;
#else
	return true;
#endif
}

/* Writes a snapshot's checksum (its last 8 bytes, FNV-1a of the rest) again after a test edited
 * its payload, so that the content checks, not the checksum, must catch the edit. */
void test_snapshot_reseal(unsigned char* data, size_t size);

/* The world's snapshot in memory (malloc'd, the caller frees it), its size in *size. */
unsigned char* test_snapshot_save(const pbd_world* w, size_t* size);

/* A snapshot's last blocks before its checksum for a world under the position solver: the body
 * solver, the soft step's contact stiffness and a count of 0 kept pairs (version 12 on), then
 * max_substeps (version 13 on). */
#define TEST_SNAPSHOT_KEPT_NONE (2 * sizeof(uint32_t) + sizeof(pbd_real) + sizeof(int32_t))

#define assert_near(a, b, tol) assert_true(fabs((double)(a) - (double)(b)) <= (double)(tol))

#endif
