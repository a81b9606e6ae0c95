"""counterpoint.load_beir / load_qrels / evaluate / tune_alpha, and the plot helpers."""
import math
import pathlib
import sys

import numpy as np
import pytest

try:
    import counterpoint as cp
except ImportError:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
    import counterpoint as cp

REPO = pathlib.Path(__file__).resolve().parents[2]
BEIR_MINI = REPO / "tests" / "fixtures" / "data" / "beir_mini"


def test_load_beir_reads_corpus_queries_and_splits():
    ds = cp.load_beir(BEIR_MINI)
    assert [d.id for d in ds.corpus] == ["d1", "d2", "3"]
    assert ds.corpus[0].title == "Cats" and ds.corpus[0].text == "Cats purr."
    assert ds.corpus[0].encoding_text == "Cats Cats purr."
    assert ds.corpus[1].encoding_text == "Dogs bark."
    assert [q.id for q in ds.queries] == ["q1", "q2"]
    assert ds.queries[0].extra == {"topic_id": "7", "stance": "support"}
    assert ds.splits == ["dev", "train"]
    assert ds.qrels("dev") == {"q1": {"d1": 2, "3": 0}, "q2": {"d2": 1}}


def test_load_beir_warns_when_the_judgements_are_not_under_qrels_and_refuses_an_empty_corpus(tmp_path, capfd):
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d1", "text": "Cats purr."}\n')
    (tmp_path / "queries.jsonl").write_text('{"_id": "q1", "text": "Do cats purr?"}\n')
    (tmp_path / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    assert cp.load_beir(tmp_path).splits == []
    assert capfd.readouterr().err == (f"counterpoint: warning: {tmp_path} has no judgements: BEIR keeps them in "
                                      f"{tmp_path}/qrels/<split>.tsv; move test.tsv there\n")
    (tmp_path / "corpus.jsonl").write_text("")
    with pytest.raises(ValueError, match="corpus .*corpus.jsonl holds no documents"):
        cp.load_beir(tmp_path)


def test_load_corpus_and_load_queries_read_every_format_the_cli_reads(tmp_path):
    (tmp_path / "corpus.csv").write_text('id,text,title\nd1,"Water boils, at 100 C.",Water\nd2,Ice floats.,\n')
    (tmp_path / "corpus.txt").write_text("First line.\n\nThird line.\n")
    (tmp_path / "queries.tsv").write_text("qid\tquery\nq7\tDoes ice float?\n")
    documents = cp.load_corpus(tmp_path / "corpus.csv")
    assert [(d.id, d.title, d.text) for d in documents] == [("d1", "Water", "Water boils, at 100 C."),
                                                          ("d2", "", "Ice floats.")]
    assert [(d.id, d.text) for d in cp.load_corpus(tmp_path / "corpus.txt")] == [("1", "First line."),
                                                                              ("3", "Third line.")]
    assert [d.id for d in cp.load_corpus(BEIR_MINI)] == ["d1", "d2", "3"]  # a BEIR folder: its corpus.jsonl
    assert [(q.id, q.text) for q in cp.load_queries(tmp_path / "queries.tsv")] == [("q7", "Does ice float?")]
    (tmp_path / "both.csv").write_text("id,text,query\nd1,Water boils.,what boils\n")
    with pytest.raises(cp.CorruptFileError, match=r"both.csv:1: the header names 2 text columns \(text, query\)"):
        cp.load_corpus(tmp_path / "both.csv")
    with pytest.raises(ValueError, match="corpus.csv is a file; a BEIR dataset is a folder"):
        cp.load_beir(tmp_path / "corpus.csv")


def test_load_qrels_and_missing_files(tmp_path):
    assert cp.load_qrels(BEIR_MINI / "qrels" / "train.tsv") == {"q2": {"d2": 1}}
    with pytest.raises(FileNotFoundError):
        cp.load_qrels(tmp_path / "absent.tsv")
    with pytest.raises(FileNotFoundError):
        cp.load_beir(tmp_path)
    bad = tmp_path / "bad.tsv"
    bad.write_text("query-id\tcorpus-id\tscore\nq1\td1\tnot-a-number\n")
    with pytest.raises(cp.CorruptFileError):
        cp.load_qrels(bad)


QRELS = {"q1": {"d1": 2, "3": 0}, "q2": {"d2": 1}}


def test_evaluate_scores_like_trec_eval():
    run = {"q1": {"3": 0.9, "d1": 0.5}, "q2": {"d2": 0.7}}
    # q1: grade 2 at rank 2 -> (2 / log2(3)) / 2; q2: perfect.
    q1 = 1 / math.log2(3)
    result = cp.evaluate(run, QRELS, ["ndcg@10", "mrr@10"])
    assert result["ndcg@10"] == pytest.approx((q1 + 1) / 2)
    assert result["mrr@10"] == pytest.approx((0.5 + 1) / 2)
    as_pairs = {"q1": [("3", 0.9), ("d1", 0.5)], "q2": [("d2", 0.7)]}
    assert cp.evaluate(as_pairs, QRELS, ["ndcg@10"]) == {"ndcg@10": result["ndcg@10"]}
    per_query = cp.evaluate(run, QRELS, ["ndcg@10"], per_query=True)
    assert per_query["q1"]["ndcg@10"] == pytest.approx(q1) and per_query["q2"]["ndcg@10"] == 1.0


def test_evaluate_rejects_bad_input():
    with pytest.raises(ValueError):
        cp.evaluate({}, QRELS, ["bleu@10"])
    with pytest.raises(ValueError):
        cp.evaluate({"q1": {"d1": float("nan")}}, QRELS)
    with pytest.raises(TypeError, match="run must be a dict"):
        cp.evaluate([("q1", "d1")], QRELS)
    with pytest.raises(TypeError, match="must be an int grade"):
        cp.evaluate({}, {"q1": {"d1": "high"}})


def test_hits_to_run_feeds_evaluate():
    class FakeHit:
        def __init__(self, id, score):
            self.id, self.score = id, score
    run = cp.hits_to_run(["q2"], [[FakeHit("d2", 0.3)]])
    assert run == {"q2": [("d2", 0.3)]}
    with pytest.raises(ValueError):
        cp.hits_to_run(["q1", "q2"], [[]])
    with pytest.raises(ValueError, match=r"repeated: \['q'\]"):  # a dict would keep the last ranking only
        cp.hits_to_run(["q", "q"], [[FakeHit("d1", 0.5)], [FakeHit("d2", 0.3)]])


def test_evaluate_warns_of_unranked_queries_and_refuses_runs_it_cannot_score():
    with pytest.warns(UserWarning, match=r"1 of 2 judged queries have no ranking in the run \(scored 0\): q2"):
        assert cp.evaluate({"q1": {"d1": 1.0}}, {"q1": {"d1": 1}, "q2": {"d2": 1}}, ["acc@1"]) == {"acc@1": 0.5}
    with pytest.raises(ValueError, match="the run's query ids must be the qrels' ids"):
        cp.evaluate({"1": {"d1": 1.0}}, {"q1": {"d1": 1}}, ["acc@1"])
    with pytest.raises(ValueError, match="the qrels judge no query"):
        cp.evaluate({"q1": {"d1": 1.0}}, {}, ["acc@1"])


def test_tune_alpha_refuses_a_search_that_would_not_end():
    calls = []
    with pytest.raises(ValueError, match="1000001 times"):
        cp.tune_alpha(calls.append, method="grid", lo=0.0, hi=1.0, grid_step=1e-6)
    with pytest.raises(ValueError, match="at most 100000"):
        cp.tune_alpha(calls.append, bins=10 ** 9)
    assert calls == []


def test_tune_alpha_grid_and_interval():
    objective = lambda a: -(a - 3.3) ** 2
    grid = cp.tune_alpha(objective, method="grid", lo=0, hi=10, grid_step=0.1)
    assert grid["best_alpha"] == pytest.approx(3.3, abs=1e-9)
    assert len(grid["curve"]) == 101 and grid["curve"][0] == (0.0, pytest.approx(-10.89))
    interval = cp.tune_alpha(objective)
    assert abs(interval["best_alpha"] - 3.3) < 0.01
    assert interval["best_score"] == pytest.approx(objective(interval["best_alpha"]))
    assert interval["best_score"] == max(score for _, score in interval["curve"])


def test_tune_alpha_returns_the_best_point_and_reports_the_reference_edge():
    step = lambda a: 1.0 if a > 7.3 else 0.0  # the reference's left edge, 7.3, scores 0
    best = cp.tune_alpha(step)
    assert best["best_alpha"] == pytest.approx(7.5) and best["best_score"] == 1.0
    assert best["reference_alpha"] == pytest.approx(7.3) and best["reference_score"] == 0.0
    reference = cp.tune_alpha(step, method="reference")
    assert reference["best_alpha"] == pytest.approx(7.3) and reference["best_score"] == 0.0
    assert [a for a, _ in reference["curve"]] == [a for a, _ in best["curve"]]
    assert "reference_alpha" not in cp.tune_alpha(step, method="grid")


def test_tune_alpha_rejects_bad_settings_and_propagates_objective_errors():
    with pytest.raises(ValueError):
        cp.tune_alpha(lambda a: a, lo=1, hi=1)
    with pytest.raises(ValueError, match="method"):
        cp.tune_alpha(lambda a: a, method="random")
    with pytest.raises(ValueError):
        cp.tune_alpha(lambda a: float("nan"))

    class Boom(Exception):
        pass

    def explode(alpha):
        raise Boom("objective failed")

    with pytest.raises(Boom):
        cp.tune_alpha(explode)
    with pytest.raises(TypeError, match=r"objective\(0\.\d+\) returned str, not a number"):
        cp.tune_alpha(lambda a: "x")
    assert cp.tune_alpha(lambda a: np.float32(-abs(a - 2)), method="grid", lo=0, hi=4, grid_step=1)["best_alpha"] == 2


def test_a_qrels_grade_beyond_an_int_is_out_of_range_not_a_failed_cast():
    for grade in (2 ** 31, 2 ** 63, -(2 ** 31) - 1, 2 ** 70):
        with pytest.raises(ValueError, match=rf"qrels\[q\]\[d\] = {grade} is out of range"):
            cp.evaluate({"q": {"d": 1.0}}, {"q": {"d": grade}}, ["ndcg@10"])
    assert cp.evaluate({"q": {"d": 1.0}}, {"q": {"d": 2 ** 31 - 1}}, ["ndcg@10"])["ndcg@10"] == 1.0


def test_plots_draw_histograms_and_alpha_curves(tmp_path):
    pytest.importorskip("matplotlib")
    from counterpoint import plots
    figure = plots.score_histograms({"relevant": [0.1, 0.5, 0.7], "other": [0.0, 0.2]}, bins=5)
    assert len(figure.axes[0].patches) == 10
    figure.savefig(tmp_path / "histograms.png")
    result = cp.tune_alpha(lambda a: -(a - 2) ** 2, method="grid", lo=0, hi=4, grid_step=1)
    curve = plots.alpha_curve(result, metric="nDCG@10")
    assert curve.axes[0].get_ylabel() == "nDCG@10"
    curve.savefig(tmp_path / "alpha.png")
    assert (tmp_path / "alpha.png").stat().st_size > 0
    with pytest.raises(ValueError):
        plots.score_histograms({})
    with pytest.raises(ValueError):
        plots.score_histograms({"x": [float("nan")]})
    with pytest.raises(ValueError):
        plots.alpha_curve({"curve": [], "best_alpha": 0, "best_score": 0})


def test_every_public_name_is_documented():
    for name in cp.__all__:
        if name == "__version__":
            continue
        assert getattr(cp, name).__doc__, name
    doc = cp.Index.search.__doc__
    for argument in ("queries", "k:", "candidates", "scorer", "alpha", "stage1", "fusion:", "fusion_lambda",
                     "guard", "prefix", "exclude"):
        assert argument in doc, argument
