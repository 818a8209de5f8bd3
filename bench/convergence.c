/* pbd-convergence: how fast each solver removes the stretch of one substep, per iteration and
 * per millisecond, on the hanging cloth of the benchmark (docs/solvers.md).
 *
 * The problems are fixed: the cloth is simulated for --ref-seconds at a reference setting, and its
 * positions and velocities are kept (the swinging problem), also with every column lengthened by
 * --stretch (the stretched problem). Each measurement resets a world to that state and takes one
 * step of 1/60 s with one substep and k iterations, so every solver and every k solves the same
 * substep from the same prediction; the residual is read from the positions the step leaves.
 * Small steps spend their k sweeps as k substeps of one iteration in the same 1/60 s.
 * The library offers only the coloured Gauss-Seidel order, so the order of addition is emulated
 * here with the library's own projection and prediction arithmetic; the same emulation run in
 * the library's colour order is checked to reproduce the library bit for bit, so the two emulated
 * orders differ in nothing but the order.
 *
 * Public API only, plus gnuplot (as `pbd plot` uses it) for the PNG. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cloth.h"

#include "pbd/math.h"
#include "pbd/pbd.h"

extern char** environ;

#define PREFIX "pbd-convergence: "

enum { MAX_SIZES = 8, MAX_COUNTS = 64, MIN_N = 4, MAX_N = 1024, MAX_ITERATIONS = 5000, MAX_REPEAT = 100 };

static const double DT = 1.0 / 60.0;
static const double GRAVITY = -9.81;

/* The ladder of iteration counts measured, up to --iterations (which is added when missing). */
static const int LADDER[] = {1,   2,   3,   4,    5,    6,    8,    10,   13,   16,   20,  25,
                             32,  40,  50,  64,   80,   100,  128,  160,  200,  256,  320, 400,
                             500, 640, 800, 1000, 1280, 1600, 2000, 2500, 3200, 4000, 5000};

typedef enum solver_kind {
	S_GS_ORDERED = 0, /* emulated: Gauss-Seidel in the order of addition */
	S_GS,             /* the library's default: coloured Gauss-Seidel */
	S_JACOBI,         /* mass-weighted Jacobi */
	S_CHEB_GIVEN,     /* Chebyshev-Jacobi, spectral radius given */
	S_CHEB_ESTIMATED, /* Chebyshev-Jacobi, spectral radius estimated every substep */
	S_HIERARCHY,      /* coloured Gauss-Seidel after the hierarchical pass */
	S_SMALL_STEPS,    /* XPBD, k substeps of one iteration in the same 1/60 s */
	S_COUNT
} solver_kind;

static const char* const SOLVER_NAMES[S_COUNT] = {
    "gs_ordered",   "gs_coloured",     "jacobi", "chebyshev_rho_given", "chebyshev_rho_estimated",
    "hierarchical", "xpbd_small_steps"};

/* The two problems: the reference state as it is, and the same with every column of the cloth
 * stretched by --stretch away from the pinned edge. */
enum { PROBLEM_SWINGING = 0, PROBLEM_STRETCHED = 1, PROBLEM_COUNT };
static const char* const PROBLEM_NAMES[PROBLEM_COUNT] = {"swinging", "stretched"};

typedef struct options {
	uint32_t sizes[MAX_SIZES];
	int size_count;
	int max_iterations;
	int repeat;
	const char* out_dir;
	double rho;
	int levels, level_iterations;
	double ref_seconds, stretch;
	int ref_substeps, ref_iterations;
	bool plot, help;
} options;

/* The cloth of one size and its reference state. */
typedef struct problem {
	uint32_t n, np, nc;
	pbd_mesh mesh;
	uint32_t pinned[2];
	uint32_t *a, *b; /* constraint ends, order of addition */
	pbd_real* rest;
	uint8_t* kind;       /* pbd_edge_kind */
	pbd_real* iw;        /* inverse masses */
	pbd_vec3 *xref, *v0; /* the reference state */
	pbd_vec3* x0;        /* the positions of the problem being measured */
	pbd_vec3 *q, *p;     /* emulation scratch */
	uint32_t* coloured;  /* constraint indices in the library's colour order */
} problem;

typedef struct residual {
	double mean_strain, max_strain, rms;
} residual;

/* ---- helpers ------------------------------------------------------------------------------ */

static int usage_error(const char* what, const char* value) {
	fprintf(stderr, PREFIX "%s '%s' (see --help)\n", what, value ? value : "");
	return 2;
}

static bool parse_long(const char* s, long lo, long hi, long* out) {
	if (!s || !*s) return false;
	for (const char* c = s; *c; ++c)
		if (*c < '0' || *c > '9') return false;
	errno = 0;
	char* end = NULL;
	const long v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi) return false;
	*out = v;
	return true;
}

static bool parse_double(const char* s, double lo, double hi, bool lo_open, double* out) {
	if (!s || !*s) return false;
	errno = 0;
	char* end = NULL;
	const double v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v > hi || v < lo || (lo_open && v == lo)) return false;
	*out = v;
	return true;
}

static void print_help(void) {
	printf("usage: pbd-convergence [options]\n"
	       "Residual of one step (1/60 s) against iterations and wall time for every solver, on the hanging\n"
	       "cloth of pbd bench (1 m, N x N, 1 kg, two corners pinned, structural + shear, PBD stiffness 1,\n"
	       "which iterates exactly as XPBD with compliance 0). Writes DIR/convergence.csv and, with gnuplot,\n"
	       "DIR/convergence_<N>_<problem>.png and the script DIR/convergence.gp.\n"
	       "\n"
	       "  --sizes LIST             grid sizes N, comma separated (default 64,256; %d..%d)\n"
	       "  --iterations K           most iterations per substep measured (default 200; <= %d)\n"
	       "  --repeat R               timed runs per point, the fastest is kept (default 3)\n"
	       "  --out DIR                output folder (default out/convergence)\n"
	       "  --rho R                  spectral radius given to Chebyshev, in (0, 1) (default 0.99)\n"
	       "  --levels L               hierarchy levels at most (default 16: as many as coarsening gives)\n"
	       "  --level-iterations M     iterations on each coarse level (default: the library's, 4)\n"
	       "  --ref-seconds S          simulated time before the measured substep (default 1)\n"
	       "  --ref-substeps S         substeps of the reference run (default 8)\n"
	       "  --ref-iterations I       iterations of the reference run (default 100)\n"
	       "  --stretch E              the stretched problem: every column of the reference cloth\n"
	       "                           lengthened by E away from the pinned edge (default 0.1)\n"
	       "  --no-plot                write the CSV only\n"
	       "  --help                   this text\n"
	       "\n"
	       "Solvers: gs_ordered (Gauss-Seidel in the order of addition, emulated), gs_coloured (the library's\n"
	       "default), jacobi (mass-weighted), chebyshev_rho_given, chebyshev_rho_estimated, hierarchical\n"
	       "(coloured Gauss-Seidel after the coarse levels; its sweeps count one per coarse level iteration),\n"
	       "xpbd_small_steps (k substeps of one iteration in the same 1/60 s, Macklin et al. 2019).\n"
	       "Problems: swinging (the reference state) and stretched (the same, lengthened by --stretch).\n"
	       "Exit status: 0 success, 1 a failure, 2 a bad command line.\n",
	       MIN_N, MAX_N, MAX_ITERATIONS);
}

static int parse_options(int argc, char** argv, options* o) {
	memset(o, 0, sizeof *o);
	o->sizes[0] = 64;
	o->sizes[1] = 256;
	o->size_count = 2;
	o->max_iterations = 200;
	o->repeat = 3;
	o->out_dir = "out/convergence";
	o->rho = 0.99;
	o->levels = 16;
	o->level_iterations = pbd_world_def_default().hierarchy_iterations;
	o->ref_seconds = 1;
	o->ref_substeps = 8;
	o->ref_iterations = 100;
	o->stretch = 0.1;
	o->plot = true;
	for (int i = 1; i < argc; ++i) {
		const char* arg = argv[i];
		static const char* const with_value[] = {"--sizes",   "--iterations",   "--repeat",           "--out",
		                                         "--rho",     "--levels",       "--level-iterations", "--ref-seconds",
		                                         "--stretch", "--ref-substeps", "--ref-iterations"};
		const bool flag = strcmp(arg, "--no-plot") == 0 || strcmp(arg, "--help") == 0;
		bool known = flag;
		for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; ++k)
			known = known || !strcmp(arg, with_value[k]);
		if (!known) return usage_error(arg[0] == '-' ? "unknown option" : "unexpected argument", arg);
		const char* value = NULL;
		if (!flag) {
			if (i + 1 >= argc) return usage_error("missing value after", arg);
			value = argv[++i];
		}
		long v = 0;
		double d = 0;
		if (strcmp(arg, "--help") == 0) {
			o->help = true;
		} else if (strcmp(arg, "--no-plot") == 0) {
			o->plot = false;
		} else if (strcmp(arg, "--sizes") == 0) {
			o->size_count = 0;
			char buf[256];
			if (strlen(value) >= sizeof buf) return usage_error("--sizes: too long", value);
			memcpy(buf, value, strlen(value) + 1);
			for (char* tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
				if (o->size_count == MAX_SIZES || !parse_long(tok, MIN_N, MAX_N, &v))
					return usage_error("--sizes: expected up to 8 sizes in [4, 1024], got", value);
				o->sizes[o->size_count++] = (uint32_t)v;
			}
			if (o->size_count == 0) return usage_error("--sizes: empty list", value);
		} else if (strcmp(arg, "--iterations") == 0) {
			if (!parse_long(value, 1, MAX_ITERATIONS, &v)) return usage_error("--iterations: not in [1, 5000]:", value);
			o->max_iterations = (int)v;
		} else if (strcmp(arg, "--repeat") == 0) {
			if (!parse_long(value, 1, MAX_REPEAT, &v)) return usage_error("--repeat: not in [1, 100]:", value);
			o->repeat = (int)v;
		} else if (strcmp(arg, "--out") == 0) {
			if (!*value) return usage_error("--out: empty folder name", value);
			o->out_dir = value;
		} else if (strcmp(arg, "--rho") == 0) {
			if (!parse_double(value, 0, 0.999999, true, &d)) return usage_error("--rho: not in (0, 1):", value);
			o->rho = d;
		} else if (strcmp(arg, "--levels") == 0) {
			if (!parse_long(value, 1, PBD_HIERARCHY_MAX_LEVELS, &v))
				return usage_error("--levels: not in [1, 16]:", value);
			o->levels = (int)v;
		} else if (strcmp(arg, "--level-iterations") == 0) {
			if (!parse_long(value, 1, 1000, &v)) return usage_error("--level-iterations: not in [1, 1000]:", value);
			o->level_iterations = (int)v;
		} else if (strcmp(arg, "--ref-seconds") == 0) {
			if (!parse_double(value, 0, 60, false, &d)) return usage_error("--ref-seconds: not in [0, 60]:", value);
			o->ref_seconds = d;
		} else if (strcmp(arg, "--stretch") == 0) {
			if (!parse_double(value, 0, 1, false, &d)) return usage_error("--stretch: not in [0, 1]:", value);
			o->stretch = d;
		} else if (strcmp(arg, "--ref-substeps") == 0) {
			if (!parse_long(value, 1, 1000, &v)) return usage_error("--ref-substeps: not in [1, 1000]:", value);
			o->ref_substeps = (int)v;
		} else if (strcmp(arg, "--ref-iterations") == 0) {
			if (!parse_long(value, 1, 1000, &v)) return usage_error("--ref-iterations: not in [1, 1000]:", value);
			o->ref_iterations = (int)v;
		} else {
			return usage_error("unknown option", arg);
		}
	}
	return 0;
}

/* ---- the problem -------------------------------------------------------------------------- */

static void log_stderr(const char* message, void* user) {
	(void)user;
	fprintf(stderr, PREFIX "pbd: %s\n", message);
}

static void problem_free(problem* P) {
	pbd_mesh_free(&P->mesh);
	free(P->a);
	free(P->b);
	free(P->rest);
	free(P->kind);
	free(P->iw);
	free(P->xref);
	free(P->x0);
	free(P->v0);
	free(P->q);
	free(P->p);
	free(P->coloured);
	memset(P, 0, sizeof *P);
}

/* A world holding the cloth, with the given settings on the bench's def. NULL on failure. */
static pbd_world* make_world(const problem* P, const pbd_world_def* def) {
	pbd_world* w = NULL;
	if (pbd_world_create(def, &w) != PBD_OK) return NULL;
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &P->mesh;
	bd.mass_mode = PBD_MASS_PER_PARTICLE;
	bd.mass = (pbd_real)(1.0 / ((double)P->n * (double)P->n));
	for (int k = 0; k < PBD_EDGE_KIND_COUNT; ++k) {
		bd.material[k].enabled = k != PBD_EDGE_BEND;
		bd.material[k].stiffness_stretch = 1;
		bd.material[k].stiffness_compress = 1;
	}
	bd.pinned = P->pinned;
	bd.pinned_count = 2;
	if (pbd_soft_create(w, &bd, NULL) != PBD_OK) {
		pbd_world_destroy(w);
		return NULL;
	}
	return w;
}

static pbd_world_def base_def(void) {
	pbd_world_def d = pbd_world_def_default();
	d.gravity = (pbd_vec3){0, (pbd_real)GRAVITY, 0};
	d.dt = (pbd_real)DT;
	d.substeps = 1;
	d.diagnostics = false;
	d.divergence_strain = 0; /* a stretched state is the point, not a failure */
	d.log = log_stderr;
	return d;
}

/* The library's partition of distances (src/constraints/partition.c): the constraints sorted by class (edge
 * kind, then b - a) and first particle, then coloured in that order, each taking the colour of the
 * one before it when that is of its class and free, else the lowest free colour; each colour's
 * constraints in that order, the overflow last. */
static uint64_t layout_class(const problem* P, uint32_t k) { return (uint64_t)P->kind[k] << 32 | (P->b[k] - P->a[k]); }

typedef struct layout_entry {
	uint64_t cls;
	uint32_t first, k;
} layout_entry;

static int layout_compare(const void* pa, const void* pb) {
	const layout_entry *x = (const layout_entry*)pa, *y = (const layout_entry*)pb;
	if (x->cls != y->cls) return x->cls < y->cls ? -1 : 1;
	if (x->first != y->first) return x->first < y->first ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

static void colour_order(problem* P) {
	uint64_t* masks = calloc(P->np, sizeof *masks);
	uint8_t* colour = malloc(P->nc);
	layout_entry* order = malloc(P->nc * sizeof *order);
	uint32_t count[65] = {0};
	for (uint32_t k = 0; k < P->nc; ++k) order[k] = (layout_entry){layout_class(P, k), P->a[k], k};
	qsort(order, P->nc, sizeof *order, layout_compare);
	for (uint32_t i = 0; i < P->nc; ++i) {
		const uint32_t k = order[i].k;
		const uint64_t used = masks[P->a[k]] | masks[P->b[k]];
		uint32_t c = 64;
		const uint32_t prev = i ? colour[i - 1] : 64;
		if (prev < 64 && order[i - 1].cls == order[i].cls && !(used >> prev & 1u)) {
			c = prev;
		} else if (used != UINT64_MAX) {
			c = 0;
			while (used & (1ull << c)) ++c;
		}
		if (c < 64) {
			masks[P->a[k]] |= 1ull << c;
			masks[P->b[k]] |= 1ull << c;
		}
		colour[i] = (uint8_t)c;
		count[c]++;
	}
	uint32_t start[65], sum = 0;
	for (int c = 0; c < 65; ++c) {
		start[c] = sum;
		sum += count[c];
	}
	for (uint32_t i = 0; i < P->nc; ++i) P->coloured[start[colour[i]]++] = order[i].k;
	free(order);
	free(masks);
	free(colour);
}

static int problem_build(problem* P, uint32_t n, const options* o) {
	memset(P, 0, sizeof *P);
	P->n = n;
	const pbd_grid_def g = bench_cloth_grid_def(n);
	pbd_error err;
	if (pbd_mesh_grid(&g, &P->mesh, &err) != PBD_OK) {
		fprintf(stderr, PREFIX "pbd_mesh_grid(N=%u): %s\n", n, err.message);
		return -1;
	}
	P->pinned[0] = 0;
	P->pinned[1] = n - 1;
	pbd_world_def def = base_def();
	def.substeps = o->ref_substeps;
	def.iterations = o->ref_iterations;
	pbd_world* w = make_world(P, &def);
	if (!w) return -1;
	P->np = pbd_world_particle_count(w);
	P->nc = pbd_world_distance_count(w);
	P->a = malloc(P->nc * sizeof *P->a);
	P->b = malloc(P->nc * sizeof *P->b);
	P->rest = malloc(P->nc * sizeof *P->rest);
	P->kind = malloc(P->nc);
	P->coloured = malloc(P->nc * sizeof *P->coloured);
	P->iw = malloc(P->np * sizeof *P->iw);
	P->xref = malloc(P->np * sizeof *P->xref);
	P->x0 = malloc(P->np * sizeof *P->x0);
	P->v0 = malloc(P->np * sizeof *P->v0);
	P->q = malloc(P->np * sizeof *P->q);
	P->p = malloc(P->np * sizeof *P->p);
	if (!P->a || !P->b || !P->rest || !P->kind || !P->coloured || !P->iw || !P->xref || !P->x0 || !P->v0 || !P->q ||
	    !P->p) {
		fprintf(stderr, PREFIX "out of memory for N=%u\n", n);
		pbd_world_destroy(w);
		return -1;
	}
	for (uint32_t k = 0; k < P->nc; ++k) {
		pbd_distance_def d;
		pbd_world_get_distance(w, k, &d);
		P->a[k] = d.a;
		P->b[k] = d.b;
		P->rest[k] = d.rest;
		P->kind[k] = (uint8_t)d.kind;
	}
	memcpy(P->iw, pbd_world_inv_masses(w), P->np * sizeof *P->iw);
	const int steps = (int)lround(o->ref_seconds / DT);
	for (int s = 0; s < steps; ++s) pbd_world_step(w);
	memcpy(P->xref, pbd_world_positions(w), P->np * sizeof *P->xref);
	memcpy(P->x0, P->xref, P->np * sizeof *P->x0);
	memcpy(P->v0, pbd_world_velocities(w), P->np * sizeof *P->v0);
	pbd_world_destroy(w);
	colour_order(P);
	return 0;
}

/* The problem's positions: the reference, or every vertex (i, j) moved to
 * x(i, 0) + (1 + e) (x(i, j) - x(i, 0)), its column lengthened away from the pinned edge j = 0. */
static void set_problem(problem* P, int which, double e) {
	memcpy(P->x0, P->xref, P->np * sizeof *P->x0);
	if (which != PROBLEM_STRETCHED) return;
	for (uint32_t j = 1; j < P->n; ++j)
		for (uint32_t i = 0; i < P->n; ++i) {
			const pbd_vec3 top = P->xref[i], x = P->xref[j * P->n + i];
			P->x0[j * P->n + i] = pbd_v3((pbd_real)((double)top.x + (1 + e) * ((double)x.x - (double)top.x)),
			                             (pbd_real)((double)top.y + (1 + e) * ((double)x.y - (double)top.y)),
			                             (pbd_real)((double)top.z + (1 + e) * ((double)x.z - (double)top.z)));
		}
}

/* Strain of the structural links and RMS violation of all, from rounded positions. */
static residual measure(const problem* P, const pbd_vec3* x) {
	residual r = {0, 0, 0};
	double sum = 0, sum2 = 0;
	uint32_t ns = 0;
	for (uint32_t k = 0; k < P->nc; ++k) {
		const pbd_vec3 xa = x[P->a[k]], xb = x[P->b[k]];
		const double dx = (double)xa.x - (double)xb.x, dy = (double)xa.y - (double)xb.y,
		             dz = (double)xa.z - (double)xb.z;
		const double c = sqrt(dx * dx + dy * dy + dz * dz) - (double)P->rest[k];
		sum2 += c * c;
		if (P->kind[k] == PBD_EDGE_STRUCTURAL && P->rest[k] > 0) {
			const double s = fabs(c) / (double)P->rest[k];
			sum += s;
			if (!(s <= r.max_strain)) r.max_strain = s;
			ns++;
		}
	}
	r.mean_strain = ns ? sum / ns : 0;
	r.rms = P->nc ? sqrt(sum2 / P->nc) : 0;
	return r;
}

/* ---- the emulated Gauss-Seidel ------------------------------------------------------------ */

/* One substep of k iterations from the reference state, in `order` (NULL: order of addition),
 * with the library's arithmetic: the prediction q = (v + g h) h from positions whose remainders
 * are zero, and the projection of src/constraints/distance.c at stiffness 1. Leaves the rounded
 * positions x + q in P->p. */
static void emulate(problem* P, const uint32_t* order, int k) {
	const pbd_real h = (pbd_real)DT;
	const pbd_vec3 gh = pbd_v3_scale(pbd_v3(0, (pbd_real)GRAVITY, 0), h);
	const pbd_vec3* restrict x = P->x0;
	pbd_vec3* restrict q = P->q;
	const pbd_real* restrict iw = P->iw;
	for (uint32_t i = 0; i < P->np; ++i) q[i] = iw[i] > 0 ? pbd_v3_scale(pbd_v3_add(P->v0[i], gh), h) : pbd_v3(0, 0, 0);
	const uint32_t* restrict A = P->a, * restrict B = P->b;
	const pbd_real* restrict rest = P->rest;
	for (int it = 0; it < k; ++it) {
		for (uint32_t j = 0; j < P->nc; ++j) {
			const uint32_t c = order ? order[j] : j;
			const uint32_t a = A[c], b = B[c];
			const pbd_real wa = iw[a], wb = iw[b], ws = wa + wb;
			if (ws == 0) continue;
			const pbd_vec3 d = pbd_v3_add(pbd_v3_sub(x[a], x[b]), pbd_v3_sub(q[a], q[b]));
			const pbd_real len = PBD_SQRT(pbd_v3_dot(d, d));
			if (!(len >= (pbd_real)1e-9)) continue;
			const pbd_real C = len - rest[c];
			const pbd_real s = C / (ws * len);
			q[a] = pbd_v3_sub(q[a], pbd_v3_scale(d, wa * s));
			q[b] = pbd_v3_add(q[b], pbd_v3_scale(d, wb * s));
		}
	}
	for (uint32_t i = 0; i < P->np; ++i) P->p[i] = pbd_v3_add(x[i], q[i]);
}

/* ---- one solver --------------------------------------------------------------------------- */

typedef struct point {
	int iterations, sweeps;
	double ms;
	residual r;
} point;

static pbd_world_def solver_def(solver_kind s, const options* o) {
	pbd_world_def d = base_def();
	if (s == S_JACOBI || s == S_CHEB_GIVEN || s == S_CHEB_ESTIMATED) d.solver = PBD_SOLVER_JACOBI;
	if (s == S_CHEB_GIVEN || s == S_CHEB_ESTIMATED) {
		d.chebyshev = true;
		d.chebyshev_rho = s == S_CHEB_GIVEN ? (pbd_real)o->rho : 0;
	}
	if (s == S_HIERARCHY) {
		d.hierarchy_levels = o->levels;
		d.hierarchy_iterations = o->level_iterations;
	}
	if (s == S_SMALL_STEPS) {
		d.formulation = PBD_FORMULATION_XPBD;
		d.iterations = 1;
	}
	return d;
}

static void reset(pbd_world* w, const problem* P) {
	pbd_world_set_positions(w, 0, P->np, P->x0);
	pbd_world_set_velocities(w, 0, P->np, P->v0);
}

/* Measures solver s at every count; returns -1 on a failure. *levels gets the coarse levels
 * built, sizes[] their particle counts. */
static int run_solver(problem* P, solver_kind s, const options* o, const int* counts, int ncounts, point* out,
                      uint32_t* levels, uint32_t* sizes) {
	*levels = 0;
	if (s == S_GS_ORDERED) {
		for (int c = 0; c < ncounts; ++c) {
			double best = INFINITY;
			for (int r = 0; r < o->repeat; ++r) {
				const double t0 = bench_now_ms();
				emulate(P, NULL, counts[c]);
				const double t1 = bench_now_ms();
				if (t1 - t0 < best) best = t1 - t0;
			}
			out[c] = (point){counts[c], counts[c], best, measure(P, P->p)};
		}
		return 0;
	}
	pbd_world_def def = solver_def(s, o);
	pbd_world* w = make_world(P, &def);
	if (!w) return -1;
	reset(w, P);
	pbd_world_step(w); /* the partition and the levels are built in the first step: not timed */
	*levels = pbd_world_hierarchy_levels(w, sizes);
	for (int c = 0; c < ncounts; ++c) {
		if (s == S_SMALL_STEPS)
			pbd_world_set_substeps(w, counts[c]);
		else
			pbd_world_set_iterations(w, counts[c]);
		reset(w, P);
		pbd_world_step(w); /* derives the constraints' settings for this count: not timed */
		double best = INFINITY;
		uint64_t hash = 0;
		for (int r = 0; r < o->repeat; ++r) {
			reset(w, P);
			const double t0 = bench_now_ms();
			pbd_world_step(w);
			const double t1 = bench_now_ms();
			if (t1 - t0 < best) best = t1 - t0;
			/* Every repeat must end where the first did (checked on the first and the last). */
			if (r == 0 || r == o->repeat - 1) {
				if (r > 0 && pbd_world_hash(w) != hash) {
					fprintf(stderr, PREFIX "N=%u %s: the same step gave two results\n", P->n, SOLVER_NAMES[s]);
					pbd_world_destroy(w);
					return -1;
				}
				hash = pbd_world_hash(w);
			}
		}
		const int sweeps = counts[c] + (int)*levels * (s == S_HIERARCHY ? o->level_iterations : 0);
		out[c] = (point){counts[c], sweeps, best, measure(P, pbd_world_positions(w))};
	}
	pbd_world_destroy(w);
	return 0;
}

/* The emulation in the library's colour order must give the library's positions, bit for bit. */
static int check_emulation(problem* P, const options* o) {
	pbd_world_def def = solver_def(S_GS, o);
	pbd_world* w = make_world(P, &def);
	if (!w) return -1;
	const int k = o->max_iterations < 5 ? o->max_iterations : 5;
	pbd_world_set_iterations(w, k);
	reset(w, P);
	pbd_world_step(w);
	emulate(P, P->coloured, k);
	const bool same = memcmp(P->p, pbd_world_positions(w), P->np * sizeof *P->p) == 0;
	pbd_world_destroy(w);
	if (!same) {
		fprintf(stderr, PREFIX "N=%u: the emulated Gauss-Seidel in colour order differs from the library's\n", P->n);
		return -1;
	}
	printf("N=%u: the emulated Gauss-Seidel in the library's colour order reproduces it bit for bit (%d iterations)\n",
	       P->n, k);
	/* The cost of the order alone: the same emulated sweep in both orders. */
	double best[2] = {INFINITY, INFINITY};
	for (int r = 0; r < o->repeat; ++r)
		for (int order = 0; order < 2; ++order) {
			const double t0 = bench_now_ms();
			emulate(P, order ? P->coloured : NULL, 10);
			const double t1 = bench_now_ms();
			if (t1 - t0 < best[order]) best[order] = t1 - t0;
		}
	printf("N=%u: emulated step of 10 iterations: %.3f ms in the order of addition, %.3f ms in colour order (%.2fx)\n",
	       P->n, best[0], best[1], best[0] / best[1]);
	return 0;
}

/* ---- output ------------------------------------------------------------------------------- */

static int make_dir(const char* path) {
	char buf[4096];
	if (strlen(path) >= sizeof buf) return -1;
	strcpy(buf, path);
	for (char* p = buf + 1; *p; ++p) {
		if (*p != '/') continue;
		*p = '\0';
		if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
		*p = '/';
	}
	if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
	return 0;
}

static const char* const CSV_HEADER =
    "n,problem,solver,iterations,sweeps,ms,mean_structural_strain,max_structural_strain,rms_violation_m";

static void write_script(FILE* f, const options* o) {
	fprintf(f, "# Written by pbd-convergence: `gnuplot convergence.gp` in this folder redraws the PNGs.\n"
	           "set datafile separator comma\n"
	           "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
	           "  set terminal pngcairo size 1400,1500 noenhanced font 'sans,10'\n"
	           "} else {\n"
	           "  set terminal png size 1400,1500 noenhanced\n"
	           "}\n"
	           "set logscale xy\n"
	           "set grid\n"
	           "set key bottom left\n"
	           "solvers = 'gs_ordered gs_coloured jacobi chebyshev_rho_given chebyshev_rho_estimated "
	           "hierarchical xpbd_small_steps'\n"
	           "ycol(k) = k == 1 ? 7 : k == 2 ? 8 : 9\n"
	           "yname(k) = k == 1 ? 'mean structural strain' : k == 2 ? 'max structural strain' : "
	           "'RMS violation (m)'\n");
	for (int i = 0; i < o->size_count; ++i)
		for (int p = 0; p < PROBLEM_COUNT; ++p) {
			const uint32_t n = o->sizes[i];
			const char* pn = PROBLEM_NAMES[p];
			fprintf(f,
			        "set output 'convergence_%u_%s.png'\n"
			        "set multiplot layout 3,2 title 'hanging cloth %u x %u, %s: one step of 1/60 s'\n"
			        "do for [k = 1:3] {\n"
			        "  set ylabel yname(k)\n"
			        "  set xlabel 'sweeps per step (a coarse level sweep or a small step counts as one)'\n"
			        "  plot for [s in solvers] 'convergence.csv' skip 1 using ($1 == %u && strcol(2) eq '%s' && "
			        "strcol(3) eq s ? $5 : NaN):(column(ycol(k)) > 0 ? column(ycol(k)) : NaN) with linespoints "
			        "pointsize 0.6 title s\n"
			        "  set xlabel 'wall time per step (ms, fastest of the repeats)'\n"
			        "  plot for [s in solvers] 'convergence.csv' skip 1 using ($1 == %u && strcol(2) eq '%s' && "
			        "strcol(3) eq s ? $6 : NaN):(column(ycol(k)) > 0 ? column(ycol(k)) : NaN) with linespoints "
			        "pointsize 0.6 title s\n"
			        "}\n"
			        "unset multiplot\n"
			        "unset output\n",
			        n, pn, n, n, pn, n, pn, n, pn);
		}
}

/* Runs gnuplot on the script in `dir`; 1 when gnuplot is missing (skipped), -1 when it failed. */
static int run_gnuplot(const char* dir) {
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	char* args[] = {"gnuplot", "convergence.gp", NULL};
	pid_t pid;
	/* gnuplot runs in the output folder, so the script names its files without a path. */
	char cwd[4096];
	if (!getcwd(cwd, sizeof cwd) || chdir(dir) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	const int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, args, environ);
	posix_spawn_file_actions_destroy(&fa);
	int status = 0;
	if (rc == 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
		}
	if (chdir(cwd) != 0) return -1;
	if (rc == ENOENT) return 1;
	if (rc != 0 || !WIFEXITED(status)) return -1;
	if (WEXITSTATUS(status) == 127) return 1;
	return WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* ---- main --------------------------------------------------------------------------------- */

int main(int argc, char** argv) {
	options o;
	const int prc = parse_options(argc, argv, &o);
	if (prc) return prc;
	if (o.help) {
		print_help();
		return 0;
	}
	int counts[MAX_COUNTS], ncounts = 0;
	for (size_t i = 0; i < sizeof LADDER / sizeof LADDER[0] && LADDER[i] <= o.max_iterations; ++i)
		counts[ncounts++] = LADDER[i];
	if (counts[ncounts - 1] != o.max_iterations) counts[ncounts++] = o.max_iterations;

	if (make_dir(o.out_dir) != 0) {
		fprintf(stderr, PREFIX "--out: cannot create '%s': %s\n", o.out_dir, strerror(errno));
		return 2;
	}
	char path[4200];
	snprintf(path, sizeof path, "%s/convergence.csv", o.out_dir);
	FILE* csv = fopen(path, "w");
	if (!csv) {
		fprintf(stderr, PREFIX "cannot write '%s': %s\n", path, strerror(errno));
		return 1;
	}
	fprintf(csv, "%s\n", CSV_HEADER);
	printf("pbd %s convergence study: %s, pbd_real = %s; %d repeat(s) per point, fastest kept\n", pbd_version(),
#ifdef NDEBUG
	       "optimised build",
#else
	       "debug build (times are not representative)",
#endif
	       sizeof(pbd_real) == sizeof(double) ? "double" : "float", o.repeat);
	printf("measured: one step of 1/60 s (1 substep, but k for xpbd_small_steps) from the cloth after %.3g s at %d "
	       "substeps x %d iterations (coloured Gauss-Seidel), as it is (swinging) and lengthened by %.3g "
	       "(stretched)\n",
	       o.ref_seconds, o.ref_substeps, o.ref_iterations, o.stretch);

	int rc = 0;
	point* pts = malloc((size_t)ncounts * sizeof *pts);
	for (int si = 0; si < o.size_count && rc == 0; ++si) {
		problem P;
		if (problem_build(&P, o.sizes[si], &o) != 0 || check_emulation(&P, &o) != 0) {
			problem_free(&P);
			rc = 1;
			break;
		}
		const residual rref = measure(&P, P.xref);
		printf("N=%u: %u particles, %u constraints; reference state: mean structural strain %.4g, max %.4g\n", P.n,
		       P.np, P.nc, rref.mean_strain, rref.max_strain);
		for (int pi = 0; pi < PROBLEM_COUNT && rc == 0; ++pi) {
			set_problem(&P, pi, o.stretch);
			emulate(&P, NULL, 0);
			const residual r0 = measure(&P, P.p);
			printf("\nN=%u, %s: after the prediction: mean structural strain %.4g, max %.4g, RMS violation %.4g m\n",
			       P.n, PROBLEM_NAMES[pi], r0.mean_strain, r0.max_strain, r0.rms);
			fprintf(csv, "%u,%s,initial,0,0,0,%.8g,%.8g,%.8g\n", P.n, PROBLEM_NAMES[pi], r0.mean_strain, r0.max_strain,
			        r0.rms);
			printf("%-24s %6s %6s %10s %12s %12s %12s\n", "solver", "iter", "sweeps", "ms", "mean strain", "max strain",
			       "RMS [m]");
			for (int s = 0; s < S_COUNT && rc == 0; ++s) {
				uint32_t levels = 0, sizes[PBD_HIERARCHY_MAX_LEVELS + 1];
				if (run_solver(&P, (solver_kind)s, &o, counts, ncounts, pts, &levels, sizes) != 0) {
					rc = 1;
					break;
				}
				if (s == S_HIERARCHY) {
					printf("hierarchy: %u coarse levels, particles per level:", levels);
					for (uint32_t l = 0; l <= levels; ++l) printf(" %u", sizes[l]);
					printf("; %d iteration(s) on each\n", o.level_iterations);
				}
				for (int c = 0; c < ncounts; ++c) {
					const point* p = &pts[c];
					printf("%-24s %6d %6d %10.3f %12.5g %12.5g %12.5g\n", SOLVER_NAMES[s], p->iterations, p->sweeps,
					       p->ms, p->r.mean_strain, p->r.max_strain, p->r.rms);
					fprintf(csv, "%u,%s,%s,%d,%d,%.6f,%.8g,%.8g,%.8g\n", P.n, PROBLEM_NAMES[pi], SOLVER_NAMES[s],
					        p->iterations, p->sweeps, p->ms, p->r.mean_strain, p->r.max_strain, p->r.rms);
				}
				fflush(stdout);
			}
		}
		problem_free(&P);
	}
	free(pts);
	if (fclose(csv) != 0) {
		fprintf(stderr, PREFIX "error writing '%s'\n", path);
		rc = 1;
	}
	if (rc == 0 && o.plot) {
		snprintf(path, sizeof path, "%s/convergence.gp", o.out_dir);
		FILE* f = fopen(path, "w");
		if (!f) {
			fprintf(stderr, PREFIX "cannot write '%s'\n", path);
			return 1;
		}
		write_script(f, &o);
		fclose(f);
		const int g = run_gnuplot(o.out_dir);
		if (g == 1)
			printf("gnuplot not found: no PNG plots (the CSV and %s are written)\n", path);
		else if (g < 0) {
			fprintf(stderr, PREFIX "gnuplot failed on %s\n", path);
			rc = 1;
		} else
			printf("plots: %s/convergence_<N>_<problem>.png\n", o.out_dir);
	}
	return rc;
}
