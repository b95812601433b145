# tp_embed(<target> <output.cc> FROM <file or directory> SCRIPT <embed script> COMMENT <text>)
# Adds to <target> a C++ source that <embed script> writes at build time from FROM into the
# current binary directory (`cmake -DIN=<FROM> -DOUT=<output.cc> -P <script>`): the web
# console (embed_web.cmake) and the OpenAPI document (embed_openapi.cmake) are built into the
# binary this way. It is written again whenever FROM changes: the file itself, or for a
# directory every file below it (globbed with CONFIGURE_DEPENDS, so a new file counts too),
# and when the script or write_if_changed.cmake (which keeps an unchanged output untouched)
# changes.
function(tp_embed target output)
  cmake_parse_arguments(ARG "" "FROM;SCRIPT;COMMENT" "" ${ARGN})
  if(NOT ARG_FROM OR NOT ARG_SCRIPT OR NOT ARG_COMMENT OR ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tp_embed(${target} ${output}): needs FROM, SCRIPT and COMMENT only")
  endif()
  if(IS_DIRECTORY "${ARG_FROM}")
    file(GLOB_RECURSE inputs CONFIGURE_DEPENDS "${ARG_FROM}/*")
  else()
    set(inputs "${ARG_FROM}")
  endif()
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${output})
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DIN=${ARG_FROM} -DOUT=${out} -P ${ARG_SCRIPT}
    DEPENDS ${inputs} ${ARG_SCRIPT} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/write_if_changed.cmake
    COMMENT "${ARG_COMMENT}"
    VERBATIM)
  target_sources(${target} PRIVATE ${out})
  # Generated at build time and large (the console's bytes): never part of a unity batch.
  set_source_files_properties(${out} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()
