/* pbd-soak --diverge: every built-in scene under every method, driven to blow up, to show that a
 * diverged world costs bounded time and memory per step (docs/soak.md, "Diverged worlds").
 *
 * A case is one scene under one method, in its own process: the scene is loaded, its world moved
 * (through a snapshot, bit for bit) onto a counting allocator, a few healthy frames are stepped
 * and timed, then before each diverged frame every free particle is thrown a thousand times the
 * scene's size in a random direction, with the velocity that carries it as far again in the
 * frame. A frame's memory
 * is the peak of the bytes the world held live during it; the first frame's (creation included)
 * is the reference. Its time is the processor time the case's process spent in it, which other
 * work on the machine does not inflate the way it does wall-clock time (reported beside it). A
 * case fails when a diverged frame's peak passes SOAK_DIVERGE_MEMORY times the first frame's, or
 * its time passes SOAK_DIVERGE_TIME times the healthy frame's (the median of the healthy frames
 * after the first) plus SOAK_DIVERGE_SLACK_MS, a floor for the scenes whose steps take
 * microseconds; or when the process crashes or hangs. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS on glibc */

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "counting.h"
#include "pbd/math.h"
#include "pbd/scene.h"
#include "soak.h"

#if !defined(MAP_ANONYMOUS) && defined(MAP_ANON)
#define MAP_ANONYMOUS MAP_ANON
#endif

/* Healthy frames stepped before the kick. */
#define HEALTHY_FRAMES 5
/* The kick: each free particle's velocity gains this many times the scene's size per frame. */
#define KICK_SIZES 1000.0

static double clock_s(clockid_t id) {
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double now_s(void) { return clock_s(CLOCK_MONOTONIC); }
/* The case's own processor time: what its step costs, whatever else the machine runs. */
static double cpu_s(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

static int cmp_double(const void* a, const void* b) {
	const double x = *(const double*)a, y = *(const double*)b;
	return x < y ? -1 : x > y;
}

typedef enum row_status { ROW_OK = 0, ROW_REFUSED, ROW_FAILED, ROW_CRASHED } row_status;

typedef struct diverge_row {
	row_status status;
	uint32_t particles;
	int frames;             /* diverged frames stepped */
	int diverged;           /* of those, the ones the library flagged (diverged or non-finite undone) */
	int natural;            /* healthy frame at which it diverged on its own, 0 when none */
	double healthy_ms;      /* the median healthy frame, processor time */
	double worst_ms;        /* the slowest diverged frame, processor time */
	double healthy_wall_ms; /* the same in wall-clock time */
	double worst_wall_ms;
	double first_bytes;       /* peak live bytes through the first frame */
	double worst_bytes;       /* the largest peak of a diverged frame */
	uint64_t capped, skipped; /* pbd_collision_work totals at the end */
	uint64_t candidates;      /* the most candidates one diverged frame examined */
	char detail[600];
} diverge_row;

static uint64_t flagged(const pbd_world* w) {
	return pbd_world_get_warning(w, PBD_WARN_DIVERGED).count + pbd_world_get_warning(w, PBD_WARN_NONFINITE).count;
}

/* The world of `s` moved onto the counting allocator. False with a message in r->detail. */
static bool rebind(pbd_scene* s, soak_counting* mem, diverge_row* r) {
	pbd_world_def def = pbd_world_def_default();
	def.allocator = soak_counting_allocator(mem, SIZE_MAX);
	pbd_error err;
	if (soak_move_world(&s->world, &def, &err)) return true;
	snprintf(r->detail, sizeof r->detail, "snapshot: %s", err.message);
	return false;
}

/* The diagonal of the box of the particles, at least 0.1 m (a scene of a few particles in a row
 * still flies apart). */
static double scene_size(const pbd_world* w) {
	const uint32_t n = pbd_world_particle_count(w);
	const pbd_vec3* x = pbd_world_positions(w);
	double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
	for (uint32_t i = 0; i < n; ++i) {
		const double p[3] = {(double)x[i].x, (double)x[i].y, (double)x[i].z};
		for (int a = 0; a < 3; ++a) {
			lo[a] = i == 0 || p[a] < lo[a] ? p[a] : lo[a];
			hi[a] = i == 0 || p[a] > hi[a] ? p[a] : hi[a];
		}
	}
	const double size =
	    sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) + (hi[2] - lo[2]) * (hi[2] - lo[2]));
	return size > 0.1 ? size : 0.1;
}

/* Every free particle is thrown KICK_SIZES times `size` in a random direction and given the
 * velocity that carries it as far again in one frame: the state of a world that blew up, whatever
 * the method (an implicit one takes a velocity kick alone in its stride). */
static void kick(pbd_world* w, uint64_t seed, double size) {
	const uint32_t n = pbd_world_particle_count(w);
	const double reach = KICK_SIZES * size, speed = reach / (double)pbd_world_get_def(w).dt;
	soak_rng rng;
	soak_rng_seed(&rng, seed);
	for (uint32_t i = 0; i < n; ++i) {
		if (pbd_particle_is_pinned(w, i)) continue;
		/* uniform on the sphere: z uniform in [-1, 1], the angle around z uniform */
		const double z = soak_rng_range(&rng, -1, 1), a = soak_rng_range(&rng, 0, 6.283185307179586);
		const double d[3] = {sqrt(1 - z * z) * cos(a), sqrt(1 - z * z) * sin(a), z};
		const pbd_vec3 x = pbd_world_positions(w)[i], v = pbd_world_velocities(w)[i];
		const pbd_vec3 nx =
		    pbd_v3_add(x, pbd_v3((pbd_real)(reach * d[0]), (pbd_real)(reach * d[1]), (pbd_real)(reach * d[2])));
		const pbd_vec3 nv =
		    pbd_v3_add(v, pbd_v3((pbd_real)(speed * d[0]), (pbd_real)(speed * d[1]), (pbd_real)(speed * d[2])));
		pbd_world_set_positions(w, i, 1, &nx);
		pbd_world_set_velocities(w, i, 1, &nv);
	}
}

static void run_case(const char* scene, pbd_method method, int frames, diverge_row* r) {
	memset(r, 0, sizeof *r);
	pbd_scene s;
	pbd_scene_error err;
	if (!pbd_scene_load_builtin(scene, NULL, &s, &err)) {
		r->status = ROW_FAILED;
		snprintf(r->detail, sizeof r->detail, "%s", err.message);
		return;
	}
	soak_counting mem;
	if (!rebind(&s, &mem, r)) {
		r->status = ROW_FAILED;
		pbd_scene_free(&s);
		return;
	}
	pbd_world* w = s.world;
	r->particles = pbd_world_particle_count(w);
	if (pbd_world_set_method(w, method) != PBD_OK) {
		r->status = ROW_REFUSED;
		snprintf(r->detail, sizeof r->detail, "%s", pbd_world_last_error(w));
		pbd_scene_free(&s);
		return;
	}
	double healthy[HEALTHY_FRAMES], healthy_wall[HEALTHY_FRAMES], first_ms = 0, first_wall_ms = 0;
	int nh = 0;
	for (int f = 1; f <= HEALTHY_FRAMES; ++f) {
		const uint64_t before = flagged(w);
		const double t0 = now_s(), c0 = cpu_s();
		const pbd_status st = pbd_scene_step(&s);
		const double ms = (cpu_s() - c0) * 1e3, wall_ms = (now_s() - t0) * 1e3;
		if (st != PBD_OK) {
			/* a method without a force model for one of the scene's families is refused at the step */
			r->status = ROW_REFUSED;
			snprintf(r->detail, sizeof r->detail, "%s", pbd_world_last_error(w));
			pbd_scene_free(&s);
			return;
		}
		if (f == 1) {
			r->first_bytes = (double)mem.peak;
			first_ms = ms;
			first_wall_ms = wall_ms;
		}
		if (flagged(w) != before) {
			if (!r->natural) r->natural = f;
		} else if (!r->natural && f > 1) {
			healthy_wall[nh] = wall_ms;
			healthy[nh++] = ms; /* the frames before it diverged on its own */
		}
	}
	/* The first frame builds what the method needs once (colouring, factorisations): it stands for
	 * the healthy frame only when no later one is healthy. */
	qsort(healthy, (size_t)nh, sizeof *healthy, cmp_double);
	qsort(healthy_wall, (size_t)nh, sizeof *healthy_wall, cmp_double);
	r->healthy_ms = nh ? healthy[nh / 2] : first_ms;
	r->healthy_wall_ms = nh ? healthy_wall[nh / 2] : first_wall_ms;

	const double size = scene_size(w);
	for (int f = 1; f <= frames; ++f) {
		/* every frame starts flung apart again, so that none of them is a recovered one */
		kick(w, ((uint64_t)method << 32) + (uint64_t)f, size);
		const uint64_t before = flagged(w);
		mem.peak = mem.live;
		const double t0 = now_s(), c0 = cpu_s();
		const pbd_status st = pbd_scene_step(&s);
		const double ms = (cpu_s() - c0) * 1e3, wall_ms = (now_s() - t0) * 1e3;
		if (st != PBD_OK) {
			r->status = ROW_FAILED;
			snprintf(r->detail, sizeof r->detail, "diverged frame %d: %s", f, pbd_world_last_error(w));
			break;
		}
		r->frames = f;
		r->diverged += flagged(w) != before;
		if (ms > r->worst_ms) r->worst_ms = ms;
		if (wall_ms > r->worst_wall_ms) r->worst_wall_ms = wall_ms;
		if ((double)mem.peak > r->worst_bytes) r->worst_bytes = (double)mem.peak;
		const pbd_collision_work k = pbd_world_get_collision_work(w);
		if (k.candidates > r->candidates) r->candidates = k.candidates;
	}
	const pbd_collision_work k = pbd_world_get_collision_work(w);
	r->capped = k.capped_total;
	r->skipped = k.skipped_total;
	pbd_scene_free(&s);
}

/* Runs a case in a child process whose result lands in shared memory: a crash or a hang is one
 * failed row. */
static void run_isolated(const char* scene, pbd_method method, int frames, double timeout, diverge_row* shared,
                         diverge_row* out) {
	memset(shared, 0, sizeof *shared);
	fflush(NULL);
	const pid_t pid = fork();
	if (pid < 0) {
		memset(out, 0, sizeof *out);
		out->status = ROW_CRASHED;
		snprintf(out->detail, sizeof out->detail, "fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		alarm((unsigned)ceil(timeout));
		run_case(scene, method, frames, shared);
		_exit(0);
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
	}
	*out = *shared;
	if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0)) {
		out->status = ROW_CRASHED;
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
			snprintf(out->detail, sizeof out->detail, "still running after %g s, at diverged frame %d", timeout,
			         out->frames + 1);
		else if (WIFSIGNALED(status))
			snprintf(out->detail, sizeof out->detail, "killed by signal %d (%s) at diverged frame %d", WTERMSIG(status),
			         strsignal(WTERMSIG(status)), out->frames + 1);
		else
			snprintf(out->detail, sizeof out->detail, "exited with status %d (its report is above)",
			         WEXITSTATUS(status));
	}
}

static void bytes_text(double b, char* out, size_t size) {
	if (b >= 1024.0 * 1024.0)
		snprintf(out, size, "%.1f MiB", b / (1024.0 * 1024.0));
	else
		snprintf(out, size, "%.0f KiB", b / 1024.0);
}

static void csv_quoted(FILE* f, const char* text) {
	fputc('"', f);
	for (; *text; ++text) {
		if (*text == '"') fputc('"', f);
		fputc(*text, f);
	}
	fputc('"', f);
}

/* The worst ratio so far and its case. */
typedef struct worst {
	double ratio;
	char label[96];
} worst;

static void keep_worst(worst* w, double ratio, const char* scene, pbd_method m) {
	if (!(ratio > w->ratio)) return;
	w->ratio = ratio;
	snprintf(w->label, sizeof w->label, "%s / %s", scene, pbd_method_name(m));
}

int soak_diverge(int frames, double case_timeout, const char* only, const char* csv_path, bool verbose) {
	FILE* csv = NULL;
	if (csv_path) {
		csv = fopen(csv_path, "w");
		if (!csv) {
			fprintf(stderr, "pbd-soak: %s: %s\n", csv_path, strerror(errno));
			return 1;
		}
		fputs("scene,method,particles,result,natural_divergence,frames,flagged,healthy_ms,worst_ms,time_ratio,"
		      "healthy_wall_ms,worst_wall_ms,wall_ratio,first_bytes,worst_bytes,memory_ratio,capped,skipped,"
		      "candidates,detail\n",
		      csv);
	}
	void* p = mmap(NULL, sizeof(diverge_row), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "pbd-soak: mmap: %s\n", strerror(errno));
		if (csv) fclose(csv);
		return 1;
	}
	diverge_row* shared = (diverge_row*)p;
	printf("pbd-soak --diverge: pbd %s (%s), every built-in scene under every method: %d healthy frames, then every "
	       "free particle kicked %g scene sizes per frame, and %d diverged frames\n"
	       "bounds: a diverged frame's peak memory <= %g x the first frame's; its processor time <= %g x the healthy "
	       "frame's + %g ms\n\n",
	       pbd_version(), sizeof(pbd_real) == sizeof(double) ? "double" : "float", HEALTHY_FRAMES, KICK_SIZES, frames,
	       SOAK_DIVERGE_MEMORY, SOAK_DIVERGE_TIME, SOAK_DIVERGE_SLACK_MS);
	printf("%-22s %-19s %5s %9s %9s %6s %6s %9s %9s %5s %7s %7s  %s\n", "scene", "method", "parts", "healthy",
	       "diverged", "time x", "wall x", "1st frame", "diverged", "mem x", "flagged", "skipped", "result");
	const double t_start = now_s();
	int rows = 0, failed = 0, refused = 0, not_diverged = 0;
	worst time = {0, ""}, wall = {0, ""}, mem = {0, ""};
	for (size_t i = 0; i < pbd_scene_builtin_count(); ++i) {
		const char* scene = pbd_scene_builtin_at(i)->name;
		if (only && strcmp(only, scene) != 0) continue;
		for (int m = 0; m < PBD_METHOD_COUNT; ++m) {
			diverge_row r;
			run_isolated(scene, (pbd_method)m, frames, case_timeout, shared, &r);
			rows++;
			const double bound_ms = SOAK_DIVERGE_TIME * r.healthy_ms + SOAK_DIVERGE_SLACK_MS;
			const double time_ratio = r.healthy_ms > 0 ? r.worst_ms / r.healthy_ms : 0;
			const double wall_ratio = r.healthy_wall_ms > 0 ? r.worst_wall_ms / r.healthy_wall_ms : 0;
			const double mem_ratio = r.first_bytes > 0 ? r.worst_bytes / r.first_bytes : 0;
			const char* result = "ok";
			if (r.status == ROW_REFUSED) {
				result = "method refused";
				refused++;
			} else if (r.status != ROW_OK) {
				result = "FAIL";
			} else if (mem_ratio > SOAK_DIVERGE_MEMORY) {
				result = "FAIL: memory";
				snprintf(r.detail, sizeof r.detail, "peak %.0f bytes, %.2f x the first frame's", r.worst_bytes,
				         mem_ratio);
			} else if (r.worst_ms > bound_ms) {
				result = "FAIL: time";
				snprintf(r.detail, sizeof r.detail, "a diverged frame took %.2f ms of processor time, over %.2f ms",
				         r.worst_ms, bound_ms);
			} else if (!r.diverged && !r.natural) {
				result = "ok, not diverged";
			}
			const bool bad = strncmp(result, "FAIL", 4) == 0;
			failed += bad;
			if (r.status == ROW_OK) {
				not_diverged += !r.diverged && !r.natural;
				keep_worst(&time, time_ratio, scene, (pbd_method)m);
				keep_worst(&wall, wall_ratio, scene, (pbd_method)m);
				keep_worst(&mem, mem_ratio, scene, (pbd_method)m);
			}
			if (verbose || bad || r.status != ROW_REFUSED) {
				char b0[32], b1[32], fl[16];
				bytes_text(r.first_bytes, b0, sizeof b0);
				bytes_text(r.worst_bytes, b1, sizeof b1);
				snprintf(fl, sizeof fl, "%d/%d%s", r.diverged, r.frames, r.natural ? "*" : "");
				printf("%-22s %-19s %5u %6.2f ms %6.2f ms %6.2f %6.2f %9s %9s %5.2f %7s %7llu  %s\n", scene,
				       pbd_method_name((pbd_method)m), r.particles, r.healthy_ms, r.worst_ms, time_ratio, wall_ratio,
				       b0, b1, mem_ratio, fl, (unsigned long long)r.skipped, result);
				if (r.detail[0] && (bad || verbose)) printf("    %s\n", r.detail);
			}
			if (csv) {
				fprintf(csv, "%s,%s,%u,%s,%d,%d,%d,%.4f,%.4f,%.3f,%.4f,%.4f,%.3f,%.0f,%.0f,%.3f,%llu,%llu,%llu,", scene,
				        pbd_method_name((pbd_method)m), r.particles, result, r.natural, r.frames, r.diverged,
				        r.healthy_ms, r.worst_ms, time_ratio, r.healthy_wall_ms, r.worst_wall_ms, wall_ratio,
				        r.first_bytes, r.worst_bytes, mem_ratio, (unsigned long long)r.capped,
				        (unsigned long long)r.skipped, (unsigned long long)r.candidates);
				csv_quoted(csv, r.detail);
				fputc('\n', csv);
				fflush(csv);
			}
		}
	}
	munmap(p, sizeof(diverge_row));
	printf("\n%d cases: %d refused by the method, %d not flagged diverged, %d failed; %.1f s\n", rows, refused,
	       not_diverged, failed, now_s() - t_start);
	printf("worst memory ratio %.2f (%s); worst time ratio %.2f (%s); worst wall-clock ratio %.2f (%s)\n", mem.ratio,
	       mem.label, time.ratio, time.label, wall.ratio, wall.label);
	printf("time: processor time of the case's process per frame; flagged: the diverged frames the library "
	       "reported (* when the scene diverged on its own before the kick)\n");
	printf("result: %s\n", failed ? "FAIL" : "pass");
	if (csv && fclose(csv) != 0) {
		fprintf(stderr, "pbd-soak: %s: %s\n", csv_path, strerror(errno));
		return 1;
	}
	return failed ? 1 : 0;
}
