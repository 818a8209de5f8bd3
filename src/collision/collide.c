/* Collider storage with generation ids, and the contact stage: kinematic motion, contacts found
 * once per substep, their projection, friction, restitution, and what is published after the
 * step (contacts, trigger events). The shape functions are called through one table, per
 * (collider, nearby particle) pair while contacts are found; the iterations only see planes. */
#include <math.h>
#include <string.h>

#include "collision/collide.h"

static const pbd_shape_ops* const shape_ops[PBD_SHAPE_COUNT] = {
    [PBD_SHAPE_PLANE] = &pbd_shape_plane_ops,
    [PBD_SHAPE_SPHERE] = &pbd_shape_sphere_ops,
    [PBD_SHAPE_CAPSULE] = &pbd_shape_capsule_ops,
    [PBD_SHAPE_BOX] = &pbd_shape_box_ops,
    [PBD_SHAPE_CONVEX] = &pbd_shape_convex_ops,
    [PBD_SHAPE_MESH] = &pbd_shape_mesh_ops,
    [PBD_SHAPE_HEIGHTFIELD] = &pbd_shape_heightfield_ops,
};

const pbd_shape_ops* pbd_shape_ops_of(pbd_shape_type type) { return shape_ops[type]; }

pbd_collider_def pbd_collider_def_default(void) {
	pbd_collider_def d;
	memset(&d, 0, sizeof d);
	d.type = PBD_SHAPE_PLANE;
	d.shape.plane.normal = pbd_v3(0, 1, 0);
	d.shape.plane.offset = 0;
	d.margin = 0;
	d.kind = PBD_ACTOR_STATIC;
	d.pose = pbd_pose_identity();
	d.category = 1;
	d.cookie = PBD_COOKIE;
	return d;
}

static bool v3_is_zero(pbd_vec3 v) { return v.x == 0 && v.y == 0 && v.z == 0; }

/* Normalises the rotation. Scaled by its largest component first, so that neither a huge
 * quaternion overflows nor a tiny one underflows to zero length. */
static pbd_status normalise_rotation(pbd_world* w, const char* fn, pbd_quat* q) {
	const pbd_real m = PBD_FMAX(PBD_FMAX(PBD_FABS(q->x), PBD_FABS(q->y)), PBD_FMAX(PBD_FABS(q->z), PBD_FABS(q->w)));
	if (!(m > 0)) return pbd_fail(w, PBD_ERR_DEGENERATE, "%s: pose.rotation is the zero quaternion", fn);
	pbd_quat s = {q->x / m, q->y / m, q->z / m, q->w / m};
	const pbd_real len = PBD_SQRT(s.x * s.x + s.y * s.y + s.z * s.z + s.w * s.w);
	q->x = s.x / len;
	q->y = s.y / len;
	q->z = s.z / len;
	q->w = s.w / len;
	return PBD_OK;
}

static bool within(pbd_vec3 v, double bound) {
	return PBD_FABS(v.x) <= (pbd_real)bound && PBD_FABS(v.y) <= (pbd_real)bound && PBD_FABS(v.z) <= (pbd_real)bound;
}

pbd_status pbd_check_kinematic_velocity(pbd_world* w, const char* fn, pbd_vec3 velocity, pbd_vec3 angular_velocity) {
	if (!within(velocity, PBD_MAX_KINEMATIC_SPEED))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "%s: velocity (%.9g, %.9g, %.9g) m/s: each component must be within +-%g m/s", fn,
		                (double)velocity.x, (double)velocity.y, (double)velocity.z, PBD_MAX_KINEMATIC_SPEED);
	if (!within(angular_velocity, PBD_MAX_KINEMATIC_ANGULAR_SPEED))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "%s: angular_velocity (%.9g, %.9g, %.9g) rad/s: each component must be within +-%g rad/s", fn,
		                (double)angular_velocity.x, (double)angular_velocity.y, (double)angular_velocity.z,
		                PBD_MAX_KINEMATIC_ANGULAR_SPEED);
	return PBD_OK;
}

/* The actor part of a def: kind, pose, velocities, material, margin. */
static pbd_status check_actor(pbd_world* w, const char* fn, pbd_collider_def* d) {
	if (!pbd_is_finite(d->margin) || d->margin < 0)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: margin must be finite and >= 0 (got %.9g)", fn,
		                (double)d->margin);
	if ((int)d->kind < 0 || d->kind > PBD_ACTOR_KINEMATIC)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "%s: unknown actor kind %d", fn, (int)d->kind);
	if (!pbd_v3_is_finite(d->pose.position) || !pbd_quat_is_finite(d->pose.rotation))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: pose is not finite", fn);
	if (normalise_rotation(w, fn, &d->pose.rotation) != PBD_OK) return PBD_ERR_DEGENERATE;
	if (!pbd_v3_is_finite(d->velocity) || !pbd_v3_is_finite(d->angular_velocity))
		return pbd_fail(w, PBD_ERR_NOT_FINITE, "%s: velocity or angular_velocity is not finite", fn);
	if (d->kind == PBD_ACTOR_STATIC && (!v3_is_zero(d->velocity) || !v3_is_zero(d->angular_velocity)))
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT,
		                "%s: a static collider has no velocity (make it PBD_ACTOR_KINEMATIC to move it)", fn);
	if (pbd_check_kinematic_velocity(w, fn, d->velocity, d->angular_velocity) != PBD_OK) return PBD_ERR_OUT_OF_RANGE;
	if (!pbd_is_finite(d->static_friction) || d->static_friction < 0)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: static_friction must be finite and >= 0 (got %.9g)", fn,
		                (double)d->static_friction);
	if (!pbd_is_finite(d->kinetic_friction) || d->kinetic_friction < 0 || d->kinetic_friction > d->static_friction)
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		                "%s: kinetic_friction must be in [0, static_friction = %.9g] (got %.9g)", fn,
		                (double)d->static_friction, (double)d->kinetic_friction);
	if (!(d->restitution >= 0 && d->restitution <= 1))
		return pbd_fail(w, PBD_ERR_OUT_OF_RANGE, "%s: restitution must be in [0, 1] (got %.9g)", fn,
		                (double)d->restitution);
	return PBD_OK;
}

pbd_collider_id pbd_collider_create(pbd_world* w, const pbd_collider_def* def) {
	pbd_collider_id null_id = {0, 0};
	if (!w) return null_id;
	if (!def) {
		pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_collider_create: def is NULL");
		return null_id;
	}
	if (def->cookie != PBD_COOKIE) {
		pbd_fail(w, PBD_ERR_UNINITIALIZED_DEF, "pbd_collider_create: def not made by pbd_collider_def_default()");
		return null_id;
	}
	if ((int)def->type < 0 || def->type >= PBD_SHAPE_COUNT || !shape_ops[def->type]) {
		pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_collider_create: unknown shape type %d", (int)def->type);
		return null_id;
	}
	pbd_collider_def d = *def;
	if (check_actor(w, "pbd_collider_create", &d) != PBD_OK || shape_ops[d.type]->validate(w, &d) != PBD_OK)
		return null_id;
	uint32_t body = 0;
	pbd_pose local = d.pose;
	if (d.body.index1 != 0) { /* index1 0 is the null id, whatever the generation */
		if (!pbd_body_is_valid(w, d.body)) {
			pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_collider_create: body is a stale id");
			return null_id;
		}
		if (d.kind != PBD_ACTOR_STATIC) {
			pbd_fail(
			    w, PBD_ERR_INVALID_ARGUMENT,
			    "pbd_collider_create: a shape on a body moves with it: kind must stay static, the velocities zero");
			return null_id;
		}
		body = d.body.index1;
	}

	/* Reuse a dead slot so ids stay small; its generation tells old ids apart. */
	uint32_t slot = w->nc;
	for (uint32_t i = 0; i < w->nc; ++i)
		if (!w->colliders[i].alive) {
			slot = i;
			break;
		}
	if (slot == w->nc) {
		if (w->nc == w->cap_c) {
			uint32_t cap = w->cap_c ? w->cap_c * 2 : 8;
			if (!pbd_grow(&w->mem, (void**)&w->colliders, sizeof *w->colliders, w->cap_c, cap)) {
				pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_collider_create: out of memory");
				return null_id;
			}
			w->cap_c = cap;
		}
		w->nc++;
	}
	pbd_collider* c = &w->colliders[slot];
	pbd_free(&w->mem, c->data, c->data_size); /* a dead collider's arrays, kept until its slot is reused */
	c->data = NULL;
	c->data_size = 0;
	c->def = d;
	if (pbd_collider_attach_data(w, c) != PBD_OK) {
		c->alive = false;
		pbd_fail(w, PBD_ERR_OUT_OF_MEMORY, "pbd_collider_create: out of memory for the %s's arrays",
		         shape_ops[d.type]->name);
		return null_id;
	}
	c->body = body;
	c->local = local;
	if (body) pbd_collider_follow(w, c, true);
	/* Shape and pose may each be finite and still put the shape past the scalar's range. */
	pbd_vec3 lo, hi;
	if (pbd_collider_world_box(c, &c->def.pose, 1, c->def.margin, &lo, &hi) &&
	    !(pbd_v3_is_finite(lo) && pbd_v3_is_finite(hi) && lo.x <= hi.x && lo.y <= hi.y && lo.z <= hi.z)) {
		pbd_free(&w->mem, c->data, c->data_size);
		c->data = NULL;
		c->data_size = 0;
		c->body = 0;
		pbd_fail(w, PBD_ERR_OUT_OF_RANGE,
		         "pbd_collider_create: the %s lies past the range of the scalar in the world (its pose and size "
		         "together overflow)",
		         shape_ops[d.type]->name);
		return null_id;
	}
	c->pose0 = c->def.pose;
	c->alive = true;
	c->generation++;
	w->stats_valid = false;
	pbd_rigid_contacts_forget(w);
	pbd_collider_id id = {slot + 1, c->generation};
	return id;
}

static pbd_collider* lookup(const pbd_world* w, pbd_collider_id id) {
	if (!w || id.index1 == 0 || id.index1 > w->nc) return NULL;
	pbd_collider* c = &w->colliders[id.index1 - 1];
	return (c->alive && c->generation == id.generation) ? c : NULL;
}

bool pbd_collider_is_valid(const pbd_world* w, pbd_collider_id id) { return lookup(w, id) != NULL; }

pbd_status pbd_collider_destroy(pbd_world* w, pbd_collider_id id) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_collider* c = lookup(w, id);
	if (!c) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_collider_destroy: stale or null collider id");
	c->alive = false;
	w->stats_valid = false;
	pbd_rigid_contacts_forget(w);
	return PBD_OK;
}

pbd_status pbd_collider_get_def(const pbd_world* w, pbd_collider_id id, pbd_collider_def* out) {
	if (!w || !out) return PBD_ERR_INVALID_ARGUMENT;
	pbd_collider* c = lookup(w, id);
	if (!c) return pbd_fail((pbd_world*)w, PBD_ERR_INVALID_ARGUMENT, "pbd_collider_get_def: stale or null collider id");
	*out = c->def;
	if (c->body) {
		out->pose = c->local;
		out->kind = PBD_ACTOR_STATIC;
		out->velocity = out->angular_velocity = pbd_v3(0, 0, 0);
	}
	return PBD_OK;
}

pbd_status pbd_collider_get_pose(const pbd_world* w, pbd_collider_id id, pbd_pose* out) {
	if (!w || !out) return PBD_ERR_INVALID_ARGUMENT;
	const pbd_collider* c = lookup(w, id);
	if (!c)
		return pbd_fail((pbd_world*)w, PBD_ERR_INVALID_ARGUMENT, "pbd_collider_get_pose: stale or null collider id");
	*out = c->def.pose;
	return PBD_OK;
}

uint32_t pbd_world_collider_count(const pbd_world* w) {
	uint32_t live = 0;
	if (!w) return 0;
	for (uint32_t i = 0; i < w->nc; ++i) live += w->colliders[i].alive ? 1u : 0u;
	return live;
}

/* ---- moving colliders --------------------------------------------------------------------- */

void pbd_colliders_follow_bodies(pbd_world* w) {
	if (!w->bodies.alive) return;
	for (uint32_t k = 0; k < w->nc; ++k)
		if (w->colliders[k].alive && w->colliders[k].body) pbd_collider_follow(w, &w->colliders[k], false);
}

/* A shape on a body takes the body's frame composed with its own pose, and as velocities those
 * of the body at the shape's origin, v + w x (origin - centre), and w: the contact stage reads
 * them as it reads a kinematic collider's. With `jump`, the start of the substep moves too (a
 * creation or a teleport: nothing swept). */
void pbd_collider_follow(pbd_world* w, pbd_collider* c, bool jump) {
	const uint32_t i = c->body - 1;
	const pbd_bodies* b = &w->bodies;
	const pbd_pose frame = pbd_body_frame(w, i);
	pbd_pose p;
	p.position = pbd_pose_apply(frame, c->local.position);
	p.rotation = pbd_quat_mul(frame.rotation, c->local.rotation);
	c->def.pose = p;
	c->def.kind = PBD_ACTOR_KINEMATIC;
	const pbd_vec3 arm = pbd_v3_sub(p.position, pbd_body_centre(b, i));
	c->def.velocity = pbd_v3_add(b->v[i], pbd_v3_cross(b->omega[i], arm));
	c->def.angular_velocity = b->omega[i];
	if (jump) c->pose0 = p;
}

pbd_status pbd_collider_set_pose(pbd_world* w, pbd_collider_id id, pbd_pose pose) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_collider* c = lookup(w, id);
	if (!c) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_collider_set_pose: stale or null collider id");
	if (c->body)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT,
		                "pbd_collider_set_pose: the collider rides on body %u: move the body", c->body);
	pbd_collider_def d = c->def;
	d.pose = pose;
	const pbd_status st = check_actor(w, "pbd_collider_set_pose", &d);
	if (st != PBD_OK) return st;
	/* A teleport: nothing is swept along the jump. */
	c->def.pose = d.pose;
	c->pose0 = d.pose;
	w->stats_valid = false;
	return PBD_OK;
}

pbd_status pbd_collider_set_velocity(pbd_world* w, pbd_collider_id id, pbd_vec3 velocity, pbd_vec3 angular_velocity) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_collider* c = lookup(w, id);
	if (!c) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_collider_set_velocity: stale or null collider id");
	if (c->body)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT,
		                "pbd_collider_set_velocity: the collider rides on body %u: move the body", c->body);
	pbd_collider_def d = c->def;
	d.velocity = velocity;
	d.angular_velocity = angular_velocity;
	const pbd_status st = check_actor(w, "pbd_collider_set_velocity", &d);
	if (st != PBD_OK) return st;
	c->def.velocity = d.velocity;
	c->def.angular_velocity = d.angular_velocity;
	return PBD_OK;
}

/* The velocities that carry the current pose to `target` in one step of dt: the translation
 * over dt, and the rotation q_t q^-1 (the shorter way round) as an axis times its angle over
 * dt. The substeps integrate them exactly (contact.c), so the pose arrives to within rounding. */
pbd_status pbd_collider_move_to(pbd_world* w, pbd_collider_id id, pbd_pose target) {
	if (!w) return PBD_ERR_INVALID_ARGUMENT;
	pbd_collider* c = lookup(w, id);
	if (!c) return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_collider_move_to: stale or null collider id");
	if (c->body)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT,
		                "pbd_collider_move_to: the collider rides on body %u: move the body", c->body);
	if (c->def.kind != PBD_ACTOR_KINEMATIC)
		return pbd_fail(w, PBD_ERR_INVALID_ARGUMENT, "pbd_collider_move_to: the collider is not kinematic");
	pbd_collider_def d = c->def;
	d.pose = target;
	const pbd_status st = check_actor(w, "pbd_collider_move_to", &d);
	if (st != PBD_OK) return st;
	const pbd_real inv_dt = 1 / w->def.dt;
	pbd_quat r = pbd_quat_mul(d.pose.rotation, pbd_quat_conj(c->def.pose.rotation));
	if (r.w < 0) r = (pbd_quat){-r.x, -r.y, -r.z, -r.w};
	const double s = sqrt((double)(r.x * r.x + r.y * r.y + r.z * r.z));
	const double angle = 2 * atan2(s, (double)r.w);
	const pbd_real k = s > 0 ? (pbd_real)(angle / s) * inv_dt : 2 * inv_dt;
	d.velocity = pbd_v3_scale(pbd_v3_sub(d.pose.position, c->def.pose.position), inv_dt);
	d.angular_velocity = pbd_v3(r.x * k, r.y * k, r.z * k);
	/* An overflowing move is infinite, and past the bounds too. */
	if (pbd_check_kinematic_velocity(w, "pbd_collider_move_to", d.velocity, d.angular_velocity) != PBD_OK)
		return PBD_ERR_OUT_OF_RANGE;
	c->def.velocity = d.velocity;
	c->def.angular_velocity = d.angular_velocity;
	return PBD_OK;
}

/* ---- diagnostics ------------------------------------------------------------------------ */

/* A particle counts once however many colliders it touches: each collider marks a flag bit
 * over the particles near it, then one pass counts and clears the marks. Triggers touch nothing. */
uint32_t pbd_collide_count_contacts(pbd_world* w) {
	if (w->nc == 0) return 0;
	for (uint32_t i = 0; i < w->nc; ++i) {
		const pbd_collider* c = &w->colliders[i];
		if (!c->alive || c->def.trigger) continue;
		const pbd_shape_ops* ops = shape_ops[c->def.type];
		const pbd_real reach = c->def.margin + PBD_CONTACT_TOLERANCE;
		/* A particle farther from the shape's box than reach and radius is not near it (a height
		 * field's solid goes on below its box): from far off, a mesh's query visits every face. */
		pbd_vec3 lo, hi;
		const bool boxed =
		    c->def.type != PBD_SHAPE_HEIGHTFIELD && pbd_collider_world_box(c, &c->def.pose, 1, reach, &lo, &hi);
		/* A height field's solid goes on below its box, which bounds it in its own frame from the
		 * sides and above: a particle falling onto it, high above, needs no query. */
		pbd_vec3 llo, lhi;
		const bool topped = c->def.type == PBD_SHAPE_HEIGHTFIELD && ops->bounds(&c->def, &llo, &lhi);
		for (uint32_t k = 0; k < w->np; ++k) {
			if (w->w[k] <= 0 || !(w->cmask[k] & c->def.category)) continue;
			const pbd_vec3 x = w->x[k];
			const pbd_real r = w->radius[k];
			if (boxed && !(x.x >= lo.x - r && x.x <= hi.x + r && x.y >= lo.y - r && x.y <= hi.y + r &&
			               x.z >= lo.z - r && x.z <= hi.z + r))
				continue;
			const pbd_vec3 l = pbd_pose_apply_inverse(c->def.pose, x);
			/* twice the reach: the box is without the margin, and rounding in the frame change */
			const pbd_real g = 2 * (reach + r);
			if (topped &&
			    !(l.x >= llo.x - g && l.x <= lhi.x + g && l.y <= lhi.y + g && l.z >= llo.z - g && l.z <= lhi.z + g))
				continue;
			if (pbd_collide_stats_distance(w, i, k, l, reach + w->radius[k]) <= reach + w->radius[k])
				w->flags[k] = (uint8_t)(w->flags[k] | PBD_PARTICLE_CONTACT);
		}
	}
	uint32_t n = 0;
	for (uint32_t k = 0; k < w->np; ++k) {
		n += (w->flags[k] & PBD_PARTICLE_CONTACT) ? 1u : 0u;
		w->flags[k] = (uint8_t)(w->flags[k] & ~PBD_PARTICLE_CONTACT);
	}
	return n;
}

pbd_status pbd_collider_attach_data(pbd_world* w, pbd_collider* c) {
	const pbd_shape_ops* ops = shape_ops[c->def.type];
	if (!ops->data_size) return PBD_OK;
	const size_t size = ops->data_size(&c->def);
	void* data = size ? pbd_alloc(&w->mem, size) : NULL;
	if (size && !data) return PBD_ERR_OUT_OF_MEMORY;
	ops->build(&c->def, data);
	c->data = data;
	c->data_size = size;
	return PBD_OK;
}

void pbd_colliders_free(pbd_world* w) {
	for (uint32_t i = 0; i < w->nc; ++i) pbd_free(&w->mem, w->colliders[i].data, w->colliders[i].data_size);
	pbd_free(&w->mem, w->colliders, w->cap_c * sizeof *w->colliders);
}

pbd_status pbd_collider_def_check(pbd_world* w, const pbd_collider_def* def) {
	if ((int)def->type < 0 || def->type >= PBD_SHAPE_COUNT || !shape_ops[def->type]) return PBD_ERR_INVALID_ARGUMENT;
	pbd_collider_def d = *def;
	const pbd_status st = check_actor(w, "pbd_world_load", &d);
	return st != PBD_OK ? st : shape_ops[d.type]->validate(w, &d);
}

bool pbd_collider_world_box(const pbd_collider* c, const pbd_pose* poses, int pose_count, pbd_real grow, pbd_vec3* lo,
                            pbd_vec3* hi) {
	pbd_vec3 llo, lhi;
	if (!shape_ops[c->def.type]->bounds(&c->def, &llo, &lhi)) return false;
	pbd_vec3 blo = pbd_v3(PBD_REAL_MAX, PBD_REAL_MAX, PBD_REAL_MAX),
	         bhi = pbd_v3(-PBD_REAL_MAX, -PBD_REAL_MAX, -PBD_REAL_MAX);
	for (int k = 0; k < pose_count; ++k) {
		/* The turned axes: along each world axis the box reaches from the position by the sum over
		 * the local axes of the nearer and the further of the two faces' ends, the eight corners'
		 * extremes in three rotations instead of eight (and exact for an unturned pose). */
		const pbd_vec3 axis[3] = {pbd_quat_rotate(poses[k].rotation, pbd_v3(1, 0, 0)),
		                          pbd_quat_rotate(poses[k].rotation, pbd_v3(0, 1, 0)),
		                          pbd_quat_rotate(poses[k].rotation, pbd_v3(0, 0, 1))};
		const pbd_real from[3] = {llo.x, llo.y, llo.z}, to[3] = {lhi.x, lhi.y, lhi.z};
		pbd_vec3 a = poses[k].position, b = poses[k].position;
		for (int j = 0; j < 3; ++j) {
			const pbd_vec3 p = pbd_v3_scale(axis[j], from[j]), q = pbd_v3_scale(axis[j], to[j]);
			a = pbd_v3_add(a, pbd_v3(PBD_FMIN(p.x, q.x), PBD_FMIN(p.y, q.y), PBD_FMIN(p.z, q.z)));
			b = pbd_v3_add(b, pbd_v3(PBD_FMAX(p.x, q.x), PBD_FMAX(p.y, q.y), PBD_FMAX(p.z, q.z)));
		}
		blo = pbd_v3(PBD_FMIN(blo.x, a.x), PBD_FMIN(blo.y, a.y), PBD_FMIN(blo.z, a.z));
		bhi = pbd_v3(PBD_FMAX(bhi.x, b.x), PBD_FMAX(bhi.y, b.y), PBD_FMAX(bhi.z, b.z));
	}
	*lo = pbd_v3(blo.x - grow, blo.y - grow, blo.z - grow);
	*hi = pbd_v3(bhi.x + grow, bhi.y + grow, bhi.z + grow);
	return true;
}

bool pbd_collider_get_bounds(const pbd_world* w, pbd_collider_id id, pbd_vec3* lo, pbd_vec3* hi) {
	const pbd_collider* c = lookup(w, id);
	return c && lo && hi && pbd_collider_world_box(c, &c->def.pose, 1, 0, lo, hi);
}

pbd_status pbd_collider_get_triangles(const pbd_world* w, pbd_collider_id id, pbd_vec3* vertices,
                                      uint32_t vertex_capacity, uint32_t* triangles, uint32_t triangle_capacity,
                                      uint32_t* vertex_count, uint32_t* triangle_count) {
	const pbd_collider* c = lookup(w, id);
	if (!c || !vertex_count || !triangle_count) return PBD_ERR_INVALID_ARGUMENT;
	const pbd_shape_ops* ops = shape_ops[c->def.type];
	if (!ops->triangles) return PBD_ERR_INVALID_ARGUMENT;
	ops->triangles(&c->def, vertices, vertices ? vertex_capacity : 0, triangles, triangles ? triangle_capacity : 0,
	               vertex_count, triangle_count);
	return PBD_OK;
}
