#include "counterpoint/app/stance_run.h"

#include <algorithm>
#include <unordered_map>

#include "counterpoint/app/corpus_index.h"
#include "counterpoint/app/settings.h"
#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/data/beir.h"
#include "counterpoint/data/metadata.h"
#include "counterpoint/eval/retrieval_task.h"
#include "counterpoint/retrieval/stance.h"
#include "counterpoint/text/words.h"

namespace counterpoint::app {

namespace {

const char* kClassNames[] = {"positive", "hard", "semi-hard", "easy"};

// The query's stance as the instruction vocabulary names it.
std::string requested(const eval::StanceLabel& label) { return label.stance == "pro" ? "support" : "attack"; }

// Up to `per_class` documents of each class for `query`, in corpus order.
std::vector<std::pair<std::string, std::string>> ablation_documents(
    const eval::StanceLabel& query, const std::vector<data::Document>& corpus,
    const std::map<std::string, eval::StanceLabel>& labels, std::size_t per_class) {
  std::map<eval::DocumentClass, std::size_t> taken;
  std::vector<std::pair<std::string, std::string>> picked;  // (class name, document id)
  for (const auto& d : corpus) {
    auto label = labels.find(d.id);
    if (label == labels.end()) continue;
    const auto c = eval::classify(query, label->second);
    if (taken[c]++ < per_class) picked.emplace_back(kClassNames[int(c)], d.id);
  }
  return picked;
}

void add_scaled(eval::StanceScores& sum, const eval::StanceScores& s, double weight) {
  sum.precision_at_r += s.precision_at_r * weight;
  sum.hard_at_r += s.hard_at_r * weight;
  sum.semi_at_r += s.semi_at_r * weight;
  sum.easy_at_r += s.easy_at_r * weight;
  sum.ndcg_at_10 += s.ndcg_at_10 * weight;
}

// Cosines of query variants and documents, each distinct text encoded once (rows are unit length).
class CachedCosine {
 public:
  CachedCosine(const Encoder& encoder, const std::vector<data::Document>& corpus) : encoder_(encoder) {
    for (const auto& d : corpus) text_of_[d.id] = data::encoding_text(d);
  }
  double operator()(const std::string& query, const std::string& document_id) {
    const auto& q = row(queries_, query, TextRole::kQuery);
    const auto& d = row(documents_, text_of_.at(document_id), TextRole::kDocument);
    double dot = 0;
    for (std::size_t i = 0; i < q.size(); ++i) dot += double(q[i]) * double(d[i]);
    return dot;
  }

 private:
  using Cache = std::unordered_map<std::string, std::vector<float>>;
  const std::vector<float>& row(Cache& cache, const std::string& text, TextRole role) {
    auto it = cache.find(text);
    if (it != cache.end()) return it->second;
    EncodeOptions encode;
    encode.role = role;
    encode.prefix_override = &no_prefix_;
    const Matrix m = encoder_.encode({text}, encode);
    return cache.emplace(text, std::vector<float>(m.data(), m.data() + m.cols())).first->second;
  }
  const Encoder& encoder_;
  const std::string no_prefix_;
  std::map<std::string, std::string> text_of_;
  Cache queries_, documents_;
};

}  // namespace

StanceTemplates parse_stance_templates(const std::string& name) {
  if (name == "held-out") return StanceTemplates::kHeldOut;
  if (name == "training") return StanceTemplates::kTraining;
  throw InvalidArgument("templates must be held-out or training, got '" + name + "'");
}

std::string to_string(StanceTemplates templates) {
  return templates == StanceTemplates::kHeldOut ? "held-out" : "training";
}

void validate(const StanceRunOptions& options) {
  data::require_beir_folder(options.dataset);
  if (!path_exists(join_path(options.dataset, "metadata.jsonl"))) {
    throw FileNotFound("dataset " + options.dataset + ": metadata.jsonl not found");
  }
  if (!path_exists(options.qrels)) throw FileNotFound("qrels not found: " + options.qrels);
  if (options.search.candidates == 0) throw InvalidArgument("candidates must be >= 1");
  retrieval::validate_settings(options.search);
  const bool sparsity = options.search.scorer == retrieval::Scorer::kSparsity;
  if (options.search.scorer != retrieval::Scorer::kCosine && !sparsity) {
    throw InvalidArgument("the stance stage scores by cosine or cosine +/- alpha * sparsity; scorer '" +
                          retrieval::to_string(options.search.scorer) + "' is not one of them");
  }
  ScorerInputs inputs;
  inputs.sparse_model = options.sparse_model.empty() ? ScorerInputs::Presence::kAbsent : ScorerInputs::Presence::kGiven;
  require_scorer_inputs(options.search, inputs);
  resolve_model(options.model);
  if (sparsity) resolve_model(options.sparse_model);
}

StanceRunReport run_stance(const StanceRunOptions& options, const ProgressCallback& progress,
                           const ProgressCallback& ablation_progress) {
  validate(options);
  const auto dataset = data::load_beir(options.dataset);
  const auto qrels = data::load_qrels(options.qrels);
  const auto document_labels = eval::stance_labels(data::load_metadata(join_path(options.dataset, "metadata.jsonl")));
  std::vector<data::Query> queries;
  for (const auto& q : dataset.queries) {
    if (qrels.count(q.id)) queries.push_back(q);
  }
  if (queries.empty()) throw InvalidArgument("no query of " + options.dataset + " has judgements in " + options.qrels);
  const auto query_labels = eval::stance_labels(queries);
  const auto& templates = options.templates == StanceTemplates::kHeldOut ? training::held_out_stance_templates()
                                                                         : training::training_stance_templates();

  // P@R reads the top R, R = the query's positives: every query is searched to the deepest R (at
  // least 10, for nDCG@10), with candidates enough for it, settled before any model loads.
  retrieval::SearchOptions search = options.search;
  std::size_t depth = 10;
  std::string deepest;
  for (const auto& q : queries) {
    std::size_t r = 0;
    for (const auto& [doc, label] : document_labels) {
      r += eval::classify(query_labels.at(q.id), label) == eval::DocumentClass::kPositive;
    }
    if (r > depth) depth = r, deepest = q.id;
  }
  search.k = std::min(depth, dataset.corpus.size());
  search.candidates = candidates_for(search.candidates, search.k,
                                     deepest.empty() ? "hits nDCG@10 reads"
                                                     : "hits P@R reads for query " + deepest + " (its positives)");

  StanceRunReport report;
  auto encoder = load_model(options.model, options.threads);
  std::shared_ptr<Encoder> sparse;
  if (!options.sparse_model.empty()) sparse = load_model(options.sparse_model, options.threads);
  auto idx = cached_corpus_index(options.index_cache, dataset.corpus, *encoder, sparse.get(), progress,
                                 options.feature_cache);
  retrieval::Retriever retriever(idx, encoder, sparse);
  report.queries = queries.size();
  report.encoder = encoder->manifest().name;
  report.scoring = retrieval::describe_scoring(search, retriever.alpha_for(search), retriever.scale_for(search));
  // Each query is instruction + topic, its stance read from the instruction; E reads the whole query
  // (no model prefix), BM25 and Es the topic alone.
  search.stance = retrieval::Stance::kFromQuery;
  const std::string no_prefix;

  for (const auto& t : templates) {
    data::RankedRun run;
    for (const std::string stance : {"support", "attack"}) {
      std::vector<std::string> ids, topics, texts;
      for (const auto& q : queries) {
        if (requested(query_labels.at(q.id)) != stance) continue;
        ids.push_back(q.id);
        topics.push_back(q.text);
        texts.push_back(training::stance_query(t, stance, q.text));
      }
      if (ids.empty()) continue;
      auto encoded = retriever.encode_queries(texts, search, &no_prefix);
      for (const auto& reading : encoded.stances) {
        if (retrieval::to_string(reading.stance) != stance || !reading.from_instruction) {
          throw InvalidArgument("the instruction \"" + text::trim_blanks(stance == "support" ? t.support : t.attack) +
                                "\" does not read as " + stance + " (retrieval::read_stance)");
        }
      }
      encoded.texts = topics;
      const auto part = eval::ranked_run(ids, retriever.search_encoded(encoded, search));
      run.insert(part.begin(), part.end());
    }
    const auto scores = eval::evaluate_stance(run, query_labels, document_labels).mean;
    report.per_template.emplace_back(t, scores);
    add_scaled(report.mean, scores, 1.0 / double(templates.size()));
  }
  if (options.ablation == 0) return report;

  CachedCosine cosine(*encoder, dataset.corpus);
  eval::AblationOptions ablation;
  ablation.compose = [](const std::string& instruction, const std::string& claim) {
    return instruction.empty() ? claim : instruction + " " + claim;
  };
  std::vector<std::pair<std::string, eval::WordAblation>> labelled;
  const auto& first = templates.front();
  for (std::size_t i = 0; i < queries.size(); ++i) {
    const auto& label = query_labels.at(queries[i].id);
    const eval::AblationQuery query{text::trim_blanks(requested(label) == "support" ? first.support : first.attack),
                                    queries[i].text};
    for (const auto& [name, id] : ablation_documents(label, dataset.corpus, document_labels, options.ablation)) {
      labelled.emplace_back(name, eval::ablate_words(query, id, std::ref(cosine), ablation));
    }
    report_progress(ablation_progress, i + 1, queries.size(), "word ablation");
  }
  report.ablation = eval::summarize_ablation(labelled);
  return report;
}

}  // namespace counterpoint::app
