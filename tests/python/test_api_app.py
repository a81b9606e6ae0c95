"""counterpoint.run_beir / run_stance: the library's evaluation workflows from Python, the same
calls `counterpoint run` and `counterpoint stance` print, options checked before any model loads."""
import pathlib

import pytest

import counterpoint as cp

REPO = pathlib.Path(__file__).resolve().parents[2]
CORPUS = REPO / "examples" / "corpus"
QRELS = CORPUS / "qrels" / "contradictions.tsv"
from conftest import BERT_TINY  # noqa: E402  (the committed tiny BERT)


def test_run_beir_scores_the_run_it_writes_as_evaluate_scores_it(tmp_path):
    out = tmp_path / "run.trec"
    report = cp.run_beir(CORPUS, QRELS, model=str(BERT_TINY), metrics=["ndcg@10", "recall@5"], out=out, threads=1)
    # ndcg@10's 10 hits: the query's own id is dropped before they are kept, not counted among them.
    assert report["queries"] == 12 and report["k"] == 10 and report["scoring"] == "scorer cosine"
    run = {}
    for line in out.read_text().splitlines():
        query, _, doc, _, score, _ = line.split()
        run.setdefault(query, {})[doc] = float(score)
    assert cp.evaluate(run, cp.load_qrels(str(QRELS)), ["ndcg@10", "recall@5"]) == pytest.approx(report["metrics"])


def test_run_beir_tunes_alpha_and_reports_where_it_came_from(tmp_path):
    report = cp.run_beir(CORPUS, QRELS, model=str(BERT_TINY), sparse_model=str(BERT_TINY), scorer="hoyer",
                         metrics=["ndcg@10"], tune_alpha="grid", threads=1)
    assert report["alpha"]["description"].startswith(f"alpha {report['alpha']['value']:g} (tuned by the grid search")
    assert max(score for _, score in report["alpha_curve"]) == pytest.approx(report["metrics"]["ndcg@10"])


def test_run_beir_checks_its_options_before_loading_a_model(unloadable):
    with pytest.raises(cp.CorruptFileError):
        cp.run_beir(CORPUS, QRELS, model=unloadable)
    with pytest.raises(ValueError, match=r"Es \(sparse_model\)"):
        cp.run_beir(CORPUS, QRELS, model=unloadable, scorer="hoyer")
    with pytest.raises(ValueError, match="ndgc@10"):
        cp.run_beir(CORPUS, QRELS, model=unloadable, metrics=["ndgc@10"])
    with pytest.raises(ValueError, match=r"^tune_alpha needs a sparsity scorer"):  # the keyword, not --tune-alpha
        cp.run_beir(CORPUS, QRELS, model=unloadable, tune_alpha="grid")


def test_run_stance_names_a_missing_metadata_file(unloadable):
    with pytest.raises(FileNotFoundError, match="metadata.jsonl"):
        cp.run_stance(CORPUS, QRELS, model=unloadable)


CLAIMS = {"c0": ("b", "pro", "Boxing teaches discipline and self control."),
          "c1": ("b", "con", "Boxing causes lasting brain damage to fighters."),
          "c2": ("b", "pro", "Adults should be free to take risks with their own bodies."),
          "c3": ("b", "con", "Deaths in the ring show the sport is too dangerous."),
          "c4": ("u", "pro", "School uniforms reduce bullying over clothes."),
          "c5": ("u", "con", "Uniforms stifle the self expression of pupils.")}


@pytest.fixture
def claims(tmp_path):
    """A user's own claims with a topic and a stance each, in the layout `counterpoint stance` reads."""
    import json
    root = tmp_path / "claims"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "text": t}) + "\n" for i, (_, _, t) in CLAIMS.items()))
    (root / "metadata.jsonl").write_text(
        "".join(json.dumps({"_id": i, "topic_id": topic, "stance": s}) + "\n" for i, (topic, s, _) in CLAIMS.items()))
    topics = {"b": "Boxing should be allowed", "u": "Schools should require uniforms"}
    (root / "queries.jsonl").write_text("".join(
        json.dumps({"_id": f"{t}-{s}", "text": text, "topic_id": t, "stance": s}) + "\n"
        for t, text in topics.items() for s in ("support", "attack")))
    qrels = ["query-id\tcorpus-id\tscore"] + [
        f"{topic}-{'support' if s == 'pro' else 'attack'}\t{i}\t1" for i, (topic, s, _) in CLAIMS.items()]
    (root / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n")
    return root


def test_run_stance_with_es_signs_the_sparsity_term_by_each_querys_instruction(claims):
    qrels = claims / "qrels" / "test.tsv"
    plain = cp.run_stance(claims, qrels, model=str(BERT_TINY), threads=1)
    assert plain["scoring"] == "scorer cosine"
    staged = cp.run_stance(claims, qrels, model=str(BERT_TINY), sparse_model=str(BERT_TINY), scorer="hoyer",
                           alpha=0.0, threads=1)
    assert staged["scoring"] == "scorer sparsity (hoyer), alpha 0 (given)"
    assert staged["mean"] == pytest.approx(plain["mean"])  # alpha 0: the stance stage changes nothing
    weighted = cp.run_stance(claims, qrels, model=str(BERT_TINY), sparse_model=str(BERT_TINY), scorer="hoyer",
                             alpha=5.0, threads=1)
    assert weighted["mean"] != pytest.approx(plain["mean"])


def test_run_stance_checks_the_stance_stage_before_loading_a_model(claims, unloadable):
    qrels = claims / "qrels" / "test.tsv"
    # The refusal test_cli.py's run gives naming --sparse-model, in the keyword a Python caller typed.
    with pytest.raises(ValueError, match=r"needs a sparse-aware encoder Es \(sparse_model\)"):
        cp.run_stance(claims, qrels, model=unloadable, scorer="hoyer")
    with pytest.raises(ValueError, match="sparse_model is read by the sparsity scorers"):
        cp.run_stance(claims, qrels, model=unloadable, sparse_model=unloadable)
    with pytest.raises(ValueError, match="scorer 'maxsim' is not one of them"):
        cp.run_stance(claims, qrels, model=unloadable, scorer="maxsim")
