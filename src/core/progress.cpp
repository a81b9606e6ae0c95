#include "counterpoint/core/progress.h"

#include <utility>

#include "counterpoint/core/errors.h"

namespace counterpoint {

void report_progress(const ProgressCallback& cb, std::size_t done, std::size_t total,
                     const char* operation) {
  if (cb && !cb(done, total)) {
    throw Cancelled(std::string(operation) + " cancelled after " + std::to_string(done) + " of " +
                    std::to_string(total));
  }
}

namespace {

thread_local InterruptCheck installed_interrupt_check;

}  // namespace

InterruptScope::InterruptScope(InterruptCheck interrupted)
    : previous_(std::exchange(installed_interrupt_check, std::move(interrupted))) {}

InterruptScope::~InterruptScope() { installed_interrupt_check = std::move(previous_); }

void check_interrupt(const char* operation) {
  if (installed_interrupt_check && installed_interrupt_check()) {
    throw Cancelled(std::string(operation) + " interrupted");
  }
}

}  // namespace counterpoint
