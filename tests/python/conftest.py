"""What the Python tests share: the committed fixture models and the tiny encoder most of them
index and search with. BERT_TINY is a random 2-layer BERT (tests/fixtures/bert_tiny); TINY_MODEL
the model the training tests fine-tune (tests/fixtures/training/tiny-model)."""
import pathlib

import pytest

import counterpoint as cp

REPO = pathlib.Path(__file__).resolve().parents[2]
BERT_TINY = REPO / "tests" / "fixtures" / "bert_tiny"
TINY_MODEL = REPO / "tests" / "fixtures" / "training" / "tiny-model"


@pytest.fixture(scope="session")
def encoder():
    """BERT_TINY on one thread, so that scores do not depend on the machine's cores."""
    return cp.Encoder.load(str(BERT_TINY), threads=1)


@pytest.fixture
def unloadable(tmp_path):
    """A model whose manifest cannot be read: a refusal that comes instead was made before any load."""
    model = tmp_path / "unloadable"
    model.mkdir()
    (model / "manifest.json").write_text("{ not json")
    return str(model)
