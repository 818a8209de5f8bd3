/* Hierarchical position based dynamics (Müller 2008, VRIPhys, "Hierarchical Position Based
 * Dynamics"): the coarse levels and the coarse-to-fine pass of a substep.
 *
 * Gauss-Seidel moves a correction one constraint per sweep, so the stretch of a large cloth
 * (the weight of every row below pulling on the top) needs as many iterations as the cloth has
 * rows to travel. A coarse level carries it across many fine particles in one projection.
 *
 * Building level l + 1 from level l (a graph of particles and edges with rest lengths):
 *  1. Coarse particles: the pinned ones first, so that pins hold at every level; then, in index
 *     order, every particle with no coarse neighbour yet (a greedy maximal independent set: on a
 *     grid with both diagonals, every second particle in both directions, a quarter); then every
 *     particle left with fewer than PBD_HIERARCHY_MIN_PARENTS coarse neighbours, so that each
 *     fine particle hangs from at least two.
 *  2. Parents of a fine particle i: its coarse neighbours, the nearest PBD_HIERARCHY_MAX_PARENTS
 *     by rest length, with weights w_ij = (1/r_ij) / sum_k (1/r_ik), which sum to 1 so that a
 *     common translation of the parents moves i by the same amount.
 *  3. Coarse edges: two coarse particles joined in level l, or both parents of one fine
 *     particle. Their rest length comes from the constraints' rest lengths, never from positions,
 *     so that a world loaded from a snapshot builds the same levels, and it must never be shorter
 *     than the rest shape allows, or the coarse pass would pull against the fine constraints:
 *     - a piece of cloth with a flat rest shape (a grid, a flat triangle mesh) is laid out in the
 *       plane from its rest lengths, particle by particle from two placed neighbours; when the
 *       layout reproduces every rest length of the piece, the coarse rest lengths are distances
 *       in it, exact at every level;
 *     - otherwise, at level 1 the neighbourhood of the fine particle i is unfolded over its
 *       triangles (ring_angles), which gives the distance of a flat neighbourhood and more for
 *       a curved one, and where no triangles lead, and on coarser levels, the path a-i-b, r_ai +
 *       r_ib, exact when a, i and b lie on a line (a straight rope) and longer otherwise.
 *     The shortest of these over all shared fine particles is kept. On a flat sheet no
 *     configuration the fine constraints allow holds two particles farther apart than at rest
 *     (for a convex sheet; a non-convex one can open wider than its rest distance across the gap).
 *  4. Masses: a coarse particle stands for itself and for the share w_ij of each fine particle
 *     it is a parent of, M_j <- M_j + sum_i w_ij M_i (pinned: infinite). Projecting the coarse
 *     constraints with these masses and interpolating with the same weights keeps the linear
 *     momentum of the whole cloth: sum_i m_i dx_i = sum_j M_j dx_j, which every coarse
 *     projection conserves.
 * The coarse constraints are unilateral (|x_a - x_b| <= rest, Müller's choice): a coarse edge
 * spans folds the fine mesh may make, and pushing it apart would stiffen the cloth in bending.
 *
 * The pass, once per substep before the iterations: for l from the coarsest level down to 1,
 * pbd_hierarchy_sweeps(l) sweeps over level l's constraints, then every particle leaving at level
 * l moves by sum_j w_ij (q_j - q0_j), its parents' displacement since the pass began (q0). A
 * particle is moved that way exactly once, after every coarser level has moved its parents, so
 * it receives the corrections of all coarser levels. Pinned particles are coarse everywhere and
 * have inverse mass 0: nothing moves them. */
#include <stdlib.h>
#include <string.h>

#include "methods/hierarchy.h"
#include "model/world.h"

typedef struct hedge {
	uint32_t a, b; /* a < b */
	double rest;
} hedge;

typedef struct edge_buf {
	hedge* e;
	size_t n, cap;
} edge_buf;

/* An adjacency: the neighbours of i are nbr[off[i]..off[i + 1]), sorted, at rest lengths rest[]. */
typedef struct graph {
	uint32_t* off; /* np + 1 */
	uint32_t* nbr;
	double* rest;
	size_t cap;
} graph;

/* The build's working memory: allocated per build, freed at its end. */
typedef struct build {
	pbd_world* w;
	uint32_t np;
	uint8_t* member; /* in the current level */
	uint8_t* coarse; /* in the next level */
	double* mass;    /* aggregated mass in the current level; INFINITY when pinned */
	graph lev;       /* the current level's edges */
	/* The flat rest layout (step 3): a position in the plane per particle of level 0, and per
	 * connected piece of cloth whether the layout reproduces every rest length. */
	double *px, *py;
	uint8_t* placed;
	uint8_t* queued;
	uint32_t* queue;
	uint32_t* piece;
	uint8_t* flat;    /* per piece */
	uint32_t* colour; /* per coarse constraint of the level being made */
	size_t cap_colour;
	double* angle; /* ring_angles' result, PBD_HIERARCHY_MAX_RING */
	uint8_t* done;
	edge_buf cur, next;
} build;

/* Grows arrays that share one capacity *cap to hold `need` elements, doubling: all or none. */
static bool grow_arrays(pbd_alloc_ctx* mem, const pbd_grow_item* items, int n, size_t* cap, size_t need) {
	if (need <= *cap) return true;
	size_t c = *cap ? *cap : 1024;
	while (c < need) c *= 2;
	if (!pbd_grow_all(mem, items, n, *cap, c)) return false;
	*cap = c;
	return true;
}

static bool grow_to(pbd_alloc_ctx* mem, void** p, size_t elem, size_t* cap, size_t need) {
	const pbd_grow_item item = {p, elem};
	return grow_arrays(mem, &item, 1, cap, need);
}

/* The same for the hierarchy's own arrays, whose capacities are 32-bit. */
static bool grow_arrays_u32(pbd_alloc_ctx* mem, const pbd_grow_item* items, int n, uint32_t* cap, size_t need) {
	if (need > UINT32_MAX / 2) return false;
	size_t c = *cap;
	if (!grow_arrays(mem, items, n, &c, need)) return false;
	*cap = (uint32_t)c;
	return true;
}

static bool edge_push(pbd_alloc_ctx* mem, edge_buf* b, uint32_t a, uint32_t c, double rest) {
	if (b->n == b->cap && !grow_to(mem, (void**)&b->e, sizeof *b->e, &b->cap, b->n + 1)) return false;
	b->e[b->n].a = a < c ? a : c;
	b->e[b->n].b = a < c ? c : a;
	b->e[b->n].rest = rest;
	b->n++;
	return true;
}

static int edge_cmp(const void* p, const void* q) {
	const hedge* x = (const hedge*)p;
	const hedge* y = (const hedge*)q;
	if (x->a != y->a) return x->a < y->a ? -1 : 1;
	if (x->b != y->b) return x->b < y->b ? -1 : 1;
	return (x->rest > y->rest) - (x->rest < y->rest);
}

/* Sorts by pair and keeps one edge per pair, the shortest: the order is total, so the result
 * does not depend on the order the edges came in. */
static void edge_unique(edge_buf* b) {
	if (b->n < 2) return;
	qsort(b->e, b->n, sizeof *b->e, edge_cmp);
	size_t m = 1;
	for (size_t k = 1; k < b->n; ++k)
		if (b->e[k].a != b->e[m - 1].a || b->e[k].b != b->e[m - 1].b) b->e[m++] = b->e[k];
	b->n = m;
}

static void build_free(build* b) {
	pbd_alloc_ctx* mem = &b->w->mem;
	const size_t np = b->np;
	pbd_free(mem, b->member, np);
	pbd_free(mem, b->coarse, np);
	pbd_free(mem, b->mass, np * sizeof *b->mass);
	pbd_free(mem, b->lev.off, (np + 1) * sizeof *b->lev.off);
	pbd_free(mem, b->lev.nbr, b->lev.cap * sizeof *b->lev.nbr);
	pbd_free(mem, b->lev.rest, b->lev.cap * sizeof *b->lev.rest);
	pbd_free(mem, b->px, np * sizeof *b->px);
	pbd_free(mem, b->py, np * sizeof *b->py);
	pbd_free(mem, b->placed, np);
	pbd_free(mem, b->queued, np);
	pbd_free(mem, b->queue, np * sizeof *b->queue);
	pbd_free(mem, b->piece, np * sizeof *b->piece);
	pbd_free(mem, b->flat, np);
	pbd_free(mem, b->colour, b->cap_colour * sizeof *b->colour);
	pbd_free(mem, b->angle, PBD_HIERARCHY_MAX_RING * sizeof *b->angle);
	pbd_free(mem, b->done, PBD_HIERARCHY_MAX_RING);
	pbd_free(mem, b->cur.e, b->cur.cap * sizeof *b->cur.e);
	pbd_free(mem, b->next.e, b->next.cap * sizeof *b->next.e);
}

/* The current level's adjacency from its edges (sorted and unique, so every list comes out sorted). */
static bool graph_build(build* b, const edge_buf* E) {
	graph* g = &b->lev;
	const pbd_grow_item items[2] = {{(void**)&g->nbr, sizeof *g->nbr}, {(void**)&g->rest, sizeof *g->rest}};
	if (!grow_arrays(&b->w->mem, items, 2, &g->cap, 2 * E->n)) return false;
	uint32_t* off = g->off;
	memset(off, 0, ((size_t)b->np + 1) * sizeof *off);
	for (size_t k = 0; k < E->n; ++k) {
		off[E->e[k].a + 1]++;
		off[E->e[k].b + 1]++;
	}
	for (uint32_t i = 0; i < b->np; ++i) off[i + 1] += off[i];
	for (size_t k = 0; k < E->n; ++k) {
		const hedge* e = &E->e[k];
		g->nbr[off[e->a]] = e->b;
		g->rest[off[e->a]++] = e->rest;
		g->nbr[off[e->b]] = e->a;
		g->rest[off[e->b]++] = e->rest;
	}
	/* the fill advanced every offset to the next particle's start: shift back */
	for (uint32_t i = b->np; i > 0; --i) off[i] = off[i - 1];
	off[0] = 0;
	return true;
}

/* The slot of v among i's neighbours (the lists are sorted), or UINT32_MAX. */
static uint32_t neighbour_slot(const graph* g, uint32_t i, uint32_t v) {
	uint32_t lo = g->off[i], hi = g->off[i + 1];
	while (lo < hi) {
		const uint32_t mid = lo + (hi - lo) / 2;
		if (g->nbr[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < g->off[i + 1] && g->nbr[lo] == v ? lo - g->off[i] : UINT32_MAX;
}

/* ---- the flat rest layout (step 3) ----------------------------------------------------------- */

/* Places particle w in the plane from two placed neighbours u, v (the two intersections of the
 * circles of its rest lengths around them), the mirror chosen by its other placed neighbours or,
 * with none, away from a placed common neighbour of u and v. False while fewer than two usable
 * neighbours are placed. */
static bool place(build* b, uint32_t w) {
	const graph* g = &b->lev;
	/* The two placed neighbours whose circles cross most steeply: the angle at w nearest a right
	 * angle, so that the rounding of the rest lengths moves w least. */
	uint32_t u = UINT32_MAX, v = UINT32_MAX;
	double ru = 0, rv = 0, best = 0;
	uint32_t cand[16];
	double crest[16];
	uint32_t nc = 0;
	for (uint32_t k = g->off[w]; k < g->off[w + 1] && nc < 16; ++k)
		if (b->placed[g->nbr[k]]) {
			cand[nc] = g->nbr[k];
			crest[nc++] = g->rest[k];
		}
	for (uint32_t p = 0; p < nc; ++p)
		for (uint32_t q = p + 1; q < nc; ++q) {
			const double duv = hypot(b->px[cand[p]] - b->px[cand[q]], b->py[cand[p]] - b->py[cand[q]]);
			if (!(duv > 1e-12) || !(crest[p] > 0) || !(crest[q] > 0)) continue;
			double c = (crest[p] * crest[p] + crest[q] * crest[q] - duv * duv) / (2 * crest[p] * crest[q]);
			c = c < -1 ? -1 : c > 1 ? 1 : c;
			const double sine = sqrt(1 - c * c);
			if (sine > best) {
				best = sine;
				u = cand[p];
				v = cand[q];
				ru = crest[p];
				rv = crest[q];
			}
		}
	if (v == UINT32_MAX) return false;
	const double dx = b->px[v] - b->px[u], dy = b->py[v] - b->py[u], d = hypot(dx, dy);
	const double ex = dx / d, ey = dy / d;
	const double x = (ru * ru - rv * rv + d * d) / (2 * d), y2 = ru * ru - x * x, y = y2 > 0 ? sqrt(y2) : 0;
	const double cx[2] = {b->px[u] + x * ex - y * ey, b->px[u] + x * ex + y * ey};
	const double cy[2] = {b->py[u] + x * ey + y * ex, b->py[u] + x * ey - y * ex};
	double err[2] = {0, 0};
	bool judged = false;
	for (uint32_t k = g->off[w]; k < g->off[w + 1]; ++k) {
		const uint32_t z = g->nbr[k];
		if (!b->placed[z] || z == u || z == v) continue;
		for (int s = 0; s < 2; ++s) err[s] += fabs(hypot(cx[s] - b->px[z], cy[s] - b->py[z]) - g->rest[k]);
		judged = true;
	}
	if (!judged)
		for (uint32_t k = g->off[u]; k < g->off[u + 1]; ++k) {
			const uint32_t z = g->nbr[k];
			if (z == w || z == v || !b->placed[z] || neighbour_slot(g, v, z) == UINT32_MAX) continue;
			for (int s = 0; s < 2; ++s) err[s] = -hypot(cx[s] - b->px[z], cy[s] - b->py[z]);
			break;
		}
	const int s = err[1] < err[0] ? 1 : 0;
	b->px[w] = cx[s];
	b->py[w] = cy[s];
	b->placed[w] = 1;
	return true;
}

static void enqueue_neighbours(build* b, uint32_t i, uint32_t* tail) {
	const graph* g = &b->lev;
	for (uint32_t k = g->off[i]; k < g->off[i + 1]; ++k) {
		const uint32_t j = g->nbr[k];
		if (b->placed[j] || b->queued[j]) continue;
		b->queued[j] = 1;
		b->queue[*tail % b->np] = j;
		++*tail;
	}
}

/* Lays every piece of level 0 out in the plane from its rest lengths, breadth first from its
 * lowest particle, and keeps the pieces whose layout reproduces all their rest lengths: those
 * have a flat rest shape, and the layout gives the rest distance of any two of their particles
 * (grids, flat triangle meshes). Ropes, curved or unfoldable meshes keep flat = 0. */
static void flat_layout(build* b) {
	const graph* g = &b->lev;
	const uint32_t np = b->np;
	memset(b->placed, 0, np);
	memset(b->queued, 0, np);
	for (uint32_t i = 0; i < np; ++i) b->piece[i] = UINT32_MAX;
	uint32_t pieces = 0;
	for (uint32_t s = 0; s < np; ++s) {
		if (!b->member[s] || b->piece[s] != UINT32_MAX) continue;
		/* the piece: breadth first over the edges (the queue is free again after) */
		const uint32_t id = pieces++;
		uint32_t head = 0, tail = 0;
		b->piece[s] = id;
		b->queue[tail++] = s;
		while (head < tail) {
			const uint32_t i = b->queue[head++];
			for (uint32_t k = g->off[i]; k < g->off[i + 1]; ++k)
				if (b->piece[g->nbr[k]] == UINT32_MAX) {
					b->piece[g->nbr[k]] = id;
					b->queue[tail++] = g->nbr[k];
				}
		}
		/* the layout, from s and its first neighbour */
		b->flat[id] = 1;
		const uint32_t t = g->nbr[g->off[s]];
		b->px[s] = b->py[s] = 0;
		b->px[t] = g->rest[g->off[s]];
		b->py[t] = 0;
		b->placed[s] = b->placed[t] = 1;
		head = tail = 0;
		enqueue_neighbours(b, s, &tail);
		enqueue_neighbours(b, t, &tail);
		while (head < tail) {
			const uint32_t w = b->queue[head++ % np];
			b->queued[w] = 0;
			if (b->placed[w] || !place(b, w)) continue; /* queued again when a neighbour is placed */
			enqueue_neighbours(b, w, &tail);
		}
	}
	/* Every rest length of a flat piece must come out of its layout: 1e-4 leaves a margin of
	 * ten over the rounding measured on a jittered triangle mesh (1.3e-5), while a curved
	 * piece misses by far more. */
	for (size_t k = 0; k < b->cur.n; ++k) {
		const hedge* e = &b->cur.e[k];
		const uint32_t id = b->piece[e->a];
		if (!b->placed[e->a] || !b->placed[e->b]) {
			b->flat[id] = 0;
			continue;
		}
		const double d = hypot(b->px[e->a] - b->px[e->b], b->py[e->a] - b->py[e->b]);
		if (!(fabs(d - e->rest) <= 1e-4 * e->rest + 1e-12)) b->flat[id] = 0;
	}
}

static bool flat_pair(const build* b, uint32_t a, uint32_t c) {
	return b->placed[a] && b->placed[c] && b->piece[a] == b->piece[c] && b->flat[b->piece[a]];
}

/* ---- levels ------------------------------------------------------------------------------------ */

static uint32_t coarse_neighbours(const build* b, uint32_t i) {
	uint32_t c = 0;
	for (uint32_t k = b->lev.off[i]; k < b->lev.off[i + 1]; ++k) c += b->coarse[b->lev.nbr[k]];
	return c;
}

/* Step 1 of the file comment. Returns the number of coarse particles; *free_count gets those
 * that are not pinned. */
static uint32_t select_coarse(build* b, uint32_t* free_count) {
	const pbd_real* iw = b->w->w;
	memset(b->coarse, 0, b->np);
	for (uint32_t i = 0; i < b->np; ++i)
		if (b->member[i] && iw[i] == 0) b->coarse[i] = 1;
	for (uint32_t i = 0; i < b->np; ++i)
		if (b->member[i] && !b->coarse[i] && coarse_neighbours(b, i) == 0) b->coarse[i] = 1;
	for (uint32_t i = 0; i < b->np; ++i)
		if (b->member[i] && !b->coarse[i] && coarse_neighbours(b, i) < PBD_HIERARCHY_MIN_PARENTS) b->coarse[i] = 1;
	uint32_t n = 0, f = 0;
	for (uint32_t i = 0; i < b->np; ++i) {
		n += b->coarse[i];
		f += b->coarse[i] && iw[i] > 0;
	}
	*free_count = f;
	return n;
}

/* b->angle[k]: the angle at i from its neighbour in slot `src` to the one in slot k, summed over
 * the triangles (i, u, v) between them (u, v neighbours of i joined by an edge; the angle of
 * each from its three rest lengths), the smallest such sum; RING_NONE where no chain of
 * triangles leads. For a flat neighbourhood that is the angle itself; for a curved one it is
 * larger than the angle of any configuration the rest lengths allow (an angle of a solid corner
 * is at most the sum of its face angles), so the distance it gives is still an upper bound. */
#define RING_NONE 1e300
#define RING_PI   3.14159265358979323846
static void ring_angles(build* b, uint32_t i, uint32_t src) {
	const graph* g = &b->lev;
	const uint32_t first = g->off[i], d = g->off[i + 1] - first;
	double* ang = b->angle;
	uint8_t* done = b->done;
	for (uint32_t k = 0; k < d; ++k) {
		ang[k] = RING_NONE;
		done[k] = 0;
	}
	ang[src] = 0;
	for (;;) {
		uint32_t u = UINT32_MAX;
		for (uint32_t k = 0; k < d; ++k)
			if (!done[k] && ang[k] < RING_NONE && (u == UINT32_MAX || ang[k] < ang[u])) u = k;
		if (u == UINT32_MAX) return;
		done[u] = 1;
		const uint32_t pu = g->nbr[first + u];
		const double ru = g->rest[first + u];
		if (!(ru > (double)PBD_EPSILON_LENGTH)) continue;
		for (uint32_t e = g->off[pu]; e < g->off[pu + 1]; ++e) {
			const uint32_t v = neighbour_slot(g, i, g->nbr[e]);
			if (v == UINT32_MAX || done[v]) continue;
			const double rv = g->rest[first + v], ruv = g->rest[e];
			if (!(rv > (double)PBD_EPSILON_LENGTH)) continue;
			double c = (ru * ru + rv * rv - ruv * ruv) / (2 * ru * rv);
			c = c < -1 ? -1 : c > 1 ? 1 : c;
			const double th = ang[u] + acos(c);
			if (th < ang[v]) ang[v] = th;
		}
	}
}

/* Steps 2 to 4 for the fine particles of level l: parents and weights appended to the
 * hierarchy, masses aggregated, coarse edges through each fine particle added to b->next. */
static bool parents(build* b, int l) {
	pbd_hierarchy* h = b->w->hier;
	pbd_alloc_ctx* mem = &b->w->mem;
	const graph* g = &b->lev;
	for (uint32_t i = 0; i < b->np; ++i) {
		if (!b->member[i] || b->coarse[i]) continue;
		/* the nearest coarse neighbours, by (rest, index): an insertion into a short sorted list */
		uint32_t idx[PBD_HIERARCHY_MAX_PARENTS], slot[PBD_HIERARCHY_MAX_PARENTS];
		double rest[PBD_HIERARCHY_MAX_PARENTS];
		uint32_t m = 0;
		for (uint32_t k = g->off[i]; k < g->off[i + 1]; ++k) {
			const uint32_t j = g->nbr[k];
			if (!b->coarse[j]) continue;
			const double r = g->rest[k];
			uint32_t at = m;
			while (at > 0 && (rest[at - 1] > r || (rest[at - 1] == r && idx[at - 1] > j))) --at;
			if (at == PBD_HIERARCHY_MAX_PARENTS) continue;
			const uint32_t last = m < PBD_HIERARCHY_MAX_PARENTS ? m : PBD_HIERARCHY_MAX_PARENTS - 1;
			for (uint32_t s = last; s > at; --s) {
				idx[s] = idx[s - 1];
				rest[s] = rest[s - 1];
				slot[s] = slot[s - 1];
			}
			idx[at] = j;
			rest[at] = r;
			slot[at] = k - g->off[i];
			if (m < PBD_HIERARCHY_MAX_PARENTS) ++m;
		}
		const pbd_grow_item fines[2] = {{(void**)&h->fine, sizeof *h->fine}, {(void**)&h->par_end, sizeof *h->par_end}};
		const pbd_grow_item pars[2] = {{(void**)&h->par, sizeof *h->par}, {(void**)&h->weight, sizeof *h->weight}};
		if (!grow_arrays_u32(mem, fines, 2, &h->cap_f, (size_t)h->nf + 1) ||
		    !grow_arrays_u32(mem, pars, 2, &h->cap_par, (size_t)h->npar + m))
			return false;
		/* Inverse rest lengths, normalised; a zero rest length weighs as the shortest usable one. */
		double sum = 0, inv[PBD_HIERARCHY_MAX_PARENTS];
		for (uint32_t s = 0; s < m; ++s) {
			inv[s] = 1.0 / (rest[s] > (double)PBD_EPSILON_LENGTH ? rest[s] : (double)PBD_EPSILON_LENGTH);
			sum += inv[s];
		}
		for (uint32_t s = 0; s < m; ++s) {
			const pbd_real wr = (pbd_real)(inv[s] / sum);
			h->par[h->npar + s] = idx[s];
			h->weight[h->npar + s] = wr;
			if (!isinf(b->mass[idx[s]])) b->mass[idx[s]] += (double)wr * b->mass[i];
		}
		h->npar += m;
		h->fine[h->nf] = i;
		h->par_end[h->nf] = h->npar;
		h->nf++;
		/* The coarse edges through i (step 3). */
		const bool unfold = l == 0 && g->off[i + 1] - g->off[i] <= PBD_HIERARCHY_MAX_RING;
		for (uint32_t s = 0; s < m; ++s) {
			if (unfold) ring_angles(b, i, slot[s]);
			for (uint32_t t = s + 1; t < m; ++t) {
				double r = rest[s] + rest[t];
				if (flat_pair(b, idx[s], idx[t])) {
					r = hypot(b->px[idx[s]] - b->px[idx[t]], b->py[idx[s]] - b->py[idx[t]]);
				} else if (unfold && b->angle[slot[t]] < RING_PI) {
					const double th = b->angle[slot[t]];
					const double d2 = rest[s] * rest[s] + rest[t] * rest[t] - 2 * rest[s] * rest[t] * cos(th);
					r = sqrt(d2 > 0 ? d2 : 0);
				}
				if (!edge_push(mem, &b->next, idx[s], idx[t], r)) return false;
			}
		}
	}
	return true;
}

/* The coarse constraints of level l from b->next, coloured first-fit and stored colour by colour. */
static bool coarse_constraints(build* b, uint32_t l) {
	pbd_hierarchy* h = b->w->hier;
	pbd_alloc_ctx* mem = &b->w->mem;
	const edge_buf* E = &b->next;
	const pbd_grow_item cons = {(void**)&h->con, sizeof *h->con};
	if (!grow_arrays_u32(mem, &cons, 1, &h->cap_c, (size_t)h->nc + E->n)) return false;
	if (!grow_to(mem, (void**)&b->colour, sizeof *b->colour, &b->cap_colour, E->n ? E->n : 1)) return false;
	uint64_t* masks = b->w->colour_mask;
	memset(masks, 0, (size_t)b->np * sizeof *masks);
	uint32_t start[PBD_GROUP_COUNT];
	memset(start, 0, sizeof start);
	for (size_t k = 0; k < E->n; ++k) {
		const hedge* e = &E->e[k];
		b->colour[k] = UINT32_MAX;
		if (isinf(b->mass[e->a]) && isinf(b->mass[e->b])) continue; /* both ends pinned */
		const uint32_t p[2] = {e->a, e->b};
		b->colour[k] = pbd_colour_first_fit(masks, p, 2);
		start[b->colour[k]]++;
	}
	uint32_t sum = h->nc;
	for (int g = 0; g < PBD_GROUP_COUNT; ++g) {
		const uint32_t count = start[g];
		start[g] = sum;
		sum += count;
		h->group_end[l][g] = sum;
	}
	for (size_t k = 0; k < E->n; ++k) {
		if (b->colour[k] == UINT32_MAX) continue;
		const hedge* e = &E->e[k];
		pbd_coarse_c* c = &h->con[start[b->colour[k]]++];
		c->a = e->a;
		c->b = e->b;
		c->rest = (pbd_real)e->rest;
		c->wa = isinf(b->mass[e->a]) ? 0 : (pbd_real)(1.0 / b->mass[e->a]);
		c->wb = isinf(b->mass[e->b]) ? 0 : (pbd_real)(1.0 / b->mass[e->b]);
	}
	h->nc = sum;
	h->con_end[l] = sum;
	return true;
}

static void reset(pbd_hierarchy* h) {
	h->valid = false;
	h->levels = 0;
	h->nc = h->nf = h->npar = 0;
	memset(h->particles, 0, sizeof h->particles);
	memset(h->con_end, 0, sizeof h->con_end);
	memset(h->fine_end, 0, sizeof h->fine_end);
	memset(h->group_end, 0, sizeof h->group_end);
}

static bool build_levels(build* b, int want) {
	pbd_world* w = b->w;
	pbd_hierarchy* h = w->hier;
	pbd_alloc_ctx* mem = &w->mem;
	const uint32_t np = b->np;
	/* Level 0: the structural and shear distance constraints, in the order of addition. Bend
	 * edges join particles two apart, which would make every second particle a neighbour. */
	for (uint32_t u = 0, n = pbd_world_distance_count(w); u < n; ++u) {
		pbd_distance_def d;
		if (pbd_world_get_distance(w, u, &d) != PBD_OK) return false;
		if (d.kind == PBD_EDGE_BEND || d.a == d.b) continue;
		if (!edge_push(mem, &b->cur, d.a, d.b, (double)d.rest)) return false;
	}
	edge_unique(&b->cur);
	memset(b->member, 0, np);
	for (size_t k = 0; k < b->cur.n; ++k) b->member[b->cur.e[k].a] = b->member[b->cur.e[k].b] = 1;
	for (uint32_t i = 0; i < np; ++i) {
		b->mass[i] = w->w[i] > 0 ? 1.0 / (double)w->w[i] : (double)INFINITY;
		h->particles[0] += b->member[i];
	}
	for (int l = 0; l < want; ++l) {
		if (!graph_build(b, &b->cur)) return false;
		if (l == 0) flat_layout(b);
		uint32_t nfree = 0;
		const uint32_t ncoarse = select_coarse(b, &nfree);
		/* Nothing to gain from a level as large as the last, or one where nothing can move. */
		if (ncoarse >= h->particles[l] || nfree == 0) break;
		const uint32_t nf0 = h->nf, npar0 = h->npar;
		b->next.n = 0;
		for (size_t k = 0; k < b->cur.n; ++k) {
			const hedge* e = &b->cur.e[k];
			if (b->coarse[e->a] && b->coarse[e->b] && !edge_push(mem, &b->next, e->a, e->b, e->rest)) return false;
		}
		if (!parents(b, l)) return false;
		edge_unique(&b->next);
		if (b->next.n == 0) { /* a level without constraints moves nothing */
			h->nf = nf0;
			h->npar = npar0;
			break;
		}
		if (!coarse_constraints(b, (uint32_t)l + 1)) return false;
		h->levels = (uint32_t)l + 1;
		h->particles[l + 1] = ncoarse;
		h->fine_end[l + 1] = h->nf;
		memcpy(b->member, b->coarse, np);
		edge_buf t = b->cur;
		b->cur = b->next;
		b->next = t;
	}
	return true;
}

pbd_status pbd_hierarchy_build(pbd_world* w) {
	pbd_hierarchy* h = w->hier;
	reset(h);
	const int want = w->def.hierarchy_levels;
	h->built_for = want;
	w->masses_changed = false;
	if (want <= 0 || w->np == 0) {
		h->valid = true;
		return PBD_OK;
	}
	build b;
	memset(&b, 0, sizeof b);
	b.w = w;
	b.np = w->np;
	const size_t np = w->np;
	pbd_alloc_ctx* mem = &w->mem;
	b.member = (uint8_t*)pbd_alloc(mem, np);
	b.coarse = (uint8_t*)pbd_alloc(mem, np);
	b.mass = (double*)pbd_alloc(mem, np * sizeof *b.mass);
	b.lev.off = (uint32_t*)pbd_alloc(mem, (np + 1) * sizeof *b.lev.off);
	b.px = (double*)pbd_alloc(mem, np * sizeof *b.px);
	b.py = (double*)pbd_alloc(mem, np * sizeof *b.py);
	b.placed = (uint8_t*)pbd_alloc(mem, np);
	b.queued = (uint8_t*)pbd_alloc(mem, np);
	b.queue = (uint32_t*)pbd_alloc(mem, np * sizeof *b.queue);
	b.piece = (uint32_t*)pbd_alloc(mem, np * sizeof *b.piece);
	b.flat = (uint8_t*)pbd_alloc(mem, np);
	b.angle = (double*)pbd_alloc(mem, PBD_HIERARCHY_MAX_RING * sizeof *b.angle);
	b.done = (uint8_t*)pbd_alloc(mem, PBD_HIERARCHY_MAX_RING);
	const bool ok = b.member && b.coarse && b.mass && b.lev.off && b.px && b.py && b.placed && b.queued && b.queue &&
	                b.piece && b.flat && b.angle && b.done && build_levels(&b, want);
	build_free(&b);
	if (!ok) {
		reset(h);
		return PBD_ERR_OUT_OF_MEMORY;
	}
	h->valid = true;
	return PBD_OK;
}

uint32_t pbd_world_hierarchy_levels(const pbd_world* w, uint32_t* particles) {
	if (!w || !w->hier->valid || w->masses_changed || w->def.hierarchy_levels == 0) return 0;
	if (particles)
		for (uint32_t l = 0; l <= w->hier->levels; ++l) particles[l] = w->hier->particles[l];
	return w->hier->levels;
}

void pbd_hierarchy_free(pbd_world* w) {
	pbd_hierarchy* h = w->hier;
	pbd_free(&w->mem, h->con, (size_t)h->cap_c * sizeof *h->con);
	pbd_free(&w->mem, h->fine, (size_t)h->cap_f * sizeof *h->fine);
	pbd_free(&w->mem, h->par_end, (size_t)h->cap_f * sizeof *h->par_end);
	pbd_free(&w->mem, h->par, (size_t)h->cap_par * sizeof *h->par);
	pbd_free(&w->mem, h->weight, (size_t)h->cap_par * sizeof *h->weight);
	memset(h, 0, sizeof *h);
}

/* Gauss-Seidel over coarse constraints [first, end): hard, and only when stretched. The length
 * test runs on squares, so an unstretched constraint costs no square root. */
static void project_coarse(const pbd_step_ctx* ctx, const pbd_coarse_c* restrict c, uint32_t first, uint32_t end) {
	const pbd_vec3* restrict x = ctx->x;
	pbd_vec3* restrict q = ctx->q;
	for (uint32_t k = first; k < end; ++k) {
		const uint32_t a = c[k].a, b = c[k].b;
		const pbd_vec3 d = pbd_v3_add(pbd_v3_sub(x[a], x[b]), pbd_v3_sub(q[a], q[b]));
		const pbd_real len2 = pbd_v3_dot(d, d), rest = c[k].rest;
		if (!(len2 > rest * rest)) continue;
		const pbd_real len = PBD_SQRT(len2);
		if (!(len >= PBD_EPSILON_LENGTH)) continue;
		const pbd_real wa = c[k].wa, wb = c[k].wb;
		const pbd_real s = (len - rest) / ((wa + wb) * len);
		if (wa > 0) q[a] = pbd_v3_sub(q[a], pbd_v3_scale(d, wa * s));
		if (wb > 0) q[b] = pbd_v3_add(q[b], pbd_v3_scale(d, wb * s));
	}
}

/* A stage of the hierarchical pass: one colour of a level's coarse constraints, or the fine
 * particles of a level, interpolated from the coarse ones (which no fine particle of the same
 * level is), both in blocks. */
typedef struct coarse_stage {
	pbd_world* w;
	const pbd_step_ctx* ctx;
	uint32_t first, end;
} coarse_stage;

static void coarse_block(void* p, uint32_t block, uint32_t worker) {
	(void)worker;
	const coarse_stage* s = (const coarse_stage*)p;
	const uint32_t size = s->w->exec.block_constraints;
	uint32_t first = s->first + block * size;
	const uint32_t end = pbd_block_end(first, s->end, size);
#ifdef PBD_HAVE_AVX2
	/* AVX2 lanes over the block's multiple of 8, the scalar kernel on its tail: the same bits. */
	if (s->ctx->simd && end - first >= 8) {
		const uint32_t split = first + (end - first) / 8 * 8;
		pbd_coarse_project_avx2(s->ctx, s->w->hier->con, first, split);
		first = split;
	}
#endif
	if (first < end) project_coarse(s->ctx, s->w->hier->con, first, end);
}

static void interpolate_block(void* p, uint32_t block, uint32_t worker) {
	(void)worker;
	const coarse_stage* s = (const coarse_stage*)p;
	const pbd_hierarchy* h = s->w->hier;
	const pbd_vec3* restrict q0 = s->w->q_iter;
	pbd_vec3* restrict q = s->w->q;
	const uint32_t size = s->w->exec.block_particles, first = s->first + block * size;
	for (uint32_t k = first, end = pbd_block_end(first, s->end, size); k < end; ++k) {
		pbd_vec3 dq = pbd_v3(0, 0, 0);
		for (uint32_t j = k ? h->par_end[k - 1] : 0; j < h->par_end[k]; ++j) {
			const uint32_t c = h->par[j];
			dq = pbd_v3_add(dq, pbd_v3_scale(pbd_v3_sub(q[c], q0[c]), h->weight[j]));
		}
		q[h->fine[k]] = pbd_v3_add(q[h->fine[k]], dq);
	}
}

void pbd_hierarchy_solve(pbd_world* w, const pbd_step_ctx* ctx) {
	const pbd_hierarchy* h = w->hier;
	if (!h->levels) return;
	/* q_iter is Chebyshev's scratch during the iterations, which begin after this pass. */
	memcpy(w->q_iter, w->q, (size_t)w->np * sizeof *w->q_iter);
	const int iterations = w->def.hierarchy_iterations;
	coarse_stage s = {w, ctx, 0, 0};
	for (uint32_t l = h->levels; l >= 1; --l) {
		const int sweeps = pbd_hierarchy_sweeps(l, iterations);
		for (int it = 0; it < sweeps; ++it) {
			for (int g = 0; g < PBD_PARTITION_COLOURS; ++g) {
				s.first = g ? h->group_end[l][g - 1] : h->con_end[l - 1];
				s.end = h->group_end[l][g];
				pbd_exec_stage(&w->exec, coarse_block, &s, pbd_blocks(s.end - s.first, w->exec.block_constraints));
			}
			project_coarse(ctx, h->con, h->group_end[l][PBD_PARTITION_COLOURS - 1], h->con_end[l]);
		}
		s.first = h->fine_end[l - 1];
		s.end = h->fine_end[l];
		pbd_exec_stage(&w->exec, interpolate_block, &s, pbd_blocks(s.end - s.first, w->exec.block_particles));
	}
}
