/* Diagnostics: energies, momentum, strain per family and per edge kind, contacts. Accumulated
 * in double so that the sums over many particles stay meaningful in a float build.
 *
 * The pass is one stage of blocks (task.h): each family's constraints in blocks of
 * exec.block_constraints, then the particles in blocks of exec.block_particles. Each block sums
 * its own range from zero into its own pbd_stats_part; the parts are then combined on the calling
 * thread in block order. The grouping of the sums is fixed by the block sizes alone, so the
 * statistics are the same bits on any number of threads. */
#include <string.h>

#include "methods/integrate.h"
#include "model/world.h"

typedef struct stats_stage {
	pbd_world* w;
	bool full;    /* every statistic, or the largest strain alone (the divergence test) */
	double bound; /* not full: a block whose strains are surely within it reports 0; < 0: none */
	uint32_t csize, psize;
	uint32_t start[PBD_FAMILY_COUNT + 2]; /* family t's first block; then the particles', then the end */
	pbd_stats_part* part;
} stats_stage;

static void layout(pbd_world* w, bool full, uint32_t csize, uint32_t psize, stats_stage* s) {
	s->w = w;
	s->full = full;
	s->csize = csize;
	s->psize = psize;
	uint32_t blocks = 0;
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		s->start[t] = blocks;
		blocks += pbd_blocks(w->fam[t].n, csize);
	}
	s->start[PBD_FAMILY_COUNT] = blocks;
	if (full) blocks += pbd_blocks(w->np, psize);
	s->start[PBD_FAMILY_COUNT + 1] = blocks;
}

static void particle_sums(const pbd_world* w, uint32_t first, uint32_t end, pbd_stats_part* out) {
	double ke = 0, pe = 0, px = 0, py = 0, pz = 0;
	const double gx = (double)w->def.gravity.x, gy = (double)w->def.gravity.y, gz = (double)w->def.gravity.z;
	for (uint32_t i = first; i < end; ++i) {
		if (w->w[i] <= 0) continue;
		const double m = 1.0 / (double)w->w[i];
		const pbd_vec3 v = w->v[i], x = w->x[i];
		const double vx = (double)v.x, vy = (double)v.y, vz = (double)v.z;
		ke += 0.5 * m * (vx * vx + vy * vy + vz * vz);
		pe -= m * (gx * (double)x.x + gy * (double)x.y + gz * (double)x.z);
		px += m * vx;
		py += m * vy;
		pz += m * vz;
	}
	out->kinetic = ke;
	out->potential = pe;
	out->momentum[0] = px;
	out->momentum[1] = py;
	out->momentum[2] = pz;
}

static void stats_block(void* p, uint32_t block, uint32_t worker) {
	(void)worker;
	const stats_stage* s = (const stats_stage*)p;
	const pbd_world* w = s->w;
	pbd_stats_part* out = &s->part[block];
	memset(out, 0, sizeof *out);
	if (block >= s->start[PBD_FAMILY_COUNT]) {
		const uint32_t first = (block - s->start[PBD_FAMILY_COUNT]) * s->psize;
		particle_sums(w, first, pbd_block_end(first, w->np, s->psize), out);
		return;
	}
	int t = 0;
	while (block >= s->start[t + 1]) ++t;
	const pbd_family* f = &w->fam[t];
	const uint32_t first = (block - s->start[t]) * s->csize, end = pbd_block_end(first, f->n, s->csize);
	if (s->full) {
		out->fam.energy_defined = true;
		pbd_family_table[t]->stats(w, f, first, end, &out->fam);
	} else if (!(s->bound >= 0 && pbd_family_table[t]->strain_within &&
	             pbd_family_table[t]->strain_within(w, f, first, end, s->bound))) {
		out->fam.max_strain = pbd_family_table[t]->max_strain(w, f, first, end);
	}
}

/* Runs the pass, on the world's threads where the per-block sums have room; otherwise (out of
 * memory) on the calling thread with one block per family and one for the particles, in `spare`. */
static void run(pbd_world* w, bool full, double bound, stats_stage* s, pbd_stats_part spare[PBD_FAMILY_COUNT + 1]) {
	s->bound = bound; /* layout leaves it */
	layout(w, full, w->exec.block_constraints, w->exec.block_particles, s);
	if (pbd_stats_reserve(w) == PBD_OK) {
		s->part = w->stats_part;
		pbd_exec_stage(&w->exec, stats_block, s, s->start[PBD_FAMILY_COUNT + 1]);
		return;
	}
	layout(w, full, UINT32_C(1) << 31, UINT32_C(1) << 31, s); /* one block each: no count is that large */
	s->part = spare;
	for (uint32_t b = 0; b < s->start[PBD_FAMILY_COUNT + 1]; ++b) stats_block(s, b, 0);
}

pbd_status pbd_stats_reserve(pbd_world* w) {
	/* for the capacities, not the counts: sized when particles and constraints are added, so
	 * that steps find the room there */
	uint64_t need = pbd_blocks(w->cap_p, w->exec.block_particles);
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) need += pbd_blocks(w->fam[t].cap, w->exec.block_constraints);
	if (need > UINT32_MAX) return PBD_ERR_OUT_OF_MEMORY;
	if (need <= w->cap_stats_part) return PBD_OK;
	return pbd_grow_to(&w->mem, (void**)&w->stats_part, sizeof *w->stats_part, &w->cap_stats_part, (uint32_t)need)
	           ? PBD_OK
	           : PBD_ERR_OUT_OF_MEMORY;
}

void pbd_stats_free(pbd_world* w) {
	pbd_free(&w->mem, w->stats_part, (size_t)w->cap_stats_part * sizeof *w->stats_part);
	w->stats_part = NULL;
	w->cap_stats_part = 0;
}

/* Adds block b's sums to acc, in the order the blocks come. */
static void combine(pbd_family_sums* acc, const pbd_family_sums* b) {
	acc->max_violation = pbd_max_sticky(acc->max_violation, b->max_violation);
	acc->max_strain = pbd_max_sticky(acc->max_strain, b->max_strain);
	acc->sum_strain += b->sum_strain;
	acc->energy += b->energy;
	acc->strained += b->strained;
	acc->energy_defined = acc->energy_defined && b->energy_defined;
	for (int k = 0; k < PBD_EDGE_KIND_COUNT; ++k) {
		acc->kind_max[k] = pbd_max_sticky(acc->kind_max[k], b->kind_max[k]);
		acc->kind_sum[k] += b->kind_sum[k];
		acc->kind_count[k] += b->kind_count[k];
	}
}

static void family_stats(const pbd_world* w, const stats_stage* st, pbd_stats* s) {
	double elastic = 0;
	double kind_sum[PBD_EDGE_KIND_COUNT] = {0};
	uint32_t kind_count[PBD_EDGE_KIND_COUNT] = {0};
	bool defined = true;
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		const pbd_family* f = &w->fam[t];
		pbd_family_sums fs;
		memset(&fs, 0, sizeof fs);
		fs.energy_defined = true;
		for (uint32_t b = st->start[t]; b < st->start[t + 1]; ++b) combine(&fs, &st->part[b].fam);
		pbd_family_stats* out = &s->family[t];
		out->count = f->n;
		out->max_violation = fs.max_violation;
		out->max_strain = fs.max_strain;
		out->mean_strain = fs.strained ? fs.sum_strain / fs.strained : 0;
		out->energy_defined = fs.energy_defined;
		out->elastic_energy = fs.energy_defined ? fs.energy : (double)NAN;
		s->max_strain = pbd_max_sticky(s->max_strain, fs.max_strain);
		s->max_violation = pbd_max_sticky(s->max_violation, fs.max_violation);
		elastic += fs.energy;
		defined = defined && fs.energy_defined;
		for (int k = 0; k < PBD_EDGE_KIND_COUNT; ++k) {
			s->edge_max_strain[k] = pbd_max_sticky(s->edge_max_strain[k], fs.kind_max[k]);
			kind_sum[k] += fs.kind_sum[k];
			kind_count[k] += fs.kind_count[k];
		}
	}
	/* The mean stays the distances' own: strains of other families measure other things (a volume
	 * ratio, a slack unilateral limit), and averaging them together would say nothing. */
	s->mean_strain = s->family[PBD_FAMILY_DISTANCE].mean_strain;
	for (int k = 0; k < PBD_EDGE_KIND_COUNT; ++k)
		s->edge_mean_strain[k] = kind_count[k] ? kind_sum[k] / kind_count[k] : 0;
	s->energy_defined = defined;
	s->elastic_energy = defined ? elastic : (double)NAN;
}

void pbd_stats_compute(pbd_world* w, pbd_stats* s) {
	memset(s, 0, sizeof *s);
	stats_stage st;
	pbd_stats_part spare[PBD_FAMILY_COUNT + 1];
	run(w, true, -1, &st, spare);
	double ke = 0, pe = 0, p[3] = {0, 0, 0};
	for (uint32_t b = st.start[PBD_FAMILY_COUNT]; b < st.start[PBD_FAMILY_COUNT + 1]; ++b) {
		const pbd_stats_part* part = &st.part[b];
		ke += part->kinetic;
		pe += part->potential;
		for (int a = 0; a < 3; ++a) p[a] += part->momentum[a];
	}
	double bke = 0, bpe = 0;
	pbd_bodies_energy(w, &bke, &bpe, s->body_momentum, s->body_angular_momentum);
	s->body_kinetic_energy = bke;
	ke += bke;
	pe += bpe;
	for (int a = 0; a < 3; ++a) p[a] += s->body_momentum[a];
	s->time = w->time;
	s->steps = w->steps;
	s->kinetic_energy = ke;
	s->potential_energy = pe;
	s->momentum = pbd_v3((pbd_real)p[0], (pbd_real)p[1], (pbd_real)p[2]);
	family_stats(w, &st, s);
	s->linear_residual = w->integ->residual;
	s->linear_iterations = w->integ->cg_iterations;
	s->contacts = pbd_collide_count_contacts(w);
	s->particles = w->np;
	s->distances = w->fam[PBD_FAMILY_DISTANCE].n;
	uint32_t live = 0;
	for (uint32_t c = 0; c < w->nc; ++c) live += w->colliders[c].alive ? 1u : 0u;
	s->colliders = live;
	s->bodies = w->bodies.alive;
	s->profile = w->profile;
}

double pbd_stats_strain_past(pbd_world* w, double bound) {
	stats_stage st;
	pbd_stats_part spare[PBD_FAMILY_COUNT + 1];
	run(w, false, bound, &st, spare);
	double m = 0;
	for (uint32_t b = 0; b < st.start[PBD_FAMILY_COUNT]; ++b) m = pbd_max_sticky(m, st.part[b].fam.max_strain);
	return m;
}

double pbd_stats_max_strain(pbd_world* w) { return pbd_stats_strain_past(w, -1); }
