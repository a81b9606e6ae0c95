#include "counterpoint/training/triples.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/data/beir.h"
#include "counterpoint/data/metadata.h"
#include "counterpoint/data/tsv.h"
#include "counterpoint/text/inversion.h"
#include "sick_relations.h"

namespace counterpoint::training {

namespace {


std::size_t pick(std::mt19937_64& rng, std::size_t n) { return std::size_t(rng() % n); }

std::string metadata_string(const std::map<std::string, nlohmann::json>& metadata,
                            const std::string& id, const char* field, const std::string& path) {
  auto it = metadata.find(id);
  if (it == metadata.end()) throw CorruptFile(path + ": no entry for document '" + id + "'");
  auto value = it->second.find(field);
  if (value == it->second.end() || !value->is_string()) {
    throw CorruptFile(path + ": document '" + id + "' has no string field '" + field + "'");
  }
  return value->get<std::string>();
}

std::map<std::string, std::string> texts_by_id(const std::vector<data::Document>& corpus) {
  std::map<std::string, std::string> texts;
  for (const auto& d : corpus) texts[d.id] = data::encoding_text(d);
  return texts;
}

const std::string& text_of(const std::map<std::string, std::string>& texts, const std::string& id,
                           const std::string& origin) {
  auto it = texts.find(id);
  if (it == texts.end()) throw CorruptFile(origin + ": document '" + id + "' is not in the corpus");
  return it->second;
}

// Appends up to `wanted` ids from `pool` (in random order, none of them in `taken`) to `out`.
void draw_distinct(std::vector<std::string> pool, std::size_t wanted, std::set<std::string>& taken,
                   std::vector<std::string>& out, std::mt19937_64& rng) {
  std::shuffle(pool.begin(), pool.end(), rng);
  for (const auto& id : pool) {
    if (out.size() >= wanted) return;
    if (taken.insert(id).second) out.push_back(id);
  }
}

}  // namespace

std::vector<Triple> arguana_triples(const std::string& beir_dir, const std::string& qrels_path,
                                    const std::string& metadata_path,
                                    const ArguAnaTripleOptions& options) {
  if (options.negatives_per_anchor == 0) {
    throw InvalidArgument("ArguAnaTripleOptions.negatives_per_anchor must be >= 1");
  }
  const auto dataset = data::load_beir(beir_dir);
  const auto qrels = data::load_qrels(qrels_path);
  const auto metadata = data::load_metadata(metadata_path);
  const auto texts = texts_by_id(dataset.corpus);
  std::map<std::string, std::string> query_texts;
  for (const auto& q : dataset.queries) query_texts[q.id] = q.text;

  // (split, debate, side) -> ids, and split -> ids, in corpus order.
  std::map<std::string, std::vector<std::string>> by_debate_side, by_split;
  for (const auto& d : dataset.corpus) {
    const auto split = metadata_string(metadata, d.id, "split", metadata_path);
    by_debate_side[split + "\n" + metadata_string(metadata, d.id, "debate", metadata_path) + "\n" +
                   metadata_string(metadata, d.id, "side", metadata_path)].push_back(d.id);
    by_split[split].push_back(d.id);
  }

  std::mt19937_64 rng(options.seed);
  std::vector<Triple> triples;
  for (const auto& [query_id, judged] : qrels) {
    auto query = query_texts.find(query_id);
    if (query == query_texts.end()) {
      throw CorruptFile(qrels_path + ": query '" + query_id + "' is not in " + beir_dir + "/queries.jsonl");
    }
    const auto split = metadata_string(metadata, query_id, "split", metadata_path);
    const auto debate = metadata_string(metadata, query_id, "debate", metadata_path);
    const auto side = metadata_string(metadata, query_id, "side", metadata_path);
    const auto other_side = side == "pro" ? "con" : "pro";
    for (const auto& [positive_id, grade] : judged) {
      if (grade <= 0) continue;
      std::set<std::string> taken = {query_id};
      for (const auto& [id, g] : judged) taken.insert(id);
      std::vector<std::string> negatives;
      const std::size_t k = options.negatives_per_anchor;
      draw_distinct(by_debate_side[split + "\n" + debate + "\n" + side], k, taken, negatives, rng);
      draw_distinct(by_debate_side[split + "\n" + debate + "\n" + other_side], k, taken, negatives, rng);
      while (negatives.size() < k) {
        const auto& pool = by_split[split];
        const auto& id = pool[pick(rng, pool.size())];
        if (taken.insert(id).second) negatives.push_back(id);
      }
      Triple t;
      t.anchor = query->second;
      t.positive = text_of(texts, positive_id, qrels_path);
      for (const auto& id : negatives) t.negatives.push_back(text_of(texts, id, metadata_path));
      t.group = debate;
      triples.push_back(std::move(t));
    }
  }
  return triples;
}

std::vector<Triple> sick_triples(const std::string& pairs_path, const std::string& corpus_path,
                                 std::uint64_t seed) {
  std::map<std::string, std::string> id_of_text;
  for (const auto& d : data::load_corpus(corpus_path)) id_of_text.emplace(d.text, d.id);

  detail::SickRelations relations = detail::read_sick_relations(pairs_path);
  auto& related = relations.of;
  const auto& sentences = relations.sentences;
  std::mt19937_64 rng(seed);
  std::vector<Triple> triples;
  for (auto& [x, r] : related) {
    std::stable_sort(r.neutral.begin(), r.neutral.end(),
                     [](const auto& p, const auto& q) { return p.first > q.first; });
    for (const auto& y : r.contradicted) {
      Triple t;
      t.anchor = x;
      t.positive = y;
      if (!r.entailed.empty()) {
        t.negatives.push_back(r.entailed[pick(rng, r.entailed.size())]);
      } else if (!r.neutral.empty()) {
        t.negatives.push_back(r.neutral.front().second);
      } else {
        std::vector<const std::string*> others;
        for (const auto& sentence : sentences) {
          if (sentence != x && sentence != y) others.push_back(&sentence);
        }
        if (others.empty()) {
          throw InvalidArgument(pairs_path + ": no sentence besides \"" + x + "\" and \"" + y +
                                "\" to serve as a negative; the file is too small to train on");
        }
        t.negatives.push_back(*others[pick(rng, others.size())]);
      }
      auto id = id_of_text.find(x);
      t.group = id != id_of_text.end() ? id->second : x;
      triples.push_back(std::move(t));
    }
  }
  return triples;
}

const std::vector<StanceTemplate>& training_stance_templates() {
  static const std::vector<StanceTemplate> templates = {
      {"Retrieve a claim in favour of: ", "Retrieve a claim against: "},
      {"Which argument supports this position? ", "Which argument opposes this position? "},
      {"Give evidence for: ", "Give evidence against: "},
      {"Argue for the motion: ", "Argue against the motion: "},
  };
  return templates;
}

const std::vector<StanceTemplate>& held_out_stance_templates() {
  static const std::vector<StanceTemplate> templates = {
      {"Find an argument supporting the claim: ", "Find an argument attacking the claim: "},
      {"Show me a point that backs this up: ", "Show me a point that refutes this: "},
  };
  return templates;
}

std::string stance_query(const StanceTemplate& instruction, const std::string& stance,
                         const std::string& topic) {
  if (stance == "support") return instruction.support + topic;
  if (stance == "attack") return instruction.attack + topic;
  throw InvalidArgument("stance must be 'support' or 'attack', got '" + stance + "'");
}

StanceCurriculum parse_stance_curriculum(const std::string& name) {
  if (name == "homogeneous") return StanceCurriculum::kHomogeneous;
  if (name == "mixed") return StanceCurriculum::kMixed;
  if (name == "inverted") return StanceCurriculum::kInverted;
  if (name == "inverted-both") return StanceCurriculum::kInvertedBoth;
  throw InvalidArgument("unknown stance curriculum '" + name +
                        "' (expected homogeneous, mixed, inverted or inverted-both)");
}

std::string to_string(StanceCurriculum curriculum) {
  switch (curriculum) {
    case StanceCurriculum::kHomogeneous: return "homogeneous";
    case StanceCurriculum::kMixed: return "mixed";
    case StanceCurriculum::kInverted: return "inverted";
    case StanceCurriculum::kInvertedBoth: return "inverted-both";
  }
  throw InvalidArgument("to_string: unknown StanceCurriculum value " + std::to_string(static_cast<int>(curriculum)));
}

std::vector<Triple> claim_stance_triples(const std::string& beir_dir, const std::string& qrels_path,
                                         const std::string& metadata_path,
                                         const StanceTripleOptions& options) {
  if (options.templates.empty()) throw InvalidArgument("StanceTripleOptions.templates is empty");
  const auto dataset = data::load_beir(beir_dir);
  const auto qrels = data::load_qrels(qrels_path);
  const auto metadata = data::load_metadata(metadata_path);
  const auto texts = texts_by_id(dataset.corpus);

  struct StanceQuery {
    std::string topic_id, topic, stance;
    std::vector<std::string> positives;
  };
  std::map<std::string, const data::Query*> queries_by_id;
  for (const auto& q : dataset.queries) queries_by_id[q.id] = &q;
  std::vector<StanceQuery> queries;
  std::set<std::string> topics;
  for (const auto& [query_id, judged] : qrels) {
    auto it = queries_by_id.find(query_id);
    if (it == queries_by_id.end()) {
      throw CorruptFile(qrels_path + ": query '" + query_id + "' is not in " + beir_dir + "/queries.jsonl");
    }
    const auto& extra = it->second->extra;
    if (!extra.contains("topic_id") || !extra["topic_id"].is_string() || !extra.contains("stance") ||
        !extra["stance"].is_string()) {
      throw CorruptFile(beir_dir + "/queries.jsonl: query '" + query_id +
                        "' needs string fields 'topic_id' and 'stance'");
    }
    StanceQuery q{extra["topic_id"].get<std::string>(), it->second->text, extra["stance"].get<std::string>(), {}};
    for (const auto& [doc, grade] : judged)
      if (grade > 0) q.positives.push_back(doc);
    topics.insert(q.topic_id);
    queries.push_back(std::move(q));
  }
  // A few claim texts are listed under topics of both splits; they are left out entirely.
  std::set<std::string> other_split_texts;
  for (const auto& d : dataset.corpus) {
    if (!topics.count(metadata_string(metadata, d.id, "topic_id", metadata_path))) {
      other_split_texts.insert(text_of(texts, d.id, beir_dir));
    }
  }
  auto usable = [&](const std::string& id) { return !other_split_texts.count(text_of(texts, id, qrels_path)); };
  for (auto& q : queries) q.positives.erase(std::remove_if(q.positives.begin(), q.positives.end(),
                                                           [&](const std::string& id) { return !usable(id); }),
                                            q.positives.end());
  queries.erase(std::remove_if(queries.begin(), queries.end(), [](const StanceQuery& q) { return q.positives.empty(); }),
                queries.end());
  if (queries.empty()) throw InvalidArgument(qrels_path + " has no query with a relevant claim");

  // Claims of this split's topics, by (topic, stance) with stance in query terms.
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> claims;
  for (const auto& d : dataset.corpus) {
    const auto topic = metadata_string(metadata, d.id, "topic_id", metadata_path);
    if (!topics.count(topic) || !usable(d.id)) continue;
    const auto stance = metadata_string(metadata, d.id, "stance", metadata_path);
    claims[{topic, stance == "pro" ? "support" : "attack"}].push_back(d.id);
  }
  auto opposite = [](const std::string& stance) { return stance == "support" ? "attack" : "support"; };
  // A claim drawn from the given stance on any topic other than `topic`.
  std::vector<std::string> topic_list(topics.begin(), topics.end());
  auto other_topic_claim = [&](const std::string& topic, const std::string& stance, std::mt19937_64& rng) {
    for (int attempt = 0; attempt < 1000; ++attempt) {
      const auto& other = topic_list[pick(rng, topic_list.size())];
      if (other == topic) continue;
      auto it = claims.find({other, stance});
      if (it != claims.end() && !it->second.empty()) return it->second[pick(rng, it->second.size())];
    }
    throw InvalidArgument(qrels_path + ": no other topic has '" + stance + "' claims for negatives");
  };

  // Built before the draws, so that a missing WordNet fails before any work.
  std::optional<text::Inverter> inverter;
  const bool both_directions = options.curriculum == StanceCurriculum::kInvertedBoth;
  if (options.curriculum == StanceCurriculum::kInverted || both_directions) inverter.emplace();
  std::vector<bool> hard_negative;  // per drawn triple: its negative is same topic, other stance
  std::mt19937_64 rng(options.seed);
  std::vector<Triple> triples;
  triples.reserve(options.count);
  for (std::size_t i = 0; i < options.count; ++i) {
    const auto& q = queries[pick(rng, queries.size())];
    const auto& instruction = options.templates[pick(rng, options.templates.size())];
    Triple t;
    t.anchor = stance_query(instruction, q.stance, q.topic);
    t.positive = text_of(texts, q.positives[pick(rng, q.positives.size())], qrels_path);
    const int kind = options.curriculum == StanceCurriculum::kHomogeneous ? 0 : int(i % 3);
    std::string negative;
    const auto& hard = claims[{q.topic_id, opposite(q.stance)}];
    hard_negative.push_back(kind == 0 && !hard.empty());
    if (hard_negative.back()) negative = hard[pick(rng, hard.size())];
    else if (kind == 1) negative = other_topic_claim(q.topic_id, q.stance, rng);
    else negative = other_topic_claim(q.topic_id, opposite(q.stance), rng);
    t.negatives.push_back(text_of(texts, negative, metadata_path));
    t.group = q.topic_id;
    triples.push_back(std::move(t));
  }
  if (inverter) {
    add_inverted_negatives(triples, *inverter, InvertedText::kPositive, both_directions ? &hard_negative : nullptr);
  }
  return triples;
}

namespace {

// The end of the refusal of a triple of `bytes` (texts together) above kMaxTripleBytes.
std::string above_the_triple_limit(std::size_t bytes) {
  return std::to_string(bytes) + " bytes, above the 1 MiB (" + std::to_string(kMaxTripleBytes) +
         " bytes) a triple may hold; a model reads a few thousand characters of a text";
}

std::size_t bytes_of(const Triple& t) {
  std::size_t bytes = t.anchor.size() + t.positive.size() + t.group.size();
  for (const auto& n : t.negatives) bytes += n.size();
  return bytes;
}

}  // namespace

void require_triple_sizes(const std::vector<Triple>& triples, const std::string& caller) {
  for (std::size_t i = 0; i < triples.size(); ++i) {
    const std::size_t bytes = bytes_of(triples[i]);
    if (bytes > kMaxTripleBytes) {
      throw InvalidArgument(caller + ": triple " + std::to_string(i) + " is " + above_the_triple_limit(bytes));
    }
  }
}

std::vector<Triple> load_tsv_triples(const std::string& path) {
  std::vector<Triple> triples;
  for (const data::TsvRow& row : data::read_tsv(path)) {
    const std::vector<std::string>& f = row.fields;
    const std::string where = path + ":" + std::to_string(row.line) + ": ";
    std::size_t line_bytes = f.size() - 1;  // the tabs
    for (const auto& field : f) line_bytes += field.size();
    if (line_bytes > kMaxTripleBytes) throw CorruptFile(where + "the line is " + above_the_triple_limit(line_bytes));
    if (f.size() != 3 && f.size() != 4) {
      throw CorruptFile(where + "expected anchor<TAB>positive<TAB>negative[<TAB>group], found " +
                        std::to_string(f.size()) + " fields");
    }
    if (f[0].empty() || f[1].empty() || f[2].empty()) {
      throw CorruptFile(where + "anchor, positive and negative must not be empty");
    }
    triples.push_back(Triple{f[0], f[1], {f[2]}, f.size() == 4 ? f[3] : std::string()});
  }
  return triples;
}

std::vector<Triple> load_tsv_triples(const std::vector<std::string>& paths) {
  std::vector<Triple> all;
  for (const auto& path : paths) {
    auto part = load_tsv_triples(path);
    all.insert(all.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  return all;
}

TripleData parse_triple_data(const std::string& name) {
  if (name == "tsv") return TripleData::kTsv;
  if (name == "arguana") return TripleData::kArguAna;
  if (name == "sick") return TripleData::kSick;
  if (name == "stance") return TripleData::kStance;
  throw InvalidArgument("unknown triple data '" + name + "' (expected tsv, arguana, sick or stance)");
}

std::string to_string(TripleData data) {
  switch (data) {
    case TripleData::kTsv: return "tsv";
    case TripleData::kArguAna: return "arguana";
    case TripleData::kSick: return "sick";
    case TripleData::kStance: return "stance";
  }
  throw InvalidArgument("to_string: unknown TripleData value " + std::to_string(static_cast<int>(data)));
}

void validate(const TripleSource& source) {
  const auto need = [&](const std::string& value, const char* what) {
    if (value.empty()) throw InvalidArgument(to_string(source.data) + " triples need " + what);
  };
  std::vector<std::string> files;  // what the source reads
  switch (source.data) {
    case TripleData::kTsv:
      if (source.triple_files.empty()) throw InvalidArgument("tsv triples need at least one triples file");
      files = source.triple_files;
      break;
    case TripleData::kSick:
      need(source.pairs, "a pairs file (pairs_<split>.tsv)");
      need(source.dataset, "a dataset directory");
      files = {source.pairs, join_path(source.dataset, "corpus.jsonl")};
      break;
    case TripleData::kArguAna:
    case TripleData::kStance:
      // BEIR directories with metadata and a training split's qrels.
      need(source.dataset, "a dataset directory");
      need(source.qrels, "the training split's qrels");
      files = {source.qrels};
      for (const char* name : {"corpus.jsonl", "queries.jsonl", "metadata.jsonl"}) {
        files.push_back(join_path(source.dataset, name));
      }
      break;
  }
  if (source.data == TripleData::kArguAna && source.negatives_per_anchor < 1) {
    throw InvalidArgument("arguana triples need negatives_per_anchor >= 1");
  }
  if (source.data == TripleData::kStance && source.stance_count < 1) {
    throw InvalidArgument("stance triples need stance_count >= 1");
  }
  for (const auto& file : files) require_regular_file(file);
}

std::vector<Triple> build_triples(const TripleSource& source) {
  validate(source);
  switch (source.data) {
    case TripleData::kTsv:
      return load_tsv_triples(source.triple_files);
    case TripleData::kArguAna: {
      ArguAnaTripleOptions options;
      options.negatives_per_anchor = source.negatives_per_anchor;
      options.seed = source.seed;
      return arguana_triples(source.dataset, source.qrels, join_path(source.dataset, "metadata.jsonl"), options);
    }
    case TripleData::kSick:
      return sick_triples(source.pairs, join_path(source.dataset, "corpus.jsonl"), source.seed);
    case TripleData::kStance: {
      StanceTripleOptions options;
      options.curriculum = source.curriculum;
      options.count = source.stance_count;
      options.seed = source.seed;
      return claim_stance_triples(source.dataset, source.qrels, join_path(source.dataset, "metadata.jsonl"), options);
    }
  }
  throw InvalidArgument("build_triples: unknown TripleData value " + std::to_string(static_cast<int>(source.data)));
}

std::string describe(const TripleSource& source) {
  std::string description = to_string(source.data);
  for (const auto& file : source.triple_files) description += ":" + file;
  if (!source.dataset.empty()) description += ":" + source.dataset;
  return description;
}

eval::RetrievalTask dev_task(const std::vector<Triple>& triples) {
  eval::RetrievalTask task;
  std::map<std::string, std::string> id_of;
  const auto add_document = [&](const std::string& text) {
    auto [it, fresh] = id_of.emplace(text, "d" + std::to_string(id_of.size()));
    if (fresh) {
      task.doc_ids.push_back(it->second);
      task.doc_texts.push_back(text);
    }
    return it->second;
  };
  for (std::size_t i = 0; i < triples.size(); ++i) {
    const std::string qid = "q" + std::to_string(i);
    task.query_ids.push_back(qid);
    task.query_texts.push_back(triples[i].anchor);
    task.qrels[qid][add_document(triples[i].positive)] = 1;
    for (const auto& n : triples[i].negatives) add_document(n);
  }
  return task;
}

std::size_t remove_triples_mentioning(std::vector<Triple>& triples,
                                      const std::unordered_set<std::string>& texts) {
  const std::size_t before = triples.size();
  triples.erase(std::remove_if(triples.begin(), triples.end(),
                               [&](const Triple& t) { return texts.count(t.anchor) || texts.count(t.positive); }),
                triples.end());
  return before - triples.size();
}

std::size_t add_inverted_negatives(std::vector<Triple>& triples, const text::Inverter& inverter,
                                   InvertedText which, const std::vector<bool>* flip_negatives) {
  if (flip_negatives && flip_negatives->size() != triples.size()) {
    throw InvalidArgument("add_inverted_negatives: " + std::to_string(flip_negatives->size()) + " flags for " +
                          std::to_string(triples.size()) + " triples");
  }
  // Checked before any triple is moved, so a refused call leaves the caller's triples as they were.
  for (std::size_t i = 0; i < triples.size(); ++i) {
    if (triples[i].negatives.size() != 1) {
      throw InvalidArgument("add_inverted_negatives: triples need exactly one negative, triple " + std::to_string(i) +
                            " has " + std::to_string(triples[i].negatives.size()));
    }
  }
  std::map<std::string, std::optional<std::string>> inversions;  // edited text -> its edit
  const auto inversion_of = [&](const std::string& text) -> const std::optional<std::string>& {
    auto [it, fresh] = inversions.try_emplace(text);
    if (fresh) {
      if (auto inversion = inverter.invert(text)) it->second = std::move(inversion->text);
    }
    return it->second;
  };
  std::vector<Triple> out;
  out.reserve(triples.size() * 2);
  std::size_t added = 0;
  for (std::size_t i = 0; i < triples.size(); ++i) {
    Triple& t = triples[i];
    const std::optional<std::string> edit = inversion_of(which == InvertedText::kAnchor ? t.anchor : t.positive);
    const std::optional<std::string> flipped =
        flip_negatives && (*flip_negatives)[i] ? inversion_of(t.negatives[0]) : std::nullopt;
    out.push_back(std::move(t));
    const Triple& original = out.back();
    if (edit) {
      Triple copy = original;
      copy.negatives.assign(1, *edit);
      out.push_back(std::move(copy));
      ++added;
    }
    if (flipped) {
      Triple copy = out[out.size() - (edit ? 2 : 1)];
      copy.positive = *flipped;
      out.push_back(std::move(copy));
      ++added;
    }
  }
  triples = std::move(out);
  return added;
}

}  // namespace counterpoint::training
