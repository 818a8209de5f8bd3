/* `pbd new`: the starting scene lives here, once; its test loads what the command writes. */
#define _POSIX_C_SOURCE 200809L /* fdopen */
#include "cli_new.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli_args.h"

const char cli_new_scene[] =
    "// A starting scene for pbd: a cloth held at two corners falls onto a ball.\n"
    "// Run it with `pbd run FILE` (frames go to out/<name>/), or watch it with `pbd view FILE`.\n"
    "// Every key, its default and its range: docs/scene-format.md. Scene files may hold\n"
    "// comments like these (// to the end of the line, and /* ... */).\n"
    "{\n"
    "\t// The output folder is out/<name>/: letters, digits, '_', '-' and '.'.\n"
    "\t\"name\": \"my_scene\",\n"
    "\t\"description\": \"A cloth held at two corners falls onto a ball\",\n"
    "\t// How long a run lasts: one frame is one world step of world.dt seconds.\n"
    "\t\"frames\": 180,\n"
    "\t\"world\": {\n"
    "\t\t\"dt\": 0.016666667,           // seconds per frame\n"
    "\t\t\"substeps\": 10,              // steps inside a frame: more make the cloth stiffer and contacts firmer\n"
    "\t\t\"iterations\": 2,             // constraint sweeps per substep\n"
    "\t\t\"formulation\": \"xpbd\",       // \"xpbd\": softness as compliance (m/N), independent of the step\n"
    "\t\t\"gravity\": [0, -9.81, 0]     // m/s^2; y is up\n"
    "\t},\n"
    "\t// The bodies, added to the world in this order.\n"
    "\t\"objects\": [\n"
    "\t\t{\n"
    "\t\t\t\"type\": \"grid_cloth\",      // a rectangle of nx x ny particles joined by distance constraints\n"
    "\t\t\t\"name\": \"cloth\",\n"
    "\t\t\t\"nx\": 20, \"ny\": 20,         // particles along each side\n"
    "\t\t\t\"size\": [1, 1],             // metres along axis_u and axis_v\n"
    "\t\t\t\"origin\": [-0.5, 0.6, -0.5], // where particle (0, 0) starts\n"
    "\t\t\t\"axis_u\": [1, 0, 0],        // the two directions the sides run along\n"
    "\t\t\t\"axis_v\": [0, 0, 1],\n"
    "\t\t\t\"bend\": true,               // extra links that resist folding\n"
    "\t\t\t// A fabric preset (\"cotton\", \"denim\", \"polyester\", \"rubber\", ...): its density and\n"
    "\t\t\t// stiffness set the mass and the compliance of every link.\n"
    "\t\t\t\"cloth_material\": \"cotton\",\n"
    "\t\t\t// Particles that never move: here the two corners of the row at the origin.\n"
    "\t\t\t\"pinned\": {\"grid_corners\": [\"top_left\", \"top_right\"]}\n"
    "\t\t}\n"
    "\t],\n"
    "\t// Shapes the bodies collide with; static unless \"kind\": \"kinematic\".\n"
    "\t\"colliders\": [\n"
    "\t\t{\"type\": \"sphere\", \"center\": [0, 0.1, 0.1], \"radius\": 0.25, \"margin\": 0.005},\n"
    "\t\t{\"type\": \"plane\", \"normal\": [0, 1, 0], \"offset\": -0.5} // the floor, y = -0.5\n"
    "\t]\n"
    "}\n";

static void usage(FILE* fp) {
	fputs("Usage: pbd new [FILE] [--force]\n"
	      "\n"
	      "Writes a starting scene, with a comment on every field, to FILE (or to standard output).\n"
	      "An existing FILE is left alone unless --force is given.\n",
	      fp);
}

int cli_new(int argc, char** argv) {
	const char* path = NULL;
	bool force = false;
	for (int i = 1; i < argc; ++i) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return CLI_OK;
		}
		if (!strcmp(argv[i], "--force") || !strcmp(argv[i], "-f")) {
			force = true;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "pbd: new: unknown option '%s' (see 'pbd new --help')\n", argv[i]);
			return CLI_USAGE;
		} else if (path) {
			fprintf(stderr, "pbd: new: one file at most ('%s' and '%s')\n", path, argv[i]);
			return CLI_USAGE;
		} else {
			path = argv[i];
		}
	}
	if (!path) {
		/* A failed write fails the command in main, with the message. */
		fputs(cli_new_scene, stdout);
		return CLI_OK;
	}
	/* O_EXCL: the check and the creation are one step, so no file appears in between. */
	const int fd = open(path, O_WRONLY | O_CREAT | (force ? O_TRUNC : O_EXCL), 0666);
	if (fd < 0) {
		if (errno == EEXIST)
			fprintf(stderr, "pbd: %s: already exists (--force replaces it)\n", path);
		else
			fprintf(stderr, "pbd: %s: cannot create: %s\n", path, strerror(errno));
		return CLI_FAILED;
	}
	FILE* fp = fdopen(fd, "w");
	if (!fp) {
		fprintf(stderr, "pbd: %s: %s\n", path, strerror(errno));
		close(fd);
		return CLI_FAILED;
	}
	const bool ok = fputs(cli_new_scene, fp) >= 0;
	if (fclose(fp) != 0 || !ok) {
		fprintf(stderr, "pbd: %s: cannot write: %s\n", path, strerror(errno));
		return CLI_FAILED;
	}
	return CLI_OK;
}
