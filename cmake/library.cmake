# libucft from the objects of its layers (see docs/design.md):
# - ucft: the shared library; exports exactly what include/ucft.h declares;
# - ucft_static: the same objects as an installed static library;
# - ucft_private: the same objects again, never installed, for the tools
#   and tests that need internals (white-box tests, the benchmarks' raw
#   baselines, ucft-topo's online mode).
set(UCFT_LIB_OBJECTS
  $<TARGET_OBJECTS:ucft_base_obj>
  $<TARGET_OBJECTS:ucft_tp_ucp_obj>
  $<TARGET_OBJECTS:ucft_coll_obj>
  $<TARGET_OBJECTS:ucft_boot_obj>
  $<TARGET_OBJECTS:ucft_place_obj>
  $<TARGET_OBJECTS:ucft_detector_obj>
  $<TARGET_OBJECTS:ucft_linux_obj>
  $<TARGET_OBJECTS:ucft_rt_obj>)
if(TARGET ucft_comm_obj)
  list(APPEND UCFT_LIB_OBJECTS $<TARGET_OBJECTS:ucft_comm_obj>)
endif()
set(UCFT_LIB_DEPS PkgConfig::UCX PkgConfig::PMIX PkgConfig::HWLOC Threads::Threads)

add_library(ucft SHARED ${UCFT_LIB_OBJECTS})
target_link_options(ucft PRIVATE -Wl,-Bsymbolic-functions)
target_link_libraries(ucft PRIVATE ${UCFT_LIB_DEPS})
set_target_properties(ucft PROPERTIES VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR} PUBLIC_HEADER ${PROJECT_SOURCE_DIR}/include/ucft.h)
target_include_directories(ucft PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

add_library(ucft_static STATIC ${UCFT_LIB_OBJECTS})
target_link_libraries(ucft_static PUBLIC ${UCFT_LIB_DEPS})
set_target_properties(ucft_static PROPERTIES OUTPUT_NAME ucft)
target_include_directories(ucft_static PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

add_library(ucft_private STATIC ${UCFT_LIB_OBJECTS})
target_link_libraries(ucft_private PUBLIC ${UCFT_LIB_DEPS})
