#include "sick_relations.h"

#include "counterpoint/core/errors.h"
#include "counterpoint/data/tsv.h"

namespace counterpoint::training::detail {

SickRelations read_sick_relations(const std::string& pairs_path) {
  SickRelations relations;
  std::map<std::string, std::size_t> column;
  for (const data::TsvRow& row : data::read_tsv(pairs_path)) {
    const std::vector<std::string>& f = row.fields;
    const std::size_t line = row.line;
    if (column.empty()) {
      for (std::size_t i = 0; i < f.size(); ++i) column[f[i]] = i;
      for (const char* name : {"sentence_A", "sentence_B", "entailment_AB", "entailment_BA", "relatedness_score"}) {
        if (!column.count(name)) {
          throw CorruptFile(pairs_path + ":" + std::to_string(line) + ": header lacks column '" + name + "'");
        }
      }
      continue;
    }
    if (f.size() != column.size()) {
      throw CorruptFile(pairs_path + ":" + std::to_string(line) + ": expected " +
                        std::to_string(column.size()) + " fields, found " + std::to_string(f.size()));
    }
    const auto& a = f[column["sentence_A"]];
    const auto& b = f[column["sentence_B"]];
    double relatedness = 0;
    try {
      relatedness = std::stod(f[column["relatedness_score"]]);
    } catch (const std::exception&) {
      throw CorruptFile(pairs_path + ":" + std::to_string(line) + ": relatedness_score is not a number");
    }
    // entailment_AB is "A_<relation>_B", entailment_BA is "B_<relation>_A".
    auto record = [&](const std::string& label, const std::string& prefix, const std::string& from,
                      const std::string& to) {
      auto& r = relations.of[from];
      if (label == prefix + "contradicts_" + (prefix == "A_" ? "B" : "A")) r.contradicted.push_back(to);
      else if (label == prefix + "entails_" + (prefix == "A_" ? "B" : "A")) r.entailed.push_back(to);
      else if (label == prefix + "neutral_" + (prefix == "A_" ? "B" : "A")) r.neutral.emplace_back(relatedness, to);
      else throw CorruptFile(pairs_path + ":" + std::to_string(line) + ": unknown relation '" + label + "'");
    };
    record(f[column["entailment_AB"]], "A_", a, b);
    record(f[column["entailment_BA"]], "B_", b, a);
    relations.sentences.push_back(a);
    relations.sentences.push_back(b);
  }

  return relations;
}

}  // namespace counterpoint::training::detail
