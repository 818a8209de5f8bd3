/* Thin cloth against itself and other cloth: particles against surface triangles. Particle
 * pairs (self_collision.c) keep the particles of two layers apart, but a particle can still pass
 * through the middle of a triangle whose vertices are far apart. Here every particle with a
 * thickness is tested against the triangles near its path in the substep:
 *
 *  - the triangles whose three vertices have a thickness go into a spatial hash by the box of
 *    their vertices' paths (cells about the size of a triangle, a triangle in every cell its box
 *    covers, two counting passes), queried with the box of the particle's path;
 *  - a pair is skipped when the particle is a vertex of the triangle, when the two belong to one
 *    object without self-collision, or when the particle is within the thickness of the triangle
 *    in the rest shape (mesh neighbours);
 *  - the side is taken where the substep starts: the sign of the particle's height over the
 *    triangle's plane at x (at least half the thickness). A pair becomes a contact when, at the
 *    predicted positions, the particle is over the face within the thickness (plus its motion),
 *    or has crossed the plane through the face (checked where its height changes sign; a
 *    particle that went around the edge keeps the side it is on now): the constraint n . (p - sum_k b_k p_k) >=
 * thickness, with n the triangle's normal turned to the starting side and b the barycentric weights of the closest
 *    point, pushes it back to the side it came from (Bridson et al. 2002's repulsion, projected
 *    as a position constraint; a crossing within a substep is caught because the side comes from
 *    the start).
 *
 * Two edges passing through each other with no vertex through a face are edge_edge.c's. */
#include <math.h>
#include <string.h>

#include "collision/self_collision.h"
#include "collision/shape_math.h"
#include "model/world.h"

static bool triangle_solid(const pbd_world* w, uint32_t t) {
	const uint32_t* v = &w->tri[3 * t];
	return w->radius[v[0]] > 0 && w->radius[v[1]] > 0 && w->radius[v[2]] > 0;
}

/* The box of the paths x -> x + q of a triangle's vertices, grown by g. */
static pbd_box3 triangle_box(const pbd_world* w, uint32_t t, pbd_real g) {
	return pbd_box3_of_paths(w->x, w->q, &w->tri[3 * t], 3, g);
}

static bool may_touch(const pbd_world* w, uint32_t i, uint32_t t, pbd_real thick) {
	const uint32_t* v = &w->tri[3 * t];
	if (v[0] == i || v[1] == i || v[2] == i) return false;
	const uint32_t gi = w->cgroup[i], gt = w->cgroup[v[0]];
	if (gi != gt) return true;
	if (!(gi & PBD_GROUP_SELF)) return false;
	/* Farther at rest from the first vertex than the triangle reaches from it, plus the
	 * thickness (a thousandth spare for the rounding): not a neighbour, for a few products (the
	 * other layer of a fold); else the closest point. */
	const pbd_vec3 r0 = w->x_rest[v[0]], di = pbd_v3_sub(w->x_rest[i], r0);
	const pbd_vec3 e1 = pbd_v3_sub(w->x_rest[v[1]], r0), e2 = pbd_v3_sub(w->x_rest[v[2]], r0);
	const pbd_real reach = PBD_SQRT(PBD_FMAX(pbd_v3_dot(e1, e1), pbd_v3_dot(e2, e2))) + thick;
	if (pbd_v3_dot(di, di) > reach * reach * PBD_R(1.002)) return true;
	pbd_real b[3];
	const pbd_vec3 rest = pbd_closest_on_triangle(w->x_rest[i], r0, w->x_rest[v[1]], w->x_rest[v[2]], b);
	const pbd_vec3 d = pbd_v3_sub(w->x_rest[i], rest);
	return pbd_v3_dot(d, d) >= thick * thick;
}

/* The particles of one block against the triangles near their paths. */
static void vt_block(void* arg, uint32_t block, uint32_t worker) {
	const pbd_find_stage* s = (const pbd_find_stage*)arg;
	const pbd_world* w = s->w;
	const pbd_hash_grid* g = s->g;
	pbd_block_out* o = s->o;
	uint32_t slots[PBD_HASH_GRID_MAX_CELLS];
	const uint32_t first = block * s->block, end = pbd_block_end(first, w->np, s->block);
	pbd_block_out_open(o, block, worker);
	for (uint32_t i = first; i < end; ++i) {
		const pbd_real ri = w->radius[i];
		if (!(ri > 0)) continue;
		const pbd_vec3 xi = w->x[i], qi = w->q[i];
		const pbd_vec3 pi = pbd_v3_add(xi, qi);
		const pbd_box3 box = {pbd_v3(PBD_FMIN(xi.x, pi.x), PBD_FMIN(xi.y, pi.y), PBD_FMIN(xi.z, pi.z)),
		                      pbd_v3(PBD_FMAX(xi.x, pi.x), PBD_FMAX(xi.y, pi.y), PBD_FMAX(xi.z, pi.z))};
		/* The path's box grown by the speculative reach (the path's length; a hair more for
		 * rounding): a triangle whose box (grown by twice the largest radius, at least the
		 * thickness) misses it is neither within reach at the end nor crossed on the way. */
		const pbd_real grow = pbd_v3_length(qi) + PBD_CONTACT_TOLERANCE;
		const pbd_vec3 blo = pbd_v3(box.lo.x - grow, box.lo.y - grow, box.lo.z - grow),
		               bhi = pbd_v3(box.hi.x + grow, box.hi.y + grow, box.hi.z + grow);
		const uint32_t n = pbd_hash_grid_box_slots(g, box, slots);
		uint32_t examined = 0, kept = 0;
		bool capped = false;
		for (uint32_t k = 0; k < n && !capped; ++k) {
			const uint32_t stop =
			    pbd_collision_slot_end(g->start[slots[k]], g->start[slots[k] + 1], &examined, &capped);
			for (uint32_t e = g->start[slots[k]]; e < stop; ++e) {
				const uint32_t t = g->entry[e];
				if (pbd_block_out_seen(o, worker, t, i)) continue;
				if (!pbd_boxes_overlap(w->pcol->tbox[t].lo, w->pcol->tbox[t].hi, blo, bhi)) continue;
				const uint32_t* v = &w->tri[3 * t];
				const pbd_real thick = ri + PBD_FMAX(PBD_FMAX(w->radius[v[0]], w->radius[v[1]]), w->radius[v[2]]);
				if (w->w[i] <= 0 && w->w[v[0]] <= 0 && w->w[v[1]] <= 0 && w->w[v[2]] <= 0) continue;
				if (!may_touch(w, i, t, thick)) continue;
				/* Relative to the particle's start: small numbers far from the origin. */
				pbd_vec3 a[3], p[3];
				for (int m = 0; m < 3; ++m) {
					a[m] = pbd_v3_sub(w->x[v[m]], xi);
					p[m] = pbd_v3_add(a[m], w->q[v[m]]);
				}
				/* The side where the substep starts. */
				const pbd_vec3 n0 = pbd_v3_cross(pbd_v3_sub(a[1], a[0]), pbd_v3_sub(a[2], a[0]));
				const pbd_real h0 = -pbd_v3_dot(n0, a[0]); /* particle at the origin of this frame */
				pbd_vec3 n1 = pbd_v3_cross(pbd_v3_sub(p[1], p[0]), pbd_v3_sub(p[2], p[0]));
				const pbd_real len1 = pbd_v3_length(n1);
				/* A collapsed triangle, or a particle within half the thickness of its plane at
				 * the start: in crumpled cloth such a side is a guess (the particle may be beside
				 * the face, not over it), and pushing a whole thickness toward a wrong guess blew
				 * up a snapping fold; the particle pairs keep those apart. */
				const pbd_real len0 = pbd_v3_length(n0);
				if (!(len1 > 0) || !(len0 > 0) || !(PBD_FABS(h0) >= PBD_R(0.5) * thick * len0)) continue;
				/* A triangle that turned over within the substep (a stretched fold snapping
				 * shut collapses its faces): the starting side, read against the predicted
				 * normal, points through the face, and pushing a thickness that way blew the
				 * fold up at 64 x 64. The pairs hold such a particle. */
				if (!(pbd_v3_dot(n0, n1) > 0)) continue;
				n1 = pbd_v3_scale(n1, (h0 > 0 ? 1 : -1) / len1);
				pbd_real b[3];
				const pbd_vec3 cp = pbd_closest_on_triangle(qi, p[0], p[1], p[2], b);
				const pbd_vec3 d = pbd_v3_sub(qi, cp);
				const pbd_real reach = thick + pbd_v3_length(qi);
				const bool inside = b[0] > 0 && b[1] > 0 && b[2] > 0;
				const pbd_real dd = pbd_v3_dot(d, d);
				/* Only over the face: beside it (the closest point on an edge or a vertex) the
				 * particle pairs of the nearest vertices hold the particle off. */
				if (!inside) continue;
				if (pbd_v3_dot(n1, d) < 0) {
					/* On the other side now. Through the face, or around its edge? Where the
					 * height over the moving plane changes sign (linearly between the start and
					 * the prediction), the particle must lie within the triangle of that moment;
					 * otherwise it went around, and its side is the one it is on now. */
					const pbd_real h1 = pbd_v3_dot(n1, d) * (h0 > 0 ? 1 : -1) * len0; /* same units as h0 */
					const pbd_real f = h0 / (h0 - h1);
					pbd_vec3 m[3];
					for (int e3 = 0; e3 < 3; ++e3) m[e3] = pbd_v3_add(a[e3], pbd_v3_scale(w->q[v[e3]], f));
					pbd_real bf[3];
					(void)pbd_closest_on_triangle(pbd_v3_scale(qi, f), m[0], m[1], m[2], bf);
					const bool through = bf[0] > 0 && bf[1] > 0 && bf[2] > 0;
					if (!through) {
						n1 = pbd_v3_scale(n1, -1);
						if (!(dd < reach * reach)) continue;
					}
				} else if (!(dd < reach * reach)) {
					continue;
				}
				if (kept == PBD_COLLISION_MAX_CONTACTS) {
					capped = true;
					examined -= stop - e - 1; /* the rest of the slot was not examined */
					break;
				}
				kept++;
				pbd_vt_c* k2 = (pbd_vt_c*)pbd_block_out_push(o, block, worker);
				if (!k2) continue; /* out of room: counted, and the block runs again */
				k2->p = i;
				k2->t = t;
				k2->b[0] = b[0], k2->b[1] = b[1], k2->b[2] = b[2];
				k2->n = n1;
				/* n . ((x_i + q_i) - sum b (x_m + q_m)) >= thick, with the x parts folded in. */
				pbd_real base = 0;
				for (int m = 0; m < 3; ++m) base += b[m] * pbd_v3_dot(n1, a[m]);
				k2->offset = thick + base;
			}
		}
		pbd_block_out_item(o, block, examined, kept, capped);
	}
	pbd_block_out_close(o, block, worker);
}

pbd_status pbd_vertex_triangle_find(pbd_world* w) {
	pbd_particle_collision* c = w->pcol;
	c->nvt = 0;
	if (c->solid < 3 || w->nt == 0) return PBD_OK;
	const pbd_real rmax = c->max_radius;
	/* Cell: the mean extent of the triangles' boxes, so that a triangle covers a few cells. */
	double extent = 0;
	uint32_t solid = 0;
	for (uint32_t t = 0; t < w->nt; ++t) {
		if (!triangle_solid(w, t)) continue;
		const pbd_box3 b = triangle_box(w, t, 0);
		extent += (double)PBD_FMAX(PBD_FMAX(b.hi.x - b.lo.x, b.hi.y - b.lo.y), b.hi.z - b.lo.z);
		solid++;
	}
	if (solid == 0) return PBD_OK;
	const pbd_real cell = PBD_FMAX((pbd_real)(extent / solid), 4 * rmax);
	if (!pbd_grow_to(&w->mem, (void**)&c->tbox, sizeof *c->tbox, &c->cap_tbox, w->nt)) return PBD_ERR_OUT_OF_MEMORY;
	const pbd_box3 none = {{1, 1, 1}, {0, 0, 0}};
	for (uint32_t t = 0; t < w->nt; ++t) c->tbox[t] = triangle_solid(w, t) ? triangle_box(w, t, 2 * rmax) : none;
	pbd_hash_grid* g = &c->tgrid;
	if (!pbd_hash_grid_build_boxes(g, &w->mem, &w->exec, c->tbox, w->nt, cell, false, NULL))
		return PBD_ERR_OUT_OF_MEMORY;
	/* Each particle looks at every triangle once (the stamps), 128 particles per block. */
	pbd_find_stage st = {w, g, &c->vt_out, 128};
	if (!pbd_find_in_blocks(w, &st, vt_block, sizeof(pbd_vt_c), w->np, w->nt, (void**)&c->vt, &c->nvt, &c->cap_vt))
		return PBD_ERR_OUT_OF_MEMORY;
	return PBD_OK;
}

void pbd_vertex_triangle_project(pbd_world* w, const uint32_t* ref, uint32_t count) {
	const pbd_particle_collision* c = w->pcol;
	const pbd_vec3* held = c->any_held ? c->held : NULL;
	for (uint32_t r = 0; r < count; ++r) {
		const pbd_vt_c* e = &c->vt[ref ? ref[r] & PBD_CONTACT_REF_INDEX : r];
		const uint32_t* v = &w->tri[3 * e->t];
		const uint32_t idx[4] = {e->p, v[0], v[1], v[2]};
		const pbd_real g[4] = {1, -e->b[0], -e->b[1], -e->b[2]};
		pbd_project_held_contact(w->q, w->w, held, idx, g, 4, e->n, e->offset, held && c->held_only);
	}
}
