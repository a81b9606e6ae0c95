# Parity of the converted Universal Sentence Encoder Lite (TorchScript) and of the Python port of its
# tokenizer with the original TF.js model, against tests/fixtures/use_lite_golden.json
# (made by models/use_lite/make_golden.mjs). The model directory comes from
# COUNTERPOINT_USE_LITE_DIR (default: models/installed/use-lite-en, made by models/use_lite/convert.py).
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "models" / "use_lite"))
from use_lite_tokenizer import UseLiteTokenizer  # noqa: E402

from use_lite_support import MODEL_DIR, golden, manifest, pad_batch  # noqa: E402,F401 (fixtures)
MIN_COSINE = 0.999

pytestmark = pytest.mark.skipif(
    not (MODEL_DIR / "manifest.json").is_file(),
    reason=f"converted model directory {MODEL_DIR} is absent; create it with models/use_lite/fetch.sh and "
           f"models/use_lite/convert.py, or point COUNTERPOINT_USE_LITE_DIR at one")


@pytest.fixture(scope="module")
def tokenizer(manifest):
    return UseLiteTokenizer.from_file(str(MODEL_DIR / manifest["tokenizer"]["file"]))


@pytest.fixture(scope="module")
def model():
    module = torch.jit.load(str(MODEL_DIR / "model.pt"))
    module.eval()
    return module




def test_golden_set_covers_the_hard_cases(golden, manifest):
    texts = [s["text"] for s in golden]
    assert "" in texts
    assert any(len(s["ids"]) > manifest["max_length"] for s in golden)
    assert any(0 in s["ids"] for s in golden), "no sentence with an unknown character"


def test_manifest_describes_the_model(manifest):
    assert manifest["format"] == "counterpoint-model"
    assert manifest["architecture"] == "use-lite"
    assert manifest["embedding_dim"] == 512
    assert manifest["token_dim"] == 512
    assert manifest["max_length"] == 128
    assert manifest["tokenizer"] == {"kind": "use-unigram", "file": "vocab.json"}


def test_tokenizer_port_matches_reference_ids(golden, tokenizer):
    for sentence in golden:
        assert tokenizer.encode(sentence["text"]) == sentence["ids"], sentence["text"][:80]


def test_padded_batch_matches_reference_embeddings(golden, tokenizer, model, manifest):
    input_ids, attention_mask = pad_batch([tokenizer.encode(s["text"]) for s in golden], manifest["max_length"])
    with torch.no_grad():
        token_states, pooled = model(input_ids, attention_mask)
    expected = torch.tensor([s["embedding"] for s in golden], dtype=torch.float32)
    assert pooled.shape == (len(golden), 512)
    assert token_states.shape == (len(golden), input_ids.shape[1], 512)
    cosines = torch.nn.functional.cosine_similarity(pooled, expected, dim=1)
    worst = int(torch.argmin(cosines))
    print(f"cosine to reference: min {float(cosines.min()):.7f} mean {float(cosines.mean()):.7f}")
    assert float(cosines[worst]) >= MIN_COSINE, golden[worst]["text"][:80]
    assert torch.allclose(pooled.norm(dim=1), torch.ones(len(golden)), atol=1e-5)
    padded = attention_mask == 0
    assert bool((token_states[padded] == 0).all())


def test_embedding_does_not_depend_on_padding(tokenizer, model):
    ids = tokenizer.encode("Nuclear power is the safest source of energy.")
    alone = pad_batch([ids], 128)
    padded = pad_batch([ids, ids + ids + ids], 128)
    with torch.no_grad():
        _, pooled_alone = model(*alone)
        _, pooled_padded = model(*padded)
    assert torch.allclose(pooled_alone[0], pooled_padded[0], atol=1e-6)


def test_rejects_malformed_input(model):
    with pytest.raises(Exception, match="same"):
        model(torch.zeros(2, 3, dtype=torch.int64), torch.ones(2, 4, dtype=torch.int64))
    with pytest.raises(Exception, match="outside the vocabulary"):
        model(torch.full((1, 2), 9000, dtype=torch.int64), torch.ones(1, 2, dtype=torch.int64))
    with pytest.raises(Exception, match="max_length"):
        model(torch.ones(1, 129, dtype=torch.int64), torch.ones(1, 129, dtype=torch.int64))


def test_module_stays_trainable(model, tokenizer):
    input_ids, attention_mask = pad_batch([tokenizer.encode("A baby elephant is eating a small tree")], 128)
    model.train()
    try:
        _, pooled = model(input_ids, attention_mask)
        pooled.sum().backward()
        grads = [p.grad for p in model.parameters()]
        assert all(p.requires_grad for p in model.parameters())
        assert grads and all(g is not None for g in grads)
    finally:
        model.zero_grad(set_to_none=True)
        model.eval()
