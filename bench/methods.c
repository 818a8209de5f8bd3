/* Methods on one scene. Every method of pbd_world_def.method runs the same hanging cloth with
 * the same physical material, so that their costs compare at a stated quality. The cloth is the
 * one of the cost-to-quality table (quality.c): 1 m square, N x N, lying flat, two corners of one
 * edge pinned, swinging down under gravity, no wind, no damping of any kind. Its springs come from
 * the cotton_polyester preset (a woven shirt fabric, 4051 N/m in stretch) mapped to structural,
 * shear and flexion edges. A woven cloth barely stretches under its own weight: run to
 * convergence (symplectic Euler at under half its stable step), its mean structural strain stays
 * below 0.35 % at N = 32 to 128, so a mean strain of 1 % is solver error, not material. The knit
 * "cotton" preset hangs at 5.6 % mean strain however it is solved (N = 32), and would make the
 * 1 % column meaningless. Flexion edges, not hinges, carry the bending, because a cloth material
 * gives every edge a spring constant under every formulation, PBD included, where a hinge under
 * PBD takes the def's stiffness instead.
 *
 * Per method and size:
 * 1. Stable step: the largest h for which 2 s in steps of h (one substep each, the method's fixed
 *    iteration count) stay finite, raise no PBD_WARN_DIVERGED and keep every structural and shear
 *    edge's strain at or below STRAIN_BOUND at every sample. The bound is a torn cloth, not a
 *    quality: the load concentrates at the two point pins, where the converged motion stretches
 *    an edge by 20, 30 and 49 % at N = 32, 64 and 128, so a tighter bound would fail the physics
 *    at large N. Flexion edges are left out of it: a fold shortens them by design. Searched from
 *    H_MAX down by halving until a step passes, then REFINE bisections on a log scale between it
 *    and the failing step above.
 * 2. Its cost: wall time inside pbd_world_step per simulated second, in that passing run.
 * 3. Cost of 1 %: the first rung of the method's ladder of settings at 60 Hz whose run passes the
 *    stability test of (1) and whose mean structural strain stays at or below TARGET at every step
 *    of t in (1, 2] s (quality.c's test); its time per 1/60 s step.
 * 4. Energy drift: (E(2 s) - E(0)) / the most gravitational energy the fall released, with E the
 *    kinetic, gravitational and elastic energy, in the run of (3), or of (1) where (3) found no
 *    setting. No run has damping, so any loss is the method's own (implicit Euler, projective
 *    dynamics and VBD dissipate by construction; PBD and XPBD through unconverged iterations). */
#define _POSIX_C_SOURCE 200809L

#include "methods.h"

#include "cloth.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "pbd/material.h"
#include "pbd/pbd.h"

#define MATERIAL     "cotton_polyester"
#define SECONDS      2.0
#define FRAME        (1.0 / 60.0)
#define H_MAX        (1.0 / 30.0)
#define REFINE       3    /* bisections after the halving: the step is known to 2^(1/8), 9 % */
#define STRAIN_BOUND 1.0  /* structural and shear edges, |C| / rest */
#define TARGET       0.01 /* mean structural strain over the second second */
#define SAMPLE_S     1e-3 /* longest simulated time between two looks at the state */
#define CG_CAP       100  /* implicit Euler: CG iterations per solve at most */
#define CG_TOLERANCE 1e-4 /* implicit Euler: relative residual of each solve */
#define LADDER_TOP   2000 /* the last rung of every ladder */

typedef enum ladder_kind {
	LADDER_SUBSTEPS,  /* substeps at 60 Hz, `ladder_iterations` each */
	LADDER_ITERATIONS /* iterations of one 1/60 s substep */
} ladder_kind;

typedef struct mb_method {
	const char* name;
	pbd_method method;
	pbd_formulation formulation;
	int iterations; /* per step at the stable-step search */
	ladder_kind ladder;
	int ladder_iterations;
	const char* what;
} mb_method;

static const mb_method methods[] = {
    {"pbd", PBD_METHOD_POSITION_BASED, PBD_FORMULATION_PBD, 10, LADDER_SUBSTEPS, 1,
     "PBD, stiffness from the material's compliance, Gauss-Seidel; 10 iterations; ladder: substeps x 1"},
    {"xpbd", PBD_METHOD_POSITION_BASED, PBD_FORMULATION_XPBD, 10, LADDER_SUBSTEPS, 1,
     "XPBD, Gauss-Seidel; 10 iterations; ladder: substeps x 1 (small steps)"},
    {"explicit_euler", PBD_METHOD_EXPLICIT_EULER, PBD_FORMULATION_XPBD, 1, LADDER_SUBSTEPS, 1,
     "forward Euler; ladder: substeps"},
    {"symplectic_euler", PBD_METHOD_SYMPLECTIC_EULER, PBD_FORMULATION_XPBD, 1, LADDER_SUBSTEPS, 1,
     "semi-implicit Euler; ladder: substeps"},
    {"implicit_euler", PBD_METHOD_IMPLICIT_EULER, PBD_FORMULATION_XPBD, CG_CAP, LADDER_SUBSTEPS, CG_CAP,
     "linearised backward Euler, PCG to 1e-4 or 100 iterations; ladder: substeps"},
    {"projective_dynamics", PBD_METHOD_PROJECTIVE_DYNAMICS, PBD_FORMULATION_XPBD, 10, LADDER_ITERATIONS, 0,
     "local/global, sparse Cholesky; 10 rounds; ladder: rounds of one 1/60 s substep"},
    {"vbd", PBD_METHOD_VBD, PBD_FORMULATION_XPBD, 10, LADDER_SUBSTEPS, 1,
     "vertex block descent; 10 sweeps; ladder: substeps x 1"},
};
#define METHOD_COUNT ((int)(sizeof methods / sizeof methods[0]))

/* The rungs of every ladder: the preferred numbers 1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, ...
 * (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 per decade, rounded), each about a quarter more than the
 * last, up to LADDER_TOP. Returns 0 past the top. */
static int rung_value(int k) {
	static const double mantissa[] = {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8};
	int last = 0;
	for (int i = 0, found = -1;; ++i) {
		const int v = (int)lround(mantissa[i % 10] * pow(10, i / 10));
		if (v > LADDER_TOP) return 0;
		if (v == last) continue;
		last = v;
		if (++found == k) return v;
	}
}

typedef struct mb_scene {
	uint32_t n;
	pbd_mesh mesh;
	pbd_cloth_material cloth;
	uint32_t pins[2];
} mb_scene;

/* What one simulation found. */
typedef struct mb_run {
	bool made;      /* the world and the cloth were created */
	bool failed;    /* non-finite, diverged, or an edge past STRAIN_BOUND */
	bool missed;    /* a quality run: the mean structural strain went past TARGET in the window */
	bool timed_out; /* stopped at the wall-time limit, undecided */
	double step_ms; /* wall time inside pbd_world_step */
	double window_strain;
	double drift;    /* (E(end) - E(0)) / the most gravitational energy released; NAN when undefined */
	double residual; /* the worst CG residual seen (implicit Euler), else 0 */
	int substeps, iterations;
	double dt;
} mb_run;

static bool stable(const mb_run* r) { return r->made && !r->failed && !r->timed_out; }

static bool cg_unconverged(const mb_run* r) { return r->residual > (double)(pbd_real)CG_TOLERANCE * 1.0001; }

/* Runs SECONDS of the scene in steps of dt with the given substeps and iterations. A quality run
 * also checks TARGET over the second half; it looks at the state after every step, a stability
 * run at least every SAMPLE_S (every step for implicit Euler, whose CG residual is per step).
 * Stops at the first failure: what comes after it is not needed. */
static mb_run simulate(const mb_scene* sc, const mb_method* m, double dt, int substeps, int iterations, bool quality,
                       double limit_ms) {
	mb_run r;
	memset(&r, 0, sizeof r);
	r.substeps = substeps;
	r.iterations = iterations;
	r.dt = (double)(pbd_real)dt;
	r.drift = (double)NAN;
	pbd_world_def d = pbd_world_def_default();
	d.method = m->method;
	d.formulation = m->formulation;
	d.dt = (pbd_real)dt;
	d.substeps = substeps;
	d.iterations = iterations;
	d.linear_tolerance = (pbd_real)CG_TOLERANCE;
	d.diagnostics = false;
	d.particle_capacity = sc->mesh.vertex_count;
	d.distance_capacity = sc->mesh.edge_count;
	d.log = bench_quiet;
	pbd_world* w = NULL;
	if (pbd_world_create(&d, &w) != PBD_OK) return r;
	pbd_soft_def sd = pbd_soft_def_default();
	sd.mesh = &sc->mesh;
	sd.mass_mode = PBD_MASS_DENSITY;
	sd.mass = sc->cloth.density;
	sd.cloth = &sc->cloth;
	sd.pinned = sc->pins;
	sd.pinned_count = 2;
	if (pbd_soft_create(w, &sd, NULL) != PBD_OK) {
		pbd_world_destroy(w);
		return r;
	}
	r.made = true;
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	const double energy0 = st.kinetic_energy + st.potential_energy + st.elastic_energy;
	const double potential0 = st.potential_energy;
	double released = 0;
	const long steps = lround(SECONDS / r.dt) > 0 ? lround(SECONDS / r.dt) : 1;
	long every = 1;
	if (!quality && m->method != PBD_METHOD_IMPLICIT_EULER && r.dt < SAMPLE_S) every = (long)(SAMPLE_S / r.dt);
	const double start = bench_now_ms();
	for (long i = 1; i <= steps; ++i) {
		const double t0 = bench_now_ms();
		pbd_world_step(w);
		r.step_ms += bench_now_ms() - t0;
		if (i % every != 0 && i != steps) continue;
		pbd_world_get_stats(w, &st);
		const double stretch = fmax(st.edge_max_strain[PBD_EDGE_STRUCTURAL], st.edge_max_strain[PBD_EDGE_SHEAR]);
		if (!isfinite(st.kinetic_energy) || !(stretch <= STRAIN_BOUND) ||
		    pbd_world_get_warning(w, PBD_WARN_DIVERGED).count > 0) {
			r.failed = true;
			break;
		}
		if (st.linear_residual > r.residual) r.residual = st.linear_residual;
		if (potential0 - st.potential_energy > released) released = potential0 - st.potential_energy;
		if (quality && 2 * i > steps) {
			const double mean = st.edge_mean_strain[PBD_EDGE_STRUCTURAL];
			if (mean > r.window_strain) r.window_strain = mean;
			if (!(mean <= TARGET)) {
				r.missed = true;
				break;
			}
		}
		if (i == steps) {
			const double energy = st.kinetic_energy + st.potential_energy + st.elastic_energy;
			if (st.energy_defined && released > 0) r.drift = (energy - energy0) / released;
		} else if (bench_now_ms() - start > limit_ms) {
			r.timed_out = true;
			break;
		}
	}
	pbd_world_destroy(w);
	return r;
}

/* The stable-step search of (1). */
typedef struct mb_stable {
	mb_run run;     /* the run at the largest passing step, when one passed */
	bool found;     /* some step passed */
	bool above;     /* even H_MAX passed: the stable step is larger */
	double failing; /* the smallest step that failed, 0 when none did */
	bool timed_out; /* some run hit the limit: the search stopped there */
	int evaluations;
} mb_stable;

static mb_stable find_stable(const mb_scene* sc, const mb_method* m, double h_min, double limit_ms) {
	mb_stable s;
	memset(&s, 0, sizeof s);
	double hi = 0; /* the smallest failing step above the passing one */
	for (double h = H_MAX; h >= h_min; h /= 2) {
		const mb_run r = simulate(sc, m, h, 1, m->iterations, false, limit_ms);
		++s.evaluations;
		if (r.timed_out) {
			s.timed_out = true;
			break;
		}
		if (stable(&r)) {
			s.run = r;
			s.found = true;
			break;
		}
		hi = h;
	}
	s.failing = hi;
	if (!s.found) return s;
	if (hi == 0) {
		s.above = true;
		return s;
	}
	double lo = s.run.dt;
	for (int k = 0; k < REFINE && !s.timed_out; ++k) {
		const double mid = sqrt(lo * hi);
		const mb_run r = simulate(sc, m, mid, 1, m->iterations, false, limit_ms);
		++s.evaluations;
		if (r.timed_out) {
			s.timed_out = true;
		} else if (stable(&r)) {
			s.run = r;
			lo = mid;
		} else {
			hi = mid;
		}
	}
	s.failing = hi;
	return s;
}

/* The ladder search of (3): rungs from the cheapest up, the first that passes. */
typedef struct mb_quality {
	mb_run run; /* the passing rung's, else the last rung run */
	bool found;
	bool failed; /* no rung passed and the last failed (1)'s test, or was left out as bound to */
	bool timed_out;
	int evaluations;
} mb_quality;

static mb_quality find_quality(const mb_scene* sc, const mb_method* m, const mb_stable* s, double limit_ms) {
	mb_quality q;
	memset(&q, 0, sizeof q);
	for (int k = 0; rung_value(k) > 0; ++k) {
		const int v = rung_value(k);
		const int substeps = m->ladder == LADDER_SUBSTEPS ? v : 1;
		const int iterations = m->ladder == LADDER_SUBSTEPS ? m->ladder_iterations : v;
		/* A rung whose substep is no shorter than a step that failed (1) with at least as many
		 * iterations would fail (1)'s test, which (3) includes (fewer iterations of the same step
		 * hold the cloth no better), so it is not run. */
		if (s->failing > 0 && iterations <= m->iterations && FRAME / substeps >= s->failing) {
			q.failed = true;
			continue;
		}
		q.run = simulate(sc, m, FRAME, substeps, iterations, true, limit_ms);
		q.failed = !stable(&q.run);
		++q.evaluations;
		if (q.run.timed_out) {
			q.timed_out = true;
			break;
		}
		if (stable(&q.run) && !q.run.missed) {
			q.found = true;
			break;
		}
	}
	return q;
}

static void append(char* out, size_t size, const char* flag) {
	const size_t used = strlen(out);
	snprintf(out + used, size - used, "%s%s", used ? ", " : "", flag);
}

static void row(const mb_scene* sc, const mb_method* m, double h_min, double limit_ms, FILE* csv) {
	const double t0 = bench_now_ms();
	const mb_stable s = find_stable(sc, m, h_min, limit_ms);
	const mb_quality q = find_quality(sc, m, &s, limit_ms);
	const double seconds = (bench_now_ms() - t0) / 1e3;

	char step[24], cost[16], setting[24], frame_ms[16], drift[16], status[80] = "";
	if (s.found) {
		snprintf(step, sizeof step, "%s%.3g", s.above ? "> " : "", s.run.dt);
		snprintf(cost, sizeof cost, "%.1f", s.run.step_ms / SECONDS);
	} else if (s.failing > 0) {
		snprintf(step, sizeof step, "< %.3g", s.failing);
		snprintf(cost, sizeof cost, "-");
	} else {
		snprintf(step, sizeof step, "?");
		snprintf(cost, sizeof cost, "-");
	}
	if (q.found) {
		snprintf(setting, sizeof setting, "%d sub x %d it", q.run.substeps, q.run.iterations);
		snprintf(frame_ms, sizeof frame_ms, "%.2f", q.run.step_ms / (SECONDS / FRAME));
	} else {
		snprintf(setting, sizeof setting, "-");
		snprintf(frame_ms, sizeof frame_ms, "-");
	}
	/* The drift at the 1 % setting, else at the stable step (marked *). */
	const mb_run* e = q.found ? &q.run : s.found ? &s.run : NULL;
	if (e && isfinite(e->drift))
		snprintf(drift, sizeof drift, "%+.1f %%%s", 100 * e->drift, q.found ? "" : "*");
	else
		snprintf(drift, sizeof drift, "-");
	if (!s.found && !s.timed_out) append(status, sizeof status, "unstable");
	if (!q.found && !q.timed_out) append(status, sizeof status, q.failed ? "1 % diverged" : "1 % not reached");
	const double residual = fmax(s.found ? s.run.residual : 0, q.found ? q.run.residual : 0);
	if ((s.found && cg_unconverged(&s.run)) || (q.found && cg_unconverged(&q.run))) {
		char flag[40];
		snprintf(flag, sizeof flag, "cg unconverged (%.1e)", residual);
		append(status, sizeof status, flag);
	}
	if (s.timed_out || q.timed_out) append(status, sizeof status, "time limit");
	if (!*status) append(status, sizeof status, "ok");
	printf("%-20s %10s %10s %16s %9s %10s %6.0f  %s\n", m->name, step, cost, setting, frame_ms, drift, seconds, status);
	fflush(stdout);
	if (csv) {
		fprintf(csv, "%u,%s,%s,%.6g,%s,", sc->n, m->name,
		        s.found ? (s.above ? "above" : "found") : (s.failing > 0 ? "below" : "unknown"),
		        s.found ? s.run.dt : s.failing, s.found ? cost : "");
		if (q.found)
			fprintf(csv, "%d,%d,%.6g,%.4f,", q.run.substeps, q.run.iterations, q.run.window_strain,
			        q.run.step_ms / (SECONDS / FRAME));
		else
			fputs(",,,,", csv);
		if (e && isfinite(e->drift))
			fprintf(csv, "%.6g,%s,", e->drift, q.found ? "quality" : "stable");
		else
			fputs(",,", csv);
		fprintf(csv, "%.3g,%d,%.1f,\"%s\"\n", residual, s.evaluations + q.evaluations, seconds, status);
	}
}

bool bench_methods_known(const char* name) {
	for (int i = 0; i < METHOD_COUNT; ++i)
		if (strcmp(name, methods[i].name) == 0) return true;
	return false;
}

int bench_methods(const uint32_t* sizes, int size_count, double h_min, double limit_s, const char* only, FILE* csv) {
	mb_scene sc;
	memset(&sc, 0, sizeof sc);
	pbd_error err;
	if (pbd_cloth_material_preset(MATERIAL, &sc.cloth, &err) != PBD_OK) {
		fprintf(stderr, "pbd bench: %s\n", err.message);
		return -1;
	}
	printf("\nmethods on one scene: the hanging cloth (1 m, N x N, lying flat, two corners pinned, gravity, no wind,\n"
	       "no damping) with the %s material (%.4g kg/m^2, stretch %.4g N/m, shear %.4g N/m, bending %.4g N m)\n"
	       "on structural, shear and flexion edges; one thread\n\n",
	       MATERIAL, (double)sc.cloth.density, (double)sc.cloth.stretch, (double)sc.cloth.shear,
	       (double)sc.cloth.bending);
	for (int i = 0; i < METHOD_COUNT; ++i) printf("  %-20s %s\n", methods[i].name, methods[i].what);
	printf(
	    "\n  stable h    largest step h (s) whose %.0f s, one substep per step, stay finite, undiverged and with "
	    "every\n"
	    "              structural and shear strain <= %.2g; halving from %.3g s down to %.3g s, then %d bisections\n"
	    "              on a log scale (the step is known to %.0f %%)\n"
	    "  ms/sim-s    wall ms inside pbd_world_step per simulated second, at that step\n"
	    "  1 %%         the first rung at 60 Hz (substeps or iterations %s) that is\n"
	    "              stable as above and keeps the mean structural strain <= %.3g %% at every step of t in (1, 2] s\n"
	    "  ms/step     wall ms per 1/60 s step at that rung\n"
	    "  drift       (E(2 s) - E(0)) / gravitational energy released, E kinetic + gravitational + elastic,\n"
	    "              at the 1 %% rung (* at the stable step where no rung passed)\n"
	    "  s           wall seconds the row's searches took\n",
	    SECONDS, STRAIN_BOUND, H_MAX, h_min, REFINE, 100 * (pow(2, 1.0 / (1 << REFINE)) - 1),
	    "1, 2, 3, 4, 5, 6, 8, 10, 12, 15, ... 2000", 100 * TARGET);
	if (csv)
		fputs("n,method,stable_h_kind,stable_h_s,ms_per_sim_s,quality_substeps,quality_iterations,"
		      "quality_max_mean_structural_strain,quality_ms_per_step,energy_drift,energy_drift_at,cg_residual,"
		      "runs,seconds,status\n",
		      csv);
	for (int si = 0; si < size_count; ++si) {
		sc.n = sizes[si];
		sc.pins[0] = 0;
		sc.pins[1] = sc.n - 1;
		pbd_grid_def g = bench_cloth_grid_def(sc.n);
		g.bend = true;
		if (pbd_mesh_grid(&g, &sc.mesh, &err) != PBD_OK) {
			fprintf(stderr, "pbd bench: methods N=%u: %s\n", sc.n, err.message);
			return -1;
		}
		printf("\nN = %u: %u particles, %u edges\n\n", sc.n, sc.mesh.vertex_count, sc.mesh.edge_count);
		printf("%-20s %10s %10s %16s %9s %10s %6s  %s\n", "method", "stable h", "ms/sim-s", "1 % setting", "ms/step",
		       "drift", "s", "status");
		const double t0 = bench_now_ms();
		for (int mi = 0; mi < METHOD_COUNT; ++mi)
			if (!only || strcmp(only, methods[mi].name) == 0) row(&sc, &methods[mi], h_min, limit_s * 1e3, csv);
		printf("\nN = %u took %.0f s\n", sc.n, (bench_now_ms() - t0) / 1e3);
		pbd_mesh_free(&sc.mesh);
	}
	printf("\nstatus: ok = a stable step and a 1 %% rung were found; unstable = no step down to the smallest passed\n"
	       "(stable h shows the smallest that failed); 1 %% not reached / diverged = no rung passed, the last one\n"
	       "stayed above the target / failed the stability test; cg unconverged (worst relative residual) = a CG\n"
	       "solve of a reported run stopped at %d iterations above its tolerance; time limit = a run hit the\n"
	       "wall-time limit and the search stopped there (stable h then shows what was known)\n",
	       CG_CAP);
	return 0;
}
