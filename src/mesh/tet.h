/* Geometry of one tetrahedron, shared by the tetrahedral families and the tet mesh builders. */
#ifndef PBD_TET_INTERNAL_H
#define PBD_TET_INTERNAL_H

#include "core/core.h"

/* What a tetrahedron (a, b, c, d) is, by the sign of 6 V = (b - a) x (c - a) . (d - a). */
typedef enum pbd_tet_shape {
	PBD_TET_POSITIVE = 0, /* V > 0 */
	PBD_TET_INVERTED,     /* V < 0: the vertices are listed in the other orientation */
	PBD_TET_DEGENERATE,   /* flat, collapsed or not finite: |6 V| <= rel * (longest edge)^3 */
	PBD_TET_TOO_LARGE     /* the volume would overflow the scalar in the projection's products */
} pbd_tet_shape;

/* |6 V| below this fraction of the longest edge cubed is noise of the scalar, not a volume: a
 * regular tetrahedron has 0.71, a Kuhn cell tetrahedron 0.19. */
#ifdef PBD_DOUBLE
#define PBD_TET_DEGENERATE_REL 1e-12
#else
#define PBD_TET_DEGENERATE_REL 1e-6
#endif

/* Classifies (a, b, c, d) and gives its signed volume in m^3 (when not degenerate or too large).
 * Computed in double on the halved edges scaled by a power of two (both exact), so that no
 * coordinates, however large, overflow, and a caller running with floating-point traps can ask
 * about any input. "Too large" keeps (longest edge)^3 a factor 2^8 below the scalar's maximum,
 * so the cross and triple products of the projections stay finite. */
static inline pbd_tet_shape pbd_tet_classify(pbd_vec3 a, pbd_vec3 b, pbd_vec3 c, pbd_vec3 d, double* volume) {
	const pbd_vec3 v[3] = {b, c, d};
	double e[3][3];
	double m = 0;
	for (int i = 0; i < 3; ++i) {
		e[i][0] = 0.5 * (double)v[i].x - 0.5 * (double)a.x;
		e[i][1] = 0.5 * (double)v[i].y - 0.5 * (double)a.y;
		e[i][2] = 0.5 * (double)v[i].z - 0.5 * (double)a.z;
		for (int k = 0; k < 3; ++k) {
			if (!(fabs(e[i][k]) <= DBL_MAX)) return PBD_TET_DEGENERATE; /* NaN or inf */
			m = fmax(m, fabs(e[i][k]));
		}
	}
	if (!(m > 0)) return PBD_TET_DEGENERATE;
	const int ex = -ilogb(m); /* scaled components lie in [-2, 2) */
	for (int i = 0; i < 3; ++i)
		for (int k = 0; k < 3; ++k) e[i][k] = ldexp(e[i][k], ex);
	double l2 = 0;
	for (int i = 0; i < 3; ++i) {
		const int j = (i + 1) % 3;
		const double s0 = e[i][0] * e[i][0] + e[i][1] * e[i][1] + e[i][2] * e[i][2];
		const double dx = e[j][0] - e[i][0], dy = e[j][1] - e[i][1], dz = e[j][2] - e[i][2];
		const double s1 = dx * dx + dy * dy + dz * dz;
		l2 = fmax(l2, fmax(s0, s1));
	}
	const double cx = e[1][1] * e[2][2] - e[1][2] * e[2][1], cy = e[1][2] * e[2][0] - e[1][0] * e[2][2],
	             cz = e[1][0] * e[2][1] - e[1][1] * e[2][0];
	const double six = e[0][0] * cx + e[0][1] * cy + e[0][2] * cz; /* 6 V of the scaled halves */
	const double lmax = sqrt(l2);
	if (!(fabs(six) > PBD_TET_DEGENERATE_REL * l2 * lmax)) return PBD_TET_DEGENERATE;
	/* The true longest edge is 2 lmax 2^-ex; its cube must stay below PBD_REAL_MAX / 2^8. */
	const int lexp = 3 * (1 - ex) + 3 * ilogb(lmax) + 3;
	if (lexp >= ilogb((double)PBD_REAL_MAX) - 8) return PBD_TET_TOO_LARGE;
	/* A volume that the scalar holds only as a subnormal number (edges below about 1e-10 m in
	 * float) is not one the projections can work with either. */
	const int vexp = 3 - 3 * ex + ilogb(six);
	if (vexp < ilogb((double)PBD_REAL_MIN_NORMAL) + 24) return PBD_TET_DEGENERATE;
	if (volume) *volume = ldexp(six, 3 - 3 * ex) / 6.0;
	return six > 0 ? PBD_TET_POSITIVE : PBD_TET_INVERTED;
}

/* Below this fraction of its rest scale a gradient is treated as zero: the tetrahedron has
 * collapsed (to a line or a point), and a projection along what is left of the gradient would
 * move its particles by the rest size over this fraction. Such a constraint is skipped until
 * its neighbours open it again. */
#define PBD_TET_COLLAPSE_REL 1e-3

/* The floor of the squared-gradient threshold, far above the scalar's smallest normal numbers, so
 * that C / (sum of squared gradients) cannot overflow for any tetrahedron however small. */
#define PBD_TET_GRAD2_FLOOR ((double)PBD_REAL_MIN_NORMAL * 1e8)

/* Bounds of the TetGen reader (defaults: the PBD_TETGEN_MAX_* of pbd.h). Tests shrink them to
 * reach the limits without large files. */
typedef struct pbd_tetgen_limits {
	size_t max_line;    /* bytes of one line, its end of line not counted */
	uint64_t max_bytes; /* bytes of one file; below 2^32, so line numbers fit 32 bits */
	uint32_t max_points, max_tets;
} pbd_tetgen_limits;

pbd_tetgen_limits pbd_tetgen_limits_default(void);
pbd_status pbd_tetgen_load(const char* node_path, const char* ele_path, const pbd_tetgen_limits* lim, pbd_mesh* out,
                           pbd_error* err);
pbd_status pbd_tetgen_load_memory(const char* node_text, size_t node_size, const char* ele_text, size_t ele_size,
                                  const char* name, const pbd_tetgen_limits* lim, pbd_mesh* out, pbd_error* err);

#endif
