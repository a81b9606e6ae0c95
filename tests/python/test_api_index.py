"""counterpoint.Index: build, two-stage search with every scorer, add/remove, save/load round
trip, and the errors bad arguments and damaged files raise."""
import os
import pathlib
import sys
import warnings

import numpy as np
import pytest

try:
    import counterpoint as cp
except ImportError:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
    import counterpoint as cp

REPO = pathlib.Path(__file__).resolve().parents[2]
from conftest import BERT_TINY  # noqa: E402  (the committed tiny BERT)

TEXTS = [
    "The cat sat on the mat.",
    "Dogs bark at the mailman every morning.",
    "Stock markets fell sharply after the announcement.",
    "The weather today is sunny and warm.",
    "Cats purr when they are happy.",
    "Taxes should be raised to fund public schools.",
]
IDS = [f"d{i}" for i in range(len(TEXTS))]


@pytest.fixture(scope="module")
def index(encoder):
    return cp.Index.build(TEXTS, IDS, encoder=encoder, sparse_encoder=encoder, tokens=True)


def test_build_indexes_every_text(index):
    assert len(index) == 6
    assert "d3" in index and "d9" not in index
    assert index.text("d4") == TEXTS[4]
    assert index.kind == "flat" and index.dim == 32
    assert repr(index) == "Index(documents=6, kind='flat', dim=32, encoder='bert-tiny-random')"


def test_cosine_search_finds_a_document_by_its_own_text(index):
    hits = index.search([TEXTS[2], TEXTS[5]], k=3)
    assert len(hits) == 2 and all(len(h) == 3 for h in hits)
    assert hits[0][0].id == "d2" and hits[1][0].id == "d5"
    top = hits[0][0]
    assert top.score == pytest.approx(1.0, abs=1e-4) and top.cosine == pytest.approx(top.score)
    assert top.stage1 == pytest.approx(top.cosine, abs=1e-5)
    assert top.sparsity == 0.0 and top.bm25 == 0.0 and top.token == 0.0
    assert [h.score for h in hits[0]] == sorted([h.score for h in hits[0]], reverse=True)
    assert repr(top).startswith("Hit(id='d2', score=1.0000, cosine=1.0000, sparsity=0.0000")


def test_sparsity_scorer_combines_cosine_and_sparsity(index):
    hits = index.search([TEXTS[0]], k=6, scorer="hoyer", alpha=0.5, guard=False)[0]
    for hit in hits:
        assert hit.score == pytest.approx(hit.cosine + 0.5 * hit.sparsity, abs=1e-5)


def test_identical_guard_keeps_a_query_from_retrieving_itself(index):
    guarded = index.search([TEXTS[0]], k=1, scorer="hoyer")[0]
    assert guarded[0].id != "d0"


def test_exclude_drops_the_given_ids(index):
    hits = index.search([TEXTS[1], TEXTS[1]], k=5, exclude=[["d1"], None])
    assert "d1" not in [h.id for h in hits[0]]
    assert hits[1][0].id == "d1"
    with pytest.raises(ValueError, match="one list of ids per query"):
        index.search([TEXTS[1]], exclude=[["d1"], ["d2"]])


def test_token_scorers_score_the_token_cosine_map(index, encoder):
    query_tokens = encoder.encode_tokens([TEXTS[4]], query=True)[0]
    reductions = {"mean": cp.map_mean, "maxsim": cp.map_maxsim, "alignment": cp.map_alignment}
    for scorer, reduce in reductions.items():
        hits = index.search([TEXTS[4]], k=3, scorer=scorer)[0]
        for hit in hits:
            document_tokens = encoder.encode_tokens([index.text(hit.id)])[0]
            expected = reduce(cp.token_map(query_tokens, document_tokens))
            assert hit.token == pytest.approx(hit.score) == pytest.approx(expected, abs=1e-5)
    top = index.search([TEXTS[4]], k=1, scorer="maxsim")[0][0]
    assert top.id == "d4" and top.score == pytest.approx(1.0, abs=1e-4)


def test_bm25_and_hybrid_stage1(index):
    hits = index.search(["mailman bark"], k=2, stage1="bm25")[0]
    assert hits[0].id == "d1" and hits[0].bm25 > 0 and hits[0].score == hits[0].bm25
    dense = {h.id: h.cosine for h in index.search(["mailman bark"], k=len(TEXTS))[0]}
    assert hits[0].cosine == pytest.approx(dense["d1"], abs=1e-6)  # its cosine, though BM25 found it
    with pytest.raises(ValueError, match="stage1 'bm25' scores by raw BM25"):
        index.search(["mailman bark"], k=2, stage1="bm25", scorer="hoyer", alpha=1.0)
    hybrid = index.search(["mailman bark"], k=2, stage1="hybrid", fusion="rrf")[0]
    assert hybrid[0].id == "d1"


def test_search_rejects_bad_arguments(index):
    with pytest.raises(ValueError, match="k must be >= 1, got 0"):
        index.search(["q"], k=0)
    with pytest.raises(ValueError, match="k must be >= 1"):
        index.search(["q"], k=-3)
    with pytest.raises(ValueError, match="candidates"):
        index.search(["q"], k=10, candidates=5)
    with pytest.raises(ValueError, match="cosine"):
        index.search(["q"], scorer="nonsense")
    with pytest.raises(ValueError):
        index.search(["q"], stage1="sideways")
    with pytest.raises(ValueError):
        index.search(["q"], alpha=float("nan"), scorer="hoyer")
    with pytest.raises(TypeError, match="single str"):
        index.search("q")


def test_scorers_need_the_embeddings_they_read(encoder):
    plain = cp.Index.build(TEXTS, IDS, encoder=encoder)
    with pytest.raises(ValueError, match="Es"):
        plain.search(["q"], scorer="hoyer")
    with pytest.raises(ValueError, match="token embeddings"):
        plain.search(["q"], scorer="maxsim")


def test_build_rejects_bad_input(encoder):
    with pytest.raises(ValueError, match="same length"):
        cp.Index.build(TEXTS, IDS[:2], encoder=encoder)
    with pytest.raises(ValueError, match="d0"):
        cp.Index.build(["a", "b"], ["d0", "d0"], encoder=encoder)
    with pytest.raises(ValueError):
        cp.Index.build(["a"], ["x"], encoder=encoder, kind="nonsense")
    with pytest.raises(ValueError, match="encoder is required"):
        cp.Index.build(["a"], ["x"], encoder=None)


def test_add_and_remove(encoder):
    index = cp.Index.build(TEXTS[:3], IDS[:3], encoder=encoder)
    index.add(TEXTS[3:], IDS[3:])
    assert len(index) == 6
    index.remove(["d0", "d3"])
    assert len(index) == 4 and "d0" not in index
    assert all(h.id not in ("d0", "d3") for h in index.search([TEXTS[0]], k=4)[0])
    with pytest.raises(ValueError, match="d0"):
        index.remove(["d0"])
    with pytest.raises(ValueError, match="d1"):
        index.add(["again"], ["d1"])
    index.add([TEXTS[0]], ["d0"])
    assert index.search([TEXTS[0]], k=1)[0][0].id == "d0"


def test_build_progress_and_cancellation(encoder):
    seen = []
    cp.Index.build(TEXTS, IDS, encoder=encoder, batch_size=4, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(4, 6), (6, 6)]
    with pytest.raises(KeyboardInterrupt):
        cp.Index.build(TEXTS, IDS, encoder=encoder, batch_size=2, progress=lambda d, t: False)


def test_save_and_load_round_trip(index, encoder, tmp_path):
    path = tmp_path / "saved"
    index.save(path)
    loaded = cp.Index.load(path, encoder=encoder, sparse_encoder=encoder)
    assert len(loaded) == len(index)
    for scorer in ("cosine", "hoyer", "maxsim"):
        before = index.search(TEXTS[:2], k=4, scorer=scorer)
        after = loaded.search(TEXTS[:2], k=4, scorer=scorer)
        assert [[(h.id, h.score) for h in q] for q in before] == [[(h.id, h.score) for h in q] for q in after]
    # Loaded without its encoders, the index says which to load, before any warning about alpha.
    bare = cp.Index.load(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError) as refused:
            bare.search(TEXTS[:1], k=2, scorer="hoyer")
    assert str(refused.value) == (
        "Index.search needs the index's encoder to encode texts, and this index was loaded without it: "
        f"Index.load(path, encoder=cp.Encoder.load('{encoder.name}'), sparse_encoder=cp.Encoder.load('{encoder.name}'))"
        ", or use add_embeddings / query vectors")


def test_load_errors(index, encoder, tmp_path):
    with pytest.raises(FileNotFoundError):
        cp.Index.load(tmp_path / "absent", encoder=encoder)
    path = tmp_path / "damaged"
    index.save(str(path))
    victim = max((p for p in path.rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)
    data = victim.read_bytes()
    victim.write_bytes(data[: len(data) // 2])
    with pytest.raises(cp.CorruptFileError):
        cp.Index.load(path, encoder=encoder)


def test_load_refuses_an_encoder_other_than_the_one_the_index_records(index, tmp_path):
    use_lite = REPO / "models" / "installed" / "use-lite-en"
    if not (use_lite / "manifest.json").exists():
        pytest.skip("the default model models/installed/use-lite-en is not installed")
    index.save(tmp_path / "saved")
    with pytest.raises(ValueError, match="is not the model the index was built with"):
        cp.Index.load(tmp_path / "saved", encoder=cp.Encoder.load(str(use_lite), threads=1))


def copy_with_manifest(tmp_path, folder, **changes):
    """The tiny model under tmp_path/folder with `changes` made to its manifest (its files untouched)."""
    import json
    import shutil
    copy = tmp_path / folder
    shutil.copytree(BERT_TINY, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    for key, value in changes.items():
        if key == "lowercase":
            manifest["tokenizer"]["lowercase"] = value
        else:
            manifest[key] = value
    (copy / "manifest.json").write_text(json.dumps(manifest))
    return cp.Encoder.load(str(copy), threads=1)


def test_an_encoder_reading_the_weights_another_way_is_refused_by_setting(index, encoder, tmp_path):
    import json
    assert json.loads(index.encoder_settings)["pooling"] == "cls"
    assert index.encoder_settings == encoder.settings and index.encoder_id == encoder.identity
    index.save(tmp_path / "saved")
    for name, change, says in [("mean", {"pooling": "mean"}, "pooling cls; model bert-tiny-random pools mean"),
                               ("cased", {"lowercase": False}, "lowercase true; model bert-tiny-random has lowercase false"),
                               ("short", {"max_length": 2}, "max_length 64; model bert-tiny-random has max_length 2")]:
        other = copy_with_manifest(tmp_path, name, **change)
        assert other.identity != encoder.identity
        with pytest.raises(ValueError, match="the index was built with " + says):
            cp.Index.load(tmp_path / "saved", encoder=other)
    assert len(cp.Index.load(tmp_path / "saved", encoder=encoder, sparse_encoder=encoder)) == len(IDS)


def test_an_index_recorded_before_the_settings_loads_with_its_model(index, encoder, tmp_path):
    """An identity of the older form ("name@weights", no settings) is recomputed from the model's files."""
    import hashlib
    import json
    old_identity = encoder.identity.split("#")[0]
    index.save(tmp_path / "old")
    header_file = tmp_path / "old" / "header.json"
    header = json.loads(header_file.read_text())
    for role in ("encoder", "sparse_encoder"):
        header["options"][f"{role}_id"] = old_identity
        del header["options"][f"{role}_settings"]
    del header["checksum"]  # over the compact, key-sorted dump, as the library writes it
    header["checksum"] = hashlib.sha256(json.dumps(header, sort_keys=True, separators=(",", ":"),
                                                   ensure_ascii=False).encode()).hexdigest()
    header_file.write_text(json.dumps(header, indent=2))
    loaded = cp.Index.load(tmp_path / "old", encoder=encoder, sparse_encoder=encoder)
    assert loaded.encoder_id == old_identity and loaded.encoder_settings == ""
    assert [h.id for h in loaded.search([TEXTS[3]], k=1)[0]] == ["d3"]
    assert encoder.identity_mismatch(old_identity) == ""
    renamed = copy_with_manifest(tmp_path, "renamed", name="bert-tiny-renamed")
    assert renamed.identity_mismatch(old_identity) == "the index was built with model bert-tiny-random, not " \
        "bert-tiny-renamed"
    with pytest.raises(ValueError, match="not bert-tiny-renamed"):
        cp.Index.load(tmp_path / "old", encoder=renamed)


def many(n, prefix):
    return [f"text number {i} about cats" for i in range(n)], [f"{prefix}{i}" for i in range(n)]


def test_add_is_all_or_nothing_when_an_id_is_already_in_the_index(encoder):
    index = cp.Index.build(TEXTS[:2], IDS[:2], encoder=encoder)
    texts, ids = many(12, "n")
    ids[10] = "d1"
    with pytest.raises(ValueError, match=r"id 'd1' \(item 10\) is already in the index"):
        index.add(texts, ids, batch_size=2)
    assert len(index) == 2


def test_add_names_a_duplicate_within_the_call_and_its_items(encoder):
    index = cp.Index.build(TEXTS[:2], IDS[:2], encoder=encoder)
    texts, ids = many(18, "n")
    ids[17] = ids[3]
    with pytest.raises(ValueError, match=r"appears twice in this call \(items 3 and 17\)"):
        index.add(texts, ids, batch_size=4)
    ids[17] = ""
    with pytest.raises(ValueError, match="item 17 has an empty id"):
        index.add(texts, ids, batch_size=4)
    assert len(index) == 2


def test_add_cancelled_by_its_progress_callback_adds_nothing(encoder):
    index = cp.Index.build(TEXTS[:2], IDS[:2], encoder=encoder)
    texts, ids = many(290, "n")
    calls = []
    with pytest.raises(KeyboardInterrupt):
        index.add(texts, ids, progress=lambda done, total: calls.append(done) or len(calls) < 2, batch_size=128)
    assert len(index) == 2 and "n0" not in index
    index.add(texts, ids, batch_size=128)
    assert len(index) == 292


def test_search_takes_query_vectors_and_gives_the_hits_of_query_texts(index, encoder):
    queries = [TEXTS[0], TEXTS[4]]
    dense = encoder.encode(queries, query=True)
    for scorer, weights in (("cosine", {}), ("hoyer", {"alpha": 0.5})):
        by_text = index.search(queries, k=4, scorer=scorer, **weights)
        by_vector = index.search(dense, k=4, scorer=scorer, **weights,
                                 sparse_queries=dense if scorer == "hoyer" else None)
        assert [[h.id for h in hits] for hits in by_vector] == [[h.id for h in hits] for hits in by_text]
        for a, b in zip(by_vector[0], by_text[0]):
            assert a.score == pytest.approx(b.score, abs=1e-6) and a.sparsity == pytest.approx(b.sparsity, abs=1e-6)
    one = index.search(dense[0], k=2)  # a single vector is one query
    assert len(one) == 1 and one[0][0].id == "d0"


def test_settings_of_the_sparsity_term_are_refused_by_cosine(index):
    # Cosine has no sparsity term: alpha, a gate or a stance given to it would change nothing.
    for setting in ({"alpha": 2.0}, {"sparsity_scale": 0.3}, {"stance": "support"}, {"guard": False}):
        with pytest.raises(ValueError, match="scorer 'cosine' has no sparsity term: choose hoyer"):
            index.search([TEXTS[0]], k=2, **setting)
    assert index.search([TEXTS[0]], k=2, scorer="hoyer", alpha=2.0, sparsity_scale=0.3, stance="support")[0]
    # Likewise the fusion settings without a hybrid stage 1, and Es rows of the queries.
    with pytest.raises(ValueError, match="fusion_lambda weighs BM25 in a hybrid stage 1 fused by rsf, and stage1 "
                                         "'dense' fuses nothing"):
        index.search([TEXTS[0]], k=2, fusion_lambda=0.3)
    vector = index.embeddings(["d0"])
    with pytest.raises(ValueError, match="sparse_queries \\(Es\\(q\\)\\) go with a sparsity scorer"):
        index.search(vector, k=2, sparse_queries=vector)


def test_query_vectors_are_checked_before_searching(index, encoder):
    dense = encoder.encode([TEXTS[0]], query=True)
    with pytest.raises(ValueError, match="needs sparse_queries"):
        index.search(dense, scorer="hoyer", alpha=1.0)
    with pytest.raises(ValueError, match="query vectors are 31-wide, the index's E rows 32"):
        index.search(dense[:, :31])
    with pytest.raises(ValueError, match="prefix applies to query texts"):
        index.search(dense, prefix="Not true: ")
    with pytest.raises(ValueError, match="BM25 needs query texts"):
        index.search(dense, stage1="bm25")
    with pytest.raises(ValueError, match="goes with query vectors"):
        index.search([TEXTS[0]], sparse_queries=dense)


def test_an_index_of_precomputed_rows_searches_like_one_built_from_texts(index, encoder):
    rows = encoder.encode(TEXTS)
    built = cp.Index.build_from_embeddings(IDS, rows, rows, TEXTS, encoder_id=encoder, sparse_encoder_id=encoder)
    assert len(built) == len(TEXTS) and built.text("d2") == TEXTS[2]
    queries = encoder.encode([TEXTS[1]], query=True)
    expected = index.search(queries, k=3, scorer="hoyer", alpha=0.5, sparse_queries=queries)
    got = built.search(queries, k=3, scorer="hoyer", alpha=0.5, sparse_queries=queries)
    assert [h.id for h in got[0]] == [h.id for h in expected[0]]
    more = encoder.encode(["A brand new document about taxes."])
    built.add_embeddings(["d9"], more, more, ["A brand new document about taxes."])
    assert len(built) == len(TEXTS) + 1
    with pytest.raises(ValueError, match="already in the index"):
        built.add_embeddings(["d9"], more, more)
    with pytest.raises(ValueError, match="encoder_id is required"):
        cp.Index.build_from_embeddings(IDS, rows, encoder_id="")
    with pytest.raises(ValueError, match="sparse_encoder_id is required"):
        cp.Index.build_from_embeddings(IDS, rows, rows, encoder_id=encoder)


def test_an_index_of_outside_rows_saves_and_loads_for_search_by_vectors(encoder, tmp_path):
    rows = encoder.encode(TEXTS)
    built = cp.Index.build_from_embeddings(IDS, rows, texts=TEXTS, encoder_id="external@my-pipeline")
    built.save(tmp_path / "outside")
    loaded = cp.Index.load(tmp_path / "outside")  # no Encoder made these rows
    query = encoder.encode([TEXTS[1]], query=True)
    assert [h.id for h in loaded.search(query, k=3)[0]] == [h.id for h in built.search(query, k=3)[0]]
    with pytest.raises(ValueError, match="is not the model the index was built with"):
        cp.Index.load(tmp_path / "outside", encoder=encoder)
    for texts_need_an_encoder in (lambda: loaded.add(["A new text."], ["d9"]), lambda: loaded.explain("x", "d1"),
                                  lambda: loaded.search(["A query text."])):
        with pytest.raises(ValueError, match="encoder"):  # a ValueError, never a crash
            texts_need_an_encoder()


def test_an_index_of_precomputed_rows_names_a_model_that_resolves_and_fits_or_says_external(encoder, tmp_path,
                                                                                             monkeypatch):
    rows = encoder.encode(TEXTS)
    (tmp_path / "all-minilm-l6-v2").mkdir()
    (tmp_path / "all-minilm-l6-v2" / "manifest.json").write_text((BERT_TINY / "manifest.json").read_text())
    monkeypatch.setenv("COUNTERPOINT_MODELS", str(tmp_path))
    width = rows.shape[1]
    assert len(cp.Index.build_from_embeddings(IDS, rows, encoder_id="all-MiniLM-L6-v2")) == len(IDS)
    assert len(cp.Index.build_from_embeddings(IDS, rows, encoder_id="external")) == len(IDS)
    assert len(cp.Index.build_from_embeddings(IDS, rows[:, :5], encoder_id="external@my-pipeline")) == len(IDS)
    with pytest.raises(ValueError) as typo:
        cp.Index.build_from_embeddings(IDS, rows, encoder_id="all-minilm-l6")
    assert str(typo.value).startswith("encoder_id 'all-minilm-l6' names no model: model 'all-minilm-l6' not found")
    assert "did you mean 'all-minilm-l6-v2'?" in str(typo.value) and '"external"' in str(typo.value)
    with pytest.raises(ValueError) as narrow:
        cp.Index.build_from_embeddings(IDS, rows, rows[:, :5], encoder_id="external",
                                       sparse_encoder_id="all-minilm-l6-v2@0123")
    assert str(narrow.value) == (f"sparse_encoder_id 'all-minilm-l6-v2@0123' names all-minilm-l6-v2, whose embeddings "
                                 f"are {width}-wide, but the rows are 5-wide")
    with pytest.raises(ValueError, match=f"makes {width}-wide embeddings, but the rows are 5-wide"):
        cp.Index.build_from_embeddings(IDS, rows[:, :5], encoder_id=encoder)


def test_alpha_tuning_over_stored_vectors_encodes_the_queries_once(index, encoder):
    queries = [TEXTS[0], TEXTS[3]]
    dense = encoder.encode(queries, query=True)
    qrels = {"q0": {"d4": 1}, "q1": {"d1": 1}}

    def ndcg(alpha):
        hits = index.search(dense, k=6, scorer="hoyer", alpha=alpha, sparse_queries=dense)
        return cp.evaluate(cp.hits_to_run(["q0", "q1"], hits), qrels, ["ndcg@10"])["ndcg@10"]

    result = cp.tune_alpha(ndcg, method="grid", lo=0.0, hi=2.0, grid_step=0.5)
    assert len(result["curve"]) == 5 and result["best_score"] == max(s for _, s in result["curve"])


def test_search_results_read_as_hit_lists_and_as_faiss_style_padded_arrays(index):
    result = index.search([TEXTS[0], TEXTS[5]], k=8, scorer="hoyer", alpha=0.5)  # 6 documents: 2 pads
    assert len(result) == 2 and result.k == 8 and repr(result) == "SearchResults(queries=2, k=8)"
    assert [h.id for h in result[0]] == result.ids[0] and [h.id for h in result[-1]] == result.ids[1]
    assert [len(hits) for hits in result] == [6, 6]
    assert result.scores.shape == (2, 8) and result.scores.dtype == np.float32
    assert np.isnan(result.scores[:, 6:]).all() and (result.slots[:, 6:] == -1).all()
    np.testing.assert_array_equal(result.scores[0, :6], [h.score for h in result[0]])
    np.testing.assert_array_equal(result.sparsity[1, :6], [h.sparsity for h in result[1]])
    np.testing.assert_array_equal(result.slots[0, :6], [h.slot for h in result[0]])
    with pytest.raises(IndexError):
        result[2]


def test_hits_carry_their_text_and_read_as_a_table(index, monkeypatch):
    result = index.search([TEXTS[0], TEXTS[5]], 2)
    assert [h.text for h in result[0]] == [TEXTS[IDS.index(h.id)] for h in result[0]]
    assert cp.Hit("x", score=0.5).text == "" and cp.Hit("x", score=0.5, text="T").text == "T"
    frame = result.to_pandas()
    assert list(frame.columns) == ["query", "rank", "id", "score", "cosine", "sparsity", "bm25", "stage1", "token",
                                   "text"]
    assert frame["query"].tolist() == [0, 0, 1, 1] and frame["rank"].tolist() == [1, 2, 1, 2]
    assert frame["id"].tolist() == result.ids[0] + result.ids[1]
    np.testing.assert_allclose(frame["score"], result.scores.ravel())
    html = result._repr_html_()
    assert html.startswith("<table><caption>SearchResults: 2 queries, k=2</caption>")
    assert "<th>score</th><th>cosine</th><th>sparsity</th><th>text</th>" in html and "<th>bm25</th>" not in html
    assert f"<td>{result[0][0].id}</td><td>{result[0][0].score:.4f}</td>" in html
    monkeypatch.setitem(sys.modules, "pandas", None)  # pandas is optional
    with pytest.raises(ImportError, match="SearchResults.to_pandas needs pandas, an optional dependency: "
                                         "pip install pandas"):
        result.to_pandas()


def test_an_empty_index_is_refused_when_built_from_no_texts(encoder):
    with pytest.raises(ValueError, match="texts is empty: an index needs at least one document"):
        cp.Index.build([], [], encoder=encoder)


def test_search_takes_the_per_call_parameters_of_the_approximate_kinds():
    rng = np.random.default_rng(5)
    rows = rng.standard_normal((4096, 16)).astype(np.float32)
    ids = [f"r{i}" for i in range(len(rows))]
    ivf = cp.Index.build_from_embeddings(ids, rows, encoder_id="external@random-rows", kind="ivf")
    queries = rng.standard_normal((20, 16)).astype(np.float32)
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    exact = np.argsort(-(queries @ unit.T), axis=1)[:, :10]

    def recall(**params):
        got = ivf.search(queries, k=10, candidates=10, **params).slots
        return np.mean([len(set(g) & set(e)) / 10 for g, e in zip(got, exact)])

    assert recall(nprobe=64) == 1.0  # every list probed: exact
    assert recall(nprobe=1) < 0.9    # one list of 64: approximate
    with pytest.raises(ValueError, match="nprobe must be >= 0"):
        ivf.search(queries, k=10, nprobe=-1)
    with pytest.raises(ValueError, match="ef_search must be >= 0"):
        ivf.search(queries, k=10, ef_search=-1)
    # A parameter of another kind would be ignored: refused, as FAISS refuses another type's parameters.
    with pytest.raises(ValueError, match="ef_search applies to an hnsw index; this index is ivf"):
        ivf.search(queries, k=10, ef_search=64)
    flat = cp.Index.build_from_embeddings(ids, rows, encoder_id="external@random-rows")
    with pytest.raises(ValueError, match="nprobe applies to an ivf or ivfpq index; this index is flat"):
        flat.search(queries, k=10, nprobe=8)


def test_clean_corpus_removes_what_contradicts_a_trusted_text_and_keeps_trusted_passages(index, tmp_path):
    removed = cp.clean_corpus(index, [TEXTS[0]], top=2, alpha=1.0, out=tmp_path / "cleaned")
    assert len(removed) == 2 and all(r["id"] != "d0" for r in removed)
    assert all(abs(r["score"] - (r["cosine"] + r["sparsity"])) < 1e-5 for r in removed)
    assert all(r["sparsity_scale"] == 0.0 for r in removed)  # the test model records no gate
    gated = cp.clean_corpus(index, [TEXTS[0]], top=2, alpha=1.0, sparsity_scale=4.0)
    assert [r["sparsity_scale"] for r in gated] == [4.0, 4.0]
    with pytest.raises(ValueError, match="sparsity scale"):
        cp.clean_corpus(index, [TEXTS[0]], sparsity_scale=-1.0)
    kept = (tmp_path / "cleaned" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(kept) == len(TEXTS) - 2
    with pytest.raises(ValueError, match="not an empty directory"):
        cp.clean_corpus(index, [TEXTS[0]], out=tmp_path / "cleaned")
    with pytest.raises(ValueError, match="no trusted texts"):
        cp.clean_corpus(index, [])
    with pytest.raises(ValueError, match="give top or threshold, not both"):  # the threshold used to win silently
        cp.clean_corpus(index, [TEXTS[0]], top=1, threshold=0.0, alpha=1.0)
    assert len(cp.clean_corpus(index, [TEXTS[0]], alpha=1.0)) == 3  # the library's default top


def test_explain_names_the_tokens_that_align_worst_and_the_es_coordinates_of_the_difference(index):
    query = "The cat did not sit on the mat."
    explained = index.explain(query, "d0", top_tokens=3, top_coordinates=4)
    assert explained["id"] == "d0" and explained["text"] == TEXTS[0]
    hit = [h for h in index.search([query], k=len(TEXTS), scorer="hoyer", alpha=1.0)[0] if h.id == "d0"][0]
    assert explained["cosine"] == pytest.approx(hit.cosine, abs=1e-5)
    assert explained["sparsity"] == pytest.approx(hit.sparsity, abs=1e-5)
    worst = explained["query_tokens"]
    assert 1 <= len(worst) <= 3
    assert [w["best_cosine"] for w in worst] == sorted(w["best_cosine"] for w in worst)
    assert not any(w["piece"].startswith("[") for w in worst + explained["passage_tokens"])
    shares = [c["share"] for c in explained["coordinates"]]
    assert len(shares) == 4 and shares == sorted(shares, reverse=True)
    assert explained["coordinates_share"] == pytest.approx(sum(shares), abs=1e-6)
    assert "query tokens aligned worst" in explained["summary"]
    with pytest.raises(ValueError, match="no passage 'nope'"):
        index.explain(query, "nope")


def test_explain_encodes_the_query_as_a_search_with_a_prefix_and_a_sparsity_scale_did(index):
    query, prefix, settings = "The cat did not sit on the mat.", "Find evidence: ", {"sparsity_scale": 0.5}
    hit = [h for h in index.search([query], k=len(TEXTS), scorer="hoyer", alpha=1.0, prefix=prefix, **settings)[0]
           if h.id == "d0"][0]
    explained = index.explain(query, "d0", top_tokens=50, prefix=prefix, **settings)
    assert explained["cosine"] == pytest.approx(hit.cosine, abs=1e-5)
    assert explained["sparsity"] == pytest.approx(hit.sparsity, abs=1e-5)
    assert "evidence" in [t["piece"] for t in explained["query_tokens"]]  # the prefix's words are in the map
    plain = index.explain(query, "d0", top_tokens=50)
    assert "evidence" not in [t["piece"] for t in plain["query_tokens"]]
    assert plain["cosine"] != pytest.approx(hit.cosine, abs=1e-5)
    with pytest.raises(ValueError, match="sparsity scale"):
        index.explain(query, "d0", sparsity_scale=-1.0)


def test_an_index_of_precomputed_rows_has_a_repr_and_errors_that_do_not_crash(encoder):
    import subprocess
    code = (
        "import numpy as np, counterpoint as cp\n"
        "rows = np.eye(3, dtype=np.float32)\n"
        "idx = cp.Index.build_from_embeddings(['a', 'b', 'c'], rows, encoder_id='external@0')\n"
        "print(repr(idx))\n"
        "try:\n"
        "    idx.text(0)\n"
        "except TypeError as error:\n"
        "    print('TypeError')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["Index(documents=3, kind='flat', dim=3, encoder=None)", "TypeError"]


def test_search_takes_k_positionally_and_reads_its_defaults_from_the_library(index):
    defaults = cp.SearchOptions()
    assert (defaults.k, defaults.candidates, defaults.scorer, defaults.stage1, defaults.fusion) == (
        10, 100, "cosine", "dense", "rsf")
    assert defaults.alpha is None and defaults.guard is True
    import inspect
    doc_signature = cp.Index.search.__doc__.strip().split("\n")[0]
    assert f"k: int = {defaults.k}" in doc_signature
    assert f"fusion_lambda: float = {defaults.fusion_lambda:g}" in doc_signature.replace("0.10000000149011612", "0.1")
    result = index.search([TEXTS[0]], 2)
    assert result.k == 2 and result.candidates == defaults.candidates
    deep = index.search([TEXTS[0]], 150)  # candidates follow k past the default
    assert deep.candidates == 150
    scores, slots = deep.arrays()
    assert scores.shape == slots.shape == (1, 150)


def test_search_settings_are_checked_by_the_keyword_a_caller_typed(index):
    options = cp.SearchOptions(k=5, scorer="kappa4", alpha=2, guard=False)
    assert (options.k, options.candidates, options.scorer, options.sparsity, options.alpha, options.guard) == (
        5, cp.SearchOptions().candidates, "sparsity", "kappa4", 2.0, False)
    assert cp.SearchOptions(k=500).candidates == 500  # candidates follow k, as in Index.search
    with pytest.raises(ValueError, match="unknown search setting 'scorre'; did you mean 'scorer'"):
        cp.SearchOptions(scorre="hoyer")
    with pytest.raises(ValueError, match="alpha needs a number; got the name 'high'"):
        cp.SearchOptions(scorer="hoyer", alpha="high")
    with pytest.raises(ValueError, match="k needs a whole number; got True"):
        cp.SearchOptions(k=True)
    with pytest.raises(ValueError, match=r"candidates \(K = 3\) must be >= k \(5\)"):
        index.search([TEXTS[0]], 5, candidates=3)
    with pytest.raises(ValueError, match="verifier is read by scorer 'verifier' only"):
        cp.SearchOptions().check_inputs(verifier=True)


def test_one_options_object_searches_as_its_keywords_do_and_refuses_keywords_beside_it(index):
    options = cp.SearchOptions(k=4, scorer="hoyer", alpha=1.5, candidates=20)
    by_object = index.search(TEXTS[:2], options=options)
    by_keywords = index.search(TEXTS[:2], k=4, scorer="hoyer", alpha=1.5, candidates=20)
    assert by_object.ids == by_keywords.ids and np.array_equal(by_object.scores, by_keywords.scores)
    assert (by_object.k, by_object.candidates, by_object.scoring) == (4, 20, by_keywords.scoring)
    # Keywords left at their defaults are no conflict; one moved would leave the reader guessing.
    assert index.search(TEXTS[:1], options=options, k=10, scorer="cosine").ids == by_object.ids[:1]
    with pytest.raises(ValueError, match="not both: k, alpha set beside options"):
        index.search(TEXTS[:1], options=options, k=3, alpha=2.0)


def test_search_results_say_which_alpha_stage_2_used(index, encoder):
    given = index.search([TEXTS[0]], 3, scorer="hoyer", alpha=0.5)
    assert given.alpha[:2] == (0.5, "given")
    with pytest.warns(UserWarning, match="alpha 1 \\(default"):
        default = index.search([TEXTS[0]], 3, scorer="hoyer")
    assert default.alpha[1] == "default"


def test_rerank_scores_candidates_found_elsewhere_as_search_scores_them(index, encoder):
    query = encoder.encode([TEXTS[1]], query=True)
    expected = index.search(query, 4, scorer="hoyer", alpha=0.5, sparse_queries=query, guard=False,
                            exclude=[["d0"]])[0]
    by_cosine = index.search(query, 6)[0]  # another store's candidates, by cosine
    ids = [h.id for h in by_cosine]
    rows = index.sparse_embeddings(ids)
    hits = cp.rerank(ids, np.array([h.cosine for h in by_cosine], dtype=np.float32), sparse_query=query[0],
                     sparse_candidates=rows, k=4, scorer="hoyer", alpha=0.5, guard=False, exclude=["d0"])
    assert [h.id for h in hits] == [h.id for h in expected]
    np.testing.assert_allclose([h.score for h in hits], [h.score for h in expected], rtol=1e-6)
    half = cp.rerank(ids, np.array([h.cosine for h in by_cosine], dtype=np.float32), sparse_query=query[0],
                     sparse_candidates=rows.astype(np.float16), k=4, scorer="hoyer", alpha=0.5, guard=False)
    assert len(half) == 4
    with pytest.raises(ValueError, match="sparse_query"):
        cp.rerank(ids, np.zeros(len(ids), dtype=np.float32), scorer="hoyer", alpha=1.0)
    # A short Es(q) is named as the wrong side, not reported as a shape error of the rows.
    with pytest.raises(ValueError, match=rf"^sparse_query has 3 values but the sparse_candidates rows have {rows.shape[1]}"):
        cp.rerank(ids, np.zeros(len(ids), dtype=np.float32), sparse_query=query[0][:3], sparse_candidates=rows,
                  scorer="hoyer", alpha=1.0)
    with pytest.raises(ValueError, match=rf"^sparse_candidates has 2 rows for {len(ids)} candidates"):
        cp.rerank(ids, np.zeros(len(ids), dtype=np.float32), sparse_query=query[0], sparse_candidates=rows[:2],
                  scorer="hoyer", alpha=1.0)
    # A negative alpha does not lift the query's own text (the guarded pair) to the top.
    own = cp.rerank(ids, np.array([h.cosine for h in by_cosine], dtype=np.float32), sparse_query=query[0],
                    sparse_candidates=rows, k=len(ids), scorer="hoyer", alpha=-0.5)
    assert own[-1].id == "d1" and own[-1].sparsity == pytest.approx(-1e9)
    assert cp.exclusion_lists(None, 2) == [[], []]
    assert cp.exclusion_lists(["a", None], 2) == [["a"], []]
