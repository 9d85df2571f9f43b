# Man pages for the command-line tools, generated from their --help by
# help2man (Debian help2man) at build time and installed by
# `cmake --install` into share/man/man1. Without help2man nothing is
# generated (configure says so).
find_program(UCFT_HELP2MAN help2man)
if(NOT UCFT_HELP2MAN)
  message(STATUS "help2man not found: no man pages")
  return()
endif()
set(_ucft_man_names
  "ucftrun=start the ranks of a ucft job under a PMIx server, kill or stop them on purpose"
  "ucft-info=print ucft's version, UCX transports and every UCFT_ variable"
  "ucft-bench=benchmark ucft point-to-point, failure detection and collectives"
  "ucft-sim=run ucft's collective algorithms on a simulated network"
  "ucft-topo=print a ucft job's failure domains, placement and collective trees")
set(_ucft_pages)
foreach(entry IN LISTS _ucft_man_names)
  string(FIND "${entry}" "=" eq)
  string(SUBSTRING "${entry}" 0 ${eq} tool)
  math(EXPR from "${eq} + 1")
  string(SUBSTRING "${entry}" ${from} -1 what)
  if(NOT TARGET ${tool})
    continue()
  endif()
  set(page ${CMAKE_BINARY_DIR}/man/${tool}.1)
  add_custom_command(OUTPUT ${page}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
    COMMAND ${UCFT_HELP2MAN} --no-info --no-discard-stderr
            --version-string=${PROJECT_VERSION} --name=${what}
            --output=${page} $<TARGET_FILE:${tool}>
    DEPENDS ${tool}
    COMMENT "man page ${tool}.1 (help2man)" VERBATIM)
  list(APPEND _ucft_pages ${page})
endforeach()
add_custom_target(ucft_man ALL DEPENDS ${_ucft_pages})
install(FILES ${_ucft_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
