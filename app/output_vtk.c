/* VTK XML frames (.vtu) and their ParaView collection (.pvd). */
#define _POSIX_C_SOURCE 200809L
#include "output_vtk.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"
#include "pbd/math.h"

#ifdef PBD_DOUBLE
#define VTK_REAL "Float64"
#else
#define VTK_REAL "Float32"
#endif
#define VTK_LINE     3
#define VTK_TRIANGLE 5

/* Per particle: the mean |l / rest - 1| over the distance constraints that touch it. */
static bool particle_strain(const pbd_scene* s, double* strain) {
	const pbd_world* w = s->world;
	const uint32_t n = pbd_world_particle_count(w);
	const pbd_vec3* x = pbd_world_positions(w);
	uint32_t* touching = calloc(n ? n : 1, sizeof *touching);
	if (!touching) return false;
	memset(strain, 0, n * sizeof *strain);
	const uint32_t m = pbd_world_distance_count(w);
	for (uint32_t c = 0; c < m; ++c) {
		pbd_distance_def d;
		if (pbd_world_get_distance(w, c, &d) != PBD_OK || !(d.rest > 0)) continue;
		const double l = (double)pbd_v3_length(pbd_v3_sub(x[d.a], x[d.b]));
		const double e = fabs(l / (double)d.rest - 1.0);
		strain[d.a] += e;
		strain[d.b] += e;
		touching[d.a]++;
		touching[d.b]++;
	}
	for (uint32_t i = 0; i < n; ++i)
		if (touching[i]) strain[i] /= touching[i];
	free(touching);
	return true;
}

static void put_vectors(FILE* fp, const pbd_vec3* v, uint32_t n) {
	for (uint32_t i = 0; i < n; ++i)
		fprintf(fp, OUT_REAL_FMT " " OUT_REAL_FMT " " OUT_REAL_FMT "\n", v[i].x, v[i].y, v[i].z);
}

bool out_vtk_write(FILE* fp, const pbd_scene* s, int frame, pbd_scene_error* err) {
	const pbd_world* w = s->world;
	const uint32_t n = pbd_world_particle_count(w);
	double* strain = malloc((n ? n : 1) * sizeof *strain);
	if (!strain || !particle_strain(s, strain)) {
		free(strain);
		pbd_scene_error_set(err, "%s: frame %d: out of memory for the VTK strain", s->name, frame);
		return false;
	}
	uint64_t faces = 0, lines = 0;
	for (uint32_t k = 0; k < s->object_count; ++k) {
		faces += s->objects[k].range.triangle_count;
		if (s->objects[k].range.triangle_count == 0) lines += s->objects[k].line_count;
	}
	fprintf(fp,
	        "<?xml version=\"1.0\"?>\n<!-- pbd %s frame %d -->\n"
	        "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" "
	        "header_type=\"UInt64\">\n  <UnstructuredGrid>\n"
	        "    <Piece NumberOfPoints=\"%u\" NumberOfCells=\"%llu\">\n"
	        "      <PointData Vectors=\"velocity\" Scalars=\"strain\">\n"
	        "        <DataArray type=\"" VTK_REAL "\" Name=\"velocity\" NumberOfComponents=\"3\" format=\"ascii\">\n",
	        s->name, frame, n, (unsigned long long)(faces + lines));
	put_vectors(fp, pbd_world_velocities(w), n);
	fputs("        </DataArray>\n        <DataArray type=\"Float64\" Name=\"strain\" format=\"ascii\">\n", fp);
	for (uint32_t i = 0; i < n; ++i) fprintf(fp, "%.17g\n", strain[i]);
	free(strain);
	fputs("        </DataArray>\n      </PointData>\n      <Points>\n"
	      "        <DataArray type=\"" VTK_REAL "\" Name=\"Points\" NumberOfComponents=\"3\" format=\"ascii\">\n",
	      fp);
	put_vectors(fp, pbd_world_positions(w), n);
	fputs("        </DataArray>\n      </Points>\n      <Cells>\n"
	      "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n",
	      fp);
	const uint32_t* tri = pbd_world_triangles(w);
	for (uint32_t k = 0; k < s->object_count; ++k) {
		const pbd_scene_object* o = &s->objects[k];
		for (uint32_t t = 0; t < o->range.triangle_count; ++t) {
			const uint32_t* v = tri + 3 * (size_t)(o->range.first_triangle + t);
			fprintf(fp, "%u %u %u\n", v[0], v[1], v[2]);
		}
		if (o->range.triangle_count == 0)
			for (uint32_t l = 0; l < o->line_count; ++l) fprintf(fp, "%u %u\n", o->lines[2 * l], o->lines[2 * l + 1]);
	}
	fputs("        </DataArray>\n        <DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n", fp);
	for (uint64_t c = 1; c <= faces; ++c) fprintf(fp, "%llu\n", (unsigned long long)(3 * c));
	for (uint64_t c = 1; c <= lines; ++c) fprintf(fp, "%llu\n", (unsigned long long)(3 * faces + 2 * c));
	fputs("        </DataArray>\n        <DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">\n", fp);
	/* Cells in the connectivity's order: every triangle first, then every line. */
	for (uint64_t c = 0; c < faces; ++c) fprintf(fp, "%d\n", VTK_TRIANGLE);
	for (uint64_t c = 0; c < lines; ++c) fprintf(fp, "%d\n", VTK_LINE);
	fputs("        </DataArray>\n      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n</VTKFile>\n", fp);
	return true;
}

void out_vtk_bodies_path(char* out, size_t out_size, const char* dir, int frame) {
	snprintf(out, out_size, "%s/bodies_%05d.vtp", dir, frame);
}

/* The live bodies' states and their shapes, in slot order: body k's shape vertices are
 * [first[k], first[k + 1]) of the mesh. */
typedef struct vtk_bodies {
	pbd_body_state* state;
	uint32_t* index1;
	uint32_t* first;
	uint32_t count;
	out_mesh mesh;
} vtk_bodies;

static void bodies_free(vtk_bodies* b) {
	free(b->state);
	free(b->index1);
	free(b->first);
	out_mesh_free(&b->mesh);
}

static bool bodies_gather(const pbd_scene* s, vtk_bodies* b) {
	const pbd_world* w = s->world;
	uint32_t slots = 0;
	pbd_world_body_poses(w, &slots);
	memset(b, 0, sizeof *b);
	b->state = malloc((slots ? slots : 1) * sizeof *b->state);
	b->index1 = malloc((slots ? slots : 1) * sizeof *b->index1);
	b->first = malloc(((size_t)slots + 1) * sizeof *b->first);
	if (!b->state || !b->index1 || !b->first) return false;
	for (uint32_t i = 0; i < slots; ++i) {
		const pbd_body_id id = pbd_world_body_at(w, i);
		if (pbd_body_get_state(w, id, &b->state[b->count]) != PBD_OK) continue;
		b->index1[b->count] = id.index1;
		b->first[b->count] = b->mesh.nv;
		if (!out_body_mesh(s, id, true, &b->mesh)) return false;
		b->count++;
	}
	b->first[b->count] = b->mesh.nv;
	return true;
}

/* The velocity of body k's matter at the world point p. */
static pbd_vec3 body_point_velocity(const pbd_body_state* st, pbd_vec3 p) {
	return pbd_v3_add(st->velocity, pbd_v3_cross(st->angular_velocity, pbd_v3_sub(p, st->center)));
}

bool out_vtk_write_bodies(FILE* fp, const pbd_scene* s, int frame, pbd_scene_error* err) {
	vtk_bodies b;
	if (!bodies_gather(s, &b)) {
		bodies_free(&b);
		pbd_scene_error_set(err, "%s: frame %d: out of memory for the bodies' VTK file", s->name, frame);
		return false;
	}
	const uint64_t points = (uint64_t)b.count + b.mesh.nv;
	fprintf(fp,
	        "<?xml version=\"1.0\"?>\n<!-- pbd %s bodies frame %d -->\n"
	        "<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
	        "  <PolyData>\n    <Piece NumberOfPoints=\"%llu\" NumberOfVerts=\"%u\" NumberOfLines=\"0\" "
	        "NumberOfStrips=\"0\" NumberOfPolys=\"%u\">\n"
	        "      <PointData Vectors=\"velocity\" Scalars=\"body\">\n"
	        "        <DataArray type=\"UInt32\" Name=\"body\" format=\"ascii\">\n",
	        s->name, frame, (unsigned long long)points, b.count, b.mesh.nt);
	for (uint32_t k = 0; k < b.count; ++k) fprintf(fp, "%u\n", b.index1[k]);
	for (uint32_t k = 0; k < b.count; ++k)
		for (uint32_t i = b.first[k]; i < b.first[k + 1]; ++i) fprintf(fp, "%u\n", b.index1[k]);
	fputs("        </DataArray>\n        <DataArray type=\"" VTK_REAL
	      "\" Name=\"orientation\" NumberOfComponents=\"4\" format=\"ascii\">\n",
	      fp);
	for (uint32_t pass = 0; pass < 2; ++pass)
		for (uint32_t k = 0; k < b.count; ++k) {
			const pbd_quat q = b.state[k].pose.rotation;
			const uint32_t times = pass == 0 ? 1 : b.first[k + 1] - b.first[k];
			for (uint32_t i = 0; i < times; ++i)
				fprintf(fp, OUT_REAL_FMT " " OUT_REAL_FMT " " OUT_REAL_FMT " " OUT_REAL_FMT "\n", q.x, q.y, q.z, q.w);
		}
	fputs("        </DataArray>\n        <DataArray type=\"" VTK_REAL
	      "\" Name=\"velocity\" NumberOfComponents=\"3\" format=\"ascii\">\n",
	      fp);
	for (uint32_t k = 0; k < b.count; ++k) {
		const pbd_vec3 v = body_point_velocity(&b.state[k], b.state[k].pose.position);
		put_vectors(fp, &v, 1);
	}
	for (uint32_t k = 0; k < b.count; ++k)
		for (uint32_t i = b.first[k]; i < b.first[k + 1]; ++i) {
			const pbd_vec3 v = body_point_velocity(&b.state[k], b.mesh.v[i]);
			put_vectors(fp, &v, 1);
		}
	fputs("        </DataArray>\n      </PointData>\n      <Points>\n"
	      "        <DataArray type=\"" VTK_REAL "\" Name=\"Points\" NumberOfComponents=\"3\" format=\"ascii\">\n",
	      fp);
	for (uint32_t k = 0; k < b.count; ++k) put_vectors(fp, &b.state[k].pose.position, 1);
	put_vectors(fp, b.mesh.v, b.mesh.nv);
	fputs("        </DataArray>\n      </Points>\n      <Verts>\n"
	      "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n",
	      fp);
	for (uint32_t k = 0; k < b.count; ++k) fprintf(fp, "%u\n", k);
	fputs("        </DataArray>\n        <DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n", fp);
	for (uint32_t k = 1; k <= b.count; ++k) fprintf(fp, "%u\n", k);
	fputs("        </DataArray>\n      </Verts>\n      <Polys>\n"
	      "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n",
	      fp);
	/* The shapes' vertices come after the bodies' origins. */
	for (uint32_t t = 0; t < b.mesh.nt; ++t) {
		const uint32_t* v = b.mesh.tri + 3 * (size_t)t;
		fprintf(fp, "%llu %llu %llu\n", (unsigned long long)b.count + v[0], (unsigned long long)b.count + v[1],
		        (unsigned long long)b.count + v[2]);
	}
	fputs("        </DataArray>\n        <DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n", fp);
	for (uint64_t t = 1; t <= b.mesh.nt; ++t) fprintf(fp, "%llu\n", (unsigned long long)(3 * t));
	fputs("        </DataArray>\n      </Polys>\n    </Piece>\n  </PolyData>\n</VTKFile>\n", fp);
	bodies_free(&b);
	return true;
}

uint64_t out_vtk_bodies_bytes(const pbd_scene* s, int last_frame) {
	const uint64_t bodies = pbd_world_body_count(s->world);
	if (bodies == 0) return 0;
	uint64_t nv, nt;
	out_bodies_mesh_size(s, &nv, &nt);
	const uint64_t points = bodies + nv, index = out_digits(points) + 1;
	uint64_t bytes = 1400 + strlen(s->name) + out_digits((uint64_t)last_frame) + 3 * out_digits(points + nt);
	/* body (10 digits), orientation (4), velocity and position (3 each) per point */
	bytes += points * (11 + 10 * (OUT_REAL_WIDTH + 1));
	bytes += bodies * 2 * index + nt * 3 * index + nt * (out_digits(3 * nt) + 1);
	return bytes;
}

void out_vtk_joints_path(char* out, size_t out_size, const char* dir, int frame) {
	snprintf(out, out_size, "%s/joints_%05d.vtp", dir, frame);
}

/* Where a side's frame origin is in the world: its body's slot frame, or the world's for the
 * null id (which a side released by a destroyed body reads as). */
static pbd_vec3 joint_anchor(const pbd_pose* poses, uint32_t slots, pbd_body_id body, pbd_pose frame) {
	if (body.index1 == 0 || body.index1 > slots) return frame.position;
	return pbd_pose_apply(poses[body.index1 - 1], frame.position);
}

static void put_reals(FILE* fp, const char* name, const pbd_real* v, uint32_t n) {
	fprintf(fp, "        <DataArray type=\"" VTK_REAL "\" Name=\"%s\" format=\"ascii\">\n", name);
	for (uint32_t k = 0; k < n; ++k) fprintf(fp, OUT_REAL_FMT "\n", v[k]);
	fputs("        </DataArray>\n", fp);
}

bool out_vtk_write_joints(FILE* fp, const pbd_scene* s, int frame, pbd_scene_error* err) {
	const pbd_world* w = s->world;
	const uint32_t n = pbd_world_joint_count(w);
	const size_t cap = n ? n : 1;
	pbd_joint_state* st = malloc(cap * sizeof *st);
	pbd_joint_type* type = malloc(cap * sizeof *type);
	pbd_vec3* ends = malloc(2 * cap * sizeof *ends);
	pbd_real* num = malloc(4 * cap * sizeof *num); /* force, torque, error_distance, position */
	if (!st || !type || !ends || !num) {
		free(st);
		free(type);
		free(ends);
		free(num);
		pbd_scene_error_set(err, "%s: frame %d: out of memory for the joints' VTK file", s->name, frame);
		return false;
	}
	uint32_t slots = 0;
	const pbd_pose* poses = pbd_world_body_poses(w, &slots);
	bool ok = true;
	for (uint32_t k = 0; k < n && ok; ++k) {
		pbd_joint_def d;
		ok = pbd_world_get_joint(w, k, &d) == PBD_OK && pbd_world_get_joint_state(w, k, &st[k]) == PBD_OK;
		if (!ok) {
			pbd_scene_error_set(err, "%s: frame %d: cannot read joint %u", s->name, frame, k);
			break;
		}
		type[k] = d.type;
		ends[2 * k] = joint_anchor(poses, slots, d.body_a, d.frame_a);
		ends[2 * k + 1] = joint_anchor(poses, slots, d.body_b, d.frame_b);
		num[k] = pbd_v3_length(st[k].force);
		num[cap + k] = pbd_v3_length(st[k].torque);
		num[2 * cap + k] = st[k].error_distance;
		num[3 * cap + k] = st[k].position;
	}
	if (ok) {
		fprintf(fp,
		        "<?xml version=\"1.0\"?>\n<!-- pbd %s joints frame %d -->\n"
		        "<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
		        "  <PolyData>\n    <Piece NumberOfPoints=\"%llu\" NumberOfVerts=\"0\" NumberOfLines=\"%u\" "
		        "NumberOfStrips=\"0\" NumberOfPolys=\"0\">\n"
		        "      <CellData Scalars=\"error_distance\">\n"
		        "        <DataArray type=\"Int32\" Name=\"type\" format=\"ascii\">\n",
		        s->name, frame, 2ull * n, n);
		for (uint32_t k = 0; k < n; ++k) fprintf(fp, "%d\n", (int)type[k]);
		fputs("        </DataArray>\n        <DataArray type=\"UInt8\" Name=\"broken\" format=\"ascii\">\n", fp);
		for (uint32_t k = 0; k < n; ++k) fprintf(fp, "%d\n", st[k].broken ? 1 : 0);
		fputs("        </DataArray>\n", fp);
		static const char* const names[4] = {"force", "torque", "error_distance", "position"};
		for (int a = 0; a < 4; ++a) put_reals(fp, names[a], num + (size_t)a * cap, n);
		fputs("      </CellData>\n      <Points>\n"
		      "        <DataArray type=\"" VTK_REAL "\" Name=\"Points\" NumberOfComponents=\"3\" format=\"ascii\">\n",
		      fp);
		put_vectors(fp, ends, 2 * n);
		fputs("        </DataArray>\n      </Points>\n      <Lines>\n"
		      "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n",
		      fp);
		for (unsigned long long k = 0; k < n; ++k) fprintf(fp, "%llu %llu\n", 2 * k, 2 * k + 1);
		fputs("        </DataArray>\n        <DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n", fp);
		for (unsigned long long k = 1; k <= n; ++k) fprintf(fp, "%llu\n", 2 * k);
		fputs("        </DataArray>\n      </Lines>\n    </Piece>\n  </PolyData>\n</VTKFile>\n", fp);
	}
	free(st);
	free(type);
	free(ends);
	free(num);
	return ok;
}

uint64_t out_vtk_joints_bytes(const pbd_scene* s, int last_frame) {
	const uint64_t joints = pbd_world_joint_count(s->world);
	if (joints == 0) return 0;
	const uint64_t index = out_digits(2 * joints) + 1;
	uint64_t bytes = 1600 + strlen(s->name) + out_digits((uint64_t)last_frame) + 2 * out_digits(2 * joints);
	/* type and broken (one digit each), 4 cell numbers, 2 points of 3, a line's 2 indices and offset */
	bytes += joints * (2 * 2 + 4 * (OUT_REAL_WIDTH + 1) + 2 * 3 * (OUT_REAL_WIDTH + 1) + 3 * index);
	return bytes;
}

bool out_vtk_write_index(const char* dir, int last, double dt, pbd_scene_error* err) {
	char path[4200], tmp[4300], frame[4200];
	snprintf(path, sizeof path, "%s/animation.pvd", dir);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE* fp = fopen(tmp, "wb");
	if (!fp) {
		pbd_scene_error_set(err, "%s: cannot write: %s", tmp, strerror(errno));
		return false;
	}
	fputs("<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"1.0\" byte_order=\"LittleEndian\">\n"
	      "  <Collection>\n",
	      fp);
	for (int f = 0; f <= last; ++f) {
		struct stat st;
		out_frame_path(frame, sizeof frame, dir, f, OUT_FORMAT_VTK);
		if (stat(frame, &st) != 0 || !S_ISREG(st.st_mode)) continue;
		fprintf(fp, "    <DataSet timestep=\"%.17g\" group=\"\" part=\"0\" file=\"frame_%05d.vtu\"/>\n", f * dt, f);
		out_vtk_bodies_path(frame, sizeof frame, dir, f);
		if (stat(frame, &st) == 0 && S_ISREG(st.st_mode))
			fprintf(fp, "    <DataSet timestep=\"%.17g\" group=\"\" part=\"1\" file=\"bodies_%05d.vtp\"/>\n", f * dt,
			        f);
		out_vtk_joints_path(frame, sizeof frame, dir, f);
		if (stat(frame, &st) == 0 && S_ISREG(st.st_mode))
			fprintf(fp, "    <DataSet timestep=\"%.17g\" group=\"\" part=\"2\" file=\"joints_%05d.vtp\"/>\n", f * dt,
			        f);
	}
	fputs("  </Collection>\n</VTKFile>\n", fp);
	bool ok = ferror(fp) == 0;
	if (fclose(fp) != 0) ok = false;
	if (ok && rename(tmp, path) != 0) ok = false;
	if (!ok) {
		pbd_scene_error_set(err, "%s: write failed: %s", path, strerror(errno));
		unlink(tmp);
	}
	return ok;
}

uint64_t out_vtk_frame_bytes(const pbd_scene* s, int last_frame) {
	const uint64_t n = pbd_world_particle_count(s->world);
	uint64_t faces = 0, lines = 0;
	for (uint32_t k = 0; k < s->object_count; ++k) {
		faces += s->objects[k].range.triangle_count;
		if (s->objects[k].range.triangle_count == 0) lines += s->objects[k].line_count;
	}
	const uint64_t cells = faces + lines, index = out_digits(n) + 1;
	uint64_t bytes = 1200 + strlen(s->name) + out_digits((uint64_t)last_frame) + 2 * out_digits(n + cells);
	bytes += 2 * n * (3 * (OUT_REAL_WIDTH + 1)) + n * (OUT_DOUBLE_WIDTH + 1);
	bytes += faces * 3 * index + lines * 2 * index + cells * (out_digits(3 * cells) + 1) + cells * 2;
	return bytes;
}

uint64_t out_vtk_index_bytes(int frames) {
	/* the DataSet lines of a frame, its bodies and joints, with the widest timestep and frame number */
	return 200 + ((uint64_t)frames + 1) * 3 * (70 + OUT_DOUBLE_WIDTH + out_digits((uint64_t)frames));
}
