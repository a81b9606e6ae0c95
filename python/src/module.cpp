// Entry point of counterpoint._core: the exception mapping and the module's parts.
#include "bindings.h"

#include "counterpoint/core/errors.h"
#include "counterpoint/core/version.h"

namespace counterpoint::python {

void register_errors(py::module_& m) {
  // CorruptFile is a ValueError to Python callers (the content is wrong, not the OS).
  static py::exception<CorruptFile> corrupt_file(m, "CorruptFileError", PyExc_ValueError);
  corrupt_file.doc() =
      "A file exists but its content is damaged, truncated, of another version or does not "
      "match its manifest/checksum. Subclass of ValueError.";
  py::register_exception_translator([](std::exception_ptr pointer) {
    if (!pointer) return;
    try {
      std::rethrow_exception(pointer);
    } catch (const Cancelled& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const CorruptFile& e) {
      corrupt_file(e.what());
    } catch (const FileNotFound& e) {
      PyErr_SetString(PyExc_FileNotFoundError, e.what());
    } catch (const InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const IoError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace counterpoint::python

PYBIND11_MODULE(_core, m) {
  namespace cpp = counterpoint::python;
  m.doc() = "counterpoint._core: the compiled part of counterpoint (use the counterpoint package).";
  m.attr("__version__") = counterpoint::version();
  cpp::register_errors(m);
  cpp::register_kernels(m);
  cpp::register_encoder(m);
  cpp::register_index(m);
  cpp::register_data(m);
  cpp::register_training(m);
  cpp::register_app(m);
}
