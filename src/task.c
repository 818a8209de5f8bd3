/* Stages of blocks on several threads (task.h), and the built-in pool of POSIX threads. */
#include "task.h"

#include <sched.h>
#include <string.h>

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

/* The built-in pool: one slot per thread, each holding at most one task. The executor enqueues
 * one task per slot per step and finishes them all before the next, so a slot never queues. */
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
	for (int i = 0; i < PBD_MAX_THREADS; ++i) atomic_init(&e->share[i].claim, 0);
	atomic_init(&e->done, 0);
	atomic_init(&e->sync, 0);
	atomic_init(&e->quit, 0);
	if (e->threads == 1) return PBD_OK;
	if (enqueue && finish) {
		e->enqueue = enqueue;
		e->finish = finish;
		e->user = user;
		return PBD_OK;
	}
	e->pool = pool_create(mem, e->threads - 1);
	if (!e->pool) {
		e->threads = 1;
		return PBD_ERR_OUT_OF_MEMORY;
	}
	e->enqueue = pool_enqueue;
	e->finish = pool_finish;
	e->user = e->pool;
	return PBD_OK;
}

void pbd_exec_free(pbd_exec* e, pbd_alloc_ctx* mem) {
	pbd_exec_end(e);
	pool_free(e->pool, mem);
	e->pool = NULL;
	e->threads = 1;
}

/* Claims and runs the blocks of one share of stage `gen` until none is left; returns at once when
 * the stage announced is another one. */
static void run_share(pbd_exec* e, _Atomic uint64_t* claim, uint32_t gen, uint32_t worker) {
	uint64_t c = atomic_load_explicit(claim, memory_order_acquire);
	for (;;) {
		const uint32_t end = (uint32_t)(c >> 16) & 0xffffu, next = (uint32_t)c & 0xffffu;
		if ((uint32_t)(c >> 32) != gen || next >= end) return;
		if (!atomic_compare_exchange_weak_explicit(claim, &c, c + 1, memory_order_acq_rel, memory_order_acquire))
			continue;
		e->fn(e->ctx, next, worker);
		atomic_fetch_add_explicit(&e->done, 1, memory_order_release);
		c = atomic_load_explicit(claim, memory_order_acquire);
	}
}

/* The thread's own share, then the others' in turn. */
static void run_blocks(pbd_exec* e, uint32_t gen, uint32_t worker) {
	for (uint32_t k = 0; k < e->threads; ++k) run_share(e, &e->share[(worker + k) % e->threads].claim, gen, worker);
}

static void set_fp_env(const fenv_t* env, uint32_t mxcsr) {
	fesetenv(env);
#ifdef PBD_X86
	_mm_setcsr(mxcsr);
#else
	(void)mxcsr;
#endif
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
	set_fp_env(&e->fenv, e->mxcsr);
	uint32_t seen = 0;
	for (;;) {
		const uint32_t s = atomic_load_explicit(&e->sync, memory_order_acquire);
		if (atomic_load_explicit(&e->quit, memory_order_acquire)) break;
		if (s != seen) {
			run_blocks(e, s, wk->index);
			seen = s;
			continue;
		}
		for (int spin = 0; atomic_load_explicit(&e->sync, memory_order_relaxed) == seen; ++spin) {
			if (spin < SPINS_BEFORE_YIELD)
				cpu_relax();
			else
				sched_yield();
		}
	}
	set_fp_env(&own, own_csr);
}

static void start_workers(pbd_exec* e) {
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
	e->caller = pthread_self();
	atomic_store_explicit(&e->quit, 0, memory_order_relaxed);
	e->running = true;
	for (uint32_t i = 1; i < e->threads; ++i) {
		e->workers[i].exec = e;
		e->workers[i].index = i;
		e->handles[i] = e->enqueue(worker_main, &e->workers[i], e->user);
	}
}

void pbd_exec_stage(pbd_exec* e, pbd_stage_fn* fn, void* ctx, uint32_t count) {
	if (e->threads <= 1 || count <= 1 || count < e->min_blocks || count > PBD_EXEC_MAX_BLOCKS) {
		for (uint32_t b = 0; b < count; ++b) fn(ctx, b, 0);
		return;
	}
	if (!e->running) start_workers(e);
	e->fn = fn;
	e->ctx = ctx;
	atomic_store_explicit(&e->done, 0, memory_order_relaxed);
	if (++e->gen == 0) e->gen = 1; /* 0 is what a worker has seen before its first stage */
	for (uint32_t i = 0; i < e->threads; ++i) {
		const uint64_t begin = (uint64_t)count * i / e->threads, end = (uint64_t)count * (i + 1) / e->threads;
		atomic_store_explicit(&e->share[i].claim, (uint64_t)e->gen << 32 | end << 16 | begin, memory_order_release);
	}
	atomic_store_explicit(&e->sync, e->gen, memory_order_release);
	run_blocks(e, e->gen, 0);
	for (int spin = 0; atomic_load_explicit(&e->done, memory_order_acquire) != count; ++spin) {
		if (spin < SPINS_BEFORE_YIELD)
			cpu_relax();
		else
			sched_yield();
	}
}

void pbd_exec_end(pbd_exec* e) {
	if (!e->running) return;
	atomic_store_explicit(&e->quit, 1, memory_order_release);
	if (++e->gen == 0) e->gen = 1;
	atomic_store_explicit(&e->sync, e->gen, memory_order_release);
	for (uint32_t i = 1; i < e->threads; ++i)
		if (e->handles[i]) e->finish(e->handles[i], e->user);
	e->running = false;
}
