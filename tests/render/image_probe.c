/* image_probe: what a PNG shows, for tests that assert on rendered images from CMake scripts.
 *
 *     image_probe FILE.png [--region X0,Y0,X1,Y1]
 *
 * prints
 *
 *     size W H
 *     distinct N          different RGB colors (1 for a blank image)
 *     warm F CX CY        fraction of saturated red-to-yellow pixels (the cloth's default colors,
 *                         front and back, at any brightness) and their centroid in pixels
 *     cool F CX CY        the same for saturated cyan-to-blue pixels (the colliders' default)
 *     teal F CX CY        the same for saturated green-to-cyan pixels (the dynamic bodies' default)
 *
 * over the whole image or the region [X0, X1) x [Y0, Y1). The renderer's default style keeps
 * cloth warm, colliders cool, bodies teal and the background grey, so hue tells them apart
 * under any lighting. Exit status 1 when the file cannot be read. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stb_image.h>

typedef struct hue_class {
	double count, sx, sy;
} hue_class;

/* Hue in degrees [0, 360), saturation and value in [0, 1]. */
static void hsv(const uint8_t* p, double* h, double* s, double* v) {
	const double r = p[0] / 255.0, g = p[1] / 255.0, b = p[2] / 255.0;
	const double mx = r > g ? (r > b ? r : b) : (g > b ? g : b);
	const double mn = r < g ? (r < b ? r : b) : (g < b ? g : b);
	const double d = mx - mn;
	*v = mx;
	*s = mx > 0 ? d / mx : 0;
	if (d <= 0) {
		*h = 0;
		return;
	}
	double hh;
	if (mx == r)
		hh = (g - b) / d;
	else if (mx == g)
		hh = (b - r) / d + 2.0;
	else
		hh = (r - g) / d + 4.0;
	hh *= 60.0;
	*h = hh < 0 ? hh + 360.0 : hh;
}

int main(int argc, char** argv) {
	if (argc != 2 && !(argc == 4 && strcmp(argv[2], "--region") == 0)) {
		fprintf(stderr, "usage: image_probe FILE.png [--region X0,Y0,X1,Y1]\n");
		return 2;
	}
	int w = 0, h = 0, n = 0;
	uint8_t* img = stbi_load(argv[1], &w, &h, &n, 3);
	if (!img) {
		fprintf(stderr, "image_probe: %s: %s\n", argv[1], stbi_failure_reason());
		return 1;
	}
	int x0 = 0, y0 = 0, x1 = w, y1 = h;
	if (argc == 4 && sscanf(argv[3], "%d,%d,%d,%d", &x0, &y0, &x1, &y1) != 4) {
		fprintf(stderr, "image_probe: bad region '%s'\n", argv[3]);
		stbi_image_free(img);
		return 2;
	}
	x0 = x0 < 0 ? 0 : x0;
	y0 = y0 < 0 ? 0 : y0;
	x1 = x1 > w ? w : x1;
	y1 = y1 > h ? h : y1;

	/* One bit per 24-bit color. */
	uint8_t* seen = calloc((size_t)1 << 21, 1);
	if (!seen) {
		stbi_image_free(img);
		return 1;
	}
	long distinct = 0;
	hue_class warm = {0}, cool = {0}, teal = {0};
	for (int y = y0; y < y1; ++y) {
		for (int x = x0; x < x1; ++x) {
			const uint8_t* p = img + ((size_t)y * (size_t)w + (size_t)x) * 3;
			const uint32_t c = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
			if (!(seen[c >> 3] & (1u << (c & 7)))) {
				seen[c >> 3] = (uint8_t)(seen[c >> 3] | (1u << (c & 7)));
				++distinct;
			}
			double hu, s, v;
			hsv(p, &hu, &s, &v);
			if (s < 0.35 || v < 0.12) continue;
			hue_class* k = (hu < 60.0 || hu >= 345.0)    ? &warm
			               : (hu >= 180.0 && hu < 250.0) ? &cool
			               : (hu >= 140.0 && hu < 180.0) ? &teal
			                                             : NULL;
			if (!k) continue;
			k->count += 1;
			k->sx += x + 0.5;
			k->sy += y + 0.5;
		}
	}
	const double total = (double)(x1 > x0 ? x1 - x0 : 0) * (double)(y1 > y0 ? y1 - y0 : 0);
	printf("size %d %d\n", w, h);
	printf("distinct %ld\n", distinct);
	const hue_class* classes[3] = {&warm, &cool, &teal};
	const char* names[3] = {"warm", "cool", "teal"};
	for (int i = 0; i < 3; ++i) {
		const hue_class* k = classes[i];
		printf("%s %.6f %.1f %.1f\n", names[i], total > 0 ? k->count / total : 0.0,
		       k->count > 0 ? k->sx / k->count : -1.0, k->count > 0 ? k->sy / k->count : -1.0);
	}
	free(seen);
	stbi_image_free(img);
	return 0;
}
