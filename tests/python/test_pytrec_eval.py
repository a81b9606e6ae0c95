"""counterpoint's ranking metrics against pytrec_eval (trec_eval's own C code) on a handmade fixture:
graded qrels, tied scores (also across the cut at 10), a query with no relevant hit, a query with
qrels but no ranking, a query that retrieves itself, and runs of different depths. ndcg@10,
recall@100 and p@r must equal ndcg_cut_10, recall_100 and Rprec, and mrr@10 must equal recip_rank
over the run cut at 10 in trec_eval's order (BEIR's MRR@10), all to 1e-6.

Ties: trec_eval sorts a ranking by score descending, then document id descending; counterpoint's
evaluate does the same (eval/metrics.h trec_order), so the fixture's expectations need no
adjustment. pytrec_eval comes from the peers venv (benchmarks/peers/venv.sh); without it the
test skips."""
import os
import pathlib
import subprocess
import sys

import pytest

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval is not installed (benchmarks/peers/venv.sh "
                                                         "makes a venv with it)")

try:
    import counterpoint as cp
except ImportError:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
    import counterpoint as cp

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("COUNTERPOINT_BUILD_DIR", ROOT / "build")).resolve()
CLI = BUILD / "bin" / "counterpoint"
METRICS = {"ndcg@10": "ndcg_cut_10", "recall@100": "recall_100", "mrr@10": "recip_rank", "p@r": "Rprec"}
TOLERANCE = 1e-6

QRELS = {
    "q1": {"d1": 2, "d2": 1, "d3": 0, "d9": 3},               # graded; d9 relevant but never retrieved
    "q2": {"d7": 1},                                          # nothing relevant is retrieved
    "q3": {f"x{i:03d}": 1 for i in (4, 49, 104)},              # deep run: ranks 5, 50, 105
    "q4": {"a": 1, "b": 2, "c": 1},                           # shallow run (2 hits), R = 3
    "q5": {"z": 1},                                           # qrels but no ranking: 0 everywhere
    "q6": {"e00": 1, "e11": 1},                               # 12 tied hits: the id decides the cut at 10
    "q7": {"r1": 1, "r2": 1},                                 # its own id "q7" is in the run
}
RUN = {
    "q1": {"d4": 0.9, "d2": 0.9, "d1": 0.5, "d5": 0.5, "d3": 0.1, "d6": 0.1},
    "q2": {"d1": 0.8, "d2": 0.7, "d3": 0.7},
    "q3": {f"x{i:03d}": 1.0 - i / 1000 for i in range(120)},
    "q4": {"b": 0.3, "q": 0.2},
    "q6": {f"e{i:02d}": 1.0 for i in range(12)},
    "q7": {"q7": 1.0, "r9": 0.9, "r2": 0.8, "r1": 0.8},
    "unjudged": {"d1": 1.0},                                  # no qrels: ignored by both
}


def trec_sorted(ranking):
    """trec_eval's order: score descending, ties by document id descending."""
    by_id = sorted(ranking.items(), key=lambda item: item[0], reverse=True)
    return sorted(by_id, key=lambda item: -item[1])  # stable: equal scores keep the id-descending order


def pytrec(run, qrels, exclude_self):
    run = {q: {d: s for d, s in r.items() if not (exclude_self and d == q)} for q, r in run.items() if q in qrels}
    full = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100", "Rprec"}).evaluate(run)
    cut = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(
        {q: dict(trec_sorted(r)[:10]) for q, r in run.items()})
    per_query = {}
    for q in qrels:  # a query pytrec_eval did not score (no ranking) counts 0, as trec_eval -c
        per_query[q] = {"ndcg@10": full.get(q, {}).get("ndcg_cut_10", 0.0),
                        "recall@100": full.get(q, {}).get("recall_100", 0.0),
                        "p@r": full.get(q, {}).get("Rprec", 0.0),
                        "mrr@10": cut.get(q, {}).get("recip_rank", 0.0)}
    return per_query


@pytest.mark.parametrize("exclude_self", [True, False])
def test_evaluate_matches_pytrec_eval_per_query_and_mean(exclude_self):
    expected = pytrec(RUN, QRELS, exclude_self)
    got = cp.evaluate(RUN, QRELS, list(METRICS), exclude_self=exclude_self, per_query=True)
    assert set(got) == set(QRELS)
    for q in QRELS:
        for m in METRICS:
            assert got[q][m] == pytest.approx(expected[q][m], abs=TOLERANCE), (q, m, exclude_self)
    means = cp.evaluate(RUN, QRELS, list(METRICS), exclude_self=exclude_self)
    for m in METRICS:
        mean = sum(v[m] for v in expected.values()) / len(expected)
        assert means[m] == pytest.approx(mean, abs=TOLERANCE), m


def test_run_order_does_not_matter():
    """A run given as (doc, score) pairs in any order scores as trec_eval orders it."""
    shuffled = {q: list(reversed(list(r.items()))) for q, r in RUN.items()}
    assert cp.evaluate(shuffled, QRELS, list(METRICS)) == cp.evaluate(RUN, QRELS, list(METRICS))


def test_fixture_exercises_the_tie_rules():
    """Guards the fixture itself: the id-descending tie order is what decides these values, so a
    library that broke ties another way (say by id ascending or by input order) would fail above."""
    expected = pytrec(RUN, QRELS, exclude_self=True)
    assert expected["q6"]["recall@100"] == 1.0 and expected["q6"]["mrr@10"] == 1.0  # e11 first
    assert expected["q6"]["ndcg@10"] < 1.0      # e00 falls to rank 12, past the cut
    assert expected["q1"]["mrr@10"] == 0.5      # d4 (0.9) before d2 (0.9): "d4" > "d2"
    assert expected["q2"]["ndcg@10"] == 0.0 and expected["q5"]["p@r"] == 0.0


def test_cli_eval_matches_pytrec_eval(tmp_path):
    """`counterpoint eval` prints means to 4 decimals, so it can only be held to half a unit of the
    last printed digit (5e-5), not to 1e-6."""
    if not CLI.exists():
        pytest.skip(f"no counterpoint binary at {CLI} (set COUNTERPOINT_BUILD_DIR)")
    run_file, qrels_file = tmp_path / "run.trec", tmp_path / "qrels.tsv"
    with open(run_file, "w") as f:
        for q, ranking in RUN.items():
            for rank, (d, s) in enumerate(trec_sorted(ranking), 1):
                f.write(f"{q} Q0 {d} {rank} {s!r} test\n")
    with open(qrels_file, "w") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for q, docs in QRELS.items():
            for d, g in docs.items():
                f.write(f"{q}\t{d}\t{g}\n")
    done = subprocess.run([str(CLI), "eval", "--qrels", str(qrels_file), "--run", str(run_file),
                           "--metrics", ",".join(METRICS)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    printed = {}
    for line in done.stdout.splitlines():
        fields = line.split()
        if fields and fields[0] in METRICS:
            printed[fields[0]] = float(fields[-1])
    assert set(printed) == set(METRICS), done.stdout
    expected = pytrec(RUN, QRELS, exclude_self=True)
    for m in METRICS:
        assert printed[m] == pytest.approx(sum(v[m] for v in expected.values()) / len(expected), abs=5e-5), m
