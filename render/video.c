/* Video files: raw RGB frames piped into an ffmpeg process, which encodes MP4 or GIF.
 *
 * ffmpeg is started with posix_spawnp and an argument vector rather than popen, so no shell
 * parses the output path (spaces, quotes or a leading '-' in it are harmless). Its messages go
 * to a temporary file, read back only when it fails, so that a failure is one line of ours. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "render_internal.h"

extern char** environ;

struct pbd_render_video {
	pid_t pid;
	int fd;    /* write end of ffmpeg's standard input */
	FILE* log; /* ffmpeg's standard error */
	size_t frame_bytes;
	char codec[16];
};

bool pbd_render_video_format_of(const char* path, pbd_render_video_format* out) {
	const char* dot = path ? strrchr(path, '.') : NULL;
	if (!dot || strchr(dot, '/')) return false;
	char ext[4] = {0};
	if (strlen(dot + 1) != 3) return false;
	for (size_t i = 0; i < 3; ++i) ext[i] = (char)tolower((unsigned char)dot[1 + i]);
	if (strcmp(ext, "mp4") == 0) {
		*out = PBD_RENDER_VIDEO_MP4;
		return true;
	}
	if (strcmp(ext, "gif") == 0) {
		*out = PBD_RENDER_VIDEO_GIF;
		return true;
	}
	return false;
}

/* Whether an executable `name` is in one of the PATH folders. */
static bool on_path(const char* name) {
	const char* path = getenv("PATH");
	if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
	char buf[4096];
	for (const char* p = path; *p;) {
		const char* end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n == 0) {
			snprintf(buf, sizeof buf, "./%s", name); /* an empty entry is the current folder */
		} else {
			snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, name);
		}
		struct stat st;
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0) return true;
		if (!end) break;
		p = end + 1;
	}
	return false;
}

static int wait_child(pid_t pid) {
	int status = 0;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) return -1;
	return status;
}

/* Runs `ffmpeg -encoders` and looks for libx264 in what it lists. Debian's ffmpeg has it; a
 * build without it falls back to the MPEG-4 part 2 encoder, which every ffmpeg has. */
static bool has_libx264(void) {
	int fds[2];
	if (pipe(fds) != 0) return false;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	char* argv[] = {"ffmpeg", "-hide_banner", "-encoders", NULL};
	pid_t pid;
	const int rc = posix_spawnp(&pid, "ffmpeg", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	bool found = false;
	if (rc == 0) {
		/* Read it all (so ffmpeg never blocks on a full pipe), matching line by line. */
		char line[512];
		FILE* fp = fdopen(fds[0], "r");
		if (fp) {
			while (fgets(line, sizeof line, fp))
				if (strstr(line, " libx264 ")) found = true;
			fclose(fp);
		} else {
			close(fds[0]);
		}
		wait_child(pid);
	} else {
		close(fds[0]);
	}
	return found;
}

/* The last non-empty line ffmpeg wrote, for a one-line message. */
static void last_log_line(FILE* log, char* out, size_t out_size) {
	out[0] = '\0';
	if (!log) return;
	rewind(log);
	char line[512];
	while (fgets(line, sizeof line, log)) {
		size_t n = strlen(line);
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ')) line[--n] = '\0';
		if (n > 0) snprintf(out, out_size, "%s", line);
	}
}

bool pbd_render_video_open(const char* path, pbd_render_video_format format, int width, int height, double fps,
                           pbd_render_video** out, pbd_error* err) {
	*out = NULL;
	if (!path || !*path) return render_fail(err, "no video file name");
	if (width < 1 || height < 1 || width > PBD_RENDER_MAX_SIZE || height > PBD_RENDER_MAX_SIZE)
		return render_fail(err, "%s: bad video size %dx%d", path, width, height);
	if (!(fps > 0 && fps <= 1000)) return render_fail(err, "%s: frame rate %g outside (0, 1000]", path, fps);
	if (!on_path("ffmpeg"))
		return render_fail(
		    err, "%s: ffmpeg is not on the PATH; it encodes MP4 and GIF (Debian: apt-get install ffmpeg)", path);
	pbd_render_video* v = calloc(1, sizeof *v);
	if (!v) return render_fail(err, "out of memory");
	v->fd = -1;
	v->frame_bytes = (size_t)width * (size_t)height * 3;

	char size[32], rate[32], target[4200];
	snprintf(size, sizeof size, "%dx%d", width, height);
	snprintf(rate, sizeof rate, "%.9g", fps);
	/* "file:" keeps ffmpeg from reading a name that starts with '-' as an option or one with a
	 * colon as a protocol. */
	snprintf(target, sizeof target, "file:%s", path);
	char* argv[48];
	int n = 0;
	argv[n++] = "ffmpeg";
	argv[n++] = "-hide_banner";
	argv[n++] = "-loglevel";
	argv[n++] = "error";
	argv[n++] = "-y";
	argv[n++] = "-f";
	argv[n++] = "rawvideo";
	argv[n++] = "-pix_fmt";
	argv[n++] = "rgb24";
	argv[n++] = "-video_size";
	argv[n++] = size;
	argv[n++] = "-framerate";
	argv[n++] = rate;
	argv[n++] = "-i";
	argv[n++] = "pipe:0";
	if (format == PBD_RENDER_VIDEO_GIF) {
		/* One palette for the whole clip, from the pixels that change (stats_mode=diff), with
		 * ordered dithering: smaller files than error diffusion and no crawling noise. */
		snprintf(v->codec, sizeof v->codec, "gif");
		argv[n++] = "-vf";
		argv[n++] = "split[a][b];[a]palettegen=stats_mode=diff[p];[b][p]paletteuse=dither=bayer:bayer_scale=3:"
		            "diff_mode=rectangle";
		argv[n++] = "-loop";
		argv[n++] = "0";
		argv[n++] = "-f";
		argv[n++] = "gif";
	} else {
		const bool x264 = has_libx264();
		snprintf(v->codec, sizeof v->codec, "%s", x264 ? "libx264" : "mpeg4");
		if ((width | height) & 1) {
			/* yuv420p subsamples chroma 2x2, so the encoder wants even sizes. */
			argv[n++] = "-vf";
			argv[n++] = "pad=ceil(iw/2)*2:ceil(ih/2)*2";
		}
		argv[n++] = "-c:v";
		argv[n++] = v->codec;
		if (x264) {
			argv[n++] = "-preset";
			argv[n++] = "medium";
			argv[n++] = "-crf";
			argv[n++] = "18";
		} else {
			argv[n++] = "-q:v";
			argv[n++] = "2";
		}
		argv[n++] = "-pix_fmt";
		argv[n++] = "yuv420p";
		/* The index at the front: the file plays while it downloads. */
		argv[n++] = "-movflags";
		argv[n++] = "+faststart";
		argv[n++] = "-f";
		argv[n++] = "mp4";
	}
	argv[n++] = target;
	argv[n] = NULL;

	int fds[2];
	v->log = tmpfile();
	if (!v->log) {
		free(v);
		return render_fail(err, "%s: cannot make a temporary file for ffmpeg's messages: %s", path, strerror(errno));
	}
	if (pipe(fds) != 0) {
		fclose(v->log);
		free(v);
		return render_fail(err, "%s: cannot make a pipe to ffmpeg: %s", path, strerror(errno));
	}
	/* Our end must not leak into ffmpeg, or it would never see the end of its input. */
	fcntl(fds[1], F_SETFD, FD_CLOEXEC);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fileno(v->log), 2);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	const int rc = posix_spawnp(&v->pid, "ffmpeg", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[0]);
	if (rc != 0) {
		close(fds[1]);
		fclose(v->log);
		free(v);
		return render_fail(err, "%s: cannot start ffmpeg: %s", path, strerror(rc));
	}
	/* The encoder runs beside the simulation it records: at a lower priority it takes the cores
	 * the simulation leaves idle instead of sharing them (best effort; failure changes nothing). */
	setpriority(PRIO_PROCESS, (id_t)v->pid, 10);
	v->fd = fds[1];
	*out = v;
	return true;
}

/* write() that finishes partial writes and reports a closed pipe as EPIPE instead of letting
 * SIGPIPE end the process: the signal is blocked on this thread while writing, and one it
 * raised is taken off the pending set before the mask is restored. */
static bool write_all(int fd, const uint8_t* data, size_t size) {
	sigset_t pipe_set, old, pending;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	sigemptyset(&pending);
	sigpending(&pending);
	const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
	bool ok = true;
	while (size > 0) {
		const ssize_t got = write(fd, data, size);
		if (got < 0) {
			if (errno == EINTR) continue;
			ok = false;
			break;
		}
		data += got;
		size -= (size_t)got;
	}
	const int saved = errno;
	if (!ok && saved == EPIPE && !was_pending) {
		const struct timespec zero = {0, 0};
		while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR) {
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return ok;
}

/* Ends ffmpeg's input, waits for it, frees v. Fills `why` when it failed. */
static bool finish(pbd_render_video* v, char* why, size_t why_size) {
	why[0] = '\0';
	if (v->fd >= 0) close(v->fd);
	const int status = wait_child(v->pid);
	bool ok = status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (!ok) {
		char line[400];
		last_log_line(v->log, line, sizeof line);
		if (status < 0)
			snprintf(why, why_size, "lost track of ffmpeg");
		else if (WIFSIGNALED(status))
			snprintf(why, why_size, "ffmpeg was killed by signal %d%s%s", WTERMSIG(status), line[0] ? ": " : "", line);
		else
			snprintf(why, why_size, "ffmpeg failed (exit status %d)%s%s", WEXITSTATUS(status), line[0] ? ": " : "",
			         line);
	}
	if (v->log) fclose(v->log);
	free(v);
	return ok;
}

bool pbd_render_video_write(pbd_render_video* v, const uint8_t* rgb, pbd_error* err) {
	if (write_all(v->fd, rgb, v->frame_bytes)) return true;
	const int e = errno;
	if (e == EPIPE) {
		/* ffmpeg has gone: its own message says why. */
		char why[480];
		close(v->fd);
		v->fd = -1;
		const int status = wait_child(v->pid);
		char line[400];
		last_log_line(v->log, line, sizeof line);
		snprintf(why, sizeof why, "ffmpeg stopped reading frames (exit status %d)%s%s",
		         status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1, line[0] ? ": " : "", line);
		v->pid = -1;
		return render_fail(err, "%s", why);
	}
	return render_fail(err, "writing a frame to ffmpeg: %s", strerror(e));
}

bool pbd_render_video_close(pbd_render_video* v, pbd_error* err) {
	if (!v) return true;
	if (v->pid < 0) {
		/* Already reaped by a failed write, which reported it. */
		if (v->log) fclose(v->log);
		free(v);
		return false;
	}
	char why[480];
	if (finish(v, why, sizeof why)) return true;
	return render_fail(err, "%s", why);
}

const char* pbd_render_video_codec(const pbd_render_video* v) { return v->codec; }
