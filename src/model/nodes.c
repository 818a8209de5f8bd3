/* The arrays sized by node (node.h): a particle's or a body's constraint count and the
 * partition's colour masks, grown whenever the particles or the bodies grow. */
#include "model/world.h"

static size_t nodes_allocated(const pbd_world* w) { return pbd_particles_allocated(w->cap_p) + w->bodies.cap; }

pbd_status pbd_nodes_reserve(pbd_world* w) {
	const size_t need = nodes_allocated(w);
	if (need <= w->cap_node) return PBD_OK;
	const pbd_grow_item items[] = {
	    {(void**)&w->degree, sizeof *w->degree},
	    {(void**)&w->colour_mask, sizeof *w->colour_mask},
	};
	if (!pbd_grow_all(&w->mem, items, 2, w->cap_node, need)) return PBD_ERR_OUT_OF_MEMORY;
	w->cap_node = need;
	return PBD_OK;
}

void pbd_nodes_free(pbd_world* w) {
	pbd_free(&w->mem, w->degree, w->cap_node * sizeof *w->degree);
	pbd_free(&w->mem, w->colour_mask, w->cap_node * sizeof *w->colour_mask);
	w->degree = NULL;
	w->colour_mask = NULL;
	w->cap_node = 0;
}
