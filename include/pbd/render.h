/* pbd_render: draws a pbd_world with OpenGL 3.3 core, in a window or offscreen.
 *
 * A separate library on top of libpbd's public API (the core stays free of dependencies). It
 * is built when libepoxy (the GL loader), EGL and stb are found. The pieces:
 *
 *   - the renderer (pbd_renderer_*): reads a world each frame (positions, triangles, distance
 *     constraints, colliders, inverse masses, joints, contacts) and draws it into the framebuffer
 *     bound in the current GL context, whoever made that context: GLFW for a window, or
 *   - the offscreen target (pbd_render_offscreen_*): an EGL context without any window system
 *     (Mesa's surfaceless platform first) and a multisampled framebuffer read back as RGB;
 *   - the camera (pbd_render_camera_*, pbd_render_orbit_*): look-at and perspective math, orbit
 *     parameters for an interactive camera, projection of points and picking rays, and the
 *     automatic framing of a scene's bounds;
 *   - image and video files: PNG through stb_image_write, MP4 and GIF through an ffmpeg process.
 *
 * Headless use, one image:
 *
 *     pbd_error err;
 *     pbd_render_offscreen* off = NULL;
 *     pbd_renderer* r = NULL;
 *     if (!pbd_render_offscreen_create(960, 540, 4, &off, &err)) { puts(err.message); return 1; }
 *     if (!pbd_renderer_create(&r, &err)) ...
 *     pbd_render_scene sc = {world, collider_ids, collider_count, NULL, 0};
 *     pbd_render_camera cam = pbd_render_camera_frame(&sc, 960.0f / 540.0f);  // initial state
 *     pbd_render_style style = pbd_render_style_default();
 *     pbd_renderer_update(r, &sc);
 *     pbd_render_offscreen_bind(off);
 *     pbd_renderer_draw(r, &cam, &style, 960, 540);
 *     pbd_render_offscreen_read(off, rgb, &err);      // 960 * 540 * 3 bytes, top row first
 *     pbd_render_write_png("out.png", 960, 540, rgb, &err);
 *     pbd_renderer_destroy(r);                         // before the context goes
 *     pbd_render_offscreen_destroy(off);
 *
 * In a window (the viewer): make the GLFW window's 3.3 core context current, create the
 * renderer, then each frame pbd_renderer_update (when the world stepped) and pbd_renderer_draw
 * into framebuffer 0 with the window's framebuffer size.
 *
 * Errors: calls that can fail return false and put one line into a pbd_error (or, for the
 * renderer, into pbd_renderer_last_error). Nothing here aborts or exits. No global state: the
 * objects are independent, but GL calls need their context current on the calling thread. */
#ifndef PBD_RENDER_H
#define PBD_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pbd/pbd.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Largest width or height accepted anywhere (GL implementations allow at least this).
#define PBD_RENDER_MAX_SIZE 8192

/// A color as an image editor shows it (sRGB), each channel in [0, 1]. The renderer lights in
/// linear space and converts back, so a flat-lit surface shows this color.
typedef struct pbd_render_rgb {
	float r, g, b;
} pbd_render_rgb;

/* ---- what to draw ------------------------------------------------------------------------ */

/// The world and what the world's API cannot enumerate by itself. Everything is read through
/// libpbd's public API: positions, triangles, distance constraints, inverse masses, colliders.
typedef struct pbd_render_scene {
	const pbd_world* world;
	const pbd_collider_id* colliders; ///< the colliders to draw (ids of dead ones are skipped)
	uint32_t collider_count;
	/// Pieces drawn as thick lines for bodies without triangles (ropes, pendulums): 2 world
	/// particle indices each. NULL: every distance constraint whose two particles belong to no
	/// triangle. (A rope with bend links wants its structural links only, hence the option.)
	const uint32_t* lines;
	uint32_t line_count;
} pbd_render_scene;

/// An axis-aligned box; empty when min > max on any axis.
typedef struct pbd_render_bounds {
	float min[3], max[3];
} pbd_render_bounds;

/// The current particles and bounded colliders, as the balls that hold them (planes are unbounded and left out).
PBD_API void pbd_render_scene_bounds(const pbd_render_scene* scene, pbd_render_bounds* out);

/// The box of the scene's "reach", what a camera set once for a whole run should frame, from
/// the state it is called on (the initial one for a run): the particles; each free particle
/// again where it could hang (moved along gravity by its distance to the nearest pinned
/// particle, from where it is and from below that pin; without pins, down to the plane collider
/// that stops it); for a body held at one
/// point (a rope, a pendulum), the particles mirrored across that point, where they swing to;
/// and the bounded colliders (spheres, capsules, boxes) as the balls that hold them.
PBD_API void pbd_render_framing_bounds(const pbd_render_scene* scene, pbd_render_bounds* out);

/* ---- camera ------------------------------------------------------------------------------ */

/// A perspective camera. Valid when finite, eye != target, up not parallel to the view
/// direction and 0 < fov_y < 180.
typedef struct pbd_render_camera {
	float eye[3];    ///< where it is
	float target[3]; ///< the point at the image centre
	float up[3];     ///< which way is up in the image (need not be unit or orthogonal)
	float fov_y;     ///< vertical field of view, degrees
} pbd_render_camera;

/// A camera as an interactive viewer moves it: around a target at a distance, by yaw and pitch.
typedef struct pbd_render_orbit {
	float target[3];
	float distance; ///< > 0
	float yaw;      ///< degrees about +y; 0 puts the eye on the +z side of the target
	float pitch;    ///< degrees above the horizontal, kept within (-89, 89)
	float fov_y;    ///< degrees
} pbd_render_orbit;

/// Default viewing direction of the automatic framing: from the front right, slightly above.
#define PBD_RENDER_DEFAULT_YAW   30.0f
#define PBD_RENDER_DEFAULT_PITCH 25.0f
#define PBD_RENDER_DEFAULT_FOV   40.0f

/// Camera looking at `o.target` from yaw/pitch/distance, up = +y.
PBD_API pbd_render_camera pbd_render_camera_from_orbit(const pbd_render_orbit* o);

/// The orbit that gives this camera's eye, target and field of view (up becomes +y).
PBD_API pbd_render_orbit pbd_render_orbit_from_camera(const pbd_render_camera* c);

/// The orbit looking from yaw/pitch with the given field of view that holds the 8 corners of
/// `b` in an image of this aspect (width / height), 5% kept free on each side, centred on what
/// it shows. An empty box frames the unit box around the origin.
PBD_API pbd_render_orbit pbd_render_orbit_frame(const pbd_render_bounds* b, float aspect, float fov_y, float yaw,
                                                float pitch);

/// The same fit for the scene's reach itself (the points behind pbd_render_framing_bounds and
/// the spheres' outlines): tighter than its box, which a draped cloth fills only in part.
PBD_API pbd_render_orbit pbd_render_orbit_frame_scene(const pbd_render_scene* scene, float aspect, float fov_y,
                                                      float yaw, float pitch);

/// pbd_render_orbit_frame_scene with the default direction and field of view.
PBD_API pbd_render_camera pbd_render_camera_frame(const pbd_render_scene* scene, float aspect);

PBD_API bool pbd_render_camera_is_valid(const pbd_render_camera* c);

/// Column-major 4x4 view and projection matrices (OpenGL conventions, depth -1..1).
PBD_API void pbd_render_camera_matrices(const pbd_render_camera* c, float aspect, float z_near, float z_far,
                                        float view[16], float proj[16]);

/// Pixel coordinates of world point `p` in a width x height image (x right, y down, pixel
/// centres at +0.5), as the renderer draws it. False when p is behind the camera.
PBD_API bool pbd_render_camera_project(const pbd_render_camera* c, int width, int height, const float p[3], float* px,
                                       float* py);

/// The ray from the eye through pixel (px, py): origin = eye, dir unit. For picking.
PBD_API void pbd_render_camera_ray(const pbd_render_camera* c, int width, int height, float px, float py,
                                   float origin[3], float dir[3]);

/* ---- style ------------------------------------------------------------------------------- */

/// How a world is drawn. Make it with pbd_render_style_default() and change fields.
typedef struct pbd_render_style {
	pbd_render_rgb cloth_front;       ///< front faces of triangles; lines and balls of bodies without triangles
	pbd_render_rgb cloth_back;        ///< back faces (triangles are counter-clockwise seen from the front)
	pbd_render_rgb collider;          ///< colliders (planes are checkered with a darker shade; triggers translucent)
	pbd_render_rgb body;              ///< shapes carried by dynamic bodies (pbd_collider_def.body)
	pbd_render_rgb background_top;    ///< vertical gradient behind everything
	pbd_render_rgb background_bottom; ///<
	pbd_render_rgb pinned;            ///< pinned-particle markers
	pbd_render_rgb contact;           ///< contact markers
	pbd_render_rgb particle;          ///< particle dots
	pbd_render_rgb joint;             ///< joints: anchor markers, axes, the lines of distance joints
	bool show_colliders;              ///< default true
	bool show_particles;              ///< overlay: every particle as a dot (default false)
	bool show_constraints;            ///< overlay: distance constraints as lines, blue at rest to red (default false)
	bool show_pinned;                 ///< overlay: pinned particles (default true)
	bool show_contacts;               ///< overlay: the particles' and the bodies' contacts (default false)
	bool show_joints;                 ///< the joints that are not broken (default true)
	float strain_red;                 ///< |strain| drawn fully red (default 0.1 = 10%), > 0
	float line_radius;                ///< world units, lines of bodies without triangles; 0 = automatic
	float ball_radius;                ///< world units, their particles; 0 = automatic
	float marker_radius;              ///< world units, overlay dots and markers; 0 = automatic
	/// Spheres and capsules are drawn with their radius this fraction smaller, boxes with each half
	/// extent smaller by this fraction of the smallest (default 0.01): a cloth resting on a collider
	/// touches it at its vertices only, and its flat triangles would dip under the surface.
	float collider_inset;
} pbd_render_style;

PBD_API pbd_render_style pbd_render_style_default(void);

/* ---- renderer ---------------------------------------------------------------------------- */

typedef struct pbd_renderer pbd_renderer;

/// Compiles the shaders and makes the buffers. Needs a current OpenGL 3.3 core (or later)
/// context, which must stay current for every call on this renderer, destroy included.
PBD_API bool pbd_renderer_create(pbd_renderer** out, pbd_error* err);

/// Frees the GL objects (their context must be current) and the renderer. NULL is accepted.
PBD_API void pbd_renderer_destroy(pbd_renderer* r);

/// Reads the world: positions, smooth normals (area-weighted, recomputed each call), pinned
/// particles, contacts (the particles' and the bodies'), colliders and joints. Topology
/// (triangles, constraints, lines) is read again when the world or its counts change, and with it
/// the automatic sizes (balls, tubes, markers) and the plane quads, from the state seen then: call
/// it once on the initial state. Call it after each step that is to be seen.
PBD_API bool pbd_renderer_update(pbd_renderer* r, const pbd_render_scene* scene);

/// Draws what the last update read into the currently bound framebuffer, over the viewport
/// (0, 0, width, height), clearing it first; the framebuffer needs a depth buffer (the
/// offscreen one has it, and multisampling). Sets the GL state it uses (viewport, depth test on,
/// blending and face culling off, program point size on) and leaves depth test on, blending
/// off, and no program or vertex array bound. With the constraint overlay on it also makes
/// texture unit 0 active and leaves no buffer texture bound there; other state of the caller's
/// (a HUD's textures, say) is left alone.
PBD_API bool pbd_renderer_draw(pbd_renderer* r, const pbd_render_camera* camera, const pbd_render_style* style,
                               int width, int height);

/// The last failure of this renderer ("" if none).
PBD_API const char* pbd_renderer_last_error(const pbd_renderer* r);

/// Compiles and links a GLSL 3.30 program from a vertex, an optional geometry (NULL) and a
/// fragment shader in the current context, for drawing code beside the renderer (the viewer's
/// text panel). Returns the GL program name, or 0 with one line in err naming `what` and the
/// compiler's first message.
PBD_API unsigned int pbd_render_program_build(const char* vs, const char* gs, const char* fs, const char* what,
                                              pbd_error* err);

/* ---- offscreen --------------------------------------------------------------------------- */

typedef struct pbd_render_offscreen pbd_render_offscreen;

/// Creates an OpenGL 3.3 core context without a window (EGL: Mesa's surfaceless platform, else
/// the first EGL device, else the default display) and makes it current on this thread, with a
/// width x height framebuffer (`samples` per pixel, reduced to what the driver allows; 1 = no
/// multisampling).
PBD_API bool pbd_render_offscreen_create(int width, int height, int samples, pbd_render_offscreen** out,
                                         pbd_error* err);

/// Binds its framebuffer for drawing and sets the viewport to it.
PBD_API void pbd_render_offscreen_bind(pbd_render_offscreen* o);

/// Resolves the multisampled image and copies it into rgb (width * height * 3 bytes, top row
/// first).
PBD_API bool pbd_render_offscreen_read(pbd_render_offscreen* o, uint8_t* rgb, pbd_error* err);

/// "llvmpipe (LLVM 15.0.6, 256 bits)" and the like: the GL_RENDERER string.
PBD_API const char* pbd_render_offscreen_device(const pbd_render_offscreen* o);

/// Releases the framebuffer and the context. NULL is accepted. The EGL display stays
/// initialised (it is shared by everything in the process that uses EGL) for the next one.
PBD_API void pbd_render_offscreen_destroy(pbd_render_offscreen* o);

/// Reads the bound read framebuffer (for a window: its back buffer before the swap) into rgb,
/// top row first. For screenshots.
PBD_API bool pbd_render_read_pixels(int width, int height, uint8_t* rgb, pbd_error* err);

/* ---- files ------------------------------------------------------------------------------- */

/// Writes an 8-bit RGB PNG (rows top first).
PBD_API bool pbd_render_write_png(const char* path, int width, int height, const uint8_t* rgb, pbd_error* err);

typedef enum pbd_render_video_format {
	PBD_RENDER_VIDEO_MP4 = 0, ///< H.264 (libx264) when ffmpeg has it, else MPEG-4 part 2; yuv420p
	PBD_RENDER_VIDEO_GIF = 1  ///< 256-color palette made from the whole clip, looping
} pbd_render_video_format;

/// The format a file name asks for by its extension (.mp4, .gif, any case); false for others.
PBD_API bool pbd_render_video_format_of(const char* path, pbd_render_video_format* out);

typedef struct pbd_render_video pbd_render_video;

/// Starts an ffmpeg process that encodes the frames it is given into `path` (overwritten), at
/// `fps` frames per second. Fails with a clear message when ffmpeg is not on the PATH. Odd sizes
/// are padded by one pixel for MP4 (yuv420p needs even ones).
PBD_API bool pbd_render_video_open(const char* path, pbd_render_video_format format, int width, int height, double fps,
                                   pbd_render_video** out, pbd_error* err);

/// Sends one frame (width * height * 3 bytes, top row first).
PBD_API bool pbd_render_video_write(pbd_render_video* v, const uint8_t* rgb, pbd_error* err);

/// Ends the stream, waits for ffmpeg and frees v (also after a failure; NULL is accepted). False
/// with ffmpeg's last message when it failed.
PBD_API bool pbd_render_video_close(pbd_render_video* v, pbd_error* err);

/// "libx264", "mpeg4" or "gif": what the video is encoded with.
PBD_API const char* pbd_render_video_codec(const pbd_render_video* v);

#ifdef __cplusplus
}
#endif

#endif
