/* `pbd view`: the interactive viewer (GLFW window, OpenGL 3.3 core, drawn by pbd_render).
 * Optional: built when GLFW 3 and pbd_render are found; the `pbd` program calls it for `view`. */
#ifndef PBD_VIEWER_VIEW_H
#define PBD_VIEWER_VIEW_H

#ifdef __cplusplus
extern "C" {
#endif

/// Runs the viewer with command-line style arguments: argv[0] names the command and the options
/// start at argv[1] (`--help` lists them). Returns 0 on success, 1 when the scene does not load or
/// no window can be opened (one line on stderr), 2 on a bad command line.
int pbd_view_main(int argc, char** argv);

#ifdef __cplusplus
}
#endif

#endif
