// counterpoint/scoring/sparsity.h: the sparsity of embedding differences (Hoyer, l2/l1, kappa4), the
// stage-2 term of SparseCL: F(q, p) = cos(E(q), E(p)) + alpha * sparsity(Es(q) - Es(p)). The
// one Sparsity enum of the library (the training losses use it too) and its one parser; scalar
// measures, and one-to-many kernels that never materialise the K x d difference matrix.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

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
  // The magnitude gate tau: the measure is multiplied by min(1, |x|_2 / tau). Every measure is
  // scale free, so two near-identical texts (a paraphrase whose Es differs from the query's in
  // noise only) can score as sparse as a real contradiction; the gate lets a difference count
  // fully only once it is at least tau long. Unset or 0: no gate (the plain measure). A search
  // resolves an unset scale from Es's manifest (retrieval::choose_sparsity_scale), where training
  // records the tau tuned on dev beside alpha. When set it must be finite and >= 0.
  std::optional<float> scale;
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

// One query row against K candidate rows: sparsity(query - candidate_i) into `out` (K floats).
// InvalidArgument for a query that is not one row, a width mismatch, or NaN/Inf in either input.
void sparsity_scores(MatrixView query, MatrixView candidates, const SparsityOptions& options,
                     float* out);

// Many-to-many: result(i, j) scores query row i against candidate row j (Q x C).
Matrix sparsity_matrix(MatrixView queries, MatrixView candidates, const SparsityOptions& options);

// sparsity(query - row_i) for n candidate rows of width d stored as IEEE half (float16.h),
// widened in registers, never copied to float. A row whose decoded values are not finite
// throws InvalidArgument naming the row.
void sparsity_scores_f16(MatrixView query, const std::uint16_t* rows, std::size_t n, std::size_t d,
                         const SparsityOptions& options, float* out);

// The gather-and-score path of stage 2: sparsity(query - table[rows[i]]) for n rows listed by
// index in a row-major table of query.cols columns and `table_rows` rows (an index's Es
// storage), read in place: no gathered copy, and float16 rows widened in registers. A listed row
// outside the table throws InvalidArgument before any is read; a non-finite row is named by its
// table index.
void sparsity_scores_gather(MatrixView query, const float* table, std::size_t table_rows, const std::int64_t* rows,
                            std::size_t n, const SparsityOptions& options, float* out);
void sparsity_scores_gather_f16(MatrixView query, const std::uint16_t* table, std::size_t table_rows,
                                const std::int64_t* rows, std::size_t n, const SparsityOptions& options, float* out);

// The SparseCL final score, out[i] = stage1[i] + direction * alpha * sparsity[i], whatever stage 1
// ranked by (cosine, BM25 or a fusion): the one implementation the retriever, rerank and
// combined_scores use. direction is +1 (what contradicts or attacks a query: sparse differences)
// or -1 (what supports it). A guarded pair (sparsity == options.guard_value with the guard on)
// scores stage1 + |alpha| * guard_value whatever the direction and the sign of alpha, so a query's
// own text sinks. alpha must be finite and direction +-1 (InvalidArgument). `out` may alias `stage1`.
void final_scores(const float* stage1, const float* sparsity, std::size_t n, float alpha, float direction,
                  const SparsityOptions& options, float* out);

}  // namespace counterpoint::scoring
