// counterpoint/core/threads.h: the one rule for a thread count a caller asks for (encoders,
// trainers; the CLI's --threads and Python's threads= pass through it).
#pragma once

namespace counterpoint {

// Above this a request is refused: one process gains nothing from more threads than cores, and
// 10,000 once grew past 16,000 threads and 2 GB without a result.
inline constexpr int kMaxThreads = 256;

// 0 = all hardware threads (at least 1); 1..kMaxThreads as given; anything else throws
// InvalidArgument naming `what`, the value and the allowed range.
int resolve_threads(int requested, const char* what);

}  // namespace counterpoint
