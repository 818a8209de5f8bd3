# Installs the library, headers, a pkg-config file and a CMake package (find_package(pbd)).
include(CMakePackageConfigHelpers)

install(TARGETS pbd_static pbd_shared EXPORT pbdTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/pbd DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/pbd/config.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pbd)

install(EXPORT pbdTargets NAMESPACE pbd:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pbd)
configure_package_config_file(cmake/pbdConfig.cmake.in ${PROJECT_BINARY_DIR}/pbdConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pbd)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pbdConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pbdConfig.cmake ${PROJECT_BINARY_DIR}/pbdConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pbd)

# The .pc file finds the prefix relative to itself, so `cmake --install --prefix DIR` works for
# any DIR, not only the prefix known at configure time.
file(RELATIVE_PATH PBD_PC_UP "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
set(PBD_PC_PREFIX "\${pcfiledir}/${PBD_PC_UP}")
configure_file(cmake/pbd.pc.in ${PROJECT_BINARY_DIR}/pbd.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pbd.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
