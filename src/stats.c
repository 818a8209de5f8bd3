/* Diagnostics: energies, momentum, strain, contacts. Accumulated in double so that the sums
 * over many particles stay meaningful in a float build. */
#include <string.h>

#include "world.h"

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
	pbd_distance_stats(w, s);
	s->contacts = pbd_collide_count_contacts(w);
	s->particles = w->np;
	s->distances = w->nd;
	uint32_t live = 0;
	for (uint32_t c = 0; c < w->nc; ++c) live += w->colliders[c].alive ? 1u : 0u;
	s->colliders = live;
}
