/* libFuzzer target: the step on a world built from a recipe, run twice. The input bytes are read
 * as world settings (every method, solver, formulation, the hierarchy, 1 to 4 threads of the
 * built-in pool, every SIMD kernel), then as a list of operations through the public API:
 * particles, every constraint family by its single add call, colliders of every shape (static,
 * kinematic, triggers), soft bodies from every mesh builder (cloth grids, ropes, triangle meshes,
 * tetrahedral boxes and balls, balloons) with every soft def option, rigid bodies of every type
 * with shapes of every kind on them, their matter given or measured from those shapes, and
 * particles attached to points of them, pins, targets, forces, impulses, pushes, poses and
 * velocities of bodies, materials and setting changes between steps. Every value may be in range
 * or not; the library must refuse what it cannot take, with a message and without changing the
 * world.
 *
 * The same recipe builds a second world that runs on 1 thread with the scalar kernels. The library
 * promises the same bits for any thread count and kernel (README, "Threads and SIMD"), so after
 * every step the two must agree on every position, velocity, hash, warning, statistic, contact and
 * trigger event, on every rigid body's frame and state, and every call must give both the same
 * status. After every step, also:
 *  - no position or velocity is NaN or infinite unless that step reported PBD_WARN_NONFINITE or
 *    PBD_WARN_DIVERGED, and every rigid body's state is finite (the step undoes a body's motion
 *    that would not be);
 *  - every pinned particle (inverse mass 0) that was not given a target for that step stays where
 *    it was, bit for bit, and so does every static body; a kinematic body keeps its velocities.
 * Each world allocates through its own capped allocator (fuzz_util.h: FUZZ_HEAP_CAP, or far less
 * when the recipe asks, to take the library down its out-of-memory paths) that checks the size the
 * library gives back with every block and that a destroyed world holds nothing; a call may report
 * PBD_ERR_OUT_OF_MEMORY only after the allocator refused something. Sizes are bounded
 * (particles, constraints, substeps, iterations, steps, a budget of projections) so that one input
 * runs in well under a second.
 * The recipe format is documented in docs/fuzzing.md; fuzz/make_step_seeds.py writes the seeds. */
#include <float.h>
#include <stddef.h>
#include <stdint.h>

#include "fuzz_tables.h"
#include "fuzz_util.h"
#include "model/world.h" /* the stage block sizes, which the tests of threads lower too (tests/world/test_threads.c) */

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

enum {
	MAX_PARTICLES = 512,
	MAX_CONSTRAINTS = 1024, /* per family */
	MAX_TRIANGLES = 1024,
	MAX_COLLIDERS = 8,
	MAX_BODIES = 8,  /* rigid bodies made by a recipe */
	BODY_SHAPES = 4, /* shapes of one body whose matter is measured */
	MAX_SUBSTEPS = 8,
	MAX_ITERATIONS = 16,
	MAX_STEPS = 16,
	MAX_OPS = 64,
	MAX_THREADS = 4,
	ADD_MAX = 8,          /* constraints per single add call */
	SHAPE_POINTS = 16,    /* convex hull points, collider mesh vertices */
	SHAPE_TRIANGLES = 16, /* collider mesh triangles */
	FIELD_SAMPLES = 8,    /* height field samples along x and z */
	CLUSTER_MAX = 32,     /* members of a shape-matching cluster */
	VOLUME_TRIANGLES = 256,
};

/* The methods a world is created with and a setting switches to (one past the last too). */
enum { METHODS = PBD_METHOD_COUNT };

/* Projections (substeps x iterations x constraints, colliders and particles) both worlds together
 * may run for one input: the steps past it are skipped. */
#define WORK_BUDGET 4e5

/* ---- the input as a stream; past its end every read gives zeros -------------------------- */

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

#define SAME(a, b) (memcmp(&(a), &(b), sizeof(a)) == 0)

/* An index below n: usually one that exists, sometimes just past the end or far off. */
static uint32_t rd_index(reader* r, uint32_t n) {
	const uint8_t t = rd_u8(r);
	if (t == 255) return rd_u32(r);
	if (n == 0 || t == 254) return n;
	return rd_u16(r) % n;
}

/* An integer in [lo, hi] from one byte: a setting's range and the values just outside it. */
static int rd_int(reader* r, int lo, int hi) { return lo + (int)(rd_u8(r) % (unsigned)(hi - lo + 1)); }

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

/* ---- two worlds, one recipe ---------------------------------------------------------------- */

/* The stage block sizes of both worlds, from the input: the defaults, or blocks small enough that
 * a world of a few hundred particles runs its stages on several threads. The same in both worlds
 * (the statistics sum per block), and set again after pbd_world_set_threads, which resets them. */
typedef struct blocks {
	uint32_t constraints, particles, min_blocks;
} blocks;

typedef struct harness {
	pbd_world* w[2]; /* [0]: threads and kernels from the input; [1]: 1 thread, scalar kernels */
	fuzz_heap heap[2];
	blocks blk;
	pbd_collider_id colliders[MAX_COLLIDERS];
	uint32_t collider_count;
	pbd_body_id bodies[MAX_BODIES]; /* made by the recipe, maybe destroyed since */
	pbd_body_type body_types[MAX_BODIES];
	uint32_t body_count;
	unsigned char moving[MAX_PARTICLES + 64]; /* given a target since the last step */
	int steps;
	double work;
	/* An allocation was refused in one world and not in the other: they may differ from here on,
	 * so the recipe ends. */
	bool stop;
} harness;

/* Runs `expr` on both worlds (as W), its result into st[0] and st[1]. */
#define BOTH(st, expr)                                                                                                 \
	do {                                                                                                               \
		for (int both_k = 0; both_k < 2; ++both_k) {                                                                   \
			pbd_world* const W = h->w[both_k];                                                                         \
			(st)[both_k] = (expr);                                                                                     \
		}                                                                                                              \
	} while (0)

static const char* simd_name(pbd_simd s) {
	static const char* const names[] = {"auto", "scalar", "avx2", "avx512"};
	return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "unknown";
}

static void set_blocks(harness* h, int k) {
	pbd_world* w = h->w[k];
	w->exec.block_constraints = h->blk.constraints;
	w->exec.block_particles = h->blk.particles;
	w->exec.min_blocks = h->blk.min_blocks;
}

/* Whether a difference between the worlds is explained by an allocation refused in one of them
 * (then the recipe stops here); otherwise it is a finding. */
static bool agree(harness* h, bool same, const char* fmt, ...) {
	if (same) return true;
	if (h->heap[0].refused || h->heap[1].refused) {
		h->stop = true;
		tr("an allocation was refused: the worlds may differ from here on");
		return false;
	}
	const pbd_world_def d = pbd_world_get_def(h->w[0]);
	char what[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	fuzz_fail("%s: %d threads and the %s kernels against 1 thread and the scalar ones (blocks of %u constraints, %u "
	          "particles)",
	          what, d.threads, simd_name(d.simd), h->blk.constraints, h->blk.particles);
}

/* What a refused call must leave as it was. */
enum { COUNT_PARTICLES = PBD_FAMILY_COUNT, COUNT_TRIANGLES, COUNT_COLLIDERS, COUNT_SOFTS, COUNT_BODIES, COUNT_N };
typedef struct counts {
	uint32_t n[COUNT_N];
} counts;

static uint32_t (*const family_count[])(const pbd_world*) = {
    [PBD_FAMILY_DISTANCE] = pbd_world_distance_count,
    [PBD_FAMILY_TET_VOLUME] = pbd_world_tet_volume_count,
    [PBD_FAMILY_TET_NEOHOOKEAN] = pbd_world_tet_neohookean_count,
    [PBD_FAMILY_ATTACHMENT] = pbd_world_attachment_count,
    [PBD_FAMILY_LRA] = pbd_world_lra_count,
    [PBD_FAMILY_CLUSTER] = pbd_world_cluster_count,
    [PBD_FAMILY_BEND_DIHEDRAL] = pbd_world_bend_dihedral_count,
    [PBD_FAMILY_BEND_ISOMETRIC] = pbd_world_bend_isometric_count,
    [PBD_FAMILY_TRIANGLE] = pbd_world_triangle_strain_count,
    [PBD_FAMILY_VOLUME] = pbd_world_volume_count,
    [PBD_FAMILY_JOINT] = pbd_world_joint_count,
};
_Static_assert(sizeof family_count / sizeof family_count[0] == PBD_FAMILY_COUNT,
               "fuzz_step counts every constraint family: add the new one's count function");

static counts take_counts(const pbd_world* w) {
	counts c;
	for (int f = 0; f < PBD_FAMILY_COUNT; ++f) c.n[f] = family_count[f](w);
	c.n[COUNT_PARTICLES] = pbd_world_particle_count(w);
	c.n[COUNT_TRIANGLES] = pbd_world_triangle_count(w);
	c.n[COUNT_COLLIDERS] = pbd_world_collider_count(w);
	c.n[COUNT_SOFTS] = pbd_world_soft_count(w);
	c.n[COUNT_BODIES] = pbd_world_body_count(w);
	return c;
}

/* After a call made on both worlds: the same status in both, and a refusal that changed no count
 * and left a message. Returns whether the call succeeded (in both). */
static bool settle(harness* h, const pbd_status st[2], const counts before[2], const char* what) {
	if (!agree(h, st[0] == st[1], "%s: %s in one world, %s in the other", what, pbd_status_string(st[0]),
	           pbd_status_string(st[1])))
		return false;
	if (st[0] == PBD_OK) {
		const counts a = take_counts(h->w[0]), b = take_counts(h->w[1]);
		agree(h, memcmp(&a, &b, sizeof a) == 0, "%s: the worlds hold different counts after it", what);
		return !h->stop;
	}
	for (int k = 0; k < 2; ++k) {
		const counts now = take_counts(h->w[k]);
		if (before && memcmp(&now, &before[k], sizeof now) != 0)
			fuzz_fail("%s failed (%s) but changed the world's counts", what, pbd_status_string(st[k]));
		const char* msg = pbd_world_last_error(h->w[k]);
		if (!msg || !msg[0]) fuzz_fail("%s failed (%s) without a message", what, pbd_status_string(st[k]));
		if (st[k] == PBD_ERR_OUT_OF_MEMORY && !h->heap[k].refused)
			fuzz_fail("%s: out of memory while the allocator refused nothing", what);
	}
	return false;
}

static void take_both(const harness* h, counts c[2]) {
	c[0] = take_counts(h->w[0]);
	c[1] = take_counts(h->w[1]);
}

/* A rigid body id: usually one made before (maybe destroyed since), sometimes the null id (the
 * world, for an attachment's point) or a made-up one. */
static pbd_body_id rd_body(harness* h, reader* r) {
	const uint8_t k = rd_u8(r);
	if (h->body_count && !(k & 0x80)) return h->bodies[k % h->body_count];
	pbd_body_id id = {0, 0};
	if (k & 0x40) return id;
	id.index1 = rd_u8(r) % 8;
	id.generation = rd_u8(r) % 3;
	return id;
}

/* ---- particles ----------------------------------------------------------------------------- */

/* The range a free particle's inverse mass must be in (types.h): below it, the projections'
 * (w_a + w_b) |d| underflows. */
static bool inv_mass_ok(pbd_real w) { return w >= (pbd_real)PBD_INV_MASS_MIN && w <= (pbd_real)PBD_INV_MASS_MAX; }

static void op_add_particles(harness* h, reader* r) {
	const uint32_t np = pbd_world_particle_count(h->w[0]);
	const uint8_t mode = rd_u8(r);
	const bool by_mass = mode & 1, with_v = mode & 2;
	uint32_t count = 1 + rd_u8(r) % 16;
	if (np + count > MAX_PARTICLES) return;
	pbd_vec3 x[16], v[16];
	pbd_real m[16];
	for (uint32_t i = 0; i < count; ++i) {
		x[i] = rd_vec3(r);
		if (with_v) v[i] = rd_vec3(r);
		/* Inverse masses: 0 (pinned) about one time in four. */
		const uint8_t k = rd_u8(r);
		m[i] = (k & 3) == 0 && !by_mass ? 0 : rd_real(r);
	}
	if (mode & 4) count = 0; /* a zero count must be refused or be harmless */
	counts before[2];
	take_both(h, before);
	pbd_status st[2];
	uint32_t first[2] = {UINT32_MAX, UINT32_MAX};
	for (int k = 0; k < 2; ++k)
		st[k] = by_mass ? pbd_world_add_particles_mass(h->w[k], count, x, with_v ? v : NULL, m, &first[k])
		                : pbd_world_add_particles(h->w[k], count, x, with_v ? v : NULL, m, &first[k]);
	tr("add particles%s x%u (first at %g %g %g, inverse mass %g) -> %s", by_mass ? " by mass" : "", count,
	   (double)x[0].x, (double)x[0].y, (double)x[0].z, (double)m[0], pbd_status_string(st[0]));
	if (!settle(h, st, before, "add particles")) return;
	if (first[0] != np || first[1] != np || pbd_world_particle_count(h->w[0]) != np + count)
		fuzz_fail("add particles: first %u, count %u after adding %u to %u", first[0],
		          pbd_world_particle_count(h->w[0]), count, np);
	for (uint32_t i = 0; i < count; ++i) {
		const pbd_real w = pbd_world_inv_masses(h->w[0])[np + i];
		if (w != 0 && !inv_mass_ok(w))
			fuzz_fail("particle %u accepted with inverse mass %g (given %g%s)", np + i, (double)w, (double)m[i],
			          by_mass ? " kg" : "");
	}
}

static void op_particle(harness* h, reader* r) {
	const uint8_t k = rd_u8(r);
	const uint32_t np = pbd_world_particle_count(h->w[0]);
	const uint32_t i = rd_index(r, np);
	pbd_status st[2];
	switch (k % 10) {
	case 0:
		BOTH(st, pbd_particle_pin(W, i));
		tr("pin %u -> %s", i, pbd_status_string(st[0]));
		if (st[0] == PBD_OK && (pbd_world_inv_masses(h->w[0])[i] != 0 || !pbd_particle_is_pinned(h->w[0], i)))
			fuzz_fail("pinned particle %u has inverse mass %g", i, (double)pbd_world_inv_masses(h->w[0])[i]);
		break;
	case 1:
		BOTH(st, pbd_particle_unpin(W, i));
		tr("unpin %u -> %s", i, pbd_status_string(st[0]));
		break;
	case 2: {
		const pbd_vec3 t = rd_vec3(r);
		BOTH(st, pbd_particle_set_target(W, i, t));
		tr("target %u to %g %g %g -> %s", i, (double)t.x, (double)t.y, (double)t.z, pbd_status_string(st[0]));
		if (st[0] == PBD_OK) {
			if (i >= np) fuzz_fail("target accepted for particle %u of %u", i, np);
			h->moving[i] = 1;
		}
		break;
	}
	case 3: {
		const pbd_vec3 f = rd_vec3(r);
		BOTH(st, pbd_particle_set_force(W, i, f));
		tr("force on %u: %g %g %g -> %s", i, (double)f.x, (double)f.y, (double)f.z, pbd_status_string(st[0]));
		break;
	}
	case 4: {
		const pbd_real m = rd_real(r);
		BOTH(st, pbd_particle_set_inv_mass(W, i, m));
		tr("inverse mass of %u: %g -> %s", i, (double)m, pbd_status_string(st[0]));
		if (st[0] == PBD_OK && !inv_mass_ok(m)) fuzz_fail("inverse mass %g accepted for particle %u", (double)m, i);
		break;
	}
	case 5: {
		/* Overwrite positions or velocities of a range. */
		const uint32_t count = rd_u8(r) % 4;
		pbd_vec3 v[4];
		for (uint32_t j = 0; j < count; ++j) v[j] = rd_vec3(r);
		if (k & 0x80)
			BOTH(st, pbd_world_set_velocities(W, i, count, v));
		else
			BOTH(st, pbd_world_set_positions(W, i, count, v));
		tr("set %s of %u (+%u) -> %s", (k & 0x80) ? "velocities" : "positions", i, count, pbd_status_string(st[0]));
		break;
	}
	case 6: {
		const pbd_vec3 j = rd_vec3(r);
		BOTH(st, pbd_particle_apply_impulse(W, i, j));
		tr("impulse on %u: %g %g %g -> %s", i, (double)j.x, (double)j.y, (double)j.z, pbd_status_string(st[0]));
		break;
	}
	case 7: {
		const pbd_vec3 c = rd_vec3(r);
		const pbd_real radius = rd_real(r), impulse = rd_real(r);
		uint32_t pushed[2] = {0, 0};
		for (int w = 0; w < 2; ++w) st[w] = pbd_world_explode(h->w[w], c, radius, impulse, &pushed[w]);
		tr("explode at %g %g %g radius %g impulse %g -> %s, %u pushed", (double)c.x, (double)c.y, (double)c.z,
		   (double)radius, (double)impulse, pbd_status_string(st[0]), pushed[0]);
		agree(h, pushed[0] == pushed[1], "explode: %u particles pushed in one world, %u in the other", pushed[0],
		      pushed[1]);
		break;
	}
	case 8: {
		const uint32_t count = rd_u8(r) % 64, mask = rd_u8(r) & 1 ? rd_u32(r) : 0;
		BOTH(st, pbd_particles_set_collision_mask(W, i, count, mask));
		tr("collision mask of %u (+%u): %#x -> %s", i, count, mask, pbd_status_string(st[0]));
		break;
	}
	default: {
		const uint32_t count = rd_u8(r) % 64;
		const pbd_real drag = rd_real(r);
		const pbd_vec3 wind = rd_vec3(r);
		if (k & 0x80) {
			const pbd_real tangent = rd_real(r);
			BOTH(st, pbd_world_set_triangle_drag(W, i, count, drag, tangent, wind));
		} else {
			BOTH(st, pbd_particles_set_drag(W, i, count, drag, wind));
		}
		tr("%s drag of %u (+%u): %g -> %s", (k & 0x80) ? "triangle" : "particle", i, count, (double)drag,
		   pbd_status_string(st[0]));
		break;
	}
	}
	settle(h, st, NULL, "particle edit");
}

/* ---- constraints: one add call per family -------------------------------------------------- */

typedef void family_op(harness* h, reader* r, pbd_status st[2]);

static void add_distances(harness* h, reader* r, pbd_status st[2]) {
	const uint32_t np = pbd_world_particle_count(h->w[0]);
	const uint32_t count = 1 + rd_u8(r) % 32;
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
		if (mode & 8) d[k].kind = rd_u8(r) % (PBD_EDGE_KIND_COUNT + 1);
		d[k].stiffness_from_compliance = mode & 16;
	}
	BOTH(st, pbd_world_add_distances(W, count, d, NULL));
	tr("add distances x%u (first %u-%u rest %g stiffness %g/%g compliance %g/%g) -> %s", count, d[0].a, d[0].b,
	   (double)d[0].rest, (double)d[0].stiffness_stretch, (double)d[0].stiffness_compress,
	   (double)d[0].compliance_stretch, (double)d[0].compliance_compress, pbd_status_string(st[0]));
	if (st[0] == PBD_OK) {
		const uint32_t nd = pbd_world_distance_count(h->w[0]) - count;
		for (uint32_t k = 0; k < count; ++k) {
			pbd_distance_def back;
			if (pbd_world_get_distance(h->w[0], nd + k, &back) != PBD_OK || back.a != d[k].a || back.b != d[k].b)
				fuzz_fail("distance %u does not read back", nd + k);
			if (!isfinite(back.rest) || back.rest < 0)
				fuzz_fail("distance %u accepted with rest length %g", nd + k, (double)back.rest);
		}
	}
}

static void rd_quad(reader* r, uint32_t np, uint32_t p[4]) {
	for (int k = 0; k < 4; ++k) p[k] = rd_index(r, np);
}

static void add_tet_volumes(harness* h, reader* r, pbd_status st[2]) {
	const uint32_t np = pbd_world_particle_count(h->w[0]), count = 1 + rd_u8(r) % ADD_MAX;
	pbd_tet_volume_def d[ADD_MAX];
	const uint8_t mode = rd_u8(r);
	for (uint32_t k = 0; k < count; ++k) {
		d[k] = pbd_tet_volume_def_default();
		rd_quad(r, np, d[k].p);
		if (mode & 1) d[k].rest_volume = rd_real(r);
		if (mode & 2) d[k].stiffness = rd_real(r);
		if (mode & 4) d[k].compliance = rd_real(r);
	}
	BOTH(st, pbd_world_add_tet_volumes(W, count, d, NULL));
	tr("add tet volumes x%u (first %u %u %u %u rest %g) -> %s", count, d[0].p[0], d[0].p[1], d[0].p[2], d[0].p[3],
	   (double)d[0].rest_volume, pbd_status_string(st[0]));
}

static void add_tet_neohookeans(harness* h, reader* r, pbd_status st[2]) {
	const uint32_t np = pbd_world_particle_count(h->w[0]), count = 1 + rd_u8(r) % ADD_MAX;
	pbd_tet_neohookean_def d[ADD_MAX];
	const uint8_t mode = rd_u8(r);
	for (uint32_t k = 0; k < count; ++k) {
		d[k] = pbd_tet_neohookean_def_default();
		rd_quad(r, np, d[k].p);
		if (mode & 1) d[k].youngs_modulus = rd_real(r);
		if (mode & 2) d[k].poisson_ratio = rd_real(r);
		if (mode & 4) {
			d[k].stiffness_deviatoric = rd_real(r);
			d[k].stiffness_hydrostatic = rd_real(r);
		}
	}
	BOTH(st, pbd_world_add_tet_neohookeans(W, count, d, NULL));
	tr("add neo-hookean tets x%u (first %u %u %u %u E %g nu %g) -> %s", count, d[0].p[0], d[0].p[1], d[0].p[2],
	   d[0].p[3], (double)d[0].youngs_modulus, (double)d[0].poisson_ratio, pbd_status_string(st[0]));
}

static void add_attachments(harness* h, reader* r, pbd_status st[2]) {
	const uint32_t np = pbd_world_particle_count(h->w[0]), count = 1 + rd_u8(r) % ADD_MAX;
	pbd_attachment_def d[ADD_MAX];
	const uint8_t mode = rd_u8(r);
	for (uint32_t k = 0; k < count; ++k) {
		d[k] = pbd_attachment_def_default();
		d[k].particle = rd_index(r, np);
		d[k].target = rd_vec3(r);
		if (mode & 1) d[k].rest = rd_real(r);
		if (mode & 2) d[k].stiffness = rd_real(r);
		if (mode & 4) d[k].compliance = rd_real(r);
		if (mode & 8) d[k].body = rd_body(h, r); /* the target is then a point of that body */
	}
	BOTH(st, pbd_world_add_attachments(W, count, d, NULL));
	tr("add attachments x%u (first %u to %g %g %g of body %u/%u, rest %g) -> %s", count, d[0].particle,
	   (double)d[0].target.x, (double)d[0].target.y, (double)d[0].target.z, d[0].body.index1, d[0].body.generation,
	   (double)d[0].rest, pbd_status_string(st[0]));
	if (st[0] != PBD_OK) return;
	const uint32_t na = pbd_world_attachment_count(h->w[0]) - count;
	for (uint32_t k = 0; k < count; ++k) {
		/* index1 0 is the world whatever the generation: it reads back as the null id */
		const uint32_t generation = d[k].body.index1 ? d[k].body.generation : 0;
		pbd_attachment_def back;
		if (pbd_world_get_attachment(h->w[0], na + k, &back) != PBD_OK || back.particle != d[k].particle ||
		    back.body.index1 != d[k].body.index1 || back.body.generation != generation)
			fuzz_fail("attachment %u does not read back (particle %u, body %u/%u)", na + k, d[k].particle,
			          d[k].body.index1, d[k].body.generation);
	}
}

static void add_lras(harness* h, reader* r, pbd_status st[2]) {
	const uint32_t np = pbd_world_particle_count(h->w[0]), count = 1 + rd_u8(r) % 2;
	pbd_lra_def d[2];
	const uint8_t mode = rd_u8(r);
	for (uint32_t k = 0; k < count; ++k) {
		d[k] = pbd_lra_def_default();
		d[k].first_particle = rd_index(r, np);
		d[k].particle_count = rd_u16(r) % (MAX_PARTICLES + 2);
		if (mode & 1) d[k].mode = (pbd_lra_mode)(rd_u8(r) % 3);
		if (mode & 2) d[k].scale = rd_real(r);
		if (mode & 4) d[k].stiffness = rd_real(r);
		if (mode & 8) d[k].compliance = rd_real(r);
	}
	const uint32_t nl = pbd_world_lra_count(h->w[0]);
	if (nl + d[0].particle_count + (count > 1 ? d[1].particle_count : 0) > MAX_CONSTRAINTS) return;
	BOTH(st, pbd_world_add_lras(W, count, d, NULL));
	tr("add long-range attachment sets x%u (first %u +%u mode %d scale %g) -> %s", count, d[0].first_particle,
	   d[0].particle_count, (int)d[0].mode, (double)d[0].scale, pbd_status_string(st[0]));
}

static void add_clusters(harness* h, reader* r, pbd_status st[2]) {
	const uint32_t np = pbd_world_particle_count(h->w[0]);
	const uint8_t mode = rd_u8(r);
	uint32_t members[CLUSTER_MAX];
	pbd_vec3 rest[CLUSTER_MAX];
	pbd_cluster_def d = pbd_cluster_def_default();
	d.count = rd_u8(r) % (CLUSTER_MAX + 1);
	const uint32_t first = rd_index(r, np);
	for (uint32_t k = 0; k < d.count; ++k) {
		/* a run of particles (distinct), or any indices (repeats refused) */
		members[k] = (mode & 1) ? rd_index(r, np) : first + k;
		if (mode & 2) rest[k] = rd_vec3(r);
	}
	d.particles = members;
	d.rest = (mode & 2) ? rest : NULL;
	if (mode & 4) d.stiffness = rd_real(r);
	if (mode & 8) d.compliance = rd_real(r);
	BOTH(st, pbd_world_add_clusters(W, 1, &d, NULL));
	tr("add cluster of %u (first %u, rest %s) -> %s", d.count, d.count ? members[0] : 0, d.rest ? "given" : "measured",
	   pbd_status_string(st[0]));
}

/* A hinge: usually the corners of a world triangle and one more particle, else any four. */
static void rd_hinge(harness* h, reader* r, uint32_t p[4]) {
	const uint32_t np = pbd_world_particle_count(h->w[0]), nt = pbd_world_triangle_count(h->w[0]);
	const uint8_t mode = rd_u8(r);
	if (!(mode & 1) || nt == 0) {
		rd_quad(r, np, p);
		return;
	}
	const uint32_t* t = pbd_world_triangles(h->w[0]) + 3 * (rd_u16(r) % nt);
	p[0] = t[0];
	p[1] = t[1];
	p[2] = t[2];
	p[3] = rd_index(r, np);
}

static void add_bend_dihedrals(harness* h, reader* r, pbd_status st[2]) {
	const uint32_t count = 1 + rd_u8(r) % ADD_MAX;
	pbd_bend_dihedral_def d[ADD_MAX];
	const uint8_t mode = rd_u8(r);
	for (uint32_t k = 0; k < count; ++k) {
		d[k] = pbd_bend_dihedral_def_default();
		rd_hinge(h, r, d[k].p);
		if (mode & 1) {
			d[k].measure_rest = false;
			d[k].rest = rd_real(r);
		}
		if (mode & 2) d[k].stiffness = rd_real(r);
		if (mode & 4) d[k].compliance = rd_real(r);
	}
	BOTH(st, pbd_world_add_bend_dihedrals(W, count, d, NULL));
	tr("add dihedral bends x%u (first %u %u %u %u) -> %s", count, d[0].p[0], d[0].p[1], d[0].p[2], d[0].p[3],
	   pbd_status_string(st[0]));
}

static void add_bend_isometrics(harness* h, reader* r, pbd_status st[2]) {
	const uint32_t count = 1 + rd_u8(r) % ADD_MAX;
	pbd_bend_isometric_def d[ADD_MAX];
	const uint8_t mode = rd_u8(r);
	for (uint32_t k = 0; k < count; ++k) {
		d[k] = pbd_bend_isometric_def_default();
		rd_hinge(h, r, d[k].p);
		if (mode & 1) {
			d[k].measure_rest = false;
			d[k].rest = rd_real(r);
		}
		if (mode & 2) d[k].stiffness = rd_real(r);
		if (mode & 4) d[k].compliance = rd_real(r);
	}
	BOTH(st, pbd_world_add_bend_isometrics(W, count, d, NULL));
	tr("add isometric bends x%u (first %u %u %u %u) -> %s", count, d[0].p[0], d[0].p[1], d[0].p[2], d[0].p[3],
	   pbd_status_string(st[0]));
}

static void add_triangle_strains(harness* h, reader* r, pbd_status st[2]) {
	const uint32_t np = pbd_world_particle_count(h->w[0]), nt = pbd_world_triangle_count(h->w[0]);
	const uint8_t mode = rd_u8(r);
	pbd_triangle_strain_def proto = pbd_triangle_strain_def_default();
	if (mode & 2) proto.axis = rd_vec3(r);
	if (mode & 4) {
		proto.stretch_stiffness = rd_real(r);
		proto.shear_stiffness = rd_real(r);
	}
	if (mode & 8) {
		proto.stretch_compliance = rd_real(r);
		proto.shear_compliance = rd_real(r);
	}
	if (mode & 1) { /* over a range of the world's surface triangles */
		const uint32_t first = rd_index(r, nt), count = rd_u8(r);
		BOTH(st, pbd_world_add_surface_strains(W, first, count, &proto, NULL));
		tr("add surface strains of triangles %u (+%u) -> %s", first, count, pbd_status_string(st[0]));
		return;
	}
	const uint32_t count = 1 + rd_u8(r) % ADD_MAX;
	pbd_triangle_strain_def d[ADD_MAX];
	for (uint32_t k = 0; k < count; ++k) {
		d[k] = proto;
		d[k].a = rd_index(r, np);
		d[k].b = rd_index(r, np);
		d[k].c = rd_index(r, np);
	}
	BOTH(st, pbd_world_add_triangle_strains(W, count, d, NULL));
	tr("add triangle strains x%u (first %u %u %u) -> %s", count, d[0].a, d[0].b, d[0].c, pbd_status_string(st[0]));
}

static void add_volumes(harness* h, reader* r, pbd_status st[2]) {
	const uint32_t nt = pbd_world_triangle_count(h->w[0]), np = pbd_world_particle_count(h->w[0]);
	const uint8_t mode = rd_u8(r);
	uint32_t idx[3 * VOLUME_TRIANGLES];
	pbd_volume_def d = pbd_volume_def_default();
	d.triangle_count = rd_u16(r) % (VOLUME_TRIANGLES + 1);
	if (mode & 1) { /* any indices */
		for (uint32_t k = 0; k < 3 * d.triangle_count; ++k) idx[k] = rd_index(r, np);
	} else { /* a run of the world's triangles: a body's closed surface when it starts at its first */
		const uint32_t first = rd_index(r, nt + 1);
		const uint32_t have = first < nt ? nt - first : 0;
		if (d.triangle_count > have) d.triangle_count = have;
		if (d.triangle_count) memcpy(idx, pbd_world_triangles(h->w[0]) + 3 * first, 12 * d.triangle_count);
	}
	d.triangles = idx;
	if (mode & 2) d.rest_volume = rd_real(r);
	if (mode & 4) d.pressure = rd_real(r);
	if (mode & 8) d.stiffness = rd_real(r);
	if (mode & 16) d.compliance = rd_real(r);
	BOTH(st, pbd_world_add_volumes(W, 1, &d, NULL));
	tr("add volume over %u triangles (rest %g pressure %g) -> %s", d.triangle_count, (double)d.rest_volume,
	   (double)d.pressure, pbd_status_string(st[0]));
}

/* Joints between bodies made before (maybe destroyed since), the world or made-up ids, with
 * frames, limits, motors and thresholds from the stream. */
static void add_joints(harness* h, reader* r, pbd_status st[2]) {
	const uint32_t count = 1 + rd_u8(r) % 3;
	pbd_joint_def d[3];
	const uint8_t mode = rd_u8(r);
	for (uint32_t k = 0; k < count; ++k) {
		d[k] = pbd_joint_def_default();
		d[k].type = (pbd_joint_type)(rd_u8(r) % (PBD_JOINT_TYPE_COUNT + 1));
		d[k].body_a = rd_body(h, r);
		d[k].body_b = rd_body(h, r);
		if (mode & 1) {
			d[k].frame_a.position = rd_vec3(r);
			d[k].frame_b.position = rd_vec3(r);
		}
		if (mode & 2) {
			const pbd_vec3 v = rd_vec3(r);
			d[k].frame_b.rotation = (pbd_quat){v.x, v.y, v.z, rd_real(r)};
		}
		if (mode & 4) d[k].compliance = rd_real(r);
		if (mode & 8) {
			d[k].limit = true;
			d[k].lower = rd_real(r);
			d[k].upper = rd_real(r);
		}
		if (mode & 16) d[k].swing = rd_real(r);
		if (mode & 32) {
			d[k].motor = (pbd_joint_motor)(rd_u8(r) % 4);
			d[k].motor_target = rd_real(r);
			d[k].motor_max = rd_real(r);
			d[k].motor_compliance = rd_real(r);
		}
		if (mode & 64) {
			d[k].break_force = rd_real(r);
			d[k].break_torque = rd_real(r);
		}
	}
	BOTH(st, pbd_world_add_joints(W, count, d, NULL));
	tr("add joints x%u (first type %d bodies %u/%u %u/%u) -> %s", count, (int)d[0].type, d[0].body_a.index1,
	   d[0].body_a.generation, d[0].body_b.index1, d[0].body_b.generation, pbd_status_string(st[0]));
	if (st[0] != PBD_OK) return;
	const uint32_t nj = pbd_world_joint_count(h->w[0]) - count;
	for (uint32_t k = 0; k < count; ++k) {
		pbd_joint_def back;
		pbd_joint_state state;
		if (pbd_world_get_joint(h->w[0], nj + k, &back) != PBD_OK || back.type != d[k].type ||
		    back.body_a.index1 != d[k].body_a.index1 || back.body_b.index1 != d[k].body_b.index1 ||
		    pbd_world_get_joint_state(h->w[0], nj + k, &state) != PBD_OK)
			fuzz_fail("joint %u does not read back (type %d)", nj + k, (int)d[k].type);
	}
}

static family_op* const add_family[] = {
    [PBD_FAMILY_DISTANCE] = add_distances,
    [PBD_FAMILY_TET_VOLUME] = add_tet_volumes,
    [PBD_FAMILY_TET_NEOHOOKEAN] = add_tet_neohookeans,
    [PBD_FAMILY_ATTACHMENT] = add_attachments,
    [PBD_FAMILY_LRA] = add_lras,
    [PBD_FAMILY_CLUSTER] = add_clusters,
    [PBD_FAMILY_BEND_DIHEDRAL] = add_bend_dihedrals,
    [PBD_FAMILY_BEND_ISOMETRIC] = add_bend_isometrics,
    [PBD_FAMILY_TRIANGLE] = add_triangle_strains,
    [PBD_FAMILY_VOLUME] = add_volumes,
    [PBD_FAMILY_JOINT] = add_joints,
};
_Static_assert(sizeof add_family / sizeof add_family[0] == PBD_FAMILY_COUNT,
               "fuzz_step adds every constraint family: give the new one its add operation");

static void op_constraints(harness* h, reader* r) {
	const uint32_t f = rd_u8(r) % PBD_FAMILY_COUNT;
	if (!add_family[f]) fuzz_fail("fuzz_step has no add operation for family %s", pbd_family_name((pbd_family_type)f));
	if (family_count[f](h->w[0]) + ADD_MAX > MAX_CONSTRAINTS) return;
	counts before[2];
	take_both(h, before);
	pbd_status st[2] = {PBD_OK, PBD_OK};
	add_family[f](h, r, st);
	char what[64];
	snprintf(what, sizeof what, "add %s constraints", pbd_family_name((pbd_family_type)f));
	settle(h, st, before, what);
}

/* ---- materials: one change per family ------------------------------------------------------ */

/* A family's own material change of constraints first to first + count. Returns false to leave
 * the change to the stiffness and compliance of pair_material, read after it. */
typedef bool material_op(harness* h, reader* r, pbd_status st[2], uint32_t first, uint32_t count);

static bool mat_distances(harness* h, reader* r, pbd_status st[2], uint32_t first, uint32_t count) {
	pbd_edge_material m;
	m.enabled = true;
	m.stiffness_stretch = rd_real(r);
	m.stiffness_compress = rd_real(r);
	m.compliance_stretch = rd_real(r);
	m.compliance_compress = rd_real(r);
	BOTH(st, pbd_world_set_distance_material(W, first, count, &m));
	tr("material of distances %u (+%u): stiffness %g/%g compliance %g/%g -> %s", first, count,
	   (double)m.stiffness_stretch, (double)m.stiffness_compress, (double)m.compliance_stretch,
	   (double)m.compliance_compress, pbd_status_string(st[0]));
	return true;
}

static bool mat_tet_neohookeans(harness* h, reader* r, pbd_status st[2], uint32_t first, uint32_t count) {
	const pbd_real e = rd_real(r), nu = rd_real(r), sd = rd_real(r), sh = rd_real(r);
	BOTH(st, pbd_world_set_tet_neohookean_material(W, first, count, e, nu, sd, sh));
	tr("material of neo-hookean tets %u (+%u): E %g nu %g -> %s", first, count, (double)e, (double)nu,
	   pbd_status_string(st[0]));
	return true;
}

static bool mat_attachments(harness* h, reader* r, pbd_status st[2], uint32_t first, uint32_t count) {
	if (!(count & 1)) return false;
	/* an odd count moves one's point over the next step instead */
	const pbd_vec3 t = rd_vec3(r);
	BOTH(st, pbd_world_set_attachment_target(W, first, t));
	tr("attachment %u to %g %g %g -> %s", first, (double)t.x, (double)t.y, (double)t.z, pbd_status_string(st[0]));
	return true;
}

static bool mat_triangle_strains(harness* h, reader* r, pbd_status st[2], uint32_t first, uint32_t count) {
	pbd_triangle_strain_material m;
	m.stretch_stiffness = rd_real(r);
	m.shear_stiffness = rd_real(r);
	m.stretch_compliance = rd_real(r);
	m.shear_compliance = rd_real(r);
	BOTH(st, pbd_world_set_triangle_strain_material(W, first, count, &m));
	tr("material of triangle strains %u (+%u) -> %s", first, count, pbd_status_string(st[0]));
	return true;
}

static bool mat_volumes(harness* h, reader* r, pbd_status st[2], uint32_t first, uint32_t count) {
	if (!(count & 1)) return false;
	/* an odd count inflates or deflates one instead */
	const pbd_real p = rd_real(r);
	BOTH(st, pbd_world_set_volume_pressure(W, first, p));
	tr("pressure of volume %u: %g -> %s", first, (double)p, pbd_status_string(st[0]));
	return true;
}

/* A joint's motor set or cleared, or the joint broken or mended. */
static bool mat_joints(harness* h, reader* r, pbd_status st[2], uint32_t first, uint32_t count) {
	if (count & 1) {
		const bool broken = rd_u8(r) & 1;
		BOTH(st, pbd_world_set_joint_broken(W, first, broken));
		tr("joint %u broken %d -> %s", first, broken, pbd_status_string(st[0]));
		return true;
	}
	const pbd_joint_motor motor = (pbd_joint_motor)(rd_u8(r) % 4);
	const pbd_real target = rd_real(r), max = rd_real(r), compliance = rd_real(r);
	BOTH(st, pbd_world_set_joint_motor(W, first, motor, target, max, compliance));
	tr("joint %u motor %d (%g, %g, %g) -> %s", first, (int)motor, (double)target, (double)max, (double)compliance,
	   pbd_status_string(st[0]));
	return true;
}

/* Sized by the library's count, so that a new family has neither until it is given one. */
static material_op* const material_family[PBD_FAMILY_COUNT] = {
    [PBD_FAMILY_DISTANCE] = mat_distances,     [PBD_FAMILY_TET_NEOHOOKEAN] = mat_tet_neohookeans,
    [PBD_FAMILY_ATTACHMENT] = mat_attachments, [PBD_FAMILY_TRIANGLE] = mat_triangle_strains,
    [PBD_FAMILY_VOLUME] = mat_volumes,         [PBD_FAMILY_JOINT] = mat_joints,
};

typedef pbd_status pair_material_fn(pbd_world* w, uint32_t first, uint32_t count, pbd_real stiffness,
                                    pbd_real compliance);

static pair_material_fn* const pair_material[PBD_FAMILY_COUNT] = {
    [PBD_FAMILY_TET_VOLUME] = pbd_world_set_tet_volume_material,
    [PBD_FAMILY_ATTACHMENT] = pbd_world_set_attachment_material,
    [PBD_FAMILY_LRA] = pbd_world_set_lra_material,
    [PBD_FAMILY_CLUSTER] = pbd_world_set_cluster_material,
    [PBD_FAMILY_BEND_DIHEDRAL] = pbd_world_set_bend_dihedral_material,
    [PBD_FAMILY_BEND_ISOMETRIC] = pbd_world_set_bend_isometric_material,
    [PBD_FAMILY_VOLUME] = pbd_world_set_volume_material,
};

static bool has_material(uint32_t f) { return material_family[f] || pair_material[f]; }

static void op_material(harness* h, reader* r) {
	const uint32_t f = rd_u8(r) % PBD_FAMILY_COUNT;
	const char* name = pbd_family_name((pbd_family_type)f);
	if (!has_material(f)) fuzz_fail("fuzz_step has no material operation for family %s", name);
	const uint32_t first = rd_index(r, family_count[f](h->w[0])), count = rd_u8(r) % 16;
	pbd_status st[2] = {PBD_OK, PBD_OK};
	if (!material_family[f] || !material_family[f](h, r, st, first, count)) {
		if (!pair_material[f]) fuzz_fail("fuzz_step has no stiffness and compliance change for family %s", name);
		const pbd_real s = rd_real(r), c = rd_real(r);
		BOTH(st, pair_material[f](W, first, count, s, c));
		tr("material of %s %u (+%u): %g %g -> %s", name, first, count, (double)s, (double)c, pbd_status_string(st[0]));
	}
	char what[64];
	snprintf(what, sizeof what, "change %s materials", name);
	settle(h, st, NULL, what);
}

static void op_triangles(harness* h, reader* r) {
	const uint32_t np = pbd_world_particle_count(h->w[0]), nt = pbd_world_triangle_count(h->w[0]);
	const uint32_t count = 1 + rd_u8(r) % 4;
	if (nt + count > MAX_TRIANGLES) return;
	uint32_t t[12];
	for (uint32_t k = 0; k < 3 * count; ++k) t[k] = rd_index(r, np);
	counts before[2];
	take_both(h, before);
	pbd_status st[2];
	BOTH(st, pbd_world_add_triangles(W, count, t, NULL));
	tr("add triangles x%u (first %u %u %u) -> %s", count, t[0], t[1], t[2], pbd_status_string(st[0]));
	settle(h, st, before, "add triangles");
}

/* ---- colliders: every shape, each from its own fields --------------------------------------- */

typedef struct shape_arrays {
	pbd_vec3 points[SHAPE_POINTS];
	uint32_t triangles[3 * SHAPE_TRIANGLES];
	pbd_real heights[FIELD_SAMPLES * FIELD_SAMPLES];
} shape_arrays;

typedef void shape_fill(reader* r, pbd_collider_def* c, shape_arrays* a);

static void fill_plane(reader* r, pbd_collider_def* c, shape_arrays* a) {
	(void)a;
	c->shape.plane.normal = rd_vec3(r);
	c->shape.plane.offset = rd_real(r);
}

static void fill_sphere(reader* r, pbd_collider_def* c, shape_arrays* a) {
	(void)a;
	c->shape.sphere.center = rd_vec3(r);
	c->shape.sphere.radius = rd_real(r);
}

static void fill_capsule(reader* r, pbd_collider_def* c, shape_arrays* a) {
	(void)a;
	c->shape.capsule.half_height = rd_real(r);
	c->shape.capsule.radius = rd_real(r);
}

static void fill_box(reader* r, pbd_collider_def* c, shape_arrays* a) {
	(void)a;
	c->shape.box.half_extents = rd_vec3(r);
}

/* Points of a solid: the corners of a box of the input's extents moved by the input, or any. */
static uint32_t rd_points(reader* r, shape_arrays* a, uint8_t mode) {
	uint32_t n = rd_u8(r) % (SHAPE_POINTS + 1);
	if (mode & 1) {
		const pbd_vec3 e = rd_vec3(r);
		n = 8;
		for (uint32_t k = 0; k < n; ++k) {
			a->points[k] = pbd_v3(k & 1 ? e.x : -e.x, k & 2 ? e.y : -e.y, k & 4 ? e.z : -e.z);
			if (mode & 2) a->points[k] = pbd_v3_add(a->points[k], rd_vec3(r));
		}
		return n;
	}
	for (uint32_t k = 0; k < n; ++k) a->points[k] = rd_vec3(r);
	return n;
}

static void fill_convex(reader* r, pbd_collider_def* c, shape_arrays* a) {
	const uint8_t mode = rd_u8(r);
	c->shape.convex.point_count = rd_points(r, a, mode);
	c->shape.convex.points = (mode & 4) ? NULL : a->points;
}

static void fill_mesh(reader* r, pbd_collider_def* c, shape_arrays* a) {
	/* The 12 outward triangles of the box of rd_points (corner k at bit 0: x, 1: y, 2: z). */
	static const uint32_t box[36] = {0, 2, 3, 0, 3, 1, 4, 5, 7, 4, 7, 6, 0, 1, 5, 0, 5, 4,
	                                 2, 6, 7, 2, 7, 3, 0, 4, 6, 0, 6, 2, 1, 3, 7, 1, 7, 5};
	const uint8_t mode = rd_u8(r);
	pbd_trimesh* m = &c->shape.mesh;
	m->vertex_count = rd_points(r, a, mode);
	m->vertices = a->points;
	if ((mode & 1) && !(mode & 8)) {
		memcpy(a->triangles, box, sizeof box);
		m->triangle_count = 12;
	} else {
		m->triangle_count = rd_u8(r) % (SHAPE_TRIANGLES + 1);
		for (uint32_t k = 0; k < 3 * m->triangle_count; ++k) a->triangles[k] = rd_index(r, m->vertex_count);
	}
	m->triangles = (mode & 4) ? NULL : a->triangles;
	m->closed = mode & 16;
}

static void fill_heightfield(reader* r, pbd_collider_def* c, shape_arrays* a) {
	pbd_heightfield* f = &c->shape.heightfield;
	f->nx = rd_u8(r) % (FIELD_SAMPLES + 1);
	f->nz = rd_u8(r) % (FIELD_SAMPLES + 1);
	f->cell_x = rd_real(r);
	f->cell_z = rd_real(r);
	for (uint32_t k = 0; k < f->nx * f->nz; ++k) a->heights[k] = rd_real(r);
	f->heights = a->heights;
}

static shape_fill* const fill_shape[] = {
    [PBD_SHAPE_PLANE] = fill_plane,
    [PBD_SHAPE_SPHERE] = fill_sphere,
    [PBD_SHAPE_CAPSULE] = fill_capsule,
    [PBD_SHAPE_BOX] = fill_box,
    [PBD_SHAPE_CONVEX] = fill_convex,
    [PBD_SHAPE_MESH] = fill_mesh,
    [PBD_SHAPE_HEIGHTFIELD] = fill_heightfield,
};
_Static_assert(sizeof fill_shape / sizeof fill_shape[0] == PBD_SHAPE_COUNT,
               "fuzz_step makes colliders of every shape: give the new one its fill function");

static pbd_pose rd_pose(reader* r) {
	pbd_pose p;
	p.position = rd_vec3(r);
	p.rotation.x = rd_real(r);
	p.rotation.y = rd_real(r);
	p.rotation.z = rd_real(r);
	p.rotation.w = rd_real(r);
	return p;
}

/* A collider id: usually one made before (maybe destroyed since), sometimes made up. */
static pbd_collider_id rd_collider(harness* h, reader* r) {
	const uint8_t k = rd_u8(r);
	if (h->collider_count && !(k & 0x80)) return h->colliders[k % h->collider_count];
	pbd_collider_id id = {rd_u8(r) % 8, rd_u8(r) % 3};
	return id;
}

/* A collider of any shape; with flag 128 (always when on_body) a shape on a rigid body, its pose
 * then in the body's frame. */
static void create_collider(harness* h, reader* r, bool on_body) {
	if (pbd_world_collider_count(h->w[0]) >= MAX_COLLIDERS) return;
	pbd_collider_def c = pbd_collider_def_default();
	shape_arrays a;
	const uint32_t type = rd_u8(r) % (PBD_SHAPE_COUNT + 1); /* and one past the last */
	c.type = (pbd_shape_type)type;
	if (type < PBD_SHAPE_COUNT) {
		if (!fill_shape[type]) fuzz_fail("fuzz_step has no fill function for shape %u", type);
		fill_shape[type](r, &c, &a);
	}
	const uint8_t f = rd_u8(r);
	if (f & 1) c.margin = rd_real(r);
	if (f & 2) {
		c.kind = (pbd_actor_kind)(rd_u8(r) % 3);
		c.velocity = rd_vec3(r);
		c.angular_velocity = rd_vec3(r);
	}
	if (f & 4) c.pose = rd_pose(r);
	if (f & 8) {
		c.static_friction = rd_real(r);
		c.kinetic_friction = rd_real(r);
	}
	if (f & 16) c.restitution = rd_real(r);
	c.trigger = f & 32;
	if (f & 64) c.category = rd_u32(r);
	if (on_body || (f & 128)) c.body = rd_body(h, r);
	const uint32_t before[2] = {pbd_world_collider_count(h->w[0]), pbd_world_collider_count(h->w[1])};
	pbd_collider_id id[2];
	for (int k = 0; k < 2; ++k) id[k] = pbd_collider_create(h->w[k], &c);
	tr("collider type %u kind %d%s margin %g on body %u/%u -> id %u/%u: %s", type, (int)c.kind,
	   c.trigger ? " trigger" : "", (double)c.margin, c.body.index1, c.body.generation, id[0].index1, id[0].generation,
	   id[0].index1 ? "" : pbd_world_last_error(h->w[0]));
	if (!agree(h, id[0].index1 == id[1].index1 && id[0].generation == id[1].generation,
	           "collider create: id %u/%u in one world, %u/%u in the other", id[0].index1, id[0].generation,
	           id[1].index1, id[1].generation))
		return;
	for (int k = 0; k < 2; ++k) {
		pbd_world* w = h->w[k];
		if (!id[k].index1) {
			if (pbd_world_collider_count(w) != before[k]) fuzz_fail("collider create failed but added a collider");
			if (!pbd_world_last_error(w)[0]) fuzz_fail("collider create failed without a message");
			continue;
		}
		if (!pbd_collider_is_valid(w, id[k])) fuzz_fail("new collider id is not valid");
		pbd_collider_def back;
		if (pbd_collider_get_def(w, id[k], &back) != PBD_OK) fuzz_fail("new collider cannot be read back");
		if (back.type != c.type) fuzz_fail("collider of type %u reads back as %u", type, (unsigned)back.type);
		if (back.body.index1 != c.body.index1 || back.body.generation != c.body.generation)
			fuzz_fail("collider on body %u/%u reads back on body %u/%u", c.body.index1, c.body.generation,
			          back.body.index1, back.body.generation);
		pbd_pose at;
		if (pbd_collider_get_pose(w, id[k], &at) != PBD_OK || !fuzz_v3_finite(at.position))
			fuzz_fail("new collider has no finite pose");
		pbd_vec3 lo, hi;
		if (pbd_collider_get_bounds(w, id[k], &lo, &hi) && !(lo.x <= hi.x && lo.y <= hi.y && lo.z <= hi.z))
			fuzz_fail("collider bounds %g %g %g to %g %g %g", (double)lo.x, (double)lo.y, (double)lo.z, (double)hi.x,
			          (double)hi.y, (double)hi.z);
		uint32_t nv = 0, nt = 0;
		const pbd_status st = pbd_collider_get_triangles(w, id[k], NULL, 0, NULL, 0, &nv, &nt);
		const bool surface = c.type == PBD_SHAPE_CONVEX || c.type == PBD_SHAPE_MESH || c.type == PBD_SHAPE_HEIGHTFIELD;
		if ((st == PBD_OK) != surface)
			fuzz_fail("collider get_triangles -> %s for type %u", pbd_status_string(st), type);
	}
	if (id[0].index1 && h->collider_count < MAX_COLLIDERS) h->colliders[h->collider_count++] = id[0];
}

static void op_collider(harness* h, reader* r) {
	const uint8_t k = rd_u8(r);
	if (k % 5 < 2) {
		create_collider(h, r, false);
		return;
	}
	const pbd_collider_id id = rd_collider(h, r);
	bool valid[2];
	for (int w = 0; w < 2; ++w) valid[w] = pbd_collider_is_valid(h->w[w], id);
	if (!agree(h, valid[0] == valid[1], "collider %u/%u valid in one world only", id.index1, id.generation)) return;
	pbd_status st[2];
	counts before[2];
	take_both(h, before);
	switch (k % 5) {
	case 2:
		BOTH(st, pbd_collider_destroy(W, id));
		tr("destroy collider %u/%u -> %s", id.index1, id.generation, pbd_status_string(st[0]));
		if ((st[0] == PBD_OK) != valid[0])
			fuzz_fail("collider destroy: status %s for an id valid=%d", pbd_status_string(st[0]), valid[0]);
		if (st[0] == PBD_OK && pbd_collider_is_valid(h->w[0], id)) fuzz_fail("collider id valid after destroy");
		if (st[0] == PBD_OK && pbd_world_collider_count(h->w[0]) + 1 != before[0].n[COUNT_COLLIDERS])
			fuzz_fail("collider count not decreased");
		settle(h, st, NULL, "destroy collider");
		return;
	case 3: {
		const pbd_pose p = rd_pose(r);
		if (k & 0x80)
			BOTH(st, pbd_collider_move_to(W, id, p));
		else
			BOTH(st, pbd_collider_set_pose(W, id, p));
		tr("%s collider %u/%u to %g %g %g -> %s", (k & 0x80) ? "move" : "teleport", id.index1, id.generation,
		   (double)p.position.x, (double)p.position.y, (double)p.position.z, pbd_status_string(st[0]));
		break;
	}
	default: {
		const pbd_vec3 v = rd_vec3(r), wv = rd_vec3(r);
		BOTH(st, pbd_collider_set_velocity(W, id, v, wv));
		tr("velocity of collider %u/%u: %g %g %g, angular %g %g %g -> %s", id.index1, id.generation, (double)v.x,
		   (double)v.y, (double)v.z, (double)wv.x, (double)wv.y, (double)wv.z, pbd_status_string(st[0]));
		break;
	}
	}
	settle(h, st, before, "collider edit");
}

/* ---- settings, both worlds; threads, kernels and the profile on the tested world only ------ */

static void op_settings(harness* h, reader* r) {
	const uint8_t k = rd_u8(r);
	pbd_status st[2] = {PBD_OK, PBD_OK};
	switch (k % 18) {
	case 0: {
		const pbd_real dt = rd_real(r);
		BOTH(st, pbd_world_set_dt(W, dt));
		tr("dt %g -> %s", (double)dt, pbd_status_string(st[0]));
		break;
	}
	case 1: {
		const int n = rd_int(r, -1, MAX_SUBSTEPS);
		BOTH(st, pbd_world_set_substeps(W, n));
		tr("substeps %d -> %s", n, pbd_status_string(st[0]));
		break;
	}
	case 2: {
		const int n = rd_int(r, -1, MAX_ITERATIONS);
		BOTH(st, pbd_world_set_iterations(W, n));
		tr("iterations %d -> %s", n, pbd_status_string(st[0]));
		break;
	}
	case 3: {
		const int n = rd_u8(r) % 3;
		BOTH(st, pbd_world_set_solver(W, (pbd_solver)n));
		tr("solver %d -> %s", n, pbd_status_string(st[0]));
		break;
	}
	case 4: {
		const int n = rd_u8(r) % 3;
		BOTH(st, pbd_world_set_formulation(W, (pbd_formulation)n));
		tr("formulation %d -> %s", n, pbd_status_string(st[0]));
		break;
	}
	case 5: {
		const pbd_vec3 g = rd_vec3(r);
		BOTH(st, pbd_world_set_gravity(W, g));
		tr("gravity %g %g %g -> %s", (double)g.x, (double)g.y, (double)g.z, pbd_status_string(st[0]));
		break;
	}
	case 6: {
		const pbd_real d = rd_real(r);
		BOTH(st, pbd_world_set_damping(W, d));
		tr("damping %g -> %s", (double)d, pbd_status_string(st[0]));
		break;
	}
	case 7: {
		const pbd_real alpha = rd_real(r), omega = rd_real(r);
		const bool split = rd_u8(r) & 1;
		BOTH(st, pbd_world_set_jacobi(W, alpha, omega, split));
		tr("jacobi alpha %g omega %g split %d -> %s", (double)alpha, (double)omega, split, pbd_status_string(st[0]));
		break;
	}
	case 8: {
		/* every method and one past the end */
		const int n = rd_u8(r) % (METHODS + 1);
		BOTH(st, pbd_world_set_method(W, (pbd_method)n));
		tr("method %s -> %s", pbd_method_name((pbd_method)n), pbd_status_string(st[0]));
		break;
	}
	case 9: {
		const int n = rd_u8(r) % 3;
		BOTH(st, pbd_world_set_collision_mode(W, (pbd_collision_mode)n));
		tr("collision mode %d -> %s", n, pbd_status_string(st[0]));
		break;
	}
	case 10: {
		const bool on = rd_u8(r) & 1;
		const pbd_real rho = rd_real(r), gamma = rd_real(r);
		const int delay = rd_int(r, -1, 18);
		BOTH(st, pbd_world_set_chebyshev(W, on, rho, delay, gamma));
		tr("chebyshev %d rho %g delay %d gamma %g -> %s", on, (double)rho, delay, (double)gamma,
		   pbd_status_string(st[0]));
		break;
	}
	case 11: {
		const int levels = rd_int(r, -1, PBD_HIERARCHY_MAX_LEVELS + 1);
		const int iterations = rd_int(r, -1, 16);
		BOTH(st, pbd_world_set_hierarchy(W, levels, iterations));
		tr("hierarchy %d levels, %d iterations -> %s", levels, iterations, pbd_status_string(st[0]));
		break;
	}
	case 12: {
		const pbd_real s = rd_real(r);
		BOTH(st, pbd_world_set_hard_stiffness(W, s));
		tr("hard stiffness %g -> %s", (double)s, pbd_status_string(st[0]));
		break;
	}
	case 13: {
		const pbd_real damping = rd_real(r), tolerance = rd_real(r);
		BOTH(st, pbd_world_set_force_settings(W, damping, tolerance));
		tr("stiffness damping %g, linear tolerance %g -> %s", (double)damping, (double)tolerance,
		   pbd_status_string(st[0]));
		break;
	}
	case 14: {
		const pbd_vec3 wind = rd_vec3(r);
		const pbd_real strength = rd_real(r), frequency = rd_real(r);
		BOTH(st, pbd_world_set_wind(W, wind, strength, frequency));
		tr("wind %g %g %g gusts %g at %g Hz -> %s", (double)wind.x, (double)wind.y, (double)wind.z, (double)strength,
		   (double)frequency, pbd_status_string(st[0]));
		break;
	}
	case 15: {
		/* threads of the tested world: 1 to MAX_THREADS, and 0 and one past PBD_MAX_THREADS refused */
		const uint8_t b = rd_u8(r);
		const int n = b & 0x80 ? (b & 1 ? 0 : PBD_MAX_THREADS + 1) : 1 + b % MAX_THREADS;
		const pbd_status s = pbd_world_set_threads(h->w[0], n);
		set_blocks(h, 0);
		tr("threads %d -> %s", n, pbd_status_string(s));
		if ((s == PBD_OK) != (n >= 1 && n <= PBD_MAX_THREADS) && s != PBD_ERR_OUT_OF_MEMORY)
			fuzz_fail("set threads %d -> %s", n, pbd_status_string(s));
		return;
	}
	case 16: {
		/* the kernels of the tested world, each of them and one past the last */
		const pbd_simd n = (pbd_simd)(rd_u8(r) % (PBD_SIMD_AVX512 + 2));
		const pbd_status s = pbd_world_set_simd(h->w[0], n);
		tr("simd %s -> %s", simd_name(n), pbd_status_string(s));
		if (s != PBD_OK && (n == PBD_SIMD_AUTO || n == PBD_SIMD_SCALAR))
			fuzz_fail("set simd %s -> %s", simd_name(n), pbd_status_string(s));
		return;
	}
	default: {
		/* the profile, which never changes a result, on the tested world only */
		const bool on = rd_u8(r) & 1;
		const pbd_status s = pbd_world_set_profile(h->w[0], on);
		tr("profile %d -> %s", on, pbd_status_string(s));
		if (s != PBD_OK) fuzz_fail("set profile -> %s", pbd_status_string(s));
		return;
	}
	}
	settle(h, st, NULL, "world setting");
	/* The settings the world runs with stay inside what its setters accept. */
	const pbd_world_def d = pbd_world_get_def(h->w[0]);
	if (d.substeps < 1 || d.substeps > MAX_SUBSTEPS || d.iterations < 1 || d.iterations > MAX_ITERATIONS ||
	    !(d.dt > 0) || !isfinite(d.dt) || (int)d.method < 0 || d.method >= PBD_METHOD_COUNT)
		fuzz_fail("world settings out of range: substeps %d iterations %d dt %g method %d", d.substeps, d.iterations,
		          (double)d.dt, (int)d.method);
}

/* ---- bodies from every mesh builder ------------------------------------------------------- */

enum { BODY_GRID, BODY_ROPE, BODY_TRIANGLES, BODY_TET_BOX, BODY_TET_BALL, BODY_KINDS };

static pbd_status build_mesh(reader* r, uint8_t kind, pbd_mesh* m, pbd_error* err) {
	/* An octahedron, closed and wound outward: a balloon's surface. */
	static const uint32_t octahedron[24] = {0, 2, 4, 2, 1, 4, 1, 3, 4, 3, 0, 4, 2, 0, 5, 1, 2, 5, 3, 1, 5, 0, 3, 5};
	switch (kind) {
	case BODY_GRID: {
		pbd_grid_def g = pbd_grid_def_default();
		const uint8_t f = rd_u8(r);
		g.nx = rd_u8(r) % 12;
		g.ny = rd_u8(r) % 12;
		g.size_u = rd_real(r);
		g.size_v = rd_real(r);
		g.origin = rd_vec3(r);
		if (f & 1) g.axis_u = rd_vec3(r);
		if (f & 2) g.axis_v = rd_vec3(r);
		g.diagonals = (int)(rd_u8(r) % 4);
		g.bend = f & 4;
		return pbd_mesh_grid(&g, m, err);
	}
	case BODY_ROPE: {
		pbd_rope_def d = pbd_rope_def_default();
		d.segments = rd_u8(r) % 40;
		d.start = rd_vec3(r);
		d.end = rd_vec3(r);
		d.bend = rd_u8(r) & 1;
		return pbd_mesh_rope(&d, m, err);
	}
	case BODY_TRIANGLES: {
		const uint8_t f = rd_u8(r);
		pbd_vec3 x[16];
		uint32_t t[3 * 16];
		uint32_t nv, nt;
		if (f & 1) { /* the octahedron, of the input's size, its corners maybe moved */
			const pbd_real s = rd_real(r);
			nv = 6;
			nt = 8;
			for (uint32_t k = 0; k < nv; ++k) {
				const pbd_real sign = k & 1 ? -s : s;
				x[k] = pbd_v3(k / 2 == 0 ? sign : 0, k / 2 == 1 ? sign : 0, k / 2 == 2 ? sign : 0);
				if (f & 2) x[k] = pbd_v3_add(x[k], rd_vec3(r));
			}
			memcpy(t, octahedron, sizeof octahedron);
		} else {
			nv = rd_u8(r) % 17;
			nt = rd_u8(r) % 17;
			for (uint32_t k = 0; k < nv; ++k) x[k] = rd_vec3(r);
			for (uint32_t k = 0; k < 3 * nt; ++k) t[k] = rd_u8(r) % (nv + 1);
		}
		return pbd_mesh_from_triangles(nv, x, nt, t, f & 4, m, err);
	}
	case BODY_TET_BOX: {
		pbd_tet_box_def d = pbd_tet_box_def_default();
		d.nx = rd_u8(r) % 4;
		d.ny = rd_u8(r) % 4;
		d.nz = rd_u8(r) % 4;
		d.size = rd_vec3(r);
		d.origin = rd_vec3(r);
		const uint8_t t = rd_u8(r);
		d.tets_per_cell = t & 0x80 ? (int)(int8_t)t : 5 + (t & 1);
		return pbd_mesh_tet_box(&d, m, err);
	}
	default: {
		pbd_tet_sphere_def d = pbd_tet_sphere_def_default();
		d.center = rd_vec3(r);
		d.radius = rd_real(r);
		d.subdivisions = rd_u8(r) % 3;
		return pbd_mesh_tet_sphere(&d, m, err);
	}
	}
}

/* The soft def's options, each read when its bit of `f` is set. */
static void rd_soft_def(reader* r, uint32_t f, pbd_soft_def* bd, pbd_cloth_material* cloth) {
	if (f & 1u << 0) bd->translation = rd_vec3(r);
	if (f & 1u << 1) bd->velocity = rd_vec3(r);
	bd->mass_mode = (pbd_mass_mode)(rd_u8(r) % 4);
	bd->mass = rd_real(r);
	if (f & 1u << 2)
		for (int e = 0; e < PBD_EDGE_KIND_COUNT; ++e) {
			bd->material[e].enabled = rd_u8(r) & 1;
			bd->material[e].stiffness_stretch = rd_real(r);
			bd->material[e].stiffness_compress = rd_real(r);
			bd->material[e].compliance_stretch = rd_real(r);
			bd->material[e].compliance_compress = rd_real(r);
		}
	if (f & 1u << 3) { /* a physical material: a preset, or any numbers */
		const uint32_t n = pbd_cloth_material_preset_count(), k = rd_u8(r) % (n + 1);
		pbd_error err;
		if (k < n && pbd_cloth_material_preset(pbd_cloth_material_preset_name(k), cloth, &err) != PBD_OK)
			fuzz_fail("cloth preset %u: %s", k, err.message);
		if (k == n) {
			cloth->density = rd_real(r);
			cloth->stretch = rd_real(r);
			cloth->shear = rd_real(r);
			cloth->bending = rd_real(r);
		}
		bd->cloth = cloth;
	}
	if (f & 1u << 4) {
		bd->bend = (pbd_bend_model)(rd_u8(r) % 5);
		bd->bend_stiffness = rd_real(r);
		bd->bend_compliance = rd_real(r);
	}
	if (f & 1u << 5) {
		bd->tets = (pbd_tet_model)(rd_u8(r) % 4);
		bd->tet_stiffness = rd_real(r);
		bd->tet_compliance = rd_real(r);
		bd->tet_youngs_modulus = rd_real(r);
		bd->tet_poisson_ratio = rd_real(r);
	}
	if (f & 1u << 6) {
		bd->long_range = true;
		bd->long_range_mode = (pbd_lra_mode)(rd_u8(r) % 3);
		bd->long_range_scale = rd_real(r);
	}
	if (f & 1u << 7) {
		bd->membrane = (pbd_membrane_model)(rd_u8(r) % 3);
		bd->membrane_stiffness = rd_real(r);
		bd->membrane_compliance = rd_real(r);
	}
	if (f & 1u << 8) {
		bd->balloon = true;
		bd->pressure = rd_real(r);
		bd->volume_stiffness = rd_real(r);
		bd->volume_compliance = rd_real(r);
	}
	if (f & 1u << 9) {
		bd->collision_mask = rd_u32(r);
		bd->thickness = rd_real(r);
		const uint8_t b = rd_u8(r);
		bd->self_collision = b & 1;
		bd->edge_contacts = b & 2;
	}
	if (f & 1u << 10) {
		bd->drag_normal = rd_real(r);
		bd->drag_tangent = rd_real(r);
		bd->drag_particle = rd_real(r);
		bd->wind = rd_vec3(r);
	}
}

static void op_body(harness* h, reader* r) {
	const uint8_t kind = rd_u8(r) % BODY_KINDS;
	pbd_mesh m;
	pbd_error err;
	err.message[0] = 0;
	pbd_status st = build_mesh(r, kind, &m, &err);
	tr("mesh of kind %u -> %s %s", kind, pbd_status_string(st), st == PBD_OK ? "" : err.message);
	if (st != PBD_OK) {
		if (!err.message[0] || m.positions) fuzz_fail("builder failed without a message or left a mesh");
		return;
	}
	for (uint32_t e = 0; e < m.edge_count; ++e) {
		const pbd_vec3 d = pbd_v3_sub(m.positions[m.edges[2 * e]], m.positions[m.edges[2 * e + 1]]);
		if (!isfinite(pbd_v3_length(d))) fuzz_fail("builder made edge %u without a finite length", e);
	}
	counts before[2];
	take_both(h, before);
	if (before[0].n[COUNT_PARTICLES] + m.vertex_count > MAX_PARTICLES ||
	    before[0].n[PBD_FAMILY_DISTANCE] + m.edge_count > MAX_CONSTRAINTS ||
	    before[0].n[COUNT_TRIANGLES] + m.triangle_count > MAX_TRIANGLES ||
	    before[0].n[PBD_FAMILY_TET_NEOHOOKEAN] + m.tet_count > MAX_CONSTRAINTS ||
	    before[0].n[PBD_FAMILY_TET_VOLUME] + m.tet_count > MAX_CONSTRAINTS) {
		pbd_mesh_free(&m);
		return;
	}
	pbd_soft_def bd = pbd_soft_def_default();
	pbd_cloth_material cloth;
	bd.mesh = &m;
	rd_soft_def(r, rd_u32(r), &bd, &cloth);
	uint32_t pinned[4];
	bd.pinned_count = rd_u8(r) % 5;
	for (uint32_t p = 0; p < bd.pinned_count; ++p) pinned[p] = rd_index(r, m.vertex_count);
	bd.pinned = pinned;
	pbd_status sts[2];
	pbd_soft_id id[2];
	BOTH(sts, pbd_soft_create(W, &bd, &id[both_k]));
	tr("body of %u vertices, %u edges, %u triangles, %u tets, mass mode %d mass %g, %u pinned -> %s %s", m.vertex_count,
	   m.edge_count, m.triangle_count, m.tet_count, (int)bd.mass_mode, (double)bd.mass, bd.pinned_count,
	   pbd_status_string(sts[0]), sts[0] == PBD_OK ? "" : pbd_world_last_error(h->w[0]));
	if (settle(h, sts, before, "body create")) {
		pbd_soft_info body;
		if (pbd_soft_get_info(h->w[0], id[0], &body) != PBD_OK) fuzz_fail("new body has no info");
		if (body.first_particle != before[0].n[COUNT_PARTICLES] || body.particle_count != m.vertex_count)
			fuzz_fail("body landed at %u (+%u), expected %u (+%u)", body.first_particle, body.particle_count,
			          before[0].n[COUNT_PARTICLES], m.vertex_count);
	} else if (!h->stop && (id[0].index1 || id[1].index1)) {
		fuzz_fail("body create failed but returned id %u", id[0].index1);
	}
	pbd_mesh_free(&m);
}

/* ---- rigid bodies: every type, shapes on them, their matter and motion ---------------------- */

/* Bodies the harness remembers, with the type each was made with (the library has no call that
 * reads a body's type back). */
static void remember_body(harness* h, pbd_body_id id, pbd_body_type type) {
	if (h->body_count >= MAX_BODIES) return;
	h->body_types[h->body_count] = type;
	h->bodies[h->body_count++] = id;
}

/* Matter for a dynamic body: a box's (any mass, the extents from the input, maybe turned and off
 * its centre), or any numbers at all, which the library must refuse unless a solid could have
 * them. */
static void rd_mass(reader* r, pbd_mass_properties* m) {
	memset(m, 0, sizeof *m);
	const uint8_t mode = rd_u8(r);
	m->mass = (double)rd_real(r);
	if (mode & 1) {
		for (int k = 0; k < 3; ++k) m->center[k] = (double)rd_real(r);
		for (int k = 0; k < 6; ++k) m->inertia[k] = (double)rd_real(r);
	} else {
		const pbd_vec3 e = rd_vec3(r);
		const double x = (double)e.x, y = (double)e.y, z = (double)e.z;
		const double d[3] = {m->mass * (y * y + z * z) / 3, m->mass * (x * x + z * z) / 3,
		                     m->mass * (x * x + y * y) / 3};
		if (mode & 2) { /* the box turned by a unit quaternion: R diag(d) R^T has products of inertia */
			double q[4] = {(double)rd_real(r), (double)rd_real(r), (double)rd_real(r), (double)rd_real(r)};
			const double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
			if (!(n > 1e-6) || !isfinite(n))
				q[0] = q[1] = q[2] = 0, q[3] = 1;
			else
				for (int k = 0; k < 4; ++k) q[k] /= n;
			const double a = q[0], b = q[1], c = q[2], s = q[3];
			const double R[3][3] = {{1 - 2 * (b * b + c * c), 2 * (a * b - c * s), 2 * (a * c + b * s)},
			                        {2 * (a * b + c * s), 1 - 2 * (a * a + c * c), 2 * (b * c - a * s)},
			                        {2 * (a * c - b * s), 2 * (b * c + a * s), 1 - 2 * (a * a + b * b)}};
			double I[3][3];
			for (int i = 0; i < 3; ++i)
				for (int j = 0; j < 3; ++j)
					I[i][j] = R[i][0] * d[0] * R[j][0] + R[i][1] * d[1] * R[j][1] + R[i][2] * d[2] * R[j][2];
			const double packed[6] = {I[0][0], I[1][1], I[2][2], I[0][1], I[0][2], I[1][2]};
			memcpy(m->inertia, packed, sizeof packed);
		} else {
			memcpy(m->inertia, d, sizeof d);
		}
		if (mode & 4)
			m->center[0] = (double)rd_real(r), m->center[1] = (double)rd_real(r), m->center[2] = (double)rd_real(r);
	}
	/* a centre past the float range, which the body cannot hold */
	if (mode & 8) m->center[1] = 1e300;
}

/* What a body def of each type reads after the settings every type has. */
typedef void body_fill(reader* r, pbd_body_def* d, uint8_t f);

static void fill_static(reader* r, pbd_body_def* d, uint8_t f) {
	if (f & 8) d->velocity = rd_vec3(r); /* motion for a body that never moves: refused unless zero */
}

static void fill_kinematic(reader* r, pbd_body_def* d, uint8_t f) {
	(void)f;
	d->velocity = rd_vec3(r);
	d->angular_velocity = rd_vec3(r);
}

static void fill_dynamic(reader* r, pbd_body_def* d, uint8_t f) {
	if (f & 8) {
		d->velocity = rd_vec3(r);
		d->angular_velocity = rd_vec3(r);
	}
	rd_mass(r, &d->mass);
}

static body_fill* const fill_body[] = {
    [PBD_BODY_STATIC] = fill_static,
    [PBD_BODY_KINEMATIC] = fill_kinematic,
    [PBD_BODY_DYNAMIC] = fill_dynamic,
};
/* types.h has no count of body types: the last one's value stands for it, and test_fuzz_tables
 * asks the library to refuse the type after the table's last. */
enum { BODY_TYPES = sizeof fill_body / sizeof fill_body[0] };
_Static_assert(BODY_TYPES == PBD_BODY_DYNAMIC + 1, "fuzz_step makes bodies of every type: give the new one its fill");

static const char* body_type_name(uint32_t t) {
	static const char* const names[] = {"static", "kinematic", "dynamic"};
	return t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

/* A body's state is finite and its frame turned by a unit quaternion. */
static void check_body_state(const pbd_body_state* s, pbd_body_id id, const char* when) {
	const pbd_quat q = s->pose.rotation;
	const double n =
	    (double)q.x * (double)q.x + (double)q.y * (double)q.y + (double)q.z * (double)q.z + (double)q.w * (double)q.w;
	bool finite = fuzz_v3_finite(s->pose.position) && fuzz_v3_finite(s->center) && fuzz_v3_finite(s->velocity) &&
	              fuzz_v3_finite(s->angular_velocity) && isfinite(s->kinetic_energy);
	for (int k = 0; k < 3; ++k) finite = finite && isfinite(s->momentum[k]) && isfinite(s->angular_momentum[k]);
	if (!finite || !(fabs(n - 1) < 1e-4))
		fuzz_fail("%s: body %u/%u at %g %g %g turned by %g %g %g %g (norm^2 %g), centre %g %g %g, moving %g %g %g, "
		          "turning %g %g %g, energy %g",
		          when, id.index1, id.generation, (double)s->pose.position.x, (double)s->pose.position.y,
		          (double)s->pose.position.z, (double)q.x, (double)q.y, (double)q.z, (double)q.w, n,
		          (double)s->center.x, (double)s->center.y, (double)s->center.z, (double)s->velocity.x,
		          (double)s->velocity.y, (double)s->velocity.z, (double)s->angular_velocity.x,
		          (double)s->angular_velocity.y, (double)s->angular_velocity.z, s->kinetic_energy);
}

static void create_body(harness* h, reader* r) {
	pbd_body_def d = pbd_body_def_default();
	const uint32_t type = rd_u8(r) % (BODY_TYPES + 1); /* and one past the last */
	const uint8_t f = rd_u8(r);
	d.type = (pbd_body_type)type;
	if (f & 1) d.pose = rd_pose(r);
	if (f & 2) d.gravity_scale = rd_real(r);
	if (f & 4) {
		d.linear_damping = rd_real(r);
		d.angular_damping = rd_real(r);
	}
	if (type < BODY_TYPES) fill_body[type](r, &d, f);
	counts before[2];
	take_both(h, before);
	pbd_body_id id[2];
	for (int k = 0; k < 2; ++k) id[k] = pbd_body_create(h->w[k], &d);
	tr("rigid body %s at %g %g %g, mass %g inertia %g %g %g / %g %g %g -> id %u/%u %s", body_type_name(type),
	   (double)d.pose.position.x, (double)d.pose.position.y, (double)d.pose.position.z, d.mass.mass, d.mass.inertia[0],
	   d.mass.inertia[1], d.mass.inertia[2], d.mass.inertia[3], d.mass.inertia[4], d.mass.inertia[5], id[0].index1,
	   id[0].generation, id[0].index1 ? "" : pbd_world_last_error(h->w[0]));
	const pbd_status st[2] = {id[0].index1 ? PBD_OK : PBD_ERR_INVALID_ARGUMENT,
	                          id[1].index1 ? PBD_OK : PBD_ERR_INVALID_ARGUMENT};
	if (!agree(h, id[0].index1 == id[1].index1 && id[0].generation == id[1].generation,
	           "body create: id %u/%u in one world, %u/%u in the other", id[0].index1, id[0].generation, id[1].index1,
	           id[1].generation))
		return;
	if (!id[0].index1) {
		settle(h, st, before, "body create");
		return;
	}
	if (type >= BODY_TYPES) fuzz_fail("a rigid body of type %u was accepted", type);
	for (int k = 0; k < 2; ++k) {
		pbd_body_state s;
		if (!pbd_body_is_valid(h->w[k], id[k]) || pbd_body_get_state(h->w[k], id[k], &s) != PBD_OK)
			fuzz_fail("new body %u/%u is not valid", id[k].index1, id[k].generation);
		check_body_state(&s, id[k], "a new body");
		if (s.type != d.type || (type == PBD_BODY_DYNAMIC) != (s.mass > 0))
			fuzz_fail("a new %s body reads back as type %d with a mass of %g kg", body_type_name(type), (int)s.type,
			          s.mass);
		if (pbd_world_body_count(h->w[k]) != before[k].n[COUNT_BODIES] + 1)
			fuzz_fail("body create: %u bodies after adding one to %u", pbd_world_body_count(h->w[k]),
			          before[k].n[COUNT_BODIES]);
	}
	settle(h, st, before, "body create");
	remember_body(h, id[0], (pbd_body_type)type);
}

/* A dynamic body's matter measured from its shapes: each shape's at a density from the input,
 * combined, then given to the body. Flag 1 takes every collider the recipe made instead (planes,
 * open meshes and height fields bound no volume, destroyed ones are gone: refused). */
static void measure_body(harness* h, reader* r) {
	const pbd_body_id body = rd_body(h, r);
	const pbd_real density = rd_real(r);
	const uint8_t mode = rd_u8(r);
	pbd_mass_properties parts[2][BODY_SHAPES];
	uint32_t n = 0;
	for (uint32_t c = 0; c < h->collider_count && n < BODY_SHAPES && !h->stop; ++c) {
		const pbd_collider_id cid = h->colliders[c];
		pbd_collider_def def;
		const bool alive = pbd_collider_is_valid(h->w[0], cid) && pbd_collider_get_def(h->w[0], cid, &def) == PBD_OK;
		if (!(mode & 1) && (!alive || def.body.index1 != body.index1 || def.body.generation != body.generation))
			continue;
		counts before[2];
		take_both(h, before);
		pbd_status st[2];
		BOTH(st, pbd_collider_mass_properties(W, cid, density, &parts[both_k][n]));
		tr("mass of collider %u/%u at %g kg/m^3 -> %s: %g kg", cid.index1, cid.generation, (double)density,
		   pbd_status_string(st[0]), st[0] == PBD_OK ? parts[0][n].mass : 0.0);
		if (!settle(h, st, before, "collider mass properties")) continue;
		const pbd_mass_properties* m = &parts[0][n];
		if (!agree(h, SAME(parts[0][n], parts[1][n]), "collider mass properties differ between the worlds")) return;
		bool finite = isfinite(m->mass);
		for (int k = 0; k < 3; ++k) finite = finite && isfinite(m->center[k]);
		for (int k = 0; k < 6; ++k) finite = finite && isfinite(m->inertia[k]);
		if (!finite)
			fuzz_fail("collider %u/%u: mass properties accepted but not finite (mass %g, centre %g %g %g)", cid.index1,
			          cid.generation, m->mass, m->center[0], m->center[1], m->center[2]);
		++n;
	}
	if (h->stop) return;
	pbd_mass_properties sum[2];
	memset(sum, 0, sizeof sum);
	pbd_status cs[2];
	for (int k = 0; k < 2; ++k) cs[k] = pbd_mass_properties_combine(parts[k], n, &sum[k]);
	tr("combine %u parts -> %s: %g kg", n, pbd_status_string(cs[0]), sum[0].mass);
	if (!agree(h, cs[0] == cs[1] && SAME(sum[0], sum[1]), "combined mass properties differ between the worlds")) return;
	if (cs[0] == PBD_OK && !(isfinite(sum[0].mass) && sum[0].mass > 0))
		fuzz_fail("%u parts combined into a mass of %g kg", n, sum[0].mass);
	/* A refused combination leaves zeros: the body must refuse them in turn. */
	if (cs[0] != PBD_OK && !(mode & 2)) return;
	counts before[2];
	take_both(h, before);
	pbd_status st[2];
	BOTH(st, pbd_body_set_mass(W, body, &sum[both_k]));
	tr("body %u/%u takes %g kg -> %s", body.index1, body.generation, sum[0].mass, pbd_status_string(st[0]));
	if (cs[0] != PBD_OK && st[0] == PBD_OK) fuzz_fail("a body took zero mass");
	settle(h, st, before, "body set mass (measured)");
}

static void op_rigid(harness* h, reader* r) {
	const uint8_t k = rd_u8(r);
	switch (k % 8) {
	case 0:
		create_body(h, r);
		return;
	case 1:
		create_collider(h, r, true);
		return;
	case 2:
		measure_body(h, r);
		return;
	default:
		break;
	}
	const pbd_body_id id = rd_body(h, r);
	bool valid[2];
	for (int w = 0; w < 2; ++w) valid[w] = pbd_body_is_valid(h->w[w], id);
	if (!agree(h, valid[0] == valid[1], "body %u/%u valid in one world only", id.index1, id.generation)) return;
	counts before[2];
	take_both(h, before);
	pbd_status st[2];
	switch (k % 8) {
	case 3: {
		pbd_mass_properties m;
		rd_mass(r, &m);
		BOTH(st, pbd_body_set_mass(W, id, &m));
		tr("body %u/%u mass %g inertia %g %g %g / %g %g %g centre %g %g %g -> %s", id.index1, id.generation, m.mass,
		   m.inertia[0], m.inertia[1], m.inertia[2], m.inertia[3], m.inertia[4], m.inertia[5], m.center[0], m.center[1],
		   m.center[2], pbd_status_string(st[0]));
		break;
	}
	case 4: {
		/* a push at a point given from the body's centre, or (flag 128) anywhere */
		const uint8_t how = rd_u8(r);
		const pbd_vec3 a = rd_vec3(r);
		pbd_vec3 p = rd_vec3(r);
		pbd_body_state s;
		if (!(how & 0x80) && pbd_body_get_state(h->w[0], id, &s) == PBD_OK) p = pbd_v3_add(s.center, p);
		static const char* const what[] = {"force", "torque", "impulse"};
		switch (how % 3) {
		case 0:
			BOTH(st, pbd_body_apply_force(W, id, a, p));
			break;
		case 1:
			BOTH(st, pbd_body_apply_torque(W, id, a));
			break;
		default:
			BOTH(st, pbd_body_apply_impulse(W, id, a, p));
			break;
		}
		tr("%s %g %g %g at %g %g %g on body %u/%u -> %s", what[how % 3], (double)a.x, (double)a.y, (double)a.z,
		   (double)p.x, (double)p.y, (double)p.z, id.index1, id.generation, pbd_status_string(st[0]));
		break;
	}
	case 5: {
		/* a teleport, or (flag 128) a keyframe for the next step to reach */
		const pbd_pose p = rd_pose(r);
		if (k & 0x80)
			BOTH(st, pbd_body_move_to(W, id, p));
		else
			BOTH(st, pbd_body_set_pose(W, id, p));
		tr("%s body %u/%u to %g %g %g turned by %g %g %g %g -> %s", (k & 0x80) ? "move" : "teleport", id.index1,
		   id.generation, (double)p.position.x, (double)p.position.y, (double)p.position.z, (double)p.rotation.x,
		   (double)p.rotation.y, (double)p.rotation.z, (double)p.rotation.w, pbd_status_string(st[0]));
		break;
	}
	case 6: {
		const pbd_vec3 v = rd_vec3(r), wv = rd_vec3(r);
		BOTH(st, pbd_body_set_velocity(W, id, v, wv));
		tr("velocity of body %u/%u: %g %g %g, angular %g %g %g -> %s", id.index1, id.generation, (double)v.x,
		   (double)v.y, (double)v.z, (double)wv.x, (double)wv.y, (double)wv.z, pbd_status_string(st[0]));
		pbd_body_state s;
		if (st[0] == PBD_OK &&
		    (pbd_body_get_state(h->w[0], id, &s) != PBD_OK || !SAME(s.velocity, v) || !SAME(s.angular_velocity, wv)))
			fuzz_fail("body %u/%u does not move at the velocities it accepted", id.index1, id.generation);
		break;
	}
	default: {
		BOTH(st, pbd_body_destroy(W, id));
		tr("destroy body %u/%u -> %s", id.index1, id.generation, pbd_status_string(st[0]));
		if ((st[0] == PBD_OK) != valid[0])
			fuzz_fail("body destroy: status %s for an id valid=%d", pbd_status_string(st[0]), valid[0]);
		if (st[0] != PBD_OK) break;
		for (int w = 0; w < 2; ++w) {
			if (pbd_body_is_valid(h->w[w], id)) fuzz_fail("body id valid after destroy");
			if (pbd_world_body_count(h->w[w]) + 1 != before[w].n[COUNT_BODIES]) fuzz_fail("body count not decreased");
			if (pbd_world_attachment_count(h->w[w]) != before[w].n[PBD_FAMILY_ATTACHMENT])
				fuzz_fail("destroying a body removed attachments");
		}
		/* the shapes it carried went with it */
		for (uint32_t c = 0; c < h->collider_count; ++c) {
			pbd_collider_def def;
			if (pbd_collider_is_valid(h->w[0], h->colliders[c]) &&
			    pbd_collider_get_def(h->w[0], h->colliders[c], &def) == PBD_OK && def.body.index1 == id.index1 &&
			    def.body.generation == id.generation)
				fuzz_fail("collider %u/%u outlived the body %u/%u it rode on", h->colliders[c].index1,
				          h->colliders[c].generation, id.index1, id.generation);
		}
		settle(h, st, NULL, "destroy body");
		return;
	}
	}
	if (settle(h, st, before, "body call") && valid[0]) {
		pbd_body_state s;
		if (pbd_body_get_state(h->w[0], id, &s) != PBD_OK)
			fuzz_fail("body %u/%u has no state", id.index1, id.generation);
		check_body_state(&s, id, "after an accepted body call");
	}
}

/* ---- steps, and the comparison of the two worlds ------------------------------------------ */

/* What a constraint of each family costs to project, against a distance (a cluster or an enclosed
 * volume spans many particles). */
static const double family_work[] = {
    [PBD_FAMILY_DISTANCE] = 1,
    [PBD_FAMILY_TET_VOLUME] = 2,
    [PBD_FAMILY_TET_NEOHOOKEAN] = 6,
    [PBD_FAMILY_ATTACHMENT] = 1,
    [PBD_FAMILY_LRA] = 1,
    [PBD_FAMILY_CLUSTER] = CLUSTER_MAX,
    [PBD_FAMILY_BEND_DIHEDRAL] = 3,
    [PBD_FAMILY_BEND_ISOMETRIC] = 2,
    [PBD_FAMILY_TRIANGLE] = 4,
    [PBD_FAMILY_VOLUME] = 64,
    [PBD_FAMILY_JOINT] = 8,
};
_Static_assert(sizeof family_work / sizeof family_work[0] == PBD_FAMILY_COUNT,
               "fuzz_step weighs every constraint family: give the new one its cost");

/* The work of one step of a world, in distance projections; more on several threads, whose stages
 * meet at barriers (on a loaded machine a barrier can cost a time slice). */
static double step_work(const pbd_world* w) {
	const pbd_world_def d = pbd_world_get_def(w);
	double c = 0;
	for (int f = 0; f < PBD_FAMILY_COUNT; ++f) c += family_work[f] * family_count[f](w);
	const double np = pbd_world_particle_count(w);
	c += np * (1 + pbd_world_collider_count(w));
	const double levels = d.hierarchy_levels > 0 ? 2 : 1, threads = d.threads > 1 ? 2 : 1;
	const int substeps = d.max_substeps > d.substeps ? d.max_substeps : d.substeps;
	return threads * (double)substeps * ((double)d.iterations * c * levels + 4 * np);
}

static void compare_stats(harness* h) {
	pbd_stats s[2];
	for (int k = 0; k < 2; ++k) pbd_world_get_stats(h->w[k], &s[k]);
	const pbd_stats *a = &s[0], *b = &s[1];
	bool same = SAME(a->time, b->time) && a->steps == b->steps && SAME(a->kinetic_energy, b->kinetic_energy) &&
	            SAME(a->potential_energy, b->potential_energy) && SAME(a->elastic_energy, b->elastic_energy) &&
	            a->energy_defined == b->energy_defined && SAME(a->momentum, b->momentum) &&
	            SAME(a->max_strain, b->max_strain) && SAME(a->mean_strain, b->mean_strain) &&
	            SAME(a->max_violation, b->max_violation) && SAME(a->edge_max_strain, b->edge_max_strain) &&
	            SAME(a->edge_mean_strain, b->edge_mean_strain) && SAME(a->linear_residual, b->linear_residual) &&
	            a->linear_iterations == b->linear_iterations && a->contacts == b->contacts &&
	            a->particles == b->particles && a->distances == b->distances && a->colliders == b->colliders &&
	            a->bodies == b->bodies;
	for (int f = 0; f < PBD_FAMILY_COUNT; ++f) {
		const pbd_family_stats *fa = &a->family[f], *fb = &b->family[f];
		same = same && fa->count == fb->count && SAME(fa->max_violation, fb->max_violation) &&
		       SAME(fa->max_strain, fb->max_strain) && SAME(fa->mean_strain, fb->mean_strain) &&
		       SAME(fa->elastic_energy, fb->elastic_energy) && fa->energy_defined == fb->energy_defined;
	}
	agree(h, same,
	      "step %d: statistics differ (kinetic energy %a / %a, max strain %a / %a, elastic %a / %a, contacts %u / %u)",
	      h->steps, a->kinetic_energy, b->kinetic_energy, a->max_strain, b->max_strain, a->elastic_energy,
	      b->elastic_energy, a->contacts, b->contacts);
}

static void compare_events(harness* h) {
	enum { CAP = 64 };
	pbd_contact c[2][CAP];
	uint32_t n[2];
	for (int k = 0; k < 2; ++k) n[k] = pbd_world_get_contacts(h->w[k], c[k], CAP);
	bool same = n[0] == n[1];
	for (uint32_t i = 0; same && i < n[0] && i < CAP; ++i)
		same = c[0][i].particle == c[1][i].particle && c[0][i].collider_index1 == c[1][i].collider_index1 &&
		       SAME(c[0][i].point, c[1][i].point) && SAME(c[0][i].normal, c[1][i].normal) &&
		       SAME(c[0][i].distance, c[1][i].distance) && SAME(c[0][i].normal_correction, c[1][i].normal_correction);
	if (!agree(h, same, "step %d: contacts differ (%u and %u)", h->steps, n[0], n[1])) return;
	pbd_trigger_event e[2][CAP];
	for (int k = 0; k < 2; ++k) n[k] = pbd_world_get_trigger_events(h->w[k], e[k], CAP);
	same = n[0] == n[1];
	for (uint32_t i = 0; same && i < n[0] && i < CAP; ++i)
		same = e[0][i].collider_index1 == e[1][i].collider_index1 && e[0][i].particle == e[1][i].particle &&
		       e[0][i].entered == e[1][i].entered;
	if (!agree(h, same, "step %d: trigger events differ (%u and %u)", h->steps, n[0], n[1])) return;
	pbd_trigger_object_event o[2][CAP];
	for (int k = 0; k < 2; ++k) n[k] = pbd_world_get_trigger_object_events(h->w[k], o[k], CAP);
	same = n[0] == n[1];
	for (uint32_t i = 0; same && i < n[0] && i < CAP; ++i)
		same = o[0][i].collider_index1 == o[1][i].collider_index1 && o[0][i].object.index1 == o[1][i].object.index1 &&
		       o[0][i].object.generation == o[1][i].object.generation && o[0][i].entered == o[1][i].entered;
	agree(h, same, "step %d: trigger object events differ (%u and %u)", h->steps, n[0], n[1]);
}

/* Every body slot's frame, and the state of every live body, bit for bit; each state finite. */
static bool compare_bodies(harness* h) {
	uint32_t slots[2];
	const pbd_pose* pose[2];
	for (int k = 0; k < 2; ++k) pose[k] = pbd_world_body_poses(h->w[k], &slots[k]);
	if (!agree(h, slots[0] == slots[1] && pbd_world_body_count(h->w[0]) == pbd_world_body_count(h->w[1]),
	           "step %d: %u body slots (%u live) against %u (%u live)", h->steps, slots[0],
	           pbd_world_body_count(h->w[0]), slots[1], pbd_world_body_count(h->w[1])))
		return false;
	for (uint32_t i = 0; i < slots[0]; ++i) {
		if (!agree(h, SAME(pose[0][i], pose[1][i]),
		           "step %d: body slot %u at %a %a %a turned by %a %a %a %a, against %a %a %a turned by %a %a %a %a",
		           h->steps, i, (double)pose[0][i].position.x, (double)pose[0][i].position.y,
		           (double)pose[0][i].position.z, (double)pose[0][i].rotation.x, (double)pose[0][i].rotation.y,
		           (double)pose[0][i].rotation.z, (double)pose[0][i].rotation.w, (double)pose[1][i].position.x,
		           (double)pose[1][i].position.y, (double)pose[1][i].position.z, (double)pose[1][i].rotation.x,
		           (double)pose[1][i].rotation.y, (double)pose[1][i].rotation.z, (double)pose[1][i].rotation.w))
			return false;
		const pbd_body_id id = pbd_world_body_at(h->w[0], i), other = pbd_world_body_at(h->w[1], i);
		if (!agree(h, SAME(id, other), "step %d: body slot %u holds %u/%u against %u/%u", h->steps, i, id.index1,
		           id.generation, other.index1, other.generation))
			return false;
		if (!id.index1) continue;
		if (id.index1 != i + 1) fuzz_fail("body slot %u holds id %u", i, id.index1);
		pbd_body_state s[2];
		memset(s, 0, sizeof s);
		for (int k = 0; k < 2; ++k)
			if (pbd_body_get_state(h->w[k], id, &s[k]) != PBD_OK)
				fuzz_fail("live body %u/%u has no state", id.index1, id.generation);
		check_body_state(&s[0], id, "after a step");
		if (!SAME(s[0].pose, pose[0][i]))
			fuzz_fail("body %u/%u: pbd_body_get_state and pbd_world_body_poses give different frames", id.index1,
			          id.generation);
		if (!agree(h, SAME(s[0], s[1]),
		           "step %d: body %u/%u centre %a %a %a moving %a %a %a turning %a %a %a, against %a %a %a moving %a "
		           "%a %a turning %a %a %a",
		           h->steps, id.index1, id.generation, (double)s[0].center.x, (double)s[0].center.y,
		           (double)s[0].center.z, (double)s[0].velocity.x, (double)s[0].velocity.y, (double)s[0].velocity.z,
		           (double)s[0].angular_velocity.x, (double)s[0].angular_velocity.y, (double)s[0].angular_velocity.z,
		           (double)s[1].center.x, (double)s[1].center.y, (double)s[1].center.z, (double)s[1].velocity.x,
		           (double)s[1].velocity.y, (double)s[1].velocity.z, (double)s[1].angular_velocity.x,
		           (double)s[1].angular_velocity.y, (double)s[1].angular_velocity.z))
			return false;
	}
	return true;
}

static void compare_worlds(harness* h) {
	const pbd_world *a = h->w[0], *b = h->w[1];
	const uint32_t n = pbd_world_particle_count(a);
	if (!agree(h, n == pbd_world_particle_count(b), "step %d: %u particles against %u", h->steps, n,
	           pbd_world_particle_count(b)))
		return;
	const pbd_vec3 *xa = pbd_world_positions(a), *xb = pbd_world_positions(b);
	const pbd_vec3 *va = pbd_world_velocities(a), *vb = pbd_world_velocities(b);
	for (uint32_t i = 0; i < n; ++i)
		if (!agree(h, SAME(xa[i], xb[i]) && SAME(va[i], vb[i]),
		           "step %d: particle %u of %u at %a %a %a moving %a %a %a, against %a %a %a moving %a %a %a", h->steps,
		           i, n, (double)xa[i].x, (double)xa[i].y, (double)xa[i].z, (double)va[i].x, (double)va[i].y,
		           (double)va[i].z, (double)xb[i].x, (double)xb[i].y, (double)xb[i].z, (double)vb[i].x, (double)vb[i].y,
		           (double)vb[i].z))
			return;
	if (!agree(h, pbd_world_hash(a) == pbd_world_hash(b), "step %d: the hashes differ (the positions' remainders)",
	           h->steps))
		return;
	for (int k = 0; k < PBD_WARN_COUNT; ++k) {
		const pbd_warning_stat wa = pbd_world_get_warning(a, (pbd_warning)k),
		                       wb = pbd_world_get_warning(b, (pbd_warning)k);
		if (!agree(h, wa.count == wb.count && wa.last_index == wb.last_index,
		           "step %d: warning %d counted %llu times (last %u) against %llu (last %u)", h->steps, k,
		           (unsigned long long)wa.count, wa.last_index, (unsigned long long)wb.count, wb.last_index))
			return;
	}
	uint32_t la[PBD_HIERARCHY_MAX_LEVELS + 1] = {0}, lb[PBD_HIERARCHY_MAX_LEVELS + 1] = {0};
	const uint32_t levels = pbd_world_hierarchy_levels(a, la);
	if (!agree(h, levels == pbd_world_hierarchy_levels(b, lb) && memcmp(la, lb, (levels + 1) * sizeof *la) == 0,
	           "step %d: the hierarchies differ", h->steps))
		return;
	if (!compare_bodies(h)) return;
	compare_stats(h);
	if (!h->stop) compare_events(h);
}

/* One step of both worlds. A force-based method may refuse a world (a family it has no force model
 * for, a dynamic rigid body, or under projective dynamics more large constraints than its low-rank
 * update takes): the step then returns PBD_ERR_INVALID_ARGUMENT, says why and leaves the world as
 * it was. Returns whether the worlds stepped. */
static bool step_both(harness* h) {
	fuzz_pins pins;
	fuzz_pins_take(&pins, h->w[0], h->moving);
	/* The remembered bodies that nothing may move (static) or speed up (kinematic). */
	pbd_body_state held[MAX_BODIES];
	bool live[MAX_BODIES];
	for (uint32_t b = 0; b < h->body_count; ++b)
		live[b] = h->body_types[b] != PBD_BODY_DYNAMIC && pbd_body_get_state(h->w[0], h->bodies[b], &held[b]) == PBD_OK;
	pbd_warning_stat nonfinite = pbd_world_get_warning(h->w[0], PBD_WARN_NONFINITE),
	                 diverged = pbd_world_get_warning(h->w[0], PBD_WARN_DIVERGED);
	uint64_t hash[2];
	pbd_status st[2];
	for (int k = 0; k < 2; ++k) {
		hash[k] = pbd_world_hash(h->w[k]);
		st[k] = pbd_world_step(h->w[k]);
	}
	++h->steps;
	const pbd_world_def d = pbd_world_get_def(h->w[0]);
	tr("step %d: %u particles (%u pinned), %u distances, %u colliders, %u bodies, method %s, %d threads, %s kernels "
	   "-> %s; %u contacts, warnings nonfinite %llu diverged %llu",
	   h->steps, pbd_world_particle_count(h->w[0]), pins.n, pbd_world_distance_count(h->w[0]),
	   pbd_world_collider_count(h->w[0]), pbd_world_body_count(h->w[0]), pbd_method_name(d.method), d.threads,
	   simd_name(d.simd), pbd_status_string(st[0]), pbd_world_get_contacts(h->w[0], NULL, 0),
	   (unsigned long long)pbd_world_get_warning(h->w[0], PBD_WARN_NONFINITE).count,
	   (unsigned long long)pbd_world_get_warning(h->w[0], PBD_WARN_DIVERGED).count);
	if (!agree(h, st[0] == st[1], "step %d: %s in one world, %s in the other", h->steps, pbd_status_string(st[0]),
	           pbd_status_string(st[1]))) {
		fuzz_pins_check(&pins, h->w[0]);
		return false;
	}
	if (st[0] != PBD_OK) {
		for (int k = 0; k < 2; ++k) {
			const char* e = pbd_world_last_error(h->w[k]);
			if (st[k] == PBD_ERR_OUT_OF_MEMORY && h->heap[k].refused)
				h->stop = true;
			else if (!fuzz_step_refused(h->w[k], st[k]))
				fuzz_fail("pbd_world_step failed: %s", e);
			if (!h->stop && pbd_world_hash(h->w[k]) != hash[k]) fuzz_fail("a refused step moved the world: %s", e);
		}
		fuzz_pins_check(&pins, h->w[0]);
		return false;
	}
	/* A state that is not finite is allowed only after a step that says so. */
	if (pbd_world_get_warning(h->w[0], PBD_WARN_NONFINITE).count == nonfinite.count &&
	    pbd_world_get_warning(h->w[0], PBD_WARN_DIVERGED).count == diverged.count) {
		const uint32_t n = pbd_world_particle_count(h->w[0]);
		const pbd_vec3* x = pbd_world_positions(h->w[0]);
		const pbd_vec3* v = pbd_world_velocities(h->w[0]);
		for (uint32_t i = 0; i < n; ++i)
			if (!fuzz_v3_finite(x[i]) || !fuzz_v3_finite(v[i]))
				fuzz_fail("step %d: particle %u of %u is not finite (x %g %g %g, v %g %g %g) and the step reported "
				          "neither a non-finite state nor a divergence",
				          h->steps, i, n, (double)x[i].x, (double)x[i].y, (double)x[i].z, (double)v[i].x,
				          (double)v[i].y, (double)v[i].z);
	}
	fuzz_pins_check(&pins, h->w[0]);
	memset(h->moving, 0, sizeof h->moving);
	for (uint32_t b = 0; b < h->body_count; ++b) {
		pbd_body_state s;
		const pbd_body_id id = h->bodies[b];
		if (!live[b] || pbd_body_get_state(h->w[0], id, &s) != PBD_OK) continue;
		if (s.type != h->body_types[b])
			fuzz_fail("step %d: %s body %u/%u reads back as type %d", h->steps, body_type_name(h->body_types[b]),
			          id.index1, id.generation, (int)s.type);
		if (h->body_types[b] == PBD_BODY_STATIC && (!SAME(s.pose, held[b].pose) || !SAME(s.center, held[b].center)))
			fuzz_fail("step %d: static body %u/%u moved from %a %a %a to %a %a %a", h->steps, id.index1, id.generation,
			          (double)held[b].center.x, (double)held[b].center.y, (double)held[b].center.z, (double)s.center.x,
			          (double)s.center.y, (double)s.center.z);
		if (!SAME(s.velocity, held[b].velocity) || !SAME(s.angular_velocity, held[b].angular_velocity))
			fuzz_fail("step %d: %s body %u/%u changed its velocity from %g %g %g (angular %g %g %g) to %g %g %g "
			          "(angular %g %g %g)",
			          h->steps, body_type_name(h->body_types[b]), id.index1, id.generation, (double)held[b].velocity.x,
			          (double)held[b].velocity.y, (double)held[b].velocity.z, (double)held[b].angular_velocity.x,
			          (double)held[b].angular_velocity.y, (double)held[b].angular_velocity.z, (double)s.velocity.x,
			          (double)s.velocity.y, (double)s.velocity.z, (double)s.angular_velocity.x,
			          (double)s.angular_velocity.y, (double)s.angular_velocity.z);
	}
	compare_worlds(h);
	return true;
}

static void op_step(harness* h, reader* r) {
	const int n = 1 + rd_u8(r) % 3;
	for (int s = 0; s < n && h->steps < MAX_STEPS && !h->stop; ++s) {
		h->work += step_work(h->w[0]) + step_work(h->w[1]);
		if (h->work > WORK_BUDGET) {
			tr("step skipped: past the work budget");
			h->steps = MAX_STEPS;
			return;
		}
		if (!step_both(h)) return;
	}
}

/* ---- the world def, and the recipe --------------------------------------------------------- */

static pbd_world_def rd_world_def(reader* r, pbd_simd* simd, blocks* blk, size_t* heap_cap) {
	pbd_world_def wd = pbd_world_def_default();
	const uint8_t flags = rd_u8(r), more = rd_u8(r);
	if (flags & 1) wd.gravity = rd_vec3(r);
	if (flags & 2) wd.dt = rd_real(r);
	wd.substeps = 1 + rd_u8(r) % MAX_SUBSTEPS;
	wd.iterations = 1 + rd_u8(r) % MAX_ITERATIONS;
	wd.method = (pbd_method)(rd_u8(r) % METHODS);
	/* the byte of the particles' solver names the bodies' too (bits 1 and 4: position, soft step,
	 * AVBD) and the soft step's stiffness */
	const uint8_t sv = rd_u8(r);
	static const float hertz[4] = {0, 10, 60, 2000};
	wd.solver = (pbd_solver)(sv % 2);
	wd.body_solver = (pbd_body_solver)(((sv >> 1) & 1) + ((sv >> 4) & 1));
	wd.contact_hertz = (pbd_real)hertz[(sv >> 2) & 3];
	wd.formulation = (pbd_formulation)(rd_u8(r) % 2);
	wd.collision_mode = (pbd_collision_mode)(rd_u8(r) % 2);
	wd.threads = 1 + rd_u8(r) % MAX_THREADS;
	*simd = (pbd_simd)(rd_u8(r) % (PBD_SIMD_AVX512 + 1));
	const uint8_t b = rd_u8(r);
	static const uint32_t constraint_blocks[4] = {PBD_BLOCK_CONSTRAINTS, 64, 16, 8};
	static const uint32_t particle_blocks[4] = {PBD_BLOCK_PARTICLES, 256, 128, PBD_BLOCK_PARTICLES_MIN};
	blk->constraints = constraint_blocks[b & 3];
	blk->particles = particle_blocks[(b >> 2) & 3];
	blk->min_blocks = b & 16 ? PBD_EXEC_MIN_BLOCKS : 2;
	if (flags & 4) wd.damping = rd_real(r);
	if (flags & 8) {
		wd.jacobi_alpha = rd_real(r);
		wd.jacobi_omega = rd_real(r);
		wd.jacobi_equal_split = rd_u8(r) & 1;
	}
	if (flags & 16) wd.max_speed = rd_real(r);
	wd.diagnostics = flags & 32;
	if (flags & 64) {
		wd.chebyshev = true;
		wd.chebyshev_rho = rd_real(r);
		wd.chebyshev_delay = rd_int(r, -1, 18);
		wd.chebyshev_gamma = rd_real(r);
	}
	if (flags & 128) {
		wd.hierarchy_levels = rd_int(r, -1, PBD_HIERARCHY_MAX_LEVELS + 1);
		wd.hierarchy_iterations = rd_int(r, -1, 16);
	}
	if (more & 1) wd.damping_mode = (pbd_damping_mode)(rd_u8(r) % 3);
	if (more & 2) wd.divergence_strain = rd_real(r);
	if (more & 4) {
		wd.stiffness_damping = rd_real(r);
		wd.linear_tolerance = rd_real(r);
	}
	if (more & 8) wd.hard_stiffness = rd_real(r);
	if (more & 16) {
		wd.wind = rd_vec3(r);
		wd.gust_strength = rd_real(r);
		wd.gust_frequency = rd_real(r);
	}
	wd.profile = more & 32;
	if (more & 64) {
		wd.particle_capacity = rd_u8(r);
		wd.distance_capacity = rd_u8(r);
	}
	/* each world's memory: FUZZ_HEAP_CAP, or 4 KiB to 128 MiB */
	*heap_cap = more & 128 ? (size_t)4096 << (rd_u8(r) % 16) : FUZZ_HEAP_CAP;
	return wd;
}

static void destroy_worlds(harness* h) {
	for (int k = 0; k < 2; ++k) {
		pbd_world_destroy(h->w[k]);
		h->w[k] = NULL;
		fuzz_heap_check_empty(&h->heap[k], k ? "the reference world after pbd_world_destroy"
		                                     : "the tested world after pbd_world_destroy");
	}
}

fuzz_step_tables fuzz_step_get_tables(void) {
	fuzz_step_tables t = {0, 0, METHODS, 0};
	for (size_t k = 0; k < sizeof fill_body / sizeof fill_body[0]; ++k) t.body_types += fill_body[k] != NULL;
	for (size_t k = 0; k < sizeof fill_shape / sizeof fill_shape[0]; ++k) t.shapes += fill_shape[k] != NULL;
	for (uint32_t f = 0; f < PBD_FAMILY_COUNT; ++f)
		t.families += add_family[f] && family_count[f] && family_work[f] > 0 && has_material(f);
	return t;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
	reader r = {data, size};
	harness h;
	memset(&h, 0, sizeof h);
	pbd_simd simd;
	size_t heap_cap;
	pbd_world_def wd = rd_world_def(&r, &simd, &h.blk, &heap_cap);
	pbd_world_def def[2] = {wd, wd};
	def[0].simd = simd;
	def[1].threads = 1;
	def[1].simd = PBD_SIMD_SCALAR;
	def[1].profile = false;
	pbd_status st[2];
	for (int k = 0; k < 2; ++k) {
		def[k].allocator = fuzz_heap_allocator(&h.heap[k], heap_cap);
		st[k] = pbd_world_create(&def[k], &h.w[k]);
		if (st[k] != PBD_OK && h.w[k]) fuzz_fail("pbd_world_create failed but returned a world");
		if (st[k] == PBD_ERR_OUT_OF_MEMORY && !h.heap[k].refused)
			fuzz_fail("pbd_world_create: out of memory while the allocator refused nothing");
	}
	/* Kernels this CPU lacks are refused: the tested world takes the widest it has instead. */
	if (st[0] != PBD_OK && st[1] == PBD_OK && (simd == PBD_SIMD_AVX2 || simd == PBD_SIMD_AVX512)) {
		def[0].simd = PBD_SIMD_AUTO;
		st[0] = pbd_world_create(&def[0], &h.w[0]);
	}
	tr("world: gravity %g %g %g dt %g substeps %d iterations %d method %s solver %d formulation %d damping %g "
	   "collision %d threads %d simd %s (asked %s), blocks %u/%u/%u, %zu bytes each -> %s",
	   (double)wd.gravity.x, (double)wd.gravity.y, (double)wd.gravity.z, (double)wd.dt, wd.substeps, wd.iterations,
	   pbd_method_name(wd.method), (int)wd.solver, (int)wd.formulation, (double)wd.damping, (int)wd.collision_mode,
	   wd.threads, simd_name(def[0].simd), simd_name(simd), h.blk.constraints, h.blk.particles, h.blk.min_blocks,
	   heap_cap, pbd_status_string(st[0]));
	if (st[0] != st[1]) {
		if (!(h.heap[0].refused || h.heap[1].refused))
			fuzz_fail("pbd_world_create: %s with %d threads and the %s kernels, %s with 1 thread and the scalar ones",
			          pbd_status_string(st[0]), def[0].threads, simd_name(def[0].simd), pbd_status_string(st[1]));
		destroy_worlds(&h);
		return 0;
	}
	if (st[0] != PBD_OK) {
		destroy_worlds(&h);
		return 0;
	}
	for (int k = 0; k < 2; ++k) set_blocks(&h, k);
	for (int op = 0; op < MAX_OPS && r.n && !h.stop; ++op) {
		switch (rd_u8(&r) % 10) {
		case 0:
			op_add_particles(&h, &r);
			break;
		case 1:
			op_constraints(&h, &r);
			break;
		case 2:
			op_collider(&h, &r);
			break;
		case 3:
			op_particle(&h, &r);
			break;
		case 4:
			op_rigid(&h, &r);
			break;
		case 5:
			op_settings(&h, &r);
			break;
		case 6:
			op_body(&h, &r);
			break;
		case 7:
			op_material(&h, &r);
			break;
		case 8:
			op_triangles(&h, &r);
			break;
		default:
			op_step(&h, &r);
			break;
		}
	}
	/* Every recipe ends with a step, so that recipes cut short still exercise it. */
	if (h.steps < MAX_STEPS && !h.stop) {
		reader none = {NULL, 0};
		op_step(&h, &none);
	}
	destroy_worlds(&h);
	return 0;
}
