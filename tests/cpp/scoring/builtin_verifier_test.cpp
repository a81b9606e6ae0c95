// The built-in F3 (CNN) and F4 (patch Transformer) verifiers: output shape and range, the F4
// mask that hides empty patches, the verifier directory round trip, and the errors for damaged,
// tampered or foreign directories.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/scoring/map_verifier.h"
#include "counterpoint/scoring/verifier_networks.h"

namespace counterpoint::scoring {
namespace {

std::string fresh_dir(const std::string& name) {
  const std::string dir = std::string(COUNTERPOINT_BINARY_DIR) + "/builtin_verifier_test/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

Matrix map_of(std::size_t rows, std::size_t cols, float shift = 0.0f) {
  Matrix m(rows, cols);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) m(i, j) = float((i * 5 + j * 3) % 7) / 7.0f - 0.4f + shift;
  return m;
}

VerifierShape small(VerifierArchitecture architecture) {
  VerifierShape s;
  s.architecture = architecture;
  s.map_size = 16;
  s.width = 8;
  s.patch = 8;
  return s;
}

std::string saved_verifier(const std::string& name, VerifierArchitecture architecture) {
  const std::string dir = fresh_dir(name);
  torch::manual_seed(3);
  auto network = make_verifier_network(small(architecture));
  network->eval();
  save_verifier_directory(dir, *network, small(architecture), R"({"data": "test"})");
  return dir;
}

TEST(VerifierShape, SizesOutOfRangeAreRefusedByName) {
  auto shape = small(VerifierArchitecture::kPatchTransformer);
  shape.patch = 5;  // does not divide 16
  EXPECT_THROW(validate(shape), InvalidArgument);
  shape = small(VerifierArchitecture::kCnn);
  shape.map_size = 2;
  EXPECT_THROW(validate(shape), InvalidArgument);
  shape.map_size = 16;
  shape.dropout = 1.0;
  EXPECT_THROW(validate(shape), InvalidArgument);
  EXPECT_THROW(parse_verifier_architecture("rnn"), InvalidArgument);
  EXPECT_EQ(parse_verifier_architecture("transformer"), VerifierArchitecture::kPatchTransformer);
}

TEST(VerifierNetworks, OneScoreInMinusOneToOnePerMap) {
  for (auto architecture : {VerifierArchitecture::kCnn, VerifierArchitecture::kPatchTransformer}) {
    torch::manual_seed(1);
    auto network = make_verifier_network(small(architecture));
    network->eval();
    const Matrix a = map_of(3, 4), b = map_of(20, 9), c = map_of(1, 1);
    const auto batch = make_map_batch({&a, &b, &c}, 16, "test");
    const auto scores = network->forward(batch.maps, batch.valid);
    ASSERT_EQ(scores.sizes(), torch::IntArrayRef({3}));
    EXPECT_TRUE((scores.abs() <= 1).all().item<bool>());
  }
}

TEST(VerifierNetworks, TheTransformerIgnoresPatchesWithoutAValidPair) {
  torch::manual_seed(2);
  auto network = make_verifier_network(small(VerifierArchitecture::kPatchTransformer));
  network->eval();
  const Matrix m = map_of(5, 6);
  auto batch = make_map_batch({&m}, 16, "test");
  const float before = network->forward(batch.maps, batch.valid).item<float>();
  // The patch at rows 8..15, columns 8..15 holds no valid pair: whatever lies there is masked.
  batch.maps.index_put_({0, torch::indexing::Slice(), torch::indexing::Slice(8, 16), torch::indexing::Slice(8, 16)}, 3.0f);
  EXPECT_FLOAT_EQ(network->forward(batch.maps, batch.valid).item<float>(), before);
}

TEST(BuiltinMapVerifier, ADirectoryRoundTripsToTheSameScores) {
  for (auto architecture : {VerifierArchitecture::kCnn, VerifierArchitecture::kPatchTransformer}) {
    const std::string dir = saved_verifier("round_trip_" + to_string(architecture), architecture);
    torch::manual_seed(3);
    auto original = make_verifier_network(small(architecture));
    original->eval();
    const std::vector<Matrix> maps = {map_of(3, 4), map_of(7, 2, 0.2f)};
    const auto batch = make_map_batch({&maps[0], &maps[1]}, 16, "test");
    const auto expected = original->forward(batch.maps, batch.valid);

    const auto verifier = load_map_verifier(dir);
    EXPECT_EQ(verifier->name(), to_string(architecture) + ":round_trip_" + to_string(architecture));
    const auto scores = verifier->score(maps);
    ASSERT_EQ(scores.size(), 2u);
    EXPECT_FLOAT_EQ(scores[0], expected[0].item<float>());
    EXPECT_FLOAT_EQ(scores[1], expected[1].item<float>());
    EXPECT_TRUE(verifier->score({}).empty());
    EXPECT_THROW(verifier->score({Matrix(0, 3)}), InvalidArgument);
  }
}

TEST(BuiltinMapVerifier, DamagedTamperedOrForeignDirectoriesAreCorruptFiles) {
  EXPECT_THROW(BuiltinMapVerifier::load(fresh_dir("missing")), FileNotFound);
  EXPECT_THROW(load_map_verifier(fresh_dir("missing")), FileNotFound);

  const std::string tampered = saved_verifier("tampered", VerifierArchitecture::kCnn);
  std::string weights = read_file(tampered + "/weights.pt");
  weights[weights.size() / 2] ^= 0x5a;
  write_file_atomic(tampered + "/weights.pt", weights);
  EXPECT_THROW(BuiltinMapVerifier::load(tampered), CorruptFile);

  const auto rewrite = [](const std::string& dir, auto change) {
    auto j = nlohmann::json::parse(read_file(dir + "/verifier.json"));
    change(j);
    write_file_atomic(dir + "/verifier.json", j.dump());
  };
  const std::string newer = saved_verifier("newer", VerifierArchitecture::kCnn);
  rewrite(newer, [](auto& j) { j["version"] = 99; });
  EXPECT_THROW(BuiltinMapVerifier::load(newer), CorruptFile);

  const std::string reshaped = saved_verifier("reshaped", VerifierArchitecture::kCnn);
  rewrite(reshaped, [](auto& j) { j["width"] = 16; });  // weights are of width 8
  EXPECT_THROW(BuiltinMapVerifier::load(reshaped), CorruptFile);

  const std::string escaping = saved_verifier("escaping", VerifierArchitecture::kCnn);
  rewrite(escaping, [](auto& j) { j["weights"]["file"] = "../tampered/weights.pt"; });
  EXPECT_THROW(BuiltinMapVerifier::load(escaping), CorruptFile);

  const std::string not_json = saved_verifier("not_json", VerifierArchitecture::kCnn);
  write_file_atomic(not_json + "/verifier.json", "{\"format\": ");
  EXPECT_THROW(BuiltinMapVerifier::load(not_json), CorruptFile);
}

}  // namespace
}  // namespace counterpoint::scoring
