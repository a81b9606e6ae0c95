"""NumPy baseline for the stage-2 rerank kernel: one query against K = 1000 candidates of
width 512, F = cos(E(q), E(c)) + alpha * Hoyer(Es(q) - Es(c)) with the identical guard.
Compare with bin/rerank_kernel_bench (BM_CombinedCosineHoyer/avx2).

The formula is the C++ one step for step (bench.cosine_scores and bench.hoyer_rerank, which the
peer benchmark runs too): true cosine (0 for a zero-norm side, clipped to [-1, 1]), the reference
clamps |x|_1 >= sqrt(d) * 1e-6 and |x|_2 >= 1e-6, Hoyer clipped to [0, 1], the guard
(|x|_2 < 1e-3 -> -1e9), and the same rejection of non-finite scores.
The C++ kernels are single-threaded, so run this with OPENBLAS_NUM_THREADS=1 for a like-for-
like figure; both wall and CPU time (all threads) are printed.

Run: OPENBLAS_NUM_THREADS=1 /usr/bin/python3 benchmarks/speed/rerank_numpy.py [--repeats N] [--rounds R]
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from bench import cosine_scores, hoyer_rerank, unit  # noqa: E402

K, D = 1000, 512


def unit_rows(rng, rows):
    return unit(rng.standard_normal((rows, D)).astype(np.float32))


def combined_scores(q_dense, c_dense, q_sparse, c_sparse, alpha=1.0, guard=1e-3, guard_value=-1e9):
    final = hoyer_rerank(cosine_scores(q_dense, c_dense), q_sparse, c_sparse, alpha, guard, guard_value)
    if not np.isfinite(final).all():
        raise ValueError("non-finite score")
    return final


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=500, help="calls per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; the median is reported")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    q_dense, q_sparse = unit_rows(rng, 1)[0], unit_rows(rng, 1)[0]
    c_dense, c_sparse = unit_rows(rng, K), unit_rows(rng, K)
    combined_scores(q_dense, c_dense, q_sparse, c_sparse)  # warm-up
    wall_ms, cpu_ms = [], []
    for _ in range(args.rounds):
        wall0, cpu0 = time.perf_counter(), time.process_time()
        for _ in range(args.repeats):
            combined_scores(q_dense, c_dense, q_sparse, c_sparse)
        wall_ms.append((time.perf_counter() - wall0) * 1e3 / args.repeats)
        cpu_ms.append((time.process_time() - cpu0) * 1e3 / args.repeats)
    wall, cpu = statistics.median(wall_ms), statistics.median(cpu_ms)
    gbytes = 2 * K * D * 4 / (wall * 1e-3) / 1e9
    print(f"numpy {np.__version__}: cosine + Hoyer, K={K}, d={D}, median of {args.rounds} x {args.repeats}: "
          f"{wall:.3f} ms wall ({gbytes:.2f} GB/s), {cpu:.3f} ms CPU per call")


if __name__ == "__main__":
    main()
