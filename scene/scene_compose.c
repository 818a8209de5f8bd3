/* "include", "materials" and "templates" of scene files (scene_compose.h). */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "scene_compose.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pbd/material.h"

/* A named material or template: its definition lives in `keep` until the load ends. */
typedef struct named {
	cJSON* def; /* def->string is the name */
	const char* source;
} named;

typedef struct compose {
	jr* r;
	scene_compose* out;
	bool builtin;
	cJSON* objects; /* the composed arrays */
	cJSON* colliders;
	cJSON* bodies;
	cJSON* keep; /* the definitions, moved out of their files' trees */
	named* mats;
	size_t mat_count, mat_cap;
	named* tpls;
	size_t tpl_count, tpl_cap;
	const char* chain[SCENE_MAX_INCLUDE_DEPTH + 2]; /* the files being included, outermost first */
	size_t includes;
	uint64_t copied; /* JSON values copied out of templates and materials */
} compose;

/* Values in a tree; cJSON's nesting limit bounds the recursion. */
static uint64_t value_count(const cJSON* v) {
	uint64_t n = 1;
	for (const cJSON* c = v->child; c; c = c->next) n += value_count(c);
	return n;
}

static bool grow(void** p, size_t* cap, size_t need, size_t elem) {
	if (need <= *cap) return true;
	const size_t c = *cap ? 2 * *cap : 16;
	void* n = realloc(*p, (c < need ? need : c) * elem);
	if (!n) return false;
	*p = n;
	*cap = c < need ? need : c;
	return true;
}

static bool duplicate_key(jr* r, const cJSON* obj, const char* key) {
	int seen = 0;
	for (const cJSON* c = obj->child; c; c = c->next)
		if (c->string && !strcmp(c->string, key)) ++seen;
	if (seen < 2) return false;
	jr_fail(r, key, "duplicate key");
	return true;
}

/* "a", "b" and "c" of a list of definitions, for a message about a name that is none of them. */
static void name_list(const named* list, size_t n, char* out, size_t size) {
	out[0] = '\0';
	size_t used = 0;
	for (size_t i = 0; i < n && used < size; ++i) {
		const int w = snprintf(out + used, size - used, "%s\"%s\"", i ? ", " : "", list[i].def->string);
		if (w < 0) break;
		used += (size_t)w;
	}
}

/* The last definition of `name`: a later one (the including file's) replaces an earlier one. */
static const named* find(const named* list, size_t n, const char* name) {
	for (size_t i = n; i-- > 0;)
		if (!strcmp(list[i].def->string, name)) return &list[i];
	return NULL;
}

/* Moves the definitions of root's `key` ("materials" or "templates") into the list. */
static bool take_named(compose* c, cJSON* root, const char* key, const char* source, named** list, size_t* n,
                       size_t* cap) {
	jr* r = c->r;
	cJSON* lib = cJSON_GetObjectItemCaseSensitive(root, key);
	if (!lib) return true;
	if (duplicate_key(r, root, key)) return false;
	if (!cJSON_IsObject(lib))
		return jr_fail(r, key, "expected an object of named definitions (got %s)", jr_type_name(lib));
	const bool materials = !strcmp(key, "materials");
	while (lib->child) {
		cJSON* d = lib->child;
		char p[JR_PATH_MAX];
		jr_path_key(p, key, d->string ? d->string : "");
		if (materials) {
			static const char* const keys[] = {"material", "cloth_material", NULL};
			if (!jr_object(r, d, p, keys)) return false;
			if (!d->child) return jr_fail(r, p, "needs \"material\" or \"cloth_material\"");
		} else {
			if (!cJSON_IsObject(d))
				return jr_fail(r, p, "expected an object of object fields (got %s)", jr_type_name(d));
			if (jr_get(d, "template")) {
				char q[JR_PATH_MAX];
				jr_path_key(q, p, "template");
				return jr_fail(r, q, "a template cannot use another template");
			}
		}
		for (size_t i = 0; i < *n; ++i)
			if ((*list)[i].source == source && !strcmp((*list)[i].def->string, d->string))
				return jr_fail(r, p, "defined twice in this file");
		if (!grow((void**)list, cap, *n + 1, sizeof **list)) return jr_fail(r, p, "out of memory");
		cJSON_DetachItemViaPointer(lib, d);
		cJSON_AddItemToArray(c->keep, d);
		(*list)[(*n)++] = (named){d, source};
	}
	return true;
}

/* Moves the entries of root's `key` ("objects", "colliders" or "bodies") to the end of the composed array. */
static bool take_entries(compose* c, cJSON* root, const char* key, const char* source, cJSON* into,
                         scene_origin** origins, size_t* n, size_t* cap) {
	jr* r = c->r;
	const cJSON* arr;
	size_t count;
	if (duplicate_key(r, root, key) || !jr_array(r, root, "", key, &arr, &count)) return false;
	cJSON* a = (cJSON*)arr;
	for (size_t i = 0; a && a->child; ++i) {
		if (!grow((void**)origins, cap, *n + 1, sizeof **origins)) return jr_fail(r, key, "out of memory");
		scene_origin* o = &(*origins)[(*n)++];
		memset(o, 0, sizeof *o);
		o->source = source;
		jr_path_index(o->path, key, i);
		cJSON_AddItemToArray(into, cJSON_DetachItemViaPointer(a, a->child));
	}
	return true;
}

/* "a.json -> b.json -> a.json" */
static void chain_text(const compose* c, size_t depth, const char* last, char* out, size_t size) {
	size_t used = 0;
	out[0] = '\0';
	for (size_t k = 0; k <= depth + 1 && used < size; ++k) {
		const int w = snprintf(out + used, size - used, "%s%s", k ? " -> " : "", k <= depth ? c->chain[k] : last);
		if (w < 0) break;
		used += (size_t)w;
	}
}

static bool compose_file(compose* c, cJSON* root, const char* source, const char* dir, size_t depth);

/* Reads, parses and composes include[i] of the file at `depth`. */
static bool include_one(compose* c, const cJSON* item, const char* ipath, const char* dir, size_t depth) {
	jr* r = c->r;
	if (!cJSON_IsString(item) || !item->valuestring || !item->valuestring[0])
		return jr_fail(r, ipath, "expected a file name (got %s)", jr_type_name(item));
	const char* file = item->valuestring;
	char full[4200];
	const pbd_scene_builtin* b = NULL;
	if (c->builtin) {
		const char* f = file;
		while (f[0] == '.' && f[1] == '/') f += 2;
		const size_t n = strlen(f);
		char stem[PBD_SCENE_NAME_MAX];
		if (n > 5 && n - 5 < sizeof stem && !strcmp(f + n - 5, ".json") && !strchr(f, '/')) {
			memcpy(stem, f, n - 5);
			stem[n - 5] = '\0';
			b = pbd_scene_builtin_find(stem);
		}
		if (!b)
			return jr_fail(r, ipath, "\"%.200s\": a built-in scene includes only built-in scenes/*.json files", file);
		snprintf(full, sizeof full, "builtin:%s.json", b->name);
	} else {
		const int w = file[0] == '/' || !dir ? snprintf(full, sizeof full, "%s", file)
		                                     : snprintf(full, sizeof full, "%s/%s", dir, file);
		if (w < 0 || (size_t)w >= sizeof full) return jr_fail(r, ipath, "path too long");
	}
	char chain[400];
	for (size_t k = 0; k <= depth; ++k)
		if (!strcmp(c->chain[k], full)) {
			chain_text(c, depth, full, chain, sizeof chain);
			return jr_fail(r, ipath, "include cycle: %s", chain);
		}
	if (depth + 1 > SCENE_MAX_INCLUDE_DEPTH) {
		chain_text(c, depth, full, chain, sizeof chain);
		return jr_fail(r, ipath, "includes nested deeper than %d: %s", SCENE_MAX_INCLUDE_DEPTH, chain);
	}
	if (++c->includes > SCENE_MAX_INCLUDES)
		return jr_fail(r, ipath, "more than %d included files in one scene", SCENE_MAX_INCLUDES);
	scene_compose* out = c->out;
	char* name = strdup(full);
	if (!name || !grow((void**)&out->sources, &out->source_cap, out->source_count + 1, sizeof(char*))) {
		free(name);
		return jr_fail(r, ipath, "out of memory");
	}
	out->sources[out->source_count++] = name;
	/* The included file names itself in what goes wrong while it is read. */
	jr sub = {name, r->message, r->message_size, false};
	cJSON* tree;
	if (b) {
		tree = jr_parse(&sub, (const char*)b->json, b->size, true);
	} else {
		const char* kind;
		FILE* fp = scene_open_regular(full, &kind);
		if (!fp && kind) return jr_fail(r, ipath, "%.200s: cannot read %s, only a regular file", full, kind);
		if (!fp) return jr_fail(r, ipath, "cannot open \"%.200s\": %s", full, strerror(errno));
		size_t size = 0;
		pbd_scene_error e;
		char* text = scene_read_text(fp, full, &size, &e);
		fclose(fp);
		if (!text) return jr_fail(r, ipath, "%s", e.message);
		tree = jr_parse(&sub, text, size, true);
		free(text);
	}
	if (!tree) {
		r->failed = true;
		return false;
	}
	static const char* const keys[] = {"include", "materials", "templates", "colliders", "objects", "bodies", NULL};
	bool ok = jr_object(&sub, tree, "", keys);
	if (!ok) r->failed = true;
	char sub_dir[4200];
	const char* slash = b ? NULL : strrchr(full, '/');
	if (slash) {
		const size_t n = slash == full ? 1 : (size_t)(slash - full);
		memcpy(sub_dir, full, n);
		sub_dir[n] = '\0';
	}
	ok = ok && compose_file(c, tree, name, slash ? sub_dir : NULL, depth + 1);
	cJSON_Delete(tree);
	return ok;
}

/* The file's includes first, then its own definitions and entries. */
static bool compose_file(compose* c, cJSON* root, const char* source, const char* dir, size_t depth) {
	jr* r = c->r;
	const char* outer = r->source;
	r->source = source;
	c->chain[depth] = source;
	bool ok = true;
	const cJSON* inc = cJSON_GetObjectItemCaseSensitive(root, "include");
	if (inc && duplicate_key(r, root, "include")) ok = false;
	if (ok && inc && !cJSON_IsArray(inc)) ok = jr_fail(r, "include", "expected an array of file names");
	size_t i = 0;
	for (const cJSON* item = inc ? inc->child : NULL; ok && item; item = item->next, ++i) {
		char p[JR_PATH_MAX];
		jr_path_index(p, "include", i);
		ok = include_one(c, item, p, dir, depth);
		r->source = source;
	}
	scene_compose* o = c->out;
	ok =
	    ok && take_named(c, root, "materials", source, &c->mats, &c->mat_count, &c->mat_cap) &&
	    take_named(c, root, "templates", source, &c->tpls, &c->tpl_count, &c->tpl_cap) &&
	    take_entries(c, root, "objects", source, c->objects, &o->objects, &o->object_count, &o->object_cap) &&
	    take_entries(c, root, "colliders", source, c->colliders, &o->colliders, &o->collider_count, &o->collider_cap) &&
	    take_entries(c, root, "bodies", source, c->bodies, &o->bodies, &o->body_count, &o->body_cap);
	r->source = outer;
	return ok;
}

/* Adds to `into` a copy of each key of `from` that `into` lacks, listing them in *keys. With
 * `what` (the lender, for the message), a key both have is an error instead; messages go to `at`. */
static bool lend(compose* c, cJSON* into, const cJSON* from, const char* at, const char* what, char** keys) {
	size_t len = 1;
	for (const cJSON* k = from->child; k; k = k->next) len += strlen(k->string) + 1;
	char* list = malloc(len);
	if (!list) return jr_fail(c->r, at, "out of memory");
	size_t used = 0;
	for (const cJSON* k = from->child; k; k = k->next) {
		if (jr_get(into, k->string)) {
			if (!what) continue; /* the object's own value overrides the template's */
			free(list);
			return jr_fail(c->r, at, "%s sets \"%s\", which the object gives too", what, k->string);
		}
		/* Every use copies: many objects of one big template must not outgrow what a file may hold. */
		c->copied += value_count(k);
		if (c->copied > SCENE_MAX_COPIED_VALUES) {
			free(list);
			return jr_fail(c->r, at,
			               "templates and materials copy more than %u JSON values into the objects (fewer uses, or "
			               "smaller templates)",
			               SCENE_MAX_COPIED_VALUES);
		}
		cJSON* copy = cJSON_Duplicate(k, true);
		if (!copy) {
			free(list);
			return jr_fail(c->r, at, "out of memory");
		}
		cJSON_AddItemToObject(into, k->string, copy);
		const size_t n = strlen(k->string) + 1;
		memcpy(list + used, k->string, n);
		used += n;
	}
	list[used] = '\0';
	*keys = list;
	return true;
}

static bool lent_by(const scene_lender* l, const char* key) {
	for (const char* s = l->source ? l->keys : ""; *s; s += strlen(s) + 1)
		if (!strcmp(s, key)) return true;
	return false;
}

/* The object at `item` of the composed array, written at origin o, with its template and named
 * material filled in. */
static bool expand_object(compose* c, cJSON* item, scene_origin* o) {
	jr* r = c->r;
	if (!cJSON_IsObject(item)) return true; /* the builder says what it expected */
	char p[JR_PATH_MAX];
	const cJSON* t = jr_get(item, "template");
	if (t) {
		jr_path_key(p, o->path, "template");
		if (!cJSON_IsString(t) || !t->valuestring)
			return jr_fail(r, p, "expected a template name (got %s)", jr_type_name(t));
		const named* d = find(c->tpls, c->tpl_count, t->valuestring);
		if (!d) {
			char list[300];
			name_list(c->tpls, c->tpl_count, list, sizeof list);
			return jr_fail(r, p, "unknown template \"%.64s\" (%s%s)", t->valuestring,
			               c->tpl_count ? "the scene defines " : "the scene defines no \"templates\"", list);
		}
		cJSON_DeleteItemFromObjectCaseSensitive(item, "template");
		o->lent[0].source = d->source;
		jr_path_key(o->lent[0].path, "templates", d->def->string);
		if (!lend(c, item, d->def, p, NULL, &o->lent[0].keys)) return false;
	}
	cJSON* m = cJSON_GetObjectItemCaseSensitive(item, "material");
	if (!cJSON_IsString(m) || !m->valuestring) return true;
	/* Where "material" was written: the object, or its template. */
	const bool from_template = lent_by(&o->lent[0], "material");
	const char* keep = r->source;
	r->source = from_template ? o->lent[0].source : o->source;
	jr_path_key(p, from_template ? o->lent[0].path : o->path, "material");
	const char* name = m->valuestring;
	const named* d = find(c->mats, c->mat_count, name);
	bool ok = true;
	if (d) {
		cJSON_DetachItemViaPointer(item, m);
		o->lent[1].source = d->source;
		jr_path_key(o->lent[1].path, "materials", d->def->string);
		char what[100];
		snprintf(what, sizeof what, "material \"%.64s\"", name);
		ok = lend(c, item, d->def, p, what, &o->lent[1].keys);
		cJSON_Delete(m);
	} else {
		pbd_cloth_material preset;
		pbd_error err;
		if (pbd_cloth_material_preset(name, &preset, &err) == PBD_OK) {
			/* Not the scene's own: the library's preset, as "cloth_material" names it. */
			const cJSON* type = jr_get(item, "type");
			const char* tn = cJSON_IsString(type) && type->valuestring ? type->valuestring : "";
			if (strcmp(tn, "grid_cloth") && strcmp(tn, "mesh_cloth"))
				ok = jr_fail(r, p,
				             "\"%s\" is a cloth preset, for grid_cloth and mesh_cloth objects (this one's "
				             "\"material\" is an object {structural, shear, bend})",
				             name);
			else if (jr_get(item, "cloth_material"))
				ok = jr_fail(r, p, "names the preset \"%s\", and the object gives \"cloth_material\" too", name);
			else if (!cJSON_AddStringToObject(item, "cloth_material", name))
				ok = jr_fail(r, p, "out of memory");
			else
				cJSON_DeleteItemFromObjectCaseSensitive(item, "material");
		} else {
			char list[300], presets[200] = "";
			name_list(c->mats, c->mat_count, list, sizeof list);
			size_t used = 0;
			for (uint32_t k = 0; k < pbd_cloth_material_preset_count() && used < sizeof presets; ++k) {
				const int w = snprintf(presets + used, sizeof presets - used, "%s\"%s\"", k ? ", " : "",
				                       pbd_cloth_material_preset_name(k));
				if (w < 0) break;
				used += (size_t)w;
			}
			ok = jr_fail(r, p, "unknown material \"%.64s\" (the scene's \"materials\": %s; the library's presets: %s)",
			             name, c->mat_count ? list : "none", presets);
		}
	}
	r->source = keep;
	return ok;
}

/* Whether the tree uses anything this file resolves; a scene that does not is left alone, and
 * costs no allocation. */
static bool uses_reuse(const cJSON* root) {
	if (jr_get(root, "include") || jr_get(root, "materials") || jr_get(root, "templates")) return true;
	const cJSON* objects = jr_get(root, "objects");
	for (const cJSON* o = cJSON_IsArray(objects) ? objects->child : NULL; o; o = o->next)
		if (cJSON_IsObject(o) && (jr_get(o, "template") || cJSON_IsString(jr_get(o, "material")))) return true;
	return false;
}

bool scene_compose_run(jr* r, cJSON* root, const char* base_dir, bool builtin, scene_compose* out) {
	memset(out, 0, sizeof *out);
	if (!uses_reuse(root)) return true;
	compose c;
	memset(&c, 0, sizeof c);
	c.r = r;
	c.out = out;
	c.builtin = builtin;
	c.objects = cJSON_CreateArray();
	c.colliders = cJSON_CreateArray();
	c.bodies = cJSON_CreateArray();
	c.keep = cJSON_CreateArray();
	bool ok = c.objects && c.colliders && c.bodies && c.keep;
	if (!ok) jr_fail(r, "", "out of memory");
	ok = ok && compose_file(&c, root, r->source, base_dir, 0);
	size_t i = 0;
	for (cJSON* item = ok ? c.objects->child : NULL; ok && item; item = item->next, ++i) {
		const char* keep = r->source;
		r->source = out->objects[i].source;
		ok = expand_object(&c, item, &out->objects[i]);
		r->source = keep;
	}
	if (ok) {
		cJSON_DeleteItemFromObjectCaseSensitive(root, "include");
		cJSON_DeleteItemFromObjectCaseSensitive(root, "materials");
		cJSON_DeleteItemFromObjectCaseSensitive(root, "templates");
		cJSON_DeleteItemFromObjectCaseSensitive(root, "objects");
		cJSON_DeleteItemFromObjectCaseSensitive(root, "colliders");
		cJSON_DeleteItemFromObjectCaseSensitive(root, "bodies");
		if (out->object_count) {
			cJSON_AddItemToObject(root, "objects", c.objects);
			c.objects = NULL;
		}
		if (out->collider_count) {
			cJSON_AddItemToObject(root, "colliders", c.colliders);
			c.colliders = NULL;
		}
		if (out->body_count) {
			cJSON_AddItemToObject(root, "bodies", c.bodies);
			c.bodies = NULL;
		}
	}
	cJSON_Delete(c.objects);
	cJSON_Delete(c.colliders);
	cJSON_Delete(c.bodies);
	cJSON_Delete(c.keep);
	free(c.mats);
	free(c.tpls);
	return ok;
}

void scene_compose_blame(const scene_origin* o, jr* r) {
	if (!r->failed || !o) return;
	char head[JR_PATH_MAX + 4200];
	const int n = snprintf(head, sizeof head, "%s: %s.", o->source, o->path);
	if (n < 0 || (size_t)n >= sizeof head || strncmp(r->message, head, (size_t)n)) return;
	char rest[512];
	snprintf(rest, sizeof rest, "%s", r->message + n);
	char key[JR_PATH_MAX];
	const size_t kl = strcspn(rest, ".[:");
	snprintf(key, sizeof key, "%.*s", (int)kl, rest);
	/* The material's keys first: a template may have lent the name that brought them. */
	for (int k = 1; k >= 0; --k)
		if (lent_by(&o->lent[k], key)) {
			snprintf(r->message, r->message_size, "%s: %s.%s", o->lent[k].source, o->lent[k].path, rest);
			return;
		}
}

void scene_compose_free(scene_compose* c) {
	for (size_t i = 0; i < c->source_count; ++i) free(c->sources[i]);
	free(c->sources);
	for (size_t i = 0; i < c->object_count; ++i) {
		free(c->objects[i].lent[0].keys);
		free(c->objects[i].lent[1].keys);
	}
	free(c->objects);
	free(c->colliders);
	free(c->bodies);
	memset(c, 0, sizeof *c);
}
