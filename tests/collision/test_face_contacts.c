/* Face contacts of shapes with corners and edges (src/collision/triangle_contact.c): a coarse cloth (2 x 2
 * cells of 0.5 m) dropped flat on a floor over a sharp feature smaller than a cell, lying under
 * the middle of one triangle: a box whose top is a fifth of a cell wide, a box standing on a
 * corner, a thin hull spike, a height field with one raised sample, a smooth dome of a finely
 * sampled height field (each sample flat, the dome not) and a closed pyramid mesh.
 * With face contacts the feature's tip stays under the cloth; on the path before them
 * (w->corners_off, w->edges_off) the cloth's vertices land on the floor around it and the tip
 * pokes through the face. Then ridges whose corners lie far outside the cloth, so that only their
 * edges can hold it: a long thin box (a bar), a hull prism and a closed prism mesh, run between
 * the rows of the cloth's vertices under the middle of its triangles; with the corners alone
 * (w->edges_off) the ridge cuts through the cloth. Also: a cloth resting on a corner or on a bar
 * gains no energy, and two runs are bit-identical. */
#include <stdio.h>
#include <string.h>

#include "collision/collide.h"
#include "test_physics.h"
#include "model/world.h"

typedef enum feature {
	SMALL_BOX,
	BOX_CORNER,
	HULL_SPIKE,
	HEIGHTFIELD_SPIKE,
	HEIGHTFIELD_DOME,
	MESH_PYRAMID,
	BAR,
	HULL_PRISM,
	MESH_PRISM,
	HEIGHTFIELD_RIDGE,
	FEATURE_COUNT
} feature;

/* The first of the ridges, which only edges hold. */
#define FIRST_RIDGE BAR

static const char* const feature_name[FEATURE_COUNT] = {
    "box of 0.1 m", "box on a corner", "hull spike", "height field spike", "height field dome",
    "pyramid mesh", "bar (box)",       "hull prism", "prism mesh",         "height field ridge"};

/* Where the tips go: off both diagonals of the cell [0, 0.5]^2, 0.25 m from its nearest vertex. */
#define TIP_X  ((pbd_real)0.3)
#define TIP_Z  ((pbd_real)0.15)
#define MARGIN ((pbd_real)0.005)

/* The ridges: along x, 2 m long (their corners 0.5 m outside the cloth), at z = 0.25 between
 * the vertex rows z = 0 and z = 0.5, 0.15 m high. */
#define RIDGE_Z      ((pbd_real)0.25)
#define RIDGE_HIGH   ((pbd_real)0.15)
#define RIDGE_HALF_L ((pbd_real)1.0)
#define RIDGE_TIPS   19 /* points along a top edge, x = -0.45 .. 0.45 */

typedef struct scene {
	pbd_world* w;
	pbd_vec3 tips[2 * RIDGE_TIPS]; /* world points that must stay under the cloth */
	int ntips;
} scene;

/* A height field of nx x nz samples (row by row) with cells cx x cz, its first sample at (x0, 0, z0). */
static void heightfield_at(pbd_collider_def* cd, const pbd_real* h, uint32_t nx, uint32_t nz, double cx, double cz,
                           pbd_real x0, pbd_real z0) {
	cd->type = PBD_SHAPE_HEIGHTFIELD;
	cd->shape.heightfield.heights = h;
	cd->shape.heightfield.nx = nx;
	cd->shape.heightfield.nz = nz;
	cd->shape.heightfield.cell_x = (pbd_real)cx;
	cd->shape.heightfield.cell_z = (pbd_real)cz;
	cd->pose.position = pbd_v3(x0, 0, z0);
}

/* Points along the top edge of a ridge at z, over the cloth. */
static void ridge_tips(scene* s, pbd_real z) {
	for (int k = 0; k < RIDGE_TIPS; ++k) s->tips[s->ntips++] = pbd_v3((pbd_real)(0.05 * (k - 9)), RIDGE_HIGH, z);
}

static void add_collider(pbd_world* w, pbd_collider_def* cd) {
	cd->margin = MARGIN;
	assert_true(pbd_collider_is_valid(w, pbd_collider_create(w, cd)));
}

static void add_feature(scene* s, feature f) {
	pbd_world* w = s->w;
	pbd_collider_def cd = pbd_collider_def_default();
	switch (f) {
	case SMALL_BOX: {
		cd.type = PBD_SHAPE_BOX;
		cd.shape.box.half_extents = pbd_v3((pbd_real)0.05, (pbd_real)0.075, (pbd_real)0.05);
		cd.pose.position = pbd_v3(TIP_X, (pbd_real)0.075, TIP_Z);
		add_collider(w, &cd);
		for (int k = 0; k < 4; ++k)
			s->tips[k] = pbd_v3(TIP_X + (k & 1 ? 1 : -1) * (pbd_real)0.05, (pbd_real)0.15,
			                    TIP_Z + (k & 2 ? 1 : -1) * (pbd_real)0.05);
		s->ntips = 4;
		return;
	}
	case BOX_CORNER: {
		/* A cube of 0.2 m turned so that its diagonal (1, 1, 1) points up: the rotation about
		 * (-1, 0, 1) / sqrt 2 by acos(1 / sqrt 3). */
		cd.type = PBD_SHAPE_BOX;
		cd.shape.box.half_extents = pbd_v3((pbd_real)0.1, (pbd_real)0.1, (pbd_real)0.1);
		const double angle = acos(1 / sqrt(3.0)), sn = sin(angle / 2) / sqrt(2.0);
		cd.pose.rotation = (pbd_quat){(pbd_real)-sn, 0, (pbd_real)sn, (pbd_real)cos(angle / 2)};
		cd.pose.position = pbd_v3(TIP_X, 0, TIP_Z);
		add_collider(w, &cd);
		s->tips[0] = pbd_pose_apply(cd.pose, pbd_v3((pbd_real)0.1, (pbd_real)0.1, (pbd_real)0.1));
		s->ntips = 1;
		return;
	}
	case HULL_SPIKE: {
		const pbd_real b = (pbd_real)0.03;
		const pbd_vec3 pts[5] = {pbd_v3(-b, 0, -b), pbd_v3(b, 0, -b), pbd_v3(b, 0, b), pbd_v3(-b, 0, b),
		                         pbd_v3(0, (pbd_real)0.2, 0)};
		cd.type = PBD_SHAPE_CONVEX;
		cd.shape.convex.points = pts;
		cd.shape.convex.point_count = 5;
		cd.pose.position = pbd_v3(TIP_X, 0, TIP_Z);
		add_collider(w, &cd);
		s->tips[0] = pbd_v3(TIP_X, (pbd_real)0.2, TIP_Z);
		s->ntips = 1;
		return;
	}
	case HEIGHTFIELD_SPIKE: {
		/* 9 x 9 samples 0.15 m apart, flat at 0 but for sample (4, 4), 0.2 m up. */
		pbd_real h[81];
		for (int k = 0; k < 81; ++k) h[k] = 0;
		h[4 * 9 + 4] = (pbd_real)0.2;
		heightfield_at(&cd, h, 9, 9, 0.15, 0.15, TIP_X - (pbd_real)0.6, TIP_Z - (pbd_real)0.6);
		add_collider(w, &cd);
		s->tips[0] = pbd_v3(TIP_X, (pbd_real)0.2, TIP_Z);
		s->ntips = 1;
		return;
	}
	case HEIGHTFIELD_DOME: {
		/* A smooth dome finely sampled under the coarse cloth: a paraboloid 0.1 m high and
		 * 0.22 m across, on samples 0.015 m apart, so that no face around a sample turns more
		 * than about 4 degrees from it. Each sample is flat, the dome is not: the face over it
		 * holds on the samples near its top. */
		enum { DN = 41 };
		static pbd_real h[DN * DN];
		const double c = 0.015, half = 0.5 * c * (DN - 1), a = 0.1, r = 0.22;
		for (int j = 0; j < DN; ++j)
			for (int i = 0; i < DN; ++i) {
				const double dx = i * c - half, dz = j * c - half, q = (dx * dx + dz * dz) / (r * r);
				h[j * DN + i] = (pbd_real)(q < 1 ? a * (1 - q) : 0);
			}
		heightfield_at(&cd, h, DN, DN, c, c, TIP_X - (pbd_real)half, TIP_Z - (pbd_real)half);
		add_collider(w, &cd);
		s->tips[0] = pbd_v3(TIP_X, (pbd_real)a, TIP_Z);
		s->ntips = 1;
		return;
	}
	case MESH_PYRAMID: {
		const pbd_real b = (pbd_real)0.1;
		const pbd_vec3 v[5] = {pbd_v3(-b, 0, -b), pbd_v3(b, 0, -b), pbd_v3(b, 0, b), pbd_v3(-b, 0, b),
		                       pbd_v3(0, (pbd_real)0.2, 0)};
		/* Outward winding: the base seen from below, the sides from outside. */
		const uint32_t tri[18] = {0, 1, 2, 0, 2, 3, 0, 4, 1, 1, 4, 2, 2, 4, 3, 3, 4, 0};
		cd.type = PBD_SHAPE_MESH;
		cd.shape.mesh.vertices = v;
		cd.shape.mesh.triangles = tri;
		cd.shape.mesh.vertex_count = 5;
		cd.shape.mesh.triangle_count = 6;
		cd.shape.mesh.closed = true;
		cd.pose.position = pbd_v3(TIP_X, 0, TIP_Z);
		add_collider(w, &cd);
		s->tips[0] = pbd_v3(TIP_X, (pbd_real)0.2, TIP_Z);
		s->ntips = 1;
		return;
	}
	case BAR: {
		/* 4 cm wide: both top edges run under the middle of the cloth's triangles. */
		cd.type = PBD_SHAPE_BOX;
		cd.shape.box.half_extents = pbd_v3(RIDGE_HALF_L, RIDGE_HIGH / 2, (pbd_real)0.02);
		cd.pose.position = pbd_v3(0, RIDGE_HIGH / 2, RIDGE_Z);
		add_collider(w, &cd);
		s->ntips = 0;
		ridge_tips(s, RIDGE_Z - (pbd_real)0.02);
		ridge_tips(s, RIDGE_Z + (pbd_real)0.02);
		return;
	}
	case HULL_PRISM:
	case MESH_PRISM: {
		/* A triangular prism 0.1 m wide at the floor with its ridge on top; the hull
		 * triangulates its rectangles, whose diagonals are no edges. */
		const pbd_real L = RIDGE_HALF_L, b = (pbd_real)0.05, h = RIDGE_HIGH;
		const pbd_vec3 v[6] = {pbd_v3(-L, 0, -b), pbd_v3(L, 0, -b), pbd_v3(L, 0, b),
		                       pbd_v3(-L, 0, b),  pbd_v3(-L, h, 0), pbd_v3(L, h, 0)};
		/* Outward winding: the bottom, the two slopes, the two ends. */
		const uint32_t tri[24] = {0, 1, 2, 0, 2, 3, 0, 4, 5, 0, 5, 1, 3, 2, 5, 3, 5, 4, 0, 3, 4, 1, 5, 2};
		if (f == HULL_PRISM) {
			cd.type = PBD_SHAPE_CONVEX;
			cd.shape.convex.points = v;
			cd.shape.convex.point_count = 6;
		} else {
			cd.type = PBD_SHAPE_MESH;
			cd.shape.mesh.vertices = v;
			cd.shape.mesh.triangles = tri;
			cd.shape.mesh.vertex_count = 6;
			cd.shape.mesh.triangle_count = 8;
			cd.shape.mesh.closed = true;
		}
		cd.pose.position = pbd_v3(0, 0, RIDGE_Z);
		add_collider(w, &cd);
		s->ntips = 0;
		ridge_tips(s, RIDGE_Z);
		return;
	}
	case HEIGHTFIELD_RIDGE: {
		/* 2 x 17 samples, 2.2 m apart in x and 0.05 m in z, flat at 0 but for row 8, 0.15 m up,
		 * which runs at RIDGE_Z; its samples lie 0.6 m outside the cloth. */
		pbd_real h[34];
		for (int k = 0; k < 34; ++k) h[k] = k / 2 == 8 ? RIDGE_HIGH : 0;
		heightfield_at(&cd, h, 2, 17, 2.2, 0.05, (pbd_real)-1.1, RIDGE_Z - (pbd_real)0.4);
		add_collider(w, &cd);
		s->ntips = 0;
		ridge_tips(s, RIDGE_Z);
		return;
	}
	case FEATURE_COUNT:
		break;
	}
	fail();
}

/* Which face contacts of shapes run: all, the corners only, none (the vertices' contacts). */
typedef enum face_mode { FACES_ALL, FACES_CORNERS, FACES_NONE } face_mode;

/* A floor with friction, the feature, and a 1 m cloth of 3 x 3 vertices 0.4 m up. */
static scene make_scene(feature f, face_mode faces) {
	pbd_world_def def = pbd_world_def_default();
	def.substeps = 8;
	def.iterations = 8;
	scene s;
	s.w = test_world(&def);
	s.w->corners_off = faces == FACES_NONE;
	s.w->edges_off = faces != FACES_ALL;
	pbd_collider_def floor = pbd_collider_def_default();
	floor.static_friction = (pbd_real)0.6;
	floor.kinetic_friction = (pbd_real)0.5;
	add_collider(s.w, &floor);
	add_feature(&s, f);
	pbd_mesh m;
	tp_grid(&m, 3, 3, 1, pbd_v3((pbd_real)-0.5, (pbd_real)0.4, (pbd_real)-0.5), 1, false);
	pbd_soft_def bd = pbd_soft_def_default();
	bd.mesh = &m;
	bd.mass_mode = PBD_MASS_TOTAL;
	bd.mass = (pbd_real)0.1;
	assert_int_equal(pbd_soft_create(s.w, &bd, NULL), PBD_OK);
	pbd_mesh_free(&m);
	return s;
}

/* The least height of the cloth over a tip, over the triangles whose footprint (x, z) holds it;
 * sets *covered when one does. */
static double clearance(const pbd_world* w, pbd_vec3 tip, bool* covered) {
	const pbd_vec3* x = pbd_world_positions(w);
	double best = 1e9;
	for (uint32_t t = 0; t < w->nt; ++t) {
		const uint32_t* v = &w->tri[3 * t];
		const double ax = x[v[0]].x, az = x[v[0]].z, bx = x[v[1]].x, bz = x[v[1]].z, cx = x[v[2]].x, cz = x[v[2]].z;
		const double det = (bx - ax) * (cz - az) - (cx - ax) * (bz - az);
		if (fabs(det) < 1e-12) continue;
		const double u = ((tip.x - ax) * (cz - az) - (cx - ax) * (tip.z - az)) / det;
		const double s = ((bx - ax) * (tip.z - az) - (tip.x - ax) * (bz - az)) / det;
		if (u < 0 || s < 0 || u + s > 1) continue;
		const double y = (1 - u - s) * x[v[0]].y + u * x[v[1]].y + s * x[v[2]].y;
		best = fmin(best, y - tip.y);
		*covered = true;
	}
	return best;
}

static double kinetic(const pbd_world* w) {
	const pbd_vec3* v = pbd_world_velocities(w);
	const pbd_real* iw = pbd_world_inv_masses(w);
	double e = 0;
	for (uint32_t i = 0; i < pbd_world_particle_count(w); ++i)
		if (iw[i] > 0) e += 0.5 / (double)iw[i] * tp_len(v[i]) * tp_len(v[i]);
	return e;
}

/* The least clearance of any tip over the last second of 2 s. */
static double drop(feature f, face_mode faces) {
	scene s = make_scene(f, faces);
	double worst = 1e9;
	bool covered = false;
	for (int step = 0; step < 120; ++step) {
		assert_int_equal(pbd_world_step(s.w), PBD_OK);
		if (step < 60) continue;
		for (int k = 0; k < s.ntips; ++k) worst = fmin(worst, clearance(s.w, s.tips[k], &covered));
	}
	assert_true(covered); /* the cloth did not slide off the feature */
	assert_true(tp_all_finite(s.w));
	pbd_world_destroy(s.w);
	return worst;
}

static void test_features_hold_the_faces(void** state) {
	(void)state;
	for (int f = 0; f < FIRST_RIDGE; ++f) {
		const double with = drop((feature)f, FACES_ALL), without = drop((feature)f, FACES_NONE);
		printf("  %-18s under a 0.5 m cell: the cloth is %+.4f m above the tip with face contacts, %+.4f m "
		       "without\n",
		       feature_name[f], with, without);
		/* The margin is 5 mm; the face may come 1 mm inside it, never through. */
		assert_true(with > (double)MARGIN - 0.001);
		assert_true(without < -0.05);
	}
}

/* The ridges' corners lie 0.5 m outside the cloth: what holds the cloth over the ridge are its
 * edges' contacts, and without them the ridge cuts through between the vertices. */
static void test_ridges_hold_the_faces(void** state) {
	(void)state;
	for (int f = FIRST_RIDGE; f < FEATURE_COUNT; ++f) {
		const double with = drop((feature)f, FACES_ALL), without = drop((feature)f, FACES_CORNERS);
		printf("  %-18s between vertex rows: the cloth is %+.4f m above the ridge with edge contacts, %+.4f m "
		       "with corners only\n",
		       feature_name[f], with, without);
		assert_true(with > (double)MARGIN - 0.001);
		assert_true(without < -0.05);
	}
}

static double energy(const pbd_world* w) {
	const pbd_vec3* x = pbd_world_positions(w);
	const pbd_vec3* v = pbd_world_velocities(w);
	const pbd_real* iw = pbd_world_inv_masses(w);
	double e = 0;
	for (uint32_t i = 0; i < pbd_world_particle_count(w); ++i) {
		if (!(iw[i] > 0)) continue;
		const double m = 1 / (double)iw[i], vv = tp_len(v[i]);
		e += 0.5 * m * vv * vv + m * 9.81 * (double)x[i].y;
	}
	return e;
}

typedef struct edge_list {
	uint32_t index[64];
	int n;
} edge_list;

/* Records an edge once; its outward direction must be unit and across the edge. */
static void note_edge(void* ctx, uint32_t index, pbd_vec3 a, pbd_vec3 b, pbd_vec3 out) {
	edge_list* l = (edge_list*)ctx;
	assert_true(fabs(tp_len(out) - 1) < 1e-5);
	assert_true(fabs((double)pbd_v3_dot(out, pbd_v3_sub(b, a))) < 1e-5 * tp_len(pbd_v3_sub(b, a)));
	for (int k = 0; k < l->n; ++k)
		if (l->index[k] == index) return;
	assert_true(l->n < 64);
	l->index[l->n++] = index;
}

static bool has_edge(const edge_list* l, uint32_t index) {
	for (int k = 0; k < l->n; ++k)
		if (l->index[k] == index) return true;
	return false;
}

/* The edges each shape names: a box's 12; a prism's 9 as a hull and as a closed mesh, without
 * the diagonals of its triangulated rectangles; a height field's ridge row and its border edges,
 * without the valleys beside the ridge or the cells' flat diagonals. */
static void test_shapes_name_their_edges(void** state) {
	(void)state;
	const feature f[4] = {BAR, HULL_PRISM, MESH_PRISM, HEIGHTFIELD_RIDGE};
	const int count[4] = {12, 9, 9, 1 + 2 + 2 * 16};
	for (int k = 0; k < 4; ++k) {
		scene s = make_scene(f[k], FACES_ALL);
		const pbd_collider* c = &s.w->colliders[1];
		edge_list l = {{0}, 0};
		const pbd_real big = 10;
		pbd_shape_ops_of(c->def.type)->edges(&c->def, pbd_v3(-big, -big, -big), pbd_v3(big, big, big), note_edge, &l);
		printf("  %-18s names %d edges\n", feature_name[f[k]], l.n);
		assert_int_equal(l.n, count[k]);
		if (f[k] == HEIGHTFIELD_RIDGE) {
			/* Along x at rows 8 (the ridge), 0 and 16 (the walls); not rows 7 and 9. */
			assert_true(has_edge(&l, 3 * 8 * 2) && has_edge(&l, 0) && has_edge(&l, 3 * 16 * 2));
			assert_false(has_edge(&l, 3 * 7 * 2) || has_edge(&l, 3 * 9 * 2));
		}
		/* A box around nothing of the shape names none. */
		l.n = 0;
		pbd_shape_ops_of(c->def.type)->edges(&c->def, pbd_v3(5, 5, 5), pbd_v3(6, 6, 6), note_edge, &l);
		assert_int_equal(l.n, 0);
		pbd_world_destroy(s.w);
	}
}

/* A blade: a box 2 um thick, 0.8 m long, standing on its long side at 0.15 m and turned 30
 * degrees about y, under the middle of the cloth; its short edges have almost no length, and its
 * long ones lie parallel to the faces that land on them. Every step succeeds, everything stays
 * finite and the cloth stays on top of the blade. */
static void test_degenerate_edges(void** state) {
	(void)state;
	scene s = make_scene(BAR, FACES_ALL);
	pbd_collider_def cd = pbd_collider_def_default();
	cd.type = PBD_SHAPE_BOX;
	cd.shape.box.half_extents = pbd_v3((pbd_real)0.4, (pbd_real)0.01, (pbd_real)1e-6);
	const double a = 30 * acos(-1.0) / 180;
	cd.pose.rotation = (pbd_quat){0, (pbd_real)sin(a / 2), 0, (pbd_real)cos(a / 2)};
	cd.pose.position = pbd_v3((pbd_real)0.1, (pbd_real)0.3, (pbd_real)-0.1);
	add_collider(s.w, &cd);
	bool covered = false;
	double worst = 1e9;
	for (int step = 0; step < 120; ++step) {
		assert_int_equal(pbd_world_step(s.w), PBD_OK);
		assert_true(tp_all_finite(s.w));
		if (step >= 60)
			worst = fmin(worst, clearance(s.w, pbd_v3((pbd_real)0.1, (pbd_real)0.31, (pbd_real)-0.1), &covered));
	}
	printf("  blade 2 um thick: the cloth is %+.4f m above its top edge\n", worst);
	assert_true(covered);
	assert_true(worst > (double)MARGIN - 0.001);
	pbd_world_destroy(s.w);
}

/* Resting on a box's corner or on a bar's edges, the cloth neither jitters nor climbs: after 2 s
 * of settling, the kinetic energy stays tiny and kinetic plus potential energy does not grow over
 * 3 s more. */
static void rest(feature f) {
	scene s = make_scene(f, FACES_ALL);
	for (int step = 0; step < 120; ++step) assert_int_equal(pbd_world_step(s.w), PBD_OK);
	const double e0 = energy(s.w);
	double kmax = 0, emax = e0;
	for (int step = 0; step < 180; ++step) {
		assert_int_equal(pbd_world_step(s.w), PBD_OK);
		kmax = fmax(kmax, kinetic(s.w));
		emax = fmax(emax, energy(s.w));
	}
	printf("  cloth resting on the %s, 3 s: largest kinetic energy %.3g J, energy above the start %.3g J\n",
	       feature_name[f], kmax, emax - e0);
	/* Float rounding of m g y alone is about 1e-7 J. */
	assert_true(kmax < 1e-6);
	assert_true(emax - e0 < 1e-6);
	pbd_world_destroy(s.w);
}

static void test_resting_gains_no_energy(void** state) {
	(void)state;
	rest(BOX_CORNER);
	rest(BAR);
	rest(MESH_PRISM);
}

/* The same scene twice gives the same bits. */
static void test_deterministic(void** state) {
	(void)state;
	for (int f = 0; f < FEATURE_COUNT; ++f) {
		scene a = make_scene((feature)f, FACES_ALL), b = make_scene((feature)f, FACES_ALL);
		for (int step = 0; step < 60; ++step) {
			assert_int_equal(pbd_world_step(a.w), PBD_OK);
			assert_int_equal(pbd_world_step(b.w), PBD_OK);
		}
		const uint32_t n = pbd_world_particle_count(a.w);
		assert_int_equal(memcmp(pbd_world_positions(a.w), pbd_world_positions(b.w), n * sizeof(pbd_vec3)), 0);
		assert_int_equal(memcmp(pbd_world_velocities(a.w), pbd_world_velocities(b.w), n * sizeof(pbd_vec3)), 0);
		pbd_world_destroy(a.w);
		pbd_world_destroy(b.w);
	}
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_features_hold_the_faces), cmocka_unit_test(test_ridges_hold_the_faces),
	    cmocka_unit_test(test_shapes_name_their_edges), cmocka_unit_test(test_degenerate_edges),
	    cmocka_unit_test(test_resting_gains_no_energy), cmocka_unit_test(test_deterministic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
