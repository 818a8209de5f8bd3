/* pbd-soak: runs the built-in scenes and random worlds, and checks after every step that the
 * library kept its promises (finite state or a reported recovery, pinned particles still). */
#ifndef PBD_SOAK_H
#define PBD_SOAK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pbd/pbd.h"
#include "rng.h"

/* A run's classes, worst last. From SOAK_NONFINITE on each is a bug whatever the scene. */
typedef enum soak_class {
	SOAK_OK = 0,
	SOAK_DIVERGED,     /* a divergence warning or max strain > SOAK_DIVERGED_STRAIN */
	SOAK_NONFINITE,    /* a NaN or inf left in the state (or the strain) that the library did not undo */
	SOAK_PINNED_MOVED, /* a pinned particle without a target moved or kept a velocity, or missed its target */
	SOAK_REFUSED,      /* the library refused a call that its documented ranges allow */
	SOAK_CRASH,        /* the case's process died on a signal or a sanitizer report */
	SOAK_TIMEOUT,      /* the case's process ran past its time limit */
	SOAK_CLASS_COUNT
} soak_class;

/* "ok", "diverged", "nonfinite-unreported", ... */
const char* soak_class_name(soak_class c);

#define SOAK_DIVERGED_STRAIN 10.0

/* Why a run counts as diverged (bits of soak_result.diverged_by). */
enum { SOAK_BY_STRAIN = 1u << 0, SOAK_BY_NONFINITE_WARNING = 1u << 1, SOAK_BY_DIVERGED_WARNING = 1u << 2 };

/* Faults the soak plants in its own cases, to show that each class is caught. */
typedef enum soak_inject {
	SOAK_INJECT_NONE = 0,
	SOAK_INJECT_CRASH,  /* raise SIGSEGV */
	SOAK_INJECT_NAN,    /* write a NaN into a free particle after the step */
	SOAK_INJECT_PINNED, /* move a pinned particle with pbd_world_set_positions */
	SOAK_INJECT_HANG    /* wait forever */
} soak_inject;

/* Random worlds are kept below max_work constraint projections per step (substeps x iterations
 * x (constraints + particles)): their cloths and ropes are drawn no larger than fits, then
 * iterations and substeps are halved until the step fits. The default bounds a case to tens of
 * milliseconds per step on one core, so that a soak covers thousands of cases. */
#define SOAK_DEFAULT_WORK (1u << 20)

typedef struct soak_case {
	const char* scene; /* built-in pbd_scene name, or NULL for a random world */
	uint64_t seed;     /* random world: everything about it follows from this */
	int steps;         /* steps to run */
	double max_work;   /* random world: projections per step, see SOAK_DEFAULT_WORK */
	soak_inject inject;
} soak_case;

typedef struct soak_result {
	soak_class cls;
	int steps_done; /* steps completed; after a crash, the step it died in is the next one */
	int bad_step;   /* 1-based step of the first problem (bug or divergence), 0 when none */
	uint32_t particles, distances, colliders;
	double max_strain; /* over all steps; may be inf for a blown-up world */
	int max_strain_step;
	uint64_t warnings[PBD_WARN_COUNT]; /* counts at the end of the run */
	unsigned diverged_by;              /* SOAK_BY_* */
	uint32_t targets, changes;         /* random world: targets given and changes made while running */
	double wall_s;                     /* building and stepping */
	char setup[256];                   /* settings and contents, for the report */
	char detail[256];                  /* the first problem, or "" */
	char first_log[160];               /* the first line the library logged, or "" */
} soak_result;

/* Builds and steps one case, filling *r (zeroed first). Never exits; crashes are the caller's
 * to contain. */
void soak_run_case(const soak_case* c, soak_result* r);

/* A random world and what may happen to it while it runs. */
typedef struct soak_random {
	soak_rng rng;
	pbd_world* world;
	double max_work;
	int objects;
	/* A tenth of the worlds are extreme: far from the origin (where float spacing is coarse), with
	 * masses, forces and speeds spread over more decades. */
	bool extreme;
	pbd_vec3 origin;
	uint32_t particles;
	pbd_collider_id colliders[8];
	int collider_count;
	double target_rate; /* chance per step of giving a pinned particle a kinematic target */
	double change_rate; /* chance per step of changing a setting, a pin, a force or a collider */
	int spawned;        /* objects added while running */
	uint32_t targets, changes;
	/* Particles given a target for the coming step, and their goals (cap entries each). */
	uint8_t* targeted;
	pbd_vec3* goal;
	uint32_t cap;
} soak_random;

/* Makes the world of `seed` within `max_work`. False with a message in r->detail when the library
 * refused a call (the world, if any, is destroyed). The world's log goes to `log`. */
bool soak_random_create(uint64_t seed, double max_work, pbd_log_fn log, void* log_user, soak_random* out,
                        soak_result* r);

/* This step's events, applied before it runs. A particle given a target is marked in
 * rs->targeted and its goal put in rs->goal; unpinning clears the mark; the caller clears the
 * rest after the step. False with a message when a call was refused. */
bool soak_random_events(soak_random* rs, char* msg, size_t msg_size);

void soak_random_destroy(soak_random* rs);

/* --diverge (diverge.c): every built-in scene under every method, kicked until it blows up, each
 * case in its own process. A diverged frame may hold at most SOAK_DIVERGE_MEMORY times the peak
 * memory of the first frame, and take at most SOAK_DIVERGE_TIME times the healthy frame plus
 * SOAK_DIVERGE_SLACK_MS. Prints the table and returns the exit status. */
#define SOAK_DIVERGE_MEMORY   4.0
#define SOAK_DIVERGE_TIME     10.0
#define SOAK_DIVERGE_SLACK_MS 2.0
int soak_diverge(int frames, double case_timeout, const char* only, const char* csv_path, bool verbose);

#endif
