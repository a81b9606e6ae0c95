"""counterpoint training from Python: triples and near-miss pairs, train_sparsecl /
train_contrastive / train_verifier (frozen and end to end) on the committed tiny model (loss goes
down, the output loads), a head alone over the frozen network, resuming from checkpoints,
MapVerifier scoring and Index.search(scorer="verifier"), cancellation and bad arguments."""
import json
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
TINY_MODEL = REPO / "tests" / "fixtures" / "training" / "tiny-model"
DEV_TRIPLES = REPO / "tests" / "fixtures" / "training" / "triples.tsv"
SUBJECTS = ["man", "woman", "boy", "girl", "dog", "cat", "kids", "horse"]
ACTIONS = ["playing guitar", "eating food"]


def contradiction_triples():
    return [cp.Triple(f"the {s} is {a}", f"the {s} is not {a}", [f"some {s} is {a}"], group=s + a)
            for s in SUBJECTS for a in ACTIONS]


def near_miss_triples():
    return [cp.Triple(f"the {s} is {a}", f"some {s} is {a}", [f"the {s} is not {a}"], group=s + a)
            for s in SUBJECTS for a in ACTIONS]


def mean(values):
    return sum(values) / len(values)


def test_triple_fields_and_tsv_loading(tmp_path):
    t = cp.Triple("a cat sleeps", "no cat sleeps", ["a cat rests"], group="cats")
    assert (t.anchor, t.positive, t.negatives, t.group) == ("a cat sleeps", "no cat sleeps", ["a cat rests"], "cats")
    assert "a cat sleeps" in repr(t)
    path = tmp_path / "triples.tsv"
    path.write_text("a\tb\tc\tg\nd\te\tf\n")
    loaded = cp.load_triples(str(path))
    assert [(x.anchor, x.positive, x.negatives, x.group) for x in loaded] == [("a", "b", ["c"], "g"),
                                                                               ("d", "e", ["f"], "")]
    path.write_text("only two\tfields\n")
    with pytest.raises(cp.CorruptFileError, match="triples.tsv:1"):
        cp.load_triples(str(path))


def test_near_miss_pairs_and_triples_from_a_sick_pairs_file(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text(
        "pair_ID\tsentence_A\tsentence_B\tentailment_label\tentailment_AB\tentailment_BA\trelatedness_score\n"
        "1\tA man is playing a guitar\tA man is playing an instrument\tENTAILMENT\tA_entails_B\tB_neutral_A\t4.5\n"
        "2\tA man is playing a guitar\tA man is not playing a guitar\tCONTRADICTION\tA_contradicts_B\tB_neutral_A\t4\n")
    pairs = cp.sick_near_miss_pairs(str(path))
    assert pairs == [cp.LabeledPair("A man is playing a guitar", "A man is playing an instrument", False),
                     cp.LabeledPair("A man is playing a guitar", "A man is not playing a guitar", True)]
    triples = cp.sick_near_miss_triples(str(path))
    assert len(triples) == 1 and triples[0].negatives == ["A man is not playing a guitar"]
    with pytest.raises(ValueError, match="min_overlap"):
        cp.sick_near_miss_pairs(str(path), 2.0)
    with pytest.raises(FileNotFoundError):
        cp.sick_near_miss_pairs(str(tmp_path / "missing.tsv"))


@pytest.mark.parametrize("train", [cp.train_sparsecl, cp.train_contrastive])
def test_encoder_training_lowers_the_loss_and_writes_a_loadable_model(train, tmp_path):
    out = tmp_path / "model"
    report = train(str(TINY_MODEL), contradiction_triples(), str(out), epochs=10, batch_size=8,
                   learning_rate=0.05, temperature=0.1, threads=1, model_name="tiny-trained")
    assert report["steps"] == 20 and len(report["loss_curve"]) == 20
    assert mean(report["loss_curve"][-4:]) < mean(report["loss_curve"][:4])
    assert report["output_dir"] == str(out)
    encoder = cp.Encoder.load(str(out), threads=1)
    assert encoder.name == "tiny-trained"
    assert encoder.encode(["the cat is eating food"]).shape == (1, encoder.dim)


def test_head_only_training_leaves_the_network_and_learns_a_head_on_its_pooled_output(tmp_path):
    out = tmp_path / "head"
    report = cp.train_sparsecl(str(TINY_MODEL), contradiction_triples(), str(out), epochs=10, batch_size=8,
                               learning_rate=0.05, temperature=0.1, threads=1, head_only=True)
    assert mean(report["loss_curve"][-4:]) < mean(report["loss_curve"][:4])
    assert (out / "head.pt").exists()
    base, trained = cp.Encoder.load(str(TINY_MODEL), threads=1), cp.Encoder.load(str(out), threads=1)
    texts = ["the cat is eating food", "the dog is not playing guitar"]
    assert np.array_equal(base.encode_tokens(texts)[0], trained.encode_tokens(texts)[0])
    assert not np.allclose(base.encode(texts), trained.encode(texts), atol=1e-3)
    assert np.allclose(np.linalg.norm(trained.encode(texts), axis=1), 1.0, atol=1e-5)


def test_head_variants_share_a_feature_cache_and_train_as_without_it(tmp_path):
    common = dict(epochs=3, batch_size=8, learning_rate=0.05, temperature=0.1, threads=1, head_only=True)
    plain = cp.train_sparsecl(str(TINY_MODEL), contradiction_triples(), tmp_path / "plain", **common)
    cache = tmp_path / "features"
    first = cp.train_sparsecl(str(TINY_MODEL), contradiction_triples(), tmp_path / "first", feature_cache=cache,
                              **common)
    assert any(cache.iterdir())  # the network's pooled features, kept for the next variant
    second = cp.train_sparsecl(str(TINY_MODEL), contradiction_triples(), tmp_path / "second", feature_cache=cache,
                               **common)
    assert first["loss_curve"] == second["loss_curve"] == pytest.approx(plain["loss_curve"], abs=1e-6)


def test_an_mlp_head_starts_as_the_identity_and_learns_beside_the_frozen_network(tmp_path):
    common = dict(epochs=10, batch_size=8, learning_rate=0.05, temperature=0.1, threads=1, head_only=True)
    linear = cp.train_sparsecl(TINY_MODEL, contradiction_triples(), tmp_path / "linear", **common)
    out = tmp_path / "mlp"
    mlp = cp.train_sparsecl(TINY_MODEL, contradiction_triples(), out, head_kind="mlp", head_hidden=16, **common)
    # W starts at I and the MLP branch's output layer at zero, so the first batch sees the same loss.
    assert mlp["loss_curve"][0] == pytest.approx(linear["loss_curve"][0], abs=1e-6)
    assert mean(mlp["loss_curve"][-4:]) < mean(mlp["loss_curve"][:4])
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["head_kind"] == "mlp" and manifest["training"]["hyperparameters"]["head_hidden"] == 16
    base, trained = cp.Encoder.load(str(TINY_MODEL), threads=1), cp.Encoder.load(str(out), threads=1)
    texts = ["the cat is eating food", "the dog is not playing guitar"]
    assert np.array_equal(base.encode_tokens(texts)[0], trained.encode_tokens(texts)[0])
    assert np.allclose(np.linalg.norm(trained.encode(texts), axis=1), 1.0, atol=1e-5)

    with pytest.raises(ValueError, match="has a mlp head; a head-only training goes on training it"):
        cp.train_sparsecl(out, contradiction_triples(), tmp_path / "again", head_kind="linear", **common)
    with pytest.raises(ValueError, match="head-only"):
        cp.train_sparsecl(TINY_MODEL, contradiction_triples(), tmp_path / "net", head_kind="mlp", batch_size=8)
    with pytest.raises(ValueError, match="head_hidden must be in"):
        cp.train_sparsecl(TINY_MODEL, contradiction_triples(), tmp_path / "wide", head_kind="mlp",
                          head_hidden=0, head_only=True, batch_size=8)
    with pytest.raises(ValueError, match="head"):
        cp.train_sparsecl(TINY_MODEL, contradiction_triples(), tmp_path / "odd", head_kind="deep", head_only=True)


def test_frozen_layers_train_only_the_layers_above_them(tmp_path):
    bert = REPO / "tests" / "fixtures" / "bert_tiny"  # two layers
    out = tmp_path / "top-layer"
    report = cp.train_sparsecl(bert, contradiction_triples(), out, epochs=1, batch_size=8, learning_rate=0.05,
                               temperature=0.1, threads=1, frozen_layers=1)
    assert report["steps"] == 2
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["training"]["hyperparameters"]["frozen_layers"] == 1
    with pytest.raises(ValueError, match="leaves none of model .* 2 layers to train"):
        cp.train_sparsecl(bert, contradiction_triples(), tmp_path / "none", frozen_layers=2, batch_size=8, threads=1)
    with pytest.raises(ValueError, match="has no numbered transformer layers"):
        cp.train_sparsecl(TINY_MODEL, contradiction_triples(), tmp_path / "tiny", frozen_layers=1, batch_size=8,
                         threads=1)
    with pytest.raises(ValueError, match="frozen_layers must be >= 0"):
        cp.train_sparsecl(bert, contradiction_triples(), tmp_path / "negative", frozen_layers=-1)


def test_a_head_trained_with_dev_triples_records_its_alpha_and_search_uses_it_without_a_warning(tmp_path):
    out = tmp_path / "es"  # every path as an os.PathLike
    with pytest.warns(UserWarning, match=r"alpha tuned on 2 dev queries \(fewer than 20\): it may not carry over"):
        report = cp.train_sparsecl(TINY_MODEL, contradiction_triples(), out, epochs=5, batch_size=8,
                                   learning_rate=0.05, temperature=0.1, threads=1, head_only=True,
                                   dev_triples=[DEV_TRIPLES], dense_model=TINY_MODEL)
    assert report["notes"] == [w for w in report["notes"] if "alpha tuned on 2 dev queries" in w] != []
    tuning = report["alpha_tuning"]
    assert report["triples"] == 16 and tuning["queries"] == 2 and tuning["dense_model"] == "tiny-random-test-model"
    recorded = json.loads((out / "manifest.json").read_text())["training"]
    assert recorded["alpha"] == tuning["alpha"]
    assert recorded["dev"]["triples"] == [str(DEV_TRIPLES)]

    dense, sparse = cp.Encoder.load(str(TINY_MODEL), threads=1), cp.Encoder.load(str(out), threads=1)
    texts = ["the man is not playing guitar", "some man is playing guitar", "the cat is eating food"]
    index = cp.Index.build(texts, ["neg", "para", "other"], encoder=dense, sparse_encoder=sparse)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        results = index.search(["the man is playing guitar"], k=3, candidates=3, scorer="hoyer")
    value, source, _ = results.alpha
    assert source == "recorded" and value == pytest.approx(tuning["alpha"], rel=1e-6, abs=1e-6)
    for hit in results[0]:
        assert hit.score == pytest.approx(hit.cosine + value * hit.sparsity, abs=1e-5)


def test_few_triples_train_with_a_batch_size_that_fits_them_unless_one_is_chosen(tmp_path):
    triples = contradiction_triples()  # 16 triples in 16 groups, fewer than the default batch of 64
    with pytest.warns(UserWarning, match=r"batch size 16 \(the 16 distinct groups of the triples; default 64\)"):
        report = cp.train_sparsecl(TINY_MODEL, triples, tmp_path / "fits", max_steps=1, threads=1, head_only=True)
    assert report["steps"] == 1
    with pytest.raises(ValueError, match="batch_size 32 exceeds the 16 distinct groups of the triples"):
        cp.train_sparsecl(TINY_MODEL, triples, tmp_path / "chosen", batch_size=32, max_steps=1, threads=1)


def test_triples_and_dev_triples_come_as_a_notebook_holds_them(tmp_path):
    tuples = [(t.anchor, t.positive, t.negatives[0]) for t in contradiction_triples()]
    dicts = [{"anchor": a, "positive": p, "negative": n} for a, p, n in tuples[:4]]
    with pytest.warns(UserWarning, match="alpha tuned on 4 dev queries"):
        report = cp.train_sparsecl(TINY_MODEL, tuples, tmp_path / "es", batch_size=8, max_steps=1, threads=1,
                                   head_only=True, dev_triples=dicts, dense_model=TINY_MODEL)
    assert report["triples"] == 16 and report["alpha_tuning"]["queries"] == 4
    dev = json.loads((tmp_path / "es" / "manifest.json").read_text())["training"]["dev"]
    assert dev["triples"] == [] and dev["triples_in_memory"] == 4
    for bad, message in [([("only an anchor",)], r"triples\[0\] must be \(anchor, positive\) or"),
                         ([{"anchor": "a", "postive": "p"}], r"triples\[0\] has the key 'postive'"),
                         ([3], r"triples\[0\] must be a cp.Triple, a tuple")]:
        with pytest.raises((ValueError, TypeError), match=message):
            cp.train_sparsecl(TINY_MODEL, bad, tmp_path / "refused", max_steps=1, threads=1)


def test_a_data_frame_of_triples_trains_where_pandas_is_installed(tmp_path):
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame([{"anchor": t.anchor, "positive": t.positive, "negative": t.negatives[0],
                               "group": t.group} for t in contradiction_triples()])
    report = cp.train_sparsecl(TINY_MODEL, frame, tmp_path / "es", batch_size=8, max_steps=1, threads=1,
                               head_only=True)
    assert report["triples"] == 16


def test_scales_tried_on_dev_are_recorded_and_a_search_applies_the_chosen_one(tmp_path):
    out = tmp_path / "es"
    report = cp.train_sparsecl(TINY_MODEL, contradiction_triples(), out, epochs=5, batch_size=8,
                               learning_rate=0.05, temperature=0.1, threads=1, head_only=True,
                               dev_triples=[DEV_TRIPLES], dense_model=TINY_MODEL, sparsity_scales=[0.0, 0.5, 2.0])
    tuning = report["alpha_tuning"]
    assert [scale for scale, _ in tuning["sparsity_scale_curve"]] == [0.0, 0.5, 2.0]
    assert tuning["sparsity_scale"] in (0.0, 0.5, 2.0)
    recorded = json.loads((out / "manifest.json").read_text())["training"]
    assert recorded["sparsity_scale"] == pytest.approx(tuning["sparsity_scale"])

    dense, sparse = cp.Encoder.load(str(TINY_MODEL), threads=1), cp.Encoder.load(str(out), threads=1)
    texts = ["the man is not playing guitar", "some man is playing guitar", "the cat is eating food"]
    index = cp.Index.build(texts, ["neg", "para", "other"], encoder=dense, sparse_encoder=sparse)
    query = ["the man is playing guitar"]
    ungated = index.search(query, 3, candidates=3, scorer="hoyer", sparsity_scale=0)
    assert ungated.sparsity_scale == (0.0, "given", "no gate")
    plain = {h.id: h.sparsity for h in ungated[0]}
    recorded_gate = index.search(query, 3, candidates=3, scorer="hoyer").sparsity_scale
    assert recorded_gate[:2] == (pytest.approx(tuning["sparsity_scale"]), "recorded")
    assert cp.choose_sparsity_scale(None, sparse) == recorded_gate
    assert cp.choose_sparsity_scale(0.5, sparse) == (0.5, "given", "scale 0.5 (given)")
    assert cp.choose_sparsity_scale(None, None) == (0.0, "default", "no gate")
    # A scale longer than any difference of unit rows (at most 2) damps every pair by |d|_2 / 4.
    gated_results = index.search(query, 3, candidates=3, scorer="hoyer", sparsity_scale=4.0)
    assert gated_results.sparsity_scale == (4.0, "given", "scale 4 (given)")
    gated = gated_results[0]
    es_query, es_rows = sparse.encode(query, query=True)[0], sparse.encode(texts)
    for hit in gated:
        length = np.linalg.norm(es_query - es_rows[texts.index(hit.text)])
        assert hit.sparsity == pytest.approx(plain[hit.id] * length / 4.0, abs=1e-5)
    with pytest.raises(ValueError, match="scale"):
        index.search(query, 3, candidates=3, scorer="hoyer", sparsity_scale=-1.0)


def test_training_takes_model_names_and_path_likes_and_checks_settings_before_loading(tmp_path, monkeypatch):
    models = tmp_path / "models"
    models.mkdir()
    (models / "tiny").symlink_to(TINY_MODEL, target_is_directory=True)
    monkeypatch.setenv("COUNTERPOINT_MODELS", str(models))
    report = cp.train_contrastive("tiny", contradiction_triples(), tmp_path / "cl", epochs=1, batch_size=8,
                                  threads=1, head_only=True, dev_triples=[str(DEV_TRIPLES)], dense_model="tiny")
    assert report["alpha_tuning"]["dense_model"] == "tiny-random-test-model"
    assert cp.train_sparsecl(TINY_MODEL, contradiction_triples(), tmp_path / "plain", epochs=1, batch_size=8,
                             threads=1, head_only=True)["alpha_tuning"] is None
    verifier = cp.train_verifier("tiny", near_miss_triples(), tmp_path / "v", map_size=8, width=4, epochs=1,
                                 batch_size=8, threads=1)
    assert cp.MapVerifier.load(tmp_path / "v").name == "cnn:v" and verifier["steps"] == 2
    assert len(cp.load_triples(DEV_TRIPLES)) == 2
    # Settings are refused before any model is loaded or triple read: the base model does not exist.
    with pytest.raises(FileNotFoundError, match="missing-dev"):
        cp.train_sparsecl("no-such-model", contradiction_triples(), tmp_path / "m",
                          dev_triples=[tmp_path / "missing-dev.tsv"])
    with pytest.raises(ValueError, match="learning_rate"):
        cp.train_sparsecl("no-such-model", contradiction_triples(), tmp_path / "m", learning_rate=-1.0)
    with pytest.raises(ValueError, match="map_size"):
        cp.train_verifier("no-such-model", near_miss_triples(), tmp_path / "v2", map_size=2)
    with pytest.raises(TypeError, match="encoder must be"):
        cp.train_verifier(42, near_miss_triples(), tmp_path / "v3")
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(OSError, match="not a directory"):
        cp.train_sparsecl(TINY_MODEL, contradiction_triples(), tmp_path / "a-file" / "model")


def test_training_reports_progress_and_stops_when_the_callback_says_so(tmp_path):
    seen = []

    def progress(step, total):
        seen.append((step, total))
        return step < 3

    with pytest.raises(KeyboardInterrupt):
        cp.train_sparsecl(str(TINY_MODEL), contradiction_triples(), str(tmp_path / "m"), epochs=10,
                          batch_size=8, threads=1, progress=progress)
    assert seen == [(1, 20), (2, 20), (3, 20)]


def test_a_cancelled_run_resumes_from_its_checkpoint_and_ends_as_an_uninterrupted_one(tmp_path):
    encoder = cp.Encoder.load(str(TINY_MODEL), threads=1)
    settings = dict(map_size=8, width=4, epochs=3, batch_size=8, learning_rate=0.01, threads=1)
    whole = cp.train_verifier(encoder, near_miss_triples(), str(tmp_path / "whole"), **settings)
    out = str(tmp_path / "resumed")
    with pytest.raises(KeyboardInterrupt):
        cp.train_verifier(encoder, near_miss_triples(), out, checkpoint_every=2, **settings,
                          progress=lambda step, total: step < 3)
    resumed = cp.train_verifier(encoder, near_miss_triples(), out, checkpoint_every=2, **settings)
    assert (resumed["resumed_from"], resumed["steps"], whole["resumed_from"]) == (3, 6, 0)
    assert resumed["loss_curve"] == whole["loss_curve"]
    with pytest.raises(ValueError, match="another configuration"):
        cp.train_verifier(encoder, near_miss_triples(), out, **{**settings, "learning_rate": 0.02})
    assert cp.train_verifier(encoder, near_miss_triples(), out, resume=False, **settings)["resumed_from"] == 0

    model_out = str(tmp_path / "encoder")
    with pytest.raises(KeyboardInterrupt):
        cp.train_sparsecl(str(TINY_MODEL), contradiction_triples(), model_out, epochs=2, batch_size=8, threads=1,
                          checkpoint_every=1, progress=lambda step, total: step < 2)
    report = cp.train_sparsecl(str(TINY_MODEL), contradiction_triples(), model_out, epochs=2, batch_size=8,
                               threads=1, checkpoint_every=1)
    assert (report["resumed_from"], report["steps"]) == (2, 4)
    with pytest.raises(ValueError, match="checkpoint_every"):
        cp.train_sparsecl(str(TINY_MODEL), contradiction_triples(), model_out, checkpoint_every=-1)


def test_training_refuses_bad_arguments_with_the_reason(tmp_path):
    triples = contradiction_triples()
    with pytest.raises(ValueError, match="epochs"):
        cp.train_sparsecl(str(TINY_MODEL), triples, str(tmp_path / "m"), epochs=0)
    with pytest.raises(ValueError, match="sparsity"):
        cp.train_sparsecl(str(TINY_MODEL), triples, str(tmp_path / "m"), sparsity="l3")
    with pytest.raises(FileNotFoundError):
        cp.train_contrastive(str(tmp_path / "no-model"), triples, str(tmp_path / "m"))
    with pytest.raises(TypeError):
        cp.train_sparsecl(str(TINY_MODEL), ["not a triple"], str(tmp_path / "m"))
    encoder = cp.Encoder.load(str(TINY_MODEL), threads=1)
    with pytest.raises(ValueError, match="architecture"):
        cp.train_verifier(encoder, near_miss_triples(), str(tmp_path / "v"), architecture="rnn")
    with pytest.raises(ValueError, match="patch"):
        cp.train_verifier(encoder, near_miss_triples(), str(tmp_path / "v"), architecture="transformer",
                          map_size=8, patch=3)


def test_trained_verifier_scores_maps_and_reranks_search_hits(tmp_path):
    encoder = cp.Encoder.load(str(TINY_MODEL), threads=1)
    triples = near_miss_triples()
    dev = [cp.LabeledPair(triples[0].anchor, triples[0].positive, False),
           cp.LabeledPair(triples[0].anchor, triples[0].negatives[0], True)]
    out = tmp_path / "verifier"
    report = cp.train_verifier(encoder, triples, str(out), map_size=8, width=4, epochs=15, batch_size=8,
                               learning_rate=0.01, threads=1, dev_pairs=dev)
    assert report["steps"] == 30 and len(report["dev_scores"]) == 15
    assert report["best_dev_score"] == max(report["dev_scores"])
    assert mean(report["loss_curve"][-6:]) < mean(report["loss_curve"][:6])

    verifier = cp.MapVerifier.load(str(out))
    assert verifier.name == "cnn:verifier"
    query, paraphrase, near_miss = encoder.encode_tokens([triples[0].anchor, triples[0].positive,
                                                          triples[0].negatives[0]])
    scores = verifier.score([cp.token_map(query, paraphrase), cp.token_map(query, near_miss)])
    assert scores.dtype == np.float32 and scores.shape == (2,)
    assert np.all(np.abs(scores) <= 1)
    with pytest.raises(ValueError):
        verifier.score([np.zeros((0, 3), dtype=np.float32)])

    texts = [triples[0].positive, triples[0].negatives[0], "the horse is eating food"]
    index = cp.Index.build(texts, ["para", "near", "other"], encoder=encoder, tokens=True)
    hits = index.search([triples[0].anchor], k=3, candidates=3, scorer="verifier", verifier=verifier)
    by_id = {hit.id: hit for hit in hits[0]}
    assert by_id["para"].token == pytest.approx(float(scores[0]), abs=1e-5)
    assert by_id["near"].token == pytest.approx(float(scores[1]), abs=1e-5)
    with pytest.raises(ValueError, match="verifier"):
        index.search([triples[0].anchor], k=3, candidates=3, scorer="verifier")
    with pytest.raises(FileNotFoundError):
        cp.MapVerifier.load(str(tmp_path / "missing"))


def test_end_to_end_verifier_training_writes_a_fine_tuned_encoder_and_leaves_the_given_one(tmp_path):
    encoder = cp.Encoder.load(str(TINY_MODEL), threads=1)
    triples = near_miss_triples()
    before = encoder.encode([triples[0].anchor])
    out = tmp_path / "verifier"
    report = cp.train_verifier(encoder, triples, str(out), map_size=8, width=4, epochs=10, batch_size=8,
                               learning_rate=0.01, encoder_learning_rate=0.01, threads=1)
    assert mean(report["loss_curve"][-4:]) < mean(report["loss_curve"][:4])
    assert report["encoder_dir"] == str(out / "encoder")
    np.testing.assert_array_equal(encoder.encode([triples[0].anchor]), before)
    tuned = cp.Encoder.load(report["encoder_dir"], threads=1)
    assert not np.allclose(tuned.encode([triples[0].anchor]), before)
    assert cp.MapVerifier.load(str(out)).name == "cnn:verifier"
    frozen = cp.train_verifier(encoder, triples, str(tmp_path / "frozen"), map_size=8, width=4, epochs=1,
                               batch_size=8, threads=1)
    assert frozen["encoder_dir"] is None
    with pytest.raises(ValueError, match="encoder_learning_rate"):
        cp.train_verifier(encoder, triples, str(tmp_path / "bad"), map_size=8, width=4, encoder_learning_rate=-1.0)


def test_sick_triples_from_the_committed_excerpt():
    fixtures = REPO / "tests" / "fixtures" / "training"
    triples = cp.sick_triples(str(fixtures / "sick_pairs.tsv"), str(fixtures / "sick_corpus.jsonl"))
    by_anchor = {t.anchor: t for t in triples}
    # "A cat is sleeping" contradicts "A cat is not sleeping"; its entailed sentence is the hard negative.
    assert by_anchor["A cat is sleeping"].positive == "A cat is not sleeping"
    assert by_anchor["A cat is sleeping"].negatives == ["An animal is sleeping"]
    assert by_anchor["A cat is sleeping"].group == "s1"
    with pytest.raises(FileNotFoundError):
        cp.sick_triples(str(fixtures / "missing.tsv"), str(fixtures / "sick_corpus.jsonl"))


def test_arguana_triples_keep_negatives_in_the_anchors_debate():
    arguana = REPO.parent / "shared" / "data" / "arguana"
    if not (arguana / "metadata.jsonl").exists():
        pytest.skip("ArguAna is not on this machine")
    triples = cp.arguana_triples(str(arguana), str(arguana / "qrels" / "dev.tsv"), str(arguana / "metadata.jsonl"),
                                 negatives=2, seed=7)
    assert len(triples) > 900
    assert all(len(t.negatives) == 2 and t.group for t in triples)
    with pytest.raises(ValueError, match="negatives"):
        cp.arguana_triples(str(arguana), str(arguana / "qrels" / "dev.tsv"), str(arguana / "metadata.jsonl"),
                           negatives=0)


def test_inverter_reverses_a_claim_with_one_edit_and_says_which():
    inverter = cp.Inverter()
    assert inverter.edits == cp.stance_edit_kinds()
    inversion = inverter.invert("Affirmative action is good for society.")
    assert (inversion.text, inversion.edit, inversion.before, inversion.after) == (
        "Affirmative action is bad for society.", "adjective-antonym", "good", "bad")
    assert inverter.invert("Video games develop intelligence") is None
    batch = inverter.invert_batch(["It is not fair", "Taxes should be cut"])
    assert [i.text for i in batch] == ["It is fair", "Taxes should not be cut"]
    roles = cp.Inverter(edits=["role-swap"])
    assert roles.invert("A man is cutting a tomato.").text == "A tomato is cutting a man."
    assert set(cp.edit_kinds()) >= set(cp.stance_edit_kinds()) | {"role-swap"}
    assert "decrease" in cp.wordnet_antonyms("increase", "verb")
    # Structure-targeted negatives for verifier training: a copy per editable anchor.
    triples = [cp.Triple("A man is cutting a tomato.", "A person is slicing a tomato.", ["x"], group="g"),
               cp.Triple("!!!", "?", ["y"], group="h")]
    more = cp.add_inverted_negatives(triples, cp.Inverter(edits=cp.near_miss_edit_kinds()))
    assert [(t.anchor, t.negatives) for t in more] == [
        ("A man is cutting a tomato.", ["x"]), ("A man is cutting a tomato.", ["A tomato is cutting a man."]),
        ("!!!", ["y"])]


def test_inverter_rejects_unknown_edits_and_non_text():
    with pytest.raises(ValueError, match="unknown edit kind"):
        cp.Inverter(edits=["antonym"])
    with pytest.raises(ValueError, match="edits is empty"):
        cp.Inverter(edits=[])
    with pytest.raises(TypeError):
        cp.Inverter().invert(42)
    with pytest.raises(TypeError):
        cp.Inverter().invert_batch("one string, not a list")
