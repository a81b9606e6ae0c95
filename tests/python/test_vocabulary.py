"""One refusal, two vocabularies (issue #54): the workflows name an option by its field, which is
the keyword a Python caller typed; the command line, whose user typed a flag, prints the flag in
the same sentence (counterpoint::cli::in_user_terms), and prose words that spell a field stay."""
import os
import pathlib
import subprocess

import pytest

import counterpoint as cp

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = pathlib.Path(os.environ.get("COUNTERPOINT_BUILD_DIR", ROOT / "build")).resolve() / "bin" / "counterpoint"
CORPUS = ROOT / "examples" / "corpus"
QRELS = CORPUS / "qrels" / "contradictions.tsv"


REFUSALS = {
    # tune_alpha=... beside the default scorer (cosine), and the same run on the command line.
    "tuning without a sparsity scorer": (
        dict(tune_alpha="grid", scorer="cosine"), ["--tune-alpha", "grid", "--scorer", "cosine"], ValueError, 1,
        "tune_alpha needs a sparsity scorer (hoyer, l2l1 or kappa4)",
        "--tune-alpha needs a sparsity scorer (hoyer, l2l1 or kappa4)"),
    # Fields and prose in one sentence: "metrics" is a field before its value, a word in "the deeper metrics".
    "k below a metric's cut-off": (
        dict(k=5, metrics=["ndcg@10"]), ["-k", "5", "--metrics", "ndcg@10"], ValueError, 1,
        "k 5 is below the 10 hits per query that metrics ndcg@10 need; raise k or drop the deeper metrics",
        "-k 5 is below the 10 hits per query that --metrics ndcg@10 need; raise -k or drop the deeper metrics"),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_python_names_the_keyword_and_the_cli_the_flag_of_one_refusal(case, unloadable):
    keywords, flags, error, status, in_python, on_command_line = REFUSALS[case]
    with pytest.raises(error) as refused:
        cp.run_beir(CORPUS, QRELS, model=str(unloadable), threads=1, **keywords)
    assert str(refused.value) == in_python
    if not CLI.exists():
        pytest.skip(f"no counterpoint binary at {CLI} (set COUNTERPOINT_BUILD_DIR)")
    result = subprocess.run([str(CLI), "run", "--dataset", str(CORPUS), "--qrels", str(QRELS), "--model",
                             str(unloadable), "--threads", "1", *flags], capture_output=True, text=True, timeout=300)
    assert (result.returncode, result.stderr) == (status, f"counterpoint: {on_command_line}\n")
