/* Helpers of the force-model tests (test_integrators.c, test_family_rows.c): a world's rows at its
 * current positions, and the central differences of their energy against their forces. */
#ifndef PBD_TEST_ROWS_H
#define PBD_TEST_ROWS_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "methods/integrate.h"
#include "constraints/rows.h"
#include "test_util.h"
#include "model/world.h"

/* Rows of the world at its current positions, forces into f (elastic only); returns the energy. */
static inline double test_rows_linearise(pbd_world* w, pbd_vec3* f) {
	pbd_step_ctx ctx;
	pbd_step_ctx_init(w, w->def.dt, &ctx);
	ctx.q = w->x_lo;
	pbd_rows* r = &w->integ->rows;
	pbd_rows_linearize_all(w, &ctx, r);
	for (uint32_t i = 0; i < w->np; ++i) f[i] = pbd_v3(0, 0, 0);
	return pbd_rows_forces(r, w->v, 0, f);
}

/* Central differences of the rows' energy over every free particle's coordinates against the
 * rows' forces at the current positions: the largest difference into *worst, the largest force
 * component into *scale. The rows must keep their structure (the same rows over the same
 * particles) at every perturbed state. */
static inline void test_rows_gradient(pbd_world* w, double* worst, double* scale) {
	const uint32_t np = w->np;
	pbd_vec3* f = (pbd_vec3*)malloc(3 * (size_t)np * sizeof *f);
	assert_non_null(f);
	pbd_vec3 *scratch = f + np, *x0 = f + 2 * (size_t)np;
	test_rows_linearise(w, f);
	const pbd_rows* r = &w->integ->rows;
	const uint32_t n = r->n, ne = r->ne;
	uint32_t* start = (uint32_t*)malloc(((size_t)n + 1 + ne) * sizeof *start);
	assert_non_null(start);
	uint32_t* p = start + n + 1;
	memcpy(start, r->start, ((size_t)n + 1) * sizeof *start);
	memcpy(p, r->p, (size_t)ne * sizeof *p);
	memcpy(x0, w->x, np * sizeof *x0);
	const double eps = TEST_TOL(1e-6, 1e-3);
	*worst = *scale = 0;
	for (uint32_t i = 0; i < np; ++i) {
		if (!(w->w[i] > 0)) continue;
		for (int c = 0; c < 3; ++c) {
			double e[2];
			for (int s = 0; s < 2; ++s) {
				pbd_vec3 q = x0[i];
				(&q.x)[c] += (pbd_real)(s ? eps : -eps);
				assert_int_equal(pbd_world_set_positions(w, i, 1, &q), PBD_OK);
				e[s] = test_rows_linearise(w, scratch);
				assert_int_equal(r->n, n);
				assert_int_equal(r->ne, ne);
				assert_memory_equal(r->start, start, ((size_t)n + 1) * sizeof *start);
				assert_memory_equal(r->p, p, (size_t)ne * sizeof *p);
			}
			assert_int_equal(pbd_world_set_positions(w, i, 1, &x0[i]), PBD_OK);
			const double fd = -(e[1] - e[0]) / (2 * eps), an = (double)(&f[i].x)[c];
			*worst = fmax(*worst, fabs(fd - an));
			*scale = fmax(*scale, fabs(an));
		}
	}
	free(start);
	free(f);
}

#endif
