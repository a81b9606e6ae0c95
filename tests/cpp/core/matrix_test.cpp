#include "counterpoint/core/matrix.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"

using namespace counterpoint;

TEST(Matrix, AppendRowsAdoptsWidthWhenEmptyAndChecksItAfterwards) {
  Matrix m;
  std::vector<float> a{1, 2, 3, 4, 5, 6};
  m.append_rows(MatrixView(a.data(), 2, 3));
  EXPECT_EQ(m.rows(), 2u);
  EXPECT_EQ(m.cols(), 3u);
  EXPECT_FLOAT_EQ(m(1, 2), 6.0f);
  std::vector<float> b{1, 2};
  EXPECT_THROW(m.append_rows(MatrixView(b.data(), 1, 2)), InvalidArgument);
}

TEST(Matrix, RequireFiniteNamesRowAndColumn) {
  std::vector<float> v{0, 1, std::numeric_limits<float>::quiet_NaN(), 3};
  try {
    require_finite(MatrixView(v.data(), 2, 2), "queries");
    FAIL() << "NaN accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("queries: value at row 1, column 0"), std::string::npos)
        << e.what();
  }
}

TEST(Matrix, NormalizeRowsLeavesZeroRowsZero) {
  Matrix m(2, 2, std::vector<float>{3, 4, 0, 0});
  normalize_rows(m);
  EXPECT_FLOAT_EQ(m(0, 0), 0.6f);
  EXPECT_FLOAT_EQ(m(0, 1), 0.8f);
  EXPECT_FLOAT_EQ(m(1, 0), 0.0f);
}

TEST(Files, Sha256OfKnownStrings) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Files, MissingFileIsFileNotFound) {
  EXPECT_THROW(read_file("/nonexistent/counterpoint/file"), FileNotFound);
}

TEST(Files, AtomicWriteReplacesContent) {
  const std::string path = ::testing::TempDir() + "/cp_atomic.txt";
  write_file_atomic(path, "first");
  write_file_atomic(path, "second");
  EXPECT_EQ(read_file(path), "second");
}
