#include "counterpoint/core/progress.h"

#include "counterpoint/core/errors.h"

namespace counterpoint {

void report_progress(const ProgressCallback& cb, std::size_t done, std::size_t total,
                     const char* operation) {
  if (cb && !cb(done, total)) {
    throw Cancelled(std::string(operation) + " cancelled after " + std::to_string(done) + " of " +
                    std::to_string(total));
  }
}

}  // namespace counterpoint
