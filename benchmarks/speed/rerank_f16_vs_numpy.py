"""Stage 2 alone, as the retriever runs it: the K candidates' stage-1 cosines are given, their Es
rows are float16 as a fp16 index stores them, and the final score cos + alpha * Hoyer(Es(q) - Es(c))
comes from cp.final_scores (half rows read in place); against the NumPy float32 rerank of the
peer benchmark (bench.hoyer_rerank, same formula, clamps and guard) on the float32 rows. One
process, same inputs, interleaved rounds.

    .venv/bin/python benchmarks/speed/rerank_f16_vs_numpy.py
"""
import argparse
import pathlib
import statistics
import sys

import numpy as np

import counterpoint as cp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
from bench import hoyer_rerank, ms_per_call, unit  # noqa: E402  (the peer pipeline's NumPy rerank)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--candidates", type=int, default=1000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--alpha", type=float, default=3.5)
    parser.add_argument("--repeats", type=int, default=1000)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    cosine = rng.uniform(0.2, 0.9, args.candidates).astype(np.float32)
    query = unit(rng.standard_normal(args.dim))
    rows = unit(rng.standard_normal((args.candidates, args.dim)))
    half = rows.astype(np.float16)
    library = lambda: cp.final_scores(cosine, query, half, alpha=args.alpha)  # noqa: E731
    peer = lambda: hoyer_rerank(cosine[None], query[None], rows[None], args.alpha)  # noqa: E731
    difference = float(np.max(np.abs(library()[0] - peer()[0])))
    rounds = {"library": [], "peer": []}
    for _ in range(5):
        rounds["library"].append(ms_per_call(library, args.repeats))
        rounds["peer"].append(ms_per_call(peer, args.repeats))
    lib, ref = statistics.median(rounds["library"]), statistics.median(rounds["peer"])
    print(f"K {args.candidates}, d {args.dim}: cp.final_scores over float16 rows {lib:.4f} ms, NumPy float32 "
          f"{ref:.4f} ms, rerank_ratio {ref / lib:.2f}; max |score difference| {difference:.1e} (float16 rounding)")


if __name__ == "__main__":
    main()
