// Model names are looked up in every models folder in turn ($COUNTERPOINT_MODELS, set-up's
// folder, the per-user cache), and a name found nowhere is answered with every place looked.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <algorithm>
#include <fstream>
#include <optional>
#include <string>

#include "counterpoint/core/errors.h"
#include "counterpoint/encoder/encoder.h"

namespace counterpoint {
namespace {

namespace fs = std::filesystem;

// Sets (or unsets) a variable for one test, restoring it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1); else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1); else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class ModelDiscovery : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("cp_discovery_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "env");
    fs::create_directories(root_ / "xdg");
  }
  void TearDown() override { fs::remove_all(root_); }

  // A folder that passes for a model as far as lookup goes (a manifest.json).
  static void fake_model(const fs::path& dir) {
    fs::create_directories(dir);
    std::ofstream(dir / "manifest.json") << "{}";
  }
  std::string cache() const { return (root_ / "xdg" / "counterpoint" / "models").string(); }

  fs::path root_;
};

// share/counterpoint/models under the prefix of the file holding the library's code: for this test
// program, <build>/bin, so <build>/share/counterpoint/models.
std::string package_models() {
  return (fs::canonical("/proc/self/exe").parent_path().parent_path() / "share" / "counterpoint" / "models").string();
}

TEST_F(ModelDiscovery, TheSearchPathIsTheVariableThenThePackagesThenSetUpsFolderThenThePerUserCache) {
  ScopedEnv models("COUNTERPOINT_MODELS", (root_ / "env").string());
  ScopedEnv xdg("XDG_CACHE_HOME", (root_ / "xdg").string());
  const auto folders = model_search_path();
  ASSERT_EQ(folders.size(), 4u);
  EXPECT_EQ(folders[0].path, (root_ / "env").string());
  EXPECT_EQ(folders[0].role, "$COUNTERPOINT_MODELS");
  EXPECT_EQ(folders[1].path, package_models());
  EXPECT_EQ(folders[1].role, "package's models");
  EXPECT_EQ(folders[2].path, COUNTERPOINT_SOURCE_DIR "/models/installed");
  EXPECT_EQ(folders[3].path, cache());
  EXPECT_EQ(folders[3].role, "per-user cache");
}

TEST_F(ModelDiscovery, ThePerUserCacheFollowsXdgElseHome) {
  ScopedEnv xdg("XDG_CACHE_HOME", std::nullopt);
  ScopedEnv home("HOME", (root_ / "home").string());
  EXPECT_EQ(user_models_directory(), (root_ / "home" / ".cache" / "counterpoint" / "models").string());
  ScopedEnv relative("XDG_CACHE_HOME", "relative/cache");  // ignored, as the XDG rule says
  EXPECT_EQ(user_models_directory(), (root_ / "home" / ".cache" / "counterpoint" / "models").string());
}

TEST_F(ModelDiscovery, WithoutAHomeTheCacheDropsOutAndTheOtherFoldersStillServe) {
  ScopedEnv models("COUNTERPOINT_MODELS", std::nullopt);
  ScopedEnv xdg("XDG_CACHE_HOME", std::nullopt);
  ScopedEnv home("HOME", std::nullopt);
  EXPECT_THROW(user_models_directory(), InvalidArgument);
  const auto folders = model_search_path();
  ASSERT_EQ(folders.size(), 2u);
  EXPECT_EQ(folders[0].role, "package's models");
  EXPECT_EQ(folders[1].role, "set-up's models");
  EXPECT_EQ(models_directory(), COUNTERPOINT_SOURCE_DIR "/models/installed");  // never throws: the CLI reads it
}

TEST_F(ModelDiscovery, ANameResolvesInTheFirstFolderHoldingItAndFallsThroughToTheCache) {
  ScopedEnv models("COUNTERPOINT_MODELS", (root_ / "env").string());
  ScopedEnv xdg("XDG_CACHE_HOME", (root_ / "xdg").string());
  fake_model(fs::path(cache()) / "cached-model");
  fake_model(fs::path(cache()) / "both");
  fake_model(root_ / "env" / "both");
  EXPECT_EQ(resolve_model("Cached-Model"), (fs::path(cache()) / "cached-model").string());
  EXPECT_EQ(resolve_model("both"), (root_ / "env" / "both").string());
  const auto names = installed_models();
  EXPECT_EQ(std::count(names.begin(), names.end(), "both"), 1);
  EXPECT_EQ(std::count(names.begin(), names.end(), "cached-model"), 1);
}

TEST_F(ModelDiscovery, AMissingNameIsAnsweredWithEveryFolderLookedIn) {
  ScopedEnv models("COUNTERPOINT_MODELS", (root_ / "env").string());
  ScopedEnv xdg("XDG_CACHE_HOME", (root_ / "xdg").string());
  fake_model(root_ / "env" / "all-mpnet-base-v3");
  try {
    resolve_model("all-mpnet-base-v4");
    FAIL() << "resolved a missing model";
  } catch (const FileNotFound& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find((root_ / "env").string() + " ($COUNTERPOINT_MODELS: all-mpnet-base-v3)"), std::string::npos)
        << message;
    EXPECT_NE(message.find(COUNTERPOINT_SOURCE_DIR "/models/installed (set-up's models"), std::string::npos) << message;
    EXPECT_NE(message.find(cache() + " (per-user cache: missing)"), std::string::npos) << message;
    EXPECT_NE(message.find("did you mean 'all-mpnet-base-v3'?"), std::string::npos) << message;
    EXPECT_NE(message.find("counterpoint models install"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace counterpoint
