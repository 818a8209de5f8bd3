/* A world's error and log lines: the last error kept for pbd_world_last_error, both sent to the
 * log callback of the world's def. */
#include <stdarg.h>
#include <stdio.h>

#include "model/world.h"

pbd_status pbd_fail(pbd_world* w, pbd_status status, const char* fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->last_error, sizeof w->last_error, fmt, ap);
	va_end(ap);
	if (w->def.log) w->def.log(w->last_error, w->def.log_user);
	return status;
}

void pbd_log(const pbd_world* w, const char* fmt, ...) {
	if (!w->def.log) return;
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	w->def.log(line, w->def.log_user);
}
