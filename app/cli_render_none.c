/* `pbd run --render` in a build without pbd_render (libepoxy, EGL or stb missing). */
#include "cli_render.h"

bool cli_render_open(const cli_render_options* o, const scene* s, cli_render** out, scene_error* err) {
	(void)s;
	*out = NULL;
	scene_error_set(err,
	                "%s: this pbd was built without rendering (pbd_render needs libepoxy, EGL and stb; "
	                "see docs/rendering.md)",
	                o->option ? o->option : "--render");
	return false;
}

bool cli_render_available(void) { return false; }

bool cli_render_frame(cli_render* r, int frame, int frames, scene_error* err) {
	(void)r;
	(void)frame;
	(void)frames;
	(void)err;
	return true;
}

bool cli_render_close(cli_render* r, cli_render_report* report, scene_error* err) {
	(void)r;
	(void)report;
	(void)err;
	return true;
}

void cli_render_abort(cli_render* r) { (void)r; }
