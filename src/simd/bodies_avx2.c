/* The rigid bodies' passes of a substep (model/bodies.c) in AVX2 lanes, 4 body slots at a time in
 * double, as the scalar code computes them: each lane makes the scalar code's operations in its
 * order (division and square root correctly rounded, no fused multiply-add under
 * -ffp-contract=off), so the bits are the same (docs/solvers.md, "SIMD lanes"). The caller picks
 * the slots: bodies whose three principal moments are equal take the midpoint rule's step in one
 * go (dynamic_substep), which is the part that fits lanes; the others stay scalar. */
#include <immintrin.h>

#include "model/bodies_simd.h"

#ifdef PBD_DOUBLE
#error "the AVX2 lanes are built for float only (src/CMakeLists.txt)"
#endif

typedef struct d4 {
	__m256d x, y, z;
} d4;

typedef struct dq4 {
	__m256d x, y, z, w;
} dq4;

/* A float at p of 4 consecutive records `stride` floats long, widened to double. */
static inline __m256d load4(const float* p, int stride) {
	return _mm256_cvtps_pd(_mm_setr_ps(p[0], p[stride], p[2 * stride], p[3 * stride]));
}
static inline d4 load_v3(const pbd_vec3* v) {
	const float* p = &v->x;
	return (d4){load4(p, 3), load4(p + 1, 3), load4(p + 2, 3)};
}
static inline dq4 load_q(const pbd_quat* q) {
	const float* p = &q->x;
	return (dq4){load4(p, 4), load4(p + 1, 4), load4(p + 2, 4), load4(p + 3, 4)};
}
/* Narrowed to float, into 4 consecutive records of `stride` floats. */
static inline void store4(float* p, int stride, __m128 v) {
	float t[4];
	_mm_storeu_ps(t, v);
	for (int j = 0; j < 4; ++j) p[j * stride] = t[j];
}
static inline __m128 narrow(__m256d v) { return _mm256_cvtpd_ps(v); }
static inline void store_v3(pbd_vec3* v, d4 a) {
	float* p = &v->x;
	store4(p, 3, narrow(a.x));
	store4(p + 1, 3, narrow(a.y));
	store4(p + 2, 3, narrow(a.z));
}

static inline __m256d add(__m256d a, __m256d b) { return _mm256_add_pd(a, b); }
static inline __m256d sub(__m256d a, __m256d b) { return _mm256_sub_pd(a, b); }
static inline __m256d mul(__m256d a, __m256d b) { return _mm256_mul_pd(a, b); }
static inline __m256d dvd(__m256d a, __m256d b) { return _mm256_div_pd(a, b); }
static inline __m256d neg(__m256d a) { return _mm256_xor_pd(a, _mm256_set1_pd(-0.0)); }

/* bodies.c's dq_mul */
static inline dq4 dq4_mul(dq4 a, dq4 b) {
	return (dq4){sub(add(add(mul(a.w, b.x), mul(a.x, b.w)), mul(a.y, b.z)), mul(a.z, b.y)),
	             add(add(sub(mul(a.w, b.y), mul(a.x, b.z)), mul(a.y, b.w)), mul(a.z, b.x)),
	             add(sub(add(mul(a.w, b.z), mul(a.x, b.y)), mul(a.y, b.x)), mul(a.z, b.w)),
	             sub(sub(sub(mul(a.w, b.w), mul(a.x, b.x)), mul(a.y, b.y)), mul(a.z, b.z))};
}
/* dq_unit */
static inline dq4 dq4_unit(dq4 a) {
	const __m256d n = _mm256_sqrt_pd(add(add(add(mul(a.x, a.x), mul(a.y, a.y)), mul(a.z, a.z)), mul(a.w, a.w)));
	return (dq4){dvd(a.x, n), dvd(a.y, n), dvd(a.z, n), dvd(a.w, n)};
}
/* dq_rotate: R(q) v, or R(q)^T v when inverse */
static inline d4 dq4_rotate(dq4 q, d4 v, bool inverse) {
	if (inverse) q = (dq4){neg(q.x), neg(q.y), neg(q.z), q.w};
	const __m256d two = _mm256_set1_pd(2);
	const __m256d tx = mul(two, sub(mul(q.y, v.z), mul(q.z, v.y)));
	const __m256d ty = mul(two, sub(mul(q.z, v.x), mul(q.x, v.z)));
	const __m256d tz = mul(two, sub(mul(q.x, v.y), mul(q.y, v.x)));
	return (d4){add(add(v.x, mul(q.w, tx)), sub(mul(q.y, tz), mul(q.z, ty))),
	            add(add(v.y, mul(q.w, ty)), sub(mul(q.z, tx), mul(q.x, tz))),
	            add(add(v.z, mul(q.w, tz)), sub(mul(q.x, ty), mul(q.y, tx)))};
}

/* move_centre of one coordinate: x + d as the rounded sum in x and its remainder in lo, with the
 * old remainder taken into d first (two_sum in float). */
static inline void move4(float* x, float* lo, __m256d d) {
	const __m128 a = _mm_setr_ps(x[0], x[3], x[6], x[9]);
	const __m128 l = _mm_setr_ps(lo[0], lo[3], lo[6], lo[9]);
	const __m128 b = narrow(add(_mm256_cvtps_pd(l), d));
	const __m128 s = _mm_add_ps(a, b);
	const __m128 bb = _mm_sub_ps(s, a);
	const __m128 e = _mm_add_ps(_mm_sub_ps(a, _mm_sub_ps(s, bb)), _mm_sub_ps(b, bb));
	store4(x, 3, s);
	store4(lo, 3, e);
}
static inline void move_centre4(pbd_bodies* b, uint32_t i, d4 d) {
	move4(&b->x[i].x, &b->x_lo[i].x, d.x);
	move4(&b->x[i].y, &b->x_lo[i].y, d.y);
	move4(&b->x[i].z, &b->x_lo[i].z, d.z);
}

void pbd_bodies_dynamic_avx2(pbd_bodies* b, uint32_t i, double h_, double damping_, const double g_[3]) {
	const __m256d h = _mm256_set1_pd(h_), damping = _mm256_set1_pd(damping_), one = _mm256_set1_pd(1);
	const __m256d half = _mm256_set1_pd(0.5); /* the scalar code's x / 2: the same rounding */
	const __m256d im = load4(&b->inv_mass[i], 1), gs = load4(&b->gravity_scale[i], 1);
	const __m256d lin = dvd(damping, add(one, mul(h, load4(&b->linear_damping[i], 1))));
	const __m256d ang = dvd(damping, add(one, mul(h, load4(&b->angular_damping[i], 1))));
	d4 v = load_v3(&b->v[i]);
	const d4 f = load_v3(&b->force[i]);
	const __m256d gx = _mm256_set1_pd(g_[0]), gy = _mm256_set1_pd(g_[1]), gz = _mm256_set1_pd(g_[2]);
	v.x = mul(add(v.x, mul(h, add(mul(gx, gs), mul(f.x, im)))), lin);
	v.y = mul(add(v.y, mul(h, add(mul(gy, gs), mul(f.y, im)))), lin);
	v.z = mul(add(v.z, mul(h, add(mul(gz, gs), mul(f.z, im)))), lin);
	move_centre4(b, i, (d4){mul(v.x, h), mul(v.y, h), mul(v.z, h)});
	store_v3(&b->v[i], v);

	/* equal moments: w1 = w0 + h tb / I, then the midpoint's turn */
	const dq4 q = load_q(&b->q[i]);
	const d4 w0 = dq4_rotate(q, load_v3(&b->omega[i]), true);
	const d4 tb = dq4_rotate(q, load_v3(&b->torque[i]), true);
	const d4 I = load_v3(&b->inertia[i]);
	d4 w1 = {add(w0.x, dvd(mul(h, tb.x), I.x)), add(w0.y, dvd(mul(h, tb.y), I.y)), add(w0.z, dvd(mul(h, tb.z), I.z))};
	const d4 wm = {mul(add(w0.x, w1.x), half), mul(add(w0.y, w1.y), half), mul(add(w0.z, w1.z), half)};
	const dq4 turn = dq4_unit((dq4){mul(mul(wm.x, h), half), mul(mul(wm.y, h), half), mul(mul(wm.z, h), half), one});
	const dq4 q1 = dq4_unit(dq4_mul(q, turn));
	w1 = (d4){mul(w1.x, ang), mul(w1.y, ang), mul(w1.z, ang)};
	const d4 out = dq4_rotate(q1, w1, false);
	float* qp = &b->q[i].x;
	store4(qp, 4, narrow(q1.x));
	store4(qp + 1, 4, narrow(q1.y));
	store4(qp + 2, 4, narrow(q1.z));
	store4(qp + 3, 4, narrow(q1.w));
	store_v3(&b->omega[i], out);
}

void pbd_bodies_corrections_avx2(pbd_bodies* b, uint32_t i, pbd_real h) {
	const d4 d = load_v3(&b->dx[i]);
	move_centre4(b, i, d);
	/* q += (dtheta, 0) q / 2, normalised */
	const dq4 q = load_q(&b->q[i]);
	const d4 t = load_v3(&b->dtheta[i]);
	const __m256d half = _mm256_set1_pd(0.5);
	const dq4 spin = {mul(t.x, half), mul(t.y, half), mul(t.z, half), _mm256_setzero_pd()};
	const dq4 dq = dq4_mul(spin, q);
	const dq4 q1 = dq4_unit((dq4){add(q.x, dq.x), add(q.y, dq.y), add(q.z, dq.z), add(q.w, dq.w)});
	float* qp = &b->q[i].x;
	store4(qp, 4, narrow(q1.x));
	store4(qp + 1, 4, narrow(q1.y));
	store4(qp + 2, 4, narrow(q1.z));
	store4(qp + 3, 4, narrow(q1.w));
	/* v += dx / h and w += dtheta / h, in float as the scalar code: by the factor 1 / h */
	const __m128 inv_h = _mm_set1_ps(1 / h);
	float* vp = &b->v[i].x;
	float* wp = &b->omega[i].x;
	const float* dxp = &b->dx[i].x;
	const float* dtp = &b->dtheta[i].x;
	for (int k = 0; k < 12; k += 4) {
		_mm_storeu_ps(vp + k, _mm_add_ps(_mm_loadu_ps(vp + k), _mm_mul_ps(_mm_loadu_ps(dxp + k), inv_h)));
		_mm_storeu_ps(wp + k, _mm_add_ps(_mm_loadu_ps(wp + k), _mm_mul_ps(_mm_loadu_ps(dtp + k), inv_h)));
	}
	for (uint32_t k = 0; k < 4; ++k) b->dx[i + k] = b->dtheta[i + k] = pbd_v3(0, 0, 0);
}
