/* SIMD lanes of the per-particle passes (simd/particles_avx2.c): prediction, velocities, the
 * step's start and end, the Jacobi and Chebyshev updates. Two worlds get the same random state,
 * one runs the scalar passes and one the lanes, and every byte of the particle arrays and every
 * count must agree. The states mix free and pinned particles, targets, external forces and air,
 * coordinates near 1e4, speeds on both sides of max_speed, displacements with zero components,
 * and non-finite values for the end of step scan; there are 203 particles in blocks of 64, so
 * groups of 8, block ends and tails all occur. Skipped where the build or the CPU has no AVX2. */
#include <stdio.h>
#include <stdlib.h>

#include "core/cpu.h"
#include "test_physics.h"
#include "model/world.h"

#define NP 203u

/* What a case draws: the fractions of particles pinned, pinned with a target, pushed by a force. */
typedef struct mix {
	double pinned, target, force;
} mix;

static const mix mixes[] = {{0, 0, 0}, {0.03, 0.5, 0.03}, {0.3, 0.5, 0.3}, {0.9, 0.5, 0}};
#define MIXES ((int)(sizeof mixes / sizeof mixes[0]))

static bool have_avx2(void) {
	if (pbd_cpu_avx2()) return true;
	printf("skipped: %s\n", pbd_simd_built() ? "this CPU has no AVX2 and FMA" : "this build has no AVX2 kernels");
	return false;
}

static pbd_real rnd(uint64_t* s, double lo, double hi) { return (pbd_real)tp_rand_range(s, lo, hi); }
static pbd_vec3 rnd3(uint64_t* s, double lo, double hi) {
	return pbd_v3(rnd(s, lo, hi), rnd(s, lo, hi), rnd(s, lo, hi));
}

/* A velocity of random direction and the given speed. */
static pbd_vec3 with_speed(uint64_t* s, double speed) {
	const pbd_vec3 d = rnd3(s, -1, 1);
	const double len = tp_len(d);
	const double f = len > 0 ? speed / len : 0;
	return pbd_v3((pbd_real)((double)d.x * f), (pbd_real)((double)d.y * f), (pbd_real)((double)d.z * f));
}

/* A world of NP particles drawn from `seed`; both worlds of a case get the same one. Messages go
 * to `msg`, since the end of step reports the non-finite particles it undoes. */
static pbd_world* make_world(pbd_simd simd, uint64_t seed, const mix* m, pbd_real max_speed, char* msg) {
	pbd_world_def def = pbd_world_def_default();
	def.simd = simd;
	def.max_speed = max_speed;
	def.log = test_log_keep;
	def.log_user = msg;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	/* the capacity is the count, so that the arrays end with their one spare element */
	assert_int_equal(pbd_particles_reserve(w, NP), PBD_OK);
	w->exec.block_particles = PBD_BLOCK_PARTICLES_MIN;
	uint64_t s = seed;
	static pbd_vec3 x[NP], v[NP];
	static pbd_real iw[NP];
	for (uint32_t i = 0; i < NP; ++i) {
		x[i] = rnd3(&s, 1e4 - 2, 1e4 + 2);
		/* around max_speed when there is one: below, within a few ulps, above */
		const double speed = max_speed > 0 ? (double)max_speed * tp_rand_range(&s, 0.3, 1.3) : tp_rand_range(&s, 0, 5);
		v[i] = with_speed(&s, speed);
		iw[i] = rnd(&s, 0.5, 2);
	}
	assert_int_equal(pbd_world_add_particles(w, NP, x, v, iw, NULL), PBD_OK);
	assert_int_equal(w->cap_p, NP);
	for (uint32_t i = 0; i < NP; ++i) {
		if (tp_rand(&s) < m->pinned) {
			assert_int_equal(pbd_particle_pin(w, i), PBD_OK);
			if (tp_rand(&s) < m->target)
				assert_int_equal(pbd_particle_set_target(w, i, pbd_v3_add(x[i], rnd3(&s, -0.1, 0.1))), PBD_OK);
		}
		if (tp_rand(&s) < m->force) assert_int_equal(pbd_particle_set_force(w, i, rnd3(&s, -3, 3)), PBD_OK);
		w->x_lo[i] = rnd3(&s, -1e-4, 1e-4);
		/* remainders below half an ulp of v as a two-sum leaves them, larger ones, negative zeros */
		if (w->w[i] > 0) {
			const double r = tp_rand(&s);
			w->v_lo[i] = r < 0.6 ? rnd3(&s, -1e-7, 1e-7) : r < 0.9 ? rnd3(&s, -1e-5, 1e-5) : pbd_v3(-0.0f, 0, -0.0f);
		}
		w->from[i] = rnd3(&s, 1e4 - 2, 1e4 + 2);
		/* as predict leaves it, then moved by constraints: in none, some or all components */
		const pbd_vec3 q0 = pbd_v3_add(w->x_lo[i], pbd_v3_scale(w->v[i], (pbd_real)(1.0 / 120)));
		const int moved = (int)(tp_rand(&s) * 5);
		w->q[i] = q0;
		if (moved >= 1) w->q[i].y = q0.y + rnd(&s, -1e-3, 1e-3);
		if (moved >= 2) w->q[i].x = q0.x + rnd(&s, -1e-3, 1e-3);
		if (moved >= 3) w->q[i].z = q0.z + rnd(&s, -1e-3, 1e-3);
		if (moved == 4 && w->w[i] > 0) w->q[i] = rnd3(&s, -0.2, 0.2);
		w->air_force[i] = rnd3(&s, -1, 1);
		const pbd_real k = rnd(&s, 0, 0.5);
		w->air_drag[i] = (pbd_sym3){k, k * (pbd_real)0.5, k, k * (pbd_real)0.1, 0, k * (pbd_real)0.2};
	}
	return w;
}

/* A marker in the element past the last particle of each array a pass writes (the spare one):
 * no pass may touch it. */
static const pbd_vec3 marker = {(pbd_real)123.25, (pbd_real)-7.5, (pbd_real)0.125};

static void mark_spare(pbd_world* w) {
	pbd_vec3* arrays[] = {w->x, w->x_lo, w->v, w->v_lo, w->q, w->x_step, w->from, w->dx, w->q_iter, w->q_prev};
	for (size_t a = 0; a < sizeof arrays / sizeof arrays[0]; ++a) arrays[a][NP] = marker;
}

static void expect_same(const pbd_world* a, const pbd_world* b, const char* what, bool marked) {
	static const struct {
		const char* name;
		size_t offset;
	} arrays[] = {
	    {"x", offsetof(pbd_world, x)},           {"x_lo", offsetof(pbd_world, x_lo)},
	    {"v", offsetof(pbd_world, v)},           {"v_lo", offsetof(pbd_world, v_lo)},
	    {"q", offsetof(pbd_world, q)},           {"x_step", offsetof(pbd_world, x_step)},
	    {"from", offsetof(pbd_world, from)},     {"dx", offsetof(pbd_world, dx)},
	    {"q_iter", offsetof(pbd_world, q_iter)}, {"q_prev", offsetof(pbd_world, q_prev)},
	};
	for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; ++k) {
		const pbd_vec3* pa = *(pbd_vec3* const*)(const void*)((const char*)a + arrays[k].offset);
		const pbd_vec3* pb = *(pbd_vec3* const*)(const void*)((const char*)b + arrays[k].offset);
		for (uint32_t i = 0; i <= NP; ++i)
			if (memcmp(&pa[i], &pb[i], sizeof pa[i]))
				fail_msg("%s: %s[%u] differs: (%.9g %.9g %.9g) scalar, (%.9g %.9g %.9g) lanes", what, arrays[k].name, i,
				         (double)pa[i].x, (double)pa[i].y, (double)pa[i].z, (double)pb[i].x, (double)pb[i].y,
				         (double)pb[i].z);
		if (marked && memcmp(&pa[NP], &marker, sizeof marker))
			fail_msg("%s: the spare element of %s was written", what, arrays[k].name);
	}
	assert_memory_equal(a->flags, b->flags, NP);
	assert_memory_equal(a->w, b->w, NP * sizeof *a->w);
	for (int k = 0; k < PBD_WARN_COUNT; ++k) {
		assert_int_equal(a->warnings[k].count, b->warnings[k].count);
		assert_int_equal(a->warnings[k].last_index, b->warnings[k].last_index);
	}
}

typedef enum pass { PASS_BEGIN, PASS_PREDICT, PASS_VELOCITY, PASS_END } pass;

typedef struct pass_case {
	const char* name;
	pass pass;
	pbd_real damping;
	pbd_damping_mode damping_mode;
	bool air;
	pbd_real alpha_substep; /* predict; velocity: 1 for the last substep */
	pbd_real max_speed;
	double nonfinite; /* end: fraction of particles given a NaN or an infinity */
} pass_case;

static const pass_case pass_cases[] = {
    {"begin", PASS_BEGIN, 1, PBD_DAMPING_VELOCITY, false, 1, 0, 0},
    {"predict", PASS_PREDICT, 1, PBD_DAMPING_VELOCITY, false, (pbd_real)0.5, 0, 0},
    {"predict, last substep", PASS_PREDICT, 1, PBD_DAMPING_VELOCITY, false, 1, 0, 0},
    {"predict, damped", PASS_PREDICT, (pbd_real)0.97, PBD_DAMPING_VELOCITY, false, (pbd_real)0.5, 0, 0},
    {"predict, damped after forces", PASS_PREDICT, (pbd_real)0.97, PBD_DAMPING_AFTER_FORCES, false, 1, 0, 0},
    {"predict, air", PASS_PREDICT, 1, PBD_DAMPING_VELOCITY, true, (pbd_real)0.5, 0, 0},
    {"velocity", PASS_VELOCITY, 1, PBD_DAMPING_VELOCITY, false, (pbd_real)0.5, 0, 0},
    {"velocity, last substep", PASS_VELOCITY, 1, PBD_DAMPING_VELOCITY, false, 1, 0, 0},
    {"velocity, max speed", PASS_VELOCITY, 1, PBD_DAMPING_VELOCITY, false, (pbd_real)0.5, 10, 0},
    {"velocity, max speed small", PASS_VELOCITY, 1, PBD_DAMPING_VELOCITY, false, 1, (pbd_real)1e-3, 0},
    {"end, finite", PASS_END, 1, PBD_DAMPING_VELOCITY, false, 1, 0, 0},
    {"end, some non-finite", PASS_END, 1, PBD_DAMPING_VELOCITY, false, 1, 0, 0.02},
};

/* Gives particles NaN or infinite components, in x, v or x_lo, the same in both worlds. */
static void spoil(pbd_world* w, uint64_t seed, double fraction) {
	uint64_t s = seed;
	for (uint32_t i = 0; i < NP; ++i) {
		if (!(tp_rand(&s) < fraction)) continue;
		pbd_vec3* arrays[] = {w->x, w->v, w->x_lo};
		pbd_vec3* p = &arrays[(int)(tp_rand(&s) * 3)][i];
		pbd_real* c = (int)(tp_rand(&s) * 3) == 0 ? &p->x : (tp_rand(&s) < 0.5 ? &p->y : &p->z);
		*c = tp_rand(&s) < 0.5 ? (pbd_real)NAN : (pbd_real)INFINITY;
	}
}

static void run_pass(pbd_world* w, const pass_case* pc, uint64_t seed, uint32_t* restored) {
	const pbd_real h = (pbd_real)(1.0 / 120);
	mark_spare(w);
	w->def.damping_mode = pc->damping_mode;
	w->air_on = pc->air;
	switch (pc->pass) {
	case PASS_BEGIN:
		pbd_particles_begin_step(w);
		break;
	case PASS_PREDICT:
		pbd_particles_predict(w, h, pc->damping, pc->alpha_substep);
		break;
	case PASS_VELOCITY:
		pbd_particles_update_velocities(w, h, pc->alpha_substep == 1);
		break;
	case PASS_END:
		spoil(w, seed, pc->nonfinite);
		*restored = pbd_particles_end_step(w);
		break;
	}
}

static void test_passes_match_scalar(void** state) {
	(void)state;
	if (!have_avx2()) skip();
	static char msg_s[256], msg_v[256];
	for (size_t c = 0; c < sizeof pass_cases / sizeof pass_cases[0]; ++c) {
		const pass_case* pc = &pass_cases[c];
		for (int trial = 0; trial < 4 * MIXES; ++trial) {
			const uint64_t seed = 1000u * c + (uint64_t)trial;
			const mix* m = &mixes[trial % MIXES];
			pbd_world* ws = make_world(PBD_SIMD_SCALAR, seed, m, pc->max_speed, msg_s);
			pbd_world* wv = make_world(PBD_SIMD_AVX2, seed, m, pc->max_speed, msg_v);
			expect_same(ws, wv, "the drawn state", false);
			uint32_t rs = 0, rv = 0;
			run_pass(ws, pc, seed, &rs);
			run_pass(wv, pc, seed, &rv);
			char what[96];
			snprintf(what, sizeof what, "%s, trial %d", pc->name, trial);
			expect_same(ws, wv, what, true);
			assert_int_equal(rs, rv);
			if (pc->nonfinite > 0 && trial == 0) assert_true(rs > 0);
			pbd_world_destroy(ws);
			pbd_world_destroy(wv);
		}
	}
}

/* A speed clamp counts in both: the case "velocity, max speed" is not vacuous. */
static void test_clamps_counted(void** state) {
	(void)state;
	if (!have_avx2()) skip();
	static char msg[256];
	pbd_world* w = make_world(PBD_SIMD_AVX2, 7, &mixes[0], 10, msg);
	pbd_particles_update_velocities(w, (pbd_real)(1.0 / 120), false);
	assert_true(w->warnings[PBD_WARN_SPEED_CLAMPED].count > 0);
	assert_true(w->warnings[PBD_WARN_SPEED_CLAMPED].count < NP);
	pbd_world_destroy(w);
}

/* jacobi_apply_block and chebyshev_block (solver.c) run inside the Jacobi sweeps: whole steps of a
 * pinned cloth, equal split and mass-weighted, with rho given and estimated. */
static pbd_world* jacobi_world(pbd_simd simd, bool equal, pbd_real rho) {
	pbd_world_def def = pbd_world_def_default();
	def.simd = simd;
	def.solver = PBD_SOLVER_JACOBI;
	def.jacobi_equal_split = equal;
	def.jacobi_alpha = equal ? (pbd_real)0.2 : 0;
	def.chebyshev = true;
	def.chebyshev_rho = rho;
	def.substeps = 2;
	def.iterations = 8;
	pbd_world* w = test_world(&def);
	w->exec.block_particles = PBD_BLOCK_PARTICLES_MIN;
	pbd_mesh m;
	tp_grid(&m, 15, 13, 1, pbd_v3((pbd_real)-0.5, 1e4, 0), 2, true);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	const uint32_t pins[3] = {0, 7, 14};
	bd.pinned = pins;
	bd.pinned_count = 3;
	assert_int_equal(pbd_soft_create(w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);
	return w;
}

static void test_jacobi_chebyshev_match_scalar(void** state) {
	(void)state;
	if (!have_avx2()) skip();
	for (int k = 0; k < 4; ++k) {
		const bool equal = k & 1;
		const pbd_real rho = k & 2 ? (pbd_real)0.9 : 0;
		pbd_world* ws = jacobi_world(PBD_SIMD_SCALAR, equal, rho);
		pbd_world* wv = jacobi_world(PBD_SIMD_AVX2, equal, rho);
		for (int step = 0; step < 6; ++step) {
			assert_int_equal(pbd_world_step(ws), PBD_OK);
			assert_int_equal(pbd_world_step(wv), PBD_OK);
			const uint32_t n = ws->np;
			assert_memory_equal(ws->x, wv->x, n * sizeof *ws->x);
			assert_memory_equal(ws->x_lo, wv->x_lo, n * sizeof *ws->x_lo);
			assert_memory_equal(ws->v, wv->v, n * sizeof *ws->v);
			assert_memory_equal(ws->v_lo, wv->v_lo, n * sizeof *ws->v_lo);
			assert_memory_equal(ws->q, wv->q, n * sizeof *ws->q);
			assert_memory_equal(ws->q_iter, wv->q_iter, n * sizeof *ws->q_iter);
			assert_memory_equal(ws->q_prev, wv->q_prev, n * sizeof *ws->q_prev);
			assert_memory_equal(ws->dx, wv->dx, n * sizeof *ws->dx);
		}
		/* the cloth moved */
		assert_true(pbd_world_positions(ws)[20].y < (pbd_real)1e4);
		pbd_world_destroy(ws);
		pbd_world_destroy(wv);
	}
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_passes_match_scalar),
	    cmocka_unit_test(test_clamps_counted),
	    cmocka_unit_test(test_jacobi_chebyshev_match_scalar),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
