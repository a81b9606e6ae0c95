#include "counterpoint/core/threads.h"

#include <algorithm>
#include <string>
#include <thread>

#include "counterpoint/core/errors.h"

namespace counterpoint {

int resolve_threads(int requested, const char* what) {
  if (requested < 0 || requested > kMaxThreads) {
    throw InvalidArgument(std::string(what) + " must be between 0 (all cores) and " + std::to_string(kMaxThreads) +
                          ", got " + std::to_string(requested));
  }
  if (requested > 0) return requested;
  return std::max(1, int(std::thread::hardware_concurrency()));
}

}  // namespace counterpoint
