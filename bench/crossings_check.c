/* The collision rows' quality checks (crossings.h) on inputs whose answers are known: two squares
 * of two triangles each, one passing through the other and one clear of it; a strip folded back
 * over itself without touching; a crumpled grid counted both through the grid and by brute
 * force; and particles against a plane, a sphere and a box. Exits 0 when every count is right. */
#include "crossings.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int failures;

static void expect(const char* what, uint32_t got, uint32_t want) {
	if (got == want) return;
	fprintf(stderr, "crossings_check: %s: %u, expected %u\n", what, got, want);
	++failures;
}

static uint32_t count(const char* what, const double* xyz, uint32_t nv, const uint32_t* tri, uint32_t nt,
                      uint32_t* brute) {
	col_crossings c;
	if (!col_crossings_init(&c, tri, nt, nv)) {
		fprintf(stderr, "crossings_check: %s: col_crossings_init failed\n", what);
		++failures;
		return UINT32_MAX;
	}
	const uint32_t n = col_count_crossings(&c, xyz);
	const uint32_t b = col_count_crossings_brute(&c, xyz);
	if (n != b) {
		fprintf(stderr, "crossings_check: %s: the grid counted %u, brute force %u\n", what, n, b);
		++failures;
	}
	if (brute) *brute = b;
	col_crossings_free(&c);
	return n;
}

/* Square A in the plane y = 0 over x, z in [0, 1], split along its diagonal x = z; square B in the
 * plane x = 0.5 over y in [-0.5, 0.5] (or [0.1, 1.1]: clear of A), z in [0.2, 0.7], split along
 * its diagonal from (y, z) = (-0.5, 0.2) to (0.5, 0.7). Through A go B's two sides along y (at
 * z = 0.2 and 0.7) and its diagonal (at z = 0.45); through B goes A's diagonal (at z = 0.5, off
 * B's diagonal): 4 edges. */
static void squares(void) {
	static const uint32_t tri[] = {0, 1, 2, 0, 2, 3, 4, 5, 6, 4, 6, 7};
	for (int clear = 0; clear < 2; ++clear) {
		const double y0 = clear ? 0.1 : -0.5;
		const double xyz[] = {0,   0,  0,   1,   0,       0,   1,   0,       1,   0,   0,  1,
		                      0.5, y0, 0.2, 0.5, y0 + 1., 0.2, 0.5, y0 + 1., 0.7, 0.5, y0, 0.7};
		expect(clear ? "squares clear of each other" : "square through square", count("squares", xyz, 8, tri, 4, NULL),
		       clear ? 0 : 4);
	}
}

/* A strip of 7 x 2 vertices bent into a U: three cells along x at y = 0, a bend out to x = 2.3,
 * and three cells back over the first at y = 0.2. */
static void folded_strip(void) {
	static const double column[7][2] = {{0, 0}, {1, 0}, {2, 0}, {2.3, 0.1}, {2, 0.2}, {1, 0.2}, {0, 0.2}};
	double xyz[7 * 2 * 3];
	uint32_t tri[6 * 2 * 3];
	for (uint32_t i = 0; i < 7; ++i)
		for (uint32_t j = 0; j < 2; ++j) {
			double* p = xyz + 3 * (2 * i + j);
			p[0] = column[i][0];
			p[1] = column[i][1];
			p[2] = (double)j;
		}
	for (uint32_t i = 0; i < 6; ++i) {
		const uint32_t a = 2 * i, b = 2 * i + 2, c = 2 * i + 3, d = 2 * i + 1;
		const uint32_t cell[6] = {a, b, c, a, c, d};
		memcpy(tri + 6 * i, cell, sizeof cell);
	}
	expect("folded strip", count("folded strip", xyz, 14, tri, 12, NULL), 0);
}

/* A 16 x 16 grid crumpled by a smooth wave and a deterministic jitter larger than its spacing: many
 * edges through faces, the grid's count against brute force's. One vertex is then made
 * non-finite: its edges and triangles drop out of both counts. */
static void crumpled(void) {
	enum { N = 16 };
	static double xyz[N * N * 3];
	static uint32_t tri[(N - 1) * (N - 1) * 6];
	uint32_t state = 12345u;
	for (uint32_t j = 0; j < N; ++j)
		for (uint32_t i = 0; i < N; ++i) {
			double* p = xyz + 3 * (j * N + i);
			double r[3];
			for (int k = 0; k < 3; ++k) {
				state = state * 1664525u + 1013904223u;
				r[k] = (double)(state >> 8) / (double)(1u << 24) - 0.5;
			}
			const double x = i / (N - 1.0), z = j / (N - 1.0);
			p[0] = x + 0.08 * r[0];
			p[1] = 0.2 * sin(6 * x) * cos(9 * z) + 0.3 * r[1];
			p[2] = z + 0.08 * r[2];
		}
	uint32_t nt = 0;
	for (uint32_t j = 0; j + 1 < N; ++j)
		for (uint32_t i = 0; i + 1 < N; ++i) {
			const uint32_t a = j * N + i, b = a + 1, c = a + N + 1, d = a + N;
			const uint32_t cell[6] = {a, b, c, a, c, d};
			memcpy(tri + 3 * nt, cell, sizeof cell);
			nt += 2;
		}
	uint32_t brute = 0;
	count("crumpled grid", xyz, N * N, tri, nt, &brute);
	if (brute == 0) {
		fprintf(stderr, "crossings_check: the crumpled grid has no crossing: it checks nothing\n");
		++failures;
	}
	xyz[3 * (N * N / 2) + 1] = (double)NAN;
	count("crumpled grid with a NaN", xyz, N * N, tri, nt, NULL);
}

static void inside(void) {
	col_shape shapes[3];
	memset(shapes, 0, sizeof shapes);
	shapes[0].kind = COL_SHAPE_PLANE; /* the floor y = 0 */
	shapes[0].normal[1] = 1;
	shapes[1].kind = COL_SHAPE_SPHERE;
	shapes[1].center[1] = 0.2;
	shapes[1].radius = 0.2;
	shapes[2].kind = COL_SHAPE_BOX; /* a table top: y in [0.45, 0.5] */
	shapes[2].center[1] = 0.475;
	shapes[2].half[0] = 0.3;
	shapes[2].half[1] = 0.025;
	shapes[2].half[2] = 0.3;
	const double xyz[] = {
	    0,           0.5,        0,   /* on the box's top face: out */
	    0,           0.49,       0.1, /* in the box */
	    0.3,         0.475,      0,   /* on the box's side: out */
	    0,           0.4 - 5e-7, 0,   /* within the tolerance of the sphere's top: out */
	    0,           0.39,       0,   /* in the sphere */
	    1,           -0.01,      1,   /* below the floor */
	    0,           -0.001,     0,   /* in the sphere and below the floor: counted once */
	    2,           1,          2,   /* clear of everything */
	    (double)NAN, 0,          0,   /* non-finite: out */
	};
	expect("particles inside colliders", col_count_inside(xyz, 9, shapes, 3), 4);
}

int main(void) {
	squares();
	folded_strip();
	crumpled();
	inside();
	if (failures) return 1;
	printf("crossings_check: ok\n");
	return 0;
}
