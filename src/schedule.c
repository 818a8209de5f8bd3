/* Solver order of the distance constraints.
 *
 * A Gauss-Seidel sweep is a chain of dependent projections when consecutive constraints share
 * a particle (the edges (0,1), (1,2), (2,3) of a grid row): each waits for the previous store,
 * and the sqrt and division latencies add up. Reordering so that every constraint shares no
 * particle with the few before it lets the processor overlap them, about twice the throughput
 * on a grid cloth, and it is what a future SIMD path needs: a window of independent projections
 * gives the same bits whether done one by one or side by side.
 *
 * The schedule is a greedy pass over the constraints in the order they were added: emit the
 * next one if it is independent of the last PBD_SCHEDULE_WINDOW emitted, otherwise park it in a
 * small FIFO and try the parked ones first at every slot. The order stays close to the order of
 * addition (so memory locality and any pinned-first ordering the builders chose survive), and it
 * depends only on the constraint list, so it is deterministic. It runs once after constraints
 * are added, in the first step that follows, not in every step. */
#include <string.h>

#include "world.h"

#define PBD_SCHEDULE_WINDOW 4
#define PBD_SCHEDULE_PENDING 64

static bool independent(const pbd_distance_c* c, const uint32_t* window, uint32_t filled) {
	for (uint32_t i = 0; i < 2 * filled; ++i)
		if (window[i] == c->a || window[i] == c->b) return false;
	return true;
}

pbd_status pbd_distance_schedule(pbd_world* w) {
	const uint32_t n = w->nd;
	if (n == 0) {
		w->dist_scheduled = true;
		return PBD_OK;
	}
	pbd_distance_c* src = (pbd_distance_c*)pbd_alloc(&w->mem, n * sizeof *src);
	pbd_distance_p* srcp = (pbd_distance_p*)pbd_alloc(&w->mem, n * sizeof *srcp);
	uint32_t* order = (uint32_t*)pbd_alloc(&w->mem, n * sizeof *order);
	if (!src || !srcp || !order) {
		pbd_free(&w->mem, src, n * sizeof *src);
		pbd_free(&w->mem, srcp, n * sizeof *srcp);
		pbd_free(&w->mem, order, n * sizeof *order);
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory while ordering constraints");
	}
	/* Work from the order of addition so the result does not depend on earlier schedules. */
	for (uint32_t u = 0; u < n; ++u) {
		src[u] = w->dist[w->dist_slot[u]];
		srcp[u] = w->dist_p[w->dist_slot[u]];
	}

	uint32_t window[2 * PBD_SCHEDULE_WINDOW];
	uint32_t filled = 0, head = 0; /* window is a ring of `filled` pairs starting at `head` */
	uint32_t pending[PBD_SCHEDULE_PENDING];
	uint32_t np = 0, next = 0, emitted = 0;
	while (emitted < n) {
		int64_t pick = -1; /* index into pending[], or -2 for `next` */
		for (uint32_t q = 0; q < np; ++q)
			if (independent(&src[pending[q]], window, filled)) {
				pick = q;
				break;
			}
		if (pick < 0 && next < n) {
			if (independent(&src[next], window, filled)) {
				pick = -2;
			} else if (np < PBD_SCHEDULE_PENDING) {
				pending[np++] = next++;
				continue;
			}
		}
		uint32_t u;
		if (pick == -2) {
			u = next++;
		} else {
			uint32_t q = pick >= 0 ? (uint32_t)pick : 0; /* nothing fits: the oldest parked one goes */
			u = pending[q];
			memmove(pending + q, pending + q + 1, (np - q - 1) * sizeof *pending);
			np--;
		}
		order[emitted++] = u;
		uint32_t slot = (head + filled) % PBD_SCHEDULE_WINDOW;
		if (filled == PBD_SCHEDULE_WINDOW) {
			slot = head;
			head = (head + 1) % PBD_SCHEDULE_WINDOW;
		} else {
			filled++;
		}
		window[2 * slot] = src[u].a;
		window[2 * slot + 1] = src[u].b;
	}

	for (uint32_t k = 0; k < n; ++k) {
		w->dist[k] = src[order[k]];
		w->dist_p[k] = srcp[order[k]];
		w->dist_slot[order[k]] = k;
		w->lambda[k] = 0;
	}
	pbd_free(&w->mem, src, n * sizeof *src);
	pbd_free(&w->mem, srcp, n * sizeof *srcp);
	pbd_free(&w->mem, order, n * sizeof *order);
	w->dist_scheduled = true;
	return PBD_OK;
}
