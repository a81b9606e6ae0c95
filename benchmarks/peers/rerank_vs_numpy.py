"""Peer benchmark, stage 2 alone: cos + alpha * Hoyer of one query over K = 1000 pre-gathered
candidates, two ways:
  float32   the library's kernels (cp.cosine and cp.hoyer) against the NumPy float32 formula
            (bench.hoyer_rerank, cosine computed too) on the same rows; scores agree to 1e-4
  float16   as the retriever runs stage 2: the stage-1 cosines given, the Es rows float16 as an
            fp16 index stores them, cp.final_scores reading them in place; against the NumPy
            float32 formula with the same cosines given, on the float32 rows (scores agree to the
            rows' float16 rounding, 5e-2 at most with alpha 3.5)"""
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from bench import hoyer_rerank, ms_per_call, unit_rows  # noqa: E402
from shared import K_CANDIDATES, SYNTHETIC_SEED, ratio  # noqa: E402

SCORE_TOLERANCE = 1e-4
HALF_SCORE_TOLERANCE = 5e-2


def rerank_inputs(dim):
    rng = np.random.default_rng(SYNTHETIC_SEED + 1)
    return unit_rows(rng, 1, dim)[0], unit_rows(rng, K_CANDIDATES, dim), unit_rows(rng, 1, dim)[0], \
        unit_rows(rng, K_CANDIDATES, dim)


def rerank_kernel(score, spec, save_to, rows=None):
    """score(q, C, qs, Cs) saved once, then timed: median of 5 rounds of rerank_repeats calls.
    `rows` turns the inputs into what `score` reads (e.g. float16 Es rows, the cosines given)."""
    inputs = rerank_inputs(spec["dim"])
    if rows:
        inputs = rows(*inputs)
    np.save(save_to, np.asarray(score(*inputs), dtype=np.float32))
    repeats = spec["rerank_repeats"]
    score(*inputs)
    rounds = [ms_per_call(lambda: score(*inputs), repeats) for _ in range(5)]
    return {"candidates": K_CANDIDATES, "dim": spec["dim"], "calls": 5 * repeats,
            "median_ms": statistics.median(rounds)}


def cosines_given(q, C, qs, Cs, half=False):
    """The stage-1 cosines computed before the clock, as stage 1 hands them to stage 2."""
    return (C @ q).astype(np.float32), qs, Cs.astype(np.float16) if half else Cs


def library_rerank(cp, spec):
    alpha, work = spec["alpha"], Path(spec["work"])
    float32 = rerank_kernel(lambda q, C, qs, Cs: cp.cosine(q, C) + np.float32(alpha) * cp.hoyer(qs, Cs, guard=True),
                            spec, work / "lib_rerank_scores.npy")
    float16 = rerank_kernel(lambda cos, qs, half: cp.final_scores(cos, qs, half, alpha=alpha)[0],
                            spec, work / "lib_rerank_f16_scores.npy", rows=lambda *x: cosines_given(*x, half=True))
    return dict(float32, float16_median_ms=float16["median_ms"])


def peer_rerank(spec):
    alpha, work = spec["alpha"], Path(spec["work"])
    float32 = rerank_kernel(lambda q, C, qs, Cs: hoyer_rerank((C @ q)[None], qs[None], Cs[None], alpha)[0],
                            spec, work / "peer_rerank_scores.npy")
    given = rerank_kernel(lambda cos, qs, Cs: hoyer_rerank(cos[None], qs[None], Cs[None], alpha)[0],
                          spec, work / "peer_rerank_given_scores.npy", rows=cosines_given)
    return dict(float32, cosines_given_median_ms=given["median_ms"])


def compare(report, work, lib_r, peer_r):
    """report["rerank"]; scores differing by more than their tolerance are a failure."""
    def difference(a, b):
        return float(np.max(np.abs(np.load(work / a) - np.load(work / b))))
    diff = difference("lib_rerank_scores.npy", "peer_rerank_scores.npy")
    half_diff = difference("lib_rerank_f16_scores.npy", "peer_rerank_given_scores.npy")
    report["rerank"] = {"library_ms": lib_r["median_ms"], "peer_ms": peer_r["median_ms"], "candidates": K_CANDIDATES,
                        "dim": 384, "max_abs_score_difference": diff,
                        "rerank_ratio": ratio(peer_r["median_ms"], lib_r["median_ms"]),
                        "library_f16_ms": lib_r["float16_median_ms"],
                        "peer_cosines_given_ms": peer_r["cosines_given_median_ms"],
                        "max_abs_score_difference_f16": half_diff,
                        "rerank_f16_ratio": ratio(peer_r["cosines_given_median_ms"], lib_r["float16_median_ms"])}
    if diff > SCORE_TOLERANCE:
        report["failures"].append(f"stage-2 kernel scores differ by {diff:.3g} between cp.cosine+cp.hoyer and NumPy")
    if half_diff > HALF_SCORE_TOLERANCE:
        report["failures"].append(f"stage-2 scores over float16 rows differ by {half_diff:.3g} from NumPy float32")


def markdown(report):
    r = report["rerank"]
    return ["", f"Stage 2 alone (one query, {r['candidates']} pre-gathered candidates, d {r['dim']}): cp.cosine + "
            f"cp.hoyer {r['library_ms']:.3f} ms vs NumPy float32 {r['peer_ms']:.3f} ms, rerank_ratio "
            f"{r['rerank_ratio']:.2f}; max |score difference| {r['max_abs_score_difference']:.2e}. As the retriever "
            f"runs it (stage-1 cosines given, float16 Es rows read in place by cp.final_scores): "
            f"{r['library_f16_ms']:.3f} ms vs NumPy float32 with the cosines given {r['peer_cosines_given_ms']:.3f} "
            f"ms, rerank_f16_ratio {r['rerank_f16_ratio']:.2f}; max |score difference| "
            f"{r['max_abs_score_difference_f16']:.2e} (float16 rounding)."]
