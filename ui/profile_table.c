/* The step's profile as text (profile_table.h). */
#include "profile_table.h"

void profile_sum_add(profile_sum* s, const pbd_profile* p) {
	pbd_profile* t = &s->total;
	t->step += p->step;
	t->prepare += p->prepare;
	t->predict += p->predict;
	t->collide += p->collide;
	t->hierarchy += p->hierarchy;
	t->contacts += p->contacts;
	t->finish += p->finish;
	t->method += p->method;
	t->stats += p->stats;
	for (int f = 0; f < PBD_FAMILY_COUNT; ++f) {
		t->family[f] += p->family[f];
		t->constraints[f] = p->constraints[f];
	}
	t->substeps = p->substeps;
	t->iterations = p->iterations;
	s->steps++;
}

static void add_row(profile_row* rows, int* n, const char* name, double ms, double steps) {
	if (!(ms > 0)) return;
	snprintf(rows[*n].name, sizeof rows[*n].name, "%s", name);
	rows[*n].ms = ms / steps;
	(*n)++;
}

int profile_rows(const pbd_profile* p, double steps, profile_row* rows) {
	int n = 0;
	double covered = 0;
	add_row(rows, &n, "prepare", p->prepare, steps);
	add_row(rows, &n, "predict", p->predict, steps);
	add_row(rows, &n, "collide", p->collide, steps);
	add_row(rows, &n, "hierarchy", p->hierarchy, steps);
	for (int f = 0; f < PBD_FAMILY_COUNT; ++f) {
		char name[40];
		snprintf(name, sizeof name, "%s (%u)", pbd_family_name((pbd_family_type)f), p->constraints[f]);
		add_row(rows, &n, name, p->family[f], steps);
		covered += p->family[f];
	}
	add_row(rows, &n, "contacts", p->contacts, steps);
	add_row(rows, &n, "finish", p->finish, steps);
	add_row(rows, &n, "method", p->method, steps);
	add_row(rows, &n, "stats", p->stats, steps);
	covered += p->prepare + p->predict + p->collide + p->hierarchy + p->contacts + p->finish + p->method + p->stats;
	const double other = p->step - covered;
	add_row(rows, &n, "other", other > 0 ? other : 0, steps);
	return n;
}

void profile_print(FILE* f, const profile_sum* s) {
	if (s->steps <= 0) return;
	const pbd_profile* p = &s->total;
	const double steps = (double)s->steps;
	const double step = p->step / steps;
	fprintf(f, "  profile, mean of %ld steps (%d substeps x %d iterations): %.4f ms per step\n", s->steps, p->substeps,
	        p->iterations, step);
	profile_row rows[PROFILE_MAX_ROWS];
	const int n = profile_rows(p, steps, rows);
	for (int i = 0; i < n; ++i)
		fprintf(f, "    %-28s %10.4f ms %6.1f %%\n", rows[i].name, rows[i].ms, step > 0 ? 100 * rows[i].ms / step : 0);
}
