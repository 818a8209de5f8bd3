/* `pbd run --format usd`: one USD ASCII layer, <dir>/animation.usda, for the whole run, with the
 * positions of every frame as time samples (time code = frame, timeCodesPerSecond = 1/dt), each
 * rigid body as an Xform whose translate and orient are sampled at every frame, with the shapes
 * it carries as a Mesh in its frame, and each joint as the UsdPhysics joint prim of its type
 * between those Xforms, its physics:jointEnabled sampled where it breaks or mends.
 *
 * USD ASCII keeps an attribute's time samples in one dictionary inside the attribute, so a prim's
 * samples cannot be appended to the file as frames arrive. Each frame's positions go instead to a
 * binary frame store, <dir>/animation.frames (every particle's x y z, then every body slot's
 * position and rotation quaternion x y z w, then 1 or 0 per joint for broken or not, as the
 * scalar in the host's byte order, after a 28-byte header), and the .usda is assembled from it
 * when the run ends.
 * Memory stays at one frame whatever the run's length, the disk holds both files at the end (both
 * counted by out_run_bytes), and a store kept for --resume gives the resumed run the earlier
 * frames. The layout is described in docs/scene-format.md. */
#ifndef PBD_APP_OUTPUT_USD_H
#define PBD_APP_OUTPUT_USD_H

#include <stdbool.h>
#include <stdint.h>

#include "pbd/scene.h"

typedef struct out_usd out_usd;

/// Starts the animation of a run whose first frame is `start`. At start > 0 (a resumed run) the
/// frames before it come from the store an earlier run of this scene left in `dir` (with
/// --save-every) when its frame `start` holds the world's current positions; *first gets the
/// first frame the animation holds: 0, or `start` when no such store is there.
bool out_usd_open(const char* dir, const pbd_scene* s, int start, out_usd** out, int* first, pbd_scene_error* err);

/// Appends the world's current positions as the next frame.
bool out_usd_add_frame(out_usd* u, const pbd_scene* s, pbd_scene_error* err);

/// Writes <dir>/animation.usda from the stored frames (replacing it whole, through a rename) and
/// releases u. The frame store is removed unless keep_store. u is released also on failure.
bool out_usd_finish(out_usd* u, const pbd_scene* s, bool keep_store, pbd_scene_error* err);

/// Releases u without writing the .usda (a failed run); the store stays only if keep_store.
void out_usd_discard(out_usd* u, bool keep_store);

/// The layer's timeCodesPerSecond: 1/dt of the world, rounded to a whole number within 1e-6.
double out_usd_frame_rate(const pbd_scene* s);

/// At most what one frame adds to the store and to the .usda.
uint64_t out_usd_frame_bytes(const pbd_scene* s);

/// At most what the .usda and the store hold besides the frames (header, topology).
uint64_t out_usd_fixed_bytes(const pbd_scene* s, int frames);

#endif
