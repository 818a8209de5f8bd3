/* libFuzzer target: the input is a snapshot (the seeds are real snapshots of every built-in
 * scene, fuzz/make_snapshot_seeds.py). Its size field and its checksum are forged to match the
 * bytes before they are loaded, so that a mutation reaches the parser rather than stopping at the
 * checksum; an input whose length is 7 modulo 8 goes in as it is, so that those checks are
 * fuzzed too. pbd_world_load_memory loads it through an allocator that refuses past 256 MiB
 * live. A refused snapshot must give one line naming it and leave nothing allocated; a loaded
 * one must save to a snapshot that loads again (the same world), and step (at most 3 times,
 * within a budget of work) with its state finite unless the library reported the divergence and
 * its pins in place, then save and load again. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

/* The header of the format this library writes: the size at byte 20 (version 8 on). */
#define AT_VERSION 8u
#define AT_SIZE    20u
#define HEADER     28u

/* Live bytes through the hooks, and their cap: a snapshot may ask for much (counts that the
 * bytes present allow), but not for more than this. */
#define CAP ((size_t)256 << 20)

typedef struct budget {
	size_t live, peak;
	long blocks;
} budget;

static void* cap_alloc(size_t n, void* user) {
	budget* b = (budget*)user;
	if (n > CAP - b->live) return NULL;
	void* p = malloc(n ? n : 1);
	if (!p) return NULL;
	b->live += n;
	b->blocks++;
	if (b->live > b->peak) b->peak = b->live;
	return p;
}

static void cap_free(void* p, size_t n, void* user) {
	budget* b = (budget*)user;
	if (!p) return;
	if (n > b->live || b->blocks <= 0)
		fuzz_fail("free of %zu bytes with %zu live in %ld blocks", n, b->live, b->blocks);
	b->live -= n;
	b->blocks--;
	free(p);
}

static uint64_t fnv1a(const uint8_t* d, size_t n) {
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; ++i) {
		h ^= d[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* The size field (for a version that has one) and the checksum, made to match the bytes. */
static void forge(uint8_t* d, size_t n) {
	if (n < HEADER + 8) return;
	uint32_t version;
	memcpy(&version, d + AT_VERSION, 4);
	if (version >= 8) {
		const uint64_t total = n;
		memcpy(d + AT_SIZE, &total, 8);
	}
	const uint64_t h = fnv1a(d, n - 8);
	memcpy(d + n - 8, &h, 8);
}

static void check_refusal(pbd_status st, const pbd_world* w, const pbd_error* err, const char* what) {
	if (w) fuzz_fail("%s: refused (%d) but returned a world", what, (int)st);
	const char* m = err->message;
	if (!m[0] || strchr(m, '\n')) fuzz_fail("%s: refused (%d) without a one-line message", what, (int)st);
	if (strncmp(m, "snapshot", 8) != 0 && strncmp(m, "pbd_world_load", 14) != 0)
		fuzz_fail("%s: the message does not name the snapshot: %s", what, m);
}

/* A loaded world saves to bytes that load again (what a resumed run does). */
static void check_round_trip(const pbd_world* w, const pbd_world_def* hooks, const char* when) {
	size_t n = 0;
	if (pbd_world_save_memory(w, NULL, 0, &n) != PBD_OK) fuzz_fail("%s: cannot size the snapshot", when);
	uint8_t* d = (uint8_t*)malloc(n);
	if (!d) fuzz_fail("out of memory in the harness");
	if (pbd_world_save_memory(w, d, n, &n) != PBD_OK) fuzz_fail("%s: cannot save", when);
	pbd_world* again = NULL;
	pbd_error err;
	err.message[0] = 0;
	const pbd_status st = pbd_world_load_memory(d, n, hooks, &again, &err);
	/* The cap may refuse the second copy of a world that fits once. */
	if (st != PBD_OK && st != PBD_ERR_OUT_OF_MEMORY)
		fuzz_fail("%s: a saved world does not load again: %s", when, err.message);
	if (st == PBD_OK) {
		if (pbd_world_hash(again) != pbd_world_hash(w)) fuzz_fail("%s: the reloaded world differs", when);
		pbd_world_destroy(again);
	}
	free(d);
}

/* Constraint projections and particle passes of one step: steps are skipped past a budget, so
 * that a snapshot asking for 1000 substeps of 10000 iterations is loaded and checked but does
 * not turn into a timeout. */
static double work_per_step(pbd_world* w) {
	pbd_stats s;
	pbd_world_get_stats(w, &s);
	const pbd_world_def d = pbd_world_get_def(w);
	double constraints = 0;
	for (int k = 0; k < PBD_FAMILY_COUNT; ++k) constraints += s.family[k].count;
	return (double)d.substeps *
	       ((double)d.iterations * (constraints + (double)s.colliders * s.particles) + (double)s.particles);
}

/* Up to `max_steps` steps within the budget, each checked as fuzz_step_checked checks them; a
 * step refused for want of memory (the cap) ends the stepping. False when that happened. */
static bool step_some(pbd_world* w, int max_steps) {
	const double per_step = work_per_step(w);
	for (int s = 0; s < max_steps && (double)(s + 1) * per_step <= 2e6; ++s) {
		fuzz_pins pins = {0, NULL, NULL};
		if (s > 0) fuzz_pins_take(&pins, w, NULL);
		const pbd_status st = pbd_world_step(w);
		if (st == PBD_ERR_OUT_OF_MEMORY) {
			free(pins.index);
			free(pins.x);
			return false;
		}
		const char* e = pbd_world_last_error(w);
		const bool refused = st == PBD_ERR_INVALID_ARGUMENT &&
		                     pbd_world_get_def(w).method != PBD_METHOD_POSITION_BASED &&
		                     (strstr(e, "no force model") || strstr(e, "constraints over more than"));
		if (st != PBD_OK && !refused) fuzz_fail("pbd_world_step failed (%d): %s", (int)st, e);
		fuzz_check_finite(w);
		if (s > 0) fuzz_pins_check(&pins, w);
		if (refused) break;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
	uint8_t* d = (uint8_t*)malloc(size ? size : 1);
	if (!d) return 0;
	if (size) memcpy(d, data, size);
	if (size % 8 != 7) forge(d, size);

	budget b = {0, 0, 0};
	pbd_world_def hooks = pbd_world_def_default();
	hooks.allocator.alloc = cap_alloc;
	hooks.allocator.free = cap_free;
	hooks.allocator.user = &b;
	pbd_world* w = NULL;
	pbd_error err;
	err.message[0] = 0;
	const pbd_status st = pbd_world_load_memory(d, size, &hooks, &w, &err);
	if (st != PBD_OK) {
		check_refusal(st, w, &err, "load");
		if (b.live || b.blocks) fuzz_fail("a refused load left %zu bytes in %ld blocks", b.live, b.blocks);
		free(d);
		return 0;
	}
	if (!w) fuzz_fail("loaded without a world");
	fuzz_check_finite(w);
	check_round_trip(w, &hooks, "after the load");
	if (step_some(w, 3)) check_round_trip(w, &hooks, "after stepping");
	pbd_world_destroy(w);
	if (b.live || b.blocks) fuzz_fail("a destroyed world left %zu bytes in %ld blocks", b.live, b.blocks);
	free(d);
	return 0;
}
