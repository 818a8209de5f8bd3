/* Heightfield heights from grey images: binary PGM read here, PNG through stb_image when the
 * build has it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene_internal.h"

#ifdef PBD_SCENE_HAVE_STB
#include <stb_image.h>
#endif

/* A decoded grey image: w x h samples, row 0 first, each at most max_pixel. */
typedef struct grey_image {
	uint32_t w, h;
	uint16_t* pixels; /* malloc'd */
	double max_pixel;
} grey_image;

/* Skips whitespace and '#' comments of a PNM header; false at the end of the bytes. */
static bool pnm_skip(const unsigned char* b, size_t n, size_t* i) {
	for (;;) {
		while (*i < n && (b[*i] == ' ' || b[*i] == '\t' || b[*i] == '\r' || b[*i] == '\n')) ++*i;
		if (*i < n && b[*i] == '#') {
			while (*i < n && b[*i] != '\n') ++*i;
			continue;
		}
		return *i < n;
	}
}

/* A decimal header field of at most 9 digits. */
static bool pnm_number(const unsigned char* b, size_t n, size_t* i, uint32_t* out) {
	if (!pnm_skip(b, n, i) || b[*i] < '0' || b[*i] > '9') return false;
	uint32_t v = 0;
	int digits = 0;
	while (*i < n && b[*i] >= '0' && b[*i] <= '9') {
		if (++digits > 9) return false;
		v = v * 10 + (uint32_t)(b[(*i)++] - '0');
	}
	*out = v;
	return true;
}

/* A binary PGM (P5): read here, so that PGM heightfields need no image library. Samples are 1
 * byte, or 2 (big-endian) when maxval > 255; max_pixel is the header's maxval. */
static bool read_pgm(loader* L, const char* fpath, const char* name, const unsigned char* b, size_t n,
                     grey_image* img) {
	jr* r = &L->r;
	size_t i = 2;
	uint32_t w, h, maxval;
	if (!pnm_number(b, n, &i, &w) || !pnm_number(b, n, &i, &h) || !pnm_number(b, n, &i, &maxval) || i >= n ||
	    !(b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n'))
		return jr_fail(r, fpath, "%s: the PGM header does not read (expected \"P5 width height maxval\")", name);
	++i; /* the one whitespace byte before the samples */
	if (maxval < 1 || maxval > 65535)
		return jr_fail(r, fpath, "%s: the PGM maxval must be in [1, 65535] (got %u)", name, maxval);
	if (w < 2 || h < 2) return jr_fail(r, fpath, "%s: needs at least 2 x 2 pixels (got %u x %u)", name, w, h);
	if ((uint64_t)w * h > PBD_SCENE_MAX_HEIGHTFIELD_SAMPLES)
		return jr_fail(r, fpath, "%s: %u x %u pixels is more than the %u samples a heightfield may have", name, w, h,
		               PBD_SCENE_MAX_HEIGHTFIELD_SAMPLES);
	const size_t bytes_per = maxval > 255 ? 2 : 1, count = (size_t)w * h;
	if (n - i < count * bytes_per)
		return jr_fail(r, fpath, "%s: the PGM is cut short (%zu bytes of samples, %u x %u needs %zu)", name, n - i, w,
		               h, count * bytes_per);
	img->pixels = malloc(count * sizeof *img->pixels);
	if (!img->pixels) return jr_fail(r, fpath, "out of memory");
	for (size_t k = 0; k < count; ++k) {
		const unsigned char* s = b + i + k * bytes_per;
		const uint32_t v = bytes_per == 2 ? ((uint32_t)s[0] << 8) | s[1] : s[0];
		if (v > maxval) {
			free(img->pixels);
			img->pixels = NULL;
			return jr_fail(r, fpath, "%s: pixel (%zu, %zu) is %u, more than the maxval %u", name, k % w, k / w, v,
			               maxval);
		}
		img->pixels[k] = (uint16_t)v;
	}
	img->w = w;
	img->h = h;
	img->max_pixel = maxval;
	return true;
}

/* A grey PNG, 8- or 16-bit, through stb_image. */
static bool read_png(loader* L, const char* fpath, const char* name, const unsigned char* b, size_t n,
                     grey_image* img) {
	jr* r = &L->r;
#ifndef PBD_SCENE_HAVE_STB
	(void)b;
	(void)n;
	(void)img;
	return jr_fail(r, fpath,
	               "%s: PNG height images need stb_image, which this build lacks (install libstb-dev and rebuild); "
	               "use a binary PGM, or give the heights inline in \"heights\"",
	               name);
#else
	int w = 0, h = 0, channels = 0;
	if (n > INT32_MAX || !stbi_info_from_memory(b, (int)n, &w, &h, &channels))
		return jr_fail(r, fpath, "%s: cannot read the image: %s", name, stbi_failure_reason());
	if (channels != 1 && channels != 2)
		return jr_fail(r, fpath, "%s: expected a grey image (got %d color channels)", name, channels);
	if (w < 2 || h < 2) return jr_fail(r, fpath, "%s: needs at least 2 x 2 pixels (got %d x %d)", name, w, h);
	if ((uint64_t)w * (uint64_t)h > PBD_SCENE_MAX_HEIGHTFIELD_SAMPLES)
		return jr_fail(r, fpath, "%s: %d x %d pixels is more than the %u samples a heightfield may have", name, w, h,
		               PBD_SCENE_MAX_HEIGHTFIELD_SAMPLES);
	const bool wide = stbi_is_16_bit_from_memory(b, (int)n) != 0;
	int w2 = 0, h2 = 0, c2 = 0;
	void* pixels = wide ? (void*)stbi_load_16_from_memory(b, (int)n, &w2, &h2, &c2, 1)
	                    : (void*)stbi_load_from_memory(b, (int)n, &w2, &h2, &c2, 1);
	if (!pixels || w2 != w || h2 != h) {
		stbi_image_free(pixels);
		return jr_fail(r, fpath, "%s: cannot read the image: %s", name,
		               pixels ? "its size changed while decoding" : stbi_failure_reason());
	}
	const size_t count = (size_t)w * (size_t)h;
	img->pixels = malloc(count * sizeof *img->pixels);
	if (!img->pixels) {
		stbi_image_free(pixels);
		return jr_fail(r, fpath, "out of memory");
	}
	for (size_t k = 0; k < count; ++k)
		img->pixels[k] = wide ? ((const uint16_t*)pixels)[k] : ((const unsigned char*)pixels)[k];
	stbi_image_free(pixels);
	img->w = (uint32_t)w;
	img->h = (uint32_t)h;
	img->max_pixel = wide ? 65535 : 255;
	return true;
#endif
}

/* Heights from a grey image: sample (ix, iz) is pixel (ix, iz), row iz of the image (top row
 * first) along z, so that the image seen from above (+y, with x to the right) is the terrain
 * seen from above with z pointing down the image. height = pixel / max_pixel * scale + offset,
 * max_pixel being a PGM's maxval, or 255 or 65535 for an 8- or 16-bit PNG. */
bool scene_read_height_image(loader* L, const char* fpath, const char* file, double scale, double offset,
                             pbd_heightfield* hf, pbd_real** heights) {
	jr* r = &L->r;
	const unsigned char* bytes;
	size_t size;
	unsigned char* owned;
	char name[SCENE_FILE_NAME_MAX];
	if (!scene_read_data_file(L, fpath, file, PBD_SCENE_MAX_IMAGE_BYTES, &bytes, &size, &owned, name)) return false;
	grey_image img;
	memset(&img, 0, sizeof img);
	bool ok;
	if (size >= 2 && bytes[0] == 'P' && bytes[1] == '5')
		ok = read_pgm(L, fpath, name, bytes, size, &img);
	else if (size >= 8 && memcmp(bytes, "\x89PNG\r\n\x1a\n", 8) == 0)
		ok = read_png(L, fpath, name, bytes, size, &img);
	else
		ok = jr_fail(r, fpath, "%s: not a binary PGM (P5) or PNG image%s", name,
		             size >= 2 && bytes[0] == 'P' && bytes[1] == '2' ? " (plain-text PGM, P2, is not read)" : "");
	free(owned);
	if (!ok) return false;
	const size_t count = (size_t)img.w * img.h;
	pbd_real* out = malloc(count * sizeof *out);
	if (!out) {
		free(img.pixels);
		return jr_fail(r, fpath, "out of memory");
	}
	for (size_t k = 0; k < count; ++k) out[k] = (pbd_real)((double)img.pixels[k] / img.max_pixel * scale + offset);
	free(img.pixels);
	hf->nx = img.w;
	hf->nz = img.h;
	hf->heights = out;
	*heights = out;
	return true;
}
