/* The candidate pairs of edges (self_collision.h), kept from one substep to the next: a Verlet
 * list whose boxes carry each particle's motion ahead (docs/collision.md, "Edge candidates kept
 * across substeps").
 *
 * Each particle with a thickness has a box: its path in the substep the box was taken, carried
 * on PBD_EDGE_AHEAD substeps as a falling body would go (a particle that keeps its velocity, or
 * falls freely, stays inside for that many substeps), grown by a skin. An edge's box is the union
 * of its particles', grown by the largest radius, and two edges are candidates when their boxes
 * meet and nothing rules the pair out for good (a shared particle, groups that never meet, mesh
 * neighbours). While each particle's path of a substep lies in its box, an edge's box of the
 * substep (its paths, grown by the largest radius: what edge_edge.c tests) lies in its listed
 * box, so every pair whose boxes of the substep meet is listed: a pass over the lists finds what
 * a search of the whole hash would, in the same order, the edge list's.
 *
 * A particle whose path leaves its box takes a new one, and only the edges it belongs to are
 * searched again: against the hash of the boxes at the last full listing, for the edges whose
 * boxes did not change since, and against the list of those that did. The lists are made anew
 * from nothing when the edges or the particles change, and once more than 1/PBD_EDGE_MOVED_SHARE
 * of the edges moved since the last full listing; a few of those listings take the paths alone
 * when lists carried ahead held for one substep only. */
#include <string.h>

#include "collision/edge_candidates.h"
#include "collision/self_collision.h"
#include "collision/shape_math.h"
#include "model/world.h"

/* Substeps of motion a particle's box carries ahead, and its skin over the largest radius: in a
 * folded 64 x 64 cloth settling on a table, 1 % of the particles leave their boxes in a substep
 * (the rest would search again in every substep with the path alone), and the lists hold four
 * times the pairs whose boxes of the substep meet, each a box test per substep. */
#define PBD_EDGE_AHEAD      PBD_R(4.0)
#define PBD_EDGE_SKIN       PBD_R(0.25)
#define PBD_EDGE_AHEAD_MOST PBD_R(8.0)
/* The lists are made anew once more than 1/PBD_EDGE_MOVED_SHARE of the edges took new boxes
 * since the last time: each search then scans those one by one. */
#define PBD_EDGE_MOVED_SHARE 8u
/* Whole listings made of the paths alone once lists carried ahead held for one substep only. */
#define PBD_EDGE_EXACT_RUN 4u
/* The most pairs a listing keeps, over the searches' bound on contacts for as many edges. */
#define PBD_EDGE_LIST_SHARE 4u

static pbd_vec3 lerp(pbd_vec3 a, pbd_vec3 b, pbd_real s) { return pbd_v3_add(a, pbd_v3_scale(pbd_v3_sub(b, a), s)); }

/* Edges of one object within the thickness of each other in the rest shape: the mesh holds them.
 * The middles' distance less the half lengths (kept per edge) bounds the segments' distance from
 * below, and turns away the pairs of two layers of a fold (far apart at rest) for a few products
 * (a thousandth of the thickness spare for the rounding). */
static bool mesh_neighbours(const pbd_world* w, const pbd_edge_candidates* k, uint32_t e, uint32_t f, uint32_t a,
                            uint32_t b, uint32_t c, uint32_t d, pbd_real thick) {
	if (w->cgroup[a] != w->cgroup[c]) return false;
	/* The gap between the rest boxes bounds the distance from below too, and is the tighter bound
	 * for the edges of a grid's neighbouring rows and columns, which are never neighbours. */
	const pbd_box3 re = k->rbox[e], rf = k->rbox[f];
	const pbd_real gx = PBD_FMAX(0, PBD_FMAX(rf.lo.x - re.hi.x, re.lo.x - rf.hi.x)),
	               gy = PBD_FMAX(0, PBD_FMAX(rf.lo.y - re.hi.y, re.lo.y - rf.hi.y)),
	               gz = PBD_FMAX(0, PBD_FMAX(rf.lo.z - re.hi.z, re.lo.z - rf.hi.z));
	const pbd_real spare = thick * PBD_R(1.001);
	if (gx * gx + gy * gy + gz * gz > spare * spare) return false;
	if (pbd_v3_length(pbd_v3_sub(k->rmid[e], k->rmid[f])) - k->rhalf[e] - k->rhalf[f] > spare) return false;
	const pbd_vec3 ra = w->x_rest[a], rb = w->x_rest[b], rc = w->x_rest[c], rd = w->x_rest[d];
	pbd_real s, t;
	pbd_closest_segments(ra, rb, rc, rd, &s, &t);
	return pbd_v3_length(pbd_v3_sub(lerp(ra, rb, s), lerp(rc, rd, t))) < thick;
}

/* Whether edges e and f are listed when their boxes meet: no shared particle, two objects or one
 * with self-collision, and not mesh neighbours. Whether any of their particles is free is asked
 * in every substep (edge_edge.c): an inverse mass may change between steps. */
static bool may_meet(const pbd_world* w, const pbd_edge_candidates* k, const uint32_t* edge, uint32_t e, uint32_t f) {
	const uint32_t a = edge[2 * e], b = edge[2 * e + 1], cc = edge[2 * f], dd = edge[2 * f + 1];
	if (a == cc || a == dd || b == cc || b == dd) return false;
	const uint32_t g1 = w->cgroup[a], g2 = w->cgroup[cc];
	if (g1 == g2 && !(g1 & PBD_GROUP_SELF)) return false;
	const pbd_real thick = PBD_FMAX(w->radius[a], w->radius[b]) + PBD_FMAX(w->radius[cc], w->radius[dd]);
	return !mesh_neighbours(w, k, e, f, a, b, cc, dd, thick);
}

static bool boxes_meet(pbd_box3 a, pbd_box3 b) {
	return !(a.lo.x > b.hi.x || b.lo.x > a.hi.x || a.lo.y > b.hi.y || b.lo.y > a.hi.y || a.lo.z > b.hi.z ||
	         b.lo.z > a.hi.z);
}

/* A particle's box: its path, carried on `ahead` times as far again but no farther than
 * PBD_EDGE_AHEAD_MOST times the largest radius (a particle flung far in a substep, as in a state
 * blowing apart, would otherwise list every edge it may pass), grown by the skin. */
static pbd_box3 particle_box(const pbd_world* w, uint32_t i, pbd_real ahead, pbd_real skin) {
	const pbd_vec3 q = w->q[i];
	const pbd_real len = pbd_v3_length(q), most = PBD_EDGE_AHEAD_MOST * w->pcol->max_radius;
	if (ahead * len > most) ahead = PBD_FMAX(1, most / len);
	/* Carried ahead as a body that falls: after k substeps of h, x + k q + k (k - 1) / 2 g h^2 (the
	 * prediction q holds the first g h^2). Without gravity's part a cloth falling freely left its
	 * boxes within three substeps. */
	const pbd_real h = w->def.dt / (pbd_real)(w->def.substeps > 0 ? w->def.substeps : 1);
	const pbd_vec3 gh = ahead > 1 ? pbd_v3_scale(w->def.gravity, h * h) : pbd_v3(0, 0, 0);
	const pbd_vec3 a = w->x[i];
	pbd_box3 b = {a, a};
	for (int k = 1; k <= 4; ++k) {
		const pbd_real t = ahead * (pbd_real)k / 4;
		const pbd_vec3 p = pbd_v3_add(pbd_v3_add(a, pbd_v3_scale(q, t)), pbd_v3_scale(gh, t * (t - 1) / 2));
		b.lo = pbd_v3(PBD_FMIN(b.lo.x, p.x), PBD_FMIN(b.lo.y, p.y), PBD_FMIN(b.lo.z, p.z));
		b.hi = pbd_v3(PBD_FMAX(b.hi.x, p.x), PBD_FMAX(b.hi.y, p.y), PBD_FMAX(b.hi.z, p.z));
	}
	const pbd_vec3 p = pbd_v3_add(a, q); /* the path's end, whatever the ahead */
	b.lo = pbd_v3(PBD_FMIN(b.lo.x, p.x) - skin, PBD_FMIN(b.lo.y, p.y) - skin, PBD_FMIN(b.lo.z, p.z) - skin);
	b.hi = pbd_v3(PBD_FMAX(b.hi.x, p.x) + skin, PBD_FMAX(b.hi.y, p.y) + skin, PBD_FMAX(b.hi.z, p.z) + skin);
	return b;
}

static bool path_inside(const pbd_world* w, uint32_t i, pbd_box3 r) {
	const pbd_vec3 a = w->x[i], p = pbd_v3_add(a, w->q[i]);
	return PBD_FMIN(a.x, p.x) >= r.lo.x && PBD_FMIN(a.y, p.y) >= r.lo.y && PBD_FMIN(a.z, p.z) >= r.lo.z &&
	       PBD_FMAX(a.x, p.x) <= r.hi.x && PBD_FMAX(a.y, p.y) <= r.hi.y && PBD_FMAX(a.z, p.z) <= r.hi.z;
}

static pbd_box3 edge_box(const pbd_particle_collision* c, uint32_t e) {
	const pbd_edge_candidates* k = &c->ecand;
	const pbd_box3 va = k->vref[c->edge[2 * e]], vb = k->vref[c->edge[2 * e + 1]];
	const pbd_real g = k->radius;
	return (pbd_box3){
	    pbd_v3(PBD_FMIN(va.lo.x, vb.lo.x) - g, PBD_FMIN(va.lo.y, vb.lo.y) - g, PBD_FMIN(va.lo.z, vb.lo.z) - g),
	    pbd_v3(PBD_FMAX(va.hi.x, vb.hi.x) + g, PBD_FMAX(va.hi.y, vb.hi.y) + g, PBD_FMAX(va.hi.z, vb.hi.z) + g)};
}

/* The slot of the lowest cell two boxes with first cells la and lb both cover: a pair is taken in
 * that slot only. */
static uint32_t meeting_slot(const int64_t* la, const int64_t* lb, uint64_t mask) {
	return (uint32_t)(pbd_hash_grid_hash(la[0] > lb[0] ? la[0] : lb[0], la[1] > lb[1] ? la[1] : lb[1],
	                                     la[2] > lb[2] ? la[2] : lb[2]) &
	                  mask);
}

/* The full listing's pairs, slot by slot of the hash: the entries of a slot come in increasing
 * edge order with their boxes beside them (sbox), so each slot's pairs are a pass over adjacent
 * memory (in lanes) with no stamps. */
static void slot_block(void* arg, uint32_t block, uint32_t worker) {
	const pbd_find_stage* st = (const pbd_find_stage*)arg;
	const pbd_world* w = st->w;
	const pbd_particle_collision* c = w->pcol;
	const pbd_edge_candidates* k = &c->ecand;
	const pbd_hash_grid* g = st->g;
	pbd_block_out* o = st->o;
	const uint32_t entries = g->start[g->slots];
	const pbd_real *lx = k->sbox, *ly = lx + entries, *lz = ly + entries, *hx = lz + entries, *hy = hx + entries,
	               *hz = hy + entries;
	const uint64_t mask = g->slots - 1; /* a power of two (pbd_hash_grid_build_boxes) */
	unsigned char meet[PBD_COLLISION_MAX_CANDIDATES];
	const uint32_t first = block * st->block, end = pbd_block_end(first, g->slots, st->block);
	pbd_block_out_open(o, block, worker);
	for (uint32_t s = first; s < end; ++s) {
		const uint32_t s0 = g->start[s], s1 = g->start[s + 1];
		for (uint32_t i = s0; i < s1; ++i) {
			const uint32_t e = g->entry[i];
			/* a box of more cells than box_slots tells apart may fill a slot twice, side by side */
			if (i > s0 && g->entry[i - 1] == e) continue;
			const int64_t* le = &k->elo[3 * (size_t)e];
			const uint32_t m = s1 - i - 1 > PBD_COLLISION_MAX_CANDIDATES ? PBD_COLLISION_MAX_CANDIDATES : s1 - i - 1;
			const pbd_real ex0 = lx[i], ey0 = ly[i], ez0 = lz[i], ex1 = hx[i], ey1 = hy[i], ez1 = hz[i];
			const pbd_real *jlx = lx + i + 1, *jly = ly + i + 1, *jlz = lz + i + 1, *jhx = hx + i + 1,
			               *jhy = hy + i + 1, *jhz = hz + i + 1;
			for (uint32_t j = 0; j < m; ++j)
				meet[j] = (unsigned char)((ex0 <= jhx[j]) & (jlx[j] <= ex1) & (ey0 <= jhy[j]) & (jly[j] <= ey1) &
				                          (ez0 <= jhz[j]) & (jlz[j] <= ez1));
			uint32_t kept = 0;
			for (uint32_t j = 0; j < m; ++j) {
				if (!meet[j]) continue;
				const uint32_t f = g->entry[i + 1 + j];
				if (f == e || f == g->entry[i + j] || meeting_slot(le, &k->elo[3 * (size_t)f], mask) != s ||
				    !may_meet(w, k, c->edge, e, f))
					continue;
				kept++;
				uint32_t* rec = (uint32_t*)pbd_block_out_push(o, block, worker);
				if (rec) rec[0] = e, rec[1] = f; /* out of room: counted, and the block runs again */
			}
			pbd_block_out_item(o, block, m, kept, m < s1 - i - 1);
		}
	}
	pbd_block_out_close(o, block, worker);
}

/* One searched edge's partners, found again: the edges whose boxes did not change since the full
 * listing through its hash (in the slots the edge's new box covers, each pair in the slot of the
 * lowest cell both cover), and those that did from their list. A pair of two searched edges is
 * found by the lower one. Records (d, f) in increasing f. */
static void search_block(void* arg, uint32_t block, uint32_t worker) {
	const pbd_find_stage* st = (const pbd_find_stage*)arg;
	const pbd_world* w = st->w;
	const pbd_particle_collision* c = w->pcol;
	const pbd_edge_candidates* k = &c->ecand;
	const pbd_hash_grid* g = st->g;
	pbd_block_out* o = st->o;
	const uint64_t mask = g->slots - 1;
	uint32_t slots[PBD_HASH_GRID_MAX_CELLS];
	const uint32_t first = block * st->block, end = pbd_block_end(first, k->nsearch, st->block);
	pbd_block_out_open(o, block, worker);
	for (uint32_t it = first; it < end; ++it) {
		const uint32_t d = k->search[it];
		const pbd_box3 bd = k->eref[d];
		const uint32_t at0 = o->bcount[block];
		int64_t ld[3], hd[3];
		pbd_hash_grid_box_range(g, bd, ld, hd);
		const uint32_t ns = pbd_hash_grid_box_slots(g, bd, slots);
		uint32_t examined = 0, kept = 0;
		bool capped = false;
		for (uint32_t n = 0; n <= ns && !capped; ++n) {
			/* the hash's slots, then the moved edges as one more run */
			const bool moved = n == ns;
			const uint32_t s = moved ? 0 : slots[n];
			const uint32_t s0 = moved ? 0 : g->start[s];
			const uint32_t stop = pbd_collision_slot_end(s0, moved ? k->nmoved : g->start[s + 1], &examined, &capped);
			for (uint32_t j = s0; j < stop; ++j) {
				uint32_t f;
				if (moved) {
					f = k->moved_list[j];
					if (f == d || (f < d && k->searched[f]) || !boxes_meet(bd, k->eref[f])) continue;
				} else {
					f = g->entry[j];
					if (k->moved[f] || (j > s0 && g->entry[j - 1] == f) || !boxes_meet(bd, k->eref[f]) ||
					    meeting_slot(ld, &k->elo[3 * (size_t)f], mask) != s)
						continue;
				}
				if (!may_meet(w, k, c->edge, d < f ? d : f, d < f ? f : d)) continue;
				kept++;
				if (!pbd_block_out_push(o, block, worker)) continue; /* out of room: the block runs again */
				uint32_t* r = (uint32_t*)pbd_block_out_records(o, worker, block);
				uint32_t at = o->bcount[block] - 1;
				for (; at > at0 && r[2 * at - 1] > f; --at) r[2 * at] = r[2 * at - 2], r[2 * at + 1] = r[2 * at - 1];
				r[2 * at] = d, r[2 * at + 1] = f;
			}
		}
		/* A box of more cells than box_slots tells apart may list a slot twice: each partner once. */
		if (ns > 0 && o->bcount[block] != UINT32_MAX) {
			uint32_t* r = (uint32_t*)pbd_block_out_records(o, worker, block);
			uint32_t to = at0;
			for (uint32_t from = at0; from < o->bcount[block]; ++from)
				if (from == at0 || r[2 * from + 1] != r[2 * to - 1])
					r[2 * to] = r[2 * from], r[2 * to + 1] = r[2 * from + 1], ++to;
			kept -= o->bcount[block] - to;
			o->worker[worker].n -= o->bcount[block] - to;
			o->bcount[block] = to;
		}
		pbd_block_out_item(o, block, examined, kept, capped);
	}
	pbd_block_out_close(o, block, worker);
}

/* A counting sort of the records (d, f) by d (by = 0: out holds each d's f) or, of those with
 * f < d, by f (by = 1: out holds each f's d): key k's values are out[first[k] .. first[k + 1]),
 * in the records' order. */
static void bucket(const uint32_t* pair, uint32_t npair, uint32_t n, uint32_t by, uint32_t* first, uint32_t* out) {
	memset(first, 0, ((size_t)n + 1) * sizeof *first);
	for (uint32_t r = 0; r < npair; ++r)
		if (by == 0 || pair[2 * r + 1] < pair[2 * r]) first[pair[2 * r + by] + 1]++;
	for (uint32_t e = 0; e < n; ++e) first[e + 1] += first[e];
	for (uint32_t r = 0; r < npair; ++r)
		if (by == 0 || pair[2 * r + 1] < pair[2 * r]) out[first[pair[2 * r + by]]++] = pair[2 * r + 1 - by];
	for (uint32_t e = n; e > 0; --e) first[e] = first[e - 1];
	first[0] = 0;
}

/* The lists by first edge from the full listing's pairs, each edge's partners in increasing
 * order. */
static bool list_pairs(pbd_world* w) {
	pbd_particle_collision* c = w->pcol;
	pbd_edge_candidates* k = &c->ecand;
	const uint32_t n = c->nedge;
	if (!pbd_grow_to(&w->mem, (void**)&k->first, sizeof *k->first, &k->cap_first, n + 1) ||
	    !pbd_grow_to(&w->mem, (void**)&k->other, sizeof *k->other, &k->cap_other, k->npair ? k->npair : 1))
		return false;
	uint32_t* first = k->first;
	bucket(k->pair, k->npair, n, 0, first, k->other);
	for (uint32_t e = 0; e < n; ++e) {
		uint32_t* b = k->other + first[e];
		for (uint32_t i = 1, m = first[e + 1] - first[e]; i < m; ++i) /* insertion sort: a handful */
			for (uint32_t j = i; j > 0 && b[j - 1] > b[j]; --j) {
				const uint32_t t = b[j];
				b[j] = b[j - 1];
				b[j - 1] = t;
			}
	}
	k->nother = first[n];
	return true;
}

/* The lists after a search: an edge not searched keeps its partners that were not searched either
 * and gains the searched edges above it that found it; a searched edge's list is what its search
 * found above it. */
static bool merge(pbd_world* w) {
	pbd_particle_collision* c = w->pcol;
	pbd_edge_candidates* k = &c->ecand;
	const uint32_t n = c->nedge;
	if (!pbd_grow_to(&w->mem, (void**)&k->ins_first, sizeof *k->ins_first, &k->cap_ins_first, n + 1) ||
	    !pbd_grow_to(&w->mem, (void**)&k->ins, sizeof *k->ins, &k->cap_ins, k->npair ? k->npair : 1))
		return false;
	uint32_t* ins_first = k->ins_first;
	/* the finds (d, f) with f < d, by f: each edge's arrivals come in increasing d */
	bucket(k->pair, k->npair, n, 1, ins_first, k->ins);
	const uint64_t most = (uint64_t)k->nother + k->npair;
	if (most > UINT32_MAX - 1 ||
	    !pbd_grow_to(&w->mem, (void**)&k->next_first, sizeof *k->next_first, &k->cap_next_first, n + 1) ||
	    !pbd_grow_to(&w->mem, (void**)&k->next_other, sizeof *k->next_other, &k->cap_next_other,
	                 most ? (uint32_t)most : 1))
		return false;
	uint32_t* nf = k->next_first;
	uint32_t* no = k->next_other;
	uint32_t at = 0, r = 0;
	for (uint32_t e = 0; e < n; ++e) {
		nf[e] = at;
		if (k->searched[e]) {
			for (; r < k->npair && k->pair[2 * r] == e; ++r)
				if (k->pair[2 * r + 1] > e) no[at++] = k->pair[2 * r + 1];
			continue;
		}
		uint32_t i = k->first[e], j = ins_first[e];
		const uint32_t ie = k->first[e + 1], je = ins_first[e + 1];
		for (;;) {
			while (i < ie && k->searched[k->other[i]]) ++i;
			if (i == ie && j == je) break;
			if (j == je || (i < ie && k->other[i] < k->ins[j]))
				no[at++] = k->other[i++];
			else
				no[at++] = k->ins[j++];
		}
	}
	nf[n] = at;
	uint32_t* t = k->first;
	k->first = k->next_first, k->next_first = t;
	t = k->other;
	k->other = k->next_other, k->next_other = t;
	uint32_t cap = k->cap_first;
	k->cap_first = k->cap_next_first, k->cap_next_first = cap;
	cap = k->cap_other;
	k->cap_other = k->cap_next_other, k->cap_next_other = cap;
	k->nother = at;
	return true;
}

/* Runs a search in blocks into k->pair; false when out of memory. A search cut at a bound
 * leaves lists that are not the whole: made anew at the next substep. */
static bool run(pbd_world* w, void (*fn)(void*, uint32_t, uint32_t), uint32_t items, uint32_t block,
                uint32_t limit_items) {
	pbd_particle_collision* c = w->pcol;
	pbd_edge_candidates* k = &c->ecand;
	pbd_find_stage st = {w, &k->grid, &k->out, block};
	pbd_block_out* o = &k->out;
	const uint32_t blocks = pbd_blocks(items, block);
	if (!pbd_block_out_begin(o, &w->mem, w->exec.threads, 2 * sizeof *k->pair, blocks, 0)) return false;
	pbd_exec_stage(&w->exec, fn, &st, blocks);
	/* Candidates are more than contacts and take a sixth of their memory: PBD_EDGE_LIST_SHARE
	 * times the searches' bound on contacts. */
	const uint64_t limit = (uint64_t)pbd_collision_limit(limit_items) * PBD_EDGE_LIST_SHARE;
	if (!pbd_block_out_finish(o, &w->mem, fn, &st, limit > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)limit,
	                          (void**)&k->pair, &k->npair, &k->cap_pair))
		return false;
	pbd_collision_count(w, o->candidates, o->most_candidates, 0, 0, o->capped + (o->dropped ? 1u : 0u));
	k->cut = o->capped || o->dropped;
	return true;
}

/* Every particle's box taken anew, and every pair listed from the hash of the edges' boxes. */
static bool list_all(pbd_world* w) {
	pbd_particle_collision* c = w->pcol;
	pbd_edge_candidates* k = &c->ecand;
	const pbd_real rmax = c->max_radius;
	/* Lists carried ahead that held for one substep only (a cloth striking a table, whose
	 * particles all turn at once) cost more than they spare: the next few are made of the
	 * substep's paths alone, as a search from scratch would. */
	bool exact = k->off;
	if (!exact && k->exact_left > 0) {
		k->exact_left--;
		exact = true;
	} else if (!exact && k->ahead && k->since <= 1) {
		k->exact_left = PBD_EDGE_EXACT_RUN - 1;
		exact = true;
	}
	k->ahead = !exact;
	k->since = 0;
	const pbd_real ahead = exact ? 1 : PBD_EDGE_AHEAD, skin = exact ? 0 : PBD_EDGE_SKIN * rmax;
	for (uint32_t i = 0; i < w->np; ++i)
		if (w->radius[i] > 0) k->vref[i] = particle_box(w, i, ahead, skin);
	/* The edges' rest shape changes only with the edges or the particles. */
	if (!k->listed || k->np != w->np || k->nedge != c->nedge)
		for (uint32_t e = 0; e < c->nedge; ++e) {
			const pbd_vec3 ra = w->x_rest[c->edge[2 * e]], rb = w->x_rest[c->edge[2 * e + 1]];
			k->rmid[e] = pbd_v3_scale(pbd_v3_add(ra, rb), PBD_R(0.5));
			k->rhalf[e] = PBD_R(0.5) * pbd_v3_length(pbd_v3_sub(rb, ra));
			k->rbox[e] = (pbd_box3){pbd_v3(PBD_FMIN(ra.x, rb.x), PBD_FMIN(ra.y, rb.y), PBD_FMIN(ra.z, rb.z)),
			                        pbd_v3(PBD_FMAX(ra.x, rb.x), PBD_FMAX(ra.y, rb.y), PBD_FMAX(ra.z, rb.z))};
		}
	k->np = w->np, k->nedge = c->nedge, k->radius = rmax, k->listed = true;
	k->full++;
	k->exact += exact && !k->off;
	k->nmoved = 0;
	memset(k->moved, 0, c->nedge * sizeof *k->moved);
	double extent = 0;
	for (uint32_t e = 0; e < c->nedge; ++e) {
		const pbd_box3 b = k->eref[e] = edge_box(c, e);
		extent += (double)PBD_FMAX(PBD_FMAX(b.hi.x - b.lo.x, b.hi.y - b.lo.y), b.hi.z - b.lo.z);
	}
	/* Cell: the mean extent of the boxes, at least the reach of a contact. */
	const pbd_real cell = PBD_FMAX((pbd_real)(extent / c->nedge), 4 * rmax);
	pbd_hash_grid* g = &k->grid;
	if (!pbd_hash_grid_build_boxes(g, &w->mem, &w->exec, k->eref, c->nedge, cell, true, k->elo)) return false;
	const uint32_t entries = g->start[g->slots];
	if (entries > UINT32_MAX / 6 ||
	    !pbd_grow_to(&w->mem, (void**)&k->sbox, sizeof *k->sbox, &k->cap_sbox, entries ? 6 * entries : 1))
		return false;
	for (uint32_t j = 0; j < entries; ++j) {
		const pbd_box3 b = k->eref[g->entry[j]];
		pbd_real* sb = k->sbox + j;
		sb[0] = b.lo.x, sb[entries] = b.lo.y, sb[2 * (size_t)entries] = b.lo.z;
		sb[3 * (size_t)entries] = b.hi.x, sb[4 * (size_t)entries] = b.hi.y, sb[5 * (size_t)entries] = b.hi.z;
	}
	/* 512 slots per block */
	if (!run(w, slot_block, g->slots, 512, c->nedge) || !list_pairs(w)) return false;
	/* cut at a bound (a state blown apart): made anew at the next substep, whatever moves */
	if (k->cut) k->listed = false;
	return true;
}

bool pbd_edge_candidates_update(pbd_world* w) {
	pbd_particle_collision* c = w->pcol;
	pbd_edge_candidates* k = &c->ecand;
	const uint32_t n = c->nedge;
	if (!pbd_grow_to(&w->mem, (void**)&k->vref, sizeof *k->vref, &k->cap_vref, w->np) ||
	    !pbd_grow_to(&w->mem, (void**)&k->left, sizeof *k->left, &k->cap_left, w->np) ||
	    !pbd_grow_to(&w->mem, (void**)&k->eref, sizeof *k->eref, &k->cap_eref, n) || n > UINT32_MAX / 3 ||
	    !pbd_grow_to(&w->mem, (void**)&k->rmid, sizeof *k->rmid, &k->cap_rmid, n) ||
	    !pbd_grow_to(&w->mem, (void**)&k->rhalf, sizeof *k->rhalf, &k->cap_rhalf, n) ||
	    !pbd_grow_to(&w->mem, (void**)&k->rbox, sizeof *k->rbox, &k->cap_rbox, n) ||
	    !pbd_grow_to(&w->mem, (void**)&k->elo, sizeof *k->elo, &k->cap_elo, 3 * n) ||
	    !pbd_grow_to(&w->mem, (void**)&k->searched, sizeof *k->searched, &k->cap_searched, n) ||
	    !pbd_grow_to(&w->mem, (void**)&k->search, sizeof *k->search, &k->cap_search, n) ||
	    !pbd_grow_to(&w->mem, (void**)&k->moved, sizeof *k->moved, &k->cap_moved, n) ||
	    !pbd_grow_to(&w->mem, (void**)&k->moved_list, sizeof *k->moved_list, &k->cap_moved_list, n)) {
		k->listed = false;
		return false;
	}
	const bool again =
	    !k->listed || k->edges_changed || k->off || k->np != w->np || k->nedge != n || k->radius != c->max_radius;
	if (k->edges_changed) k->listed = false; /* the rest shape is taken again */
	k->edges_changed = false;
	k->nsearch = 0;
	k->since++;
	if (again) {
		if (list_all(w)) return true;
		k->listed = false;
		return false;
	}
	/* The particles whose paths left their boxes take new ones; their edges are searched again. */
	const pbd_real skin = PBD_EDGE_SKIN * c->max_radius;
	bool any = false;
	for (uint32_t i = 0; i < w->np; ++i) {
		k->left[i] = w->radius[i] > 0 && !path_inside(w, i, k->vref[i]);
		if (!k->left[i]) continue;
		k->vref[i] = particle_box(w, i, PBD_EDGE_AHEAD, skin);
		any = true;
	}
	if (!any) return true;
	for (uint32_t e = 0; e < n; ++e) {
		k->searched[e] = k->left[c->edge[2 * e]] | k->left[c->edge[2 * e + 1]];
		if (!k->searched[e]) continue;
		k->eref[e] = edge_box(c, e);
		k->search[k->nsearch++] = e;
		if (!k->moved[e]) {
			k->moved[e] = 1;
			k->moved_list[k->nmoved++] = e;
		}
	}
	if (k->nsearch == 0) return true;
	if (k->nmoved > n / PBD_EDGE_MOVED_SHARE) {
		if (list_all(w)) return true;
		k->listed = false;
		return false;
	}
	k->partial++;
	if (!run(w, search_block, k->nsearch, 64, k->nsearch)) {
		k->listed = false;
		return false;
	}
	/* A search cut at a bound found less than the lists need: all of them made anew instead. */
	if (k->cut) {
		if (list_all(w)) return true;
		k->listed = false;
		return false;
	}
	if (!merge(w)) {
		k->listed = false;
		return false;
	}
	return true;
}

void pbd_edge_candidates_free(pbd_edge_candidates* k, pbd_alloc_ctx* mem) {
	pbd_free(mem, k->first, (size_t)k->cap_first * sizeof *k->first);
	pbd_free(mem, k->other, (size_t)k->cap_other * sizeof *k->other);
	pbd_free(mem, k->next_first, (size_t)k->cap_next_first * sizeof *k->next_first);
	pbd_free(mem, k->next_other, (size_t)k->cap_next_other * sizeof *k->next_other);
	pbd_free(mem, k->ins_first, (size_t)k->cap_ins_first * sizeof *k->ins_first);
	pbd_free(mem, k->ins, (size_t)k->cap_ins * sizeof *k->ins);
	pbd_free(mem, k->vref, (size_t)k->cap_vref * sizeof *k->vref);
	pbd_free(mem, k->left, (size_t)k->cap_left * sizeof *k->left);
	pbd_free(mem, k->eref, (size_t)k->cap_eref * sizeof *k->eref);
	pbd_free(mem, k->rmid, (size_t)k->cap_rmid * sizeof *k->rmid);
	pbd_free(mem, k->rhalf, (size_t)k->cap_rhalf * sizeof *k->rhalf);
	pbd_free(mem, k->rbox, (size_t)k->cap_rbox * sizeof *k->rbox);
	pbd_hash_grid_free(&k->grid, mem);
	pbd_free(mem, k->elo, (size_t)k->cap_elo * sizeof *k->elo);
	pbd_free(mem, k->sbox, (size_t)k->cap_sbox * sizeof *k->sbox);
	pbd_free(mem, k->moved, (size_t)k->cap_moved * sizeof *k->moved);
	pbd_free(mem, k->moved_list, (size_t)k->cap_moved_list * sizeof *k->moved_list);
	pbd_free(mem, k->searched, (size_t)k->cap_searched * sizeof *k->searched);
	pbd_free(mem, k->search, (size_t)k->cap_search * sizeof *k->search);
	pbd_free(mem, k->pair, (size_t)k->cap_pair * 2 * sizeof *k->pair);
	pbd_block_out_free(&k->out, mem);
	const bool off = k->off;
	memset(k, 0, sizeof *k);
	k->off = off;
}
