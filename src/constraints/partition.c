/* The partition of every family's constraints into groups of independent constraints.
 *
 * A Gauss-Seidel sweep is a chain of dependent projections when consecutive constraints share a
 * particle (the edges (0,1), (1,2), (2,3) of a grid row): each waits for the previous store, and
 * the sqrt and division latencies add up. Sweeping group by group, where no two constraints of a
 * group share a particle, lets the processor overlap them (about twice the throughput on a grid
 * cloth), and it is what threads and SIMD need: the constraints of a group give the same bits
 * whether projected one by one, side by side, or split among threads in any way.
 *
 * The groups are a greedy colouring of the constraint graph: families in table order, each in
 * the order of addition, or in layout order for a family that has one (distances: by edge kind,
 * then b - a, then a); each constraint takes the lowest colour that no earlier constraint (of any
 * family) on any of its nodes (particles and bodies, node.h) has, or in layout order the colour of the constraint
 * before it when that is of its class and free. The sweep runs colour by colour, every family's range of that colour in
 * table order, and in the colouring's order within a range. A grid cloth with both diagonals takes 8 colours, each (but
 * for a few edges at the border, which first fit places in an earlier colour) a set of every other row of one direction
 * of edges: runs of consecutive particles, which the AVX-512 lanes move as whole vectors (96 % of the batches of a 128
 * x 128 cloth, 48 % when coloured in the order of addition).
 *
 * The colouring is also what keeps a one-iteration sweep stable. The position update
 * x' = G(2x - x_prev + h^2 g) with v = (x' - x)/h turns an eigenvalue g of the sweep's Jacobian
 * into growth |mu| = |g| + sqrt(g^2 + |g|) per substep when g is real and negative, above 1 once
 * g < -1/3. A sweep in the order of addition lets a correction run along a whole row within one
 * sweep; on a strongly stretched cloth that gives g near -0.4 and the cloth blows up (128 x 128,
 * 1 iteration, <= 15 substeps), while the colour-by-colour sweep keeps every eigenvalue of the
 * same states near the positive axis.
 *
 * It depends only on the constraint lists, so it is deterministic. It runs in the first step
 * after constraints were added, in place, with working arrays grown together with the particles
 * and the constraints: no allocation happens in the step. A constraint whose particles have all
 * 64 colours around them, or which has more than PBD_FAMILY_MAX_ARITY particles, goes to the last
 * group, which is projected in order: still correct, only not independent. */
#include <string.h>

#include "model/world.h"

#define PBD_PARTITION_DONE UINT32_MAX

uint32_t pbd_colour_first_fit(uint64_t* masks, const uint32_t* p, uint32_t n) {
	uint64_t used = 0;
	for (uint32_t i = 0; i < n; ++i) used |= masks[p[i]];
	if (used == UINT64_MAX) return PBD_PARTITION_COLOURS;
	uint32_t c = 0;
	while (used & (1ull << c)) ++c;
	for (uint32_t i = 0; i < n; ++i) masks[p[i]] |= 1ull << c;
	return c;
}

/* The colour of the constraint at position k of family f; marks it on its particles. First fit,
 * except that `prefer` is taken when it is free (a colour below PBD_PARTITION_COLOURS). */
static uint32_t colour_of(const pbd_family* f, const pbd_family_ops* ops, uint32_t k, uint64_t* masks,
                          uint32_t prefer) {
	uint32_t p[PBD_FAMILY_MAX_ARITY];
	const uint32_t n = ops->particles(f, k, 0, p, PBD_FAMILY_MAX_ARITY);
	if (n > PBD_FAMILY_MAX_ARITY) return PBD_PARTITION_COLOURS;
	if (prefer < PBD_PARTITION_COLOURS) {
		uint64_t used = 0;
		for (uint32_t i = 0; i < n; ++i) used |= masks[p[i]];
		if (!(used >> prefer & 1u)) {
			for (uint32_t i = 0; i < n; ++i) masks[p[i]] |= 1ull << prefer;
			return prefer;
		}
	}
	return pbd_colour_first_fit(masks, p, n);
}

/* Moves the records of family f so that the one at position src[k] lands at k, cycle by cycle,
 * through a small buffer; the user map moves with them. */
static void permute(pbd_family* f, const pbd_family_ops* ops, uint32_t* src) {
	const size_t hs = ops->hot_size, cs = ops->cold_size;
	const size_t nl = ops->lambdas ? ops->lambdas : 1;
	const size_t ls = nl * sizeof *f->lambda;
	_Alignas(16) unsigned char hot0[PBD_FAMILY_RECORD_MAX], cold0[PBD_FAMILY_RECORD_MAX], lam0[PBD_FAMILY_RECORD_MAX];
	PBD_ASSERT(hs <= sizeof hot0 && cs <= sizeof cold0 && ls <= sizeof lam0);
	char* hot = (char*)f->hot;
	char* cold = (char*)f->cold;
	char* lam = (char*)f->lambda;
	for (uint32_t k = 0; k < f->n; ++k) {
		if (src[k] == PBD_PARTITION_DONE || src[k] == k) {
			src[k] = PBD_PARTITION_DONE;
			continue;
		}
		memcpy(hot0, hot + k * hs, hs);
		memcpy(cold0, cold + k * cs, cs);
		memcpy(lam0, lam + k * ls, ls);
		const uint32_t user0 = f->user[k];
		uint32_t j = k;
		for (;;) {
			const uint32_t s = src[j];
			src[j] = PBD_PARTITION_DONE;
			if (s == k) {
				memcpy(hot + j * hs, hot0, hs);
				memcpy(cold + j * cs, cold0, cs);
				memcpy(lam + j * ls, lam0, ls);
				f->user[j] = user0;
				break;
			}
			memcpy(hot + j * hs, hot + s * hs, hs);
			memcpy(cold + j * cs, cold + s * cs, cs);
			memcpy(lam + j * ls, lam + s * ls, ls);
			f->user[j] = f->user[s];
			j = s;
		}
	}
	for (uint32_t k = 0; k < f->n; ++k) f->slot[f->user[k]] = k;
}

/* Layout order (pbd_family_ops.layout): class, first particle, then user index, so that the order
 * depends on the constraint set alone and not on how it is stored. */
static bool layout_less(const pbd_family* f, const pbd_family_ops* ops, uint32_t i, uint32_t j) {
	const pbd_layout a = ops->layout(f, i), b = ops->layout(f, j);
	if (a.cls != b.cls) return a.cls < b.cls;
	if (a.first != b.first) return a.first < b.first;
	return f->user[i] < f->user[j];
}

/* Heapsort of the positions pos[0, n) into layout order: in place, so that partitioning needs no
 * memory beyond the family's scratch array, and O(n log n) on any input. */
static void sift_down(const pbd_family* f, const pbd_family_ops* ops, uint32_t* pos, uint32_t root, uint32_t n) {
	for (;;) {
		uint32_t child = 2 * root + 1;
		if (child >= n) return;
		if (child + 1 < n && layout_less(f, ops, pos[child], pos[child + 1])) ++child;
		if (!layout_less(f, ops, pos[root], pos[child])) return;
		const uint32_t t = pos[root];
		pos[root] = pos[child];
		pos[child] = t;
		root = child;
	}
}

static void sort_by_layout(pbd_family* f, const pbd_family_ops* ops) {
	uint32_t* pos = f->scratch;
	const uint32_t n = f->n;
	for (uint32_t k = 0; k < n; ++k) pos[k] = k;
	for (uint32_t i = n / 2; i-- > 0;) sift_down(f, ops, pos, i, n);
	for (uint32_t end = n; end > 1; --end) {
		const uint32_t t = pos[0];
		pos[0] = pos[end - 1];
		pos[end - 1] = t;
		sift_down(f, ops, pos, 0, end - 1);
	}
	permute(f, ops, pos);
}

/* The colouring's walk over one family: the constraint it visits i-th is at position i in layout
 * order (which sort_by_layout made the storage order), or at slot[i] in the order of addition.
 * In layout order a constraint takes the colour of the one before it when that is free and the
 * two are of one class: a row of a grid's edges then stays in one colour past the row's end,
 * where first fit would switch colour at the boundary and leave the rest of the colour in
 * alternate particles. */
typedef struct walk {
	uint64_t cls;
	uint32_t colour;
} walk;

static uint32_t walk_next(const pbd_family* f, const pbd_family_ops* ops, uint32_t i, uint64_t* masks, walk* wk,
                          uint32_t* colour) {
	if (!ops->layout) {
		const uint32_t k = f->slot[i];
		*colour = colour_of(f, ops, k, masks, PBD_PARTITION_COLOURS);
		return k;
	}
	const uint64_t cls = ops->layout(f, i).cls;
	*colour = colour_of(f, ops, i, masks, i > 0 && cls == wk->cls ? wk->colour : PBD_PARTITION_COLOURS);
	wk->cls = cls;
	wk->colour = *colour;
	return i;
}

static void count_degrees(pbd_world* w) {
	const uint32_t nodes = pbd_node_count(w);
	if (nodes) memset(w->degree, 0, (size_t)nodes * sizeof *w->degree);
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		const pbd_family* f = &w->fam[t];
		const pbd_family_ops* ops = pbd_family_table[t];
		uint32_t p[PBD_FAMILY_MAX_ARITY];
		for (uint32_t k = 0; k < f->n; ++k) {
			uint32_t n = PBD_FAMILY_MAX_ARITY;
			for (uint32_t first = 0; first < n; first += PBD_FAMILY_MAX_ARITY) {
				n = ops->particles(f, k, first, p, PBD_FAMILY_MAX_ARITY);
				const uint32_t m = n - first < PBD_FAMILY_MAX_ARITY ? n - first : PBD_FAMILY_MAX_ARITY;
				for (uint32_t i = 0; i < m; ++i) w->degree[p[i]]++;
			}
		}
	}
}

void pbd_partition_build(pbd_world* w) {
	w->topology++;
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) w->fam[t].node_base = w->np;
	uint64_t* masks = w->colour_mask;
	const size_t nodes = pbd_node_count(w);
	/* Pass 1: the colour sizes of every family. The colouring is replayed in pass 2 with the
	 * same masks from zero, so that no per-constraint colour array is needed. */
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t)
		if (pbd_family_table[t]->layout && w->fam[t].n > 1) sort_by_layout(&w->fam[t], pbd_family_table[t]);
	uint32_t start[PBD_FAMILY_COUNT][PBD_GROUP_COUNT];
	memset(start, 0, sizeof start);
	if (nodes) memset(masks, 0, nodes * sizeof *masks);
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		const pbd_family* f = &w->fam[t];
		const pbd_family_ops* ops = pbd_family_table[t];
		walk wk = {0, 0};
		for (uint32_t i = 0; i < f->n; ++i) {
			uint32_t c;
			walk_next(f, ops, i, masks, &wk, &c);
			start[t][c]++;
		}
	}
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		pbd_family* f = &w->fam[t];
		uint32_t sum = 0;
		for (int g = 0; g < PBD_GROUP_COUNT; ++g) {
			const uint32_t count = start[t][g];
			start[t][g] = sum;
			sum += count;
			f->group_end[g] = sum;
		}
		PBD_ASSERT(sum == f->n);
	}
	/* Pass 2: scratch[k] = the position the record to place at k comes from. */
	if (nodes) memset(masks, 0, nodes * sizeof *masks);
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		const pbd_family* f = &w->fam[t];
		const pbd_family_ops* ops = pbd_family_table[t];
		walk wk = {0, 0};
		for (uint32_t i = 0; i < f->n; ++i) {
			uint32_t c;
			const uint32_t k = walk_next(f, ops, i, masks, &wk, &c);
			f->scratch[start[t][c]++] = k;
		}
	}
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		pbd_family* f = &w->fam[t];
		permute(f, pbd_family_table[t], f->scratch);
		if (f->n)
			memset(f->lambda, 0,
			       (size_t)f->n * (pbd_family_table[t]->lambdas ? pbd_family_table[t]->lambdas : 1) *
			           sizeof *f->lambda);
	}
	count_degrees(w);
	/* the records moved: what refresh derives from them per position is rebuilt */
	pbd_families_touch_all(w);
	w->partitioned = true;
}
