/* Bounding volume hierarchy: the build (binned SAH, breadth first, in place) and the two walks. */
#include "collision/bvh.h"

#include <math.h>

#include "collision/shape_math.h"

#define BINS 16

static pbd_real axis_of(pbd_vec3 v, int k) { return k == 0 ? v.x : (k == 1 ? v.y : v.z); }

static pbd_vec3 v3_min(pbd_vec3 a, pbd_vec3 b) {
	return pbd_v3(PBD_FMIN(a.x, b.x), PBD_FMIN(a.y, b.y), PBD_FMIN(a.z, b.z));
}

static pbd_vec3 v3_max(pbd_vec3 a, pbd_vec3 b) {
	return pbd_v3(PBD_FMAX(a.x, b.x), PBD_FMAX(a.y, b.y), PBD_FMAX(a.z, b.z));
}

/* The centre of a primitive's box, halved before the sum so that it cannot overflow. */
static pbd_vec3 centroid(pbd_bvh_box_fn box, const void* ctx, uint32_t prim) {
	pbd_vec3 lo, hi;
	box(ctx, prim, &lo, &hi);
	return pbd_v3_add(pbd_v3_scale(lo, PBD_R(0.5)), pbd_v3_scale(hi, PBD_R(0.5)));
}

/* The bin of centroid coordinate c in [lo, lo + extent], extent > 0. The quotient lies in
 * [0, 1] and cannot overflow however small the extent; the same expression serves the binning
 * and the partition, so that both count the same primitives on each side. */
static int bin_of(pbd_real c, pbd_real lo, pbd_real extent) {
	const int b = (int)((pbd_real)BINS * ((c - lo) / extent));
	return b < 0 ? 0 : (b >= BINS ? BINS - 1 : b);
}

/* Half the surface area of a box, in units of the node it splits (an exact power of two), in
 * double: the cost sums area times count and stays far from overflow. */
static double half_area(pbd_vec3 lo, pbd_vec3 hi, int e) {
	const double x = (double)pbd_shape_ldexp(hi.x - lo.x, e), y = (double)pbd_shape_ldexp(hi.y - lo.y, e),
	             z = (double)pbd_shape_ldexp(hi.z - lo.z, e);
	return x * y + y * z + z * x;
}

typedef struct bin {
	pbd_vec3 lo, hi;
	uint32_t count;
} bin;

/* Centroid coordinate along axis k, primitive index on a tie: a total order. */
static bool before(pbd_bvh_box_fn box, const void* ctx, uint32_t a, uint32_t b, int k) {
	const pbd_real ca = axis_of(centroid(box, ctx, a), k), cb = axis_of(centroid(box, ctx, b), k);
	return ca < cb || (ca == cb && a < b);
}

static void swap_u32(uint32_t* a, uint32_t* b) {
	const uint32_t t = *a;
	*a = *b;
	*b = t;
}

/* Reorders p[0..n) so that p[m] is the m-th in the order `before` along axis k, everything
 * before it precedes it and everything after it follows it (Hoare's selection, median of three). */
static void select_nth(pbd_bvh_box_fn box, const void* ctx, uint32_t* p, uint32_t n, uint32_t m, int k) {
	uint32_t lo = 0, hi = n - 1;
	while (hi > lo + 1) {
		const uint32_t mid = lo + (hi - lo) / 2;
		/* p[lo] <= p[mid] <= p[hi]: the median of three is the pivot, the ends are sentinels. */
		if (before(box, ctx, p[mid], p[lo], k)) swap_u32(&p[mid], &p[lo]);
		if (before(box, ctx, p[hi], p[lo], k)) swap_u32(&p[hi], &p[lo]);
		if (before(box, ctx, p[hi], p[mid], k)) swap_u32(&p[hi], &p[mid]);
		swap_u32(&p[mid], &p[lo + 1]);
		const uint32_t pivot = p[lo + 1];
		uint32_t i = lo + 1, j = hi;
		for (;;) {
			do ++i;
			while (before(box, ctx, p[i], pivot, k));
			do --j;
			while (before(box, ctx, pivot, p[j], k));
			if (j < i) break;
			swap_u32(&p[i], &p[j]);
		}
		p[lo + 1] = p[j];
		p[j] = pivot;
		if (j >= m) hi = j - 1;
		if (j <= m) lo = i;
	}
	if (hi == lo + 1 && before(box, ctx, p[hi], p[lo], k)) swap_u32(&p[lo], &p[hi]);
}

static void bounds_of(pbd_bvh_box_fn box, const void* ctx, const uint32_t* p, uint32_t n, pbd_vec3* lo, pbd_vec3* hi) {
	box(ctx, p[0], lo, hi);
	for (uint32_t i = 1; i < n; ++i) {
		pbd_vec3 l, h;
		box(ctx, p[i], &l, &h);
		*lo = v3_min(*lo, l);
		*hi = v3_max(*hi, h);
	}
}

/* The binned SAH split of p[0..n) (centroid bounds clo..chi): the number that go left, with
 * p reordered so that they come first, and their bounds and the others'; 0 when every axis has
 * all its centroids in one bin. The cheapest cost wins, the lowest axis and bin on a tie. */
static uint32_t sah_split(pbd_bvh_box_fn box, const void* ctx, uint32_t* p, uint32_t n, pbd_vec3 clo, pbd_vec3 chi,
                          pbd_vec3 node_lo, pbd_vec3 node_hi, pbd_vec3* llo, pbd_vec3* lhi, pbd_vec3* rlo,
                          pbd_vec3* rhi) {
	const pbd_vec3 ext = pbd_v3_sub(node_hi, node_lo);
	const pbd_real size = PBD_FMAX(ext.x, PBD_FMAX(ext.y, ext.z));
	const int e = size > 0 ? -pbd_shape_exponent(size) : 0;
	bin bins[3][BINS];
	for (int k = 0; k < 3; ++k)
		for (int b = 0; b < BINS; ++b) bins[k][b].count = 0;
	const pbd_real cext[3] = {chi.x - clo.x, chi.y - clo.y, chi.z - clo.z};
	for (uint32_t i = 0; i < n; ++i) {
		pbd_vec3 l, h;
		box(ctx, p[i], &l, &h);
		const pbd_vec3 c = pbd_v3_add(pbd_v3_scale(l, PBD_R(0.5)), pbd_v3_scale(h, PBD_R(0.5)));
		for (int k = 0; k < 3; ++k) {
			if (!(cext[k] > 0)) continue;
			bin* b = &bins[k][bin_of(axis_of(c, k), axis_of(clo, k), cext[k])];
			if (b->count++ == 0) {
				b->lo = l;
				b->hi = h;
			} else {
				b->lo = v3_min(b->lo, l);
				b->hi = v3_max(b->hi, h);
			}
		}
	}
	int best_k = -1, best_b = 0;
	double best_cost = 0;
	for (int k = 0; k < 3; ++k) {
		if (!(cext[k] > 0)) continue;
		/* Right-hand sums, then a sweep from the left. */
		double right_area[BINS];
		uint32_t right_count[BINS];
		pbd_vec3 rl = pbd_v3(0, 0, 0), rh = pbd_v3(0, 0, 0);
		uint32_t rc = 0;
		for (int b = BINS - 1; b > 0; --b) {
			const bin* bb = &bins[k][b];
			if (bb->count) {
				rl = rc ? v3_min(rl, bb->lo) : bb->lo;
				rh = rc ? v3_max(rh, bb->hi) : bb->hi;
				rc += bb->count;
			}
			right_count[b] = rc;
			right_area[b] = rc ? half_area(rl, rh, e) : 0;
		}
		pbd_vec3 ll = pbd_v3(0, 0, 0), lh = pbd_v3(0, 0, 0);
		uint32_t lc = 0;
		for (int b = 0; b < BINS - 1; ++b) {
			const bin* bb = &bins[k][b];
			if (bb->count) {
				ll = lc ? v3_min(ll, bb->lo) : bb->lo;
				lh = lc ? v3_max(lh, bb->hi) : bb->hi;
				lc += bb->count;
			}
			if (lc == 0 || right_count[b + 1] == 0) continue;
			const double cost = half_area(ll, lh, e) * lc + right_area[b + 1] * right_count[b + 1];
			if (best_k < 0 || cost < best_cost) {
				best_cost = cost;
				best_k = k;
				best_b = b;
			}
		}
	}
	if (best_k < 0) return 0;
	/* The children's bounds are the unions of their bins'. */
	uint32_t nl = 0;
	bool have_l = false, have_r = false;
	for (int b = 0; b < BINS; ++b) {
		const bin* bb = &bins[best_k][b];
		if (!bb->count) continue;
		if (b <= best_b) {
			*llo = have_l ? v3_min(*llo, bb->lo) : bb->lo;
			*lhi = have_l ? v3_max(*lhi, bb->hi) : bb->hi;
			have_l = true;
			nl += bb->count;
		} else {
			*rlo = have_r ? v3_min(*rlo, bb->lo) : bb->lo;
			*rhi = have_r ? v3_max(*rhi, bb->hi) : bb->hi;
			have_r = true;
		}
	}
	const pbd_real c_lo = axis_of(clo, best_k), c_ext = cext[best_k];
	uint32_t i = 0, j = n;
	while (i < j) {
		if (bin_of(axis_of(centroid(box, ctx, p[i]), best_k), c_lo, c_ext) <= best_b)
			++i;
		else
			swap_u32(&p[i], &p[--j]);
	}
	PBD_ASSERT(i == nl);
	return nl;
}

uint32_t pbd_bvh_build(pbd_bvh_node* nodes, uint32_t* order, uint32_t n, pbd_bvh_box_fn box, const void* ctx) {
	PBD_ASSERT(n >= 1);
	for (uint32_t i = 0; i < n; ++i) order[i] = i;
	bounds_of(box, ctx, order, n, &nodes[0].lo, &nodes[0].hi);
	nodes[0].first = 0;
	nodes[0].count = n;
	uint32_t count = 1, level_end = 1;
	int depth = 0;
	/* Breadth first: nodes[i] for i < count are made, those past i wait for their split, and
	 * the depth grows along the array, one level at level_end. */
	for (uint32_t i = 0; i < count; ++i) {
		if (i == level_end) {
			++depth;
			level_end = count;
		}
		pbd_bvh_node* node = &nodes[i];
		const uint32_t first = node->first, cnt = node->count;
		if (cnt <= PBD_BVH_LEAF_SIZE) continue;
		uint32_t* p = order + first;
		pbd_vec3 clo = centroid(box, ctx, p[0]), chi = clo;
		for (uint32_t k = 1; k < cnt; ++k) {
			const pbd_vec3 c = centroid(box, ctx, p[k]);
			clo = v3_min(clo, c);
			chi = v3_max(chi, c);
		}
		pbd_vec3 llo, lhi, rlo, rhi;
		uint32_t nl = 0;
		if (depth < PBD_BVH_SAH_DEPTH)
			nl = sah_split(box, ctx, p, cnt, clo, chi, node->lo, node->hi, &llo, &lhi, &rlo, &rhi);
		if (nl == 0) {
			/* Too deep, or the centroids do not spread: halve the count along the widest
			 * spread of the centroids (any halving serves when they all coincide). */
			const pbd_vec3 ce = pbd_v3_sub(chi, clo);
			const int k = ce.x >= ce.y && ce.x >= ce.z ? 0 : (ce.y >= ce.z ? 1 : 2);
			nl = cnt / 2;
			select_nth(box, ctx, p, cnt, nl, k);
			bounds_of(box, ctx, p, nl, &llo, &lhi);
			bounds_of(box, ctx, p + nl, cnt - nl, &rlo, &rhi);
		}
		PBD_ASSERT(nl > 0 && nl < cnt);
		pbd_bvh_node* l = &nodes[count];
		pbd_bvh_node* r = &nodes[count + 1];
		l->lo = llo;
		l->hi = lhi;
		l->first = first;
		l->count = nl;
		r->lo = rlo;
		r->hi = rhi;
		r->first = first + nl;
		r->count = cnt - nl;
		node->first = count;
		node->count = 0;
		count += 2;
	}
	PBD_ASSERT(depth < PBD_BVH_MAX_DEPTH);
	return count;
}

/* Relative slack of the pruning: a box whose computed distance exceeds the best by less may
 * still hold a primitive equally near (both are rounded), which must be seen for the tie. */
#ifdef PBD_DOUBLE
#define PRUNE_SLACK 0x1p-44
#else
#define PRUNE_SLACK 0x1p-16f
#endif

typedef struct stack_entry {
	uint32_t node;
	pbd_real key;
} stack_entry;

uint32_t pbd_bvh_nearest(const pbd_bvh_node* nodes, const uint32_t* order, pbd_vec3 p, pbd_real scale,
                         pbd_bvh_dist2_fn dist2, void* ctx, pbd_real* best_d2) {
	stack_entry stack[PBD_BVH_MAX_DEPTH + 1];
	int sp = 0;
	uint32_t best = PBD_BVH_NONE;
	pbd_real bd2 = PBD_REAL_MAX, limit = PBD_REAL_MAX;
	uint32_t node = 0;
	for (;;) {
		const pbd_bvh_node* nd = &nodes[node];
		if (nd->count) {
			for (uint32_t k = 0; k < nd->count; ++k) {
				const uint32_t prim = order[nd->first + k];
				const pbd_real d2 = dist2(ctx, prim);
				/* A NaN or infinite d2 is no answer: compared false, it leaves best alone. */
				if (d2 < bd2 || (d2 == bd2 && prim < best)) {
					bd2 = d2;
					best = prim;
					limit = bd2 <= PBD_REAL_MAX / 2 ? bd2 + bd2 * PRUNE_SLACK : PBD_REAL_MAX;
				}
			}
		} else {
			uint32_t a = nd->first, b = nd->first + 1;
			pbd_real da = pbd_bvh_box_dist2(&nodes[a], p, scale), db = pbd_bvh_box_dist2(&nodes[b], p, scale);
			if (db < da) {
				const uint32_t t = a;
				a = b;
				b = t;
				const pbd_real td = da;
				da = db;
				db = td;
			}
			if (db <= limit) {
				PBD_ASSERT(sp <= PBD_BVH_MAX_DEPTH);
				stack[sp].node = b;
				stack[sp].key = db;
				++sp;
			}
			if (da <= limit) {
				node = a;
				continue;
			}
		}
		while (sp > 0 && stack[sp - 1].key > limit) --sp;
		if (sp == 0) break;
		node = stack[--sp].node;
	}
	*best_d2 = bd2;
	return best;
}

/* Where the segment enters the node's box grown by g, or 2 when it misses it before `best`. */
static pbd_real box_entry(const pbd_bvh_node* nd, pbd_vec3 p0, pbd_vec3 d, pbd_real g, pbd_real best) {
	pbd_real t0 = 0, t1 = PBD_FMIN(best, 1);
	const pbd_vec3 grow = pbd_v3(g, g, g);
	return pbd_clip_box(p0, d, pbd_v3_sub(nd->lo, grow), pbd_v3_add(nd->hi, grow), &t0, &t1) ? t0 : 2;
}

uint32_t pbd_bvh_first_hit(const pbd_bvh_node* nodes, const uint32_t* order, pbd_vec3 p0, pbd_vec3 p1, pbd_real grow,
                           pbd_bvh_hit_fn hit, void* ctx, pbd_real* best_s) {
	stack_entry stack[PBD_BVH_MAX_DEPTH + 1];
	int sp = 0;
	const pbd_vec3 d = pbd_v3_sub(p1, p0);
	uint32_t best = PBD_BVH_NONE;
	pbd_real bs = 2;
	uint32_t node = 0;
	if (box_entry(&nodes[0], p0, d, grow, bs) > 1) {
		*best_s = bs;
		return best;
	}
	for (;;) {
		const pbd_bvh_node* nd = &nodes[node];
		if (nd->count) {
			for (uint32_t k = 0; k < nd->count; ++k) {
				const uint32_t prim = order[nd->first + k];
				const pbd_real s = hit(ctx, prim, bs);
				if (s <= 1 && (s < bs || (s == bs && prim < best))) {
					bs = s;
					best = prim;
				}
			}
		} else {
			uint32_t a = nd->first, b = nd->first + 1;
			pbd_real sa = box_entry(&nodes[a], p0, d, grow, bs), sb = box_entry(&nodes[b], p0, d, grow, bs);
			if (sb < sa) {
				const uint32_t t = a;
				a = b;
				b = t;
				const pbd_real ts = sa;
				sa = sb;
				sb = ts;
			}
			if (sb <= 1 && sb <= bs) {
				PBD_ASSERT(sp <= PBD_BVH_MAX_DEPTH);
				stack[sp].node = b;
				stack[sp].key = sb;
				++sp;
			}
			if (sa <= 1 && sa <= bs) {
				node = a;
				continue;
			}
		}
		while (sp > 0 && stack[sp - 1].key > bs) --sp;
		if (sp == 0) break;
		node = stack[--sp].node;
	}
	*best_s = bs;
	return best;
}

/* pbd_boxes_overlap as one test of six comparisons: the short circuits' branches go either way near
 * the query box. */
static bool node_overlaps(const pbd_bvh_node* nd, pbd_vec3 lo, pbd_vec3 hi) {
	return (nd->lo.x <= hi.x) & (lo.x <= nd->hi.x) & (nd->lo.y <= hi.y) & (lo.y <= nd->hi.y) & (nd->lo.z <= hi.z) &
	       (lo.z <= nd->hi.z);
}

void pbd_bvh_overlap(const pbd_bvh_node* nodes, const uint32_t* order, pbd_vec3 lo, pbd_vec3 hi, pbd_bvh_visit_fn visit,
                     void* ctx) {
	uint32_t stack[PBD_BVH_MAX_DEPTH + 1];
	int sp = 0;
	if (!node_overlaps(&nodes[0], lo, hi)) return;
	uint32_t node = 0;
	for (;;) {
		const pbd_bvh_node* nd = &nodes[node];
		if (nd->count) {
			for (uint32_t k = 0; k < nd->count; ++k) visit(ctx, order[nd->first + k]);
		} else {
			const bool a = node_overlaps(&nodes[nd->first], lo, hi), b = node_overlaps(&nodes[nd->first + 1], lo, hi);
			if (b && a) {
				PBD_ASSERT(sp <= PBD_BVH_MAX_DEPTH);
				stack[sp++] = nd->first + 1;
			}
			if (a || b) {
				node = a ? nd->first : nd->first + 1;
				continue;
			}
		}
		if (sp == 0) break;
		node = stack[--sp];
	}
}
