// counterpoint/core/progress.h: how long operations report progress and accept cancellation.
// A callback receives (done, total) and returns false to cancel; the operation then throws
// counterpoint::Cancelled. The Python module drives tqdm bars and Ctrl-C through it.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

namespace counterpoint {

using ProgressCallback = std::function<bool(std::size_t done, std::size_t total)>;

// Progress shown outside a terminal (a log file) is a line every kProgressLogInterval and the last
// one, never carriage-return frames piling into one line: the CLI and the Python module's
// progress=True both follow it.
inline constexpr std::chrono::seconds kProgressLogInterval{5};

// Calls `cb` if set and throws Cancelled (naming `operation`) when it returns false.
void report_progress(const ProgressCallback& cb, std::size_t done, std::size_t total,
                     const char* operation);

// Ctrl-C between progress reports. A report comes after each step a caller chose (hundreds of
// texts an Index.add step), too far apart for an interrupt to land in time; so the face that takes
// Ctrl-C (the Python module) installs a check on the thread that runs a call, for as long as it
// runs, and the library's inner loops call check_interrupt at units of bounded cost (the encoder:
// before each forward pass). The library runs a call's work on the calling thread, which is why a
// per-thread check covers it; with none installed (the CLI, whose Ctrl-C ends the process) it costs
// nothing.
using InterruptCheck = std::function<bool()>;  // true: stop now

// Installs `interrupted` for the calling thread until destroyed (the previous one is restored).
class InterruptScope {
 public:
  explicit InterruptScope(InterruptCheck interrupted);
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  InterruptCheck previous_;
};

// Throws Cancelled (naming `operation`) when the calling thread's installed check says stop.
void check_interrupt(const char* operation);

}  // namespace counterpoint
