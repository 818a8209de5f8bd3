/* Regular files only. The type is checked on the opened descriptor, not on the path, so that
 * the file cannot be swapped for a FIFO between the check and the read. */
#if !defined(_WIN32)
#define _XOPEN_SOURCE 700
#endif

#include "core/file_in.h"

#include <errno.h>
#include <string.h>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static const char* kind_of(mode_t m) {
	if (S_ISDIR(m)) return "a directory";
	if (S_ISFIFO(m)) return "a FIFO";
	if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
	if (S_ISSOCK(m)) return "a socket";
	return "not a regular file";
}

pbd_status pbd_file_open_regular(const char* path, FILE** out, uint64_t* size, pbd_error* err) {
	*out = NULL;
	/* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. */
	const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) return pbd_fail_err(err, PBD_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0) {
		const int e = errno;
		close(fd);
		return pbd_fail_err(err, PBD_ERR_IO, "%s: cannot open: %s", path, strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return pbd_fail_err(err, PBD_ERR_IO, "%s: cannot read %s, only a regular file", path, kind_of(st.st_mode));
	}
	/* Back to blocking reads: a regular file never blocks, and stdio expects them. */
	const int flags = fcntl(fd, F_GETFL);
	if (flags >= 0) (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	FILE* f = fdopen(fd, "rb");
	if (!f) {
		const int e = errno;
		close(fd);
		return pbd_fail_err(err, PBD_ERR_IO, "%s: cannot open: %s", path, strerror(e));
	}
	if (size) *size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
	*out = f;
	return PBD_OK;
}

#else

pbd_status pbd_file_open_regular(const char* path, FILE** out, uint64_t* size, pbd_error* err) {
	/* Without POSIX descriptors the type cannot be checked before the read; the readers still cap
	 * how much they read. */
	*out = fopen(path, "rb");
	if (!*out) return pbd_fail_err(err, PBD_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
	if (size) *size = 0;
	return PBD_OK;
}

#endif
