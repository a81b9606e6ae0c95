// `counterpoint invert`: polarity-reversing minimal edits (text::Inverter) of texts given on the
// command line, in a corpus or in a file of texts. Writes one JSON object per input text
// ({"id", "text", "inverted", "edit", "before", "after"}; "inverted" and "edit" are null when no
// edit applies) and a count per edit kind on stderr.
#include <iostream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "counterpoint/app/corpus_index.h"
#include "counterpoint/data/corpus_files.h"
#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/text/inversion.h"

namespace counterpoint::cli {

namespace {

struct InvertArgs {
  std::vector<std::string> texts;
  std::string corpus, queries, out, edits;
};

}  // namespace

std::vector<text::EditKind> parse_edit_list(const std::string& list) {
  std::vector<text::EditKind> kinds;
  std::stringstream in(list);
  for (std::string name; std::getline(in, name, ',');) kinds.push_back(text::parse_edit_kind(name));
  if (kinds.empty()) throw InvalidArgument("an edit list needs at least one kind");
  return kinds;
}

std::string edit_list_string(const std::vector<text::EditKind>& kinds) {
  std::string list;
  for (auto kind : kinds) list += (list.empty() ? "" : ",") + text::to_string(kind);
  return list;
}

void add_invert_command(CLI::App& app) {
  auto a = std::make_shared<InvertArgs>();
  auto* cmd = app.add_subcommand(
      "invert", "Reverse what texts assert with one minimal edit (negation, antonym, connective, role swap)");
  cmd->add_option("texts", a->texts, "Texts to invert (ids t1, t2, ...)");
  auto* corpus = cmd->add_option("--corpus", a->corpus, std::string("The corpus to invert: ") + data::kCorpusFormats);
  auto* queries =
      cmd->add_option("--queries", a->queries,
                      "A queries.jsonl, a .csv/.tsv with id and text columns, or a text file with one text per line");
  corpus->excludes(queries);
  cmd->add_option("--edits", a->edits,
                  "Edit kinds to try, in order, comma-separated (default: the stance order " +
                      edit_list_string(text::stance_edit_kinds()) + "; role-swap must be asked for)");
  cmd->add_option("--out", a->out, "Write the JSON lines here (atomically) instead of stdout");
  cmd->callback([a] {
    if (!a->out.empty()) require_safe_output(a->out, "--out", {{"--corpus", a->corpus}, {"--queries", a->queries}});
    std::vector<std::pair<std::string, std::string>> inputs;  // (id, text)
    if (!a->corpus.empty()) {
      for (const auto& d : data::load_documents(a->corpus)) inputs.emplace_back(d.id, data::encoding_text(d));
    } else if (!a->queries.empty()) {
      for (const auto& q : data::load_query_file(a->queries)) inputs.emplace_back(q.id, q.text);
    }
    for (std::size_t i = 0; i < a->texts.size(); ++i) inputs.emplace_back("t" + std::to_string(i + 1), a->texts[i]);
    if (inputs.empty()) throw InvalidArgument("nothing to invert: give texts, --corpus or --queries");

    const text::Inverter inverter(text::InverterOptions{
        a->edits.empty() ? text::stance_edit_kinds() : parse_edit_list(a->edits)});
    std::map<std::string, std::size_t> counts;
    std::string lines;
    for (const auto& [id, original] : inputs) {
      const auto inversion = inverter.invert(original);
      nlohmann::ordered_json row = {{"id", id}, {"text", original}, {"inverted", nullptr}, {"edit", nullptr},
                            {"before", nullptr}, {"after", nullptr}};
      if (inversion) {
        row["inverted"] = inversion->text;
        row["edit"] = text::to_string(inversion->kind);
        row["before"] = inversion->before;
        row["after"] = inversion->after;
        ++counts[text::to_string(inversion->kind)];
      }
      lines += row.dump() + "\n";
    }
    if (a->out.empty()) std::cout << lines;
    else write_file_atomic(a->out, lines);

    std::size_t inverted = 0;
    for (const auto& [kind, n] : counts) inverted += n;
    std::cerr << "inverted " << inverted << " of " << inputs.size() << " texts";
    for (const auto& [kind, n] : counts) std::cerr << "; " << kind << " " << n;
    std::cerr << "\n";
  });
}

}  // namespace counterpoint::cli
