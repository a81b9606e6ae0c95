#include "counterpoint/encoder/torchscript_files.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/version.h>

namespace counterpoint {

namespace {
constexpr const char* kWriterRecord = "torch_version";
}  // namespace

const char* linked_torch_version() { return TORCH_VERSION; }

torch::jit::ExtraFilesMap torchscript_writer_record() { return {{kWriterRecord, TORCH_VERSION}}; }

std::string torchscript_writer(const std::string& path) {
  try {
    caffe2::serialize::PyTorchStreamReader reader(path);
    const std::string record = std::string("extra/") + kWriterRecord;
    if (!reader.hasRecord(record)) return "";
    auto [data, size] = reader.getRecord(record);
    return std::string(static_cast<const char*>(data.get()), size);
  } catch (const std::exception&) {
    return "";  // not an archive this libtorch can open: nothing recorded to name
  }
}

}  // namespace counterpoint
