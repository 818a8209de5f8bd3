/* `pbd run --render`: every frame of a run drawn offscreen and written as PNG files, one PNG
 * still, or a video through ffmpeg. Built with pbd_render (cli_render.c); without it the same
 * calls report that rendering is unavailable (cli_render_none.c). */
#ifndef PBD_APP_CLI_RENDER_H
#define PBD_APP_CLI_RENDER_H

#include <stdbool.h>
#include <stdio.h>

#include "pbd/scene.h"

typedef enum cli_render_kind {
	CLI_RENDER_FRAMES = 0, /* a folder: frame_00000.png ... */
	CLI_RENDER_STILL,      /* a .png file: the last frame */
	CLI_RENDER_MP4,
	CLI_RENDER_GIF
} cli_render_kind;

typedef struct cli_render_options {
	const char* path; /* NULL: no rendering */
	cli_render_kind kind;
	int width, height;  /* 0: the scene's, else the default */
	double fps;         /* 0: the default (see cli_run_help) */
	bool has_overlays;  /* --overlay given */
	unsigned overlays;  /* SCENE_OVERLAY_* bits */
	const char* option; /* the option messages name, NULL: "--render" */
} cli_render_options;

/* Whether this pbd was built with pbd_render; without it cli_render_open says so. */
bool cli_render_available(void);

typedef struct cli_render cli_render;

/* Makes the GL context, the renderer and the output (a folder, a file, an ffmpeg process) for
 * scene `s` in its initial state, which the camera frames. The world's dt sets the video's
 * frame rate (real time). A missing GL driver reads "--render: no OpenGL context: ...". */
bool cli_render_open(const cli_render_options* o, const scene* s, cli_render** out, scene_error* err);

/* Renders frame `frame` of `frames` if the output takes it (every frame, every k-th for a
 * lower frame rate, or only the last for a still) and writes it. */
bool cli_render_frame(cli_render* r, int frame, int frames, scene_error* err);

/* What the closing summary says about rendering. */
typedef struct cli_render_report {
	int frames;        /* images made */
	double setup;      /* s: context, shaders, starting ffmpeg */
	double render;     /* s: reading the world, drawing, reading the pixels back */
	double encode;     /* s: PNG encoding and writing, or feeding ffmpeg and waiting for it to finish */
	double fps;        /* of the video */
	int width, height; /* of the images */
	char device[96];   /* the GL_RENDERER string */
	char codec[16];    /* video codec, "" for PNG */
} cli_render_report;

/* Finishes the output (waits for ffmpeg), fills *report (may be NULL) and frees r. False with
 * a message when the output could not be completed. */
bool cli_render_close(cli_render* r, cli_render_report* report, scene_error* err);

/* Frees r without finishing (after a failure elsewhere); a video is ended as it is. r may be
 * NULL. */
void cli_render_abort(cli_render* r);

#endif
