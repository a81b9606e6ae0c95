"""Peer benchmark, encoding: counterpoint's Encoder against SentenceTransformer.encode over the same
MiniLM weights (fp32, batch 32): docs/s, docs per CPU-second, and the cosine between the two sides'
embeddings (parity). The library side also encodes the E and Es rows that both sides' searches use;
the peer side its own E for the quality runs."""
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from bench import cpu_seconds, import_counterpoint, load_json  # noqa: E402
from shared import peer_setup, ratio  # noqa: E402


def timed_encoding(encode, spec, prefix):
    """Wall and CPU seconds of `encode` over each speed set (after a warm-up on 8 texts: first-call
    allocations, lazy init); the embeddings go to WORK/<prefix>_speed_<set>.npy."""
    work = Path(spec["work"])
    speed = {}
    for name in spec["speed_sets"]:
        texts = load_json(work / f"speed_{name}.json")
        encode(texts[:8])
        wall0, cpu0 = time.perf_counter(), cpu_seconds()
        emb = encode(texts)
        wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
        np.save(work / f"{prefix}_speed_{name}.npy", np.asarray(emb, dtype=np.float32))
        speed[name] = {"docs": len(texts), "wall_s": wall, "cpu_s": cpu}
    return speed


def library_encode(spec):
    cp = import_counterpoint()
    threads = spec["threads"]
    work = Path(spec["work"])
    out = {"version": cp.__version__}
    dense = cp.Encoder.load(spec["dense_model"], threads=threads)
    sparse = cp.Encoder.load(spec["sparse_model"], threads=threads)
    out["dense_identity"], out["sparse_identity"] = dense.identity, sparse.identity
    # int8: counterpoint offers Encoder.load(int8=True) only for models that ship model-int8.pt.
    try:
        cp.Encoder.load(spec["dense_model"], threads=threads, int8=True)
        out["int8"] = "available"
    except ValueError as error:
        out["int8"] = f"not available: {error}"
    out["speed"] = timed_encoding(lambda texts: dense.encode(texts, batch_size=32), spec, "lib")
    # The vectors both sides' searches use (E and Es of corpus and queries), and the peer's Es: one
    # network pass for both, as the library indexes (Es is a head over E's network).
    for name in spec["sets"]:
        for part in ("docs", "queries"):
            texts = load_json(work / f"{name}_{part}.json")["texts"]
            rows_e, rows_es = dense.encode_both(sparse, texts, batch_size=32, query=part == "queries")
            np.save(work / f"lib_{name}_{part}_E.npy", rows_e)
            np.save(work / f"lib_{name}_{part}_Es.npy", rows_es)
    return out


def peer_encode(spec):
    faiss, torch = peer_setup(spec["threads"])
    from sentence_transformers import SentenceTransformer
    work = Path(spec["work"])
    model = SentenceTransformer(spec["checkpoint"], device="cpu")
    out = {"max_seq_length": model.max_seq_length}

    def encode(texts):
        return model.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True,
                            show_progress_bar=False).astype(np.float32)

    out["speed"] = timed_encoding(encode, spec, "peer")
    for name in spec["sets"]:
        for part in ("docs", "queries"):
            np.save(work / f"peer_{name}_{part}_E.npy", encode(load_json(work / f"{name}_{part}.json")["texts"]))
    return out


def compare(work, speed_sets, lib_enc, peer_enc):
    """report["encoding"]: per speed set, both sides' rates, their ratios and the embeddings' cosine."""
    encoding = {}
    for name in speed_sets:
        a, b = np.load(work / f"lib_speed_{name}.npy"), np.load(work / f"peer_speed_{name}.npy")
        cos = np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
        ls, ps = lib_enc["speed"][name], peer_enc["speed"][name]
        encoding[name] = {
            "docs": ls["docs"], "library_docs_per_s": ls["docs"] / ls["wall_s"], "peer_docs_per_s": ps["docs"] / ps["wall_s"],
            "library_docs_per_cpu_s": ls["docs"] / ls["cpu_s"], "peer_docs_per_cpu_s": ps["docs"] / ps["cpu_s"],
            "cosine_min": float(cos.min()), "cosine_mean": float(cos.mean())}
        encoding[name]["encode_ratio"] = ratio(encoding[name]["library_docs_per_s"], encoding[name]["peer_docs_per_s"])
        encoding[name]["encode_cpu_ratio"] = ratio(encoding[name]["library_docs_per_cpu_s"],
                                                   encoding[name]["peer_docs_per_cpu_s"])
    return encoding


def markdown(report):
    lines = ["", "## Encoding (fp32, batch 32)", "",
             "| texts | docs | library docs/s | peer docs/s | encode_ratio | library docs/CPU-s | peer docs/CPU-s | cosine min / mean |",
             "|---|---|---|---|---|---|---|---|"]
    for name, e in report["encoding"].items():
        lines.append(f"| {name} | {e['docs']} | {e['library_docs_per_s']:.1f} | {e['peer_docs_per_s']:.1f} | "
                     f"{e['encode_ratio']:.2f} | {e['library_docs_per_cpu_s']:.1f} | {e['peer_docs_per_cpu_s']:.1f} | "
                     f"{e['cosine_min']:.6f} / {e['cosine_mean']:.6f} |")
    return lines + ["", f"int8: {report['int8']}."]
