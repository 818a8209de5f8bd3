/* Diagnostics: energies, momentum, strain per family and per edge kind, contacts. Accumulated
 * in double so that the sums over many particles stay meaningful in a float build. */
#include <string.h>

#include "world.h"

static void family_stats(pbd_world* w, pbd_stats* s) {
	double elastic = 0;
	double kind_sum[PBD_EDGE_KIND_COUNT] = {0};
	uint32_t kind_count[PBD_EDGE_KIND_COUNT] = {0};
	bool defined = true;
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		const pbd_family* f = &w->fam[t];
		pbd_family_sums fs;
		memset(&fs, 0, sizeof fs);
		fs.energy_defined = true;
		if (f->n) pbd_family_table[t]->stats(w, f, &fs);
		pbd_family_stats* out = &s->family[t];
		out->count = f->n;
		out->max_violation = fs.max_violation;
		out->max_strain = fs.max_strain;
		out->mean_strain = fs.strained ? fs.sum_strain / fs.strained : 0;
		out->energy_defined = fs.energy_defined;
		out->elastic_energy = fs.energy_defined ? fs.energy : (double)NAN;
		if (!(fs.max_strain <= s->max_strain)) s->max_strain = fs.max_strain; /* NaN wins, so it is reported */
		if (!(fs.max_violation <= s->max_violation)) s->max_violation = fs.max_violation;
		elastic += fs.energy;
		defined = defined && fs.energy_defined;
		for (int k = 0; k < PBD_EDGE_KIND_COUNT; ++k) {
			if (!(fs.kind_max[k] <= s->edge_max_strain[k])) s->edge_max_strain[k] = fs.kind_max[k];
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
	double ke = 0, pe = 0, px = 0, py = 0, pz = 0;
	const double gx = (double)w->def.gravity.x, gy = (double)w->def.gravity.y, gz = (double)w->def.gravity.z;
	for (uint32_t i = 0; i < w->np; ++i) {
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
	s->time = w->time;
	s->steps = w->steps;
	s->kinetic_energy = ke;
	s->potential_energy = pe;
	s->momentum = pbd_v3((pbd_real)px, (pbd_real)py, (pbd_real)pz);
	family_stats(w, s);
	s->linear_residual = w->integ.residual;
	s->linear_iterations = w->integ.cg_iterations;
	s->contacts = pbd_collide_count_contacts(w);
	s->particles = w->np;
	s->distances = w->fam[PBD_FAMILY_DISTANCE].n;
	uint32_t live = 0;
	for (uint32_t c = 0; c < w->nc; ++c) live += w->colliders[c].alive ? 1u : 0u;
	s->colliders = live;
	s->profile = w->profile;
}

double pbd_stats_max_strain(const pbd_world* w) {
	double m = 0;
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		const pbd_family* f = &w->fam[t];
		if (!f->n) continue;
		const double s = pbd_family_table[t]->max_strain(w, f);
		if (!(s <= m)) m = s;
	}
	return m;
}
