/* The on-screen panel: what the viewer shows and how fast, as text drawn over the scene.
 *
 * stb_easy_font (Debian's libstb) turns text into quads without a texture; one small shader
 * draws them, with the panels' translucent backgrounds as more quads in the same buffer, in a
 * single draw call per frame. The quads are made into triangles by a fixed index buffer. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <epoxy/gl.h>
#include <stb_easy_font.h>

#include "viewer.h"

#define HUD_VERTEX_BYTES 16    /* stb_easy_font's vertex: x, y, z floats, 4 color bytes */
#define HUD_MAX_QUADS    32768 /* text of about 4000 characters; more is cut */
#define HUD_TEXT_MAX     4096
#define HUD_MARGIN       8.0f /* framebuffer pixels at scale 1 */
#define HUD_PAD          6.0f
#define HUD_LINE         12.0f /* stb_easy_font's line height */

struct view_hud {
	GLuint program, vao, vbo, ibo;
	GLint u_screen, u_scale;
	unsigned char* vertices; /* HUD_MAX_QUADS * 4 vertices */
	int quads;
	float scale;
};

static const char* const vertex_src = "#version 330 core\n"
                                      "layout(location = 0) in vec2 a_pos;\n"
                                      "layout(location = 1) in vec4 a_color;\n"
                                      "uniform vec2 u_screen;\n"
                                      "uniform float u_scale;\n"
                                      "out vec4 v_color;\n"
                                      "void main() {\n"
                                      "  vec2 p = a_pos * u_scale / u_screen;\n" /* pixels, y down */
                                      "  gl_Position = vec4(p.x * 2.0 - 1.0, 1.0 - p.y * 2.0, 0.0, 1.0);\n"
                                      "  v_color = a_color;\n"
                                      "}\n";

static const char* const fragment_src = "#version 330 core\n"
                                        "in vec4 v_color;\n"
                                        "out vec4 o_color;\n"
                                        "void main() { o_color = v_color; }\n";

bool view_hud_create(view_hud** out, pbd_error* err) {
	*out = NULL;
	view_hud* h = calloc(1, sizeof *h);
	uint32_t* indices = malloc((size_t)HUD_MAX_QUADS * 6 * sizeof *indices);
	if (h) h->vertices = malloc((size_t)HUD_MAX_QUADS * 4 * HUD_VERTEX_BYTES);
	if (!h || !indices || !h->vertices) {
		snprintf(err->message, sizeof err->message, "out of memory");
		free(indices);
		if (h) free(h->vertices);
		free(h);
		return false;
	}
	h->program = pbd_render_program_build(vertex_src, NULL, fragment_src, "panel", err);
	if (!h->program) {
		free(indices);
		free(h->vertices);
		free(h);
		return false;
	}
	h->u_screen = glGetUniformLocation(h->program, "u_screen");
	h->u_scale = glGetUniformLocation(h->program, "u_scale");

	for (uint32_t q = 0; q < HUD_MAX_QUADS; ++q) {
		const uint32_t b = 4 * q;
		const uint32_t quad[6] = {b, b + 1, b + 2, b, b + 2, b + 3};
		memcpy(indices + 6 * q, quad, sizeof quad);
	}
	glGenVertexArrays(1, &h->vao);
	glGenBuffers(1, &h->vbo);
	glGenBuffers(1, &h->ibo);
	glBindVertexArray(h->vao);
	glBindBuffer(GL_ARRAY_BUFFER, h->vbo);
	glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)HUD_MAX_QUADS * 4 * HUD_VERTEX_BYTES, NULL, GL_STREAM_DRAW);
	glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, h->ibo);
	glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)((size_t)HUD_MAX_QUADS * 6 * sizeof *indices), indices,
	             GL_STATIC_DRAW);
	glEnableVertexAttribArray(0);
	glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, HUD_VERTEX_BYTES, (const void*)0);
	glEnableVertexAttribArray(1);
	glVertexAttribPointer(1, 4, GL_UNSIGNED_BYTE, GL_TRUE, HUD_VERTEX_BYTES, (const void*)(3 * sizeof(float)));
	glBindVertexArray(0);
	free(indices);
	const GLenum e = glGetError();
	if (e != GL_NO_ERROR) {
		snprintf(err->message, sizeof err->message, "panel: OpenGL error 0x%04x", (unsigned)e);
		view_hud_destroy(h);
		return false;
	}
	*out = h;
	return true;
}

void view_hud_destroy(view_hud* h) {
	if (!h) return;
	glDeleteBuffers(1, &h->ibo);
	glDeleteBuffers(1, &h->vbo);
	glDeleteVertexArrays(1, &h->vao);
	glDeleteProgram(h->program);
	free(h->vertices);
	free(h);
}

/* ---- building the quads ---- */

static void add_rect(view_hud* h, float x0, float y0, float x1, float y1, const unsigned char rgba[4]) {
	if (h->quads >= HUD_MAX_QUADS) return;
	unsigned char* v = h->vertices + (size_t)h->quads * 4 * HUD_VERTEX_BYTES;
	const float corners[4][2] = {{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}};
	for (int k = 0; k < 4; ++k) {
		const float xyz[3] = {corners[k][0], corners[k][1], 0.0f};
		memcpy(v + k * HUD_VERTEX_BYTES, xyz, sizeof xyz);
		memcpy(v + k * HUD_VERTEX_BYTES + 12, rgba, 4);
	}
	h->quads++;
}

/* A line from (x0, y0) to (x1, y1), `width` pixels wide. */
static void add_segment(view_hud* h, float x0, float y0, float x1, float y1, float width, const unsigned char rgba[4]) {
	const float dx = x1 - x0, dy = y1 - y0, len = sqrtf(dx * dx + dy * dy);
	if (!(len > 0.5f) || h->quads >= HUD_MAX_QUADS) return;
	const float nx = -dy / len * 0.5f * width, ny = dx / len * 0.5f * width;
	unsigned char* v = h->vertices + (size_t)h->quads * 4 * HUD_VERTEX_BYTES;
	const float corners[4][2] = {{x0 + nx, y0 + ny}, {x1 + nx, y1 + ny}, {x1 - nx, y1 - ny}, {x0 - nx, y0 - ny}};
	for (int k = 0; k < 4; ++k) {
		const float xyz[3] = {corners[k][0], corners[k][1], 0.0f};
		memcpy(v + k * HUD_VERTEX_BYTES, xyz, sizeof xyz);
		memcpy(v + k * HUD_VERTEX_BYTES + 12, rgba, 4);
	}
	h->quads++;
}

/* stb_easy_font indexes a table by character: anything outside printable ASCII becomes '?'. */
static void sanitize(char* text) {
	for (char* c = text; *c; ++c)
		if (*c != '\n' && ((unsigned char)*c < 32 || (unsigned char)*c > 126)) *c = '?';
}

static void add_text(view_hud* h, float x, float y, char* text, const unsigned char rgba[4]) {
	const int room = (HUD_MAX_QUADS - h->quads) * 4 * HUD_VERTEX_BYTES;
	unsigned char color[4] = {rgba[0], rgba[1], rgba[2], rgba[3]};
	h->quads += stb_easy_font_print(x, y, text, color, h->vertices + (size_t)h->quads * 4 * HUD_VERTEX_BYTES, room);
}

static const unsigned char panel_back[4] = {16, 18, 24, 176};

/* A block of text at (x, y) (unscaled pixels) on a translucent panel; returns the panel's
 * height. `text` is sanitized in place. */
static float add_panel(view_hud* h, float x, float y, char* text, const unsigned char rgba[4]) {
	sanitize(text);
	const float w = (float)stb_easy_font_width(text), ht = (float)stb_easy_font_height(text);
	add_rect(h, x - HUD_PAD, y - HUD_PAD, x + w + HUD_PAD, y + ht + HUD_PAD, panel_back);
	add_text(h, x, y, text, rgba);
	return ht + 2 * HUD_PAD;
}

/* Appends printf output to buf (size n) at *len, cut to fit. */
static void put(char* buf, size_t n, size_t* len, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static void put(char* buf, size_t n, size_t* len, const char* fmt, ...) {
	if (*len + 1 >= n) return;
	va_list ap;
	va_start(ap, fmt);
	const int k = vsnprintf(buf + *len, n - *len, fmt, ap);
	va_end(ap);
	if (k > 0) *len += (size_t)k < n - *len ? (size_t)k : n - *len - 1;
}

static const char* plural(unsigned long n) { return n == 1 ? "" : "s"; }

/* The phases of the step, ms per step over the last window of steps, three to a line. */
static void profile_text(const viewer* v, char* buf, size_t n, size_t* len) {
	const profile_sum* s = &v->profile_shown;
	if (s->steps <= 0) {
		put(buf, n, len, "profile: measuring...\n");
		return;
	}
	profile_row rows[PROFILE_MAX_ROWS];
	const int count = profile_rows(&s->total, (double)s->steps, rows);
	put(buf, n, len, "profile, ms per step (%.3f):", s->total.step / (double)s->steps);
	for (int i = 0; i < count; ++i) put(buf, n, len, "%s%s %.3f", i % 3 == 0 ? "\n  " : ", ", rows[i].name, rows[i].ms);
	put(buf, n, len, "\n");
}

static void status_text(const viewer* v, char* buf, size_t n) {
	size_t len = 0;
	pbd_world* w = v->sc.world;
	pbd_stats st;
	pbd_world_get_stats(w, &st);
	const pbd_world_def def = pbd_world_get_def(w);
	const double speed = v->time_scale / (v->slow_motion ? VIEW_SLOW_FACTOR : 1.0);
	put(buf, n, &len, "%s   t %.2f s%s\n", v->sc.name, st.time, v->paused ? "   PAUSED (space runs, N steps)" : "");
	put(buf, n, &len, "frame %.1f ms, step %.3f ms (simulation only) x%d\n", v->frame_ms, v->step_ms,
	    v->steps_in_frame);
	put(buf, n, &len, "%u particles, %u constraints, %u collider%s, %u bod%s", st.particles, st.distances, st.colliders,
	    plural(st.colliders), st.bodies, st.bodies == 1 ? "y" : "ies");
	const uint32_t joints = pbd_world_joint_count(w);
	if (joints > 0) put(buf, n, &len, ", %u joint%s", joints, plural(joints));
	put(buf, n, &len, "\n");
	put(buf, n, &len, "max strain %.4f (mean %.4f), %u contact%s\n", st.max_strain, st.mean_strain, st.contacts,
	    plural(st.contacts));
	put(buf, n, &len, "%s, %s, %d iteration%s, %d substep%s\n", view_solver_name(def.solver),
	    view_formulation_name(def.formulation), def.iterations, plural((unsigned long)def.iterations), def.substeps,
	    plural((unsigned long)def.substeps));
	put(buf, n, &len, "dt %.4g s, speed x%g%s, stiffness x%g%s\n", (double)def.dt, speed,
	    v->slow_motion ? " (slow)" : "", ldexp(1.0, v->controls.stiffness_level),
	    v->behind ? "\nbehind real time: steps dropped" : "");
	if (v->grab.active && v->grab.kind == VIEW_GRAB_BODY && v->grab.index < v->sc.body_count)
		put(buf, n, &len, "holding body %u (%s)\n", v->grab.index, v->sc.bodies[v->grab.index].name);
	else if (v->grab.active)
		put(buf, n, &len, "holding particle %u%s\n", v->grab.index, v->grab.was_pinned ? " (pinned)" : "");
	if (v->show_profile) profile_text(v, buf, n, &len);
	put(buf, n, &len, "H or ?: keys   Tab: hide");
}

/* The key list: keys in one column, what they do in the next (the font is proportional, so
 * spaces cannot align them). */
static const char* const help_keys[][2] = {
    {"left drag", "on the cloth or a dynamic body: grab it; elsewhere: orbit"},
    {"right drag", "pan (also middle drag, shift + left drag)"},
    {"wheel", "zoom"},
    {"space", "run / pause"},
    {"N, right", "one step (pauses)"},
    {"R", "reload the scene"},
    {"F", "back to the scene's camera"},
    {"S", "slow motion (x1/8)"},
    {"+  -", "time scale x2, /2"},
    {"P C K I O", "particles, constraints (strain), contacts, pinned, colliders"},
    {"J", "joints"},
    {"G", "solver: Gauss-Seidel / Jacobi"},
    {"X", "formulation: PBD / XPBD"},
    {"[  ]", "iterations -1, +1 (shift: /2, x2)"},
    {",  .", "substeps -1, +1 (shift: /2, x2)"},
    {"up  down", "stiffness x2, /2 (all constraints)"},
    {"0", "the scene's stiffness"},
    {"H  ?", "this list"},
    {"Tab", "hide / show the panel"},
    {"T", "profile: time of each phase of the step"},
    {"Esc  Q", "quit"},
};

#define HELP_ROWS (sizeof help_keys / sizeof help_keys[0])

static void help_size(float* w, float* ht) {
	float kw = 0, dw = 0;
	for (size_t i = 0; i < HELP_ROWS; ++i) {
		char k[64], d[128];
		snprintf(k, sizeof k, "%s", help_keys[i][0]);
		snprintf(d, sizeof d, "%s", help_keys[i][1]);
		kw = fmaxf(kw, (float)stb_easy_font_width(k));
		dw = fmaxf(dw, (float)stb_easy_font_width(d));
	}
	*w = kw + 3 * HUD_PAD + dw;
	*ht = (float)HELP_ROWS * HUD_LINE - 3.0f;
}

static void add_help(view_hud* h, float x, float y, const unsigned char rgba[4], const unsigned char key_rgba[4]) {
	float w = 0, ht = 0;
	help_size(&w, &ht);
	add_rect(h, x - HUD_PAD, y - HUD_PAD, x + w + HUD_PAD, y + ht + HUD_PAD, panel_back);
	float kw = 0;
	for (size_t i = 0; i < HELP_ROWS; ++i) {
		char k[64];
		snprintf(k, sizeof k, "%s", help_keys[i][0]);
		kw = fmaxf(kw, (float)stb_easy_font_width(k));
	}
	for (size_t i = 0; i < HELP_ROWS; ++i) {
		char k[64], d[128];
		snprintf(k, sizeof k, "%s", help_keys[i][0]);
		snprintf(d, sizeof d, "%s", help_keys[i][1]);
		const float row = y + (float)i * HUD_LINE;
		add_text(h, x, row, k, key_rgba);
		add_text(h, x + kw + 3 * HUD_PAD, row, d, rgba);
	}
}

/* From the point held to where the cursor drags it, under the panels: a body hangs behind its
 * target on the spring, a particle sits on it (a dot). */
static void add_grab_line(view_hud* h, const viewer* v) {
	float p[3];
	if (!view_grab_point(v, p)) return;
	const float t[3] = {(float)v->grab.target.x, (float)v->grab.target.y, (float)v->grab.target.z};
	const pbd_render_camera cam = view_camera(v);
	float px, py, tx, ty;
	if (!pbd_render_camera_project(&cam, v->fb_w, v->fb_h, p, &px, &py) ||
	    !pbd_render_camera_project(&cam, v->fb_w, v->fb_h, t, &tx, &ty))
		return;
	static const unsigned char line[4] = {255, 220, 120, 235};
	static const unsigned char dark[4] = {16, 18, 24, 200};
	const float s = h->scale, r = 3.0f;
	px /= s, py /= s, tx /= s, ty /= s;
	add_segment(h, px, py, tx, ty, 3.5f, dark);
	add_segment(h, px, py, tx, ty, 1.5f, line);
	add_rect(h, tx - r - 1, ty - r - 1, tx + r + 1, ty + r + 1, dark);
	add_rect(h, tx - r, ty - r, tx + r, ty + r, line);
	add_rect(h, px - 2, py - 2, px + 2, py + 2, line);
}

void view_hud_draw(view_hud* h, const viewer* v) {
	if (v->fb_w < 1 || v->fb_h < 1 || v->hide_panel) return;
	/* Whole scales keep stb_easy_font's one-pixel strokes sharp: 1 up to about 1000 pixels high
	 * (its letters are 7 pixels), 2 on a 1080p or HiDPI framebuffer. */
	h->scale = fmaxf(1.0f, floorf((float)v->fb_h / 720.0f + 0.5f));
	h->quads = 0;
	add_grab_line(h, v);
	static const unsigned char white[4] = {235, 238, 245, 255};
	static const unsigned char yellow[4] = {255, 220, 120, 255};
	char text[HUD_TEXT_MAX];
	status_text(v, text, sizeof text);
	sanitize(text);
	const float x0 = HUD_MARGIN + HUD_PAD, y0 = HUD_MARGIN + HUD_PAD;
	const float status_right = x0 + HUD_PAD + (float)stb_easy_font_width(text);
	float y = y0 + add_panel(h, x0, y0, text, white);
	if (v->message[0]) {
		snprintf(text, sizeof text, "%s", v->message);
		y += HUD_PAD + add_panel(h, x0, y + HUD_PAD, text, yellow);
	}
	if (v->show_help) {
		/* On the right when it fits beside the status panel, else below it. */
		float w = 0, ht = 0;
		help_size(&w, &ht);
		const float x = (float)v->fb_w / h->scale - w - HUD_MARGIN - HUD_PAD;
		if (x - HUD_PAD >= status_right + HUD_MARGIN)
			add_help(h, x, y0, white, yellow);
		else
			add_help(h, x0, y + HUD_PAD, white, yellow);
	}
	if (h->quads == 0) return;

	glBindFramebuffer(GL_FRAMEBUFFER, 0);
	glViewport(0, 0, v->fb_w, v->fb_h);
	glDisable(GL_DEPTH_TEST);
	glDisable(GL_CULL_FACE);
	glEnable(GL_BLEND);
	glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
	glUseProgram(h->program);
	glUniform2f(h->u_screen, (float)v->fb_w, (float)v->fb_h);
	glUniform1f(h->u_scale, h->scale);
	glBindVertexArray(h->vao);
	glBindBuffer(GL_ARRAY_BUFFER, h->vbo);
	glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)h->quads * 4 * HUD_VERTEX_BYTES, h->vertices);
	glDrawElements(GL_TRIANGLES, h->quads * 6, GL_UNSIGNED_INT, (const void*)0);
	glBindVertexArray(0);
	glUseProgram(0);
	glDisable(GL_BLEND);
	glEnable(GL_DEPTH_TEST);
}
