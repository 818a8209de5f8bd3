/* Surface triangles: topology for output and for area-based forces (their air, forces.c). */
#include <string.h>

#include "model/world.h"

pbd_status pbd_triangles_reserve(pbd_world* w, uint32_t capacity) {
	if (capacity <= w->cap_t) return PBD_OK;
	const pbd_grow_item items[] = {
	    {(void**)&w->tri, 3 * sizeof *w->tri},
	    {(void**)&w->tri_drag, sizeof *w->tri_drag},
	    {(void**)&w->tri_wind, sizeof *w->tri_wind},
	};
	if (!pbd_grow_all(&w->mem, items, (int)(sizeof items / sizeof items[0]), w->cap_t, capacity))
		return PBD_ERR_OUT_OF_MEMORY;
	w->cap_t = capacity;
	return PBD_OK;
}

pbd_status pbd_world_add_triangles(pbd_world* w, uint32_t count, const uint32_t* idx, uint32_t* first) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	if (count == 0) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_world_add_triangles: count is 0");
	if (!idx) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_world_add_triangles: indices is NULL");
	if (count > (UINT32_MAX / 3) - w->nt) return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_add_triangles: too many");
	for (uint32_t t = 0; t < count; ++t) {
		const uint32_t* v = idx + 3 * (size_t)t;
		for (int j = 0; j < 3; ++j)
			if (v[j] >= w->np)
				return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
				                "pbd_world_add_triangles: triangle %u: index %u out of range (%u particles)", t, v[j],
				                w->np);
		if (v[0] == v[1] || v[1] == v[2] || v[0] == v[2])
			return pbd_fail(w, PBD_ERR_DEGENERATE, "pbd_world_add_triangles: triangle %u repeats a vertex", t);
	}
	uint32_t need = w->nt + count;
	if (need > w->cap_t) {
		uint32_t cap = w->cap_t ? w->cap_t : 128;
		while (cap < need) cap = cap > UINT32_MAX / 6 ? need : cap * 2;
		if (pbd_triangles_reserve(w, cap) != PBD_OK)
			return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_add_triangles: out of memory");
	}
	memcpy(w->tri + 3 * (size_t)w->nt, idx, 3 * (size_t)count * sizeof *idx);
	/* New triangles feel no air until told (slots past nt never count in nt_drag). */
	memset(w->tri_drag + w->nt, 0, count * sizeof *w->tri_drag);
	memset(w->tri_wind + w->nt, 0, count * sizeof *w->tri_wind);
	if (first) *first = w->nt;
	w->nt += count;
	return PBD_OK;
}

uint32_t pbd_world_triangle_count(const pbd_world* w) { return w ? w->nt : 0; }
const uint32_t* pbd_world_triangles(const pbd_world* w) { return w ? w->tri : NULL; }
