/* Particle collision (self_collision.h). A particle with radius r (half its object's thickness)
 * is a ball; two balls that may collide keep |p_a - p_b| >= r_a + r_b, an inequality projected
 * like a distance constraint with the particles' inverse masses, so it keeps the momentum of the
 * pair. Two particles may collide when they belong to different objects, or to one object with
 * self-collision whose rest positions are at least r_a + r_b apart: neighbours in the mesh are
 * closer than that and held by the mesh's own constraints (Macklin et al. 2014, §7.1).
 *
 * Pairs are found once per substep from the predicted positions with a spatial hash of cell
 * 2 (r_a + r_b) at most, kept when their gap is under r_a + r_b (a speculative reach that covers
 * what the iterations may still move them), and projected in every iteration. */
#include <math.h>
#include <string.h>

#include "constraints/distance.h"
#include "collision/collide.h"
#include "collision/self_collision.h"
#include "model/world.h"

pbd_status pbd_particle_collision_prepare(pbd_world* w) {
	pbd_particle_collision* c = w->pcol;
	const pbd_collision_work total = c->work;
	memset(&c->work, 0, sizeof c->work);
	c->work.capped_total = total.capped_total;
	c->work.skipped_total = total.skipped_total;
	c->solid = 0;
	c->max_radius = 0;
	bool several = false, self = false;
	uint32_t group = UINT32_MAX;
	for (uint32_t i = 0; i < w->np; ++i)
		if (w->radius[i] > 0) {
			c->solid++;
			c->max_radius = PBD_FMAX(c->max_radius, w->radius[i]);
			if (group == UINT32_MAX) group = w->cgroup[i];
			several |= w->cgroup[i] != group;
			self |= (w->cgroup[i] & PBD_GROUP_SELF) != 0;
		}
	/* Particles of one object without self-collision never meet each other: the searches would
	 * hash them only to turn every pair away (may_collide). */
	if (!several && !self) c->solid = 0;
	c->npairs = 0;
	c->nvt = 0;
	c->nee = 0;
	c->nedge = 0;
	if (c->solid < 2) return PBD_OK;
	if (!pbd_hash_grid_reserve(&c->grid, &w->mem, w->np)) return PBD_ERR_OUT_OF_MEMORY;
	if (w->np > c->cap_p) {
		if (!pbd_grow(&w->mem, (void**)&c->p, sizeof *c->p, c->cap_p, w->np)) return PBD_ERR_OUT_OF_MEMORY;
		c->cap_p = w->np;
	}
	if (w->nc > 0 && w->np > c->cap_held) {
		if (!pbd_grow(&w->mem, (void**)&c->held, sizeof *c->held, c->cap_held, w->np)) return PBD_ERR_OUT_OF_MEMORY;
		c->cap_held = w->np;
	}
	return pbd_edge_edge_prepare(w);
}

void pbd_particle_collision_free(pbd_world* w) {
	pbd_particle_collision* c = w->pcol;
	pbd_hash_grid_free(&c->grid, &w->mem);
	pbd_free(&w->mem, c->p, (size_t)c->cap_p * sizeof *c->p);
	pbd_free(&w->mem, c->pairs, (size_t)c->cap_pairs * sizeof *c->pairs);
	pbd_hash_grid_free(&c->tgrid, &w->mem);
	pbd_block_out_free(&c->pair_out, &w->mem);
	pbd_block_out_free(&c->vt_out, &w->mem);
	pbd_block_out_free(&c->ee_out, &w->mem);
	pbd_block_out_free(&c->collider_out, &w->mem);
	pbd_block_out_free(&c->face_out, &w->mem);
	pbd_free(&w->mem, c->tbox, (size_t)c->cap_tbox * sizeof *c->tbox);
	pbd_free(&w->mem, c->vt, (size_t)c->cap_vt * sizeof *c->vt);
	pbd_free(&w->mem, c->edge, (size_t)c->cap_edge * sizeof *c->edge);
	pbd_free(&w->mem, c->edge_scratch, (size_t)c->cap_edge_scratch * sizeof *c->edge_scratch);
	pbd_hash_grid_free(&c->egrid, &w->mem);
	pbd_free(&w->mem, c->ebox, (size_t)c->cap_ebox * sizeof *c->ebox);
	pbd_free(&w->mem, c->ee, (size_t)c->cap_ee * sizeof *c->ee);
	pbd_edge_candidates_free(&c->ecand, &w->mem);
	pbd_contact_regions_free(w);
	pbd_free(&w->mem, c->held, (size_t)c->cap_held * sizeof *c->held);
	const bool off = c->ecand.off;
	memset(c, 0, sizeof *c);
	c->ecand.off = off;
}

void pbd_particle_collision_hold(pbd_world* w) {
	pbd_particle_collision* c = w->pcol;
	c->any_held = false;
	if (c->solid < 2 || w->nc == 0 || w->ncon == 0 || c->cap_held < w->np) return;
	memset(c->held, 0, (size_t)w->np * sizeof *c->held);
	/* A dynamic body's shape is pushed back by its contact and holds nothing; a contact that
	 * yields pushes nothing. The first contact of a particle holds it. */
	for (uint32_t k = 0; k < w->ncon; ++k) {
		const pbd_contact_c* con = &w->con[k];
		if (con->body || con->yielded || w->radius[con->particle] <= 0 || !(con->offset > -PBD_CONTACT_TOLERANCE))
			continue;
		pbd_vec3* h = &c->held[con->particle];
		if (h->x == 0 && h->y == 0 && h->z == 0) *h = con->n;
		c->any_held = true;
	}
}

static bool may_collide(const pbd_world* w, uint32_t a, uint32_t b, pbd_real dist) {
	const uint32_t ga = w->cgroup[a], gb = w->cgroup[b];
	if (w->w[a] <= 0 && w->w[b] <= 0) return false;
	if (ga != gb) return true;
	if (!(ga & PBD_GROUP_SELF)) return false;
	const pbd_vec3 r = pbd_v3_sub(w->x_rest[a], w->x_rest[b]);
	return pbd_v3_dot(r, r) >= dist * dist;
}

bool pbd_find_in_blocks(pbd_world* w, pbd_find_stage* st, void (*fn)(void*, uint32_t, uint32_t), size_t rec,
                        uint32_t items, uint32_t stamps, void** out, uint32_t* n, uint32_t* cap) {
	const uint32_t blocks = pbd_blocks(items, st->block);
	if (!pbd_block_out_begin(st->o, &w->mem, w->exec.threads, rec, blocks, stamps)) return false;
	pbd_exec_stage(&w->exec, fn, st, blocks);
	pbd_block_out* o = st->o;
	if (!pbd_block_out_finish(o, &w->mem, fn, st, pbd_collision_limit(items), out, n, cap)) return false;
	pbd_collision_count(w, o->candidates, o->most_candidates, o->most_kept, *n, o->capped + (o->dropped ? 1u : 0u));
	return true;
}

void pbd_collision_count(pbd_world* w, uint64_t candidates, uint32_t most, uint32_t most_kept, uint32_t found,
                         uint32_t capped) {
	pbd_collision_work* k = &w->pcol->work;
	k->candidates += candidates;
	if (most > k->most_candidates) k->most_candidates = most;
	if (most_kept > k->most_item_contacts) k->most_item_contacts = most_kept;
	if (found > k->most_contacts) k->most_contacts = found;
	if (!capped) return;
	if (k->capped_total == 0)
		pbd_log(w,
		        "pbd_world_step: step %llu: a contact search reached its bound (%u candidates or %u contacts per "
		        "particle or edge): the state has blown up; the searches stop there (pbd_world_get_collision_work)",
		        (unsigned long long)w->steps + 1, PBD_COLLISION_MAX_CANDIDATES, PBD_COLLISION_MAX_CONTACTS);
	k->capped += capped;
	k->capped_total += capped;
}

bool pbd_collision_torn(pbd_world* w) {
	/* Torn: a predicted position that is not finite, or a distance constraint predicted longer than
	 * (1 + divergence_strain) times its rest length, a stretch past which the step counts as
	 * diverged anyway (a world with that test off, 0, is judged by finiteness alone). Stretch only:
	 * crumpled cloth compresses its shear and bend distances a long way while healthy. */
	const pbd_real s = w->def.divergence_strain;
	bool torn = false;
	for (uint32_t i = 0; i < w->np && !torn; ++i) torn = !pbd_v3_is_finite(pbd_v3_add(w->x[i], w->q[i]));
	if (s > 0) {
		const pbd_real grow2 = (1 + s) * (1 + s);
		const pbd_family* f = &w->fam[PBD_FAMILY_DISTANCE];
		const pbd_distance_c* c = (const pbd_distance_c*)f->hot;
		for (uint32_t k = 0; k < f->n && !torn; ++k) {
			const pbd_vec3 d =
			    pbd_v3_add(pbd_v3_sub(w->x[c[k].a], w->x[c[k].b]), pbd_v3_sub(w->q[c[k].a], w->q[c[k].b]));
			torn = pbd_v3_dot(d, d) > grow2 * c[k].rest * c[k].rest;
		}
	}
	if (!torn) return false;
	pbd_collision_work* k = &w->pcol->work;
	if (k->skipped_total == 0)
		pbd_log(w,
		        "pbd_world_step: step %llu: contact searches skipped: a predicted position is not finite or a "
		        "distance constraint is stretched past 1 + divergence_strain (%g) times its rest length "
		        "(pbd_world_get_collision_work)",
		        (unsigned long long)w->steps + 1, (double)s);
	k->skipped++;
	k->skipped_total++;
	return true;
}

/* The particles of one block against those near them. */
static void pair_block(void* arg, uint32_t block, uint32_t worker) {
	const pbd_find_stage* st = (const pbd_find_stage*)arg;
	const pbd_world* w = st->w;
	const pbd_particle_collision* c = w->pcol;
	pbd_block_out* o = st->o;
	const uint32_t first = block * st->block, end = pbd_block_end(first, w->np, st->block);
	pbd_block_out_open(o, block, worker);
	for (uint32_t i = first; i < end; ++i) {
		const pbd_real ri = w->radius[i];
		if (!(ri > 0)) continue;
		const int64_t cx = pbd_hash_grid_coord(&c->grid, c->p[i].x), cy = pbd_hash_grid_coord(&c->grid, c->p[i].y),
		              cz = pbd_hash_grid_coord(&c->grid, c->p[i].z);
		/* The 27 cells may share slots; each slot is visited once. */
		uint32_t seen[27];
		int nseen = 0;
		uint32_t examined = 0, kept = 0;
		bool capped = false;
		for (int dz = -1; dz <= 1 && !capped; ++dz)
			for (int dy = -1; dy <= 1 && !capped; ++dy)
				for (int dx = -1; dx <= 1 && !capped; ++dx) {
					const uint32_t s = pbd_hash_grid_slot(&c->grid, cx + dx, cy + dy, cz + dz);
					bool dup = false;
					for (int k = 0; k < nseen && !dup; ++k) dup = seen[k] == s;
					if (dup) continue;
					seen[nseen++] = s;
					const uint32_t stop =
					    pbd_collision_slot_end(c->grid.start[s], c->grid.start[s + 1], &examined, &capped);
					for (uint32_t e = c->grid.start[s]; e < stop; ++e) {
						const uint32_t j = c->grid.entry[e];
						if (j <= i) continue;
						const pbd_real dist = ri + w->radius[j];
						const pbd_vec3 d = pbd_v3_add(pbd_v3_sub(w->x[i], w->x[j]), pbd_v3_sub(w->q[i], w->q[j]));
						if (!(pbd_v3_dot(d, d) < 4 * dist * dist) || !may_collide(w, i, j, dist)) continue;
						if (kept == PBD_COLLISION_MAX_CONTACTS) {
							capped = true;
							examined -= stop - e - 1; /* the rest of the slot was not examined */
							break;
						}
						kept++;
						pbd_pair_c* pair = (pbd_pair_c*)pbd_block_out_push(o, block, worker);
						if (pair) *pair = (pbd_pair_c){i, j, dist};
					}
				}
		pbd_block_out_item(o, block, examined, kept, capped);
	}
	pbd_block_out_close(o, block, worker);
}

pbd_status pbd_particle_collision_find(pbd_world* w) {
	pbd_particle_collision* c = w->pcol;
	c->npairs = 0;
	if (c->solid < 2) return PBD_OK;
	const uint32_t n = w->np;
	for (uint32_t i = 0; i < n; ++i) c->p[i] = pbd_v3_add(w->x[i], w->q[i]);
	/* Reach of a pair: its contact distance plus as much again, at most 4 max_radius, which one
	 * ring of cells around a point covers. */
	const pbd_real cell = 4 * c->max_radius;
	pbd_hash_grid_build(&c->grid, c->p, w->radius, n, cell);
	/* 256 particles per block */
	pbd_find_stage st = {w, &c->grid, &c->pair_out, 256};
	if (!pbd_find_in_blocks(w, &st, pair_block, sizeof(pbd_pair_c), n, 0, (void**)&c->pairs, &c->npairs, &c->cap_pairs))
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for the particle pairs");
	return PBD_OK;
}

void pbd_particle_collision_project(pbd_world* w, const uint32_t* ref, uint32_t count) {
	const pbd_particle_collision* c = w->pcol;
	const pbd_vec3* restrict x = w->x;
	pbd_vec3* restrict q = w->q;
	const pbd_real* restrict iw = w->w;
	const pbd_vec3* held = c->any_held ? c->held : NULL;
	for (uint32_t r = 0; r < count; ++r) {
		const uint32_t k = ref ? ref[r] & PBD_CONTACT_REF_INDEX : r;
		const uint32_t a = c->pairs[k].a, b = c->pairs[k].b;
		if (held && c->held_only && pbd_v3_dot(held[a], held[a]) == 0 && pbd_v3_dot(held[b], held[b]) == 0) continue;
		const pbd_vec3 d = pbd_v3_add(pbd_v3_sub(x[a], x[b]), pbd_v3_sub(q[a], q[b]));
		const pbd_real len2 = pbd_v3_dot(d, d), dist = c->pairs[k].dist;
		if (!(len2 < dist * dist)) continue;
		const pbd_real len = PBD_SQRT(len2);
		/* Coincident particles have no direction apart; they separate along y, a fixed choice. */
		const pbd_vec3 n = len > PBD_EPSILON_LENGTH ? pbd_v3_scale(d, 1 / len) : pbd_v3(0, 1, 0);
		pbd_real wa = pbd_held_weight(held, iw, a, n), wb = pbd_held_weight(held, iw, b, pbd_v3_scale(n, -1));
		if (!(wa + wb > 0)) wa = iw[a], wb = iw[b]; /* both held: they share the push as if neither were */
		const pbd_real wsum = wa + wb;
		if (!(wsum > 0)) continue;
		const pbd_real s = (dist - len) / wsum;
		q[a] = pbd_v3_add(q[a], pbd_v3_scale(n, s * wa));
		q[b] = pbd_v3_sub(q[b], pbd_v3_scale(n, s * wb));
	}
}
