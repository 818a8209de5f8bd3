/* The rigid bodies in `pbd run`'s files (app/output*.c, compiled in): a world with particles and
 * one dynamic body carrying a box, a ball and a capsule is written for 12 frames as OBJ, VTK and
 * USD, and every frame's transform read back from each file is pbd_body_get_state's, bit for bit;
 * the shapes drawn in the OBJ sit where pbd_collider_get_pose puts them; the shapes' triangles
 * face outward; a USD run resumed from its frame store keeps the bodies' samples. With a second
 * body and two joints, one broken by hand at frame 5, each VTK frame's joints file holds the
 * anchors and pbd_world_get_joint_state's numbers, bit for bit, and the USD the UsdPhysics prims
 * with the defs' frames and limits, and physics:jointEnabled turning off at frame 5. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output.h"
#include "output_usd.h"
#include "output_vtk.h"
#include "test_util.h"

#define FRAMES 12

typedef struct fixture {
	pbd_world* world;
	pbd_scene scene;
	pbd_collider_id shapes[3];
	pbd_body_id body;
	char dir[64];
} fixture;

static void make_world(fixture* f) {
	memset(f, 0, sizeof *f);
	pbd_world_def def = pbd_world_def_default();
	def.gravity = pbd_v3(0, (pbd_real)-9.81, 0);
	f->world = test_world(&def);
	const pbd_vec3 x[3] = {{0, 3, 0}, {1, 3, 0}, {2, 3, 0}};
	const pbd_real w[3] = {1, 1, 1};
	assert_int_equal(pbd_world_add_particles(f->world, 3, x, NULL, w, NULL), PBD_OK);
	pbd_body_def bd = pbd_body_def_default();
	bd.type = PBD_BODY_DYNAMIC;
	bd.pose.position = pbd_v3((pbd_real)0.5, 2, (pbd_real)-0.3);
	bd.pose.rotation = pbd_quat_axis_angle(pbd_v3(1, 2, 3), (pbd_real)0.7);
	bd.velocity = pbd_v3(1, 2, (pbd_real)0.5);
	bd.angular_velocity = pbd_v3((pbd_real)0.3, 2, -1);
	/* Matter off the origin and off the axes, so that the frame and the centre differ. */
	bd.mass = (pbd_mass_properties){3, {0.1, -0.05, 0.02}, {0.3, 0.4, 0.5, 0.02, -0.01, 0.03}};
	f->body = pbd_body_create(f->world, &bd);
	assert_true(pbd_body_is_valid(f->world, f->body));
	pbd_collider_def c = pbd_collider_def_default();
	c.body = f->body;
	c.type = PBD_SHAPE_BOX;
	c.shape.box.half_extents = pbd_v3((pbd_real)0.2, (pbd_real)0.1, (pbd_real)0.3);
	c.pose.position = pbd_v3((pbd_real)0.1, 0, 0);
	c.pose.rotation = pbd_quat_axis_angle(pbd_v3(0, 1, 0), (pbd_real)0.4);
	f->shapes[0] = pbd_collider_create(f->world, &c);
	c = pbd_collider_def_default();
	c.body = f->body;
	c.type = PBD_SHAPE_SPHERE;
	c.shape.sphere.center = pbd_v3(0, (pbd_real)0.2, 0);
	c.shape.sphere.radius = (pbd_real)0.15;
	f->shapes[1] = pbd_collider_create(f->world, &c);
	c = pbd_collider_def_default();
	c.body = f->body;
	c.type = PBD_SHAPE_CAPSULE;
	c.shape.capsule.radius = (pbd_real)0.05;
	c.shape.capsule.half_height = (pbd_real)0.2;
	c.pose.position = pbd_v3(0, 0, (pbd_real)0.4);
	c.pose.rotation = pbd_quat_axis_angle(pbd_v3(1, 0, 0), (pbd_real)1.2);
	f->shapes[2] = pbd_collider_create(f->world, &c);
	for (int k = 0; k < 3; ++k) assert_true(pbd_collider_is_valid(f->world, f->shapes[k]));
	snprintf(f->scene.name, sizeof f->scene.name, "bodies");
	f->scene.world = f->world;
	f->scene.colliders = f->shapes;
	f->scene.collider_count = 3;
	snprintf(f->dir, sizeof f->dir, "/tmp/pbd_output_bodies_XXXXXX");
	assert_non_null(mkdtemp(f->dir));
}

static void remove_dir(const char* dir) {
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static char* slurp(const char* path) {
	FILE* fp = fopen(path, "rb");
	if (!fp) fail_msg("cannot read %s", path);
	fseek(fp, 0, SEEK_END);
	const long n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	char* text = malloc((size_t)n + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)n, fp), (size_t)n);
	text[n] = '\0';
	fclose(fp);
	return text;
}

/* n numbers from p on, separated by spaces, commas or brackets; the end in *end. */
static void numbers(const char* p, int n, double* out, const char** end) {
	for (int k = 0; k < n; ++k) {
		while (*p == ' ' || *p == ',' || *p == '(' || *p == '\n') ++p;
		char* e;
		out[k] = strtod(p, &e);
		if (e == p) fail_msg("expected a number at '%.30s'", p);
		p = e;
	}
	if (end) *end = p;
}

/* Read back as the scalar, a printed number is the number written (every writer prints the
 * digits that round-trip). */
static void assert_same(const double* got, const pbd_real* want, int n, const char* what, int frame) {
	for (int k = 0; k < n; ++k)
		if ((pbd_real)got[k] != want[k])
			fail_msg("%s, frame %d: component %d is %.17g, pbd_body_get_state says %.17g", what, frame, k, got[k],
			         (double)want[k]);
}

static void pose_reals(pbd_pose p, pbd_real* out) {
	const pbd_real r[7] = {p.position.x, p.position.y, p.position.z, p.rotation.x,
	                       p.rotation.y, p.rotation.z, p.rotation.w};
	memcpy(out, r, sizeof r);
}

/* `now`: the world is still at this frame, so its shapes can be checked against the colliders. */
static void check_obj(const fixture* f, int frame, const pbd_body_state* want, bool now) {
	char path[256];
	out_frame_path(path, sizeof path, f->dir, frame, OUT_FORMAT_OBJ);
	char* text = slurp(path);
	const char* p = strstr(text, "# body 1 pose ");
	assert_non_null(p);
	double got[7];
	numbers(p + strlen("# body 1 pose "), 7, got, NULL);
	pbd_real exp[7];
	pose_reals(want->pose, exp);
	assert_same(got, exp, 7, "OBJ", frame);
	/* The box comes first: its 8 corners where its world frame puts them. */
	p = strstr(p, "\no body_1\n");
	assert_non_null(p);
	if (now) {
		pbd_pose box;
		pbd_collider_def d;
		assert_int_equal(pbd_collider_get_pose(f->world, f->shapes[0], &box), PBD_OK);
		assert_int_equal(pbd_collider_get_def(f->world, f->shapes[0], &d), PBD_OK);
		const pbd_vec3 h = d.shape.box.half_extents;
		p = strstr(p, "\nv ");
		for (int i = 0; i < 8; ++i) {
			assert_non_null(p);
			double v[3];
			numbers(p + 3, 3, v, NULL);
			const pbd_vec3 e = pbd_pose_apply(box, pbd_v3(i & 1 ? h.x : -h.x, i & 2 ? h.y : -h.y, i & 4 ? h.z : -h.z));
			assert_near(v[0], e.x, 1e-5);
			assert_near(v[1], e.y, 1e-5);
			assert_near(v[2], e.z, 1e-5);
			p = strstr(p + 1, "\nv ");
		}
	}
	/* Faces name the shapes' vertices, numbered after the 3 particles'. */
	uint32_t vcount = 0, lo = UINT32_MAX, hi = 0, faces = 0;
	for (const char* q = text; (q = strchr(q, '\n')) != NULL; ++q) {
		if (q[1] == 'v' && q[2] == ' ') ++vcount;
		if (q[1] != 'f' || q[2] != ' ') continue;
		double ids[3];
		numbers(q + 3, 3, ids, NULL);
		for (int k = 0; k < 3; ++k) {
			lo = ids[k] < lo ? (uint32_t)ids[k] : lo;
			hi = ids[k] > hi ? (uint32_t)ids[k] : hi;
		}
		++faces;
	}
	uint64_t nv, nt;
	out_bodies_mesh_size(&f->scene, &nv, &nt);
	assert_int_equal(vcount, 3 + nv);
	assert_int_equal(faces, nt);
	assert_int_equal(lo, 4);
	assert_int_equal(hi, 3 + nv);
	free(text);
}

static void check_vtk(const fixture* f, int frame, const pbd_body_state* want) {
	char path[256];
	out_vtk_bodies_path(path, sizeof path, f->dir, frame);
	char* text = slurp(path);
	uint64_t nv, nt;
	out_bodies_mesh_size(&f->scene, &nv, &nt);
	char piece[160];
	snprintf(piece, sizeof piece, "NumberOfPoints=\"%llu\" NumberOfVerts=\"1\"", (unsigned long long)(1 + nv));
	assert_non_null(strstr(text, piece));
	const char* p = strstr(text, "Name=\"Points\"");
	assert_non_null(p);
	double got[4];
	numbers(strchr(p, '\n'), 3, got, NULL);
	assert_same(got, &want->pose.position.x, 3, "VTK position", frame);
	p = strstr(text, "Name=\"orientation\"");
	assert_non_null(p);
	numbers(strchr(p, '\n'), 4, got, NULL);
	assert_same(got, &want->pose.rotation.x, 4, "VTK orientation", frame);
	/* The velocity of the body's matter at its frame's origin. */
	p = strstr(text, "Name=\"velocity\"");
	assert_non_null(p);
	numbers(strchr(p, '\n'), 3, got, NULL);
	const pbd_vec3 v =
	    pbd_v3_add(want->velocity, pbd_v3_cross(want->angular_velocity, pbd_v3_sub(want->pose.position, want->center)));
	assert_near(got[0], v.x, 1e-5);
	assert_near(got[1], v.y, 1e-5);
	assert_near(got[2], v.z, 1e-5);
	free(text);
}

/* The sample of `frame` in the body's translate or orient samples of animation.usda. */
static void usd_sample(const char* text, const char* attr, int frame, int n, double* out) {
	const char* p = strstr(text, attr);
	if (!p) fail_msg("no %s in animation.usda", attr);
	char key[32];
	snprintf(key, sizeof key, "\n            %d: (", frame);
	const char* end = strstr(p, "\n        }");
	p = strstr(p, key);
	if (!p || p > end) fail_msg("%s: no sample at frame %d", attr, frame);
	numbers(p + strlen(key), n, out, NULL);
}

static void check_usd(const fixture* f, const pbd_body_state* want, int first, int last) {
	char path[256];
	snprintf(path, sizeof path, "%s/animation.usda", f->dir);
	char* text = slurp(path);
	assert_non_null(strstr(text, "def Xform \"body_1\""));
	assert_non_null(strstr(text, "custom uint pbd:body = 1"));
	assert_non_null(strstr(text, "uniform token[] xformOpOrder = [\"xformOp:translate\", \"xformOp:orient\"]"));
	assert_non_null(strstr(text, "def Mesh \"shapes\""));
	for (int frame = first; frame <= last; ++frame) {
		double got[4];
		usd_sample(text, "double3 xformOp:translate.timeSamples", frame, 3, got);
		assert_same(got, &want[frame].pose.position.x, 3, "USD translate", frame);
		usd_sample(text, "xformOp:orient.timeSamples", frame, 4, got);
		const pbd_quat q = want[frame].pose.rotation;
		const pbd_real wxyz[4] = {q.w, q.x, q.y, q.z}; /* USD writes the real part first */
		assert_same(got, wxyz, 4, "USD orient", frame);
	}
	free(text);
}

static void test_frames_match_the_state(void** state) {
	(void)state;
	fixture f;
	make_world(&f);
	pbd_scene_error err;
	out_usd* usd = NULL;
	int first = -1;
	assert_true(out_usd_open(f.dir, &f.scene, 0, &usd, &first, &err));
	assert_int_equal(first, 0);
	pbd_body_state want[FRAMES + 4];
	for (int frame = 0; frame <= FRAMES; ++frame) {
		if (frame > 0) assert_int_equal(pbd_world_step(f.world), PBD_OK);
		assert_int_equal(pbd_body_get_state(f.world, f.body, &want[frame]), PBD_OK);
		char path[256];
		out_frame_path(path, sizeof path, f.dir, frame, OUT_FORMAT_OBJ);
		if (!out_write_frame(path, OUT_FORMAT_OBJ, &f.scene, frame, &err)) fail_msg("%s", err.message);
		out_frame_path(path, sizeof path, f.dir, frame, OUT_FORMAT_VTK);
		if (!out_write_frame(path, OUT_FORMAT_VTK, &f.scene, frame, &err)) fail_msg("%s", err.message);
		if (!out_usd_add_frame(usd, &f.scene, &err)) fail_msg("%s", err.message);
	}
	/* The body moved and turned: the frames are not all one. */
	assert_true(want[FRAMES].pose.position.y != want[0].pose.position.y);
	assert_true(want[FRAMES].pose.rotation.w != want[0].pose.rotation.w);
	for (int frame = 0; frame <= FRAMES; ++frame) {
		check_obj(&f, frame, &want[frame], frame == FRAMES);
		check_vtk(&f, frame, &want[frame]);
	}
	if (!out_usd_finish(usd, &f.scene, true, &err)) fail_msg("%s", err.message);
	check_usd(&f, want, 0, FRAMES);
	if (!out_vtk_write_index(f.dir, FRAMES, (double)pbd_world_get_def(f.world).dt, &err)) fail_msg("%s", err.message);
	char path[256];
	snprintf(path, sizeof path, "%s/animation.pvd", f.dir);
	char* pvd = slurp(path);
	assert_non_null(strstr(pvd, "part=\"1\" file=\"bodies_00000.vtp\""));
	assert_non_null(strstr(pvd, "part=\"1\" file=\"bodies_00012.vtp\""));
	free(pvd);

	/* Resumed at the last frame from the kept store: the earlier samples stay, the new follow. */
	assert_true(out_usd_open(f.dir, &f.scene, FRAMES, &usd, &first, &err));
	assert_int_equal(first, 0);
	for (int frame = FRAMES; frame <= FRAMES + 3; ++frame) {
		if (frame > FRAMES) assert_int_equal(pbd_world_step(f.world), PBD_OK);
		assert_int_equal(pbd_body_get_state(f.world, f.body, &want[frame]), PBD_OK);
		if (!out_usd_add_frame(usd, &f.scene, &err)) fail_msg("%s", err.message);
	}
	if (!out_usd_finish(usd, &f.scene, false, &err)) fail_msg("%s", err.message);
	check_usd(&f, want, 0, FRAMES + 3);

	/* A new run clears the bodies' files with the frames. */
	unsigned removed = 0;
	assert_true(out_clear_frames(f.dir, -1, &removed, &err));
	assert_int_equal(removed, 3 * (FRAMES + 1));
	remove_dir(f.dir);
	pbd_world_destroy(f.world);
}

/* Every triangle of a ball, a capsule and a box faces away from the shape's axis. */
static void test_shapes_face_outward(void** state) {
	(void)state;
	fixture f;
	make_world(&f);
	out_mesh m;
	memset(&m, 0, sizeof m);
	assert_true(out_body_mesh(&f.scene, f.body, false, &m));
	uint64_t nv, nt;
	out_bodies_mesh_size(&f.scene, &nv, &nt);
	assert_int_equal(m.nv, nv);
	assert_int_equal(m.nt, nt);
	assert_int_equal(nt,
	                 12 + 2 * OUT_ROUND_SEGMENTS * (OUT_ROUND_RINGS - 1) + 2 * OUT_ROUND_SEGMENTS * OUT_ROUND_RINGS);
	/* In the body's frame; each shape's triangles in turn (box, ball, capsule). */
	const uint32_t ends[3] = {12, 12 + 2 * OUT_ROUND_SEGMENTS * (OUT_ROUND_RINGS - 1), m.nt};
	uint32_t t = 0;
	for (int k = 0; k < 3; ++k) {
		pbd_collider_def d;
		assert_int_equal(pbd_collider_get_def(f.world, f.shapes[k], &d), PBD_OK);
		for (; t < ends[k]; ++t) {
			const pbd_vec3 a = m.v[m.tri[3 * t]], b = m.v[m.tri[3 * t + 1]], c = m.v[m.tri[3 * t + 2]];
			const pbd_vec3 n = pbd_v3_cross(pbd_v3_sub(b, a), pbd_v3_sub(c, a));
			/* From the nearest point of the shape's core (its centre, or the capsule's segment). */
			const pbd_vec3 mid =
			    pbd_pose_apply_inverse(d.pose, pbd_v3_scale(pbd_v3_add(pbd_v3_add(a, b), c), (pbd_real)(1.0 / 3)));
			pbd_vec3 core = k == 1 ? d.shape.sphere.center : pbd_v3(0, 0, 0);
			if (k == 2) {
				const pbd_real hh = d.shape.capsule.half_height;
				core.y = mid.y > hh ? hh : mid.y < -hh ? -hh : mid.y;
			}
			const pbd_vec3 out = pbd_quat_rotate(d.pose.rotation, pbd_v3_sub(mid, core));
			if (!(pbd_v3_dot(n, out) > 0)) fail_msg("shape %d, triangle %u faces inward", k, t - (k ? ends[k - 1] : 0));
		}
	}
	out_mesh_free(&m);
	remove_dir(f.dir);
	pbd_world_destroy(f.world);
}

/* ---- joints ------------------------------------------------------------------------------ */

#define BREAK_AT 5

typedef struct joint_frame {
	pbd_joint_state state[2];
	pbd_vec3 anchor[2][2]; /* joint, side */
} joint_frame;

/* A second body below the first, a hinge from the world to the first (limited, breakable by
 * force) and a ball joint between the two (swing and twist limits), both starting together. */
static void add_joints(fixture* f, pbd_joint_def* defs) {
	pbd_body_def bd = pbd_body_def_default();
	bd.type = PBD_BODY_DYNAMIC;
	bd.pose.position = pbd_v3((pbd_real)0.9, (pbd_real)1.4, (pbd_real)-0.2);
	bd.mass = (pbd_mass_properties){1, {0, 0, 0}, {0.1, 0.1, 0.1, 0, 0, 0}};
	const pbd_body_id second = pbd_body_create(f->world, &bd);
	assert_true(pbd_body_is_valid(f->world, second));
	pbd_body_state a;
	assert_int_equal(pbd_body_get_state(f->world, f->body, &a), PBD_OK);
	const pbd_vec3 pivot = pbd_v3((pbd_real)0.5, (pbd_real)2.4, (pbd_real)-0.3);
	defs[0] = pbd_joint_def_default();
	defs[0].type = PBD_JOINT_HINGE;
	defs[0].body_b = f->body;
	defs[0].frame_a.position = pivot;
	defs[0].frame_a.rotation = pbd_quat_axis_angle(pbd_v3(0, 0, 1), (pbd_real)0.3);
	defs[0].frame_b.position = pbd_pose_apply_inverse(a.pose, pivot);
	defs[0].frame_b.rotation = pbd_quat_mul(pbd_quat_conj(a.pose.rotation), defs[0].frame_a.rotation);
	defs[0].limit = true;
	defs[0].lower = (pbd_real)-0.5;
	defs[0].upper = (pbd_real)0.8;
	defs[0].break_force = 1e6;
	const pbd_vec3 knot = pbd_v3((pbd_real)0.7, (pbd_real)1.7, (pbd_real)-0.25);
	defs[1] = pbd_joint_def_default();
	defs[1].type = PBD_JOINT_BALL;
	defs[1].body_a = f->body;
	defs[1].body_b = second;
	defs[1].frame_a.position = pbd_pose_apply_inverse(a.pose, knot);
	defs[1].frame_a.rotation = pbd_quat_conj(a.pose.rotation);
	defs[1].frame_b.position = pbd_pose_apply_inverse(bd.pose, knot);
	defs[1].swing = (pbd_real)1.2;
	defs[1].limit = true;
	defs[1].lower = (pbd_real)-0.3;
	defs[1].upper = (pbd_real)0.4;
	uint32_t first = 99;
	assert_int_equal(pbd_world_add_joints(f->world, 2, defs, &first), PBD_OK);
	assert_int_equal(first, 0);
}

static void record_joints(const fixture* f, joint_frame* jf) {
	for (uint32_t k = 0; k < 2; ++k) {
		pbd_joint_def d;
		assert_int_equal(pbd_world_get_joint(f->world, k, &d), PBD_OK);
		assert_int_equal(pbd_world_get_joint_state(f->world, k, &jf->state[k]), PBD_OK);
		const pbd_body_id side[2] = {d.body_a, d.body_b};
		const pbd_pose frame[2] = {d.frame_a, d.frame_b};
		for (int s = 0; s < 2; ++s) {
			jf->anchor[k][s] = frame[s].position;
			pbd_body_state st;
			if (side[s].index1) {
				assert_int_equal(pbd_body_get_state(f->world, side[s], &st), PBD_OK);
				jf->anchor[k][s] = pbd_pose_apply(st.pose, frame[s].position);
			}
		}
	}
}

/* The numbers of the DataArray `name` of a joints file, n of them. */
static void vtk_array(const char* text, const char* name, int n, double* out) {
	char key[64];
	snprintf(key, sizeof key, "Name=\"%s\"", name);
	const char* p = strstr(text, key);
	if (!p) fail_msg("no array %s in the joints file", name);
	const char* end;
	numbers(strchr(p, '\n'), n, out, &end);
	while (*end == '\n' || *end == ' ') ++end;
	if (strncmp(end, "</DataArray>", 12) != 0) fail_msg("array %s has more than %d numbers", name, n);
}

static void check_vtk_joints(const fixture* f, int frame, const joint_frame* want) {
	char path[256];
	out_vtk_joints_path(path, sizeof path, f->dir, frame);
	char* text = slurp(path);
	assert_true(strlen(text) <= out_vtk_joints_bytes(&f->scene, frame));
	assert_non_null(strstr(text, "NumberOfPoints=\"4\" NumberOfVerts=\"0\" NumberOfLines=\"2\" "
	                             "NumberOfStrips=\"0\" NumberOfPolys=\"0\""));
	double got[12];
	vtk_array(text, "type", 2, got);
	assert_true(got[0] == PBD_JOINT_HINGE && got[1] == PBD_JOINT_BALL);
	vtk_array(text, "broken", 2, got);
	assert_true(got[0] == 0 && got[1] == (frame >= BREAK_AT ? 1 : 0));
	pbd_real exp[12];
	for (int k = 0; k < 2; ++k) exp[k] = pbd_v3_length(want->state[k].force);
	vtk_array(text, "force", 2, got);
	assert_same(got, exp, 2, "VTK joint force", frame);
	for (int k = 0; k < 2; ++k) exp[k] = pbd_v3_length(want->state[k].torque);
	vtk_array(text, "torque", 2, got);
	assert_same(got, exp, 2, "VTK joint torque", frame);
	for (int k = 0; k < 2; ++k) exp[k] = want->state[k].error_distance;
	vtk_array(text, "error_distance", 2, got);
	assert_same(got, exp, 2, "VTK joint error_distance", frame);
	for (int k = 0; k < 2; ++k) exp[k] = want->state[k].position;
	vtk_array(text, "position", 2, got);
	assert_same(got, exp, 2, "VTK joint position", frame);
	/* The hinge holds the bodies up. */
	if (frame > 0) assert_true(pbd_v3_length(want->state[0].force) > 1);
	for (int k = 0; k < 2; ++k)
		for (int s = 0; s < 2; ++s) memcpy(&exp[6 * k + 3 * s], &want->anchor[k][s], sizeof want->anchor[k][s]);
	vtk_array(text, "Points", 12, got);
	assert_same(got, exp, 12, "VTK joint anchors", frame);
	vtk_array(text, "connectivity", 4, got);
	assert_true(got[0] == 0 && got[1] == 1 && got[2] == 2 && got[3] == 3);
	vtk_array(text, "offsets", 2, got);
	assert_true(got[0] == 2 && got[1] == 4);
	free(text);
}

/* The text of the prim `decl` ("def PhysicsRevoluteJoint \"joint_0\""), up to its closing brace. */
static char* usd_prim(const char* text, const char* decl) {
	const char* p = strstr(text, decl);
	if (!p) fail_msg("no %s in animation.usda", decl);
	const char* end = strstr(p, "\n    }\n");
	assert_non_null(end);
	const size_t n = (size_t)(end - p) + 1; /* with its last line's end */
	char* prim = malloc(n + 1);
	assert_non_null(prim);
	memcpy(prim, p, n);
	prim[n] = '\0';
	return prim;
}

static void usd_numbers(const char* prim, const char* attr, int n, double* out) {
	const char* p = strstr(prim, attr);
	if (!p) fail_msg("no %s in %.40s", attr, prim);
	numbers(p + strlen(attr), n, out, NULL);
}

static void check_usd_frame(const char* prim, int side, pbd_pose frame) {
	char attr[64];
	double got[4];
	snprintf(attr, sizeof attr, "point3f physics:localPos%d = ", side);
	usd_numbers(prim, attr, 3, got);
	assert_same(got, &frame.position.x, 3, attr, 0);
	snprintf(attr, sizeof attr, "quatf physics:localRot%d = ", side);
	usd_numbers(prim, attr, 4, got);
	const pbd_real wxyz[4] = {frame.rotation.w, frame.rotation.x, frame.rotation.y, frame.rotation.z};
	assert_same(got, wxyz, 4, attr, 0);
}

static void assert_degrees(const char* prim, const char* attr, pbd_real rad) {
	double got;
	usd_numbers(prim, attr, 1, &got);
	assert_near(got, (double)rad * 57.29577951308232, 1e-5);
}

static void check_usd_joints(const fixture* f, const pbd_joint_def* defs) {
	char path[256];
	snprintf(path, sizeof path, "%s/animation.usda", f->dir);
	char* text = slurp(path);
	char* hinge = usd_prim(text, "def PhysicsRevoluteJoint \"joint_0\"");
	/* The world's side has no body; b's is the body's Xform. */
	assert_non_null(strstr(hinge, "custom uint pbd:joint = 0\n"));
	assert_null(strstr(hinge, "physics:body0"));
	assert_non_null(strstr(hinge, "rel physics:body1 = </World/body_1>\n"));
	/* the frames as the library keeps them (their rotations normalised when the joints were made) */
	pbd_joint_def kept[2];
	for (uint32_t j = 0; j < 2; ++j) assert_int_equal(pbd_world_get_joint(f->world, j, &kept[j]), PBD_OK);
	check_usd_frame(hinge, 0, kept[0].frame_a);
	check_usd_frame(hinge, 1, kept[0].frame_b);
	assert_non_null(strstr(hinge, "uniform token physics:axis = \"X\"\n"));
	assert_degrees(hinge, "float physics:lowerLimit = ", defs[0].lower);
	assert_degrees(hinge, "float physics:upperLimit = ", defs[0].upper);
	assert_non_null(strstr(hinge, "float physics:breakForce = 1000000\n"));
	assert_null(strstr(hinge, "breakTorque"));
	assert_null(strstr(hinge, "jointEnabled")); /* it held throughout */
	char* ball = usd_prim(text, "def PhysicsSphericalJoint \"joint_1\"");
	assert_non_null(strstr(ball, "custom uint pbd:joint = 1\n"));
	assert_non_null(strstr(ball, "rel physics:body0 = </World/body_1>\n"));
	assert_non_null(strstr(ball, "rel physics:body1 = </World/body_2>\n"));
	check_usd_frame(ball, 0, kept[1].frame_a);
	check_usd_frame(ball, 1, kept[1].frame_b);
	assert_degrees(ball, "float physics:coneAngle0Limit = ", defs[1].swing);
	assert_degrees(ball, "float physics:coneAngle1Limit = ", defs[1].swing);
	assert_degrees(ball, "custom float pbd:twistLowerLimit = ", defs[1].lower);
	assert_degrees(ball, "custom float pbd:twistUpperLimit = ", defs[1].upper);
	assert_null(strstr(ball, "lowerLimit ="));
	char samples[128];
	snprintf(samples, sizeof samples,
	         "bool physics:jointEnabled.timeSamples = {\n            0: 1,\n            %d: 0,\n        }\n", BREAK_AT);
	assert_non_null(strstr(ball, samples));
	/* The joints come after the bodies they name. */
	assert_true(strstr(text, "def Xform \"body_2\"") < strstr(text, "def PhysicsRevoluteJoint"));
	free(ball);
	free(hinge);
	free(text);
}

static void test_joints_in_the_files(void** state) {
	(void)state;
	fixture f;
	make_world(&f);
	pbd_joint_def defs[2];
	add_joints(&f, defs);
	pbd_scene_error err;
	out_usd* usd = NULL;
	int first = -1;
	assert_true(out_usd_open(f.dir, &f.scene, 0, &usd, &first, &err));
	joint_frame want[FRAMES + 1];
	for (int frame = 0; frame <= FRAMES; ++frame) {
		if (frame == BREAK_AT) assert_int_equal(pbd_world_set_joint_broken(f.world, 1, true), PBD_OK);
		if (frame > 0) assert_int_equal(pbd_world_step(f.world), PBD_OK);
		record_joints(&f, &want[frame]);
		char path[256];
		out_frame_path(path, sizeof path, f.dir, frame, OUT_FORMAT_VTK);
		if (!out_write_frame(path, OUT_FORMAT_VTK, &f.scene, frame, &err)) fail_msg("%s", err.message);
		if (!out_usd_add_frame(usd, &f.scene, &err)) fail_msg("%s", err.message);
	}
	/* The bodies moved, so the anchors on them did. */
	assert_true(want[FRAMES].anchor[1][1].y != want[0].anchor[1][1].y);
	for (int frame = 0; frame <= FRAMES; ++frame) check_vtk_joints(&f, frame, &want[frame]);
	if (!out_usd_finish(usd, &f.scene, true, &err)) fail_msg("%s", err.message);
	check_usd_joints(&f, defs);
	if (!out_vtk_write_index(f.dir, FRAMES, (double)pbd_world_get_def(f.world).dt, &err)) fail_msg("%s", err.message);
	char path[256];
	snprintf(path, sizeof path, "%s/animation.pvd", f.dir);
	char* pvd = slurp(path);
	/* Each frame's joints follow its bodies, as part 2 of the time step. */
	for (int frame = 0; frame <= FRAMES; ++frame) {
		char bodies[64], joints[64];
		snprintf(bodies, sizeof bodies, "part=\"1\" file=\"bodies_%05d.vtp\"", frame);
		snprintf(joints, sizeof joints, "part=\"2\" file=\"joints_%05d.vtp\"", frame);
		const char* b = strstr(pvd, bodies);
		const char* j = strstr(pvd, joints);
		assert_true(b && j && b < j && strchr(b, '\n') < j && strchr(strchr(b, '\n') + 1, '\n') > j);
	}
	free(pvd);

	/* Resumed from the kept store: the joints' samples stay. */
	assert_true(out_usd_open(f.dir, &f.scene, FRAMES, &usd, &first, &err));
	assert_int_equal(first, 0);
	for (int frame = FRAMES; frame <= FRAMES + 2; ++frame) {
		if (frame > FRAMES) assert_int_equal(pbd_world_step(f.world), PBD_OK);
		if (!out_usd_add_frame(usd, &f.scene, &err)) fail_msg("%s", err.message);
	}
	if (!out_usd_finish(usd, &f.scene, false, &err)) fail_msg("%s", err.message);
	check_usd_joints(&f, defs);

	/* A new run clears the joints' files with the frames and the bodies'. */
	unsigned removed = 0;
	assert_true(out_clear_frames(f.dir, -1, &removed, &err));
	assert_int_equal(removed, 3 * (FRAMES + 1));
	remove_dir(f.dir);
	pbd_world_destroy(f.world);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frames_match_the_state),
	    cmocka_unit_test(test_shapes_face_outward),
	    cmocka_unit_test(test_joints_in_the_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
