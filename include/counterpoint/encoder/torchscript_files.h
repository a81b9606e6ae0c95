#pragma once
// The torch that wrote a TorchScript file. A libtorch cannot always read what a newer one wrote, and
// its own error names neither version; the library records the writer in every network it saves
// (an extra file of the archive), so that a load that fails can say which torch wrote the file and
// which one is reading it.
#include <torch/script.h>

#include <string>

namespace counterpoint {

// The version of the libtorch this library links, as torch.__version__ spells it (e.g. "1.13.0").
const char* linked_torch_version();

// What Module::save adds to the archive: {"torch_version": linked_torch_version()}.
torch::jit::ExtraFilesMap torchscript_writer_record();

// The torch version recorded by torchscript_writer_record() in the file at `path`; "" when the file
// has none (written elsewhere) or cannot be read as an archive.
std::string torchscript_writer(const std::string& path);

}  // namespace counterpoint
