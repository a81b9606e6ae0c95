"""Training defaults have one home, the C++ configs: the CLI's `train` commands and the Python
training functions show the same values for every setting they share, and every default a
training function shows is the one of the C++ struct it fills (TrainConfig, VerifierTrainConfig,
VerifierShape, TripleSource, NearMissSource; cp._core._training_defaults() reads them)."""
import ast
import os
import pathlib
import re
import subprocess

import pytest

import counterpoint as cp

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = pathlib.Path(os.environ.get("COUNTERPOINT_BUILD_DIR", ROOT / "build")).resolve() / "bin" / "counterpoint"
SHARED = {"batch_size": "--batch-size", "learning_rate": "--lr", "temperature": "--temperature",
          "epochs": "--epochs", "weight_decay": "--weight-decay", "warmup_ratio": "--warmup", "seed": "--seed"}


def python_defaults(function):
    signature = function.__doc__.strip().split("\n")[0]
    return {name: float(value) for name, value in re.findall(r"(\w+): \w+ = ([-+0-9.e]+)", signature)}


def cli_defaults(*command):
    text = subprocess.run([str(CLI), *command, "--help"], capture_output=True, text=True, check=True).stdout
    return {flag: float(value) for flag, value in re.findall(r"(--[\w-]+) (?:UINT|FLOAT|INT)=([-+0-9.e]+)", text)}


@pytest.mark.skipif(not CLI.exists(), reason=f"no counterpoint binary at {CLI}")
@pytest.mark.parametrize("function, command", [
    (cp.train_sparsecl, ("train", "sparsecl")),
    (cp.train_contrastive, ("train", "contrastive")),
    (cp.train_verifier, ("train", "verifier")),
])
def test_the_cli_and_python_share_every_training_default(function, command):
    python, cli = python_defaults(function), cli_defaults(*command)
    pairs = {name: (python[name], cli[flag]) for name, flag in SHARED.items() if name in python and flag in cli}
    assert set(pairs) == set(SHARED)
    assert {name: p for name, (p, c) in pairs.items() if p != c} == {}


def test_the_encoder_losses_share_one_temperature_and_batch_size():
    sparsecl, contrastive = python_defaults(cp.train_sparsecl), python_defaults(cp.train_contrastive)
    assert sparsecl["temperature"] == contrastive["temperature"] == 0.02  # the reference's ArguAna setting
    assert sparsecl["batch_size"] == contrastive["batch_size"] == 64  # the reference's batch


def all_python_defaults(function):
    """Every default of a pybind11 function's signature line, as Python values."""
    signature = function.__doc__.strip().split("\n")[0]
    signature = re.sub(r"\w+(?:::\w+)+", "object", signature)  # C++ type names of classes bound later
    tree = ast.parse("def " + signature.split(" -> ")[0] + ": pass")
    arguments = tree.body[0].args
    named = arguments.args[len(arguments.args) - len(arguments.defaults):] + arguments.kwonlyargs
    values = arguments.defaults + arguments.kw_defaults
    return {a.arg: ast.literal_eval(v) for a, v in zip(named, values) if v is not None}


# Python parameter -> (struct, field) of cp._core._training_defaults(); parameters a struct does not
# hold (progress) or hold otherwise (feature_cache: None in Python, "" in TrainConfig) are listed with None.
ENCODER = {name: ("TrainConfig", name) for name in [
    "epochs", "batch_size", "learning_rate", "temperature", "sparsity", "hard_negative_weight", "weight_decay",
    "warmup_ratio", "seed", "threads", "max_steps", "query_prefix", "model_name", "head_kind", "head_hidden",
    "frozen_layers", "checkpoint_every",
    "resume", "dev_triples", "dense_model", "sparsity_scales"]} | {"head_only": ("TrainConfig", "trained_weights"),
                                                                   "feature_cache": None, "progress": None}
VERIFIER = {name: ("VerifierShape", name) for name in [
    "architecture", "map_size", "width", "patch", "feed_forward", "dropout"]} | {
    name: ("VerifierTrainConfig", name) for name in [
        "epochs", "batch_size", "learning_rate", "temperature", "weight_decay", "warmup_ratio", "seed", "threads",
        "max_steps", "patience", "encoder_learning_rate", "checkpoint_every", "resume"]} | {
    "dev_pairs": None, "progress": None}
CONVERTED = {("TrainConfig", "trained_weights"): lambda head_only: "head" if head_only else "network"}


@pytest.mark.parametrize("function, fields", [
    (cp.train_sparsecl, ENCODER),
    (cp.train_contrastive, ENCODER),
    (cp.train_verifier, VERIFIER),
    (cp.sick_triples, {"seed": ("TripleSource", "seed")}),
    (cp.arguana_triples, {"negatives": ("TripleSource", "negatives_per_anchor"), "seed": ("TripleSource", "seed")}),
    (cp.sick_near_miss_triples, {"min_overlap": ("NearMissSource", "min_overlap")}),
    (cp.sick_near_miss_pairs, {"min_overlap": ("NearMissSource", "min_overlap")}),
])
def test_every_python_training_default_is_the_cpp_structs(function, fields):
    cpp = cp._core._training_defaults()
    python = all_python_defaults(function)
    assert set(python) == set(fields)
    differing = {}
    for name, value in python.items():
        if fields[name] is None:
            continue
        struct, field = fields[name]
        shown = CONVERTED.get((struct, field), lambda v: v)(value)
        if shown != cpp[struct][field]:
            differing[name] = (value, cpp[struct][field])
    assert differing == {}


@pytest.mark.skipif(not CLI.exists(), reason=f"no counterpoint binary at {CLI}")
@pytest.mark.parametrize("command, struct, flags", [
    (("train", "sparsecl"), "TrainConfig", {"--max-steps": "max_steps", "--checkpoint-every": "checkpoint_every",
                                            "--threads": "threads", "--hard-negative-weight": "hard_negative_weight"}),
    (("train", "verifier"), "VerifierTrainConfig", {"--patience": "patience", "--encoder-lr": "encoder_learning_rate",
                                                    "--max-steps": "max_steps", "--threads": "threads"}),
    (("train", "verifier"), "VerifierShape", {"--map-size": "map_size", "--width": "width", "--patch": "patch",
                                              "--feed-forward": "feed_forward", "--dropout": "dropout"}),
    (("train", "sparsecl"), "TripleSource", {"--negatives": "negatives_per_anchor", "--stance-count": "stance_count"}),
    (("train", "verifier"), "NearMissSource", {"--min-overlap": "min_overlap"}),
])
def test_every_cli_training_default_is_the_cpp_structs(command, struct, flags):
    cli, cpp = cli_defaults(*command), cp._core._training_defaults()[struct]
    assert {flag: cli.get(flag) for flag in flags} == {flag: cpp[field] for flag, field in flags.items()}


def test_search_defaults_are_the_cpp_search_options_in_python_the_cli_and_milvus():
    """Index.search, cp.rerank, counterpoint.milvus and the CLI's search/run read one default-constructed
    retrieval::SearchOptions (cp.SearchOptions)."""
    options = cp.SearchOptions()
    search = all_python_defaults(cp.Index.search)
    assert search["k"] == options.k and search["candidates"] is None  # None: max(candidates, k)
    assert (search["scorer"], search["stage1"], search["fusion"]) == (options.scorer, options.stage1, options.fusion)
    assert search["fusion_lambda"] == pytest.approx(options.fusion_lambda)
    assert search["guard"] == options.guard and search["ef_search"] == options.ef_search
    rerank = all_python_defaults(cp.rerank)
    assert (rerank["k"], rerank["scorer"], rerank["guard"]) == (options.k, options.scorer, options.guard)
    import inspect
    import counterpoint.milvus as cpm
    milvus = {n: p.default for n, p in inspect.signature(cpm.MilvusRetriever.search).parameters.items()}
    assert (milvus["k"], milvus["scorer"], milvus["guard"], milvus["candidates"]) == (
        options.k, options.scorer, options.guard, None)
    if CLI.exists():
        for command in ("search", "run"):
            cli = cli_defaults(command)
            assert cli["--lambda"] == pytest.approx(options.fusion_lambda)
            assert cli["--ef-search"] == options.ef_search and cli["--nprobe"] == options.nprobe
        assert cli_defaults("search")["--candidates"] == options.candidates
        assert cli_defaults("search")["--k"] == options.k
