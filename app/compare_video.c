/* The side-by-side video of `pbd compare`: panels through cli_render, stacked by ffmpeg. */
#define _POSIX_C_SOURCE 200809L
#include "compare_video.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "child_process.h"
#include "cli_clock.h"

/* The widest video the default panel size makes: a full-HD screen's width. */
#define VIDEO_MAX_WIDTH 1920
/* A panel's size when neither --size nor the scene's "render" gives one (pbd run's default). */
#define VIDEO_DEFAULT_WIDTH  960
#define VIDEO_DEFAULT_HEIGHT 540
#define VIDEO_MAX_PANELS     16
#define VIDEO_CAPTION_MAX    64

struct compare_video {
	const char* path;
	int panels, width, height;
	char ffmpeg[4200];
	char tmp[4096];                     /* the temporary folder of the panels */
	char panel[VIDEO_MAX_PANELS][4200]; /* their files, kept for cli_render, which holds the name */
	char caption[VIDEO_MAX_PANELS][VIDEO_CAPTION_MAX];
	bool done[VIDEO_MAX_PANELS];
	compare_video_report report;
};

/* Even sizes: every panel is then encoded without padding, and all of them stack exactly. */
static int even_at_least_16(double x) {
	int n = (int)x & ~1;
	return n < 16 ? 16 : n;
}

bool compare_video_begin(const char* path, int panels, int width, int height, const pbd_scene* s, compare_video** out,
                         pbd_scene_error* err) {
	*out = NULL;
	if (!cli_render_available()) {
		pbd_scene_error_set(err, "--video: this pbd was built without rendering (pbd_render needs libepoxy, EGL and "
		                         "stb; see docs/rendering.md)");
		return false;
	}
	if (panels < 1 || panels > VIDEO_MAX_PANELS) {
		pbd_scene_error_set(err, "--video: %d panels, at most %d", panels, VIDEO_MAX_PANELS);
		return false;
	}
	compare_video* v = calloc(1, sizeof *v);
	if (!v) {
		pbd_scene_error_set(err, "--video: out of memory");
		return false;
	}
	v->path = path;
	v->panels = panels;
	if (!child_find_program("ffmpeg", v->ffmpeg, sizeof v->ffmpeg)) {
		pbd_scene_error_set(
		    err, "--video: ffmpeg is not on the PATH; it stacks the panels (Debian: apt-get install ffmpeg)");
		free(v);
		return false;
	}
	if (width > 0) {
		v->width = width & ~1;
		v->height = height & ~1;
	} else {
		const double w = s->render.width > 0 ? s->render.width : VIDEO_DEFAULT_WIDTH;
		const double h = s->render.height > 0 ? s->render.height : VIDEO_DEFAULT_HEIGHT;
		const double scale = panels * w > VIDEO_MAX_WIDTH ? VIDEO_MAX_WIDTH / (panels * w) : 1.0;
		v->width = even_at_least_16(w * scale);
		v->height = even_at_least_16(h * scale);
	}
	const char* tmp = getenv("TMPDIR");
	if (!tmp || !*tmp) tmp = "/tmp";
	int n = snprintf(v->tmp, sizeof v->tmp, "%s/pbd-compare-XXXXXX", tmp);
	if (n < 0 || (size_t)n >= sizeof v->tmp || !mkdtemp(v->tmp)) {
		pbd_scene_error_set(err, "--video: cannot create a temporary folder in %s: %s", tmp,
		                    n < 0 || (size_t)n >= sizeof v->tmp ? "path too long" : strerror(errno));
		free(v);
		return false;
	}
	for (int i = 0; i < panels; ++i) snprintf(v->panel[i], sizeof v->panel[i], "%s/panel_%02d.mp4", v->tmp, i);
	v->report.panels = panels;
	v->report.width = v->width;
	v->report.height = v->height;
	*out = v;
	return true;
}

bool compare_video_panel_open(compare_video* v, int index, const pbd_scene* s, cli_render** out, pbd_scene_error* err) {
	cli_render_options o;
	memset(&o, 0, sizeof o);
	o.path = v->panel[index];
	o.kind = CLI_RENDER_MP4;
	o.width = v->width;
	o.height = v->height;
	o.option = "--video";
	return cli_render_open(&o, s, out, err);
}

bool compare_video_panel_close(compare_video* v, int index, cli_render* r, const char* caption, pbd_scene_error* err) {
	cli_render_report rr;
	memset(&rr, 0, sizeof rr);
	if (!cli_render_close(r, &rr, err)) return false;
	snprintf(v->caption[index], sizeof v->caption[index], "%s", caption);
	v->done[index] = true;
	v->report.seconds += rr.setup + rr.render + rr.encode;
	if (rr.frames > v->report.frames) v->report.frames = rr.frames;
	v->report.fps = rr.fps;
	snprintf(v->report.codec, sizeof v->report.codec, "%s", rr.codec);
	snprintf(v->report.device, sizeof v->report.device, "%s", rr.device);
	return true;
}

static void remove_panels(compare_video* v) {
	for (int i = 0; i < v->panels; ++i) unlink(v->panel[i]);
	rmdir(v->tmp);
}

void compare_video_abort(compare_video* v) {
	if (!v) return;
	remove_panels(v);
	free(v);
}

/* The filter graph: each panel captioned (drawtext, in a box at its top left) or passed as it
 * is, then stacked. The captions are plain words, so nothing in them needs escaping. */
static void filter_graph(const compare_video* v, bool captions, char* out, size_t size) {
	size_t used = 0;
	const int font = v->height / 18 > 10 ? v->height / 18 : 10;
	for (int i = 0; i < v->panels && used < size; ++i) {
		int w;
		if (captions)
			w = snprintf(out + used, size - used,
			             "[%d:v]drawtext=text='%s':x=%d:y=%d:fontsize=%d:fontcolor=white:box=1:boxcolor=black@0.55:"
			             "boxborderw=%d[p%d];",
			             i, v->caption[i], font / 2, font / 2, font, font / 4, i);
		else
			w = snprintf(out + used, size - used, "[%d:v]null[p%d];", i, i);
		used += w > 0 ? (size_t)w : 0;
	}
	for (int i = 0; i < v->panels && used < size; ++i) {
		int w = snprintf(out + used, size - used, "[p%d]", i);
		used += w > 0 ? (size_t)w : 0;
	}
	if (used < size) {
		if (v->panels > 1)
			snprintf(out + used, size - used, "hstack=inputs=%d[v]", v->panels);
		else
			snprintf(out + used, size - used, "null[v]");
	}
}

/* The last non-empty line of ffmpeg's output: its error. */
static void last_line(char* text, char* out, size_t size) {
	out[0] = '\0';
	for (char* p = strtok(text, "\r\n"); p; p = strtok(NULL, "\r\n"))
		if (strspn(p, " \t") != strlen(p)) snprintf(out, size, "%s", p);
}

static bool stack(compare_video* v, bool captions, pbd_scene_error* err) {
	char inputs[VIDEO_MAX_PANELS][4300];
	char graph[VIDEO_MAX_PANELS * (VIDEO_CAPTION_MAX + 160) + 64];
	char target[4200];
	filter_graph(v, captions, graph, sizeof graph);
	/* "file:" keeps ffmpeg from reading a name that starts with '-' as an option, or one with a
	 * colon as a protocol. */
	snprintf(target, sizeof target, "file:%s", v->path);
	const bool x264 = strcmp(v->report.codec, "libx264") == 0;
	char* args[2 * VIDEO_MAX_PANELS + 32];
	int n = 0;
	args[n++] = "ffmpeg";
	args[n++] = "-hide_banner";
	args[n++] = "-nostdin";
	args[n++] = "-loglevel";
	args[n++] = "error";
	args[n++] = "-y";
	for (int i = 0; i < v->panels; ++i) {
		snprintf(inputs[i], sizeof inputs[i], "file:%s", v->panel[i]);
		args[n++] = "-i";
		args[n++] = inputs[i];
	}
	args[n++] = "-filter_complex";
	args[n++] = graph;
	args[n++] = "-map";
	args[n++] = "[v]";
	args[n++] = "-c:v";
	args[n++] = x264 ? "libx264" : "mpeg4";
	args[n++] = x264 ? "-crf" : "-q:v";
	args[n++] = x264 ? "18" : "2";
	args[n++] = "-pix_fmt";
	args[n++] = "yuv420p";
	args[n++] = "-movflags";
	args[n++] = "+faststart";
	args[n++] = "-f";
	args[n++] = "mp4";
	args[n++] = target;
	args[n] = NULL;
	char tail[4096];
	int status;
	if (!child_run(v->ffmpeg, args, tail, sizeof tail, &status, err)) return false;
	if (child_succeeded(status)) return true;
	char how[64], message[512];
	child_describe_status(status, how, sizeof how);
	last_line(tail, message, sizeof message);
	pbd_scene_error_set(err, "--video: ffmpeg failed (%s)%s%s", how, message[0] ? ": " : "", message);
	return false;
}

bool compare_video_finish(compare_video* v, compare_video_report* report, pbd_scene_error* err) {
	const double t0 = cli_now_seconds();
	bool ok = true;
	for (int i = 0; ok && i < v->panels; ++i)
		if (!v->done[i]) {
			pbd_scene_error_set(err, "--video: panel %d was not drawn", i);
			ok = false;
		}
	/* Captions need drawtext and a font, which some ffmpeg builds lack: without them the panels
	 * are stacked bare, and the report says so. */
	if (ok) {
		v->report.captions = stack(v, true, err);
		if (!v->report.captions) ok = stack(v, false, err);
	}
	v->report.seconds += cli_now_seconds() - t0;
	if (report) *report = v->report;
	compare_video_abort(v);
	return ok;
}
