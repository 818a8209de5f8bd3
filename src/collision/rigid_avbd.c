/* Augmented vertex block descent for the bodies' contacts (PBD_BODY_SOLVER_AVBD; Giles, Diaz and
 * Yuksel 2025, "Augmented Vertex Block Descent"; docs/collision.md, "Solvers for body contacts").
 *
 * Each substep minimises, body by body with the others held, the body's inertia about its
 * prediction plus the energy of its contacts:
 *   G(d) = 1/2 d^T (M / h^2) d + sum_rows (k C(d)^2 / 2 + lambda C(d)),
 * d = (dx, dtheta) the contacts' share of the body's correction (the other families' corrections
 * are the body's too, but their forces are theirs), M = diag(m, m, m, I) in world axes. Each row
 * is linearised where the step's search made it: C = c + J_p d_p + J_s d_s, the normal row's c the
 * separation at the prediction, its J (n, r x n) at the feature's end and the negative at the
 * other; the friction rows' c the points' tangential motion over the substep at the prediction,
 * along each of two tangents. A body's step is the Newton step of G in its six coordinates,
 * d <- d - H^-1 grad G with H = M / h^2 + sum k J J^T, solved by LDL^T; the rows' forces are
 * f = k C + lambda clamped, the normal to a push (f <= 0), friction to the cone mu |f_n|. After
 * each sweep the rows take their forces as multipliers, lambda <- f, and a row whose force the
 * clamp did not stop stiffens by its error, k <- k + beta k0 |C| (the augmented Lagrangian: C
 * goes to 0 with a finite k). The penalty starts at the inertia of the row's heavier end along
 * it (pen_start), and the multipliers are carried from substep to substep and step to step as the
 * soft step's impulses are (pbd_rigid_c.pn, pt = -lambda h).
 *
 * Old error is the paper's stabilisation: of the overlap C0 a contact had when the substep began,
 * AVBD_ALPHA is left (C' = C - alpha min(C0, 0)), so that pushing it out does not come back as a
 * burst of velocity. Velocities come from the pose change (the shared stage); restitution gives
 * back e times the closing speed after the step's last substep.
 *
 * The bodies are coloured so that no two bodies of a colour share a contact: a colour's bodies
 * step side by side on the world's threads, each reading only the other colours', and the result
 * is the same on any number of threads. The contacts, found at the step's first substep, are
 * moved with their bodies by the later ones (rigid_soft.c, as the soft step's). */
#include <math.h>
#include <string.h>

#include "collision/rigid_contact.h"
#include "core/task.h"

/* Of the overlap a contact had when its substep began, the share that substep leaves (the paper's
 * alpha): the 20-layer pyramid at 4 substeps of 4 sweeps sank 2.5 mm in 5 s with 0.99, 5.6 cm with
 * 0.95. The penalty grows by AVBD_BETA times its start per metre of error that is left and stays
 * below AVBD_PEN_MAX times its start; the multipliers are carried whole (the paper decays them by
 * gamma = 0.99 per step: that let the pyramid sink 4.2 mm, not 2.5), the penalty is carried
 * through the step and starts again at the next. A steeper ramp (100 and more) makes the rows so
 * much stiffer than the bodies' inertia that a stack of 20 cubes flew apart at 4 x 2 and sank
 * 0.5 cm at 4 x 4 (0.85 mm with 1). */
#define AVBD_ALPHA   PBD_R(0.99)
#define AVBD_BETA    PBD_R(1.0)
#define AVBD_PEN_MAX PBD_R(1e4)
#define AVBD_COLOURS 63u
#define AVBD_BLOCK   16u

/* I v for body slot i in world axes, from its principal moments and axes. */
static pbd_vec3 inertia_times(const pbd_bodies* b, uint32_t i, pbd_vec3 v) {
	const pbd_vec3 m = b->inertia[i];
	if (m.x == m.y && m.y == m.z) return pbd_v3_scale(v, m.x);
	const pbd_quat q = b->q[i];
	pbd_vec3 l = pbd_quat_rotate(pbd_quat_conj(q), v);
	l = pbd_v3(l.x * m.x, l.y * m.y, l.z * m.z);
	return pbd_quat_rotate(q, l);
}

/* The penalty's start for a contact: the inertia along it of its heavier moving end, each end's
 * scaled up by how much heavier than it the heaviest body it touches is (ravbd_load), so that the
 * row holds that end and what it carries within a few sweeps. Scaled by the lighter end alone, a
 * cube of 8 g under one of 8 kg took its floor contacts hundreds of sweeps to carry the load: it
 * sank 5 cm into the floor and was thrown out at 35 m/s. */
static pbd_real pen_start(const pbd_world* w, const pbd_rigid_c* k, pbd_real inv_h2) {
	pbd_real k0 = 0;
	if (k->wp > 0) k0 = w->ravbd_load[k->p - 1] / k->wp;
	if (k->ws > 0) k0 = PBD_FMAX(k0, w->ravbd_load[k->s - 1] / k->ws);
	return k0 * inv_h2;
}

/* The normal row's value: the separation now less the share of the substep's old overlap that is
 * left. */
static pbd_real normal_c(const pbd_rigid_c* k, pbd_vec3 apart) {
	return k->sep + pbd_v3_dot(k->n, apart) - AVBD_ALPHA * PBD_FMIN(k->c0, 0);
}

/* The friction rows' values: the points' tangential motion over the substep so far (apart: what
 * the corrections moved them apart). */
static void tangent_c(const pbd_world* w, const pbd_rigid_c* k, pbd_real h, pbd_vec3 apart, pbd_real ct[2]) {
	const pbd_vec3 rel = pbd_v3_add(pbd_v3_scale(pbd_rigid_relative_velocity(w, k), h), apart);
	ct[0] = pbd_v3_dot(rel, k->t[0]);
	ct[1] = pbd_v3_dot(rel, k->t[1]);
}

/* The rows' forces at their values: the normal push (<= 0) and friction within the cone, mu_s
 * while it holds and mu_k once it slides. */
static pbd_real normal_force(const pbd_rigid_c* k, pbd_real c, pbd_real inv_h) {
	return PBD_FMIN(k->kn * c - k->pn * inv_h, 0);
}

static void friction_force(const pbd_rigid_c* k, pbd_real fn, const pbd_real ct[2], pbd_real inv_h, pbd_real f[2],
                           bool* held) {
	const pbd_real lt[2] = {-pbd_v3_dot(k->pt, k->t[0]) * inv_h, -pbd_v3_dot(k->pt, k->t[1]) * inv_h};
	f[0] = k->kt * ct[0] + lt[0];
	f[1] = k->kt * ct[1] + lt[1];
	const pbd_real size = PBD_SQRT(f[0] * f[0] + f[1] * f[1]);
	*held = !(size > -k->mu_s * fn);
	if (!*held) {
		const pbd_real s = size > 0 ? -k->mu_k * fn / size : 0;
		f[0] *= s, f[1] *= s;
	}
}

/* H += k J J^T and g += J f for the row J = (a, b) (linear, angular) of a body, H packed as the
 * lower triangle of the symmetric 6 x 6 matrix, row by row. */
static void add_row(double H[21], double g[6], pbd_vec3 a, pbd_vec3 b, pbd_real k, pbd_real f) {
	const double j[6] = {(double)a.x, (double)a.y, (double)a.z, (double)b.x, (double)b.y, (double)b.z};
	int e = 0;
	for (int r = 0; r < 6; ++r) {
		g[r] += j[r] * (double)f;
		for (int c = 0; c <= r; ++c) H[e++] += (double)k * j[r] * j[c];
	}
}

/* Solves H x = g by LDL^T (H packed as in add_row); false when H is not positive definite to
 * rounding. */
static bool solve6(const double H[21], const double g[6], double x[6]) {
	double L[6][6], D[6];
	int e = 0;
	double A[6][6];
	for (int r = 0; r < 6; ++r)
		for (int c = 0; c <= r; ++c) A[r][c] = A[c][r] = H[e++];
	for (int j = 0; j < 6; ++j) {
		double d = A[j][j];
		for (int k = 0; k < j; ++k) d -= L[j][k] * L[j][k] * D[k];
		if (!(d > 1e-12 * A[j][j]) || !(d > 0)) return false;
		D[j] = d;
		L[j][j] = 1;
		for (int i = j + 1; i < 6; ++i) {
			double s = A[i][j];
			for (int k = 0; k < j; ++k) s -= L[i][k] * L[j][k] * D[k];
			L[i][j] = s / d;
		}
	}
	double y[6];
	for (int i = 0; i < 6; ++i) {
		double s = g[i];
		for (int k = 0; k < i; ++k) s -= L[i][k] * y[k];
		y[i] = s;
	}
	for (int i = 5; i >= 0; --i) {
		double s = y[i] / D[i];
		for (int k = i + 1; k < 6; ++k) s -= L[k][i] * x[k];
		x[i] = s;
	}
	return true;
}

/* One body's block step (slot i): its inertia about the prediction and its contacts' rows. */
static void body_step(pbd_world* w, uint32_t i, pbd_real h) {
	pbd_bodies* b = &w->bodies;
	if (!pbd_body_moves(b, i)) return;
	const pbd_real inv_h = 1 / h, inv_h2 = inv_h * inv_h;
	const pbd_real m = 1 / b->inv_mass[i];
	const pbd_vec3 cdx = w->ravbd_d[2 * i], cdt = w->ravbd_d[2 * i + 1];
	double H[21] = {0}, g[6];
	/* the inertia: m / h^2 on the centre, I / h^2 on the turn (world axes) */
	const pbd_vec3 e[3] = {pbd_v3(1, 0, 0), pbd_v3(0, 1, 0), pbd_v3(0, 0, 1)};
	pbd_vec3 Ie[3];
	for (int a = 0; a < 3; ++a) Ie[a] = inertia_times(b, i, e[a]);
	for (int r = 0; r < 3; ++r) H[r * (r + 1) / 2 + r] = (double)(m * inv_h2);
	for (int r = 0; r < 3; ++r)
		for (int c = 0; c <= r; ++c) {
			const pbd_real v = r == 0 ? Ie[c].x : r == 1 ? Ie[c].y : Ie[c].z;
			H[(r + 3) * (r + 4) / 2 + c + 3] = (double)(v * inv_h2);
		}
	const pbd_vec3 It = inertia_times(b, i, cdt);
	g[0] = (double)(m * inv_h2 * cdx.x), g[1] = (double)(m * inv_h2 * cdx.y), g[2] = (double)(m * inv_h2 * cdx.z);
	g[3] = (double)(It.x * inv_h2), g[4] = (double)(It.y * inv_h2), g[5] = (double)(It.z * inv_h2);
	const uint32_t* list = w->ravbd_list;
	for (uint32_t q = w->ravbd_first[i]; q < w->ravbd_first[i + 1]; ++q) {
		const pbd_rigid_c* k = &w->rcon[list[q]];
		const bool on_p = k->p == i + 1 && k->wp > 0;
		const pbd_real sign = on_p ? 1 : -1;
		const pbd_vec3 r = on_p ? k->rp : k->rs;
		const pbd_vec3 apart = pbd_rigid_moved_apart(w, k);
		const pbd_real c = normal_c(k, apart);
		const pbd_real fn = normal_force(k, c, inv_h);
		if (!(fn < 0)) continue;
		add_row(H, g, pbd_v3_scale(k->n, sign), pbd_v3_scale(pbd_v3_cross(r, k->n), sign), k->kn, fn);
		if (!(k->mu_s > 0)) continue;
		pbd_real ct[2], ft[2];
		bool held;
		tangent_c(w, k, h, apart, ct);
		friction_force(k, fn, ct, inv_h, ft, &held);
		for (int a = 0; a < 2; ++a)
			add_row(H, g, pbd_v3_scale(k->t[a], sign), pbd_v3_scale(pbd_v3_cross(r, k->t[a]), sign), k->kt, ft[a]);
	}
	double x[6];
	if (!solve6(H, g, x)) return;
	const pbd_vec3 dl = pbd_v3((pbd_real)-x[0], (pbd_real)-x[1], (pbd_real)-x[2]);
	const pbd_vec3 da = pbd_v3((pbd_real)-x[3], (pbd_real)-x[4], (pbd_real)-x[5]);
	w->ravbd_d[2 * i] = pbd_v3_add(cdx, dl);
	w->ravbd_d[2 * i + 1] = pbd_v3_add(cdt, da);
	b->dx[i] = pbd_v3_add(b->dx[i], dl);
	b->dtheta[i] = pbd_v3_add(b->dtheta[i], da);
}

/* After a sweep: each row takes its force as its multiplier, and stiffens by what is left of its
 * error unless the clamp holds it. */
static void dual_update(pbd_world* w, pbd_rigid_c* k, pbd_real h) {
	const pbd_real inv_h = 1 / h;
	const pbd_real k0 = pen_start(w, k, inv_h * inv_h);
	if (!(k0 > 0)) return;
	const pbd_vec3 apart = pbd_rigid_moved_apart(w, k);
	const pbd_real c = normal_c(k, apart);
	const pbd_real fn = normal_force(k, c, inv_h);
	k->c_end = c + AVBD_ALPHA * PBD_FMIN(k->c0, 0);
	k->pn = -fn * h;
	if (fn < 0) k->kn = PBD_FMIN(k->kn + AVBD_BETA * k0 * PBD_FABS(c), AVBD_PEN_MAX * k0);
	if (!(k->mu_s > 0)) return;
	pbd_real ct[2], ft[2];
	bool held;
	tangent_c(w, k, h, apart, ct);
	friction_force(k, fn, ct, inv_h, ft, &held);
	k->pt = pbd_v3_scale(pbd_v3_add(pbd_v3_scale(k->t[0], ft[0]), pbd_v3_scale(k->t[1], ft[1])), -h);
	if (held && fn < 0)
		k->kt = PBD_FMIN(k->kt + AVBD_BETA * k0 * PBD_SQRT(ct[0] * ct[0] + ct[1] * ct[1]), AVBD_PEN_MAX * k0);
}

/* Each body with contacts a colour, greedily in slot order (no two bodies of a colour share a
 * contact; those that find none of the first AVBD_COLOURS free take the last one, stepped in
 * turn), its contacts listed in their order, and the bodies by colour. False when out of memory. */
static bool colour_bodies(pbd_world* w) {
	const uint32_t nb = w->bodies.n, n = w->nrc;
	if (!pbd_grow_to(&w->mem, (void**)&w->ravbd_first, sizeof *w->ravbd_first, &w->cap_ravbd_first, 3 * nb + 1) ||
	    !pbd_grow_to(&w->mem, (void**)&w->ravbd_list, sizeof *w->ravbd_list, &w->cap_ravbd_list, 2 * n + 1) ||
	    !pbd_grow_to(&w->mem, (void**)&w->ravbd_d, sizeof *w->ravbd_d, &w->cap_ravbd_d, 2 * nb) ||
	    !pbd_grow_to(&w->mem, (void**)&w->ravbd_load, sizeof *w->ravbd_load, &w->cap_ravbd_load, nb))
		return false;
	/* each body's heaviest contact partner's mass over its own, at least 1 */
	const pbd_real* inv_mass = w->bodies.inv_mass;
	for (uint32_t i = 0; i < nb; ++i) w->ravbd_load[i] = 1;
	for (uint32_t q = 0; q < n; ++q) {
		const pbd_rigid_c* k = &w->rcon[q];
		if (!(k->wp > 0) || !(k->ws > 0)) continue;
		const uint32_t a = k->p - 1, b = k->s - 1;
		w->ravbd_load[a] = PBD_FMAX(w->ravbd_load[a], inv_mass[a] / inv_mass[b]);
		w->ravbd_load[b] = PBD_FMAX(w->ravbd_load[b], inv_mass[b] / inv_mass[a]);
	}
	uint32_t *first = w->ravbd_first, *order = first + nb + 1, *colour = order + nb;
	memset(first, 0, (nb + 1) * sizeof *first);
	for (uint32_t q = 0; q < n; ++q) {
		const pbd_rigid_c* k = &w->rcon[q];
		if (k->wp > 0) first[k->p]++;
		if (k->ws > 0) first[k->s]++;
	}
	for (uint32_t i = 0; i < nb; ++i) first[i + 1] += first[i];
	memcpy(colour, first, nb * sizeof *colour); /* each body's next free place, for now */
	for (uint32_t q = 0; q < n; ++q) {
		const pbd_rigid_c* k = &w->rcon[q];
		if (k->wp > 0) w->ravbd_list[colour[k->p - 1]++] = q;
		if (k->ws > 0) w->ravbd_list[colour[k->s - 1]++] = q;
	}
	uint32_t* cf = w->ravbd_colour_first;
	memset(w->ravbd_colour_first, 0, sizeof w->ravbd_colour_first);
	for (uint32_t i = 0; i < nb; ++i) colour[i] = UINT32_MAX;
	for (uint32_t i = 0; i < nb; ++i) {
		if (first[i + 1] == first[i]) continue;
		uint64_t taken = 0;
		for (uint32_t q = first[i]; q < first[i + 1]; ++q) {
			const pbd_rigid_c* k = &w->rcon[w->ravbd_list[q]];
			const uint32_t other = k->p == i + 1 ? (k->ws > 0 ? k->s : 0) : (k->wp > 0 ? k->p : 0);
			if (other && colour[other - 1] < AVBD_COLOURS) taken |= UINT64_C(1) << colour[other - 1];
		}
		uint32_t c = 0;
		while (c < AVBD_COLOURS && (taken >> c & 1)) ++c;
		colour[i] = c;
		cf[c + 1]++;
	}
	for (uint32_t c = 0; c <= AVBD_COLOURS; ++c) cf[c + 1] += cf[c];
	uint32_t at[AVBD_COLOURS + 1];
	memcpy(at, cf, sizeof at);
	for (uint32_t i = 0; i < nb; ++i)
		if (colour[i] != UINT32_MAX) order[at[colour[i]]++] = i;
	return true;
}

typedef enum avbd_pass { PASS_PRIMAL, PASS_DUAL } avbd_pass;

typedef struct avbd_stage {
	pbd_world* w;
	const uint32_t* list; /* the colour's bodies, or NULL: the contacts */
	uint32_t count, block;
	pbd_real h;
	avbd_pass pass;
} avbd_stage;

static void avbd_block(void* ctx, uint32_t block, uint32_t worker) {
	(void)worker;
	const avbd_stage* s = (const avbd_stage*)ctx;
	const uint32_t first = block * s->block, end = pbd_block_end(first, s->count, s->block);
	for (uint32_t q = first; q < end; ++q) {
		if (s->pass == PASS_PRIMAL)
			body_step(s->w, s->list[q], s->h);
		else
			dual_update(s->w, &s->w->rcon[q], s->h);
	}
}

static pbd_real substep_of(const pbd_world* w) { return w->def.dt / (pbd_real)w->nsub; }

/* A substep's start, its contacts moved to the prediction: each row's old overlap, its penalty
 * from its start at the step's first substep, and the contacts' share of each body's correction
 * zero. */
static void start_substep(pbd_world* w, bool first) {
	const pbd_real h = substep_of(w), inv_h2 = 1 / (h * h);
	for (uint32_t q = 0; q < w->nrc; ++q) {
		pbd_rigid_c* k = &w->rcon[q];
		const pbd_vec3 rel = pbd_rigid_relative_velocity(w, k);
		const pbd_real vn = pbd_v3_dot(k->n, rel);
		k->c0 = k->sep - h * vn;
		if (k->pstep == 0) k->vn0 = PBD_FMIN(k->vn0, vn);
		if (first) k->kn = k->kt = pen_start(w, k, inv_h2);
		/* the carried friction on this contact's tangent plane */
		const pbd_real p0 = pbd_v3_dot(k->pt, k->t[0]), p1 = pbd_v3_dot(k->pt, k->t[1]);
		k->pt = pbd_v3_add(pbd_v3_scale(k->t[0], p0), pbd_v3_scale(k->t[1], p1));
	}
	memset(w->ravbd_d, 0, 2 * (size_t)w->bodies.n * sizeof *w->ravbd_d);
}

bool pbd_avbd_begin(pbd_world* w) {
	if (!colour_bodies(w) || !pbd_soft_remember(w)) return false;
	start_substep(w, true);
	return true;
}

void pbd_avbd_advance(pbd_world* w) {
	pbd_soft_move(w);
	start_substep(w, false);
}

void pbd_avbd_solve(pbd_world* w) {
	const uint32_t nb = w->bodies.n;
	const uint32_t* order = w->ravbd_first + nb + 1;
	avbd_stage s = {w, NULL, 0, AVBD_BLOCK, substep_of(w), PASS_PRIMAL};
	for (uint32_t c = 0; c <= AVBD_COLOURS; ++c) {
		s.list = order + w->ravbd_colour_first[c];
		s.count = w->ravbd_colour_first[c + 1] - w->ravbd_colour_first[c];
		if (s.count == 0) continue;
		/* the last colour's bodies may share contacts: one block, in turn */
		s.block = c < AVBD_COLOURS ? AVBD_BLOCK : s.count;
		pbd_exec_stage(&w->exec, avbd_block, &s, pbd_blocks(s.count, s.block));
	}
	s.pass = PASS_DUAL, s.list = NULL, s.count = w->nrc, s.block = 4 * AVBD_BLOCK;
	pbd_exec_stage(&w->exec, avbd_block, &s, pbd_blocks(s.count, s.block));
}

/* After the step's last substep, as the soft step: a contact that closed in (it pushed) at a speed
 * past `slow` leaves at e times that speed, contact by contact in order. */
static void restitution(pbd_world* w, pbd_rigid_c* k, pbd_real slow) {
	const pbd_real wsum = k->wp + k->ws;
	if (!(k->e > 0) || !(k->vn0 < -slow) || !(k->pstep > 0) || !(wsum > 0)) return;
	const pbd_vec3 rel = pbd_rigid_relative_velocity(w, k);
	const pbd_real vn = pbd_v3_dot(k->n, rel);
	const pbd_real dp = PBD_FMAX(-(vn + k->e * k->vn0) / wsum, 0);
	if (dp > 0) pbd_rigid_impulse(w, k, k->n, k->wp, k->ip, k->ws, k->is, dp);
}

void pbd_avbd_velocities(pbd_world* w, pbd_real h, pbd_real slow) {
	const bool last = w->rsub >= (uint32_t)w->nsub;
	for (uint32_t q = 0; q < w->nrc; ++q) {
		pbd_rigid_c* k = &w->rcon[q];
		k->pstep += k->pn;
		if (last) restitution(w, k, slow);
		/* what the API and the contact events read, as under the soft step (c_end: the
		 * separation after the last sweep) */
		k->dn = k->pn * (k->wp + k->ws) * h;
		k->sep = k->c_end - k->dn;
	}
	pbd_soft_keep(w);
}
