// Searching a saved index with the models it records: header.json is input, and loading a model
// runs its TorchScript, so a recorded model is only ever a name looked up among the installed
// models. A recorded path ("../evil", "/tmp/evil") or a model folder of that name in the working
// directory is refused before any file of it is opened.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "counterpoint/app/index_search.h"
#include "counterpoint/core/errors.h"
#include "counterpoint/index/document_index.h"

using namespace counterpoint;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

namespace fs = std::filesystem;

class RecordedModels : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("cp_recorded_models_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "work");
    before_ = fs::current_path();
    fs::current_path(root_ / "work");
  }
  void TearDown() override {
    fs::current_path(before_);
    fs::remove_all(root_);
  }

  // A model folder whose manifest cannot be read: had it been followed, loading it would fail
  // with CorruptFile about manifest.json, before its model.pt; any other error means nothing of it
  // was read.
  fs::path plant_model(const fs::path& dir) {
    fs::create_directories(dir);
    std::ofstream(dir / "manifest.json") << "{ not json";
    std::ofstream(dir / "model.pt") << "PK\x03\x04 pretend TorchScript";
    return dir;
  }

  // An index of two 4-wide rows recording `encoder_id` (and `sparse_encoder_id`, with Es).
  std::string index_recording(const std::string& encoder_id, const std::string& sparse_encoder_id = "") {
    index::IndexOptions options;
    options.dim = 4;
    options.encoder_id = encoder_id;
    if (!sparse_encoder_id.empty()) {
      options.sparse_dim = 4;
      options.sparse_encoder_id = sparse_encoder_id;
    }
    index::DocumentIndex documents(options);
    Matrix rows(2, 4, 0.5f);
    documents.add({"the cat sleeps", "the dog barks"}, {"a", "b"}, rows,
                  sparse_encoder_id.empty() ? MatrixView{} : MatrixView(rows));
    const std::string dir = (root_ / "index").string();
    documents.save(dir);
    return dir;
  }

  std::string search_error(const std::string& index) {
    app::IndexSearchOptions options;
    options.index = index;
    try {
      app::search_index(options, {data::Query{"q", "a cat", nlohmann::json::object()}});
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  }

  fs::path root_, before_;
};

TEST_F(RecordedModels, ARecordedRelativePathIsRefusedBeforeAnyFileOfItIsRead) {
  plant_model(root_ / "evil");  // ../evil from the working directory
  const std::string error = search_error(index_recording("../evil@0123456789ab"));
  EXPECT_THAT(error, HasSubstr("records its encoder as '../evil@0123456789ab', which is not the name of a model"));
  EXPECT_THAT(error, Not(HasSubstr("manifest.json")));
}

TEST_F(RecordedModels, ARecordedAbsolutePathIsRefusedForTheSparseEncoderToo) {
  const fs::path evil = plant_model(root_ / "elsewhere" / "evil");
  const std::string error = search_error(index_recording("../evil@0", evil.string() + "@0123456789ab"));
  EXPECT_THAT(error, HasSubstr("which is not the name of a model"));
  EXPECT_THAT(error, Not(HasSubstr("manifest.json")));
  std::filesystem::remove_all(root_ / "index");
  const std::string sparse_only = search_error(index_recording("", evil.string() + "@0123456789ab"));
  EXPECT_THAT(sparse_only, HasSubstr("records its sparse encoder as '" + evil.string() + "@0123456789ab'"));
}

TEST_F(RecordedModels, AModelFolderOfTheRecordedNameInTheWorkingDirectoryIsNotSelected) {
  plant_model(root_ / "work" / "bert-tiny-random");
  const std::string error = search_error(index_recording("bert-tiny-random@0123456789ab"));
  EXPECT_THAT(error, HasSubstr("./bert-tiny-random in the working directory is a model folder, which an index's "
                               "record never selects"));
  EXPECT_THAT(error, Not(HasSubstr("manifest.json")));
}

}  // namespace
