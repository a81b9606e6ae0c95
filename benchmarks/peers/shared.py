"""What the parts of the peer benchmark share (run.py is the entry point): the search depths, the
synthetic seed, the thread set-up of the peer stack, and the library/peer ratio."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from bench import CANDIDATES, load_json  # noqa: E402

K_CANDIDATES = CANDIDATES  # the reference's stage-1 depth (REFERENCE.md: FAISS top-K, K = 1000)
RUN_DEPTH = 101      # hits kept per query: recall@100 plus the query's own id, which BEIR removes
SYNTHETIC_SEED = 20240601


def peer_setup(threads):
    """The peer side's FAISS and torch, each held to `threads` threads."""
    import faiss
    import torch
    torch.set_num_threads(threads)
    faiss.omp_set_num_threads(threads)
    return faiss, torch


def set_texts(work, name):
    """The ids and texts of a set's documents and of its queries, as run.py prepared them."""
    return load_json(work / f"{name}_docs.json"), load_json(work / f"{name}_queries.json")


def vectors(work, side, name, *parts):
    """Rows a side saved for a set: vectors(work, "lib", "sick", "docs_E", "queries_Es") -> [E, QS]."""
    return [np.load(work / f"{side}_{name}_{part}.npy") for part in parts]


def ratio(lib, peer):
    return lib / peer if peer else None
