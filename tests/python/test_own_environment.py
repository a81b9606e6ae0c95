"""counterpoint beside the user's own torch, in one process: whichever of `import torch` and
`import counterpoint` comes first, the interpreter lives through encoding, building an index, a
hoyer search, a training step of a head and an index's save and load, and torch's tensors and
counterpoint's arrays agree. Two libtorch builds in one process crash it, so every scenario runs in
a child interpreter whose exit status and output are checked. This is the smoke test that
scripts/user_env.sh runs in a venv with PyPI's torch 2.x; here it runs with this environment's torch."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from conftest import BERT_TINY, TINY_MODEL

pytest.importorskip("torch")

SCENARIO = textwrap.dedent("""
    import json, sys, tempfile
    order, bert_tiny, tiny_model = sys.argv[1:4]
    if order == "torch first":
        import torch
        import counterpoint as cp
    else:
        import counterpoint as cp
    texts = ["the cat sleeps on the mat", "the cat does not sleep on the mat", "a dog barks at night"]
    encoder = cp.Encoder.load(bert_tiny, threads=1)
    embeddings = encoder.encode(texts)
    if order == "counterpoint first":
        import torch  # after counterpoint's libtorch is loaded: the crash this guards against
    tensor = torch.from_numpy(embeddings)
    torch_cosine = torch.nn.functional.cosine_similarity(tensor[0:1], tensor[1:2]).item()
    index = cp.Index.build(texts, ["a", "b", "c"], encoder=encoder, sparse_encoder=encoder)
    results = index.search(["the cat sleeps on the mat"], k=2, scorer="hoyer", alpha=1.0)
    hits = [(hit.id, round(hit.score, 5)) for hit in results[0]]
    with tempfile.TemporaryDirectory() as folder:
        index.save(folder + "/index")
        loaded = cp.Index.load(folder + "/index", encoder=encoder, sparse_encoder=encoder)
        loaded_hits = [(hit.id, round(hit.score, 5)) for hit in loaded.search(
            ["the cat sleeps on the mat"], k=2, scorer="hoyer", alpha=1.0)[0]]
        triples = [cp.Triple(f"the {s} is here", f"the {s} is not here", [f"a {s} is here"])
                   for s in ("cat", "dog", "man", "girl")]
        report = cp.train_sparsecl(tiny_model, triples, folder + "/head", epochs=1, batch_size=4,
                                   threads=1, head_only=True)
        head = cp.Encoder.load(folder + "/head", threads=1)
        head_shape = list(head.encode(texts[:1]).shape)
    import os
    linked = {}
    exec(open(os.path.join(os.path.dirname(cp._core.__file__), "_linked_torch.py")).read(), linked)
    print(json.dumps({"torch": torch.__version__, "torch_cosine": torch_cosine, "linked": linked["SOURCE"],
                      "wait_policy": os.environ.get("OMP_WAIT_POLICY"),
                      "counterpoint_cosine": float(cp.cosine(embeddings[0:1], embeddings[1:2])[0][0]),
                      "shape": list(embeddings.shape), "hits": hits, "loaded_hits": loaded_hits,
                      "head_steps": report["steps"], "head_shape": head_shape}))
""")


@pytest.mark.parametrize("order", ["torch first", "counterpoint first"])
def test_torch_and_counterpoint_share_one_process_in_either_import_order(order):
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    child = subprocess.run([sys.executable, "-c", SCENARIO, order, str(BERT_TINY), str(TINY_MODEL)],
                           capture_output=True, text=True, timeout=600, env=env)
    assert child.returncode == 0, f"exit status {child.returncode}\n{child.stderr[-3000:]}"
    outcome = json.loads(child.stdout.strip().splitlines()[-1])
    assert outcome["shape"][0] == 3
    assert outcome["torch_cosine"] == pytest.approx(outcome["counterpoint_cosine"], abs=1e-5)
    assert [hit_id for hit_id, _ in outcome["hits"]][0] in ("a", "b")
    assert outcome["loaded_hits"] == outcome["hits"]
    assert outcome["head_steps"] == 1
    assert outcome["head_shape"][0] == 1
    # A module built against PyPI's torch sets libgomp's passive wait policy when it loads torch itself
    # (its threads would otherwise spin between kernels); one beside torch already loaded, or one
    # linking the system's libtorch, leaves the process's policy alone.
    expected = "PASSIVE" if order == "counterpoint first" and outcome["linked"] == "python" else None
    assert outcome["wait_policy"] == expected


# Cross-version parity: a second interpreter with the other torch build. scripts/user_env.sh points
# COUNTERPOINT_OTHER_TORCH_PYTHON at set-up's .venv (Debian's torch 1.13, the checkout's module)
# while the tests run beside PyPI's torch 2.x; elsewhere these tests are skipped.
OTHER_PYTHON = os.environ.get("COUNTERPOINT_OTHER_TORCH_PYTHON")
GOLDEN = BERT_TINY.parent / "minilm_golden.json"
MIN_COSINE = 0.99999

EMBED = textwrap.dedent("""
    import json, sys
    import numpy as np
    import counterpoint as cp
    import torch
    model, texts_file, out = sys.argv[1:4]
    texts = json.load(open(texts_file))
    rows = cp.Encoder.load(model, threads=1).encode(texts)
    np.save(out, rows)
    print(torch.__version__)
""")


def embed(python, model, texts_file, out):
    child = subprocess.run([python, "-c", EMBED, str(model), str(texts_file), str(out)], capture_output=True,
                           text=True, timeout=600)
    assert child.returncode == 0, f"{python}: exit status {child.returncode}\n{child.stderr[-3000:]}"
    return child.stdout.strip().splitlines()[-1], np.load(out)


def min_cosine(a, b):
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return float((a * b).sum(axis=1).min())


def golden_texts(tmp_path):
    texts = [s["text"] for s in json.loads(GOLDEN.read_text(encoding="utf-8"))["sentences"]]
    path = tmp_path / "texts.json"
    path.write_text(json.dumps(texts))
    return path


needs_other_torch = pytest.mark.skipif(not OTHER_PYTHON, reason="COUNTERPOINT_OTHER_TORCH_PYTHON is unset "
                                       "(scripts/user_env.sh sets it to set-up's .venv)")


@needs_other_torch
@pytest.mark.parametrize("model", ["all-minilm-l6-v2", "sparse-default", "use-lite-en", str(BERT_TINY)])
def test_models_made_under_one_torch_embed_the_same_under_the_other(model, tmp_path):
    texts = golden_texts(tmp_path)
    here_version, here = embed(sys.executable, model, texts, tmp_path / "here.npy")
    other_version, other = embed(OTHER_PYTHON, model, texts, tmp_path / "other.npy")
    assert here_version != other_version, "both interpreters run the same torch: nothing is compared"
    assert here.shape == other.shape
    assert min_cosine(here, other) >= MIN_COSINE, f"{model}: torch {here_version} vs {other_version}"


@needs_other_torch
@pytest.mark.parametrize("head_only", [True, False])
def test_a_model_trained_under_this_torch_loads_and_embeds_the_same_under_the_other(head_only, tmp_path):
    import counterpoint as cp
    triples = [cp.Triple(f"the {s} is here", f"the {s} is not here", [f"a {s} is here"])
               for s in ("cat", "dog", "man", "girl", "boy", "horse")]
    out = tmp_path / "trained"
    cp.train_sparsecl(str(TINY_MODEL), triples, str(out), epochs=1, batch_size=3, threads=1, head_only=head_only)
    texts = golden_texts(tmp_path)
    here_version, here = embed(sys.executable, out, texts, tmp_path / "here.npy")
    other_version, other = embed(OTHER_PYTHON, out, texts, tmp_path / "other.npy")
    assert here_version != other_version
    assert min_cosine(here, other) >= MIN_COSINE, f"trained under torch {here_version}, read by {other_version}"


def test_a_network_this_libtorch_cannot_read_is_refused_naming_the_torch_that_saved_it(tmp_path):
    """A network saved by a newer torch, with code this libtorch cannot compile (here: its forward
    replaced by a syntax error), and the writer's version recorded as the library records it."""
    import hashlib
    import shutil
    import zipfile
    import counterpoint as cp
    model = tmp_path / "from-the-future"
    shutil.copytree(BERT_TINY, model)
    network = model / "model.pt"
    with zipfile.ZipFile(BERT_TINY / "model.pt") as source, zipfile.ZipFile(network, "w") as target:
        for entry in source.infolist():
            data = source.read(entry)
            if entry.filename == "model/code/__torch__/bert_model.py":
                data = b"def forward(self, input_ids:\n"
            target.writestr(entry, data)
        target.writestr("model/extra/torch_version", "9.9.0")
    manifest = json.loads((model / "manifest.json").read_text())
    manifest["files"]["model.pt"] = hashlib.sha256(network.read_bytes()).hexdigest()
    (model / "manifest.json").write_text(json.dumps(manifest))
    import torch
    with pytest.raises(cp.CorruptFileError, match=r"with libtorch \S+ \(it was saved by torch 9\.9\.0; save it again "
                       r"under torch \S+, or install counterpoint against torch 9\.9\.0\)") as refusal:
        cp.Encoder.load(str(model))
    major_minor = ".".join(torch.__version__.split(".")[:2])  # Debian's python3-torch says 1.13.0a0
    assert f"with libtorch {major_minor}." in str(refusal.value)
