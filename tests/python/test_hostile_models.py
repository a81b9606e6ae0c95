"""Model directories whose every file is the one its manifest names (checksums resealed) but whose
content does not make a model: each must be refused at Encoder.load as cp.CorruptFileError naming
the file and the field, never loaded as something else or failing the first search."""
import hashlib
import json
import pathlib
import shutil

import pytest

import counterpoint as cp

REPO = pathlib.Path(__file__).resolve().parents[2]
from conftest import BERT_TINY  # noqa: E402  (the committed tiny BERT)


def forged_copy(tmp_path, edit):
    """A copy of the tiny BERT whose manifest `edit` changes, every checksum recorded anew."""
    model = tmp_path / "forged"
    shutil.copytree(BERT_TINY, model)
    manifest = json.loads((model / "manifest.json").read_text())
    edit(manifest)
    manifest["files"] = {name: hashlib.sha256((model / name).read_bytes()).hexdigest() for name in manifest["files"]}
    (model / "manifest.json").write_text(json.dumps(manifest))
    return model


def test_the_network_named_as_the_head_is_corrupt_not_no_head(tmp_path):
    # It loaded and encoded exactly as the network without a head.
    model = forged_copy(tmp_path, lambda m: m.update(head_file="model.pt"))
    with pytest.raises(cp.CorruptFileError) as refused:
        cp.Encoder.load(str(model), threads=1)
    assert str(refused.value) == (f"the head {model / 'model.pt'} holds no tensors (a head file is torch.save of "
                                  "the tensor W, or of the list W, W1, b1, W2, b2)")


def test_a_recorded_alpha_beyond_float_is_refused_at_load_naming_the_model_and_the_field(tmp_path):
    # It loaded, and the first search without an alpha failed: "final_scores: alpha must be finite, got inf".
    model = forged_copy(tmp_path, lambda m: m.update(training={"alpha": 1e308}))
    with pytest.raises(cp.CorruptFileError) as refused:
        cp.Encoder.load(str(model), threads=1)
    assert str(refused.value) == (f"{model / 'manifest.json'}: model bert-tiny-random records training.alpha "
                                  "1e+308, not a finite 32-bit number (searches use it when no alpha is given; "
                                  "retune the model or remove the field)")
