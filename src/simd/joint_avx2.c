/* The joints' point holds in AVX2 lanes: 8 consecutive positions of one colour group at a time,
 * bit-identical to constraints/joint.c's hold_point under the rules of distance_avx2.c
 * (docs/solvers.md, "SIMD lanes"). Each lane makes the scalar code's operations in its order:
 * the sides' arms (orientation_now, user_now, point_side), their separation, then
 * correct_point with the bodies' weights and pushes of model/node.h. A batch in which some joint
 * is anything but a ball joint holding two awake dynamic bodies at its point alone goes to the
 * scalar kernel whole: the joints of one colour share no body, so which of them run in lanes
 * changes no bit. A lane the scalar code skips (|d| below PBD_EPSILON_LENGTH, a zero
 * denominator, a zero correction) gets divisors of 1 and writes nothing. */
#include <stddef.h>

#include "constraints/joint.h"
#include "model/bodies.h"
#include "simd/v8_avx2.h"

#define REC sizeof(pbd_joint_c)

typedef struct q8 {
	__m256 x, y, z, w;
} q8;

static inline q8 q8_load(const pbd_quat* q, const uint32_t idx[LANES]) {
	__m128 r[LANES];
	for (int j = 0; j < LANES; ++j) r[j] = _mm_loadu_ps(&q[idx[j]].x);
	__m256 c[4];
	transpose(r, c, 4);
	return (q8){c[0], c[1], c[2], c[3]};
}

/* pbd_quat_mul */
static inline q8 q8_mul(q8 a, q8 b) {
	const __m256 x = _mm256_sub_ps(
	    _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(a.w, b.x), _mm256_mul_ps(a.x, b.w)), _mm256_mul_ps(a.y, b.z)),
	    _mm256_mul_ps(a.z, b.y));
	const __m256 y = _mm256_add_ps(
	    _mm256_add_ps(_mm256_sub_ps(_mm256_mul_ps(a.w, b.y), _mm256_mul_ps(a.x, b.z)), _mm256_mul_ps(a.y, b.w)),
	    _mm256_mul_ps(a.z, b.x));
	const __m256 z = _mm256_add_ps(
	    _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(a.w, b.z), _mm256_mul_ps(a.x, b.y)), _mm256_mul_ps(a.y, b.x)),
	    _mm256_mul_ps(a.z, b.w));
	const __m256 w = _mm256_sub_ps(
	    _mm256_sub_ps(_mm256_sub_ps(_mm256_mul_ps(a.w, b.w), _mm256_mul_ps(a.x, b.x)), _mm256_mul_ps(a.y, b.y)),
	    _mm256_mul_ps(a.z, b.z));
	return (q8){x, y, z, w};
}

/* pbd_quat_conj */
static inline q8 q8_conj(q8 a) { return (q8){v8_neg(a.x), v8_neg(a.y), v8_neg(a.z), a.w}; }

/* pbd_quat_rotate: v + 2 w (u x v) + u x (2 u x v) */
static inline v8 q8_rotate(q8 q, v8 v) {
	const v8 u = {q.x, q.y, q.z};
	const v8 t = v8_scale(v8_cross(u, v), _mm256_set1_ps(2));
	return v8_add(v8_add(v, v8_scale(t, q.w)), v8_cross(u, t));
}

static inline q8 q8_select(q8 a, q8 b, __m256 mask) {
	return (q8){_mm256_blendv_ps(a.x, b.x, mask), _mm256_blendv_ps(a.y, b.y, mask), _mm256_blendv_ps(a.z, b.z, mask),
	            _mm256_blendv_ps(a.w, b.w, mask)};
}

/* joint.c's orientation_now: q + (dtheta / 2, 0) q, normalised; q itself where dtheta is 0. The
 * lanes that keep q turn the identity instead, so that they compute nothing the scalar code does
 * not. */
static inline q8 orientation_now8(q8 q, v8 t) {
	const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1), two = _mm256_set1_ps(2);
	const __m256 still =
	    _mm256_and_ps(_mm256_and_ps(_mm256_cmp_ps(t.x, zero, _CMP_EQ_OQ), _mm256_cmp_ps(t.y, zero, _CMP_EQ_OQ)),
	                  _mm256_cmp_ps(t.z, zero, _CMP_EQ_OQ));
	const q8 base = q8_select(q, (q8){zero, zero, zero, one}, still);
	const q8 spin = {_mm256_div_ps(t.x, two), _mm256_div_ps(t.y, two), _mm256_div_ps(t.z, two), zero};
	const q8 dq = q8_mul(spin, base);
	q8 r = {_mm256_add_ps(base.x, dq.x), _mm256_add_ps(base.y, dq.y), _mm256_add_ps(base.z, dq.z),
	        _mm256_add_ps(base.w, dq.w)};
	const __m256 sq = _mm256_add_ps(
	    _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(r.x, r.x), _mm256_mul_ps(r.y, r.y)), _mm256_mul_ps(r.z, r.z)),
	    _mm256_mul_ps(r.w, r.w));
	const __m256 inv = _mm256_div_ps(one, _mm256_sqrt_ps(sq));
	r = (q8){_mm256_mul_ps(r.x, inv), _mm256_mul_ps(r.y, inv), _mm256_mul_ps(r.z, inv), _mm256_mul_ps(r.w, inv)};
	return q8_select(r, q, still);
}

/* One side of 8 joints: its bodies and the lever arms of its points, as point_side gives them. */
typedef struct side8 {
	uint32_t s[LANES];
	v8 r;
	__m256 im; /* inverse masses */
} side8;

static inline void side8_arm(const pbd_bodies* b, const pbd_joint_c* c, bool is_b, side8* sd) {
	for (int j = 0; j < LANES; ++j) sd->s[j] = (is_b ? c[j].b : c[j].a) - 1;
	const float* p = is_b ? &c->pb.x : &c->pa.x;
	const v8 point = {field8(p, REC), field8(p + 1, REC), field8(p + 2, REC)};
	const q8 now = orientation_now8(q8_load(b->q, sd->s), v8_load3(b->dtheta, sd->s));
	const q8 user = q8_mul(now, q8_conj(q8_load(b->principal, sd->s)));
	sd->r = q8_rotate(user, v8_sub(point, v8_load3(b->center, sd->s)));
	sd->im = _mm256_i32gather_ps(b->inv_mass, idx8(sd->s), 4);
}

/* model/node.h's pbd_node_inv_inertia of the vectors v: v / I where the three moments are equal,
 * else through the principal axes at the committed orientation (computed only when some lane
 * needs it). */
static inline v8 inv_inertia8(const pbd_bodies* b, const side8* sd, v8 v) {
	const v8 m = v8_load3(b->inertia, sd->s);
	const __m256 iso = _mm256_and_ps(_mm256_cmp_ps(m.x, m.y, _CMP_EQ_OQ), _mm256_cmp_ps(m.y, m.z, _CMP_EQ_OQ));
	const v8 round = v8_scale(v, _mm256_div_ps(_mm256_set1_ps(1), m.x));
	if (v8_mask_bits(iso) == 0xffu) return round;
	const q8 q = q8_load(b->q, sd->s);
	v8 l = q8_rotate(q8_conj(q), v);
	l = (v8){_mm256_div_ps(l.x, m.x), _mm256_div_ps(l.y, m.y), _mm256_div_ps(l.z, m.z)};
	return v8_select(q8_rotate(q, l), round, iso);
}

/* pbd_node_body_weight: w = 1/m + (r x n) . I^-1 (r x n), with I^-1 (r x n) in *irn. */
static inline __m256 weight8(const pbd_bodies* b, const side8* sd, v8 n, v8* irn) {
	const v8 rn = v8_cross(sd->r, n);
	*irn = inv_inertia8(b, sd, rn);
	return _mm256_add_ps(sd->im, v8_dot(rn, *irn));
}

/* pbd_node_body_push on the lanes in `lanes`: dx += n (dl / m), dtheta += dl I^-1 (r x n). */
static inline void push8(pbd_bodies* b, const side8* sd, v8 n, v8 irn, __m256 dl, unsigned lanes) {
	v8_store3(b->dx, sd->s, v8_add(v8_load3(b->dx, sd->s), v8_scale(n, _mm256_mul_ps(sd->im, dl))), lanes);
	v8_store3(b->dtheta, sd->s, v8_add(v8_load3(b->dtheta, sd->s), v8_scale(irn, dl)), lanes);
}

/* Whether all 8 joints hold their point alone between two awake dynamic bodies. */
static bool in_lanes(const pbd_bodies* b, const pbd_joint_c* c) {
	for (int j = 0; j < LANES; ++j)
		if (!pbd_joint_point_only(&c[j]) || (c[j].flags & PBD_JOINT_BROKEN) || !c[j].a || !c[j].b ||
		    !pbd_body_moves(b, c[j].a - 1) || !pbd_body_moves(b, c[j].b - 1))
			return false;
	return true;
}

/* pbd_joint_separation of two bodies: the centres' difference, then 0 + (b's remainder, arm and
 * move) less a's. */
static inline v8 separation8(const pbd_bodies* b, const side8* A, const side8* B) {
	const __m256 zero = _mm256_setzero_ps();
	const v8 near_b = v8_add(v8_add(v8_load3(b->x_lo, B->s), B->r), v8_load3(b->dx, B->s));
	const v8 near_a = v8_add(v8_add(v8_load3(b->x_lo, A->s), A->r), v8_load3(b->dx, A->s));
	const v8 near = v8_sub(v8_add((v8){zero, zero, zero}, near_b), near_a);
	return v8_add(v8_sub(v8_load3(b->x, B->s), v8_load3(b->x, A->s)), near);
}

static void hold8(const pbd_step_ctx* ctx, const pbd_joint_c* c, float* lambda) {
	pbd_bodies* b = ctx->bodies;
	side8 A, B;
	side8_arm(b, c, false, &A);
	side8_arm(b, c, true, &B);
	const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1);
	const v8 d = separation8(b, &A, &B);
	/* correct_point */
	const __m256 C = _mm256_sqrt_ps(v8_dot(d, d));
	const __m256 act = _mm256_cmp_ps(C, _mm256_set1_ps(PBD_EPSILON_LENGTH), _CMP_GE_OS);
	const v8 n = v8_scale(d, _mm256_div_ps(one, _mm256_blendv_ps(one, C, act)));
	v8 ia, ib;
	const __m256 wa = weight8(b, &A, n, &ia), wb = weight8(b, &B, n, &ib);
	/* dlambda */
	const __m256i at_idx =
	    _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)PBD_JOINT_L_COUNT));
	const __m256 lam = _mm256_i32gather_ps(lambda + PBD_JOINT_L_POINT, at_idx, 4);
	const __m256 at = _mm256_mul_ps(field8(&c->compliance, REC), _mm256_set1_ps(ctx->inv_h2));
	const __m256 den = _mm256_add_ps(_mm256_add_ps(wa, wb), at);
	const __m256 moves = _mm256_and_ps(act, _mm256_cmp_ps(den, zero, _CMP_GT_OS));
	const __m256 dl =
	    _mm256_div_ps(_mm256_sub_ps(v8_neg(C), _mm256_mul_ps(at, lam)), _mm256_blendv_ps(one, den, moves));
	float lam_out[LANES];
	_mm256_storeu_ps(lam_out, _mm256_add_ps(lam, dl));
	const unsigned moved = v8_mask_bits(moves);
	const unsigned pushed = moved & ~v8_mask_bits(_mm256_cmp_ps(dl, zero, _CMP_EQ_OQ));
	for (int j = 0; j < LANES; ++j)
		if (moved >> j & 1) lambda[(size_t)j * PBD_JOINT_L_COUNT + PBD_JOINT_L_POINT] = lam_out[j];
	if (!pushed) return;
	push8(b, &A, n, ia, v8_neg(dl), pushed);
	push8(b, &B, n, ib, dl, pushed);
	/* the impulse on b: force[] += dl n */
	const v8 dn = v8_scale(n, dl);
	__m128 r[LANES];
	untranspose(dn.x, dn.y, dn.z, r);
	float add[4];
	for (int j = 0; j < LANES; ++j) {
		if (!(pushed >> j & 1)) continue;
		float* force = lambda + (size_t)j * PBD_JOINT_L_COUNT + PBD_JOINT_L_FORCE;
		_mm_storeu_ps(add, r[j]);
		force[0] += add[0], force[1] += add[1], force[2] += add[2];
	}
}

void pbd_joint_project_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	const pbd_joint_c* c = (const pbd_joint_c*)f->hot;
	for (uint32_t k = first; k < end; k += LANES) {
		if (in_lanes(ctx->bodies, &c[k]))
			hold8(ctx, &c[k], f->lambda + (size_t)k * PBD_JOINT_L_COUNT);
		else
			pbd_joint_project(ctx, f, k, k + LANES);
	}
}

bool pbd_joint_distances_avx2(const pbd_bodies* b, const pbd_joint_c* c, float out[LANES]) {
	for (int j = 0; j < LANES; ++j)
		if ((c[j].type != PBD_JOINT_BALL && c[j].type != PBD_JOINT_HINGE && c[j].type != PBD_JOINT_FIXED) || !c[j].a ||
		    !c[j].b)
			return false;
	side8 A, B;
	side8_arm(b, c, false, &A);
	side8_arm(b, c, true, &B);
	const v8 d = separation8(b, &A, &B);
	_mm256_storeu_ps(out, _mm256_sqrt_ps(v8_dot(d, d)));
	return true;
}
