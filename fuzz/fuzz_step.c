/* libFuzzer target: the step on a world built from a recipe. The input bytes are read as world
 * settings, then as a list of operations through the public API (particles with inverse mass 0
 * among them, distance constraints, colliders, pins, targets, forces, bodies from the grid and
 * rope builders, setting changes, steps). Every value may be in range or not; the library must
 * refuse what it cannot take, with a message and without changing the world, and after every
 * step:
 *  - no position or velocity is NaN or infinite unless PBD_WARN_NONFINITE or PBD_WARN_DIVERGED
 *    says so;
 *  - every pinned particle (inverse mass 0) that was not given a target for that step stays where
 *    it was, bit for bit.
 * Sizes are bounded (particles, constraints, substeps, iterations, steps) so that one input runs
 * in milliseconds. The recipe format is documented in docs/fuzzing.md. */
#include <float.h>
#include <stddef.h>
#include <stdint.h>

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

enum {
	MAX_PARTICLES = 512,
	MAX_DISTANCES = 1024,
	MAX_SUBSTEPS = 8,
	MAX_ITERATIONS = 16,
	MAX_STEPS = 24,
	MAX_OPS = 64,
};

/* The input as a stream; past its end every read gives zeros. */
typedef struct reader {
	const uint8_t* p;
	size_t n;
} reader;

static uint8_t rd_u8(reader* r) {
	if (!r->n) return 0;
	r->n--;
	return *r->p++;
}

static uint32_t rd_u16(reader* r) {
	const uint32_t lo = rd_u8(r);
	return lo | (uint32_t)rd_u8(r) << 8;
}

static uint32_t rd_u32(reader* r) { return rd_u16(r) | rd_u16(r) << 16; }

/* A scalar: mostly ordinary magnitudes, sometimes the values that break arithmetic (0, -0,
 * denormals, the largest finite, infinities, NaN) or any bit pattern at all. */
static pbd_real rd_real(reader* r) {
	static const float special[] = {0.0f,  -0.0f, 1.0f,    -1.0f,    1e-30f,   1e30f,     FLT_MAX, -FLT_MAX,
	                                1e-6f, 1e6f,  FLT_MIN, 1.4e-45f, INFINITY, -INFINITY, NAN,     0.5f};
	const uint8_t tag = rd_u8(r);
	switch (tag & 7) {
	case 0:
	case 1:
	case 2:
		return (pbd_real)(int16_t)rd_u16(r) / (pbd_real)1000; /* [-32.8, 32.8] */
	case 3:
		return (pbd_real)rd_u8(r) / (pbd_real)255; /* [0, 1]: stiffness, damping */
	case 4:
		return (pbd_real)(int16_t)rd_u16(r) / (pbd_real)10;
	case 5:
		return (pbd_real)special[rd_u8(r) & 15];
	case 6: {
		const uint32_t bits = rd_u32(r);
		float f;
		memcpy(&f, &bits, sizeof f);
		return (pbd_real)f;
	}
	default:
		return (pbd_real)(int8_t)rd_u8(r);
	}
}

static pbd_vec3 rd_vec3(reader* r) {
	const pbd_real x = rd_real(r), y = rd_real(r);
	return pbd_v3(x, y, rd_real(r));
}

/* A particle index: usually one that exists, sometimes just past the end or far off. */
static uint32_t rd_index(reader* r, uint32_t n) {
	const uint8_t t = rd_u8(r);
	if (t == 255) return rd_u32(r);
	if (n == 0 || t == 254) return n;
	return rd_u16(r) % n;
}

/* PBD_FUZZ_TRACE=1 in the environment prints every operation and its result, to read what a
 * saved reproducer does (docs/fuzzing.md). */
static int trace = -1;
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static void
tr(const char* fmt, ...) {
	if (trace < 0) trace = getenv("PBD_FUZZ_TRACE") != NULL;
	if (!trace) return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

typedef struct harness {
	pbd_world* w;
	unsigned char moving[MAX_PARTICLES + 64]; /* given a target since the last step */
	int steps;
} harness;

/* A refused call must leave the world as it was: counts unchanged and a message given. */
static void check_refused(const harness* h, pbd_status st, uint32_t np, uint32_t nd, uint32_t nt, const char* what) {
	if (st == PBD_OK) return;
	if (pbd_world_particle_count(h->w) != np || pbd_world_distance_count(h->w) != nd ||
	    pbd_world_triangle_count(h->w) != nt)
		fuzz_fail("%s failed (%s) but changed the world's counts", what, pbd_status_string(st));
	const char* msg = pbd_world_last_error(h->w);
	if (!msg || !msg[0]) fuzz_fail("%s failed (%s) without a message", what, pbd_status_string(st));
}

static void op_add_particles(harness* h, reader* r, bool by_mass) {
	const uint32_t np = pbd_world_particle_count(h->w);
	uint32_t count = 1 + rd_u8(r) % 16;
	if (np + count > MAX_PARTICLES) return;
	pbd_vec3 x[16], v[16];
	pbd_real m[16];
	const bool with_v = rd_u8(r) & 1;
	for (uint32_t i = 0; i < count; ++i) {
		x[i] = rd_vec3(r);
		if (with_v) v[i] = rd_vec3(r);
		/* Inverse masses: 0 (pinned) about one time in four. */
		const uint8_t k = rd_u8(r);
		m[i] = (k & 3) == 0 && !by_mass ? 0 : rd_real(r);
	}
	if (rd_u8(r) == 0xff) count = 0; /* a zero count must be refused or be harmless */
	uint32_t first = UINT32_MAX;
	const pbd_status st = by_mass ? pbd_world_add_particles_mass(h->w, count, x, with_v ? v : NULL, m, &first)
	                              : pbd_world_add_particles(h->w, count, x, with_v ? v : NULL, m, &first);
	tr("add particles%s x%u (first at %g %g %g, inverse mass %g) -> %s", by_mass ? " by mass" : "", count,
	   (double)x[0].x, (double)x[0].y, (double)x[0].z, (double)m[0], pbd_status_string(st));
	check_refused(h, st, np, pbd_world_distance_count(h->w), pbd_world_triangle_count(h->w), "add particles");
	if (st == PBD_OK && (first != np || pbd_world_particle_count(h->w) != np + count))
		fuzz_fail("add particles: first %u, count %u after adding %u to %u", first, pbd_world_particle_count(h->w),
		          count, np);
}

static void op_add_distances(harness* h, reader* r) {
	const uint32_t np = pbd_world_particle_count(h->w), nd = pbd_world_distance_count(h->w);
	const uint32_t count = 1 + rd_u8(r) % 32;
	if (nd + count > MAX_DISTANCES) return;
	pbd_distance_def d[32];
	const uint8_t mode = rd_u8(r);
	for (uint32_t k = 0; k < count; ++k) {
		d[k] = pbd_distance_def_default();
		d[k].a = rd_index(r, np);
		d[k].b = rd_index(r, np);
		if (mode & 1) d[k].rest = rd_real(r);
		if (mode & 2) {
			d[k].stiffness_stretch = rd_real(r);
			d[k].stiffness_compress = rd_real(r);
		}
		if (mode & 4) {
			d[k].compliance_stretch = rd_real(r);
			d[k].compliance_compress = rd_real(r);
		}
	}
	uint32_t first = UINT32_MAX;
	const pbd_status st = pbd_world_add_distances(h->w, count, d, &first);
	tr("add distances x%u (first %u-%u rest %g stiffness %g/%g compliance %g/%g) -> %s", count, d[0].a, d[0].b,
	   (double)d[0].rest, (double)d[0].stiffness_stretch, (double)d[0].stiffness_compress,
	   (double)d[0].compliance_stretch, (double)d[0].compliance_compress, pbd_status_string(st));
	check_refused(h, st, np, nd, pbd_world_triangle_count(h->w), "add distances");
	if (st == PBD_OK) {
		if (first != nd || pbd_world_distance_count(h->w) != nd + count) fuzz_fail("add distances: wrong counts");
		for (uint32_t k = 0; k < count; ++k) {
			pbd_distance_def back;
			if (pbd_world_get_distance(h->w, nd + k, &back) != PBD_OK || back.a != d[k].a || back.b != d[k].b)
				fuzz_fail("distance %u does not read back", nd + k);
			if (!isfinite(back.rest) || back.rest < 0)
				fuzz_fail("distance %u accepted with rest length %g", nd + k, (double)back.rest);
		}
	}
}

static void op_collider(harness* h, reader* r) {
	const uint8_t k = rd_u8(r);
	if (k & 0x80) { /* remove one, maybe a stale or made-up id */
		pbd_collider_id id = {rd_u8(r) % 6, rd_u8(r) % 3};
		const uint32_t before = pbd_world_collider_count(h->w);
		const bool valid = pbd_collider_is_valid(h->w, id);
		const pbd_status st = pbd_collider_destroy(h->w, id);
		tr("destroy collider %u/%u -> %s", id.index1, id.generation, pbd_status_string(st));
		if ((st == PBD_OK) != valid) fuzz_fail("collider destroy: status %d for an id valid=%d", (int)st, valid);
		if (st == PBD_OK && pbd_collider_is_valid(h->w, id)) fuzz_fail("collider id valid after destroy");
		if (st == PBD_OK && pbd_world_collider_count(h->w) + 1 != before) fuzz_fail("collider count not decreased");
		return;
	}
	if (pbd_world_collider_count(h->w) >= 4) return;
	pbd_collider_def c = pbd_collider_def_default();
	c.type = (pbd_shape_type)(k % 3); /* 2 is no shape */
	if (c.type == PBD_SHAPE_PLANE) {
		c.shape.plane.normal = rd_vec3(r);
		c.shape.plane.offset = rd_real(r);
	} else {
		c.shape.sphere.center = rd_vec3(r);
		c.shape.sphere.radius = rd_real(r);
	}
	if (k & 0x40) c.margin = rd_real(r);
	const pbd_collider_id id = pbd_collider_create(h->w, &c);
	tr("collider %s (%g %g %g, %g) margin %g -> id %u", c.type == PBD_SHAPE_PLANE ? "plane" : "sphere",
	   (double)c.shape.sphere.center.x, (double)c.shape.sphere.center.y, (double)c.shape.sphere.center.z,
	   (double)c.shape.sphere.radius, (double)c.margin, id.index1);
	if (id.index1 && !pbd_collider_is_valid(h->w, id)) fuzz_fail("new collider id is not valid");
	if (id.index1) {
		pbd_collider_def back;
		if (pbd_collider_get_def(h->w, id, &back) != PBD_OK) fuzz_fail("new collider cannot be read back");
	}
}

static void op_particle(harness* h, reader* r) {
	const uint8_t k = rd_u8(r);
	const uint32_t np = pbd_world_particle_count(h->w);
	const uint32_t i = rd_index(r, np);
	pbd_status st;
	switch (k % 6) {
	case 0:
		st = pbd_particle_pin(h->w, i);
		tr("pin %u -> %s", i, pbd_status_string(st));
		if (st == PBD_OK && (pbd_world_inv_masses(h->w)[i] != 0 || !pbd_particle_is_pinned(h->w, i)))
			fuzz_fail("pinned particle %u has inverse mass %g", i, (double)pbd_world_inv_masses(h->w)[i]);
		break;
	case 1:
		st = pbd_particle_unpin(h->w, i);
		tr("unpin %u -> %s", i, pbd_status_string(st));
		break;
	case 2: {
		const pbd_vec3 t = rd_vec3(r);
		st = pbd_particle_set_target(h->w, i, t);
		tr("target %u to %g %g %g -> %s", i, (double)t.x, (double)t.y, (double)t.z, pbd_status_string(st));
		if (st == PBD_OK) {
			if (i >= np) fuzz_fail("target accepted for particle %u of %u", i, np);
			h->moving[i] = 1;
		}
		break;
	}
	case 3: {
		const pbd_vec3 f = rd_vec3(r);
		st = pbd_particle_set_force(h->w, i, f);
		tr("force on %u: %g %g %g -> %s", i, (double)f.x, (double)f.y, (double)f.z, pbd_status_string(st));
		break;
	}
	case 4: {
		const pbd_real m = rd_real(r);
		st = pbd_particle_set_inv_mass(h->w, i, m);
		tr("inverse mass of %u: %g -> %s", i, (double)m, pbd_status_string(st));
		if (st == PBD_OK && !(m > 0)) fuzz_fail("inverse mass %g accepted for particle %u", (double)m, i);
		break;
	}
	default: {
		/* Overwrite positions or velocities of a range. */
		const uint32_t count = rd_u8(r) % 4;
		pbd_vec3 v[4];
		for (uint32_t j = 0; j < count; ++j) v[j] = rd_vec3(r);
		st = (k & 0x80) ? pbd_world_set_velocities(h->w, i, count, v) : pbd_world_set_positions(h->w, i, count, v);
		tr("set %s of %u (+%u) -> %s", (k & 0x80) ? "velocities" : "positions", i, count, pbd_status_string(st));
		break;
	}
	}
}

static void op_settings(harness* h, reader* r) {
	const uint8_t k = rd_u8(r);
	pbd_status st;
	switch (k % 10) {
	case 0: {
		const pbd_real dt = rd_real(r);
		st = pbd_world_set_dt(h->w, dt);
		tr("dt %g -> %s", (double)dt, pbd_status_string(st));
		break;
	}
	case 1: {
		const int n = (int)(rd_u8(r) % (MAX_SUBSTEPS + 2)) - 1;
		st = pbd_world_set_substeps(h->w, n);
		tr("substeps %d -> %s", n, pbd_status_string(st));
		break;
	}
	case 2: {
		const int n = (int)(rd_u8(r) % (MAX_ITERATIONS + 2)) - 1;
		st = pbd_world_set_iterations(h->w, n);
		tr("iterations %d -> %s", n, pbd_status_string(st));
		break;
	}
	case 3: {
		const int n = rd_u8(r) % 3;
		st = pbd_world_set_solver(h->w, (pbd_solver)n);
		tr("solver %d -> %s", n, pbd_status_string(st));
		break;
	}
	case 4: {
		const int n = rd_u8(r) % 3;
		st = pbd_world_set_formulation(h->w, (pbd_formulation)n);
		tr("formulation %d -> %s", n, pbd_status_string(st));
		break;
	}
	case 5: {
		const pbd_vec3 g = rd_vec3(r);
		st = pbd_world_set_gravity(h->w, g);
		tr("gravity %g %g %g -> %s", (double)g.x, (double)g.y, (double)g.z, pbd_status_string(st));
		break;
	}
	case 6: {
		const pbd_real d = rd_real(r);
		st = pbd_world_set_damping(h->w, d);
		tr("damping %g -> %s", (double)d, pbd_status_string(st));
		break;
	}
	case 7: {
		const pbd_real alpha = rd_real(r), omega = rd_real(r);
		const bool split = rd_u8(r) & 1;
		st = pbd_world_set_jacobi(h->w, alpha, omega, split);
		tr("jacobi alpha %g omega %g split %d -> %s", (double)alpha, (double)omega, split, pbd_status_string(st));
		break;
	}
	case 8: {
		/* every method and one past the end */
		const int n = rd_u8(r) % (PBD_METHOD_COUNT + 1);
		st = pbd_world_set_method(h->w, (pbd_method)n);
		tr("method %d -> %s", n, pbd_status_string(st));
		break;
	}
	default: {
		const int n = rd_u8(r) % 3;
		st = pbd_world_set_collision_mode(h->w, (pbd_collision_mode)n);
		tr("collision mode %d -> %s", n, pbd_status_string(st));
		break;
	}
	}
	/* The settings the world runs with stay inside what its setters accept. */
	const pbd_world_def d = pbd_world_get_def(h->w);
	if (d.substeps < 1 || d.substeps > MAX_SUBSTEPS || d.iterations < 1 || d.iterations > MAX_ITERATIONS ||
	    !(d.dt > 0) || !isfinite(d.dt))
		fuzz_fail("world settings out of range: substeps %d iterations %d dt %g", d.substeps, d.iterations,
		          (double)d.dt);
}

static void op_material(harness* h, reader* r) {
	const uint32_t nd = pbd_world_distance_count(h->w);
	const uint32_t first = rd_index(r, nd), count = rd_u8(r) % 8;
	pbd_edge_material m;
	m.enabled = true;
	m.stiffness_stretch = rd_real(r);
	m.stiffness_compress = rd_real(r);
	m.compliance_stretch = rd_real(r);
	m.compliance_compress = rd_real(r);
	const pbd_status st = pbd_world_set_distance_material(h->w, first, count, &m);
	tr("material of distances %u (+%u): stiffness %g/%g compliance %g/%g -> %s", first, count,
	   (double)m.stiffness_stretch, (double)m.stiffness_compress, (double)m.compliance_stretch,
	   (double)m.compliance_compress, pbd_status_string(st));
}

static void op_triangles(harness* h, reader* r) {
	const uint32_t np = pbd_world_particle_count(h->w), nt = pbd_world_triangle_count(h->w);
	const uint32_t count = 1 + rd_u8(r) % 4;
	uint32_t t[12];
	for (uint32_t k = 0; k < 3 * count; ++k) t[k] = rd_index(r, np);
	const pbd_status st = pbd_world_add_triangles(h->w, count, t, NULL);
	tr("add triangles x%u (first %u %u %u) -> %s", count, t[0], t[1], t[2], pbd_status_string(st));
	check_refused(h, st, np, pbd_world_distance_count(h->w), nt, "add triangles");
}

/* A body from the grid or rope builder, with every def field from the input. */
static void op_body(harness* h, reader* r) {
	const uint8_t k = rd_u8(r);
	pbd_mesh m;
	pbd_error err;
	pbd_status st;
	if (k & 1) {
		pbd_grid_def g = pbd_grid_def_default();
		g.nx = rd_u8(r) % 9;
		g.ny = rd_u8(r) % 9;
		g.size_u = rd_real(r);
		g.size_v = rd_real(r);
		g.origin = rd_vec3(r);
		if (k & 2) g.axis_u = rd_vec3(r);
		if (k & 4) g.axis_v = rd_vec3(r);
		g.diagonals = (int)(rd_u8(r) % 4);
		g.bend = k & 8;
		st = pbd_mesh_grid(&g, &m, &err);
	} else {
		pbd_rope_def d = pbd_rope_def_default();
		d.segments = rd_u8(r) % 40;
		d.start = rd_vec3(r);
		d.end = rd_vec3(r);
		d.bend = k & 8;
		st = pbd_mesh_rope(&d, &m, &err);
	}
	tr("%s -> %s %s", (k & 1) ? "grid" : "rope", pbd_status_string(st), st == PBD_OK ? "" : err.message);
	if (st != PBD_OK) {
		if (!err.message[0] || m.positions) fuzz_fail("builder failed without a message or left a mesh");
		return;
	}
	for (uint32_t e = 0; e < m.edge_count; ++e) {
		const pbd_vec3 d = pbd_v3_sub(m.positions[m.edges[2 * e]], m.positions[m.edges[2 * e + 1]]);
		if (!isfinite(pbd_v3_length(d))) fuzz_fail("builder made edge %u without a finite length", e);
	}
	const uint32_t np = pbd_world_particle_count(h->w), nd = pbd_world_distance_count(h->w);
	if (np + m.vertex_count > MAX_PARTICLES || nd + m.edge_count > MAX_DISTANCES) {
		pbd_mesh_free(&m);
		return;
	}
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.translation = (k & 16) ? rd_vec3(r) : pbd_v3(0, 0, 0);
	bd.velocity = (k & 32) ? rd_vec3(r) : pbd_v3(0, 0, 0);
	bd.mass_mode = (pbd_mass_mode)(rd_u8(r) % 4);
	bd.mass = rd_real(r);
	for (int e = 0; e < PBD_EDGE_KIND_COUNT; ++e)
		if (k & 64) {
			bd.material[e].enabled = rd_u8(r) & 1;
			bd.material[e].stiffness_stretch = rd_real(r);
			bd.material[e].compliance_stretch = rd_real(r);
		}
	uint32_t pinned[4];
	bd.pinned_count = rd_u8(r) % 5;
	for (uint32_t p = 0; p < bd.pinned_count; ++p) pinned[p] = rd_index(r, m.vertex_count);
	bd.pinned = pinned;
	pbd_soft_info body;
	pbd_soft_id id;
	st = pbd_soft_create(h->w, &bd, &id);
	if (st == PBD_OK) st = pbd_soft_get_info(h->w, id, &body);
	tr("body of %u vertices, %u edges, mass mode %d mass %g, %u pinned -> %s", m.vertex_count, m.edge_count,
	   (int)bd.mass_mode, (double)bd.mass, bd.pinned_count, pbd_status_string(st));
	check_refused(h, st, np, nd, pbd_world_triangle_count(h->w), "body create");
	if (st == PBD_OK && (body.first_particle != np || body.particle_count != m.vertex_count))
		fuzz_fail("body landed at %u (+%u), expected %u (+%u)", body.first_particle, body.particle_count, np,
		          m.vertex_count);
	pbd_mesh_free(&m);
}

static void op_step(harness* h, reader* r) {
	const int n = 1 + rd_u8(r) % 3;
	for (int s = 0; s < n && h->steps < MAX_STEPS; ++s, ++h->steps) {
		fuzz_pins pins;
		fuzz_pins_take(&pins, h->w, h->moving);
		fuzz_step_once(h->w);
		tr("step %d: %u particles (%u pinned), %u distances, %u colliders; warnings nonfinite %llu diverged %llu",
		   h->steps + 1, pbd_world_particle_count(h->w), pins.n, pbd_world_distance_count(h->w),
		   pbd_world_collider_count(h->w), (unsigned long long)pbd_world_get_warning(h->w, PBD_WARN_NONFINITE).count,
		   (unsigned long long)pbd_world_get_warning(h->w, PBD_WARN_DIVERGED).count);
		fuzz_check_finite(h->w);
		fuzz_pins_check(&pins, h->w);
		memset(h->moving, 0, sizeof h->moving);
		pbd_stats st;
		pbd_world_get_stats(h->w, &st);
		if (st.particles != pbd_world_particle_count(h->w)) fuzz_fail("stats count %u particles", st.particles);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
	reader r = {data, size};
	pbd_world_def wd = pbd_world_def_default();
	const uint8_t flags = rd_u8(&r);
	if (flags & 1) wd.gravity = rd_vec3(&r);
	if (flags & 2) wd.dt = rd_real(&r);
	wd.substeps = 1 + rd_u8(&r) % MAX_SUBSTEPS;
	wd.iterations = 1 + rd_u8(&r) % MAX_ITERATIONS;
	wd.solver = (pbd_solver)(rd_u8(&r) % 2);
	wd.formulation = (pbd_formulation)(rd_u8(&r) % 2);
	if (flags & 4) wd.damping = rd_real(&r);
	if (flags & 8) {
		wd.jacobi_alpha = rd_real(&r);
		wd.jacobi_omega = rd_real(&r);
		wd.jacobi_equal_split = rd_u8(&r) & 1;
	}
	wd.collision_mode = (pbd_collision_mode)(rd_u8(&r) % 2);
	if (flags & 16) wd.max_speed = rd_real(&r);
	wd.diagnostics = flags & 32;
	harness h;
	memset(&h, 0, sizeof h);
	const pbd_status created = pbd_world_create(&wd, &h.w);
	tr("world: gravity %g %g %g dt %g substeps %d iterations %d solver %d formulation %d damping %g jacobi %g %g %d "
	   "collision %d max speed %g -> %s",
	   (double)wd.gravity.x, (double)wd.gravity.y, (double)wd.gravity.z, (double)wd.dt, wd.substeps, wd.iterations,
	   (int)wd.solver, (int)wd.formulation, (double)wd.damping, (double)wd.jacobi_alpha, (double)wd.jacobi_omega,
	   wd.jacobi_equal_split, (int)wd.collision_mode, (double)wd.max_speed, pbd_status_string(created));
	if (created != PBD_OK) {
		if (h.w) fuzz_fail("pbd_world_create failed but returned a world");
		return 0;
	}
	for (int op = 0; op < MAX_OPS && r.n; ++op) {
		switch (rd_u8(&r) % 10) {
		case 0:
			op_add_particles(&h, &r, false);
			break;
		case 1:
			op_add_particles(&h, &r, true);
			break;
		case 2:
			op_add_distances(&h, &r);
			break;
		case 3:
			op_collider(&h, &r);
			break;
		case 4:
		case 5:
			op_particle(&h, &r);
			break;
		case 6:
			op_settings(&h, &r);
			break;
		case 7:
			op_body(&h, &r);
			break;
		case 8:
			rd_u8(&r) & 1 ? op_material(&h, &r) : op_triangles(&h, &r);
			break;
		default:
			op_step(&h, &r);
			break;
		}
	}
	/* Every recipe ends with a step, so that recipes cut short still exercise it. */
	if (h.steps < MAX_STEPS) {
		reader none = {NULL, 0};
		op_step(&h, &none);
	}
	pbd_world_destroy(h.w);
	return 0;
}
