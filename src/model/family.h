/* Constraint families.
 *
 * A family is one kind of constraint (distance, bending, volume, ...) in one source file,
 * constraints_<name>.c. It owns a storage block of flat arrays and range kernels that the step,
 * the partition, the statistics, the snapshots and the setters call through one table (family.c),
 * one call per range of constraints, never per constraint: the kernels loop themselves. Adding a
 * family is its file, one entry in the table and one value in pbd_family_type.
 *
 * Storage order. A family keeps its constraints in solver order (partition.c sorts them into
 * independent groups), while the API speaks of the order of addition, the user index. slot[]
 * maps a user index to its position, user[] maps back. Every per-constraint array of a family
 * lives in its block and is permuted with it, so a family's code only ever sees positions.
 *
 * Records are plain structs without padding (checked where they are defined), so that snapshots
 * can write them as bytes and hashes see no undefined bytes. */
#ifndef PBD_FAMILY_H
#define PBD_FAMILY_H

#include "core/core.h"

/* Groups of independent constraints: one per colour, and a last one for the constraints the
 * colouring could not place (a particle with more than PBD_PARTITION_COLOURS around it, or a
 * constraint with more particles than PBD_FAMILY_MAX_ARITY), which is projected in order. */
#define PBD_PARTITION_COLOURS 64
#define PBD_GROUP_COUNT       (PBD_PARTITION_COLOURS + 1)
#define PBD_FAMILY_MAX_ARITY  16
/* The most bytes of a family's hot or cold record, and of one constraint's multipliers: the
 * partition moves them through buffers of this size (partition.c), and each family checks its
 * own against it where it defines them. */
#define PBD_FAMILY_RECORD_MAX 256

typedef struct pbd_bodies pbd_bodies;

/* What every kernel of a substep needs, filled once per substep (Box2D's b2StepContext). The
 * particle arrays are the world's; a kernel moves particles only through q (or dx for Jacobi),
 * and bodies only through their dx and dtheta (node.h). */
typedef struct pbd_step_ctx {
	const pbd_vec3* x;      /* committed positions, rounded (world.h) */
	pbd_vec3* q;            /* displacements inside the substep */
	const pbd_real* iw;     /* inverse masses */
	pbd_vec3* dx;           /* Jacobi accumulator */
	const uint32_t* degree; /* constraints touching each node, all families */
	pbd_bodies* bodies;     /* the rigid bodies: node np + i is body slot i */
	uint32_t np;
	pbd_real h, inv_h2;
	pbd_real substep_fraction; /* of the step at the end of this substep, 1 outside one (moving targets) */
	pbd_formulation formulation;
	int iterations;
	bool jacobi_equal;
	pbd_real jacobi_alpha, jacobi_omega;
	bool simd;   /* the families' lane kernels may run (cpu.h) */
	bool avx512; /* the distance lanes may use their AVX-512 variant (Gauss-Seidel and coarse levels, cpu.h) */
} pbd_step_ctx;

/* The storage block of one family. */
typedef struct pbd_family {
	uint32_t n, cap;
	void* hot;                           /* records the kernels read every iteration, in solver order */
	void* cold;                          /* parameters as given, for refresh, get and snapshots */
	pbd_real* lambda;                    /* XPBD multipliers, ops.lambdas per constraint, reset every substep */
	uint32_t* slot;                      /* user index -> position */
	uint32_t* user;                      /* position -> user index */
	uint32_t* scratch;                   /* partition.c's working array */
	uint32_t node_base;                  /* the first body's node, the particle count (partition.c) */
	uint32_t group_end[PBD_GROUP_COUNT]; /* group g is [group_end[g-1], group_end[g]) */
	/* Families whose constraints differ in size (a volume's triangle list, ops.data): data holds
	 * data_size bytes laid out by the family and addressed from its records (MuJoCo's adr/num),
	 * which stay put when the partition reorders the records and are saved by snapshots; work is
	 * the kernels' working memory (work_size bytes), sized when constraints are added or loaded so
	 * that the step allocates nothing, and never saved. */
	void* data;
	void* work;
	size_t data_size, data_cap, work_size;
	/* The vector kernels' own copy of the records (ops.lanes_size bytes per constraint of cap),
	 * field by field, written by refresh; never saved. Its layout depends on cap, and its
	 * contents on the records, so whatever changes either (append, reserve, the partition, a
	 * load, a roll back, a material, a mass) marks the family stale, and refresh writes it
	 * again before the next sweep. */
	void* lanes;
	/* the settings hot[] was derived for (refresh); stale forces a refresh */
	bool stale;
	int refresh_iterations;
	pbd_formulation refresh_formulation;
	pbd_real refresh_h;
	/* Variable-length data that the records address by offset (compressed rows): ops.pool_size
	 * bytes per element, never permuted, written by snapshots. */
	void* pool;
	uint32_t pool_n, pool_cap;
} pbd_family;

/* Diagnostics a family adds to pbd_stats. Strain is dimensionless, the family's own relative
 * measure of violation (|C| / rest for a distance, volume ratio error for a volume). */
typedef struct pbd_family_sums {
	double max_violation, max_strain, sum_strain, energy;
	uint32_t strained; /* constraints counted in sum_strain */
	bool energy_defined;
	/* by edge kind, for the families whose constraints have one (distances) */
	double kind_max[PBD_EDGE_KIND_COUNT], kind_sum[PBD_EDGE_KIND_COUNT];
	uint32_t kind_count[PBD_EDGE_KIND_COUNT];
} pbd_family_sums;

/* The larger of m and v, where a NaN, once seen, stays: a diagnostic's maximum reports a
 * constraint that went non-finite wherever it lies in the sweep. */
static inline double pbd_max_sticky(double m, double v) { return m != m || v <= m ? m : v; }

/* One constraint's strain, in the family's maximum, sum and count. */
static inline void pbd_sums_strain(pbd_family_sums* out, double strain) {
	out->max_strain = pbd_max_sticky(out->max_strain, strain);
	out->sum_strain += strain;
	out->strained++;
}

/* The energy C^2 / (2 alpha) of a soft XPBD constraint; an ideal one (alpha 0) stores none. */
static inline void pbd_sums_energy(pbd_family_sums* out, bool xpbd, double C, pbd_real compliance) {
	if (xpbd && compliance > 0) out->energy += 0.5 * C * C / (double)compliance;
}

/* Under PBD, a stiffness in (0, 1) is a fraction of a projection, not a material: the family's
 * energy is undefined. */
static inline void pbd_sums_stiffness(pbd_family_sums* out, bool xpbd, pbd_real stiffness) {
	if (!xpbd && stiffness > 0 && stiffness < 1) out->energy_defined = false;
}

typedef struct pbd_world pbd_world;
typedef struct pbd_rows pbd_rows;

/* A constraint's place in its family's layout order (pbd_family_ops.layout): its class, then its
 * first particle. */
typedef struct pbd_layout {
	uint64_t cls;
	uint32_t first;
} pbd_layout;

typedef struct pbd_family_ops {
	const char* name;
	size_t hot_size, cold_size;
	uint32_t lambdas; /* multipliers per constraint */
	size_t pool_size; /* bytes per pool element; 0 when the family has no pool */
	bool data;        /* has a data block (see pbd_family.data), written by snapshots */
	/* The kernels use f->work for one constraint at a time, so the constraints of a range are
	 * projected by one thread (task.h), never split among several. */
	bool shared_work;
	/* Its constraints may have body nodes (node.h), after the first node, which is a particle. */
	bool bodies;
	/* Its constraints' nodes are all bodies, the first one included (joints). */
	bool only_bodies;
	/* Bytes per constraint of f->lanes; 0 when the family keeps no such copy. */
	size_t lanes_size;
	/* Debug builds: whether f->lanes holds what refresh writes from the records as they are now.
	 * pbd_families_refresh asserts it of every family before the step's kernels read the lanes.
	 * NULL: the family keeps no lanes, or NDEBUG. */
	bool (*lanes_agree)(const pbd_family* f);
	/* Optional: the place of the constraint at position k in the layout order, in which the
	 * partition colours the family instead of the order of addition (partition.c). Constraints
	 * of one class lie alike (edges of one kind between particles the same index apart), and a
	 * class goes in the order of its first particles, so that a colour of a regular mesh is made
	 * of runs of consecutive particles, which the lanes move as whole vectors. */
	pbd_layout (*layout)(const pbd_family* f, uint32_t k);
	/* Writes the nodes [first, first + cap) of the constraint at position k into out (those that
	 * exist) and returns how many nodes the constraint has in all: particles, and for a body
	 * f->node_base + its slot (node.h). */
	uint32_t (*particles)(const pbd_family* f, uint32_t k, uint32_t first, uint32_t* out, uint32_t cap);
	/* Derives hot[] from cold[] for the context's formulation, iterations and substep. */
	void (*refresh)(pbd_family* f, const pbd_step_ctx* ctx);
	/* Gauss-Seidel: projects positions [first, end) in order, moving q. */
	void (*project)(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end);
	/* Jacobi: adds the corrections of [first, end), computed from the iteration's start, to dx. */
	void (*jacobi)(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end);
	/* Optional vector forms of project and jacobi over 8 consecutive positions at a time
	 * ((end - first) % 8 == 0), for ranges of one colour group only, where no two constraints
	 * share a particle; bit-identical to the scalar kernels. NULL: the family has none. */
	void (*project_lanes)(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end);
	void (*jacobi_lanes)(const pbd_step_ctx* ctx, pbd_family* f, uint32_t first, uint32_t end);
	/* Diagnostics of the current positions (full precision, x + x_lo) of the constraints at
	 * positions [first, end), added to out; stats.c splits a family into blocks (task.h) and
	 * combines the blocks' sums in block order. */
	void (*stats)(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end, pbd_family_sums* out);
	/* The divergence test alone: the largest strain of [first, end). */
	double (*max_strain)(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end);
	/* Optional: true only when every strain of [first, end) is surely at most `bound` (false when
	 * one may pass it, or is not a number); the divergence test then skips max_strain. */
	bool (*strain_within)(const pbd_world* w, const pbd_family* f, uint32_t first, uint32_t end, double bound);
	/* Checks the constraint at position k of a loaded snapshot (particle indices are checked
	 * by the caller); returns false with a reason. */
	bool (*check)(const pbd_world* w, const pbd_family* f, uint32_t k, const char** why);
	/* Families with data: the working memory their constraints need, in bytes (called after a
	 * snapshot's records passed check). NULL for the others. */
	size_t (*work_bytes)(const pbd_family* f);
	/* Force-based methods (rows.h): appends the rows of [first, end) at the context's positions,
	 * with k = 1 / compliance, and notes the first constraint whose compliance is 0. NULL: the
	 * family has no force model yet, and the force-based methods refuse a world that holds it. */
	void (*linearize)(const pbd_step_ctx* ctx, const pbd_family* f, uint32_t first, uint32_t end, pbd_rows* rows);
	/* The rows linearize writes per constraint, in every state, and the most entries they hold
	 * together. Families whose constraints differ in size (a volume's mesh, a shape cluster) leave
	 * both 0 and give row_sizes, the rows and entries of all of f's constraints, instead. */
	uint32_t row_count, row_entries;
	void (*row_sizes)(const pbd_family* f, uint64_t* rows, uint64_t* entries);
} pbd_family_ops;

/* The table, indexed by pbd_family_type. */
extern const pbd_family_ops* const pbd_family_table[PBD_FAMILY_COUNT];

/* Grows every array of family `type` to hold `capacity` constraints (all or none). */
pbd_status pbd_family_reserve(pbd_world* w, pbd_family_type type, uint32_t capacity);
/* Makes room for `count` more constraints (doubling) and appends them at the end of storage
 * with user indices n..n+count-1 and zeroed records; returns the first position, or UINT32_MAX
 * when out of memory. The caller fills hot/cold at the returned positions. */
uint32_t pbd_family_append(pbd_world* w, pbd_family_type type, uint32_t count);
void pbd_family_free(pbd_world* w, pbd_family* f, const pbd_family_ops* ops);
/* Appends `count` zeroed elements to family `type`'s pool (doubling); returns the first, or
 * UINT32_MAX when out of memory. */
uint32_t pbd_family_pool_append(pbd_world* w, pbd_family_type type, uint32_t count);

/* Grows the data block of family `type` to hold at least data_bytes (contents kept, doubling)
 * and its working memory to at least work_bytes, both or neither. */
pbd_status pbd_family_reserve_data(pbd_world* w, pbd_family_type type, size_t data_bytes, size_t work_bytes);
/* Marks that a family's settings changed: hot[] is derived again before the next step. */
void pbd_family_touch(pbd_world* w, pbd_family_type type);
/* Marks every family: inverse masses changed (a pin, an unpin, a new mass), and a family may
 * derive data from them (the pin set of long-range attachments, the weights of shape matching). */
void pbd_families_touch_all(pbd_world* w);
/* Refreshes every family whose hot[] was derived for other settings than ctx's. */
void pbd_families_refresh(pbd_world* w, const pbd_step_ctx* ctx);

/* partition.c: colours all families' constraints into independent groups (graph colouring over
 * shared particles), reorders each family's storage group by group, recounts degree[]. */
void pbd_partition_build(pbd_world* w);
/* The lowest colour that none of the particles p[0..n) carries in masks (bit c = colour c is
 * used around the particle), marked on all of them; PBD_PARTITION_COLOURS when all are taken. */
uint32_t pbd_colour_first_fit(uint64_t* masks, const uint32_t* p, uint32_t n);

/* Kernels never store into a pinned particle (inverse mass 0), not even its unchanged value:
 * long-range attachments read their pin without listing it among their particles (hundreds share
 * one pin, which would serialise them), so a pin is read by constraints of a colour that another
 * constraint of the same colour, on another thread, also touches. */

/* The position of particle i relative to particle o, from the committed positions and the
 * displacements: exact for near particles however far from the origin (see world.h). Families
 * with more than two particles express their geometry relative to one of them. */
static inline pbd_vec3 pbd_rel(const pbd_step_ctx* ctx, uint32_t i, uint32_t o) {
	return pbd_v3_add(pbd_v3_sub(ctx->x[i], ctx->x[o]), pbd_v3_sub(ctx->q[i], ctx->q[o]));
}

/* Gauss-Seidel projection of one scalar constraint over n particles, given C and its gradients
 * grad[i] = dC/dx_{p[i]} (Macklin et al. 2016, eq. 18; Müller et al. 2007, eq. 8):
 *   XPBD: dlambda = (-C - alpha~ lambda) / (sum_i w_i |grad_i|^2 + alpha~), alpha~ = s / h^2
 *   PBD:  dlambda = -s C / sum_i w_i |grad_i|^2 (s the iteration-corrected stiffness k')
 * and particle i moves by w_i grad_i dlambda. `s` is the compliance (XPBD) or k' (PBD); lambda
 * is the constraint's multiplier (XPBD only). Nothing moves when the denominator is not
 * positive (every particle pinned, or all gradients zero): a degenerate constraint is skipped,
 * never divided by zero. Families guard their own near-degenerate geometry before calling. */
static inline void pbd_constraint_project(const pbd_step_ctx* ctx, const uint32_t* p, uint32_t n, pbd_real C,
                                          const pbd_vec3* grad, pbd_real s, pbd_real* lambda) {
	pbd_real wsum = 0;
	for (uint32_t i = 0; i < n; ++i) wsum += ctx->iw[p[i]] * pbd_v3_dot(grad[i], grad[i]);
	pbd_real dl;
	if (ctx->formulation == PBD_FORMULATION_XPBD) {
		const pbd_real at = s * ctx->inv_h2;
		const pbd_real den = wsum + at;
		if (!(den > 0)) return;
		dl = (-C - at * *lambda) / den;
		*lambda += dl;
	} else {
		if (!(wsum > 0)) return;
		dl = -s * C / wsum;
	}
	for (uint32_t i = 0; i < n; ++i)
		if (ctx->iw[p[i]] > 0) ctx->q[p[i]] = pbd_v3_add(ctx->q[p[i]], pbd_v3_scale(grad[i], ctx->iw[p[i]] * dl));
}

/* Jacobi: the same step from the iteration's start, added to dx. Mass-weighted (default): one
 * factor omega / (max degree + alpha) for all the constraint's particles, which keeps momentum
 * (as the distance family does); equal split: unit weights, averaged per particle later. */
static inline void pbd_constraint_jacobi(const pbd_step_ctx* ctx, const uint32_t* p, uint32_t n, pbd_real C,
                                         const pbd_vec3* grad, pbd_real s, pbd_real* lambda) {
	pbd_real scale = 1;
	if (!ctx->jacobi_equal) {
		uint32_t deg = 0;
		for (uint32_t i = 0; i < n; ++i) deg = ctx->degree[p[i]] > deg ? ctx->degree[p[i]] : deg;
		scale = ctx->jacobi_omega / ((pbd_real)deg + ctx->jacobi_alpha);
	}
	pbd_real wsum = 0;
	for (uint32_t i = 0; i < n; ++i) {
		const pbd_real wi = ctx->jacobi_equal ? 1 : ctx->iw[p[i]];
		wsum += wi * pbd_v3_dot(grad[i], grad[i]);
	}
	pbd_real dl;
	if (ctx->formulation == PBD_FORMULATION_XPBD) {
		const pbd_real at = s * ctx->inv_h2;
		const pbd_real den = wsum + at;
		if (!(den > 0)) return;
		dl = scale * ((-C - at * *lambda) / den);
		*lambda += dl;
	} else {
		if (!(wsum > 0)) return;
		dl = scale * (-s * C / wsum);
	}
	for (uint32_t i = 0; i < n; ++i) {
		const pbd_real wi = ctx->jacobi_equal ? 1 : ctx->iw[p[i]];
		ctx->dx[p[i]] = pbd_v3_add(ctx->dx[p[i]], pbd_v3_scale(grad[i], wi * dl));
	}
}

/* The PBD stiffness per iteration that makes n iterations remove the fraction k of a violation
 * one projection with k would (Müller et al. 2007, section 3.3): k' = 1 - (1 - k)^(1/n), with
 * inv_n = 1/n. 0 and 1 stay exact. Every family's refresh derives its hot parameter with it. */
static inline pbd_real pbd_stiffness_per_iteration(pbd_real k, pbd_real inv_n) {
	return (k >= 1 || k <= 0) ? k : 1 - PBD_POW(1 - k, inv_n);
}

/* Checks [first, first + count) against a family's constraints, for the range setters. */
pbd_status pbd_family_check_range(pbd_world* w, const char* fn, const pbd_family* f, uint32_t first, uint32_t count);

/* Checks a PBD stiffness (finite, in [0, 1]) and an XPBD compliance (finite, >= 0); `what` and k
 * name the item in the message ("constraint 3"). */
pbd_status pbd_check_softness(pbd_world* w, const char* fn, const char* what, uint32_t k, pbd_real stiffness,
                              pbd_real compliance);

/* The same test for a stored record (a loaded snapshot's), without a message. */
static inline bool pbd_softness_ok(pbd_real stiffness, pbd_real compliance) {
	return stiffness >= 0 && stiffness <= 1 && compliance >= 0 && pbd_is_finite(compliance);
}

/* Where a family whose material is one PBD stiffness and one XPBD compliance per constraint keeps
 * them (cold record) and the parameter its kernels read (hot record): s = k' under PBD,
 * compliance_scale * compliance under XPBD. Offsets in bytes; PBD_SOFTNESS_FIELDS fills one from
 * the records' types, whose fields are named stiffness, compliance and s. */
typedef struct pbd_softness_fields {
	pbd_family_type type;
	size_t stiffness, compliance; /* in the cold record */
	size_t s;                     /* in the hot record */
	pbd_real compliance_scale;
	const char* item; /* what the messages call one constraint ("constraint", "set", "cluster") */
} pbd_softness_fields;

#define PBD_SOFTNESS_FIELDS(type, hot_t, cold_t, scale, item)                                                          \
	{ (type), offsetof(cold_t, stiffness), offsetof(cold_t, compliance), offsetof(hot_t, s), (scale), (item) }

/* Derives s of every constraint of f from its stiffness and compliance, for ctx's formulation and
 * iterations (pbd_stiffness_per_iteration). */
void pbd_family_refresh_softness(pbd_family* f, const pbd_softness_fields* sf, const pbd_step_ctx* ctx);
/* The body of pbd_world_set_<family>_material: checks w, the range [first, first + count) of user
 * indices and the values (pbd_check_softness, the message naming sf->item `first`), then stores
 * them as pbd_family_write_softness does. */
pbd_status pbd_family_set_softness(pbd_world* w, const char* fn, const pbd_softness_fields* sf, uint32_t first,
                                   uint32_t count, pbd_real stiffness, pbd_real compliance);
/* Stores checked values into [first, first + count) and marks the family for a refresh. */
void pbd_family_write_softness(pbd_world* w, const pbd_softness_fields* sf, uint32_t first, uint32_t count,
                               pbd_real stiffness, pbd_real compliance);

static inline void* pbd_family_hot(const pbd_family* f, const pbd_family_ops* ops, uint32_t k) {
	return (char*)f->hot + (size_t)k * ops->hot_size;
}

#endif
