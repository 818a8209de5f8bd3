/* One soak case: build the world (a built-in scene or a random one), step it, and check after
 * every step what the library promises: the state is finite or the step was undone and
 * counted, a pinned particle stays where it is unless given a target, and a scene's moving pins
 * follow their tracks. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pbd/math.h"
#include "pbd/scene.h"
#include "soak.h"

const char* soak_class_name(soak_class c) {
	static const char* const names[SOAK_CLASS_COUNT] = {
	    "ok", "diverged", "nonfinite-unreported", "pinned-moved", "refused", "crash", "timeout"};
	return (int)c >= 0 && c < SOAK_CLASS_COUNT ? names[c] : "?";
}

static double now_s(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Keeps the library's first message: it usually names what went wrong first. */
static void capture_log(const char* message, void* user) {
	soak_result* r = (soak_result*)user;
	if (!r->first_log[0]) snprintf(r->first_log, sizeof r->first_log, "%s", message);
}

/* Records a problem. The first bug (or, before any bug, the first divergence) names the case in
 * the report; a worse class replaces a milder one. */
static void flag(soak_result* r, soak_class cls, int step, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static void flag(soak_result* r, soak_class cls, int step, const char* fmt, ...) {
	if (cls <= r->cls) return;
	r->cls = cls;
	r->bad_step = step;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof r->detail, fmt, ap);
	va_end(ap);
}

static bool same_bits(pbd_vec3 a, pbd_vec3 b) { return memcmp(&a, &b, sizeof a) == 0; }

/* A particle that is not pinned, for the NaN fault; UINT32_MAX when all are pinned. */
static uint32_t first_free(const pbd_world* w, uint32_t n) {
	for (uint32_t i = 0; i < n; ++i)
		if (!pbd_particle_is_pinned(w, i)) return i;
	return UINT32_MAX;
}

/* Grows a buffer to hold `n` items; the soak's own memory failing ends the case. */
static void* grow(void* p, size_t n, size_t size) {
	void* q = realloc(p, (n + 1) * size); /* + 1: an empty world still gets a real buffer */
	if (!q) abort();
	return q;
}

/* `sc` is the built-in scene the world belongs to (NULL for a random world): its keyframed
 * colliders move before every step, as in a run. */
static void run_steps(pbd_world* w, pbd_scene* sc, soak_random* rs, const soak_case* c, soak_result* r) {
	uint32_t cap = 0;
	pbd_vec3* before = NULL;
	uint8_t* pinned = NULL;
	/* Built-in scenes get no targets: marks that stay clear. */
	uint8_t* no_targets = NULL;
	const int inject_step = c->steps < 3 ? 1 : 3;

	for (int step = 1; step <= c->steps; ++step) {
		char msg[200];
		if (rs && !soak_random_events(rs, msg, sizeof msg)) {
			flag(r, SOAK_REFUSED, step, "step %d: %s", step, msg);
			break;
		}
		/* Random worlds may have grown while the events ran. */
		const uint32_t n = pbd_world_particle_count(w);
		if (n > cap || !before) {
			cap = n;
			before = (pbd_vec3*)grow(before, cap, sizeof *before);
			pinned = (uint8_t*)grow(pinned, cap, 1);
			no_targets = (uint8_t*)grow(no_targets, cap, 1);
			memset(no_targets, 0, cap + 1);
		}
		uint8_t* targeted = rs ? rs->targeted : no_targets;
		const pbd_vec3* goal = rs ? rs->goal : before;
		/* a world of bodies alone has no positions */
		if (n) memcpy(before, pbd_world_positions(w), n * sizeof *before);
		for (uint32_t i = 0; i < n; ++i) pinned[i] = pbd_particle_is_pinned(w, i);
		/* A scene's moving pins are carried along their tracks, checked below; they are not pinned
		 * particles that must stay. */
		for (uint32_t m = 0; sc && m < sc->pin_motion_count; ++m)
			for (uint32_t k = 0; k < sc->pin_motions[m].count; ++k)
				if (sc->pin_motions[m].particles[k] < n) pinned[sc->pin_motions[m].particles[k]] = 0;
		uint64_t warned[PBD_WARN_COUNT];
		for (int k = 0; k < PBD_WARN_COUNT; ++k) warned[k] = pbd_world_get_warning(w, (pbd_warning)k).count;

		if (step == inject_step) {
			if (c->inject == SOAK_INJECT_PINNED) {
				for (uint32_t i = 0; i < n; ++i)
					if (pinned[i] && !targeted[i]) {
						pbd_vec3 moved = pbd_v3_add(before[i], pbd_v3(0, (pbd_real)1e-3, 0));
						pbd_world_set_positions(w, i, 1, &moved);
						break;
					}
			} else if (c->inject == SOAK_INJECT_CRASH) {
				raise(SIGSEGV);
			} else if (c->inject == SOAK_INJECT_HANG) {
				for (;;) pause();
			}
		}

		pbd_status st = sc ? pbd_scene_step(sc) : pbd_world_step(w);
		if (st != PBD_OK) {
			flag(r, SOAK_REFUSED, step, "step %d: pbd_world_step: %s: %s", step, pbd_status_string(st),
			     pbd_world_last_error(w));
			break;
		}
		if (step == inject_step && c->inject == SOAK_INJECT_NAN) {
			uint32_t i = first_free(w, n);
			/* The positions are the world's own array; writing through the view is what a bug in
			 * the step would look like from outside. */
			if (i != UINT32_MAX) {
				((pbd_vec3*)pbd_world_positions(w))[i].y = (pbd_real)NAN;
			} else {
				/* a world of bodies alone: the first body's frame, as the world shows it */
				uint32_t slots = 0;
				pbd_pose* poses = (pbd_pose*)pbd_world_body_poses(w, &slots);
				for (uint32_t b = 0; b < slots; ++b)
					if (pbd_body_is_valid(w, pbd_world_body_at(w, b))) {
						poses[b].position.y = (pbd_real)NAN;
						break;
					}
			}
		}
		r->steps_done = step;

		const pbd_vec3* x = pbd_world_positions(w);
		const pbd_vec3* v = pbd_world_velocities(w);
		for (uint32_t i = 0; i < n; ++i)
			if (!pbd_v3_is_finite(x[i]) || !pbd_v3_is_finite(v[i])) {
				flag(r, SOAK_NONFINITE, step, "step %d: particle %u: x (%g %g %g) v (%g %g %g)", step, i,
				     (double)x[i].x, (double)x[i].y, (double)x[i].z, (double)v[i].x, (double)v[i].y, (double)v[i].z);
				break;
			}
		uint32_t slots = 0;
		const pbd_pose* poses = pbd_world_body_poses(w, &slots);
		for (uint32_t b = 0; b < slots; ++b) {
			const pbd_body_id id = pbd_world_body_at(w, b);
			if (!pbd_body_is_valid(w, id)) continue;
			pbd_body_state bs;
			const bool state = pbd_body_get_state(w, id, &bs) == PBD_OK;
			if (!pbd_v3_is_finite(poses[b].position) || !pbd_quat_is_finite(poses[b].rotation) || !state ||
			    !pbd_v3_is_finite(bs.velocity) || !pbd_v3_is_finite(bs.angular_velocity)) {
				flag(r, SOAK_NONFINITE, step, "step %d: body %u: at (%g %g %g)", step, b + 1,
				     (double)poses[b].position.x, (double)poses[b].position.y, (double)poses[b].position.z);
				break;
			}
		}
		/* A step undone for a particle lands it back on its start, not on its target. */
		const bool undone = pbd_world_get_warning(w, PBD_WARN_NONFINITE).count != warned[PBD_WARN_NONFINITE];
		/* Each moving pin is where its track puts it at the world's new time, to the float rounding
		 * of the pose. */
		for (uint32_t m = 0; sc && m < sc->pin_motion_count; ++m) {
			const pbd_scene_pin_motion* pm = &sc->pin_motions[m];
			for (uint32_t k = 0; k < pm->count; ++k) {
				const uint32_t i = pm->particles[k];
				if (i >= n) continue;
				const pbd_vec3 want = pbd_scene_pin_motion_position(pm, k, pbd_world_time(w));
				const double tol = 1e-5 * (1.0 + (double)pbd_v3_length(want));
				if (!undone && !((double)pbd_v3_length(pbd_v3_sub(x[i], want)) <= tol))
					flag(r, SOAK_PINNED_MOVED, step,
					     "step %d: moving pin %u off its track: want (%.9g %.9g %.9g), at (%.9g %.9g %.9g)", step, i,
					     (double)want.x, (double)want.y, (double)want.z, (double)x[i].x, (double)x[i].y,
					     (double)x[i].z);
			}
		}
		for (uint32_t i = 0; i < n; ++i) {
			const bool had_target = targeted[i];
			targeted[i] = 0; /* a target lasts one step */
			if (!pinned[i]) continue;
			if (had_target) {
				if (!undone && !same_bits(x[i], goal[i]))
					flag(r, SOAK_PINNED_MOVED, step,
					     "step %d: pinned particle %u missed its target (%.9g %.9g %.9g), at (%.9g %.9g %.9g)", step, i,
					     (double)goal[i].x, (double)goal[i].y, (double)goal[i].z, (double)x[i].x, (double)x[i].y,
					     (double)x[i].z);
			} else if (!same_bits(x[i], before[i]) || v[i].x != 0 || v[i].y != 0 || v[i].z != 0) {
				flag(r, SOAK_PINNED_MOVED, step,
				     "step %d: pinned particle %u moved (%.9g %.9g %.9g) -> (%.9g %.9g %.9g), v (%g %g %g)", step, i,
				     (double)before[i].x, (double)before[i].y, (double)before[i].z, (double)x[i].x, (double)x[i].y,
				     (double)x[i].z, (double)v[i].x, (double)v[i].y, (double)v[i].z);
			}
		}

		pbd_stats stats;
		pbd_world_get_stats(w, &stats);
		if (isnan(stats.max_strain))
			flag(r, SOAK_NONFINITE, step, "step %d: max strain is NaN with a finite state", step);
		else if (stats.max_strain > r->max_strain || step == 1) {
			r->max_strain = stats.max_strain;
			r->max_strain_step = step;
		}
		if (stats.max_strain > SOAK_DIVERGED_STRAIN && !(r->diverged_by & SOAK_BY_STRAIN)) {
			r->diverged_by |= SOAK_BY_STRAIN;
			flag(r, SOAK_DIVERGED, step, "step %d: max strain %.3g", step, stats.max_strain);
		}
		if (pbd_world_get_warning(w, PBD_WARN_NONFINITE).count && !(r->diverged_by & SOAK_BY_NONFINITE_WARNING)) {
			r->diverged_by |= SOAK_BY_NONFINITE_WARNING;
			flag(r, SOAK_DIVERGED, step, "step %d: non-finite state reported (particle %u)", step,
			     pbd_world_get_warning(w, PBD_WARN_NONFINITE).last_index);
		}
		if (pbd_world_get_warning(w, PBD_WARN_DIVERGED).count && !(r->diverged_by & SOAK_BY_DIVERGED_WARNING)) {
			r->diverged_by |= SOAK_BY_DIVERGED_WARNING;
			flag(r, SOAK_DIVERGED, step, "step %d: divergence reported (particle %u)", step,
			     pbd_world_get_warning(w, PBD_WARN_DIVERGED).last_index);
		}
		/* A bug leaves a state nothing further can be learnt from. */
		if (r->cls >= SOAK_NONFINITE) break;
	}
	for (int k = 0; k < PBD_WARN_COUNT; ++k) r->warnings[k] = pbd_world_get_warning(w, (pbd_warning)k).count;
	free(before);
	free(pinned);
	free(no_targets);
}

static void describe_world(pbd_world* w, soak_result* r) {
	r->particles = pbd_world_particle_count(w);
	r->distances = pbd_world_distance_count(w);
	r->colliders = pbd_world_collider_count(w);
}

void soak_run_case(const soak_case* c, soak_result* r) {
	memset(r, 0, sizeof *r);
	const double t0 = now_s();
	if (c->scene) {
		pbd_scene s;
		pbd_scene_error err;
		pbd_scene_options opts;
		memset(&opts, 0, sizeof opts);
		opts.log = capture_log;
		opts.log_user = r;
		if (!pbd_scene_load_builtin(c->scene, &opts, &s, &err)) {
			flag(r, SOAK_REFUSED, 0, "%s", err.message);
		} else {
			pbd_world_def d = pbd_world_get_def(s.world);
			snprintf(r->setup, sizeof r->setup, "dt %.3g sub %d it %d %s %s, %d frames", (double)d.dt, d.substeps,
			         d.iterations, d.solver == PBD_SOLVER_JACOBI ? "jacobi" : "gs",
			         d.formulation == PBD_FORMULATION_XPBD ? "xpbd" : "pbd", s.frames);
			describe_world(s.world, r);
			soak_case capped = *c;
			if (s.frames < capped.steps) capped.steps = s.frames;
			run_steps(s.world, &s, NULL, &capped, r);
			pbd_scene_free(&s);
		}
	} else {
		soak_random rs;
		if (!soak_random_create(c->seed, c->max_work, capture_log, r, &rs, r)) {
			r->cls = SOAK_REFUSED; /* the generator put the refusal in r->detail */
		} else {
			describe_world(rs.world, r);
			run_steps(rs.world, NULL, &rs, c, r);
			describe_world(rs.world, r); /* objects may have been added while it ran */
			r->targets = rs.targets;
			r->changes = rs.changes;
			soak_random_destroy(&rs);
		}
	}
	r->wall_s = now_s() - t0;
}
