/* The method table (method.h) and the names of methods, solvers and formulations, which the
 * scene files, the command line, the bindings and the output read from here. */
#include <string.h>

#include "methods/integrate.h"
#include "methods/method.h"
#include "methods/solver.h"

static const pbd_method_ops position_based = {
    .name = "pbd",
    .solver_settings = true,
    .prepare = pbd_solver_prepare,
    .substep = pbd_solver_substep,
};
static const pbd_method_ops explicit_euler = {
    .name = "explicit_euler",
    .forces = true,
    .prepare = pbd_integrate_prepare,
    .substep = pbd_integrate_substep,
};
static const pbd_method_ops symplectic_euler = {
    .name = "symplectic_euler",
    .forces = true,
    .prepare = pbd_integrate_prepare,
    .substep = pbd_integrate_substep,
};
static const pbd_method_ops implicit_euler = {
    .name = "implicit_euler",
    .forces = true,
    .prepare = pbd_integrate_prepare,
    .substep = pbd_integrate_substep,
};
static const pbd_method_ops projective_dynamics = {
    .name = "projective_dynamics",
    .forces = true,
    .prepare = pbd_pd_method_prepare,
    .substep = pbd_integrate_substep,
};
static const pbd_method_ops vbd = {
    .name = "vbd",
    .forces = true,
    .prepare = pbd_vbd_method_prepare,
    .substep = pbd_integrate_substep,
};

const pbd_method_ops* const pbd_method_table[PBD_METHOD_COUNT] = {
    [PBD_METHOD_POSITION_BASED] = &position_based,           [PBD_METHOD_EXPLICIT_EULER] = &explicit_euler,
    [PBD_METHOD_SYMPLECTIC_EULER] = &symplectic_euler,       [PBD_METHOD_IMPLICIT_EULER] = &implicit_euler,
    [PBD_METHOD_PROJECTIVE_DYNAMICS] = &projective_dynamics, [PBD_METHOD_VBD] = &vbd,
};

const char* pbd_method_name(pbd_method method) {
	return (int)method >= 0 && method < PBD_METHOD_COUNT ? pbd_method_table[method]->name : "unknown";
}

bool pbd_method_from_name(const char* name, pbd_method* out) {
	if (!name) return false;
	for (int m = 0; m < PBD_METHOD_COUNT; ++m)
		if (strcmp(name, pbd_method_table[m]->name) == 0) {
			if (out) *out = (pbd_method)m;
			return true;
		}
	return false;
}

static const char* const solver_names[] = {[PBD_SOLVER_GAUSS_SEIDEL] = "gauss_seidel", [PBD_SOLVER_JACOBI] = "jacobi"};
static const char* const formulation_names[] = {[PBD_FORMULATION_PBD] = "pbd", [PBD_FORMULATION_XPBD] = "xpbd"};
static const char* const body_solver_names[] = {[PBD_BODY_SOLVER_POSITION] = "position",
                                                [PBD_BODY_SOLVER_SOFT_STEP] = "soft_step",
                                                [PBD_BODY_SOLVER_AVBD] = "avbd"};
#define COUNT(a) ((int)(sizeof(a) / sizeof(a)[0]))

/* The name of value v of an enum named by names[0 .. count), "unknown" outside it. */
static const char* name_of(const char* const* names, int count, int v) {
	return v >= 0 && v < count ? names[v] : "unknown";
}

/* The value of `name` in names[0 .. count), or -1. */
static int value_of(const char* const* names, int count, const char* name) {
	if (!name) return -1;
	for (int k = 0; k < count; ++k)
		if (strcmp(name, names[k]) == 0) return k;
	return -1;
}

const char* pbd_solver_name(pbd_solver solver) { return name_of(solver_names, COUNT(solver_names), (int)solver); }

bool pbd_solver_from_name(const char* name, pbd_solver* out) {
	const int k = value_of(solver_names, COUNT(solver_names), name);
	if (k >= 0 && out) *out = (pbd_solver)k;
	return k >= 0;
}

const char* pbd_formulation_name(pbd_formulation formulation) {
	return name_of(formulation_names, COUNT(formulation_names), (int)formulation);
}

bool pbd_formulation_from_name(const char* name, pbd_formulation* out) {
	const int k = value_of(formulation_names, COUNT(formulation_names), name);
	if (k >= 0 && out) *out = (pbd_formulation)k;
	return k >= 0;
}

const char* pbd_body_solver_name(pbd_body_solver solver) {
	return name_of(body_solver_names, COUNT(body_solver_names), (int)solver);
}

bool pbd_body_solver_from_name(const char* name, pbd_body_solver* out) {
	const int k = value_of(body_solver_names, COUNT(body_solver_names), name);
	if (k >= 0 && out) *out = (pbd_body_solver)k;
	return k >= 0;
}
