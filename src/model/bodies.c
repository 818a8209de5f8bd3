/* Rigid bodies (bodies.h): creation and checks, the public calls, and free motion in the
 * substeps.
 *
 * The linear motion is the particles': v += h (g + f / m), then the centre moves by v h, added
 * to x + x_lo as an exact sum. The rotation follows Euler's equations in the principal axes,
 * I dw/dt = tau - w x I w, by the implicit midpoint rule, and the orientation turns by the Cayley
 * rotation of the midpoint velocity, q' = q (1, h w_m / 2) / |...| (Müller et al. 2020 update the
 * quaternion the same way, with an explicit gyroscopic term). The midpoint rule keeps every
 * quadratic invariant of the torque-free motion: the kinetic energy w . I w / 2 and |I w|; and
 * because the body-frame angular momentum it produces is the old one turned back by exactly the
 * Cayley rotation the orientation takes, the world angular momentum R I w stays what it was, to
 * rounding, at any step length. The spin about the intermediate axis still flips (Dzhanibekov):
 * the invariants allow it, the rule does not forbid it. */
#include <math.h>
#include <string.h>

#include "model/bodies.h"
#include "model/world.h"
#ifdef PBD_HAVE_AVX2
#include "model/bodies_simd.h"
#endif

/* ---- double-precision rotations --------------------------------------------------------- */

typedef struct dquat {
	double x, y, z, w;
} dquat;

static dquat dq_of(pbd_quat q) {
	dquat r = {(double)q.x, (double)q.y, (double)q.z, (double)q.w};
	return r;
}
static pbd_quat quat_of(dquat q) {
	pbd_quat r = {(pbd_real)q.x, (pbd_real)q.y, (pbd_real)q.z, (pbd_real)q.w};
	return r;
}
static dquat dq_mul(dquat a, dquat b) {
	dquat r = {a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y, a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
	           a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w, a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
	return r;
}
static dquat dq_conj(dquat a) {
	dquat r = {-a.x, -a.y, -a.z, a.w};
	return r;
}
static dquat dq_unit(dquat a) {
	const double n = sqrt(a.x * a.x + a.y * a.y + a.z * a.z + a.w * a.w);
	dquat r = {a.x / n, a.y / n, a.z / n, a.w / n};
	return r;
}
/* out = R(q) v, or R(q)^T v when inverse. */
static void dq_rotate(dquat q, const double v[3], double out[3], bool inverse) {
	if (inverse) q = dq_conj(q);
	const double tx = 2 * (q.y * v[2] - q.z * v[1]), ty = 2 * (q.z * v[0] - q.x * v[2]),
	             tz = 2 * (q.x * v[1] - q.y * v[0]);
	out[0] = v[0] + q.w * tx + (q.y * tz - q.z * ty);
	out[1] = v[1] + q.w * ty + (q.z * tx - q.x * tz);
	out[2] = v[2] + q.w * tz + (q.x * ty - q.y * tx);
}
static void d3(pbd_vec3 v, double out[3]) {
	out[0] = (double)v.x;
	out[1] = (double)v.y;
	out[2] = (double)v.z;
}
static pbd_vec3 v3(const double v[3]) { return pbd_v3((pbd_real)v[0], (pbd_real)v[1], (pbd_real)v[2]); }

/* The rotation matrix m (columns: the images of the axes) as a unit quaternion (Shepperd). */
static dquat dq_of_matrix(double m[3][3]) {
	const double tr = m[0][0] + m[1][1] + m[2][2];
	dquat q;
	if (tr > 0) {
		const double s = 2 * sqrt(tr + 1);
		q = (dquat){(m[2][1] - m[1][2]) / s, (m[0][2] - m[2][0]) / s, (m[1][0] - m[0][1]) / s, s / 4};
	} else if (m[0][0] > m[1][1] && m[0][0] > m[2][2]) {
		const double s = 2 * sqrt(1 + m[0][0] - m[1][1] - m[2][2]);
		q = (dquat){s / 4, (m[0][1] + m[1][0]) / s, (m[0][2] + m[2][0]) / s, (m[2][1] - m[1][2]) / s};
	} else if (m[1][1] > m[2][2]) {
		const double s = 2 * sqrt(1 + m[1][1] - m[0][0] - m[2][2]);
		q = (dquat){(m[0][1] + m[1][0]) / s, s / 4, (m[1][2] + m[2][1]) / s, (m[0][2] - m[2][0]) / s};
	} else {
		const double s = 2 * sqrt(1 + m[2][2] - m[0][0] - m[1][1]);
		q = (dquat){(m[0][2] + m[2][0]) / s, (m[1][2] + m[2][1]) / s, s / 4, (m[1][0] - m[0][1]) / s};
	}
	return dq_unit(q);
}

/* Principal moments d and axes (the columns of v, a rotation) of a symmetric matrix a, by
 * cyclic Jacobi rotations until the off-diagonal part is negligible. */
static void eigen_sym3(const double a_in[3][3], double d[3], double v[3][3]) {
	double a[3][3];
	memcpy(a, a_in, sizeof a);
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) v[i][j] = i == j;
	for (int sweep = 0; sweep < 64; ++sweep) {
		const double off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
		const double diag = a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2];
		if (!(off > 1e-30 * diag)) break;
		for (int p = 0; p < 2; ++p)
			for (int q = p + 1; q < 3; ++q) {
				if (a[p][q] == 0) continue;
				const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
				const double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
				const double c = 1 / sqrt(t * t + 1), s = t * c;
				for (int k = 0; k < 3; ++k) {
					const double akp = a[k][p], akq = a[k][q];
					a[k][p] = c * akp - s * akq;
					a[k][q] = s * akp + c * akq;
				}
				for (int k = 0; k < 3; ++k) {
					const double apk = a[p][k], aqk = a[q][k];
					a[p][k] = c * apk - s * aqk;
					a[q][k] = s * apk + c * aqk;
				}
				for (int k = 0; k < 3; ++k) {
					const double vkp = v[k][p], vkq = v[k][q];
					v[k][p] = c * vkp - s * vkq;
					v[k][q] = s * vkp + c * vkq;
				}
			}
	}
	for (int i = 0; i < 3; ++i) d[i] = a[i][i];
	/* A proper rotation: flip the last axis of a reflection. */
	const double det = v[0][0] * (v[1][1] * v[2][2] - v[1][2] * v[2][1]) -
	                   v[0][1] * (v[1][0] * v[2][2] - v[1][2] * v[2][0]) +
	                   v[0][2] * (v[1][0] * v[2][1] - v[1][1] * v[2][0]);
	if (det < 0)
		for (int k = 0; k < 3; ++k) v[k][2] = -v[k][2];
}

/* ---- storage ------------------------------------------------------------------------------ */

pbd_status pbd_bodies_reserve(pbd_world* w, uint32_t capacity) {
	pbd_bodies* b = &w->bodies;
	if (capacity <= b->cap) return pbd_nodes_reserve(w);
	uint32_t cap = b->cap ? b->cap : 8;
	while (cap < capacity) cap = cap > UINT32_MAX / 2 ? capacity : cap * 2;
	const pbd_grow_item items[] = {
	    {(void**)&b->type, sizeof *b->type},
	    {(void**)&b->live, sizeof *b->live},
	    {(void**)&b->generation, sizeof *b->generation},
	    {(void**)&b->cookie, sizeof *b->cookie},
	    {(void**)&b->x, sizeof *b->x},
	    {(void**)&b->x_lo, sizeof *b->x_lo},
	    {(void**)&b->v, sizeof *b->v},
	    {(void**)&b->q, sizeof *b->q},
	    {(void**)&b->omega, sizeof *b->omega},
	    {(void**)&b->inv_mass, sizeof *b->inv_mass},
	    {(void**)&b->inertia, sizeof *b->inertia},
	    {(void**)&b->principal, sizeof *b->principal},
	    {(void**)&b->center, sizeof *b->center},
	    {(void**)&b->force, sizeof *b->force},
	    {(void**)&b->torque, sizeof *b->torque},
	    {(void**)&b->gravity_scale, sizeof *b->gravity_scale},
	    {(void**)&b->linear_damping, sizeof *b->linear_damping},
	    {(void**)&b->angular_damping, sizeof *b->angular_damping},
	    {(void**)&b->x_step, sizeof *b->x_step},
	    {(void**)&b->x_lo_step, sizeof *b->x_lo_step},
	    {(void**)&b->v_step, sizeof *b->v_step},
	    {(void**)&b->omega_step, sizeof *b->omega_step},
	    {(void**)&b->q_step, sizeof *b->q_step},
	    {(void**)&b->dx, sizeof *b->dx},
	    {(void**)&b->dtheta, sizeof *b->dtheta},
	    {(void**)&b->pose, sizeof *b->pose},
	    {(void**)&b->asleep, sizeof *b->asleep},
	    {(void**)&b->still, sizeof *b->still},
	    {(void**)&b->island, sizeof *b->island},
	};
	if (!pbd_grow_all(&w->mem, items, (int)(sizeof items / sizeof items[0]), b->cap, cap)) return PBD_ERR_OUT_OF_MEMORY;
	b->cap = cap;
	return pbd_nodes_reserve(w);
}

void pbd_bodies_free(pbd_world* w) {
	pbd_bodies* b = &w->bodies;
	const size_t n = b->cap;
	pbd_free(&w->mem, b->type, n * sizeof *b->type);
	pbd_free(&w->mem, b->live, n * sizeof *b->live);
	pbd_free(&w->mem, b->generation, n * sizeof *b->generation);
	pbd_free(&w->mem, b->cookie, n * sizeof *b->cookie);
	pbd_free(&w->mem, b->x, n * sizeof *b->x);
	pbd_free(&w->mem, b->x_lo, n * sizeof *b->x_lo);
	pbd_free(&w->mem, b->v, n * sizeof *b->v);
	pbd_free(&w->mem, b->q, n * sizeof *b->q);
	pbd_free(&w->mem, b->omega, n * sizeof *b->omega);
	pbd_free(&w->mem, b->inv_mass, n * sizeof *b->inv_mass);
	pbd_free(&w->mem, b->inertia, n * sizeof *b->inertia);
	pbd_free(&w->mem, b->principal, n * sizeof *b->principal);
	pbd_free(&w->mem, b->center, n * sizeof *b->center);
	pbd_free(&w->mem, b->force, n * sizeof *b->force);
	pbd_free(&w->mem, b->torque, n * sizeof *b->torque);
	pbd_free(&w->mem, b->gravity_scale, n * sizeof *b->gravity_scale);
	pbd_free(&w->mem, b->linear_damping, n * sizeof *b->linear_damping);
	pbd_free(&w->mem, b->angular_damping, n * sizeof *b->angular_damping);
	pbd_free(&w->mem, b->x_step, n * sizeof *b->x_step);
	pbd_free(&w->mem, b->x_lo_step, n * sizeof *b->x_lo_step);
	pbd_free(&w->mem, b->v_step, n * sizeof *b->v_step);
	pbd_free(&w->mem, b->omega_step, n * sizeof *b->omega_step);
	pbd_free(&w->mem, b->q_step, n * sizeof *b->q_step);
	pbd_free(&w->mem, b->dx, n * sizeof *b->dx);
	pbd_free(&w->mem, b->dtheta, n * sizeof *b->dtheta);
	pbd_free(&w->mem, b->pose, n * sizeof *b->pose);
	pbd_free(&w->mem, b->asleep, n * sizeof *b->asleep);
	pbd_free(&w->mem, b->still, n * sizeof *b->still);
	pbd_free(&w->mem, b->island, n * sizeof *b->island);
	memset(b, 0, sizeof *b);
}

/* x + d as a rounded sum and its exact remainder, per component (as particles.c keeps
 * positions): the centre keeps every bit of a small step far from the origin. */
static inline pbd_real two_sum(pbd_real a, pbd_real b, pbd_real* err) {
	const pbd_real s = a + b;
	const pbd_real bb = s - a;
	*err = (a - (s - bb)) + (b - bb);
	return s;
}
static void move_centre(pbd_vec3* x, pbd_vec3* x_lo, const double d[3]) {
	pbd_real* xs[3] = {&x->x, &x->y, &x->z};
	pbd_real* ls[3] = {&x_lo->x, &x_lo->y, &x_lo->z};
	for (int k = 0; k < 3; ++k) {
		pbd_real e;
		const pbd_real s = two_sum(*xs[k], (pbd_real)((double)*ls[k] + d[k]), &e);
		*xs[k] = s;
		*ls[k] = e;
	}
}

/* The centre of body slot i and its principal orientation for the body frame `pose`. */
static void place(pbd_bodies* b, uint32_t i, pbd_pose pose) {
	const dquat user = dq_unit(dq_of(pose.rotation));
	double c[3], wc[3];
	d3(b->center[i], c);
	dq_rotate(user, c, wc, false);
	const double p[3] = {(double)pose.position.x + wc[0], (double)pose.position.y + wc[1],
	                     (double)pose.position.z + wc[2]};
	b->x[i] = v3(p);
	b->x_lo[i] = pbd_v3((pbd_real)(p[0] - (double)b->x[i].x), (pbd_real)(p[1] - (double)b->x[i].y),
	                    (pbd_real)(p[2] - (double)b->x[i].z));
	b->q[i] = quat_of(dq_unit(dq_mul(user, dq_of(b->principal[i]))));
}

/* ---- checks ------------------------------------------------------------------------------- */

static bool finite3(pbd_vec3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }
static bool finite_q(pbd_quat q) { return isfinite(q.x) && isfinite(q.y) && isfinite(q.z) && isfinite(q.w); }

static pbd_status check_pose(pbd_world* w, const char* fn, pbd_pose p) {
	if (!finite3(p.position)) return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: pose.position is not finite", fn);
	if (!finite_q(p.rotation)) return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: pose.rotation is not finite", fn);
	const dquat r = dq_of(p.rotation);
	const double n = r.x * r.x + r.y * r.y + r.z * r.z + r.w * r.w;
	if (!(n > 1e-12)) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: pose.rotation must not be zero", fn);
	return PBD_OK;
}

/* The def's matter as principal moments and axes; the reason in w's error otherwise. */
static pbd_status check_mass(pbd_world* w, const char* fn, const pbd_mass_properties* m, double d[3], dquat* axes) {
	if (!(m->mass >= 1 / PBD_INV_MASS_MAX && m->mass <= 1 / PBD_INV_MASS_MIN))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: mass.mass must be in [%g, %g] kg for a dynamic body (got %.9g)",
		                fn, 1 / PBD_INV_MASS_MAX, 1 / PBD_INV_MASS_MIN, m->mass);
	for (int k = 0; k < 3; ++k)
		if (!isfinite(m->center[k]) || !((pbd_real)m->center[k] == (pbd_real)m->center[k]) || fabs(m->center[k]) > 1e30)
			return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: mass.center[%d] is not finite (got %.9g)", fn, k, m->center[k]);
	for (int k = 0; k < 6; ++k)
		if (!isfinite(m->inertia[k]))
			return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: mass.inertia[%d] is not finite", fn, k);
	const double* I = m->inertia;
	const double a[3][3] = {{I[0], I[3], I[4]}, {I[3], I[1], I[5]}, {I[4], I[5], I[2]}};
	double v[3][3];
	eigen_sym3(a, d, v);
	const double largest = fmax(d[0], fmax(d[1], d[2]));
	/* stored in pbd_real, and I w^2 / 2 must stay finite at the kinematic speed limits */
	if (!(largest <= PBD_BODY_MAX_INERTIA))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "%s: mass.inertia has a principal moment of %.9g kg m^2, past %g kg m^2", fn, largest,
		                PBD_BODY_MAX_INERTIA);
	for (int k = 0; k < 3; ++k) {
		const double other = d[(k + 1) % 3] + d[(k + 2) % 3];
		if (!(d[k] > 1e-12 * largest) || !(d[k] <= other * (1 + 1e-6)) || !(d[k] >= 1e-30))
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
			                "%s: mass.inertia has principal moments %.9g, %.9g, %.9g kg m^2, which no solid has (each "
			                "must be > 0 and at most the sum of the other two)",
			                fn, d[0], d[1], d[2]);
	}
	*axes = dq_of_matrix(v);
	return PBD_OK;
}

static pbd_status check_velocity(pbd_world* w, const char* fn, pbd_vec3 v, pbd_vec3 omega) {
	if (!finite3(v)) return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: velocity is not finite", fn);
	if (!finite3(omega)) return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: angular_velocity is not finite", fn);
	const pbd_real lv = PBD_MAX_KINEMATIC_SPEED, la = PBD_MAX_KINEMATIC_ANGULAR_SPEED;
	if (PBD_FABS(v.x) > lv || PBD_FABS(v.y) > lv || PBD_FABS(v.z) > lv)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: velocity (%g, %g, %g) passes %g m/s", fn, (double)v.x,
		                (double)v.y, (double)v.z, (double)lv);
	if (PBD_FABS(omega.x) > la || PBD_FABS(omega.y) > la || PBD_FABS(omega.z) > la)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: angular_velocity (%g, %g, %g) passes %g rad/s", fn,
		                (double)omega.x, (double)omega.y, (double)omega.z, (double)la);
	return PBD_OK;
}

static bool nonneg(pbd_real r) { return isfinite(r) && r >= 0; }

static bool unit_q(pbd_quat q) {
	const dquat d = dq_of(q);
	return finite_q(q) && fabs(d.x * d.x + d.y * d.y + d.z * d.z + d.w * d.w - 1) < 1e-4;
}
static bool within(pbd_vec3 v, pbd_real limit) {
	return finite3(v) && PBD_FABS(v.x) <= limit && PBD_FABS(v.y) <= limit && PBD_FABS(v.z) <= limit;
}

const char* pbd_bodies_check(const pbd_world* w, uint32_t i) {
	const pbd_bodies* b = &w->bodies;
	if (b->type[i] > PBD_BODY_DYNAMIC) return "type is not a pbd_body_type";
	if (b->live[i] > 1) return "live flag is not 0 or 1";
	if (!b->live[i]) return NULL; /* a dead slot keeps only its generation */
	if (!finite3(b->x[i]) || !finite3(b->x_lo[i])) return "centre is not finite";
	if (!unit_q(b->q[i]) || !unit_q(b->principal[i])) return "orientation is not a unit quaternion";
	if (!within(b->v[i], PBD_MAX_KINEMATIC_SPEED) || !within(b->omega[i], PBD_MAX_KINEMATIC_ANGULAR_SPEED))
		return "velocity is not finite or past the speed limits";
	if (!within(b->center[i], (pbd_real)1e30)) return "centre of mass in the body's frame is not finite";
	if (!isfinite(b->gravity_scale[i]) || PBD_FABS(b->gravity_scale[i]) > (pbd_real)1e6)
		return "gravity_scale out of range";
	if (!nonneg(b->linear_damping[i]) || !nonneg(b->angular_damping[i])) return "damping is not finite and >= 0";
	const pbd_real big = PBD_REAL_MAX / 4;
	if (!within(b->force[i], big) || !within(b->torque[i], big)) return "force or torque is not finite";
	if (b->type[i] != PBD_BODY_DYNAMIC)
		return b->inv_mass[i] == 0 ? NULL : "a static or kinematic body has an inverse mass";
	if (!((double)b->inv_mass[i] >= PBD_INV_MASS_MIN && (double)b->inv_mass[i] <= PBD_INV_MASS_MAX))
		return "inverse mass out of range";
	const double I[3] = {(double)b->inertia[i].x, (double)b->inertia[i].y, (double)b->inertia[i].z};
	for (int k = 0; k < 3; ++k)
		if (!(I[k] > 0) || !isfinite(I[k]) || !(I[k] <= (I[(k + 1) % 3] + I[(k + 2) % 3]) * (1 + 1e-6)))
			return "principal moments no solid has";
	return NULL;
}

/* ---- the public calls --------------------------------------------------------------------- */

pbd_body_def pbd_body_def_default(void) {
	pbd_body_def d;
	memset(&d, 0, sizeof d);
	d.type = PBD_BODY_STATIC;
	d.pose = pbd_pose_identity();
	d.gravity_scale = 1;
	return d;
}

pbd_body_id pbd_body_create(pbd_world* w, const pbd_body_def* def) {
	const pbd_body_id none = {0, 0};
	if (!w) return none;
	const char* fn = "pbd_body_create";
	if (!def) {
		pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: def is NULL", fn);
		return none;
	}
	if ((int)def->type < PBD_BODY_STATIC || def->type > PBD_BODY_DYNAMIC) {
		pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: type %d is not a pbd_body_type", fn, (int)def->type);
		return none;
	}
	if (check_pose(w, fn, def->pose) != PBD_OK || check_velocity(w, fn, def->velocity, def->angular_velocity) != PBD_OK)
		return none;
	if (def->type == PBD_BODY_STATIC &&
	    (def->velocity.x != 0 || def->velocity.y != 0 || def->velocity.z != 0 || def->angular_velocity.x != 0 ||
	     def->angular_velocity.y != 0 || def->angular_velocity.z != 0)) {
		pbd_fail(w, PBD_ERR_INVALID_ARGUMENT,
		         "%s: a static body does not move: velocity and angular_velocity must be zero", fn);
		return none;
	}
	if (!isfinite(def->gravity_scale) || PBD_FABS(def->gravity_scale) > (pbd_real)1e6) {
		pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: gravity_scale must be finite and within +-1e6 (got %g)", fn,
		         (double)def->gravity_scale);
		return none;
	}
	if (!nonneg(def->linear_damping) || !nonneg(def->angular_damping)) {
		pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: linear_damping and angular_damping must be finite and >= 0 (got %g, %g)",
		         fn, (double)def->linear_damping, (double)def->angular_damping);
		return none;
	}
	double moments[3] = {0, 0, 0};
	dquat axes = {0, 0, 0, 1};
	if (def->type == PBD_BODY_DYNAMIC && check_mass(w, fn, &def->mass, moments, &axes) != PBD_OK) return none;
	pbd_bodies* b = &w->bodies;
	if (b->n == UINT32_MAX - 1 || pbd_bodies_reserve(w, b->n + 1) != PBD_OK) {
		pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %u bodies", fn, b->n + 1);
		return none;
	}
	const uint32_t i = b->n++;
	b->type[i] = (uint8_t)def->type;
	b->live[i] = 1;
	b->generation[i] += 1;
	b->cookie[i] = def->cookie;
	const bool dynamic = def->type == PBD_BODY_DYNAMIC;
	b->inv_mass[i] = dynamic ? (pbd_real)(1 / def->mass.mass) : 0;
	b->inertia[i] = pbd_v3((pbd_real)moments[0], (pbd_real)moments[1], (pbd_real)moments[2]);
	b->principal[i] = quat_of(axes);
	b->center[i] =
	    dynamic ? pbd_v3((pbd_real)def->mass.center[0], (pbd_real)def->mass.center[1], (pbd_real)def->mass.center[2])
	            : pbd_v3(0, 0, 0);
	place(b, i, def->pose);
	b->v[i] = def->velocity;
	b->omega[i] = def->angular_velocity;
	b->force[i] = b->torque[i] = pbd_v3(0, 0, 0);
	b->gravity_scale[i] = def->gravity_scale;
	b->linear_damping[i] = def->linear_damping;
	b->angular_damping[i] = def->angular_damping;
	b->pose[i] = pbd_body_frame(w, i);
	b->asleep[i] = 0;
	b->still[i] = 0;
	b->island[i] = i;
	b->alive += 1;
	w->stats_valid = false;
	const pbd_body_id id = {i + 1, b->generation[i]};
	return id;
}

static uint32_t lookup(const pbd_world* w, pbd_body_id id) {
	if (!w || id.index1 == 0 || id.index1 > w->bodies.n) return UINT32_MAX;
	const uint32_t i = id.index1 - 1;
	return w->bodies.live[i] && w->bodies.generation[i] == id.generation ? i : UINT32_MAX;
}

/* The body of a call, or UINT32_MAX with the reason in the world's error. */
static uint32_t body_of(pbd_world* w, pbd_body_id id, const char* fn) {
	const uint32_t i = lookup(w, id);
	if (i == UINT32_MAX) pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: stale or null body id", fn);
	return i;
}

bool pbd_body_is_valid(const pbd_world* w, pbd_body_id id) { return lookup(w, id) != UINT32_MAX; }

uint32_t pbd_world_body_count(const pbd_world* w) { return w ? w->bodies.alive : 0; }

uint32_t pbd_bodies_slot_of(pbd_world* w, pbd_body_id id, const char* fn) { return body_of(w, id, fn); }

void pbd_bodies_kill(pbd_world* w, uint32_t i) {
	w->bodies.live[i] = 0;
	w->bodies.alive -= 1;
	/* The shapes that rode on it go with it. */
	for (uint32_t k = 0; k < w->nc; ++k)
		if (w->colliders[k].alive && w->colliders[k].body == i + 1) w->colliders[k].alive = false;
	w->stats_valid = false;
	w->rkeep_valid = false; /* its pairs' kept contacts (collision/rigid_contact.c) go too */
}

pbd_status pbd_body_get_state(const pbd_world* w, pbd_body_id id, pbd_body_state* out) {
	if (!w || !out) return PBD_ERR_INVALID_ARGUMENT;
	const uint32_t i = body_of((pbd_world*)w, id, "pbd_body_get_state");
	if (i == UINT32_MAX) return PBD_ERR_INVALID_ARGUMENT;
	const pbd_bodies* b = &w->bodies;
	memset(out, 0, sizeof *out);
	const dquat q = dq_of(b->q[i]);
	const dquat user = dq_unit(dq_mul(q, dq_conj(dq_of(b->principal[i]))));
	double c[3], wc[3];
	d3(b->center[i], c);
	dq_rotate(user, c, wc, false);
	const double x[3] = {(double)b->x[i].x + (double)b->x_lo[i].x, (double)b->x[i].y + (double)b->x_lo[i].y,
	                     (double)b->x[i].z + (double)b->x_lo[i].z};
	const double p[3] = {x[0] - wc[0], x[1] - wc[1], x[2] - wc[2]};
	out->pose.position = v3(p);
	out->pose.rotation = quat_of(user);
	out->center = v3(x);
	out->velocity = b->v[i];
	out->angular_velocity = b->omega[i];
	out->type = (pbd_body_type)b->type[i];
	out->asleep = b->asleep[i] != 0;
	if (b->type[i] == PBD_BODY_DYNAMIC) {
		const double m = 1 / (double)b->inv_mass[i];
		out->mass = m;
		double v[3], om[3], ob[3], lb[3], L[3];
		d3(b->v[i], v);
		d3(b->omega[i], om);
		dq_rotate(q, om, ob, true);
		lb[0] = (double)b->inertia[i].x * ob[0];
		lb[1] = (double)b->inertia[i].y * ob[1];
		lb[2] = (double)b->inertia[i].z * ob[2];
		dq_rotate(q, lb, L, false);
		for (int k = 0; k < 3; ++k) {
			out->momentum[k] = m * v[k];
			out->angular_momentum[k] = L[k];
		}
		out->kinetic_energy =
		    0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + 0.5 * (ob[0] * lb[0] + ob[1] * lb[1] + ob[2] * lb[2]);
	}
	return PBD_OK;
}

pbd_status pbd_body_set_pose(pbd_world* w, pbd_body_id id, pbd_pose pose) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	const char* fn = "pbd_body_set_pose";
	const uint32_t i = body_of(w, id, fn);
	if (i == UINT32_MAX) return PBD_ERR_INVALID_ARGUMENT;
	const pbd_status st = check_pose(w, fn, pose);
	if (st != PBD_OK) return st;
	pbd_bodies_wake(w, i);
	place(&w->bodies, i, pose);
	/* Its shapes jump with it: nothing is swept along the jump. */
	const pbd_pose frame = pbd_body_frame(w, i);
	w->bodies.pose[i] = frame;
	for (uint32_t k = 0; k < w->nc; ++k) {
		pbd_collider* c = &w->colliders[k];
		if (!c->alive || c->body != i + 1) continue;
		c->def.pose.position = pbd_pose_apply(frame, c->local.position);
		c->def.pose.rotation = pbd_quat_mul(frame.rotation, c->local.rotation);
		c->pose0 = c->def.pose;
	}
	w->stats_valid = false;
	return PBD_OK;
}

/* A dynamic body keeps its frame, velocity and angular velocity; its centre and principal axes
 * move inside the frame to where the new matter has them. */
pbd_status pbd_body_set_mass(pbd_world* w, pbd_body_id id, const pbd_mass_properties* mass) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	const char* fn = "pbd_body_set_mass";
	if (!mass) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: mass is NULL", fn);
	const uint32_t i = body_of(w, id, fn);
	if (i == UINT32_MAX) return PBD_ERR_INVALID_ARGUMENT;
	pbd_bodies* b = &w->bodies;
	if (b->type[i] != PBD_BODY_DYNAMIC)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: body %u is not dynamic: only a dynamic body has a mass", fn,
		                id.index1);
	double moments[3];
	dquat axes;
	const pbd_status st = check_mass(w, fn, mass, moments, &axes);
	if (st != PBD_OK) return st;
	pbd_bodies_wake(w, i);
	const pbd_pose frame = pbd_body_frame(w, i);
	b->inv_mass[i] = (pbd_real)(1 / mass->mass);
	b->inertia[i] = pbd_v3((pbd_real)moments[0], (pbd_real)moments[1], (pbd_real)moments[2]);
	b->principal[i] = quat_of(axes);
	b->center[i] = pbd_v3((pbd_real)mass->center[0], (pbd_real)mass->center[1], (pbd_real)mass->center[2]);
	place(b, i, frame);
	b->pose[i] = pbd_body_frame(w, i);
	w->masses_changed = true;
	w->stats_valid = false;
	return PBD_OK;
}

const pbd_pose* pbd_world_body_poses(const pbd_world* w, uint32_t* slots) {
	if (slots) *slots = w ? w->bodies.n : 0;
	return w ? w->bodies.pose : NULL;
}

pbd_body_id pbd_world_body_at(const pbd_world* w, uint32_t slot) {
	pbd_body_id id = {0, 0};
	if (w && slot < w->bodies.n && w->bodies.live[slot]) {
		id.index1 = slot + 1;
		id.generation = w->bodies.generation[slot];
	}
	return id;
}

/* The user frames of the live bodies, as pbd_world_body_poses shows them. */
void pbd_bodies_refresh_poses(pbd_world* w) {
	for (uint32_t i = 0; i < w->bodies.n; ++i)
		if (w->bodies.live[i]) w->bodies.pose[i] = pbd_body_frame(w, i);
}

pbd_status pbd_body_set_velocity(pbd_world* w, pbd_body_id id, pbd_vec3 velocity, pbd_vec3 angular_velocity) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	const char* fn = "pbd_body_set_velocity";
	const uint32_t i = body_of(w, id, fn);
	if (i == UINT32_MAX) return PBD_ERR_INVALID_ARGUMENT;
	if (w->bodies.type[i] == PBD_BODY_STATIC)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: body %u is static and does not move", fn, id.index1);
	const pbd_status st = check_velocity(w, fn, velocity, angular_velocity);
	if (st != PBD_OK) return st;
	pbd_bodies_wake(w, i);
	w->bodies.v[i] = velocity;
	w->bodies.omega[i] = angular_velocity;
	w->stats_valid = false;
	return PBD_OK;
}

/* A kinematic body's centre is its frame's origin (it has no matter), so the frame moves by v dt
 * and turns by the exact rotation w dt of kinematic_substep. Measured from where the body is,
 * so that rounding never gathers along a track. */
pbd_status pbd_body_move_to(pbd_world* w, pbd_body_id id, pbd_pose target) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	const char* fn = "pbd_body_move_to";
	const uint32_t i = body_of(w, id, fn);
	if (i == UINT32_MAX) return PBD_ERR_INVALID_ARGUMENT;
	if (w->bodies.type[i] != PBD_BODY_KINEMATIC)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: body %u is not kinematic", fn, id.index1);
	pbd_status st = check_pose(w, fn, target);
	if (st != PBD_OK) return st;
	const pbd_bodies* b = &w->bodies;
	const double inv_dt = 1 / (double)w->def.dt;
	dquat r = dq_mul(dq_unit(dq_of(target.rotation)), dq_conj(dq_of(b->q[i])));
	if (r.w < 0) r = (dquat){-r.x, -r.y, -r.z, -r.w};
	const double s = sqrt(r.x * r.x + r.y * r.y + r.z * r.z);
	const double k = s > 0 ? 2 * atan2(s, r.w) / s * inv_dt : 2 * inv_dt;
	double v[3];
	v[0] = ((double)target.position.x - ((double)b->x[i].x + (double)b->x_lo[i].x)) * inv_dt;
	v[1] = ((double)target.position.y - ((double)b->x[i].y + (double)b->x_lo[i].y)) * inv_dt;
	v[2] = ((double)target.position.z - ((double)b->x[i].z + (double)b->x_lo[i].z)) * inv_dt;
	const pbd_vec3 vel = v3(v), omega = pbd_v3((pbd_real)(r.x * k), (pbd_real)(r.y * k), (pbd_real)(r.z * k));
	st = check_velocity(w, fn, vel, omega);
	if (st != PBD_OK) return st;
	w->bodies.v[i] = vel;
	w->bodies.omega[i] = omega;
	w->stats_valid = false;
	return PBD_OK;
}

/* The dynamic body of a push in *out, or the refusal with the reason. */
static pbd_status dynamic_of(pbd_world* w, pbd_body_id id, const char* fn, const pbd_vec3* a, const char* what,
                             const pbd_vec3* point, uint32_t* out) {
	const uint32_t i = body_of(w, id, fn);
	if (i == UINT32_MAX) return PBD_ERR_INVALID_ARGUMENT;
	if (w->bodies.type[i] != PBD_BODY_DYNAMIC)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: body %u is not dynamic", fn, id.index1);
	const pbd_real big = PBD_REAL_MAX / 4;
	if (!finite3(*a) || PBD_FABS(a->x) > big || PBD_FABS(a->y) > big || PBD_FABS(a->z) > big)
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: %s (%g, %g, %g) is not finite or too large", fn, what, (double)a->x,
		                (double)a->y, (double)a->z);
	if (point && (!finite3(*point) || PBD_FABS(point->x) > (pbd_real)1e30 || PBD_FABS(point->y) > (pbd_real)1e30 ||
	              PBD_FABS(point->z) > (pbd_real)1e30))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: point is not finite", fn);
	pbd_bodies_wake(w, i);
	*out = i;
	return PBD_OK;
}

/* r x a in double, r from the body's centre to `point`. */
static void moment_of(const pbd_bodies* b, uint32_t i, pbd_vec3 point, pbd_vec3 a, double out[3]) {
	const double r[3] = {(double)point.x - ((double)b->x[i].x + (double)b->x_lo[i].x),
	                     (double)point.y - ((double)b->x[i].y + (double)b->x_lo[i].y),
	                     (double)point.z - ((double)b->x[i].z + (double)b->x_lo[i].z)};
	const double f[3] = {(double)a.x, (double)a.y, (double)a.z};
	out[0] = r[1] * f[2] - r[2] * f[1];
	out[1] = r[2] * f[0] - r[0] * f[2];
	out[2] = r[0] * f[1] - r[1] * f[0];
}

static pbd_vec3 add3(pbd_vec3 a, const double d[3]) {
	return pbd_v3((pbd_real)((double)a.x + d[0]), (pbd_real)((double)a.y + d[1]), (pbd_real)((double)a.z + d[2]));
}

pbd_status pbd_body_apply_force(pbd_world* w, pbd_body_id id, pbd_vec3 force, pbd_vec3 point) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	uint32_t i = 0;
	const pbd_status st = dynamic_of(w, id, "pbd_body_apply_force", &force, "force", &point, &i);
	if (st != PBD_OK) return st;
	pbd_bodies* b = &w->bodies;
	double t[3];
	moment_of(b, i, point, force, t);
	const double f[3] = {(double)force.x, (double)force.y, (double)force.z};
	b->force[i] = add3(b->force[i], f);
	b->torque[i] = add3(b->torque[i], t);
	return PBD_OK;
}

pbd_status pbd_body_apply_torque(pbd_world* w, pbd_body_id id, pbd_vec3 torque) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	uint32_t i = 0;
	const pbd_status st = dynamic_of(w, id, "pbd_body_apply_torque", &torque, "torque", NULL, &i);
	if (st != PBD_OK) return st;
	const double t[3] = {(double)torque.x, (double)torque.y, (double)torque.z};
	w->bodies.torque[i] = add3(w->bodies.torque[i], t);
	return PBD_OK;
}

pbd_status pbd_body_apply_impulse(pbd_world* w, pbd_body_id id, pbd_vec3 impulse, pbd_vec3 point) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	uint32_t i = 0;
	pbd_status st = dynamic_of(w, id, "pbd_body_apply_impulse", &impulse, "impulse", &point, &i);
	if (st != PBD_OK) return st;
	pbd_bodies* b = &w->bodies;
	const double im = (double)b->inv_mass[i];
	const double dv[3] = {im * (double)impulse.x, im * (double)impulse.y, im * (double)impulse.z};
	double t[3], tb[3], wb[3], dw[3];
	moment_of(b, i, point, impulse, t);
	const dquat q = dq_of(b->q[i]);
	dq_rotate(q, t, tb, true);
	wb[0] = tb[0] / (double)b->inertia[i].x;
	wb[1] = tb[1] / (double)b->inertia[i].y;
	wb[2] = tb[2] / (double)b->inertia[i].z;
	dq_rotate(q, wb, dw, false);
	const pbd_vec3 v = add3(b->v[i], dv), om = add3(b->omega[i], dw);
	st = check_velocity(w, "pbd_body_apply_impulse", v, om);
	if (st != PBD_OK) return st;
	b->v[i] = v;
	b->omega[i] = om;
	w->stats_valid = false;
	return PBD_OK;
}

void pbd_body_point(const pbd_world* w, uint32_t i, pbd_vec3 local, double out[3]) {
	const pbd_bodies* b = &w->bodies;
	const dquat user = dq_unit(dq_mul(dq_of(b->q[i]), dq_conj(dq_of(b->principal[i]))));
	const double l[3] = {(double)local.x - (double)b->center[i].x, (double)local.y - (double)b->center[i].y,
	                     (double)local.z - (double)b->center[i].z};
	double r[3];
	dq_rotate(user, l, r, false);
	out[0] = ((double)b->x[i].x + (double)b->x_lo[i].x) + r[0];
	out[1] = ((double)b->x[i].y + (double)b->x_lo[i].y) + r[1];
	out[2] = ((double)b->x[i].z + (double)b->x_lo[i].z) + r[2];
}

pbd_pose pbd_body_frame(const pbd_world* w, uint32_t i) {
	const pbd_bodies* b = &w->bodies;
	const dquat user = dq_unit(dq_mul(dq_of(b->q[i]), dq_conj(dq_of(b->principal[i]))));
	double c[3], wc[3];
	d3(b->center[i], c);
	dq_rotate(user, c, wc, false);
	const double p[3] = {(double)b->x[i].x + (double)b->x_lo[i].x - wc[0],
	                     (double)b->x[i].y + (double)b->x_lo[i].y - wc[1],
	                     (double)b->x[i].z + (double)b->x_lo[i].z - wc[2]};
	pbd_pose pose;
	pose.position = v3(p);
	pose.rotation = quat_of(user);
	return pose;
}

typedef struct corrections_stage {
	pbd_bodies* b;
	uint32_t size; /* slots per block */
	bool lanes;    /* AVX2 (bodies_simd.h) */
	pbd_real h;
} corrections_stage;

static bool takes_correction(const pbd_bodies* b, uint32_t i) {
	if (!b->live[i] || !pbd_body_moves(b, i)) return false;
	const pbd_vec3 dx = b->dx[i], dt = b->dtheta[i];
	return !(dx.x == 0 && dx.y == 0 && dx.z == 0 && dt.x == 0 && dt.y == 0 && dt.z == 0);
}

/* Each body takes its own corrections: blocks of slots on the world's threads, the same bits on
 * any number of them. */
static void corrections_block(void* p, uint32_t block, uint32_t worker) {
	(void)worker;
	const corrections_stage* s = (const corrections_stage*)p;
	pbd_bodies* b = s->b;
	const pbd_real h = s->h;
	const uint32_t first = block * s->size, end = pbd_block_end(first, b->n, s->size);
	for (uint32_t i = first; i < end; ++i) {
#ifdef PBD_HAVE_AVX2
		if (s->lanes && end - i >= 4 && takes_correction(b, i) && takes_correction(b, i + 1) &&
		    takes_correction(b, i + 2) && takes_correction(b, i + 3)) {
			pbd_bodies_corrections_avx2(b, i, h);
			i += 3;
			continue;
		}
#endif
		if (!takes_correction(b, i)) continue;
		const pbd_vec3 dx = b->dx[i], dt = b->dtheta[i];
		double d[3];
		d3(dx, d);
		move_centre(&b->x[i], &b->x_lo[i], d);
		/* q += (dtheta, 0) q / 2, normalised: the small rotation of the corrections. */
		const dquat q = dq_of(b->q[i]);
		const dquat spin = {(double)dt.x / 2, (double)dt.y / 2, (double)dt.z / 2, 0};
		const dquat dq = dq_mul(spin, q);
		b->q[i] = quat_of(dq_unit((dquat){q.x + dq.x, q.y + dq.y, q.z + dq.z, q.w + dq.w}));
		b->v[i] = pbd_v3_add(b->v[i], pbd_v3_scale(dx, 1 / h));
		b->omega[i] = pbd_v3_add(b->omega[i], pbd_v3_scale(dt, 1 / h));
		b->dx[i] = b->dtheta[i] = pbd_v3(0, 0, 0);
	}
}

void pbd_bodies_apply_corrections(pbd_world* w, pbd_real h) {
	pbd_bodies* b = &w->bodies;
	if (b->n == 0) return;
	corrections_stage s = {b, w->exec.block_particles, w->simd_lanes, h};
	pbd_exec_stage(&w->exec, corrections_block, &s, pbd_blocks(b->n, s.size));
}

/* ---- the step ----------------------------------------------------------------------------- */

void pbd_bodies_energy(const pbd_world* w, double* kinetic, double* potential, double momentum[3], double angular[3]) {
	const pbd_bodies* b = &w->bodies;
	const double g[3] = {(double)w->def.gravity.x, (double)w->def.gravity.y, (double)w->def.gravity.z};
	for (uint32_t i = 0; i < b->n; ++i) {
		if (!b->live[i] || b->type[i] != PBD_BODY_DYNAMIC) continue;
		const double m = 1 / (double)b->inv_mass[i], gs = (double)b->gravity_scale[i];
		double v[3], om[3], ob[3];
		d3(b->v[i], v);
		d3(b->omega[i], om);
		dq_rotate(dq_of(b->q[i]), om, ob, true);
		const double x[3] = {(double)b->x[i].x + (double)b->x_lo[i].x, (double)b->x[i].y + (double)b->x_lo[i].y,
		                     (double)b->x[i].z + (double)b->x_lo[i].z};
		*kinetic += 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) +
		            0.5 * ((double)b->inertia[i].x * ob[0] * ob[0] + (double)b->inertia[i].y * ob[1] * ob[1] +
		                   (double)b->inertia[i].z * ob[2] * ob[2]);
		*potential -= m * gs * (g[0] * x[0] + g[1] * x[1] + g[2] * x[2]);
		for (int k = 0; k < 3; ++k) momentum[k] += m * v[k];
		/* about the origin: the spin R I R^T w, then the centre's orbit x * m v */
		const double lb[3] = {(double)b->inertia[i].x * ob[0], (double)b->inertia[i].y * ob[1],
		                      (double)b->inertia[i].z * ob[2]};
		double spin[3];
		dq_rotate(dq_of(b->q[i]), lb, spin, false);
		for (int k = 0; k < 3; ++k) {
			const int a = (k + 1) % 3, c = (k + 2) % 3;
			angular[k] += spin[k] + m * (x[a] * v[c] - x[c] * v[a]);
		}
	}
}

void pbd_bodies_recount(pbd_world* w) {
	w->bodies.alive = 0;
	for (uint32_t i = 0; i < w->bodies.n; ++i) w->bodies.alive += w->bodies.live[i];
}

uint32_t pbd_bodies_dynamic(const pbd_world* w) {
	uint32_t n = 0;
	for (uint32_t i = 0; i < w->bodies.n; ++i) n += w->bodies.live[i] && w->bodies.type[i] == PBD_BODY_DYNAMIC;
	return n;
}

void pbd_bodies_begin_step(pbd_world* w) {
	pbd_bodies* b = &w->bodies;
	if (b->n == 0) return;
	memcpy(b->x_step, b->x, b->n * sizeof *b->x);
	memcpy(b->x_lo_step, b->x_lo, b->n * sizeof *b->x_lo);
	memcpy(b->v_step, b->v, b->n * sizeof *b->v);
	memcpy(b->omega_step, b->omega, b->n * sizeof *b->omega);
	memcpy(b->q_step, b->q, b->n * sizeof *b->q);
}

/* A kinematic body: its centre moves by v h, its orientation turns by the exact rotation w h. */
static void kinematic_substep(pbd_bodies* b, uint32_t i, double h) {
	double v[3], om[3];
	d3(b->v[i], v);
	d3(b->omega[i], om);
	const double d[3] = {v[0] * h, v[1] * h, v[2] * h};
	move_centre(&b->x[i], &b->x_lo[i], d);
	const double a = sqrt(om[0] * om[0] + om[1] * om[1] + om[2] * om[2]) * h;
	if (a > 0) {
		const double s = sin(a / 2) / (a / h);
		const dquat turn = {om[0] * s, om[1] * s, om[2] * s, cos(a / 2)};
		b->q[i] = quat_of(dq_unit(dq_mul(turn, dq_of(b->q[i]))));
	}
}

static void dynamic_substep(pbd_bodies* b, uint32_t i, double h, double damping, const double g[3]) {
	const double im = (double)b->inv_mass[i], gs = (double)b->gravity_scale[i];
	const double lin = damping / (1 + h * (double)b->linear_damping[i]);
	const double ang = damping / (1 + h * (double)b->angular_damping[i]);
	double v[3], f[3];
	d3(b->v[i], v);
	d3(b->force[i], f);
	for (int k = 0; k < 3; ++k) v[k] = (v[k] + h * (g[k] * gs + f[k] * im)) * lin;
	const double d[3] = {v[0] * h, v[1] * h, v[2] * h};
	move_centre(&b->x[i], &b->x_lo[i], d);
	b->v[i] = v3(v);

	/* Euler's equations in the principal axes by the implicit midpoint rule: the midpoint
	 * velocity w_m = (w0 + w1) / 2 satisfies F(w1) = I (w1 - w0) - h (tau - w_m x I w_m) = 0,
	 * found by Newton's method. A fixed-point iteration is a contraction only while h |w| times
	 * the spread of the moments stays below about 1: a light rod spun up by a heavy body on a
	 * chain passed that at 500 rad/s and its iterates grew to 1e10 rad/s. Should Newton not
	 * converge either, the step keeps the speed about each axis and drops the gyroscopic turn for
	 * that substep (w1 = w0 + h tau / I), which adds no energy. */
	const dquat q = dq_of(b->q[i]);
	double om[3], t[3], w0[3], tb[3];
	d3(b->omega[i], om);
	d3(b->torque[i], t);
	dq_rotate(q, om, w0, true);
	dq_rotate(q, t, tb, true);
	const double I[3] = {(double)b->inertia[i].x, (double)b->inertia[i].y, (double)b->inertia[i].z};
	double w1[3] = {w0[0], w0[1], w0[2]}, wm[3];
	/* equal moments: w x I w vanishes, and the rule is exact at once */
	bool converged = I[0] == I[1] && I[1] == I[2];
	if (converged)
		for (int k = 0; k < 3; ++k) w1[k] = w0[k] + h * tb[k] / I[k];
	for (int it = 0; it < 16 && !converged; ++it) {
		for (int k = 0; k < 3; ++k) wm[k] = (w0[k] + w1[k]) / 2;
		const double L[3] = {I[0] * wm[0], I[1] * wm[1], I[2] * wm[2]};
		const double gyro[3] = {wm[1] * L[2] - wm[2] * L[1], wm[2] * L[0] - wm[0] * L[2], wm[0] * L[1] - wm[1] * L[0]};
		double F[3];
		for (int k = 0; k < 3; ++k) F[k] = I[k] * (w1[k] - w0[k]) - h * (tb[k] - gyro[k]);
		/* dF/dw1 = I + h/2 (skew(w_m) I - skew(I w_m)): the derivative of w_m x I w_m is
		 * skew(w_m) I - skew(I w_m), and w_m moves by half of w1 */
		const double c = h / 2;
		double J[3][3] = {{I[0], c * (-wm[2] * I[1] + L[2]), c * (wm[1] * I[2] - L[1])},
		                  {c * (wm[2] * I[0] - L[2]), I[1], c * (-wm[0] * I[2] + L[0])},
		                  {c * (-wm[1] * I[0] + L[1]), c * (wm[0] * I[1] - L[0]), I[2]}};
		const double det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) -
		                   J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
		                   J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
		if (!(fabs(det) > 0) || !isfinite(det)) break;
		/* Cramer's rule for the 3 x 3 step */
		double dw[3];
		for (int k = 0; k < 3; ++k) {
			double M[3][3];
			memcpy(M, J, sizeof M);
			for (int r = 0; r < 3; ++r) M[r][k] = F[r];
			dw[k] =
			    (M[0][0] * (M[1][1] * M[2][2] - M[1][2] * M[2][1]) - M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0]) +
			     M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0])) /
			    det;
		}
		double change = 0, size = 0;
		for (int k = 0; k < 3; ++k) {
			w1[k] -= dw[k];
			change = fmax(change, fabs(dw[k]));
			size = fmax(size, fabs(w1[k]));
		}
		converged = !(change > 1e-14 * size) && isfinite(size);
	}
	if (!converged)
		for (int k = 0; k < 3; ++k) w1[k] = w0[k] + h * tb[k] / I[k];
	for (int k = 0; k < 3; ++k) wm[k] = (w0[k] + w1[k]) / 2;
	const dquat turn = dq_unit((dquat){wm[0] * h / 2, wm[1] * h / 2, wm[2] * h / 2, 1});
	const dquat q1 = dq_unit(dq_mul(q, turn));
	double out[3];
	for (int k = 0; k < 3; ++k) w1[k] *= ang;
	dq_rotate(q1, w1, out, false);
	b->q[i] = quat_of(q1);
	b->omega[i] = v3(out);
}

/* A substep's motion of the bodies, in blocks of slots on the world's threads: each body moves
 * alone, so any split gives the same bits. */
typedef struct substep_stage {
	pbd_bodies* b;
	uint32_t size; /* slots per block */
	bool lanes;    /* AVX2 (bodies_simd.h) */
	double h, damping, g[3];
} substep_stage;

#ifdef PBD_HAVE_AVX2
/* Slots [i, i + 4) take the lanes' substep: live, dynamic, awake, three equal moments. */
static bool dynamic_fits(const pbd_bodies* b, uint32_t i) {
	for (uint32_t k = i; k < i + 4; ++k) {
		const pbd_vec3 m = b->inertia[k];
		if (!b->live[k] || !pbd_body_moves(b, k) || m.x != m.y || m.y != m.z) return false;
	}
	return true;
}
#endif

static void substep_block(void* p, uint32_t block, uint32_t worker) {
	(void)worker;
	const substep_stage* s = (const substep_stage*)p;
	pbd_bodies* b = s->b;
	const uint32_t first = block * s->size, end = pbd_block_end(first, b->n, s->size);
	memset(b->dx + first, 0, (end - first) * sizeof *b->dx);
	memset(b->dtheta + first, 0, (end - first) * sizeof *b->dtheta);
	for (uint32_t i = first; i < end; ++i) {
#ifdef PBD_HAVE_AVX2
		if (s->lanes && end - i >= 4 && dynamic_fits(b, i)) {
			pbd_bodies_dynamic_avx2(b, i, s->h, s->damping, s->g);
			i += 3;
			continue;
		}
#endif
		if (!b->live[i]) continue;
		if (b->type[i] == PBD_BODY_DYNAMIC && !b->asleep[i])
			dynamic_substep(b, i, s->h, s->damping, s->g);
		else if (b->type[i] == PBD_BODY_KINEMATIC)
			kinematic_substep(b, i, s->h);
	}
}

void pbd_bodies_substep(pbd_world* w, pbd_real h, pbd_real damping) {
	pbd_bodies* b = &w->bodies;
	if (b->n == 0) return;
	substep_stage s = {b, w->exec.block_particles, w->simd_lanes, (double)h, (double)damping, {0, 0, 0}};
	s.g[0] = (double)w->def.gravity.x, s.g[1] = (double)w->def.gravity.y, s.g[2] = (double)w->def.gravity.z;
	pbd_exec_stage(&w->exec, substep_block, &s, pbd_blocks(b->n, s.size));
}

uint32_t pbd_bodies_end_step(pbd_world* w) {
	pbd_bodies* b = &w->bodies;
	uint32_t bad = 0;
	for (uint32_t i = 0; i < b->n; ++i) {
		b->force[i] = b->torque[i] = pbd_v3(0, 0, 0);
		if (!b->live[i] ||
		    (finite3(b->x[i]) && finite3(b->x_lo[i]) && finite3(b->v[i]) && finite3(b->omega[i]) && finite_q(b->q[i])))
			continue;
		b->x[i] = b->x_step[i];
		b->x_lo[i] = b->x_lo_step[i];
		b->v[i] = b->v_step[i];
		b->omega[i] = b->omega_step[i];
		b->q[i] = b->q_step[i];
		pbd_warning_stat* ws = &w->warnings[PBD_WARN_NONFINITE];
		if (ws->count == 0)
			pbd_log(w, "pbd_world_step: body %u became non-finite at step %llu; its step was undone", i + 1,
			        (unsigned long long)w->steps + 1);
		ws->count += 1;
		bad += 1;
	}
	pbd_bodies_refresh_poses(w);
	return bad;
}

/* ---- sleeping (world/sleep.c decides; these wake and put to sleep) ------------------------- */

static void set_island(pbd_bodies* b, uint32_t island, bool asleep) {
	for (uint32_t k = 0; k < b->n; ++k) {
		if (!b->live[k] || b->type[k] != PBD_BODY_DYNAMIC || b->island[k] != island || b->asleep[k] == asleep) continue;
		b->asleep[k] = asleep;
		b->still[k] = 0;
		if (asleep) b->v[k] = b->omega[k] = pbd_v3(0, 0, 0);
	}
}

void pbd_bodies_wake(pbd_world* w, uint32_t i) {
	pbd_bodies* b = &w->bodies;
	b->still[i] = 0;
	if (b->asleep[i]) set_island(b, b->island[i], false);
}

pbd_status pbd_body_set_asleep(pbd_world* w, pbd_body_id id, bool asleep) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	const char* fn = "pbd_body_set_asleep";
	const uint32_t i = body_of(w, id, fn);
	if (i == UINT32_MAX) return PBD_ERR_INVALID_ARGUMENT;
	pbd_bodies* b = &w->bodies;
	if (b->type[i] != PBD_BODY_DYNAMIC)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: body %u is not dynamic", fn, id.index1);
	if (asleep)
		set_island(b, b->island[i], true);
	else
		pbd_bodies_wake(w, i);
	w->stats_valid = false;
	return PBD_OK;
}
