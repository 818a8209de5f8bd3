/* The scene library (libpbd_scene): a JSON scene file, text or built-in scene turned into a
 * pbd_world through libpbd's public API. The `pbd` program, the viewer, the benchmark and the
 * Python module load scenes through it. The format is documented in docs/scene-format.md.
 * Link with `pkg-config --libs pbd-scene` or CMake's pbd::scene.
 *
 *     pbd_scene s;
 *     pbd_scene_error err;
 *     if (!pbd_scene_load_builtin("cloth_sphere", NULL, &s, &err)) { puts(err.message); return 1; }
 *     for (int f = 0; f < s.frames; ++f) pbd_scene_step(&s);   // pbd_scene_before_step + pbd_world_step
 *     pbd_scene_free(&s);
 *
 * Every failure leaves the scene zeroed and puts one line in err->message that names the source
 * and either the line:column of a syntax error or the path of the offending field, e.g.
 * "cloth.json: objects[2].mass.value: must be in [1e-09, 1000000000] (got -1)". Nothing here
 * aborts or exits. */
#ifndef PBD_SCENE_H
#define PBD_SCENE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pbd/pbd.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Limits that keep a typo from exhausting memory or time (documented in docs/scene-format.md).
/// A scene at both size caps peaks at about 2.4 GB while it loads (measured; docs/scene-format.md).
#define PBD_SCENE_MAX_PARTICLES   (1u << 22) ///< particles of all objects together (4194304)
#define PBD_SCENE_MAX_CONSTRAINTS (1u << 24) ///< distance constraints of all objects together (16777216)
#define PBD_SCENE_MAX_FRAMES      100000000  ///< frames of a run
#define PBD_SCENE_MAX_SUBSTEPS    1000
#define PBD_SCENE_MAX_ITERATIONS  10000
#define PBD_SCENE_NAME_MAX        64 ///< bytes of a name, terminator included

/// The text of a scene and the memory its parse may take: a file is read up to this size, and
/// the JSON tree made from a text of n bytes may take PBD_SCENE_JSON_BASE_BYTES +
/// PBD_SCENE_JSON_BYTES_PER_BYTE * n bytes (counted as the parser asks for them; a scan that builds
/// nothing refuses a text past that before it is parsed). Big meshes belong in OBJ files.
#define PBD_SCENE_MAX_FILE_BYTES      (16u << 20)
#define PBD_SCENE_JSON_BASE_BYTES     (32u << 20)
#define PBD_SCENE_JSON_BYTES_PER_BYTE 16u

/// Caps per kind of quantity. Each is far below what float holds, so that what the first step
/// forms from them stays finite: with substeps h >= PBD_SCENE_MIN_DT / PBD_SCENE_MAX_SUBSTEPS = 1e-12 s,
/// 1/h^2 <= 1e24 and compliance/h^2 <= 1e30; gravity*dt^2 <= 1e7 m and velocity*dt <= 2e6 m, so
/// predicted positions stay within about 2e7 m and their squared distances within 1e16 m^2
/// (float's largest is 3.4e38). docs/scene-format.md lists which field has which cap.
#define PBD_SCENE_MAX_LENGTH     1e6  ///< m: coordinates, offsets, sizes, rest lengths, radii, margins
#define PBD_SCENE_MAX_DIRECTION  1e6  ///< each component of a direction (a normal, an axis, up)
#define PBD_SCENE_MAX_SPEED      1e5  ///< m/s: velocities, max_speed
#define PBD_SCENE_MAX_GRAVITY    1e5  ///< m/s^2, each component
#define PBD_SCENE_MIN_DT         1e-9 ///< s
#define PBD_SCENE_MAX_DT         10.0 ///< s
#define PBD_SCENE_MIN_MASS       1e-9 ///< kg; also the smallest non-zero inverse mass, 1/kg
#define PBD_SCENE_MAX_MASS       1e9  ///< kg (of a particle, given or derived), kg/m^2 or kg/m, 1/kg
#define PBD_SCENE_MAX_COMPLIANCE 1e6  ///< m/N
#define PBD_SCENE_MAX_ANGLE_DEG  1e6  ///< degrees: an axis-angle rotation's angle_deg
#define PBD_SCENE_MAX_TIME       1e9  ///< s: keyframe times (the longest run: PBD_SCENE_MAX_FRAMES of PBD_SCENE_MAX_DT)
#define PBD_SCENE_MAX_KEYFRAMES  100000
/// Samples of one heightfield collider (4096 x 4096), and the bytes of a height image file.
#define PBD_SCENE_MAX_HEIGHTFIELD_SAMPLES (1u << 24)
#define PBD_SCENE_MAX_IMAGE_BYTES         (64u << 20)
#define PBD_SCENE_MAX_MAGNITUDE           1e9 ///< any other number (jacobi.alpha, drag coefficients)
#define PBD_SCENE_MAX_GUST_STRENGTH       10  ///< world.gusts.strength (the library's bound)
#define PBD_SCENE_MAX_GUST_FREQUENCY      1e3 ///< Hz, world.gusts.frequency (the library's bound)

typedef enum pbd_scene_object_type {
	PBD_SCENE_OBJECT_PARTICLES = 0,
	PBD_SCENE_OBJECT_GRID_CLOTH,
	PBD_SCENE_OBJECT_MESH_CLOTH,
	PBD_SCENE_OBJECT_ROPE,
	PBD_SCENE_OBJECT_TET_BOX,
	PBD_SCENE_OBJECT_TET_SPHERE,
	PBD_SCENE_OBJECT_TETGEN
} pbd_scene_object_type;

/// "particles", "grid_cloth", ... Never NULL.
PBD_API const char* pbd_scene_object_type_name(pbd_scene_object_type type);

/// One entry of the scene's `objects` array, as it landed in the world.
typedef struct pbd_scene_object {
	char name[PBD_SCENE_NAME_MAX];
	pbd_scene_object_type type;
	pbd_soft_id id;      ///< the soft object in the world
	pbd_soft_info range; ///< its particles, distance constraints and triangles in the world
	uint32_t line_count; ///< polyline pieces to draw when it has no triangles
	uint32_t* lines;     ///< 2 world particle indices per line (ropes: the links, particles: the constraints)
	/// A grid cloth's vertex counts along u and v (vertex (i, j) is particle first_particle +
	/// j * grid_nx + i); 0 for every other object.
	uint32_t grid_nx, grid_ny;
} pbd_scene_object;

/// Overlays a scene can ask for in "render.overlays"; bit i is pbd_scene_overlay_names[i].
enum {
	PBD_SCENE_OVERLAY_PARTICLES = 1u << 0,
	PBD_SCENE_OVERLAY_CONSTRAINTS = 1u << 1,
	PBD_SCENE_OVERLAY_PINNED = 1u << 2,
	PBD_SCENE_OVERLAY_CONTACTS = 1u << 3
};
/// "particles", "constraints", "pinned", "contacts", then NULL.
extern PBD_API const char* const pbd_scene_overlay_names[];

#define PBD_SCENE_RENDER_MIN_SIZE 16
#define PBD_SCENE_RENDER_MAX_SIZE 8192

/// The optional "render" object: how `pbd run --render` (and the viewer) show the scene. Plain
/// data; each has_ flag says whether the file gave the field, the rest is left to the
/// renderer's automatic choices (docs/scene-format.md, docs/rendering.md).
typedef struct pbd_scene_render {
	int width, height; ///< pixels, 0 = not given
	bool has_eye, has_target, has_up, has_fov;
	pbd_vec3 eye, target, up; ///< camera, world units
	double fov;               ///< vertical field of view, degrees
	bool has_cloth_color, has_back_color, has_collider_color, has_background;
	float cloth_color[3], back_color[3], collider_color[3]; ///< sRGB, each in [0, 1]
	float background_top[3], background_bottom[3];          ///< the same when one color was given
	bool has_overlays;
	unsigned overlays; ///< SCENE_OVERLAY_* bits
} pbd_scene_render;

/// One key of a kinematic collider's motion: where its frame is at `time`.
typedef struct pbd_scene_keyframe {
	double time; ///< s of world time, strictly increasing along a track
	pbd_pose pose;
} pbd_scene_keyframe;

/// How a track's position goes from key to key ("interp" in the file).
typedef enum pbd_scene_interp {
	PBD_SCENE_INTERP_LINEAR = 0, ///< straight lines, the velocity jumps at each key
	PBD_SCENE_INTERP_CUBIC       ///< a C1 cubic Hermite spline through the keys (Catmull-Rom tangents)
} pbd_scene_interp;

/// The keyframes of one kinematic collider, kinematic body or moving pin set (a "keyframes"
/// value), which pbd_scene_before_step follows.
typedef struct pbd_scene_track {
	uint32_t collider;  ///< index into scene.colliders (UINT32_MAX for a body's or a moving pin set's track)
	uint32_t key_count; ///< >= 1 (>= 2 when looping)
	pbd_scene_keyframe* keys;
	pbd_scene_interp interp;
	bool loop; ///< repeats with period keys[last].time - keys[0].time, before the first key too
} pbd_scene_track;

/// One entry of an object's "moving_pins": pinned vertices carried rigidly along a track, or at
/// a constant velocity and angular velocity, about their starting centroid.
typedef struct pbd_scene_pin_motion {
	uint32_t object;           ///< index into scene.objects
	uint32_t count;            ///< vertices it moves, >= 1
	uint32_t* particles;       ///< their world particle indices (pinned)
	pbd_vec3* offsets;         ///< each one's position in the mesh as loaded, minus `centroid`
	pbd_vec3 centroid;         ///< the centroid of those positions, world
	pbd_scene_track track;     ///< key_count 0: moved by the velocities below instead
	pbd_vec3 velocity;         ///< m/s of the centroid
	pbd_vec3 angular_velocity; ///< rad/s about the moving centroid, axis times rate
} pbd_scene_pin_motion;

/// One entry of the scene's "bodies": a rigid body and the shapes it carries.
typedef struct pbd_scene_body {
	char name[PBD_SCENE_NAME_MAX]; ///< unique among the scene's bodies
	pbd_body_type type;
	pbd_body_id id;          ///< the body in the world
	uint32_t first_collider; ///< its shapes: scene.colliders[first_collider, first_collider + shape_count)
	uint32_t shape_count;
	pbd_scene_track track; ///< a kinematic body's "keyframes" (key_count 0: none); track.collider is UINT32_MAX
} pbd_scene_body;

/// One entry of the scene's "joints": a joint between two of its bodies, or a body and the world.
typedef struct pbd_scene_joint {
	char name[PBD_SCENE_NAME_MAX]; ///< unique among the scene's joints; "joint<index>" unless the file names it
	uint32_t index;                ///< the joint in the world (pbd_world_get_joint_state)
} pbd_scene_joint;

struct pbd_scene_log; /* internal to the scene library (scene/scene_internal.h) */

typedef struct pbd_scene {
	char name[PBD_SCENE_NAME_MAX]; ///< [A-Za-z0-9_.-], safe as a folder name
	char description[256];
	int frames; ///< frames a run of this pbd_scene lasts (one pbd_world_step each)
	pbd_world* world;
	uint32_t object_count;
	pbd_scene_object* objects;
	uint32_t collider_count;
	pbd_collider_id* colliders; ///< the "colliders" in file order, then the shapes of the bodies in body order
	uint32_t track_count;
	pbd_scene_track* tracks;   ///< the keyframed colliders, in collider order
	pbd_scene_render render;   ///< the "render" object (all has_ flags false when absent)
	struct pbd_scene_log* log; ///< internal: routes the world's log (see pbd_scene_options.log)
	uint32_t pin_motion_count;
	pbd_scene_pin_motion* pin_motions; ///< the objects' "moving_pins", in file order
	uint32_t body_count;
	pbd_scene_body* bodies; ///< the "bodies", in file order
	uint32_t joint_count;
	pbd_scene_joint* joints; ///< the "joints", in file order
} pbd_scene;

typedef struct pbd_scene_error {
	char message[512];
} pbd_scene_error;

/// Formats into err->message, cut to fit (a long path only shortens the message).
PBD_API void pbd_scene_error_set(pbd_scene_error* err, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/// For tests: the allocation function behind the JSON parser, on the calling thread (NULL =
/// malloc). It must return memory that free() releases. A failure is reported as out of memory.
PBD_API void pbd_scene_set_parse_malloc(void* (*fn)(size_t));

/// "812 bytes", "16.0 MiB", "1.5 GiB": a size for a message.
PBD_API void pbd_scene_format_bytes(char* out, size_t out_size, uint64_t bytes);

/// How the world is made. Zero-initialised means: diagnostics on, no log.
typedef struct pbd_scene_options {
	bool no_diagnostics; ///< world def `diagnostics` off (the benchmark times the bare step)
	/// The world's log callback, for what the library reports once the scene is loaded (run-time
	/// warnings while stepping, a refused setting). NULL = silent. While the scene loads, the
	/// library's messages are held back: a refused input is reported once, in err->message, with
	/// the path of the field it came from. The loader itself sends one line per deprecated key it
	/// still reads ("file: world.rigid_stiffness: deprecated, now called hard_stiffness").
	pbd_log_fn log;
	void* log_user;
	/// A lower cap on the scene's particles than PBD_SCENE_MAX_PARTICLES (and on its constraints, 8
	/// per particle), for callers that must bound memory more tightly, such as a fuzzer. 0 = none.
	uint32_t max_particles;
} pbd_scene_options;

/// Loads a scene file. Relative file names inside it (`obj`, `image`, `node`, `ele`, `include`)
/// are taken from the file's folder; an included file's own from its folder.
/// `options` may be NULL.
PBD_API bool pbd_scene_load_file(const char* path, const pbd_scene_options* options, pbd_scene* out,
                                 pbd_scene_error* err);

/// Loads a scene from `size` bytes of JSON (need not be terminated). `source` names it in
/// messages; `base_dir` is where relative file names start (NULL = the working directory).
PBD_API bool pbd_scene_load_string(const char* text, size_t size, const char* source, const char* base_dir,
                                   const pbd_scene_options* options, pbd_scene* out, pbd_scene_error* err);

/// Loads a scene built into the program from scenes/<name>.json. The data files of scenes/data/
/// are built in too: a relative file name such as "data/terrain.pgm" is found among them first,
/// then in the working directory. Its `include` names other built-in scenes ("rope.json").
PBD_API bool pbd_scene_load_builtin(const char* name, const pbd_scene_options* options, pbd_scene* out,
                                    pbd_scene_error* err);

/// The pose a track gives at `time`: the first key's before it, the last key's after it (a loop
/// instead wraps `time` into its period), and in between the position interpolated linearly or by
/// the cubic spline, and the rotation by slerp (the shorter way round) between the two keys around
/// `time`. Exactly each key's pose at its time.
PBD_API pbd_pose pbd_scene_track_pose(const pbd_scene_track* track, double time);

/// The displacement of a moving pin set's centroid and its rotation about the centroid at `time`.
PBD_API pbd_pose pbd_scene_pin_motion_pose(const pbd_scene_pin_motion* motion, double time);

/// Where the motion puts its vertex `k` (< motion->count) at `time`, world.
PBD_API pbd_vec3 pbd_scene_pin_motion_position(const pbd_scene_pin_motion* motion, uint32_t k, double time);

/// Call before every pbd_world_step of the scene's world: sends each keyframed collider
/// (pbd_collider_move_to), each keyframed kinematic body (pbd_body_set_velocity) and each moving
/// pin (pbd_particle_set_target) toward its pose at the time the step will reach, the world's
/// time plus its dt, so that the step carries it there. Costs nothing in a scene without
/// keyframes or moving pins. On a failure the world's last
/// error says why.
PBD_API pbd_status pbd_scene_before_step(pbd_scene* s);

/// pbd_scene_before_step, then pbd_world_step.
PBD_API pbd_status pbd_scene_step(pbd_scene* s);

/// Releases the world and the arrays. Accepts a zeroed scene; leaves it zeroed.
PBD_API void pbd_scene_free(pbd_scene* s);

/// The built-in scenes, sorted by name: the files of scenes/ compiled into the program.
typedef struct pbd_scene_builtin {
	const char* name;          ///< the file name without .json
	const unsigned char* json; ///< the file's bytes, followed by a 0 byte
	size_t size;               ///< bytes, the 0 not counted
} pbd_scene_builtin;

PBD_API size_t pbd_scene_builtin_count(void);
/// NULL past the end.
PBD_API const pbd_scene_builtin* pbd_scene_builtin_at(size_t index);
/// NULL if there is no built-in of that name.
PBD_API const pbd_scene_builtin* pbd_scene_builtin_find(const char* name);
/// Copies the scene's `description` (or "" when it has none or does not parse) into `out`.
PBD_API void pbd_scene_builtin_description(const pbd_scene_builtin* builtin, char* out, size_t out_size);

#ifdef __cplusplus
}
#endif

#endif
