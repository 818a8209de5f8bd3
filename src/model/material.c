/* Physical cloth materials: presets, validation and the mapping to spring constants, XPBD
 * compliance and PBD stiffness. The derivations and the source of every preset value are in
 * docs/methods.md, "Physical materials".
 *
 * Every function classifies its inputs (isnan, isinf) before comparing them, computes in double
 * and forms its products with power_product, so that no result is NaN and, with float inputs, no
 * input raises an invalid-operation, division-by-zero or overflow exception (the tests trap
 * them): a result beyond the scalar's range becomes +infinity explicitly. */
#include <string.h>

#include "pbd/material.h"

#include "core/core.h"

/* ---- presets ---------------------------------------------------------------------------- */

typedef struct preset {
	const char* name;
	double density, stretch, shear, bending;
} preset;

/* Values and their derivations: docs/methods.md, "Presets". The fabrics are measurements of
 * Wang, O'Brien and Ramamoorthi 2011 (W, the ArcSim material file named), taken as ArcSim
 * evaluates them; rubber is a 1 mm sheet from MatWeb's natural rubber data. */
static const preset presets[] = {
    {"cotton", 0.276, 108.0, 83.18, 9.810e-6},            /* W: ivory-rib-knit */
    {"cotton_polyester", 0.220, 4051.0, 104.8, 3.135e-5}, /* W: royal-target */
    {"denim", 0.324, 1219.0, 53.39, 2.014e-5},            /* W: 11oz-black-denim */
    {"polyester", 0.128, 4030.0, 19.19, 1.037e-5},        /* W: white-dots-on-blk */
    {"rubber", 0.950, 1500.0, 500.0, 1.667e-4},           /* E = 3 G = 1.5 MPa, t = 1 mm */
};
#define PRESET_COUNT (sizeof presets / sizeof presets[0])

uint32_t pbd_cloth_material_preset_count(void) { return (uint32_t)PRESET_COUNT; }

const char* pbd_cloth_material_preset_name(uint32_t index) { return index < PRESET_COUNT ? presets[index].name : NULL; }

pbd_status pbd_cloth_material_preset(const char* name, pbd_cloth_material* out, pbd_error* err) {
	const char* fn = "pbd_cloth_material_preset";
	if (!name || !out) return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "%s: NULL argument", fn);
	for (size_t i = 0; i < PRESET_COUNT; ++i)
		if (strcmp(name, presets[i].name) == 0) {
			out->density = (pbd_real)presets[i].density;
			out->stretch = (pbd_real)presets[i].stretch;
			out->shear = (pbd_real)presets[i].shear;
			out->bending = (pbd_real)presets[i].bending;
			return PBD_OK;
		}
	char known[160];
	size_t used = 0;
	known[0] = '\0';
	for (size_t i = 0; i < PRESET_COUNT; ++i) {
		size_t len = strlen(presets[i].name);
		if (used + len + 3 > sizeof known) break;
		if (i) {
			memcpy(known + used, ", ", 2);
			used += 2;
		}
		memcpy(known + used, presets[i].name, len + 1);
		used += len;
	}
	return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "%s: unknown material \"%.60s\" (known: %s)", fn, name, known);
}

/* ---- validation ------------------------------------------------------------------------- */

/* A modulus may be +infinity (rigid), never NaN or negative. `positive` also refuses 0. */
static pbd_status check_modulus(pbd_real v, const char* field, bool positive, pbd_error* err) {
	const char* fn = "pbd_cloth_material_check";
	if (isnan(v)) return pbd_fail_err(err, PBD_ERR_NOT_FINITE, "%s: %s is NaN", fn, field);
	if (positive ? !(v > 0) : !(v >= 0))
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "%s: %s must be %s (got %.9g)", fn, field,
		                    positive ? "> 0" : ">= 0", (double)v);
	return PBD_OK;
}

pbd_status pbd_cloth_material_check(const pbd_cloth_material* m, pbd_error* err) {
	const char* fn = "pbd_cloth_material_check";
	if (!m) return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "%s: material is NULL", fn);
	if (!isfinite(m->density))
		return pbd_fail_err(err, PBD_ERR_NOT_FINITE, "%s: density is not finite (got %.9g)", fn, (double)m->density);
	if (!(m->density > 0))
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "%s: density must be > 0 kg/m^2 (got %.9g)", fn,
		                    (double)m->density);
	pbd_status st = check_modulus(m->stretch, "stretch", true, err);
	if (st == PBD_OK) st = check_modulus(m->shear, "shear", false, err);
	if (st == PBD_OK) st = check_modulus(m->bending, "bending", false, err);
	return st;
}

/* ---- arithmetic helpers ----------------------------------------------------------------- */

/* A double result as the scalar, +infinity beyond its range (never an overflowing conversion). */
static pbd_real to_real(double v) {
	if (isnan(v) || !(v > 0)) return 0;
	if (v > (double)PBD_REAL_MAX) return (pbd_real)INFINITY;
	return (pbd_real)v;
}

/* A length or area argument: finite and >= 0. */
static bool nonneg_finite(pbd_real v) { return isfinite(v) && v >= 0; }

/* The material passes pbd_cloth_material_check. */
static bool valid(const pbd_cloth_material* m) { return m && pbd_cloth_material_check(m, NULL) == PBD_OK; }

/* The product of v[i]^p[i] for positive finite v[i]. The mantissas (in [0.5, 1)) multiply and
 * the binary exponents add as integers, so no intermediate overflows or underflows: a result
 * beyond the double range saturates to +infinity or 0 without raising an exception, and a 0
 * times an infinity (a NaN) cannot arise. */
static double power_product(int n, const double* v, const int* p) {
	double m = 1;
	long e = 0;
	for (int i = 0; i < n; ++i) {
		int ei;
		const double mi = frexp(v[i], &ei);
		for (int j = 0; j < p[i]; ++j) m *= mi;
		for (int j = 0; j < -p[i]; ++j) m /= mi;
		e += (long)p[i] * ei;
	}
	int em;
	m = frexp(m, &em);
	e += em;
	if (e > DBL_MAX_EXP) return (double)INFINITY;
	if (e < DBL_MIN_EXP - DBL_MANT_DIG) return 0;
	return ldexp(m, (int)e);
}

/* k = M A / L^2 for a modulus M in [0, inf] and A, L finite >= 0: the spring that alone stores
 * the energy M e^2 A / 2 of a band of material of area A strained by e along the edge. No
 * material (M or A zero) wins over a zero length; a zero length or an infinite modulus is rigid. */
static double spring(double M, double A, double L) {
	if (M == 0 || A == 0) return 0;
	if (isinf(M) || L == 0) return (double)INFINITY;
	const double v[3] = {M, A, L};
	const int p[3] = {1, 1, -2};
	return power_product(3, v, p);
}

/* m * q for m in [0, inf] and q positive finite; 0 stays 0. */
static double times(double m, double q) {
	if (m == 0) return 0;
	if (isinf(m)) return m;
	const double v[2] = {m, q};
	const int p[2] = {1, 1};
	return power_product(2, v, p);
}

/* ---- spring constants ------------------------------------------------------------------- */

pbd_status pbd_cloth_grid_springs(const pbd_cloth_material* m, pbd_real du, pbd_real dv, int diagonals,
                                  pbd_grid_springs* out, pbd_error* err) {
	const char* fn = "pbd_cloth_grid_springs";
	if (!out) return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
	memset(out, 0, sizeof *out);
	pbd_status st = pbd_cloth_material_check(m, err);
	if (st != PBD_OK) return st;
	if (!isfinite(du) || !isfinite(dv))
		return pbd_fail_err(err, PBD_ERR_NOT_FINITE, "%s: cell size %.9g x %.9g is not finite", fn, (double)du,
		                    (double)dv);
	if (!(du > 0) || !(dv > 0))
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "%s: cell size %.9g x %.9g must be > 0", fn, (double)du,
		                    (double)dv);
	if (diagonals < 0 || diagonals > 2)
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "%s: diagonals must be 0, 1 or 2 (got %d)", fn, diagonals);
	const double Y = (double)m->stretch, G = (double)m->shear, a = (double)du, b = (double)dv;
	/* An interior structural edge along u carries the two half cells beside it, area a b, so
	 * k = M a b / a^2 = M b / a for the modulus M its springs must supply. */
	double Mu = Y, Mv = Y;
	if (diagonals == 2 && G > 0 && !isinf(Y)) {
		/* The two diagonals add G a^2/b^2 to C11 (G b^2/a^2 to C22) and make C12 = G, so the
		 * structural springs supply C - G a^2/b^2, where C - G^2/C = Y: uniaxial tension with free
		 * lateral contraction then meets Y along either axis. */
		if (isinf(G)) {
			/* The limit of C - G r^2 as G grows: C - G -> Y/2, so the sign of 1 - r^2 decides. */
			Mu = a == b ? Y / 2 : (a < b ? (double)INFINITY : 0);
			Mv = a == b ? Y / 2 : (b < a ? (double)INFINITY : 0);
		} else {
			const double hy = Y / 2;
			const double c_minus_g = hy + hy * (hy / (hypot(hy, G) + G)); /* C - G without cancellation */
			const double ru = a / b, rv = b / a;
			Mu = a == b ? c_minus_g : c_minus_g + G * (1 - ru * ru);
			Mv = a == b ? c_minus_g : c_minus_g + G * (1 - rv * rv);
			if (!(Mu > 0)) Mu = 0;
			if (!(Mv > 0)) Mv = 0;
		}
	}
	out->structural_u = to_real(times(Mu, b / a));
	out->structural_v = to_real(times(Mv, a / b));
	/* A shear strain gamma stretches each diagonal by gamma a b / d^2; n diagonals store the
	 * cell's G gamma^2 a b / 2 when k = G d^2 / (n a b) = G (a/b + b/a) / n. */
	if (diagonals > 0) out->shear = to_real(times(G, (a / b + b / a) / diagonals));
	return PBD_OK;
}

pbd_real pbd_cloth_mesh_edge_stiffness(const pbd_cloth_material* m, pbd_real rest, pbd_real area) {
	if (!valid(m) || !nonneg_finite(rest) || !nonneg_finite(area)) return 0;
	return to_real(spring((double)m->stretch, (double)area, (double)rest));
}

pbd_real pbd_cloth_hinge_stiffness(const pbd_cloth_material* m, pbd_real length, pbd_real area1, pbd_real area2) {
	if (!valid(m) || !nonneg_finite(length) || !nonneg_finite(area1) || !nonneg_finite(area2)) return 0;
	const double B = (double)m->bending, L = (double)length, A = (double)area1 + (double)area2;
	if (B == 0 || L == 0 || A == 0 || isinf(A)) return 0;
	if (isinf(B)) return (pbd_real)INFINITY;
	const double v[3] = {B, L, A};
	const int p[3] = {1, 2, -1};
	return to_real(power_product(3, v, p));
}

pbd_real pbd_cloth_flexion_stiffness(const pbd_cloth_material* m, pbd_real spacing, pbd_real width, pbd_real angle) {
	if (!valid(m) || !nonneg_finite(spacing) || !nonneg_finite(width) || !isfinite(angle)) return 0;
	const double B = (double)m->bending, a = (double)spacing, w = (double)width, t = (double)angle;
	/* pi as the scalar rounds it (up, in float), so that an angle of pi is accepted */
	if (!(t > 0) || t > (double)(pbd_real)3.14159265358979323846 || a == 0 || w == 0 || B == 0) return 0;
	if (isinf(B)) return (pbd_real)INFINITY;
	/* Kinked by t, the two structural edges of length a leave a chord 2 a cos(t/2): the spring
	 * shortens by d = 2 a (1 - cos(t/2)) = 4 a sin^2(t/4), and k d^2 / 2 = B (t / a)^2 a w / 2,
	 * the plate's energy over the kinked vertex's share a w. */
	const double s = sin(t / 4);
	if (!(s > 0)) return (pbd_real)INFINITY; /* t so small that t/4 underflows: the limit */
	const double v[6] = {B, w, t, a, s, 2};
	const int p[6] = {1, 1, 2, -3, -4, -4}; /* B w t^2 / (16 a^3 s^4) */
	return to_real(power_product(6, v, p));
}

/* ---- formulations ----------------------------------------------------------------------- */

pbd_real pbd_material_compliance(pbd_real k) {
	if (isnan(k) || !(k > 0)) return (pbd_real)INFINITY;
	if (isinf(k)) return 0;
	const double v[1] = {(double)k};
	const int p[1] = {-1};
	return to_real(power_product(1, v, p));
}

pbd_real pbd_material_pbd_stiffness(pbd_real k, pbd_real inv_mass_sum, pbd_real h) {
	if (isnan(k) || isnan(inv_mass_sum) || isnan(h)) return 0;
	if (!(k >= 0) || !(inv_mass_sum >= 0) || !(h >= 0)) return 0;
	if (k == 0 || inv_mass_sum == 0 || h == 0) return isinf(k) ? 1 : 0;
	if (isinf(k) || isinf(inv_mass_sum) || isinf(h)) return 1;
	/* x = W h^2 / alpha = W h^2 k */
	const double v[3] = {(double)inv_mass_sum, (double)h, (double)k};
	const int p[3] = {1, 2, 1};
	const double x = power_product(3, v, p);
	if (isinf(x)) return 1;
	return (pbd_real)(x / (1 + x));
}
