/* Mass properties of collider shapes (pbd_collider_mass_properties) and of compounds
 * (pbd_mass_properties_combine), the matter of rigid bodies.
 *
 * The sphere, the capsule and the box have closed forms. A convex hull and a closed mesh are
 * summed over their surface triangles: each triangle (a, b, c) and the origin span a tetrahedron
 * of signed volume V = a . (b x c) / 6, whose first moment is V (a + b + c) / 4 and whose second
 * moment (covariance) is V / 20 (a a^T + b b^T + c c^T + s s^T) with s = a + b + c (Blow &
 * Binstock 2004, "How to find the inertia tensor (or other mass properties) of a 3D solid body
 * represented by a triangle mesh"). Tetrahedra outside the solid come with negative volume and
 * cancel. The inertia is trace(C) 1 - C, moved to the centre of mass by the parallel-axis
 * theorem. Everything is summed in double, relative to the shape's own bounds centre so that a
 * mesh far from its origin loses no digits. */
#include <math.h>
#include <string.h>

#include "collision/collide.h"

#define PBD_PI_D 3.14159265358979323846

enum { XX, YY, ZZ, XY, XZ, YZ };

/* The properties of a solid centred on the origin of its frame with a diagonal inertia. */
static void centred(pbd_mass_properties* out, double mass, double ixx, double iyy, double izz) {
	memset(out, 0, sizeof *out);
	out->mass = mass;
	out->inertia[XX] = ixx;
	out->inertia[YY] = iyy;
	out->inertia[ZZ] = izz;
}

static void sphere(const pbd_sphere* s, double rho, pbd_mass_properties* out) {
	const double r = (double)s->radius, m = rho * 4.0 / 3.0 * PBD_PI_D * r * r * r, i = 0.4 * m * r * r;
	centred(out, m, i, i, i);
}

/* Along the local y axis: a cylinder of length 2 h and two half balls, each of whose inertia
 * about an axis across the capsule is 2/5 m r^2 about its flat face's centre, moved by the
 * parallel-axis theorem through its own centre of mass (3 r / 8 from the face) to the capsule's
 * centre: m_b (2/5 r^2 + h^2 + 3/4 h r) for the two together. */
static void capsule(const pbd_capsule* c, double rho, pbd_mass_properties* out) {
	const double r = (double)c->radius, h = (double)c->half_height;
	const double mc = rho * PBD_PI_D * r * r * 2 * h, mb = rho * 4.0 / 3.0 * PBD_PI_D * r * r * r;
	const double axial = mc * r * r / 2 + mb * 0.4 * r * r;
	const double across = mc * (3 * r * r + 4 * h * h) / 12 + mb * (0.4 * r * r + h * h + 0.75 * h * r);
	centred(out, mc + mb, across, axial, across);
}

static void box(const pbd_box* b, double rho, pbd_mass_properties* out) {
	const double x = (double)b->half_extents.x, y = (double)b->half_extents.y, z = (double)b->half_extents.z;
	const double m = rho * 8 * x * y * z;
	centred(out, m, m * (y * y + z * z) / 3, m * (x * x + z * z) / 3, m * (x * x + y * y) / 3);
}

/* The surface triangles of the shape, summed as signed tetrahedra about o. */
static pbd_status polyhedron(pbd_world* w, const pbd_shape_ops* ops, const pbd_collider_def* def, double rho,
                             pbd_mass_properties* out) {
	uint32_t nv = 0, nt = 0;
	ops->triangles(def, NULL, 0, NULL, 0, &nv, &nt);
	const size_t vbytes = (size_t)nv * sizeof(pbd_vec3), tbytes = (size_t)nt * 3 * sizeof(uint32_t);
	pbd_vec3* v = (pbd_vec3*)pbd_alloc(&w->mem, vbytes);
	uint32_t* t = (uint32_t*)pbd_alloc(&w->mem, tbytes);
	if ((nv && !v) || (nt && !t)) {
		pbd_free(&w->mem, v, vbytes);
		pbd_free(&w->mem, t, tbytes);
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_collider_mass_properties: out of memory for %u triangles", nt);
	}
	ops->triangles(def, v, nv, t, nt, &nv, &nt);
	double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
	for (uint32_t i = 0; i < nv; ++i) {
		const double p[3] = {(double)v[i].x, (double)v[i].y, (double)v[i].z};
		for (int k = 0; k < 3; ++k) {
			lo[k] = fmin(lo[k], p[k]);
			hi[k] = fmax(hi[k], p[k]);
		}
	}
	const double o[3] = {(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2};
	double vol = 0, first[3] = {0, 0, 0}, cov[6] = {0, 0, 0, 0, 0, 0};
	for (uint32_t k = 0; k < nt; ++k) {
		double p[3][3];
		for (int j = 0; j < 3; ++j) {
			const pbd_vec3 q = v[t[3 * k + (uint32_t)j]];
			p[j][0] = (double)q.x - o[0];
			p[j][1] = (double)q.y - o[1];
			p[j][2] = (double)q.z - o[2];
		}
		const double* a = p[0];
		const double* b = p[1];
		const double* c = p[2];
		const double d = (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
		                  a[2] * (b[0] * c[1] - b[1] * c[0])) /
		                 6;
		const double s[3] = {a[0] + b[0] + c[0], a[1] + b[1] + c[1], a[2] + b[2] + c[2]};
		vol += d;
		for (int j = 0; j < 3; ++j) first[j] += d * s[j] / 4;
		const int row[6] = {0, 1, 2, 0, 0, 1}, col[6] = {0, 1, 2, 1, 2, 2};
		for (int e = 0; e < 6; ++e) {
			const int r = row[e], q = col[e];
			cov[e] += d / 20 * (a[r] * a[q] + b[r] * b[q] + c[r] * c[q] + s[r] * s[q]);
		}
	}
	pbd_free(&w->mem, v, vbytes);
	pbd_free(&w->mem, t, tbytes);
	if (!(vol > 0) || !isfinite(vol))
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT,
		                "pbd_collider_mass_properties: the %s's triangles enclose no positive volume (%.9g m^3): "
		                "not closed, or wound inward",
		                ops->name, vol);
	const double m = rho * vol, cx = first[0] / vol, cy = first[1] / vol, cz = first[2] / vol;
	/* Second moments about the centre of mass, then the inertia trace(C) 1 - C. */
	const double c[6] = {rho * cov[XX] - m * cx * cx, rho * cov[YY] - m * cy * cy, rho * cov[ZZ] - m * cz * cz,
	                     rho * cov[XY] - m * cx * cy, rho * cov[XZ] - m * cx * cz, rho * cov[YZ] - m * cy * cz};
	const double tr = c[XX] + c[YY] + c[ZZ];
	memset(out, 0, sizeof *out);
	out->mass = m;
	out->center[0] = cx + o[0];
	out->center[1] = cy + o[1];
	out->center[2] = cz + o[2];
	out->inertia[XX] = tr - c[XX];
	out->inertia[YY] = tr - c[YY];
	out->inertia[ZZ] = tr - c[ZZ];
	out->inertia[XY] = -c[XY];
	out->inertia[XZ] = -c[XZ];
	out->inertia[YZ] = -c[YZ];
	return PBD_OK;
}

/* R I R^T and the centre mapped by the pose: the properties in the frame the pose maps to. */
static void posed(pbd_pose pose, pbd_mass_properties* p) {
	const double x = (double)pose.rotation.x, y = (double)pose.rotation.y, z = (double)pose.rotation.z,
	             s = (double)pose.rotation.w;
	const double n = sqrt(x * x + y * y + z * z + s * s);
	const double qx = x / n, qy = y / n, qz = z / n, qw = s / n;
	const double r[3][3] = {{1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)},
	                        {2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw)},
	                        {2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy)}};
	const double* I = p->inertia;
	const double m[3][3] = {{I[XX], I[XY], I[XZ]}, {I[XY], I[YY], I[YZ]}, {I[XZ], I[YZ], I[ZZ]}};
	double t[3][3], out[3][3];
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) t[i][j] = r[i][0] * m[0][j] + r[i][1] * m[1][j] + r[i][2] * m[2][j];
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) out[i][j] = t[i][0] * r[j][0] + t[i][1] * r[j][1] + t[i][2] * r[j][2];
	p->inertia[XX] = out[0][0];
	p->inertia[YY] = out[1][1];
	p->inertia[ZZ] = out[2][2];
	p->inertia[XY] = (out[0][1] + out[1][0]) / 2;
	p->inertia[XZ] = (out[0][2] + out[2][0]) / 2;
	p->inertia[YZ] = (out[1][2] + out[2][1]) / 2;
	double c[3];
	for (int i = 0; i < 3; ++i) c[i] = r[i][0] * p->center[0] + r[i][1] * p->center[1] + r[i][2] * p->center[2];
	p->center[0] = c[0] + (double)pose.position.x;
	p->center[1] = c[1] + (double)pose.position.y;
	p->center[2] = c[2] + (double)pose.position.z;
}

pbd_status pbd_collider_mass_properties(pbd_world* w, pbd_collider_id id, pbd_real density, pbd_mass_properties* out) {
	if (!w || !out) return PBD_ERR_INVALID_ARGUMENT;
	pbd_collider_def def;
	if (pbd_collider_get_def(w, id, &def) != PBD_OK)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_collider_mass_properties: stale or null collider id");
	if (!(density > 0) || !isfinite(density))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_collider_mass_properties: density must be finite and > 0 kg/m^3 (got %.9g)",
		                (double)density);
	const pbd_shape_ops* ops = pbd_shape_ops_of(def.type);
	const double rho = (double)density;
	pbd_mass_properties p;
	switch (def.type) {
	case PBD_SHAPE_SPHERE:
		sphere(&def.shape.sphere, rho, &p);
		p.center[0] = (double)def.shape.sphere.center.x;
		p.center[1] = (double)def.shape.sphere.center.y;
		p.center[2] = (double)def.shape.sphere.center.z;
		break;
	case PBD_SHAPE_CAPSULE:
		capsule(&def.shape.capsule, rho, &p);
		break;
	case PBD_SHAPE_BOX:
		box(&def.shape.box, rho, &p);
		break;
	case PBD_SHAPE_CONVEX: {
		const pbd_status st = polyhedron(w, ops, &def, rho, &p);
		if (st != PBD_OK) return st;
		break;
	}
	case PBD_SHAPE_MESH:
		if (def.shape.mesh.closed) {
			const pbd_status st = polyhedron(w, ops, &def, rho, &p);
			if (st != PBD_OK) return st;
			break;
		}
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT,
		                "pbd_collider_mass_properties: an open mesh bounds no volume (closed is false)");
	default:
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_collider_mass_properties: a %s bounds no finite volume",
		                ops->name);
	}
	posed(def.pose, &p);
	for (int k = 0; k < 6; ++k)
		if (!isfinite(p.inertia[k]) || !isfinite(p.mass))
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
			                "pbd_collider_mass_properties: the %s's mass overflows at %.9g kg/m^3", ops->name,
			                (double)density);
	*out = p;
	return PBD_OK;
}

pbd_status pbd_mass_properties_combine(const pbd_mass_properties* parts, uint32_t count, pbd_mass_properties* out) {
	if (!parts || !out || count == 0) return PBD_ERR_INVALID_ARGUMENT;
	double m = 0, c[3] = {0, 0, 0};
	for (uint32_t k = 0; k < count; ++k) {
		if (!(parts[k].mass > 0) || !isfinite(parts[k].mass)) return PBD_ERR_INVALID_ARGUMENT;
		m += parts[k].mass;
		for (int j = 0; j < 3; ++j) c[j] += parts[k].mass * parts[k].center[j];
	}
	for (int j = 0; j < 3; ++j) c[j] /= m;
	double I[6] = {0, 0, 0, 0, 0, 0};
	for (uint32_t k = 0; k < count; ++k) {
		/* I + m (|d|^2 1 - d d^T), d from the common centre to the part's. */
		const double pm = parts[k].mass;
		const double d[3] = {parts[k].center[0] - c[0], parts[k].center[1] - c[1], parts[k].center[2] - c[2]};
		const double dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
		I[XX] += parts[k].inertia[XX] + pm * (dd - d[0] * d[0]);
		I[YY] += parts[k].inertia[YY] + pm * (dd - d[1] * d[1]);
		I[ZZ] += parts[k].inertia[ZZ] + pm * (dd - d[2] * d[2]);
		I[XY] += parts[k].inertia[XY] - pm * d[0] * d[1];
		I[XZ] += parts[k].inertia[XZ] - pm * d[0] * d[2];
		I[YZ] += parts[k].inertia[YZ] - pm * d[1] * d[2];
	}
	out->mass = m;
	memcpy(out->center, c, sizeof c);
	memcpy(out->inertia, I, sizeof I);
	return PBD_OK;
}
