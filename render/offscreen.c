/* Offscreen rendering: an OpenGL context made through EGL without any window system, a
 * multisampled framebuffer object to draw into, and the read-back of its pixels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <epoxy/egl.h>
#include <epoxy/gl.h>

#include "render_internal.h"

struct pbd_render_offscreen {
	EGLDisplay display;
	EGLContext context;
	int width, height, samples;
	GLuint fbo, color, depth;          /* drawn into: multisampled when samples > 1 */
	GLuint resolve_fbo, resolve_color; /* single-sampled copy that glReadPixels reads (samples > 1) */
	char device[160];
};

static const char* egl_error_name(EGLint e) {
	switch (e) {
	case EGL_SUCCESS:
		return "EGL_SUCCESS";
	case EGL_NOT_INITIALIZED:
		return "EGL_NOT_INITIALIZED";
	case EGL_BAD_ACCESS:
		return "EGL_BAD_ACCESS";
	case EGL_BAD_ALLOC:
		return "EGL_BAD_ALLOC";
	case EGL_BAD_ATTRIBUTE:
		return "EGL_BAD_ATTRIBUTE";
	case EGL_BAD_CONFIG:
		return "EGL_BAD_CONFIG";
	case EGL_BAD_CONTEXT:
		return "EGL_BAD_CONTEXT";
	case EGL_BAD_DISPLAY:
		return "EGL_BAD_DISPLAY";
	case EGL_BAD_MATCH:
		return "EGL_BAD_MATCH";
	case EGL_BAD_PARAMETER:
		return "EGL_BAD_PARAMETER";
	default:
		return "EGL error";
	}
}

static bool has_word(const char* list, const char* word) {
	if (!list) return false;
	const size_t n = strlen(word);
	for (const char* p = list; (p = strstr(p, word)) != NULL; p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return true;
	return false;
}

/* A display that initialises, trying the platforms that need no window system first:
 * Mesa's surfaceless platform (software llvmpipe or a render node), then the first EGL
 * device (the NVIDIA driver's headless path), then the default display (which may be X11
 * when DISPLAY is set). `why` gets the reason of the last failure. */
static EGLDisplay open_display(char* why, size_t why_size) {
	const char* client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
	snprintf(why, why_size, "no EGL display could be initialised");
	if (has_word(client, "EGL_MESA_platform_surfaceless") && has_word(client, "EGL_EXT_platform_base")) {
		EGLDisplay d = eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
		if (d != EGL_NO_DISPLAY && eglInitialize(d, NULL, NULL)) return d;
		snprintf(why, why_size, "surfaceless EGL display: %s", egl_error_name(eglGetError()));
	}
	if (has_word(client, "EGL_EXT_platform_device") && has_word(client, "EGL_EXT_device_enumeration")) {
		EGLDeviceEXT devices[8];
		EGLint count = 0;
		if (eglQueryDevicesEXT(8, devices, &count) && count > 0) {
			EGLDisplay d = eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, devices[0], NULL);
			if (d != EGL_NO_DISPLAY && eglInitialize(d, NULL, NULL)) return d;
			snprintf(why, why_size, "EGL device display: %s", egl_error_name(eglGetError()));
		}
	}
	EGLDisplay d = eglGetDisplay(EGL_DEFAULT_DISPLAY);
	if (d != EGL_NO_DISPLAY && eglInitialize(d, NULL, NULL)) return d;
	return EGL_NO_DISPLAY;
}

static bool make_context(pbd_render_offscreen* o, pbd_error* err) {
	if (!eglBindAPI(EGL_OPENGL_API))
		return render_fail(err, "EGL cannot bind desktop OpenGL: %s", egl_error_name(eglGetError()));
	/* No surface is ever made, so any surface type will do; the framebuffer is an FBO. */
	const EGLint config_attribs[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_SURFACE_TYPE, 0, EGL_NONE};
	EGLConfig config = NULL;
	EGLint n = 0;
	const char* ext = eglQueryString(o->display, EGL_EXTENSIONS);
	if (!eglChooseConfig(o->display, config_attribs, &config, 1, &n) || n < 1) {
		if (!has_word(ext, "EGL_KHR_no_config_context"))
			return render_fail(err, "EGL offers no OpenGL configuration: %s", egl_error_name(eglGetError()));
		config = EGL_NO_CONFIG_KHR;
	}
	const EGLint context_attribs[] = {
	    EGL_CONTEXT_MAJOR_VERSION,           3,       EGL_CONTEXT_MINOR_VERSION, 3, EGL_CONTEXT_OPENGL_PROFILE_MASK,
	    EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
	o->context = eglCreateContext(o->display, config, EGL_NO_CONTEXT, context_attribs);
	if (o->context == EGL_NO_CONTEXT)
		return render_fail(err, "cannot create an OpenGL 3.3 core context: %s", egl_error_name(eglGetError()));
	if (!eglMakeCurrent(o->display, EGL_NO_SURFACE, EGL_NO_SURFACE, o->context))
		return render_fail(err, "cannot make the OpenGL context current without a surface: %s",
		                   egl_error_name(eglGetError()));
	if (epoxy_gl_version() < 33) return render_fail(err, "the OpenGL context is older than 3.3");
	return true;
}

static bool make_framebuffers(pbd_render_offscreen* o, int samples, pbd_error* err) {
	GLint max_samples = 1;
	glGetIntegerv(GL_MAX_SAMPLES, &max_samples);
	o->samples = samples < 1 ? 1 : (samples > max_samples ? max_samples : samples);
	if (o->samples < 1) o->samples = 1;
	glGenFramebuffers(1, &o->fbo);
	glGenRenderbuffers(1, &o->color);
	glGenRenderbuffers(1, &o->depth);
	glBindFramebuffer(GL_FRAMEBUFFER, o->fbo);
	glBindRenderbuffer(GL_RENDERBUFFER, o->color);
	glRenderbufferStorageMultisample(GL_RENDERBUFFER, o->samples > 1 ? o->samples : 0, GL_RGBA8, o->width, o->height);
	glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, o->color);
	glBindRenderbuffer(GL_RENDERBUFFER, o->depth);
	glRenderbufferStorageMultisample(GL_RENDERBUFFER, o->samples > 1 ? o->samples : 0, GL_DEPTH_COMPONENT24, o->width,
	                                 o->height);
	glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, o->depth);
	if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
		return render_fail(err, "the %dx%d framebuffer (%d samples) is incomplete", o->width, o->height, o->samples);
	if (o->samples > 1) {
		glGenFramebuffers(1, &o->resolve_fbo);
		glGenRenderbuffers(1, &o->resolve_color);
		glBindFramebuffer(GL_FRAMEBUFFER, o->resolve_fbo);
		glBindRenderbuffer(GL_RENDERBUFFER, o->resolve_color);
		glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, o->width, o->height);
		glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, o->resolve_color);
		if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
			return render_fail(err, "the %dx%d resolve framebuffer is incomplete", o->width, o->height);
	}
	glBindFramebuffer(GL_FRAMEBUFFER, o->fbo);
	const GLenum e = glGetError();
	if (e != GL_NO_ERROR) return render_fail(err, "OpenGL error 0x%04x while making the framebuffer", (unsigned)e);
	return true;
}

bool pbd_render_offscreen_create(int width, int height, int samples, pbd_render_offscreen** out, pbd_error* err) {
	*out = NULL;
	if (width < 1 || height < 1 || width > PBD_RENDER_MAX_SIZE || height > PBD_RENDER_MAX_SIZE)
		return render_fail(err, "image size %dx%d is outside 1..%d", width, height, PBD_RENDER_MAX_SIZE);
	pbd_render_offscreen* o = calloc(1, sizeof *o);
	if (!o) return render_fail(err, "out of memory");
	o->width = width;
	o->height = height;
	o->display = EGL_NO_DISPLAY;
	o->context = EGL_NO_CONTEXT;
	char why[160];
	o->display = open_display(why, sizeof why);
	bool ok = o->display != EGL_NO_DISPLAY || render_fail(err, "no OpenGL driver: %s", why);
	ok = ok && make_context(o, err) && make_framebuffers(o, samples, err);
	if (!ok) {
		pbd_render_offscreen_destroy(o);
		return false;
	}
	const char* name = (const char*)glGetString(GL_RENDERER);
	snprintf(o->device, sizeof o->device, "%s", name ? name : "unknown");
	*out = o;
	return true;
}

void pbd_render_offscreen_bind(pbd_render_offscreen* o) {
	glBindFramebuffer(GL_FRAMEBUFFER, o->fbo);
	glViewport(0, 0, o->width, o->height);
}

bool pbd_render_read_pixels(int width, int height, uint8_t* rgb, pbd_error* err) {
	glPixelStorei(GL_PACK_ALIGNMENT, 1);
	glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, rgb);
	const GLenum e = glGetError();
	if (e != GL_NO_ERROR) return render_fail(err, "OpenGL error 0x%04x while reading pixels", (unsigned)e);
	/* GL's rows run bottom up; images run top down. */
	const size_t stride = (size_t)width * 3;
	uint8_t* tmp = malloc(stride);
	if (!tmp) return render_fail(err, "out of memory");
	for (int y = 0; y < height / 2; ++y) {
		uint8_t* a = rgb + (size_t)y * stride;
		uint8_t* b = rgb + (size_t)(height - 1 - y) * stride;
		memcpy(tmp, a, stride);
		memcpy(a, b, stride);
		memcpy(b, tmp, stride);
	}
	free(tmp);
	return true;
}

bool pbd_render_offscreen_read(pbd_render_offscreen* o, uint8_t* rgb, pbd_error* err) {
	if (o->samples > 1) {
		glBindFramebuffer(GL_READ_FRAMEBUFFER, o->fbo);
		glBindFramebuffer(GL_DRAW_FRAMEBUFFER, o->resolve_fbo);
		glBlitFramebuffer(0, 0, o->width, o->height, 0, 0, o->width, o->height, GL_COLOR_BUFFER_BIT, GL_NEAREST);
		glBindFramebuffer(GL_READ_FRAMEBUFFER, o->resolve_fbo);
	} else {
		glBindFramebuffer(GL_READ_FRAMEBUFFER, o->fbo);
	}
	const bool ok = pbd_render_read_pixels(o->width, o->height, rgb, err);
	glBindFramebuffer(GL_FRAMEBUFFER, o->fbo);
	return ok;
}

const char* pbd_render_offscreen_device(const pbd_render_offscreen* o) { return o->device; }

void pbd_render_offscreen_destroy(pbd_render_offscreen* o) {
	if (!o) return;
	if (o->context != EGL_NO_CONTEXT && eglGetCurrentContext() == o->context) {
		glBindFramebuffer(GL_FRAMEBUFFER, 0);
		if (o->fbo) glDeleteFramebuffers(1, &o->fbo);
		if (o->resolve_fbo) glDeleteFramebuffers(1, &o->resolve_fbo);
		const GLuint rbs[3] = {o->color, o->depth, o->resolve_color};
		glDeleteRenderbuffers(3, rbs);
	}
	if (o->display != EGL_NO_DISPLAY) {
		eglMakeCurrent(o->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
		if (o->context != EGL_NO_CONTEXT) eglDestroyContext(o->display, o->context);
		/* No eglTerminate: an EGL display is one object per process, shared with whoever else
		 * uses EGL here, and terminating it would end their contexts too (EGL 1.5 counts no
		 * references). It stays initialised, its driver loaded, until the process ends; the
		 * next offscreen target reuses it. */
	}
	eglReleaseThread();
	free(o);
}
