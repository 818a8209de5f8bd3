/* Solver order of the distance constraints.
 *
 * A Gauss-Seidel sweep is a chain of dependent projections when consecutive constraints share
 * a particle (the edges (0,1), (1,2), (2,3) of a grid row): each waits for the previous store,
 * and the sqrt and division latencies add up. Reordering so that a constraint shares no particle
 * with the few before it lets the processor overlap them, about twice the throughput on a grid
 * cloth, and it is what a future SIMD path needs: a window of independent projections gives the
 * same bits whether done one by one or side by side.
 *
 * The schedule is a greedy pass over the constraints in the order they were added: emit the
 * next one if it is independent of the last PBD_SCHEDULE_WINDOW emitted, otherwise park it in a
 * small FIFO and try the parked ones first at every slot; when nothing fits (a tiny or very
 * dense system), the oldest parked one goes anyway. The order stays close to the order of
 * addition (so memory locality and any pinned-first ordering the builders chose survive), and it
 * depends only on the constraint list, so it is deterministic. It runs in the first step after
 * constraints were added, in place, with a working array grown together with the constraints:
 * no allocation happens in the step. */
#include <string.h>

#include "world.h"

#define PBD_SCHEDULE_WINDOW  4
#define PBD_SCHEDULE_PENDING 64
#define PBD_SCHEDULE_DONE    UINT32_MAX

static bool independent(const pbd_distance_c* c, const uint32_t* window, uint32_t filled) {
	for (uint32_t i = 0; i < 2 * filled; ++i)
		if (window[i] == c->a || window[i] == c->b) return false;
	return true;
}

/* Fills order[k] with the user index of the constraint to place at k. */
static void make_order(const pbd_world* w, uint32_t* order) {
	const uint32_t n = w->nd;
	uint32_t window[2 * PBD_SCHEDULE_WINDOW];
	uint32_t filled = 0, head = 0; /* window is a ring of `filled` pairs starting at `head` */
	uint32_t pending[PBD_SCHEDULE_PENDING];
	uint32_t np = 0, next = 0, emitted = 0;
	while (emitted < n) {
		int64_t pick = -1; /* index into pending[], or -2 for `next` */
		for (uint32_t q = 0; q < np; ++q)
			if (independent(&w->dist[w->dist_slot[pending[q]]], window, filled)) {
				pick = q;
				break;
			}
		if (pick < 0 && next < n) {
			if (independent(&w->dist[w->dist_slot[next]], window, filled)) {
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
			uint32_t q = pick >= 0 ? (uint32_t)pick : 0;
			u = pending[q];
			memmove(pending + q, pending + q + 1, (np - q - 1) * sizeof *pending);
			np--;
		}
		order[emitted++] = u;
		uint32_t slot;
		if (filled == PBD_SCHEDULE_WINDOW) {
			slot = head;
			head = (head + 1) % PBD_SCHEDULE_WINDOW;
		} else {
			slot = (head + filled) % PBD_SCHEDULE_WINDOW;
			filled++;
		}
		const pbd_distance_c* c = &w->dist[w->dist_slot[u]];
		window[2 * slot] = c->a;
		window[2 * slot + 1] = c->b;
	}
}

void pbd_distance_schedule(pbd_world* w) {
	const uint32_t n = w->nd;
	uint32_t* src = w->dist_scratch;
	if (n > 0) {
		make_order(w, src);
		/* order (user indices) -> the position each element comes from now */
		for (uint32_t k = 0; k < n; ++k) src[k] = w->dist_slot[src[k]];
		/* Apply the permutation in place, one cycle at a time. */
		for (uint32_t k = 0; k < n; ++k) {
			if (src[k] == PBD_SCHEDULE_DONE || src[k] == k) {
				src[k] = PBD_SCHEDULE_DONE;
				continue;
			}
			const pbd_distance_c c0 = w->dist[k];
			const pbd_distance_p p0 = w->dist_p[k];
			uint32_t j = k;
			for (;;) {
				const uint32_t s = src[j];
				src[j] = PBD_SCHEDULE_DONE;
				if (s == k) {
					w->dist[j] = c0;
					w->dist_p[j] = p0;
					break;
				}
				w->dist[j] = w->dist[s];
				w->dist_p[j] = w->dist_p[s];
				j = s;
			}
		}
		for (uint32_t k = 0; k < n; ++k) {
			w->dist_slot[w->dist_p[k].user] = k;
			w->lambda[k] = 0;
		}
	}
	w->dist_scheduled = true;
}
