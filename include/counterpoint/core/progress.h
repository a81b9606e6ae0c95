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

}  // namespace counterpoint
