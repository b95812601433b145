# What `cmake --install` and `make deb` (CPack, DEB generator) put where: the two binaries,
# the systemd unit, an example site file under <sysconf>/tuneplane/ and the documentation.
# The web console needs nothing here: its files are embedded in `tuneplane`. The package
# creates no user and enables no unit (docs/operators.md, "Installing: the package and the unit").
include(GNUInstallDirs)

install(TARGETS tuneplane tuneplane-slurmsim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The documentation as the repository lays it out (README.md beside docs/ and examples/), so
# every relative link of the installed guides resolves (scripts/package-test.sh checks it).
install(FILES README.md packaging/job-user.conf DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(DIRECTORY examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
# The Python client's package (standard library only), for `pip install` from the installed
# copy; its tests stay in the repository.
install(DIRECTORY clients/python/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/clients/python
        PATTERN "tests" EXCLUDE PATTERN "__pycache__" EXCLUDE)
# The unit and /etc's files depend on the prefix chosen at install time (cmake --install
# --prefix, or CPack's /usr), so a script run then writes them.
install(CODE "set(TP_SOURCE_DIR \"${CMAKE_CURRENT_SOURCE_DIR}\")
  set(TP_BINARY_DIR \"${CMAKE_CURRENT_BINARY_DIR}\")
  set(TP_BINDIR_REL \"${CMAKE_INSTALL_BINDIR}\")
  set(TP_DOCDIR_REL \"${CMAKE_INSTALL_DOCDIR}\")")
install(SCRIPT cmake/install_system_files.cmake)

# `make deb`: build/package/tuneplane_<version>_<arch>.deb from the already built tree (no
# install step builds anything else: CMAKE_SKIP_INSTALL_ALL_DEPENDENCY).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tuneplane)
set(CPACK_PACKAGE_CONTACT "TunePlane maintainers <tuneplane@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Control plane for ML training jobs on Slurm through slurmrestd")
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/package)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # Depends: from the binaries' shared libraries
set(CPACK_STRIP_FILES ON)
# /etc's files are the operator's once installed: dpkg keeps their edits on upgrade.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_SOURCE_DIR}/packaging/conffiles)
# DESTDIR staging with /usr as the install-time prefix: the unit then names /usr/bin and
# /etc, and /etc, /lib land in the package as themselves.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
include(CPack)
