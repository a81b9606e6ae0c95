"""Shared by the USE-lite parity and int8 tests: where the converted model and the golden
embeddings live, the module-scoped fixtures that read them (import them into a test module to
use them), and how to pad token ids into a batch."""
import json
import os
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "fixtures" / "use_lite_golden.json"
MODEL_DIR = Path(os.environ.get("COUNTERPOINT_USE_LITE_DIR", REPO / "models" / "installed" / "use-lite-en"))


@pytest.fixture(scope="module")
def golden():
    with open(GOLDEN, "r", encoding="utf-8") as handle:
        return json.load(handle)["sentences"]


@pytest.fixture(scope="module")
def manifest():
    with open(MODEL_DIR / "manifest.json", "r", encoding="utf-8") as handle:
        return json.load(handle)


def pad_batch(id_lists, max_length=128):
    """Right-padded (input_ids, attention_mask) int64 tensors, rows truncated to max_length."""
    truncated = [ids[:max_length] for ids in id_lists]
    width = max(1, max(len(ids) for ids in truncated))
    input_ids = torch.zeros(len(truncated), width, dtype=torch.int64)
    attention_mask = torch.zeros(len(truncated), width, dtype=torch.int64)
    for row, ids in enumerate(truncated):
        input_ids[row, : len(ids)] = torch.tensor(ids, dtype=torch.int64)
        attention_mask[row, : len(ids)] = 1
    return input_ids, attention_mask
