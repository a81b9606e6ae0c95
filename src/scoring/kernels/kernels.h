// Internal to the scoring layer: the one-to-many kernels' contract. Each instruction set
// (portable Eigen code in portable.cpp, AVX2 + FMA + F16C in avx2.cpp) fills one Kernels table;
// dispatch.cpp picks the table the CPU runs. The public functions (sparsity.cpp, cosine.cpp,
// float16.cpp) validate their input and call through kernels(), so they never name an ISA.
#pragma once

#include <cstddef>
#include <cstdint>

#include "counterpoint/scoring/kernel_isa.h"
#include "counterpoint/scoring/sparsity.h"

namespace counterpoint::scoring::kernels {

// Both kernel sets sum each quantity in float accumulators (8 lanes portable, 4 x 8 in AVX2)
// and flush them into double every kBlock elements, so rounding error stays at float
// epsilon times kBlock / lanes rather than growing with the embedding width.
constexpr std::size_t kBlock = 256;

// Norms of the difference q - c.
struct DifferenceNorms {
  double l1 = 0.0;    // sum |x_i|
  double l2sq = 0.0;  // sum x_i^2
  double l4 = 0.0;    // sum x_i^4
};

struct DotAndNorm {
  double dot = 0.0;
  double norm_sq = 0.0;  // of the candidate
};

template <typename Element>
using NormsKernel = DifferenceNorms (*)(const float* q, const Element* c, std::size_t d);

// One instruction set's kernels. l1_l2 fills l1 and l2sq (Hoyer, l2/l1), l2_l4 fills l2sq and
// l4 (kappa4); the _f16 forms read candidate rows stored as IEEE half. inner_products scores n
// contiguous rows (out[i] = <q, row i>, summed in float as FAISS and BLAS do: stage 1's exact
// scan); finish_rows turns n rows' norms into their sparsity scores (finish.h's sparsity_from).
struct Kernels {
  NormsKernel<float> l1_l2, l2_l4;
  NormsKernel<std::uint16_t> l1_l2_f16, l2_l4_f16;
  DotAndNorm (*dot_and_norm)(const float* q, const float* c, std::size_t d);
  void (*decode_half_row)(const std::uint16_t* src, std::size_t n, float* dst);
  void (*inner_products)(const float* q, const float* rows, std::size_t n, std::size_t d, float* out);
  void (*finish_rows)(const DifferenceNorms* norms, std::size_t n, std::size_t d, const SparsityOptions& options,
                      float* out);
};

const Kernels& portable_kernels();
// The AVX2 table, or nullptr when this build has no AVX2 kernels (not an x86 GCC/Clang build).
const Kernels* avx2_kernels();
// The table of the ISA selected now (set_kernel_isa, else the best the CPU runs).
const Kernels& selected();

// All three norms at once, portable code (the scalar functions use it).
DifferenceNorms all_norms(const float* q, const float* c, std::size_t d);

}  // namespace counterpoint::scoring::kernels
