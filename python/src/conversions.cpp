// Array, text-list, path and progress conversions shared by the bindings (see bindings.h).
#include <string>
#include <utility>

#include "bindings.h"

namespace counterpoint::python {

namespace {

std::string shape_string(const py::array& array) {
  std::string text = "(";
  for (py::ssize_t i = 0; i < array.ndim(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(array.shape(i));
  }
  if (array.ndim() == 1) text += ",";
  return text + ")";
}

}  // namespace

std::string type_name(py::handle object) { return py::str(py::type::of(object).attr("__name__")); }

FloatArray float_array(py::handle object, const char* name, const char* expected_shape,
                       int min_ndim, int max_ndim) {
  py::array array;
  if (py::isinstance<py::array>(object)) {
    array = py::reinterpret_borrow<py::array>(object);
  } else {
    try {
      array = py::module_::import("numpy").attr("asarray")(object);
    } catch (py::error_already_set&) {
      throw py::type_error(std::string(name) + " must be a float32 array of shape " + expected_shape + ", got " +
                           type_name(object));
    }
  }
  const char kind = array.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b') {
    throw py::type_error(std::string(name) + " must be a numeric (float32) array of shape " +
                         expected_shape + ", got dtype " + std::string(py::str(array.dtype())));
  }
  if (array.ndim() < min_ndim || array.ndim() > max_ndim) {
    throw py::value_error(std::string(name) + " must have shape " + expected_shape +
                          " (float32), got shape " + shape_string(array));
  }
  return FloatArray::ensure(array);
}

py::array sparse_candidate_rows(py::handle object, std::size_t m, std::size_t d) {
  py::array candidates = py::array::ensure(object, py::array::c_style);
  if (!candidates) throw py::type_error("sparse_candidates must be a numeric array (m, d)");
  if (!candidates.dtype().is(py::dtype("float16"))) {
    candidates = float_array(object, "sparse_candidates", "(m, d)", 2, 2);
  }
  if (candidates.ndim() != 2) {
    throw py::value_error("sparse_candidates must have shape (m, d): one Es row per candidate, got shape " +
                          shape_string(candidates));
  }
  if (std::size_t(candidates.shape(0)) != m) {
    throw py::value_error("sparse_candidates has " + std::to_string(candidates.shape(0)) + " rows for " +
                          std::to_string(m) + " candidates (one Es row per candidate)");
  }
  if (std::size_t(candidates.shape(1)) != d) {
    throw py::value_error("sparse_query has " + std::to_string(d) + " values but the sparse_candidates rows have " +
                          std::to_string(candidates.shape(1)) + ": Es(q) and the candidates' rows must come from "
                          "the same Es");
  }
  return candidates;
}

MatrixView as_view(const FloatArray& array) {
  if (array.ndim() == 1) return MatrixView(array.data(), 1, std::size_t(array.shape(0)));
  return MatrixView(array.data(), std::size_t(array.shape(0)), std::size_t(array.shape(1)));
}

py::array_t<float> to_numpy(Matrix&& matrix) {
  const auto rows = py::ssize_t(matrix.rows());
  const auto cols = py::ssize_t(matrix.cols());
  if (rows == 0 || cols == 0) return py::array_t<float>({rows, cols});
  auto* owned = new Matrix(std::move(matrix));
  py::capsule owner(owned, [](void* p) { delete static_cast<Matrix*>(p); });
  return py::array_t<float>({rows, cols}, {cols * py::ssize_t(sizeof(float)), py::ssize_t(sizeof(float))},
                            owned->data(), owner);
}

py::array_t<float> to_numpy(std::vector<float>&& values) {
  const auto n = py::ssize_t(values.size());
  if (n == 0) return py::array_t<float>(0);
  auto* owned = new std::vector<float>(std::move(values));
  py::capsule owner(owned, [](void* p) { delete static_cast<std::vector<float>*>(p); });
  return py::array_t<float>({n}, {py::ssize_t(sizeof(float))}, owned->data(), owner);
}

std::string text_of(py::handle item, const std::string& what) {
  Py_ssize_t size = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(item.ptr(), &size);
  if (utf8 == nullptr) {
    // A lone surrogate ("\ud800") has no UTF-8 form: a bad value, not a failed cast.
    py::error_already_set error;
    throw py::value_error(what + " cannot be encoded as UTF-8 (" + std::string(py::str(error.value())) + ")");
  }
  return std::string(utf8, std::size_t(size));
}

std::optional<std::string> optional_text(py::handle object, const char* name) {
  if (object.is_none()) return std::nullopt;
  if (!py::isinstance<py::str>(object)) {
    throw py::type_error(std::string(name) + " must be str or None, got " + type_name(object));
  }
  return text_of(object, name);
}

std::string path_argument(py::handle object, const std::string& name, const char* expected) {
  // os.fspath: str and bytes as they are, an os.PathLike's __fspath__(), TypeError otherwise.
  PyObject* fspath = PyOS_FSPath(object.ptr());
  if (fspath == nullptr) {
    PyErr_Clear();
    throw py::type_error(name + " must be " + expected + ", got " + type_name(object));
  }
  const py::object path = py::reinterpret_steal<py::object>(fspath);
  // os.fsencode: the bytes the file system sees (a str's undecodable bytes come back as they were).
  const py::bytes encoded = py::isinstance<py::bytes>(path)
                                ? py::reinterpret_borrow<py::bytes>(path)
                                : py::reinterpret_steal<py::bytes>(PyUnicode_EncodeFSDefault(path.ptr()));
  if (!encoded) {
    // A lone surrogate that no byte escapes to ("\ud800"): a bad value, not a failed cast.
    py::error_already_set error;
    throw py::value_error(name + " cannot be encoded as a file name (" + std::string(py::str(error.value())) + ")");
  }
  std::string bytes = encoded;
  if (bytes.find('\0') != std::string::npos) {
    // The system reads a file name up to its first NUL: "idx/good\0junk" would open idx/good.
    throw py::value_error(name + " must not contain a NUL character (a file name ends at one), got " +
                          std::string(py::repr(path)));
  }
  return bytes;
}

std::optional<std::string> optional_path(py::handle object, const std::string& name, const char* expected) {
  if (object.is_none()) return std::nullopt;
  return path_argument(object, name, expected);
}

std::vector<std::string> path_list(py::handle object, const std::string& name) {
  if (py::isinstance<py::str>(object) || py::isinstance<py::bytes>(object) || py::hasattr(object, "__fspath__")) {
    throw py::type_error(name + " must be a list of paths, not a single path (wrap it: [path])");
  }
  if (!py::isinstance<py::iterable>(object)) {
    throw py::type_error(name + " must be a list of paths, got " + type_name(object));
  }
  std::vector<std::string> paths;
  for (py::handle item : py::reinterpret_borrow<py::iterable>(object)) {
    paths.push_back(path_argument(item, name + "[" + std::to_string(paths.size()) + "]"));
  }
  return paths;
}

std::vector<std::string> text_list(py::handle object, const char* name) {
  if (py::isinstance<py::str>(object)) {
    throw py::type_error(std::string(name) + " must be a list of str, not a single str (wrap it: [text])");
  }
  if (!py::isinstance<py::iterable>(object)) {
    throw py::type_error(std::string(name) + " must be a list of str, got " + type_name(object));
  }
  std::vector<std::string> texts;
  if (py::hasattr(object, "__len__")) texts.reserve(py::len(object));
  for (py::handle item : py::reinterpret_borrow<py::iterable>(object)) {
    if (!py::isinstance<py::str>(item)) {
      throw py::type_error(std::string(name) + "[" + std::to_string(texts.size()) + "] must be str, got " +
                           type_name(item));
    }
    texts.push_back(text_of(item, std::string(name) + "[" + std::to_string(texts.size()) + "]"));
  }
  return texts;
}

ProgressBridge::ProgressBridge(py::object progress, const char* description) {
  if (PyCallable_Check(progress.ptr())) {
    user_ = std::move(progress);
  } else if (!progress.is_none() && progress.cast<bool>()) {
    wanted_ = true;
    description_ = description;
    const py::module_ sys = py::module_::import("sys");
    const py::object stderr_stream = sys.attr("stderr");
    const bool terminal = !stderr_stream.is_none() && py::hasattr(stderr_stream, "isatty") &&
                          py::bool_(stderr_stream.attr("isatty")());
    const bool notebook = sys.attr("modules").contains("ipykernel");
    log_lines_ = !terminal && !notebook;
  }
  callback_ = [this](std::size_t done, std::size_t total) { return report(done, total); };
}

ProgressBridge::~ProgressBridge() { close(); }

void ProgressBridge::close() {
  if (!bar_) return;
  try {
    bar_.attr("close")();
  } catch (py::error_already_set&) {
  }
  bar_ = py::object();
}

ReleasedInterruptibly::ReleasedInterruptibly()
    : interrupts_([] {
        py::gil_scoped_acquire gil;
        return PyErr_CheckSignals() != 0;  // KeyboardInterrupt is raised in Python's own state
      }) {}

bool ProgressBridge::interrupted() {
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() == 0) return false;
  error_ = std::make_unique<py::error_already_set>();
  return true;
}

bool ProgressBridge::report(std::size_t done, std::size_t total) {
  if (interrupted()) return false;
  py::gil_scoped_acquire gil;
  try {
    if (wanted_ && log_lines_) {
      show_line(done, total);
    } else if (wanted_) {
      if (!bar_) {
        py::dict kwargs;
        kwargs["desc"] = description_;
        kwargs["total"] = total;
        bar_ = py::module_::import("tqdm").attr("tqdm")(**kwargs);
      }
      bar_.attr("total") = total;
      if (done > shown_) bar_.attr("update")(done - shown_);
      shown_ = done;
    }
    if (user_) {
      py::object answer = user_(done, total);
      if (!answer.is_none() && !answer.cast<bool>()) return false;
    }
    return true;
  } catch (py::error_already_set& e) {
    error_ = std::make_unique<py::error_already_set>(std::move(e));
    return false;
  } catch (const std::exception& e) {
    // e.g. a cast failure of the callable's answer: report it, and cancel.
    PyErr_SetString(PyExc_TypeError, e.what());
    error_ = std::make_unique<py::error_already_set>();
    return false;
  }
}

void ProgressBridge::show_line(std::size_t done, std::size_t total) {
  const auto now = std::chrono::steady_clock::now();
  if (done != total && printed_ && now - printed_at_ < kProgressLogInterval) return;
  const py::object stderr_stream = py::module_::import("sys").attr("stderr");
  if (stderr_stream.is_none()) return;
  stderr_stream.attr("write")(description_ + ": " + std::to_string(done) + "/" + std::to_string(total) + "\n");
  stderr_stream.attr("flush")();
  printed_at_ = now;
  printed_ = true;
}

void ProgressBridge::rethrow_if_failed() {
  if (!error_) return;
  std::unique_ptr<py::error_already_set> error = std::move(error_);
  throw std::move(*error);
}

namespace {

// A keyword argument as the settings table takes it: True/False, an int, a float or a str; None
// leaves the setting at its default (alpha=None: the recorded alpha).
std::optional<app::SettingValue> setting_value(const std::string& keyword, py::handle value) {
  if (value.is_none()) return std::nullopt;
  if (py::isinstance<py::bool_>(value)) return app::SettingValue(value.cast<bool>());
  if (py::isinstance<py::int_>(value)) return app::SettingValue(value.cast<std::int64_t>());
  if (py::isinstance<py::float_>(value)) return app::SettingValue(value.cast<double>());
  if (py::isinstance<py::str>(value)) return app::SettingValue(value.cast<std::string>());
  // numpy scalars and other numbers: by what they convert to, as Python's own int() and float() would.
  const auto number = py::reinterpret_borrow<py::object>(value);
  if (py::hasattr(number, "__index__")) return app::SettingValue(py::int_(number).cast<std::int64_t>());
  if (py::hasattr(number, "__float__")) return app::SettingValue(py::float_(number).cast<double>());
  throw py::type_error(keyword + " must be a bool, a number or a str, got " + type_name(value));
}

}  // namespace

// Keyword arguments, in the order given, for app::search_options_from.
app::GivenSettings given_settings(const py::dict& keywords) {
  app::GivenSettings given;
  for (const auto& [key, value] : keywords) {
    const std::string keyword = py::str(key);
    if (auto converted = setting_value(keyword, value)) given.emplace_back(keyword, std::move(*converted));
  }
  return given;
}

}  // namespace counterpoint::python
