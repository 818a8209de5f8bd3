/* Sleeping of rigid bodies (sleep.c). */
#ifndef PBD_WORLD_SLEEP_H
#define PBD_WORLD_SLEEP_H

typedef struct pbd_world pbd_world;

/* The step's end: islands of the awake bodies, their stillness, and the islands that fall asleep
 * or are kept awake. */
void pbd_sleep_update(pbd_world* w);

#endif
