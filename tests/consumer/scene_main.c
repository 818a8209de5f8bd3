/* Loads a built-in scene and a scene text with the installed scene library, steps them, and
 * checks what a user would: the cloth falls under gravity and stays finite, and a bad field is
 * reported with its path. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <pbd/scene.h>

int main(void) {
	pbd_scene s;
	pbd_scene_error err;
	if (!pbd_scene_load_builtin("hanging_cloth", NULL, &s, &err)) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	const pbd_vec3* x = pbd_world_positions(s.world);
	uint32_t n = pbd_world_particle_count(s.world);
	double y0 = 0;
	for (uint32_t i = 0; i < n; ++i) y0 += (double)x[i].y;
	for (int f = 0; f < 30; ++f)
		if (pbd_scene_step(&s) != PBD_OK) return 1;
	double y1 = 0;
	for (uint32_t i = 0; i < n; ++i) {
		if (!isfinite((double)x[i].y)) return 1;
		y1 += (double)x[i].y;
	}
	pbd_scene_free(&s);
	printf("scene hanging_cloth: %u particles, mean height %.4f -> %.4f m\n", n, y0 / n, y1 / n);
	if (!(y1 < y0)) return 1;

	const char* bad = "{\"world\": {\"dt\": -1}}";
	if (pbd_scene_load_string(bad, strlen(bad), "bad.json", NULL, NULL, &s, &err)) return 1;
	printf("bad scene: %s\n", err.message);
	return strstr(err.message, "bad.json") && strstr(err.message, "dt") ? 0 : 1;
}
