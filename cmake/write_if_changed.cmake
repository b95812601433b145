# tp_write_if_changed(<file> <content>): writes <content> to <file> only when it differs from
# what the file holds, so a generated source that did not change does not recompile or relink.
# Included by the embedding scripts (embed_web.cmake, embed_openapi.cmake).
function(tp_write_if_changed file content)
  if(EXISTS "${file}")
    file(READ "${file}" old)
    if(old STREQUAL content)
      return()
    endif()
  endif()
  file(WRITE "${file}" "${content}")
endfunction()
