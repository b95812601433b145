# Holds the #include lines under SRC_DIR to the module graph in GRAPH (module_graph.cmake).
#   cmake -DSRC_DIR=<dir with one folder per module> -DGRAPH=<module_graph.cmake>
#         [-DSTAMP=<file touched on success>] -P check_module_graph.cmake
# Fails (exit code 1) naming every file:line whose include is outside its module's allowed
# list, every module folder the graph does not list, and every allowed module that is not
# listed before the module (which would allow a cycle or an upward include).
cmake_minimum_required(VERSION 3.25)
include(${GRAPH})
get_filename_component(SRC_DIR "${SRC_DIR}" ABSOLUTE)
set(problems "")

# The table itself: TP_MODULES is lowest first, so what a module may include comes before it.
set(seen "")
foreach(module IN LISTS TP_MODULES)
  foreach(allowed IN LISTS TP_ALLOWED_${module})
    if(NOT allowed IN_LIST seen)
      string(APPEND problems "  module_graph.cmake: ${module} may include ${allowed}, "
             "which is not listed before it\n")
    endif()
  endforeach()
  list(APPEND seen ${module})
endforeach()

file(GLOB dirs LIST_DIRECTORIES true RELATIVE ${SRC_DIR} ${SRC_DIR}/*)
foreach(module IN LISTS dirs)
  if(NOT IS_DIRECTORY ${SRC_DIR}/${module})
    continue()
  endif()
  if(NOT module IN_LIST TP_MODULES)
    string(APPEND problems "  src/${module}/: not a module of module_graph.cmake\n")
    continue()
  endif()
  file(GLOB_RECURSE sources ${SRC_DIR}/${module}/*.h ${SRC_DIR}/${module}/*.cc)
  foreach(source IN LISTS sources)
    file(STRINGS ${source} lines REGEX "^[ \t]*#[ \t]*include[ \t]+\"")
    file(RELATIVE_PATH shown ${SRC_DIR} ${source})
    foreach(line IN LISTS lines)
      if(NOT line MATCHES "include[ \t]+\"([^\"/]+)/")
        continue()  # a header beside the file, or a generated one
      endif()
      set(target ${CMAKE_MATCH_1})
      if(target STREQUAL module OR target IN_LIST TP_ALLOWED_${module})
        continue()
      endif()
      string(STRIP "${line}" line)
      string(REPLACE ";" " " allowed "${TP_ALLOWED_${module}}")
      string(APPEND problems "  src/${shown}: ${line} (${module} may include: ${allowed})\n")
    endforeach()
  endforeach()
endforeach()

if(problems)
  message(FATAL_ERROR "module graph (cmake/module_graph.cmake) broken:\n${problems}")
endif()
if(STAMP)
  file(TOUCH ${STAMP})
endif()
