#define _GNU_SOURCE
#include "test_util.h"

#include <fenv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void test_enable_fp_traps(void) {
#if defined(__GLIBC__) && !defined(PBD_NO_FP_TRAPS)
	feenableexcept(FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW);
#endif
}

void test_disable_fp_traps(void) {
#if defined(__GLIBC__)
	fedisableexcept(FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW);
#endif
}

bool test_short(void) {
#ifdef NDEBUG
	const char* v = getenv("PBD_TEST_SHORT");
	return v && v[0] && strcmp(v, "0") != 0;
#else
	return true;
#endif
}

void test_log_fail(const char* message, void* user) {
	(void)user;
	fail_msg("unexpected library message: %s", message);
}

void test_log_keep(const char* message, void* user) {
	char* out = (char*)user;
	snprintf(out, 256, "%s", message);
}

pbd_world* test_world(const pbd_world_def* def) {
	pbd_world_def d = def ? *def : pbd_world_def_default();
	d.log = test_log_fail;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&d, &w), PBD_OK);
	assert_non_null(w);
	return w;
}

pbd_world* test_world_keep(char* msg) {
	pbd_world_def d = pbd_world_def_default();
	d.log = test_log_keep;
	d.log_user = msg;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&d, &w), PBD_OK);
	assert_non_null(w);
	return w;
}

pbd_status test_soft_create(pbd_world* w, const pbd_soft_def* def, pbd_soft_info* out) {
	memset(out, 0, sizeof *out);
	pbd_soft_id id;
	const pbd_status st = pbd_soft_create(w, def, &id);
	if (st == PBD_OK) assert_int_equal(pbd_soft_get_info(w, id, out), PBD_OK);
	return st;
}

void test_each_special_file(const char* dir, const char* suffix, test_refuse_fn* refuse, void* user) {
	char tmp[] = "/tmp/pbd_test_special_XXXXXX";
	if (!dir) {
		assert_non_null(mkdtemp(tmp));
		dir = tmp;
	}
	char fifo[512], sub[512];
	snprintf(fifo, sizeof fifo, "%s/fifo%s", dir, suffix);
	snprintf(sub, sizeof sub, "%s/sub%s", dir, suffix);
	remove(fifo);
	rmdir(sub);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(mkdir(sub, 0700), 0);
	const struct {
		const char *path, *kind;
	} odd[] = {{fifo, "a FIFO"}, {sub, "a directory"}, {"/dev/zero", "a device"}};
	alarm(20);
	for (size_t k = 0; k < sizeof odd / sizeof odd[0]; ++k) {
		if (access(odd[k].path, R_OK) != 0) continue; /* no /dev/zero in this sandbox */
		char want[640];
		snprintf(want, sizeof want, "%s: cannot read %s, only a regular file", odd[k].path, odd[k].kind);
		refuse(odd[k].path, want, user);
	}
	alarm(0);
	assert_int_equal(remove(fifo), 0);
	assert_int_equal(rmdir(sub), 0);
	if (dir == tmp) assert_int_equal(rmdir(tmp), 0);
}

unsigned char* test_snapshot_save(const pbd_world* w, size_t* size) {
	*size = 0;
	assert_int_equal(pbd_world_save_memory(w, NULL, 0, size), PBD_OK);
	unsigned char* buf = malloc(*size);
	assert_non_null(buf);
	assert_int_equal(pbd_world_save_memory(w, buf, *size, size), PBD_OK);
	return buf;
}

void test_snapshot_reseal(unsigned char* data, size_t size) {
	uint64_t h = 14695981039346656037ull;
	for (size_t k = 0; k + 8 < size; ++k) h = (h ^ data[k]) * 1099511628211ull;
	memcpy(data + size - 8, &h, 8);
}
