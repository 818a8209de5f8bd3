/* Implicit (backward) Euler, linearised once per substep (Baraff and Witkin 1998, seed 004):
 * with K = -df/dx (the rows' Gauss-Newton stiffness plus the clamped transverse part, positive
 * semi-definite) and D = -df/dv = beta K_GN (the rows' damping),
 *   (M + h D + h^2 K) dv = h (f - h K v),
 * solved matrix-free by conjugate gradients with the 3x3 diagonal blocks of the matrix as the
 * preconditioner. Pinned particles are left out of the system (their rows and columns are
 * filtered to the identity), so it stays symmetric positive definite. The air's drag, linear in
 * the velocity, is implicit too: its matrix D_air (forces.c) joins the damping. */
#include <string.h>

#include "methods/integrate.h"
#include "model/world.h"

static inline pbd_vec3 sym3_mul(const pbd_sym3* k, pbd_vec3 v) {
	return pbd_v3(k->xx * v.x + k->xy * v.y + k->xz * v.z, k->xy * v.x + k->yy * v.y + k->yz * v.z,
	              k->xz * v.x + k->yz * v.y + k->zz * v.z);
}

/* out = A x over the free particles; the air's drag joins the damping (h D_air). */
static void apply(const pbd_world* w, pbd_real cg, pbd_real ct, pbd_real h, const pbd_vec3* x, pbd_vec3* out) {
	for (uint32_t i = 0; i < w->np; ++i) out[i] = pbd_v3(0, 0, 0);
	pbd_rows_mul(&w->integ->rows, cg, ct, x, out);
	for (uint32_t i = 0; i < w->np; ++i) {
		const pbd_real iw = w->w[i];
		if (!(iw > 0)) {
			out[i] = pbd_v3(0, 0, 0);
			continue;
		}
		out[i] = pbd_v3_add(out[i], pbd_v3_scale(x[i], 1 / iw));
		if (w->air_on) out[i] = pbd_v3_add(out[i], pbd_v3_scale(sym3_mul(&w->air_drag[i], x[i]), h));
	}
}

static double dot(const pbd_world* w, const pbd_vec3* a, const pbd_vec3* b) {
	double s = 0;
	for (uint32_t i = 0; i < w->np; ++i)
		s += (double)a[i].x * (double)b[i].x + (double)a[i].y * (double)b[i].y + (double)a[i].z * (double)b[i].z;
	return s;
}

/* Inverts each symmetric positive definite 3x3 block in place (by cofactors); a block that is
 * not invertible (a pinned particle's zero block) becomes 0, which the filter makes harmless. */
static void invert_blocks(pbd_world* w) {
	for (uint32_t i = 0; i < w->np; ++i) {
		pbd_real* out = w->integ->diag + (size_t)i * 9;
		double a[9];
		for (int k = 0; k < 9; ++k) a[k] = (double)out[k];
		const double c00 = a[4] * a[8] - a[5] * a[7], c01 = a[5] * a[6] - a[3] * a[8], c02 = a[3] * a[7] - a[4] * a[6];
		const double det = a[0] * c00 + a[1] * c01 + a[2] * c02;
		if (!(det > 0) || !(w->w[i] > 0)) {
			for (int k = 0; k < 9; ++k) out[k] = 0;
			continue;
		}
		const double id = 1 / det;
		const double inv[9] = {c00, a[2] * a[7] - a[1] * a[8], a[1] * a[5] - a[2] * a[4],
		                       c01, a[0] * a[8] - a[2] * a[6], a[2] * a[3] - a[0] * a[5],
		                       c02, a[1] * a[6] - a[0] * a[7], a[0] * a[4] - a[1] * a[3]};
		for (int k = 0; k < 9; ++k) out[k] = (pbd_real)(inv[k] * id);
	}
}

static void precondition(const pbd_world* w, const pbd_vec3* r, pbd_vec3* z) {
	for (uint32_t i = 0; i < w->np; ++i) {
		const pbd_real* m = w->integ->diag + (size_t)i * 9;
		const pbd_vec3 v = r[i];
		z[i] = pbd_v3(m[0] * v.x + m[1] * v.y + m[2] * v.z, m[3] * v.x + m[4] * v.y + m[5] * v.z,
		              m[6] * v.x + m[7] * v.y + m[8] * v.z);
	}
}

void pbd_implicit_solve(pbd_world* w, const pbd_step_ctx* ctx) {
	pbd_integrator* in = w->integ;
	const pbd_real h = ctx->h;
	/* A = M + cg K_GN + ct K_geo: damping joins the Gauss-Newton part, the transverse part is
	 * elastic only. */
	const pbd_real cg = h * w->def.stiffness_damping + h * h, ct = h * h;
	const uint32_t n = w->np;

	/* b = h (f - h K v), into r; K v with the elastic part of the stiffness only. */
	for (uint32_t i = 0; i < n; ++i) in->ad[i] = pbd_v3(0, 0, 0);
	pbd_rows_mul(&in->rows, 1, 1, w->v, in->ad);
	for (uint32_t i = 0; i < n; ++i) {
		in->r[i] = w->w[i] > 0 ? pbd_v3_scale(pbd_v3_sub(in->f[i], pbd_v3_scale(in->ad[i], h)), h) : pbd_v3(0, 0, 0);
		in->dv[i] = pbd_v3(0, 0, 0);
	}
	memset(in->diag, 0, (size_t)n * 9 * sizeof *in->diag);
	pbd_rows_diag(&in->rows, cg, ct, in->diag);
	for (uint32_t i = 0; i < n; ++i) {
		if (!(w->w[i] > 0)) continue;
		pbd_real* d = in->diag + (size_t)i * 9;
		for (int k = 0; k < 9; k += 4) d[k] += 1 / w->w[i];
		if (w->air_on) {
			const pbd_sym3* a = &w->air_drag[i];
			d[0] += h * a->xx, d[4] += h * a->yy, d[8] += h * a->zz;
			d[1] += h * a->xy, d[3] += h * a->xy;
			d[2] += h * a->xz, d[6] += h * a->xz;
			d[5] += h * a->yz, d[7] += h * a->yz;
		}
	}
	invert_blocks(w);

	const double bb = dot(w, in->r, in->r);
	double rel = 0;
	uint32_t it = 0;
	if (bb > 0) {
		const double stop = (double)w->def.linear_tolerance * (double)w->def.linear_tolerance * bb;
		precondition(w, in->r, in->z);
		memcpy(in->d, in->z, (size_t)n * sizeof *in->d);
		double rz = dot(w, in->r, in->z);
		double rr = bb;
		const uint32_t max_it = (uint32_t)w->def.iterations;
		while (it < max_it && rr > stop) {
			apply(w, cg, ct, h, in->d, in->ad);
			const double dad = dot(w, in->d, in->ad);
			if (!(dad > 0)) break; /* the direction vanished: nothing more to gain */
			const pbd_real alpha = (pbd_real)(rz / dad);
			for (uint32_t i = 0; i < n; ++i) {
				in->dv[i] = pbd_v3_add(in->dv[i], pbd_v3_scale(in->d[i], alpha));
				in->r[i] = pbd_v3_sub(in->r[i], pbd_v3_scale(in->ad[i], alpha));
			}
			++it;
			rr = dot(w, in->r, in->r);
			precondition(w, in->r, in->z);
			const double rz_new = dot(w, in->r, in->z);
			const pbd_real beta = rz > 0 ? (pbd_real)(rz_new / rz) : 0;
			rz = rz_new;
			for (uint32_t i = 0; i < n; ++i) in->d[i] = pbd_v3_add(in->z[i], pbd_v3_scale(in->d[i], beta));
		}
		rel = sqrt(rr / bb);
	}
	if (rel > in->residual) in->residual = rel;
	if (it > in->cg_iterations) in->cg_iterations = it;
}
