#include "counterpoint/data/run.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "test_files.h"

using namespace counterpoint;
using namespace counterpoint::data;
using counterpoint::test_support::fixture;
using counterpoint::test_support::scratch_file;
using counterpoint::test_support::corrupt_message;

TEST(TrecRun, ReadsSixColumnLinesInRankOrder) {
  RankedRun run = read_trec_run(fixture("run.trec"));
  EXPECT_EQ(run, (RankedRun{{"q1", {{"d1", 2.5f}, {"d3", 0.125f}}}, {"q2", {{"d2", -1.0f}}}}));
}

TEST(TrecRun, RankColumnDecidesOrderNotFilePosition) {
  std::string path = scratch_file("shuffled.trec", "q Q0 b 2 0.5 t\nq Q0 a 1 0.9 t\n");
  EXPECT_EQ(read_trec_run(path), (RankedRun{{"q", {{"a", 0.9f}, {"b", 0.5f}}}}));
}

TEST(TrecRun, WritesExactLinesAndRoundTripsEveryFloatBit) {
  RankedRun run{{"q2", {{"x", 0.1f}, {"y", 1e-30f}}},
          {"q1", {{"z", 1.0f / 3.0f}, {"w", -7.0f}, {"v", 123456789.0f}}}};
  std::string path = scratch_file("out.trec", "");
  write_trec_run(path, run, "sparsecl");
  EXPECT_EQ(read_file(path),
            "q1 Q0 z 1 0.33333334 sparsecl\n"
            "q1 Q0 w 2 -7 sparsecl\n"
            "q1 Q0 v 3 123456792 sparsecl\n"  // the float nearest 123456789
            "q2 Q0 x 1 0.1 sparsecl\n"
            "q2 Q0 y 2 1e-30 sparsecl\n");
  EXPECT_EQ(read_trec_run(path), run);
}

TEST(TrecRun, WriterRejectsWhatTheFormatCannotHold) {
  std::string path = scratch_file("bad.trec", "");
  EXPECT_THROW(write_trec_run(path, RankedRun{{"q 1", {{"d", 1.0f}}}}), InvalidArgument);
  EXPECT_THROW(write_trec_run(path, RankedRun{{"q", {{"", 1.0f}}}}), InvalidArgument);
  EXPECT_THROW(write_trec_run(path, RankedRun{{"q", {{"d", 1.0f}}}}, "two words"), InvalidArgument);
  EXPECT_THROW(
      write_trec_run(path, RankedRun{{"q", {{"d", std::numeric_limits<float>::quiet_NaN()}}}}),
      InvalidArgument);
  EXPECT_THROW(write_trec_run(path, RankedRun{{"q", {{"d", 1.0f}, {"d", 0.5f}}}}), InvalidArgument);
}

TEST(TrecRun, WriterRejectsIdsThatBeginWithAByteOrderMark) {
  // Read back, such an id on the first line would lose its mark: the reader drops a file BOM.
  std::string path = scratch_file("bom.trec", "");
  EXPECT_THROW(write_trec_run(path, RankedRun{{"\xEF\xBB\xBFq", {{"d", 1.0f}}}}), InvalidArgument);
  EXPECT_THROW(write_trec_run(path, RankedRun{{"q", {{"\xEF\xBB\xBF" "d", 1.0f}}}}), InvalidArgument);
  write_trec_run(path, RankedRun{{"q\xEF\xBB\xBF", {{"d", 1.0f}}}});  // elsewhere in an id it is kept
  EXPECT_EQ(read_trec_run(path), (RankedRun{{"q\xEF\xBB\xBF", {{"d", 1.0f}}}}));
}

TEST(TrecRun, ReaderNamesTheBrokenLine) {
  std::string fields = scratch_file("fields.trec", "q Q0 d 1 0.5 t\nq Q0 e 2 0.4\n");
  EXPECT_EQ(corrupt_message([&] { read_trec_run(fields); }),
            fields + ":2: expected 6 fields (qid Q0 docid rank score tag), got 5");
  std::string score = scratch_file("score.trec", "q Q0 d 1 high t\n");
  EXPECT_EQ(corrupt_message([&] { read_trec_run(score); }),
            score + ":1: score \"high\" is not a finite number");
  std::string rank = scratch_file("rank.trec", "q Q0 d first 0.5 t\n");
  EXPECT_EQ(corrupt_message([&] { read_trec_run(rank); }),
            rank + ":1: rank \"first\" is not an integer");
  std::string dup = scratch_file("dup.trec", "q Q0 d 1 0.5 t\nq Q0 d 2 0.4 t\n");
  EXPECT_EQ(corrupt_message([&] { read_trec_run(dup); }),
            dup + ":2: document \"d\" listed twice for query \"q\"");
  EXPECT_TRUE(read_trec_run(scratch_file("empty.trec", "")).empty());
  EXPECT_THROW(read_trec_run(fixture("absent.trec")), FileNotFound);
}

// A score too small for a float is finite (1e-320 is a double's subnormal, as tools scoring in
// double write): it reads as a zero of its sign, keeping its rank, and was refused as "not a
// finite number" (issue #62). Too large for a float is still refused (DataBadInput's 1e39).
TEST(TrecRun, ScoresBelowTheFloatRangeReadAsZeroOfTheirSign) {
  const std::string path = scratch_file("tiny.trec",
                                        "q Q0 d1 1 1e-320 t\n"
                                        "q Q0 d2 2 -1e-320 t\n"
                                        "q Q0 d3 3 1e-40 t\n"
                                        "q Q0 d4 4 0.000000000000000000000000000000000000000000000000001 t\n"
                                        "q Q0 d5 5 -1e-99999 t\n");
  const RankedRun run = read_trec_run(path);
  ASSERT_EQ(run.at("q").size(), 5u);
  EXPECT_EQ(run, (RankedRun{{"q", {{"d1", 0.0f}, {"d2", 0.0f}, {"d3", 1e-40f}, {"d4", 0.0f}, {"d5", 0.0f}}}}));
  EXPECT_FALSE(std::signbit(run.at("q")[0].score));
  EXPECT_TRUE(std::signbit(run.at("q")[1].score));
  EXPECT_TRUE(std::signbit(run.at("q")[4].score));
  for (const std::string score : {"-1e39", "1e400", "1e99999"}) {
    const std::string huge = scratch_file("huge.trec", "q Q0 d 1 " + score + " t\n");
    EXPECT_EQ(corrupt_message([&] { read_trec_run(huge); }), huge + ":1: score \"" + score + "\" is not a finite number");
  }
}
