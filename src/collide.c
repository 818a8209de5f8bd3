/* Collider storage with generation ids, and the per-collider dispatch of the shape functions:
 * one indirect call per collider and pass, never one per particle. */
#include <string.h>

#include "collide.h"

static const pbd_shape_ops* const shape_ops[PBD_SHAPE_COUNT] = {
    [PBD_SHAPE_PLANE] = &pbd_shape_plane_ops,
    [PBD_SHAPE_SPHERE] = &pbd_shape_sphere_ops,
};

pbd_collider_def pbd_collider_def_default(void) {
	pbd_collider_def d;
	memset(&d, 0, sizeof d);
	d.type = PBD_SHAPE_PLANE;
	d.shape.plane.normal = pbd_v3(0, 1, 0);
	d.shape.plane.offset = 0;
	d.margin = 0;
	d.cookie = PBD_COOKIE;
	return d;
}

pbd_collider_id pbd_collider_create(pbd_world* w, const pbd_collider_def* def) {
	pbd_collider_id null_id = {0, 0};
	if (!w) return null_id;
	if (!def) {
		pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_collider_create: def is NULL");
		return null_id;
	}
	if (def->cookie != PBD_COOKIE) {
		pbd_fail(w, PBD_ERR_UNINITIALIZED_DEF, "pbd_collider_create: def not made by pbd_collider_def_default()");
		return null_id;
	}
	if ((int)def->type < 0 || def->type >= PBD_SHAPE_COUNT) {
		pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_collider_create: unknown shape type %d", (int)def->type);
		return null_id;
	}
	if (!pbd_is_finite(def->margin) || def->margin < 0) {
		pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_collider_create: margin must be finite and >= 0 (got %.9g)",
		         (double)def->margin);
		return null_id;
	}
	pbd_collider_def d = *def;
	if (shape_ops[d.type]->validate(w, &d) != PBD_OK) return null_id;

	/* Reuse a dead slot so ids stay small; its generation tells old ids apart. */
	uint32_t slot = w->nc;
	for (uint32_t i = 0; i < w->nc; ++i)
		if (!w->colliders[i].alive) {
			slot = i;
			break;
		}
	if (slot == w->nc) {
		if (w->nc == w->cap_c) {
			uint32_t cap = w->cap_c ? w->cap_c * 2 : 8;
			if (!pbd_grow(&w->mem, (void**)&w->colliders, sizeof *w->colliders, w->cap_c, cap)) {
				pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_collider_create: out of memory");
				return null_id;
			}
			w->cap_c = cap;
		}
		w->nc++;
	}
	pbd_collider* c = &w->colliders[slot];
	c->def = d;
	c->alive = true;
	c->generation++;
	w->stats_valid = false;
	pbd_collider_id id = {slot + 1, c->generation};
	return id;
}

static pbd_collider* lookup(const pbd_world* w, pbd_collider_id id) {
	if (!w || id.index1 == 0 || id.index1 > w->nc) return NULL;
	pbd_collider* c = &w->colliders[id.index1 - 1];
	return (c->alive && c->generation == id.generation) ? c : NULL;
}

bool pbd_collider_is_valid(const pbd_world* w, pbd_collider_id id) { return lookup(w, id) != NULL; }

pbd_status pbd_collider_destroy(pbd_world* w, pbd_collider_id id) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_collider* c = lookup(w, id);
	if (!c) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_collider_destroy: stale or null collider id");
	c->alive = false;
	w->stats_valid = false;
	return PBD_OK;
}

pbd_status pbd_collider_get_def(const pbd_world* w, pbd_collider_id id, pbd_collider_def* out) {
	if (!w || !out) return PBD_ERR_INVALID_ARGUMENT;
	pbd_collider* c = lookup(w, id);
	if (!c) return pbd_fail((pbd_world*)w, PBD_ERR_INVALID_ARGUMENT, "pbd_collider_get_def: stale or null collider id");
	*out = c->def;
	return PBD_OK;
}

uint32_t pbd_world_collider_count(const pbd_world* w) {
	uint32_t live = 0;
	if (!w) return 0;
	for (uint32_t i = 0; i < w->nc; ++i) live += w->colliders[i].alive ? 1u : 0u;
	return live;
}

void pbd_collide_project(pbd_world* w) {
	for (uint32_t i = 0; i < w->nc; ++i) {
		const pbd_collider* c = &w->colliders[i];
		if (c->alive) shape_ops[c->def.type]->project(&c->def, w->x, w->q, w->w, w->np);
	}
}

/* A particle counts once however many colliders it touches: each collider marks a flag bit
 * over the whole particle range, then one pass counts and clears the marks. */
uint32_t pbd_collide_count_contacts(pbd_world* w) {
	if (w->nc == 0) return 0;
	for (uint32_t i = 0; i < w->nc; ++i) {
		const pbd_collider* c = &w->colliders[i];
		if (c->alive)
			shape_ops[c->def.type]->mark_contacts(&c->def, w->x, w->w, w->np, c->def.margin + PBD_CONTACT_TOLERANCE,
			                                      w->flags);
	}
	uint32_t n = 0;
	for (uint32_t k = 0; k < w->np; ++k) {
		n += (w->flags[k] & PBD_PARTICLE_CONTACT) ? 1u : 0u;
		w->flags[k] = (uint8_t)(w->flags[k] & ~PBD_PARTICLE_CONTACT);
	}
	return n;
}
