// Entry point of counterpoint._core: the exception mapping and the module's parts.
#include <cstring>

#include "bindings.h"

#include "counterpoint/core/errors.h"
#include "counterpoint/core/version.h"

namespace counterpoint::python {

namespace {

// The library's message as the exception's text. A message names the paths it concerns as the
// file system gave them, which need not be UTF-8 (a bytes path): those bytes show escaped
// ("\xff") rather than the exception turning into a UnicodeDecodeError.
void set_error(PyObject* type, const char* message) {
  PyObject* text = PyUnicode_DecodeUTF8(message, py::ssize_t(std::strlen(message)), "backslashreplace");
  if (text == nullptr) return;  // out of memory: that error stands
  PyErr_SetObject(type, text);
  Py_DECREF(text);
}

}  // namespace

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
      set_error(PyExc_KeyboardInterrupt, e.what());
    } catch (const CorruptFile& e) {
      set_error(corrupt_file.ptr(), e.what());
    } catch (const FileNotFound& e) {
      set_error(PyExc_FileNotFoundError, e.what());
    } catch (const InvalidArgument& e) {
      set_error(PyExc_ValueError, e.what());
    } catch (const IoError& e) {
      set_error(PyExc_OSError, e.what());
    } catch (const Error& e) {
      set_error(PyExc_RuntimeError, e.what());
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

// The path conversion of the compiled functions for the package's Python ones (models.install).
void register_paths(py::module_& m) {
  m.def(
      "_path_argument",
      [](py::handle path, const std::string& name) {
        const std::string bytes = path_argument(path, name);
        PyObject* text = PyUnicode_DecodeFSDefaultAndSize(bytes.data(), py::ssize_t(bytes.size()));
        if (text == nullptr) throw py::error_already_set();
        return py::reinterpret_steal<py::str>(text);
      },
      py::arg("path"), py::arg("name"),
      "`path` (str, bytes or os.PathLike) as a str, as every path argument of the module is read: TypeError or "
      "ValueError (a NUL) naming `name`.");
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
  cpp::register_paths(m);
}
