/* The `pbd` command: run scenes, compare methods on one, list the built-in ones, run the benchmark. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli_args.h"
#include "cli_compare.h"
#include "cli_new.h"
#include "cli_run.h"
#include "cli_suggest.h"
#include "pbd/pbd.h"
#include "plot.h"
#include "pbd/scene.h"

#ifdef PBD_HAVE_BENCH
#include "bench/bench.h"
#endif
#ifdef PBD_HAVE_VIEWER
#include "viewer/view.h"
#endif

static void print_help(FILE* fp) {
	fputs("Usage: pbd <command> [arguments]\n"
	      "\n"
	      "Position based dynamics from the command line.\n"
	      "\n"
	      "Commands:\n"
	      "  run [SCENE] [options]  simulate a scene file or built-in scene and write OBJ/PLY/VTK frames\n"
	      "                         or a USD animation, metrics.csv and state.txt (default scene:\n"
	      "                         cloth_sphere);\n"
	      "                         'pbd run --help' lists the options\n"
	      "  compare SCENE --methods LIST [options]\n"
	      "                         the scene once per method (pbd, xpbd, explicit_euler, implicit_euler,\n"
	      "                         ...): compare.csv, summary.csv and a table of cost, strain, energy\n"
	      "                         drift and divergence; --plot, --video; 'pbd compare --help'\n"
	      "  view [SCENE] [options] show a scene in a window as it runs: orbit, grab and drag the cloth,\n"
	      "                         change the solver live; 'pbd view --help' lists the options\n"
	      "  list                   the built-in scenes, one per line with a description; 'pbd list --help'\n"
	      "  new [FILE] [--force]   write a starting scene with comments on every field (stdout without FILE)\n"
	      "  plot CSV [-o DIR]      PNG plots of a run's metrics.csv (energy, strain, contacts) via gnuplot\n"
	      "  bench [options]        the benchmark; 'pbd bench --help' lists its options\n"
	      "\n"
	      "Options:\n"
	      "  -h, --help             this text\n"
	      "  -V, --version          the program's and the library's version and precision\n"
	      "\n"
	      "Scene files are JSON; the format is described in docs/scene-format.md.\n"
	      "Exit status: 0 success, 1 bad input or failure while running, 2 bad command line.\n",
	      fp);
}

static void list_help(FILE* fp) {
	fputs("Usage: pbd list\n"
	      "\n"
	      "Prints the built-in scenes, sorted by name, one per line: the name, then the scene's\n"
	      "description. Any of them can be given to 'pbd run', 'pbd compare' and 'pbd view' by name.\n"
	      "\n"
	      "Options:\n"
	      "  -h, --help             this text\n",
	      fp);
}

static int cmd_list(int argc, char** argv) {
	if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		list_help(stdout);
		return CLI_OK;
	}
	if (argc > 1) {
		fprintf(stderr, "pbd: list takes no arguments (see 'pbd list --help')\n");
		return CLI_USAGE;
	}
	size_t width = 0;
	for (size_t i = 0; i < pbd_scene_builtin_count(); ++i) {
		size_t n = strlen(pbd_scene_builtin_at(i)->name);
		if (n > width) width = n;
	}
	for (size_t i = 0; i < pbd_scene_builtin_count(); ++i) {
		const pbd_scene_builtin* b = pbd_scene_builtin_at(i);
		char description[256];
		pbd_scene_builtin_description(b, description, sizeof description);
		printf("%-*s  %s\n", (int)width, b->name, description);
	}
	return CLI_OK;
}

static int cmd_view(int argc, char** argv) {
#ifdef PBD_HAVE_VIEWER
	return pbd_view_main(argc, argv);
#else
	(void)argc;
	(void)argv;
	fprintf(stderr, "pbd: built without the viewer (needs GLFW 3, libglfw3-dev, and pbd_render's OpenGL libraries)\n");
	return CLI_FAILED;
#endif
}

static int cmd_bench(int argc, char** argv) {
#ifdef PBD_HAVE_BENCH
	return pbd_bench_main(argc, argv);
#else
	(void)argc;
	(void)argv;
	fprintf(stderr, "pbd: built without the benchmark\n");
	return CLI_FAILED;
#endif
}

/* What a command wrote to stdout must have arrived: a full disk or /dev/full fails the command,
 * whichever it was. stdio reports a failed write only through the stream's error flag, and may
 * have dropped the bytes by the time of the last flush, so both are asked. A command that failed
 * has said why already; one that succeeded is failed here with the message. */
static int check_stdout(int rc) {
	errno = 0;
	const bool flush_failed = fflush(stdout) != 0;
	const int e = errno;
	if (!flush_failed && !ferror(stdout)) return rc;
	if (rc != CLI_OK) return rc;
	if (flush_failed && e)
		fprintf(stderr, "pbd: standard output: write failed: %s\n", strerror(e));
	else
		fprintf(stderr, "pbd: standard output: write failed\n");
	return CLI_FAILED;
}

static int run_command(int argc, char** argv) {
	if (argc < 2) {
		print_help(stderr);
		return CLI_USAGE;
	}
	const char* cmd = argv[1];
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
		print_help(stdout);
		return CLI_OK;
	}
	if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) {
#ifdef PBD_DOUBLE
		const char* precision = "double";
#else
		const char* precision = "float";
#endif
		printf("pbd %s (library %s, %s precision)\n", PBD_VERSION_STRING, pbd_version(), precision);
		return CLI_OK;
	}
	/* Each command sees its own name as argv[0], as a program would. */
	if (strcmp(cmd, "run") == 0) return cli_run(argc - 1, argv + 1);
	if (strcmp(cmd, "compare") == 0) return cli_compare(argc - 1, argv + 1);
	if (strcmp(cmd, "list") == 0) return cmd_list(argc - 1, argv + 1);
	if (strcmp(cmd, "new") == 0) return cli_new(argc - 1, argv + 1);
	if (strcmp(cmd, "plot") == 0) return plot_main(argc - 1, argv + 1);
	if (strcmp(cmd, "view") == 0) return cmd_view(argc - 1, argv + 1);
	if (strcmp(cmd, "bench") == 0) return cmd_bench(argc - 1, argv + 1);
	static const char* const commands[] = {"run", "compare", "list", "new", "plot", "view", "bench", "help"};
	const char* near = cli_suggest(cmd, commands, sizeof commands / sizeof commands[0]);
	if (near)
		fprintf(stderr, "pbd: unknown command '%s'; did you mean '%s'? (see 'pbd --help')\n", cmd, near);
	else
		fprintf(stderr, "pbd: unknown command '%s' (see 'pbd --help')\n", cmd);
	return CLI_USAGE;
}

int main(int argc, char** argv) { return check_stdout(run_command(argc, argv)); }
