/* Scene authoring: OBJ vertex groups as pin selections; "include", named "materials" and object
 * "templates" giving the same world as the same scene written out; comments in scene files; and
 * the message of every refusal, which names the file and field the value came from. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pbd/scene.h"
#include "scene_embedded.h" /* scene_load_builtin_text */
#include "test_util.h"

#define WORK    "test_scene_reuse_data"
#define TWO_OBJ PBD_SOURCE_DIR "/tests/data/two_groups.obj"

static void write_text(const char* path, const char* text) {
	FILE* fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_true(fputs(text, fp) >= 0);
	assert_int_equal(fclose(fp), 0);
}

static void make_work(void) {
	if (mkdir(WORK, 0777) != 0) assert_int_equal(errno, EEXIST);
}

static pbd_scene load_text(const char* text, const char* base_dir) {
	pbd_scene s;
	pbd_scene_error err;
	if (!pbd_scene_load_string(text, strlen(text), "t.json", base_dir, NULL, &s, &err)) fail_msg("%s", err.message);
	return s;
}

static pbd_scene load_path(const char* path) {
	pbd_scene s;
	pbd_scene_error err;
	if (!pbd_scene_load_file(path, NULL, &s, &err)) fail_msg("%s", err.message);
	return s;
}

/* The message of a refused text, which must contain `want`. */
static void expect_text_error(const char* text, const char* base_dir, const char* want) {
	pbd_scene s;
	pbd_scene_error err;
	if (pbd_scene_load_string(text, strlen(text), "t.json", base_dir, NULL, &s, &err)) {
		pbd_scene_free(&s);
		fail_msg("loaded, expected an error containing: %s", want);
	}
	assert_null(s.world);
	if (!strstr(err.message, want)) fail_msg("got: %s\nexpected to contain: %s", err.message, want);
	assert_null(strchr(err.message, '\n'));
}

static void expect_file_error(const char* path, const char* want) {
	pbd_scene s;
	pbd_scene_error err;
	if (pbd_scene_load_file(path, NULL, &s, &err)) {
		pbd_scene_free(&s);
		fail_msg("%s loaded, expected an error containing: %s", path, want);
	}
	if (!strstr(err.message, want)) fail_msg("got: %s\nexpected to contain: %s", err.message, want);
}

/* The world's hash after `frames` steps. */
static uint64_t hash_after(pbd_scene* s, int frames) {
	for (int f = 0; f < frames; ++f) assert_int_equal(pbd_scene_step(s), PBD_OK);
	const uint64_t h = pbd_world_hash(s->world);
	pbd_scene_free(s);
	return h;
}

/* ---- OBJ groups ------------------------------------------------------------------------- */

/* The reader gives the names in order of appearance and each group's triangles: the object's
 * name covers every face, a face under "g a b" is in both, and "g" alone ends the groups. */
static void test_obj_groups_reader(void** state) {
	(void)state;
	const char* text = "o thing\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 2 0 0\n"
	                   "g a b a\nf 1 2 3 4\ng b\nf 2 5 3\ng\nf 1 2 4\n";
	pbd_mesh m;
	pbd_obj_groups g;
	pbd_error err;
	assert_int_equal(pbd_mesh_load_obj_memory_groups(text, strlen(text), "g.obj", false, &m, &g, &err), PBD_OK);
	assert_int_equal(m.triangle_count, 4);
	assert_int_equal(g.count, 3);
	assert_string_equal(g.names[0], "thing");
	assert_string_equal(g.names[1], "a");
	assert_string_equal(g.names[2], "b");
	const uint32_t first[4] = {0, 4, 6, 9};
	const uint32_t tris[9] = {0, 1, 2, 3, 0, 1, 0, 1, 2};
	assert_memory_equal(g.first, first, sizeof first);
	assert_memory_equal(g.triangles, tris, sizeof tris);
	pbd_obj_groups_free(&g);
	assert_null(g.names);
	pbd_mesh_free(&m);

	/* A bad face after the groups: nothing is left behind, the message names the line. */
	const char* bad = "g a\nv 0 0 0\nv 1 0 0\nv 1 1 0\nf 1 2 9\n";
	assert_int_not_equal(pbd_mesh_load_obj_memory_groups(bad, strlen(bad), "b.obj", false, &m, &g, &err), PBD_OK);
	assert_int_equal(g.count, 0);
	assert_null(g.names);
	assert_null(m.positions);
	assert_non_null(strstr(err.message, "b.obj:5:"));

	/* Without groups asked for, g and o lines are skipped as before. */
	assert_int_equal(pbd_mesh_load_obj_memory(text, strlen(text), "g.obj", false, &m, &err), PBD_OK);
	assert_int_equal(m.triangle_count, 4);
	pbd_mesh_free(&m);
}

/* {"group": "hem"} pins exactly the vertices of the hem's face; the rest keep their mass. */
static void test_group_pin(void** state) {
	(void)state;
	pbd_scene s = load_text("{\"objects\": [{\"type\": \"mesh_cloth\", \"obj\": \"" TWO_OBJ "\","
	                        " \"pinned\": {\"group\": \"hem\"}}]}",
	                        NULL);
	assert_int_equal(pbd_world_particle_count(s.world), 6);
	const pbd_real* w = pbd_world_inv_masses(s.world);
	const int pinned[6] = {1, 1, 0, 1, 1, 0}; /* vertices 1, 2, 4, 5 of the file */
	for (int i = 0; i < 6; ++i)
		if ((w[i] == 0) != pinned[i]) fail_msg("vertex %d: inverse mass %g", i, (double)w[i]);
	pbd_scene_free(&s);

	/* The object's name is a group of all its faces; in a list with an index. */
	s = load_text("{\"objects\": [{\"type\": \"mesh_cloth\", \"obj\": \"" TWO_OBJ "\","
	              " \"attached\": {\"vertices\": [{\"group\": \"body\"}]}, \"pinned\": [{\"group\": \"sheet\"}]}]}",
	              NULL);
	w = pbd_world_inv_masses(s.world);
	for (int i = 0; i < 6; ++i) assert_true(w[i] == 0);
	pbd_scene_free(&s);

	expect_text_error(
	    "{\"objects\": [{\"type\": \"mesh_cloth\", \"obj\": \"" TWO_OBJ "\","
	    " \"pinned\": {\"group\": \"hm\"}}]}",
	    NULL, "t.json: objects[0].pinned.group: unknown group \"hm\" (the OBJ file has \"sheet\", \"hem\", \"body\")");
	make_work();
	write_text(WORK "/plain.obj", "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n");
	expect_text_error(
	    "{\"objects\": [{\"type\": \"mesh_cloth\", \"obj\": \"plain.obj\", \"pinned\": [0, {\"group\": "
	    "\"hem\"}]}]}",
	    WORK,
	    "t.json: objects[0].pinned[1].group: unknown group \"hem\" (the OBJ file names no groups: add g or o "
	    "lines)");
	expect_text_error("{\"objects\": [{\"type\": \"grid_cloth\", \"pinned\": {\"group\": \"hem\"}}]}", NULL,
	                  "t.json: objects[0].pinned.group: needs a mesh_cloth read from an \"obj\" file");
	expect_text_error("{\"objects\": [{\"type\": \"mesh_cloth\", \"obj\": \"" TWO_OBJ "\","
	                  " \"pinned\": {\"group\": 3}}]}",
	                  NULL, "t.json: objects[0].pinned.group: expected a group name (got a number)");
}

/* ---- include, materials, templates ------------------------------------------------------ */

static void test_reuse_same_world(void** state) {
	(void)state;
	make_work();
	write_text(WORK "/common.json",
	           "// shared by the scenes of this folder\n"
	           "{\"colliders\": [{\"type\": \"plane\", \"normal\": [0, 1, 0], \"offset\": -1}],\n"
	           " \"materials\": {\"stiff_denim\": {\"cloth_material\": {\"preset\": \"denim\", \"bending\": 0.001},"
	           " \"material\": {\"shear\": {\"stiffness\": 0.5}}}},\n"
	           " \"templates\": {\"panel\": {\"type\": \"grid_cloth\", \"nx\": 6, \"ny\": 5,"
	           " \"pinned\": {\"grid_edge\": \"top\"}, \"material\": \"stiff_denim\"}}}\n");
	write_text(WORK "/rope.json", "{\"include\": [\"common.json\"], \"objects\": [{\"type\": \"rope\", \"segments\": 5,"
	                              " \"start\": [0, 1, 0], \"end\": [1, 1, 0]}]}");
	write_text(WORK "/main.json",
	           "{\"include\": [\"rope.json\"], \"world\": {\"substeps\": 4},\n"
	           " \"objects\": [{\"template\": \"panel\"},\n"
	           "  {\"template\": \"panel\", \"nx\": 4, \"origin\": [2, 0, 0], \"material\": \"cotton\"}]}\n");
	pbd_scene b = load_path(WORK "/main.json");
	/* The included file's objects come first: the rope, then main's two panels. */
	assert_int_equal(b.object_count, 3);
	assert_int_equal(b.objects[0].type, PBD_SCENE_OBJECT_ROPE);
	assert_int_equal(b.objects[2].type, PBD_SCENE_OBJECT_GRID_CLOTH);
	assert_int_equal(b.collider_count, 1);
	pbd_scene_free(&b);
	/* The same scene written out in full. */
	const char* inline_ordered =
	    "{\"world\": {\"substeps\": 4},"
	    " \"colliders\": [{\"type\": \"plane\", \"normal\": [0, 1, 0], \"offset\": -1}],"
	    " \"objects\": ["
	    "  {\"type\": \"rope\", \"segments\": 5, \"start\": [0, 1, 0], \"end\": [1, 1, 0]},"
	    "  {\"type\": \"grid_cloth\", \"nx\": 6, \"ny\": 5, \"pinned\": {\"grid_edge\": \"top\"},"
	    "   \"cloth_material\": {\"preset\": \"denim\", \"bending\": 0.001}, \"material\": {\"shear\": {\"stiffness\": "
	    "0.5}}},"
	    "  {\"type\": \"grid_cloth\", \"nx\": 4, \"ny\": 5, \"origin\": [2, 0, 0], \"pinned\": {\"grid_edge\": "
	    "\"top\"},"
	    "   \"cloth_material\": \"cotton\"}]}";
	pbd_scene a = load_text(inline_ordered, NULL);
	b = load_path(WORK "/main.json");
	const uint64_t ha = hash_after(&a, 20), hb = hash_after(&b, 20);
	assert_true(ha == hb);
	/* And the materials matter: the same scene with the panel's material left out differs. */
	write_text(WORK "/plain.json",
	           "{\"include\": [\"rope.json\"], \"world\": {\"substeps\": 4},\n"
	           " \"objects\": [{\"template\": \"panel\", \"material\": {}},\n"
	           "  {\"template\": \"panel\", \"nx\": 4, \"origin\": [2, 0, 0], \"material\": \"cotton\"}]}\n");
	b = load_path(WORK "/plain.json");
	assert_true(hash_after(&b, 20) != ha);

	/* A scene's own material named like a preset shadows the preset. */
	a = load_text("{\"materials\": {\"cotton\": {\"cloth_material\": \"denim\"}},"
	              " \"objects\": [{\"type\": \"grid_cloth\", \"material\": \"cotton\"}]}",
	              NULL);
	b = load_text("{\"objects\": [{\"type\": \"grid_cloth\", \"cloth_material\": \"denim\"}]}", NULL);
	const uint64_t hs = hash_after(&a, 10);
	assert_true(hs == hash_after(&b, 10));
}

/* Every refusal names the file and the field the value was written in. */
static void test_reuse_errors(void** state) {
	(void)state;
	make_work();
	write_text(WORK "/lib.json", "{\"templates\": {\"bad\": {\"type\": \"grid_cloth\", \"nx\": 1}},\n"
	                             " \"materials\": {\"soft\": {\"material\": {\"shear\": {\"stiffness\": 2}}}}}\n");
	/* A template's field is reported where the template wrote it ... */
	write_text(WORK "/a.json", "{\"include\": [\"lib.json\"], \"objects\": [{\"template\": \"bad\"}]}");
	expect_file_error(WORK "/a.json", WORK "/lib.json: templates.bad.nx: ");
	/* ... unless the object overrides it. */
	write_text(WORK "/b.json", "{\"include\": [\"lib.json\"], \"objects\": [{\"template\": \"bad\", \"nx\": -3}]}");
	expect_file_error(WORK "/b.json", WORK "/b.json: objects[0].nx: ");
	/* A named material's field, where the material wrote it. */
	write_text(WORK "/c.json",
	           "{\"include\": [\"lib.json\"], \"objects\": [{\"type\": \"grid_cloth\", \"material\": \"soft\"}]}");
	expect_file_error(WORK "/c.json", WORK "/lib.json: materials.soft.material.shear.stiffness: ");
	/* An object of an included file is reported in that file. */
	write_text(WORK "/inc_bad.json", "{\"objects\": [{\"type\": \"rope\"}, {\"type\": \"rope\", \"segments\": 0}]}");
	write_text(WORK "/d.json", "{\"include\": [\"inc_bad.json\"]}");
	expect_file_error(WORK "/d.json", WORK "/inc_bad.json: objects[1].segments: ");
	/* So is an object the size check refuses before anything is built. */
	write_text(WORK "/big.json", "{\"objects\": [{\"type\": \"rope\"}, {\"type\": \"grid_cloth\", \"nx\": 3000, "
	                             "\"ny\": 3000}]}");
	write_text(WORK "/e.json", "{\"include\": [\"big.json\"], \"objects\": [{\"type\": \"rope\"}]}");
	expect_file_error(WORK "/e.json", WORK "/big.json: objects[1]: too many particles");
	/* Cycles and depth, with the chain. */
	write_text(WORK "/cyc1.json", "{\"include\": [\"cyc2.json\"]}");
	write_text(WORK "/cyc2.json", "{\"include\": [\"cyc1.json\"]}");
	expect_file_error(WORK "/cyc1.json",
	                  "include[0]: include cycle: " WORK "/cyc1.json -> " WORK "/cyc2.json -> " WORK "/cyc1.json");
	for (int k = 0; k < 10; ++k) {
		char name[64], text[128];
		snprintf(name, sizeof name, WORK "/deep%d.json", k);
		snprintf(text, sizeof text, "{\"include\": [\"deep%d.json\"]}", k + 1);
		write_text(name, text);
	}
	expect_file_error(WORK "/deep0.json",
	                  WORK "/deep8.json: include[0]: includes nested deeper than 8: " WORK "/deep0.json -> ");
	expect_file_error(WORK "/deep0.json", "/deep8.json -> " WORK "/deep9.json");
	/* Unknown names, a missing file, keys an included file may not hold. */
	expect_text_error("{\"objects\": [{\"template\": \"x\"}]}", NULL,
	                  "t.json: objects[0].template: unknown template \"x\" (the scene defines no \"templates\")");
	expect_text_error("{\"templates\": {\"a\": {\"type\": \"rope\"}}, \"objects\": [{\"template\": \"x\"}]}", NULL,
	                  "t.json: objects[0].template: unknown template \"x\" (the scene defines \"a\")");
	expect_text_error("{\"objects\": [{\"type\": \"rope\", \"material\": \"silk\"}]}", NULL,
	                  "t.json: objects[0].material: unknown material \"silk\" (the scene's \"materials\": none; the "
	                  "library's presets: \"cotton\"");
	expect_text_error(
	    "{\"materials\": {\"m\": {\"cloth_material\": \"denim\"}}, \"objects\": [{\"type\": "
	    "\"grid_cloth\", \"material\": \"m\", \"cloth_material\": \"rubber\"}]}",
	    NULL, "t.json: objects[0].material: material \"m\" sets \"cloth_material\", which the object gives too");
	expect_text_error(
	    "{\"objects\": [{\"type\": \"rope\", \"material\": \"cotton\"}]}", NULL,
	    "t.json: objects[0].material: \"cotton\" is a cloth preset, for grid_cloth and mesh_cloth objects");
	expect_text_error(
	    "{\"objects\": [{\"type\": \"grid_cloth\", \"material\": \"cotton\", \"cloth_material\": "
	    "\"denim\"}]}",
	    NULL, "t.json: objects[0].material: names the preset \"cotton\", and the object gives \"cloth_material\"");
	expect_text_error("{\"materials\": {\"m\": {}}}", NULL,
	                  "t.json: materials.m: needs \"material\" or \"cloth_material\"");
	expect_text_error("{\"materials\": {\"m\": {\"density\": 1}}}", NULL, "t.json: materials.m.density: unknown key");
	expect_text_error("{\"templates\": {\"t\": {\"template\": \"u\"}}}", NULL,
	                  "t.json: templates.t.template: a template cannot use another template");
	expect_text_error("{\"include\": [\"missing.json\"]}", WORK,
	                  "t.json: include[0]: cannot open \"" WORK "/missing.json\"");
	expect_text_error("{\"include\": \"common.json\"}", WORK, "t.json: include: expected an array of file names");
	write_text(WORK "/world.json", "{\"world\": {}}");
	expect_text_error("{\"include\": [\"world.json\"]}", WORK, WORK "/world.json: world: unknown key");
	write_text(WORK "/syntax.json", "{\n  // fine\n  \"objects\": [,]}");
	expect_text_error("{\"include\": [\"syntax.json\"]}", WORK, WORK "/syntax.json:3:15: syntax error");
	/* A built-in scene includes only built-in files, and those hold scene keys an include may not. */
	pbd_scene s;
	pbd_scene_error err;
	const char* b1 = "{\"include\": [\"common.json\"]}";
	assert_false(scene_load_builtin_text(b1, strlen(b1), "builtin:x.json", NULL, &s, &err));
	assert_non_null(strstr(err.message, "builtin:x.json: include[0]: \"common.json\": a built-in scene includes only "
	                                    "built-in scenes/*.json files"));
	const char* b2 = "{\"include\": [\"rope.json\"]}";
	assert_false(scene_load_builtin_text(b2, strlen(b2), "builtin:x.json", NULL, &s, &err));
	assert_non_null(strstr(err.message, "builtin:rope.json: name: unknown key"));
	/* Many uses of a big template: refused before the copies outgrow a file's worth. */
	const size_t n = 100000, uses = 25;
	char* big = malloc(n * 2 + uses * 32 + 256);
	assert_non_null(big);
	size_t k = (size_t)sprintf(big, "{\"templates\": {\"t\": {\"type\": \"particles\", \"pad\": [0");
	for (size_t i = 1; i < n; ++i) k += (size_t)sprintf(big + k, ",0");
	k += (size_t)sprintf(big + k, "]}}, \"objects\": [");
	for (size_t i = 0; i < uses; ++i) k += (size_t)sprintf(big + k, "%s{\"template\": \"t\"}", i ? "," : "");
	sprintf(big + k, "]}");
	expect_text_error(big, NULL, "objects[20].template: templates and materials copy more than 2097152 JSON values");
	free(big);
}

/* ---- comments --------------------------------------------------------------------------- */

static void test_comments(void** state) {
	(void)state;
	/* Markers inside strings, an escaped quote among them, are text. */
	const char* with = "// a scene\n{\"frames\": 7, /* the length\n of the run */\n"
	                   "\"description\": \"a // b /* c \\\" */\" // end\n}";
	pbd_scene s = load_text(with, NULL);
	assert_int_equal(s.frames, 7);
	assert_string_equal(s.description, "a // b /* c \" */");
	pbd_scene_free(&s);
	/* Comments keep the lines and columns of what follows them. */
	expect_text_error("/* one\ntwo */ {\"frames\": 1,\n  // three\n    \"x\" 1}", NULL, "t.json:4:9: syntax error");
	expect_text_error("{\"frames\": 1} /* open", NULL, "t.json:1:15: syntax error: a /* comment that does not end");
	expect_text_error("{\"frames\": /* two */ -2}", NULL, "t.json: frames: ");
}

int main(void) {
	test_enable_fp_traps();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_obj_groups_reader), cmocka_unit_test(test_group_pin),
	    cmocka_unit_test(test_reuse_same_world),  cmocka_unit_test(test_reuse_errors),
	    cmocka_unit_test(test_comments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
