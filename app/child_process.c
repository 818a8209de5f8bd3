/* Child processes: PATH lookup, posix_spawn with a captured output tail, waitpid. */
#define _POSIX_C_SOURCE 200809L
#include "child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

bool child_find_program(const char* name, char* out, size_t size) {
	const char* path = getenv("PATH");
	if (!path) path = "/usr/local/bin:/usr/bin:/bin";
	const char* p = path;
	for (;;) {
		const char* colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);
		int w = n ? snprintf(out, size, "%.*s/%s", (int)n, p, name) : snprintf(out, size, "./%s", name);
		struct stat st;
		if (w > 0 && (size_t)w < size && stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return true;
		if (!colon) return false;
		p = colon + 1;
	}
}

/* Reads the pipe to its end, keeping the last tail_size - 1 bytes: the program must never block
 * on a full pipe, whatever is kept. */
static void read_tail(int fd, char* tail, size_t tail_size) {
	size_t kept = 0;
	const size_t keep = tail && tail_size > 0 ? tail_size - 1 : 0;
	char chunk[4096];
	for (;;) {
		ssize_t got = read(fd, chunk, sizeof chunk);
		if (got < 0 && errno == EINTR) continue;
		if (got <= 0) break;
		size_t g = (size_t)got;
		if (keep == 0) continue;
		if (g > keep) { /* only this chunk's end can stay */
			memcpy(tail, chunk + (g - keep), keep);
			kept = keep;
			continue;
		}
		if (kept + g > keep) {
			size_t drop = kept + g - keep;
			memmove(tail, tail + drop, kept - drop);
			kept -= drop;
		}
		memcpy(tail + kept, chunk, g);
		kept += g;
	}
	if (tail && tail_size > 0) tail[kept] = '\0';
}

bool child_run(const char* program, char* const args[], char* tail, size_t tail_size, int* status,
               pbd_scene_error* err) {
	const char* name = args[0];
	if (tail && tail_size > 0) tail[0] = '\0';
	int fds[2];
	if (pipe(fds) != 0) {
		pbd_scene_error_set(err, "cannot start %s: pipe: %s", name, strerror(errno));
		return false;
	}
	fcntl(fds[0], F_SETFD, FD_CLOEXEC);
	fcntl(fds[1], F_SETFD, FD_CLOEXEC);
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
	posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
	pid_t pid;
	int rc = posix_spawn(&pid, program, &actions, NULL, args, environ);
	posix_spawn_file_actions_destroy(&actions);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		pbd_scene_error_set(err, "cannot start %s (%s): %s", name, program, strerror(rc));
		return false;
	}
	read_tail(fds[0], tail, tail_size);
	close(fds[0]);
	*status = 0;
	while (waitpid(pid, status, 0) < 0) {
		if (errno != EINTR) {
			pbd_scene_error_set(err, "%s: waitpid: %s", name, strerror(errno));
			return false;
		}
	}
	return true;
}

bool child_succeeded(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

void child_describe_status(int status, char* out, size_t size) {
	if (WIFEXITED(status))
		snprintf(out, size, "exit status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(out, size, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(out, size, "status %d", status);
}
