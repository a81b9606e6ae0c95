// counterpoint/scoring/pooled.h: stage-2 scores on pooled (one vector per text) embeddings.
// Owns cosine similarity and the sparsity of embedding differences (Hoyer, l2/l1, kappa4)
// used by SparseCL: F(q, p) = cos(E(q), E(p)) + alpha * sparsity(Es(q) - Es(p)).
// One-to-many kernels score one query against K candidate rows without materialising the
// K x d difference matrix; the float16 path reads candidate rows stored as IEEE half.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "counterpoint/core/matrix.h"

namespace counterpoint::scoring {

// Hurley & Rickard sparsity measures; all are scale invariant, in [0, 1], higher = sparser.
enum class Sparsity { kHoyer, kL2L1, kKappa4 };

// "hoyer", "l2l1", "kappa4"; anything else throws InvalidArgument listing the accepted names.
Sparsity parse_sparsity(const std::string& name);
std::string to_string(Sparsity function);

struct SparsityOptions {
  Sparsity function = Sparsity::kHoyer;
  // SparseCL's reference code gives (near-)identical pairs the sparsity `guard_value`, so a
  // query never retrieves itself or an exact duplicate. Without the guard a zero difference
  // is maximally dense (see the scalar functions below) but still scores close to the top
  // once the cosine term is added.
  bool identical_guard = true;
  float guard_threshold = 1e-3f;  // |x|_2 below this -> guard_value
  float guard_value = -1e9f;
};

// Scalar measures of one difference vector x of width d. Norms are clamped as in the
// reference code, |x|_1 >= sqrt(d) * 1e-6 and |x|_2 >= 1e-6, so nothing divides by zero; the
// clamp is also the measure's own near-identical guard: a difference below those floors (equal
// texts up to ~1e-6, or inputs scaled down, q * 1e-8 against c * 1e-8) scores as the zero vector.
// No identical guard is applied here. Values for the zero vector:
//   hoyer = 0, l2_l1 = 1 / sqrt(d), kappa4 = 0.
// Hoyer(x) = (sqrt(d) - |x|_1 / |x|_2) / (sqrt(d) - 1) needs d >= 2; d == 1 throws InvalidArgument.
float hoyer(const float* x, std::size_t d);
// l2/l1 = |x|_2 / |x|_1.
float l2_l1(const float* x, std::size_t d);
// kappa4 = |x|_4^4 / |x|_2^4.
float kappa4(const float* x, std::size_t d);
// The function chosen by `options`, with the identical guard applied when enabled.
float sparsity(const float* x, std::size_t d, const SparsityOptions& options);

// One query row against K candidate rows; `out` receives K floats.
// True cosine (inputs need not be normalised); a zero-norm row gives cosine 0.
// Both throw InvalidArgument for a query that is not one row, a width mismatch, or
// NaN/Inf in either input.
void cosine_scores(MatrixView query, MatrixView candidates, float* out);
// sparsity(query - candidate_i) for each candidate.
void sparsity_scores(MatrixView query, MatrixView candidates, const SparsityOptions& options,
                     float* out);

// Many-to-many: result(i, j) scores query row i against candidate row j (Q x C).
Matrix cosine_matrix(MatrixView queries, MatrixView candidates);
Matrix sparsity_matrix(MatrixView queries, MatrixView candidates, const SparsityOptions& options);

// The three parts of the SparseCL score for K candidates: final = cosine + alpha * sparsity.
struct ScoreComponents {
  std::vector<float> cosine;
  std::vector<float> sparsity;
  std::vector<float> final;
};

// Dense (E) and sparse-aware (Es) embeddings of one query and K candidates; the two candidate
// matrices must have the same row count (their widths may differ). alpha must be finite.
ScoreComponents combined_scores(MatrixView query_dense, MatrixView candidates_dense,
                                MatrixView query_sparse, MatrixView candidates_sparse, float alpha,
                                const SparsityOptions& options);

// ---- float16 storage ------------------------------------------------------------------
// IEEE 754 binary16 conversion, round to nearest even; overflow gives +/-Inf, NaN stays NaN.
std::uint16_t float_to_half(float value);
float half_to_float(std::uint16_t bits);
// Converts a whole matrix to n * d half values (row-major), e.g. for an index that stores Es.
std::vector<std::uint16_t> to_half(MatrixView m);
// Decodes `count` consecutive half values into floats (vectorised; same values as half_to_float).
void half_rows_to_float(const std::uint16_t* values, std::size_t count, float* out);

// sparsity(query - row_i) for n candidate rows of width d stored as half. A row whose decoded
// values are not finite throws InvalidArgument naming the row.
void sparsity_scores_f16(MatrixView query, const std::uint16_t* rows, std::size_t n, std::size_t d,
                         const SparsityOptions& options, float* out);

// ---- kernel selection -----------------------------------------------------------------
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
