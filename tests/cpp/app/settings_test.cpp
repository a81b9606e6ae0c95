// The one table of search settings: what every face's keywords and flags become, and the one
// check of what each scorer reads. Messages name settings by keyword; the CLI maps them to flags.
#include "counterpoint/app/settings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "counterpoint/core/errors.h"

using namespace counterpoint;
using app::GivenSettings;
using app::ScorerInputs;
using app::search_options_from;
using ::testing::HasSubstr;

namespace {

std::string refusal(const GivenSettings& given) {
  try {
    search_options_from(given);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(accepted)";
}

std::string refusal(const retrieval::SearchOptions& options, const ScorerInputs& inputs) {
  try {
    app::require_scorer_inputs(options, inputs);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(SearchSettings, NothingGivenIsTheDefaultConstructedStruct) {
  const retrieval::SearchOptions defaults{};
  const retrieval::SearchOptions options = search_options_from({});
  EXPECT_EQ(options.k, defaults.k);
  EXPECT_EQ(options.candidates, defaults.candidates);
  EXPECT_EQ(options.scorer, defaults.scorer);
  EXPECT_EQ(options.stage1, defaults.stage1);
  EXPECT_FALSE(options.alpha.has_value());
  EXPECT_EQ(options.sparsity.identical_guard, defaults.sparsity.identical_guard);
}

TEST(SearchSettings, EachKeywordSetsItsField) {
  const auto options = search_options_from({{"k", std::int64_t(5)},
                                            {"scorer", std::string("kappa4")},
                                            {"alpha", 0.5},
                                            {"sparsity_scale", std::int64_t(2)},
                                            {"guard", false},
                                            {"stance", std::string("support")},
                                            {"ef_search", std::int64_t(64)}});
  EXPECT_EQ(options.k, 5u);
  EXPECT_EQ(options.scorer, retrieval::Scorer::kSparsity);
  EXPECT_EQ(options.sparsity.function, scoring::Sparsity::kKappa4);
  EXPECT_EQ(options.alpha, 0.5f);
  EXPECT_EQ(options.sparsity.scale, 2.0f);  // a whole number is also a number
  EXPECT_FALSE(options.sparsity.identical_guard);
  EXPECT_EQ(options.stance, retrieval::Stance::kSupport);
  EXPECT_EQ(options.dense_params.ef_search, 64);
}

TEST(SearchSettings, CandidatesFollowKUnlessGiven) {
  const retrieval::SearchOptions defaults{};
  EXPECT_EQ(search_options_from({{"k", std::int64_t(5)}}).candidates, defaults.candidates);
  EXPECT_EQ(search_options_from({{"k", std::int64_t(defaults.candidates + 50)}}).candidates, defaults.candidates + 50);
  EXPECT_EQ(search_options_from({{"k", std::int64_t(5)}, {"candidates", std::int64_t(7)}}).candidates, 7u);
}

TEST(SearchSettings, AnOptionsObjectStandsForTheKeywordsWhichMustKeepTheirDefaults) {
  retrieval::SearchOptions object = search_options_from({{"k", std::int64_t(4)}, {"scorer", std::string("hoyer")}});
  const retrieval::SearchOptions defaults{};
  // Keywords at their defaults (as a signature passes them) leave the object as it is.
  const auto taken = app::options_or_settings(object, {{"k", std::int64_t(defaults.k)}, {"guard", true}});
  EXPECT_EQ(taken.k, 4u);
  EXPECT_EQ(taken.scorer, retrieval::Scorer::kSparsity);
  try {
    app::options_or_settings(object, {{"k", std::int64_t(3)}, {"scorer", std::string("cosine")}, {"alpha", 2.0}});
    ADD_FAILURE() << "a moved keyword beside options was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "give the search settings in options or as keywords, not both: k, alpha set beside options");
  }
  EXPECT_EQ(app::options_or_settings(std::nullopt, {{"k", std::int64_t(3)}}).k, 3u);  // no object: the keywords
}

TEST(SearchSettings, AnUnknownKeywordIsRefusedNamingTheClosest) {
  EXPECT_EQ(refusal({{"scorre", std::string("hoyer")}}), "unknown search setting 'scorre'; did you mean 'scorer'?");
}

TEST(SearchSettings, AValueOfTheWrongKindIsRefusedByKeyword) {
  EXPECT_EQ(refusal({{"alpha", std::string("high")}}), "alpha needs a number; got the name 'high'");
  EXPECT_EQ(refusal({{"k", 2.5}}), "k needs a whole number; got the number 2.5");
  EXPECT_EQ(refusal({{"k", true}}), "k needs a whole number; got True");  // True is no count
  EXPECT_EQ(refusal({{"guard", std::int64_t(0)}}), "guard needs True or False; got the whole number 0");
}

TEST(SearchSettings, OutOfRangeValuesNameTheKeyword) {
  EXPECT_THAT(refusal({{"k", std::int64_t(0)}}), HasSubstr("k must be >= 1"));
  EXPECT_THAT(refusal({{"ef_search", std::int64_t(-1)}}), HasSubstr("ef_search must be >= 0"));
  EXPECT_THAT(refusal({{"scorer", std::string("hoyre")}}), HasSubstr("hoyer"));
  // A setting no part of the chosen search reads is refused, as validate_settings refuses it.
  EXPECT_THAT(refusal({{"alpha", 2.0}}), HasSubstr("alpha"));
}

TEST(SearchSettings, KeywordsAndFlagsAreUnique) {
  std::set<std::string> keywords, flags;
  for (const auto& setting : app::search_settings()) {
    EXPECT_TRUE(keywords.insert(setting.keyword).second) << setting.keyword;
    EXPECT_TRUE(flags.insert(setting.flag).second) << setting.flag;
    EXPECT_EQ(setting.flag.rfind("-", 0), 0u) << setting.flag;
    EXPECT_FALSE(setting.help.empty()) << setting.keyword;
  }
}

TEST(ScorerInputs, ASparsityScorerNeedsEsAndAnIndexWithEsRows) {
  const auto hoyer = search_options_from({{"scorer", std::string("hoyer")}});
  ScorerInputs inputs;
  EXPECT_EQ(refusal(hoyer, inputs),
            "scorer 'hoyer' adds alpha * sparsity(Es(q) - Es(p)) and needs a sparse-aware encoder Es (sparse_model)");
  inputs.sparse_model = ScorerInputs::Presence::kGiven;
  EXPECT_EQ(refusal(hoyer, inputs), "(accepted)");
  inputs.index_sparse_rows = false;
  inputs.where = "index claims.idx";
  EXPECT_THAT(refusal(hoyer, inputs), HasSubstr("index claims.idx stores none: rebuild it with an Es (sparse_model"));
}

TEST(ScorerInputs, AnInputGivenToAScorerThatWouldNotReadItIsRefused) {
  const retrieval::SearchOptions cosine = search_options_from({});
  ScorerInputs inputs;
  inputs.sparse_model = ScorerInputs::Presence::kGiven;
  EXPECT_EQ(refusal(cosine, inputs),
            "sparse_model is read by the sparsity scorers (hoyer, l2l1, kappa4); scorer 'cosine' would not use it");
  inputs.sparse_model = ScorerInputs::Presence::kHeld;  // the Es an index records: at hand, never refused
  EXPECT_EQ(refusal(cosine, inputs), "(accepted)");
  inputs.verifier = ScorerInputs::Presence::kGiven;
  EXPECT_EQ(refusal(cosine, inputs), "verifier is read by scorer 'verifier' only; scorer 'cosine' would not use it");
}

TEST(ScorerInputs, TheVerifierScorerNeedsAVerifier) {
  const auto verifier = search_options_from({{"scorer", std::string("verifier")}});
  ScorerInputs inputs;
  EXPECT_THAT(refusal(verifier, inputs), HasSubstr("needs a map verifier (verifier"));
  inputs.verifier = ScorerInputs::Presence::kGiven;
  inputs.index_token_rows = true;
  EXPECT_EQ(refusal(verifier, inputs), "(accepted)");
}

}  // namespace
