"""Hostile inputs of training and of the feature cache, in every face: an empty dev triples file is
refused before training (named by the flag on the command line, by the keyword in Python), triples
that make no complete batch name the text that repeats, and a feature cache whose records changed
or were cut by a crashed write gives the answer of a run without it."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

try:
    import counterpoint as cp
except ImportError:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
    import counterpoint as cp

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("COUNTERPOINT_BUILD_DIR", ROOT / "build")).resolve()
CLI = BUILD / "bin" / "counterpoint"
TINY_MODEL = ROOT / "tests" / "fixtures" / "training" / "tiny-model"
TRIPLES = ROOT / "tests" / "fixtures" / "training" / "triples.tsv"
CORPUS = ROOT / "examples" / "corpus"

needs_cli = pytest.mark.skipif(not CLI.exists(), reason=f"no counterpoint binary at {CLI}")


def run(*args):
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=600)


@needs_cli
def test_an_empty_dev_triples_file_is_refused_before_training_by_its_flag(tmp_path):
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    out = tmp_path / "M"
    refused = run("train", "sparsecl", "--head-only", "--triples", TRIPLES, "--dev-triples", empty, "--base",
                  TINY_MODEL, "--dense-model", TINY_MODEL, "--batch-size", 2, "--threads", 1, "--out", out)
    assert refused.returncode != 0
    assert refused.stderr.splitlines()[-1] == (f"counterpoint: --dev-triples file {empty} holds no triples (lines "
                                               "anchor<TAB>positive<TAB>negative); give held-out triples to tune "
                                               "alpha on, or no dev triples")
    assert "step " not in refused.stderr and not out.exists()  # nothing trained or written


def test_an_empty_dev_triples_file_is_refused_by_its_keyword(tmp_path):
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    with pytest.raises(ValueError, match=re.escape(f"dev_triples file {empty} holds no triples")):
        cp.train_sparsecl(str(TINY_MODEL), cp.load_triples(str(TRIPLES)), str(tmp_path / "M"), head_only=True,
                          batch_size=2, threads=1, dev_triples=[str(empty)], dense_model=str(TINY_MODEL))
    assert not (tmp_path / "M").exists()


@needs_cli
def test_no_complete_batch_names_the_text_that_repeats(tmp_path):
    triples = tmp_path / "t.tsv"
    triples.write_text("anchor one\tpos\tneg\nanchor two\tpos\tneg\n")
    refused = run("train", "sparsecl", "--head-only", "--triples", triples, "--base", TINY_MODEL, "--batch-size", 2,
                  "--threads", 1, "--out", tmp_path / "M")
    assert refused.returncode != 0
    assert refused.stderr.splitlines()[-1] == (
        "counterpoint: train: 2 triples make no complete batch of 2: triples that share an anchor or positive text, "
        "or a group, never share a batch, and the text 'pos' is the positive of 2 triples; linked so, the triples "
        "form 1 distinct group (a batch size of at most 1 always fits)")
    triples.write_text("same\tsame\tsame\n" * 3)
    identical = run("train", "sparsecl", "--head-only", "--triples", triples, "--base", TINY_MODEL, "--batch-size",
                    2, "--threads", 1, "--out", tmp_path / "M")
    assert identical.returncode != 0
    assert identical.stderr.splitlines()[-1] == ("counterpoint: train: 3 triples make no complete batch of 2: every "
                                                 "triple's positive is its anchor (e.g. 'same'), which no batch takes")


@needs_cli
def test_a_line_above_the_triple_limit_is_refused_with_the_limit(tmp_path):
    """A 200 MB line was tokenized whole to train on its first tokens (20 MB: 14 s and 950 MB);
    scaled here to 2 MiB, refused by file and line before any work."""
    triples = tmp_path / "t.tsv"
    long_line = "word " * (2 * 1024 * 1024 // 5) + "\tpos\tneg"
    triples.write_text("anchor one\tpos one\tneg\n" + long_line + "\n")
    expected = (f"{triples}:2: the line is {len(long_line)} bytes, above the 1 MiB (1048576 bytes) a triple may "
                "hold; a model reads a few thousand characters of a text")
    refused = run("train", "sparsecl", "--head-only", "--triples", triples, "--base", TINY_MODEL, "--batch-size", 2,
                  "--threads", 1, "--out", tmp_path / "M")
    assert refused.returncode != 0 and refused.stderr.splitlines()[-1] == "counterpoint: " + expected
    with pytest.raises(cp.CorruptFileError, match=re.escape(expected)):
        cp.load_triples(str(triples))


def record_layout(data):
    """(header length, record length) of a feature cache file: a header line "counterpoint-features/2
    <width>", then records of a 64-character text hash, `width` float32 values, a 16-character checksum."""
    header = data.index(b"\n") + 1
    width = int(data[:header].split()[1])
    return header, 64 + 4 * width + 16


@needs_cli
def test_a_damaged_feature_cache_gives_the_answer_of_a_run_without_one(tmp_path):
    args = ["run", "--dataset", CORPUS, "--qrels", CORPUS / "qrels" / "contradictions.tsv", "--model", TINY_MODEL,
            "--threads", 1, "--metrics", "ndcg@10"]

    def ndcg(*extra):
        result = run(*args, *extra)
        assert result.returncode == 0, result.stderr
        return [line for line in result.stdout.splitlines() if line.startswith("ndcg@10\t")], result.stderr

    uncached, _ = ndcg("--no-feature-cache")
    cache = tmp_path / "C"
    assert ndcg("--feature-cache", cache)[0] == uncached
    files = sorted((cache / "features").glob("*.bin"))
    assert files

    # Bit 0x40 of byte 3 of the 4th float of every record, as the issue did.
    for path in files:
        data = bytearray(path.read_bytes())
        header, record = record_layout(data)
        assert (len(data) - header) % record == 0
        for at in range(header, len(data), record):
            data[at + 64 + 3 * 4 + 3] ^= 0x40
        path.write_bytes(bytes(data))
    flipped, said = ndcg("--feature-cache", cache)
    assert flipped == uncached
    for path in files:
        assert f"the feature cache {path} was rebuilt (" in said and "of its records fail their checksum" in said
    again, said = ndcg("--feature-cache", cache)
    assert again == uncached and "feature cache" not in said  # rewritten: read whole, nothing to say

    # A crashed write: the header, 5 records and 100 bytes of the 6th; run twice.
    corpus_file = max(files, key=lambda path: path.stat().st_size)
    data = corpus_file.read_bytes()
    header, record = record_layout(data)
    assert len(data) > header + 6 * record
    corpus_file.write_bytes(data[:header + 5 * record + 100])
    first, said = ndcg("--feature-cache", cache)
    assert first == uncached and "its last record is cut short" in said
    second, said = ndcg("--feature-cache", cache)
    assert second == uncached and "feature cache" not in said
