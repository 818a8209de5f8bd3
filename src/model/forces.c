/* Air and impulses (docs/methods.md, "Forces"): the wind with its gusts, the drag of surface
 * triangles (seed 003's viscous model, A Cn (n.u) n, with a tangential term) and of particles,
 * and velocity kicks. The air is evaluated from the arrays alone, so the position-based step
 * and the force-based methods share one evaluation. */
#include <string.h>

#include "model/forces.h"

#define PI 3.14159265358979323846

/* ---- wind -------------------------------------------------------------------------------- */

/* Each gust signal is a fixed sum of three sines whose weights add up to 1, so it stays within
 * [-1, 1], at f times ratios no two of which are commensurate (1, sqrt 2 and 1/phi for the speed;
 * sqrt 3 / 2, sqrt phi and e / 4 for the direction): the sum never repeats, and the speed and the
 * direction never move in step. The first term of each carries half the weight, so f is the
 * frequency one sees. */
static double gust_speed(double a) {
	return 0.5 * sin(a) + 0.3 * sin(1.4142135623730951 * a + 1.1) + 0.2 * sin(0.6180339887498949 * a + 2.3);
}

static double gust_turn(double a) {
	return 0.5 * sin(0.8660254037844386 * a + 0.7) + 0.3 * sin(1.2720196495140689 * a + 2.9) +
	       0.2 * sin(0.6795704571147613 * a + 4.1);
}

pbd_vec3 pbd_forces_wind(const pbd_world_def* d, double t) {
	const pbd_vec3 mean = d->wind;
	const double s = (double)d->gust_strength;
	if (s == 0 || !isfinite(t) || (mean.x == 0 && mean.y == 0 && mean.z == 0)) return mean;
	const double a = 2 * PI * (double)d->gust_frequency * t;
	const double speed = 1 + s * gust_speed(a), turn = s * gust_turn(a);
	const double c = cos(turn), sn = sin(turn);
	const double x = (double)mean.x, y = (double)mean.y, z = (double)mean.z;
	double rx, ry, rz;
	if (x != 0 || z != 0) {
		/* About the vertical (y): the gust swings the wind sideways and leaves its rise alone. */
		rx = c * x + sn * z;
		ry = y;
		rz = c * z - sn * x;
	} else {
		/* A vertical wind has no side to swing to; it tilts about x, perpendicular to it. */
		rx = x;
		ry = c * y;
		rz = sn * y;
	}
	return pbd_v3((pbd_real)(speed * rx), (pbd_real)(speed * ry), (pbd_real)(speed * rz));
}

pbd_vec3 pbd_world_wind_at(const pbd_world* w, double time) {
	return w ? pbd_forces_wind(&w->def, time) : pbd_v3(0, 0, 0);
}

/* ---- air forces -------------------------------------------------------------------------- */

static inline void sym3_add(pbd_sym3* a, pbd_sym3 b) {
	a->xx += b.xx;
	a->yy += b.yy;
	a->zz += b.zz;
	a->xy += b.xy;
	a->xz += b.xz;
	a->yz += b.yz;
}

/* Adds the air force to out and, when k is given, each particle's drag to k: minus the
 * derivative of the force on it by its velocity when the corners of its triangles move with it,
 * a third of each triangle's A (Cn n n^T + Ct (I - n n^T)), plus c I, which is what lets the step
 * take the drag implicitly. */
static void air_add(const pbd_world* w, double t, const pbd_vec3* restrict v, pbd_vec3* restrict out,
                    pbd_sym3* restrict k) {
	const pbd_vec3 wind = pbd_forces_wind(&w->def, t);
	if (w->nt_drag > 0) {
		const pbd_vec3* restrict x = w->x;
		const uint32_t* restrict tri = w->tri;
		const pbd_tri_drag* restrict drag = w->tri_drag;
		const pbd_vec3* restrict own = w->tri_wind;
		for (uint32_t f = 0, nt = w->nt; f < nt; ++f) {
			const double cn = (double)drag[f].normal, ct = (double)drag[f].tangent;
			if (!(cn > 0) && !(ct > 0)) continue;
			const uint32_t i = tri[3 * (size_t)f], j = tri[3 * (size_t)f + 1], l = tri[3 * (size_t)f + 2];
			/* In double, so that the cross product of two float edges neither overflows nor
			 * underflows: every triangle of non-zero area gets a unit normal. */
			const double ax = (double)x[j].x - (double)x[i].x, ay = (double)x[j].y - (double)x[i].y,
			             az = (double)x[j].z - (double)x[i].z;
			const double bx = (double)x[l].x - (double)x[i].x, by = (double)x[l].y - (double)x[i].y,
			             bz = (double)x[l].z - (double)x[i].z;
			double nx = ay * bz - az * by, ny = az * bx - ax * bz, nz = ax * by - ay * bx;
			const double len = sqrt(nx * nx + ny * ny + nz * nz); /* twice the area */
			if (!(len > 0) || !isfinite(len)) continue;           /* no area, no normal: no air */
			nx /= len;
			ny /= len;
			nz /= len;
			const double third = len / 6; /* a third of the area: each corner's share */
			const double ux =
			    (double)wind.x + (double)own[f].x - ((double)v[i].x + (double)v[j].x + (double)v[l].x) / 3;
			const double uy =
			    (double)wind.y + (double)own[f].y - ((double)v[i].y + (double)v[j].y + (double)v[l].y) / 3;
			const double uz =
			    (double)wind.z + (double)own[f].z - ((double)v[i].z + (double)v[j].z + (double)v[l].z) / 3;
			const double un = nx * ux + ny * uy + nz * uz;
			const double fn = third * (cn - ct) * un; /* Cn (n.u) n + Ct (u - (n.u) n) */
			const pbd_vec3 share = pbd_v3((pbd_real)(fn * nx + third * ct * ux), (pbd_real)(fn * ny + third * ct * uy),
			                              (pbd_real)(fn * nz + third * ct * uz));
			out[i] = pbd_v3_add(out[i], share);
			out[j] = pbd_v3_add(out[j], share);
			out[l] = pbd_v3_add(out[l], share);
			if (k) {
				const double a = third * ct, b = third * (cn - ct);
				const pbd_sym3 kk = {(pbd_real)(a + b * nx * nx), (pbd_real)(a + b * ny * ny),
				                     (pbd_real)(a + b * nz * nz), (pbd_real)(b * nx * ny),
				                     (pbd_real)(b * nx * nz),     (pbd_real)(b * ny * nz)};
				sym3_add(&k[i], kk);
				sym3_add(&k[j], kk);
				sym3_add(&k[l], kk);
			}
		}
	}
	if (w->n_drag > 0) {
		const pbd_real* restrict c = w->drag;
		const pbd_vec3* restrict own = w->drag_wind;
		for (uint32_t i = 0, n = w->np; i < n; ++i) {
			if (!(c[i] > 0)) continue;
			out[i] = pbd_v3_add(out[i], pbd_v3_scale(pbd_v3_sub(pbd_v3_add(wind, own[i]), v[i]), c[i]));
			if (k) sym3_add(&k[i], (pbd_sym3){c[i], c[i], c[i], 0, 0, 0});
		}
	}
}

bool pbd_forces_air(const pbd_world* w, double t, const pbd_vec3* v, pbd_vec3* out) {
	if (w->n_drag == 0 && w->nt_drag == 0) return false;
	air_add(w, t, v, out, NULL);
	return true;
}

void pbd_forces_substep(pbd_world* w, double t) {
	w->air_on = w->n_drag > 0 || w->nt_drag > 0;
	if (!w->air_on) return;
	memset(w->air_force, 0, (size_t)w->np * sizeof *w->air_force);
	memset(w->air_drag, 0, (size_t)w->np * sizeof *w->air_drag);
	air_add(w, t, w->v, w->air_force, w->air_drag);
}

/* (I + hw K) is symmetric with eigenvalues >= 1, so its determinant is >= 1 and Cramer's rule
 * in double is safe while hw K is moderate. Past 1e8 (a drag that matches the air within a
 * hundred-millionth of a substep) cancellation could spoil it; there, and should the determinant
 * come out below 1, each axis is relaxed on its own, which is as stable and only less exact. */
pbd_vec3 pbd_forces_kick(const pbd_sym3* k, pbd_real hw, pbd_vec3 rhs) {
	const double s = (double)hw;
	const double a = 1 + s * (double)k->xx, b = 1 + s * (double)k->yy, c = 1 + s * (double)k->zz;
	const double d = s * (double)k->xy, e = s * (double)k->xz, f = s * (double)k->yz;
	const double rx = (double)rhs.x, ry = (double)rhs.y, rz = (double)rhs.z;
	const double big = 1e8;
	if ((d != 0 || e != 0 || f != 0) && a < big && b < big && c < big) {
		const double c00 = b * c - f * f, c01 = e * f - d * c, c02 = d * f - b * e;
		const double c11 = a * c - e * e, c12 = d * e - a * f, c22 = a * b - d * d;
		const double det = a * c00 + d * c01 + e * c02;
		if (det >= 1)
			return pbd_v3((pbd_real)((c00 * rx + c01 * ry + c02 * rz) / det),
			              (pbd_real)((c01 * rx + c11 * ry + c12 * rz) / det),
			              (pbd_real)((c02 * rx + c12 * ry + c22 * rz) / det));
	}
	return pbd_v3((pbd_real)(rx / a), (pbd_real)(ry / b), (pbd_real)(rz / c));
}

/* ---- settings ---------------------------------------------------------------------------- */

pbd_status pbd_forces_check_drag(pbd_world* w, const char* fn, const char* what, pbd_real drag) {
	if (!pbd_is_finite(drag)) return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: %s is not finite", fn, what);
	if (drag < 0) return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: %s must be >= 0 (got %.9g)", fn, what, (double)drag);
	return PBD_OK;
}

pbd_status pbd_forces_check_wind(pbd_world* w, const char* fn, const char* what, pbd_vec3 wind) {
	if (!pbd_v3_is_finite(wind)) return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: %s is not finite", fn, what);
	const pbd_real cap = (pbd_real)PBD_MAX_GRAVITY;
	if (PBD_FABS(wind.x) > cap || PBD_FABS(wind.y) > cap || PBD_FABS(wind.z) > cap)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "%s: %s: each component must be within +-%g m/s (got %.9g, %.9g, %.9g)", fn, what,
		                PBD_MAX_GRAVITY, (double)wind.x, (double)wind.y, (double)wind.z);
	return PBD_OK;
}

void pbd_forces_store_triangles(pbd_world* w, uint32_t first, uint32_t count, pbd_tri_drag drag, pbd_vec3 wind) {
	const bool on = drag.normal > 0 || drag.tangent > 0;
	for (uint32_t f = first; f < first + count; ++f) {
		const bool was = w->tri_drag[f].normal > 0 || w->tri_drag[f].tangent > 0;
		w->nt_drag = w->nt_drag + (on ? 1u : 0u) - (was ? 1u : 0u);
		w->tri_drag[f] = drag;
		w->tri_wind[f] = wind;
	}
}

void pbd_forces_store_particles(pbd_world* w, uint32_t first, uint32_t count, pbd_real drag, pbd_vec3 wind) {
	const bool on = drag > 0;
	for (uint32_t i = first; i < first + count; ++i) {
		const bool was = w->drag[i] > 0;
		w->n_drag = w->n_drag + (on ? 1u : 0u) - (was ? 1u : 0u);
		w->drag[i] = drag;
		w->drag_wind[i] = wind;
	}
}

void pbd_forces_recount(pbd_world* w) {
	w->n_drag = 0;
	for (uint32_t i = 0; i < w->np; ++i) w->n_drag += w->drag[i] > 0 ? 1u : 0u;
	w->nt_drag = 0;
	for (uint32_t f = 0; f < w->nt; ++f)
		w->nt_drag += w->tri_drag[f].normal > 0 || w->tri_drag[f].tangent > 0 ? 1u : 0u;
}

/* [first, first + count) within the n particles or triangles (`what`) of the world. */
static pbd_status check_range(pbd_world* w, const char* fn, uint32_t first, uint32_t count, uint32_t n,
                              const char* what) {
	if (first > n || count > n - first)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: range [%u, %u + %u) exceeds the %u %s", fn, first, first, count,
		                n, what);
	return PBD_OK;
}

pbd_status pbd_world_set_triangle_drag(pbd_world* w, uint32_t first, uint32_t count, pbd_real normal, pbd_real tangent,
                                       pbd_vec3 wind) {
	const char* fn = "pbd_world_set_triangle_drag";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_status st = check_range(w, fn, first, count, w->nt, "triangles");
	if (st == PBD_OK) st = pbd_forces_check_drag(w, fn, "normal", normal);
	if (st == PBD_OK) st = pbd_forces_check_drag(w, fn, "tangent", tangent);
	if (st == PBD_OK) st = pbd_forces_check_wind(w, fn, "wind", wind);
	if (st != PBD_OK) return st;
	pbd_forces_store_triangles(w, first, count, (pbd_tri_drag){normal, tangent}, wind);
	return PBD_OK;
}

pbd_status pbd_particles_set_drag(pbd_world* w, uint32_t first, uint32_t count, pbd_real drag, pbd_vec3 wind) {
	const char* fn = "pbd_particles_set_drag";
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_status st = check_range(w, fn, first, count, w->np, "particles");
	if (st == PBD_OK) st = pbd_forces_check_drag(w, fn, "drag", drag);
	if (st == PBD_OK) st = pbd_forces_check_wind(w, fn, "wind", wind);
	if (st != PBD_OK) return st;
	pbd_forces_store_particles(w, first, count, drag, wind);
	return PBD_OK;
}

/* ---- impulses ---------------------------------------------------------------------------- */

/* A velocity change j s (j an impulse component, s = 1/m) into *dv when it leaves the velocity
 * v finite with room to spare: both within a quarter of the scalar's range. The product is
 * formed only once it is known to fit, since in a double build it could overflow. */
static bool kick_fits(pbd_real v, double j, double s, double* dv) {
	const double lim = (double)PBD_REAL_MAX / 4;
	if (!(PBD_FABS(v) <= (pbd_real)lim) || (s > 1 && fabs(j) > lim / s)) return false;
	*dv = j * s;
	return fabs(*dv) <= lim;
}

pbd_status pbd_particle_apply_impulse(pbd_world* w, uint32_t index, pbd_vec3 impulse) {
	const char* fn = "pbd_particle_apply_impulse";
	const pbd_status st = pbd_check_particle(w, index, fn);
	if (st != PBD_OK) return st;
	if (!pbd_v3_is_finite(impulse)) return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: impulse is not finite", fn);
	const double s = (double)w->w[index];
	if (!(s > 0)) return PBD_OK; /* pinned: moved by targets only */
	const pbd_vec3 v = w->v[index];
	double dx, dy, dz;
	if (!kick_fits(v.x, (double)impulse.x, s, &dx) || !kick_fits(v.y, (double)impulse.y, s, &dy) ||
	    !kick_fits(v.z, (double)impulse.z, s, &dz))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "%s: impulse (%.9g, %.9g, %.9g) N s would give particle %u a velocity beyond the scalar's "
		                "range",
		                fn, (double)impulse.x, (double)impulse.y, (double)impulse.z, index);
	pbd_particle_add_velocity(w, index, pbd_v3((pbd_real)dx, (pbd_real)dy, (pbd_real)dz));
	return PBD_OK;
}

pbd_status pbd_world_explode(pbd_world* w, pbd_vec3 centre, pbd_real radius, pbd_real impulse, uint32_t* count) {
	const char* fn = "pbd_world_explode";
	if (count) *count = 0;
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	if (!pbd_v3_is_finite(centre)) return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: centre is not finite", fn);
	if (!pbd_is_finite(radius)) return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: radius is not finite", fn);
	if (!(radius > 0))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: radius must be > 0 m (got %.9g)", fn, (double)radius);
	if (!pbd_is_finite(impulse)) return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: impulse is not finite", fn);
	const double r = (double)radius, cx = (double)centre.x, cy = (double)centre.y, cz = (double)centre.z;
	/* The first pass only checks, so that a kick too large for one particle leaves every
	 * particle as it was. */
	uint32_t pushed = 0;
	for (int apply = 0; apply < 2; ++apply) {
		for (uint32_t i = 0, n = w->np; i < n; ++i) {
			const double s = (double)w->w[i];
			if (!(s > 0)) continue;
			/* The exact position, so that the distance does not depend on where x was rounded. */
			const double dx = (double)w->x[i].x + (double)w->x_lo[i].x - cx;
			const double dy = (double)w->x[i].y + (double)w->x_lo[i].y - cy;
			const double dz = (double)w->x[i].z + (double)w->x_lo[i].z - cz;
			const double d = sqrt(dx * dx + dy * dy + dz * dz);
			if (!(d > 0) || !(d < r)) continue; /* the centre has no direction to be pushed in */
			const double j = (double)impulse * (1 - d / r);
			double vx, vy, vz;
			const pbd_vec3 v = w->v[i];
			if (!kick_fits(v.x, j * (dx / d), s, &vx) || !kick_fits(v.y, j * (dy / d), s, &vy) ||
			    !kick_fits(v.z, j * (dz / d), s, &vz))
				return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
				                "%s: impulse %.9g N s would give particle %u a velocity beyond the scalar's range", fn,
				                (double)impulse, i);
			if (apply) {
				pbd_particle_add_velocity(w, i, pbd_v3((pbd_real)vx, (pbd_real)vy, (pbd_real)vz));
				++pushed;
			}
		}
	}
	if (count) *count = pushed;
	return PBD_OK;
}
