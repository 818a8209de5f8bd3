/* Rigid-body rows of the benchmark (public API only).
 *
 * Three scenes of dynamic bodies at 60 Hz, each in pbd on 1 and on 2 threads and, when built with
 * it, in Bullet's btDiscreteDynamicsWorld (bench/bullet_rigid.cpp) on one thread, once stepped as
 * Bullet is usually run and once in pbd's substeps:
 *   stack    boxes of 0.5 m edge stacked flush on a floor plane;
 *   pyramid  a pyramid of the same boxes in the xy plane, n on the floor, one on top, 5 mm apart
 *            side by side so that they start without touching sideways;
 *   pile     boxes, balls and capsules in a fixed pattern on a grid above a box made of five
 *            static boxes (floor and four walls), poured into it.
 * The large table (bench_rigid_large) holds the scenes whose Box3D figures are known, at Box3D's
 * 4 substeps as well as pbd's 20 and Bullet once per frame only:
 *   pyramid  100 layers (5050 boxes);
 *   hulls    5000 convex hulls of one rock, each turned and scaled, poured into a larger box;
 *   grid     100 x 100 balls without colliders, each held to its neighbours by ball joints, two
 *            corners of one side held to the world, hanging under gravity.
 * Density 1000 kg/m^3 and friction 0.5 on every shape, restitution 0. pbd runs the setting of
 * tests/collision/test_rigid_contact.c (20 substeps x 1 iteration, Gauss-Seidel); Bullet its
 * default 10 solver iterations in one internal step of 1/60 s, and again in 20 internal steps of
 * 1/1200 s. Both engines get the same masses and principal moments (pbd_collider_mass_properties).
 *
 * Measured per row: ms per step (mean over the steps; the checks read the state outside the
 * timed calls), the drift of the top box from its start, the deepest penetration of any contact
 * over all steps, for the piles the bodies that ended outside the box and for the grid the fall of
 * its middle and the largest gap of a joint over all steps. docs/BENCHMARKS.md,
 * "Rigid bodies", has the measured table. */
#define _POSIX_C_SOURCE 200809L

#include "rigid.h"

#include "cloth.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pbd/pbd.h"

#ifdef PBD_HAVE_BULLET
#include "bullet_rigid.h"
#endif

#define RB_PREFIX "pbd bench: "

static const double RB_DT = 1.0 / 60.0;
static const double RB_GRAVITY = -9.81;
static const double RB_DENSITY = 1000.0; /* kg/m^3 */
static const double RB_FRICTION = 0.5;
static const double RB_PI = 3.14159265358979323846;
static const double RB_GOLDEN = 0.6180339887498949;      /* the golden ratio's fractional part */
static const double RB_GOLDEN_ANGLE = 2.399963229728653; /* rad */
/* pbd: the setting of the rigid-contact tests (docs/collision.md, "Bodies against bodies"). */
enum { PBD_SUBSTEPS = 20, PBD_ITERATIONS = 1, BULLET_ITERATIONS = 10 };
/* pbd at Box3D's setting in the large table: its 4 substeps, one iteration each, since Box3D's
 * soft step applies each substep's constraints once with their position bias (and once more
 * without it, to relax the velocities). */
enum { BOX3D_SUBSTEPS = 4, BOX3D_ITERATIONS = 1 };
/* pbd's soft step: 8 substeps of one iteration (its contacts spring at 60 Hz, an eighth of the
 * substep rate); at Box3D's 4 (30 Hz) the stack of twenty sags 5 cm and rocks down. */
enum { SOFT_SUBSTEPS = 8, SOFT_ITERATIONS = 1 };
/* pbd's AVBD: 4 substeps of 4 sweeps; at 4 x 2 and 8 x 1 the stack of twenty comes apart, and at
 * 1 x 10 it sinks 3 cm. */
enum { AVBD_SUBSTEPS = 4, AVBD_ITERATIONS = 4 };

/* The stack and the pyramid. */
static const double BOX_EDGE = 0.5;
static const double PYRAMID_GAP = 0.005;
/* Top drift below this is `ok`; from half an edge on, or when a box fell more than half an edge
 * below its start, the stack or pyramid has `collapsed`. */
static const double DRIFT_OK = 0.01;

/* The piles: a row x row grid of bodies per layer, PILE_SPACING apart, the lowest layer
 * PILE_BASE up; the box's inside is 2 inner_half square with walls PILE_WALL_HEIGHT high and
 * PILE_WALL thick (PILE_ROW and PILE_INNER_HALF for the pile, HULLS_ROW and HULLS_INNER_HALF for
 * the hulls). Every body fits in a ball of radius 0.175 m < PILE_SPACING / 2, so none starts
 * touching another, and the grid's outer bodies start inside the walls' lines. */
enum { PILE_ROW = 10, HULLS_ROW = 20 };
static const double PILE_SPACING = 0.4;
static const double PILE_BASE = 1.6;
static const double PILE_INNER_HALF = 2.0;
static const double HULLS_INNER_HALF = 4.0;
static const double PILE_WALL_HEIGHT = 1.2;
static const double PILE_WALL = 0.2;
static const double PILE_BOX_HALF[3] = {0.12, 0.08, 0.1};
static const double PILE_BALL_RADIUS = 0.1;
static const double PILE_CAPSULE_RADIUS = 0.07;
static const double PILE_CAPSULE_HALF_HEIGHT = 0.1;

/* The hulls' rock: HULL_POINTS directions of a spherical Fibonacci lattice, each at a distance
 * between 1 - HULL_BUMP and 1 + HULL_BUMP times HULL_RADIUS that a sine of its index sets, the
 * whole squashed by HULL_AXES; each body scales it by HULL_SCALE_MIN plus up to HULL_SCALE_SPREAD. */
enum { HULL_POINTS = 16 };
static const double HULL_RADIUS = 0.11;
static const double HULL_BUMP = 0.25;
static const double HULL_AXES[3] = {1.0, 0.8, 0.9};
static const double HULL_SCALE_MIN = 0.8;
static const double HULL_SCALE_SPREAD = 0.4;

/* The grid: balls GRID_SPACING apart, the joints' anchors halfway between them. A grid whose
 * joints gaped wider than GRID_JOINT_OK at any step has `parted`. */
static const double GRID_SPACING = 1.0;
static const double GRID_BALL_RADIUS = 0.25;
static const double GRID_JOINT_OK = 0.05;

typedef enum rb_shape { RB_BOX, RB_SPHERE, RB_CAPSULE, RB_HULL } rb_shape;

/* One body of a scene, as both engines build it. */
typedef struct rb_body {
	rb_shape shape;
	double half[3];     /* box, m */
	double radius;      /* sphere, capsule, m */
	double half_height; /* capsule, m */
	double scale;       /* hull: the scene's rock times this */
	double position[3];
	double rotation[4]; /* x, y, z, w */
	bool dynamic;
	bool no_contact;          /* touches nothing: no collider in pbd, a collision mask of 0 in Bullet */
	pbd_mass_properties mass; /* dynamic only */
} rb_body;

/* The world side of a joint. */
static const uint32_t RB_WORLD = UINT32_MAX;

/* A ball joint: the two anchors held together. */
typedef struct rb_joint {
	uint32_t a, b;                   /* bodies, or RB_WORLD */
	double anchor_a[3], anchor_b[3]; /* in each side's frame (the world's for the world), m */
} rb_joint;

typedef enum rb_scene_kind {
	SCENE_STACK,
	SCENE_PYRAMID,
	SCENE_PILE,
	SCENE_HULLS,
	SCENE_GRID,
	SCENE_COUNT
} rb_scene_kind;

static const char* const scene_names[SCENE_COUNT] = {"stack", "pyramid", "pile", "hulls", "grid"};

/* The dynamic bodies come first, then the static ones (the piles' floor and walls). */
typedef struct rb_scene {
	rb_scene_kind kind;
	uint32_t size; /* boxes of the stack, layers of the pyramid, bodies of a pile, balls along the grid */
	rb_body* bodies;
	uint32_t count, dynamic_count;
	bool floor;                   /* the plane y = 0 */
	uint32_t top;                 /* the stack's and the pyramid's top box */
	uint32_t row;                 /* pile, hulls: bodies along a side of a layer */
	double inner_half;            /* pile, hulls: half the box's inside, m */
	double hull[3 * HULL_POINTS]; /* hulls: the rock in its principal frame (centre of mass at 0) */
	rb_joint* joints;
	uint32_t joint_count;
	uint32_t middle; /* the grid's middle ball */
	double* xyz;     /* scratch: the dynamic bodies' centres */
} rb_scene;

/* A scene of a table at its full size and at its smoke-test size (rb_scene.size). */
typedef struct rb_spec {
	rb_scene_kind kind;
	uint32_t size, small;
} rb_spec;

/* Each pbd engine on one thread is followed by its twin on two. */
typedef enum rb_engine {
	ENGINE_PBD_1,
	ENGINE_PBD_2,
	ENGINE_BULLET,
	ENGINE_BULLET_SUB,
	ENGINE_BOX3D_1,
	ENGINE_BOX3D_2,
	ENGINE_SOFT_1, /* pbd's soft step (PBD_BODY_SOLVER_SOFT_STEP) at Box3D's setting */
	ENGINE_SOFT_2,
	ENGINE_AVBD_1, /* pbd's augmented vertex block descent (PBD_BODY_SOLVER_AVBD) */
	ENGINE_AVBD_2,
	ENGINE_COUNT
} rb_engine;

static bool is_bullet(rb_engine e) { return e == ENGINE_BULLET || e == ENGINE_BULLET_SUB; }

static bool is_soft(rb_engine e) { return e == ENGINE_SOFT_1 || e == ENGINE_SOFT_2; }

static bool is_avbd(rb_engine e) { return e == ENGINE_AVBD_1 || e == ENGINE_AVBD_2; }

static int engine_threads(rb_engine e) {
	return e == ENGINE_PBD_2 || e == ENGINE_BOX3D_2 || e == ENGINE_SOFT_2 || e == ENGINE_AVBD_2 ? 2 : 1;
}

static bool box3d_setting(rb_engine e) { return e == ENGINE_BOX3D_1 || e == ENGINE_BOX3D_2; }

static int engine_substeps(rb_engine e) {
	if (e == ENGINE_BULLET) return 1;
	if (is_soft(e)) return SOFT_SUBSTEPS;
	if (is_avbd(e)) return AVBD_SUBSTEPS;
	return box3d_setting(e) ? BOX3D_SUBSTEPS : PBD_SUBSTEPS;
}

static int engine_iterations(rb_engine e) {
	if (is_bullet(e)) return BULLET_ITERATIONS;
	if (is_soft(e)) return SOFT_ITERATIONS;
	if (is_avbd(e)) return AVBD_ITERATIONS;
	return box3d_setting(e) ? BOX3D_ITERATIONS : PBD_ITERATIONS;
}

/* substeps x iterations */
static void setting_text(char* out, size_t size, rb_engine e) {
	snprintf(out, size, "%dx%d", engine_substeps(e), engine_iterations(e));
}

/* The scenes and the engines of one table; `large` adds the grid's columns and drops the Bullet
 * substep row's ratio. */
typedef struct rb_table {
	const rb_spec* specs;
	int spec_count;
	const rb_engine* engines;
	int engine_count;
	bool large;
} rb_table;

static const rb_spec standard_specs[] = {{SCENE_STACK, 20, 5}, {SCENE_PYRAMID, 20, 5}, {SCENE_PILE, 1000, 50}};
static const rb_engine standard_engines[] = {ENGINE_PBD_1,  ENGINE_PBD_2,  ENGINE_SOFT_1, ENGINE_SOFT_2,
                                             ENGINE_AVBD_1, ENGINE_AVBD_2, ENGINE_BULLET, ENGINE_BULLET_SUB};
static const rb_spec large_specs[] = {{SCENE_PYRAMID, 100, 10}, {SCENE_HULLS, 5000, 50}, {SCENE_GRID, 100, 5}};
static const rb_engine large_engines[] = {ENGINE_PBD_1,  ENGINE_PBD_2,  ENGINE_BOX3D_1, ENGINE_BOX3D_2, ENGINE_SOFT_1,
                                          ENGINE_SOFT_2, ENGINE_AVBD_1, ENGINE_AVBD_2,  ENGINE_BULLET};

/* What one run leaves behind. */
typedef struct rb_run {
	double ms;          /* mean per step */
	double drift_h;     /* the top box's horizontal distance from its start, m */
	double drift_v;     /* its height less its start, m */
	double drop;        /* the largest fall of a box below its start, m */
	double penetration; /* the deepest contact over all steps, m (0: none penetrated) */
	double sag;         /* grid: the middle ball's fall at the end, m */
	double joint_error; /* grid: the largest gap of a joint over all steps, m */
	uint32_t outside;   /* piles: bodies whose centre ended outside the box */
	uint32_t contacts;  /* after the last step */
	uint32_t contacts_max;
	bool finite;
	uint64_t hash; /* pbd: pbd_world_hash at the end */
	char status[16];
} rb_run;

/* *most becomes value when that is larger; a NaN, once in, stays. */
static void keep_most(double* most, double value) {
	if (!isnan(*most) && !(value <= *most)) *most = value;
}

/* ---- scenes ----------------------------------------------------------------------------- */

static void log_stderr(const char* message, void* user) {
	(void)user;
	fprintf(stderr, RB_PREFIX "pbd: %s\n", message);
}

static pbd_vec3 v3_of(const double a[3]) { return (pbd_vec3){(pbd_real)a[0], (pbd_real)a[1], (pbd_real)a[2]}; }

static pbd_pose pose_of(const rb_body* b) {
	pbd_pose p;
	p.position = v3_of(b->position);
	p.rotation = (pbd_quat){(pbd_real)b->rotation[0], (pbd_real)b->rotation[1], (pbd_real)b->rotation[2],
	                        (pbd_real)b->rotation[3]};
	return p;
}

/* Point k of a hull body: the scene's rock at the body's scale. */
static void hull_point(const rb_scene* s, const rb_body* b, int k, double out[3]) {
	for (int i = 0; i < 3; ++i) out[i] = b->scale * s->hull[3 * k + i];
}

/* The shape of a body in its own frame, with the scene's friction; a hull's points go to
 * `points`, which must live until the collider is created. */
static pbd_collider_def shape_def(const rb_scene* s, const rb_body* b, pbd_vec3 points[HULL_POINTS]) {
	pbd_collider_def cd = pbd_collider_def_default();
	switch (b->shape) {
	case RB_BOX:
		cd.type = PBD_SHAPE_BOX;
		cd.shape.box.half_extents = v3_of(b->half);
		break;
	case RB_SPHERE:
		cd.type = PBD_SHAPE_SPHERE;
		cd.shape.sphere.center = (pbd_vec3){0, 0, 0};
		cd.shape.sphere.radius = (pbd_real)b->radius;
		break;
	case RB_CAPSULE:
		cd.type = PBD_SHAPE_CAPSULE;
		cd.shape.capsule.radius = (pbd_real)b->radius;
		cd.shape.capsule.half_height = (pbd_real)b->half_height;
		break;
	case RB_HULL:
		for (int k = 0; k < HULL_POINTS; ++k) {
			double p[3];
			hull_point(s, b, k, p);
			points[k] = v3_of(p);
		}
		cd.type = PBD_SHAPE_CONVEX;
		cd.shape.convex.points = points;
		cd.shape.convex.point_count = HULL_POINTS;
		break;
	}
	cd.static_friction = (pbd_real)RB_FRICTION;
	cd.kinetic_friction = (pbd_real)RB_FRICTION;
	return cd;
}

static void identity(double q[4]) {
	q[0] = q[1] = q[2] = 0;
	q[3] = 1;
}

static rb_body box_at(const double half[3], double x, double y, double z) {
	rb_body b;
	memset(&b, 0, sizeof b);
	b.shape = RB_BOX;
	memcpy(b.half, half, sizeof b.half);
	b.position[0] = x;
	b.position[1] = y;
	b.position[2] = z;
	identity(b.rotation);
	return b;
}

/* Body k of a pile whose layers are row x row: a box, a ball or a capsule in turn, turned about
 * an axis and by an angle that follow k (a spherical Fibonacci direction and the golden ratio),
 * at its grid place. */
static rb_body pile_body(uint32_t k, uint32_t row) {
	rb_body b;
	memset(&b, 0, sizeof b);
	b.shape = (rb_shape)(k % 3);
	memcpy(b.half, PILE_BOX_HALF, sizeof b.half);
	b.radius = b.shape == RB_SPHERE ? PILE_BALL_RADIUS : PILE_CAPSULE_RADIUS;
	b.half_height = PILE_CAPSULE_HALF_HEIGHT;
	const uint32_t layer = k / (row * row), ix = k % row, iz = (k / row) % row;
	b.position[0] = ((double)ix - 0.5 * (row - 1)) * PILE_SPACING;
	b.position[1] = PILE_BASE + (double)layer * PILE_SPACING;
	b.position[2] = ((double)iz - 0.5 * (row - 1)) * PILE_SPACING;
	const double f = fmod(RB_GOLDEN * (double)k, 1.0);
	const double cy = 1 - 2 * fmod(RB_GOLDEN * (double)k + 0.5, 1.0), sy = sqrt(fmax(0.0, 1 - cy * cy));
	const double theta = RB_GOLDEN_ANGLE * (double)k;
	const double angle = RB_PI * f, s = sin(0.5 * angle);
	b.rotation[0] = s * sy * cos(theta);
	b.rotation[1] = s * cy;
	b.rotation[2] = s * sy * sin(theta);
	b.rotation[3] = cos(0.5 * angle);
	b.dynamic = true;
	return b;
}

static void scene_free(rb_scene* s) {
	free(s->bodies);
	free(s->joints);
	free(s->xyz);
	memset(s, 0, sizeof *s);
}

static pbd_world* scratch_world(void) {
	pbd_world_def wd = pbd_world_def_default();
	wd.log = log_stderr;
	pbd_world* w = NULL;
	return pbd_world_create(&wd, &w) == PBD_OK ? w : NULL;
}

/* The mass and inertia of a shape at density RB_DENSITY, through a collider made and dropped. */
static bool shape_mass(pbd_world* w, const pbd_collider_def* cd, pbd_mass_properties* out) {
	const pbd_collider_id probe = pbd_collider_create(w, cd);
	return pbd_collider_is_valid(w, probe) &&
	       pbd_collider_mass_properties(w, probe, (pbd_real)RB_DENSITY, out) == PBD_OK &&
	       pbd_collider_destroy(w, probe) == PBD_OK;
}

/* Mass and inertia of every dynamic body from its shape, measured in a scratch world so that pbd
 * and Bullet get the same matter. */
static int measure_masses(rb_scene* s) {
	pbd_world* w = scratch_world();
	if (!w) return -1;
	for (uint32_t i = 0; i < s->count; ++i) {
		rb_body* b = &s->bodies[i];
		if (!b->dynamic) continue;
		pbd_vec3 points[HULL_POINTS];
		const pbd_collider_def cd = shape_def(s, b, points);
		if (!shape_mass(w, &cd, &b->mass)) {
			pbd_world_destroy(w);
			return -1;
		}
	}
	pbd_world_destroy(w);
	return 0;
}

/* The axes that make a symmetric 3 x 3 inertia {xx, yy, zz, xy, xz, yz} diagonal, as the
 * columns of a rotation, by Jacobi's rotations. */
static void principal_axes(const double inertia[6], double axes[3][3]) {
	double a[3][3] = {{inertia[0], inertia[3], inertia[4]},
	                  {inertia[3], inertia[1], inertia[5]},
	                  {inertia[4], inertia[5], inertia[2]}};
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) axes[i][j] = i == j ? 1 : 0;
	for (int sweep = 0; sweep < 32; ++sweep) {
		const double off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
		const double diag = a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2];
		if (off <= 1e-30 * diag) break;
		for (int p = 0; p < 2; ++p)
			for (int q = p + 1; q < 3; ++q) {
				if (a[p][q] == 0) continue;
				/* The rotation in the (p, q) plane that zeroes a[p][q]: A <- J^T A J. */
				const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
				const double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
				const double c = 1 / sqrt(t * t + 1), sn = t * c;
				for (int k = 0; k < 3; ++k) {
					const double kp = a[k][p], kq = a[k][q];
					a[k][p] = c * kp - sn * kq;
					a[k][q] = sn * kp + c * kq;
				}
				for (int k = 0; k < 3; ++k) {
					const double pk = a[p][k], qk = a[q][k];
					a[p][k] = c * pk - sn * qk;
					a[q][k] = sn * pk + c * qk;
				}
				for (int k = 0; k < 3; ++k) {
					const double kp = axes[k][p], kq = axes[k][q];
					axes[k][p] = c * kp - sn * kq;
					axes[k][q] = sn * kp + c * kq;
				}
			}
	}
}

/* The hulls' rock, moved into its principal frame (centre of mass at the origin, inertia
 * diagonal): Bullet takes a body's centre of mass at its origin and principal moments about its
 * axes, so pbd and Bullet then hold the same matter in the same frame. */
static int build_hull(rb_scene* s) {
	double raw[3 * HULL_POINTS];
	for (int k = 0; k < HULL_POINTS; ++k) {
		const double y = 1 - (2.0 * k + 1) / HULL_POINTS, r = sqrt(1 - y * y), phi = RB_GOLDEN_ANGLE * k;
		const double reach = HULL_RADIUS * (1 + HULL_BUMP * sin(3.1 * k + 0.7));
		raw[3 * k] = reach * HULL_AXES[0] * r * cos(phi);
		raw[3 * k + 1] = reach * HULL_AXES[1] * y;
		raw[3 * k + 2] = reach * HULL_AXES[2] * r * sin(phi);
	}
	memcpy(s->hull, raw, sizeof raw);
	rb_body unit;
	memset(&unit, 0, sizeof unit);
	unit.shape = RB_HULL;
	unit.scale = 1;
	pbd_world* w = scratch_world();
	if (!w) return -1;
	pbd_vec3 points[HULL_POINTS];
	const pbd_collider_def cd = shape_def(s, &unit, points);
	pbd_mass_properties m;
	const bool ok = shape_mass(w, &cd, &m);
	pbd_world_destroy(w);
	if (!ok) return -1;
	double axes[3][3];
	principal_axes(m.inertia, axes);
	for (int k = 0; k < HULL_POINTS; ++k)
		for (int i = 0; i < 3; ++i) {
			double x = 0;
			for (int j = 0; j < 3; ++j) x += axes[j][i] * (raw[3 * k + j] - m.center[j]);
			s->hull[3 * k + i] = x;
		}
	return 0;
}

/* The piles' box: the floor's top at y = 0, the walls on it, overlapping at the corners; five
 * static bodies from index n on. */
static void pile_box(rb_scene* s, uint32_t n) {
	const double outer = s->inner_half + PILE_WALL, wall_half = 0.5 * PILE_WALL;
	const double floor_half[3] = {outer, wall_half, outer};
	const double wall_x[3] = {wall_half, 0.5 * PILE_WALL_HEIGHT, outer};
	const double wall_z[3] = {outer, 0.5 * PILE_WALL_HEIGHT, wall_half};
	const double c = s->inner_half + wall_half, y = 0.5 * PILE_WALL_HEIGHT;
	s->bodies[n] = box_at(floor_half, 0, -wall_half, 0);
	s->bodies[n + 1] = box_at(wall_x, -c, y, 0);
	s->bodies[n + 2] = box_at(wall_x, c, y, 0);
	s->bodies[n + 3] = box_at(wall_z, 0, y, -c);
	s->bodies[n + 4] = box_at(wall_z, 0, y, c);
}

/* The grid: n x n balls in the plane y = 0, ball (i, k) at index i n + k; a joint at the midpoint
 * of every pair of neighbours, and the balls (0, 0) and (n - 1, 0) held where they start. */
static void build_grid(rb_scene* s, uint32_t n) {
	const double h = 0.5 * GRID_SPACING;
	uint32_t j = 0;
	for (uint32_t i = 0; i < n; ++i)
		for (uint32_t k = 0; k < n; ++k) {
			rb_body* b = &s->bodies[i * n + k];
			b->shape = RB_SPHERE;
			b->radius = GRID_BALL_RADIUS;
			b->position[0] = ((double)i - 0.5 * (double)(n - 1)) * GRID_SPACING;
			b->position[2] = ((double)k - 0.5 * (double)(n - 1)) * GRID_SPACING;
			identity(b->rotation);
			b->dynamic = true;
			b->no_contact = true;
			if (i > 0) {
				s->joints[j++] =
				    (rb_joint){.a = (i - 1) * n + k, .b = i * n + k, .anchor_a = {h, 0, 0}, .anchor_b = {-h, 0, 0}};
			}
			if (k > 0) {
				s->joints[j++] =
				    (rb_joint){.a = i * n + k - 1, .b = i * n + k, .anchor_a = {0, 0, h}, .anchor_b = {0, 0, -h}};
			}
		}
	const uint32_t corners[2] = {0, (n - 1) * n};
	for (int c = 0; c < 2; ++c) {
		rb_joint* pin = &s->joints[j++];
		memset(pin, 0, sizeof *pin);
		pin->a = RB_WORLD;
		pin->b = corners[c];
		memcpy(pin->anchor_a, s->bodies[corners[c]].position, sizeof pin->anchor_a);
	}
	s->joint_count = j;
	s->dynamic_count = n * n;
	s->middle = (n / 2) * n + n / 2;
}

static int scene_build(rb_scene* s, const rb_spec* spec, bool small) {
	memset(s, 0, sizeof *s);
	const rb_scene_kind kind = spec->kind;
	s->kind = kind;
	const uint32_t n = small ? spec->small : spec->size;
	s->size = n;
	const double half[3] = {0.5 * BOX_EDGE, 0.5 * BOX_EDGE, 0.5 * BOX_EDGE};
	uint32_t joints = 0;
	if (kind == SCENE_STACK) {
		s->count = n;
	} else if (kind == SCENE_PYRAMID) {
		s->count = n * (n + 1) / 2;
	} else if (kind == SCENE_GRID) {
		s->count = n * n;
		joints = 2 * n * (n - 1) + 2;
	} else {
		s->count = n + 5;
	}
	s->bodies = calloc(s->count, sizeof *s->bodies);
	s->xyz = calloc(3 * (size_t)s->count, sizeof *s->xyz);
	s->joints = joints ? calloc(joints, sizeof *s->joints) : NULL;
	if (!s->bodies || !s->xyz || (joints && !s->joints)) {
		scene_free(s);
		fprintf(stderr, RB_PREFIX "out of memory\n");
		return -1;
	}
	if (kind == SCENE_STACK) {
		for (uint32_t k = 0; k < n; ++k) {
			s->bodies[k] = box_at(half, 0, (0.5 + (double)k) * BOX_EDGE, 0);
			s->bodies[k].dynamic = true;
		}
		s->dynamic_count = n;
		s->top = n - 1;
		s->floor = true;
	} else if (kind == SCENE_PYRAMID) {
		uint32_t i = 0;
		for (uint32_t layer = 0; layer < n; ++layer) {
			const uint32_t row = n - layer;
			for (uint32_t k = 0; k < row; ++k) {
				const double x = ((double)k - 0.5 * (double)(row - 1)) * (BOX_EDGE + PYRAMID_GAP);
				s->bodies[i] = box_at(half, x, (0.5 + (double)layer) * BOX_EDGE, 0);
				s->bodies[i++].dynamic = true;
			}
		}
		s->dynamic_count = i;
		s->top = i - 1;
		s->floor = true;
	} else if (kind == SCENE_GRID) {
		build_grid(s, n);
	} else {
		const bool hulls = kind == SCENE_HULLS;
		s->row = hulls ? HULLS_ROW : PILE_ROW;
		s->inner_half = hulls ? HULLS_INNER_HALF : PILE_INNER_HALF;
		if (hulls && build_hull(s) != 0) {
			fprintf(stderr, RB_PREFIX "rigid %s: the rock's mass properties failed\n", scene_names[kind]);
			scene_free(s);
			return -1;
		}
		for (uint32_t k = 0; k < n; ++k) {
			s->bodies[k] = pile_body(k, s->row);
			if (!hulls) continue;
			s->bodies[k].shape = RB_HULL;
			/* the fractional part of sqrt 2, so that the size does not follow the turn */
			s->bodies[k].scale = HULL_SCALE_MIN + HULL_SCALE_SPREAD * fmod(0.4142135623730951 * (double)k, 1.0);
		}
		s->dynamic_count = n;
		pile_box(s, n);
	}
	if (measure_masses(s) != 0) {
		fprintf(stderr, RB_PREFIX "rigid %s: pbd_collider_mass_properties failed\n", scene_names[kind]);
		scene_free(s);
		return -1;
	}
	return 0;
}

/* ---- checks ----------------------------------------------------------------------------- */

static bool all_finite(const double* xyz, uint32_t n) {
	for (size_t i = 0; i < 3 * (size_t)n; ++i)
		if (!isfinite(xyz[i])) return false;
	return true;
}

/* The state at the end: drift, falls, bodies outside the box, the grid's sag, and the status. */
static void judge(const rb_scene* s, rb_run* r) {
	r->finite = r->finite && all_finite(s->xyz, s->dynamic_count);
	if (!r->finite) {
		snprintf(r->status, sizeof r->status, "non-finite");
		return;
	}
	if (s->kind == SCENE_GRID) {
		r->sag = s->bodies[s->middle].position[1] - s->xyz[3 * (size_t)s->middle + 1];
		snprintf(r->status, sizeof r->status, "%s", r->joint_error <= GRID_JOINT_OK ? "ok" : "parted");
		return;
	}
	if (s->kind == SCENE_PILE || s->kind == SCENE_HULLS) {
		for (uint32_t i = 0; i < s->dynamic_count; ++i) {
			const double* x = s->xyz + 3 * (size_t)i;
			if (fabs(x[0]) > s->inner_half || fabs(x[2]) > s->inner_half || x[1] < 0) ++r->outside;
		}
		snprintf(r->status, sizeof r->status, "%s", r->outside ? "escaped" : "ok");
		return;
	}
	const double* top = s->xyz + 3 * (size_t)s->top;
	const double* top0 = s->bodies[s->top].position;
	const double dx = top[0] - top0[0], dz = top[2] - top0[2];
	r->drift_h = sqrt(dx * dx + dz * dz);
	r->drift_v = top[1] - top0[1];
	r->drop = 0;
	for (uint32_t i = 0; i < s->dynamic_count; ++i) {
		const double fall = s->bodies[i].position[1] - s->xyz[3 * (size_t)i + 1];
		if (fall > r->drop) r->drop = fall;
	}
	const double drift = sqrt(r->drift_h * r->drift_h + r->drift_v * r->drift_v);
	const char* status = "ok";
	if (drift >= 0.5 * BOX_EDGE || r->drop > 0.5 * BOX_EDGE)
		status = "collapsed";
	else if (drift >= DRIFT_OK)
		status = "drifted";
	snprintf(r->status, sizeof r->status, "%s", status);
}

/* ---- pbd -------------------------------------------------------------------------------- */

static int fail(pbd_world* w, rb_scene_kind kind, const char* what) {
	fprintf(stderr, RB_PREFIX "rigid %s: %s failed%s%s\n", scene_names[kind], what, w ? ": " : "",
	        w ? pbd_world_last_error(w) : "");
	pbd_world_destroy(w);
	return -1;
}

/* The scene's ball joints, added at once. */
static int add_pbd_joints(pbd_world* w, const rb_scene* s, const pbd_body_id* ids) {
	pbd_joint_def* defs = malloc((size_t)s->joint_count * sizeof *defs);
	if (!defs) return -1;
	for (uint32_t i = 0; i < s->joint_count; ++i) {
		const rb_joint* j = &s->joints[i];
		pbd_joint_def d = pbd_joint_def_default();
		d.type = PBD_JOINT_BALL;
		if (j->a != RB_WORLD) d.body_a = ids[j->a];
		if (j->b != RB_WORLD) d.body_b = ids[j->b];
		d.frame_a.position = v3_of(j->anchor_a);
		d.frame_b.position = v3_of(j->anchor_b);
		defs[i] = d;
	}
	const pbd_status st = pbd_world_add_joints(w, s->joint_count, defs, NULL);
	free(defs);
	return st == PBD_OK ? 0 : -1;
}

static int make_pbd_world(const rb_scene* s, rb_engine e, pbd_world** out, pbd_body_id* ids) {
	pbd_world_def wd = pbd_world_def_default();
	wd.gravity = (pbd_vec3){0, (pbd_real)RB_GRAVITY, 0};
	wd.dt = (pbd_real)RB_DT;
	wd.substeps = engine_substeps(e);
	wd.iterations = engine_iterations(e);
	wd.diagnostics = false; /* no stats pass in the timed steps */
	/* Every body stays awake, as Bullet's here: the rows time and judge the solver on moving
	 * bodies, not an island that fell asleep (its drift frozen, its step free). */
	wd.sleep_time = 0;
	wd.threads = engine_threads(e);
	wd.body_solver = is_soft(e)   ? PBD_BODY_SOLVER_SOFT_STEP
	                 : is_avbd(e) ? PBD_BODY_SOLVER_AVBD
	                              : PBD_BODY_SOLVER_POSITION;
	wd.log = log_stderr;
	pbd_world* w = NULL;
	*out = NULL;
	if (pbd_world_create(&wd, &w) != PBD_OK) return fail(NULL, s->kind, "pbd_world_create");
	if (s->floor) {
		pbd_collider_def cd = pbd_collider_def_default();
		cd.type = PBD_SHAPE_PLANE;
		cd.shape.plane.normal = (pbd_vec3){0, 1, 0};
		cd.shape.plane.offset = 0;
		cd.static_friction = (pbd_real)RB_FRICTION;
		cd.kinetic_friction = (pbd_real)RB_FRICTION;
		if (!pbd_collider_is_valid(w, pbd_collider_create(w, &cd))) return fail(w, s->kind, "pbd_collider_create");
	}
	for (uint32_t i = 0; i < s->count; ++i) {
		const rb_body* b = &s->bodies[i];
		pbd_vec3 points[HULL_POINTS];
		pbd_collider_def cd = shape_def(s, b, points);
		if (b->dynamic) {
			pbd_body_def bd = pbd_body_def_default();
			bd.type = PBD_BODY_DYNAMIC;
			bd.pose = pose_of(b);
			bd.mass = b->mass;
			ids[i] = pbd_body_create(w, &bd);
			if (!pbd_body_is_valid(w, ids[i])) return fail(w, s->kind, "pbd_body_create");
			cd.body = ids[i];
		} else {
			cd.pose = pose_of(b);
		}
		if (b->no_contact) continue;
		if (!pbd_collider_is_valid(w, pbd_collider_create(w, &cd))) return fail(w, s->kind, "pbd_collider_create");
	}
	if (s->joint_count && add_pbd_joints(w, s, ids) != 0) return fail(w, s->kind, "pbd_world_add_joints");
	*out = w;
	return 0;
}

/* The deepest penetration among the body contacts after a step (0 when none overlaps). */
static double pbd_penetration(const pbd_world* w, pbd_body_contact** buf, uint32_t* cap, uint32_t* count) {
	uint32_t n = pbd_world_get_body_contacts(w, NULL, 0);
	if (n > *cap) {
		pbd_body_contact* grown = realloc(*buf, (size_t)n * sizeof *grown);
		if (!grown) return (double)NAN;
		*buf = grown;
		*cap = n;
	}
	n = pbd_world_get_body_contacts(w, *buf, *cap);
	*count = n;
	double deepest = 0;
	for (uint32_t k = 0; k < n; ++k) keep_most(&deepest, -(double)(*buf)[k].separation);
	return deepest;
}

/* The largest gap of a joint after a step (pbd_joint_state.error_distance), NaN when a state
 * cannot be read. */
static double pbd_joint_error(const pbd_world* w) {
	const uint32_t n = pbd_world_joint_count(w);
	double most = 0;
	for (uint32_t j = 0; j < n; ++j) {
		pbd_joint_state st;
		if (pbd_world_get_joint_state(w, j, &st) != PBD_OK) return (double)NAN;
		keep_most(&most, (double)st.error_distance);
	}
	return most;
}

static bool read_pbd_centres(const pbd_world* w, const rb_scene* s, const pbd_body_id* ids, double* xyz) {
	for (uint32_t i = 0; i < s->dynamic_count; ++i) {
		pbd_body_state st;
		if (pbd_body_get_state(w, ids[i], &st) != PBD_OK) return false;
		xyz[3 * i] = (double)st.center.x;
		xyz[3 * i + 1] = (double)st.center.y;
		xyz[3 * i + 2] = (double)st.center.z;
	}
	return true;
}

static int run_pbd(rb_scene* s, rb_engine e, int steps, rb_run* out) {
	pbd_body_id* ids = calloc(s->count, sizeof *ids);
	if (!ids) return fail(NULL, s->kind, "allocation");
	pbd_world* w = NULL;
	if (make_pbd_world(s, e, &w, ids) != 0) {
		free(ids);
		return -1;
	}
	pbd_body_contact* contacts = NULL;
	uint32_t cap = 0;
	double total = 0;
	out->finite = true;
	for (int i = 0; i < steps; ++i) {
		const double t0 = bench_now_ms();
		const pbd_status st = pbd_world_step(w);
		const double t1 = bench_now_ms();
		if (st != PBD_OK) {
			free(ids);
			free(contacts);
			return fail(w, s->kind, "pbd_world_step");
		}
		total += t1 - t0;
		uint32_t count = 0;
		keep_most(&out->penetration, pbd_penetration(w, &contacts, &cap, &count));
		if (count > out->contacts_max) out->contacts_max = count;
		out->contacts = count;
		if (s->joint_count) keep_most(&out->joint_error, pbd_joint_error(w));
	}
	out->ms = total / steps;
	if (!read_pbd_centres(w, s, ids, s->xyz)) {
		free(ids);
		free(contacts);
		return fail(w, s->kind, "pbd_body_get_state");
	}
	out->finite =
	    !isnan(out->penetration) && !isnan(out->joint_error) && pbd_world_get_warning(w, PBD_WARN_NONFINITE).count == 0;
	out->hash = pbd_world_hash(w);
	judge(s, out);
	free(ids);
	free(contacts);
	pbd_world_destroy(w);
	return 0;
}

/* ---- Bullet ----------------------------------------------------------------------------- */

#ifdef PBD_HAVE_BULLET
static pbd_bullet_rigid_shape bullet_shape(rb_shape shape) {
	switch (shape) {
	case RB_BOX:
		return PBD_BULLET_RIGID_BOX;
	case RB_SPHERE:
		return PBD_BULLET_RIGID_SPHERE;
	case RB_CAPSULE:
		return PBD_BULLET_RIGID_CAPSULE;
	default:
		return PBD_BULLET_RIGID_HULL;
	}
}

static int run_bullet(rb_scene* s, rb_engine e, int steps, rb_run* out) {
	pbd_bullet_rigid_body* bodies = calloc(s->count, sizeof *bodies);
	pbd_bullet_rigid_joint* joints = s->joint_count ? calloc(s->joint_count, sizeof *joints) : NULL;
	/* every body's hull points, scaled, while the world is built */
	double* points = s->kind == SCENE_HULLS ? malloc(3 * HULL_POINTS * sizeof *points * s->count) : NULL;
	if (!bodies || (s->joint_count && !joints) || (s->kind == SCENE_HULLS && !points)) {
		free(bodies);
		free(joints);
		free(points);
		return fail(NULL, s->kind, "allocation");
	}
	for (uint32_t i = 0; i < s->count; ++i) {
		const rb_body* b = &s->bodies[i];
		pbd_bullet_rigid_body* c = &bodies[i];
		c->shape = bullet_shape(b->shape);
		memcpy(c->half, b->half, sizeof c->half);
		c->radius = b->radius;
		c->half_height = b->half_height;
		if (b->shape == RB_HULL) {
			double* p = points + 3 * HULL_POINTS * (size_t)i;
			for (int k = 0; k < HULL_POINTS; ++k) hull_point(s, b, k, p + 3 * k);
			c->points = p;
			c->point_count = HULL_POINTS;
		}
		memcpy(c->position, b->position, sizeof c->position);
		memcpy(c->rotation, b->rotation, sizeof c->rotation);
		if (b->dynamic) {
			c->mass = b->mass.mass;
			/* principal moments: these shapes' inertia is diagonal in their own frame (the
			 * rock's by build_hull) */
			memcpy(c->inertia, b->mass.inertia, sizeof c->inertia);
		}
		c->no_contact = b->no_contact;
	}
	for (uint32_t i = 0; i < s->joint_count; ++i) {
		const rb_joint* j = &s->joints[i];
		joints[i].a = j->a == RB_WORLD ? -1 : (int32_t)j->a;
		joints[i].b = j->b == RB_WORLD ? -1 : (int32_t)j->b;
		memcpy(joints[i].pivot_a, j->anchor_a, sizeof joints[i].pivot_a);
		memcpy(joints[i].pivot_b, j->anchor_b, sizeof joints[i].pivot_b);
	}
	pbd_bullet_rigid_desc d;
	memset(&d, 0, sizeof d);
	d.body_count = s->count;
	d.bodies = bodies;
	d.floor = s->floor;
	d.gravity_y = RB_GRAVITY;
	d.friction = RB_FRICTION;
	d.iterations = engine_iterations(e);
	d.joint_count = s->joint_count;
	d.joints = joints;
	char err[256] = "";
	pbd_bullet_rigid* w = pbd_bullet_rigid_create(&d, err, sizeof err);
	free(bodies);
	free(joints);
	free(points);
	if (!w) {
		fprintf(stderr, RB_PREFIX "rigid %s: %s\n", scene_names[s->kind], err);
		return -1;
	}
	const int substeps = engine_substeps(e);
	double total = 0;
	out->finite = true;
	for (int i = 0; i < steps; ++i) {
		const double t0 = bench_now_ms();
		pbd_bullet_rigid_step(w, RB_DT, substeps);
		const double t1 = bench_now_ms();
		total += t1 - t0;
		uint32_t count = 0;
		const double least = pbd_bullet_rigid_min_distance(w, &count);
		keep_most(&out->penetration, count ? fmax(0.0, -least) : 0.0);
		if (count > out->contacts_max) out->contacts_max = count;
		out->contacts = count;
		if (s->joint_count) keep_most(&out->joint_error, pbd_bullet_rigid_max_joint_error(w));
	}
	out->ms = total / steps;
	pbd_bullet_rigid_get_positions(w, s->xyz);
	out->finite = !isnan(out->penetration) && !isnan(out->joint_error);
	judge(s, out);
	pbd_bullet_rigid_destroy(w);
	return 0;
}
#endif

/* ---- table ------------------------------------------------------------------------------ */

static bool has_scene(const rb_table* t, rb_scene_kind kind) {
	for (int k = 0; k < t->spec_count; ++k)
		if (t->specs[k].kind == kind) return true;
	return false;
}

static const char* const outside_text = "outside = bodies whose centre ended beyond a wall or\n"
                                        "           under the floor: ok when 0, else escaped\n";

/* The description of one scene at size n. */
static void print_scene(const rb_table* t, rb_scene_kind kind, uint32_t n) {
	switch (kind) {
	case SCENE_STACK:
		printf("  stack    %u boxes of %.2f m edge stacked flush on the floor plane y = 0\n", n, BOX_EDGE);
		break;
	case SCENE_PYRAMID:
		if (has_scene(t, SCENE_STACK))
			printf("  pyramid  %u layers (%u boxes) of the same boxes in the xy plane, %.0f mm apart side by side\n", n,
			       n * (n + 1) / 2, 1000 * PYRAMID_GAP);
		else
			printf("  pyramid  %u layers (%u boxes) of %.2f m edge in the xy plane on the floor plane y = 0, %.0f mm\n"
			       "           apart side by side\n",
			       n, n * (n + 1) / 2, BOX_EDGE, 1000 * PYRAMID_GAP);
		printf("           drift = the top box's centre from its start: horizontal, vertical (m); fall = the most\n"
		       "           any box ended below its start (m). ok: drift below %.0f cm; drifted: below half an edge;\n"
		       "           collapsed: above it, or a fall of more than half an edge\n",
		       100 * DRIFT_OK);
		break;
	case SCENE_PILE:
		printf("  pile     %u bodies in turn a box %.2f x %.2f x %.2f m, a ball of radius %.2f m and a capsule of "
		       "radius\n"
		       "           %.2f m and length %.2f m, each turned by a fixed formula of its index, on a %d x %d grid "
		       "%.1f m\n"
		       "           apart from y = %.1f m up, poured into a box of inside %.1f x %.1f m with walls %.1f m high\n"
		       "           (five static boxes, %.1f m thick); %s",
		       n, 2 * PILE_BOX_HALF[0], 2 * PILE_BOX_HALF[1], 2 * PILE_BOX_HALF[2], PILE_BALL_RADIUS,
		       PILE_CAPSULE_RADIUS, 2 * (PILE_CAPSULE_HALF_HEIGHT + PILE_CAPSULE_RADIUS), PILE_ROW, PILE_ROW,
		       PILE_SPACING, PILE_BASE, 2 * PILE_INNER_HALF, 2 * PILE_INNER_HALF, PILE_WALL_HEIGHT, PILE_WALL,
		       outside_text);
		break;
	case SCENE_HULLS:
		printf("  hulls    %u convex hulls of one rock: %d points of a spherical Fibonacci lattice at %.2f to %.2f\n"
		       "           times %.2f m, squashed %.1f : %.1f : %.1f, in its principal frame; each scaled by %.1f to\n"
		       "           %.1f and turned by a fixed formula of its index, on a %d x %d grid %.1f m apart from\n"
		       "           y = %.1f m up, poured into a box of inside %.1f x %.1f m with walls %.1f m high (five\n"
		       "           static boxes, %.1f m thick); %s",
		       n, HULL_POINTS, 1 - HULL_BUMP, 1 + HULL_BUMP, HULL_RADIUS, HULL_AXES[0], HULL_AXES[1], HULL_AXES[2],
		       HULL_SCALE_MIN, HULL_SCALE_MIN + HULL_SCALE_SPREAD, HULLS_ROW, HULLS_ROW, PILE_SPACING, PILE_BASE,
		       2 * HULLS_INNER_HALF, 2 * HULLS_INNER_HALF, PILE_WALL_HEIGHT, PILE_WALL, outside_text);
		break;
	case SCENE_GRID:
		printf("  grid     %u x %u balls of radius %.2f m, %.1f m apart in the plane y = 0, that touch nothing (no\n"
		       "           collider in pbd, a collision mask of 0 in Bullet); ball joints at the midpoints of\n"
		       "           neighbours (%u) and at the two corners of one side, held to the world; sag = the\n"
		       "           middle ball's fall at the end (m); joint err = the largest gap of a joint over all\n"
		       "           steps (m): ok under %.0f cm, else parted\n",
		       n, n, GRID_BALL_RADIUS, GRID_SPACING, 2 * n * (n - 1), 100 * GRID_JOINT_OK);
		break;
	default:
		break;
	}
}

static void print_scenes(const rb_table* t, int steps, bool small, bool bullet) {
	printf("rigid bodies: %d steps of 1/60 s from rest, gravity %.2f m/s^2; every shape of density %.0f kg/m^3,\n"
	       "friction %.1f (static and kinetic), restitution 0\n",
	       steps, RB_GRAVITY, RB_DENSITY, RB_FRICTION);
	for (int k = 0; k < t->spec_count; ++k)
		print_scene(t, t->specs[k].kind, small ? t->specs[k].small : t->specs[k].size);
	if (t->large)
		printf("  pbd      Gauss-Seidel, %d substeps x %d iteration, the rigid-contact tests' setting, and %d x %d,\n"
		       "           Box3D's %d substeps (setting = substeps x iterations); diagnostics off; no sleeping\n"
		       "           (sleep_time 0); 1 and 2 threads (thr)\n",
		       PBD_SUBSTEPS, PBD_ITERATIONS, BOX3D_SUBSTEPS, BOX3D_ITERATIONS, BOX3D_SUBSTEPS);
	else
		printf("  pbd      Gauss-Seidel, %d substeps x %d iteration (setting = substeps x iterations), the "
		       "rigid-contact\n"
		       "           tests' setting; diagnostics off; no sleeping (sleep_time 0); 1 and 2 threads (thr)\n",
		       PBD_SUBSTEPS, PBD_ITERATIONS);
	printf("  soft     pbd with body_solver = PBD_BODY_SOLVER_SOFT_STEP (Box2D v3's soft step), %d substeps x %d,\n"
	       "           contacts at an eighth of the substep rate (60 Hz); otherwise as pbd\n",
	       SOFT_SUBSTEPS, SOFT_ITERATIONS);
	printf("  avbd     pbd with body_solver = PBD_BODY_SOLVER_AVBD (augmented vertex block descent), %d substeps x "
	       "%d;\n"
	       "           otherwise as pbd\n",
	       AVBD_SUBSTEPS, AVBD_ITERATIONS);
	if (bullet) {
		printf("  bullet   btDiscreteDynamicsWorld, btDefaultCollisionConfiguration, btDbvtBroadphase,\n"
		       "           btSequentialImpulseConstraintSolver with its default %d iterations, one thread; setting\n",
		       BULLET_ITERATIONS);
		if (t->large)
			printf(
			    "           1x%d: stepSimulation(1/60, 0), one internal step per frame; btBoxShape (default margin),\n"
			    "           btConvexHullShape of the same points (margin %.2f m outside them), btSphereShape,\n"
			    "           btStaticPlaneShape, btPoint2PointConstraint; pbd's masses and principal moments; each "
			    "body's\n",
			    BULLET_ITERATIONS, PBD_BULLET_RIGID_HULL_MARGIN);
		else
			printf("           1x%d: stepSimulation(1/60, 0), one internal step per frame; %dx%d: pbd's substeps, %d "
			       "calls\n"
			       "           stepSimulation(1/%d, 0) per frame; btBoxShape (default margin), btSphereShape,\n"
			       "           btCapsuleShape, btStaticPlaneShape; pbd's masses and principal moments; each body's\n",
			       BULLET_ITERATIONS, PBD_SUBSTEPS, BULLET_ITERATIONS, PBD_SUBSTEPS, 60 * PBD_SUBSTEPS);
		printf("           friction sqrt(%.1f), as Bullet multiplies a pair's; no sleeping (DISABLE_DEACTIVATION)\n",
		       RB_FRICTION);
	}
	printf("  max pen  the deepest contact over all steps (m): pbd_world_get_body_contacts' separation, Bullet's\n"
	       "           manifold point distances; contacts = those after the last step\n");
	printf("  ms/step  mean over the steps, one run per row; the checks read the state outside the timed calls;\n");
	if (t->large)
		printf("           pbd/bt1 = the pbd row's ms over the Bullet 1x%d row's\n\n", BULLET_ITERATIONS);
	else
		printf("           pbd/bt1, pbd/bt%d = the pbd row's ms over the Bullet 1x%d and %dx%d rows'\n\n", PBD_SUBSTEPS,
		       BULLET_ITERATIONS, PBD_SUBSTEPS, BULLET_ITERATIONS);
}

static void print_header(const rb_table* t) {
	printf("%-8s %-6s %6s %3s %-7s %9s %9s %9s %8s %9s %8s %7s ", "scene", "engine", "bodies", "thr", "setting",
	       "ms/step", "drift h", "drift v", "fall", "max pen", "contacts", "outside");
	if (t->large) printf("%8s %9s ", "sag", "joint err");
	printf("%-10s %7s", "status", "pbd/bt1");
	if (!t->large) {
		char sub[16];
		snprintf(sub, sizeof sub, "pbd/bt%d", PBD_SUBSTEPS);
		printf(" %8s", sub);
	}
	printf("\n");
}

static void ratio_text(char* out, size_t size, double ratio) {
	if (isfinite(ratio))
		snprintf(out, size, "%.2f", ratio);
	else
		snprintf(out, size, "-");
}

static void print_row(const rb_table* t, const rb_scene* s, rb_engine e, const rb_run* r, double ratio1,
                      double ratio_sub) {
	char setting[16], drift_h[16], drift_v[16], fall[16], outside[16], sag[16], gap[16], r1[16], rs[16];
	setting_text(setting, sizeof setting, e);
	const bool tower = s->kind == SCENE_STACK || s->kind == SCENE_PYRAMID;
	const bool pile = s->kind == SCENE_PILE || s->kind == SCENE_HULLS, grid = s->kind == SCENE_GRID;
	snprintf(drift_h, sizeof drift_h, tower ? "%.4f" : "-", r->drift_h);
	snprintf(drift_v, sizeof drift_v, tower ? "%+.4f" : "-", r->drift_v);
	snprintf(fall, sizeof fall, tower ? "%.4f" : "-", r->drop);
	if (pile)
		snprintf(outside, sizeof outside, "%u", r->outside);
	else
		snprintf(outside, sizeof outside, "-");
	snprintf(sag, sizeof sag, grid ? "%.3f" : "-", r->sag);
	snprintf(gap, sizeof gap, grid ? "%.2e" : "-", r->joint_error);
	ratio_text(r1, sizeof r1, ratio1);
	ratio_text(rs, sizeof rs, ratio_sub);
	printf("%-8s %-6s %6u %3d %-7s %9.3f %9s %9s %8s %9.2e %8u %7s ", scene_names[s->kind],
	       is_bullet(e) ? "bullet"
	       : is_soft(e) ? "soft"
	       : is_avbd(e) ? "avbd"
	                    : "pbd",
	       s->dynamic_count, engine_threads(e), setting, r->ms, drift_h, drift_v, fall, r->penetration, r->contacts,
	       outside);
	if (t->large) printf("%8s %9s ", sag, gap);
	printf("%-10s %7s", r->status, r1);
	if (!t->large) printf(" %8s", rs);
	printf("\n");
	fflush(stdout);
}

static const char* engine_text(rb_engine e) {
	switch (e) {
	case ENGINE_PBD_1:
		return "pbd, 1 thread";
	case ENGINE_PBD_2:
		return "pbd, 2 threads";
	case ENGINE_BOX3D_1:
		return "pbd 4 substeps, 1 thread";
	case ENGINE_BOX3D_2:
		return "pbd 4 substeps, 2 threads";
	case ENGINE_SOFT_1:
		return "pbd soft step, 1 thread";
	case ENGINE_SOFT_2:
		return "pbd soft step, 2 threads";
	case ENGINE_AVBD_1:
		return "pbd avbd, 1 thread";
	case ENGINE_AVBD_2:
		return "pbd avbd, 2 threads";
	case ENGINE_BULLET:
		return "bullet";
	default:
		return "bullet, substeps";
	}
}

static bool table_has(const rb_table* t, rb_engine e) {
	for (int k = 0; k < t->engine_count; ++k)
		if (t->engines[k] == e) return true;
	return false;
}

/* The pbd rows of the table on one and two threads: their times' ratio and whether they ended
 * in the same state, one line each per pbd setting (named when the table has more than one). */
static int print_threads(const rb_table* t, rb_run (*runs)[ENGINE_COUNT]) {
	int settings = 0, differ = 0;
	for (int k = 0; k < t->engine_count; ++k)
		if (!is_bullet(t->engines[k]) && engine_threads(t->engines[k]) == 1) ++settings;
	for (int line = 0; line < 2; ++line)
		for (int k = 0; k < t->engine_count; ++k) {
			const rb_engine one = t->engines[k], two = (rb_engine)(one + 1);
			if (is_bullet(one) || engine_threads(one) != 1 || !table_has(t, two)) continue;
			char setting[24] = "";
			if (settings > 1) {
				setting[0] = ',';
				setting[1] = ' ';
				setting_text(setting + 2, sizeof setting - 2, one);
			}
			printf(line == 0 ? "\npbd 2 threads / 1 thread%s:" : "\npbd state after the last step, 1 and 2 threads%s:",
			       setting);
			for (int sc = 0; sc < t->spec_count; ++sc) {
				const rb_run* r = runs[sc];
				if (line == 0) {
					printf("  %s %.2f", scene_names[t->specs[sc].kind], r[two].ms / r[one].ms);
				} else {
					const bool same = r[two].hash == r[one].hash;
					printf("  %s %s", scene_names[t->specs[sc].kind], same ? "same" : "DIFFERENT");
					if (!same) ++differ;
				}
			}
		}
	printf("\n");
	return differ;
}

static int run_table(const rb_table* t, int steps, bool small, bool bullet) {
#ifndef PBD_HAVE_BULLET
	bullet = false;
#endif
	print_scenes(t, steps, small, bullet);
	print_header(t);
	const bool progress = isatty(STDERR_FILENO) != 0;
	rb_run runs[SCENE_COUNT][ENGINE_COUNT];
	memset(runs, 0, sizeof runs);
	for (int k = 0; k < t->spec_count; ++k) {
		rb_scene s;
		if (scene_build(&s, &t->specs[k], small) != 0) return -1;
		rb_run* r = runs[k];
		int rc = 0;
		for (int i = 0; i < t->engine_count && rc == 0; ++i) {
			const rb_engine e = t->engines[i];
			if (is_bullet(e) && !bullet) continue;
			if (progress) fprintf(stderr, "  %s (%s)          \r", scene_names[s.kind], engine_text(e));
#ifdef PBD_HAVE_BULLET
			if (is_bullet(e)) {
				rc = run_bullet(&s, e, steps, &r[e]);
				continue;
			}
#endif
			rc = run_pbd(&s, e, steps, &r[e]);
		}
		if (progress) fprintf(stderr, "%50s\r", "");
		if (rc != 0) {
			scene_free(&s);
			return -1;
		}
		for (int i = 0; i < t->engine_count; ++i) {
			const rb_engine e = t->engines[i];
			const bool peer = is_bullet(e);
			if (peer && !bullet) continue;
			const double r1 = !peer && bullet ? r[e].ms / r[ENGINE_BULLET].ms : (double)NAN;
			const double rs =
			    !peer && bullet && table_has(t, ENGINE_BULLET_SUB) ? r[e].ms / r[ENGINE_BULLET_SUB].ms : (double)NAN;
			print_row(t, &s, e, &r[e], r1, rs);
		}
		scene_free(&s);
	}
	return print_threads(t, runs);
}

int bench_rigid(int steps, bool small, bool bullet) {
	const rb_table t = {standard_specs, (int)(sizeof standard_specs / sizeof standard_specs[0]), standard_engines,
	                    (int)(sizeof standard_engines / sizeof standard_engines[0]), false};
	return run_table(&t, steps, small, bullet);
}

int bench_rigid_large(int steps, bool small, bool bullet) {
	const rb_table t = {large_specs, (int)(sizeof large_specs / sizeof large_specs[0]), large_engines,
	                    (int)(sizeof large_engines / sizeof large_engines[0]), true};
	return run_table(&t, steps, small, bullet);
}
