/* What fuzz_step (fuzz_step.c) draws from, counted from its own tables. tests/world/test_fuzz_tables.c
 * holds each count to the library's, so that a collider shape, a constraint family, a method or a
 * rigid body type the library gains fails that test until fuzz_step draws it too. */
#ifndef PBD_FUZZ_TABLES_H
#define PBD_FUZZ_TABLES_H

#include <stdint.h>

typedef struct fuzz_step_tables {
	uint32_t shapes;     /* collider shapes with a fill function */
	uint32_t families;   /* constraint families with an add operation, a count, a material change and a cost */
	uint32_t methods;    /* methods drawn for the world def and the method setting */
	uint32_t body_types; /* rigid body types with a fill function */
} fuzz_step_tables;

fuzz_step_tables fuzz_step_get_tables(void);

#endif
