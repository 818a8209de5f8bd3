/* Solver order of the distance constraints.
 *
 * A Gauss-Seidel sweep is a chain of dependent projections when consecutive constraints share
 * a particle (the edges (0,1), (1,2), (2,3) of a grid row): each waits for the previous store,
 * and the sqrt and division latencies add up. Reordering so that a constraint shares no particle
 * with the few before it lets the processor overlap them, about twice the throughput on a grid
 * cloth, and it is what a future SIMD path needs: a window of independent projections gives the
 * same bits whether done one by one or side by side.
 *
 * The schedule is a greedy edge colouring: each constraint, in the order of addition, takes the
 * lowest colour that no earlier constraint on either of its particles has, and the sweep runs
 * colour by colour, in the order of addition within a colour. Consecutive constraints of one
 * colour never share a particle (a grid cloth with both diagonals takes 8 colours, 12 with bend
 * edges), and each colour walks memory in order.
 *
 * The colouring is also what keeps a one-iteration sweep stable. The position update
 * x' = G(2x - x_prev + h^2 g) with v = (x' - x)/h turns an eigenvalue g of the sweep's Jacobian
 * into growth |mu| = |g| + sqrt(g^2 + |g|) per substep when g is real and negative, above 1 once
 * g < -1/3. A sweep in the order of addition (or close to it, as a window-of-4 reordering was)
 * lets a correction run along a whole row within one sweep; on a strongly stretched cloth that
 * gives g near -0.4 and the cloth blows up (128 x 128, 1 iteration, <= 15 substeps), while the
 * colour-by-colour sweep keeps every eigenvalue of the same states near the positive axis.
 *
 * It depends only on the constraint list, so it is deterministic. It runs in the first step
 * after constraints were added, in place, with the working array grown together with the
 * constraints: no allocation happens in the step. A particle with more than 64 colours around
 * it (a vertex of degree above 32 or so) sends its further constraints to one last class, which
 * is still correct, only not independent. */
#include <string.h>

#include "world.h"

#define PBD_SCHEDULE_COLOURS 64 /* one bit each in a particle's mask; more go to one last class */
#define PBD_SCHEDULE_DONE    UINT32_MAX

/* First-fit colour of constraint user index u: the lowest colour no earlier constraint on either
 * end has; marks it on both ends. */
static uint32_t colour_of(const pbd_world* w, uint64_t* masks, uint32_t u) {
	const pbd_distance_c* c = &w->dist[w->dist_slot[u]];
	const uint64_t used = masks[c->a] | masks[c->b];
	if (used == UINT64_MAX) return PBD_SCHEDULE_COLOURS;
	uint32_t k = 0;
	while (used & (1ull << k)) ++k;
	masks[c->a] |= 1ull << k;
	masks[c->b] |= 1ull << k;
	return k;
}

/* Fills order[k] with the user index of the constraint to place at k: colour by colour, and in
 * the order of addition within a colour. Two passes of the same first-fit colouring, one to count
 * and one to place, so no colour array is needed; the per-particle masks live in an array grown
 * with the particles. */
static void make_order(pbd_world* w, uint32_t* order) {
	const uint32_t n = w->nd;
	uint64_t* masks = w->colour_mask;
	uint32_t start[PBD_SCHEDULE_COLOURS + 1];
	memset(start, 0, sizeof start);
	memset(masks, 0, (size_t)w->np * sizeof *masks);
	for (uint32_t u = 0; u < n; ++u) start[colour_of(w, masks, u)]++;
	for (uint32_t k = 0, sum = 0; k <= PBD_SCHEDULE_COLOURS; ++k) {
		const uint32_t count = start[k];
		start[k] = sum;
		sum += count;
	}
	memset(masks, 0, (size_t)w->np * sizeof *masks);
	for (uint32_t u = 0; u < n; ++u) order[start[colour_of(w, masks, u)]++] = u;
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
