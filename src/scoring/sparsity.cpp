#include "counterpoint/scoring/sparsity.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/spelling.h"
#include "kernels/finish.h"
#include "kernels/kernels.h"
#include "score_checks.h"

namespace counterpoint::scoring {
namespace {

using detail::require_finite_scores;
using detail::require_pair;
using detail::require_query_row;
using kernels::DifferenceNorms;
using kernels::NormsKernel;
using kernels::hoyer_from;
using kernels::kappa4_from;
using kernels::l2_l1_from;
using kernels::sparsity_from;

void require_hoyer_width(std::size_t d) {
  if (d < 2) {
    throw InvalidArgument("hoyer: the embedding width must be at least 2 (sqrt(d) - 1 is the "
                          "denominator), got " + std::to_string(d));
  }
}

void require_options(const SparsityOptions& options) {
  if (!std::isfinite(options.guard_threshold) || options.guard_threshold < 0.0f) {
    throw InvalidArgument("SparsityOptions: guard_threshold must be finite and >= 0, got " +
                          std::to_string(options.guard_threshold));
  }
  if (std::isnan(options.guard_value)) {
    throw InvalidArgument("SparsityOptions: guard_value is NaN");
  }
  if (options.scale && (!std::isfinite(*options.scale) || *options.scale < 0.0f)) {
    throw InvalidArgument("the sparsity scale (tau) must be finite and >= 0, got " + std::to_string(*options.scale));
  }
  if (options.function != Sparsity::kHoyer && options.function != Sparsity::kL2L1 &&
      options.function != Sparsity::kKappa4) {
    throw InvalidArgument("sparsity: unknown Sparsity value " + std::to_string(static_cast<int>(options.function)));
  }
}

// Rows whose norms are finished together (finish_rows works on a block in SIMD); 64 x 24 bytes
// stay in L1.
constexpr std::size_t kFinishBlock = 64;

// How many rows ahead of the one being scored are requested from memory. Candidates gathered
// from a table sit at addresses the hardware prefetcher cannot guess, so without the request
// every row of a table larger than the cache waits on its own misses (stage 2 over an ArguAna
// index spent ~6x as long on gathered rows as on the same rows contiguous).
constexpr std::size_t kPrefetchRows = 4;

// Candidate floats from which one query's rows are scored on all threads (1,000 x 384 Es rows:
// about 45 microseconds on one core, where waking the team costs a few).
constexpr std::size_t kParallelFloats = std::size_t(1) << 17;

template <typename Element>
inline void prefetch_row(const Element* row, std::size_t d) {
#if defined(__GNUC__) || defined(__clang__)
  const char* bytes = reinterpret_cast<const char*>(row);
  for (std::size_t at = 0; at < d * sizeof(Element); at += 64) __builtin_prefetch(bytes + at);
#else
  (void)row;
  (void)d;
#endif
}

// Scores one query row against n candidate rows of width d (float or half); row_at(i) points
// at candidate i, contiguous or gathered in place from a table.
template <typename Element, typename RowAt>
void sparsity_rows(const float* q, RowAt row_at, std::size_t n, std::size_t d, const SparsityOptions& options,
                   NormsKernel<Element> l1_l2, NormsKernel<Element> l2_l4, float* out) {
  const NormsKernel<Element> norms_of_row = options.function == Sparsity::kKappa4 ? l2_l4 : l1_l2;
  const auto finish = kernels::selected().finish_rows;
  const auto blocks = std::int64_t((n + kFinishBlock - 1) / kFinishBlock);
  // Blocks of rows are independent; inside another parallel region (a batch's queries) this one
  // stays on its thread.
#pragma omp parallel for schedule(static) if (n * d >= kParallelFloats)
  for (std::int64_t block = 0; block < blocks; ++block) {
    const std::size_t start = std::size_t(block) * kFinishBlock;
    const std::size_t count = std::min(kFinishBlock, n - start);
    DifferenceNorms norms[kFinishBlock];
    for (std::size_t i = 0; i < std::min(count, kPrefetchRows); ++i) prefetch_row(row_at(start + i), d);
    for (std::size_t i = 0; i < count; ++i) {
      if (i + kPrefetchRows < count) prefetch_row(row_at(start + i + kPrefetchRows), d);
      norms[i] = norms_of_row(q, row_at(start + i), d);
    }
    finish(norms, count, d, options, out + start);
  }
}

void require_scorable(MatrixView query, std::size_t d, const SparsityOptions& options, const char* function) {
  require_query_row(query, function);
  if (query.cols != d) {
    throw InvalidArgument(std::string(function) + ": query width " + std::to_string(query.cols) +
                          " does not match the stored row width " + std::to_string(d));
  }
  if (d == 0) throw InvalidArgument(std::string(function) + ": embeddings have width 0");
  require_options(options);
  if (options.function == Sparsity::kHoyer) require_hoyer_width(d);
}

// A listed row outside the table would read past it.
void require_rows_in_table(const std::int64_t* rows, std::size_t n, std::size_t table_rows, const void* table,
                           const char* function) {
  if (n > 0 && (rows == nullptr || table == nullptr)) {
    throw InvalidArgument(std::string(function) + ": the table or the row list is a null pointer");
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (rows[i] < 0 || std::uint64_t(rows[i]) >= table_rows) {
      throw InvalidArgument(std::string(function) + ": row " + std::to_string(rows[i]) + " (candidate " +
                            std::to_string(i) + ") is outside the table of " + std::to_string(table_rows) + " rows");
    }
  }
}

// Names the culprit of a non-finite score of half rows: the query, or the stored row (decoded).
template <typename RowAt>
void require_finite_half_scores(const float* out, std::size_t n, MatrixView query, RowAt row_at, std::size_t d,
                                const char* function, const char* row_name) {
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isfinite(out[i])) continue;
    require_finite(query, (std::string(function) + ": query").c_str());
    std::vector<float> decoded(d);
    kernels::selected().decode_half_row(row_at(i), d, decoded.data());
    require_finite(MatrixView(decoded.data(), 1, d),
                   (std::string(function) + ": stored " + row_name + " " + std::to_string(i)).c_str());
    throw InvalidArgument(std::string(function) + ": " + row_name + " " + std::to_string(i) + " overflows float");
  }
}

}  // namespace

// Any case ("Hoyer", "L2L1"), as every enum a user types.
Sparsity parse_sparsity(const std::string& typed) {
  const std::string name = ascii_lower(typed);
  if (name == "hoyer") return Sparsity::kHoyer;
  if (name == "l2l1") return Sparsity::kL2L1;
  if (name == "kappa4") return Sparsity::kKappa4;
  throw InvalidArgument("unknown sparsity function '" + typed + "' (expected one of: hoyer, l2l1, kappa4)" +
                        did_you_mean(typed, {"hoyer", "l2l1", "kappa4"}));
}

std::string to_string(Sparsity function) {
  switch (function) {
    case Sparsity::kHoyer: return "hoyer";
    case Sparsity::kL2L1: return "l2l1";
    case Sparsity::kKappa4: return "kappa4";
  }
  throw InvalidArgument("to_string: unknown Sparsity value " +
                        std::to_string(static_cast<int>(function)));
}

namespace {
// The scalar functions compare against a zero vector so they share the pairwise kernels.
DifferenceNorms norms_of(const float* x, std::size_t d, const char* function) {
  if (d == 0) throw InvalidArgument(std::string(function) + ": vector has width 0");
  std::vector<float> zero(d, 0.0f);
  const DifferenceNorms n = kernels::all_norms(x, zero.data(), d);
  if (!std::isfinite(n.l1) || !std::isfinite(n.l2sq) || !std::isfinite(n.l4)) {
    require_finite(MatrixView(x, 1, d), function);
    throw InvalidArgument(std::string(function) + ": values too large (|x|^4 overflows float)");
  }
  return n;
}
}  // namespace

float hoyer(const float* x, std::size_t d) {
  require_hoyer_width(d);
  return hoyer_from(norms_of(x, d, "hoyer"), d);
}

float l2_l1(const float* x, std::size_t d) { return l2_l1_from(norms_of(x, d, "l2_l1"), d); }

float kappa4(const float* x, std::size_t d) { return kappa4_from(norms_of(x, d, "kappa4")); }

float sparsity(const float* x, std::size_t d, const SparsityOptions& options) {
  require_options(options);
  if (options.function == Sparsity::kHoyer) require_hoyer_width(d);
  return sparsity_from(norms_of(x, d, "sparsity"), d, options);
}

void sparsity_scores(MatrixView query, MatrixView candidates, const SparsityOptions& options,
                     float* out) {
  require_query_row(query, "sparsity_scores");
  require_pair(query, candidates, "sparsity_scores");
  require_options(options);
  if (options.function == Sparsity::kHoyer) require_hoyer_width(query.cols);
  const kernels::Kernels& kernel = kernels::selected();
  const std::size_t d = query.cols;
  sparsity_rows(query.row(0), [&](std::size_t i) { return candidates.data + i * d; }, candidates.rows, d, options,
                kernel.l1_l2, kernel.l2_l4, out);
  require_finite_scores(out, candidates.rows, query, candidates, "sparsity_scores");
}

Matrix sparsity_matrix(MatrixView queries, MatrixView candidates, const SparsityOptions& options) {
  require_pair(queries, candidates, "sparsity_matrix");
  Matrix result(queries.rows, candidates.rows);
  for (std::size_t r = 0; r < queries.rows; ++r) {
    sparsity_scores(MatrixView(queries.row(r), 1, queries.cols), candidates, options,
                    result.row(r));
  }
  return result;
}

void sparsity_scores_f16(MatrixView query, const std::uint16_t* rows, std::size_t n, std::size_t d,
                         const SparsityOptions& options, float* out) {
  require_scorable(query, d, options, "sparsity_scores_f16");
  if (n > 0 && rows == nullptr) {
    throw InvalidArgument("sparsity_scores_f16: candidate rows pointer is null");
  }
  const kernels::Kernels& kernel = kernels::selected();
  const auto row_at = [&](std::size_t i) { return rows + i * d; };
  sparsity_rows(query.row(0), row_at, n, d, options, kernel.l1_l2_f16, kernel.l2_l4_f16, out);
  require_finite_half_scores(out, n, query, row_at, d, "sparsity_scores_f16", "candidate row");
}

void sparsity_scores_gather(MatrixView query, const float* table, std::size_t table_rows, const std::int64_t* rows,
                            std::size_t n, const SparsityOptions& options, float* out) {
  const std::size_t d = query.cols;
  require_scorable(query, d, options, "sparsity_scores_gather");
  require_rows_in_table(rows, n, table_rows, table, "sparsity_scores_gather");
  const kernels::Kernels& kernel = kernels::selected();
  sparsity_rows(query.row(0), [&](std::size_t i) { return table + std::size_t(rows[i]) * d; }, n, d, options,
                kernel.l1_l2, kernel.l2_l4, out);
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isfinite(out[i])) continue;
    require_finite(query, "sparsity_scores_gather: query");
    require_finite(MatrixView(table + std::size_t(rows[i]) * d, 1, d),
                   ("sparsity_scores_gather: table row " + std::to_string(rows[i])).c_str());
    throw InvalidArgument("sparsity_scores_gather: table row " + std::to_string(rows[i]) + " overflows float");
  }
}

void sparsity_scores_gather_f16(MatrixView query, const std::uint16_t* table, std::size_t table_rows,
                                const std::int64_t* rows, std::size_t n, const SparsityOptions& options, float* out) {
  const std::size_t d = query.cols;
  require_scorable(query, d, options, "sparsity_scores_gather_f16");
  require_rows_in_table(rows, n, table_rows, table, "sparsity_scores_gather_f16");
  const kernels::Kernels& kernel = kernels::selected();
  const auto row_at = [&](std::size_t i) { return table + std::size_t(rows[i]) * d; };
  sparsity_rows(query.row(0), row_at, n, d, options, kernel.l1_l2_f16, kernel.l2_l4_f16, out);
  require_finite_half_scores(out, n, query, row_at, d, "sparsity_scores_gather_f16", "table row of candidate");
}

void final_scores(const float* stage1, const float* sparsity, std::size_t n, float alpha, float direction,
                  const SparsityOptions& options, float* out) {
  if (direction != 1.0f && direction != -1.0f) {
    throw InvalidArgument("final_scores: direction must be +1 or -1, got " + std::to_string(direction));
  }
  if (!std::isfinite(alpha)) {
    throw InvalidArgument("final_scores: alpha must be finite, got " + std::to_string(alpha));
  }
  for (std::size_t i = 0; i < n; ++i) {
    const bool guarded = options.identical_guard && sparsity[i] == options.guard_value;
    out[i] = stage1[i] + (guarded ? std::fabs(alpha) : direction * alpha) * sparsity[i];
  }
}

}  // namespace counterpoint::scoring
