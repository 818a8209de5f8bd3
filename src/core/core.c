/* Allocation hooks, error messages, status names. */
#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char* pbd_version(void) { return PBD_VERSION_STRING; }

const char* pbd_status_string(pbd_status status) {
	switch (status) {
	case PBD_OK:
		return "ok";
	case PBD_ERR_INVALID_ARGUMENT:
		return "invalid argument";
	case PBD_ERR_NOT_FINITE:
		return "not a finite number";
	case PBD_ERR_OUT_OF_RANGE:
		return "out of range";
	case PBD_ERR_DEGENERATE:
		return "degenerate geometry";
	case PBD_ERR_OUT_OF_MEMORY:
		return "out of memory";
	case PBD_ERR_IO:
		return "i/o error";
	case PBD_ERR_PARSE:
		return "parse error";
	case PBD_ERR_UNINITIALIZED_DEF:
		return "def not initialised by its _default() function";
	}
	return "unknown status";
}

static void* libc_alloc(size_t size, void* user) {
	(void)user;
	return malloc(size);
}
static void* libc_realloc(void* ptr, size_t old_size, size_t new_size, void* user) {
	(void)user;
	(void)old_size;
	return realloc(ptr, new_size);
}
static void libc_free(void* ptr, size_t size, void* user) {
	(void)user;
	(void)size;
	free(ptr);
}

void pbd_alloc_init(pbd_alloc_ctx* ctx, const pbd_allocator* a) {
	if (a && a->alloc && a->free) {
		ctx->a = *a;
	} else {
		ctx->a.alloc = libc_alloc;
		ctx->a.realloc = libc_realloc;
		ctx->a.free = libc_free;
		ctx->a.user = NULL;
	}
}

void* pbd_alloc(pbd_alloc_ctx* ctx, size_t size) { return size ? ctx->a.alloc(size, ctx->a.user) : NULL; }

void pbd_free(pbd_alloc_ctx* ctx, void* ptr, size_t size) {
	if (ptr) ctx->a.free(ptr, size, ctx->a.user);
}

bool pbd_grow(pbd_alloc_ctx* ctx, void** ptr, size_t elem_size, size_t old_count, size_t new_count) {
	if (new_count <= old_count) return true;
	if (new_count > SIZE_MAX / elem_size) return false;
	size_t old_size = old_count * elem_size, new_size = new_count * elem_size;
	void* fresh;
	if (ctx->a.realloc) {
		fresh = ctx->a.realloc(*ptr, old_size, new_size, ctx->a.user);
		if (!fresh) return false;
	} else {
		fresh = ctx->a.alloc(new_size, ctx->a.user);
		if (!fresh) return false;
		if (*ptr) {
			memcpy(fresh, *ptr, old_size);
			ctx->a.free(*ptr, old_size, ctx->a.user);
		}
	}
	memset((char*)fresh + old_size, 0, new_size - old_size);
	*ptr = fresh;
	return true;
}

bool pbd_grow_to(pbd_alloc_ctx* ctx, void** ptr, size_t elem_size, uint32_t* cap, uint32_t need) {
	if (need <= *cap) return true;
	uint32_t c = *cap ? *cap : 256;
	while (c < need) c = c > UINT32_MAX / 2 ? need : 2 * c;
	if (!pbd_grow(ctx, ptr, elem_size, *cap, c)) return false;
	*cap = c;
	return true;
}

bool pbd_grow_all(pbd_alloc_ctx* ctx, const pbd_grow_item* items, int n, size_t old_count, size_t new_count) {
	enum { max_items = 32 };
	void* fresh[max_items];
	if (n > max_items) return false;
	if (new_count <= old_count) return true;
	for (int i = 0; i < n; ++i) {
		fresh[i] = NULL;
		if (new_count > SIZE_MAX / items[i].elem_size) {
			for (int j = 0; j < i; ++j) ctx->a.free(fresh[j], new_count * items[j].elem_size, ctx->a.user);
			return false;
		}
		fresh[i] = ctx->a.alloc(new_count * items[i].elem_size, ctx->a.user);
		if (!fresh[i]) {
			for (int j = 0; j < i; ++j) ctx->a.free(fresh[j], new_count * items[j].elem_size, ctx->a.user);
			return false;
		}
	}
	for (int i = 0; i < n; ++i) {
		const size_t old_size = old_count * items[i].elem_size, new_size = new_count * items[i].elem_size;
		if (*items[i].ptr) {
			memcpy(fresh[i], *items[i].ptr, old_size);
			ctx->a.free(*items[i].ptr, old_size, ctx->a.user);
		}
		memset((char*)fresh[i] + old_size, 0, new_size - old_size);
		*items[i].ptr = fresh[i];
	}
	return true;
}

pbd_status pbd_fail_err(pbd_error* err, pbd_status status, const char* fmt, ...) {
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof err->message, fmt, ap);
		va_end(ap);
	}
	return status;
}
