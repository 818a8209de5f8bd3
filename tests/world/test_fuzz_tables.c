/* fuzz_step (fuzz/fuzz_step.c, built into this program without libFuzzer: its entry point is an
 * ordinary function) draws every collider shape, constraint family, method and rigid body type the
 * library has:
 * the entries of its tables are counted against the library's counts, and the library must
 * refuse the first value past each count, so that nothing lies beyond what the fuzzer draws. Its
 * seeds and saved reproducers run clean through that entry point too, so a build without clang
 * still replays them. */
#define _POSIX_C_SOURCE 200809L /* opendir */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_tables.h"
#include "test_util.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static void test_fuzzer_draws_every_shape(void** state) {
	(void)state;
	assert_int_equal(fuzz_step_get_tables().shapes, PBD_SHAPE_COUNT);
	char msg[256] = "";
	pbd_world* w = test_world_keep(msg);
	pbd_collider_def c = pbd_collider_def_default();
	c.type = PBD_SHAPE_COUNT;
	assert_int_equal(pbd_collider_create(w, &c).index1, 0);
	assert_true(msg[0] != 0);
	pbd_world_destroy(w);
}

static void test_fuzzer_draws_every_family(void** state) {
	(void)state;
	assert_int_equal(fuzz_step_get_tables().families, PBD_FAMILY_COUNT);
	for (int f = 0; f < PBD_FAMILY_COUNT; ++f) assert_string_not_equal(pbd_family_name((pbd_family_type)f), "unknown");
	assert_string_equal(pbd_family_name(PBD_FAMILY_COUNT), "unknown");
}

static void test_fuzzer_draws_every_method(void** state) {
	(void)state;
	assert_int_equal(fuzz_step_get_tables().methods, PBD_METHOD_COUNT);
	char msg[256] = "";
	pbd_world* w = test_world_keep(msg);
	for (int m = 0; m < PBD_METHOD_COUNT; ++m) assert_int_equal(pbd_world_set_method(w, (pbd_method)m), PBD_OK);
	assert_int_not_equal(pbd_world_set_method(w, PBD_METHOD_COUNT), PBD_OK);
	pbd_world_destroy(w);
}

/* types.h has no count of body types, so the last type stands for it: a type added after it
 * would still pass the first check, and the library accepting the value after the table's last
 * catches it. */
static void test_fuzzer_draws_every_body_type(void** state) {
	(void)state;
	const uint32_t types = fuzz_step_get_tables().body_types;
	assert_int_equal(types, PBD_BODY_DYNAMIC + 1);
	char msg[256] = "";
	pbd_world* w = test_world_keep(msg);
	pbd_body_def d = pbd_body_def_default();
	d.mass.mass = 1;
	d.mass.inertia[0] = d.mass.inertia[1] = d.mass.inertia[2] = 1;
	for (uint32_t t = 0; t < types; ++t) {
		d.type = (pbd_body_type)t;
		assert_int_not_equal(pbd_body_create(w, &d).index1, 0);
	}
	msg[0] = 0;
	d.type = (pbd_body_type)types;
	assert_int_equal(pbd_body_create(w, &d).index1, 0);
	assert_true(msg[0] != 0);
	pbd_world_destroy(w);
}

/* Runs every file of PBD_SOURCE_DIR/fuzz/<dir> through fuzz_step; a broken check aborts. */
static int replay_dir(const char* dir) {
	char path[1024];
	snprintf(path, sizeof path, "%s/fuzz/%s", PBD_SOURCE_DIR, dir);
	DIR* d = opendir(path);
	if (!d) fail_msg("cannot open %s", path);
	int n = 0;
	for (struct dirent* e; (e = readdir(d));) {
		if (e->d_name[0] == '.') continue;
		char file[2048];
		snprintf(file, sizeof file, "%s/%s", path, e->d_name);
		FILE* f = fopen(file, "rb");
		assert_non_null(f);
		uint8_t buf[1 << 16];
		const size_t size = fread(buf, 1, sizeof buf, f);
		assert_true(feof(f));
		fclose(f);
		assert_int_equal(LLVMFuzzerTestOneInput(buf, size), 0);
		++n;
	}
	closedir(d);
	return n;
}

static void test_step_seeds_run_clean(void** state) {
	(void)state;
	test_disable_fp_traps(); /* the recipes feed NaN, infinities and overflow on purpose */
	assert_true(replay_dir("corpus/step") > 0);
	assert_true(replay_dir("regressions/step") > 0);
	test_enable_fp_traps();
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fuzzer_draws_every_shape),  cmocka_unit_test(test_fuzzer_draws_every_family),
	    cmocka_unit_test(test_fuzzer_draws_every_method), cmocka_unit_test(test_fuzzer_draws_every_body_type),
	    cmocka_unit_test(test_step_seeds_run_clean),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
