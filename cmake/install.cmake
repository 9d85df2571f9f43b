# Installation: libucft (shared + static), include/ucft.h, ucft.pc and a
# CMake package so that both `pkg-config ucft` and `find_package(ucft)` work.
include(CMakePackageConfigHelpers)

install(TARGETS ucft ucft_static EXPORT ucftTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/ucft.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT ucftTargets NAMESPACE ucft:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ucft)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ucftConfig.cmake.in
  ${CMAKE_BINARY_DIR}/ucftConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ucft)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/ucftConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/ucftConfig.cmake ${CMAKE_BINARY_DIR}/ucftConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ucft)

# Relocatable: the prefix is found relative to the .pc file itself, so
# `cmake --install --prefix <dir>` works without reconfiguring.
file(RELATIVE_PATH UCFT_PC_TO_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
configure_file(${PROJECT_SOURCE_DIR}/cmake/ucft.pc.in ${CMAKE_BINARY_DIR}/ucft.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/ucft.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
