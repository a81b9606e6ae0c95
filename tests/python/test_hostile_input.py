"""Hostile input through the Python module: each case ends in the one error type of its kind
(ValueError for bad values, cp.CorruptFileError for bad files), never a RuntimeError cast
failure, a hang or a silently wrong answer."""
import json
import os
import pathlib
import re
import shutil
import stat
import subprocess
import sys

import numpy as np
import pytest

import counterpoint as cp

REPO = pathlib.Path(__file__).resolve().parents[2]
from conftest import BERT_TINY  # noqa: E402  (the committed tiny BERT)
HOSTILE = REPO / "tests" / "fixtures" / "hostile_models"
LONE_SURROGATE = "a\ud800b"
BUILD = pathlib.Path(os.environ.get("COUNTERPOINT_BUILD_DIR", REPO / "build")).resolve()
CLI = BUILD / "bin" / "counterpoint"
TINY_MODEL = REPO / "tests" / "fixtures" / "training" / "tiny-model"


def cli(*args, **kwargs):
    """Runs the command line in a subprocess, so a crash shows as a negative return code."""
    if not CLI.exists():
        pytest.skip(f"no counterpoint binary at {CLI} (set COUNTERPOINT_BUILD_DIR)")
    kwargs.setdefault("capture_output", True)
    return subprocess.run([str(CLI), *map(str, args)], text=True, timeout=300, **kwargs)


def python(code, *args, timeout=300):
    """Runs `code` in a fresh interpreter with this counterpoint, so a crash cannot end the tests."""
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


@pytest.fixture(scope="module")
def index(encoder):
    return cp.Index.build(["a cat", "a dog"], ["x", "y"], encoder=encoder, sparse_encoder=encoder)


def test_a_lone_surrogate_is_a_value_error_at_every_text_argument(encoder, index):
    calls = {
        "texts[0]": lambda: encoder.encode([LONE_SURROGATE]),
        "prefix": lambda: encoder.encode(["a"], prefix=LONE_SURROGATE),
        "queries[0]": lambda: index.search([LONE_SURROGATE]),
        "ids[1]": lambda: cp.Index.build(["a", "b"], ["ok", LONE_SURROGATE], encoder=encoder),
        "texts[1]": lambda: index.add(["fine", LONE_SURROGATE], ["p", "q"]),
        "prefix ": lambda: index.search(["a"], prefix=LONE_SURROGATE),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError, match=re.escape(name.strip()) + " cannot be encoded as UTF-8"):
            call()
    assert len(index) == 2


def test_a_lone_surrogate_is_a_value_error_at_the_index_lookups_too(index):
    calls = {"id": [lambda: index.text(LONE_SURROGATE), lambda: LONE_SURROGATE in index],
             "query": [lambda: index.explain(LONE_SURROGATE, "x")],
             "hit_id": [lambda: index.explain("a cat", LONE_SURROGATE)]}
    for name, lookups in calls.items():
        for call in lookups:
            with pytest.raises(ValueError, match=f"^{name} cannot be encoded as UTF-8"):
                call()
    with pytest.raises(TypeError, match="id must be str, got int"):
        index.text(3)
    assert index.text("x") == "a cat" and "y" in index


@pytest.mark.parametrize("case", ["token_width_grows", "pooled_width_grows", "pooled_narrower", "one_pooled_row",
                                  "integer_outputs", "token_length_differs", "float16_outputs", "meta_outputs",
                                  "sparse_outputs"])
def test_a_model_whose_output_shape_changes_with_the_batch_is_corrupt(case):
    model = cp.Encoder.load(str(HOSTILE / case), threads=1)
    texts = ["the man is playing guitar", "a dog", "the woman is not eating food"]
    with pytest.raises(cp.CorruptFileError, match=f"hostile-{case}.*expected \\["):
        model.encode(texts, batch_size=3)
    with pytest.raises(cp.CorruptFileError, match=f"hostile-{case}"):
        model.encode_tokens(texts, batch_size=3)


def test_huge_candidates_are_capped_at_the_index_size(index):
    hits = index.search(["a cat"], k=2, candidates=2 ** 40)
    assert [h.id for h in hits[0]] and len(hits[0]) == 2


def test_threads_beyond_the_documented_maximum_are_refused():
    with pytest.raises(ValueError, match="between 0 \\(all cores\\) and 256, got 10000"):
        cp.Encoder.load(str(BERT_TINY), threads=10000)


def test_a_fifo_as_the_network_is_refused_without_blocking(tmp_path):
    model = tmp_path / "model"
    shutil.copytree(BERT_TINY, model)
    (model / "model.pt").unlink()
    os.mkfifo(model / "model.pt")
    with pytest.raises(ValueError, match="found a FIFO"):
        cp.Encoder.load(str(model), threads=1)


def test_kernels_say_what_the_clamp_does_and_cosine_holds_at_tiny_scales():
    for kernel in (cp.hoyer, cp.l2_l1, cp.kappa4):
        assert "clamped as in SparseCL's reference code" in kernel.__doc__
    rng = np.random.default_rng(3)
    q, c = rng.standard_normal(16).astype(np.float32), rng.standard_normal((4, 16)).astype(np.float32)
    np.testing.assert_allclose(cp.cosine(q * 1e-25, c), cp.cosine(q, c), atol=1e-6)
    np.testing.assert_allclose(cp.cosine(q, c * 1e-30), cp.cosine(q, c), atol=1e-6)
    # The clamp, documented: q * 1e-8 against C * 1e-8 differs by less than its floors.
    assert np.all(cp.hoyer(q * 1e-8, c * 1e-8) == 0.0)


DEPTH_REFUSED = "JSON nested deeper than 128 levels of arrays and objects"


def test_an_index_header_of_100000_nested_brackets_is_corrupt_not_a_crash(tmp_path):
    index = tmp_path / "index"
    index.mkdir()
    (index / "header.json").write_text("[" * 100000 + "]" * 100000)
    info = cli("index", "info", index)
    assert info.returncode == 1 and f"header.json:1:129: {DEPTH_REFUSED}" in info.stderr, info.stderr
    loaded = python("import counterpoint as cp, sys; "
                    "cp.Index.load(sys.argv[1], encoder=cp.Encoder.load(sys.argv[2], threads=1))", index, BERT_TINY)
    assert loaded.returncode == 1 and "CorruptFileError" in loaded.stderr and DEPTH_REFUSED in loaded.stderr


def test_a_query_with_a_200000_deep_meta_value_is_corrupt_naming_its_line(tmp_path):
    dataset = tmp_path / "beir"
    dataset.mkdir()
    (dataset / "corpus.jsonl").write_text('{"_id": "d1", "text": "a cat"}\n{"_id": "d2", "text": "a dog"}\n')
    opening = '{"_id": "q2", "text": "x", "meta": '
    (dataset / "queries.jsonl").write_text('{"_id": "q1", "text": "a cat"}\n' + opening + "[" * 200000 + "]" * 200000
                                           + "}\n")
    where = f"queries.jsonl:2:{len(opening) + 128}: {DEPTH_REFUSED}"  # the 128th "[" is the 129th level
    loaded = python("import counterpoint as cp, sys; cp.load_beir(sys.argv[1])", dataset)
    assert loaded.returncode == 1 and "CorruptFileError" in loaded.stderr and where in loaded.stderr, loaded.stderr
    index = tmp_path / "index"
    cli("index", "build", "--corpus", dataset / "corpus.jsonl", "--out", index, "--model", TINY_MODEL,
        "--threads", 1).check_returncode()
    search = cli("search", "--index", index, "--queries", dataset / "queries.jsonl", "--model", TINY_MODEL,
                 "--threads", 1)
    assert search.returncode == 1 and where in search.stderr, search.stderr
    inverted = cli("invert", "--queries", dataset / "queries.jsonl")
    assert inverted.returncode == 1 and where in inverted.stderr, inverted.stderr


def small_dataset(folder):
    """A BEIR folder of three passages, one query and its judgement."""
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": f"d{i}", "text": text}) + "\n"
        for i, text in enumerate(["the man is playing guitar", "the woman is eating food", "a dog is running"])))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "a man plays the guitar"}) + "\n")
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td0\t1\n")
    return folder


def test_an_output_onto_an_input_of_the_same_command_is_refused_and_the_input_kept(tmp_path):
    dataset = small_dataset(tmp_path / "beir")
    queries, qrels = dataset / "queries.jsonl", dataset / "qrels" / "test.tsv"
    before = {path: path.read_bytes() for path in (queries, qrels, dataset / "corpus.jsonl")}
    index = tmp_path / "index"
    cli("index", "build", "--corpus", dataset, "--out", index, "--model", TINY_MODEL, "--threads", 1).check_returncode()
    cases = {
        "--trec": ("search", "--index", index, "--queries", queries, "--model", TINY_MODEL, "--trec", queries),
        "--out": ("invert", "--queries", queries, "--out", queries),
        "is inside the input --corpus": ("invert", "--corpus", dataset, "--out", dataset / "corpus.jsonl"),
        "is the input --qrels": ("run", "--dataset", dataset, "--qrels", qrels, "--model", TINY_MODEL,
                                 "--threads", 1, "--out", qrels),
    }
    for expected, args in cases.items():
        result = cli(*args)
        assert result.returncode == 1 and expected in result.stderr, (args, result.stderr)
        assert "destroy" in result.stderr
    assert all(path.read_bytes() == content for path, content in before.items())
    # A new file is fine, even inside an input folder.
    cli("invert", "--corpus", dataset, "--out", dataset / "inverted.jsonl").check_returncode()


def test_an_index_is_never_saved_over_a_corpus_folder_or_a_model(tmp_path):
    dataset = small_dataset(tmp_path / "beir")
    model = tmp_path / "model"
    shutil.copytree(TINY_MODEL, model)
    for out in (dataset, model):
        kept = sorted(p.name for p in out.iterdir())
        result = cli("index", "build", "--corpus", dataset, "--out", out, "--model", model, "--threads", 1)
        assert result.returncode == 1 and "not a counterpoint index" in result.stderr, result.stderr
        assert sorted(p.name for p in out.iterdir()) == kept


def test_a_device_a_fifo_or_a_folder_is_never_replaced_by_an_output(tmp_path):
    queries = tmp_path / "q.txt"
    queries.write_text("It is good\n")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    targets = {fifo: "is a FIFO", tmp_path: "is a directory"}
    if os.geteuid() == 0:  # as root a writer once replaced a character device node (e.g. /dev/null)
        device = tmp_path / "null"
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        targets[device] = "is a character device"
    for target, expected in targets.items():
        kind = stat.S_IFMT(os.stat(target).st_mode)
        result = cli("invert", "--queries", queries, "--out", target)
        assert result.returncode == 1 and f"--out {target} {expected}" in result.stderr, result.stderr
        assert stat.S_IFMT(os.stat(target).st_mode) == kind


def test_output_lost_on_stdout_is_a_failure(tmp_path):
    with open("/dev/full", "w") as full:
        for args in (("invert", "It is good"), ("models", "list", "--models", REPO / "tests" / "fixtures")):
            result = cli(*args, stdout=full, stderr=subprocess.PIPE, capture_output=False)
            assert result.returncode == 1 and "could not write the output to stdout" in result.stderr, args


def test_training_never_writes_over_its_base_model(tmp_path):
    model = tmp_path / "model"
    shutil.copytree(TINY_MODEL, model)
    before = {p.name: p.read_bytes() for p in model.iterdir()}
    triples = REPO / "tests" / "fixtures" / "training" / "triples.tsv"
    for out in (model, tmp_path / "." / "model"):
        with pytest.raises(ValueError, match="output_dir .* is the input base model .*would destroy the input"):
            cp.train_sparsecl(model, cp.load_triples(triples), out, max_steps=1, threads=1)
    result = cli("train", "sparsecl", "--base", model, "--out", model, "--triples", triples, "--threads", 1)
    assert result.returncode == 1 and "is the input base model" in result.stderr, result.stderr
    assert {p.name: p.read_bytes() for p in model.iterdir()} == before


ADDRESS_SPACE_CAP = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
"""


@pytest.mark.skipif("address" in os.environ.get("LD_PRELOAD", "") or "ASAN_OPTIONS" in os.environ,
                    reason="AddressSanitizer reserves more address space than the cap")
def test_more_threads_than_an_address_space_limit_allows_are_refused_and_the_process_goes_on(tmp_path):
    code = ADDRESS_SPACE_CAP + """
import counterpoint as cp
try:
    cp.Encoder.load(sys.argv[1], threads=64)
except ValueError as e:
    print("refused:", e)
print(cp.Encoder.load(sys.argv[1], threads=2).encode(["a cat"]).shape)
"""
    loaded = python(code, BERT_TINY, timeout=120)
    assert loaded.returncode == 0, loaded.stderr
    assert "refused:" in loaded.stdout and "threads 64 needs about" in loaded.stdout
    assert "(ulimit -v): use at most 24" in loaded.stdout
    assert "(1, " in loaded.stdout
    built = subprocess.run(["/bin/sh", "-c", 'ulimit -v 8388608 && exec "$@"', "sh", str(CLI), "index", "build",
                            "--corpus", REPO / "examples" / "corpus", "--out", tmp_path / "index",
                            "--model", TINY_MODEL, "--threads", "64"], capture_output=True, text=True, timeout=120)
    assert built.returncode == 1 and "use at most 24" in built.stderr, built.stderr
