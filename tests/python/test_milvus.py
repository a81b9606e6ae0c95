"""counterpoint.milvus on Milvus Lite: an Index exported into a collection gives the same
contradiction hits and scores through MilvusRetriever as the in-process flat Index (bundled example
corpus and SICK dev, float32 and float16 Es), an interrupted export resumes without duplicates, a
new process reopens the collection and gets the same results, 8 threads search as one does, and
wrong encoders, widths and collections are refused by name."""
import json
import os
import pathlib
import subprocess
import sys
import threading

import numpy as np
import pytest

pytest.importorskip("pymilvus", reason="counterpoint.milvus needs pymilvus + milvus-lite (./setup.sh installs them)")
pytest.importorskip("milvus_lite", reason="Milvus Lite is not installed (./setup.sh installs it)")

import counterpoint as cp  # noqa: E402
import counterpoint.milvus as cpm  # noqa: E402
from pymilvus import DataType, MilvusClient  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = pathlib.Path(os.environ.get("COUNTERPOINT_MODELS", ROOT / "models" / "installed"))
from conftest import BERT_TINY  # noqa: E402  (the committed tiny BERT)
SICK = pathlib.Path(os.environ.get("COUNTERPOINT_DATA", ROOT.parent / "shared" / "data")) / "sick"
REQUIRED = os.environ.get("COUNTERPOINT_REQUIRE_MODELS") == "1"
TEXTS = ["the cat sleeps", "the cat never sleeps", "a dog barks", "dogs never bark", "rain falls today",
         "no rain falls today", "the market rose", "the market fell", "he plays guitar", "he does not play guitar",
         "she eats food", "she is not eating", "birds can fly", "penguins cannot fly"]
IDS = [f"t{i:02d}" for i in range(len(TEXTS))]


def default_models():
    if not (MODELS / "sparse-default" / "manifest.json").exists():
        if REQUIRED:
            pytest.fail(f"default models missing under {MODELS}")
        pytest.skip("the default models are not installed")
    return cp.Encoder.load(str(MODELS / "all-minilm-l6-v2"), threads=2), cp.Encoder.load(
        str(MODELS / "sparse-default"), threads=2)


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    database = tmp_path_factory.mktemp("milvus") / "counterpoint.db"
    milvus = MilvusClient(str(database))
    yield milvus
    milvus.close()


@pytest.fixture(scope="module")
def tiny():
    return cp.Encoder.load(str(BERT_TINY), threads=1)


@pytest.fixture(scope="module")
def tiny_index(tiny):
    return cp.Index.build(TEXTS, IDS, encoder=tiny, sparse_encoder=tiny)


def assert_same_hits(expected, got, score_tolerance=1e-5):
    """Ids equal up to ties (scores within 1e-6 may swap), every score component within tolerance;
    the same SearchResults as Index.search's: depth, alpha, gate, scoring line and stance readings."""
    assert type(got) is cp.SearchResults
    assert (got.k, got.candidates, got.alpha, got.sparsity_scale, got.scoring) == \
        (expected.k, expected.candidates, expected.alpha, expected.sparsity_scale, expected.scoring)
    assert [r.describe() for r in got.stances] == [r.describe() for r in expected.stances]
    assert got.scores.shape == expected.scores.shape
    assert len(expected) == len(got)
    for want, have in zip(expected, got):
        assert len(want) == len(have)
        scores = {h.id: h for h in have}
        for rank, (w, h) in enumerate(zip(want, have)):
            if w.id != h.id:
                assert abs(w.score - h.score) <= 1e-6, (rank, w, h)
            assert w.id in scores or abs(w.score - want[-1].score) <= 1e-6, (rank, w)
            assert abs(w.score - h.score) <= score_tolerance, (rank, w, h)
            assert abs(w.cosine - h.cosine) <= score_tolerance, (rank, w, h)
            assert abs(w.sparsity - h.sparsity) <= score_tolerance, (rank, w, h)


def count(client, collection):
    return int(client.query(collection, filter="", output_fields=["count(*)"])[0]["count(*)"])


@pytest.mark.parametrize("fp16", [False, True])
def test_the_example_corpus_gives_the_in_process_hits_and_scores(client, fp16):
    encoder, sparse = default_models()
    dataset = cp.load_beir(str(ROOT / "examples" / "corpus"))
    index = cp.Index.build([d.text for d in dataset.corpus], [d.id for d in dataset.corpus], encoder=encoder,
                           sparse_encoder=sparse, fp16=fp16)
    collection = f"example_fp16_{fp16}".lower()
    assert cpm.export(index, client, collection, progress=False) == len(index)
    retriever = cpm.MilvusRetriever(client, collection, encoder=encoder, sparse_encoder=sparse)
    assert retriever.info.sparse_dtype == ("float16" if fp16 else "float32")
    assert retriever.sparse_fetch == ("get" if fp16 else "output")
    queries = [q.text for q in dataset.queries]
    for scorer, alpha in (("cosine", None), ("hoyer", 2.0)):
        expected = index.search(queries, k=5, candidates=30, scorer=scorer, alpha=alpha)
        assert_same_hits(expected, retriever.search(queries, k=5, candidates=30, scorer=scorer, alpha=alpha))
    # No alpha: the sparse encoder's recorded one, as Index.search.
    assert_same_hits(index.search(queries[:2], k=3, scorer="hoyer"), retriever.search(queries[:2], k=3, scorer="hoyer"))
    # Hits carry their passage, as in-process hits do.
    texts = {d.id: d.text for d in dataset.corpus}
    for hit in retriever.search(queries[:2], k=3, scorer="hoyer")[0]:
        assert hit.text == texts[hit.id] != ""


def test_sick_dev_gives_the_in_process_hits_and_scores(client):
    if not (SICK / "qrels" / "dev.tsv").exists():
        pytest.skip(f"SICK is not on this machine ({SICK}; set COUNTERPOINT_DATA to the data folder)")
    encoder, sparse = default_models()
    dataset = cp.load_beir(str(SICK))
    index = cp.Index.build([d.text for d in dataset.corpus], [d.id for d in dataset.corpus], encoder=encoder,
                           sparse_encoder=sparse)
    cpm.export(index, client, "sick", batch_size=2000, progress=False)
    dev = cp.load_qrels(str(SICK / "qrels" / "dev.tsv"))
    texts = {q.id: q.text for q in dataset.queries}
    query_ids = sorted(dev)[:100]
    E, Es = encoder.encode_both(sparse, [texts[q] for q in query_ids], query=True)
    retriever = cpm.MilvusRetriever(client, "sick", encoder=encoder, sparse_encoder=sparse)
    exclude = [[q] for q in query_ids]
    expected = index.search(E, sparse_queries=Es, k=10, candidates=100, scorer="hoyer", alpha=1.5, exclude=exclude)
    got = retriever.search(E, sparse_queries=Es, k=10, candidates=100, scorer="hoyer", alpha=1.5, exclude=exclude)
    assert_same_hits(expected, got)
    assert all(q not in [h.id for h in hits] for q, hits in zip(query_ids, got))


class InterruptedAfter:
    """The client, but Ctrl-C arrives instead of the insert after `inserts` of them went through."""

    def __init__(self, client, inserts):
        self.client, self.inserts = client, inserts

    def insert(self, *args, **kwargs):
        if self.inserts == 0:
            raise KeyboardInterrupt("interrupted during export")
        self.inserts -= 1
        return self.client.insert(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.client, name)


def test_an_interrupted_export_resumes_without_duplicates(client, tiny, tiny_index):
    with pytest.raises(KeyboardInterrupt):
        cpm.export(tiny_index, InterruptedAfter(client, 2), "resumed", batch_size=4, progress=False)
    assert count(client, "resumed") == 8
    # A batch that reached Milvus only in part before the process died.
    client.insert("resumed", cpm._entities(tiny_index, IDS[8:10], cpm._info_of_index(tiny_index, None)))
    assert cpm.export(tiny_index, client, "resumed", batch_size=4, progress=False) == len(IDS) - 10
    assert count(client, "resumed") == len(IDS)
    stored = client.query("resumed", filter="", output_fields=["id"], limit=100)
    assert sorted(row["id"] for row in stored) == IDS
    assert cpm.export(tiny_index, client, "resumed", batch_size=4, progress=False) == 0  # nothing left to do
    retriever = cpm.MilvusRetriever(client, "resumed", encoder=tiny, sparse_encoder=tiny)
    assert_same_hits(tiny_index.search(TEXTS, k=4, scorer="hoyer", alpha=1.0),
                     retriever.search(TEXTS, k=4, scorer="hoyer", alpha=1.0))


REOPEN_SCRIPT = """
import json, sys, counterpoint as cp, counterpoint.milvus as cpm
from pymilvus import MilvusClient
database, mode, texts, ids = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
tiny = cp.Encoder.load(sys.argv[5], threads=1)
client = MilvusClient(database)
if mode == "export":
    cpm.export(cp.Index.build(texts, ids, encoder=tiny, sparse_encoder=tiny), client, "docs", progress=False)
retriever = cpm.MilvusRetriever(client, "docs", encoder=tiny, sparse_encoder=tiny)
hits = retriever.search(texts[:5], k=3, scorer="hoyer", alpha=1.0)
print(json.dumps([[(h.id, h.score) for h in q] for q in hits]))
"""


def test_a_new_process_reopens_the_collection_and_gets_the_same_results(tmp_path):
    database = tmp_path / "reopen.db"

    def run(mode):
        result = subprocess.run([sys.executable, "-c", REOPEN_SCRIPT, str(database), mode, json.dumps(TEXTS),
                                 json.dumps(IDS), str(BERT_TINY)], capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout.strip().splitlines()[-1])

    exported = run("export")  # this process exits, and Milvus Lite with it
    assert len(exported) == 5 and all(len(hits) == 3 for hits in exported)
    assert run("search") == exported


def test_the_module_entry_point_exports_a_saved_index_and_searches_it(tmp_path, tiny_index):
    tiny_index.save(str(tmp_path / "index"))
    common = ["--uri", str(tmp_path / "entry.db"), "--collection", "docs", "--model", str(BERT_TINY),
              "--sparse-model", str(BERT_TINY), "--threads", "1"]

    def run(*args):
        result = subprocess.run([sys.executable, "-m", "counterpoint.milvus", *args], capture_output=True, text=True,
                                timeout=300)
        assert result.returncode == 0, result.stderr
        return result.stdout

    assert "exported 14 documents into 'docs' (14 in the index)" in run("export", *common, "--index",
                                                                         str(tmp_path / "index"))
    out = run("search", *common, "--scorer", "hoyer", "--alpha", "1", "-k", "2", "the cat sleeps")
    expected = tiny_index.search(["the cat sleeps"], k=2, scorer="hoyer", alpha=1.0)
    # The scoring line of `counterpoint search` and Index.search, not one of its own.
    assert out.startswith(expected.scoring + "\n") and expected.scoring == "scorer sparsity (hoyer), alpha 1 (given)"
    expected = expected[0]
    assert f"   1. {expected[0].id}  score {expected[0].score:.4f}" in out
    refused = subprocess.run([sys.executable, "-m", "counterpoint.milvus", "search", *common[:3], "elsewhere",
                              *common[4:], "x"], capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and "Milvus has no collection 'elsewhere'" in refused.stderr
    typo = subprocess.run([sys.executable, "-m", "counterpoint.milvus", "search", *common, "--scorer", "hoyre", "x"],
                          capture_output=True, text=True, timeout=300)
    assert typo.returncode == 2 and typo.stdout == "" and "unknown scorer 'hoyre'" in typo.stderr, typo


def test_the_module_entry_point_runs_from_any_directory_and_answers_a_missing_model_without_a_traceback(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "COUNTERPOINT_MODELS"}
    result = subprocess.run([sys.executable, "-m", "counterpoint.milvus", "search", "--uri", str(tmp_path / "x.db"),
                             "--collection", "docs", "--model", "no-such-model", "query"], capture_output=True,
                            text=True, timeout=300, cwd=tmp_path, env=env)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("error: model 'no-such-model' not found")


def test_an_unusable_uri_is_an_error_line_not_a_milvus_traceback(tmp_path):
    missing = tmp_path / "no-such-folder" / "x.db"
    result = subprocess.run([sys.executable, "-m", "counterpoint.milvus", "search", "--uri", str(missing),
                             "--collection", "docs", "--model", str(BERT_TINY), "query"], capture_output=True,
                            text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert f"error: cannot open Milvus at {missing}: Open local milvus failed" in result.stderr


def test_a_milvus_lite_file_another_process_holds_is_named_as_such(tmp_path, tiny_index):
    holder = MilvusClient(str(tmp_path / "held.db"))  # this process holds the file, as a running export would
    try:
        tiny_index.save(str(tmp_path / "index"))
        result = subprocess.run([sys.executable, "-m", "counterpoint.milvus", "export", "--uri",
                                 str(tmp_path / "held.db"), "--collection", "docs", "--model", str(BERT_TINY),
                                 "--sparse-model", str(BERT_TINY), "--index", str(tmp_path / "index")],
                                capture_output=True, text=True, timeout=300, cwd=tmp_path)
    finally:
        holder.close()
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "another process has this Milvus Lite file open" in result.stderr


def test_a_stance_query_ranks_as_index_search_ranks_it(client, tiny, tiny_index):
    """The instruction signs the sparsity term and Es reads the claim alone, as in Index.search."""
    cpm.export(tiny_index, client, "stance", progress=False)
    retriever = cpm.MilvusRetriever(client, "stance", encoder=tiny, sparse_encoder=tiny)
    queries = ["Show me a point that backs this up: the cat sleeps", "Show me a point that refutes this: the cat sleeps",
               "the cat sleeps"]
    for stance in ("from-query", "support"):
        expected = tiny_index.search(queries, k=6, scorer="hoyer", alpha=1.0, stance=stance)
        assert_same_hits(expected, retriever.search(queries, k=6, scorer="hoyer", alpha=1.0, stance=stance))
    readings = tiny_index.search(queries, k=6, scorer="hoyer", alpha=1.0).stances
    assert [r.stance for r in readings] == ["support", "attack", "attack"]
    with pytest.raises(ValueError, match="unknown stance"):
        retriever.search(queries, scorer="hoyer", alpha=1.0, stance="pro")


def test_eight_threads_search_as_one_does(client, tiny, tiny_index):
    cpm.export(tiny_index, client, "threads", progress=False)
    retriever = cpm.MilvusRetriever(client, "threads", encoder=tiny, sparse_encoder=tiny)
    E, Es = tiny.encode_both(tiny, TEXTS, query=True)
    serial = [retriever.search(E[i:i + 1], sparse_queries=Es[i:i + 1], k=5, scorer="hoyer", alpha=1.0)[0]
              for i in range(len(TEXTS))]
    results, errors = {}, []

    def work(worker):
        try:
            for i in range(worker, len(TEXTS), 8):
                results[i] = retriever.search(E[i:i + 1], sparse_queries=Es[i:i + 1], k=5, scorer="hoyer",
                                              alpha=1.0)[0]
        except Exception as error:  # re-raised below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert [[(h.id, h.score) for h in results[i]] for i in range(len(TEXTS))] == \
        [[(h.id, h.score) for h in hits] for hits in serial]


def tiny_with_manifest(tmp_path, **changes):
    """The tiny model with `changes` made to its manifest (its files, and their checksums, untouched)."""
    import shutil
    copy = tmp_path / "-".join(f"{k}-{v}" for k, v in changes.items())
    shutil.copytree(BERT_TINY, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest.update(changes)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    return cp.Encoder.load(str(copy), threads=1)


def test_a_collection_recorded_before_the_settings_keeps_working_with_its_model(client, tiny, tiny_index,
                                                                               monkeypatch, tmp_path):
    """Its identity "name@weights" (no settings) is recomputed from the model: searches and exports go on."""
    import dataclasses
    old_identity = tiny.identity.split("#")[0]
    info_of_index = cpm._info_of_index
    monkeypatch.setattr(cpm, "_info_of_index", lambda index, dtype: dataclasses.replace(
        info_of_index(index, dtype), encoder_id=old_identity, sparse_encoder_id=old_identity, encoder_settings="",
        sparse_encoder_settings=""))
    cpm.export(tiny_index, client, "old_format", progress=False)
    monkeypatch.undo()
    assert cpm.CollectionInfo.of_collection(client, "old_format").encoder_id == old_identity
    cpm.export(tiny_index, client, "old_format", progress=False)  # the same rows: nothing added
    assert count(client, "old_format") == len(IDS)
    retriever = cpm.MilvusRetriever(client, "old_format", encoder=tiny, sparse_encoder=tiny)
    assert retriever.search(["the cat sleeps"], k=1, scorer="cosine")[0][0].id == "t00"
    # As Index.search: cosine has no sparsity term for a stance or alpha to shape.
    for setting in ({"stance": "support"}, {"alpha": 2.0}, {"guard": False}):
        with pytest.raises(ValueError, match="scorer 'cosine' has no sparsity term"):
            retriever.search(["the cat sleeps"], k=1, scorer="cosine", **setting)
    with pytest.raises(ValueError, match="collection 'old_format' was built with model bert-tiny-random, not "
                                         "bert-tiny-renamed"):
        cpm.MilvusRetriever(client, "old_format", encoder=tiny_with_manifest(tmp_path, name="bert-tiny-renamed"))


def test_a_collection_names_the_setting_a_model_reads_differently(client, tiny, tiny_index, tmp_path):
    cpm.export(tiny_index, client, "settings", progress=False)
    assert json.loads(cpm.CollectionInfo.of_collection(client, "settings").encoder_settings)["pooling"] == "cls"
    with pytest.raises(ValueError, match="collection 'settings' was built with pooling cls; model bert-tiny-random "
                                         "pools mean"):
        cpm.MilvusRetriever(client, "settings", encoder=tiny_with_manifest(tmp_path, pooling="mean"))


def test_other_encoders_widths_and_collections_are_refused_by_name(client, tiny, tiny_index):
    cpm.export(tiny_index, client, "refusals", progress=False)
    encoder, sparse = default_models()
    with pytest.raises(ValueError, match="is not the model collection 'refusals' was made with") as refused:
        cpm.MilvusRetriever(client, "refusals", encoder=encoder)
    assert encoder.identity in str(refused.value) and tiny.identity in str(refused.value)
    other = cp.Index.build(TEXTS, IDS, encoder=encoder, sparse_encoder=sparse)
    with pytest.raises(ValueError, match="holds rows with encoder_id"):
        cpm.export(other, client, "refusals", progress=False)
    with pytest.raises(ValueError, match="holds rows with sparse_dtype"):
        cpm.export(tiny_index, client, "refusals", sparse_dtype="float16", progress=False)
    with pytest.raises(ValueError, match="Milvus has no collection 'nowhere'"):
        cpm.MilvusRetriever(client, "nowhere", encoder=tiny)
    retriever = cpm.MilvusRetriever(client, "refusals", encoder=tiny, sparse_encoder=tiny)
    with pytest.raises(ValueError, match=r"query vectors must be \(n, "):
        retriever.search(np.ones((1, tiny.dim + 1), dtype=np.float32))
    with pytest.raises(ValueError, match=r"sparse_queries must be"):
        retriever.search(np.ones((1, tiny.dim), dtype=np.float32), sparse_queries=np.ones((1, 3)), scorer="hoyer")
    with pytest.raises(ValueError, match="candidates"):
        retriever.search(["x"], k=10, candidates=5)
    with pytest.raises(TypeError, match="not one str"):
        retriever.search("the cat sleeps")
    with pytest.raises(ValueError, match="unknown scorer"):
        retriever.search(["x"], scorer="bm25")

    schema = client.create_schema(auto_id=False)
    schema.add_field("pk", DataType.INT64, is_primary=True)
    schema.add_field("v", DataType.FLOAT_VECTOR, dim=4)
    indexes = client.prepare_index_params()
    indexes.add_index("v", index_type="FLAT", metric_type="COSINE")
    client.create_collection("foreign", schema=schema, index_params=indexes)
    with pytest.raises(ValueError, match="was not written by counterpoint.milvus"):
        cpm.MilvusRetriever(client, "foreign", encoder=tiny)

    # A description of the right format but damaged: named as such, not a KeyError or int()'s ValueError.
    for name, record, says in (("lacking", {"format": cpm.FORMAT, "dim": 4}, "it lacks 'encoder_id'"),
                               ("mistyped", {"format": cpm.FORMAT, "encoder_id": "x", "sparse_encoder_id": "",
                                             "dim": "four", "sparse_dim": 0, "sparse_dtype": None},
                                "it has a field of the wrong type")):
        schema = client.create_schema(auto_id=False, description=json.dumps(record))
        schema.add_field("pk", DataType.INT64, is_primary=True)
        schema.add_field("v", DataType.FLOAT_VECTOR, dim=4)
        client.create_collection(name, schema=schema, index_params=indexes)
        with pytest.raises(ValueError, match=f"collection '{name}' has a damaged .* description: {says}"):
            cpm.MilvusRetriever(client, name, encoder=tiny)


def test_final_scores_reads_float16_rows_as_the_index_scores_them(tiny_index):
    E, Es = tiny_index.encoder.encode_both(tiny_index.sparse_encoder, TEXTS[:1], query=True)
    rows = tiny_index.sparse_embeddings(IDS)
    assert rows.dtype == np.float32 and rows.shape == (len(IDS), tiny_index.sparse_dim)
    cosine = (tiny_index.embeddings(IDS) @ (E[0] / np.linalg.norm(E[0]))).astype(np.float32)
    scores, sparsity = cp.final_scores(cosine, Es[0], rows, alpha=2.0)
    np.testing.assert_allclose(sparsity, cp.hoyer(Es[0], rows, guard=True), atol=1e-6)
    np.testing.assert_allclose(scores, cosine + 2.0 * sparsity, atol=1e-6)
    half_scores, half_sparsity = cp.final_scores(cosine, Es[0], rows.astype(np.float16), alpha=2.0)
    finite = sparsity > -1  # the guarded query itself scores -1e9 either way
    np.testing.assert_allclose(half_sparsity[finite], sparsity[finite], atol=2e-3)
    with pytest.raises(ValueError, match=r"^sparse_candidates has 3 rows for 14 candidates"):
        cp.final_scores(cosine, Es[0], rows[:3], alpha=1.0)
    with pytest.raises(ValueError, match=r"^sparse_query has 5 values but the sparse_candidates rows have "):
        cp.final_scores(cosine, Es[0][:5], rows, alpha=1.0)
