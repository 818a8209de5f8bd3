/* Particle storage (structure of arrays) and the per-particle parts of a step: prediction,
 * velocity update, health check. */
#include <string.h>

#include "model/forces.h"
#ifdef PBD_HAVE_AVX2
#include "model/particles_simd.h"
#endif

pbd_status pbd_particles_reserve(pbd_world* w, uint32_t capacity) {
	if (capacity <= w->cap_p) return pbd_nodes_reserve(w);
	const pbd_grow_item items[] = {
	    {(void**)&w->x, sizeof *w->x},
	    {(void**)&w->q, sizeof *w->q},
	    {(void**)&w->x_lo, sizeof *w->x_lo},
	    {(void**)&w->v_lo, sizeof *w->v_lo},
	    {(void**)&w->v, sizeof *w->v},
	    {(void**)&w->x_step, sizeof *w->x_step},
	    {(void**)&w->force, sizeof *w->force},
	    {(void**)&w->target, sizeof *w->target},
	    {(void**)&w->from, sizeof *w->from},
	    {(void**)&w->w, sizeof *w->w},
	    {(void**)&w->w_free, sizeof *w->w_free},
	    {(void**)&w->flags, sizeof *w->flags},
	    {(void**)&w->cmask, sizeof *w->cmask},
	    {(void**)&w->radius, sizeof *w->radius},
	    {(void**)&w->cgroup, sizeof *w->cgroup},
	    {(void**)&w->x_rest, sizeof *w->x_rest},
	    {(void**)&w->dx, sizeof *w->dx},
	    {(void**)&w->q_prev, sizeof *w->q_prev},
	    {(void**)&w->q_iter, sizeof *w->q_iter},
	    {(void**)&w->drag, sizeof *w->drag},
	    {(void**)&w->drag_wind, sizeof *w->drag_wind},
	    {(void**)&w->air_force, sizeof *w->air_force},
	    {(void**)&w->air_drag, sizeof *w->air_drag},
	};
	const pbd_grow_item per_block[] = {
	    {(void**)&w->block_count, sizeof *w->block_count},
	    {(void**)&w->block_index, sizeof *w->block_index},
	    {(void**)&w->block_first, sizeof *w->block_first},
	};
	const uint32_t blocks = pbd_blocks(capacity, PBD_BLOCK_PARTICLES_MIN);
	if (blocks > w->cap_block) {
		if (!pbd_grow_all(&w->mem, per_block, 3, w->cap_block, blocks)) return PBD_ERR_OUT_OF_MEMORY;
		w->cap_block = blocks;
	}
	/* One spare element past the capacity, zeroed, in every array: vector kernels load a pbd_vec3
	 * as 4 floats (simd/distance_avx2.c), and the last particle's 4th float must be in bounds. */
	if (!pbd_grow_all(&w->mem, items, (int)(sizeof items / sizeof items[0]), pbd_particles_allocated(w->cap_p),
	                  pbd_particles_allocated(capacity)))
		return PBD_ERR_OUT_OF_MEMORY;
	w->cap_p = capacity;
	const pbd_status st = pbd_nodes_reserve(w);
	return st != PBD_OK ? st : pbd_stats_reserve(w);
}

pbd_status pbd_world_add_particles(pbd_world* w, uint32_t count, const pbd_vec3* positions, const pbd_vec3* velocities,
                                   const pbd_real* inv_masses, uint32_t* first) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	if (count == 0) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_world_add_particles: count is 0");
	if (!positions || !inv_masses)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_world_add_particles: positions and inv_masses are required");
	if (count > UINT32_MAX - 1 - w->np)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_world_add_particles: too many particles");
	for (uint32_t i = 0; i < count; ++i) {
		if (!pbd_v3_is_finite(positions[i]))
			return pbd_fail(w, PBD_ERR_NOT_FINITE, "pbd_world_add_particles: position %u is not finite", i);
		if (velocities && !pbd_v3_is_finite(velocities[i]))
			return pbd_fail(w, PBD_ERR_NOT_FINITE, "pbd_world_add_particles: velocity %u is not finite", i);
		if (!pbd_inv_mass_ok(inv_masses[i]))
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
			                "pbd_world_add_particles: inverse mass %u must be 0 or in [%g, %g] (got %.9g)", i,
			                PBD_INV_MASS_MIN, PBD_INV_MASS_MAX, (double)inv_masses[i]);
	}
	uint32_t need = w->np + count;
	if (need > w->cap_p) {
		uint32_t cap = w->cap_p ? w->cap_p : 64;
		while (cap < need) cap = cap > UINT32_MAX / 2 ? need : cap * 2;
		if (pbd_particles_reserve(w, cap) != PBD_OK)
			return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_add_particles: out of memory");
	}
	/* the node arrays may have failed to grow after the particles' did (out of memory) */
	if (pbd_nodes_reserve(w) != PBD_OK)
		return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_add_particles: out of memory");
	uint32_t base = w->np;
	for (uint32_t i = 0; i < count; ++i) {
		uint32_t k = base + i;
		w->x[k] = positions[i];
		w->x_lo[k] = pbd_v3(0, 0, 0);
		w->q[k] = pbd_v3(0, 0, 0);
		w->x_step[k] = positions[i];
		w->v[k] = velocities ? velocities[i] : pbd_v3(0, 0, 0);
		w->v_lo[k] = pbd_v3(0, 0, 0);
		w->force[k] = pbd_v3(0, 0, 0);
		w->w[k] = inv_masses[i];
		/* A particle created pinned gets unit inverse mass if it is ever unpinned. */
		w->w_free[k] = inv_masses[i] > 0 ? inv_masses[i] : 1;
		w->flags[k] = inv_masses[i] > 0 ? 0 : PBD_PARTICLE_PINNED;
		w->cmask[k] = UINT32_MAX;
		w->radius[k] = 0;
		w->cgroup[k] = 0;
		w->x_rest[k] = positions[i];
		if (inv_masses[i] == 0) w->v[k] = pbd_v3(0, 0, 0);
		w->degree[k] = 0;
		/* Slots past np never count in n_drag, so a slot taken back from a half-added object is
		 * simply overwritten. */
		w->drag[k] = 0;
		w->drag_wind[k] = pbd_v3(0, 0, 0);
	}
	w->np += count;
	/* The bodies' nodes follow the particles (node.h): they moved, so the colouring is redone. */
	if (w->bodies.n) w->partitioned = false;
	w->stats_valid = false;
	if (first) *first = base;
	return PBD_OK;
}

pbd_status pbd_world_add_particles_mass(pbd_world* w, uint32_t count, const pbd_vec3* positions,
                                        const pbd_vec3* velocities, const pbd_real* masses, uint32_t* first) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	if (count == 0) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_world_add_particles_mass: count is 0");
	if (!masses) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_world_add_particles_mass: masses is NULL");
	for (uint32_t i = 0; i < count; ++i) {
		/* Compared before dividing, so that no mass can overflow 1/m. */
		if (!pbd_is_finite(masses[i]) ||
		    !(masses[i] >= (pbd_real)(1 / PBD_INV_MASS_MAX) && masses[i] <= (pbd_real)(1 / PBD_INV_MASS_MIN)))
			return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
			                "pbd_world_add_particles_mass: mass %u must be in [%g, %g] kg (got %.9g)", i,
			                1 / PBD_INV_MASS_MAX, 1 / PBD_INV_MASS_MIN, (double)masses[i]);
	}
	pbd_real* inv = (pbd_real*)pbd_alloc(&w->mem, count * sizeof *inv);
	if (!inv) return pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_world_add_particles_mass: out of memory");
	for (uint32_t i = 0; i < count; ++i) inv[i] = 1 / masses[i];
	pbd_status st = pbd_world_add_particles(w, count, positions, velocities, inv, first);
	pbd_free(&w->mem, inv, count * sizeof *inv);
	return st;
}

uint32_t pbd_world_particle_count(const pbd_world* w) { return w ? w->np : 0; }

double pbd_world_time(const pbd_world* w) { return w ? w->time : 0; }

pbd_status pbd_particles_set_collision_mask(pbd_world* w, uint32_t first, uint32_t count, uint32_t mask) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	if (first > w->np || count > w->np - first)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "pbd_particles_set_collision_mask: range [%u, %u + %u) exceeds the %u particles", first, first,
		                count, w->np);
	for (uint32_t k = 0; k < count; ++k) w->cmask[first + k] = mask;
	w->stats_valid = false;
	return PBD_OK;
}
const pbd_vec3* pbd_world_positions(const pbd_world* w) { return w ? w->x : NULL; }
const pbd_vec3* pbd_world_velocities(const pbd_world* w) { return w ? w->v : NULL; }
const pbd_real* pbd_world_inv_masses(const pbd_world* w) { return w ? w->w : NULL; }

static pbd_status check_range(const pbd_world* w, uint32_t first, uint32_t count, const void* buf, const char* fn) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	if (!buf) return pbd_fail((pbd_world*)w, PBD_ERR_INVALID_ARGUMENT, "%s: buffer is NULL", fn);
	if (first > w->np || count > w->np - first)
		return pbd_fail((pbd_world*)w, PBD_ERR_OUT_OF_RANGE, "%s: range [%u, %u) exceeds the %u particles", fn, first,
		                first + count, w->np);
	return PBD_OK;
}

pbd_status pbd_world_get_positions(const pbd_world* w, uint32_t first, uint32_t count, pbd_vec3* out) {
	pbd_status st = check_range(w, first, count, out, "pbd_world_get_positions");
	if (st == PBD_OK && count) memcpy(out, w->x + first, count * sizeof *out);
	return st;
}

pbd_status pbd_world_get_velocities(const pbd_world* w, uint32_t first, uint32_t count, pbd_vec3* out) {
	pbd_status st = check_range(w, first, count, out, "pbd_world_get_velocities");
	if (st == PBD_OK && count) memcpy(out, w->v + first, count * sizeof *out);
	return st;
}

static pbd_status check_finite_array(pbd_world* w, uint32_t count, const pbd_vec3* in, const char* fn) {
	for (uint32_t i = 0; i < count; ++i)
		if (!pbd_v3_is_finite(in[i])) return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: element %u is not finite", fn, i);
	return PBD_OK;
}

pbd_status pbd_world_set_positions(pbd_world* w, uint32_t first, uint32_t count, const pbd_vec3* in) {
	pbd_status st = check_range(w, first, count, in, "pbd_world_set_positions");
	if (st == PBD_OK) st = check_finite_array(w, count, in, "pbd_world_set_positions");
	if (st != PBD_OK) return st;
	for (uint32_t i = 0; i < count; ++i) {
		w->x[first + i] = in[i];
		w->x_lo[first + i] = pbd_v3(0, 0, 0);
	}
	w->stats_valid = false;
	return PBD_OK;
}

pbd_status pbd_world_set_velocities(pbd_world* w, uint32_t first, uint32_t count, const pbd_vec3* in) {
	pbd_status st = check_range(w, first, count, in, "pbd_world_set_velocities");
	if (st == PBD_OK) st = check_finite_array(w, count, in, "pbd_world_set_velocities");
	if (st != PBD_OK) return st;
	/* Pinned particles have no velocity of their own: they move only by targets. */
	for (uint32_t i = 0; i < count; ++i) {
		w->v[first + i] = w->w[first + i] > 0 ? in[i] : pbd_v3(0, 0, 0);
		w->v_lo[first + i] = pbd_v3(0, 0, 0);
	}
	w->stats_valid = false;
	return PBD_OK;
}

pbd_status pbd_check_particle(pbd_world* w, uint32_t index, const char* fn) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	if (index >= w->np)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: particle %u out of range (%u particles)", fn, index, w->np);
	return PBD_OK;
}

/* Inverse masses are 0 or within [PBD_INV_MASS_MIN, PBD_INV_MASS_MAX]: with a subnormal or tiny
 * one, the projection's (w_a + w_b) |d| would underflow to 0 and its quotient overflow. */
bool pbd_inv_mass_ok(pbd_real inv_mass) {
	if (!pbd_is_finite(inv_mass)) return false;
	return inv_mass == 0 || (inv_mass >= (pbd_real)PBD_INV_MASS_MIN && inv_mass <= (pbd_real)PBD_INV_MASS_MAX);
}

pbd_status pbd_particle_set_inv_mass(pbd_world* w, uint32_t index, pbd_real inv_mass) {
	pbd_status st = pbd_check_particle(w, index, "pbd_particle_set_inv_mass");
	if (st != PBD_OK) return st;
	if (!(inv_mass > 0) || !pbd_inv_mass_ok(inv_mass))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "pbd_particle_set_inv_mass: must be in [%g, %g] (got %.9g)",
		                PBD_INV_MASS_MIN, PBD_INV_MASS_MAX, (double)inv_mass);
	w->w_free[index] = inv_mass;
	/* Families derive data from inverse masses; the hierarchy's coarse masses are aggregated from them. */
	if (!(w->flags[index] & PBD_PARTICLE_PINNED)) {
		w->w[index] = inv_mass;
		w->masses_changed = true;
	}
	pbd_families_touch_all(w);
	return PBD_OK;
}

pbd_status pbd_particle_pin(pbd_world* w, uint32_t index) {
	pbd_status st = pbd_check_particle(w, index, "pbd_particle_pin");
	if (st != PBD_OK) return st;
	/* Pins are coarse particles at every level of the hierarchy. */
	if (!(w->flags[index] & PBD_PARTICLE_PINNED)) {
		w->w_free[index] = w->w[index];
		w->masses_changed = true;
	}
	w->flags[index] = (uint8_t)(w->flags[index] | PBD_PARTICLE_PINNED);
	w->w[index] = 0;
	w->v[index] = pbd_v3(0, 0, 0);
	w->v_lo[index] = pbd_v3(0, 0, 0);
	w->x_lo[index] = pbd_v3(0, 0, 0); /* a pinned particle is exactly at x */
	pbd_families_touch_all(w);
	return PBD_OK;
}

pbd_status pbd_particle_unpin(pbd_world* w, uint32_t index) {
	pbd_status st = pbd_check_particle(w, index, "pbd_particle_unpin");
	if (st != PBD_OK) return st;
	if (w->flags[index] & PBD_PARTICLE_PINNED) {
		w->flags[index] = (uint8_t)(w->flags[index] & ~(PBD_PARTICLE_PINNED | PBD_PARTICLE_TARGET));
		w->w[index] = w->w_free[index];
		w->masses_changed = true;
	}
	pbd_families_touch_all(w);
	return PBD_OK;
}

bool pbd_particle_is_pinned(const pbd_world* w, uint32_t index) {
	return w && index < w->np && (w->flags[index] & PBD_PARTICLE_PINNED) != 0;
}

pbd_status pbd_check_kinematic_move(pbd_world* w, const char* fn, const char* field, pbd_vec3 from, pbd_vec3 to) {
	/* In double, where neither the difference nor the bound times dt can overflow. */
	const double limit = PBD_MAX_KINEMATIC_SPEED * (double)w->def.dt;
	const double d[3] = {(double)to.x - (double)from.x, (double)to.y - (double)from.y, (double)to.z - (double)from.z};
	if (fabs(d[0]) <= limit && fabs(d[1]) <= limit && fabs(d[2]) <= limit) return PBD_OK;
	const double inv_dt = 1 / (double)w->def.dt;
	return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
	                "%s: %s moves at (%.9g, %.9g, %.9g) m/s over the step of %.9g s; each component must be within "
	                "+-%g m/s",
	                fn, field, d[0] * inv_dt, d[1] * inv_dt, d[2] * inv_dt, (double)w->def.dt, PBD_MAX_KINEMATIC_SPEED);
}

pbd_status pbd_particle_set_target(pbd_world* w, uint32_t index, pbd_vec3 target) {
	pbd_status st = pbd_check_particle(w, index, "pbd_particle_set_target");
	if (st != PBD_OK) return st;
	if (!(w->flags[index] & PBD_PARTICLE_PINNED))
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_particle_set_target: particle %u is not pinned", index);
	if (!pbd_v3_is_finite(target))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "pbd_particle_set_target: target is not finite");
	st = pbd_check_kinematic_move(w, "pbd_particle_set_target", "target", w->x[index], target);
	if (st != PBD_OK) return st;
	w->target[index] = target;
	w->flags[index] = (uint8_t)(w->flags[index] | PBD_PARTICLE_TARGET);
	return PBD_OK;
}

pbd_status pbd_particle_set_force(pbd_world* w, uint32_t index, pbd_vec3 force) {
	pbd_status st = pbd_check_particle(w, index, "pbd_particle_set_force");
	if (st != PBD_OK) return st;
	if (!pbd_v3_is_finite(force)) return pbd_fail(w, PBD_ERR_NOT_FINITE, "pbd_particle_set_force: force is not finite");
	w->force[index] = force;
	bool nonzero = force.x != 0 || force.y != 0 || force.z != 0;
	w->flags[index] =
	    (uint8_t)(nonzero ? (w->flags[index] | PBD_PARTICLE_FORCE) : (w->flags[index] & ~PBD_PARTICLE_FORCE));
	return PBD_OK;
}

static void begin_block(void* p, uint32_t block, uint32_t worker) {
	(void)worker;
	pbd_world* w = (pbd_world*)p;
	const uint32_t first = block * w->exec.block_particles, end = pbd_block_end(first, w->np, w->exec.block_particles);
	memcpy(w->x_step + first, w->x + first, (size_t)(end - first) * sizeof *w->x);
	for (uint32_t i = first; i < end;) {
		uint32_t stop = end;
#ifdef PBD_HAVE_AVX2
		if (w->simd_lanes) {
			i = pbd_particles_begin_avx2(w, i, end);
			stop = pbd_block_end(i, end, 32);
		}
#endif
		for (; i < stop; ++i)
			if (w->flags[i] & PBD_PARTICLE_TARGET) w->from[i] = w->x[i];
	}
}

void pbd_particles_begin_step(pbd_world* w) {
	if (w->np == 0) return; /* the arrays may not exist yet */
	pbd_exec_stage(&w->exec, begin_block, w, pbd_blocks(w->np, w->exec.block_particles));
}

/* x + q as a rounded sum and its exact remainder (Knuth's TwoSum, one component): the pair
 * keeps every bit of the position however small q is next to x. Needs IEEE arithmetic without
 * contraction or reassociation, which the build guarantees (-ffp-contract=off, no fast-math). */
static inline pbd_real two_sum(pbd_real a, pbd_real b, pbd_real* err) {
	const pbd_real s = a + b;
	const pbd_real bb = s - a;
	*err = (a - (s - bb)) + (b - bb);
	return s;
}

/* (hi, lo) <- hi + (lo + inc), componentwise: a compensated accumulation. */
static inline void add_compensated(pbd_vec3* hi, pbd_vec3* lo, pbd_vec3 inc) {
	const pbd_vec3 b = pbd_v3_add(*lo, inc);
	pbd_vec3 e;
	*hi = pbd_v3(two_sum(hi->x, b.x, &e.x), two_sum(hi->y, b.y, &e.y), two_sum(hi->z, b.z, &e.z));
	*lo = e;
}

void pbd_particle_add_velocity(pbd_world* w, uint32_t index, pbd_vec3 dv) {
	if (!(w->w[index] > 0)) return;
	add_compensated(&w->v[index], &w->v_lo[index], dv);
	w->stats_valid = false;
}

/* Forces, damping and prediction for one substep of length h: v gains its forces and q, the
 * displacement the solver will move, starts at x_lo + v h. `alpha_substep` is the fraction of
 * the step reached at the end of this substep, for kinematic targets.
 *
 * Damping multiplies the velocity the particle brought into the substep, before forces act
 * (v <- d v + h F/m), so a body at rest feels its full weight and equilibria do not depend on
 * the damping. PBD_DAMPING_AFTER_FORCES damps the sum instead, as Games103 lab 2 does. */
typedef struct predict_stage {
	pbd_world* w;
	pbd_real h, damping, alpha_substep;
} predict_stage;

static void predict_range(const predict_stage* s, uint32_t first, uint32_t end) {
	pbd_world* w = s->w;
	const pbd_real h = s->h, damping = s->damping, alpha_substep = s->alpha_substep;
	const pbd_vec3 gh = pbd_v3_scale(w->def.gravity, h);
	const bool after_forces = w->def.damping_mode == PBD_DAMPING_AFTER_FORCES;
	const pbd_vec3* restrict x = w->x;
	const pbd_vec3* restrict lo = w->x_lo;
	pbd_vec3* restrict q = w->q;
	pbd_vec3* restrict v = w->v;
	pbd_vec3* restrict vlo = w->v_lo;
	const pbd_real* restrict iw = w->w;
	const uint8_t* restrict flags = w->flags;
	const pbd_vec3* restrict air = w->air_on ? w->air_force : NULL;
	const pbd_sym3* restrict air_drag = w->air_drag;
	for (uint32_t i = first; i < end; ++i) {
		if (iw[i] > 0) {
			pbd_vec3 vi = v[i], vl = vlo[i];
			if (damping != 1 && !after_forces) {
				vi = pbd_v3_scale(vi, damping);
				vl = pbd_v3_scale(vl, damping);
			}
			pbd_vec3 dv = gh;
			if (flags[i] & PBD_PARTICLE_FORCE) dv = pbd_v3_add(dv, pbd_v3_scale(w->force[i], h * iw[i]));
			if (air) dv = pbd_forces_kick(&air_drag[i], h * iw[i], pbd_v3_add(dv, pbd_v3_scale(air[i], h * iw[i])));
			add_compensated(&vi, &vl, dv);
			if (damping != 1 && after_forces) {
				vi = pbd_v3_scale(vi, damping);
				vl = pbd_v3_scale(vl, damping);
			}
			v[i] = vi;
			vlo[i] = vl;
			q[i] = pbd_v3_add(lo[i], pbd_v3_scale(vi, h));
		} else if (flags[i] & PBD_PARTICLE_TARGET) {
			/* The last substep lands on the target exactly, not on a rounded interpolation. */
			const pbd_vec3 from = w->from[i];
			const pbd_vec3 at = alpha_substep >= 1
			                        ? w->target[i]
			                        : pbd_v3_add(from, pbd_v3_scale(pbd_v3_sub(w->target[i], from), alpha_substep));
			q[i] = pbd_v3_sub(at, x[i]);
		} else {
			q[i] = pbd_v3(0, 0, 0);
		}
	}
}

/* The lanes take the groups of 8 that need none of the scalar code's branches; each other group,
 * and the last few particles, go to predict_range (simd/particles_avx2.h). */
static void predict_block(void* p, uint32_t block, uint32_t worker) {
	(void)worker;
	const predict_stage* s = (const predict_stage*)p;
	pbd_world* w = s->w;
	const uint32_t first = block * w->exec.block_particles, end = pbd_block_end(first, w->np, w->exec.block_particles);
#ifdef PBD_HAVE_AVX2
	if (w->simd_lanes && !w->air_on) {
		for (uint32_t i = first; i < end;) {
			i = pbd_particles_predict_avx2(w, s->h, s->damping, i, end);
			const uint32_t stop = pbd_block_end(i, end, 8);
			predict_range(s, i, stop);
			i = stop;
		}
		return;
	}
#endif
	predict_range(s, first, end);
}

void pbd_particles_predict(pbd_world* w, pbd_real h, pbd_real damping, pbd_real alpha_substep) {
	predict_stage s = {w, h, damping, alpha_substep};
	pbd_exec_stage(&w->exec, predict_block, &s, pbd_blocks(w->np, w->exec.block_particles));
}

/* Velocities from the solved displacement, then commit it to the positions. The velocity is
 * the predicted one plus the constraints' correction over h, which equals (p - x) / h but is
 * formed from small numbers only: x_lo + v h is recomputed exactly as predict formed it, so a
 * free particle keeps its predicted velocity to the bit. Pinned particles are never written;
 * targeted ones land on their target. A clamped speed is counted
 * per block, and the blocks' counts are added in block order after the stage. */
typedef struct velocity_stage {
	pbd_world* w;
	pbd_real h;
	bool last_substep;
	uint32_t* clamped; /* per block */
	uint32_t* last;
} velocity_stage;

/* Particles [first, end) of a block; adds to the block's clamp count and sets its last clamped. */
static void velocity_range(const velocity_stage* s, uint32_t first, uint32_t end, uint32_t* clamped_io,
                           uint32_t* last_io) {
	pbd_world* w = s->w;
	const pbd_real h = s->h;
	const bool last_substep = s->last_substep;
	const pbd_real inv_h = 1 / h;
	const pbd_real max_speed = w->def.max_speed;
	pbd_vec3* restrict x = w->x;
	pbd_vec3* restrict lo = w->x_lo;
	const pbd_vec3* restrict q = w->q;
	pbd_vec3* restrict v = w->v;
	pbd_vec3* restrict vlo = w->v_lo;
	const pbd_real* restrict iw = w->w;
	const uint8_t* restrict flags = w->flags;
	uint32_t clamped = *clamped_io, last = *last_io;
	for (uint32_t i = first; i < end; ++i) {
		if (iw[i] > 0) {
			const pbd_vec3 q0 = pbd_v3_add(lo[i], pbd_v3_scale(v[i], h));
			const pbd_vec3 dq = pbd_v3_sub(q[i], q0);
			pbd_vec3 vi = v[i], vl = vlo[i];
			if (dq.x != 0 || dq.y != 0 || dq.z != 0) add_compensated(&vi, &vl, pbd_v3_scale(dq, inv_h));
			if (max_speed > 0) {
				/* In double: a float speed past 1.8e19 m/s would square to inf and clamp to 0. */
				const double s2 =
				    (double)vi.x * (double)vi.x + (double)vi.y * (double)vi.y + (double)vi.z * (double)vi.z;
				if (s2 > (double)max_speed * (double)max_speed) {
					vi = pbd_v3_scale(vi, (pbd_real)((double)max_speed / sqrt(s2)));
					vl = pbd_v3(0, 0, 0);
					clamped++;
					last = i;
				}
			}
			v[i] = vi;
			vlo[i] = vl;
			pbd_vec3 e;
			x[i] = pbd_v3(two_sum(x[i].x, q[i].x, &e.x), two_sum(x[i].y, q[i].y, &e.y), two_sum(x[i].z, q[i].z, &e.z));
			lo[i] = e;
		} else if (flags[i] & PBD_PARTICLE_TARGET) {
			v[i] = pbd_v3_scale(q[i], inv_h);
			vlo[i] = pbd_v3(0, 0, 0);
			x[i] = (last_substep) ? w->target[i] : pbd_v3_add(x[i], q[i]);
			lo[i] = pbd_v3(0, 0, 0);
		} else {
			v[i] = pbd_v3(0, 0, 0);
			vlo[i] = pbd_v3(0, 0, 0);
		}
	}
	*clamped_io = clamped;
	*last_io = last;
}

/* As predict_block: the lanes' groups clamp nothing, so the counts come from velocity_range. */
static void velocity_block(void* p, uint32_t block, uint32_t worker) {
	(void)worker;
	const velocity_stage* s = (const velocity_stage*)p;
	pbd_world* w = s->w;
	const uint32_t first = block * w->exec.block_particles, end = pbd_block_end(first, w->np, w->exec.block_particles);
	uint32_t clamped = 0, last = 0;
#ifdef PBD_HAVE_AVX2
	if (w->simd_lanes) {
		const pbd_real inv_h = 1 / s->h;
		for (uint32_t i = first; i < end;) {
			i = pbd_particles_velocity_avx2(w, s->h, inv_h, i, end);
			const uint32_t stop = pbd_block_end(i, end, 8);
			velocity_range(s, i, stop, &clamped, &last);
			i = stop;
		}
	} else
#endif
		velocity_range(s, first, end, &clamped, &last);
	s->clamped[block] = clamped;
	s->last[block] = last;
}

void pbd_particles_update_velocities(pbd_world* w, pbd_real h, bool last_substep) {
	velocity_stage s = {w, h, last_substep, w->block_count, w->block_index};
	const uint32_t blocks = pbd_blocks(w->np, w->exec.block_particles);
	pbd_exec_stage(&w->exec, velocity_block, &s, blocks);
	pbd_warning_stat* ws = &w->warnings[PBD_WARN_SPEED_CLAMPED];
	for (uint32_t b = 0; b < blocks; ++b) {
		if (!s.clamped[b]) continue;
		ws->count += s.clamped[b];
		ws->last_index = s.last[b];
	}
}

/* Finishes targets and checks health. When any particle's state stopped being finite, the
 * whole step is undone: every particle goes back to where the step started, at rest, since a
 * partial undo would leave its neighbours stretched across the jump (and moving with it).
 * Returns the number of particles that were not finite. */
/* Particles [first, end) of a block: adds to how many are not finite, the first and the last of them. */
static void end_range(pbd_world* w, uint32_t first, uint32_t end, uint32_t* bad_io, uint32_t* lo_io, uint32_t* hi_io) {
	uint32_t bad = *bad_io, lo = *lo_io, hi = *hi_io;
	for (uint32_t i = first; i < end; ++i) {
		w->flags[i] = (uint8_t)(w->flags[i] & ~PBD_PARTICLE_TARGET);
		if (!pbd_v3_is_finite(w->x[i]) || !pbd_v3_is_finite(w->v[i]) || !pbd_v3_is_finite(w->x_lo[i])) {
			if (!bad) lo = i;
			hi = i;
			bad++;
		}
	}
	*bad_io = bad;
	*lo_io = lo;
	*hi_io = hi;
}

/* As predict_block: the lanes' groups are finite, so the counts come from end_range. */
static void end_block(void* p, uint32_t block, uint32_t worker) {
	(void)worker;
	pbd_world* w = (pbd_world*)p;
	const uint32_t first = block * w->exec.block_particles, end = pbd_block_end(first, w->np, w->exec.block_particles);
	uint32_t bad = 0, lo = 0, hi = 0;
#ifdef PBD_HAVE_AVX2
	if (w->simd_lanes) {
		for (uint32_t i = first; i < end;) {
			i = pbd_particles_end_avx2(w, i, end);
			const uint32_t stop = pbd_block_end(i, end, 8);
			end_range(w, i, stop, &bad, &lo, &hi);
			i = stop;
		}
	} else
#endif
		end_range(w, first, end, &bad, &lo, &hi);
	w->block_count[block] = bad;
	w->block_first[block] = lo;
	w->block_index[block] = hi;
}

uint32_t pbd_particles_end_step(pbd_world* w) {
	const uint32_t blocks = pbd_blocks(w->np, w->exec.block_particles);
	pbd_exec_stage(&w->exec, end_block, w, blocks);
	uint32_t bad = 0;
	pbd_warning_stat* ws = &w->warnings[PBD_WARN_NONFINITE];
	for (uint32_t b = 0; b < blocks; ++b) {
		if (!w->block_count[b]) continue;
		if (ws->count == 0)
			pbd_log(w, "pbd_world_step: particle %u became non-finite at step %llu; the step was undone",
			        w->block_first[b], (unsigned long long)w->steps + 1);
		ws->count += w->block_count[b];
		ws->last_index = w->block_index[b];
		bad += w->block_count[b];
	}
	if (bad) {
		for (uint32_t i = 0, n = w->np; i < n; ++i) {
			w->x[i] = w->x_step[i];
			w->x_lo[i] = pbd_v3(0, 0, 0);
			w->v[i] = pbd_v3(0, 0, 0);
			w->v_lo[i] = pbd_v3(0, 0, 0);
		}
	}
	return bad;
}
