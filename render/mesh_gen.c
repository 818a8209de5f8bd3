/* Meshes for the colliders: a UV sphere, a capsule and a box (the plane is a quad made per
 * draw). */
#include <math.h>
#include <stdlib.h>

#include "render_internal.h"

/* Rings of `slices` + 1 vertices at the polar angles theta[0..rows) from +y, each row moved
 * along y by shift[row] (NULL: none) in the vertex shader, joined by quads between consecutive
 * rows. The seam repeats its first column so that every quad indexes its own corners without
 * wrapping. */
static bool make_rings(uint32_t slices, uint32_t rows, const double* theta, const float* shift, render_mesh* out) {
	*out = (render_mesh){0};
	const uint32_t cols = slices + 1;
	const uint32_t nv = cols * rows;
	const uint32_t ni = slices * (rows - 1) * 6;
	float* p = malloc((size_t)nv * 3 * sizeof *p);
	float* n = malloc((size_t)nv * 3 * sizeof *n);
	float* s = shift ? malloc((size_t)nv * sizeof *s) : NULL;
	uint32_t* idx = malloc((size_t)ni * sizeof *idx);
	if (!p || !n || !idx || (shift && !s)) {
		free(p);
		free(n);
		free(s);
		free(idx);
		return false;
	}
	const double pi = 3.14159265358979323846;
	for (uint32_t j = 0; j < rows; ++j) {
		for (uint32_t i = 0; i < cols; ++i) {
			const double phi = 2.0 * pi * i / slices;
			float* v = p + 3 * (size_t)(j * cols + i);
			v[0] = (float)(sin(theta[j]) * sin(phi));
			v[1] = (float)cos(theta[j]);
			v[2] = (float)(sin(theta[j]) * cos(phi));
			float* vn = n + 3 * (size_t)(j * cols + i);
			vn[0] = v[0];
			vn[1] = v[1];
			vn[2] = v[2];
			if (s) s[j * cols + i] = shift[j];
		}
	}
	uint32_t k = 0;
	for (uint32_t j = 0; j + 1 < rows; ++j) {
		for (uint32_t i = 0; i < slices; ++i) {
			const uint32_t a = j * cols + i, b = a + 1, c = a + cols, d = c + 1;
			/* a b on the upper ring, c d below; phi grows towards +x from +z, so (a, c, d) turns
			 * counter-clockwise seen from outside. */
			idx[k++] = a;
			idx[k++] = c;
			idx[k++] = d;
			idx[k++] = a;
			idx[k++] = d;
			idx[k++] = b;
		}
	}
	out->vertex_count = nv;
	out->positions = p;
	out->normals = n;
	out->shifts = s;
	out->index_count = ni;
	out->indices = idx;
	return true;
}

bool render_mesh_uv_sphere(uint32_t slices, uint32_t stacks, render_mesh* out) {
	*out = (render_mesh){0};
	if (slices < 3 || stacks < 2) return false;
	double* theta = malloc((stacks + 1) * sizeof *theta);
	if (!theta) return false;
	for (uint32_t j = 0; j <= stacks; ++j) theta[j] = 3.14159265358979323846 * j / stacks; /* north pole (+y) down */
	const bool ok = make_rings(slices, stacks + 1, theta, NULL, out);
	free(theta);
	return ok;
}

bool render_mesh_capsule(uint32_t slices, uint32_t stacks, render_mesh* out) {
	*out = (render_mesh){0};
	if (slices < 3 || stacks < 1) return false;
	/* Two hemispheres, each with its own equator ring: the quads between those rings are the
	 * cylinder, lit by the equator's horizontal normals at both ends. */
	const uint32_t rows = 2 * (stacks + 1);
	double* theta = malloc(rows * sizeof *theta);
	float* shift = malloc(rows * sizeof *shift);
	if (!theta || !shift) {
		free(theta);
		free(shift);
		return false;
	}
	const double quarter = 0.5 * 3.14159265358979323846;
	for (uint32_t j = 0; j <= stacks; ++j) {
		theta[j] = quarter * j / stacks;
		shift[j] = 1.0f;
		theta[stacks + 1 + j] = quarter + quarter * j / stacks;
		shift[stacks + 1 + j] = -1.0f;
	}
	const bool ok = make_rings(slices, rows, theta, shift, out);
	free(theta);
	free(shift);
	return ok;
}

bool render_mesh_box(render_mesh* out) {
	*out = (render_mesh){0};
	float* p = malloc(24 * 3 * sizeof *p);
	float* n = malloc(24 * 3 * sizeof *n);
	uint32_t* idx = malloc(36 * sizeof *idx);
	if (!p || !n || !idx) {
		free(p);
		free(n);
		free(idx);
		return false;
	}
	/* Face f has normal sign * e_a; its corners run counter-clockwise seen from outside in the
	 * (u, v) axes that follow a, swapped on the negative side so that u x v stays the normal. */
	for (uint32_t f = 0; f < 6; ++f) {
		const uint32_t a = f / 2;
		const float sign = (f & 1) ? -1.0f : 1.0f;
		uint32_t u = (a + 1) % 3, v = (a + 2) % 3;
		if (sign < 0) {
			const uint32_t t = u;
			u = v;
			v = t;
		}
		static const float cu[4] = {-1, 1, 1, -1}, cv[4] = {-1, -1, 1, 1};
		for (uint32_t c = 0; c < 4; ++c) {
			float* vp = p + 3 * (size_t)(4 * f + c);
			float* vn = n + 3 * (size_t)(4 * f + c);
			vp[a] = sign;
			vp[u] = cu[c];
			vp[v] = cv[c];
			vn[0] = vn[1] = vn[2] = 0.0f;
			vn[a] = sign;
		}
		const uint32_t b = 4 * f;
		const uint32_t tri[6] = {b, b + 1, b + 2, b, b + 2, b + 3};
		for (uint32_t k = 0; k < 6; ++k) idx[6 * f + k] = tri[k];
	}
	out->vertex_count = 24;
	out->positions = p;
	out->normals = n;
	out->index_count = 36;
	out->indices = idx;
	return true;
}

void render_mesh_free(render_mesh* m) {
	if (!m) return;
	free(m->positions);
	free(m->normals);
	free(m->shifts);
	free(m->indices);
	*m = (render_mesh){0};
}
