// counterpoint/encoder/defaults.h: the installed models used when a caller names none, defined
// once for the CLI, the Python module and the demo. models/install.sh installs both.
#pragma once

namespace counterpoint {

// E: sentence-transformers/all-MiniLM-L6-v2 (6 BERT layers, 384-d, mean pooling).
inline constexpr const char* kDefaultDenseModel = "all-minilm-l6-v2";
// Es: a SparseCL head over the default E (models/sparse_default/train.sh).
inline constexpr const char* kDefaultSparseModel = "sparse-default";

}  // namespace counterpoint
