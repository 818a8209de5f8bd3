/* Collision rows of the benchmark (public API only). Per size N:
 *   sphere    the hanging cloth of the throughput table falls onto a static sphere and drapes;
 *             XPBD, 10 substeps x 1 iteration. Quality: the worst penetration of a particle
 *             below the sphere's margin over all steps. With Bullet, the same cloth on a
 *             btSphereShape with soft-rigid collision (SDF_RS) at Bullet's 10 iterations.
 *   self      the cloth folded in two (upper half 15 cm above the lower) dropped on a floor, with
 *             a thickness of 0.8 grid spacings and self-collision; XPBD, 4 substeps x 10
 *             iterations. Quality: the closest distance at the end between particles that must
 *             keep apart (rest distance >= thickness), against 0.85 x thickness.
 *   self-vf   the same with self-collision but without edge-edge contacts (particle pairs and
 *             vertex-face contacts only): what the edge contacts cost.
 *   self-off  the same without self-collision: what self-collision costs (and the control that
 *             shows the check catches a cloth falling through itself).
 * docs/BENCHMARKS.md, "Collision", has the measured table. */
#define _POSIX_C_SOURCE 200809L

#include "collision.h"

#include "cloth.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pbd/pbd.h"

#ifdef PBD_HAVE_BULLET
#include "bullet_peer.h"
#endif

#define COL_PREFIX "pbd bench: "

static const double COL_DT = 1.0 / 60.0;
static const double COL_GRAVITY = -9.81;
/* A strain no cloth reaches: the library's default divergence_strain, as the throughput table. */
static const double COL_DIVERGED_STRAIN = 10.0;
/* The first run of a row stops once its steps have taken this long in all (the later repeats run
 * as many steps as it did, so that their end states compare): a blown-up cloth can take a second
 * per step (many thousands of collision pairs). */
static const double COL_RUN_CAP_MS = 60000.0;

/* The sphere scene: the sphere's centre 0.35 m below the pins' line (y = 0, z = 0) and 0.5 m out
 * along the cloth (z), under the middle of the cloth (x = 0). */
static const double SPHERE_RADIUS = 0.25;
static const double SPHERE_CENTER[3] = {0.0, -0.35, 0.5};
static const double SPHERE_MARGIN = 0.01;
static const double PBD_PENETRATION_BOUND = 1e-4;    /* m below the margin */
static const double BULLET_PENETRATION_BOUND = 0.01; /* Bullet's soft contact: 1 cm */
enum { SPHERE_SUBSTEPS = 10, SPHERE_ITERATIONS = 1, BULLET_ITERATIONS = 10 };

/* The folded cloth: the lower half lies on the floor (its particles' centres at half the
 * thickness, as in tests/collision/test_self_collision.c), the upper half 0.15 m above it. */
static const double FOLD_HEIGHT = 0.15;
static const double FOLD_THICKNESS_SPACINGS = 0.8; /* thickness in grid spacings */
static const double FOLD_GAP_BOUND = 0.85;         /* closest distance / thickness of an ok row */
enum {
	FOLD_SUBSTEPS = 4,
	FOLD_ITERATIONS = 10,
	/* The worst closest distance over the run is taken from 0.1 s on: the first steps snap the
	 * edges that cross the fold, as in tests/collision/test_self_collision.c. */
	FOLD_SETTLE_STEPS = 6,
	/* The hashed pair search is checked against brute force up to this N. */
	BRUTE_MAX_N = 64,
	REPEAT_SPLIT_N = 128
};

typedef enum col_kind { ROW_SPHERE, ROW_SPHERE_BULLET, ROW_SELF, ROW_SELF_VF, ROW_SELF_OFF, ROW_COUNT } col_kind;

static const char* const row_names[ROW_COUNT] = {"sphere", "sphere", "self", "self-vf", "self-off"};

/* The meshes and scratch of one size, shared by every run. */
typedef struct col_scene {
	uint32_t n;
	pbd_mesh cloth; /* the hanging cloth, horizontal at y = 0 */
	uint32_t pins[2];
	double* cloth_rest; /* rest length per cloth edge */
	double* masses;     /* kg per cloth vertex, 0 for the pins (Bullet's convention) */
	pbd_mesh fold;      /* the folded cloth; edge_rest points at fold_rest */
	pbd_real* fold_rest;
	double* fold_rest_d; /* the same in double, for the strain check */
	double* fold_x0;     /* the folded start, xyz per vertex: the rest shape of self-collision */
	double thickness;
	double* xyz;     /* scratch positions */
	double* step_ms; /* one time per step */
	/* the pair search: a hash of cells, chained */
	uint32_t* head;
	uint32_t* next;
	int64_t* cell;
	size_t table_size;
} col_scene;

typedef enum col_stop { STOP_NONE, STOP_NONFINITE, STOP_TIME } col_stop;

/* What one run leaves behind. */
typedef struct col_run {
	double median_ms; /* over the steps run */
	int steps_run;
	col_stop stop;
	int diverged_at; /* the first step (1-based) after which an edge was past COL_DIVERGED_STRAIN; 0: none */
	uint32_t particles, constraints;
	uint32_t contacts;     /* after the last step */
	uint32_t contacts_max; /* the most after any step */
	double penetration;    /* sphere rows: worst over the steps, m below the margin */
	double gap_end;        /* self rows: closest keep-apart distance at the end, m (INFINITY: none within 2t) */
	double gap_worst;      /* self rows: the same, smallest over the steps from FOLD_SETTLE_STEPS on */
	uint32_t pairs;        /* self rows: keep-apart pairs closer than 2 t at the end */
	double max_strain;     /* at the end */
	bool finite;           /* every step's positions */
	uint64_t warnings;     /* pbd: non-finite and divergence warnings */
	uint64_t hash;
} col_run;

typedef struct col_row {
	const char* name;
	const char* engine;
	char setting[16];
	uint32_t n, particles, constraints;
	int substeps, iterations, repeats;
	int steps_run;   /* the steps the runs ran (fewer than asked when the first one was cut) */
	int diverged_at; /* the first step past the strain bound in any repeat; 0: none */
	double ms, ms_min;
	uint32_t contacts, contacts_max;
	double penetration, gap_end, gap_worst;
	uint32_t pairs;
	double max_strain;
	uint64_t hash;
	bool hash_stable;
	char status[24];
	double ratio; /* pbd/bullet on the pbd sphere row, self/self-off on the self row; NAN else */
	const char* ratio_kind;
} col_row;

/* ---- helpers ---------------------------------------------------------------------------- */

static int compare_double(const void* a, const void* b) {
	const double x = *(const double*)a, y = *(const double*)b;
	return (x > y) - (x < y);
}

static double median(double* v, size_t n) {
	if (n == 0) return (double)NAN;
	qsort(v, n, sizeof *v, compare_double);
	return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void log_stderr(const char* message, void* user) {
	(void)user;
	fprintf(stderr, COL_PREFIX "pbd: %s\n", message);
}

static int fail(pbd_world* w, uint32_t n, const char* what) {
	fprintf(stderr, COL_PREFIX "collision N=%u: %s failed\n", n, what);
	pbd_world_destroy(w);
	return -1;
}

static void copy_positions(const pbd_world* w, uint32_t np, double* xyz) {
	const pbd_vec3* x = pbd_world_positions(w);
	for (uint32_t i = 0; i < np; ++i) {
		xyz[3 * i] = (double)x[i].x;
		xyz[3 * i + 1] = (double)x[i].y;
		xyz[3 * i + 2] = (double)x[i].z;
	}
}

static bool all_finite(const double* xyz, uint32_t np) {
	for (size_t i = 0; i < 3 * (size_t)np; ++i)
		if (!isfinite(xyz[i])) return false;
	return true;
}

/* The worst depth of any particle below the sphere's margin (negative: none reached it). */
static double sphere_penetration(const double* xyz, uint32_t np) {
	double worst = -(double)INFINITY;
	for (uint32_t i = 0; i < np; ++i) {
		const double dx = xyz[3 * i] - SPHERE_CENTER[0], dy = xyz[3 * i + 1] - SPHERE_CENTER[1],
		             dz = xyz[3 * i + 2] - SPHERE_CENTER[2];
		const double depth = SPHERE_MARGIN - (sqrt(dx * dx + dy * dy + dz * dz) - SPHERE_RADIUS);
		if (depth > worst) worst = depth;
	}
	return worst;
}

static double max_edge_strain(const pbd_mesh* m, const double* rest, const double* xyz) {
	double max = 0.0;
	for (uint32_t k = 0; k < m->edge_count; ++k) {
		const double* a = xyz + 3 * (size_t)m->edges[2 * k];
		const double* b = xyz + 3 * (size_t)m->edges[2 * k + 1];
		const double dx = b[0] - a[0], dy = b[1] - a[1], dz = b[2] - a[2];
		const double strain = fabs(sqrt(dx * dx + dy * dy + dz * dz) - rest[k]) / rest[k];
		if (!(strain <= max)) max = strain; /* NaN sticks */
	}
	return max;
}

/* ---- the closest pair that must keep apart ---------------------------------------------- */

/* Pairs that must keep `thickness` apart: distinct particles at least the thickness apart in
 * the folded start, which is the world's rest shape for self-collision (the library skips the
 * closer ones: mesh neighbours). Here every pair qualifies, as the grid spacing is 1.25 t. */
static bool must_keep_apart(const col_scene* s, uint32_t a, uint32_t b) {
	const double* p = s->fold_x0 + 3 * (size_t)a;
	const double* q = s->fold_x0 + 3 * (size_t)b;
	const double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
	return dx * dx + dy * dy + dz * dz >= s->thickness * s->thickness;
}

typedef struct col_gap {
	double closest;  /* smallest distance among keep-apart pairs closer than reach; INFINITY if none */
	uint32_t within; /* keep-apart pairs closer than reach */
} col_gap;

static int64_t cell_of(double x, double reach) {
	double c = floor(x / reach);
	if (c < -1e9) c = -1e9; /* far-flung particles share an end cell: no overflow */
	if (c > 1e9) c = 1e9;
	return (int64_t)c;
}

static size_t cell_hash(int64_t x, int64_t y, int64_t z, size_t size) {
	uint64_t h = (uint64_t)x * 73856093u ^ (uint64_t)y * 19349663u ^ (uint64_t)z * 83492791u;
	h ^= h >> 29;
	return (size_t)(h & (uint64_t)(size - 1));
}

/* Keep-apart pairs closer than reach, with a hash of cells of size reach. xyz must be finite. */
static col_gap gap_hashed(col_scene* s, const double* xyz, uint32_t np, double reach) {
	col_gap g = {(double)INFINITY, 0};
	for (size_t b = 0; b < s->table_size; ++b) s->head[b] = UINT32_MAX;
	for (uint32_t i = 0; i < np; ++i) {
		int64_t* c = s->cell + 3 * (size_t)i;
		for (int k = 0; k < 3; ++k) c[k] = cell_of(xyz[3 * i + (uint32_t)k], reach);
		const size_t b = cell_hash(c[0], c[1], c[2], s->table_size);
		s->next[i] = s->head[b];
		s->head[b] = i;
	}
	const double reach2 = reach * reach;
	double best2 = (double)INFINITY;
	for (uint32_t i = 0; i < np; ++i) {
		const int64_t* c = s->cell + 3 * (size_t)i;
		for (int dz = -1; dz <= 1; ++dz)
			for (int dy = -1; dy <= 1; ++dy)
				for (int dx = -1; dx <= 1; ++dx) {
					const int64_t cx = c[0] + dx, cy = c[1] + dy, cz = c[2] + dz;
					for (uint32_t j = s->head[cell_hash(cx, cy, cz, s->table_size)]; j != UINT32_MAX; j = s->next[j]) {
						const int64_t* cj = s->cell + 3 * (size_t)j;
						if (j <= i || cj[0] != cx || cj[1] != cy || cj[2] != cz) continue;
						const double ex = xyz[3 * j] - xyz[3 * i], ey = xyz[3 * j + 1] - xyz[3 * i + 1],
						             ez = xyz[3 * j + 2] - xyz[3 * i + 2];
						const double d2 = ex * ex + ey * ey + ez * ez;
						if (d2 >= reach2 || !must_keep_apart(s, i, j)) continue;
						g.within++;
						if (d2 < best2) best2 = d2;
					}
				}
	}
	g.closest = sqrt(best2);
	return g;
}

/* The same by brute force, O(n^2): the check of the hash at small N. */
static col_gap gap_brute(const col_scene* s, const double* xyz, uint32_t np, double reach) {
	col_gap g = {(double)INFINITY, 0};
	double best2 = (double)INFINITY;
	for (uint32_t i = 0; i < np; ++i)
		for (uint32_t j = i + 1; j < np; ++j) {
			const double ex = xyz[3 * j] - xyz[3 * i], ey = xyz[3 * j + 1] - xyz[3 * i + 1],
			             ez = xyz[3 * j + 2] - xyz[3 * i + 2];
			const double d2 = ex * ex + ey * ey + ez * ez;
			if (d2 >= reach * reach || !must_keep_apart(s, i, j)) continue;
			g.within++;
			if (d2 < best2) best2 = d2;
		}
	g.closest = sqrt(best2);
	return g;
}

/* ---- scenes ----------------------------------------------------------------------------- */

static void pbd_scene_free(col_scene* s) {
	pbd_mesh_free(&s->cloth);
	s->fold.edge_rest = NULL; /* ours, freed below */
	pbd_mesh_free(&s->fold);
	free(s->fold_rest);
	free(s->fold_rest_d);
	free(s->cloth_rest);
	free(s->masses);
	free(s->fold_x0);
	free(s->xyz);
	free(s->step_ms);
	free(s->head);
	free(s->next);
	free(s->cell);
	memset(s, 0, sizeof *s);
}

static bool grid(uint32_t n, double y, pbd_mesh* out) {
	pbd_grid_def g = pbd_grid_def_default();
	g.nx = n;
	g.ny = n;
	g.size_u = 1;
	g.size_v = 1;
	g.origin = (pbd_vec3){(pbd_real)-0.5, (pbd_real)y, 0};
	g.axis_u = (pbd_vec3){1, 0, 0};
	g.axis_v = (pbd_vec3){0, 0, 1};
	g.diagonals = 2;
	g.bend = false;
	pbd_error err;
	memset(&err, 0, sizeof err);
	if (pbd_mesh_grid(&g, out, &err) != PBD_OK) {
		fprintf(stderr, COL_PREFIX "pbd_mesh_grid(N=%u) failed: %s\n", n, err.message);
		return false;
	}
	return true;
}

static double edge_length(const pbd_mesh* m, uint32_t k) {
	const pbd_vec3 a = m->positions[m->edges[2 * k]], b = m->positions[m->edges[2 * k + 1]];
	const double dx = (double)b.x - (double)a.x, dy = (double)b.y - (double)a.y, dz = (double)b.z - (double)a.z;
	return sqrt(dx * dx + dy * dy + dz * dz);
}

static int scene_build(col_scene* s, uint32_t n, int steps) {
	memset(s, 0, sizeof *s);
	s->n = n;
	/* The thickness as the world stores it (pbd_real), so the check and the library agree. */
	s->thickness = (double)(pbd_real)(FOLD_THICKNESS_SPACINGS / (double)(n - 1));
	const double lower_y = 0.5 * s->thickness;
	if (!grid(n, 0.0, &s->cloth) || !grid(n, lower_y, &s->fold)) {
		pbd_scene_free(s);
		return -1;
	}
	s->pins[0] = 0;
	s->pins[1] = n - 1;
	const uint32_t nv = s->cloth.vertex_count, ne = s->cloth.edge_count;
	s->cloth_rest = malloc((size_t)ne * sizeof *s->cloth_rest);
	s->masses = malloc((size_t)nv * sizeof *s->masses);
	s->fold_rest = malloc((size_t)s->fold.edge_count * sizeof *s->fold_rest);
	s->fold_rest_d = malloc((size_t)s->fold.edge_count * sizeof *s->fold_rest_d);
	s->fold_x0 = malloc(3 * (size_t)nv * sizeof *s->fold_x0);
	s->xyz = malloc(3 * (size_t)nv * sizeof *s->xyz);
	s->step_ms = malloc((size_t)steps * sizeof *s->step_ms);
	s->table_size = 1;
	while (s->table_size < 2 * (size_t)nv) s->table_size *= 2;
	s->head = malloc(s->table_size * sizeof *s->head);
	s->next = malloc((size_t)nv * sizeof *s->next);
	s->cell = malloc(3 * (size_t)nv * sizeof *s->cell);
	if (!s->cloth_rest || !s->masses || !s->fold_rest || !s->fold_rest_d || !s->fold_x0 || !s->xyz || !s->step_ms ||
	    !s->head || !s->next || !s->cell) {
		fprintf(stderr, COL_PREFIX "out of memory for N=%u\n", n);
		pbd_scene_free(s);
		return -1;
	}
	for (uint32_t k = 0; k < ne; ++k) s->cloth_rest[k] = edge_length(&s->cloth, k);
	for (uint32_t i = 0; i < nv; ++i) s->masses[i] = 1.0 / ((double)n * (double)n);
	s->masses[s->pins[0]] = 0.0;
	s->masses[s->pins[1]] = 0.0;

	/* The fold: the half z > 0.5 is laid back over the other, FOLD_HEIGHT above it, and the rest
	 * lengths are those of the folded shape, so the cloth starts at rest: the two halves keep
	 * their flat lengths (the fold is a mirror image), and the edges across the fold are as long
	 * as the gap. (tests/collision/test_self_collision.c starts from the flat lengths instead, with those
	 * edges stretched; at N = 64 and more, 9.5 and 19 times stretched, that start snaps so hard
	 * that the layers tangle at the fold: it stays finite, but keeps moving instead of settling,
	 * see docs/BENCHMARKS.md.) */
	for (uint32_t i = 0; i < nv; ++i) {
		pbd_vec3* p = &s->fold.positions[i];
		if (p->z > (pbd_real)0.5) *p = (pbd_vec3){p->x, (pbd_real)(lower_y + FOLD_HEIGHT), 1 - p->z};
		s->fold_x0[3 * i] = (double)p->x;
		s->fold_x0[3 * i + 1] = (double)p->y;
		s->fold_x0[3 * i + 2] = (double)p->z;
	}
	for (uint32_t k = 0; k < s->fold.edge_count; ++k) {
		s->fold_rest[k] = (pbd_real)edge_length(&s->fold, k);
		s->fold_rest_d[k] = (double)s->fold_rest[k];
	}
	s->fold.edge_rest = s->fold_rest;
	return 0;
}

/* ---- the watch after each step ----------------------------------------------------------- */

/* After step i (its time in step_ms), outside the timed call: notes the first step after which
 * the cloth had diverged (an edge stretched or squashed past COL_DIVERGED_STRAIN times its rest
 * length), and stops the run (true) at a non-finite position or once its steps have taken
 * cap_ms in all (0: no cap). */
static bool watch(const pbd_mesh* m, const double* rest, const double* xyz, uint32_t np, int i, double step_ms,
                  double cap_ms, double* spent, col_run* out) {
	out->steps_run = i + 1;
	if (!all_finite(xyz, np)) {
		out->finite = false;
		out->stop = STOP_NONFINITE;
		return true;
	}
	if (out->diverged_at == 0 && !(max_edge_strain(m, rest, xyz) <= COL_DIVERGED_STRAIN)) out->diverged_at = i + 1;
	*spent += step_ms;
	if (cap_ms > 0 && *spent > cap_ms) {
		out->stop = STOP_TIME;
		return true;
	}
	return false;
}

/* ---- pbd runs --------------------------------------------------------------------------- */

static pbd_world_def world_def(const col_scene* s, int substeps, int iterations) {
	pbd_world_def wd = pbd_world_def_default();
	wd.gravity = (pbd_vec3){0, (pbd_real)COL_GRAVITY, 0};
	wd.dt = (pbd_real)COL_DT;
	wd.substeps = substeps;
	wd.iterations = iterations;
	wd.solver = PBD_SOLVER_GAUSS_SEIDEL;
	wd.formulation = PBD_FORMULATION_XPBD;
	wd.damping = 1;
	wd.max_speed = 0;
	wd.diagnostics = false;   /* no stats pass in the timed steps */
	wd.divergence_strain = 0; /* judged on the final state, as the throughput table */
	wd.particle_capacity = s->cloth.vertex_count;
	wd.distance_capacity = s->cloth.edge_count;
	wd.log = log_stderr;
	return wd;
}

static pbd_soft_def cloth_def(const col_scene* s, const pbd_mesh* mesh) {
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = mesh;
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
	return bd;
}

static void finish_pbd(pbd_world* w, col_run* out) {
	pbd_stats stats;
	pbd_world_get_stats(w, &stats);
	out->max_strain = stats.max_strain;
	out->particles = pbd_world_particle_count(w);
	out->constraints = pbd_world_distance_count(w);
	out->hash = pbd_world_hash(w);
	out->warnings =
	    pbd_world_get_warning(w, PBD_WARN_NONFINITE).count + pbd_world_get_warning(w, PBD_WARN_DIVERGED).count;
}

static int run_pbd_sphere(col_scene* s, int steps, double cap_ms, col_run* out) {
	const pbd_world_def wd = world_def(s, SPHERE_SUBSTEPS, SPHERE_ITERATIONS);
	pbd_world* w = NULL;
	if (pbd_world_create(&wd, &w) != PBD_OK) return fail(w, s->n, "pbd_world_create");
	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_SPHERE;
	cd.shape.sphere.center =
	    (pbd_vec3){(pbd_real)SPHERE_CENTER[0], (pbd_real)SPHERE_CENTER[1], (pbd_real)SPHERE_CENTER[2]};
	cd.shape.sphere.radius = (pbd_real)SPHERE_RADIUS;
	cd.margin = (pbd_real)SPHERE_MARGIN;
	if (!pbd_collider_is_valid(w, pbd_collider_create(w, &cd))) return fail(w, s->n, "pbd_collider_create");
	pbd_soft_def bd = cloth_def(s, &s->cloth);
	bd.pinned = s->pins;
	bd.pinned_count = 2;
	if (pbd_soft_create(w, &bd, NULL) != PBD_OK) return fail(w, s->n, "pbd_soft_create");

	const uint32_t np = pbd_world_particle_count(w);
	out->penetration = -(double)INFINITY;
	out->finite = true;
	double spent = 0;
	for (int i = 0; i < steps; ++i) {
		const double t0 = bench_now_ms();
		const pbd_status st = pbd_world_step(w);
		const double t1 = bench_now_ms();
		if (st != PBD_OK) return fail(w, s->n, "pbd_world_step");
		s->step_ms[i] = t1 - t0;
		copy_positions(w, np, s->xyz);
		const double pen = sphere_penetration(s->xyz, np);
		if (!(pen <= out->penetration)) out->penetration = pen; /* NaN sticks */
		const uint32_t contacts = pbd_world_get_contacts(w, NULL, 0);
		if (contacts > out->contacts_max) out->contacts_max = contacts;
		if (watch(&s->cloth, s->cloth_rest, s->xyz, np, i, s->step_ms[i], cap_ms, &spent, out)) break;
	}
	out->median_ms = median(s->step_ms, (size_t)out->steps_run);
	out->contacts = pbd_world_get_contacts(w, NULL, 0);
	finish_pbd(w, out);
	pbd_world_destroy(w);
	return 0;
}

static int run_pbd_fold(col_scene* s, bool self, bool edges, int steps, double cap_ms, col_run* out) {
	const pbd_world_def wd = world_def(s, FOLD_SUBSTEPS, FOLD_ITERATIONS);
	pbd_world* w = NULL;
	if (pbd_world_create(&wd, &w) != PBD_OK) return fail(w, s->n, "pbd_world_create");
	const pbd_collider_def floor_def = pbd_collider_def_default(); /* the plane y = 0 */
	if (!pbd_collider_is_valid(w, pbd_collider_create(w, &floor_def))) return fail(w, s->n, "pbd_collider_create");
	pbd_soft_def bd = cloth_def(s, &s->fold);
	bd.thickness = (pbd_real)s->thickness;
	bd.self_collision = self;
	bd.edge_contacts = edges;
	if (pbd_soft_create(w, &bd, NULL) != PBD_OK) return fail(w, s->n, "pbd_soft_create");

	const uint32_t np = pbd_world_particle_count(w);
	const double reach = 2.0 * s->thickness;
	out->gap_worst = (double)INFINITY;
	out->finite = true;
	double spent = 0;
	for (int i = 0; i < steps; ++i) {
		const double t0 = bench_now_ms();
		const pbd_status st = pbd_world_step(w);
		const double t1 = bench_now_ms();
		if (st != PBD_OK) return fail(w, s->n, "pbd_world_step");
		s->step_ms[i] = t1 - t0;
		copy_positions(w, np, s->xyz);
		const uint32_t contacts = pbd_world_get_contacts(w, NULL, 0);
		if (contacts > out->contacts_max) out->contacts_max = contacts;
		if (watch(&s->fold, s->fold_rest_d, s->xyz, np, i, s->step_ms[i], cap_ms, &spent, out)) break;
		if (i >= FOLD_SETTLE_STEPS) {
			const col_gap g = gap_hashed(s, s->xyz, np, reach);
			if (g.closest < out->gap_worst) out->gap_worst = g.closest;
		}
	}
	out->median_ms = median(s->step_ms, (size_t)out->steps_run);
	out->gap_end = (double)NAN;
	if (out->finite) {
		const col_gap g = gap_hashed(s, s->xyz, np, reach);
		out->gap_end = g.closest;
		out->pairs = g.within;
		if (s->n <= BRUTE_MAX_N) {
			const col_gap b = gap_brute(s, s->xyz, np, reach);
			if (b.within != g.within || !(b.closest == g.closest))
				fprintf(stderr,
				        COL_PREFIX "warning: N=%u: the hashed pair search found %u pairs, closest %.9g m; brute "
				                   "force %u, closest %.9g m\n",
				        s->n, g.within, g.closest, b.within, b.closest);
		}
	} else {
		out->gap_worst = (double)NAN;
	}
	out->contacts = pbd_world_get_contacts(w, NULL, 0);
	finish_pbd(w, out);
	pbd_world_destroy(w);
	return 0;
}

/* ---- Bullet run ------------------------------------------------------------------------- */

#ifdef PBD_HAVE_BULLET
static int run_bullet_sphere(col_scene* s, int steps, double cap_ms, col_run* out) {
	const uint32_t nv = s->cloth.vertex_count;
	for (uint32_t i = 0; i < nv; ++i) {
		const pbd_vec3 p = s->cloth.positions[i];
		s->xyz[3 * i] = (double)p.x;
		s->xyz[3 * i + 1] = (double)p.y;
		s->xyz[3 * i + 2] = (double)p.z;
	}
	pbd_bullet_cloth_desc d;
	memset(&d, 0, sizeof d);
	d.node_count = nv;
	d.positions = s->xyz;
	d.masses = s->masses;
	d.link_count = s->cloth.edge_count;
	d.links = s->cloth.edges;
	d.iterations = BULLET_ITERATIONS;
	d.gravity_y = COL_GRAVITY;
	d.sphere = 1;
	memcpy(d.sphere_center, SPHERE_CENTER, sizeof d.sphere_center);
	d.sphere_radius = SPHERE_RADIUS;
	d.margin = SPHERE_MARGIN;
	char err[256] = "";
	pbd_bullet_cloth* c = pbd_bullet_cloth_create(&d, err, sizeof err);
	if (!c) {
		fprintf(stderr, COL_PREFIX "collision N=%u: %s\n", s->n, err);
		return -1;
	}
	out->penetration = -(double)INFINITY;
	out->finite = true;
	double spent = 0;
	for (int i = 0; i < steps; ++i) {
		const double t0 = bench_now_ms();
		pbd_bullet_cloth_step(c, COL_DT);
		const double t1 = bench_now_ms();
		s->step_ms[i] = t1 - t0;
		pbd_bullet_cloth_get_state(c, s->xyz, NULL);
		const double pen = sphere_penetration(s->xyz, nv);
		if (!(pen <= out->penetration)) out->penetration = pen;
		const uint32_t contacts = pbd_bullet_cloth_contact_count(c);
		if (contacts > out->contacts_max) out->contacts_max = contacts;
		if (watch(&s->cloth, s->cloth_rest, s->xyz, nv, i, s->step_ms[i], cap_ms, &spent, out)) break;
	}
	out->median_ms = median(s->step_ms, (size_t)out->steps_run);
	out->contacts = pbd_bullet_cloth_contact_count(c);
	out->max_strain = max_edge_strain(&s->cloth, s->cloth_rest, s->xyz);
	out->particles = nv;
	out->constraints = s->cloth.edge_count;
	out->hash = pbd_bullet_cloth_hash(c);
	out->warnings = 0;
	pbd_bullet_cloth_destroy(c);
	return 0;
}
#endif

/* ---- rows ------------------------------------------------------------------------------- */

static void make_row(col_row* r, col_kind kind, uint32_t n, double thickness, const col_run* runs, int count,
                     double* ms) {
	memset(r, 0, sizeof *r);
	r->name = row_names[kind];
	r->engine = kind == ROW_SPHERE_BULLET ? "bullet" : "pbd";
	r->n = n;
	r->particles = runs[0].particles;
	r->constraints = runs[0].constraints;
	r->repeats = count;
	switch (kind) {
	case ROW_SPHERE:
		r->substeps = SPHERE_SUBSTEPS;
		r->iterations = SPHERE_ITERATIONS;
		break;
	case ROW_SPHERE_BULLET:
		r->substeps = 1;
		r->iterations = BULLET_ITERATIONS;
		break;
	default:
		r->substeps = FOLD_SUBSTEPS;
		r->iterations = FOLD_ITERATIONS;
		break;
	}
	if (kind == ROW_SPHERE_BULLET)
		snprintf(r->setting, sizeof r->setting, "%d it", r->iterations);
	else
		snprintf(r->setting, sizeof r->setting, "xpbd %dx%d", r->substeps, r->iterations);
	bool finite = true, stable = true;
	uint64_t warnings = 0;
	double ms_min = (double)INFINITY;
	bool nonfinite = false;
	r->steps_run = runs[0].steps_run;
	/* Quality: the worst over the repeats (they should all end alike: hash_stable says so). */
	r->penetration = -(double)INFINITY;
	r->gap_end = (double)INFINITY;
	r->gap_worst = (double)INFINITY;
	for (int i = 0; i < count; ++i) {
		ms[i] = runs[i].median_ms;
		if (ms[i] < ms_min) ms_min = ms[i];
		finite = finite && runs[i].finite;
		stable = stable && runs[i].hash == runs[0].hash;
		warnings += runs[i].warnings;
		if (runs[i].steps_run < r->steps_run) r->steps_run = runs[i].steps_run;
		if (runs[i].stop == STOP_NONFINITE) nonfinite = true;
		if (runs[i].diverged_at && (r->diverged_at == 0 || runs[i].diverged_at < r->diverged_at))
			r->diverged_at = runs[i].diverged_at;
		if (!(runs[i].penetration <= r->penetration)) r->penetration = runs[i].penetration;
		if (!(runs[i].gap_end >= r->gap_end)) r->gap_end = runs[i].gap_end;
		if (!(runs[i].gap_worst >= r->gap_worst)) r->gap_worst = runs[i].gap_worst;
	}
	r->ms = median(ms, (size_t)count);
	r->ms_min = ms_min;
	r->contacts = runs[0].contacts;
	r->contacts_max = runs[0].contacts_max;
	r->pairs = runs[0].pairs;
	r->max_strain = runs[0].max_strain;
	r->hash = runs[0].hash;
	r->hash_stable = stable;
	r->ratio = (double)NAN;
	r->ratio_kind = "";
	const bool sphere = kind == ROW_SPHERE || kind == ROW_SPHERE_BULLET;
	if (!sphere) r->penetration = (double)NAN;
	if (nonfinite)
		snprintf(r->status, sizeof r->status, "non-finite@%d", r->steps_run);
	else if (r->diverged_at)
		snprintf(r->status, sizeof r->status, "diverged@%d", r->diverged_at);
	else if (!finite || warnings || !(r->max_strain <= COL_DIVERGED_STRAIN))
		snprintf(r->status, sizeof r->status, "diverged");
	else if (sphere && !(r->penetration <= (kind == ROW_SPHERE ? PBD_PENETRATION_BOUND : BULLET_PENETRATION_BOUND)))
		snprintf(r->status, sizeof r->status, "penetrates");
	else if (!sphere && !(r->gap_end >= FOLD_GAP_BOUND * thickness))
		snprintf(r->status, sizeof r->status, "interpenetrates");
	else
		snprintf(r->status, sizeof r->status, "ok");
}

static void print_table_header(void) {
	printf("%-8s %-6s %5s %9s %11s %-10s %5s %9s %9s %8s %8s %8s %11s %9s %9s %10s  %-16s %-15s %s\n", "row", "engine",
	       "N", "particles", "constraints", "setting", "steps", "ms/step", "(min)", "contacts", "(max)", "pairs<2t",
	       "max pen[m]", "gap/t end", "gap/t min", "max strain", "final hash", "status", "ratio");
}

static void fmt_gap(char* out, size_t size, double gap, double thickness) {
	if (isnan(gap))
		snprintf(out, size, "-");
	else if (isinf(gap))
		snprintf(out, size, ">2");
	else
		snprintf(out, size, "%.3f", gap / thickness);
}

static void print_row(const col_row* r, double thickness) {
	char pen[24] = "-", gap_end[24], gap_min[24], pairs[16] = "-", ratio[32] = "-";
	if (!isnan(r->penetration)) snprintf(pen, sizeof pen, "%.2e", r->penetration);
	const bool self = strcmp(r->name, "sphere") != 0;
	fmt_gap(gap_end, sizeof gap_end, self ? r->gap_end : (double)NAN, thickness);
	fmt_gap(gap_min, sizeof gap_min, self ? r->gap_worst : (double)NAN, thickness);
	if (self) snprintf(pairs, sizeof pairs, "%u", r->pairs);
	if (isfinite(r->ratio)) snprintf(ratio, sizeof ratio, "%.2f %s", r->ratio, r->ratio_kind);
	printf("%-8s %-6s %5u %9u %11u %-10s %5d %9.3f %9.3f %8u %8u %8s %11s %9s %9s %10.5f  %016" PRIx64 "%c %-15s %s\n",
	       r->name, r->engine, r->n, r->particles, r->constraints, r->setting, r->steps_run, r->ms, r->ms_min,
	       r->contacts, r->contacts_max, pairs, pen, gap_end, gap_min, r->max_strain, r->hash,
	       r->hash_stable ? ' ' : '!', r->status, ratio);
	fflush(stdout);
}

static void csv_header(FILE* f) {
	fputs("row,engine,n,particles,constraints,substeps,iterations,steps,steps_run,repeats,ms_per_step,ms_per_step_min,"
	      "contacts,contacts_max,close_pairs,max_penetration_m,margin_m,thickness_m,min_gap_end_m,min_gap_worst_m,max_"
	      "strain,hash,"
	      "hash_stable,status,diverged_at_step,ratio,ratio_kind\n",
	      f);
}

static void csv_number(FILE* f, double v) {
	if (!isnan(v)) fprintf(f, "%.6g", v);
	fputc(',', f);
}

static void csv_row(FILE* f, const col_row* r, int steps, double thickness) {
	const bool self = strcmp(r->name, "sphere") != 0;
	fprintf(f, "%s,%s,%u,%u,%u,%d,%d,%d,%d,%d,%.6f,%.6f,%u,%u,", r->name, r->engine, r->n, r->particles, r->constraints,
	        r->substeps, r->iterations, steps, r->steps_run, r->repeats, r->ms, r->ms_min, r->contacts,
	        r->contacts_max);
	if (self) fprintf(f, "%u", r->pairs);
	fputc(',', f);
	csv_number(f, r->penetration);
	csv_number(f, self ? (double)NAN : SPHERE_MARGIN);
	csv_number(f, self ? thickness : (double)NAN);
	csv_number(f, self ? r->gap_end : (double)NAN); /* inf: no keep-apart pair within 2 thickness */
	csv_number(f, self ? r->gap_worst : (double)NAN);
	fprintf(f, "%.8g,%016" PRIx64 ",%s,%s,", r->max_strain, r->hash, r->hash_stable ? "true" : "false", r->status);
	if (r->diverged_at) fprintf(f, "%d", r->diverged_at);
	fputc(',', f);
	if (isfinite(r->ratio)) fprintf(f, "%.4f", r->ratio);
	fprintf(f, ",%s\n", r->ratio_kind);
}

/* ---- main ------------------------------------------------------------------------------- */

static void print_scenes(int steps, int repeat, bool bullet) {
	printf("collision: %d steps of 1/60 s from rest, gravity %.2f m/s^2, no damping, Gauss-Seidel XPBD with\n"
	       "compliance 0 on structural + shear edges, 1 kg cloth (1/N^2 per particle)\n",
	       steps, COL_GRAVITY);
	printf("  sphere   the hanging cloth of the throughput table (1 m, N x N, corners 0 and N-1 pinned) falls\n"
	       "           onto a static sphere, radius %.2f m, centre (%.2f, %.2f, %.2f): %.2f m below the pins' line\n"
	       "           and %.2f m out; margin %.3f m, frictionless. pbd: %d substeps x %d iteration.\n",
	       SPHERE_RADIUS, SPHERE_CENTER[0], SPHERE_CENTER[1], SPHERE_CENTER[2], -SPHERE_CENTER[1], SPHERE_CENTER[2],
	       SPHERE_MARGIN, SPHERE_SUBSTEPS, SPHERE_ITERATIONS);
	if (bullet)
		printf("           bullet: the same nodes and links, btSphereShape in a btRigidBody of mass 0,\n"
		       "           cfg.collisions = SDF_RS, soft-body margin %.3f m, kDF 0 and friction 0, its default\n"
		       "           contact hardness and sparse SDF; %d iterations, 1 step of 1/60 s.\n",
		       SPHERE_MARGIN, BULLET_ITERATIONS);
	printf("           max pen = the worst depth of a particle below the margin over all steps (m; negative:\n"
	       "           none reached it); ok when <= %.0e m (pbd) or <= %.0e m (bullet: its contact is soft),\n"
	       "           else penetrates. contacts = pbd_world_get_contacts (bullet: m_rcontacts) after the last step,\n"
	       "           (max) = the most after any step.\n",
	       PBD_PENETRATION_BOUND, BULLET_PENETRATION_BOUND);
	printf("  self     the same cloth (no pins) folded in two: the half z > 0.5 laid back %.2f m above the\n"
	       "           other, which lies on the floor y = 0 (at y = t/2), the folded shape's edge lengths as\n"
	       "           rest lengths (the cloth starts at rest, the %.2f m edges across the fold unstretched);\n"
	       "           thickness t = %.1f grid spacings, self_collision on; XPBD %d substeps x %d iterations.\n",
	       FOLD_HEIGHT, FOLD_HEIGHT, FOLD_THICKNESS_SPACINGS, FOLD_SUBSTEPS, FOLD_ITERATIONS);
	printf("  self-vf  the same with self_collision but edge_contacts off (particle pairs and vertex-face\n"
	       "           contacts only): the cost of the edge-edge contacts.\n");
	printf("  self-off the same without self_collision (same thickness against the floor): the cost of\n"
	       "           self-collision, and the control that the check sees a cloth fall through itself.\n");
	printf("           gap/t = the closest distance between particles that must keep apart (their distance\n"
	       "           in the folded start >= t, as the library's rule) over t: at the end (ok when >= %.2f,\n"
	       "           else interpenetrates) and the least over the steps from 0.1 s on (shown only);\n"
	       "           >2: no such pair within 2t. pairs<2t: such pairs closer than 2t at the end, counted by\n"
	       "           the bench from the positions (the library publishes no pair count; its search keeps\n"
	       "           the pairs within 2t of the predicted positions each substep); checked against brute\n"
	       "           force for N <= %d.\n",
	       FOLD_GAP_BOUND, BRUTE_MAX_N);
	printf("  ratio    sphere pbd row: pbd ms / bullet ms; self row: self ms / self-off ms; self-vf row:\n"
	       "           self-vf ms / self-off ms.\n");
	printf("  status   diverged@k: the run stopped after step k, a position non-finite or an edge past %g times\n"
	       "           its rest length (checked after every step, the run goes on); non-finite@k: stopped there.\n"
	       "  steps    the steps run: fewer than asked when the first run of the row had taken %.0f s by then\n"
	       "           (the other repeats then run as many); ms/step is the median of the steps run.\n",
	       COL_DIVERGED_STRAIN, COL_RUN_CAP_MS / 1000.0);
	if (repeat)
		printf("timing:   %d run(s) per row, fresh world each, rows interleaved; ms/step = median over runs of the\n"
		       "          per-step median; quality outside the timed calls\n",
		       repeat);
	else
		printf("timing:   3 runs per row for N <= %d, 1 above, fresh world each, rows interleaved; ms/step =\n"
		       "          median over runs of the per-step median; quality outside the timed calls\n",
		       REPEAT_SPLIT_N);
	printf("\n");
}

int bench_collision(const uint32_t* sizes, int size_count, int steps, int repeat, bool bullet, FILE* csv) {
#ifndef PBD_HAVE_BULLET
	bullet = false;
#endif
	print_scenes(steps, repeat, bullet);
	print_table_header();
	if (csv) csv_header(csv);
	const bool progress = isatty(STDERR_FILENO) != 0;
	enum { MAX_SIZES = 16 };
	if (size_count > MAX_SIZES) {
		fprintf(stderr, COL_PREFIX "collision: at most %d sizes\n", MAX_SIZES);
		return -1;
	}
	double ratio_bt[MAX_SIZES], ratio_self[MAX_SIZES], ratio_edges[MAX_SIZES];
	int bad = 0, rc = 0;
	for (int si = 0; si < size_count && rc == 0; ++si) {
		const uint32_t n = sizes[si];
		ratio_bt[si] = (double)NAN;
		ratio_self[si] = (double)NAN;
		ratio_edges[si] = (double)NAN;
		col_scene s;
		if (scene_build(&s, n, steps) != 0) return -1;
		const int repeats = repeat ? repeat : (n <= REPEAT_SPLIT_N ? 3 : 1);
		col_run* runs = calloc((size_t)ROW_COUNT * (size_t)repeats, sizeof *runs);
		double* ms = calloc((size_t)repeats, sizeof *ms);
		if (!runs || !ms) {
			fprintf(stderr, COL_PREFIX "out of memory\n");
			free(runs);
			free(ms);
			pbd_scene_free(&s);
			return -1;
		}
		for (int r = 0; r < repeats && rc == 0; ++r)
			for (int k = 0; k < ROW_COUNT && rc == 0; ++k) {
				col_run* run = &runs[(size_t)k * (size_t)repeats + (size_t)r];
				/* The first run may be cut by time; the others run as many steps, uncut. */
				const int row_steps = r == 0 ? steps : runs[(size_t)k * (size_t)repeats].steps_run;
				const double cap_ms = r == 0 ? COL_RUN_CAP_MS : 0.0;
				if (progress) fprintf(stderr, "  N=%u %s run %d/%d          \r", n, row_names[k], r + 1, repeats);
				switch ((col_kind)k) {
				case ROW_SPHERE:
					rc = run_pbd_sphere(&s, row_steps, cap_ms, run);
					break;
				case ROW_SPHERE_BULLET:
#ifdef PBD_HAVE_BULLET
					if (bullet) rc = run_bullet_sphere(&s, row_steps, cap_ms, run);
#endif
					break;
				case ROW_SELF:
					rc = run_pbd_fold(&s, true, true, row_steps, cap_ms, run);
					break;
				case ROW_SELF_VF:
					rc = run_pbd_fold(&s, true, false, row_steps, cap_ms, run);
					break;
				default:
					rc = run_pbd_fold(&s, false, true, row_steps, cap_ms, run);
					break;
				}
			}
		if (progress) fprintf(stderr, "%60s\r", "");
		if (rc == 0) {
			col_row rows[ROW_COUNT];
			for (int k = 0; k < ROW_COUNT; ++k)
				make_row(&rows[k], (col_kind)k, n, s.thickness, &runs[(size_t)k * (size_t)repeats], repeats, ms);
			if (bullet) {
				rows[ROW_SPHERE].ratio = rows[ROW_SPHERE].ms / rows[ROW_SPHERE_BULLET].ms;
				rows[ROW_SPHERE].ratio_kind = "pbd/bt";
				ratio_bt[si] = rows[ROW_SPHERE].ratio;
			}
			rows[ROW_SELF].ratio = rows[ROW_SELF].ms / rows[ROW_SELF_OFF].ms;
			rows[ROW_SELF].ratio_kind = "self/off";
			ratio_self[si] = rows[ROW_SELF].ratio;
			rows[ROW_SELF_VF].ratio = rows[ROW_SELF_VF].ms / rows[ROW_SELF_OFF].ms;
			rows[ROW_SELF_VF].ratio_kind = "vf/off";
			ratio_edges[si] = rows[ROW_SELF].ms / rows[ROW_SELF_VF].ms;
			for (int k = 0; k < ROW_COUNT; ++k) {
				if (k == ROW_SPHERE_BULLET && !bullet) continue;
				const col_row* row = &rows[k];
				if (!row->hash_stable) ++bad;
				print_row(row, s.thickness);
				if (csv) csv_row(csv, row, steps, s.thickness);
			}
		}
		free(runs);
		free(ms);
		pbd_scene_free(&s);
	}
	if (rc != 0) return -1;
	if (bullet) {
		printf("\npbd ms / Bullet ms (sphere):");
		for (int i = 0; i < size_count; ++i) printf("  N=%u %.2f", sizes[i], ratio_bt[i]);
	}
	printf("\nself ms / self-off ms:       ");
	for (int i = 0; i < size_count; ++i) printf("  N=%u %.2f", sizes[i], ratio_self[i]);
	printf("\nself ms / self-vf ms:        ");
	for (int i = 0; i < size_count; ++i) printf("  N=%u %.2f", sizes[i], ratio_edges[i]);
	printf("\n");
	if (bad) printf("\n%d row(s) differed between repeats ('!' after the hash): the runs are not deterministic\n", bad);
	return bad;
}
