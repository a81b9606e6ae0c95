"""benchmarks/tables/sick_unlabelled.py scores a SICK run twice, with the split's qrels and with every
contradiction the pairs files label added, and names the queries whose first hit is an unlabelled
negation of the query (a hit the pairs label entailed either way is not counted)."""
import argparse
import json
import math
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
try:
    import counterpoint  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "benchmarks" / "tables"))
import sick_support  # noqa: E402
import sick_unlabelled  # noqa: E402

SENTENCES = {"s1": "A man is playing a flute", "s2": "A man is playing a guitar",
             "s3": "There is no man playing a flute", "s4": "A woman is playing a flute", "s5": "A man plays a flute"}
HEADER = "pair_ID\tsentence_A\tsentence_B\tentailment_label\tentailment_AB\tentailment_BA\trelatedness_score\n"


def pair(number, a, b, ab, ba):
    return f"{number}\t{SENTENCES[a]}\t{SENTENCES[b]}\tX\t{ab}\t{ba}\t3.0\n"


@pytest.fixture
def sick(tmp_path):
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": "", "text": t}) + "\n" for i, t in SENTENCES.items()))
    (tmp_path / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": i, "text": SENTENCES[i]}) + "\n" for i in ("s1", "s5")))
    (tmp_path / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\ns1\ts2\t1\ns5\ts4\t1\n")
    (tmp_path / "pairs_dev.tsv").write_text(HEADER + pair(1, "s1", "s2", "A_contradicts_B", "B_contradicts_A") +
                                            pair(2, "s1", "s5", "A_entails_B", "B_entails_A") +
                                            pair(3, "s5", "s4", "A_contradicts_B", "B_neutral_A"))
    (tmp_path / "pairs_train.tsv").write_text(HEADER + pair(4, "s1", "s4", "A_contradicts_B", "B_neutral_A"))
    args = argparse.Namespace(data=str(tmp_path), qrels=str(tmp_path / "qrels" / "dev.tsv"),
                              pairs=[str(tmp_path / "pairs_dev.tsv"), str(tmp_path / "pairs_train.tsv")])
    return sick_support.Sick(args)


def write_run(path, ranked):
    path.write_text("".join(f"{q} Q0 {d} {rank} {10 - rank} t\n"
                            for q, docs in ranked.items() for rank, d in enumerate(docs, 1)))
    return str(path)


def test_train_pair_contradictions_join_the_relevant_set_and_an_unlabelled_negation_on_top_is_named(sick, tmp_path):
    run = write_run(tmp_path / "run.trec", {"s1": ["s3", "s2", "s4"], "s5": ["s1", "s4"]})
    row = sick_unlabelled.audit(run, sick, "cmd")
    at2, at3 = 1 / math.log2(3), 1 / math.log2(4)
    assert row["ndcg@10"] == pytest.approx((at2 + at2) / 2)
    assert row["ndcg@10 known labels"] == pytest.approx(((at2 + at3) / (1 + at2) + at2) / 2)
    assert row["acc@1"] == 0.0
    # s5's first hit s1 entails s5 by the pairs: labelled, so only s1's first hit counts.
    assert row["first hit unlabelled"] == 1 and row["of which the query negated"] == 1
    assert row["negated first hits"] == [{"query": "s1", "query_text": SENTENCES["s1"], "hit": "s3",
                                          "hit_text": SENTENCES["s3"]}]


def test_a_run_without_the_judged_queries_is_refused_by_name(sick, tmp_path):
    run = write_run(tmp_path / "other.trec", {"s1": ["s2"]})
    with pytest.raises(SystemExit, match="no hits for 1 of the 2 judged queries \\(first: s5\\)"):
        sick_unlabelled.audit(run, sick, "cmd")


def test_results_that_would_overwrite_an_input_are_refused_before_any_work(sick, tmp_path, monkeypatch):
    run = write_run(tmp_path / "run.md", {"s1": ["s2"], "s5": ["s4"]})
    monkeypatch.setattr(sys, "argv", ["sick_unlabelled.py", run, "--data", str(tmp_path),
                                      "--results-name", str(tmp_path / "run")])
    with pytest.raises(SystemExit, match="would overwrite the input"):
        sick_unlabelled.main()
    assert (tmp_path / "run.md").read_text().startswith("s1 Q0 s2 1")


def test_negation_counts_only_when_the_query_lacks_it():
    assert sick_unlabelled.negates("The man isn't drawing", "The man is drawing")
    assert not sick_unlabelled.negates("Nobody is drawing", "No man is drawing")
    assert not sick_unlabelled.negates("A knot is tied", "A man is drawing")
