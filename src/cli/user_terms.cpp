// The library names a bad setting by its field ("TrainConfig.learning_rate must be ...",
// "tune_alpha needs ...", "qrels not found: ..."), which is what a C++ or Python caller set (an
// option struct's member is also the Python keyword); on the command line the user set a flag, so
// the messages the CLI prints name the flag instead. This file alone knows both vocabularies.
//
// Where a name in a message is a field, and not a word of its prose:
//  - a qualified name (TrainConfig.x, VerifierShape.x, SearchParams::x) always is;
//  - a field with an underscore (tune_alpha, index_cache, sparse_model: flag_of_field) is, wherever
//    it stands: prose has no underscores. One inside a path (".../index_cache/run.trec") is not: a
//    name that touches a '/' or a file extension stays as written;
//  - a plain name (k, qrels, out, model, metrics, ...) is also an English word, and the same
//    messages use it as one ("tune_alpha chooses alpha on the qrels", "drop the deeper metrics",
//    "corpus.jsonl", "a model folder"), as do other layers' ("model X is not installed", "corpus
//    P holds no documents"). A blind word replacement would corrupt them, and a marker around the
//    field would reach Python, which prints what() as it is. So a plain name is a field only in
//    the frames the workflows (src/app) word a field in, each anchored on the words around it
//    (plain_frames below): the subject that opens the message followed by what is wrong with it
//    ("qrels not found: P", "k 5 is below the ...") or by its value and a file's frame ("corpus P:
//    corpus.jsonl not found"), the output and input require_safe_output names, the object of
//    "raise", and the few second fields of a sentence. A new message worded otherwise shows its
//    plain name as the field on the command line too: understood, never a flag in mid-prose.
// A missing or damaged file's message (About::kFile) is read for the frames alone: the rest of it
// quotes the file's own names ("sparse_model" in a header.json) and paths, which keep their spelling.
#include <cctype>
#include <regex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "commands.h"

namespace counterpoint::cli {

namespace {

// Library field -> the flag that sets it. Fields without a flag keep their library name.
const std::unordered_map<std::string, std::string>& flag_of_field() {
  static const std::unordered_map<std::string, std::string> flags = [] {
    std::unordered_map<std::string, std::string> fields = {
      {"output_dir", "--out"},
      {"epochs", "--epochs"},
      {"batch_size", "--batch-size"},
      {"temperature", "--temperature"},
      {"learning_rate", "--lr"},
      {"weight_decay", "--weight-decay"},
      {"warmup_ratio", "--warmup"},
      {"threads", "--threads"},
      {"hard_negative_weight", "--hard-negative-weight"},
      {"sparsity_scales", "--sparsity-scales"},
      {"frozen_layers", "--frozen-layers"},
      {"head_kind", "--head-kind"},
      {"head_hidden", "--head-hidden"},
      {"encoder_learning_rate", "--encoder-lr"},
      {"dev_pairs", "--dev-pairs"},
      {"dev_triples", "--dev-triples"},
      {"ef_search", "--ef-search"},
      {"nprobe", "--nprobe"},
      {"map_size", "--map-size"},
      {"width", "--width"},
      {"patch", "--patch"},
      {"feed_forward", "--feed-forward"},
      {"dropout", "--dropout"},
      {"sparse_model", "--sparse-model"},
      {"fp16", "--fp16"},
      // The workflows' options (app::BeirRunOptions, StanceRunOptions, DemoOptions, IndexSearchOptions).
      {"tune_alpha", "--tune-alpha"},
      {"index_cache", "--index-cache"},
    };
    // The search settings' keywords, from their table. Only those with an underscore are looked
    // for in messages: "k" or "alpha" are also plain words there.
    for (const auto& setting : app::search_settings()) {
      if (setting.keyword.find('_') != std::string::npos) fields[setting.keyword] = setting.flag;
    }
    return fields;
  }();
  return flags;
}

// Plain field -> flag, for the frames only (a qualified TrainConfig.alpha is not the search's alpha).
const std::unordered_map<std::string, std::string>& flag_of_plain_field() {
  static const std::unordered_map<std::string, std::string> flags = [] {
    std::unordered_map<std::string, std::string> fields = {
      {"dataset", "--dataset"}, {"qrels", "--qrels"},     {"metrics", "--metrics"}, {"templates", "--templates"},
      {"verifier", "--verifier"}, {"corpus", "--corpus"}, {"out", "--out"},         {"model", "--model"},
      {"tokens", "--tokens"},
    };
    for (const auto& setting : app::search_settings()) {  // k, candidates, alpha: "-k,--k" -> "-k"
      if (setting.keyword.find('_') == std::string::npos) {
        fields[setting.keyword] = setting.flag.substr(0, setting.flag.find(','));
      }
    }
    fields["sparse_model"] = "--sparse-model";  // beside model in "(model / sparse_model)"
    return fields;
  }();
  return flags;
}

// The frames a plain name is a field in: each captured group is one. ECMAScript has no
// look-behind, so the words before a field are matched and only the group is replaced.
const std::vector<std::regex>& plain_frames() {
  static const std::vector<std::regex> frames = {
      // The subject, then what is wrong with it: "dataset is required", "qrels not found: P",
      // "templates must be held-out or training", "metrics: give at least one metric", "k must be >= 1".
      std::regex(R"(^(k|candidates|dataset|qrels|metrics|templates|verifier))"
                 R"((?= is required$| not found: | must be |: give ))"),
      // The subject, then its value: "candidates 5 is below the 10 hits per query ...",
      // "qrels P judges no query: ...", "corpus P: corpus.jsonl not found".
      std::regex(R"(^(k|candidates) (?=\d+ is below the ))"),
      std::regex(R"(^(qrels) (?=.* judges no query: ))"),
      std::regex(R"(^(corpus|dataset) (?=.*: [a-z]+\.jsonl not found$))"),
      // An output require_safe_output refuses ("out P is the input qrels P; writing it would ...",
      // "out: folder F does not exist"), and the input it names.
      std::regex(R"(^(out)(?=: folder | .*; writing ))"),
      std::regex(R"( the input (dataset|qrels|model|verifier) )"),
      // The remedy: "; raise candidates to 10 or more", "; raise k or drop the deeper metrics".
      std::regex(R"(; raise (k|candidates)(?= to | or ))"),
      // A second field in a sentence: "tune_alpha chooses alpha on the qrels, and alpha gives one",
      // "hits per query that metrics ndcg@10 need", "(model / sparse_model)".
      std::regex(R"(, and (alpha) gives one)"),
      std::regex(R"( hits per query that (metrics) (?=.* need; ))"),
      std::regex(R"(\((model) / (sparse_model)\))"),
      // The index build setting a scorer's rows need: "rebuild it with token embeddings (tokens)".
      std::regex(R"(rebuild it with token embeddings \((tokens)\))"),
  };
  return frames;
}

// `message` with each plain field of a frame replaced by its flag.
std::string plain_fields_as_flags(std::string message) {
  for (const std::regex& frame : plain_frames()) {
    std::vector<std::pair<std::size_t, std::size_t>> spans;  // of the captured fields
    for (std::sregex_iterator it(message.begin(), message.end(), frame), end; it != end; ++it) {
      for (std::size_t g = 1; g < it->size(); ++g) {
        if ((*it)[g].matched) spans.emplace_back(std::size_t(it->position(g)), std::size_t(it->length(g)));
      }
    }
    for (auto span = spans.rbegin(); span != spans.rend(); ++span) {  // from the end: offsets hold
      const auto flag = flag_of_plain_field().find(message.substr(span->first, span->second));
      if (flag != flag_of_plain_field().end()) message.replace(span->first, span->second, flag->second);
    }
  }
  return message;
}

bool in_a_path(const std::string& message, std::size_t at, std::size_t length) {
  const std::size_t after = at + length;
  const auto word = [&](std::size_t i) { return i < message.size() && std::isalnum((unsigned char)message[i]); };
  return (at > 0 && (message[at - 1] == '/' || message[at - 1] == '.')) ||
         (after < message.size() && (message[after] == '/' || (message[after] == '.' && word(after + 1))));
}

}  // namespace

std::string in_user_terms(const std::string& said, About about) {
  const std::string message = plain_fields_as_flags(said);
  if (about == About::kFile) return message;  // a file's own names and its path keep their spelling
  static const std::regex field = [] {
    // The search settings' keywords, sparse_model and the index build's are said without a struct.
    std::string bare = "nprobe|sparse_model|batch_size|fp16|tune_alpha|index_cache";
    for (const auto& setting : app::search_settings()) {
      if (setting.keyword.find('_') != std::string::npos) bare += "|" + setting.keyword;
    }
    return std::regex(R"((?:VerifierTrainConfig|TrainConfig|EncoderConfig|VerifierShape)\.([a-z_]+))"
                      R"(|SearchParams::([a-z_]+)|\b()" + bare + R"()\b)");
  }();
  std::string out;
  auto last = message.cbegin();
  for (std::sregex_iterator it(message.begin(), message.end(), field), end; it != end; ++it) {
    const std::smatch& m = *it;
    const std::string name = m[1].matched ? m[1].str() : m[2].matched ? m[2].str() : m[3].str();
    const auto flag = flag_of_field().find(name);
    const bool keep = flag == flag_of_field().end() ||
                      (m[3].matched && in_a_path(message, std::size_t(m.position(0)), std::size_t(m.length(0))));
    out.append(last, m[0].first);
    out += keep ? m[0].str() : flag->second;
    last = m[0].second;
  }
  out.append(last, message.cend());
  // The one setting named by its value rather than its field.
  static const std::string head_only = "trained_weights head";
  for (auto at = out.find(head_only); at != std::string::npos; at = out.find(head_only, at)) {
    out.replace(at, head_only.size(), "--head-only");
  }
  return out;
}

}  // namespace counterpoint::cli
