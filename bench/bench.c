/* pbd benchmark: a hanging cloth, timed step by step on pbd (public API only) and on Bullet's
 * soft body with the same nodes, masses, links and iteration count. docs/BENCHMARKS.md
 * describes the scene, the Bullet settings and the measured table. */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"
#include "cloth.h"
#include "collision.h"
#include "methods.h"
#include "quality.h"
#include "resolution.h"
#include "rigid.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pbd/pbd.h"

#ifdef PBD_HAVE_BULLET
#include "bullet_peer.h"
#endif

#ifndef PBD_BENCH_BUILD_TYPE
#define PBD_BENCH_BUILD_TYPE "unknown"
#endif
#ifndef PBD_BENCH_C_COMPILER
#define PBD_BENCH_C_COMPILER "unknown"
#endif
#ifndef PBD_BENCH_C_FLAGS
#define PBD_BENCH_C_FLAGS "unknown"
#endif

#define BENCH_PREFIX "pbd bench: "

enum {
	BENCH_MAX_SIZES = 16,
	BENCH_MAX_VARIANTS = 32,
	BENCH_MAX_THREAD_COUNTS = 4,
	/* N = 2 would link the two pinned corners to each other: nothing to simulate there. */
	BENCH_MIN_N = 3,
	BENCH_MAX_N = 2048,
	BENCH_MAX_STEPS = 1000000,
	BENCH_MAX_ITERATIONS = 1000,
	BENCH_MAX_REPEAT = 1000,
	/* Above this N the default is one repeat: a run is long enough to be its own average. */
	BENCH_REPEAT_SPLIT_N = 128
};

static const double BENCH_DT = 1.0 / 60.0;
static const double BENCH_GRAVITY = -9.81;

/* One pbd configuration: a row per N. */
typedef struct bench_variant {
	pbd_solver solver;
	pbd_formulation formulation;
	pbd_simd simd;
	bool simd_named; /* --simd given: the solver column says which kernels ran */
	int threads;
} bench_variant;

/* A strain no cloth material reaches: the library's default divergence_strain. */
#define BENCH_DIVERGED_STRAIN 10.0

typedef struct bench_options {
	uint32_t sizes[BENCH_MAX_SIZES];
	int size_count;
	int steps;
	int iterations;
	int repeat; /* 0: the default, 3 for N <= 128 and 1 above */
	pbd_solver solvers[2];
	int solver_count;
	pbd_formulation formulations[2];
	int formulation_count;
	pbd_simd simds[3];
	int simd_count;
	int threads[BENCH_MAX_THREAD_COUNTS];
	int thread_count;
	bool simd_given;
	bool bullet;
	double tolerance; /* max strain of a converged row */
	const char* csv_path;
	bool help;
	int quality;           /* 0 off, 1 after the throughput table, 2 instead of it */
	double quality_target; /* mean structural strain the cloth must hold */
	double quality_cap;    /* ms per step above which a missing rung ends the ladder */
	const char* quality_method;
	const char* quality_csv;
	bool resolution;  /* the resolution study instead of the tables */
	bool sizes_given; /* --sizes was on the command line */
	bool collision;   /* the collision rows instead of the tables */
	const char* collision_csv;
	bool methods;         /* every method on one scene instead of the tables */
	double methods_limit; /* wall seconds one of its simulations may take */
	double methods_h_min; /* the smallest step its stable-step search tries */
	const char* methods_only;
	bool profile;     /* time the step's phases (pbd_world_def.profile) and print them under each pbd row */
	bool rigid;       /* the rigid-body rows instead of the tables */
	bool rigid_large; /* the large rigid-body table instead of the tables (after --rigid's with it) */
	int rigid_steps;  /* 0: each rigid table's own default */
	bool rigid_small; /* their scenes at smoke-test sizes */
} bench_options;

/* The cloth of one size, built once and shared by every repeat and by the Bullet peer. */
typedef struct bench_scene {
	uint32_t n;
	pbd_mesh mesh;
	uint32_t pinned[2];
	double* rest;    /* rest length per mesh edge, from the initial positions */
	double* xyz;     /* scratch: positions as doubles (3 per vertex) */
	double* masses;  /* kg per vertex, 0 for the pinned corners (Bullet's convention) */
	double* step_ms; /* scratch: one time per step */
} bench_scene;

/* The step's phases that this scene runs (pbd_stats.profile), ms per step. The cloth has one
 * family and no collider: "solve" is the distance kernels, "other" the rest of the step. */
typedef struct bench_phases {
	double step, prepare, predict, solve, collide, contacts, finish, other;
} bench_phases;

/* What one run from rest leaves behind. */
typedef struct bench_run {
	double median_ms;
	double max_strain, mean_strain;
	double own_max_strain, own_mean_strain; /* the bench's own strain, to cross-check pbd's stats */
	double min_y;
	uint64_t hash;
	bool finite;
	uint64_t nonfinite_warnings;
	bench_phases phases; /* --profile: ms per step of each phase, the mean over the run's steps */
} bench_run;

typedef struct bench_row {
	const char* engine;
	const char* solver;
	const char* formulation;
	int threads; /* 0: the peer's row */
	uint32_t n, particles, constraints;
	int repeats;
	double ms, ms_min; /* median and minimum over repeats of the per-step median */
	double mproj;      /* million constraint projections per second at `ms` */
	double max_strain, mean_strain, min_y;
	uint64_t hash;    /* of the first repeat */
	bool hash_stable; /* every repeat ended in the same state */
	char status[32];
	double ratio;        /* Bullet ms / this row's ms; NAN when there is no Bullet row */
	bool has_phases;     /* a pbd row under --profile */
	bench_phases phases; /* the mean of its runs' */
} bench_row;

/* ---- small helpers ---------------------------------------------------------------------- */

static int compare_double(const void* a, const void* b) {
	const double x = *(const double*)a, y = *(const double*)b;
	return (x > y) - (x < y);
}

/* Median of v[0..n); sorts v in place. */
static double median(double* v, size_t n) {
	if (n == 0) return (double)NAN;
	qsort(v, n, sizeof *v, compare_double);
	return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static const char* solver_name(pbd_solver s) { return s == PBD_SOLVER_JACOBI ? "jacobi" : "gs"; }

/* The solver column of a row: with --simd, which kernels ran too. */
static const char* variant_solver(bench_variant v) {
	static const char* const named[2][4] = {{"gs/auto", "gs/scalar", "gs/avx2", "gs/avx512"},
	                                        {"jacobi/auto", "jacobi/scalar", "jacobi/avx2", "jacobi/avx512"}};
	return v.simd_named ? named[v.solver == PBD_SOLVER_JACOBI][v.simd] : solver_name(v.solver);
}

static const char* formulation_name(pbd_formulation f) { return f == PBD_FORMULATION_XPBD ? "xpbd" : "pbd"; }

static int default_repeat(uint32_t n) { return n <= BENCH_REPEAT_SPLIT_N ? 3 : 1; }

static uint32_t expected_constraints(uint32_t n) {
	/* structural along u and v, plus both diagonals of every cell */
	return 2u * n * (n - 1u) + 2u * (n - 1u) * (n - 1u);
}

/* Strain |len - rest| / rest over the mesh edges, for any engine's positions. */
static void edge_strain(const bench_scene* s, const double* xyz, double* max_out, double* mean_out) {
	double max = 0.0, sum = 0.0;
	const uint32_t* e = s->mesh.edges;
	for (uint32_t k = 0; k < s->mesh.edge_count; ++k) {
		const double* a = xyz + 3 * (size_t)e[2 * k];
		const double* b = xyz + 3 * (size_t)e[2 * k + 1];
		const double dx = b[0] - a[0], dy = b[1] - a[1], dz = b[2] - a[2];
		const double strain = fabs(sqrt(dx * dx + dy * dy + dz * dz) - s->rest[k]) / s->rest[k];
		if (!(strain <= max)) max = strain; /* NaN sticks */
		sum += strain;
	}
	*max_out = max;
	*mean_out = s->mesh.edge_count ? sum / (double)s->mesh.edge_count : 0.0;
}

static double min_height(const double* xyz, uint32_t count, bool* finite) {
	double min_y = (double)INFINITY;
	*finite = true;
	for (uint32_t i = 0; i < count; ++i) {
		const double* p = xyz + 3 * (size_t)i;
		if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])) *finite = false;
		if (p[1] < min_y) min_y = p[1];
	}
	return *finite ? min_y : (double)NAN;
}

/* ---- options ---------------------------------------------------------------------------- */

static void print_help(FILE* f) {
	fprintf(f,
	        "usage: pbd bench [options]    (without the app: pbd-bench [options])\n"
	        "Hanging cloth: 1 m square of N x N particles, 1 kg, two corners of one edge pinned,\n"
	        "structural + shear distance constraints, dt 1/60 s, 1 substep, from rest; one thread unless --threads.\n"
	        "Times every step, reports the median per run and the median over repeats.\n"
	        "\n"
	        "  --sizes LIST          grid sizes N, comma separated (default 32,64,128,256; %d..%d)\n"
	        "  --steps K             steps per run (default 120)\n"
	        "  --iterations I        constraint iterations per step, both engines (default 10)\n"
	        "  --repeat R            runs per size and engine, each from a fresh world\n"
	        "                        (default 3 for N <= %d, 1 above)\n"
	        "  --solver LIST         pbd solvers: gs, jacobi or gs,jacobi (default gs)\n"
	        "  --formulation LIST    pbd formulations: pbd (stiffness 1), xpbd (compliance 0)\n"
	        "                        or pbd,xpbd (default pbd); one pbd row per solver x formulation\n"
	        "  --simd LIST           pbd kernels: auto, scalar, avx2, avx512, or up to three of them,\n"
	        "                        e.g. scalar,avx2,avx512\n"
	        "                        (default auto); one row each, named in the solver column\n"
	        "  --threads LIST        threads a pbd step runs on, up to 4 counts, e.g. 1,2 (default 1);\n"
	        "                        one row each (the thr column); the cost-to-quality table too\n"
	        "  --no-bullet           skip the Bullet soft-body peer\n"
	        "  --tolerance S         max strain |C|/rest of a converged cloth (default 0.05)\n"
	        "  --csv FILE            also write the table as CSV\n"
	        "  --profile             time each phase of pbd's step (pbd_stats.profile) and print, under each\n"
	        "                        pbd row, its ms per step; the CSV's profile_* columns get them\n"
	        "  --quality             then the cost-to-quality table: per method, the cheapest\n"
	        "                        setting that keeps the cloth taut from t = 1 to 2 s, and its cost\n"
	        "  --quality-only        the cost-to-quality table alone\n"
	        "  --quality-target S    mean structural strain to hold (default 0.01)\n"
	        "  --quality-cap MS      stop a method's ladder after a rung that misses and costs\n"
	        "                        more than MS ms per step (default 250)\n"
	        "  --quality-method M    only this method (xpbd-gs, pbd-gs-sub, pbd-gs-it, chebyshev,\n"
	        "                        xpbd-lra, pbd-lra-it, xpbd-hier, pbd-hier-it)\n"
	        "  --quality-csv FILE    also write the cost-to-quality table as CSV\n"
	        "  --resolution          the resolution study alone: the same cloth's sag at each size\n"
	        "                        under a PBD stiffness and a physical material (PBD and XPBD);\n"
	        "                        --csv writes its rows\n",
	        BENCH_MIN_N, BENCH_MAX_N, BENCH_REPEAT_SPLIT_N);
	/* in two parts: one string literal past 4095 characters is more than C17 asks a compiler for */
	fprintf(f,
	        "  --collision           the collision rows alone (default sizes 32,64,128): the cloth\n"
	        "                        on a static sphere (pbd and Bullet), a cloth folded on itself with\n"
	        "                        and without self-collision, a cloth dropped on a table and four\n"
	        "                        cloths piled on a sphere (on 1 and 2 threads), with the edges\n"
	        "                        through faces counted at every step; --steps, --repeat, --no-bullet\n"
	        "                        apply\n"
	        "  --collision-csv FILE  also write the collision rows as CSV (with --collision)\n"
	        "  --methods             every method (pbd, xpbd, explicit, symplectic and implicit Euler,\n"
	        "                        projective dynamics, vbd) on one cloth with a physical material,\n"
	        "                        alone (default sizes 32,64): the largest stable step and its cost,\n"
	        "                        the cost of 1 %% mean strain, the energy drift; --csv writes its rows\n"
	        "  --methods-limit S     wall seconds one simulation of --methods may take (default 60)\n"
	        "  --methods-h-min H     the smallest step --methods tries, s (default 1e-5)\n"
	        "  --methods-only M      only this method's row (pbd, xpbd, explicit_euler, symplectic_euler,\n"
	        "                        implicit_euler, projective_dynamics, vbd)\n"
	        "  --rigid               the rigid-body rows alone: 20 boxes stacked, a pyramid of 20 layers\n"
	        "                        and 1000 boxes, balls and capsules poured into a box, in pbd on 1\n"
	        "                        and 2 threads and in Bullet's rigid-body world; --no-bullet applies\n"
	        "  --rigid-large         the large rigid-body rows: a pyramid of 100 layers (5050 boxes), 5000\n"
	        "                        convex hulls poured into a box and a 100 x 100 grid of balls on ball\n"
	        "                        joints, in pbd at 20 and at 4 substeps on 1 and 2 threads and in\n"
	        "                        Bullet once per frame; alone, or after --rigid's rows with it\n"
	        "  --rigid-steps K       steps of 1/60 s per rigid-body row (default 600; 2000 for --rigid-large)\n"
	        "  --rigid-small         the rigid-body scenes small: 5 boxes, 5 layers, 50 bodies; with\n"
	        "                        --rigid-large 10 layers, 50 hulls, 5 x 5 balls\n"
	        "  --help                this text\n"
	        "\n"
	        "Status of a row, from the final state of every engine alike: diverged (non-finite, or a\n"
	        "strain above %g, the library's default divergence bound), unconverged (max strain above\n"
	        "the tolerance: the time was spent but the cloth is not inextensible), or ok.\n"
	        "Exit status: 0, also with diverged or unconverged rows; 1 when a row's state differed\n"
	        "between repeats or an engine failed; 2 for a bad command line.\n",
	        BENCH_DIVERGED_STRAIN);
}

/* Strict integer in [lo, hi]: digits only (strtol alone would take "+7", " 7" and "7x"). */
static bool parse_int(const char* s, long lo, long hi, long* out) {
	if (!s || !*s) return false;
	for (const char* c = s; *c; ++c)
		if (*c < '0' || *c > '9') return false;
	errno = 0;
	char* end = NULL;
	const long v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi) return false;
	*out = v;
	return true;
}

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 1, 2)))
#endif
static int
usage_error(const char* fmt, ...) {
	va_list args;
	va_start(args, fmt);
	fputs(BENCH_PREFIX, stderr);
	vfprintf(stderr, fmt, args);
	fputs(" (see --help)\n", stderr);
	va_end(args);
	return 2;
}

/* Strict real number in [lo, hi]: the whole string, finite. */
static bool parse_real(const char* s, double lo, double hi, double* out) {
	if (!s || !*s) return false;
	char* end = NULL;
	errno = 0;
	const double v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !(v >= lo && v <= hi)) return false;
	*out = v;
	return true;
}

/* Splits a comma list into items of at most 15 characters each. */
static int split_list(const char* value, char items[][16], int max_items) {
	int count = 0;
	const char* p = value;
	for (;;) {
		const char* comma = strchr(p, ',');
		const size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == 0 || len >= 16 || count == max_items) return -1;
		memcpy(items[count], p, len);
		items[count][len] = '\0';
		++count;
		if (!comma) return count;
		p = comma + 1;
	}
}

static int parse_sizes(const char* value, bench_options* o) {
	char items[BENCH_MAX_SIZES][16];
	const int count = split_list(value, items, BENCH_MAX_SIZES);
	if (count < 0)
		return usage_error("--sizes: expected up to %d comma-separated sizes, got '%s'", BENCH_MAX_SIZES, value);
	for (int i = 0; i < count; ++i) {
		long n = 0;
		if (!parse_int(items[i], BENCH_MIN_N, BENCH_MAX_N, &n))
			return usage_error("--sizes: '%s' is not an integer in [%d, %d]", items[i], BENCH_MIN_N, BENCH_MAX_N);
		for (int j = 0; j < i; ++j)
			if (o->sizes[j] == (uint32_t)n) return usage_error("--sizes: %s is listed twice", items[i]);
		o->sizes[i] = (uint32_t)n;
	}
	o->size_count = count;
	return 0;
}

static int parse_solvers(const char* value, bench_options* o) {
	char items[2][16];
	const int count = split_list(value, items, 2);
	if (count < 0) return usage_error("--solver: expected gs, jacobi or gs,jacobi, got '%s'", value);
	for (int i = 0; i < count; ++i) {
		if (strcmp(items[i], "gs") == 0)
			o->solvers[i] = PBD_SOLVER_GAUSS_SEIDEL;
		else if (strcmp(items[i], "jacobi") == 0)
			o->solvers[i] = PBD_SOLVER_JACOBI;
		else
			return usage_error("--solver: unknown solver '%s' (gs or jacobi)", items[i]);
	}
	if (count == 2 && o->solvers[0] == o->solvers[1]) return usage_error("--solver: '%s' is listed twice", items[0]);
	o->solver_count = count;
	return 0;
}

static int parse_formulations(const char* value, bench_options* o) {
	char items[2][16];
	const int count = split_list(value, items, 2);
	if (count < 0) return usage_error("--formulation: expected pbd, xpbd or pbd,xpbd, got '%s'", value);
	for (int i = 0; i < count; ++i) {
		if (strcmp(items[i], "pbd") == 0)
			o->formulations[i] = PBD_FORMULATION_PBD;
		else if (strcmp(items[i], "xpbd") == 0)
			o->formulations[i] = PBD_FORMULATION_XPBD;
		else
			return usage_error("--formulation: unknown formulation '%s' (pbd or xpbd)", items[i]);
	}
	if (count == 2 && o->formulations[0] == o->formulations[1])
		return usage_error("--formulation: '%s' is listed twice", items[0]);
	o->formulation_count = count;
	return 0;
}

static int parse_simd(const char* value, bench_options* o) {
	char items[3][16];
	const int count = split_list(value, items, 3);
	if (count < 0) return usage_error("--simd: expected one to three of auto, scalar, avx2, avx512, got '%s'", value);
	for (int i = 0; i < count; ++i) {
		if (strcmp(items[i], "auto") == 0)
			o->simds[i] = PBD_SIMD_AUTO;
		else if (strcmp(items[i], "scalar") == 0)
			o->simds[i] = PBD_SIMD_SCALAR;
		else if (strcmp(items[i], "avx2") == 0)
			o->simds[i] = PBD_SIMD_AVX2;
		else if (strcmp(items[i], "avx512") == 0)
			o->simds[i] = PBD_SIMD_AVX512;
		else
			return usage_error("--simd: unknown mode '%s' (auto, scalar, avx2 or avx512)", items[i]);
	}
	for (int i = 0; i < count; ++i)
		for (int j = 0; j < i; ++j)
			if (o->simds[i] == o->simds[j]) return usage_error("--simd: '%s' is listed twice", items[i]);
	o->simd_count = count;
	o->simd_given = true;
	return 0;
}

static int parse_threads(const char* value, bench_options* o) {
	char items[BENCH_MAX_THREAD_COUNTS][16];
	const int count = split_list(value, items, BENCH_MAX_THREAD_COUNTS);
	if (count < 0)
		return usage_error("--threads: expected up to %d thread counts, e.g. 1,2, got '%s'", BENCH_MAX_THREAD_COUNTS,
		                   value);
	for (int i = 0; i < count; ++i) {
		long v = 0;
		if (!parse_int(items[i], 1, PBD_MAX_THREADS, &v))
			return usage_error("--threads: '%s' is not an integer in [1, %d]", items[i], PBD_MAX_THREADS);
		for (int j = 0; j < i; ++j)
			if (o->threads[j] == (int)v) return usage_error("--threads: %ld is listed twice", v);
		o->threads[i] = (int)v;
	}
	o->thread_count = count;
	return 0;
}

static int parse_options(int argc, char** argv, bench_options* o) {
	memset(o, 0, sizeof *o);
	static const uint32_t default_sizes[] = {32, 64, 128, 256};
	o->size_count = 4;
	memcpy(o->sizes, default_sizes, sizeof default_sizes);
	o->steps = 120;
	o->iterations = 10;
	o->solvers[0] = PBD_SOLVER_GAUSS_SEIDEL;
	o->solver_count = 1;
	o->formulations[0] = PBD_FORMULATION_PBD;
	o->formulation_count = 1;
	o->simds[0] = PBD_SIMD_AUTO;
	o->simd_count = 1;
	o->threads[0] = 1;
	o->thread_count = 1;
	o->bullet = true;
	o->tolerance = 0.05;
	o->quality_target = 0.01;
	o->quality_cap = 250;
	o->methods_limit = 60;
	o->methods_h_min = 1e-5;

	enum {
		OPT_SIZES,
		OPT_STEPS,
		OPT_ITERATIONS,
		OPT_REPEAT,
		OPT_SOLVER,
		OPT_FORMULATION,
		OPT_NO_BULLET,
		OPT_TOLERANCE,
		OPT_CSV,
		OPT_HELP,
		OPT_QUALITY,
		OPT_QUALITY_ONLY,
		OPT_QUALITY_TARGET,
		OPT_QUALITY_CAP,
		OPT_QUALITY_METHOD,
		OPT_QUALITY_CSV,
		OPT_RESOLUTION,
		OPT_COLLISION,
		OPT_COLLISION_CSV,
		OPT_METHODS,
		OPT_METHODS_LIMIT,
		OPT_METHODS_H_MIN,
		OPT_METHODS_ONLY,
		OPT_PROFILE,
		OPT_SIMD,
		OPT_THREADS,
		OPT_RIGID,
		OPT_RIGID_STEPS,
		OPT_RIGID_SMALL,
		OPT_RIGID_LARGE,
		OPT_COUNT
	};
	static const char* const names[OPT_COUNT] = {
	    "--sizes",         "--steps",         "--iterations",     "--repeat",        "--solver",
	    "--formulation",   "--no-bullet",     "--tolerance",      "--csv",           "--help",
	    "--quality",       "--quality-only",  "--quality-target", "--quality-cap",   "--quality-method",
	    "--quality-csv",   "--resolution",    "--collision",      "--collision-csv", "--methods",
	    "--methods-limit", "--methods-h-min", "--methods-only",   "--profile",       "--simd",
	    "--threads",       "--rigid",         "--rigid-steps",    "--rigid-small",   "--rigid-large"};
	static const bool takes_value[OPT_COUNT] = {true,  true,  true, true,  true, true, false, true,  true,  false,
	                                            false, false, true, true,  true, true, false, false, true,  false,
	                                            true,  true,  true, false, true, true, false, true,  false, false};
	bool seen[OPT_COUNT] = {false};

	for (int i = 1; i < argc; ++i) {
		const char* arg = argv[i];
		if (!arg) continue;
		const char* eq = strchr(arg, '=');
		const size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
		int opt = -1;
		for (int k = 0; k < OPT_COUNT; ++k)
			if (strlen(names[k]) == name_len && strncmp(arg, names[k], name_len) == 0) opt = k;
		if (opt < 0) {
			if (arg[0] == '-') return usage_error("unknown option '%s'", arg);
			return usage_error("unexpected argument '%s'", arg);
		}
		if (seen[opt]) return usage_error("%s given twice", names[opt]);
		seen[opt] = true;
		const char* value = NULL;
		if (takes_value[opt]) {
			if (eq)
				value = eq + 1;
			else if (i + 1 < argc && argv[i + 1])
				value = argv[++i];
			else
				return usage_error("%s needs a value", names[opt]);
		} else if (eq) {
			return usage_error("%s takes no value", names[opt]);
		}

		long v = 0;
		int rc = 0;
		switch (opt) {
		case OPT_SIZES:
			rc = parse_sizes(value, o);
			o->sizes_given = true;
			break;
		case OPT_STEPS:
			if (!parse_int(value, 1, BENCH_MAX_STEPS, &v))
				return usage_error("--steps: '%s' is not an integer in [1, %d]", value, BENCH_MAX_STEPS);
			o->steps = (int)v;
			break;
		case OPT_ITERATIONS:
			if (!parse_int(value, 1, BENCH_MAX_ITERATIONS, &v))
				return usage_error("--iterations: '%s' is not an integer in [1, %d]", value, BENCH_MAX_ITERATIONS);
			o->iterations = (int)v;
			break;
		case OPT_REPEAT:
			if (!parse_int(value, 1, BENCH_MAX_REPEAT, &v))
				return usage_error("--repeat: '%s' is not an integer in [1, %d]", value, BENCH_MAX_REPEAT);
			o->repeat = (int)v;
			break;
		case OPT_SOLVER:
			rc = parse_solvers(value, o);
			break;
		case OPT_FORMULATION:
			rc = parse_formulations(value, o);
			break;
		case OPT_SIMD:
			rc = parse_simd(value, o);
			break;
		case OPT_THREADS:
			rc = parse_threads(value, o);
			break;
		case OPT_NO_BULLET:
			o->bullet = false;
			break;
		case OPT_TOLERANCE: {
			char* end = NULL;
			errno = 0;
			const double t = strtod(value, &end);
			if (!*value || *end || errno || !(t > 0 && t <= 100))
				return usage_error("--tolerance: '%s' is not a number in (0, 100]", value);
			o->tolerance = t;
			break;
		}
		case OPT_CSV:
			if (!*value) return usage_error("--csv: empty file name");
			o->csv_path = value;
			break;
		case OPT_PROFILE:
			o->profile = true;
			break;
		case OPT_HELP:
			o->help = true;
			break;
		case OPT_QUALITY:
			o->quality = o->quality ? o->quality : 1;
			break;
		case OPT_QUALITY_ONLY:
			o->quality = 2;
			break;
		case OPT_QUALITY_TARGET: {
			char* end = NULL;
			errno = 0;
			const double t = strtod(value, &end);
			if (!*value || *end || errno || !(t > 0 && t <= 1))
				return usage_error("--quality-target: '%s' is not a number in (0, 1]", value);
			o->quality_target = t;
			break;
		}
		case OPT_QUALITY_CAP: {
			char* end = NULL;
			errno = 0;
			const double c = strtod(value, &end);
			if (!*value || *end || errno || !(c > 0 && c <= 1e7))
				return usage_error("--quality-cap: '%s' is not a number of ms in (0, 1e7]", value);
			o->quality_cap = c;
			break;
		}
		case OPT_QUALITY_METHOD:
			if (strcmp(value, "xpbd-gs") && strcmp(value, "pbd-gs-sub") && strcmp(value, "pbd-gs-it") &&
			    strcmp(value, "chebyshev") && strcmp(value, "xpbd-lra") && strcmp(value, "pbd-lra-it") &&
			    strcmp(value, "xpbd-hier") && strcmp(value, "pbd-hier-it"))
				return usage_error("--quality-method: unknown method '%s'", value);
			o->quality_method = value;
			break;
		case OPT_RESOLUTION:
			o->resolution = true;
			break;
		case OPT_QUALITY_CSV:
			if (!*value) return usage_error("--quality-csv: empty file name");
			o->quality_csv = value;
			break;
		case OPT_COLLISION:
			o->collision = true;
			break;
		case OPT_COLLISION_CSV:
			if (!*value) return usage_error("--collision-csv: empty file name");
			o->collision_csv = value;
			break;
		case OPT_METHODS:
			o->methods = true;
			break;
		case OPT_METHODS_LIMIT:
			if (!parse_real(value, 1, 86400, &o->methods_limit))
				return usage_error("--methods-limit: '%s' is not a number of seconds in [1, 86400]", value);
			break;
		case OPT_METHODS_H_MIN:
			if (!parse_real(value, 1e-9, 1.0 / 30.0, &o->methods_h_min))
				return usage_error("--methods-h-min: '%s' is not a step in [1e-9, 1/30] s", value);
			break;
		case OPT_METHODS_ONLY:
			if (!bench_methods_known(value)) return usage_error("--methods-only: unknown method '%s'", value);
			o->methods_only = value;
			break;
		case OPT_RIGID:
			o->rigid = true;
			break;
		case OPT_RIGID_STEPS:
			if (!parse_int(value, 1, BENCH_MAX_STEPS, &v))
				return usage_error("--rigid-steps: '%s' is not an integer in [1, %d]", value, BENCH_MAX_STEPS);
			o->rigid_steps = (int)v;
			break;
		case OPT_RIGID_SMALL:
			o->rigid_small = true;
			break;
		case OPT_RIGID_LARGE:
			o->rigid_large = true;
			break;
		default:
			break;
		}
		if (rc != 0) return rc;
	}
	if (o->collision_csv && !o->collision) return usage_error("--collision-csv needs --collision");
	if (o->collision && (o->resolution || o->quality || o->csv_path || o->quality_csv))
		return usage_error("--collision runs alone: not with --resolution, --quality*, --csv");
	if (o->methods && (o->collision || o->resolution || o->quality || o->quality_csv))
		return usage_error("--methods runs alone: not with --collision, --resolution, --quality*");
	if (o->profile && (o->collision || o->methods || o->resolution || o->quality == 2))
		return usage_error("--profile splits the throughput table's rows: not with --collision, --methods, "
		                   "--resolution, --quality-only");
	if ((seen[OPT_METHODS_LIMIT] || seen[OPT_METHODS_H_MIN] || seen[OPT_METHODS_ONLY]) && !o->methods)
		return usage_error("--methods-limit, --methods-h-min and --methods-only need --methods");
	if ((seen[OPT_RIGID_STEPS] || seen[OPT_RIGID_SMALL]) && !o->rigid && !o->rigid_large)
		return usage_error("--rigid-steps and --rigid-small need --rigid or --rigid-large");
	if ((o->rigid || o->rigid_large) && (o->collision || o->methods || o->resolution || o->quality || o->csv_path ||
	                                     o->quality_csv || o->profile || o->sizes_given || seen[OPT_STEPS]))
		return usage_error("--rigid and --rigid-large run alone: not with --collision, --methods, --resolution, "
		                   "--quality*, --csv, --profile, --sizes, --steps (--rigid-steps sets their steps)");
	return 0;
}

/* ---- machine description ---------------------------------------------------------------- */

static void cpu_model(char* out, size_t size) {
	snprintf(out, size, "unknown CPU");
	FILE* f = fopen("/proc/cpuinfo", "r");
	if (!f) return;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "model name", 10) != 0) continue;
		const char* colon = strchr(line, ':');
		if (!colon) continue;
		++colon;
		while (*colon == ' ' || *colon == '\t') ++colon;
		size_t len = strlen(colon);
		while (len > 0 && (colon[len - 1] == '\n' || colon[len - 1] == ' ')) --len;
		snprintf(out, size, "%.*s", (int)len, colon);
		break;
	}
	fclose(f);
}

static long cpu_count(void) {
#ifdef _SC_NPROCESSORS_ONLN
	const long n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n > 0) return n;
#endif
	return -1;
}

/* The lines every table starts with: what was run, when, on which machine and build. */
static void print_machine(const bench_options* o, bool bullet_built, const char* what, const char* bullet_world) {
	/* without Bullet built, neither is read */
	(void)o;
	(void)bullet_world;
	char cpu[256];
	cpu_model(cpu, sizeof cpu);
	char date[32] = "unknown date";
	const time_t t = time(NULL);
	struct tm tm;
	if (gmtime_r(&t, &tm)) strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tm);

	printf("pbd %s benchmark: %s (%s)\n", pbd_version(), what, date);
	printf("machine: %s, %ld logical CPUs; one thread per run\n", cpu, cpu_count());
	printf("build:   %s, pbd_real = %s, %s, flags: %s\n", PBD_BENCH_BUILD_TYPE,
	       sizeof(pbd_real) == sizeof(double) ? "double" : "float", PBD_BENCH_C_COMPILER, PBD_BENCH_C_FLAGS);
#ifdef PBD_HAVE_BULLET
	if (bullet_built && o->bullet)
		printf("bullet:  %d.%02d, btScalar = %s, %s, stepSimulation(dt, 0)\n", pbd_bullet_version() / 100,
		       pbd_bullet_version() % 100, pbd_bullet_scalar_size() == 8 ? "double" : "float", bullet_world);
	else
#endif
		printf("bullet:  %s\n",
		       !bullet_built ? "not built (Bullet was not found at configure time)" : "skipped (--no-bullet)");
}

static void print_header(const bench_options* o, bool bullet_built) {
	print_machine(o, bullet_built, "hanging cloth", "btSoftBody in btSoftRigidDynamicsWorld");
	printf("scene:   1 m square, 1 kg (1/N^2 per particle), 2 corners pinned, structural + shear links,\n"
	       "         gravity %.2f m/s^2, dt 1/60 s, 1 substep, %d iterations, %d steps from rest, no damping\n",
	       BENCH_GRAVITY, o->iterations, o->steps);
	if (o->repeat)
		printf("timing:  %d run(s) per row, fresh world each; ms/step = median over runs of the per-step median\n",
		       o->repeat);
	else
		printf("timing:  3 runs per row for N <= %d, 1 above, fresh world each; ms/step = median over runs of\n"
		       "         the per-step median\n",
		       BENCH_REPEAT_SPLIT_N);
	printf("\n");
}

/* ---- scene ------------------------------------------------------------------------------ */

static void pbd_scene_free(bench_scene* s) {
	pbd_mesh_free(&s->mesh);
	free(s->rest);
	free(s->xyz);
	free(s->masses);
	free(s->step_ms);
	memset(s, 0, sizeof *s);
}

static int scene_build(bench_scene* s, uint32_t n, int steps) {
	memset(s, 0, sizeof *s);
	s->n = n;
	/* Horizontal, hanging from the edge v = 0 (z = 0) between its two corners. */
	const pbd_grid_def g = bench_cloth_grid_def(n);
	pbd_error err;
	memset(&err, 0, sizeof err);
	if (pbd_mesh_grid(&g, &s->mesh, &err) != PBD_OK) {
		fprintf(stderr, BENCH_PREFIX "pbd_mesh_grid(N=%u) failed: %s\n", n, err.message);
		return -1;
	}
	if (s->mesh.vertex_count != n * n || s->mesh.edge_count != expected_constraints(n)) {
		fprintf(stderr, BENCH_PREFIX "pbd_mesh_grid(N=%u) made %u vertices and %u edges, expected %u and %u\n", n,
		        s->mesh.vertex_count, s->mesh.edge_count, n * n, expected_constraints(n));
		pbd_scene_free(s);
		return -1;
	}
	s->pinned[0] = 0;
	s->pinned[1] = n - 1;

	const uint32_t nv = s->mesh.vertex_count, ne = s->mesh.edge_count;
	s->rest = malloc((size_t)ne * sizeof *s->rest);
	s->xyz = malloc((size_t)nv * 3 * sizeof *s->xyz);
	s->masses = malloc((size_t)nv * sizeof *s->masses);
	s->step_ms = malloc((size_t)steps * sizeof *s->step_ms);
	if (!s->rest || !s->xyz || !s->masses || !s->step_ms) {
		fprintf(stderr, BENCH_PREFIX "out of memory for N=%u\n", n);
		pbd_scene_free(s);
		return -1;
	}
	const double particle_mass = 1.0 / ((double)n * (double)n);
	for (uint32_t i = 0; i < nv; ++i) {
		const pbd_vec3 p = s->mesh.positions[i];
		s->xyz[3 * i] = (double)p.x;
		s->xyz[3 * i + 1] = (double)p.y;
		s->xyz[3 * i + 2] = (double)p.z;
		s->masses[i] = particle_mass;
	}
	s->masses[s->pinned[0]] = 0.0;
	s->masses[s->pinned[1]] = 0.0;
	for (uint32_t k = 0; k < ne; ++k) {
		const double* a = s->xyz + 3 * (size_t)s->mesh.edges[2 * k];
		const double* b = s->xyz + 3 * (size_t)s->mesh.edges[2 * k + 1];
		const double dx = b[0] - a[0], dy = b[1] - a[1], dz = b[2] - a[2];
		s->rest[k] = sqrt(dx * dx + dy * dy + dz * dz);
	}
	return 0;
}

/* ---- pbd run ---------------------------------------------------------------------------- */

/* The library's reason for a failure (and any run-time warning) arrives here. */
static void log_stderr(const char* message, void* user) {
	(void)user;
	fprintf(stderr, BENCH_PREFIX "pbd: %s\n", message);
}

static int pbd_fail_msg(pbd_world* w, const char* what, pbd_status st) {
	fprintf(stderr, BENCH_PREFIX "%s failed: %s\n", what, pbd_status_string(st));
	pbd_world_destroy(w);
	return -1;
}

/* Adds the last step's phases, times `weight`, to p. Read outside the timed call: with the
 * world's diagnostics off, pbd_world_get_stats computes the statistics now. */
static void add_phases(pbd_world* w, bench_phases* p, double weight) {
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	const pbd_profile* f = &st.profile;
	double solve = 0;
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) solve += f->family[t];
	const double covered = f->prepare + f->predict + solve + f->collide + f->contacts + f->finish;
	p->step += weight * f->step;
	p->prepare += weight * f->prepare;
	p->predict += weight * f->predict;
	p->solve += weight * solve;
	p->collide += weight * f->collide;
	p->contacts += weight * f->contacts;
	p->finish += weight * f->finish;
	p->other += weight * (f->step > covered ? f->step - covered : 0);
}

static int run_pbd(bench_scene* s, const bench_options* o, bench_variant v, bench_run* out) {
	pbd_world_def wd = pbd_world_def_default();
	wd.gravity = (pbd_vec3){0, (pbd_real)BENCH_GRAVITY, 0};
	wd.dt = (pbd_real)BENCH_DT;
	wd.substeps = 1;
	wd.iterations = o->iterations;
	wd.solver = v.solver;
	wd.formulation = v.formulation;
	wd.simd = v.simd;
	wd.threads = v.threads;
	wd.damping = 1;
	wd.max_speed = 0;
	wd.diagnostics = false;   /* the timed steps do no stats pass; get_stats recomputes at the end */
	wd.divergence_strain = 0; /* nor a strain pass: the row is judged on its final state, as Bullet's */
	wd.particle_capacity = s->mesh.vertex_count;
	wd.distance_capacity = s->mesh.edge_count;
	wd.log = log_stderr;
	wd.profile = o->profile;

	pbd_world* w = NULL;
	pbd_status st = pbd_world_create(&wd, &w);
	if (st != PBD_OK) return pbd_fail_msg(w, "pbd_world_create", st);

	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &s->mesh;
	bd.mass_mode = PBD_MASS_PER_PARTICLE;
	bd.mass = (pbd_real)(1.0 / ((double)s->n * (double)s->n));
	for (int k = 0; k < PBD_EDGE_KIND_COUNT; ++k) {
		pbd_edge_material* m = &bd.material[k];
		m->enabled = k != PBD_EDGE_BEND;
		m->stiffness_stretch = 1;
		m->stiffness_compress = 1;
		m->compliance_stretch = 0;
		m->compliance_compress = 0;
	}
	bd.pinned = s->pinned;
	bd.pinned_count = 2;
	pbd_soft_info body;
	pbd_soft_id id;
	st = pbd_soft_create(w, &bd, &id);
	if (st != PBD_OK) return pbd_fail_msg(w, "pbd_soft_create", st);
	st = pbd_soft_get_info(w, id, &body);
	if (st != PBD_OK) return pbd_fail_msg(w, "pbd_soft_get_info", st);
	if (pbd_world_particle_count(w) != s->mesh.vertex_count || pbd_world_distance_count(w) != s->mesh.edge_count) {
		fprintf(stderr, BENCH_PREFIX "N=%u: the world holds %u particles and %u constraints, expected %u and %u\n",
		        s->n, pbd_world_particle_count(w), pbd_world_distance_count(w), s->mesh.vertex_count,
		        s->mesh.edge_count);
		pbd_world_destroy(w);
		return -1;
	}

	for (int i = 0; i < o->steps; ++i) {
		const double t0 = bench_now_ms();
		st = pbd_world_step(w);
		const double t1 = bench_now_ms();
		if (st != PBD_OK) return pbd_fail_msg(w, "pbd_world_step", st);
		s->step_ms[i] = t1 - t0;
		if (o->profile) add_phases(w, &out->phases, 1.0 / o->steps);
	}
	out->median_ms = median(s->step_ms, (size_t)o->steps);

	pbd_stats stats;
	pbd_world_get_stats(w, &stats);
	out->max_strain = stats.max_strain;
	out->mean_strain = stats.mean_strain;
	const pbd_vec3* x = pbd_world_positions(w);
	for (uint32_t i = 0; i < s->mesh.vertex_count; ++i) {
		s->xyz[3 * i] = (double)x[i].x;
		s->xyz[3 * i + 1] = (double)x[i].y;
		s->xyz[3 * i + 2] = (double)x[i].z;
	}
	edge_strain(s, s->xyz, &out->own_max_strain, &out->own_mean_strain);
	out->min_y = min_height(s->xyz, s->mesh.vertex_count, &out->finite);
	out->hash = pbd_world_hash(w);
	out->nonfinite_warnings = pbd_world_get_warning(w, PBD_WARN_NONFINITE).count;
	pbd_world_destroy(w);
	return 0;
}

/* ---- Bullet run ------------------------------------------------------------------------- */

#ifdef PBD_HAVE_BULLET
static int run_bullet(bench_scene* s, const bench_options* o, bench_run* out) {
	/* The peer reads the rest shape from xyz: refill it, a pbd run may have left its end state. */
	for (uint32_t i = 0; i < s->mesh.vertex_count; ++i) {
		const pbd_vec3 p = s->mesh.positions[i];
		s->xyz[3 * i] = (double)p.x;
		s->xyz[3 * i + 1] = (double)p.y;
		s->xyz[3 * i + 2] = (double)p.z;
	}
	pbd_bullet_cloth_desc d;
	memset(&d, 0, sizeof d);
	d.node_count = s->mesh.vertex_count;
	d.positions = s->xyz;
	d.masses = s->masses;
	d.link_count = s->mesh.edge_count;
	d.links = s->mesh.edges;
	d.iterations = o->iterations;
	d.gravity_y = BENCH_GRAVITY;
	char err[256] = "";
	pbd_bullet_cloth* c = pbd_bullet_cloth_create(&d, err, sizeof err);
	if (!c) {
		fprintf(stderr, BENCH_PREFIX "N=%u: %s\n", s->n, err);
		return -1;
	}
	for (int i = 0; i < o->steps; ++i) {
		const double t0 = bench_now_ms();
		pbd_bullet_cloth_step(c, BENCH_DT);
		const double t1 = bench_now_ms();
		s->step_ms[i] = t1 - t0;
	}
	out->median_ms = median(s->step_ms, (size_t)o->steps);
	pbd_bullet_cloth_get_state(c, s->xyz, NULL);
	edge_strain(s, s->xyz, &out->max_strain, &out->mean_strain);
	out->own_max_strain = out->max_strain;
	out->own_mean_strain = out->mean_strain;
	out->min_y = min_height(s->xyz, s->mesh.vertex_count, &out->finite);
	out->hash = pbd_bullet_cloth_hash(c);
	out->nonfinite_warnings = 0;
	pbd_bullet_cloth_destroy(c);
	return 0;
}
#endif

/* ---- rows ------------------------------------------------------------------------------- */

/* Folds the runs of one engine into a row. runs[] keeps its order; ms[] is scratch. */
static void make_row(bench_row* r, const bench_scene* s, const bench_options* o, const bench_run* runs, int count,
                     double* ms) {
	r->n = s->n;
	r->particles = s->mesh.vertex_count;
	r->constraints = s->mesh.edge_count;
	r->repeats = count;
	double ms_min = (double)INFINITY;
	bool finite = true, stable = true;
	uint64_t warnings = 0;
	for (int i = 0; i < count; ++i) {
		ms[i] = runs[i].median_ms;
		if (ms[i] < ms_min) ms_min = ms[i];
		finite = finite && runs[i].finite;
		stable = stable && runs[i].hash == runs[0].hash;
		warnings += runs[i].nonfinite_warnings;
		const bench_phases* p = &runs[i].phases;
		const double k = 1.0 / count;
		r->phases.step += k * p->step;
		r->phases.prepare += k * p->prepare;
		r->phases.predict += k * p->predict;
		r->phases.solve += k * p->solve;
		r->phases.collide += k * p->collide;
		r->phases.contacts += k * p->contacts;
		r->phases.finish += k * p->finish;
		r->phases.other += k * p->other;
	}
	r->ms = median(ms, (size_t)count);
	r->ms_min = ms_min;
	r->mproj = (double)r->constraints * (double)o->iterations / (r->ms * 1e3);
	/* The state after the run is the same in every repeat when hash_stable; report the first. */
	r->max_strain = runs[0].max_strain;
	r->mean_strain = runs[0].mean_strain;
	r->min_y = runs[0].min_y;
	r->hash = runs[0].hash;
	r->hash_stable = stable;
	/* Speed counts only at a stated quality: a cloth that blew up or stayed stretched says so. */
	if (!finite || !(r->max_strain <= BENCH_DIVERGED_STRAIN))
		snprintf(r->status, sizeof r->status, "diverged");
	else if (warnings)
		snprintf(r->status, sizeof r->status, "recovered(%" PRIu64 ")", warnings);
	else if (r->max_strain > o->tolerance)
		snprintf(r->status, sizeof r->status, "unconverged");
	else
		snprintf(r->status, sizeof r->status, "ok");
	r->ratio = (double)NAN;
}

static void print_table_header(void) {
	printf("%-7s %-7s %-7s %3s %5s %9s %11s %10s %10s %9s %10s %10s %9s  %-16s %-12s %7s\n", "engine", "solver",
	       "formul.", "thr", "N", "particles", "constraints", "ms/step", "(min)", "Mproj/s", "max strain",
	       "mean strain", "min y[m]", "final hash", "status", "bt/this");
}

static void print_row(const bench_row* r) {
	char ratio[16] = "-";
	if (isfinite(r->ratio)) snprintf(ratio, sizeof ratio, "%.2f", r->ratio);
	char thr[16] = "-";
	if (r->threads > 0) snprintf(thr, sizeof thr, "%d", r->threads);
	printf("%-7s %-7s %-7s %3s %5u %9u %11u %10.3f %10.3f %9.1f %10.5f %10.5f %9.4f  %016" PRIx64 "%c %-12s %7s\n",
	       r->engine, r->solver, r->formulation, thr, r->n, r->particles, r->constraints, r->ms, r->ms_min, r->mproj,
	       r->max_strain, r->mean_strain, r->min_y, r->hash, r->hash_stable ? ' ' : '!', r->status, ratio);
	if (r->has_phases) {
		const bench_phases* p = &r->phases;
		const double pct = p->step > 0 ? 100 / p->step : 0;
		printf("        phases, ms/step (%% of %.3f): prepare %.4f (%.1f), predict %.4f (%.1f), distance %.4f (%.1f), "
		       "collide %.4f (%.1f), contacts %.4f (%.1f), finish %.4f (%.1f), other %.4f (%.1f)\n",
		       p->step, p->prepare, pct * p->prepare, p->predict, pct * p->predict, p->solve, pct * p->solve,
		       p->collide, pct * p->collide, p->contacts, pct * p->contacts, p->finish, pct * p->finish, p->other,
		       pct * p->other);
	}
	fflush(stdout);
}

static void csv_header(FILE* f) {
	fprintf(f, "engine,solver,formulation,n,particles,constraints,iterations,substeps,steps,repeats,"
	           "ms_per_step,ms_per_step_min,mproj_per_s,max_strain,mean_strain,min_y,hash,hash_stable,status,"
	           "bullet_over_this,profile_step_ms,profile_prepare_ms,profile_predict_ms,profile_solve_ms,"
	           "profile_collide_ms,profile_contacts_ms,profile_finish_ms,profile_other_ms,threads\n");
}

static void csv_row(FILE* f, const bench_row* r, const bench_options* o) {
	fprintf(f, "%s,%s,%s,%u,%u,%u,%d,1,%d,%d,%.6f,%.6f,%.3f,%.8g,%.8g,%.8g,%016" PRIx64 ",%s,%s,", r->engine, r->solver,
	        r->formulation, r->n, r->particles, r->constraints, o->iterations, o->steps, r->repeats, r->ms, r->ms_min,
	        r->mproj, r->max_strain, r->mean_strain, r->min_y, r->hash, r->hash_stable ? "true" : "false", r->status);
	if (isfinite(r->ratio)) fprintf(f, "%.4f", r->ratio);
	/* Appended after the older columns, empty without --profile and on the Bullet row. */
	if (r->has_phases) {
		const bench_phases* p = &r->phases;
		fprintf(f, ",%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,", p->step, p->prepare, p->predict, p->solve, p->collide,
		        p->contacts, p->finish, p->other);
	} else {
		fprintf(f, ",,,,,,,,,");
	}
	if (r->threads > 0) fprintf(f, "%d", r->threads);
	fprintf(f, "\n");
}

/* ---- main ------------------------------------------------------------------------------- */

/* Runs every engine of one size, repeats interleaved so slow drifts of a shared machine hit all
 * engines alike, and prints the rows. Returns -1 on a failed run, else the number of pbd rows
 * that ended non-finite or differed between repeats. */
static int bench_size(uint32_t n, const bench_options* o, const bench_variant* variants, int variant_count,
                      bool with_bullet, FILE* csv, double* first_ratio) {
	bench_scene s;
	if (scene_build(&s, n, o->steps) != 0) return -1;
	const int repeats = o->repeat ? o->repeat : default_repeat(n);
	const int engines = variant_count + (with_bullet ? 1 : 0);
	bench_run* runs = calloc((size_t)engines * (size_t)repeats, sizeof *runs);
	double* ms = calloc((size_t)repeats, sizeof *ms);
	if (!runs || !ms) {
		fprintf(stderr, BENCH_PREFIX "out of memory\n");
		free(runs);
		free(ms);
		pbd_scene_free(&s);
		return -1;
	}

	/* Progress only on a terminal: a redirected stderr keeps just the real messages. */
	const bool progress = isatty(STDERR_FILENO) != 0;
	int rc = 0;
	for (int r = 0; r < repeats && rc == 0; ++r) {
		for (int e = 0; e < engines && rc == 0; ++e) {
			bench_run* run = &runs[(size_t)e * (size_t)repeats + (size_t)r];
			if (e < variant_count) {
				if (progress)
					fprintf(stderr, "  N=%u pbd %s/%s run %d/%d\r", n, variant_solver(variants[e]),
					        formulation_name(variants[e].formulation), r + 1, repeats);
				rc = run_pbd(&s, o, variants[e], run);
			} else {
#ifdef PBD_HAVE_BULLET
				if (progress) fprintf(stderr, "  N=%u bullet run %d/%d          \r", n, r + 1, repeats);
				rc = run_bullet(&s, o, run);
#endif
			}
		}
	}
	if (progress) fprintf(stderr, "%60s\r", "");

	int bad = 0;
	if (rc == 0) {
		bench_row bullet_row;
		memset(&bullet_row, 0, sizeof bullet_row);
		if (with_bullet) {
			make_row(&bullet_row, &s, o, &runs[(size_t)variant_count * (size_t)repeats], repeats, ms);
			bullet_row.engine = "bullet";
			bullet_row.solver = "gs";
			bullet_row.formulation = "kLST=1";
		}
		for (int e = 0; e < variant_count; ++e) {
			const bench_run* vr = &runs[(size_t)e * (size_t)repeats];
			bench_row row;
			memset(&row, 0, sizeof row);
			make_row(&row, &s, o, vr, repeats, ms);
			row.engine = "pbd";
			row.solver = variant_solver(variants[e]);
			row.formulation = formulation_name(variants[e].formulation);
			row.threads = variants[e].threads;
			row.has_phases = o->profile;
			if (with_bullet) row.ratio = bullet_row.ms / row.ms;
			if (e == 0) *first_ratio = row.ratio;
			/* pbd's own stats and the bench's strain must agree: the Bullet row uses the latter. */
			const double tol_max = 1e-5 + 1e-3 * fabs(vr[0].own_max_strain);
			const double tol_mean = 1e-5 + 1e-3 * fabs(vr[0].own_mean_strain);
			if (!(fabs(vr[0].max_strain - vr[0].own_max_strain) <= tol_max) ||
			    !(fabs(vr[0].mean_strain - vr[0].own_mean_strain) <= tol_mean))
				fprintf(stderr,
				        BENCH_PREFIX "warning: N=%u %s/%s: pbd_world_get_stats strain max %.6g mean %.6g, the bench's "
				                     "own over the same edges max %.6g mean %.6g\n",
				        n, row.solver, row.formulation, vr[0].max_strain, vr[0].mean_strain, vr[0].own_max_strain,
				        vr[0].own_mean_strain);
			if (!row.hash_stable) ++bad;
			print_row(&row);
			if (csv) csv_row(csv, &row, o);
		}
		if (with_bullet) {
			print_row(&bullet_row);
			if (csv) csv_row(csv, &bullet_row, o);
		}
	}
	free(runs);
	free(ms);
	pbd_scene_free(&s);
	return rc != 0 ? -1 : bad;
}

int pbd_bench_main(int argc, char** argv) {
	bench_options o;
	const int prc = parse_options(argc, argv, &o);
	if (prc != 0) return prc;
	if (o.help) {
		print_help(stdout);
		return 0;
	}
#ifdef PBD_HAVE_BULLET
	const bool bullet_built = true;
#else
	const bool bullet_built = false;
#endif
	const bool with_bullet = bullet_built && o.bullet;

	if (o.collision) {
		FILE* ccsv = NULL;
		if (o.collision_csv && !(ccsv = fopen(o.collision_csv, "w"))) {
			fprintf(stderr, BENCH_PREFIX "--collision-csv: cannot write '%s': %s\n", o.collision_csv, strerror(errno));
			return 2;
		}
		static const uint32_t collision_sizes[] = {32, 64, 128};
		print_machine(&o, bullet_built, "collision", "btSoftBody in btSoftRigidDynamicsWorld");
		const int crc = o.sizes_given ? bench_collision(o.sizes, o.size_count, o.steps, o.repeat, with_bullet, ccsv)
		                              : bench_collision(collision_sizes, 3, o.steps, o.repeat, with_bullet, ccsv);
		if (ccsv && fclose(ccsv) != 0) {
			fprintf(stderr, BENCH_PREFIX "--collision-csv: error writing '%s'\n", o.collision_csv);
			return 1;
		}
		return crc == 0 ? 0 : 1;
	}
	if (o.rigid || o.rigid_large) {
		print_machine(&o, bullet_built, "rigid bodies", "btRigidBody in btDiscreteDynamicsWorld");
		int rrc = o.rigid ? bench_rigid(o.rigid_steps ? o.rigid_steps : 600, o.rigid_small, with_bullet) : 0;
		if (rrc >= 0 && o.rigid_large) {
			if (o.rigid) printf("\n");
			const int lrc = bench_rigid_large(o.rigid_steps ? o.rigid_steps : 2000, o.rigid_small, with_bullet);
			rrc = lrc < 0 ? lrc : rrc + lrc;
		}
		return rrc == 0 ? 0 : 1;
	}
	if (o.methods) {
		FILE* mcsv = NULL;
		if (o.csv_path && !(mcsv = fopen(o.csv_path, "w"))) {
			fprintf(stderr, BENCH_PREFIX "--csv: cannot write '%s': %s\n", o.csv_path, strerror(errno));
			return 2;
		}
		static const uint32_t methods_sizes[] = {32, 64};
		print_machine(&o, bullet_built, "methods on one scene", "btSoftBody in btSoftRigidDynamicsWorld");
		const int mrc =
		    o.sizes_given ? bench_methods(o.sizes, o.size_count, o.methods_h_min, o.methods_limit, o.methods_only, mcsv)
		                  : bench_methods(methods_sizes, 2, o.methods_h_min, o.methods_limit, o.methods_only, mcsv);
		if (mcsv && fclose(mcsv) != 0) {
			fprintf(stderr, BENCH_PREFIX "--csv: error writing '%s'\n", o.csv_path);
			return 1;
		}
		return mrc == 0 ? 0 : 1;
	}
	if (o.resolution) {
		FILE* rcsv = NULL;
		if (o.csv_path && !(rcsv = fopen(o.csv_path, "w"))) {
			fprintf(stderr, BENCH_PREFIX "--csv: cannot write '%s': %s\n", o.csv_path, strerror(errno));
			return 2;
		}
		const int rrc = bench_resolution(o.sizes, o.size_count, rcsv);
		if (rcsv && fclose(rcsv) != 0) return 1;
		return rrc == 0 ? 0 : 1;
	}
	FILE* csv = NULL;
	if (o.csv_path) {
		/* Opened before the long run, so a bad path fails in a second, not after minutes. */
		csv = fopen(o.csv_path, "w");
		if (!csv) {
			fprintf(stderr, BENCH_PREFIX "--csv: cannot write '%s': %s\n", o.csv_path, strerror(errno));
			return 2;
		}
		csv_header(csv);
	}

	bench_variant variants[BENCH_MAX_VARIANTS];
	int variant_count = 0;
	for (int i = 0; i < o.solver_count; ++i)
		for (int j = 0; j < o.formulation_count; ++j)
			for (int m = 0; m < o.simd_count; ++m)
				for (int k = 0; k < o.thread_count; ++k)
					variants[variant_count++] =
					    (bench_variant){o.solvers[i], o.formulations[j], o.simds[m], o.simd_given, o.threads[k]};

	FILE* qcsv = NULL;
	if (o.quality_csv) {
		qcsv = fopen(o.quality_csv, "w");
		if (!qcsv) {
			fprintf(stderr, BENCH_PREFIX "--quality-csv: cannot write '%s': %s\n", o.quality_csv, strerror(errno));
			if (csv) fclose(csv);
			return 2;
		}
	}
	print_header(&o, bullet_built);
	if (o.quality == 2) {
		const int qrc = bench_quality(o.sizes, o.size_count, o.threads, o.thread_count, o.quality_target, o.quality_cap,
		                              o.quality_method, qcsv);
		if (csv) fclose(csv);
		if (qcsv && fclose(qcsv) != 0) return 1;
		return qrc == 0 ? 0 : 1;
	}
	print_table_header();

	int rc = 0, bad = 0;
	double ratios[BENCH_MAX_SIZES];
	for (int i = 0; i < o.size_count; ++i) {
		ratios[i] = (double)NAN;
		const int r = bench_size(o.sizes[i], &o, variants, variant_count, with_bullet, csv, &ratios[i]);
		if (r < 0) {
			rc = 1;
			break;
		}
		bad += r;
	}

	printf("\nstatus: ok = max strain <= %g; unconverged = above it; diverged = non-finite or above %g\n", o.tolerance,
	       BENCH_DIVERGED_STRAIN);
	if (rc == 0 && with_bullet) {
		printf("\nBullet ms / pbd ms (%s, %s):", solver_name(variants[0].solver),
		       formulation_name(variants[0].formulation));
		for (int i = 0; i < o.size_count; ++i) printf("  N=%u %.2f", o.sizes[i], ratios[i]);
		printf("\n");
	}
	if (rc == 0 && o.quality &&
	    bench_quality(o.sizes, o.size_count, o.threads, o.thread_count, o.quality_target, o.quality_cap,
	                  o.quality_method, qcsv) != 0)
		rc = 1;
	if (qcsv && fclose(qcsv) != 0) {
		fprintf(stderr, BENCH_PREFIX "--quality-csv: error writing '%s'\n", o.quality_csv);
		rc = 1;
	}
	if (bad) {
		printf("\n%d pbd row(s) differed between repeats ('!' after the hash): the runs are not deterministic\n", bad);
		rc = 1;
	}
	if (csv && fclose(csv) != 0) {
		fprintf(stderr, BENCH_PREFIX "--csv: error writing '%s'\n", o.csv_path);
		rc = 1;
	}
	return rc;
}
