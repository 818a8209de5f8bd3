/* The renderer: reads a world through libpbd's public API and draws it with OpenGL 3.3 core.
 *
 * Per update: positions (converted to float), smooth normals, pinned particles, colliders (their
 * poses move, a body's shapes with the body; a dynamic body's shapes take the body color) and the
 * library's contacts, the joints and the bodies' contacts. Convex hulls, meshes and heightfields
 * are drawn from their triangles (pbd_collider_get_triangles, in the collider's frame), read once per collider
 * into buffers of their own and placed by the pose read at every update. Per topology change (a new world, or new
 * particles, constraints or triangles): the triangle, edge and line index buffers, the rest lengths (a texture buffer
 * the line shader reads to color each constraint by its strain), the automatic sizes and the plane quads. Drawing then
 * touches no world data, so a paused viewer can orbit without updates. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <epoxy/gl.h>

#include "pbd/math.h"
#include "render_internal.h"
#include "shaders.h"

typedef struct drawn_collider {
	pbd_shape_type type;
	bool trigger;
	bool body;             /* carried by a dynamic body: the body color */
	uint32_t mesh;         /* convex, mesh, heightfield: its entry in pbd_renderer.meshes */
	float origin[3];       /* the same: its frame's origin in the world */
	float center[3];       /* the shape's centre in the world */
	float rot[9];          /* its pose's rotation, column-major */
	float ext[3];          /* half sizes along the local axes: the radius thrice, or a box's half extents */
	float shift;           /* a capsule's half height */
	float ball;            /* radius of the ball around `center` that holds the shape */
	float plane_origin[3]; /* a point of the plane, where the checker pattern is anchored */
	render_plane_quad quad;
} drawn_collider;

/* The triangles of a convex, mesh or heightfield collider in its local frame, in GL buffers of
 * their own: positions and indices, no normals (the surface shader falls back to the face normal,
 * which shades them flat). */
typedef struct collider_mesh {
	pbd_collider_id id; /* the collider they were read from; index1 0: none yet */
	GLuint vao, vbo, ebo;
	GLsizei index_count; /* 0: nothing to draw */
} collider_mesh;

struct pbd_renderer {
	GLuint bg_prog, surf_prog, line_prog, point_prog;
	struct {
		GLint top, bottom, height;
	} bg_u;
	struct {
		GLint model, view, proj, mode, front, back, plane_origin, plane_u, plane_v, plane_center, plane_tile,
		    plane_half, shift, alpha;
	} surf_u;
	struct {
		GLint view, proj, viewport, near_z, radius_world, radius_px, depth_bias, strain, rest, strain_red, color,
		    shaded;
	} line_u;
	struct {
		GLint view, proj, viewport, radius, max_size, color;
	} point_u;
	GLuint vao_empty, vao_world, vao_sphere, vao_plane, vao_capsule, vao_box;
	GLuint vao_marks, vbo_marks; /* joints and bodies' contacts: their points, then their lines' ends */
	GLuint vbo_pos, vbo_nrm;
	GLuint ebo_tris, ebo_edges, ebo_lines, ebo_body_points, ebo_pinned, ebo_contacts;
	GLuint rest_buffer, rest_texture;
	GLuint sphere_pos, sphere_nrm, sphere_ebo;
	GLuint plane_vbo;
	GLuint capsule_pos, capsule_nrm, capsule_shift, capsule_ebo;
	GLuint box_pos, box_nrm, box_ebo;
	GLsizei sphere_index_count, capsule_index_count, box_index_count;
	float max_point_size;

	/* What the buffers were made from. */
	bool synced;
	const pbd_world* world;
	uint32_t np, nd, nt, world_colliders;
	const uint32_t* lines_src;
	uint32_t lines_src_count, scene_colliders;

	/* Counts of what is drawn. */
	uint32_t line_count, body_point_count, pinned_count, contact_count;

	float* pos; /* 3 per particle */
	float* nrm;
	uint32_t* scratch; /* np indices: pinned, then contacts */
	uint8_t* in_triangle;
	uint8_t* marked;       /* np flags, all clear between updates: a contact's particle seen */
	pbd_contact* contacts; /* the library's, contact_cap of them */
	uint32_t contact_cap;
	drawn_collider* colliders;
	uint32_t collider_count, collider_cap;
	collider_mesh* meshes; /* one per collider of the scene, by its index there */
	uint32_t mesh_cap;

	/* Joints and the bodies' contacts, rewritten by every update: xyz per vertex, in the order
	 * joint anchors, joint line ends, contact points, contact normal ends. */
	float* marks;
	uint32_t mark_cap; /* vertices */
	uint32_t joint_points, joint_line_ends, body_contact_points, body_contact_line_ends;
	pbd_body_contact* body_contacts;
	uint32_t body_contact_cap;
	float auto_mark_length; /* a joint's axis and a contact's normal, each way */

	float auto_line_radius, auto_ball_radius, auto_marker_radius;
	pbd_render_bounds bounds; /* everything drawn, for the depth range */
	pbd_render_bounds frame_bounds;
	char error[256];
};

static bool set_error(pbd_renderer* r, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static bool set_error(pbd_renderer* r, const char* fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->error, sizeof r->error, fmt, ap);
	va_end(ap);
	return false;
}

pbd_render_style pbd_render_style_default(void) {
	pbd_render_style s;
	memset(&s, 0, sizeof s);
	/* Warm cloth over cool colliders and a neutral background: the three stay apart in hue
	 * under any lighting, which is also what the image tests tell them apart by. */
	s.cloth_front = (pbd_render_rgb){0.88f, 0.36f, 0.20f};
	s.cloth_back = (pbd_render_rgb){0.95f, 0.70f, 0.25f};
	s.collider = (pbd_render_rgb){0.30f, 0.52f, 0.80f};
	/* Teal: apart from the colliders' blue in hue, so what the mouse can move stands out. */
	s.body = (pbd_render_rgb){0.16f, 0.62f, 0.52f};
	s.background_top = (pbd_render_rgb){0.96f, 0.96f, 0.97f};
	s.background_bottom = (pbd_render_rgb){0.74f, 0.76f, 0.80f};
	s.pinned = (pbd_render_rgb){0.10f, 0.10f, 0.12f};
	s.contact = (pbd_render_rgb){0.20f, 0.85f, 0.30f};
	s.particle = (pbd_render_rgb){0.25f, 0.25f, 0.30f};
	/* Magenta: apart in hue from the cloth, the colliders, the bodies and the contacts' green. */
	s.joint = (pbd_render_rgb){0.82f, 0.24f, 0.80f};
	s.show_colliders = true;
	s.show_joints = true;
	s.show_pinned = true;
	s.strain_red = 0.1f;
	s.collider_inset = 0.01f;
	return s;
}

const char* pbd_renderer_last_error(const pbd_renderer* r) { return r ? r->error : ""; }

/* ---- GL setup ----------------------------------------------------------------------------- */

static GLuint compile(GLenum kind, const char* src, const char* what, pbd_error* err) {
	GLuint s = glCreateShader(kind);
	glShaderSource(s, 1, &src, NULL);
	glCompileShader(s);
	GLint ok = 0;
	glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
	if (!ok) {
		char log[512] = "";
		glGetShaderInfoLog(s, sizeof log, NULL, log);
		log[strcspn(log, "\n")] = '\0';
		glDeleteShader(s);
		render_fail(err, "the %s shader does not compile: %s", what, log);
		return 0;
	}
	return s;
}

unsigned int pbd_render_program_build(const char* vs, const char* gs, const char* fs, const char* what,
                                      pbd_error* err) {
	GLuint v = compile(GL_VERTEX_SHADER, vs, what, err);
	GLuint g = gs ? compile(GL_GEOMETRY_SHADER, gs, what, err) : 0;
	GLuint f = compile(GL_FRAGMENT_SHADER, fs, what, err);
	GLuint p = 0;
	if (v && f && (!gs || g)) {
		p = glCreateProgram();
		glAttachShader(p, v);
		if (g) glAttachShader(p, g);
		glAttachShader(p, f);
		glLinkProgram(p);
		GLint ok = 0;
		glGetProgramiv(p, GL_LINK_STATUS, &ok);
		if (!ok) {
			char log[512] = "";
			glGetProgramInfoLog(p, sizeof log, NULL, log);
			log[strcspn(log, "\n")] = '\0';
			render_fail(err, "the %s program does not link: %s", what, log);
			glDeleteProgram(p);
			p = 0;
		}
	}
	if (v) glDeleteShader(v);
	if (g) glDeleteShader(g);
	if (f) glDeleteShader(f);
	return p;
}

static bool make_programs(pbd_renderer* r, pbd_error* err) {
	r->bg_prog = pbd_render_program_build(render_bg_vs, NULL, render_bg_fs, "background", err);
	if (!r->bg_prog) return false;
	r->surf_prog = pbd_render_program_build(render_surface_vs, NULL, render_surface_fs, "surface", err);
	if (!r->surf_prog) return false;
	r->line_prog = pbd_render_program_build(render_line_vs, render_line_gs, render_line_fs, "line", err);
	if (!r->line_prog) return false;
	r->point_prog = pbd_render_program_build(render_point_vs, NULL, render_point_fs, "point", err);
	if (!r->point_prog) return false;
	GLuint p = r->bg_prog;
	r->bg_u.top = glGetUniformLocation(p, "u_top");
	r->bg_u.bottom = glGetUniformLocation(p, "u_bottom");
	r->bg_u.height = glGetUniformLocation(p, "u_height");
	p = r->surf_prog;
	r->surf_u.model = glGetUniformLocation(p, "u_model");
	r->surf_u.view = glGetUniformLocation(p, "u_view");
	r->surf_u.proj = glGetUniformLocation(p, "u_proj");
	r->surf_u.mode = glGetUniformLocation(p, "u_mode");
	r->surf_u.front = glGetUniformLocation(p, "u_front");
	r->surf_u.back = glGetUniformLocation(p, "u_back");
	r->surf_u.plane_origin = glGetUniformLocation(p, "u_plane_origin");
	r->surf_u.plane_u = glGetUniformLocation(p, "u_plane_u");
	r->surf_u.plane_v = glGetUniformLocation(p, "u_plane_v");
	r->surf_u.plane_center = glGetUniformLocation(p, "u_plane_center");
	r->surf_u.plane_tile = glGetUniformLocation(p, "u_plane_tile");
	r->surf_u.plane_half = glGetUniformLocation(p, "u_plane_half");
	r->surf_u.shift = glGetUniformLocation(p, "u_shift");
	r->surf_u.alpha = glGetUniformLocation(p, "u_alpha");
	p = r->line_prog;
	r->line_u.view = glGetUniformLocation(p, "u_view");
	r->line_u.proj = glGetUniformLocation(p, "u_proj");
	r->line_u.viewport = glGetUniformLocation(p, "u_viewport");
	r->line_u.near_z = glGetUniformLocation(p, "u_near");
	r->line_u.radius_world = glGetUniformLocation(p, "u_radius_world");
	r->line_u.radius_px = glGetUniformLocation(p, "u_radius_px");
	r->line_u.depth_bias = glGetUniformLocation(p, "u_depth_bias");
	r->line_u.strain = glGetUniformLocation(p, "u_strain");
	r->line_u.rest = glGetUniformLocation(p, "u_rest");
	r->line_u.strain_red = glGetUniformLocation(p, "u_strain_red");
	r->line_u.color = glGetUniformLocation(p, "u_color");
	r->line_u.shaded = glGetUniformLocation(p, "u_shaded");
	p = r->point_prog;
	r->point_u.view = glGetUniformLocation(p, "u_view");
	r->point_u.proj = glGetUniformLocation(p, "u_proj");
	r->point_u.viewport = glGetUniformLocation(p, "u_viewport");
	r->point_u.radius = glGetUniformLocation(p, "u_radius");
	r->point_u.max_size = glGetUniformLocation(p, "u_max_size");
	r->point_u.color = glGetUniformLocation(p, "u_color");
	return true;
}

/* A collider mesh into its vertex array: positions at 0, normals at 1, and a capsule's shifts at 2
 * (`shift_vbo` 0 for the others, whose a_shift then reads the attribute's default 0). Returns the
 * index count. */
static GLsizei upload_mesh(GLuint vao, GLuint pos_vbo, GLuint nrm_vbo, GLuint shift_vbo, GLuint ebo,
                           const render_mesh* m) {
	glBindVertexArray(vao);
	glBindBuffer(GL_ARRAY_BUFFER, pos_vbo);
	glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(m->vertex_count * 3 * sizeof(float)), m->positions, GL_STATIC_DRAW);
	glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, NULL);
	glEnableVertexAttribArray(0);
	glBindBuffer(GL_ARRAY_BUFFER, nrm_vbo);
	glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(m->vertex_count * 3 * sizeof(float)), m->normals, GL_STATIC_DRAW);
	glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 0, NULL);
	glEnableVertexAttribArray(1);
	if (shift_vbo && m->shifts) {
		glBindBuffer(GL_ARRAY_BUFFER, shift_vbo);
		glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(m->vertex_count * sizeof(float)), m->shifts, GL_STATIC_DRAW);
		glVertexAttribPointer(2, 1, GL_FLOAT, GL_FALSE, 0, NULL);
		glEnableVertexAttribArray(2);
	}
	glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, ebo);
	glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)(m->index_count * sizeof(uint32_t)), m->indices, GL_STATIC_DRAW);
	return (GLsizei)m->index_count;
}

static bool make_buffers(pbd_renderer* r, pbd_error* err) {
	glGenVertexArrays(1, &r->vao_empty);
	glGenVertexArrays(1, &r->vao_world);
	glGenVertexArrays(1, &r->vao_sphere);
	glGenVertexArrays(1, &r->vao_plane);
	glGenVertexArrays(1, &r->vao_capsule);
	glGenVertexArrays(1, &r->vao_box);
	GLuint buffers[20];
	glGenBuffers(20, buffers);
	r->vbo_pos = buffers[0];
	r->vbo_nrm = buffers[1];
	r->ebo_tris = buffers[2];
	r->ebo_edges = buffers[3];
	r->ebo_lines = buffers[4];
	r->ebo_body_points = buffers[5];
	r->ebo_pinned = buffers[6];
	r->ebo_contacts = buffers[7];
	r->rest_buffer = buffers[8];
	r->sphere_pos = buffers[9];
	r->sphere_nrm = buffers[10];
	r->sphere_ebo = buffers[11];
	r->plane_vbo = buffers[12];
	r->capsule_pos = buffers[13];
	r->capsule_nrm = buffers[14];
	r->capsule_shift = buffers[15];
	r->capsule_ebo = buffers[16];
	r->box_pos = buffers[17];
	r->box_nrm = buffers[18];
	r->box_ebo = buffers[19];
	glGenTextures(1, &r->rest_texture);
	glGenVertexArrays(1, &r->vao_marks);
	glGenBuffers(1, &r->vbo_marks);
	glBindVertexArray(r->vao_marks);
	glBindBuffer(GL_ARRAY_BUFFER, r->vbo_marks);
	glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, NULL);
	glEnableVertexAttribArray(0);

	glBindVertexArray(r->vao_world);
	glBindBuffer(GL_ARRAY_BUFFER, r->vbo_pos);
	glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, NULL);
	glEnableVertexAttribArray(0);
	glBindBuffer(GL_ARRAY_BUFFER, r->vbo_nrm);
	glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 0, NULL);
	glEnableVertexAttribArray(1);

	render_mesh sphere, capsule, box;
	const bool made =
	    render_mesh_uv_sphere(48, 24, &sphere) && render_mesh_capsule(48, 12, &capsule) && render_mesh_box(&box);
	if (made) {
		r->sphere_index_count = upload_mesh(r->vao_sphere, r->sphere_pos, r->sphere_nrm, 0, r->sphere_ebo, &sphere);
		r->capsule_index_count =
		    upload_mesh(r->vao_capsule, r->capsule_pos, r->capsule_nrm, r->capsule_shift, r->capsule_ebo, &capsule);
		r->box_index_count = upload_mesh(r->vao_box, r->box_pos, r->box_nrm, 0, r->box_ebo, &box);
	}
	render_mesh_free(&sphere);
	render_mesh_free(&capsule);
	render_mesh_free(&box);
	if (!made) return render_fail(err, "out of memory");

	/* Plane quads: 4 vertices of position and normal, rewritten for each plane drawn. */
	glBindVertexArray(r->vao_plane);
	glBindBuffer(GL_ARRAY_BUFFER, r->plane_vbo);
	glBufferData(GL_ARRAY_BUFFER, 4 * 6 * sizeof(float), NULL, GL_DYNAMIC_DRAW);
	glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), NULL);
	glEnableVertexAttribArray(0);
	glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), (const void*)(3 * sizeof(float)));
	glEnableVertexAttribArray(1);
	glBindVertexArray(0);

	GLfloat range[2] = {1, 64};
	glGetFloatv(GL_POINT_SIZE_RANGE, range);
	r->max_point_size = range[1] > 1 ? range[1] : 64;
	const GLenum e = glGetError();
	if (e != GL_NO_ERROR) return render_fail(err, "OpenGL error 0x%04x while making the buffers", (unsigned)e);
	return true;
}

bool pbd_renderer_create(pbd_renderer** out, pbd_error* err) {
	*out = NULL;
	if (epoxy_gl_version() < 33)
		return render_fail(err, "the renderer needs OpenGL 3.3 (the current context has %d.%d)",
		                   epoxy_gl_version() / 10, epoxy_gl_version() % 10);
	pbd_renderer* r = calloc(1, sizeof *r);
	if (!r) return render_fail(err, "out of memory");
	while (glGetError() != GL_NO_ERROR) {
	}
	if (!make_programs(r, err) || !make_buffers(r, err)) {
		pbd_renderer_destroy(r);
		return false;
	}
	*out = r;
	return true;
}

void pbd_renderer_destroy(pbd_renderer* r) {
	if (!r) return;
	const GLuint progs[4] = {r->bg_prog, r->surf_prog, r->line_prog, r->point_prog};
	for (int i = 0; i < 4; ++i)
		if (progs[i]) glDeleteProgram(progs[i]);
	const GLuint vaos[6] = {r->vao_empty, r->vao_world, r->vao_sphere, r->vao_plane, r->vao_capsule, r->vao_box};
	glDeleteVertexArrays(6, vaos);
	const GLuint buffers[20] = {r->vbo_pos,         r->vbo_nrm,     r->ebo_tris,     r->ebo_edges,   r->ebo_lines,
	                            r->ebo_body_points, r->ebo_pinned,  r->ebo_contacts, r->rest_buffer, r->sphere_pos,
	                            r->sphere_nrm,      r->sphere_ebo,  r->plane_vbo,    r->capsule_pos, r->capsule_nrm,
	                            r->capsule_shift,   r->capsule_ebo, r->box_pos,      r->box_nrm,     r->box_ebo};
	glDeleteBuffers(20, buffers);
	if (r->rest_texture) glDeleteTextures(1, &r->rest_texture);
	if (r->vao_marks) glDeleteVertexArrays(1, &r->vao_marks);
	if (r->vbo_marks) glDeleteBuffers(1, &r->vbo_marks);
	free(r->marks);
	free(r->body_contacts);
	free(r->pos);
	free(r->nrm);
	free(r->scratch);
	free(r->in_triangle);
	free(r->marked);
	free(r->contacts);
	free(r->colliders);
	for (uint32_t i = 0; i < r->mesh_cap; ++i) {
		const collider_mesh* m = &r->meshes[i];
		if (m->vao) glDeleteVertexArrays(1, &m->vao);
		const GLuint mesh_buffers[2] = {m->vbo, m->ebo};
		if (m->vbo) glDeleteBuffers(2, mesh_buffers);
	}
	free(r->meshes);
	free(r);
}

/* ---- update ------------------------------------------------------------------------------- */

static void upload_indices(GLuint ebo, const uint32_t* idx, size_t count) {
	glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, ebo);
	glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)(count * sizeof(uint32_t)), count ? idx : NULL, GL_DYNAMIC_DRAW);
}

static float dist3(const float* a, const float* b) {
	const float d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
	return sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

static void read_positions(pbd_renderer* r, const pbd_world* w) {
	const pbd_vec3* x = pbd_world_positions(w);
	for (uint32_t i = 0; i < r->np; ++i) {
		r->pos[3 * (size_t)i] = (float)x[i].x;
		r->pos[3 * (size_t)i + 1] = (float)x[i].y;
		r->pos[3 * (size_t)i + 2] = (float)x[i].z;
	}
}

/* Everything that follows the world's topology. The vertex arrays of the world VAO keep
 * pointing at the same buffers; only their contents and sizes change. */
static bool sync_topology(pbd_renderer* r, const pbd_render_scene* sc) {
	const pbd_world* w = sc->world;
	r->world = w;
	r->np = pbd_world_particle_count(w);
	r->nd = pbd_world_distance_count(w);
	r->nt = pbd_world_triangle_count(w);
	r->world_colliders = pbd_world_collider_count(w);
	r->lines_src = sc->lines;
	r->lines_src_count = sc->line_count;
	r->scene_colliders = sc->collider_count;
	r->synced = false;

	const size_t np = r->np ? r->np : 1;
	float* pos = realloc(r->pos, np * 3 * sizeof *pos);
	if (pos) r->pos = pos;
	float* nrm = realloc(r->nrm, np * 3 * sizeof *nrm);
	if (nrm) r->nrm = nrm;
	uint32_t* scratch = realloc(r->scratch, np * sizeof *scratch);
	if (scratch) r->scratch = scratch;
	uint8_t* in_tri = realloc(r->in_triangle, np);
	if (in_tri) r->in_triangle = in_tri;
	uint8_t* marked = realloc(r->marked, np);
	if (marked) {
		r->marked = marked;
		memset(marked, 0, np);
	}
	drawn_collider* cols = realloc(r->colliders, (sc->collider_count ? sc->collider_count : 1) * sizeof *cols);
	if (cols) r->colliders = cols;
	if (!pos || !nrm || !scratch || !in_tri || !marked || !cols) return set_error(r, "out of memory");
	r->collider_cap = sc->collider_count;
	/* Collider meshes: one slot per scene collider, the GL objects of slots kept for reuse, and
	 * every slot read again (the world, or the collider an index names, may be another). */
	if (sc->collider_count > r->mesh_cap) {
		collider_mesh* meshes = realloc(r->meshes, sc->collider_count * sizeof *meshes);
		if (!meshes) return set_error(r, "out of memory");
		memset(meshes + r->mesh_cap, 0, (sc->collider_count - r->mesh_cap) * sizeof *meshes);
		r->meshes = meshes;
		r->mesh_cap = sc->collider_count;
	}
	for (uint32_t i = 0; i < r->mesh_cap; ++i) {
		r->meshes[i].id.index1 = 0;
		r->meshes[i].index_count = 0;
	}

	glBindBuffer(GL_ARRAY_BUFFER, r->vbo_pos);
	glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(np * 3 * sizeof(float)), NULL, GL_DYNAMIC_DRAW);
	glBindBuffer(GL_ARRAY_BUFFER, r->vbo_nrm);
	glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(np * 3 * sizeof(float)), NULL, GL_DYNAMIC_DRAW);

	/* Triangles, and which particles they use: the others are drawn as balls and lines. */
	const uint32_t* tris = pbd_world_triangles(w);
	memset(r->in_triangle, 0, np);
	for (size_t k = 0; k < 3 * (size_t)r->nt; ++k)
		if (tris[k] < r->np) r->in_triangle[tris[k]] = 1;
	glBindVertexArray(r->vao_world);
	upload_indices(r->ebo_tris, tris, 3 * (size_t)r->nt);

	read_positions(r, w);
	/* Constraint ends and rest lengths, in constraint order: the line shader's primitive id
	 * is the constraint index into the rest-length texture. */
	uint32_t* edges = malloc((r->nd ? r->nd : 1) * 2 * sizeof *edges);
	float* rest = malloc((r->nd ? r->nd : 1) * sizeof *rest);
	if (!edges || !rest) {
		free(edges);
		free(rest);
		return set_error(r, "out of memory");
	}
	double edge_sum = 0;
	for (uint32_t k = 0; k < r->nd; ++k) {
		pbd_distance_def d;
		if (pbd_world_get_distance(w, k, &d) != PBD_OK) d.a = d.b = 0, d.rest = 0;
		edges[2 * k] = d.a;
		edges[2 * k + 1] = d.b;
		rest[k] = (float)d.rest;
		edge_sum += (double)d.rest;
	}
	upload_indices(r->ebo_edges, edges, 2 * (size_t)r->nd);
	glBindBuffer(GL_TEXTURE_BUFFER, r->rest_buffer);
	glBufferData(GL_TEXTURE_BUFFER, (GLsizeiptr)((r->nd ? r->nd : 1) * sizeof(float)), rest, GL_STATIC_DRAW);
	glBindTexture(GL_TEXTURE_BUFFER, r->rest_texture);
	glTexBuffer(GL_TEXTURE_BUFFER, GL_R32F, r->rest_buffer);
	glBindTexture(GL_TEXTURE_BUFFER, 0);
	glBindBuffer(GL_TEXTURE_BUFFER, 0);

	/* Lines of bodies without triangles: the caller's, or the constraints between particles of
	 * no triangle. Out-of-range indices are dropped rather than drawn from stale memory. */
	uint32_t nl = 0;
	double line_sum = 0;
	if (sc->lines) {
		uint32_t* copy = malloc(((size_t)sc->line_count + 1) * 2 * sizeof *copy);
		if (!copy) {
			free(edges);
			free(rest);
			return set_error(r, "out of memory");
		}
		for (uint32_t k = 0; k < sc->line_count; ++k) {
			const uint32_t a = sc->lines[2 * k], b = sc->lines[2 * k + 1];
			if (a >= r->np || b >= r->np) continue;
			copy[2 * nl] = a;
			copy[2 * nl + 1] = b;
			line_sum += (double)dist3(r->pos + 3 * (size_t)a, r->pos + 3 * (size_t)b);
			++nl;
		}
		upload_indices(r->ebo_lines, copy, 2 * (size_t)nl);
		free(copy);
	} else {
		for (uint32_t k = 0; k < r->nd; ++k) {
			const uint32_t a = edges[2 * k], b = edges[2 * k + 1];
			if (a >= r->np || b >= r->np || r->in_triangle[a] || r->in_triangle[b]) continue;
			edges[2 * nl] = a; /* compacted in place: slot nl <= k was read already */
			edges[2 * nl + 1] = b;
			line_sum += (double)dist3(r->pos + 3 * (size_t)a, r->pos + 3 * (size_t)b);
			++nl;
		}
		upload_indices(r->ebo_lines, edges, 2 * (size_t)nl);
	}
	r->line_count = nl;
	free(edges);
	free(rest);

	uint32_t nb = 0;
	for (uint32_t i = 0; i < r->np; ++i)
		if (!r->in_triangle[i]) r->scratch[nb++] = i;
	upload_indices(r->ebo_body_points, r->scratch, nb);
	r->body_point_count = nb;
	glBindVertexArray(0);

	/* Sizes that follow the scene's scale, from the box a run frames. */
	pbd_render_framing_bounds(sc, &r->frame_bounds);
	float diag = 1.0f;
	if (!render_bounds_is_empty(&r->frame_bounds)) {
		const float* lo = r->frame_bounds.min;
		const float* hi = r->frame_bounds.max;
		diag = dist3(lo, hi);
		if (!(diag > 0)) diag = 1.0f;
	}
	r->auto_line_radius = 0.006f * diag;
	r->auto_ball_radius = 3.0f * r->auto_line_radius;
	if (nl > 0) {
		const float mean = (float)(line_sum / nl);
		if (mean > 0 && r->auto_ball_radius > 0.4f * mean) r->auto_ball_radius = 0.4f * mean;
		if (r->auto_line_radius > 0.45f * r->auto_ball_radius) r->auto_line_radius = 0.45f * r->auto_ball_radius;
	}
	r->auto_mark_length = 0.04f * diag;
	const float mean_edge = r->nd ? (float)(edge_sum / r->nd) : 0.0f;
	r->auto_marker_radius = mean_edge > 0 ? 0.2f * mean_edge : 0.008f * diag;
	if (r->auto_marker_radius > 0.01f * diag) r->auto_marker_radius = 0.01f * diag;
	r->synced = true;
	return true;
}

static bool topology_changed(const pbd_renderer* r, const pbd_render_scene* sc) {
	const pbd_world* w = sc->world;
	return !r->synced || r->world != w || r->np != pbd_world_particle_count(w) ||
	       r->nd != pbd_world_distance_count(w) || r->nt != pbd_world_triangle_count(w) ||
	       r->world_colliders != pbd_world_collider_count(w) || r->lines_src != sc->lines ||
	       r->lines_src_count != sc->line_count || r->scene_colliders != sc->collider_count;
}

/* Column-major rotation matrix of a unit quaternion. */
static void quat_matrix(pbd_quat q, float m[9]) {
	const double x = (double)q.x, y = (double)q.y, z = (double)q.z, w = (double)q.w;
	m[0] = (float)(1 - 2 * (y * y + z * z));
	m[1] = (float)(2 * (x * y + z * w));
	m[2] = (float)(2 * (x * z - y * w));
	m[3] = (float)(2 * (x * y - z * w));
	m[4] = (float)(1 - 2 * (x * x + z * z));
	m[5] = (float)(2 * (y * z + x * w));
	m[6] = (float)(2 * (x * z + y * w));
	m[7] = (float)(2 * (y * z - x * w));
	m[8] = (float)(1 - 2 * (x * x + y * y));
}

static bool is_mesh_shape(pbd_shape_type t) {
	return t == PBD_SHAPE_CONVEX || t == PBD_SHAPE_MESH || t == PBD_SHAPE_HEIGHTFIELD;
}

/* The triangles of collider `id` (local frame) into m's buffers. Its shape never changes, so
 * this is done once per collider; on a failure (out of memory, no triangles) it is not drawn. */
static void read_collider_mesh(const pbd_world* w, pbd_collider_id id, collider_mesh* m) {
	m->id = id;
	m->index_count = 0;
	uint32_t nv = 0, nt = 0;
	if (pbd_collider_get_triangles(w, id, NULL, 0, NULL, 0, &nv, &nt) != PBD_OK || nv == 0 || nt == 0 ||
	    (size_t)nt > (size_t)INT32_MAX / 3)
		return;
	pbd_vec3* v = malloc((size_t)nv * sizeof *v);
	uint32_t* t = malloc(3 * (size_t)nt * sizeof *t);
	float* f = malloc(3 * (size_t)nv * sizeof *f);
	uint32_t nv2 = 0, nt2 = 0;
	if (v && t && f && pbd_collider_get_triangles(w, id, v, nv, t, nt, &nv2, &nt2) == PBD_OK && nv2 == nv &&
	    nt2 == nt) {
		bool ok = true;
		for (size_t k = 0; k < 3 * (size_t)nt; ++k) ok = ok && t[k] < nv;
		for (uint32_t k = 0; k < nv; ++k) {
			f[3 * (size_t)k] = (float)v[k].x;
			f[3 * (size_t)k + 1] = (float)v[k].y;
			f[3 * (size_t)k + 2] = (float)v[k].z;
		}
		if (ok) {
			GLint prev = 0;
			glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &prev);
			if (!m->vao) {
				glGenVertexArrays(1, &m->vao);
				GLuint buffers[2];
				glGenBuffers(2, buffers);
				m->vbo = buffers[0];
				m->ebo = buffers[1];
			}
			glBindVertexArray(m->vao);
			glBindBuffer(GL_ARRAY_BUFFER, m->vbo);
			glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(3 * (size_t)nv * sizeof(float)), f, GL_STATIC_DRAW);
			glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, NULL);
			glEnableVertexAttribArray(0);
			glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, m->ebo);
			glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)(3 * (size_t)nt * sizeof(uint32_t)), t, GL_STATIC_DRAW);
			glBindVertexArray((GLuint)prev);
			m->index_count = (GLsizei)(3 * nt);
		}
	}
	free(v);
	free(t);
	free(f);
}

/* Whether the collider is a shape carried by a dynamic body: what the mouse can move. */
static bool on_dynamic_body(const pbd_world* w, const pbd_collider_def* d) {
	pbd_body_state st;
	return pbd_body_is_valid(w, d->body) && pbd_body_get_state(w, d->body, &st) == PBD_OK &&
	       st.type == PBD_BODY_DYNAMIC;
}

/* Read again at every update: a kinematic collider's pose changes from step to step, and a shape
 * on a body moves with it (pbd_collider_get_pose composes the two; a mesh's triangles, read
 * once in its own frame, are placed by that pose). */
static void read_colliders(pbd_renderer* r, const pbd_render_scene* sc) {
	r->collider_count = 0;
	for (uint32_t i = 0; i < sc->collider_count && i < r->collider_cap; ++i) {
		pbd_collider_def d;
		const pbd_collider_id id = sc->colliders[i];
		/* The pose it has now: a shape on a body is given in the body's frame. */
		if (pbd_collider_get_def(sc->world, id, &d) != PBD_OK ||
		    pbd_collider_get_pose(sc->world, id, &d.pose) != PBD_OK)
			continue;
		if (is_mesh_shape(d.type)) {
			if (i >= r->mesh_cap) continue;
			collider_mesh* m = &r->meshes[i];
			if (m->id.index1 != id.index1 || m->id.generation != id.generation) read_collider_mesh(sc->world, id, m);
			if (m->index_count == 0) continue;
		}
		drawn_collider* c = &r->colliders[r->collider_count++];
		memset(c, 0, sizeof *c);
		c->type = d.type;
		c->trigger = d.trigger;
		c->body = on_dynamic_body(sc->world, &d);
		c->mesh = i;
		quat_matrix(d.pose.rotation, c->rot);
		if (is_mesh_shape(d.type)) {
			/* Drawn at the pose itself; the ball around its world box bounds the depth range. */
			c->origin[0] = (float)d.pose.position.x;
			c->origin[1] = (float)d.pose.position.y;
			c->origin[2] = (float)d.pose.position.z;
			c->ext[0] = c->ext[1] = c->ext[2] = 1.0f;
			if (!render_collider_ball(sc->world, id, &d, c->center, &c->ball)) --r->collider_count;
			continue;
		}
		if (d.type == PBD_SHAPE_PLANE) {
			/* Sized from the framing box, not the current one, so the quad and its checker
			 * squares stay put while the scene moves. */
			const pbd_plane plane = render_collider_world_plane(&d);
			render_plane_quad_make(&plane, &r->frame_bounds, &c->quad);
			for (int k = 0; k < 3; ++k) c->plane_origin[k] = c->quad.n[k] * (float)plane.offset;
			continue;
		}
		render_collider_ball(sc->world, id, &d, c->center, &c->ball);
		if (d.type == PBD_SHAPE_BOX) {
			c->ext[0] = (float)d.shape.box.half_extents.x;
			c->ext[1] = (float)d.shape.box.half_extents.y;
			c->ext[2] = (float)d.shape.box.half_extents.z;
		} else {
			const float radius = (float)(d.type == PBD_SHAPE_SPHERE ? d.shape.sphere.radius : d.shape.capsule.radius);
			c->ext[0] = c->ext[1] = c->ext[2] = radius;
			if (d.type == PBD_SHAPE_CAPSULE) c->shift = (float)d.shape.capsule.half_height;
		}
	}
}

/* The particles of the library's contacts after the last step, each once however many colliders
 * it touches (the contacts come by collider, then particle). */
static uint32_t read_contacts(pbd_renderer* r, const pbd_world* w, uint32_t* out) {
	const uint32_t n = pbd_world_get_contacts(w, NULL, 0);
	if (n > r->contact_cap) {
		pbd_contact* grown = realloc(r->contacts, (size_t)n * sizeof *grown);
		if (!grown) return 0; /* the overlay goes empty; the rest still draws */
		r->contacts = grown;
		r->contact_cap = n;
	}
	const uint32_t got = n ? pbd_world_get_contacts(w, r->contacts, n) : 0;
	uint32_t count = 0;
	for (uint32_t k = 0; k < got && k < n; ++k) {
		const uint32_t i = r->contacts[k].particle;
		if (i >= r->np || r->marked[i]) continue;
		r->marked[i] = 1;
		out[count++] = i;
	}
	for (uint32_t k = 0; k < count; ++k) r->marked[out[k]] = 0;
	return count;
}

/* Room for `n` vertices of marks; false (and nothing drawn) when out of memory. */
static bool reserve_marks(pbd_renderer* r, uint64_t n) {
	if (n <= r->mark_cap) return true;
	if (n > UINT32_MAX / 2) return false;
	const uint32_t cap = (uint32_t)n + (uint32_t)n / 2;
	float* grown = realloc(r->marks, (size_t)cap * 3 * sizeof *grown);
	if (!grown) return false;
	r->marks = grown;
	r->mark_cap = cap;
	return true;
}

static void put_vertex(float* at, pbd_vec3 p) {
	at[0] = (float)p.x;
	at[1] = (float)p.y;
	at[2] = (float)p.z;
}

/* A joint's frame on one side in the world: the body's frame composed with it, or the frame
 * itself on the world's side (the null id, or a body the world no longer has a slot for). */
static pbd_pose joint_frame(const pbd_pose* poses, uint32_t slots, pbd_body_id body, pbd_pose frame) {
	if (body.index1 == 0 || body.index1 > slots || !poses) return frame;
	const pbd_pose b = poses[body.index1 - 1];
	return (pbd_pose){pbd_pose_apply(b, frame.position), pbd_quat_mul(b.rotation, frame.rotation)};
}

/* The joints that hold (an anchor each; a short axis through it for hinges, sliders and ball
 * joints, a line to the other anchor for distance joints) and the bodies' contacts (a point and
 * a short normal), into r->marks and its GL buffer. */
static void read_marks(pbd_renderer* r, const pbd_world* w) {
	r->joint_points = r->joint_line_ends = r->body_contact_points = r->body_contact_line_ends = 0;
	const uint32_t nj = pbd_world_joint_count(w);
	const uint32_t nc = pbd_world_get_body_contacts(w, NULL, 0);
	if (nc > r->body_contact_cap) {
		pbd_body_contact* grown = realloc(r->body_contacts, (size_t)nc * sizeof *grown);
		if (grown) {
			r->body_contacts = grown;
			r->body_contact_cap = nc;
		}
	}
	const uint32_t got = nc && nc <= r->body_contact_cap ? pbd_world_get_body_contacts(w, r->body_contacts, nc) : 0;
	const uint32_t contacts = got < nc ? got : nc;
	/* At most two points and two line ends a joint, a point and two ends a contact. */
	if ((nj == 0 && contacts == 0) || !reserve_marks(r, 4 * (uint64_t)nj + 3 * (uint64_t)contacts)) return;

	uint32_t slots = 0;
	const pbd_pose* poses = pbd_world_body_poses(w, &slots);
	const pbd_real len = (pbd_real)r->auto_mark_length;
	/* Points and line ends go to two runs, copied together below. */
	uint32_t np = 0, nl = 0;
	float* lines = r->marks + 3 * (size_t)(2 * (uint64_t)nj + (uint64_t)contacts);
	for (uint32_t j = 0; j < nj; ++j) {
		pbd_joint_def d;
		pbd_joint_state st;
		if (pbd_world_get_joint(w, j, &d) != PBD_OK || pbd_world_get_joint_state(w, j, &st) != PBD_OK || st.broken)
			continue;
		const pbd_pose a = joint_frame(poses, slots, d.body_a, d.frame_a);
		put_vertex(r->marks + 3 * (size_t)np++, a.position);
		if (d.type == PBD_JOINT_DISTANCE) {
			/* A rope or a rod: both ends, and the line between them. */
			const pbd_pose b = joint_frame(poses, slots, d.body_b, d.frame_b);
			put_vertex(r->marks + 3 * (size_t)np++, b.position);
			put_vertex(lines + 3 * (size_t)nl++, a.position);
			put_vertex(lines + 3 * (size_t)nl++, b.position);
		} else if (d.type != PBD_JOINT_FIXED) {
			/* The axis a hinge turns about, a slider slides along, a ball joint twists about. */
			const pbd_vec3 axis = pbd_v3_scale(pbd_quat_rotate(a.rotation, pbd_v3(1, 0, 0)), len);
			put_vertex(lines + 3 * (size_t)nl++, pbd_v3_sub(a.position, axis));
			put_vertex(lines + 3 * (size_t)nl++, pbd_v3_add(a.position, axis));
		}
	}
	r->joint_points = np;
	r->joint_line_ends = nl;
	float* contact_lines = lines + 3 * (size_t)nl;
	for (uint32_t k = 0; k < contacts; ++k) {
		const pbd_body_contact* c = &r->body_contacts[k];
		put_vertex(r->marks + 3 * (size_t)np++, c->point);
		put_vertex(contact_lines + 6 * (size_t)k, c->point);
		put_vertex(contact_lines + 6 * (size_t)k + 3, pbd_v3_add(c->point, pbd_v3_scale(c->normal, len)));
	}
	r->body_contact_points = contacts;
	r->body_contact_line_ends = 2 * contacts;
	/* The line ends right after the points, where the draw calls look for them. */
	const uint32_t points = np, ends = nl + 2 * contacts;
	memmove(r->marks + 3 * (size_t)points, lines, 3 * (size_t)ends * sizeof *r->marks);
	glBindBuffer(GL_ARRAY_BUFFER, r->vbo_marks);
	glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)((size_t)(points + ends) * 3 * sizeof(float)), r->marks, GL_DYNAMIC_DRAW);
	glBindBuffer(GL_ARRAY_BUFFER, 0);
}

bool pbd_renderer_update(pbd_renderer* r, const pbd_render_scene* sc) {
	if (!r) return false;
	if (!sc || !sc->world) return set_error(r, "pbd_renderer_update: no world");
	if (sc->collider_count && !sc->colliders) return set_error(r, "pbd_renderer_update: collider ids missing");
	if (sc->line_count && !sc->lines) return set_error(r, "pbd_renderer_update: line indices missing");
	if (topology_changed(r, sc) && !sync_topology(r, sc)) return false;
	const pbd_world* w = sc->world;
	read_positions(r, w);
	render_smooth_normals(r->pos, r->np, pbd_world_triangles(w), r->nt, r->nrm);
	glBindBuffer(GL_ARRAY_BUFFER, r->vbo_pos);
	glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)((size_t)r->np * 3 * sizeof(float)), r->pos);
	glBindBuffer(GL_ARRAY_BUFFER, r->vbo_nrm);
	glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)((size_t)r->np * 3 * sizeof(float)), r->nrm);
	glBindBuffer(GL_ARRAY_BUFFER, 0);

	glBindVertexArray(r->vao_world);
	const pbd_real* iw = pbd_world_inv_masses(w);
	uint32_t np = 0;
	for (uint32_t i = 0; i < r->np; ++i)
		if (iw[i] == 0) r->scratch[np++] = i;
	upload_indices(r->ebo_pinned, r->scratch, np);
	r->pinned_count = np;

	read_colliders(r, sc);
	r->contact_count = read_contacts(r, w, r->scratch);
	upload_indices(r->ebo_contacts, r->scratch, r->contact_count);
	glBindVertexArray(0);
	read_marks(r, w);

	/* What is drawn, for the depth range: particles, the balls around bounded colliders (the
	 * world boxes of meshes) and plane quads. */
	render_bounds_clear(&r->bounds);
	for (uint32_t i = 0; i < r->np; ++i) render_bounds_add(&r->bounds, r->pos + 3 * (size_t)i);
	for (uint32_t k = 0; k < r->collider_count; ++k) {
		const drawn_collider* c = &r->colliders[k];
		if (c->type != PBD_SHAPE_PLANE) {
			const float lo[3] = {c->center[0] - c->ball, c->center[1] - c->ball, c->center[2] - c->ball};
			const float hi[3] = {c->center[0] + c->ball, c->center[1] + c->ball, c->center[2] + c->ball};
			render_bounds_add(&r->bounds, lo);
			render_bounds_add(&r->bounds, hi);
		} else {
			for (int corner = 0; corner < 4; ++corner) {
				const float su = (corner & 1) ? 1.0f : -1.0f, sv = (corner & 2) ? 1.0f : -1.0f;
				float p[3];
				for (int k2 = 0; k2 < 3; ++k2)
					p[k2] = c->quad.center[k2] + c->quad.half * (su * c->quad.u[k2] + sv * c->quad.v[k2]);
				render_bounds_add(&r->bounds, p);
			}
		}
	}
	const uint32_t marks = r->joint_points + r->joint_line_ends + r->body_contact_points + r->body_contact_line_ends;
	for (uint32_t i = 0; i < marks; ++i) render_bounds_add(&r->bounds, r->marks + 3 * (size_t)i);
	const GLenum e = glGetError();
	if (e != GL_NO_ERROR) return set_error(r, "OpenGL error 0x%04x while reading the world", (unsigned)e);
	return true;
}

/* ---- draw --------------------------------------------------------------------------------- */

static void uniform_rgb(GLint loc, pbd_render_rgb c) { glUniform3f(loc, c.r, c.g, c.b); }

/* Near and far planes around what is drawn: tight planes keep the depth buffer precise. */
static void depth_range(const pbd_renderer* r, const pbd_render_camera* cam, float* z_near, float* z_far) {
	float f[3] = {cam->target[0] - cam->eye[0], cam->target[1] - cam->eye[1], cam->target[2] - cam->eye[2]};
	const float len = sqrtf(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
	for (int k = 0; k < 3; ++k) f[k] /= len;
	float lo = INFINITY, hi = -INFINITY;
	if (!render_bounds_is_empty(&r->bounds)) {
		for (int corner = 0; corner < 8; ++corner) {
			const float c[3] = {(corner & 1) ? r->bounds.max[0] : r->bounds.min[0],
			                    (corner & 2) ? r->bounds.max[1] : r->bounds.min[1],
			                    (corner & 4) ? r->bounds.max[2] : r->bounds.min[2]};
			const float z = (c[0] - cam->eye[0]) * f[0] + (c[1] - cam->eye[1]) * f[1] + (c[2] - cam->eye[2]) * f[2];
			if (z < lo) lo = z;
			if (z > hi) hi = z;
		}
	}
	if (!(hi > 0)) hi = len * 2.0f + 1.0f;
	*z_far = hi * 1.05f;
	*z_near = lo > 0 ? lo * 0.95f : 0.0f;
	if (*z_near < *z_far * 1e-4f) *z_near = *z_far * 1e-4f;
}

static void draw_points(const pbd_renderer* r, GLuint ebo, GLsizei count, float radius, pbd_render_rgb color) {
	if (count <= 0) return;
	glUniform1f(r->point_u.radius, radius);
	uniform_rgb(r->point_u.color, color);
	glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, ebo);
	glDrawElements(GL_POINTS, count, GL_UNSIGNED_INT, NULL);
}

/* One collider with the surface program bound (its view, projection and alpha set). A bounded
 * shape is its unit mesh under a model matrix of its pose and sizes, drawn a little inside (see
 * collider_inset); a plane is its checkered quad, blended at its fading rim. */
static void draw_collider(const pbd_renderer* r, const drawn_collider* c, const pbd_render_style* s) {
	const float inset = s->collider_inset > 0 && s->collider_inset < 1 ? s->collider_inset : 0.0f;
	const pbd_render_rgb color = c->body ? s->body : s->collider;
	if (c->type == PBD_SHAPE_PLANE) {
		const bool blended = glIsEnabled(GL_BLEND);
		if (!blended) {
			glEnable(GL_BLEND);
			glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
		}
		/* Cloth lying on a plane sits at exactly its depth: push the plane back a little. */
		glEnable(GL_POLYGON_OFFSET_FILL);
		glPolygonOffset(1.0f, 2.0f);
		static const float identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
		glUniformMatrix4fv(r->surf_u.model, 1, GL_FALSE, identity);
		const render_plane_quad* q = &c->quad;
		float verts[24];
		for (int corner = 0; corner < 4; ++corner) {
			/* Strip order: (-,-) (+,-) (-,+) (+,+). */
			const float su = (corner & 1) ? 1.0f : -1.0f, sv = (corner & 2) ? 1.0f : -1.0f;
			for (int k2 = 0; k2 < 3; ++k2) {
				verts[corner * 6 + k2] = q->center[k2] + q->half * (su * q->u[k2] + sv * q->v[k2]);
				verts[corner * 6 + 3 + k2] = q->n[k2];
			}
		}
		glBindVertexArray(r->vao_plane);
		glBindBuffer(GL_ARRAY_BUFFER, r->plane_vbo);
		glBufferSubData(GL_ARRAY_BUFFER, 0, sizeof verts, verts);
		glUniform1i(r->surf_u.mode, 2);
		uniform_rgb(r->surf_u.front, color);
		uniform_rgb(r->surf_u.back, color);
		glUniform3fv(r->surf_u.plane_origin, 1, c->plane_origin);
		glUniform3fv(r->surf_u.plane_u, 1, q->u);
		glUniform3fv(r->surf_u.plane_v, 1, q->v);
		glUniform3fv(r->surf_u.plane_center, 1, q->center);
		glUniform1f(r->surf_u.plane_tile, q->tile);
		glUniform1f(r->surf_u.plane_half, q->half);
		glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
		glDisable(GL_POLYGON_OFFSET_FILL);
		if (!blended) glDisable(GL_BLEND);
		return;
	}
	if (is_mesh_shape(c->type)) {
		/* The surface itself, pushed back a little in depth (as a plane is) rather than drawn
		 * inside: cloth resting on it at its margin stays in front. */
		float model[16];
		for (int col = 0; col < 3; ++col) {
			for (int row = 0; row < 3; ++row) model[4 * col + row] = c->rot[3 * col + row];
			model[4 * col + 3] = 0.0f;
			model[12 + col] = c->origin[col];
		}
		model[15] = 1.0f;
		const collider_mesh* m = &r->meshes[c->mesh];
		glUniformMatrix4fv(r->surf_u.model, 1, GL_FALSE, model);
		glUniform1i(r->surf_u.mode, 1);
		uniform_rgb(r->surf_u.front, color);
		uniform_rgb(r->surf_u.back, color);
		glVertexAttrib3f(1, 0.0f, 0.0f, 0.0f); /* no normals: the face normal (flat shading) */
		glVertexAttrib1f(2, 0.0f);
		glEnable(GL_POLYGON_OFFSET_FILL);
		glPolygonOffset(1.0f, 2.0f);
		glBindVertexArray(m->vao);
		glDrawElements(GL_TRIANGLES, m->index_count, GL_UNSIGNED_INT, NULL);
		glDisable(GL_POLYGON_OFFSET_FILL);
		return;
	}
	float ext[3] = {c->ext[0], c->ext[1], c->ext[2]};
	if (c->type == PBD_SHAPE_BOX) {
		const float cut = inset * fminf(ext[0], fminf(ext[1], ext[2]));
		for (int k = 0; k < 3; ++k) ext[k] -= cut;
	} else {
		for (int k = 0; k < 3; ++k) ext[k] *= 1.0f - inset;
	}
	float model[16];
	for (int col = 0; col < 3; ++col) {
		for (int row = 0; row < 3; ++row) model[4 * col + row] = c->rot[3 * col + row] * ext[col];
		model[4 * col + 3] = 0.0f;
		model[12 + col] = c->center[col];
	}
	model[15] = 1.0f;
	glUniformMatrix4fv(r->surf_u.model, 1, GL_FALSE, model);
	glUniform1i(r->surf_u.mode, 1);
	uniform_rgb(r->surf_u.front, color);
	uniform_rgb(r->surf_u.back, color);
	if (c->type == PBD_SHAPE_CAPSULE) {
		/* The shift is in the mesh's units, which the model scales by the (inset) radius. */
		glUniform1f(r->surf_u.shift, ext[0] > 0 ? c->shift / ext[0] : 0.0f);
		glBindVertexArray(r->vao_capsule);
		glDrawElements(GL_TRIANGLES, r->capsule_index_count, GL_UNSIGNED_INT, NULL);
		glUniform1f(r->surf_u.shift, 0.0f);
	} else if (c->type == PBD_SHAPE_BOX) {
		glBindVertexArray(r->vao_box);
		glDrawElements(GL_TRIANGLES, r->box_index_count, GL_UNSIGNED_INT, NULL);
	} else {
		glBindVertexArray(r->vao_sphere);
		glDrawElements(GL_TRIANGLES, r->sphere_index_count, GL_UNSIGNED_INT, NULL);
	}
}

bool pbd_renderer_draw(pbd_renderer* r, const pbd_render_camera* cam, const pbd_render_style* style, int width,
                       int height) {
	if (!r) return false;
	if (!pbd_render_camera_is_valid(cam)) return set_error(r, "pbd_renderer_draw: invalid camera");
	if (!style) return set_error(r, "pbd_renderer_draw: no style");
	if (width < 1 || height < 1) return set_error(r, "pbd_renderer_draw: bad size %dx%d", width, height);
	const pbd_render_style s = *style;
	const float viewport[2] = {(float)width, (float)height};

	glViewport(0, 0, width, height);
	glDisable(GL_CULL_FACE);
	glDisable(GL_BLEND);
	glEnable(GL_PROGRAM_POINT_SIZE);
	glDepthMask(GL_TRUE);
	glClearColor(s.background_bottom.r, s.background_bottom.g, s.background_bottom.b, 1.0f);
	glClearDepth(1.0);
	glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);

	glDisable(GL_DEPTH_TEST);
	glDepthMask(GL_FALSE);
	glUseProgram(r->bg_prog);
	uniform_rgb(r->bg_u.top, s.background_top);
	uniform_rgb(r->bg_u.bottom, s.background_bottom);
	glUniform1f(r->bg_u.height, viewport[1]);
	glBindVertexArray(r->vao_empty);
	glDrawArrays(GL_TRIANGLES, 0, 3);
	glDepthMask(GL_TRUE);
	glEnable(GL_DEPTH_TEST);
	glDepthFunc(GL_LEQUAL);

	if (!r->synced) {
		glBindVertexArray(0);
		return true; /* nothing read yet: the background alone */
	}

	float z_near, z_far, view[16], proj[16];
	depth_range(r, cam, &z_near, &z_far);
	pbd_render_camera_matrices(cam, viewport[0] / viewport[1], z_near, z_far, view, proj);
	static const float identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

	/* Colliders, then the cloth. */
	glUseProgram(r->surf_prog);
	glUniformMatrix4fv(r->surf_u.view, 1, GL_FALSE, view);
	glUniformMatrix4fv(r->surf_u.proj, 1, GL_FALSE, proj);
	glUniform1f(r->surf_u.shift, 0.0f);
	glUniform1f(r->surf_u.alpha, 1.0f);
	if (s.show_colliders) {
		/* Solids first: a plane's rim fades out, and what it hides behind the rim must be drawn. */
		for (int planes = 0; planes < 2; ++planes)
			for (uint32_t k = 0; k < r->collider_count; ++k) {
				const drawn_collider* c = &r->colliders[k];
				if (!c->trigger && (c->type == PBD_SHAPE_PLANE) == (planes == 1)) draw_collider(r, c, &s);
			}
	}
	glUniformMatrix4fv(r->surf_u.model, 1, GL_FALSE, identity);
	glBindVertexArray(r->vao_world);
	if (r->nt > 0) {
		glUniform1i(r->surf_u.mode, 0);
		uniform_rgb(r->surf_u.front, s.cloth_front);
		uniform_rgb(r->surf_u.back, s.cloth_back);
		glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, r->ebo_tris);
		glDrawElements(GL_TRIANGLES, (GLsizei)(3 * r->nt), GL_UNSIGNED_INT, NULL);
	}
	/* Triggers push nothing, so what passes through them must show: translucent, over everything
	 * solid, writing no depth. */
	if (s.show_colliders) {
		glEnable(GL_BLEND);
		glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
		glDepthMask(GL_FALSE);
		glUniform1f(r->surf_u.alpha, 0.35f);
		for (uint32_t k = 0; k < r->collider_count; ++k)
			if (r->colliders[k].trigger) draw_collider(r, &r->colliders[k], &s);
		glUniform1f(r->surf_u.alpha, 1.0f);
		glDepthMask(GL_TRUE);
		glDisable(GL_BLEND);
	}

	/* Bodies without triangles: tubes and balls. */
	const float line_radius = s.line_radius > 0 ? s.line_radius : r->auto_line_radius;
	const float ball_radius = s.ball_radius > 0 ? s.ball_radius : r->auto_ball_radius;
	const float marker = s.marker_radius > 0 ? s.marker_radius : r->auto_marker_radius;
	const float px_scale = viewport[1] / 720.0f;
	glUseProgram(r->line_prog);
	glUniformMatrix4fv(r->line_u.view, 1, GL_FALSE, view);
	glUniformMatrix4fv(r->line_u.proj, 1, GL_FALSE, proj);
	glUniform2fv(r->line_u.viewport, 1, viewport);
	glUniform1f(r->line_u.near_z, z_near);
	glUniform1i(r->line_u.rest, 0);
	glUniform1f(r->line_u.strain_red, s.strain_red > 0 ? s.strain_red : 0.1f);
	if (r->line_count > 0) {
		glUniform1f(r->line_u.radius_world, line_radius);
		glUniform1f(r->line_u.depth_bias, 0.0f);
		glUniform1i(r->line_u.strain, 0);
		glUniform1i(r->line_u.shaded, 1);
		uniform_rgb(r->line_u.color, s.cloth_front);
		glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, r->ebo_lines);
		glDrawElements(GL_LINES, (GLsizei)(2 * r->line_count), GL_UNSIGNED_INT, NULL);
	}
	if (s.show_constraints && r->nd > 0) {
		/* Over the surfaces they lie on: a small depth bias wins the tie. */
		glUniform1f(r->line_u.radius_world, 0.0f);
		glUniform1f(r->line_u.radius_px, fmaxf(0.6f, 1.1f * px_scale));
		glUniform1f(r->line_u.depth_bias, 2e-4f);
		glUniform1i(r->line_u.strain, 1);
		glUniform1i(r->line_u.shaded, 0);
		glActiveTexture(GL_TEXTURE0);
		glBindTexture(GL_TEXTURE_BUFFER, r->rest_texture);
		glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, r->ebo_edges);
		glDrawElements(GL_LINES, (GLsizei)(2 * r->nd), GL_UNSIGNED_INT, NULL);
		glBindTexture(GL_TEXTURE_BUFFER, 0);
	}

	glUseProgram(r->point_prog);
	glUniformMatrix4fv(r->point_u.view, 1, GL_FALSE, view);
	glUniformMatrix4fv(r->point_u.proj, 1, GL_FALSE, proj);
	glUniform2fv(r->point_u.viewport, 1, viewport);
	glUniform1f(r->point_u.max_size, r->max_point_size);
	draw_points(r, r->ebo_body_points, (GLsizei)r->body_point_count, ball_radius, s.cloth_front);
	if (s.show_particles && r->np > 0) {
		glUniform1f(r->point_u.radius, marker);
		uniform_rgb(r->point_u.color, s.particle);
		glDrawArrays(GL_POINTS, 0, (GLsizei)r->np);
	}
	if (s.show_contacts) draw_points(r, r->ebo_contacts, (GLsizei)r->contact_count, 1.3f * marker, s.contact);
	if (s.show_pinned) {
		/* A pinned ball of a rope is already a ball: its marker must be bigger to show. */
		const float pin = r->body_point_count > 0 ? fmaxf(1.6f * marker, 1.25f * ball_radius) : 1.6f * marker;
		draw_points(r, r->ebo_pinned, (GLsizei)r->pinned_count, pin, s.pinned);
	}

	/* Joints and the bodies' contacts over everything: an anchor or a contact point lies inside
	 * the shapes it joins or between them, where the depth test would hide it. */
	const bool joints = s.show_joints && r->joint_points > 0;
	const bool body_contacts = s.show_contacts && r->body_contact_points > 0;
	if (joints || body_contacts) {
		glDisable(GL_DEPTH_TEST);
		glBindVertexArray(r->vao_marks);
		const GLint lines_at = (GLint)(r->joint_points + r->body_contact_points);
		glUseProgram(r->line_prog);
		glUniform1f(r->line_u.radius_world, 0.0f);
		glUniform1f(r->line_u.depth_bias, 0.0f);
		glUniform1i(r->line_u.strain, 0);
		glUniform1i(r->line_u.shaded, 0);
		if (joints && r->joint_line_ends > 0) {
			glUniform1f(r->line_u.radius_px, fmaxf(1.0f, 1.6f * px_scale));
			uniform_rgb(r->line_u.color, s.joint);
			glDrawArrays(GL_LINES, lines_at, (GLsizei)r->joint_line_ends);
		}
		if (body_contacts) {
			glUniform1f(r->line_u.radius_px, fmaxf(0.6f, 1.1f * px_scale));
			uniform_rgb(r->line_u.color, s.contact);
			glDrawArrays(GL_LINES, lines_at + (GLint)r->joint_line_ends, (GLsizei)r->body_contact_line_ends);
		}
		glUseProgram(r->point_prog);
		if (joints) {
			glUniform1f(r->point_u.radius, 1.6f * marker);
			uniform_rgb(r->point_u.color, s.joint);
			glDrawArrays(GL_POINTS, 0, (GLsizei)r->joint_points);
		}
		if (body_contacts) {
			/* Smaller than a particle's contact marker: a body's contacts come in fours and more
			 * on one face, each with its normal to tell it by. */
			glUniform1f(r->point_u.radius, 0.8f * marker);
			uniform_rgb(r->point_u.color, s.contact);
			glDrawArrays(GL_POINTS, (GLint)r->joint_points, (GLsizei)r->body_contact_points);
		}
		glEnable(GL_DEPTH_TEST);
	}
	glBindVertexArray(0);
	glUseProgram(0);
	const GLenum e = glGetError();
	if (e != GL_NO_ERROR) return set_error(r, "OpenGL error 0x%04x while drawing", (unsigned)e);
	return true;
}
