/* Mass properties of collider shapes against closed forms and independent sums: the box's
 * closed form equals its 12-triangle mesh and the convex hull of its corners; a capsule equals
 * a midpoint-rule integration of its indicator; a posed box turns its tensor as R I R^T; two
 * half boxes combine into the whole (parallel-axis theorem); a closed sphere mesh has the mass
 * and inertia of the tetrahedra it was cut from; shapes without a volume are refused. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_physics.h"

enum { XX, YY, ZZ, XY, XZ, YZ };

static pbd_world* world(char* msg) {
	pbd_world_def def = pbd_world_def_default();
	def.log = test_log_keep;
	def.log_user = msg;
	pbd_world* w = NULL;
	assert_int_equal(pbd_world_create(&def, &w), PBD_OK);
	return w;
}

static pbd_collider_id add(pbd_world* w, pbd_collider_def d) {
	const pbd_collider_id id = pbd_collider_create(w, &d);
	if (!pbd_collider_is_valid(w, id)) fail_msg("pbd_collider_create: %s", pbd_world_last_error(w));
	return id;
}

static pbd_mass_properties props(pbd_world* w, pbd_collider_id id, double density) {
	pbd_mass_properties p;
	assert_int_equal(pbd_collider_mass_properties(w, id, (pbd_real)density, &p), PBD_OK);
	return p;
}

/* |a - b| within rel of the scale of b's tensor (its largest diagonal) and of its mass. */
static void assert_props_near(const pbd_mass_properties* a, const pbd_mass_properties* b, double rel) {
	const double scale = fmax(b->inertia[XX], fmax(b->inertia[YY], b->inertia[ZZ]));
	if (fabs(a->mass - b->mass) > rel * b->mass) fail_msg("mass %.12g vs %.12g", a->mass, b->mass);
	for (int k = 0; k < 6; ++k)
		if (fabs(a->inertia[k] - b->inertia[k]) > rel * scale)
			fail_msg("inertia[%d] %.12g vs %.12g (scale %.3g)", k, a->inertia[k], b->inertia[k], scale);
	const double len = cbrt(b->mass); /* any length of the body's size suffices for the centre */
	for (int k = 0; k < 3; ++k)
		if (fabs(a->center[k] - b->center[k]) > rel * len + 1e-12)
			fail_msg("center[%d] %.12g vs %.12g", k, a->center[k], b->center[k]);
}

static pbd_collider_def box_def(double x, double y, double z) {
	pbd_collider_def d = pbd_collider_def_default();
	d.type = PBD_SHAPE_BOX;
	d.shape.box.half_extents = pbd_v3((pbd_real)x, (pbd_real)y, (pbd_real)z);
	return d;
}

/* The box (+-x, +-y, +-z) as 8 corners and 12 outward triangles. */
static void box_corners(double x, double y, double z, pbd_vec3 v[8]) {
	for (int i = 0; i < 8; ++i)
		v[i] = pbd_v3((pbd_real)(i & 1 ? x : -x), (pbd_real)(i & 2 ? y : -y), (pbd_real)(i & 4 ? z : -z));
}
static const uint32_t box_tris[36] = {0, 2, 3, 0, 3, 1, 4, 5, 7, 4, 7, 6, 0, 1, 5, 0, 5, 4,
                                      2, 6, 7, 2, 7, 3, 0, 4, 6, 0, 6, 2, 1, 3, 7, 1, 7, 5};

static void test_box_three_ways(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = world(msg);
	const double x = 0.5, y = 0.25, z = 1.5, rho = 700;
	const pbd_mass_properties closed = props(w, add(w, box_def(x, y, z)), rho);
	const double m = rho * 8 * x * y * z;
	assert_true(fabs(closed.mass - m) < 1e-12 * m);
	assert_true(fabs(closed.inertia[XX] - m * (y * y + z * z) / 3) < 1e-12 * m);
	assert_true(closed.inertia[XY] == 0 && closed.inertia[XZ] == 0 && closed.inertia[YZ] == 0);

	pbd_vec3 v[8];
	box_corners(x, y, z, v);
	pbd_collider_def md = pbd_collider_def_default();
	md.type = PBD_SHAPE_MESH;
	md.shape.mesh.vertices = v;
	md.shape.mesh.vertex_count = 8;
	md.shape.mesh.triangles = box_tris;
	md.shape.mesh.triangle_count = 12;
	md.shape.mesh.closed = true;
	const pbd_mass_properties mesh = props(w, add(w, md), rho);
	assert_props_near(&mesh, &closed, 1e-12);

	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_CONVEX;
	cd.shape.convex.points = v;
	cd.shape.convex.point_count = 8;
	const pbd_mass_properties hull = props(w, add(w, cd), rho);
	assert_props_near(&hull, &closed, 1e-12);

	pbd_world_destroy(w);
}

/* The capsule's closed form against the midpoint rule over its bounding box: a cell counts when
 * its centre is within the radius of the segment. n^3 cells give about 1/n relative error. */
static void test_capsule_integrated(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = world(msg);
	const double r = (double)(pbd_real)0.3, h = 0.5, rho = 1000; /* r as the collider holds it */
	pbd_collider_def d = pbd_collider_def_default();
	d.type = PBD_SHAPE_CAPSULE;
	d.shape.capsule.radius = (pbd_real)r;
	d.shape.capsule.half_height = (pbd_real)h;
	const pbd_mass_properties cap = props(w, add(w, d), rho);
	const int n = 160;
	const double ext[3] = {r, h + r, r};
	double m = 0, I[3] = {0, 0, 0};
	for (int i = 0; i < n; ++i)
		for (int j = 0; j < n; ++j)
			for (int k = 0; k < n; ++k) {
				const double p[3] = {-ext[0] + (i + 0.5) * 2 * ext[0] / n, -ext[1] + (j + 0.5) * 2 * ext[1] / n,
				                     -ext[2] + (k + 0.5) * 2 * ext[2] / n};
				const double sy = fmax(-h, fmin(h, p[1]));
				if (p[0] * p[0] + (p[1] - sy) * (p[1] - sy) + p[2] * p[2] > r * r) continue;
				const double dm = rho * (8 * ext[0] * ext[1] * ext[2]) / ((double)n * n * n);
				m += dm;
				I[0] += dm * (p[1] * p[1] + p[2] * p[2]);
				I[1] += dm * (p[0] * p[0] + p[2] * p[2]);
				I[2] += dm * (p[0] * p[0] + p[1] * p[1]);
			}
	printf("capsule r %.2f h %.2f: mass %.6g (integrated %.6g), Ixx %.6g (%.6g), Iyy %.6g (%.6g)\n", r, h, cap.mass, m,
	       cap.inertia[XX], I[0], cap.inertia[YY], I[1]);
	assert_true(fabs(cap.mass - m) < 0.01 * m);
	for (int k = 0; k < 3; ++k) assert_true(fabs(cap.inertia[k] - I[k]) < 0.01 * I[k]);
	assert_true(fabs(cap.inertia[XX] - cap.inertia[ZZ]) < 1e-12 * cap.inertia[XX]);

	/* Without a segment, the capsule is its ball. */
	d.shape.capsule.half_height = 0;
	const pbd_mass_properties ball = props(w, add(w, d), rho);
	pbd_collider_def sd = pbd_collider_def_default();
	sd.type = PBD_SHAPE_SPHERE;
	sd.shape.sphere.radius = (pbd_real)r;
	sd.shape.sphere.center = pbd_v3(0, 0, 0); /* the default def's union holds the plane's normal there */
	const pbd_mass_properties sphere = props(w, add(w, sd), rho);
	sd.shape.sphere.center = pbd_v3(1, 2, 3); /* an off-centre ball is centred where it is */
	const pbd_mass_properties moved = props(w, add(w, sd), rho);
	assert_true(moved.center[0] == 1 && moved.center[1] == 2 && moved.center[2] == 3);
	assert_true(moved.inertia[0] == sphere.inertia[0]);
	assert_props_near(&ball, &sphere, 1e-12);
	const double ms = rho * 4.0 / 3.0 * 3.14159265358979323846 * r * r * r;
	assert_true(fabs(sphere.mass - ms) < 1e-12 * ms);
	assert_true(fabs(sphere.inertia[YY] - 0.4 * ms * r * r) < 1e-12 * ms * r * r);
	pbd_world_destroy(w);
}

/* A box turned 90 degrees about z swaps its x and y moments; turned 45 degrees it gains the
 * product of inertia (Ixx - Iyy) / 2 (sign by the rotation); a translation moves the centre only. */
static void test_posed(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = world(msg);
	const double rho = 500;
	const pbd_mass_properties base = props(w, add(w, box_def(1, 0.25, 0.5)), rho);
	pbd_collider_def d = box_def(1, 0.25, 0.5);
	d.pose.rotation = pbd_quat_axis_angle(pbd_v3(0, 0, 1), (pbd_real)(3.14159265358979323846 / 2));
	d.pose.position = pbd_v3(3, -2, 7);
	const pbd_mass_properties turned = props(w, add(w, d), rho);
	const double tol = TEST_TOL(1e-12, 1e-6) * base.inertia[XX];
	assert_true(fabs(turned.inertia[XX] - base.inertia[YY]) < tol);
	assert_true(fabs(turned.inertia[YY] - base.inertia[XX]) < tol);
	assert_true(fabs(turned.inertia[ZZ] - base.inertia[ZZ]) < tol);
	assert_true(fabs(turned.inertia[XY]) < tol);
	assert_true(fabs(turned.center[0] - 3) < 1e-12 && fabs(turned.center[1] + 2) < 1e-12 &&
	            fabs(turned.center[2] - 7) < 1e-12);
	d.pose.rotation = pbd_quat_axis_angle(pbd_v3(0, 0, 1), (pbd_real)(3.14159265358979323846 / 4));
	const pbd_mass_properties diag = props(w, add(w, d), rho);
	const double mean = (base.inertia[XX] + base.inertia[YY]) / 2, half = (base.inertia[XX] - base.inertia[YY]) / 2;
	assert_true(fabs(diag.inertia[XX] - mean) < tol && fabs(diag.inertia[YY] - mean) < tol);
	assert_true(fabs(fabs(diag.inertia[XY]) - fabs(half)) < tol);
	pbd_world_destroy(w);
}

/* Two boxes [-1, 0] and [0, 1] along x are the box [-1, 1]: the parallel-axis theorem. */
static void test_compound(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = world(msg);
	const double rho = 250;
	pbd_collider_def left = box_def(0.5, 0.3, 0.2), right = box_def(0.5, 0.3, 0.2);
	left.pose.position = pbd_v3(-0.5, 0, 0);
	right.pose.position = pbd_v3(0.5, 0, 0);
	pbd_mass_properties parts[2] = {props(w, add(w, left), rho), props(w, add(w, right), rho)};
	pbd_mass_properties sum;
	assert_int_equal(pbd_mass_properties_combine(parts, 2, &sum), PBD_OK);
	const pbd_mass_properties whole = props(w, add(w, box_def(1, 0.3, 0.2)), rho);
	assert_props_near(&sum, &whole, TEST_TOL(1e-12, 1e-6));
	parts[1].mass = 0;
	assert_int_equal(pbd_mass_properties_combine(parts, 2, &sum), PBD_ERR_INVALID_ARGUMENT);
	assert_int_equal(pbd_mass_properties_combine(parts, 0, &sum), PBD_ERR_INVALID_ARGUMENT);
	pbd_world_destroy(w);
}

/* The surface of a tetrahedral ball, as a closed mesh, against the tetrahedra it bounds: the
 * same volume and second moments from another decomposition of the same solid; and near the
 * round ball it approximates (within the tessellation). */
static void test_sphere_mesh(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = world(msg);
	pbd_tet_sphere_def sd = pbd_tet_sphere_def_default();
	sd.radius = (pbd_real)0.5;
	sd.subdivisions = 6;
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(pbd_mesh_tet_sphere(&sd, &m, &err), PBD_OK);
	const double rho = 1200;
	pbd_collider_def md = pbd_collider_def_default();
	md.type = PBD_SHAPE_MESH;
	md.shape.mesh.vertices = m.positions;
	md.shape.mesh.vertex_count = m.vertex_count;
	md.shape.mesh.triangles = m.triangles;
	md.shape.mesh.triangle_count = m.triangle_count;
	md.shape.mesh.closed = true;
	const pbd_mass_properties surf = props(w, add(w, md), rho);
	/* Each tetrahedron's covariance about the origin, V/20 (sum x x^T + s s^T) over its 4 vertices. */
	double vol = 0, first[3] = {0, 0, 0}, c[3][3] = {{0}};
	for (uint32_t t = 0; t < m.tet_count; ++t) {
		tp_dvec3 p[4];
		for (int j = 0; j < 4; ++j) p[j] = tp_d(m.positions[m.tets[4 * t + (uint32_t)j]]);
		const tp_dvec3 a = tp_dsub(p[1], p[0]), b = tp_dsub(p[2], p[0]), e = tp_dsub(p[3], p[0]);
		const double v =
		    (a.x * (b.y * e.z - b.z * e.y) - a.y * (b.x * e.z - b.z * e.x) + a.z * (b.x * e.y - b.y * e.x)) / 6;
		const double s[3] = {p[0].x + p[1].x + p[2].x + p[3].x, p[0].y + p[1].y + p[2].y + p[3].y,
		                     p[0].z + p[1].z + p[2].z + p[3].z};
		vol += v;
		for (int i = 0; i < 3; ++i) first[i] += v * s[i] / 4;
		for (int i = 0; i < 3; ++i)
			for (int k = 0; k < 3; ++k) {
				double sum = s[i] * s[k];
				for (int j = 0; j < 4; ++j) {
					const double q[3] = {p[j].x, p[j].y, p[j].z};
					sum += q[i] * q[k];
				}
				c[i][k] += v / 20 * sum;
			}
	}
	const double mass = rho * vol, cen[3] = {first[0] / vol, first[1] / vol, first[2] / vol};
	double cc[3][3];
	for (int i = 0; i < 3; ++i)
		for (int k = 0; k < 3; ++k) cc[i][k] = rho * c[i][k] - mass * cen[i] * cen[k];
	const double tr = cc[0][0] + cc[1][1] + cc[2][2];
	pbd_mass_properties tets = {
	    mass, {cen[0], cen[1], cen[2]}, {tr - cc[0][0], tr - cc[1][1], tr - cc[2][2], -cc[0][1], -cc[0][2], -cc[1][2]}};
	assert_props_near(&surf, &tets, TEST_TOL(1e-10, 1e-5));
	const double r = 0.5, ball = rho * 4.0 / 3.0 * 3.14159265358979323846 * r * r * r;
	printf("tet ball surface (%u triangles): mass %.6g, round ball %.6g; Ixx %.6g, round %.6g\n", m.triangle_count,
	       surf.mass, ball, surf.inertia[XX], 0.4 * ball * r * r);
	assert_true(fabs(surf.mass - ball) < 0.05 * ball);
	assert_true(fabs(surf.inertia[XX] - 0.4 * ball * r * r) < 0.08 * 0.4 * ball * r * r);
	pbd_mesh_free(&m);
	pbd_world_destroy(w);
}

static void test_refusals(void** state) {
	(void)state;
	char msg[256] = "";
	pbd_world* w = world(msg);
	pbd_mass_properties p;
	pbd_collider_def plane = pbd_collider_def_default(); /* the default shape is the ground plane */
	assert_int_equal(pbd_collider_mass_properties(w, add(w, plane), 1000, &p), PBD_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "no finite volume"));
	pbd_vec3 v[8];
	box_corners(1, 1, 1, v);
	pbd_collider_def open = pbd_collider_def_default();
	open.type = PBD_SHAPE_MESH;
	open.shape.mesh.vertices = v;
	open.shape.mesh.vertex_count = 8;
	open.shape.mesh.triangles = box_tris;
	open.shape.mesh.triangle_count = 12;
	assert_int_equal(pbd_collider_mass_properties(w, add(w, open), 1000, &p), PBD_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "open mesh"));
	const pbd_collider_id box = add(w, box_def(1, 1, 1));
	const double bad[] = {0, -1, NAN, INFINITY};
	for (int k = 0; k < 4; ++k) {
		assert_int_equal(pbd_collider_mass_properties(w, box, (pbd_real)bad[k], &p), PBD_ERR_OUT_OF_RANGE);
		assert_non_null(strstr(msg, "density"));
	}
	pbd_collider_id stale = box;
	assert_int_equal(pbd_collider_destroy(w, box), PBD_OK);
	assert_int_equal(pbd_collider_mass_properties(w, stale, 1000, &p), PBD_ERR_INVALID_ARGUMENT);
	assert_int_equal(pbd_collider_mass_properties(w, stale, 1000, NULL), PBD_ERR_INVALID_ARGUMENT);
	/* A density whose mass overflows the double sums is refused, not returned as infinity. */
	const pbd_collider_id big = add(w, box_def(1e6, 1e6, 1e6));
	assert_int_equal(pbd_collider_mass_properties(w, big, (pbd_real)TEST_REAL_MAX, &p),
	                 sizeof(pbd_real) == sizeof(double) ? PBD_ERR_OUT_OF_RANGE : PBD_OK);
	pbd_world_destroy(w);
}

int main(void) {
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_box_three_ways), cmocka_unit_test(test_capsule_integrated),
	    cmocka_unit_test(test_posed),          cmocka_unit_test(test_compound),
	    cmocka_unit_test(test_sphere_mesh),    cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
