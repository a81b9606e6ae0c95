#include "counterpoint/core/threads.h"

#include <sys/resource.h>

#include <algorithm>
#include <string>
#include <thread>

#include "counterpoint/core/errors.h"

namespace counterpoint {

int threads_within(std::uint64_t address_space_bytes) {
  if (address_space_bytes <= kAddressSpaceBase + kAddressSpacePerThread) return 1;
  return int(std::min<std::uint64_t>(kMaxThreads, (address_space_bytes - kAddressSpaceBase) / kAddressSpacePerThread));
}

int resolve_threads(int requested, const char* what) {
  if (requested < 0 || requested > kMaxThreads) {
    throw InvalidArgument(std::string(what) + " must be between 0 (all cores) and " + std::to_string(kMaxThreads) +
                          ", got " + std::to_string(requested));
  }
  struct rlimit limit {};
  const bool limited = ::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY;
  const int allowed = limited ? threads_within(limit.rlim_cur) : kMaxThreads;
  if (requested == 0) return std::min(allowed, std::max(1, int(std::thread::hardware_concurrency())));
  if (requested > allowed) {
    throw InvalidArgument(std::string(what) + " " + std::to_string(requested) + " needs about " +
                          std::to_string((kAddressSpaceBase + requested * kAddressSpacePerThread) >> 20) +
                          " MiB of address space, above this process's limit of " +
                          std::to_string(std::uint64_t(limit.rlim_cur) >> 20) + " MiB (ulimit -v): use at most " +
                          std::to_string(allowed));
  }
  return requested;
}

}  // namespace counterpoint
