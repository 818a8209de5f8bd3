/* What LeakSanitizer needs to judge the viewer fairly (sanitizer builds only).
 *
 * Mesa's driver (dri/swrast_dri.so, llvmpipe) keeps some allocations for the life of the
 * process, reachable from its own globals. When GLFW closes the display at exit the driver is
 * unloaded, its globals are unmapped, and LeakSanitizer, which scans at exit, sees those blocks
 * as leaked with no module to name the allocating code ("<unknown module>"), so no suppression can
 * match them. Keeping the driver mapped (RTLD_NODELETE on the already loaded object) leaves them
 * reachable, as they are (the view_* tests then pass under LeakSanitizer with no suppression),
 * and anything the driver really leaked would be reported under its name, so that a suppression
 * could name the driver without hiding leaks of pbd's own code. pbd_render's offscreen target
 * keeps its EGL display for the same reason (docs/rendering.md). */
#ifdef PBD_VIEW_KEEP_GL_DRIVER
#define _GNU_SOURCE /* dl_iterate_phdr, RTLD_NODELETE */
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#endif

#include "viewer.h"

#ifdef PBD_VIEW_KEEP_GL_DRIVER

static int keep_driver(struct dl_phdr_info* info, size_t size, void* user) {
	(void)size;
	(void)user;
	/* Mesa's drivers are loaded from a dri/ folder (swrast_dri.so, iris_dri.so, ...). The handle
	 * is dropped on purpose: the object is to stay loaded. */
	if (info->dlpi_name && strstr(info->dlpi_name, "/dri/"))
		(void)dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
	return 0;
}

void view_keep_gl_driver(void) { dl_iterate_phdr(keep_driver, NULL); }
#else
void view_keep_gl_driver(void) {}
#endif
