// counterpoint/app/settings.h: the search settings every face takes, in one table. The CLI's
// flags, Python's keyword arguments (Index.search, SearchOptions(...), rerank) and
// counterpoint.milvus fill retrieval::SearchOptions through search_options_from, so each
// setting's name, kind, default and checks have one home. Refusals name a setting by its keyword
// (`ef_search`), which is what a Python or C++ caller typed; the CLI shows the flag instead
// (`--ef-search`, in_user_terms), reading the pairs from this table.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "counterpoint/retrieval/retriever.h"

namespace counterpoint::app {

// A value as a face received it: a switch, a whole number, a number or a name.
using SettingValue = std::variant<bool, std::int64_t, double, std::string>;

struct SearchSetting {
  enum class Kind { kCount, kNumber, kName, kSwitch };
  // Which commands take it: stage 1 (every search), stage 2's scorer (every command that
  // rescores), or the rest of a full search (hits, stance, per-call index parameters).
  enum class Part { kStage1, kScorer, kSearch };
  std::string keyword;  // the Python keyword, and the setting's name in messages
  std::string flag;     // the CLI flag; a "--no-..." switch sets the setting false
  Kind kind;
  Part part;
  std::string help;
  // The setting's value in `options` as --help and docstrings show it; "" when it is unset
  // (the recorded alpha, say).
  std::function<std::string(const retrieval::SearchOptions&)> show;
  // Sets it from a value of its kind (a whole number is also a number); InvalidArgument naming the
  // keyword for a value out of range.
  std::function<void(retrieval::SearchOptions&, const SettingValue&)> set;
};

// Every setting, in the order --help and the docstrings list them.
const std::vector<SearchSetting>& search_settings();

// The setting named `keyword`; InvalidArgument for an unknown one, naming the closest.
const SearchSetting& search_setting(const std::string& keyword);

// The settings a caller gave, by keyword, in the order given; one left out keeps its default.
using GivenSettings = std::vector<std::pair<std::string, SettingValue>>;

// `defaults` with `given` applied, then the rules that join settings: candidates not given
// follows k (retrieval::default_candidates over defaults.candidates), and the whole is checked
// (retrieval::validate_settings) before any work; candidates below k is left to the search
// (retrieval::validate_search), which a workflow may word in its own terms first.
// InvalidArgument names the keyword: an unknown one, a value of the wrong kind ("alpha needs a
// number; got the name 'x'") or out of range.
retrieval::SearchOptions search_options_from(const GivenSettings& given,
                                             const retrieval::SearchOptions& defaults = {});

// A whole options object in place of the settings' keywords (Python's options=, as FAISS passes
// one SearchParameters): without one, search_options_from(given, defaults); with one, `given` must
// leave every setting at its default, else a reader could not tell which wins (InvalidArgument
// naming the settings moved beside it), and the object is checked as search_options_from checks.
retrieval::SearchOptions options_or_settings(const std::optional<retrieval::SearchOptions>& options,
                                             const GivenSettings& given,
                                             const retrieval::SearchOptions& defaults = {});

// What a search holds beside its settings. Each scorer reads some of it and a user who gives the
// rest expects it to be used, so both ways are checked, in one place, before anything loads.
struct ScorerInputs {
  // kGiven: named for this search, refused when its scorer would not read it; kHeld: at hand but
  // not chosen for it (the Es an Index was loaded with, the one an index records), never refused.
  enum class Presence { kAbsent, kGiven, kHeld };
  Presence sparse_model = Presence::kAbsent;  // Es
  Presence verifier = Presence::kAbsent;      // a map verifier
  // Known once an index is open: whether it stores Es rows / token rows.
  std::optional<bool> index_sparse_rows, index_token_rows;
  // The store, as messages name it: "index DIR", "collection 'claims'"; "" = "the index".
  std::string where;
};

// InvalidArgument when the scorer of `options` lacks an input it reads, or an input was given
// that it would not read. Messages name the inputs by their keywords (sparse_model, verifier).
void require_scorer_inputs(const retrieval::SearchOptions& options, const ScorerInputs& inputs);

}  // namespace counterpoint::app
