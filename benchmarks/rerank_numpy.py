"""NumPy baseline for the stage-2 rerank kernel: one query against K = 1000 candidates of
width 512, F = cos(E(q), E(c)) + alpha * Hoyer(Es(q) - Es(c)) with the identical guard.
Compare with bin/rerank_kernel_bench (BM_CombinedCosineHoyer).

Run: /usr/bin/python3 benchmarks/rerank_numpy.py [--repeats N]
"""
import argparse
import time

import numpy as np

K, D = 1000, 512


def unit_rows(rng, rows):
    m = rng.standard_normal((rows, D)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def combined_scores(q_dense, c_dense, q_sparse, c_sparse, alpha=1.0, guard=1e-3):
    cosine = (c_dense @ q_dense) / (np.linalg.norm(c_dense, axis=1) * np.linalg.norm(q_dense))
    diff = q_sparse[None, :] - c_sparse
    l1 = np.maximum(np.abs(diff).sum(axis=1), np.sqrt(D) * 1e-6)
    l2 = np.maximum(np.sqrt(np.einsum("ij,ij->i", diff, diff)), 1e-6)
    hoyer = (np.sqrt(D) - l1 / l2) / (np.sqrt(D) - 1)
    hoyer = np.where(l2 < guard, -1e9, hoyer)
    return cosine + alpha * hoyer


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=500)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    q_dense, q_sparse = unit_rows(rng, 1)[0], unit_rows(rng, 1)[0]
    c_dense, c_sparse = unit_rows(rng, K), unit_rows(rng, K)
    combined_scores(q_dense, c_dense, q_sparse, c_sparse)  # warm-up
    start = time.perf_counter()
    for _ in range(args.repeats):
        combined_scores(q_dense, c_dense, q_sparse, c_sparse)
    ms = (time.perf_counter() - start) * 1e3 / args.repeats
    gbytes = 2 * K * D * 4 / (ms * 1e-3) / 1e9
    print(f"numpy {np.__version__}: cosine + Hoyer, K={K}, d={D}: {ms:.3f} ms per call ({gbytes:.2f} GB/s)")


if __name__ == "__main__":
    main()
