// counterpoint/core/threads.h: the one rule for a thread count a caller asks for (encoders,
// trainers; the CLI's --threads and Python's threads= pass through it).
#pragma once

#include <cstdint>

namespace counterpoint {

// Above this a request is refused: one process gains nothing from more threads than cores, and
// 10,000 once grew past 16,000 threads and 2 GB without a result.
inline constexpr int kMaxThreads = 256;

// Address space each compute thread takes (OpenBLAS reserves a 128 MiB buffer per thread, the
// allocator an arena of up to 128 MiB), and what the process needs besides (libraries, a model,
// data). Under an address-space limit (ulimit -v) more threads than fit made OpenBLAS retry its
// allocations forever: `--threads 64` under 8 GiB printed std::bad_alloc and never exited.
inline constexpr std::uint64_t kAddressSpacePerThread = std::uint64_t(256) << 20;
inline constexpr std::uint64_t kAddressSpaceBase = std::uint64_t(2) << 30;

// The most threads an address-space limit of `bytes` allows (at least 1; kMaxThreads without one).
int threads_within(std::uint64_t address_space_bytes);

// 0 = all hardware threads (at least 1), as many as this process's address-space limit allows;
// 1..kMaxThreads as given; anything else, or more than the limit allows, throws InvalidArgument
// naming `what`, the value and the allowed range.
int resolve_threads(int requested, const char* what);

}  // namespace counterpoint
