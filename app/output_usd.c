/* The USD ASCII animation of a run, assembled from a binary frame store (see output_usd.h). */
#define _POSIX_C_SOURCE 200809L
#include "output_usd.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"

/* The magic ends with the layout's version, so that a store without the joints (version 1) is
 * never read as one with them. */
#define STORE_MAGIC        "PBDFRAM2"
#define STORE_HEADER_BYTES 28
#ifdef PBD_DOUBLE
#define POINT_TYPE "point3d"
#define QUAT_TYPE  "quatd"
#else
#define POINT_TYPE "point3f"
#define QUAT_TYPE  "quatf"
#endif
#define POSE_REALS  7                        /* a body's frame in the store: position x y z, rotation x y z w */
#define DEG_PER_RAD 57.295779513082320876798 /* UsdPhysics gives angular limits in degrees */

typedef enum prim_kind { PRIM_MESH, PRIM_CURVES, PRIM_POINTS } prim_kind;

/* One prim: which world particles its points are, in order. */
typedef struct usd_prim {
	prim_kind kind;
	char ident[PBD_SCENE_NAME_MAX + 16];
	uint32_t* points; /* world particle index of each point */
	uint32_t point_count;
	uint32_t* curve_counts; /* PRIM_CURVES: vertices of each polyline */
	uint32_t curve_count;
	uint32_t lo, hi; /* the smallest and largest particle of points */
} usd_prim;

struct out_usd {
	char store_path[4200];
	char usda_path[4200];
	FILE* store;
	uint32_t particles;
	uint32_t bodies;          /* body slots at the start: each record ends with their frames */
	pbd_body_id* body_id;     /* the body of each slot then (null for a destroyed one) */
	int first;                /* frame of the store's first record */
	int next;                 /* frame the next record will be */
	uint32_t joints;          /* joints at the start: each record ends with whether they are broken */
	pbd_joint_def* joint_def; /* each one's def then */
	pbd_real* buf;            /* one frame: 3 scalars per particle, POSE_REALS per body slot, 1 per joint */
	usd_prim* prims;          /* the objects', then one per body slot and one per joint (only ident used) */
	uint32_t prim_count;
};

static uint64_t record_bytes(uint32_t particles, uint32_t bodies, uint32_t joints) {
	return ((uint64_t)particles * 3 + (uint64_t)bodies * POSE_REALS + joints) * sizeof(pbd_real);
}

/* Where joint k's broken flag sits in a record, in scalars from its start. */
static uint64_t joint_offset(const out_usd* u, uint32_t k) {
	return (uint64_t)u->particles * 3 + (uint64_t)u->bodies * POSE_REALS + k;
}

static void put_u32(unsigned char* p, uint32_t v) { memcpy(p, &v, 4); }

static uint32_t get_u32(const unsigned char* p) {
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* A USD identifier, [A-Za-z_][A-Za-z0-9_]*, from an object's name, unique among the first k prims. */
static void make_ident(usd_prim* prims, uint32_t k, const char* name) {
	char* id = prims[k].ident;
	size_t n = 0;
	if (!(name[0] >= 'A' && name[0] <= 'Z') && !(name[0] >= 'a' && name[0] <= 'z') && name[0] != '_') id[n++] = '_';
	for (const char* p = name; *p && n + 1 < PBD_SCENE_NAME_MAX; ++p) {
		const char c = *p;
		const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
		id[n++] = ok ? c : '_';
	}
	id[n] = '\0';
	for (uint32_t j = 0; j < k; ++j)
		if (strcmp(prims[j].ident, id) == 0) {
			snprintf(id + n, sizeof prims[k].ident - n, "_%u", k);
			break;
		}
}

/* Polylines from the object's line pieces: a piece that starts where the previous ended extends it. */
static bool make_curves(usd_prim* p, const pbd_scene_object* o) {
	p->points = malloc(2 * (size_t)o->line_count * sizeof *p->points);
	p->curve_counts = malloc((size_t)o->line_count * sizeof *p->curve_counts);
	if (!p->points || !p->curve_counts) return false;
	for (uint32_t l = 0; l < o->line_count; ++l) {
		const uint32_t a = o->lines[2 * l], b = o->lines[2 * l + 1];
		if (p->curve_count && p->points[p->point_count - 1] == a) {
			p->points[p->point_count++] = b;
			p->curve_counts[p->curve_count - 1]++;
		} else {
			p->points[p->point_count++] = a;
			p->points[p->point_count++] = b;
			p->curve_counts[p->curve_count++] = 2;
		}
	}
	return true;
}

/* The name a joint goes by: its name among the scene's "joints", else joint_<index>. */
static void joint_name(const pbd_scene* s, uint32_t index, char* out, size_t out_size) {
	for (uint32_t k = 0; k < s->joint_count; ++k)
		if (s->joints[k].index == index && s->joints[k].name[0]) {
			snprintf(out, out_size, "%s", s->joints[k].name);
			return;
		}
	snprintf(out, out_size, "joint_%u", index);
}

static bool make_prims(out_usd* u, const pbd_scene* s) {
	u->prims = calloc((size_t)s->object_count + u->bodies + u->joints + 1, sizeof *u->prims);
	if (!u->prims) return false;
	u->prim_count = s->object_count;
	for (uint32_t k = 0; k < s->object_count; ++k) {
		const pbd_scene_object* o = &s->objects[k];
		usd_prim* p = &u->prims[k];
		make_ident(u->prims, k, o->name);
		if (o->range.triangle_count == 0 && o->line_count > 0) {
			p->kind = PRIM_CURVES;
			if (!make_curves(p, o)) return false;
		} else {
			p->kind = o->range.triangle_count ? PRIM_MESH : PRIM_POINTS;
			p->points = malloc((o->range.particle_count ? o->range.particle_count : 1) * sizeof *p->points);
			if (!p->points) return false;
			p->point_count = o->range.particle_count;
			for (uint32_t i = 0; i < p->point_count; ++i) p->points[i] = o->range.first_particle + i;
		}
		p->lo = UINT32_MAX;
		p->hi = 0;
		for (uint32_t i = 0; i < p->point_count; ++i) {
			if (p->points[i] < p->lo) p->lo = p->points[i];
			if (p->points[i] > p->hi) p->hi = p->points[i];
		}
	}
	/* After the objects': a body's name that an object has too gets a suffix. */
	for (uint32_t k = 0; k < u->bodies; ++k) {
		char name[PBD_SCENE_NAME_MAX + 16];
		out_body_name(s, u->body_id[k], name, sizeof name);
		make_ident(u->prims, s->object_count + k, name);
	}
	for (uint32_t k = 0; k < u->joints; ++k) {
		char name[PBD_SCENE_NAME_MAX + 16];
		joint_name(s, k, name, sizeof name);
		make_ident(u->prims, s->object_count + u->bodies + k, name);
	}
	return true;
}

static void free_usd(out_usd* u) {
	if (!u) return;
	if (u->store) fclose(u->store);
	for (uint32_t k = 0; k < u->prim_count + u->bodies + u->joints && u->prims; ++k) {
		free(u->prims[k].points);
		free(u->prims[k].curve_counts);
	}
	free(u->prims);
	free(u->body_id);
	free(u->joint_def);
	free(u->buf);
	free(u);
}

/* The store an earlier run left, cut after the frame before `start`; false when there is none
 * that fits: another precision or particle count, too few frames, or a frame `start` whose
 * positions are not the world's (the snapshot resumed from was taken at that frame of the run
 * that wrote the store, so they match bit for bit unless the store is another run's). */
static bool reuse_store(out_usd* u, const pbd_scene* s, int start) {
	FILE* fp = fopen(u->store_path, "r+b");
	if (!fp) return false;
	unsigned char h[STORE_HEADER_BYTES];
	struct stat st;
	bool ok = fread(h, 1, sizeof h, fp) == sizeof h && memcmp(h, STORE_MAGIC, 8) == 0 &&
	          get_u32(h + 8) == sizeof(pbd_real) && get_u32(h + 12) == u->particles && get_u32(h + 20) == u->bodies &&
	          get_u32(h + 24) == u->joints && fstat(fileno(fp), &st) == 0;
	const uint32_t first = ok ? get_u32(h + 16) : 0;
	ok = ok && first <= (uint32_t)start;
	const uint64_t rec = record_bytes(u->particles, u->bodies, u->joints);
	const uint64_t keep = STORE_HEADER_BYTES + (ok ? (uint64_t)start - first : 0) * rec;
	ok = ok && (uint64_t)st.st_size >= keep + rec;
	if (ok) ok = fseeko(fp, (off_t)keep, SEEK_SET) == 0 && fread(u->buf, 1, rec, fp) == rec;
	const pbd_vec3* x = pbd_world_positions(s->world);
	for (uint32_t i = 0; ok && i < u->particles; ++i)
		ok = memcmp(&u->buf[3 * (size_t)i], &x[i].x, sizeof(pbd_real)) == 0 &&
		     memcmp(&u->buf[3 * (size_t)i + 1], &x[i].y, sizeof(pbd_real)) == 0 &&
		     memcmp(&u->buf[3 * (size_t)i + 2], &x[i].z, sizeof(pbd_real)) == 0;
	if (ok) ok = fflush(fp) == 0 && ftruncate(fileno(fp), (off_t)keep) == 0 && fseeko(fp, (off_t)keep, SEEK_SET) == 0;
	if (!ok) {
		fclose(fp);
		return false;
	}
	u->store = fp;
	u->first = (int)first;
	return true;
}

bool out_usd_open(const char* dir, const pbd_scene* s, int start, out_usd** out, int* first, pbd_scene_error* err) {
	*out = NULL;
	out_usd* u = calloc(1, sizeof *u);
	if (!u) {
		pbd_scene_error_set(err, "%s: out of memory for the USD output", s->name);
		return false;
	}
	snprintf(u->store_path, sizeof u->store_path, "%s/animation.frames", dir);
	snprintf(u->usda_path, sizeof u->usda_path, "%s/animation.usda", dir);
	u->particles = pbd_world_particle_count(s->world);
	pbd_world_body_poses(s->world, &u->bodies);
	u->joints = pbd_world_joint_count(s->world);
	u->buf = malloc(record_bytes(u->particles, u->bodies, u->joints) + sizeof(pbd_real));
	u->body_id = malloc((u->bodies ? u->bodies : 1) * sizeof *u->body_id);
	u->joint_def = malloc((u->joints ? u->joints : 1) * sizeof *u->joint_def);
	for (uint32_t k = 0; u->body_id && k < u->bodies; ++k) u->body_id[k] = pbd_world_body_at(s->world, k);
	/* Taken now, with the body ids, so that a joint's sides name the Xforms written. */
	for (uint32_t k = 0; u->joint_def && k < u->joints; ++k)
		if (pbd_world_get_joint(s->world, k, &u->joint_def[k]) != PBD_OK) u->joints = k;
	if (!u->buf || !u->body_id || !u->joint_def || !make_prims(u, s)) {
		free_usd(u);
		pbd_scene_error_set(err, "%s: out of memory for the USD output", s->name);
		return false;
	}
	if (start == 0 || !reuse_store(u, s, start)) {
		u->store = fopen(u->store_path, "w+b");
		if (!u->store) {
			pbd_scene_error_set(err, "%s: cannot write: %s", u->store_path, strerror(errno));
			free_usd(u);
			return false;
		}
		unsigned char h[STORE_HEADER_BYTES] = {0};
		memcpy(h, STORE_MAGIC, 8);
		put_u32(h + 8, (uint32_t)sizeof(pbd_real));
		put_u32(h + 12, u->particles);
		put_u32(h + 16, (uint32_t)start);
		put_u32(h + 20, u->bodies);
		put_u32(h + 24, u->joints);
		u->first = start;
		if (fwrite(h, 1, sizeof h, u->store) != sizeof h) {
			pbd_scene_error_set(err, "%s: write failed: %s", u->store_path, strerror(errno));
			out_usd_discard(u, false);
			return false;
		}
	}
	u->next = start;
	*first = u->first;
	*out = u;
	return true;
}

bool out_usd_add_frame(out_usd* u, const pbd_scene* s, pbd_scene_error* err) {
	const pbd_vec3* x = pbd_world_positions(s->world);
	for (uint32_t i = 0; i < u->particles; ++i) {
		u->buf[3 * (size_t)i] = x[i].x;
		u->buf[3 * (size_t)i + 1] = x[i].y;
		u->buf[3 * (size_t)i + 2] = x[i].z;
	}
	/* A slot keeps its last frame once its body is destroyed; bodies made since the start have none. */
	uint32_t slots = 0;
	const pbd_pose* poses = pbd_world_body_poses(s->world, &slots);
	pbd_real* b = u->buf + 3 * (size_t)u->particles;
	for (uint32_t k = 0; k < u->bodies && k < slots; ++k) {
		const pbd_pose p = poses[k];
		const pbd_real r[POSE_REALS] = {p.position.x, p.position.y, p.position.z, p.rotation.x,
		                                p.rotation.y, p.rotation.z, p.rotation.w};
		memcpy(b + POSE_REALS * (size_t)k, r, sizeof r);
	}
	for (uint32_t k = 0; k < u->joints; ++k) {
		pbd_joint_state js;
		const bool broken = pbd_world_get_joint_state(s->world, k, &js) == PBD_OK && js.broken;
		u->buf[joint_offset(u, k)] = broken ? 1 : 0;
	}
	const size_t n = (size_t)joint_offset(u, u->joints);
	if (fwrite(u->buf, sizeof *u->buf, n, u->store) != n) {
		pbd_scene_error_set(err, "%s: write failed: %s", u->store_path, strerror(errno));
		return false;
	}
	u->next++;
	return true;
}

static void write_int_array(FILE* fp, const char* decl, const uint32_t* v, uint32_t n, uint32_t sub, bool same) {
	fprintf(fp, "        %s = [", decl);
	for (uint32_t i = 0; i < n; ++i) fprintf(fp, i ? ", %u" : "%u", same ? v[0] : v[i] - sub);
	fputs("]\n", fp);
}

/* One prim's points at every frame, read back from the store. */
static bool write_samples(FILE* fp, out_usd* u, const usd_prim* p) {
	fputs("        " POINT_TYPE "[] points.timeSamples = {\n", fp);
	const uint64_t rec = record_bytes(u->particles, u->bodies, u->joints);
	const size_t span = p->point_count ? 3 * (size_t)(p->hi - p->lo + 1) : 0;
	for (int f = u->first; f < u->next; ++f) {
		const uint64_t at =
		    STORE_HEADER_BYTES + (uint64_t)(f - u->first) * rec + (uint64_t)p->lo * 3 * sizeof(pbd_real);
		if (span &&
		    (fseeko(u->store, (off_t)at, SEEK_SET) != 0 || fread(u->buf, sizeof *u->buf, span, u->store) != span))
			return false;
		fprintf(fp, "            %d: [", f);
		for (uint32_t i = 0; i < p->point_count; ++i) {
			const pbd_real* q = u->buf + 3 * (size_t)(p->points[i] - p->lo);
			fprintf(fp,
			        i ? ", (" OUT_REAL_FMT ", " OUT_REAL_FMT ", " OUT_REAL_FMT ")"
			          : "(" OUT_REAL_FMT ", " OUT_REAL_FMT ", " OUT_REAL_FMT ")",
			        q[0], q[1], q[2]);
		}
		fputs("],\n", fp);
	}
	fputs("        }\n", fp);
	return true;
}

/* Body slot k's frames at every frame of the store: translate (x, y, z) and orient (w, x, y, z),
 * USD's order for a quaternion. */
static bool write_body_samples(FILE* fp, out_usd* u, uint32_t k, bool orient) {
	fputs(orient ? "        " QUAT_TYPE " xformOp:orient.timeSamples = {\n"
	             : "        double3 xformOp:translate.timeSamples = {\n",
	      fp);
	const uint64_t rec = record_bytes(u->particles, u->bodies, u->joints);
	pbd_real r[POSE_REALS];
	for (int f = u->first; f < u->next; ++f) {
		const uint64_t at = STORE_HEADER_BYTES + (uint64_t)(f - u->first) * rec +
		                    ((uint64_t)u->particles * 3 + (uint64_t)k * POSE_REALS) * sizeof(pbd_real);
		if (fseeko(u->store, (off_t)at, SEEK_SET) != 0 || fread(r, sizeof *r, POSE_REALS, u->store) != POSE_REALS)
			return false;
		if (orient)
			fprintf(fp, "            %d: (" OUT_REAL_FMT ", " OUT_REAL_FMT ", " OUT_REAL_FMT ", " OUT_REAL_FMT "),\n",
			        f, r[6], r[3], r[4], r[5]);
		else
			fprintf(fp, "            %d: (" OUT_REAL_FMT ", " OUT_REAL_FMT ", " OUT_REAL_FMT "),\n", f, r[0], r[1],
			        r[2]);
	}
	fputs("        }\n", fp);
	return true;
}

/* An Xform per body, its frame sampled at every frame, with the shapes it carries (in its frame)
 * as a Mesh child. */
static bool write_body(FILE* fp, out_usd* u, const pbd_scene* s, uint32_t k) {
	const pbd_body_id id = u->body_id[k];
	fprintf(fp, "\n    def Xform \"%s\"\n    {\n        custom uint pbd:body = %u\n", u->prims[u->prim_count + k].ident,
	        id.index1);
	if (!write_body_samples(fp, u, k, false) || !write_body_samples(fp, u, k, true)) return false;
	fputs("        uniform token[] xformOpOrder = [\"xformOp:translate\", \"xformOp:orient\"]\n", fp);
	out_mesh m;
	memset(&m, 0, sizeof m);
	bool ok = out_body_mesh(s, id, false, &m);
	if (ok && m.nt) {
		fputs("\n        def Mesh \"shapes\"\n        {\n", fp);
		const uint32_t three = 3;
		write_int_array(fp, "    int[] faceVertexCounts", &three, m.nt, 0, true);
		write_int_array(fp, "    int[] faceVertexIndices", m.tri, 3 * m.nt, 0, false);
		fputs("            uniform token orientation = \"rightHanded\"\n            " POINT_TYPE "[] points = [", fp);
		for (uint32_t i = 0; i < m.nv; ++i)
			fprintf(fp,
			        i ? ", (" OUT_REAL_FMT ", " OUT_REAL_FMT ", " OUT_REAL_FMT ")"
			          : "(" OUT_REAL_FMT ", " OUT_REAL_FMT ", " OUT_REAL_FMT ")",
			        m.v[i].x, m.v[i].y, m.v[i].z);
		fputs("]\n            uniform token subdivisionScheme = \"none\"\n        }\n", fp);
	}
	out_mesh_free(&m);
	fputs("    }\n", fp);
	return ok;
}

/* Whether joint k is broken at frame f of the store; false when the store cannot be read. */
static bool read_broken(out_usd* u, uint32_t k, int f, bool* broken) {
	const uint64_t at = STORE_HEADER_BYTES +
	                    (uint64_t)(f - u->first) * record_bytes(u->particles, u->bodies, u->joints) +
	                    joint_offset(u, k) * sizeof(pbd_real);
	pbd_real r;
	if (fseeko(u->store, (off_t)at, SEEK_SET) != 0 || fread(&r, sizeof r, 1, u->store) != 1) return false;
	*broken = r != 0;
	return true;
}

/* physics:jointEnabled: nothing for a joint that held throughout (the schema's default is
 * true), 0 for one broken throughout, else a sample at the first frame and at every change (a
 * bool is held between samples). */
static bool write_joint_enabled(FILE* fp, out_usd* u, uint32_t k) {
	bool first = false, changes = false;
	for (int f = u->first; f < u->next; ++f) {
		bool b;
		if (!read_broken(u, k, f, &b)) return false;
		if (f == u->first)
			first = b;
		else if (b != first)
			changes = true;
	}
	if (!changes) {
		if (first && u->next > u->first) fputs("        bool physics:jointEnabled = 0\n", fp);
		return true;
	}
	fputs("        bool physics:jointEnabled.timeSamples = {\n", fp);
	bool last = false;
	for (int f = u->first; f < u->next; ++f) {
		bool b;
		if (!read_broken(u, k, f, &b)) return false;
		if (f == u->first || b != last) fprintf(fp, "            %d: %d,\n", f, b ? 0 : 1);
		last = b;
	}
	fputs("        }\n", fp);
	return true;
}

/* physics:body0 (side 0, a) or body1: the Xform of the body written, none for the world. */
static void write_joint_body(FILE* fp, const out_usd* u, int side, pbd_body_id id) {
	const uint32_t slot = id.index1 - 1;
	if (id.index1 == 0 || slot >= u->bodies || u->body_id[slot].index1 != id.index1 ||
	    u->body_id[slot].generation != id.generation)
		return;
	fprintf(fp, "        rel physics:body%d = </World/%s>\n", side, u->prims[u->prim_count + slot].ident);
}

static void write_joint_frame(FILE* fp, int side, pbd_pose p) {
	fprintf(fp, "        point3f physics:localPos%d = (" OUT_REAL_FMT ", " OUT_REAL_FMT ", " OUT_REAL_FMT ")\n", side,
	        p.position.x, p.position.y, p.position.z);
	fprintf(fp,
	        "        quatf physics:localRot%d = (" OUT_REAL_FMT ", " OUT_REAL_FMT ", " OUT_REAL_FMT ", " OUT_REAL_FMT
	        ")\n",
	        side, p.rotation.w, p.rotation.x, p.rotation.y, p.rotation.z);
}

/* A float attribute of the schema: the value as the float it is read back as. */
static void write_float(FILE* fp, const char* decl, double v) {
	fprintf(fp, "        %s = %.9g\n", decl, (double)(float)v);
}

/* Joint k as the UsdPhysics joint prim of its type, its sides' frames in the bodies' Xforms
 * (UsdPhysics' localPos/localRot), the x axis its axis. */
static bool write_joint(FILE* fp, out_usd* u, uint32_t k) {
	static const char* const types[PBD_JOINT_TYPE_COUNT] = {
	    [PBD_JOINT_FIXED] = "PhysicsFixedJoint",       [PBD_JOINT_BALL] = "PhysicsSphericalJoint",
	    [PBD_JOINT_HINGE] = "PhysicsRevoluteJoint",    [PBD_JOINT_PRISMATIC] = "PhysicsPrismaticJoint",
	    [PBD_JOINT_DISTANCE] = "PhysicsDistanceJoint",
	};
	const pbd_joint_def* d = &u->joint_def[k];
	if ((unsigned)d->type >= PBD_JOINT_TYPE_COUNT) return true;
	fprintf(fp, "\n    def %s \"%s\"\n    {\n        custom uint pbd:joint = %u\n", types[d->type],
	        u->prims[u->prim_count + u->bodies + k].ident, k);
	write_joint_body(fp, u, 0, d->body_a);
	write_joint_body(fp, u, 1, d->body_b);
	write_joint_frame(fp, 0, d->frame_a);
	write_joint_frame(fp, 1, d->frame_b);
	/* Only the types whose schema has an axis; pbd's is always the frames' x. */
	if (d->type == PBD_JOINT_BALL || d->type == PBD_JOINT_HINGE || d->type == PBD_JOINT_PRISMATIC)
		fputs("        uniform token physics:axis = \"X\"\n", fp);
	if (d->type == PBD_JOINT_HINGE && d->limit) {
		write_float(fp, "float physics:lowerLimit", (double)d->lower * DEG_PER_RAD);
		write_float(fp, "float physics:upperLimit", (double)d->upper * DEG_PER_RAD);
	} else if (d->type == PBD_JOINT_PRISMATIC && d->limit) {
		write_float(fp, "float physics:lowerLimit", (double)d->lower);
		write_float(fp, "float physics:upperLimit", (double)d->upper);
	} else if (d->type == PBD_JOINT_DISTANCE) {
		write_float(fp, "float physics:minDistance", (double)d->lower);
		write_float(fp, "float physics:maxDistance", (double)d->upper);
	} else if (d->type == PBD_JOINT_BALL) {
		/* The swing bounds the angle between the x axes: a round cone, both of the schema's angles.
		 * The schema's spherical joint has no twist limit, so pbd's goes in attributes of its own. */
		if ((double)d->swing < 3.14159265358979323846) {
			write_float(fp, "float physics:coneAngle0Limit", (double)d->swing * DEG_PER_RAD);
			write_float(fp, "float physics:coneAngle1Limit", (double)d->swing * DEG_PER_RAD);
		}
		if (d->limit) {
			write_float(fp, "custom float pbd:twistLowerLimit", (double)d->lower * DEG_PER_RAD);
			write_float(fp, "custom float pbd:twistUpperLimit", (double)d->upper * DEG_PER_RAD);
		}
	}
	/* pbd's 0 is never, the schema's default inf. */
	if (d->break_force > 0) write_float(fp, "float physics:breakForce", (double)d->break_force);
	if (d->break_torque > 0) write_float(fp, "float physics:breakTorque", (double)d->break_torque);
	if (!write_joint_enabled(fp, u, k)) return false;
	fputs("    }\n", fp);
	return true;
}

/* Frames per second: 1/dt, as the whole number it is meant to be when dt is the scalar nearest
 * to 1/60 or 1/240 (printing 59.999997 would only hide the scene's intent). */
double out_usd_frame_rate(const pbd_scene* s) {
	const double fps = 1.0 / (double)pbd_world_get_def(s->world).dt;
	const double whole = floor(fps + 0.5);
	return fabs(fps - whole) <= 1e-6 * fps ? whole : fps;
}

static bool write_usda(FILE* fp, out_usd* u, const pbd_scene* s) {
	const double fps = out_usd_frame_rate(s);
	const int last = u->next - 1;
	fprintf(fp,
	        "#usda 1.0\n(\n    defaultPrim = \"World\"\n    doc = \"pbd scene %s, frames %d to %d\"\n"
	        "    endTimeCode = %d\n    framesPerSecond = %.17g\n    metersPerUnit = 1\n    startTimeCode = %d\n"
	        "    timeCodesPerSecond = %.17g\n    upAxis = \"Y\"\n)\n\ndef Xform \"World\"\n{\n",
	        s->name, u->first, last, last, fps, u->first, fps);
	const uint32_t* tri = pbd_world_triangles(s->world);
	for (uint32_t k = 0; k < u->prim_count; ++k) {
		const pbd_scene_object* o = &s->objects[k];
		const usd_prim* p = &u->prims[k];
		static const char* const types[] = {"Mesh", "BasisCurves", "Points"};
		fprintf(fp, "%s    def %s \"%s\"\n    {\n", k ? "\n" : "", types[p->kind], p->ident);
		/* The world particle of every point, so a reader can match the points with state.txt. */
		write_int_array(fp, "custom uint[] pbd:particles", p->points, p->point_count, 0, false);
		if (p->kind == PRIM_MESH) {
			const uint32_t three = 3;
			write_int_array(fp, "int[] faceVertexCounts", &three, o->range.triangle_count, 0, true);
			write_int_array(fp, "int[] faceVertexIndices", tri + 3 * (size_t)o->range.first_triangle,
			                3 * o->range.triangle_count, o->range.first_particle, false);
			fputs("        uniform token orientation = \"rightHanded\"\n"
			      "        uniform token subdivisionScheme = \"none\"\n",
			      fp);
		} else if (p->kind == PRIM_CURVES) {
			write_int_array(fp, "int[] curveVertexCounts", p->curve_counts, p->curve_count, 0, false);
			fputs("        uniform token type = \"linear\"\n        uniform token wrap = \"nonperiodic\"\n", fp);
		}
		if (!write_samples(fp, u, p)) return false;
		fputs("    }\n", fp);
	}
	for (uint32_t k = 0; k < u->bodies; ++k)
		if (u->body_id[k].index1 && !write_body(fp, u, s, k)) return false;
	for (uint32_t k = 0; k < u->joints; ++k)
		if (!write_joint(fp, u, k)) return false;
	fputs("}\n", fp);
	return true;
}

bool out_usd_finish(out_usd* u, const pbd_scene* s, bool keep_store, pbd_scene_error* err) {
	if (fflush(u->store) != 0 || ferror(u->store)) {
		pbd_scene_error_set(err, "%s: write failed: %s", u->store_path, strerror(errno));
		out_usd_discard(u, keep_store);
		return false;
	}
	char tmp[4300];
	snprintf(tmp, sizeof tmp, "%s.tmp", u->usda_path);
	FILE* fp = fopen(tmp, "wb");
	if (!fp) {
		pbd_scene_error_set(err, "%s: cannot write: %s", tmp, strerror(errno));
		out_usd_discard(u, keep_store);
		return false;
	}
	const bool read_ok = write_usda(fp, u, s);
	bool ok = read_ok && ferror(fp) == 0;
	if (fclose(fp) != 0) ok = false;
	if (ok && rename(tmp, u->usda_path) != 0) ok = false;
	if (!ok) {
		if (!read_ok)
			pbd_scene_error_set(err, "%s: cannot read back the frames", u->store_path);
		else
			pbd_scene_error_set(err, "%s: write failed: %s", u->usda_path, strerror(errno));
		unlink(tmp);
	}
	out_usd_discard(u, keep_store);
	return ok;
}

void out_usd_discard(out_usd* u, bool keep_store) {
	if (!u) return;
	if (u->store) fclose(u->store);
	u->store = NULL;
	if (!keep_store) unlink(u->store_path);
	free_usd(u);
}

/* The number of points of an object's prim (see make_prims). */
static uint64_t object_points(const pbd_scene_object* o) {
	return o->range.triangle_count == 0 && o->line_count > 0 ? 2ull * o->line_count : o->range.particle_count;
}

uint64_t out_usd_frame_bytes(const pbd_scene* s) {
	uint32_t slots = 0;
	pbd_world_body_poses(s->world, &slots);
	const uint32_t joints = pbd_world_joint_count(s->world);
	uint64_t bytes = record_bytes(pbd_world_particle_count(s->world), slots, joints);
	/* "            <frame>: (x, y, z),\n" and the same with 4 numbers, per body; "<frame>: 0,", per joint */
	bytes += (uint64_t)slots * (2 * (12 + 11 + 5) + 7 * (OUT_REAL_WIDTH + 2)) + (uint64_t)joints * (12 + 11 + 4);
	/* "            <frame>: [" ... "],\n", each point "(x, y, z)" and ", " */
	for (uint32_t k = 0; k < s->object_count; ++k)
		bytes += 12 + 9 + 3 + 3 + object_points(&s->objects[k]) * (3 * OUT_REAL_WIDTH + 8);
	return bytes;
}

uint64_t out_usd_fixed_bytes(const pbd_scene* s, int frames) {
	const uint64_t index = out_digits(pbd_world_particle_count(s->world)) + 2; /* "123, " */
	uint64_t bytes = STORE_HEADER_BYTES + 400 + 2 * strlen(s->name) + 4 * out_digits((uint64_t)frames) + 2 * 24;
	for (uint32_t k = 0; k < s->object_count; ++k) {
		const pbd_scene_object* o = &s->objects[k];
		bytes += 400 + 2 * PBD_SCENE_NAME_MAX + object_points(o) * index;
		bytes += (uint64_t)o->range.triangle_count * (3 + 3 * index) + (uint64_t)o->line_count * index;
	}
	/* Each body's Xform and the Mesh of its shapes. */
	uint32_t slots = 0;
	pbd_world_body_poses(s->world, &slots);
	uint64_t nv, nt;
	out_bodies_mesh_size(s, &nv, &nt);
	bytes += (uint64_t)slots * 800 + nv * (3 * OUT_REAL_WIDTH + 8) + nt * (3 + 3 * (out_digits(nv) + 2));
	/* Each joint's prim: its name and its bodies', its two frames' 14 numbers, limits and break bounds. */
	bytes +=
	    (uint64_t)pbd_world_joint_count(s->world) * (1000 + 3 * (PBD_SCENE_NAME_MAX + 16) + 14 * (OUT_REAL_WIDTH + 2));
	return bytes;
}
