// The feature cache is checked, never trusted: a record whose bytes changed, a write cut short by
// a crash (and the records appended after it, misaligned), and a file of the earlier format without
// checksums give the features the network computes, and the file is rewritten so that the next run
// hits again; a file that is not a cache of this format is refused by its path.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/encoder/feature_cache.h"
#include "message_of.h"

namespace counterpoint {
namespace {

namespace fs = std::filesystem;
using test_support::message_of;

const std::string kFixture = std::string(COUNTERPOINT_TEST_DATA_DIR) + "/bert_tiny";
constexpr std::size_t kWidth = 32;  // bert_tiny's pooled width
const std::string kHeader = "counterpoint-features/2 32\n";
// A record: the text's SHA-256 in hex, the float32 features, a 16-hex-digit checksum.
constexpr std::size_t kRecord = 64 + kWidth * sizeof(float) + 16;

const std::vector<std::string> kTexts = {"a man is playing a guitar", "a woman is slicing an onion",
                                         "the cat sleeps on the mat",  "two dogs run in the park",
                                         "nobody is playing the piano", "a boy rides a bicycle",
                                         "the girl is not eating",      "a chef cooks pasta"};

struct CacheFixture {
  std::string dir;
  std::shared_ptr<Encoder> encoder;
  std::string file;  // the cache file of the encoder's features
};

// An empty cache folder unique to the running test, and the tiny encoder.
CacheFixture fresh_cache() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  CacheFixture f;
  f.dir = (fs::path(::testing::TempDir()) / (std::string("cp_feature_cache_") + info->name())).string();
  fs::remove_all(f.dir);
  f.encoder = Encoder::load(kFixture, EncoderConfig{1});
  f.file = f.dir + "/features/" + f.encoder->feature_key() + ".v2.bin";
  return f;
}

// Rows of the cache as a fresh FeatureCache (another run) reads them, with its hits and misses.
struct Read {
  Matrix rows;
  std::size_t hits = 0, misses = 0;
  std::string said;  // on stderr
};
Read read_again(const CacheFixture& f) {
  FeatureCache cache(f.dir);
  ::testing::internal::CaptureStderr();
  Read r{cache.encode(*f.encoder, kTexts)};
  r.said = ::testing::internal::GetCapturedStderr();
  r.hits = cache.hits();
  r.misses = cache.misses();
  return r;
}

void expect_rows_of_the_network(const Matrix& rows, const Encoder& encoder) {
  const Matrix direct = encoder.encode(kTexts);
  ASSERT_EQ(rows.values().size(), direct.values().size());
  for (std::size_t i = 0; i < rows.values().size(); ++i) EXPECT_NEAR(rows.values()[i], direct.values()[i], 1e-5) << i;
}

// The case: bit 0x40 of byte 3 of the 4th float of every record flipped. Each record is
// computed again (nothing read from the cache), and the rewritten file is hit whole next time.
TEST(FeatureCacheChecksum, AFlippedBitInEveryRecordIsComputedAgainNotRead) {
  const CacheFixture f = fresh_cache();
  FeatureCache(f.dir).encode(*f.encoder, kTexts);
  std::string bytes = read_file(f.file);
  ASSERT_EQ(bytes.size(), kHeader.size() + kTexts.size() * kRecord);
  for (std::size_t at = kHeader.size(); at < bytes.size(); at += kRecord) bytes[at + 64 + 3 * 4 + 3] ^= 0x40;
  write_file_atomic(f.file, bytes);

  const Read damaged = read_again(f);
  expect_rows_of_the_network(damaged.rows, *f.encoder);
  EXPECT_EQ(damaged.hits, 0u);
  EXPECT_EQ(damaged.misses, kTexts.size());
  EXPECT_EQ(damaged.said, "counterpoint: warning: the feature cache " + f.file +
                              " was rebuilt (8 of its records fail their checksum); the features it lost are computed "
                              "again\n");

  const Read repaired = read_again(f);
  expect_rows_of_the_network(repaired.rows, *f.encoder);
  EXPECT_EQ(repaired.hits, kTexts.size());
  EXPECT_EQ(repaired.said, "");
}

// A crashed write: the file cut to its header, 5 records and 100 bytes of the 6th. Run twice, as in
// the issue: the 5 whole records are read, the other texts computed, and the second run hits all
// of them (before, it appended after the cut record and read misaligned rows).
TEST(FeatureCacheChecksum, AWriteCutShortIsDetectedAndTheNextRunsReadAlignedRecords) {
  const CacheFixture f = fresh_cache();
  FeatureCache(f.dir).encode(*f.encoder, kTexts);
  fs::resize_file(f.file, kHeader.size() + 5 * kRecord + 100);

  const Read first = read_again(f);
  expect_rows_of_the_network(first.rows, *f.encoder);
  EXPECT_EQ(first.hits, 5u);
  EXPECT_EQ(first.misses, 3u);
  EXPECT_EQ(first.said, "counterpoint: warning: the feature cache " + f.file +
                            " was rebuilt (its last record is cut short); the features it lost are computed again\n");
  EXPECT_EQ(fs::file_size(f.file), kHeader.size() + kTexts.size() * kRecord);

  const Read second = read_again(f);
  expect_rows_of_the_network(second.rows, *f.encoder);
  EXPECT_EQ(second.hits, kTexts.size());
}

// Records another process appended after a cut one lie one part-record off their place: none of
// them is read as features (the cut record's hash, followed by the next record's bytes, least of all).
TEST(FeatureCacheChecksum, RecordsAppendedAfterACutOneAreNeverReadMisaligned) {
  const CacheFixture f = fresh_cache();
  FeatureCache(f.dir).encode(*f.encoder, kTexts);
  const std::string whole = read_file(f.file);
  const std::size_t cut = kHeader.size() + 5 * kRecord + 100;
  write_file_atomic(f.file, whole.substr(0, cut) + whole.substr(kHeader.size() + 5 * kRecord));

  const Read read = read_again(f);
  expect_rows_of_the_network(read.rows, *f.encoder);
  EXPECT_EQ(read.hits, 5u);
  EXPECT_EQ(read.misses, 3u);
  EXPECT_EQ(read_again(f).hits, kTexts.size());
}

// Format 1 had no checksums and lives under its own name ("<key>.bin"): this version neither reads
// its records (here zeros, which no network gave) nor rewrites it, so a build of format 1 sharing
// the cache folder keeps its file.
TEST(FeatureCacheChecksum, AFileOfTheEarlierFormatIsLeftToTheBuildsThatReadIt) {
  const CacheFixture f = fresh_cache();
  std::string old = "counterpoint-features/1 32\n";
  for (const auto& text : kTexts) old += sha256_hex(text) + std::string(kWidth * sizeof(float), '\0');
  const std::string old_file = f.dir + "/features/" + f.encoder->feature_key() + ".bin";
  fs::create_directories(f.dir + "/features");
  write_file_atomic(old_file, old);

  const Read read = read_again(f);
  expect_rows_of_the_network(read.rows, *f.encoder);
  EXPECT_EQ(read.misses, kTexts.size());
  EXPECT_EQ(read.said, "");
  EXPECT_EQ(read_file(old_file), old);
  EXPECT_EQ(read_file(f.file).substr(0, kHeader.size()), kHeader);
  EXPECT_EQ(read_again(f).hits, kTexts.size());
}

// What this version cannot read is never replaced: a newer format, or a file that is no cache.
TEST(FeatureCacheChecksum, ANewerFormatOrAFileThatIsNoCacheIsRefusedByItsPath) {
  const CacheFixture f = fresh_cache();
  fs::create_directories(f.dir + "/features");
  FeatureCache cache(f.dir);
  write_file_atomic(f.file, "counterpoint-features/3 32\n");
  EXPECT_EQ(message_of<CorruptFile>([&] { cache.encode(*f.encoder, kTexts); }),
            f.file + ": a feature cache of format 3, written by a newer counterpoint (this one reads format 2); "
                     "delete the file to rebuild it, or use that version");
  write_file_atomic(f.file, "my notes\n");
  EXPECT_EQ(message_of<CorruptFile>([&] { cache.encode(*f.encoder, kTexts); }),
            f.file + ": not a feature cache of format 2 with 32-wide features; delete the file to rebuild it");
  EXPECT_EQ(read_file(f.file), "my notes\n");
}

}  // namespace
}  // namespace counterpoint
