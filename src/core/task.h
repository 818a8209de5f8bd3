/* Running a step's work on several threads without changing its result.
 *
 * Work comes in stages: a stage is `count` blocks, fn(ctx, block, worker) for each, and every
 * block of a stage is independent of the others (constraints of one colour, a range of
 * particles). Blocks are claimed one at a time (each thread from its own share first, then from
 * the others'), so how many threads
 * there are, and which one runs a block, decides nothing: a block's output depends on its index
 * only, and whatever is summed across blocks is summed in block order afterwards. `worker` (0 for
 * the thread that called the step) selects per-thread scratch memory, never a result.
 *
 * The threads come from the game's task system (pbd_world_def.enqueue_task/finish_task) or from
 * a built-in pool of POSIX threads. The game's tasks are enqueued at a step's first stage with
 * more than one block and finished when the step ends; the pool's threads stay from one step to
 * the next, and sleep after a fifth of a millisecond without a stage. Between stages they wait by
 * spinning (a cloth has a hundred stages per substep, too many to pay a sleep and a wake-up for
 * each). The calling thread claims blocks too and can finish every stage alone, so a task system
 * that runs tasks late, or inline, still gets the same result. */
#ifndef PBD_TASK_H
#define PBD_TASK_H

#include <fenv.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"

typedef void pbd_stage_fn(void* ctx, uint32_t block, uint32_t worker);

typedef struct pbd_pool pbd_pool;
typedef struct pbd_exec pbd_exec;

/* A thread's share of the current stage: gen << 32 | end << 16 | next block, alone on its cache
 * line with the thread's count of blocks done. Each thread takes the blocks of its own share
 * first, so that from one stage to the next a thread works on the same part of the cloth and its
 * particles stay in its cache: half of what is left at a time (a share of 8 blocks costs 4 atomic
 * claims), the last ones one at a time (the threads finish within a block of each other). Then it
 * takes blocks from the others' shares, so a thread that starts late or runs slowly holds nothing
 * up. */
typedef struct pbd_exec_share {
	_Alignas(64) _Atomic uint64_t claim;
	/* gen << 32 | the blocks the thread ran in stage gen (any share's), written when it found
	 * none left: on the line the thread holds anyway, for the caller to add up */
	_Atomic uint64_t done;
} pbd_exec_share;

/* A chain: stages run one after the other, where a block of stage s may start as soon as the
 * blocks of stage s - 1 it depends on (those sharing particles with it) are done and every stage
 * before s - 1 is done, instead of waiting for the whole of stage s - 1. The result is that of
 * the stages in order, on any number of threads. Stage s holds the chain's blocks
 * [first[s], first[s + 1]); fn(ctx[s], block - first[s], worker) runs one. */
#define PBD_CHAIN_MAX_STAGES 64u

typedef struct pbd_chain {
	uint32_t stages; /* 1 .. PBD_CHAIN_MAX_STAGES */
	pbd_stage_fn* fn;
	void* const* ctx;
	const uint32_t* first; /* stages + 1 entries */
	/* Per block of stage s >= 1: the blocks of stage s - 1 it waits for, [dep_first, dep_last]
	 * (empty when dep_first > dep_last); a superset of those sharing a particle with it. */
	const uint32_t *dep_first, *dep_last;
	_Atomic uint32_t* flag; /* per block: the gen of the chain that last ran it (never 0 for one) */
} pbd_chain;

typedef struct pbd_exec_worker {
	pbd_exec* exec;
	uint32_t index; /* 1 .. threads - 1 */
} pbd_exec_worker;

struct pbd_exec {
	uint32_t threads;
	pbd_enqueue_task_fn* enqueue;
	pbd_finish_task_fn* finish;
	void* user;
	pbd_pool* pool; /* the built-in one, when the game gave no task system */
	bool running;   /* the workers are enqueued: for the current step, or the pool's for good */
	bool stepping;  /* a step's first stage ran, and pbd_exec_end has not been called since */
	void* handles[PBD_MAX_THREADS];
	pbd_exec_worker workers[PBD_MAX_THREADS];
	/* The current stage. fn and ctx are written before the claim word announces the stage, and
	 * read by a worker only after it claimed a block of it, so they never change under a reader. */
	pbd_stage_fn* fn;
	void* ctx;
	/* The current chain, or NULL for a stage. A worker reads the chain only between claiming one
	 * of its blocks and marking that block done: the caller keeps it alive until then. */
	const pbd_chain* _Atomic chain;
	uint32_t gen; /* stages announced so far (the calling thread's count) */
	/* A chain's shares: stage s, thread i at [s * threads + i]. */
	pbd_exec_share* chain_share;
	void* chain_mem; /* chain_share's allocation, aligned within */
	pbd_exec_share share[PBD_MAX_THREADS];
	_Atomic uint32_t sync; /* gen of the current stage: what a sleeping worker waits on */
	_Atomic uint32_t quit; /* workers return: at the end of a step, or the pool's when freed */
	/* The built-in pool's workers that sleep between steps, and what wakes them. */
	_Atomic uint32_t sleepers;
	pthread_mutex_t sleep_lock;
	pthread_cond_t sleep_wake;
	_Atomic uint32_t env_gen; /* steps started: a worker sets fenv and mxcsr again when it changes */
	pthread_t caller;         /* the thread that steps, to tell a task run inline */
	/* The calling thread's floating-point environment, set on every worker for the step (trap
	 * masks, rounding, flush-to-zero), so that blocks compute alike wherever they run. */
	fenv_t fenv;
	uint32_t mxcsr;
	/* PBD_BLOCK_CONSTRAINTS and PBD_BLOCK_PARTICLES; tests make them small, so that small
	 * scenes run on several threads too (a multiple of 8, and at least PBD_BLOCK_PARTICLES_MIN). */
	uint32_t block_constraints, block_particles;
	/* Stages of fewer blocks run on the calling thread alone (PBD_EXEC_MIN_BLOCKS; tests lower it,
	 * so that small scenes still split). */
	uint32_t min_blocks;
};

/* Block sizes, fixed so that the blocks, and whatever is reduced over them, are the same for any
 * thread count: a multiple of 8 constraints (SIMD lanes), enough work per block (microseconds)
 * that claiming one costs little, and enough blocks per colour of a 64^2 cloth to share. */
#define PBD_BLOCK_CONSTRAINTS 256u
#define PBD_BLOCK_PARTICLES   1024u

/* The smallest particle block the tests may ask for (pbd_exec.block_particles): arrays with an
 * entry per block are sized for it. */
#define PBD_BLOCK_PARTICLES_MIN 64u

static inline uint32_t pbd_blocks(uint32_t n, uint32_t size) { return (n + size - 1) / size; }
/* The end of the block that starts at `first`, of size `size`, in [0, n). */
static inline uint32_t pbd_block_end(uint32_t first, uint32_t n, uint32_t size) {
	return n - first < size ? n : first + size;
}

/* A stage of fewer blocks than this runs on the calling thread: with one or two blocks per
 * thread, handing the stage over costs more than it saves (a 32^2 cloth, whose colours are two or
 * three blocks, ran slower on two threads than on one). The result is the same either way. */
#define PBD_EXEC_MIN_BLOCKS 4u

/* Most blocks in one stage; larger stages run on the calling thread alone. */
#define PBD_EXEC_MAX_BLOCKS 0xffffu

/* Sets up `e` for `threads` threads with the def's task system, or starts the built-in pool.
 * Fails only when the pool's threads cannot be created. */
pbd_status pbd_exec_init(pbd_exec* e, pbd_alloc_ctx* mem, uint32_t threads, pbd_enqueue_task_fn* enqueue,
                         pbd_finish_task_fn* finish, void* user);
void pbd_exec_free(pbd_exec* e, pbd_alloc_ctx* mem);
/* Runs fn over blocks 0 .. count-1 and returns when all are done. */
void pbd_exec_stage(pbd_exec* e, pbd_stage_fn* fn, void* ctx, uint32_t count);
/* Runs the chain's stages and returns when all are done. */
void pbd_exec_chain(pbd_exec* e, const pbd_chain* c);
/* Ends the step's parallel part: the game's tasks return and are finished; the pool's threads
 * stay for the next step (pbd_exec_free ends them). Idempotent. */
void pbd_exec_end(pbd_exec* e);

#endif
