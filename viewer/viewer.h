/* Internals of `pbd view` shared between its files; not part of any API.
 *
 * One `viewer` value holds everything the viewer knows: no file keeps state of its own, and
 * GLFW's callbacks reach it through the window's user pointer. The files:
 *   view.c      the command: window, scene loading and reloading, the fixed-step loop, drawing
 *   options.c   the command line
 *   script.c    scripted input (--drag, --drag-body, --mouse, --key) replayed through the input handlers
 *   input.c     GLFW callbacks: keys, mouse buttons, cursor, wheel; the orbit camera
 *   pick.c      picking a particle or a dynamic body under the cursor and dragging it
 *   controls.c  solver, formulation, iterations, substeps and stiffness while it runs
 *   hud.c       the text panel (stb_easy_font quads drawn by a small shader)
 *   sanitize.c  keeps the GL driver loaded in sanitizer builds, for LeakSanitizer */
#ifndef PBD_VIEWER_VIEWER_H
#define PBD_VIEWER_VIEWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pbd/pbd.h"
#include "profile_table.h"
#include "pbd/render.h"
#include "pbd/scene.h"
#include "scene_render.h"

/* GLFW's window type, declared here so that only the files that call GLFW include it. */
typedef struct GLFWwindow GLFWwindow;

/* Exit statuses, the same as the rest of the `pbd` program. */
enum { VIEW_OK = 0, VIEW_FAILED = 1, VIEW_USAGE = 2 };

#define VIEW_DEFAULT_SCENE  "cloth_sphere"
#define VIEW_MAX_EVENTS     256
#define VIEW_MAX_DRAGS      8
#define VIEW_MAX_TRACKED    16
#define VIEW_MAX_FRAMES     10000000
#define VIEW_STEPS_PER_DRAW 8     /* cap on steps per drawn frame: a slow frame drops time, never spirals */
#define VIEW_PICK_RADIUS    12.0f /* window pixels around the cursor searched for a particle */
/* A grabbed body is pulled by a critically damped spring of this frequency (pick.c)... */
#define VIEW_BODY_GRAB_HZ 2.0
/* ...lowered where a step is too long for it: the force is held over the whole step, and past
 * this many radians of the spring per step a point whose effective mass is a fraction of the
 * body's (a long body held at its end) overshoots. */
#define VIEW_BODY_GRAB_MAX_PHASE 0.15
/* A body let go leaves with the drag's velocity: the target's motion per step, averaged over
 * about this many seconds (a drawn frame may take several steps, and only its first sees the
 * cursor move). */
#define VIEW_THROW_SECONDS 0.05

/* ---- options.c ---- */

typedef enum view_event_type {
	VIEW_EVENT_PRESS = 0, /* left button down at (x, y) */
	VIEW_EVENT_MOVE,      /* cursor to (x, y) */
	VIEW_EVENT_RELEASE,   /* left button up at (x, y) */
	VIEW_EVENT_KEY        /* key press (and release) */
} view_event_type;

/* One scripted input event, applied before simulation step `frame` (frame N + 1: after the
 * last step, before the last frame is drawn). */
typedef struct view_event {
	long frame;
	view_event_type type;
	double x, y; /* window coordinates, x right, y down */
	int key;     /* GLFW key code */
	int mods;    /* GLFW modifier bits */
} view_event;

/* A scripted drag: press where particle `index` (or the centre of mass of the scene's body
 * `index`) is drawn before step `from`, move the cursor in equal steps to where `point` is drawn,
 * reaching it before step `to`, release after it. */
typedef struct view_drag_script {
	bool body;
	uint32_t index;
	float point[3];
	long from, to; /* 0: the defaults, 1 and the frame count */
} view_drag_script;

typedef struct view_options {
	const char* program;   /* "pbd view", for messages */
	const char* scene_arg; /* file or built-in name; NULL = VIEW_DEFAULT_SCENE */
	long frames;           /* scripted: steps to run, one per drawn frame; -1 = interactive */
	const char* screenshot;
	int width, height; /* window size in screen coordinates; 0 = the scene's render size */
	bool hidden;
	bool paused;
	bool quiet;
	view_event events[VIEW_MAX_EVENTS];
	int event_count;
	view_drag_script drags[VIEW_MAX_DRAGS];
	int drag_count;
	uint32_t tracked[VIEW_MAX_TRACKED];
	int tracked_count;
} view_options;

/* Parses argv (argv[0] = the command name). VIEW_OK with *help_shown set when --help printed the
 * usage; VIEW_USAGE after printing one line on stderr. */
int view_parse_options(int argc, char** argv, view_options* o, bool* help_shown);

/* ---- the viewer ---- */

typedef enum view_grab_kind { VIEW_GRAB_PARTICLE = 0, VIEW_GRAB_BODY } view_grab_kind;

/* A particle or a dynamic body held by the mouse. */
typedef struct view_grab {
	bool active;
	view_grab_kind kind;
	uint32_t index;          /* the particle, or the body's index in the scene's bodies */
	bool was_pinned;         /* pinned by the scene: stays pinned when let go */
	pbd_body_id body;        /* the body held */
	pbd_vec3 local;          /* the body's point held, in its frame */
	double mass;             /* the body's, kg: the spring pulls every body alike */
	float plane_point[3];    /* the drag plane: through the grabbed point, facing the camera */
	float plane_normal[3];   /* */
	float offset[3];         /* the point held minus the plane point under the cursor at the press */
	pbd_vec3 target;         /* where the next step moves it */
	double press_x, press_y; /* window coordinates of the press */
	pbd_vec3 last_target;    /* the target the last step had */
	pbd_vec3 drag_velocity;  /* of the target, m/s, averaged over VIEW_THROW_SECONDS */
	uint64_t steps_held;     /* steps taken since the press */
} view_grab;

/* Live changes of the constraints' materials. */
typedef struct view_controls {
	int stiffness_level;         /* stiffness scale 2^level, 0 = the scene's materials */
	uint32_t count;              /* constraints whose originals are held */
	pbd_edge_material* original; /* per constraint, as loaded (restored by level 0 and by reset) */
	double reference_compliance; /* XPBD: what softening a hard (compliance 0) constraint starts from */
} view_controls;

typedef enum view_camera_mode { VIEW_CAMERA_NONE = 0, VIEW_CAMERA_ORBIT, VIEW_CAMERA_PAN } view_camera_mode;

typedef struct view_hud view_hud;

typedef struct viewer {
	view_options opt;
	bool scripted; /* --frames: input from the script only, no vsync, no real-time pacing */
	GLFWwindow* window;
	pbd_renderer* renderer;
	view_hud* hud;

	pbd_scene sc;
	scene_view sv;     /* the scene's render settings: what to draw (sv.draw), its camera and style */
	bool needs_update; /* the world changed since the renderer last read it */

	pbd_render_style style; /* the scene's style with the overlays as toggled */
	pbd_render_orbit orbit; /* the camera, as the mouse moves it */
	pbd_render_orbit home;  /* the scene's camera (F goes back to it) */

	/* Simulation pacing. */
	bool paused;
	int step_requests; /* single steps asked for while paused */
	double time_scale; /* simulated seconds per real second */
	bool slow_motion;  /* S: time_scale is divided by VIEW_SLOW_FACTOR while on */
	double accumulator;
	bool behind; /* the last frame dropped time (more steps were due than the cap) */
	bool reload_requested;

	/* Input. */
	double cursor_x, cursor_y; /* window coordinates */
	int window_w, window_h;    /* screen coordinates (cursor positions, picking) */
	int fb_w, fb_h;            /* framebuffer pixels (drawing, screenshots) */
	view_camera_mode camera_mode;
	double camera_last_x, camera_last_y;
	view_grab grab;
	view_controls controls;
	bool show_help;
	bool hide_panel;      /* Tab: the pbd_scene alone (screenshots) */
	char message[200];    /* shown in the panel until it expires (view.c) */
	double message_until; /* glfwGetTime() seconds; scripted runs: the frame count, so shots repeat */

	/* Timing, for the panel and the closing summary. */
	double frame_ms; /* smoothed time between drawn frames */
	double step_ms;  /* smoothed time of one pbd_world_step, simulation only */
	int steps_in_frame;
	uint64_t steps_total, frames_total;
	double step_seconds_total, draw_seconds_total;
	/* T: the step's phases (pbd_stats.profile), summed over a window of steps; the panel shows
	 * the mean of the last full window. */
	bool show_profile;
	profile_sum profile_window;
	profile_sum profile_shown;

	bool quit;
	bool failed; /* a scripted check failed: exit status 1 */
} viewer;

#define VIEW_SLOW_FACTOR 8.0

/* ---- view.c ---- */

/* Loads (or reloads) the scene named in the options into v->sc, replacing the current one only
 * when the new one loads. Resets the grab and the controls. False with a message on failure. */
bool view_load_scene(viewer* v, pbd_scene_error* err);

/* One simulation step: the grabbed particle's target or the grabbed body's pull, then
 * pbd_scene_step (the keyframed colliders' moves and pbd_world_step), timed. */
void view_step(viewer* v);

/* Shows a line in the panel for a few seconds (and on stderr in scripted runs). */
void view_message(viewer* v, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- input.c ---- */

/* Installs the GLFW callbacks (window user pointer = v). */
void view_input_install(viewer* v);

/* The handlers the callbacks and the script both go through. */
void view_input_key(viewer* v, int key, int action, int mods);
void view_input_button(viewer* v, int button, int action, int mods);
void view_input_cursor(viewer* v, double x, double y);
void view_input_scroll(viewer* v, double dy);

/* The camera the orbit gives. */
pbd_render_camera view_camera(const viewer* v);

/* Back to the scene's camera, the one `pbd run --render` uses. */
void view_frame_scene(viewer* v);

/* ---- pick.c ---- */

/* What the picking ray found. */
typedef struct view_pick_hit {
	view_grab_kind kind;
	uint32_t index; /* the particle, or the body's index in the scene's bodies */
	float point[3]; /* the particle, or where the ray enters the body's shape */
	float depth;    /* of that point along the ray */
} view_pick_hit;

/* What is under window point (x, y). Particles: the front-most surface hit by the picking ray
 * limits the depth; among the particles drawn within VIEW_PICK_RADIUS pixels in front of it, the
 * one nearest the cursor; else the nearest vertex of the triangle hit. Bodies: the nearest entry
 * of the ray into a shape of one of the scene's dynamic bodies. The nearer of the two along the
 * ray wins. False when there is neither. */
bool view_pick(const viewer* v, double x, double y, view_pick_hit* hit);

/* Left press at (x, y): grabs the particle (pinning it if free) or the body point there. False
 * when there is none. */
bool view_grab_begin(viewer* v, double x, double y);
/* Cursor at (x, y) while grabbing: the target becomes the drag plane's point under it. */
void view_grab_move(viewer* v, double x, double y);
/* Before each step: moves the grabbed particle to its target, or pulls the grabbed body point
 * towards it. */
void view_grab_before_step(viewer* v);
/* Left release: unpins the particle unless the scene had pinned it; lets go of a body, which
 * after a step held leaves with the drag's velocity at the point held (its spin kept). */
void view_grab_end(viewer* v);
/* Where the point held is now (the particle, or the body's point held). False when none is. */
bool view_grab_point(const viewer* v, float out[3]);

/* ---- controls.c ---- */

/* Remembers the loaded constraints' materials; level back to 0. False when out of memory. */
bool view_controls_init(viewer* v);
void view_controls_free(view_controls* c);
/* Solver, formulation, iterations, substeps and stiffness keys; true when the key was one. */
bool view_controls_key(viewer* v, int key, int mods);
/* Sets the stiffness scale to 2^level of every constraint's loaded material. */
bool view_controls_set_stiffness(viewer* v, int level);

const char* view_solver_name(pbd_solver s);
const char* view_formulation_name(pbd_formulation f);

/* ---- hud.c ---- */

/* Needs the window's GL context current. False with a message in err. */
bool view_hud_create(view_hud** out, pbd_error* err);
void view_hud_destroy(view_hud* h);
/* Draws the panel (and the key list when v->show_help) over the framebuffer. */
void view_hud_draw(view_hud* h, const viewer* v);

/* ---- script.c ---- */

/* Checks the script against the loaded scene (particle indices, frame ranges). */
bool view_script_check(const viewer* v, char* why, size_t why_size);
/* Applies the events of `frame` (1..N + 1) through the input handlers. */
void view_script_apply(viewer* v, long frame);

/* ---- sanitize.c ---- */

/* Sanitizer builds: keeps the loaded OpenGL driver mapped until exit. Otherwise nothing. */
void view_keep_gl_driver(void);

#endif
