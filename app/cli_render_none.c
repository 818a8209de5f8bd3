/* `pbd run --render` in a build without pbd_render (libepoxy, EGL or stb missing). */
#include "cli_render.h"

bool cli_render_open(const cli_render_options* o, const pbd_scene* s, cli_render** out, pbd_scene_error* err) {
	(void)s;
	*out = NULL;
	pbd_scene_error_set(err,
	                    "%s: this pbd was built without rendering (pbd_render needs libepoxy, EGL and stb; "
	                    "see docs/rendering.md)",
	                    o->option ? o->option : "--render");
	return false;
}

bool cli_render_available(void) { return false; }

bool cli_render_frame(cli_render* r, int frame, int frames, pbd_scene_error* err) {
	(void)r;
	(void)frame;
	(void)frames;
	(void)err;
	return true;
}

bool cli_render_close(cli_render* r, cli_render_report* report, pbd_scene_error* err) {
	(void)r;
	(void)report;
	(void)err;
	return true;
}

void cli_render_abort(cli_render* r) { (void)r; }
