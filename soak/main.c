/* pbd-soak: runs every built-in scene and a stream of random worlds, each in its own process so
 * that a crash is one reported case and not the end of the soak, and sums up what happened.
 * docs/soak.md describes the checks, the classes and the last long run. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS on glibc */

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pbd/scene.h"
#include "soak.h"

#if !defined(MAP_ANONYMOUS) && defined(MAP_ANON)
#define MAP_ANONYMOUS MAP_ANON
#endif

enum { EXIT_PASS = 0, EXIT_BUG = 1, EXIT_USAGE = 2 };

typedef struct options {
	uint64_t seed;
	long cases; /* 0 = no limit (with a time budget) */
	bool cases_given;
	long steps;
	long frames; /* cap on the built-in scenes' frames, 0 = their own */
	double seconds;
	bool scenes, random;
	const char* csv;
	bool verbose;
	bool fork;
	double case_timeout;
	double max_work;
	soak_inject inject;
	bool diverge;      /* --diverge: the diverged-world sweep instead (diverge.c) */
	const char* scene; /* --scene: that built-in scene alone */
} options;

static void print_help(FILE* fp) {
	fputs("Usage: pbd-soak [options]\n"
	      "\n"
	      "Runs every built-in scene and random worlds (settings, cloths, ropes, particle clusters, pins,\n"
	      "colliders, targets, forces and changes while running, all drawn from a seed), each case in its\n"
	      "own process, and checks after every step: positions and velocities finite or the library's\n"
	      "non-finite warning raised, pinned particles bit-for-bit still, max strain and warnings.\n"
	      "\n"
	      "Options:\n"
	      "  --seed S          seed of the first random case; case k uses S + k (default 1)\n"
	      "  --cases N         random cases to run (default 1000; no limit with --seconds unless given;\n"
	      "                    0 = no limit)\n"
	      "  --steps N         steps of each random case (default 200)\n"
	      "  --frames N        cap on the frames of each built-in scene (default: the scene's own)\n"
	      "  --seconds T       time budget: start no case after T seconds\n"
	      "  --max-work N      constraint projections per step of a random world (default 1048576);\n"
	      "                    smaller values give smaller, faster worlds\n"
	      "  --scenes-only     only the built-in scenes\n"
	      "  --random-only     only random cases\n"
	      "  --csv FILE        one row per case: class, seed, sizes, strain, warnings, time, settings\n"
	      "  -v, --verbose     one line per case\n"
	      "  --case-timeout T  seconds a case may run before it counts as hung (default 120)\n"
	      "  --no-fork         run the cases in this process (for a debugger; a crash ends the soak)\n"
	      "  --inject KIND     plant a fault in every case at step 3, to check that the soak sees it:\n"
	      "                    crash, nan, pinned or hang\n"
	      "  --diverge         instead: every built-in scene under every method, kicked until it blows\n"
	      "                    up; fails when a diverged frame's peak memory passes 4 x the first\n"
	      "                    frame's or its time 10 x the healthy frame's + 2 ms (--frames: diverged\n"
	      "                    frames, default 10; --scene NAME: one scene; --csv: one row per case)\n"
	      "  -h, --help        this text\n"
	      "\n"
	      "Classes: ok; diverged (a non-finite or divergence warning, or max strain > 10: expected of some\n"
	      "random settings, a failure for a built-in scene); and the bugs: nonfinite-unreported,\n"
	      "pinned-moved, refused (the library refused a call within its documented ranges), crash, timeout.\n"
	      "Exit status: 0 no bug, 1 a bug or a diverged built-in scene, 2 bad command line.\n",
	      fp);
}

static int usage(const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

static int usage(const char* fmt, ...) {
	fputs("pbd-soak: ", stderr);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see 'pbd-soak --help')\n", stderr);
	return EXIT_USAGE;
}

static bool parse_long(const char* s, long lo, long hi, long* out) {
	if (!s || !*s || *s == '+' || *s == ' ') return false;
	char* end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi) return false;
	*out = v;
	return true;
}

static bool parse_u64(const char* s, uint64_t* out) {
	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ') return false;
	char* end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end) return false;
	*out = (uint64_t)v;
	return true;
}

static bool parse_seconds(const char* s, double* out) {
	if (!s || !*s || *s == ' ') return false;
	char* end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || !(v > 0) || v > 1e7) return false;
	*out = v;
	return true;
}

/* Matches "--name VALUE" and "--name=VALUE"; *value is NULL when the value is missing. */
static bool match(char** argv, int argc, int* i, const char* name, const char** value) {
	const char* a = argv[*i];
	size_t n = strlen(name);
	if (strncmp(a, name, n) != 0) return false;
	if (a[n] == '=') {
		*value = a + n + 1;
		return true;
	}
	if (a[n] != '\0') return false;
	*value = *i + 1 < argc ? argv[++*i] : NULL;
	return true;
}

static int parse_options(int argc, char** argv, options* o) {
	memset(o, 0, sizeof *o);
	o->seed = 1;
	o->cases = 1000;
	o->steps = 200;
	o->scenes = o->random = true;
	o->fork = true;
	o->case_timeout = 120;
	o->max_work = SOAK_DEFAULT_WORK;
	bool scenes_only = false, random_only = false;
	for (int i = 1; i < argc; ++i) {
		const char* a = argv[i];
		const char* v = NULL;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			print_help(stdout);
			return -1;
		} else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
			o->verbose = true;
		} else if (strcmp(a, "--scenes-only") == 0) {
			scenes_only = true;
		} else if (strcmp(a, "--random-only") == 0) {
			random_only = true;
		} else if (strcmp(a, "--no-fork") == 0) {
			o->fork = false;
		} else if (strcmp(a, "--diverge") == 0) {
			o->diverge = true;
		} else if (match(argv, argc, &i, "--scene", &v)) {
			if (!v || !pbd_scene_builtin_find(v))
				return usage("--scene: expected a built-in scene (got '%s')", v ? v : "");
			o->scene = v;
		} else if (match(argv, argc, &i, "--seed", &v)) {
			if (!parse_u64(v, &o->seed))
				return usage("--seed: expected an unsigned 64-bit integer (got '%s')", v ? v : "");
		} else if (match(argv, argc, &i, "--cases", &v)) {
			if (!parse_long(v, 0, 1000000000L, &o->cases))
				return usage("--cases: expected an integer in [0, 1000000000] (got '%s')", v ? v : "");
			o->cases_given = true;
		} else if (match(argv, argc, &i, "--steps", &v)) {
			if (!parse_long(v, 1, 100000000L, &o->steps))
				return usage("--steps: expected an integer in [1, 100000000] (got '%s')", v ? v : "");
		} else if (match(argv, argc, &i, "--frames", &v)) {
			if (!parse_long(v, 1, 100000000L, &o->frames))
				return usage("--frames: expected an integer in [1, 100000000] (got '%s')", v ? v : "");
		} else if (match(argv, argc, &i, "--seconds", &v)) {
			if (!parse_seconds(v, &o->seconds))
				return usage("--seconds: expected a number of seconds in (0, 1e7] (got '%s')", v ? v : "");
		} else if (match(argv, argc, &i, "--case-timeout", &v)) {
			if (!parse_seconds(v, &o->case_timeout) || o->case_timeout > 86400)
				return usage("--case-timeout: expected a number of seconds in (0, 86400] (got '%s')", v ? v : "");
		} else if (match(argv, argc, &i, "--max-work", &v)) {
			long work;
			if (!parse_long(v, 64, 1L << 30, &work))
				return usage("--max-work: expected an integer in [64, 1073741824] (got '%s')", v ? v : "");
			o->max_work = (double)work;
		} else if (match(argv, argc, &i, "--csv", &v)) {
			if (!v || !*v) return usage("--csv: expected a file name");
			o->csv = v;
		} else if (match(argv, argc, &i, "--inject", &v)) {
			static const char* const kinds[] = {"none", "crash", "nan", "pinned", "hang"};
			int k = 0;
			while (k < 5 && !(v && strcmp(v, kinds[k]) == 0)) ++k;
			if (k == 5) return usage("--inject: expected crash, nan, pinned or hang (got '%s')", v ? v : "");
			o->inject = (soak_inject)k;
		} else {
			return usage("unknown argument '%s'", a);
		}
	}
	if (scenes_only && random_only) return usage("--scenes-only and --random-only exclude each other");
	if (o->scene && !o->diverge) return usage("--scene goes with --diverge");
	if (o->diverge) return 0;
	if (scenes_only) o->random = false;
	if (random_only) o->scenes = false;
	if (o->seconds > 0 && !o->cases_given) o->cases = 0;
	if (o->cases == 0 && o->random && !(o->seconds > 0)) return usage("--cases 0 (no limit) needs --seconds");
	return 0;
}

static double now_s(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Runs a case in a child process that writes its result into shared memory as it goes, so that
 * a crash still leaves the step it died in. */
static bool run_isolated(const soak_case* c, const options* o, soak_result* shared, soak_result* out) {
	if (!o->fork) {
		soak_run_case(c, out);
		return true;
	}
	memset(shared, 0, sizeof *shared);
	fflush(NULL); /* the child must not print the parent's buffered output a second time */
	const double t0 = now_s();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "pbd-soak: fork: %s\n", strerror(errno));
		return false;
	}
	if (pid == 0) {
		/* to the microsecond: alarm() would round a fraction of a second up to a whole one */
		const double whole = floor(o->case_timeout);
		struct itimerval t = {{0, 0}, {(time_t)whole, (suseconds_t)((o->case_timeout - whole) * 1e6)}};
		if (t.it_value.tv_sec == 0 && t.it_value.tv_usec == 0) t.it_value.tv_usec = 1;
		setitimer(ITIMER_REAL, &t, NULL);
		soak_run_case(c, shared);
		_exit(0);
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "pbd-soak: waitpid: %s\n", strerror(errno));
			return false;
		}
	}
	*out = *shared;
	if (WIFSIGNALED(status)) {
		const int sig = WTERMSIG(status);
		out->cls = sig == SIGALRM ? SOAK_TIMEOUT : SOAK_CRASH;
		out->bad_step = out->steps_done + 1;
		if (sig == SIGALRM)
			snprintf(out->detail, sizeof out->detail, "still running after %g s, in step %d", o->case_timeout,
			         out->bad_step);
		else
			snprintf(out->detail, sizeof out->detail, "killed by signal %d (%s) in step %d", sig, strsignal(sig),
			         out->bad_step);
		out->wall_s = now_s() - t0;
	} else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
		out->cls = SOAK_CRASH;
		out->bad_step = out->steps_done + 1;
		snprintf(out->detail, sizeof out->detail, "exited with status %d in step %d (its report is above)",
		         WEXITSTATUS(status), out->bad_step);
		out->wall_s = now_s() - t0;
	}
	return true;
}

enum { KIND_SCENE = 0, KIND_RANDOM = 1, KIND_COUNT };
#define LISTED_SEEDS 5

typedef struct summary {
	long counts[KIND_COUNT][SOAK_CLASS_COUNT];
	char listed[SOAK_CLASS_COUNT][LISTED_SEEDS][PBD_SCENE_NAME_MAX];
	int listed_count[SOAK_CLASS_COUNT];
	long by[3]; /* diverged random cases by reason: strain, non-finite warning, divergence warning */
	long warned[PBD_WARN_COUNT];
	double worst_strain, worst_ok_strain, slowest;
	char worst_case[PBD_SCENE_NAME_MAX], worst_ok_case[PBD_SCENE_NAME_MAX], slowest_case[PBD_SCENE_NAME_MAX];
	long steps;
	bool failed;
} summary;

static bool is_bug(int kind, soak_class cls) {
	return cls >= SOAK_NONFINITE || (kind == KIND_SCENE && cls == SOAK_DIVERGED);
}

static void label(const soak_case* c, char* out, size_t size) {
	if (c->scene)
		snprintf(out, size, "%s", c->scene);
	else
		snprintf(out, size, "seed %llu", (unsigned long long)c->seed);
}

static void csv_text(FILE* f, const char* s) {
	fputc('"', f);
	for (; *s; ++s) {
		if (*s == '"') fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void csv_row(FILE* f, const soak_case* c, const soak_result* r) {
	fprintf(f, "%s,", c->scene ? "scene" : "random");
	csv_text(f, c->scene ? c->scene : "");
	fprintf(f, ",%llu,%s,%d,%d,%u,%u,%u,%.6g,%d,%llu,%llu,%llu,%u,%u,%.3f,",
	        c->scene ? 0ull : (unsigned long long)c->seed, soak_class_name(r->cls), r->steps_done, r->bad_step,
	        r->particles, r->distances, r->colliders, r->max_strain, r->max_strain_step,
	        (unsigned long long)r->warnings[PBD_WARN_NONFINITE],
	        (unsigned long long)r->warnings[PBD_WARN_SPEED_CLAMPED], (unsigned long long)r->warnings[PBD_WARN_DIVERGED],
	        r->targets, r->changes, r->wall_s * 1e3);
	csv_text(f, r->setup);
	fputc(',', f);
	csv_text(f, r->detail);
	fputc(',', f);
	csv_text(f, r->first_log);
	fputc('\n', f);
	fflush(f);
}

static void reproduce(const soak_case* c, const options* o, char* out, size_t size) {
	static const char* const injected[] = {"", " --inject crash", " --inject nan", " --inject pinned",
	                                       " --inject hang"};
	if (c->scene && o->frames)
		snprintf(out, size, "pbd-soak --scenes-only --frames %ld --verbose%s", o->frames, injected[o->inject]);
	else if (c->scene)
		snprintf(out, size, "pbd-soak --scenes-only --verbose%s", injected[o->inject]);
	else if (c->max_work != SOAK_DEFAULT_WORK)
		snprintf(out, size, "pbd-soak --random-only --seed %llu --cases 1 --steps %d --max-work %.0f --verbose%s",
		         (unsigned long long)c->seed, c->steps, c->max_work, injected[o->inject]);
	else
		snprintf(out, size, "pbd-soak --random-only --seed %llu --cases 1 --steps %d --verbose%s",
		         (unsigned long long)c->seed, c->steps, injected[o->inject]);
}

static void record(summary* s, const soak_case* c, const soak_result* r, const options* o) {
	const int kind = c->scene ? KIND_SCENE : KIND_RANDOM;
	char name[PBD_SCENE_NAME_MAX];
	label(c, name, sizeof name);
	s->counts[kind][r->cls]++;
	s->steps += r->steps_done;
	if (s->listed_count[r->cls] < LISTED_SEEDS)
		snprintf(s->listed[r->cls][s->listed_count[r->cls]++], PBD_SCENE_NAME_MAX, "%s", name);
	if (kind == KIND_RANDOM && r->cls == SOAK_DIVERGED) {
		if (r->diverged_by & SOAK_BY_STRAIN) s->by[0]++;
		if (r->diverged_by & SOAK_BY_NONFINITE_WARNING) s->by[1]++;
		if (r->diverged_by & SOAK_BY_DIVERGED_WARNING) s->by[2]++;
	}
	for (int k = 0; k < PBD_WARN_COUNT; ++k) s->warned[k] += r->warnings[k] ? 1 : 0;
	if (r->max_strain > s->worst_strain || !s->worst_case[0]) {
		s->worst_strain = r->max_strain;
		snprintf(s->worst_case, sizeof s->worst_case, "%s", name);
	}
	if (r->cls == SOAK_OK && (r->max_strain > s->worst_ok_strain || !s->worst_ok_case[0])) {
		s->worst_ok_strain = r->max_strain;
		snprintf(s->worst_ok_case, sizeof s->worst_ok_case, "%s", name);
	}
	if (r->wall_s > s->slowest || !s->slowest_case[0]) {
		s->slowest = r->wall_s;
		snprintf(s->slowest_case, sizeof s->slowest_case, "%s", name);
	}
	const bool bug = is_bug(kind, r->cls);
	s->failed |= bug;

	if (o->verbose || bug) {
		printf("%-6s %-22s %-20s steps %5d  particles %5u  constraints %6u  strain %-9.3g  warnings %llu/%llu/%llu  "
		       "%8.1f ms  %s\n",
		       c->scene ? "scene" : "random", name, soak_class_name(r->cls), r->steps_done, r->particles, r->distances,
		       r->max_strain, (unsigned long long)r->warnings[PBD_WARN_NONFINITE],
		       (unsigned long long)r->warnings[PBD_WARN_SPEED_CLAMPED],
		       (unsigned long long)r->warnings[PBD_WARN_DIVERGED], r->wall_s * 1e3, r->setup);
		if (r->detail[0] && (bug || r->cls != SOAK_OK)) printf("       %s\n", r->detail);
		if (bug) {
			char cmd[200];
			reproduce(c, o, cmd, sizeof cmd);
			printf("       reproduce: %s\n", cmd);
		}
	}
}

static void print_summary(const summary* s, const options* o, long random_run, double wall) {
	printf("\n%-22s %8s %8s\n", "class", "scenes", "random");
	for (int k = 0; k < SOAK_CLASS_COUNT; ++k) {
		printf("%-22s %8ld %8ld", soak_class_name((soak_class)k), s->counts[KIND_SCENE][k], s->counts[KIND_RANDOM][k]);
		if (k >= SOAK_NONFINITE) printf("   bug");
		if (s->listed_count[k] && k != SOAK_OK) {
			printf("   e.g.");
			for (int i = 0; i < s->listed_count[k]; ++i) printf("%s %s", i ? "," : "", s->listed[k][i]);
		}
		printf("\n");
	}
	const long diverged = s->counts[KIND_RANDOM][SOAK_DIVERGED];
	if (diverged)
		printf("diverged random cases by reason: strain > %g: %ld, non-finite warning: %ld, divergence warning: %ld\n",
		       SOAK_DIVERGED_STRAIN, s->by[0], s->by[1], s->by[2]);
	printf("cases with warnings: non-finite %ld, speed clamped %ld, diverged %ld\n", s->warned[PBD_WARN_NONFINITE],
	       s->warned[PBD_WARN_SPEED_CLAMPED], s->warned[PBD_WARN_DIVERGED]);
	if (s->worst_ok_case[0]) printf("worst strain of an ok case: %.4g (%s)\n", s->worst_ok_strain, s->worst_ok_case);
	if (s->worst_case[0]) printf("worst strain of any case: %.4g (%s)\n", s->worst_strain, s->worst_case);
	if (s->slowest_case[0]) printf("slowest case: %.3f s (%s)\n", s->slowest, s->slowest_case);
	printf("%ld random cases from seed %llu, %ld steps in all, %.1f s\n", random_run, (unsigned long long)o->seed,
	       s->steps, wall);
	if (s->failed)
		printf("result: FAIL (bugs above, each with the command that reproduces it)\n");
	else if (diverged)
		printf("result: pass (%ld random cases diverged: unstable settings, not bugs by themselves)\n", diverged);
	else
		printf("result: pass\n");
}

int main(int argc, char** argv) {
	options o;
	int st = parse_options(argc, argv, &o);
	if (st < 0) return EXIT_PASS;
	if (st > 0) return st;
	if (o.diverge) return soak_diverge(o.frames ? (int)o.frames : 10, o.case_timeout, o.scene, o.csv, o.verbose);

	FILE* csv = NULL;
	if (o.csv) {
		csv = fopen(o.csv, "w");
		if (!csv) {
			fprintf(stderr, "pbd-soak: %s: %s\n", o.csv, strerror(errno));
			return EXIT_BUG;
		}
		fputs("kind,scene,seed,class,steps,bad_step,particles,constraints,colliders,max_strain,max_strain_step,"
		      "warn_nonfinite,warn_speed_clamped,warn_diverged,targets,changes,wall_ms,setup,detail,first_log\n",
		      csv);
	}
	soak_result* shared = NULL;
	if (o.fork) {
		void* p = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			fprintf(stderr, "pbd-soak: mmap: %s\n", strerror(errno));
			return EXIT_BUG;
		}
		shared = (soak_result*)p;
	}

	printf("pbd-soak: pbd %s (%s), seed %llu", pbd_version(), sizeof(pbd_real) == sizeof(double) ? "double" : "float",
	       (unsigned long long)o.seed);
	if (o.scenes) printf(", %zu built-in scenes", pbd_scene_builtin_count());
	if (o.scenes && o.frames) printf(" (at most %ld frames)", o.frames);
	if (o.random && o.cases) printf(", %ld random cases of %ld steps", o.cases, o.steps);
	if (o.random && !o.cases) printf(", random cases of %ld steps", o.steps);
	if (o.seconds > 0) printf(", budget %g s", o.seconds);
	printf("\n");

	summary s;
	memset(&s, 0, sizeof s);
	const double t0 = now_s();
	bool ok = true;
	long random_run = 0;
	for (size_t i = 0; ok && o.scenes && i < pbd_scene_builtin_count(); ++i) {
		if (o.seconds > 0 && now_s() - t0 >= o.seconds) break;
		soak_case c = {pbd_scene_builtin_at(i)->name, 0, o.frames ? (int)o.frames : INT_MAX, 0, o.inject};
		soak_result r;
		ok = run_isolated(&c, &o, shared, &r);
		if (!ok) break;
		record(&s, &c, &r, &o);
		if (csv) csv_row(csv, &c, &r);
	}
	for (long k = 0; ok && o.random && (o.cases == 0 || k < o.cases); ++k) {
		if (o.seconds > 0 && now_s() - t0 >= o.seconds) break;
		soak_case c = {NULL, o.seed + (uint64_t)k, (int)o.steps, o.max_work, o.inject};
		soak_result r;
		ok = run_isolated(&c, &o, shared, &r);
		if (!ok) break;
		record(&s, &c, &r, &o);
		if (csv) csv_row(csv, &c, &r);
		random_run++;
	}
	print_summary(&s, &o, random_run, now_s() - t0);
	if (csv && fclose(csv) != 0) {
		fprintf(stderr, "pbd-soak: %s: %s\n", o.csv, strerror(errno));
		ok = false;
	}
	if (shared) munmap(shared, sizeof *shared);
	return ok && !s.failed ? EXIT_PASS : EXIT_BUG;
}
