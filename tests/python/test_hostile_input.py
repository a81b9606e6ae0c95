"""Hostile input through the Python module: each case ends in the one error type of its kind
(ValueError for bad values, cp.CorruptFileError for bad files), never a RuntimeError cast
failure, a hang or a silently wrong answer."""
import os
import pathlib
import re
import shutil

import numpy as np
import pytest

import counterpoint as cp

REPO = pathlib.Path(__file__).resolve().parents[2]
BERT_TINY = REPO / "tests" / "fixtures" / "bert_tiny"
HOSTILE = REPO / "tests" / "fixtures" / "hostile_models"
LONE_SURROGATE = "a\ud800b"


@pytest.fixture(scope="module")
def encoder():
    return cp.Encoder.load(str(BERT_TINY), threads=1)


@pytest.fixture(scope="module")
def index(encoder):
    return cp.Index.build(["a cat", "a dog"], ["x", "y"], encoder=encoder, sparse_encoder=encoder)


def test_a_lone_surrogate_is_a_value_error_at_every_text_argument(encoder, index):
    calls = {
        "texts[0]": lambda: encoder.encode([LONE_SURROGATE]),
        "prefix": lambda: encoder.encode(["a"], prefix=LONE_SURROGATE),
        "queries[0]": lambda: index.search([LONE_SURROGATE]),
        "ids[1]": lambda: cp.Index.build(["a", "b"], ["ok", LONE_SURROGATE], encoder=encoder),
        "texts[1]": lambda: index.add(["fine", LONE_SURROGATE], ["p", "q"]),
        "prefix ": lambda: index.search(["a"], prefix=LONE_SURROGATE),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError, match=re.escape(name.strip()) + " cannot be encoded as UTF-8"):
            call()
    assert len(index) == 2


@pytest.mark.parametrize("case", ["token_width_grows", "pooled_width_grows", "pooled_narrower", "one_pooled_row",
                                  "integer_outputs", "token_length_differs"])
def test_a_model_whose_output_shape_changes_with_the_batch_is_corrupt(case):
    model = cp.Encoder.load(str(HOSTILE / case), threads=1)
    texts = ["the man is playing guitar", "a dog", "the woman is not eating food"]
    with pytest.raises(cp.CorruptFileError, match=f"hostile-{case}.*expected \\["):
        model.encode(texts, batch_size=3)
    with pytest.raises(cp.CorruptFileError, match=f"hostile-{case}"):
        model.encode_tokens(texts, batch_size=3)


def test_huge_candidates_are_capped_at_the_index_size(index):
    hits = index.search(["a cat"], k=2, candidates=2 ** 40)
    assert [h.id for h in hits[0]] and len(hits[0]) == 2


def test_threads_beyond_the_documented_maximum_are_refused():
    with pytest.raises(ValueError, match="between 0 \\(all cores\\) and 256, got 10000"):
        cp.Encoder.load(str(BERT_TINY), threads=10000)


def test_a_fifo_as_the_network_is_refused_without_blocking(tmp_path):
    model = tmp_path / "model"
    shutil.copytree(BERT_TINY, model)
    (model / "model.pt").unlink()
    os.mkfifo(model / "model.pt")
    with pytest.raises(ValueError, match="found a FIFO"):
        cp.Encoder.load(str(model), threads=1)


def test_kernels_say_what_the_clamp_does_and_cosine_holds_at_tiny_scales():
    for kernel in (cp.hoyer, cp.l2_l1, cp.kappa4):
        assert "clamped as in SparseCL's reference code" in kernel.__doc__
    rng = np.random.default_rng(3)
    q, c = rng.standard_normal(16).astype(np.float32), rng.standard_normal((4, 16)).astype(np.float32)
    np.testing.assert_allclose(cp.cosine(q * 1e-25, c), cp.cosine(q, c), atol=1e-6)
    np.testing.assert_allclose(cp.cosine(q, c * 1e-30), cp.cosine(q, c), atol=1e-6)
    # The clamp, documented: q * 1e-8 against C * 1e-8 differs by less than its floors.
    assert np.all(cp.hoyer(q * 1e-8, c * 1e-8) == 0.0)
