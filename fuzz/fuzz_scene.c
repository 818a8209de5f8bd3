/* libFuzzer target: a scene file (JSON) from the input bytes, loaded by the scene loader of the
 * `pbd` program (app/scene.h, the pbd_scene library), then a few steps of the world it made.
 * Refusing the input is fine; a crash, a sanitizer report, a leak or a broken check of
 * fuzz_util.h is not. Relative "obj" paths start in fuzz/corpus/obj, so a scene can name the
 * OBJ seeds. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_util.h"
#include "pbd/scene.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
	pbd_scene s;
	pbd_scene_error err;
	/* Scenes of up to 65536 particles: the full cap of 4M would need gigabytes under ASan. */
	pbd_scene_options opt;
	memset(&opt, 0, sizeof opt);
	opt.max_particles = 1u << 16;
	if (!pbd_scene_load_string((const char*)data, size, "fuzz.json", PBD_FUZZ_OBJ_DIR, &opt, &s, &err)) {
		if (!err.message[0]) fuzz_fail("scene refused without a message");
		if (s.world) fuzz_fail("scene refused but a world was left in it");
		return 0;
	}
	fuzz_check_finite(s.world);
	fuzz_step_checked(s.world, 4, NULL);
	pbd_scene_free(&s);
	return 0;
}
