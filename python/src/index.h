// The Python face's Index and what a search returns, shared by index.cpp (the Index type and its
// contents), search.cpp (Index.search, rerank and the search settings) and results.cpp (Hit and
// SearchResults).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/index/document_index.h"
#include "counterpoint/retrieval/retriever.h"

namespace counterpoint::python {

// An index and the encoders that fill and query it (None for an index of rows made elsewhere).
struct PyIndex {
  std::shared_ptr<index::DocumentIndex> documents;
  std::shared_ptr<const Encoder> encoder;
  std::shared_ptr<const Encoder> sparse_encoder;
};

// Index.search's result: a list of per-query Hit lists (indexing, iteration, len), plus FAISS's
// view of the same: (n, k) arrays padded with -1 (slots) and NaN (scores) past the hits found.
struct SearchResults {
  std::vector<std::vector<retrieval::Hit>> hits;
  std::size_t k = 0;
  retrieval::AlphaChoice alpha;  // the alpha stage 2 used (sparsity scorers)
  std::size_t candidates = 0;    // stage-1 candidates per query (K)
  std::vector<retrieval::StanceReading> stances;  // per query text (none for query vectors)
  retrieval::ScaleChoice scale;  // the magnitude gate of the sparsity term
  std::string scoring;           // retrieval::describe_scoring: the line every face prints
};

// A count argument, >= 1; ValueError naming it otherwise.
std::size_t positive(py::ssize_t value, const char* name);

// Texts need the index's encoder: ValueError saying how to load the index with it, or to pass
// vectors, for an index without one.
void require_index_encoder(const PyIndex& index, const char* what);

// A str argument as UTF-8: TypeError naming it for another type (as pybind11's own cast would),
// ValueError for a str without a UTF-8 form (a lone surrogate), not pybind11's TypeError.
std::string str_argument(py::handle value, const char* name);

// Where an alpha or a sparsity scale came from, as Python sees it: "given", "recorded", ...
const char* choice_source(retrieval::AlphaChoice::Source source);

// The bindings register_index makes, in the order their signatures need: SearchOptions and
// StanceReading (search.cpp), Hit and SearchResults (results.cpp), Index with Index.search
// (index.cpp, search.cpp), then rerank, encode_queries and the alpha and scale choices (search.cpp).
void register_search_settings(py::module_& m);
void register_results(py::module_& m);
void bind_index_search(py::class_<PyIndex>& index);
void register_search(py::module_& m);

}  // namespace counterpoint::python
