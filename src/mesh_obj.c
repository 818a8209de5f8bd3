/* Wavefront OBJ reader: the v and f records, enough for cloth meshes. Other records (vt, vn,
 * o, g, s, usemtl, mtllib, l, p) are skipped. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesh.h"

typedef struct obj_buf {
	pbd_vec3* v;
	size_t nv, cap_v;
	uint32_t* f;
	size_t nf, cap_f; /* triangles */
} obj_buf;

static bool push_vertex(obj_buf* b, pbd_vec3 p) {
	if (b->nv == b->cap_v) {
		size_t cap = b->cap_v ? b->cap_v * 2 : 256;
		pbd_vec3* n = (pbd_vec3*)realloc(b->v, cap * sizeof *n);
		if (!n) return false;
		b->v = n;
		b->cap_v = cap;
	}
	b->v[b->nv++] = p;
	return true;
}

static bool push_triangle(obj_buf* b, uint32_t a, uint32_t c, uint32_t d) {
	if (b->nf == b->cap_f) {
		size_t cap = b->cap_f ? b->cap_f * 2 : 256;
		uint32_t* n = (uint32_t*)realloc(b->f, cap * 3 * sizeof *n);
		if (!n) return false;
		b->f = n;
		b->cap_f = cap;
	}
	b->f[3 * b->nf] = a;
	b->f[3 * b->nf + 1] = c;
	b->f[3 * b->nf + 2] = d;
	b->nf++;
	return true;
}

/* Reads one face corner "i", "i/t", "i//n" or "i/t/n"; 1-based, negative counts back.
 * PBD_ERR_PARSE for text that is not a corner, PBD_ERR_OUT_OF_RANGE for an index that names
 * no vertex defined so far. */
static pbd_status parse_corner(const char** s, size_t nv, uint32_t* out) {
	char* end;
	errno = 0;
	long long i = strtoll(*s, &end, 10);
	if (end == *s) return PBD_ERR_PARSE;
	const char* q = end;
	while (*q && *q != ' ' && *q != '\t' && *q != '\r' && *q != '\n') {
		if (*q != '/' && (*q < '0' || *q > '9') && *q != '-') return PBD_ERR_PARSE;
		++q;
	}
	*s = q;
	if (errno == ERANGE) return PBD_ERR_OUT_OF_RANGE;
	if (i > 0 && (unsigned long long)i <= nv) {
		*out = (uint32_t)(i - 1);
		return PBD_OK;
	}
	if (i < 0 && i != LLONG_MIN && (unsigned long long)(-i) <= nv) {
		*out = (uint32_t)((long long)nv + i);
		return PBD_OK;
	}
	return PBD_ERR_OUT_OF_RANGE;
}

static const char* skip_ws(const char* s) {
	while (*s == ' ' || *s == '\t') ++s;
	return s;
}

pbd_status pbd_mesh_load_obj(const char* path, bool bend, pbd_mesh* out, pbd_error* err) {
	if (!path || !out) return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "pbd_mesh_load_obj: NULL argument");
	memset(out, 0, sizeof *out);
	FILE* fp = fopen(path, "rb");
	if (!fp) return pbd_fail_err(err, PBD_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
	obj_buf b;
	memset(&b, 0, sizeof b);
	char* line = NULL;
	size_t cap = 0;
	long lineno = 0;
	pbd_status st = PBD_OK;
	ssize_t len;
	while ((len = getline(&line, &cap, fp)) != -1) {
		++lineno;
		if ((size_t)len != strlen(line)) {
			st = pbd_fail_err(err, PBD_ERR_PARSE, "%s:%ld: NUL byte in line", path, lineno);
			break;
		}
		const char* s = skip_ws(line);
		if (s[0] == 'v' && (s[1] == ' ' || s[1] == '\t')) {
			double c[3];
			s += 2;
			for (int k = 0; k < 3; ++k) {
				char* end;
				errno = 0;
				c[k] = strtod(s, &end);
				if (end == s) {
					st = pbd_fail_err(err, PBD_ERR_PARSE, "%s:%ld: vertex needs 3 numbers", path, lineno);
					break;
				}
#ifdef PBD_DOUBLE
				const double limit = DBL_MAX;
#else
				const double limit = (double)FLT_MAX; /* checked in double, before the conversion could overflow */
#endif
				if (!isfinite(c[k]) || errno == ERANGE || fabs(c[k]) > limit) {
					st = pbd_fail_err(err, PBD_ERR_NOT_FINITE, "%s:%ld: vertex coordinate is not a finite number", path,
					                  lineno);
					break;
				}
				s = end;
			}
			if (st != PBD_OK) break;
			pbd_vec3 p = pbd_v3((pbd_real)c[0], (pbd_real)c[1], (pbd_real)c[2]);
			if (!pbd_v3_is_finite(p)) {
				st = pbd_fail_err(err, PBD_ERR_NOT_FINITE, "%s:%ld: vertex coordinate overflows", path, lineno);
				break;
			}
			if (b.nv >= (1u << 26) || !push_vertex(&b, p)) {
				st = pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s:%ld: too many vertices", path, lineno);
				break;
			}
		} else if (s[0] == 'f' && (s[1] == ' ' || s[1] == '\t')) {
			uint32_t corner[3];
			int nc = 0;
			s = skip_ws(s + 2);
			while (*s && *s != '\r' && *s != '\n' && *s != '#') {
				uint32_t idx;
				pbd_status cs = parse_corner(&s, b.nv, &idx);
				if (cs == PBD_ERR_PARSE) {
					st = pbd_fail_err(err, cs, "%s:%ld: malformed face corner (expected i, i/t, i//n or i/t/n)", path,
					                  lineno);
					break;
				}
				if (cs != PBD_OK) {
					st = pbd_fail_err(err, cs, "%s:%ld: face index refers to no vertex defined so far (%zu)", path,
					                  lineno, b.nv);
					break;
				}
				if (nc < 3) {
					corner[nc] = idx;
				} else { /* fan: (first, previous, this) */
					corner[1] = corner[2];
					corner[2] = idx;
				}
				++nc;
				if (nc >= 3) {
					if (corner[0] == corner[1] || corner[1] == corner[2] || corner[0] == corner[2] ||
					    pbd_triangle_is_degenerate(b.v[corner[0]], b.v[corner[1]], b.v[corner[2]])) {
						st = pbd_fail_err(err, PBD_ERR_DEGENERATE,
						                  "%s:%ld: degenerate face (repeated vertex or zero area)", path, lineno);
						break;
					}
					if (b.nf >= (1u << 26) || !push_triangle(&b, corner[0], corner[1], corner[2])) {
						st = pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s:%ld: too many faces", path, lineno);
						break;
					}
				}
				s = skip_ws(s);
			}
			if (st != PBD_OK) break;
			if (nc < 3) {
				st = pbd_fail_err(err, PBD_ERR_PARSE, "%s:%ld: a face needs at least 3 vertices", path, lineno);
				break;
			}
		}
	}
	if (st == PBD_OK && ferror(fp)) st = pbd_fail_err(err, PBD_ERR_IO, "%s: read error", path);
	free(line);
	fclose(fp);
	if (st == PBD_OK && (b.nv < 3 || b.nf < 1))
		st = pbd_fail_err(err, PBD_ERR_PARSE, "%s: no triangles (needs v and f records)", path);
	if (st == PBD_OK) {
		st = pbd_mesh_from_triangles((uint32_t)b.nv, b.v, (uint32_t)b.nf, b.f, bend, out, err);
		if (st != PBD_OK && err) {
			char inner[sizeof err->message];
			memcpy(inner, err->message, sizeof inner);
			pbd_fail_err(err, st, "%s: %s", path, inner);
		}
	}
	free(b.v);
	free(b.f);
	return st;
}
