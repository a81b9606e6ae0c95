// Entry point of counterpoint._core.
#include <pybind11/pybind11.h>
PYBIND11_MODULE(_core, m) {}
