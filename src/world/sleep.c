/* Sleeping (docs/collision.md, "Sleeping"): at the end of each step, the awake dynamic bodies are
 * grouped into islands, those joined by a contact of the last substep or by a joint that holds;
 * a body counts as still while its centre's speed plus its spin times its radius of gyration
 * stays below the world's sleep_speed, and an island whose every body has been still for
 * sleep_time falls asleep: its bodies stop (velocities zero) and take no step, no correction and
 * no contact among themselves or with what does not move (model/bodies.c, model/node.h,
 * collision/rigid_contact.c). Box2D and Jolt put islands to sleep the same way, as a whole: a
 * body asleep under an awake one would be a floor the awake one cannot move.
 *
 * What wakes an island: a contact with an awake dynamic body or a moving kinematic one
 * (rigid_contact.c), a particle's contact with one of its shapes, a joint to an awake body, and
 * the calls that set or push a body (bodies.c). A body that particles touch or an attachment
 * holds stays awake: the particles do not sleep. The pass runs on the calling thread in slot
 * order, so it is the same for any thread count. */
#include <math.h>

#include "collision/collide.h"
#include "constraints/attachment.h"
#include "constraints/joint.h"
#include "world/sleep.h"
#include "model/world.h"

static uint32_t root(uint32_t* parent, uint32_t i) {
	while (parent[i] != i) i = parent[i] = parent[parent[i]];
	return i;
}

/* Joins two awake dynamic bodies' islands: the lower slot names the island. */
static void join(pbd_bodies* b, uint32_t i, uint32_t k) {
	const uint32_t ri = root(b->island, i), rk = root(b->island, k);
	if (ri < rk)
		b->island[rk] = ri;
	else if (rk < ri)
		b->island[ri] = rk;
}

static bool awake_dynamic(const pbd_bodies* b, uint32_t i) {
	return b->live[i] && b->type[i] == PBD_BODY_DYNAMIC && !b->asleep[i];
}

/* Keeps slot i awake: woken if asleep, its stillness forgotten. */
static void disturb(pbd_world* w, uint32_t i) {
	if (w->bodies.type[i] == PBD_BODY_DYNAMIC) pbd_bodies_wake(w, i);
}

void pbd_sleep_update(pbd_world* w) {
	pbd_bodies* b = &w->bodies;
	if (!b->alive) return;
	if (!(w->def.sleep_time > 0)) {
		/* sleeping turned off: nobody stays asleep */
		for (uint32_t i = 0; i < b->n; ++i)
			if (b->asleep[i]) pbd_bodies_wake(w, i);
		return;
	}
	/* What the particles touch or hold stays awake. */
	for (uint32_t k = 0; k < w->ncon; ++k)
		if (w->con[k].body) disturb(w, w->con[k].body - 1);
	const pbd_family* att = &w->fam[PBD_FAMILY_ATTACHMENT];
	for (uint32_t k = 0; k < att->n; ++k) {
		const uint32_t body = ((const pbd_attachment_c*)att->hot)[k].body;
		if (body) disturb(w, body - 1);
	}
	/* A joint from an awake body wakes the island at its other end. */
	const pbd_family* jf = &w->fam[PBD_FAMILY_JOINT];
	const pbd_joint_c* jc = (const pbd_joint_c*)jf->hot;
	for (uint32_t k = 0; k < jf->n; ++k) {
		const uint32_t f = jc[k].flags;
		if ((f & PBD_JOINT_BROKEN) || !(f & PBD_JOINT_A_MOVES) || !(f & PBD_JOINT_B_MOVES)) continue;
		const uint32_t a = jc[k].a - 1, c = jc[k].b - 1;
		if (b->asleep[a] != b->asleep[c]) disturb(w, b->asleep[a] ? a : c);
	}
	/* The awake bodies' islands, from scratch: each its own, then joined. */
	for (uint32_t i = 0; i < b->n; ++i)
		if (awake_dynamic(b, i)) b->island[i] = i;
	for (uint32_t k = 0; k < w->nrc; ++k) {
		const struct pbd_rigid_c* c = &w->rcon[k];
		if (c->p && c->s && awake_dynamic(b, c->p - 1) && awake_dynamic(b, c->s - 1)) join(b, c->p - 1, c->s - 1);
	}
	for (uint32_t k = 0; k < jf->n; ++k) {
		const uint32_t f = jc[k].flags;
		if ((f & PBD_JOINT_BROKEN) || !(f & PBD_JOINT_A_MOVES) || !(f & PBD_JOINT_B_MOVES)) continue;
		if (awake_dynamic(b, jc[k].a - 1) && awake_dynamic(b, jc[k].b - 1)) join(b, jc[k].a - 1, jc[k].b - 1);
	}
	/* Stillness, then the islands whose every body has been still long enough: a root keeps
	 * still = 0 (as a mark) when one of its bodies has not. */
	const pbd_real dt = w->def.dt, limit = w->def.sleep_speed;
	for (uint32_t i = 0; i < b->n; ++i) {
		if (!awake_dynamic(b, i)) continue;
		const pbd_vec3 in = b->inertia[i];
		const pbd_real gyration = PBD_SQRT((in.x + in.y + in.z) * b->inv_mass[i]);
		const pbd_real speed = pbd_v3_length(b->v[i]) + pbd_v3_length(b->omega[i]) * gyration;
		b->still[i] = speed < limit ? b->still[i] + dt : 0;
	}
	for (uint32_t i = 0; i < b->n; ++i)
		if (awake_dynamic(b, i)) b->island[i] = root(b->island, i);
	/* ready[root]: every body of the island still for sleep_time; kept in the root's asleep flag
	 * as 2 while deciding, since an awake body's flag is 0 */
	for (uint32_t i = 0; i < b->n; ++i)
		if (awake_dynamic(b, i) && b->island[i] == i) b->asleep[i] = 2;
	for (uint32_t i = 0; i < b->n; ++i)
		if (b->live[i] && b->type[i] == PBD_BODY_DYNAMIC && b->asleep[i] != 1 && b->still[i] < w->def.sleep_time)
			b->asleep[b->island[i]] = 3;
	for (uint32_t i = 0; i < b->n; ++i) {
		if (!b->live[i] || b->type[i] != PBD_BODY_DYNAMIC || b->asleep[i] == 1) continue;
		const uint32_t r = b->island[i];
		if (b->asleep[r] == 2 && r != i) {
			b->asleep[i] = 1;
			b->v[i] = b->omega[i] = pbd_v3(0, 0, 0);
		}
	}
	for (uint32_t i = 0; i < b->n; ++i) {
		if (b->asleep[i] == 2) {
			b->asleep[i] = 1;
			b->v[i] = b->omega[i] = pbd_v3(0, 0, 0);
		} else if (b->asleep[i] == 3) {
			b->asleep[i] = 0;
		}
	}
}
