/* Prescribed motion of the scene library: the poses of keyframe tracks (linear or cubic, held or
 * looping) and of constant velocities, for kinematic colliders and moving pins. Internal to the
 * scene library; pbd_scene_track_pose and the pin functions of scene.h are its public face. */
#ifndef PBD_SCENE_MOTION_H
#define PBD_SCENE_MOTION_H

#include "pbd/scene.h"

/* The pose of `track` at `time` (see pbd_scene_track_pose). */
pbd_pose scene_motion_track_pose(const pbd_scene_track* track, double time);

/* The rigid motion that starts at the identity and moves at `velocity` (m/s) while turning at
 * `angular_velocity` (rad/s, axis times rate) about its moving origin, at `time`. */
pbd_pose scene_motion_velocity_pose(pbd_vec3 velocity, pbd_vec3 angular_velocity, double time);

/* Where a moving pin set at `pose` (pbd_scene_pin_motion_pose) puts its vertex k. */
pbd_vec3 scene_motion_pin_point(const pbd_scene_pin_motion* motion, pbd_pose pose, uint32_t k);

/* What is wrong with a track's loop, or NULL: a loop needs two keys, and closes only where its
 * last key repeats its first key's pose. */
const char* scene_motion_loop_error(const pbd_scene_track* track);

#endif
