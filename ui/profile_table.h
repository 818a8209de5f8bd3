/* The step's profile (pbd_stats.profile) as rows of text: the table `pbd run --profile` prints
 * at the end and the lines of the viewer's panel. */
#ifndef PBD_UI_PROFILE_TABLE_H
#define PBD_UI_PROFILE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "pbd/pbd.h"

/* Profiles summed over steps. */
typedef struct profile_sum {
	pbd_profile total; /* phases summed; the counts are the last step's */
	long steps;
} profile_sum;

/* One phase: its name and milliseconds. The rows follow the step: prepare, predict, collide,
 * hierarchy, the families that have constraints, contacts, finish, method, stats, then "other",
 * the part of the step no phase covers. */
typedef struct profile_row {
	char name[40];
	double ms;
} profile_row;

enum { PROFILE_MAX_ROWS = 10 + PBD_FAMILY_COUNT };

void profile_sum_add(profile_sum* s, const pbd_profile* p);

/* Fills rows (PROFILE_MAX_ROWS of room) from p, each divided by `steps` (> 0); returns the count.
 * Phases that did not run (no time) are left out. */
int profile_rows(const pbd_profile* p, double steps, profile_row* rows);

/* The table: mean ms per step and % of the step, one row per phase. */
void profile_print(FILE* f, const profile_sum* s);

#endif
