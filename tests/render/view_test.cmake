# Tests of `pbd view` (viewer/): scripted runs in a window, their screenshots and printed state.
#   cmake -DPBD=<pbd> -DPROBE=<image_probe> -DCASE=<name> -DWORK=<scratch folder> -P view_test.cmake
#
# A window needs an X server and an OpenGL 3.3 driver: each run goes through `xvfb-run -a`, a
# virtual X server that Mesa draws into (llvmpipe where there is no GPU). Where none can be had
# (xvfb-run or xauth missing, Xvfb not starting, GLFW unable to open a window or a 3.3 core
# context under it) a case prints "view_test: skipped: <why>" and stops: CTest counts it as
# skipped through SKIP_REGULAR_EXPRESSION (and exit status 77 from CMake 3.29 on), never as
# failed. Anything else that goes wrong fails.

if(NOT PBD OR NOT CASE OR NOT WORK)
  message(FATAL_ERROR "view_test.cmake: pass -DPBD=... -DCASE=... -DWORK=... (and -DPROBE=...)")
endif()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# Macros, not functions: a skip's return() then ends the script, as they are only used at the
# top level of a case.
macro(skip why)
  message("view_test: skipped: ${why}")
  if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.29)
    cmake_language(EXIT 77)
  endif()
  return()
endmacro()

# run_pbd(arg...): the program without a window (refusals before one opens); sets rc, out, err.
macro(run_pbd)
  execute_process(COMMAND "${PBD}" ${ARGN} WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 120)
  set(cmdline "pbd ${ARGN}")
endmacro()

# run_view(arg...): `pbd view arg...` under Xvfb; sets rc, out, err, or skips the case.
macro(run_view)
  find_program(XVFB_RUN xvfb-run)
  if(NOT XVFB_RUN)
    skip("xvfb-run not found (install xvfb and xauth)")
  endif()
  execute_process(COMMAND "${XVFB_RUN}" -a -s "-screen 0 1280x1024x24 -nolisten tcp" "${PBD}" view ${ARGN}
                  WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  set(cmdline "pbd view ${ARGN}")
  if(err MATCHES "xvfb-run: error: ([^\n]*)")
    skip("no X server: xvfb-run: ${CMAKE_MATCH_1}")
  endif()
  if(err MATCHES "pbd: view: cannot open a window: ([^\n]*)")
    skip("no window or OpenGL 3.3 context under Xvfb: ${CMAKE_MATCH_1}")
  endif()
endmacro()

function(expect_rc want)
  if(NOT rc STREQUAL "${want}")
    message(FATAL_ERROR "${cmdline}: exit status ${rc}, expected ${want}\nstdout: ${out}\nstderr: ${err}")
  endif()
endfunction()

function(expect_out regex)
  if(NOT out MATCHES "${regex}")
    message(FATAL_ERROR "${cmdline}: stdout does not match '${regex}':\n${out}\nstderr: ${err}")
  endif()
endfunction()

# expect_one_line(regex): stderr is exactly one line "pbd: ...\n" matching regex.
function(expect_one_line regex)
  if(NOT err MATCHES "^pbd: [^\n]*\n$" OR NOT err MATCHES "${regex}")
    message(FATAL_ERROR "${cmdline}: stderr is not one line matching '${regex}':\n${err}")
  endif()
endfunction()

# fixed(value out): a number printed with %.4f as an integer count of 1e-4.
function(fixed value result)
  if(NOT value MATCHES "^(-?)([0-9]+)\\.([0-9][0-9][0-9][0-9])$")
    message(FATAL_ERROR "not a %.4f number: '${value}'")
  endif()
  math(EXPR v "${CMAKE_MATCH_2} * 10000 + 1${CMAKE_MATCH_3} - 10000")
  if(CMAKE_MATCH_1)
    math(EXPR v "-(${v})")
  endif()
  set(${result} ${v} PARENT_SCOPE)
endfunction()

# vec3(regex result): the three %.4f numbers after what `regex` matches in stdout, as fixed().
function(vec3 regex result)
  set(num "(-?[0-9]+\\.[0-9]+)")
  if(NOT out MATCHES "${regex}${num} ${num} ${num}")
    message(FATAL_ERROR "${cmdline}: no '${regex}X Y Z' in stdout:\n${out}")
  endif()
  set(m1 "${CMAKE_MATCH_1}")
  set(m2 "${CMAKE_MATCH_2}")
  set(m3 "${CMAKE_MATCH_3}")
  fixed("${m1}" x)
  fixed("${m2}" y)
  fixed("${m3}" z)
  set(${result} ${x} ${y} ${z} PARENT_SCOPE)
endfunction()

# dist2(a b result): squared distance of two vec3() results, in units of 1e-8 (m^2 for metres).
function(dist2 a b result)
  set(s 0)
  foreach(k 0 1 2)
    list(GET a ${k} p)
    list(GET b ${k} q)
    math(EXPR s "${s} + (${p} - (${q})) * (${p} - (${q}))")
  endforeach()
  set(${result} ${s} PARENT_SCOPE)
endfunction()

# probe(file prefix): runs image_probe on file (in WORK); sets <prefix>_w, _h, _distinct,
# _warm, _warm_x, _cool, and _teal, _teal_x, _teal_y (the dynamic bodies' color).
function(probe file prefix)
  if(NOT EXISTS "${WORK}/${file}")
    message(FATAL_ERROR "${cmdline}: ${file} was not written\nstdout: ${out}\nstderr: ${err}")
  endif()
  execute_process(COMMAND "${PROBE}" "${WORK}/${file}" RESULT_VARIABLE prc OUTPUT_VARIABLE pout ERROR_VARIABLE perr)
  if(NOT prc EQUAL 0 OR NOT pout MATCHES "size ([0-9]+) ([0-9]+)\ndistinct ([0-9]+)\nwarm ([0-9.]+) ([-0-9.]+) ([-0-9.]+)\ncool ([0-9.]+)")
    message(FATAL_ERROR "image_probe ${file}: ${prc}\n${pout}${perr}")
  endif()
  set(${prefix}_w ${CMAKE_MATCH_1} PARENT_SCOPE)
  set(${prefix}_h ${CMAKE_MATCH_2} PARENT_SCOPE)
  set(${prefix}_distinct ${CMAKE_MATCH_3} PARENT_SCOPE)
  set(${prefix}_warm ${CMAKE_MATCH_4} PARENT_SCOPE)
  set(${prefix}_warm_x ${CMAKE_MATCH_5} PARENT_SCOPE)
  set(${prefix}_cool ${CMAKE_MATCH_7} PARENT_SCOPE)
  if(NOT pout MATCHES "\nteal ([0-9.]+) ([-0-9.]+) ([-0-9.]+)")
    message(FATAL_ERROR "image_probe ${file}: no teal line\n${pout}")
  endif()
  set(${prefix}_teal ${CMAKE_MATCH_1} PARENT_SCOPE)
  set(${prefix}_teal_x ${CMAKE_MATCH_2} PARENT_SCOPE)
  set(${prefix}_teal_y ${CMAKE_MATCH_3} PARENT_SCOPE)
  message("${file}: ${pout}")
endfunction()

# expect_picture(prefix w h): the screenshot is w x h, not blank, shows the cloth (warm pixels)
# and the sphere (cool pixels). Fractions compare as numbers (CMake's LESS reads doubles).
function(expect_picture prefix w h)
  if(NOT ${prefix}_w EQUAL w OR NOT ${prefix}_h EQUAL h)
    message(FATAL_ERROR "${prefix}: ${${prefix}_w} x ${${prefix}_h}, expected ${w} x ${h}")
  endif()
  if(${prefix}_distinct LESS 100)
    message(FATAL_ERROR "${prefix}: only ${${prefix}_distinct} colors: blank")
  endif()
  if(${prefix}_warm LESS 0.01)
    message(FATAL_ERROR "${prefix}: the cloth's colors cover only ${${prefix}_warm} of the image")
  endif()
  if(${prefix}_cool LESS 0.005)
    message(FATAL_ERROR "${prefix}: the sphere's color covers only ${${prefix}_cool} of the image")
  endif()
endfunction()

if(CASE STREQUAL "drag")
  # Particle 440 is a free corner of cloth_sphere's cloth (the two pinned ones are 0 and 20), at
  # the back left as the scene's camera sees it. The same 40 steps, once left alone and once with
  # the corner grabbed where it is drawn and dragged by the cursor to where the point
  # P = (-9, -3, 4) is drawn (front left), held to the end: the drag goes through the viewer's
  # picking (the press must pick 440), pinning and per-step targets. Tab hides the panel, so
  # the screenshots show the scene alone.
  set(size 400x300)
  run_view(cloth_sphere --frames 40 --size ${size} --screenshot still.png --track 440 --hidden --key 1:tab)
  expect_rc(0)
  vec3("particle 440: " still)
  probe(still.png still)
  expect_picture(still 400 300)

  run_view(cloth_sphere --frames 40 --size ${size} --screenshot drag.png --track 440 --hidden --key 1:tab
           --drag 440:-9,-3,4:1-40)
  expect_rc(0)
  expect_out("drag: particle 440 grabbed at window point")
  vec3("drag: particle 440 let go after step 40 at " held)
  vec3("\\(drag target " target)
  vec3("particle 440: " dragged)
  probe(drag.png drag)
  expect_picture(drag 400 300)

  # It is where the cursor held it (a pinned particle reaches its target exactly)...
  dist2("${held}" "${target}" d_target)
  if(d_target GREATER 1)
    message(FATAL_ERROR "the dragged particle is at ${held}, not at its drag target ${target} (1e-4 m units)")
  endif()
  # ...which is not where it falls to by itself: metres away, and nearer the point dragged to.
  dist2("${dragged}" "${still}" d_moved)
  if(d_moved LESS 400000000) # (2 m)^2
    message(FATAL_ERROR "dragged to ${dragged}, left alone at ${still}: it did not move (1e-4 m units)")
  endif()
  set(p -90000 -30000 40000)
  dist2("${dragged}" "${p}" d_drag_p)
  dist2("${still}" "${p}" d_still_p)
  if(NOT d_drag_p LESS d_still_p)
    message(FATAL_ERROR "the dragged particle ${dragged} is no nearer to P than the undragged one ${still}")
  endif()
  # The picture shows it: pulled to the left, the cloth is drawn further left.
  string(REGEX REPLACE "\\..*" "" still_x "${still_warm_x}")
  string(REGEX REPLACE "\\..*" "" drag_x "${drag_warm_x}")
  math(EXPR shift "${still_x} - ${drag_x}")
  if(shift LESS 20)
    message(FATAL_ERROR "the dragged cloth is not drawn further left: centre x ${drag_warm_x} vs ${still_warm_x}")
  endif()

  # A scene-pinned particle can be moved too, and stays pinned where it is let go (here after
  # step 10 of 30): its final position is the one it had when let go.
  run_view(cloth_sphere --frames 30 --size ${size} --track 0 --hidden --drag 0:3,2,3:1-10)
  expect_rc(0)
  vec3("drag: particle 0 let go after step 10 at " pin_held)
  vec3("particle 0: " pin_final)
  dist2("${pin_held}" "${pin_final}" d_pin)
  if(NOT d_pin EQUAL 0)
    message(FATAL_ERROR "the pinned corner moved after it was let go: ${pin_held} -> ${pin_final}")
  endif()
  dist2("${pin_final}" "50000;0;50000" d_pin_moved)
  if(d_pin_moved LESS 10000000) # (0.3 m)^2
    message(FATAL_ERROR "the pinned corner was not moved: ${pin_final}")
  endif()

  # A press on empty space grabs nothing (it orbits): the same steps as left alone.
  run_view(cloth_sphere --frames 40 --size ${size} --track 440 --hidden --mouse 1:press:5,295 --mouse 2:move:60,280
           --mouse 3:release:60,280)
  expect_rc(0)
  vec3("particle 440: " orbited)
  if(NOT orbited STREQUAL still)
    message(FATAL_ERROR "orbiting the camera changed the simulation: ${orbited} vs ${still}")
  endif()

elseif(CASE STREQUAL "body")
  # A dynamic crate with nothing under it, and a static shelf. Grabbed where its centre is drawn
  # before the first step and dragged by the cursor to where P = (2, 2.6, 0) is drawn over 120
  # steps, the crate is held against gravity by the spring at the point grabbed, which ends near
  # its drag target. It is drawn in the body color, the shelf in the collider color, and the
  # picture shows the crate moved up and to the right.
  file(WRITE "${WORK}/crate.json" [=[
{"frames": 120,
 "bodies": [
  {"name": "crate", "type": "dynamic", "position": [0, 0.5, 0], "density": 500,
   "shapes": [{"type": "box", "half_extents": [0.4, 0.4, 0.4]}]},
  {"name": "shelf", "type": "static", "position": [-2, -0.5, 0],
   "shapes": [{"type": "box", "half_extents": [0.8, 0.1, 0.5]}]}],
 "render": {"width": 400, "height": 300, "camera": {"eye": [0, 2, 9], "target": [0.5, 0.8, 0], "fov": 40}}}
]=])
  run_view(crate.json --frames 1 --hidden --key 1:tab --screenshot start.png)
  expect_rc(0)
  probe(start.png start)
  if(start_teal LESS 0.01 OR start_cool LESS 0.002)
    message(FATAL_ERROR "the crate (teal ${start_teal}) or the shelf (blue ${start_cool}) is not drawn")
  endif()

  run_view(crate.json --frames 120 --hidden --key 1:tab --drag-body 0:2,2.6,0 --screenshot drag.png)
  expect_rc(0)
  expect_out("drag: body 0 grabbed at window point")
  vec3("drag: body 0 let go after step 120 at " held)
  vec3("\\(drag target " target)
  dist2("${held}" "${target}" d_target)
  if(d_target GREATER 16000000) # (0.4 m)^2: the spring's lag and sag
    message(FATAL_ERROR "the point held is at ${held}, far from its drag target ${target} (1e-4 m units)")
  endif()
  dist2("${held}" "0;5000;0" d_moved)
  if(d_moved LESS 225000000) # (1.5 m)^2
    message(FATAL_ERROR "the crate was not dragged: the point held ended at ${held} (1e-4 m units)")
  endif()
  probe(drag.png drag)
  string(REGEX REPLACE "\\..*" "" x0 "${start_teal_x}")
  string(REGEX REPLACE "\\..*" "" y0 "${start_teal_y}")
  string(REGEX REPLACE "\\..*" "" x1 "${drag_teal_x}")
  string(REGEX REPLACE "\\..*" "" y1 "${drag_teal_y}")
  math(EXPR right "${x1} - ${x0}")
  math(EXPR up "${y0} - ${y1}")
  if(drag_teal LESS 0.01 OR right LESS 40 OR up LESS 40)
    message(FATAL_ERROR "the dragged crate is not drawn up and to the right: (${drag_teal_x}, ${drag_teal_y}) "
                        "vs (${start_teal_x}, ${start_teal_y}), teal ${drag_teal}")
  endif()

  # Only a dynamic body can be dragged, and only one the scene has.
  run_pbd(view crate.json --frames 5 --drag-body 1:0,0,0)
  expect_rc(2)
  expect_one_line("^pbd: --drag-body: body 1 \\(shelf\\) is not dynamic")
  run_pbd(view crate.json --frames 5 --drag-body 2:0,0,0)
  expect_rc(2)
  expect_one_line("^pbd: --drag-body: body 2 does not exist \\(crate has 2\\)")

elseif(CASE STREQUAL "controls")
  # The keys, through the same handler as the window's: solver, iterations, substeps, stiffness,
  # the overlays (contacts on, joints off).
  run_view(hanging_cloth --frames 60 --size 320x240 --hidden --key 1:g --key 1:bracketright --key 1:bracketright --key 1:. --key 1:down
           --key 1:down --key 1:down --key 1:down --key 1:down --key 1:down --key 2:p --key 2:c --key 2:k --key 2:i
           --key 2:j --key 2:? --screenshot keys.png)
  expect_rc(0)
  expect_out("view: solver: ")
  expect_out("view: contacts on\n")
  expect_out("view: joints off\n")
  expect_out("view: stiffness: x0.015625 of the scene's materials")
  expect_out("settings at the end: [A-Za-z-]+, XPBD, [0-9]+ iterations, [0-9]+ substeps, stiffness x0.015625\n")
  if(NOT out MATCHES "final max strain [0-9.]+, mean strain ([0-9.]+)")
    message(FATAL_ERROR "no strain in: ${out}")
  endif()
  set(soft_strain ${CMAKE_MATCH_1})
  probe(keys.png keys)

  run_view(hanging_cloth --frames 60 --size 320x240 --hidden)
  expect_rc(0)
  if(NOT out MATCHES "final max strain [0-9.]+, mean strain ([0-9.]+)")
    message(FATAL_ERROR "no strain in: ${out}")
  endif()
  set(stiff_strain ${CMAKE_MATCH_1})
  if(NOT out MATCHES "settings at the end: ([^\n]*), stiffness x1\n")
    message(FATAL_ERROR "no settings in: ${out}")
  endif()
  set(scene_settings "${CMAKE_MATCH_1}")
  # 1/64 of the stiffness stretches the hanging cloth more.
  if(NOT soft_strain GREATER stiff_strain)
    message(FATAL_ERROR "mean strain ${soft_strain} at stiffness x1/64, ${stiff_strain} at x1: not softer")
  endif()

  # R reloads the scene: the settings and the materials are the file's again.
  run_view(hanging_cloth --frames 60 --size 320x240 --hidden --key 1:g --key 1:down --key 1:down --key 30:r)
  expect_rc(0)
  expect_out("view: reloaded hanging_cloth")
  expect_out("settings at the end: ${scene_settings}, stiffness x1\n")
  expect_out("60 steps, ")

  # Space pauses (no step), N steps once while paused.
  run_view(hanging_cloth --frames 20 --size 320x240 --hidden --key 1:space --key 5:n --key 6:n)
  expect_rc(0)
  expect_out(": 20 frames drawn, 2 steps, ")

elseif(CASE STREQUAL "usage")
  # Refusals need no window: they come before one is opened.
  foreach(args "view;--frames;abc" "view;--frames;-1" "view;--size;8x8" "view;--size;640" "view;--drag;5:1,2"
          "view;--drag;5:1,2,3:4-2;--frames;9" "view;--mouse;1:press:3,4" "view;--frames;5;--mouse;1:click:3,4"
          "view;--frames;5;--mouse;9:move:3,4" "view;--frames;5;--key;1:@@" "view;--bogus" "view;a;b"
          "view;--frames;5;--drag;1:0,0,0:1-3;--drag;2:0,0,0:3-5" "view;--hidden=1")
    run_pbd(${args})
    expect_rc(2)
    expect_one_line("^pbd: ")
  endforeach()
  run_pbd(view --frames 5 --drag 99999:0,0,0)
  expect_rc(2)
  expect_one_line("^pbd: --drag: particle 99999 does not exist \\(cloth_sphere has 441\\)")
  run_pbd(view no_such_scene --frames 1)
  expect_rc(1)
  expect_one_line("^pbd: no_such_scene: neither a scene file nor a built-in scene")
  run_pbd(view --help)
  expect_rc(0)
  foreach(opt --frames --screenshot --drag --mouse --key --track --size --hidden --paused)
    expect_out("${opt}")
  endforeach()
  run_pbd(--help)
  expect_out("\n  view \\[SCENE\\]")

elseif(CASE STREQUAL "missing")
  # Built without the viewer: one line, exit status 1.
  run_pbd(view)
  expect_rc(1)
  expect_one_line("^pbd: built without the viewer \\(needs GLFW")

else()
  message(FATAL_ERROR "view_test.cmake: unknown CASE ${CASE}")
endif()
