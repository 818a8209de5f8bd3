#include "counting.h"

#include <stdio.h>
#include <stdlib.h>

static bool fits(const soak_counting* c, size_t size) { return c->live <= c->limit && size <= c->limit - c->live; }

static void grew(soak_counting* c, size_t size) {
	c->live += size;
	if (c->live > c->peak) c->peak = c->live;
}

static void* count_alloc(size_t size, void* user) {
	soak_counting* c = (soak_counting*)user;
	if (!fits(c, size)) return NULL;
	void* p = malloc(size);
	if (p) grew(c, size);
	return p;
}

static void* count_realloc(void* ptr, size_t old_size, size_t new_size, void* user) {
	soak_counting* c = (soak_counting*)user;
	if (new_size > old_size && !fits(c, new_size - old_size)) return NULL;
	void* p = realloc(ptr, new_size);
	if (!p) return NULL;
	c->live -= old_size;
	grew(c, new_size);
	return p;
}

static void count_free(void* ptr, size_t size, void* user) {
	soak_counting* c = (soak_counting*)user;
	if (!ptr) return;
	c->live -= size;
	free(ptr);
}

pbd_allocator soak_counting_allocator(soak_counting* c, size_t limit) {
	c->live = c->peak = 0;
	c->limit = limit;
	pbd_allocator a = {count_alloc, count_realloc, count_free, c};
	return a;
}

bool soak_move_world(pbd_world** world, const pbd_world_def* def, pbd_error* err) {
	size_t size = 0;
	if (pbd_world_save_memory(*world, NULL, 0, &size) != PBD_OK) {
		snprintf(err->message, sizeof err->message, "%s", pbd_world_last_error(*world));
		return false;
	}
	void* buf = malloc(size);
	if (!buf) {
		snprintf(err->message, sizeof err->message, "no memory for a snapshot of %zu bytes", size);
		return false;
	}
	pbd_world* w = NULL;
	pbd_status st = pbd_world_save_memory(*world, buf, size, &size);
	if (st != PBD_OK) snprintf(err->message, sizeof err->message, "%s", pbd_world_last_error(*world));
	if (st == PBD_OK) st = pbd_world_load_memory(buf, size, def, &w, err);
	free(buf);
	if (st != PBD_OK) return false;
	pbd_world_destroy(*world);
	*world = w;
	return true;
}
