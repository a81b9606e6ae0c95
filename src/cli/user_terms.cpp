// The library names a bad setting by its field ("TrainConfig.learning_rate must be ..."), which is
// what a C++ or Python caller sets; on the command line the user set a flag, so the messages the
// CLI prints name the flag instead.
#include <regex>
#include <string>
#include <unordered_map>

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

}  // namespace

std::string in_user_terms(const std::string& message) {
  static const std::regex field = [] {
    // The search settings' keywords, sparse_model and the index build's are said without a struct.
    std::string bare = "nprobe|sparse_model|batch_size|fp16";
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
    out.append(last, m[0].first);
    out += flag == flag_of_field().end() ? m[0].str() : flag->second;
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
