// Tokenizer throughput on the first 1,000 ArguAna corpus texts.
//   COUNTERPOINT_BERT_VOCAB     bert-base-uncased vocab.txt (models/bert_vocab/fetch_vocab.sh)
//   COUNTERPOINT_USE_LITE_DIR   directory holding the USE-lite vocab.json (default models/installed/use-lite-en)
//   COUNTERPOINT_ARGUANA_CORPUS corpus.jsonl (default ../shared/data/arguana/corpus.jsonl beside the checkout)
// Reports tokens/s (no truncation) as the counter "tokens".
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "counterpoint/core/files.h"
#include "counterpoint/text/use_unigram.h"
#include "counterpoint/text/wordpiece.h"

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

// The checkout's root, from this file's path (benchmarks/ lies directly under it, this file in benchmarks/cpp/).
std::string source_dir() {
  std::string file = __FILE__;
  auto cut = file.rfind("/benchmarks/");
  return cut == std::string::npos ? std::string(".") : file.substr(0, cut);
}

const std::vector<std::string>& corpus_texts() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> out;
    std::ifstream in(env_or("COUNTERPOINT_ARGUANA_CORPUS", source_dir() + "/../shared/data/arguana/corpus.jsonl"));
    for (std::string line; out.size() < 1000 && std::getline(in, line);) {
      out.push_back(nlohmann::json::parse(line)["text"].get<std::string>());
    }
    return out;
  }();
  return texts;
}

void run(benchmark::State& state, const counterpoint::Tokenizer& tokenizer) {
  const auto& texts = corpus_texts();
  if (texts.empty()) {
    state.SkipWithError("ArguAna corpus not found (set COUNTERPOINT_ARGUANA_CORPUS)");
    return;
  }
  int64_t tokens = 0;
  int64_t bytes = 0;
  for (auto _ : state) {
    for (const auto& text : texts) {
      auto encoding = tokenizer.encode(text, 0);
      tokens += static_cast<int64_t>(encoding.ids.size());
      bytes += static_cast<int64_t>(text.size());
      benchmark::DoNotOptimize(encoding);
    }
  }
  state.counters["tokens"] = benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
  state.counters["texts"] = benchmark::Counter(static_cast<double>(state.iterations()) * texts.size(),
                                               benchmark::Counter::kIsRate);
  state.SetBytesProcessed(bytes);
}

void BM_WordPieceArguAna(benchmark::State& state) {
  std::string vocab = env_or("COUNTERPOINT_BERT_VOCAB", "");
  if (vocab.empty() || !counterpoint::path_exists(vocab)) {
    state.SkipWithError("COUNTERPOINT_BERT_VOCAB unset (models/bert_vocab/fetch_vocab.sh)");
    return;
  }
  static const auto tokenizer = counterpoint::WordPieceTokenizer::from_file(vocab, true);
  run(state, tokenizer);
}

void BM_UseUnigramArguAna(benchmark::State& state) {
  std::string vocab = counterpoint::join_path(
      env_or("COUNTERPOINT_USE_LITE_DIR", source_dir() + "/models/installed/use-lite-en"), "vocab.json");
  if (!counterpoint::path_exists(vocab)) {
    state.SkipWithError("USE-lite vocab.json not installed (set COUNTERPOINT_USE_LITE_DIR)");
    return;
  }
  static const auto tokenizer = counterpoint::UseUnigramTokenizer::from_file(vocab);
  run(state, tokenizer);
}

}  // namespace

BENCHMARK(BM_WordPieceArguAna)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_UseUnigramArguAna)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
