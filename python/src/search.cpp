// counterpoint's search face: Index.search, stage 2 over candidates found elsewhere (rerank,
// encode_queries), the settings (SearchOptions, through app's one table) and how a query's stance
// and alpha are read. Each converts its arguments and calls app::search_loaded or retrieval.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "counterpoint/app/index_search.h"
#include "counterpoint/app/settings.h"
#include "index.h"

namespace counterpoint::python {

using namespace pybind11::literals;

namespace {

using retrieval::Hit;

// The defaults of Index.search and SearchOptions: the library's, from one default-constructed struct.
const retrieval::SearchOptions kSearchDefaults{};

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

// exclude= as a search reads it: None, or one entry per query (None, one id, or a list of ids).
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
                     int rrf_k,
                     std::optional<retrieval::SearchOptions> given_options) {
  // Query vectors (a numeric array) or query texts (a list of str).
  const bool vectors = py::isinstance<py::array>(queries);
  app::SearchQueries batch;
  if (!vectors) batch.texts = text_list(queries, "queries");
  batch.prefix = optional_text(prefix_object, "prefix");
  py::dict keywords("k"_a = k, "candidates"_a = candidates, "scorer"_a = scorer, "alpha"_a = alpha, "stage1"_a = stage1,
                    "fusion"_a = fusion, "fusion_lambda"_a = fusion_lambda, "guard"_a = guard,
                    "ef_search"_a = ef_search, "nprobe"_a = nprobe, "sparsity_scale"_a = sparsity_scale,
                    "stance"_a = stance, "rrf_k"_a = rrf_k);
  const retrieval::SearchOptions options = app::options_or_settings(given_options, given_settings(keywords));
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
  return SearchResults{std::move(report.hits),    options.k,    report.alpha,
                       options.candidates,        std::move(report.stances), report.scale,
                       std::move(report.scoring)};
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
  // One options object (counterpoint.milvus passes its search's) or the loose keywords.
  const retrieval::SearchOptions options = app::options_or_settings(
      given_options, given_settings(py::dict("k"_a = k, "scorer"_a = scorer, "alpha"_a = alpha, "guard"_a = guard,
                                             "sparsity_scale"_a = sparsity_scale)));
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

const char* const kSearchDoc = R"(Two-stage search: stage 1 fetches `candidates` documents per query, stage 2 rescores
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
    options: a SearchOptions holding the settings instead (SearchOptions(k=5, scorer="hoyer"), reused
        across searches); the settings' keywords then stay at their defaults (ValueError naming one
        that does not).

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
    The GIL is released while searching.)";

const char* const kRerankDoc = R"(Stage 2 alone over one query's candidates found by another store (a Milvus collection, your
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
    list of Hit, best first (their slot is -1: the rows live elsewhere).)";

void bind_search_options(py::module_& m) {
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
}

void bind_stance_reading(py::module_& m) {
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
}

void bind_stage2(py::module_& m) {
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
        kRerankDoc);
}

void bind_choices(py::module_& m) {
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
}

}  // namespace

void bind_index_search(py::class_<PyIndex>& index) {
  index.def("search", &search, py::arg("queries"), py::arg("k") = kSearchDefaults.k, py::kw_only(),
           py::arg("candidates") = py::none(), py::arg("scorer") = retrieval::to_string(kSearchDefaults.scorer),
           py::arg("alpha") = py::none(), py::arg("stage1") = retrieval::to_string(kSearchDefaults.stage1),
           py::arg("fusion") = retrieval::to_string(kSearchDefaults.fusion),
           py::arg("fusion_lambda") = kSearchDefaults.fusion_lambda,
           py::arg("guard") = kSearchDefaults.sparsity.identical_guard, py::arg("prefix") = py::none(),
           py::arg("exclude") = py::none(), py::arg("verifier") = py::none(), py::arg("sparse_queries") = py::none(),
           py::arg("ef_search") = kSearchDefaults.dense_params.ef_search,
           py::arg("nprobe") = kSearchDefaults.dense_params.nprobe, py::arg("sparsity_scale") = py::none(),
           py::arg("stance") = retrieval::to_string(kSearchDefaults.stance), py::arg("rrf_k") = kSearchDefaults.rrf_k,
           py::arg("options") = py::none(),
           kSearchDoc);
}

void register_search_settings(py::module_& m) {
  bind_search_options(m);
  bind_stance_reading(m);
}

void register_search(py::module_& m) {
  bind_stage2(m);
  bind_choices(m);
}

}  // namespace counterpoint::python
