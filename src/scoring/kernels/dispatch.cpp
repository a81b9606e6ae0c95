// Which kernel table runs: the best the CPU supports, chosen once at first use, or the one
// set_kernel_isa chose.
#include <atomic>
#include <string>

#include "counterpoint/core/errors.h"
#include "kernels.h"

namespace counterpoint::scoring {
namespace {

bool cpu_runs(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::kPortable: return true;
    case KernelIsa::kAvx2:
      if (kernels::avx2_kernels() == nullptr) return false;
#if defined(__GNUC__) || defined(__clang__)
      __builtin_cpu_init();
      // libgcc's avx2 check includes the OS saving the YMM registers (XCR0).
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
#else
      return false;
#endif
  }
  return false;
}

std::atomic<KernelIsa>& selected_isa() {
  static std::atomic<KernelIsa> isa{cpu_runs(KernelIsa::kAvx2) ? KernelIsa::kAvx2 : KernelIsa::kPortable};
  return isa;
}

}  // namespace

const kernels::Kernels& kernels::selected() {
  if (selected_isa().load(std::memory_order_relaxed) == KernelIsa::kAvx2) return *avx2_kernels();
  return portable_kernels();
}

KernelIsa kernel_isa() { return selected_isa().load(std::memory_order_relaxed); }

bool kernel_isa_available(KernelIsa isa) { return cpu_runs(isa); }

void set_kernel_isa(KernelIsa isa) {
  if (!cpu_runs(isa)) {
    throw InvalidArgument("set_kernel_isa: this CPU or build cannot run the " + to_string(isa) + " kernels");
  }
  selected_isa().store(isa, std::memory_order_relaxed);
}

std::string to_string(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::kPortable: return "portable";
    case KernelIsa::kAvx2: return "avx2";
  }
  throw InvalidArgument("to_string: unknown KernelIsa value " + std::to_string(static_cast<int>(isa)));
}

}  // namespace counterpoint::scoring
