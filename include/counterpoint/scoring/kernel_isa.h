// counterpoint/scoring/kernel_isa.h: which instruction set the one-to-many kernels run (portable or
// AVX2 + FMA + F16C), chosen once from the CPU, switchable for tests and timing.
#pragma once

#include <string>

namespace counterpoint::scoring {

// The one-to-many kernels (cosine_scores, sparsity_scores, sparsity_scores_f16 and what
// builds on them) and half_rows_to_float run either portable code or AVX2 + FMA + F16C code,
// chosen once from the CPU at first use. Results of the two agree to float rounding (the
// AVX2 path sums in a different order and fuses multiply-adds), not bit for bit. The scalar
// functions (hoyer, l2_l1, kappa4, sparsity) always use the portable code.
enum class KernelIsa { kPortable, kAvx2 };
KernelIsa kernel_isa();
bool kernel_isa_available(KernelIsa isa);
// Switches every later kernel call in the process to `isa`, e.g. to test or time the portable
// fallback on a CPU that has AVX2; throws InvalidArgument if this CPU or build cannot run it.
// Safe to call while other threads score (each call reads the choice once).
void set_kernel_isa(KernelIsa isa);
std::string to_string(KernelIsa isa);

}  // namespace counterpoint::scoring
