/* The files a scene reads: the scene text itself and its includes, and the data files it names
 * (looked up among the embedded ones first for a built-in scene), each opened only when it is a
 * regular file. */
#define _POSIX_C_SOURCE 200809L /* fileno, fdopen, O_CLOEXEC */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scene_internal.h"

/* Joins the scene's folder and a relative path. */
bool scene_resolve_path(loader* L, const char* path, const char* file, char* out, size_t out_size) {
	int n = (file[0] == '/' || !L->base_dir || !L->base_dir[0]) ? snprintf(out, out_size, "%s", file)
	                                                            : snprintf(out, out_size, "%s/%s", L->base_dir, file);
	if (n < 0 || (size_t)n >= out_size) return jr_fail(&L->r, path, "path too long");
	return true;
}

/* The embedded data file a built-in scene's relative `file` names, or NULL (then the file is
 * read from disk). */
const scene_data_file* scene_embedded_data(const loader* L, const char* file) {
	return L->builtin && file[0] != '/' ? scene_data_find(file) : NULL;
}

/* The bytes of a data file named at field `fpath`: an embedded one for a built-in scene, else
 * the file read whole (at most `max_bytes`). *owned is what the caller frees (NULL for embedded
 * bytes); `name` gets what names the file in messages. */
bool scene_read_data_file(loader* L, const char* fpath, const char* file, size_t max_bytes, const unsigned char** bytes,
                          size_t* size, unsigned char** owned, char name[SCENE_FILE_NAME_MAX]) {
	jr* r = &L->r;
	*bytes = NULL;
	*size = 0;
	*owned = NULL;
	if (!file[0]) return jr_fail(r, fpath, "must not be empty");
	const scene_data_file* emb = scene_embedded_data(L, file);
	if (emb) {
		snprintf(name, SCENE_FILE_NAME_MAX, "builtin:%s", emb->name);
		*bytes = emb->bytes;
		*size = emb->size;
		return true;
	}
	if (!scene_resolve_path(L, fpath, file, name, SCENE_FILE_NAME_MAX)) return false;
	const char* kind;
	FILE* fp = scene_open_regular(name, &kind);
	if (!fp && kind) return jr_fail(r, fpath, "%s: cannot read %s, only a regular file", name, kind);
	if (!fp) return jr_fail(r, fpath, "%s: cannot open: %s", name, strerror(errno));
	/* In chunks, as the scene text is read: the file may grow while it is read. */
	size_t cap = 1 << 16, n = 0;
	unsigned char* buf = malloc(cap);
	bool ok = buf != NULL;
	if (!ok) jr_fail(r, fpath, "%s: out of memory", name);
	while (ok) {
		if (n == cap) {
			if (cap > max_bytes) {
				char lim[32];
				pbd_scene_format_bytes(lim, sizeof lim, max_bytes);
				ok = jr_fail(r, fpath, "%s: file too large (more than the limit of %s)", name, lim);
				break;
			}
			unsigned char* bigger = realloc(buf, 2 * cap);
			if (!bigger) {
				ok = jr_fail(r, fpath, "%s: out of memory", name);
				break;
			}
			buf = bigger;
			cap *= 2;
		}
		const size_t got = fread(buf + n, 1, cap - n, fp);
		n += got;
		if (got == 0) break;
	}
	if (ok && ferror(fp)) ok = jr_fail(r, fpath, "%s: cannot read: %s", name, strerror(errno));
	if (ok && n > max_bytes) {
		char lim[32];
		pbd_scene_format_bytes(lim, sizeof lim, max_bytes);
		ok = jr_fail(r, fpath, "%s: file too large (more than the limit of %s)", name, lim);
	}
	fclose(fp);
	if (!ok) {
		free(buf);
		return false;
	}
	*bytes = buf;
	*size = n;
	*owned = buf;
	return true;
}

FILE* scene_open_regular(const char* path, const char** kind) {
	*kind = NULL;
	/* O_NONBLOCK: opening a FIFO to read would otherwise wait for a writer, maybe forever. The
	 * type is then taken from the descriptor, not the path, so that nothing can be swapped in
	 * between the check and the read. */
	const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) return NULL;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		const int e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			*kind = "a directory";
		else if (S_ISFIFO(st.st_mode))
			*kind = "a FIFO";
		else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
			*kind = "a device";
		else if (S_ISSOCK(st.st_mode))
			*kind = "a socket";
		else
			*kind = "not a regular file";
		close(fd);
		return NULL;
	}
	/* Back to blocking reads, which stdio expects; a regular file never blocks. */
	const int flags = fcntl(fd, F_GETFL);
	if (flags >= 0) (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	FILE* fp = fdopen(fd, "rb");
	if (!fp) {
		const int e = errno;
		close(fd);
		errno = e;
	}
	return fp;
}

/* Reads at most PBD_SCENE_MAX_FILE_BYTES + 1 bytes, so that a file past the cap costs no more than
 * the cap; in chunks rather than trusting the size fstat gives, since the file may grow while it
 * is read. The buffer has room for a terminating 0. */
char* scene_read_text(FILE* fp, const char* path, size_t* out_size, pbd_scene_error* err) {
	size_t cap = 1 << 16, size = 0;
	struct stat st;
	/* A regular file's size is a good first guess: one allocation, no copies. */
	if (fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0 &&
	    (uint64_t)st.st_size <= PBD_SCENE_MAX_FILE_BYTES)
		cap = (size_t)st.st_size + 2; /* the terminator, and a byte for fread to find the end */
	char* text = malloc(cap);
	if (!text) {
		pbd_scene_error_set(err, "%s: out of memory", path);
		return NULL;
	}
	for (;;) {
		if (size + 1 >= cap) {
			if (size > PBD_SCENE_MAX_FILE_BYTES) {
				pbd_scene_error_set(err, "%s: file too large (more than the limit of %u MiB)", path,
				                    PBD_SCENE_MAX_FILE_BYTES >> 20);
				free(text);
				return NULL;
			}
			size_t bigger_cap = cap * 2 > PBD_SCENE_MAX_FILE_BYTES + 2 ? PBD_SCENE_MAX_FILE_BYTES + 2 : cap * 2;
			char* bigger = realloc(text, bigger_cap);
			if (!bigger) {
				pbd_scene_error_set(err, "%s: out of memory", path);
				free(text);
				return NULL;
			}
			text = bigger;
			cap = bigger_cap;
		}
		size_t got = fread(text + size, 1, cap - 1 - size, fp);
		size += got;
		if (got == 0) break;
	}
	if (ferror(fp)) {
		pbd_scene_error_set(err, "%s: cannot read: %s", path, strerror(errno));
		free(text);
		return NULL;
	}
	if (size > PBD_SCENE_MAX_FILE_BYTES) {
		pbd_scene_error_set(err, "%s: file too large (more than the limit of %u MiB)", path,
		                    PBD_SCENE_MAX_FILE_BYTES >> 20);
		free(text);
		return NULL;
	}
	text[size] = '\0';
	*out_size = size;
	return text;
}
