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
#define COUNT(a) ((int)(sizeof(a) / sizeof(a)[0]))

const char* pbd_solver_name(pbd_solver solver) {
	return (int)solver >= 0 && (int)solver < COUNT(solver_names) ? solver_names[solver] : "unknown";
}

bool pbd_solver_from_name(const char* name, pbd_solver* out) {
	if (!name) return false;
	for (int k = 0; k < COUNT(solver_names); ++k)
		if (strcmp(name, solver_names[k]) == 0) {
			if (out) *out = (pbd_solver)k;
			return true;
		}
	return false;
}

const char* pbd_formulation_name(pbd_formulation formulation) {
	return (int)formulation >= 0 && (int)formulation < COUNT(formulation_names) ? formulation_names[formulation]
	                                                                            : "unknown";
}

bool pbd_formulation_from_name(const char* name, pbd_formulation* out) {
	if (!name) return false;
	for (int k = 0; k < COUNT(formulation_names); ++k)
		if (strcmp(name, formulation_names[k]) == 0) {
			if (out) *out = (pbd_formulation)k;
			return true;
		}
	return false;
}
