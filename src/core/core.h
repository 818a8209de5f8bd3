/* Allocation, error reporting and scalar helpers shared by every source file. */
#ifndef PBD_CORE_H
#define PBD_CORE_H

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>

#include "pbd/math.h"
#include "pbd/pbd.h"

#if defined(__GNUC__)
#define PBD_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define PBD_PRINTF(fmt, args)
#endif

#ifdef PBD_DOUBLE
#define PBD_REAL_MIN_NORMAL DBL_MIN
#define PBD_REAL_MAX        DBL_MAX
#define PBD_R(x)            (x)
#define PBD_POW             pow
#define PBD_FABS            fabs
#else
#define PBD_REAL_MIN_NORMAL FLT_MIN
#define PBD_REAL_MAX        FLT_MAX
#define PBD_R(x)            (x##f)
#define PBD_POW             powf
#define PBD_FABS            fabsf
#endif

/* fmax and fmin with their NaN rule (a NaN operand gives the other one), written as comparisons
 * so the compiler inlines them: the libm calls cost a tenth of the mesh and height-field contact
 * queries, which make millions per second. For numbers they give the same result as fmax and fmin
 * (a tie returns b, so only the sign of a zero can differ). */
static inline pbd_real pbd_fmax_(pbd_real a, pbd_real b) { return a > b || isnan(b) ? a : b; }
static inline pbd_real pbd_fmin_(pbd_real a, pbd_real b) { return a < b || isnan(b) ? a : b; }
#define PBD_FMAX pbd_fmax_
#define PBD_FMIN pbd_fmin_

/* Cookie written by the *_def_default functions and checked by the create calls, so that a def
 * declared on the stack and never initialised is caught instead of read as garbage. */
#define PBD_COOKIE 0x50424431

/* Below this length a distance has no usable direction; the projection skips it. */
#define PBD_EPSILON_LENGTH PBD_R(1e-9)

/* Collision contact test tolerance in metres, for counting contacts. */
#define PBD_CONTACT_TOLERANCE PBD_R(1e-4)

/* Internal invariants (Jolt's JPH_ASSERT): checked in debug builds, where a broken one aborts
 * with its place; compiled out with NDEBUG. They state what the code guarantees, never check
 * input, which is validated with an error status instead. */
#ifdef NDEBUG
#define PBD_ASSERT(cond) ((void)0)
#else
#include <assert.h>
#define PBD_ASSERT(cond) assert(cond)
#endif

/* FNV-1a over bytes, continuing from h (0xcbf29ce484222325 to start): the world hash, the snapshot
 * checksum and the projective dynamics matrix's fingerprint. */
#define PBD_FNV1A_START 0xcbf29ce484222325ull
static inline uint64_t pbd_fnv1a(uint64_t h, const void* data, size_t n) {
	const unsigned char* b = (const unsigned char*)data;
	for (size_t i = 0; i < n; ++i) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

typedef struct pbd_alloc_ctx {
	pbd_allocator a;
} pbd_alloc_ctx;

void pbd_alloc_init(pbd_alloc_ctx* ctx, const pbd_allocator* a);
void* pbd_alloc(pbd_alloc_ctx* ctx, size_t size);
void pbd_free(pbd_alloc_ctx* ctx, void* ptr, size_t size);
/* Grows *ptr from old_count to new_count elements of elem_size, zeroing the new part. */
bool pbd_grow(pbd_alloc_ctx* ctx, void** ptr, size_t elem_size, size_t old_count, size_t new_count);
/* Grows *ptr to hold at least `need` elements, doubling *cap (from 256), so that arrays filled
 * once per substep settle at their size after a few steps; false when out of memory. */
bool pbd_grow_to(pbd_alloc_ctx* ctx, void** ptr, size_t elem_size, uint32_t* cap, uint32_t need);

/* An axis-aligned box. */
typedef struct pbd_box3 {
	pbd_vec3 lo, hi;
} pbd_box3;

/* One array of a structure of arrays, for pbd_grow_all. */
typedef struct pbd_grow_item {
	void** ptr;
	size_t elem_size;
} pbd_grow_item;

/* Grows every array from old_count to new_count, or none of them: on failure all keep their old
 * blocks and sizes, so one capacity number stays true for all the arrays. */
bool pbd_grow_all(pbd_alloc_ctx* ctx, const pbd_grow_item* items, int n, size_t old_count, size_t new_count);

/* Formats an error into the world's last_error, sends it to the log, returns `status`. */
pbd_status pbd_fail(pbd_world* w, pbd_status status, const char* fmt, ...) PBD_PRINTF(3, 4);
/* Same for calls without a world; err may be NULL. */
pbd_status pbd_fail_err(pbd_error* err, pbd_status status, const char* fmt, ...) PBD_PRINTF(3, 4);
void pbd_log(const pbd_world* w, const char* fmt, ...) PBD_PRINTF(2, 3);

static inline bool pbd_is_finite(pbd_real r) { return isfinite(r) != 0; }

#endif
