/* Snapshots: the complete state of a world as bytes, so that a run resumed from one ends
 * bit-identical to the run that never stopped.
 *
 * Everything that a step reads and that outlives a step is written: settings, every particle
 * array (positions and velocities with their remainders, masses, flags, forces, targets, air
 * drag), the constraints of every family in their solver order with their order of addition,
 * multipliers and variable-length data, vertex block descent's multipliers and penalties, projective dynamics'
 * weights of the general rows (which its factor keeps from step to step), triangles with their air
 * drag, colliders with their generations, the bodies' pairs of colliders that touch (for their contact events), the
 * clock and the warning counters. Scratch that a step rebuilds before
 * reading (displacements, Jacobi sums, step-start copies, the substep's air) is not, the per-particle constraint counts
 * are recounted, and the levels of the hierarchical solve are built again from the constraints, pins and masses, which
 * give the same levels.
 *
 * Layout: an 8-byte magic, then fixed-size native-endian fields and arrays, then an FNV-1a hash
 * of everything before it. The header records the scalar size, the byte order and the
 * snapshot's size, and a reader refuses a snapshot of the other precision or byte order rather
 * than convert it: a conversion could not be bit-exact.
 *
 * A snapshot is untrusted input. A file is opened only when it is a regular one, its header is
 * read first and then exactly the bytes it announces (PBD_SNAPSHOT_MAX_BYTES at most). Loading
 * checks every count against the bytes present before allocating, and every value against the
 * bounds the API sets, through the API's own checks where there is one, before anything is
 * built from it; what only a step writes (the remainders, the warning counters) is held to what
 * a step leaves. A corrupt or forged file is one line of error naming the file and the field,
 * not a crash. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collision/collide.h"
#include "collision/contact_events.h"
#include "core/file_in.h"
#include "model/forces.h"
#include "methods/integrate.h"

#define SNAP_MAGIC "PBDSNAP\0"
/* 8: the header records the snapshot's size in bytes, so that a reader reads exactly that. */
/* 10: the bodies' sleep (asleep, how long still, the island each fell asleep with). */
/* 11: the bodies' pairs of colliders touching after the last step, so that a resumed world
 * reports the same contact events. */
/* 12: the body solver and the soft step's contact stiffness, and its contacts kept from the last
 * step with their impulses (warm starting), so that a resumed soft step goes on bit for bit. */
/* 13: the most substeps a step may take (pbd_world_def.max_substeps). */
#define SNAP_VERSION 13u
/* The oldest version read: 6 lacks the projective dynamics block, and a world loaded from it takes
 * its weights from the positions, as every world did then. */
#define SNAP_VERSION_OLDEST 6u
#define SNAP_ENDIAN         0x01020304u
/* Magic, version, scalar size, byte order; from version 8 the size (8 bytes) follows. */
#define SNAP_HEADER_OLD 20u
#define SNAP_HEADER     28u
/* Flags a snapshot may carry: the persistent ones (CONTACT is scratch of the diagnostics). */
#define SNAP_FLAGS (PBD_PARTICLE_PINNED | PBD_PARTICLE_TARGET | PBD_PARTICLE_FORCE)
/* The largest step count a snapshot may carry: far past any run, far from wrapping. */
#define SNAP_MAX_STEPS (UINT64_C(1) << 62)

/* ---- writing --------------------------------------------------------------------------- */

typedef struct writer {
	uint8_t* buf; /* NULL: only count */
	size_t cap, pos;
	uint64_t hash;
} writer;

static void put(writer* wr, const void* data, size_t n) {
	if (n == 0) return;
	if (wr->buf && wr->pos + n <= wr->cap) memcpy(wr->buf + wr->pos, data, n);
	wr->hash = pbd_fnv1a(wr->hash, data, n);
	wr->pos += n;
}

static void put_u32(writer* wr, uint32_t v) { put(wr, &v, sizeof v); }
static void put_u64(writer* wr, uint64_t v) { put(wr, &v, sizeof v); }
static void put_i32(writer* wr, int32_t v) { put(wr, &v, sizeof v); }
static void put_real(writer* wr, pbd_real v) { put(wr, &v, sizeof v); }
static void put_vec(writer* wr, pbd_vec3 v) { put(wr, &v, sizeof v); }

/* A collider's shape as four reals, whatever its type. */
static void shape_to_reals(const pbd_collider_def* d, pbd_real r[4]) {
	switch (d->type) {
	case PBD_SHAPE_PLANE:
		r[0] = d->shape.plane.normal.x, r[1] = d->shape.plane.normal.y, r[2] = d->shape.plane.normal.z;
		r[3] = d->shape.plane.offset;
		break;
	case PBD_SHAPE_SPHERE:
		r[0] = d->shape.sphere.center.x, r[1] = d->shape.sphere.center.y, r[2] = d->shape.sphere.center.z;
		r[3] = d->shape.sphere.radius;
		break;
	case PBD_SHAPE_CAPSULE:
		r[0] = d->shape.capsule.half_height, r[1] = d->shape.capsule.radius;
		break;
	case PBD_SHAPE_BOX:
		r[0] = d->shape.box.half_extents.x, r[1] = d->shape.box.half_extents.y, r[2] = d->shape.box.half_extents.z;
		break;
	case PBD_SHAPE_HEIGHTFIELD:
		r[0] = d->shape.heightfield.cell_x, r[1] = d->shape.heightfield.cell_z;
		break;
	default:
		break;
	}
}

static void shape_from_reals(pbd_collider_def* d, const pbd_real r[4]) {
	switch (d->type) {
	case PBD_SHAPE_PLANE:
		d->shape.plane.normal = pbd_v3(r[0], r[1], r[2]);
		d->shape.plane.offset = r[3];
		break;
	case PBD_SHAPE_SPHERE:
		d->shape.sphere.center = pbd_v3(r[0], r[1], r[2]);
		d->shape.sphere.radius = r[3];
		break;
	case PBD_SHAPE_CAPSULE:
		d->shape.capsule.half_height = r[0];
		d->shape.capsule.radius = r[1];
		break;
	case PBD_SHAPE_BOX:
		d->shape.box.half_extents = pbd_v3(r[0], r[1], r[2]);
		break;
	case PBD_SHAPE_HEIGHTFIELD:
		d->shape.heightfield.cell_x = r[0];
		d->shape.heightfield.cell_z = r[1];
		break;
	default:
		break;
	}
}

/* The arrays of a shape that has them, after its fixed record. */
static void put_shape_arrays(writer* wr, const pbd_collider_def* d) {
	switch (d->type) {
	case PBD_SHAPE_CONVEX:
		put_u32(wr, d->shape.convex.point_count);
		put(wr, d->shape.convex.points, (size_t)d->shape.convex.point_count * sizeof(pbd_vec3));
		break;
	case PBD_SHAPE_MESH:
		put_u32(wr, d->shape.mesh.vertex_count);
		put_u32(wr, d->shape.mesh.triangle_count);
		put_u32(wr, d->shape.mesh.closed ? 1u : 0u);
		put(wr, d->shape.mesh.vertices, (size_t)d->shape.mesh.vertex_count * sizeof(pbd_vec3));
		put(wr, d->shape.mesh.triangles, 3 * (size_t)d->shape.mesh.triangle_count * sizeof(uint32_t));
		break;
	case PBD_SHAPE_HEIGHTFIELD:
		put_u32(wr, d->shape.heightfield.nx);
		put_u32(wr, d->shape.heightfield.nz);
		put(wr, d->shape.heightfield.heights,
		    (size_t)d->shape.heightfield.nx * d->shape.heightfield.nz * sizeof(pbd_real));
		break;
	default:
		break;
	}
}
static void put_f64(writer* wr, double v) { put(wr, &v, sizeof v); }

static void write_def(writer* wr, const pbd_world_def* d) {
	put_vec(wr, d->gravity);
	put_real(wr, d->dt);
	put_i32(wr, d->substeps);
	put_i32(wr, d->iterations);
	put_i32(wr, (int32_t)d->solver);
	put_i32(wr, (int32_t)d->formulation);
	put_real(wr, d->damping);
	put_i32(wr, (int32_t)d->damping_mode);
	put_real(wr, d->jacobi_alpha);
	put_real(wr, d->jacobi_omega);
	put_u32(wr, d->jacobi_equal_split ? 1u : 0u);
	put_i32(wr, (int32_t)d->collision_mode);
	put_real(wr, d->max_speed);
	put_u32(wr, d->diagnostics ? 1u : 0u);
	put_real(wr, d->divergence_strain);
	put_u32(wr, d->chebyshev ? 1u : 0u);
	put_real(wr, d->chebyshev_rho);
	put_i32(wr, d->chebyshev_delay);
	put_real(wr, d->chebyshev_gamma);
	put_i32(wr, d->hierarchy_levels);
	put_i32(wr, d->hierarchy_iterations);
	put_i32(wr, (int32_t)d->method);
	put_real(wr, d->stiffness_damping);
	put_real(wr, d->linear_tolerance);
	put_real(wr, d->hard_stiffness);
	put_vec(wr, d->wind);
	put_real(wr, d->gust_strength);
	put_real(wr, d->gust_frequency);
}

/* A flag, then, when it is set, two arrays of n records each. */
static void put_flagged(writer* wr, bool on, uint32_t n, const void* a, size_t a_size, const void* b, size_t b_size) {
	put_u32(wr, on ? 1u : 0u);
	if (!on) return;
	put(wr, a, n * a_size);
	put(wr, b, n * b_size);
}

/* Air: the drag and own wind of every particle, then of every triangle, each written only when
 * some particle or triangle has drag; a world without air writes two words. */
static void write_air(writer* wr, const pbd_world* w) {
	put_flagged(wr, w->n_drag > 0, w->np, w->drag, sizeof *w->drag, w->drag_wind, sizeof *w->drag_wind);
	put_flagged(wr, w->nt_drag > 0, w->nt, w->tri_drag, sizeof *w->tri_drag, w->tri_wind, sizeof *w->tri_wind);
}

/* `size`: the snapshot's size in bytes, hash included (0 while it is being counted). */
/* Version 9 on: the rigid bodies, slot by slot, dead slots too (their generations keep old ids
 * stale after a resume). */
static void write_bodies(writer* wr, const pbd_world* w) {
	const pbd_bodies* b = &w->bodies;
	put_u32(wr, b->n);
	for (uint32_t i = 0; i < b->n; ++i) {
		put_u32(wr, b->type[i]);
		put_u32(wr, b->live[i]);
		put_u32(wr, b->generation[i]);
		put_i32(wr, b->cookie[i]);
		put_vec(wr, b->x[i]);
		put_vec(wr, b->x_lo[i]);
		put_vec(wr, b->v[i]);
		put(wr, &b->q[i], sizeof b->q[i]);
		put_vec(wr, b->omega[i]);
		put_real(wr, b->inv_mass[i]);
		put_vec(wr, b->inertia[i]);
		put(wr, &b->principal[i], sizeof b->principal[i]);
		put_vec(wr, b->center[i]);
		put_vec(wr, b->force[i]);
		put_vec(wr, b->torque[i]);
		put_real(wr, b->gravity_scale[i]);
		put_real(wr, b->linear_damping[i]);
		put_real(wr, b->angular_damping[i]);
	}
	/* The shapes on bodies: which collider rides on which body, and its pose in the body's frame
	 * (the collider record above holds where it is now, as a kinematic collider). */
	uint32_t riding = 0;
	for (uint32_t k = 0; k < w->nc; ++k) riding += w->colliders[k].alive && w->colliders[k].body != 0;
	put_u32(wr, riding);
	for (uint32_t k = 0; k < w->nc; ++k) {
		const pbd_collider* c = &w->colliders[k];
		if (!c->alive || !c->body) continue; /* a shape that went with its body is no one's */
		put_u32(wr, k);
		put_u32(wr, c->body);
		put_vec(wr, c->local.position);
		put(wr, &c->local.rotation, sizeof c->local.rotation);
	}
}

static void write_world(writer* wr, const pbd_world* w, uint64_t size) {
	put(wr, SNAP_MAGIC, 8);
	put_u32(wr, SNAP_VERSION);
	put_u32(wr, (uint32_t)sizeof(pbd_real));
	put_u32(wr, SNAP_ENDIAN);
	put_u64(wr, size);
	write_def(wr, &w->def);
	put_real(wr, w->rho_estimate);
	put_f64(wr, w->time);
	put_u64(wr, w->steps);
	for (int k = 0; k < PBD_WARN_COUNT; ++k) {
		put_u64(wr, w->warnings[k].count);
		put_u32(wr, w->warnings[k].last_index);
	}

	const size_t np = w->np;
	put_u32(wr, w->np);
	put(wr, w->x, np * sizeof *w->x);
	put(wr, w->x_lo, np * sizeof *w->x_lo);
	put(wr, w->v, np * sizeof *w->v);
	put(wr, w->v_lo, np * sizeof *w->v_lo);
	put(wr, w->force, np * sizeof *w->force);
	put(wr, w->target, np * sizeof *w->target);
	put(wr, w->w, np * sizeof *w->w);
	put(wr, w->w_free, np * sizeof *w->w_free);
	put(wr, w->cmask, np * sizeof *w->cmask);
	put(wr, w->radius, np * sizeof *w->radius);
	put(wr, w->cgroup, np * sizeof *w->cgroup);
	put(wr, w->x_rest, np * sizeof *w->x_rest);
	for (size_t i = 0; i < np; ++i) {
		const uint8_t f = (uint8_t)(w->flags[i] & SNAP_FLAGS);
		put(wr, &f, 1);
	}

	/* Every family: its record sizes (so that a changed layout is refused, not misread), then
	 * its arrays in storage order. The partition is rebuilt on load from the order of addition,
	 * which gives the same storage order, and hot parameters are derived again from the cold
	 * ones, so a loaded world steps bit-identically. */
	put_u32(wr, PBD_FAMILY_COUNT);
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		const pbd_family* f = &w->fam[t];
		const pbd_family_ops* ops = pbd_family_table[t];
		const size_t n = f->n, nl = ops->lambdas ? ops->lambdas : 1;
		put_u32(wr, f->n);
		put_u32(wr, (uint32_t)ops->hot_size);
		put_u32(wr, (uint32_t)ops->cold_size);
		put_u32(wr, (uint32_t)nl);
		put(wr, f->hot, n * ops->hot_size);
		put(wr, f->cold, n * ops->cold_size);
		put(wr, f->lambda, n * nl * sizeof *f->lambda);
		put(wr, f->user, n * sizeof *f->user);
		/* A family with variable-length data its records address writes it after them: a data
		 * block of bytes, or a pool of typed elements; the others write nothing more. */
		if (ops->data) {
			put_u64(wr, (uint64_t)f->data_size);
			put(wr, f->data, f->data_size);
		}
		if (ops->pool_size) {
			put_u32(wr, (uint32_t)ops->pool_size);
			put_u32(wr, f->pool_n);
			put(wr, f->pool, (size_t)f->pool_n * ops->pool_size);
		}
	}

	put_u32(wr, w->nt);
	put(wr, w->tri, 3 * (size_t)w->nt * sizeof *w->tri);
	write_air(wr, w);

	put_u32(wr, w->nc);
	for (uint32_t i = 0; i < w->nc; ++i) {
		const pbd_collider* c = &w->colliders[i];
		const pbd_collider_def* d = &c->def;
		put_i32(wr, (int32_t)d->type);
		pbd_real shape[4] = {0, 0, 0, 0};
		shape_to_reals(d, shape);
		put(wr, shape, sizeof shape);
		put_real(wr, d->margin);
		put_i32(wr, (int32_t)d->kind);
		put_vec(wr, d->pose.position);
		put(wr, &d->pose.rotation, sizeof d->pose.rotation);
		put_vec(wr, d->velocity);
		put_vec(wr, d->angular_velocity);
		put_real(wr, d->static_friction);
		put_real(wr, d->kinetic_friction);
		put_real(wr, d->restitution);
		put_u32(wr, d->trigger ? 1u : 0u);
		put_u32(wr, d->category);
		put_u32(wr, c->generation);
		put_u32(wr, c->alive ? 1u : 0u);
		put_shape_arrays(wr, d);
	}
	/* Trigger occupancy, so that a resumed world reports the same events. */
	put_u32(wr, w->ninside);
	for (uint32_t k = 0; k < w->ninside; ++k) {
		put_u32(wr, (uint32_t)(w->inside[k] >> 32));
		put_u32(wr, (uint32_t)w->inside[k]);
	}
	put_u32(wr, w->ns);
	for (uint32_t i = 0; i < w->ns; ++i) {
		const pbd_soft_rec* r = &w->softs[i];
		const uint32_t rec[8] = {
		    r->info.first_particle, r->info.particle_count, r->info.first_distance, r->info.distance_count,
		    r->info.first_triangle, r->info.triangle_count, r->generation,          r->alive};
		put(wr, rec, sizeof rec);
		put(wr, r->info.first, sizeof r->info.first);
		put(wr, r->info.count, sizeof r->info.count);
	}
	/* Vertex block descent's multipliers and penalties, which carry from step to step. */
	const uint32_t nr = pbd_vbd_saved_rows(w);
	put_u32(wr, nr);
	put(wr, w->integ->lam, (size_t)nr * sizeof *w->integ->lam);
	put(wr, w->integ->pen, (size_t)nr * sizeof *w->integ->pen);
	/* Projective dynamics' weights of the general rows and their keys, which the factor keeps from
	 * step to step; a low-rank row (weight -1, which the rows themselves give) as 0. */
	const pbd_pd_saved pd = pbd_pd_saved_state(w);
	put_u32(wr, pd.rows);
	if (pd.rows > 0) {
		put_u32(wr, pd.free);
		put_u32(wr, pd.entries);
		put_u64(wr, pd.hash);
		for (uint32_t r = 0; r < pd.rows; ++r) put_f64(wr, w->integ->pd_wt[r] > 0 ? w->integ->pd_wt[r] : 0);
		put(wr, w->integ->pd_key, (size_t)pd.rows * sizeof *w->integ->pd_key);
	}
	write_bodies(wr, w);
	/* version 10 on: sleeping, its settings first */
	put_real(wr, w->def.sleep_time);
	put_real(wr, w->def.sleep_speed);
	for (uint32_t i = 0; i < w->bodies.n; ++i) {
		put_u32(wr, w->bodies.asleep[i]);
		put_real(wr, w->bodies.still[i]);
		put_u32(wr, w->bodies.island[i]);
	}
	/* version 11 on: the pairs touching after the last step */
	put_u32(wr, w->ntouch);
	for (uint32_t k = 0; k < w->ntouch; ++k) {
		const pbd_touch* t = &w->touch[k];
		const uint32_t rec[8] = {(uint32_t)(t->pair >> 32),
		                         (uint32_t)t->pair,
		                         t->gen_a,
		                         t->gen_b,
		                         t->body_a,
		                         t->bgen_a,
		                         t->body_b,
		                         t->bgen_b};
		put(wr, rec, sizeof rec);
		put_vec(wr, t->point);
		put_vec(wr, t->normal);
		put_real(wr, t->impulse);
	}
	/* version 12 on: the body solver, and the contacts the next step keeps (none but under the soft
	 * step: the position solver searches each step afresh) */
	put_u32(wr, (uint32_t)w->def.body_solver);
	put_real(wr, w->def.contact_hertz);
	const bool kept = w->rkeep_valid && w->def.body_solver != PBD_BODY_SOLVER_POSITION;
	const uint32_t npair = kept ? w->nrpair : 0;
	put_u32(wr, npair);
	for (uint32_t k = 0; k < npair; ++k) {
		const pbd_rigid_pair* r = &w->rpair[k];
		put_u64(wr, r->key);
		put_vec(wr, r->at);
		put(wr, &r->turn, sizeof r->turn);
		put_real(wr, r->reach);
		put_u32(wr, r->count);
		put_u32(wr, r->i_moves);
	}
	for (uint32_t k = 0; k < npair; ++k)
		for (uint32_t q = w->rpair[k].first; q < w->rpair[k].first + w->rpair[k].count; ++q) {
			const pbd_rigid_c* c = &w->rkeep[q];
			put_u32(wr, c->cp);
			put_vec(wr, c->lp);
			put_vec(wr, c->ls);
			put_vec(wr, c->ln);
			put_real(wr, c->pn);
			put_vec(wr, c->pt);
		}
	put_i32(wr, w->def.max_substeps); /* version 13 on */
	const uint64_t h = wr->hash;
	put_u64(wr, h);
}

pbd_status pbd_world_save_memory(const pbd_world* w, void* buffer, size_t capacity, size_t* size) {
	if (!w || !size) return PBD_ERR_INVALID_ARGUMENT;
	writer count = {NULL, 0, 0, PBD_FNV1A_START};
	write_world(&count, w, 0);
	*size = count.pos;
	if (!buffer) return PBD_OK;
	if (capacity < count.pos)
		return pbd_fail((pbd_world*)w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_world_save_memory: the snapshot needs %zu bytes, the buffer holds %zu", count.pos,
		                capacity);
	writer wr = {(uint8_t*)buffer, capacity, 0, PBD_FNV1A_START};
	write_world(&wr, w, count.pos);
	return PBD_OK;
}

pbd_status pbd_world_save(const pbd_world* w, const char* path) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_world* mw = (pbd_world*)w; /* for the message only */
	if (!path) return pbd_fail(mw, PBD_ERR_INVALID_ARGUMENT, "pbd_world_save: path is NULL");
	size_t size = 0;
	const pbd_status counted = pbd_world_save_memory(w, NULL, 0, &size);
	if (counted != PBD_OK) return counted;
	pbd_alloc_ctx mem = w->mem;
	void* buf = pbd_alloc(&mem, size);
	if (!buf) return pbd_fail(mw, PBD_ERR_OUT_OF_MEMORY, "pbd_world_save: out of memory (%zu bytes)", size);
	pbd_world_save_memory(w, buf, size, &size);
	/* Written aside and renamed over the target, so an interrupted save never leaves a torn
	 * snapshot where a good one was. */
	char tmp[4096];
	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
		pbd_free(&mem, buf, size);
		return pbd_fail(mw, PBD_ERR_INVALID_ARGUMENT, "pbd_world_save: path is too long");
	}
	FILE* f = fopen(tmp, "wb");
	if (!f) {
		pbd_free(&mem, buf, size);
		return pbd_fail(mw, PBD_ERR_IO, "pbd_world_save: %s: cannot open for writing", tmp);
	}
	const bool ok = fwrite(buf, 1, size, f) == size;
	const bool closed = fclose(f) == 0;
	pbd_free(&mem, buf, size);
	if (!ok || !closed) {
		remove(tmp);
		return pbd_fail(mw, PBD_ERR_IO, "pbd_world_save: %s: write failed", tmp);
	}
	if (rename(tmp, path) != 0) {
		remove(tmp);
		return pbd_fail(mw, PBD_ERR_IO, "pbd_world_save: %s: cannot rename into place", path);
	}
	return PBD_OK;
}

/* ---- reading --------------------------------------------------------------------------- */

typedef struct reader {
	const uint8_t* buf;
	size_t size, pos;
	bool short_read;
} reader;

static void get(reader* rd, void* out, size_t n) {
	if (n == 0) return; /* an empty array may have no storage at all */
	if (rd->short_read || n > rd->size - rd->pos) {
		rd->short_read = true;
		memset(out, 0, n);
		return;
	}
	memcpy(out, rd->buf + rd->pos, n);
	rd->pos += n;
}

static uint32_t get_u32(reader* rd) {
	uint32_t v;
	get(rd, &v, sizeof v);
	return v;
}
static uint64_t get_u64(reader* rd) {
	uint64_t v;
	get(rd, &v, sizeof v);
	return v;
}
static int32_t get_i32(reader* rd) {
	int32_t v;
	get(rd, &v, sizeof v);
	return v;
}
static pbd_real get_real(reader* rd) {
	pbd_real v;
	get(rd, &v, sizeof v);
	return v;
}
static pbd_vec3 get_vec(reader* rd) {
	pbd_vec3 v;
	get(rd, &v, sizeof v);
	return v;
}
static double get_f64(reader* rd) {
	double v;
	get(rd, &v, sizeof v);
	return v;
}

/* True when `count` records of `record` bytes fit in what is left: checked before any
 * allocation, so a corrupt count cannot ask for gigabytes. */
static bool fits(const reader* rd, uint64_t count, uint64_t record) {
	const uint64_t left = rd->size - rd->pos;
	return record == 0 || count <= left / record;
}

#define LOAD_FAIL(status, ...) (st = pbd_fail_err(err, (status), __VA_ARGS__), (void)0)

/* A refusal by a check the API makes (pbd_fail left its line in w->last_error), as the
 * snapshot's: the file, the record, then the check's own words without the name of the API
 * function it was written for. */
static pbd_status refused(const pbd_world* w, pbd_status status, const char* name, const char* record, pbd_error* err) {
	const char* why = w->last_error;
	const char* colon = strstr(why, ": ");
	if (strncmp(why, "pbd_", 4) == 0 && colon) why = colon + 2;
	return pbd_fail_err(err, status, "%s: %s: %s", name, record, why);
}

#ifdef PBD_DOUBLE
#define SNAP_MANT_DIG DBL_MANT_DIG
#else
#define SNAP_MANT_DIG FLT_MANT_DIG
#endif

/* Half a unit in the last place of x (in double, exactly): the largest remainder that rounding
 * a sum to x leaves (the TwoSum error of every step's x + q). Where that half is below the
 * smallest subnormal every such sum was exact: the remainder must be 0, and only 0 passes. */
static double half_ulp(pbd_real x) {
	if (x == 0) return 0;
	int e;
	(void)frexp(fabs((double)x), &e); /* |x| in [2^(e-1), 2^e) */
	return ldexp(1.0, e - SNAP_MANT_DIG - 1);
}

static pbd_real max_abs3(pbd_vec3 v) { return PBD_FMAX(PBD_FABS(v.x), PBD_FMAX(PBD_FABS(v.y), PBD_FABS(v.z))); }

/* The index of the first component of v that is not finite, -1 for none. */
static int bad_component(pbd_vec3 v) {
	const pbd_real c[3] = {v.x, v.y, v.z};
	for (int k = 0; k < 3; ++k)
		if (!pbd_is_finite(c[k])) return k;
	return -1;
}

static pbd_real component(pbd_vec3 v, int k) { return k == 0 ? v.x : (k == 1 ? v.y : v.z); }

/* One particle's state, checked as the API checks what it accepts and as a step leaves what it
 * derives: every vector finite (pbd_world_add_particles, pbd_world_set_velocities,
 * pbd_particle_set_force, pbd_particle_set_target), the position's remainder within half an
 * ulp of the position (every step commits x + q by TwoSum; the API sets it to 0), the
 * velocity's remainder no larger than the velocity's largest component (a compensated sum
 * leaves half an ulp, damping up to a whole one, and a bounce, which changes the velocity but
 * not its remainder, less than the speed it bounced with), inverse masses as
 * pbd_particle_set_inv_mass takes them, a target only on a pinned particle, the force flag
 * exactly where the force is not zero, and a collision radius as pbd_soft_create makes it (half a
 * thickness within its bound, with a group exactly where it is not 0). */
static pbd_status check_particle(const pbd_world* w, uint32_t i, const char* name, pbd_error* err) {
	static const char* const axis[3] = {"x", "y", "z"};
	const struct {
		const char* what;
		pbd_vec3 v;
	} vecs[5] = {{"position", w->x[i]},
	             {"velocity", w->v[i]},
	             {"force", w->force[i]},
	             {"target", w->target[i]},
	             {"rest position", w->x_rest[i]}};
	for (int k = 0; k < 5; ++k) {
		const int c = bad_component(vecs[k].v);
		if (c >= 0)
			return pbd_fail_err(err, PBD_ERR_NOT_FINITE, "%s: particle %u: %s %s = %g is not finite", name, i,
			                    vecs[k].what, axis[c], (double)component(vecs[k].v, c));
	}
	for (int c = 0; c < 3; ++c) {
		const pbd_real lo = component(w->x_lo[i], c), x = component(w->x[i], c);
		if (!(fabs((double)lo) <= half_ulp(x)))
			return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE,
			                    "%s: particle %u: remainder %g of position %s = %.9g out of range (at most %g, half "
			                    "its last place)",
			                    name, i, (double)lo, axis[c], (double)x, half_ulp(x));
	}
	const pbd_real speed = max_abs3(w->v[i]);
	for (int c = 0; c < 3; ++c) {
		const pbd_real lo = component(w->v_lo[i], c);
		if (!(PBD_FABS(lo) <= speed))
			return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE,
			                    "%s: particle %u: remainder %g of velocity %s out of range (at most %g, the velocity's "
			                    "largest component)",
			                    name, i, (double)lo, axis[c], (double)speed);
	}
	const uint8_t flags = w->flags[i];
	const bool pinned = (flags & PBD_PARTICLE_PINNED) != 0;
	if (flags & ~SNAP_FLAGS)
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: particle %u: unknown flags 0x%x", name, i, (unsigned)flags);
	if (!pbd_inv_mass_ok(w->w[i]) || pinned != (w->w[i] == 0))
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE,
		                    "%s: particle %u: inverse mass %g out of range (0 exactly when pinned, else in [%g, %g])",
		                    name, i, (double)w->w[i], PBD_INV_MASS_MIN, PBD_INV_MASS_MAX);
	if (!pbd_inv_mass_ok(w->w_free[i]) || !(w->w_free[i] > 0))
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE,
		                    "%s: particle %u: inverse mass when unpinned %g out of range [%g, %g]", name, i,
		                    (double)w->w_free[i], PBD_INV_MASS_MIN, PBD_INV_MASS_MAX);
	if ((flags & PBD_PARTICLE_TARGET) && !pinned)
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: particle %u: has a target but is not pinned", name, i);
	const pbd_vec3 f = w->force[i];
	if (((flags & PBD_PARTICLE_FORCE) != 0) != (f.x != 0 || f.y != 0 || f.z != 0))
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: particle %u: the force flag does not match the force", name, i);
	const pbd_real r = w->radius[i];
	if (!pbd_is_finite(r) || !(r >= 0) || !(r <= PBD_SQRT(PBD_REAL_MAX) / 8) || (r > 0) != (w->cgroup[i] != 0))
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE,
		                    "%s: particle %u: collision radius %g or group %u out of range (radius in [0, %g], a "
		                    "group exactly when it is not 0)",
		                    name, i, (double)r, w->cgroup[i], (double)(PBD_SQRT(PBD_REAL_MAX) / 8));
	return PBD_OK;
}

static pbd_status load_particles(reader* rd, pbd_world* w, const char* name, pbd_error* err) {
	const uint32_t np = get_u32(rd);
	const uint64_t record = 7 * sizeof(pbd_vec3) + 3 * sizeof(pbd_real) + 2 * sizeof(uint32_t) + 1;
	if (rd->short_read || np >= UINT32_MAX || !fits(rd, np, record))
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: particle count %u does not fit the snapshot", name, np);
	if (np == 0) return PBD_OK;
	if (pbd_particles_reserve(w, np) != PBD_OK)
		return pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %u particles", name, np);
	const size_t n = np;
	get(rd, w->x, n * sizeof *w->x);
	get(rd, w->x_lo, n * sizeof *w->x_lo);
	get(rd, w->v, n * sizeof *w->v);
	get(rd, w->v_lo, n * sizeof *w->v_lo);
	get(rd, w->force, n * sizeof *w->force);
	get(rd, w->target, n * sizeof *w->target);
	get(rd, w->w, n * sizeof *w->w);
	get(rd, w->w_free, n * sizeof *w->w_free);
	get(rd, w->cmask, n * sizeof *w->cmask);
	get(rd, w->radius, n * sizeof *w->radius);
	get(rd, w->cgroup, n * sizeof *w->cgroup);
	get(rd, w->x_rest, n * sizeof *w->x_rest);
	get(rd, w->flags, n);
	w->np = np;
	for (uint32_t i = 0; i < np; ++i) {
		const pbd_status st = check_particle(w, i, name, err);
		if (st != PBD_OK) return st;
	}
	return PBD_OK;
}

/* The warning counters, once the particles are in: a particle's warning names a particle there
 * is, DIVERGED (counted once per step) a step that was, and a counter never raised names 0. */
static pbd_status check_warnings(const pbd_world* w, const char* name, pbd_error* err) {
	for (int k = 0; k < PBD_WARN_COUNT; ++k) {
		const pbd_warning_stat* s = &w->warnings[k];
		const bool steps = k == PBD_WARN_DIVERGED;
		/* A world of bodies alone has no particle to name: its counter names 0. */
		const bool ok = s->count == 0 ? s->last_index == 0
		                : steps       ? s->count <= w->steps && s->last_index <= w->steps
		                              : s->last_index < w->np || (w->np == 0 && s->last_index == 0);
		if (!ok)
			return pbd_fail_err(err, PBD_ERR_PARSE, "%s: warning counter %d: count %llu, last %s %u is invalid", name,
			                    k, (unsigned long long)s->count, steps ? "step" : "particle", s->last_index);
	}
	return PBD_OK;
}

static pbd_status load_family(reader* rd, pbd_world* w, pbd_family_type t, const char* name, pbd_error* err) {
	pbd_status st = PBD_OK;
	pbd_family* f = &w->fam[t];
	const pbd_family_ops* ops = pbd_family_table[t];
	const uint32_t n = get_u32(rd);
	const uint32_t hs = get_u32(rd), cs = get_u32(rd), nl = get_u32(rd);
	if (rd->short_read || hs != ops->hot_size || cs != ops->cold_size || nl != (ops->lambdas ? ops->lambdas : 1))
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: %s constraints have another record layout", name, ops->name);
	const uint64_t record = (uint64_t)hs + cs + (uint64_t)nl * sizeof(pbd_real) + sizeof(uint32_t);
	if (n >= UINT32_MAX || !fits(rd, n, record))
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: %s constraint count %u does not fit the snapshot", name, ops->name,
		                    n);
	if (n && pbd_family_reserve(w, t, n) != PBD_OK)
		return pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %u %s constraints", name, n, ops->name);
	get(rd, f->hot, (size_t)n * hs);
	get(rd, f->cold, (size_t)n * cs);
	get(rd, f->lambda, (size_t)n * nl * sizeof *f->lambda);
	get(rd, f->user, (size_t)n * sizeof *f->user);
	if (ops->data) {
		/* Read before the records are looked at: their particles live in it. */
		const uint64_t bytes = get_u64(rd);
		if (rd->short_read || !fits(rd, bytes, 1))
			return pbd_fail_err(err, PBD_ERR_PARSE, "%s: %s constraint data does not fit the snapshot", name,
			                    ops->name);
		if (bytes && pbd_family_reserve_data(w, t, (size_t)bytes, 0) != PBD_OK)
			return pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %s constraint data", name,
			                    ops->name);
		get(rd, f->data, (size_t)bytes);
		f->data_size = (size_t)bytes;
	}
	f->n = n;
	f->stale = true;
	if (ops->pool_size) {
		/* Read before the records are checked: their particles are found through it. */
		const uint32_t ps = get_u32(rd), pn = get_u32(rd);
		if (rd->short_read || ps != ops->pool_size)
			return pbd_fail_err(err, PBD_ERR_PARSE, "%s: %s constraints have another pool layout", name, ops->name);
		if (pn >= UINT32_MAX || !fits(rd, pn, ps))
			return pbd_fail_err(err, PBD_ERR_PARSE, "%s: %s pool size %u does not fit the snapshot", name, ops->name,
			                    pn);
		if (pn > f->pool_cap) {
			if (!pbd_grow(&w->mem, &f->pool, ps, f->pool_cap, pn))
				return pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for the %s pool", name, ops->name);
			f->pool_cap = pn;
		}
		get(rd, f->pool, (size_t)pn * ps);
		f->pool_n = pn;
	}
	for (uint32_t k = 0; k < n; ++k) f->slot[k] = UINT32_MAX;
	for (uint32_t k = 0; k < n && st == PBD_OK; ++k) {
		const uint32_t u = f->user[k];
		if (u >= n || f->slot[u] != UINT32_MAX)
			LOAD_FAIL(PBD_ERR_PARSE, "%s: %s constraint order is not a permutation (at %u)", name, ops->name, k);
		else
			f->slot[u] = k;
	}
	for (size_t k = 0; k < (size_t)n * nl && st == PBD_OK; ++k)
		if (!pbd_is_finite(f->lambda[k]))
			LOAD_FAIL(PBD_ERR_NOT_FINITE, "%s: %s constraint multiplier %zu is not finite", name, ops->name, k);
	/* A node past the particles is a body's in a family that addresses bodies, checked once the
	 * bodies are loaded (check_nodes); check() keeps a body's node from wrapping round. */
	f->node_base = w->np;
	for (uint32_t k = 0; k < n && st == PBD_OK; ++k) {
		uint32_t p[PBD_FAMILY_MAX_ARITY];
		uint32_t count = PBD_FAMILY_MAX_ARITY;
		for (uint32_t first = 0; first < count && st == PBD_OK; first += PBD_FAMILY_MAX_ARITY) {
			count = ops->particles(f, k, first, p, PBD_FAMILY_MAX_ARITY);
			const uint32_t m = count - first < PBD_FAMILY_MAX_ARITY ? count - first : PBD_FAMILY_MAX_ARITY;
			for (uint32_t i = 0; i < m && st == PBD_OK; ++i)
				if (p[i] >= w->np && !(ops->bodies && (first + i > 0 || ops->only_bodies)))
					LOAD_FAIL(PBD_ERR_OUT_OF_RANGE, "%s: %s constraint %u uses particle %u of %u", name, ops->name,
					          f->user[k], p[i], w->np);
		}
		const char* why = "";
		if (st == PBD_OK && !ops->check(w, f, k, &why))
			LOAD_FAIL(PBD_ERR_OUT_OF_RANGE, "%s: %s constraint %u %s", name, ops->name, f->user[k], why);
	}
	if (st == PBD_OK && ops->work_bytes && pbd_family_reserve_data(w, t, 0, ops->work_bytes(f)) != PBD_OK)
		LOAD_FAIL(PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for the %s constraints' working memory", name, ops->name);
	return st;
}

/* Every node of every constraint is a particle or a live body (node.h). */
static pbd_status check_nodes(const pbd_world* w, const char* name, pbd_error* err) {
	for (int t = 0; t < PBD_FAMILY_COUNT; ++t) {
		const pbd_family* f = &w->fam[t];
		const pbd_family_ops* ops = pbd_family_table[t];
		for (uint32_t k = 0; k < f->n; ++k) {
			uint32_t p[PBD_FAMILY_MAX_ARITY];
			uint32_t count = PBD_FAMILY_MAX_ARITY;
			for (uint32_t first = 0; first < count; first += PBD_FAMILY_MAX_ARITY) {
				count = ops->particles(f, k, first, p, PBD_FAMILY_MAX_ARITY);
				const uint32_t m = count - first < PBD_FAMILY_MAX_ARITY ? count - first : PBD_FAMILY_MAX_ARITY;
				for (uint32_t i = 0; i < m; ++i) {
					if (p[i] < w->np) continue;
					const uint32_t b = p[i] - w->np;
					if (b >= w->bodies.n || !w->bodies.live[b])
						return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE,
						                    "%s: %s constraint %u uses node %u, which is neither one of the %u "
						                    "particles nor a live body",
						                    name, ops->name, f->user[k], p[i], w->np);
				}
			}
		}
	}
	return PBD_OK;
}

static pbd_status load_families(reader* rd, pbd_world* w, const char* name, pbd_error* err) {
	const uint32_t count = get_u32(rd);
	if (rd->short_read || count > PBD_FAMILY_COUNT)
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: %u constraint families, this library knows %d", name, count,
		                    PBD_FAMILY_COUNT);
	for (uint32_t t = 0; t < count; ++t) {
		const pbd_status st = load_family(rd, w, (pbd_family_type)t, name, err);
		if (st != PBD_OK) return st;
	}
	w->partitioned = false;
	return PBD_OK;
}

/* Soft objects: each range must lie inside what the world holds. */
static pbd_status load_softs(reader* rd, pbd_world* w, const char* name, pbd_error* err) {
	const uint32_t ns = get_u32(rd);
	const uint64_t record = (8 + 2 * (uint64_t)PBD_FAMILY_COUNT) * sizeof(uint32_t);
	if (rd->short_read || ns > w->np || !fits(rd, ns, record))
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: soft object count %u does not fit the snapshot", name, ns);
	if (ns) {
		if (!pbd_grow(&w->mem, (void**)&w->softs, sizeof *w->softs, 0, ns))
			return pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %u soft objects", name, ns);
		w->cap_s = ns;
	}
	for (uint32_t i = 0; i < ns; ++i) {
		uint32_t rec[8];
		get(rd, rec, sizeof rec);
		pbd_soft_rec* r = &w->softs[i];
		memset(r, 0, sizeof *r);
		r->info.first_particle = rec[0];
		r->info.particle_count = rec[1];
		r->info.first_distance = rec[2];
		r->info.distance_count = rec[3];
		r->info.first_triangle = rec[4];
		r->info.triangle_count = rec[5];
		r->generation = rec[6];
		r->alive = rec[7];
		get(rd, r->info.first, sizeof r->info.first);
		get(rd, r->info.count, sizeof r->info.count);
		w->ns = i + 1;
		bool ok = (uint64_t)rec[0] + rec[1] <= w->np && (uint64_t)rec[4] + rec[5] <= w->nt && rec[6] != 0 &&
		          rec[7] <= 1 && rec[2] == r->info.first[PBD_FAMILY_DISTANCE] &&
		          rec[3] == r->info.count[PBD_FAMILY_DISTANCE];
		for (int t = 0; t < PBD_FAMILY_COUNT; ++t)
			ok = ok && (uint64_t)r->info.first[t] + r->info.count[t] <= w->fam[t].n;
		if (!ok) return pbd_fail_err(err, PBD_ERR_PARSE, "%s: soft object %u is invalid", name, i);
	}
	return PBD_OK;
}

/* Scratch for a collider's arrays while it is loaded. */
typedef struct shape_scratch {
	void* p;
	size_t size;
} shape_scratch;

/* Reads the arrays put_shape_arrays wrote into one scratch block and points the def at them.
 * The counts are checked against the bytes left before anything is allocated (in 64 bits: a
 * height field's nx nz sizeof(pbd_real) could wrap a size_t), and an array of no bytes is no
 * pointer at all: nothing is computed from a null block. */
static pbd_status get_shape_arrays(reader* rd, pbd_world* w, pbd_collider_def* d, shape_scratch* scratch) {
	uint32_t n0 = 0, n1 = 0, closed = 0;
	uint64_t a = 0, b = 0; /* bytes of the first and second array */
	switch (d->type) {
	case PBD_SHAPE_CONVEX:
		n0 = get_u32(rd);
		if (rd->short_read || !fits(rd, n0, sizeof(pbd_vec3))) return PBD_ERR_PARSE;
		a = (uint64_t)n0 * sizeof(pbd_vec3);
		break;
	case PBD_SHAPE_MESH:
		n0 = get_u32(rd);
		n1 = get_u32(rd);
		closed = get_u32(rd);
		if (rd->short_read || closed > 1 || !fits(rd, n0, sizeof(pbd_vec3)) || !fits(rd, n1, 3 * sizeof(uint32_t)))
			return PBD_ERR_PARSE;
		a = (uint64_t)n0 * sizeof(pbd_vec3);
		b = 3 * (uint64_t)n1 * sizeof(uint32_t);
		break;
	case PBD_SHAPE_HEIGHTFIELD:
		n0 = get_u32(rd);
		n1 = get_u32(rd);
		if (rd->short_read || !fits(rd, (uint64_t)n0 * n1, sizeof(pbd_real))) return PBD_ERR_PARSE;
		a = (uint64_t)n0 * n1 * sizeof(pbd_real);
		break;
	default:
		return PBD_OK;
	}
	if (!fits(rd, 1, a + b)) return PBD_ERR_PARSE;
	scratch->size = (size_t)(a + b);
	scratch->p = scratch->size ? pbd_alloc(&w->mem, scratch->size) : NULL;
	if (scratch->size && !scratch->p) return PBD_ERR_OUT_OF_MEMORY;
	const void* first = a ? scratch->p : NULL;
	const void* second = b ? (const void*)((const char*)scratch->p + a) : NULL;
	if (a) get(rd, scratch->p, (size_t)a);
	if (b) get(rd, (char*)scratch->p + a, (size_t)b);
	switch (d->type) {
	case PBD_SHAPE_CONVEX:
		d->shape.convex.point_count = n0;
		d->shape.convex.points = (const pbd_vec3*)first;
		break;
	case PBD_SHAPE_MESH:
		d->shape.mesh.vertex_count = n0;
		d->shape.mesh.triangle_count = n1;
		d->shape.mesh.closed = closed == 1;
		d->shape.mesh.vertices = (const pbd_vec3*)first;
		d->shape.mesh.triangles = (const uint32_t*)second;
		break;
	default:
		d->shape.heightfield.nx = n0;
		d->shape.heightfield.nz = n1;
		d->shape.heightfield.heights = (const pbd_real*)first;
		break;
	}
	return rd->short_read ? PBD_ERR_PARSE : PBD_OK;
}

/* What put_flagged wrote: *on is the flag; false when the flag or the arrays do not fit. */
static bool get_flagged(reader* rd, bool* on, uint32_t n, void* a, size_t a_size, void* b, size_t b_size) {
	const uint32_t flag = get_u32(rd);
	if (rd->short_read || flag > 1 || !fits(rd, flag ? n : 0, a_size + b_size)) return false;
	*on = flag == 1;
	if (*on) {
		get(rd, a, n * a_size);
		get(rd, b, n * b_size);
	}
	return true;
}

/* What write_air wrote; the particles and triangles are already in. */
static pbd_status load_air(reader* rd, pbd_world* w, const char* name, pbd_error* err) {
	bool particles = false, triangles = false;
	if (!get_flagged(rd, &particles, w->np, w->drag, sizeof *w->drag, w->drag_wind, sizeof *w->drag_wind))
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: particle drag does not fit the snapshot", name);
	if (!get_flagged(rd, &triangles, w->nt, w->tri_drag, sizeof *w->tri_drag, w->tri_wind, sizeof *w->tri_wind))
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: triangle drag does not fit the snapshot", name);
	/* Checked by the setters' own checks (pbd_particles_set_drag, pbd_world_set_triangle_drag);
	 * the counts that gate the air are recounted. */
	char record[48];
	for (uint32_t i = 0; i < w->np; ++i) {
		snprintf(record, sizeof record, "particle %u", i);
		pbd_status st = pbd_forces_check_drag(w, record, "drag", w->drag[i]);
		if (st == PBD_OK) st = pbd_forces_check_wind(w, record, "wind", w->drag_wind[i]);
		if (st != PBD_OK) return pbd_fail_err(err, st, "%s: %s", name, w->last_error);
	}
	for (uint32_t f = 0; f < w->nt; ++f) {
		snprintf(record, sizeof record, "triangle %u", f);
		pbd_status st = pbd_forces_check_drag(w, record, "normal drag", w->tri_drag[f].normal);
		if (st == PBD_OK) st = pbd_forces_check_drag(w, record, "tangential drag", w->tri_drag[f].tangent);
		if (st == PBD_OK) st = pbd_forces_check_wind(w, record, "wind", w->tri_wind[f]);
		if (st != PBD_OK) return pbd_fail_err(err, st, "%s: %s", name, w->last_error);
	}
	pbd_forces_recount(w);
	if (particles != (w->n_drag > 0) || triangles != (w->nt_drag > 0))
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: the air flags do not match the drag stored", name);
	return PBD_OK;
}

static pbd_status load_rest(reader* rd, pbd_world* w, const char* name, pbd_error* err) {
	const uint32_t nt = get_u32(rd);
	if (rd->short_read || nt > UINT32_MAX / 3 || !fits(rd, nt, 3 * sizeof(uint32_t)))
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: triangle count %u does not fit the snapshot", name, nt);
	if (nt && pbd_triangles_reserve(w, nt) != PBD_OK)
		return pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %u triangles", name, nt);
	get(rd, w->tri, 3 * (size_t)nt * sizeof *w->tri);
	w->nt = nt;
	/* As pbd_world_add_triangles takes them. */
	for (uint32_t t = 0; t < nt; ++t) {
		const uint32_t* v = w->tri + 3 * (size_t)t;
		for (int k = 0; k < 3; ++k)
			if (v[k] >= w->np)
				return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE,
				                    "%s: triangle %u: particle index %u out of range (%u particles)", name, t, v[k],
				                    w->np);
		if (v[0] == v[1] || v[1] == v[2] || v[0] == v[2])
			return pbd_fail_err(err, PBD_ERR_DEGENERATE, "%s: triangle %u repeats a particle (%u, %u, %u)", name, t,
			                    v[0], v[1], v[2]);
	}
	const pbd_status air = load_air(rd, w, name, err);
	if (air != PBD_OK) return air;

	const uint32_t nc = get_u32(rd);
	const uint64_t record = 2 * sizeof(int32_t) + 21 * sizeof(pbd_real) + 4 * sizeof(uint32_t);
	if (rd->short_read || nc > (1u << 24) || !fits(rd, nc, record))
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: collider count %u does not fit the snapshot", name, nc);
	if (nc) {
		if (!pbd_grow(&w->mem, (void**)&w->colliders, sizeof *w->colliders, 0, nc))
			return pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %u colliders", name, nc);
		w->cap_c = nc;
	}
	for (uint32_t i = 0; i < nc; ++i) {
		pbd_collider* c = &w->colliders[i];
		pbd_collider_def* d = &c->def;
		*d = pbd_collider_def_default();
		const int32_t type = get_i32(rd);
		pbd_real shape[4];
		get(rd, shape, sizeof shape);
		d->margin = get_real(rd);
		const int32_t kind = get_i32(rd);
		d->pose.position = get_vec(rd);
		get(rd, &d->pose.rotation, sizeof d->pose.rotation);
		d->velocity = get_vec(rd);
		d->angular_velocity = get_vec(rd);
		d->static_friction = get_real(rd);
		d->kinetic_friction = get_real(rd);
		d->restitution = get_real(rd);
		const uint32_t trigger = get_u32(rd);
		d->category = get_u32(rd);
		c->generation = get_u32(rd);
		const uint32_t alive = get_u32(rd);
		w->nc = i + 1;
		c->pose0 = d->pose;
		c->alive = alive == 1;
		if (rd->short_read)
			return pbd_fail_err(err, PBD_ERR_PARSE, "%s: collider %u does not fit the snapshot", name, i);
		if (type < 0 || type >= PBD_SHAPE_COUNT || kind < 0 || kind > PBD_ACTOR_KINEMATIC || trigger > 1 || alive > 1)
			return pbd_fail_err(err, PBD_ERR_PARSE,
			                    "%s: collider %u: shape type %d, kind %d, trigger %u or alive %u out of range", name, i,
			                    (int)type, (int)kind, trigger, alive);
		d->type = (pbd_shape_type)type;
		d->kind = (pbd_actor_kind)kind;
		d->trigger = trigger == 1;
		shape_from_reals(d, shape);
		/* The arrays are read into scratch, checked with the def by pbd_collider_create's own
		 * checks, then copied into the collider's own memory as pbd_collider_create would. */
		shape_scratch scratch = {NULL, 0};
		pbd_status st = get_shape_arrays(rd, w, d, &scratch);
		if (st != PBD_OK) {
			st = pbd_fail_err(err, st, "%s: collider %u: %s", name, i,
			                  st == PBD_ERR_OUT_OF_MEMORY ? "out of memory for its arrays"
			                                              : "its arrays do not fit the snapshot");
		} else {
			/* Checked on a copy: the checks normalise, and the saved bits must stay as saved. */
			const pbd_status valid = pbd_collider_def_check(w, d);
			if (valid == PBD_ERR_OUT_OF_MEMORY || (valid == PBD_OK && pbd_collider_attach_data(w, c) != PBD_OK)) {
				st = pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: collider %u: out of memory", name, i);
			} else if (valid != PBD_OK) {
				char what[32];
				snprintf(what, sizeof what, "collider %u", i);
				st = refused(w, valid, name, what, err);
			}
		}
		pbd_free(&w->mem, scratch.p, scratch.size);
		if (st != PBD_OK) return st;
	}
	const uint32_t ninside = get_u32(rd);
	if (rd->short_read || !fits(rd, ninside, 2 * sizeof(uint32_t)))
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: trigger occupancy count %u does not fit the snapshot", name,
		                    ninside);
	if (ninside) {
		if (!pbd_grow(&w->mem, (void**)&w->inside, sizeof *w->inside, 0, ninside))
			return pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for the trigger occupancy", name);
		w->cap_inside = ninside;
	}
	for (uint32_t k = 0; k < ninside; ++k) {
		const uint32_t slot = get_u32(rd), particle = get_u32(rd);
		w->inside[k] = (uint64_t)slot << 32 | particle;
		if (slot >= w->nc || !w->colliders[slot].def.trigger || particle >= w->np ||
		    (k > 0 && w->inside[k] <= w->inside[k - 1]))
			return pbd_fail_err(err, PBD_ERR_PARSE, "%s: trigger occupancy entry %u is invalid", name, k);
	}
	w->ninside = ninside;
	return load_softs(rd, w, name, err);
}

typedef struct log_capture {
	pbd_error* err;
	const char* name;
	pbd_log_fn log;
	void* user;
} log_capture;

static void capture_log(const char* message, void* user) {
	log_capture* c = (log_capture*)user;
	if (c->err) snprintf(c->err->message, sizeof c->err->message, "%s: %s", c->name, message);
	if (c->log) c->log(message, c->user);
}

/* What write_world wrote last: vertex block descent's state, checked as the method keeps it (a
 * finite multiplier, a penalty >= 0), given to the integrator for the rows it will build. */
static pbd_status load_vbd(reader* rd, pbd_world* w, const char* name, pbd_error* err) {
	const uint32_t nr = get_u32(rd);
	if (rd->short_read || !fits(rd, nr, 2 * sizeof(pbd_real)))
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: block descent state of %u rows does not fit the snapshot", name,
		                    nr);
	if (nr == 0) return PBD_OK;
	pbd_real* buf = (pbd_real*)pbd_alloc(&w->mem, 2 * (size_t)nr * sizeof *buf);
	if (!buf) return pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
	get(rd, buf, 2 * (size_t)nr * sizeof *buf);
	pbd_status st = PBD_OK;
	for (size_t k = 0; k < 2 * (size_t)nr && st == PBD_OK; ++k)
		if (!pbd_is_finite(buf[k]) || (k >= nr && buf[k] < 0))
			st = pbd_fail_err(err, PBD_ERR_PARSE, "%s: block descent row %zu: %s %g out of range", name, k % nr,
			                  k < nr ? "multiplier" : "penalty", (double)buf[k]);
	if (st == PBD_OK && pbd_vbd_restore(w, nr, buf, buf + nr) != PBD_OK)
		st = pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
	pbd_free(&w->mem, buf, 2 * (size_t)nr * sizeof *buf);
	return st;
}

/* Version 7 on: projective dynamics' weights and keys, checked as the method makes them (a weight
 * finite and >= 0, a key finite, no more free particles than particles) and given to the
 * integrator for the factor it will build. */
static pbd_status load_pd(reader* rd, pbd_world* w, const char* name, pbd_error* err) {
	pbd_pd_saved s = {get_u32(rd), 0, 0, 0};
	if (rd->short_read) return pbd_fail_err(err, PBD_ERR_PARSE, "%s: truncated", name);
	if (s.rows == 0) return PBD_OK;
	s.free = get_u32(rd);
	s.entries = get_u32(rd);
	s.hash = get_u64(rd);
	if (rd->short_read || !fits(rd, s.rows, 2 * sizeof(double)))
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: projective dynamics state of %u rows does not fit the snapshot",
		                    name, s.rows);
	if (s.free == 0 || s.free > w->np || s.entries < s.free)
		return pbd_fail_err(
		    err, PBD_ERR_PARSE,
		    "%s: projective dynamics state for %u free particles and %u entries is invalid (%u particles)", name,
		    s.free, s.entries, w->np);
	double* buf = (double*)pbd_alloc(&w->mem, 2 * (size_t)s.rows * sizeof *buf);
	if (!buf) return pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
	get(rd, buf, 2 * (size_t)s.rows * sizeof *buf);
	pbd_status st = PBD_OK;
	for (uint32_t r = 0; r < s.rows && st == PBD_OK; ++r) {
		if (!isfinite(buf[r]) || buf[r] < 0)
			st = pbd_fail_err(err, PBD_ERR_PARSE,
			                  "%s: projective dynamics weight of row %u is %g (must be finite and >= 0)", name, r,
			                  buf[r]);
		else if (!isfinite(buf[s.rows + r]))
			st = pbd_fail_err(err, PBD_ERR_PARSE, "%s: projective dynamics key of row %u is not finite", name, r);
	}
	if (st == PBD_OK && pbd_pd_restore(w, &s, buf, buf + s.rows) != PBD_OK)
		st = pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
	pbd_free(&w->mem, buf, 2 * (size_t)s.rows * sizeof *buf);
	return st;
}

/* Version 10 on: the sleep settings, then each body slot asleep or not, how long it has been still
 * and its island; before it every body is awake and its own island. A sleeping body must be a live dynamic one, and its
 * island a body slot. */
static pbd_status load_sleep(reader* rd, pbd_world* w, uint32_t version, const char* name, pbd_error* err) {
	pbd_bodies* b = &w->bodies;
	if (version >= 10) {
		const pbd_real time = get_real(rd), speed = get_real(rd);
		if (rd->short_read) return pbd_fail_err(err, PBD_ERR_PARSE, "%s: truncated in the sleep settings", name);
		if (!pbd_is_finite(time) || time < 0 || !pbd_is_finite(speed) || speed < 0)
			return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "%s: settings: sleep_time %g or sleep_speed %g out of range",
			                    name, (double)time, (double)speed);
		w->def.sleep_time = time;
		w->def.sleep_speed = speed;
	}
	for (uint32_t i = 0; i < b->n; ++i) {
		b->asleep[i] = 0;
		b->still[i] = 0;
		b->island[i] = i;
		if (version < 10) continue;
		const uint32_t asleep = get_u32(rd);
		const pbd_real still = get_real(rd);
		const uint32_t island = get_u32(rd);
		if (rd->short_read)
			return pbd_fail_err(err, PBD_ERR_PARSE, "%s: truncated in the sleep of body %u", name, i + 1);
		if (asleep > 1 || (asleep && (!b->live[i] || b->type[i] != PBD_BODY_DYNAMIC)) || !pbd_is_finite(still) ||
		    still < 0 || island >= b->n)
			return pbd_fail_err(err, PBD_ERR_PARSE, "%s: rigid body %u: sleep state out of range", name, i + 1);
		b->asleep[i] = (uint8_t)asleep;
		b->still[i] = still;
		b->island[i] = island;
	}
	return PBD_OK;
}

/* Version 11 on: the pairs of colliders touching after the last step, each as a step leaves one
 * (pbd_contact_events_check); before it none, and the first step reports the touching pairs as
 * beginning. */
static pbd_status load_touch(reader* rd, pbd_world* w, const char* name, pbd_error* err) {
	const uint32_t n = get_u32(rd);
	if (rd->short_read || !fits(rd, n, 8 * sizeof(uint32_t) + 2 * sizeof(pbd_vec3) + sizeof(pbd_real)))
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: %u touching pairs do not fit the snapshot", name, n);
	if (n > 0 && pbd_contact_events_reserve(w, n) != PBD_OK)
		return pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %u touching pairs", name, n);
	for (uint32_t k = 0; k < n; ++k) {
		pbd_touch* t = &w->touch[k];
		memset(t, 0, sizeof *t);
		uint32_t rec[8];
		get(rd, rec, sizeof rec);
		t->pair = (uint64_t)rec[0] << 32 | rec[1];
		t->gen_a = rec[2], t->gen_b = rec[3];
		t->body_a = rec[4], t->bgen_a = rec[5], t->body_b = rec[6], t->bgen_b = rec[7];
		t->point = get_vec(rd);
		t->normal = get_vec(rd);
		t->impulse = get_real(rd);
		if (rd->short_read) return pbd_fail_err(err, PBD_ERR_PARSE, "%s: truncated in touching pair %u", name, k + 1);
		w->ntouch = k + 1;
		const char* why = pbd_contact_events_check(w, k);
		if (why) return pbd_fail_err(err, PBD_ERR_PARSE, "%s: touching pair %u: %s", name, k + 1, why);
	}
	return PBD_OK;
}

/* Version 13 on: pbd_world_def.max_substeps, checked as pbd_world_create checks it. */
static pbd_status load_max_substeps(reader* rd, pbd_world* w, const char* name, pbd_error* err) {
	const int32_t most = get_i32(rd);
	if (rd->short_read) return pbd_fail_err(err, PBD_ERR_PARSE, "%s: truncated in the settings' max_substeps", name);
	if (pbd_world_set_max_substeps(w, most) != PBD_OK)
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "%s: settings: %s", name, pbd_world_last_error(w));
	return PBD_OK;
}

/* Version 12 on: the body solver and the soft step's contact stiffness, then the contacts kept
 * from the last step, pair by pair, each checked as the search could have made it
 * (pbd_rigid_contacts_check_kept). */
static pbd_status load_kept(reader* rd, pbd_world* w, const char* name, pbd_error* err) {
	const uint32_t solver = get_u32(rd);
	const pbd_real hertz = get_real(rd);
	if (rd->short_read) return pbd_fail_err(err, PBD_ERR_PARSE, "%s: truncated in the body solver", name);
	if (solver > PBD_BODY_SOLVER_AVBD || !pbd_is_finite(hertz) || hertz < 0 || hertz > (pbd_real)1e6)
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "%s: settings: body_solver %u or contact_hertz %g out of range",
		                    name, solver, (double)hertz);
	w->def.body_solver = (pbd_body_solver)solver;
	w->def.contact_hertz = hertz;
	const uint32_t npair = get_u32(rd);
	const size_t pair_record =
	    sizeof(uint64_t) + sizeof(pbd_vec3) + sizeof(pbd_quat) + sizeof(pbd_real) + 2 * sizeof(uint32_t);
	const size_t contact_record = sizeof(uint32_t) + 4 * sizeof(pbd_vec3) + sizeof(pbd_real);
	if (rd->short_read || !fits(rd, npair, pair_record))
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: %u kept pairs of body contacts do not fit the snapshot", name,
		                    npair);
	if (npair == 0) return PBD_OK;
	if (solver == PBD_BODY_SOLVER_POSITION)
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: kept body contacts under the position solver", name);
	if (!pbd_grow_to(&w->mem, (void**)&w->rpair, sizeof *w->rpair, &w->cap_rpair, npair))
		return pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %u kept pairs", name, npair);
	uint64_t ncon = 0;
	for (uint32_t k = 0; k < npair; ++k) {
		pbd_rigid_pair* r = &w->rpair[k];
		memset(r, 0, sizeof *r);
		r->key = get_u64(rd);
		r->at = get_vec(rd);
		get(rd, &r->turn, sizeof r->turn);
		r->reach = get_real(rd);
		r->count = get_u32(rd);
		const uint32_t i_moves = get_u32(rd);
		r->i_moves = i_moves != 0;
		r->first = (uint32_t)ncon;
		ncon += r->count;
		if (rd->short_read) return pbd_fail_err(err, PBD_ERR_PARSE, "%s: truncated in kept pair %u", name, k + 1);
		if (i_moves > 1 || ncon > UINT32_MAX)
			return pbd_fail_err(err, PBD_ERR_PARSE, "%s: kept pair %u: out of range", name, k + 1);
	}
	if (!fits(rd, ncon, contact_record))
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: %llu kept body contacts do not fit the snapshot", name,
		                    (unsigned long long)ncon);
	if (ncon > 0 && !pbd_grow_to(&w->mem, (void**)&w->rkeep, sizeof *w->rkeep, &w->cap_rkeep, (uint32_t)ncon))
		return pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %llu kept body contacts", name,
		                    (unsigned long long)ncon);
	for (uint32_t q = 0; q < (uint32_t)ncon; ++q) {
		pbd_rigid_c* c = &w->rkeep[q];
		memset(c, 0, sizeof *c);
		c->cp = get_u32(rd);
		c->lp = get_vec(rd);
		c->ls = get_vec(rd);
		c->ln = get_vec(rd);
		c->pn = get_real(rd);
		c->pt = get_vec(rd);
	}
	if (rd->short_read) return pbd_fail_err(err, PBD_ERR_PARSE, "%s: truncated in the kept body contacts", name);
	w->nrpair = npair;
	const char* why = pbd_rigid_contacts_check_kept(w);
	if (why) {
		w->nrpair = 0;
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: kept body contacts: %s", name, why);
	}
	w->rkeep_valid = true;
	return PBD_OK;
}

/* Version 9 on: the bodies write_bodies wrote, each value checked as the API would have made it
 * (pbd_bodies_check) and the centre's remainder within half an ulp of the centre. */
static pbd_status load_bodies(reader* rd, pbd_world* w, const char* name, pbd_error* err) {
	const uint32_t n = get_u32(rd);
	const size_t record = 4 * sizeof(uint32_t) + 8 * sizeof(pbd_vec3) + 2 * sizeof(pbd_quat) + 4 * sizeof(pbd_real);
	if (rd->short_read || !fits(rd, n, record))
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: %u rigid bodies do not fit the snapshot", name, n);
	if (n > 0 && pbd_bodies_reserve(w, n) != PBD_OK)
		return pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory for %u rigid bodies", name, n);
	pbd_bodies* b = &w->bodies;
	for (uint32_t i = 0; i < n; ++i) {
		const uint32_t type = get_u32(rd), live = get_u32(rd);
		b->type[i] = (uint8_t)(type > 255 ? 255 : type);
		b->live[i] = (uint8_t)(live > 255 ? 255 : live);
		b->generation[i] = get_u32(rd);
		b->cookie[i] = get_i32(rd);
		b->x[i] = get_vec(rd);
		b->x_lo[i] = get_vec(rd);
		b->v[i] = get_vec(rd);
		get(rd, &b->q[i], sizeof b->q[i]);
		b->omega[i] = get_vec(rd);
		b->inv_mass[i] = get_real(rd);
		b->inertia[i] = get_vec(rd);
		get(rd, &b->principal[i], sizeof b->principal[i]);
		b->center[i] = get_vec(rd);
		b->force[i] = get_vec(rd);
		b->torque[i] = get_vec(rd);
		b->gravity_scale[i] = get_real(rd);
		b->linear_damping[i] = get_real(rd);
		b->angular_damping[i] = get_real(rd);
		b->n = i + 1;
		if (rd->short_read) return pbd_fail_err(err, PBD_ERR_PARSE, "%s: truncated in rigid body %u", name, i + 1);
		const char* why = pbd_bodies_check(w, i);
		if (why) return pbd_fail_err(err, PBD_ERR_PARSE, "%s: rigid body %u: %s", name, i + 1, why);
		const pbd_real xs[3] = {b->x[i].x, b->x[i].y, b->x[i].z}, ls[3] = {b->x_lo[i].x, b->x_lo[i].y, b->x_lo[i].z};
		for (int k = 0; k < 3; ++k)
			if (b->live[i] && fabs((double)ls[k]) > half_ulp(xs[k]))
				return pbd_fail_err(err, PBD_ERR_PARSE,
				                    "%s: rigid body %u: remainder %g of its centre out of range (at most %g, half an "
				                    "ulp)",
				                    name, i + 1, (double)ls[k], half_ulp(xs[k]));
	}
	pbd_bodies_recount(w);
	pbd_bodies_refresh_poses(w);
	const uint32_t riding = get_u32(rd);
	if (rd->short_read || !fits(rd, riding, 2 * sizeof(uint32_t) + sizeof(pbd_vec3) + sizeof(pbd_quat)))
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: %u shapes on bodies do not fit the snapshot", name, riding);
	for (uint32_t r = 0; r < riding; ++r) {
		const uint32_t slot = get_u32(rd), body = get_u32(rd);
		pbd_pose local;
		local.position = get_vec(rd);
		get(rd, &local.rotation, sizeof local.rotation);
		if (rd->short_read) return pbd_fail_err(err, PBD_ERR_PARSE, "%s: truncated in the shapes on bodies", name);
		if (slot >= w->nc || w->colliders[slot].body || body == 0 || body > b->n || !b->live[body - 1] ||
		    (w->colliders[slot].alive && w->colliders[slot].def.kind != PBD_ACTOR_KINEMATIC))
			return pbd_fail_err(err, PBD_ERR_PARSE, "%s: shape on a body %u: collider %u on body %u is not one", name,
			                    r + 1, slot, body);
		const pbd_real q2 = local.rotation.x * local.rotation.x + local.rotation.y * local.rotation.y +
		                    local.rotation.z * local.rotation.z + local.rotation.w * local.rotation.w;
		if (bad_component(local.position) >= 0 || !pbd_quat_is_finite(local.rotation) ||
		    !(PBD_FABS(q2 - 1) < (pbd_real)1e-4))
			return pbd_fail_err(err, PBD_ERR_PARSE, "%s: shape on a body %u: its pose is not finite and unit", name,
			                    r + 1);
		w->colliders[slot].body = body;
		w->colliders[slot].local = local;
	}
	return PBD_OK;
}

/* The header: the magic, then the version, the scalar size and the byte order, each refused
 * with its own line, and from version 8 the snapshot's size. */
typedef struct snap_header {
	uint32_t version;
	uint64_t size; /* version 8 on: bytes of the whole snapshot, its hash included; else 0 */
} snap_header;

static pbd_status read_header(reader* rd, const char* name, snap_header* h, pbd_error* err) {
	char magic[8];
	get(rd, magic, 8);
	if (rd->short_read || memcmp(magic, SNAP_MAGIC, 8) != 0)
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: not a pbd snapshot", name);
	const uint32_t version = get_u32(rd), real_size = get_u32(rd), endian = get_u32(rd);
	if (rd->short_read) return pbd_fail_err(err, PBD_ERR_PARSE, "%s: truncated header", name);
	if (version < SNAP_VERSION_OLDEST || version > SNAP_VERSION)
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: version %u, this library reads versions %u to %u", name, version,
		                    SNAP_VERSION_OLDEST, SNAP_VERSION);
	if (endian != SNAP_ENDIAN)
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: written on a machine of the other byte order", name);
	if (real_size != sizeof(pbd_real))
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: written by a %s build; this library is %s", name,
		                    real_size == 8   ? "double"
		                    : real_size == 4 ? "float"
		                                     : "foreign",
		                    sizeof(pbd_real) == 8 ? "double" : "float");
	h->version = version;
	h->size = version >= 8 ? get_u64(rd) : 0;
	if (rd->short_read) return pbd_fail_err(err, PBD_ERR_PARSE, "%s: truncated header", name);
	if (version >= 8 && h->size < SNAP_HEADER + 8)
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: the header gives a size of %llu bytes, less than any snapshot",
		                    name, (unsigned long long)h->size);
	return PBD_OK;
}

/* The settings, through pbd_world_create, which checks every one as for a new world and logs why
 * it refuses (the line is caught for err too); then the clock and the warning counters. */
static pbd_status load_world(reader* rd, const pbd_world_def* hooks, const char* name, pbd_world** out,
                             pbd_error* err) {
	pbd_world_def def = pbd_world_def_default();
	if (hooks) {
		def.allocator = hooks->allocator;
		def.log = hooks->log;
		def.log_user = hooks->log_user;
		def.threads = hooks->threads > 0 ? hooks->threads : 1;
		def.enqueue_task = hooks->enqueue_task;
		def.finish_task = hooks->finish_task;
		def.task_user = hooks->task_user;
	}
	def.gravity = get_vec(rd);
	def.dt = get_real(rd);
	def.substeps = get_i32(rd);
	def.iterations = get_i32(rd);
	def.solver = (pbd_solver)get_i32(rd);
	def.formulation = (pbd_formulation)get_i32(rd);
	def.damping = get_real(rd);
	def.damping_mode = (pbd_damping_mode)get_i32(rd);
	def.jacobi_alpha = get_real(rd);
	def.jacobi_omega = get_real(rd);
	const uint32_t equal_split = get_u32(rd);
	def.collision_mode = (pbd_collision_mode)get_i32(rd);
	def.max_speed = get_real(rd);
	const uint32_t diagnostics = get_u32(rd);
	def.divergence_strain = get_real(rd);
	const uint32_t chebyshev = get_u32(rd);
	def.chebyshev = chebyshev != 0;
	def.chebyshev_rho = get_real(rd);
	def.chebyshev_delay = get_i32(rd);
	def.chebyshev_gamma = get_real(rd);
	def.hierarchy_levels = get_i32(rd);
	def.hierarchy_iterations = get_i32(rd);
	def.method = (pbd_method)get_i32(rd);
	def.stiffness_damping = get_real(rd);
	def.linear_tolerance = get_real(rd);
	def.hard_stiffness = get_real(rd);
	def.wind = get_vec(rd);
	def.gust_strength = get_real(rd);
	def.gust_frequency = get_real(rd);
	const pbd_real rho_estimate = get_real(rd);
	def.jacobi_equal_split = equal_split != 0;
	def.diagnostics = diagnostics != 0;
	const double time = get_f64(rd);
	const uint64_t steps = get_u64(rd);
	pbd_warning_stat warnings[PBD_WARN_COUNT];
	for (int k = 0; k < PBD_WARN_COUNT; ++k) {
		warnings[k].count = get_u64(rd);
		warnings[k].last_index = get_u32(rd);
	}
	if (rd->short_read) return pbd_fail_err(err, PBD_ERR_PARSE, "%s: truncated settings", name);
	if (equal_split > 1 || diagnostics > 1 || chebyshev > 1)
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: settings: a flag is neither 0 nor 1 (%u, %u, %u)", name,
		                    equal_split, diagnostics, chebyshev);
	if (!isfinite(time) || time < 0)
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "%s: clock: time %g out of range (finite and >= 0)", name, time);
	/* No run reaches 2^62 steps; a count near 2^64 would wrap within a few steps, and the warning
	 * counters, which never exceed it, would then name steps that were not. */
	if (steps > SNAP_MAX_STEPS)
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "%s: clock: step count %llu out of range (at most 2^62)", name,
		                    (unsigned long long)steps);
	if (!(rho_estimate >= 0 && rho_estimate < 1))
		return pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "%s: settings: spectral radius estimate %g out of range [0, 1)",
		                    name, (double)rho_estimate);

	log_capture cap = {err, name, def.log, def.log_user};
	def.log = capture_log;
	def.log_user = &cap;
	pbd_world* w = NULL;
	const pbd_status st = pbd_world_create(&def, &w);
	if (st != PBD_OK) return st;
	w->def.log_user = cap.user;
	w->rho_estimate = rho_estimate;
	w->time = time;
	w->steps = steps;
	memcpy(w->warnings, warnings, sizeof warnings);
	/* The checks of the API that the loader shares report through w->last_error, which the
	 * loader turns into err; the user's log hears from the world once it is loaded. */
	w->def.log = NULL;
	*out = w;
	return PBD_OK;
}

/* A snapshot in memory, named `name` in every error. */
static pbd_status load_named(const void* data, size_t size, const pbd_world_def* hooks, const char* name,
                             pbd_world** out, pbd_error* err) {
	*out = NULL;
	if (hooks && hooks->cookie != PBD_COOKIE)
		return pbd_fail_err(err, PBD_ERR_UNINITIALIZED_DEF, "pbd_world_load: def not made by pbd_world_def_default()");
	reader rd = {(const uint8_t*)data, size, 0, false};
	snap_header h;
	pbd_status st = read_header(&rd, name, &h, err);
	if (st != PBD_OK) return st;
	if (h.version >= 8 && h.size != size)
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: %s: %zu bytes, the header says %llu", name,
		                    size < h.size ? "truncated" : "trailing bytes", size, (unsigned long long)h.size);
	uint64_t stored;
	if (size < rd.pos + 8) return pbd_fail_err(err, PBD_ERR_PARSE, "%s: truncated", name);
	memcpy(&stored, (const uint8_t*)data + size - 8, 8);
	if (pbd_fnv1a(PBD_FNV1A_START, data, size - 8) != stored)
		return pbd_fail_err(err, PBD_ERR_PARSE, "%s: truncated or corrupt (checksum mismatch)", name);
	rd.size = size - 8; /* the hash is not payload */

	pbd_world* w = NULL;
	st = load_world(&rd, hooks, name, &w, err);
	if (st != PBD_OK) return st;
	const pbd_log_fn log = hooks ? hooks->log : NULL;
	st = load_particles(&rd, w, name, err);
	if (st == PBD_OK) st = check_warnings(w, name, err);
	if (st == PBD_OK) st = load_families(&rd, w, name, err);
	if (st == PBD_OK) st = load_rest(&rd, w, name, err);
	if (st == PBD_OK) st = load_vbd(&rd, w, name, err);
	if (st == PBD_OK && h.version >= 7) st = load_pd(&rd, w, name, err);
	if (st == PBD_OK && h.version >= 9) st = load_bodies(&rd, w, name, err);
	if (st == PBD_OK) st = load_sleep(&rd, w, h.version, name, err);
	if (st == PBD_OK && h.version >= 11) st = load_touch(&rd, w, name, err);
	if (st == PBD_OK && h.version >= 12) st = load_kept(&rd, w, name, err);
	if (st == PBD_OK && h.version >= 13) st = load_max_substeps(&rd, w, name, err);
	if (st == PBD_OK) st = check_nodes(w, name, err);
	if (st == PBD_OK && (rd.short_read || rd.pos != rd.size))
		st = pbd_fail_err(err, PBD_ERR_PARSE, "%s: %s", name, rd.short_read ? "truncated" : "trailing bytes");
	if (st != PBD_OK) {
		pbd_world_destroy(w);
		return st;
	}
	w->def.log = log;
	*out = w;
	return PBD_OK;
}

pbd_status pbd_world_load_memory(const void* data, size_t size, const pbd_world_def* hooks, pbd_world** out,
                                 pbd_error* err) {
	if (!out) return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "pbd_world_load_memory: out is NULL");
	*out = NULL;
	if (!data) return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "pbd_world_load_memory: data is NULL");
	return load_named(data, size, hooks, "snapshot", out, err);
}

/* Reads exactly `total` bytes (the header's `got` already in head) into a block grown as they
 * arrive, so that a header announcing more than the file holds costs no more memory than the
 * file; with `exact` false, `total` is only the most that may come and the file ends first. */
static pbd_status read_body(FILE* f, const char* path, pbd_alloc_ctx* mem, const uint8_t* head, size_t got,
                            uint64_t total, bool exact, uint8_t** out, size_t* out_size, size_t* out_cap,
                            pbd_error* err) {
	size_t cap = (size_t)(total < ((uint64_t)1 << 20) ? total : ((uint64_t)1 << 20));
	if (cap < got) cap = got; /* > 0: the header was read */
	uint8_t* buf = (uint8_t*)pbd_alloc(mem, cap);
	if (!buf) return pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
	memcpy(buf, head, got);
	size_t size = got;
	pbd_status st = PBD_OK;
	while (size < total) {
		if (size == cap) {
			const size_t bigger = (uint64_t)cap * 2 < total ? cap * 2 : (size_t)total;
			uint8_t* grown = (uint8_t*)pbd_alloc(mem, bigger);
			if (!grown) {
				st = pbd_fail_err(err, PBD_ERR_OUT_OF_MEMORY, "%s: out of memory (%zu bytes)", path, bigger);
				break;
			}
			memcpy(grown, buf, size);
			pbd_free(mem, buf, cap);
			buf = grown;
			cap = bigger;
		}
		const size_t want = (uint64_t)(cap - size) < total - size ? cap - size : (size_t)(total - size);
		const size_t n = fread(buf + size, 1, want, f);
		size += n;
		if (n == 0) break;
	}
	if (st == PBD_OK && ferror(f)) st = pbd_fail_err(err, PBD_ERR_IO, "%s: read error", path);
	if (st == PBD_OK && exact && size < total)
		st = pbd_fail_err(err, PBD_ERR_PARSE, "%s: truncated: %zu bytes, the header says %llu", path, size,
		                  (unsigned long long)total);
	if (st == PBD_OK && size == total && fgetc(f) != EOF)
		st = exact ? pbd_fail_err(err, PBD_ERR_PARSE, "%s: trailing bytes past the %llu the header says", path,
		                          (unsigned long long)total)
		           : pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE, "%s: larger than the %llu bytes a snapshot may have", path,
		                          (unsigned long long)total);
	*out = buf;
	*out_size = size;
	*out_cap = cap;
	return st;
}

pbd_status pbd_world_load(const char* path, const pbd_world_def* hooks, pbd_world** out, pbd_error* err) {
	if (!out) return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "pbd_world_load: out is NULL");
	*out = NULL;
	if (!path) return pbd_fail_err(err, PBD_ERR_INVALID_ARGUMENT, "pbd_world_load: path is NULL");
	if (hooks && hooks->cookie != PBD_COOKIE)
		return pbd_fail_err(err, PBD_ERR_UNINITIALIZED_DEF, "pbd_world_load: def not made by pbd_world_def_default()");
	FILE* f = NULL;
	uint64_t file_size = 0; /* 0 where the platform does not tell */
	pbd_status st = pbd_file_open_regular(path, &f, &file_size, err);
	if (st != PBD_OK) return st;
	/* The header first: a file that is no snapshot of this build is refused after 28 bytes. */
	uint8_t head[SNAP_HEADER];
	const size_t got = fread(head, 1, sizeof head, f);
	reader hr = {head, got, 0, false};
	snap_header h = {0, 0};
	if (ferror(f))
		st = pbd_fail_err(err, PBD_ERR_IO, "%s: read error", path);
	else
		st = read_header(&hr, path, &h, err);
	/* Then exactly what it announces (before version 8, what the file holds), within the cap. */
	const uint64_t limit = (uint64_t)SIZE_MAX < PBD_SNAPSHOT_MAX_BYTES ? (uint64_t)SIZE_MAX : PBD_SNAPSHOT_MAX_BYTES;
	const bool exact = h.version >= 8 || file_size > 0;
	const uint64_t total = h.version >= 8 ? h.size : (file_size > 0 ? file_size : limit);
	if (st == PBD_OK && exact && total > limit)
		st = pbd_fail_err(err, PBD_ERR_OUT_OF_RANGE,
		                  "%s: a snapshot of %llu bytes, more than the %llu this library reads", path,
		                  (unsigned long long)total, (unsigned long long)limit);
	if (st == PBD_OK && h.version >= 8 && file_size > 0 && file_size != total)
		st = pbd_fail_err(err, PBD_ERR_PARSE, "%s: %s: the file holds %llu bytes, the header says %llu", path,
		                  file_size < total ? "truncated" : "trailing bytes", (unsigned long long)file_size,
		                  (unsigned long long)total);
	pbd_alloc_ctx mem;
	pbd_alloc_init(&mem, hooks ? &hooks->allocator : NULL);
	uint8_t* buf = NULL;
	size_t size = 0, cap = 0;
	if (st == PBD_OK) st = read_body(f, path, &mem, head, got, total, exact, &buf, &size, &cap, err);
	fclose(f);
	if (st == PBD_OK) st = load_named(buf, size, hooks, path, out, err);
	if (buf) pbd_free(&mem, buf, cap);
	return st;
}
