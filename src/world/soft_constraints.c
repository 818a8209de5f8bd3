/* The constraints of a soft object beyond its edges: spring constants from a physical material,
 * hinges for bending, tetrahedral elements and long-range attachments, each from the object's
 * def (pbd_soft_def). soft.c adds the particles, edges and triangles and calls these. */
#include <stdlib.h>
#include <string.h>

#include "mesh/mesh.h"
#include "world/soft.h"
#include "model/world.h"

/* Kink angle at which a grid's flexion spring stores the plate's energy (pbd_cloth_flexion_stiffness):
 * half a radian, the scale of the folds of a draped cloth. */
#define SOFT_FLEXION_ANGLE PBD_R(0.5)

static bool is_grid(const pbd_mesh* m) {
	return m->grid_nx >= 2 && m->grid_ny >= 2 && (uint64_t)m->grid_nx * m->grid_ny == m->vertex_count &&
	       m->grid_du > 0 && m->grid_dv > 0;
}

/* Spring constants of a grid's edges: the exact mapping of pbd_cloth_grid_springs, border edges
 * carrying half a band. */
static pbd_status grid_springs(pbd_world* w, const pbd_soft_def* d, const pbd_mesh* m, pbd_real* k, const char* fn) {
	pbd_grid_springs gs;
	pbd_error err;
	if (pbd_cloth_grid_springs(d->cloth, m->grid_du, m->grid_dv, m->grid_diagonals, &gs, &err) != PBD_OK)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: cloth material: %s", fn, err.message);
	const uint32_t nx = m->grid_nx, ny = m->grid_ny;
	for (uint32_t e = 0; e < m->edge_count; ++e) {
		const uint32_t a = m->edges[2 * e], b = m->edges[2 * e + 1];
		const uint32_t ia = a % nx, ja = a / nx, jb = b / nx;
		const uint8_t kind = m->edge_kinds ? m->edge_kinds[e] : PBD_EDGE_STRUCTURAL;
		const bool along_u = ja == jb;
		/* A row on the border (or a column) carries half the width of an inner one. */
		const bool border = along_u ? (ja == 0 || ja == ny - 1) : (ia == 0 || ia == nx - 1);
		const pbd_real half = border ? PBD_R(0.5) : 1;
		if (kind == PBD_EDGE_SHEAR) {
			k[e] = gs.shear;
		} else if (kind == PBD_EDGE_BEND) {
			const pbd_real spacing = along_u ? m->grid_du : m->grid_dv;
			const pbd_real width = (along_u ? m->grid_dv : m->grid_du) * half;
			k[e] = pbd_cloth_flexion_stiffness(d->cloth, spacing, width, SOFT_FLEXION_ANGLE);
		} else {
			k[e] = (along_u ? gs.structural_u : gs.structural_v) * half;
		}
	}
	return PBD_OK;
}

/* Spring constants of a general triangle mesh: van Gelder's k = Y (A1 + A2) / L^2 from the areas
 * of the triangles on each edge; a bend edge (across an interior edge) as a flexion spring over
 * half its length. */
static pbd_status mesh_springs(pbd_world* w, const pbd_soft_def* d, const pbd_mesh* m, const pbd_vec3* pos, pbd_real* k,
                               const char* fn) {
	if (!m->triangle_count)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT,
		                "%s: a cloth material needs triangles to map its moduli to the edges (the mesh has none)", fn);
	pbd_half_edge* he = pbd_mesh_half_edges(m->triangle_count, m->triangles);
	if (!he) return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
	const size_t nh = 3 * (size_t)m->triangle_count;
	for (uint32_t e = 0; e < m->edge_count; ++e) {
		const uint32_t a = m->edges[2 * e], b = m->edges[2 * e + 1];
		const uint8_t kind = m->edge_kinds ? m->edge_kinds[e] : PBD_EDGE_STRUCTURAL;
		const pbd_real rest = m->edge_rest ? m->edge_rest[e] : pbd_v3_length(pbd_v3_sub(pos[a], pos[b]));
		if (kind == PBD_EDGE_BEND) {
			/* The two triangles of the interior edge this bend edge crosses are not looked up: a
			 * flexion spring over half the edge, as wide as half the edge. */
			k[e] = pbd_cloth_flexion_stiffness(d->cloth, rest / 2, rest / 2, SOFT_FLEXION_ANGLE);
			continue;
		}
		const uint64_t key = a < b ? ((uint64_t)a << 32 | b) : ((uint64_t)b << 32 | a);
		size_t lo = 0, hi = nh;
		while (lo < hi) {
			const size_t mid = lo + (hi - lo) / 2;
			if (he[mid].key < key)
				lo = mid + 1;
			else
				hi = mid;
		}
		pbd_real area = 0;
		for (size_t i = lo; i < nh && he[i].key == key; ++i) {
			const uint32_t* t = m->triangles + 3 * (size_t)he[i].tri;
			area += pbd_triangle_area(pos[t[0]], pos[t[1]], pos[t[2]]);
		}
		k[e] = pbd_cloth_mesh_edge_stiffness(d->cloth, rest, area);
	}
	free(he);
	return PBD_OK;
}

pbd_status pbd_soft_spring_constants(pbd_world* w, const pbd_soft_def* d, const pbd_vec3* pos, pbd_real* k,
                                     const char* fn) {
	pbd_error err;
	if (pbd_cloth_material_check(d->cloth, &err) != PBD_OK)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: cloth material: %s", fn, err.message);
	return is_grid(d->mesh) ? grid_springs(w, d, d->mesh, k, fn) : mesh_springs(w, d, d->mesh, pos, k, fn);
}

static pbd_status add_hinges(pbd_world* w, const pbd_soft_def* d, uint32_t base, const pbd_vec3* pos, const char* fn) {
	const pbd_mesh* m = d->mesh;
	if (!m->triangle_count) return PBD_OK;
	uint32_t count = 0, skipped = 0;
	pbd_error err;
	if (pbd_mesh_hinges(m, NULL, 0, &count, &skipped, &err) != PBD_OK)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: %s", fn, err.message);
	if (!count) return PBD_OK;
	const size_t hsize = 4 * (size_t)count * sizeof(uint32_t);
	uint32_t* h = (uint32_t*)pbd_alloc(&w->mem, hsize);
	const bool dihedral = d->bend == PBD_BEND_DIHEDRAL;
	const size_t dsize = (size_t)count * (dihedral ? sizeof(pbd_bend_dihedral_def) : sizeof(pbd_bend_isometric_def));
	void* defs = pbd_alloc(&w->mem, dsize);
	pbd_status st = PBD_OK;
	if (!h || !defs) {
		st = pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %u hinges", fn, count);
		goto done;
	}
	if (pbd_mesh_hinges(m, h, count, &count, &skipped, &err) != PBD_OK) {
		st = pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: %s", fn, err.message);
		goto done;
	}
	for (uint32_t i = 0; i < count; ++i) {
		const uint32_t* q = h + 4 * (size_t)i;
		pbd_real compliance = d->bend_compliance;
		if (d->cloth) {
			/* Cylinder-exact hinge stiffness B L^2 / (A1 + A2) (pbd_cloth_hinge_stiffness); the
			 * isometric constraint has the mesh weighting built in, k_iso = B / 3 (docs/constraints.md). */
			const pbd_real len = pbd_v3_length(pbd_v3_sub(pos[q[0]], pos[q[1]]));
			const pbd_real a1 = pbd_triangle_area(pos[q[0]], pos[q[1]], pos[q[2]]);
			const pbd_real a2 = pbd_triangle_area(pos[q[1]], pos[q[0]], pos[q[3]]);
			const pbd_real kb = dihedral ? pbd_cloth_hinge_stiffness(d->cloth, len, a1, a2) : d->cloth->bending / 3;
			compliance = pbd_material_compliance(kb);
			if (!pbd_is_finite(compliance)) compliance = 0; /* no bending stiffness: see PBD_BEND_NONE */
		}
		if (dihedral) {
			pbd_bend_dihedral_def* c = (pbd_bend_dihedral_def*)defs + i;
			*c = pbd_bend_dihedral_def_default();
			for (int j = 0; j < 4; ++j) c->p[j] = base + q[j];
			c->stiffness = d->bend_stiffness;
			c->compliance = compliance;
		} else {
			pbd_bend_isometric_def* c = (pbd_bend_isometric_def*)defs + i;
			*c = pbd_bend_isometric_def_default();
			for (int j = 0; j < 4; ++j) c->p[j] = base + q[j];
			c->stiffness = d->bend_stiffness;
			c->compliance = compliance;
		}
	}
	st = dihedral ? pbd_world_add_bend_dihedrals(w, count, (const pbd_bend_dihedral_def*)defs, NULL)
	              : pbd_world_add_bend_isometrics(w, count, (const pbd_bend_isometric_def*)defs, NULL);
done:
	pbd_free(&w->mem, h, hsize);
	pbd_free(&w->mem, defs, dsize);
	return st;
}

static pbd_status add_tets(pbd_world* w, const pbd_soft_def* d, uint32_t base, const char* fn) {
	const pbd_mesh* m = d->mesh;
	const uint32_t n = m->tet_count;
	if (!n || d->tets == PBD_TET_NONE) return PBD_OK;
	const bool volume = d->tets == PBD_TET_VOLUME;
	const size_t size = (size_t)n * (volume ? sizeof(pbd_tet_volume_def) : sizeof(pbd_tet_neohookean_def));
	void* defs = pbd_alloc(&w->mem, size);
	if (!defs) return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %u tetrahedra", fn, n);
	for (uint32_t t = 0; t < n; ++t) {
		const uint32_t* q = m->tets + 4 * (size_t)t;
		if (volume) {
			pbd_tet_volume_def* c = (pbd_tet_volume_def*)defs + t;
			*c = pbd_tet_volume_def_default();
			for (int j = 0; j < 4; ++j) c->p[j] = base + q[j];
			c->stiffness = d->tet_stiffness;
			c->compliance = d->tet_compliance;
		} else {
			pbd_tet_neohookean_def* c = (pbd_tet_neohookean_def*)defs + t;
			*c = pbd_tet_neohookean_def_default();
			for (int j = 0; j < 4; ++j) c->p[j] = base + q[j];
			c->youngs_modulus = d->tet_youngs_modulus;
			c->poisson_ratio = d->tet_poisson_ratio;
			c->stiffness_deviatoric = d->tet_stiffness;
			c->stiffness_hydrostatic = d->tet_stiffness;
		}
	}
	const pbd_status st = volume ? pbd_world_add_tet_volumes(w, n, (const pbd_tet_volume_def*)defs, NULL)
	                             : pbd_world_add_tet_neohookeans(w, n, (const pbd_tet_neohookean_def*)defs, NULL);
	pbd_free(&w->mem, defs, size);
	return st;
}

pbd_status pbd_soft_check_extras(pbd_world* w, const pbd_soft_def* d, const char* fn) {
	if ((int)d->bend < 0 || d->bend > PBD_BEND_NONE)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: unknown bend model %d", fn, (int)d->bend);
	if (!pbd_is_finite(d->bend_stiffness) || d->bend_stiffness < 0 || d->bend_stiffness > 1)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: bend_stiffness must be in [0, 1] (got %.9g)", fn,
		                (double)d->bend_stiffness);
	if (!pbd_is_finite(d->bend_compliance) || d->bend_compliance < 0)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: bend_compliance must be finite and >= 0 (got %.9g)", fn,
		                (double)d->bend_compliance);
	if ((int)d->tets < 0 || d->tets > PBD_TET_NEOHOOKEAN)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: unknown tet model %d", fn, (int)d->tets);
	if (!pbd_is_finite(d->tet_stiffness) || d->tet_stiffness < 0 || d->tet_stiffness > 1)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: tet_stiffness must be in [0, 1] (got %.9g)", fn,
		                (double)d->tet_stiffness);
	if (!pbd_is_finite(d->tet_compliance) || d->tet_compliance < 0)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: tet_compliance must be finite and >= 0 (got %.9g)", fn,
		                (double)d->tet_compliance);
	if (d->tets != PBD_TET_NONE && d->mesh->tet_count == 0)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: a tet model is set but the mesh has no tetrahedra", fn);
	if (d->long_range && (!pbd_is_finite(d->long_range_scale) || !(d->long_range_scale > 0)))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: long_range_scale must be > 0 (got %.9g)", fn,
		                (double)d->long_range_scale);
	if (d->membrane != PBD_MEMBRANE_EDGES && d->membrane != PBD_MEMBRANE_TRIANGLES)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: unknown membrane model %d", fn, (int)d->membrane);
	if (d->membrane == PBD_MEMBRANE_TRIANGLES && d->cloth && !(d->cloth->shear > 0))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "%s: the triangle membrane needs a cloth material with a shear modulus > 0 (got %.9g)", fn,
		                (double)d->cloth->shear);
	if (d->membrane == PBD_MEMBRANE_TRIANGLES && d->mesh->triangle_count == 0)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: the triangle membrane needs triangles (the mesh has none)",
		                fn);
	if (!pbd_is_finite(d->membrane_stiffness) || d->membrane_stiffness < 0 || d->membrane_stiffness > 1)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: membrane_stiffness must be in [0, 1] (got %.9g)", fn,
		                (double)d->membrane_stiffness);
	if (!pbd_is_finite(d->membrane_compliance) || d->membrane_compliance < 0)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: membrane_compliance must be finite and >= 0 (got %.9g)", fn,
		                (double)d->membrane_compliance);
	if (d->balloon && d->mesh->triangle_count == 0)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT,
		                "%s: a balloon needs a closed triangle surface (the mesh has none)", fn);
	if (d->balloon && (!pbd_is_finite(d->pressure) || !(d->pressure > 0)))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: pressure must be > 0 (got %.9g)", fn, (double)d->pressure);
	if (d->balloon && (!pbd_is_finite(d->volume_stiffness) || d->volume_stiffness < 0 || d->volume_stiffness > 1))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: volume_stiffness must be in [0, 1] (got %.9g)", fn,
		                (double)d->volume_stiffness);
	if (d->balloon && (!pbd_is_finite(d->volume_compliance) || d->volume_compliance < 0))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: volume_compliance must be finite and >= 0 (got %.9g)", fn,
		                (double)d->volume_compliance);
	if (d->long_range && d->long_range_mode != PBD_LRA_EUCLIDEAN && d->long_range_mode != PBD_LRA_GEODESIC)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: unknown long_range_mode %d", fn, (int)d->long_range_mode);
	return PBD_OK;
}

pbd_status pbd_soft_add_extras(pbd_world* w, const pbd_soft_def* d, const pbd_soft_info* body, const pbd_vec3* pos,
                               const char* fn) {
	pbd_status st = PBD_OK;
	if (d->bend == PBD_BEND_DIHEDRAL || d->bend == PBD_BEND_ISOMETRIC)
		st = add_hinges(w, d, body->first_particle, pos, fn);
	if (st == PBD_OK) st = add_tets(w, d, body->first_particle, fn);
	if (st == PBD_OK && d->membrane == PBD_MEMBRANE_TRIANGLES) {
		pbd_triangle_strain_def proto = pbd_triangle_strain_def_default();
		proto.stretch_stiffness = d->membrane_stiffness;
		proto.shear_stiffness = d->membrane_stiffness;
		proto.stretch_compliance = d->membrane_compliance;
		proto.shear_compliance = d->membrane_compliance;
		if (d->cloth) {
			/* Per unit area: 1 / modulus; an infinite modulus is a hard constraint. */
			proto.stretch_compliance = pbd_material_compliance(d->cloth->stretch);
			proto.shear_compliance = pbd_material_compliance(d->cloth->shear);
		}
		st = pbd_world_add_surface_strains(w, body->first_triangle, body->triangle_count, &proto, NULL);
	}
	if (st == PBD_OK && d->balloon) {
		uint32_t* tri = (uint32_t*)pbd_alloc(&w->mem, 3 * (size_t)body->triangle_count * sizeof *tri);
		if (!tri) return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
		for (size_t k = 0; k < 3 * (size_t)body->triangle_count; ++k)
			tri[k] = body->first_particle + d->mesh->triangles[k];
		pbd_volume_def vd = pbd_volume_def_default();
		vd.triangle_count = body->triangle_count;
		vd.triangles = tri;
		vd.pressure = d->pressure;
		vd.stiffness = d->volume_stiffness;
		vd.compliance = d->volume_compliance;
		st = pbd_world_add_volumes(w, 1, &vd, NULL);
		pbd_free(&w->mem, tri, 3 * (size_t)body->triangle_count * sizeof *tri);
	}
	if (st == PBD_OK && d->long_range) {
		pbd_lra_def ld = pbd_lra_def_default();
		ld.first_particle = body->first_particle;
		ld.particle_count = body->particle_count;
		ld.mode = d->long_range_mode;
		ld.scale = d->long_range_scale;
		st = pbd_world_add_lras(w, 1, &ld, NULL);
	}
	return st;
}
