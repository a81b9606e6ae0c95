#include "counterpoint/app/settings.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/spelling.h"
#include "counterpoint/encoder/defaults.h"

namespace counterpoint::app {

using retrieval::SearchOptions;
using Kind = SearchSetting::Kind;
using Part = SearchSetting::Part;

namespace {

std::string shown(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kCount: return "a whole number";
    case Kind::kNumber: return "a number";
    case Kind::kName: return "a name";
    case Kind::kSwitch: return "True or False";
  }
  return "a value";
}

std::string described(const SettingValue& value) {
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "True" : "False";
  if (const auto* i = std::get_if<std::int64_t>(&value)) return "the whole number " + std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) return "the number " + shown(*d);
  return "the name '" + std::get<std::string>(value) + "'";
}

// The value as the setting's kind takes it: a whole number is also a number (alpha=1), nothing
// else converts (a switch is no count, as True == 1 would make it in Python).
SettingValue as_kind(const SearchSetting& setting, const SettingValue& value) {
  const bool fits = (setting.kind == Kind::kSwitch && std::holds_alternative<bool>(value)) ||
                    (setting.kind == Kind::kCount && std::holds_alternative<std::int64_t>(value)) ||
                    (setting.kind == Kind::kNumber &&
                     (std::holds_alternative<double>(value) || std::holds_alternative<std::int64_t>(value))) ||
                    (setting.kind == Kind::kName && std::holds_alternative<std::string>(value));
  if (!fits) {
    throw InvalidArgument(setting.keyword + " needs " + kind_name(setting.kind) + "; got " + described(value));
  }
  if (setting.kind == Kind::kNumber && std::holds_alternative<std::int64_t>(value)) {
    return double(std::get<std::int64_t>(value));
  }
  return value;
}

std::size_t count_of(const SettingValue& value, const std::string& keyword, std::int64_t least) {
  const std::int64_t n = std::get<std::int64_t>(value);
  if (n < least) throw InvalidArgument(keyword + " must be >= " + std::to_string(least) + ", got " + std::to_string(n));
  return std::size_t(n);
}

int int_of(const SettingValue& value, const std::string& keyword, const std::string& zero_means) {
  const std::int64_t n = std::get<std::int64_t>(value);
  if (n < 0 || n > std::numeric_limits<int>::max()) {
    throw InvalidArgument(keyword + " must be >= 0 (" + zero_means + "), got " + std::to_string(n));
  }
  return int(n);
}

float float_of(const SettingValue& value) { return float(std::get<double>(value)); }
const std::string& name_of(const SettingValue& value) { return std::get<std::string>(value); }

std::vector<SearchSetting> make_settings() {
  using O = SearchOptions;
  return {
      {"stage1", "--stage1", Kind::kName, Part::kStage1, "dense, bm25 or hybrid",
       [](const O& o) { return retrieval::to_string(o.stage1); },
       [](O& o, const SettingValue& v) { o.stage1 = retrieval::parse_stage1(name_of(v)); }},
      {"fusion", "--fusion", Kind::kName, Part::kStage1, "rsf or rrf (hybrid stage 1)",
       [](const O& o) { return retrieval::to_string(o.fusion); },
       [](O& o, const SettingValue& v) { o.fusion = retrieval::parse_fusion(name_of(v)); }},
      {"fusion_lambda", "--lambda", Kind::kNumber, Part::kStage1, "RSF weight of BM25",
       [](const O& o) { return shown(o.fusion_lambda); },
       [](O& o, const SettingValue& v) { o.fusion_lambda = float_of(v); }},
      {"rrf_k", "--rrf-k", Kind::kCount, Part::kStage1, "RRF constant: a hit at rank r counts 1 / (rrf_k + r)",
       [](const O& o) { return std::to_string(o.rrf_k); },
       [](O& o, const SettingValue& v) { o.rrf_k = int_of(v, "rrf_k", "0 counts ranks alone"); }},
      {"candidates", "--candidates", Kind::kCount, Part::kStage1,
       "Stage-1 candidates K per source (when not given and k is larger: k)",
       [](const O& o) { return std::to_string(o.candidates); },
       [](O& o, const SettingValue& v) { o.candidates = count_of(v, "candidates", 1); }},
      {"scorer", "--scorer", Kind::kName, Part::kScorer,
       "cosine, hoyer, l2l1, kappa4 (cosine + alpha * sparsity), mean, maxsim, alignment or verifier",
       [](const O& o) { return retrieval::to_string(o.scorer); },
       [](O& o, const SettingValue& v) { retrieval::set_scorer(o, name_of(v)); }},
      {"alpha", "--alpha", Kind::kNumber, Part::kScorer,
       "Weight of the sparsity term (default: the alpha Es records, else 1)",
       [](const O& o) { return o.alpha ? shown(*o.alpha) : std::string(); },
       [](O& o, const SettingValue& v) { o.alpha = float_of(v); }},
      {"sparsity_scale", "--sparsity-scale", Kind::kNumber, Part::kScorer,
       "Magnitude gate tau of the sparsity term: sparsity * min(1, |Es(q) - Es(p)|_2 / tau); 0 = none "
       "(default: the tau Es records, else none)",
       [](const O& o) { return o.sparsity.scale ? shown(*o.sparsity.scale) : std::string(); },
       [](O& o, const SettingValue& v) { o.sparsity.scale = float_of(v); }},
      {"k", "-k,--k", Kind::kCount, Part::kSearch, "Hits per query",
       [](const O& o) { return std::to_string(o.k); },
       [](O& o, const SettingValue& v) { o.k = count_of(v, "k", 1); }},
      {"stance", "--stance", Kind::kName, Part::kSearch,
       "The stance hits take towards each query, the sign of the sparsity term: attack (+), support (-), or "
       "from-query (each query's instruction, e.g. \"Find an argument supporting the claim: ...\"; attack without "
       "one)",
       [](const O& o) { return retrieval::to_string(o.stance); },
       [](O& o, const SettingValue& v) { o.stance = retrieval::parse_stance(name_of(v)); }},
      {"guard", "--no-guard", Kind::kSwitch, Part::kSearch,
       "The near-identical guard of the sparsity term (a query never retrieves itself or an exact duplicate)",
       [](const O& o) { return std::string(o.sparsity.identical_guard ? "on" : "off"); },
       [](O& o, const SettingValue& v) { o.sparsity.identical_guard = std::get<bool>(v); }},
      {"ef_search", "--ef-search", Kind::kCount, Part::kSearch, "HNSW efSearch for this call (0 = the index's)",
       [](const O& o) { return std::to_string(o.dense_params.ef_search); },
       [](O& o, const SettingValue& v) { o.dense_params.ef_search = int_of(v, "ef_search", "0 = the index's default"); }},
      {"nprobe", "--nprobe", Kind::kCount, Part::kSearch, "IVF nprobe for this call (0 = the index's)",
       [](const O& o) { return std::to_string(o.dense_params.nprobe); },
       [](O& o, const SettingValue& v) { o.dense_params.nprobe = int_of(v, "nprobe", "0 = the index's default"); }},
  };
}

}  // namespace

const std::vector<SearchSetting>& search_settings() {
  static const std::vector<SearchSetting> settings = make_settings();
  return settings;
}

const SearchSetting& search_setting(const std::string& keyword) {
  std::vector<std::string> keywords;
  for (const auto& setting : search_settings()) {
    if (setting.keyword == keyword) return setting;
    keywords.push_back(setting.keyword);
  }
  throw InvalidArgument("unknown search setting '" + keyword + "'" + did_you_mean(keyword, keywords));
}

SearchOptions search_options_from(const GivenSettings& given, const SearchOptions& defaults) {
  SearchOptions options = defaults;
  bool candidates_given = false;
  for (const auto& [keyword, value] : given) {
    const SearchSetting& setting = search_setting(keyword);
    setting.set(options, as_kind(setting, value));
    candidates_given = candidates_given || keyword == "candidates";
  }
  // candidates below k is the search's to refuse (Retriever, or a workflow in its own terms: the
  // hits its metrics need), after the settings a workflow checks first.
  if (!candidates_given) options.candidates = retrieval::default_candidates(options.k, defaults.candidates);
  retrieval::validate_settings(options);
  return options;
}

SearchOptions options_or_settings(const std::optional<SearchOptions>& options, const GivenSettings& given,
                                  const SearchOptions& defaults) {
  if (!options) return search_options_from(given, defaults);
  std::string moved;
  for (const auto& [keyword, value] : given) {
    const SearchSetting& setting = search_setting(keyword);
    SearchOptions changed = defaults;
    setting.set(changed, as_kind(setting, value));
    if (setting.show(changed) != setting.show(defaults)) moved += (moved.empty() ? "" : ", ") + keyword;
  }
  if (!moved.empty()) {
    throw InvalidArgument("give the search settings in options or as keywords, not both: " + moved +
                          " set beside options");
  }
  retrieval::validate_settings(*options);
  return *options;
}

void require_scorer_inputs(const SearchOptions& options, const ScorerInputs& inputs) {
  using Presence = ScorerInputs::Presence;
  const retrieval::Scorer scorer = options.scorer;
  const bool sparsity = scorer == retrieval::Scorer::kSparsity;
  const std::string name =
      "scorer '" + (sparsity ? scoring::to_string(options.sparsity.function) : retrieval::to_string(scorer)) + "'";
  const std::string where = inputs.where.empty() ? std::string("the index") : inputs.where;
  if (sparsity && inputs.index_sparse_rows == false) {
    throw InvalidArgument(name + " reads the Es rows an index stores, and " + where +
                          " stores none: rebuild it with an Es (sparse_model, e.g. " + kDefaultSparseModel + ")");
  }
  if (retrieval::uses_tokens(scorer) && inputs.index_token_rows == false) {
    throw InvalidArgument(name + " reads token embeddings, and " + where +
                          " stores none: rebuild it with token embeddings (tokens)");
  }
  if (sparsity && inputs.sparse_model == Presence::kAbsent) {
    throw InvalidArgument(name + " adds alpha * sparsity(Es(q) - Es(p)) and needs a sparse-aware encoder Es "
                          "(sparse_model)");
  }
  if (!sparsity && inputs.sparse_model == Presence::kGiven) {
    throw InvalidArgument("sparse_model is read by the sparsity scorers (hoyer, l2l1, kappa4); " + name +
                          " would not use it");
  }
  const bool verifier = scorer == retrieval::Scorer::kVerifier;
  if (verifier && inputs.verifier == Presence::kAbsent) {
    throw InvalidArgument(name + " needs a map verifier (verifier: a directory from `train verifier`)");
  }
  if (!verifier && inputs.verifier == Presence::kGiven) {
    throw InvalidArgument("verifier is read by scorer 'verifier' only; " + name + " would not use it");
  }
}

}  // namespace counterpoint::app
