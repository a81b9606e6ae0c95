// Which kernel table runs: the best the CPU supports, chosen once at first use, or the one
// set_kernel_isa chose.
#include <atomic>
#include <string>

#include "counterpoint/core/errors.h"
#include "kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace counterpoint::scoring {
namespace {

#if defined(__x86_64__) || defined(__i386__)
// Reads CPUID directly: clang's __builtin_cpu_supports knows no "f16c", and the check must
// also ask whether the OS saves the YMM registers (OSXSAVE, then XCR0 bits 1 and 2).
bool cpu_has_avx2_fma_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  const bool fma = (ecx & (1u << 12)) != 0;
  const bool osxsave = (ecx & (1u << 27)) != 0;
  const bool avx = (ecx & (1u << 28)) != 0;
  const bool f16c = (ecx & (1u << 29)) != 0;
  if (!(fma && osxsave && avx && f16c)) return false;
  unsigned xcr0_low = 0, xcr0_high = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  if ((xcr0_low & 0x6u) != 0x6u) return false;
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  return (ebx & (1u << 5)) != 0;
}
#else
bool cpu_has_avx2_fma_f16c() { return false; }
#endif

bool cpu_runs(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::kPortable: return true;
    case KernelIsa::kAvx2:
      return kernels::avx2_kernels() != nullptr && cpu_has_avx2_fma_f16c();
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
