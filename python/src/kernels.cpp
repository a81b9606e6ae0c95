// counterpoint.cosine/hoyer/l2_l1/kappa4 and the token-map scores: the stage-2 kernels on
// numpy arrays, one query (d,) -> (m,) or many (n, d) -> (n, m).
#include <string>

#include "bindings.h"
#include "counterpoint/scoring/pooled.h"
#include "counterpoint/scoring/token_maps.h"

namespace counterpoint::python {

namespace {

using scoring::Sparsity;

py::object pooled_scores(py::handle q, py::handle candidates, bool sparsity,
                                 Sparsity function, bool guard) {
  FloatArray query_array = float_array(q, "q", "(d,) or (n, d)", 1, 2);
  FloatArray candidate_array = float_array(candidates, "C", "(m, d)", 2, 2);
  const MatrixView queries = as_view(query_array);
  const MatrixView rows = as_view(candidate_array);
  Matrix scores;
  {
    py::gil_scoped_release release;
    if (sparsity) {
      scoring::SparsityOptions options;
      options.function = function;
      options.identical_guard = guard;
      scores = scoring::sparsity_matrix(queries, rows, options);
    } else {
      scores = scoring::cosine_matrix(queries, rows);
    }
  }
  py::array_t<float> result = to_numpy(std::move(scores));
  if (query_array.ndim() == 1) return result.attr("reshape")(py::ssize_t(rows.rows));
  return std::move(result);
}

Matrix token_map_of(py::handle query_tokens, py::handle candidate_tokens) {
  FloatArray q = float_array(query_tokens, "Qt", "(tq, d)", 2, 2);
  FloatArray c = float_array(candidate_tokens, "Ct", "(tc, d)", 2, 2);
  py::gil_scoped_release release;
  return scoring::token_cosine_map(as_view(q), as_view(c));
}

const char* kSparsityDoc = R"(

Norms are clamped as in SparseCL's reference code (../shared/REFERENCE.md): |x|_1 >= sqrt(d) * 1e-6
and |x|_2 >= 1e-6. Besides keeping the ratio finite, the clamp is the near-identical guard of the
measure itself: a difference whose norms are below those floors (q and c equal up to about 1e-6,
or both tiny, e.g. q * 1e-8 against C * 1e-8) is scored as no difference at all: Hoyer gives 0, l2/l1
gives 1/sqrt(d) and kappa4 (nearly) 0, not the plain formula's value.

Arguments:
    q: query embedding(s), shape (d,) or (n, d); converted to float32 (no copy when it already
       is C-contiguous float32).
    C: candidate embeddings, shape (m, d).
    guard: when True, a (near-)identical pair (|q - c|_2 < 1e-3) scores -1e9, as SparseCL's
       reference code does so a query never retrieves itself. Off by default: the plain measure.

Returns:
    float32 array (m,) for one query, (n, m) for n queries; result[i, j] scores q[i] - C[j].

Raises:
    TypeError for a non-numeric dtype, ValueError for a wrong shape, a width mismatch or NaN/Inf.)";

// Stage 2 of SparseCL over candidates fetched elsewhere (e.g. from a vector database): the
// library's final score, stage1 + alpha * sparsity(Es(q) - Es(c)), with float16 rows read as half.
py::tuple final_scores_of(py::handle stage1_object, py::handle query_object, py::handle candidates_object,
                          double alpha, const std::string& function, bool guard) {
  FloatArray stage1 = float_array(stage1_object, "stage1", "(m,)", 1, 1);
  FloatArray query = float_array(query_object, "sparse_query", "(d,)", 1, 1);
  const std::size_t m = std::size_t(stage1.shape(0)), d = std::size_t(query.shape(0));
  const py::array candidates = sparse_candidate_rows(candidates_object, m, d);
  const bool half = candidates.dtype().is(py::dtype("float16"));
  scoring::SparsityOptions options;
  options.function = scoring::parse_sparsity(function);
  options.identical_guard = guard;
  py::array_t<float> sparsity(m), scores(m);
  float* sparsity_out = sparsity.mutable_data();
  float* scores_out = scores.mutable_data();
  const MatrixView query_view(query.data(), 1, d);
  {
    py::gil_scoped_release release;
    if (half) {
      scoring::sparsity_scores_f16(query_view, static_cast<const std::uint16_t*>(candidates.data()), m, d, options,
                                   sparsity_out);
    } else {
      scoring::sparsity_scores(query_view, MatrixView(static_cast<const float*>(candidates.data()), m, d), options,
                               sparsity_out);
    }
    scoring::final_scores(stage1.data(), sparsity_out, m, float(alpha), 1.0f, options, scores_out);
  }
  return py::make_tuple(scores, sparsity);
}

// Scores of pooled rows: stage 2 over outside candidates, cosine and the sparsity functions.
void bind_pooled_kernels(py::module_& m) {
  m.def(
      "final_scores", &final_scores_of, py::arg("stage1"), py::arg("sparse_query"), py::arg("sparse_candidates"),
      py::kw_only(), py::arg("alpha"), py::arg("sparsity") = "hoyer", py::arg("guard") = true,
      R"(Stage 2 of SparseCL over candidates fetched elsewhere (e.g. counterpoint.milvus): the score
Index.search gives them, stage1 + alpha * sparsity(Es(q) - Es(c)), by the same kernels.

Arguments:
    stage1: float32 (m,), the candidates' stage-1 scores (their cosine to the query).
    sparse_query: Es(q), (d,).
    sparse_candidates: the candidates' Es rows, (m, d): float16 rows are read as half, in place
        (no float32 copy), anything else as float32.
    alpha: weight of the sparsity term, finite.
    sparsity: "hoyer", "l2l1" or "kappa4".
    guard: (near-)identical pairs get sparsity -1e9, as Index.search does by default.

Returns:
    (scores, sparsity): two float32 arrays (m,).

Raises:
    ValueError for mismatched shapes, a non-finite alpha or NaN/Inf rows; TypeError for a
    non-numeric array.)");
  m.def(
      "cosine",
      [](py::handle q, py::handle c) { return pooled_scores(q, c, false, Sparsity::kHoyer, false); },
      py::arg("q"), py::arg("C"),
      R"(Cosine similarity of query row(s) q against candidate rows C.

Inputs need not be normalised, at any scale a float can hold (rows too small for float products,
below about 1e-15 in norm, are computed in double); a zero-norm row scores 0.

Arguments:
    q: shape (d,) or (n, d), float32 (other numeric dtypes are converted once).
    C: shape (m, d).

Returns:
    float32 array (m,) for one query, (n, m) for n queries.

Raises:
    TypeError for a non-numeric dtype, ValueError for a wrong shape, a width mismatch or NaN/Inf.)");
  m.def(
      "hoyer",
      [](py::handle q, py::handle c, bool guard) { return pooled_scores(q, c, true, Sparsity::kHoyer, guard); },
      py::arg("q"), py::arg("C"), py::kw_only(), py::arg("guard") = false,
      (std::string("Hoyer sparsity of q - C[j]: (sqrt(d) - |x|_1 / |x|_2) / (sqrt(d) - 1), in [0, 1], "
                   "higher = sparser. Needs d >= 2.") + kSparsityDoc).c_str());
  m.def(
      "l2_l1",
      [](py::handle q, py::handle c, bool guard) { return pooled_scores(q, c, true, Sparsity::kL2L1, guard); },
      py::arg("q"), py::arg("C"), py::kw_only(), py::arg("guard") = false,
      (std::string("l2/l1 sparsity of q - C[j]: |x|_2 / |x|_1, higher = sparser.") + kSparsityDoc).c_str());
  m.def(
      "kappa4",
      [](py::handle q, py::handle c, bool guard) { return pooled_scores(q, c, true, Sparsity::kKappa4, guard); },
      py::arg("q"), py::arg("C"), py::kw_only(), py::arg("guard") = false,
      (std::string("kappa4 sparsity of q - C[j]: |x|_4^4 / |x|_2^4, higher = sparser.") + kSparsityDoc).c_str());
}

// Scores over token embeddings and their cosine maps.
void bind_token_kernels(py::module_& m) {
  m.def(
      "token_map",
      [](py::handle qt, py::handle ct) { return to_numpy(token_map_of(qt, ct)); },
      py::arg("Qt"), py::arg("Ct"),
      R"(Token-token cosine map M[i, j] = cos(Qt[i], Ct[j]).

Arguments:
    Qt: query token embeddings, shape (tq, d), padding removed.
    Ct: candidate token embeddings, shape (tc, d).

Returns:
    float32 array (tq, tc). Zero-norm tokens give cosine 0.

Raises:
    ValueError for empty inputs, a width mismatch or NaN/Inf; TypeError for a non-numeric dtype.)");
  m.def(
      "maxsim",
      [](py::handle qt, py::handle ct) {
        Matrix map = token_map_of(qt, ct);
        return scoring::map_maxsim(map);
      },
      py::arg("Qt"), py::arg("Ct"),
      R"(MaxSim (late interaction, F1): mean over query tokens of the best cosine with any
candidate token, i.e. map_maxsim(token_map(Qt, Ct)).

Arguments:
    Qt: shape (tq, d); Ct: shape (tc, d).

Returns:
    float.)");
  m.def(
      "map_maxsim",
      [](py::handle map) {
        FloatArray array = float_array(map, "M", "(tq, tc)", 2, 2);
        return scoring::map_maxsim(as_view(array));
      },
      py::arg("M"), "MaxSim (F1) of a token cosine map M (tq, tc): mean over rows of the row maximum.");
  m.def(
      "map_mean",
      [](py::handle map) {
        FloatArray array = float_array(map, "M", "(tq, tc)", 2, 2);
        return scoring::map_mean(as_view(array));
      },
      py::arg("M"), "F0 score of a token cosine map M (tq, tc): the mean of all entries.");
  m.def(
      "map_alignment",
      [](py::handle map, double lam, double tau) {
        FloatArray array = float_array(map, "M", "(tq, tc)", 2, 2);
        scoring::AlignmentOptions options;
        options.lambda = float(lam);
        options.tau = float(tau);
        return scoring::map_alignment(as_view(array), options);
      },
      py::arg("M"), py::arg("lam") = scoring::AlignmentOptions{}.lambda, py::arg("tau") = scoring::AlignmentOptions{}.tau,
      R"(F2 (alignment-biased) score of a token cosine map M (tq, tc):
A = softmax_j((M[i, j] - lam * |i - j|) / tau) per row, score = mean_i sum_j A[i, j] * M[i, j].

Arguments:
    M: the map, shape (tq, tc).
    lam: penalty per position of distance |i - j|; finite.
    tau: softmax temperature; > 0.

Returns:
    float.)");
}

}  // namespace

void register_kernels(py::module_& m) {
  bind_pooled_kernels(m);
  bind_token_kernels(m);
}

}  // namespace counterpoint::python
