// counterpoint._core training: Triple and LabeledPair, the data builders, train_sparsecl /
// train_contrastive / train_verifier (GIL released, progress and Ctrl-C through ProgressBridge),
// and MapVerifier for scoring token maps and for Index.search(scorer="verifier").
#include <optional>

#include <pybind11/operators.h>

#include "bindings.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/scoring/map_verifier.h"
#include "counterpoint/text/inversion.h"
#include "counterpoint/training/near_miss.h"
#include "counterpoint/training/trainer.h"
#include "counterpoint/training/triples.h"
#include "counterpoint/training/verifier_trainer.h"

namespace counterpoint::python {

// The training defaults have one home, the C++ configs; the CLI reads the same ones.
const training::TrainConfig kTrainDefaults{};
const training::VerifierTrainConfig kVerifierDefaults{};

namespace {

using training::LabeledPair;
using training::Triple;

// Either trainer's report, as the dict Python returns.
py::dict report_dict(const training::TrainReport& report) {
  py::dict d;
  d["steps"] = report.steps;
  d["resumed_from"] = report.resumed_from;
  d["final_loss"] = report.final_loss;
  d["loss_curve"] = report.loss_curve;
  d["examples_per_second"] = report.examples_per_second;
  d["dev_scores"] = report.dev_scores;
  d["best_dev_score"] =
      report.best_dev_score ? py::object(py::float_(*report.best_dev_score)) : py::object(py::none());
  d["stopped_early"] = report.stopped_early;
  d["output_dir"] = report.output_dir;
  return d;
}

training::TrainProgressCallback train_progress(ProgressBridge& bridge) {
  return [&bridge](const training::TrainProgress& p) { return bridge.callback()(p.step, p.total_steps); };
}

std::size_t at_least_one(py::ssize_t value, const char* name) {
  if (value < 1) throw py::value_error(std::string(name) + " must be >= 1, got " + std::to_string(value));
  return std::size_t(value);
}

std::size_t at_least_zero(py::ssize_t value, const char* name) {
  if (value < 0) throw py::value_error(std::string(name) + " must be >= 0, got " + std::to_string(value));
  return std::size_t(value);
}

py::dict train_encoder(training::LossKind loss, const std::string& base_model, const std::vector<Triple>& triples,
                       const std::string& output_dir, py::ssize_t epochs, py::ssize_t batch_size,
                       double learning_rate, double temperature, const std::string& sparsity,
                       double hard_negative_weight, double weight_decay, double warmup_ratio, std::uint64_t seed,
                       int threads, py::ssize_t max_steps, std::optional<std::string> query_prefix,
                       const std::string& model_name, bool head_only, py::ssize_t checkpoint_every, bool resume,
                       py::object progress) {
  training::TrainConfig config;
  config.trained_weights = head_only ? training::TrainedWeights::kHead : training::TrainedWeights::kNetwork;
  config.loss = loss;
  config.sparsity = scoring::parse_sparsity(sparsity);
  config.epochs = at_least_one(epochs, "epochs");
  config.batch_size = at_least_one(batch_size, "batch_size");
  config.learning_rate = learning_rate;
  config.temperature = temperature;
  config.hard_negative_weight = hard_negative_weight;
  config.weight_decay = weight_decay;
  config.warmup_ratio = warmup_ratio;
  config.seed = seed;
  if (threads < 0) throw py::value_error("threads must be >= 0");
  config.threads = threads;
  config.max_steps = at_least_zero(max_steps, "max_steps");
  config.checkpoint_every = at_least_zero(checkpoint_every, "checkpoint_every");
  config.resume = resume;
  config.query_prefix = query_prefix;
  config.model_name = model_name;
  config.output_dir = output_dir;
  config.data_description = "python";
  ProgressBridge bridge(progress, "training");
  const auto report = run_released(bridge, [&] {
    return training::train(base_model, triples, config, train_progress(bridge));
  });
  return report_dict(report);
}

constexpr const char* kEncoderTrainingArguments = R"(
Arguments:
    base_model: model directory to start from (e.g. models/installed/use-lite-en).
    triples: list of Triple (anchor, positive, negatives, group); every triple needs the same
        number of negatives. Triples of one non-empty group never share a batch.
    output_dir: receives model.pt, the tokenizer file and manifest.json (a model directory that
        Encoder.load reads); checkpoints go to output_dir/checkpoint.
    epochs, batch_size: passes over the triples and triples per step (in-batch negatives), >= 1.
    learning_rate, weight_decay, warmup_ratio: AdamW with linear warm-up, then linear decay.
    temperature: InfoNCE temperature, > 0.
    sparsity: "hoyer", "l2l1" or "kappa4" (SparseCL only).
    hard_negative_weight: added to the hard negatives' logits (reference option).
    seed: data order and initialisation; the same seed gives the same model.
    threads: libtorch threads, 0 = all cores.
    max_steps: stop after this many steps, 0 = all epochs.
    query_prefix: anchor prefix in training and at query time (Prompt+CL uses "Not true: ");
        None keeps the base model's.
    model_name: name in the manifest ("" = base name + "-" + loss).
    head_only: train only a linear head on the pooled embedding (written as head.pt), the network
        frozen: each distinct text is encoded once, so epochs cost almost nothing. A base model
        without a head starts from the identity; one with a head goes on training it.
    checkpoint_every: write output_dir/checkpoint every this many steps and on cancelling (0 = never).
    resume: continue from a checkpoint found in output_dir (it must come from the same triples and
        settings, else ValueError); False starts afresh.
    progress: True shows a tqdm bar; a callable progress(step, total) may return False to cancel.

Returns:
    dict with steps, resumed_from (the step a resumed run continued from, else 0), final_loss,
    loss_curve, examples_per_second, dev_scores, best_dev_score, stopped_early and output_dir.

Raises:
    ValueError for inconsistent triples or settings, FileNotFoundError for a missing base model,
    KeyboardInterrupt when cancelled (Ctrl-C or progress returning False). The GIL is released.)";

}  // namespace

namespace {

std::vector<std::string> edit_names(const std::vector<text::EditKind>& kinds) {
  std::vector<std::string> names;
  for (auto kind : kinds) names.push_back(text::to_string(kind));
  return names;
}

}  // namespace

void register_training(py::module_& m) {
  py::class_<Triple>(m, "Triple", "A training example: anchor, positive, hard negatives and a batching group.")
      .def(py::init([](std::string anchor, std::string positive, std::vector<std::string> negatives, std::string group) {
             return Triple{std::move(anchor), std::move(positive), std::move(negatives), std::move(group)};
           }),
           py::arg("anchor"), py::arg("positive"), py::arg("negatives") = std::vector<std::string>{},
           py::arg("group") = "")
      .def_readwrite("anchor", &Triple::anchor)
      .def_readwrite("positive", &Triple::positive)
      .def_readwrite("negatives", &Triple::negatives)
      .def_readwrite("group", &Triple::group)
      .def("__repr__", [](const Triple& t) {
        return "Triple(anchor=" + py::repr(py::str(t.anchor)).cast<std::string>() + ", positive=" +
               py::repr(py::str(t.positive)).cast<std::string>() + ", negatives=" +
               std::to_string(t.negatives.size()) + ")";
      });

  py::class_<LabeledPair>(m, "LabeledPair", "A (query, candidate) pair labelled paraphrase or near-miss.")
      .def(py::init([](std::string query, std::string candidate, bool near_miss) {
             return LabeledPair{std::move(query), std::move(candidate), near_miss};
           }),
           py::arg("query"), py::arg("candidate"), py::arg("near_miss"))
      .def_readwrite("query", &LabeledPair::query)
      .def_readwrite("candidate", &LabeledPair::candidate)
      .def_readwrite("near_miss", &LabeledPair::near_miss)
      .def(py::self == py::self);

  py::class_<text::Inversion>(m, "Inversion", "One polarity-reversing edit of a text (Inverter.invert).")
      .def_readonly("text", &text::Inversion::text, "The edited text")
      .def_property_readonly("edit", [](const text::Inversion& i) { return text::to_string(i.kind); },
                             "The edit kind, e.g. 'verb-antonym'")
      .def_readonly("before", &text::Inversion::before, "The words replaced or removed ('' for an insertion)")
      .def_readonly("after", &text::Inversion::after, "The words put there ('' for a removal)")
      .def(py::self == py::self)
      .def("__repr__", [](const text::Inversion& i) {
        return "Inversion(edit='" + text::to_string(i.kind) + "', text=" +
               py::repr(py::str(i.text)).cast<std::string>() + ")";
      });
  py::class_<text::Inverter>(m, "Inverter",
                             "Minimal edits that reverse what a text asserts (negation, WordNet antonyms, "
                             "connectives, role swap); deterministic.")
      .def(py::init([](py::object edits) {
             text::InverterOptions options;
             if (!edits.is_none()) {
               options.edits.clear();
               for (const auto& name : text_list(edits, "edits")) options.edits.push_back(text::parse_edit_kind(name));
             }
             return text::Inverter(std::move(options));
           }),
           py::arg("edits") = py::none(),
           "edits: kind names tried in order (default: the stance order, see stance_edit_kinds()).")
      .def_property_readonly("edits", [](const text::Inverter& inverter) { return edit_names(inverter.options().edits); })
      .def(
          "invert",
          [](const text::Inverter& inverter, py::handle text) {
            if (!py::isinstance<py::str>(text)) {
              throw py::type_error("text must be a str, got " + std::string(py::str(py::type::of(text).attr("__name__"))));
            }
            return inverter.invert(text_of(text, "text"));
          },
          py::arg("text"), "The first edit that applies, or None.")
      .def(
          "invert_batch",
          [](const text::Inverter& inverter, py::handle texts) {
            const auto list = text_list(texts, "texts");
            py::gil_scoped_release release;
            return inverter.invert(list);
          },
          py::arg("texts"), "invert() of each text, in order.");
  m.def("edit_kinds", [] { return edit_names(text::all_edit_kinds()); }, "Every edit kind name, in declaration order.");
  m.def("stance_edit_kinds", [] { return edit_names(text::stance_edit_kinds()); }, "The default edit order, which inverts a claim's stance.");
  m.def("near_miss_edit_kinds", [] { return edit_names(text::near_miss_edit_kinds()); }, "The edit order for near-miss negatives (verifier training).");
  m.def(
      "add_inverted_negatives",
      [](std::vector<Triple> triples, const text::Inverter& inverter) {
        training::add_inverted_negatives(triples, inverter);
        return triples;
      },
      py::arg("triples"), py::arg("inverter"),
      "A new list: each triple, followed by a copy whose one negative is its anchor inverted (when an edit applies).");
  m.def("wordnet_antonyms", &text::wordnet_antonyms, py::arg("lemma"), py::arg("part_of_speech"),
        "WordNet direct antonyms of a lemma ('adjective' or 'verb'), most frequent sense first.");

  m.def("load_triples", py::overload_cast<const std::string&>(&training::load_tsv_triples), py::arg("path"),
        "Triples from lines anchor<TAB>positive<TAB>negative[<TAB>group]; a malformed line raises CorruptFileError.");
  m.def("sick_triples", &training::sick_triples, py::arg("pairs_path"), py::arg("corpus_path"), py::arg("seed") = 42,
        "SparseCL triples from SICK's pairs_<split>.tsv: one per directed contradiction, an entailed (else the "
        "most related neutral) sentence as hard negative; corpus_path (corpus.jsonl) names the groups.");
  m.def(
      "arguana_triples",
      [](const std::string& dataset_dir, const std::string& qrels_path, const std::string& metadata_path,
         py::ssize_t negatives, std::uint64_t seed) {
        training::ArguAnaTripleOptions options;
        options.negatives_per_anchor = std::size_t(at_least_one(negatives, "negatives"));
        options.seed = seed;
        return training::arguana_triples(dataset_dir, qrels_path, metadata_path, options);
      },
      py::arg("dataset_dir"), py::arg("qrels_path"), py::arg("metadata_path"), py::kw_only(),
      py::arg("negatives") = 1, py::arg("seed") = 42,
      "SparseCL triples from ArguAna: argument -> its counter (qrels), hard negatives from the same debate and side.");
  m.def("sick_near_miss_triples", &training::sick_near_miss_triples, py::arg("pairs_path"),
        py::arg("min_overlap") = 0.5,
        "Verifier triples: anchor X, a sentence X entails, and the contradiction of X sharing the most words "
        "with it (kept when the word overlap >= min_overlap).");
  m.def("sick_near_miss_pairs", &training::sick_near_miss_pairs, py::arg("pairs_path"), py::arg("min_overlap") = 0.5,
        "Evaluation pairs: directed entailments (paraphrases) and contradictions with word overlap >= min_overlap "
        "(near-misses).");

  m.def(
      "train_sparsecl",
      [](const std::string& base_model, const std::vector<Triple>& triples, const std::string& output_dir,
         py::ssize_t epochs, py::ssize_t batch_size, double learning_rate, double temperature,
         const std::string& sparsity, double hard_negative_weight, double weight_decay, double warmup_ratio,
         std::uint64_t seed, int threads, py::ssize_t max_steps, py::object query_prefix,
         const std::string& model_name, bool head_only, py::ssize_t checkpoint_every, bool resume,
         py::object progress) {
        return train_encoder(training::LossKind::kSparseCL, base_model, triples, output_dir, epochs, batch_size,
                             learning_rate, temperature, sparsity, hard_negative_weight, weight_decay, warmup_ratio,
                             seed, threads, max_steps, optional_text(query_prefix, "query_prefix"), model_name, head_only, checkpoint_every, resume,
                             progress);
      },
      py::arg("base_model"), py::arg("triples"), py::arg("output_dir"), py::kw_only(),
      py::arg("epochs") = kTrainDefaults.epochs, py::arg("batch_size") = kTrainDefaults.batch_size,
      py::arg("learning_rate") = kTrainDefaults.learning_rate, py::arg("temperature") = kTrainDefaults.temperature,
      py::arg("sparsity") = "hoyer", py::arg("hard_negative_weight") = kTrainDefaults.hard_negative_weight,
      py::arg("weight_decay") = kTrainDefaults.weight_decay, py::arg("warmup_ratio") = kTrainDefaults.warmup_ratio,
      py::arg("seed") = kTrainDefaults.seed, py::arg("threads") = 0, py::arg("max_steps") = 0,
      py::arg("query_prefix") = py::none(), py::arg("model_name") = "", py::arg("head_only") = false,
      py::arg("checkpoint_every") = 0,
      py::arg("resume") = true, py::arg("progress") = false,
      (std::string("Fine-tunes an encoder with the SparseCL loss (InfoNCE over the sparsity of embedding\n"
                   "differences) so that contradicting texts differ in few coordinates; the result is an Es\n"
                   "for cos(E) + alpha * Hoyer(Es) search.\n") +
       kEncoderTrainingArguments)
          .c_str());
  m.def(
      "train_contrastive",
      [](const std::string& base_model, const std::vector<Triple>& triples, const std::string& output_dir,
         py::ssize_t epochs, py::ssize_t batch_size, double learning_rate, double temperature,
         double hard_negative_weight, double weight_decay, double warmup_ratio, std::uint64_t seed, int threads,
         py::ssize_t max_steps, py::object query_prefix, const std::string& model_name,
         bool head_only, py::ssize_t checkpoint_every, bool resume, py::object progress) {
        return train_encoder(training::LossKind::kContrastive, base_model, triples, output_dir, epochs, batch_size,
                             learning_rate, temperature, "hoyer", hard_negative_weight, weight_decay, warmup_ratio,
                             seed, threads, max_steps, optional_text(query_prefix, "query_prefix"), model_name, head_only, checkpoint_every, resume,
                             progress);
      },
      py::arg("base_model"), py::arg("triples"), py::arg("output_dir"), py::kw_only(),
      py::arg("epochs") = kTrainDefaults.epochs, py::arg("batch_size") = kTrainDefaults.batch_size,
      py::arg("learning_rate") = kTrainDefaults.learning_rate, py::arg("temperature") = kTrainDefaults.temperature,
      py::arg("hard_negative_weight") = kTrainDefaults.hard_negative_weight,
      py::arg("weight_decay") = kTrainDefaults.weight_decay, py::arg("warmup_ratio") = kTrainDefaults.warmup_ratio,
      py::arg("seed") = kTrainDefaults.seed, py::arg("threads") = 0, py::arg("max_steps") = 0,
      py::arg("query_prefix") = py::none(),
      py::arg("model_name") = "", py::arg("head_only") = false, py::arg("checkpoint_every") = 0,
      py::arg("resume") = true,
      py::arg("progress") = false,
      (std::string("Fine-tunes an encoder with cosine InfoNCE / multiple negatives ranking loss (the CL\n"
                   "baseline; with query_prefix=\"Not true: \" the Prompt+CL baseline). sparsity is not used.\n") +
       kEncoderTrainingArguments)
          .c_str());

  m.def(
      "train_verifier",
      [](const std::shared_ptr<Encoder>& encoder, const std::vector<Triple>& triples, const std::string& output_dir,
         const std::string& architecture, int map_size, int width, int patch, int feed_forward, double dropout,
         py::ssize_t epochs, py::ssize_t batch_size, double learning_rate, double temperature, double weight_decay,
         double warmup_ratio, std::uint64_t seed, int threads, std::vector<LabeledPair> dev_pairs,
         py::ssize_t patience, double encoder_learning_rate, py::ssize_t checkpoint_every, bool resume,
         py::object progress) {
        if (!encoder) throw py::type_error("encoder must be an Encoder, not None");
        training::VerifierTrainConfig config;
        config.shape.architecture = scoring::parse_verifier_architecture(architecture);
        config.shape.map_size = map_size;
        config.shape.width = width;
        config.shape.patch = patch;
        config.shape.feed_forward = feed_forward;
        config.shape.dropout = dropout;
        config.epochs = at_least_one(epochs, "epochs");
        config.batch_size = at_least_one(batch_size, "batch_size");
        config.learning_rate = learning_rate;
        config.temperature = temperature;
        config.weight_decay = weight_decay;
        config.warmup_ratio = warmup_ratio;
        config.seed = seed;
        if (threads < 0) throw py::value_error("threads must be >= 0");
        config.threads = threads;
        config.dev_pairs = std::move(dev_pairs);
        config.patience = at_least_zero(patience, "patience");
        config.checkpoint_every = at_least_zero(checkpoint_every, "checkpoint_every");
        config.resume = resume;
        config.output_dir = output_dir;
        config.encoder_learning_rate = encoder_learning_rate;
        config.data_description = "python";
        ProgressBridge bridge(progress, "training verifier");
        const auto report = run_released(bridge, [&] {
          return training::train_verifier(*encoder, triples, config, train_progress(bridge));
        });
        py::dict result = report_dict(report);
        result["encoder_dir"] = report.encoder_dir.empty() ? py::object(py::none()) : py::str(report.encoder_dir);
        return result;
      },
      py::arg("encoder"), py::arg("triples"), py::arg("output_dir"), py::kw_only(), py::arg("architecture") = "cnn",
      py::arg("map_size") = scoring::VerifierShape{}.map_size, py::arg("width") = scoring::VerifierShape{}.width, py::arg("patch") = 8, py::arg("feed_forward") = 32,
      py::arg("dropout") = 0.1, py::arg("epochs") = kVerifierDefaults.epochs,
      py::arg("batch_size") = kVerifierDefaults.batch_size, py::arg("learning_rate") = kVerifierDefaults.learning_rate,
      py::arg("temperature") = kVerifierDefaults.temperature, py::arg("weight_decay") = kVerifierDefaults.weight_decay,
      py::arg("warmup_ratio") = kVerifierDefaults.warmup_ratio, py::arg("seed") = kVerifierDefaults.seed,
      py::arg("threads") = 0, py::arg("dev_pairs") = std::vector<LabeledPair>{},
      py::arg("patience") = 0, py::arg("encoder_learning_rate") = 0.0, py::arg("checkpoint_every") = 0,
      py::arg("resume") = true, py::arg("progress") = false,
      R"(Trains a map verifier over token-token cosine maps of an encoder: each anchor is scored
against every in-batch positive and its own negatives (InfoNCE, temperature 0.1 by default).

Arguments:
    encoder: the Encoder whose token vectors make the maps (never changed itself).
    triples: list of Triple, e.g. sick_near_miss_triples(...): anchor, paraphrase, near-miss.
    output_dir: receives verifier.json and weights.pt; MapVerifier.load reads it.
    architecture: "cnn" (F3) or "transformer" (F4, 1-head pre-LN layer over patch x patch patches).
    map_size: maps are zero-padded or cropped to map_size x map_size (4..1024; reference 128,
        default 32, enough for sentence-length texts).
    width: F3 first-conv channels (reference 128, default 32) / F4 embedding size.
    patch, feed_forward: F4 sizes.
    dropout: in [0, 1). epochs, batch_size: >= 1. learning_rate, weight_decay, warmup_ratio: AdamW.
    dev_pairs: list of LabeledPair; when given, the near-miss ROC-AUC after every epoch picks the
        weights written. patience: stop after this many epochs without a better AUC (0 = never).
    encoder_learning_rate: > 0 trains a copy of the encoder end to end with the verifier at this
        rate (reference about 1.5e-5), written to output_dir/encoder: load it with Encoder.load
        and build the index with it, since the verifier then expects its token maps. 0 = frozen.
    checkpoint_every: write output_dir/checkpoint every this many steps and on cancelling (0 = never).
    resume: continue from a checkpoint found in output_dir (same triples and settings, else
        ValueError); False starts afresh.
    progress: True shows a tqdm bar; a callable progress(step, total) may return False to cancel.

Returns:
    dict with steps, resumed_from, final_loss, loss_curve, examples_per_second, dev_scores (AUC per epoch),
    best_dev_score, stopped_early, output_dir and encoder_dir (None unless end to end).

Raises:
    ValueError for bad sizes or settings, KeyboardInterrupt when cancelled. The GIL is released.)");

  py::class_<scoring::MapVerifier, std::shared_ptr<scoring::MapVerifier>>(
      m, "MapVerifier", "A learned scorer of token-token cosine maps (F3/F4 or a TorchScript module).")
      .def_static(
          "load",
          [](const std::string& path) {
            return std::const_pointer_cast<scoring::MapVerifier>(scoring::load_map_verifier(path));
          },
          py::arg("path"),
          "A directory written by train_verifier, or a TorchScript file taking (maps [B,3,S,S], valid [B,S,S]).")
      .def_property_readonly("name", &scoring::MapVerifier::name)
      .def(
          "score",
          [](const scoring::MapVerifier& self, py::list maps) {
            std::vector<Matrix> matrices;
            for (py::handle item : maps) {
              FloatArray array = float_array(item, "map", "(tq, tc)", 2, 2);
              const MatrixView view = as_view(array);
              matrices.emplace_back(view.rows, view.cols,
                                    std::vector<float>(view.data, view.data + view.rows * view.cols));
            }
            std::vector<float> scores;
            {
              py::gil_scoped_release release;
              scores = self.score(matrices);
            }
            return to_numpy(std::move(scores));
          },
          py::arg("maps"),
          "One score per map (a list of 2-D float arrays from token_map), higher = the candidate is accepted.");
}

}  // namespace counterpoint::python
