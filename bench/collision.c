/* Collision rows of the benchmark (public API only).
 *
 * Setting: every pbd row (sphere, self, self-vf, self-off, table, pile) runs XPBD with the
 * hierarchical solve (6 coarse levels, bench/quality.c's xpbd-hier) at 4 substeps x 2 iterations,
 * and up to COL_MAX_SUBSTEPS substeps in a step whose fastest particle would move more than a
 * thickness per substep (pbd_world_def.max_substeps; the cloth on the sphere has no thickness);
 * Bullet's row runs its 10 iterations in one step. The cost-to-quality table (docs/BENCHMARKS.md)
 * finds the hierarchy the one method that holds a hanging cloth within 1 % mean structural strain
 * in a few substeps (xpbd-hier at t = 2 s: 3 substeps at 64^2, 4 at 128^2), where plain XPBD needs
 * 25 to 50 and iterations alone do not get there; without it, 10 substeps x 1 iteration let the
 * sphere row's 128^2 cloth diverge. 4 substeps is the 128^2 rung, the largest default size; the
 * second iteration is for the contacts, which the iterations project and the coarse levels do not
 * see. Per size N:
 *   sphere    the hanging cloth of the throughput table falls onto a static sphere and drapes.
 *             Quality: the worst penetration of a particle below the sphere's margin over all
 *             steps. With Bullet, the same cloth on a btSphereShape with soft-rigid collision
 *             (SDF_RS) at Bullet's 10 iterations.
 *   self      the cloth folded in two (upper half 15 cm above the lower) dropped on a floor, with
 *             a thickness of 0.8 grid spacings and self-collision. Quality: the closest distance
 *             at the end between particles that must keep apart (rest distance >= thickness),
 *             against 0.85 x thickness.
 *   self-vf   the same with self-collision but without edge-edge contacts (particle pairs and
 *             vertex-face contacts only): what the edge contacts cost.
 *   self-off  the same without self-collision: what self-collision costs (and the control that
 *             shows the checks catch a cloth falling through itself).
 *   table     the cloth lying flat 0.2 m above a table (a 0.6 x 0.05 x 0.6 m box, top at 0.5 m,
 *             over the floor) falls on it and drapes over its edges; self-collision as the self row.
 *   pile      four cloths of (N/2)^2, 0.8 m square, stacked 5 cm apart and turned by 0, 20, 40 and
 *             60 degrees about y, fall on a sphere resting on the floor and pile up on it;
 *             self-collision and cloth-cloth collision.
 * table and pile run on 1 and on 2 threads (two rows). With Bullet, the self, table and pile scenes
 * also run in Bullet's soft body on one thread, with its cluster self-collision
 * (bench/bullet_collision.cpp says why that mode), and are checked the same way. The self, table
 * and pile rows count, after every step, the edges that pass through a face (all cloths as one
 * mesh) and the particles inside a collider (bench/crossings.c): any of either is `penetrates`;
 * then a mean structural strain above 1 % at the end is `unconverged`. docs/BENCHMARKS.md,
 * "Collision", has the measured table. */
#define _POSIX_C_SOURCE 200809L

#include "collision.h"

#include "cloth.h"
#include "crossings.h"

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
/* The mean structural strain a taut cloth keeps: the cost-to-quality table's target. */
static const double COL_UNCONVERGED_STRAIN = 0.01;
/* The first run of a row stops once its steps have taken this long in all (the later repeats run
 * as many steps as it did, so that their end states compare): a blown-up cloth can take a second
 * per step (many thousands of collision pairs). */
static const double COL_RUN_CAP_MS = 60000.0;
/* The pbd rows' setting (see the comment at the top). */
enum { COL_SUBSTEPS = 4, COL_ITERATIONS = 2, COL_HIERARCHY_LEVELS = 6, BULLET_ITERATIONS = 10 };
/* Substeps that follow the motion (pbd_world_def.max_substeps): a step whose fastest particle
 * would move more than a thickness per substep runs more, up to this many. */
enum { COL_MAX_SUBSTEPS = 16 };
/* Bullet's self, table and pile rows (bench/bullet_collision.cpp): one convex cluster per triangle
 * with cluster contacts, and the soft body's margin in grid spacings. Two clusters keep twice the
 * margin apart, and Bullet spares only clusters that share a node: in the flat grid, triangles
 * that share none come within 0.71 spacings, so twice the margin must stay below that or the cloth
 * pushes itself apart at rest; pbd's thickness of 0.8 spacings is out of reach. */
static const double BULLET_MARGIN_SPACINGS = 0.3;
/* The contacts with the colliders: fully hard (kKHR 1, Bullet's default 0.1 lets the sphere row's
 * cloth sink 0.24 m into its sphere) over a 1 cm voxel of the sparse distance field (default
 * 0.25 m, five times the table's thickness). */
static const double BULLET_CONTACT_HARDNESS = 1.0;
static const double BULLET_VOXEL = 0.01;

/* The sphere scene: the sphere's centre 0.35 m below the pins' line (y = 0, z = 0) and 0.5 m out
 * along the cloth (z), under the middle of the cloth (x = 0). */
static const double SPHERE_RADIUS = 0.25;
static const double SPHERE_CENTER[3] = {0.0, -0.35, 0.5};
static const double SPHERE_MARGIN = 0.01;
static const double PBD_PENETRATION_BOUND = 1e-4;    /* m below the margin */
static const double BULLET_PENETRATION_BOUND = 0.01; /* Bullet's soft contact: 1 cm */

/* The folded cloth: the lower half lies on the floor (its particles' centres at half the
 * thickness, as in tests/collision/test_self_collision.c), the upper half 0.15 m above it. */
static const double FOLD_HEIGHT = 0.15;
static const double THICKNESS_SPACINGS = 0.8; /* thickness in grid spacings, every row with one */
static const double FOLD_GAP_BOUND = 0.85;    /* closest distance / thickness of an ok row */

/* The table: a box whose top is at TABLE_TOP, over the floor, and the cloth TABLE_DROP above it. */
static const double TABLE_HALF[3] = {0.3, 0.025, 0.3};
static const double TABLE_TOP = 0.5;
static const double TABLE_DROP = 0.2;
/* The pile: a sphere resting on the floor and PILE_COUNT cloths above it, the lowest
 * PILE_CLEARANCE over its top, PILE_GAP apart (or 1.1 thickness where that is more: a coarse
 * cloth's thickness exceeds 5 cm below N = 36, and the cloths must not start in contact). */
enum { PILE_COUNT = 4, PILE_MIN_SIDE = 3 };
static const double PILE_SIZE = 0.8;
static const double PILE_RADIUS = 0.2;
static const double PILE_CLEARANCE = 0.1;
static const double PILE_GAP = 0.05;
static const double PILE_ANGLES_DEG[PILE_COUNT] = {0, 20, 40, 60};
static const double COL_PI = 3.14159265358979323846;
/* Areal density of every cloth: the 1 m cloths weigh 1 kg. */
static const double CLOTH_DENSITY = 1.0; /* kg/m^2 */
/* The table's and the pile's colliders hold the cloth by friction (the sphere row's and the
 * fold's are frictionless): a frictionless cloth would slide off the table and the sphere. */
static const double DRAPE_STATIC_FRICTION = 0.5;
static const double DRAPE_KINETIC_FRICTION = 0.4;

enum {
	/* The worst closest distance over the run is taken from 0.1 s on (shown only). */
	FOLD_SETTLE_STEPS = 6,
	/* The hashed pair search is checked against brute force up to this N. */
	BRUTE_MAX_N = 64,
	REPEAT_SPLIT_N = 128
};

typedef enum col_kind {
	ROW_SPHERE,
	ROW_SPHERE_BULLET,
	ROW_SELF,
	ROW_SELF_VF,
	ROW_SELF_OFF,
	ROW_SELF_BULLET,
	ROW_TABLE,
	ROW_TABLE_2,
	ROW_TABLE_BULLET,
	ROW_PILE,
	ROW_PILE_2,
	ROW_PILE_BULLET,
	ROW_COUNT
} col_kind;

static const char* const row_names[ROW_COUNT] = {"sphere", "sphere", "self",  "self-vf", "self-off", "self",
                                                 "table",  "table",  "table", "pile",    "pile",     "pile"};
static const int row_threads[ROW_COUNT] = {1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 2, 1};

static bool is_bullet(col_kind k) {
	return k == ROW_SPHERE_BULLET || k == ROW_SELF_BULLET || k == ROW_TABLE_BULLET || k == ROW_PILE_BULLET;
}
/* pbd's folded-cloth rows, held to the gap rule. */
static bool is_self(col_kind k) { return k == ROW_SELF || k == ROW_SELF_VF || k == ROW_SELF_OFF; }
/* The folded-cloth rows, whose closest keep-apart pair is measured (Bullet's too, shown only). */
static bool is_fold(col_kind k) { return is_self(k) || k == ROW_SELF_BULLET; }
/* The rows whose quality is counted after every step: edges through faces, particles inside. */
static bool is_counted(col_kind k) { return k >= ROW_SELF; }

/* The particles, edges and triangles of a row's cloths as the world numbers them (the objects'
 * particles follow each other in the order of creation), and the colliders of its scene. */
typedef enum col_set_kind { SET_CLOTH, SET_FOLD, SET_TABLE, SET_PILE, SET_COUNT } col_set_kind;

static col_set_kind set_of(col_kind k) {
	if (k <= ROW_SPHERE_BULLET) return SET_CLOTH;
	if (k <= ROW_SELF_BULLET) return SET_FOLD;
	return k <= ROW_TABLE_BULLET ? SET_TABLE : SET_PILE;
}

typedef struct col_set {
	uint32_t np, ne;
	uint32_t* edges; /* 2 per edge, particle indices */
	double* rest;    /* m per edge */
	uint8_t* kinds;  /* pbd_edge_kind per edge */
	col_crossings cross;
	col_shape shapes[2]; /* the scene's colliders, in world coordinates */
	uint32_t shape_count;
	double margin, friction_static, friction_kinetic; /* of every collider */
	double thickness;                                 /* of every cloth; 0: none */
} col_set;

/* The meshes and scratch of one size, shared by every run. */
typedef struct col_scene {
	uint32_t n, pile_n;
	pbd_mesh cloth; /* the hanging cloth, horizontal at y = 0 */
	uint32_t pins[2];
	double* masses; /* kg per cloth vertex, 0 for the pins (Bullet's convention) */
	pbd_mesh fold;  /* the folded cloth; edge_rest points at fold_rest */
	pbd_real* fold_rest;
	double* fold_x0; /* the folded start, xyz per vertex: the rest shape of self-collision */
	pbd_mesh table;  /* the table's cloth, flat over it */
	pbd_mesh pile[PILE_COUNT];
	double pile_gap;
	col_set sets[SET_COUNT];
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
	uint32_t contacts;      /* after the last step */
	uint32_t contacts_max;  /* the most after any step */
	double penetration;     /* sphere rows: worst over the steps, m below the margin */
	double gap_end;         /* self rows: closest keep-apart distance at the end, m (INFINITY: none within 2t) */
	double gap_worst;       /* self rows: the same, smallest over the steps from FOLD_SETTLE_STEPS on */
	uint32_t pairs;         /* self rows: keep-apart pairs closer than 2 t at the end */
	uint32_t crossings_max; /* counted rows: the most edges through faces after any step */
	int crossing_steps;     /* counted rows: the steps after which some edge passed through a face */
	uint32_t inside_max;    /* counted rows: the most particles inside a collider after any step */
	double strain_mean;     /* mean structural strain at the end */
	double max_strain;      /* at the end */
	bool finite;            /* every step's positions */
	uint64_t warnings;      /* pbd: non-finite and divergence warnings */
	uint64_t hash;
	int substeps_most; /* pbd: the most substeps a step ran */
} col_run;

typedef struct col_row {
	col_kind kind;
	const char* name;
	const char* engine;
	char setting[40];
	uint32_t n, particles, constraints;
	int threads, substeps, iterations, hierarchy_levels, repeats;
	int steps_run;   /* the steps the runs ran (fewer than asked when the first one was cut) */
	int diverged_at; /* the first step past the strain bound in any repeat; 0: none */
	double ms, ms_min;
	uint32_t contacts, contacts_max;
	double penetration, gap_end, gap_worst;
	uint32_t pairs;
	uint32_t crossings_max, inside_max;
	int crossing_steps;
	double strain_mean, max_strain;
	double thickness; /* m; NAN for a row without */
	uint64_t hash;
	bool hash_stable;
	char status[24];
	double ratio; /* pbd/bullet on the pbd sphere row, self/self-off on the self row, 2 threads / 1 on
	                 the 2-thread rows; NAN else */
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

static double edge_strain(const col_set* t, uint32_t k, const double* xyz) {
	const double* a = xyz + 3 * (size_t)t->edges[2 * k];
	const double* b = xyz + 3 * (size_t)t->edges[2 * k + 1];
	const double dx = b[0] - a[0], dy = b[1] - a[1], dz = b[2] - a[2];
	return fabs(sqrt(dx * dx + dy * dy + dz * dz) - t->rest[k]) / t->rest[k];
}

static double max_edge_strain(const col_set* t, const double* xyz) {
	double max = 0.0;
	for (uint32_t k = 0; k < t->ne; ++k) {
		const double strain = edge_strain(t, k, xyz);
		if (isnan(strain)) return strain; /* a later finite edge must not hide it */
		if (strain > max) max = strain;
	}
	return max;
}

/* |len - rest| / rest averaged over the structural edges (the grid's rows and columns). */
static double mean_structural_strain(const col_set* t, const double* xyz) {
	double sum = 0.0;
	uint32_t count = 0;
	for (uint32_t k = 0; k < t->ne; ++k) {
		if (t->kinds[k] != PBD_EDGE_STRUCTURAL) continue;
		sum += edge_strain(t, k, xyz);
		++count;
	}
	return count ? sum / count : (double)NAN;
}

/* ---- the closest pair that must keep apart ---------------------------------------------- */

/* Pairs that must keep `thickness` apart: distinct particles at least the thickness apart in
 * the folded start, which is the world's rest shape for self-collision (the library skips the
 * closer ones: mesh neighbours). Here every pair qualifies, as the grid spacing is 1.25 t. */
static bool must_keep_apart(const col_scene* s, uint32_t a, uint32_t b) {
	const double* p = s->fold_x0 + 3 * (size_t)a;
	const double* q = s->fold_x0 + 3 * (size_t)b;
	const double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
	const double t = s->sets[SET_FOLD].thickness;
	return dx * dx + dy * dy + dz * dz >= t * t;
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

static void set_free(col_set* t) {
	free(t->edges);
	free(t->rest);
	free(t->kinds);
	col_crossings_free(&t->cross);
	memset(t, 0, sizeof *t);
}

static double edge_length(const pbd_mesh* m, uint32_t k) {
	const pbd_vec3 a = m->positions[m->edges[2 * k]], b = m->positions[m->edges[2 * k + 1]];
	const double dx = (double)b.x - (double)a.x, dy = (double)b.y - (double)a.y, dz = (double)b.z - (double)a.z;
	return sqrt(dx * dx + dy * dy + dz * dz);
}

/* The set of `count` meshes made objects of one world in this order: their edges (rest lengths:
 * the mesh's edge_rest, else its lengths) and triangles, numbered as the world's particles. */
static bool set_build(col_set* t, const pbd_mesh* meshes, int count) {
	memset(t, 0, sizeof *t);
	uint32_t nt = 0;
	for (int m = 0; m < count; ++m) {
		t->np += meshes[m].vertex_count;
		t->ne += meshes[m].edge_count;
		nt += meshes[m].triangle_count;
	}
	t->edges = malloc(2 * (size_t)t->ne * sizeof *t->edges);
	t->rest = malloc((size_t)t->ne * sizeof *t->rest);
	t->kinds = malloc((size_t)t->ne * sizeof *t->kinds);
	uint32_t* tris = malloc((3 * (size_t)nt + 1) * sizeof *tris);
	if (!t->edges || !t->rest || !t->kinds || !tris) {
		free(tris);
		set_free(t);
		return false;
	}
	uint32_t first = 0, e = 0, f = 0;
	for (int m = 0; m < count; ++m) {
		const pbd_mesh* mesh = &meshes[m];
		for (uint32_t k = 0; k < mesh->edge_count; ++k, ++e) {
			t->edges[2 * e] = first + mesh->edges[2 * k];
			t->edges[2 * e + 1] = first + mesh->edges[2 * k + 1];
			t->rest[e] = mesh->edge_rest ? (double)mesh->edge_rest[k] : edge_length(mesh, k);
			t->kinds[e] = mesh->edge_kinds ? mesh->edge_kinds[k] : (uint8_t)PBD_EDGE_STRUCTURAL;
		}
		for (uint32_t k = 0; k < 3 * mesh->triangle_count; ++k) tris[f++] = first + mesh->triangles[k];
		first += mesh->vertex_count;
	}
	const bool ok = col_crossings_init(&t->cross, tris, nt, t->np);
	free(tris);
	if (!ok) set_free(t);
	return ok;
}

static col_shape plane_shape(void) {
	col_shape c;
	memset(&c, 0, sizeof c);
	c.kind = COL_SHAPE_PLANE; /* the floor y = 0 */
	c.normal[1] = 1;
	return c;
}

static col_shape sphere_shape(const double center[3], double radius) {
	col_shape c;
	memset(&c, 0, sizeof c);
	c.kind = COL_SHAPE_SPHERE;
	memcpy(c.center, center, sizeof c.center);
	c.radius = radius;
	return c;
}

static void pbd_scene_free(col_scene* s) {
	pbd_mesh_free(&s->cloth);
	s->fold.edge_rest = NULL; /* ours, freed below */
	pbd_mesh_free(&s->fold);
	pbd_mesh_free(&s->table);
	for (int k = 0; k < PILE_COUNT; ++k) pbd_mesh_free(&s->pile[k]);
	for (int k = 0; k < SET_COUNT; ++k) set_free(&s->sets[k]);
	free(s->fold_rest);
	free(s->masses);
	free(s->fold_x0);
	free(s->xyz);
	free(s->step_ms);
	free(s->head);
	free(s->next);
	free(s->cell);
	memset(s, 0, sizeof *s);
}

/* A square grid of n x n vertices, `size` m on a side, centred on (cx, y, cz) and turned by `turn`
 * radians about y; turn 0 spans x and z from the corner (cx - size/2, y, cz - size/2). */
static bool grid(uint32_t n, double size, double cx, double y, double cz, double turn, pbd_mesh* out) {
	const double c = cos(turn), s = sin(turn), h = 0.5 * size;
	pbd_grid_def g = pbd_grid_def_default();
	g.nx = n;
	g.ny = n;
	g.size_u = (pbd_real)size;
	g.size_v = (pbd_real)size;
	/* the corner (-h, -h) turned: x' = x cos + z sin, z' = -x sin + z cos */
	g.origin = (pbd_vec3){(pbd_real)(cx - h * c - h * s), (pbd_real)y, (pbd_real)(cz + h * s - h * c)};
	g.axis_u = (pbd_vec3){(pbd_real)c, 0, (pbd_real)-s};
	g.axis_v = (pbd_vec3){(pbd_real)s, 0, (pbd_real)c};
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

/* The thickness as the world stores it (pbd_real), so the checks and the library agree. */
static double thickness_of(double size, uint32_t n) {
	return (double)(pbd_real)(THICKNESS_SPACINGS * size / (double)(n - 1));
}

static int scene_build(col_scene* s, uint32_t n, int steps) {
	memset(s, 0, sizeof *s);
	s->n = n;
	s->pile_n = n / 2 < PILE_MIN_SIDE ? PILE_MIN_SIDE : n / 2;
	const double fold_t = thickness_of(1.0, n), pile_t = thickness_of(PILE_SIZE, s->pile_n);
	s->pile_gap = PILE_GAP > 1.1 * pile_t ? PILE_GAP : 1.1 * pile_t;
	const double lower_y = 0.5 * fold_t;
	bool made = grid(n, 1, 0, 0, 0.5, 0, &s->cloth) && grid(n, 1, 0, lower_y, 0.5, 0, &s->fold) &&
	            grid(n, 1, 0, TABLE_TOP + TABLE_DROP, 0, 0, &s->table);
	const double pile_low = 2 * PILE_RADIUS + PILE_CLEARANCE;
	for (int k = 0; k < PILE_COUNT && made; ++k)
		made = grid(s->pile_n, PILE_SIZE, 0, pile_low + k * s->pile_gap, 0, PILE_ANGLES_DEG[k] * COL_PI / 180.0,
		            &s->pile[k]);
	if (!made) {
		pbd_scene_free(s);
		return -1;
	}
	s->pins[0] = 0;
	s->pins[1] = n - 1;
	const uint32_t nv = s->cloth.vertex_count;
	const uint32_t pile_nv = PILE_COUNT * s->pile[0].vertex_count;
	const uint32_t np_max = nv > pile_nv ? nv : pile_nv;
	s->masses = malloc((size_t)nv * sizeof *s->masses);
	s->fold_rest = malloc((size_t)s->fold.edge_count * sizeof *s->fold_rest);
	s->fold_x0 = malloc(3 * (size_t)nv * sizeof *s->fold_x0);
	s->xyz = malloc(3 * (size_t)np_max * sizeof *s->xyz);
	s->step_ms = malloc((size_t)steps * sizeof *s->step_ms);
	s->table_size = 1;
	while (s->table_size < 2 * (size_t)nv) s->table_size *= 2;
	s->head = malloc(s->table_size * sizeof *s->head);
	s->next = malloc((size_t)nv * sizeof *s->next);
	s->cell = malloc(3 * (size_t)nv * sizeof *s->cell);
	if (!s->masses || !s->fold_rest || !s->fold_x0 || !s->xyz || !s->step_ms || !s->head || !s->next || !s->cell) {
		fprintf(stderr, COL_PREFIX "out of memory for N=%u\n", n);
		pbd_scene_free(s);
		return -1;
	}
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
	for (uint32_t k = 0; k < s->fold.edge_count; ++k) s->fold_rest[k] = (pbd_real)edge_length(&s->fold, k);
	s->fold.edge_rest = s->fold_rest;

	if (!set_build(&s->sets[SET_CLOTH], &s->cloth, 1) || !set_build(&s->sets[SET_FOLD], &s->fold, 1) ||
	    !set_build(&s->sets[SET_TABLE], &s->table, 1) || !set_build(&s->sets[SET_PILE], s->pile, PILE_COUNT)) {
		fprintf(stderr, COL_PREFIX "out of memory for N=%u\n", n);
		pbd_scene_free(s);
		return -1;
	}
	col_set* t = &s->sets[SET_CLOTH];
	t->shapes[0] = sphere_shape(SPHERE_CENTER, SPHERE_RADIUS);
	t->shape_count = 1;
	t->margin = SPHERE_MARGIN;
	t = &s->sets[SET_FOLD];
	t->shapes[0] = plane_shape();
	t->shape_count = 1;
	t->thickness = fold_t;
	t = &s->sets[SET_TABLE];
	t->shapes[0] = plane_shape();
	memset(&t->shapes[1], 0, sizeof t->shapes[1]);
	t->shapes[1].kind = COL_SHAPE_BOX;
	t->shapes[1].center[1] = TABLE_TOP - TABLE_HALF[1];
	memcpy(t->shapes[1].half, TABLE_HALF, sizeof TABLE_HALF);
	t->shape_count = 2;
	t->thickness = fold_t;
	t->friction_static = DRAPE_STATIC_FRICTION;
	t->friction_kinetic = DRAPE_KINETIC_FRICTION;
	t = &s->sets[SET_PILE];
	t->shapes[0] = plane_shape();
	t->shapes[1] = sphere_shape((const double[3]){0, PILE_RADIUS, 0}, PILE_RADIUS);
	t->shape_count = 2;
	t->thickness = pile_t;
	t->friction_static = DRAPE_STATIC_FRICTION;
	t->friction_kinetic = DRAPE_KINETIC_FRICTION;
	return 0;
}

/* ---- the watch after each step ----------------------------------------------------------- */

/* After step i (its time in step_ms), outside the timed call: notes the first step after which
 * the cloth had diverged (an edge stretched or squashed past COL_DIVERGED_STRAIN times its rest
 * length), and stops the run (true) at a non-finite position or once its steps have taken
 * cap_ms in all (0: no cap). */
static bool watch(const col_set* t, const double* xyz, int i, double step_ms, double cap_ms, double* spent,
                  col_run* out) {
	out->steps_run = i + 1;
	if (!all_finite(xyz, t->np)) {
		out->finite = false;
		out->stop = STOP_NONFINITE;
		return true;
	}
	if (out->diverged_at == 0 && !(max_edge_strain(t, xyz) <= COL_DIVERGED_STRAIN)) out->diverged_at = i + 1;
	*spent += step_ms;
	if (cap_ms > 0 && *spent > cap_ms) {
		out->stop = STOP_TIME;
		return true;
	}
	return false;
}

/* The counted rows' check after each step: edges through faces, particles inside colliders. */
static void count_step(col_set* t, const double* xyz, col_run* out) {
	const uint32_t crossed = col_count_crossings(&t->cross, xyz);
	if (crossed > out->crossings_max) out->crossings_max = crossed;
	if (crossed) out->crossing_steps++;
	const uint32_t inside = col_count_inside(xyz, t->np, t->shapes, t->shape_count);
	if (inside > out->inside_max) out->inside_max = inside;
}

/* The folded cloth's closest keep-apart pair after step i (s->xyz), from FOLD_SETTLE_STEPS on. */
static void fold_gap_step(col_scene* s, int i, col_run* out) {
	if (i < FOLD_SETTLE_STEPS) return;
	const col_set* t = &s->sets[SET_FOLD];
	const col_gap g = gap_hashed(s, s->xyz, t->np, 2.0 * t->thickness);
	if (g.closest < out->gap_worst) out->gap_worst = g.closest;
}

/* The same at the end of the run, with the pairs closer than 2 t, checked against brute force. */
static void fold_gap_end(col_scene* s, col_run* out) {
	const col_set* t = &s->sets[SET_FOLD];
	const double reach = 2.0 * t->thickness;
	out->gap_end = (double)NAN;
	if (!out->finite) {
		out->gap_worst = (double)NAN;
		return;
	}
	const col_gap g = gap_hashed(s, s->xyz, t->np, reach);
	out->gap_end = g.closest;
	out->pairs = g.within;
	if (s->n <= BRUTE_MAX_N) {
		const col_gap b = gap_brute(s, s->xyz, t->np, reach);
		if (b.within != g.within || !(b.closest == g.closest))
			fprintf(stderr,
			        COL_PREFIX "warning: N=%u: the hashed pair search found %u pairs, closest %.9g m; brute "
			                   "force %u, closest %.9g m\n",
			        s->n, g.within, g.closest, b.within, b.closest);
	}
}

/* ---- pbd runs --------------------------------------------------------------------------- */

static pbd_world_def world_def(const col_set* t, int threads) {
	pbd_world_def wd = pbd_world_def_default();
	wd.gravity = (pbd_vec3){0, (pbd_real)COL_GRAVITY, 0};
	wd.dt = (pbd_real)COL_DT;
	wd.substeps = COL_SUBSTEPS;
	wd.max_substeps = COL_MAX_SUBSTEPS;
	wd.iterations = COL_ITERATIONS;
	wd.hierarchy_levels = COL_HIERARCHY_LEVELS;
	wd.solver = PBD_SOLVER_GAUSS_SEIDEL;
	wd.formulation = PBD_FORMULATION_XPBD;
	wd.damping = 1;
	wd.max_speed = 0;
	wd.diagnostics = false;   /* no stats pass in the timed steps */
	wd.divergence_strain = 0; /* judged on the final state, as the throughput table */
	wd.particle_capacity = t->np;
	wd.distance_capacity = t->ne;
	wd.threads = threads;
	wd.log = log_stderr;
	return wd;
}

static pbd_soft_def cloth_def(const pbd_mesh* mesh, double size) {
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = mesh;
	bd.mass_mode = PBD_MASS_PER_PARTICLE;
	bd.mass = (pbd_real)(CLOTH_DENSITY * size * size / (double)mesh->vertex_count);
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

static pbd_vec3 v3_of(const double a[3]) { return (pbd_vec3){(pbd_real)a[0], (pbd_real)a[1], (pbd_real)a[2]}; }

static bool add_collider(pbd_world* w, const col_set* t, const col_shape* shape) {
	pbd_collider_def cd = pbd_collider_def_default();
	switch (shape->kind) {
	case COL_SHAPE_PLANE:
		cd.type = PBD_SHAPE_PLANE;
		cd.shape.plane.normal = v3_of(shape->normal);
		cd.shape.plane.offset = (pbd_real)shape->offset;
		break;
	case COL_SHAPE_SPHERE:
		cd.type = PBD_SHAPE_SPHERE;
		cd.shape.sphere.center = v3_of(shape->center);
		cd.shape.sphere.radius = (pbd_real)shape->radius;
		break;
	case COL_SHAPE_BOX:
		cd.type = PBD_SHAPE_BOX;
		cd.shape.box.half_extents = v3_of(shape->half);
		cd.pose.position = v3_of(shape->center);
		break;
	}
	cd.margin = (pbd_real)t->margin;
	cd.static_friction = (pbd_real)t->friction_static;
	cd.kinetic_friction = (pbd_real)t->friction_kinetic;
	return pbd_collider_is_valid(w, pbd_collider_create(w, &cd));
}

/* Adds a cloth and checks that its particles are where the set numbers them. */
static bool add_cloth(pbd_world* w, const pbd_soft_def* bd, uint32_t first) {
	pbd_soft_id id;
	pbd_soft_info info;
	return pbd_soft_create(w, bd, &id) == PBD_OK && pbd_soft_get_info(w, id, &info) == PBD_OK &&
	       info.first_particle == first && info.particle_count == bd->mesh->vertex_count;
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

/* The world of a pbd row: its colliders and cloths. */
static int make_world(col_scene* s, col_kind kind, pbd_world** out) {
	col_set* t = &s->sets[set_of(kind)];
	const pbd_world_def wd = world_def(t, row_threads[kind]);
	pbd_world* w = NULL;
	*out = NULL;
	if (pbd_world_create(&wd, &w) != PBD_OK) return fail(w, s->n, "pbd_world_create");
	for (uint32_t k = 0; k < t->shape_count; ++k)
		if (!add_collider(w, t, &t->shapes[k])) return fail(w, s->n, "pbd_collider_create");
	bool made = true;
	if (kind == ROW_SPHERE) {
		pbd_soft_def bd = cloth_def(&s->cloth, 1);
		bd.pinned = s->pins;
		bd.pinned_count = 2;
		made = add_cloth(w, &bd, 0);
	} else if (is_self(kind)) {
		pbd_soft_def bd = cloth_def(&s->fold, 1);
		bd.thickness = (pbd_real)t->thickness;
		bd.self_collision = kind != ROW_SELF_OFF;
		bd.edge_contacts = kind != ROW_SELF_VF;
		made = add_cloth(w, &bd, 0);
	} else if (set_of(kind) == SET_TABLE) {
		pbd_soft_def bd = cloth_def(&s->table, 1);
		bd.thickness = (pbd_real)t->thickness;
		bd.self_collision = true;
		made = add_cloth(w, &bd, 0);
	} else {
		/* Objects with a thickness keep it from each other: cloth-cloth collision. */
		uint32_t first = 0;
		for (int k = 0; k < PILE_COUNT && made; ++k) {
			pbd_soft_def bd = cloth_def(&s->pile[k], PILE_SIZE);
			bd.thickness = (pbd_real)t->thickness;
			bd.self_collision = true;
			made = add_cloth(w, &bd, first);
			first += s->pile[k].vertex_count;
		}
	}
	if (!made || pbd_world_particle_count(w) != t->np) return fail(w, s->n, "pbd_soft_create");
	*out = w;
	return 0;
}

static int run_pbd(col_scene* s, col_kind kind, int steps, double cap_ms, col_run* out) {
	pbd_world* w = NULL;
	if (make_world(s, kind, &w) != 0) return -1;
	col_set* t = &s->sets[set_of(kind)];
	const uint32_t np = t->np;
	out->penetration = -(double)INFINITY;
	out->gap_worst = (double)INFINITY;
	out->finite = true;
	double spent = 0;
	for (int i = 0; i < steps; ++i) {
		const double t0 = bench_now_ms();
		const pbd_status st = pbd_world_step(w);
		const double t1 = bench_now_ms();
		if (st != PBD_OK) return fail(w, s->n, "pbd_world_step");
		s->step_ms[i] = t1 - t0;
		if (pbd_world_step_substeps(w) > out->substeps_most) out->substeps_most = pbd_world_step_substeps(w);
		copy_positions(w, np, s->xyz);
		if (kind == ROW_SPHERE) {
			const double pen = sphere_penetration(s->xyz, np);
			if (!(pen <= out->penetration)) out->penetration = pen; /* NaN sticks */
		}
		const uint32_t contacts = pbd_world_get_contacts(w, NULL, 0);
		if (contacts > out->contacts_max) out->contacts_max = contacts;
		if (watch(t, s->xyz, i, s->step_ms[i], cap_ms, &spent, out)) break;
		if (is_counted(kind)) count_step(t, s->xyz, out);
		if (is_fold(kind)) fold_gap_step(s, i, out);
	}
	out->median_ms = median(s->step_ms, (size_t)out->steps_run);
	if (is_fold(kind)) fold_gap_end(s, out);
	out->strain_mean = mean_structural_strain(t, s->xyz);
	out->contacts = pbd_world_get_contacts(w, NULL, 0);
	finish_pbd(w, out);
	pbd_world_destroy(w);
	return 0;
}

/* ---- Bullet run ------------------------------------------------------------------------- */

#ifdef PBD_HAVE_BULLET
static int run_bullet_sphere(col_scene* s, int steps, double cap_ms, col_run* out) {
	const col_set* t = &s->sets[SET_CLOTH];
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
		if (watch(t, s->xyz, i, s->step_ms[i], cap_ms, &spent, out)) break;
	}
	out->median_ms = median(s->step_ms, (size_t)out->steps_run);
	out->contacts = pbd_bullet_cloth_contact_count(c);
	out->max_strain = max_edge_strain(t, s->xyz);
	out->strain_mean = mean_structural_strain(t, s->xyz);
	out->particles = nv;
	out->constraints = s->cloth.edge_count;
	out->hash = pbd_bullet_cloth_hash(c);
	out->warnings = 0;
	pbd_bullet_cloth_destroy(c);
	return 0;
}

/* The cloths of a row's scene as the set numbers them, and its colliders, for Bullet. */
static int bullet_scene_of(const col_scene* s, col_set_kind set, double* xyz, double* masses,
                           pbd_bullet_mesh meshes[PILE_COUNT], pbd_bullet_collider colliders[2]) {
	const pbd_mesh* source = set == SET_FOLD ? &s->fold : set == SET_TABLE ? &s->table : s->pile;
	const int count = set == SET_PILE ? PILE_COUNT : 1;
	const double size = set == SET_PILE ? PILE_SIZE : 1.0;
	size_t first = 0;
	for (int m = 0; m < count; ++m) {
		const pbd_mesh* mesh = &source[m];
		/* pbd's mass per particle (cloth_def), in double */
		const double mass = (double)(pbd_real)(CLOTH_DENSITY * size * size / (double)mesh->vertex_count);
		for (uint32_t i = 0; i < mesh->vertex_count; ++i) {
			xyz[3 * (first + i)] = (double)mesh->positions[i].x;
			xyz[3 * (first + i) + 1] = (double)mesh->positions[i].y;
			xyz[3 * (first + i) + 2] = (double)mesh->positions[i].z;
			masses[first + i] = mass;
		}
		pbd_bullet_mesh* b = &meshes[m];
		memset(b, 0, sizeof *b);
		b->node_count = mesh->vertex_count;
		b->positions = xyz + 3 * first;
		b->masses = masses + first;
		b->link_count = mesh->edge_count;
		b->links = mesh->edges;
		b->face_count = mesh->triangle_count;
		b->faces = mesh->triangles;
		first += mesh->vertex_count;
	}
	const col_set* t = &s->sets[set];
	for (uint32_t k = 0; k < t->shape_count; ++k) {
		const col_shape* shape = &t->shapes[k];
		pbd_bullet_collider* c = &colliders[k];
		memset(c, 0, sizeof *c);
		memcpy(c->center, shape->center, sizeof c->center);
		memcpy(c->half, shape->half, sizeof c->half);
		c->radius = shape->radius;
		c->height = shape->offset; /* the floor: normal +y */
		c->shape = shape->kind == COL_SHAPE_PLANE    ? PBD_BULLET_GROUND
		           : shape->kind == COL_SHAPE_SPHERE ? PBD_BULLET_SPHERE
		                                             : PBD_BULLET_BOX;
	}
	return count;
}

/* A Bullet row of the folded cloth, the table or the pile: the same meshes, masses, colliders,
 * step and checks as pbd's row. */
static int run_bullet_scene(col_scene* s, col_kind kind, int steps, double cap_ms, col_run* out) {
	col_set* t = &s->sets[set_of(kind)];
	const uint32_t np = t->np;
	double* xyz = malloc(3 * (size_t)np * sizeof *xyz);
	double* masses = malloc((size_t)np * sizeof *masses);
	if (!xyz || !masses) {
		free(xyz);
		free(masses);
		fprintf(stderr, COL_PREFIX "out of memory\n");
		return -1;
	}
	pbd_bullet_mesh meshes[PILE_COUNT];
	pbd_bullet_collider colliders[2];
	pbd_bullet_scene_desc d;
	memset(&d, 0, sizeof d);
	d.mesh_count = (uint32_t)bullet_scene_of(s, set_of(kind), xyz, masses, meshes, colliders);
	d.meshes = meshes;
	d.collider_count = t->shape_count;
	d.colliders = colliders;
	d.iterations = BULLET_ITERATIONS;
	d.gravity_y = COL_GRAVITY;
	d.margin = BULLET_MARGIN_SPACINGS * t->thickness / THICKNESS_SPACINGS;
	d.friction = t->friction_kinetic;
	d.contact_hardness = BULLET_CONTACT_HARDNESS;
	d.voxel = BULLET_VOXEL;
	d.self_collision = 1;
	char err[256] = "";
	pbd_bullet_scene* c = pbd_bullet_scene_create(&d, err, sizeof err);
	free(xyz);
	free(masses);
	if (!c) {
		fprintf(stderr, COL_PREFIX "collision N=%u: %s\n", s->n, err);
		return -1;
	}
	out->penetration = -(double)INFINITY;
	out->gap_worst = (double)INFINITY;
	out->finite = true;
	double spent = 0;
	for (int i = 0; i < steps; ++i) {
		const double t0 = bench_now_ms();
		pbd_bullet_scene_step(c, COL_DT);
		const double t1 = bench_now_ms();
		s->step_ms[i] = t1 - t0;
		pbd_bullet_scene_get_positions(c, s->xyz);
		const uint32_t contacts = pbd_bullet_scene_contact_count(c);
		if (contacts > out->contacts_max) out->contacts_max = contacts;
		if (watch(t, s->xyz, i, s->step_ms[i], cap_ms, &spent, out)) break;
		count_step(t, s->xyz, out);
		if (is_fold(kind)) fold_gap_step(s, i, out);
	}
	out->median_ms = median(s->step_ms, (size_t)out->steps_run);
	if (is_fold(kind)) fold_gap_end(s, out);
	out->contacts = pbd_bullet_scene_contact_count(c);
	out->max_strain = max_edge_strain(t, s->xyz);
	out->strain_mean = mean_structural_strain(t, s->xyz);
	out->particles = np;
	out->constraints = t->ne;
	out->hash = pbd_bullet_scene_hash(c);
	out->warnings = 0;
	pbd_bullet_scene_destroy(c);
	return 0;
}
#endif

/* ---- rows ------------------------------------------------------------------------------- */

static void make_row(col_row* r, col_kind kind, const col_scene* s, const col_run* runs, int count, double* ms) {
	memset(r, 0, sizeof *r);
	r->kind = kind;
	r->name = row_names[kind];
	r->engine = is_bullet(kind) ? "bullet" : "pbd";
	r->n = s->n;
	r->particles = runs[0].particles;
	r->constraints = runs[0].constraints;
	r->threads = row_threads[kind];
	r->repeats = count;
	if (is_bullet(kind)) {
		r->substeps = 1;
		r->iterations = BULLET_ITERATIONS;
		snprintf(r->setting, sizeof r->setting, kind == ROW_SPHERE_BULLET ? "%d it" : "%d it CL", r->iterations);
	} else {
		r->substeps = COL_SUBSTEPS;
		r->iterations = COL_ITERATIONS;
		r->hierarchy_levels = COL_HIERARCHY_LEVELS;
		int most = 0;
		for (int k = 0; k < count; ++k)
			if (runs[k].substeps_most > most) most = runs[k].substeps_most;
		if (most > r->substeps)
			snprintf(r->setting, sizeof r->setting, "hier %d-%dx%d", r->substeps, most, r->iterations);
		else
			snprintf(r->setting, sizeof r->setting, "hier %dx%d", r->substeps, r->iterations);
	}
	const double thickness = s->sets[set_of(kind)].thickness;
	r->thickness = thickness > 0 ? thickness : (double)NAN;
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
		if (runs[i].crossings_max > r->crossings_max) r->crossings_max = runs[i].crossings_max;
		if (runs[i].crossing_steps > r->crossing_steps) r->crossing_steps = runs[i].crossing_steps;
		if (runs[i].inside_max > r->inside_max) r->inside_max = runs[i].inside_max;
	}
	r->ms = median(ms, (size_t)count);
	r->ms_min = ms_min;
	r->contacts = runs[0].contacts;
	r->contacts_max = runs[0].contacts_max;
	r->pairs = runs[0].pairs;
	r->strain_mean = runs[0].strain_mean;
	r->max_strain = runs[0].max_strain;
	r->hash = runs[0].hash;
	r->hash_stable = stable;
	r->ratio = (double)NAN;
	r->ratio_kind = "";
	const bool sphere = kind == ROW_SPHERE || kind == ROW_SPHERE_BULLET;
	if (!sphere) r->penetration = (double)NAN;
	if (!is_fold(kind)) {
		r->gap_end = (double)NAN;
		r->gap_worst = (double)NAN;
	}
	if (nonfinite)
		snprintf(r->status, sizeof r->status, "non-finite@%d", r->steps_run);
	else if (r->diverged_at)
		snprintf(r->status, sizeof r->status, "diverged@%d", r->diverged_at);
	else if (!finite || warnings || !(r->max_strain <= COL_DIVERGED_STRAIN))
		snprintf(r->status, sizeof r->status, "diverged");
	else if (sphere && !(r->penetration <= (kind == ROW_SPHERE ? PBD_PENETRATION_BOUND : BULLET_PENETRATION_BOUND)))
		snprintf(r->status, sizeof r->status, "penetrates");
	else if (is_counted(kind) && (r->crossings_max || r->inside_max))
		snprintf(r->status, sizeof r->status, "penetrates");
	else if (is_self(kind) && !(r->gap_end >= FOLD_GAP_BOUND * thickness))
		snprintf(r->status, sizeof r->status, "interpenetrates");
	else if (is_counted(kind) && !(r->strain_mean <= COL_UNCONVERGED_STRAIN))
		snprintf(r->status, sizeof r->status, "unconverged");
	else
		snprintf(r->status, sizeof r->status, "ok");
}

static void print_table_header(void) {
	printf("%-8s %-6s %5s %3s %9s %11s %-10s %5s %9s %9s %8s %8s %8s %10s %9s %9s %11s %6s %9s %10s  %-16s %-15s %s\n",
	       "row", "engine", "N", "thr", "particles", "constraints", "setting", "steps", "ms/step", "(min)", "contacts",
	       "(max)", "pairs<2t", "max pen[m]", "gap/t end", "gap/t min", "crossed(st)", "inside", "mean str",
	       "max strain", "final hash", "status", "ratio");
}

static void fmt_gap(char* out, size_t size, double gap, double thickness) {
	if (isnan(gap))
		snprintf(out, size, "-");
	else if (isinf(gap))
		snprintf(out, size, ">2");
	else
		snprintf(out, size, "%.3f", gap / thickness);
}

static void print_row(const col_row* r) {
	char pen[24] = "-", gap_end[24], gap_min[24], pairs[16] = "-", ratio[32] = "-", crossed[32] = "-", inside[16] = "-";
	if (!isnan(r->penetration)) snprintf(pen, sizeof pen, "%.2e", r->penetration);
	fmt_gap(gap_end, sizeof gap_end, r->gap_end, r->thickness);
	fmt_gap(gap_min, sizeof gap_min, r->gap_worst, r->thickness);
	if (is_fold(r->kind)) snprintf(pairs, sizeof pairs, "%u", r->pairs);
	if (is_counted(r->kind)) {
		snprintf(crossed, sizeof crossed, "%u(%d)", r->crossings_max, r->crossing_steps);
		snprintf(inside, sizeof inside, "%u", r->inside_max);
	}
	if (isfinite(r->ratio)) snprintf(ratio, sizeof ratio, "%.2f %s", r->ratio, r->ratio_kind);
	printf("%-8s %-6s %5u %3d %9u %11u %-10s %5d %9.3f %9.3f %8u %8u %8s %10s %9s %9s %11s %6s %9.5f %10.5f  "
	       "%016" PRIx64 "%c %-15s %s\n",
	       r->name, r->engine, r->n, r->threads, r->particles, r->constraints, r->setting, r->steps_run, r->ms,
	       r->ms_min, r->contacts, r->contacts_max, pairs, pen, gap_end, gap_min, crossed, inside, r->strain_mean,
	       r->max_strain, r->hash, r->hash_stable ? ' ' : '!', r->status, ratio);
	fflush(stdout);
}

static void csv_header(FILE* f) {
	fputs("row,engine,n,threads,particles,constraints,substeps,iterations,hierarchy_levels,steps,steps_run,repeats,"
	      "ms_per_step,ms_per_step_min,contacts,contacts_max,close_pairs,max_penetration_m,margin_m,thickness_m,"
	      "min_gap_end_m,min_gap_worst_m,crossings_max,crossing_steps,inside_max,mean_structural_strain,max_strain,"
	      "hash,hash_stable,status,diverged_at_step,ratio,ratio_kind\n",
	      f);
}

static void csv_number(FILE* f, double v) {
	if (!isnan(v)) fprintf(f, "%.6g", v);
	fputc(',', f);
}

static void csv_row(FILE* f, const col_row* r, int steps) {
	const bool sphere = r->kind == ROW_SPHERE || r->kind == ROW_SPHERE_BULLET;
	fprintf(f, "%s,%s,%u,%d,%u,%u,%d,%d,%d,%d,%d,%d,%.6f,%.6f,%u,%u,", r->name, r->engine, r->n, r->threads,
	        r->particles, r->constraints, r->substeps, r->iterations, r->hierarchy_levels, steps, r->steps_run,
	        r->repeats, r->ms, r->ms_min, r->contacts, r->contacts_max);
	if (is_fold(r->kind)) fprintf(f, "%u", r->pairs);
	fputc(',', f);
	csv_number(f, r->penetration);
	csv_number(f, sphere ? SPHERE_MARGIN : (double)NAN);
	csv_number(f, r->thickness);
	csv_number(f, r->gap_end); /* inf: no keep-apart pair within 2 thickness */
	csv_number(f, r->gap_worst);
	if (is_counted(r->kind))
		fprintf(f, "%u,%d,%u,", r->crossings_max, r->crossing_steps, r->inside_max);
	else
		fputs(",,,", f);
	csv_number(f, r->strain_mean);
	fprintf(f, "%.8g,%016" PRIx64 ",%s,%s,", r->max_strain, r->hash, r->hash_stable ? "true" : "false", r->status);
	if (r->diverged_at) fprintf(f, "%d", r->diverged_at);
	fputc(',', f);
	if (isfinite(r->ratio)) fprintf(f, "%.4f", r->ratio);
	fprintf(f, ",%s\n", r->ratio_kind);
}

/* ---- main ------------------------------------------------------------------------------- */

static void print_scenes(int steps, int repeat, bool bullet) {
	printf("collision: %d steps of 1/60 s from rest, gravity %.2f m/s^2, no damping; pbd: Gauss-Seidel XPBD,\n"
	       "%d substeps x %d iterations with the hierarchical solve (%d levels: the cost-to-quality table's\n"
	       "setting for a taut cloth), compliance 0 on structural + shear edges, %.0f kg/m^2 cloths; up to %d\n"
	       "substeps in a step whose fastest particle would move more than a thickness per substep\n"
	       "(max_substeps; setting hier A-BxI: B the most a step ran)\n",
	       steps, COL_GRAVITY, COL_SUBSTEPS, COL_ITERATIONS, COL_HIERARCHY_LEVELS, CLOTH_DENSITY, COL_MAX_SUBSTEPS);
	printf("  sphere   the hanging cloth of the throughput table (1 m, N x N, corners 0 and N-1 pinned) falls\n"
	       "           onto a static sphere, radius %.2f m, centre (%.2f, %.2f, %.2f): %.2f m below the pins' line\n"
	       "           and %.2f m out; margin %.3f m, frictionless.\n",
	       SPHERE_RADIUS, SPHERE_CENTER[0], SPHERE_CENTER[1], SPHERE_CENTER[2], -SPHERE_CENTER[1], SPHERE_CENTER[2],
	       SPHERE_MARGIN);
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
	       "           thickness t = %.1f grid spacings, self_collision on.\n",
	       FOLD_HEIGHT, FOLD_HEIGHT, THICKNESS_SPACINGS);
	printf("  self-vf  the same with self_collision but edge_contacts off (particle pairs and vertex-face\n"
	       "           contacts only): the cost of the edge-edge contacts.\n");
	printf("  self-off the same without self_collision (same thickness against the floor): the cost of\n"
	       "           self-collision, and the control that the checks see a cloth fall through itself.\n");
	printf("           gap/t = the closest distance between particles that must keep apart (their distance\n"
	       "           in the folded start >= t, as the library's rule) over t: at the end (ok when >= %.2f,\n"
	       "           else interpenetrates) and the least over the steps from 0.1 s on (shown only);\n"
	       "           >2: no such pair within 2t. pairs<2t: such pairs closer than 2t at the end, counted by\n"
	       "           the bench from the positions; checked against brute force for N <= %d.\n",
	       FOLD_GAP_BOUND, BRUTE_MAX_N);
	printf("  table    the cloth flat %.2f m above a table (a box %.2f x %.2f x %.2f m, top at y = %.2f, on the\n"
	       "           floor plane y = 0), centred, falls on it and drapes over its edges; thickness t = %.1f grid\n"
	       "           spacings, self_collision on; the box and the floor have friction %.1f (static), %.1f.\n",
	       TABLE_DROP, 2 * TABLE_HALF[0], 2 * TABLE_HALF[1], 2 * TABLE_HALF[2], TABLE_TOP, THICKNESS_SPACINGS,
	       DRAPE_STATIC_FRICTION, DRAPE_KINETIC_FRICTION);
	printf("  pile     %d cloths of (N/2) x (N/2) (at least %d), %.1f m square, turned by 0, 20, 40, 60 degrees\n"
	       "           about y, stacked %.0f cm apart (1.1 t where that is more) above a sphere of radius %.2f m\n"
	       "           resting on the floor, the lowest %.2f m above its top; thickness t = %.1f of their spacing,\n"
	       "           self_collision on, so cloth-cloth contacts too; friction as the table's.\n",
	       PILE_COUNT, PILE_MIN_SIDE, PILE_SIZE, 100 * PILE_GAP, PILE_RADIUS, PILE_CLEARANCE, THICKNESS_SPACINGS);
	printf("           table and pile run on 1 and 2 threads (thr; the state must not depend on it).\n");
	if (bullet)
		printf("  bullet   self, table, pile: the same meshes (nodes, links, faces), masses and colliders as\n"
		       "           pbd's (btRigidBody of mass 0: btBoxShape table, btSphereShape, the floor a large\n"
		       "           btBoxShape), %d iterations, 1 step of 1/60 s, one thread (Bullet steps soft bodies\n"
		       "           serially). Self-collision: one cluster per triangle (generateClusters(0)), CL_SS between\n"
		       "           the cloths and, within each, the collider CL_SELF selects; soft margin %.1f spacings\n"
		       "           (clusters keep %.1f apart), SDF_RS with kKHR %.0f on a %.0f cm voxel, kDF = the kinetic\n"
		       "           friction (also between cloths). contacts = m_rcontacts + cluster contacts (m_joints).\n"
		       "           gap/t of its self row is shown only.\n",
		       BULLET_ITERATIONS, BULLET_MARGIN_SPACINGS, 2 * BULLET_MARGIN_SPACINGS, BULLET_CONTACT_HARDNESS,
		       100 * BULLET_VOXEL);
	printf("  crossed  rows self to pile, after every step: the most mesh edges through a face they share no\n"
	       "           vertex with (all cloths as one mesh) and, in brackets, the steps with any; inside = the\n"
	       "           most particles deeper than %.0e m inside a collider's shape (not its margin). Either:\n"
	       "           penetrates. mean str = the mean structural strain at the end; above %.0f %%: unconverged.\n",
	       COL_INSIDE_TOLERANCE, 100 * COL_UNCONVERGED_STRAIN);
	printf("  ratio    sphere pbd row: pbd ms / bullet ms; self row: self ms / self-off ms; self-vf row:\n"
	       "           self-vf ms / self-off ms; 2-thread rows: their ms / the 1-thread row's; bullet's self,\n"
	       "           table and pile rows: pbd's 1-thread ms / bullet ms.\n");
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
	double ratio_bt[MAX_SIZES], ratio_self[MAX_SIZES], ratio_edges[MAX_SIZES], ratio_table[MAX_SIZES],
	    ratio_pile[MAX_SIZES], ratio_scene_bt[3][MAX_SIZES];
	int bad = 0, rc = 0;
	for (int si = 0; si < size_count && rc == 0; ++si) {
		const uint32_t n = sizes[si];
		ratio_bt[si] = (double)NAN;
		ratio_self[si] = (double)NAN;
		ratio_edges[si] = (double)NAN;
		ratio_table[si] = (double)NAN;
		ratio_pile[si] = (double)NAN;
		for (int k = 0; k < 3; ++k) ratio_scene_bt[k][si] = (double)NAN;
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
				if (is_bullet((col_kind)k)) {
#ifdef PBD_HAVE_BULLET
					if (progress && bullet)
						fprintf(stderr, "  N=%u %s (bullet) run %d/%d          \r", n, row_names[k], r + 1, repeats);
					if (bullet)
						rc = k == ROW_SPHERE_BULLET ? run_bullet_sphere(&s, row_steps, cap_ms, run)
						                            : run_bullet_scene(&s, (col_kind)k, row_steps, cap_ms, run);
#endif
					continue;
				}
				if (progress)
					fprintf(stderr, "  N=%u %s (%d thr) run %d/%d          \r", n, row_names[k], row_threads[k], r + 1,
					        repeats);
				rc = run_pbd(&s, (col_kind)k, row_steps, cap_ms, run);
			}
		if (progress) fprintf(stderr, "%60s\r", "");
		if (rc == 0) {
			col_row rows[ROW_COUNT];
			for (int k = 0; k < ROW_COUNT; ++k)
				make_row(&rows[k], (col_kind)k, &s, &runs[(size_t)k * (size_t)repeats], repeats, ms);
			if (bullet) {
				rows[ROW_SPHERE].ratio = rows[ROW_SPHERE].ms / rows[ROW_SPHERE_BULLET].ms;
				rows[ROW_SPHERE].ratio_kind = "pbd/bt";
				ratio_bt[si] = rows[ROW_SPHERE].ratio;
				/* The self-colliding scenes: pbd's one-thread row against Bullet's (one thread). */
				static const col_kind pairs[3][2] = {
				    {ROW_SELF, ROW_SELF_BULLET}, {ROW_TABLE, ROW_TABLE_BULLET}, {ROW_PILE, ROW_PILE_BULLET}};
				for (int k = 0; k < 3; ++k) {
					col_row* peer = &rows[pairs[k][1]];
					peer->ratio = rows[pairs[k][0]].ms / peer->ms;
					peer->ratio_kind = "pbd/bt";
					ratio_scene_bt[k][si] = peer->ratio;
				}
			}
			rows[ROW_SELF].ratio = rows[ROW_SELF].ms / rows[ROW_SELF_OFF].ms;
			rows[ROW_SELF].ratio_kind = "self/off";
			ratio_self[si] = rows[ROW_SELF].ratio;
			rows[ROW_SELF_VF].ratio = rows[ROW_SELF_VF].ms / rows[ROW_SELF_OFF].ms;
			rows[ROW_SELF_VF].ratio_kind = "vf/off";
			ratio_edges[si] = rows[ROW_SELF].ms / rows[ROW_SELF_VF].ms;
			static const col_kind threaded[2][2] = {{ROW_TABLE, ROW_TABLE_2}, {ROW_PILE, ROW_PILE_2}};
			for (int k = 0; k < 2; ++k) {
				col_row* one = &rows[threaded[k][0]];
				col_row* two = &rows[threaded[k][1]];
				two->ratio = two->ms / one->ms;
				two->ratio_kind = "2t/1t";
				(k == 0 ? ratio_table : ratio_pile)[si] = two->ratio;
				/* The library promises the same state on any number of threads. */
				if (two->hash != one->hash && two->steps_run == one->steps_run) {
					fprintf(stderr,
					        COL_PREFIX "N=%u %s: the state after %d steps differs between 1 and 2 threads "
					                   "(%016" PRIx64 " and %016" PRIx64 ")\n",
					        n, one->name, one->steps_run, one->hash, two->hash);
					++bad;
				}
			}
			for (int k = 0; k < ROW_COUNT; ++k) {
				if (is_bullet((col_kind)k) && !bullet) continue;
				const col_row* row = &rows[k];
				if (!row->hash_stable) ++bad;
				print_row(row);
				if (csv) csv_row(csv, row, steps);
			}
		}
		free(runs);
		free(ms);
		pbd_scene_free(&s);
	}
	if (rc != 0) return -1;
	if (bullet) {
		static const char* const scenes[3] = {"self", "table", "pile"};
		printf("\npbd ms / Bullet ms (sphere):");
		for (int i = 0; i < size_count; ++i) printf("  N=%u %.2f", sizes[i], ratio_bt[i]);
		for (int k = 0; k < 3; ++k) {
			printf("\npbd ms / Bullet ms (%s):%*s", scenes[k], 6 - (int)strlen(scenes[k]), "");
			for (int i = 0; i < size_count; ++i) printf("  N=%u %.2f", sizes[i], ratio_scene_bt[k][i]);
		}
	}
	printf("\nself ms / self-off ms:       ");
	for (int i = 0; i < size_count; ++i) printf("  N=%u %.2f", sizes[i], ratio_self[i]);
	printf("\nself ms / self-vf ms:        ");
	for (int i = 0; i < size_count; ++i) printf("  N=%u %.2f", sizes[i], ratio_edges[i]);
	printf("\ntable 2 threads / 1 thread:  ");
	for (int i = 0; i < size_count; ++i) printf("  N=%u %.2f", sizes[i], ratio_table[i]);
	printf("\npile 2 threads / 1 thread:   ");
	for (int i = 0; i < size_count; ++i) printf("  N=%u %.2f", sizes[i], ratio_pile[i]);
	printf("\n");
	if (bad)
		printf("\n%d row(s) differed between repeats ('!' after the hash) or between thread counts: the runs are not "
		       "deterministic\n",
		       bad);
	return bad;
}
