/* Long-range attachments (Kim, Chentanez and Müller 2012): each particle of a set is kept within
 * scale * L of the nearest pinned particle of the set, L being their rest distance, measured in a
 * straight line or along the distance constraints (geodesic). The constraint
 * C = |x - x_pin| - scale * L <= 0 acts only when stretched and moves only the particle: the pin
 * has inverse mass 0. A cloth hanging from a few pins stretches because the iterations carry a
 * pin's pull down a long chain of edges slowly; one constraint per particle straight to its pin
 * removes that lag.
 *
 * The rest data follow the pins. Which particle is pinned is a matter of inverse masses, which
 * pbd_particle_pin / unpin / set_inv_mass change; they mark every family stale, and this family's
 * refresh, which the step runs before its substeps when a family is stale, finds each particle's
 * nearest pin again. Everything it needs is reserved when the set is added, in the family's pool:
 * the graph of the set's distance constraints (geodesic) and the working arrays of the search. So
 * a pin change costs one search at the next step and no allocation, and a snapshot (loaded stale)
 * finds the same pins again before it steps.
 *
 * A set holds one constraint per particle of its range, pinned or not, so that the constraint of
 * a particle exists whatever the pins become; a pinned particle's, or one that reaches no pin
 * (no pin in the set, or none connected to it in geodesic mode), is inactive. */
#include <string.h>

#include "constraints/rows.h"
#include "model/world.h"

#define PBD_LRA_NONE UINT32_MAX

/* Hot data: the particle, its pin (PBD_LRA_NONE when inactive), scale * L, and k' or the
 * compliance (see refresh). */
typedef struct pbd_lra_c {
	uint32_t i, pin;
	pbd_real rest, s;
} pbd_lra_c;

/* Cold data: the set's description, repeated in each of its constraints, and the particle's rest
 * position for the Euclidean distance. */
typedef struct pbd_lra_p {
	pbd_vec3 rest_pos;
	pbd_real scale, stiffness, compliance;
	uint32_t set_first;  /* user index of the set's first constraint */
	uint32_t set_count;  /* its constraints, one per particle of the range, in particle order */
	uint32_t pool_first; /* the set's part of the pool */
	uint32_t mode;       /* pbd_lra_mode */
} pbd_lra_p;

/* A pool element. A geodesic set's part of the pool is
 *   set_count + 1 nodes: a = first edge of the node (the last one: the end), b = position in
 *                        the heap, r = distance found;
 *   2E edges:            a = the neighbour, r = the edge's rest length;
 *   set_count heap slots: a = node;
 * a Euclidean set's is set_count slots: a = a pinned particle of the set (local index). Nodes are
 * local indices 0..set_count-1, the particle first_particle + j. */
typedef struct pbd_lra_node {
	uint32_t a, b;
	pbd_real r;
} pbd_lra_node;

_Static_assert(sizeof(pbd_lra_c) == 2 * sizeof(uint32_t) + 2 * sizeof(pbd_real), "padding in pbd_lra_c");
_Static_assert(sizeof(pbd_lra_p) == 4 * sizeof(uint32_t) + 6 * sizeof(pbd_real), "padding in pbd_lra_p");
_Static_assert(sizeof(pbd_lra_node) == 2 * sizeof(uint32_t) + sizeof(pbd_real), "padding in pbd_lra_node");

#define FAM(w)  (&(w)->fam[PBD_FAMILY_LRA])
#define HOT(f)  ((pbd_lra_c*)(f)->hot)
#define COLD(f) ((pbd_lra_p*)(f)->cold)
#define POOL(f) ((pbd_lra_node*)(f)->pool)

static const pbd_softness_fields softness = PBD_SOFTNESS_FIELDS(PBD_FAMILY_LRA, pbd_lra_c, pbd_lra_p, 1, "set");

#define HEAP_OUT UINT32_MAX /* a node not (or no longer) in the heap */

pbd_lra_def pbd_lra_def_default(void) {
	pbd_lra_def d;
	memset(&d, 0, sizeof d);
	d.mode = PBD_LRA_GEODESIC;
	d.scale = 1;
	d.stiffness = 1;
	return d;
}

/* ---- finding the pins -------------------------------------------------------------------- */

/* Heap order: nearer first, then the lower node, so that ties between pins at equal distance
 * are broken the same way on every machine. */
static inline bool before(const pbd_lra_node* node, uint32_t a, uint32_t b) {
	return node[a].r < node[b].r || (node[a].r == node[b].r && a < b);
}

static void heap_place(pbd_lra_node* node, pbd_lra_node* heap, uint32_t at, uint32_t v) {
	heap[at].a = v;
	node[v].b = at;
}

static void sift_up(pbd_lra_node* node, pbd_lra_node* heap, uint32_t at) {
	const uint32_t v = heap[at].a;
	while (at > 0) {
		const uint32_t parent = (at - 1) / 2;
		if (!before(node, v, heap[parent].a)) break;
		heap_place(node, heap, at, heap[parent].a);
		at = parent;
	}
	heap_place(node, heap, at, v);
}

static void sift_down(pbd_lra_node* node, pbd_lra_node* heap, uint32_t size, uint32_t at) {
	const uint32_t v = heap[at].a;
	for (;;) {
		uint32_t child = 2 * at + 1;
		if (child >= size) break;
		if (child + 1 < size && before(node, heap[child + 1].a, heap[child].a)) child++;
		if (!before(node, heap[child].a, v)) break;
		heap_place(node, heap, at, heap[child].a);
		at = child;
	}
	heap_place(node, heap, at, v);
}

/* Dijkstra from every pin of the set at once: each node ends with the distance to its nearest
 * pin along the graph and that pin (written to its constraint). Sums of edge lengths cannot
 * overflow: the set's total edge length was checked when it was added. */
static void search_geodesic(pbd_family* f, const pbd_lra_p* p, const pbd_real* iw) {
	const uint32_t n = p->set_count;
	pbd_lra_node* node = POOL(f) + p->pool_first;
	const pbd_lra_node* edge = node + n + 1;
	pbd_lra_node* heap = node + n + 1 + node[n].a;
	pbd_lra_c* hot = HOT(f);
	const uint32_t* slot = f->slot + p->set_first;
	uint32_t size = 0;
	for (uint32_t j = 0; j < n; ++j) {
		pbd_lra_c* c = &hot[slot[j]];
		c->pin = PBD_LRA_NONE;
		node[j].b = HEAP_OUT;
		node[j].r = PBD_REAL_MAX;
		if (iw[c->i] == 0) {
			node[j].r = 0;
			c->pin = c->i;
			heap_place(node, heap, size, j);
			sift_up(node, heap, size++);
		}
	}
	while (size > 0) {
		const uint32_t u = heap[0].a;
		node[u].b = HEAP_OUT;
		if (--size > 0) {
			heap_place(node, heap, 0, heap[size].a);
			sift_down(node, heap, size, 0);
		}
		const pbd_real du = node[u].r;
		const uint32_t pin = hot[slot[u]].pin;
		for (uint32_t e = node[u].a; e < node[u + 1].a; ++e) {
			const uint32_t v = edge[e].a;
			const pbd_real dv = du + edge[e].r;
			if (!(dv < node[v].r)) continue;
			const bool queued = node[v].b != HEAP_OUT;
			node[v].r = dv;
			hot[slot[v]].pin = pin;
			if (!queued) {
				heap_place(node, heap, size, v);
				sift_up(node, heap, size++);
			} else {
				sift_up(node, heap, node[v].b);
			}
		}
	}
	for (uint32_t j = 0; j < n; ++j) {
		pbd_lra_c* c = &hot[slot[j]];
		if (c->pin == c->i || c->pin == PBD_LRA_NONE) {
			c->pin = PBD_LRA_NONE;
			c->rest = 0;
		} else {
			c->rest = p->scale * node[j].r;
		}
	}
}

/* The nearest pin in a straight line between rest positions, by a scan over the set's pins
 * (listed first in the pool): pins are few where attachments matter. */
static void search_euclidean(pbd_family* f, const pbd_lra_p* p, const pbd_real* iw) {
	const uint32_t n = p->set_count;
	pbd_lra_node* pins = POOL(f) + p->pool_first;
	pbd_lra_c* hot = HOT(f);
	const pbd_lra_p* cold = COLD(f);
	const uint32_t* slot = f->slot + p->set_first;
	uint32_t np = 0;
	for (uint32_t j = 0; j < n; ++j)
		if (iw[hot[slot[j]].i] == 0) pins[np++].a = j;
	for (uint32_t j = 0; j < n; ++j) {
		pbd_lra_c* c = &hot[slot[j]];
		c->pin = PBD_LRA_NONE;
		c->rest = 0;
		if (iw[c->i] == 0) continue;
		const pbd_vec3 xj = cold[slot[j]].rest_pos;
		double best = -1;
		for (uint32_t k = 0; k < np; ++k) {
			const pbd_vec3 xk = cold[slot[pins[k].a]].rest_pos;
			const double dx = (double)xj.x - (double)xk.x, dy = (double)xj.y - (double)xk.y,
			             dz = (double)xj.z - (double)xk.z;
			const double d2 = dx * dx + dy * dy + dz * dz;
			if (best < 0 || d2 < best) {
				best = d2;
				c->pin = hot[slot[pins[k].a]].i;
			}
		}
		if (best >= 0) c->rest = (pbd_real)((double)p->scale * sqrt(best));
	}
}

/* Finds every set's pins from the inverse masses. Sets are contiguous in the order of addition. */
static void rebuild(pbd_family* f, const pbd_real* iw) {
	for (uint32_t u = 0; u < f->n;) {
		const pbd_lra_p* p = &COLD(f)[f->slot[u]];
		PBD_ASSERT(p->set_first == u && p->set_count > 0);
		if (p->mode == PBD_LRA_GEODESIC)
			search_geodesic(f, p, iw);
		else
			search_euclidean(f, p, iw);
		u += p->set_count;
	}
}

/* ---- API ---------------------------------------------------------------------------------- */

/* Both ends of distance constraint k inside [lo, lo + n), as local indices. */
static bool edge_in(const pbd_world* w, uint32_t k, uint32_t lo, uint32_t n, uint32_t* a, uint32_t* b, pbd_real* len) {
	pbd_distance_def d;
	pbd_world_get_distance(w, k, &d);
	if (d.a < lo || d.a - lo >= n || d.b < lo || d.b - lo >= n) return false;
	*a = d.a - lo;
	*b = d.b - lo;
	*len = d.rest;
	return true;
}

/* The longest rest distance a set can produce, in double: the sum of its edges' lengths (no
 * geodesic path is longer) or twice the largest distance from its first particle (no straight
 * line is longer). Scaled, it must fit the scalar, so no search can overflow. */
static double longest(const pbd_world* w, const pbd_lra_def* d, uint32_t* edges) {
	double total = 0;
	uint32_t e = 0;
	if (d->mode == PBD_LRA_GEODESIC) {
		const uint32_t nd = pbd_world_distance_count(w);
		for (uint32_t k = 0; k < nd; ++k) {
			uint32_t a, b;
			pbd_real len;
			if (!edge_in(w, k, d->first_particle, d->particle_count, &a, &b, &len)) continue;
			total += (double)len;
			e++;
		}
	} else {
		const pbd_vec3 x0 = w->x[d->first_particle];
		for (uint32_t j = 0; j < d->particle_count; ++j) {
			const pbd_vec3 x = w->x[d->first_particle + j];
			const double dx = (double)x.x - (double)x0.x, dy = (double)x.y - (double)x0.y,
			             dz = (double)x.z - (double)x0.z;
			const double r = 2 * sqrt(dx * dx + dy * dy + dz * dz);
			if (r > total) total = r;
		}
	}
	*edges = e;
	return total * (double)d->scale;
}

static pbd_status validate(pbd_world* w, uint32_t k, const pbd_lra_def* d, uint64_t* pool) {
	const char* fn = "pbd_world_add_lras";
	if (d->particle_count == 0) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: set %u: particle_count is 0", fn, k);
	if (d->first_particle >= w->np || d->particle_count > w->np - d->first_particle)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: set %u: particles [%u, %u) exceed the %u particles", fn, k,
		                d->first_particle, d->first_particle + d->particle_count, w->np);
	if (d->mode != PBD_LRA_EUCLIDEAN && d->mode != PBD_LRA_GEODESIC)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: set %u: unknown mode %d", fn, k, (int)d->mode);
	if (!pbd_is_finite(d->scale) || !(d->scale > 0))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: set %u: scale must be finite and > 0 (got %.9g)", fn, k,
		                (double)d->scale);
	const pbd_status st = pbd_check_softness(w, fn, softness.item, k, d->stiffness, d->compliance);
	if (st != PBD_OK) return st;
	uint32_t edges = 0;
	if (!(longest(w, d, &edges) < (double)PBD_REAL_MAX / 4))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: set %u: its rest distances would overflow the scalar", fn, k);
	*pool += d->mode == PBD_LRA_GEODESIC ? 2 * (uint64_t)d->particle_count + 1 + 2 * (uint64_t)edges
	                                     : (uint64_t)d->particle_count;
	return PBD_OK;
}

/* The set's graph, in compressed rows: the edges of node j are [node[j].a, node[j + 1].a). */
static void build_graph(const pbd_world* w, const pbd_lra_def* d, pbd_lra_node* node) {
	const uint32_t n = d->particle_count, nd = pbd_world_distance_count(w);
	pbd_lra_node* edge = node + n + 1;
	for (uint32_t k = 0; k < nd; ++k) {
		uint32_t a, b;
		pbd_real len;
		if (!edge_in(w, k, d->first_particle, n, &a, &b, &len)) continue;
		node[a].a++;
		node[b].a++;
	}
	uint32_t sum = 0; /* counts -> ends of the rows, filled backwards below */
	for (uint32_t j = 0; j <= n; ++j) {
		sum += node[j].a;
		node[j].a = sum;
	}
	for (uint32_t k = nd; k-- > 0;) {
		uint32_t a, b;
		pbd_real len;
		if (!edge_in(w, k, d->first_particle, n, &a, &b, &len)) continue;
		const uint32_t ea = --node[a].a, eb = --node[b].a;
		edge[ea].a = b;
		edge[ea].r = len;
		edge[eb].a = a;
		edge[eb].r = len;
	}
}

pbd_status pbd_world_add_lras(pbd_world* w, uint32_t count, const pbd_lra_def* defs, uint32_t* first) {
	const char* fn = "pbd_world_add_lras";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	if (count == 0) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: count is 0", fn);
	if (!defs) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: defs is NULL", fn);
	uint64_t constraints = 0, pool = 0;
	for (uint32_t k = 0; k < count; ++k) {
		const pbd_status st = validate(w, k, &defs[k], &pool);
		if (st != PBD_OK) return st;
		constraints += defs[k].particle_count;
	}
	pbd_family* f = FAM(w);
	if (constraints > UINT32_MAX - 1 - f->n || pool > UINT32_MAX - 1 - f->pool_n)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: too many constraints", fn);
	const uint32_t pool_base = pbd_family_pool_append(w, PBD_FAMILY_LRA, (uint32_t)pool);
	const uint32_t base =
	    pool_base == UINT32_MAX ? UINT32_MAX : pbd_family_append(w, PBD_FAMILY_LRA, (uint32_t)constraints);
	if (base == UINT32_MAX) {
		if (pool_base != UINT32_MAX) f->pool_n = pool_base; /* the pool holds only whole sets */
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %llu constraints", fn,
		                (unsigned long long)constraints);
	}
	uint32_t u = base, at = pool_base;
	for (uint32_t k = 0; k < count; ++k) {
		const pbd_lra_def* d = &defs[k];
		for (uint32_t j = 0; j < d->particle_count; ++j) {
			pbd_lra_c* c = &HOT(f)[u + j]; /* fresh records sit at their user index until partitioned */
			c->i = d->first_particle + j;
			c->pin = PBD_LRA_NONE;
			pbd_lra_p* p = &COLD(f)[u + j];
			p->rest_pos = w->x[c->i];
			p->scale = d->scale;
			p->stiffness = d->stiffness;
			p->compliance = d->compliance;
			p->set_first = u;
			p->set_count = d->particle_count;
			p->pool_first = at;
			p->mode = (uint32_t)d->mode;
		}
		if (d->mode == PBD_LRA_GEODESIC) {
			build_graph(w, d, POOL(f) + at);
			at += 2 * d->particle_count + 1 + POOL(f)[at + d->particle_count].a;
		} else {
			at += d->particle_count;
		}
		u += d->particle_count;
	}
	PBD_ASSERT(at == f->pool_n);
	rebuild(f, w->w);
	if (first) *first = base;
	return PBD_OK;
}

uint32_t pbd_world_lra_count(const pbd_world* w) { return w ? FAM(w)->n : 0; }

pbd_status pbd_world_get_lra(const pbd_world* w, uint32_t index, pbd_lra_info* out) {
	if (!w || !out) return PBD_ERR_INVALID_ARGUMENT;
	const pbd_family* f = FAM(w);
	if (index >= f->n)
		return pbd_fail((pbd_world*)w, PBD_ERR_OUT_OF_RANGE, "pbd_world_get_lra: constraint %u out of range (%u)",
		                index, f->n);
	const pbd_lra_c* c = &HOT(f)[f->slot[index]];
	const pbd_lra_p* p = &COLD(f)[f->slot[index]];
	out->particle = c->i;
	out->pin = c->pin;
	out->rest = c->rest;
	out->stiffness = p->stiffness;
	out->compliance = p->compliance;
	return PBD_OK;
}

pbd_status pbd_world_set_lra_material(pbd_world* w, uint32_t first, uint32_t count, pbd_real stiffness,
                                      pbd_real compliance) {
	return pbd_family_set_softness(w, "pbd_world_set_lra_material", &softness, first, count, stiffness, compliance);
}

/* ---- ops ---------------------------------------------------------------------------------- */

/* A stale family (pins or masses changed, constraints added, a snapshot loaded) finds its pins
 * again; a refresh for new settings alone (iterations, formulation, substep) only derives s. */
static void refresh(pbd_family* f, const pbd_step_ctx* ctx) {
	if (f->stale) rebuild(f, ctx->iw);
	pbd_family_refresh_softness(f, &softness, ctx);
}

/* Only the particle: the pin has inverse mass 0 in every step the constraint is active (a pin
 * change rebuilds the pins before the step), so it is read, never moved, and two constraints
 * to the same pin are independent. Listing the pin would put every constraint of a set around a
 * handful of particles and exhaust their colours. */
static uint32_t particles(const pbd_family* f, uint32_t k, uint32_t first, uint32_t* out, uint32_t cap) {
	if (first == 0 && cap >= 1) out[0] = HOT(f)[k].i;
	return 1;
}

/* Unilateral: an active constraint acts once |d| > rest, tested on squares before any square
 * root. Gives d = x - x_pin, its length and C = |d| - rest > 0 when taut; false when slack or
 * inactive. */
static inline bool taut(const pbd_step_ctx* ctx, const pbd_lra_c* c, pbd_vec3* d, pbd_real* len, pbd_real* C) {
	if (c->pin == PBD_LRA_NONE) return false;
	*d = pbd_rel(ctx, c->i, c->pin);
	const pbd_real len2 = pbd_v3_dot(*d, *d);
	if (!(len2 > c->rest * c->rest)) return false;
	*len = PBD_SQRT(len2);
	*C = *len - c->rest;
	return true;
}

/* PBD moves the particle by -k' C n (the pin takes none of it), XPBD by w n dlambda. */
static void project(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_lra_c* restrict c = HOT(f);
	pbd_vec3* restrict q = ctx->q;
	const pbd_real* restrict iw = ctx->iw;
	pbd_real* restrict lambda = f->lambda;
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD;
	const pbd_real inv_h2 = ctx->inv_h2;
	for (uint32_t k = first; k < end; ++k) {
		const uint32_t i = c[k].i;
		const pbd_real w = iw[i];
		pbd_vec3 d;
		pbd_real len, C;
		if (w == 0 || !taut(ctx, &c[k], &d, &len, &C)) continue;
		pbd_real s; /* the move is d * s */
		if (xpbd) {
			const pbd_real at = c[k].s * inv_h2;
			const pbd_real dl = (-C - at * lambda[k]) / (w + at);
			lambda[k] += dl;
			s = w * dl / len;
		} else {
			s = -c[k].s * C / len;
		}
		q[i] = pbd_v3_add(q[i], pbd_v3_scale(d, s));
	}
}

/* Jacobi: the same from the iteration's start, scaled by omega / (N + alpha) for the
 * mass-weighted split (N the particle's constraint count), whole for the equal split. */
static void jacobi(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_lra_c* restrict c = HOT(f);
	pbd_vec3* restrict dx = ctx->dx;
	const pbd_real* restrict iw = ctx->iw;
	const uint32_t* restrict deg = ctx->degree;
	pbd_real* restrict lambda = f->lambda;
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD;
	const bool equal = ctx->jacobi_equal;
	const pbd_real alpha = ctx->jacobi_alpha, omega = ctx->jacobi_omega, inv_h2 = ctx->inv_h2;
	for (uint32_t k = first; k < end; ++k) {
		const uint32_t i = c[k].i;
		pbd_vec3 d;
		pbd_real len, C;
		if (iw[i] == 0 || !taut(ctx, &c[k], &d, &len, &C)) continue;
		const pbd_real w = equal ? 1 : iw[i];
		const pbd_real fk = equal ? 1 : omega / ((pbd_real)deg[i] + alpha);
		pbd_real s;
		if (xpbd) {
			const pbd_real at = c[k].s * inv_h2;
			const pbd_real dl = fk * ((-C - at * lambda[k]) / (w + at));
			lambda[k] += dl;
			s = w * dl / len;
		} else {
			s = fk * (-c[k].s * C / len);
		}
		dx[i] = pbd_v3_add(dx[i], pbd_v3_scale(d, s));
	}
}

/* C = max(0, |x - x_pin| - rest) with constant 1 / compliance on the particle alone (the pin is
 * pinned: a force on it moves nothing), gradient (x - x_pin) / |x - x_pin| when taut; a slack or
 * inactive constraint keeps its row with C = 0 and no gradient. Gauss-Newton stiffness only. */
static void linearize(const pbd_step_ctx* ctx, const pbd_family* f, uint32_t first, uint32_t end, pbd_rows* rows) {
	const pbd_lra_c* c = HOT(f);
	for (uint32_t k = first; k < end; ++k) {
		const pbd_real kk = pbd_rows_k(COLD(f)[k].compliance);
		if (kk == 0) pbd_rows_note_hard(rows, PBD_FAMILY_LRA, f->user[k]);
		pbd_vec3 d, g = pbd_v3(0, 0, 0);
		pbd_real len, C = 0;
		if (taut(ctx, &c[k], &d, &len, &C)) g = pbd_v3_scale(d, 1 / len);
		pbd_rows_add_general(rows, PBD_FAMILY_LRA, &c[k].i, &g, 1, C, kk);
	}
}

/* The stretch past the rest, max(0, |x - x_pin| - rest), in double from x + x_lo. */
static double stretch(const pbd_world* w, const pbd_lra_c* c) {
	const pbd_vec3 xa = w->x[c->i], xb = w->x[c->pin], la = w->x_lo[c->i], lb = w->x_lo[c->pin];
	const double dx = ((double)xa.x - (double)xb.x) + ((double)la.x - (double)lb.x);
	const double dy = ((double)xa.y - (double)xb.y) + ((double)la.y - (double)lb.y);
	const double dz = ((double)xa.z - (double)xb.z) + ((double)la.z - (double)lb.z);
	const double C = sqrt(dx * dx + dy * dy + dz * dz) - (double)c->rest;
	return C > 0 ? C : 0;
}

/* Over the active constraints: violation = the stretch past the rest (m), strain = that over the
 * rest where rest > 0, energy C^2 / (2 alpha) of the stretch (a slack constraint stores none). */
static void stats(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end, pbd_family_sums* out) {
	const bool xpbd = pbd_energy_from_compliance(w);
	for (uint32_t k = first; k < end; ++k) {
		const pbd_lra_c* c = &HOT(f)[k];
		const pbd_lra_p* p = &COLD(f)[k];
		pbd_sums_stiffness(out, xpbd, p->stiffness);
		if (c->pin == PBD_LRA_NONE) continue;
		const double C = stretch(w, c);
		out->max_violation = pbd_max_sticky(out->max_violation, C);
		if (c->rest > 0) pbd_sums_strain(out, C / (double)c->rest);
		pbd_sums_energy(out, xpbd, C, p->compliance);
	}
}

static double max_strain(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end) {
	double m = 0;
	for (uint32_t k = first; k < end; ++k) {
		const pbd_lra_c* c = &HOT(f)[k];
		if (c->pin == PBD_LRA_NONE || !(c->rest > 0)) continue;
		const double strain = stretch(w, c) / (double)c->rest;
		m = pbd_max_sticky(m, strain);
	}
	return m;
}

/* A loaded record: its set must be whole and consistent with the pool, since the refresh that
 * follows a load walks the sets and their graphs. */
static bool check(const pbd_world* w, const pbd_family* f, uint32_t k, const char** why) {
	const pbd_lra_c* c = &HOT(f)[k];
	const pbd_lra_p* p = &COLD(f)[k];
	const uint32_t u = f->user[k];
	if (c->pin != PBD_LRA_NONE && c->pin >= w->np) return *why = "has a pin out of range", false;
	if (!pbd_is_finite(c->rest) || c->rest < 0) return *why = "has an invalid rest distance", false;
	if (!pbd_v3_is_finite(p->rest_pos) || !pbd_is_finite(p->scale) || !(p->scale > 0))
		return *why = "has an invalid rest position or scale", false;
	if (!pbd_softness_ok(p->stiffness, p->compliance)) return *why = "has an invalid material", false;
	if (p->mode != PBD_LRA_EUCLIDEAN && p->mode != PBD_LRA_GEODESIC) return *why = "has an unknown mode", false;
	if (p->set_count == 0 || p->set_first > u || u - p->set_first >= p->set_count || p->set_count > f->n - p->set_first)
		return *why = "is not inside its set", false;
	if (u == p->set_first && u > 0) { /* a set starts where the one before it ends */
		const pbd_lra_p* prev = &COLD(f)[f->slot[u - 1]];
		if (prev->set_first > u - 1 || prev->set_count != u - prev->set_first) return *why = "overlaps a set", false;
	}
	const pbd_lra_p* head = &COLD(f)[f->slot[p->set_first]];
	if (f->slot[p->set_first] >= f->n || head->set_first != p->set_first || head->set_count != p->set_count ||
	    head->pool_first != p->pool_first || head->mode != p->mode)
		return *why = "disagrees with its set", false;
	const uint32_t n = p->set_count;
	if (c->i != HOT(f)[f->slot[p->set_first]].i + (u - p->set_first)) return *why = "has the wrong particle", false;
	if (p->mode == PBD_LRA_EUCLIDEAN) {
		if (p->pool_first > f->pool_n || n > f->pool_n - p->pool_first) return *why = "overruns the pool", false;
		if (u != p->set_first) return true;
		/* the bound of longest(): no rest distance of the set may overflow */
		double reach = 0;
		for (uint32_t j = 0; j < n; ++j) {
			const pbd_vec3 a = COLD(f)[f->slot[u + j]].rest_pos;
			const double dx = (double)a.x - (double)p->rest_pos.x, dy = (double)a.y - (double)p->rest_pos.y,
			             dz = (double)a.z - (double)p->rest_pos.z;
			reach = fmax(reach, 2 * sqrt(dx * dx + dy * dy + dz * dz));
		}
		if (!(reach * (double)p->scale < (double)PBD_REAL_MAX / 4))
			return *why = "has rest distances that overflow", false;
		return true;
	}
	if (p->pool_first > f->pool_n || (uint64_t)n + 1 > f->pool_n - p->pool_first)
		return *why = "overruns the pool", false;
	if (u != p->set_first) return true; /* the set's first record checks the graph once */
	const pbd_lra_node* node = POOL(f) + p->pool_first;
	const uint64_t edges = node[n].a;
	if (2 * (uint64_t)n + 1 + edges > f->pool_n - p->pool_first) return *why = "overruns the pool", false;
	const pbd_lra_node* edge = node + n + 1;
	for (uint32_t j = 0; j < n; ++j)
		if (node[j].a > node[j + 1].a) return *why = "has a malformed graph", false;
	double total = 0;
	for (uint64_t e = 0; e < edges; ++e) {
		if (edge[e].a >= n || !pbd_is_finite(edge[e].r) || edge[e].r < 0) return *why = "has a malformed graph", false;
		total += (double)edge[e].r;
	}
	/* each edge is listed from both ends */
	if (!(0.5 * total * (double)p->scale < (double)PBD_REAL_MAX / 4))
		return *why = "has rest distances that overflow", false;
	return true;
}

const pbd_family_ops pbd_family_lra_ops = {
    .name = "lra",
    .hot_size = sizeof(pbd_lra_c),
    .cold_size = sizeof(pbd_lra_p),
    .lambdas = 1,
    .pool_size = sizeof(pbd_lra_node),
    .particles = particles,
    .refresh = refresh,
    .project = project,
    .jacobi = jacobi,
    .stats = stats,
    .max_strain = max_strain,
    .check = check,
    .linearize = linearize,
    .row_count = 1,
    .row_entries = 1,
};
