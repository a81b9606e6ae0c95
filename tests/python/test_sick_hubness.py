"""benchmarks/tables/sick_hubness.py re-ranks a run by s(q, p) - beta * r(p), r(p) the mean of a
passage's own best K scores: a passage that scores high for every query (a hub) drops below one that
scores high for its query alone."""
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
try:
    import counterpoint  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "benchmarks" / "tables"))
import sick_hubness  # noqa: E402

# "hub" scores 0.9 against every other sentence; "answer" 0.8 against q1 and low elsewhere.
OWN = {"hub": [("q1", 0.9), ("q2", 0.9), ("answer", 0.9)], "answer": [("hub", 0.9), ("q1", 0.8), ("q2", 0.1)],
       "empty": []}


def test_hubness_is_the_mean_of_a_passages_own_best_k_scores():
    assert sick_hubness.hubness(OWN, 1) == {"hub": 0.9, "answer": 0.9, "empty": 0.0}
    assert sick_hubness.hubness(OWN, 3) == pytest.approx({"hub": 0.9, "answer": 0.6, "empty": 0.0})


def test_a_hub_drops_below_the_passage_that_answers_its_query_alone():
    run = {"q1": [("hub", 0.85), ("answer", 0.8)]}
    hubs = sick_hubness.hubness(OWN, 3)
    assert [p for p, _ in sick_hubness.rerank(run, hubs, 0.0)["q1"]] == ["hub", "answer"]
    reranked = sick_hubness.rerank(run, hubs, 0.5)["q1"]
    assert [p for p, _ in reranked] == ["answer", "hub"]
    assert reranked[0][1] == pytest.approx(0.8 - 0.5 * 0.6) and reranked[1][1] == pytest.approx(0.85 - 0.5 * 0.9)
