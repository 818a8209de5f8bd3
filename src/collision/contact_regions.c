/* The contacts between particles by region of space, projected on every thread.
 *
 * A contact (a pair, a vertex against a face, an edge against an edge) writes two to four
 * particles, and a particle has dozens of them in a folded cloth, so that projecting the lists on
 * several threads in list order would race. Colouring the contacts (Box2D v3 colours its contact
 * constraints) takes as many colours as a particle has contacts, about a hundred in a folded 64²
 * cloth, and scatters each colour over the whole cloth. Regions keep the lists' order and their
 * locality instead:
 *
 *  - the box of the particles with a thickness is cut into PBD_CONTACT_SPLIT slabs along each
 *    axis, and each particle lies in one region by its position at the substep's start;
 *  - a contact whose particles all lie in one region belongs to it: two regions share no particle,
 *    so the regions are projected side by side, each in list order;
 *  - the contacts that span regions go to a second grid shifted by half a region, whose regions
 *    are projected side by side after the first grid's;
 *  - the few that span regions of both grids (near the corners where regions meet) go last, alone,
 *    in list order.
 *
 * The regions depend on the positions and the lists only, never on the thread count, so the
 * projection order, and with it every bit of the result, is the same on one thread and on eight.
 * Only the order changes against a single pass over the lists: every contact is still projected
 * once per iteration, against the positions the ones before it left. */
#include <string.h>

#include "collision/self_collision.h"
#include "model/world.h"

#define FIRST  0u
#define SECOND ((uint32_t)PBD_CONTACT_REGIONS)
#define REST   ((uint32_t)(PBD_CONTACT_REGIONS + PBD_CONTACT_REGIONS_2))

/* The slab of coordinate t (in regions from the box's low corner), in [0, n). */
static uint32_t slab(pbd_real t, uint32_t n) {
	if (!(t >= 0)) return 0; /* NaN too */
	return t >= (pbd_real)(n - 1) ? n - 1 : (uint32_t)t;
}

int pbd_contact_particles(const pbd_world* w, uint32_t ref, uint32_t p[4]) {
	const pbd_particle_collision* c = w->pcol;
	const uint32_t k = ref & PBD_CONTACT_REF_INDEX;
	switch (ref >> PBD_CONTACT_REF_SHIFT) {
	case PBD_CONTACT_PAIR:
		p[0] = c->pairs[k].a, p[1] = c->pairs[k].b;
		return 2;
	case PBD_CONTACT_VT: {
		const uint32_t* v = &w->tri[3 * c->vt[k].t];
		p[0] = c->vt[k].p, p[1] = v[0], p[2] = v[1], p[3] = v[2];
		return 4;
	}
	default:
		p[0] = c->ee[k].a, p[1] = c->ee[k].b, p[2] = c->ee[k].c, p[3] = c->ee[k].d;
		return 4;
	}
}

/* Each particle's region in both grids, over the box of the particles with a thickness. */
static void place_particles(pbd_world* w) {
	pbd_contact_regions* r = &w->pcol->regions;
	pbd_vec3 lo = pbd_v3(0, 0, 0), hi = lo;
	bool any = false;
	for (uint32_t i = 0; i < w->np; ++i) {
		if (!(w->radius[i] > 0)) continue;
		const pbd_vec3 x = w->x[i];
		if (!any) lo = hi = x, any = true;
		lo = pbd_v3(PBD_FMIN(lo.x, x.x), PBD_FMIN(lo.y, x.y), PBD_FMIN(lo.z, x.z));
		hi = pbd_v3(PBD_FMAX(hi.x, x.x), PBD_FMAX(hi.y, x.y), PBD_FMAX(hi.z, x.z));
	}
	const uint32_t n = PBD_CONTACT_SPLIT;
	/* Cubes, a PBD_CONTACT_SPLIT-th of the box's longest side: a flat box (a cloth lying on the
	 * floor, its layers a thickness apart) is one region thick, so that its layers' contacts lie
	 * within regions. */
	const pbd_vec3 size = pbd_v3_sub(hi, lo);
	const pbd_real longest = PBD_FMAX(size.x, PBD_FMAX(size.y, size.z));
	const pbd_real per = longest > 0 ? (pbd_real)n / longest : 0; /* regions per unit length */
	for (uint32_t i = 0; i < w->np; ++i) {
		const pbd_vec3 d = pbd_v3_sub(w->x[i], lo);
		const pbd_real tx = d.x * per, ty = d.y * per, tz = d.z * per;
		r->cell[2 * i] = slab(tx, n) + n * (slab(ty, n) + n * slab(tz, n));
		const pbd_real h = PBD_R(0.5);
		r->cell[2 * i + 1] = slab(tx + h, n + 1) + (n + 1) * (slab(ty + h, n + 1) + (n + 1) * slab(tz + h, n + 1));
	}
}

/* The region contact `ref` belongs to: the first grid's, the shifted grid's, or REST. */
static uint32_t region_of(const pbd_world* w, uint32_t ref) {
	const uint32_t* cell = w->pcol->regions.cell;
	uint32_t p[4];
	const int m = pbd_contact_particles(w, ref, p);
	const uint32_t a = cell[2 * p[0]], b = cell[2 * p[0] + 1];
	bool first = true, second = true;
	for (int j = 1; j < m; ++j) {
		first = first && cell[2 * p[j]] == a;
		second = second && cell[2 * p[j] + 1] == b;
	}
	return first ? FIRST + a : second ? SECOND + b : REST;
}

pbd_status pbd_contact_regions_build(pbd_world* w) {
	pbd_particle_collision* c = w->pcol;
	pbd_contact_regions* r = &c->regions;
	const uint32_t kinds[3] = {c->npairs, c->nvt, c->nee};
	const uint64_t total = (uint64_t)c->npairs + c->nvt + c->nee;
	memset(r->start, 0, sizeof r->start);
	r->listed = true;
	if (total == 0) return PBD_OK;
	const uint32_t n = (uint32_t)total;
	if (total > PBD_CONTACT_REF_INDEX || !pbd_grow_to(&w->mem, (void**)&r->ref, sizeof *r->ref, &r->cap_ref, n) ||
	    w->np > UINT32_MAX / 2 || !pbd_grow_to(&w->mem, (void**)&r->cell, sizeof *r->cell, &r->cap_cell, 2 * w->np)) {
		r->listed = false;
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_step: out of memory for the contacts' regions");
	}
	place_particles(w);
	uint32_t count[REST + 1] = {0};
	for (uint32_t kind = 0; kind < 3; ++kind)
		for (uint32_t i = 0; i < kinds[kind]; ++i) count[region_of(w, kind << PBD_CONTACT_REF_SHIFT | i)]++;
	uint32_t sum = 0;
	for (uint32_t g = 0; g <= REST; ++g) {
		r->start[g] = sum;
		sum += count[g];
	}
	r->start[REST + 1] = sum;
	uint32_t at[REST + 1];
	memcpy(at, r->start, sizeof at);
	for (uint32_t kind = 0; kind < 3; ++kind)
		for (uint32_t i = 0; i < kinds[kind]; ++i) {
			const uint32_t ref = kind << PBD_CONTACT_REF_SHIFT | i;
			r->ref[at[region_of(w, ref)]++] = ref;
		}
	return PBD_OK;
}

/* The references of a region come in runs of one kind (list order, kind by kind). */
static void project_refs(pbd_world* w, const uint32_t* ref, uint32_t n) {
	for (uint32_t i = 0; i < n;) {
		const uint32_t kind = ref[i] >> PBD_CONTACT_REF_SHIFT;
		uint32_t j = i + 1;
		while (j < n && ref[j] >> PBD_CONTACT_REF_SHIFT == kind) ++j;
		if (kind == PBD_CONTACT_PAIR)
			pbd_particle_collision_project(w, ref + i, j - i);
		else if (kind == PBD_CONTACT_VT)
			pbd_vertex_triangle_project(w, ref + i, j - i);
		else
			pbd_edge_edge_project(w, ref + i, j - i);
		i = j;
	}
}

typedef struct region_stage {
	pbd_world* w;
	uint32_t first; /* the grid's first region in start[] */
} region_stage;

static void region_block(void* arg, uint32_t block, uint32_t worker) {
	(void)worker;
	const region_stage* s = (const region_stage*)arg;
	const pbd_contact_regions* r = &s->w->pcol->regions;
	const uint32_t g = s->first + block;
	project_refs(s->w, r->ref + r->start[g], r->start[g + 1] - r->start[g]);
}

void pbd_contact_regions_project(pbd_world* w) {
	const pbd_particle_collision* c = w->pcol;
	const pbd_contact_regions* r = &c->regions;
	if (!r->listed) {
		pbd_particle_collision_project(w, NULL, c->npairs);
		pbd_vertex_triangle_project(w, NULL, c->nvt);
		pbd_edge_edge_project(w, NULL, c->nee);
		return;
	}
	if (r->start[REST + 1] == 0) return;
	region_stage s = {w, FIRST};
	if (r->start[SECOND] > r->start[FIRST]) pbd_exec_stage(&w->exec, region_block, &s, PBD_CONTACT_REGIONS);
	s.first = SECOND;
	if (r->start[REST] > r->start[SECOND]) pbd_exec_stage(&w->exec, region_block, &s, PBD_CONTACT_REGIONS_2);
	project_refs(w, r->ref + r->start[REST], r->start[REST + 1] - r->start[REST]);
}

void pbd_contact_regions_free(pbd_world* w) {
	pbd_contact_regions* r = &w->pcol->regions;
	pbd_free(&w->mem, r->cell, (size_t)r->cap_cell * sizeof *r->cell);
	pbd_free(&w->mem, r->ref, (size_t)r->cap_ref * sizeof *r->ref);
	memset(r, 0, sizeof *r);
}
