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

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

/* The header of the format this library writes: the size at byte 20 (version 8 on). */
#define AT_VERSION 8u
#define AT_SIZE    20u
#define HEADER     28u

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

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
	uint8_t* d = (uint8_t*)malloc(size ? size : 1);
	if (!d) return 0;
	if (size) memcpy(d, data, size);
	if (size % 8 != 7) forge(d, size);

	fuzz_heap heap;
	pbd_world_def hooks = pbd_world_def_default();
	/* A snapshot may ask for much (counts that the bytes present allow), but not for more than
	 * the cap. */
	hooks.allocator = fuzz_heap_allocator(&heap, FUZZ_HEAP_CAP);
	/* Without realloc the library grows its arrays by alloc, copy and free, a path fuzz_step's
	 * worlds (with realloc) never take. */
	hooks.allocator.realloc = NULL;
	pbd_world* w = NULL;
	pbd_error err;
	err.message[0] = 0;
	const pbd_status st = pbd_world_load_memory(d, size, &hooks, &w, &err);
	if (st != PBD_OK) {
		check_refusal(st, w, &err, "load");
		fuzz_heap_check_empty(&heap, "a refused load");
		free(d);
		return 0;
	}
	if (!w) fuzz_fail("loaded without a world");
	fuzz_check_finite(w);
	check_round_trip(w, &hooks, "after the load");
	if (fuzz_step_checked(w, 3, &heap)) check_round_trip(w, &hooks, "after stepping");
	pbd_world_destroy(w);
	fuzz_heap_check_empty(&heap, "a destroyed world");
	free(d);
	return 0;
}
