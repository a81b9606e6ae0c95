// counterpoint.load_beir / load_qrels / evaluate / evaluate_stance / tune_alpha: data sets in, metrics out.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "counterpoint/data/beir.h"
#include "counterpoint/data/corpus_files.h"
#include "counterpoint/data/run.h"
#include "counterpoint/eval/alpha_search.h"
#include "counterpoint/eval/metrics.h"
#include "counterpoint/eval/stance.h"

namespace counterpoint::python {

using namespace pybind11::literals;

namespace {

// tune_alpha's defaults: the library's, from one default-constructed struct.
const eval::AlphaSearch kAlphaSearchDefaults{};

// Corpus and queries become Python lists once, so reading ds.corpus[i] copies nothing.
struct Dataset {
  std::string directory;
  py::list corpus;
  py::list queries;
  std::vector<std::string> splits;
};

py::object to_python_json(const nlohmann::json& value) {
  return py::module_::import("json").attr("loads")(value.dump());
}

std::string as_id(py::handle value, const char* what) {
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  // An int, or a numpy integer (__index__) as pandas' columns give ids.
  if (py::isinstance<py::int_>(value) || PyIndex_Check(value.ptr())) {
    return std::string(py::str(py::int_(py::reinterpret_borrow<py::object>(value))));
  }
  throw py::type_error(std::string(what) + " must be str (or int), got " + type_name(value));
}

double as_score(py::handle value, const std::string& where) {
  try {
    return value.cast<double>();
  } catch (const py::cast_error&) {
    throw py::type_error("score of " + where + " must be a number, got " + type_name(value));
  }
}

// {qid: {docid: score}} or {qid: [(docid, score), ...]} -> RankedRun (rank order = score order).
data::RankedRun to_run(py::handle run) {
  if (!py::isinstance<py::dict>(run)) {
    throw py::type_error("run must be a dict {query_id: {doc_id: score}} or {query_id: [(doc_id, score)]}");
  }
  data::RankedRun result;
  for (auto [key, ranking] : py::reinterpret_borrow<py::dict>(run)) {
    const std::string qid = as_id(key, "run query id");
    std::vector<data::ScoredDoc>& docs = result[qid];
    if (py::isinstance<py::dict>(ranking)) {
      for (auto [doc, score] : py::reinterpret_borrow<py::dict>(ranking)) {
        const std::string did = as_id(doc, "run document id");
        docs.push_back({did, float(as_score(score, "run[" + qid + "][" + did + "]"))});
      }
    } else if (py::isinstance<py::sequence>(ranking) && !py::isinstance<py::str>(ranking)) {
      for (py::handle pair : py::reinterpret_borrow<py::sequence>(ranking)) {
        if (!py::isinstance<py::sequence>(pair) || py::isinstance<py::str>(pair) || py::len(pair) != 2) {
          throw py::type_error("run[" + qid + "] must hold (doc_id, score) pairs");
        }
        const std::string did = as_id(pair[py::int_(0)], "run document id");
        docs.push_back({did, float(as_score(pair[py::int_(1)], "run[" + qid + "][" + did + "]"))});
      }
    } else {
      throw py::type_error("run[" + qid + "] must be a dict {doc_id: score} or a list of (doc_id, score)");
    }
    std::stable_sort(docs.begin(), docs.end(),
                     [](const data::ScoredDoc& a, const data::ScoredDoc& b) { return a.score > b.score; });
  }
  return result;
}

// A relevance grade: an integer (int, bool, numpy's integers and bool, as pandas' columns give
// them) or a float holding a whole number (an int column with a gap reads as float64 in pandas);
// ValueError for a fraction, NaN or a value beyond int, TypeError for what is no number.
int as_grade(py::handle grade, const std::string& where) {
  const auto out_of_range = [&] {
    return py::value_error(where + " = " + std::string(py::str(grade)) + " is out of range (grades are integers from " +
                           std::to_string(std::numeric_limits<int>::min()) + " to " +
                           std::to_string(std::numeric_limits<int>::max()) + ")");
  };
  const bool has_float = py::hasattr(grade, "__float__") && !py::isinstance<py::str>(grade);
  if (py::isinstance<py::int_>(grade) || (!has_float && PyIndex_Check(grade.ptr()))) {
    const py::object integer = py::reinterpret_steal<py::object>(PyNumber_Index(grade.ptr()));
    if (!integer) throw py::error_already_set();
    int overflow = 0;
    const long long value = PyLong_AsLongLongAndOverflow(integer.ptr(), &overflow);
    if (overflow != 0 || value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
      throw out_of_range();
    }
    return int(value);
  }
  // numpy's integers and bool, floats: read as a number (exact for every value an int holds).
  if (!has_float) throw py::type_error(where + " must be an int grade, got " + type_name(grade));
  const double value = PyFloat_AsDouble(grade.ptr());
  if (value == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    throw py::type_error(where + " must be an int grade, got " + type_name(grade));
  }
  if (!std::isfinite(value) || value != std::floor(value)) {
    throw py::value_error(where + " = " + std::string(py::str(grade)) + " is not a whole number (grades are integers)");
  }
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
    throw out_of_range();
  }
  return int(value);
}

data::Qrels to_qrels(py::handle qrels) {
  if (!py::isinstance<py::dict>(qrels)) throw py::type_error("qrels must be a dict {query_id: {doc_id: grade}}");
  data::Qrels result;
  for (auto [key, judgements] : py::reinterpret_borrow<py::dict>(qrels)) {
    const std::string qid = as_id(key, "qrels query id");
    if (!py::isinstance<py::dict>(judgements)) throw py::type_error("qrels[" + qid + "] must be a dict {doc_id: grade}");
    for (auto [doc, grade] : py::reinterpret_borrow<py::dict>(judgements)) {
      const std::string did = as_id(doc, "qrels document id");
      result[qid][did] = as_grade(grade, "qrels[" + qid + "][" + did + "]");
    }
  }
  return result;
}

// Stance labels as a notebook holds them: {id: (topic, stance)} or {id: {"topic_id": ..., "stance": ...}}
// (the metadata.jsonl fields); a stance is canonicalised ("support" -> "pro") or refused by id.
std::map<std::string, eval::StanceLabel> to_stance_labels(py::handle labels, const char* name) {
  if (!py::isinstance<py::dict>(labels)) {
    throw py::type_error(std::string(name) + " must be a dict {id: (topic, stance)}, got " + type_name(labels));
  }
  std::map<std::string, eval::StanceLabel> result;
  for (auto [key, value] : py::reinterpret_borrow<py::dict>(labels)) {
    const std::string id = as_id(key, name);
    const std::string where = std::string(name) + "[" + id + "]";
    py::object topic, stance;
    if (py::isinstance<py::dict>(value) && value.contains("topic_id") && value.contains("stance")) {
      topic = value["topic_id"];
      stance = value["stance"];
    } else if (py::isinstance<py::sequence>(value) && !py::isinstance<py::str>(value) && py::len(value) == 2) {
      topic = value[py::int_(0)];
      stance = value[py::int_(1)];
    } else {
      throw py::type_error(where + " must be (topic, stance) or a dict with topic_id and stance, got " +
                           type_name(value));
    }
    result[id] = {as_id(topic, (where + " topic").c_str()), eval::canonical_stance(text_of(stance, where), where)};
  }
  return result;
}

py::dict stance_scores_dict(const eval::StanceScores& s) {
  return py::dict("P@R"_a = s.precision_at_r, "Hard@R"_a = s.hard_at_r, "Semi@R"_a = s.semi_at_r,
                  "Easy@R"_a = s.easy_at_r, "nDCG@10"_a = s.ndcg_at_10);
}

// A file a data-layer reader reads from the path argument `path`, the GIL released meanwhile.
template <typename Read>
auto read_without_gil(py::handle path, Read read) {
  const std::string file = path_argument(path, "path");
  py::gil_scoped_release release;
  return read(file);
}

// Documents, queries and data sets, and the readers that make them.
void bind_data_types(py::module_& m) {
  py::class_<data::Document>(m, "Document", "A corpus document: id, title ('' when absent) and text.")
      .def_readonly("id", &data::Document::id)
      .def_readonly("title", &data::Document::title)
      .def_readonly("text", &data::Document::text)
      .def_property_readonly("encoding_text", &data::encoding_text,
                             "The text encoded for it, as BEIR does: title + ' ' + text, or the text alone.")
      .def("__repr__", [](const data::Document& d) {
        return "Document(id=" + std::string(py::repr(py::str(d.id))) + ", title=" +
               std::string(py::repr(py::str(d.title))) + ")";
      });
  py::class_<data::Query>(m, "Query", "A query: id, text and every other field of its JSON line (extra).")
      .def_readonly("id", &data::Query::id)
      .def_readonly("text", &data::Query::text)
      .def_property_readonly("extra", [](const data::Query& q) { return to_python_json(q.extra); })
      .def("__repr__", [](const data::Query& q) {
        return "Query(id=" + std::string(py::repr(py::str(q.id))) + ", text=" +
               std::string(py::repr(py::str(q.text))) + ")";
      });
  py::class_<Dataset>(m, "Dataset", "A data set in BEIR layout, as read by load_beir().")
      .def_readonly("corpus", &Dataset::corpus, "List of Document, in file order.")
      .def_readonly("queries", &Dataset::queries, "List of Query, in file order.")
      .def_readonly("splits", &Dataset::splits, "Names of the qrels/*.tsv files present, sorted.")
      .def_readonly("directory", &Dataset::directory, "The data set directory.")
      .def(
          "qrels",
          [](const Dataset& d, py::handle split) {
            // The split names a file (qrels/<split>.tsv): a path part, converted as one.
            return data::load_qrels(data::qrels_path(d.directory, path_argument(split, "split", "a split name (str)")));
          },
          py::arg("split"), "The judgements of one split: {query_id: {doc_id: grade}}.")
      .def("__repr__", [](const Dataset& d) {
        return "Dataset(directory='" + d.directory + "', corpus=" + std::to_string(py::len(d.corpus)) +
               ", queries=" + std::to_string(py::len(d.queries)) + ")";
      });

  m.def(
      "load_beir",
      [](py::handle path) {
        Dataset dataset;
        dataset.directory = path_argument(path, "dataset_dir");
        data::BeirDataset content;
        {
          py::gil_scoped_release release;
          content = data::load_beir(dataset.directory, /*expect_qrels=*/true);
        }
        for (data::Document& document : content.corpus) dataset.corpus.append(py::cast(std::move(document)));
        for (data::Query& query : content.queries) dataset.queries.append(py::cast(std::move(query)));
        dataset.splits = std::move(content.splits);
        return dataset;
      },
      py::arg("dataset_dir"),
      R"(Loads a data set in BEIR layout: corpus.jsonl, queries.jsonl and the names of qrels/*.tsv.

Returns a Dataset with corpus (list of Document), queries (list of Query), splits (list of str)
and qrels(split). Raises FileNotFoundError for a missing file, CorruptFileError for bad lines.)");
  m.def(
      "load_corpus", [](py::handle path) { return read_without_gil(path, data::load_documents); },
      py::arg("path"),
      R"(Reads a corpus as `counterpoint index build --corpus` does: a BEIR folder (its corpus.jsonl), or
a .jsonl, .csv or .tsv file (a header naming one column each for id, text and optionally title) or a
.txt file (one document per line, its id the line number). Returns a list of Document (id, title,
text, encoding_text). Raises FileNotFoundError, or CorruptFileError naming the file and line.)");
  m.def(
      "load_queries", [](py::handle path) {
        return read_without_gil(path, [](const std::string& file) { return data::load_query_file(file); });
      },
      py::arg("path"),
      R"(Reads queries as `counterpoint search --queries` does: a queries.jsonl, a .csv or .tsv with id
and text columns, or a text file of one query per line (ids q1, q2, ...). Returns a list of Query.
Raises FileNotFoundError, or CorruptFileError naming the file and line.)");
  m.def(
      "load_qrels",
      [](py::handle path) { return read_without_gil(path, data::load_qrels); },
      py::arg("path"),
      R"(Reads relevance judgements (BEIR TSV with header, 3-column or TREC 4-column) into
{query_id: {doc_id: grade}}. Raises FileNotFoundError / CorruptFileError.)");
}

// Metrics of a run: relevance (evaluate) and stance (evaluate_stance).
void bind_evaluation(py::module_& m) {
  m.def(
      "evaluate",
      [](py::handle run, py::handle qrels, const std::vector<std::string>& metrics, bool exclude_self,
         bool per_query) -> py::object {
        data::RankedRun ranked = to_run(run);
        data::Qrels judgements = to_qrels(qrels);
        eval::EvalOptions options;
        options.exclude_self = exclude_self;
        eval::EvalResult result;
        {
          py::gil_scoped_release release;
          result = eval::evaluate(ranked, judgements, metrics, options);
        }
        if (const std::string unranked = eval::describe_unranked(result); !unranked.empty()) {
          if (PyErr_WarnEx(PyExc_UserWarning, unranked.c_str(), 1) != 0) throw py::error_already_set();
        }
        if (per_query) return py::cast(result.per_query);
        return py::cast(result.mean);
      },
      py::arg("run"), py::arg("qrels"), py::arg("metrics") = std::vector<std::string>{"ndcg@10"},
      py::kw_only(), py::arg("exclude_self") = true, py::arg("per_query") = false,
      R"(Scores a run against qrels exactly as trec_eval / pytrec_eval do.

Arguments:
    run: {query_id: {doc_id: score}} or {query_id: [(doc_id, score), ...]}.
    qrels: {query_id: {doc_id: grade}} (e.g. from load_qrels); a grade is an int, a numpy integer
        (as pandas gives) or a float holding a whole number.
    metrics: names such as "ndcg@10", "recall@100", "p@10", "mrr@10", "acc@1", "map", "map@100", "p@r"; nDCG@k for any k.
    exclude_self: drop a document whose id equals the query id (BEIR convention, ArguAna).
    per_query: return {query_id: {metric: value}} instead of the means.

Returns:
    {metric: mean over the queries that have qrels}; a query without a ranking scores 0 (and a
    UserWarning names the unranked queries).

Raises:
    ValueError for empty qrels, a run that ranks none of the judged queries (ids that do not
    match), an unknown metric, a document listed twice, a non-finite score or a grade that is not
    a whole number;
    TypeError for a run or qrels of the wrong shape.)");
  m.def(
      "evaluate_stance",
      [](py::handle run, py::handle query_labels, py::handle document_labels, bool per_query) -> py::object {
        const data::RankedRun ranked = to_run(run);
        const auto queries = to_stance_labels(query_labels, "query_labels");
        const auto documents = to_stance_labels(document_labels, "document_labels");
        eval::StanceEvaluation result;
        {
          py::gil_scoped_release release;
          result = eval::evaluate_stance(ranked, queries, documents);
        }
        if (!per_query) return stance_scores_dict(result.mean);
        py::dict out;
        for (const auto& [qid, scores] : result.per_query) out[py::str(qid)] = stance_scores_dict(scores);
        return out;
      },
      py::arg("run"), py::arg("query_labels"), py::arg("document_labels"), py::kw_only(), py::arg("per_query") = false,
      R"(Stance-aware metrics of a run, as `counterpoint stance` reports them: for a query asking for
stance s on topic t, a document of topic t and stance s is a positive, of topic t and the other
stance a hard error, of another topic and stance s semi-hard, else easy; over the top R (R = the
query's positives in the labelled corpus) P@R, Hard@R, Semi@R and Easy@R are shares of R, and
nDCG@10 uses binary gains.

Arguments:
    run: {query_id: {doc_id: score}} or {query_id: [(doc_id, score), ...]} (as evaluate takes),
        ranked by score with ties in trec_eval's order (by document id, descending).
    query_labels, document_labels: {id: (topic, stance)} or {id: {"topic_id": ..., "stance": ...}};
        a stance is "pro"/"support"/"supporting" or "con"/"attack"/"attacking"/"contest".
    per_query: return {query_id: metrics} instead of the means.

Returns:
    {"P@R", "Hard@R", "Semi@R", "Easy@R", "nDCG@10"} means over every labelled query (a query
    without a ranking or without positives scores 0 and counts).

Raises:
    ValueError for a ranked document without a label or an unknown stance; TypeError for labels
    of the wrong shape.)");
}

// The alpha search SparseCL tunes on dev.
void bind_alpha_search(py::module_& m) {
  m.def(
      "tune_alpha",
      [](py::function objective, const std::string& method, double lo, double hi, int bins, double min_width,
         double grid_step) {
        eval::AlphaSearch search;
        search.kind = eval::parse_alpha_search(method);
        search.lo = lo;
        search.hi = hi;
        search.bins = bins;
        search.min_width = min_width;
        search.grid_step = grid_step;
        eval::AlphaResult result = eval::tune_alpha(
            [&objective](double alpha) {
              const py::object score = objective(alpha);
              // pybind11's own cast fails with a RuntimeError "Unable to cast ...".
              if (!py::isinstance<py::float_>(score) && !py::isinstance<py::int_>(score) &&
                  !py::hasattr(score, "__float__")) {
                throw py::type_error("tune_alpha: objective(" + std::to_string(alpha) + ") returned " +
                                     type_name(score) +
                                     ", not a number");
              }
              return py::float_(score).cast<double>();
            },
            search);
        py::list curve;
        for (const eval::AlphaPoint& point : result.curve) curve.append(py::make_tuple(point.alpha, point.score));
        py::dict answer;
        answer["best_alpha"] = result.best_alpha;
        answer["best_score"] = result.best_score;
        if (search.kind != eval::AlphaSearch::Kind::kGrid) {
          answer["reference_alpha"] = result.reference_alpha;
          answer["reference_score"] = result.reference_score;
        }
        answer["curve"] = curve;
        return answer;
      },
      py::arg("objective"), py::kw_only(), py::arg("method") = eval::to_string(kAlphaSearchDefaults.kind),
      py::arg("lo") = kAlphaSearchDefaults.lo, py::arg("hi") = kAlphaSearchDefaults.hi,
      py::arg("bins") = kAlphaSearchDefaults.bins, py::arg("min_width") = kAlphaSearchDefaults.min_width,
      py::arg("grid_step") = kAlphaSearchDefaults.grid_step,
      R"(Finds the alpha in [lo, hi] maximising objective(alpha) (e.g. nDCG@10 on a dev split).

Arguments:
    objective: callable float -> float; it must return a finite number.
    method: "interval" (SparseCL's search: split into `bins` bins, keep the best midpoint's bin,
        repeat until narrower than min_width, score the final left edge; returns the best point
        of all those evaluations), "reference" (the same evaluations, returning the left edge as
        the SparseCL code does) or "grid" (every lo + i * grid_step up to hi).
    lo, hi: the search range, lo < hi.
    bins, min_width: interval search settings (bins >= 2, min_width > 0).
    grid_step: grid spacing (> 0).

Returns:
    dict(best_alpha=float, best_score=float, curve=[(alpha, score), ...] in call order); the
    interval methods add reference_alpha / reference_score, the reference search's left edge.

Raises:
    ValueError for invalid settings or a non-finite objective value; an exception raised by
    the objective propagates unchanged.)");
}

}  // namespace

void register_data(py::module_& m) {
  bind_data_types(m);
  bind_evaluation(m);
  bind_alpha_search(m);
}

}  // namespace counterpoint::python
