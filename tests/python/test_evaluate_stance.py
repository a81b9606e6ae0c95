"""counterpoint.evaluate_stance on small hand-computed cases: P@R, Hard@R, Semi@R, Easy@R (shares of
R, R = the query's positives among the labelled documents) and nDCG@10 with binary gains, as
`counterpoint stance` reports them (src/eval/stance.cpp). Figures are compared exactly: the shares
are binary fractions, and each nDCG@10 below adds the same 1/log2 terms in the library's order."""
import math
import pathlib
import sys

import pytest

try:
    import counterpoint as cp
except ImportError:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
    import counterpoint as cp

# Two topics, two claims of each stance on each: every query has R = 2.
DOCUMENTS = {"a1": ("A", "pro"), "a2": ("A", "pro"), "a3": ("A", "con"), "a4": ("A", "con"),
             "b1": ("B", "pro"), "b2": ("B", "pro"), "b3": ("B", "con"), "b4": ("B", "con")}
QUERIES = {"qA-pro": ("A", "pro"), "qB-con": ("B", "con")}
RUN = {
    # hard, positive | semi-hard, easy, positive: top R = one hard, one positive.
    "qA-pro": {"a3": 0.9, "a1": 0.8, "b1": 0.7, "b3": 0.6, "a2": 0.5},
    # easy, semi-hard | positive, hard: top R = one easy, one semi-hard.
    "qB-con": [("a1", 0.9), ("a3", 0.8), ("b4", 0.7), ("b1", 0.1)],
}
IDEAL_DCG = 1 + 1 / math.log2(3)  # R = 2 positives at ranks 1 and 2
A_PRO = {"P@R": 0.5, "Hard@R": 0.5, "Semi@R": 0.0, "Easy@R": 0.0,
         "nDCG@10": (1 / math.log2(3) + 1 / math.log2(6)) / IDEAL_DCG}  # positives at ranks 2 and 5
B_CON = {"P@R": 0.0, "Hard@R": 0.0, "Semi@R": 0.5, "Easy@R": 0.5,
         "nDCG@10": (1 / math.log2(4)) / IDEAL_DCG}  # its one ranked positive at rank 3
ZERO = {"P@R": 0.0, "Hard@R": 0.0, "Semi@R": 0.0, "Easy@R": 0.0, "nDCG@10": 0.0}


def mean(*per_query):
    return {m: sum(q[m] for q in per_query) / len(per_query) for m in per_query[0]}


def test_classes_in_the_top_r_and_ndcg_at_10_by_hand():
    result = cp.evaluate_stance(RUN, QUERIES, DOCUMENTS)
    assert list(result) == ["P@R", "Hard@R", "Semi@R", "Easy@R", "nDCG@10"]
    assert result == {"P@R": 0.25, "Hard@R": 0.25, "Semi@R": 0.25, "Easy@R": 0.25,
                      "nDCG@10": (A_PRO["nDCG@10"] + B_CON["nDCG@10"]) / 2}


def test_per_query_gives_each_query_its_own_figures():
    assert cp.evaluate_stance(RUN, QUERIES, DOCUMENTS, per_query=True) == {"qA-pro": A_PRO, "qB-con": B_CON}


def test_a_labelled_query_without_a_ranking_scores_zero_and_counts_in_the_mean():
    queries = dict(QUERIES, **{"qA-con": ("A", "con")})
    assert cp.evaluate_stance(RUN, queries, DOCUMENTS, per_query=True)["qA-con"] == ZERO
    assert cp.evaluate_stance(RUN, queries, DOCUMENTS) == mean(A_PRO, B_CON, ZERO)
    # so does one whose topic has no claim of its stance (R = 0), ranked or not
    no_positives = {"qC-pro": ("C", "pro")}
    assert cp.evaluate_stance({"qC-pro": {"a1": 0.9}}, no_positives, DOCUMENTS) == ZERO


def test_the_ranking_is_by_score_whatever_order_the_run_lists_it_in():
    shuffled = {"qA-pro": [("a2", 0.5), ("b1", 0.7), ("a1", 0.8), ("b3", 0.6), ("a3", 0.9)]}
    assert cp.evaluate_stance(shuffled, {"qA-pro": ("A", "pro")}, DOCUMENTS) == A_PRO
    # Tied scores rank as trec_eval ranks them: document id descending, so a3 (hard) precedes a1.
    tied = {"qA-pro": {"a1": 0.8, "a3": 0.8}}
    assert cp.evaluate_stance(tied, {"qA-pro": ("A", "pro")}, DOCUMENTS, per_query=True)["qA-pro"] == (
        {"P@R": 0.5, "Hard@R": 0.5, "Semi@R": 0.0, "Easy@R": 0.0, "nDCG@10": (1 / math.log2(3)) / IDEAL_DCG})


def test_support_and_attack_are_pro_and_con_in_either_label_shape():
    # metadata.jsonl's dict shape and the IBM set's words for the stances, in any case
    documents = {"a1": {"topic_id": "A", "stance": "support"}, "a2": {"topic_id": "A", "stance": "Supporting"},
                 "a3": ("A", "attack"), "a4": ("A", "ATTACKING"), "b1": ("B", "support"), "b2": ("B", "pro"),
                 "b3": {"topic_id": "B", "stance": "contest"}, "b4": ("B", "attack")}
    queries = {"qA-pro": {"topic_id": "A", "stance": "support"}, "qB-con": ("B", "attack")}
    assert cp.evaluate_stance(RUN, queries, documents, per_query=True) == {"qA-pro": A_PRO, "qB-con": B_CON}


def test_an_unlabelled_ranked_document_is_refused_by_name():
    run = {"qA-pro": {"a1": 0.9, "stray": 0.8}}
    with pytest.raises(ValueError, match='document "stray" ranked for query "qA-pro" has no stance label'):
        cp.evaluate_stance(run, QUERIES, DOCUMENTS)


def test_an_unknown_stance_is_refused_by_id():
    with pytest.raises(ValueError, match=r'document_labels\[a1\]: unknown stance "neutral"'):
        cp.evaluate_stance(RUN, QUERIES, dict(DOCUMENTS, a1=("A", "neutral")))


@pytest.mark.parametrize("label", ["A pro", ("A", "pro", "extra"), {"topic": "A", "stance": "pro"}, 7])
def test_a_label_of_the_wrong_shape_is_a_type_error(label):
    with pytest.raises(TypeError, match=r"document_labels\[a1\] must be \(topic, stance\) or a dict with topic_id "
                                        r"and stance"):
        cp.evaluate_stance(RUN, QUERIES, dict(DOCUMENTS, a1=label))
    with pytest.raises(TypeError, match=r"query_labels\[qA-pro\] must be"):
        cp.evaluate_stance(RUN, dict(QUERIES, **{"qA-pro": label}), DOCUMENTS)


def test_labels_that_are_not_a_dict_are_a_type_error():
    with pytest.raises(TypeError, match=r"query_labels must be a dict \{id: \(topic, stance\)\}"):
        cp.evaluate_stance(RUN, [("A", "pro")], DOCUMENTS)
