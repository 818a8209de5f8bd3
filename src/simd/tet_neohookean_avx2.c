/* The Neo-Hookean tetrahedron family's kernels in AVX2 lanes, 8 consecutive positions of one
 * colour group at a time, bit-identical to constraints/tet_neohookean.c's under the rules of
 * distance_avx2.c. The coupled XPBD step's branches (both constraints, one of them, a singular
 * system) become masks: each lane takes the values its branch computes, from inputs zeroed where
 * the branch does not compute them. */
#include "constraints/tet_neohookean.h"
#include "constraints/lanes.h"
#include "simd/tet_avx2.h"
#include "mesh/tet.h"

#define REC sizeof(pbd_tet_nh_c)

/* Dm^-1, row by row, and the record's other fields, for 8 elements. */
typedef struct nh8 {
	__m256 m[9], s[2], gamma, dev_rest, grad2_min;
} nh8;

static inline void load_params(const pbd_tet_nh_c* c, nh8* n) {
	for (int i = 0; i < 9; ++i) n->m[i] = field8(&c->dm_inv[i], REC);
	for (int i = 0; i < 2; ++i) n->s[i] = field8(&c->s[i], REC);
	n->gamma = field8(&c->gamma, REC);
	n->dev_rest = field8(&c->dev_rest, REC);
	n->grad2_min = field8(&c->grad2_min, REC);
}

/* The columns of F: f_k = e1 m[k] + e2 m[3 + k] + e3 m[6 + k]. */
static inline void deformation(const tet8* t, const nh8* n, v8 f[3]) {
	v8 e[3];
	tet8_edges(t, e);
	for (int k = 0; k < 3; ++k)
		f[k] = v8_add(v8_add(v8_scale(e[0], n->m[k]), v8_scale(e[1], n->m[3 + k])), v8_scale(e[2], n->m[6 + k]));
}

/* g_j = P_0 m[3(j-1)] + P_1 m[3(j-1) + 1] + P_2 m[3(j-1) + 2], g_0 = -(g_1 + g_2 + g_3); gives the
 * lanes whose free particles' gradients do not vanish. */
static inline __m256 gradients(const tet8* t, const nh8* n, const v8 P[3], v8 g[4]) {
	for (int j = 0; j < 3; ++j)
		g[j + 1] = v8_add(v8_add(v8_scale(P[0], n->m[3 * j]), v8_scale(P[1], n->m[3 * j + 1])),
		                  v8_scale(P[2], n->m[3 * j + 2]));
	g[0] = tet8_opposite(g);
	return tet8_moves(t, g, n->grad2_min);
}

/* C_D = |F| - dev_rest along F / |F|. A lane whose |F|^2 fails the scalar code's test takes
 * |F|^2 = 1 and F = 0 instead, so that its root and reciprocal raise nothing; its C is 0 there,
 * the value the coupled step starts from. */
static inline __m256 deviatoric(const tet8* t, const nh8* n, const v8 f[3], __m256* C, v8 g[4]) {
	const __m256 r2 = _mm256_add_ps(_mm256_add_ps(v8_dot(f[0], f[0]), v8_dot(f[1], f[1])), v8_dot(f[2], f[2]));
	const __m256 ok =
	    _mm256_cmp_ps(r2, _mm256_set1_ps((float)(PBD_TET_COLLAPSE_REL * PBD_TET_COLLAPSE_REL)), _CMP_GT_OS);
	const __m256 r = _mm256_sqrt_ps(_mm256_blendv_ps(_mm256_set1_ps(1), r2, ok));
	const __m256 inv = _mm256_div_ps(_mm256_set1_ps(1), r);
	const v8 P[3] = {v8_scale(v8_keep(f[0], ok), inv), v8_scale(v8_keep(f[1], ok), inv),
	                 v8_scale(v8_keep(f[2], ok), inv)};
	*C = _mm256_and_ps(_mm256_sub_ps(r, n->dev_rest), ok);
	return _mm256_and_ps(ok, gradients(t, n, P, g));
}

/* C_H = det F - gamma along cof F, formed for every element as in the scalar code. */
static inline __m256 hydrostatic(const tet8* t, const nh8* n, const v8 f[3], __m256* C, v8 g[4]) {
	const v8 P[3] = {v8_cross(f[1], f[2]), v8_cross(f[2], f[0]), v8_cross(f[0], f[1])};
	*C = _mm256_sub_ps(v8_dot(f[0], P[0]), n->gamma);
	return gradients(t, n, P, g);
}

/* constraints/tet_neohookean.c's xpbd_pair: the 2x2 system of both constraints. The lanes with
 * neither constraint return there before anything else: their compliances are zeroed, their
 * gradients are already. */
static inline void xpbd_pair(const pbd_step_ctx* ctx, const tet8* t, const nh8* n, const v8 f[3], float* lambda,
                             bool jacobi) {
	const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1);
	v8 gd[4], gh[4];
	__m256 cd, ch;
	const __m256 has_d = deviatoric(t, n, f, &cd, gd);
	const __m256 has_h = hydrostatic(t, n, f, &ch, gh);
	const __m256 any = _mm256_or_ps(has_d, has_h);
	const bool equal = jacobi && ctx->jacobi_equal;
	__m256 scale = one;
	if (jacobi && !equal)
		scale = _mm256_div_ps(_mm256_set1_ps(ctx->jacobi_omega),
		                      _mm256_add_ps(tet8_degree(ctx, t), _mm256_set1_ps(ctx->jacobi_alpha)));
	__m256 w[4], sdd = zero, shh = zero, sdh = zero;
	for (int i = 0; i < 4; ++i) {
		w[i] = equal ? one : t->iw[i];
		gd[i] = v8_keep(gd[i], has_d);
		gh[i] = v8_keep(gh[i], has_h);
		sdd = _mm256_add_ps(sdd, _mm256_mul_ps(w[i], v8_dot(gd[i], gd[i])));
		shh = _mm256_add_ps(shh, _mm256_mul_ps(w[i], v8_dot(gh[i], gh[i])));
		sdh = _mm256_add_ps(sdh, _mm256_mul_ps(w[i], v8_dot(gd[i], gh[i])));
	}
	const __m256 inv_h2 = _mm256_set1_ps(ctx->inv_h2);
	const __m256 ad = _mm256_mul_ps(_mm256_and_ps(n->s[0], any), inv_h2);
	const __m256 ah = _mm256_mul_ps(_mm256_and_ps(n->s[1], any), inv_h2);
	const __m256i pair = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
	const __m256 l0 = _mm256_i32gather_ps(lambda, pair, 4), l1 = _mm256_i32gather_ps(lambda + 1, pair, 4);
	const __m256 sign = _mm256_set1_ps(-0.0f);
	const __m256 bd = _mm256_sub_ps(_mm256_xor_ps(cd, sign), _mm256_mul_ps(ad, l0));
	const __m256 bh = _mm256_sub_ps(_mm256_xor_ps(ch, sign), _mm256_mul_ps(ah, l1));
	const __m256 a00 = _mm256_add_ps(sdd, ad), a11 = _mm256_add_ps(shh, ah);
	/* both: the determinant from the clamped Gram part, then the system or the volume term alone */
	const __m256 both = _mm256_and_ps(has_d, has_h);
	const __m256 bsdd = _mm256_and_ps(sdd, both), bshh = _mm256_and_ps(shh, both), bsdh = _mm256_and_ps(sdh, both);
	const __m256 bad = _mm256_and_ps(ad, both), bah = _mm256_and_ps(ah, both);
	const __m256 gram0 = _mm256_sub_ps(_mm256_mul_ps(bsdd, bshh), _mm256_mul_ps(bsdh, bsdh));
	const __m256 gram = _mm256_and_ps(gram0, _mm256_cmp_ps(gram0, zero, _CMP_GT_OS));
	const __m256 det =
	    _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(gram, _mm256_mul_ps(bad, bshh)), _mm256_mul_ps(bah, bsdd)),
	                  _mm256_mul_ps(bad, bah));
	const __m256 ba00 = _mm256_and_ps(a00, both), ba11 = _mm256_and_ps(a11, both);
	const __m256 solve = _mm256_and_ps(
	    both,
	    _mm256_cmp_ps(det, _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(PBD_NH_SINGULAR), ba00), ba11), _CMP_GT_OS));
	const __m256 inv = _mm256_div_ps(one, _mm256_blendv_ps(one, det, solve));
	const __m256 sbd = _mm256_and_ps(bd, solve), sbh = _mm256_and_ps(bh, solve), ssdh = _mm256_and_ps(sdh, solve);
	const __m256 sa00 = _mm256_and_ps(a00, solve), sa11 = _mm256_and_ps(a11, solve);
	const __m256 dld2 = _mm256_mul_ps(_mm256_sub_ps(_mm256_mul_ps(sbd, sa11), _mm256_mul_ps(ssdh, sbh)), inv);
	const __m256 dlh2 = _mm256_mul_ps(_mm256_sub_ps(_mm256_mul_ps(sa00, sbh), _mm256_mul_ps(ssdh, sbd)), inv);
	/* the volume term alone: both but singular, or the hydrostatic constraint alone, when a11 > 0;
	 * the deviatoric one alone when a00 > 0 */
	const __m256 only_h = _mm256_or_ps(_mm256_andnot_ps(solve, both), _mm256_andnot_ps(has_d, has_h));
	const __m256 ma11 = _mm256_and_ps(a11, only_h);
	const __m256 use_h = _mm256_and_ps(only_h, _mm256_cmp_ps(ma11, zero, _CMP_GT_OS));
	const __m256 only_d = _mm256_andnot_ps(has_h, has_d);
	const __m256 ma00 = _mm256_and_ps(a00, only_d);
	const __m256 use_d = _mm256_and_ps(only_d, _mm256_cmp_ps(ma00, zero, _CMP_GT_OS));
	const __m256 dlh1 = _mm256_div_ps(_mm256_and_ps(bh, use_h), _mm256_blendv_ps(one, a11, use_h));
	const __m256 dld1 = _mm256_div_ps(_mm256_and_ps(bd, use_d), _mm256_blendv_ps(one, a00, use_d));
	__m256 dld = _mm256_or_ps(_mm256_and_ps(dld2, solve), _mm256_and_ps(dld1, use_d));
	__m256 dlh = _mm256_or_ps(_mm256_and_ps(dlh2, solve), _mm256_and_ps(dlh1, use_h));
	dld = _mm256_mul_ps(dld, scale);
	dlh = _mm256_mul_ps(dlh, scale);
	/* a lane moves unless it had neither constraint or one alone with a zero diagonal */
	const __m256 act = _mm256_or_ps(both, _mm256_or_ps(use_d, use_h));
	_Alignas(32) float d0[LANES], d1[LANES];
	_mm256_store_ps(d0, dld);
	_mm256_store_ps(d1, dlh);
	const unsigned m = (unsigned)_mm256_movemask_ps(act);
	for (int j = 0; j < LANES; ++j) {
		if (!(m >> j & 1)) continue;
		lambda[2 * j] += d0[j];
		lambda[2 * j + 1] += d1[j];
	}
	pbd_vec3* out = jacobi ? ctx->dx : ctx->q;
	for (int i = 0; i < 4; ++i) {
		const v8 base = jacobi ? v8_load3(ctx->dx, t->p[i]) : t->q[i];
		const v8 move = v8_scale(v8_add(v8_scale(gd[i], dld), v8_scale(gh[i], dlh)), w[i]);
		const __m256 mi = jacobi ? act : _mm256_and_ps(act, t->free[i]);
		v8_store3(out, t->p[i], v8_add(base, move), (unsigned)_mm256_movemask_ps(mi));
	}
}

/* Gauss-Seidel under PBD projects the hydrostatic constraint from where the deviatoric one left
 * the particles; Jacobi takes both from the iteration's start, each at half weight. */
static void sweep(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end, bool jacobi) {
	const pbd_tet_nh_c* c = (const pbd_tet_nh_c*)f->hot;
	const bool xpbd = ctx->formulation == PBD_FORMULATION_XPBD;
	for (uint32_t k = first; k < end; k += LANES) {
		tet8 t;
		nh8 n;
		tet8_load(ctx, c[k].p, (int)(REC / sizeof(uint32_t)), &t);
		load_params(&c[k], &n);
		v8 F[3], g[4];
		__m256 C;
		deformation(&t, &n, F);
		if (xpbd) {
			xpbd_pair(ctx, &t, &n, F, f->lambda + 2 * k, jacobi);
			continue;
		}
		__m256 act = deviatoric(&t, &n, F, &C, g);
		if (jacobi) {
			tet8_jacobi(ctx, &t, act, C, g, n.s[0], NULL, 0.5f);
		} else {
			tet8_project(ctx, &t, act, C, g, n.s[0], NULL);
			deformation(&t, &n, F);
		}
		act = hydrostatic(&t, &n, F, &C, g);
		if (jacobi)
			tet8_jacobi(ctx, &t, act, C, g, n.s[1], NULL, 0.5f);
		else
			tet8_project(ctx, &t, act, C, g, n.s[1], NULL);
	}
}

void pbd_tet_neohookean_project_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	sweep(ctx, f, first, end, false);
}

void pbd_tet_neohookean_jacobi_avx2(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end) {
	sweep(ctx, f, first, end, true);
}
