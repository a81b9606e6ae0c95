#include "corpus_input.h"

#include <iostream>
#include <sstream>

#include "counterpoint/core/files.h"
#include "counterpoint/data/corpus_files.h"
#include "counterpoint/retrieval/retriever.h"
#include "commands.h"

namespace counterpoint::cli {

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

std::vector<data::Document> load_documents(const std::string& path) {
  const std::string beir_corpus = join_path(path, "corpus.jsonl");
  if (path_exists(beir_corpus)) return data::load_corpus(beir_corpus);
  if (ends_with(path, ".tsv")) return data::load_tsv_documents(path);
  return data::load_jsonl_documents(path);
}

std::vector<data::Query> load_query_file(const std::string& path) {
  if (ends_with(path, ".jsonl")) return data::load_queries(path);
  std::istringstream in(read_file(path));
  std::vector<data::Query> queries;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    data::Query q;
    q.id = "q" + std::to_string(queries.size() + 1);
    q.text = line;
    queries.push_back(std::move(q));
  }
  return queries;
}

std::shared_ptr<index::DocumentIndex> cached_corpus_index(const std::string& cache,
                                                          const std::vector<data::Document>& corpus,
                                                          const Encoder& encoder, const Encoder* sparse) {
  if (!cache.empty() && path_exists(cache)) {
    auto loaded = std::make_shared<index::DocumentIndex>(index::DocumentIndex::load(cache));
    std::cerr << "loaded index " << cache << " (" << loaded->size() << " documents)\n";
    return loaded;
  }
  auto built = std::make_shared<index::DocumentIndex>(retrieval::index_options_for(encoder, sparse));
  std::vector<std::string> ids, texts;
  for (const auto& d : corpus) {
    ids.push_back(d.id);
    texts.push_back(data::encoding_text(d));
  }
  retrieval::add_documents(*built, texts, ids, encoder, sparse, 64, stderr_progress("encoding corpus"));
  if (!cache.empty()) built->save(cache);
  return built;
}

}  // namespace counterpoint::cli
