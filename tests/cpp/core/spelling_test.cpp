#include "counterpoint/core/spelling.h"

#include <gtest/gtest.h>

using namespace counterpoint;

TEST(Spelling, CountsEditsIgnoringCaseWithASwapAsOneEdit) {
  EXPECT_EQ(edit_distance("search", "search"), 0u);
  EXPECT_EQ(edit_distance("HNSW", "hnsw"), 0u);
  EXPECT_EQ(edit_distance("serach", "search"), 1u);  // two adjacent letters swapped
  EXPECT_EQ(edit_distance("serch", "search"), 1u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(ascii_lower("All-MiniLM-L6-v2"), "all-minilm-l6-v2");
}

TEST(Spelling, SuggestsTheNearestNameOnlyWhenItIsATypo) {
  const std::vector<std::string> commands{"demo", "index", "search", "run", "eval", "train"};
  EXPECT_EQ(did_you_mean("serach", commands), "; did you mean 'search'?");
  EXPECT_EQ(did_you_mean("indx", commands), "; did you mean 'index'?");
  EXPECT_EQ(did_you_mean("frobnicate", commands), "");
  EXPECT_EQ(nearest_name("all-minilm-l6", {"all-minilm-l6-v2", "all-mpnet-base-v2"}), "all-minilm-l6-v2");
  EXPECT_EQ(nearest_name("x", {}), std::nullopt);
}
