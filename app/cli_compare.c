/* `pbd compare`: the same scene under several methods, each run timed and measured, the results
 * side by side in CSV files, a table, plots and a video. */
#define _POSIX_C_SOURCE 200809L
#include "cli_compare.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "cli_clock.h"
#include "cli_scene.h"
#include "compare_csv.h"
#include "compare_plot.h"
#include "compare_video.h"
#include "output.h"

/* What compare.csv may take unless --max-output says otherwise, as for `pbd run`. */
#define DEFAULT_MAX_OUTPUT (4ull << 30)
/* Every name once: the position-based method under the scene's formulation and under XPBD, then
 * the force-based ones. */
#define MAX_METHODS (PBD_METHOD_COUNT + 1)
#define XPBD_NAME   "xpbd"

typedef struct compare_method {
	char name[COMPARE_NAME_MAX];
	pbd_method method;
	bool xpbd; /* position-based with XPBD compliance, whatever the scene's formulation */
} compare_method;

typedef struct compare_options {
	const char* scene_arg;
	compare_method methods[MAX_METHODS];
	int method_count;
	long frames;         /* -1: the scene's */
	const char* out_dir; /* NULL: out/compare_<scene name> */
	cli_world_options world;
	uint64_t max_output; /* bytes compare.csv may take, 0 = no limit */
	bool quiet;
	bool plot;
	const char* video;             /* NULL: no video */
	int video_width, video_height; /* 0: automatic */
} compare_options;

/* What the runs share while they go, and what each came to. */
typedef struct compare_state {
	const compare_options* o;
	int frames;
	FILE* csv;
	char csv_path[4200];
	long rows;
	compare_video* video;
	compare_result results[MAX_METHODS];
	compare_plot_method plot[MAX_METHODS];
	double strain_min, strain_max; /* of the mean strain of the rows before divergence */
} compare_state;

void cli_compare_help(FILE* fp) {
	fputs("Usage: pbd compare SCENE --methods LIST [options]\n"
	      "\n"
	      "Runs SCENE once per method of LIST, each from the same initial state with the same settings,\n"
	      "and writes into the output folder:\n"
	      "  compare.csv  one row per method per frame, frame 0 (the initial state) included: time, mean\n"
	      "               and max strain, kinetic, potential, elastic and total energy, the wall time of\n"
	      "               the step in ms, whether the run had diverged by then, the linear solver's\n"
	      "               residual and iterations, contacts\n"
	      "  summary.csv  one row per method: steps, ms per step, ms per simulated second, final mean\n"
	      "               strain, max strain over the run, energy drift and its note, diverged steps,\n"
	      "               status (ok, diverged at frame F, failed: message)\n"
	      "The summary is printed as a table too, a row as each method finishes.\n"
	      "\n"
	      "SCENE is a scene file or a built-in scene, as for 'pbd run'. The methods:\n"
	      "  pbd                 position-based with the scene's formulation (PBD stiffness or XPBD\n"
	      "                      compliance; --formulation changes it)\n"
	      "  xpbd                position-based with XPBD compliance, whatever the scene says\n"
	      "  explicit_euler, symplectic_euler, implicit_euler, projective_dynamics, vbd\n"
	      "                      force-based: each constraint a spring of k = 1 / compliance, so each\n"
	      "                      needs a compliance > 0 (a physical cloth material gives one)\n"
	      "  all                 every one of them, in this order\n"
	      "\n",
	      fp);
	fputs("Options:\n"
	      "  -m, --methods LIST     comma-separated method names, each at most once (required)\n"
	      "  -n, --frames N         frames each method runs (default: the scene's \"frames\"), 0 to 100000000\n"
	      "  -o, --out DIR          output folder (default: out/compare_<scene name>)\n"
	      "      --solver S         gauss_seidel (or gs) or jacobi, for the position-based methods\n"
	      "      --formulation F    pbd (stiffness) or xpbd (compliance): what the method pbd runs with\n"
	      "      --iterations N     iterations per substep, 1 to 10000 (constraint iterations; CG\n"
	      "                         iterations at most for implicit Euler)\n"
	      "      --substeps N       substeps per frame, 1 to 1000\n"
	      "      --threads N        threads a step runs on, 1 to 64 (same result for any N)\n"
	      "      --dt SECONDS       frame length, 1e-9 to 10\n"
	      "      --simd MODE        auto, scalar, avx2 or avx512: the distance kernels (same results)\n"
	      "      --max-output BYTES refuse, before it starts, a comparison whose compare.csv could pass\n"
	      "                         BYTES (K, M, G, T suffixes; 0 = no limit; default: 4G)\n"
	      "      --plot             strain.png, energy.png and cost.png in the output folder (gnuplot)\n"
	      "      --video PATH       the runs side by side in one .mp4 video (offscreen OpenGL, ffmpeg)\n"
	      "      --size WxH         the size of each panel of the video, 16 to 8192 each (default: the\n"
	      "                         scene's, shrunk so that the panels together are at most 1920 wide)\n"
	      "  -q, --quiet            no table on stdout\n"
	      "  -h, --help             this text\n"
	      "\n",
	      fp);
	fputs("Each run is timed around pbd_scene_step alone (keyframed colliders moved, then pbd_world_step),\n"
	      "with the world's per-step diagnostics off; the statistics are read after each step, untimed.\n"
	      "A method whose step fails (projective dynamics meeting more large volumes than it takes)\n"
	      "stops there: its row says \"failed: \" and the library's message, and the others go on. A step\n"
	      "the library counts as diverged makes the row \"diverged at frame F\": the run goes on to the\n"
	      "end, and its plotted lines stop at frame F. The energy drift is (E_end - E_0) / |E_0| of the\n"
	      "total energy; its note names what makes it no test of conservation (damped, wind, driven,\n"
	      "contacts) or why it is missing. Described in docs/compare.md.\n"
	      "\n"
	      "Exit status: 0 every method ran to the end, 1 bad scene, a failure while writing, or a method\n"
	      "that failed (every file is still written), 2 bad command line, 3 a method diverged (and none\n"
	      "failed).\n",
	      fp);
}

/* The i-th name --methods takes, in the order of 'all'. */
static void method_at(int i, compare_method* out) {
	memset(out, 0, sizeof *out);
	if (i == 1) {
		snprintf(out->name, sizeof out->name, "%s", XPBD_NAME);
		out->method = PBD_METHOD_POSITION_BASED;
		out->xpbd = true;
		return;
	}
	out->method = (pbd_method)(i == 0 ? 0 : i - 1);
	snprintf(out->name, sizeof out->name, "%s", pbd_method_name(out->method));
}

/* "pbd, xpbd, ..., vbd": the names, for messages. */
static void method_names(char* out, size_t size) {
	size_t used = 0;
	out[0] = '\0';
	for (int i = 0; i < MAX_METHODS && used < size; ++i) {
		compare_method m;
		method_at(i, &m);
		int w = snprintf(out + used, size - used, "%s%s", i ? ", " : "", m.name);
		used += w > 0 ? (size_t)w : 0;
	}
}

/* --methods: names separated by commas, each known and given once, or "all". */
static int parse_methods(cli_cursor* c, const char* list, compare_options* o) {
	char names[256];
	method_names(names, sizeof names);
	o->method_count = 0;
	if (strcmp(list, "all") == 0) {
		for (int i = 0; i < MAX_METHODS; ++i) method_at(i, &o->methods[o->method_count++]);
		return CLI_OK;
	}
	for (const char* p = list;;) {
		const size_t n = strcspn(p, ",");
		if (n == 0) return cli_usage_error(c, "--methods: an empty name in '%s' (the names: %s, or all)", list, names);
		int found = -1;
		for (int i = 0; i < MAX_METHODS && found < 0; ++i) {
			compare_method m;
			method_at(i, &m);
			if (strlen(m.name) == n && strncmp(p, m.name, n) == 0) found = i;
		}
		if (found < 0)
			return cli_usage_error(c, "--methods: unknown method '%.*s' (the names: %s, or all)",
			                       (int)(n < 40 ? n : 40), p, names);
		compare_method m;
		method_at(found, &m);
		/* Each method's rows are told apart by its name. */
		for (int k = 0; k < o->method_count; ++k)
			if (strcmp(o->methods[k].name, m.name) == 0)
				return cli_usage_error(c, "--methods: '%s' given twice", m.name);
		o->methods[o->method_count++] = m;
		if (!p[n]) return CLI_OK;
		p += n + 1;
	}
}

/* A name ending in .mp4, in any case. */
static bool is_mp4(const char* path) {
	const size_t n = strlen(path);
	if (n < 5 || path[n - 5] == '/') return false;
	char ext[5];
	for (int i = 0; i < 4; ++i) ext[i] = (char)(path[n - 4 + (size_t)i] | 0x20); /* ASCII lower case; '.' stays */
	ext[4] = '\0';
	return strcmp(ext, ".mp4") == 0;
}

/* Returns CLI_OK, or CLI_USAGE after printing the message (or CLI_OK with *help set). */
static int parse_options(int argc, char** argv, compare_options* o, bool* help) {
	memset(o, 0, sizeof *o);
	o->frames = -1;
	o->max_output = DEFAULT_MAX_OUTPUT;
	cli_world_options_init(&o->world);
	*help = false;
	cli_cursor c = {argc, argv, 1, NULL, "pbd compare", false, false};
	bool size_given = false;
	bool is_option;
	for (const char* arg; (arg = cli_next(&c, &is_option)) != NULL;) {
		if (is_option) {
			if (cli_match(&c, "-h", "--help", false)) {
				*help = true;
				return CLI_OK;
			} else if (cli_match(&c, "-m", "--methods", true)) {
				if (parse_methods(&c, c.value, o) != CLI_OK) return CLI_USAGE;
			} else if (cli_match(&c, "-n", "--frames", true)) {
				if (!cli_parse_int(c.value, 0, PBD_SCENE_MAX_FRAMES, &o->frames))
					return cli_usage_error(&c, "--frames: expected an integer in [0, %d], got '%s'",
					                       PBD_SCENE_MAX_FRAMES, c.value);
			} else if (cli_match(&c, "-o", "--out", true)) {
				if (!c.value[0]) return cli_usage_error(&c, "--out: empty folder name");
				o->out_dir = c.value;
			} else if (cli_match_world_option(&c, &o->world)) {
				if (!c.failed && o->world.method >= 0)
					return cli_usage_error(&c, "--method: compare runs the methods of --methods LIST");
			} else if (cli_match(&c, NULL, "--max-output", true)) {
				if (!cli_parse_size(c.value, &o->max_output))
					return cli_usage_error(&c, "--max-output: expected bytes with an optional K, M, G or T, got '%s'",
					                       c.value);
			} else if (cli_match(&c, NULL, "--plot", false)) {
				o->plot = true;
			} else if (cli_match(&c, NULL, "--video", true)) {
				if (!is_mp4(c.value)) return cli_usage_error(&c, "--video: expected a .mp4 file, got '%s'", c.value);
				o->video = c.value;
			} else if (cli_match(&c, NULL, "--size", true)) {
				if (!cli_parse_dimensions(c.value, PBD_SCENE_RENDER_MIN_SIZE, PBD_SCENE_RENDER_MAX_SIZE,
				                          &o->video_width, &o->video_height))
					return cli_usage_error(&c, "--size: expected WxH with each from %d to %d, got '%s'",
					                       PBD_SCENE_RENDER_MIN_SIZE, PBD_SCENE_RENDER_MAX_SIZE, c.value);
				size_given = true;
			} else if (cli_match(&c, "-q", "--quiet", false)) {
				o->quiet = true;
			} else {
				return c.failed ? CLI_USAGE : cli_usage_error(&c, "unknown option '%s'", arg);
			}
			if (c.failed) return CLI_USAGE;
			continue;
		}
		if (o->scene_arg)
			return cli_usage_error(&c, "more than one pbd_scene given ('%s' and '%s')", o->scene_arg, arg);
		if (!arg[0]) return cli_usage_error(&c, "empty scene name");
		o->scene_arg = arg;
		c.i++;
	}
	if (!o->scene_arg)
		return cli_usage_error(&c, "no pbd_scene given (e.g. pbd compare cloth_cotton --methods pbd,xpbd)");
	if (o->method_count == 0)
		return cli_usage_error(&c, "no --methods given (e.g. --methods pbd,xpbd,implicit_euler, or all)");
	if (size_given && !o->video) return cli_usage_error(&c, "--size needs --video");
	return CLI_OK;
}

/* Refuses, before anything is written, a comparison whose compare.csv could pass --max-output. */
static bool output_fits(const compare_options* o, const pbd_scene* s, int frames, pbd_scene_error* err) {
	const uint64_t rows = ((uint64_t)frames + 1) * (uint64_t)o->method_count;
	const uint64_t bytes = 256 + rows * COMPARE_CSV_ROW_MAX;
	if (o->max_output == 0 || bytes <= o->max_output) return true;
	char total[32], limit[32];
	pbd_scene_format_bytes(total, sizeof total, bytes);
	pbd_scene_format_bytes(limit, sizeof limit, o->max_output);
	pbd_scene_error_set(err,
	                    "%s: %d frames of %d methods could write %s to " COMPARE_CSV
	                    ", more than --max-output %s; run fewer frames (-n), or raise --max-output (0 = no limit)",
	                    s->name, frames, o->method_count, total, limit);
	return false;
}

/* Writes the row of one frame and follows the run's extremes. */
static void record_frame(compare_state* cs, int index, int frame, const pbd_stats* st, double step_ms) {
	compare_result* r = &cs->results[index];
	const bool diverged = r->first_diverged >= 0;
	compare_csv_row(cs->csv, r->method, frame, st, step_ms, diverged);
	cs->rows++;
	if (st->max_strain > r->max_strain || isnan(st->max_strain)) r->max_strain = st->max_strain;
	if (diverged) return;
	cs->plot[index].valid_rows++;
	const double m = st->mean_strain;
	if (m > cs->strain_max) cs->strain_max = m;
	if (m > 0 && m < cs->strain_min) cs->strain_min = m;
}

/* The size of the energies of a state, whatever their signs. */
static double energy_scale(const pbd_stats* st) {
	const double e =
	    fabs(st->kinetic_energy) + fabs(st->potential_energy) + (st->energy_defined ? fabs(st->elastic_energy) : 0.0);
	return isfinite(e) ? e : 0.0;
}

static void note_add(char* note, size_t size, const char* word) {
	const size_t n = strlen(note);
	snprintf(note + n, size - n, "%s%s", n ? ";" : "", word);
}

/* Below this fraction of the energies' own size the initial total is rounding, not a reference:
 * a drift relative to it would be noise over almost nothing. */
#define ENERGY_ZERO_FRACTION 1e-6

/* The drift of the total energy and what stands in its way as a test of conservation. `scale` is
 * the largest |kinetic| + |potential| + |elastic| of the run. */
static void energy_verdict(const pbd_scene* s, const compare_method* m, double e0, bool e0_defined, double scale,
                           const pbd_stats* end, bool contacts, compare_result* r) {
	r->energy_drift = (double)NAN;
	r->note[0] = '\0';
	const double e1 = end->kinetic_energy + end->potential_energy + end->elastic_energy;
	if (!e0_defined || !end->energy_defined) {
		snprintf(r->note, sizeof r->note, "no energy (PBD stiffness)");
		return;
	}
	if (r->steps == 0) {
		snprintf(r->note, sizeof r->note, "no step taken");
		return;
	}
	if (!(fabs(e0) > ENERGY_ZERO_FRACTION * scale)) {
		snprintf(r->note, sizeof r->note, "initial energy ~0");
		return;
	}
	r->energy_drift = (e1 - e0) / fabs(e0);
	const pbd_world_def d = pbd_world_get_def(s->world);
	const bool forces = m->method != PBD_METHOD_POSITION_BASED;
	if (d.damping < 1 || (forces && d.stiffness_damping > 0)) note_add(r->note, sizeof r->note, "damped");
	if (d.wind.x != 0 || d.wind.y != 0 || d.wind.z != 0) note_add(r->note, sizeof r->note, "wind");
	if (s->track_count > 0 || s->pin_motion_count > 0) note_add(r->note, sizeof r->note, "driven");
	if (contacts) note_add(r->note, sizeof r->note, "contacts");
}

/* One method from the loaded scene s to its last frame, or to the step that failed. False only
 * for what ends the whole comparison (a write or the video failing). */
static bool run_method(compare_state* cs, int index, pbd_scene* s, pbd_scene_error* err) {
	const compare_method* m = &cs->o->methods[index];
	compare_result* r = &cs->results[index];
	memset(r, 0, sizeof *r);
	snprintf(r->method, sizeof r->method, "%s", m->name);
	r->first_diverged = -1;
	cs->plot[index] = (compare_plot_method){cs->results[index].method, 0, -1, false, false};

	pbd_status st = pbd_world_set_method(s->world, m->method);
	if (st == PBD_OK && m->xpbd) st = pbd_world_set_formulation(s->world, PBD_FORMULATION_XPBD);
	char failure[384] = ""; /* why the method stopped, when it did */
	if (st != PBD_OK) {
		r->failed = true;
		snprintf(failure, sizeof failure, "%s", pbd_world_last_error(s->world));
	}
	cli_render* render = NULL;
	if (cs->video && !compare_video_panel_open(cs->video, index, s, &render, err)) return false;

	pbd_stats stats;
	pbd_world_get_stats(s->world, &stats);
	const double e0 = stats.kinetic_energy + stats.potential_energy + stats.elastic_energy;
	const bool e0_defined = stats.energy_defined && isfinite(e0);
	const double t0 = stats.time;
	bool contacts = stats.contacts > 0;
	double scale = energy_scale(&stats);
	record_frame(cs, index, 0, &stats, (double)NAN);
	bool ok = !render || cli_render_frame(render, 0, cs->frames, err);
	uint64_t diverged_before = pbd_world_get_warning(s->world, PBD_WARN_DIVERGED).count;
	for (int f = 1; ok && !r->failed && f <= cs->frames; ++f) {
		const double t = cli_now_seconds();
		st = pbd_scene_step(s);
		const double step = cli_now_seconds() - t;
		if (st != PBD_OK) {
			r->failed = true;
			snprintf(failure, sizeof failure, "frame %d: %s", f, pbd_world_last_error(s->world));
			break;
		}
		r->steps++;
		r->step_seconds += step;
		const uint64_t diverged_now = pbd_world_get_warning(s->world, PBD_WARN_DIVERGED).count;
		if (diverged_now != diverged_before) {
			r->diverged_steps += diverged_now - diverged_before;
			diverged_before = diverged_now;
			if (r->first_diverged < 0) r->first_diverged = f;
		}
		pbd_world_get_stats(s->world, &stats);
		contacts = contacts || stats.contacts > 0;
		/* After a divergence the energies are not a result: they set no scale. */
		if (r->first_diverged < 0 && energy_scale(&stats) > scale) scale = energy_scale(&stats);
		record_frame(cs, index, f, &stats, 1e3 * step);
		ok = !render || cli_render_frame(render, f, cs->frames, err);
	}
	if (!ok) {
		cli_render_abort(render);
		return false;
	}
	r->simulated = stats.time - t0;
	r->final_mean_strain = stats.mean_strain;
	energy_verdict(s, m, e0, e0_defined, scale, &stats, contacts, r);
	/* A diverged run that then failed says both: neither is ok. */
	if (r->first_diverged >= 0 && r->failed)
		snprintf(r->status, sizeof r->status, "diverged at frame %d; failed: %s", r->first_diverged, failure);
	else if (r->first_diverged >= 0)
		snprintf(r->status, sizeof r->status, "diverged at frame %d", r->first_diverged);
	else if (r->failed)
		snprintf(r->status, sizeof r->status, "failed: %s", failure);
	else
		snprintf(r->status, sizeof r->status, "ok");
	cs->plot[index].diverged_frame = r->first_diverged;
	cs->plot[index].energy_defined = e0_defined;
	cs->plot[index].has_cost = r->steps > 0;
	if (render) {
		char caption[64];
		if (r->failed)
			snprintf(caption, sizeof caption, "%s - failed at frame %d", m->name, r->steps + 1);
		else if (r->first_diverged >= 0)
			snprintf(caption, sizeof caption, "%s - diverged at frame %d", m->name, r->first_diverged);
		else
			snprintf(caption, sizeof caption, "%s", m->name);
		if (!compare_video_panel_close(cs->video, index, render, caption, err)) return false;
	}
	if (ferror(cs->csv)) {
		pbd_scene_error_set(err, "%s: write failed", cs->csv_path);
		return false;
	}
	return true;
}

/* A number of the table, "-" for none. */
static void cell(char* out, size_t size, const char* fmt, double v) {
	if (isnan(v))
		snprintf(out, size, "-");
	else
		snprintf(out, size, fmt, v);
}

static void print_table_header(void) {
	printf("%-19s %5s %10s %11s %11s %10s %12s %-26s %8s  %s\n", "method", "steps", "ms/step", "ms/sim s",
	       "mean strain", "max strain", "energy drift", "drift note", "diverged", "status");
}

static void print_table_row(const compare_result* r) {
	char ms[32], ms_sim[32], mean[32], max[32], drift[32];
	cell(ms, sizeof ms, "%.3f", compare_ms_per_step(r));
	cell(ms_sim, sizeof ms_sim, "%.1f", compare_ms_per_simulated_second(r));
	cell(mean, sizeof mean, "%.4g", r->final_mean_strain);
	cell(max, sizeof max, "%.4g", r->max_strain);
	cell(drift, sizeof drift, "%+.3e", r->energy_drift);
	printf("%-19s %5d %10s %11s %11s %10s %12s %-26s %8llu  %s\n", r->method, r->steps, ms, ms_sim, mean, max, drift,
	       r->note[0] ? r->note : "-", (unsigned long long)r->diverged_steps, r->status);
	fflush(stdout);
}

static bool write_summary(const compare_state* cs, const char* path, pbd_scene_error* err) {
	FILE* fp = fopen(path, "wb");
	if (!fp) {
		pbd_scene_error_set(err, "%s: cannot write: %s", path, strerror(errno));
		return false;
	}
	compare_summary_header(fp);
	for (int i = 0; i < cs->o->method_count; ++i) compare_summary_row(fp, &cs->results[i]);
	bool failed = ferror(fp) != 0;
	if (fclose(fp) != 0) failed = true;
	if (failed) pbd_scene_error_set(err, "%s: write failed", path);
	return !failed;
}

/* The line on stderr for the methods that gave no result, said even with -q; and the exit status. */
static int verdict(const compare_state* cs, const char* dir) {
	char line[1024] = "";
	size_t used = 0;
	bool any_failed = false, any_diverged = false;
	for (int i = 0; i < cs->o->method_count; ++i) {
		const compare_result* r = &cs->results[i];
		if (!r->failed && r->first_diverged < 0) continue;
		any_failed = any_failed || r->failed;
		any_diverged = any_diverged || r->first_diverged >= 0;
		int w;
		if (r->failed)
			w = snprintf(line + used, sizeof line - used, "%s%s failed", used ? ", " : "", r->method);
		else
			w = snprintf(line + used, sizeof line - used, "%s%s diverged (first at frame %d)", used ? ", " : "",
			             r->method, r->first_diverged);
		if (w > 0 && (size_t)w < sizeof line - used) used += (size_t)w;
	}
	if (!any_failed && !any_diverged) return CLI_OK;
	fprintf(stderr, "pbd: compare: %s; see %s/" COMPARE_SUMMARY "\n", line, dir);
	return any_failed ? CLI_FAILED : CLI_DIVERGED;
}

static int fail(const pbd_scene_error* err) {
	fprintf(stderr, "pbd: %s\n", err->message);
	return CLI_FAILED;
}

static int compare(const compare_options* o) {
	compare_state* cs = calloc(1, sizeof *cs);
	if (!cs) {
		fprintf(stderr, "pbd: out of memory\n");
		return CLI_FAILED;
	}
	cs->o = o;
	cs->strain_min = (double)INFINITY;
	/* The library's own lines stay out of the table: what they say is in its rows. */
	const pbd_scene_options so = {true, NULL, NULL, 0};
	pbd_scene s;
	pbd_scene_error err;
	if (!cli_scene_load(o->scene_arg, &so, &s, &err)) {
		free(cs);
		return fail(&err);
	}
	char dir[4096], summary_path[4200];
	if (!cli_world_options_apply(&o->world, &s, &err)) goto done;
	cs->frames = o->frames >= 0 ? (int)o->frames : s.frames;
	if (!output_fits(o, &s, cs->frames, &err)) goto done;
	if (o->out_dir)
		snprintf(dir, sizeof dir, "%s", o->out_dir);
	else
		snprintf(dir, sizeof dir, "out/compare_%s", s.name);
	/* Trailing slashes would double up in the file names. */
	for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; --n) dir[n - 1] = '\0';
	snprintf(cs->csv_path, sizeof cs->csv_path, "%s/" COMPARE_CSV, dir);
	snprintf(summary_path, sizeof summary_path, "%s/" COMPARE_SUMMARY, dir);
	if (o->video &&
	    !compare_video_begin(o->video, o->method_count, o->video_width, o->video_height, &s, &cs->video, &err))
		goto done;
	if (!out_make_dir(dir, &err)) goto done;
	cs->csv = fopen(cs->csv_path, "wb");
	if (!cs->csv) {
		pbd_scene_error_set(&err, "%s: cannot write: %s", cs->csv_path, strerror(errno));
		goto done;
	}
	compare_csv_header(cs->csv);

	if (!o->quiet) {
		printf("%s: %d method%s, %d frames each\n", s.name, o->method_count, o->method_count == 1 ? "" : "s",
		       cs->frames);
		print_table_header();
	}
	for (int i = 0; i < o->method_count; ++i) {
		/* Each method starts from the scene as loaded: the first uses the copy loaded above. */
		if (i > 0) {
			pbd_scene_free(&s);
			if (!cli_scene_load(o->scene_arg, &so, &s, &err) || !cli_world_options_apply(&o->world, &s, &err))
				goto done;
		}
		if (!run_method(cs, i, &s, &err)) goto done;
		if (!o->quiet) print_table_row(&cs->results[i]);
	}
	FILE* csv = cs->csv;
	cs->csv = NULL;
	bool write_failed = ferror(csv) != 0;
	if (fclose(csv) != 0) write_failed = true;
	if (write_failed) {
		pbd_scene_error_set(&err, "%s: write failed", cs->csv_path);
		goto done;
	}
	if (!write_summary(cs, summary_path, &err)) goto done;
	if (!o->quiet) {
		printf("  energy drift: (E_end - E_0) / |E_0| of the total energy; the note names what adds or takes "
		       "energy\n");
		printf("  wrote %s/: " COMPARE_CSV " (%ld row%s), " COMPARE_SUMMARY "\n", dir, cs->rows,
		       cs->rows == 1 ? "" : "s");
		fflush(stdout);
	}
	if (o->plot) {
		const double t = cli_now_seconds();
		const compare_plot_input in = {dir, s.name, o->method_count, cs->plot, cs->strain_min, cs->strain_max};
		bool strain_log = false;
		if (!compare_plot(&in, &strain_log, &err)) goto done;
		if (!o->quiet)
			printf("  plots %.3f s: " COMPARE_STRAIN_PNG "%s, " COMPARE_ENERGY_PNG ", " COMPARE_COST_PNG "\n",
			       cli_now_seconds() - t, strain_log ? " (log scale)" : "");
	}
	if (cs->video) {
		compare_video* v = cs->video;
		cs->video = NULL;
		compare_video_report vr;
		if (!compare_video_finish(v, &vr, &err)) goto done;
		if (!o->quiet)
			printf("  video %s: %d panels of %dx%d, %d frames at %.4g fps, %s, %s; %.3f s on %s\n", o->video, vr.panels,
			       vr.width, vr.height, vr.frames, vr.fps, vr.codec,
			       vr.captions ? "captioned" : "no captions (ffmpeg could not draw text)", vr.seconds, vr.device);
	}
	if (!o->quiet && (fflush(stdout) != 0 || ferror(stdout))) {
		pbd_scene_error_set(&err, "standard output: write failed");
		goto done;
	}
	const int code = verdict(cs, dir);
	pbd_scene_free(&s);
	free(cs);
	return code;
done:
	if (cs->csv) fclose(cs->csv);
	compare_video_abort(cs->video);
	pbd_scene_free(&s);
	free(cs);
	return fail(&err);
}

int cli_compare(int argc, char** argv) {
	compare_options o;
	bool help;
	int code = parse_options(argc, argv, &o, &help);
	if (code != CLI_OK) return code;
	if (help) {
		cli_compare_help(stdout);
		return CLI_OK;
	}
	return compare(&o);
}
