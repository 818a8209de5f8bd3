/* SIMD lanes: the families' vector kernels give the scalar kernels' bits. Both run on
 * copies of one state and every byte of q, dx and lambda is compared, over the cases where the
 * lanes must mask or sanitise (pinned ends, coincident ends, stiffness 0 and 1, stretch against
 * compress, compliance 0, coordinates at 1e6); then whole worlds stepped with PBD_SIMD_SCALAR
 * and PBD_SIMD_AVX2 must end with the same hash. Skipped, with the reason printed, where the
 * build or the CPU has no AVX2. */
#include <stdio.h>
#include <stdlib.h>

#include "constraints/distance.h"
#include "core/cpu.h"
#include "pbd/scene.h"
#include "test_physics.h"
#include "model/world.h"

#define NC 61 /* 7 lanes of 8 and a scalar tail of 5 */
#define NP (2 * NC + 6)

typedef struct state {
	pbd_vec3 x[NP], q[NP], dx[NP];
	pbd_real iw[NP];
	uint32_t degree[NP];
	pbd_distance_c c[NC];
	pbd_real lambda[NC];
	pbd_real lanes[(NC * PBD_DISTANCE_LANES_SIZE + sizeof(pbd_real) - 1) / sizeof(pbd_real)]; /* pbd_family.lanes */
} kstate;

typedef struct kernel_case {
	const char* name;
	pbd_formulation formulation;
	bool jacobi, equal;
	double offset;     /* added to every coordinate */
	double pinned;     /* fraction of particles with inverse mass 0 */
	double coincident; /* fraction of constraints whose ends coincide */
	const pbd_real* s; /* the values s[0] and s[1] are drawn from */
	int s_count;
	/* Batch m of the lanes takes the particles 16 m ... 16 m + 15 in the layouts of a grid's colour
	 * groups, which the AVX-512 lanes move as runs (simd/runs_avx512.h): m % 3 = 0 as (p, p + 1)
	 * pairs, 1 as two rows of 8 (p + j, p + 8 + j), 2 as the rows the other way round. */
	bool runs;
} kernel_case;

static uint64_t rng_state;
static double rnd(void) { /* in [0, 1) */
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}
static pbd_real rnd_in(double lo, double hi) { return (pbd_real)(lo + (hi - lo) * rnd()); }

/* One colour's worth of constraints: every particle is used at most once. */
static void make_state(const kernel_case* kc, kstate* s) {
	memset(s, 0, sizeof *s);
	uint32_t perm[NP];
	for (uint32_t i = 0; i < NP; ++i) perm[i] = i;
	for (uint32_t i = NP - 1; i > 0; --i) {
		const uint32_t j = (uint32_t)(rnd() * (double)(i + 1));
		const uint32_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (uint32_t i = 0; i < NP; ++i) {
		s->x[i] = pbd_v3((pbd_real)(kc->offset + (double)rnd_in(-1, 1)), (pbd_real)(kc->offset + (double)rnd_in(-1, 1)),
		                 (pbd_real)(kc->offset + (double)rnd_in(-1, 1)));
		s->q[i] = pbd_v3(rnd_in(-1e-3, 1e-3), rnd_in(-1e-3, 1e-3), rnd_in(-1e-3, 1e-3));
		s->dx[i] = pbd_v3(rnd_in(-1e-4, 1e-4), 0, rnd_in(-1e-4, 1e-4));
		s->iw[i] = rnd() < kc->pinned ? 0 : rnd_in(0.5, 2);
		s->degree[i] = 1 + (uint32_t)(rnd() * 8);
	}
	for (uint32_t k = 0; k < NC; ++k) {
		pbd_distance_c* c = &s->c[k];
		c->a = perm[2 * k];
		c->b = perm[2 * k + 1];
		if (kc->runs) {
			const uint32_t m = k / 8, j = k % 8, p = 16 * m;
			c->a = m % 3 == 0 ? p + 2 * j : m % 3 == 1 ? p + j : p + 8 + j;
			c->b = m % 3 == 0 ? p + 2 * j + 1 : m % 3 == 1 ? p + 8 + j : p + j;
			/* the scalar tail's few constraints */
			if (k >= NC / 8 * 8) {
				c->a = 2 * k;
				c->b = 2 * k + 1;
			}
		}
		if (rnd() < kc->coincident) {
			s->x[c->b] = s->x[c->a];
			s->q[c->b] = s->q[c->a];
		}
		const pbd_vec3 d = pbd_v3_sub(s->x[c->a], s->x[c->b]);
		/* stretched, compressed and zero rest lengths */
		c->rest = rnd() < 0.1 ? 0 : pbd_v3_length(d) * rnd_in(0.7, 1.3);
		c->s[0] = kc->s[(int)(rnd() * kc->s_count)];
		c->s[1] = kc->s[(int)(rnd() * kc->s_count)];
		s->lambda[k] = kc->formulation == PBD_FORMULATION_XPBD ? rnd_in(-1e-2, 1e-2) : 0;
	}
}

static void make_ctx(const kernel_case* kc, kstate* s, pbd_step_ctx* ctx, pbd_family* f) {
	memset(ctx, 0, sizeof *ctx);
	ctx->x = s->x;
	ctx->q = s->q;
	ctx->iw = s->iw;
	ctx->dx = s->dx;
	ctx->degree = s->degree;
	ctx->h = (pbd_real)(1.0 / 240.0);
	ctx->inv_h2 = 1 / (ctx->h * ctx->h);
	ctx->substep_fraction = 1;
	ctx->formulation = kc->formulation;
	ctx->iterations = 4;
	ctx->jacobi_equal = kc->equal;
	ctx->jacobi_alpha = (pbd_real)0.2;
	ctx->jacobi_omega = (pbd_real)1.3;
	ctx->simd = true;
	memset(f, 0, sizeof *f);
	f->n = f->cap = NC;
	f->hot = s->c;
	f->lambda = s->lambda;
	f->lanes = s->lanes;
	for (int g = 0; g < PBD_GROUP_COUNT; ++g) f->group_end[g] = NC;
	pbd_distance_copy_lanes(f, true);
}

static bool have_avx2(void) {
	if (pbd_cpu_avx2()) return true;
	printf("skipped: %s\n", pbd_simd_built() ? "this CPU has no AVX2 and FMA" : "this build has no AVX2 kernels");
	return false;
}

static void run_kernel_case(const kernel_case* kc, bool avx512) {
	const pbd_family_ops* ops = pbd_family_table[PBD_FAMILY_DISTANCE];
	assert_non_null(ops->project_lanes);
	assert_non_null(ops->jacobi_lanes);
	static kstate ref, vec, start;
	rng_state = 12345;
	for (int trial = 0; trial < 20; ++trial) {
		make_state(kc, &start);
		ref = start;
		vec = start;
		pbd_step_ctx cr, cv;
		pbd_family fr, fv;
		make_ctx(kc, &ref, &cr, &fr);
		make_ctx(kc, &vec, &cv, &fv);
		cv.avx512 = avx512;
		const uint32_t split = NC / 8 * 8;
		/* every batch of the runs layouts takes the runs path where the AVX-512 lanes run */
		if (avx512) assert_int_equal(pbd_distance_run_batches(&fv, 0, split), kc->runs ? split / 8 : 0);
		/* several sweeps, so that later ones start from moved particles and grown multipliers */
		for (int sweep = 0; sweep < 4; ++sweep) {
			if (kc->jacobi) {
				ops->jacobi(&cr, &fr, 0, NC);
				ops->jacobi_lanes(&cv, &fv, 0, split);
				ops->jacobi(&cv, &fv, split, NC);
			} else {
				ops->project(&cr, &fr, 0, NC);
				ops->project_lanes(&cv, &fv, 0, split);
				ops->project(&cv, &fv, split, NC);
			}
		}
		if (memcmp(ref.q, vec.q, sizeof ref.q) || memcmp(ref.dx, vec.dx, sizeof ref.dx) ||
		    memcmp(ref.lambda, vec.lambda, sizeof ref.lambda)) {
			for (uint32_t k = 0; k < NC; ++k) {
				const uint32_t a = ref.c[k].a;
				if (memcmp(&ref.q[a], &vec.q[a], sizeof ref.q[a]) || memcmp(&ref.dx[a], &vec.dx[a], sizeof ref.dx[a]) ||
				    memcmp(&ref.lambda[k], &vec.lambda[k], sizeof ref.lambda[k]))
					printf(
					    "%s trial %d: constraint %u differs: q.x %.9g / %.9g, dx.x %.9g / %.9g, lambda %.9g / %.9g\n",
					    kc->name, trial, k, (double)ref.q[a].x, (double)vec.q[a].x, (double)ref.dx[a].x,
					    (double)vec.dx[a].x, (double)ref.lambda[k], (double)vec.lambda[k]);
			}
			fail_msg("%s: lanes and scalar kernel differ", kc->name);
		}
		/* the case moved something, so that equal bits are not the trivial untouched state */
		const bool moved =
		    kc->jacobi ? memcmp(ref.dx, start.dx, sizeof ref.dx) != 0 : memcmp(ref.q, start.q, sizeof ref.q) != 0;
		assert_true(moved);
	}
}

static const pbd_real stiffness[] = {0, 1, (pbd_real)0.25, (pbd_real)0.9};
static const pbd_real compliance[] = {0, 0, (pbd_real)1e-6, (pbd_real)1e-3};

static const kernel_case kernel_cases[] = {
    {"gs pbd", PBD_FORMULATION_PBD, false, false, 0, 0.1, 0.1, stiffness, 4, false},
    {"gs xpbd", PBD_FORMULATION_XPBD, false, false, 0, 0.1, 0.1, compliance, 4, false},
    {"gs pbd all pinned or coincident", PBD_FORMULATION_PBD, false, false, 0, 0.6, 0.4, stiffness, 4, false},
    {"gs xpbd all pinned or coincident", PBD_FORMULATION_XPBD, false, false, 0, 0.6, 0.4, compliance, 4, false},
    {"gs pbd far from the origin", PBD_FORMULATION_PBD, false, false, 1e6, 0.05, 0.05, stiffness, 4, false},
    {"gs xpbd far from the origin", PBD_FORMULATION_XPBD, false, false, 1e6, 0.05, 0.05, compliance, 4, false},
    {"jacobi pbd mass-weighted", PBD_FORMULATION_PBD, true, false, 0, 0.1, 0.1, stiffness, 4, false},
    {"jacobi xpbd mass-weighted", PBD_FORMULATION_XPBD, true, false, 0, 0.1, 0.1, compliance, 4, false},
    {"jacobi pbd equal split", PBD_FORMULATION_PBD, true, true, 0, 0.3, 0.1, stiffness, 4, false},
    {"jacobi xpbd equal split", PBD_FORMULATION_XPBD, true, true, 0, 0.3, 0.1, compliance, 4, false},
    {"jacobi pbd far from the origin", PBD_FORMULATION_PBD, true, false, 1e6, 0.05, 0.05, stiffness, 4, false},
    {"gs pbd runs", PBD_FORMULATION_PBD, false, false, 0, 0.1, 0.1, stiffness, 4, true},
    {"gs xpbd runs", PBD_FORMULATION_XPBD, false, false, 0, 0.1, 0.1, compliance, 4, true},
    {"gs pbd runs unpinned", PBD_FORMULATION_PBD, false, false, 0, 0, 0, stiffness, 4, true},
    {"gs xpbd runs unpinned", PBD_FORMULATION_XPBD, false, false, 0, 0, 0, compliance, 4, true},
    {"gs pbd runs, most pinned or coincident", PBD_FORMULATION_PBD, false, false, 0, 0.6, 0.4, stiffness, 4, true},
    {"gs pbd runs far from the origin", PBD_FORMULATION_PBD, false, false, 1e6, 0.05, 0.05, stiffness, 4, true},
    {"jacobi pbd runs", PBD_FORMULATION_PBD, true, false, 0, 0.1, 0.1, stiffness, 4, true},
};

static void test_kernels_match_scalar(void** state) {
	(void)state;
	if (!have_avx2()) skip();
	/* the AVX2 lanes, then their AVX-512 variant where the CPU runs it */
	for (int wide = 0; wide < (pbd_cpu_avx512() ? 2 : 1); ++wide)
		for (size_t i = 0; i < sizeof kernel_cases / sizeof kernel_cases[0]; ++i)
			run_kernel_case(&kernel_cases[i], wide == 1);
}

/* A pinned cloth with bend edges (ranges of every length, so lanes and tails) plus a rope. */
static pbd_world* build_world(pbd_solver solver, pbd_formulation formulation, bool equal, int levels, uint32_t n,
                              pbd_simd simd) {
	pbd_world_def def = pbd_world_def_default();
	def.solver = solver;
	def.formulation = formulation;
	def.jacobi_equal_split = equal;
	def.jacobi_alpha = solver == PBD_SOLVER_JACOBI ? (pbd_real)0.2 : 0;
	def.substeps = 2;
	def.iterations = 5;
	def.simd = simd;
	def.hierarchy_levels = levels;
	pbd_world* w = test_world(&def);
	pbd_mesh m;
	tp_grid(&m, n, n - 2, 1, pbd_v3((pbd_real)-0.5, 1, 0), 2, true);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.mass_mode = PBD_MASS_TOTAL;
	bd.mass = (pbd_real)0.3;
	bd.material[PBD_EDGE_STRUCTURAL].stiffness_compress = (pbd_real)0.5;
	bd.material[PBD_EDGE_STRUCTURAL].compliance_stretch = (pbd_real)1e-6;
	bd.material[PBD_EDGE_SHEAR].stiffness_stretch = (pbd_real)0.8;
	bd.material[PBD_EDGE_SHEAR].compliance_stretch = (pbd_real)1e-4;
	bd.material[PBD_EDGE_BEND].stiffness_stretch = (pbd_real)0.2;
	bd.material[PBD_EDGE_BEND].stiffness_compress = (pbd_real)0.2;
	bd.material[PBD_EDGE_BEND].compliance_stretch = (pbd_real)1e-2;
	bd.material[PBD_EDGE_BEND].compliance_compress = (pbd_real)1e-2;
	const uint32_t pins[2] = {0, n - 1};
	bd.pinned = pins;
	bd.pinned_count = 2;
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);
	pbd_rope_def rd = pbd_rope_def_default();
	rd.segments = 21;
	rd.start = pbd_v3((pbd_real)0.8, (pbd_real)1.5, 0);
	rd.end = pbd_v3((pbd_real)1.8, (pbd_real)1.2, (pbd_real)0.3);
	pbd_error err;
	assert_int_equal(pbd_mesh_rope(&rd, &m, &err), PBD_OK);
	bd = pbd_soft_def_default();
	bd.mesh = &m;
	const uint32_t pin = 0;
	bd.pinned = &pin;
	bd.pinned_count = 1;
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);
	return w;
}

static void test_worlds_same_hash(void** state) {
	(void)state;
	if (!have_avx2()) skip();
	static const struct {
		pbd_solver solver;
		pbd_formulation formulation;
		bool equal;
		int levels; /* the hierarchy's coarse levels project in lanes too */
		uint32_t n;
	} setups[] = {
	    {PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_PBD, false, 0, 13},
	    {PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_XPBD, false, 0, 13},
	    {PBD_SOLVER_JACOBI, PBD_FORMULATION_PBD, false, 0, 13},
	    {PBD_SOLVER_JACOBI, PBD_FORMULATION_XPBD, false, 0, 13},
	    {PBD_SOLVER_JACOBI, PBD_FORMULATION_PBD, true, 0, 13},
	    {PBD_SOLVER_GAUSS_SEIDEL, PBD_FORMULATION_XPBD, false, 3, 40},
	};
	for (size_t i = 0; i < sizeof setups / sizeof setups[0]; ++i) {
		pbd_world* ws = build_world(setups[i].solver, setups[i].formulation, setups[i].equal, setups[i].levels,
		                            setups[i].n, PBD_SIMD_SCALAR);
		pbd_world* wv = build_world(setups[i].solver, setups[i].formulation, setups[i].equal, setups[i].levels,
		                            setups[i].n, PBD_SIMD_AVX2);
		pbd_world* ww = pbd_cpu_avx512() ? build_world(setups[i].solver, setups[i].formulation, setups[i].equal,
		                                               setups[i].levels, setups[i].n, PBD_SIMD_AVX512)
		                                 : NULL;
		const uint64_t h0 = pbd_world_hash(ws);
		for (int step = 0; step < 200; ++step) {
			if (step == 40 || step == 60 || step == 120) {
				/* changes the lanes' copy of the records must follow (pbd_family.lanes): another
				 * iteration count (the PBD stiffness per iteration alone changes), new materials on
				 * a third of the distances, then a new distance, which reorders them all, and a pin */
				pbd_world* all[3] = {ws, wv, ww};
				for (int k = 0; k < 3 && all[k]; ++k) {
					pbd_world* w = all[k];
					const uint32_t nd = pbd_world_distance_count(w);
					if (step == 40) {
						assert_int_equal(pbd_world_set_iterations(w, 3), PBD_OK);
					} else if (step == 60) {
						const pbd_edge_material m = {true, (pbd_real)0.3, 1, (pbd_real)1e-3, 0};
						assert_int_equal(pbd_world_set_distance_material(w, nd / 3, nd / 3, &m), PBD_OK);
					} else {
						pbd_distance_def d = pbd_distance_def_default();
						d.a = 1;
						d.b = setups[i].n + 3;
						d.rest = (pbd_real)0.05;
						assert_int_equal(pbd_world_add_distances(w, 1, &d, NULL), PBD_OK);
						assert_int_equal(pbd_particle_pin(w, setups[i].n / 2), PBD_OK);
					}
				}
			}
			assert_int_equal(pbd_world_step(ws), PBD_OK);
			assert_int_equal(pbd_world_step(wv), PBD_OK);
			if (pbd_world_hash(ws) != pbd_world_hash(wv)) fail_msg("setup %zu: hashes differ after step %d", i, step);
			if (ww) {
				assert_int_equal(pbd_world_step(ww), PBD_OK);
				if (pbd_world_hash(ws) != pbd_world_hash(ww))
					fail_msg("setup %zu: AVX-512 hash differs after step %d", i, step);
			}
		}
		assert_true(pbd_world_hash(ws) != h0);
		pbd_world_destroy(ws);
		pbd_world_destroy(wv);
		pbd_world_destroy(ww);
	}
}

/* Every family's lanes against its scalar kernels on the built-in scenes' own constraints: each
 * scene is stepped under PBD and XPBD, its particles' displacements q (and Jacobi's dx, XPBD's
 * multipliers) are then scattered a little and a lot (flat, inverted and coincident elements),
 * and every colour group of every family is projected by both kernels from copies of that state;
 * every byte of q, dx and lambda must agree. A family with lanes that no scene exercises fails. */
typedef struct family_copy {
	pbd_vec3 *q, *dx;
	pbd_real* lambda;
} family_copy;

static void copy_alloc(family_copy* c, uint32_t np, uint32_t nl) {
	/* one spare element, as the world's particle arrays have (particles.c) */
	c->q = calloc((size_t)np + 1, sizeof *c->q);
	c->dx = calloc((size_t)np + 1, sizeof *c->dx);
	c->lambda = calloc((size_t)nl + 1, sizeof *c->lambda);
	assert_true(c->q && c->dx && c->lambda);
}
static void copy_free(family_copy* c) {
	free(c->q);
	free(c->dx);
	free(c->lambda);
}

/* One family's groups, scalar (into ref) against lanes (into vec), from the same start. */
static void compare_family(pbd_world* w, int t, bool jacobi, pbd_real fraction, const family_copy* start,
                           family_copy* ref, family_copy* vec, uint32_t counted[PBD_FAMILY_COUNT],
                           const char* scene_name) {
	const pbd_family_ops* ops = pbd_family_table[t];
	void (*lanes)(const pbd_step_ctx*, pbd_family*, uint32_t, uint32_t) =
	    jacobi ? ops->jacobi_lanes : ops->project_lanes;
	void (*scalar)(const pbd_step_ctx*, pbd_family*, uint32_t, uint32_t) = jacobi ? ops->jacobi : ops->project;
	if (!lanes) return;
	pbd_family* f = &w->fam[t];
	const size_t qbytes = (size_t)w->np * sizeof(pbd_vec3), lbytes = (size_t)f->n * ops->lambdas * sizeof(pbd_real);
	pbd_real* own_lambda = f->lambda;
	for (int g = 0; g < PBD_PARTITION_COLOURS; ++g) {
		const uint32_t first = g ? f->group_end[g - 1] : 0, end = f->group_end[g];
		if (end - first < 8) continue;
		const uint32_t split = first + (end - first) / 8 * 8;
		family_copy* runs[2] = {ref, vec};
		for (int r = 0; r < 2; ++r) {
			family_copy* c = runs[r];
			memcpy(c->q, start->q, qbytes);
			memcpy(c->dx, start->dx, qbytes);
			memcpy(c->lambda, start->lambda, lbytes);
			pbd_step_ctx ctx;
			pbd_step_ctx_init(w, f->refresh_h, &ctx);
			ctx.substep_fraction = fraction;
			ctx.q = c->q;
			ctx.dx = c->dx;
			f->lambda = c->lambda;
			/* two sweeps, the second from moved particles and grown multipliers */
			for (int sweep = 0; sweep < 2; ++sweep) {
				if (r == 0) {
					scalar(&ctx, f, first, end);
				} else {
					lanes(&ctx, f, first, split);
					if (split < end) scalar(&ctx, f, split, end);
				}
			}
		}
		f->lambda = own_lambda;
		if (memcmp(ref->q, vec->q, qbytes) || memcmp(ref->dx, vec->dx, qbytes) ||
		    memcmp(ref->lambda, vec->lambda, lbytes))
			fail_msg("%s: family %s, group %d (%u constraints), %s: lanes and scalar kernel differ", scene_name,
			         ops->name, g, end - first, jacobi ? "Jacobi" : "Gauss-Seidel");
		++counted[t];
	}
}

static void perturb(pbd_world* w, family_copy* start, double amplitude) {
	for (uint32_t i = 0; i < w->np; ++i) {
		start->q[i] =
		    pbd_v3(rnd_in(-amplitude, amplitude), rnd_in(-amplitude, amplitude), rnd_in(-amplitude, amplitude));
		start->dx[i] = pbd_v3(rnd_in(-1e-4, 1e-4), rnd_in(-1e-4, 1e-4), rnd_in(-1e-4, 1e-4));
	}
	/* every third particle coincides with its neighbour: zero-length edges, flat elements */
	for (uint32_t i = 1; i < w->np; i += 3) {
		start->q[i] = pbd_v3_add(pbd_v3_sub(w->x[i - 1], w->x[i]), start->q[i - 1]);
	}
}

/* Steps w three times, scatters its particles at three amplitudes and compares every family's
 * colour groups in lanes and in scalar from there, at the substep fraction t (an attachment's
 * point moves through the step). */
static void compare_world(pbd_world* w, void (*step)(void*), void* arg, pbd_real t, uint32_t counted[PBD_FAMILY_COUNT],
                          const char* name) {
	const bool xpbd = w->def.formulation == PBD_FORMULATION_XPBD;
	for (int k = 0; k < 3; ++k) step(arg);
	uint32_t nl = 0;
	for (int f = 0; f < PBD_FAMILY_COUNT; ++f) {
		const uint32_t n = w->fam[f].n * pbd_family_table[f]->lambdas;
		if (n > nl) nl = n;
	}
	family_copy start, ref, vec;
	copy_alloc(&start, w->np, nl);
	copy_alloc(&ref, w->np, nl);
	copy_alloc(&vec, w->np, nl);
	const double amplitudes[] = {1e-3, 0.05, 0.5};
	for (size_t a = 0; a < sizeof amplitudes / sizeof amplitudes[0]; ++a) {
		perturb(w, &start, amplitudes[a]);
		for (int f = 0; f < PBD_FAMILY_COUNT; ++f) {
			const pbd_family* fam = &w->fam[f];
			for (uint32_t k = 0; k < fam->n * pbd_family_table[f]->lambdas; ++k)
				start.lambda[k] = xpbd ? rnd_in(-1e-3, 1e-3) : 0;
			if (!fam->n || fam->stale || fam->refresh_h <= 0) continue;
			compare_family(w, f, false, t, &start, &ref, &vec, counted, name);
			compare_family(w, f, true, t, &start, &ref, &vec, counted, name);
		}
	}
	copy_free(&start);
	copy_free(&ref);
	copy_free(&vec);
}

static void step_scene(void* s) { pbd_scene_step((pbd_scene*)s); }
static void step_world(void* w) { assert_int_equal(pbd_world_step((pbd_world*)w), PBD_OK); }

/* The families no built-in scene has in colour groups of 8: a box of volume tetrahedra and one
 * of Neo-Hookean ones, some of their particles pinned and long-range attached to the pins (a
 * little short of their rest distance, so that some are taut), every particle attached to a point near
 * it (rest 0 and above, stiffness and compliance 0 and above), the whole at `offset` from the
 * origin; the points are then moved, so that the step's point lies between two targets. */
static pbd_world* generated_world(pbd_formulation formulation, bool equal, pbd_real offset) {
	pbd_world_def def = pbd_world_def_default();
	def.formulation = formulation;
	def.jacobi_equal_split = equal;
	def.substeps = 2;
	def.iterations = 3;
	pbd_world* w = test_world(&def);
	for (int body = 0; body < 2; ++body) {
		pbd_tet_box_def bd = pbd_tet_box_def_default();
		bd.nx = 4;
		bd.ny = 3;
		bd.nz = 3;
		bd.size = pbd_v3((pbd_real)0.4, (pbd_real)0.3, (pbd_real)0.3);
		bd.origin = pbd_v3(offset + (pbd_real)body, offset, offset);
		pbd_mesh m;
		pbd_error err;
		assert_int_equal(pbd_mesh_tet_box(&bd, &m, &err), PBD_OK);
		pbd_soft_def sd = pbd_soft_def_default();
		sd.mesh = &m;
		sd.tets = body ? PBD_TET_NEOHOOKEAN : PBD_TET_VOLUME;
		sd.tet_stiffness = (pbd_real)0.9;
		sd.tet_compliance = body ? 0 : (pbd_real)1e-6;
		sd.tet_youngs_modulus = (pbd_real)1e5;
		for (int e = 0; e < PBD_EDGE_KIND_COUNT; ++e) sd.material[e].enabled = false;
		const uint32_t pins[3] = {0, 7, 20};
		sd.pinned = pins;
		sd.pinned_count = 3;
		sd.long_range = true;
		sd.long_range_mode = PBD_LRA_EUCLIDEAN;
		sd.long_range_scale = (pbd_real)0.98;
		assert_int_equal(pbd_soft_create(w, &sd, NULL), PBD_OK);
		pbd_mesh_free(&m);
	}
	pbd_attachment_def* ad = calloc(w->np, sizeof *ad);
	assert_non_null(ad);
	for (uint32_t i = 0; i < w->np; ++i) {
		ad[i] = pbd_attachment_def_default();
		ad[i].particle = i;
		ad[i].target = pbd_v3_add(w->x[i], pbd_v3(rnd_in(-0.01, 0.01), rnd_in(-0.01, 0.01), rnd_in(-0.01, 0.01)));
		ad[i].rest = i % 3 ? (pbd_real)0.005 : 0;
		ad[i].stiffness = i % 4 ? (pbd_real)0.5 : 1;
		ad[i].compliance = i % 5 ? (pbd_real)1e-4 : 0;
	}
	assert_int_equal(pbd_world_add_attachments(w, w->np, ad, NULL), PBD_OK);
	free(ad);
	for (uint32_t i = 0; i < w->np; i += 2)
		assert_int_equal(pbd_world_set_attachment_target(w, i, pbd_v3_add(w->x[i], pbd_v3(0, (pbd_real)0.02, 0))),
		                 PBD_OK);
	return w;
}

/* Families that no built-in scene holds in colour groups of 8 or more, in a world of their own: a
 * pinned grid cloth with triangle strains for its membrane (each hinge model in turn), stretch
 * and shear softened unequally so that the parts differ. */
static void compare_generated(bool xpbd, pbd_bend_model bend, uint32_t counted[PBD_FAMILY_COUNT]) {
	pbd_grid_def gd = pbd_grid_def_default();
	gd.nx = 17;
	gd.ny = 13;
	gd.size_u = 1;
	gd.size_v = 0.7f;
	gd.origin = pbd_v3(-0.5f, 1, 0);
	gd.axis_u = pbd_v3(1, 0, 0);
	gd.axis_v = pbd_v3(0, 0.6f, 0.8f);
	pbd_mesh mesh;
	assert_int_equal(pbd_mesh_grid(&gd, &mesh, NULL), PBD_OK);
	pbd_world_def wd = pbd_world_def_default();
	wd.formulation = xpbd ? PBD_FORMULATION_XPBD : PBD_FORMULATION_PBD;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&wd, &w), PBD_OK);
	const uint32_t pins[] = {0, 5, 16};
	pbd_soft_def sd = pbd_soft_def_default();
	sd.mesh = &mesh;
	sd.pinned = pins;
	sd.pinned_count = 3;
	sd.membrane = PBD_MEMBRANE_TRIANGLES;
	sd.membrane_stiffness = 0.7f;
	sd.membrane_compliance = 1e-6f;
	sd.bend = bend;
	sd.bend_stiffness = 0.3f;
	sd.bend_compliance = 1e-3f;
	pbd_soft_id id;
	assert_int_equal(pbd_soft_create(w, &sd, &id), PBD_OK);
	const pbd_triangle_strain_material m = {
	    .stretch_stiffness = 0.9f, .shear_stiffness = 0.4f, .stretch_compliance = 1e-7f, .shear_compliance = 1e-5f};
	assert_int_equal(pbd_world_set_triangle_strain_material(w, 0, pbd_world_triangle_strain_count(w) / 2, &m), PBD_OK);
	compare_world(w, step_world, w, 1, counted, "generated cloth");
	pbd_world_destroy(w);
	pbd_mesh_free(&mesh);
}

static void test_families_match_scalar(void** state) {
	(void)state;
	if (!have_avx2()) skip();
	uint32_t counted[PBD_FAMILY_COUNT] = {0};
	rng_state = 777;
	for (size_t i = 0; i < pbd_scene_builtin_count(); ++i) {
		const char* name = pbd_scene_builtin_at(i)->name;
		for (int form = 0; form < 2; ++form) {
			pbd_scene s;
			pbd_scene_error err;
			if (!pbd_scene_load_builtin(name, NULL, &s, &err)) fail_msg("%s: %s", name, err.message);
			pbd_world* w = s.world;
			if (w->def.method != PBD_METHOD_POSITION_BASED) {
				pbd_scene_free(&s);
				break;
			}
			assert_int_equal(pbd_world_set_formulation(w, form ? PBD_FORMULATION_XPBD : PBD_FORMULATION_PBD), PBD_OK);
			compare_world(w, step_scene, &s, 1, counted, name);
			pbd_scene_free(&s);
		}
	}
	for (int v = 0; v < 8; ++v) {
		pbd_world* w =
		    generated_world(v & 1 ? PBD_FORMULATION_XPBD : PBD_FORMULATION_PBD, v & 2, v & 4 ? (pbd_real)1e4 : 0);
		compare_world(w, step_world, w, v & 2 ? (pbd_real)0.375 : 1, counted, "generated");
		pbd_world_destroy(w);
	}
	for (int form = 0; form < 2; ++form) {
		compare_generated(form != 0, PBD_BEND_ISOMETRIC, counted);
		compare_generated(form != 0, PBD_BEND_DIHEDRAL, counted);
	}
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		const pbd_family_ops* ops = pbd_family_table[t];
		if (!ops->project_lanes && !ops->jacobi_lanes) continue;
		printf("family %-16s %u colour groups compared\n", ops->name, counted[t]);
		if (!counted[t]) fail_msg("family %s has lanes but no scene exercises them", ops->name);
	}
}

/* Every built-in scene ends with the same hash in lanes and in scalar, under its own solver and
 * under the other one (Gauss-Seidel and Jacobi). */
static uint64_t run_scene(const char* name, pbd_simd simd, bool other_solver) {
	pbd_scene s;
	pbd_scene_error err;
	if (!pbd_scene_load_builtin(name, NULL, &s, &err)) fail_msg("%s: %s", name, err.message);
	pbd_world* w = s.world;
	assert_int_equal(pbd_world_set_simd(w, simd), PBD_OK);
	if (other_solver)
		assert_int_equal(
		    pbd_world_set_solver(w, w->def.solver == PBD_SOLVER_JACOBI ? PBD_SOLVER_GAUSS_SEIDEL : PBD_SOLVER_JACOBI),
		    PBD_OK);
	const int steps = test_short() ? 8 : 60; /* 60 in Release, 8 in the short run */
	for (int i = 0; i < steps; ++i) pbd_scene_step(&s);
	const uint64_t h = pbd_world_hash(w);
	pbd_scene_free(&s);
	return h;
}

static void test_builtin_scenes_same_hash(void** state) {
	(void)state;
	if (!have_avx2()) skip();
	for (size_t i = 0; i < pbd_scene_builtin_count(); ++i) {
		const char* name = pbd_scene_builtin_at(i)->name;
		for (int other = 0; other < 2; ++other) {
			const uint64_t hs = run_scene(name, PBD_SIMD_SCALAR, other), hv = run_scene(name, PBD_SIMD_AVX2, other);
			if (hs != hv)
				fail_msg("%s%s: lanes end at %016llx, scalar at %016llx", name, other ? " (other solver)" : "",
				         (unsigned long long)hv, (unsigned long long)hs);
			const uint64_t hw = pbd_cpu_avx512() ? run_scene(name, PBD_SIMD_AVX512, other) : hs;
			if (hs != hw)
				fail_msg("%s%s: AVX-512 lanes end at %016llx, scalar at %016llx", name, other ? " (other solver)" : "",
				         (unsigned long long)hw, (unsigned long long)hs);
		}
	}
}

static void test_simd_mode_checked(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world_def def = pbd_world_def_default();
	def.log = test_log_keep;
	def.log_user = msg;
	pbd_world* w = NULL;
	def.simd = (pbd_simd)7;
	assert_int_equal(pbd_world_create(&def, &w), PBD_ERR_INVALID_ARGUMENT);
	assert_null(w);
	assert_non_null(strstr(msg, "pbd_world_def.simd"));
	/* lanes this build and CPU have are taken; others are refused, with the reason */
	const struct {
		pbd_simd mode;
		bool have;
		const char* why;
	} modes[] = {{PBD_SIMD_AVX2, pbd_cpu_avx2(), "AVX2"}, {PBD_SIMD_AVX512, pbd_cpu_avx512(), "AVX-512"}};
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; ++i) {
		def.simd = modes[i].mode;
		msg[0] = 0;
		const pbd_status st = pbd_world_create(&def, &w);
		if (modes[i].have) {
			assert_int_equal(st, PBD_OK);
			pbd_world_destroy(w);
		} else {
			assert_int_equal(st, PBD_ERR_INVALID_ARGUMENT);
			assert_null(w);
			assert_non_null(strstr(msg, modes[i].why));
		}
	}
	def.simd = PBD_SIMD_SCALAR;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	pbd_world_destroy(w);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kernels_match_scalar),  cmocka_unit_test(test_worlds_same_hash),
	    cmocka_unit_test(test_families_match_scalar), cmocka_unit_test(test_builtin_scenes_same_hash),
	    cmocka_unit_test(test_simd_mode_checked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
