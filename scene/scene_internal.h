/* The scene loader's shared state and the readers one of its files calls in another: the
 * state of one load, the checks every reader makes (scene_build.c), and per concern the readers
 * of its fields. Each returns false after a message in L->r. Internal to the scene library. */
#ifndef PBD_SCENE_INTERNAL_H
#define PBD_SCENE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "json_read.h"
#include "pbd/scene.h"
#include "scene_compose.h"
#include "scene_embedded.h"

/* Everything one load needs, so that nothing is global. */
typedef struct loader {
	jr r;
	const char* base_dir; /* where relative file names start; NULL = working directory */
	bool builtin;         /* a built-in scene: relative names look in the embedded data files first */
	pbd_scene* s;
	uint64_t particles; /* running totals, checked against the scene caps */
	uint64_t constraints;
	uint64_t max_particles, max_constraints; /* the caps: SCENE_MAX_* or the options' lower ones */
	const pbd_obj_groups* groups;            /* the OBJ groups of the mesh_cloth being read, else NULL */
	const scene_compose* compose;            /* where each object and collider was written */
	pbd_log_fn note;                         /* the options' log, which hears scene_note; NULL = silent */
	void* note_user;
} loader;

/* Between the world and the caller's log callback: quiet while the scene loads (the loader
 * reports a refusal itself, with the field path, so the caller would otherwise see it twice),
 * then passing every message on. Heap-allocated because the world keeps its address and the
 * scene struct is returned by value. */
struct pbd_scene_log {
	pbd_log_fn fn;
	void* user;
	bool loading;
	char held[256]; /* the last message held back while loading */
};

#define SCENE_FILE_NAME_MAX 4200 /* a resolved file name: a folder and a 4096-byte string */

/* ---- scene_build.c: the scene from its parsed, composed tree ------------------------------- */

/* Fills L->s from `root`: name, render settings, the world, then objects and colliders. */
bool scene_build(loader* L, const cJSON* root, const char* default_name, const pbd_scene_options* opt);
/* The library's last message, with the path of the object whose creation it refused. */
bool scene_fail_world(loader* L, const char* path);
/* Checks the scene-wide caps before anything is allocated for an object. */
bool scene_check_caps(loader* L, const char* path, uint64_t particles, uint64_t constraints);
/* Checks the caps and counts the object in. */
bool scene_reserve(loader* L, const char* path, uint64_t particles, uint64_t constraints);
/* Refuses a direction at path.key whose squared length overflows pbd_real. */
bool scene_direction_finite(loader* L, const char* path, const char* key, pbd_vec3 d);
/* One line to the options' log that the scene loads but should change (a deprecated key), as
 * "source: path: message". */
void scene_note(loader* L, const char* path, const char* fmt, ...) JR_PRINTF(3, 4);

/* ---- scene_world.c ------------------------------------------------------------------------- */

/* "world": the settings over pbd_world_def_default() in *d. */
bool scene_read_world(loader* L, const cJSON* root, pbd_world_def* d);

/* ---- scene_body.c: the fields mesh-based objects share ------------------------------------- */

/* The keys scene_create_body reads: the models and the collision filter of a surface object, */
#define SCENE_MODEL_KEYS                                                                                               \
	"cloth_material", "bending", "membrane", "long_range", "balloon", "collision_mask", "thickness", "self_collision", \
	    "edge_contacts"
/* the air: "drag" across the object's triangles and "drag_tangent" along them (kg/(m^2 s)),
 * "drag_particle" on each particle of an object without triangles (kg/s), and a "wind" of its own
 * added to the world's (scene_read_air), */
#define SCENE_AIR_KEYS "drag", "drag_tangent", "drag_particle", "wind"
/* and vertices held by attachment springs or moved as pins (scene_read_moving_pins). */
#define SCENE_ATTACH_KEYS "attached", "moving_pins"

/* The range of a mass and of a non-zero inverse mass. */
extern const jr_range scene_mass_range;
/* Stiffness and compliance of a constraint, whole or split into _stretch/_compress. */
bool scene_read_softness(loader* L, const cJSON* obj, const char* path, pbd_edge_material* m);
/* An inverse mass read as a double: 0 (pinned) or within scene_mass_range. */
bool scene_inv_mass_ok(loader* L, const char* path, double inv_mass);
/* Vertex indices and selections at `key`, each vertex once; *out is malloc'd (NULL if empty). */
bool scene_read_vertex_set(loader* L, const cJSON* obj, const char* path, const char* key, const pbd_mesh* m,
                           uint32_t** out, uint32_t* out_count);
/* "pinned", as scene_read_vertex_set. */
bool scene_read_pinned(loader* L, const cJSON* obj, const char* path, const pbd_mesh* m, uint32_t** out,
                       uint32_t* out_count);
/* An object's "name"; out keeps its default when there is none. */
bool scene_read_name(loader* L, const cJSON* obj, const char* path, char out[PBD_SCENE_NAME_MAX]);
/* The SCENE_AIR_KEYS of an object with or without `triangles`. */
bool scene_read_air(loader* L, const cJSON* obj, const char* path, bool triangles, pbd_real* normal, pbd_real* tangent,
                    pbd_real* particle, pbd_vec3* wind);
/* The shared fields, then the soft body of `mesh` (the caller's) as object *o. */
bool scene_create_body(loader* L, const cJSON* obj, const char* path, const pbd_mesh* mesh, pbd_scene_object* o);

/* ---- scene_objects.c ----------------------------------------------------------------------- */

/* Where object i of the composed scene was written: its path, and the origin (NULL for the
 * scene's own file). */
const scene_origin* scene_object_place(const loader* L, size_t i, char path[JR_PATH_MAX]);
/* Refuses "objects" whose size fields alone pass the scene caps. */
bool scene_check_total_size(loader* L, const cJSON* objects);
/* One entry of "objects", by its "type". */
bool scene_read_object(loader* L, const cJSON* obj, const char* path, pbd_scene_object* o);

/* ---- scene_mesh.c -------------------------------------------------------------------------- */

/* An OBJ file named at field `fpath`, held to the coordinate cap. */
bool scene_load_obj(loader* L, const char* fpath, const char* file, bool bend, pbd_mesh* mesh, pbd_obj_groups* groups);
/* At least `min` points [x, y, z]; *out is malloc'd. */
bool scene_read_points(loader* L, const cJSON* arr, const char* apath, size_t min, const char* what, pbd_vec3** out,
                       uint32_t* count);
/* At least one triangle of indices below `nv`; *out is malloc'd, 3 per triangle. */
bool scene_read_triangles(loader* L, const cJSON* arr, const char* tpath, uint32_t nv, uint32_t** out, uint32_t* count);
/* Inline "vertices" and "triangles" made into *mesh. */
bool scene_read_inline_mesh(loader* L, const cJSON* obj, const char* path, bool bend, pbd_mesh* mesh);

/* ---- scene_files.c ------------------------------------------------------------------------- */

/* The scene's folder joined to a relative `file`. */
bool scene_resolve_path(loader* L, const char* path, const char* file, char* out, size_t out_size);
/* The embedded data file a built-in scene's relative `file` names, or NULL. */
const scene_data_file* scene_embedded_data(const loader* L, const char* file);
/* The bytes of a data file, embedded or read whole (at most `max_bytes`); *owned is the caller's. */
bool scene_read_data_file(loader* L, const char* fpath, const char* file, size_t max_bytes, const unsigned char** bytes,
                          size_t* size, unsigned char** owned, char name[SCENE_FILE_NAME_MAX]);

/* ---- scene_image.c ------------------------------------------------------------------------- */

/* A heightfield's heights from a grey PGM or PNG image; *heights is malloc'd. */
bool scene_read_height_image(loader* L, const char* fpath, const char* file, double scale, double offset,
                             pbd_heightfield* hf, pbd_real** heights);

/* ---- scene_colliders.c --------------------------------------------------------------------- */

/* Collider `index` of the scene, created in the world; or, with `body` not the null id, a shape
 * on that body (its pose in the body's frame, the keys of a motion of its own refused). */
bool scene_read_collider(loader* L, const cJSON* c, const char* path, uint32_t index, pbd_body_id body,
                         pbd_collider_id* id);

/* ---- scene_bodies.c ------------------------------------------------------------------------ */

/* The shapes of all "bodies" together, with the `colliders` of the file held to one cap. */
bool scene_count_body_shapes(loader* L, const cJSON* bodies, size_t colliders, size_t* out);
/* "bodies", each created in the world with its shapes at scene.colliders[first_shape...]. */
bool scene_read_bodies(loader* L, const cJSON* bodies, uint32_t first_shape);
/* The index in scene.bodies of the body called `name`; a message at `path` when there is none. */
bool scene_find_body(loader* L, const char* path, const char* name, uint32_t* index);

/* ---- scene_joints.c ------------------------------------------------------------------------ */

/* "joints", each added to the world between the bodies it names, read after the bodies. */
bool scene_read_joints(loader* L, const cJSON* joints);

/* ---- scene_tracks.c ------------------------------------------------------------------------ */

/* A rotation at `key`: {"axis", "angle_deg"} or a quaternion; *out is kept when absent. */
bool scene_read_rotation(loader* L, const cJSON* obj, const char* path, const char* key, pbd_quat* out);
/* A "keyframes" value at `kpath` into *t, whose keys are its own as soon as they are allocated. */
bool scene_read_track(loader* L, const cJSON* item, const char* kpath, pbd_scene_track* t);
/* A kinematic collider's "keyframes"; *start gets the pose at time 0. */
bool scene_read_keyframes(loader* L, const cJSON* c, const char* path, uint32_t collider, pbd_pose* start);
/* An object's "moving_pins", read once its body exists. */
bool scene_read_moving_pins(loader* L, const cJSON* obj, const char* path, const pbd_mesh* mesh,
                            const pbd_scene_object* o);

/* ---- scene_render.c ------------------------------------------------------------------------ */

/* "render": what the program and the viewer show; *sr is zeroed first. */
bool scene_read_render(loader* L, const cJSON* root, pbd_scene_render* sr);

#endif
