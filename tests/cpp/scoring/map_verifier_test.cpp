// TorchScript map verifiers: the input channels and valid mask they receive, padding and
// cropping to the module's map_size, and the errors for unusable files or outputs.
// Fixtures come from tests/fixtures/scoring/make_tiny_verifier.py (map_size 16).
#include "counterpoint/scoring/map_verifier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "counterpoint/core/errors.h"
#include "counterpoint/scoring/token_maps.h"

namespace counterpoint::scoring {
namespace {

std::string fixture(const std::string& name) {
  return std::string(COUNTERPOINT_TEST_DATA_DIR) + "/scoring/" + name;
}

Matrix map_of(std::size_t rows, std::size_t cols) {
  Matrix m(rows, cols);
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) m(i, j) = float((i * 7 + j * 3) % 11) / 10.0f - 0.5f;
  }
  return m;
}

Matrix transposed(const Matrix& m) {
  Matrix t(m.cols(), m.rows());
  for (std::size_t i = 0; i < m.rows(); ++i) {
    for (std::size_t j = 0; j < m.cols(); ++j) t(j, i) = m(i, j);
  }
  return t;
}

TEST(TorchScriptMapVerifier, ReadsMapSizeAndNamesItself) {
  const TorchScriptMapVerifier verifier(fixture("tiny_channel0_mean.pt"));
  EXPECT_EQ(verifier.map_size(), 16);
  EXPECT_EQ(verifier.name(), "torchscript:tiny_channel0_mean.pt");
  EXPECT_TRUE(verifier.score({}).empty());
}

TEST(TorchScriptMapVerifier, ChannelsAreMapRowMaxAndColumnMaxOverValidPairs) {
  const std::vector<Matrix> maps = {map_of(3, 4), map_of(5, 2), map_of(1, 1)};
  const TorchScriptMapVerifier channel0(fixture("tiny_channel0_mean.pt"));
  const TorchScriptMapVerifier channel1(fixture("tiny_channel1_mean.pt"));
  const TorchScriptMapVerifier channel2(fixture("tiny_channel2_mean.pt"));
  const std::vector<float> mean = channel0.score(maps);
  const std::vector<float> row_max = channel1.score(maps);
  const std::vector<float> col_max = channel2.score(maps);
  ASSERT_EQ(mean.size(), 3u);
  for (std::size_t b = 0; b < maps.size(); ++b) {
    // The padding is masked out, so each module reproduces a fixed reduction exactly.
    EXPECT_NEAR(mean[b], map_mean(maps[b]), 1e-6) << b;
    EXPECT_NEAR(row_max[b], map_maxsim(maps[b]), 1e-6) << b;
    EXPECT_NEAR(col_max[b], map_maxsim(transposed(maps[b])), 1e-6) << b;
  }
}

TEST(TorchScriptMapVerifier, CropsLargeMapsButTakesMaximaOverTheWholeMap) {
  Matrix big = map_of(20, 18);
  big(0, 17) = 0.99f;  // outside the 16 x 16 crop, but the row max of query token 0
  Matrix top_left(16, 16);
  double expected_row_max = 0.0;
  for (std::size_t i = 0; i < 16; ++i) {
    float best = big(i, 0);
    for (std::size_t j = 0; j < 18; ++j) best = std::max(best, big(i, j));
    expected_row_max += best;
    for (std::size_t j = 0; j < 16; ++j) top_left(i, j) = big(i, j);
  }
  expected_row_max /= 16.0;
  const TorchScriptMapVerifier channel0(fixture("tiny_channel0_mean.pt"));
  const TorchScriptMapVerifier channel1(fixture("tiny_channel1_mean.pt"));
  EXPECT_NEAR(channel0.score({big})[0], map_mean(top_left), 1e-6);
  EXPECT_NEAR(channel1.score({big})[0], expected_row_max, 1e-6);
}

TEST(TorchScriptMapVerifier, RejectsBadMaps) {
  const TorchScriptMapVerifier verifier(fixture("tiny_channel0_mean.pt"));
  EXPECT_THROW(verifier.score({Matrix()}), InvalidArgument);
  Matrix bad = map_of(2, 2);
  bad(1, 1) = NAN;
  EXPECT_THROW(verifier.score({map_of(2, 2), bad}), InvalidArgument);
}

TEST(TorchScriptMapVerifier, MissingFileIsFileNotFound) {
  EXPECT_THROW(TorchScriptMapVerifier(fixture("no_such_verifier.pt")), FileNotFound);
}

TEST(TorchScriptMapVerifier, OtherFilesAreCorrupt) {
  const std::string path = std::string(COUNTERPOINT_BINARY_DIR) + "/not_a_verifier.pt";
  {
    std::ofstream out(path, std::ios::binary);
    out << "this is not a TorchScript archive";
  }
  EXPECT_THROW(TorchScriptMapVerifier{path}, CorruptFile);
  std::remove(path.c_str());
  EXPECT_THROW(TorchScriptMapVerifier(fixture("make_tiny_verifier.py")), CorruptFile);
}

TEST(TorchScriptMapVerifier, WrongOutputShapeIsInvalidArgument) {
  const TorchScriptMapVerifier verifier(fixture("tiny_wrong_shape.pt"));
  try {
    verifier.score({map_of(2, 3), map_of(4, 4)});
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("expected an output of shape [2] or [2, 1], got [2, 2]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace counterpoint::scoring
