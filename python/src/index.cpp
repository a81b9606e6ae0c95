// counterpoint.Index and counterpoint.Hit: a DocumentIndex together with the encoder(s) that
// fill and query it, searched through the two-stage Retriever with the GIL released.
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "counterpoint/app/corpus_cleaning.h"
#include "counterpoint/app/corpus_index.h"
#include "counterpoint/app/index_search.h"
#include "counterpoint/app/settings.h"
#include "counterpoint/core/errors.h"
#include "counterpoint/retrieval/corpus_cleaning.h"
#include "counterpoint/retrieval/explain.h"
#include "counterpoint/retrieval/retriever.h"

namespace counterpoint::python {

using namespace pybind11::literals;

namespace {

using index::DocumentIndex;
using retrieval::Hit;

// Index.search's result: a list of per-query Hit lists (indexing, iteration, len), plus FAISS's
// view of the same: (n, k) arrays padded with -1 (slots) and NaN (scores) past the hits found.
struct SearchResults {
  std::vector<std::vector<Hit>> hits;
  std::size_t k = 0;
  retrieval::AlphaChoice alpha;  // the alpha stage 2 used (sparsity scorers)
  std::size_t candidates = 0;    // stage-1 candidates per query (K)
  std::vector<retrieval::StanceReading> stances;  // per query text (none for query vectors)
  retrieval::ScaleChoice scale;  // the magnitude gate of the sparsity term
};

py::array_t<float> padded_component(const SearchResults& r, float Hit::*component) {
  py::array_t<float> out({r.hits.size(), r.k});
  auto view = out.mutable_unchecked<2>();
  for (std::size_t q = 0; q < r.hits.size(); ++q) {
    for (std::size_t j = 0; j < r.k; ++j) {
      view(q, j) = j < r.hits[q].size() ? r.hits[q][j].*component : std::numeric_limits<float>::quiet_NaN();
    }
  }
  return out;
}

py::array_t<std::int64_t> slots_array(const SearchResults& r) {
  py::array_t<std::int64_t> out({r.hits.size(), r.k});
  auto view = out.mutable_unchecked<2>();
  for (std::size_t q = 0; q < r.hits.size(); ++q) {
    for (std::size_t j = 0; j < r.k; ++j) view(q, j) = j < r.hits[q].size() ? std::int64_t(r.hits[q][j].slot) : -1;
  }
  return out;
}

// Where an alpha or a sparsity scale came from, as Python sees it.
const char* choice_source(retrieval::AlphaChoice::Source source) {
  switch (source) {
    case retrieval::AlphaChoice::Source::kGiven: return "given";
    case retrieval::AlphaChoice::Source::kRecorded: return "recorded";
    case retrieval::AlphaChoice::Source::kTuned: return "tuned";
    case retrieval::AlphaChoice::Source::kDefault: break;
  }
  return "default";
}

struct PyIndex {
  std::shared_ptr<DocumentIndex> documents;
  std::shared_ptr<const Encoder> encoder;
  std::shared_ptr<const Encoder> sparse_encoder;
};

std::size_t positive(py::ssize_t value, const char* name) {
  if (value <= 0) throw py::value_error(std::string(name) + " must be >= 1, got " + std::to_string(value));
  return std::size_t(value);
}

void require_encoder(const std::shared_ptr<Encoder>& encoder) {
  if (!encoder) throw py::value_error("encoder is required (an Encoder, not None)");
}

// Texts need the index's encoder; an index built from outside rows, or loaded without an
// encoder, takes vectors only.
void require_index_encoder(const PyIndex& index, const char* what) {
  if (index.encoder) return;
  const auto& recorded = index.documents->options();
  const std::string e = app::recorded_model_name(recorded.encoder_id);
  if (e.empty() || e == "external") {
    throw py::value_error(std::string(what) + " needs the index's encoder to encode texts, and this index has none "
                          "(built from embeddings made elsewhere): use add_embeddings / query vectors");
  }
  // The index records its models: the way out names them.
  std::string load = "Index.load(path, encoder=cp.Encoder.load('" + e + "')";
  if (const std::string es = app::recorded_model_name(recorded.sparse_encoder_id); !es.empty()) {
    load += ", sparse_encoder=cp.Encoder.load('" + es + "')";
  }
  throw py::value_error(std::string(what) + " needs the index's encoder to encode texts, and this index was loaded "
                        "without it: " + load + "), or use add_embeddings / query vectors");
}

// Checks that the encoders produce the widths the stored rows have.
std::vector<std::vector<std::string>> exclude_lists(py::handle exclude, std::size_t queries) {
  std::vector<std::vector<std::string>> lists;
  if (exclude.is_none()) return lists;
  if (py::isinstance<py::str>(exclude) || !py::isinstance<py::sequence>(exclude)) {
    throw py::type_error("exclude must be a list with one list of ids per query");
  }
  const auto sequence = py::reinterpret_borrow<py::sequence>(exclude);
  if (std::size_t(py::len(sequence)) != queries) {
    throw py::value_error("exclude must hold one list of ids per query: got " +
                          std::to_string(py::len(sequence)) + " for " + std::to_string(queries) + " queries");
  }
  for (py::handle entry : sequence) {
    if (entry.is_none()) {
      lists.emplace_back();
    } else if (py::isinstance<py::str>(entry)) {
      lists.push_back({entry.cast<std::string>()});
    } else {
      lists.push_back(text_list(entry, "exclude[i]"));
    }
  }
  return lists;
}

std::string format_score(float value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.4f", double(value));
  return buffer;
}

PyIndex build(py::object texts, py::object ids, std::shared_ptr<Encoder> encoder,
              std::shared_ptr<Encoder> sparse_encoder, const std::string& kind, bool fp16, bool tokens,
              bool bm25, bool stem, py::object progress, py::ssize_t batch_size) {
  require_encoder(encoder);
  const app::IndexBuild settings{kind, fp16, tokens, bm25, stem, positive(batch_size, "batch_size")};
  app::validate(settings, sparse_encoder != nullptr);  // before the texts are read
  const std::vector<std::string> text_values = text_list(texts, "texts");
  const std::vector<std::string> id_values = text_list(ids, "ids");
  PyIndex result{nullptr, encoder, sparse_encoder};
  ProgressBridge bridge(progress, "index");
  run_released(bridge, [&] {
    result.documents =
        app::build_index(text_values, id_values, *encoder, sparse_encoder.get(), settings, bridge.callback());
    return 0;
  });
  return result;
}

// Query vectors given by the caller instead of texts: E rows, and Es rows for sparsity scorers.
retrieval::EncodedQueries encoded_from_arrays(const PyIndex& self, py::handle queries, py::handle sparse_queries,
                                              const retrieval::SearchOptions& options) {
  if (options.stage1 != retrieval::Stage1::kDense) {
    throw py::value_error("BM25 needs query texts: stage1 must be 'dense' with query vectors");
  }
  if (options.scorer != retrieval::Scorer::kCosine && options.scorer != retrieval::Scorer::kSparsity) {
    throw py::value_error("token scorers need query texts (their token embeddings come from the encoder)");
  }
  retrieval::EncodedQueries encoded;
  const FloatArray dense = float_array(queries, "queries", "(n, dim)", 1, 2);
  encoded.dense = Matrix(as_view(dense).rows, as_view(dense).cols,
                         std::vector<float>(dense.data(), dense.data() + dense.size()));
  if (encoded.dense.cols() != self.documents->options().dim) {
    throw py::value_error("query vectors are " + std::to_string(encoded.dense.cols()) + "-wide, the index's E rows " +
                          std::to_string(self.documents->options().dim));
  }
  if (options.scorer != retrieval::Scorer::kSparsity && !sparse_queries.is_none()) {
    throw py::value_error("sparse_queries (Es(q)) go with a sparsity scorer; scorer '" +
                          retrieval::to_string(options.scorer) + "' reads none: choose hoyer, l2l1 or kappa4, or leave them out");
  }
  if (options.scorer == retrieval::Scorer::kSparsity) {
    if (sparse_queries.is_none()) throw py::value_error("a sparsity scorer with query vectors needs sparse_queries (Es(q))");
    const FloatArray sparse = float_array(sparse_queries, "sparse_queries", "(n, sparse_dim)", 1, 2);
    encoded.sparse = Matrix(as_view(sparse).rows, as_view(sparse).cols,
                            std::vector<float>(sparse.data(), sparse.data() + sparse.size()));
    if (encoded.sparse.rows() != encoded.dense.rows()) {
      throw py::value_error("sparse_queries has " + std::to_string(encoded.sparse.rows()) + " rows for " +
                            std::to_string(encoded.dense.rows()) + " query vectors");
    }
  }
  return encoded;
}

// Rows the caller computed, added with their ids (texts default to the ids, for display only).
void add_rows(DocumentIndex& documents, py::handle ids, py::handle embeddings, py::handle sparse_embeddings,
              py::handle texts) {
  std::vector<std::string> id_values = text_list(ids, "ids");
  std::vector<std::string> text_values = texts.is_none() ? id_values : text_list(texts, "texts");
  if (text_values.size() != id_values.size()) {
    throw py::value_error("texts and ids must have the same length: " + std::to_string(text_values.size()) +
                          " texts, " + std::to_string(id_values.size()) + " ids");
  }
  const FloatArray dense = float_array(embeddings, "embeddings", "(n, dim)", 2, 2);
  std::optional<FloatArray> sparse;
  if (!sparse_embeddings.is_none()) sparse = float_array(sparse_embeddings, "sparse_embeddings", "(n, sparse_dim)", 2, 2);
  if (documents.options().sparse_dim > 0 && !sparse) {
    throw py::value_error("the index stores Es rows: pass sparse_embeddings too");
  }
  py::gil_scoped_release release;
  documents.add(text_values, id_values, as_view(dense), sparse ? as_view(*sparse) : MatrixView{});
}

// A str argument as UTF-8: TypeError naming it for another type (as pybind11's own cast would),
// ValueError for a str without a UTF-8 form (a lone surrogate), not pybind11's TypeError.
std::string str_argument(py::handle value, const char* name) {
  if (!py::isinstance<py::str>(value)) {
    throw py::type_error(std::string(name) + " must be str, got " + type_name(value));
  }
  return text_of(value, name);
}

// The identity recorded for rows made elsewhere: an Encoder's own (its settings too), or a checked
// name / "external".
std::string embedding_source(py::handle given, std::size_t width, const std::string& what, std::string& settings) {
  if (py::isinstance<Encoder>(given)) {
    const Encoder& encoder = given.cast<const Encoder&>();
    require_embedding_source(encoder, width, what);
    settings = encoder.settings();
    return encoder.identity();
  }
  const std::string identity = given.is_none() ? std::string() : given.cast<std::string>();
  if (!identity.empty()) require_embedding_source(identity, width, what);
  return identity;
}

PyIndex build_from_embeddings(py::object ids, py::object embeddings, py::object sparse_embeddings, py::object texts,
                              py::object encoder_id, py::object sparse_encoder_id, const std::string& kind,
                              bool fp16, bool bm25) {
  const FloatArray dense = float_array(embeddings, "embeddings", "(n, dim)", 2, 2);
  index::IndexOptions options;
  options.dim = std::size_t(dense.shape(1));
  options.kind = kind;
  options.encoder_id = embedding_source(encoder_id, options.dim, "encoder_id", options.encoder_settings);
  if (options.encoder_id.empty()) {
    throw py::value_error("encoder_id is required: the model that made the rows (the Encoder, its identity or "
                          "name, or \"external\"), so that rows and queries of another model are refused");
  }
  if (!sparse_embeddings.is_none()) {
    const FloatArray sparse = float_array(sparse_embeddings, "sparse_embeddings", "(n, sparse_dim)", 2, 2);
    options.sparse_dim = std::size_t(sparse.shape(1));
    options.sparse_encoder_id =
        embedding_source(sparse_encoder_id, options.sparse_dim, "sparse_encoder_id", options.sparse_encoder_settings);
    if (options.sparse_encoder_id.empty()) throw py::value_error("sparse_encoder_id is required with sparse_embeddings");
  } else if (!sparse_encoder_id.is_none() && !py::str(sparse_encoder_id).cast<std::string>().empty()) {
    throw py::value_error("sparse_encoder_id given without sparse_embeddings");
  }
  options.sparse_storage = fp16 ? index::IndexOptions::SparseStorage::kFloat16
                                : index::IndexOptions::SparseStorage::kFloat32;
  options.build_bm25 = bm25;
  PyIndex result{std::make_shared<DocumentIndex>(options), nullptr, nullptr};
  add_rows(*result.documents, ids, embeddings, sparse_embeddings, texts);
  return result;
}

// The slot of live document `id`; KeyError naming it when the index lacks it.
index::Slot slot_or_key_error(const DocumentIndex& documents, const std::string& id) {
  std::optional<index::Slot> slot = documents.slot_of(id);
  if (!slot) throw py::key_error("no document with id '" + id + "'");
  return *slot;
}

// The slots of `ids`, in order; KeyError naming the first id the index lacks.
std::vector<index::Slot> slots_of(const DocumentIndex& documents, py::handle ids) {
  const std::vector<std::string> values = text_list(ids, "ids");
  std::vector<index::Slot> slots;
  slots.reserve(values.size());
  for (const std::string& id : values) slots.push_back(slot_or_key_error(documents, id));
  return slots;
}

// Es rows of `slots` as the index stores them: float16 rows are copied as half bits into a
// numpy float16 array (no widening), float32 rows into a float32 array.
py::array stored_sparse_rows(const DocumentIndex& documents, const std::vector<index::Slot>& slots) {
  const std::size_t d = documents.options().sparse_dim;
  if (d == 0) throw py::value_error("the index stores no Es rows (it was built without a sparse_encoder)");
  const bool half = documents.options().sparse_storage == index::IndexOptions::SparseStorage::kFloat16;
  py::array out(py::dtype(half ? "float16" : "float32"), {slots.size(), d});
  char* destination = static_cast<char*>(out.mutable_data());
  const std::size_t row_bytes = d * (half ? sizeof(std::uint16_t) : sizeof(float));
  py::gil_scoped_release release;
  documents.with_sparse_table(slots.data(), slots.size(), [&](const DocumentIndex::SparseTable& table) {
    const char* source = half ? reinterpret_cast<const char*>(table.f16) : reinterpret_cast<const char*>(table.f32);
    for (std::size_t i = 0; i < slots.size(); ++i) {
      std::memcpy(destination + i * row_bytes, source + std::size_t(slots[i]) * row_bytes, row_bytes);
    }
  });
  return out;
}


// Index.build's defaults: the library's, from one default-constructed struct.
const app::IndexBuild kBuildDefaults{};

// The defaults of Index.search and SearchOptions: the library's, from one default-constructed struct.
const retrieval::SearchOptions kSearchDefaults{};

app::ScorerInputs::Presence presence(const std::string& name, const char* keyword) {
  using Presence = app::ScorerInputs::Presence;
  if (name == "absent") return Presence::kAbsent;
  if (name == "given") return Presence::kGiven;
  if (name == "held") return Presence::kHeld;
  throw py::value_error(std::string(keyword) + " must be 'absent', 'given' or 'held', got '" + name + "'");
}

// A sparsity search on alpha 1 because nobody chose one is worth a warning: the figure may be far
// from what Es was tuned for.
void warn_on_default_alpha(const char* who, const retrieval::SearchOptions& options, const retrieval::AlphaChoice& chosen) {
  if (options.scorer == retrieval::Scorer::kSparsity && chosen.source == retrieval::AlphaChoice::Source::kDefault) {
    py::module_::import("warnings").attr("warn")(std::string(who) + ": " + chosen.describe() + "; pass alpha= to choose it");
  }
}

SearchResults search(const PyIndex& self, py::object queries, py::ssize_t k, std::optional<py::ssize_t> candidates,
                     const std::string& scorer, std::optional<double> alpha, const std::string& stage1,
                     const std::string& fusion, double fusion_lambda, bool guard, py::object prefix_object,
                     py::object exclude, std::shared_ptr<scoring::MapVerifier> verifier, py::object sparse_queries,
                     int ef_search, int nprobe, std::optional<double> sparsity_scale, const std::string& stance,
                     int rrf_k) {
  // Query vectors (a numeric array) or query texts (a list of str).
  const bool vectors = py::isinstance<py::array>(queries);
  app::SearchQueries batch;
  if (!vectors) batch.texts = text_list(queries, "queries");
  batch.prefix = optional_text(prefix_object, "prefix");
  py::dict keywords("k"_a = k, "candidates"_a = candidates, "scorer"_a = scorer, "alpha"_a = alpha, "stage1"_a = stage1,
                    "fusion"_a = fusion, "fusion_lambda"_a = fusion_lambda, "guard"_a = guard,
                    "ef_search"_a = ef_search, "nprobe"_a = nprobe, "sparsity_scale"_a = sparsity_scale,
                    "stance"_a = stance, "rrf_k"_a = rrf_k);
  const retrieval::SearchOptions options = app::search_options_from(given_settings(keywords));
  app::ScorerInputs named;  // what this call names beside the index's own parts
  named.sparse_model = app::ScorerInputs::Presence::kHeld;
  named.verifier = verifier ? app::ScorerInputs::Presence::kGiven : app::ScorerInputs::Presence::kAbsent;
  app::require_scorer_inputs(options, named);
  self.documents->check_params(options.dense_params);  // before any query is encoded
  if (!vectors) require_index_encoder(self, "Index.search");  // before a warning about alpha
  retrieval::Retriever retriever(self.documents, self.encoder, self.sparse_encoder, verifier);
  warn_on_default_alpha("Index.search", options, retriever.alpha_for(options));
  if (vectors) {
    if (batch.prefix) throw py::value_error("prefix applies to query texts, not to query vectors");
    batch.encoded = encoded_from_arrays(self, queries, sparse_queries, options);
  } else if (!sparse_queries.is_none()) {
    throw py::value_error("sparse_queries goes with query vectors: pass queries as an array too");
  }
  batch.exclude = exclude_lists(exclude, vectors ? batch.encoded->dense.rows() : batch.texts.size());
  const ReleasedInterruptibly release;
  app::SearchReport report = app::search_loaded(retriever, std::move(batch), options);
  return SearchResults{std::move(report.hits), options.k, report.alpha, options.candidates, std::move(report.stances),
                       report.scale};
}

// Stage 2 over one query's candidates found elsewhere (counterpoint.milvus, a user's own store).
std::vector<Hit> rerank(py::object ids, py::object stage1, py::object sparse_query, py::object sparse_candidates,
                        py::ssize_t k, const std::string& scorer, std::optional<double> alpha,
                        std::shared_ptr<Encoder> sparse_encoder, bool guard, py::object exclude,
                        std::optional<double> sparsity_scale, py::object texts, const std::string& stance,
                        std::optional<retrieval::SearchOptions> given_options) {
  // `stance` is the query's reading (read_stance, encode_queries), not a setting of the search:
  // it goes to rerank beside the options, so a cosine rerank of any reading stays valid.
  const retrieval::Stance reading = retrieval::parse_stance(stance);
  retrieval::SearchOptions options;
  if (given_options) {
    // One options object (counterpoint.milvus passes Index.search's): the loose settings stay unset.
    const retrieval::SearchOptions defaults{};
    if (k != py::ssize_t(defaults.k) || scorer != retrieval::to_string(defaults.scorer) || alpha || sparsity_scale ||
        guard != defaults.sparsity.identical_guard) {
      throw py::value_error("give k, scorer, alpha, guard and sparsity_scale in options or as keywords, not both");
    }
    options = *given_options;
    retrieval::validate_settings(options);
  } else {
    options = app::search_options_from(given_settings(py::dict("k"_a = k, "scorer"_a = scorer, "alpha"_a = alpha,
                                                               "guard"_a = guard, "sparsity_scale"_a = sparsity_scale)));
  }
  retrieval::CandidateRows rows;
  rows.ids = text_list(ids, "ids");
  if (!texts.is_none()) rows.texts = text_list(texts, "texts");
  const FloatArray scores = float_array(stage1, "stage1", "(m,)", 1, 1);
  rows.stage1.assign(scores.data(), scores.data() + scores.size());
  std::vector<std::string> excluded;
  if (!exclude.is_none()) excluded = exclude_lists(py::make_tuple(exclude), 1).front();
  std::optional<FloatArray> query;
  py::array candidates;
  if (options.scorer == retrieval::Scorer::kSparsity) {
    if (sparse_query.is_none() || sparse_candidates.is_none()) {
      throw py::value_error("a sparsity scorer needs sparse_query (Es(q)) and sparse_candidates (their Es rows)");
    }
    query = float_array(sparse_query, "sparse_query", "(d,)", 1, 1);
    rows.sparse_dim = std::size_t(query->shape(0));
    candidates = sparse_candidate_rows(sparse_candidates, rows.ids.size(), rows.sparse_dim);
    const bool half = candidates.dtype().is(py::dtype("float16"));
    if (half) rows.sparse_f16 = static_cast<const std::uint16_t*>(candidates.data());
    else rows.sparse = static_cast<const float*>(candidates.data());
  }
  const retrieval::AlphaChoice chosen = retrieval::choose_alpha(options.alpha, sparse_encoder.get());
  warn_on_default_alpha("rerank", options, chosen);
  py::gil_scoped_release release;
  return retrieval::rerank(rows, query ? query->data() : nullptr, options, sparse_encoder.get(), excluded, reading);
}

// Query rows for a stage 1 run elsewhere, as Index.search encodes its queries.
py::tuple encode_queries(std::shared_ptr<Encoder> encoder, py::object queries, std::shared_ptr<Encoder> sparse_encoder,
                         const std::string& scorer, const std::string& stance) {
  if (!encoder) throw py::value_error("encode_queries needs the encoder that produced the store's E rows");
  retrieval::SearchOptions options;
  retrieval::set_scorer(options, scorer);
  if (options.scorer != retrieval::Scorer::kCosine && options.scorer != retrieval::Scorer::kSparsity) {
    throw py::value_error("encode_queries gives the rows of the cosine and sparsity scorers; scorer '" + scorer +
                          "' needs an Index's token rows");
  }
  options.stance = retrieval::parse_stance(stance);
  const std::vector<std::string> texts = text_list(queries, "queries");
  retrieval::EncodedQueries encoded;
  {
    const ReleasedInterruptibly release;
    encoded = retrieval::encode_queries(*encoder, sparse_encoder.get(), texts, options);
  }
  py::object sparse = py::none();
  if (options.scorer == retrieval::Scorer::kSparsity) sparse = to_numpy(std::move(encoded.sparse));
  return py::make_tuple(to_numpy(std::move(encoded.dense)), sparse, encoded.stances);
}

}  // namespace

void register_index(py::module_& m) {
  py::class_<Hit>(m, "Hit", R"(One search result with every score component, so a reader sees why it ranked.

Attributes:
    id: the document id.
    score: the final score hits are sorted by.
    cosine: cos(E(q), E(p)).
    sparsity: sparsity(Es(q) - Es(p)); 0 unless the scorer uses it.
    bm25: BM25 score; 0 unless BM25 took part in stage 1.
    stage1: the score stage 1 ranked by (cosine, BM25 or the fused score).
    token: token-map score; 0 unless a token scorer was used.
    slot: the document's row in the index.
    text: the passage as the index stores it ("" for candidates reranked from outside an Index).)")
      .def(py::init([](std::string id, float score, float cosine, float sparsity, float bm25, float stage1,
                       float token, index::Slot slot, std::string text) {
             return Hit{std::move(id), slot, score, cosine, sparsity, bm25, stage1, token, std::move(text)};
           }),
           py::arg("id"), py::kw_only(), py::arg("score"), py::arg("cosine") = 0.0f, py::arg("sparsity") = 0.0f,
           py::arg("bm25") = 0.0f, py::arg("stage1") = 0.0f, py::arg("token") = 0.0f, py::arg("slot") = -1,
           py::arg("text") = "",
           "A hit made elsewhere (e.g. by counterpoint.milvus), with its score components; slot -1 = not in an Index.")
      .def_readonly("id", &Hit::id)
      .def_readonly("score", &Hit::score)
      .def_readonly("cosine", &Hit::cosine)
      .def_readonly("sparsity", &Hit::sparsity)
      .def_readonly("bm25", &Hit::bm25)
      .def_readonly("stage1", &Hit::stage1)
      .def_readonly("token", &Hit::token)
      .def_readonly("slot", &Hit::slot)
      .def_readonly("text", &Hit::text)
      .def("__repr__", [](const Hit& hit) {
        return "Hit(id=" + std::string(py::repr(py::str(hit.id))) + ", score=" + format_score(hit.score) +
               ", cosine=" + format_score(hit.cosine) + ", sparsity=" + format_score(hit.sparsity) +
               ", bm25=" + format_score(hit.bm25) + ", stage1=" + format_score(hit.stage1) +
               ", token=" + format_score(hit.token) + ")";
      });

  py::class_<SearchResults>(m, "SearchResults", R"(What Index.search returns: per query, a list of up to k Hit objects, best
first (index it, iterate it, len() it like a list of lists), and the same as FAISS-style arrays:

    scores, cosine, sparsity, bm25, stage1, token: float32 (n, k), NaN past the hits found;
    slots: int64 (n, k), the documents' rows in the index, -1 past the hits found;
    ids: per query, the list of document ids.

to_pandas() gives one row per hit (pandas optional); a notebook shows the hits as a table.)")
      .def("__len__", [](const SearchResults& r) { return r.hits.size(); })
      .def("__getitem__",
           [](const SearchResults& r, py::ssize_t i) {
             const auto n = py::ssize_t(r.hits.size());
             if (i < 0) i += n;
             if (i < 0 || i >= n) throw py::index_error("query " + std::to_string(i) + " of " + std::to_string(n));
             return r.hits[std::size_t(i)];
           })
      .def("__iter__", [](const SearchResults& r) { return py::make_iterator(r.hits.begin(), r.hits.end()); },
           py::keep_alive<0, 1>())
      .def_property_readonly("k", [](const SearchResults& r) { return r.k; })
      .def_property_readonly("scores", [](const SearchResults& r) { return padded_component(r, &Hit::score); })
      .def_property_readonly("cosine", [](const SearchResults& r) { return padded_component(r, &Hit::cosine); })
      .def_property_readonly("sparsity", [](const SearchResults& r) { return padded_component(r, &Hit::sparsity); })
      .def_property_readonly("bm25", [](const SearchResults& r) { return padded_component(r, &Hit::bm25); })
      .def_property_readonly("stage1", [](const SearchResults& r) { return padded_component(r, &Hit::stage1); })
      .def_property_readonly("token", [](const SearchResults& r) { return padded_component(r, &Hit::token); })
      .def_property_readonly("slots", &slots_array)
      .def_property_readonly("ids",
                             [](const SearchResults& r) {
                               py::list out;
                               for (const auto& hits : r.hits) {
                                 py::list ids;
                                 for (const Hit& h : hits) ids.append(h.id);
                                 out.append(ids);
                               }
                               return out;
                             })
      .def_property_readonly("candidates", [](const SearchResults& r) { return r.candidates; },
                             "Stage-1 candidates per query (K) the search asked for; stage 1 finds at most the index size.")
      .def_readonly("stances", &SearchResults::stances,
                    "Per query text, the StanceReading that signed its sparsity term (empty for query vectors).")
      .def_property_readonly(
          "alpha",
          [](const SearchResults& r) { return py::make_tuple(r.alpha.value, choice_source(r.alpha.source), r.alpha.describe()); },
          "The alpha stage 2 used, as choose_alpha returns it: (value, source, description).")
      .def_property_readonly(
          "sparsity_scale",
          [](const SearchResults& r) {
            const std::string gate = r.scale.describe();
            return py::make_tuple(r.scale.value, choice_source(r.scale.source), gate.empty() ? "no gate" : gate);
          },
          "The magnitude gate tau of the sparsity term (0 = none) a sparsity scorer used, as choose_sparsity_scale "
          "returns it: (value, source, description).")
      .def(
          "arrays", [](const SearchResults& r) { return py::make_tuple(padded_component(r, &Hit::score), slots_array(r)); },
          "FAISS's pair: (scores float32 (n, k), slots int64 (n, k)), NaN / -1 past the hits found, as in "
          "`D, I = index.search(x, k)`.")
      .def("__repr__", [](const SearchResults& r) {
        return "SearchResults(queries=" + std::to_string(r.hits.size()) + ", k=" + std::to_string(r.k) + ")";
      });

  py::class_<PyIndex>(m, "Index", R"(A searchable document collection: ids, texts, dense embeddings (E), optionally
sparse-aware embeddings (Es) and token embeddings, a FAISS index over E and BM25 postings.

Create one with Index.build(texts, ids, encoder=...) or Index.load(path, encoder=...).)")
      .def_static("build", &build, py::arg("texts"), py::arg("ids"), py::kw_only(), py::arg("encoder"),
                  py::arg("sparse_encoder") = nullptr, py::arg("kind") = kBuildDefaults.kind,
                  py::arg("fp16") = kBuildDefaults.fp16, py::arg("tokens") = kBuildDefaults.tokens,
                  py::arg("bm25") = kBuildDefaults.bm25, py::arg("stem") = kBuildDefaults.stem,
                  py::arg("progress") = false, py::arg("batch_size") = kBuildDefaults.batch_size,
                  R"(Encodes `texts` and indexes them under `ids`.

Arguments:
    texts: list of str, the documents.
    ids: list of str, one unique non-empty id per text.
    encoder: the Encoder producing E (dense stage 1 and the cosine term).
    sparse_encoder: an Encoder producing Es for the sparsity scorers (hoyer, l2l1, kappa4);
        None stores no Es. Passing the same encoder as `encoder` uses E for both.
    kind: FAISS index kind: "flat" (exact), "hnsw", "ivf" or "ivfpq".
    fp16: store Es as float16 (half the memory); needs a sparse_encoder.
    tokens: also store per-token embeddings (needed by the mean, maxsim, alignment scorers).
    bm25: build BM25 postings (needed by stage1="bm25" and "hybrid").
    stem: stem BM25 terms (Snowball English); needs bm25.
    progress: True shows a tqdm bar; a callable progress(done, total) may return False to cancel.
    batch_size: documents encoded per step, >= 1.

Raises:
    ValueError for no texts, mismatched lengths, duplicate or empty ids, an unknown kind, fp16
    without a sparse_encoder, stem without bm25;
    KeyboardInterrupt when cancelled.)")
      .def_static("build_from_embeddings", &build_from_embeddings, py::arg("ids"), py::arg("embeddings"),
                  py::arg("sparse_embeddings") = py::none(), py::arg("texts") = py::none(), py::kw_only(),
                  py::arg("encoder_id"), py::arg("sparse_encoder_id") = py::none(), py::arg("kind") = "flat",
                  py::arg("fp16") = false, py::arg("bm25") = false,
                  R"(An index of rows computed elsewhere (a cached encoding, another pipeline).

Arguments:
    ids: list of str, one unique non-empty id per row.
    embeddings: E rows, float32 array (n, dim).
    sparse_embeddings: Es rows (n, sparse_dim) for the sparsity scorers, or None.
    texts: the documents' texts (shown with hits, used by BM25); None stores the ids.
    encoder_id, sparse_encoder_id: the models that made the rows: the Encoder itself, or the
        identity (Encoder.identity) or name of an installed model. An index never mixes embedding
        spaces, so they are required, must resolve, and their width must match the rows';
        "external" (or "external@<tag>") names rows of a model counterpoint does not know.
    kind, fp16, bm25: as for build (bm25 off by default: texts may be absent).

Search it with query vectors (Index.search(array, sparse_queries=...)), or load it with
the encoders whose identities it records to search with texts.)")
      .def(
          "add_embeddings",
          [](PyIndex& self, py::object ids, py::object embeddings, py::object sparse_embeddings, py::object texts) {
            add_rows(*self.documents, ids, embeddings, sparse_embeddings, texts);
          },
          py::arg("ids"), py::arg("embeddings"), py::arg("sparse_embeddings") = py::none(),
          py::arg("texts") = py::none(),
          R"(Adds rows computed elsewhere, all or nothing (ids checked as by add). The rows must come from
the models the index records.)")
      .def("search", &search, py::arg("queries"), py::arg("k") = kSearchDefaults.k, py::kw_only(),
           py::arg("candidates") = py::none(), py::arg("scorer") = retrieval::to_string(kSearchDefaults.scorer),
           py::arg("alpha") = py::none(), py::arg("stage1") = retrieval::to_string(kSearchDefaults.stage1),
           py::arg("fusion") = retrieval::to_string(kSearchDefaults.fusion),
           py::arg("fusion_lambda") = kSearchDefaults.fusion_lambda,
           py::arg("guard") = kSearchDefaults.sparsity.identical_guard, py::arg("prefix") = py::none(),
           py::arg("exclude") = py::none(), py::arg("verifier") = py::none(), py::arg("sparse_queries") = py::none(),
           py::arg("ef_search") = kSearchDefaults.dense_params.ef_search,
           py::arg("nprobe") = kSearchDefaults.dense_params.nprobe, py::arg("sparsity_scale") = py::none(),
           py::arg("stance") = retrieval::to_string(kSearchDefaults.stance), py::arg("rrf_k") = kSearchDefaults.rrf_k,
          R"(Two-stage search: stage 1 fetches `candidates` documents per query, stage 2 rescores
them with `scorer` and returns the best `k`.

Arguments:
    queries: list of str (a single str raises TypeError: wrap it in a list), or query vectors
        E(q) as a float32 array (n, dim) or (dim,) (e.g. from Encoder.encode(..., query=True)),
        so that one encoding serves many searches (alpha tuning, other k).
    sparse_queries: with query vectors and a sparsity scorer: Es(q) as an array (n, sparse_dim).
    k: hits per query, >= 1 (positional, as in FAISS's index.search(x, k)).
    candidates: stage-1 candidates per source (K), >= k; None = SearchOptions().candidates, or k when larger.
    scorer: stage-2 score:
        "cosine"     the stage-1 score: cos(E(q), E(p)) (BM25 with stage1="bm25", the fused
                     score with "hybrid");
        "hoyer", "l2l1", "kappa4" (or "sparsity" = hoyer)
                     that + alpha * sparsity(Es(q) - Es(p)) (SparseCL), needs an index built
                     with a sparse_encoder and a dense or hybrid stage 1 (raw BM25 is unbounded);
        "mean", "maxsim", "alignment"
                     token-map scores F0/F1/F2, need an index built with tokens=True;
        "verifier"   a learned map verifier's score (pass verifier=), needs tokens=True.
    alpha: weight of the sparsity term, finite; None = the alpha recorded in the sparse
        encoder's manifest (tuned on dev when it was trained), else 1.0 with a warning.
    sparsity_scale: magnitude gate tau of the sparsity term, sparsity * min(1,
        |Es(q) - Es(p)|_2 / tau), so near-identical texts cannot look as sparse as a real
        contradiction; 0 = none; None = the tau the sparse encoder records, else none.
    stance: the stance hits take towards each query, the sign of the sparsity term: "attack"
        (cosine + alpha * sparsity), "support" (cosine - alpha * sparsity), or "from-query": each
        query's instruction ("Find an argument supporting the claim: X"; see read_stance), attack
        for a query without one and for query vectors; Es then reads the claim without its
        instruction. A given stance takes each query as it is. results.stances says what was read.
    stage1: "dense" (FAISS over E), "bm25" (lexical) or "hybrid" (both, fused).
    fusion: for "hybrid": "rsf" (relative score fusion: n(dense) + fusion_lambda * n(bm25)) or
        "rrf" (reciprocal rank fusion).
    fusion_lambda: weight of BM25 in relative score fusion, finite.
    rrf_k: the constant of reciprocal rank fusion (fusion="rrf"): a hit at rank r counts 1 / (rrf_k + r).
    guard: give (near-)identical query/document pairs sparsity -1e9 so a query never retrieves
        itself or an exact duplicate (SparseCL's reference behaviour).
    prefix: replaces the encoder's query prefix for these queries (e.g. a stance instruction).
    exclude: None, or one list of ids per query that are never returned (e.g. the query's own id).
    verifier: a MapVerifier (MapVerifier.load) for scorer="verifier".
    ef_search: HNSW efSearch for this call (never below candidates); 0 = the index's default.
    nprobe: IVF lists probed for this call; 0 = the index's default (ceil(nlist / 8)).

Returns:
    SearchResults: per query, a list of up to k Hit objects, best first (it indexes and
    iterates like a list of lists), with FAISS-style (n, k) arrays .scores / .slots (padded
    with NaN / -1), .cosine, .sparsity, ... and .ids.

Raises:
    ValueError for k or candidates <= 0, candidates < k, negative ef_search or nprobe, ef_search on a non-hnsw or
    nprobe on a non-ivf index, an unknown scorer/stage1/fusion name, settings the search would not use (a non-zero
    alpha or sparsity_scale, a stance other than "from-query", guard=False, sparse_queries with a scorer that has
    no sparsity term; fusion, fusion_lambda moved from their defaults without stage1 "hybrid"; verifier= with
    another scorer), a sparsity scorer over stage1 "bm25", a scorer the index lacks the embeddings for, or a
    wrongly sized exclude.
    The GIL is released while searching.)")
      .def(
          "add",
          [](PyIndex& self, py::object texts, py::object ids, py::object progress, py::ssize_t batch_size) {
            require_index_encoder(self, "Index.add");
            std::vector<std::string> text_values = text_list(texts, "texts");
            std::vector<std::string> id_values = text_list(ids, "ids");
            if (text_values.size() != id_values.size()) {
              throw py::value_error("texts and ids must have the same length: " +
                                    std::to_string(text_values.size()) + " texts, " +
                                    std::to_string(id_values.size()) + " ids");
            }
            const std::size_t batch = positive(batch_size, "batch_size");
            ProgressBridge bridge(progress, "index");
            run_released(bridge, [&] {
              retrieval::add_documents(*self.documents, text_values, id_values, *self.encoder,
                                       self.sparse_encoder.get(), batch, bridge.callback());
              return 0;
            });
          },
          py::arg("texts"), py::arg("ids"), py::kw_only(), py::arg("progress") = false,
          py::arg("batch_size") = retrieval::kDocumentsPerStep,
          R"(Encodes and adds documents. Ids must be new (a removed id may be added again).

Raises ValueError for mismatched lengths or an id that is empty, repeated or already present.)")
      .def(
          "remove",
          [](PyIndex& self, py::object ids) {
            std::vector<std::string> values = text_list(ids, "ids");
            py::gil_scoped_release release;
            self.documents->remove(values);
          },
          py::arg("ids"),
          "Removes documents by id. An unknown or repeated id raises ValueError and removes nothing.")
      .def(
          "ids",
          [](const PyIndex& self) {
            py::list out;
            for (index::Slot slot : self.documents->live_slots()) out.append(self.documents->id(slot));
            return out;
          },
          "The live documents' ids, in the order they were added (slot order).")
      .def(
          "embeddings",
          [](const PyIndex& self, py::object ids) {
            const std::vector<index::Slot> slots = slots_of(*self.documents, ids);
            py::array_t<float> out({slots.size(), self.documents->options().dim});
            float* destination = out.mutable_data();
            py::gil_scoped_release release;
            self.documents->gather_dense(slots.data(), slots.size(), destination);
            return out;
          },
          py::arg("ids"),
          "The stored E rows of `ids` (float32, (n, dim); L2-normalised as the index keeps them). KeyError for an "
          "id the index lacks.")
      .def(
          "sparse_embeddings",
          [](const PyIndex& self, py::object ids) { return stored_sparse_rows(*self.documents, slots_of(*self.documents, ids)); },
          py::arg("ids"),
          "The stored Es rows of `ids` as stored: float16 (n, sparse_dim) for an fp16 index, else float32. "
          "ValueError when the index stores no Es, KeyError for an id it lacks.")
      .def_property_readonly(
          "encoder_id", [](const PyIndex& self) { return self.documents->options().encoder_id; },
          "Identity (Encoder.identity) of the model that made the E rows.")
      .def_property_readonly(
          "sparse_encoder_id", [](const PyIndex& self) { return self.documents->options().sparse_encoder_id; },
          "Identity of the model that made the Es rows (\"\" without Es).")
      .def_property_readonly(
          "encoder_settings", [](const PyIndex& self) { return self.documents->options().encoder_settings; },
          "Encoder.settings of the model that made the E rows, as JSON text (\"\" when not recorded).")
      .def_property_readonly(
          "sparse_encoder_settings",
          [](const PyIndex& self) { return self.documents->options().sparse_encoder_settings; },
          "Encoder.settings of the model that made the Es rows (\"\" without Es or when not recorded).")
      .def_property_readonly(
          "sparse_dim", [](const PyIndex& self) { return self.documents->options().sparse_dim; },
          "Width of Es (0 without Es).")
      .def_property_readonly(
          "sparse_dtype",
          [](const PyIndex& self) -> py::object {
            if (self.documents->options().sparse_dim == 0) return py::none();
            return py::str(self.documents->options().sparse_storage == index::IndexOptions::SparseStorage::kFloat16
                               ? "float16" : "float32");
          },
          "How Es rows are stored: \"float16\", \"float32\", or None without Es.")
      .def_property_readonly(
          "encoder", [](const PyIndex& self) { return std::const_pointer_cast<Encoder>(self.encoder); },
          "The Encoder of E queries (None for an index built from embeddings).")
      .def_property_readonly(
          "sparse_encoder", [](const PyIndex& self) { return std::const_pointer_cast<Encoder>(self.sparse_encoder); },
          "The Encoder of Es queries, or None.")
      .def("__len__", [](const PyIndex& self) { return self.documents->size(); }, "Live documents.")
      .def(
          "__contains__",
          [](const PyIndex& self, py::handle id) { return self.documents->contains(str_argument(id, "id")); },
          py::arg("id"), "Whether a live document has this id.")
      .def(
          "text",
          [](const PyIndex& self, py::handle id) {
            return self.documents->text(slot_or_key_error(*self.documents, str_argument(id, "id")));
          },
          py::arg("id"), "The stored text of document `id`; KeyError if absent.")
      .def_property_readonly(
          "kind", [](const PyIndex& self) { return self.documents->options().kind; }, "The FAISS index kind.")
      .def_property_readonly(
          "dim", [](const PyIndex& self) { return self.documents->options().dim; }, "Width of E.")
      .def_property_readonly(
          "memory_bytes", [](const PyIndex& self) { return self.documents->memory_bytes(); },
          "Approximate bytes held in memory.")
      .def(
          "save",
          [](const PyIndex& self, py::handle path) {
            const std::string directory = path_argument(path, "path");
            py::gil_scoped_release release;
            self.documents->save(directory);
          },
          py::arg("path"),
          R"(Writes the index into directory `path`, atomically replacing what was there.
The index records which encoders made its rows (their identity, not the models): pass the
same ones again to Index.load. Raises OSError on file-system failures.)")
      .def_static(
          "load",
          [](py::handle path, std::shared_ptr<Encoder> encoder, std::shared_ptr<Encoder> sparse_encoder) {
            const std::string directory = path_argument(path, "path");
            std::shared_ptr<DocumentIndex> documents;
            {
              py::gil_scoped_release release;
              documents = std::make_shared<DocumentIndex>(DocumentIndex::load(directory));
            }
            retrieval::check_encoders(*documents, encoder.get(), sparse_encoder.get());
            return PyIndex{documents, encoder, sparse_encoder};
          },
          py::arg("path"), py::kw_only(), py::arg("encoder") = nullptr, py::arg("sparse_encoder") = nullptr,
          R"(Reads an index written by save().

Arguments:
    path: the index directory.
    encoder: the Encoder the index was built with (its identity and width are checked); None
        loads it for search by query vectors only, as an index built from embeddings made
        elsewhere (encoder_id="external") is searched.
    sparse_encoder: the Encoder that produced Es, when the index stores Es.

Raises:
    FileNotFoundError when `path` does not exist, CorruptFileError for damaged or foreign
    content, ValueError when an encoder is not the one the index records or its width does not
    match the stored rows.)")
      .def(
          "explain",
          [](const PyIndex& self, py::handle query_text, py::handle hit, py::ssize_t top_tokens,
             py::ssize_t top_coordinates, const std::string& stance_name, py::object prefix_object,
             std::optional<double> sparsity_scale) {
            require_index_encoder(self, "Index.explain");
            const std::string query = str_argument(query_text, "query"), hit_id = str_argument(hit, "hit_id");
            const retrieval::Stance stance = retrieval::parse_stance(stance_name);
            const std::optional<std::string> prefix = optional_text(prefix_object, "prefix");
            scoring::SparsityOptions measure;
            if (sparsity_scale) measure.scale = float(*sparsity_scale);
            retrieval::choose_sparsity_scale(measure.scale, nullptr);  // a given scale's range
            const std::size_t tokens_wanted = positive(top_tokens, "top_tokens");
            const std::size_t coordinates_wanted = positive(top_coordinates, "top_coordinates");
            retrieval::Explanation e;
            {
              const ReleasedInterruptibly release;
              retrieval::Retriever retriever(self.documents, self.encoder, self.sparse_encoder);
              e = retrieval::explain(retriever, query, hit_id, tokens_wanted, coordinates_wanted, measure, stance,
                                     prefix ? &*prefix : nullptr);
            }
            const auto tokens = [](const std::vector<retrieval::TokenAlignment>& list) {
              py::list out;
              for (const auto& t : list) {
                py::dict d;
                d["piece"] = t.piece;
                d["position"] = t.position;
                d["best_cosine"] = t.best_cosine;
                d["best_match"] = t.best_match;
                out.append(d);
              }
              return out;
            };
            py::list coordinates;
            for (const auto& c : e.coordinates) {
              py::dict d;
              d["coordinate"] = c.coordinate;
              d["difference"] = c.difference;
              d["share"] = c.share;
              coordinates.append(d);
            }
            py::dict out;
            out["id"] = e.passage_id;
            out["text"] = e.passage;
            out["cosine"] = e.cosine;
            out["sparsity"] = e.sparsity;
            out["query_tokens"] = tokens(e.query_tokens);
            out["passage_tokens"] = tokens(e.passage_tokens);
            out["coordinates"] = coordinates;
            out["coordinates_share"] = e.top_share;
            out["summary"] = retrieval::describe(e);
            return out;
          },
          py::arg("query"), py::arg("hit_id"), py::kw_only(), py::arg("top_tokens") = 5,
          py::arg("top_coordinates") = 5, py::arg("stance") = retrieval::to_string(kSearchDefaults.stance),
          py::arg("prefix") = py::none(), py::arg("sparsity_scale") = py::none(),
          R"(Why passage `hit_id` scores as it does against `query`.

Returns a dict: id, text, cosine, sparsity (Hoyer of Es(q) - Es(p); 0 without Es),
query_tokens and passage_tokens (each token's best cosine against the other text's tokens,
worst aligned first: the words one side has and the other lacks, such as a negation; dicts of
piece, position, best_cosine, best_match), coordinates (the Es(q) - Es(p) coordinates with the
largest share of its squared norm: coordinate, difference, share), coordinates_share (their
shares summed) and summary (the lines `counterpoint search --explain` prints). Pass the search's
`stance`, `prefix` and `sparsity_scale` so that the query is encoded and Es(q) - Es(p) measured as
the search did them (see Index.search): its cosine and sparsity are then the hit's.

Raises:
    ValueError for an id the index lacks, top_tokens / top_coordinates < 1, an unknown stance or a
    sparsity_scale below 0.)")
      .def("__repr__", [](const PyIndex& self) {
        return "Index(documents=" + std::to_string(self.documents->size()) + ", kind='" +
               self.documents->options().kind + "', dim=" + std::to_string(self.documents->options().dim) +
               ", encoder=" + (self.encoder ? "'" + self.encoder->manifest().name + "'" : std::string("None")) + ")";
      });

  using retrieval::SearchOptions;
  py::class_<SearchOptions>(m, "SearchOptions", R"(The library's search defaults, one home for every face: Index.search's
keyword defaults, the CLI's `search` / `run` option defaults and counterpoint.milvus read them
from this default-constructed struct, and SearchOptions(**settings) checks settings as they do.)")
      .def(py::init([](const py::kwargs& keywords) { return app::search_options_from(given_settings(keywords)); }),
           R"(SearchOptions(**settings): the defaults with the settings given by keyword (Index.search's:
k, candidates, scorer, alpha, sparsity_scale, stage1, fusion, fusion_lambda, rrf_k, stance, guard,
ef_search, nprobe), checked as a search checks them: candidates not given follows k, an unknown
keyword or a value of the wrong kind is refused by name.)")
      .def_readwrite("k", &SearchOptions::k)
      .def_readwrite("candidates", &SearchOptions::candidates)
      .def_property("scorer", [](const SearchOptions& o) { return retrieval::to_string(o.scorer); },
                    [](SearchOptions& o, const std::string& name) { retrieval::set_scorer(o, name); })
      .def_property("sparsity", [](const SearchOptions& o) { return scoring::to_string(o.sparsity.function); },
                    [](SearchOptions& o, const std::string& name) { o.sparsity.function = scoring::parse_sparsity(name); })
      .def_property("stage1", [](const SearchOptions& o) { return retrieval::to_string(o.stage1); },
                    [](SearchOptions& o, const std::string& name) { o.stage1 = retrieval::parse_stage1(name); })
      .def_property("fusion", [](const SearchOptions& o) { return retrieval::to_string(o.fusion); },
                    [](SearchOptions& o, const std::string& name) { o.fusion = retrieval::parse_fusion(name); })
      .def_readwrite("fusion_lambda", &SearchOptions::fusion_lambda)
      .def_readwrite("rrf_k", &SearchOptions::rrf_k)
      .def_readwrite("alpha", &SearchOptions::alpha)
      .def_property("sparsity_scale", [](const SearchOptions& o) { return o.sparsity.scale; },
                    [](SearchOptions& o, std::optional<float> tau) { o.sparsity.scale = tau; })
      .def_property("stance", [](const SearchOptions& o) { return retrieval::to_string(o.stance); },
                    [](SearchOptions& o, const std::string& name) { o.stance = retrieval::parse_stance(name); })
      .def_property("guard", [](const SearchOptions& o) { return o.sparsity.identical_guard; },
                    [](SearchOptions& o, bool guard) { o.sparsity.identical_guard = guard; })
      .def_property("ef_search", [](const SearchOptions& o) { return o.dense_params.ef_search; },
                    [](SearchOptions& o, int value) { o.dense_params.ef_search = value; })
      .def_property("nprobe", [](const SearchOptions& o) { return o.dense_params.nprobe; },
                    [](SearchOptions& o, int value) { o.dense_params.nprobe = value; })
      .def(
          "check_inputs",
          [](const SearchOptions& options, const std::string& sparse_model, bool verifier,
             std::optional<bool> index_sparse_rows, std::optional<bool> index_token_rows, const std::string& where) {
            app::ScorerInputs inputs;
            inputs.sparse_model = presence(sparse_model, "sparse_model");
            inputs.verifier = verifier ? app::ScorerInputs::Presence::kGiven : app::ScorerInputs::Presence::kAbsent;
            inputs.index_sparse_rows = index_sparse_rows;
            inputs.index_token_rows = index_token_rows;
            inputs.where = where;
            app::require_scorer_inputs(options, inputs);
          },
          py::kw_only(), py::arg("sparse_model") = "absent", py::arg("verifier") = false,
          py::arg("index_sparse_rows") = py::none(), py::arg("index_token_rows") = py::none(), py::arg("where") = "",
          R"(ValueError when the scorer lacks an input it reads or is given one it would not read, as every
search checks it. sparse_model: "absent", "given" (named for this search) or "held" (at hand, such
as Es rows of the queries); verifier: one was given; index_sparse_rows / index_token_rows: whether
the store holds Es rows / token rows (None: not known yet); where: the store as messages name it.)")
      .def("validate", &retrieval::validate_search,
           "ValueError for a depth no search takes (k < 1, candidates < k), weights no search can use, and "
           "settings it would not use: alpha, sparsity_scale, "
           "stance or guard=False with a scorer that has no sparsity term, fusion / fusion_lambda / rrf_k moved "
           "from their defaults where no hybrid stage 1 reads them; a face building its own options calls it "
           "before any work.")
      .def("__repr__", [](const SearchOptions& o) {
        return "SearchOptions(k=" + std::to_string(o.k) + ", candidates=" + std::to_string(o.candidates) +
               ", scorer='" + retrieval::to_string(o.scorer) + "', stage1='" + retrieval::to_string(o.stage1) + "')";
      });

  py::class_<retrieval::StanceReading>(m, "StanceReading", R"(What a query asks for (read_stance): its stance, "attack" or
"support"; the claim Es reads (the query without its instruction); the instruction recognised ("" when
none); from_instruction / given: where the stance came from.)")
      .def_property_readonly("stance", [](const retrieval::StanceReading& r) { return retrieval::to_string(r.stance); })
      .def_readonly("claim", &retrieval::StanceReading::claim)
      .def_readonly("instruction", &retrieval::StanceReading::instruction)
      .def_readonly("from_instruction", &retrieval::StanceReading::from_instruction)
      .def_readonly("given", &retrieval::StanceReading::given)
      .def("describe", &retrieval::StanceReading::describe,
           "'support (read from \"...:\")', 'attack (given)' or 'attack (no instruction: what contradicts the query)'.")
      .def("__repr__", [](const retrieval::StanceReading& r) { return "StanceReading(" + r.describe() + ")"; });
  m.def(
      "read_stance",
      [](const std::string& query, const std::string& stance) {
        return retrieval::read_stance(query, retrieval::parse_stance(stance));
      },
      py::arg("query"), py::arg("stance") = retrieval::to_string(kSearchDefaults.stance),
      R"(The stance a query asks for, as Index.search reads it: "Find an argument supporting the claim: X"
asks for support of X, "Show me a point that refutes this: X" for attacks on it; a query without such
an instruction asks for what contradicts it (attack). The instruction is the opening up to the first
':' or '?' when it starts with a request (find, retrieve, show, give, which, what, argue, ...) and
names one stance. stance="attack" / "support" is taken as told: that stance, and the whole query as
the claim (nothing is read from it).

Returns:
    StanceReading (stance, claim, instruction, from_instruction, given).)");
  m.def(
      "exclusion_lists", [](py::object exclude, py::ssize_t n) {
        auto lists = exclude_lists(exclude, std::size_t(n));
        lists.resize(std::size_t(n));
        return lists;
      },
      py::arg("exclude"), py::arg("n"),
      R"(Index.search's reading of its `exclude` argument for `n` queries: None -> n empty lists; else one
entry per query, each None, one id (str) or a list of ids. ValueError / TypeError otherwise.)");
  m.def("encode_queries", &encode_queries, py::arg("encoder"), py::arg("queries"), py::kw_only(),
        py::arg("sparse_encoder") = py::none(), py::arg("scorer") = retrieval::to_string(kSearchDefaults.scorer),
        py::arg("stance") = retrieval::to_string(kSearchDefaults.stance),
        R"(The query rows Index.search would use, for candidates found by another store (then rerank):
E of each whole query and, for a sparsity scorer, Es of the claim read_stance finds (the query
without its stance instruction), in one forward pass when nothing was read and Es is a head over
E's network.

Returns:
    (dense float32 (n, dim), sparse float32 (n, sparse_dim) or None for the cosine scorer,
     a StanceReading per query: pass reading.stance to rerank).)");
  m.def("rerank", &rerank, py::arg("ids"), py::arg("stage1"), py::kw_only(), py::arg("sparse_query") = py::none(),
        py::arg("sparse_candidates") = py::none(), py::arg("k") = kSearchDefaults.k,
        py::arg("scorer") = retrieval::to_string(kSearchDefaults.scorer), py::arg("alpha") = py::none(),
        py::arg("sparse_encoder") = py::none(), py::arg("guard") = kSearchDefaults.sparsity.identical_guard,
        py::arg("exclude") = py::none(), py::arg("sparsity_scale") = py::none(), py::arg("texts") = py::none(),
        py::arg("stance") = retrieval::to_string(kSearchDefaults.stance), py::arg("options") = py::none(),
        R"(Stage 2 alone over one query's candidates found by another store (a Milvus collection, your
own ANN index): the scores, order and ties of Index.search (ties keep the candidates' order).

Arguments:
    ids: the candidates' ids, in the order the store ranked them.
    stage1: float32 (m,), their stage-1 scores (cosine to the query).
    sparse_query, sparse_candidates: with a sparsity scorer, Es(q) (d,) and the candidates' Es
        rows (m, d); float16 rows are read as half, in place.
    k: hits returned.
    scorer: "cosine", or "hoyer" / "l2l1" / "kappa4" / "sparsity" (cosine + alpha * sparsity).
    alpha: None = the alpha sparse_encoder records, else 1.0 with a warning.
    guard: (near-)identical pairs get sparsity -1e9.
    exclude: ids never returned (e.g. the query's own id).
    sparsity_scale: the magnitude gate tau (see Index.search); None = the one sparse_encoder records.
    texts: None, or the candidates' passages, one per id: each Hit then carries its text.
    stance: "attack" (cosine + alpha * sparsity) or "support" (cosine - alpha * sparsity); the
        default "from-query" has no query text here, so it is attack: pass read_stance(query).stance,
        with sparse_query = Es(read_stance(query).claim).
    options: a SearchOptions in place of k, scorer, alpha, guard and sparsity_scale (the settings
        of a whole search, as counterpoint.milvus passes them); give one or the other.

Returns:
    list of Hit, best first (their slot is -1: the rows live elsewhere).)");
  m.def(
      "choose_alpha",
      [](std::optional<double> alpha, std::shared_ptr<Encoder> sparse_encoder) {
        const retrieval::AlphaChoice chosen = retrieval::choose_alpha(
            alpha ? std::optional<float>(float(*alpha)) : std::nullopt, sparse_encoder.get());
        const char* source = choice_source(chosen.source);
        return py::make_tuple(chosen.value, source, chosen.describe());
      },
      py::arg("alpha"), py::arg("sparse_encoder"),
      R"(The alpha a sparsity search uses, by Index.search's rule: `alpha` when given, else the one
the sparse encoder recorded when tuned on dev, else 1.0.

Returns (value, source, description), source one of "given", "recorded", "default".)");
  m.def(
      "choose_sparsity_scale",
      [](std::optional<double> sparsity_scale, std::shared_ptr<Encoder> sparse_encoder) {
        const retrieval::ScaleChoice chosen = retrieval::choose_sparsity_scale(
            sparsity_scale ? std::optional<float>(float(*sparsity_scale)) : std::nullopt, sparse_encoder.get());
        const std::string gate = chosen.describe();
        return py::make_tuple(chosen.value, choice_source(chosen.source), gate.empty() ? "no gate" : gate);
      },
      py::arg("sparsity_scale"), py::arg("sparse_encoder"),
      R"(The magnitude gate tau a sparsity search uses, by Index.search's rule: `sparsity_scale` when
given, else the one the sparse encoder recorded when tuned on dev, else 0 (no gate).

Returns (value, source, description), source one of "given", "recorded", "default".)");
  m.def(
      "clean_corpus",
      [](const PyIndex& index, py::object trusted_texts, py::object out, std::optional<py::ssize_t> top,
         std::optional<double> threshold,
         std::optional<double> alpha, py::ssize_t candidates, bool guard, std::optional<double> sparsity_scale) {
        const std::vector<std::string> trusted = text_list(trusted_texts, "trusted");
        retrieval::CleaningOptions options;
        if (top && threshold) {
          throw py::value_error("give top or threshold, not both: threshold removes every candidate scoring at least it");
        }
        if (top) options.top = *top < 0 ? throw py::value_error("top must be >= 0") : std::size_t(*top);
        if (threshold) options.threshold = float(*threshold);
        if (alpha) options.alpha = float(*alpha);
        if (sparsity_scale) options.sparsity_scale = float(*sparsity_scale);
        options.candidates = positive(candidates, "candidates");
        options.identical_guard = guard;
        const std::string out_dir = optional_path(out, "out").value_or("");
        app::check_cleaning(options, out_dir);
        retrieval::CleaningReport report;
        {
          const ReleasedInterruptibly release;
          retrieval::Retriever retriever(index.documents, index.encoder, index.sparse_encoder);
          // The index's own passages, in slot order, are the corpus written.
          report = app::clean_corpus(retriever, trusted, out_dir.empty() ? std::vector<data::Document>{}
                                                                        : app::passages_of(*index.documents),
                                     options, out_dir);
        }
        py::list removed;
        for (const retrieval::Removal& r : report.removed) {
          py::dict d;
          d["id"] = r.id;
          d["trusted"] = trusted[r.trusted];
          d["trusted_index"] = r.trusted;
          d["rank"] = r.rank;
          d["score"] = r.score;
          d["cosine"] = r.cosine;
          d["sparsity"] = r.sparsity;
          d["alpha"] = report.alpha.value;
          d["sparsity_scale"] = report.scale.value;
          removed.append(d);
        }
        return removed;
      },
      py::arg("index"), py::arg("trusted"), py::kw_only(), py::arg("out") = py::none(),
      py::arg("top") = py::none(), py::arg("threshold") = py::none(),
      py::arg("alpha") = py::none(), py::arg("candidates") = retrieval::CleaningOptions{}.candidates,
      py::arg("guard") = true, py::arg("sparsity_scale") = py::none(),
      R"(Corpus cleaning with contradiction retrieval: the passages of `index` that contradict a
trusted text, found by cos + alpha * sparsity with each trusted text as the query.

Arguments:
    index: an Index built with a sparse_encoder.
    trusted: list of str, the texts taken as true. A passage whose text is one of them is never
        removed.
    out: a new (or empty) directory: corpus.jsonl receives the index's passages that were not
        removed (slot order), report.jsonl one line per removal. None writes nothing.
    top: passages removed per trusted text (the SparseCL paper removes 3); None = the library's
        default (CleaningOptions.top).
    threshold: instead of top (not with it), remove every candidate whose score is at least this.
    alpha: the sparsity weight; None = the one the sparse encoder records (else 1.0).
    candidates: stage-1 candidates per trusted text (K).
    guard: SparseCL's identical-pair guard.
    sparsity_scale: the magnitude gate tau (as Index.search's); None = the one the sparse
        encoder records, else none.

Returns:
    list of dict, one per removed passage in order of discovery: id, trusted (the text that
    removed it), trusted_index, rank among that text's hits, score, cosine, sparsity, alpha,
    sparsity_scale.

Raises:
    ValueError for no trusted texts, top 0 without a threshold, an index without Es, an out
    directory that exists and is not empty. The GIL is released while searching.)");
}

}  // namespace counterpoint::python
