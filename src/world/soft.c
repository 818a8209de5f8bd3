/* Soft objects: a mesh's vertices become particles, its edges distance constraints and its
 * triangles surface triangles, with masses lumped from volume (a quarter of each tetrahedron to
 * each corner), area (Müller et al. 2007 / seed 003: triangle area x density, a third to each
 * corner) or length. */
#include <string.h>

#include "model/forces.h"
#include "mesh/mesh.h"
#include "collision/self_collision.h"
#include "world/soft.h"
#include "mesh/tet.h"
#include "model/world.h"

pbd_soft_def pbd_soft_def_default(void) {
	pbd_soft_def d;
	memset(&d, 0, sizeof d);
	d.mass_mode = PBD_MASS_PER_PARTICLE;
	d.mass = 1;
	for (int k = 0; k < PBD_EDGE_KIND_COUNT; ++k) {
		d.material[k].enabled = true;
		d.material[k].stiffness_stretch = 1;
		d.material[k].stiffness_compress = 1;
		d.material[k].compliance_stretch = 0;
		d.material[k].compliance_compress = 0;
	}
	d.cloth = NULL;
	d.bend = PBD_BEND_EDGES;
	d.bend_stiffness = 1;
	d.bend_compliance = 0;
	d.tets = PBD_TET_NONE;
	d.tet_stiffness = 1;
	d.tet_compliance = 0;
	d.tet_youngs_modulus = PBD_R(1e6);
	d.tet_poisson_ratio = PBD_R(0.45);
	d.long_range = false;
	d.long_range_mode = PBD_LRA_GEODESIC;
	d.long_range_scale = 1;
	d.membrane = PBD_MEMBRANE_EDGES;
	d.membrane_stiffness = 1;
	d.membrane_compliance = 0;
	d.balloon = false;
	d.pressure = 1;
	d.collision_mask = UINT32_MAX;
	d.edge_contacts = true;
	d.volume_stiffness = 1;
	d.volume_compliance = 0;
	d.cookie = PBD_COOKIE;
	return d;
}

/* What the world held before an object was added, to take back a half-added one: everything of
 * an object is appended at the ends of the world's arrays. */
typedef struct soft_mark {
	uint32_t np, nt, n[PBD_FAMILY_COUNT], pool_n[PBD_FAMILY_COUNT];
} soft_mark;

static soft_mark mark(const pbd_world* w) {
	soft_mark m;
	m.np = w->np;
	m.nt = w->nt;
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		m.n[t] = w->fam[t].n;
		m.pool_n[t] = w->fam[t].pool_n;
	}
	return m;
}

static void roll_back(pbd_world* w, const soft_mark* m) {
	w->np = m->np;
	w->nt = m->nt;
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		w->fam[t].n = m->n[t];
		w->fam[t].pool_n = m->pool_n[t];
		w->fam[t].stale = true;
	}
	w->partitioned = false;
	w->stats_valid = false;
}

static pbd_status validate_mesh(pbd_world* w, const pbd_mesh* m) {
	const char* fn = "pbd_soft_create";
	if (m->vertex_count == 0 || !m->positions)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: mesh has no vertices", fn);
	if (m->edge_count && !m->edges) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: mesh edges is NULL", fn);
	if (m->triangle_count && !m->triangles)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: mesh triangles is NULL", fn);
	for (uint32_t e = 0; e < m->edge_count; ++e) {
		uint32_t a = m->edges[2 * e], b = m->edges[2 * e + 1];
		if (a >= m->vertex_count || b >= m->vertex_count)
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: edge %u: vertex index out of range (%u vertices)", fn, e,
			                m->vertex_count);
		if (a == b) return pbd_fail(w, PBD_ERR_DEGENERATE, "%s: edge %u joins vertex %u to itself", fn, e, a);
		if (m->edge_kinds && m->edge_kinds[e] >= PBD_EDGE_KIND_COUNT)
			return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: edge %u: unknown kind %u", fn, e, m->edge_kinds[e]);
		if (m->edge_rest && (!pbd_is_finite(m->edge_rest[e]) || m->edge_rest[e] < 0))
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: edge %u: rest length must be finite and >= 0", fn, e);
		/* The rest length is measured below; refused here, it is named by its edge instead of
		 * failing later inside pbd_world_add_distances. Non-finite positions are reported later. */
		if (!m->edge_rest && pbd_v3_is_finite(m->positions[a]) && pbd_v3_is_finite(m->positions[b]) &&
		    !pbd_length_fits(m->positions[a], m->positions[b]))
			return pbd_fail(w, PBD_ERR_NOT_FINITE,
			                "%s: edge %u from vertex %u to %u is too long: its rest length overflows the scalar", fn, e,
			                a, b);
	}
	for (uint32_t t = 0; t < m->triangle_count; ++t) {
		const uint32_t* v = m->triangles + 3 * (size_t)t;
		if (v[0] >= m->vertex_count || v[1] >= m->vertex_count || v[2] >= m->vertex_count)
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: triangle %u: vertex index out of range", fn, t);
		if (v[0] == v[1] || v[1] == v[2] || v[0] == v[2])
			return pbd_fail(w, PBD_ERR_DEGENERATE, "%s: triangle %u repeats a vertex", fn, t);
	}
	/* Tetrahedra only weigh the masses here; their constraints are the caller's to add. */
	if (m->tet_count && !m->tets) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: mesh tets is NULL", fn);
	for (uint32_t t = 0; t < m->tet_count; ++t)
		for (int j = 0; j < 4; ++j)
			if (m->tets[4 * (size_t)t + (size_t)j] >= m->vertex_count)
				return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: tetrahedron %u: vertex index out of range", fn, t);
	return PBD_OK;
}

/* Fills inv[] from the def's mass rule. Lumped weights: a quarter of each tetrahedron's volume per
 * corner; without tetrahedra, a third of each triangle's area; without triangles, half of each
 * edge's length per end; without any, equal. */
static pbd_status compute_inv_masses(pbd_world* w, const pbd_soft_def* d, pbd_real* inv, const pbd_vec3* pos) {
	const pbd_mesh* m = d->mesh;
	const uint32_t n = m->vertex_count;
	if (m->inv_masses) {
		for (uint32_t i = 0; i < n; ++i) {
			if (!pbd_is_finite(m->inv_masses[i]) || m->inv_masses[i] < 0)
				return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
				                "pbd_soft_create: mesh inverse mass %u must be finite and >= 0", i);
			inv[i] = m->inv_masses[i];
		}
		return PBD_OK;
	}
	if (d->mass_mode == PBD_MASS_PER_PARTICLE) {
		for (uint32_t i = 0; i < n; ++i) inv[i] = 1 / d->mass;
		return PBD_OK;
	}
	double* weight = (double*)pbd_alloc(&w->mem, n * sizeof *weight);
	if (!weight) return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_soft_create: out of memory");
	memset(weight, 0, n * sizeof *weight);
	double total = 0;
	if (m->tet_count) {
		/* A solid: a quarter of each tetrahedron's volume per corner. */
		for (uint32_t t = 0; t < m->tet_count; ++t) {
			const uint32_t* v = m->tets + 4 * (size_t)t;
			double vol = 0;
			if (pbd_tet_classify(pos[v[0]], pos[v[1]], pos[v[2]], pos[v[3]], &vol) > PBD_TET_INVERTED) vol = 0;
			for (int j = 0; j < 4; ++j) weight[v[j]] += fabs(vol) / 4.0;
			total += fabs(vol);
		}
	} else if (m->triangle_count) {
		for (uint32_t t = 0; t < m->triangle_count; ++t) {
			const uint32_t* v = m->triangles + 3 * (size_t)t;
			double a3 = (double)pbd_triangle_area(pos[v[0]], pos[v[1]], pos[v[2]]) / 3.0;
			for (int j = 0; j < 3; ++j) weight[v[j]] += a3;
			total += 3 * a3;
		}
	} else if (m->edge_count) {
		for (uint32_t e = 0; e < m->edge_count; ++e) {
			if (m->edge_kinds && m->edge_kinds[e] != PBD_EDGE_STRUCTURAL) continue;
			uint32_t a = m->edges[2 * e], b = m->edges[2 * e + 1];
			double half = 0.5 * (double)pbd_v3_length(pbd_v3_sub(pos[a], pos[b]));
			weight[a] += half;
			weight[b] += half;
			total += 2 * half;
		}
	}
	if (d->mass_mode == PBD_MASS_DENSITY && !(total > 0)) {
		pbd_free(&w->mem, weight, n * sizeof *weight);
		return pbd_fail(w, PBD_ERR_DEGENERATE,
		                "pbd_soft_create: mass by density needs tetrahedra, triangles or edges of non-zero size");
	}
	if (!(total > 0)) { /* no measure at all: share evenly */
		for (uint32_t i = 0; i < n; ++i) weight[i] = 1;
		total = n;
	}
	const double scale = d->mass_mode == PBD_MASS_DENSITY ? (double)d->mass : (double)d->mass / total;
	pbd_status st = PBD_OK;
	for (uint32_t i = 0; i < n; ++i) {
		double mi = weight[i] * scale;
		if (!(mi > 0) || !isfinite(1.0 / mi)) {
			st = pbd_fail(w, PBD_ERR_DEGENERATE,
			              "pbd_soft_create: vertex %u gets no mass (it touches no tetrahedron, triangle or edge of "
			              "non-zero size)",
			              i);
			break;
		}
		inv[i] = (pbd_real)(1.0 / mi);
		if (!(inv[i] > 0) || !pbd_is_finite(inv[i])) {
			st = pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_soft_create: vertex %u mass %g is out of the scalar's range", i,
			              mi);
			break;
		}
	}
	pbd_free(&w->mem, weight, n * sizeof *weight);
	return st;
}

pbd_status pbd_soft_create(pbd_world* w, const pbd_soft_def* d, pbd_soft_id* id) {
	if (id) *id = (pbd_soft_id){0, 0};
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	const char* fn = "pbd_soft_create";
	if (!d) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: def is NULL", fn);
	if (d->cookie != PBD_COOKIE)
		return pbd_fail(w, PBD_ERR_UNINITIALIZED_DEF, "%s: def not made by pbd_soft_def_default()", fn);
	if (!d->mesh) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: def.mesh is NULL", fn);
	const pbd_mesh* m = d->mesh;
	if (!pbd_v3_is_finite(d->translation) || !pbd_v3_is_finite(d->velocity))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: translation or velocity is not finite", fn);
	if ((int)d->mass_mode < 0 || d->mass_mode > PBD_MASS_DENSITY)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: unknown mass mode %d", fn, (int)d->mass_mode);
	if (!m->inv_masses && (!pbd_is_finite(d->mass) || !(d->mass > 0)))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: mass must be finite and > 0 (got %.9g)", fn, (double)d->mass);
	/* Bounded like a collider's size, so that the contact stage may square it plus a margin. */
	if (!pbd_is_finite(d->thickness) || !(d->thickness >= 0) || !(d->thickness <= PBD_SQRT(PBD_REAL_MAX) / 4))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: thickness must be finite and in [0, %g] (got %.9g)", fn,
		                (double)(PBD_SQRT(PBD_REAL_MAX) / 4), (double)d->thickness);
	if (d->self_collision && !(d->thickness > 0))
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: self_collision needs a thickness > 0", fn);
	for (int k = 0; k < PBD_EDGE_KIND_COUNT; ++k) {
		const pbd_edge_material* mt = &d->material[k];
		if (!pbd_is_finite(mt->stiffness_stretch) || !pbd_is_finite(mt->stiffness_compress) ||
		    !pbd_is_finite(mt->compliance_stretch) || !pbd_is_finite(mt->compliance_compress))
			return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: material %d has a non-finite parameter", fn, k);
		if (mt->stiffness_stretch < 0 || mt->stiffness_stretch > 1 || mt->stiffness_compress < 0 ||
		    mt->stiffness_compress > 1)
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: material %d: stiffness must be in [0, 1]", fn, k);
		if (mt->compliance_stretch < 0 || mt->compliance_compress < 0)
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: material %d: compliance must be >= 0", fn, k);
	}
	pbd_status st = pbd_forces_check_drag(w, fn, "drag_normal", d->drag_normal);
	if (st == PBD_OK) st = pbd_forces_check_drag(w, fn, "drag_tangent", d->drag_tangent);
	if (st == PBD_OK) st = pbd_forces_check_drag(w, fn, "drag_particle", d->drag_particle);
	if (st == PBD_OK) st = pbd_forces_check_wind(w, fn, "wind", d->wind);
	if (st != PBD_OK) return st;
	/* Triangles carry the air of a surface, particles that of an object without one. A
	 * coefficient given to the other kind would do nothing, or count the air twice. */
	if (m->triangle_count && d->drag_particle > 0)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT,
		                "%s: drag_particle is for objects without triangles and this mesh has %u (give drag_normal "
		                "and drag_tangent)",
		                fn, m->triangle_count);
	if (!m->triangle_count && (d->drag_normal > 0 || d->drag_tangent > 0))
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT,
		                "%s: drag_normal and drag_tangent act on triangles and this mesh has none (give drag_particle)",
		                fn);
	st = validate_mesh(w, m);
	if (st == PBD_OK) st = pbd_soft_check_extras(w, d, fn);
	if (st != PBD_OK) return st;
	if (d->pinned_count && !d->pinned) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: pinned is NULL", fn);
	for (uint32_t k = 0; k < d->pinned_count; ++k)
		if (d->pinned[k] >= m->vertex_count)
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: pinned[%u] = %u is out of range (%u vertices)", fn, k,
			                d->pinned[k], m->vertex_count);

	const uint32_t n = m->vertex_count;
	const uint32_t ne_max = m->edge_count;
	const size_t pos_size = n * sizeof(pbd_vec3), inv_size = n * sizeof(pbd_real);
	pbd_real* spring = NULL; /* spring constant per mesh edge, with a cloth material */
	const size_t spring_size = (size_t)m->edge_count * sizeof *spring;
	const size_t dd_size = ne_max * sizeof(pbd_distance_def),
	             tri_size = 3 * (size_t)m->triangle_count * sizeof(uint32_t);
	pbd_vec3* pos = (pbd_vec3*)pbd_alloc(&w->mem, pos_size);
	pbd_vec3* vel = (pbd_vec3*)pbd_alloc(&w->mem, pos_size);
	pbd_real* inv = (pbd_real*)pbd_alloc(&w->mem, inv_size);
	pbd_distance_def* dd = (pbd_distance_def*)pbd_alloc(&w->mem, dd_size);
	uint32_t* tri = (uint32_t*)pbd_alloc(&w->mem, tri_size);
	if (!pos || !vel || !inv || (dd_size && !dd) || (tri_size && !tri)) {
		st = pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
		goto done;
	}
	for (uint32_t i = 0; i < n; ++i) {
		pos[i] = pbd_v3_add(m->positions[i], d->translation);
		vel[i] = pbd_v3_add(m->velocities ? m->velocities[i] : pbd_v3(0, 0, 0), d->velocity);
		if (!pbd_v3_is_finite(pos[i]) || !pbd_v3_is_finite(vel[i])) {
			st = pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: vertex %u position or velocity is not finite", fn, i);
			goto done;
		}
	}
	st = compute_inv_masses(w, d, inv, pos);
	if (st != PBD_OK) goto done;
	/* The rule's result is held to the range a given inverse mass has, with its own message. */
	for (uint32_t i = 0; i < n; ++i) {
		if (pbd_inv_mass_ok(inv[i])) continue;
		st = pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		              "%s: the mass rule gives vertex %u a mass of %.9g kg, outside [%g, %g] kg", fn, i,
		              1.0 / (double)inv[i], 1 / PBD_INV_MASS_MAX, 1 / PBD_INV_MASS_MIN);
		goto done;
	}

	/* Everything is checked and the room is made first, so the adds below cannot fail and a
	 * soft object is added whole or not at all. */
	if (w->ns == w->cap_s) {
		const uint32_t cap = w->cap_s ? 2 * w->cap_s : 8;
		/* The object's index + 1 shares its particles' collision group with the flag bits. */
		if (w->cap_s >= PBD_GROUP_NO_EDGES / 2 ||
		    !pbd_grow(&w->mem, (void**)&w->softs, sizeof *w->softs, w->cap_s, cap)) {
			st = pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
			goto done;
		}
		w->cap_s = cap;
	}
	if ((uint64_t)w->np + n > UINT32_MAX - 1 || (uint64_t)w->fam[PBD_FAMILY_DISTANCE].n + ne_max > UINT32_MAX - 1 ||
	    (uint64_t)w->nt + m->triangle_count > UINT32_MAX / 3) {
		st = pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: the world would exceed 2^32 particles, constraints or triangles",
		              fn);
		goto done;
	}
	if (pbd_particles_reserve(w, w->np + n) != PBD_OK ||
	    pbd_family_reserve(w, PBD_FAMILY_DISTANCE, w->fam[PBD_FAMILY_DISTANCE].n + ne_max) != PBD_OK ||
	    pbd_triangles_reserve(w, w->nt + m->triangle_count) != PBD_OK) {
		st = pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
		goto done;
	}
	if (d->cloth && m->edge_count) {
		spring = (pbd_real*)pbd_alloc(&w->mem, spring_size);
		if (!spring) {
			st = pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
			goto done;
		}
		st = pbd_soft_spring_constants(w, d, pos, spring, fn);
		if (st != PBD_OK) goto done;
	}
	const soft_mark before = mark(w);
	pbd_soft_info body;
	memset(&body, 0, sizeof body);
	body.first_distance = w->fam[PBD_FAMILY_DISTANCE].n;
	body.first_triangle = w->nt;
	st = pbd_world_add_particles(w, n, pos, vel, inv, &body.first_particle);
	if (st != PBD_OK) goto done;
	body.particle_count = n;
	for (uint32_t k = 0; k < n; ++k) {
		const uint32_t i = body.first_particle + k;
		w->cmask[i] = d->collision_mask;
		w->radius[i] = d->thickness / 2;
		w->cgroup[i] = d->thickness > 0 ? (w->ns + 1) | (d->self_collision ? PBD_GROUP_SELF : 0u) |
		                                      (d->edge_contacts ? 0u : PBD_GROUP_NO_EDGES)
		                                : 0u;
	}
	/* Pin after adding, so an unpinned vertex gets back the mass its area gave it. */
	for (uint32_t k = 0; k < d->pinned_count; ++k) pbd_particle_pin(w, body.first_particle + d->pinned[k]);
	uint32_t ne = 0;
	for (uint32_t e = 0; e < m->edge_count; ++e) {
		const uint8_t kind = m->edge_kinds ? m->edge_kinds[e] : PBD_EDGE_STRUCTURAL;
		const pbd_edge_material* mt = &d->material[kind];
		if (!mt->enabled) continue;
		pbd_distance_def* c = &dd[ne++];
		*c = pbd_distance_def_default();
		c->a = body.first_particle + m->edges[2 * e];
		c->b = body.first_particle + m->edges[2 * e + 1];
		c->rest = m->edge_rest
		              ? m->edge_rest[e]
		              : pbd_v3_length(pbd_v3_sub(m->positions[m->edges[2 * e]], m->positions[m->edges[2 * e + 1]]));
		c->stiffness_stretch = mt->stiffness_stretch;
		c->stiffness_compress = mt->stiffness_compress;
		c->compliance_stretch = mt->compliance_stretch;
		c->compliance_compress = mt->compliance_compress;
		c->kind = kind;
		if (spring) {
			/* The bend edges give way to the hinge models; a spring of 0 is no constraint at all. */
			const pbd_real alpha = pbd_material_compliance(spring[e]);
			if (!pbd_is_finite(alpha)) {
				--ne;
				continue;
			}
			c->compliance_stretch = alpha;
			c->compliance_compress = alpha;
			c->stiffness_from_compliance = true;
		}
		if (kind == PBD_EDGE_BEND ? d->bend != PBD_BEND_EDGES : d->membrane != PBD_MEMBRANE_EDGES) --ne;
	}
	if (ne) {
		st = pbd_world_add_distances(w, ne, dd, &body.first_distance);
		if (st != PBD_OK) goto done;
	}
	body.distance_count = ne;
	if (m->triangle_count) {
		for (size_t k = 0; k < 3 * (size_t)m->triangle_count; ++k) tri[k] = body.first_particle + m->triangles[k];
		st = pbd_world_add_triangles(w, m->triangle_count, tri, &body.first_triangle);
		if (st != PBD_OK) goto done;
	}
	body.triangle_count = m->triangle_count;
	st = pbd_soft_add_extras(w, d, &body, pos, fn);
	if (st != PBD_OK) {
		roll_back(w, &before);
		goto done;
	}
	if (d->drag_normal > 0 || d->drag_tangent > 0)
		pbd_forces_store_triangles(w, body.first_triangle, body.triangle_count,
		                           (pbd_tri_drag){d->drag_normal, d->drag_tangent}, d->wind);
	if (d->drag_particle > 0) pbd_forces_store_particles(w, body.first_particle, n, d->drag_particle, d->wind);
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		body.first[t] = before.n[t];
		body.count[t] = w->fam[t].n - before.n[t];
	}
	pbd_soft_rec* rec = &w->softs[w->ns++];
	rec->info = body;
	rec->generation = rec->generation + 1;
	rec->alive = 1;
	if (id) *id = (pbd_soft_id){w->ns, rec->generation};
done:
	pbd_free(&w->mem, spring, spring_size);
	pbd_free(&w->mem, pos, pos_size);
	pbd_free(&w->mem, vel, pos_size);
	pbd_free(&w->mem, inv, inv_size);
	pbd_free(&w->mem, dd, dd_size);
	pbd_free(&w->mem, tri, tri_size);
	return st;
}

static const pbd_soft_rec* find(const pbd_world* w, pbd_soft_id id) {
	if (!w || id.index1 == 0 || id.index1 > w->ns) return NULL;
	const pbd_soft_rec* r = &w->softs[id.index1 - 1];
	return r->alive && r->generation == id.generation ? r : NULL;
}

bool pbd_soft_is_valid(const pbd_world* w, pbd_soft_id id) { return find(w, id) != NULL; }

pbd_status pbd_soft_get_info(const pbd_world* w, pbd_soft_id id, pbd_soft_info* out) {
	if (!w || !out) return PBD_ERR_INVALID_ARGUMENT;
	const pbd_soft_rec* r = find(w, id);
	if (!r)
		return pbd_fail((pbd_world*)w, PBD_ERR_INVALID_ARGUMENT, "pbd_soft_get_info: id (%u, %u) names no soft object",
		                id.index1, id.generation);
	*out = r->info;
	return PBD_OK;
}

uint32_t pbd_world_soft_count(const pbd_world* w) { return w ? w->ns : 0; }
