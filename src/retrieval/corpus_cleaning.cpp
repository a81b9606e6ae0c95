#include "counterpoint/retrieval/corpus_cleaning.h"

#include <cmath>
#include <filesystem>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"

namespace counterpoint::retrieval {

void validate(const CleaningOptions& options) {
  if (!options.threshold && options.top == 0) {
    throw InvalidArgument("corpus cleaning: top must be >= 1 (or give a threshold)");
  }
  if (options.threshold && !std::isfinite(*options.threshold)) {
    throw InvalidArgument("corpus cleaning: the threshold must be finite");
  }
  if (options.alpha && !std::isfinite(*options.alpha)) throw InvalidArgument("corpus cleaning: alpha must be finite");
  choose_sparsity_scale(options.sparsity_scale, nullptr);  // a given scale's range
  if (options.candidates == 0) throw InvalidArgument("corpus cleaning: candidates must be >= 1");
  if (!options.threshold && options.candidates < options.top) {
    throw InvalidArgument("corpus cleaning: candidates (" + std::to_string(options.candidates) +
                          ") must be >= top (" + std::to_string(options.top) + "): each removal is one of them");
  }
}

void require_cleaning_output(const std::string& out_dir) {
  namespace fs = std::filesystem;
  std::error_code error;
  // Stricter than the output rule, which it also applies: only a new or empty folder.
  require_safe_output(out_dir, "corpus cleaning: output", {}, OutputKind::kFolder);
  if (fs::exists(out_dir, error) && !fs::is_empty(out_dir, error)) {
    throw InvalidArgument("corpus cleaning: " + out_dir +
                          " exists and is not an empty directory; the cleaned corpus goes to a new directory");
  }
}

CleaningReport find_contradicted(const Retriever& retriever, const std::vector<std::string>& trusted,
                                 const CleaningOptions& options) {
  if (trusted.empty()) throw InvalidArgument("corpus cleaning: no trusted texts");
  validate(options);
  if (!retriever.sparse_encoder()) {
    throw InvalidArgument("corpus cleaning needs a sparse-aware encoder (Es): it removes by cos + alpha * sparsity");
  }
  const index::DocumentIndex& index = retriever.index();
  CleaningReport report;
  report.trusted = trusted.size();
  report.documents = index.size();
  report.alpha = choose_alpha(options.alpha, retriever.sparse_encoder());
  report.scale = choose_sparsity_scale(options.sparsity_scale, retriever.sparse_encoder());

  // A passage that is itself trusted is never removed: excluded from every search, so the top N
  // counts other passages only.
  const std::unordered_set<std::string> trusted_texts(trusted.begin(), trusted.end());
  std::vector<std::string> protected_ids;
  index.for_each_live([&](index::Slot s) {
    if (trusted_texts.count(index.text(s))) protected_ids.push_back(index.id(s));
  });
  report.protected_passages = protected_ids.size();

  SearchOptions search;
  search.scorer = Scorer::kSparsity;
  search.alpha = report.alpha.value;
  search.sparsity.scale = report.scale.value;
  search.sparsity.identical_guard = options.identical_guard;
  // Cleaning removes what contradicts a trusted text, whatever the text's wording looks like.
  search.stance = Stance::kAttack;
  const std::size_t searchable = index.size() - protected_ids.size();
  search.candidates = std::max<std::size_t>(1, std::min(options.candidates, index.size()));
  // With a threshold every candidate is a possible removal; otherwise the top N.
  search.k = options.threshold ? search.candidates : std::min(options.top, search.candidates);
  if (searchable == 0) return report;

  EncodedQueries queries = retriever.encode_queries(trusted, search);
  queries.exclude.assign(trusted.size(), protected_ids);
  const auto hits = retriever.search_encoded(queries, search);
  std::unordered_set<std::string> removed;
  for (std::size_t t = 0; t < hits.size(); ++t) {
    for (std::size_t r = 0; r < hits[t].size(); ++r) {
      const Hit& h = hits[t][r];
      if (options.threshold ? h.score < *options.threshold : r >= options.top) break;
      if (!removed.insert(h.id).second) continue;
      report.removed.push_back({h.id, t, r, h.score, h.cosine, h.sparsity});
    }
  }
  return report;
}

void write_cleaned_corpus(const std::string& out_dir, const std::vector<data::Document>& corpus,
                          const std::vector<std::string>& trusted, const CleaningReport& report) {
  namespace fs = std::filesystem;
  std::error_code error;
  require_cleaning_output(out_dir);
  if (!fs::exists(out_dir, error) && (!fs::create_directories(out_dir, error) || error)) {
    throw IoError("corpus cleaning: cannot create " + out_dir + ": " + error.message());
  }
  std::unordered_map<std::string, const Removal*> removal_of;
  for (const Removal& r : report.removed) removal_of[r.id] = &r;
  std::unordered_map<std::string, const data::Document*> document_of;
  std::string kept;
  for (const data::Document& d : corpus) {
    document_of[d.id] = &d;
    if (removal_of.count(d.id)) continue;
    kept += nlohmann::json{{"_id", d.id}, {"title", d.title}, {"text", d.text}}.dump() + "\n";
  }
  std::string lines;
  for (const Removal& r : report.removed) {
    auto document = document_of.find(r.id);
    if (document == document_of.end()) {
      throw InvalidArgument("corpus cleaning: removed passage '" + r.id + "' is not in the corpus given");
    }
    lines += nlohmann::json{{"id", r.id},
                            {"text", document->second->text},
                            {"trusted", trusted.at(r.trusted)},
                            {"trusted_index", r.trusted},
                            {"rank", r.rank},
                            {"score", r.score},
                            {"cosine", r.cosine},
                            {"sparsity", r.sparsity},
                            {"alpha", report.alpha.value},
                            {"sparsity_scale", report.scale.value}}
                 .dump() +
             "\n";
  }
  write_file_atomic(join_path(out_dir, "corpus.jsonl"), kept);
  write_file_atomic(join_path(out_dir, "report.jsonl"), lines);
}

}  // namespace counterpoint::retrieval
