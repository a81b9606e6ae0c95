"""models/bert/convert_hf.py: Hugging Face BERT checkpoints -> counterpoint model directories.

The converted TorchScript model is checked against an independent numpy implementation of
BERT's forward pass that reads the safetensors bytes itself. The committed fixture
tests/fixtures/bert_tiny is regenerated with
    /usr/bin/python3 tests/python/test_bert_converter.py --write-fixture tests/fixtures/bert_tiny
"""
import hashlib
import json
import math
import os
import struct
import subprocess
import sys

import numpy as np
import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "models", "bert"))

import convert_hf  # noqa: E402
import make_random_checkpoint  # noqa: E402
from safetensors_io import SafetensorsError, read_safetensors, write_safetensors  # noqa: E402

FIXTURE_DIR = os.path.join(ROOT, "tests", "fixtures", "bert_tiny")
FIXTURE_SEED = 7
# Token ids BERT's tokenizer gives with the fixture vocabulary (lowercase), derived by hand:
# "cats" -> cat ##s, "don't" -> don ' t, "unhappiness" -> un ##happi ##ness, accents are
# stripped, the em dash is punctuation missing from the vocabulary and "qzx" has no pieces.
FIXTURE_SENTENCES = [
    ("The cat sat on the mat.", [2, 15, 18, 20, 21, 15, 22, 5, 3]),
    ("Cats don't attack dogs!", [2, 18, 35, 42, 9, 43, 31, 19, 35, 7, 3]),
    ("Unhappiness is NOT evidence: the claim is false.",
     [2, 39, 40, 41, 23, 24, 28, 10, 15, 27, 23, 26, 5, 3]),
    ("H\u00e9llo, w\u00f6rld \u2014 qzx?", [2, 29, 6, 30, 1, 1, 8, 3]),
]


# ---- independent numpy reference -------------------------------------------------------

def numpy_read_weights(path):
    """Parses safetensors directly (F32/F16 only) into float64 arrays."""
    with open(path, "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    header.pop("__metadata__", None)
    dtypes = {"F32": "<f4", "F16": "<f2"}
    out = {}
    for name, e in header.items():
        begin, end = e["data_offsets"]
        raw = blob[8 + n + begin:8 + n + end]
        out[name] = np.frombuffer(raw, dtype=dtypes[e["dtype"]]).astype(np.float64).reshape(e["shape"])
    return out


_erf = np.vectorize(math.erf)


def np_act(x, act):
    if act == "gelu":
        return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))
    if act == "relu":
        return np.maximum(x, 0.0)
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def np_layer_norm(x, gain, bias, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gain + bias


def np_linear(w, prefix, x):
    return x @ w[prefix + ".weight"].T + w[prefix + ".bias"]


def np_layer(w, p, x, mask, heads, act):
    """One encoder layer on x [T, H] for one sequence; mask [T] of 0/1."""
    t, h = x.shape
    d = h // heads
    q = np_linear(w, p + "attention.self.query", x).reshape(t, heads, d).transpose(1, 0, 2)
    k = np_linear(w, p + "attention.self.key", x).reshape(t, heads, d).transpose(1, 0, 2)
    v = np_linear(w, p + "attention.self.value", x).reshape(t, heads, d).transpose(1, 0, 2)
    scores = q @ k.transpose(0, 2, 1) / math.sqrt(d)
    scores = np.where(mask[None, None, :] > 0, scores, -1e300)
    scores = scores - scores.max(-1, keepdims=True)
    probs = np.exp(scores)
    probs /= probs.sum(-1, keepdims=True)
    context = (probs @ v).transpose(1, 0, 2).reshape(t, h)
    a = np_layer_norm(x + np_linear(w, p + "attention.output.dense", context),
                      w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
    m = np_act(np_linear(w, p + "intermediate.dense", a), act)
    return np_layer_norm(a + np_linear(w, p + "output.dense", m),
                         w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])


def np_bert(w, ids, layers, heads, act, prefix="bert."):
    """Token states [T, H] of one unpadded sequence."""
    w = {k[len(prefix):] if k.startswith(prefix) else k: v for k, v in w.items()}
    ids = np.asarray(ids)
    x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:len(ids)]
         + w["embeddings.token_type_embeddings.weight"][0])
    x = np_layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    mask = np.ones(len(ids))
    for i in range(layers):
        x = np_layer(w, f"encoder.layer.{i}.", x, mask, heads, act)
    return x


def np_pool(states, pooling):
    v = states[0] if pooling == "cls" else states.mean(0)
    return v / np.linalg.norm(v)


# ---- helpers ---------------------------------------------------------------------------

SEQUENCES = [[2, 40, 41, 42, 5, 3], [2, 7, 3], [2, 50, 9, 60, 61, 62, 63, 64, 65, 3]]


def padded(sequences):
    t = max(len(s) for s in sequences)
    ids = torch.zeros(len(sequences), t, dtype=torch.int64)
    mask = torch.zeros(len(sequences), t, dtype=torch.int64)
    for i, s in enumerate(sequences):
        ids[i, :len(s)] = torch.tensor(s)
        mask[i, :len(s)] = 1
    return ids, mask


def run_scripted(model_dir, sequences):
    module = torch.jit.load(os.path.join(model_dir, "model.pt"))
    module.eval()
    ids, mask = padded(sequences)
    with torch.no_grad():
        states, pooled = module(ids, mask)
    return states.double().numpy(), pooled.double().numpy()


def assert_matches_reference(model_dir, weights, sequences, layers=2, heads=4, act="gelu",
                             pooling="cls", prefix="bert."):
    states, pooled = run_scripted(model_dir, sequences)
    for i, s in enumerate(sequences):
        expected = np_bert(weights, s, layers, heads, act, prefix)
        np.testing.assert_allclose(states[i, :len(s)], expected, atol=1e-4, rtol=0)
        np.testing.assert_allclose(pooled[i] / np.linalg.norm(pooled[i]), np_pool(expected, pooling),
                                   atol=1e-4, rtol=0)


# ---- tests -----------------------------------------------------------------------------

@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_full_forward_matches_numpy_reference_on_a_padded_batch(tmp_path, pooling):
    make_random_checkpoint.write_checkpoint(tmp_path / "hf", seed=1)
    convert_hf.convert(str(tmp_path / "hf"), str(tmp_path / "out"), pooling=pooling)
    weights = numpy_read_weights(tmp_path / "hf" / "model.safetensors")
    assert_matches_reference(tmp_path / "out", weights, SEQUENCES, pooling=pooling)


def test_padding_does_not_change_a_sequence_s_states(tmp_path):
    make_random_checkpoint.write_checkpoint(tmp_path / "hf", seed=2)
    convert_hf.convert(str(tmp_path / "hf"), str(tmp_path / "out"))
    alone, _ = run_scripted(tmp_path / "out", [SEQUENCES[1]])
    batched, _ = run_scripted(tmp_path / "out", SEQUENCES)
    np.testing.assert_allclose(batched[1, :3], alone[0], atol=1e-5, rtol=0)


def test_one_layer_on_its_own_matches_numpy(tmp_path):
    make_random_checkpoint.write_checkpoint(tmp_path / "hf", seed=3, act="gelu")
    convert_hf.convert(str(tmp_path / "hf"), str(tmp_path / "out"))
    weights = numpy_read_weights(tmp_path / "hf" / "model.safetensors")
    weights = {k[len("bert."):]: v for k, v in weights.items()}
    layer = getattr(torch.jit.load(str(tmp_path / "out" / "model.pt")).layers, "1")
    x = np.random.RandomState(0).standard_normal((5, 32))
    mask = np.array([1, 1, 1, 1, 0], dtype=np.float64)
    additive = torch.tensor((1.0 - mask) * -3.4028234663852886e38, dtype=torch.float32)[None, None, None, :]
    with torch.no_grad():
        out = layer(torch.tensor(x, dtype=torch.float32)[None], additive)[0].double().numpy()
    np.testing.assert_allclose(out, np_layer(weights, "encoder.layer.1.", x, mask, 4, "gelu"),
                               atol=1e-4, rtol=0)


@pytest.mark.parametrize("act", ["gelu_new", "relu"])
def test_pytorch_model_bin_without_bert_prefix_converts(tmp_path, act):
    weights = make_random_checkpoint.write_checkpoint(tmp_path / "hf", seed=4, act=act, weights_format="bin",
                                                      bert_prefix=False)
    assert not (tmp_path / "hf" / "model.safetensors").exists()
    manifest = convert_hf.convert(str(tmp_path / "hf"), str(tmp_path / "out"))
    assert manifest["source"]["weights_file"] == "pytorch_model.bin"
    weights = {k: v.astype(np.float64) for k, v in weights.items()}
    assert_matches_reference(tmp_path / "out", weights, SEQUENCES, act=act, prefix="")


def test_f16_safetensors_converts_to_the_same_function_of_the_f16_weights(tmp_path):
    make_random_checkpoint.write_checkpoint(tmp_path / "hf", seed=5, dtype="F16")
    header_len = struct.unpack("<Q", (tmp_path / "hf" / "model.safetensors").read_bytes()[:8])[0]
    assert b'"F16"' in (tmp_path / "hf" / "model.safetensors").read_bytes()[8:8 + header_len]
    convert_hf.convert(str(tmp_path / "hf"), str(tmp_path / "out"))
    weights = numpy_read_weights(tmp_path / "hf" / "model.safetensors")
    assert_matches_reference(tmp_path / "out", weights, SEQUENCES)


def test_missing_weight_is_reported_by_name(tmp_path):
    make_random_checkpoint.write_checkpoint(tmp_path / "hf", seed=6)
    path = tmp_path / "hf" / "model.safetensors"
    tensors, _ = read_safetensors(path)
    del tensors["bert.encoder.layer.1.attention.self.key.bias"]
    del tensors["bert.embeddings.LayerNorm.weight"]
    write_safetensors(path, tensors)
    with pytest.raises(ValueError) as error:
        convert_hf.convert(str(tmp_path / "hf"), str(tmp_path / "out"))
    assert "missing 2 weight(s): embedding_norm.weight, layers.1.key.bias" in str(error.value)
    assert not (tmp_path / "out").exists()


def test_unknown_weight_is_reported_by_name_and_known_extras_are_ignored(tmp_path):
    make_random_checkpoint.write_checkpoint(tmp_path / "hf", seed=6)
    path = tmp_path / "hf" / "model.safetensors"
    tensors, _ = read_safetensors(path)
    tensors["bert.embeddings.position_ids"] = np.arange(64, dtype=np.int64)[None]
    tensors["cls.predictions.bias"] = np.zeros(10, dtype=np.float32)
    write_safetensors(path, tensors)
    manifest = convert_hf.convert(str(tmp_path / "hf"), str(tmp_path / "out"))
    assert manifest["source"]["ignored_weights"] == [
        "bert.embeddings.position_ids", "bert.pooler.dense.bias", "bert.pooler.dense.weight",
        "cls.predictions.bias"]
    tensors["bert.encoder.layer.0.attention.self.rotary.weight"] = np.zeros(4, dtype=np.float32)
    write_safetensors(path, tensors)
    with pytest.raises(ValueError, match=r"does not know: bert\.encoder\.layer\.0\.attention\.self\.rotary\.weight$"):
        convert_hf.convert(str(tmp_path / "hf"), str(tmp_path / "out2"))


def test_layer_count_disagreeing_with_config_is_an_error(tmp_path):
    make_random_checkpoint.write_checkpoint(tmp_path / "hf", seed=6, layers=3)
    config_path = tmp_path / "hf" / "config.json"
    config = json.loads(config_path.read_text())
    config["num_hidden_layers"] = 2
    config_path.write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"beyond the configured model: layers\.2\.attention_norm\.bias"):
        convert_hf.convert(str(tmp_path / "hf"), str(tmp_path / "out"))


def test_unsupported_activation_is_an_error(tmp_path):
    make_random_checkpoint.write_checkpoint(tmp_path / "hf", seed=6)
    config_path = tmp_path / "hf" / "config.json"
    config_path.write_text(config_path.read_text().replace('"gelu"', '"swish"'))
    with pytest.raises(ValueError, match="hidden_act 'swish' is not supported"):
        convert_hf.convert(str(tmp_path / "hf"), str(tmp_path / "out"))


def test_manifest_records_checksums_settings_and_lowercase(tmp_path):
    make_random_checkpoint.write_checkpoint(tmp_path / "hf", seed=8, lowercase=False)
    manifest = convert_hf.convert(str(tmp_path / "hf"), str(tmp_path / "out"), pooling="mean", name="e5-tiny",
                                  max_length=512, query_prefix="query: ", document_prefix="passage: ",
                                  license="MIT")
    on_disk = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert on_disk == manifest
    for name in ("model.pt", "vocab.txt"):
        assert on_disk["files"][name] == hashlib.sha256((tmp_path / "out" / name).read_bytes()).hexdigest()
    assert (on_disk["format"], on_disk["format_version"], on_disk["architecture"]) == ("counterpoint-model", 1, "bert")
    assert (on_disk["embedding_dim"], on_disk["token_dim"], on_disk["pooling"]) == (32, 32, "mean")
    assert on_disk["max_length"] == 64  # capped by max_position_embeddings
    assert on_disk["tokenizer"] == {"kind": "wordpiece", "file": "vocab.txt", "lowercase": False}
    assert (on_disk["name"], on_disk["query_prefix"], on_disk["document_prefix"], on_disk["license"]) == \
        ("e5-tiny", "query: ", "passage: ", "MIT")
    assert (tmp_path / "out" / "vocab.txt").read_text() == (tmp_path / "hf" / "vocab.txt").read_text()


def test_tokenizer_json_vocabulary_is_written_as_vocab_txt(tmp_path):
    make_random_checkpoint.write_checkpoint(tmp_path / "hf", seed=9)
    pieces = (tmp_path / "hf" / "vocab.txt").read_text().splitlines()
    (tmp_path / "hf" / "vocab.txt").unlink()
    (tmp_path / "hf" / "tokenizer_config.json").unlink()
    shuffled = dict(sorted({p: i for i, p in enumerate(pieces)}.items()))
    (tmp_path / "hf" / "tokenizer.json").write_text(json.dumps({
        "normalizer": {"type": "BertNormalizer", "lowercase": False},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": shuffled}}))
    manifest = convert_hf.convert(str(tmp_path / "hf"), str(tmp_path / "out"))
    assert (tmp_path / "out" / "vocab.txt").read_text().splitlines() == pieces
    assert manifest["tokenizer"]["lowercase"] is False


def test_bf16_and_truncated_safetensors(tmp_path):
    path = tmp_path / "w.safetensors"
    bits = np.array([0x3F80, 0xC020, 0x3E20], dtype="<u2")  # 1.0, -2.5, 0.15625 in bfloat16
    header = json.dumps({"x": {"dtype": "BF16", "shape": [3], "data_offsets": [0, 6]}}).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header + bits.tobytes())
    tensors, _ = read_safetensors(path)
    assert tensors["x"].dtype == np.float32
    assert tensors["x"].tolist() == [1.0, -2.5, 0.15625]
    path.write_bytes(struct.pack("<Q", len(header)) + header + bits.tobytes()[:4])
    with pytest.raises(SafetensorsError, match=r"tensor 'x' \(BF16 \[3\]\) has data_offsets \[0, 6\]"):
        read_safetensors(path)


def test_scripted_model_stays_trainable(tmp_path):
    make_random_checkpoint.write_checkpoint(tmp_path / "hf", seed=10)
    convert_hf.convert(str(tmp_path / "hf"), str(tmp_path / "out"))
    module = torch.jit.load(str(tmp_path / "out" / "model.pt"))
    module.train()
    params = list(module.parameters())
    assert len(params) == 5 + 2 * 16 and all(p.requires_grad for p in params)
    _, pooled = module(*padded(SEQUENCES))
    pooled.sum().backward()
    assert params[0].grad is not None and float(params[0].grad.abs().sum()) > 0


# ---- the committed fixture ------------------------------------------------------------

def fixture_checkpoint(directory):
    with open(os.path.join(FIXTURE_DIR, "vocab.txt"), encoding="utf-8") as f:
        pieces = f.read().splitlines()
    return make_random_checkpoint.write_checkpoint(directory, pieces=pieces, seed=FIXTURE_SEED)


def fixture_expectations(weights):
    weights = {k: v.astype(np.float64) for k, v in weights.items()}
    return [{"text": text, "ids": ids, "embedding": [round(float(x), 7) for x in
                                                      np_pool(np_bert(weights, ids, 2, 4, "gelu"), "cls")]}
            for text, ids in FIXTURE_SENTENCES]


def write_fixture(out_dir):
    import tempfile
    with tempfile.TemporaryDirectory() as hf:
        weights = fixture_checkpoint(hf)
        convert_hf.convert(hf, out_dir, pooling="cls", name="bert-tiny-random", max_length=64,
                           license="Apache-2.0")
    manifest_path = os.path.join(out_dir, "manifest.json")
    with open(manifest_path, encoding="utf-8") as f:
        manifest = json.load(f)
    manifest["source"]["upstream"] = (f"random weights: models/bert/make_random_checkpoint.py "
                                      f"--vocab vocab.txt --seed {FIXTURE_SEED}")
    with open(manifest_path, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2, ensure_ascii=False)
        f.write("\n")
    expected = {"source": "tests/python/test_bert_converter.py --write-fixture (numpy reference, "
                          "cls pooling, L2-normalised, rounded to 7 decimals)",
                "sentences": fixture_expectations(weights)}
    sentences = ",\n".join("  " + json.dumps(s, ensure_ascii=False) for s in expected["sentences"])
    with open(os.path.join(out_dir, "expected.json"), "w", encoding="utf-8") as f:
        f.write(f'{{\n "source": {json.dumps(expected["source"])},\n "sentences": [\n{sentences}\n ]\n}}\n')


def test_committed_fixture_matches_the_numpy_reference(tmp_path):
    with open(os.path.join(FIXTURE_DIR, "expected.json"), encoding="utf-8") as f:
        expected = json.load(f)["sentences"]
    assert [(s["text"], s["ids"]) for s in expected] == [(t, i) for t, i in FIXTURE_SENTENCES]
    recomputed = fixture_expectations(fixture_checkpoint(tmp_path))
    for want, got in zip(expected, recomputed):
        np.testing.assert_allclose(want["embedding"], got["embedding"], atol=1e-6, rtol=0)
    states, _ = run_scripted(FIXTURE_DIR, [ids for _, ids in FIXTURE_SENTENCES])
    for i, (want, (_, ids)) in enumerate(zip(expected, FIXTURE_SENTENCES)):
        cls = states[i, 0] / np.linalg.norm(states[i, 0])
        np.testing.assert_allclose(cls, want["embedding"], atol=1e-4, rtol=0)


def test_committed_fixture_manifest_checksums_hold():
    with open(os.path.join(FIXTURE_DIR, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    for name, digest in manifest["files"].items():
        with open(os.path.join(FIXTURE_DIR, name), "rb") as f:
            assert hashlib.sha256(f.read()).hexdigest() == digest, name


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--write-fixture":
        write_fixture(sys.argv[2])
    else:
        sys.exit("usage: test_bert_converter.py --write-fixture DIR (tests run under pytest)")


def test_the_same_checkpoint_converts_to_the_same_bytes_whatever_the_hash_seed(tmp_path):
    # A reinstalled model must keep its checksum, or every index built with it would be refused.
    make_random_checkpoint.write_checkpoint(tmp_path / "hf", seed=8)
    digests = set()
    for hash_seed in ("1", "2", "random"):
        out = tmp_path / f"model-{hash_seed}"
        subprocess.run([sys.executable, os.path.join(ROOT, "models", "bert", "convert_hf.py"), "--hf-dir",
                        str(tmp_path / "hf"), "--out", str(out)], check=True, capture_output=True,
                       env={**os.environ, "PYTHONHASHSEED": hash_seed})
        digests.add(hashlib.sha256((out / "model.pt").read_bytes()).hexdigest())
    assert len(digests) == 1
