"""Hostile values on the command line and in the files it reads (issue #62): an empty numeric flag,
CR-only line endings, a run score below the float range."""
import concurrent.futures
import os
import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("COUNTERPOINT_BUILD_DIR", ROOT / "build")).resolve()
CLI = BUILD / "bin" / "counterpoint"
MODELS = pathlib.Path(os.environ.get("COUNTERPOINT_MODELS", ROOT / "models" / "installed"))
TINY_MODEL = ROOT / "tests" / "fixtures" / "training" / "tiny-model"

if not CLI.exists():
    pytest.skip(f"no counterpoint binary at {CLI} (set COUNTERPOINT_BUILD_DIR)", allow_module_level=True)


def run(*args, check=True, cwd=None):
    result = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=600, cwd=cwd,
                            env={**os.environ, "COUNTERPOINT_MODELS": str(MODELS)})
    if check and result.returncode != 0:
        raise AssertionError(f"counterpoint {' '.join(map(str, args))} exited {result.returncode}:\n{result.stderr}")
    return result


# ---- one empty-value rule for every numeric flag -----------------------------------------------

# A line of CLI11's help naming an option and the type of its value: "  -k,--k UINT=10 ...",
# "  --alpha FLOAT ...", "  --sparsity-scales FLOAT ...".
OPTION_LINE = re.compile(r"^\s+(?:-\w,)?(--[\w-]+)\s+(INT|UINT|FLOAT)\b")


def subcommands(help_text):
    """The names CLI11's help lists under "Subcommands:", each on a line "  name   description"
    (a description's later lines are indented further)."""
    names, listing = [], False
    for line in help_text.splitlines():
        if line.strip() == "Subcommands:":
            listing = True
        elif not line.strip():
            listing = False
        elif listing and re.match(r"^  \S", line):
            names.append(line.split()[0])
    return names


def numeric_options():
    """(command words, flag) for every numeric option of every command, as its --help lists it."""
    found, pending = [], [[]]
    while pending:
        words = pending.pop()
        help_text = run(*words, "--help").stdout
        pending += [words + [name] for name in subcommands(help_text)]
        found += [(words, m.group(1)) for m in map(OPTION_LINE.match, help_text.splitlines()) if m]
    return found


def test_every_numeric_flag_of_every_command_refuses_an_empty_value(tmp_path):
    options = numeric_options()
    flags = {(" ".join(words), flag) for words, flag in options}
    # The walk sees the flags the issue named, so it cannot pass by finding none.
    for named in [("search", "--alpha"), ("clean", "--alpha"), ("demo", "--alpha"), ("run", "--alpha"),
                  ("search", "--sparsity-scale"), ("search", "--lambda"), ("search", "--threads"),
                  ("search", "--ef-search"), ("clean", "--threshold"), ("index build", "--batch-size"),
                  ("train sparsecl", "--lr"), ("train sparsecl", "--sparsity-scales")]:
        assert named in flags

    def refusal(option):
        words, flag = option
        # Run in an empty folder, so that a command that ran anyway (the demo needs no other flag)
        # leaves its output where the check below sees it.
        result = run(*words, flag, "", check=False, cwd=tmp_path)
        if result.returncode != 0 and f"{flag}: needs a number; got an empty value" in result.stderr:
            return None
        return f"{' '.join(words)} {flag} '': exit {result.returncode}, {result.stderr.strip()[-300:]}"

    # Each run is a process start (about a second: libtorch loads), so they overlap.
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        failures = [failure for failure in pool.map(refusal, options) if failure]
    assert not failures, "\n".join(failures)
    assert not any(tmp_path.iterdir())


def test_a_blank_numeric_value_is_refused_like_an_empty_one_and_a_real_one_is_read(tmp_path):
    trusted = tmp_path / "t.txt"
    trusted.write_text("the sky is green\n")
    corpus = tmp_path / "c.tsv"
    corpus.write_text("d1\tthe sky is blue\n")
    blank = run("clean", "--trusted", trusted, "--corpus", corpus, "--out", tmp_path / "x", "--threshold", "  ",
                check=False)
    assert blank.returncode != 0
    assert "--threshold: needs a number; got an empty value" in blank.stderr
    assert not (tmp_path / "x").exists()
    # A list option refuses an empty value too; its elements are numbers as before.
    empty_list = run("train", "sparsecl", "--head-only", "--triples", corpus, "--out", tmp_path / "m",
                     "--sparsity-scales", "", check=False)
    assert empty_list.returncode != 0
    assert "--sparsity-scales: needs a number; got an empty value" in empty_list.stderr


# ---- CR-only line endings ----------------------------------------------------------------------

def test_a_cr_only_tsv_corpus_and_queries_file_are_read_line_by_line(tmp_path):
    corpus = tmp_path / "c.tsv"
    corpus.write_bytes(b"id\ttext\rd1\ta dog\rd2\ta cat\r")
    built = run("index", "build", "--corpus", corpus, "--out", tmp_path / "index", "--model", TINY_MODEL)
    assert "indexed 2 documents" in built.stdout
    queries = tmp_path / "q.txt"
    queries.write_bytes(b"a dog\ra cat\r")
    trec = tmp_path / "out.trec"
    run("search", "--index", tmp_path / "index", "--model", TINY_MODEL, "--queries", queries, "--trec", trec, "-k", "1")
    assert sorted({line.split()[0] for line in trec.read_text().splitlines()}) == ["q1", "q2"]


def test_cr_only_qrels_and_run_files_are_scored_as_their_lf_twins(tmp_path):
    def scored(ending):
        qrels = tmp_path / f"qrels_{len(ending)}.tsv"
        qrels.write_bytes(b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n".replace(b"\n", ending))
        trec = tmp_path / f"run_{len(ending)}.trec"
        trec.write_bytes(b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d1 1 2.0 t\nq2 Q0 d2 2 1.0 t\n"
                         .replace(b"\n", ending))
        return run("eval", "--qrels", qrels, "--run", trec, "--metrics", "mrr@10").stdout

    lf = scored(b"\n")
    assert "queries\t2" in lf and "mrr@10\tall\t0.7500" in lf
    assert scored(b"\r") == lf
    assert scored(b"\r\n") == lf


# ---- a run score below the float range ---------------------------------------------------------

def test_a_run_score_below_the_float_range_is_read_as_zero(tmp_path):
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("q1\td2\t1\n")
    trec = tmp_path / "run.trec"
    trec.write_text("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 1e-320 t\n")
    out = run("eval", "--qrels", qrels, "--run", trec, "--metrics", "mrr@10").stdout
    assert "mrr@10\tall\t0.5000" in out
    trec.write_text("q1 Q0 d1 1 1e39 t\n")
    huge = run("eval", "--qrels", qrels, "--run", trec, check=False)
    assert huge.returncode != 0 and f'{trec}:1: score "1e39" is not a finite number' in huge.stderr
