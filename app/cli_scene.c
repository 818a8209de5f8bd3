/* The scene of a command line and its world overrides, for `pbd run` and `pbd compare`. */
#define _POSIX_C_SOURCE 200809L
#include "cli_scene.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_suggest.h"

void cli_world_options_init(cli_world_options* o) {
	memset(o, 0, sizeof *o);
	o->solver = -1;
	o->formulation = -1;
	o->method = -1;
	o->simd = -1;
}

bool cli_match_world_option(cli_cursor* c, cli_world_options* o) {
	if (cli_match(c, NULL, "--solver", true)) {
		pbd_solver sv;
		if (strcmp(c->value, "gs") == 0)
			o->solver = PBD_SOLVER_GAUSS_SEIDEL;
		else if (pbd_solver_from_name(c->value, &sv))
			o->solver = sv;
		else
			cli_usage_error(c, "--solver: expected %s, gs or %s, got '%s'", pbd_solver_name(PBD_SOLVER_GAUSS_SEIDEL),
			                pbd_solver_name(PBD_SOLVER_JACOBI), c->value);
	} else if (cli_match(c, NULL, "--formulation", true)) {
		pbd_formulation f;
		if (pbd_formulation_from_name(c->value, &f))
			o->formulation = f;
		else
			cli_usage_error(c, "--formulation: expected %s or %s, got '%s'", pbd_formulation_name(PBD_FORMULATION_PBD),
			                pbd_formulation_name(PBD_FORMULATION_XPBD), c->value);
	} else if (cli_match(c, NULL, "--method", true)) {
		pbd_method m;
		if (pbd_method_from_name(c->value, &m)) {
			o->method = (int)m;
		} else {
			/* The library's names, "a, b, ... or z", so that a new method is offered here. */
			char names[256] = "";
			for (int k = 0; k < PBD_METHOD_COUNT; ++k) {
				const size_t used = strlen(names);
				snprintf(names + used, sizeof names - used, "%s%s",
				         k == 0                      ? ""
				         : k + 1 == PBD_METHOD_COUNT ? " or "
				                                     : ", ",
				         pbd_method_name((pbd_method)k));
			}
			cli_usage_error(c, "--method: expected %s, got '%s'", names, c->value);
		}
	} else if (cli_match(c, NULL, "--simd", true)) {
		if (strcmp(c->value, "auto") == 0)
			o->simd = PBD_SIMD_AUTO;
		else if (strcmp(c->value, "scalar") == 0)
			o->simd = PBD_SIMD_SCALAR;
		else if (strcmp(c->value, "avx2") == 0)
			o->simd = PBD_SIMD_AVX2;
		else if (strcmp(c->value, "avx512") == 0)
			o->simd = PBD_SIMD_AVX512;
		else
			cli_usage_error(c, "--simd: expected auto, scalar, avx2 or avx512, got '%s'", c->value);
	} else if (cli_match(c, NULL, "--iterations", true)) {
		if (!cli_parse_int(c->value, 1, PBD_SCENE_MAX_ITERATIONS, &o->iterations))
			cli_usage_error(c, "--iterations: expected an integer in [1, %d], got '%s'", PBD_SCENE_MAX_ITERATIONS,
			                c->value);
	} else if (cli_match(c, NULL, "--substeps", true)) {
		if (!cli_parse_int(c->value, 1, PBD_SCENE_MAX_SUBSTEPS, &o->substeps))
			cli_usage_error(c, "--substeps: expected an integer in [1, %d], got '%s'", PBD_SCENE_MAX_SUBSTEPS,
			                c->value);
	} else if (cli_match(c, NULL, "--threads", true)) {
		if (!cli_parse_int(c->value, 1, PBD_MAX_THREADS, &o->threads))
			cli_usage_error(c, "--threads: expected an integer in [1, %d], got '%s'", PBD_MAX_THREADS, c->value);
	} else if (cli_match(c, NULL, "--dt", true)) {
		if (!cli_parse_real(c->value, PBD_SCENE_MIN_DT, false, PBD_SCENE_MAX_DT, &o->dt))
			cli_usage_error(c, "--dt: expected seconds from %g to %g, got '%s'", PBD_SCENE_MIN_DT, PBD_SCENE_MAX_DT,
			                c->value);
	} else {
		return false;
	}
	return true;
}

bool cli_world_options_apply(const cli_world_options* o, pbd_scene* s, pbd_scene_error* err) {
	pbd_world* w = s->world;
	pbd_status st = PBD_OK;
	if (st == PBD_OK && o->solver >= 0) st = pbd_world_set_solver(w, (pbd_solver)o->solver);
	if (st == PBD_OK && o->formulation >= 0) st = pbd_world_set_formulation(w, (pbd_formulation)o->formulation);
	if (st == PBD_OK && o->method >= 0) st = pbd_world_set_method(w, (pbd_method)o->method);
	if (st == PBD_OK && o->simd >= 0) st = pbd_world_set_simd(w, (pbd_simd)o->simd);
	if (st == PBD_OK && o->iterations > 0) st = pbd_world_set_iterations(w, (int)o->iterations);
	if (st == PBD_OK && o->substeps > 0) st = pbd_world_set_substeps(w, (int)o->substeps);
	if (st == PBD_OK && o->dt > 0) st = pbd_world_set_dt(w, (pbd_real)o->dt);
	if (st == PBD_OK && o->threads > 0) st = pbd_world_set_threads(w, (int)o->threads);
	if (st != PBD_OK) {
		pbd_scene_error_set(err, "%s: %s", s->name, pbd_world_last_error(w));
		return false;
	}
	return true;
}

bool cli_scene_load(const char* arg, const pbd_scene_options* so, pbd_scene* s, pbd_scene_error* err) {
	struct stat st;
	if (stat(arg, &st) == 0 && !S_ISDIR(st.st_mode)) return pbd_scene_load_file(arg, so, s, err);
	if (pbd_scene_builtin_find(arg)) return pbd_scene_load_builtin(arg, so, s, err);
	size_t n = strlen(arg);
	if (strchr(arg, '/') || (n >= 5 && strcmp(arg + n - 5, ".json") == 0) || stat(arg, &st) == 0)
		return pbd_scene_load_file(arg, so, s, err);
	const char* names[512];
	size_t count = 0;
	for (size_t i = 0; i < pbd_scene_builtin_count() && count < sizeof names / sizeof names[0]; ++i)
		names[count++] = pbd_scene_builtin_at(i)->name;
	const char* near = cli_suggest(arg, names, count);
	if (near)
		pbd_scene_error_set(err, "%s: neither a scene file nor a built-in scene; did you mean '%s'? (see 'pbd list')",
		                    arg, near);
	else
		pbd_scene_error_set(err, "%s: neither a scene file nor a built-in scene (see 'pbd list')", arg);
	return false;
}
