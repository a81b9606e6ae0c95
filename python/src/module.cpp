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

// progress=True for the module's own Python loops (counterpoint.milvus's export): the bridge's one
// convention, a tqdm bar on a terminal or in a notebook, a line every few seconds in a log.
void register_progress(py::module_& m) {
  py::class_<ProgressBridge>(m, "ProgressLine",
                             "progress=True for a Python loop: update(done, total) shows it as the library's calls "
                             "do; close() ends a bar.")
      .def(py::init([](const std::string& description) {
             return std::make_unique<ProgressBridge>(py::bool_(true), description.c_str());
           }),
           py::arg("description"))
      .def("update",
           [](ProgressBridge& self, std::size_t done, std::size_t total) {
             if (!self.callback()(done, total)) self.rethrow_if_failed();
           },
           py::arg("done"), py::arg("total"))
      .def("close", [](ProgressBridge& self) { self.close(); });
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
  cpp::register_progress(m);
}
