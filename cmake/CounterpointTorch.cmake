# Which libtorch the library links (COUNTERPOINT_TORCH):
#   system  Debian's libtorch-dev, found by find_package(Torch): the C++ library, the CLI and
#           set-up's Python (a venv over Debian's python3-torch, the same build).
#   python  the libtorch inside the torch package of the Python the module is built for, such as
#           a PyPI torch 2.x in a user's notebook environment. Two libtorch builds in one process
#           crash it (their registries and OpenMP runtimes collide), so the module must use the
#           one that `import torch` loads. Only its CPU libraries (libtorch_cpu, libc10) are
#           linked: the wheel's CMake config insists on a CUDA toolkit that the library never uses.
#   auto    python for `pip install` into an environment whose torch is not the system's,
#           system otherwise.
# Sets TORCH_LIBRARIES and COUNTERPOINT_TORCH_PACKAGE_DIR (the torch package, python only).
set(COUNTERPOINT_TORCH "auto" CACHE STRING "libtorch to link: auto, system or python")
set_property(CACHE COUNTERPOINT_TORCH PROPERTY STRINGS auto system python)
if(NOT COUNTERPOINT_TORCH MATCHES "^(auto|system|python)$")
  message(FATAL_ERROR "COUNTERPOINT_TORCH is '${COUNTERPOINT_TORCH}': use auto, system or python")
endif()

# Asks the target environment's interpreter about its torch. pip builds a package in an isolated
# environment that hides the target's site-packages through PYTHONPATH; the interpreter itself
# is the target's, so the question is asked without pip's PYTHONPATH and PYTHONNOUSERSITE.
function(counterpoint_probe_python_torch out_found)
  if(NOT Python3_EXECUTABLE)
    find_package(Python3 REQUIRED COMPONENTS Interpreter)
  endif()
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env --unset=PYTHONPATH --unset=PYTHONNOUSERSITE --unset=PYTHONHOME
      ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/cmake/probe_torch.py
    RESULT_VARIABLE status OUTPUT_VARIABLE answer ERROR_VARIABLE problem OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT status EQUAL 0)
    if(COUNTERPOINT_TORCH STREQUAL "python")
      message(FATAL_ERROR "COUNTERPOINT_TORCH=python, but ${Python3_EXECUTABLE} has no usable torch: ${problem}")
    endif()
    set(${out_found} FALSE PARENT_SCOPE)
    return()
  endif()
  # version;package dir;C++11 ABI (1/0);1 when its libtorch is a system library
  list(GET answer 0 version)
  list(GET answer 1 package_dir)
  list(GET answer 2 cxx11_abi)
  list(GET answer 3 from_system)
  set(${out_found} TRUE PARENT_SCOPE)
  set(probed_torch_version ${version} PARENT_SCOPE)
  set(probed_torch_dir ${package_dir} PARENT_SCOPE)
  set(probed_torch_abi ${cxx11_abi} PARENT_SCOPE)
  set(probed_torch_from_system ${from_system} PARENT_SCOPE)
endfunction()

set(counterpoint_torch_choice ${COUNTERPOINT_TORCH})
if(COUNTERPOINT_TORCH STREQUAL "auto")
  set(counterpoint_torch_choice system)
  if(COUNTERPOINT_WHEEL)
    counterpoint_probe_python_torch(found)
    if(found AND NOT probed_torch_from_system)
      set(counterpoint_torch_choice python)
    endif()
  endif()
elseif(COUNTERPOINT_TORCH STREQUAL "python")
  counterpoint_probe_python_torch(found)
endif()

if(counterpoint_torch_choice STREQUAL "system")
  find_package(Torch REQUIRED)
  set(COUNTERPOINT_TORCH_PACKAGE_DIR "")
  message(STATUS "counterpoint: linking the system's libtorch ${Torch_VERSION}")
  return()
endif()

# Debian's FAISS and the other system libraries use the C++11 ABI of std::string; a torch built
# with the old ABI cannot share objects with them.
if(NOT probed_torch_abi)
  message(FATAL_ERROR "torch ${probed_torch_version} in ${probed_torch_dir} was built with the pre-C++11 ABI, "
    "while counterpoint links system libraries (FAISS) built with the C++11 ABI: install torch 2.6 or newer "
    "(PyPI's Linux wheels use the C++11 ABI from 2.6 on), or build against the system's torch")
endif()
set(torch_lib_dir ${probed_torch_dir}/lib)
foreach(lib torch_cpu c10)
  if(NOT EXISTS ${torch_lib_dir}/lib${lib}.so)
    message(FATAL_ERROR "torch ${probed_torch_version} in ${probed_torch_dir} has no lib/lib${lib}.so: "
      "is it a complete torch package?")
  endif()
  add_library(counterpoint_torch_${lib} SHARED IMPORTED)
  set_target_properties(counterpoint_torch_${lib} PROPERTIES IMPORTED_LOCATION ${torch_lib_dir}/lib${lib}.so)
endforeach()
add_library(counterpoint_torch INTERFACE IMPORTED)
target_include_directories(counterpoint_torch SYSTEM INTERFACE
  ${probed_torch_dir}/include ${probed_torch_dir}/include/torch/csrc/api/include)
target_compile_definitions(counterpoint_torch INTERFACE _GLIBCXX_USE_CXX11_ABI=1)
target_link_libraries(counterpoint_torch INTERFACE counterpoint_torch_torch_cpu counterpoint_torch_c10)
set(TORCH_LIBRARIES counterpoint_torch)
set(COUNTERPOINT_TORCH_PACKAGE_DIR ${probed_torch_dir})
set(Torch_VERSION ${probed_torch_version})
message(STATUS "counterpoint: linking torch ${probed_torch_version} of ${Python3_EXECUTABLE} (${probed_torch_dir})")
