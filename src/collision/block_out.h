/* Results found in blocks, kept in block order.
 *
 * A search (the collision candidates of a substep) runs as a stage of blocks of query items
 * (task.h); a block's results are records of a fixed size in whatever order the block finds them.
 * Each thread appends its blocks' records to its own buffer, and each block notes where its
 * records lie; afterwards the calling thread copies them out block by block, so the output is
 * what one thread running the blocks in order would have written, on any number of threads.
 *
 * The stage allocates nothing: the buffers only grow on the calling thread, before a stage (to
 * what the last one needed) and after it, where a block that did not fit in its thread's buffer
 * is run again, alone. The threads also get a stamp array each, for the searches that visit a
 * candidate once per query item. */
#ifndef PBD_BLOCK_OUT_H
#define PBD_BLOCK_OUT_H

#include "core/core.h"

typedef struct pbd_block_out_worker {
	unsigned char* data;
	uint32_t n, cap; /* records */
	uint64_t* stamp; /* per candidate: gen << 32 | the query item that saw it last */
	uint32_t cap_stamp;
} pbd_block_out_worker;

/* What the query items of one block did, for the searches' caps (self_collision.h): integer
 * sums and maxima, the same however the blocks fall to the threads. */
typedef struct pbd_block_tally {
	uint32_t candidates; /* candidates the block's items examined */
	uint32_t found;      /* records they found, stored or not (a block out of room goes on counting) */
	uint32_t most;       /* the most one item examined */
	uint32_t most_kept;  /* the most records one item kept */
	uint32_t capped;     /* items whose search stopped at a cap */
} pbd_block_tally;

typedef struct pbd_block_out {
	size_t rec; /* bytes per record */
	uint32_t blocks, cap_blocks;
	uint32_t *bworker, *bfirst, *bcount; /* per block; bcount UINT32_MAX: it did not fit */
	pbd_block_tally* tally;              /* per block */
	uint32_t gen;
	uint32_t threads, most; /* the workers in use; the most records a pass found */
	/* the last pass, from the blocks' tallies: candidates examined, the most one item examined and
	 * kept, the items that stopped at a cap, and the records past the pass's limit, dropped */
	uint64_t candidates;
	uint64_t dropped;
	uint32_t most_candidates, most_kept, capped;
	pbd_block_out_worker worker[PBD_MAX_THREADS];
} pbd_block_out;

/* Before the stage: room for `blocks` blocks, each worker's buffer at least as large as the
 * largest pass so far found in all, and a stamp array of `stamps` candidates per worker (0: none). */
bool pbd_block_out_begin(pbd_block_out* o, pbd_alloc_ctx* mem, uint32_t threads, size_t rec, uint32_t blocks,
                         uint32_t stamps);

/* In a block: opens block b on `worker`, returns a new record (NULL when the buffer is full: the
 * block stores nothing more, goes on only to count (pbd_block_out_item) and is run again later),
 * and closes it; the block's records so far are pbd_block_out_records(o, worker, b). */
static inline void pbd_block_out_open(pbd_block_out* o, uint32_t b, uint32_t worker) {
	o->bworker[b] = worker;
	o->bfirst[b] = o->worker[worker].n;
	o->bcount[b] = 0;
	o->tally[b] = (pbd_block_tally){0, 0, 0, 0, 0};
}
/* One query item of block b is done: it examined `candidates` and kept `kept` records, and its
 * search stopped at a cap when `capped`. */
static inline void pbd_block_out_item(pbd_block_out* o, uint32_t b, uint32_t candidates, uint32_t kept, bool capped) {
	pbd_block_tally* t = &o->tally[b];
	t->candidates += candidates;
	t->found += kept;
	if (candidates > t->most) t->most = candidates;
	if (kept > t->most_kept) t->most_kept = kept;
	t->capped += capped ? 1u : 0u;
}
static inline void* pbd_block_out_push(pbd_block_out* o, uint32_t b, uint32_t worker) {
	pbd_block_out_worker* wk = &o->worker[worker];
	if (wk->n == wk->cap) {
		o->bcount[b] = UINT32_MAX;
		return NULL;
	}
	o->bcount[b]++;
	return wk->data + (size_t)wk->n++ * o->rec;
}
static inline void* pbd_block_out_records(pbd_block_out* o, uint32_t worker, uint32_t b) {
	return o->worker[worker].data + (size_t)o->bfirst[b] * o->rec;
}
/* A block that did not fit gives its records back, so that the others keep the buffer. */
static inline void pbd_block_out_close(pbd_block_out* o, uint32_t b, uint32_t worker) {
	if (o->bcount[b] == UINT32_MAX) o->worker[worker].n = o->bfirst[b];
}
/* True when query item `item` already saw candidate k in this pass (and marks it seen). */
static inline bool pbd_block_out_seen(pbd_block_out* o, uint32_t worker, uint32_t k, uint32_t item) {
	const uint64_t mark = (uint64_t)o->gen << 32 | item;
	uint64_t* s = &o->worker[worker].stamp[k];
	if (*s == mark) return true;
	*s = mark;
	return false;
}

/* After the stage, on the calling thread: runs each block that did not fit again, alone, with a
 * buffer grown until it fits (fn as the stage's, as worker 0), then copies every block's records,
 * in block order, to *out (grown as pbd_grow_to does) and sets *count. The first `limit` records
 * in block order are kept and the rest dropped (counted in o->dropped): the blocks past the limit
 * are not run again, so that neither the output nor the buffers grow past it. False when out of
 * memory. */
bool pbd_block_out_finish(pbd_block_out* o, pbd_alloc_ctx* mem, void (*fn)(void* ctx, uint32_t block, uint32_t worker),
                          void* ctx, uint32_t limit, void** out, uint32_t* count, uint32_t* cap);

void pbd_block_out_free(pbd_block_out* o, pbd_alloc_ctx* mem);

#endif
