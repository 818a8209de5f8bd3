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

/* frame_<digits>.obj, .ply or .vtu exactly: the only names a run may delete; *number receives
 * the frame (saturated). */
static bool is_frame_file(const char* name, long* number) {
	if (strncmp(name, "frame_", 6) != 0) return false;
	const char* p = name + 6;
	const char* digits = p;
	long n = 0;
	while (*p >= '0' && *p <= '9') {
		n = n > 100000000L ? n : n * 10 + (*p - '0');
		++p;
	}
	if (p == digits) return false;
	*number = n;
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
	return true;
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
	return close_out(fp, path, err);
}

void out_metrics_header(FILE* fp) {
	fputs("frame,time,kinetic_energy,potential_energy,elastic_energy,total_energy,momentum_x,momentum_y,"
	      "momentum_z,max_strain,mean_strain,max_violation,contacts,structural_max_strain,structural_mean_strain,"
	      "shear_max_strain,shear_mean_strain,bend_max_strain,bend_mean_strain\n",
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
	if (format == OUT_FORMAT_VTK) return out_vtk_frame_bytes(s, last_frame);
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
