/* Wavefront OBJ reader: the v and f records, enough for cloth meshes, and when the caller asks
 * for them the o and g records that name groups of faces. Other records (vt, vn, s, usemtl,
 * mtllib, l, p) are skipped.
 *
 * One parser serves files and memory: the input arrives in pieces, is cut into lines, and each
 * line is parsed on its own, so a file is never held whole. Only regular files are read (a FIFO
 * or a device is refused before its first byte), and every size is bounded (a line, the input,
 * the vertex and triangle counts): a binary file, or one growing as it is read, ends in one error
 * line instead of reading until memory runs out. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/file_in.h"
#include "mesh/mesh.h"

#ifdef PBD_DOUBLE
#define OBJ_SCALAR "double"
#else
#define OBJ_SCALAR "float"
#endif

pbd_obj_limits pbd_obj_limits_default(void) {
	pbd_obj_limits lim;
	memset(&lim, 0, sizeof lim);
	lim.max_line = PBD_OBJ_MAX_LINE;
	lim.max_bytes = PBD_OBJ_MAX_BYTES;
	lim.max_vertices = PBD_OBJ_MAX_VERTICES;
	lim.max_triangles = PBD_OBJ_MAX_TRIANGLES;
	lim.max_groups = PBD_OBJ_MAX_GROUPS;
	lim.max_members = PBD_OBJ_MAX_MEMBERS;
	return lim;
}

typedef struct obj_parser {
	const pbd_obj_limits* lim;
	const char* name; /* the path, or the caller's name for a buffer */
	pbd_error* err;
	pbd_status st;   /* the first failure; everything stops at it */
	uint32_t lineno; /* lines finished so far: the current one is lineno + 1 */
	uint64_t bytes;  /* input taken so far */
	char* line;      /* the line being gathered, without its '\n', then terminated */
	size_t len, cap;
	pbd_vec3* v;
	size_t nv, cap_v;
	uint32_t* f;      /* 3 vertex indices per triangle */
	uint32_t* f_line; /* the line each triangle came from, for faults found after reading */
	size_t nf, cap_f, cap_fl;
	/* Groups, gathered only when `groups` is set. Each o or g line starts a run: the faces from
	 * there to the next run belong to the groups of its set, run_sets[set_first, + set_count). */
	pbd_obj_groups* groups;
	char** gname;
	size_t ng, cap_gn;
	uint32_t* ghash;  /* open addressing: group index + 1, 0 = empty; hash_mask + 1 slots */
	uint32_t* gstamp; /* per group: the line that last put it in a set, so a repeat counts once */
	uint32_t hash_mask;
	uint32_t object;   /* the group of the last o line, UINT32_MAX for none */
	uint32_t* current; /* the groups of the last g line */
	size_t ncurrent, cap_cur;
	uint32_t* runs; /* 3 per run: set_first, set_count, first triangle */
	size_t nruns, cap_runs;
	uint32_t* run_sets;
	size_t nsets, cap_sets;
	uint64_t members; /* (group, triangle) pairs so far */
} obj_parser;

/* Grows *ptr to hold at least `need` elements (doubling, never past `max`). */
static bool obj_grow(obj_parser* p, void** ptr, size_t* cap, size_t need, size_t elem, size_t max) {
	if (need <= *cap) return true;
	size_t c = *cap ? *cap : 256;
	while (c < need) {
		if (c >= max) return false;
		c = c > max / 2 ? max : 2 * c;
	}
	void* n = p->lim->realloc_fn ? p->lim->realloc_fn(*ptr, c * elem) : realloc(*ptr, c * elem);
	if (!n) return false;
	*ptr = n;
	*cap = c;
	return true;
}

static void obj_out_of_memory(obj_parser* p) {
	p->st = pbd_fail_err(p->err, PBD_ERR_OUT_OF_MEMORY, "%s:%lu: out of memory (after %zu vertices and %zu triangles)",
	                     p->name, (unsigned long)p->lineno + 1, p->nv, p->nf);
}

/* Reads one face corner "i", "i/t", "i//n" or "i/t/n"; 1-based, negative counts back from the
 * last vertex read. *num and *num_len give the index as written, for messages.
 * PBD_ERR_PARSE for text that is not a corner, PBD_ERR_OUT_OF_RANGE for an index that names
 * no vertex defined so far. */
static pbd_status parse_corner(const char** s, size_t nv, uint32_t* out, const char** num, int* num_len) {
	char* end;
	errno = 0;
	long long i = strtoll(*s, &end, 10);
	*num = *s;
	*num_len = (int)(end - *s > 32 ? 32 : end - *s);
	if (end == *s) {
		*num_len = 0;
		while ((*s)[*num_len] && (*s)[*num_len] != ' ' && (*s)[*num_len] != '\t' && *num_len < 32) ++*num_len;
		return PBD_ERR_PARSE;
	}
	const char* q = end;
	while (*q && *q != ' ' && *q != '\t' && *q != '\r') {
		if (*q != '/' && (*q < '0' || *q > '9') && *q != '-') {
			*num_len = (int)(q - *s + 1 > 32 ? 32 : q - *s + 1);
			return PBD_ERR_PARSE;
		}
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

static void obj_vertex(obj_parser* p, const char* s) {
	const unsigned long ln = (unsigned long)p->lineno;
	double c[3];
	for (int k = 0; k < 3; ++k) {
		char* end;
		errno = 0;
		c[k] = strtod(s, &end);
		if (end == s) {
			p->st = pbd_fail_err(p->err, PBD_ERR_PARSE, "%s:%lu: vertex needs 3 numbers", p->name, ln);
			return;
		}
#ifdef PBD_DOUBLE
		const double limit = DBL_MAX;
#else
		const double limit = (double)FLT_MAX; /* checked in double, before the conversion could overflow */
#endif
		if (!isfinite(c[k]) || errno == ERANGE || fabs(c[k]) > limit) {
			p->st = pbd_fail_err(p->err, PBD_ERR_NOT_FINITE,
			                     "%s:%lu: vertex coordinate is not a finite " OBJ_SCALAR " number", p->name, ln);
			return;
		}
		s = end;
	}
	if (p->nv >= p->lim->max_vertices) {
		p->st = pbd_fail_err(p->err, PBD_ERR_OUT_OF_RANGE, "%s:%lu: more than %u vertices", p->name, ln,
		                     p->lim->max_vertices);
		return;
	}
	if (!obj_grow(p, (void**)&p->v, &p->cap_v, p->nv + 1, sizeof *p->v, p->lim->max_vertices)) {
		obj_out_of_memory(p);
		return;
	}
	p->v[p->nv++] = pbd_v3((pbd_real)c[0], (pbd_real)c[1], (pbd_real)c[2]);
}

/* Checks triangle (a, b, c) of a face and appends it. Vertices are named 1-based in messages,
 * the numbering the file uses. */
static void obj_triangle(obj_parser* p, uint32_t a, uint32_t b, uint32_t c) {
	const unsigned long ln = (unsigned long)p->lineno;
	const uint32_t t[3] = {a, b, c};
	for (int j = 0; j < 3; ++j)
		if (t[j] == t[(j + 1) % 3]) {
			p->st = pbd_fail_err(p->err, PBD_ERR_DEGENERATE, "%s:%lu: degenerate face: vertex %lu is repeated", p->name,
			                     ln, (unsigned long)t[j] + 1);
			return;
		}
	/* Before the area test, which would call a triangle too large to measure degenerate. */
	for (int j = 0; j < 3; ++j)
		if (!pbd_length_fits(p->v[t[j]], p->v[t[(j + 1) % 3]])) {
			p->st = pbd_fail_err(p->err, PBD_ERR_NOT_FINITE,
			                     "%s:%lu: face edge from vertex %lu to %lu is too long: its rest length overflows "
			                     "a " OBJ_SCALAR,
			                     p->name, ln, (unsigned long)t[j] + 1, (unsigned long)t[(j + 1) % 3] + 1);
			return;
		}
	if (pbd_triangle_is_degenerate(p->v[a], p->v[b], p->v[c])) {
		p->st = pbd_fail_err(p->err, PBD_ERR_DEGENERATE, "%s:%lu: degenerate face: vertices %lu, %lu, %lu span no area",
		                     p->name, ln, (unsigned long)a + 1, (unsigned long)b + 1, (unsigned long)c + 1);
		return;
	}
	if (p->nf >= p->lim->max_triangles) {
		p->st = pbd_fail_err(p->err, PBD_ERR_OUT_OF_RANGE, "%s:%lu: more than %u triangles", p->name, ln,
		                     p->lim->max_triangles);
		return;
	}
	if (!obj_grow(p, (void**)&p->f, &p->cap_f, p->nf + 1, 3 * sizeof *p->f, p->lim->max_triangles) ||
	    !obj_grow(p, (void**)&p->f_line, &p->cap_fl, p->nf + 1, sizeof *p->f_line, p->lim->max_triangles)) {
		obj_out_of_memory(p);
		return;
	}
	if (p->groups && p->nruns) {
		p->members += p->runs[3 * (p->nruns - 1) + 1];
		if (p->members > p->lim->max_members) {
			p->st = pbd_fail_err(p->err, PBD_ERR_OUT_OF_RANGE, "%s:%lu: more than %u group memberships of faces",
			                     p->name, ln, p->lim->max_members);
			return;
		}
	}
	memcpy(p->f + 3 * p->nf, t, sizeof t);
	p->f_line[p->nf++] = p->lineno;
}

static uint32_t name_hash(const char* s, size_t n) {
	uint32_t h = 2166136261u; /* FNV-1a */
	for (size_t i = 0; i < n; ++i) h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

/* The index of group name s[0..n), added if new; UINT32_MAX after a failure. */
static uint32_t obj_group_index(obj_parser* p, const char* s, size_t n) {
	if (!p->ghash) {
		uint32_t slots = 16;
		while (slots < 2 * (uint64_t)p->lim->max_groups) slots *= 2;
		size_t cap = 0, cap2 = 0;
		if (!obj_grow(p, (void**)&p->ghash, &cap, slots, sizeof *p->ghash, slots) ||
		    !obj_grow(p, (void**)&p->gstamp, &cap2, p->lim->max_groups, sizeof *p->gstamp, p->lim->max_groups)) {
			obj_out_of_memory(p);
			return UINT32_MAX;
		}
		memset(p->ghash, 0, slots * sizeof *p->ghash);
		p->hash_mask = slots - 1;
	}
	uint32_t h = name_hash(s, n) & p->hash_mask;
	for (; p->ghash[h]; h = (h + 1) & p->hash_mask) {
		const char* g = p->gname[p->ghash[h] - 1];
		if (strlen(g) == n && memcmp(g, s, n) == 0) return p->ghash[h] - 1;
	}
	if (p->ng >= p->lim->max_groups) {
		p->st = pbd_fail_err(p->err, PBD_ERR_OUT_OF_RANGE, "%s:%lu: more than %u group names", p->name,
		                     (unsigned long)p->lineno, p->lim->max_groups);
		return UINT32_MAX;
	}
	char* copy = p->lim->realloc_fn ? p->lim->realloc_fn(NULL, n + 1) : malloc(n + 1);
	if (!copy || !obj_grow(p, (void**)&p->gname, &p->cap_gn, p->ng + 1, sizeof *p->gname, p->lim->max_groups)) {
		free(copy);
		obj_out_of_memory(p);
		return UINT32_MAX;
	}
	memcpy(copy, s, n);
	copy[n] = 0;
	p->gstamp[p->ng] = 0;
	p->gname[p->ng++] = copy;
	p->ghash[h] = (uint32_t)p->ng;
	return (uint32_t)p->ng - 1;
}

/* An o line (object) or g line (any number of names, none = no group): starts a run of faces. */
static void obj_group_line(obj_parser* p, const char* s, bool object) {
	if (object)
		p->object = UINT32_MAX;
	else
		p->ncurrent = 0;
	for (s = skip_ws(s); *s && *s != '\r'; s = skip_ws(s)) {
		const size_t n = strcspn(s, " \t\r");
		const uint32_t g = obj_group_index(p, s, n);
		if (g == UINT32_MAX) return;
		s += n;
		if (object) {
			p->object = g; /* an object has one name; anything after it is ignored */
			break;
		}
		if (p->gstamp[g] == p->lineno) continue;
		p->gstamp[g] = p->lineno;
		if (!obj_grow(p, (void**)&p->current, &p->cap_cur, p->ncurrent + 1, sizeof *p->current, p->lim->max_groups)) {
			obj_out_of_memory(p);
			return;
		}
		p->current[p->ncurrent++] = g;
	}
	const bool in_object = p->object != UINT32_MAX;
	const size_t set = p->ncurrent + (in_object ? 1u : 0u);
	if (set > p->lim->max_members - p->nsets) {
		p->st = pbd_fail_err(p->err, PBD_ERR_OUT_OF_RANGE, "%s:%lu: more than %u group names in o and g records",
		                     p->name, (unsigned long)p->lineno, p->lim->max_members);
		return;
	}
	if (!obj_grow(p, (void**)&p->run_sets, &p->cap_sets, p->nsets + set, sizeof *p->run_sets, p->lim->max_members) ||
	    !obj_grow(p, (void**)&p->runs, &p->cap_runs, 3 * (p->nruns + 1), sizeof *p->runs, SIZE_MAX / 8)) {
		obj_out_of_memory(p);
		return;
	}
	uint32_t* run = p->runs + 3 * p->nruns++;
	run[0] = (uint32_t)p->nsets;
	run[1] = (uint32_t)set;
	run[2] = (uint32_t)p->nf;
	/* A name on both the o and the g line is one membership: the object's is not repeated. */
	if (in_object) p->run_sets[p->nsets++] = p->object;
	for (size_t k = 0; k < p->ncurrent; ++k)
		if (p->current[k] != p->object) p->run_sets[p->nsets++] = p->current[k];
	run[1] = (uint32_t)(p->nsets - run[0]);
}

static void obj_face(obj_parser* p, const char* s) {
	const unsigned long ln = (unsigned long)p->lineno;
	uint32_t corner[3];
	int nc = 0;
	s = skip_ws(s);
	while (*s && *s != '\r' && *s != '#') {
		uint32_t idx = 0;
		const char* num;
		int num_len;
		const pbd_status cs = parse_corner(&s, p->nv, &idx, &num, &num_len);
		if (cs == PBD_ERR_PARSE) {
			p->st = pbd_fail_err(p->err, cs, "%s:%lu: malformed face corner '%.*s' (expected i, i/t, i//n or i/t/n)",
			                     p->name, ln, num_len, num);
			return;
		}
		if (cs != PBD_OK) {
			p->st = pbd_fail_err(p->err, cs, "%s:%lu: face index %.*s refers to no vertex (%zu defined so far)",
			                     p->name, ln, num_len, num, p->nv);
			return;
		}
		if (nc < 3) {
			corner[nc] = idx;
		} else { /* fan: (first, previous, this) */
			corner[1] = corner[2];
			corner[2] = idx;
		}
		++nc;
		if (nc >= 3) {
			obj_triangle(p, corner[0], corner[1], corner[2]);
			if (p->st != PBD_OK) return;
		}
		s = skip_ws(s);
	}
	if (nc < 3) p->st = pbd_fail_err(p->err, PBD_ERR_PARSE, "%s:%lu: a face needs at least 3 vertices", p->name, ln);
}

/* Parses p->line, which is line p->lineno and terminated. */
static void obj_line(obj_parser* p) {
	const char* s = skip_ws(p->line);
	if (s[0] == 'v' && (s[1] == ' ' || s[1] == '\t'))
		obj_vertex(p, s + 2);
	else if (s[0] == 'f' && (s[1] == ' ' || s[1] == '\t'))
		obj_face(p, s + 2);
	else if (p->groups && (s[0] == 'g' || s[0] == 'o') && (s[1] == ' ' || s[1] == '\t' || !s[1] || s[1] == '\r'))
		obj_group_line(p, s + 1, s[0] == 'o');
}

/* Takes the next `n` bytes of input: gathers them into lines and parses every complete one. */
static void obj_feed(obj_parser* p, const char* data, size_t n) {
	if (p->st != PBD_OK) return;
	if (n > p->lim->max_bytes - p->bytes) {
		p->st = pbd_fail_err(p->err, PBD_ERR_OUT_OF_RANGE, "%s:%lu: input longer than %llu bytes", p->name,
		                     (unsigned long)p->lineno + 1, (unsigned long long)p->lim->max_bytes);
		return;
	}
	p->bytes += n;
	while (n && p->st == PBD_OK) {
		const char* nl = (const char*)memchr(data, '\n', n);
		const size_t take = nl ? (size_t)(nl - data) : n;
		if (memchr(data, 0, take)) {
			p->st = pbd_fail_err(p->err, PBD_ERR_PARSE, "%s:%lu: NUL byte: not a text file", p->name,
			                     (unsigned long)p->lineno + 1);
			return;
		}
		if (take > p->lim->max_line - p->len) {
			p->st = pbd_fail_err(p->err, PBD_ERR_OUT_OF_RANGE, "%s:%lu: line longer than %zu bytes", p->name,
			                     (unsigned long)p->lineno + 1, p->lim->max_line);
			return;
		}
		if (!obj_grow(p, (void**)&p->line, &p->cap, p->len + take + 1, 1, p->lim->max_line + 1)) {
			obj_out_of_memory(p);
			return;
		}
		memcpy(p->line + p->len, data, take);
		p->len += take;
		if (!nl) return;
		p->line[p->len] = 0;
		++p->lineno;
		obj_line(p);
		p->len = 0;
		data += take + 1;
		n -= take + 1;
	}
}

/* Turns the runs into p->groups: per group, its triangles in ascending order. */
static void obj_groups_build(obj_parser* p) {
	pbd_obj_groups* g = p->groups;
	g->first = calloc(p->ng + 1, sizeof *g->first);
	g->triangles = malloc((p->members ? p->members : 1) * sizeof *g->triangles);
	if (!g->first || !g->triangles) {
		obj_out_of_memory(p);
		return;
	}
	for (size_t r = 0; r < p->nruns; ++r) {
		const uint32_t* run = p->runs + 3 * r;
		const size_t end = r + 1 < p->nruns ? run[5] : p->nf;
		for (uint32_t k = 0; k < run[1]; ++k) g->first[p->run_sets[run[0] + k] + 1] += (uint32_t)(end - run[2]);
	}
	for (size_t i = 0; i < p->ng; ++i) g->first[i + 1] += g->first[i];
	/* Fill from each group's start, running through the runs in file order. */
	uint32_t* fill = p->gstamp; /* no longer needed as stamps */
	for (size_t i = 0; i < p->ng; ++i) fill[i] = g->first[i];
	for (size_t r = 0; r < p->nruns; ++r) {
		const uint32_t* run = p->runs + 3 * r;
		const size_t end = r + 1 < p->nruns ? run[5] : p->nf;
		for (uint32_t k = 0; k < run[1]; ++k)
			for (size_t t = run[2]; t < end; ++t) g->triangles[fill[p->run_sets[run[0] + k]]++] = (uint32_t)t;
	}
	g->count = (uint32_t)p->ng;
	g->names = p->gname;
	p->gname = NULL;
	p->ng = 0;
}

/* Parses a last line without '\n', builds the mesh and frees the parser. */
static pbd_status obj_finish(obj_parser* p, bool bend, pbd_mesh* out) {
	if (p->st == PBD_OK && p->len) {
		p->line[p->len] = 0;
		++p->lineno;
		obj_line(p);
	}
	if (p->st == PBD_OK && (p->nv < 3 || p->nf < 1))
		p->st = pbd_fail_err(p->err, PBD_ERR_PARSE, "%s: no triangles (needs v and f records)", p->name);
	if (p->st == PBD_OK) {
		pbd_mesh_fault fault;
		pbd_error inner;
		p->st = pbd_mesh_build((uint32_t)p->nv, p->v, (uint32_t)p->nf, p->f, bend, out, &inner, &fault);
		if (p->st != PBD_OK && fault.triangle < p->nf && fault.other < p->nf)
			pbd_fail_err(p->err, p->st,
			             "%s:%lu: bend edge from vertex %lu to %lu, across this face and the one on line %lu, is too "
			             "long: its rest length overflows a " OBJ_SCALAR,
			             p->name, (unsigned long)p->f_line[fault.triangle], (unsigned long)fault.a + 1,
			             (unsigned long)fault.b + 1, (unsigned long)p->f_line[fault.other]);
		else if (p->st != PBD_OK && fault.triangle < p->nf)
			pbd_fail_err(p->err, p->st, "%s:%lu: %s", p->name, (unsigned long)p->f_line[fault.triangle], inner.message);
		else if (p->st != PBD_OK)
			pbd_fail_err(p->err, p->st, "%s: %s", p->name, inner.message);
	}
	if (p->st == PBD_OK && p->groups) obj_groups_build(p);
	if (p->st != PBD_OK && p->groups) pbd_obj_groups_free(p->groups);
	if (p->st != PBD_OK) pbd_mesh_free(out);
	for (size_t i = 0; i < p->ng; ++i) free(p->gname[i]);
	free(p->gname);
	free(p->ghash);
	free(p->gstamp);
	free(p->current);
	free(p->runs);
	free(p->run_sets);
	free(p->line);
	free(p->v);
	free(p->f);
	free(p->f_line);
	return p->st;
}

void pbd_obj_groups_free(pbd_obj_groups* groups) {
	if (!groups) return;
	for (uint32_t i = 0; groups->names && i < groups->count; ++i) free(groups->names[i]);
	free(groups->names);
	free(groups->first);
	free(groups->triangles);
	memset(groups, 0, sizeof *groups);
}

static void obj_init(obj_parser* p, const char* name, const pbd_obj_limits* lim, pbd_obj_groups* groups,
                     pbd_error* err) {
	memset(p, 0, sizeof *p);
	p->groups = groups;
	p->object = UINT32_MAX;
	if (groups) memset(groups, 0, sizeof *groups);
	p->name = name;
	p->lim = lim;
	p->err = err;
	p->st = PBD_OK;
}

pbd_status pbd_obj_load_memory(const char* data, size_t size, const char* name, bool bend, const pbd_obj_limits* lim,
                               pbd_mesh* out, pbd_error* err) {
	return pbd_obj_load_memory_groups(data, size, name, bend, lim, out, NULL, err);
}

pbd_status pbd_obj_load_memory_groups(const char* data, size_t size, const char* name, bool bend,
                                      const pbd_obj_limits* lim, pbd_mesh* out, pbd_obj_groups* groups,
                                      pbd_error* err) {
	if (groups) memset(groups, 0, sizeof *groups);
	if (!name) name = "<memory>";
	if (!out || (!data && size))
		return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "pbd_mesh_load_obj_memory: NULL argument (%s)", name);
	memset(out, 0, sizeof *out);
	obj_parser p;
	obj_init(&p, name, lim, groups, err);
	if (size) obj_feed(&p, data, size);
	return obj_finish(&p, bend, out);
}

pbd_status pbd_obj_load_file(const char* path, bool bend, const pbd_obj_limits* lim, pbd_mesh* out, pbd_error* err) {
	return pbd_obj_load_file_groups(path, bend, lim, out, NULL, err);
}

pbd_status pbd_obj_load_file_groups(const char* path, bool bend, const pbd_obj_limits* lim, pbd_mesh* out,
                                    pbd_obj_groups* groups, pbd_error* err) {
	if (groups) memset(groups, 0, sizeof *groups);
	if (!path || !out) return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "pbd_mesh_load_obj: NULL argument");
	memset(out, 0, sizeof *out);
	FILE* fp;
	const pbd_status opened = pbd_file_open_regular(path, &fp, NULL, err);
	if (opened != PBD_OK) return opened;
	obj_parser p;
	obj_init(&p, path, lim, groups, err);
	char chunk[16384];
	while (p.st == PBD_OK) {
		const size_t got = fread(chunk, 1, sizeof chunk, fp);
		obj_feed(&p, chunk, got);
		if (got < sizeof chunk) {
			if (ferror(fp) && p.st == PBD_OK)
				p.st = pbd_fail_err(err, PBD_ERR_IO, "%s:%lu: read error: %s", path, (unsigned long)p.lineno + 1,
				                    strerror(errno));
			break;
		}
	}
	fclose(fp);
	return obj_finish(&p, bend, out);
}

pbd_status pbd_mesh_load_obj(const char* path, bool bend, pbd_mesh* out, pbd_error* err) {
	const pbd_obj_limits lim = pbd_obj_limits_default();
	return pbd_obj_load_file(path, bend, &lim, out, err);
}

pbd_status pbd_mesh_load_obj_memory(const char* data, size_t size, const char* name, bool bend, pbd_mesh* out,
                                    pbd_error* err) {
	const pbd_obj_limits lim = pbd_obj_limits_default();
	return pbd_obj_load_memory(data, size, name, bend, &lim, out, err);
}

pbd_status pbd_mesh_load_obj_groups(const char* path, bool bend, pbd_mesh* out, pbd_obj_groups* groups,
                                    pbd_error* err) {
	const pbd_obj_limits lim = pbd_obj_limits_default();
	return pbd_obj_load_file_groups(path, bend, &lim, out, groups, err);
}

pbd_status pbd_mesh_load_obj_memory_groups(const char* data, size_t size, const char* name, bool bend, pbd_mesh* out,
                                           pbd_obj_groups* groups, pbd_error* err) {
	const pbd_obj_limits lim = pbd_obj_limits_default();
	return pbd_obj_load_memory_groups(data, size, name, bend, &lim, out, groups, err);
}
