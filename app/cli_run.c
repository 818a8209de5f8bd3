/* `pbd run`: load a scene, step it frame by frame, write the frames, metrics and final state. */
#define _POSIX_C_SOURCE 200809L
#include "cli_run.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_args.h"
#include "cli_clock.h"
#include "cli_render.h"
#include "cli_scene.h"
#include "cli_signal.h"
#include "cli_suggest.h"
#include "output.h"
#include "output_usd.h"
#include "output_vtk.h"
#include "plot.h"
#include "profile_table.h"
#include "pbd/scene.h"

#define DEFAULT_SCENE "cloth_sphere"
/* What a run may write unless --max-output says otherwise: a typo in -n or "frames" should not
 * fill a disk. */
#define DEFAULT_MAX_OUTPUT (4ull << 30)

typedef struct run_options {
	const char* scene_arg;
	long frames;         /* -1: the scene's */
	const char* out_dir; /* NULL: out/<scene name> */
	out_format format;
	cli_world_options world;
	bool quiet;
	bool progress;
	bool plot;                 /* --plot: plot metrics.csv at the end */
	uint64_t max_output;       /* bytes the run may write, 0 = no limit */
	cli_render_options render; /* render.path NULL: no --render */
	const char* render_only;   /* an option given that needs --render, for the message */
	long save_every;           /* --save-every: frames between snapshots, 0 = none */
	const char* resume;        /* --resume: snapshot to continue from */
	bool profile;              /* --profile: time the step's phases, print their table at the end */
} run_options;

/* State shared with the library's log callback, so a warning does not land inside the progress line. */
typedef struct run_state {
	bool quiet;
	bool progress_shown; /* a \r progress line is on the terminal now */
	bool stepping;       /* the library's lines are printed only while the scene runs: anything it
	                      * refuses before that (a setting) the program reports itself, in one line */
	bool loading;        /* the scene loader's notes (a deprecated key) are printed as they come */
} run_state;

void cli_run_help(FILE* fp) {
	fputs("Usage: pbd run [SCENE] [options]\n"
	      "\n"
	      "Simulates SCENE frame by frame (one pbd_world_step per frame) and writes into the output\n"
	      "folder: frame_00000.obj (the initial state) to frame_<N>.obj, metrics.csv (one row per\n"
	      "frame, frame 0 included) and state.txt (every particle at the last frame). Frame files of\n"
	      "an earlier run in that folder (frame_<digits>.obj/.ply/.vtu) are deleted first;\n"
	      "metrics.csv and state.txt are overwritten; nothing else is touched.\n"
	      "\n"
	      "SCENE is a pbd_scene file (JSON, see docs/scene-format.md) or the name of a built-in scene\n"
	      "(see 'pbd list'); an existing file of that name wins. Default: " DEFAULT_SCENE ".\n"
	      "\n"
	      "Options:\n"
	      "  -n, --frames N         frames to simulate (default: the scene's \"frames\"), 0 to 100000000\n"
	      "  -o, --out DIR          output folder (default: out/<scene name>)\n"
	      "      --format FMT       mesh output: obj (default; frame files with normals, and UVs for\n"
	      "                         grid cloth), ply (binary frame files), vtk (frame_<N>.vtu with\n"
	      "                         velocity and strain, and animation.pvd), usd (one animation.usda\n"
	      "                         for the run) or none\n"
	      "      --solver S         gauss_seidel (or gs) or jacobi\n"
	      "      --formulation F    pbd (stiffness) or xpbd (compliance)\n"
	      "      --method M         pbd, explicit_euler, symplectic_euler, implicit_euler,\n"
	      "                         projective_dynamics or vbd (one material under every method)\n"
	      "      --iterations N     constraint iterations per substep, 1 to 10000\n"
	      "      --substeps N       substeps per frame, 1 to 1000\n"
	      "      --threads N        threads a step runs on, 1 to 64 (same result for any N)\n"
	      "      --dt SECONDS       frame length, 1e-9 to 10\n"
	      "      --simd MODE        auto, scalar, avx2 or avx512: the distance kernels (same results)\n"
	      "      --max-output BYTES refuse, before it starts, a run that could write more than BYTES\n"
	      "                         (frame files, metrics.csv, state.txt; not --render's images),\n"
	      "                         each number counted at its widest; K, M, G, T suffixes (powers\n"
	      "                         of 1024); 0 = no limit (default: 4G). Above 100M a line on\n"
	      "                         stderr warns and names the size\n"
	      "  -q, --quiet            no progress line, no summary, no library warnings\n"
	      "      --progress         show the progress line even when stderr is not a terminal\n"
	      "      --plot             plot metrics.csv into the output folder at the end (see 'pbd plot --help')\n"
	      "      --profile          time each phase of the step (pbd_stats.profile) and print, at the end\n"
	      "                         (also with -q), the mean ms per step of each phase and its share\n"
	      "      --render PATH      draw the frames offscreen (OpenGL) into PATH: a .mp4 or .gif video\n"
	      "                         (through ffmpeg), a .png still of the last frame, or a folder\n"
	      "                         (ending in '/', or existing) of frame_00000.png ...\n"
	      "      --size WxH         image size, 16 to 8192 each (default: the scene's, else 960x540)\n"
	      "      --fps F            video frame rate: every k-th frame is drawn, k = round(1/(dt F)), so\n"
	      "                         the video plays in real time (default: 1/dt, at most 60 for MP4 and\n"
	      "                         50 for GIF; PNG frames: all of them)\n"
	      "      --overlay LIST     comma-separated: particles, constraints (colored by strain), pinned,\n"
	      "                         contacts; or none (default: the scene's, else pinned)\n"
	      "      --save-every N     write the world's complete state to DIR/snapshot.pbds every N frames\n"
	      "                         and at the last one (replaced in place, never left half written)\n"
	      "      --resume FILE      continue from a snapshot of this scene: the run starts at the frame\n"
	      "                         the snapshot was taken and ends bit-identical to a run that never\n"
	      "                         stopped; frames and metrics rows before that frame are kept\n"
	      "  -h, --help             this text\n"
	      "\n",
	      fp);
	fputs("Options override the scene's \"world\" settings. The progress line appears on stderr for\n"
	      "runs longer than a second; the summary (frames, times, ms per step for the simulation\n"
	      "alone, ms per frame for rendering and for encoding, final strain, contacts, the joints\n"
	      "broken and the largest error of the others, warnings) goes to stdout. Rendering is\n"
	      "described in docs/rendering.md.\n"
	      "\n"
	      "A frame in which the library undid a non-finite state, or after which a constraint is\n"
	      "stretched beyond the scene's divergence_strain, makes the run diverged: it goes on to the\n"
	      "end, writes every output, says so on stderr and exits with status 3.\n"
	      "\n"
	      "SIGINT (Ctrl-C) or SIGTERM stops the run after the frame it is on: metrics.csv and\n"
	      "state.txt (and with --save-every the snapshot) are written up to that frame, a line on\n"
	      "stderr says so, and the exit status is 130 or 143. A second one ends the program at once.\n"
	      "\n"
	      "Exit status: 0 success, 1 bad scene or failure while running, 2 bad command line,\n"
	      "3 the simulation diverged, 130 (SIGINT) or 143 (SIGTERM) interrupted.\n",
	      fp);
}

/* What --render PATH asks for, from its form alone; false when it is none of them. */
static bool render_kind_of(const char* path, cli_render_kind* kind) {
	const size_t n = strlen(path);
	struct stat st;
	if (n == 0) return false;
	if (path[n - 1] == '/' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode))) {
		*kind = CLI_RENDER_FRAMES;
		return true;
	}
	const char* dot = strrchr(path, '.');
	if (!dot || strchr(dot, '/') || strlen(dot) != 4) return false;
	char ext[4];
	for (int i = 0; i < 3; ++i) ext[i] = (char)(dot[1 + i] | 0x20); /* ASCII lower case */
	ext[3] = '\0';
	if (strcmp(ext, "mp4") == 0)
		*kind = CLI_RENDER_MP4;
	else if (strcmp(ext, "gif") == 0)
		*kind = CLI_RENDER_GIF;
	else if (strcmp(ext, "png") == 0)
		*kind = CLI_RENDER_STILL;
	else
		return false;
	return true;
}

/* "particles,constraints,..." or "none" into SCENE_OVERLAY_* bits; *bad gets a wrong name. */
static bool parse_overlays(const char* s, unsigned* out, char* bad, size_t bad_size) {
	*out = 0;
	if (strcmp(s, "none") == 0) return true;
	for (const char* p = s;;) {
		const size_t n = strcspn(p, ",");
		unsigned bit = 0;
		for (unsigned k = 0; pbd_scene_overlay_names[k]; ++k)
			if (strlen(pbd_scene_overlay_names[k]) == n && strncmp(p, pbd_scene_overlay_names[k], n) == 0)
				bit = 1u << k;
		if (!bit) {
			snprintf(bad, bad_size, "%.*s", (int)(n < 32 ? n : 32), p);
			return false;
		}
		*out |= bit;
		if (!p[n]) return true;
		p += n + 1;
	}
}

/* The message for an option that is none of run's, with the nearest one when it is a typo. */
static int unknown_option(cli_cursor* c, const char* arg) {
	static const char* const options[] = {
	    "--help",     "--frames",  "--out",  "--format", "--solver",     "--formulation", "--method",   "--iterations",
	    "--substeps", "--threads", "--dt",   "--simd",   "--max-output", "--quiet",       "--progress", "--plot",
	    "--profile",  "--render",  "--size", "--fps",    "--overlay",    "--save-every",  "--resume"};
	char name[64];
	snprintf(name, sizeof name, "%.*s", (int)strcspn(arg, "="), arg);
	const char* near = cli_suggest(name, options, sizeof options / sizeof options[0]);
	if (near) return cli_usage_error(c, "unknown option '%s'; did you mean '%s'?", arg, near);
	return cli_usage_error(c, "unknown option '%s'", arg);
}

/* Returns CLI_OK, or CLI_USAGE after printing the message (or CLI_OK with *help set). */
static int parse_options(int argc, char** argv, run_options* o, bool* help) {
	memset(o, 0, sizeof *o);
	o->frames = -1;
	cli_world_options_init(&o->world);
	o->max_output = DEFAULT_MAX_OUTPUT;
	*help = false;
	cli_cursor c = {argc, argv, 1, NULL, "pbd run", false, false};
	bool is_option;
	for (const char* arg; (arg = cli_next(&c, &is_option)) != NULL;) {
		if (is_option) {
			if (cli_match(&c, "-h", "--help", false)) {
				*help = true;
				return CLI_OK;
			} else if (cli_match(&c, "-n", "--frames", true)) {
				if (!cli_parse_int(c.value, 0, PBD_SCENE_MAX_FRAMES, &o->frames))
					return cli_usage_error(&c, "--frames: expected an integer in [0, %d], got '%s'",
					                       PBD_SCENE_MAX_FRAMES, c.value);
			} else if (cli_match(&c, "-o", "--out", true)) {
				if (!c.value[0]) return cli_usage_error(&c, "--out: empty folder name");
				o->out_dir = c.value;
			} else if (cli_match(&c, NULL, "--format", true)) {
				if (strcmp(c.value, "obj") == 0)
					o->format = OUT_FORMAT_OBJ;
				else if (strcmp(c.value, "ply") == 0)
					o->format = OUT_FORMAT_PLY;
				else if (strcmp(c.value, "none") == 0)
					o->format = OUT_FORMAT_NONE;
				else if (strcmp(c.value, "usd") == 0)
					o->format = OUT_FORMAT_USD;
				else if (strcmp(c.value, "vtk") == 0)
					o->format = OUT_FORMAT_VTK;
				else
					return cli_usage_error(&c, "--format: expected obj, ply, vtk, usd or none, got '%s'", c.value);
			} else if (cli_match_world_option(&c, &o->world)) {
				/* a bad value has set c.failed */
			} else if (cli_match(&c, NULL, "--save-every", true)) {
				if (!cli_parse_int(c.value, 1, PBD_SCENE_MAX_FRAMES, &o->save_every))
					return cli_usage_error(&c, "--save-every: expected an integer in [1, %d], got '%s'",
					                       PBD_SCENE_MAX_FRAMES, c.value);
			} else if (cli_match(&c, NULL, "--resume", true)) {
				if (!c.value[0]) return cli_usage_error(&c, "--resume: empty file name");
				o->resume = c.value;
			} else if (cli_match(&c, NULL, "--max-output", true)) {
				if (!cli_parse_size(c.value, &o->max_output))
					return cli_usage_error(&c, "--max-output: expected bytes with an optional K, M, G or T, got '%s'",
					                       c.value);
			} else if (cli_match(&c, "-q", "--quiet", false)) {
				o->quiet = true;
			} else if (cli_match(&c, NULL, "--progress", false)) {
				o->progress = true;
			} else if (cli_match(&c, NULL, "--plot", false)) {
				o->plot = true;
			} else if (cli_match(&c, NULL, "--profile", false)) {
				o->profile = true;
			} else if (cli_match(&c, NULL, "--render", true)) {
				if (!render_kind_of(c.value, &o->render.kind))
					return cli_usage_error(&c,
					                       "--render: expected a .mp4, .gif or .png file or a folder ending in '/', "
					                       "got '%s'",
					                       c.value);
				o->render.path = c.value;
			} else if (cli_match(&c, NULL, "--size", true)) {
				if (!cli_parse_dimensions(c.value, PBD_SCENE_RENDER_MIN_SIZE, PBD_SCENE_RENDER_MAX_SIZE,
				                          &o->render.width, &o->render.height))
					return cli_usage_error(&c, "--size: expected WxH with each from %d to %d, got '%s'",
					                       PBD_SCENE_RENDER_MIN_SIZE, PBD_SCENE_RENDER_MAX_SIZE, c.value);
				o->render_only = "--size";
			} else if (cli_match(&c, NULL, "--fps", true)) {
				if (!cli_parse_real(c.value, 0, true, 1000, &o->render.fps))
					return cli_usage_error(&c, "--fps: expected a number in (0, 1000], got '%s'", c.value);
				o->render_only = "--fps";
			} else if (cli_match(&c, NULL, "--overlay", true)) {
				char bad[40];
				if (!parse_overlays(c.value, &o->render.overlays, bad, sizeof bad))
					return cli_usage_error(&c,
					                       "--overlay: unknown overlay '%s' (particles, constraints, pinned, "
					                       "contacts or none)",
					                       bad);
				o->render.has_overlays = true;
				o->render_only = "--overlay";
			} else {
				return c.failed ? CLI_USAGE : unknown_option(&c, arg);
			}
			if (c.failed) return CLI_USAGE;
			continue;
		}
		if (o->scene_arg)
			return cli_usage_error(&c, "more than one pbd_scene given ('%s' and '%s')", o->scene_arg, arg);
		o->scene_arg = arg;
		c.i++;
	}
	if (o->render_only && !o->render.path) return cli_usage_error(&c, "%s needs --render", o->render_only);
	return CLI_OK;
}

static void clear_progress(run_state* rs) {
	if (rs->progress_shown) {
		fputs("\r\033[K", stderr);
		rs->progress_shown = false;
	}
}

/* Run-time warnings (a particle restored after going non-finite), and the scene loader's notes
 * while it loads. The loader holds the library's messages back meanwhile and reports a refusal
 * itself, with the field path. */
static void on_library_log(const char* message, void* user) {
	run_state* rs = user;
	if (rs->quiet || !(rs->stepping || rs->loading)) return;
	clear_progress(rs);
	fprintf(stderr, rs->loading ? "pbd: %s\n" : "pbd: library: %s\n", message);
}

/* The joints' line of the summary: a broken joint's error is how far apart its sides drifted,
 * not how well it holds, so the largest error is over the others. */
static void print_joints(const pbd_world* w) {
	const uint32_t n = pbd_world_joint_count(w);
	if (n == 0) return;
	uint32_t broken = 0;
	double worst = 0;
	for (uint32_t k = 0; k < n; ++k) {
		pbd_joint_state js;
		if (pbd_world_get_joint_state(w, k, &js) != PBD_OK) continue;
		if (js.broken)
			broken++;
		else if ((double)js.error_distance > worst)
			worst = (double)js.error_distance;
	}
	printf("  %u joint%s, %u broken; largest error_distance %.4g m (unbroken joints)\n", n, n == 1 ? "" : "s", broken,
	       worst);
}

/* The checks and writes of one frame; the caller times them as output. */
static bool emit_frame(const pbd_scene* s, int frame, const char* dir, out_format format, out_usd* usd, FILE* metrics,
                       const char* metrics_path, pbd_stats* stats, pbd_scene_error* err) {
	uint32_t bad;
	if (!out_state_is_finite(s, &bad)) {
		pbd_scene_error_set(err, "%s: frame %d: particle %u has a non-finite position or velocity; stopping", s->name,
		                    frame, bad);
		return false;
	}
	pbd_world_get_stats(s->world, stats);
	if (!out_stats_are_finite(stats)) {
		pbd_scene_error_set(err, "%s: frame %d: the metrics overflowed to a non-finite value; stopping", s->name,
		                    frame);
		return false;
	}
	char path[4200];
	out_frame_path(path, sizeof path, dir, frame, format);
	if (!out_write_frame(path, format, s, frame, err)) return false;
	if (usd && !out_usd_add_frame(usd, s, err)) return false;
	out_metrics_row(metrics, frame, stats);
	if (ferror(metrics)) {
		pbd_scene_error_set(err, "%s: write failed", metrics_path);
		return false;
	}
	return true;
}

static void show_progress(run_state* rs, bool tty, const char* name, int frame, int frames, double elapsed) {
	double pct = frames > 0 ? 100.0 * frame / frames : 100.0;
	double eta = frame > 0 ? elapsed * (frames - frame) / frame : 0.0;
	if (tty) {
		fprintf(stderr, "\r\033[K%s: frame %d/%d (%.0f%%), %.1f s elapsed, about %.0f s left", name, frame, frames, pct,
		        elapsed, eta);
		rs->progress_shown = true;
	} else {
		fprintf(stderr, "%s: frame %d/%d (%.0f%%), %.1f s elapsed, about %.0f s left\n", name, frame, frames, pct,
		        elapsed, eta);
	}
	fflush(stderr);
}

/* Refuses, before anything is written, a run whose files could pass --max-output. */
static bool output_fits(const run_options* o, const pbd_scene* s, int frames, pbd_scene_error* err) {
	out_run_size size;
	const uint64_t bytes = out_run_bytes(s, frames, o->format, &size);
	if (o->max_output == 0 || bytes <= o->max_output) {
		if (bytes > OUT_WARN_BYTES && !o->quiet) {
			char total[32];
			pbd_scene_format_bytes(total, sizeof total, bytes);
			fprintf(stderr, "pbd: %s: warning: %d frames may write up to %s into the output folder%s\n", s->name,
			        frames, total,
			        o->format == OUT_FORMAT_USD || o->format == OUT_FORMAT_NONE
			            ? ""
			            : "; --format usd writes one file, --format none no mesh files");
		}
		return true;
	}
	char total[32], limit[32], frame[32], metrics[32], state[32];
	pbd_scene_format_bytes(total, sizeof total, size.total);
	pbd_scene_format_bytes(limit, sizeof limit, o->max_output);
	pbd_scene_format_bytes(frame, sizeof frame, size.frame);
	pbd_scene_format_bytes(metrics, sizeof metrics, size.metrics);
	pbd_scene_format_bytes(state, sizeof state, size.state);
	char frames_text[96] = "";
	if (o->format != OUT_FORMAT_NONE)
		snprintf(frames_text, sizeof frames_text, "%d %s frames of up to %s, ", frames + 1, out_format_name(o->format),
		         frame);
	pbd_scene_error_set(err,
	                    "%s: %d frames could write %s (%smetrics.csv %s, state.txt %s), more than --max-output %s; "
	                    "run fewer frames (-n)%s, or raise --max-output (0 = no limit)",
	                    s->name, frames, total, frames_text, metrics, state, limit,
	                    o->format == OUT_FORMAT_NONE ? "" : ", write --format none");
	return false;
}

static int fail(run_state* rs, const pbd_scene_error* err) {
	clear_progress(rs);
	fprintf(stderr, "pbd: %s\n", err->message);
	return CLI_FAILED;
}

/* Replaces the scene's world by the snapshot's. The snapshot must be of this scene: the objects'
 * ranges index its particles, so their number must match. *start gets the snapshot's frame. */
static bool resume_world(const char* path, pbd_scene* s, run_state* rs, int* start, pbd_scene_error* err) {
	pbd_world_def hooks = pbd_world_def_default();
	hooks.log = on_library_log;
	hooks.log_user = rs;
	pbd_world* w = NULL;
	pbd_error perr;
	if (pbd_world_load(path, &hooks, &w, &perr) != PBD_OK) {
		pbd_scene_error_set(err, "%s", perr.message);
		return false;
	}
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	const uint32_t have = pbd_world_particle_count(s->world);
	if (st.particles != have || st.distances != pbd_world_distance_count(s->world)) {
		pbd_scene_error_set(err, "%s: a snapshot of %u particles and %u constraints, but scene %s has %u and %u", path,
		                    st.particles, st.distances, s->name, have, pbd_world_distance_count(s->world));
		pbd_world_destroy(w);
		return false;
	}
	if (st.steps > (uint64_t)PBD_SCENE_MAX_FRAMES) {
		pbd_scene_error_set(err, "%s: taken at step %llu, past any run", path, (unsigned long long)st.steps);
		pbd_world_destroy(w);
		return false;
	}
	pbd_world_destroy(s->world);
	s->world = w;
	*start = (int)st.steps;
	return true;
}

/* metrics.csv of a resumed run: the header and the rows of frames before `start` from the file
 * already there (the run being continued), then the new rows. Without one, a header only. */
static FILE* open_metrics(const char* path, int start, pbd_scene_error* err) {
	char* kept = NULL;
	size_t kept_len = 0;
	if (start > 0) {
		FILE* old = fopen(path, "rb");
		if (old) {
			FILE* mem = open_memstream(&kept, &kept_len);
			char line[8192];
			bool first = true;
			while (mem && fgets(line, sizeof line, old)) {
				const size_t n = strlen(line);
				if (n == 0 || line[n - 1] != '\n') break; /* a cut row ends what is kept */
				if (first) {
					first = false;
					continue; /* the header is written afresh */
				}
				char* end = NULL;
				const long frame = strtol(line, &end, 10);
				if (end == line || *end != ',' || frame < 0 || frame >= start) break;
				fputs(line, mem);
			}
			if (mem) fclose(mem);
			fclose(old);
		}
	}
	FILE* fp = fopen(path, "wb");
	if (!fp) {
		pbd_scene_error_set(err, "%s: cannot write: %s", path, strerror(errno));
		free(kept);
		return NULL;
	}
	out_metrics_header(fp);
	if (kept_len) fwrite(kept, 1, kept_len, fp);
	free(kept);
	return fp;
}

static bool save_snapshot(const pbd_scene* s, const char* path, pbd_scene_error* err) {
	if (pbd_world_save(s->world, path) == PBD_OK) return true;
	pbd_scene_error_set(err, "%s", pbd_world_last_error(s->world));
	return false;
}

static int run(const run_options* o) {
	run_state rs = {o->quiet, false, false, true};
	pbd_scene_options so = {false, on_library_log, &rs, 0};
	pbd_scene s;
	pbd_scene_error err;
	const bool loaded = cli_scene_load(o->scene_arg ? o->scene_arg : DEFAULT_SCENE, &so, &s, &err);
	rs.loading = false;
	if (!loaded) return fail(&rs, &err);
	int code = CLI_FAILED;
	FILE* metrics = NULL;
	cli_render* render = NULL;
	out_usd* usd = NULL;
	cli_render_report rr;
	memset(&rr, 0, sizeof rr);
	if (!cli_world_options_apply(&o->world, &s, &err)) goto done;

	const int frames = o->frames >= 0 ? (int)o->frames : s.frames;
	if (!output_fits(o, &s, frames, &err)) goto done;
	char dir[4096];
	if (o->out_dir)
		snprintf(dir, sizeof dir, "%s", o->out_dir);
	else
		snprintf(dir, sizeof dir, "out/%s", s.name);
	/* Trailing slashes would double up in the file names. */
	for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; --n) dir[n - 1] = '\0';
	int start = 0; /* the first frame: 0, or the snapshot's when resuming */
	if (o->resume) {
		if (!resume_world(o->resume, &s, &rs, &start, &err)) goto done;
		/* The command line's settings still win over the snapshot's. */
		if (!cli_world_options_apply(&o->world, &s, &err)) goto done;
		if (start > frames) {
			pbd_scene_error_set(&err, "%s: taken at frame %d, after the run's last frame %d", o->resume, start, frames);
			goto done;
		}
	}
	/* After the resume: a snapshot does not carry the flag. */
	if (o->profile && pbd_world_set_profile(s.world, true) != PBD_OK) {
		pbd_scene_error_set(&err, "--profile: %s", pbd_world_last_error(s.world));
		goto done;
	}
	profile_sum prof;
	memset(&prof, 0, sizeof prof);
	unsigned removed;
	if (!out_make_dir(dir, &err) || !out_clear_frames(dir, start - 1, &removed, &err)) goto done;
	char metrics_path[4200], state_path[4200], snapshot_path[4200];
	snprintf(metrics_path, sizeof metrics_path, "%s/metrics.csv", dir);
	snprintf(state_path, sizeof state_path, "%s/state.txt", dir);
	snprintf(snapshot_path, sizeof snapshot_path, "%s/snapshot.pbds", dir);
	metrics = open_metrics(metrics_path, start, &err);
	if (!metrics) goto done;
	if (o->format == OUT_FORMAT_USD) {
		int usd_first;
		if (!out_usd_open(dir, &s, start, &usd, &usd_first, &err)) goto done;
		if (usd_first != 0 && !o->quiet)
			fprintf(stderr,
			        "pbd: %s: no frame store of the earlier frames in %s/ (it is kept with --save-every); "
			        "animation.usda starts at frame %d\n",
			        s.name, dir, usd_first);
	}

	/* Before the first frame: the camera frames the initial state. */
	if (o->render.path && !cli_render_open(&o->render, &s, &render, &err)) goto done;

	const bool tty = isatty(fileno(stderr)) != 0;
	const bool want_progress = !o->quiet && (tty || o->progress);
	const double progress_every = tty ? 0.25 : 1.0;
	const double t_start = cli_now_seconds();
	double sim = 0, output = 0, next_progress = t_start + 1.0; /* nothing for runs under a second */
	pbd_stats stats;
	double t = cli_now_seconds();
	rs.stepping = true;
	/* From here on a signal stops the run between frames, with every file whole. */
	cli_signals_catch();
	if (!emit_frame(&s, start, dir, o->format, usd, metrics, metrics_path, &stats, &err)) goto done;
	output += cli_now_seconds() - t;
	if (render && !cli_render_frame(render, start, frames, &err)) goto done;
	uint64_t diverged_before = pbd_world_get_warning(s.world, PBD_WARN_DIVERGED).count;
	int first_diverged = -1, diverged_frames = 0;
	int last = frames; /* the last frame written */
	for (int f = start + 1; f <= frames; ++f) {
		if (cli_signals_caught()) {
			last = f - 1;
			break;
		}
		t = cli_now_seconds();
		pbd_status st = pbd_scene_step(&s);
		double t2 = cli_now_seconds();
		sim += t2 - t;
		if (st != PBD_OK) {
			pbd_scene_error_set(&err, "%s: frame %d: %s", s.name, f, pbd_world_last_error(s.world));
			goto done;
		}
		const uint64_t diverged_now = pbd_world_get_warning(s.world, PBD_WARN_DIVERGED).count;
		if (diverged_now != diverged_before) {
			diverged_before = diverged_now;
			if (first_diverged < 0) first_diverged = f;
			diverged_frames++;
		}
		if (!emit_frame(&s, f, dir, o->format, usd, metrics, metrics_path, &stats, &err)) goto done;
		if (o->profile) profile_sum_add(&prof, &stats.profile);
		if (o->save_every && (f % o->save_every == 0 || f == frames) && !save_snapshot(&s, snapshot_path, &err))
			goto done;
		double t3 = cli_now_seconds();
		output += t3 - t2;
		/* Timed inside, apart from the step and the output above. */
		if (render && !cli_render_frame(render, f, frames, &err)) goto done;
		if (want_progress && t3 >= next_progress) {
			show_progress(&rs, tty, s.name, f, frames, t3 - t_start);
			next_progress = t3 + progress_every;
		}
	}
	t = cli_now_seconds();
	/* The last frame has its snapshot, also when a signal cut the run short there. */
	if (o->save_every && (last == start || last < frames) && !save_snapshot(&s, snapshot_path, &err)) goto done;
	if (!out_write_state(state_path, &s, last, stats.time, &err)) goto done;
	if (usd) {
		out_usd* u = usd;
		usd = NULL;
		/* The store stays with the snapshot, so that a --resume can rebuild the whole animation. */
		if (!out_usd_finish(u, &s, o->save_every != 0, &err)) goto done;
	}
	if (o->format == OUT_FORMAT_VTK && !out_vtk_write_index(dir, last, (double)pbd_world_get_def(s.world).dt, &err))
		goto done;
	FILE* m = metrics;
	metrics = NULL;
	bool write_failed = ferror(m) != 0;
	if (fclose(m) != 0) write_failed = true;
	if (write_failed) {
		pbd_scene_error_set(&err, "%s: write failed", metrics_path);
		goto done;
	}
	output += cli_now_seconds() - t;
	bool render_failed = false;
	if (render) {
		cli_render* r = render;
		render = NULL;
		/* A Ctrl-C reaches ffmpeg too, which may then end the video its own way: that is said
		 * in the line about the interruption, whose files are whole all the same. */
		if (!cli_render_close(r, &rr, &err)) {
			if (!cli_signals_caught()) goto done;
			render_failed = true;
		}
	}
	clear_progress(&rs);
	const int sig = cli_signals_caught();
	cli_signals_restore();
	if (sig) {
		fprintf(stderr,
		        "pbd: %s: interrupted by %s at frame %d of %d; %s/metrics.csv%s and state.txt are complete up to "
		        "it%s%s\n",
		        s.name, sig == SIGINT ? "SIGINT" : "SIGTERM", last, frames, dir, o->save_every ? ", snapshot.pbds" : "",
		        render_failed ? "; --render: " : "", render_failed ? err.message : "");
		code = 128 + sig;
		goto done;
	}

	if (!o->quiet) {
		const double wall = cli_now_seconds() - t_start;
		const int stepped = frames - start;
		if (start > 0)
			printf("%s: frames %d to %d resumed from %s, %.6g s simulated, wall %.3f s\n", s.name, start, frames,
			       o->resume, stats.time, wall);
		else
			printf("%s: %d frames, %.6g s simulated, wall %.3f s\n", s.name, frames, stats.time, wall);
		if (stepped > 0)
			printf("  simulation %.3f s (%.4f ms/step), output %.3f s\n", sim, 1e3 * sim / stepped, output);
		else
			printf("  simulation 0 s, output %.3f s\n", output);
		printf("  %u particles, %u constraints, %u colliders; final max strain %.4g, contacts %u\n", stats.particles,
		       stats.distances, stats.colliders, stats.max_strain, stats.contacts);
		print_joints(s.world);
		pbd_warning_stat nonfinite = pbd_world_get_warning(s.world, PBD_WARN_NONFINITE);
		pbd_warning_stat clamped = pbd_world_get_warning(s.world, PBD_WARN_SPEED_CLAMPED);
		pbd_warning_stat diverged = pbd_world_get_warning(s.world, PBD_WARN_DIVERGED);
		if (nonfinite.count || clamped.count || diverged.count)
			printf("  warnings: %llu diverged steps, %llu non-finite particle states undone (last particle %u), "
			       "%llu speeds clamped (last particle %u)\n",
			       (unsigned long long)diverged.count, (unsigned long long)nonfinite.count, nonfinite.last_index,
			       (unsigned long long)clamped.count, clamped.last_index);
		const char* snap = o->save_every ? ", snapshot.pbds" : "";
		if (o->format == OUT_FORMAT_NONE)
			printf("  wrote %s/: metrics.csv, state.txt%s\n", dir, snap);
		else if (o->format == OUT_FORMAT_USD)
			printf("  wrote %s/: animation.usda (%d frames), metrics.csv, state.txt%s%s\n", dir, frames + 1 - start,
			       snap, o->save_every ? ", animation.frames" : "");
		else
			printf("  wrote %s/: %d %s frames%s, metrics.csv, state.txt%s\n", dir, frames + 1 - start,
			       out_format_name(o->format), o->format == OUT_FORMAT_VTK ? ", animation.pvd" : "", snap);
		if (o->render.path) {
			const int n = rr.frames > 0 ? rr.frames : 1;
			printf("  render %d images %dx%d on %s: drawing %.3f s (%.2f ms/frame), encoding %.3f s "
			       "(%.2f ms/frame), setup %.3f s\n",
			       rr.frames, rr.width, rr.height, rr.device, rr.render, 1e3 * rr.render / n, rr.encode,
			       1e3 * rr.encode / n, rr.setup);
			if (rr.codec[0])
				printf("  wrote %s: %s, %.4g fps\n", o->render.path, rr.codec, rr.fps);
			else
				printf("  wrote %s\n", o->render.path);
		}
	}
	if (o->profile) profile_print(stdout, &prof);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		pbd_scene_error_set(&err, "standard output: write failed");
		goto done;
	}
	/* After the summary, which it ends with its own line: its time is apart from the run's. */
	if (o->plot && !plot_after_run(metrics_path, dir, o->quiet, &err)) goto done;
	code = CLI_OK;
	if (diverged_frames) {
		/* Said even with -q: the numbers written are not a result. */
		fprintf(stderr,
		        "pbd: %s: diverged in %d of %d frames, first at frame %d (max strain %.4g at the end); the outputs "
		        "in %s/ are complete but not a valid simulation\n",
		        s.name, diverged_frames, frames - start, first_diverged, stats.max_strain, dir);
		code = CLI_DIVERGED;
	}
done:
	cli_signals_restore();
	if (code == CLI_FAILED) fail(&rs, &err);
	cli_render_abort(render);
	out_usd_discard(usd, o->save_every != 0);
	if (metrics) fclose(metrics);
	pbd_scene_free(&s);
	return code;
}

int cli_run(int argc, char** argv) {
	run_options o;
	bool help;
	int code = parse_options(argc, argv, &o, &help);
	if (code != CLI_OK) return code;
	if (help) {
		cli_run_help(stdout);
		return CLI_OK;
	}
	return run(&o);
}
