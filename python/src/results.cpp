// counterpoint.Hit and counterpoint.SearchResults: a search's hits with every score component,
// and the FAISS-style arrays of the same.
#include <cstdio>
#include <limits>

#include "index.h"

namespace counterpoint::python {

namespace {

using retrieval::Hit;

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

std::string format_score(float value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.4f", double(value));
  return buffer;
}

// What a search whose stage 1 ran elsewhere reports: the hits of rerank, with the depth, alpha and
// scale `options` chose, as Index.search's own results carry them.
SearchResults reranked_results(std::vector<std::vector<Hit>> hits, const retrieval::SearchOptions& options,
                               std::shared_ptr<Encoder> sparse_encoder,
                               std::vector<retrieval::StanceReading> stances) {
  retrieval::validate_search(options);
  if (!stances.empty() && stances.size() != hits.size()) {
    throw py::value_error("stances must hold one StanceReading per query: got " + std::to_string(stances.size()) +
                          " for " + std::to_string(hits.size()) + " queries");
  }
  for (std::size_t q = 0; q < hits.size(); ++q) {
    if (hits[q].size() > options.k) {
      throw py::value_error("hits[" + std::to_string(q) + "] holds " + std::to_string(hits[q].size()) +
                            " hits, more than options.k = " + std::to_string(options.k));
    }
  }
  SearchResults results{std::move(hits), options.k, retrieval::choose_alpha(options.alpha, sparse_encoder.get()),
                        options.candidates, std::move(stances)};
  results.scale = retrieval::choose_sparsity_scale(options.sparsity.scale, sparse_encoder.get());
  results.scoring = retrieval::describe_scoring(options, results.alpha, results.scale);
  return results;
}

}  // namespace

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

namespace {

void bind_hit(py::module_& m) {
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
}

void bind_search_results(py::module_& m) {
  py::class_<SearchResults>(m, "SearchResults", R"(What Index.search returns: per query, a list of up to k Hit objects, best
first (index it, iterate it, len() it like a list of lists), and the same as FAISS-style arrays:

    scores, cosine, sparsity, bm25, stage1, token: float32 (n, k), NaN past the hits found;
    slots: int64 (n, k), the documents' rows in the index, -1 past the hits found;
    ids: per query, the list of document ids.

to_pandas() gives one row per hit (pandas optional); a notebook shows the hits as a table.)")
      .def(py::init(&reranked_results), py::arg("hits"), py::arg("options"), py::kw_only(),
           py::arg("sparse_encoder") = nullptr, py::arg("stances") = std::vector<retrieval::StanceReading>{},
           R"(The results of a search whose stage 1 ran elsewhere (counterpoint.milvus, a user's own store):
`hits`, per query the Hit list rerank returned under `options` (a SearchOptions), with the alpha and
sparsity scale those options choose for `sparse_encoder`, as Index.search reports them.)")
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
      .def_readonly("scoring", &SearchResults::scoring,
                    "The scoring line `counterpoint search` prints: scorer, alpha and gate with where each came from.")
      .def(
          "arrays", [](const SearchResults& r) { return py::make_tuple(padded_component(r, &Hit::score), slots_array(r)); },
          "FAISS's pair: (scores float32 (n, k), slots int64 (n, k)), NaN / -1 past the hits found, as in "
          "`D, I = index.search(x, k)`.")
      .def("__repr__", [](const SearchResults& r) {
        return "SearchResults(queries=" + std::to_string(r.hits.size()) + ", k=" + std::to_string(r.k) + ")";
      });
}

}  // namespace

void register_results(py::module_& m) {
  bind_hit(m);
  bind_search_results(m);
}

}  // namespace counterpoint::python
