#include "counterpoint/encoder/manifest.h"

#include <cmath>
#include <limits>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/json_document.h"
#include "counterpoint/core/json_integer.h"
#include "counterpoint/core/files.h"

namespace counterpoint {

Pooling parse_pooling(const std::string& name) {
  if (name == "model") return Pooling::kModel;
  if (name == "cls") return Pooling::kCls;
  if (name == "mean") return Pooling::kMean;
  throw InvalidArgument("unknown pooling '" + name + "' (expected model, cls or mean)");
}

std::string to_string(Pooling pooling) {
  switch (pooling) {
    case Pooling::kModel: return "model";
    case Pooling::kCls: return "cls";
    case Pooling::kMean: return "mean";
  }
  return "model";
}

HeadKind parse_head_kind(const std::string& name) {
  if (name == "linear") return HeadKind::kLinear;
  if (name == "mlp") return HeadKind::kMlp;
  throw InvalidArgument("unknown head kind '" + name + "' (expected linear or mlp)");
}

std::string to_string(HeadKind kind) { return kind == HeadKind::kMlp ? "mlp" : "linear"; }

namespace {

template <typename T>
T required(const nlohmann::json& j, const char* key, const std::string& origin) {
  auto it = j.find(key);
  if (it == j.end()) throw CorruptFile(origin + ": missing field '" + key + "'");
  if (!json_holds<T>(*it)) {
    throw CorruptFile(origin + ": field '" + key + "' has the wrong type (" + std::string(it->type_name()) + ")");
  }
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    throw CorruptFile(origin + ": field '" + key + "' has the wrong type (" +
                      std::string(it->type_name()) + ")");
  }
}

template <typename T>
T optional_field(const nlohmann::json& j, const char* key, T fallback, const std::string& origin) {
  if (!j.contains(key)) return fallback;
  return required<T>(j, key, origin);
}

// A manifest's file names must stay inside the model directory.
void require_plain_file_name(const std::string& name, const std::string& origin) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
    throw CorruptFile(origin + ": file name '" + name + "' must be a plain name inside the model directory");
  }
}

// tokenizer.specials {cls, sep, pad, unk, mask}, added_tokens [{piece, normalized}] and
// pair_separators, each absent for BERT's (every manifest written before they were recorded).
SpecialTokens parse_specials(const nlohmann::json& tokenizer, const std::string& origin) {
  SpecialTokens s;
  if (tokenizer.contains("specials")) {
    const auto specials = required<nlohmann::json>(tokenizer, "specials", origin);
    if (!specials.is_object()) throw CorruptFile(origin + ": field 'specials' must be an object");
    for (auto it = specials.begin(); it != specials.end(); ++it) {
      const std::string& role = it.key();
      std::string* slot = role == "cls" ? &s.cls : role == "sep" ? &s.sep : role == "pad" ? &s.pad
                        : role == "unk" ? &s.unk : role == "mask" ? &s.mask : nullptr;
      if (slot == nullptr) {
        throw CorruptFile(origin + ": specials names the unknown role '" + role + "' (known: cls, sep, pad, unk, mask)");
      }
      *slot = required<std::string>(specials, role.c_str(), origin + " specials");
      if (slot->empty() && slot != &s.mask) throw CorruptFile(origin + ": specials." + role + " is empty");
    }
  }
  if (tokenizer.contains("added_tokens")) {
    const auto added = required<nlohmann::json>(tokenizer, "added_tokens", origin);
    if (!added.is_array() || added.empty()) {
      throw CorruptFile(origin + ": field 'added_tokens' must be a non-empty array (omit it for BERT's)");
    }
    for (const auto& token : added) {
      if (!token.is_object()) throw CorruptFile(origin + ": each of 'added_tokens' must be an object {piece, normalized}");
      SpecialTokens::Literal literal{required<std::string>(token, "piece", origin + " added_tokens"),
                                     optional_field<bool>(token, "normalized", false, origin + " added_tokens")};
      if (literal.piece.empty()) throw CorruptFile(origin + ": added_tokens holds an empty piece");
      s.literals.push_back(std::move(literal));
    }
  }
  const long long separators = optional_field<long long>(tokenizer, "pair_separators", 1, origin);
  if (separators < 1 || separators > 2) {
    throw CorruptFile(origin + ": pair_separators " + std::to_string(separators) + " is not 1 (BERT) or 2 (MPNet)");
  }
  s.pair_separators = std::size_t(separators);
  return s;
}

}  // namespace

ModelManifest ModelManifest::parse(const std::string& json_text, const std::string& origin) {
  const nlohmann::json j = parse_json_document(json_text, origin);
  if (!j.is_object()) throw CorruptFile(origin + ": expected a JSON object");
  if (required<std::string>(j, "format", origin) != "counterpoint-model") {
    throw CorruptFile(origin + ": format is not 'counterpoint-model'");
  }
  const int version = required<int>(j, "format_version", origin);
  if (version != kFormatVersion) {
    throw CorruptFile(origin + ": format_version " + std::to_string(version) +
                      " is not supported (this library reads version " +
                      std::to_string(kFormatVersion) + ")");
  }
  ModelManifest m;
  m.name = required<std::string>(j, "name", origin);
  m.architecture = required<std::string>(j, "architecture", origin);
  const long long embedding_dim = required<long long>(j, "embedding_dim", origin);
  const long long token_dim = optional_field<long long>(j, "token_dim", embedding_dim, origin);
  const long long max_length = required<long long>(j, "max_length", origin);
  if (embedding_dim <= 0 || token_dim <= 0 || max_length <= 0) {
    throw CorruptFile(origin + ": embedding_dim, token_dim and max_length must be positive");
  }
  m.embedding_dim = std::size_t(embedding_dim);
  m.token_dim = std::size_t(token_dim);
  m.max_length = std::size_t(max_length);
  try {
    m.pooling = parse_pooling(required<std::string>(j, "pooling", origin));
  } catch (const InvalidArgument& e) {
    throw CorruptFile(origin + ": " + e.what());
  }
  const auto tokenizer = required<nlohmann::json>(j, "tokenizer", origin);
  if (!tokenizer.is_object()) throw CorruptFile(origin + ": field 'tokenizer' must be an object");
  m.tokenizer_kind = required<std::string>(tokenizer, "kind", origin + " tokenizer");
  m.tokenizer_file = required<std::string>(tokenizer, "file", origin + " tokenizer");
  m.lowercase = optional_field<bool>(tokenizer, "lowercase", true, origin + " tokenizer");
  m.specials = parse_specials(tokenizer, origin + " tokenizer");
  if (!m.specials.is_bert() && m.tokenizer_kind != "wordpiece") {
    throw CorruptFile(origin + ": tokenizer kind '" + m.tokenizer_kind +
                      "' takes no specials, added_tokens or pair_separators (wordpiece models only)");
  }
  m.query_prefix = optional_field<std::string>(j, "query_prefix", "", origin);
  m.document_prefix = optional_field<std::string>(j, "document_prefix", "", origin);
  m.normalized = optional_field<bool>(j, "normalized", true, origin);
  m.license = required<std::string>(j, "license", origin);
  m.model_file = optional_field<std::string>(j, "model_file", "model.pt", origin);
  m.head_file = optional_field<std::string>(j, "head_file", "", origin);
  try {
    m.head_kind = parse_head_kind(optional_field<std::string>(j, "head_kind", to_string(m.head_kind), origin));
  } catch (const InvalidArgument& e) {
    throw CorruptFile(origin + ": " + e.what());
  }
  m.source = j.value("source", nlohmann::json::object());
  m.training = j.value("training", nlohmann::json());
  const auto files = required<nlohmann::json>(j, "files", origin);
  if (!files.is_object()) throw CorruptFile(origin + ": field 'files' must be an object");
  for (auto it = files.begin(); it != files.end(); ++it) {
    require_plain_file_name(it.key(), origin);
    if (!it.value().is_string() || it.value().get<std::string>().size() != 64) {
      throw CorruptFile(origin + ": checksum of '" + it.key() + "' is not a SHA-256 hex string");
    }
    m.files[it.key()] = it.value().get<std::string>();
  }
  require_plain_file_name(m.model_file, origin);
  require_plain_file_name(m.tokenizer_file, origin);
  if (!m.head_file.empty()) require_plain_file_name(m.head_file, origin);
  for (const auto* needed : {&m.model_file, &m.tokenizer_file, &m.head_file}) {
    if (needed->empty()) continue;
    if (!m.files.count(*needed)) {
      throw CorruptFile(origin + ": '" + *needed + "' has no checksum in 'files'");
    }
  }
  return m;
}

ModelManifest ModelManifest::load(const std::string& dir) {
  const std::string path = join_path(dir, "manifest.json");
  if (!path_exists(dir)) throw FileNotFound("model directory not found: " + dir);
  if (!path_exists(path)) throw FileNotFound("model directory " + dir + " has no manifest.json");
  ModelManifest m = parse(read_file(path, kMaxDocumentBytes), path);
  for (const auto& [name, expected] : m.files) {
    const std::string file = join_path(dir, name);
    if (!path_exists(file)) throw FileNotFound("model file listed in " + path + " is missing: " + file);
    const std::string actual = sha256_file(file);
    if (actual != expected) {
      throw CorruptFile("checksum mismatch for " + file + ": manifest says " + expected +
                        ", file has " + actual);
    }
  }
  return m;
}

nlohmann::json ModelManifest::to_json() const {
  nlohmann::json j;
  j["format"] = "counterpoint-model";
  j["format_version"] = kFormatVersion;
  j["name"] = name;
  j["architecture"] = architecture;
  j["embedding_dim"] = embedding_dim;
  j["token_dim"] = token_dim;
  j["pooling"] = to_string(pooling);
  j["max_length"] = max_length;
  j["tokenizer"] = {{"kind", tokenizer_kind}, {"file", tokenizer_file}, {"lowercase", lowercase}};
  // BERT's specials are written by omission, as every manifest before they were recorded has them.
  if (!specials.is_bert()) {
    j["tokenizer"]["specials"] = {{"cls", specials.cls}, {"sep", specials.sep}, {"pad", specials.pad},
                                  {"unk", specials.unk}, {"mask", specials.mask}};
    nlohmann::json literals = nlohmann::json::array();
    for (const auto& l : specials.literals) literals.push_back({{"piece", l.piece}, {"normalized", l.normalized}});
    j["tokenizer"]["added_tokens"] = literals;
    j["tokenizer"]["pair_separators"] = specials.pair_separators;
  }
  j["query_prefix"] = query_prefix;
  j["document_prefix"] = document_prefix;
  j["normalized"] = normalized;
  j["license"] = license;
  j["model_file"] = model_file;
  if (!head_file.empty()) {
    j["head_file"] = head_file;
    j["head_kind"] = to_string(head_kind);
  }
  j["source"] = source;
  if (!training.is_null()) j["training"] = training;
  j["files"] = files;
  return j;
}

void ModelManifest::save(const std::string& dir) {
  for (auto& [name, checksum] : files) checksum = sha256_file(join_path(dir, name));
  write_file_atomic(join_path(dir, "manifest.json"), to_json().dump(2) + "\n");
}

std::optional<float> ModelManifest::recorded_search_setting(const std::string& field,
                                                            const std::string& origin) const {
  if (!training.is_object()) return std::nullopt;
  const auto it = training.find(field);
  if (it == training.end()) return std::nullopt;
  const bool non_negative = field == "sparsity_scale";
  const bool valid = it->is_number() && std::isfinite(it->get<double>()) &&
                     std::fabs(it->get<double>()) <= double(std::numeric_limits<float>::max()) &&
                     (!non_negative || it->get<double>() >= 0.0);
  if (!valid) {
    throw CorruptFile(origin + ": model " + name + " records training." + field + " " + it->dump() + ", not " +
                      (non_negative ? "a finite 32-bit number >= 0" : "a finite 32-bit number") +
                      " (searches use it when no " + field + " is given; retune the model or remove the field)");
  }
  return it->get<float>();
}

}  // namespace counterpoint
