#include "commands.h"

#include <algorithm>
#include <cstdint>

namespace counterpoint::cli {

namespace {

using Part = app::SearchSetting::Part;
using Kind = app::SearchSetting::Kind;

// One flag per setting of `part`, its help and default read from the table and `defaults`.
void add_part(CLI::App* cmd, SearchArgs& a, const retrieval::SearchOptions& defaults, Part part,
              const std::string& help_override = "") {
  a.defaults = defaults;
  for (const auto& setting : app::search_settings()) {
    if (setting.part != part) continue;
    auto flag = std::make_unique<SearchArgs::Flag>();
    flag->setting = &setting;
    const std::string help = setting.keyword == "scorer" && !help_override.empty() ? help_override : setting.help;
    const std::string shown = setting.show(defaults);
    switch (setting.kind) {
      case Kind::kCount: flag->option = cmd->add_option(setting.flag, flag->count, help); break;
      case Kind::kNumber: flag->option = cmd->add_option(setting.flag, flag->number, help); break;
      case Kind::kName: flag->option = cmd->add_option(setting.flag, flag->name, help); break;
      case Kind::kSwitch: flag->option = cmd->add_flag(setting.flag, flag->on, help); break;
    }
    if (setting.kind != Kind::kSwitch) flag->option->default_str(shown);
    a.flags.push_back(std::move(flag));
  }
}

}  // namespace

void add_stage1_options(CLI::App* cmd, SearchArgs& a, const retrieval::SearchOptions& defaults) {
  add_part(cmd, a, defaults, Part::kStage1);
}

void add_scorer_options(CLI::App* cmd, SearchArgs& a, const retrieval::SearchOptions& defaults,
                        const std::string& scorers) {
  add_part(cmd, a, defaults, Part::kScorer, scorers);
}

CLI::Option* add_sparsity_scale_option(CLI::App* cmd, float& scale) {
  return cmd->add_option("--sparsity-scale", scale, app::search_setting("sparsity_scale").help)->default_str("");
}

void add_search_options(CLI::App* cmd, SearchArgs& a, const retrieval::SearchOptions& defaults) {
  add_stage1_options(cmd, a, defaults);
  add_scorer_options(cmd, a, defaults, app::search_setting("scorer").help);
  add_part(cmd, a, defaults, Part::kSearch);
}

bool SearchArgs::given(const std::string& keyword) const {
  for (const auto& flag : flags) {
    if (flag->setting->keyword == keyword) return flag->option->count() > 0;
  }
  return false;
}

retrieval::SearchOptions SearchArgs::resolve() const {
  app::GivenSettings given;
  for (const auto& flag : flags) {
    if (!flag->option->count()) continue;
    const auto& setting = *flag->setting;
    switch (setting.kind) {
      case Kind::kCount:
        given.emplace_back(setting.keyword, std::int64_t(std::min<std::uint64_t>(flag->count, INT64_MAX)));
        break;
      case Kind::kNumber: given.emplace_back(setting.keyword, flag->number); break;
      case Kind::kName: given.emplace_back(setting.keyword, flag->name); break;
      // A "--no-..." flag turns its setting off; any other switch turns it on.
      case Kind::kSwitch: given.emplace_back(setting.keyword, setting.flag.rfind("--no-", 0) != 0); break;
    }
  }
  return app::search_options_from(given, defaults);
}

void add_feature_cache_options(CLI::App* cmd, std::string& folder) {
  cmd->add_option("--feature-cache", folder,
                  "Folder keeping the network's pooled features of every text encoded, so a corpus goes through a "
                  "network once (E and every head Es over it reuse them)");
  cmd->add_flag_callback("--no-feature-cache", [&folder] { folder.clear(); }, "Encode everything afresh, keep nothing");
}

std::vector<std::string> query_ids(const std::vector<data::Query>& queries) {
  std::vector<std::string> ids;
  for (const auto& q : queries) ids.push_back(q.id);
  return ids;
}

}  // namespace counterpoint::cli
