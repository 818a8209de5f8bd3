/* Contact events of the bodies' pairs of colliders (docs/collision.md, "Contact events").
 *
 * A pair touches in a step when one of its contacts (rigid_contact.c) touched after one of the
 * step's substeps, as pbd_world_get_body_contacts counts them: it pushed, or it ends within the
 * tolerance of the gap. Each substep, after the velocity pass, the touching contacts are gathered
 * by pair, each with its positional impulse dn / ((w_p + w_s) h), and added to the step's pairs:
 * the impulses summed, the point and normal of the strongest contact kept (the largest impulse,
 * then the least separation; the first of equals). At the step's end the step's pairs are walked
 * against the last step's, both sorted by pair: a pair in this step's alone begins, one in the
 * last step's alone ends, unless its bodies sleep, whose pairs are not searched (rigid_contact.c,
 * pair_awake) and still touch. A pair of a destroyed collider, or of one on a destroyed body, does
 * not sleep on: it ends.
 *
 * Everything runs on the calling thread, in the contacts' order and then the pairs', so the events
 * are the same for any number of threads; the arrays grow with the pairs and are kept. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collision/collide.h"
#include "collision/contact_events.h"

static uint32_t slot_a(const pbd_touch* t) { return (uint32_t)(t->pair >> 32); }
static uint32_t slot_b(const pbd_touch* t) { return (uint32_t)t->pair; }

/* Whether collider `slot` is still the one of generation `gen`, on the body it rode on. */
static bool same_collider(const pbd_world* w, uint32_t slot, uint32_t gen, uint32_t body, uint32_t bgen) {
	if (slot >= w->nc) return false;
	const pbd_collider* c = &w->colliders[slot];
	if (!c->alive || c->generation != gen || c->body != body) return false;
	return !body || (w->bodies.live[body - 1] && w->bodies.generation[body - 1] == bgen);
}

/* Whether the pair's bodies sleep, so that the search does not look at it: its two colliders as
 * they were, each on a sleeping dynamic body or on none that moves contacts, at least one asleep. */
static bool sleeps(const pbd_world* w, const pbd_touch* t) {
	if (!same_collider(w, slot_a(t), t->gen_a, t->body_a, t->bgen_a) ||
	    !same_collider(w, slot_b(t), t->gen_b, t->body_b, t->bgen_b))
		return false;
	const pbd_bodies* b = &w->bodies;
	const uint32_t ends[2] = {t->body_a, t->body_b};
	bool asleep = false;
	for (int k = 0; k < 2; ++k) {
		if (!ends[k] || b->type[ends[k] - 1] != PBD_BODY_DYNAMIC) continue;
		if (!b->asleep[ends[k] - 1]) return false;
		asleep = true;
	}
	return asleep;
}

/* Whether contact x is stronger than y: the larger impulse, then the smaller separation. */
static bool stronger(const pbd_touch* x, const pbd_touch* y) {
	return x->strongest > y->strongest || (x->strongest == y->strongest && x->separation < y->separation);
}

/* Adds touch s (later) to d, of the same pair. */
static void combine(pbd_touch* d, const pbd_touch* s) {
	d->impulse += s->impulse;
	if (stronger(s, d)) {
		d->point = s->point;
		d->normal = s->normal;
		d->strongest = s->strongest;
		d->separation = s->separation;
	}
}

static int by_pair_then_order(const void* x, const void* y) {
	const pbd_touch *a = (const pbd_touch*)x, *b = (const pbd_touch*)y;
	if (a->pair != b->pair) return a->pair < b->pair ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

void pbd_contact_events_begin_step(pbd_world* w) {
	for (uint32_t k = 0; k < w->ntouch; ++k) w->touch[k].held = sleeps(w, &w->touch[k]);
	w->ntouch_next = 0;
}

/* The body (slot + 1) collider `slot` rides on, and its generation. */
static void body_of(const pbd_world* w, uint32_t slot, uint32_t* body, uint32_t* gen) {
	*body = w->colliders[slot].body;
	*gen = *body ? w->bodies.generation[*body - 1] : 0;
}

pbd_status pbd_contact_events_before_velocities(pbd_world* w) {
	w->ntouch_body = 0;
	const uint32_t n = w->bodies.n;
	if (w->nrc == 0 || n == 0) return PBD_OK;
	if (!pbd_grow_to(&w->mem, (void**)&w->touch_body, sizeof *w->touch_body, &w->cap_touch_body, n))
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for the contact events");
	for (uint32_t i = 0; i < n; ++i) w->touch_body[i].v = w->bodies.v[i];
	w->ntouch_body = n;
	return PBD_OK;
}

/* The dynamic body (slot + 1) of end `body` of a pair, or 0. */
static uint32_t dynamic(const pbd_world* w, uint32_t body) {
	return body && w->bodies.type[body - 1] == PBD_BODY_DYNAMIC ? body : 0;
}

/* The velocity pass's share of each pushing pair's impulse in the substep (sub: m pairs). The pass
 * keeps no impulse of its own, but a body's change of momentum in it is the sum of what its pairs
 * gave it: where a body had one pair pushing it, that pair gave it all, along the pair's normal
 * (friction acts across it). A pair whose every dynamic end had others pushing it too keeps its
 * positional impulse alone. */
static void add_velocity_pass(pbd_world* w, pbd_touch* sub, uint32_t m) {
	if (w->ntouch_body != w->bodies.n) return;
	pbd_touch_body* tb = w->touch_body;
	for (uint32_t k = 0; k < m; ++k) {
		const uint32_t ends[2] = {dynamic(w, sub[k].body_a), dynamic(w, sub[k].body_b)};
		for (int e = 0; e < 2; ++e)
			if (ends[e]) tb[ends[e] - 1].pairs = 0;
	}
	for (uint32_t k = 0; k < m; ++k) {
		if (!(sub[k].impulse > 0)) continue;
		const uint32_t ends[2] = {dynamic(w, sub[k].body_a), dynamic(w, sub[k].body_b)};
		for (int e = 0; e < 2; ++e)
			if (ends[e]) tb[ends[e] - 1].pairs++;
	}
	const pbd_bodies* b = &w->bodies;
	for (uint32_t k = 0; k < m; ++k) {
		pbd_touch* t = &sub[k];
		if (!(t->impulse > 0)) continue;
		const uint32_t ends[2] = {dynamic(w, t->body_a), dynamic(w, t->body_b)};
		bool found = false;
		pbd_real best = 0;
		for (int e = 0; e < 2; ++e) {
			const uint32_t i = ends[e] ? ends[e] - 1 : 0;
			if (!ends[e] || tb[i].pairs != 1 || !(b->inv_mass[i] > 0)) continue;
			/* the normal points from a toward b: b takes the push along it, a against it */
			const pbd_real dp = pbd_v3_dot(pbd_v3_sub(b->v[i], tb[i].v), t->normal) / b->inv_mass[i];
			const pbd_real j = e == 1 ? dp : -dp;
			/* Of two such ends, the one pushed more: the pass holds the lower of two bodies one
			 * on the other still (shock propagation, rigid_contact.c), and it takes nothing. */
			if (!found || PBD_FABS(j) > PBD_FABS(best)) best = j;
			found = true;
		}
		const pbd_real j = t->impulse + best;
		if (found && pbd_is_finite(j)) t->impulse = PBD_FMAX(j, 0);
	}
}

pbd_status pbd_contact_events_substep(pbd_world* w, pbd_real h) {
	const uint32_t n = w->nrc;
	if (n == 0) return PBD_OK;
	if (!pbd_grow_to(&w->mem, (void**)&w->touch_sub, sizeof *w->touch_sub, &w->cap_touch_sub, n))
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for the contact events");
	pbd_touch* sub = w->touch_sub;
	uint32_t m = 0;
	for (uint32_t k = 0; k < n; ++k) {
		const pbd_rigid_c* c = &w->rcon[k];
		const pbd_real separation = c->sep + c->dn;
		if (!(c->dn > 0) && !(separation <= PBD_CONTACT_TOLERANCE)) continue;
		if (!pbd_v3_is_finite(c->at) || !pbd_v3_is_finite(c->n)) continue;
		/* The velocity pass left the ends' weights at the corrected poses, 0 where nothing pushed. */
		const pbd_real wsum = c->wp + c->ws;
		pbd_real j = c->dn > 0 && wsum > 0 ? c->dn / (wsum * h) : 0;
		if (!pbd_is_finite(j)) j = 0;
		const uint32_t a = c->cp < c->cs ? c->cp : c->cs, b = c->cp < c->cs ? c->cs : c->cp;
		pbd_touch* t = &sub[m++];
		t->pair = (uint64_t)a << 32 | b;
		t->gen_a = w->colliders[a].generation;
		t->gen_b = w->colliders[b].generation;
		body_of(w, a, &t->body_a, &t->bgen_a);
		body_of(w, b, &t->body_b, &t->bgen_b);
		t->point = c->at;
		/* n is the outward normal of the surface's collider (cs): from a toward b when a is it */
		t->normal = c->cs == a ? c->n : pbd_v3_scale(c->n, -1);
		t->impulse = t->strongest = j;
		t->separation = separation;
		t->order = k;
		t->held = 0;
	}
	if (m == 0) return PBD_OK;
	/* The search makes a pair's contacts together and the pairs in order: sorted already, as a rule. */
	bool sorted = true;
	for (uint32_t k = 1; k < m && sorted; ++k) sorted = sub[k - 1].pair <= sub[k].pair;
	if (!sorted) qsort(sub, m, sizeof *sub, by_pair_then_order);
	uint32_t q = 0;
	for (uint32_t k = 1; k < m; ++k) {
		if (sub[k].pair == sub[q].pair)
			combine(&sub[q], &sub[k]);
		else
			sub[++q] = sub[k];
	}
	m = q + 1;
	add_velocity_pass(w, sub, m);
	/* Merged into the step's pairs from the back (the substep's after the step's of one pair),
	 * then the pairs met twice combined in order. */
	const uint32_t have = w->ntouch_next;
	if (!pbd_grow_to(&w->mem, (void**)&w->touch_next, sizeof *w->touch_next, &w->cap_touch_next, have + m))
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for the contact events");
	pbd_touch* all = w->touch_next;
	uint32_t i = have, j = m, out = have + m;
	while (j > 0) {
		if (i > 0 && all[i - 1].pair > sub[j - 1].pair)
			all[--out] = all[--i];
		else
			all[--out] = sub[--j];
	}
	q = 0;
	for (uint32_t k = 1; k < have + m; ++k) {
		if (all[k].pair == all[q].pair)
			combine(&all[q], &all[k]);
		else
			all[++q] = all[k];
	}
	w->ntouch_next = q + 1;
	return PBD_OK;
}

static pbd_contact_pair pair_of(const pbd_touch* t) {
	pbd_contact_pair p;
	p.collider_a = (pbd_collider_id){slot_a(t) + 1, t->gen_a};
	p.collider_b = (pbd_collider_id){slot_b(t) + 1, t->gen_b};
	p.body_a = (pbd_body_id){t->body_a, t->body_a ? t->bgen_a : 0};
	p.body_b = (pbd_body_id){t->body_b, t->body_b ? t->bgen_b : 0};
	p.point = t->point;
	p.normal = t->normal;
	p.impulse = t->impulse;
	return p;
}

static void event(pbd_world* w, const pbd_touch* t, bool begin) {
	pbd_contact_event* e = &w->cev[w->ncev++];
	e->begin = begin;
	e->pair = pair_of(t);
	if (!begin) e->pair.impulse = 0;
}

void pbd_contact_events_end_step(pbd_world* w) {
	const uint32_t np = w->ntouch, nn = w->ntouch_next;
	w->ncev = 0;
	if (np + nn == 0) return;
	/* Every pair of either step is at most one event and one pair of the result. */
	if (np > UINT32_MAX - nn ||
	    !pbd_grow_to(&w->mem, (void**)&w->touch_sub, sizeof *w->touch_sub, &w->cap_touch_sub, np + nn) ||
	    !pbd_grow_to(&w->mem, (void**)&w->cev, sizeof *w->cev, &w->cap_cev, np + nn)) {
		const pbd_status st =
		    pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for the contact events");
		if (w->step_status == PBD_OK) w->step_status = st;
		w->ntouch_next = 0;
		return;
	}
	const pbd_touch *prev = w->touch, *next = w->touch_next;
	pbd_touch* out = w->touch_sub;
	uint32_t i = 0, j = 0, n = 0;
	while (i < np || j < nn) {
		const bool take_prev = j == nn || (i < np && prev[i].pair < next[j].pair);
		const bool take_next = i == np || (j < nn && next[j].pair < prev[i].pair);
		if (!take_prev && !take_next && prev[i].gen_a == next[j].gen_a && prev[i].gen_b == next[j].gen_b) {
			out[n++] = next[j++]; /* touched then and now */
			i++;
		} else if (!take_next) {
			/* in the last step alone, or a collider of its slots made anew since: the old pair first */
			const pbd_touch* t = &prev[i++];
			if (t->held || sleeps(w, t)) {
				out[n] = *t;
				out[n++].impulse = 0;
			} else {
				event(w, t, false);
			}
		} else {
			event(w, &next[j], true);
			out[n++] = next[j++];
		}
	}
	/* The result becomes the last step's pairs, and the old array the next substep's scratch. */
	pbd_touch* old = w->touch;
	const uint32_t old_cap = w->cap_touch;
	w->touch = w->touch_sub;
	w->cap_touch = w->cap_touch_sub;
	w->touch_sub = old;
	w->cap_touch_sub = old_cap;
	w->ntouch = n;
	w->ntouch_next = 0;
}

void pbd_contact_events_free(pbd_world* w) {
	pbd_free(&w->mem, w->touch, w->cap_touch * sizeof *w->touch);
	pbd_free(&w->mem, w->touch_next, w->cap_touch_next * sizeof *w->touch_next);
	pbd_free(&w->mem, w->touch_sub, w->cap_touch_sub * sizeof *w->touch_sub);
	pbd_free(&w->mem, w->cev, w->cap_cev * sizeof *w->cev);
	pbd_free(&w->mem, w->touch_body, w->cap_touch_body * sizeof *w->touch_body);
}

pbd_status pbd_contact_events_reserve(pbd_world* w, uint32_t n) {
	return pbd_grow_to(&w->mem, (void**)&w->touch, sizeof *w->touch, &w->cap_touch, n) ? PBD_OK : PBD_ERR_OUT_OF_MEMORY;
}

const char* pbd_contact_events_check(const pbd_world* w, uint32_t k) {
	const pbd_touch* t = &w->touch[k];
	if (slot_a(t) >= slot_b(t) || slot_b(t) >= w->nc) return "its colliders are not two slots in order";
	if (k > 0 && !(w->touch[k - 1].pair < t->pair)) return "the pairs are not in order";
	if (t->body_a > w->bodies.n || t->body_b > w->bodies.n) return "a body is not a body slot";
	if (!pbd_v3_is_finite(t->point) || !pbd_v3_is_finite(t->normal) || !pbd_is_finite(t->impulse) || !(t->impulse >= 0))
		return "its point, normal or impulse is not finite";
	return NULL;
}

uint32_t pbd_world_get_contact_pairs(const pbd_world* w, pbd_contact_pair* out, uint32_t capacity) {
	if (!w) return 0;
	if (out)
		for (uint32_t k = 0; k < w->ntouch && k < capacity; ++k) out[k] = pair_of(&w->touch[k]);
	return w->ntouch;
}

uint32_t pbd_world_get_contact_events(const pbd_world* w, pbd_contact_event* out, uint32_t capacity) {
	if (!w) return 0;
	if (out)
		for (uint32_t k = 0; k < w->ncev && k < capacity; ++k) out[k] = w->cev[k];
	return w->ncev;
}
