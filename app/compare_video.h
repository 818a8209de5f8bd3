/* `pbd compare --video`: the runs of the methods side by side in one MP4. Each method's run is
 * drawn into a panel (an MP4 of its own through cli_render, in a temporary folder) as it steps;
 * at the end ffmpeg stacks the panels left to right, in the order of --methods, each captioned
 * with its method and how it ended when ffmpeg can draw text. A panel whose run stopped early
 * (a failed method) holds its last picture to the end. */
#ifndef PBD_APP_COMPARE_VIDEO_H
#define PBD_APP_COMPARE_VIDEO_H

#include <stdbool.h>

#include "cli_render.h"
#include "pbd/scene.h"

typedef struct compare_video compare_video;

/// What the summary says about the video.
typedef struct compare_video_report {
	int panels;
	int width, height; ///< of one panel
	int frames;        ///< pictures in each full-length panel
	double fps;
	double seconds;  ///< drawing the panels and encoding them, wall time
	bool captions;   ///< the method names are drawn on the panels
	char codec[16];  ///< libx264 or mpeg4
	char device[96]; ///< the GL_RENDERER string
} compare_video_report;

/// Prepares a video of `panels` panels into `path` (an .mp4): checks that rendering was built
/// and that ffmpeg is on PATH, and makes the temporary folder. Each panel is width x height
/// (0: the scene's render size, shrunk so that the panels together are at most 1920 wide).
bool compare_video_begin(const char* path, int panels, int width, int height, const scene* s, compare_video** out,
                         scene_error* err);

/// Opens the renderer of panel `index` on scene `s` in its initial state (the camera frames it).
bool compare_video_panel_open(compare_video* v, int index, const scene* s, cli_render** out, scene_error* err);

/// Finishes panel `index` (r from compare_video_panel_open) with its caption: [a-z0-9_ -] only.
bool compare_video_panel_close(compare_video* v, int index, cli_render* r, const char* caption, scene_error* err);

/// Stacks the panels into the video, deletes the temporary folder and frees v. False with
/// ffmpeg's last message when it failed.
bool compare_video_finish(compare_video* v, compare_video_report* report, scene_error* err);

/// Deletes the temporary folder and frees v (NULL is accepted).
void compare_video_abort(compare_video* v);

#endif
