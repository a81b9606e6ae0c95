include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS counterpoint counterpoint_cli counterpoint_sentencepiece
  EXPORT counterpointTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/counterpoint DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The demo's corpus, found by the installed CLI beside its prefix.
install(DIRECTORY examples/corpus DESTINATION ${CMAKE_INSTALL_DATADIR}/counterpoint/examples)
install(EXPORT counterpointTargets NAMESPACE counterpoint::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/counterpoint)
configure_package_config_file(cmake/counterpointConfig.cmake.in
  ${CMAKE_BINARY_DIR}/counterpointConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/counterpoint)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/counterpointConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/counterpointConfig.cmake ${CMAKE_BINARY_DIR}/counterpointConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/counterpoint)
