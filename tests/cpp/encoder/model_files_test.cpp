// Model directories whose files are not regular files, or are far too large, are refused before
// anything is read: a FIFO as model.pt used to hang every command that loads or verifies a model,
// model.pt linked to /dev/zero was read until memory ran out, and a 3 GB sparse manifest.json was
// parsed for a minute.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/encoder/manifest.h"

namespace counterpoint {
namespace {

namespace fs = std::filesystem;

class ModelFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("cp_model_files_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    for (const char* name : {"manifest.json", "model.pt", "vocab.txt"}) {
      fs::copy_file(fs::path(COUNTERPOINT_TEST_DATA_DIR) / "bert_tiny" / name, dir_ / name);
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string invalid_message() const {
    try {
      Encoder::load(dir_.string(), EncoderConfig{1});
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "(loaded)";
  }
  fs::path dir_;
};

TEST_F(ModelFiles, AFifoAsTheNetworkIsRefusedWithoutBlocking) {
  fs::remove(dir_ / "model.pt");
  ASSERT_EQ(::mkfifo((dir_ / "model.pt").c_str(), 0600), 0);
  EXPECT_EQ(invalid_message(), "expected a file, found a FIFO: " + (dir_ / "model.pt").string());
}

TEST_F(ModelFiles, ALinkToADeviceIsRefused) {
  fs::remove(dir_ / "model.pt");
  fs::create_symlink("/dev/zero", dir_ / "model.pt");
  EXPECT_EQ(invalid_message(), "expected a file, found a character device: " + (dir_ / "model.pt").string());
}

TEST_F(ModelFiles, AManifestAboveTheDocumentLimitIsRefusedUnread) {
  ASSERT_EQ(::truncate((dir_ / "manifest.json").c_str(), off_t(kMaxDocumentBytes) + 1), 0);  // sparse
  const std::string message = invalid_message();
  EXPECT_NE(message.find("above the 64 MiB this file may hold"), std::string::npos) << message;
}

TEST_F(ModelFiles, AManifestWithANulAndJunkAppendedIsCorrupt) {
  const std::string manifest = read_file((dir_ / "manifest.json").string());
  write_file_atomic((dir_ / "manifest.json").string(), manifest + std::string("\0{}", 3));
  try {
    ModelManifest::load(dir_.string());
    FAIL() << "loaded";
  } catch (const CorruptFile& e) {
    EXPECT_NE(std::string(e.what()).find("NUL byte"), std::string::npos) << e.what();
  }
}

// A vocabulary with more pieces than the network's embedding table used to load and fail on the
// first text that used a late piece; the largest id is now tried at load time.
TEST(ModelVocabulary, AVocabularyLongerThanTheNetworksTableIsRefusedAtLoad) {
  const fs::path dir = fs::path(::testing::TempDir()) / "cp_model_long_vocabulary";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path tiny = fs::path(COUNTERPOINT_TEST_DATA_DIR) / "training" / "tiny-model";
  for (const char* name : {"manifest.json", "model.pt"}) fs::copy_file(tiny / name, dir / name);
  auto vocabulary = nlohmann::json::parse(read_file((tiny / "vocab.json").string()));
  for (int i = 0; i < 50; ++i) vocabulary.push_back({"\u2581extra" + std::to_string(i), -20.0});
  write_file_atomic((dir / "vocab.json").string(), vocabulary.dump());
  ModelManifest manifest = ModelManifest::parse(read_file((tiny / "manifest.json").string()), "manifest.json");
  manifest.save(dir.string());  // checksums of the longer vocabulary
  try {
    Encoder::load(dir.string(), EncoderConfig{1});
    FAIL() << "loaded";
  } catch (const CorruptFile& e) {
    EXPECT_NE(std::string(e.what()).find("pieces but the network cannot embed id"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(FileLimits, RegularFilesWithinTheLimitAreRead) {
  const std::string path = ::testing::TempDir() + "/cp_file_limits_small";
  write_file_atomic(path, "abc");
  EXPECT_EQ(require_regular_file(path, 3), 3u);
  EXPECT_EQ(read_file(path, 3), "abc");
  EXPECT_THROW(read_file(path, 2), InvalidArgument);
  EXPECT_THROW(read_file(path + ".absent"), FileNotFound);
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace counterpoint
