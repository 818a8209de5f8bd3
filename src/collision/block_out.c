/* Results found in blocks, kept in block order (block_out.h). */
#include <string.h>

#include "collision/block_out.h"

/* Stamps grow zeroed: gen 0, which no pass uses, so a fresh stamp never matches. */
static bool grow_stamps(pbd_block_out* o, pbd_alloc_ctx* mem, uint32_t threads, uint32_t stamps) {
	for (uint32_t t = 0; t < threads; ++t) {
		pbd_block_out_worker* wk = &o->worker[t];
		if (!pbd_grow_to(mem, (void**)&wk->stamp, sizeof *wk->stamp, &wk->cap_stamp, stamps)) return false;
	}
	return true;
}

/* A new pass: stamps of earlier passes no longer match. */
static void next_gen(pbd_block_out* o) {
	if (++o->gen != 0) return;
	for (uint32_t t = 0; t < PBD_MAX_THREADS; ++t)
		if (o->worker[t].stamp) memset(o->worker[t].stamp, 0, (size_t)o->worker[t].cap_stamp * sizeof(uint64_t));
	o->gen = 1;
}

static bool grow_records(pbd_block_out* o, pbd_alloc_ctx* mem, pbd_block_out_worker* wk, uint32_t need) {
	return pbd_grow_to(mem, (void**)&wk->data, o->rec, &wk->cap, need);
}

bool pbd_block_out_begin(pbd_block_out* o, pbd_alloc_ctx* mem, uint32_t threads, size_t rec, uint32_t blocks,
                         uint32_t stamps) {
	if (o->rec != rec) { /* a record of another size: the buffers start over */
		for (uint32_t t = 0; t < PBD_MAX_THREADS; ++t) {
			pbd_block_out_worker* wk = &o->worker[t];
			pbd_free(mem, wk->data, (size_t)wk->cap * o->rec);
			wk->data = NULL;
			wk->cap = 0;
		}
		o->rec = rec;
		o->most = 0;
	}
	if (blocks > o->cap_blocks) {
		const pbd_grow_item items[] = {
		    {(void**)&o->bworker, sizeof *o->bworker},
		    {(void**)&o->bfirst, sizeof *o->bfirst},
		    {(void**)&o->bcount, sizeof *o->bcount},
		    {(void**)&o->tally, sizeof *o->tally},
		};
		if (!pbd_grow_all(mem, items, 4, o->cap_blocks, blocks)) return false;
		o->cap_blocks = blocks;
	}
	if (!grow_stamps(o, mem, threads, stamps)) return false;
	for (uint32_t t = 0; t < threads; ++t) {
		if (!grow_records(o, mem, &o->worker[t], o->most)) return false;
		o->worker[t].n = 0;
	}
	o->blocks = blocks;
	o->threads = threads;
	next_gen(o);
	return true;
}

bool pbd_block_out_finish(pbd_block_out* o, pbd_alloc_ctx* mem, void (*fn)(void* ctx, uint32_t block, uint32_t worker),
                          void* ctx, uint32_t limit, void** out, uint32_t* count, uint32_t* cap) {
	pbd_block_out_worker* w0 = &o->worker[0];
	uint64_t total = 0;
	o->dropped = 0;
	for (uint32_t b = 0; b < o->blocks; ++b) {
		if (total >= limit) {
			/* Past the limit: dropped, whether or not the block fit. Its tally is complete either
			 * way (a block that runs out of room goes on examining its candidates). */
			o->dropped += o->tally[b].found;
			o->bcount[b] = 0;
			continue;
		}
		/* in what is left of the calling thread's buffer first (the block may have overflowed
		 * another thread's), then in a buffer twice as large each time */
		for (bool grow = w0->n == w0->cap; o->bcount[b] == UINT32_MAX; grow = true) {
			if (grow && (w0->cap == UINT32_MAX || !grow_records(o, mem, w0, w0->cap + 1))) return false;
			next_gen(o); /* the block's items were partly seen by the run that did not fit */
			fn(ctx, b, 0);
		}
		if (total + o->bcount[b] > limit) {
			o->dropped += total + o->bcount[b] - limit;
			o->bcount[b] = (uint32_t)(limit - total);
		}
		total += o->bcount[b];
	}
	o->candidates = 0;
	o->most_candidates = o->most_kept = o->capped = 0;
	for (uint32_t b = 0; b < o->blocks; ++b) {
		const pbd_block_tally* t = &o->tally[b];
		o->candidates += t->candidates;
		if (t->most > o->most_candidates) o->most_candidates = t->most;
		if (t->most_kept > o->most_kept) o->most_kept = t->most_kept;
		o->capped += t->capped;
	}
	if (total > UINT32_MAX - 1) return false;
	/* Each thread's buffer starts the next pass large enough for all of this one's records, so
	 * that however the blocks fall to the threads, a pass like it runs no block again. */
	if (total > o->most) o->most = (uint32_t)total;
	if (total && !pbd_grow_to(mem, out, o->rec, cap, (uint32_t)total)) return false;
	unsigned char* dst = (unsigned char*)*out;
	size_t at = 0;
	for (uint32_t b = 0; b < o->blocks; ++b) {
		const size_t bytes = (size_t)o->bcount[b] * o->rec;
		if (bytes) memcpy(dst + at, pbd_block_out_records(o, o->bworker[b], b), bytes);
		at += bytes;
	}
	*count = (uint32_t)total;
	return true;
}

void pbd_block_out_free(pbd_block_out* o, pbd_alloc_ctx* mem) {
	for (uint32_t t = 0; t < PBD_MAX_THREADS; ++t) {
		pbd_block_out_worker* wk = &o->worker[t];
		pbd_free(mem, wk->data, (size_t)wk->cap * o->rec);
		pbd_free(mem, wk->stamp, (size_t)wk->cap_stamp * sizeof *wk->stamp);
	}
	pbd_free(mem, o->bworker, (size_t)o->cap_blocks * sizeof *o->bworker);
	pbd_free(mem, o->bfirst, (size_t)o->cap_blocks * sizeof *o->bfirst);
	pbd_free(mem, o->bcount, (size_t)o->cap_blocks * sizeof *o->bcount);
	pbd_free(mem, o->tally, (size_t)o->cap_blocks * sizeof *o->tally);
	memset(o, 0, sizeof *o);
}
