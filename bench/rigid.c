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
 * Density 1000 kg/m^3 and friction 0.5 on every shape, restitution 0. pbd runs the setting of
 * tests/collision/test_rigid_contact.c (20 substeps x 1 iteration, Gauss-Seidel); Bullet its
 * default 10 solver iterations in one internal step of 1/60 s, and again in 20 internal steps of
 * 1/1200 s. Both engines get the same masses and principal moments (pbd_collider_mass_properties).
 *
 * Measured per row: ms per step (mean over the steps; the checks read the state outside the
 * timed calls), the drift of the top box from its start, the deepest penetration of any contact
 * over all steps and, for the pile, the bodies that ended outside the box. docs/BENCHMARKS.md,
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
/* pbd: the setting of the rigid-contact tests (docs/collision.md, "Bodies against bodies"). */
enum { PBD_SUBSTEPS = 20, PBD_ITERATIONS = 1, BULLET_ITERATIONS = 10 };

/* The stack and the pyramid. */
static const double BOX_EDGE = 0.5;
static const double PYRAMID_GAP = 0.005;
/* Top drift below this is `ok`; from half an edge on, or when a box fell more than half an edge
 * below its start, the stack or pyramid has `collapsed`. */
static const double DRIFT_OK = 0.01;

/* The pile: PILE_ROW x PILE_ROW bodies per layer, PILE_SPACING apart, the lowest layer
 * PILE_BASE up; the box's inside is 2 PILE_INNER_HALF square with walls PILE_WALL_HEIGHT high
 * and PILE_WALL thick. Every body fits in a ball of radius 0.175 m < PILE_SPACING / 2, so none
 * starts touching another, and the grid's outer bodies start inside the walls' lines. */
enum { PILE_ROW = 10 };
static const double PILE_SPACING = 0.4;
static const double PILE_BASE = 1.6;
static const double PILE_INNER_HALF = 2.0;
static const double PILE_WALL_HEIGHT = 1.2;
static const double PILE_WALL = 0.2;
static const double PILE_BOX_HALF[3] = {0.12, 0.08, 0.1};
static const double PILE_BALL_RADIUS = 0.1;
static const double PILE_CAPSULE_RADIUS = 0.07;
static const double PILE_CAPSULE_HALF_HEIGHT = 0.1;

typedef enum rb_shape { RB_BOX, RB_SPHERE, RB_CAPSULE } rb_shape;

/* One body of a scene, as both engines build it. */
typedef struct rb_body {
	rb_shape shape;
	double half[3];     /* box, m */
	double radius;      /* sphere, capsule, m */
	double half_height; /* capsule, m */
	double position[3];
	double rotation[4]; /* x, y, z, w */
	bool dynamic;
	pbd_mass_properties mass; /* dynamic only */
} rb_body;

typedef enum rb_scene_kind { SCENE_STACK, SCENE_PYRAMID, SCENE_PILE, SCENE_COUNT } rb_scene_kind;

static const char* const scene_names[SCENE_COUNT] = {"stack", "pyramid", "pile"};

/* The dynamic bodies come first, then the static ones (the pile's floor and walls). */
typedef struct rb_scene {
	rb_scene_kind kind;
	rb_body* bodies;
	uint32_t count, dynamic_count;
	bool floor;   /* the plane y = 0 */
	uint32_t top; /* the stack's and the pyramid's top box */
	double* xyz;  /* scratch: the dynamic bodies' centres */
} rb_scene;

typedef enum rb_engine { ENGINE_PBD_1, ENGINE_PBD_2, ENGINE_BULLET, ENGINE_BULLET_SUB, ENGINE_COUNT } rb_engine;

static bool is_bullet(rb_engine e) { return e == ENGINE_BULLET || e == ENGINE_BULLET_SUB; }

/* What one run leaves behind. */
typedef struct rb_run {
	double ms;          /* mean per step */
	double drift_h;     /* the top box's horizontal distance from its start, m */
	double drift_v;     /* its height less its start, m */
	double drop;        /* the largest fall of a box below its start, m */
	double penetration; /* the deepest contact over all steps, m (0: none penetrated) */
	uint32_t outside;   /* pile: bodies whose centre ended outside the box */
	uint32_t contacts;  /* after the last step */
	uint32_t contacts_max;
	bool finite;
	uint64_t hash; /* pbd: pbd_world_hash at the end */
	char status[16];
} rb_run;

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

/* The shape of a body in its own frame, with the scene's friction. */
static pbd_collider_def shape_def(const rb_body* b) {
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

/* The pile's body k: a box, a ball or a capsule in turn, turned about an axis and by an angle
 * that follow k (a spherical Fibonacci direction and the golden ratio), at its grid place. */
static rb_body pile_body(uint32_t k) {
	rb_body b;
	memset(&b, 0, sizeof b);
	b.shape = (rb_shape)(k % 3);
	memcpy(b.half, PILE_BOX_HALF, sizeof b.half);
	b.radius = b.shape == RB_SPHERE ? PILE_BALL_RADIUS : PILE_CAPSULE_RADIUS;
	b.half_height = PILE_CAPSULE_HALF_HEIGHT;
	const uint32_t layer = k / (PILE_ROW * PILE_ROW), ix = k % PILE_ROW, iz = (k / PILE_ROW) % PILE_ROW;
	b.position[0] = ((double)ix - 0.5 * (PILE_ROW - 1)) * PILE_SPACING;
	b.position[1] = PILE_BASE + (double)layer * PILE_SPACING;
	b.position[2] = ((double)iz - 0.5 * (PILE_ROW - 1)) * PILE_SPACING;
	const double golden = 0.6180339887498949;
	const double f = fmod(golden * (double)k, 1.0);
	const double cy = 1 - 2 * fmod(golden * (double)k + 0.5, 1.0), sy = sqrt(fmax(0.0, 1 - cy * cy));
	const double theta = 2.399963229728653 * (double)k; /* the golden angle */
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
	free(s->xyz);
	memset(s, 0, sizeof *s);
}

/* Mass and inertia of every dynamic body from its shape at density RB_DENSITY, measured in a
 * scratch world so that pbd and Bullet get the same matter. */
static int measure_masses(rb_scene* s) {
	pbd_world_def wd = pbd_world_def_default();
	wd.log = log_stderr;
	pbd_world* w = NULL;
	if (pbd_world_create(&wd, &w) != PBD_OK) return -1;
	for (uint32_t i = 0; i < s->count; ++i) {
		rb_body* b = &s->bodies[i];
		if (!b->dynamic) continue;
		const pbd_collider_def cd = shape_def(b);
		const pbd_collider_id probe = pbd_collider_create(w, &cd);
		if (!pbd_collider_is_valid(w, probe) ||
		    pbd_collider_mass_properties(w, probe, (pbd_real)RB_DENSITY, &b->mass) != PBD_OK ||
		    pbd_collider_destroy(w, probe) != PBD_OK) {
			pbd_world_destroy(w);
			return -1;
		}
	}
	pbd_world_destroy(w);
	return 0;
}

static int scene_build(rb_scene* s, rb_scene_kind kind, bool small) {
	memset(s, 0, sizeof *s);
	s->kind = kind;
	const double half[3] = {0.5 * BOX_EDGE, 0.5 * BOX_EDGE, 0.5 * BOX_EDGE};
	uint32_t n = 0;
	if (kind == SCENE_STACK) {
		n = small ? 5 : 20;
		s->count = n;
	} else if (kind == SCENE_PYRAMID) {
		n = small ? 5 : 20; /* layers */
		s->count = n * (n + 1) / 2;
	} else {
		n = small ? 50 : 1000;
		s->count = n + 5;
	}
	s->bodies = calloc(s->count, sizeof *s->bodies);
	s->xyz = calloc(3 * (size_t)s->count, sizeof *s->xyz);
	if (!s->bodies || !s->xyz) {
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
	} else {
		for (uint32_t k = 0; k < n; ++k) s->bodies[k] = pile_body(k);
		s->dynamic_count = n;
		/* The floor's top at y = 0, the walls on it, overlapping at the corners. */
		const double outer = PILE_INNER_HALF + PILE_WALL, wall_half = 0.5 * PILE_WALL;
		const double floor_half[3] = {outer, wall_half, outer};
		const double wall_x[3] = {wall_half, 0.5 * PILE_WALL_HEIGHT, outer};
		const double wall_z[3] = {outer, 0.5 * PILE_WALL_HEIGHT, wall_half};
		const double c = PILE_INNER_HALF + wall_half, y = 0.5 * PILE_WALL_HEIGHT;
		s->bodies[n] = box_at(floor_half, 0, -wall_half, 0);
		s->bodies[n + 1] = box_at(wall_x, -c, y, 0);
		s->bodies[n + 2] = box_at(wall_x, c, y, 0);
		s->bodies[n + 3] = box_at(wall_z, 0, y, -c);
		s->bodies[n + 4] = box_at(wall_z, 0, y, c);
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

/* The state at the end: drift, falls, bodies outside the box, and the status. */
static void judge(const rb_scene* s, rb_run* r) {
	r->finite = r->finite && all_finite(s->xyz, s->dynamic_count);
	if (!r->finite) {
		snprintf(r->status, sizeof r->status, "non-finite");
		return;
	}
	if (s->kind == SCENE_PILE) {
		for (uint32_t i = 0; i < s->dynamic_count; ++i) {
			const double* x = s->xyz + 3 * (size_t)i;
			if (fabs(x[0]) > PILE_INNER_HALF || fabs(x[2]) > PILE_INNER_HALF || x[1] < 0) ++r->outside;
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

static int make_pbd_world(const rb_scene* s, int threads, pbd_world** out, pbd_body_id* ids) {
	pbd_world_def wd = pbd_world_def_default();
	wd.gravity = (pbd_vec3){0, (pbd_real)RB_GRAVITY, 0};
	wd.dt = (pbd_real)RB_DT;
	wd.substeps = PBD_SUBSTEPS;
	wd.iterations = PBD_ITERATIONS;
	wd.diagnostics = false; /* no stats pass in the timed steps */
	/* Every body stays awake, as Bullet's here: the rows time and judge the solver on moving
	 * bodies, not an island that fell asleep (its drift frozen, its step free). */
	wd.sleep_time = 0;
	wd.threads = threads;
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
		pbd_collider_def cd = shape_def(b);
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
		if (!pbd_collider_is_valid(w, pbd_collider_create(w, &cd))) return fail(w, s->kind, "pbd_collider_create");
	}
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
	for (uint32_t k = 0; k < n; ++k) {
		const double depth = -(double)(*buf)[k].separation;
		if (!(depth <= deepest)) deepest = depth; /* NaN sticks */
	}
	return deepest;
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

static int run_pbd(rb_scene* s, int threads, int steps, rb_run* out) {
	pbd_body_id* ids = calloc(s->count, sizeof *ids);
	if (!ids) return fail(NULL, s->kind, "allocation");
	pbd_world* w = NULL;
	if (make_pbd_world(s, threads, &w, ids) != 0) {
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
		const double pen = pbd_penetration(w, &contacts, &cap, &count);
		if (!(pen <= out->penetration)) out->penetration = pen;
		if (count > out->contacts_max) out->contacts_max = count;
		out->contacts = count;
	}
	out->ms = total / steps;
	if (!read_pbd_centres(w, s, ids, s->xyz)) {
		free(ids);
		free(contacts);
		return fail(w, s->kind, "pbd_body_get_state");
	}
	out->finite = !isnan(out->penetration) && pbd_world_get_warning(w, PBD_WARN_NONFINITE).count == 0;
	out->hash = pbd_world_hash(w);
	judge(s, out);
	free(ids);
	free(contacts);
	pbd_world_destroy(w);
	return 0;
}

/* ---- Bullet ----------------------------------------------------------------------------- */

#ifdef PBD_HAVE_BULLET
static int run_bullet(rb_scene* s, int substeps, int steps, rb_run* out) {
	pbd_bullet_rigid_body* bodies = calloc(s->count, sizeof *bodies);
	if (!bodies) return fail(NULL, s->kind, "allocation");
	for (uint32_t i = 0; i < s->count; ++i) {
		const rb_body* b = &s->bodies[i];
		pbd_bullet_rigid_body* c = &bodies[i];
		c->shape = b->shape == RB_BOX      ? PBD_BULLET_RIGID_BOX
		           : b->shape == RB_SPHERE ? PBD_BULLET_RIGID_SPHERE
		                                   : PBD_BULLET_RIGID_CAPSULE;
		memcpy(c->half, b->half, sizeof c->half);
		c->radius = b->radius;
		c->half_height = b->half_height;
		memcpy(c->position, b->position, sizeof c->position);
		memcpy(c->rotation, b->rotation, sizeof c->rotation);
		if (b->dynamic) {
			c->mass = b->mass.mass;
			/* principal moments: these shapes' inertia is diagonal in their own frame */
			memcpy(c->inertia, b->mass.inertia, sizeof c->inertia);
		}
	}
	pbd_bullet_rigid_desc d;
	memset(&d, 0, sizeof d);
	d.body_count = s->count;
	d.bodies = bodies;
	d.floor = s->floor;
	d.gravity_y = RB_GRAVITY;
	d.friction = RB_FRICTION;
	d.iterations = BULLET_ITERATIONS;
	char err[256] = "";
	pbd_bullet_rigid* w = pbd_bullet_rigid_create(&d, err, sizeof err);
	free(bodies);
	if (!w) {
		fprintf(stderr, RB_PREFIX "rigid %s: %s\n", scene_names[s->kind], err);
		return -1;
	}
	double total = 0;
	out->finite = true;
	for (int i = 0; i < steps; ++i) {
		const double t0 = bench_now_ms();
		pbd_bullet_rigid_step(w, RB_DT, substeps);
		const double t1 = bench_now_ms();
		total += t1 - t0;
		uint32_t count = 0;
		const double least = pbd_bullet_rigid_min_distance(w, &count);
		const double pen = count ? fmax(0.0, -least) : 0.0;
		if (!(pen <= out->penetration)) out->penetration = pen;
		if (count > out->contacts_max) out->contacts_max = count;
		out->contacts = count;
	}
	out->ms = total / steps;
	pbd_bullet_rigid_get_positions(w, s->xyz);
	out->finite = !isnan(out->penetration);
	judge(s, out);
	pbd_bullet_rigid_destroy(w);
	return 0;
}
#endif

/* ---- table ------------------------------------------------------------------------------ */

static void print_scenes(int steps, bool small, bool bullet) {
	printf("rigid bodies: %d steps of 1/60 s from rest, gravity %.2f m/s^2; every shape of density %.0f kg/m^3,\n"
	       "friction %.1f (static and kinetic), restitution 0\n",
	       steps, RB_GRAVITY, RB_DENSITY, RB_FRICTION);
	printf("  stack    %d boxes of %.2f m edge stacked flush on the floor plane y = 0\n", small ? 5 : 20, BOX_EDGE);
	printf("  pyramid  %d layers (%d boxes) of the same boxes in the xy plane, %.0f mm apart side by side\n",
	       small ? 5 : 20, small ? 15 : 210, 1000 * PYRAMID_GAP);
	printf("           drift = the top box's centre from its start: horizontal, vertical (m); fall = the most\n"
	       "           any box ended below its start (m). ok: drift below %.0f cm; drifted: below half an edge;\n"
	       "           collapsed: above it, or a fall of more than half an edge\n",
	       100 * DRIFT_OK);
	printf(
	    "  pile     %d bodies in turn a box %.2f x %.2f x %.2f m, a ball of radius %.2f m and a capsule of radius\n"
	    "           %.2f m and length %.2f m, each turned by a fixed formula of its index, on a %d x %d grid %.1f m\n"
	    "           apart from y = %.1f m up, poured into a box of inside %.1f x %.1f m with walls %.1f m high\n"
	    "           (five static boxes, %.1f m thick); outside = bodies whose centre ended beyond a wall or\n"
	    "           under the floor: ok when 0, else escaped\n",
	    small ? 50 : 1000, 2 * PILE_BOX_HALF[0], 2 * PILE_BOX_HALF[1], 2 * PILE_BOX_HALF[2], PILE_BALL_RADIUS,
	    PILE_CAPSULE_RADIUS, 2 * (PILE_CAPSULE_HALF_HEIGHT + PILE_CAPSULE_RADIUS), PILE_ROW, PILE_ROW, PILE_SPACING,
	    PILE_BASE, 2 * PILE_INNER_HALF, 2 * PILE_INNER_HALF, PILE_WALL_HEIGHT, PILE_WALL);
	printf("  pbd      Gauss-Seidel, %d substeps x %d iteration (setting = substeps x iterations), the rigid-contact\n"
	       "           tests' setting; diagnostics off; no sleeping (sleep_time 0); 1 and 2 threads (thr)\n",
	       PBD_SUBSTEPS, PBD_ITERATIONS);
	if (bullet)
		printf(
		    "  bullet   btDiscreteDynamicsWorld, btDefaultCollisionConfiguration, btDbvtBroadphase,\n"
		    "           btSequentialImpulseConstraintSolver with its default %d iterations, one thread; setting\n"
		    "           1x%d: stepSimulation(1/60, 0), one internal step per frame; %dx%d: pbd's substeps, %d calls\n"
		    "           stepSimulation(1/%d, 0) per frame; btBoxShape (default margin), btSphereShape,\n"
		    "           btCapsuleShape, btStaticPlaneShape; pbd's masses and principal moments; each body's\n"
		    "           friction sqrt(%.1f), as Bullet multiplies a pair's; no sleeping (DISABLE_DEACTIVATION)\n",
		    BULLET_ITERATIONS, BULLET_ITERATIONS, PBD_SUBSTEPS, BULLET_ITERATIONS, PBD_SUBSTEPS, 60 * PBD_SUBSTEPS,
		    RB_FRICTION);
	printf("  max pen  the deepest contact over all steps (m): pbd_world_get_body_contacts' separation, Bullet's\n"
	       "           manifold point distances; contacts = those after the last step\n");
	printf("  ms/step  mean over the steps, one run per row; the checks read the state outside the timed calls;\n"
	       "           pbd/bt1, pbd/bt%d = the pbd row's ms over the Bullet 1x%d and %dx%d rows'\n\n",
	       PBD_SUBSTEPS, BULLET_ITERATIONS, PBD_SUBSTEPS, BULLET_ITERATIONS);
}

static void print_header(void) {
	char sub[16];
	snprintf(sub, sizeof sub, "pbd/bt%d", PBD_SUBSTEPS);
	printf("%-8s %-6s %6s %3s %-7s %9s %9s %9s %8s %9s %8s %7s %-10s %7s %8s\n", "scene", "engine", "bodies", "thr",
	       "setting", "ms/step", "drift h", "drift v", "fall", "max pen", "contacts", "outside", "status", "pbd/bt1",
	       sub);
}

static void ratio_text(char* out, size_t size, double ratio) {
	if (isfinite(ratio))
		snprintf(out, size, "%.2f", ratio);
	else
		snprintf(out, size, "-");
}

static void print_row(const rb_scene* s, rb_engine e, const rb_run* r, double ratio1, double ratio_sub) {
	char setting[16], drift_h[16], drift_v[16], fall[16], outside[16], r1[16], rs[16];
	if (e == ENGINE_BULLET)
		snprintf(setting, sizeof setting, "1x%d", BULLET_ITERATIONS);
	else if (e == ENGINE_BULLET_SUB)
		snprintf(setting, sizeof setting, "%dx%d", PBD_SUBSTEPS, BULLET_ITERATIONS);
	else
		snprintf(setting, sizeof setting, "%dx%d", PBD_SUBSTEPS, PBD_ITERATIONS);
	const bool pile = s->kind == SCENE_PILE;
	snprintf(drift_h, sizeof drift_h, pile ? "-" : "%.4f", r->drift_h);
	snprintf(drift_v, sizeof drift_v, pile ? "-" : "%+.4f", r->drift_v);
	snprintf(fall, sizeof fall, pile ? "-" : "%.4f", r->drop);
	if (pile)
		snprintf(outside, sizeof outside, "%u", r->outside);
	else
		snprintf(outside, sizeof outside, "-");
	ratio_text(r1, sizeof r1, ratio1);
	ratio_text(rs, sizeof rs, ratio_sub);
	printf("%-8s %-6s %6u %3d %-7s %9.3f %9s %9s %8s %9.2e %8u %7s %-10s %7s %8s\n", scene_names[s->kind],
	       is_bullet(e) ? "bullet" : "pbd", s->dynamic_count, e == ENGINE_PBD_2 ? 2 : 1, setting, r->ms, drift_h,
	       drift_v, fall, r->penetration, r->contacts, outside, r->status, r1, rs);
	fflush(stdout);
}

static const char* engine_text(rb_engine e) {
	switch (e) {
	case ENGINE_PBD_1:
		return "pbd, 1 thread";
	case ENGINE_PBD_2:
		return "pbd, 2 threads";
	case ENGINE_BULLET:
		return "bullet";
	default:
		return "bullet, substeps";
	}
}

int bench_rigid(int steps, bool small, bool bullet) {
#ifndef PBD_HAVE_BULLET
	bullet = false;
#endif
	print_scenes(steps, small, bullet);
	print_header();
	const bool progress = isatty(STDERR_FILENO) != 0;
	double threads_ratio[SCENE_COUNT];
	bool same[SCENE_COUNT];
	int differ = 0;
	for (int k = 0; k < SCENE_COUNT; ++k) {
		rb_scene s;
		if (scene_build(&s, (rb_scene_kind)k, small) != 0) return -1;
		rb_run runs[ENGINE_COUNT];
		memset(runs, 0, sizeof runs);
		int rc = 0;
		for (int e = 0; e < ENGINE_COUNT && rc == 0; ++e) {
			if (is_bullet((rb_engine)e) && !bullet) continue;
			if (progress) fprintf(stderr, "  %s (%s)          \r", scene_names[k], engine_text((rb_engine)e));
#ifdef PBD_HAVE_BULLET
			if (is_bullet((rb_engine)e)) {
				rc = run_bullet(&s, e == ENGINE_BULLET_SUB ? PBD_SUBSTEPS : 1, steps, &runs[e]);
				continue;
			}
#endif
			rc = run_pbd(&s, e == ENGINE_PBD_2 ? 2 : 1, steps, &runs[e]);
		}
		if (progress) fprintf(stderr, "%40s\r", "");
		if (rc != 0) {
			scene_free(&s);
			return -1;
		}
		for (int e = 0; e < ENGINE_COUNT; ++e) {
			const bool peer = is_bullet((rb_engine)e);
			if (peer && !bullet) continue;
			const double r1 = !peer && bullet ? runs[e].ms / runs[ENGINE_BULLET].ms : (double)NAN;
			const double rs = !peer && bullet ? runs[e].ms / runs[ENGINE_BULLET_SUB].ms : (double)NAN;
			print_row(&s, (rb_engine)e, &runs[e], r1, rs);
		}
		threads_ratio[k] = runs[ENGINE_PBD_2].ms / runs[ENGINE_PBD_1].ms;
		same[k] = runs[ENGINE_PBD_2].hash == runs[ENGINE_PBD_1].hash;
		if (!same[k]) ++differ;
		scene_free(&s);
	}
	printf("\npbd 2 threads / 1 thread:");
	for (int k = 0; k < SCENE_COUNT; ++k) printf("  %s %.2f", scene_names[k], threads_ratio[k]);
	printf("\npbd state after the last step, 1 and 2 threads:");
	for (int k = 0; k < SCENE_COUNT; ++k) printf("  %s %s", scene_names[k], same[k] ? "same" : "DIFFERENT");
	printf("\n");
	return differ;
}
