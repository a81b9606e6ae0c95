// counterpoint._core training: Triple and LabeledPair, the data builders, train_sparsecl /
// train_contrastive / train_verifier (GIL released, progress and Ctrl-C through ProgressBridge),
// and MapVerifier for scoring token maps and for Index.search(scorer="verifier").
#include <functional>
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

namespace {

using training::LabeledPair;
using training::Triple;

// Every default of a training function is read from these default-constructed structs, the one
// home of training defaults the CLI reads too (tests/python/test_defaults.py compares them).
const training::TrainConfig kTrainDefaults{};
const training::VerifierTrainConfig kVerifierDefaults{};
const scoring::VerifierShape kShapeDefaults{};
const training::TripleSource kSourceDefaults{};
const training::NearMissSource kNearMissDefaults{};

// Texts given as one str or a list of str (a triple's negatives).
std::vector<std::string> one_or_more_texts(py::handle value, const std::string& where) {
  if (py::isinstance<py::str>(value)) return {text_of(value, where)};
  return text_list(value, where.c_str());
}

// A triple as a notebook holds it: a cp.Triple; a tuple or list (anchor, positive) or (anchor,
// positive, negative), the negative one str or a list of them; a dict (a DataFrame's row) with
// anchor, positive and optionally negative or negatives and group.
Triple triple_of(py::handle item, const std::string& where) {
  if (py::isinstance<Triple>(item)) return item.cast<Triple>();
  Triple t;
  if (py::isinstance<py::dict>(item)) {
    const auto row = py::reinterpret_borrow<py::dict>(item);
    for (const auto& [key, value] : row) {
      const std::string name = py::str(key);
      if (name != "anchor" && name != "positive" && name != "negative" && name != "negatives" && name != "group") {
        throw py::value_error(where + " has the key '" + name +
                              "'; a triple's keys are anchor, positive, negative (or negatives) and group");
      }
    }
    if (!row.contains("anchor") || !row.contains("positive")) {
      throw py::value_error(where + " needs the keys 'anchor' and 'positive'");
    }
    if (row.contains("negative") && row.contains("negatives")) {
      throw py::value_error(where + " has both 'negative' and 'negatives': give one of them");
    }
    t.anchor = text_of(row["anchor"], where + "['anchor']");
    t.positive = text_of(row["positive"], where + "['positive']");
    for (const char* key : {"negative", "negatives"}) {
      if (row.contains(key)) t.negatives = one_or_more_texts(row[key], where + "['" + key + "']");
    }
    if (row.contains("group")) t.group = text_of(row["group"], where + "['group']");
    return t;
  }
  if (py::isinstance<py::tuple>(item) || py::isinstance<py::list>(item)) {
    const auto fields = py::reinterpret_borrow<py::sequence>(item);
    if (fields.size() < 2 || fields.size() > 3) {
      throw py::value_error(where + " must be (anchor, positive) or (anchor, positive, negative), got " +
                            std::to_string(fields.size()) + " items");
    }
    t.anchor = text_of(fields[0], where + "[0]");
    t.positive = text_of(fields[1], where + "[1]");
    if (fields.size() == 3) t.negatives = one_or_more_texts(fields[2], where + "[2]");
    return t;
  }
  throw py::type_error(where + " must be a cp.Triple, a tuple (anchor, positive, negative) or a dict with anchor and "
                       "positive, got " + type_name(item));
}

// A pandas DataFrame (pandas is not a dependency: anything with columns and to_dict), read by rows.
bool is_data_frame(py::handle object) { return py::hasattr(object, "columns") && py::hasattr(object, "to_dict"); }

// Triples as a notebook holds them: a list of triple_of's forms, or a DataFrame of their columns.
std::vector<Triple> triple_list(py::handle object, const std::string& name) {
  py::object rows = py::reinterpret_borrow<py::object>(object);
  if (is_data_frame(object)) rows = object.attr("to_dict")("records");
  if (py::isinstance<py::str>(rows) || !py::isinstance<py::iterable>(rows)) {
    throw py::type_error(name + " must be a list of triples (cp.Triple, tuples or dicts) or a DataFrame, got " +
                         type_name(object));
  }
  std::vector<Triple> triples;
  for (py::handle item : py::reinterpret_borrow<py::iterable>(rows)) {
    triples.push_back(triple_of(item, name + "[" + std::to_string(triples.size()) + "]"));
  }
  return triples;
}

// dev_triples: files (a list of paths) or triples in memory (triple_list's forms).
void set_dev_triples(training::TrainConfig& config, py::handle dev) {
  const auto is_path = [](py::handle item) {
    return py::isinstance<py::str>(item) || py::isinstance<py::bytes>(item) || py::hasattr(item, "__fspath__");
  };
  if (!is_data_frame(dev) && py::isinstance<py::sequence>(dev) && !is_path(dev)) {
    const auto items = py::reinterpret_borrow<py::sequence>(dev);
    if (items.size() == 0 || is_path(items[0])) {
      config.dev_triples = path_list(dev, "dev_triples");
      return;
    }
  } else if (is_path(dev)) {
    config.dev_triples = path_list(dev, "dev_triples");  // refused: a single path, not a list
  }
  config.dev_triples_in_memory = triple_list(dev, "dev_triples");
}

// `f`, its leading path argument (called `name`) taken through path_argument.
template <typename R, typename... Rest>
std::function<R(py::handle, Rest...)> path_first(R (*f)(const std::string&, Rest...), const char* name) {
  return [f, name](py::handle path, Rest... rest) { return f(path_argument(path, name), rest...); };
}

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
  d["notes"] = report.notes;
  // What the run decided for the user (a batch size lowered to fit) or warns about, as a notebook shows it.
  for (const auto& note : report.notes) py::module_::import("warnings").attr("warn")(note);
  return d;
}

// The encoder trainers' report: the common fields, the triple count and the alpha tuning.
py::dict report_dict(const training::EncoderTrainReport& report) {
  py::dict d = report_dict(static_cast<const training::TrainReport&>(report));
  d["triples"] = report.triples;
  d["alpha_tuning"] = py::none();
  if (report.alpha_tuning) {
    const eval::TaskAlphaTuning& t = *report.alpha_tuning;
    py::dict tuning;
    tuning["alpha"] = t.tuned.best_alpha;
    tuning["ndcg@10_cosine_plus_sparsity"] = t.tuned.best_score;
    tuning["ndcg@10_cosine"] = t.cosine_ndcg;
    tuning["queries"] = t.queries;
    tuning["documents"] = t.documents;
    tuning["candidates"] = t.candidates;
    tuning["dense_model"] = report.dense_model;
    tuning["sparsity_scale"] = t.scale;
    py::list curve;
    for (const auto& p : t.scale_curve) curve.append(py::make_tuple(p.scale, p.score));
    tuning["sparsity_scale_curve"] = curve;
    d["alpha_tuning"] = tuning;
  }
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

// The one conversion of the optimiser and loop arguments every Python trainer takes; the library
// checks the ranges (validate), these only refuse what the C++ types cannot hold.
void set_optimizer(training::OptimizerSettings& s, py::ssize_t epochs, py::ssize_t batch_size, double learning_rate,
                   double weight_decay, double warmup_ratio, std::uint64_t seed, int threads) {
  s.epochs = at_least_one(epochs, "epochs");
  s.batch_size = at_least_one(batch_size, "batch_size");
  s.learning_rate = learning_rate;
  s.weight_decay = weight_decay;
  s.warmup_ratio = warmup_ratio;
  s.seed = seed;
  if (threads < 0) throw py::value_error("threads must be >= 0");
  s.threads = threads;
}

void set_loop(training::LoopSettings& s, py::handle output_dir, py::ssize_t max_steps,
              py::ssize_t checkpoint_every, bool resume) {
  s.output_dir = path_argument(output_dir, "output_dir");
  s.max_steps = at_least_zero(max_steps, "max_steps");
  s.checkpoint_every = at_least_zero(checkpoint_every, "checkpoint_every");
  s.resume = resume;
  s.data_description = "python";
}

// The Encoder given, or the model a name or path names, loaded as Encoder.load does.
std::shared_ptr<Encoder> encoder_of(py::handle encoder, int threads) {
  if (encoder.is_none()) throw py::type_error("encoder must be an Encoder or a model name or path, not None");
  if (py::isinstance<Encoder>(encoder)) return encoder.cast<std::shared_ptr<Encoder>>();
  const std::string model = path_argument(encoder, "encoder", "an Encoder or a model name or path");
  EncoderConfig config;
  config.threads = threads;
  py::gil_scoped_release release;
  return Encoder::load(model, config);
}

constexpr const char* kEncoderTrainingArguments = R"(
Arguments:
    base_model: model directory to start from (e.g. models/installed/use-lite-en), or the name of
        an installed model, looked up as Encoder.load does.
    triples: list of Triple (anchor, positive, negatives, group), of tuples (anchor, positive,
        negative) or (anchor, positive), or of dicts with those keys (and group), or a pandas
        DataFrame with those columns; every triple needs the same number of negatives. Triples of
        one non-empty group never share a batch.
    output_dir: receives model.pt, the tokenizer file and manifest.json (a model directory that
        Encoder.load reads); checkpoints go to output_dir/checkpoint.
    epochs, batch_size: passes over the triples and triples per step (in-batch negatives), >= 1.
        A batch holds each group once: with fewer distinct groups than the default batch size, the
        batch size is their count (said in a UserWarning); another batch size that does not fit is
        refused.
    learning_rate, weight_decay, warmup_ratio: AdamW with linear warm-up, then linear decay.
    temperature: InfoNCE temperature, > 0.
    sparsity: "hoyer", "l2l1" or "kappa4": the SparseCL loss's measure, and the one alpha is
        tuned for with dev_triples.
    hard_negative_weight: added to the hard negatives' logits (reference option).
    seed: data order and initialisation; the same seed gives the same model.
    threads: libtorch threads, 0 = all cores.
    max_steps: stop after this many steps, 0 = all epochs.
    query_prefix: anchor prefix in training and at query time (Prompt+CL uses "Not true: ");
        None keeps the base model's.
    model_name: name in the manifest ("" = base name + "-" + loss).
    head_only: train only a head on the pooled embedding (written as head.pt), the network
        frozen: each distinct text is encoded once, so epochs cost almost nothing. A base model
        without a head starts from the identity; one with a head goes on training it.
    head_kind: the head head_only installs: "linear" (W f) or "mlp" (a residual two-layer MLP,
        W f + W2 gelu(W1 f + b1) + b2, starting as the identity). A base model's own head must be
        of this kind.
    head_hidden: hidden units of a new "mlp" head (a base model's own head keeps its width).
    frozen_layers: partial fine-tuning: the token embeddings and this many bottom transformer
        layers stay as they are and only the layers above learn (no backward pass below them);
        0 = the whole network learns. ValueError for a model without numbered layers or a count
        that leaves none to train.
    checkpoint_every: write output_dir/checkpoint every this many steps and on cancelling (0 = never).
    resume: continue from a checkpoint found in output_dir (it must come from the same triples and
        settings, else ValueError); False starts afresh.
    dev_triples: held-out triple files (anchor<TAB>positive<TAB>negative[<TAB>group]), or the
        held-out triples themselves in any form `triples` takes; after
        training, the alpha of cos(E) + alpha * sparsity(Es) is tuned on them for nDCG@10, the
        trained model as Es, and recorded in its manifest: Index.search then uses it when given
        no alpha. Empty = no tuning.
    dense_model: E of that tuning (a model directory or an installed model's name).
    sparsity_scales: the magnitude gates tau tried in that tuning, sparsity * min(1,
        |Es(q) - Es(p)|_2 / tau), alpha tuned at each; the best (first strict maximum, 0 = no
        gate) is recorded beside alpha and used by searches. [0.0] tunes alpha alone.
    feature_cache: with head_only, a folder of pooled features of the network to reuse and fill
        (as run_beir's), so that head variants on one corpus need no forward pass; None = none.
    progress: True shows a tqdm bar; a callable progress(step, total) may return False to cancel.
    Every path argument takes a str, bytes or an os.PathLike.

Returns:
    dict with steps, resumed_from (the step a resumed run continued from, else 0), final_loss,
    loss_curve, examples_per_second, dev_scores, best_dev_score, stopped_early, output_dir,
    triples (how many were trained on) and alpha_tuning (None without dev_triples, else a dict
    with alpha, ndcg@10_cosine_plus_sparsity, ndcg@10_cosine, queries, documents, candidates,
    dense_model, sparsity_scale and sparsity_scale_curve, a list of (scale, best nDCG@10)).

Raises:
    ValueError for inconsistent triples or settings, FileNotFoundError for a missing base model,
    dev triple file or dense model (all checked before training), KeyboardInterrupt when
    cancelled (Ctrl-C or progress returning False). The GIL is released.)";

// train_sparsecl and train_contrastive: one signature, one conversion, the loss apart.
void def_encoder_trainer(py::module_& m, const char* name, training::LossKind loss, const std::string& summary) {
  m.def(
      name,
      [loss](py::handle base_model, py::handle triples, py::handle output_dir,
             py::ssize_t epochs, py::ssize_t batch_size, double learning_rate, double temperature,
             const std::string& sparsity, double hard_negative_weight, double weight_decay, double warmup_ratio,
             std::uint64_t seed, int threads, py::ssize_t max_steps, py::object query_prefix,
             const std::string& model_name, bool head_only, const std::string& head_kind, py::ssize_t head_hidden,
             py::ssize_t frozen_layers, py::ssize_t checkpoint_every,
             bool resume,
             py::handle dev_triples, py::handle dense_model,
             const std::vector<float>& sparsity_scales, py::handle feature_cache, py::object progress) {
        training::TrainConfig config;
        set_optimizer(config, epochs, batch_size, learning_rate, weight_decay, warmup_ratio, seed, threads);
        set_loop(config, output_dir, max_steps, checkpoint_every, resume);
        config.loss = loss;
        config.sparsity = scoring::parse_sparsity(sparsity);
        config.trained_weights = head_only ? training::TrainedWeights::kHead : training::TrainedWeights::kNetwork;
        config.head_kind = parse_head_kind(head_kind);
        config.head_hidden = at_least_zero(head_hidden, "head_hidden");
        config.frozen_layers = at_least_zero(frozen_layers, "frozen_layers");
        config.temperature = temperature;
        config.hard_negative_weight = hard_negative_weight;
        config.query_prefix = optional_text(query_prefix, "query_prefix");
        config.model_name = model_name;
        set_dev_triples(config, dev_triples);
        config.dense_model = path_argument(dense_model, "dense_model", kModelExpected);
        config.sparsity_scales = sparsity_scales;
        config.feature_cache = optional_path(feature_cache, "feature_cache").value_or("");
        const std::string base = path_argument(base_model, "base_model", kModelExpected);
        const std::vector<Triple> rows = triple_list(triples, "triples");
        ProgressBridge bridge(progress, "training");
        return report_dict(run_released(bridge, [&] {
          return training::train(base, rows, config, train_progress(bridge));
        }));
      },
      py::arg("base_model"), py::arg("triples"), py::arg("output_dir"), py::kw_only(),
      py::arg("epochs") = kTrainDefaults.epochs, py::arg("batch_size") = kTrainDefaults.batch_size,
      py::arg("learning_rate") = kTrainDefaults.learning_rate, py::arg("temperature") = kTrainDefaults.temperature,
      py::arg("sparsity") = scoring::to_string(kTrainDefaults.sparsity),
      py::arg("hard_negative_weight") = kTrainDefaults.hard_negative_weight,
      py::arg("weight_decay") = kTrainDefaults.weight_decay, py::arg("warmup_ratio") = kTrainDefaults.warmup_ratio,
      py::arg("seed") = kTrainDefaults.seed, py::arg("threads") = kTrainDefaults.threads,
      py::arg("max_steps") = kTrainDefaults.max_steps, py::arg("query_prefix") = kTrainDefaults.query_prefix,
      py::arg("model_name") = kTrainDefaults.model_name,
      py::arg("head_only") = kTrainDefaults.trained_weights == training::TrainedWeights::kHead,
      py::arg("head_kind") = to_string(kTrainDefaults.head_kind), py::arg("head_hidden") = kTrainDefaults.head_hidden,
      py::arg("frozen_layers") = kTrainDefaults.frozen_layers,
      py::arg("checkpoint_every") = kTrainDefaults.checkpoint_every, py::arg("resume") = kTrainDefaults.resume,
      py::arg("dev_triples") = kTrainDefaults.dev_triples, py::arg("dense_model") = kTrainDefaults.dense_model,
      py::arg("sparsity_scales") = kTrainDefaults.sparsity_scales, py::arg("feature_cache") = py::none(),
      py::arg("progress") = false, (summary + kEncoderTrainingArguments).c_str());
}

// The C++ defaults by struct and field, for tests/python/test_defaults.py: every default a
// training function shows must be one of these.
py::dict training_defaults() {
  const auto optimizer_and_loop = [](py::dict d, const training::OptimizerSettings& o, const training::LoopSettings& l) {
    d["epochs"] = o.epochs;
    d["batch_size"] = o.batch_size;
    d["learning_rate"] = o.learning_rate;
    d["weight_decay"] = o.weight_decay;
    d["warmup_ratio"] = o.warmup_ratio;
    d["max_grad_norm"] = o.max_grad_norm;
    d["seed"] = o.seed;
    d["threads"] = o.threads;
    d["output_dir"] = l.output_dir;
    d["checkpoint_every"] = l.checkpoint_every;
    d["resume"] = l.resume;
    d["max_steps"] = l.max_steps;
    d["eval_every"] = l.eval_every;
    d["patience"] = l.patience;
    return d;
  };
  const auto& t = kTrainDefaults;
  py::dict train = optimizer_and_loop(py::dict(), t, t);
  train["loss"] = training::to_string(t.loss);
  train["sparsity"] = scoring::to_string(t.sparsity);
  train["trained_weights"] = training::to_string(t.trained_weights);
  train["frozen_layers"] = t.frozen_layers;
  train["head_kind"] = to_string(t.head_kind);
  train["head_hidden"] = t.head_hidden;
  train["temperature"] = t.temperature;
  train["hard_negative_weight"] = t.hard_negative_weight;
  train["query_prefix"] = t.query_prefix;
  train["model_name"] = t.model_name;
  train["dev_triples"] = t.dev_triples;
  train["dense_model"] = t.dense_model;
  train["sparsity_scales"] = t.sparsity_scales;
  const auto& v = kVerifierDefaults;
  py::dict verifier = optimizer_and_loop(py::dict(), v, v);
  verifier["temperature"] = v.temperature;
  verifier["encoder_learning_rate"] = v.encoder_learning_rate;
  verifier["encoder_name"] = v.encoder_name;
  const py::dict shape(py::arg("architecture") = scoring::to_string(kShapeDefaults.architecture),
                       py::arg("map_size") = kShapeDefaults.map_size, py::arg("width") = kShapeDefaults.width,
                       py::arg("patch") = kShapeDefaults.patch, py::arg("feed_forward") = kShapeDefaults.feed_forward,
                       py::arg("dropout") = kShapeDefaults.dropout);
  py::dict source;
  source["data"] = training::to_string(kSourceDefaults.data);
  source["negatives_per_anchor"] = kSourceDefaults.negatives_per_anchor;
  source["curriculum"] = training::to_string(kSourceDefaults.curriculum);
  source["stance_count"] = kSourceDefaults.stance_count;
  source["seed"] = kSourceDefaults.seed;
  py::dict near_miss;
  near_miss["min_overlap"] = kNearMissDefaults.min_overlap;
  near_miss["inverted_negatives"] = kNearMissDefaults.inverted_negatives;
  py::dict all;
  all["TrainConfig"] = train;
  all["VerifierTrainConfig"] = verifier;
  all["VerifierShape"] = shape;
  all["TripleSource"] = source;
  all["NearMissSource"] = near_miss;
  return all;
}

std::vector<std::string> edit_names(const std::vector<text::EditKind>& kinds) {
  std::vector<std::string> names;
  for (auto kind : kinds) names.push_back(text::to_string(kind));
  return names;
}

// Triple, LabeledPair and the polarity-reversing edits of text::Inverter.
void bind_training_types(py::module_& m) {
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
              throw py::type_error("text must be a str, got " + type_name(text));
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
}

// The builders of training triples and pairs from data sets.
void bind_training_data(py::module_& m) {
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

  m.def(
      "load_triples", path_first(py::overload_cast<const std::string&>(&training::load_tsv_triples), "path"),
      py::arg("path"),
      "Triples from lines anchor<TAB>positive<TAB>negative[<TAB>group]; a malformed line raises CorruptFileError.");
  m.def(
      "sick_triples",
      [](py::handle pairs_path, py::handle corpus_path, std::uint64_t seed) {
        return training::sick_triples(path_argument(pairs_path, "pairs_path"),
                                      path_argument(corpus_path, "corpus_path"), seed);
      },
      py::arg("pairs_path"), py::arg("corpus_path"), py::arg("seed") = kSourceDefaults.seed,
      "SparseCL triples from SICK's pairs_<split>.tsv: one per directed contradiction, an entailed (else the "
      "most related neutral) sentence as hard negative; corpus_path (corpus.jsonl) names the groups.");
  m.def(
      "arguana_triples",
      [](py::handle dataset_dir, py::handle qrels_path, py::handle metadata_path, py::ssize_t negatives,
         std::uint64_t seed) {
        training::ArguAnaTripleOptions options;
        options.negatives_per_anchor = at_least_one(negatives, "negatives");
        options.seed = seed;
        return training::arguana_triples(path_argument(dataset_dir, "dataset_dir"),
                                         path_argument(qrels_path, "qrels_path"),
                                         path_argument(metadata_path, "metadata_path"), options);
      },
      py::arg("dataset_dir"), py::arg("qrels_path"), py::arg("metadata_path"), py::kw_only(),
      py::arg("negatives") = kSourceDefaults.negatives_per_anchor, py::arg("seed") = kSourceDefaults.seed,
      "SparseCL triples from ArguAna: argument -> its counter (qrels), hard negatives from the same debate and side.");
  m.def(
      "sick_near_miss_triples", path_first(&training::sick_near_miss_triples, "pairs_path"), py::arg("pairs_path"),
      py::arg("min_overlap") = kNearMissDefaults.min_overlap,
      "Verifier triples: anchor X, a sentence X entails, and the contradiction of X sharing the most words "
      "with it (kept when the word overlap >= min_overlap).");
  m.def(
      "sick_near_miss_pairs", path_first(&training::sick_near_miss_pairs, "pairs_path"), py::arg("pairs_path"),
      py::arg("min_overlap") = kNearMissDefaults.min_overlap,
      "Evaluation pairs: directed entailments (paraphrases) and contradictions with word overlap >= min_overlap "
      "(near-misses).");
}

// The encoder trainers: train_sparsecl and train_contrastive (one signature), and their defaults.
void bind_trainers(py::module_& m) {
  def_encoder_trainer(m, "train_sparsecl", training::LossKind::kSparseCL,
                      "Fine-tunes an encoder with the SparseCL loss (InfoNCE over the sparsity of embedding\n"
                      "differences) so that contradicting texts differ in few coordinates; the result is an Es\n"
                      "for cos(E) + alpha * Hoyer(Es) search.\n");
  def_encoder_trainer(m, "train_contrastive", training::LossKind::kContrastive,
                      "Fine-tunes an encoder with cosine InfoNCE / multiple negatives ranking loss (the CL\n"
                      "baseline; with query_prefix=\"Not true: \" the Prompt+CL baseline). sparsity is used only\n"
                      "for tuning alpha on dev_triples.\n");
  m.def("_training_defaults", &training_defaults,
        "The C++ training defaults by struct and field (TrainConfig, VerifierTrainConfig, VerifierShape, "
        "TripleSource, NearMissSource), which every training function's defaults are read from.");

}

const char* const kTrainVerifierDoc = R"(Trains a map verifier over token-token cosine maps of an encoder: each anchor is scored
against every in-batch positive and its own negatives (InfoNCE over the scores / temperature).

Arguments:
    encoder: the Encoder whose token vectors make the maps (never changed itself), or a model
        directory or installed model's name, loaded as Encoder.load does with `threads`.
    triples: list of Triple, e.g. sick_near_miss_triples(...): anchor, paraphrase, near-miss (or
        tuples, dicts or a DataFrame, as train_sparsecl takes them).
    output_dir: receives verifier.json and weights.pt; MapVerifier.load reads it.
    architecture: "cnn" (F3) or "transformer" (F4, 1-head pre-LN layer over patch x patch patches).
    map_size: maps are zero-padded or cropped to map_size x map_size (4..1024; reference 128;
        the default is enough for sentence-length texts).
    width: F3 first-conv channels (reference 128) / F4 embedding size.
    patch, feed_forward: F4 sizes.
    dropout: in [0, 1). epochs, batch_size: >= 1 (the default lowered to the triples' distinct
        groups when fewer, with a UserWarning). learning_rate, weight_decay, warmup_ratio: AdamW.
    seed: initialisation and data order. threads: libtorch threads, 0 = all cores.
    max_steps: stop after this many steps, 0 = all epochs.
    dev_pairs: list of LabeledPair; when given, the near-miss ROC-AUC after every epoch picks the
        weights written. patience: stop after this many epochs without a better AUC (0 = never).
    encoder_learning_rate: > 0 trains a copy of the encoder end to end with the verifier at this
        rate (reference about 1.5e-5), written to output_dir/encoder: load it with Encoder.load
        and build the index with it, since the verifier then expects its token maps. 0 = frozen.
    checkpoint_every: write output_dir/checkpoint every this many steps and on cancelling (0 = never).
    resume: continue from a checkpoint found in output_dir (same triples and settings, else
        ValueError); False starts afresh.
    progress: True shows a tqdm bar; a callable progress(step, total) may return False to cancel.
    Every path argument takes a str, bytes or an os.PathLike.

Returns:
    dict with steps, resumed_from, final_loss, loss_curve, examples_per_second, dev_scores (AUC per epoch),
    best_dev_score, stopped_early, output_dir and encoder_dir (None unless end to end).

Raises:
    ValueError for bad sizes or settings (checked before a named encoder is loaded),
    FileNotFoundError for a missing model, KeyboardInterrupt when cancelled. The GIL is released.)";

// train_verifier: a map verifier over an encoder's token maps.
void bind_verifier_trainer(py::module_& m) {
  m.def(
      "train_verifier",
      [](py::object encoder, py::handle triple_rows, py::handle output_dir,
         const std::string& architecture, int map_size, int width, int patch, int feed_forward, double dropout,
         py::ssize_t epochs, py::ssize_t batch_size, double learning_rate, double temperature, double weight_decay,
         double warmup_ratio, std::uint64_t seed, int threads, py::ssize_t max_steps,
         std::vector<LabeledPair> dev_pairs, py::ssize_t patience, double encoder_learning_rate,
         py::ssize_t checkpoint_every, bool resume, py::object progress) {
        training::VerifierTrainConfig config;
        set_optimizer(config, epochs, batch_size, learning_rate, weight_decay, warmup_ratio, seed, threads);
        set_loop(config, output_dir, max_steps, checkpoint_every, resume);
        config.shape.architecture = scoring::parse_verifier_architecture(architecture);
        config.shape.map_size = map_size;
        config.shape.width = width;
        config.shape.patch = patch;
        config.shape.feed_forward = feed_forward;
        config.shape.dropout = dropout;
        config.temperature = temperature;
        config.dev_pairs = std::move(dev_pairs);
        config.patience = at_least_zero(patience, "patience");
        config.encoder_learning_rate = encoder_learning_rate;
        training::validate(config);  // before loading a model the encoder argument names
        const std::vector<Triple> triples = triple_list(triple_rows, "triples");
        const std::shared_ptr<Encoder> model = encoder_of(encoder, threads);
        ProgressBridge bridge(progress, "training verifier");
        const auto report = run_released(bridge, [&] {
          return training::train_verifier(*model, triples, config, train_progress(bridge));
        });
        py::dict result = report_dict(report);
        result["encoder_dir"] = report.encoder_dir.empty() ? py::object(py::none()) : py::str(report.encoder_dir);
        return result;
      },
      py::arg("encoder"), py::arg("triples"), py::arg("output_dir"), py::kw_only(),
      py::arg("architecture") = scoring::to_string(kShapeDefaults.architecture),
      py::arg("map_size") = kShapeDefaults.map_size, py::arg("width") = kShapeDefaults.width,
      py::arg("patch") = kShapeDefaults.patch, py::arg("feed_forward") = kShapeDefaults.feed_forward,
      py::arg("dropout") = kShapeDefaults.dropout, py::arg("epochs") = kVerifierDefaults.epochs,
      py::arg("batch_size") = kVerifierDefaults.batch_size, py::arg("learning_rate") = kVerifierDefaults.learning_rate,
      py::arg("temperature") = kVerifierDefaults.temperature, py::arg("weight_decay") = kVerifierDefaults.weight_decay,
      py::arg("warmup_ratio") = kVerifierDefaults.warmup_ratio, py::arg("seed") = kVerifierDefaults.seed,
      py::arg("threads") = kVerifierDefaults.threads, py::arg("max_steps") = kVerifierDefaults.max_steps,
      py::arg("dev_pairs") = kVerifierDefaults.dev_pairs, py::arg("patience") = kVerifierDefaults.patience,
      py::arg("encoder_learning_rate") = kVerifierDefaults.encoder_learning_rate,
      py::arg("checkpoint_every") = kVerifierDefaults.checkpoint_every, py::arg("resume") = kVerifierDefaults.resume,
      py::arg("progress") = false,
      kTrainVerifierDoc);
}

// MapVerifier, the scorer train_verifier writes, as Index.search(scorer="verifier") uses it.
void bind_map_verifier(py::module_& m) {
  py::class_<scoring::MapVerifier, std::shared_ptr<scoring::MapVerifier>>(
      m, "MapVerifier", "A learned scorer of token-token cosine maps (F3/F4 or a TorchScript module).")
      .def_static(
          "load",
          [](py::handle path) {
            const std::string file = path_argument(path, "path");
            return std::const_pointer_cast<scoring::MapVerifier>(scoring::load_map_verifier(file));
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

}  // namespace

void register_training(py::module_& m) {
  bind_training_types(m);
  bind_training_data(m);
  bind_trainers(m);
  bind_verifier_trainer(m);
  bind_map_verifier(m);
}

}  // namespace counterpoint::python
