// Training inputs that used to pass or fail without their cause: an empty dev triples file (no
// alpha tuned or recorded, without a word), triples that make no complete batch because a text
// repeats across them or is its own positive (the message named neither), and a line far longer
// than any text a model reads.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/training/trainer.h"
#include "message_of.h"
#include "run_loop.h"

namespace counterpoint::training {
namespace {

namespace fs = std::filesystem;
using test_support::message_of;

const std::string kTinyModel = std::string(COUNTERPOINT_TEST_DATA_DIR) + "/training/tiny-model";
const std::string kTsvTriples = std::string(COUNTERPOINT_TEST_DATA_DIR) + "/training/triples.tsv";

std::string fresh_dir(const std::string& name) {
  const std::string dir = std::string(COUNTERPOINT_BINARY_DIR) + "/hostile_training_test_out/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// The message plan_batches refuses `triples` with, in batches of `batch_size`.
std::string no_batch_message(const std::vector<Triple>& triples, std::size_t batch_size) {
  OptimizerSettings settings;
  settings.batch_size = batch_size;
  LoopSettings loop;
  return message_of([&] { detail::plan_batches(triples, settings, loop, "train"); });
}

// `B train sparsecl --head-only --triples t.tsv --dev-triples empty.tsv` trained, wrote the model
// and recorded no alpha, without a word. Refused before training now, the file named.
TEST(HostileTraining, AnEmptyDevTriplesFileIsRefusedBeforeTrainingByName) {
  const std::string dir = fresh_dir("empty-dev");
  const std::string empty = join_path(dir, "empty.tsv");
  write_file_atomic(empty, "");
  TrainConfig config;
  config.output_dir = join_path(dir, "model");
  config.trained_weights = TrainedWeights::kHead;
  config.batch_size = 2;
  config.threads = 1;
  config.dense_model = kTinyModel;
  config.dev_triples = {kTsvTriples, empty};
  const std::vector<Triple> triples = load_tsv_triples(kTsvTriples);
  EXPECT_EQ(message_of([&] { train(kTinyModel, triples, config); }),
            "TrainConfig.dev_triples file " + empty +
                " holds no triples (lines anchor<TAB>positive<TAB>negative); give held-out triples to tune alpha "
                "on, or no dev triples");
  EXPECT_FALSE(fs::exists(config.output_dir));  // nothing trained or written
  // Blank lines are no triples either.
  write_file_atomic(empty, "\n\n");
  EXPECT_NE(message_of([&] { train(kTinyModel, triples, config); }).find("holds no triples"), std::string::npos);
}

// The case: two anchors with one positive ('pos') can never share a batch of 2.
TEST(HostileTraining, NoCompleteBatchNamesTheTextThatRepeatsAndTheGroupsItLeaves) {
  const std::vector<Triple> shared_positive = {{"anchor one", "pos", {"neg"}, ""}, {"anchor two", "pos", {"neg"}, ""}};
  EXPECT_EQ(no_batch_message(shared_positive, 2),
            "train: 2 triples make no complete batch of 2: triples that share an anchor or positive text, or a "
            "group, never share a batch, and the text 'pos' is the positive of 2 triples; linked so, the triples "
            "form 1 distinct group (a batch size of at most 1 always fits)");

  // A text that is the anchor of one triple and the positive of another links them too; here the
  // five triples form a chain of three and two of their own: 3 groups, and no batch of 5.
  const std::vector<Triple> chained = {{"a", "b", {"n"}, ""}, {"b", "c", {"n"}, ""}, {"c", "d", {"n"}, ""},
                                       {"x", "y", {"n"}, ""}, {"p", "q", {"n"}, ""}};
  EXPECT_EQ(no_batch_message(chained, 5),
            "train: 5 triples make no complete batch of 5: triples that share an anchor or positive text, or a "
            "group, never share a batch, and the text 'b' is the anchor or positive of 2 triples; linked so, the "
            "triples form 3 distinct groups (a batch size of at most 3 always fits)");

  // A group label shared by several triples is named beside the text.
  const std::vector<Triple> grouped = {{"a1", "p1", {"n"}, "g1"}, {"a2", "p2", {"n"}, "g1"},
                                       {"a3", "shared", {"n"}, ""}, {"a4", "shared", {"n"}, ""}};
  EXPECT_EQ(no_batch_message(grouped, 3),
            "train: 4 triples make no complete batch of 3: triples that share an anchor or positive text, or a "
            "group, never share a batch, and the text 'shared' is the positive of 2 triples and the group 'g1' "
            "holds 2 triples; linked so, the triples form 2 distinct groups (a batch size of at most 2 always fits)");
}

// All-identical texts: a triple whose positive is its anchor fits no batch at all.
TEST(HostileTraining, NoCompleteBatchNamesATripleThatIsItsOwnPositive) {
  const std::vector<Triple> identical(3, Triple{"same text", "same text", {"same text"}, ""});
  EXPECT_EQ(no_batch_message(identical, 2),
            "train: 3 triples make no complete batch of 2: every triple's positive is its anchor (e.g. 'same "
            "text'), which no batch takes");
  std::vector<Triple> some = identical;
  some.push_back({"other", "positive", {"n"}, ""});
  EXPECT_EQ(no_batch_message(some, 2),
            "train: 4 triples make no complete batch of 2: 3 of them have their anchor as positive (e.g. 'same "
            "text'), which no batch takes; triples that share an anchor or positive text, or a group, never share a "
            "batch; linked so, the others form 1 distinct group (a batch size of at most 1 always fits)");
  // A long text is shown cut, with its length.
  const std::string long_text(100, 'w');
  EXPECT_EQ(no_batch_message({{long_text, long_text, {"n"}, ""}, {long_text, long_text, {"n"}, ""}}, 2),
            "train: 2 triples make no complete batch of 2: every triple's positive is its anchor (e.g. '" +
                std::string(40, 'w') + "...' (100 bytes)), which no batch takes");
}

// A 200 MB line was tokenized whole to train on its first tokens (a 20 MB one: 14 s, 950 MB).
// A line above 1 MiB is refused by its file and line before any work; so is such a triple given
// to train() directly. (Scaled: 1 MiB and a few bytes.)
TEST(HostileTraining, ALineAboveTheTripleLimitIsRefusedWithTheLimit) {
  const std::string dir = fresh_dir("long-line");
  const std::string file = join_path(dir, "t.tsv");
  const std::string anchor(kMaxTripleBytes - 7, 'w');  // with "\tpos\tneg", one byte above the limit
  write_file_atomic(file, "anchor one\tpos\tneg\n" + anchor + "\tpos\tneg\n");
  EXPECT_EQ(message_of<CorruptFile>([&] { load_tsv_triples(file); }),
            file + ":2: the line is 1048577 bytes, above the 1 MiB (1048576 bytes) a triple may hold; a model reads "
                   "a few thousand characters of a text");
  write_file_atomic(file, "anchor one\tpos\tneg\n" + anchor.substr(1) + "\tpos\tneg\n");
  EXPECT_EQ(load_tsv_triples(file).size(), 2u);  // at the limit

  TrainConfig config;
  config.output_dir = join_path(dir, "model");
  config.trained_weights = TrainedWeights::kHead;
  config.threads = 1;
  const std::vector<Triple> triples = {{"anchor one", "pos", {"neg"}, ""}, {anchor, "positive", {"negative"}, ""}};
  EXPECT_EQ(message_of([&] { train(kTinyModel, triples, config); }),
            "train: triple 1 is 1048585 bytes, above the 1 MiB (1048576 bytes) a triple may hold; a model reads a "
            "few thousand characters of a text");
  EXPECT_FALSE(fs::exists(config.output_dir));
}

}  // namespace
}  // namespace counterpoint::training
