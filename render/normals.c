/* Smooth per-vertex normals, recomputed from the deformed triangles every frame. */
#include <math.h>
#include <string.h>

#include "render_internal.h"

void render_smooth_normals(const float* positions, uint32_t count, const uint32_t* triangles, uint32_t triangle_count,
                           float* normals) {
	memset(normals, 0, (size_t)count * 3 * sizeof *normals);
	/* The unnormalised cross product is the face normal times twice the area, so summing it is
	 * the area weighting: a sliver triangle barely tilts its corners. */
	for (uint32_t t = 0; t < triangle_count; ++t) {
		const uint32_t a = triangles[3 * t], b = triangles[3 * t + 1], c = triangles[3 * t + 2];
		if (a >= count || b >= count || c >= count) continue;
		const float* pa = positions + 3 * (size_t)a;
		const float* pb = positions + 3 * (size_t)b;
		const float* pc = positions + 3 * (size_t)c;
		const float e1[3] = {pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]};
		const float e2[3] = {pc[0] - pa[0], pc[1] - pa[1], pc[2] - pa[2]};
		const float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
		                    e1[0] * e2[1] - e1[1] * e2[0]};
		const uint32_t corners[3] = {a, b, c};
		for (int k = 0; k < 3; ++k) {
			float* out = normals + 3 * (size_t)corners[k];
			out[0] += n[0];
			out[1] += n[1];
			out[2] += n[2];
		}
	}
	for (uint32_t i = 0; i < count; ++i) {
		float* v = normals + 3 * (size_t)i;
		const float len2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
		/* A vertex whose triangles cancel out (a fold of exactly opposite faces) or that has none
		 * keeps the zero vector rather than a NaN. */
		if (len2 > 1e-30f && isfinite(len2)) {
			const float inv = 1.0f / sqrtf(len2);
			v[0] *= inv;
			v[1] *= inv;
			v[2] *= inv;
		} else {
			v[0] = v[1] = v[2] = 0.0f;
		}
	}
}
