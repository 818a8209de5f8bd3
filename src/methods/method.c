/* Names of the methods, for scene files, the command line and the output. */
#include <string.h>

#include "model/world.h"

static const char* const method_names[PBD_METHOD_COUNT] = {
    "pbd", "explicit_euler", "symplectic_euler", "implicit_euler", "projective_dynamics", "vbd",
};

const char* pbd_method_name(pbd_method method) {
	return (int)method >= 0 && method < PBD_METHOD_COUNT ? method_names[method] : "unknown";
}

bool pbd_method_from_name(const char* name, pbd_method* out) {
	if (!name) return false;
	for (int m = 0; m < PBD_METHOD_COUNT; ++m)
		if (strcmp(name, method_names[m]) == 0) {
			if (out) *out = (pbd_method)m;
			return true;
		}
	return false;
}
