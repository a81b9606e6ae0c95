// counterpoint.Index: a DocumentIndex together with the encoder(s) that fill and query it, built
// through app::build_index, filled, read back, saved and loaded with the GIL released. Searching it
// lives in search.cpp, its results in results.cpp.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "counterpoint/app/corpus_index.h"
#include "counterpoint/app/index_search.h"
#include "counterpoint/core/errors.h"
#include "counterpoint/retrieval/explain.h"
#include "index.h"

namespace counterpoint::python {

std::size_t positive(py::ssize_t value, const char* name) {
  if (value <= 0) throw py::value_error(std::string(name) + " must be >= 1, got " + std::to_string(value));
  return std::size_t(value);
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

std::string str_argument(py::handle value, const char* name) {
  if (!py::isinstance<py::str>(value)) {
    throw py::type_error(std::string(name) + " must be str, got " + type_name(value));
  }
  return text_of(value, name);
}

namespace {

using index::DocumentIndex;

void require_encoder(const std::shared_ptr<Encoder>& encoder) {
  if (!encoder) throw py::value_error("encoder is required (an Encoder, not None)");
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

void add_texts(PyIndex& self, py::object texts, py::object ids, py::object progress, py::ssize_t batch_size) {
  require_index_encoder(self, "Index.add");
  std::vector<std::string> text_values = text_list(texts, "texts");
  std::vector<std::string> id_values = text_list(ids, "ids");  // paired up by add_documents, before any encoding
  const std::size_t batch = positive(batch_size, "batch_size");
  ProgressBridge bridge(progress, "index");
  run_released(bridge, [&] {
    retrieval::add_documents(*self.documents, text_values, id_values, *self.encoder,
                             self.sparse_encoder.get(), batch, bridge.callback());
    return 0;
  });
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

py::dict explain(const PyIndex& self, py::handle query_text, py::handle hit, py::ssize_t top_tokens,
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
}

// Index.build's defaults: the library's, from one default-constructed struct.
const app::IndexBuild kBuildDefaults{};

const char* const kBuildDoc = R"(Encodes `texts` and indexes them under `ids`.

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
    KeyboardInterrupt when cancelled.)";

const char* const kBuildFromEmbeddingsDoc = R"(An index of rows computed elsewhere (a cached encoding, another pipeline).

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
the encoders whose identities it records to search with texts.)";

const char* const kLoadDoc = R"(Reads an index written by save().

Arguments:
    path: the index directory.
    encoder: the Encoder the index was built with (its identity and width are checked); None
        loads it for search by query vectors only, as an index built from embeddings made
        elsewhere (encoder_id="external") is searched.
    sparse_encoder: the Encoder that produced Es, when the index stores Es.

Raises:
    FileNotFoundError when `path` does not exist, CorruptFileError for damaged or foreign
    content, ValueError when an encoder is not the one the index records or its width does not
    match the stored rows.)";

const char* const kExplainDoc = R"(Why passage `hit_id` scores as it does against `query`.

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
    sparsity_scale below 0.)";

// Index.build, Index.build_from_embeddings and Index.load: the ways an Index comes to be.
void bind_construction(py::class_<PyIndex>& index) {
  index.def_static("build", &build, py::arg("texts"), py::arg("ids"), py::kw_only(), py::arg("encoder"),
                  py::arg("sparse_encoder") = nullptr, py::arg("kind") = kBuildDefaults.kind,
                  py::arg("fp16") = kBuildDefaults.fp16, py::arg("tokens") = kBuildDefaults.tokens,
                  py::arg("bm25") = kBuildDefaults.bm25, py::arg("stem") = kBuildDefaults.stem,
                  py::arg("progress") = false, py::arg("batch_size") = kBuildDefaults.batch_size,
                  kBuildDoc)
      .def_static("build_from_embeddings", &build_from_embeddings, py::arg("ids"), py::arg("embeddings"),
                  py::arg("sparse_embeddings") = py::none(), py::arg("texts") = py::none(), py::kw_only(),
                  py::arg("encoder_id"), py::arg("sparse_encoder_id") = py::none(),
                  py::arg("kind") = kBuildDefaults.kind, py::arg("fp16") = kBuildDefaults.fp16,
                  py::arg("bm25") = false,  // rows made elsewhere may come without their texts
                  kBuildFromEmbeddingsDoc)
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
          kLoadDoc);
}

// Adding, removing and reading back documents and their stored rows, and saving.
void bind_contents(py::class_<PyIndex>& index) {
  index.def("add", &add_texts, py::arg("texts"), py::arg("ids"), py::kw_only(), py::arg("progress") = false,
          py::arg("batch_size") = retrieval::kDocumentsPerStep,
          R"(Encodes and adds documents. Ids must be new (a removed id may be added again).

Raises ValueError for mismatched lengths or an id that is empty, repeated or already present.)")
      .def(
          "add_embeddings",
          [](PyIndex& self, py::object ids, py::object embeddings, py::object sparse_embeddings, py::object texts) {
            add_rows(*self.documents, ids, embeddings, sparse_embeddings, texts);
          },
          py::arg("ids"), py::arg("embeddings"), py::arg("sparse_embeddings") = py::none(),
          py::arg("texts") = py::none(),
          R"(Adds rows computed elsewhere, all or nothing (ids checked as by add). The rows must come from
the models the index records.)")
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
same ones again to Index.load. Raises OSError on file-system failures.)");
}

void bind_properties(py::class_<PyIndex>& index) {
  index.def_property_readonly(
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
      .def("explain", &explain, py::arg("query"), py::arg("hit_id"), py::kw_only(), py::arg("top_tokens") = 5,
          py::arg("top_coordinates") = 5, py::arg("stance") = retrieval::to_string(retrieval::SearchOptions{}.stance),
          py::arg("prefix") = py::none(), py::arg("sparsity_scale") = py::none(),
          kExplainDoc)
      .def("__repr__", [](const PyIndex& self) {
        return "Index(documents=" + std::to_string(self.documents->size()) + ", kind='" +
               self.documents->options().kind + "', dim=" + std::to_string(self.documents->options().dim) +
               ", encoder=" + (self.encoder ? "'" + self.encoder->manifest().name + "'" : std::string("None")) + ")";
      });
}

}  // namespace

void register_index(py::module_& m) {
  register_search_settings(m);
  register_results(m);
  py::class_<PyIndex> index(m, "Index", R"(A searchable document collection: ids, texts, dense embeddings (E), optionally
sparse-aware embeddings (Es) and token embeddings, a FAISS index over E and BM25 postings.

Create one with Index.build(texts, ids, encoder=...) or Index.load(path, encoder=...).)");
  bind_construction(index);
  bind_contents(index);
  bind_properties(index);
  bind_index_search(index);
  register_search(m);
}

}  // namespace counterpoint::python
