# counterpoint_layer(<name> DEPS ...): a static archive cp_<name> from src/<name>/*.cpp.
function(counterpoint_layer name)
  cmake_parse_arguments(L "" "" "DEPS" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${name}/*.cpp)
  if(NOT sources)
    add_library(cp_${name} INTERFACE)
    target_include_directories(cp_${name} INTERFACE
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>)
    target_link_libraries(cp_${name} INTERFACE ${L_DEPS})
  else()
    add_library(cp_${name} STATIC ${sources})
    target_include_directories(cp_${name} PUBLIC
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>)
    target_link_libraries(cp_${name} PUBLIC ${L_DEPS} Threads::Threads)
  endif()
  set_property(GLOBAL APPEND PROPERTY COUNTERPOINT_LAYERS cp_${name})
endfunction()

# The shared library that bundles every layer's archive.
function(counterpoint_bundle name)
  get_property(layers GLOBAL PROPERTY COUNTERPOINT_LAYERS)
  set(archives)
  foreach(layer ${layers})
    get_target_property(type ${layer} TYPE)
    if(type STREQUAL "STATIC_LIBRARY")
      list(APPEND archives ${layer})
    endif()
  endforeach()
  file(WRITE ${CMAKE_BINARY_DIR}/bundle_anchor.cpp "// anchor for the bundled library\n")
  add_library(${name} SHARED ${CMAKE_BINARY_DIR}/bundle_anchor.cpp)
  add_library(counterpoint::counterpoint ALIAS ${name})
  # Every object of every layer goes into the shared library (--whole-archive), while the
  # plain link below brings in the layers' own dependencies.
  set(whole)
  foreach(archive ${archives})
    list(APPEND whole "$<TARGET_FILE:${archive}>")
  endforeach()
  target_link_options(${name} PRIVATE "LINKER:--whole-archive" ${whole} "LINKER:--no-whole-archive")
  target_link_libraries(${name} PRIVATE ${archives})
  target_link_libraries(${name} PUBLIC ${TORCH_LIBRARIES} faiss OpenMP::OpenMP_CXX Threads::Threads)
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  set_target_properties(${name} PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
  target_compile_definitions(${name} PRIVATE
    COUNTERPOINT_PLUGIN_DIR="${CMAKE_BINARY_DIR}/lib")
endfunction()
