/* Steps a falling particle with the installed library and checks v = g t. */
#include <math.h>
#include <stdio.h>

#include <pbd/pbd.h>

int main(void) {
	pbd_world_def def = pbd_world_def_default();
	pbd_world* w = NULL;
	if (pbd_world_create(&def, &w) != PBD_OK) return 1;
	pbd_vec3 x = {0, 0, 0};
	pbd_real inv_mass = 1;
	if (pbd_world_add_particles(w, 1, &x, NULL, &inv_mass, NULL) != PBD_OK) return 1;
	for (int i = 0; i < 60; ++i) pbd_world_step(w);
	double vy = (double)pbd_world_velocities(w)[0].y;
	pbd_world_destroy(w);
	printf("pbd %s: v after 1 s = %.4f m/s\n", pbd_version(), vy);
	return fabs(vy + 9.81) < 1e-3 ? 0 : 1;
}
