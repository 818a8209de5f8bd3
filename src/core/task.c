/* Stages of blocks on several threads (task.h), and the built-in pool of POSIX threads. */
#include "core/task.h"

#include <sched.h>
#include <string.h>

#include "core/profile.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define PBD_X86 1
static inline void cpu_relax(void) { _mm_pause(); }
#else
static inline void cpu_relax(void) {}
#endif

/* Spins before a waiting thread gives its core away: long enough to catch the next stage of a
 * cloth (microseconds), short enough not to starve a thread that shares the core. */
#define SPINS_BEFORE_YIELD 256

/* How long a worker of the built-in pool keeps watching for the next stage, yielding its core,
 * before it sleeps: long enough to span the gap between two steps that follow each other (a
 * sweep, a benchmark, a game that steps twice per frame), so that the next step starts without
 * a wake-up; a game that steps once per frame finds it asleep, using no processor between
 * frames. */
#define IDLE_BEFORE_SLEEP_NS 200000u

/* The built-in pool: one slot per thread, each holding at most one task. The executor enqueues
 * one task per slot, which runs until pbd_exec_free, so a slot never queues. */
typedef struct pool_slot {
	pthread_mutex_t lock;
	pthread_cond_t wake, finished;
	pbd_task_fn* task;
	void* task_ctx;
	int state; /* SLOT_IDLE, SLOT_PENDING, SLOT_RUNNING, SLOT_DONE */
	bool stop;
	pthread_t thread;
	bool started;
} pool_slot;

enum { SLOT_IDLE, SLOT_PENDING, SLOT_RUNNING, SLOT_DONE };

struct pbd_pool {
	uint32_t n;
	uint32_t next; /* the slot the next enqueue takes */
	pool_slot* slot;
};

static void* pool_thread(void* arg) {
	pool_slot* s = (pool_slot*)arg;
	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->stop && s->state != SLOT_PENDING) pthread_cond_wait(&s->wake, &s->lock);
		if (s->stop) break;
		s->state = SLOT_RUNNING;
		pthread_mutex_unlock(&s->lock);
		s->task(s->task_ctx);
		pthread_mutex_lock(&s->lock);
		s->state = SLOT_DONE;
		pthread_cond_signal(&s->finished);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static void* pool_enqueue(pbd_task_fn* task, void* task_ctx, void* user) {
	pbd_pool* p = (pbd_pool*)user;
	pool_slot* s = &p->slot[p->next];
	p->next = (p->next + 1) % p->n;
	pthread_mutex_lock(&s->lock);
	s->task = task;
	s->task_ctx = task_ctx;
	s->state = SLOT_PENDING;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	return s;
}

static void pool_finish(void* handle, void* user) {
	(void)user;
	pool_slot* s = (pool_slot*)handle;
	pthread_mutex_lock(&s->lock);
	while (s->state != SLOT_DONE) pthread_cond_wait(&s->finished, &s->lock);
	s->state = SLOT_IDLE;
	pthread_mutex_unlock(&s->lock);
}

static void pool_free(pbd_pool* p, pbd_alloc_ctx* mem) {
	if (!p) return;
	for (uint32_t i = 0; i < p->n; ++i) {
		pool_slot* s = &p->slot[i];
		if (!s->started) continue;
		pthread_mutex_lock(&s->lock);
		s->stop = true;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thread, NULL);
	}
	for (uint32_t i = 0; i < p->n; ++i) {
		pthread_mutex_destroy(&p->slot[i].lock);
		pthread_cond_destroy(&p->slot[i].wake);
		pthread_cond_destroy(&p->slot[i].finished);
	}
	pbd_free(mem, p->slot, p->n * sizeof *p->slot);
	pbd_free(mem, p, sizeof *p);
}

static pbd_pool* pool_create(pbd_alloc_ctx* mem, uint32_t n) {
	pbd_pool* p = (pbd_pool*)pbd_alloc(mem, sizeof *p);
	if (!p) return NULL;
	memset(p, 0, sizeof *p);
	p->slot = (pool_slot*)pbd_alloc(mem, n * sizeof *p->slot);
	if (!p->slot) {
		pbd_free(mem, p, sizeof *p);
		return NULL;
	}
	memset(p->slot, 0, n * sizeof *p->slot);
	p->n = n;
	for (uint32_t i = 0; i < n; ++i) {
		pool_slot* s = &p->slot[i];
		pthread_mutex_init(&s->lock, NULL);
		pthread_cond_init(&s->wake, NULL);
		pthread_cond_init(&s->finished, NULL);
	}
	for (uint32_t i = 0; i < n; ++i) {
		if (pthread_create(&p->slot[i].thread, NULL, pool_thread, &p->slot[i]) != 0) {
			pool_free(p, mem);
			return NULL;
		}
		p->slot[i].started = true;
	}
	return p;
}

pbd_status pbd_exec_init(pbd_exec* e, pbd_alloc_ctx* mem, uint32_t threads, pbd_enqueue_task_fn* enqueue,
                         pbd_finish_task_fn* finish, void* user) {
	memset(e, 0, sizeof *e);
	e->threads = threads < 1 ? 1 : threads;
	e->block_constraints = PBD_BLOCK_CONSTRAINTS;
	e->block_particles = PBD_BLOCK_PARTICLES;
	e->min_blocks = PBD_EXEC_MIN_BLOCKS;
	for (int i = 0; i < PBD_MAX_THREADS; ++i) {
		atomic_init(&e->share[i].claim, 0);
		atomic_init(&e->share[i].done, 0);
	}
	atomic_init(&e->sync, 0);
	atomic_init(&e->quit, 0);
	atomic_init(&e->sleepers, 0);
	atomic_init(&e->env_gen, 0);
	atomic_init(&e->chain, NULL);
	pthread_mutex_init(&e->sleep_lock, NULL);
	pthread_cond_init(&e->sleep_wake, NULL);
	if (e->threads == 1) return PBD_OK;
	const size_t chain_bytes = (size_t)PBD_CHAIN_MAX_STAGES * e->threads * sizeof(pbd_exec_share);
	e->chain_mem = pbd_alloc(mem, chain_bytes + 64);
	if (!e->chain_mem) {
		e->threads = 1;
		return PBD_ERR_OUT_OF_MEMORY;
	}
	e->chain_share = (pbd_exec_share*)(void*)(((uintptr_t)e->chain_mem + 63) & ~(uintptr_t)63);
	for (size_t i = 0; i < (size_t)PBD_CHAIN_MAX_STAGES * e->threads; ++i) {
		atomic_init(&e->chain_share[i].claim, 0);
		atomic_init(&e->chain_share[i].done, 0);
	}
	if (enqueue && finish) {
		e->enqueue = enqueue;
		e->finish = finish;
		e->user = user;
		return PBD_OK;
	}
	e->pool = pool_create(mem, e->threads - 1);
	if (!e->pool) {
		pbd_free(mem, e->chain_mem, chain_bytes + 64);
		e->chain_mem = NULL;
		e->chain_share = NULL;
		e->threads = 1;
		return PBD_ERR_OUT_OF_MEMORY;
	}
	e->enqueue = pool_enqueue;
	e->finish = pool_finish;
	e->user = e->pool;
	return PBD_OK;
}

static void quit_workers(pbd_exec* e);

void pbd_exec_free(pbd_exec* e, pbd_alloc_ctx* mem) {
	e->stepping = false;
	quit_workers(e);
	pthread_mutex_destroy(&e->sleep_lock);
	pthread_cond_destroy(&e->sleep_wake);
	pool_free(e->pool, mem);
	e->pool = NULL;
	if (e->chain_mem)
		pbd_free(mem, e->chain_mem, (size_t)PBD_CHAIN_MAX_STAGES * e->threads * sizeof(pbd_exec_share) + 64);
	e->chain_mem = NULL;
	e->chain_share = NULL;
	e->threads = 1;
}

static void set_fp_env(const fenv_t* env, uint32_t mxcsr) {
	fesetenv(env);
#ifdef PBD_X86
	_mm_setcsr(mxcsr);
#else
	(void)mxcsr;
#endif
}

/* Takes the caller's floating-point environment on a worker after a claim (see run_share). */
static inline void take_env(pbd_exec* e, uint32_t worker, uint32_t* env_seen) {
	if (!worker) return;
	const uint32_t env = atomic_load_explicit(&e->env_gen, memory_order_relaxed);
	if (env != *env_seen) {
		set_fp_env(&e->fenv, e->mxcsr);
		*env_seen = env;
	}
}

/* Claims blocks of a share of stage `gen`: half of what is left for the share's owner, one for the
 * others. Returns false when none is left or the stage announced is another one; else the claimed
 * blocks are [*first, *first + *take). A worker takes up the caller's floating-point environment
 * after a claim succeeded: the caller is still in that stage then, and cannot be writing the
 * environment of its next step. */
static bool claim_blocks(pbd_exec* e, _Atomic uint64_t* claim, uint32_t gen, uint32_t worker, bool own,
                         uint32_t* env_seen, uint32_t* first, uint32_t* take) {
	uint64_t c = atomic_load_explicit(claim, memory_order_acquire);
	for (;;) {
		const uint32_t end = (uint32_t)(c >> 16) & 0xffffu, next = (uint32_t)c & 0xffffu;
		if ((uint32_t)(c >> 32) != gen || next >= end) return false;
		const uint32_t n = own ? (end - next + 1) / 2 : 1;
		if (atomic_compare_exchange_weak_explicit(claim, &c, c + n, memory_order_acq_rel, memory_order_acquire)) {
			take_env(e, worker, env_seen);
			*first = next;
			*take = n;
			return true;
		}
	}
}

/* Runs the blocks of one share of stage `gen` until none is left, and returns how many it ran. */
static uint32_t run_share(pbd_exec* e, _Atomic uint64_t* claim, uint32_t gen, uint32_t worker, bool own,
                          uint32_t* env_seen) {
	uint32_t ran = 0, first, take;
	while (claim_blocks(e, claim, gen, worker, own, env_seen, &first, &take)) {
		for (uint32_t b = first; b < first + take; ++b) e->fn(e->ctx, b, worker);
		ran += take;
	}
	return ran;
}

/* The thread's own share, then the others' in turn; returns the blocks it ran. */
static uint32_t run_blocks(pbd_exec* e, uint32_t gen, uint32_t worker, uint32_t* env_seen) {
	uint32_t ran = 0;
	for (uint32_t k = 0; k < e->threads; ++k)
		ran += run_share(e, &e->share[(worker + k) % e->threads].claim, gen, worker, k == 0, env_seen);
	return ran;
}

static inline void spin_wait(uint32_t* spin) {
	if (++*spin < SPINS_BEFORE_YIELD)
		cpu_relax();
	else
		sched_yield();
}

/* Whether every block of stage s of chain gen is done. */
static bool stage_done(const pbd_chain* c, uint32_t s, uint32_t gen) {
	for (uint32_t b = c->first[s]; b < c->first[s + 1]; ++b)
		if (atomic_load_explicit(&c->flag[b], memory_order_acquire) != gen) return false;
	return true;
}

/* Runs chain block b of stage s once what it depends on is done: every stage before s - 1
 * (*complete counts the stages this thread saw done) and its blocks of stage s - 1. A thread
 * waits here only on blocks claimed already: it moves to a stage after finding none of the
 * previous one left to claim, so the blocks waited for are all running or done. */
static void run_chain_block(const pbd_chain* c, uint32_t gen, uint32_t s, uint32_t b, uint32_t worker,
                            uint32_t* complete) {
	uint32_t spin = 0;
	while (*complete + 1 < s) {
		if (stage_done(c, *complete, gen))
			++*complete;
		else
			spin_wait(&spin);
	}
	if (s > 0)
		for (uint32_t d = c->dep_first[b]; d <= c->dep_last[b]; ++d)
			while (atomic_load_explicit(&c->flag[d], memory_order_acquire) != gen) spin_wait(&spin);
	c->fn(c->ctx[s], b - c->first[s], worker);
	atomic_store_explicit(&c->flag[b], gen, memory_order_release);
}

/* One share of stage s of the chain of `gen`, claimed as in run_share. The chain itself is read
 * only once a claim succeeded. Every thread goes through its share front to back, so that the
 * blocks it waits for at the start of a stage are the other threads' last of the one before (a
 * share walked from the back, which would wait least, lost 8 % on a 256^2 cloth to its caches). */
static uint32_t run_chain_share(pbd_exec* e, uint32_t gen, uint32_t s, uint32_t share, uint32_t worker,
                                uint32_t* complete, uint32_t* env_seen) {
	_Atomic uint64_t* claim = &e->chain_share[s * e->threads + share].claim;
	uint32_t ran = 0, first, take;
	while (claim_blocks(e, claim, gen, worker, share == worker, env_seen, &first, &take)) {
		const pbd_chain* c = atomic_load_explicit(&e->chain, memory_order_relaxed);
		for (uint32_t k = first; k < first + take; ++k) run_chain_block(c, gen, s, c->first[s] + k, worker, complete);
		ran += take;
	}
	return ran;
}

/* The stages of the chain of `gen` in order (as many as have their claim words in that gen),
 * each: the thread's own share, then the others'. Returns the blocks it ran. */
static uint32_t run_chain(pbd_exec* e, uint32_t gen, uint32_t worker, uint32_t* env_seen) {
	uint32_t ran = 0, complete = 0;
	for (uint32_t s = 0; s < PBD_CHAIN_MAX_STAGES; ++s) {
		const uint64_t v = atomic_load_explicit(&e->chain_share[s * e->threads + worker].claim, memory_order_acquire);
		if ((uint32_t)(v >> 32) != gen) break;
		for (uint32_t k = 0; k < e->threads; ++k)
			ran += run_chain_share(e, gen, s, (worker + k) % e->threads, worker, &complete, env_seen);
	}
	return ran;
}

/* Waits until a stage after `seen` is announced (or the workers are told to quit). A worker
 * watches its own share's claim word, which the announcement writes first, so that it learns of
 * a stage in one transfer of a cache line. A worker of the built-in pool that waited
 * IDLE_BEFORE_SLEEP_NS sleeps on the condition variable until sync moves (announce wakes it). */
static void wait_stage(pbd_exec* e, uint32_t index, uint32_t seen) {
	const _Atomic uint64_t* claim = &e->share[index].claim;
	uint64_t since = 0;
	for (uint32_t spin = 0;; ++spin) {
		if ((uint32_t)(atomic_load_explicit(claim, memory_order_relaxed) >> 32) != seen ||
		    atomic_load_explicit(&e->sync, memory_order_relaxed) != seen)
			return;
		if (spin < SPINS_BEFORE_YIELD) {
			cpu_relax();
			continue;
		}
		sched_yield();
		if (!e->pool || spin % 16 != 0) continue;
		const uint64_t now = pbd_clock_ns();
		if (!since) since = now;
		if (now - since < IDLE_BEFORE_SLEEP_NS) continue;
		/* sleepers, then sync, both sequentially consistent, against pbd_exec_stage's sync, then
		 * sleepers: either it sees this thread asleep and wakes it, or this thread sees the stage */
		pthread_mutex_lock(&e->sleep_lock);
		atomic_fetch_add(&e->sleepers, 1);
		while (atomic_load(&e->sync) == seen) pthread_cond_wait(&e->sleep_wake, &e->sleep_lock);
		atomic_fetch_sub(&e->sleepers, 1);
		pthread_mutex_unlock(&e->sleep_lock);
		return;
	}
}

static void worker_main(void* arg) {
	pbd_exec_worker* wk = (pbd_exec_worker*)arg;
	pbd_exec* e = wk->exec;
	/* Run inline by the game's enqueue, before the stages exist: the calling thread will do
	 * the blocks itself. */
	if (pthread_equal(pthread_self(), e->caller)) return;
	fenv_t own;
	fegetenv(&own);
#ifdef PBD_X86
	const uint32_t own_csr = _mm_getcsr();
#else
	const uint32_t own_csr = 0;
#endif
	uint32_t seen = 0, env_seen = 0;
	for (;;) {
		/* the stage from the thread's own share: acquired, it brings fn, ctx, the environment
		 * and quit as they were when the stage was announced */
		const uint32_t g = (uint32_t)(atomic_load_explicit(&e->share[wk->index].claim, memory_order_acquire) >> 32);
		if (atomic_load_explicit(&e->quit, memory_order_relaxed)) break;
		if (g != seen) {
			uint32_t ran = run_blocks(e, g, wk->index, &env_seen);
			if (atomic_load_explicit(&e->chain, memory_order_relaxed)) ran += run_chain(e, g, wk->index, &env_seen);
			atomic_store_explicit(&e->share[wk->index].done, (uint64_t)g << 32 | ran, memory_order_release);
			seen = g;
			continue;
		}
		wait_stage(e, wk->index, seen);
	}
	set_fp_env(&own, own_csr);
}

/* At a step's first stage: the caller's floating-point environment for the workers, and the
 * workers themselves, enqueued for the step, or (the built-in pool's) still there from the last. */
static void start_step(pbd_exec* e) {
	/* The environment without its raised flags: loading a raised, unmasked x87 flag would trap
	 * at the worker's next x87 instruction. */
	fexcept_t flags;
	fegetexceptflag(&flags, FE_ALL_EXCEPT);
	feclearexcept(FE_ALL_EXCEPT);
	fegetenv(&e->fenv);
	fesetexceptflag(&flags, FE_ALL_EXCEPT);
#ifdef PBD_X86
	e->mxcsr = _mm_getcsr() & ~0x3fu;
#endif
	/* released by the stage's announcement, before which no worker reads the environment */
	atomic_store_explicit(&e->env_gen, atomic_load_explicit(&e->env_gen, memory_order_relaxed) + 1,
	                      memory_order_relaxed);
	e->stepping = true;
	if (e->running) return;
	e->caller = pthread_self();
	atomic_store_explicit(&e->quit, 0, memory_order_relaxed);
	e->running = true;
	for (uint32_t i = 1; i < e->threads; ++i) {
		e->workers[i].exec = e;
		e->workers[i].index = i;
		e->handles[i] = e->enqueue(worker_main, &e->workers[i], e->user);
	}
}

/* Publishes stage e->gen, whose claim words are written, and wakes the workers that sleep. */
static void announce(pbd_exec* e) {
	atomic_store(&e->sync, e->gen);
	if (atomic_load(&e->sleepers)) {
		pthread_mutex_lock(&e->sleep_lock);
		pthread_cond_broadcast(&e->sleep_wake);
		pthread_mutex_unlock(&e->sleep_lock);
	}
}

/* Waits until the blocks the threads report for stage gen add up to count, own being the
 * caller's: each thread reports once, when it found no block left, so none is running then. */
static void wait_done(pbd_exec* e, uint32_t own, uint32_t count) {
	for (uint32_t spin = 0;;) {
		uint32_t finished = own;
		for (uint32_t i = 1; i < e->threads; ++i) {
			const uint64_t d = atomic_load_explicit(&e->share[i].done, memory_order_acquire);
			if ((uint32_t)(d >> 32) == e->gen) finished += (uint32_t)d;
		}
		if (finished == count) return;
		spin_wait(&spin);
	}
}

void pbd_exec_stage(pbd_exec* e, pbd_stage_fn* fn, void* ctx, uint32_t count) {
	if (e->threads <= 1 || count <= 1 || count < e->min_blocks || count > PBD_EXEC_MAX_BLOCKS) {
		for (uint32_t b = 0; b < count; ++b) fn(ctx, b, 0);
		return;
	}
	if (!e->stepping) start_step(e);
	e->fn = fn;
	e->ctx = ctx;
	atomic_store_explicit(&e->chain, NULL, memory_order_relaxed);
	if (++e->gen == 0) e->gen = 1; /* 0 is what a worker has seen before its first stage */
	for (uint32_t i = 0; i < e->threads; ++i) {
		const uint64_t begin = (uint64_t)count * i / e->threads, end = (uint64_t)count * (i + 1) / e->threads;
		atomic_store_explicit(&e->share[i].claim, (uint64_t)e->gen << 32 | end << 16 | begin, memory_order_release);
	}
	announce(e);
	uint32_t unused = 0;
	wait_done(e, run_blocks(e, e->gen, 0, &unused), count);
}

void pbd_exec_chain(pbd_exec* e, const pbd_chain* c) {
	const uint32_t total = c->first[c->stages] - c->first[0];
	bool small = true;
	for (uint32_t s = 0; s < c->stages; ++s)
		if (c->first[s + 1] - c->first[s] > PBD_EXEC_MAX_BLOCKS) small = false;
	if (e->threads <= 1 || !e->chain_share || c->stages > PBD_CHAIN_MAX_STAGES || !small || total < e->min_blocks) {
		for (uint32_t s = 0; s < c->stages; ++s)
			for (uint32_t b = c->first[s]; b < c->first[s + 1]; ++b) c->fn(c->ctx[s], b - c->first[s], 0);
		return;
	}
	if (!e->stepping) start_step(e);
	atomic_store_explicit(&e->chain, c, memory_order_relaxed);
	if (++e->gen == 0) e->gen = 1;
	for (uint32_t s = 0; s < c->stages; ++s) {
		const uint64_t count = c->first[s + 1] - c->first[s];
		for (uint32_t i = 0; i < e->threads; ++i) {
			const uint64_t begin = count * i / e->threads, end = count * (i + 1) / e->threads;
			atomic_store_explicit(&e->chain_share[s * e->threads + i].claim, (uint64_t)e->gen << 32 | end << 16 | begin,
			                      memory_order_release);
		}
	}
	/* the threads' own words, which they watch, announce it with nothing to claim there */
	for (uint32_t i = 0; i < e->threads; ++i)
		atomic_store_explicit(&e->share[i].claim, (uint64_t)e->gen << 32, memory_order_release);
	announce(e);
	uint32_t unused = 0;
	wait_done(e, run_chain(e, e->gen, 0, &unused), total);
}

/* The workers return and are finished. */
static void quit_workers(pbd_exec* e) {
	if (!e->running) return;
	atomic_store_explicit(&e->quit, 1, memory_order_release);
	if (++e->gen == 0) e->gen = 1;
	for (uint32_t i = 0; i < e->threads; ++i)
		atomic_store_explicit(&e->share[i].claim, (uint64_t)e->gen << 32, memory_order_release);
	announce(e);
	for (uint32_t i = 1; i < e->threads; ++i)
		if (e->handles[i]) e->finish(e->handles[i], e->user);
	e->running = false;
}

void pbd_exec_end(pbd_exec* e) {
	e->stepping = false;
	/* The game's tasks end with the step; the built-in pool's threads stay for the next */
	if (!e->pool) quit_workers(e);
}
