# Install-time part of cmake/install.cmake: the systemd unit, naming the installed binary and
# site file, and the example site file. Debian's places when the prefix is /usr (the
# package): /lib/systemd/system, /etc/tuneplane; under another prefix, both below it.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(sysconfdir /etc)
  set(unitdir /lib/systemd/system)
else()
  set(sysconfdir ${CMAKE_INSTALL_PREFIX}/etc)
  set(unitdir ${CMAKE_INSTALL_PREFIX}/lib/systemd/system)
endif()
set(TP_BINDIR ${CMAKE_INSTALL_PREFIX}/${TP_BINDIR_REL})
set(TP_DOCDIR ${CMAKE_INSTALL_PREFIX}/${TP_DOCDIR_REL})
set(TP_SITE_FILE ${sysconfdir}/tuneplane/site.yaml)
configure_file(${TP_SOURCE_DIR}/packaging/tuneplane.service.in
  ${TP_BINARY_DIR}/packaging/tuneplane.service @ONLY)
file(INSTALL ${TP_BINARY_DIR}/packaging/tuneplane.service DESTINATION "${unitdir}")
# An example only: the unit starts once the operator writes site.yaml beside it.
file(INSTALL ${TP_SOURCE_DIR}/examples/site-serve.yaml DESTINATION "${sysconfdir}/tuneplane"
  RENAME site.yaml.example)
file(INSTALL ${TP_SOURCE_DIR}/examples/runtimes.yaml DESTINATION "${sysconfdir}/tuneplane"
  RENAME runtimes.yaml.example)
# Bash completion, from the installed command tree itself (`tuneplane completion bash`).
execute_process(COMMAND ${TP_BINARY_DIR}/src/cli/tuneplane completion bash
  OUTPUT_FILE ${TP_BINARY_DIR}/packaging/tuneplane.bash RESULT_VARIABLE completion_status)
if(NOT completion_status EQUAL 0)
  message(FATAL_ERROR "tuneplane completion bash failed: ${completion_status}")
endif()
file(INSTALL ${TP_BINARY_DIR}/packaging/tuneplane.bash
  DESTINATION "${CMAKE_INSTALL_PREFIX}/share/bash-completion/completions"
  RENAME tuneplane)
