/* Projective dynamics over general rows (pd.c): volumes, strains, dihedral bends, enclosed volumes.
 * Iterated to convergence, one step satisfies the backward Euler equations with the rows' true
 * forces (the fixed point of the local/global iteration); a balloon reaches its target volume,
 * with its volume row in the matrix or, past PBD_PD_DENSE_MAX free particles, outside it; an
 * internal-only world keeps its momentum; degenerate elements give no NaN; the factor is not
 * rebuilt while the body moves; a world saved and loaded mid-motion resumes with the same weights,
 * bit for bit, and a corrupt weight block is refused. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "methods/integrate.h"
#include "test_physics.h"
#include "test_rows.h"

/* ---- a closed sphere: the icosahedron, each triangle split in four `level` times --------------------------- */

#define ICO_MAXV 2562
#define ICO_MAXT 5120

typedef struct ico {
	pbd_vec3 x[ICO_MAXV];
	uint32_t t[3 * ICO_MAXT];
	uint32_t nv, nt;
} ico;

/* The vertex halfway along a-b on the sphere, made once per edge (a linear search: small meshes). */
static uint32_t midpoint(ico* s, uint32_t (*edges)[3], uint32_t* ne, uint32_t a, uint32_t b, pbd_real radius) {
	const uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
	for (uint32_t e = 0; e < *ne; ++e)
		if (edges[e][0] == lo && edges[e][1] == hi) return edges[e][2];
	const pbd_vec3 m = pbd_v3_scale(pbd_v3_add(s->x[a], s->x[b]), 0.5f);
	assert_true(s->nv < ICO_MAXV);
	s->x[s->nv] = pbd_v3_scale(m, radius / PBD_SQRT(pbd_v3_dot(m, m)));
	edges[*ne][0] = lo, edges[*ne][1] = hi, edges[*ne][2] = s->nv;
	++*ne;
	return s->nv++;
}

static void icosphere(ico* s, int level, pbd_real radius) {
	static uint32_t edges[3 * ICO_MAXT / 2][3];
	const pbd_real t = 1.618034f;
	const pbd_vec3 v[12] = {{-1, t, 0},  {1, t, 0},  {-1, -t, 0}, {1, -t, 0}, {0, -1, t},  {0, 1, t},
	                        {0, -1, -t}, {0, 1, -t}, {t, 0, -1},  {t, 0, 1},  {-t, 0, -1}, {-t, 0, 1}};
	static const uint32_t f[60] = {0, 11, 5,  0, 5,  1, 0, 1, 7, 0, 7,  10, 0, 10, 11, 1, 5, 9, 5, 11,
	                               4, 11, 10, 2, 10, 7, 6, 7, 1, 8, 3,  9,  4, 3,  4,  2, 3, 2, 6, 3,
	                               6, 8,  3,  8, 9,  4, 9, 5, 2, 4, 11, 6,  2, 10, 8,  6, 7, 9, 8, 1};
	for (int i = 0; i < 12; ++i) s->x[i] = pbd_v3_scale(v[i], radius / PBD_SQRT(pbd_v3_dot(v[i], v[i])));
	s->nv = 12;
	s->nt = 20;
	memcpy(s->t, f, sizeof f);
	for (int l = 0; l < level; ++l) {
		static uint32_t next[3 * ICO_MAXT];
		uint32_t ne = 0, nt = 0;
		for (uint32_t k = 0; k < s->nt; ++k) {
			const uint32_t a = s->t[3 * k], b = s->t[3 * k + 1], c = s->t[3 * k + 2];
			const uint32_t ab = midpoint(s, edges, &ne, a, b, radius), bc = midpoint(s, edges, &ne, b, c, radius),
			               ca = midpoint(s, edges, &ne, c, a, radius);
			const uint32_t split[12] = {a, ab, ca, b, bc, ab, c, ca, bc, ab, bc, ca};
			assert_true(nt + 4 <= ICO_MAXT);
			memcpy(next + 3 * nt, split, sizeof split);
			nt += 4;
		}
		s->nt = nt;
		memcpy(s->t, next, 3 * (size_t)nt * sizeof *next);
	}
}

static double enclosed_volume(const pbd_world* w, const ico* s) {
	const pbd_vec3* x = pbd_world_positions(w);
	double v = 0;
	for (uint32_t k = 0; k < s->nt; ++k) {
		const tp_dvec3 a = tp_d(x[s->t[3 * k]]), b = tp_d(x[s->t[3 * k + 1]]), c = tp_d(x[s->t[3 * k + 2]]);
		v += ((a.y * b.z - a.z * b.y) * c.x + (a.z * b.x - a.x * b.z) * c.y + (a.x * b.y - a.y * b.x) * c.z) / 6;
	}
	return v;
}

static pbd_world* pd_world(int iterations) {
	pbd_world_def def = pbd_world_def_default();
	def.method = PBD_METHOD_PROJECTIVE_DYNAMICS;
	def.formulation = PBD_FORMULATION_XPBD;
	def.iterations = iterations;
	def.substeps = 1;
	def.damping = 1;
	def.stiffness_damping = 0;
	return test_world(&def);
}

/* ---- the fixed point ------------------------------------------------------------------------------------------ */

/* Two tetrahedra with soft volumes and soft edges, one corner pinned, thrown: after one step with
 * the iteration run to convergence, every free particle satisfies backward Euler,
 *   m (v1 - v0) / h = m g + f(x1),   x1 = x0 + h v1,
 * with f the rows' forces at x1. The matrix only preconditions; a wrong right-hand side (the row's
 * force left out, or the weight's product) would leave a residual of the size of the forces. */
static void test_fixed_point_is_backward_euler(void** state) {
	(void)state;
	pbd_world* w = pd_world(400);
	const pbd_vec3 x[5] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}};
	const pbd_real iw[5] = {0, 1, 2, 1, 0.5f};
	assert_int_equal(pbd_world_add_particles(w, 5, x, NULL, iw, NULL), PBD_OK);
	pbd_tet_volume_def t[2] = {pbd_tet_volume_def_default(), pbd_tet_volume_def_default()};
	const uint32_t p[2][4] = {{0, 1, 2, 3}, {1, 2, 3, 4}};
	for (int k = 0; k < 2; ++k) {
		memcpy(t[k].p, p[k], sizeof p[k]);
		t[k].compliance = 2e-3f * (pbd_real)(k + 1);
		t[k].rest_volume = k ? 0.25f : 0.2f; /* both start off their rest volume */
	}
	assert_int_equal(pbd_world_add_tet_volumes(w, 2, t, NULL), PBD_OK);
	pbd_distance_def d[9];
	const uint32_t e[9][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}, {1, 4}, {2, 4}, {3, 4}};
	for (int k = 0; k < 9; ++k) {
		d[k] = pbd_distance_def_default();
		d[k].a = e[k][0], d[k].b = e[k][1];
		d[k].compliance_stretch = d[k].compliance_compress = 0.05f;
	}
	assert_int_equal(pbd_world_add_distances(w, 9, d, NULL), PBD_OK);
	const pbd_vec3 v0[5] = {{0, 0, 0}, {0.5f, 0, 0}, {0, -1, 0.3f}, {0.2f, 0.1f, -0.4f}, {-0.6f, 0.2f, 0}};
	assert_int_equal(pbd_world_set_velocities(w, 0, 5, v0), PBD_OK);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	assert_true(tp_all_finite(w));
	const double h = (double)w->def.dt;
	pbd_vec3 f[5];
	test_rows_linearise(w, f);
	double worst = 0, scale = 0, moved = 0;
	for (uint32_t i = 0; i < 5; ++i) {
		if (!(iw[i] > 0)) continue;
		const double m = 1 / (double)iw[i];
		const pbd_vec3 v1 = pbd_world_velocities(w)[i];
		for (int c = 0; c < 3; ++c) {
			const double fi = (double)(&f[i].x)[c], g = (double)(&w->def.gravity.x)[c];
			const double r = m * ((double)(&v1.x)[c] - (double)(&v0[i].x)[c]) / h - m * g - fi;
			worst = fmax(worst, fabs(r));
			scale = fmax(scale, fmax(fabs(fi), m * 9.81));
		}
		moved = fmax(moved, tp_dist(pbd_world_positions(w)[i], x[i]));
	}
	printf("  one step, 400 iterations: backward Euler residual %.3g of the largest force %.3g (moved %.3g m)\n", worst,
	       scale, moved);
	assert_true(moved > 1e-3);
	/* measured 1.8e-7 of the largest force in float */
	assert_true(worst < TEST_TOL(1e-9, 1e-5) * scale);
	pbd_world_destroy(w);
}

/* ---- the balloon ---------------------------------------------------------------------------------------------- */

/* A sphere of radius 0.5 m (10 g a vertex) with only its enclosed volume, inflated to 1.5 times
 * its rest volume in zero gravity: nothing opposes the volume, so it settles at the target. Level 2
 * (162 vertices) has its row in the matrix, level 3 (642) beyond PBD_PD_DENSE_MAX. */
static void test_balloon_reaches_target(void** state) {
	(void)state;
	static ico s;
	const pbd_real compliances[2] = {1e-3f, 1e-5f};
	for (int level = 2; level <= 3; ++level) {
		for (int c = 0; c < 2; ++c) {
			icosphere(&s, level, 0.5f);
			pbd_world* w = pd_world(10);
			w->def.gravity = pbd_v3(0, 0, 0);
			w->def.damping = 0.98f;
			static pbd_real iw[ICO_MAXV];
			for (uint32_t i = 0; i < s.nv; ++i) iw[i] = 100;
			assert_int_equal(pbd_world_add_particles(w, s.nv, s.x, NULL, iw, NULL), PBD_OK);
			pbd_volume_def vd = pbd_volume_def_default();
			vd.triangle_count = s.nt;
			vd.triangles = s.t;
			vd.pressure = 1.5f;
			vd.compliance = compliances[c];
			assert_int_equal(pbd_world_add_volumes(w, 1, &vd, NULL), PBD_OK);
			const double v0 = enclosed_volume(w, &s);
			for (int k = 0; k < 300; ++k) assert_int_equal(pbd_world_step(w), PBD_OK);
			assert_true(tp_all_finite(w));
			const double ratio = enclosed_volume(w, &s) / (1.5 * v0);
			double speed = 0;
			for (uint32_t i = 0; i < s.nv; ++i) speed = fmax(speed, tp_len(pbd_world_velocities(w)[i]));
			printf("  balloon of %4u vertices, compliance %.0e: V / V_target - 1 = %.3g after 5 s, speed %.3g m/s\n",
			       s.nv, (double)compliances[c], ratio - 1, speed);
			/* measured: within 3e-7 at both sizes and both compliances */
			assert_true(fabs(ratio - 1) < 1e-4);
			assert_true(w->integ->pd_nlr == (level == 3 || s.nv > PBD_PD_DENSE_MAX ? 1u : 0u));
			pbd_world_destroy(w);
		}
	}
}

/* ---- momentum ------------------------------------------------------------------------------------------------ */

/* Two tetrahedra (volumes and Neo-Hookean elements), their closed surface's enclosed volume, strain
 * triangles and dihedral hinges on it, all soft, moved off rest and thrown in zero gravity: every
 * row's force sums to zero (sum_i g_i = 0) and the centring matrix is blind to a translation, so
 * every iteration keeps sum_i m_i x_i and the step keeps the linear momentum. A balloon (its
 * volume through the low-rank update) does the same. */
static void add_bipyramid(pbd_world* w) {
	const pbd_vec3 x[5] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}};
	const pbd_real iw[5] = {1, 2, 1, 0.5f, 1};
	assert_int_equal(pbd_world_add_particles(w, 5, x, NULL, iw, NULL), PBD_OK);
	pbd_tet_volume_def t[2] = {pbd_tet_volume_def_default(), pbd_tet_volume_def_default()};
	pbd_tet_neohookean_def nh[2] = {pbd_tet_neohookean_def_default(), pbd_tet_neohookean_def_default()};
	const uint32_t p[2][4] = {{0, 1, 2, 3}, {1, 2, 3, 4}};
	for (int k = 0; k < 2; ++k) {
		memcpy(t[k].p, p[k], sizeof p[k]);
		memcpy(nh[k].p, p[k], sizeof p[k]);
		t[k].compliance = 0.01f;
		nh[k].youngs_modulus = 300;
		nh[k].poisson_ratio = 0.35f;
	}
	assert_int_equal(pbd_world_add_tet_volumes(w, 2, t, NULL), PBD_OK);
	assert_int_equal(pbd_world_add_tet_neohookeans(w, 2, nh, NULL), PBD_OK);
	/* the surface, counter-clockwise from outside: tet 0 less face 1-2-3, tet 1 less the same */
	static const uint32_t tri[18] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 4, 2, 3, 4, 3, 1, 4};
	pbd_volume_def vd = pbd_volume_def_default();
	vd.triangle_count = 6;
	vd.triangles = tri;
	vd.pressure = 1.2f;
	vd.compliance = 0.02f;
	assert_int_equal(pbd_world_add_volumes(w, 1, &vd, NULL), PBD_OK);
	pbd_triangle_strain_def ts[2] = {pbd_triangle_strain_def_default(), pbd_triangle_strain_def_default()};
	ts[0].a = 0, ts[0].b = 2, ts[0].c = 1;
	ts[1].a = 2, ts[1].b = 3, ts[1].c = 4;
	for (int k = 0; k < 2; ++k) ts[k].stretch_compliance = ts[k].shear_compliance = 0.02f;
	assert_int_equal(pbd_world_add_triangle_strains(w, 2, ts, NULL), PBD_OK);
	pbd_bend_dihedral_def bd[2] = {pbd_bend_dihedral_def_default(), pbd_bend_dihedral_def_default()};
	const uint32_t hinge[2][4] = {{1, 2, 0, 4}, {2, 3, 0, 4}};
	for (int k = 0; k < 2; ++k) {
		memcpy(bd[k].p, hinge[k], sizeof hinge[k]);
		bd[k].compliance = 0.1f;
	}
	assert_int_equal(pbd_world_add_bend_dihedrals(w, 2, bd, NULL), PBD_OK);
}

static void throw_all(pbd_world* w, uint64_t seed, double amp_x, double amp_v) {
	const uint32_t n = pbd_world_particle_count(w);
	for (uint32_t i = 0; i < n; ++i) {
		pbd_vec3 x = pbd_world_positions(w)[i], v;
		for (int c = 0; c < 3; ++c) {
			(&x.x)[c] += (pbd_real)tp_rand_range(&seed, -amp_x, amp_x);
			(&v.x)[c] = (pbd_real)tp_rand_range(&seed, -amp_v, amp_v) + (c == 0 ? 1.0f : 0.0f);
		}
		assert_int_equal(pbd_world_set_positions(w, i, 1, &x), PBD_OK);
		assert_int_equal(pbd_world_set_velocities(w, i, 1, &v), PBD_OK);
	}
}

static void test_momentum_kept(void** state) {
	(void)state;
	static ico s;
	for (int body = 0; body < 2; ++body) {
		pbd_world* w = pd_world(4);
		w->def.gravity = pbd_v3(0, 0, 0);
		if (body == 0) {
			add_bipyramid(w);
		} else {
			icosphere(&s, 2, 0.5f);
			static pbd_real iw[ICO_MAXV];
			for (uint32_t i = 0; i < s.nv; ++i) iw[i] = i % 3 ? 100 : 50;
			assert_int_equal(pbd_world_add_particles(w, s.nv, s.x, NULL, iw, NULL), PBD_OK);
			pbd_volume_def vd = pbd_volume_def_default();
			vd.triangle_count = s.nt;
			vd.triangles = s.t;
			vd.pressure = 1.3f;
			vd.compliance = 1e-4f;
			assert_int_equal(pbd_world_add_volumes(w, 1, &vd, NULL), PBD_OK);
		}
		throw_all(w, 21 + (uint64_t)body, 0.08, 0.5);
		const tp_dvec3 p0 = tp_momentum(w);
		double mv = 0; /* sum m |v|, the scale of the momentum's rounding */
		for (int k = 0; k < 120; ++k) {
			assert_int_equal(pbd_world_step(w), PBD_OK);
			const pbd_real* iw = pbd_world_inv_masses(w);
			for (uint32_t i = 0; i < pbd_world_particle_count(w); ++i)
				mv = fmax(mv, tp_len(pbd_world_velocities(w)[i]) / (double)iw[i]);
		}
		assert_true(tp_all_finite(w));
		const double drift = tp_dlen(tp_dsub(tp_momentum(w), p0)) / tp_dlen(p0);
		printf("  %s, 120 steps: momentum drift %.3g of |p| (largest m |v| %.3g)\n",
		       body ? "balloon, low-rank volume" : "tets, volume, strains, hinges", drift, mv);
		assert_true(mv > 0.5 * tp_dlen(p0) / pbd_world_particle_count(w)); /* it moved */
		assert_true(drift < TEST_TOL(1e-10, 1e-4));
		pbd_world_destroy(w);
	}
}

/* ---- degenerate elements and the kept factor ------------------------------------------------------------------ */

/* The bipyramid collapsed: all five particles on one point (every tet, triangle and the enclosed
 * volume of zero size, gradients 0), then on a line, then on a plane: steps stay finite. */
static void test_degenerate_no_nan(void** state) {
	(void)state;
	for (int shape = 0; shape < 3; ++shape) {
		pbd_world* w = pd_world(10);
		add_bipyramid(w);
		pbd_vec3 x[5];
		for (uint32_t i = 0; i < 5; ++i) {
			const pbd_real t = (pbd_real)i * 0.25f;
			x[i] = shape == 0   ? pbd_v3(0.3f, 0.3f, 0.3f)
			       : shape == 1 ? pbd_v3(t, 2 * t, 0)
			                    : pbd_v3(t, (pbd_real)(i % 2), 0);
		}
		assert_int_equal(pbd_world_set_positions(w, 0, 5, x), PBD_OK);
		for (int k = 0; k < 60; ++k) assert_int_equal(pbd_world_step(w), PBD_OK);
		assert_true(tp_all_finite(w));
		assert_int_equal(pbd_world_get_warning(w, PBD_WARN_NONFINITE).count, 0);
		pbd_world_destroy(w);
	}
}

/* A soft box of 2 x 2 x 2 cells (tet volumes or Neo-Hookean elements, no edges) pinned on its face
 * x = 0, sagging under gravity; `corner` gets the free corner farthest from the pins. */
static pbd_world* sagging_box(int iterations, pbd_tet_model tets, uint32_t* corner) {
	pbd_world* w = pd_world(iterations);
	pbd_tet_box_def bd = pbd_tet_box_def_default();
	bd.nx = bd.ny = bd.nz = 2;
	bd.size = pbd_v3(0.3f, 0.3f, 0.3f);
	pbd_mesh m;
	pbd_error err;
	assert_int_equal(pbd_mesh_tet_box(&bd, &m, &err), PBD_OK);
	uint32_t pins[32], np = 0;
	for (uint32_t i = 0; i < m.vertex_count; ++i)
		if (m.positions[i].x == 0) pins[np++] = i;
	pbd_soft_def sd = pbd_soft_def_default();
	sd.mesh = &m;
	sd.pinned = pins;
	sd.pinned_count = np;
	sd.mass_mode = PBD_MASS_TOTAL;
	sd.mass = 1;
	sd.tets = tets;
	sd.tet_compliance = 1e-3f;
	sd.tet_youngs_modulus = 2e3f;
	sd.tet_poisson_ratio = 0.3f;
	for (int k = 0; k < PBD_EDGE_KIND_COUNT; ++k) sd.material[k].enabled = false;
	assert_int_equal(pbd_soft_create(w, &sd, NULL), PBD_OK);
	uint32_t c = 0;
	for (uint32_t i = 0; i < m.vertex_count; ++i)
		if (m.positions[i].x > m.positions[c].x ||
		    (m.positions[i].x == m.positions[c].x && m.positions[i].y < m.positions[c].y))
			c = i;
	if (corner) *corner = c;
	pbd_mesh_free(&m);
	return w;
}

/* The box: the weights (and so the factor) of the first step are kept while the body moves; a new
 * substep takes new ones. */
static void test_factor_kept(void** state) {
	(void)state;
	uint32_t corner;
	pbd_world* w = sagging_box(20, PBD_TET_NEOHOOKEAN, &corner);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	const uint32_t n = w->integ->rows.n;
	static double wt[4096];
	assert_true(n <= 4096);
	memcpy(wt, w->integ->pd_wt, n * sizeof *wt);
	double general = 0;
	for (uint32_t r = 0; r < n; ++r) general += w->integ->rows.rest[r] < 0 && wt[r] > 0;
	assert_true(general > 0);
	const pbd_vec3 x0 = pbd_world_positions(w)[corner];
	for (int k = 0; k < 30; ++k) assert_int_equal(pbd_world_step(w), PBD_OK);
	const double moved = tp_dist(pbd_world_positions(w)[corner], x0);
	printf("  %.0f general rows, corner moved %.3g m in 30 steps: weights kept\n", general, moved);
	assert_true(moved > 1e-3);
	assert_memory_equal(wt, w->integ->pd_wt, n * sizeof *wt);
	pbd_world_set_substeps(w, 2);
	assert_int_equal(pbd_world_step(w), PBD_OK);
	bool changed = false;
	for (uint32_t r = 0; r < n; ++r) changed |= wt[r] != w->integ->pd_wt[r];
	assert_true(changed);
	pbd_world_destroy(w);
}

/* ---- snapshots ------------------------------------------------------------------------------------------------ */

static void* save(const pbd_world* w, size_t* size) {
	assert_int_equal(pbd_world_save_memory(w, NULL, 0, size), PBD_OK);
	void* buf = malloc(*size);
	assert_non_null(buf);
	assert_int_equal(pbd_world_save_memory(w, buf, *size, size), PBD_OK);
	return buf;
}

/* The three worlds of the resume test, unconverged (3 iterations), so that the weights decide the
 * iterates: the sagging box of tet volumes, the same of Neo-Hookean elements, and the bipyramid
 * (volumes, Neo-Hookean, strains, hinges, an enclosed volume) with a balloon whose volume goes
 * through the low-rank update, thrown. */
static pbd_world* resume_world(int scene) {
	static ico s;
	if (scene < 2) return sagging_box(3, scene == 0 ? PBD_TET_VOLUME : PBD_TET_NEOHOOKEAN, NULL);
	pbd_world* w = pd_world(3);
	add_bipyramid(w);
	icosphere(&s, 2, 0.5f);
	static pbd_vec3 x[ICO_MAXV];
	static pbd_real iw[ICO_MAXV];
	static uint32_t tri[3 * ICO_MAXT];
	for (uint32_t i = 0; i < s.nv; ++i) {
		x[i] = pbd_v3_add(s.x[i], pbd_v3(3, 0, 0));
		iw[i] = i % 3 ? 100 : 50;
	}
	for (uint32_t k = 0; k < 3 * s.nt; ++k) tri[k] = s.t[k] + 5;
	assert_int_equal(pbd_world_add_particles(w, s.nv, x, NULL, iw, NULL), PBD_OK);
	pbd_volume_def vd = pbd_volume_def_default();
	vd.triangle_count = s.nt;
	vd.triangles = tri;
	vd.pressure = 1.3f;
	vd.compliance = 1e-4f;
	assert_int_equal(pbd_world_add_volumes(w, 1, &vd, NULL), PBD_OK);
	throw_all(w, 33, 0.08, 0.5);
	return w;
}

/* Saved after 10 steps, loaded, both stepped 10 more: the same bits. The weights of the general rows
 * were taken at the first step and the body has moved since; a loaded world that took them from its
 * positions would build another matrix, and 3 iterations leave the step far enough from converged
 * that another matrix gives other bits. */
static void test_snapshot_resume(void** state) {
	(void)state;
	for (int scene = 0; scene < 3; ++scene) {
		pbd_world* w = resume_world(scene);
		for (int k = 0; k < 10; ++k) assert_int_equal(pbd_world_step(w), PBD_OK);
		size_t size;
		void* buf = save(w, &size);
		pbd_world* r = NULL;
		pbd_error err;
		assert_int_equal(pbd_world_load_memory(buf, size, NULL, &r, &err), PBD_OK);
		free(buf);
		for (int k = 0; k < 10; ++k) {
			assert_int_equal(pbd_world_step(w), PBD_OK);
			assert_int_equal(pbd_world_step(r), PBD_OK);
		}
		const uint32_t n = w->integ->rows.n;
		printf("  scene %d: %u rows, %u low-rank: hashes %s\n", scene, n, w->integ->pd_nlr,
		       pbd_world_hash(w) == pbd_world_hash(r) ? "equal" : "differ");
		assert_true(pbd_world_hash(w) == pbd_world_hash(r));
		assert_int_equal(r->integ->rows.n, n);
		assert_int_equal(r->integ->pd_nlr, w->integ->pd_nlr);
		assert_memory_equal(r->integ->pd_wt, w->integ->pd_wt, n * sizeof *w->integ->pd_wt);
		assert_true(tp_all_finite(w));
		pbd_world_destroy(w);
		pbd_world_destroy(r);
	}
}

/* The projective dynamics block comes last but for the rigid bodies, before the 8-byte hash: the row count, the
 * free-particle count, the matrix's entries and its values' hash, then a weight and a key per row.
 * A NaN weight, a negative one and a count past the bytes, resealed so that the checksum passes,
 * are refused with a line naming the field; the world is not made. A version 6 snapshot (no
 * block) still loads. */
static void test_snapshot_corrupt_block_refused(void** state) {
	(void)state;
	pbd_world* w = resume_world(0);
	for (int k = 0; k < 3; ++k) assert_int_equal(pbd_world_step(w), PBD_OK);
	size_t size;
	uint8_t* good = save(w, &size);
	uint8_t* bad = malloc(size);
	assert_non_null(bad);
	const uint32_t n = w->integ->rows.n;
	/* after it only the rigid bodies', the shapes on bodies' and the touching pairs' counts (4 bytes
	 * each, 0 here), the two sleep settings, the kept contacts' block and the hash */
	const size_t at_wt =
	                 size - 8 - TEST_SNAPSHOT_KEPT_NONE - 2 * sizeof(pbd_real) - 3 * 4 - 2 * (size_t)n * sizeof(double),
	             at_count = at_wt - 8 - 3 * 4;
	uint32_t count;
	memcpy(&count, good + at_count, 4);
	assert_int_equal(count, n);
	uint32_t first = 0; /* a general row in the matrix */
	while (first < n && !(w->integ->pd_wt[first] > 0)) ++first;
	assert_true(first < n);
	const double values[2] = {NAN, -1};
	for (int v = 0; v < 3; ++v) {
		memcpy(bad, good, size);
		if (v < 2) {
			memcpy(bad + at_wt + first * sizeof(double), &values[v], sizeof(double));
		} else {
			const uint32_t many = 0x7fffffff;
			memcpy(bad + at_count, &many, 4);
		}
		const uint64_t h = pbd_fnv1a(PBD_FNV1A_START, bad, size - 8);
		memcpy(bad + size - 8, &h, 8);
		pbd_world* r = NULL;
		pbd_error err;
		err.message[0] = 0;
		assert_int_equal(pbd_world_load_memory(bad, size, NULL, &r, &err), PBD_ERR_PARSE);
		assert_null(r);
		printf("  %s\n", err.message);
		assert_non_null(strstr(err.message, "snapshot: "));
		assert_non_null(strstr(err.message, v < 2 ? "projective dynamics weight" : "projective dynamics state"));
		assert_null(strchr(err.message, '\n'));
	}
	/* the good bytes load, and the loaded world steps */
	pbd_world* r = NULL;
	pbd_error err;
	assert_int_equal(pbd_world_load_memory(good, size, NULL, &r, &err), PBD_OK);
	assert_true(r->integ->pd_restored);
	assert_int_equal(pbd_world_step(r), PBD_OK);
	assert_false(r->integ->pd_restored);
	pbd_world_destroy(r);
	/* A version 6 snapshot, the same bytes without the header's size field (version 8's) and
	 * without the block (and its count), loads and takes its weights from the positions; versions
	 * 5 and 14 are refused. */
	const size_t head = 20, body = at_count - 8, v6 = body + 8;
	memcpy(bad, good, head);
	memcpy(bad + head, good + head + 8, at_count - head - 8);
	for (uint32_t version = 5; version <= 14; version += 9) {
		memcpy(bad + 8, &version, 4);
		const uint64_t h = pbd_fnv1a(PBD_FNV1A_START, bad, body);
		memcpy(bad + body, &h, 8);
		assert_int_equal(pbd_world_load_memory(bad, v6, NULL, &r, &err), PBD_ERR_PARSE);
		assert_non_null(strstr(err.message, "this library reads versions 6 to 13"));
	}
	const uint32_t six = 6;
	memcpy(bad + 8, &six, 4);
	const uint64_t h = pbd_fnv1a(PBD_FNV1A_START, bad, body);
	memcpy(bad + body, &h, 8);
	assert_int_equal(pbd_world_load_memory(bad, v6, NULL, &r, &err), PBD_OK);
	assert_false(r->integ->pd_restored);
	assert_int_equal(pbd_world_step(r), PBD_OK);
	assert_true(tp_all_finite(r));
	pbd_world_destroy(r);
	free(good);
	free(bad);
	pbd_world_destroy(w);
}

/* More large rows than the low-rank update takes: refused with a reason, the world as it was. */
static void test_too_many_large_rows_refused(void** state) {
	(void)state;
	static ico s;
	icosphere(&s, 2, 0.5f);
	char msg[256] = "";
	pbd_world* w = pd_world(4);
	w->def.log = test_log_keep;
	w->def.log_user = msg;
	static uint32_t tri[3 * ICO_MAXT];
	for (uint32_t b = 0; b <= PBD_PD_LOW_RANK_MAX; ++b) {
		static pbd_vec3 x[ICO_MAXV];
		static pbd_real iw[ICO_MAXV];
		for (uint32_t i = 0; i < s.nv; ++i) {
			x[i] = pbd_v3_add(s.x[i], pbd_v3(1.5f * (pbd_real)b, 0, 0));
			iw[i] = 100;
		}
		assert_int_equal(pbd_world_add_particles(w, s.nv, x, NULL, iw, NULL), PBD_OK);
		for (uint32_t k = 0; k < 3 * s.nt; ++k) tri[k] = s.t[k] + b * s.nv;
		pbd_volume_def vd = pbd_volume_def_default();
		vd.triangle_count = s.nt;
		vd.triangles = tri;
		assert_int_equal(pbd_world_add_volumes(w, 1, &vd, NULL), PBD_OK);
	}
	const uint64_t before = pbd_world_hash(w);
	assert_int_equal(pbd_world_step(w), PBD_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "constraints over more than"));
	assert_true(pbd_world_hash(w) == before);
	pbd_world_destroy(w);
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fixed_point_is_backward_euler),
	    cmocka_unit_test(test_balloon_reaches_target),
	    cmocka_unit_test(test_momentum_kept),
	    cmocka_unit_test(test_degenerate_no_nan),
	    cmocka_unit_test(test_factor_kept),
	    cmocka_unit_test(test_too_many_large_rows_refused),
	    cmocka_unit_test(test_snapshot_resume),
	    cmocka_unit_test(test_snapshot_corrupt_block_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
