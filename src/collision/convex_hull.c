/* Quickhull (Barber, Dobkin and Huhdanpaa 1996) in double precision, in normalised coordinates,
 * with the visible faces found from the eye point's face across the mesh and the conflict points
 * handed on to the new faces. Robustness: a point counts as outside a face only when it is more
 * than PBD_HULL_EPS above it (the rest are on the hull and dropped); the planes are computed from
 * exactly formed edges with error-free products, so that even a sliver gets an accurate normal;
 * and an insertion whose horizon is not one simple loop (possible only for a point within a few
 * PBD_HULL_EPS of the hull, where rounding can make the visible region a ring) drops that point
 * instead of tearing the mesh. The hull is then a closed, consistently wound triangle mesh with
 * F = 2 V - 4. All work memory lies in the data block; nothing is allocated. */
#include <string.h>

#include "collision/convex_hull.h"

#define NONE UINT32_MAX

#define FACE_ALIVE   1u
#define FACE_QUEUED  2u
#define FACE_VISIBLE 4u

typedef struct hull_face {
	double n[3], offset; /* plane, normalised coordinates */
	uint32_t v[3];       /* point indices, counter-clockwise seen from outside */
	uint32_t nb[3];      /* face across edge v[i] -> v[i + 1] */
	uint32_t head;       /* first conflict point (NONE: none); the next free slot once dead */
	uint32_t flags;
	uint32_t mark; /* the insertion that last classified the face */
	uint32_t pad_;
} hull_face;

/* An edge of the horizon: a -> b as in the visible face, `face` the hidden face across it (whose
 * edge `edge` runs b -> a), `fresh` the face built on it. */
typedef struct horizon_edge {
	uint32_t a, b, face, edge, fresh;
} horizon_edge;

/* Byte offsets of the parts of the data block. The output arrays are sized for the most faces
 * (2 n - 4) and vertices (n) a hull of n points can have. */
typedef struct hull_layout {
	size_t header, planes, vertices, triangles, faces, next, start, horizon, visible, stack, end;
} hull_layout;

static size_t align16(size_t x) { return (x + 15) & ~(size_t)15; }

static hull_layout layout_of(uint32_t n) {
	hull_layout l;
	const size_t fc = 2 * (size_t)n, nn = n;
	l.header = pbd_hull_header_offset(n);
	l.planes = l.header + align16(sizeof(pbd_hull));
	l.vertices = l.planes + align16(fc * sizeof(pbd_hull_plane));
	l.triangles = l.vertices + align16(nn * sizeof(pbd_vec3));
	l.faces = l.triangles + align16(3 * fc * sizeof(uint32_t));
	l.next = l.faces + align16(fc * sizeof(hull_face));
	l.start = l.next + align16(nn * sizeof(uint32_t));
	l.horizon = l.start + align16(nn * sizeof(uint32_t));
	l.visible = l.horizon + align16(3 * nn * sizeof(horizon_edge));
	l.stack = l.visible + align16(fc * sizeof(uint32_t));
	l.end = l.stack + align16(fc * sizeof(uint32_t));
	return l;
}

size_t pbd_hull_data_size(uint32_t n) { return layout_of(n).end; }

/* ---- frame and initial simplex ------------------------------------------------------------ */

static void point_d(const pbd_vec3* p, double x[3]) {
	x[0] = (double)p->x;
	x[1] = (double)p->y;
	x[2] = (double)p->z;
}

static void normalised(const pbd_vec3* p, const pbd_hull_frame* fr, double q[3]) {
	point_d(p, q);
	for (int k = 0; k < 3; ++k) q[k] = (q[k] - fr->center[k]) * fr->inv_scale;
}

void pbd_hull_frame_of(const pbd_vec3* points, uint32_t n, pbd_hull_frame* fr) {
	double x[3];
	point_d(&points[0], x);
	for (int k = 0; k < 3; ++k) fr->lo[k] = fr->hi[k] = x[k];
	for (uint32_t i = 1; i < n; ++i) {
		point_d(&points[i], x);
		for (int k = 0; k < 3; ++k) {
			fr->lo[k] = x[k] < fr->lo[k] ? x[k] : fr->lo[k];
			fr->hi[k] = x[k] > fr->hi[k] ? x[k] : fr->hi[k];
		}
	}
	fr->half = 0;
	for (int k = 0; k < 3; ++k) {
		fr->center[k] = fr->lo[k] / 2 + fr->hi[k] / 2;
		const double h = fr->hi[k] / 2 - fr->lo[k] / 2;
		fr->half = h > fr->half ? h : fr->half;
	}
	int e = 0;
	if (fr->half > 0) (void)frexp(fr->half, &e); /* half = m 2^e, m in [0.5, 1) */
	if (e < -1000) e = -1000;                    /* validation keeps hulls above this size */
	fr->scale = ldexp(1.0, e);
	fr->inv_scale = ldexp(1.0, -e);
}

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void sub3(const double a[3], const double b[3], double out[3]) {
	for (int k = 0; k < 3; ++k) out[k] = a[k] - b[k];
}

static void cross3(const double a[3], const double b[3], double out[3]) {
	out[0] = a[1] * b[2] - a[2] * b[1];
	out[1] = a[2] * b[0] - a[0] * b[2];
	out[2] = a[0] * b[1] - a[1] * b[0];
}

/* s + e = a + b exactly (Knuth's TwoSum). */
static void two_sum(double a, double b, double* s, double* e) {
	*s = a + b;
	const double bv = *s - a, av = *s - bv;
	*e = (a - av) + (b - bv);
}

/* (a - p) x (b - p), with the differences formed exactly (as pairs hi + lo) and the leading
 * products exactly (fma): the result is within a few ulps of itself, not of |a - p| |b - p|,
 * so a sliver's normal is as good as a fat triangle's. */
static void cross_exact(const double p[3], const double a[3], const double b[3], double out[3]) {
	double uh[3], ul[3], vh[3], vl[3];
	for (int k = 0; k < 3; ++k) {
		two_sum(a[k], -p[k], &uh[k], &ul[k]);
		two_sum(b[k], -p[k], &vh[k], &vl[k]);
	}
	for (int k = 0; k < 3; ++k) {
		const int i = (k + 1) % 3, j = (k + 2) % 3; /* out_k = u_i v_j - u_j v_i */
		const double p1 = uh[i] * vh[j], e1 = fma(uh[i], vh[j], -p1);
		const double p2 = uh[j] * vh[i], e2 = fma(uh[j], vh[i], -p2);
		double s, se;
		two_sum(p1, -p2, &s, &se);
		const double lo = se + (e1 - e2) + (uh[i] * vl[j] + ul[i] * vh[j]) - (uh[j] * vl[i] + ul[j] * vh[i]);
		out[k] = s + lo;
	}
}

void pbd_hull_simplex(const pbd_vec3* points, uint32_t n, const pbd_hull_frame* fr, uint32_t idx[4], double* line_dist,
                      double* plane_dist) {
	/* The extreme points along the axes, then the farthest apart pair of them. */
	uint32_t ext[6] = {0, 0, 0, 0, 0, 0};
	double x[3], lo[3], hi[3];
	point_d(&points[0], lo);
	point_d(&points[0], hi);
	for (uint32_t i = 1; i < n; ++i) {
		point_d(&points[i], x);
		for (int k = 0; k < 3; ++k) {
			if (x[k] < lo[k]) {
				lo[k] = x[k];
				ext[2 * k] = i;
			}
			if (x[k] > hi[k]) {
				hi[k] = x[k];
				ext[2 * k + 1] = i;
			}
		}
	}
	double best = -1, q0[3], q1[3], q[3];
	idx[0] = idx[1] = idx[2] = idx[3] = 0;
	for (int a = 0; a < 6; ++a)
		for (int b = a + 1; b < 6; ++b) {
			normalised(&points[ext[a]], fr, q0);
			normalised(&points[ext[b]], fr, q1);
			double d[3];
			sub3(q1, q0, d);
			const double d2 = dot3(d, d);
			if (d2 > best) {
				best = d2;
				idx[0] = ext[a];
				idx[1] = ext[b];
			}
		}
	*line_dist = *plane_dist = 0;
	if (!(best > 0)) return;
	normalised(&points[idx[0]], fr, q0);
	normalised(&points[idx[1]], fr, q1);
	double u[3], w[3], c[3];
	sub3(q1, q0, u);
	best = -1;
	for (uint32_t i = 0; i < n; ++i) {
		normalised(&points[i], fr, q);
		sub3(q, q0, w);
		cross3(w, u, c);
		const double c2 = dot3(c, c);
		if (c2 > best) {
			best = c2;
			idx[2] = i;
		}
	}
	*line_dist = sqrt(best) / sqrt(dot3(u, u));
	if (!(*line_dist > 0)) return;
	double q2[3], nrm[3];
	normalised(&points[idx[2]], fr, q2);
	cross_exact(q0, q1, q2, nrm);
	const double len = sqrt(dot3(nrm, nrm));
	if (!(len > 0)) return;
	for (int k = 0; k < 3; ++k) nrm[k] /= len;
	best = -1;
	for (uint32_t i = 0; i < n; ++i) {
		normalised(&points[i], fr, q);
		sub3(q, q0, w);
		const double h = fabs(dot3(nrm, w));
		if (h > best) {
			best = h;
			idx[3] = i;
		}
	}
	*plane_dist = best;
}

/* ---- quickhull ------------------------------------------------------------------------------ */

typedef struct builder {
	const pbd_vec3* pts;
	const pbd_hull_frame* fr;
	hull_face* f;
	uint32_t fcap, used, free_head, free_count;
	uint32_t* next;  /* conflict lists: the point after each point */
	uint32_t* start; /* per point: the horizon edge starting there, NONE elsewhere */
	horizon_edge* hz;
	uint32_t hcap;
	uint32_t* visible;
	uint32_t* stack;
	uint32_t sp;
	uint32_t iter;
} builder;

static void bq(const builder* b, uint32_t i, double q[3]) { normalised(&b->pts[i], b->fr, q); }

static double face_dist(const builder* b, const hull_face* f, uint32_t i) {
	double q[3];
	bq(b, i, q);
	return dot3(f->n, q) - f->offset;
}

static void face_plane(const builder* b, hull_face* f) {
	double qa[3], qb[3], qc[3], n[3];
	bq(b, f->v[0], qa);
	bq(b, f->v[1], qb);
	bq(b, f->v[2], qc);
	cross_exact(qa, qb, qc, n);
	const double len = sqrt(dot3(n, n));
	if (!(len > 0)) { /* not reached: every face has a height above PBD_HULL_EPS */
		n[0] = n[1] = 0;
		n[2] = 1;
	} else {
		for (int k = 0; k < 3; ++k) n[k] /= len;
	}
	for (int k = 0; k < 3; ++k) f->n[k] = n[k];
	const double da = dot3(n, qa), db = dot3(n, qb), dc = dot3(n, qc);
	f->offset = da > db ? (da > dc ? da : dc) : (db > dc ? db : dc);
}

/* A slot for a new face: a freed one first (it keeps its QUEUED bit: a stale stack entry still
 * names it, and will visit the new face), else the next unused one. */
static uint32_t face_new(builder* b, uint32_t v0, uint32_t v1, uint32_t v2) {
	uint32_t i;
	if (b->free_head != NONE) {
		i = b->free_head;
		b->free_head = b->f[i].head;
		b->free_count--;
	} else {
		i = b->used++;
	}
	hull_face* f = &b->f[i];
	f->flags = FACE_ALIVE | (f->flags & FACE_QUEUED);
	f->v[0] = v0;
	f->v[1] = v1;
	f->v[2] = v2;
	f->nb[0] = f->nb[1] = f->nb[2] = NONE;
	f->head = NONE;
	f->mark = 0;
	face_plane(b, f);
	return i;
}

static void push_conflict(builder* b, uint32_t face, uint32_t point) {
	b->next[point] = b->f[face].head;
	b->f[face].head = point;
}

static void queue_face(builder* b, uint32_t face) {
	hull_face* f = &b->f[face];
	if ((f->flags & FACE_ALIVE) && f->head != NONE && !(f->flags & FACE_QUEUED)) {
		f->flags |= FACE_QUEUED;
		b->stack[b->sp++] = face;
	}
}

/* The edge of face g that runs from `from` to `to`. */
static uint32_t edge_of(const hull_face* g, uint32_t from, uint32_t to) {
	for (uint32_t k = 0; k < 3; ++k)
		if (g->v[k] == from && g->v[(k + 1) % 3] == to) return k;
	return NONE;
}

/* Adds point p, which lies more than PBD_HULL_EPS above face f0. False (and nothing changed)
 * when the horizon is not one simple loop or the slots would not suffice: p is then dropped. */
static bool insert(builder* b, uint32_t f0, uint32_t p) {
	const uint32_t iter = ++b->iter;
	uint32_t nv = 0, nh = 0;
	bool ok = true;
	b->f[f0].mark = iter;
	b->f[f0].flags |= FACE_VISIBLE;
	b->visible[nv++] = f0;
	for (uint32_t i = 0; i < nv && ok; ++i) {
		const hull_face* f = &b->f[b->visible[i]];
		for (uint32_t e = 0; e < 3; ++e) {
			const uint32_t gi = f->nb[e];
			hull_face* g = &b->f[gi];
			if (g->mark != iter) {
				g->mark = iter;
				if (face_dist(b, g, p) > PBD_HULL_EPS) {
					g->flags |= FACE_VISIBLE;
					b->visible[nv++] = gi;
					continue;
				}
				g->flags &= ~FACE_VISIBLE;
			} else if (g->flags & FACE_VISIBLE) {
				continue;
			}
			const uint32_t a = f->v[e], bb = f->v[(e + 1) % 3], ge = edge_of(g, bb, a);
			if (nh == b->hcap || ge == NONE) {
				ok = false;
				break;
			}
			horizon_edge* h = &b->hz[nh++];
			h->a = a;
			h->b = bb;
			h->face = gi;
			h->edge = ge;
			h->fresh = NONE;
		}
	}
	/* One simple loop: every horizon vertex starts one edge, and following the edges from the
	 * first comes back to it after all of them. */
	for (uint32_t i = 0; i < nh && ok; ++i) {
		if (b->start[b->hz[i].a] != NONE)
			ok = false;
		else
			b->start[b->hz[i].a] = i;
	}
	if (ok && nh >= 3) {
		uint32_t h = 0, steps = 0;
		do {
			h = b->start[b->hz[h].b];
			++steps;
		} while (h != NONE && h != 0 && steps <= nh);
		ok = h == 0 && steps == nh;
	} else {
		ok = false;
	}
	if (ok && b->free_count + nv + (b->fcap - b->used) < nh) ok = false;
	if (!ok) {
		for (uint32_t i = 0; i < nh; ++i) b->start[b->hz[i].a] = NONE;
		for (uint32_t i = 0; i < nv; ++i) b->f[b->visible[i]].flags &= ~FACE_VISIBLE;
		return false;
	}

	/* The conflict points of the visible faces, in one chain; then the faces are freed. */
	uint32_t chain = NONE;
	for (uint32_t i = 0; i < nv; ++i) {
		hull_face* f = &b->f[b->visible[i]];
		for (uint32_t q = f->head; q != NONE;) {
			const uint32_t nx = b->next[q];
			b->next[q] = chain;
			chain = q;
			q = nx;
		}
		f->flags &= ~(FACE_ALIVE | FACE_VISIBLE);
		f->head = b->free_head;
		b->free_head = b->visible[i];
		b->free_count++;
	}

	/* A cone of faces from p over the horizon, linked to the hidden faces and to each other. */
	for (uint32_t i = 0; i < nh; ++i) {
		horizon_edge* h = &b->hz[i];
		const uint32_t nf = face_new(b, h->a, h->b, p);
		h->fresh = nf;
		b->f[nf].nb[0] = h->face;
		b->f[h->face].nb[h->edge] = nf;
	}
	for (uint32_t i = 0; i < nh; ++i) {
		const uint32_t nf = b->hz[i].fresh, after = b->hz[b->start[b->hz[i].b]].fresh;
		b->f[nf].nb[1] = after;
		b->f[after].nb[2] = nf;
	}
	for (uint32_t i = 0; i < nh; ++i) b->start[b->hz[i].a] = NONE;

	/* Each freed conflict point goes to the first new face it lies above, or is inside now. */
	for (uint32_t q = chain; q != NONE;) {
		const uint32_t nx = b->next[q];
		for (uint32_t i = 0; i < nh; ++i)
			if (face_dist(b, &b->f[b->hz[i].fresh], q) > PBD_HULL_EPS) {
				push_conflict(b, b->hz[i].fresh, q);
				break;
			}
		q = nx;
	}
	for (uint32_t i = nh; i-- > 0;) queue_face(b, b->hz[i].fresh);
	return true;
}

void pbd_hull_build(const pbd_vec3* points, uint32_t n, void* data) {
	char* base = (char*)data;
	const hull_layout l = layout_of(n);
	const size_t pts_bytes = (size_t)n * sizeof(pbd_vec3);
	memmove(base, points, pts_bytes);
	memset(base + pts_bytes, 0, l.end - pts_bytes);
	const pbd_vec3* pts = (const pbd_vec3*)data;

	pbd_hull_frame fr;
	pbd_hull_frame_of(pts, n, &fr);
	uint32_t idx[4];
	double line_dist, plane_dist;
	pbd_hull_simplex(pts, n, &fr, idx, &line_dist, &plane_dist);

	builder b;
	b.pts = pts;
	b.fr = &fr;
	b.f = (hull_face*)(void*)(base + l.faces);
	b.fcap = 2 * n;
	b.used = 0;
	b.free_head = NONE;
	b.free_count = 0;
	b.next = (uint32_t*)(void*)(base + l.next);
	b.start = (uint32_t*)(void*)(base + l.start);
	b.hz = (horizon_edge*)(void*)(base + l.horizon);
	b.hcap = 3 * n;
	b.visible = (uint32_t*)(void*)(base + l.visible);
	b.stack = (uint32_t*)(void*)(base + l.stack);
	b.sp = 0;
	b.iter = 0;
	for (uint32_t i = 0; i < n; ++i) b.start[i] = NONE;

	/* The tetrahedron, wound so that its normals point away from the fourth point. */
	double q0[3], q1[3], q2[3], q3[3], nrm[3], w[3];
	bq(&b, idx[0], q0);
	bq(&b, idx[1], q1);
	bq(&b, idx[2], q2);
	bq(&b, idx[3], q3);
	cross_exact(q0, q1, q2, nrm);
	sub3(q3, q0, w);
	if (dot3(nrm, w) > 0) {
		const uint32_t t = idx[1];
		idx[1] = idx[2];
		idx[2] = t;
	}
	const uint32_t a = idx[0], c1 = idx[1], c2 = idx[2], d = idx[3];
	const uint32_t tet[4][3] = {{a, c1, c2}, {a, d, c1}, {c1, d, c2}, {c2, d, a}};
	for (int i = 0; i < 4; ++i) face_new(&b, tet[i][0], tet[i][1], tet[i][2]);
	for (uint32_t i = 0; i < 4; ++i)
		for (uint32_t e = 0; e < 3; ++e)
			for (uint32_t j = 0; j < 4; ++j) {
				const uint32_t k = edge_of(&b.f[j], b.f[i].v[(e + 1) % 3], b.f[i].v[e]);
				if (j != i && k != NONE) b.f[i].nb[e] = j;
			}
	for (uint32_t i = 0; i < n; ++i) {
		if (i == idx[0] || i == idx[1] || i == idx[2] || i == idx[3]) continue;
		for (uint32_t j = 0; j < 4; ++j)
			if (face_dist(&b, &b.f[j], i) > PBD_HULL_EPS) {
				push_conflict(&b, j, i);
				break;
			}
	}
	for (uint32_t j = 4; j-- > 0;) queue_face(&b, j);

	/* Take a face with conflict points, add its farthest one. Each round adds or drops a point,
	 * or empties a stack entry, so the loop ends. */
	while (b.sp > 0) {
		const uint32_t fi = b.stack[--b.sp];
		hull_face* f = &b.f[fi];
		f->flags &= ~FACE_QUEUED;
		if (!(f->flags & FACE_ALIVE) || f->head == NONE) continue;
		uint32_t best = NONE, best_prev = NONE, prev = NONE;
		double best_d = -1;
		for (uint32_t q = f->head; q != NONE; prev = q, q = b.next[q]) {
			const double dq = face_dist(&b, f, q);
			if (dq > best_d) {
				best_d = dq;
				best = q;
				best_prev = prev;
			}
		}
		if (best_prev == NONE)
			f->head = b.next[best];
		else
			b.next[best_prev] = b.next[best];
		insert(&b, fi, best);
		queue_face(&b, fi); /* still alive when the point was dropped */
	}

	/* Output: the vertices in input order, the faces in slot order. */
	pbd_hull h;
	memset(&h, 0, sizeof h);
	uint32_t* remap = b.start;
	for (uint32_t s = 0; s < b.used; ++s)
		if (b.f[s].flags & FACE_ALIVE)
			for (int k = 0; k < 3; ++k) remap[b.f[s].v[k]] = 0;
	pbd_vec3* verts = (pbd_vec3*)(void*)(base + l.vertices);
	for (uint32_t i = 0; i < n; ++i)
		if (remap[i] != NONE) {
			remap[i] = h.vertex_count;
			verts[h.vertex_count++] = pts[i];
		}
	pbd_hull_plane* planes = (pbd_hull_plane*)(void*)(base + l.planes);
	uint32_t* tris = (uint32_t*)(void*)(base + l.triangles);
	for (uint32_t s = 0; s < b.used; ++s) {
		const hull_face* f = &b.f[s];
		if (!(f->flags & FACE_ALIVE)) continue;
		pbd_hull_plane* pl = &planes[h.face_count];
		for (int k = 0; k < 3; ++k) {
			pl->n[k] = f->n[k];
			tris[3 * (size_t)h.face_count + (size_t)k] = remap[f->v[k]];
		}
		pl->offset = f->offset;
		h.face_count++;
	}
	PBD_ASSERT(h.face_count == 2 * h.vertex_count - 4);
	for (int k = 0; k < 3; ++k) h.center[k] = fr.center[k];
	h.scale = fr.scale;
	h.inv_scale = fr.inv_scale;
	h.lo = pbd_v3((pbd_real)fr.lo[0], (pbd_real)fr.lo[1], (pbd_real)fr.lo[2]);
	h.hi = pbd_v3((pbd_real)fr.hi[0], (pbd_real)fr.hi[1], (pbd_real)fr.hi[2]);
	h.point_count = n;
	h.plane_offset = l.planes;
	h.vertex_offset = l.vertices;
	h.triangle_offset = l.triangles;
	memcpy(base + l.header, &h, sizeof h);
	memset(base + l.faces, 0, l.end - l.faces);
}
