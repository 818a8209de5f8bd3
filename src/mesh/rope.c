/* Rope / chain builder. */
#include <string.h>

#include "mesh/mesh.h"

pbd_rope_def pbd_rope_def_default(void) {
	pbd_rope_def d;
	memset(&d, 0, sizeof d);
	d.segments = 10;
	d.start = pbd_v3(0, 0, 0);
	d.end = pbd_v3(1, 0, 0);
	d.bend = false;
	d.cookie = PBD_COOKIE;
	return d;
}

pbd_status pbd_mesh_rope(const pbd_rope_def* d, pbd_mesh* out, pbd_error* err) {
	if (!d || !out) return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "pbd_mesh_rope: NULL argument");
	memset(out, 0, sizeof *out);
	if (d->cookie != PBD_COOKIE)
		return pbd_fail_err(err, PBD_ERR_UNINITIALIZED_DEF, "pbd_mesh_rope: def not made by pbd_rope_def_default()");
	if (d->segments < 1 || d->segments > (1u << 24))
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "pbd_mesh_rope: segments must be in [1, 2^24] (got %u)",
		                    d->segments);
	if (!pbd_v3_is_finite(d->start) || !pbd_v3_is_finite(d->end))
		return pbd_fail_err(err, PBD_ERR_NOT_FINITE, "pbd_mesh_rope: start or end is not finite");
	/* Before measuring: a span too long to measure would make every position NaN. */
	if (!pbd_length_fits(d->start, d->end))
		return pbd_fail_err(err, PBD_ERR_NOT_FINITE, "pbd_mesh_rope: start to end is too long: its length overflows");
	if (!(pbd_v3_length(pbd_v3_sub(d->end, d->start)) > 0))
		return pbd_fail_err(err, PBD_ERR_DEGENERATE, "pbd_mesh_rope: start and end coincide");
	const uint32_t n = d->segments + 1;
	const uint32_t ne = d->segments + (d->bend && n > 2 ? n - 2 : 0);
	pbd_status st = pbd_mesh_alloc(out, n, ne, 0, err);
	if (st != PBD_OK) return st;
	const pbd_vec3 span = pbd_v3_sub(d->end, d->start);
	for (uint32_t i = 0; i < n; ++i)
		out->positions[i] = pbd_v3_add(d->start, pbd_v3_scale(span, (pbd_real)i / (pbd_real)d->segments));
	uint32_t e = 0;
	for (uint32_t i = 0; i + 1 < n; ++i, ++e) {
		out->edges[2 * e] = i;
		out->edges[2 * e + 1] = i + 1;
		out->edge_kinds[e] = PBD_EDGE_STRUCTURAL;
	}
	if (d->bend)
		for (uint32_t i = 0; i + 2 < n; ++i, ++e) {
			out->edges[2 * e] = i;
			out->edges[2 * e + 1] = i + 2;
			out->edge_kinds[e] = PBD_EDGE_BEND;
		}
	return PBD_OK;
}
