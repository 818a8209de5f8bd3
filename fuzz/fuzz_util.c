#include "fuzz_util.h"

void fuzz_fail(const char* fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	fputs("fuzz check failed: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

void fuzz_check_finite(const pbd_world* w) {
	if (pbd_world_get_warning(w, PBD_WARN_NONFINITE).count || pbd_world_get_warning(w, PBD_WARN_DIVERGED).count) return;
	const uint32_t n = pbd_world_particle_count(w);
	const pbd_vec3* x = pbd_world_positions(w);
	const pbd_vec3* v = pbd_world_velocities(w);
	for (uint32_t i = 0; i < n; ++i)
		if (!fuzz_v3_finite(x[i]) || !fuzz_v3_finite(v[i]))
			fuzz_fail("particle %u of %u is not finite (x %g %g %g, v %g %g %g) and no warning says so", i, n,
			          (double)x[i].x, (double)x[i].y, (double)x[i].z, (double)v[i].x, (double)v[i].y, (double)v[i].z);
}

/* ---- pinned particles ------------------------------------------------------------------------ */

void fuzz_pins_take(fuzz_pins* s, const pbd_world* w, const unsigned char* moving) {
	const uint32_t n = pbd_world_particle_count(w);
	const pbd_real* iw = pbd_world_inv_masses(w);
	const pbd_vec3* x = pbd_world_positions(w);
	s->n = 0;
	s->index = (uint32_t*)malloc((n ? n : 1) * sizeof *s->index);
	s->x = (pbd_vec3*)malloc((n ? n : 1) * sizeof *s->x);
	if (!s->index || !s->x) fuzz_fail("out of memory in the harness");
	for (uint32_t i = 0; i < n; ++i)
		if (iw[i] == 0 && !(moving && moving[i])) {
			s->index[s->n] = i;
			s->x[s->n++] = x[i];
		}
}

void fuzz_pins_free(fuzz_pins* s) {
	free(s->index);
	free(s->x);
	s->index = NULL;
	s->x = NULL;
	s->n = 0;
}

void fuzz_pins_check(fuzz_pins* s, const pbd_world* w) {
	const pbd_vec3* x = pbd_world_positions(w);
	for (uint32_t k = 0; k < s->n; ++k) {
		const uint32_t i = s->index[k];
		if (memcmp(&x[i], &s->x[k], sizeof x[i]) == 0) continue;
		fuzz_fail("pinned particle %u moved from %.9g %.9g %.9g to %.9g %.9g %.9g", i, (double)s->x[k].x,
		          (double)s->x[k].y, (double)s->x[k].z, (double)x[i].x, (double)x[i].y, (double)x[i].z);
	}
	fuzz_pins_free(s);
}

/* ---- the allocator ----------------------------------------------------------------------------- */

typedef struct heap_block {
	size_t size, magic; /* 16 bytes: the block keeps malloc's alignment */
} heap_block;

#define HEAP_MAGIC ((size_t)0x7062645f68656170u)

static bool heap_take(fuzz_heap* h, size_t size) {
	if (size > h->cap - h->held) {
		h->refused = true;
		return false;
	}
	h->held += size;
	return true;
}

static void heap_give(fuzz_heap* h, size_t size) { h->held -= size; }

static heap_block* heap_head(void* p, size_t size, const char* what) {
	heap_block* b = (heap_block*)p - 1;
	if (b->magic != HEAP_MAGIC) fuzz_fail("allocator: %s of a pointer it did not hand out", what);
	if (b->size != size) fuzz_fail("allocator: %s of a block of %zu bytes, said to be %zu bytes", what, b->size, size);
	return b;
}

static void* heap_alloc(size_t size, void* user) {
	fuzz_heap* h = (fuzz_heap*)user;
	if (!heap_take(h, size)) return NULL;
	heap_block* b = (heap_block*)malloc(sizeof *b + size);
	if (!b) {
		heap_give(h, size);
		return NULL;
	}
	b->size = size;
	b->magic = HEAP_MAGIC;
	h->blocks++;
	return b + 1;
}

static void* heap_realloc(void* p, size_t old_size, size_t new_size, void* user) {
	fuzz_heap* h = (fuzz_heap*)user;
	if (!p) {
		if (old_size) fuzz_fail("allocator: realloc of NULL said to hold %zu bytes", old_size);
		return heap_alloc(new_size, user);
	}
	heap_block* b = heap_head(p, old_size, "realloc");
	if (new_size > old_size && !heap_take(h, new_size - old_size)) return NULL;
	heap_block* n = (heap_block*)realloc(b, sizeof *n + new_size);
	if (!n) {
		if (new_size > old_size) heap_give(h, new_size - old_size);
		return NULL;
	}
	if (new_size < old_size) heap_give(h, old_size - new_size);
	n->size = new_size;
	return n + 1;
}

static void heap_free(void* p, size_t size, void* user) {
	if (!p) return;
	fuzz_heap* h = (fuzz_heap*)user;
	heap_block* b = heap_head(p, size, "free");
	b->magic = 0;
	heap_give(h, size);
	h->blocks--;
	free(b);
}

pbd_allocator fuzz_heap_allocator(fuzz_heap* h, size_t cap) {
	memset(h, 0, sizeof *h);
	h->cap = cap;
	pbd_allocator a = {heap_alloc, heap_realloc, heap_free, h};
	return a;
}

void fuzz_heap_check_empty(const fuzz_heap* h, const char* when) {
	if (h->held || h->blocks)
		fuzz_fail("%s: the allocator still holds %zu bytes in %zu blocks", when, h->held, h->blocks);
}

/* ---- steps ------------------------------------------------------------------------------------- */

bool fuzz_step_refused(const pbd_world* w, pbd_status st) {
	const char* e = pbd_world_last_error(w);
	const pbd_method m = pbd_world_get_def(w).method;
	if (m == PBD_METHOD_POSITION_BASED) return false;
	if (st == PBD_ERR_INVALID_ARGUMENT)
		return strstr(e, "no force model") || strstr(e, "constraints over more than") ||
		       strstr(e, "does not move rigid bodies");
	/* Springs so stiff next to the masses (a compliance near the smallest float) that the
	 * projective dynamics matrix loses its positive pivots in double: refused with the reason. */
	return m == PBD_METHOD_PROJECTIVE_DYNAMICS && st != PBD_ERR_OUT_OF_MEMORY && strstr(e, "could not be factored");
}

/* Constraint projections and particle passes of one step. */
static double step_work(pbd_world* w) {
	pbd_stats s;
	pbd_world_get_stats(w, &s);
	const pbd_world_def d = pbd_world_get_def(w);
	double constraints = 0;
	for (int k = 0; k < PBD_FAMILY_COUNT; ++k) constraints += s.family[k].count;
	/* the most substeps a step may run (max_substeps) */
	const int substeps = d.max_substeps > d.substeps ? d.max_substeps : d.substeps;
	return (double)substeps *
	       ((double)d.iterations * (constraints + (double)s.colliders * s.particles) + (double)s.particles);
}

bool fuzz_step_checked(pbd_world* w, int max_steps, const fuzz_heap* heap) {
	const double per_step = step_work(w), budget = 2e6;
	for (int s = 0; s < max_steps && (double)(s + 1) * per_step <= budget; ++s) {
		fuzz_pins pins = {0, NULL, NULL};
		if (s > 0) fuzz_pins_take(&pins, w, NULL);
		const uint64_t before = pbd_world_hash(w);
		const pbd_status st = pbd_world_step(w);
		if (st == PBD_ERR_OUT_OF_MEMORY && heap && heap->refused) {
			fuzz_pins_free(&pins);
			return false;
		}
		const bool refused = st != PBD_OK && fuzz_step_refused(w, st);
		if (st != PBD_OK && !refused)
			fuzz_fail("pbd_world_step failed (%s): %s", pbd_status_string(st), pbd_world_last_error(w));
		if (refused && pbd_world_hash(w) != before)
			fuzz_fail("a refused step moved the world: %s", pbd_world_last_error(w));
		fuzz_check_finite(w);
		if (s > 0) fuzz_pins_check(&pins, w);
		if (refused) break;
	}
	return true;
}
