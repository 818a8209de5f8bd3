/* Writers for the files a run produces. */
#define _POSIX_C_SOURCE 200809L
#include "output.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output_usd.h"
#include "output_vtk.h"
#include "pbd/math.h"

#define REAL_FMT     OUT_REAL_FMT
#define REAL_WIDTH   OUT_REAL_WIDTH
#define DOUBLE_WIDTH OUT_DOUBLE_WIDTH

static bool fail_errno(pbd_scene_error* err, const char* path, const char* what) {
	pbd_scene_error_set(err, "%s: %s: %s", path, what, strerror(errno));
	return false;
}

bool out_make_dir(const char* dir, pbd_scene_error* err) {
	char buf[4096];
	size_t n = strlen(dir);
	if (n == 0 || n >= sizeof buf) {
		pbd_scene_error_set(err, "%s: bad output folder name", dir);
		return false;
	}
	memcpy(buf, dir, n + 1);
	/* Create each prefix in turn; one that exists already is fine if it is a folder. */
	for (size_t i = 1; i <= n; ++i) {
		if (buf[i] != '/' && buf[i] != '\0') continue;
		char saved = buf[i];
		buf[i] = '\0';
		if (mkdir(buf, 0777) != 0 && errno != EEXIST) return fail_errno(err, buf, "cannot create folder");
		buf[i] = saved;
	}
	struct stat st;
	if (stat(dir, &st) != 0) return fail_errno(err, dir, "cannot create folder");
	if (!S_ISDIR(st.st_mode)) {
		pbd_scene_error_set(err, "%s: exists and is not a folder", dir);
		return false;
	}
	return true;
}

/* frame_<digits>.obj, .ply or .vtu, or bodies_<digits>.vtp or joints_<digits>.vtp, exactly: the
 * only names a run may delete; *number receives the frame (saturated). */
static bool is_frame_file(const char* name, long* number) {
	const bool vtp = strncmp(name, "bodies_", 7) == 0 || strncmp(name, "joints_", 7) == 0;
	if (!vtp && strncmp(name, "frame_", 6) != 0) return false;
	const char* p = name + (vtp ? 7 : 6);
	const char* digits = p;
	long n = 0;
	while (*p >= '0' && *p <= '9') {
		n = n > 100000000L ? n : n * 10 + (*p - '0');
		++p;
	}
	if (p == digits) return false;
	*number = n;
	if (vtp) return strcmp(p, ".vtp") == 0;
	return strcmp(p, ".obj") == 0 || strcmp(p, ".ply") == 0 || strcmp(p, ".vtu") == 0;
}

bool out_clear_frames(const char* dir, long keep_through, unsigned* removed, pbd_scene_error* err) {
	*removed = 0;
	DIR* d = opendir(dir);
	if (!d) return fail_errno(err, dir, "cannot list folder");
	bool ok = true;
	struct dirent* e;
	while ((e = readdir(d)) != NULL) {
		long number;
		if (!is_frame_file(e->d_name, &number) || number <= keep_through) continue;
		char path[4400];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		struct stat st;
		/* Only regular files: a folder or link that happens to match is left alone. */
		if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
		if (unlink(path) != 0) {
			ok = fail_errno(err, path, "cannot remove old frame");
			break;
		}
		++*removed;
	}
	closedir(d);
	return ok;
}

void out_frame_path(char* out, size_t out_size, const char* dir, int frame, out_format format) {
	const char* ext = format == OUT_FORMAT_PLY ? "ply" : format == OUT_FORMAT_VTK ? "vtu" : "obj";
	snprintf(out, out_size, "%s/frame_%05d.%s", dir, frame, ext);
}

const char* out_format_name(out_format format) {
	switch (format) {
	case OUT_FORMAT_OBJ:
		return "OBJ";
	case OUT_FORMAT_PLY:
		return "PLY";
	case OUT_FORMAT_USD:
		return "USD";
	case OUT_FORMAT_VTK:
		return "VTK";
	case OUT_FORMAT_NONE:
		break;
	}
	return "none";
}

static FILE* open_out(const char* path, pbd_scene_error* err) {
	FILE* fp = fopen(path, "wb");
	if (!fp) fail_errno(err, path, "cannot write");
	return fp;
}

/* Closes and reports a write that failed on the way (full disk) or at the flush. */
static bool close_out(FILE* fp, const char* path, pbd_scene_error* err) {
	bool bad = ferror(fp) != 0;
	if (fclose(fp) != 0) bad = true;
	if (bad) return fail_errno(err, path, "write failed");
	return true;
}

/* ---- the shapes on rigid bodies --------------------------------------------------------- */

static bool mesh_reserve(out_mesh* m, uint64_t nv, uint64_t nt) {
	if (m->nv + nv > UINT32_MAX / 4 || m->nt + nt > UINT32_MAX / 4) return false;
	if (m->nv + nv > m->cap_v) {
		uint32_t cap = m->cap_v ? m->cap_v : 64;
		while (cap < m->nv + nv) cap *= 2;
		pbd_vec3* v = realloc(m->v, cap * sizeof *v);
		if (!v) return false;
		m->v = v;
		m->cap_v = cap;
	}
	if (m->nt + nt > m->cap_t) {
		uint32_t cap = m->cap_t ? m->cap_t : 64;
		while (cap < m->nt + nt) cap *= 2;
		uint32_t* t = realloc(m->tri, 3 * (size_t)cap * sizeof *t);
		if (!t) return false;
		m->tri = t;
		m->cap_t = cap;
	}
	return true;
}

void out_mesh_free(out_mesh* m) {
	free(m->v);
	free(m->tri);
	memset(m, 0, sizeof *m);
}

static void add_tri(out_mesh* m, uint32_t a, uint32_t b, uint32_t c) {
	uint32_t* t = m->tri + 3 * (size_t)m->nt++;
	t[0] = a;
	t[1] = b;
	t[2] = c;
}

/* A sphere (half_height 0) or a capsule along y: a pole, rings of OUT_ROUND_SEGMENTS points, the
 * other pole. The capsule's equator is two rings, one on each half, joined by the cylinder. */
static void add_round(out_mesh* m, pbd_vec3 c, pbd_real r, pbd_real half_height) {
	const uint32_t seg = OUT_ROUND_SEGMENTS, half = OUT_ROUND_RINGS / 2;
	const bool capsule = half_height > 0;
	const uint32_t rings = OUT_ROUND_RINGS - 1 + (capsule ? 1 : 0);
	const uint32_t base = m->nv;
	m->v[m->nv++] = pbd_v3(c.x, c.y + r + half_height, c.z);
	for (uint32_t k = 1; k <= OUT_ROUND_RINGS - 1; ++k) {
		const double th = 3.14159265358979323846 * (double)k / OUT_ROUND_RINGS;
		const int copies = capsule && k == half ? 2 : 1;
		for (int copy = 0; copy < copies; ++copy) {
			const double shift = k < half || (k == half && copy == 0) ? (double)half_height : -(double)half_height;
			const double y = (double)r * cos(th) + shift, rho = (double)r * sin(th);
			for (uint32_t j = 0; j < seg; ++j) {
				const double ph = 2 * 3.14159265358979323846 * (double)j / seg;
				m->v[m->nv++] =
				    pbd_v3(c.x + (pbd_real)(rho * cos(ph)), c.y + (pbd_real)y, c.z + (pbd_real)(rho * sin(ph)));
			}
		}
	}
	const uint32_t bottom = m->nv;
	m->v[m->nv++] = pbd_v3(c.x, c.y - r - half_height, c.z);
	for (uint32_t j = 0; j < seg; ++j) {
		const uint32_t j1 = (j + 1) % seg;
		add_tri(m, base, base + 1 + j1, base + 1 + j);
		for (uint32_t k = 0; k + 1 < rings; ++k) {
			const uint32_t u = base + 1 + k * seg, l = u + seg;
			add_tri(m, u + j, l + j1, l + j);
			add_tri(m, u + j, u + j1, l + j1);
		}
		const uint32_t last = base + 1 + (rings - 1) * seg;
		add_tri(m, bottom, last + j, last + j1);
	}
}

static void add_box(out_mesh* m, pbd_vec3 h) {
	/* Corner i has x, y, z at + for bits 1, 2, 4; two outward triangles per face. */
	static const uint8_t faces[12][3] = {{0, 4, 6}, {0, 6, 2}, {1, 3, 7}, {1, 7, 5}, {0, 1, 5}, {0, 5, 4},
	                                     {2, 6, 7}, {2, 7, 3}, {0, 2, 3}, {0, 3, 1}, {4, 5, 7}, {4, 7, 6}};
	const uint32_t base = m->nv;
	for (int i = 0; i < 8; ++i) m->v[m->nv++] = pbd_v3(i & 1 ? h.x : -h.x, i & 2 ? h.y : -h.y, i & 4 ? h.z : -h.z);
	for (int f = 0; f < 12; ++f) add_tri(m, base + faces[f][0], base + faces[f][1], base + faces[f][2]);
}

/* The vertices and triangles of one shape, as add_shape makes them. */
static void shape_size(const pbd_world* w, pbd_collider_id c, const pbd_collider_def* d, uint32_t* nv, uint32_t* nt) {
	const uint32_t seg = OUT_ROUND_SEGMENTS, rings = OUT_ROUND_RINGS;
	*nv = *nt = 0;
	switch (d->type) {
	case PBD_SHAPE_SPHERE:
	case PBD_SHAPE_CAPSULE: {
		const uint32_t inner = rings - 1 + (d->type == PBD_SHAPE_CAPSULE && d->shape.capsule.half_height > 0 ? 1 : 0);
		*nv = 2 + inner * seg;
		*nt = 2 * seg * inner;
		break;
	}
	case PBD_SHAPE_BOX:
		*nv = 8;
		*nt = 12;
		break;
	case PBD_SHAPE_CONVEX:
	case PBD_SHAPE_MESH:
	case PBD_SHAPE_HEIGHTFIELD:
		if (pbd_collider_get_triangles(w, c, NULL, 0, NULL, 0, nv, nt) != PBD_OK) *nv = *nt = 0;
		break;
	default:
		break;
	}
}

static bool on_body(const pbd_world* w, pbd_collider_id c, pbd_body_id id, pbd_collider_def* d) {
	return pbd_collider_get_def(w, c, d) == PBD_OK && d->body.index1 == id.index1 &&
	       d->body.generation == id.generation;
}

/* One shape in its local frame, then placed by `pose`. */
static bool add_shape(out_mesh* m, const pbd_world* w, pbd_collider_id c, const pbd_collider_def* d, pbd_pose pose) {
	uint32_t nv, nt;
	shape_size(w, c, d, &nv, &nt);
	if (nv == 0 || nt == 0) return true;
	if (!mesh_reserve(m, nv, nt)) return false;
	const uint32_t base = m->nv;
	if (d->type == PBD_SHAPE_SPHERE) {
		add_round(m, d->shape.sphere.center, d->shape.sphere.radius, 0);
	} else if (d->type == PBD_SHAPE_CAPSULE) {
		add_round(m, pbd_v3(0, 0, 0), d->shape.capsule.radius, d->shape.capsule.half_height);
	} else if (d->type == PBD_SHAPE_BOX) {
		add_box(m, d->shape.box.half_extents);
	} else {
		uint32_t gv, gt;
		if (pbd_collider_get_triangles(w, c, m->v + base, nv, m->tri + 3 * (size_t)m->nt, nt, &gv, &gt) != PBD_OK ||
		    gv != nv || gt != nt)
			return true; /* changed under us: left out rather than half drawn */
		for (uint32_t k = 0; k < 3 * nt; ++k) m->tri[3 * (size_t)m->nt + k] += base;
		m->nv += nv;
		m->nt += nt;
	}
	for (uint32_t i = base; i < m->nv; ++i) m->v[i] = pbd_pose_apply(pose, m->v[i]);
	return true;
}

bool out_body_mesh(const pbd_scene* s, pbd_body_id id, bool world, out_mesh* m) {
	const pbd_world* w = s->world;
	for (uint32_t k = 0; k < s->collider_count; ++k) {
		pbd_collider_def d;
		if (!on_body(w, s->colliders[k], id, &d)) continue;
		/* get_def gives the pose in the body's frame; get_pose where that is in the world now. */
		pbd_pose pose = d.pose;
		if (world && pbd_collider_get_pose(w, s->colliders[k], &pose) != PBD_OK) continue;
		if (!add_shape(m, w, s->colliders[k], &d, pose)) return false;
	}
	return true;
}

void out_body_name(const pbd_scene* s, pbd_body_id id, char* out, size_t out_size) {
	for (uint32_t k = 0; k < s->body_count; ++k)
		if (s->bodies[k].id.index1 == id.index1 && s->bodies[k].id.generation == id.generation &&
		    s->bodies[k].name[0]) {
			snprintf(out, out_size, "%s", s->bodies[k].name);
			return;
		}
	snprintf(out, out_size, "body_%u", id.index1);
}

void out_bodies_mesh_size(const pbd_scene* s, uint64_t* vertices, uint64_t* triangles) {
	const pbd_world* w = s->world;
	*vertices = *triangles = 0;
	for (uint32_t k = 0; k < s->collider_count; ++k) {
		pbd_collider_def d;
		if (pbd_collider_get_def(w, s->colliders[k], &d) != PBD_OK || !pbd_body_is_valid(w, d.body)) continue;
		uint32_t nv, nt;
		shape_size(w, s->colliders[k], &d, &nv, &nt);
		*vertices += nv;
		*triangles += nt;
	}
}

/* Area-weighted vertex normals of one object: the sum of its triangles' cross products (twice
 * their areas) at each corner, normalised; a vertex whose sum vanishes gets 0 0 0. */
static void object_normals(const pbd_scene* s, const pbd_scene_object* o, pbd_vec3* out) {
	const pbd_vec3* x = pbd_world_positions(s->world);
	const uint32_t* tri = pbd_world_triangles(s->world);
	const uint32_t base = o->range.first_particle;
	memset(out, 0, o->range.particle_count * sizeof *out);
	for (uint32_t t = 0; t < o->range.triangle_count; ++t) {
		const uint32_t* v = tri + 3 * (size_t)(o->range.first_triangle + t);
		const pbd_vec3 c = pbd_v3_cross(pbd_v3_sub(x[v[1]], x[v[0]]), pbd_v3_sub(x[v[2]], x[v[0]]));
		for (int k = 0; k < 3; ++k) out[v[k] - base] = pbd_v3_add(out[v[k] - base], c);
	}
	for (uint32_t i = 0; i < o->range.particle_count; ++i) {
		const pbd_real len = pbd_v3_length(out[i]);
		out[i] = len > 0 ? pbd_v3_scale(out[i], 1 / len) : (pbd_vec3){0, 0, 0};
	}
}

/* Each live body's frame as a comment (OBJ has no transforms), then the shapes it carries where
 * they are now, numbered after the v lines before them (v_next is the next one's number). */
static bool write_obj_bodies(FILE* fp, const pbd_scene* s, uint32_t v_next, int frame, pbd_scene_error* err) {
	const pbd_world* w = s->world;
	uint32_t slots = 0;
	pbd_world_body_poses(w, &slots);
	out_mesh m;
	memset(&m, 0, sizeof m);
	for (uint32_t i = 0; i < slots; ++i) {
		const pbd_body_id id = pbd_world_body_at(w, i);
		pbd_body_state st;
		if (pbd_body_get_state(w, id, &st) != PBD_OK) continue;
		const pbd_pose p = st.pose;
		fprintf(fp,
		        "# body %u pose " REAL_FMT " " REAL_FMT " " REAL_FMT " " REAL_FMT " " REAL_FMT " " REAL_FMT " " REAL_FMT
		        "\n",
		        id.index1, p.position.x, p.position.y, p.position.z, p.rotation.x, p.rotation.y, p.rotation.z,
		        p.rotation.w);
		m.nv = m.nt = 0;
		if (!out_body_mesh(s, id, true, &m)) {
			out_mesh_free(&m);
			pbd_scene_error_set(err, "%s: frame %d: out of memory for the shapes of body %u", s->name, frame,
			                    id.index1);
			return false;
		}
		if (m.nt == 0) continue;
		char name[PBD_SCENE_NAME_MAX + 16];
		out_body_name(s, id, name, sizeof name);
		fprintf(fp, "o %s\n", name);
		for (uint32_t k = 0; k < m.nv; ++k)
			fprintf(fp, "v " REAL_FMT " " REAL_FMT " " REAL_FMT "\n", m.v[k].x, m.v[k].y, m.v[k].z);
		for (uint32_t t = 0; t < m.nt; ++t)
			fprintf(fp, "f %u %u %u\n", v_next + m.tri[3 * t], v_next + m.tri[3 * t + 1], v_next + m.tri[3 * t + 2]);
		v_next += m.nv;
	}
	out_mesh_free(&m);
	return true;
}

static bool write_obj(FILE* fp, const pbd_scene* s, int frame, pbd_scene_error* err) {
	const pbd_world* w = s->world;
	const uint32_t n = pbd_world_particle_count(w);
	const pbd_vec3* x = pbd_world_positions(w);
	uint32_t most = 0;
	for (uint32_t k = 0; k < s->object_count; ++k)
		if (s->objects[k].range.triangle_count && s->objects[k].range.particle_count > most)
			most = s->objects[k].range.particle_count;
	pbd_vec3* normals = most ? malloc(most * sizeof *normals) : NULL;
	if (most && !normals) {
		pbd_scene_error_set(err, "%s: frame %d: out of memory for the normals", s->name, frame);
		return false;
	}
	fprintf(fp, "# pbd %s frame %d, %u particles\n", s->name, frame, n);
	for (uint32_t i = 0; i < n; ++i) fprintf(fp, "v " REAL_FMT " " REAL_FMT " " REAL_FMT "\n", x[i].x, x[i].y, x[i].z);
	const uint32_t* tri = pbd_world_triangles(w);
	/* vt and vn are numbered across the file: each object's start after the earlier objects'. */
	uint32_t vt_next = 1, vn_next = 1;
	for (uint32_t k = 0; k < s->object_count; ++k) {
		const pbd_scene_object* o = &s->objects[k];
		fprintf(fp, "o %s\n", o->name);
		if (o->range.triangle_count == 0) {
			for (uint32_t l = 0; l < o->line_count; ++l)
				fprintf(fp, "l %u %u\n", o->lines[2 * l] + 1, o->lines[2 * l + 1] + 1);
			continue;
		}
		const uint32_t base = o->range.first_particle;
		const uint32_t nx = o->grid_nx, ny = o->grid_ny;
		const bool uv = nx >= 2 && ny >= 2;
		if (uv)
			for (uint32_t j = 0; j < ny; ++j)
				for (uint32_t i = 0; i < nx; ++i)
					fprintf(fp, "vt %.9g %.9g\n", (double)i / (double)(nx - 1), (double)j / (double)(ny - 1));
		object_normals(s, o, normals);
		for (uint32_t i = 0; i < o->range.particle_count; ++i)
			fprintf(fp, "vn %.6g %.6g %.6g\n", (double)normals[i].x, (double)normals[i].y, (double)normals[i].z);
		for (uint32_t t = 0; t < o->range.triangle_count; ++t) {
			const uint32_t* v = tri + 3 * (size_t)(o->range.first_triangle + t);
			fputc('f', fp);
			for (int c = 0; c < 3; ++c) {
				const uint32_t local = v[c] - base;
				if (uv)
					fprintf(fp, " %u/%u/%u", v[c] + 1, vt_next + local, vn_next + local);
				else
					fprintf(fp, " %u//%u", v[c] + 1, vn_next + local);
			}
			fputc('\n', fp);
		}
		if (uv) vt_next += o->range.particle_count;
		vn_next += o->range.particle_count;
	}
	free(normals);
	return write_obj_bodies(fp, s, n + 1, frame, err);
}

/* PLY binary is little-endian by declaration, whatever the host. */
static void put_u32(FILE* fp, uint32_t v) {
	unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
	                      (unsigned char)(v >> 24)};
	fwrite(b, 1, 4, fp);
}

static void put_real(FILE* fp, pbd_real r) {
#ifdef PBD_DOUBLE
	uint64_t bits;
	memcpy(&bits, &r, sizeof bits);
	put_u32(fp, (uint32_t)bits);
	put_u32(fp, (uint32_t)(bits >> 32));
#else
	uint32_t bits;
	memcpy(&bits, &r, sizeof bits);
	put_u32(fp, bits);
#endif
}

static void write_ply(FILE* fp, const pbd_scene* s, int frame) {
	const pbd_world* w = s->world;
	const uint32_t n = pbd_world_particle_count(w);
	const pbd_vec3* x = pbd_world_positions(w);
	uint32_t faces = 0, edges = 0;
	for (uint32_t k = 0; k < s->object_count; ++k) {
		faces += s->objects[k].range.triangle_count;
		if (s->objects[k].range.triangle_count == 0) edges += s->objects[k].line_count;
	}
#ifdef PBD_DOUBLE
	const char* type = "double";
#else
	const char* type = "float";
#endif
	fprintf(fp,
	        "ply\nformat binary_little_endian 1.0\ncomment pbd %s frame %d\n"
	        "element vertex %u\nproperty %s x\nproperty %s y\nproperty %s z\n"
	        "element face %u\nproperty list uchar int vertex_indices\n"
	        "element edge %u\nproperty int vertex1\nproperty int vertex2\nend_header\n",
	        s->name, frame, n, type, type, type, faces, edges);
	for (uint32_t i = 0; i < n; ++i) {
		put_real(fp, x[i].x);
		put_real(fp, x[i].y);
		put_real(fp, x[i].z);
	}
	const uint32_t* tri = pbd_world_triangles(w);
	for (uint32_t k = 0; k < s->object_count; ++k) {
		const pbd_scene_object* o = &s->objects[k];
		for (uint32_t t = 0; t < o->range.triangle_count; ++t) {
			const uint32_t* v = tri + 3 * (size_t)(o->range.first_triangle + t);
			fputc(3, fp);
			put_u32(fp, v[0]);
			put_u32(fp, v[1]);
			put_u32(fp, v[2]);
		}
	}
	for (uint32_t k = 0; k < s->object_count; ++k) {
		const pbd_scene_object* o = &s->objects[k];
		if (o->range.triangle_count) continue;
		for (uint32_t l = 0; l < o->line_count; ++l) {
			put_u32(fp, o->lines[2 * l]);
			put_u32(fp, o->lines[2 * l + 1]);
		}
	}
}

bool out_write_frame(const char* path, out_format format, const pbd_scene* s, int frame, pbd_scene_error* err) {
	if (format == OUT_FORMAT_NONE || format == OUT_FORMAT_USD) return true;
	FILE* fp = open_out(path, err);
	if (!fp) return false;
	bool ok = true;
	if (format == OUT_FORMAT_PLY)
		write_ply(fp, s, frame);
	else if (format == OUT_FORMAT_VTK)
		ok = out_vtk_write(fp, s, frame, err);
	else
		ok = write_obj(fp, s, frame, err);
	if (!ok) {
		fclose(fp);
		return false;
	}
	if (!close_out(fp, path, err)) return false;
	if (format != OUT_FORMAT_VTK) return true;
	/* The bodies' and joints' files go beside the frame's, in the folder of `path`. */
	char dir[4200], side[4300];
	snprintf(dir, sizeof dir, "%s", path);
	char* slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof dir, ".");
	if (pbd_world_body_count(s->world) > 0) {
		out_vtk_bodies_path(side, sizeof side, dir, frame);
		fp = open_out(side, err);
		if (!fp) return false;
		if (!out_vtk_write_bodies(fp, s, frame, err)) {
			fclose(fp);
			return false;
		}
		if (!close_out(fp, side, err)) return false;
	}
	if (pbd_world_joint_count(s->world) == 0) return true;
	out_vtk_joints_path(side, sizeof side, dir, frame);
	fp = open_out(side, err);
	if (!fp) return false;
	if (!out_vtk_write_joints(fp, s, frame, err)) {
		fclose(fp);
		return false;
	}
	return close_out(fp, side, err);
}

void out_metrics_header(FILE* fp) {
	fputs("frame,time,kinetic_energy,potential_energy,elastic_energy,total_energy,momentum_x,momentum_y,"
	      "momentum_z,max_strain,mean_strain,max_violation,contacts,structural_max_strain,structural_mean_strain,"
	      "shear_max_strain,shear_mean_strain,bend_max_strain,bend_mean_strain,body_kinetic_energy,body_momentum_x,"
	      "body_momentum_y,body_momentum_z,body_angular_momentum_x,body_angular_momentum_y,body_angular_momentum_z\n",
	      fp);
}

/* Where the elastic energy is not defined (a PBD stiffness in (0, 1) is a fraction of a
 * projection, not a material), the elastic and total energy fields are left empty: a missing
 * value to gnuplot and to CSV readers, never a 0 that would pass for a measurement. */
void out_metrics_row(FILE* fp, int frame, const pbd_stats* st) {
	fprintf(fp, "%d,%.17g,%.17g,%.17g,", frame, st->time, st->kinetic_energy, st->potential_energy);
	if (st->energy_defined)
		fprintf(fp, "%.17g,%.17g,", st->elastic_energy, st->kinetic_energy + st->potential_energy + st->elastic_energy);
	else
		fputs(",,", fp);
	fprintf(fp, REAL_FMT "," REAL_FMT "," REAL_FMT ",%.17g,%.17g,%.17g,%u", st->momentum.x, st->momentum.y,
	        st->momentum.z, st->max_strain, st->mean_strain, st->max_violation, st->contacts);
	for (int k = 0; k < PBD_EDGE_KIND_COUNT; ++k)
		fprintf(fp, ",%.17g,%.17g", st->edge_max_strain[k], st->edge_mean_strain[k]);
	fprintf(fp, ",%.17g", st->body_kinetic_energy);
	for (int k = 0; k < 3; ++k) fprintf(fp, ",%.17g", st->body_momentum[k]);
	for (int k = 0; k < 3; ++k) fprintf(fp, ",%.17g", st->body_angular_momentum[k]);
	fputc('\n', fp);
}

bool out_write_state(const char* path, const pbd_scene* s, int frame, double time, pbd_scene_error* err) {
	FILE* fp = open_out(path, err);
	if (!fp) return false;
	const pbd_world* w = s->world;
	const uint32_t n = pbd_world_particle_count(w);
	const pbd_vec3* x = pbd_world_positions(w);
	const pbd_vec3* v = pbd_world_velocities(w);
	const pbd_real* im = pbd_world_inv_masses(w);
#ifdef PBD_DOUBLE
	const char* precision = "double";
#else
	const char* precision = "float";
#endif
	fprintf(fp, "# pbd state 1\n# scene %s\n# frame %d\n# time %.17g\n# precision %s\n# particles %u\n", s->name, frame,
	        time, precision, n);
	/* The world's hash (pbd_world_hash), so that a run from another front end (the Python module)
	 * can be compared with this one in one number. */
	fprintf(fp, "# hash 0x%016llx\n", (unsigned long long)pbd_world_hash(w));
	fputs("# index x y z vx vy vz inv_mass\n", fp);
	for (uint32_t i = 0; i < n; ++i)
		fprintf(fp, "%u " REAL_FMT " " REAL_FMT " " REAL_FMT " " REAL_FMT " " REAL_FMT " " REAL_FMT " " REAL_FMT "\n",
		        i, x[i].x, x[i].y, x[i].z, v[i].x, v[i].y, v[i].z, im[i]);
	return close_out(fp, path, err);
}

bool out_state_is_finite(const pbd_scene* s, uint32_t* bad) {
	const pbd_world* w = s->world;
	const uint32_t n = pbd_world_particle_count(w);
	const pbd_vec3* x = pbd_world_positions(w);
	const pbd_vec3* v = pbd_world_velocities(w);
	for (uint32_t i = 0; i < n; ++i) {
		if (!pbd_v3_is_finite(x[i]) || !pbd_v3_is_finite(v[i])) {
			*bad = i;
			return false;
		}
	}
	return true;
}

bool out_stats_are_finite(const pbd_stats* st) {
	const bool elastic_ok =
	    !st->energy_defined ||
	    (isfinite(st->elastic_energy) && isfinite(st->kinetic_energy + st->potential_energy + st->elastic_energy));
	return isfinite(st->time) && isfinite(st->kinetic_energy) && isfinite(st->potential_energy) && elastic_ok &&
	       pbd_v3_is_finite(st->momentum) && isfinite(st->max_strain) && isfinite(st->mean_strain) &&
	       isfinite(st->max_violation);
}

/* ---- what a run will write --------------------------------------------------------------- */

uint64_t out_digits(uint64_t v) {
	uint64_t d = 1;
	while (v >= 10) {
		v /= 10;
		++d;
	}
	return d;
}

/* Triangles of the objects that have them, and line pieces of those that do not. */
static void count_elements(const pbd_scene* s, uint64_t* faces, uint64_t* edges) {
	*faces = *edges = 0;
	for (uint32_t k = 0; k < s->object_count; ++k) {
		*faces += s->objects[k].range.triangle_count;
		if (s->objects[k].range.triangle_count == 0) *edges += s->objects[k].line_count;
	}
}

static uint64_t frame_bytes(const pbd_scene* s, int last_frame, out_format format) {
	if (format == OUT_FORMAT_NONE) return 0;
	if (format == OUT_FORMAT_USD) return out_usd_frame_bytes(s);
	if (format == OUT_FORMAT_VTK)
		return out_vtk_frame_bytes(s, last_frame) + out_vtk_bodies_bytes(s, last_frame) +
		       out_vtk_joints_bytes(s, last_frame);
	const uint64_t n = pbd_world_particle_count(s->world);
	uint64_t faces, edges;
	count_elements(s, &faces, &edges);
	if (format == OUT_FORMAT_PLY) {
#ifdef PBD_DOUBLE
		const char* type = "double";
#else
		const char* type = "float";
#endif
		/* The header as write_ply prints it, for the widest frame number. */
		const int header =
		    snprintf(NULL, 0,
		             "ply\nformat binary_little_endian 1.0\ncomment pbd %s frame %d\n"
		             "element vertex %u\nproperty %s x\nproperty %s y\nproperty %s z\n"
		             "element face %u\nproperty list uchar int vertex_indices\n"
		             "element edge %u\nproperty int vertex1\nproperty int vertex2\nend_header\n",
		             s->name, last_frame, (uint32_t)n, type, type, type, (uint32_t)faces, (uint32_t)edges);
		return (uint64_t)(header > 0 ? header : 0) + n * 3 * sizeof(pbd_real) + faces * 13 + edges * 8;
	}
	const uint64_t index = out_digits(n); /* 1-based indices (v, vt and vn) are at most n */
	uint64_t bytes = (uint64_t)snprintf(NULL, 0, "# pbd %s frame %d, %u particles\n", s->name, last_frame, (uint32_t)n);
	bytes += n * (2 + 3 * REAL_WIDTH + 3);
	for (uint32_t k = 0; k < s->object_count; ++k) {
		const pbd_scene_object* o = &s->objects[k];
		bytes += 3 + strlen(o->name);
		if (o->range.triangle_count == 0) continue;
		/* "vn" and 3 %.6g numbers of at most 12 characters ("-1.23457e-05"); "vt" and 2 %.9g in [0, 1] */
		bytes += o->range.particle_count * (2 + 3 * 13 + 1);
		if (o->type == PBD_SCENE_OBJECT_GRID_CLOTH) bytes += o->range.particle_count * (2 + 2 * 16 + 1);
	}
	bytes += faces * (1 + 3 * (3 + 3 * index) + 1) + edges * (2 + 2 * index + 2);
	/* The bodies: "# body <index1> pose" and 7 numbers, "o body_<index1>", the shapes' v and f. */
	uint64_t bv, bt;
	out_bodies_mesh_size(s, &bv, &bt);
	const uint64_t body_index = out_digits(n + bv);
	bytes += (uint64_t)pbd_world_body_count(s->world) * (2 * 10 + 20 + 7 * (REAL_WIDTH + 1));
	bytes += bv * (2 + 3 * (REAL_WIDTH + 1)) + bt * (2 + 3 * (body_index + 1));
	return bytes;
}

static uint64_t metrics_row_bytes(int last_frame) {
	/* frame, 8 doubles, 3 reals, contacts: 12 commas and the newline */
	return out_digits((uint64_t)last_frame) + 8 * DOUBLE_WIDTH + 3 * REAL_WIDTH + 10 + 13;
}

uint64_t out_run_bytes(const pbd_scene* s, int frames, out_format format, out_run_size* parts) {
	const uint64_t n = pbd_world_particle_count(s->world);
	out_run_size p;
	p.frame = frame_bytes(s, frames, format);
	p.frames = p.frame * ((uint64_t)frames + 1);
	if (format == OUT_FORMAT_USD) p.frames += out_usd_fixed_bytes(s, frames);
	if (format == OUT_FORMAT_VTK) p.frames += out_vtk_index_bytes(frames);
	p.metrics = 200 + metrics_row_bytes(frames) * ((uint64_t)frames + 1);
	p.state = 200 + strlen(s->name) + DOUBLE_WIDTH + n * (out_digits(n) + 7 * (REAL_WIDTH + 1) + 1);
	p.total = p.frames + p.metrics + p.state;
	if (parts) *parts = p;
	return p.total;
}
