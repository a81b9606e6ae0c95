// counterpoint.Encoder: a model directory turned into embeddings, with the GIL released while
// the network runs.
#include <memory>
#include <optional>
#include <string>

#include "bindings.h"
#include "counterpoint/encoder/encoder.h"

namespace counterpoint::python {

namespace {

struct EncodeCall {
  EncodeOptions options;
  std::optional<std::string> prefix;
};

// sentence-transformers' device= for a library that encodes on the CPU: a user asking for another
// device is told, not silently served by the CPU.
void require_cpu_device(py::handle device) {
  if (device.is_none()) return;
  const std::string name = py::str(device);
  if (name != "cpu" && name.rfind("cpu:", 0) != 0) {
    throw py::value_error("device " + std::string(py::repr(device)) +
                          " is not one counterpoint encodes on: it runs on the CPU (device='cpu' or None)");
  }
}

EncodeCall encode_call(py::ssize_t batch_size, bool query, const std::optional<std::string>& prefix) {
  if (batch_size <= 0) {
    throw py::value_error("batch_size must be >= 1, got " + std::to_string(batch_size));
  }
  EncodeCall call;
  call.options.batch_size = std::size_t(batch_size);
  call.options.role = query ? TextRole::kQuery : TextRole::kDocument;
  call.prefix = prefix;
  return call;
}

// Encoder.load: a model by name or folder, checked file by file.
void bind_encoder_load(py::class_<Encoder, std::shared_ptr<Encoder>>& encoder) {
  encoder.def_static(
          "load",
          [](py::handle model_dir, int threads, bool int8) {
            const std::string model = path_argument(model_dir, "model_dir", kModelExpected);
            if (threads < 0) throw py::value_error("threads must be >= 0, got " + std::to_string(threads));
            EncoderConfig config;
            config.threads = threads;
            config.int8 = int8;
            py::gil_scoped_release release;
            return Encoder::load(model, config);
          },
          py::arg("model_dir"), py::arg("threads") = 0, py::arg("int8") = false,
          R"(Loads the model in `model_dir` after verifying every file's checksum.

Arguments:
    model_dir: the model directory (manifest.json, tokenizer, model.pt; a str, bytes or os.PathLike),
        or the name of an installed model (any case; hub ids such as
        "sentence-transformers/all-MiniLM-L6-v2" too), looked up in $COUNTERPOINT_MODELS, then
        the folder set-up installed into, then the per-user cache (counterpoint.models).
    threads: intra-op threads for the network; 0 = all hardware threads.
    int8: load the dynamically quantised model-int8.pt when the directory provides it.

Raises:
    FileNotFoundError for a missing directory or file, CorruptFileError for a bad manifest or a
    checksum mismatch, ValueError for threads < 0.)");
}

// Encoder.encode, sentence-transformers style.
void bind_encode(py::class_<Encoder, std::shared_ptr<Encoder>>& encoder) {
  encoder.def(
          "encode",
          [](const Encoder& encoder, py::object texts, py::ssize_t batch_size, py::object progress,
             bool query, py::object prefix, py::object show_progress_bar, bool normalize_embeddings,
             bool convert_to_numpy, bool convert_to_tensor, py::object device) -> py::object {
            require_cpu_device(device);
            // sentence-transformers' conventions: one str gives one 1-D row.
            const bool single = py::isinstance<py::str>(texts);
            std::vector<std::string> inputs =
                single ? std::vector<std::string>{text_of(texts, "texts")} : text_list(texts, "texts");
            EncodeCall call = encode_call(batch_size, query, optional_text(prefix, "prefix"));
            if (call.prefix) call.options.prefix_override = &*call.prefix;
            call.options.normalize = normalize_embeddings;
            ProgressBridge bridge(show_progress_bar.is_none() ? progress : show_progress_bar, "encode");
            call.options.progress = bridge.callback();
            Matrix rows = run_released(bridge, [&] { return encoder.encode(inputs, call.options); });
            py::array_t<float> array = to_numpy(std::move(rows));
            if (single) array = py::array_t<float>(array[py::int_(0)]);
            py::object from_numpy = py::module_::import("torch").attr("from_numpy");
            if (convert_to_tensor) return from_numpy(array);  // one tensor, as sentence-transformers gives
            if (convert_to_numpy) return std::move(array);
            if (single) return from_numpy(array);
            py::list tensors;
            for (py::handle row : array) tensors.append(from_numpy(row));
            return std::move(tensors);
          },
          py::arg("texts"), py::arg("batch_size") = EncodeOptions{}.batch_size, py::arg("progress") = false,
          py::arg("query") = false, py::arg("prefix") = py::none(), py::arg("show_progress_bar") = py::none(),
          py::arg("normalize_embeddings") = true, py::arg("convert_to_numpy") = true,
          py::arg("convert_to_tensor") = false, py::arg("device") = py::none(),
          R"(Pooled sentence embeddings of `texts`, with sentence-transformers' conventions.

Arguments:
    texts: a list of str, or one str (then the result is one 1-D row).
    batch_size: texts per network call (inputs are bucketed by length), >= 1.
    progress: True shows a tqdm bar; a callable progress(done, total) is called after each
        batch and cancels the call (KeyboardInterrupt) by returning False. Ctrl-C always cancels.
    query: prepend the manifest's query prefix instead of its document prefix.
    prefix: replaces the manifest's prefix for this call (e.g. a stance instruction).
    show_progress_bar: sentence-transformers' name for progress (it wins when given).
    normalize_embeddings: L2-normalise the rows (the default: indexes and scorers expect unit
        rows); False gives the pooled vectors as the model computes them.
    convert_to_numpy: True gives a float32 array; False a list of torch tensors (one per text).
    convert_to_tensor: True gives one torch tensor (it wins over convert_to_numpy).
    device: None or "cpu" (counterpoint encodes on the CPU); any other device is a ValueError.

Returns:
    float32 array (len(texts), dim), or (dim,) for one str.

The GIL is released while the network runs, so other Python threads keep running.)");
}

// One pass for E and Es, queries and documents by their prefixes, and similarity.
void bind_encode_variants(py::class_<Encoder, std::shared_ptr<Encoder>>& encoder) {
  encoder.def("shares_network_with", &Encoder::shares_network_with, py::arg("other"),
           "Whether `other` runs this encoder's network (same network file, tokenizer, pooling, length and "
           "prefixes), differing at most in its head: then encode_both makes one forward pass for both.")
      .def(
          "encode_both",
          [](std::shared_ptr<Encoder> self, std::shared_ptr<Encoder> sparse_encoder, py::object texts,
             py::ssize_t batch_size, py::object progress, bool query, py::object prefix) {
            if (!sparse_encoder) throw py::value_error("sparse_encoder is required (an Encoder, not None)");
            std::vector<std::string> inputs = text_list(texts, "texts");
            EncodeCall call = encode_call(batch_size, query, optional_text(prefix, "prefix"));
            if (call.prefix) call.options.prefix_override = &*call.prefix;
            ProgressBridge bridge(progress, "encode");
            call.options.progress = bridge.callback();
            std::pair<Matrix, Matrix> rows =
                run_released(bridge, [&] { return Encoder::encode_both(*self, *sparse_encoder, inputs, call.options); });
            return py::make_tuple(to_numpy(std::move(rows.first)), to_numpy(std::move(rows.second)));
          },
          py::arg("sparse_encoder"), py::arg("texts"), py::arg("batch_size") = EncodeOptions{}.batch_size, py::arg("progress") = false,
          py::arg("query") = false, py::arg("prefix") = py::none(),
          R"(E and Es of the same texts: (self.encode(texts), sparse_encoder.encode(texts)), with one
forward pass per batch when sparse_encoder is a head over this encoder's network (SparseCL
--head-only models), else each encoder's own pass. Arguments as for encode().

Returns:
    (E, Es): float32 arrays (len(texts), dim) and (len(texts), sparse_encoder.dim).)")
      .def(
          "encode_tokens",
          [](const Encoder& encoder, py::object texts, py::ssize_t batch_size, py::object progress,
             bool query, py::object prefix) {
            std::vector<std::string> inputs = text_list(texts, "texts");
            EncodeCall call = encode_call(batch_size, query, optional_text(prefix, "prefix"));
            if (call.prefix) call.options.prefix_override = &*call.prefix;
            ProgressBridge bridge(progress, "encode_tokens");
            call.options.progress = bridge.callback();
            std::vector<Matrix> states =
                run_released(bridge, [&] { return encoder.encode_tokens(inputs, call.options); });
            py::list result;
            for (Matrix& matrix : states) result.append(to_numpy(std::move(matrix)));
            return result;
          },
          py::arg("texts"), py::arg("batch_size") = EncodeOptions{}.batch_size, py::arg("progress") = false,
          py::arg("query") = false, py::arg("prefix") = py::none(),
          R"(Per-token embeddings of `texts`: a list with one float32 array (tokens_i, token_dim)
per text, L2-normalised rows, padding removed. Arguments as for encode().)");
}

// What an encoder is: widths, folder, identity and settings.
void bind_encoder_identity(py::class_<Encoder, std::shared_ptr<Encoder>>& encoder) {
  encoder.def(
          "tokenize",
          [](const Encoder& encoder, py::object texts, py::ssize_t max_length) {
            if (max_length < 0) throw py::value_error("max_length must be >= 0, got " + std::to_string(max_length));
            std::vector<std::string> inputs = text_list(texts, "texts");
            std::vector<std::vector<int64_t>> ids(inputs.size());
            {
              py::gil_scoped_release release;
              for (std::size_t i = 0; i < inputs.size(); ++i) {
                ids[i] = encoder.tokenize(inputs[i], std::size_t(max_length)).ids;
              }
            }
            return ids;
          },
          py::arg("texts"), py::arg("max_length") = 0,
          R"(Vocabulary ids of each text as the model's tokenizer produces them, special tokens
included and no prefix added: a list of int lists.

Arguments:
    texts: list of str.
    max_length: cut each result to this many ids (as the network's input is cut to the
        manifest's max_length); 0 = no limit.

Raises ValueError for invalid UTF-8 or max_length < 0.)")
      .def_property_readonly(
          "manifest",
          [](const Encoder& encoder) {
            return py::module_::import("json").attr("loads")(encoder.manifest().to_json().dump());
          },
          "The model's manifest.json as a dict (name, architecture, widths, prefixes, licence, files).")
      .def_property_readonly("dim", &Encoder::dim, "Width of the pooled embedding.")
      .def_property_readonly("token_dim", &Encoder::token_dim, "Width of the per-token embeddings.")
      .def_property_readonly("directory", &Encoder::directory, "The model directory it was loaded from.")
      .def_property_readonly(
          "name", [](const Encoder& encoder) { return encoder.manifest().name; }, "The model's name.")
      .def_property_readonly("identity", &Encoder::identity,
                             "'<name>@<12 hex digits of the weights' SHA-256>' (+ the head's) + '#<12 hex digits of "
                             "the settings' digest>': what an index records to refuse rows or queries of another "
                             "model, or of this one read with other settings (pooling, lowercase, max_length, "
                             "prefixes, int8 weights).")
      .def_property_readonly("settings", &Encoder::settings,
                             "What of the model changes its embeddings, as JSON text: weights file and checksum, "
                             "head, tokenizer, lowercase, pooling, max_length, prefixes, normalized.")
      .def("identity_mismatch", &Encoder::identity_mismatch, py::arg("recorded_identity"),
           py::arg("recorded_settings") = "", py::arg("owner") = "the index",
           "'' when rows recorded as made by `recorded_identity` are this model's (its identity, or an identity "
           "recorded by an older version that its files still match); otherwise why not, naming the setting that "
           "differs when `recorded_settings` (the maker's Encoder.settings) is given.")
      .def("__repr__", [](const Encoder& encoder) {
        return "Encoder(name='" + encoder.manifest().name + "', dim=" + std::to_string(encoder.dim()) +
               ", directory='" + encoder.directory() + "')";
      });
}

}  // namespace

void register_encoder(py::module_& m) {
  py::class_<Encoder, std::shared_ptr<Encoder>> encoder(m, "Encoder", R"(A text encoder loaded from a model directory.

A model directory holds manifest.json (architecture, widths, pooling, prefixes, licence and a
SHA-256 for every file), the tokenizer file(s) and the TorchScript network. Load one with
Encoder.load(model_dir).)");
  bind_encoder_load(encoder);
  bind_encode(encoder);
  bind_encode_variants(encoder);
  bind_encoder_identity(encoder);

  // Model discovery for counterpoint.models (search_path, user_cache, installed).
  m.def("_model_search_path", [] {
    std::vector<std::pair<std::string, std::string>> folders;
    for (const ModelFolder& f : model_search_path()) folders.emplace_back(f.path, f.role);
    return folders;
  });
  m.def("_user_models_directory", &user_models_directory);
  m.def("_installed_models", [] { return installed_models(); });
}

}  // namespace counterpoint::python
