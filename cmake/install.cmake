# Installs the three libraries (libpbd; libpbd_scene; pbd_render when it was built), their headers,
# a pkg-config file for each and one CMake package, find_package(pbd [COMPONENTS scene render]).
include(CMakePackageConfigHelpers)

set(_pbd_export_targets pbd_static pbd_shared)
set(_pbd_headers include/pbd/pbd.h include/pbd/types.h include/pbd/math.h include/pbd/material.h)
set(PBD_HAVE_SCENE_LIB OFF)
set(PBD_HAVE_RENDER_LIB OFF)
if(TARGET pbd_scene_shared)
  set(PBD_HAVE_SCENE_LIB ON)
  list(APPEND _pbd_export_targets pbd_scene_shared)
  list(APPEND _pbd_headers include/pbd/scene.h)
  # The static archive for pkg-config --static users; CMake users get the shared library, whose
  # private dependencies (cJSON, stb) need no imported targets on their side.
  install(TARGETS pbd_scene_static ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
if(TARGET pbd_render_shared)
  set(PBD_HAVE_RENDER_LIB ON)
  list(APPEND _pbd_export_targets pbd_render_shared)
  list(APPEND _pbd_headers include/pbd/render.h)
  install(TARGETS pbd_render_static ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()

install(TARGETS ${_pbd_export_targets} EXPORT pbdTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${_pbd_headers} ${PROJECT_BINARY_DIR}/include/pbd/config.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pbd)

install(EXPORT pbdTargets NAMESPACE pbd:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pbd)
configure_package_config_file(cmake/pbdConfig.cmake.in ${PROJECT_BINARY_DIR}/pbdConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pbd)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pbdConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pbdConfig.cmake ${PROJECT_BINARY_DIR}/pbdConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pbd)

# The .pc files find the prefix relative to themselves, so `cmake --install --prefix DIR` works
# for any DIR, not only the prefix known at configure time. Their Libs carry a run-time path to
# libdir, so that a program built with them starts from a non-system prefix without
# LD_LIBRARY_PATH (docs/install.md).
file(RELATIVE_PATH PBD_PC_UP "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
set(PBD_PC_PREFIX "\${pcfiledir}/${PBD_PC_UP}")
set(_pbd_pcs pbd)
if(PBD_HAVE_SCENE_LIB)
  list(APPEND _pbd_pcs pbd-scene)
endif()
if(PBD_HAVE_RENDER_LIB)
  list(APPEND _pbd_pcs pbd-render)
endif()
foreach(pc ${_pbd_pcs})
  configure_file(cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
