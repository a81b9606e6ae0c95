"""Peer benchmark, stage 2 alone: cos + alpha * Hoyer of one query over K = 1000 pre-gathered
candidates, the library's kernels (cp.cosine and cp.hoyer) against the NumPy float32 formula
(bench.hoyer_rerank) on the same rows; the scores must agree to 1e-4."""
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from bench import hoyer_rerank, ms_per_call, unit_rows  # noqa: E402
from shared import K_CANDIDATES, SYNTHETIC_SEED, ratio  # noqa: E402

SCORE_TOLERANCE = 1e-4


def rerank_inputs(dim):
    rng = np.random.default_rng(SYNTHETIC_SEED + 1)
    return unit_rows(rng, 1, dim)[0], unit_rows(rng, K_CANDIDATES, dim), unit_rows(rng, 1, dim)[0], \
        unit_rows(rng, K_CANDIDATES, dim)


def rerank_kernel(score, spec, save_to):
    """score(q, C, qs, Cs) saved once, then timed: median of 5 rounds of rerank_repeats calls."""
    q, C, qs, Cs = rerank_inputs(spec["dim"])
    np.save(save_to, np.asarray(score(q, C, qs, Cs), dtype=np.float32))
    repeats = spec["rerank_repeats"]
    score(q, C, qs, Cs)
    rounds = [ms_per_call(lambda: score(q, C, qs, Cs), repeats) for _ in range(5)]
    return {"candidates": K_CANDIDATES, "dim": spec["dim"], "calls": 5 * repeats,
            "median_ms": statistics.median(rounds)}


def library_rerank(cp, spec):
    alpha = spec["alpha"]
    return rerank_kernel(lambda q, C, qs, Cs: cp.cosine(q, C) + np.float32(alpha) * cp.hoyer(qs, Cs, guard=True),
                         spec, Path(spec["work"]) / "lib_rerank_scores.npy")


def peer_rerank(spec):
    alpha = spec["alpha"]
    return rerank_kernel(lambda q, C, qs, Cs: hoyer_rerank((C @ q)[None], qs[None], Cs[None], alpha)[0],
                         spec, Path(spec["work"]) / "peer_rerank_scores.npy")


def compare(report, work, lib_r, peer_r):
    """report["rerank"]; scores differing by more than SCORE_TOLERANCE are a failure."""
    diff = float(np.max(np.abs(np.load(work / "lib_rerank_scores.npy") - np.load(work / "peer_rerank_scores.npy"))))
    report["rerank"] = {"library_ms": lib_r["median_ms"], "peer_ms": peer_r["median_ms"], "candidates": K_CANDIDATES,
                        "dim": 384, "max_abs_score_difference": diff,
                        "rerank_ratio": ratio(peer_r["median_ms"], lib_r["median_ms"])}
    if diff > SCORE_TOLERANCE:
        report["failures"].append(f"stage-2 kernel scores differ by {diff:.3g} between cp.cosine+cp.hoyer and NumPy")


def markdown(report):
    r = report["rerank"]
    return ["", f"Stage 2 alone (one query, {r['candidates']} pre-gathered candidates, d {r['dim']}): cp.cosine + "
            f"cp.hoyer {r['library_ms']:.3f} ms vs NumPy float32 {r['peer_ms']:.3f} ms, rerank_ratio "
            f"{r['rerank_ratio']:.2f}; max |score difference| {r['max_abs_score_difference']:.2e}."]
