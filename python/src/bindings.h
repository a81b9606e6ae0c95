// The conversions every part of counterpoint._core shares: numpy arrays in (zero-copy for
// C-contiguous float32) and out (owning their buffers), text lists, paths, and the bridge that
// turns the library's progress callback into a tqdm bar, a user callback and Ctrl-C.
#pragma once

#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "counterpoint/app/settings.h"
#include "counterpoint/core/matrix.h"
#include "counterpoint/core/progress.h"

namespace counterpoint::python {

namespace py = pybind11;

using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;

// A float32 C-contiguous view of `object`: no copy when it already is one, one conversion
// otherwise. Non-numeric dtypes raise TypeError; `ndim` other than the accepted ones raises
// ValueError naming `name` and `expected_shape`.
FloatArray float_array(py::handle object, const char* name, const char* expected_shape,
                       int min_ndim, int max_ndim);

// The candidates' Es rows for one query's stage 2: (m, d), float16 kept as half bits, anything else
// as float32, C-contiguous. ValueError says which side is wrong: a row count other than the m
// candidates, or rows of another width than sparse_query's d (both must come from the same Es).
py::array sparse_candidate_rows(py::handle candidates, std::size_t m, std::size_t d);

// A view of a 2-D float array (1-D arrays become one row).
MatrixView as_view(const FloatArray& array);

// Arrays that own the moved-in storage through a capsule (no copy).
py::array_t<float> to_numpy(Matrix&& matrix);
py::array_t<float> to_numpy(std::vector<float>&& values);

// The name of `object`'s type, as a TypeError says what it got.
std::string type_name(py::handle object);

// A list of str; a single str (a common slip) or other element types raise TypeError.
std::vector<std::string> text_list(py::handle object, const char* name);
// A str as UTF-8; ValueError naming `what` for one that has no UTF-8 form (a lone surrogate).
std::string text_of(py::handle item, const std::string& what);
// None -> nullopt, a str -> text_of; TypeError otherwise. For optional text arguments (prefixes).
std::optional<std::string> optional_text(py::handle object, const char* name);

// What a path argument, or one that names a model or its folder, must be (said by a TypeError).
inline constexpr const char* kPathExpected = "a path (str, bytes or os.PathLike)";
inline constexpr const char* kModelExpected = "a model name or path (str, bytes or os.PathLike)";

// The one conversion of every path argument (and of a model's name-or-path): a str, bytes or
// os.PathLike, as the file system takes it (os.fsencode's bytes: a bytes path is used as given).
// TypeError naming `name` for anything else ("`name` must be `expected`, got <type>"); ValueError
// naming it for a path holding a NUL, which the system would silently cut there.
std::string path_argument(py::handle object, const std::string& name,
                          const char* expected = kPathExpected);
// None -> nullopt, anything else -> path_argument.
std::optional<std::string> optional_path(py::handle object, const std::string& name,
                                         const char* expected = kPathExpected);
// A list of paths, each through path_argument (named name[i]); a single path is refused as a slip.
std::vector<std::string> path_list(py::handle object, const std::string& name);

// Keyword arguments as the search settings table takes them (app::search_options_from), in the
// order given: True/False, int, float (numpy scalars by what they convert to) or str; None leaves
// a setting at its default. TypeError naming the keyword for anything else.
app::GivenSettings given_settings(const py::dict& keywords);

// Drives a long C++ call's progress: when `progress` is True a tqdm bar on a terminal or in a
// notebook, else (a log) a line "description: done/total" every kProgressLogInterval; a callable
// progress(done, total) -> bool|None (False cancels), and Ctrl-C in every case. The callback
// re-acquires the GIL, so the C++ call itself runs with the GIL released. An exception raised
// by the callable or by a signal handler is kept and re-raised by rethrow_if_failed().
class ProgressBridge {
 public:
  ProgressBridge(py::object progress, const char* description);
  ~ProgressBridge();
  ProgressBridge(const ProgressBridge&) = delete;
  ProgressBridge& operator=(const ProgressBridge&) = delete;

  const ProgressCallback& callback() const { return callback_; }
  // Whether Ctrl-C (or another signal whose handler raised) arrived: the exception is kept for
  // rethrow_if_failed(). Called between progress reports, through the InterruptScope run_released installs.
  bool interrupted();
  // Ends the bar now (the destructor does it otherwise).
  void close();
  // Raises the kept Python exception, if any (call with the GIL held).
  void rethrow_if_failed();

 private:
  bool report(std::size_t done, std::size_t total);

  void show_line(std::size_t done, std::size_t total);

  std::string description_;
  bool wanted_ = false;     // progress=True
  bool log_lines_ = false;  // stderr is a log, not a terminal or a notebook
  std::chrono::steady_clock::time_point printed_at_{};
  bool printed_ = false;
  py::object bar_;  // made at the first report, when the total is known
  py::object user_;
  std::size_t shown_ = 0;
  std::unique_ptr<py::error_already_set> error_;
  ProgressCallback callback_;
};

// Runs `work` with the GIL released, Ctrl-C looked at by the library's inner loops as well as at
// each progress report; a Cancelled raised because the bridge's callback failed or a signal
// arrived becomes the Python exception that caused it (KeyboardInterrupt for Ctrl-C).
template <typename Work>
auto run_released(ProgressBridge& bridge, Work&& work) -> decltype(work()) {
  try {
    const InterruptScope interrupts([&bridge] { return bridge.interrupted(); });
    py::gil_scoped_release release;
    return work();
  } catch (const std::exception&) {
    bridge.rethrow_if_failed();
    throw;
  }
}

// The GIL released around a library call that encodes texts without a progress bridge (a search's
// queries, explain, clean_corpus), with Ctrl-C looked at before each encoder pass as run_released
// does: the Cancelled it raises reaches Python as KeyboardInterrupt (register_errors). Declare it
// where a py::gil_scoped_release would stand.
class ReleasedInterruptibly {
 public:
  ReleasedInterruptibly();

 private:
  InterruptScope interrupts_;
  py::gil_scoped_release release_;
};

void register_errors(py::module_& m);
void register_kernels(py::module_& m);
void register_encoder(py::module_& m);
void register_index(py::module_& m);
void register_data(py::module_& m);
void register_training(py::module_& m);
void register_app(py::module_& m);

}  // namespace counterpoint::python
