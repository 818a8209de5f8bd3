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
 *     particle i, with rest length r_ai + r_ib through i (the shortest such path). That is the
 *     exact rest distance when a, i and b lie on a line (every coarse edge of a grid), and an
 *     upper bound otherwise, so a coarse constraint never asks for more than the fine ones
 *     already imply: it cannot pull a cloth away from the fine solution. The rest lengths come
 *     from the constraints, never from positions, so a world loaded from a snapshot builds the
 *     same levels.
 *  4. Masses: a coarse particle stands for itself and for the share w_ij of each fine particle
 *     it is a parent of, M_j <- M_j + sum_i w_ij M_i (pinned: infinite). Projecting the coarse
 *     constraints with these masses and interpolating with the same weights keeps the linear
 *     momentum of the whole cloth: sum_i m_i dx_i = sum_j M_j dx_j, which every coarse
 *     projection conserves.
 * The coarse constraints are unilateral (|x_a - x_b| <= rest, Müller's choice): a coarse edge
 * spans folds the fine mesh may make, and pushing it apart would stiffen the cloth in bending.
 *
 * The pass, once per substep before the iterations: for l from the coarsest level down to 1,
 * `hierarchy_iterations` sweeps over level l's constraints, then every particle leaving at level
 * l moves by sum_j w_ij (q_j - q0_j), its parents' displacement since the pass began (q0). A
 * particle is moved that way exactly once, after every coarser level has moved its parents, so
 * it receives the corrections of all coarser levels. Pinned particles are coarse everywhere and
 * have inverse mass 0: nothing moves them. */
#include <stdlib.h>
#include <string.h>

#include "world.h"

typedef struct hedge {
	uint32_t a, b; /* a < b */
	double rest;
} hedge;

typedef struct edge_buf {
	hedge* e;
	size_t n, cap;
} edge_buf;

/* The build's working memory: allocated per build, freed at its end. */
typedef struct build {
	pbd_world* w;
	uint32_t np;
	uint8_t* member; /* in the current level */
	uint8_t* coarse; /* in the next level */
	double* mass;    /* aggregated mass in the current level; INFINITY when pinned */
	uint32_t* off;   /* adjacency of the current level: neighbours of i are [off[i], off[i + 1]) */
	uint32_t* nbr;
	double* nrest;
	size_t cap_adj;
	uint32_t* colour; /* per coarse constraint of the level being made */
	size_t cap_colour;
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
	pbd_free(mem, b->off, (np + 1) * sizeof *b->off);
	pbd_free(mem, b->nbr, b->cap_adj * sizeof *b->nbr);
	pbd_free(mem, b->nrest, b->cap_adj * sizeof *b->nrest);
	pbd_free(mem, b->colour, b->cap_colour * sizeof *b->colour);
	pbd_free(mem, b->cur.e, b->cur.cap * sizeof *b->cur.e);
	pbd_free(mem, b->next.e, b->next.cap * sizeof *b->next.e);
}

/* The current level's adjacency from its edges. */
static bool adjacency(build* b) {
	const edge_buf* E = &b->cur;
	const pbd_grow_item items[2] = {{(void**)&b->nbr, sizeof *b->nbr}, {(void**)&b->nrest, sizeof *b->nrest}};
	if (!grow_arrays(&b->w->mem, items, 2, &b->cap_adj, 2 * E->n)) return false;
	memset(b->off, 0, ((size_t)b->np + 1) * sizeof *b->off);
	for (size_t k = 0; k < E->n; ++k) {
		b->off[E->e[k].a + 1]++;
		b->off[E->e[k].b + 1]++;
	}
	for (uint32_t i = 0; i < b->np; ++i) b->off[i + 1] += b->off[i];
	for (size_t k = 0; k < E->n; ++k) {
		const hedge* e = &E->e[k];
		b->nbr[b->off[e->a]] = e->b;
		b->nrest[b->off[e->a]++] = e->rest;
		b->nbr[b->off[e->b]] = e->a;
		b->nrest[b->off[e->b]++] = e->rest;
	}
	/* the fill advanced every offset to the next particle's start: shift back */
	for (uint32_t i = b->np; i > 0; --i) b->off[i] = b->off[i - 1];
	b->off[0] = 0;
	return true;
}

static uint32_t coarse_neighbours(const build* b, uint32_t i) {
	uint32_t c = 0;
	for (uint32_t k = b->off[i]; k < b->off[i + 1]; ++k) c += b->coarse[b->nbr[k]];
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

/* Steps 2 to 4 for the fine particles of the current level: parents and weights appended to the
 * hierarchy, masses aggregated, coarse edges through each fine particle added to b->next. */
static bool parents(build* b) {
	pbd_hierarchy* h = &b->w->hier;
	pbd_alloc_ctx* mem = &b->w->mem;
	for (uint32_t i = 0; i < b->np; ++i) {
		if (!b->member[i] || b->coarse[i]) continue;
		/* the nearest coarse neighbours, by (rest, index): an insertion into a short sorted list */
		uint32_t idx[PBD_HIERARCHY_MAX_PARENTS];
		double rest[PBD_HIERARCHY_MAX_PARENTS];
		uint32_t m = 0;
		for (uint32_t k = b->off[i]; k < b->off[i + 1]; ++k) {
			const uint32_t j = b->nbr[k];
			if (!b->coarse[j]) continue;
			const double r = b->nrest[k];
			uint32_t at = m;
			while (at > 0 && (rest[at - 1] > r || (rest[at - 1] == r && idx[at - 1] > j))) --at;
			if (at == PBD_HIERARCHY_MAX_PARENTS) continue;
			const uint32_t last = m < PBD_HIERARCHY_MAX_PARENTS ? m : PBD_HIERARCHY_MAX_PARENTS - 1;
			for (uint32_t s = last; s > at; --s) {
				idx[s] = idx[s - 1];
				rest[s] = rest[s - 1];
			}
			idx[at] = j;
			rest[at] = r;
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
		for (uint32_t s = 0; s < m; ++s)
			for (uint32_t t = s + 1; t < m; ++t)
				if (!edge_push(mem, &b->next, idx[s], idx[t], rest[s] + rest[t])) return false;
	}
	return true;
}

/* The coarse constraints of level l from b->next, coloured first-fit and stored colour by colour. */
static bool coarse_constraints(build* b, uint32_t l) {
	pbd_hierarchy* h = &b->w->hier;
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
	pbd_hierarchy* h = &w->hier;
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
		if (!adjacency(b)) return false;
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
		if (!parents(b)) return false;
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
	pbd_hierarchy* h = &w->hier;
	reset(h);
	const int want = w->def.hierarchy_levels;
	h->built_for = want;
	if (want <= 0 || w->np == 0) {
		h->valid = true;
		return PBD_OK;
	}
	build b;
	memset(&b, 0, sizeof b);
	b.w = w;
	b.np = w->np;
	const size_t np = w->np;
	b.member = (uint8_t*)pbd_alloc(&w->mem, np);
	b.coarse = (uint8_t*)pbd_alloc(&w->mem, np);
	b.mass = (double*)pbd_alloc(&w->mem, np * sizeof *b.mass);
	b.off = (uint32_t*)pbd_alloc(&w->mem, (np + 1) * sizeof *b.off);
	const bool ok = b.member && b.coarse && b.mass && b.off && build_levels(&b, want);
	build_free(&b);
	if (!ok) {
		reset(h);
		return PBD_ERR_OUT_OF_MEMORY;
	}
	h->valid = true;
	return PBD_OK;
}

uint32_t pbd_world_hierarchy_levels(const pbd_world* w, uint32_t* particles) {
	if (!w || !w->hier.valid || w->def.hierarchy_levels == 0) return 0;
	if (particles)
		for (uint32_t l = 0; l <= w->hier.levels; ++l) particles[l] = w->hier.particles[l];
	return w->hier.levels;
}

void pbd_hierarchy_free(pbd_world* w) {
	pbd_hierarchy* h = &w->hier;
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
		q[a] = pbd_v3_sub(q[a], pbd_v3_scale(d, wa * s));
		q[b] = pbd_v3_add(q[b], pbd_v3_scale(d, wb * s));
	}
}

void pbd_hierarchy_solve(pbd_world* w, const pbd_step_ctx* ctx) {
	const pbd_hierarchy* h = &w->hier;
	if (!h->levels) return;
	/* q_iter is Chebyshev's scratch during the iterations, which begin after this pass. */
	pbd_vec3* restrict q0 = w->q_iter;
	pbd_vec3* restrict q = w->q;
	memcpy(q0, q, (size_t)w->np * sizeof *q0);
	const int iterations = w->def.hierarchy_iterations;
	for (uint32_t l = h->levels; l >= 1; --l) {
		for (int it = 0; it < iterations; ++it) project_coarse(ctx, h->con, h->con_end[l - 1], h->con_end[l]);
		for (uint32_t k = h->fine_end[l - 1]; k < h->fine_end[l]; ++k) {
			pbd_vec3 dq = pbd_v3(0, 0, 0);
			for (uint32_t j = k ? h->par_end[k - 1] : 0; j < h->par_end[k]; ++j) {
				const uint32_t p = h->par[j];
				dq = pbd_v3_add(dq, pbd_v3_scale(pbd_v3_sub(q[p], q0[p]), h->weight[j]));
			}
			q[h->fine[k]] = pbd_v3_add(q[h->fine[k]], dq);
		}
	}
}
