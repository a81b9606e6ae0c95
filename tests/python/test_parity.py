"""Every option of a CLI command exists in its Python call and the other way round: the CLI's
flags (read from --help) and the Python keywords (read from the signature line) of each pair of
faces name the same settings. A flag becomes a keyword by dropping the dashes and writing '-' as
'_'; the few renames and the arguments only one face can have are listed here, each with why."""
import ast
import inspect
import os
import pathlib
import re
import subprocess

import pytest

import counterpoint as cp

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = pathlib.Path(os.environ.get("COUNTERPOINT_BUILD_DIR", ROOT / "build")).resolve() / "bin" / "counterpoint"

# Flags spelled otherwise than their keyword.
RENAMED = {"--lambda": "fusion_lambda", "--no-guard": "guard", "--no-feature-cache": "feature_cache",
           "--no-bm25": "bm25"}
# One face only: --help, and Python's progress callback (the CLI draws its own progress line).
CLI_ONLY = {"--help"}
PYTHON_ONLY = {"progress"}


def cli_keywords(*command):
    text = subprocess.run([str(CLI), *command, "--help"], capture_output=True, text=True, check=True).stdout
    flags = set(re.findall(r"^\s+(?:-\w,)?(--[\w-]+)", text, re.M)) - CLI_ONLY
    return {RENAMED.get(flag, flag[2:].replace("-", "_")) for flag in flags}


def python_keywords(function):
    signature = function.__doc__.strip().split("\n")[0]
    signature = re.sub(r"\w+(?:::\w+)+", "object", signature)
    arguments = ast.parse("def " + signature.split(" -> ")[0] + ": pass").body[0].args
    return {a.arg for a in arguments.args + arguments.kwonlyargs} - PYTHON_ONLY


@pytest.mark.skipif(not CLI.exists(), reason=f"no counterpoint binary at {CLI}")
@pytest.mark.parametrize("command, function", [
    (("run",), cp.run_beir),
    (("stance",), cp.run_stance),
    (("eval",), cp.evaluate),
])
def test_each_cli_command_and_its_python_call_take_the_same_options(command, function):
    cli, python = cli_keywords(*command), python_keywords(function)
    if command == ("eval",):  # evaluate's exclude_self=True is the CLI's default, --keep-self its negation
        cli = cli - {"keep_self"} | {"exclude_self"}
    assert {"cli only": cli - python, "python only": python - cli} == {"cli only": set(), "python only": set()}


@pytest.mark.skipif(not CLI.exists(), reason=f"no counterpoint binary at {CLI}")
@pytest.mark.parametrize("command, function, cli_files, python_objects", [
    # The CLI reads the corpus and names the models; Python is handed the texts and the encoders,
    # and saves the index with Index.save.
    (("index", "build"), cp.Index.build, {"corpus", "out", "model", "sparse_model", "threads"},
     {"texts", "ids", "encoder", "sparse_encoder"}),
    # The CLI indexes the corpus (or reuses --index); Python is handed the Index, encoders and all.
    (("clean",), cp.clean_corpus, {"corpus", "model", "sparse_model", "threads"}, set()),
])
def test_commands_over_files_take_the_settings_of_their_python_call(command, function, cli_files, python_objects):
    cli, python = cli_keywords(*command) - cli_files, python_keywords(function) - python_objects
    assert {"cli only": cli - python, "python only": python - cli} == {"cli only": set(), "python only": set()}


# The trainers' flags spelled otherwise than their keywords (the CLI's are shorter), and --fresh,
# the CLI's negation of resume=True.
TRAINING_RENAMES = {"lr": "learning_rate", "warmup": "warmup_ratio", "out": "output_dir", "encoder_lr":
                    "encoder_learning_rate", "fresh": "resume", "base": "base_model", "name": "model_name",
                    "prefix": "query_prefix", "model": "encoder"}
# The CLI builds triples from data files by its flags; Python takes `triples`, built by cp.sick_triples,
# cp.arguana_triples, cp.add_inverted_negatives or in memory.
TRIPLE_SOURCES = {"data", "dataset", "qrels", "pairs", "negatives", "curriculum", "stance_count", "inverted_edits",
                  "inverted_negatives", "min_overlap"}


@pytest.mark.skipif(not CLI.exists(), reason=f"no counterpoint binary at {CLI}")
@pytest.mark.parametrize("command, function, python_triples", [
    (("train", "sparsecl"), cp.train_sparsecl, set()),  # --triples FILE or `triples` in memory
    (("train", "contrastive"), cp.train_contrastive, set()),
    (("train", "verifier"), cp.train_verifier, {"triples"}),  # the CLI builds them from --pairs
])
def test_each_trainer_takes_the_same_settings_on_the_command_line_and_in_python(command, function, python_triples):
    cli = {TRAINING_RENAMES.get(name, name) for name in cli_keywords(*command) - TRIPLE_SOURCES}
    python = python_keywords(function) - python_triples
    assert {"cli only": cli - python, "python only": python - cli} == {"cli only": set(), "python only": set()}


@pytest.mark.skipif(not CLI.exists(), reason=f"no counterpoint binary at {CLI}")
def test_every_search_setting_of_the_cli_is_a_keyword_of_index_search_and_search_options():
    """`search` also reads an index folder and query files, which Index.search holds as objects;
    its search settings (the one table) are Index.search's keywords and SearchOptions' fields."""
    settings = cli_keywords("search") - {"index", "query", "queries", "trec", "explain", "keep_self", "model",
                                         "sparse_model", "threads", "prefix", "verifier"}
    assert settings - python_keywords(cp.Index.search) == set()
    options = cp.SearchOptions()
    assert {name for name in settings if not hasattr(options, name)} == set()


@pytest.mark.skipif(not CLI.exists(), reason=f"no counterpoint binary at {CLI}")
@pytest.mark.parametrize("command, function", [
    (("models", "install"), cp.models.install),
    (("models", "convert"), cp.models.convert),
])
def test_model_commands_take_the_keywords_of_their_python_call(command, function):
    """The model named or the folder converted is each face's first argument; every flag is a keyword."""
    keywords = {p.name for p in inspect.signature(function).parameters.values() if p.kind == p.KEYWORD_ONLY}
    assert cli_keywords(*command) == keywords
