/* Random worlds for the soak: every setting drawn across its whole documented range (and the
 * edges of it more often than chance would), cloths, ropes and loose particle clusters, pins,
 * colliders, forces, and changes while the world runs. Only the public API is used. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbd/math.h"
#include "soak.h"

#define MAX_OBJECTS 4

static pbd_real rr(double v) { return (pbd_real)v; }

static void append(char* buf, size_t size, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void append(char* buf, size_t size, const char* fmt, ...) {
	size_t used = strlen(buf);
	if (used + 1 >= size) return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + used, size - used, fmt, ap);
	va_end(ap);
}

/* A uniformly distributed direction, by rejection from the cube. */
static pbd_vec3 random_dir(soak_rng* rng) {
	for (;;) {
		double x = soak_rng_range(rng, -1, 1), y = soak_rng_range(rng, -1, 1), z = soak_rng_range(rng, -1, 1);
		double l2 = x * x + y * y + z * z;
		if (l2 > 1e-4 && l2 <= 1) {
			double l = sqrt(l2);
			return pbd_v3(rr(x / l), rr(y / l), rr(z / l));
		}
	}
}

static pbd_vec3 random_point(soak_rng* rng, double half) {
	return pbd_v3(rr(soak_rng_range(rng, -half, half)), rr(soak_rng_range(rng, -half, half)),
	              rr(soak_rng_range(rng, -half, half)));
}

/* A point of the scene: within 5 m of the world's origin. */
static pbd_vec3 random_place(soak_random* rs) { return pbd_v3_add(rs->origin, random_point(&rs->rng, 5)); }

/* The shortest edge worth building here: 16 steps of the scalar's spacing at the world's
 * distance from 0. Shorter cells far out round to coincident vertices, zero-area triangles and
 * massless vertices, which pbd_soft_create rightly refuses. */
static double min_edge(const soak_random* rs) {
	const double eps = sizeof(pbd_real) == sizeof(float) ? (double)FLT_EPSILON : DBL_EPSILON;
	return 16 * eps * ((double)pbd_v3_length(rs->origin) + 10);
}

/* Log-uniform in [lo, hi], stretched by `decades` at both ends in an extreme world. */
static double spread(soak_random* rs, double lo, double hi, double decades) {
	const double f = rs->extreme ? pow(10, decades) : 1;
	return soak_rng_log(&rs->rng, lo / f, hi * f);
}

/* A force on particle i of mass m giving it an acceleration from 1 cm/s^2 to 1000 m/s^2 (more
 * decades in an extreme world): a wind gust to a blast, whatever the particle weighs. */
static pbd_vec3 random_force(soak_random* rs, uint32_t i) {
	const double a = spread(rs, 1e-2, 1e3, 3);
	const double w = (double)pbd_world_inv_masses(rs->world)[i];
	return pbd_v3_scale(random_dir(&rs->rng), rr(w > 0 ? a / w : a));
}

/* PBD stiffness in [0, 1], with the ends (a slack and a hard link) drawn often. */
static pbd_real random_stiffness(soak_rng* rng) {
	double u = soak_rng_unit(rng);
	return u < 0.1 ? 0 : u < 0.35 ? 1 : rr(soak_rng_unit(rng));
}

/* XPBD compliance: 0 (hard) a quarter of the time, else log-uniform up to 1e-2 m/N. */
static pbd_real random_compliance(soak_rng* rng) {
	return soak_rng_chance(rng, 0.25) ? 0 : rr(soak_rng_log(rng, 1e-10, 1e-2));
}

static pbd_edge_material random_material(soak_rng* rng, double enabled) {
	pbd_edge_material m;
	m.enabled = soak_rng_chance(rng, enabled);
	m.stiffness_stretch = random_stiffness(rng);
	m.stiffness_compress = soak_rng_chance(rng, 0.2) ? 0 : random_stiffness(rng);
	m.compliance_stretch = random_compliance(rng);
	m.compliance_compress = random_compliance(rng);
	return m;
}

static bool refused(soak_result* r, pbd_world* w, const char* call, pbd_status st) {
	snprintf(r->detail, sizeof r->detail, "%s: %s: %s", call, pbd_status_string(st), w ? pbd_world_last_error(w) : "");
	return false;
}

/* Turns a builder's mesh into a body with random masses, materials, pins and motion. */
static bool add_body(soak_random* rs, pbd_mesh* mesh, uint32_t corner_a, uint32_t corner_b, soak_result* r) {
	soak_rng* rng = &rs->rng;
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = mesh;
	bd.mass_mode = (pbd_mass_mode)soak_rng_int(rng, 0, 2);
	bd.mass = bd.mass_mode == PBD_MASS_PER_PARTICLE ? rr(spread(rs, 1e-4, 10, 2))
	          : bd.mass_mode == PBD_MASS_TOTAL      ? rr(spread(rs, 1e-3, 1e3, 2))
	                                                : rr(spread(rs, 1e-3, 10, 2));
	if (soak_rng_chance(rng, 0.4)) bd.velocity = pbd_v3_scale(random_dir(rng), rr(spread(rs, 1e-2, 50, 2)));
	bd.material[PBD_EDGE_STRUCTURAL] = random_material(rng, 0.95);
	bd.material[PBD_EDGE_SHEAR] = random_material(rng, 0.7);
	bd.material[PBD_EDGE_BEND] = random_material(rng, 0.7);
	uint32_t pins[8];
	uint32_t np = 0;
	if (!soak_rng_chance(rng, 0.25)) {
		if (soak_rng_chance(rng, 0.5)) {
			pins[np++] = corner_a;
			if (corner_b != corner_a) pins[np++] = corner_b;
		}
		uint32_t extra = (uint32_t)soak_rng_int(rng, 0, 6);
		for (uint32_t k = 0; k < extra; ++k) pins[np++] = (uint32_t)soak_rng_int(rng, 0, (int)mesh->vertex_count - 1);
	}
	bd.pinned = pins;
	bd.pinned_count = np;
	pbd_soft_info body;
	pbd_soft_id id;
	pbd_status st = pbd_soft_create(rs->world, &bd, &id);
	if (st != PBD_OK) return refused(r, rs->world, "pbd_soft_create", st);
	pbd_soft_get_info(rs->world, id, &body);
	append(r->setup, sizeof r->setup, "/m%d %.3g pins %u", (int)bd.mass_mode, (double)bd.mass, np);
	return true;
}

static bool add_grid(soak_random* rs, soak_result* r) {
	soak_rng* rng = &rs->rng;
	pbd_grid_def gd = pbd_grid_def_default();
	/* A full grid has about 8 constraints per vertex (structural, both diagonals, bend). */
	const int side = (int)fmin(48, fmax(2, floor(sqrt(rs->max_work / (8.0 * rs->objects)))));
	gd.nx = (uint32_t)soak_rng_int_log(rng, 2, side);
	gd.ny = (uint32_t)soak_rng_int_log(rng, 2, side);
	/* Sizes through the cell: a cell from 2 mm to 0.5 m, whatever the resolution. */
	const double cell = fmax(soak_rng_log(rng, 2e-3, 0.5), min_edge(rs));
	gd.size_u = rr(cell * (gd.nx - 1));
	gd.size_v = rr((soak_rng_chance(rng, 0.5) ? cell : fmax(soak_rng_log(rng, 2e-3, 0.5), min_edge(rs))) * (gd.ny - 1));
	gd.origin = random_place(rs);
	pbd_vec3 u = random_dir(rng), v;
	do v = random_dir(rng);
	while (pbd_v3_length(pbd_v3_cross(u, v)) < rr(0.05));
	/* Mostly square cells; sheared ones the rest of the time. */
	if (soak_rng_chance(rng, 0.7)) {
		v = pbd_v3_sub(v, pbd_v3_scale(u, pbd_v3_dot(u, v)));
		v = pbd_v3_scale(v, 1 / pbd_v3_length(v));
	}
	gd.axis_u = u;
	gd.axis_v = v;
	gd.diagonals = soak_rng_int(rng, 0, 2);
	gd.bend = soak_rng_chance(rng, 0.5);
	pbd_mesh mesh;
	pbd_error err;
	pbd_status st = pbd_mesh_grid(&gd, &mesh, &err);
	if (st != PBD_OK) {
		snprintf(r->detail, sizeof r->detail, "pbd_mesh_grid: %.200s", err.message);
		return false;
	}
	append(r->setup, sizeof r->setup, " grid %ux%u %.3gx%.3g d%d%s", gd.nx, gd.ny, (double)gd.size_u, (double)gd.size_v,
	       gd.diagonals, gd.bend ? " b" : "");
	bool ok = add_body(rs, &mesh, 0, gd.nx - 1, r);
	pbd_mesh_free(&mesh);
	return ok;
}

static bool add_rope(soak_random* rs, soak_result* r) {
	soak_rng* rng = &rs->rng;
	pbd_rope_def rd = pbd_rope_def_default();
	const int most = (int)fmin(256, fmax(1, floor(rs->max_work / (4.0 * rs->objects))));
	rd.segments = (uint32_t)soak_rng_int_log(rng, 1, most);
	rd.start = random_place(rs);
	const double length = fmax(soak_rng_log(rng, 2e-3, 0.5), min_edge(rs)) * rd.segments;
	rd.end = pbd_v3_add(rd.start, pbd_v3_scale(random_dir(rng), rr(length)));
	rd.bend = soak_rng_chance(rng, 0.5);
	pbd_mesh mesh;
	pbd_error err;
	pbd_status st = pbd_mesh_rope(&rd, &mesh, &err);
	if (st != PBD_OK) {
		snprintf(r->detail, sizeof r->detail, "pbd_mesh_rope: %.200s", err.message);
		return false;
	}
	append(r->setup, sizeof r->setup, " rope %u%s", rd.segments, rd.bend ? " b" : "");
	bool ok = add_body(rs, &mesh, 0, rd.segments, r);
	pbd_mesh_free(&mesh);
	return ok;
}

/* Loose particles joined by random constraints: coincident particles, zero rest lengths and
 * several constraints on one pair, which no builder makes. */
static bool add_cluster(soak_random* rs, soak_result* r) {
	soak_rng* rng = &rs->rng;
	enum { MAX_N = 64, MAX_C = 3 * MAX_N };
	pbd_vec3 x[MAX_N], v[MAX_N];
	pbd_real inv[MAX_N];
	pbd_distance_def c[MAX_C];
	const uint32_t n = (uint32_t)soak_rng_int(rng, 2, MAX_N);
	const pbd_vec3 center = random_place(rs);
	const double spread = soak_rng_log(rng, 1e-3, 2);
	const bool moving = soak_rng_chance(rng, 0.5);
	for (uint32_t i = 0; i < n; ++i) {
		x[i] = i > 0 && soak_rng_chance(rng, 0.1) ? x[soak_rng_int(rng, 0, (int)i - 1)]
		                                          : pbd_v3_add(center, random_point(rng, spread));
		v[i] = moving ? pbd_v3_scale(random_dir(rng), rr(soak_rng_log(rng, 1e-3, 20))) : pbd_v3(0, 0, 0);
		inv[i] = soak_rng_chance(rng, 0.15) ? 0 : rr(1 / soak_rng_log(rng, 1e-3, 1e3));
	}
	uint32_t first;
	pbd_status st = pbd_world_add_particles(rs->world, n, x, moving ? v : NULL, inv, &first);
	if (st != PBD_OK) return refused(r, rs->world, "pbd_world_add_particles", st);
	const uint32_t m = (uint32_t)soak_rng_int(rng, 1, 3 * (int)n);
	for (uint32_t k = 0; k < m; ++k) {
		c[k] = pbd_distance_def_default();
		uint32_t a = (uint32_t)soak_rng_int(rng, 0, (int)n - 1);
		uint32_t b = (a + (uint32_t)soak_rng_int(rng, 1, (int)n - 1)) % n;
		c[k].a = first + a;
		c[k].b = first + b;
		/* Rest lengths near the start's distances: a constraint far from its rest length at the
		 * start would count as diverged before anything ran. */
		double u = soak_rng_unit(rng);
		double at = (double)pbd_v3_length(pbd_v3_sub(x[a], x[b]));
		c[k].rest = u < 0.35 ? -1 : u < 0.5 ? 0 : rr(at * soak_rng_log(rng, 0.5, 2));
		c[k].stiffness_stretch = random_stiffness(rng);
		c[k].stiffness_compress = random_stiffness(rng);
		c[k].compliance_stretch = random_compliance(rng);
		c[k].compliance_compress = random_compliance(rng);
	}
	st = pbd_world_add_distances(rs->world, m, c, NULL);
	if (st != PBD_OK) return refused(r, rs->world, "pbd_world_add_distances", st);
	append(r->setup, sizeof r->setup, " cluster %u/%u %.3g", n, m, spread);
	return true;
}

/* Moves a collider clear of every particle, as a scene author would place it: a world that
 * starts inside a collider is thrown out of it at once, which says nothing about stability. The
 * other tenth of the time (and when no clear place is found) it stays where it was drawn. */
static void place_clear(soak_random* rs, pbd_collider_def* cd) {
	soak_rng* rng = &rs->rng;
	pbd_world* w = rs->world;
	const uint32_t n = pbd_world_particle_count(w);
	const pbd_vec3* x = pbd_world_positions(w);
	if (n == 0 || soak_rng_chance(rng, 0.1)) return;
	if (cd->type == PBD_SHAPE_PLANE) {
		const pbd_vec3 nrm = pbd_v3_scale(cd->shape.plane.normal, 1 / pbd_v3_length(cd->shape.plane.normal));
		double lowest = INFINITY;
		for (uint32_t i = 0; i < n; ++i) lowest = fmin(lowest, (double)pbd_v3_dot(nrm, x[i]));
		cd->shape.plane.normal = nrm;
		cd->shape.plane.offset = rr(lowest - (double)cd->margin - soak_rng_log(rng, 1e-3, 3));
		return;
	}
	for (int attempt = 0; attempt < 8; ++attempt) {
		double nearest = INFINITY;
		for (uint32_t i = 0; i < n; ++i)
			nearest = fmin(nearest, (double)pbd_v3_length(pbd_v3_sub(x[i], cd->shape.sphere.center)));
		const double room = nearest - (double)cd->margin - 1e-3;
		if (room > 0.05) {
			if ((double)cd->shape.sphere.radius > room)
				cd->shape.sphere.radius = rr(room * soak_rng_range(rng, 0.5, 1));
			return;
		}
		cd->shape.sphere.center = random_place(rs);
	}
}

static bool add_collider(soak_random* rs, soak_result* r) {
	soak_rng* rng = &rs->rng;
	if (rs->collider_count == (int)(sizeof rs->colliders / sizeof rs->colliders[0])) return true;
	pbd_collider_def cd = pbd_collider_def_default();
	if (soak_rng_chance(rng, 0.5)) {
		cd.type = PBD_SHAPE_PLANE;
		/* A floor, tilted or not, most of the time; any orientation otherwise. */
		cd.shape.plane.normal = soak_rng_chance(rng, 0.6)
		                            ? pbd_v3_add(pbd_v3(0, 1, 0), pbd_v3_scale(random_dir(rng), rr(soak_rng_unit(rng))))
		                            : random_dir(rng);
		if (pbd_v3_length(cd.shape.plane.normal) < rr(1e-3)) cd.shape.plane.normal = pbd_v3(0, 1, 0);
		cd.shape.plane.offset = pbd_v3_dot(cd.shape.plane.normal, rs->origin) +
		                        rr(soak_rng_range(rng, -6, 3)) * pbd_v3_length(cd.shape.plane.normal);
	} else {
		cd.type = PBD_SHAPE_SPHERE;
		cd.shape.sphere.center = random_place(rs);
		cd.shape.sphere.radius = rr(soak_rng_log(rng, 0.05, 5));
	}
	cd.margin = soak_rng_chance(rng, 0.5) ? 0 : rr(soak_rng_log(rng, 1e-4, 0.1));
	place_clear(rs, &cd);
	pbd_collider_id id = pbd_collider_create(rs->world, &cd);
	if (id.index1 == 0) {
		snprintf(r->detail, sizeof r->detail, "pbd_collider_create: %s", pbd_world_last_error(rs->world));
		return false;
	}
	rs->colliders[rs->collider_count++] = id;
	append(r->setup, sizeof r->setup, " %s", cd.type == PBD_SHAPE_PLANE ? "plane" : "sphere");
	return true;
}

/* Halves iterations, then substeps, until a step stays under max_work projections. */
static pbd_status fit_work(soak_random* rs, int* substeps, int* iterations) {
	pbd_world* w = rs->world;
	const double per = (double)pbd_world_distance_count(w) + (double)pbd_world_particle_count(w);
	while ((double)*substeps * (double)*iterations * per > rs->max_work) {
		if (*iterations > 1)
			*iterations /= 2;
		else if (*substeps > 1)
			*substeps /= 2;
		else
			break;
	}
	pbd_status st = pbd_world_set_iterations(w, *iterations);
	return st == PBD_OK ? pbd_world_set_substeps(w, *substeps) : st;
}

/* Keeps the target marks as long as the world's particle arrays. */
static void track_particles(soak_random* rs) {
	rs->particles = pbd_world_particle_count(rs->world);
	if (rs->particles <= rs->cap) return;
	uint32_t cap = rs->particles + 64;
	uint8_t* t = (uint8_t*)realloc(rs->targeted, cap);
	pbd_vec3* g = (pbd_vec3*)realloc(rs->goal, cap * sizeof *g);
	if (!t || !g) abort(); /* the soak's own memory; nothing to learn from going on */
	memset(t + rs->cap, 0, cap - rs->cap);
	rs->targeted = t;
	rs->goal = g;
	rs->cap = cap;
}

bool soak_random_create(uint64_t seed, double max_work, pbd_log_fn log, void* log_user, soak_random* rs,
                        soak_result* r) {
	memset(rs, 0, sizeof *rs);
	soak_rng_seed(&rs->rng, seed);
	rs->max_work = max_work;
	soak_rng* rng = &rs->rng;

	rs->extreme = soak_rng_chance(rng, 0.1);
	if (rs->extreme) rs->origin = pbd_v3_scale(random_dir(rng), rr(soak_rng_log(rng, 1e2, 1e6)));
	pbd_world_def wd = pbd_world_def_default();
	wd.dt = rr(soak_rng_log(rng, 1e-4, 0.05));
	wd.substeps = soak_rng_int_log(rng, 1, 64);
	wd.iterations = soak_rng_int_log(rng, 1, 32);
	wd.solver = soak_rng_chance(rng, 0.5) ? PBD_SOLVER_JACOBI : PBD_SOLVER_GAUSS_SEIDEL;
	wd.jacobi_alpha = soak_rng_chance(rng, 0.3) ? 0 : rr(soak_rng_unit(rng));
	wd.jacobi_omega = rr(soak_rng_range(rng, 0.05, 1.95));
	wd.jacobi_equal_split = soak_rng_chance(rng, 0.5);
	wd.formulation = soak_rng_chance(rng, 0.5) ? PBD_FORMULATION_XPBD : PBD_FORMULATION_PBD;
	wd.damping = soak_rng_chance(rng, 0.4) ? 1 : rr(1 - soak_rng_log(rng, 1e-4, 0.99));
	const double g = soak_rng_chance(rng, 0.1) ? 0 : soak_rng_range(rng, 0, 100);
	wd.gravity = pbd_v3_scale(random_dir(rng), rr(g));
	wd.collision_mode = soak_rng_chance(rng, 0.5) ? PBD_COLLISION_AFTER_SOLVER : PBD_COLLISION_IN_SOLVER;
	wd.max_speed = soak_rng_chance(rng, 0.2) ? rr(soak_rng_log(rng, 0.1, 1000)) : 0;
	wd.log = log;
	wd.log_user = log_user;
	pbd_status st = pbd_world_create(&wd, &rs->world);
	if (st != PBD_OK) {
		snprintf(r->detail, sizeof r->detail, "pbd_world_create: %s", pbd_status_string(st));
		return false;
	}

	bool ok = true;
	rs->objects = soak_rng_int(rng, 1, MAX_OBJECTS);
	for (int i = 0; ok && i < rs->objects; ++i) {
		double u = soak_rng_unit(rng);
		ok = u < 0.5 ? add_grid(rs, r) : u < 0.8 ? add_rope(rs, r) : add_cluster(rs, r);
	}
	const int colliders = soak_rng_int(rng, 0, 3);
	for (int i = 0; ok && i < colliders; ++i) ok = add_collider(rs, r);
	pbd_world* w = rs->world;
	if (ok) track_particles(rs);

	if (ok && soak_rng_chance(rng, 0.2)) {
		/* Every particle its own velocity, not one per body. */
		pbd_vec3* v = (pbd_vec3*)malloc(rs->particles * sizeof *v);
		if (!v) abort(); /* the soak's own memory; nothing to learn from going on */
		for (uint32_t i = 0; i < rs->particles; ++i) v[i] = pbd_v3_scale(random_dir(rng), rr(spread(rs, 1e-3, 2, 2)));
		st = pbd_world_set_velocities(w, 0, rs->particles, v);
		free(v);
		if (st != PBD_OK) ok = refused(r, w, "pbd_world_set_velocities", st);
		append(r->setup, sizeof r->setup, " v");
	}
	if (ok && soak_rng_chance(rng, 0.3)) {
		const int forces = soak_rng_int(rng, 1, 16);
		for (int k = 0; ok && k < forces; ++k) {
			uint32_t i = (uint32_t)soak_rng_int(rng, 0, (int)rs->particles - 1);
			st = pbd_particle_set_force(w, i, random_force(rs, i));
			if (st != PBD_OK) ok = refused(r, w, "pbd_particle_set_force", st);
		}
		append(r->setup, sizeof r->setup, " f%d", forces);
	}
	if (ok && rs->extreme && soak_rng_chance(rng, 0.3)) {
		/* A finite force no step can absorb: the velocity overflows, so the library's undo of a
		 * non-finite step, its warning and what it does to the neighbours all get exercised. */
		const uint32_t i = (uint32_t)soak_rng_int(rng, 0, (int)rs->particles - 1);
		const double w_i = (double)pbd_world_inv_masses(w)[i];
		const double a = soak_rng_log(rng, 1e15, 1e30);
		const double most = sizeof(pbd_real) == sizeof(float) ? 1e37 : 1e300;
		st = pbd_particle_set_force(w, i, pbd_v3_scale(random_dir(rng), rr(fmin(w_i > 0 ? a / w_i : a, most))));
		if (st != PBD_OK) ok = refused(r, w, "pbd_particle_set_force", st);
		append(r->setup, sizeof r->setup, " overflow");
	}
	if (ok) {
		int substeps = wd.substeps, iterations = wd.iterations;
		st = fit_work(rs, &substeps, &iterations);
		if (st != PBD_OK) ok = refused(r, w, "pbd_world_set_iterations", st);
		rs->target_rate = soak_rng_chance(rng, 0.3) ? soak_rng_range(rng, 0.05, 1) : 0;
		rs->change_rate = soak_rng_chance(rng, 0.4) ? soak_rng_log(rng, 0.01, 0.5) : 0;
		char head[200];
		snprintf(head, sizeof head, "dt %.3g sub %d it %d %s%s %s damp %.3g g %.3g %s vmax %.3g%s%s", (double)wd.dt,
		         substeps, iterations, wd.solver == PBD_SOLVER_JACOBI ? "jacobi" : "gs",
		         wd.solver == PBD_SOLVER_JACOBI ? (wd.jacobi_equal_split ? "(eq)" : "(mw)") : "",
		         wd.formulation == PBD_FORMULATION_XPBD ? "xpbd" : "pbd", (double)wd.damping, g,
		         wd.collision_mode == PBD_COLLISION_IN_SOLVER ? "in" : "after", (double)wd.max_speed,
		         rs->target_rate > 0 ? " targets" : "", rs->change_rate > 0 ? " changes" : "");
		if (rs->extreme) append(head, sizeof head, " extreme at %.3g m", (double)pbd_v3_length(rs->origin));
		append(head, sizeof head, " |");
		/* The settings go first: they say most about a divergence. */
		char body[sizeof r->setup];
		snprintf(body, sizeof body, "%s", r->setup);
		snprintf(r->setup, sizeof r->setup, "%s", head);
		append(r->setup, sizeof r->setup, "%s", body);
	}
	if (!ok) soak_random_destroy(rs);
	return ok;
}

/* A random pinned particle, or UINT32_MAX when there is none. */
static uint32_t random_pinned(soak_random* rs) {
	const uint32_t n = rs->particles, start = (uint32_t)soak_rng_int(&rs->rng, 0, (int)n - 1);
	for (uint32_t k = 0; k < n; ++k) {
		uint32_t i = (start + k) % n;
		if (pbd_particle_is_pinned(rs->world, i)) return i;
	}
	return UINT32_MAX;
}

static bool event_failed(soak_random* rs, const char* call, pbd_status st, char* msg, size_t msg_size) {
	snprintf(msg, msg_size, "%s: %s: %s", call, pbd_status_string(st), pbd_world_last_error(rs->world));
	return false;
}

#define CALL(expr, name)                                                                                               \
	do {                                                                                                               \
		pbd_status st_ = (expr);                                                                                       \
		if (st_ != PBD_OK) return event_failed(rs, name, st_, msg, msg_size);                                          \
	} while (0)

/* One change of the world while it runs: what an application's slider, grab, spawn or script
 * does. */
static bool random_change(soak_random* rs, char* msg, size_t msg_size) {
	soak_rng* rng = &rs->rng;
	pbd_world* w = rs->world;
	const uint32_t n = rs->particles;
	const uint32_t i = (uint32_t)soak_rng_int(rng, 0, (int)n - 1);
	pbd_world_def d = pbd_world_get_def(w);
	switch (soak_rng_int(rng, 0, 16)) {
	case 0:
		CALL(pbd_world_set_dt(w, rr(soak_rng_log(rng, 1e-4, 0.05))), "pbd_world_set_dt");
		break;
	case 1:
	case 2: {
		int substeps = soak_rng_int_log(rng, 1, 64), iterations = soak_rng_int_log(rng, 1, 32);
		CALL(fit_work(rs, &substeps, &iterations), "pbd_world_set_substeps");
		break;
	}
	case 3:
		CALL(pbd_world_set_solver(w, (pbd_solver)(1 - (int)d.solver)), "pbd_world_set_solver");
		break;
	case 4:
		CALL(pbd_world_set_formulation(w, (pbd_formulation)(1 - (int)d.formulation)), "pbd_world_set_formulation");
		break;
	case 5:
		CALL(pbd_world_set_gravity(w, pbd_v3_scale(random_dir(rng), rr(soak_rng_range(rng, 0, 100)))),
		     "pbd_world_set_gravity");
		break;
	case 6:
		CALL(pbd_world_set_jacobi(w, rr(soak_rng_unit(rng)), rr(soak_rng_range(rng, 0.05, 1.95)),
		                          soak_rng_chance(rng, 0.5)),
		     "pbd_world_set_jacobi");
		break;
	case 7:
		CALL(pbd_world_set_collision_mode(w, (pbd_collision_mode)(1 - (int)d.collision_mode)),
		     "pbd_world_set_collision_mode");
		break;
	case 8: {
		const uint32_t nd = pbd_world_distance_count(w);
		if (nd == 0) break;
		const uint32_t first = (uint32_t)soak_rng_int(rng, 0, (int)nd - 1);
		const uint32_t count = (uint32_t)soak_rng_int(rng, 1, (int)(nd - first));
		pbd_edge_material m = random_material(rng, 1);
		CALL(pbd_world_set_distance_material(w, first, count, &m), "pbd_world_set_distance_material");
		break;
	}
	case 9:
		CALL(pbd_particle_pin(w, i), "pbd_particle_pin");
		break;
	case 10: {
		uint32_t k = random_pinned(rs);
		if (k == UINT32_MAX) break;
		CALL(pbd_particle_unpin(w, k), "pbd_particle_unpin");
		rs->targeted[k] = 0;
		break;
	}
	case 11: {
		/* A kick, as a grab-and-throw would give. */
		pbd_vec3 v = pbd_v3_scale(random_dir(rng), rr(spread(rs, 1e-2, 20, 2)));
		CALL(pbd_world_set_velocities(w, i, 1, &v), "pbd_world_set_velocities");
		break;
	}
	case 12:
		CALL(pbd_particle_set_force(w, i, soak_rng_chance(rng, 0.3) ? pbd_v3(0, 0, 0) : random_force(rs, i)),
		     "pbd_particle_set_force");
		break;
	case 13: {
		/* An object dropped into the running world: the arrays grow and the constraints are
		 * scheduled again between two steps. */
		if (rs->spawned >= 8) break;
		rs->spawned++;
		rs->objects++;
		soak_result scratch;
		memset(&scratch, 0, sizeof scratch);
		const double u = soak_rng_unit(rng);
		if (!(u < 0.4 ? add_rope(rs, &scratch) : u < 0.7 ? add_cluster(rs, &scratch) : add_grid(rs, &scratch))) {
			snprintf(msg, msg_size, "%s", scratch.detail);
			return false;
		}
		track_particles(rs);
		int substeps = d.substeps, iterations = d.iterations;
		CALL(fit_work(rs, &substeps, &iterations), "pbd_world_set_iterations");
		break;
	}
	case 14: {
		/* A grab: a free particle put somewhere else, as a viewer's drag does. */
		if (pbd_particle_is_pinned(w, i)) break;
		pbd_vec3 x =
		    pbd_v3_add(pbd_world_positions(w)[i], pbd_v3_scale(random_dir(rng), rr(soak_rng_log(rng, 1e-4, 0.1))));
		CALL(pbd_world_set_positions(w, i, 1, &x), "pbd_world_set_positions");
		break;
	}
	case 15:
		CALL(pbd_particle_set_inv_mass(w, i, rr(1 / soak_rng_log(rng, 1e-4, 1e3))), "pbd_particle_set_inv_mass");
		break;
	default:
		if (rs->collider_count > 0 && soak_rng_chance(rng, 0.5)) {
			int k = soak_rng_int(rng, 0, rs->collider_count - 1);
			CALL(pbd_collider_destroy(w, rs->colliders[k]), "pbd_collider_destroy");
			rs->colliders[k] = rs->colliders[--rs->collider_count];
		} else {
			soak_result scratch;
			memset(&scratch, 0, sizeof scratch);
			if (!add_collider(rs, &scratch)) {
				snprintf(msg, msg_size, "%s", scratch.detail);
				return false;
			}
		}
		break;
	}
	return true;
}

bool soak_random_events(soak_random* rs, char* msg, size_t msg_size) {
	soak_rng* rng = &rs->rng;
	if (rs->target_rate > 0 && soak_rng_chance(rng, rs->target_rate)) {
		uint32_t i = random_pinned(rs);
		if (i != UINT32_MAX) {
			const pbd_vec3 at = pbd_world_positions(rs->world)[i];
			/* A hand moving at up to 5 m/s: the pin's path over one step. */
			const double speed = soak_rng_log(rng, 1e-3, 5);
			const pbd_real dt = pbd_world_get_def(rs->world).dt;
			const pbd_vec3 to = pbd_v3_add(at, pbd_v3_scale(random_dir(rng), rr(speed) * dt));
			CALL(pbd_particle_set_target(rs->world, i, to), "pbd_particle_set_target");
			rs->targeted[i] = 1;
			rs->goal[i] = to;
			rs->targets++;
		}
	}
	if (rs->change_rate > 0 && soak_rng_chance(rng, rs->change_rate)) {
		rs->changes++;
		return random_change(rs, msg, msg_size);
	}
	return true;
}

#undef CALL

void soak_random_destroy(soak_random* rs) {
	pbd_world_destroy(rs->world);
	free(rs->targeted);
	free(rs->goal);
	memset(rs, 0, sizeof *rs);
}
