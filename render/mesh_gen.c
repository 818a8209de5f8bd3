/* Meshes for the colliders: a UV sphere (the plane is a quad made in the vertex shader). */
#include <math.h>
#include <stdlib.h>

#include "render_internal.h"

bool render_mesh_uv_sphere(uint32_t slices, uint32_t stacks, render_mesh* out) {
	*out = (render_mesh){0};
	if (slices < 3 || stacks < 2) return false;
	/* One ring of slices + 1 vertices per stack boundary: the seam repeats its first column so
	 * that every quad indexes its own corners without wrapping. */
	const uint32_t cols = slices + 1, rows = stacks + 1;
	const uint32_t nv = cols * rows;
	const uint32_t ni = slices * stacks * 6;
	float* p = malloc((size_t)nv * 3 * sizeof *p);
	float* n = malloc((size_t)nv * 3 * sizeof *n);
	uint32_t* idx = malloc((size_t)ni * sizeof *idx);
	if (!p || !n || !idx) {
		free(p);
		free(n);
		free(idx);
		return false;
	}
	const double pi = 3.14159265358979323846;
	for (uint32_t j = 0; j < rows; ++j) {
		const double theta = pi * j / stacks; /* from the north pole (+y) down */
		for (uint32_t i = 0; i < cols; ++i) {
			const double phi = 2.0 * pi * i / slices;
			float* v = p + 3 * (size_t)(j * cols + i);
			v[0] = (float)(sin(theta) * sin(phi));
			v[1] = (float)cos(theta);
			v[2] = (float)(sin(theta) * cos(phi));
			float* vn = n + 3 * (size_t)(j * cols + i);
			vn[0] = v[0];
			vn[1] = v[1];
			vn[2] = v[2];
		}
	}
	uint32_t k = 0;
	for (uint32_t j = 0; j < stacks; ++j) {
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
	out->index_count = ni;
	out->indices = idx;
	return true;
}

void render_mesh_free(render_mesh* m) {
	if (!m) return;
	free(m->positions);
	free(m->normals);
	free(m->indices);
	*m = (render_mesh){0};
}
